//! The guarded file tools behind `git stella mcp`, as plain synchronous functions.
//!
//! Each tool answers with a [`Reply`]: text for the model and whether it is an error. A refusal
//! is a reply with `is_error` set and the refusal message as its text (SPEC §7): the model reads
//! it as a failed tool call and can recover, and the connection stays open. The MCP glue in the
//! `stella-mcp` binary (`src/bin/stella-mcp/server.rs`) only moves these replies onto the wire,
//! so every decision here is testable without a server.

use std::error::Error as StdError;
use std::fmt::Write as _;
use std::io;
use std::path::Path;

use crate::edit::Edit;
use crate::guard::{self, Intent};
use crate::ids::SessionId;
use crate::paths::{self, RelPath};
use crate::session::{self, Context, Freshness, Outcome};
use crate::workspace::{Notice, Settings};

/// Files larger than this are not returned whole: the model is told to ask for a line range.
pub(crate) const MAX_READ_BYTES: usize = 8 << 20;

/// The largest file `edit_file` edits: it holds the file and the edited text whole. The most one
/// message may carry, so a model cannot have been shown more of a file in one piece.
pub(crate) const MAX_EDIT_BYTES: u64 = 16 << 20;

fn too_large(rel: &RelPath, len: u64) -> String {
    format!(
        "error: '{rel}' is {len} bytes, more than {MAX_READ_BYTES} bytes; ask for a line range with 'offset' and 'limit'"
    )
}

/// Lines `first..first + count` (1-based; all from `first` without a count) cut out of a file
/// as it streams into the store, its lines counted and its bytes checked as UTF-8 on the way.
/// Only the lines shown are held, and no more of them than [`MAX_READ_BYTES`] and one chunk:
/// past that, the read is too large to show anyway.
struct LineCut {
    first: usize,
    count: Option<usize>,
    /// The line the next byte belongs to.
    line: usize,
    /// Bytes seen, and whether the last was a newline.
    len: u64,
    ends_with_newline: bool,
    /// Whether any bytes were shown, even none (the file existed).
    read: bool,
    shown: Vec<u8>,
    /// The end of a chunk that stops inside a UTF-8 sequence, until the next chunk completes it.
    partial: Vec<u8>,
    utf8: bool,
}

impl LineCut {
    fn new(first: usize, count: Option<usize>) -> LineCut {
        LineCut {
            first,
            count,
            line: 1,
            len: 0,
            ends_with_newline: false,
            read: false,
            shown: Vec::new(),
            partial: Vec::new(),
            utf8: true,
        }
    }

    /// The file's line count, as `str::split_inclusive('\n')` counts them.
    fn total(&self) -> usize {
        self.line - usize::from(self.len == 0 || self.ends_with_newline)
    }

    fn is_text(&self) -> bool {
        self.utf8 && self.partial.is_empty()
    }

    fn wanted(&self) -> bool {
        self.line >= self.first && self.count.is_none_or(|n| self.line - self.first < n)
    }

    fn check_utf8(&mut self, chunk: &[u8]) {
        if !self.utf8 {
            return;
        }
        let joined;
        let bytes = if self.partial.is_empty() {
            chunk
        } else {
            joined = [std::mem::take(&mut self.partial).as_slice(), chunk].concat();
            joined.as_slice()
        };
        match std::str::from_utf8(bytes) {
            Ok(_) => {}
            // Cut inside a character: the rest comes with the next chunk.
            Err(e) if e.error_len().is_none() => {
                self.partial = bytes[e.valid_up_to()..].to_vec();
            }
            Err(_) => self.utf8 = false,
        }
    }
}

impl session::Sees for LineCut {
    fn bytes(&mut self, chunk: &[u8]) {
        self.read = true;
        self.check_utf8(chunk);
        let mut rest = chunk;
        while !rest.is_empty() {
            let (part, newline) = match rest.iter().position(|b| *b == b'\n') {
                Some(i) => (&rest[..=i], true),
                None => (rest, false),
            };
            if self.wanted() && self.shown.len() <= MAX_READ_BYTES {
                self.shown.extend_from_slice(part);
            }
            self.len += part.len() as u64;
            self.ends_with_newline = newline;
            self.line += usize::from(newline);
            rest = &rest[part.len()..];
        }
    }

    fn restart(&mut self) {
        *self = LineCut::new(self.first, self.count);
    }

