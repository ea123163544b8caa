//! Hook adapters: the guard wired into agent hosts that run a command before and after each tool
//! (SPEC §7), and the installers that put those commands into the hosts' settings.
//!
//! Each host gets a module (`claude_code`, `codex`, `gemini`, `cursor`) that turns its payload into calls on a [`Hook`]: the
//! agent-independent part — which workspace, which session, the guard, recording what the
//! session saw, the scratch state kept between a tool's before- and after-events — and answers
//! with an [`Answer`]: the bytes for stdout, the exit status and the text for stderr. The
//! library never prints: the CLI writes the answer out.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use crate::digest::Digest;
use crate::guard::{self, Check, Disk, Intent};
use crate::ids::SessionId;
use crate::journal::{self, MapEdit, Seen};
use crate::paths::{self, RelPath};
use crate::session::{self, Context};
use crate::store::Store;
use crate::turn::TurnError;
use crate::workspace::{self, Notice, Settings, Workspace};

pub mod claude_code;
pub mod codex;
pub mod common;
pub mod cursor;
pub mod gemini;
pub mod install;

/// What a hook call answers: stdout bytes, exit status, and text for stderr.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub stdout: Vec<u8>,
    pub code: u8,
    pub stderr: String,
}

impl Answer {
    /// Exit 0, nothing said: allowed, recorded, or nothing to do.
    pub fn nothing() -> Answer {
        Answer {
            stdout: Vec::new(),
            code: 0,
            stderr: String::new(),
        }
    }

    /// Exit 0 with one line of JSON on stdout.
    pub fn json(value: &serde_json::Value) -> Answer {
        let mut stdout = serde_json::to_vec(value).expect("a JSON value serialises");
        stdout.push(b'\n');
        Answer {
            stdout,
            code: 0,
            stderr: String::new(),
        }
    }

