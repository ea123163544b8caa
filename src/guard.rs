//! The stale-write decision (SPEC §4): refuse an update or delete of a path whose bytes changed
//! since this session last read or wrote it.
//!
//! | session's map | disk now | update | delete |
//! |---|---|---|---|
//! | not tracked | anything | allow | allow |
//! | tracked | cannot be read | allow (the tool's own error says it better) | allow |
//! | tracked | same bytes as seen | allow | allow |
//! | tracked | bytes equal what the caller is about to write | allow (If-Match: nothing lost) | — |
//! | tracked | different bytes | **refuse** | **refuse** |
//! | tracked | gone | **refuse** (it would re-create what someone removed) | allow (already done) |
//! | tracked, may have seen two versions | anything but the intended bytes | **refuse** | **refuse** unless gone |
//!
//! A path the session does not track is a blind change, which destroys nothing the session
//! planned against; but when the bytes there are exactly what another live session last wrote,
//! and git's `HEAD` does not hold them, it would destroy that session's uncommitted work: refused
//! too (`Check::respect`), unless the caller is about to write those very bytes.

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use crate::digest::Digest;
use crate::ids::SessionId;
use crate::journal::{self, Entry, Journal, Seen};
use crate::paths::RelPath;

/// What the caller is about to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intent {
    /// Update or create the path.
    Write {
        /// The digest of the bytes about to be written, when the caller can say: a write of the
        /// bytes already there loses nothing.
        content: Option<Digest>,
    },
    /// Delete the path.
    Delete,
}

/// The path on disk, as a read would see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Disk {
    /// A file, with the digest of its bytes.
    Present(Digest),
    /// Nothing is there.
    Missing,
    /// It exists but cannot be read (permissions, I/O error, a folder).
    Unreadable(String),
}

impl Disk {
    /// Hash what is at `path` now (streaming; symlinks followed).
    pub fn probe(path: &Path) -> Disk {
        match std::fs::metadata(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Disk::Missing,
            Err(e) => return Disk::Unreadable(e.to_string()),
            Ok(m) if m.is_dir() => return Disk::Unreadable("it is a folder".into()),
            Ok(_) => {}
        }
        match crate::fsutil::digest_file(path) {
            Ok(d) => Disk::Present(d),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Disk::Missing,
            Err(e) => Disk::Unreadable(e.to_string()),
        }
    }

    /// The digest of the file's bytes, when there is a file that could be read.
    pub fn digest(&self) -> Option<Digest> {
        match self {
            Disk::Present(d) => Some(*d),
            _ => None,
        }
    }
}

/// Why a write may go ahead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allow {
    /// The session never read or wrote this path.
    Untracked,
    /// The bytes are the ones the session saw.
    Fresh,
    /// The path cannot be read; the tool's own error reports that better.
    Unreadable,
    /// The bytes on disk already equal the bytes about to be written.
    SameBytes,
    /// A delete of a path that is already gone.
    AlreadyGone,
}

/// Why a write was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conflict {
    /// The bytes changed since the session saw them.
    Changed,
    /// The file was deleted since the session saw it.
    Deleted,
    /// The file changed while the session read it: it may have seen either version.
    Reread,
    /// The session may have known the file before its memory of it was lost (a damaged
    /// journal was repaired, or the journal was gone): it cannot tell what changed since.
    Forgotten,
    /// The session never read the file, and its bytes are another live session's write that
    /// git's `HEAD` does not hold ([`Check::writer`] names it): a blind change would lose it.
    Uncommitted,
    /// The session never read the file, git's `HEAD` does not hold its bytes, and they are too
    /// large to keep before replacing them ([`crate::keep`]).
    Unkept,
}

/// The largest file whose bytes are kept before a change made without reading them
/// ([`crate::keep`]); past it such a change is refused ([`Conflict::Unkept`]).
pub(crate) const KEEP_FILE_MAX: u64 = 64 << 20;

/// The most one command (a shell command under the guard, one call of a tool) keeps.
pub(crate) const KEEP_COMMAND_MAX: u64 = 256 << 20;

/// The decision for one path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The write may go ahead, and why.
    Allow(Allow),
    /// The write is refused, and why.
    Refuse(Conflict),
}

