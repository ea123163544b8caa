//! The Claude Code adapter (SPEC §7): one hook payload in, one [`Answer`] out.
//!
//! | event | what Stella does |
//! |---|---|
//! | `SessionStart` | get or create the session named from `session_id` (+ `agent_id`); remember `transcript_path`; on `resume`, tell the model which tracked files changed while it was away |
//! | `UserPromptSubmit` | remember `transcript_path` when it moved, capture the transcript (the host flushes it late), then begin a turn |
//! | `Stop` | remember `transcript_path` when it moved; a step carrying the transcript, then end the turn |
//! | `SessionEnd` | remember `transcript_path` when it moved; capture the transcript; end the session (its uncommitted writes stop being protected from other sessions) |
//! | `PreToolUse` Edit, MultiEdit, Write, NotebookEdit, MCP writes | the guard; a refusal is a `deny` with Stella's message |
//! | `PreToolUse` Read, MCP reads | remember the disk's digest |
//! | `PostToolUse` Read | record what the model saw (`Hook::after_read`) |
//! | `PostToolUse` Write, Edit, MultiEdit | record the bytes the tool meant to write; keep bytes it overwrote unseen |
//! | `PreToolUse`/`PostToolUse` Bash | note which tracked files changed while the command ran |
//!
//! Exit status is never 2: to Claude Code, 2 means "block" (and on other events "erase the
//! prompt" or "keep going"). A refusal is JSON on stdout with exit 0; an internal error is exit 1
//! with the reason on stderr (the host lets the tool run), unless the project chose fail-closed.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::install::{self, HooksFile, Launch, PREFIX_KEY, Shape, is_stella_prefix};
use super::registry::{self, Finding, Level, Look, Scope, Shell, Spec, Var, Wiring};
use super::{Access, Answer, Config, Edit, Error, Hook, Host, Op, ToolPayload, Writes};
use crate::journal::RootFile;
use crate::journal::layout::HostFile;
use crate::session::Freshness;
use crate::session::turn::{Transcript, TurnError};

/// The agent's name, as `git stella hook claude-code` spells it.
pub(crate) const AGENT: &str = "claude-code";

/// The tools the installed hooks fire for (a regular expression, as Claude Code's `matcher`).
pub(crate) const TOOL_MATCHER: &str = "Read|Edit|MultiEdit|Write|NotebookEdit|Bash|mcp__.*";

/// Claude Code's project settings, relative to the repository's root (or the home folder).
pub(crate) const SETTINGS: &str = ".claude/settings.json";
/// Claude Code's settings for one checkout, which it reads and git usually ignores.
pub(crate) const LOCAL_SETTINGS: &str = ".claude/settings.local.json";

/// Claude Code in the host registry.
pub(crate) const SPEC: Spec = Spec {
    flag: AGENT,
    name: "Claude Code",
    answers: "Answer one Claude Code hook payload (SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop, SessionEnd)",
    project: SETTINGS,
    local: Some(LOCAL_SETTINGS),
    user: user_settings,
    wiring: Wiring::Settings(hooks_file),
    shell: Shell::Prefix {
        flag: install::PREFIX_ARGS,
        session_var: "CLAUDE_CODE_SESSION_ID",
    },
    answer: super::answer_boxed::<ClaudeCode>,
    next_in_project: None,
    next_for_user: None,
    doctor: shell_prefix_finding,
};

/// The user's settings: in `$CLAUDE_CONFIG_DIR` when that is set, else `~/.claude`.
fn user_settings(home: &Path, var: Var<'_>) -> PathBuf {
    registry::folder_from(var, "CLAUDE_CONFIG_DIR", || home.join(".claude")).join("settings.json")
}

/// Claude Code's settings file at `path`, with Stella's hooks and shell prefix run as `launch`
/// says.
pub(crate) fn hooks_file(path: PathBuf, launch: &Launch) -> HooksFile {
    let events = [
        ("SessionStart", None, false),
        ("UserPromptSubmit", None, false),
        ("PreToolUse", Some(TOOL_MATCHER), true),
        ("PostToolUse", Some(TOOL_MATCHER), false),
        ("Stop", None, false),
        ("SessionEnd", None, false),
    ];
    let handler = |command: &str| json!({ "type": "command", "command": command });
    HooksFile {
        shell_prefix: Some(install::shell_prefix(launch)),
        ..HooksFile::new(path, Shape::Grouped, AGENT, launch, handler, &events)
    }
}

