//! The Claude Code adapter (SPEC §7): one hook payload in, one [`Answer`] out.
//!
//! | event | what Stella does |
//! |---|---|
//! | `SessionStart` | get or create the session named from `session_id` (+ `agent_id`); remember `transcript_path`; on `resume`, tell the model which tracked files changed while it was away |
//! | `UserPromptSubmit` | remember `transcript_path` when it moved, capture the transcript (the host flushes it late), then begin a turn |
//! | `Stop` | remember `transcript_path` when it moved; a step carrying the transcript, then end the turn |
//! | `SessionEnd` | remember `transcript_path` when it moved; capture the transcript |
//! | `PreToolUse` Edit, MultiEdit, Write, NotebookEdit, MCP writes | the guard; a refusal is a `deny` with Stella's message |
//! | `PreToolUse` Read, MCP reads | remember the disk's digest |
//! | `PostToolUse` Read | record what the model saw ([`Hook::after_read`]) |
//! | `PostToolUse` Write, Edit, MultiEdit | record the bytes the tool meant to write; keep bytes it overwrote unseen |
//! | `PreToolUse`/`PostToolUse` Bash | note which tracked files changed while the command ran |
//!
//! Exit status is never 2: to Claude Code, 2 means "block" (and on other events "erase the
//! prompt" or "keep going"). A refusal is JSON on stdout with exit 0; an internal error is exit 1
//! with the reason on stderr (the host lets the tool run), unless the project chose fail-closed.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::{Value, json};

use super::{
    Access, Answer, Config, Env, Error, Hook, error_text, intended_bytes, renders_as, session_name,
};
use crate::digest::Digest;
use crate::guard::Intent;
use crate::journal::{MapEdit, RootEdit, Seen};
use crate::paths::RelPath;
use crate::session::Freshness;
use crate::turn::{Transcript, TurnError};

/// The agent's name, as `git stella hook claude-code` spells it.
pub const AGENT: &str = "claude-code";

/// The tools the installed hooks fire for (a regular expression, as Claude Code's `matcher`).
pub const TOOL_MATCHER: &str = "Read|Edit|MultiEdit|Write|NotebookEdit|Bash|mcp__.*";

/// Where the session's host settings live in its journal.
const HOST_FILE: &str = "hosts/claude-code.toml";

/// Read the payload with `read_input` and answer it, all within `budget`. When the budget runs
/// out first, `give_up` gets the answer to give instead (and ends the process: see
/// `within_budget`).
pub fn answer_within(
    env: Env,
    budget: Duration,
    read_input: impl FnOnce() -> std::io::Result<Vec<u8>>,
    give_up: impl FnOnce(Answer) + Send + 'static,
) -> Answer {
    let seen: Arc<OnceLock<Value>> = Arc::new(OnceLock::new());
    let watchdog_seen = Arc::clone(&seen);
    let watchdog_env = env.clone();
    super::within_budget(
        budget,
        || {
            let input = match read_input() {
                Ok(i) => i,
                Err(source) => {
                    return Answer::failed(&Error::Io {
                        op: "read the hook payload from",
                        path: PathBuf::from("stdin"),
                        source,
                    });
                }
            };
            let payload = match serde_json::from_slice::<Value>(&input) {
                Ok(p) => p,
                Err(e) => return on_failure(&env, None, &Error::BadPayload(e)),
            };
            let payload = seen.get_or_init(|| payload);
            answer_payload(&env, payload)
        },
        move |e| give_up(on_failure(&watchdog_env, watchdog_seen.get(), &e)),
    )
}

/// Answer one payload given as bytes.
pub fn answer(env: &Env, input: &[u8]) -> Answer {
    match serde_json::from_slice::<Value>(input) {
        Ok(p) => answer_payload(env, &p),
        Err(e) => on_failure(env, None, &Error::BadPayload(e)),
    }
}

