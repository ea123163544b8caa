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
use super::patch::{self, PatchOp};
use super::registry::{self, Finding, Level, Look, Scope, Shell, Spec, Var, Wiring};
use super::{Answer, Error, Hook, Host, Op, ToolPayload};

/// The agent's name, as `git stella hook codex` spells it.
pub(crate) const AGENT: &str = "codex";

/// Where Codex reads hooks, relative to the repository's root (or the home folder).
pub(crate) const SETTINGS: &str = ".codex/hooks.json";

/// The tools the hooks match: the patch tool and the shell (a regular expression, as in Claude
/// Code's settings).
pub(crate) const MATCHER: &str = "^(apply_patch|Bash)$";

/// Codex CLI in the host registry.
pub(crate) const SPEC: Spec = Spec {
    flag: AGENT,
    name: "Codex",
    answers: "Answer a Codex CLI hook (PreToolUse/PostToolUse on apply_patch and Bash)",
    project: SETTINGS,
    local: None,
    user: user_settings,
    wiring: Wiring::Settings(hooks_file),
    shell: Shell::Rewritten { by_name: false },
    answer: super::answer_boxed::<Codex>,
    next_in_project: Some(
        "next: Codex runs a project's hooks only in a project it trusts, and each only once you trust it: start 'codex' here, trust the project, then open /hooks and trust Stella's hooks (again after an upgrade changes them); 'codex exec' skips an untrusted hook without a word. 'git stella doctor' says whether Codex will run them.",
    ),
    next_for_user: Some(
        "next: Codex runs a hook only once you trust it: start 'codex', open /hooks and trust Stella's hooks (again after an upgrade changes them); 'codex exec' skips an untrusted hook without a word. 'git stella doctor' says whether Codex will run them.",
    ),
    doctor: trust,
};

/// Codex's folder: `$CODEX_HOME` when that is set, else `~/.codex`.
fn codex_home(home: &Path, var: Var<'_>) -> PathBuf {
    registry::folder_from(var, "CODEX_HOME", || home.join(".codex"))
}

/// The user's hooks, in Codex's folder.
fn user_settings(home: &Path, var: Var<'_>) -> PathBuf {
    codex_home(home, var).join("hooks.json")
}

/// Codex runs a project's hooks only in a trusted project, and each hook only once trusted by
/// hash (`/hooks` in Codex); `codex exec` skips an untrusted one without a word.
fn trust(look: &Look<'_>) -> Vec<Finding> {
    let Some(home) = look.home else {
        return Vec::new();
    };
    let config = codex_home(home, look.var).join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap_or_default();
    let parsed: toml::Table = toml::from_str(&text).unwrap_or_default();
    let hint = Some(
        "start codex in this project, trust it, and trust Stella's hooks in /hooks".to_owned(),
    );
    if let Some(root) = look.root
        && look.installed_in(Scope::Project)
    {
        let trusted = parsed
            .get("projects")
            .and_then(|p| p.get(root.to_string_lossy().as_ref()))
            .and_then(|p| p.get("trust_level"))
            .and_then(|t| t.as_str())
            == Some("trusted");
        if !trusted {
            return vec![Finding::new(
                Level::Error,
                AGENT,
                format!(
                    "Codex does not trust the project {}: it loads none of its hooks",
                    root.display()
                ),
                hint,
            )];
        }
    }
    let hooks_trusted = look.seen.iter().filter(|s| s.stella).all(|s| {
        let prefix = format!("{}:", s.path.display());
        parsed
            .get("hooks")
            .and_then(|h| h.get("state"))
            .and_then(|s| s.as_table())
            .is_some_and(|state| {
                state
                    .iter()
                    .any(|(k, v)| k.starts_with(&prefix) && v.get("trusted_hash").is_some())
            })
    });
    vec![if hooks_trusted {
        Finding::new(Level::Ok, AGENT, "Codex trusts Stella's hooks".into(), None)
    } else {
        Finding::new(
            Level::Error,
            AGENT,
            format!(
                "Codex has not trusted Stella's hooks (no trusted_hash in {}): it skips them silently",
                config.display()
            ),
            hint,
        )
    }]
}

/// Codex CLI.
pub(crate) struct Codex;

impl Host for Codex {
    const NAME: &'static str = AGENT;
    type Payload = ToolPayload;

    fn handle(hook: &mut Hook, p: &ToolPayload) -> Result<Answer, Error> {
        // A patch Codex applied itself from the shell fired no after-event: settle it first.
        for deferred in hook.take_deferred() {
            if let Some((dir, patch)) = heredoc_patch(&deferred) {
                hook.after(&ops_in(dir, &patch::parse(patch)), None, "apply_patch")?;
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
        let ops = patch::ops(&patch::parse(patch));
        let key = p.tool_use_id.as_deref();
        match p.hook_event_name.as_str() {
            "PreToolUse" => Ok(hook
                .before(&ops, key)?
                .map_or_else(Answer::nothing, |r| super::deny_before_tool(&r))),
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
        super::deny_before_tool(reason)
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
        let ops = ops_in(dir, &patch::parse(patch));
        if let Some(refusal) = hook.before(&ops, key)? {
            return Ok(super::deny_before_tool(&refusal));
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
pub(crate) fn heredoc_patch(command: &str) -> Option<(Option<&str>, &str)> {
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
    patch::ops(&moved)
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

/// Codex's hooks file at `path` ([`SETTINGS`] in a project or the home folder), and Stella's
/// entries there, running the binary at `exe`.
pub(crate) fn hooks_file(path: PathBuf, launch: &Launch) -> HooksFile {
    let handler = |command: &str| json!({"type": "command", "command": command});
    let events = [
        ("PreToolUse", Some(MATCHER), true),
        ("PostToolUse", Some(MATCHER), false),
    ];
    HooksFile {
        // Before the shell was guarded, only the patch tool was matched.
        former_matchers: &["apply_patch"],
        ..HooksFile::new(path, Shape::Grouped, AGENT, launch, handler, &events)
    }
}