/// The decision table, as a pure function.
pub(crate) fn decide(seen: Option<Seen>, disk: &Disk, intent: Intent) -> Verdict {
    let Some(seen) = seen else {
        return Verdict::Allow(Allow::Untracked);
    };
    match (disk, intent) {
        // What was lost may have been a file; a path with no file now loses nothing.
        (Disk::Missing, _) if seen == Seen::Forgotten => Verdict::Allow(Allow::Untracked),
        (Disk::Unreadable(_), _) => Verdict::Allow(Allow::Unreadable),
        (Disk::Missing, Intent::Delete) => Verdict::Allow(Allow::AlreadyGone),
        (Disk::Missing, Intent::Write { .. }) => Verdict::Refuse(Conflict::Deleted),
        (Disk::Present(now), Intent::Write { content: Some(c) }) if *now == c => {
            Verdict::Allow(Allow::SameBytes)
        }
        (Disk::Present(now), _) => match seen {
            Seen::Digest(d) if d == *now => Verdict::Allow(Allow::Fresh),
            Seen::Digest(_) => Verdict::Refuse(Conflict::Changed),
            Seen::Reread => Verdict::Refuse(Conflict::Reread),
            Seen::Forgotten => Verdict::Refuse(Conflict::Forgotten),
        },
    }
}

/// The full outcome of checking one path.
#[derive(Clone, Debug)]
pub struct Check {
    /// The path checked, relative to the workspace root.
    pub path: RelPath,
    /// The symbolic link the caller named, when the path was reached through one.
    pub via: Option<RelPath>,
    /// What the caller is about to do.
    pub intent: Intent,
    /// What the session knows of the path, `None` when it does not track it.
    pub entry: Option<Entry>,
    /// The path on disk when it was checked.
    pub disk: Disk,
    /// Allowed or refused, and why.
    pub verdict: Verdict,
    /// For [`Conflict::Uncommitted`]: the session whose write it would lose.
    pub writer: Option<Writer>,
}

impl Check {
    /// Whether the write is refused.
    pub fn refused(&self) -> bool {
        matches!(self.verdict, Verdict::Refuse(_))
    }

    /// The rule for a blind change (the path is not in the session's map): refuse it when the
    /// bytes on disk are another live session's uncommitted write. A blind change costs one
    /// read of the index of writers ([`Journal::writers_of`]); only when another session wrote
    /// the path is its map looked up and the file hashed, and only when the bytes are its write
    /// is git's `HEAD` read.
    pub(crate) fn respect(&mut self, others: &Others<'_, '_>) -> Result<(), journal::Error> {
        if self.verdict != Verdict::Allow(Allow::Untracked) {
            return Ok(());
        }
        let writes = others.writes(&self.path)?;
        if writes.is_empty() {
            return Ok(());
        }
        let disk = match &self.disk {
            Disk::Present(_) => self.disk.clone(),
            _ => Disk::probe(&self.path.under(&others.ws.root)),
        };
        let Disk::Present(now) = disk else {
            // Nothing there to lose, or nothing it can read: the tool's own error says that.
            return Ok(());
        };
        self.disk = disk;
        if self.intent == (Intent::Write { content: Some(now) }) {
            self.verdict = Verdict::Allow(Allow::SameBytes);
            return Ok(());
        }
        let Some((writer, _, blob)) = writes
            .into_iter()
            .filter(|(_, d, _)| *d == now)
            .max_by_key(|(w, _, _)| w.at)
        else {
            return Ok(());
        };
        if others.head_holds_blob(&self.path, now, blob) {
            return Ok(());
        }
        tracing::info!(path = %self.path, writer = %writer.session, "guard: their uncommitted write");
        self.verdict = Verdict::Refuse(Conflict::Uncommitted);
        self.writer = Some(writer);
        Ok(())
    }
}

/// This workspace's other sessions and git's `HEAD`, as a blind change consults them
/// ([`Check::respect`]).
pub(crate) struct Others<'a, 'j> {
    pub(crate) journal: &'a Journal<'j>,
    /// The session making the change.
    pub(crate) me: &'a SessionId,
    pub(crate) ws: &'a crate::workspace::Workspace,
    /// The user's repository, opened when first needed and kept: a command under the shell
    /// guard may change thousands of files (`HEAD` itself is read again each time).
    repo: std::cell::OnceCell<Option<gix::Repository>>,
}

