//! How the command line treats what it is given: a `--session` a command does not use, an id
//! that looks like an option, and an error that names what failed.
//!
//! Not per command: each checks a rule of the command line that every command follows (global
//! options, ids, git's conventions for `-n`, `--exit-code` and output paths, `--version`).

use crate::common::*;

#[test]
fn a_session_flag_a_command_does_not_use_is_ignored_with_a_warning() {
    let w = World::new();
    w.ok(&["session", "start", "--id", "s"]);
    let warning =
        "stella: warning: --session is not used by 'git stella store-path'; it was ignored\n";
    let out = w.run(&["--session", "s", "store-path"]);
    assert_eq!(code(&out), 0);
    assert_eq!(stderr(&out), warning);
    assert!(stdout(&out).trim_end().ends_with("store.git"));
    let out = w.run(&["store-path", "--session=s"]);
    assert_eq!(stderr(&out), warning);
    // Through the environment a script may set it for every command: nothing said.
    let mut cmd = w.stella();
    cmd.env("STELLA_SESSION", "s").arg("store-path");
    let out = cmd.output().unwrap();
    assert_eq!((code(&out), stderr(&out)), (0, String::new()));
    // A command that acts on the session says nothing about it.
    let out = w.run(&["--session", "s", "status"]);
    assert_eq!((code(&out), stderr(&out)), (0, String::new()));
    let out = w.run(&["session", "list", "--session", "s"]);
    assert!(
        stderr(&out).contains("not used by 'git stella session list'"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_id_that_looks_like_an_option_gets_the_ids_own_error() {
    let w = World::new();
    let out = w.run(&["session", "start", "--id", "-bad"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        "error: '-bad' is not a valid session id: it must not start with '.' or '-'\n"
    );
}

#[test]
fn log_n_diff_exit_code_and_a_tidy_output_path() {
    let w = World::new();
    w.write("a.txt", "alpha\n");
    w.ok(&["session", "start", "--id", "s"]);
    w.ok(&["--session", "s", "read", "a.txt"]);
    w.ok(&["--session", "s", "read", "a.txt"]);
    // log -n: the last N steps, newest first, as git log -n.
    let all = w.ok(&["log", "s"]);
    assert_eq!(all.lines().count(), 3, "{all}");
    let two = w.ok(&["log", "-n", "2", "s"]);
    assert_eq!(
        two.lines().collect::<Vec<_>>(),
        all.lines().take(2).collect::<Vec<_>>()
    );
    let json: serde_json::Value =
        serde_json::from_str(&w.ok(&["log", "--max-count", "1", "--json", "s"])).unwrap();
    assert_eq!(json["steps"].as_array().unwrap().len(), 1);
    // diff --exit-code: 0 while nothing changed, 1 once something did, as git diff.
    let out = w.run(&["--session", "s", "diff", "--exit-code", "a.txt"]);
    assert_eq!((code(&out), stdout(&out)), (0, String::new()));
    w.write("a.txt", "changed\n");
    let out = w.run(&["--session", "s", "diff", "--exit-code", "a.txt"]);
    assert_eq!(code(&out), 1);
    assert!(stdout(&out).contains("+changed"), "{}", stdout(&out));
    let out = w.run(&["--session", "s", "diff", "a.txt"]);
    assert_eq!(code(&out), 0);
    // diff with no path: every tracked file that changed, as git diff; none, nothing.
    w.write("b.txt", "b\n");
    w.ok(&["--session", "s", "read", "b.txt"]);
    let out = w.run(&["--session", "s", "diff", "--exit-code"]);
    assert_eq!(code(&out), 1);
    assert_eq!(
        stdout(&out),
        stdout(&w.run(&["--session", "s", "diff", "a.txt"])),
        "only a.txt changed"
    );
    let json: serde_json::Value =
        serde_json::from_str(&w.ok(&["--session", "s", "diff", "--json"])).unwrap();
    assert_eq!(json["files"].as_array().unwrap().len(), 1, "{json}");
    assert_eq!(json["files"][0]["path"], "a.txt");
    w.ok(&["--session", "s", "read", "a.txt"]);
    let out = w.run(&["--session", "s", "diff", "--exit-code"]);
    assert_eq!((code(&out), stdout(&out)), (0, String::new()));
    // checkpoint -o ../x names the file as a person would write it, without the '..'.
    let out = w.run(&["--session", "s", "checkpoint", "-o", "../s.bundle"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stdout(&out).trim_end(),
        w.base().join("s.bundle").to_str().unwrap()
    );
}

#[test]
fn verbose_says_which_workspace_what_was_recorded_and_what_the_guard_decided() {
    let w = World::new();
    w.write("a.txt", "alpha\n");
    w.ok(&["session", "start", "--id", "s"]);
    let out = w.run(&["-v", "--session", "s", "read", "a.txt"]);
    assert_eq!(code(&out), 0);
    let said = stderr(&out);
    assert!(said.contains("INFO workspace root="), "{said}");
    assert!(
        said.contains("INFO recorded: read a.txt session=s step=2"),
        "{said}"
    );
    let out = w.run(&["-v", "--session", "s", "guard", "a.txt"]);
    assert!(
        stderr(&out).contains("INFO guard: Allow(Fresh) path=a.txt"),
        "{}",
        stderr(&out)
    );
    // Without -v: nothing but what the command is for.
    let out = w.run(&["--session", "s", "read", "a.txt"]);
    assert_eq!((code(&out), stderr(&out)), (0, String::new()));
}

#[test]
fn version_names_the_commit_and_the_build_date() {
    let w = World::new();
    let long = w.ok(&["--version"]);
    assert_eq!(
        long,
        format!(
            "git-stella {} ({} {})",
            env!("CARGO_PKG_VERSION"),
            env!("STELLA_COMMIT"),
            env!("STELLA_BUILD_DATE")
        )
    );
    // Built from this checkout: a commit of it, named as git names it.
    let commit = env!("STELLA_COMMIT");
    if repo_root().join(".git").is_dir() {
        let found = std::process::Command::new("git")
            .args(["cat-file", "-e", &format!("{commit}^{{commit}}")])
            .current_dir(repo_root())
            .status()
            .unwrap();
        assert!(found.success(), "{long}");
    }
    let date = env!("STELLA_BUILD_DATE").as_bytes();
    assert!(
        date.len() == 10 && date[4] == b'-' && date[7] == b'-',
        "{long}"
    );
    assert_eq!(
        w.ok(&["-V"]),
        format!("git-stella {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn output_into_a_pipe_nobody_reads_ends_quietly() {
    let w = World::new();
    w.ok(&["session", "start", "--id", "s"]);
    for _ in 0..3 {
        // As `git stella session list | head -0`: the reader is gone before the first line.
        let mut child = w
            .stella()
            .args(["session", "list"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!((code(&out), stderr(&out)), (0, String::new()));
    }
}
