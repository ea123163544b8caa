//! `git stella hook copilot`: the guard for GitHub Copilot CLI.
//!
//! Protocol checked against `@github/copilot` 1.0.102 from the npm registry, by running it
//! offline (its BYOK mode against a local model) and reading its `copilot help` pages. Hooks live
//! in `<repo>/.github/hooks/*.json` (or `$COPILOT_HOME/hooks/*.json` for the user), each file
//! `{"version": 1, "hooks": {"preToolUse": [entries], "postToolUse": [entries]}}`; Stella keeps
//! its entries in a file of its own, `stella.json`. Stella uses the camelCase events, the ones
//! Copilot CLI documents: their payload is `{sessionId, timestamp, cwd, toolName, toolArgs}`, and
//! `postToolUse` adds `toolResult {resultType, textResultForLlm}`. No tool call id is sent: the
//! two events of a call meet by path.
//!
//! The file tools: `view` (`path`, optional `view_range`), `create` (`path`, `file_text`),
//! `edit` (`path`, `old_str`, `new_str`), and for some models `apply_patch`, whose `toolArgs` is
//! the raw patch (Codex's format: `*** Add File:`, `*** Update File:`, `*** Delete File:`,
//! `*** Move to:`). A deny is `{"permissionDecision": "deny", "permissionDecisionReason": R}` on
//! stdout with exit 0 (the answer also carries Claude Code's `hookSpecificOutput` spelling of the
//! same, which Copilot CLI honours in its other dialect): the model reads `Denied by preToolUse
//! hook: R` and the turn goes on. An allowed call prints nothing: `"allow"` would grant the tool
//! a permission the user did not.
//!
//! `bash`: before it runs, the command is rewritten to run under the shell guard in this session
//! (`{"modifiedArgs": {…, "command": …}}`, which Copilot CLI runs instead of the model's
//! arguments), so a `cat` is a read and a stale overwrite is refused, the refusal in the command's
//! output. Where this machine cannot guard a command, it runs as sent and the hooks note which
//! tracked files it changed while it ran. In prompt mode
//! (`-p`) it loads a repository's hooks only in a trusted folder, silently skipping them
//! otherwise; `doctor` says so. A hook that exits 1 denies the call (Copilot CLI fails closed);
//! one that prints what is not JSON, or times out, lets it run.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};

use super::install::{HooksFile, Launch, Shape};
use super::registry::{self, Finding, Level, Look, Scope, Shell, Spec, Var, Wiring};
use super::{Answer, Edit, Error, Hook, Host, Op, Sited, Writes};

/// The agent's name, as `git stella hook copilot` spells it.
pub(crate) const AGENT: &str = "copilot";

/// Stella's hooks file, relative to the repository's root; a user's is `stella.json` in
/// `$COPILOT_HOME/hooks/`.
pub(crate) const SETTINGS: &str = ".github/hooks/stella.json";

/// Copilot CLI in the host registry.
pub(crate) const SPEC: Spec = Spec {
    flag: AGENT,
    name: "Copilot CLI",
    answers: "Answer a GitHub Copilot CLI hook (preToolUse/postToolUse on view, create, edit, apply_patch, bash)",
    project: SETTINGS,
    local: None,
    user: user_settings,
    wiring: Wiring::Settings(hooks_file),
    // Copilot CLI asks before a command that names a path outside the workspace, which no one
    // answers in a headless run: Stella is named as PATH finds it, when that is this binary.
    shell: Shell::Rewritten { by_name: true },
    answer: super::answer_boxed::<Copilot>,
    next_in_project: Some(
        "next: Copilot CLI runs a repository's hooks in prompt mode (-p) only in a trusted folder, and skips them without a word otherwise: trust it when Copilot CLI asks, or add it to trustedFolders in ~/.copilot/config.json (or run with --trust-folder). 'git stella doctor' says whether it will.",
    ),
    next_for_user: None,
    doctor: trust,
};

/// Copilot CLI's folder: `$COPILOT_HOME` when that is set, else `~/.copilot`.
fn copilot_home(home: &Path, var: Var<'_>) -> PathBuf {
    registry::folder_from(var, "COPILOT_HOME", || home.join(".copilot"))
}

fn user_settings(home: &Path, var: Var<'_>) -> PathBuf {
    copilot_home(home, var).join("hooks/stella.json")
}

/// What Copilot CLI skips of Stella's: in prompt mode (`-p`) it loads a repository's
/// hooks only in a trusted folder (`trustedFolders` in `$COPILOT_HOME/config.json`,
/// `COPILOT_ALLOW_ALL=true` or `GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true`), skipping them
/// silently otherwise, as Copilot CLI 1.0.102 does.
fn trust(look: &Look<'_>) -> Vec<Finding> {
    let (Some(home), Some(root), true) = (look.home, look.root, look.installed_in(Scope::Project))
    else {
        return Vec::new();
    };
    let config = copilot_home(home, look.var).join("config.json");
    let root = registry::resolved(root);
    let trusted = registry::jsonc_file(&config)["trustedFolders"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .any(|f| root.starts_with(registry::resolved(Path::new(f))));
    let on = |var| look.var_is_true(var);
    vec![
        if trusted || on("COPILOT_ALLOW_ALL") || on("GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS") {
            Finding::new(
                Level::Ok,
                AGENT,
                format!(
                    "Copilot CLI runs this repository's hooks in {}",
                    root.display()
                ),
                None,
            )
        } else {
            Finding::new(
                Level::Warn,
                AGENT,
                format!(
                    "Copilot CLI does not trust {}: in prompt mode (-p) it skips this repository's hooks without a word",
                    root.display()
                ),
                Some(format!(
                    "trust the folder when Copilot CLI asks, add it to trustedFolders in {}, or run 'copilot -p' with --trust-folder",
                    config.display()
                )),
            )
        },
    ]
}

/// Seconds Copilot CLI gives each hook (its default) before it lets the tool run.
const TIMEOUT_S: u64 = 30;

/// A camelCase hook payload of Copilot CLI.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Payload {
    pub(crate) session_id: String,
    #[serde(default)]
    pub(crate) cwd: Option<PathBuf>,
    #[serde(default)]
    pub(crate) tool_name: Option<String>,
    /// The model's arguments: an object, or for `apply_patch` the patch text.
    #[serde(default)]
    pub(crate) tool_args: Value,
    /// Present after the tool ran (`postToolUse`).
    #[serde(default)]
    pub(crate) tool_result: Option<Value>,
}

