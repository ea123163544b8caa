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

use super::install::{HooksFile, Shape, Wanted};
use super::{Answer, Edit, Error, Hook, Host, Op, Writes};

/// Where Gemini CLI reads settings, relative to the repository's root (or the home folder).
pub const SETTINGS: &str = ".gemini/settings.json";

/// The tools the hooks match.
pub const MATCHER: &str = "^(read_file|write_file|replace)$";

/// A Gemini CLI hook payload (checked against the captured payloads in `tests/fixtures`).
#[derive(Debug, Deserialize)]
pub struct Payload {
    pub hook_event_name: String,
    pub session_id: String,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(default)]
    pub tool_input: ToolInput,
    #[serde(default)]
    pub tool_response: Option<ToolResponse>,
}

/// The inputs of the file tools: `read_file` (`file_path`; a range as `start_line`/`end_line`,
/// or `offset`/`limit` in older builds), `write_file` (`file_path`, `content`), `replace`
/// (`file_path`, `old_string`, `new_string`, `allow_multiple`).
#[derive(Debug, Default, Deserialize)]
pub struct ToolInput {
    pub file_path: Option<String>,
    pub content: Option<String>,
    pub old_string: Option<String>,
    pub new_string: Option<String>,
    pub allow_multiple: Option<bool>,
    pub start_line: Option<Value>,
    pub end_line: Option<Value>,
    pub offset: Option<Value>,
    pub limit: Option<Value>,
}

/// What `AfterTool` says the tool did.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResponse {
    pub llm_content: Option<Value>,
    pub error: Option<Value>,
}

/// Gemini CLI.
pub struct Gemini;

impl Host for Gemini {
    const NAME: &'static str = "gemini";
    type Payload = Payload;

    fn ids(p: &Payload) -> (&str, Option<&str>) {
        (&p.session_id, None)
    }

    fn cwd(p: &Payload) -> Option<&Path> {
        p.cwd.as_deref()
    }

    fn handle(hook: &mut Hook, p: &Payload) -> Result<Answer, Error> {
        let tool = p.tool_name.as_deref().unwrap_or_default();
        if !matches!(tool, "read_file" | "write_file" | "replace") {
            return Ok(Gemini::nothing(p));
        }
        let ti = &p.tool_input;
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
                let shown = p
                    .tool_response
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
                if p.tool_response
                    .as_ref()
                    .is_some_and(|r| r.error.as_ref().is_some_and(|e| !e.is_null())) =>
            {
                Ok(Gemini::nothing(p))
            }
            "AfterTool" => {
                hook.after(&ops, None, tool)?;
                Ok(Gemini::nothing(p))
            }
            _ => Ok(Gemini::nothing(p)),
        }
    }

    /// Gemini CLI parses stdout as JSON: "no opinion" is an empty object.
    fn nothing(_p: &Payload) -> Answer {
        Answer::json(&json!({}))
    }

    fn deny(reason: &str) -> Answer {
        deny(reason)
    }

    fn asks_before_write(raw: &Value) -> bool {
        raw["hook_event_name"] == "BeforeTool"
            && matches!(raw["tool_name"].as_str(), Some("write_file" | "replace"))
    }
}

/// Gemini CLI's answer that stops the tool, `reason` going to the model.
pub fn deny(reason: &str) -> Answer {
    Answer::json(&json!({"decision": "deny", "reason": reason}))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_captured_payload_parses() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gemini-cli-0.61.0");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                let text = std::fs::read_to_string(&path).unwrap();
                let p: Result<Payload, _> = serde_json::from_str(&text);
                assert!(p.is_ok(), "{}: {:?}", path.display(), p.err());
                n += 1;
            }
        }
        assert!(n >= 10, "only {n} captured payloads");
    }
}
