//! The command line: clap types and one file per command, each with an `Args` struct whose doc
//! comment is the help text and a `run(ctx, &args, out)` function.
//!
//! The edge of Stella, a library of its own so that the binaries (`git-stella`, `stella-mcp`), the
//! tests and the docs generator share one clap tree and one reading of the environment
//! ([`env`](mod@env)) without including sources by path. The `stella` library below it never reads the
//! environment, prints or exits.
//!
//! Messages follow git's voice (`error:`, `caused by:`, `hint:`), results go to stdout and
//! everything for people to stderr. Exit status: 0 done or allowed, 1 refused by a check, 2 an
//! error.

// No `unsafe` at the edge: the library's system calls are its own (`stella::exec`).
#![forbid(unsafe_code)]

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use stella::hosts::registry::{self, HOSTS, Shell};
use stella::ids::SessionId;
use stella::session::{self, Context};
use stella::workspace::Settings;

pub mod docs;
/// The guard's decision table (SPEC section 4), for the pages of the commands that consult it.
macro_rules! decision_table {
    () => {
        "Decision table:
  session's map   disk now             update   delete
  not tracked     anything             allow    allow
  tracked         cannot be read       allow    allow
  tracked         gone                 REFUSE   allow
  tracked         the bytes to write   allow    -
  tracked         the bytes it saw     allow    allow
  tracked         other bytes          REFUSE   REFUSE

The first row that matches decides. A path the session never read or wrote is not its
business, and a create (nothing on disk, nothing in the map) loses nothing. A path that cannot
be read is let through: the tool's own error says that better. Bytes on disk that already equal
the bytes about to be written lose nothing (HTTP's If-Match rule); the guard knows them only
when the caller says (`git stella write` reads them from stdin, `git stella guard --content
FILE`). Writing a file someone deleted would re-create what they removed, so it is refused;
deleting a file that is already gone is the end state asked for. A file that changed while the
session was reading it (it may have seen either version) counts as other bytes until it is
read again.

A refusal is exit status 1 with nothing written. Its message on stderr begins `refusing to
write: PATH` (or `refusing to delete: PATH`), says the file changed since this session last
read it, gives the fix (re-read the file and redo the change against what is there now) and
ends with a short diff of what changed.
"
    };
}

mod artifact_arg;
mod checkpoint;
mod content_arg;
pub mod ctx;
mod demo;
mod diff;
mod doctor;
pub mod env;
pub mod error;
mod exec;
mod gc;
mod guard;
mod hook;
mod hooks;
mod host_arg;
mod init;
mod inspect;
mod log;
mod mcp;
#[cfg(feature = "mcp")]
pub mod mcp_server;
pub mod output;
mod prune;
mod read;
mod recover;
mod replay;
mod resume;
mod rm;
mod session_cmd;
mod session_meta;
mod show;
mod status;
mod step;
mod store_path;
pub mod term;

pub use ctx::{
    Ctx, parse_session_id, print_refusals, report_refusals, say_kept, settings_from_env,
};
pub use error::{CONFIG_HINT, Caller, CliError, Kind, Result};
pub use output::{print_json, record_json, writer_json};
mod turn;
mod undo;
mod verify;
mod write;
mod wrote;

/// What `--version` says: the package version, the commit it was built from and the date of the
/// build (`cli/build.rs`). `-V` says the package version alone.
pub const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("STELLA_COMMIT"),
    " ",
    env!("STELLA_BUILD_DATE"),
    ")"
);

/// Refuse an AI agent's write when the file changed since the agent read it
///
/// Each session remembers the digest of every file it read or wrote. Before an update or
/// delete, the bytes on disk are hashed again; if they changed, the write is refused with a
/// message that names the file and says how to recover. No locks, no daemon, no shared state
/// between agents.
///
/// A session is one agent's (or person's) line of work, named by --session or STELLA_SESSION.
/// There is no implicit current session, so two agents never share one by accident. What a
/// session has seen is kept in a private bare git repository outside the working tree (`git
/// stella store-path`), durable before each command returns: an agent that crashed resumes
/// exactly as guarded as it was.
///
/// The guard sees only what it is told: a write made without asking it, or a file the session
/// never read, is not protected. An agent host calls it before every file-touching tool. Stella
/// opens no network connection and writes nothing into the repository but `.stella/` and the
/// files a guarded write was asked to write.
#[derive(Parser, Debug)]
#[command(
    name = "git-stella",
    bin_name = "git stella",
    version,
    long_version = LONG_VERSION,
    max_term_width = 100,
    after_long_help = "Examples:
