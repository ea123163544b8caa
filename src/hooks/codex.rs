//! `git stella hook codex`: the guard for OpenAI's Codex CLI.
//!
//! Protocol checked against `@openai/codex` 0.171.0 from the npm registry: the JSON Schemas of
//! `pre-tool-use.command.input`/`.output` and `post-tool-use.command.input` embedded in the
//! `codex` binary of `@openai/codex@0.171.0-linux-x64`. Hooks live in `.codex/hooks.json` (or
//! `~/.codex/hooks.json`) in Claude Code's shape: event, matcher group, command handlers. The
//! payload carries `session_id`, `cwd`, `tool_name`, `tool_input` (and `tool_response` after).
//!
//! Codex edits files with one tool, `apply_patch`, whose raw patch arrives in
//! `tool_input.command`; the paths come from its `*** Add File:`, `*** Update File:`,
//! `*** Delete File:` and `*** Move to:` headers. Codex reads through the shell, which tells no
//! hook what was read, so the session's map holds only what its own patches wrote: a file it
//! never patched is a blind write and passes, and a file it patched and someone changed since is
//! refused.
//!
//! A deny is `hookSpecificOutput.permissionDecision: "deny"` with a non-empty
//! `permissionDecisionReason`, exit 0. Codex rejects `permissionDecision: "allow"` as unsupported,
//! so an allowed call prints nothing. Paths in the headers may be relative to `cwd` or absolute
//! (both seen in captures from Codex 0.155.1 and 0.164.0 reported upstream).
//!
//! Known limits of the host, from Codex's issue tracker: before 0.123.0 `apply_patch` fired no
//! hooks at all (openai/codex#16732); 0.136.0 skipped PostToolUse for some `apply_patch` calls
//! (#26729); a function-call `apply_patch` may bypass the patch handler's hooks (#26751); and on
//! Windows a PreToolUse deny for `apply_patch` was reported as not enforced, the write going
//! ahead (#27833, open). Where the host ignores the deny, the guard is advisory for patches.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::install::{HooksFile, Launch, Shape};
use super::{Answer, Edit, Error, Hook, Host, Op, ToolPayload, Writes};

/// Where Codex reads hooks, relative to the repository's root (or the home folder).
pub const SETTINGS: &str = ".codex/hooks.json";

/// The tools the hooks match: the patch tool and the shell (a regular expression, as in Claude
/// Code's settings).
pub const MATCHER: &str = "^(apply_patch|Bash)$";

/// Codex CLI.
pub struct Codex;

impl Host for Codex {
    const NAME: &'static str = "codex";
    type Payload = ToolPayload;

    const ROUTES_SHELL: bool = true;

    fn handle(hook: &mut Hook, p: &ToolPayload) -> Result<Answer, Error> {
        // A patch Codex applied itself from the shell fired no after-event: settle it first.
        for deferred in hook.take_deferred() {
            if let Some((dir, patch)) = heredoc_patch(&deferred) {
                hook.after(&ops_in(dir, &parse_patch(patch)), None, "apply_patch")?;
            }
        }
        match p.tool_name.as_deref() {
            Some("apply_patch") => {}
            Some("Bash") => return shell(hook, p),
            _ => return Ok(Answer::nothing()),
        }
        let Some(patch) = patch_text(&p.tool_input) else {
            return Err(Error::MissingField {
                field: "tool_input.command",
            });
        };
        let ops = patch_ops(&parse_patch(patch));
        let key = p.tool_use_id.as_deref();
        match p.hook_event_name.as_str() {
            "PreToolUse" => Ok(hook
                .before(&ops, key)?
                .map_or_else(Answer::nothing, |r| deny(&r))),
            "PostToolUse" => {
                let told = hook.after(&ops, key, "apply_patch")?;
                Ok(if told.is_empty() {
                    Answer::nothing()
                } else {
                    Answer::json(&json!({"hookSpecificOutput": {
                        "hookEventName": "PostToolUse",
                        "additionalContext": told.join("\n\n"),
                    }}))
                })
            }
            _ => Ok(Answer::nothing()),
        }
    }

