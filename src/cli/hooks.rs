use std::io::Write;
use std::process::ExitCode;

use super::{CliError, Ctx, Result};
use crate::hooks::install::{self, Outcome};

/// Wire Stella into an agent host's hooks or git's, or take it out again
#[derive(clap::Subcommand, Debug)]
pub enum HooksCommand {
    Install(Args),
    Uninstall(Args),
}

/// The agents whose hooks Stella can install.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum Agent {
    /// Claude Code: .claude/settings.json (or ~/.claude/settings.json with --user)
    ClaudeCode,
    /// Codex CLI: .codex/hooks.json
    Codex,
    /// Gemini CLI: .gemini/settings.json
    Gemini,
    /// Cursor: .cursor/hooks.json
    Cursor,
}

/// Install (or uninstall) Stella's hooks
///
/// --agent claude-code merges Stella's entries into '.claude/settings.json' at the repository's
/// root (or '~/.claude/settings.json' with --user), keeping every key and hook already there;
/// running it twice changes nothing more. The command it writes is the absolute path of this
/// git-stella binary, so it works whether or not git-stella is on the PATH Claude Code sees:
/// run install again after moving the binary.
///
/// --git installs a 'prepare-commit-msg' hook (where 'core.hooksPath' says, if set) that adds a
/// 'Stella-Session: <id>' trailer to commits made while $STELLA_SESSION is set. An existing hook
/// is kept and still runs first; uninstall puts it back.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["agent", "git"])))]
pub struct Args {
    /// The agent host whose settings to change
    #[arg(long, value_enum)]
    pub agent: Option<Agent>,
    /// Change the user's settings instead of the repository's
    #[arg(long, requires = "agent")]
    pub user: bool,
    /// Install git's commit-trailer hook instead
    #[arg(long)]
    pub git: bool,
}

pub fn run(ctx: &mut Ctx<'_>, command: &HooksCommand, _out: &mut dyn Write) -> Result {
    let (args, installing) = match command {
        HooksCommand::Install(a) => (a, true),
        HooksCommand::Uninstall(a) => (a, false),
    };
    let failed = |e: install::Error| CliError::from_error(&e);
    use super::agent_hook::JsonAgent;
    let json_agent = match args.agent {
        Some(Agent::Codex) => Some(JsonAgent::Codex),
        Some(Agent::Gemini) => Some(JsonAgent::Gemini),
        Some(Agent::Cursor) => Some(JsonAgent::Cursor),
        _ => None,
    };
    if let Some(agent) = json_agent {
        if args.user {
            return Err(CliError::new(
                "--user goes with --agent claude-code only; the other agents' hooks are per project",
            ));
        }
        return super::agent_hook::install(ctx, agent, installing);
    }
    if args.git {
        let root = crate::workspace::discover_root(&ctx.settings, &ctx.cwd)?;
        let dir = install::git_hooks_dir(&root).map_err(failed)?;
        let hook = dir.join(install::GIT_HOOK);
        let outcome = if installing {
            install::install_git(&dir).map_err(failed)?
        } else {
            install::uninstall_git(&dir).map_err(failed)?
        };
        say(ctx, installing, outcome, &hook);
        return Ok(ExitCode::SUCCESS);
    }
    let settings = if args.user {
        let home = directories::BaseDirs::new()
            .map(|d| d.home_dir().to_owned())
            .ok_or_else(|| CliError::new("could not find the home folder"))?;
        home.join(".claude").join("settings.json")
    } else {
        crate::workspace::discover_root(&ctx.settings, &ctx.cwd)?
            .join(".claude")
            .join("settings.json")
    };
    let outcome = if installing {
        let exe = std::env::current_exe()
            .and_then(|p| p.canonicalize())
            .map_err(|e| {
                let mut err = CliError::new("could not find the path of this git-stella binary");
                err.causes.push(e.to_string());
                err
            })?;
        let (outcome, foreign) = install::install_claude(
            &settings,
            &install::hook_command(&exe),
            &install::shell_prefix(&exe),
        )
        .map_err(failed)?;
        if let Some(prefix) = foreign {
            let _ = writeln!(
                ctx.err,
                "stella: warning: '{}' already sets {} to '{prefix}'; it was kept, so Claude Code's Bash commands run without Stella's shell guard",
                settings.display(),
                install::PREFIX_KEY
            );
        }
        outcome
    } else {
        install::uninstall_claude(&settings).map_err(failed)?
    };
    say(ctx, installing, outcome, &settings);
    Ok(ExitCode::SUCCESS)
}

fn say(ctx: &mut Ctx<'_>, installing: bool, outcome: Outcome, path: &std::path::Path) {
    let p = path.display();
    match (installing, outcome) {
        (true, Outcome::Changed) => {
            ctx.say(format_args!("stella: installed Stella's hooks in '{p}'"))
        }
        (true, Outcome::Unchanged) => ctx.say(format_args!(
            "stella: Stella's hooks are already installed in '{p}'"
        )),
        (false, Outcome::Changed) => {
            ctx.say(format_args!("stella: removed Stella's hooks from '{p}'"))
        }
        (false, Outcome::Unchanged) => ctx.say(format_args!("stella: no Stella hooks in '{p}'")),
    }
}
