use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::{CliError, Ctx, Result};
use stella::hooks::install::{self, HooksFile, Launch, Ledger, Outcome};
use stella::hooks::{codex, copilot, cursor, gemini, opencode, qwen};

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

/// The agents whose hooks Stella can install.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agent {
    /// Claude Code: .claude/settings.json (--local: .claude/settings.local.json)
    ClaudeCode,
    /// Codex CLI: .codex/hooks.json
    Codex,
    /// Gemini CLI: .gemini/settings.json
    Gemini,
    /// Cursor: .cursor/hooks.json
    Cursor,
    /// Qwen Code: .qwen/settings.json
    Qwen,
    /// GitHub Copilot CLI: .github/hooks/stella.json
    Copilot,
    /// OpenCode: a plugin, .opencode/plugins/stella.js
    Opencode,
}

impl Agent {
    fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "Claude Code",
            Agent::Codex => "Codex",
            Agent::Gemini => "Gemini CLI",
            Agent::Cursor => "Cursor",
            Agent::Qwen => "Qwen Code",
            Agent::Copilot => "Copilot CLI",
            Agent::Opencode => "OpenCode",
        }
    }

    fn flag(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Cursor => "cursor",
            Agent::Qwen => "qwen",
            Agent::Copilot => "copilot",
            Agent::Opencode => "opencode",
        }
    }

    /// The settings file, relative to the repository's root or the home folder.
    fn settings(self, scope: Scope) -> &'static str {
        match (self, scope) {
            (Agent::ClaudeCode, Scope::Local) => install::CLAUDE_LOCAL_SETTINGS,
            (Agent::ClaudeCode, _) => install::CLAUDE_SETTINGS,
            (Agent::Codex, _) => codex::SETTINGS,
            (Agent::Gemini, _) => gemini::SETTINGS,
            (Agent::Cursor, _) => cursor::SETTINGS,
            (Agent::Qwen, _) => qwen::SETTINGS,
            (Agent::Copilot, _) => copilot::SETTINGS,
            (Agent::Opencode, _) => opencode::PLUGIN,
        }
    }

    /// The settings file of `scope`, `base` being the repository's root or the home folder.
    fn settings_at(self, scope: Scope, base: &Path) -> PathBuf {
        match scope {
            Scope::User => install::user_settings(self.flag(), base, |v| std::env::var_os(v))
                .unwrap_or_else(|| base.join(self.settings(scope))),
            _ => base.join(self.settings(scope)),
        }
    }

    fn hooks_file(self, path: PathBuf, launch: &Launch) -> HooksFile {
        match self {
            Agent::ClaudeCode => install::claude_hooks_file(path, launch),
            Agent::Codex => codex::hooks_file(path, launch),
            Agent::Gemini => gemini::hooks_file(path, launch),
            Agent::Cursor => cursor::hooks_file(path, launch),
            Agent::Qwen => qwen::hooks_file(path, launch),
            Agent::Copilot => copilot::hooks_file(path, launch),
            // OpenCode's is a plugin, installed whole (see `run`); its path is what counts.
            Agent::Opencode => install::claude_hooks_file(path, launch),
        }
    }

    /// The places this host reads hooks from.
    fn scopes(self) -> &'static [Scope] {
        match self {
            Agent::ClaudeCode => &[Scope::User, Scope::Project, Scope::Local],
            _ => &[Scope::User, Scope::Project],
        }
    }
}

/// Whose settings file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scope {
    User,
    Project,
    Local,
}

impl Scope {
    fn flag(self) -> &'static str {
        match self {
            Scope::User => " --user",
            Scope::Project => "",
            Scope::Local => " --local",
        }
    }
}