impl<'a, 'j> Others<'a, 'j> {
    pub(crate) fn new(
        journal: &'a Journal<'j>,
        me: &'a SessionId,
        ws: &'a crate::workspace::Workspace,
    ) -> Self {
        Others {
            journal,
            me,
            ws,
            repo: std::cell::OnceCell::new(),
        }
    }

    fn repo(&self) -> Option<&gix::Repository> {
        self.repo
            .get_or_init(|| self.ws.user_objects().ok())
            .as_ref()
    }

    /// Each other live session whose last word on `path` is a write: who, when, and the bytes.
    /// A session that ended ([`ENDED`]) no longer protects its writes. A session whose journal
    /// cannot be read protects nothing until it is repaired (its own next command repairs it):
    /// its damage is not this session's to refuse every blind write for.
    ///
    /// Only the sessions the index of writers lists for the path are looked up
    /// ([`Journal::writers_of`]); an index that cannot be read fails closed, as an error.
    /// With each, the blob that holds those bytes in the journal store, when it is known.
    pub(crate) fn writes(
        &self,
        path: &RelPath,
    ) -> Result<Vec<(Writer, Digest, Option<gix::ObjectId>)>, journal::Error> {
        let mut out = Vec::new();
        for id in self.journal.writers_of(path)? {
            if id == *self.me {
                continue;
            }
            let tip = match self.journal.try_tip(&id) {
                Ok(Some(tip)) if !ended(&tip) => tip,
                Ok(_) => continue,
                Err(e) => {
                    tracing::warn!(session = %id, error = %e, "a session's journal cannot be read");
                    continue;
                }
            };
            match self.journal.lookup_at(tip.tree, path) {
                Ok(Some(Entry {
                    seen: Seen::Digest(d),
                    wrote: Some(at),
                    bytes,
                    ..
                })) => out.push((Writer { session: id, at }, d, bytes.map(|(blob, _)| blob))),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(session = %id, error = %e, "a session's journal cannot be read");
                }
            }
        }
        Ok(out)
    }

    /// The blob `HEAD` has at `path`, if any (an unborn branch has none).
    fn head_blob(&self, path: &RelPath) -> Option<gix::ObjectId> {
        let tree = self.repo()?.head_tree().ok()?;
        let entry = tree.lookup_entry_by_path(path.as_path()).ok()??;
        entry.mode().is_blob().then(|| entry.object_id())
    }

    /// Whether git's `HEAD` holds bytes `now` at `path` (read when asked: a command may move
    /// `HEAD` while it runs).
    pub(crate) fn head_holds(&self, path: &RelPath, now: Digest) -> bool {
        self.head_holds_blob(path, now, None)
    }

    /// [`Others::head_holds`], given the id of a blob known to hold bytes `now` (the writer's
    /// copy in the journal store): when both stores name objects the same way, the ids compare
    /// and `HEAD`'s blob is not read.
    pub(crate) fn head_holds_blob(
        &self,
        path: &RelPath,
        now: Digest,
        known: Option<gix::ObjectId>,
    ) -> bool {
        let (Some(repo), Some(blob)) = (self.repo(), self.head_blob(path)) else {
            return false;
        };
        match known {
            Some(known) if known.kind() == blob.kind() => known == blob,
            _ => repo
                .find_object(blob)
                .is_ok_and(|o| Digest::of(&o.data) == now),
        }
    }
}

/// The summary of the step that ends a session: from it on, until the session records another
/// step, its writes are no longer protected from other sessions' blind changes.
pub(crate) const ENDED: &str = "session end";

/// Whether the session whose last step is `tip` has ended.
pub fn ended(tip: &journal::Tip) -> bool {
    tip.summary == ENDED || tip.summary.starts_with("session end:")
}

/// Check `path` for the session of `others`: one map lookup, one hash of the file, no walk of
/// anything; a blind change also asks the other sessions ([`Check::respect`]).
pub(crate) fn check(
    others: &Others<'_, '_>,
    path: &RelPath,
    intent: Intent,
) -> Result<Check, journal::Error> {
    let entry = others.journal.lookup(others.me, path)?;
    let mut check = check_entry(entry, &others.ws.root, path, intent);
    check.respect(others)?;
    Ok(check)
}

