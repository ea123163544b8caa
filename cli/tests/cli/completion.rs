//! bash completes both `git stella <TAB>` (git's completion calls `_git_stella`) and
//! `git-stella <TAB>`, driven in a real bash.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;
use clap::CommandFactory;

/// Where distributions put git's bash completion.
const GIT_COMPLETION: &[&str] = &[
    "/usr/share/bash-completion/completions/git",
    "/usr/local/share/bash-completion/completions/git",
    "/etc/bash_completion.d/git",
    "/usr/share/git/completion/git-completion.bash",
];

/// git's bash completion; `None` (skipped, loudly) where it is not installed. Under CI, where
/// `.ci/run` installs bash-completion beside git, a missing one fails instead.
pub fn git_completion() -> Option<PathBuf> {
    let found = GIT_COMPLETION
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "git's bash completion is in none of {GIT_COMPLETION:?} under CI"
        );
        skipped(&format!(
            "the bash completion tests: git's bash completion is in none of {GIT_COMPLETION:?}"
        ));
    }
    found
}

/// A bash function that does what bash does on TAB: `__t WORD…` (the last word is the one being
/// completed) finds the completion function bound to the first word, loading it through
/// bash-completion when needed, calls it, and prints one candidate a line.
const DRIVER: &str = r#"
__t() {
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE="$*"
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    local spec f
    spec=$(complete -p "$1" 2>/dev/null) ||
        { declare -F _completion_loader >/dev/null && _completion_loader "$1"; spec=$(complete -p "$1" 2>/dev/null); } ||
        { echo "no completion for $1"; return; }
    f=${spec##*-F }
    f=${f%% *}
    "$f" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf '%s\n' "${COMPREPLY[@]}"
}
"#;

/// Run bash with `setup`, then complete each line; the candidates of each, in order.
pub fn complete(home: &Path, path: &str, setup: &str, lines: &[&[&str]]) -> Vec<Vec<String>> {
    complete_in(home, home, &[], path, setup, lines)
}

/// [`complete`] in the folder `dir`, with `env` set too.
pub fn complete_in(
    dir: &Path,
    home: &Path,
    env: &[(&str, &Path)],
    path: &str,
    setup: &str,
    lines: &[&[&str]],
) -> Vec<Vec<String>> {
    let mut script = format!("{setup}\n{DRIVER}\n");
    for words in lines {
        let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
        script.push_str(&format!("echo @@; __t {}\n", quoted.join(" ")));
    }
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &script])
        .env_clear()
        .env("PATH", path)
        .env("HOME", home)
        .env("LC_ALL", "C")
        .envs(env.iter().copied())
        .current_dir(dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "bash failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let replies: Vec<Vec<String>> = stdout
        .split("@@\n")
        .skip(1)
        .map(|block| {
            block
                .lines()
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .collect();
    assert_eq!(replies.len(), lines.len(), "{stdout}");
    replies
}

/// The top-level commands, from the clap tree itself.
pub fn commands() -> Vec<String> {
    let mut names: Vec<String> = stella_cli::Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect();
    names.push("help".to_owned());
    names
}

/// Only the words that are not options.
pub fn words(reply: &[String]) -> Vec<String> {
    reply
        .iter()
        .filter(|w| !w.starts_with('-'))
        .cloned()
        .collect()
}

fn ours() -> PathBuf {
    repo_root().join("completions/git-stella.bash")
}

#[test]
fn bash_completes_git_stella_and_git_dash_stella() {
    let Some(git) = git_completion() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let setup = format!("source '{}'\nsource '{}'", git.display(), ours().display());
    let path = std::env::var("PATH").unwrap();
    let r = complete(
        home.path(),
        &path,
        &setup,
        &[
            &["git", "stella", ""],
            &["git-stella", ""],
            &["git", "stella", "se"],
            &["git-stella", "se"],
            &["git", "stella", "session", ""],
            &["git-stella", "session", "st"],
            &["git", "stella", "guard", "--de"],
            &["git-stella", "guard", "--de"],
            &["git", "-C", ".", "stella", "re"],
            &["git", "stella", "turn", "b"],
        ],
    );
    // git completes with -o nospace, so each whole word carries its own space; the plain command
    // is bound without it.
    let spaced: Vec<String> = commands().iter().map(|c| format!("{c} ")).collect();
    assert_eq!(words(&r[0]), spaced);
    assert!(r[0].contains(&"--session ".to_owned()), "{:?}", r[0]);
    assert_eq!(words(&r[1]), commands());
    assert_eq!(r[2], ["session "]);
    assert_eq!(r[3], ["session"]);
    assert_eq!(
        words(&r[4]),
        [
            "start ", "list ", "show ", "end ", "drop ", "undrop ", "prune ", "help "
        ]
    );
    assert_eq!(r[5], ["start"]);
    assert_eq!(r[6], ["--delete "]);
    assert_eq!(r[7], ["--delete"]);
    let re: Vec<String> = commands()
        .iter()
        .filter(|c| c.starts_with("re"))
        .map(|c| format!("{c} "))
        .collect();
    assert_eq!(words(&r[8]), words(&re));
    assert_eq!(r[9], ["begin "]);
}

#[test]
fn bash_binds_git_stella_and_defines_the_function_git_calls() {
    let home = tempfile::tempdir().unwrap();
    let out = Command::new("bash")
        .args([
            "--norc",
            "--noprofile",
            "-c",
            &format!(
                "source '{}'; complete -p git-stella; declare -F _git_stella",
                ours().display()
            ),
        ])
        .env_clear()
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "complete -o bashdefault -o default -o nosort -F _git__stella git-stella\n_git_stella\n"
    );
}

#[test]
fn without_our_script_git_stella_completes_nothing() {
    // The control for the test above: git's completion alone knows nothing of stella's commands.
    let Some(git) = git_completion() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let setup = format!("source '{}'", git.display());
    let r = complete(
        home.path(),
        "/usr/bin:/bin",
        &setup,
        &[&["git", "stella", "se"], &["git-stella", "se"]],
    );
    assert!(!r[0].contains(&"session ".to_owned()), "{:?}", r[0]);
    assert_eq!(r[1], ["no completion for git-stella"]);
}

#[test]
fn bash_completes_session_ids_folders_and_files_where_they_belong() {
    let Some(git) = git_completion() else {
        return;
    };
    let w = World::new();
    for id in ["agent-1", "agent-2", "other", "gone-1"] {
        w.ok(&["session", "start", "--id", id]);
    }
    w.ok(&["session", "drop", "gone-1"]);
    std::fs::create_dir_all(w.repo.join("src/deep")).unwrap();
    w.write("src/lib.rs", "x");
    let setup = format!("source '{}'\nsource '{}'", git.display(), ours().display());
    let bin = assert_cmd::cargo::cargo_bin("git-stella");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap()
    );
    let env = [("STELLA_HOME", w.stella_home.as_path())];
    let r = complete_in(
        &w.repo,
        &w.home,
        &env,
        &path,
        &setup,
        &[
            &["git", "stella", "--session", "ag"],
            &["git-stella", "--session", ""],
            &["git", "stella", "log", "a"],
            &["git-stella", "session", "drop", "o"],
            &["git", "stella", "session", "show", ""],
            &["git", "stella", "read", "sr"],
            &["git-stella", "diff", "src/l"],
            &["git-stella", "-C", "sr"],
            &["git-stella", "log", "--date", "re"],
            &["git", "stella", "session", "undrop", ""],
        ],
    );
    // Session ids come most recently active first, as `session list` shows them.
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    assert_eq!(sorted(r[0].clone()), ["agent-1 ", "agent-2 "]);
    assert_eq!(sorted(r[1].clone()), ["agent-1", "agent-2", "other"]);
    assert_eq!(sorted(words(&r[2])), ["agent-1 ", "agent-2 "]);
    assert_eq!(r[3], ["other"]);
    assert_eq!(sorted(words(&r[4])), ["agent-1 ", "agent-2 ", "other "]);
    assert_eq!(r[5], ["src/"]);
    assert_eq!(r[6], ["src/lib.rs"]);
    assert_eq!(r[7], ["src"]);
    assert_eq!(r[8], ["relative"]);
    // undrop offers the dropped sessions, and only those.
    assert_eq!(words(&r[9]), ["gone-1 "]);

    // Where Stella keeps nothing, a TAB offers no session and sets nothing up.
    let plain = w.base().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    git_in(&plain, &w.home, &["init", "-q"]);
    let r = complete_in(
        &plain,
        &w.home,
        &env,
        &path,
        &setup,
        &[&["git", "stella", "--session", ""]],
    );
    assert_eq!(r[0], Vec::<String>::new());
    assert!(!plain.join(".stella").exists(), "a TAB set up a workspace");
}