fn answer_payload(env: &Env, payload: &Value) -> Answer {
    match handle(env, payload) {
        Ok(a) => a,
        Err(e) => on_failure(env, Some(payload), &e),
    }
}

/// The answer when the hook itself failed: exit 1 (the host lets the tool run), or, for a
/// write-like tool in a project that chose fail-closed, a deny naming the error.
pub fn on_failure(env: &Env, payload: Option<&Value>, e: &Error) -> Answer {
    let cwd = payload
        .and_then(|p| p["cwd"].as_str())
        .map(PathBuf::from)
        .unwrap_or_else(|| env.cwd.clone());
    // Reads and shell commands are never denied: fail-closed is about writes.
    let guarded_call = payload.is_some_and(|p| {
        let tool = p["tool_name"].as_str().unwrap_or_default();
        let read = matches!(tool, "Read" | "Bash")
            || (tool.starts_with("mcp__")
                && ["__read_file", "__read_text_file", "__read_media_file"]
                    .iter()
                    .any(|r| tool.ends_with(r)));
        p["hook_event_name"] == "PreToolUse" && !read
    });
    if guarded_call && let Some(reason) = super::deny_reason(&env.settings, &cwd, &error_text(e)) {
        return deny(&reason);
    }
    Answer::failed(e)
}

/// The deny answer: the model receives `reason` as the tool's error and the turn goes on.
pub fn deny(reason: &str) -> Answer {
    Answer::json(&json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }))
}

/// Context for the model (and, with `person`, a message shown to the person).
fn context(event: &str, for_model: &str, person: Option<&str>) -> Answer {
    let mut v = json!({
        "hookSpecificOutput": {
            "hookEventName": event,
            "additionalContext": for_model,
        }
    });
    if let Some(p) = person {
        v["systemMessage"] = json!(p);
    }
    Answer::json(&v)
}

fn str_field<'a>(p: &'a Value, field: &'static str) -> Result<&'a str, Error> {
    p[field].as_str().ok_or(Error::MissingField { field })
}

fn handle(env: &Env, p: &Value) -> Result<Answer, Error> {
    let event = str_field(p, "hook_event_name")?;
    let cwd = match p["cwd"].as_str() {
        Some(c) => env.cwd.join(c),
        None => env.cwd.clone(),
    };
    let session = session_name(str_field(p, "session_id")?, p["agent_id"].as_str())?;
    let Some(mut hook) = Hook::find(env, AGENT, &cwd, session)? else {
        return Ok(Answer::nothing());
    };
    let mut answer = match event {
        "SessionStart" => session_start(&mut hook, p)?,
        "UserPromptSubmit" => {
            hook.ensure_session()?;
            remember_transcript_path(&mut hook, p)?;
            capture_transcript(&mut hook, p)?;
            let id = hook.session.clone();
            hook.context()?.turn_begin(&id, p["prompt_id"].as_str())?;
            Answer::nothing()
        }
        "Stop" => {
            stop(&mut hook, p)?;
            Answer::nothing()
        }
        "SessionEnd" => {
            if hook.session_exists()? {
                remember_transcript_path(&mut hook, p)?;
                capture_transcript(&mut hook, p)?;
            }
            Answer::nothing()
        }
        // Under the shell guard, a Bash command's reads and writes are recorded by the guard
        // itself, call by call: nothing for the hook to note.
        "PreToolUse" | "PostToolUse" if env.shell_guard && p["tool_name"] == "Bash" => {
            Answer::nothing()
        }
        "PreToolUse" => pre_tool(&mut hook, p)?,
        "PostToolUse" => post_tool(&mut hook, p)?,
        _ => Answer::nothing(),
    };
    for n in &hook.notices {
        answer.stderr.push_str(&format!("stella: {n}\n"));
    }
    for w in &hook.warnings {
        answer.stderr.push_str(&format!("stella: warning: {w}\n"));
    }
    Ok(answer)
}

