//! How the command line treats what it is given: a `--session` a command does not use, an id
//! that looks like an option, and an error that names what failed.

use std::process::Stdio;

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
        stderr(&out).contains("not used by 'git stella session'"),
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
fn a_checkpoint_that_cannot_be_written_says_so() {
    let w = World::new();
    w.write("a.txt", "alpha\n");
    w.ok(&["session", "start", "--id", "s"]);
    w.ok(&["--session", "s", "read", "a.txt"]);
    let full = std::fs::File::options()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let mut cmd = w.stella();
    cmd.args(["--session", "s", "checkpoint", "-o", "-"])
        .stdout(Stdio::from(full));
    let out = cmd.output().unwrap();
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out)
            .starts_with("error: could not write the artifact\ncaused by: No space left on device"),
        "{}",
        stderr(&out)
    );
}