/// Whether Claude Code runs Bash commands under the shell guard: the `CLAUDE_CODE_SHELL_PREFIX`
/// it ends up with, from the settings it reads (local over project over user, as Claude Code
/// merges them), else from the environment it starts in.
fn shell_prefix_finding(look: &Look<'_>) -> Vec<Finding> {
    let key = PREFIX_KEY;
    let from_settings = [Scope::Local, Scope::Project, Scope::User]
        .iter()
        .find_map(|scope| {
            look.seen.iter().find(|s| s.scope == *scope).and_then(|s| {
                s.value
                    .get("env")
                    .and_then(|e| e.get(key))
                    .and_then(Value::as_str)
                    .map(|p| (p.to_owned(), s.path.display().to_string()))
            })
        });
    let effective = from_settings.or_else(|| {
        look.var(key).map(|p| {
            (
                p.to_string_lossy().into_owned(),
                "the environment".to_owned(),
            )
        })
    });
    vec![match effective {
        Some((prefix, _)) if is_stella_prefix(&prefix) => Finding::new(
            Level::Ok,
            "claude-shell",
            "Claude Code runs Bash commands under the shell guard".into(),
            None,
        ),
        Some((prefix, from)) => Finding::new(
            Level::Error,
            "claude-shell",
            format!(
                "Claude Code runs Bash commands through {key}='{prefix}' (from {from}), not Stella's shell guard: Bash is unguarded"
            ),
            Some(format!(
                "remove that {key}, then run 'git stella hooks install --agent claude-code' again; or have your prefix run its command under 'git-stella --claude-code-shell'"
            )),
        ),
        None => Finding::new(
            Level::Error,
            "claude-shell",
            format!("no {key} is set for Claude Code: Bash commands run unguarded"),
            Some("run 'git stella hooks install --agent claude-code' again".into()),
        ),
    }]
}

/// Where the session's host settings live in its journal.
const HOST_FILE: RootFile = RootFile::Host(AGENT);

/// Claude Code's payloads: [`ToolPayload`].
pub(crate) type Payload = ToolPayload;

/// Claude Code.
pub(crate) struct ClaudeCode;

impl Host for ClaudeCode {
    const NAME: &'static str = AGENT;
    type Payload = Payload;

    fn handle(hook: &mut Hook, p: &Payload) -> Result<Answer, Error> {
        match p.hook_event_name.as_str() {
            "SessionStart" => session_start(hook, p),
            "UserPromptSubmit" => {
                hook.ensure_session()?;
                remember_transcript_path(hook, p)?;
                capture_transcript(hook, p)?;
                let id = hook.session.clone();
                hook.context()?
                    .session(&id)
                    .turn_begin(p.prompt_id.as_deref())?;
                Ok(Answer::nothing())
            }
            "Stop" => {
                stop(hook, p)?;
                Ok(Answer::nothing())
            }
            "SessionEnd" => {
                if hook.session_exists()? {
                    remember_transcript_path(hook, p)?;
                    capture_transcript(hook, p)?;
                    let id = hook.session.clone();
                    hook.context()?.session(&id).end()?;
                }
                Ok(Answer::nothing())
            }
            "PreToolUse" => {
                let ops = ops(&hook.root, p)?;
                Ok(match hook.before(&ops, p.tool_use_id.as_deref())? {
                    Some(reason) => super::deny_before_tool(&reason),
                    None => Answer::nothing(),
                })
            }
            "PostToolUse" => {
                let ops = ops(&hook.root, p)?;
                let tool = p.tool_name.as_deref().unwrap_or_default();
                let told = hook.after(&ops, p.tool_use_id.as_deref(), tool)?;
                Ok(if told.is_empty() {
                    Answer::nothing()
                } else {
                    let text = told.join("\n\n");
                    super::additional_context("PostToolUse", &text, Some(&text))
                })
            }
            _ => Ok(Answer::nothing()),
        }
    }

    fn deny(reason: &str) -> Answer {
        super::deny_before_tool(reason)
    }

    /// Reads and shell commands are never denied: fail-closed is about writes.
    fn asks_before_write(raw: &Value) -> bool {
        let tool = raw["tool_name"].as_str().unwrap_or_default();
        let read = matches!(tool, "Read" | "Bash")
            || (tool.starts_with("mcp__")
                && ["__read_file", "__read_text_file", "__read_media_file"]
                    .iter()
                    .any(|r| tool.ends_with(r)));
        raw["hook_event_name"] == "PreToolUse" && !read
    }
}

