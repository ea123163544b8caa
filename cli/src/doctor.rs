use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::ctx::Ctx;
use crate::env;
use crate::error::Result;
use crate::host_arg::HostParser;
use crate::output::print_json;
use stella::hosts::install;
use stella::hosts::registry::{Finding, HOSTS, Level, Look, Scope, Seen, Spec, Wiring};

/// Check that Stella's protection is on: installed hooks, config, data dir, shell guard
///
/// For this checkout and your user settings: every hook command an agent host runs exists, runs,
/// and is this version of git-stella; the MCP server binary is beside it; `.stella/config.toml`
/// and `stella.*` git config are valid; no host has Stella's hooks installed twice (it would run
/// each one twice: a project's, its local and the user's settings all count); Claude Code runs
/// Bash through Stella's shell guard (its CLAUDE_CODE_SHELL_PREFIX); Codex trusts Stella's hooks (it skips untrusted ones silently); the data dir
/// is writable; the shell guard can run here; which files a refused change left as they were
/// while the command that wanted them changed went on; and which journal stores belong to
/// checkouts that no longer exist. One line per finding (`ok`, `warn` or `error`), with a hint for each problem.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella doctor
  git stella doctor --json | jq '.findings[] | select(.level == \"error\")'
  git stella doctor --agent claude-code     # in CI, before the agent runs

Exit status:
  0  protection is on everywhere it was installed (warnings aside)
  1  protection is off somewhere: a hook that cannot run, an invalid config,
     untrusted Codex hooks, an unwritable data dir; or a host named with
     --agent has no Stella hooks
  2  an error: doctor itself could not run")]
pub struct Args {
    /// Print JSON: {level (the worst), findings: [{level, check, message, hint}]}
    #[arg(long)]
    pub json: bool,
    /// Also fail unless this host has Stella's hooks here or in your user settings: a CI job's
    /// check that its agent will run guarded (repeat for more hosts)
    #[arg(long, value_name = "HOST", value_parser = HostParser::any())]
    pub agent: Vec<&'static Spec>,
}

fn finding(level: Level, check: &'static str, message: String, hint: Option<String>) -> Finding {
    Finding::new(level, check, message, hint)
}

/// A host's file that can hold Stella's hooks.
struct HostFile {
    host: &'static Spec,
    scope: Scope,
    path: PathBuf,
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, out: &mut dyn Write) -> Result {
    let root = stella::workspace::discover_root(&ctx.settings, &ctx.cwd).ok();
    let mut findings = Vec::new();
    hosts_checks(root.as_deref(), &args.agent, &mut findings);
    mcp_check(&mut findings);
    if let Some(root) = &root {
        config_checks(ctx, root, &mut findings);
        // Files a refused change left behind, while the command that wanted them changed went on.
        match ctx.open() {
            Ok(context) => left_behind(&context, &mut findings),
            Err(e) => findings.push(finding(
                Level::Warn,
                "left-behind",
                format!("the journal store could not be read: {}", e.message),
                Some("'git stella verify' says what is wrong with it".into()),
            )),
        }
    }
    data_checks(&ctx.settings.data_dir, &mut findings);
    findings.push(shell_guard_check());
    stores_checks(&ctx.settings.data_dir, &mut findings);
    print_findings(&findings, args.json, out)
}