fn session_start(hook: &mut Hook, p: &Value) -> Result<Answer, Error> {
    hook.ensure_session()?;
    let id = hook.session.clone();
    remember_transcript_path(hook, p)?;
    capture_transcript(hook, p)?;
    if p["source"] != "resume" {
        return Ok(Answer::nothing());
    }
    let status = hook.context()?.status(&id)?;
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
    Ok(context("SessionStart", &text, None))
}

fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

/// Remember where the host writes the transcript (the session must exist): `checkpoint` reads
/// that file again, for the bytes written after the last hook call.
///
/// The payload's path wins, except a path that names no file over a remembered one that does.
/// `claude --resume ID` finds the transcript in any project folder under `~/.claude/projects/`
/// and keeps appending to it there, yet its `SessionStart` names the file under the current
/// folder's project folder (absent when the transcript was copied elsewhere, or the checkout is
/// another path than where the session began); its later events name the file it really writes.
fn remember_transcript_path(hook: &mut Hook, p: &Value) -> Result<(), Error> {
    let Some(path) = p["transcript_path"].as_str() else {
        return Ok(());
    };
    let text = format!("transcript_path = {}\n", toml_string(path));
    let id = hook.session.clone();
    let ctx = hook.context()?;
    let known = ctx.journal().root_file(&id, HOST_FILE)?;
    if known.as_deref() == Some(text.as_bytes()) {
        return Ok(());
    }
    let known_exists = known
        .as_deref()
        .and_then(|k| std::str::from_utf8(k).ok()?.parse::<toml::Table>().ok())
        .and_then(|t| t.get("transcript_path")?.as_str().map(PathBuf::from))
        .is_some_and(|k| k.is_file());
    if known_exists && !Path::new(path).is_file() {
        return Ok(());
    }
    let blob = ctx.journal().write_blob(text.as_bytes())?;
    hook.record(
        "remember transcript path",
        &[],
        Vec::new(),
        vec![RootEdit::Put {
            name: HOST_FILE.into(),
            blob,
        }],
    )
}

/// Store the transcript's new bytes, outside any turn step (the host may have flushed them
/// after the last `Stop`).
fn capture_transcript(hook: &mut Hook, p: &Value) -> Result<(), Error> {
    let Some((name, path)) = transcript(p) else {
        return Ok(());
    };
    let id = hook.session.clone();
    let captured = hook.context()?.capture_transcript(
        &id,
        Transcript {
            name: &name,
            path: &path,
        },
    );
    match captured {
        Ok(_) => Ok(()),
        Err(e) => skip_transcript(hook, e),
    }
}

/// A transcript that cannot be taken (see [`crate::turn::read_transcript_file`]) costs the
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
fn transcript(p: &Value) -> Option<(String, PathBuf)> {
    let path = PathBuf::from(p["transcript_path"].as_str()?);
    let name = path.file_name()?.to_str()?.to_owned();
    path.is_file().then_some((name, path))
}

fn stop(hook: &mut Hook, p: &Value) -> Result<(), Error> {
    if !hook.session_exists()? {
        return Ok(());
    }
    remember_transcript_path(hook, p)?;
    let id = hook.session.clone();
    let t = transcript(p);
    let ctx = hook.context()?;
    if ctx.resume_point(&id)?.is_none() {
        return capture_transcript(hook, p);
    }
    let stepped = ctx.step(
        &id,
        Some("the answer is finished"),
        t.as_ref().map(|(name, path)| Transcript { name, path }),
    );
    if let Err(e) = stepped {
        skip_transcript(hook, e)?;
        hook.context()?
            .step(&id, Some("the answer is finished"), None)?;
    }
    let ctx = hook.context()?;
    ctx.turn_end(&id)?;
    Ok(())
}