impl Sited for Payload {
    fn ids(&self) -> (&str, Option<&str>) {
        (&self.session_id, None)
    }

    fn cwd(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }
}

/// GitHub Copilot CLI.
pub(crate) struct Copilot;

impl Host for Copilot {
    const NAME: &'static str = AGENT;
    type Payload = Payload;
    /// A hook that times out or prints what is not JSON lets the tool run.
    const FAILS_OPEN: bool = true;

    fn handle(hook: &mut Hook, p: &Payload) -> Result<Answer, Error> {
        let tool = p.tool_name.as_deref().unwrap_or_default();
        if tool == "bash"
            && p.tool_result.is_none()
            && let Some(command) = p.tool_args.get("command").and_then(Value::as_str)
            && let Some(guarded) = hook.guarded_shell(command)
        {
            // The model's arguments whole, only the command replaced.
            let mut args = p.tool_args.clone();
            args["command"] = Value::String(guarded);
            return Ok(Answer::json(&json!({ "modifiedArgs": args })));
        }
        let ops = ops(p)?;
        if ops.is_empty() {
            return Ok(Answer::nothing());
        }
        match &p.tool_result {
            None => Ok(match hook.before(&ops, None)? {
                Some(reason) => deny(&reason),
                None => Answer::nothing(),
            }),
            // The tool failed or was denied: nothing was read or written.
            Some(result) if result["resultType"] != "success" => Ok(Answer::nothing()),
            Some(_) => {
                // What the model should be told goes nowhere Copilot CLI shows it after a tool;
                // it stays in the session for the next refusal to name.
                hook.after(&ops, None, tool)?;
                Ok(Answer::nothing())
            }
        }
    }

    fn deny(reason: &str) -> Answer {
        deny(reason)
    }

    /// Copilot CLI takes exit 1 as a deny: a failure that may let the tool run says so on
    /// stderr and exits 0.
    fn failed(e: &Error) -> Answer {
        Answer {
            code: 0,
            ..Answer::failed(e)
        }
    }

    fn asks_before_write(raw: &Value) -> bool {
        raw.get("toolResult").is_none_or(Value::is_null)
            && matches!(
                raw["toolName"].as_str(),
                Some("create" | "edit" | "apply_patch")
            )
    }
}

/// The calls a payload makes, as Stella sees them: none for a tool it does not guard.
pub(crate) fn ops(p: &Payload) -> Result<Vec<Op>, Error> {
    let args = &p.tool_args;
    let text = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_owned);
    let result = p
        .tool_result
        .as_ref()
        .and_then(|r| r["textResultForLlm"].as_str());
    let path = || {
        text("path").ok_or(Error::MissingField {
            field: "toolArgs.path",
        })
    };
    Ok(match p.tool_name.as_deref().unwrap_or_default() {
        "view" => {
            // A range, or a file too large to show at once, is a partial read.
            let ranged = args.get("view_range").is_some_and(|v| !v.is_null());
            let shown = result
                .filter(|t| !ranged && !t.starts_with("File too large to read at once"))
                .map(str::to_owned);
            vec![Op::Read {
                path: path()?,
                shown,
            }]
        }
        "create" => vec![Op::Write {
            path: path()?,
            how: text("file_text").map_or(Writes::Unknown, Writes::Content),
            original: None,
        }],
        "edit" => vec![Op::Write {
            path: path()?,
            how: Writes::Edits(vec![Edit {
                old: text("old_str").unwrap_or_default(),
                new: text("new_str").unwrap_or_default(),
                all: false,
            }]),
            original: None,
        }],
        "apply_patch" => {
            let Some(patch) = args.as_str() else {
                return Err(Error::MissingField { field: "toolArgs" });
            };
            super::patch::ops(&super::patch::parse(patch))
        }
        "bash" => match text("command") {
            Some(command) => vec![Op::Shell {
                command,
                output: result.map(str::to_owned),
            }],
            None => {
                return Err(Error::MissingField {
                    field: "toolArgs.command",
                });
            }
        },
        _ => Vec::new(),
    })
}

/// Copilot CLI's answer that stops the tool, `reason` going to the model: its flat spelling,
/// and Claude Code's beside it.
pub(crate) fn deny(reason: &str) -> Answer {
    Answer::json(&json!({
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        },
    }))
}

/// Stella's hooks file at `path` ([`SETTINGS`] in a project, or `stella.json` in the user's
/// hooks folder), with its `version`, running Stella as `launch` says.
pub(crate) fn hooks_file(path: PathBuf, launch: &Launch) -> HooksFile {
    let handler =
        |command: &str| json!({"type": "command", "command": command, "timeoutSec": TIMEOUT_S});
    let events = [("preToolUse", None, true), ("postToolUse", None, false)];
    HooksFile {
        header: Some(("version", json!(1))),
        ..HooksFile::new(path, Shape::Flat, AGENT, launch, handler, &events)
    }
}
