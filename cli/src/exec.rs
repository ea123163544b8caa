use std::ffi::OsString;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode};

use crate::ctx::Ctx;
use crate::env;
use crate::error::{CliError, Kind, Result};
use crate::host_arg::HostParser;
use stella::exec;
use stella::hosts::registry::{Shell, Spec};
use stella::hosts::{self, OnError};
use stella::ids::SessionId;

/// Run a command under the shell guard: its reads are recorded, its stale writes refused
///
/// COMMAND, and everything it starts, runs with every system call that can read or change a
/// workspace file checked first (Linux seccomp user notification: no root, no daemon; the
/// supervisor is this process, gone with the command).
///
/// An open for reading of a file inside the workspace records a read of the bytes at that
/// moment, as `git stella read` would. An open for writing or truncation, a truncate, a rename
/// or link onto a path and an unlink are checked with the guard's decision table before the
/// kernel acts: a refused call fails with EACCES (Permission denied) and the refusal, first line
/// `refusing to write: PATH` or `refusing to delete: PATH`, goes to the stderr of the process
/// whose call it was, once per path and process. A process that reads a file and changes it
/// within a second (`sed -i`, a patch tool, a script's read-modify-write) is a tool reading what
/// it rewrites: that read is not news to the session, and the change is judged by what the
/// session knew before it. What the command changed becomes the session's own write, with the
/// bytes it left; a delete drops the entry, a rename moves it. So a fresh `sed -i` in the
/// agent's shell is the agent's own change, and its next edit is allowed. The whole command is
/// one journal step, recorded when it exits.
///
/// Never recorded: `.git/`, `.stella/`, paths outside the workspace, folders, devices, FIFOs,
/// and paths git ignores (build output, node_modules) unless the session already tracks them.
/// The bytes of what a command read are kept for a refusal's diff up to 8 MiB a command; past
/// that only digests.
///
/// If the supervisor dies, the command's guarded calls fail (ENOSYS); they never pass
/// unchecked. Where this machine cannot guard (not Linux, a kernel before 5.5, a container or
/// sandbox that forbids seccomp filters, an outer supervisor), the command runs unguarded after
/// one warning line, or, where the project chose fail-closed (`hooks.on-error = "deny"` in
/// `.stella/config.toml`, or `git config stella.hookOnError deny`), does not run (exit 2).
///
/// It cannot see a file opened before the command started, nor a process that rewrites a path
/// in its own memory between the check and the kernel's use of it: it guards against mistakes,
/// not against an adversary.
#[derive(clap::Args, Debug)]
#[command(after_long_help = concat!(decision_table!(), "
Examples:
  git stella exec -- sh -c 'cat notes.txt; sed -i s/draft/final/ notes.txt'
  git stella exec --session agent-1 -- codex exec \"fix the build\"
  git stella exec --check

Under Claude Code, 'git stella hooks install --agent claude-code' sets
CLAUDE_CODE_SHELL_PREFIX to '/path/to/git-stella --claude-code-shell'
(the same as 'exec --host claude-code'), so every Bash command runs
under the guard in that Claude session's Stella session. What else
Claude Code runs through the prefix (hook commands, Stella's own
included) runs unguarded.

Exit status:
  the command's own (128 + N when a signal N ended it)
  125  exec's own error: no session given or an unknown one, not inside
       a git working tree, this machine cannot guard and the project
       chose fail-closed, or the command's steps could not be recorded
       (as env and timeout use 125, so a command's own 1 or 2 stays its)
  126  the command could not be run; 127 it was not found
  2    a usage error (a flag exec does not know), as every command
"))]
pub struct Args {
    /// Say whether this machine can guard a command, and why not, without running one
    #[arg(long, conflicts_with_all = ["command", "host"])]
    pub check: bool,
    /// Run an agent host's shell command: the one argument is the host's shell snippet, run with
    /// bash -c in the host's session (claude-code: from CLAUDE_CODE_SESSION_ID; the others:
    /// --session, as their hooks write it), created when missing
    #[arg(long, value_name = "HOST", value_parser = HostParser::routed())]
    pub host: Option<&'static Spec>,
    /// The command and its arguments
    #[arg(
        value_name = "COMMAND",
        trailing_var_arg = true,
        allow_hyphen_values = true,
        required_unless_present = "check"
    )]
    pub command: Vec<OsString>,
}

