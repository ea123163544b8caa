use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::ctx::Ctx;
use crate::env;
use crate::error::{CliError, Result};
use crate::host_arg::HostParser;
use stella::hosts::install::{self, Launch, Ledger, Outcome};
use stella::hosts::registry::{HOSTS, Scope, Spec, Wiring};

/// The exit status of `hooks install` and `hooks uninstall`.
const HOOKS_EXIT: &str = "Exit status:
  0  done, or nothing to change
  2  an error: not inside a git working tree, a settings file that is not
     valid JSON or cannot be written, git-stella not found where the hooks
     would name it";

/// Wire Stella into an agent host's hooks or git's, or take it out again
#[derive(clap::Subcommand, Debug)]
#[command(after_long_help = HOOKS_EXIT)]
pub enum HooksCommand {
    /// Install Stella's hooks into an agent's settings file, or git's prepare-commit-msg hook
    ///
    /// --agent NAME adds Stella's entries to the agent's settings file at the repository's root
    /// (with --user, the one in your home folder, for every project, or where CLAUDE_CONFIG_DIR
    /// or CODEX_HOME moves it, as Claude Code and Codex read them; with --local, Claude Code's
    /// '.claude/settings.local.json', which is for this checkout only). Only Stella's own
    /// entries are edited: every other byte of the file stays as it was, and running it twice
    /// changes nothing more. In a project's settings, meant to be committed, the hooks name no
    /// path of this machine: each runs the git-stella found on PATH or in ~/.cargo/bin,
    /// ~/.local/bin, /usr/local/bin or /opt/homebrew/bin, and where there is none says "Stella is
    /// not installed" (and refuses the tool call in a project that chose fail-closed). With
    /// --user or --local the command is the absolute path this git-stella was run by (a symbolic
    /// link is kept as a link): run install again after moving the binary. When Stella's hooks are
    /// also in another of the agent's settings
    /// files, install warns: the agent would run each hook twice. What install changed is kept
    /// in '.stella/private/hooks-installed.json' (for --user, in Stella's data dir), for
    /// uninstall.
    ///
    /// --git installs a 'prepare-commit-msg' hook (where 'core.hooksPath' says, if set) that adds
    /// a 'Stella-Session: <id>' trailer to commits made while $STELLA_SESSION is set. An existing
    /// hook is kept and still runs first.
    #[command(after_long_help = HOOKS_EXIT)]
    Install(Args),
    /// Take Stella's hooks out of an agent's settings file, or git's, again
    ///
    /// Takes out exactly Stella's entries. A file install did not otherwise touch comes back
    /// byte for byte; a file install created is removed, and so are the folders it created for
    /// it, once empty; otherwise Stella's handlers are taken out one by one, and a hook of yours
    /// in the same group stays. With --git, the prepare-commit-msg hook install kept is put
    /// back.
    #[command(after_long_help = HOOKS_EXIT)]
    Uninstall(Args),
}