    /// Recorded only when it was shown: text, within the size, from a line that exists.
    fn keep(&self) -> bool {
        let total = self.total();
        self.is_text() && self.shown.len() <= MAX_READ_BYTES && (total == 0 || self.first <= total)
    }
}

/// What a tool answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// What the model reads.
    pub text: String,
    /// Whether MCP marks it as a tool error.
    pub is_error: bool,
}

impl Reply {
    pub(crate) fn ok(text: impl Into<String>) -> Reply {
        Reply {
            text: text.into(),
            is_error: false,
        }
    }

    /// A reply that reports an error, `text` saying what.
    pub fn error(text: impl Into<String>) -> Reply {
        Reply {
            text: text.into(),
            is_error: true,
        }
    }
}

/// One MCP connection's tools: one workspace, one session.
pub struct Tools {
    /// The workspace, with its store open.
    pub ctx: Context,
    /// The connection's session.
    pub id: SessionId,
}

/// How the connection's session was chosen, for the server's instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionOrigin {
    /// Named by the caller (`--session` or `$STELLA_SESSION`); created if it did not exist.
    Given,
    /// Minted for this connection.
    Minted,
}

impl Tools {
    /// Open the workspace around `cwd` and the connection's session: `session` when given
    /// (created when new, so a fixed id per agent survives restarts), else a minted one.
    pub fn open(
        settings: &Settings,
        cwd: &Path,
        session: Option<SessionId>,
    ) -> Result<(Tools, SessionOrigin, Vec<Notice>), session::Error> {
        let (ctx, notices) = Context::open(settings, cwd)?;
        let (id, origin) = match session {
            Some(id) => {
                // A damaged session is repaired here; standing whole again, knowing what it
                // forgot, it serves the connection.
                if let Err(e) = ctx.ensure_session(&id) {
                    let e = ctx.repair_on_damage(Some(&id), e);
                    if !e.repaired_whole() {
                        return Err(e);
                    }
                    tracing::warn!(error = %e, "repaired the session's journal");
                    ctx.ensure_session(&id)?;
                }
                (id, SessionOrigin::Given)
            }
            None => (ctx.start_session(None)?, SessionOrigin::Minted),
        };
        Ok((Tools { ctx, id }, origin, notices))
    }

    /// Resolve a path the model gave: relative to the workspace root, or absolute inside it.
    fn resolve(&self, path: &str) -> Result<RelPath, Reply> {
        self.resolve_named(path).map(|n| n.path)
    }

    /// [`Tools::resolve`], keeping the symbolic link the model named.
    fn resolve_named(&self, path: &str) -> Result<paths::Named, Reply> {
        if path.is_empty() {
            return Err(Reply::error(
                "error: 'path' is empty; name a file in the workspace",
            ));
        }
        self.ctx
            .resolve_named(&self.ctx.ws.root, Path::new(path))
            .map_err(|e| match e {
                session::Error::Path(paths::Error::Outside { .. }) => Reply::error(format!(
                    "error: '{path}' is outside the workspace '{}'; nothing was touched. These tools only act on files inside the workspace.",
                    self.ctx.ws.root.display()
                )),
                e => self.failed(e, "nothing was touched"),
            })
    }

