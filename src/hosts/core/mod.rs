//! The host core: one hook call's view of a workspace and a session, shared by every host adapter.
//!
//! An adapter describes a tool call in the core's words — [`Op`]s: a read, a write (whole content,
//! edits, or unknown), a delete, a move, a shell command — and calls [`Hook::before`] on the
//! host's before-event and [`Hook::after`] on its after-event. Everything else is decided here,
//! once for every host: which paths are Stella's business, the private folders no agent writes,
//! the guard, what a read or a write records, the scratch state kept between the two events.

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::{Env, Error};
use crate::digest::Digest;
mod render;
mod scratch;
mod shell;

pub use render::landed;
pub(crate) use render::renders_as;
use render::{Base, REPLAY_MAX, may_render};
use scratch::{clean_key, stat_key};
pub(crate) use shell::shell_quote;

use crate::edit::Edit;
use crate::fsutil::PathIo;
use crate::guard::{self, Check, Disk, Intent};
use crate::ids::SessionId;
use crate::journal::{self, MapEdit, RootEdit, Seen};
use crate::paths::{self, RelPath};
use crate::session::Context;
use crate::session::record::{self, Replaced, Sight};
use crate::store::Store;
use crate::workspace::{self, Notice, Settings, Workspace};

/// What a tool call does to files, as far as the guard cares. Paths are as the host named them
/// (relative to the payload's folder, or absolute).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// A read. `shown` is the text the model got, when the host says and it is meant to be the
    /// whole file.
    Read {
        /// The file read.
        path: String,
        /// The text the model got.
        shown: Option<String>,
    },
    /// A write. `original` is the bytes the tool replaced, when the host reports them.
    Write {
        /// The file written.
        path: String,
        /// What the write puts in it.
        how: Writes,
        /// The bytes it replaced.
        original: Option<String>,
    },
    /// A delete.
    Delete {
        /// The file deleted.
        path: String,
    },
    /// A move; `how` says what lands at `to`, from what the session saw at `from`.
    Move {
        /// The file moved away.
        from: String,
        /// Where it lands.
        to: String,
        /// What lands there.
        how: Writes,
    },
    /// A shell command the host runs outside the shell guard, and what it printed (when the
    /// host says, after it ran).
    Shell {
        /// The command line, as the host runs it.
        command: String,
        /// What it printed, once it ran.
        output: Option<String>,
    },
}

/// What a write puts in its file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Writes {
    /// The whole content.
    Content(String),
    /// Replacements applied to the file as it was (the host's `original`, else what the session
    /// last saw).
    Edits(Vec<Edit>),
    /// Only the disk can say.
    Unknown,
}

/// One hook call's view of a workspace and a session.
pub struct Hook {
    pub(crate) root: PathBuf,
    pub(crate) cwd: PathBuf,
    pub(crate) session: SessionId,
    settings: Settings,
    context: Option<Context>,
    /// The host runs its shell commands under the shell guard, which records their reads and
    /// writes itself: shell ops need no watching here.
    shell_guard: bool,
    /// The program that runs a shell command under the guard, for a host whose hook routes the
    /// model's shell commands through it.
    guard_exe: Option<PathBuf>,
    /// What opening the workspace had to say (a copy, an adopted id), for stderr.
    pub(crate) notices: Vec<Notice>,
    /// What the adapter skipped and the person should hear about (a transcript not taken).
    pub(crate) warnings: Vec<String>,
    /// The host's name, for the scratch folder.
    agent: &'static str,
}

impl Hook {
    /// The hook for `cwd`, or `None` outside a git working tree (nothing to guard there).
    pub(crate) fn find(
        env: &Env,
        agent: &'static str,
        cwd: &Path,
        session: SessionId,
    ) -> Result<Option<Hook>, Error> {
        let root = match workspace::discover_root(&env.settings, cwd) {
            Ok(root) => root,
            Err(workspace::Error::NotARepository { .. } | workspace::Error::Bare { .. }) => {
                return Ok(None);
            }
            Err(e) => return Err(e.into()),
        };
        Ok(Some(Hook {
            root,
            cwd: cwd.to_owned(),
            session,
            settings: env.settings.clone(),
            context: None,
            shell_guard: env.shell_guard || env.guard_exe.is_some(),
            guard_exe: env.guard_exe.clone(),
            notices: Vec::new(),
            warnings: Vec::new(),
            agent,
        }))
    }

    /// `command`, the model's shell command, rewritten to run under the shell guard in this
    /// hook's session: `'<exe>' exec --host <host> --session '<id>' -- '<command>'`, which
    /// records what it reads and refuses a stale write the way the file tools are refused.
    /// `None` where this machine cannot guard a command: the hook then watches it instead.
    pub(crate) fn guarded_shell(&self, command: &str) -> Option<String> {
        let exe = self.guard_exe.as_ref()?;
        Some(format!(
            "{} exec --host {} --session {} -- {}",
            shell_quote(&exe.to_string_lossy()),
            self.agent,
            shell_quote(self.session.as_str()),
            shell_quote(command)
        ))
    }

