//! `git stella log`: refusals leave a trace, a step of the refused session with what was seen,
//! found and who wrote it (and `--json`), whichever way in refused the write.

use crate::common::*;

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

#[test]
fn log_graph_draws_forks_and_replays_once() {
    let w = World::new();
    w.write("a.txt", "one\n");
    w.git(&["add", "a.txt"]);
    w.git(&["commit", "-q", "-m", "a"]);
    w.ok(&["session", "start", "--id", "origin"]);
    w.ok(&["--session", "origin", "read", "a.txt"]);
    let artifact = w.base().join("origin.stella");
    w.checkpoint_to("origin", &artifact);
    let there = World::clone_of(&w);
    let a = artifact.to_str().unwrap();
    there.ok(&["replay", a, "--as", "fork-1"]);
    there.ok(&["replay", a, "--as", "fork-2"]);
    there.ok_stdin(&["--session", "fork-1", "write", "a.txt"], b"first\n");
    there.ok(&["--session", "fork-2", "read", "a.txt"]);
    there.ok(&["session", "start", "--id", "alone"]);

    let graph = there.ok(&["log", "--graph"]);
    // The origin's steps, shared by both forks, are drawn once; each fork once.
    for step in [
        "session start",
        "read a.txt",
        "checkpoint of session origin",
    ] {
        let lines: Vec<&str> = graph
            .lines()
            .filter(|l| l.ends_with(step) && !l.contains(") "))
            .collect();
        assert_eq!(lines.len(), 1, "{graph}");
    }
    assert_eq!(
        graph.matches("replay of session origin").count(),
        2,
        "{graph}"
    );
    for label in [
        "(fork-1) write a.txt",
        "(fork-2) read a.txt",
        "(alone) session start",
    ] {
        assert_eq!(graph.matches(label).count(), 1, "{graph}");
    }
    // The forks branch where the checkpoint is: git's graph joins them there.
    assert!(graph.contains("|/"), "{graph}");
    let plain = there.ok(&["log"]);
    assert_eq!(
        plain.matches("checkpoint of session origin").count(),
        2,
        "{plain}"
    );

    // One session: its own line, back through the replay into the origin.
    let one = there.ok(&["log", "--graph", "fork-2"]);
    assert_eq!(
        one.lines()
            .map(|l| l.split_once(' ').unwrap().0)
            .collect::<Vec<_>>(),
        ["*"; 5],
        "{one}"
    );
    assert!(!one.contains("fork-1"), "{one}");
    let out = there.run(&["log", "--graph", "--json"]);
    assert_eq!(code(&out), 2, "--graph draws; --json does not");
}
