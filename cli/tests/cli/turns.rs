//! Turns, the resume point, transcripts, and the crash test.

use std::process::Stdio;

use crate::common::*;

#[test]
fn turns_open_and_retract_the_resume_point_and_keep_the_map() {
    let w = World::new();
    let s = w.start();
    w.write("a", "a");
    w.ok(&["--session", &s, "read", "a"]);
    assert!(w.ok(&["--session", &s, "resume"]).contains("no open turn"));
    assert_eq!(
        w.ok(&["--session", &s, "turn", "begin", "--id", "t1"]),
        "t1"
    );
    w.ok(&["--session", &s, "step", "--note", "planned the change"]);
    w.write("a", "A");
    let resume = w.ok(&["--session", &s, "resume"]);
    assert!(resume.contains("open turn t1 since "), "{resume}");
    assert!(resume.contains(": 1 step, last at "), "{resume}");
    assert!(resume.contains("last note: planned the change"), "{resume}");
    assert!(resume.contains("1 tracked file\n"), "{resume}");
    assert!(
        resume.ends_with(
            "changed since this session saw them (re-read before writing):\n  changed  a"
        ),
        "{resume}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&w.ok(&["--session", &s, "resume", "--json"])).unwrap();
    assert_eq!(v["turn"]["id"], "t1");
    assert_eq!(v["turn"]["step_count"], 1);
    assert_eq!(v["changed"][0]["path"], "a");

    // A second begin while t1 is open ends t1 and says so.
    let out = w.run(&["--session", &s, "turn", "begin", "--id", "t2"]);
    assert_eq!(stdout(&out), "t2\n");
    assert_eq!(
        stderr(&out),
        "stella: turn t1 was still open (1 step); ended it and began turn t2\n"
    );
    w.ok(&["--session", &s, "turn", "end"]);
    let v: serde_json::Value =
        serde_json::from_str(&w.ok(&["--session", &s, "resume", "--json"])).unwrap();
    assert!(v["turn"].is_null());
    assert_eq!(v["tracked_count"], 1);
    // The map stayed: the stale write is still refused.
    assert_eq!(code(&w.run(&["--session", &s, "guard", "a"])), 1);
    let out = w.run(&["--session", &s, "turn", "end"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        format!(
            "error: no turn is open in session '{s}'\nhint: open one with 'git stella turn begin'\n"
        )
    );
    let log = w.ok(&["log", &s]);
    let summaries: Vec<&str> = log
        .lines()
        .map(|l| l.splitn(3, ' ').nth(2).unwrap())
        .collect();
    // The guard's refusal only answered: it is no step.
    assert_eq!(
        summaries,
        [
            "turn end t2",
            "turn begin t2 (ended open turn t1)",
            "step 1 of turn t1: planned the change",
            "turn begin t1",
            "read a",
            "session start"
        ]
    );
}

#[test]
fn transcripts_are_stored_verbatim() {
    let w = World::new();
    let s = w.start();
    w.ok(&["--session", &s, "turn", "begin"]);
    let t = w.base().join("chat.jsonl");
    // Not UTF-8, with CRLF and NULs.
    let mut bytes: Vec<u8> = vec![0xff, 0xfe, b'\r', b'\n', 0, 0x80];
    std::fs::write(&t, &bytes).unwrap();
    w.ok(&["--session", &s, "step", "--transcript", t.to_str().unwrap()]);
    let out = w.run(&["--session", &s, "resume", "--transcript", "chat.jsonl"]);
    assert_eq!(out.stdout, bytes);
    // It grows: each step stores only what was appended, and reads back whole.
    let store = w.store();
    for round in 0..3u32 {
        let more: Vec<u8> = (0..(3u32 << 20))
            .map(|i| (i.wrapping_mul(2654435761) >> 13 ^ round) as u8)
            .collect();
        bytes.extend_from_slice(&more);
        std::fs::write(&t, &bytes).unwrap();
        w.ok(&["--session", &s, "step", "--transcript", t.to_str().unwrap()]);
        let out = w.run(&["--session", &s, "resume", "--transcript", "chat.jsonl"]);
        assert!(out.stdout == bytes, "round {round}: transcript differs");
    }
    let chunks = crate::common::git_in(
        &w.repo,
        &w.home,
        &[
            "--git-dir",
            store.to_str().unwrap(),
            "ls-tree",
            "--name-only",
            &format!("refs/stella/sessions/{s}:transcript/chat.jsonl/chunks"),
        ],
    );
    assert_eq!(chunks.lines().count(), 4, "one chunk per growth: {chunks}");
    // A rewritten file is stored whole again.
    std::fs::write(&t, b"rewritten\n").unwrap();
    w.ok(&["--session", &s, "step", "--transcript", t.to_str().unwrap()]);
    let out = w.run(&["--session", &s, "resume", "--transcript", "chat.jsonl"]);
    assert_eq!(out.stdout, b"rewritten\n");
    let out = w.run(&["--session", &s, "resume", "--transcript", "nope"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        format!("error: session '{s}' holds no transcript 'nope'\nhint: it holds: chat.jsonl\n")
    );
}

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

/// SIGKILL the recording process at random points; after each kill the store is sound, nothing
/// wedges, the map is the state before or after the killed command, and every file recorded
/// before the kill is still guarded. `STELLA_CRASH_KILLS` sets the count (the long run: 1000).
///
/// One test, not several: a loop of kills, each checked against the state the ones before left.
#[test]
fn crash_test_kills_recorders_at_random_points() {
    let kills: u64 = std::env::var("STELLA_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let w = World::new();
    let s = w.start();
    let t = w.base().join("transcript");
    std::fs::write(&t, vec![b'y'; 1 << 20]).unwrap();
    let mut recorded: Vec<String> = Vec::new();
    let mut seed: u64 = 0x9e3779b97f4a7c15;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let status_paths = |w: &World| -> Vec<String> {
        let v: serde_json::Value =
            serde_json::from_str(&w.ok(&["--session", &s, "status", "--json"])).unwrap();
        v["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["path"].as_str().unwrap().to_owned())
            .collect()
    };
    let mut landed = 0;
    let mut landed_paths = 0;
    // The session reads a file before any kill, and keeps reading between kills, so every kill
    // lands on a session with recorded files to protect.
    w.write("first", "read before any kill\n");
    w.ok(&["--session", &s, "read", "first"]);
    recorded.push("first".to_owned());
    for i in 0..kills {
        if rand() % 3 == 0 {
            let name = format!("kept{i:04}");
            w.write(&name, &format!("kept {i}\n"));
            w.ok(&["--session", &s, "read", &name]);
            recorded.push(name);
        }
        let before = status_paths(&w);
        let name = format!("f{i:04}");
        w.write(&name, &format!("content {i}\n").repeat(20_000));
        let args: Vec<String> = match rand() % 5 {
            0 | 1 => vec!["read".into(), name.clone()],
            2 => vec!["wrote".into(), name.clone()],
            3 => vec![
                "step".into(),
                "--transcript".into(),
                t.to_str().unwrap().into(),
            ],
            _ => vec!["turn".into(), "begin".into()],
        };
        let records_path = args[0] == "read" || args[0] == "wrote";
        let mut child = w
            .stella()
            .arg("--session")
            .arg(&s)
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_micros(rand() % 60_000));
        let _ = child.kill();
        let status = child.wait().unwrap();
        if status.success() {
            landed += 1;
        }
        // The store is sound and nothing wedges the next command.
        w.store_git(&["fsck", "--no-dangling"]);
        let after = status_paths(&w);
        let mut expected_after = before.clone();
        if records_path {
            expected_after.push(name.clone());
            expected_after.sort();
        }
        assert!(
            after == before || after == expected_after,
            "kill {i} left a mixed map: {after:?}"
        );
        if after.contains(&name) {
            recorded.push(name.clone());
            landed_paths += 1;
        }
        // Every file recorded so far is still guarded: an outside edit is refused.
        let p = recorded[(rand() as usize) % recorded.len()].clone();
        let original = w.read(&p);
        w.write(&p, "outside edit\n");
        assert_eq!(
            code(&w.run(&["--session", &s, "guard", &p])),
            1,
            "kill {i}: {p} unguarded"
        );
        w.write(&p, &original);
        assert_eq!(code(&w.run(&["--session", &s, "guard", &p])), 0);
    }
    for p in &recorded {
        w.write(p, "outside edit\n");
    }
    let out = w.run(
        &["--session", &s, "guard"]
            .iter()
            .copied()
            .chain(recorded.iter().map(String::as_str))
            .collect::<Vec<_>>(),
    );
    assert_eq!(code(&out), 1);
    let refusals = stderr(&out).matches("refusing to write: ").count();
    assert_eq!(refusals, recorded.len());
    eprintln!(
        "{kills} kills, {landed} commands finished before their kill, {landed_paths} killed reads/wrotes landed, {} files guarded",
        recorded.len()
    );
}
