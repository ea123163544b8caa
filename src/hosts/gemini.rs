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

use serde::Deserialize;
use serde_json::{Value, json};

use super::install::{HooksFile, Launch, Shape};
use super::registry::{self, Finding, Level, Look, Scope, Shell, Spec, Var, Wiring};
use super::{Answer, Edit, Error, Hook, Host, Op, ToolPayload, Writes};

/// The agent's name, as `git stella hook gemini` spells it.
pub(crate) const AGENT: &str = "gemini";

/// Gemini CLI in the host registry.
pub(crate) const SPEC: Spec = Spec {
    flag: AGENT,
    name: "Gemini CLI",
    answers: "Answer a Gemini CLI hook (BeforeTool/AfterTool on read_file, write_file, replace, run_shell_command)",
    project: SETTINGS,
    local: None,
    user: user_settings,
    wiring: Wiring::Settings(hooks_file),
    shell: Shell::Rewritten { by_name: false },
    answer: super::answer_boxed::<Gemini>,
    next_in_project: Some(
        "next: Gemini CLI runs a project's hooks only in a folder you trust: choose \"Trust folder\" when it asks; headless, add the folder to ~/.gemini/trustedFolders.json or set GEMINI_CLI_TRUST_WORKSPACE=true. Its --skip-trust flag loads no project settings, so these hooks would not run: for runs with it, install with --user. 'git stella doctor' says whether Gemini CLI trusts the folder.",
    ),
    next_for_user: None,
    doctor: trust,
};

fn user_settings(home: &Path, _: Var<'_>) -> PathBuf {
    home.join(SETTINGS)
}

/// Gemini CLI loads a project's settings, hooks included, only in a trusted folder:
/// `GEMINI_CLI_TRUST_WORKSPACE=true`, or the longest rule of `~/.gemini/trustedFolders.json` (or
/// `GEMINI_CLI_TRUSTED_FOLDERS_PATH`) that covers the folder (`TRUST_PARENT` covering the
/// rule's parent) saying `TRUST_FOLDER` or `TRUST_PARENT`, as Gemini CLI 0.61.0 decides.
fn trust(look: &Look<'_>) -> Vec<Finding> {
    let (Some(home), Some(root), true) = (look.home, look.root, look.installed_in(Scope::Project))
    else {
        return Vec::new();
    };
    let hint = Some(
        "choose \"Trust folder\" when Gemini CLI asks; headless, add the folder to ~/.gemini/trustedFolders.json or set GEMINI_CLI_TRUST_WORKSPACE=true (not --skip-trust, which loads no project settings)".to_owned(),
    );
    if look.var_is_true("GEMINI_CLI_TRUST_WORKSPACE") {
        return vec![Finding::new(
            Level::Ok,
            AGENT,
            "Gemini CLI trusts this folder (GEMINI_CLI_TRUST_WORKSPACE=true)".into(),
            None,
        )];
    }
    let file = (look.var)("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        .map_or_else(|| home.join(".gemini/trustedFolders.json"), PathBuf::from);
    let root = registry::resolved(root);
    vec![match registry::trust_rule(&file, &root).as_deref() {
        Some("TRUST_FOLDER" | "TRUST_PARENT") => Finding::new(
            Level::Ok,
            AGENT,
            format!("Gemini CLI trusts {}", root.display()),
            None,
        ),
        Some("DO_NOT_TRUST") => Finding::new(
            Level::Error,
            AGENT,
            format!(
                "Gemini CLI does not trust {} ({}): it loads none of its hooks",
                root.display(),
                file.display()
            ),
            hint,
        ),
        _ => Finding::new(
            Level::Warn,
            AGENT,
            format!(
                "Gemini CLI has not been told to trust {}: it asks when it starts, and until then (or headless) loads none of its hooks",
                root.display()
            ),
            hint,
        ),
    }]
}

/// Where Gemini CLI reads settings, relative to the repository's root (or the home folder).
pub(crate) const SETTINGS: &str = ".gemini/settings.json";

/// The tools the hooks match.
pub(crate) const MATCHER: &str = "^(read_file|write_file|replace|run_shell_command)$";

/// The inputs of the file tools: `read_file` (`file_path`; a range as `start_line`/`end_line`,
/// or `offset`/`limit` in older builds), `write_file` (`file_path`, `content`), `replace`
/// (`file_path`, `old_string`, `new_string`, `allow_multiple`).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ToolInput {
    pub(crate) file_path: Option<String>,
    pub(crate) content: Option<String>,
    pub(crate) old_string: Option<String>,
    pub(crate) new_string: Option<String>,
    pub(crate) allow_multiple: Option<bool>,
    pub(crate) start_line: Option<Value>,
    pub(crate) end_line: Option<Value>,
    pub(crate) offset: Option<Value>,
    pub(crate) limit: Option<Value>,
}

