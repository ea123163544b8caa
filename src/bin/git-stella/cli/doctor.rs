use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Ctx, Result, print_json};
use stella::hooks::{codex, copilot, cursor, gemini, install, opencode, qwen};

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
    #[arg(long, value_name = "HOST")]
    pub agent: Vec<super::hooks::Agent>,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Ok,
    Warn,
    Error,
}

struct Finding {
    level: Level,
    check: &'static str,
    message: String,
    hint: Option<String>,
}

fn finding(level: Level, check: &'static str, message: String, hint: Option<String>) -> Finding {
    Finding {
        level,
        check,
        message,
        hint,
    }
}

/// A host's settings file that can hold Stella's hooks.
struct HostFile {
    host: &'static str,
    scope: &'static str,
    path: PathBuf,
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, out: &mut dyn Write) -> Result {
    let root = stella::workspace::discover_root(&ctx.settings, &ctx.cwd).ok();
    let home = directories::BaseDirs::new().map(|d| d.home_dir().to_owned());
    let mut findings = Vec::new();

    let mut files = Vec::new();
    if let Some(root) = &root {
        for (host, scope, rel) in [
            ("claude-code", "project", install::CLAUDE_SETTINGS),
            ("claude-code", "local", install::CLAUDE_LOCAL_SETTINGS),
            ("codex", "project", codex::SETTINGS),
            ("gemini", "project", gemini::SETTINGS),
            ("cursor", "project", cursor::SETTINGS),
            ("qwen", "project", qwen::SETTINGS),
            ("copilot", "project", copilot::SETTINGS),
        ] {
            files.push(HostFile {
                host,
                scope,
                path: root.join(rel),
            });
        }
    }
    if let Some(home) = &home {
        for host in [
            "claude-code",
            "codex",
            "gemini",
            "cursor",
            "qwen",
            "copilot",
        ] {
            if let Some(path) = install::user_settings(host, home, |v| std::env::var_os(v)) {
                files.push(HostFile {
                    host,
                    scope: "user",
                    path,
                });
            }
        }
    }
    let mut installed: Vec<(&'static str, &'static str, PathBuf)> = Vec::new();
    // OpenCode's is a plugin of Stella's own: it is Stella's whole, or OpenCode runs something
    // else, or nothing (a syntax error makes it skip a plugin without a word).
    let plugins = [
        root.as_ref().map(|r| ("project", r.join(opencode::PLUGIN))),
        home.as_ref().and_then(|h| {
            Some((
                "user",
                install::user_settings("opencode", h, |v| std::env::var_os(v))?,
            ))
        }),
    ];
    for (scope, path) in plugins.into_iter().flatten() {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if !text.starts_with(opencode::MARK) {
            continue;
        }
        installed.push(("opencode", scope, path.clone()));
        findings.push(if let Some(command) = opencode::command_of(&text) {
            // The command the plugin runs is checked as every host's hook command is.
            check_command(
                &HostFile {
                    host: "opencode",
                    scope,
                    path: path.clone(),
                },
                &command,
            )
        } else {
            finding(
                Level::Error,
                "opencode",
                format!("'{}' is not the plugin this git-stella writes: OpenCode may skip it or run an old one", path.display()),
                Some(format!("'git stella hooks install --agent opencode{}' writes it again", if scope == "user" { " --user" } else { "" })),
            )
        });
    }
    for var in ["OPENCODE_PURE", "OPENCODE_DISABLE_PROJECT_CONFIG"] {
        if installed.iter().any(|(h, _, _)| *h == "opencode")
            && std::env::var_os(var).is_some_and(|v| !v.is_empty() && v != "0" && v != "false")
        {
            findings.push(finding(
                Level::Error,
                "opencode",
                format!("{var} is set: OpenCode runs without Stella's plugin here"),
                Some(format!("unset {var} (and do not run OpenCode with --pure)")),
            ));
        }
    }
    // Claude Code's settings as read, for its shell prefix: (scope, settings).
    let mut claude: Vec<(&'static str, PathBuf, Value)> = Vec::new();
    for f in &files {
        let Ok(text) = std::fs::read_to_string(&f.path) else {
            continue;
        };
        // Read as the host reads it (Gemini CLI takes comments).
        let Ok(doc) = settings_file(f.host, f.path.clone()).parse_text(text) else {
            findings.push(finding(
                Level::Error,
                "hooks",
                format!("{} ({}): '{}' is not valid JSON", f.host, f.scope, f.path.display()),
                Some(format!("{} reads no hooks from it: fix it, then run 'git stella hooks install --agent {}'", f.host, f.host)),
            ));
            continue;
        };
        let value = doc.value(doc.root());
        if f.host == "claude-code" {
            claude.push((f.scope, f.path.clone(), value.clone()));
        }
        let mut commands = Vec::new();
        stella_commands(&value, &mut commands);
        // Hook commands first: a finding names the hook, rather than the shell prefix.
        commands.sort_by_key(|c| (!c.contains(" hook "), c.clone()));
        commands.dedup();
        if commands.is_empty() {
            continue;
        }
        installed.push((f.host, f.scope, f.path.clone()));
        // One finding per program (a host's hooks and its shell prefix run the same binary).
        let mut programs = std::collections::HashSet::new();
        let mut said = std::collections::HashSet::new();
        for command in commands {
            if programs.insert(program(&command)) {
                let finding = check_command(f, &command);
                // A project's hooks and its shell prefix find the same binary by two ways: one
                // line when both lead to it.
                if said.insert(finding.message.clone()) {
                    findings.push(finding);
                }
            }
        }
    }
    // A host reads every one of its settings files, the local one included, and runs the hooks
    // of each.
    for (i, (host, _, path)) in installed.iter().enumerate() {
        for (other_host, _, other) in &installed[i + 1..] {
            if host == other_host {
                findings.push(finding(
                    Level::Warn,
                    "hooks-twice",
                    format!("{host}: Stella's hooks are installed in both '{}' and '{}': {host} runs each hook twice", path.display(), other.display()),
                    Some(format!("keep one: 'git stella hooks uninstall --agent {host}' (with --user for your user settings, --local for Claude Code's settings.local.json)")),
                ));
            }
        }
    }
    if installed.iter().any(|(h, _, _)| *h == "claude-code") {
        findings.push(claude_shell_prefix(&claude));
    }
    for agent in &args.agent {
        let host = clap::ValueEnum::to_possible_value(agent)
            .expect("every host has a name")
            .get_name()
            .to_owned();
        if !installed.iter().any(|(h, _, _)| *h == host) {
            findings.push(finding(
                Level::Error,
                "hooks",
                format!("{host}: no Stella hooks here or in your user settings, and --agent {host} asks for them: {host} would run unguarded"),
                Some(format!("'git stella hooks install --agent {host}', then commit the file it names")),
            ));
        }
    }
    if installed.is_empty() && args.agent.is_empty() {
        findings.push(finding(
            Level::Warn,
            "hooks",
            "no agent host has Stella's hooks here or in your user settings".into(),
            Some(
                "'git stella hooks install --agent claude-code' (or codex, gemini, copilot, opencode, qwen, cursor)"
                    .into(),
            ),
        ));
    }
    if let (Some(home), true) = (&home, installed.iter().any(|(h, _, _)| *h == "codex")) {
        // Codex keeps its config in CODEX_HOME when that is set.
        let codex_home = std::env::var_os("CODEX_HOME")
            .filter(|h| !h.is_empty())
            .map_or_else(|| home.join(".codex"), PathBuf::from);
        findings.push(codex_trust(&codex_home, root.as_deref(), &installed));
    }
    if let (Some(home), Some(root)) = (&home, &root)
        && installed
            .iter()
            .any(|(h, s, _)| *h == "gemini" && *s == "project")
    {
        findings.push(gemini_trust(home, root));
    }
    if let Some(home) = &home
        && installed.iter().any(|(h, _, _)| *h == "qwen")
    {
        findings.extend(qwen_findings(home, root.as_deref(), &installed));
    }
    if let Some(home) = &home
        && installed.iter().any(|(h, _, _)| *h == "copilot")
    {
        findings.extend(copilot_findings(home, root.as_deref(), &installed));
    }

    // The MCP server beside this binary.
    let exe = std::env::current_exe().ok();
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

    // Config.
    if let Some(root) = &root {
        match stella::hooks::Config::load(root) {
            Ok(_) => findings.push(finding(
                Level::Ok,
                "config",
                "'.stella/config.toml' is valid (or absent)".into(),
                None,
            )),
            Err(e) => findings.push(finding(
                Level::Error,
                "config",
                stella::hooks::error_text(&e)
                    .trim_end()
                    .trim_start_matches("stella: error: ")
                    .to_owned(),
                Some("every guarded write is denied until it is fixed".into()),
            )),
        }
        if let Ok(repo) = stella::workspace::open_user_repo(ctx.settings.git_env_overrides, root)
            && let Err(why) = stella::hooks::git_on_error(&repo)
        {
            findings.push(finding(
                Level::Error,
                "config",
                why,
                Some(
                    "'git config --unset' the key, or set stella.hookOnError to allow or deny"
                        .into(),
                ),
            ));
        }
    }

    // Files a refused change left behind, while the command that wanted them changed went on.
    if root.is_some() {
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

    // The data dir.
    let data = &ctx.settings.data_dir;
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

    // The shell guard.
    findings.push(match stella::exec::support() {
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
    });

    // Stores whose checkout is gone.
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

    let worst = findings.iter().map(|f| f.level).max().unwrap_or(Level::Ok);
    if args.json {
        let list: Vec<Value> = findings
            .iter()
            .map(|f| {
                json!({
                    "level": level_name(f.level),
                    "check": f.check,
                    "message": f.message,
                    "hint": f.hint,
                })
            })
            .collect();
        print_json(
            out,
            &json!({ "level": level_name(worst), "findings": list }),
        )?;
    } else {
        for f in &findings {
            // A message of several lines (a parse error with its caret) keeps its lines, each
            // under the first; only other control characters are shown escaped.
            let mut lines = f.message.lines();
            let first = lines.next().unwrap_or_default();
            writeln!(
                out,
                "{:<5} {}",
                level_name(f.level),
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

/// A host's settings file, to read it as the host does.
fn settings_file(host: &str, path: PathBuf) -> install::HooksFile {
    let launch = install::Launch::Found;
    match host {
        "codex" => codex::hooks_file(path, &launch),
        "gemini" => gemini::hooks_file(path, &launch),
        "cursor" => cursor::hooks_file(path, &launch),
        "qwen" => qwen::hooks_file(path, &launch),
        "copilot" => copilot::hooks_file(path, &launch),
        _ => install::claude_hooks_file(path, &launch),
    }
}

/// Whether Claude Code runs Bash commands under the shell guard: the `CLAUDE_CODE_SHELL_PREFIX`
/// it ends up with, from the settings it reads (local over project over user, as Claude Code
/// merges them), else from the environment it starts in.
fn claude_shell_prefix(claude: &[(&'static str, PathBuf, Value)]) -> Finding {
    let key = install::PREFIX_KEY;
    let from_settings = ["local", "project", "user"].iter().find_map(|scope| {
        claude
            .iter()
            .find(|(s, _, _)| s == scope)
            .and_then(|(_, path, v)| {
                v.get("env")
                    .and_then(|e| e.get(key))
                    .and_then(Value::as_str)
                    .map(|p| (p.to_owned(), path.display().to_string()))
            })
    });
    let effective = from_settings.or_else(|| {
        std::env::var(key)
            .ok()
            .filter(|p| !p.is_empty())
            .map(|p| (p, "the environment".to_owned()))
    });
    match effective {
        Some((prefix, _)) if install::is_stella_prefix(&prefix) => finding(
            Level::Ok,
            "claude-shell",
            "Claude Code runs Bash commands under the shell guard".into(),
            None,
        ),
        Some((prefix, from)) => finding(
            Level::Error,
            "claude-shell",
            format!(
                "Claude Code runs Bash commands through {key}='{prefix}' (from {from}), not Stella's shell guard: Bash is unguarded"
            ),
            Some(format!(
                "remove that {key}, then run 'git stella hooks install --agent claude-code' again; or have your prefix run its command under 'git-stella --claude-code-shell'"
            )),
        ),
        None => finding(
            Level::Error,
            "claude-shell",
            format!("no {key} is set for Claude Code: Bash commands run unguarded"),
            Some("run 'git stella hooks install --agent claude-code' again".into()),
        ),
    }
}

fn level_name(level: Level) -> &'static str {
    match level {
        Level::Ok => "ok",
        Level::Warn => "warn",
        Level::Error => "error",
    }
}

/// Every hook command in a settings value that runs Stella (`… hook <host>`), and Claude Code's
/// shell prefix.
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
                    ("CLAUDE_CODE_SHELL_PREFIX", Value::String(c))
                        if stella::hooks::install::is_stella_prefix(c) =>
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
    let where_ = format!("{} ({}, {})", f.host, f.scope, f.path.display());
    let home = directories::BaseDirs::new().map(|d| d.home_dir().to_owned());
    let path_var = std::env::var_os("PATH");
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
                        f.host
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
                    f.host
                ),
                Some(format!(
                    "run 'git stella hooks install --agent {}' again with the git-stella you use now",
                    f.host
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
                f.host
            )),
        ),
        None => finding(
            Level::Error,
            "hooks",
            format!(
                "{where_}: the hook command '{command}' does not run: every hook fails and {} runs tools unguarded",
                f.host
            ),
            Some(format!(
                "run 'git stella hooks install --agent {}' again",
                f.host
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

/// Gemini CLI loads a project's settings, hooks included, only in a trusted folder:
/// `GEMINI_CLI_TRUST_WORKSPACE=true`, or the longest rule of `~/.gemini/trustedFolders.json` (or
/// `GEMINI_CLI_TRUSTED_FOLDERS_PATH`) that covers the folder (`TRUST_PARENT` covering the
/// rule's parent) saying `TRUST_FOLDER` or `TRUST_PARENT`, as Gemini CLI 0.61.0 decides.
fn gemini_trust(home: &Path, root: &Path) -> Finding {
    let hint = Some(
        "choose \"Trust folder\" when Gemini CLI asks; headless, add the folder to ~/.gemini/trustedFolders.json or set GEMINI_CLI_TRUST_WORKSPACE=true (not --skip-trust, which loads no project settings)".to_owned(),
    );
    if std::env::var("GEMINI_CLI_TRUST_WORKSPACE").is_ok_and(|v| v == "true") {
        return finding(
            Level::Ok,
            "gemini",
            "Gemini CLI trusts this folder (GEMINI_CLI_TRUST_WORKSPACE=true)".into(),
            None,
        );
    }
    let file = std::env::var_os("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        .map_or_else(|| home.join(".gemini/trustedFolders.json"), PathBuf::from);
    let root = root.canonicalize().unwrap_or_else(|_| root.to_owned());
    match trust_rule(&file, &root).as_deref() {
        Some("TRUST_FOLDER" | "TRUST_PARENT") => finding(
            Level::Ok,
            "gemini",
            format!("Gemini CLI trusts {}", root.display()),
            None,
        ),
        Some("DO_NOT_TRUST") => finding(
            Level::Error,
            "gemini",
            format!(
                "Gemini CLI does not trust {} ({}): it loads none of its hooks",
                root.display(),
                file.display()
            ),
            hint,
        ),
        _ => finding(
            Level::Warn,
            "gemini",
            format!(
                "Gemini CLI has not been told to trust {}: it asks when it starts, and until then (or headless) loads none of its hooks",
                root.display()
            ),
            hint,
        ),
    }
}

/// The rule of a `trustedFolders.json` (Gemini CLI's, and Qwen Code's, which forked it) that
/// decides for `root`: the longest one covering it (`TRUST_PARENT` covering the rule's parent).
fn trust_rule(file: &Path, root: &Path) -> Option<String> {
    let rules: serde_json::Map<String, Value> = std::fs::read_to_string(file)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    rules
        .iter()
        .filter_map(|(rule, level)| {
            let level = level.as_str()?;
            let covered = Path::new(rule);
            let covered = if level == "TRUST_PARENT" {
                covered.parent()?
            } else {
                covered
            };
            let covered = covered
                .canonicalize()
                .unwrap_or_else(|_| covered.to_owned());
            root.starts_with(&covered).then_some((rule.len(), level))
        })
        .max_by_key(|(len, _)| *len)
        .map(|(_, level)| level.to_owned())
}

/// What Qwen Code skips of Stella's: with folder trust on (`security.folderTrust.enabled` in
/// `~/.qwen/settings.json`; off by default) it loads no project settings, hooks included, in a
/// folder `~/.qwen/trustedFolders.json` does not trust; and it never routes its shell tool
/// through the shell guard (a `PreToolUse` hook cannot rewrite a command in 0.24.4).
fn qwen_findings(
    home: &Path,
    root: Option<&Path>,
    installed: &[(&str, &str, PathBuf)],
) -> Vec<Finding> {
    let mut out = vec![finding(
        Level::Warn,
        "qwen",
        "Qwen Code cannot run its shell tool through Stella's shell guard: a file its commands change is noticed after, not refused".into(),
        Some("'git stella exec -- qwen …' runs the whole agent, shell included, under the shell guard".into()),
    )];
    let project = installed
        .iter()
        .any(|(h, s, _)| *h == "qwen" && *s == "project");
    let settings = jsonc_file(&home.join(qwen::SETTINGS));
    let (Some(root), true, true) = (
        root,
        project,
        settings["security"]["folderTrust"]["enabled"] == true,
    ) else {
        return out;
    };
    let root = root.canonicalize().unwrap_or_else(|_| root.to_owned());
    let file = home.join(".qwen/trustedFolders.json");
    out.push(match trust_rule(&file, &root).as_deref() {
        Some("TRUST_FOLDER" | "TRUST_PARENT") => finding(
            Level::Ok,
            "qwen",
            format!("Qwen Code trusts {}", root.display()),
            None,
        ),
        _ => finding(
            Level::Error,
            "qwen",
            format!(
                "Qwen Code's folder trust is on and it does not trust {}: it loads none of this project's hooks",
                root.display()
            ),
            Some(format!(
                "add \"{}\": \"TRUST_FOLDER\" to {}",
                root.display(),
                file.display()
            )),
        ),
    });
    out
}

/// JSON with comments, as the hosts that forked Gemini CLI read their settings; `Null` when
/// the file is missing or does not read.
fn jsonc_file(path: &Path) -> Value {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| stella::jsonedit::Doc::parse_with_comments(t).ok())
        .map(|doc| doc.value(doc.root()))
        .unwrap_or_default()
}

/// What Copilot CLI skips of Stella's: in prompt mode (`-p`) it loads a repository's
/// hooks only in a trusted folder (`trustedFolders` in `$COPILOT_HOME/config.json`,
/// `COPILOT_ALLOW_ALL=true` or `GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true`), skipping them
/// silently otherwise, as Copilot CLI 1.0.102 does.
fn copilot_findings(
    home: &Path,
    root: Option<&Path>,
    installed: &[(&str, &str, PathBuf)],
) -> Vec<Finding> {
    let mut out = Vec::new();
    let project = installed
        .iter()
        .any(|(h, s, _)| *h == "copilot" && *s == "project");
    let (Some(root), true) = (root, project) else {
        return out;
    };
    let on = |var: &str| std::env::var(var).is_ok_and(|v| v == "true");
    let copilot_home = std::env::var_os("COPILOT_HOME")
        .filter(|h| !h.is_empty())
        .map_or_else(|| home.join(".copilot"), PathBuf::from);
    let config = copilot_home.join("config.json");
    let root = root.canonicalize().unwrap_or_else(|_| root.to_owned());
    let trusted = jsonc_file(&config)["trustedFolders"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .any(|f| {
            let f = Path::new(f);
            root.starts_with(f.canonicalize().unwrap_or_else(|_| f.to_owned()))
        });
    out.push(
        if trusted || on("COPILOT_ALLOW_ALL") || on("GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS") {
            finding(
                Level::Ok,
                "copilot",
                format!("Copilot CLI runs this repository's hooks in {}", root.display()),
                None,
            )
        } else {
            finding(
                Level::Warn,
                "copilot",
                format!(
                    "Copilot CLI does not trust {}: in prompt mode (-p) it skips this repository's hooks without a word",
                    root.display()
                ),
                Some(format!(
                    "trust the folder when Copilot CLI asks, add it to trustedFolders in {}, or run 'copilot -p' with --trust-folder",
                    config.display()
                )),
            )
        },
    );
    out
}

/// Codex runs a project's hooks only in a trusted project, and each hook only once trusted by
/// hash (`/hooks` in Codex); `codex exec` skips an untrusted one without a word.
fn codex_trust(
    codex_home: &Path,
    root: Option<&Path>,
    installed: &[(&str, &str, PathBuf)],
) -> Finding {
    let config = codex_home.join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap_or_default();
    let parsed: toml::Table = toml::from_str(&text).unwrap_or_default();
    let hint = Some(
        "start codex in this project, trust it, and trust Stella's hooks in /hooks".to_owned(),
    );
    if let Some(root) = root
        && installed
            .iter()
            .any(|(h, s, _)| *h == "codex" && *s == "project")
    {
        let trusted = parsed
            .get("projects")
            .and_then(|p| p.get(root.to_string_lossy().as_ref()))
            .and_then(|p| p.get("trust_level"))
            .and_then(|t| t.as_str())
            == Some("trusted");
        if !trusted {
            return finding(
                Level::Error,
                "codex",
                format!(
                    "Codex does not trust the project {}: it loads none of its hooks",
                    root.display()
                ),
                hint,
            );
        }
    }
    let hooks_trusted = installed
        .iter()
        .filter(|(h, _, _)| *h == "codex")
        .all(|(_, _, path)| {
            let prefix = format!("{}:", path.display());
            parsed
                .get("hooks")
                .and_then(|h| h.get("state"))
                .and_then(|s| s.as_table())
                .is_some_and(|state| {
                    state
                        .iter()
                        .any(|(k, v)| k.starts_with(&prefix) && v.get("trusted_hash").is_some())
                })
        });
    if hooks_trusted {
        finding(
            Level::Ok,
            "codex",
            "Codex trusts Stella's hooks".into(),
            None,
        )
    } else {
        finding(
            Level::Error,
            "codex",
            format!(
                "Codex has not trusted Stella's hooks (no trusted_hash in {}): it skips them silently",
                config.display()
            ),
            hint,
        )
    }
}
