//! `git stella step`: a step records the host's transcript verbatim, storing only what was
//! appended, and `resume --transcript` reads it back whole.

use crate::common::*;

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