/// What a tool does to files, as far as the guard cares.
#[derive(Debug)]
enum Tool {
    Read {
        path: String,
        /// The text the host showed the model, when the tool says.
        rendered: Option<String>,
    },
    Write {
        path: String,
        how: Writes,
    },
    Move {
        from: String,
        to: String,
    },
    Bash {
        command: String,
    },
    Other,
}

#[derive(Debug)]
enum Writes {
    /// The whole content is known (Write, an MCP write_file).
    Content(String),
    /// Claude Code's Edit or MultiEdit: `tool_response.originalFile` with the edits applied.
    Edits,
    /// Only the disk says what was written (NotebookEdit, an MCP edit).
    Unknown,
}

/// The tools the reference filesystem MCP server offers, by their name after `mcp__<server>__`.
fn mcp_filesystem_tool(tool: &str, input: &Value) -> Option<Tool> {
    let path = || input["path"].as_str().map(str::to_owned);
    match tool {
        "read_file" | "read_text_file" | "read_media_file" => Some(Tool::Read {
            path: path()?,
            rendered: None,
        }),
        "write_file" => Some(Tool::Write {
            path: path()?,
            how: Writes::Content(input["content"].as_str()?.to_owned()),
        }),
        "edit_file" if input["dryRun"] != true => Some(Tool::Write {
            path: path()?,
            how: Writes::Unknown,
        }),
        "move_file" => Some(Tool::Move {
            from: input["source"].as_str()?.to_owned(),
            to: input["destination"].as_str()?.to_owned(),
        }),
        _ => None,
    }
}

