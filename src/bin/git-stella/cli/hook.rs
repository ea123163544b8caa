use std::io::{Read, Write};
use std::process::ExitCode;
use std::time::Duration;

use super::{Ctx, Result};
use stella::hooks::{self, Answer, Env};

/// The exit status of every `hook` call: never 2, which agent hosts read as "block".
const HOOK_EXIT: &str = "Exit status:
  0  every handled outcome, a refusal included (the host's deny answer on
     stdout); nothing done outside a git repository or for paths outside the
     workspace
  1  the hook itself failed, the reason on stderr (the host lets the tool
     run), unless the project chose fail-closed: then a write is denied with
     exit 0
  Never 2.";

/// Answer an agent host's hook call: read its payload on stdin, act, answer in its protocol
///
/// Installed by 'git stella hooks install --agent NAME'; not meant to be run by hand.
#[derive(clap::Subcommand, Debug)]
#[command(after_long_help = HOOK_EXIT)]
pub enum HookCommand {
    /// Answer one Claude Code hook payload (SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop, SessionEnd)
    ///
    /// Fail-closed is '.stella/config.toml' with 'hooks.on-error = "deny"', or 'git config
    /// stella.hookOnError deny'.
    #[command(after_long_help = HOOK_EXIT)]
    ClaudeCode,
    /// Answer a Codex CLI hook (PreToolUse/PostToolUse on apply_patch)
    #[command(after_long_help = HOOK_EXIT)]
    Codex,
    /// Answer a Gemini CLI hook (BeforeTool/AfterTool on read_file, write_file, replace)
    #[command(after_long_help = HOOK_EXIT)]
    Gemini,
    /// Answer a Cursor hook (preToolUse, beforeReadFile, afterFileEdit)
    #[command(after_long_help = HOOK_EXIT)]
    Cursor,
    /// Answer a GitHub Copilot CLI hook (preToolUse/postToolUse on view, create, edit, apply_patch, bash)
    #[command(after_long_help = HOOK_EXIT)]
    Copilot,
    /// Answer Stella's OpenCode plugin (tool.execute.before/after on read, write, edit, apply_patch, bash)
    #[command(after_long_help = HOOK_EXIT)]
    Opencode,
    /// Answer a Qwen Code hook (PreToolUse/PostToolUse on read_file, write_file, edit, run_shell_command)
    #[command(after_long_help = HOOK_EXIT)]
    Qwen,
}

/// How long one hook call may take before it gives up (and says so), unless
/// `STELLA_HOOK_TIMEOUT_MS` says otherwise.
pub const BUDGET: Duration = Duration::from_secs(10);

/// The budget for one call, read at the edge.
fn budget() -> Duration {
    std::env::var("STELLA_HOOK_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(BUDGET, Duration::from_millis)
}

pub fn run(ctx: &mut Ctx<'_>, command: &HookCommand, out: &mut dyn Write) -> Result {
    use stella::hooks::{
        claude_code::ClaudeCode, codex::Codex, copilot::Copilot, cursor::Cursor, gemini::Gemini,
        opencode::OpenCode, qwen::Qwen,
    };
    let env = Env {
        settings: ctx.settings.clone(),
        cwd: ctx.cwd.clone(),
        shell_guard: std::env::var(hooks::install::PREFIX_KEY)
            .is_ok_and(|p| hooks::install::is_stella_prefix(&p))
            && stella::exec::support().is_ok(),
        // Codex, Gemini CLI and Copilot CLI run each shell command the model sends through this program's
        // `exec`, when this machine can guard one.
        // (`STELLA_TEST_NO_SHELL_GUARD=1`: the tests' stand-in for a machine that cannot.)
        guard_exe: match command {
            HookCommand::Codex
            | HookCommand::Gemini
            | HookCommand::Copilot
            | HookCommand::Opencode
                if stella::exec::support().is_ok()
                    && std::env::var_os("STELLA_TEST_NO_SHELL_GUARD").is_none() =>
            {
                let exe = std::env::current_exe().ok();
                match (command, &exe) {
                    // Copilot CLI asks before a command that names a path outside the
                    // workspace, which no one answers in a headless run: Stella is named as
                    // PATH finds it, when that is this binary.
                    (HookCommand::Copilot | HookCommand::Opencode, Some(exe))
                        if hooks::install::invoked_as(
                            std::ffi::OsStr::new("git-stella"),
                            std::env::var_os("PATH").as_deref(),
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
    let answer = match command {
        HookCommand::ClaudeCode => answer::<ClaudeCode>(env),
        HookCommand::Codex => answer::<Codex>(env),
        HookCommand::Gemini => answer::<Gemini>(env),
        HookCommand::Cursor => answer::<Cursor>(env),
        HookCommand::Qwen => answer::<Qwen>(env),
        HookCommand::Copilot => answer::<Copilot>(env),
        HookCommand::Opencode => answer::<OpenCode>(env),
    };
    Ok(emit(ctx, &answer, out))
}

/// Read the payload on stdin and answer it within the time budget.
fn answer<H: hooks::Host>(env: Env) -> Answer {
    hooks::answer_within::<H>(
        env,
        budget(),
        || {
            let mut input = Vec::new();
            std::io::stdin().lock().read_to_end(&mut input)?;
            Ok(input)
        },
        // Out of time: answer the host now and end the process, which ends the work.
        |answer| {
            write_fd(1, &answer.stdout);
            write_fd(2, answer.stderr.as_bytes());
            std::process::exit(exit_code(&answer).into());
        },
    )
}

/// Write an answer out; never exit 2, whatever the answer says.
pub fn emit(ctx: &mut Ctx<'_>, answer: &Answer, out: &mut dyn Write) -> ExitCode {
    let _ = out.write_all(&answer.stdout);
    let _ = out.flush();
    let _ = ctx.err.write_all(answer.stderr.as_bytes());
    ExitCode::from(exit_code(answer))
}

/// Write to a standard stream's file descriptor itself: the main thread, still at work, holds
/// the locks of std's handles for stdout and stderr.
fn write_fd(fd: std::os::fd::RawFd, bytes: &[u8]) {
    use std::os::fd::FromRawFd;
    // SAFETY: descriptors 1 and 2 stay open for the life of the process, and ManuallyDrop never
    // closes them.
    let mut stream = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
    let _ = stream.write_all(bytes);
}

/// The exit status for an answer: never 2, which a host reads as "block".
fn exit_code(answer: &Answer) -> u8 {
    if answer.code == 2 { 1 } else { answer.code }
}