Two agents share a working tree; each has its own session:

  export STELLA_SESSION=$(git stella session start)
  git stella read src/lib.rs
  # ... another agent or a person edits src/lib.rs ...
  git stella write src/lib.rs <new.rs    # refused, exit 1
  git stella diff src/lib.rs             # what changed meanwhile
  git stella read src/lib.rs             # re-read, redo the change
  git stella write src/lib.rs <new.rs    # allowed
  git stella status

Exit status:
  0  done, or the write is allowed
  1  refused by a check (a stale write, a fingerprint mismatch, a
     materialize that would overwrite someone's work); nothing was
     written
  2  an error: bad usage, not inside a git working tree, an unknown
     session, an unreadable file, an I/O failure

Environment:
  STELLA_SESSION  the session to act on when --session is not given
  STELLA_HOME     where Stella keeps its data (default:
                  ~/.local/share/stella)
  STELLA_LOG      what to log on stderr: a level (debug) or a list of
                  target=level (warn,stella=trace); default: warn

Files:
  .stella/private/
      this working tree's id; ignored by its own .gitignore, so it is
      never committed
  $STELLA_HOME/workspaces/<id>/store.git
      the journal: a bare git repository that plain git reads"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// The options every command takes.
#[derive(clap::Args, Debug)]
pub struct Global {
    /// Run as if started in DIR
    #[arg(short = 'C', value_name = "DIR", global = true)]
    pub dir: Option<PathBuf>,
    /// The session to act on
    #[arg(long, value_name = "ID", env = "STELLA_SESSION", global = true)]
    pub session: Option<String>,
    /// Say nothing on stderr but errors and refusals
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Say more on stderr (repeat for more)
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// Colour the output: always, never, or auto (a terminal); default from color.stella or
    /// color.ui
    #[arg(long, value_name = "WHEN", global = true)]
    pub color: Option<term::When>,
    /// Do not pipe log, show, diff or recover into a pager
    #[arg(long, global = true)]
    pub no_pager: bool,
}

/// The commands an agent host runs before every edit or shell command, parsed by a command line
/// that knows only them: building clap's whole tree (every command, every page of help) was a
/// sixth of the guard's time, and about a tenth of a guarded `true`'s. Same option types as `Cli`, so whatever this accepts means the same there;
/// anything it does not accept (help, version, a mistake) goes to `Cli` for the full message.
#[derive(Parser, Debug)]
#[command(name = "git-stella", bin_name = "git stella")]
struct HotCli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: HotCommand,
}

#[derive(Subcommand, Debug)]
enum HotCommand {
    Guard(guard::Args),
    #[command(subcommand)]
    Hook(hook::HookCommand),
    Exec(exec::Args),
}

impl From<HotCli> for Cli {
    fn from(hot: HotCli) -> Cli {
        let command = match hot.command {
            HotCommand::Guard(a) => Command::Guard(a),
            HotCommand::Hook(a) => Command::Hook(a),
            HotCommand::Exec(a) => Command::Exec(a),
        };
        Cli {
            global: hot.global,
            command,
        }
    }
}

impl Command {
    /// Which way the command answers its caller, for the exit status of an error.
    fn caller(&self) -> Caller {
        match self {
            Command::Hook(_) => Caller::Hook,
            Command::Exec(_) => Caller::Exec,
            _ => Caller::Other,
        }
    }

    /// Whether the command was asked for JSON (`--json`): its errors are JSON too.
    fn json(&self) -> bool {
        use session_cmd::SessionCommand as S;
        match self {
            Command::Guard(a) => a.json,
            Command::Status(a) => a.json,
            Command::Diff(a) => a.json,
            Command::Resume(a) => a.json,
            Command::Checkpoint(a) => a.json,
            Command::Inspect(a) => a.json,
            Command::Verify(a) => a.json,
            Command::Replay(a) => a.json,
            Command::Log(a) => a.json,
            Command::Recover(a) => a.json,
            Command::Undo(a) => a.json,
            Command::Gc(a) => a.json,
            Command::Doctor(a) => a.json,
            Command::Session(S::List(a)) => a.json,
            Command::Session(S::Show(a)) => a.json,
            Command::Session(S::Prune(a)) => a.json,
            _ => false,
        }
    }
}

