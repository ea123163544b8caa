//! The agent hosts Stella guards: the guard wired into hosts that run a command before and after
//! each tool (SPEC §7), and the installers that put those commands into the hosts' settings.
//!
//! One core serves every host: [`Hook`] (in `core`) names the session, resolves paths, guards,
//! records reads and writes and keeps the scratch state between a tool's two events; `answer`
//! and `answer_within` parse the payload, find the workspace, keep the time budget, say the
//! notices and apply fail-closed. Each host is one module: a small adapter implementing `Host`
//! (its typed payload, its tool calls described as [`Op`]s, its deny and allow answers) and its
//! entry in the host registry ([`registry::Spec`]: its name, its hooks files and how they are
//! written, how its shell reaches the shell guard, its `doctor` checks). The library never
//! prints: the binary writes the [`Answer`] out.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::digest::Digest;
use crate::fsutil::PathIo;
use crate::ids::SessionId;
use crate::journal;
use crate::session;
use crate::session::turn::TurnError;
use crate::workspace::{self, Settings};

pub(crate) mod claude_code;
pub(crate) mod codex;
pub(crate) mod copilot;
mod core;
pub(crate) mod cursor;
pub(crate) mod gemini;
pub mod install;
pub mod opencode;
mod patch;
pub(crate) mod qwen;
pub mod registry;

pub(crate) use crate::config::Access;
pub use crate::config::{Config, OnError, deny_reason, git_on_error, on_error};
pub use crate::edit::Edit;
pub use core::{Hook, Op, Writes, landed};

