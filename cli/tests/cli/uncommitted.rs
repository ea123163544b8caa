//! Another live session's uncommitted write is a real conflict for a session that never read the
//! file: refused through every way in, and only then (a read, a commit, an ended or dropped
//! session lets the change through).

use serde_json::Value;

use crate::common::*;

const THEIRS: &str = "fn api() { /* an hour of A's work */ }\n";
const CLAUDE: &str = "e6c55faa-d7b7-44f5-8458-fd227d2da938";

/// Shell commands that replace `api.rs` without reading it (`template.rs` is another file).
const SHELL_WAYS: [(&str, &str); 5] = [
    ("a redirect", "echo blind > api.rs"),
    ("cp", "cp template.rs api.rs"),
    ("git checkout --", "git checkout -- api.rs"),
    ("git restore", "git restore api.rs"),
    ("git reset --hard", "git reset -q --hard"),
];

/// A repository where session A rewrote the committed `api.rs` and created the untracked
/// `new.rs`, neither committed; and session B, which never read either.
fn two_sessions() -> (World, String, String) {
    let w = World::new();
    w.write("api.rs", "fn api() {}\n");
    w.git(&["add", "api.rs"]);
    w.git(&["commit", "-q", "-m", "api"]);
    let a = w.start();
    w.ok_stdin(&["--session", &a, "write", "api.rs"], THEIRS.as_bytes());
    w.ok_stdin(&["--session", &a, "write", "new.rs"], b"fn new() {}\n");
    let b = w.start();
    (w, a, b)
}

fn claude_write(w: &World, path: &str) -> Value {
    let payload: Value = serde_json::from_str(
        &claude_fixture_text(w, "PreToolUse-Write.json").replace("new.txt", path),
    )
    .unwrap();
    hook_json(w, "claude-code", &payload)
}

fn says_theirs(text: &str, path: &str, a: &str) {
    assert!(
        text.contains(&format!("{path} holds what session {a} wrote at ")),
        "{text}"
    );
    assert!(
        text.contains("git's HEAD does not have those bytes"),
        "{text}"
    );
    assert!(
        text.contains(&format!("read {path} first"))
            && text.contains(&format!("ask session {a} to commit it")),
        "{text}"
    );
}

