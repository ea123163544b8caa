//! `git stella hook cursor`: the guard for Cursor's agent.
//!
//! Cursor is not on the npm registry as an agent CLI with a hooks schema, and its own page
//! (cursor.com/docs/agent/hooks) could not be fetched here; the shapes below follow that page as
//! reproduced by hook libraries that target it (Cursor 1.7 through 2.x). Hooks live in
//! `.cursor/hooks.json`: `{"version": 1, "hooks": {"<event>": [{"command": …, "matcher"?: …}]}}`.
//! Every payload carries `hook_event_name`, `conversation_id`, `generation_id` and
//! `workspace_roots`; paths are absolute.
//!
//! - `preToolUse` (`tool_name`, `tool_input`): the guard. Writes are `Write` (`file_path`,
//!   `contents`), deletes `Delete` (`file_path`), edits `Edit`/`StrReplace`/`MultiEdit`. A deny
//!   answers `{"permission":"deny","agent_message":…,"user_message":…}`; the same answer also
//!   carries `decision`/`reason`, the spelling some Cursor versions document for this event.
//! - `beforeReadFile` (`file_path`, `content`): `content` is what the agent is about to see, so
//!   that is what is recorded (see [`Hook::shown`]). The answer is
//!   `{"permission":"allow"}`: Stella never hides a file.
//! - `afterFileEdit` (`file_path`, `edits: [{old_string, new_string}]`): the edits applied to
//!   what the session saw are recorded, so a change made after the edit stays visible.
//! - `postToolUse` for `Write` and `Delete`: the written `contents` are recorded, a deleted path
//!   dropped. Without it the session would still hold the digest it read before its own write,
//!   and refuse its own next write.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};

use super::install::{HooksFile, Launch, Shape};
use super::registry::{self, Shell, Spec, Var, Wiring};
use super::{Answer, Edit, Error, Hook, Host, Op, Writes};

/// Where Cursor reads hooks, relative to the repository's root (or the home folder).
pub(crate) const SETTINGS: &str = ".cursor/hooks.json";

/// The agent's name, as `git stella hook cursor` spells it.
pub(crate) const AGENT: &str = "cursor";

/// Cursor in the host registry.
pub(crate) const SPEC: Spec = Spec {
    flag: AGENT,
    name: "Cursor",
    answers: "Answer a Cursor hook (preToolUse, beforeReadFile, afterFileEdit)",
    project: SETTINGS,
    local: None,
    user: user_settings,
    wiring: Wiring::Settings(hooks_file),
    shell: Shell::Unrouted,
    answer: super::answer_boxed::<Cursor>,
    next_in_project: None,
    next_for_user: None,
    doctor: registry::no_checks,
};

fn user_settings(home: &Path, _: Var<'_>) -> PathBuf {
    home.join(SETTINGS)
}

/// A Cursor hook payload, as its documentation describes it (no client to capture from here).
#[derive(Debug, Deserialize)]
pub(crate) struct Payload {
    pub(crate) hook_event_name: String,
    pub(crate) conversation_id: String,
    #[serde(default)]
    pub(crate) workspace_roots: Vec<PathBuf>,
    #[serde(default)]
    pub(crate) cwd: Option<PathBuf>,
    #[serde(default)]
    pub(crate) tool_name: Option<String>,
    /// The tool's input: its path field is `file_path`, `path` or `target_file` by tool.
    #[serde(default)]
    pub(crate) tool_input: Value,
    /// `beforeReadFile` and `afterFileEdit`.
    #[serde(default)]
    pub(crate) file_path: Option<String>,
    /// `beforeReadFile`: what the agent is about to see.
    #[serde(default)]
    pub(crate) content: Option<String>,
    /// `afterFileEdit`.
    #[serde(default)]
    pub(crate) edits: Vec<FileEdit>,
}

/// One edit of `afterFileEdit`.
#[derive(Debug, Deserialize)]
pub(crate) struct FileEdit {
    #[serde(default)]
    pub(crate) old_string: String,
    #[serde(default)]
    pub(crate) new_string: String,
}

fn path_of(ti: &Value) -> Option<String> {
    ["file_path", "path", "target_file"]
        .iter()
        .find_map(|k| ti.get(*k).and_then(Value::as_str))
        .map(str::to_owned)
}

fn contents_of(ti: &Value) -> Option<String> {
    ["contents", "content"]
        .iter()
        .find_map(|k| ti.get(*k).and_then(Value::as_str))
        .map(str::to_owned)
}

