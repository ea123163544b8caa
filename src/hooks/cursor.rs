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
//!   that is what is recorded (see [`common::record_shown`]). The answer is
//!   `{"permission":"allow"}`: Stella never hides a file.
//! - `afterFileEdit` (`file_path`, `edits: [{old_string, new_string}]`): the edits applied to
//!   what the session saw are recorded, so a change made after the edit stays visible.
//! - `postToolUse` for `Write` and `Delete`: the written `contents` are recorded, a deleted path
//!   dropped. Without it the session would still hold the digest it read before its own write,
//!   and refuse its own next write.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::common::{self, Error};
use super::install::{HooksFile, Shape, Wanted};
use crate::digest::Digest;
use crate::guard::Intent;
use crate::workspace::Settings;

/// Where Cursor reads hooks, relative to the repository's root (or the home folder).
pub const SETTINGS: &str = ".cursor/hooks.json";

fn path_of(ti: &Value) -> Option<&str> {
    ["file_path", "path", "target_file"]
        .iter()
        .find_map(|k| ti.get(*k).and_then(Value::as_str))
}

/// Handle one hook payload; the JSON to print on stdout, if any.
/// Cursor's answer that stops the tool: `reason` goes to the agent, its first line to the person.
pub fn deny(reason: &str) -> Value {
    let first = reason.lines().next().unwrap_or_default();
    json!({
        "permission": "deny",
        "agent_message": reason,
        "user_message": format!("Stella: {first}"),
        "decision": "deny",
        "reason": reason,
    })
}

/// What a `preToolUse` call is about to do to its file, or `None` for a tool the guard leaves
/// alone.
fn intent_of(v: &Value) -> Option<Intent> {
    let ti = &v["tool_input"];
    match v["tool_name"].as_str()? {
        "Write" => Some(Intent::Write {
            content: ["contents", "content"]
                .iter()
                .find_map(|k| ti.get(*k).and_then(Value::as_str))
                .map(|c| Digest::of(c.as_bytes())),
        }),
        "Edit" | "StrReplace" | "MultiEdit" | "search_replace" => {
            Some(Intent::Write { content: None })
        }
        "Delete" => Some(Intent::Delete),
        _ => None,
    }
}

/// Whether the payload asks before a write or delete: the call fail-closed denies when the hook
/// itself fails.
pub fn asks_before_write(v: &Value) -> bool {
    v["hook_event_name"] == "preToolUse" && intent_of(v).is_some()
}

pub fn handle(
    settings: &Settings,
    fallback_cwd: &Path,
    input: &[u8],
) -> Result<Option<Value>, Error> {
    let v = common::parse(input)?;
    let event = common::str_field(&v, "hook_event_name")?;
    let id = common::session_for(common::str_field(&v, "conversation_id")?);
    let cwd = common::payload_cwd(&v, fallback_cwd);
    let allow_read = || Some(json!({"permission": "allow"}));
    let Some(ctx) = common::open(settings, &cwd, &id)? else {
        return Ok((event == "beforeReadFile").then(allow_read).flatten());
    };
    match event {
        "preToolUse" => {
            let Some(intent) = intent_of(&v) else {
                return Ok(None);
            };
            if let Some(why) =
                path_of(&v["tool_input"]).and_then(|p| common::private(&ctx, &cwd, p))
            {
                return Ok(Some(deny(&why)));
            }
            let Some(path) = path_of(&v["tool_input"]).and_then(|p| common::resolve(&ctx, &cwd, p))
            else {
                return Ok(None);
            };
            Ok(
                common::guard_all(&ctx, &id, &[(path.clone(), intent)])?
                    .map(|reason| deny(&reason)),
            )
        }
        "beforeReadFile" => {
            let (Some(raw), Some(content)) = (
                v.get("file_path").and_then(Value::as_str),
                v.get("content").and_then(Value::as_str),
            ) else {
                return Ok(allow_read());
            };
            if let Some(path) = common::resolve(&ctx, &cwd, raw) {
                common::record_shown(&ctx, &id, &path, content)?;
            }
            Ok(allow_read())
        }
        "postToolUse" => {
            let tool = v.get("tool_name").and_then(Value::as_str).unwrap_or("");
            let ti = v.get("tool_input").cloned().unwrap_or(Value::Null);
            if !matches!(tool, "Write" | "Delete") {
                return Ok(None);
            }
            let Some(path) = path_of(&ti).and_then(|p| common::resolve(&ctx, &cwd, p)) else {
                return Ok(None);
            };
            let contents = ["contents", "content"]
                .iter()
                .find_map(|k| ti.get(*k).and_then(Value::as_str))
                .filter(|_| tool == "Write");
            common::record_written(&ctx, &id, &path, contents.map(str::as_bytes))?;
            Ok(None)
        }
        "afterFileEdit" => {
            let Some(path) = v
                .get("file_path")
                .and_then(Value::as_str)
                .and_then(|p| common::resolve(&ctx, &cwd, p))
            else {
                return Ok(None);
            };
            let edits: Vec<(String, String, bool)> = v
                .get("edits")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|e| {
                            let s = |k| e.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
                            (s("old_string"), s("new_string"), false)
                        })
                        .collect()
                })
                .unwrap_or_default();
            common::record_edited(&ctx, &id, &path, &edits)?;
            Ok(None)
        }
        _ => Ok(None),
    }
}

/// Cursor's hooks file at `path` ([`SETTINGS`] in a project or the home folder, with its
/// `version`), and Stella's entries there, running the binary at `exe`.
pub fn hooks_file(path: PathBuf, exe: &Path) -> HooksFile {
    let command = super::install::hook_command(exe, "cursor");
    let handler = json!({"command": command});
    let on = |event, matcher| Wanted {
        event,
        matcher,
        handler: handler.clone(),
    };
    HooksFile {
        path,
        shape: Shape::Flat,
        agent: "cursor",
        command,
        wanted: vec![
            on("preToolUse", Some("Write|Edit|StrReplace|MultiEdit|Delete")),
            on("postToolUse", Some("Write|Delete")),
            on("beforeReadFile", None),
            on("afterFileEdit", None),
        ],
        header: Some(("version", json!(1))),
        shell_prefix: None,
    }
}
