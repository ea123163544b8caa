//! The command line a host's hook runs: how Stella names its own binary there (absolute and
//! quoted, or found at run time by a portable command), the shell prefix that routes a host's
//! shell commands through the guard, and how a command is recognised as Stella's.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

/// The path this `git-stella` was started by: `argv0` as given, looked up on `path_var` when it
/// is a bare name (git runs `git stella` that way), joined to `cwd` when relative. Symbolic links
/// are not resolved, so a hook keeps working when the link is pointed at a new build. `None`
/// when that path does not lead to the running binary `exe` (a caller that set `argv[0]` to
/// something else): then `exe` is the answer.
pub fn invoked_as(
    argv0: &OsStr,
    path_var: Option<&OsStr>,
    cwd: &Path,
    exe: &Path,
) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let given = Path::new(argv0);
    let found = if given.components().count() > 1 || given.is_absolute() {
        cwd.join(given)
    } else {
        std::env::split_paths(path_var?)
            .map(|dir| cwd.join(dir).join(given))
            .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0))?
    };
    let (a, b) = (
        std::fs::metadata(&found).ok()?,
        std::fs::metadata(exe).ok()?,
    );
    // `.` says nothing; `..` stays, since it means something else after a symbolic link.
    let clean: PathBuf = found
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    ((a.dev(), a.ino()) == (b.dev(), b.ino())).then_some(clean)
}

/// The command line a host runs for Stella's hook: the absolute path of this binary (quoted for
/// the shell when needed), then `hook <agent>`. No PATH lookup and no git start-up on each call.
pub(crate) fn hook_command(exe: &Path, agent: &str) -> String {
    format!("{} hook {agent}", quoted(exe))
}

/// How the hooks an install writes find `git-stella`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Launch {
    /// By this machine's path of the binary: for the settings files that are this machine's
    /// (a user's, Claude Code's `settings.local.json`).
    At(PathBuf),
    /// By looking on `PATH`, then in `USUAL_PLACES`, when the hook runs: for a project's
    /// settings, committed and run on every teammate's machine ([`portable_command`]).
    Found,
}

/// Where a project's hooks look for `git-stella` after `PATH`, in order: where `cargo install`,
/// `pip`-style user installs, a system-wide install and Homebrew put programs. `$HOME` is the
/// user's, expanded by the shell the host runs the hook in.
pub(crate) const USUAL_PLACES: [&str; 4] = [
    "$HOME/.cargo/bin",
    "$HOME/.local/bin",
    "/usr/local/bin",
    "/opt/homebrew/bin",
];

/// What a portable hook says when it finds no `git-stella` (on stderr, which the host shows).
/// It goes between single quotes in the shell: it holds none.
pub(crate) const NOT_INSTALLED: &str = "Stella is not installed: the hooks of this project run git-stella, and there is none on PATH or in ~/.cargo/bin, ~/.local/bin, /usr/local/bin or /opt/homebrew/bin. Install Stella, or take its hooks out of the settings of this project";

/// The hook command a project's settings hold: one line of POSIX shell that runs the
/// `git-stella` found on `PATH` or in `USUAL_PLACES` as `hook <agent>`, and names no path of
/// the machine that wrote it (an empty `PATH` adds no empty entry, which would search the
/// current folder: a checkout cannot plant its own `git-stella`). Where there is none, it says so (`NOT_INSTALLED`) and exits 1,
/// which the hosts report and go on from; on an event that can refuse a tool call (`blocks`), a
/// project that chose fail-closed (`hooks.on-error = "deny"` in `.stella/config.toml`, or `git
/// config stella.hookOnError deny`) gets exit 2 instead, which the hosts take as a refusal.
pub fn portable_command(agent: &str, blocks: bool) -> String {
    let places = USUAL_PLACES.join(":");
    let missing = if blocks {
        "if [ \"$(git config --get stella.hookOnError)\" = deny ] || grep -Eqs '^[[:space:]]*on-error[[:space:]]*=[[:space:]]*\"deny\"' \"$(git rev-parse --show-toplevel 2>/dev/null)/.stella/config.toml\"; then echo 'This project refuses writes when Stella cannot check them (fail-closed): nothing was done.' >&2; exit 2; fi; exit 1"
    } else {
        "exit 1"
    };
    format!(
        "s=$(PATH=\"${{PATH:+$PATH:}}{places}\"; command -v git-stella) && exec \"$s\" hook {agent}; echo '{NOT_INSTALLED}.' >&2; {missing}"
    )
}