    /// Exit 1 with the error on stderr: the host reports it and lets the tool run.
    pub fn failed(error: &(dyn std::error::Error + 'static)) -> Answer {
        Answer {
            stdout: Vec::new(),
            code: 1,
            stderr: error_text(error),
        }
    }
}

/// An error and its causes in git's voice, one `caused by:` line each.
pub fn error_text(e: &(dyn std::error::Error + 'static)) -> String {
    format!("stella: {}\n", describe(e))
}

/// An error and its causes as `error: …` and `caused by: …` lines, without a final newline.
pub fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    crate::report::Report::of(e).render()
}

/// What the model and the person are told when a write is denied because the hook itself failed
/// in a project that chose fail-closed; `error` is [`error_text`].
pub fn fail_closed_reason(error: &str) -> String {
    format!(
        "Stella could not check this call, and this project refuses writes when the check fails (fail-closed). Nothing was written.\n{}",
        error.trim_end()
    )
}

/// The error returned by hook handling.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("the hook payload is not valid JSON")]
    BadPayload(#[source] serde_json::Error),
    #[error("the hook payload has no '{field}'")]
    MissingField { field: &'static str },
    #[error("the hook payload's '{field}' is not usable: {why}")]
    BadField { field: &'static str, why: String },
    #[error(transparent)]
    Session(#[from] session::Error),
    #[error(transparent)]
    Turn(#[from] TurnError),
    #[error("'{}' is not a valid Stella config", .path.display())]
    Config {
        path: PathBuf,
        #[source]
        source: toml::de::Error,
    },
    #[error("could not {op} '{}'", .path.display())]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("the hook did not finish within its time budget of {0:?}; nothing more was done")]
    TimedOut(Duration),
    #[error("the hook stopped unexpectedly")]
    Panicked,
}

impl From<journal::Error> for Error {
    fn from(e: journal::Error) -> Self {
        Error::Session(e.into())
    }
}

impl From<workspace::Error> for Error {
    fn from(e: workspace::Error) -> Self {
        Error::Session(e.into())
    }
}

impl From<crate::store::Error> for Error {
    fn from(e: crate::store::Error) -> Self {
        Error::Session(e.into())
    }
}

/// What a hook call gets from the edge: where Stella keeps its data and the process's own folder
/// (used when the payload names none).
#[derive(Clone, Debug)]
pub struct Env {
    pub settings: Settings,
    pub cwd: PathBuf,
    /// The host runs its shell commands under the shell guard (`git stella exec`), which
    /// records what they read and wrote: the hook need not watch them.
    pub shell_guard: bool,
}

/// Run `work` with a bounded time budget: a hook runs before every edit, and a host waiting on a
/// hung hook is worse than a host told the hook failed.
///
/// `work` runs on the calling thread; a watchdog thread that only sleeps calls `on_timeout` when
/// the budget runs out first. `on_timeout` runs on the watchdog while `work` may still be going,
/// so at the edge it answers the host and ends the process (which ends the work and releases any
/// lock it holds). The watchdog does not outlive a `work` that finished in time: it is told to
/// stand down, and a late `on_timeout` is never called after `within_budget` returned. The
/// worker is the calling thread rather than a new one because a new thread gets its own heap
/// arena, which costs a hook more page faults than its whole decision.
pub fn within_budget(
    budget: Duration,
    work: impl FnOnce() -> Answer,
    on_timeout: impl FnOnce(Error) + Send + 'static,
) -> Answer {
    let (done, finished) = mpsc::channel::<()>();
    // The default stack: `on_timeout` may read the project's config through gix, and a stack's
    // untouched pages cost nothing.
    let watchdog = std::thread::Builder::new()
        .name("stella-budget".into())
        .spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(budget) {
                on_timeout(Error::TimedOut(budget));
            }
        });
    let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
        .unwrap_or_else(|_| Answer::failed(&Error::Panicked));
    let _ = done.send(());
    if let Ok(w) = watchdog {
        let _ = w.join();
    }
    answer
}

/// What happens when the hook itself fails: let the tool run (the default, so a broken Stella
/// never stops work) or deny it (fail-closed, chosen by the project).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnError {
    Allow,
    Deny,
}

/// `.stella/config.toml`, the project's own choices for hooks.
///
/// ```toml
/// [hooks]
/// on-error = "deny"              # fail closed: deny a write when the hook itself fails
///
/// [[hooks.tools]]
/// name = "mcp__docs__save_page"  # a tool name; '*' matches any run of characters
/// path = "target"                # the field of the tool's input holding the file path
/// access = "write"               # "read" or "write"
/// content = "body"               # optional: the field holding the bytes a write writes
/// ```
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub hooks: HooksConfig,
}

#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct HooksConfig {
    #[serde(default)]
    pub on_error: Option<OnErrorSetting>,
    #[serde(default)]
    pub tools: Vec<ToolMapping>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnErrorSetting {
    Allow,
    Deny,
}

/// A tool the adapter does not know, mapped by the project to the field holding its path.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolMapping {
    pub name: String,
    pub path: String,
    pub access: Access,
    #[serde(default)]
    pub content: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    Read,
    Write,
}

/// Where the project's config lives.
pub fn config_path(root: &Path) -> PathBuf {
    root.join(".stella").join("config.toml")
}

impl Config {
    /// Read `.stella/config.toml`; a missing file is the default config.
    pub fn load(root: &Path) -> Result<Config, Error> {
        let path = config_path(root);
        let Some(bytes) = crate::fsutil::read_optional(&path).map_err(|source| Error::Io {
            op: "read",
            path: path.clone(),
            source,
        })?
        else {
            return Ok(Config::default());
        };
        let text = String::from_utf8_lossy(&bytes);
        toml::from_str(&text).map_err(|source| Error::Config { path, source })
    }

    /// The mapping for `tool`, the first that matches.
    pub fn tool(&self, tool: &str) -> Option<&ToolMapping> {
        self.hooks.tools.iter().find(|t| glob_match(&t.name, tool))
    }
}