fn session_start(hook: &mut Hook, p: &Payload) -> Result<Answer, Error> {
    hook.ensure_session()?;
    let id = hook.session.clone();
    remember_transcript_path(hook, p)?;
    capture_transcript(hook, p)?;
    if p.source.as_deref() != Some("resume") {
        return Ok(Answer::nothing());
    }
    let status = hook.context()?.session(&id).status()?;
    let changed: Vec<String> = status
        .iter()
        .filter_map(|(e, f)| match f {
            Freshness::Changed => Some(format!("{} (changed)", e.path)),
            Freshness::Gone => Some(format!("{} (deleted)", e.path)),
            Freshness::Fresh | Freshness::Unreadable => None,
        })
        .collect();
    if changed.is_empty() {
        return Ok(Answer::nothing());
    }
    const SHOWN: usize = 50;
    let mut list = changed
        .iter()
        .take(SHOWN)
        .map(|l| format!("- {l}"))
        .collect::<Vec<_>>()
        .join("\n");
    if changed.len() > SHOWN {
        list.push_str(&format!(
            "\n- … and {} more ('git stella status' lists them all)",
            changed.len() - SHOWN
        ));
    }
    let text = format!(
        "Stella: while this session was away, files it had read or written changed on disk (another agent or a person edited them):\n{list}\nWhat you remember of them is out of date: re-read them before editing. Stella refuses an edit made against the old content."
    );
    Ok(super::additional_context("SessionStart", &text, None))
}

/// Remember where the host writes the transcript (the session must exist): `checkpoint` reads
/// that file again, for the bytes written after the last hook call.
///
/// The payload's path wins, except a path that names no file over a remembered one that does.
/// `claude --resume ID` finds the transcript in any project folder under `~/.claude/projects/`
/// and keeps appending to it there, yet its `SessionStart` names the file under the current
/// folder's project folder (absent when the transcript was copied elsewhere, or the checkout is
/// another path than where the session began); its later events name the file it really writes.
fn remember_transcript_path(hook: &mut Hook, p: &Payload) -> Result<(), Error> {
    let Some(path) = p.transcript_path.as_deref() else {
        return Ok(());
    };
    let id = hook.session.clone();
    let ctx = hook.context()?;
    let known: Option<HostFile> = ctx.journal().root_toml(&id, &HOST_FILE)?;
    let known = known.and_then(|k| k.transcript_path);
    if known.as_deref() == Some(path) {
        return Ok(());
    }
    if known.is_some_and(|k| Path::new(&k).is_file()) && !Path::new(path).is_file() {
        return Ok(());
    }
    let file = HostFile {
        transcript_path: Some(path.to_owned()),
    };
    let edit = ctx.journal().toml_edit(HOST_FILE, &file)?;
    hook.record("remember transcript path", &[], Vec::new(), vec![edit])
}

/// Store the transcript's new bytes, outside any turn step (the host may have flushed them
/// after the last `Stop`).
fn capture_transcript(hook: &mut Hook, p: &Payload) -> Result<(), Error> {
    let Some((name, path)) = transcript(p) else {
        return Ok(());
    };
    let id = hook.session.clone();
    let captured = hook.context()?.session(&id).capture_transcript(Transcript {
        name: &name,
        path: &path,
    });
    match captured {
        Ok(_) => Ok(()),
        Err(e) => skip_transcript(hook, e),
    }
}

/// A transcript that cannot be taken (see [`crate::session::turn::read_transcript_file`]) costs the
/// session its copy, never the hook: say so and go on.
fn skip_transcript(hook: &mut Hook, e: TurnError) -> Result<(), Error> {
    match e {
        TurnError::Transcript { path, source } => {
            hook.warnings.push(format!(
                "the transcript '{}' was not stored: {source}",
                crate::text::escape_controls(&path.to_string_lossy())
            ));
            Ok(())
        }
        e => Err(e.into()),
    }
}

/// The transcript's name in the journal and its path, when the file exists.
fn transcript(p: &Payload) -> Option<(String, PathBuf)> {
    let path = PathBuf::from(p.transcript_path.as_deref()?);
    let name = path.file_name()?.to_str()?.to_owned();
    path.is_file().then_some((name, path))
}

