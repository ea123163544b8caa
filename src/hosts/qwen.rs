//! `git stella hook qwen`: the guard for Qwen Code.
//!
//! Protocol checked against `@qwen-code/qwen-code` 0.24.4 from the npm registry, by running it
//! offline and reading its bundled hook code. Its hooks are Claude Code's in shape, with Qwen's
//! tool names: `.qwen/settings.json` (project) and `~/.qwen/settings.json` (user) hold
//! `hooks.PreToolUse` / `hooks.PostToolUse`, each a list of `{matcher, hooks: [{type: "command",
//! command}]}`. A payload carries `session_id`, `transcript_path`, `cwd`, `hook_event_name`,
//! `tool_name`, `tool_input` and `tool_use_id`; `PostToolUse` adds `tool_response`
//! (`llmContent`, `returnDisplay`). A failed tool fires `PostToolUseFailure` instead, which the
//! hooks do not ask for.
//!
//! The file tools: `read_file` (`file_path`, optional `offset`, `limit`, `pages`), `write_file`
//! (`file_path`, `content`), `edit` (`file_path`, `old_string`, `new_string`, `replace_all`),
//! `notebook_edit` (`notebook_path`). Paths are absolute. A deny is Claude Code's
//! `hookSpecificOutput.permissionDecision: "deny"` on stdout with exit 0: the model receives the
//! reason, exactly, as the tool's result, and the turn goes on.
//!
//! Qwen Code cannot rewrite a tool's input from a `PreToolUse` hook (0.24.4 reads only the
//! decision and extra context from it), so `run_shell_command` is not routed through the shell
//! guard: the hook notes which tracked files a command changed while it ran, and `doctor` says
//! so. A hook that crashes or times out lets the tool run in Qwen Code; Stella's answer is always
//! the explicit deny, well inside the timeout the installed hooks set.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};

use super::install::{HooksFile, Launch, Shape};
use super::registry::{self, Finding, Level, Look, Scope, Shell, Spec, Var, Wiring};
use super::{Answer, Edit, Error, Hook, Host, Op, ToolPayload, Writes};

/// The agent's name, as `git stella hook qwen` spells it.
pub(crate) const AGENT: &str = "qwen";

/// Where Qwen Code reads settings, relative to the repository's root (or the home folder).
pub(crate) const SETTINGS: &str = ".qwen/settings.json";

/// Qwen Code in the host registry.
pub(crate) const SPEC: Spec = Spec {
    flag: AGENT,
    name: "Qwen Code",
    answers: "Answer a Qwen Code hook (PreToolUse/PostToolUse on read_file, write_file, edit, run_shell_command)",
    project: SETTINGS,
    local: None,
    user: user_settings,
    wiring: Wiring::Settings(hooks_file),
    shell: Shell::Unrouted,
    answer: super::answer_boxed::<Qwen>,
    next_in_project: Some(NEXT),
    next_for_user: Some(NEXT),
    doctor: skipped,
};

const NEXT: &str = "next: Qwen Code runs a project's hooks unless folder trust is on and the folder is not trusted (then add it to ~/.qwen/trustedFolders.json); it cannot route its shell tool through Stella, so commands it runs are noticed, not guarded. 'git stella doctor' says both.";

fn user_settings(home: &Path, _: Var<'_>) -> PathBuf {
    home.join(SETTINGS)
}

/// What Qwen Code skips of Stella's: with folder trust on (`security.folderTrust.enabled` in
/// `~/.qwen/settings.json`; off by default) it loads no project settings, hooks included, in a
/// folder `~/.qwen/trustedFolders.json` does not trust; and it never routes its shell tool
/// through the shell guard (a `PreToolUse` hook cannot rewrite a command in 0.24.4).
fn skipped(look: &Look<'_>) -> Vec<Finding> {
    let Some(home) = look.home else {
        return Vec::new();
    };
    let mut out = vec![Finding::new(
        Level::Warn,
        AGENT,
        "Qwen Code cannot run its shell tool through Stella's shell guard: a file its commands change is noticed after, not refused".into(),
        Some("'git stella exec -- qwen …' runs the whole agent, shell included, under the shell guard".into()),
    )];
    let settings = registry::jsonc_file(&home.join(SETTINGS));
    let (Some(root), true, true) = (
        look.root,
        look.installed_in(Scope::Project),
        settings["security"]["folderTrust"]["enabled"] == true,
    ) else {
        return out;
    };
    let root = registry::resolved(root);
    let file = home.join(".qwen/trustedFolders.json");
    out.push(match registry::trust_rule(&file, &root).as_deref() {
        Some("TRUST_FOLDER" | "TRUST_PARENT") => Finding::new(
            Level::Ok,
            AGENT,
            format!("Qwen Code trusts {}", root.display()),
            None,
        ),
        _ => Finding::new(
            Level::Error,
            AGENT,
            format!(
                "Qwen Code's folder trust is on and it does not trust {}: it loads none of this project's hooks",
                root.display()
            ),
            Some(format!(
                "add \"{}\": \"TRUST_FOLDER\" to {}",
                root.display(),
                file.display()
            )),
        ),
    });
    out
}

/// The tools the hooks match (a regular expression on the tool's name).
pub(crate) const MATCHER: &str = "^(read_file|write_file|edit|notebook_edit|run_shell_command)$";