/// Each agent host's hooks: installed where, twice or not at all, and the host's own checks
/// (trust, settings that would skip them); `wanted` are the hosts `--agent` asks for.
fn hosts_checks(
    root: Option<&std::path::Path>,
    wanted: &[&'static Spec],
    findings: &mut Vec<Finding>,
) {
    let home = directories::BaseDirs::new().map(|d| d.home_dir().to_owned());
    let var = |v: &str| env::var_os(v);
    let mut installed: Vec<&Spec> = Vec::new();
    for host in HOSTS {
        let seen = host_files(host, root, home.as_deref(), findings);
        if !seen.iter().any(|s| s.stella) {
            continue;
        }
        installed.push(host);
        // A host reads every one of its settings files, the local one included, and runs the
        // hooks of each.
        let with: Vec<&Seen> = seen.iter().filter(|s| s.stella).collect();
        for (i, a) in with.iter().enumerate() {
            for b in &with[i + 1..] {
                let flag = host.flag;
                let local = host
                    .local
                    .map(|l| format!(", --local for {l}"))
                    .unwrap_or_default();
                findings.push(finding(
                    Level::Warn,
                    "hooks-twice",
                    format!("{flag}: Stella's hooks are installed in both '{}' and '{}': {flag} runs each hook twice", a.path.display(), b.path.display()),
                    Some(format!("keep one: 'git stella hooks uninstall --agent {flag}' (with --user for your user settings{local})")),
                ));
            }
        }
        findings.extend((host.doctor)(&Look {
            home: home.as_deref(),
            root,
            seen: &seen,
            var: &var,
        }));
    }
    for host in wanted {
        let flag = host.flag;
        if !installed.contains(host) {
            findings.push(finding(
                Level::Error,
                "hooks",
                format!("{flag}: no Stella hooks here or in your user settings, and --agent {flag} asks for them: {flag} would run unguarded"),
                Some(format!("'git stella hooks install --agent {flag}', then commit the file it names")),
            ));
        }
    }
    if installed.is_empty() && wanted.is_empty() {
        let others: Vec<&str> = HOSTS[1..].iter().map(|h| h.flag).collect();
        findings.push(finding(
            Level::Warn,
            "hooks",
            "no agent host has Stella's hooks here or in your user settings".into(),
            Some(format!(
                "'git stella hooks install --agent {}' (or {})",
                HOSTS[0].flag,
                others.join(", ")
            )),
        ));
    }
}

/// The MCP server beside this binary.
fn mcp_check(findings: &mut Vec<Finding>) {
    let exe = env::current_exe().ok();
    if let Some(exe) = &exe {
        let mcp = exe.with_file_name("stella-mcp");
        findings.push(if mcp.is_file() {
            finding(
                Level::Ok,
                "mcp",
                format!("the MCP server is at {}", mcp.display()),
                None,
            )
        } else {
            finding(
                Level::Warn,
                "mcp",
                format!(
                    "no MCP server beside {}: 'git stella mcp' cannot start",
                    exe.display()
                ),
                Some("install git-stella with its default features".into()),
            )
        });
    }
}

/// `.stella/config.toml` and `git config stella.*`, both halves of the project's configuration.
fn config_checks(ctx: &Ctx<'_>, root: &std::path::Path, findings: &mut Vec<Finding>) {
    match stella::hosts::Config::load(root) {
        Ok(_) => findings.push(finding(
            Level::Ok,
            "config",
            "'.stella/config.toml' is valid (or absent)".into(),
            None,
        )),
        Err(e) => findings.push(finding(
            Level::Error,
            "config",
            stella::hosts::error_text(&e)
                .trim_end()
                .trim_start_matches("stella: error: ")
                .to_owned(),
            Some("every guarded write is denied until it is fixed".into()),
        )),
    }
    if let Ok(repo) = stella::workspace::open_user_repo(ctx.settings.git_env_overrides, root)
        && let Err(why) = stella::hosts::git_on_error(&repo)
    {
        findings.push(finding(
            Level::Error,
            "config",
            why.to_string(),
            Some("'git config --unset' the key, or set stella.hookOnError to allow or deny".into()),
        ));
    }
}

/// Whether the data dir is writable.
fn data_checks(data: &std::path::Path, findings: &mut Vec<Finding>) {
    let writable = stella::fsutil::create_private_dir(data, 0o700)
        .and_then(|()| tempfile::tempfile_in(data).map(drop));
    findings.push(match writable {
        Ok(()) => finding(
            Level::Ok,
            "data",
            format!("the data dir {} is writable", data.display()),
            None,
        ),
        Err(e) => finding(
            Level::Error,
            "data",
            format!("the data dir {} is not writable: {e}", data.display()),
            Some("every session fails to record; set STELLA_HOME to a folder you can write".into()),
        ),
    });
}

/// The stores in the data dir whose checkout is gone.
fn stores_checks(data: &std::path::Path, findings: &mut Vec<Finding>) {
    if let Ok(entries) = std::fs::read_dir(data.join("workspaces")) {
        for entry in entries.flatten() {
            let Ok(owner) = std::fs::read(entry.path().join("owner")) else {
                continue;
            };
            let owner = PathBuf::from(String::from_utf8_lossy(&owner).trim_end().to_owned());
            if !owner.exists() {
                findings.push(finding(
                    Level::Warn,
                    "stores",
                    format!(
                        "the journal store {} belongs to {}, which no longer exists",
                        entry.path().display(),
                        owner.display()
                    ),
                    Some(format!(
                        "if that checkout is gone for good: rm -r '{}'",
                        entry.path().display()
                    )),
                ));
            }
        }
    }
}

/// Whether the shell guard runs on this machine.
fn shell_guard_check() -> Finding {
    match stella::exec::support() {
        Ok(()) => finding(
            Level::Ok,
            "shell-guard",
            "the shell guard runs on this machine".into(),
            None,
        ),
        Err(why) => finding(
            Level::Warn,
            "shell-guard",
            format!("the shell guard cannot run here: {why}"),
            Some("shell commands run unguarded; 'git stella exec --check' says more".into()),
        ),
    }
}

/// Print the findings (a line each and their hints, or one JSON object); exit 1 when one is an
/// error.
fn print_findings(findings: &[Finding], json: bool, out: &mut dyn Write) -> Result {
    let worst = findings.iter().map(|f| f.level).max().unwrap_or(Level::Ok);
    if json {
        let list: Vec<Value> = findings
            .iter()
            .map(|f| {
                json!({
                    "level": f.level.name(),
                    "check": f.check,
                    "message": f.message,
                    "hint": f.hint,
                })
            })
            .collect();
        print_json(out, &json!({ "level": worst.name(), "findings": list }))?;
    } else {
        for f in findings {
            // A message of several lines (a parse error with its caret) keeps its lines, each
            // under the first; only other control characters are shown escaped.
            let mut lines = f.message.lines();
            let first = lines.next().unwrap_or_default();
            writeln!(
                out,
                "{:<5} {}",
                f.level.name(),
                stella::text::escape_controls(first)
            )?;
            for line in lines {
                writeln!(out, "      {}", stella::text::escape_controls(line))?;
            }
            if let Some(hint) = &f.hint {
                writeln!(out, "      hint: {hint}")?;
            }
        }
    }
    Ok(if worst == Level::Error {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// One warning per live session that a refused change left files behind for
/// ([`stella::refusals::left_behind`]).
fn left_behind(context: &stella::session::Context, findings: &mut Vec<Finding>) {
    let journal = context.journal();
    let Ok(sessions) = journal.sessions() else {
        return;
    };
    for (id, tip) in sessions {
        if stella::guard::ended(&tip) {
            continue;
        }
        let Ok(left) = stella::refusals::left_behind(&journal, context.root(), &id) else {
            continue;
        };
        if left.is_empty() {
            continue;
        }
        let names: Vec<String> = left
            .iter()
            .map(|r| match &r.writer {
                Some(w) => format!("{} (holds what session {w} wrote)", r.path),
                None => r.path.clone(),
            })
            .collect();
        findings.push(finding(
            Level::Warn,
            "left-behind",
            format!(
                "session {id}: refused changes left {} as {}: {}; what wanted {} changed may have gone on without {}",
                stella::text::count(left.len() as u64, "file"),
                if left.len() == 1 { "it was" } else { "they were" },
                names.join(", "),
                if left.len() == 1 { "it" } else { "them" },
                if left.len() == 1 { "it" } else { "them" },
            ),
            Some(format!(
                "'git stella status --session {id}' lists them and 'git status' what differs from HEAD; the session reads a file ('git stella read') to settle it"
            )),
        ));
    }
}

/// A host's files as the host reads them, each checked: the hook commands in them run, and run
/// this version.
fn host_files(
    host: &'static Spec,
    root: Option<&Path>,
    home: Option<&Path>,
    findings: &mut Vec<Finding>,
) -> Vec<Seen> {
    let mut seen = Vec::new();
    for scope in [Scope::Project, Scope::Local, Scope::User] {
        let base = if scope == Scope::User { home } else { root };
        let Some(path) = base.and_then(|b| host.file(scope, b, &|v| env::var_os(v))) else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let f = HostFile { host, scope, path };
        let flag = host.flag;
        match &host.wiring {
            // A file of Stella's own: it is Stella's whole, or the host runs something else, or
            // nothing (OpenCode skips a plugin with a syntax error without a word).
            Wiring::OwnFile {
                mark, command_of, ..
            } => {
                if !text.starts_with(mark) {
                    continue;
                }
                findings.push(match command_of(&text) {
                    // The command it runs is checked as every host's hook command is.
                    Some(command) => check_command(&f, &command),
                    None => finding(
                        Level::Error,
                        flag,
                        format!("'{}' is not the {} this git-stella writes: {} may skip it or run an old one", f.path.display(), if host.project.ends_with(".js") { "plugin" } else { "file" }, host.name),
                        Some(format!("'git stella hooks install --agent {flag}{}' writes it again", scope.flag())),
                    ),
                });
                seen.push(Seen {
                    scope,
                    path: f.path,
                    value: Value::Null,
                    stella: true,
                });
            }
            Wiring::Settings(hooks_file) => {
                // Read as the host reads it (Gemini CLI takes comments).
                let Ok(doc) = hooks_file(f.path.clone(), &install::Launch::Found).parse_text(text)
                else {
                    findings.push(finding(
                        Level::Error,
                        "hooks",
                        format!("{flag} ({}): '{}' is not valid JSON", scope.name(), f.path.display()),
                        Some(format!("{flag} reads no hooks from it: fix it, then run 'git stella hooks install --agent {flag}'")),
                    ));
                    continue;
                };
                let value = doc.value(doc.root());
                let mut commands = Vec::new();
                stella_commands(&value, &mut commands);
                // Hook commands first: a finding names the hook, rather than the shell prefix.
                commands.sort_by_key(|c| (!c.contains(" hook "), c.clone()));
                commands.dedup();
                // One finding per program (a host's hooks and its shell prefix run the same
                // binary).
                let mut programs = std::collections::HashSet::new();
                let mut said = std::collections::HashSet::new();
                for command in &commands {
                    if programs.insert(program(command)) {
                        let finding = check_command(&f, command);
                        // A project's hooks and its shell prefix find the same binary by two
                        // ways: one line when both lead to it.
                        if said.insert(finding.message.clone()) {
                            findings.push(finding);
                        }
                    }
                }
                seen.push(Seen {
                    scope,
                    path: f.path,
                    value,
                    stella: !commands.is_empty(),
                });
            }
        }
    }
    seen
}

/// Every hook command in a settings value that runs Stella (`… hook <host>`), and a shell prefix
/// of Stella's (Claude Code's).
fn stella_commands(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("command", Value::String(c))
                        if c.contains("stella") && c.contains(" hook ") =>
                    {
                        out.push(c.clone())
                    }
                    (key, Value::String(c))
                        if key == install::PREFIX_KEY && install::is_stella_prefix(c) =>
                    {
                        out.push(c.clone())
                    }
                    _ => stella_commands(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| stella_commands(i, out)),
        _ => {}
    }
}

/// The program a command line runs: its first word, with shell single quotes undone.
fn program(command: &str) -> String {
    let command = command.trim_start();
    let mut word = String::new();
    let mut chars = command.chars();
    let mut quoted = false;
    for c in chars.by_ref() {
        match c {
            '\'' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => break,
            c => word.push(c),
        }
    }
    word
}

/// Whether a hook command runs, and runs this version.
fn check_command(f: &HostFile, command: &str) -> Finding {
    let host = f.host.flag;
    let where_ = format!("{host} ({}, {})", f.scope.name(), f.path.display());
    let home = directories::BaseDirs::new().map(|d| d.home_dir().to_owned());
    let path_var = env::var_os("PATH");
    // A project's portable hooks look on PATH and in the usual places; Claude Code's shell
    // prefix names the program, which the shell finds on PATH.
    let found = if install::is_portable(command) {
        Some(install::find_portable(path_var.as_deref(), home.as_deref()))
    } else if program(command) == "git-stella" {
        Some(
            std::env::split_paths(&path_var.clone().unwrap_or_default())
                .map(|d| d.join("git-stella"))
                .find(|p| p.is_absolute() && p.is_file()),
        )
    } else {
        None
    };
    let program = match &found {
        Some(Some(p)) => p.display().to_string(),
        Some(None) => {
            let portable = install::is_portable(command);
            return finding(
                Level::Error,
                "hooks",
                if portable {
                    format!(
                        "{where_}: the hooks find no git-stella on PATH or in ~/.cargo/bin, ~/.local/bin, /usr/local/bin or /opt/homebrew/bin: each hook says 'Stella is not installed' and {} goes on unguarded (a fail-closed project refuses its writes)",
                        host
                    )
                } else {
                    format!(
                        "{where_}: '{command}' runs git-stella by name, and there is none on PATH: every Bash command fails",
                    )
                },
                Some("install Stella where PATH finds it (or in one of those folders)".into()),
            );
        }
        None => program(command),
    };
    let mut cmd = if program == "git" {
        let mut c = Command::new("git");
        c.args(["stella", "--version"]);
        c
    } else {
        let path = Path::new(&program);
        if !path.is_file() {
            return finding(
                Level::Error,
                "hooks",
                format!(
                    "{where_}: the hook command '{command}' names '{program}', which does not exist: every hook fails and {} runs tools unguarded",
                    host
                ),
                Some(format!(
                    "run 'git stella hooks install --agent {}' again with the git-stella you use now",
                    host
                )),
            );
        }
        let mut c = Command::new(path);
        c.arg("--version");
        c
    };
    let version = run_for(&mut cmd, Duration::from_secs(5));
    let ours = format!("git-stella {}", super::LONG_VERSION);
    match version {
        Some(v) if v.trim() == ours => finding(
            Level::Ok,
            "hooks",
            format!("{where_}: hooks run {program} ({ours})"),
            None,
        ),
        Some(v) => finding(
            Level::Warn,
            "hooks",
            format!(
                "{where_}: hooks run {program}, which is '{}', not this {ours}",
                v.trim()
            ),
            Some(format!(
                "run 'git stella hooks install --agent {}' again to use this one",
                host
            )),
        ),
        None => finding(
            Level::Error,
            "hooks",
            format!(
                "{where_}: the hook command '{command}' does not run: every hook fails and {} runs tools unguarded",
                host
            ),
            Some(format!(
                "run 'git stella hooks install --agent {}' again",
                host
            )),
        ),
    }
}

/// `cmd`'s stdout, when it exits 0 within `limit`.
fn run_for(cmd: &mut Command, limit: Duration) -> Option<String> {
    let mut child = stella::child::die_with_parent(cmd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break,
            Ok(Some(_)) | Err(_) => return None,
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    let mut text = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take()?, &mut text).ok()?;
    Some(text)
}