/// What a hook call answers: stdout bytes, exit status, and text for stderr.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// What the host reads from the hook's stdout: its JSON answer, or nothing.
    pub stdout: Vec<u8>,
    /// The exit status: 1 when the hook failed and the host should report it, else 0.
    pub code: u8,
    /// Text for stderr: the error, when the hook failed.
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
    pub(crate) fn json(value: &serde_json::Value) -> Answer {
        let mut stdout = serde_json::to_vec(value).expect("a JSON value serialises");
        stdout.push(b'\n');
        Answer {
            stdout,
            code: 0,
            stderr: String::new(),
        }
    }

    /// Exit 1 with the error on stderr: the host reports it and lets the tool run.
    pub(crate) fn failed(error: &(dyn std::error::Error + 'static)) -> Answer {
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
pub(crate) fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    crate::report::Report::of(e).render()
}

/// The error returned by hook handling.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The payload on stdin does not parse as JSON.
    #[error("the hook payload is not valid JSON")]
    BadPayload(#[source] serde_json::Error),
    /// The payload is JSON, but not of the shape this host's payloads have.
    #[error("the hook payload is not what {host} sends")]
    Shape {
        /// The host's name, as `Host::NAME`.
        host: &'static str,
        /// Where the payload and the shape part.
        #[source]
        source: serde_json::Error,
    },
    /// The payload lacks a field the call needs.
    #[error("the hook payload has no '{field}'")]
    MissingField {
        /// The field's name in the payload.
        field: &'static str,
    },
    /// A field of the payload holds a value the call cannot use.
    #[error("the hook payload's '{field}' is not usable: {why}")]
    BadField {
        /// The field's name in the payload.
        field: &'static str,
        /// What is wrong with its value.
        why: String,
    },
    /// The session's operation failed: its workspace, journal or store.
    #[error(transparent)]
    Session(#[from] session::Error),
    /// A turn, step or transcript could not be recorded.
    #[error(transparent)]
    Turn(#[from] TurnError),
    /// Stella's configuration is invalid (`crate::config::check`).
    #[error(transparent)]
    Config(#[from] crate::config::Error),
    /// A file of the hook's own could not be read or written: the payload on stdin, or the
    /// scratch state it keeps between a tool's two events.
    #[error(transparent)]
    Io(#[from] PathIo),
    /// The call ran past its time budget (`within_budget`), which this holds.
    #[error("the hook did not finish within its time budget of {0:?}; nothing more was done")]
    TimedOut(Duration),
    /// The call panicked; `within_budget` caught it.
    #[error("the hook stopped unexpectedly")]
    Panicked,
}

impl Error {
    /// Whether this says a damaged session was repaired and now stands whole.
    pub(crate) fn repaired_whole(&self) -> bool {
        matches!(self, Error::Session(e) if e.repaired_whole())
    }
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
    /// Where Stella keeps its data, and whether git's environment overrides are in play.
    pub settings: Settings,
    /// The hook process's own folder.
    pub cwd: PathBuf,
    /// The host runs its shell commands under the shell guard (`git stella exec`), which
    /// records what they read and wrote: the hook need not watch them.
    pub shell_guard: bool,
    /// The program that runs a shell command under the shell guard, for a host whose hook
    /// rewrites each of the model's shell commands to run under `<guard_exe> exec`
    /// ([`registry::Shell::Rewritten`]), when this machine can guard one. `None` otherwise.
    pub guard_exe: Option<PathBuf>,
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
pub(crate) fn within_budget(
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

/// One agent host: how its payloads read, what its answers look like. Everything else is the
/// core's.
pub(crate) trait Host {
    /// The host's name as `git stella hook <name>` spells it (also the scratch folder's name).
    const NAME: &'static str;
    /// The payload, typed: its fields as the captured payloads carry them.
    type Payload: serde::de::DeserializeOwned + Sited;

    /// Whether the host lets a tool run whatever a failed hook said (a crash, a timeout): then
    /// a write Stella could not check is denied unless the project chose `on-error = "allow"`.
    const FAILS_OPEN: bool = false;

    /// Act on the payload in the workspace `hook` opened.
    fn handle(hook: &mut Hook, p: &Self::Payload) -> Result<Answer, Error>;
    /// The answer that says nothing (outside a workspace, or nothing to do).
    fn nothing(_p: &Self::Payload) -> Answer {
        Answer::nothing()
    }
    /// The answer that stops the tool, `reason` going to the model.
    fn deny(reason: &str) -> Answer;
    /// The answer when the hook itself failed and the tool may run: exit 1 with the error on
    /// stderr, unless the host takes exit 1 as a deny.
    fn failed(e: &Error) -> Answer {
        Answer::failed(e)
    }
    /// Whether the payload asks before a write: the call fail-closed denies when the hook itself
    /// fails. Read from the raw JSON, since it must work on a payload that fails to parse whole.
    fn asks_before_write(raw: &Value) -> bool;
    /// The folder of a raw payload, for fail-closed (see [`Host::asks_before_write`]).
    fn raw_cwd(raw: &Value) -> Option<PathBuf> {
        raw["cwd"].as_str().map(PathBuf::from)
    }
}

/// Where a payload comes from: the host's session (and subagent) and the folder it names.
pub(crate) trait Sited {
    /// The host's session id and, for a subagent, its agent id.
    fn ids(&self) -> (&str, Option<&str>);
    /// The folder the payload names, if it names one.
    fn cwd(&self) -> Option<&Path>;
}

/// A hook payload in the shape Claude Code defined and Codex CLI and Gemini CLI follow (checked
/// against the payloads captured from each in `tests/fixtures`). The tool's input and response
/// stay JSON: their shape is the tool's (an adapter types the ones it reads), and a project may
/// map a tool Stella does not know by the name of its path field.
#[derive(Debug, Deserialize)]
pub(crate) struct ToolPayload {
    pub(crate) hook_event_name: String,
    pub(crate) session_id: String,
    /// A Claude Code subagent's id.
    #[serde(default)]
    pub(crate) agent_id: Option<String>,
    #[serde(default)]
    pub(crate) cwd: Option<PathBuf>,
    #[serde(default)]
    pub(crate) transcript_path: Option<String>,
    #[serde(default)]
    pub(crate) prompt_id: Option<String>,
    /// `SessionStart`: `startup`, `resume`, `clear` or `compact`.
    #[serde(default)]
    pub(crate) source: Option<String>,
    #[serde(default)]
    pub(crate) tool_name: Option<String>,
    #[serde(default)]
    pub(crate) tool_input: Value,
    #[serde(default)]
    pub(crate) tool_response: Value,
    /// The tool call's id (Gemini CLI sends none).
    #[serde(default)]
    pub(crate) tool_use_id: Option<String>,
}

impl Sited for ToolPayload {
    fn ids(&self) -> (&str, Option<&str>) {
        (&self.session_id, self.agent_id.as_deref())
    }

    fn cwd(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }
}

/// The answer that stops a tool before it runs, `reason` going to the model as the tool's error
/// while the turn goes on: `hookSpecificOutput.permissionDecision` as Claude Code defined it, and
/// Codex CLI and Qwen Code read it.
pub(crate) fn deny_before_tool(reason: &str) -> Answer {
    Answer::json(&serde_json::json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }))
}

/// Context for the model after `event` (and, with `person`, a message shown to the person), in
/// the same protocol.
pub(crate) fn additional_context(event: &str, for_model: &str, person: Option<&str>) -> Answer {
    let mut v = serde_json::json!({
        "hookSpecificOutput": {
            "hookEventName": event,
            "additionalContext": for_model,
        }
    });
    if let Some(p) = person {
        v["systemMessage"] = serde_json::json!(p);
    }
    Answer::json(&v)
}

/// Answer one payload given as bytes.
#[cfg(test)]
pub(crate) fn answer<H: Host>(env: &Env, input: &[u8]) -> Answer {
    match serde_json::from_slice::<Value>(input) {
        Ok(raw) => answer_raw::<H>(env, &raw),
        Err(e) => Answer::failed(&Error::BadPayload(e)),
    }
}

/// Read the payload with `read_input` and answer it, all within `budget`. When the budget runs
/// out first, `give_up` gets the answer to give instead (and ends the process: see
/// [`within_budget`]).
pub(crate) fn answer_within<H: Host>(
    env: Env,
    budget: Duration,
    read_input: impl FnOnce() -> io::Result<Vec<u8>>,
    give_up: impl FnOnce(Answer) + Send + 'static,
) -> Answer {
    let seen: Arc<OnceLock<Value>> = Arc::new(OnceLock::new());
    let watchdog_seen = Arc::clone(&seen);
    let watchdog_env = env.clone();
    within_budget(
        budget,
        || {
            let input = match read_input() {
                Ok(i) => i,
                Err(source) => {
                    return Answer::failed(&Error::Io(PathIo {
                        op: "read the hook payload from",
                        path: PathBuf::from("stdin"),
                        source,
                    }));
                }
            };
            match serde_json::from_slice::<Value>(&input) {
                Ok(raw) => answer_raw::<H>(&env, seen.get_or_init(|| raw)),
                Err(e) => Answer::failed(&Error::BadPayload(e)),
            }
        },
        move |e| give_up(on_failure::<H>(&watchdog_env, watchdog_seen.get(), &e)),
    )
}

/// [`answer_within`] with its closures boxed: what a host's [`registry::Spec::answer`] points to.
pub(crate) fn answer_boxed<H: Host>(
    env: Env,
    budget: Duration,
    read_input: registry::ReadInput,
    give_up: registry::GiveUp,
) -> Answer {
    answer_within::<H>(env, budget, read_input, give_up)
}

fn answer_raw<H: Host>(env: &Env, raw: &Value) -> Answer {
    let field = |a: &str, b: &str| raw[a].as_str().or(raw[b].as_str()).unwrap_or_default();
    let _span = tracing::debug_span!(
        "hook",
        host = H::NAME,
        event = field("hook_event_name", "hookEventName"),
        tool = field("tool_name", "toolName"),
    )
    .entered();
    match handle::<H>(env, raw) {
        Ok(a) => a,
        Err(e) => on_failure::<H>(env, Some(raw), &e),
    }
}

fn handle<H: Host>(env: &Env, raw: &Value) -> Result<Answer, Error> {
    let p: H::Payload = H::Payload::deserialize(raw).map_err(|source| Error::Shape {
        host: H::NAME,
        source,
    })?;
    let cwd = p.cwd().map_or_else(|| env.cwd.clone(), |c| env.cwd.join(c));
    let (host_id, agent_id) = p.ids();
    let session = session_name(host_id, agent_id)?;
    let Some(mut hook) = Hook::find(env, H::NAME, &cwd, session)? else {
        return Ok(H::nothing(&p));
    };
    // A call that found the store damaged repairs it. Repaired whole, the session knows what it
    // forgot, and the call is judged again on it: a write of a file the session may have known
    // is denied, where a failed hook would let the tool run. Past repair, the call fails (a deny
    // under fail-closed).
    let answered = H::handle(&mut hook, &p);
    let mut answer = match answered.map_err(|e| hook.repair_on_damage(e)) {
        Err(repaired) if repaired.repaired_whole() => {
            let mut again = H::handle(&mut hook, &p)?;
            again.stderr.push_str(&error_text(&repaired));
            again
        }
        other => other?,
    };
    for n in &hook.notices {
        answer.stderr.push_str(&format!("stella: {n}\n"));
    }
    for w in &hook.warnings {
        answer.stderr.push_str(&format!("stella: warning: {w}\n"));
    }
    Ok(answer)
}

/// The answer when the hook itself failed: exit 1 (the host lets the tool run), or, for a call
/// before a write in a project that chose fail-closed (or whose Stella config is invalid), a
/// deny naming the error. Reads and shell commands are never denied: fail-closed is about writes.
pub(crate) fn on_failure<H: Host>(env: &Env, raw: Option<&Value>, e: &Error) -> Answer {
    if let Some(raw) = raw
        && H::asks_before_write(raw)
    {
        let cwd = H::raw_cwd(raw).map_or_else(|| env.cwd.clone(), |c| env.cwd.join(c));
        if let Some(reason) = deny_reason(&env.settings, &cwd, &error_text(e), H::FAILS_OPEN) {
            return H::deny(&reason);
        }
    }
    H::failed(e)
}

/// The Stella session of a host session: named after the host's id, and a subagent (which can
/// clobber its parent's work) gets a session of its own, `<host id>.agent-<agent id>`. The name
/// is the id itself when it is a valid Stella id (hosts use UUIDs), else a digest of it, so the
/// same host id always maps to the same session and two different ones never share one.
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
    Ok(SessionId::parse(&name).unwrap_or_else(|_| {
        let hex = Digest::of(name.as_bytes()).to_hex();
        SessionId::parse(&format!("h-{}", &hex[..32])).expect("a hex id is a valid session id")
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::glob_match;

    #[test]
    fn every_captured_payload_parses() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        for host in [
            "claude-code",
            "codex-0.169.0",
            "gemini-cli-0.61.0",
            "qwen-code-0.24.4",
        ] {
            let mut n = 0;
            for entry in std::fs::read_dir(fixtures.join(host)).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "json") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    let p: Result<ToolPayload, _> = serde_json::from_str(&text);
                    let p = p.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                    if host.starts_with("gemini") {
                        gemini::typed(&p).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                    }
                    if host.starts_with("qwen") {
                        qwen::op(&p).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                    }
                    n += 1;
                }
            }
            assert!(n >= 10, "{host}: only {n} captured payloads");
        }
    }

    #[test]
    fn every_captured_copilot_payload_parses() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/copilot-1.0.102");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                let text = std::fs::read_to_string(&path).unwrap();
                let p: copilot::Payload = serde_json::from_str(&text)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let ops = copilot::ops(&p).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert!(!ops.is_empty(), "{}", path.display());
                n += 1;
            }
        }
        assert!(n >= 10, "copilot: only {n} captured payloads");
    }

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
        assert!(odd[0].as_str().starts_with("h-"));
        assert_ne!(
            session_name("e6c55faa", Some("a1/b")).unwrap(),
            session_name("e6c55faa", Some("a1-b")).unwrap()
        );
        assert!(session_name("", None).is_err());
    }
}
