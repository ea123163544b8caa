//! `git stella hook opencode`: the guard for OpenCode.
//!
//! Protocol checked against `opencode-ai` 1.18.33 from the npm registry, by running it offline.
//! OpenCode has no command hooks: a plugin (a JavaScript file it loads from
//! `.opencode/plugins/`, or `$XDG_CONFIG_HOME/opencode/plugins/` for the user) gets
//! `tool.execute.before(input {tool, sessionID, callID}, output {args})` and
//! `tool.execute.after(input {…, args}, output {title, output, metadata})`. Stella's plugin
//! (`plugin`) is plain JavaScript that needs nothing installed: it runs this command with the
//! call as Claude Code's payload shape (`hook_event_name` `tool.execute.before` or
//! `tool.execute.after`, `session_id`, `cwd`, `tool_name`, `tool_input`, `tool_response`,
//! `tool_use_id` the model's call id) and acts on the answer: `{"decision": "deny", "reason": R}`
//! makes it throw R, which OpenCode hands the model word for word as the tool's result while the
//! turn goes on; `{"command": C}` makes it run C instead of the model's shell command (OpenCode
//! runs the arguments as mutated in place). An answer it cannot get or read (Stella not
//! installed, a crash, a timeout) refuses a call that writes: OpenCode runs a tool whatever a
//! plugin failed to say, so the plugin fails closed itself.
//!
//! The file tools: `read` (`filePath`, optional `offset`, `limit`; the model sees numbered lines,
//! so the disk says what was read), `write` (`filePath`, `content`), `edit` (`filePath`,
//! `oldString`, `newString`, `replaceAll`), and for `gpt-` models `apply_patch` (`patchText`,
//! Codex's format). `bash` is routed through the shell guard in the session. OpenCode runs no
//! plugin under `--pure` (or `OPENCODE_PURE=1`, or `OPENCODE_DISABLE_PROJECT_CONFIG=1` for a
//! project's), and skips one with a syntax error without a word: `doctor` checks the plugin is
//! Stella's, whole.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::install::Launch;
use super::registry::{self, Finding, Level, Look, Shell, Spec, Var, Wiring};
use super::{Answer, Edit, Error, Hook, Host, Op, ToolPayload, Writes};

/// The agent's name, as `git stella hook opencode` spells it.
pub(crate) const AGENT: &str = "opencode";

/// Stella's plugin, relative to the repository's root.
pub(crate) const PLUGIN: &str = ".opencode/plugins/stella.js";

/// The first line of Stella's plugin: how an install knows the file is Stella's.
pub(crate) const MARK: &str =
    "// Stella's guard for OpenCode, written by 'git stella hooks install --agent opencode'.";

/// OpenCode in the host registry.
pub(crate) const SPEC: Spec = Spec {
    flag: AGENT,
    name: "OpenCode",
    answers: "Answer Stella's OpenCode plugin (tool.execute.before/after on read, write, edit, apply_patch, bash)",
    project: PLUGIN,
    local: None,
    user: user_plugin,
    wiring: Wiring::OwnFile {
        text: plugin,
        mark: MARK,
        command_of,
    },
    // As Copilot CLI's: named as PATH finds it.
    shell: Shell::Rewritten { by_name: true },
    answer: super::answer_boxed::<OpenCode>,
    next_in_project: Some(NEXT),
    next_for_user: Some(NEXT),
    doctor: pure,
};

const NEXT: &str = "next: OpenCode loads the plugin at its next start; it runs no plugin under --pure (or OPENCODE_PURE=1), and no project plugin with OPENCODE_DISABLE_PROJECT_CONFIG=1. 'git stella doctor' checks the plugin is Stella's, whole.";

/// The user's plugin: in OpenCode's config folder (`$XDG_CONFIG_HOME/opencode`, else
/// `~/.config/opencode`).
fn user_plugin(home: &Path, var: Var<'_>) -> PathBuf {
    registry::folder_from(var, "XDG_CONFIG_HOME", || home.join(".config"))
        .join("opencode/plugins/stella.js")
}

/// OpenCode runs no plugin under `--pure` (`OPENCODE_PURE`), and no project's with
/// `OPENCODE_DISABLE_PROJECT_CONFIG`.
fn pure(look: &Look<'_>) -> Vec<Finding> {
    ["OPENCODE_PURE", "OPENCODE_DISABLE_PROJECT_CONFIG"]
        .into_iter()
        .filter(|var| look.var(var).is_some_and(|v| v != "0" && v != "false"))
        .map(|var| {
            Finding::new(
                Level::Error,
                AGENT,
                format!("{var} is set: OpenCode runs without Stella's plugin here"),
                Some(format!("unset {var} (and do not run OpenCode with --pure)")),
            )
        })
        .collect()
}

/// OpenCode.
pub(crate) struct OpenCode;

impl Host for OpenCode {
    const NAME: &'static str = AGENT;
    type Payload = ToolPayload;
    /// OpenCode runs a tool whatever a plugin failed to say.
    const FAILS_OPEN: bool = true;

    fn handle(hook: &mut Hook, p: &ToolPayload) -> Result<Answer, Error> {
        let tool = p.tool_name.as_deref().unwrap_or_default();
        let before = p.hook_event_name == "tool.execute.before";
        if tool == "bash"
            && before
            && let Some(command) = p.tool_input.get("command").and_then(Value::as_str)
            && let Some(guarded) = hook.guarded_shell(command)
        {
            return Ok(Answer::json(&json!({ "command": guarded })));
        }
        let ops = ops(p)?;
        if ops.is_empty() {
            return Ok(Answer::json(&json!({})));
        }
        let key = p.tool_use_id.as_deref();
        if before {
            return Ok(match hook.before(&ops, key)? {
                Some(reason) => deny(&reason),
                None => Answer::json(&json!({})),
            });
        }
        hook.after(&ops, key, tool)?;
        Ok(Answer::json(&json!({})))
    }