    fn deny(reason: &str) -> Answer {
        deny(reason)
    }

    fn asks_before_write(raw: &Value) -> bool {
        raw["hook_event_name"] == "PreToolUse"
            && matches!(raw["tool_name"].as_str(), Some("apply_patch" | "Bash"))
    }
}

/// A shell command (`Bash`). Before it runs, it is rewritten to run under the shell guard in
/// this session ([`Hook::guarded_shell`]): its reads are recorded and a stale write refused,
/// the refusal reaching the model in the command's output. Where this machine cannot guard a
/// command, it runs as it is and the hook notes which tracked files changed while it ran.
///
/// An `apply_patch <<'EOF'` heredoc is Codex's own patch tool in the shell's clothes: Codex
/// applies it itself, in its process, and fires no after-event. Its files are checked like an
/// `apply_patch` call's (a stale one denies the whole patch), it is not rewritten (that would
/// take it from Codex), and what it wrote is recorded by the session's next hook call.
fn shell(hook: &mut Hook, p: &ToolPayload) -> Result<Answer, Error> {
    let Some(command) = p.tool_input.get("command").and_then(Value::as_str) else {
        return Err(Error::MissingField {
            field: "tool_input.command",
        });
    };
    let key = p.tool_use_id.as_deref();
    let pre = p.hook_event_name == "PreToolUse";
    if let Some((dir, patch)) = heredoc_patch(command) {
        if !pre {
            return Ok(Answer::nothing());
        }
        let ops = ops_in(dir, &parse_patch(patch));
        if let Some(refusal) = hook.before(&ops, key)? {
            return Ok(deny(&refusal));
        }
        hook.defer(key.unwrap_or("none"), command)?;
        return Ok(Answer::nothing());
    }
    let op = [Op::Shell {
        command: command.to_owned(),
        // After it ran: what it printed, which is what the model reads.
        output: p.tool_response.as_str().map(str::to_owned),
    }];
    match (pre, hook.guarded_shell(command)) {
        (true, Some(guarded)) => {
            let mut input = p.tool_input.clone();
            input["command"] = Value::String(guarded);
            Ok(Answer::json(&json!({"hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "updatedInput": input,
            }})))
        }
        (true, None) => {
            hook.before(&op, key)?;
            Ok(Answer::nothing())
        }
        (false, _) => {
            hook.after(&op, key, "Bash")?;
            Ok(Answer::nothing())
        }
    }
}

/// The folder and patch of an `apply_patch` heredoc, as Codex recognises one:
/// `[cd DIR && ]apply_patch <<'EOF'` (or `applypatch`, any delimiter, quoted or not), the patch,
/// then the delimiter alone on its line.
pub fn heredoc_patch(command: &str) -> Option<(Option<&str>, &str)> {
    let command = command.trim_start();
    let (dir, rest) = match command.strip_prefix("cd ") {
        Some(rest) => {
            let (dir, rest) = rest.split_once("&&")?;
            (
                Some(dir.trim().trim_matches(['\'', '"'])),
                rest.trim_start(),
            )
        }
        None => (None, command),
    };
    let rest = rest
        .strip_prefix("apply_patch")
        .or_else(|| rest.strip_prefix("applypatch"))?;
    let rest = rest.trim_start().strip_prefix("<<")?;
    let (head, body) = rest.split_once('\n')?;
    let delimiter = head.trim().trim_matches(['\'', '"']);
    if delimiter.is_empty() {
        return None;
    }
    let mut offset = 0;
    for line in body.split_inclusive('\n') {
        if line.trim_end() == delimiter {
            return Some((dir, &body[..offset]));
        }
        offset += line.len();
    }
    None
}