/// Whether the project chose fail-closed: `.stella/config.toml`'s `hooks.on-error`, else
/// `git config stella.hookOnError`. Read only when something failed, off the hot path. Both are
/// read strictly: `Err` says what is wrong with them, and a caller treats it as fail-closed — an
/// invalid config cannot say what was meant, so it never silently allows.
pub fn on_error(settings: &Settings, cwd: &Path) -> Result<OnError, String> {
    let Ok(repo) = workspace::open_user_repo(settings.git_env_overrides, cwd) else {
        return Ok(OnError::Allow);
    };
    let from_git = git_on_error(&repo)?;
    let from_file = match repo.workdir() {
        Some(root) => {
            Config::load(root)
                .map_err(|e| error_text(&e).trim_end().to_owned())?
                .hooks
                .on_error
        }
        None => None,
    };
    Ok(match from_file.or(from_git) {
        Some(OnErrorSetting::Deny) => OnError::Deny,
        Some(OnErrorSetting::Allow) | None => OnError::Allow,
    })
}

/// The `stella.*` git config, read strictly: `stella.hookOnError` (`allow` or `deny`) is its only
/// key.
pub fn git_on_error(repo: &gix::Repository) -> Result<Option<OnErrorSetting>, String> {
    let config = repo.config_snapshot();
    if let Some(sections) = config.plumbing().sections_by_name("stella") {
        for section in sections {
            let sub = section.header().subsection_name().map(|s| s.to_string());
            for name in section.value_names() {
                if sub.is_none() && name.eq_ignore_ascii_case("fsync") {
                    return Err(
                        "git config stella.fsync is read from the journal store's own config, not this repository's: git config --file \"$(git stella store-path)/config\" stella.fsync false".into(),
                    );
                }
                if sub.is_some() || !name.eq_ignore_ascii_case("hookOnError") {
                    let full = match &sub {
                        Some(s) => format!("stella.{s}.{name}"),
                        None => format!("stella.{name}"),
                    };
                    return Err(format!(
                        "git config has an unknown key '{full}' (Stella reads only stella.hookOnError)"
                    ));
                }
            }
        }
    }
    match config.string("stella.hookOnError") {
        None => Ok(None),
        Some(v) if v.eq_ignore_ascii_case(b"deny".as_slice()) => Ok(Some(OnErrorSetting::Deny)),
        Some(v) if v.eq_ignore_ascii_case(b"allow".as_slice()) => Ok(Some(OnErrorSetting::Allow)),
        Some(v) => Err(format!(
            "git config stella.hookOnError is '{v}'; it must be 'allow' or 'deny'"
        )),
    }
}

/// The deny reason when the hook failed and fail-closed is on (`Ok`), or Stella's config is
/// invalid (`Err`); `None`: let the tool run.
pub fn deny_reason(settings: &Settings, cwd: &Path, error: &str) -> Option<String> {
    match on_error(settings, cwd) {
        Ok(OnError::Allow) => None,
        Ok(OnError::Deny) => Some(fail_closed_reason(error)),
        Err(why) => Some(format!(
            "Stella's configuration is invalid, so it cannot tell what this project wants when a check fails; it refuses writes until that is fixed. Nothing was written.\n{why}"
        )),
    }
}

/// A `*`-glob match over the whole name.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

/// The Stella session of a host session: named after the host's id, and a subagent (which can
/// clobber its parent's work) gets a session of its own, `<host id>.agent-<agent id>`. A name
/// that is not a valid session id is replaced by a digest of it (see [`common::session_for`]),
/// so two different host ids never share a session.
pub fn session_name(host_id: &str, agent_id: Option<&str>) -> Result<SessionId, Error> {
    if host_id.is_empty() {
        return Err(Error::BadField {
            field: "session_id",
            why: "it is empty".into(),
        });
    }
    let name = match agent_id {
        Some(agent) if !agent.is_empty() => format!("{host_id}.agent-{agent}"),
        _ => host_id.to_owned(),
    };
    Ok(common::session_for(&name))
}

/// One hook call's view of a workspace and a session: the agent-independent part of every
/// adapter.
pub struct Hook {
    pub root: PathBuf,
    pub cwd: PathBuf,
    pub session: SessionId,
    settings: Settings,
    context: Option<Context>,
    /// What opening the workspace had to say (a copy, an adopted id), for stderr.
    pub notices: Vec<Notice>,
    /// What the adapter skipped and the person should hear about (a transcript not taken).
    pub warnings: Vec<String>,
    /// The agent's name, for the scratch folder.
    agent: &'static str,
}