/// Seconds Qwen Code gives each hook before it gives up and lets the tool run: far above what a
/// guard takes, and below its default of 60, so a stuck store is reported sooner.
const TIMEOUT_S: u64 = 30;

/// The inputs of the file tools.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ToolInput {
    pub(crate) file_path: Option<String>,
    pub(crate) notebook_path: Option<String>,
    pub(crate) content: Option<String>,
    pub(crate) old_string: Option<String>,
    pub(crate) new_string: Option<String>,
    pub(crate) replace_all: Option<bool>,
    pub(crate) offset: Option<Value>,
    pub(crate) limit: Option<Value>,
    pub(crate) pages: Option<Value>,
}

/// Qwen Code.
pub(crate) struct Qwen;

impl Host for Qwen {
    const NAME: &'static str = AGENT;
    type Payload = ToolPayload;
    /// A hook that exits 1 or times out lets the tool run.
    const FAILS_OPEN: bool = true;

    fn handle(hook: &mut Hook, p: &ToolPayload) -> Result<Answer, Error> {
        let tool = p.tool_name.as_deref().unwrap_or_default();
        let Some(op) = op(p)? else {
            return Ok(Answer::nothing());
        };
        let ops = [op];
        match p.hook_event_name.as_str() {
            "PreToolUse" => Ok(match hook.before(&ops, p.tool_use_id.as_deref())? {
                Some(reason) => deny(&reason),
                None => Answer::nothing(),
            }),
            "PostToolUse" => {
                let told = hook.after(&ops, p.tool_use_id.as_deref(), tool)?;
                Ok(if told.is_empty() {
                    Answer::nothing()
                } else {
                    super::additional_context("PostToolUse", &told.join("\n\n"), None)
                })
            }
            _ => Ok(Answer::nothing()),
        }
    }

    fn deny(reason: &str) -> Answer {
        deny(reason)
    }

    /// Reads and shell commands are never denied: fail-closed is about writes.
    fn asks_before_write(raw: &Value) -> bool {
        raw["hook_event_name"] == "PreToolUse"
            && matches!(
                raw["tool_name"].as_str(),
                Some("write_file" | "edit" | "notebook_edit")
            )
    }
}

/// The tool call as Stella sees it; `None` for a tool it does not guard.
pub(crate) fn op(p: &ToolPayload) -> Result<Option<Op>, Error> {
    let tool = p.tool_name.as_deref().unwrap_or_default();
    if tool == "run_shell_command" {
        let Some(command) = p.tool_input.get("command").and_then(Value::as_str) else {
            return Err(Error::MissingField {
                field: "tool_input.command",
            });
        };
        return Ok(Some(Op::Shell {
            command: command.to_owned(),
            output: p.tool_response["returnDisplay"].as_str().map(str::to_owned),
        }));
    }
    if !matches!(tool, "read_file" | "write_file" | "edit" | "notebook_edit") {
        return Ok(None);
    }
    let ti = match &p.tool_input {
        Value::Null => ToolInput::default(),
        v => ToolInput::deserialize(v).map_err(|source| Error::Shape {
            host: Qwen::NAME,
            source,
        })?,
    };
    let Some(path) = ti.file_path.clone().or_else(|| ti.notebook_path.clone()) else {
        return Err(Error::MissingField {
            field: "tool_input.file_path",
        });
    };
    Ok(Some(match tool {
        "read_file" => {
            // A range, or a file over 1000 lines (shown with a "Showing lines" header), is a
            // partial read: only the bytes on disk can say what was read whole.
            let ranged = [&ti.offset, &ti.limit, &ti.pages]
                .iter()
                .any(|v| v.as_ref().is_some_and(|v| !v.is_null()));
            let shown = p.tool_response["llmContent"]
                .as_str()
                .filter(|text| !ranged && !text.starts_with("Showing lines "))
                .map(str::to_owned);
            Op::Read { path, shown }
        }
        "write_file" => Op::Write {
            path,
            how: ti.content.clone().map_or(Writes::Unknown, Writes::Content),
            original: None,
        },
        "edit" => Op::Write {
            path,
            how: Writes::Edits(vec![Edit {
                old: ti.old_string.clone().unwrap_or_default(),
                new: ti.new_string.clone().unwrap_or_default(),
                all: ti.replace_all == Some(true),
            }]),
            original: None,
        },
        _ => Op::Write {
            path,
            how: Writes::Unknown,
            original: None,
        },
    }))
}

/// Qwen Code's answer that stops the tool, `reason` going to the model: Claude Code's.
pub(crate) fn deny(reason: &str) -> Answer {
    super::deny_before_tool(reason)
}

/// Qwen Code's settings file at `path` ([`SETTINGS`] in a project or the home folder), and
/// Stella's hooks there, running Stella as `launch` says.
pub(crate) fn hooks_file(path: PathBuf, launch: &Launch) -> HooksFile {
    let handler = |command: &str| json!({"type": "command", "command": command, "name": "stella", "timeout": TIMEOUT_S});
    let events = [
        ("PreToolUse", Some(MATCHER), true),
        ("PostToolUse", Some(MATCHER), false),
    ];
    HooksFile {
        // Qwen Code reads its settings as JSON with comments, as Gemini CLI does.
        comments: true,
        ..HooksFile::new(path, Shape::Grouped, AGENT, launch, handler, &events)
    }
}