    /// The workspace and its store, opened on first use (most calls about paths outside the
    /// workspace never need them).
    pub(crate) fn context(&mut self) -> Result<&Context, Error> {
        if self.context.is_none() {
            let (ws, notices) = Workspace::open(&self.settings, self.root.clone())?;
            let store = Store::open_or_init(&ws.store_dir())?;
            self.notices.extend(notices);
            self.context = Some(Context { ws, store });
        }
        Ok(self.context.as_ref().expect("opened above"))
    }

    /// Resolve a path the host named; `None` when it lies outside the workspace (or is the
    /// root itself, or cannot be resolved): nothing of Stella's business. `.git/` and `.stella/`
    /// are never recorded (a write there is denied: see `crate::paths::private_area`).
    pub fn resolve(&self, path: &str) -> Option<RelPath> {
        if path.is_empty() {
            return None;
        }
        paths::resolve_public(&self.root, &self.cwd, Path::new(path)).ok()
    }

    /// Where a write to `path` lands: `Err` ([`paths::Error::Private`]) when that is in `.git/`
    /// or `.stella/`, where it is denied outright (a write there on an agent's behalf could run
    /// code or switch the guard off); `None` outside the workspace, or when it cannot be resolved.
    fn target(&self, path: &str) -> Result<Option<RelPath>, paths::Error> {
        if path.is_empty() {
            return Ok(None);
        }
        match paths::resolve_public(&self.root, &self.cwd, Path::new(path)) {
            Ok(rel) => Ok(Some(rel)),
            Err(e @ paths::Error::Private { .. }) => Err(e),
            Err(_) => Ok(None),
        }
    }

    pub(crate) fn abs(&self, path: &RelPath) -> PathBuf {
        path.under(&self.root)
    }

    /// When `e` says the store is damaged, repair it (see [`crate::repair`]): the error that says
    /// what was lost. Any other error comes back as it is.
    pub(crate) fn repair_on_damage(&mut self, e: Error) -> Error {
        match e {
            Error::Session(found) if found.is_damage() => {
                let id = self.session.clone();
                match self.context() {
                    Ok(ctx) => Error::Session(ctx.repair_on_damage(Some(&id), found)),
                    Err(_) => Error::Session(found),
                }
            }
            other => other,
        }
    }

    /// Whether the session exists yet.
    pub(crate) fn session_exists(&mut self) -> Result<bool, Error> {
        let id = self.session.clone();
        Ok(self.context()?.journal().try_tip(&id)?.is_some())
    }

    /// Get or create the session.
    pub(crate) fn ensure_session(&mut self) -> Result<(), Error> {
        let id = self.session.clone();
        self.context()?.ensure_session(&id)?;
        Ok(())
    }

    // --- The two events of a tool call.

    /// The before-event of a tool call: the reason to deny it, or `None` to let it run.
    ///
    /// A write into a private folder is denied outright; every other write, delete and move is
    /// guarded, and all refusals are given together. Reads and shell commands note how things
    /// stand, for the after-event. `key` ties the two events together (the host's tool call id;
    /// hosts without one get a key per path).
    pub(crate) fn before(
        &mut self,
        ops: &[Op],
        key: Option<&str>,
    ) -> Result<Option<String>, Error> {
        // Each path a write names is resolved once: into a private folder denies the whole
        // call; outside the workspace is none of Stella's business.
        let mut checks = Vec::new();
        for op in ops {
            let wanted: Vec<(&String, Intent)> = match op {
                // Write's If-Match: bytes already on disk lose nothing when written again.
                Op::Write { path, how, .. } => {
                    let content = match how {
                        Writes::Content(c) => Some(Digest::of(c.as_bytes())),
                        _ => None,
                    };
                    vec![(path, Intent::Write { content })]
                }
                Op::Delete { path } => vec![(path, Intent::Delete)],
                Op::Move { from, to, .. } => vec![
                    (from, Intent::Delete),
                    (to, Intent::Write { content: None }),
                ],
                Op::Read { .. } | Op::Shell { .. } => Vec::new(),
            };
            for (raw, intent) in wanted {
                match self.target(raw) {
                    Err(private) => return Ok(Some(paths::private_refusal(&private))),
                    Ok(Some(rel)) => checks.push((rel, intent)),
                    Ok(None) => {}
                }
            }
        }
        for op in ops {
            match op {
                Op::Read { path, .. } => {
                    if let Some(rel) = self.resolve(path) {
                        self.before_read(&rel, key)?;
                    }
                }
                Op::Shell { command, .. } if !self.shell_guard => {
                    self.before_command(command, key)?;
                }
                _ => {}
            }
        }
        self.guard_calls(&checks, Some(key.unwrap_or("path")))
    }