#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["agent", "git"])))]
pub struct Args {
    /// The agent host whose settings to change
    #[arg(long, value_enum)]
    pub agent: Option<Agent>,
    /// Change the settings in your home folder (every project) instead of the repository's
    #[arg(long, requires = "agent", conflicts_with = "local")]
    pub user: bool,
    /// Change Claude Code's .claude/settings.local.json (this checkout only, usually not committed)
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
    if args.local && agent != Agent::ClaudeCode {
        return Err(CliError::new(
            "--local goes with --agent claude-code only; the other agents have no settings file for one checkout",
        ));
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
    let path = agent.settings_at(scope, &base);
    let outcome = if agent == Agent::Opencode {
        // OpenCode's is a plugin: a file of Stella's own, written and removed whole.
        if installing {
            install::install_own_file(&path, &opencode::plugin(&launch), opencode::MARK)
        } else {
            install::uninstall_own_file(&path, opencode::MARK, &base)
        }
        .map_err(failed)?
    } else {
        let file = agent.hooks_file(path.clone(), &launch);
        let outcome = if installing {
            let installed = install::install(&file, &ledger).map_err(failed)?;
            if let Some(prefix) = installed.foreign_prefix {
                let _ = writeln!(
                    ctx.err,
                    "stella: warning: '{}' already sets {} to '{prefix}'; it was kept, so Claude Code's Bash commands run without Stella's shell guard",
                    file.path.display(),
                    install::PREFIX_KEY
                );
            }
            warn_twice(ctx, agent, scope, &file.path, &launch);
            installed.outcome
        } else {
            install::uninstall(&file, &ledger).map_err(failed)?
        };
        if agent == Agent::ClaudeCode {
            say(ctx, installing, outcome, &file.path);
            return Ok(ExitCode::SUCCESS);
        }
        outcome
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
    if installing
        && outcome == Outcome::Changed
        && let Some(steps) = trust_steps(agent, scope)
    {
        ctx.say(format_args!("{steps}"));
    }
    Ok(ExitCode::SUCCESS)
}

/// What the person still has to do before the host runs the hooks just installed: trust is
/// theirs to give, so Stella says how rather than giving it behind their back.
fn trust_steps(agent: Agent, scope: Scope) -> Option<&'static str> {
    match (agent, scope) {
        (Agent::Codex, Scope::User) => Some(
            "next: Codex runs a hook only once you trust it: start 'codex', open /hooks and trust Stella's hooks (again after an upgrade changes them); 'codex exec' skips an untrusted hook without a word. 'git stella doctor' says whether Codex will run them.",
        ),
        (Agent::Codex, _) => Some(
            "next: Codex runs a project's hooks only in a project it trusts, and each only once you trust it: start 'codex' here, trust the project, then open /hooks and trust Stella's hooks (again after an upgrade changes them); 'codex exec' skips an untrusted hook without a word. 'git stella doctor' says whether Codex will run them.",
        ),
        (Agent::Gemini, Scope::User) => None,
        (Agent::Gemini, _) => Some(
            "next: Gemini CLI runs a project's hooks only in a folder you trust: choose \"Trust folder\" when it asks; headless, add the folder to ~/.gemini/trustedFolders.json or set GEMINI_CLI_TRUST_WORKSPACE=true. Its --skip-trust flag loads no project settings, so these hooks would not run: for runs with it, install with --user. 'git stella doctor' says whether Gemini CLI trusts the folder.",
        ),
        (Agent::Opencode, _) => Some(
            "next: OpenCode loads the plugin at its next start; it runs no plugin under --pure (or OPENCODE_PURE=1), and no project plugin with OPENCODE_DISABLE_PROJECT_CONFIG=1. 'git stella doctor' checks the plugin is Stella's, whole.",
        ),
        (Agent::Copilot, Scope::User) => None,
        (Agent::Copilot, _) => Some(
            "next: Copilot CLI runs a repository's hooks in prompt mode (-p) only in a trusted folder, and skips them without a word otherwise: trust it when Copilot CLI asks, or add it to trustedFolders in ~/.copilot/config.json (or run with --trust-folder). 'git stella doctor' says whether it will.",
        ),
        (Agent::Qwen, _) => Some(
            "next: Qwen Code runs a project's hooks unless folder trust is on and the folder is not trusted (then add it to ~/.qwen/trustedFolders.json); it cannot route its shell tool through Stella, so commands it runs are noticed, not guarded. 'git stella doctor' says both.",
        ),
        _ => None,
    }
}

/// The path this git-stella was run by (see [`install::invoked_as`]). Uninstall can do without:
/// it knows Stella's entries by their command.
fn this_binary(installing: bool) -> Result<PathBuf> {
    let exe = std::env::current_exe().and_then(|p| p.canonicalize());
    let invoked = match (std::env::args_os().next(), std::env::current_dir(), &exe) {
        (Some(argv0), Ok(cwd), Ok(exe)) => {
            install::invoked_as(&argv0, std::env::var_os("PATH").as_deref(), &cwd, exe)
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
fn warn_twice(ctx: &mut Ctx<'_>, agent: Agent, scope: Scope, installed: &Path, launch: &Launch) {
    let home = directories::BaseDirs::new().map(|d| d.home_dir().to_owned());
    let root = stella::workspace::discover_root(&ctx.settings, &ctx.cwd).ok();
    let mut others = Vec::new();
    for &other in agent.scopes() {
        let base = match other {
            Scope::User => home.as_ref(),
            _ => root.as_ref(),
        };
        let Some(base) = base.filter(|_| other != scope) else {
            continue;
        };
        let path = agent.settings_at(other, base);
        if path != installed && agent.hooks_file(path.clone(), launch).has_stella_hooks() {
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
                agent.flag(),
                s.flag()
            )
        })
        .collect();
    let _ = writeln!(
        ctx.err,
        "stella: warning: Stella's hooks are also in {}: {} would run each of them twice (take one copy out: {})",
        files.join(" and "),
        agent.name(),
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