/// The marker a [`portable_command`] for `agent` holds, whatever its version wrote around it.
fn portable_marker(agent: &str) -> String {
    format!("command -v git-stella) && exec \"$s\" hook {agent};")
}

/// Whether a hook command is a [`portable_command`] (of any host).
pub fn is_portable(command: &str) -> bool {
    command.contains("command -v git-stella) && exec \"$s\" hook ")
}

/// The `git-stella` a [`portable_command`] would run here: the first on `path_var`, then in
/// `USUAL_PLACES` under `home`. `None` when there is none.
pub fn find_portable(path_var: Option<&OsStr>, home: Option<&Path>) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let mut dirs: Vec<PathBuf> = path_var
        .map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default();
    for place in USUAL_PLACES {
        match place.strip_prefix("$HOME/") {
            Some(rest) => dirs.extend(home.map(|h| h.join(rest))),
            None => dirs.push(PathBuf::from(place)),
        }
    }
    dirs.into_iter()
        .filter(|d| d.is_absolute())
        .map(|d| d.join("git-stella"))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0))
}

/// The shell prefix Claude Code runs every Bash command through (`CLAUDE_CODE_SHELL_PREFIX`):
/// the shell guard, in the Claude session's Stella session. Names the binary by the same path as
/// [`hook_command`].
///
/// Claude Code 2.1 quotes everything before the prefix's last ` -` as one word, the program, so
/// the prefix is the program and one flag (`git-stella --claude-code-shell`, which the command
/// line rewrites to `exec --host claude-code`), and the path is left unquoted for it to quote.
pub(crate) fn shell_prefix(launch: &Launch) -> String {
    match launch {
        Launch::At(exe) => format!("{} {PREFIX_ARGS}", exe.to_string_lossy()),
        // Claude Code runs the prefix's program by name: found on PATH.
        Launch::Found => format!("git-stella {PREFIX_ARGS}"),
    }
}

/// The flag of the shell prefix.
pub(crate) const PREFIX_ARGS: &str = "--claude-code-shell";

/// The settings key that holds the shell prefix, under `env`.
pub const PREFIX_KEY: &str = "CLAUDE_CODE_SHELL_PREFIX";

/// Whether a shell prefix is one Stella wrote (whatever path the binary had then).
pub fn is_stella_prefix(prefix: &str) -> bool {
    prefix
        .strip_suffix(&format!(" {PREFIX_ARGS}"))
        .is_some_and(is_stella_program)
}

