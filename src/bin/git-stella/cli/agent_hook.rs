//! The Codex CLI, Gemini CLI and Cursor side of `git stella hook`.

use std::io::{Read, Write};
use std::process::ExitCode;

use super::{Ctx, Result};
use stella::hooks::{codex, common, cursor, gemini};

/// The agent CLIs whose adapters answer with one JSON object (or nothing).
#[derive(Clone, Copy, Debug)]
pub enum JsonAgent {
    Codex,
    Gemini,
    Cursor,
}

/// Answer one hook call: the agent's deny JSON on stdout for a stale write, exit 0 for every
/// handled outcome (never 2), exit 1 with the reason on stderr for an internal error.
pub fn answer(ctx: &mut Ctx<'_>, agent: JsonAgent, out: &mut dyn Write) -> Result {
    let mut input = Vec::new();
    std::io::stdin().lock().read_to_end(&mut input)?;
    let answer = match agent {
        JsonAgent::Codex => codex::handle(&ctx.settings, &ctx.cwd, &input),
        // Gemini CLI and Cursor parse stdout as JSON: "no opinion" is an empty object.
        JsonAgent::Gemini => gemini::handle(&ctx.settings, &ctx.cwd, &input)
            .map(|a| a.or_else(|| Some(serde_json::json!({})))),
        JsonAgent::Cursor => cursor::handle(&ctx.settings, &ctx.cwd, &input)
            .map(|a| a.or_else(|| Some(serde_json::json!({})))),
    };
    match answer {
        Ok(Some(v)) => {
            super::print_json(out, &v)?;
            Ok(ExitCode::SUCCESS)
        }
        Ok(None) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            let text = stella::hooks::error_text(&e);
            if let Some(deny) = fail_closed(agent, &ctx.settings, &ctx.cwd, &input, &text) {
                super::print_json(out, &deny)?;
                return Ok(ExitCode::SUCCESS);
            }
            let _ = write!(ctx.err, "{text}");
            Ok(ExitCode::from(1))
        }
    }
}

/// The deny answer for a hook that failed on a call before a write, in a project that chose
/// fail-closed (`.stella/config.toml` or `git config stella.hookOnError deny`); `None` lets the
/// host run the tool. Reads are never denied: fail-closed is about writes.
fn fail_closed(
    agent: JsonAgent,
    settings: &stella::workspace::Settings,
    fallback_cwd: &std::path::Path,
    input: &[u8],
    error: &str,
) -> Option<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_slice(input).ok()?;
    let (asks, deny): (_, fn(&str) -> serde_json::Value) = match agent {
        JsonAgent::Codex => (codex::asks_before_write(&v), codex::deny),
        JsonAgent::Gemini => (gemini::asks_before_write(&v), gemini::deny),
        JsonAgent::Cursor => (cursor::asks_before_write(&v), cursor::deny),
    };
    let cwd = common::payload_cwd(&v, fallback_cwd);
    if !asks {
        return None;
    }
    stella::hooks::deny_reason(settings, &cwd, error).map(|reason| deny(&reason))
}