fn stop(hook: &mut Hook, p: &Payload) -> Result<(), Error> {
    if !hook.session_exists()? {
        return Ok(());
    }
    remember_transcript_path(hook, p)?;
    let id = hook.session.clone();
    let t = transcript(p);
    let ctx = hook.context()?;
    if ctx.session(&id).resume_point()?.is_none() {
        return capture_transcript(hook, p);
    }
    let stepped = ctx.session(&id).step(
        Some("the answer is finished"),
        t.as_ref().map(|(name, path)| Transcript { name, path }),
    );
    if let Err(e) = stepped {
        skip_transcript(hook, e)?;
        hook.context()?
            .session(&id)
            .step(Some("the answer is finished"), None)?;
    }
    let ctx = hook.context()?;
    ctx.session(&id).turn_end()?;
    Ok(())
}

/// The edits of an Edit or MultiEdit call. The response's strings are what ran (the person may
/// have changed the proposal); `None` when a field is missing.
fn edits(p: &Payload) -> Option<Vec<Edit>> {
    let input = &p.tool_input;
    let edit = |old: Option<&str>, new: Option<&str>, all: Option<bool>| {
        Some(Edit {
            old: old?.to_owned(),
            new: new?.to_owned(),
            all: all.unwrap_or(false),
        })
    };
    match input["edits"].as_array() {
        Some(list) => list
            .iter()
            .map(|e| {
                edit(
                    e["old_string"].as_str(),
                    e["new_string"].as_str(),
                    e["replace_all"].as_bool(),
                )
            })
            .collect(),
        None => {
            let r = &p.tool_response;
            Some(vec![edit(
                r["oldString"].as_str().or(input["old_string"].as_str()),
                r["newString"].as_str().or(input["new_string"].as_str()),
                r["replaceAll"].as_bool().or(input["replace_all"].as_bool()),
            )?])
        }
    }
}

/// The tools the reference filesystem MCP server offers, by their name after `mcp__<server>__`.
fn mcp_filesystem_tool(tool: &str, input: &Value) -> Option<Op> {
    let path = || input["path"].as_str().map(str::to_owned);
    match tool {
        "read_file" | "read_text_file" | "read_media_file" => Some(Op::Read {
            path: path()?,
            shown: None,
        }),
        "write_file" => Some(Op::Write {
            path: path()?,
            how: Writes::Content(input["content"].as_str()?.to_owned()),
            original: None,
        }),
        "edit_file" if input["dryRun"] != true => Some(Op::Write {
            path: path()?,
            how: Writes::Unknown,
            original: None,
        }),
        "move_file" => Some(Op::Move {
            from: input["source"].as_str()?.to_owned(),
            to: input["destination"].as_str()?.to_owned(),
            how: Writes::Unknown,
        }),
        _ => None,
    }
}