/// A patch's operations with its relative paths taken from `dir` (`cd DIR && apply_patch`).
fn ops_in(dir: Option<&str>, patch: &[PatchOp]) -> Vec<Op> {
    let join = |p: &str| match dir {
        Some(d) if !Path::new(p).is_absolute() => {
            Path::new(d).join(p).to_string_lossy().into_owned()
        }
        _ => p.to_owned(),
    };
    let moved: Vec<PatchOp> = patch
        .iter()
        .map(|op| match op {
            PatchOp::Add { path, content } => PatchOp::Add {
                path: join(path),
                content: content.clone(),
            },
            PatchOp::Delete { path } => PatchOp::Delete { path: join(path) },
            PatchOp::Update {
                path,
                move_to,
                hunks,
            } => PatchOp::Update {
                path: join(path),
                move_to: move_to.as_deref().map(join),
                hunks: hunks.clone(),
            },
        })
        .collect();
    patch_ops(&moved)
}

/// A patch's file operations in the core's words: an Update is edits (its hunks) to what the
/// session saw, and with `*** Move to:` a move carrying them.
/// The calls a parsed patch makes, as Stella sees them (Copilot CLI's `apply_patch` too).
pub fn patch_ops(patch: &[PatchOp]) -> Vec<Op> {
    patch
        .iter()
        .map(|op| match op {
            PatchOp::Add { path, content } => Op::Write {
                path: path.clone(),
                how: Writes::Content(content.clone()),
                original: None,
            },
            PatchOp::Delete { path } => Op::Delete { path: path.clone() },
            PatchOp::Update {
                path,
                move_to,
                hunks,
            } => {
                let edits = Writes::Edits(
                    hunks
                        .iter()
                        .map(|(old, new)| Edit {
                            old: old.clone(),
                            new: new.clone(),
                            all: false,
                        })
                        .collect(),
                );
                match move_to {
                    Some(to) => Op::Move {
                        from: path.clone(),
                        to: to.clone(),
                        how: edits,
                    },
                    None => Op::Write {
                        path: path.clone(),
                        how: edits,
                        original: None,
                    },
                }
            }
        })
        .collect()
}

/// One file operation of a patch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatchOp {
    Add {
        path: String,
        content: String,
    },
    Delete {
        path: String,
    },
    Update {
        path: String,
        move_to: Option<String>,
        /// Each hunk as (old text, new text): context and `-` lines, context and `+` lines.
        hunks: Vec<(String, String)>,
    },
}

