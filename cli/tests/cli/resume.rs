//! `git stella resume`: where a session left off, even when it was killed mid-turn.

use std::process::Stdio;

use crate::common::*;

#[test]
fn a_session_killed_mid_turn_resumes_with_its_resume_point() {
    let w = World::new();
    let s = w.start();
    w.write("f", "seen\n");
    w.ok(&["--session", &s, "turn", "begin", "--id", "work"]);
    w.ok(&["--session", &s, "read", "f"]);
    // The "agent" process dies mid-turn: it was in the middle of a long step.
    let t = w.base().join("t");
    std::fs::write(&t, vec![b'x'; 8 << 20]).unwrap();
    let mut child = w
        .stella()
        .args(["--session", &s, "step", "--transcript", t.to_str().unwrap()])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    child.kill().unwrap();
    child.wait().unwrap();
    w.write("f", "changed while the agent was dead\n");
    // A new process, same session id.
    let v: serde_json::Value =
        serde_json::from_str(&w.ok(&["--session", &s, "resume", "--json"])).unwrap();
    assert_eq!(v["turn"]["id"], "work");
    assert_eq!(v["changed"][0]["path"], "f");
    let out = w.run_stdin(&["--session", &s, "write", "f"], b"blind\n");
    assert_eq!(code(&out), 1);
    let before = w.ok(&["--session", &s, "status", "--json"]);
    w.ok(&["--session", &s, "turn", "end"]);
    let v: serde_json::Value =
        serde_json::from_str(&w.ok(&["--session", &s, "resume", "--json"])).unwrap();
    assert!(v["turn"].is_null());
    assert_eq!(w.ok(&["--session", &s, "status", "--json"]), before);
}