/// What `AfterTool` says the tool did.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolResponse {
    pub(crate) llm_content: Option<Value>,
    pub(crate) error: Option<Value>,
}

/// The typed input and response of a payload's file tool.
pub(crate) fn typed(p: &ToolPayload) -> Result<(ToolInput, Option<ToolResponse>), Error> {
    let shape = |source| Error::Shape {
        host: Gemini::NAME,
        source,
    };
    let input = match &p.tool_input {
        Value::Null => ToolInput::default(),
        v => ToolInput::deserialize(v).map_err(shape)?,
    };
    let response = match &p.tool_response {
        Value::Null => None,
        v => Some(ToolResponse::deserialize(v).map_err(shape)?),
    };
    Ok((input, response))
}

/// Gemini CLI.
pub(crate) struct Gemini;

impl Host for Gemini {
    const NAME: &'static str = AGENT;
    type Payload = ToolPayload;

    fn handle(hook: &mut Hook, p: &ToolPayload) -> Result<Answer, Error> {
        let tool = p.tool_name.as_deref().unwrap_or_default();
        if tool == "run_shell_command" {
            return shell(hook, p);
        }
        if !matches!(tool, "read_file" | "write_file" | "replace") {
            return Ok(Gemini::nothing(p));
        }
        let (ti, response) = typed(p)?;
        let Some(path) = ti.file_path.clone() else {
            return Err(Error::MissingField {
                field: "tool_input.file_path",
            });
        };
        let op = match tool {
            "read_file" => {
                let ranged = [&ti.start_line, &ti.end_line, &ti.offset, &ti.limit]
                    .iter()
                    .any(|v| v.as_ref().is_some_and(|v| !v.is_null()));
                let shown = response
                    .as_ref()
                    .and_then(|r| r.llm_content.as_ref()?.as_str())
                    .filter(|_| !ranged)
                    .map(str::to_owned);
                Op::Read { path, shown }
            }
            "write_file" => Op::Write {
                path,
                how: ti.content.clone().map_or(Writes::Unknown, Writes::Content),
                original: None,
            },
            _ => Op::Write {
                path,
                how: Writes::Edits(vec![Edit {
                    old: ti.old_string.clone().unwrap_or_default(),
                    new: ti.new_string.clone().unwrap_or_default(),
                    all: ti.allow_multiple == Some(true),
                }]),
                original: None,
            },
        };
        let ops = [op];
        match p.hook_event_name.as_str() {
            "BeforeTool" => Ok(match hook.before(&ops, None)? {
                Some(reason) => deny(&reason),
                None => Gemini::nothing(p),
            }),
            // The tool failed: nothing was read or written.
            "AfterTool"
                if response
                    .as_ref()
                    .is_some_and(|r| r.error.as_ref().is_some_and(|e| !e.is_null())) =>
            {
                Ok(Gemini::nothing(p))
            }
            "AfterTool" => {
                let told = hook.after(&ops, None, tool)?;
                Ok(after_answer(p, &told))
            }
            _ => Ok(Gemini::nothing(p)),
        }
    }

