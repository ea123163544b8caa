//! `git stella recover`: every version any session of the workspace read or wrote, listed, shown
//! and restored through the guard.

use crate::common::*;

fn id(bytes: &str) -> String {
    b3(bytes.as_bytes())[..12].to_owned()
}

/// Sessions a and b read `f`; b writes it; a person edits it; a reads it again.
fn history(w: &World) {
    w.ok(&["session", "start", "--id", "a"]);
    w.ok(&["session", "start", "--id", "b"]);
    w.write("f", "base\n");
    w.ok(&["--session", "a", "read", "f"]);
    w.ok(&["--session", "b", "read", "f"]);
    w.run_stdin(&["--session", "b", "write", "f"], b"by b\n");
    w.write("f", "by a person\n");
    w.ok(&["--session", "a", "read", "f"]);
}

#[test]
fn every_version_is_listed_with_who_and_the_one_on_disk_is_marked() {
    let w = World::new();
    history(&w);
    let out = w.run(&["recover", "f", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let list: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(list["path"], "f");
    let rows = list["versions"].as_array().unwrap();
    let find = |bytes: &str| {
        rows.iter()
            .find(|r| r["version"] == id(bytes))
            .unwrap_or_else(|| panic!("{bytes:?} missing: {list}"))
    };
    assert_eq!(rows.len(), 3, "{list}");
    let base = find("base\n");
    assert_eq!(base["how"], "read");
    assert_eq!(base["bytes"], 5);
    assert_eq!(base["writer"], serde_json::Value::Null);
    assert_eq!(base["on_disk"], false);
    let b = find("by b\n");
    assert_eq!(
        (b["session"].as_str(), b["how"].as_str()),
        (Some("b"), Some("wrote"))
    );
    assert_eq!(b["writer"]["session"], "b");
    assert_eq!(b["step"], 3);
    let person = find("by a person\n");
    assert_eq!(
        (person["session"].as_str(), person["how"].as_str()),
        (Some("a"), Some("read"))
    );
    assert_eq!(person["on_disk"], true);

    let text = w.ok(&["recover", "f"]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["VERSION", "TIME", "BYTES", "HOW"]
    );
    let line = |bytes: &str| *lines.iter().find(|l| l.starts_with(&id(bytes))).unwrap();
    assert!(line("by b\n").ends_with("written by b (step 3)"), "{text}");
    assert!(
        line("by a person\n").ends_with("read by a (step 3)  (on disk now)"),
        "{text}"
    );
}

#[test]
fn show_prints_a_version_and_restore_goes_through_the_guard() {
    let w = World::new();
    history(&w);
    let b = id("by b\n");
    let shown = w.run(&["recover", "f", "--show", &b[..6]]);
    assert_eq!(code(&shown), 0, "{}", stderr(&shown));
    assert_eq!(stdout(&shown), "by b\n");

    // Session b last saw its own write; the person's edit since is one it never saw: refused.
    let refused = w.run(&["--session", "b", "recover", "f", "--restore", &id("base\n")]);
    assert_eq!(code(&refused), 1);
    assert!(
        stderr(&refused).starts_with("refusing to write: f\n"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(w.read("f"), "by a person\n");

    // Session a has seen the person's version: it may put b's back.
    let restored = w.run(&["--session", "a", "recover", "f", "--restore", &b]);
    assert_eq!(code(&restored), 0, "{}", stderr(&restored));
    assert_eq!(stdout(&restored), format!("restored f to version {b}\n"));
    assert_eq!(w.read("f"), "by b\n");
    assert_eq!(w.ok(&["--session", "a", "status"]), "unchanged  f");
}

#[test]
fn unknown_and_short_version_ids_are_errors() {
    let w = World::new();
    history(&w);
    let short = w.run(&["recover", "f", "--show", "ab"]);
    assert_eq!(code(&short), 2);
    assert_eq!(
        stderr(&short),
        "error: 'ab' is not a version id: give at least 4 of the hex digits 'git stella recover f' lists\n"
    );
    let unknown = w.run(&["recover", "f", "--show", "0000"]);
    assert_eq!(code(&unknown), 2);
    assert!(
        stderr(&unknown).starts_with("error: no version 0000 of 'f'"),
        "{}",
        stderr(&unknown)
    );
    let none = w.run(&["--session", "a", "recover", "g", "--restore", "0000"]);
    assert_eq!(code(&none), 2);
    assert_eq!(
        w.ok(&["recover", "never-seen"]),
        "no session of this workspace read or wrote never-seen"
    );
}