fn classify(root: &Path, p: &Value) -> Result<Tool, Error> {
    let name = p["tool_name"].as_str().unwrap_or_default();
    let input = &p["tool_input"];
    let field = |f: &str| input[f].as_str().map(str::to_owned);
    let tool = match name {
        "Read" => field("file_path").map(|path| Tool::Read {
            path,
            rendered: p["tool_response"]["file"]["content"]
                .as_str()
                .map(str::to_owned),
        }),
        "Write" => field("file_path").map(|path| Tool::Write {
            path,
            how: match field("content") {
                Some(c) => Writes::Content(c),
                None => Writes::Unknown,
            },
        }),
        "Edit" | "MultiEdit" => field("file_path").map(|path| Tool::Write {
            path,
            how: Writes::Edits,
        }),
        "NotebookEdit" => field("notebook_path").map(|path| Tool::Write {
            path,
            how: Writes::Unknown,
        }),
        "Bash" => Some(Tool::Bash {
            command: field("command").unwrap_or_default(),
        }),
        // Only tools Stella knows, or that the project mapped, cost a config read.
        _ => {
            let config = Config::load(root)?;
            if let Some(m) = config.tool(name) {
                field(&m.path).map(|path| match m.access {
                    Access::Read => Tool::Read {
                        path,
                        rendered: None,
                    },
                    Access::Write => Tool::Write {
                        path,
                        how: match m.content.as_deref().and_then(field) {
                            Some(c) => Writes::Content(c),
                            None => Writes::Unknown,
                        },
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
    Ok(tool.unwrap_or(Tool::Other))
}

fn pre_tool(hook: &mut Hook, p: &Value) -> Result<Answer, Error> {
    let tool_use_id = p["tool_use_id"].as_str().unwrap_or("none");
    match classify(&hook.root, p)? {
        Tool::Read { path, .. } => {
            if let Some(path) = hook.resolve(&path) {
                hook.before_read(&path, tool_use_id)?;
            }
            Ok(Answer::nothing())
        }
        Tool::Write { path, how } => {
            if let Some(why) = hook.private(&path) {
                return Ok(deny(&why));
            }
            let Some(path) = hook.resolve(&path) else {
                return Ok(Answer::nothing());
            };
            // Write's If-Match: bytes already on disk lose nothing when written again.
            let content = match &how {
                Writes::Content(c) => Some(Digest::of(c.as_bytes())),
                _ => None,
            };
            guarded(hook, &[(path, Intent::Write { content })])
        }
        Tool::Move { from, to } => {
            if let Some(why) = hook.private(&from).or_else(|| hook.private(&to)) {
                return Ok(deny(&why));
            }
            let mut checks = Vec::new();
            if let Some(from) = hook.resolve(&from) {
                checks.push((from, Intent::Delete));
            }
            if let Some(to) = hook.resolve(&to) {
                checks.push((to, Intent::Write { content: None }));
            }
            guarded(hook, &checks)
        }
        Tool::Bash { command } => {
            hook.before_command(&command, tool_use_id)?;
            Ok(Answer::nothing())
        }
        Tool::Other => Ok(Answer::nothing()),
    }
}

/// Check each path; deny with every refusal's message when any is refused.
fn guarded(hook: &mut Hook, checks: &[(RelPath, Intent)]) -> Result<Answer, Error> {
    let mut refusals = Vec::new();
    for (path, intent) in checks {
        let check = hook.guard(path, *intent)?;
        if check.refused() {
            refusals.push(hook.refusal(&check)?);
        }
    }
    if refusals.is_empty() {
        Ok(Answer::nothing())
    } else {
        Ok(deny(&refusals.join("\n\n")))
    }
}

fn post_tool(hook: &mut Hook, p: &Value) -> Result<Answer, Error> {
    let tool_use_id = p["tool_use_id"].as_str().unwrap_or("none");
    let tool_name = p["tool_name"].as_str().unwrap_or_default();
    match classify(&hook.root, p)? {
        Tool::Read { path, rendered } => {
            if let Some(path) = hook.resolve(&path) {
                hook.after_read(&path, rendered.as_deref(), tool_use_id)?;
            }
            Ok(Answer::nothing())
        }
        Tool::Write { path, how } => {
            let Some(path) = hook.resolve(&path) else {
                return Ok(Answer::nothing());
            };
            after_write(hook, p, tool_name, tool_use_id, &path, how)
        }
        Tool::Move { from, to } => {
            let mut edits = Vec::new();
            let mut paths = Vec::new();
            if let Some(from) = hook.resolve(&from) {
                edits.push(MapEdit::Remove { path: from.clone() });
                paths.push(from);
            }
            if let Some(to) = hook.resolve(&to)
                && let Ok(bytes) = crate::fsutil::read_regular(&hook.abs(&to))
            {
                edits.push(hook.saw(&to, &bytes, None, true)?);
                paths.push(to);
            }
            if !edits.is_empty() {
                hook.record("moved", &paths, edits, Vec::new())?;
            }
            Ok(Answer::nothing())
        }
        Tool::Bash { .. } => {
            hook.after_command(tool_use_id)?;
            Ok(Answer::nothing())
        }
        Tool::Other => Ok(Answer::nothing()),
    }
}

/// Record the bytes a write meant to put at `path` — never the disk's, so a change made right
/// after the tool stays visible — and keep any bytes the tool overwrote that the session never
/// saw.
fn after_write(
    hook: &mut Hook,
    p: &Value,
    tool_name: &str,
    tool_use_id: &str,
    path: &RelPath,
    how: Writes,
) -> Result<Answer, Error> {
    let response = &p["tool_response"];
    let original = response["originalFile"].as_str();
    let disk = crate::fsutil::read_regular(&hook.abs(path)).ok();
    let first_origin = original.map(|o| Digest::of(o.as_bytes()));
    let edit = match how {
        Writes::Content(text) => hook.saw(
            path,
            &intended_bytes(&text, disk.as_deref()),
            first_origin,
            true,
        )?,
        Writes::Edits => match original.and_then(|o| apply_edits(o, p)) {
            Some(text) => hook.saw(
                path,
                &intended_bytes(&text, disk.as_deref()),
                first_origin,
                true,
            )?,
            // The edit cannot be replayed here: the session no longer knows what it wrote, so
            // the next write needs a re-read.
            None => MapEdit::Put {
                path: path.clone(),
                seen: Seen::Reread,
                bytes: None,
                first_origin,
                wrote: true,
                origin_bytes: None,
            },
        },
        Writes::Unknown => match &disk {
            Some(bytes) => hook.saw(path, bytes, first_origin, true)?,
            None => MapEdit::Remove { path: path.clone() },
        },
    };
    // The session's first sight of the file was this write: keep what it replaced, for undo.
    let mut edit = edit;
    if let (MapEdit::Put { origin_bytes, .. }, Some(original)) = (&mut edit, original)
        && hook.entry(path)?.is_none()
    {
        *origin_bytes = Some(hook.blob(original.as_bytes())?);
    }
    let mut root = Vec::new();
    let mut answer = Answer::nothing();
    if let Some(original) = original
        && let Some(blob) = overwritten(hook, path, original)?
    {
        let clean: String = tool_use_id
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        root.push(RootEdit::Put {
            name: format!("{}/{clean}", crate::journal::overwritten_dir(path)),
            blob,
        });
        let version = crate::journal::version_id(&Digest::of(original.as_bytes()));
        let text = format!(
            "Stella: {path} changed on disk after this session last read it and before {tool_name} ran (someone wrote to it in between, for example while a permission prompt waited), so {tool_name} overwrote their change. Their bytes are kept in Stella's journal; get them back with:\n  git stella recover '{path}' --show {version} > '{path}.overwritten'\nthen compare and merge what they changed."
        );
        answer = context("PostToolUse", &text, Some(&text));
    }
    hook.record("wrote", std::slice::from_ref(path), vec![edit], root)?;
    Ok(answer)
}

/// When `original` (the bytes the tool replaced) is not what the session last saw at `path`,
/// store it and return its blob: someone's change was overwritten unseen.
fn overwritten(
    hook: &mut Hook,
    path: &RelPath,
    original: &str,
) -> Result<Option<gix::ObjectId>, Error> {
    let Some(entry) = hook.entry(path)? else {
        return Ok(None);
    };
    let Seen::Digest(seen) = entry.seen else {
        return Ok(None);
    };
    if seen == Digest::of(original.as_bytes()) {
        return Ok(None);
    }
    if let Some((blob, _)) = entry.bytes {
        let bytes = hook.context()?.journal().blob(blob)?;
        if renders_as(&bytes, original) {
            return Ok(None);
        }
    }
    Ok(Some(hook.blob(original.as_bytes())?))
}

/// `original` with the payload's edits applied the way Claude Code applies them; `None` when an
/// edit does not apply literally (the host matched it some other way).
fn apply_edits(original: &str, p: &Value) -> Option<String> {
    let input = &p["tool_input"];
    let edits: Vec<(&str, &str, bool)> = match input["edits"].as_array() {
        Some(list) => list
            .iter()
            .map(|e| {
                Some((
                    e["old_string"].as_str()?,
                    e["new_string"].as_str()?,
                    e["replace_all"].as_bool().unwrap_or(false),
                ))
            })
            .collect::<Option<_>>()?,
        None => {
            // The response's strings are what ran (the person may have changed the proposal).
            let r = &p["tool_response"];
            vec![(
                r["oldString"].as_str().or(input["old_string"].as_str())?,
                r["newString"].as_str().or(input["new_string"].as_str())?,
                r["replaceAll"]
                    .as_bool()
                    .or(input["replace_all"].as_bool())
                    .unwrap_or(false),
            )]
        }
    };
    let mut text = original.to_owned();
    for (old, new, all) in edits {
        text = apply_edit(&text, old, new, all)?;
    }
    Some(text)
}

fn apply_edit(text: &str, old: &str, new: &str, all: bool) -> Option<String> {
    if old.is_empty() {
        // Claude Code's way of creating content in an empty file.
        return text.is_empty().then(|| new.to_owned());
    }
    // Deleting a whole line takes its line ending with it, as Claude Code does.
    let with_nl = format!("{old}\n");
    let old = if new.is_empty() && !old.ends_with('\n') && text.contains(&with_nl) {
        with_nl.as_str()
    } else {
        old
    };
    if !text.contains(old) {
        return None;
    }
    Some(if all {
        text.replace(old, new)
    } else {
        text.replacen(old, new, 1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_apply_like_the_host() {
        let p = json!({"tool_input": {"old_string": "beta", "new_string": "BETA"}, "tool_response": {}});
        assert_eq!(apply_edits("alpha\nbeta\n", &p).unwrap(), "alpha\nBETA\n");
        let multi = json!({"tool_input": {"edits": [
            {"old_string": "a", "new_string": "b", "replace_all": true},
            {"old_string": "c\n", "new_string": ""}
        ]}});
        assert_eq!(apply_edits("aac\nd\n", &multi).unwrap(), "bbd\n");
        let gone = json!({"tool_input": {"old_string": "x", "new_string": "y"}});
        assert_eq!(apply_edits("abc", &gone), None);
        let delete_line = json!({"tool_input": {"old_string": "two", "new_string": ""}});
        assert_eq!(
            apply_edits("one\ntwo\nthree\n", &delete_line).unwrap(),
            "one\nthree\n"
        );
    }

    #[test]
    fn answers_are_computed_in_process_and_never_exit_2() {
        let tmp = tempfile::tempdir().unwrap();
        let env = Env {
            settings: crate::workspace::Settings::new(tmp.path().join("stella")),
            cwd: tmp.path().to_owned(),
            shell_guard: false,
        };
        // Outside any repository: nothing done, nothing written.
        let payload = json!({"session_id": "s", "cwd": tmp.path(), "hook_event_name": "PreToolUse",
            "tool_name": "Edit", "tool_input": {"file_path": tmp.path().join("a")}});
        assert_eq!(
            answer(&env, payload.to_string().as_bytes()),
            Answer::nothing()
        );
        assert!(!tmp.path().join("stella").exists());
        let bad = answer(&env, b"{");
        assert_eq!((bad.code, bad.stdout.is_empty()), (1, true));
        assert!(
            bad.stderr
                .starts_with("stella: error: the hook payload is not valid JSON\n")
        );
        // Hung work: the watchdog gives the budget's answer while the work is still going.
        let (tx, rx) = std::sync::mpsc::channel();
        let started = std::time::Instant::now();
        let slow = crate::hooks::within_budget(
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
        let quick = crate::hooks::within_budget(Duration::from_secs(5), Answer::nothing, |_| {
            panic!("the watchdog fired for work done in time")
        });
        assert_eq!(quick, Answer::nothing());
        // A panic in the work is the hook's own failure (exit 1), not a crash.
        let panicked =
            crate::hooks::within_budget(Duration::from_secs(5), || panic!("boom"), |_| {});
        assert_eq!(panicked.code, 1);
    }

    #[test]
    fn mcp_filesystem_tools_are_known_by_their_names() {
        let root = Path::new("/nonexistent");
        let p = json!({"tool_name": "mcp__filesystem__write_file", "tool_input": {"path": "/r/a", "content": "x"}});
        assert!(matches!(
            classify(root, &p).unwrap(),
            Tool::Write {
                how: Writes::Content(_),
                ..
            }
        ));
        let p = json!({"tool_name": "mcp__fs__move_file", "tool_input": {"source": "/r/a", "destination": "/r/b"}});
        assert!(matches!(classify(root, &p).unwrap(), Tool::Move { .. }));
        let p = json!({"tool_name": "mcp__fs__list_directory", "tool_input": {"path": "/r"}});
        assert!(matches!(classify(root, &p).unwrap(), Tool::Other));
    }
}