#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["agent", "git"])))]
pub struct Args {
    /// The agent host whose settings to change
    #[arg(long, value_parser = HostParser::any())]
    pub agent: Option<&'static Spec>,
    /// Change the settings in your home folder (every project) instead of the repository's
    #[arg(long, requires = "agent", conflicts_with = "local")]
    pub user: bool,
    /// Change the host's settings for this checkout only (Claude Code's .claude/settings.local.json), usually not committed
    #[arg(long, requires = "agent")]
    pub local: bool,
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
    let Some(agent) = args.agent else {
        let root = stella::workspace::discover_root(&ctx.settings, &ctx.cwd)?;
        let dir = install::git_hooks_dir(&root).map_err(failed)?;
        let hook = dir.join(install::GIT_HOOK);
        let outcome = if installing {
            install::install_git(&dir).map_err(failed)?
        } else {
            install::uninstall_git(&dir).map_err(failed)?
        };
        say(ctx, installing, outcome, &hook);
        return Ok(ExitCode::SUCCESS);
    };
    if args.local && agent.local.is_none() {
        let with: Vec<&str> = HOSTS
            .iter()
            .filter(|h| h.local.is_some())
            .map(|h| h.flag)
            .collect();
        return Err(CliError::new(format!(
            "--local goes with --agent {} only; the other agents have no settings file for one checkout",
            with.join(", ")
        )));
    }
    let scope = match (args.user, args.local) {
        (true, _) => Scope::User,
        (_, true) => Scope::Local,
        _ => Scope::Project,
    };
    // A project's settings are committed: its hooks find git-stella on each machine. A user's
    // and a checkout's own settings name this machine's binary.
    let launch = match scope {
        Scope::Project => Launch::Found,
        Scope::User | Scope::Local => Launch::At(this_binary(installing)?),
    };
    let home = || {
        directories::BaseDirs::new()
            .map(|d| d.home_dir().to_owned())
            .ok_or_else(|| CliError::new("could not find the home folder"))
    };
    let (base, ledger) = if scope == Scope::User {
        let home = home()?;
        let ledger = Ledger {
            file: ctx.settings.data_dir.join(install::LEDGER_FILE),
            base: home.clone(),
        };
        (home, ledger)
    } else {
        let root = stella::workspace::discover_root(&ctx.settings, &ctx.cwd)?;
        let (ws, notices) = stella::workspace::Workspace::open(&ctx.settings, root)?;
        for n in notices {
            let _ = writeln!(ctx.err, "stella: {n}");
        }
        let ledger = Ledger {
            file: ws.private_dir().join(install::LEDGER_FILE),
            base: ws.root.clone(),
        };
        (ws.root, ledger)
    };
    let path = agent
        .file(scope, &base, &|v| env::var_os(v))
        .expect("a scope the host has");
    let outcome = match &agent.wiring {
        // A file of Stella's own, written and removed whole.
        Wiring::OwnFile { text, mark, .. } => if installing {
            install::install_own_file(&path, &text(&launch), mark)
        } else {
            install::uninstall_own_file(&path, mark, &base)
        }
        .map_err(failed)?,
        Wiring::Settings(hooks_file) => {
            let file = hooks_file(path.clone(), &launch);
            if installing {
                let installed = install::install(&file, &ledger).map_err(failed)?;
                if let Some(prefix) = installed.foreign_prefix {
                    let _ = writeln!(
                        ctx.err,
                        "stella: warning: '{}' already sets {} to '{prefix}'; it was kept, so {}'s shell commands run without Stella's shell guard",
                        file.path.display(),
                        install::PREFIX_KEY,
                        agent.name,
                    );
                }
                warn_twice(ctx, agent, scope, &file.path);
                installed.outcome
            } else {
                install::uninstall(&file, &ledger).map_err(failed)?
            }
        }
    };
    let shown = if scope == Scope::User {
        path.display().to_string()
    } else {
        path.strip_prefix(&base)
            .unwrap_or(&path)
            .display()
            .to_string()
    };
    match (installing, outcome) {
        (true, Outcome::Changed) => ctx.say(format_args!("installed Stella's hooks in {shown}")),
        (true, Outcome::Unchanged) => {
            ctx.say(format_args!("Stella's hooks are already in {shown}"))
        }
        (false, Outcome::Changed) => ctx.say(format_args!("removed Stella's hooks from {shown}")),
        (false, Outcome::Unchanged) => ctx.say(format_args!(
            "no Stella hooks in {shown}; nothing to remove"
        )),
    }
    // Said when something changed: a changed hook is one the host asks to trust again.
    let next = match scope {
        Scope::User => agent.next_for_user,
        Scope::Project | Scope::Local => agent.next_in_project,
    };
    if installing
        && outcome == Outcome::Changed
        && let Some(steps) = next
    {
        ctx.say(format_args!("{steps}"));
    }
    Ok(ExitCode::SUCCESS)
}

/// The path this git-stella was run by (see [`install::invoked_as`]). Uninstall can do without:
/// it knows Stella's entries by their command.
fn this_binary(installing: bool) -> Result<PathBuf> {
    let exe = env::current_exe().and_then(|p| p.canonicalize());
    let invoked = match (env::args_os().next(), env::current_dir(), &exe) {
        (Some(argv0), Ok(cwd), Ok(exe)) => {
            install::invoked_as(&argv0, env::var_os("PATH").as_deref(), &cwd, exe)
        }
        _ => None,
    };
    match (invoked, exe) {
        (Some(p), _) | (None, Ok(p)) => Ok(p),
        (None, Err(_)) if !installing => Ok(PathBuf::from("git-stella")),
        (None, Err(e)) => Err(
            CliError::new("could not find the path of this git-stella binary").cause(e.to_string()),
        ),
    }
}

/// Warn when the host also reads Stella's hooks from another of its settings files: it would
/// run each of them twice.
fn warn_twice(ctx: &mut Ctx<'_>, agent: &Spec, scope: Scope, installed: &Path) {
    let home = directories::BaseDirs::new().map(|d| d.home_dir().to_owned());
    let root = stella::workspace::discover_root(&ctx.settings, &ctx.cwd).ok();
    let mut others = Vec::new();
    for other in agent.scopes() {
        let base = match other {
            Scope::User => home.as_ref(),
            _ => root.as_ref(),
        };
        let Some(base) = base.filter(|_| other != scope) else {
            continue;
        };
        let Some(path) = agent.file(other, base, &|v| env::var_os(v)) else {
            continue;
        };
        if path != installed && agent.holds_stella(&path) {
            others.push((path, other));
        }
    }
    if others.is_empty() {
        return;
    }
    let files: Vec<String> = others
        .iter()
        .map(|(p, _)| format!("'{}'", p.display()))
        .collect();
    let fixes: Vec<String> = others
        .iter()
        .map(|(_, s)| {
            format!(
                "'git stella hooks uninstall --agent {}{}'",
                agent.flag,
                s.flag()
            )
        })
        .collect();
    let _ = writeln!(
        ctx.err,
        "stella: warning: Stella's hooks are also in {}: {} would run each of them twice (take one copy out: {})",
        files.join(" and "),
        agent.name,
        fixes.join(" or ")
    );
}

fn say(ctx: &mut Ctx<'_>, installing: bool, outcome: Outcome, path: &Path) {
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