    /// Return a file's content (or a range of its lines) and record that the session saw it.
    ///
    /// The bytes are read once, into the store, and what is returned is cut from them as they
    /// pass: the record is exactly the version the model saw, whatever happens on disk meanwhile.
    /// A line range records the whole file it was cut from: the model saw part of that version,
    /// and any later change to it is a change it did not see. A large file streams (memory holds
    /// only the lines shown), so a range can be read from a file of any size.
    pub fn read_file(&self, path: &str, offset: Option<u64>, limit: Option<u64>) -> Reply {
        let rel = match self.resolve(path) {
            Ok(p) => p,
            Err(r) => return r,
        };
        let missing = || {
            Reply::error(format!(
                "error: '{rel}' does not exist; nothing was recorded. To create it, call write_file."
            ))
        };
        let ranged = offset.is_some() || limit.is_some();
        match std::fs::metadata(self.ctx.abs(&rel)) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return missing(),
            Ok(m) if m.is_dir() => {
                return Reply::error(format!("error: '{rel}' is a folder, not a file"));
            }
            Ok(m) if !ranged && m.len() > MAX_READ_BYTES as u64 => {
                return Reply::error(too_large(&rel, m.len()));
            }
            _ => {}
        }
        let start = offset.unwrap_or(1).max(1) as usize;
        let mut cut = LineCut::new(start, limit.map(|n| n as usize));
        match self.ctx.session(&self.id).read_seeing(&rel, &mut cut) {
            Ok(Some(_)) => {}
            Ok(None) if !cut.read => return missing(),
            Ok(None) => {}
            Err(session::Error::Io { source, .. }) => {
                return Reply::error(format!(
                    "error: could not read '{rel}'\ncaused by: {source}"
                ));
            }
            Err(e) => {
                return self.failed(
                    e,
                    "the read was not recorded, so a later write may pass unguarded",
                );
            }
        }
        let total = cut.total();
        if !cut.is_text() {
            return Reply::error(format!(
                "error: '{rel}' is not UTF-8 text (a binary file?); it was not shown and nothing was recorded"
            ));
        }
        if cut.shown.len() > MAX_READ_BYTES && !ranged {
            return Reply::error(too_large(&rel, cut.len));
        }
        if cut.shown.len() > MAX_READ_BYTES {
            return Reply::error(format!(
                "error: those lines of '{rel}' are more than {MAX_READ_BYTES} bytes; nothing was recorded. Ask for fewer with 'limit'."
            ));
        }
        if total > 0 && start > total {
            return Reply::error(format!(
                "error: '{rel}' has {total} lines; offset {start} is past the end; nothing was recorded"
            ));
        }
        let mut out = String::from_utf8(std::mem::take(&mut cut.shown)).expect("checked as text");
        if !ranged {
            return Reply::ok(out);
        }
        if total == 0 {
            return Reply::ok(format!("[{rel} is empty]"));
        }
        let end = match limit {
            Some(n) => (start - 1).saturating_add(n as usize).min(total),
            None => total,
        };
        let _ = write!(
            out,
            "{}[lines {start}-{end} of {total} of {rel}]",
            if out.ends_with('\n') || out.is_empty() {
                ""
            } else {
                "\n"
            }
        );
        Reply::ok(out)
    }

    /// Replace (or create) a file with `content`, refused when it changed since the session saw it.
    pub fn write_file(&self, path: &str, content: &str) -> Reply {
        let named = match self.resolve_named(path) {
            Ok(n) => n,
            Err(r) => return r,
        };
        let rel = named.path.clone();
        let existed = self.ctx.abs(&rel).exists();
        match self.ctx.session(&self.id).write(&rel, content.as_bytes()) {
            Ok(Outcome::Done(_, kept)) => Reply::ok(format!(
                "{} {rel} ({} bytes){}",
                if existed { "wrote" } else { "created" },
                content.len(),
                kept_lines(&kept)
            )),
            Ok(Outcome::Refused(mut checks)) => {
                for c in &mut checks {
                    c.via = named.link.clone();
                }
                self.refusal(&checks)
            }
            Err(e) => self.failed(e, "nothing was written"),
        }
    }

    /// Replace `old` with `new` in a file: exactly one occurrence, or every one with `all`.
    pub fn edit_file(&self, path: &str, old: &str, new: &str, all: bool) -> Reply {
        let rel = match self.resolve(path) {
            Ok(p) => p,
            Err(r) => return r,
        };
        if old.is_empty() {
            return Reply::error(
                "error: 'old_string' is empty; give the exact text to replace (use write_file to create a file)",
            );
        }
        // The guard first: a stale file is refused whether or not the old text is still there.
        let check = match self
            .ctx
            .session(&self.id)
            .guard(std::slice::from_ref(&rel), Intent::Write { content: None })
        {
            Ok(mut c) => c.remove(0),
            Err(e) => return self.failed(e, "nothing was written"),
        };
        if check.refused() {
            return self.refusal(std::slice::from_ref(&check));
        }
        // The edit holds the file and its result whole: a larger file is the shell's to edit.
        if let Ok(m) = std::fs::metadata(self.ctx.abs(&rel))
            && m.len() > MAX_EDIT_BYTES
        {
            return Reply::error(format!(
                "error: '{rel}' is {} bytes; edit_file edits files up to {MAX_EDIT_BYTES} bytes. Nothing was written.",
                m.len()
            ));
        }
        let bytes = match crate::fsutil::read_regular(&self.ctx.abs(&rel)) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Reply::error(format!(
                    "error: '{rel}' does not exist; nothing was written. To create it, call write_file."
                ));
            }
            Err(e) => {
                return Reply::error(format!(
                    "error: could not read '{rel}'; nothing was written\ncaused by: {e}"
                ));
            }
        };
        let Ok(text) = std::str::from_utf8(&bytes) else {
            return Reply::error(format!(
                "error: '{rel}' is not UTF-8 text; edit_file works on text. Nothing was written."
            ));
        };
        let count = text.matches(old).count();
        if count > 1 && !all {
            return Reply::error(format!(
                "error: 'old_string' occurs {count} times in {rel}; nothing was written. Include more surrounding text so it matches exactly once, or set replace_all to true to replace every occurrence."
            ));
        }
        let edit = Edit {
            old: old.to_owned(),
            new: new.to_owned(),
            all,
        };
        // Literally, as the tool's description says (no host's way with line endings).
        let Some(edited) = crate::edit::apply(text, &edit, false) else {
            return Reply::error(format!(
                "error: 'old_string' was not found in {rel}; nothing was written. Re-read {rel} with read_file and copy the exact text, whitespace included."
            ));
        };
        // A file the session never saw: the edit was applied to these bytes, so they are what it
        // saw; recording them makes the write below refuse a change made in between.
        if check.entry.is_none()
            && let Err(e) = self.ctx.session(&self.id).record_seen(&rel, &bytes)
        {
            return self.failed(e, "nothing was written");
        }
        match self.ctx.session(&self.id).write(&rel, edited.as_bytes()) {
            Ok(Outcome::Done(..)) => Reply::ok(format!(
                "edited {rel}: replaced {} occurrence{}",
                count,
                if count == 1 { "" } else { "s" }
            )),
            Ok(Outcome::Refused(checks)) => self.refusal(&checks),
            Err(e) => self.failed(e, "nothing was written"),
        }
    }

    /// Delete a file, refused when it changed since the session saw it.
    pub fn delete_file(&self, path: &str) -> Reply {
        let named = match self.resolve_named(path) {
            Ok(n) => n,
            Err(r) => return r,
        };
        let rel = named.link.clone().unwrap_or_else(|| named.path.clone());
        let abs = self.ctx.abs(&rel);
        if abs.is_dir() {
            return Reply::error(format!(
                "error: '{rel}' is a folder; delete_file deletes files"
            ));
        }
        let existed = abs.symlink_metadata().is_ok();
        match self.ctx.session(&self.id).rm(std::slice::from_ref(&named)) {
            Ok(Outcome::Done(_, kept)) if existed => {
                Reply::ok(format!("deleted {rel}{}", kept_lines(&kept)))
            }
            Ok(Outcome::Done(..)) => Reply::ok(format!("{rel} did not exist; nothing to delete")),
            Ok(Outcome::Refused(checks)) => self.refusal(&checks),
            Err(e) => self.failed(e, "nothing was deleted"),
        }
    }

    /// Every file the session tracks and whether it is unchanged, changed, deleted or unreadable.
    pub fn status(&self) -> Reply {
        match self.ctx.session(&self.id).status() {
            Ok(entries) => {
                let mut out = format!("session {}\n", self.id);
                if entries.is_empty() {
                    out.push_str("no tracked files: read a file with read_file first\n");
                }
                for (e, f) in &entries {
                    let _ = writeln!(out, "{:<10} {}", f.as_str(), e.path);
                }
                if entries.iter().any(|(_, f)| *f != Freshness::Fresh) {
                    out.push_str("changed or gone files must be re-read with read_file before they are written\n");
                }
                Reply::ok(out)
            }
            Err(e) => self.failed(e, "nothing was changed"),
        }
    }

    fn refusal(&self, checks: &[guard::Check]) -> Reply {
        let journal = self.ctx.journal();
        // The refusal leaves a trace in the session (never at the cost of the answer).
        let _ = crate::refusals::note(&journal, &self.id, checks);
        let text = checks
            .iter()
            .filter(|c| c.refused())
            .map(|c| guard::refusal_message(&journal, &self.ctx.ws.root, c))
            .collect::<Vec<_>>()
            .join("\n\n");
        Reply::error(text)
    }
}

