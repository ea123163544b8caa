use std::io::{Read, Write};
use std::process::ExitCode;
use std::time::Duration;

use crate::ctx::Ctx;
use crate::env;
use crate::error::Result;
use stella::hosts::registry::{self, HOSTS, Shell, Spec};
use stella::hosts::{self, Answer, Env};

/// The exit status of every `hook` call: never 2, which agent hosts read as "block".
const HOOK_EXIT: &str = "Exit status:
  0  every handled outcome, a refusal included (the host's deny answer on
     stdout); nothing done outside a git repository or for paths outside the
     workspace
  1  the hook itself failed, the reason on stderr (the host lets the tool
     run), unless the project chose fail-closed: then a write is denied with
     exit 0
  Never 2.";

/// What a hook answers when it cannot check a write.
const FAIL_CLOSED: &str = "When the hook itself fails, a write it could not check is denied where the project chose fail-closed ('.stella/config.toml' with 'hooks.on-error = \"deny\"', or 'git config stella.hookOnError deny'), and, for a host that would run the tool anyway, unless the project chose \"allow\".";

/// `git stella hook <HOST>`: answer an agent host's hook call. One subcommand per host of the
/// registry ([`HOSTS`]), each answering in its host's protocol.
#[derive(Clone, Copy, Debug)]
pub struct HookCommand {
    pub host: &'static Spec,
}

impl clap::FromArgMatches for HookCommand {
    fn from_arg_matches(matches: &clap::ArgMatches) -> std::result::Result<Self, clap::Error> {
        match matches.subcommand_name().and_then(registry::host) {
            Some(host) => Ok(HookCommand { host }),
            None => Err(clap::Error::new(clap::error::ErrorKind::MissingSubcommand)),
        }
    }

    fn update_from_arg_matches(
        &mut self,
        matches: &clap::ArgMatches,
    ) -> std::result::Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Subcommand for HookCommand {
    fn augment_subcommands(cmd: clap::Command) -> clap::Command {
        let cmd = cmd
            .about("Answer an agent host's hook call: read its payload on stdin, act, answer in its protocol")
            .long_about("Answer an agent host's hook call: read its payload on stdin, act, answer in its protocol\n\nInstalled by 'git stella hooks install --agent NAME'; not meant to be run by hand.")
            .after_long_help(HOOK_EXIT)
            .subcommand_required(true);
        HOSTS.iter().fold(cmd, |cmd, host| {
            cmd.subcommand(
                clap::Command::new(host.flag)
                    .about(host.answers)
                    .long_about(format!("{}\n\n{FAIL_CLOSED}", host.answers))
                    .after_long_help(HOOK_EXIT),
            )
        })
    }

    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_subcommands(cmd)
    }

    fn has_subcommand(name: &str) -> bool {
        registry::host(name).is_some()
    }
}

/// How long one hook call may take before it gives up (and says so), unless
/// `STELLA_HOOK_TIMEOUT_MS` says otherwise.
pub const BUDGET: Duration = Duration::from_secs(10);

/// The budget for one call, read at the edge.
fn budget() -> Duration {
    env::var(env::HOOK_TIMEOUT_MS)
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(BUDGET, Duration::from_millis)
}

pub fn run(ctx: &mut Ctx<'_>, command: &HookCommand, out: &mut dyn Write) -> Result {
    let host = command.host;
    let can_guard = || stella::exec::support().is_ok();
    let env = Env {
        settings: ctx.settings.clone(),
        cwd: ctx.cwd.clone(),
        // A host that runs every shell command through Stella's prefix, set where it runs.
        shell_guard: match host.shell {
            Shell::Prefix { .. } => env::var(hosts::install::PREFIX_KEY)
                .is_some_and(|p| hosts::install::is_stella_prefix(&p)),
            _ => false,
        } && can_guard(),
        // A host whose hook rewrites each shell command the model sends runs it through this
        // program's `exec`, when this machine can guard one.
        // (`STELLA_TEST_NO_SHELL_GUARD=1`: the tests' stand-in for a machine that cannot.)
        guard_exe: match host.shell {
            Shell::Rewritten { by_name }
                if can_guard() && env::var_os(env::TEST_NO_SHELL_GUARD).is_none() =>
            {
                let exe = env::current_exe().ok();
                match &exe {
                    Some(exe)
                        if by_name
                            && hosts::install::invoked_as(
                                std::ffi::OsStr::new("git-stella"),
                                env::var_os("PATH").as_deref(),
                                &ctx.cwd,
                                exe,
                            )
                            .is_some() =>
                    {
                        Some(std::path::PathBuf::from("git-stella"))
                    }
                    _ => exe,
                }
            }
            _ => None,
        },
    };
    let answer = (host.answer)(
        env,
        budget(),
        Box::new(|| {
            let mut input = Vec::new();
            env::stdin().lock().read_to_end(&mut input)?;
            Ok(input)
        }),
        // Out of time: answer the host now and end the process, which ends the work.
        Box::new(|answer| {
            env::write_unlocked(env::stdout(), &answer.stdout);
            env::write_unlocked(env::stderr(), answer.stderr.as_bytes());
            env::exit(exit_code(&answer).into());
        }),
    );
    Ok(emit(ctx, &answer, out))
}

/// Write an answer out; never exit 2, whatever the answer says.
pub fn emit(ctx: &mut Ctx<'_>, answer: &Answer, out: &mut dyn Write) -> ExitCode {
    let _ = out.write_all(&answer.stdout);
    let _ = out.flush();
    let _ = ctx.err.write_all(answer.stderr.as_bytes());
    ExitCode::from(exit_code(answer))
}

/// The exit status for an answer: never 2, which a host reads as "block".
fn exit_code(answer: &Answer) -> u8 {
    if answer.code == 2 { 1 } else { answer.code }
}