/// [`check`] with the map entry already at hand.
pub(crate) fn check_entry(
    entry: Option<Entry>,
    root: &Path,
    path: &RelPath,
    intent: Intent,
) -> Check {
    // An untracked path needs no hashing: nothing the session saw can be lost.
    let disk = if entry.is_some() {
        Disk::probe(&path.under(root))
    } else {
        Disk::Missing
    };
    check_against(entry, path, intent, disk)
}

/// [`check_entry`] with what is on disk already known: hashed by a caller that holds the file's
/// folder and opened it once to wait for it and hash it.
pub(crate) fn check_against(
    entry: Option<Entry>,
    path: &RelPath,
    intent: Intent,
    disk: Disk,
) -> Check {
    let verdict = decide(entry.as_ref().map(|e| e.seen), &disk, intent);
    tracing::info!(path = %path, tracked = entry.is_some(), "guard: {verdict:?}");
    Check {
        path: path.clone(),
        via: None,
        intent,
        entry,
        disk,
        verdict,
        writer: None,
    }
}

/// The refusal message for a refused check (SPEC §4): what, why, and the fix, then a bounded
/// diff of what changed when the journal holds the bytes the session saw.
pub fn refusal_message(journal: &Journal<'_>, root: &Path, check: &Check) -> String {
    let Verdict::Refuse(conflict) = check.verdict else {
        return String::new();
    };
    let p = &check.path;
    let mut m = String::new();
    let (verb, noun) = match check.intent {
        Intent::Write { .. } => ("write", "This write"),
        Intent::Delete => ("delete", "Deleting it"),
    };
    match &check.via {
        Some(link) => {
            let _ = writeln!(m, "refusing to {verb}: {link} -> {p}");
        }
        None => {
            let _ = writeln!(m, "refusing to {verb}: {p}");
        }
    }
    match conflict {
        Conflict::Changed => {
            let who = match check
                .disk
                .digest()
                .and_then(|now| writer_of(journal, p, now))
            {
                Some(w) => format!("session {} wrote it at {},", w.session, clock_now(w.at)),
                None => "another process or a person edited it".into(),
            };
            let _ = writeln!(
                m,
                "{p} changed since this session last read it: {who} after this session looked."
            );
            let _ = writeln!(
                m,
                "{noun} would overwrite their work with a plan formed against content that no longer exists."
            );
        }
        Conflict::Deleted => {
            let _ = writeln!(
                m,
                "{p} was deleted since this session last read it: another agent or a person removed it after this session looked."
            );
            let _ = writeln!(
                m,
                "{noun} would re-create it from a plan formed against content that no longer exists."
            );
        }
        Conflict::Forgotten => {
            let _ = writeln!(
                m,
                "{p} may be a file this session knew before its memory of it was lost (its journal was damaged and repaired, or removed): it cannot tell whether someone changed it since."
            );
            let _ = writeln!(
                m,
                "{noun} could overwrite someone's work with a plan formed against content that no longer exists."
            );
        }
        Conflict::Uncommitted => {
            let who = match &check.writer {
                Some(w) => format!("session {} wrote at {}", w.session, clock_now(w.at)),
                None => "another session wrote".into(),
            };
            let _ = writeln!(
                m,
                "{p} holds what {who}, and git's HEAD does not have those bytes: it is that session's uncommitted work, and this session never read it."
            );
            let _ = writeln!(
                m,
                "{noun} would destroy that work without anyone seeing it."
            );
        }
        Conflict::Unkept => {
            let _ = writeln!(
                m,
                "{p} was never read by this session, and git's HEAD does not have its bytes: Stella keeps such bytes before a change made without reading them, up to {} MiB of a file and {} MiB in one command, and these go past that.",
                KEEP_FILE_MAX >> 20,
                KEEP_COMMAND_MAX >> 20
            );
            let _ = writeln!(
                m,
                "{noun} could destroy someone's uncommitted work for good."
            );
        }
        Conflict::Reread => {
            let _ = writeln!(
                m,
                "{p} changed while this session was reading it: the session may have seen either version."
            );
            let _ = writeln!(
                m,
                "{noun} could overwrite someone's work with a plan formed against content that no longer exists."
            );
        }
    }
    match (conflict, check.intent) {
        (Conflict::Unkept, intent) => {
            let nothing = match intent {
                Intent::Delete => "Nothing was deleted",
                Intent::Write { .. } => "Nothing was written",
            };
            let _ = write!(
                m,
                "{nothing}. To recover, read {p} first (a change of what the session read is checked, not kept), or commit it."
            );
        }
        (Conflict::Uncommitted, intent) => {
            let (nothing, redo) = match intent {
                Intent::Delete => ("Nothing was deleted", "decide again against"),
                Intent::Write { .. } => ("Nothing was written", "build on"),
            };
            let ask = match &check.writer {
                Some(w) => format!("session {}", w.session),
                None => "that session".into(),
            };
            let _ = write!(
                m,
                "{nothing}. To recover, read {p} first and {redo} what is there, or ask {ask} to commit it."
            );
        }
        (Conflict::Deleted, _) => {
            let _ = write!(
                m,
                "Nothing was written. To recover, find out why {p} was removed; if it should exist again, record that this session saw the deletion ('git stella wrote {p}') and create it anew."
            );
        }
        (_, Intent::Delete) => {
            let _ = write!(
                m,
                "Nothing was deleted. To recover, re-read {p} and decide again against what is there now."
            );
        }
        _ => {
            let _ = write!(
                m,
                "Nothing was written. To recover, re-read {p} and redo the change against what is there now."
            );
        }
    }
    if conflict == Conflict::Changed
        && let Some(d) = change_summary(journal, root, check, Some(DIFF_LINES))
    {
        m.push('\n');
        m.push_str(&d);
    }
    m
}