/// What a `preToolUse`/`postToolUse` call does, or `None` for a tool the guard leaves alone.
fn op_of(tool: &str, ti: &Value) -> Option<Op> {
    let path = path_of(ti)?;
    match tool {
        "Write" => Some(Op::Write {
            path,
            how: contents_of(ti).map_or(Writes::Unknown, Writes::Content),
            original: None,
        }),
        // Their after-event is `afterFileEdit`, with the edits.
        "Edit" | "StrReplace" | "MultiEdit" | "search_replace" => Some(Op::Write {
            path,
            how: Writes::Unknown,
            original: None,
        }),
        "Delete" => Some(Op::Delete { path }),
        _ => None,
    }
}

impl super::Sited for Payload {
    fn ids(&self) -> (&str, Option<&str>) {
        (&self.conversation_id, None)
    }

    fn cwd(&self) -> Option<&Path> {
        self.cwd
            .as_deref()
            .or(self.workspace_roots.first().map(PathBuf::as_path))
    }
}

/// Cursor's agent.
pub(crate) struct Cursor;

impl Host for Cursor {
    const NAME: &'static str = AGENT;
    type Payload = Payload;

    fn handle(hook: &mut Hook, p: &Payload) -> Result<Answer, Error> {
        let tool = p.tool_name.as_deref().unwrap_or_default();
        match p.hook_event_name.as_str() {
            "preToolUse" => {
                let Some(op) = op_of(tool, &p.tool_input) else {
                    return Ok(Cursor::nothing(p));
                };
                Ok(match hook.before(&[op], None)? {
                    Some(reason) => deny(&reason),
                    None => Cursor::nothing(p),
                })
            }
            "beforeReadFile" => {
                if let (Some(path), Some(content)) = (&p.file_path, &p.content) {
                    hook.shown(path, content)?;
                }
                Ok(Cursor::nothing(p))
            }
            "postToolUse" if matches!(tool, "Write" | "Delete") => {
                if let Some(op) = op_of(tool, &p.tool_input) {
                    hook.after(&[op], None, tool)?;
                }
                Ok(Cursor::nothing(p))
            }
            "afterFileEdit" => {
                if let Some(path) = &p.file_path {
                    let edits = p
                        .edits
                        .iter()
                        .map(|e| Edit {
                            old: e.old_string.clone(),
                            new: e.new_string.clone(),
                            all: false,
                        })
                        .collect();
                    let op = Op::Write {
                        path: path.clone(),
                        how: Writes::Edits(edits),
                        original: None,
                    };
                    hook.after(&[op], None, "Edit")?;
                }
                Ok(Cursor::nothing(p))
            }
            _ => Ok(Cursor::nothing(p)),
        }
    }

    /// Cursor parses stdout as JSON: "no opinion" is an empty object, and a read is always
    /// allowed (Stella never hides a file).
    fn nothing(p: &Payload) -> Answer {
        if p.hook_event_name == "beforeReadFile" {
            Answer::json(&json!({"permission": "allow"}))
        } else {
            Answer::json(&json!({}))
        }
    }

    fn deny(reason: &str) -> Answer {
        deny(reason)
    }

    fn asks_before_write(raw: &Value) -> bool {
        raw["hook_event_name"] == "preToolUse"
            && matches!(
                raw["tool_name"].as_str(),
                Some("Write" | "Edit" | "StrReplace" | "MultiEdit" | "search_replace" | "Delete")
            )
    }

    fn raw_cwd(raw: &Value) -> Option<PathBuf> {
        raw["cwd"]
            .as_str()
            .or_else(|| raw.pointer("/workspace_roots/0").and_then(Value::as_str))
            .map(PathBuf::from)
    }
}

/// Cursor's answer that stops the tool: `reason` goes to the agent, its first line to the
/// person. The same answer also carries `decision`/`reason`, the spelling some Cursor versions
/// document for this event.
pub(crate) fn deny(reason: &str) -> Answer {
    let first = reason.lines().next().unwrap_or_default();
    Answer::json(&json!({
        "permission": "deny",
        "agent_message": reason,
        "user_message": format!("Stella: {first}"),
        "decision": "deny",
        "reason": reason,
    }))
}

/// Cursor's hooks file at `path` ([`SETTINGS`] in a project or the home folder, with its
/// `version`), and Stella's entries there, running the binary at `exe`.
pub(crate) fn hooks_file(path: PathBuf, launch: &Launch) -> HooksFile {
    let events = [
        (
            "preToolUse",
            Some("Write|Edit|StrReplace|MultiEdit|Delete"),
            true,
        ),
        ("postToolUse", Some("Write|Delete"), false),
        ("beforeReadFile", None, false),
        ("afterFileEdit", None, false),
    ];
    let handler = |command: &str| json!({"command": command});
    HooksFile {
        header: Some(("version", json!(1))),
        ..HooksFile::new(path, Shape::Flat, AGENT, launch, handler, &events)
    }
}