/// Whether a command line that did not parse asked for JSON: `--json` among the options, before
/// any `--` and before the command `exec` wraps.
fn json_asked(args: &[OsString]) -> bool {
    args.iter()
        .skip(1)
        .take_while(|a| *a != "--" && *a != "exec")
        .any(|a| a == "--json")
}

/// A usage error (clap's), as Stella's: its first line the message, the rest a hint.
fn usage_error(e: &clap::Error) -> CliError {
    let text = e.render().to_string();
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let message = lines
        .next()
        .unwrap_or_default()
        .trim_start_matches("error: ")
        .to_owned();
    let rest: Vec<&str> = lines.map(str::trim).collect();
    let mut error = CliError::new(message);
    if !rest.is_empty() {
        error = error.hint(rest.join("; "));
    }
    error
}

impl Cli {
    /// Parse a command line, the hot commands without building the whole tree.
    pub fn parse_args(args: &[OsString]) -> std::result::Result<Cli, clap::Error> {
        // A host's shell prefix is one program and one flag (see `install::shell_prefix`).
        if let Some(arg) = args.get(1)
            && let Some(host) = HOSTS
                .iter()
                .find(|h| matches!(h.shell, Shell::Prefix { flag, .. } if arg.as_os_str() == flag))
        {
            let mut rewritten: Vec<OsString> = vec![args[0].clone()];
            rewritten.extend(["exec", "--host", host.flag].map(OsString::from));
            rewritten.extend(args[2..].iter().cloned());
            if let Some(cli) = exec_word_for_word(&rewritten) {
                return Ok(cli);
            }
            return HotCli::try_parse_from(&rewritten)
                .map(Cli::from)
                .or_else(|_| Cli::try_parse_from(rewritten));
        }
        if let Some(cli) = exec_word_for_word(args) {
            return Ok(cli);
        }
        // What `hooks install` writes, word for word: nothing to parse.
        if let [_, hook, agent] = args
            && hook == "hook"
            && let Some(host) = agent.to_str().and_then(registry::host)
            && let session = env::var_checked(env::SESSION)
            && !matches!(session, Err(std::env::VarError::NotUnicode(_)))
        {
            return Ok(Cli {
                global: Global {
                    dir: None,
                    session: session.ok(),
                    quiet: false,
                    verbose: 0,
                    color: None,
                    no_pager: false,
                },
                command: Command::Hook(hook::HookCommand { host }),
            });
        }
        if matches!(command_word(args), Some("guard" | "hook" | "exec"))
            && let Ok(hot) = HotCli::try_parse_from(args)
        {
            return Ok(hot.into());
        }
        Cli::try_parse_from(args)
    }
}

/// An `exec` line in the shapes Stella's hooks, its host prefixes and its docs write —
/// `[--session ID] exec [--host HOST] [--session ID] -- COMMAND…`, or without the `--` when the
/// command's first word is not an option — read word for word: the hot parser's clap tree, its
/// code paged in on every start, was 0.3 ms of a guarded `true`'s 2.7. `None` for any other
/// line, which the parsers read as always; a test holds that what this reads means what they
/// would.
fn exec_word_for_word(args: &[OsString]) -> Option<Cli> {
    let at = |i: usize| args.get(i).map(OsString::as_os_str);
    // `--session ID` at `i`, at most once in the line.
    let session_at = |i: &mut usize, session: &mut Option<String>| -> Option<()> {
        if at(*i)? == "--session" {
            let id = at(*i + 1)?.to_str()?;
            if session.is_some() || id.is_empty() || id.starts_with('-') {
                return None;
            }
            *session = Some(id.to_owned());
            *i += 2;
        }
        Some(())
    };
    let mut session = None;
    let mut i = 1;
    session_at(&mut i, &mut session)?;
    if at(i)? != "exec" {
        return None;
    }
    i += 1;
    let mut host = None;
    if at(i)? == "--host" {
        host = Some(
            at(i + 1)?
                .to_str()
                .and_then(registry::host)
                .filter(|h| h.routes_shell())?,
        );
        i += 2;
    }
    session_at(&mut i, &mut session)?;
    let first = at(i)?;
    let command = if first == "--" {
        &args[i + 1..]
    } else if first.as_encoded_bytes().first().is_some_and(|b| *b != b'-') {
        &args[i..]
    } else {
        return None;
    };
    if command.is_empty() {
        return None;
    }
    // As the option's `env` fallback reads it; an empty or unreadable value is the parsers'.
    if session.is_none() {
        match env::var_checked(env::SESSION) {
            Err(std::env::VarError::NotPresent) => {}
            Ok(id) if !id.is_empty() => session = Some(id),
            _ => return None,
        }
    }
    Some(Cli {
        global: Global {
            dir: None,
            session,
            quiet: false,
            verbose: 0,
            color: None,
            no_pager: false,
        },
        command: Command::Exec(exec::Args {
            check: false,
            host,
            command: command.to_vec(),
        }),
    })
}

