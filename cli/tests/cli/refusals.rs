//! Refusals leave a trace: a step of the refused session, shown by `log` (and `--json`), counted
//! by `status`, and every session at once in `status --all`.

use serde_json::Value;

use crate::common::*;

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn a_refusal_is_a_step_with_what_was_seen_found_and_who_wrote_it() {
    let w = World::new();
    w.write("f", "base\n");
    for s in ["a", "b", "c"] {
        w.ok(&["session", "start", "--id", s]);
        w.ok(&["--session", s, "read", "f"]);
    }
    w.run_stdin(&["--session", "b", "write", "f"], b"by b\n");
    let refused = w.run_stdin(&["--session", "a", "write", "f"], b"by a\n");
    assert_eq!(code(&refused), 1);
    // A refused delete is one too.
    assert_eq!(code(&w.run(&["--session", "a", "rm", "f"])), 1);
    // The check alone only asks: it answers as a refusal would, and leaves no trace.
    let before = w.ok(&["log", "a"]);
    assert_eq!(
        code(&w.run(&["--session", "a", "guard", "--delete", "f"])),
        1
    );
    assert_eq!(w.ok(&["log", "a"]), before);
    w.write("f", "by a person\n");
    assert_eq!(
        code(&w.run_stdin(&["--session", "c", "write", "f"], b"by c\n")),
        1
    );

    let log = json(&w.ok(&["log", "a", "--json"]));
    let steps = log["steps"].as_array().unwrap();
    assert_eq!(steps[0]["summary"], "refused delete f");
    assert_eq!(steps[1]["summary"], "refused write f");
    assert_eq!(
        steps[1]["refused"],
        serde_json::json!([{
            "intent": "write",
            "path": "f",
            "seen": b3(b"base\n"),
            "found": b3(b"by b\n"),
            "writer": {"session": "b", "at": steps[1]["refused"][0]["writer"]["at"]},
        }])
    );
    assert!(
        steps[1]["refused"][0]["writer"]["at"]
            .as_str()
            .unwrap()
            .starts_with("20"),
        "{}",
        steps[1]
    );
    assert_eq!(steps[0]["refused"][0]["intent"], "delete");
    assert_eq!(steps[2]["summary"], "read f");
    assert_eq!(steps[2]["refused"], serde_json::json!([]), "{}", steps[2]);
    assert_eq!(steps[2]["paths"], serde_json::json!(["f"]), "{}", steps[2]);
    // A person's change names no writer.
    let c = json(&w.ok(&["log", "c", "--json"]))["steps"].clone();
    assert_eq!(c[0]["refused"][0]["found"], b3(b"by a person\n"));
    assert!(c[0]["refused"][0]["writer"].is_null(), "{}", c[0]);
    // The plain log shows the refusal as a step.
    assert!(
        w.ok(&["log", "a"])
            .lines()
            .next()
            .unwrap()
            .ends_with(" refused delete f")
    );

    let status = w.run(&["--session", "a", "status"]);
    assert_eq!(stdout(&status), "changed    f\n");
    assert_eq!(
        stderr(&status),
        "note: the session had 2 writes refused ('git stella log' lists them)\n"
    );
}

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
fn a_hook_denial_and_an_mcp_refusal_are_recorded_too() {
    let w = World::new();
    w.write("notes.txt", "alpha\nbeta\n");
    let fixture = |name: &str| claude_fixture_text(&w, name);
    let hook = |payload: &str| {
        let mut cmd = w.stella();
        cmd.args(["hook", "claude-code"]);
        let out = feed(cmd, payload.as_bytes());
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        stdout(&out)
    };
    hook(&fixture("SessionStart-startup.json"));
    hook(&fixture("PostToolUse-Read.json"));
    w.write("notes.txt", "alpha\nbetamax\n");
    let deny = hook(&fixture("PreToolUse-Edit.json"));
    assert!(deny.contains("\"permissionDecision\":\"deny\""), "{deny}");
    let sid = "e6c55faa-d7b7-44f5-8458-fd227d2da938";
    let log = json(&w.ok(&["log", sid, "--json"]))["steps"].clone();
    assert_eq!(log[0]["summary"], "refused write notes.txt");
    assert_eq!(log[0]["refused"][0]["found"], b3(b"alpha\nbetamax\n"));
}