/// Its own errors exit 125, not the 2 a wrapped `sh` or `grep` may exit with
/// ([`CliError::exit_status`]).
pub fn run(ctx: &mut Ctx<'_>, args: &Args, out: &mut dyn Write) -> Result {
    if args.check {
        return Ok(match exec::probe() {
            Ok(()) => {
                let _ = writeln!(out, "guarded");
                ctx.say(format_args!(
                    "commands under 'git stella exec' run with the shell guard (seccomp user notification)"
                ));
                ExitCode::SUCCESS
            }
            Err(why) => {
                let _ = writeln!(out, "unguarded");
                let _ = writeln!(ctx.err, "stella: cannot guard commands here: {why}");
                ExitCode::from(1)
            }
        });
    }
    match args.host {
        Some(
            host @ Spec {
                shell: Shell::Prefix { session_var, .. },
                ..
            },
        ) => return host_prefix(ctx, args, host, session_var),
        Some(host) => return host_command(ctx, args, host.flag),
        None => {}
    }
    let (context, id) = ctx.open_session()?;
    let cwd = ctx.cwd.clone();
    let make = || {
        let mut command = Command::new(&args.command[0]);
        command.args(&args.command[1..]).current_dir(&cwd);
        command
    };
    guarded(ctx, &context, &id, make, None)
}

/// A host with a shell prefix (Claude Code) runs `<prefix> '<snippet>'` for every Bash call and
/// every hook command, in the session `session_var` names.
fn host_prefix(ctx: &mut Ctx<'_>, args: &Args, host: &Spec, session_var: &str) -> Result {
    let snippet = one_snippet(args, host.flag)?;
    let cwd = ctx.cwd.clone();
    let make = || bash_c(snippet, &cwd);
    let shell = make();
    if !is_bash_call(snippet) {
        return plain(shell);
    }
    let host_session = env::var(session_var);
    let opened = host_session
        .as_deref()
        .map(|s| hosts::session_name(s, None))
        .transpose()
        .map_err(|e| CliError::from_error(&e))
        .map(|id| (id, stella::session::Context::open(&ctx.settings, &ctx.cwd)));
    let (id, context) = match opened {
        Ok((Some(id), Ok((context, _)))) => (id, context),
        // Outside a git working tree there is nothing to guard, as for the hooks.
        Ok((
            _,
            Err(stella::session::Error::Workspace(stella::workspace::Error::NotARepository {
                ..
            })),
        )) => return plain(shell),
        Ok((None, _)) => {
            let why = format!("{} gave no {session_var}", host.name);
            return unguarded(ctx, shell, &why);
        }
        Ok((_, Err(e))) => return unguarded(ctx, shell, &CliError::from(e).message),
        Err(e) => return unguarded(ctx, shell, &e.message),
    };
    if let Err(e) = context.ensure_session(&id) {
        return unguarded(ctx, shell, &CliError::from(e).message);
    }
    let label = bash_command(snippet);
    guarded(ctx, &context, &id, make, label.as_deref())
}

