//! `git stella hook gemini`: the guard for Google's Gemini CLI.
//!
//! Protocol checked against `@google/gemini-cli` 0.61.0 from the npm registry: its bundled
//! `docs/hooks/reference.md` and `docs/tools/file-system.md`. Hooks live in
//! `.gemini/settings.json` under `hooks.BeforeTool` / `hooks.AfterTool`, each a list of
//! `{matcher, hooks: [{type: "command", command}]}` with the matcher a regex on the tool name.
//! Every payload carries `session_id`, `cwd`, `hook_event_name`; tool events add `tool_name` and
//! `tool_input`, and `AfterTool` adds `tool_response` (`llmContent`, `returnDisplay`, `error`).
//!
//! The file tools: `read_file` (`file_path`, optional `offset`, `limit`), `write_file`
//! (`file_path`, `content`), `replace` (`file_path`, `old_string`, `new_string`,
//! `allow_multiple`). A deny is `{"decision":"deny","reason":…}` on stdout with exit 0: the reason
//! reaches the model as the tool's error and the turn goes on. Exit 2 would also block, but this
//! adapter never uses it: an internal error exits 1, which Gemini CLI reports as a warning and
//! lets the tool run.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::common::{self, Error};
use super::install::{HooksFile, Shape, Wanted};
use crate::digest::Digest;
use crate::guard::Intent;
use crate::workspace::Settings;

/// Where Gemini CLI reads settings, relative to the repository's root (or the home folder).
pub const SETTINGS: &str = ".gemini/settings.json";

/// The tools the hooks match.
pub const MATCHER: &str = "^(read_file|write_file|replace)$";

/// Handle one hook payload; the JSON to print on stdout, if any.
/// Gemini CLI's answer that stops the tool, `reason` going to the model.
pub fn deny(reason: &str) -> Value {
    json!({"decision": "deny", "reason": reason})
}

/// Whether the payload asks before a write: the call fail-closed denies when the hook itself
/// fails.
pub fn asks_before_write(v: &Value) -> bool {
    v["hook_event_name"] == "BeforeTool"
        && matches!(v["tool_name"].as_str(), Some("write_file" | "replace"))
}

pub fn handle(
    settings: &Settings,
    fallback_cwd: &Path,
    input: &[u8],
) -> Result<Option<Value>, Error> {
    let v = common::parse(input)?;
    let event = common::str_field(&v, "hook_event_name")?;
    let tool = v.get("tool_name").and_then(Value::as_str).unwrap_or("");
    if !matches!(tool, "read_file" | "write_file" | "replace") {
        return Ok(None);
    }
    let ti = v.get("tool_input").cloned().unwrap_or(Value::Null);
    let s = |k: &str| ti.get(k).and_then(Value::as_str);
    let Some(raw) = s("file_path") else {
        return Err(Error::Missing {
            field: "tool_input.file_path",
        });
    };
    let cwd = common::payload_cwd(&v, fallback_cwd);
    let id = common::session_for(common::str_field(&v, "session_id")?);
    let Some(ctx) = common::open(settings, &cwd, &id)? else {
        return Ok(None);
    };
    if event == "BeforeTool"
        && tool != "read_file"
        && let Some(why) = common::private(&ctx, &cwd, raw)
    {
        return Ok(Some(deny(&why)));
    }
    let Some(path) = common::resolve(&ctx, &cwd, raw) else {
        return Ok(None);
    };
    match (event, tool) {
        ("BeforeTool", "read_file") => {
            common::note_before_read(&ctx, &id, &path)?;
            Ok(None)
        }
        ("BeforeTool", _) => {
            let intent = Intent::Write {
                content: (tool == "write_file")
                    .then(|| s("content").map(|c| Digest::of(c.as_bytes())))
                    .flatten(),
            };
            Ok(common::guard_all(&ctx, &id, &[(path, intent)])?.map(|reason| deny(&reason)))
        }
        ("AfterTool", _)
            if v.pointer("/tool_response/error")
                .is_some_and(|e| !e.is_null()) =>
        {
            // The tool failed: nothing was read or written.
            Ok(None)
        }
        ("AfterTool", "read_file") => {
            let whole = ti.get("offset").is_none_or(Value::is_null)
                && ti.get("limit").is_none_or(Value::is_null);
            let shown = v
                .pointer("/tool_response/llmContent")
                .and_then(Value::as_str)
                .filter(|_| whole);
            common::record_read_after(&ctx, &id, &path, shown)?;
            Ok(None)
        }
        ("AfterTool", "write_file") => {
            common::record_written(&ctx, &id, &path, s("content").map(str::as_bytes))?;
            Ok(None)
        }
        ("AfterTool", "replace") => {
            let edit = (
                s("old_string").unwrap_or("").to_owned(),
                s("new_string").unwrap_or("").to_owned(),
                ti.get("allow_multiple").and_then(Value::as_bool) == Some(true),
            );
            common::record_edited(&ctx, &id, &path, &[edit])?;
            Ok(None)
        }
        _ => Ok(None),
    }
}

/// Gemini CLI's settings file at `path` ([`SETTINGS`] in a project or the home folder), and
/// Stella's hooks there, running the binary at `exe`.
pub fn hooks_file(path: PathBuf, exe: &Path) -> HooksFile {
    let command = super::install::hook_command(exe, "gemini");
    let handler = json!({"type": "command", "command": command, "name": "stella"});
    HooksFile {
        path,
        shape: Shape::Grouped,
        agent: "gemini",
        command,
        wanted: vec![
            Wanted {
                event: "BeforeTool",
                matcher: Some(MATCHER),
                handler: handler.clone(),
            },
            Wanted {
                event: "AfterTool",
                matcher: Some(MATCHER),
                handler,
            },
        ],
        header: None,
        shell_prefix: None,
    }
}