/// A path quoted for the shell when it needs it.
fn quoted(exe: &Path) -> String {
    let s = exe.to_string_lossy();
    let plain = s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c));
    if plain {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Whether a hook command is Stella's hook for `agent`, whatever path named the binary then
/// (`git stella hook codex` included, the form older versions wrote).
pub(crate) fn is_stella_command(command: &str, agent: &str) -> bool {
    command.contains(&portable_marker(agent))
        || command
            .strip_suffix(agent)
            .and_then(|c| c.strip_suffix(" hook "))
            .is_some_and(is_stella_program)
}

/// Whether a program, as a hook command names it, is git-stella.
fn is_stella_program(program: &str) -> bool {
    let program = program.trim_matches('\'');
    program == "git-stella" || program.ends_with("/git-stella") || program == "git stella"
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;

    #[test]
    fn commands_are_absolute_quoted_and_recognised() {
        assert_eq!(
            hook_command(Path::new("/usr/local/bin/git-stella"), "claude-code"),
            "/usr/local/bin/git-stella hook claude-code"
        );
        let spaced = hook_command(Path::new("/home/a b/git-stella"), "codex");
        assert_eq!(spaced, "'/home/a b/git-stella' hook codex");
        assert!(is_stella_command(&spaced, "codex"));
        assert!(is_stella_command("git stella hook codex", "codex"));
        assert!(!is_stella_command(&spaced, "cursor"));
        assert!(!is_stella_command(
            "/bin/other hook claude-code",
            "claude-code"
        ));
        assert!(!is_stella_command(
            "/usr/bin/git-stella hook claude-code --x",
            "claude-code"
        ));
    }

    /// Run a portable hook command as a host does (`sh -c`), in `dir`, with `path` and `home`.
    fn run_portable(command: &str, dir: &Path, path: &str, home: &Path) -> (i32, String, String) {
        let out = Command::new("/bin/sh")
            .arg("-c")
            .arg(command)
            .current_dir(dir)
            .env_clear()
            .env("PATH", path)
            .env("HOME", home)
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    #[test]
    fn a_portable_hook_finds_stella_on_path_or_in_the_usual_places_and_says_when_it_cannot() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let repo = base.join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        let git = |args: &[&str]| {
            assert!(
                Command::new("git")
                    .args(args)
                    .current_dir(&repo)
                    .env("GIT_CONFIG_NOSYSTEM", "1")
                    .env("HOME", &base)
                    .output()
                    .unwrap()
                    .status
                    .success()
            )
        };
        git(&["init", "-q"]);
        // git and sh from the system; no git-stella there.
        let system = "/usr/bin:/bin";
        let fake = |dir: &Path, said: &str| {
            std::fs::create_dir_all(dir).unwrap();
            let f = dir.join("git-stella");
            std::fs::write(&f, format!("#!/bin/sh\necho {said} \"$@\"\n")).unwrap();
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        let home = base.join("home");
        std::fs::create_dir_all(&home).unwrap();
        // A git-stella in the checkout is never run, even with an empty PATH.
        fake(&repo, "planted");
        let (code, out, _) = run_portable(&portable_command("codex", false), &repo, "", &home);
        assert_eq!((code, out.as_str()), (1, ""));
        std::fs::remove_file(repo.join("git-stella")).unwrap();
        for blocks in [false, true] {
            let command = portable_command("codex", blocks);
            assert!(is_portable(&command) && is_stella_command(&command, "codex"));
            assert!(!is_stella_command(&command, "gemini"));
            // Nowhere: said, exit 1 (the hosts go on).
            let (code, out, err) = run_portable(&command, &repo, system, &home);
            assert_eq!((code, out.as_str()), (1, ""), "{err}");
            assert_eq!(err, format!("{NOT_INSTALLED}.\n"));
        }
        // A project that chose fail-closed: exit 2 where the event can refuse, by either switch.
        std::fs::create_dir_all(repo.join(".stella")).unwrap();
        std::fs::write(
            repo.join(".stella/config.toml"),
            "[hooks]\n  on-error = \"deny\"\n",
        )
        .unwrap();
        let (code, _, err) = run_portable(&portable_command("codex", true), &repo, system, &home);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("fail-closed"), "{err}");
        let (code, ..) = run_portable(&portable_command("codex", false), &repo, system, &home);
        assert_eq!(code, 1);
        std::fs::remove_file(repo.join(".stella/config.toml")).unwrap();
        let (code, ..) = run_portable(&portable_command("codex", true), &repo, system, &home);
        assert_eq!(code, 1);
        git(&["config", "stella.hookOnError", "deny"]);
        let (code, ..) = run_portable(&portable_command("codex", true), &repo, system, &home);
        assert_eq!(code, 2);
        // In a usual place under HOME: found, run with the host's payload untouched.
        fake(&home.join(".cargo/bin"), "cargo");
        let (code, out, err) = run_portable(&portable_command("codex", true), &repo, system, &home);
        assert_eq!((code, out.as_str()), (0, "cargo hook codex\n"), "{err}");
        assert_eq!(
            find_portable(Some(OsStr::new(system)), Some(&home)),
            Some(home.join(".cargo/bin/git-stella"))
        );
        // On PATH: PATH comes first.
        fake(&base.join("bin"), "path");
        let path = format!("{}:{system}", base.join("bin").display());
        let (_, out, _) = run_portable(&portable_command("gemini", false), &repo, &path, &home);
        assert_eq!(out, "path hook gemini\n");
        assert_eq!(
            find_portable(Some(OsStr::new(&path)), Some(&home)),
            Some(base.join("bin/git-stella"))
        );
    }

    #[test]
    fn the_binary_is_named_by_the_path_it_was_run_by() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let real = base.join("real/git-stella");
        let other = base.join("real/other");
        std::fs::create_dir_all(real.parent().unwrap()).unwrap();
        for f in [&real, &other] {
            std::fs::write(f, "").unwrap();
            std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::create_dir_all(base.join("bin")).unwrap();
        let link = base.join("bin/git-stella");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let path = std::env::join_paths([base.join("empty"), base.join("bin")]).unwrap();
        let as_run = |argv0: &str| invoked_as(OsStr::new(argv0), Some(&path), &base, &real);
        // A bare name, as git runs it: found on the PATH, the link kept.
        assert_eq!(as_run("git-stella"), Some(link.clone()));
        // Relative to the folder it was run in, `.` dropped; absolute as it is.
        assert_eq!(as_run("./bin/git-stella"), Some(link.clone()));
        assert_eq!(as_run(link.to_str().unwrap()), Some(link.clone()));
        // A name that leads elsewhere is no answer: the caller falls back on the binary itself.
        assert_eq!(as_run("real/other"), None);
        assert_eq!(as_run("nowhere"), None);
    }
}