    /// The after-event of a tool call that succeeded: record what the session saw and wrote.
    /// Returns what the model should be told (someone's change the tool overwrote), if anything.
    /// `tool` is the tool's name as the host calls it, for those messages.
    pub(crate) fn after(
        &mut self,
        ops: &[Op],
        key: Option<&str>,
        tool: &str,
    ) -> Result<Vec<String>, Error> {
        let mut told = Vec::new();
        for op in ops {
            match op {
                Op::Read { path, shown } => {
                    if let Some(rel) = self.resolve(path) {
                        self.after_read(&rel, shown.as_deref(), key)?;
                    }
                }
                Op::Shell { command, output } if !self.shell_guard => {
                    self.after_command(key)?;
                    if let Some(output) = output {
                        self.shell_reads(command, output)?;
                    }
                }
                Op::Shell { .. } => {}
                Op::Write {
                    path,
                    how,
                    original,
                } => {
                    if let Some(rel) = self.resolve(path) {
                        let overwritten =
                            self.after_write(&rel, how, original.as_deref(), key, tool)?;
                        // The bytes the host replaced, when it says (and applied its edits to).
                        let replaced = original.as_deref().map(|o| Digest::of(o.as_bytes()));
                        let edits = matches!(how, Writes::Edits(_));
                        // A write that raced another session's says so, naming it; that covers
                        // what the tool overwrote.
                        let raced = self.raced(&rel, key, tool, replaced, edits)?;
                        told.extend(raced.or(overwritten));
                    }
                }
                Op::Delete { path } => {
                    if let Some(rel) = self.resolve(path) {
                        let edit = self.disk_edit(&rel, Replaced::nothing())?;
                        self.record("wrote", std::slice::from_ref(&rel), vec![edit], Vec::new())?;
                        told.extend(self.raced(&rel, key, tool, None, false)?);
                    }
                }
                Op::Move { from, to, how } => {
                    self.after_move(from, to, how)?;
                    for path in [from, to] {
                        if let Some(rel) = self.resolve(path) {
                            told.extend(self.raced(&rel, key, tool, None, false)?);
                        }
                    }
                }
            }
        }
        Ok(told)
    }

    /// The scratch file noting this session's check of `path` in tool call `key`.
    fn check_note(&self, key: &str, path: &RelPath) -> PathBuf {
        let hex = Digest::of(path.to_lossy().as_bytes()).to_hex();
        self.scratch_file_for("check", &format!("{}-{}", clean_key(key), &hex[..32]))
    }

    /// After this session's write of `path` (just recorded): whether another session recorded
    /// a write of it after this session's check, so that one of the two writes replaced the
    /// other while the host wrote. The host makes the write itself, after the check, so the two
    /// cannot be one step; what Stella can do is never let it pass in silence. Both versions
    /// are in the journal; the answer names the other session, when it wrote, and how to get
    /// the replaced versions back. `replaced`: the bytes the host replaced, when it says
    /// (Claude Code's `originalFile`), which the tool's edits were applied to when `edits`: edits
    /// applied to the other session's bytes keep their change.
    ///
    /// When the check kept the bytes the tool was about to replace ([`crate::keep`]), the answer
    /// starts with the line that says so.
    fn raced(
        &mut self,
        path: &RelPath,
        key: Option<&str>,
        tool: &str,
        replaced: Option<Digest>,
        edits: bool,
    ) -> Result<Option<String>, Error> {
        let Some(note) = self.take_scratch(&self.check_note(key.unwrap_or("path"), path)) else {
            return Ok(None);
        };
        let note = String::from_utf8_lossy(&note);
        let mut fields = note.split(' ');
        let (Some(Ok(checked_at)), Some(found)) =
            (fields.next().map(str::parse::<i64>), fields.next())
        else {
            return Ok(None);
        };
        let raced = self.raced_since(path, tool, replaced, edits, checked_at, found)?;
        if fields.next() != Some("kept") {
            return Ok(raced);
        }
        let line = format!("Stella: {}", crate::keep::line(path));
        Ok(Some(match raced {
            Some(text) => format!("{line}\n\n{text}"),
            None => line,
        }))
    }