#[derive(Subcommand, Debug)]
pub enum Command {
    Init(init::Args),
    #[command(subcommand)]
    Session(session_cmd::SessionCommand),
    Read(read::Args),
    Wrote(wrote::Args),
    Guard(guard::Args),
    Write(write::Args),
    Rm(rm::Args),
    Status(status::Args),
    Diff(diff::Args),
    Exec(exec::Args),
    #[command(subcommand)]
    Turn(turn::TurnCommand),
    Step(step::Args),
    Resume(resume::Args),
    Checkpoint(checkpoint::Args),
    Inspect(inspect::Args),
    Verify(verify::Args),
    Replay(replay::Args),
    Log(log::Args),
    Show(show::Args),
    Recover(recover::Args),
    Undo(undo::Args),
    StorePath(store_path::Args),
    Gc(gc::Args),
    Doctor(doctor::Args),
    Demo(demo::Args),
    #[command(subcommand)]
    Hook(hook::HookCommand),
    #[command(subcommand)]
    Hooks(hooks::HooksCommand),
    Mcp(mcp::Args),
}

fn init_tracing(verbose: u8) {
    use tracing_subscriber::filter::{LevelFilter, Targets};
    // `Targets` rather than `EnvFilter`: the same `target=level` lists without a regex engine to
    // load on every call (the guard runs before every edit).
    let verbosity = || {
        let stella = match verbose {
            0 => LevelFilter::WARN,
            1 => LevelFilter::INFO,
            2 => LevelFilter::DEBUG,
            _ => LevelFilter::TRACE,
        };
        Targets::new()
            .with_default(LevelFilter::WARN)
            .with_target("stella", stella)
    };
    let filter = match env::var_checked(env::LOG) {
        Ok(f) if !f.is_empty() => f.parse::<Targets>().unwrap_or_else(|e| {
            eprintln!("stella: ignoring STELLA_LOG: {e}");
            verbosity()
        }),
        _ => verbosity(),
    };
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(env::stderr)
                // Colour only for a person at a terminal: never escape codes into a pipe or a log.
                .with_ansi(
                    io::IsTerminal::is_terminal(&env::stderr())
                        && env::var_os("NO_COLOR").is_none(),
                )
                .with_target(false)
                // A span's end says how long it took: a slow hook, shell guard, checkpoint or
                // replay reads from `STELLA_LOG=debug`.
                .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
                // No clock on each line (`without_time` would also drop the spans' timings).
                .with_timer(()),
        )
        .with(filter)
        .try_init();
}