impl Hook {
    /// The hook for `cwd`, or `None` outside a git working tree (nothing to guard there).
    pub fn find(
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
            notices: Vec::new(),
            warnings: Vec::new(),
            agent,
        }))
    }

    /// The workspace and its store, opened on first use (most calls about paths outside the
    /// workspace never need them).
    pub fn context(&mut self) -> Result<&Context, Error> {
        if self.context.is_none() {
            let (ws, notices) = Workspace::open(&self.settings, self.root.clone())?;
            let store = Store::open_or_init(&ws.store_dir())?;
            self.notices.extend(notices);
            self.context = Some(Context { ws, store });
        }
        Ok(self.context.as_ref().expect("opened above"))
    }

    /// Resolve a path the host named; `None` when it lies outside the workspace (or is the
    /// root itself, or cannot be resolved): nothing of Stella's business.
    pub fn resolve(&self, path: &str) -> Option<RelPath> {
        // `.git/` and `.stella/` are never recorded (a write there is denied: see `private`).
        paths::resolve_public(&self.root, &self.cwd, Path::new(path)).ok()
    }

    /// Why a write to `path` is denied outright: it lies in `.git/` or `.stella/`, where a write
    /// on an agent's behalf could run code or switch the guard off.
    pub fn private(&self, path: &str) -> Option<String> {
        match paths::resolve_public(&self.root, &self.cwd, Path::new(path)) {
            Err(e @ paths::Error::Private { .. }) => Some(format!(
                "{e}: writing there could run code (git hooks, git config) or switch Stella's guard off. Nothing was written."
            )),
            _ => None,
        }
    }

    pub fn abs(&self, path: &RelPath) -> PathBuf {
        path.under(&self.root)
    }

    /// Whether the session exists yet.
    pub fn session_exists(&mut self) -> Result<bool, Error> {
        let id = self.session.clone();
        Ok(self.context()?.journal().try_tip(&id)?.is_some())
    }

    /// Get or create the session.
    pub fn ensure_session(&mut self) -> Result<(), Error> {
        let id = self.session.clone();
        self.context()?.ensure_session(&id)?;
        Ok(())
    }

    /// The guard, before an update or delete. A session that does not exist yet tracks nothing,
    /// so everything is allowed without creating it.
    pub fn guard(&mut self, path: &RelPath, intent: Intent) -> Result<Check, Error> {
        let id = self.session.clone();
        let ctx = self.context()?;
        // A config nobody can read says nothing about what was meant: fail (and so, deny) first.
        Config::load(&ctx.ws.root)?;
        let journal = ctx.journal();
        match guard::check(&journal, &id, &ctx.ws.root, path, intent) {
            Ok(c) => Ok(c),
            Err(journal::Error::UnknownSession { .. }) => {
                Ok(guard::check_entry(None, &ctx.ws.root, path, intent))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The refusal text for a refused check.
    pub fn refusal(&mut self, check: &Check) -> Result<String, Error> {
        let id = self.session.clone();
        let ctx = self.context()?;
        // The refusal leaves a trace in the session (never at the cost of the answer).
        let _ = crate::refusals::note(&ctx.journal(), &id, std::slice::from_ref(check));
        let mut text = guard::refusal_message(&ctx.journal(), &ctx.ws.root, check);
        if let Some(command) = self.changed_in_command(&check.path) {
            text.push_str(&format!(
                "\n{} changed while your shell command ran ({command}): that change may be the command's own or someone else's — re-read it.",
                check.path
            ));
        }
        Ok(text)
    }

    /// What the session last recorded for `path`.
    pub fn entry(&mut self, path: &RelPath) -> Result<Option<journal::Entry>, Error> {
        let id = self.session.clone();
        match self.context()?.journal().lookup(&id, path) {
            Ok(e) => Ok(e),
            Err(journal::Error::UnknownSession { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Store bytes in the journal.
    pub fn blob(&mut self, bytes: &[u8]) -> Result<gix::ObjectId, Error> {
        Ok(self.context()?.journal().write_blob(bytes)?)
    }

    /// The edit recording that the session saw (or wrote) `bytes` at `path`.
    pub fn saw(
        &mut self,
        path: &RelPath,
        bytes: &[u8],
        first_origin: Option<Digest>,
        wrote: bool,
    ) -> Result<MapEdit, Error> {
        let blob = self.blob(bytes)?;
        let exec = is_exec(&self.abs(path));
        Ok(MapEdit::Put {
            path: path.clone(),
            seen: Seen::Digest(Digest::of(bytes)),
            bytes: Some((blob, exec)),
            first_origin,
            wrote,
            origin_bytes: None,
        })
    }

    /// Record one step (creating the session if needed), and forget any shell-command note
    /// about the paths: the session has now seen them itself.
    pub fn record(
        &mut self,
        verb: &str,
        paths: &[RelPath],
        map: Vec<MapEdit>,
        root: Vec<journal::RootEdit>,
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
            ctx.record(&id, verb, paths, map, root)?;
        }
        self.forget_command_notes(paths);
        Ok(())
    }

    // --- Scratch state between a tool's before- and after-event.
    //
    // It lives in `.stella/private/hooks/<agent>/<session>/`, not in the journal: it only means
    // something between the two events of one tool call in one live host process. If the host
    // dies in between, the after-event never comes and there is nothing to finish; what must
    // survive a crash (what the session saw) is recorded in the journal by the after-event.
    // Keeping it out of the journal also keeps a Read to one step, not two.

    fn scratch_dir(&self) -> PathBuf {
        self.root
            .join(".stella/private/hooks")
            .join(self.agent)
            .join(self.session.as_str())
    }

    fn scratch_file(&self, kind: &str, tool_use_id: &str) -> PathBuf {
        let clean: String = tool_use_id
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .take(100)
            .collect();
        self.scratch_dir().join(format!("{kind}-{clean}"))
    }

    fn put_scratch(&self, file: &Path, bytes: &[u8]) -> Result<(), Error> {
        let dir = file.parent().expect("a scratch file has a folder");
        crate::fsutil::create_private_dir(dir, 0o700).map_err(|source| Error::Io {
            op: "create",
            path: dir.to_owned(),
            source,
        })?;
        crate::fsutil::write_atomic(file, bytes, 0o600).map_err(|source| Error::Io {
            op: "write",
            path: file.to_owned(),
            source,
        })
    }

    /// Take (read and delete) a scratch file.
    fn take_scratch(&self, file: &Path) -> Option<Vec<u8>> {
        let bytes = crate::fsutil::read_optional(file).ok().flatten();
        let _ = std::fs::remove_file(file);
        bytes
    }

    /// Before a read: remember the disk's digest, to tell after the read whether the file
    /// changed while it was read.
    pub fn before_read(&self, path: &RelPath, tool_use_id: &str) -> Result<(), Error> {
        let text = match Disk::probe(&self.abs(path)) {
            Disk::Present(d) => d.to_hex(),
            Disk::Missing | Disk::Unreadable(_) => "-".into(),
        };
        self.put_scratch(&self.scratch_file("read", tool_use_id), text.as_bytes())
    }

    /// The digest remembered by [`Hook::before_read`], taken once.
    pub fn digest_before_read(&self, tool_use_id: &str) -> Option<Digest> {
        let bytes = self.take_scratch(&self.scratch_file("read", tool_use_id))?;
        Digest::from_hex(String::from_utf8_lossy(&bytes).trim())
    }

    /// After a read: record what the session saw (SPEC §7). `rendered` is the text the host
    /// showed the model, when it says; it counts when it is exactly the disk's bytes, or the
    /// disk's bytes rendered as text (line endings, invalid UTF-8, a BOM). Otherwise the disk's
    /// bytes count when they did not change since [`Hook::before_read`]; if they did, the model
    /// may have seen either version, and the next write needs a re-read.
    pub fn after_read(
        &mut self,
        path: &RelPath,
        rendered: Option<&str>,
        tool_use_id: &str,
    ) -> Result<(), Error> {
        let before = self.digest_before_read(tool_use_id);
        let abs = self.abs(path);
        let disk = match crate::fsutil::read_regular(&abs) {
            Ok(b) => b,
            // Gone or unreadable: the read failed or raced a delete; nothing to record.
            Err(_) => return Ok(()),
        };
        let now = Digest::of(&disk);
        let whole = rendered.is_some_and(|r| r.as_bytes() == disk.as_slice());
        let unchanged = before == Some(now);
        let rendered_same = rendered.is_some_and(|r| renders_as(&disk, r));
        let edit = if whole || unchanged || rendered_same {
            self.saw(path, &disk, Some(now), false)?
        } else {
            MapEdit::Put {
                path: path.clone(),
                seen: Seen::Reread,
                bytes: None,
                first_origin: Some(now),
                wrote: false,
                origin_bytes: None,
            }
        };
        self.record("read", std::slice::from_ref(path), vec![edit], Vec::new())
    }

    /// Before a shell command: remember how each tracked file stands (size, mtime, inode), so
    /// the after-event can tell which ones changed while it ran.
    pub fn before_command(&mut self, command: &str, tool_use_id: &str) -> Result<(), Error> {
        if !self.session_exists()? {
            return Ok(());
        }
        let id = self.session.clone();
        let entries = self.context()?.journal().entries(&id)?;
        let stats: Vec<serde_json::Value> = entries
            .iter()
            .map(|e| serde_json::json!([e.path.to_lossy(), stat_key(&self.abs(&e.path))]))
            .collect();
        let record = serde_json::json!({ "command": command, "stats": stats });
        self.put_scratch(
            &self.scratch_file("command", tool_use_id),
            record.to_string().as_bytes(),
        )
    }

    /// After a shell command: note the tracked files that changed while it ran. Nothing is
    /// absorbed — the map still holds what the session saw, so the next write is refused; the
    /// note only makes that refusal say the change happened during the command.
    pub fn after_command(&mut self, tool_use_id: &str) -> Result<(), Error> {
        let Some(bytes) = self.take_scratch(&self.scratch_file("command", tool_use_id)) else {
            return Ok(());
        };
        let Ok(record) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            return Ok(());
        };
        let command = record["command"].as_str().unwrap_or_default().to_owned();
        let mut notes = self.command_notes();
        for pair in record["stats"].as_array().into_iter().flatten() {
            let (Some(p), before) = (pair[0].as_str(), &pair[1]) else {
                continue;
            };
            let Some(path) = RelPath::from_bytes(p.as_bytes()) else {
                continue;
            };
            if stat_key(&self.abs(&path)) != *before {
                notes.insert(p.to_owned(), short_command(&command));
            }
        }
        self.put_command_notes(&notes)
    }

    fn notes_file(&self) -> PathBuf {
        self.scratch_dir().join("changed-during-commands.json")
    }

    fn command_notes(&self) -> std::collections::BTreeMap<String, String> {
        crate::fsutil::read_optional(&self.notes_file())
            .ok()
            .flatten()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    fn put_command_notes(
        &self,
        notes: &std::collections::BTreeMap<String, String>,
    ) -> Result<(), Error> {
        let text = serde_json::to_vec(notes).expect("a map serialises");
        self.put_scratch(&self.notes_file(), &text)
    }

    fn changed_in_command(&self, path: &RelPath) -> Option<String> {
        self.command_notes().remove(path.to_lossy().as_ref())
    }

    fn forget_command_notes(&self, paths: &[RelPath]) {
        if !self.notes_file().exists() {
            return;
        }
        let mut notes = self.command_notes();
        let before = notes.len();
        for p in paths {
            notes.remove(p.to_lossy().as_ref());
        }
        if notes.len() != before {
            let _ = self.put_command_notes(&notes);
        }
    }
}

/// Size, modification time and inode of a file, as a cheap "did it change" key.
fn stat_key(path: &Path) -> serde_json::Value {
    use std::os::unix::fs::MetadataExt;
    match std::fs::metadata(path) {
        Ok(m) => serde_json::json!([m.len(), m.mtime(), m.mtime_nsec(), m.ino()]),
        Err(_) => serde_json::Value::Null,
    }
}

/// A command as quoted in a message: one line, cut after 80 characters.
fn short_command(command: &str) -> String {
    let one_line = command.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut: String = one_line.chars().take(80).collect();
    if cut.len() < one_line.len() {
        format!("`{cut}…`")
    } else {
        format!("`{cut}`")
    }
}

fn is_exec(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

/// Whether `text` is how a host renders the file bytes `disk` as text: the same bytes, or the
/// same after decoding (invalid UTF-8 replaced), dropping a byte-order mark and turning CRLF
/// into LF.
pub fn renders_as(disk: &[u8], text: &str) -> bool {
    if disk == text.as_bytes() {
        return true;
    }
    normalise(&String::from_utf8_lossy(disk)) == normalise(text)
}

fn normalise(text: &str) -> String {
    text.strip_prefix('\u{feff}')
        .unwrap_or(text)
        .replace("\r\n", "\n")
}

/// The bytes a tool that writes `text` most likely put on disk: the disk's own bytes when they
/// are that text (as written, or with the file's CRLF line endings kept), else the text itself.
/// Never the disk's bytes when they are other content: a change made after the tool must stay
/// visible to the guard.
pub fn intended_bytes(text: &str, disk: Option<&[u8]>) -> Vec<u8> {
    if let Some(disk) = disk {
        if disk == text.as_bytes() {
            return disk.to_vec();
        }
        let crlf = text.replace("\r\n", "\n").replace('\n', "\r\n");
        if disk == crlf.as_bytes() {
            return disk.to_vec();
        }
    }
    text.as_bytes().to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_names() {
        assert!(glob_match("mcp__docs__*", "mcp__docs__save"));
        assert!(glob_match("*__save_*", "mcp__x__save_page"));
        assert!(glob_match("exact", "exact"));
        assert!(!glob_match("exact", "exactly"));
        assert!(!glob_match("mcp__docs__*", "mcp__other__save"));
        assert!(!glob_match("a*a", "a"));
    }

    #[test]
    fn session_names_follow_the_host_and_subagents_get_their_own() {
        assert_eq!(
            session_name("e6c55faa-d7b7", None).unwrap().as_str(),
            "e6c55faa-d7b7"
        );
        assert_eq!(
            session_name("e6c55faa", Some("a1b")).unwrap().as_str(),
            "e6c55faa.agent-a1b"
        );
        // Ids that are not valid session ids are hashed, never folded onto each other.
        let odd: Vec<SessionId> = ["a/b", "a b", "a:b", "a-b", "a."]
            .iter()
            .map(|h| session_name(h, None).unwrap())
            .collect();
        for (i, a) in odd.iter().enumerate() {
            for b in &odd[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(odd[3].as_str(), "a-b");
        assert_eq!(odd[0], session_name("a/b", None).unwrap());
        assert_ne!(
            session_name("e6c55faa", Some("a1/b")).unwrap(),
            session_name("e6c55faa", Some("a1-b")).unwrap()
        );
        assert!(session_name("", None).is_err());
    }

    #[test]
    fn rendering_ignores_line_endings_and_invalid_utf8_only() {
        assert!(renders_as(b"a\r\nb\r\n", "a\nb\n"));
        assert!(renders_as(b"a\xffb\n", "a\u{fffd}b\n"));
        assert!(renders_as(b"\xef\xbb\xbfx\n", "x\n"));
        assert!(!renders_as(b"a\nb\n", "a\nB\n"));
    }

    #[test]
    fn intended_bytes_keep_crlf_but_never_absorb_other_content() {
        assert_eq!(intended_bytes("a\nb\n", Some(b"a\r\nb\r\n")), b"a\r\nb\r\n");
        assert_eq!(intended_bytes("a\nb\n", Some(b"a\nb\nc\n")), b"a\nb\n");
        assert_eq!(intended_bytes("a\n", None), b"a\n");
    }
}
