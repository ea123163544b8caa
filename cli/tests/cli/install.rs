//! `install.sh` on a clean HOME: afterwards `git stella --help` opens the man page, `git help -a`
//! lists stella, and bash completes both `git stella` and `git-stella` through bash-completion's
//! own loader, with nothing but files under HOME.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::common::{have, repo_root, skipped};
use super::completion::{commands, complete, words};

const BASH_COMPLETION: &str = "/usr/share/bash-completion/bash_completion";

struct Home {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    /// `~/.cargo/bin` first, then the test's PATH without any other git-stella or its man pages.
    path: String,
}

impl Home {
    fn new() -> Home {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().canonicalize().unwrap().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let mut dirs = vec![home.join(".cargo/bin")];
        dirs.extend(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                // Nor its man pages (an install whose binary was removed leaves them).
                .filter(|d| {
                    !d.join("git-stella").exists()
                        && !d.join("../share/man/man1/git-stella.1").exists()
                }),
        );
        let path = std::env::join_paths(dirs).unwrap().into_string().unwrap();
        Home {
            _tmp: tmp,
            home,
            path,
        }
    }

    fn cmd(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .env("HOME", &self.home)
            .env("PATH", &self.path)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("LC_ALL", "C")
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "80")
            .current_dir(&self.home);
        cmd
    }
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The folder cargo built the binaries into for this test run.
fn built() -> PathBuf {
    assert_cmd::cargo::cargo_bin("git-stella")
        .parent()
        .unwrap()
        .to_owned()
}

#[test]
fn install_on_a_clean_home_gives_man_pages_and_completions() {
    let h = Home::new();
    let repo = repo_root();

    // A binary alone is not enough: git turns `git stella --help` into `man git-stella`.
    let bin = h.home.join(".cargo/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(built().join("git-stella"), bin.join("git-stella")).unwrap();
    let man = have("man", "the man page checks (the man-db package)");
    if man {
        let before = h.cmd("git").args(["stella", "--help"]).output().unwrap();
        assert!(!before.status.success());
        assert!(
            text(&before).1.contains("No manual entry for git-stella"),
            "{:?}",
            text(&before)
        );
    }
    std::fs::remove_dir_all(h.home.join(".cargo")).unwrap();

    let out = h
        .cmd("bash")
        .arg(repo.join("install.sh"))
        .env("STELLA_BIN_DIR", built())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "install.sh failed:\n{stderr}");
    assert_eq!(stdout, "", "install.sh prints for people, on stderr");
    let home = h.home.display();
    for line in [
        format!("installed {home}/.cargo/bin/git-stella"),
        format!(
            "installed bash completion in {home}/.local/share/bash-completion/completions/git-stella"
        ),
        format!("installed zsh completion in {home}/.local/share/zsh/site-functions/_git-stella"),
        format!("installed fish completion in {home}/.config/fish/completions/git-stella.fish"),
        format!("    fpath=({home}/.local/share/zsh/site-functions $fpath)"),
    ] {
        assert!(
            stderr.lines().any(|l| l == line),
            "no line '{line}' in:\n{stderr}"
        );
    }
    let pages = std::fs::read_dir(repo.join("man")).unwrap().count();
    assert_eq!(
        std::fs::read_dir(h.home.join(".cargo/share/man/man1"))
            .unwrap()
            .count(),
        pages
    );
    assert!(!h.home.join(".cargo/bin/git-stella.d").exists());
    assert!(h.home.join(".config/fish/conf.d/git-stella.fish").is_file());

    // `git stella --help` is the man page, found through ~/.cargo/bin on PATH.
    if man {
        man_pages_open(&h);
    }
    listed_run_and_completed(&h);
}

fn man_pages_open(h: &Home) {
    let help = h.cmd("git").args(["stella", "--help"]).output().unwrap();
    let (page, err) = text(&help);
    assert!(help.status.success(), "{err}");
    assert!(page.starts_with("GIT-STELLA(1)"), "{page}");
    assert!(
        page.contains("NAME\n       git-stella - Refuse an AI agent's write when the file changed since the\n       agent read it"),
        "{page}"
    );
    assert!(page.contains("EXIT STATUS"), "{page}");
    // And each command's page by its own name.
    let read = h.cmd("man").arg("git-stella-read").output().unwrap();
    assert!(
        text(&read).0.starts_with("GIT-STELLA-READ(1)"),
        "{:?}",
        text(&read)
    );
}

fn listed_run_and_completed(h: &Home) {
    // git lists it among the external commands.
    let all = h.cmd("git").args(["help", "-a"]).output().unwrap();
    let (list, _) = text(&all);
    let external = list
        .split("External commands\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no external commands in:\n{list}"));
    assert!(external.lines().any(|l| l.trim() == "stella"), "{external}");

    // The installed binary is the one git runs.
    let version = h.cmd("git").args(["stella", "--version"]).output().unwrap();
    // With the commit it was built from and the day it was built.
    assert_eq!(
        text(&version).0,
        format!(
            "git-stella {} ({} {})\n",
            env!("CARGO_PKG_VERSION"),
            env!("STELLA_COMMIT"),
            env!("STELLA_BUILD_DATE")
        )
    );

    // bash-completion loads the installed file by itself: for `git-stella <TAB>` by the command's
    // name, and for `git stella <TAB>` because git's completion asks it for `git-stella`.
    if !Path::new(BASH_COMPLETION).is_file() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{BASH_COMPLETION} is missing: install the bash-completion package (.ci/run does)"
        );
        skipped(&format!(
            "the bash completion checks: {BASH_COMPLETION} is missing (the bash-completion package)"
        ));
        return;
    }
    let setup = format!("source {BASH_COMPLETION}");
    let r = complete(
        &h.home,
        &h.path,
        &setup,
        &[
            &["git", "stella", ""],
            &["git-stella", ""],
            &["git", "stella", "session", "d"],
            &["git", "ste"],
        ],
    );
    let spaced: Vec<String> = commands().iter().map(|c| format!("{c} ")).collect();
    assert_eq!(words(&r[0]), spaced);
    assert_eq!(words(&r[1]), commands());
    assert_eq!(r[2], ["drop "]);
    // git offers the command itself once git-stella is on PATH; the MCP server beside it is
    // named stella-mcp, so git lists no 'stella-mcp' command.
    assert_eq!(r[3], ["stella "]);
}

#[test]
fn install_refuses_a_folder_without_the_binary() {
    let h = Home::new();
    let empty = tempfile::tempdir().unwrap();
    let out = h
        .cmd("bash")
        .arg(repo_root().join("install.sh"))
        .env("STELLA_BIN_DIR", empty.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out).1,
        format!(
            "error: no git-stella binary in '{}'\n",
            empty.path().display()
        )
    );
    assert!(!h.home.join(".cargo").exists());
}