    /// Gemini CLI parses stdout as JSON: "no opinion" is an empty object.
    fn nothing(_p: &ToolPayload) -> Answer {
        Answer::json(&json!({}))
    }

    fn deny(reason: &str) -> Answer {
        deny(reason)
    }

    fn asks_before_write(raw: &Value) -> bool {
        raw["hook_event_name"] == "BeforeTool"
            && matches!(
                raw["tool_name"].as_str(),
                Some("write_file" | "replace" | "run_shell_command")
            )
    }
}

/// `run_shell_command`. Before it runs, the command is rewritten to run under the shell guard in
/// this session ([`Hook::guarded_shell`]; Gemini CLI runs the call with
/// `hookSpecificOutput.tool_input` and tells the model a hook changed it): its reads are recorded and a stale write
/// refused, the refusal reaching the model in the command's output. Where this machine cannot
/// guard a command, it runs as it is and the hook notes which tracked files changed while it ran.
fn shell(hook: &mut Hook, p: &ToolPayload) -> Result<Answer, Error> {
    let Some(command) = p.tool_input.get("command").and_then(Value::as_str) else {
        return Err(Error::MissingField {
            field: "tool_input.command",
        });
    };
    let op = [Op::Shell {
        command: command.to_owned(),
        // After it ran: what it printed (`returnDisplay`; `llmContent` wraps the same text).
        output: p.tool_response["returnDisplay"].as_str().map(str::to_owned),
    }];
    match p.hook_event_name.as_str() {
        "BeforeTool" => match hook.guarded_shell(command) {
            // The model's whole input with only the command replaced: 0.61.0 builds the call
            // from this alone, so a field left out (`dir_path`, `is_background`) would be lost.
            Some(guarded) => {
                let mut input = p.tool_input.clone();
                input["command"] = Value::String(guarded);
                Ok(Answer::json(&json!({"hookSpecificOutput": {
                    "hookEventName": "BeforeTool",
                    "tool_input": input,
                }})))
            }
            None => {
                hook.before(&op, None)?;
                Ok(Gemini::nothing(p))
            }
        },
        "AfterTool" => {
            hook.after(&op, None, "run_shell_command")?;
            Ok(Gemini::nothing(p))
        }
        _ => Ok(Gemini::nothing(p)),
    }
}

/// The AfterTool answer: what the model should be told, appended to the tool's result
/// (`hookSpecificOutput.additionalContext`, which Gemini CLI wraps in `<hook_context>`).
fn after_answer(p: &ToolPayload, told: &[String]) -> Answer {
    if told.is_empty() {
        return Gemini::nothing(p);
    }
    Answer::json(&json!({"hookSpecificOutput": {
        "hookEventName": "AfterTool",
        "additionalContext": told.join("\n\n"),
    }}))
}

/// Gemini CLI's answer that stops the tool, `reason` going to the model.
pub(crate) fn deny(reason: &str) -> Answer {
    Answer::json(&json!({"decision": "deny", "reason": reason}))
}

/// Gemini CLI's settings file at `path` ([`SETTINGS`] in a project or the home folder), and
/// Stella's hooks there, running the binary at `exe`.
pub(crate) fn hooks_file(path: PathBuf, launch: &Launch) -> HooksFile {
    let handler = |command: &str| json!({"type": "command", "command": command, "name": "stella"});
    let events = [
        ("BeforeTool", Some(MATCHER), true),
        ("AfterTool", Some(MATCHER), false),
    ];
    HooksFile {
        // Before the shell was guarded, only the file tools were matched.
        former_matchers: &["^(read_file|write_file|replace)$"],
        // Gemini CLI strips comments from its settings before it parses them.
        comments: true,
        ..HooksFile::new(path, Shape::Grouped, AGENT, launch, handler, &events)
    }
}
