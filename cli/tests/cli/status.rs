//! `git stella status`: what changed of what a session read, and every session at once with
//! `--all`; paths from the current folder.

use crate::common::*;

#[test]
fn status_all_shows_every_session_with_what_changed_and_refusals() {
    let w = World::new();
    w.write("f", "base\n");
    w.write("g", "gee\n");
    for s in ["a", "b", "c"] {
        w.ok(&["session", "start", "--id", s]);
    }
    w.ok(&["--session", "a", "read", "f", "g"]);
    w.ok(&["--session", "b", "read", "f"]);
    w.run_stdin(&["--session", "b", "write", "f"], b"by b\n");
    assert_eq!(
        code(&w.run_stdin(&["--session", "a", "write", "f"], b"x\n")),
        1
    );

    let all = json(&w.ok(&["status", "--all", "--json"]));
    let row = |s: &str| {
        all["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["session"] == s)
            .unwrap_or_else(|| panic!("{s}: {all}"))
            .clone()
    };
    let a = row("a");
    assert_eq!(
        (a["tracked_count"].as_u64(), a["refused_count"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(
        a["changed"],
        serde_json::json!([{"path": "f", "state": "changed"}])
    );
    let b = row("b");
    assert_eq!(
        (b["tracked_count"].as_u64(), b["refused_count"].as_u64()),
        (Some(1), Some(0))
    );
    assert_eq!(b["changed"], serde_json::json!([]));
    let c = row("c");
    assert_eq!(
        (c["tracked_count"].as_u64(), c["step_count"].as_u64()),
        (Some(0), Some(1))
    );

    let text = w.ok(&["status", "--all"]);
    let lines: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines[0],
        ["SESSION", "LAST", "ACTED", "TRACKED", "CHANGED", "REFUSED"]
    );
    assert_eq!(lines.len(), 4, "{text}");
    let line = |s: &str| lines.iter().find(|l| l[0] == s).unwrap().clone();
    assert_eq!(line("a")[2..], ["2", "1", "1"]);
    assert_eq!(line("b")[2..], ["1", "0", "0"]);
    assert_eq!(line("c")[2..], ["0", "0", "0"]);
}

#[test]
fn status_shows_paths_from_the_current_folder_and_json_from_the_root() {
    let w = World::new();
    w.write("a.txt", "alpha\n");
    w.write("sub/b.txt", "beta\n");
    w.write("sub/deeper/c.txt", "gamma\n");
    w.ok(&["session", "start", "--id", "s"]);
    w.ok(&[
        "--session",
        "s",
        "read",
        "a.txt",
        "sub/b.txt",
        "sub/deeper/c.txt",
    ]);
    let mut cmd = w.stella_in(&w.repo.join("sub"));
    cmd.args(["--session", "s", "status"]);
    let out = cmd.output().unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let paths: Vec<String> = stdout(&out)
        .lines()
        .map(|l| l.split_whitespace().nth(1).unwrap().to_owned())
        .collect();
    assert_eq!(paths, ["../a.txt", "b.txt", "deeper/c.txt"]);
    // From the root, and in JSON from anywhere: the path in the workspace.
    let root = w.ok(&["--session", "s", "status"]);
    assert!(root.contains(" sub/b.txt"), "{root}");
    let mut cmd = w.stella_in(&w.repo.join("sub"));
    cmd.args(["--session", "s", "status", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&cmd.output().unwrap().stdout).unwrap();
    assert_eq!(json["files"][1]["path"], "sub/b.txt");
}