/// Parse `args` and run the command, printing results to `out` and everything else to `err`.
pub fn main_with(
    args: impl IntoIterator<Item = OsString>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> ExitCode {
    let args: Vec<OsString> = args.into_iter().collect();
    env::apply_test_switches();
    let cli = match Cli::parse_args(&args) {
        Ok(cli) => cli,
        Err(e) => {
            // To an agent host, 2 means "block": a hook command with bad arguments is 1.
            let code = match (e.use_stderr(), is_hook_call(&args)) {
                (false, _) => 0,
                (true, true) => 1,
                (true, false) => 2,
            };
            if e.use_stderr() && json_asked(&args) {
                usage_error(&e).print_json(err, "usage", code);
            } else {
                let _ = e.print();
            }
            return ExitCode::from(code);
        }
    };
    init_tracing(cli.global.verbose);
    let mut opened = None;
    let result = (|| {
        let mut cwd = env::current_dir()?;
        if let Some(dir) = &cli.global.dir {
            cwd = cwd.join(dir);
            if !cwd.is_dir() {
                return Err(CliError::new(format!(
                    "cannot change to '{}': no such folder",
                    dir.display()
                )));
            }
        }
        let settings = settings_from_env()?;
        opened = Some((settings.clone(), cwd.clone()));
        if session_flag_given(&args) && !uses_session(&cli.command) {
            let mut word = command_word(&args).unwrap_or_default().to_owned();
            // A command of a group is named in full: 'session list', 'hooks install'.
            if let Command::Session(_) | Command::Hooks(_) | Command::Hook(_) = &cli.command
                && let Some(sub) = args
                    .iter()
                    .filter_map(|a| a.to_str())
                    .skip_while(|a| *a != word)
                    .skip(1)
                    .find(|a| !a.starts_with('-'))
            {
                word = format!("{word} {sub}");
            }
            writeln!(
                err,
                "stella: warning: --session is not used by 'git stella {word}'; it was ignored"
            )?;
        }
        let shown = output_of(&cli, &args, &cwd);
        let mut ctx = Ctx {
            settings,
            cwd,
            session: cli.global.session.clone(),
            quiet: cli.global.quiet,
            paint: term::Paint { on: shown.color },
            color_flag: cli.global.color,
            progress: !cli.global.quiet && io::IsTerminal::is_terminal(&env::stderr()),
            err,
        };
        match shown.pager.as_deref().and_then(term::Pager::start) {
            Some(mut pager) => {
                let result = run(&mut ctx, &cli.command, pager.input());
                pager.finish();
                result
            }
            None => run(&mut ctx, &cli.command, out),
        }
    })();
    // A command that found the store damaged repairs it, and fails saying what was lost.
    let result = match (result, &opened) {
        (Err(e), Some((settings, cwd))) if e.kind == Kind::Damaged => {
            Err(repaired(settings, cwd, cli.global.session.as_deref(), e))
        }
        (result, _) => result,
    };
    match result {
        Ok(code) => code,
        // A closed pipe (`git stella log | head`) ends quietly.
        Err(e) if e.kind == Kind::BrokenPipe && stdout_reader_gone() => ExitCode::SUCCESS,
        Err(mut e) => {
            // A broken pipe of Stella's own (to a `git` it runs): a failure like any other.
            if e.kind == Kind::BrokenPipe {
                e.kind = Kind::Failed;
            }
            let code = e.exit_status(cli.command.caller());
            if cli.command.json() {
                e.print_json(err, if code == 1 { "refused" } else { "error" }, code);
            } else {
                e.print(err);
            }
            ExitCode::from(code)
        }
    }
}

/// Whether this process's stdout is a pipe nobody reads any more: only then is a broken pipe
/// the reader's doing ([`stella::fsutil::reader_gone`]).
fn stdout_reader_gone() -> bool {
    use std::os::fd::AsFd;
    stella::fsutil::reader_gone(env::stdout().as_fd())
}

/// Repair the store of the workspace around `cwd` after a command failed with `found`, damage
/// (see [`stella::repair`]): the error that says what was lost and, as its causes, what was found.
fn repaired(
    settings: &Settings,
    cwd: &std::path::Path,
    session: Option<&str>,
    found: CliError,
) -> CliError {
    let Ok((context, _)) = Context::open(settings, cwd) else {
        return found;
    };
    let hint = session.and_then(|s| SessionId::parse(s).ok());
    match stella::repair::repair(&context.journal(), hint.as_ref()) {
        Ok(reports) if reports.is_empty() => found,
        Ok(reports) => {
            let mut e = CliError::from(session::Error::Repair(stella::repair::Error::Repaired {
                reports,
                damage: None,
            }));
            e.causes.push(found.message);
            e.causes.extend(found.causes);
            e
        }
        Err(e) => {
            let mut e = CliError::from(e);
            e.causes
                .push(format!("found while repairing: {}", found.message));
            e
        }
    }
}

/// Colour and pager for the command: only the commands that show something for a person to
/// read ask git's config; the others (the guard and the hooks above all) never pay for it.
fn output_of(cli: &Cli, args: &[OsString], cwd: &std::path::Path) -> term::Output {
    let pages_by_default = match &cli.command {
        Command::Log(a) => !a.json,
        Command::Show(a) => !a.html,
        Command::Diff(a) => !a.json,
        Command::Recover(a) => !a.json,
        Command::Status(a) if !a.json => false,
        _ => {
            return term::Output {
                color: false,
                pager: None,
            };
        }
    };
    let word = command_word(args).unwrap_or_default();
    term::decide(
        cli.global.color,
        cli.global.no_pager,
        word,
        pages_by_default,
        &term::GitConfig::read(cwd),
        &term::Surroundings::of_process(),
    )
}

/// Whether `--session` was given on the command line (not through STELLA_SESSION, which a
/// script may set for every command).
fn session_flag_given(args: &[OsString]) -> bool {
    args.iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| a == "--session" || a.to_string_lossy().starts_with("--session="))
}