/// A session of this workspace that wrote the bytes now at a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Writer {
    /// The session that wrote them.
    pub session: SessionId,
    /// When it wrote them (Unix seconds).
    pub at: i64,
}

/// The session that wrote `now` at `path`, when one of this workspace's sessions did (the latest,
/// if several). Looked up only for a refusal: one map lookup per session, nothing on the allowed
/// path.
pub(crate) fn writer_of(journal: &Journal<'_>, path: &RelPath, now: Digest) -> Option<Writer> {
    let sessions = journal.sessions().ok()?;
    sessions
        .iter()
        .filter_map(|(id, tip)| {
            let entry = journal.lookup_at(tip.tree, path).ok()??;
            (entry.seen == Seen::Digest(now)).then_some(())?;
            Some(Writer {
                session: id.clone(),
                at: entry.wrote?,
            })
        })
        .max_by_key(|w| w.at)
}

/// When Unix second `at` was, as a refusal says it: `12:03:41 UTC` for a time today,
/// `2026-11-30 12:03:41 UTC` otherwise.
pub(crate) fn clock_now(at: i64) -> String {
    clock(at, gix::date::Time::now_utc().seconds)
}

/// `12:03:41 UTC` for a time today, `2026-11-30 12:03:41 UTC` otherwise.
fn clock(at: i64, now: i64) -> String {
    let t = gix::date::Time::new(at, 0);
    let full = t.format_or_unix(gix::date::time::format::ISO8601);
    // ISO8601 here is `2026-11-30 12:03:41 +0000`.
    let (date, rest) = full.split_once(' ').unwrap_or((full.as_str(), ""));
    let time = rest.split(' ').next().unwrap_or(rest);
    if at.div_euclid(86_400) == now.div_euclid(86_400) {
        format!("{time} UTC")
    } else {
        format!("{date} {time} UTC")
    }
}

/// How many diff lines a refusal shows before it says how many more there are.
pub(crate) const DIFF_LINES: usize = 40;

/// Files larger than this get no diff: say so instead.
const DIFF_MAX_BYTES: u64 = 1 << 20;

/// How long a refusal's diff may search for the smallest edit before it settles for a coarser one.
const DIFF_DEADLINE: std::time::Duration = std::time::Duration::from_millis(50);

/// What changed on disk since the session saw `check.path`, as a unified diff cut to `limit`
/// lines, or a sentence saying why no diff can be shown. `None` when there is nothing to compare.
pub fn change_summary(
    journal: &Journal<'_>,
    root: &Path,
    check: &Check,
    limit: Option<usize>,
) -> Option<String> {
    let (blob, _) = check.entry.as_ref()?.bytes?;
    let abs = check.path.under(root);
    let size = std::fs::metadata(&abs).ok()?.len();
    if size > DIFF_MAX_BYTES {
        return Some(format!(
            "(no diff shown: {} is {size} bytes, too large to diff here)",
            check.path
        ));
    }
    let seen_size = journal.blob_size(blob).ok()?;
    if seen_size > DIFF_MAX_BYTES {
        return Some(format!(
            "(no diff shown: {} was {seen_size} bytes when this session saw it, too large to diff here)",
            check.path
        ));
    }
    let now = crate::fsutil::read_regular(&abs).ok()?;
    let seen = journal.blob(blob).ok()?;
    Some(unified_diff(&check.path, &seen, &now, limit))
}