/// Codex and Gemini CLI: their hooks rewrite each of the model's shell commands into
/// `git-stella exec --host HOST --session ID -- 'COMMAND'`, so it runs under the guard in the
/// session the hooks use.
fn host_command(ctx: &mut Ctx<'_>, args: &Args, host: &str) -> Result {
    let snippet = one_snippet(args, host)?;
    let cwd = ctx.cwd.clone();
    let make = || bash_c(snippet, &cwd);
    let id = match ctx.session_id() {
        Ok(id) => id,
        Err(e) => return unguarded(ctx, make(), &e.message),
    };
    let context = match stella::session::Context::open(&ctx.settings, &ctx.cwd) {
        Ok((context, _)) => context,
        // Outside a git working tree there is nothing to guard, as for the hooks.
        Err(stella::session::Error::Workspace(stella::workspace::Error::NotARepository {
            ..
        })) => return plain(make()),
        Err(e) => return unguarded(ctx, make(), &CliError::from(e).message),
    };
    if let Err(e) = context.ensure_session(&id) {
        return unguarded(ctx, make(), &CliError::from(e).message);
    }
    guarded(ctx, &context, &id, make, snippet.to_str())
}

/// The host's shell snippet: `--host` takes exactly one.
fn one_snippet<'a>(args: &'a Args, host: &str) -> Result<&'a OsString> {
    match args.command.as_slice() {
        [snippet] => Ok(snippet),
        more => Err(CliError::new(format!(
            "'--host {host}' takes the host's shell snippet as its one argument, not {}",
            more.len()
        ))),
    }
}

/// `bash -c SNIPPET` in `cwd`, as the hosts run a shell command.
fn bash_c(snippet: &std::ffi::OsStr, cwd: &std::path::Path) -> Command {
    let mut shell = Command::new("bash");
    shell.arg("-c").arg(snippet).current_dir(cwd);
    shell
}

/// Whether `snippet` is the model's Bash call rather than something else Claude Code runs
/// through the prefix (hook commands, MCP servers): Claude Code 2.1 builds a Bash call as
/// `… && eval <command> … && pwd -P >| <file>`, to carry the working directory over to the next
/// call, and nothing else it runs has that shape. Hooks are the host's own work, never the
/// model's: Stella's own hooks read files to hash them.
fn is_bash_call(snippet: &std::ffi::OsStr) -> bool {
    let Some(s) = snippet.to_str() else {
        return false;
    };
    let Some((_, last)) = s.trim_end().rsplit_once(" && ") else {
        return false;
    };
    s.contains("eval ") && last.starts_with("pwd -P >| ")
}

/// The model's own command inside a Bash call's snippet (`… && eval '<command>' < /dev/null &&
/// pwd -P >| <file>`), for the step's summary.
fn bash_command(snippet: &std::ffi::OsStr) -> Option<String> {
    let s = snippet.to_str()?;
    let (before, _) = s.rsplit_once(" && pwd -P >| ")?;
    let (_, eval) = before.rsplit_once("eval ")?;
    let eval = eval.strip_suffix(" < /dev/null").unwrap_or(eval);
    // A single-quoted word, as Claude Code quotes it (`'\''` for a quote inside).
    Some(
        match eval.strip_prefix('\'').and_then(|e| e.strip_suffix('\'')) {
            Some(inner) => inner.replace("'\\''", "'"),
            None => eval.to_owned(),
        },
    )
}

/// A command that carried on past a refused change and reported success (git switching a
/// branch, a reset) did not do all it says: say so plainly, naming the files left as they were.
fn say_left_behind(ctx: &mut Ctx<'_>, report: &exec::Report) {
    if report.code() != 0 || report.refused.is_empty() {
        return;
    }
    let mut names: Vec<String> = report
        .refused
        .iter()
        .take(10)
        .map(|p| stella::text::escape_controls(&p.to_lossy()).into_owned())
        .collect();
    if report.refused.len() > 10 {
        names.push(format!("and {} more", report.refused.len() - 10));
    }
    // Even under -q: it says where someone's work stands.
    let _ = writeln!(
        ctx.err,
        "stella: the command reported success, but Stella refused {}, left as {} {}: {} (its work is incomplete: 'git stella status' lists what was left behind, 'git status' what differs from HEAD)",
        stella::text::count(report.refused.len() as u64, "change"),
        if report.refused.len() == 1 {
            "it"
        } else {
            "they"
        },
        if report.refused.len() == 1 {
            "was"
        } else {
            "were"
        },
        names.join(", ")
    );
}