/// Whether `command` acts on the session `--session` names. The others ignore it, with a
/// warning: an error would break a script that passes it to every command.
fn uses_session(command: &Command) -> bool {
    !matches!(
        command,
        Command::Init(_)
            | Command::Inspect(_)
            | Command::Verify(_)
            | Command::Replay(_)
            | Command::StorePath(_)
            | Command::Gc(_)
            | Command::Doctor(_)
            | Command::Demo(_)
            | Command::Hook(_)
            | Command::Hooks(_)
            | Command::Session(
                session_cmd::SessionCommand::Start(_)
                    | session_cmd::SessionCommand::List(_)
                    | session_cmd::SessionCommand::Drop(_)
                    | session_cmd::SessionCommand::Prune(_)
            )
    )
}

/// Whether the command line names the `hook` command.
fn is_hook_call(args: &[OsString]) -> bool {
    command_word(args) == Some("hook")
}

/// The command a command line names: its first word that is not an option or an option's value.
fn command_word(args: &[OsString]) -> Option<&str> {
    let mut rest = args.iter().skip(1);
    while let Some(a) = rest.next() {
        match a.to_str() {
            Some("-C" | "--session" | "--color") => {
                rest.next();
            }
            Some(s) if s.starts_with('-') => {}
            other => return other,
        }
    }
    None
}

