//! `git stella hook codex|gemini|cursor` and `git stella agent-hooks install|uninstall`.

use std::io::{Read, Write};
use std::process::ExitCode;

use clap::{Subcommand, ValueEnum};

use super::{CliError, Ctx, Result};
use crate::hooks::{codex, common, cursor, gemini};

/// Answer one hook call of an agent CLI: read its JSON on stdin, guard or record
///
/// Prints the agent's deny answer on stdout when a write would clobber a change this session
/// never saw, and exits 0 for every handled outcome (never 2, which these hosts read as a
/// block). Outside a git repository, or for a path outside the workspace, it does nothing. On an
/// internal error it says what went wrong on stderr and exits 1: the host lets the tool run.
#[derive(Subcommand, Debug)]
pub enum HookCommand {
    /// Answer a Codex CLI hook (PreToolUse/PostToolUse on apply_patch)
    Codex,
    /// Answer a Gemini CLI hook (BeforeTool/AfterTool on read_file, write_file, replace)
    Gemini,
    /// Answer a Cursor hook (preToolUse, beforeReadFile, afterFileEdit)
    Cursor,
}

/// An agent whose hooks Stella can wire.
#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum Agent {
    Codex,
    Gemini,
    Cursor,
}

/// Wire the guard into an agent's project hook settings, or take it out again
#[derive(Subcommand, Debug)]
pub enum AgentHooksCommand {
    /// Merge Stella's hooks into the agent's settings file, keeping everything already there
    Install(AgentArgs),
    /// Remove exactly the hooks 'install' added
    Uninstall(AgentArgs),
}

#[derive(clap::Args, Debug)]
pub struct AgentArgs {
    /// The agent: codex (.codex/hooks.json), gemini (.gemini/settings.json), cursor (.cursor/hooks.json)
    #[arg(long, value_enum)]
    pub agent: Agent,
}

pub fn run_hook(ctx: &mut Ctx<'_>, cmd: &HookCommand, out: &mut dyn Write) -> Result {
    let mut input = Vec::new();
    std::io::stdin().lock().read_to_end(&mut input)?;
    let answer = match cmd {
        HookCommand::Codex => codex::handle(&ctx.settings, &ctx.cwd, &input),
        HookCommand::Gemini => gemini::handle(&ctx.settings, &ctx.cwd, &input)
            // Gemini CLI parses stdout as JSON: "no opinion" is an empty object.
            .map(|a| a.or_else(|| Some(serde_json::json!({})))),
        HookCommand::Cursor => cursor::handle(&ctx.settings, &ctx.cwd, &input)
            .map(|a| a.or_else(|| Some(serde_json::json!({})))),
    };
    match answer {
        Ok(Some(v)) => {
            super::print_json(out, &v)?;
            Ok(ExitCode::SUCCESS)
        }
        Ok(None) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            let _ = writeln!(ctx.err, "stella: {}", common::describe(&e));
            Ok(ExitCode::from(1))
        }
    }
}

pub fn run_install(ctx: &mut Ctx<'_>, cmd: &AgentHooksCommand, _out: &mut dyn Write) -> Result {
    let context = ctx.open()?;
    let root = context.ws.root.clone();
    let (args, install) = match cmd {
        AgentHooksCommand::Install(a) => (a, true),
        AgentHooksCommand::Uninstall(a) => (a, false),
    };
    let (file, result) = match (args.agent, install) {
        (Agent::Codex, true) => (codex::settings_path(&root), codex::install(&root)),
        (Agent::Codex, false) => (codex::settings_path(&root), codex::uninstall(&root)),
        (Agent::Gemini, true) => (gemini::settings_path(&root), gemini::install(&root)),
        (Agent::Gemini, false) => (gemini::settings_path(&root), gemini::uninstall(&root)),
        (Agent::Cursor, true) => (cursor::settings_path(&root), cursor::install(&root)),
        (Agent::Cursor, false) => (cursor::settings_path(&root), cursor::uninstall(&root)),
    };
    let changed = result.map_err(|e| CliError::from_error(&e))?;
    let rel = file
        .strip_prefix(&root)
        .unwrap_or(&file)
        .display()
        .to_string();
    match (install, changed) {
        (true, true) => ctx.say(format_args!("installed Stella's hooks in {rel}")),
        (true, false) => ctx.say(format_args!("Stella's hooks are already in {rel}")),
        (false, true) => ctx.say(format_args!("removed Stella's hooks from {rel}")),
        (false, false) => ctx.say(format_args!("no Stella hooks in {rel}; nothing to remove")),
    }
    Ok(ExitCode::SUCCESS)
}