impl Tools {
    /// [`error_reply`], after repairing the store when `e` found it damaged (see
    /// [`crate::repair`]): the reply then says what was lost.
    fn failed(&self, e: session::Error, consequence: &str) -> Reply {
        let e = self.ctx.repair_on_damage(Some(&self.id), e);
        error_reply(&e, consequence)
    }
}

/// An error as git would say it: `error:`, then `caused by:` lines, then what it means here.
fn error_reply(e: &(dyn StdError + 'static), consequence: &str) -> Reply {
    let mut report = crate::report::Report::of(e);
    // When the tree did change, the error says so itself; never claim that nothing happened.
    if !matches!(
        e.downcast_ref::<session::Error>(),
        Some(session::Error::Unrecorded { .. })
    ) {
        report.message = format!("{}; {consequence}", report.message);
    }
    Reply::error(report.render())
}

/// One line per file whose bytes were kept before a blind change, each on a line of its own
/// after the answer.
fn kept_lines(kept: &[crate::keep::Kept]) -> String {
    kept.iter().map(|k| format!("\n{}", k.line())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Repo {
        _tmp: tempfile::TempDir,
        root: std::path::PathBuf,
        settings: Settings,
    }

    fn repo() -> Repo {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let root = base.join("repo");
        std::fs::create_dir_all(&root).unwrap();
        let ok = crate::child::die_with_parent(
            std::process::Command::new("git")
                .args(["init", "-q"])
                .current_dir(&root)
                .env("GIT_CONFIG_NOSYSTEM", "1"),
        )
        .status()
        .unwrap()
        .success();
        assert!(ok);
        Repo {
            settings: Settings::new(base.join("stella")),
            root,
            _tmp: tmp,
        }
    }

    fn open(r: &Repo, id: Option<&str>) -> Tools {
        let id = id.map(|s| SessionId::parse(s).unwrap());
        Tools::open(&r.settings, &r.root, id).unwrap().0
    }

    /// What [`LineCut`] must find, computed on the whole file at once.
    fn cut_whole(bytes: &[u8], first: usize, count: Option<usize>) -> (Vec<u8>, usize, bool) {
        let Ok(text) = std::str::from_utf8(bytes) else {
            return (Vec::new(), 0, false);
        };
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let end = count.map_or(lines.len(), |n| {
            (first - 1).saturating_add(n).min(lines.len())
        });
        let shown = lines.get(first - 1..end).unwrap_or_default().concat();
        (shown.into_bytes(), lines.len(), true)
    }

    proptest::proptest! {
        #[test]
        fn lines_cut_as_a_file_streams_are_the_lines_of_the_whole_file(
            pieces in proptest::collection::vec(
                proptest::prop_oneof![
                    4 => proptest::strategy::Just("\n".as_bytes()),
                    4 => proptest::strategy::Just("a".as_bytes()),
                    // Characters of two and three bytes, which a chunk can cut in two.
                    4 => proptest::strategy::Just("é".as_bytes()),
                    4 => proptest::strategy::Just("€".as_bytes()),
                    // Not UTF-8: a stray continuation byte, a sequence cut short.
                    1 => proptest::strategy::Just(&b"\xa9"[..]),
                    1 => proptest::strategy::Just(&b"\xe2\x82"[..]),
                ],
                0..40,
            ),
            cuts in proptest::collection::vec(0usize..60, 0..6),
            first in 1usize..8,
            count in proptest::option::of(0usize..5),
        ) {
            use crate::session::Sees;
            let bytes = pieces.concat();
            let mut cut = LineCut::new(first, count);
            let mut cuts = cuts;
            cuts.push(0);
            cuts.push(bytes.len());
            cuts.sort_unstable();
            for pair in cuts.windows(2) {
                let (a, b) = (pair[0].min(bytes.len()), pair[1].min(bytes.len()));
                cut.bytes(&bytes[a..b]);
            }
            let (shown, total, text) = cut_whole(&bytes, first, count);
            proptest::prop_assert_eq!(cut.is_text(), text);
            if text {
                proptest::prop_assert_eq!(&cut.shown, &shown);
                proptest::prop_assert_eq!(cut.total(), total);
            }
        }
    }

    #[test]
    fn a_range_of_a_large_file_streams_and_records_the_version_it_was_cut_from() {
        let r = repo();
        // Over the size a read holds whole: the file streams into the store.
        let line = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdé\n";
        let n = (crate::session::WHOLE_READ_MAX as usize / line.len()) + 100;
        let text = line.repeat(n);
        std::fs::write(r.root.join("big.txt"), &text).unwrap();
        let t = open(&r, Some("agent-one"));
        let whole = t.read_file("big.txt", None, None);
        assert!(
            whole.is_error && whole.text.contains("ask for a line range"),
            "{}",
            whole.text
        );
        assert_eq!(
            t.read_file("big.txt", Some(n as u64), Some(5)),
            Reply::ok(format!("{line}[lines {n}-{n} of {n} of big.txt]"))
        );
        let past = t.read_file("big.txt", Some(n as u64 + 1), Some(1));
        assert!(
            past.text.contains(&format!("has {n} lines")),
            "{}",
            past.text
        );
        // Recorded: the version the range was cut from guards the next write.
        std::fs::write(r.root.join("big.txt"), format!("{text}theirs\n")).unwrap();
        let reply = t.write_file("big.txt", "mine\n");
        assert!(
            reply.text.starts_with("refusing to write: big.txt\n"),
            "{}",
            reply.text
        );
        // Larger than an edit holds: refused, nothing written.
        std::fs::write(r.root.join("huge.txt"), line.repeat(3 * n)).unwrap();
        let edit = t.edit_file("huge.txt", "é\n", "e\n", true);
        assert!(
            edit.is_error && edit.text.contains("edits files up to 16777216 bytes"),
            "{}",
            edit.text
        );
        assert_eq!(
            std::fs::metadata(r.root.join("huge.txt")).unwrap().len(),
            3 * text.len() as u64
        );
        // A FIFO where a file was: an error at once, nothing recorded, nothing hangs.
        std::fs::remove_file(r.root.join("huge.txt")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(r.root.join("huge.txt"))
            .status()
            .unwrap();
        assert!(made.success());
        let fifo = t.read_file("huge.txt", Some(1), Some(1));
        assert!(
            fifo.is_error && fifo.text.contains("not a regular file"),
            "{}",
            fifo.text
        );
        // A large binary file is neither shown nor recorded: its write is a blind one.
        let mut binary = text.into_bytes();
        binary[10] = 0xff;
        std::fs::write(r.root.join("bin.dat"), &binary).unwrap();
        let shown = t.read_file("bin.dat", Some(1), Some(1));
        assert!(shown.text.contains("not UTF-8"), "{}", shown.text);
        std::fs::write(r.root.join("bin.dat"), "changed").unwrap();
        assert_eq!(
            t.write_file("bin.dat", "mine\n"),
            Reply::ok(
                "wrote bin.dat (5 bytes)\nkept the previous bin.dat: git stella recover bin.dat"
            )
        );
    }

    #[test]
    fn a_fixed_session_keeps_its_guard_across_a_reconnect() {
        let r = repo();
        std::fs::write(r.root.join("f.txt"), "seen\n").unwrap();
        let t = open(&r, Some("agent-one"));
        assert_eq!(t.read_file("f.txt", None, None), Reply::ok("seen\n"));
        drop(t);
        std::fs::write(r.root.join("f.txt"), "theirs\n").unwrap();
        let t = open(&r, Some("agent-one"));
        let reply = t.write_file("f.txt", "mine\n");
        assert!(reply.is_error);
        assert!(
            reply.text.starts_with("refusing to write: f.txt\n"),
            "{}",
            reply.text
        );
        assert_eq!(
            std::fs::read_to_string(r.root.join("f.txt")).unwrap(),
            "theirs\n"
        );
        // A minted session is a fresh one: it never saw the file, so its write is a blind one,
        // and what it replaces (no commit holds it) is kept first.
        let other = open(&r, None);
        assert_ne!(other.id.as_str(), "agent-one");
        assert_eq!(
            other.write_file("f.txt", "blind\n"),
            Reply::ok("wrote f.txt (6 bytes)\nkept the previous f.txt: git stella recover f.txt")
        );
    }

    #[test]
    fn delete_file_of_a_link_removes_the_link_and_refusals_name_both() {
        let r = repo();
        std::fs::write(r.root.join("real.txt"), "real\n").unwrap();
        std::os::unix::fs::symlink("real.txt", r.root.join("link.txt")).unwrap();
        let t = open(&r, Some("s"));
        assert_eq!(t.read_file("link.txt", None, None), Reply::ok("real\n"));
        std::fs::write(r.root.join("real.txt"), "theirs\n").unwrap();
        let reply = t.write_file("link.txt", "mine\n");
        assert!(
            reply
                .text
                .starts_with("refusing to write: link.txt -> real.txt\n"),
            "{}",
            reply.text
        );
        assert_eq!(t.read_file("link.txt", None, None), Reply::ok("theirs\n"));
        assert_eq!(t.delete_file("link.txt"), Reply::ok("deleted link.txt"));
        assert!(r.root.join("link.txt").symlink_metadata().is_err());
        assert_eq!(
            std::fs::read_to_string(r.root.join("real.txt")).unwrap(),
            "theirs\n"
        );
    }

    #[test]
    fn git_and_stella_paths_are_refused_and_nothing_is_touched() {
        let r = repo();
        let t = open(&r, Some("s"));
        for path in [".git/hooks/pre-commit", ".stella/private/workspace.toml"] {
            let reply = t.write_file(path, "#!/bin/sh\n");
            assert!(reply.is_error, "{}", reply.text);
            assert!(
                reply
                    .text
                    .contains("which Stella never reads or writes on an agent's behalf"),
                "{}",
                reply.text
            );
            assert!(
                reply.text.ends_with("nothing was touched"),
                "{}",
                reply.text
            );
            assert!(t.read_file(path, None, None).is_error);
            assert!(t.delete_file(path).is_error);
        }
        assert!(!r.root.join(".git/hooks/pre-commit").exists());
    }

    #[test]
    fn ambiguous_absent_and_empty_old_text_write_nothing() {
        let r = repo();
        std::fs::write(r.root.join("f.txt"), "a b a\n").unwrap();
        let t = open(&r, Some("s"));
        assert_eq!(
            t.edit_file("f.txt", "a", "x", false),
            Reply::error(
                "error: 'old_string' occurs 2 times in f.txt; nothing was written. Include more surrounding text so it matches exactly once, or set replace_all to true to replace every occurrence."
            )
        );
        assert_eq!(
            t.edit_file("f.txt", "", "x", false),
            Reply::error(
                "error: 'old_string' is empty; give the exact text to replace (use write_file to create a file)"
            )
        );
        assert_eq!(
            std::fs::read_to_string(r.root.join("f.txt")).unwrap(),
            "a b a\n"
        );
        assert_eq!(
            t.edit_file("f.txt", "a", "x", true),
            Reply::ok("edited f.txt: replaced 2 occurrences")
        );
        assert_eq!(
            std::fs::read_to_string(r.root.join("f.txt")).unwrap(),
            "x b x\n"
        );
        // The blind edit recorded what it edited: a later outside change is caught.
        std::fs::write(r.root.join("f.txt"), "x b x y\n").unwrap();
        assert!(t.edit_file("f.txt", "b", "c", false).is_error);
    }

    #[test]
    fn paths_outside_the_workspace_touch_nothing() {
        let r = repo();
        let t = open(&r, Some("s"));
        let outside = r.root.parent().unwrap().join("outside.txt");
        let reply = t.write_file(outside.to_str().unwrap(), "x");
        assert!(reply.is_error);
        assert!(
            reply.text.contains("is outside the workspace"),
            "{}",
            reply.text
        );
        assert!(!outside.exists());
        std::fs::write(&outside, "keep").unwrap();
        assert!(t.delete_file("../outside.txt").is_error);
        assert!(t.edit_file("../outside.txt", "keep", "x", false).is_error);
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
    }

    #[test]
    fn a_stale_delete_is_refused_and_a_fresh_one_goes_through() {
        let r = repo();
        std::fs::write(r.root.join("f.txt"), "seen\n").unwrap();
        let t = open(&r, Some("s"));
        t.read_file("f.txt", None, None);
        std::fs::write(r.root.join("f.txt"), "theirs\n").unwrap();
        let reply = t.delete_file("f.txt");
        assert!(reply.is_error);
        assert!(
            reply.text.starts_with("refusing to delete: f.txt\n"),
            "{}",
            reply.text
        );
        assert!(
            reply.text.contains("Nothing was deleted."),
            "{}",
            reply.text
        );
        assert!(r.root.join("f.txt").exists());
        t.read_file("f.txt", Some(1), Some(1));
        assert_eq!(t.delete_file("f.txt"), Reply::ok("deleted f.txt"));
        assert_eq!(
            t.delete_file("f.txt"),
            Reply::ok("f.txt did not exist; nothing to delete")
        );
        assert_eq!(
            t.read_file("f.txt", None, None),
            Reply::error(
                "error: 'f.txt' does not exist; nothing was recorded. To create it, call write_file."
            )
        );
    }
}