    /// [`Hook::raced`] once its check's note is read: checked at `checked_at`, finding `found`.
    fn raced_since(
        &mut self,
        path: &RelPath,
        tool: &str,
        replaced: Option<Digest>,
        edits: bool,
        checked_at: i64,
        found: &str,
    ) -> Result<Option<String>, Error> {
        let found = Digest::from_hex(found);
        let id = self.session.clone();
        let ctx = self.context()?;
        // Every Stella writer records its write before it lets go of the file's folder: once
        // this hold is taken, a write that landed before the host's is recorded.
        let folder = crate::fsutil::open_parent_beneath(&ctx.ws.root, path, false)
            .ok()
            .flatten();
        let _hold = folder
            .as_ref()
            .and_then(|d| crate::fsutil::FolderHold::take(d).ok());
        let journal = ctx.journal();
        let mine = match journal.lookup(&id, path)? {
            Some(journal::Entry {
                seen: Seen::Digest(d),
                ..
            }) => Some(d),
            _ => None,
        };
        // The writes of the path other sessions recorded from the second of the check on, of
        // bytes other than those the check found (a write the check already saw is no race) and
        // than this write's; the latest names the other session.
        let mut others: Vec<(SessionId, Digest, i64)> = Vec::new();
        for (session, _) in journal.sessions_moved_since(checked_at)? {
            if session == id {
                continue;
            }
            for (digest, at) in journal.written_since(&session, path, checked_at)? {
                if Some(digest) != found && Some(digest) != mine {
                    others.push((session.clone(), digest, at));
                }
            }
        }
        let Some((session, theirs, at)) = others.iter().max_by_key(|r| r.2).cloned() else {
            return Ok(None);
        };
        let theirs = Some(theirs);
        // Every version they wrote meanwhile (one may have written again since): the bytes the
        // host replaced first, when it says which.
        let mut gone: Vec<Digest> = replaced
            .filter(|d| Some(*d) != found && Some(*d) != mine)
            .into_iter()
            .collect();
        others.sort_by_key(|r| std::cmp::Reverse(r.2));
        for (_, d, _) in &others {
            if !gone.contains(d) {
                gone.push(*d);
            }
        }
        gone.truncate(16);
        let now = Disk::probe(&path.under(&ctx.ws.root)).digest();
        let when = guard::clock_now(at);
        let show = |d: Digest, name: &str| {
            format!(
                "  git stella recover '{path}' --show {} > '{path}.{name}'",
                journal::version_id(&d)
            )
        };
        let edited = replaced.filter(|_| edits);
        let text = if edited.is_some() && edited == theirs {
            format!(
                "Stella: session {session} wrote {path} at {when}, after this session checked it and before {tool} ran; {tool} applied its edit to their version, so their change is kept. Re-read {path} to see what they changed before changing it again."
            )
        } else if now.is_some() && now == mine {
            let back = match (gone.as_slice(), theirs) {
                ([], None) => format!("  (their write removed {path})"),
                ([], Some(d)) => show(d, "theirs"),
                (gone, _) => gone
                    .iter()
                    .enumerate()
                    .map(|(i, d)| match i {
                        0 => show(*d, "theirs"),
                        i => show(*d, &format!("theirs-{}", i + 1)),
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            };
            format!(
                "Stella: session {session} wrote {path} at {when}, after this session checked it and before {tool}'s write landed, so {tool} replaced their write (nobody waits on another's turn; this is reported, not refused). Both versions are kept in Stella's journal; get theirs back with:\n{back}\nthen merge what they changed. Their next write of {path} will be refused, naming this session."
            )
        } else if now.is_some() && now == theirs {
            let back = mine.map_or_else(
                || format!("  (this write removed {path})"),
                |d| show(d, "mine"),
            );
            // Written between the check and this write, and gone now: this write may have
            // replaced them before theirs replaced it.
            let before: Vec<String> = gone
                .iter()
                .filter(|d| Some(**d) != theirs)
                .enumerate()
                .map(|(i, d)| show(*d, &format!("theirs-{}", i + 1)))
                .collect();
            let also = if before.is_empty() {
                String::new()
            } else {
                format!(
                    "\nOther sessions wrote it between this session's check and {tool}'s write too, and {tool} may have replaced those versions:\n{}",
                    before.join("\n")
                )
            };
            format!(
                "Stella: session {session} wrote {path} at {when}, after this session checked it, and their write replaced {tool}'s. Both versions are kept in Stella's journal; get this session's back with:\n{back}{also}\nthen re-read {path} and redo the change against what is there now."
            )
        } else {
            let mut lines: Vec<String> = mine.into_iter().map(|d| show(d, "mine")).collect();
            lines.extend(
                gone.iter()
                    .enumerate()
                    .map(|(i, d)| show(*d, &format!("theirs-{}", i + 1))),
            );
            format!(
                "Stella: session {session} wrote {path} at {when}, while {tool} wrote it, and it has changed again since. Every version is kept in Stella's journal (`git stella recover '{path}'` lists them); the ones written meanwhile:\n{}\nRe-read {path} before changing it again.",
                lines.join("\n")
            )
        };
        Ok(Some(text))
    }

    /// Check each path for a tool call (`key`): every refusal's message together, or `None` when
    /// all are allowed. A session that does not exist yet tracks nothing, so everything is allowed
    /// without creating it. When all are allowed, each check is noted (when, and the bytes it
    /// found), so the after-event can tell whether another session's write came between the check
    /// and this one ([`Hook::raced`]).
    fn guard_calls(
        &mut self,
        checks: &[(RelPath, Intent)],
        key: Option<&str>,
    ) -> Result<Option<String>, Error> {
        if checks.is_empty() {
            return Ok(None);
        }
        let id = self.session.clone();
        let ctx = self.context()?;
        // A config nobody can read says nothing about what was meant: fail (and so, deny) first.
        ctx.config()?;
        let journal = ctx.journal();
        let mut refused = Vec::new();
        let mut allowed = Vec::new();
        let others = guard::Others::new(&journal, &id, &ctx.ws);
        // When the checks began, before any reads the disk: a write that lands after a check
        // read the file is recorded from this second on (commit times are whole seconds), so the
        // after-event finds it. Taken after the checks, a write landing in the same second as
        // the check, just before the clock ticked over, went unreported.
        let checked_at = gix::date::Time::now_utc().seconds;
        for (path, intent) in checks {
            let check = match guard::check(&others, path, *intent) {
                Ok(c) => c,
                // A session this workspace had, whose journal is gone, forgot what it knew: it
                // is started again knowing that, and judged as such.
                Err(journal::Error::UnknownSession { .. }) if ctx.resume_forgotten(&id)? => {
                    guard::check(&others, path, *intent)?
                }
                // A session not started yet tracks nothing: every change is blind.
                Err(journal::Error::UnknownSession { .. }) => {
                    let mut check = guard::check_entry(None, &ctx.ws.root, path, *intent);
                    check.respect(&others)?;
                    check
                }
                Err(e) => return Err(e.into()),
            };
            if check.refused() {
                refused.push(check);
            } else {
                allowed.push(check);
            }
        }
        // A tool call's blind change of bytes git's HEAD lacks: they are kept before the host
        // writes (too large to keep, it is refused), and the after-event says so.
        let mut kept = Vec::new();
        if refused.is_empty() && key.is_some() {
            let mut budget = crate::keep::COMMAND_MAX;
            for check in &mut allowed {
                match crate::keep::for_check(check, &others, &mut budget, &mut |_| true) {
                    Ok(Some(k)) => kept.push(k),
                    Ok(None) => {}
                    Err(e) => return Err(crate::session::kept_error(e, &check.path).into()),
                }
            }
            refused.extend(allowed.iter().filter(|c| c.refused()).cloned());
        }
        if refused.is_empty() {
            if !kept.is_empty() {
                let paths: Vec<RelPath> = kept.iter().map(|k| k.path.clone()).collect();
                let journal = self.context()?.journal();
                let mut root = Vec::new();
                for k in &kept {
                    root.extend(k.root_edits(&journal)?);
                }
                drop(journal);
                self.record("keep before a blind change:", &paths, Vec::new(), root)?;
            }
            if let Some(key) = key {
                let now = checked_at;
                for check in &allowed {
                    let disk = check.disk.digest().map_or("-".into(), |d| d.to_hex());
                    let file = self.check_note(key, &check.path);
                    let mark = if kept.iter().any(|k| k.path == check.path) {
                        " kept"
                    } else {
                        ""
                    };
                    self.put_note(&file, format!("{now} {disk}{mark}").as_bytes())?;
                }
            }
            return Ok(None);
        }
        // The refusal leaves a trace in the session (never at the cost of the answer).
        let _ = crate::refusals::note(&journal, &id, &refused);
        let texts: Vec<String> = refused.iter().map(|c| self.refusal(c)).collect();
        Ok(Some(texts.join("\n\n")))
    }

    /// The refusal text for a refused check.
    fn refusal(&self, check: &Check) -> String {
        let ctx = self.context.as_ref().expect("the guard opened the context");
        let mut text = guard::refusal_message(&ctx.journal(), &ctx.ws.root, check);
        if let Some(command) = self.changed_in_command(&check.path) {
            text.push_str(&format!(
                "\n{} changed while your shell command ran ({command}): that change may be the command's own or someone else's — re-read it.",
                check.path
            ));
        }
        text
    }

    /// What the session last recorded for `path`.
    pub(crate) fn entry(&mut self, path: &RelPath) -> Result<Option<journal::Entry>, Error> {
        let id = self.session.clone();
        match self.context()?.journal().lookup(&id, path) {
            Ok(e) => Ok(e),
            Err(journal::Error::UnknownSession { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Store bytes in the journal.
    pub(crate) fn blob(&mut self, bytes: &[u8]) -> Result<gix::ObjectId, Error> {
        Ok(self.context()?.journal().write_blob(bytes)?)
    }

    /// The edit recording that the session saw (or wrote) `bytes` at `path`.
    pub(crate) fn saw(
        &mut self,
        path: &RelPath,
        bytes: &[u8],
        sight: Sight,
    ) -> Result<MapEdit, Error> {
        let abs = self.abs(path);
        Ok(self.context()?.seen_edit(path, &abs, bytes, sight)?)
    }

    /// Record one step (creating the session if needed), and forget any shell-command note
    /// about the paths: the session has now seen them itself.
    pub(crate) fn record(
        &mut self,
        verb: &str,
        paths: &[RelPath],
        map: Vec<MapEdit>,
        root: Vec<RootEdit>,
    ) -> Result<(), Error> {
        self.ensure_session()?;
        let id = self.session.clone();
        let ctx = self.context()?;
        if paths.is_empty() {
            let step = journal::Step {
                summary: verb.to_owned(),
                map,
                root,
            };
            ctx.journal().record(&id, &step)?;
        } else {
            ctx.session(&id).record(verb, paths, map, root)?;
        }
        self.forget_command_notes(paths);
        Ok(())
    }

    // --- Reads.

    /// Before a read: remember the disk's digest, to tell after the read whether the file
    /// changed while it was read.
    fn before_read(&self, path: &RelPath, key: Option<&str>) -> Result<(), Error> {
        let text = match Disk::probe(&self.abs(path)) {
            Disk::Present(d) => d.to_hex(),
            Disk::Missing | Disk::Unreadable(_) => "-".into(),
        };
        self.put_scratch(&self.scratch_file("read", key, path), text.as_bytes())
    }

    /// After a read: record what the session saw (SPEC §7). `shown` is the text the host
    /// showed the model as the whole file, when it says; it counts when it is exactly the disk's
    /// bytes, or the disk's bytes rendered as text (line endings, invalid UTF-8, a BOM).
    /// Otherwise the disk's bytes count when they did not change since the before-event; if
    /// they did, or no before-event was noted, the model may have seen another version, and the
    /// next write needs a re-read.
    fn after_read(
        &mut self,
        path: &RelPath,
        shown: Option<&str>,
        key: Option<&str>,
    ) -> Result<(), Error> {
        let before = self
            .take_scratch(&self.scratch_file("read", key, path))
            .and_then(|b| Digest::from_hex(String::from_utf8_lossy(&b).trim()));
        let abs = self.abs(path);
        // Gone or unreadable: the read failed or raced a delete; nothing to record.
        let Ok(meta) = std::fs::metadata(&abs) else {
            return Ok(());
        };
        // The text shown is compared with the disk only when their sizes allow it: the disk is
        // then read whole, within a few times what the host sent. Otherwise the disk's bytes go
        // into the store as a read would store them (a large file streams), and count when
        // they did not change since the before-event.
        let edit = match shown.filter(|s| may_render(meta.len(), s)) {
            Some(shown) => {
                let Ok(disk) = crate::fsutil::read_regular(&abs) else {
                    return Ok(());
                };
                let now = Digest::of(&disk);
                if before == Some(now) || renders_as(&disk, shown) {
                    self.saw(path, &disk, Sight::Read)?
                } else {
                    record::read_unsure(path, now)
                }
            }
            None => match self.context()?.file_edit(path, Sight::Read, None) {
                Ok(Some(edit)) => match edit {
                    MapEdit::Put {
                        seen: Seen::Digest(now),
                        ..
                    } if before != Some(now) => record::read_unsure(path, now),
                    edit => edit,
                },
                Ok(None) | Err(crate::session::Error::Io { .. }) => return Ok(()),
                Err(e) => return Err(e.into()),
            },
        };
        self.record("read", std::slice::from_ref(path), vec![edit], Vec::new())
    }

    /// A read reported before the model gets `content` (no after-event follows). The content
    /// equals the disk, or is the disk rendered as text: the disk is recorded. Otherwise the
    /// file changed after the host read it: what the model saw is recorded, and the next write
    /// is refused until it re-reads.
    pub(crate) fn shown(&mut self, raw: &str, content: &str) -> Result<(), Error> {
        let Some(path) = self.resolve(raw) else {
            return Ok(());
        };
        let abs = self.abs(&path);
        let disk = std::fs::metadata(&abs)
            .is_ok_and(|m| may_render(m.len(), content))
            .then(|| crate::fsutil::read_regular(&abs).ok())
            .flatten();
        let bytes = match disk {
            Some(d) if renders_as(&d, content) => d,
            _ => content.as_bytes().to_vec(),
        };
        let edit = self.saw(&path, &bytes, Sight::Read)?;
        self.record("read", std::slice::from_ref(&path), vec![edit], Vec::new())
    }

    // --- Writes.

    /// The text the session last saw, by its map entry, as the base an edit is replayed on.
    fn seen_text(&mut self, entry: Option<&journal::Entry>) -> Result<Base, Error> {
        let Some((blob, _)) = entry.and_then(|e| e.bytes) else {
            return Ok(Base::Unseen);
        };
        let journal = self.context()?.journal();
        if journal.blob_size(blob)? > REPLAY_MAX {
            return Ok(Base::TooLarge);
        }
        Ok(String::from_utf8(journal.blob(blob)?).map_or(Base::Unseen, Base::Text))
    }

    /// What a write left at `path`, to record: the bytes the tool meant to write — never the
    /// disk's when they are other content, so a change made right after the tool stays visible.
    /// A re-read when the tool's result cannot be known from what the session saw.
    fn written_edit(
        &mut self,
        path: &RelPath,
        how: &Writes,
        base: &Base,
        replaced: Replaced,
    ) -> Result<MapEdit, Error> {
        let candidates = match how {
            Writes::Content(text) => vec![text.clone()],
            Writes::Edits(edits) => match base {
                Base::Text(base) => match crate::edit::replay(base, edits) {
                    Some(c) => c,
                    // The session saw the file, yet the edit does not apply to what it saw:
                    // it no longer knows what it wrote, so the next write needs a re-read.
                    None => return Ok(record::wrote_unsure(path, replaced)),
                },
                // Too large to replay the edit on in memory: a re-read, as above.
                Base::TooLarge => return Ok(record::wrote_unsure(path, replaced)),
                // The session's first sight of the file is its own edit: the disk, like a
                // blind write.
                Base::Unseen => return self.disk_edit(path, replaced),
            },
            Writes::Unknown => return self.disk_edit(path, replaced),
        };
        // The disk is compared only when its size allows it to be one of the texts.
        let abs = self.abs(path);
        let disk = std::fs::metadata(&abs)
            .is_ok_and(|m| candidates.iter().any(|c| may_render(m.len(), c)))
            .then(|| crate::fsutil::read_regular(&abs).ok())
            .flatten();
        let bytes = landed(&candidates, disk.as_deref());
        self.saw(path, &bytes, Sight::Wrote(replaced))
    }

    /// The disk's bytes at `path` as written by the session (stored as a read stores them: a
    /// large file streams), or its removal when it is gone.
    fn disk_edit(&mut self, path: &RelPath, replaced: Replaced) -> Result<MapEdit, Error> {
        let sight = Sight::Wrote(replaced);
        Ok(match self.context()?.file_edit(path, sight, None)? {
            Some(edit) => edit,
            None => record::deleted(path),
        })
    }

    /// Record a write; keep any bytes the tool overwrote that the session never saw, and say
    /// so to the model.
    fn after_write(
        &mut self,
        path: &RelPath,
        how: &Writes,
        original: Option<&str>,
        key: Option<&str>,
        tool: &str,
    ) -> Result<Option<String>, Error> {
        let known = self.entry(path)?;
        let base = match original {
            Some(o) => Base::Text(o.to_owned()),
            None => self.seen_text(known.as_ref())?,
        };
        // The session's first sight of the file was this write: keep what it replaced, for undo.
        let replaced = Replaced {
            digest: original.map(|o| Digest::of(o.as_bytes())),
            kept: match (original, &known) {
                (Some(original), None) => Some(self.blob(original.as_bytes())?),
                _ => None,
            },
        };
        let edit = self.written_edit(path, how, &base, replaced)?;
        let mut root = Vec::new();
        let mut told = None;
        if let (Some(original), Some(entry)) = (original, known)
            && let Some(blob) = self.overwritten(&entry, original)?
        {
            let call = key.map_or_else(|| Digest::of(original.as_bytes()).to_hex(), clean_key);
            let journal = self.context()?.journal();
            root.extend(crate::keep::overwritten(&journal, path, &call, blob)?);
            let version = journal::version_id(&Digest::of(original.as_bytes()));
            told = Some(format!(
                "Stella: {path} changed on disk after this session last read it and before {tool} ran (someone wrote to it in between, for example while a permission prompt waited), so {tool} overwrote their change. Their bytes are kept in Stella's journal; get them back with:\n  git stella recover '{path}' --show {version} > '{path}.overwritten'\nthen compare and merge what they changed."
            ));
        }
        self.record("wrote", std::slice::from_ref(path), vec![edit], root)?;
        Ok(told)
    }

    /// When `original` (the bytes a tool replaced) is not what the session last saw, store it
    /// and return its blob: someone's change was overwritten unseen.
    fn overwritten(
        &mut self,
        entry: &journal::Entry,
        original: &str,
    ) -> Result<Option<gix::ObjectId>, Error> {
        let Seen::Digest(seen) = entry.seen else {
            return Ok(None);
        };
        if seen == Digest::of(original.as_bytes()) {
            return Ok(None);
        }
        if let Some((blob, _)) = entry.bytes {
            let journal = self.context()?.journal();
            if may_render(journal.blob_size(blob)?, original)
                && renders_as(&journal.blob(blob)?, original)
            {
                return Ok(None);
            }
        }
        Ok(Some(self.blob(original.as_bytes())?))
    }

    /// Record a move: the source is gone, the destination holds what `how` says, computed from
    /// what the session saw at the source.
    fn after_move(&mut self, from: &str, to: &str, how: &Writes) -> Result<(), Error> {
        let mut edits = Vec::new();
        let mut paths = Vec::new();
        let from = self.resolve(from);
        let base = match &from {
            Some(from) => {
                let seen = self.entry(from)?;
                self.seen_text(seen.as_ref())?
            }
            None => Base::Unseen,
        };
        match (from, self.resolve(to)) {
            // What the session knew of the source goes with it; the tool's result at the
            // destination is then its write.
            (Some(from), Some(to)) => {
                edits.push(record::moved(&from, &to));
                edits.push(self.written_edit(&to, how, &base, Replaced::nothing())?);
                paths.extend([from, to]);
            }
            (Some(from), None) => {
                edits.push(record::deleted(&from));
                paths.push(from);
            }
            (None, Some(to)) => {
                edits.push(self.written_edit(&to, how, &base, Replaced::nothing())?);
                paths.push(to);
            }
            (None, None) => {}
        }
        if !edits.is_empty() {
            self.record("moved", &paths, edits, Vec::new())?;
        }
        Ok(())
    }

    // --- Shell commands outside the shell guard.
}

#[cfg(test)]
mod tests {
    use super::shell::{plain_read, unnumbered};
    use super::*;

    #[test]
    fn plain_reads_are_known_by_their_words() {
        let files = |c: &str| plain_read(c).map(|(p, f)| (p, f.join(" ")));
        let some = |p: &str, f: &str| Some((p.to_owned(), f.to_owned()));
        assert_eq!(files("cat notes.txt"), some("cat", "notes.txt"));
        assert_eq!(files("cat 'a b.txt' c"), some("cat", "a b.txt c"));
        assert_eq!(files("head -n 200 src/lib.rs"), some("head", "src/lib.rs"));
        assert_eq!(files("tail -50 f"), some("tail", "f"));
        assert_eq!(files("sed -n '1,200p' f"), some("sed", "f"));
        assert_eq!(files("sed -n 1,$p f"), None, "a $ is never taken");
        assert_eq!(files("nl -ba f"), None);
        assert_eq!(files("nl f"), some("nl", "f"));
        for other in [
            "cat f | head",
            "cat f > g",
            "cat $(ls)",
            "cat *.rs",
            "cat",
            "sed -i s/a/b/ f",
            "grep x f",
            "cat -A f",
            "echo hi; cat f",
        ] {
            assert_eq!(files(other), None, "{other}");
        }
        assert_eq!(unnumbered("     1\ta\n       \n     2\tb\n"), "a\n\nb\n");
    }

    #[test]
    fn landed_takes_the_disk_only_when_it_is_the_tools_own_result() {
        let c = |s: &str| vec![s.to_owned()];
        // As written, with CRLF line endings, with a BOM, with or without a final newline.
        assert_eq!(landed(&c("a\nb\n"), Some(b"a\nb\n")), b"a\nb\n");
        assert_eq!(landed(&c("a\nb\n"), Some(b"a\r\nb\r\n")), b"a\r\nb\r\n");
        assert_eq!(
            landed(&c("a\nb\n"), Some(b"\xef\xbb\xbfa\nb\n")),
            b"\xef\xbb\xbfa\nb\n"
        );
        assert_eq!(landed(&c("a\nb"), Some(b"a\nb\n")), b"a\nb\n");
        assert_eq!(landed(&c("a\nb\n"), Some(b"a\nb")), b"a\nb");
        // Other content is never absorbed: the tool's text is recorded.
        assert_eq!(landed(&c("a\nb\n"), Some(b"a\nb\nc\n")), b"a\nb\n");
        assert_eq!(landed(&c("a\n"), None), b"a\n");
        // Of several candidates, the one on disk.
        let two = vec!["one\nthree\n".to_owned(), "one\n\nthree\n".to_owned()];
        assert_eq!(landed(&two, Some(b"one\n\nthree\n")), b"one\n\nthree\n");
        assert_eq!(landed(&two, Some(b"other\n")), b"one\nthree\n");
    }

    #[test]
    fn rendering_ignores_line_endings_and_invalid_utf8_only() {
        assert!(renders_as(b"a\r\nb\r\n", "a\nb\n"));
        assert!(renders_as(b"a\xffb\n", "a\u{fffd}b\n"));
        assert!(renders_as(b"\xef\xbb\xbfx\n", "x\n"));
        assert!(!renders_as(b"a\nb\n", "a\nB\n"));
    }
}