    fn nothing(_p: &ToolPayload) -> Answer {
        Answer::json(&json!({}))
    }

    fn deny(reason: &str) -> Answer {
        deny(reason)
    }

    /// The plugin refuses a write it gets no answer for: a failure that may let the tool run
    /// answers `{}`, the error on stderr.
    fn failed(e: &Error) -> Answer {
        Answer {
            code: 0,
            stdout: b"{}\n".to_vec(),
            ..Answer::failed(e)
        }
    }

    fn asks_before_write(raw: &Value) -> bool {
        raw["hook_event_name"] == "tool.execute.before"
            && matches!(
                raw["tool_name"].as_str(),
                Some("write" | "edit" | "apply_patch" | "bash")
            )
    }
}

/// The calls a payload makes, as Stella sees them: none for a tool it does not guard.
pub(crate) fn ops(p: &ToolPayload) -> Result<Vec<Op>, Error> {
    let args = &p.tool_input;
    let text = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_owned);
    let path = || {
        text("filePath").ok_or(Error::MissingField {
            field: "tool_input.filePath",
        })
    };
    Ok(match p.tool_name.as_deref().unwrap_or_default() {
        // The model sees numbered lines: what was read is what the disk held around the read.
        "read" => vec![Op::Read {
            path: path()?,
            shown: None,
        }],
        "write" => vec![Op::Write {
            path: path()?,
            how: text("content").map_or(Writes::Unknown, Writes::Content),
            original: None,
        }],
        "edit" => vec![Op::Write {
            path: path()?,
            how: Writes::Edits(vec![Edit {
                old: text("oldString").unwrap_or_default(),
                new: text("newString").unwrap_or_default(),
                all: args.get("replaceAll").and_then(Value::as_bool) == Some(true),
            }]),
            original: None,
        }],
        "apply_patch" => match text("patchText") {
            Some(patch) => super::patch::ops(&super::patch::parse(&patch)),
            None => {
                return Err(Error::MissingField {
                    field: "tool_input.patchText",
                });
            }
        },
        "bash" => match text("command") {
            Some(command) => vec![Op::Shell {
                command,
                output: p.tool_response["metadata"]["output"]
                    .as_str()
                    .map(str::to_owned),
            }],
            None => Vec::new(),
        },
        _ => Vec::new(),
    })
}

/// The answer that makes Stella's plugin refuse the call, `reason` going to the model.
pub(crate) fn deny(reason: &str) -> Answer {
    Answer::json(&json!({"decision": "deny", "reason": reason}))
}

/// Stella's plugin, running Stella as `launch` says: found on each machine for a project's
/// (committed), this binary for a user's.
pub(crate) fn plugin(launch: &Launch) -> String {
    plugin_running(&match launch {
        Launch::At(exe) => super::install::hook_command(exe, AGENT),
        Launch::Found => super::install::portable_command(AGENT, false),
    })
}

/// The command line Stella's plugin `text` runs, when `text` is whole Stella's plugin for it.
pub fn command_of(text: &str) -> Option<String> {
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("const COMMAND = "))?;
    let command: String = serde_json::from_str(line).ok()?;
    (plugin_running(&command) == text).then_some(command)
}

/// Stella's plugin running `command` (a shell command line) for each call.
fn plugin_running(command: &str) -> String {
    let command = serde_json::to_string(command).expect("a string serialises");
    format!(
        r#"{MARK}
// It asks Stella before each tool call and tells it after; a write Stella cannot answer for is
// refused. Plain JavaScript: OpenCode loads it with nothing to install. Remove it with
// 'git stella hooks uninstall --agent opencode'.
import {{ spawnSync }} from "node:child_process"

const COMMAND = {command}
const WRITES = new Set(["write", "edit", "apply_patch", "bash"])

export const StellaGuard = async ({{ directory }}) => {{
  const ask = (payload) => {{
    const run = spawnSync("/bin/sh", ["-c", COMMAND], {{
      input: JSON.stringify(payload),
      encoding: "utf8",
      cwd: directory,
      timeout: 30000,
    }})
    if (run.error || run.status !== 0) {{
      const why = (run.stderr || "").trim() || (run.error ? String(run.error) : `exit status ${{run.status}}`)
      return {{ failed: why }}
    }}
    try {{
      return JSON.parse(run.stdout.trim() || "{{}}")
    }} catch {{
      return {{ failed: `Stella's answer is not JSON: ${{run.stdout.slice(0, 200)}}` }}
    }}
  }}
  const payload = (event, input, args, response) => ({{
    hook_event_name: event,
    session_id: input.sessionID,
    cwd: directory,
    tool_name: input.tool,
    tool_input: args,
    tool_response: response ?? null,
    tool_use_id: input.callID,
  }})
  return {{
    "tool.execute.before": async (input, output) => {{
      const answer = ask(payload("tool.execute.before", input, output.args))
      if (answer.failed !== undefined) {{
        if (WRITES.has(input.tool)) {{
          throw new Error(`Stella could not check this call, so it was refused: ${{answer.failed}}`)
        }}
        return
      }}
      if (answer.decision === "deny") throw new Error(answer.reason)
      if (typeof answer.command === "string") output.args.command = answer.command
    }},
    "tool.execute.after": async (input, output) => {{
      // Never throws: OpenCode would report a done write as failed.
      try {{
        ask(payload("tool.execute.after", input, input.args, output))
      }} catch {{}}
    }},
  }}
}}
"#
    )
}