#[test]
fn a_blind_change_of_another_sessions_uncommitted_write_is_refused_by_every_command_and_host() {
    let (w, a, b) = two_sessions();
    let untouched = |how: &str| {
        assert_eq!(w.read("api.rs"), THEIRS, "{how}");
        assert_eq!(w.read("new.rs"), "fn new() {}\n", "{how}");
    };

    let out = w.run_stdin(&["--session", &b, "write", "api.rs"], b"blind\n");
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with("refusing to write: api.rs\n"),
        "{}",
        stderr(&out)
    );
    says_theirs(&stderr(&out), "api.rs", &a);
    untouched("write");

    let out = w.run(&["--session", &b, "rm", "api.rs", "new.rs"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    says_theirs(&stderr(&out), "api.rs", &a);
    says_theirs(&stderr(&out), "new.rs", &a);
    untouched("rm");

    let out = w.run(&["--session", &b, "guard", "--json", "api.rs", "README"]);
    assert_eq!(code(&out), 1);
    let v: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(v["checks"][0]["reason"], "uncommitted");
    assert_eq!(v["checks"][0]["writer"]["session"], a.as_str());
    assert_eq!(v["checks"][0]["now"], b3(THEIRS.as_bytes()));
    assert_eq!(v["checks"][1]["reason"], "untracked");
    assert!(v["checks"][1]["writer"].is_null());

    // Claude Code's Write, through the hook of a session that does not exist yet.
    let v = claude_write(&w, "api.rs");
    assert!(denies(&v), "{v}");
    says_theirs(
        v.pointer("/hookSpecificOutput/permissionDecisionReason")
            .and_then(Value::as_str)
            .unwrap(),
        "api.rs",
        &a,
    );
    untouched("Claude Code's Write");

    if let Some(python) = crate::mcp::python() {
        for (tool, answer) in crate::mcp::drive(&w, &python, "change", &["api.rs", &b]) {
            assert_eq!(answer["error"], true, "{tool}: {answer}");
            says_theirs(answer["text"].as_str().unwrap(), "api.rs", &a);
        }
        untouched("MCP");
    }
}

/// The shell's ways of replacing a file blind, and what they leave: built step on step, as the
/// refusals it makes are what `status` and `doctor` then show.
#[test]
fn a_blind_change_of_another_sessions_uncommitted_write_is_refused_in_the_shell_and_left_said() {
    let (w, a, b) = two_sessions();
    let untouched = |how: &str| {
        assert_eq!(w.read("api.rs"), THEIRS, "{how}");
        assert_eq!(w.read("new.rs"), "fn new() {}\n", "{how}");
    };
    if !guarded_here(&w) {
        return;
    }
    w.write("template.rs", "fn template() {}\n");
    let more = [
        ("sed -i", "sed -i s/work/nothing/ api.rs"),
        ("mv over it", "cp template.rs t2.rs && mv t2.rs api.rs"),
        ("rm", "rm -f api.rs new.rs"),
        ("git clean -fd", "git clean -fdq"),
    ];
    for (how, script) in SHELL_WAYS.into_iter().chain(more) {
        let out = w.run(&["--session", &b, "exec", "--", "sh", "-c", script]);
        let path = if how == "git clean -fd" {
            "new.rs"
        } else {
            "api.rs"
        };
        assert!(
            stderr(&out).contains("refusing to"),
            "{how}: {}",
            stderr(&out)
        );
        says_theirs(&stderr(&out), path, &a);
        untouched(how);
    }
    // A command that carries on past the refusal and reports success is told it did not.
    w.write("template.rs", "fn template() {}\n");
    let out = w.run(&[
        "--session",
        &b,
        "exec",
        "--",
        "sh",
        "-c",
        "cp template.rs api.rs; true",
    ]);
    assert_eq!(code(&out), 0);
    assert!(
        stderr(&out).contains("stella: the command reported success, but Stella refused 1 change, left as it was: api.rs"),
        "{}",
        stderr(&out)
    );
    untouched("a command that carried on");
    // `status` and `doctor` show the file left behind, until the session reads it.
    let left = |w: &World| -> Value {
        let status: Value =
            serde_json::from_str(&w.ok(&["--session", &b, "status", "--json"])).unwrap();
        // Each with the bytes found, the path and who wrote them: the rest is checked here.
        let list = status["left_behind"].as_array().unwrap().iter();
        list.map(|r| serde_json::json!([r["path"], r["intent"], r["writer"]["session"]]))
            .collect()
    };
    assert_eq!(
        left(&w),
        serde_json::json!([["api.rs", "write", a], ["new.rs", "delete", a]])
    );
    let out = w.run(&["--session", &b, "status"]);
    assert!(
        stderr(&out).contains(&format!(
            "note: refused changes left 2 files as they were: api.rs (holds what session {a} wrote), new.rs (holds what session {a} wrote);"
        )),
        "{}",
        stderr(&out)
    );
    let doctor: Value = serde_json::from_str(&stdout(&w.run(&["doctor", "--json"]))).unwrap();
    let found: Vec<&Value> = doctor["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["check"] == "left-behind")
        .collect();
    assert_eq!(found.len(), 1, "{doctor}");
    assert!(
        found[0]["message"].as_str().unwrap().starts_with(&format!(
            "session {b}: refused changes left 2 files as they were: api.rs (holds what session {a} wrote), new.rs"
        )),
        "{doctor}"
    );
    let out = w.run(&["--session", &b, "exec", "--", "git", "checkout", "--", "."]);
    assert!(
        stderr(&out).contains("unable to unlink old 'api.rs'"),
        "{}",
        stderr(&out)
    );
    untouched("git checkout -- .");
    // `git stash` reads the file into the stash before it resets it: nothing is lost, and the
    // command read the bytes it replaces.
    let out = w.run(&["--session", &b, "exec", "--", "git", "stash", "-q"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(w.git(&["show", "stash@{0}:api.rs"]), THEIRS.trim_end());
    // The stash changed api.rs: the refusal no longer stands there. A read settles new.rs.
    assert_eq!(left(&w), serde_json::json!([["new.rs", "delete", a]]));
    w.ok(&["--session", &b, "read", "new.rs"]);
    assert_eq!(left(&w), serde_json::json!([]));
}

#[test]
fn reading_first_a_commit_an_ended_or_dropped_session_let_the_change_through() {
    let (w, a, b) = two_sessions();
    // A read of its own bytes leaves them A's write.
    w.ok(&["--session", &a, "read", "api.rs"]);
    let c = w.start();
    assert_eq!(
        code(&w.run_stdin(&["--session", &c, "write", "api.rs"], b"c\n")),
        1
    );

    // B reads what is there, then writes: it builds on A's work.
    w.ok(&["--session", &b, "read", "api.rs"]);
    w.ok_stdin(&["--session", &b, "write", "api.rs"], b"B built on it\n");
    // The bytes are B's now; B's write is protected from A's blind... A tracks api.rs: its own
    // stale write is refused as always.
    let out = w.run_stdin(&["--session", &a, "write", "api.rs"], b"A again\n");
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains("changed since this session last read it"),
        "{}",
        stderr(&out)
    );

    // The same bytes as A's write: nothing would be lost.
    let out = w.run_stdin(&["--session", &c, "write", "new.rs"], b"fn new() {}\n");
    assert_eq!(code(&out), 0, "{}", stderr(&out));

    // Committed: git holds A's bytes, a blind change loses nothing.
    w.ok_stdin(&["--session", &a, "write", "lib.rs"], b"lib\n");
    assert_eq!(code(&w.run(&["--session", &c, "rm", "lib.rs"])), 1);
    w.git(&["add", "lib.rs"]);
    w.git(&["commit", "-q", "-m", "lib"]);
    w.ok(&["--session", &c, "rm", "lib.rs"]);

    // Ended: no longer protected; its next step makes it live again.
    w.ok_stdin(&["--session", &a, "write", "ended.rs"], b"ended\n");
    w.ok(&["session", "end", &a]);
    w.ok(&["session", "end", &a]);
    w.ok_stdin(
        &["--session", &c, "write", "ended.rs"],
        b"c over an ended session\n",
    );
    w.ok_stdin(&["--session", &a, "write", "again.rs"], b"again\n");
    assert_eq!(code(&w.run(&["--session", &c, "rm", "again.rs"])), 1);

    // Dropped: gone.
    w.ok(&["session", "drop", &a]);
    w.ok(&["--session", &c, "rm", "again.rs"]);

    // Claude Code's SessionEnd ends its session.
    w.ok(&["session", "start", "--id", CLAUDE]);
    w.ok_stdin(&["--session", CLAUDE, "write", "claude.rs"], b"claude\n");
    assert_eq!(code(&w.run(&["--session", &c, "rm", "claude.rs"])), 1);
    let mut cmd = w.stella();
    cmd.args(["hook", "claude-code"]);
    let out = feed(cmd, claude_fixture_text(&w, "SessionEnd.json").as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    w.ok(&["--session", &c, "rm", "claude.rs"]);

    // A person's uncommitted edit is no session's write: a blind change goes ahead.
    w.write("person.rs", "a person's edit\n");
    w.ok_stdin(&["--session", &c, "write", "person.rs"], b"c\n");
}

/// Whether `recover api.rs` lists `text` as kept (overwritten) bytes.
fn kept_for_recover(w: &World, path: &str, text: &str) -> bool {
    let v: Value = serde_json::from_str(&w.ok(&["recover", "--json", path])).unwrap();
    v["versions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|v| v["how"] == "overwritten" && v["blake3"] == b3(text.as_bytes()))
}

#[test]
fn a_persons_uncommitted_edit_replaced_blind_is_kept_and_said() {
    let w = World::new();
    w.write("api.rs", "fn api() {}\n");
    w.git(&["add", "api.rs"]);
    w.git(&["commit", "-q", "-m", "api"]);
    let said = "kept the previous api.rs: git stella recover api.rs";
    let edit = |how: &str| {
        let text = format!("a person's uncommitted edit, before {how}\n");
        w.write("api.rs", &text);
        text
    };

    let text = edit("write");
    let out = w.run_stdin(&["--session", &w.start(), "write", "api.rs"], b"blind\n");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stderr(&out), format!("{said}\n"));
    assert!(kept_for_recover(&w, "api.rs", &text));
    // What git's HEAD holds is not kept again, and nothing is said.
    w.write("api.rs", "fn api() {}\n");
    let out = w.run_stdin(&["--session", &w.start(), "write", "api.rs"], b"blind\n");
    assert_eq!(stderr(&out), "");

    let text = edit("rm");
    let out = w.run(&["--session", &w.start(), "rm", "api.rs"]);
    assert_eq!(stderr(&out), format!("{said}\n"));
    assert!(!w.repo.join("api.rs").exists());
    assert!(kept_for_recover(&w, "api.rs", &text));

    if let Some(python) = crate::mcp::python() {
        let text = edit("MCP write_file");
        let s = w.start();
        let answers = crate::mcp::drive(&w, &python, "change", &["api.rs", &s]);
        let (tool, answer) = &answers[0];
        assert_eq!(tool, "write_file");
        assert_eq!(answer["text"], format!("wrote api.rs (8 bytes)\n{said}"));
        assert!(kept_for_recover(&w, "api.rs", &text));
    }

    // Claude Code's Write: kept before the tool runs, said after it.
    let text = edit("Claude Code's Write");
    let pre: Value = serde_json::from_str(
        &claude_fixture_text(&w, "PreToolUse-Write.json").replace("new.txt", "api.rs"),
    )
    .unwrap();
    assert!(!denies(&hook_json(&w, "claude-code", &pre)));
    assert!(kept_for_recover(&w, "api.rs", &text));
    w.write("api.rs", "fresh file\n");
    let mut post: Value = serde_json::from_str(
        &claude_fixture_text(&w, "PostToolUse-Write-update.json").replace("notes.txt", "api.rs"),
    )
    .unwrap();
    post["session_id"] = pre["session_id"].clone();
    post["tool_use_id"] = pre["tool_use_id"].clone();
    post["tool_input"]["content"] = "fresh file\n".into();
    let v = hook_json(&w, "claude-code", &post);
    let told = v
        .pointer("/hookSpecificOutput/additionalContext")
        .and_then(Value::as_str);
    assert!(
        told.is_some_and(|t| t.starts_with(&format!("Stella: {said}"))),
        "{v}"
    );

    // Everything kept, whatever the file, newest first; a person finds it without its name.
    w.write("untracked.md", "a person's new file\n");
    w.ok(&["--session", &w.start(), "rm", "untracked.md"]);
    let v: Value = serde_json::from_str(&w.ok(&["recover", "--all", "--json"])).unwrap();
    let kept = v["kept"].as_array().unwrap();
    // Newest first, to the second a step records (a tie keeps no order).
    let newest = kept
        .iter()
        .find(|k| k["path"] == "untracked.md")
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(newest["time"], kept[0]["time"], "{v}");
    assert_eq!(newest["blake3"], b3(b"a person's new file\n"));
    assert!(
        kept.iter().filter(|k| k["path"] == "api.rs").count() >= 3,
        "{v}"
    );
    let times: Vec<&str> = kept.iter().map(|k| k["time"].as_str().unwrap()).collect();
    assert!(times.windows(2).all(|t| t[0] >= t[1]), "{times:?}");
    let listed = w.ok(&["recover", "--all"]);
    let newest = listed.lines().nth(1).unwrap().split(' ').next().unwrap();
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with(newest) && l.ends_with("  untracked.md")),
        "{listed}"
    );
    let v: Value =
        serde_json::from_str(&w.ok(&["recover", "--all", "--since", "2999-01-01", "--json"]))
            .unwrap();
    assert_eq!(v["kept"], serde_json::json!([]));
    let v: Value =
        serde_json::from_str(&w.ok(&["recover", "--all", "--since", "1h", "--json"])).unwrap();
    assert_eq!(v["kept"].as_array().unwrap().len(), kept.len());
}

#[test]
fn a_blind_change_of_a_file_past_the_size_stella_keeps_is_refused() {
    let w = World::new();
    // Past the size Stella keeps, a blind change is refused (git's HEAD lacks the bytes).
    let big = "x".repeat((64 << 20) + 1);
    w.write("big.bin", &big);
    let out = w.run_stdin(&["--session", &w.start(), "write", "big.bin"], b"small\n");
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("up to 64 MiB of a file"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::metadata(w.repo.join("big.bin")).unwrap().len(),
        big.len() as u64
    );
    std::fs::remove_file(w.repo.join("big.bin")).unwrap();
}

#[test]
fn a_persons_uncommitted_edit_replaced_blind_in_the_shell_is_kept_and_said() {
    let w = World::new();
    w.write("api.rs", "fn api() {}\n");
    w.git(&["add", "api.rs"]);
    w.git(&["commit", "-q", "-m", "api"]);
    let said = "kept the previous api.rs: git stella recover api.rs";
    let edit = |how: &str| {
        let text = format!("a person's uncommitted edit, before {how}\n");
        w.write("api.rs", &text);
        text
    };

    if !guarded_here(&w) {
        return;
    }
    w.write("template.rs", "fn template() {}\n");
    for (how, script) in SHELL_WAYS {
        let text = edit(how);
        let out = w.run(&["--session", &w.start(), "exec", "--", "sh", "-c", script]);
        assert_eq!(code(&out), 0, "{how}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!("stella: {said}\n")),
            "{how}: {}",
            stderr(&out)
        );
        assert!(kept_for_recover(&w, "api.rs", &text), "{how}");
        assert_ne!(w.read("api.rs"), text, "{how}");
    }
    // An untracked file `git clean` removes is kept; one git ignores (a build output) is not.
    w.write(".gitignore", "build/\n");
    w.write("draft.md", "a person's new file\n");
    w.write("build/out.o", "built\n");
    let out = w.run(&[
        "--session",
        &w.start(),
        "exec",
        "--",
        "sh",
        "-c",
        "git clean -fdq; rm -r build",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!w.repo.join("draft.md").exists() && !w.repo.join("build").exists());
    let said = stderr(&out);
    assert!(
        said.contains("stella: kept the previous draft.md: git stella recover draft.md\n"),
        "{said}"
    );
    assert!(!said.contains("build/"), "{said}");
    assert!(kept_for_recover(&w, "draft.md", "a person's new file\n"));
    let v: Value = serde_json::from_str(&w.ok(&["recover", "--all", "--json"])).unwrap();
    assert!(!v.to_string().contains("build/out.o"), "{v}");
}

#[test]
fn a_branch_switch_half_done_names_the_file_it_left_behind() {
    let w = World::new();
    w.write("api.rs", "fn api() {}\n");
    w.git(&["add", "api.rs"]);
    w.git(&["commit", "-q", "-m", "api"]);
    w.git(&["checkout", "-q", "-b", "feature"]);
    w.write("api.rs", "fn api() { feature }\n");
    w.git(&["commit", "-q", "-am", "feature"]);
    w.git(&["checkout", "-q", "-"]);
    let a = w.start();
    w.ok_stdin(&["--session", &a, "write", "api.rs"], THEIRS.as_bytes());
    let b = w.start();
    let out = w.run(&[
        "--session",
        &b,
        "exec",
        "--",
        "git",
        "checkout",
        "-f",
        "feature",
    ]);
    // git goes on to the branch past the file it could not replace.
    assert!(
        stderr(&out).contains("unable to unlink old 'api.rs'"),
        "{}",
        stderr(&out)
    );
    assert_eq!(w.git(&["branch", "--show-current"]), "feature");
    assert_eq!(w.read("api.rs"), THEIRS);
    let status: Value =
        serde_json::from_str(&w.ok(&["--session", &b, "status", "--json"])).unwrap();
    let left = &status["left_behind"];
    assert_eq!(left.as_array().map(Vec::len), Some(1), "{left}");
    assert_eq!(
        (
            &left[0]["path"],
            &left[0]["intent"],
            &left[0]["writer"]["session"]
        ),
        (&"api.rs".into(), &"delete".into(), &a.as_str().into()),
    );
    let doctor = stdout(&w.run(&["doctor"]));
    assert!(
        doctor.contains(&format!(
            "warn  session {b}: refused changes left 1 file as it was: api.rs (holds what session {a} wrote)"
        )),
        "{doctor}"
    );
}