fn run(ctx: &mut Ctx<'_>, command: &Command, out: &mut dyn Write) -> Result {
    match command {
        Command::Init(a) => init::run(ctx, a, out),
        Command::Session(a) => session_cmd::run(ctx, a, out),
        Command::Read(a) => read::run(ctx, a, out),
        Command::Wrote(a) => wrote::run(ctx, a, out),
        Command::Guard(a) => guard::run(ctx, a, out),
        Command::Write(a) => write::run(ctx, a, out),
        Command::Rm(a) => rm::run(ctx, a, out),
        Command::Status(a) => status::run(ctx, a, out),
        Command::Diff(a) => diff::run(ctx, a, out),
        Command::Exec(a) => exec::run(ctx, a, out),
        Command::Turn(a) => turn::run(ctx, a, out),
        Command::Step(a) => step::run(ctx, a, out),
        Command::Resume(a) => resume::run(ctx, a, out),
        Command::Checkpoint(a) => checkpoint::run(ctx, a, out),
        Command::Inspect(a) => inspect::run(ctx, a, out),
        Command::Verify(a) => verify::run(ctx, a, out),
        Command::Replay(a) => replay::run(ctx, a, out),
        Command::Log(a) => log::run(ctx, a, out),
        Command::Show(a) => show::run(ctx, a, out),
        Command::Recover(a) => recover::run(ctx, a, out),
        Command::Undo(a) => undo::run(ctx, a, out),
        Command::StorePath(a) => store_path::run(ctx, a, out),
        Command::Gc(a) => gc::run(ctx, a, out),
        Command::Doctor(a) => doctor::run(ctx, a, out),
        Command::Demo(a) => demo::run(ctx, a, out),
        Command::Hook(a) => hook::run(ctx, a, out),
        Command::Hooks(a) => hooks::run(ctx, a, out),
        Command::Mcp(a) => mcp::run(ctx, a, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<OsString> {
        line.split(' ').map(OsString::from).collect()
    }

    /// The exit status follows from the kind of failure and the command, in one table.
    #[test]
    fn an_errors_kind_and_command_give_its_exit_status() {
        let command = |line: &str| Cli::try_parse_from(args(line)).unwrap().command;
        let (status, hook, exec) = (
            command("git-stella status"),
            command("git-stella hook claude-code"),
            command("git-stella exec true"),
        );
        for (kind, want) in [
            (Kind::Failed, [2, 1, 125]),
            (Kind::Damaged, [2, 1, 125]),
            (Kind::BrokenPipe, [0, 0, 0]),
            (Kind::CannotRun, [126, 126, 126]),
            (Kind::NotFound, [127, 127, 127]),
        ] {
            let e = CliError::new("x").of_kind(kind);
            let got = [&status, &hook, &exec].map(|c| e.exit_status(c.caller()));
            assert_eq!(got, want, "{kind:?}");
        }
        // The error a command failed with is kept whole, beneath what is said of it.
        let e = CliError::from(io::Error::other("disk on fire"));
        let kept = std::error::Error::source(&e).unwrap();
        assert!(kept.downcast_ref::<io::Error>().is_some());
        assert_eq!(e.message, "disk on fire");
    }

    /// The hot commands' own parser means exactly what the whole command line means, and leaves
    /// help, version and mistakes to it.
    #[test]
    fn the_hot_parser_agrees_with_the_whole_command_line() {
        for line in [
            "git-stella guard a.rs",
            "git-stella --session s1 guard --delete a.rs b.rs",
            "git-stella -C sub -q guard --content new.rs --json a.rs",
            "git-stella guard a.rs --session s2 -vv",
            "git-stella hook claude-code",
            "git-stella -C sub hook codex",
            "git-stella exec -- true",
            "git-stella --session s1 exec -- sh -c true --json -C x",
            "git-stella exec --host codex --session s2 echo",
            "git-stella exec --check",
            "git-stella exec cargo build --release",
            "git-stella exec --host codex --session s2 -- sh -c true",
            "git-stella --session s1 exec -- git -C x status --session y",
            "git-stella exec sh -c true --session s3 -q",
            "git-stella exec -- -weird --help",
            "git-stella exec -- --",
            "git-stella exec --session s1 --host gemini -- ls",
            "git-stella exec --host codex x -- y",
        ] {
            assert!(HotCli::try_parse_from(args(line)).is_ok(), "hot: {line}");
            let hot = Cli::parse_args(&args(line)).unwrap();
            let whole = Cli::try_parse_from(args(line)).unwrap();
            assert_eq!(format!("{hot:?}"), format!("{whole:?}"), "{line}");
        }
        // The shapes hooks, host prefixes and the docs write are read word for word.
        for line in [
            "git-stella exec -- true",
            "git-stella --session s1 exec -- sh -c true --json -C x",
            "git-stella exec --host codex --session s2 -- sh -c true",
            "git-stella exec sh -c true --session s3 -q",
            "git-stella exec --host codex x -- y",
        ] {
            assert!(exec_word_for_word(&args(line)).is_some(), "{line}");
        }
        for line in [
            "git-stella exec --check",
            "git-stella exec --session s1 --host gemini -- ls",
            "git-stella -q exec -- true",
            "git-stella --session s1 exec --session s2 -- true",
            "git-stella exec --host nobody -- x",
            "git-stella exec --",
            "git-stella exec -x",
        ] {
            assert!(exec_word_for_word(&args(line)).is_none(), "{line}");
        }
        // A host's shell prefix is the exec command it stands for.
        let hot = Cli::parse_args(&args("git-stella --claude-code-shell echo")).unwrap();
        let whole = Cli::try_parse_from(args("git-stella exec --host claude-code echo")).unwrap();
        assert_eq!(format!("{hot:?}"), format!("{whole:?}"));
        for line in [
            "git-stella guard",
            "git-stella guard --delete --content x a.rs",
            "git-stella guard --help",
            "git-stella guard --version",
            "git-stella hook nobody",
            "git-stella exec",
            "git-stella exec --check -- true",
            "git-stella exec --host nobody x",
            "git-stella exec --help",
        ] {
            let hot = Cli::parse_args(&args(line)).unwrap_err();
            let whole = Cli::try_parse_from(args(line)).unwrap_err();
            assert_eq!(hot.kind(), whole.kind(), "{line}");
            assert_eq!(hot.to_string(), whole.to_string(), "{line}");
        }
    }
}