/// A unified diff from the bytes the session saw to the bytes on disk.
pub(crate) fn unified_diff(
    path: &RelPath,
    seen: &[u8],
    now: &[u8],
    limit: Option<usize>,
) -> String {
    let (Ok(seen), Ok(now)) = (std::str::from_utf8(seen), std::str::from_utf8(now)) else {
        return format!("(no diff shown: {path} is a binary file)");
    };
    if seen.contains('\0') || now.contains('\0') {
        return format!("(no diff shown: {path} is a binary file)");
    }
    // A refusal must not stall the host: past the deadline the diff is coarser, never slower
    // (Myers' cost grows with both sides times their distance; 20,000 lines replaced by one took
    // minutes in a debug build).
    let diff = similar::TextDiff::configure()
        .deadline(std::time::Instant::now() + DIFF_DEADLINE)
        .diff_lines(seen, now);
    let text = diff
        .unified_diff()
        .context_radius(2)
        .header(
            &format!("{path} (seen by this session)"),
            &format!("{path} (on disk now)"),
        )
        .to_string();
    let lines: Vec<&str> = text.lines().collect();
    match limit {
        Some(limit) if lines.len() > limit => {
            let mut out = lines[..limit].join("\n");
            let _ = write!(
                out,
                "\n… {} more lines ('git stella diff {path}' shows all of it)",
                lines.len() - limit
            );
            out
        }
        _ => lines.join("\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(b: &[u8]) -> Digest {
        Digest::of(b)
    }

    #[test]
    fn the_decision_table() {
        let w = Intent::Write { content: None };
        let seen = Some(Seen::Digest(d(b"a")));
        use Verdict::{Allow as A, Refuse};
        assert_eq!(
            decide(None, &Disk::Present(d(b"b")), w),
            A(Allow::Untracked)
        );
        assert_eq!(decide(seen, &Disk::Present(d(b"a")), w), A(Allow::Fresh));
        assert_eq!(
            decide(seen, &Disk::Present(d(b"b")), w),
            Refuse(Conflict::Changed)
        );
        assert_eq!(decide(seen, &Disk::Missing, w), Refuse(Conflict::Deleted));
        assert_eq!(
            decide(seen, &Disk::Unreadable("x".into()), w),
            A(Allow::Unreadable)
        );
        let ifmatch = Intent::Write {
            content: Some(d(b"b")),
        };
        assert_eq!(
            decide(seen, &Disk::Present(d(b"b")), ifmatch),
            A(Allow::SameBytes)
        );
        assert_eq!(
            decide(seen, &Disk::Present(d(b"c")), ifmatch),
            Refuse(Conflict::Changed)
        );
        assert_eq!(
            decide(seen, &Disk::Missing, Intent::Delete),
            A(Allow::AlreadyGone)
        );
        assert_eq!(
            decide(seen, &Disk::Present(d(b"b")), Intent::Delete),
            Refuse(Conflict::Changed)
        );
        assert_eq!(
            decide(Some(Seen::Reread), &Disk::Present(d(b"a")), w),
            Refuse(Conflict::Reread)
        );
    }

    #[test]
    fn diffs_are_bounded_and_binary_is_named() {
        let p = RelPath::from_bytes(b"f.txt").unwrap();
        let seen: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let now: String = (0..100).map(|i| format!("LINE {i}\n")).collect();
        let text = unified_diff(&p, seen.as_bytes(), now.as_bytes(), Some(40));
        assert_eq!(text.lines().count(), 41);
        assert!(text.ends_with("… 163 more lines ('git stella diff f.txt' shows all of it)"));
        assert_eq!(
            unified_diff(&p, b"a\0", b"b", Some(40)),
            "(no diff shown: f.txt is a binary file)"
        );
    }
}