/// Parse an `apply_patch` envelope into its file operations, in order. Lines outside any file
/// section (`*** Begin Patch`, `*** End Patch`) are ignored; so is anything this parser does not
/// know, since Codex itself validates the patch.
pub fn parse_patch(patch: &str) -> Vec<PatchOp> {
    let mut ops = Vec::new();
    let mut hunk: Option<(Vec<&str>, Vec<&str>)> = None;
    let flush = |ops: &mut Vec<PatchOp>, hunk: &mut Option<(Vec<&str>, Vec<&str>)>| {
        if let (Some((old, new)), Some(PatchOp::Update { hunks, .. })) =
            (hunk.take(), ops.last_mut())
            && !(old.is_empty() && new.is_empty())
        {
            hunks.push((old.join("\n"), new.join("\n")));
        }
    };
    for line in patch.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if let Some(p) = line.strip_prefix("*** Add File: ") {
            flush(&mut ops, &mut hunk);
            ops.push(PatchOp::Add {
                path: p.trim().to_owned(),
                content: String::new(),
            });
        } else if let Some(p) = line.strip_prefix("*** Delete File: ") {
            flush(&mut ops, &mut hunk);
            ops.push(PatchOp::Delete {
                path: p.trim().to_owned(),
            });
        } else if let Some(p) = line.strip_prefix("*** Update File: ") {
            flush(&mut ops, &mut hunk);
            ops.push(PatchOp::Update {
                path: p.trim().to_owned(),
                move_to: None,
                hunks: Vec::new(),
            });
            hunk = Some((Vec::new(), Vec::new()));
        } else if let Some(p) = line.strip_prefix("*** Move to: ") {
            if let Some(PatchOp::Update { move_to, .. }) = ops.last_mut() {
                *move_to = Some(p.trim().to_owned());
            }
        } else if line.starts_with("*** ") {
            // *** End Patch, *** End of File
            flush(&mut ops, &mut hunk);
        } else if line.starts_with("@@") {
            flush(&mut ops, &mut hunk);
            if matches!(ops.last(), Some(PatchOp::Update { .. })) {
                hunk = Some((Vec::new(), Vec::new()));
            }
        } else {
            match ops.last_mut() {
                Some(PatchOp::Add { content, .. }) => {
                    if let Some(l) = line.strip_prefix('+') {
                        content.push_str(l);
                        content.push('\n');
                    }
                }
                Some(PatchOp::Update { .. }) => {
                    if let Some((old, new)) = hunk.as_mut() {
                        if let Some(l) = line.strip_prefix('-') {
                            old.push(l);
                        } else if let Some(l) = line.strip_prefix('+') {
                            new.push(l);
                        } else {
                            let l = line.strip_prefix(' ').unwrap_or(line);
                            old.push(l);
                            new.push(l);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    flush(&mut ops, &mut hunk);
    ops
}

/// The patch text of an `apply_patch` call: `tool_input.command` (also accepted: the input
/// itself as a string, or `patch`/`input`, the shapes older builds used).
fn patch_text(tool_input: &Value) -> Option<&str> {
    match tool_input {
        Value::String(s) => Some(s),
        Value::Object(o) => ["command", "patch", "input"]
            .iter()
            .find_map(|k| o.get(*k).and_then(Value::as_str)),
        _ => None,
    }
}

/// Codex's answer that stops the patch, `reason` going to the model.
pub fn deny(reason: &str) -> Answer {
    Answer::json(&json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
    }}))
}

/// Codex's hooks file at `path` ([`SETTINGS`] in a project or the home folder), and Stella's
/// entries there, running the binary at `exe`.
pub fn hooks_file(path: PathBuf, launch: &Launch) -> HooksFile {
    let handler = |command: &str| json!({"type": "command", "command": command});
    let events = [
        ("PreToolUse", Some(MATCHER), true),
        ("PostToolUse", Some(MATCHER), false),
    ];
    HooksFile {
        // Before the shell was guarded, only the patch tool was matched.
        former_matchers: &["apply_patch"],
        ..HooksFile::new(path, Shape::Grouped, "codex", launch, handler, &events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patches_with_several_files_moves_and_deletes_parse() {
        let patch = "*** Begin Patch\n\
*** Add File: docs/new.md\n\
+# New\n\
+body\n\
*** Update File: src/a.rs\n\
@@ fn main() {\n\
 fn main() {\n\
-    old();\n\
+    new();\n\
 }\n\
*** Update File: src/old_name.rs\n\
*** Move to: src/new_name.rs\n\
@@\n\
-x\n\
+y\n\
*** Delete File: src/gone.rs\n\
*** End Patch\n";
        assert_eq!(
            parse_patch(patch),
            vec![
                PatchOp::Add {
                    path: "docs/new.md".into(),
                    content: "# New\nbody\n".into()
                },
                PatchOp::Update {
                    path: "src/a.rs".into(),
                    move_to: None,
                    hunks: vec![(
                        "fn main() {\n    old();\n}".into(),
                        "fn main() {\n    new();\n}".into()
                    )]
                },
                PatchOp::Update {
                    path: "src/old_name.rs".into(),
                    move_to: Some("src/new_name.rs".into()),
                    hunks: vec![("x".into(), "y".into())]
                },
                PatchOp::Delete {
                    path: "src/gone.rs".into()
                },
            ]
        );
    }
}