/// What the tool call does to files, in the core's words.
fn ops(root: &Path, p: &Payload) -> Result<Vec<Op>, Error> {
    let name = p.tool_name.as_deref().unwrap_or_default();
    let input = &p.tool_input;
    let field = |f: &str| input[f].as_str().map(str::to_owned);
    let original = p.tool_response["originalFile"].as_str().map(str::to_owned);
    let op = match name {
        "Read" => field("file_path").map(|path| Op::Read {
            path,
            shown: p.tool_response["file"]["content"]
                .as_str()
                .map(str::to_owned),
        }),
        "Write" => field("file_path").map(|path| Op::Write {
            path,
            how: field("content").map_or(Writes::Unknown, Writes::Content),
            original,
        }),
        "Edit" | "MultiEdit" => field("file_path").map(|path| Op::Write {
            path,
            how: edits(p).map_or(Writes::Unknown, Writes::Edits),
            original,
        }),
        "NotebookEdit" => field("notebook_path").map(|path| Op::Write {
            path,
            how: Writes::Unknown,
            original: None,
        }),
        "Bash" => Some(Op::Shell {
            command: field("command").unwrap_or_default(),
            output: p.tool_response["stdout"].as_str().map(str::to_owned),
        }),
        // Only tools Stella knows, or that the project mapped, cost a config read.
        _ => {
            let config = Config::load(root)?;
            if let Some(m) = config.tool(name) {
                field(&m.path).map(|path| match m.access {
                    Access::Read => Op::Read { path, shown: None },
                    Access::Write => Op::Write {
                        path,
                        how: m
                            .content
                            .as_deref()
                            .and_then(field)
                            .map_or(Writes::Unknown, Writes::Content),
                        original: None,
                    },
                })
            } else if let Some(rest) = name.strip_prefix("mcp__") {
                rest.rsplit_once("__")
                    .and_then(|(_, tool)| mcp_filesystem_tool(tool, input))
            } else {
                None
            }
        }
    };
    Ok(op.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::hosts::{Env, answer, within_budget};

    fn payload(v: Value) -> Payload {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn edits_come_from_the_response_first() {
        let p = payload(json!({"hook_event_name": "PostToolUse", "session_id": "s",
            "tool_input": {"old_string": "beta", "new_string": "BETA"},
            "tool_response": {"oldString": "beta", "newString": "B", "replaceAll": true}}));
        assert_eq!(
            edits(&p).unwrap(),
            vec![Edit {
                old: "beta".into(),
                new: "B".into(),
                all: true
            }]
        );
        let multi = payload(json!({"hook_event_name": "PostToolUse", "session_id": "s",
            "tool_input": {"edits": [{"old_string": "a", "new_string": "b", "replace_all": true}, {"old_string": "c"}]}}));
        assert_eq!(edits(&multi), None);
    }

    #[test]
    fn answers_are_computed_in_process_and_never_exit_2() {
        let tmp = tempfile::tempdir().unwrap();
        let env = Env {
            settings: crate::workspace::Settings::new(tmp.path().join("stella")),
            cwd: tmp.path().to_owned(),
            shell_guard: false,
            guard_exe: None,
        };
        // Outside any repository: nothing done, nothing written.
        let p = json!({"session_id": "s", "cwd": tmp.path(), "hook_event_name": "PreToolUse",
            "tool_name": "Edit", "tool_input": {"file_path": tmp.path().join("a")}});
        assert_eq!(
            answer::<ClaudeCode>(&env, p.to_string().as_bytes()),
            Answer::nothing()
        );
        assert!(!tmp.path().join("stella").exists());
        let bad = answer::<ClaudeCode>(&env, b"{");
        assert_eq!((bad.code, bad.stdout.is_empty()), (1, true));
        assert!(
            bad.stderr
                .starts_with("stella: error: the hook payload is not valid JSON\n")
        );
        // Hung work: the watchdog gives the budget's answer while the work is still going.
        let (tx, rx) = std::sync::mpsc::channel();
        let started = std::time::Instant::now();
        let slow = within_budget(
            Duration::from_millis(20),
            || {
                let late = rx.recv_timeout(Duration::from_secs(5));
                assert!(late.is_ok(), "the watchdog did not fire within the budget");
                Answer::nothing()
            },
            move |e| {
                let a = Answer::failed(&e);
                tx.send((a.code, a.stderr)).unwrap();
            },
        );
        assert_eq!(slow, Answer::nothing());
        assert!(started.elapsed() < Duration::from_secs(5));
        // Work done in time: the watchdog stands down and never answers.
        let quick = within_budget(Duration::from_secs(5), Answer::nothing, |_| {
            panic!("the watchdog fired for work done in time")
        });
        assert_eq!(quick, Answer::nothing());
        // A panic in the work is the hook's own failure (exit 1), not a crash.
        let panicked = within_budget(Duration::from_secs(5), || panic!("boom"), |_| {});
        assert_eq!(panicked.code, 1);
    }

    #[test]
    fn mcp_filesystem_tools_are_known_by_their_names() {
        let root = Path::new("/nonexistent");
        let p = |v: Value| payload(v);
        let write = p(
            json!({"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "mcp__filesystem__write_file", "tool_input": {"path": "/r/a", "content": "x"}}),
        );
        assert!(matches!(
            ops(root, &write).unwrap()[..],
            [Op::Write {
                how: Writes::Content(_),
                ..
            }]
        ));
        let mv = p(
            json!({"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "mcp__fs__move_file", "tool_input": {"source": "/r/a", "destination": "/r/b"}}),
        );
        assert!(matches!(ops(root, &mv).unwrap()[..], [Op::Move { .. }]));
        let list = p(
            json!({"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "mcp__fs__list_directory", "tool_input": {"path": "/r"}}),
        );
        assert!(ops(root, &list).unwrap().is_empty());
    }
}