/// Run `command` under the guard; where this machine cannot guard, run it unguarded with a
/// warning, or not at all under fail-closed.
fn guarded(
    ctx: &mut Ctx<'_>,
    context: &stella::session::Context,
    id: &SessionId,
    make: impl Fn() -> Command,
    label: Option<&str>,
) -> Result {
    let command = make();
    let program = command.get_program().to_owned();
    match exec::run(context, id, command, label, ctx.err) {
        Ok(report) => {
            say_left_behind(ctx, &report);
            Ok(ExitCode::from(report.code()))
        }
        // Already under Stella's guard: the outer one sees every call of this command too.
        Err(exec::Error::Nested) => {
            let outer = env::var_os(exec::SESSION_ENV);
            if outer.as_deref() != Some(id.as_str().as_ref()) {
                let outer = outer.map_or("another session".into(), |o| {
                    format!("session '{}'", o.to_string_lossy())
                });
                ctx.say(format_args!(
                    "stella: already under the shell guard of {outer}: this command is recorded there"
                ));
            }
            plain(make())
        }
        Err(exec::Error::Unsupported(why)) => unguarded(ctx, make(), &why.to_string()),
        Err(exec::Error::Spawn { source, .. }) => Err(not_run(&program, &source)),
        // The command met damage in the session's journal: repaired here, and said.
        Err(exec::Error::Unrecorded { code, source, .. }) if source.is_damage() => {
            let mut e = CliError::from(context.repair_on_damage(Some(id), source.into()));
            // It did run: what the repair says of a command that stopped does not apply.
            e.message = format!(
                "'{}' ran (exit status {code}); {}",
                program.to_string_lossy(),
                e.message.replace("; this command did nothing else", "")
            );
            Err(e)
        }
        // Damage met reading the session's ref before the command started, or by a check while
        // it ran (that change was refused): repaired once this fails, as for any command.
        Err(exec::Error::Journal(source)) if source.is_damage() => Err(CliError::from(
            context.repair_on_damage(Some(id), source.into()),
        )),
        Err(e @ exec::Error::Config(_)) => {
            Err(CliError::from_error(&e).hint(crate::error::CONFIG_HINT))
        }
        Err(e) => Err(CliError::from_error(&e)),
    }
}

/// Run `command` without the guard, after one warning line; under fail-closed, refuse to.
fn unguarded(ctx: &mut Ctx<'_>, command: Command, why: &str) -> Result {
    match hosts::on_error(&ctx.settings, &ctx.cwd) {
        Ok(OnError::Allow) => {}
        Ok(OnError::Deny) => {
            return Err(CliError::new(format!(
                "refusing to run the command unguarded: {why}"
            ))
            .hint("the project chose fail-closed (hooks.on-error = \"deny\"); 'git stella exec --check' says why this machine cannot guard"));
        }
        Err(invalid) => {
            let mut e = CliError::new(format!("refusing to run the command unguarded: {why}"));
            e.causes = stella::report::Report::of(&invalid).causes_with_message();
            return Err(e.hint(crate::error::CONFIG_HINT));
        }
    }
    let _ = writeln!(ctx.err, "stella: warning: running unguarded: {why}");
    plain(command)
}

/// Run `command` in place of this process.
fn plain(mut command: Command) -> Result {
    let e = command.exec();
    Err(not_run(command.get_program(), &e))
}

/// A command that could not be started, with a shell's exit status: 127 not found, else 126.
fn not_run(program: &std::ffi::OsStr, e: &std::io::Error) -> CliError {
    let kind = if e.kind() == std::io::ErrorKind::NotFound {
        Kind::NotFound
    } else {
        Kind::CannotRun
    };
    CliError::new(format!("could not run '{}'", program.to_string_lossy()))
        .cause(e.to_string())
        .of_kind(kind)
}
