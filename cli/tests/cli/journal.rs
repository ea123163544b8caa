//! The journal store: plain git reads it, concurrent writers lose nothing, a killed writer
//! wedges nothing.
//!
//! Not per command: every command records through the journal, and these check the store itself
//! (its format, concurrent writers, killed writers and the crash test's loop of kills).

use std::process::Stdio;

use crate::common::*;

#[test]
fn plain_git_reads_the_session_history() {
    let w = World::new();
    let s = w.start();
    w.write("src/a.rs", "fn main() {}\n");
    w.ok(&["--session", &s, "read", "src/a.rs"]);
    w.write("src/a.rs", "fn main() { run() }\n");
    w.ok(&["--session", &s, "wrote", "src/a.rs"]);
    let log = w.store_git(&["log", "--format=%s", &format!("refs/stella/sessions/{s}")]);
    assert_eq!(log, "wrote src/a.rs\nread src/a.rs\nsession start");
    let reflog = w.store_git(&[
        "reflog",
        "show",
        "--format=%gs",
        &format!("refs/stella/sessions/{s}"),
    ]);
    assert_eq!(reflog.lines().count(), 3, "{reflog}");
    w.store_git(&["fsck", "--strict"]);
    let ours = w.ok(&["log", &s]);
    let lines: Vec<&str> = ours.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0].ends_with(" wrote src/a.rs"), "{ours}");
    assert!(lines[2].ends_with(" session start"), "{ours}");
}

#[test]
fn sixteen_concurrent_writers_lose_no_step() {
    let w = World::new();
    let s = w.start();
    for i in 0..16 {
        w.write(&format!("f{i}"), &format!("{i}"));
    }
    let children: Vec<_> = (0..16)
        .map(|i| {
            w.stella()
                .args(["--session", &s, "read", &format!("f{i}")])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert_eq!(w.steps(&s), 17);
    let show = w.ok(&["session", "show", &s, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&show).unwrap();
    assert_eq!(v["tracked_count"], 16);
    assert_eq!(v["step_count"], 17);
}

#[test]
fn a_killed_writer_leaves_a_store_the_next_command_uses() {
    let w = World::new();
    let s = w.start();
    w.write("big", &"x".repeat(4 << 20));
    let mut killed = 0;
    for i in 0..20u64 {
        let mut child = w
            .stella()
            .args(["--session", &s, "read", "big"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2 + (i * 7) % 25));
        if child.try_wait().unwrap().is_none() {
            killed += 1;
        }
        child.kill().unwrap();
        child.wait().unwrap();
        w.store_git(&["fsck", "--no-dangling"]);
        // A lock file a dead writer left must not wedge the next one.
        let store = w.store();
        std::fs::write(store.join(format!("refs/stella/sessions/{s}.lock")), "junk").unwrap();
        w.write("small", &format!("{i}"));
        w.ok(&["--session", &s, "read", "small"]);
    }
    assert!(killed > 0, "no kill landed while the writer ran");
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
