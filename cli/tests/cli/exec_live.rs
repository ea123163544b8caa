//! The shell guard journals a running command as it goes: a whole agent under `exec` shows in
//! `status`, a killed supervisor loses at most the last moment, a host's SIGTERM still records
//! everything, retention leaves a running command's session alone, and every change the command
//! makes is checked, its own earlier ones included.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

fn guarded_world() -> Option<(World, String)> {
    let w = World::new();
    if !guarded_here(&w) {
        return None;
    }
    let s = w.start();
    w.write("f", "one\n");
    Some((w, s))
}

/// `git stella --session S exec -- sh -c SCRIPT`, started in the background.
fn spawn_sh(w: &World, s: &str, script: &str) -> Child {
    w.stella()
        .args(["--session", s, "exec", "--", "sh", "-c", script])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Wait until `path` exists (a command's "ready" mark), at most 20 s.
fn wait_for(path: &std::path::Path) {
    let start = Instant::now();
    while !path.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{} never came",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn status(w: &World, s: &str) -> String {
    w.ok(&["--session", s, "status"])
}

#[test]
fn a_killed_supervisor_loses_nothing_older_than_a_moment() {
    let Some((w, s)) = guarded_world() else {
        return;
    };
    let mut child = spawn_sh(&w, &s, "cat f > /dev/null; echo made > g; sleep 5");
    std::thread::sleep(Duration::from_secs(2));
    // While it runs, the session already shows what it did.
    assert_eq!(status(&w, &s), "unchanged  f\nunchanged  g");
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(status(&w, &s), "unchanged  f\nunchanged  g");
    let log = w.ok(&["--session", &s, "log"]);
    assert!(log.contains("exec sh -c cat f"), "{log}");
}

#[test]
fn a_hosts_sigterm_ends_the_command_and_records_everything() {
    let Some((w, s)) = guarded_world() else {
        return;
    };
    let ready = w.home.join("ready");
    let script = format!(
        "cat f > /dev/null; echo made > g; : > '{}'; sleep 30; echo never > h",
        ready.display()
    );
    let started = Instant::now();
    let child = spawn_sh(&w, &s, &script);
    wait_for(&ready);
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the command was not ended"
    );
    // The command died of the signal, as a shell reports it.
    assert_eq!(code(&out), 128 + libc::SIGTERM, "{}", stderr(&out));
    assert_eq!(status(&w, &s), "unchanged  f\nunchanged  g");
    assert!(!w.repo.join("h").exists());
}

/// A process the command forked that has made no guarded call yet (here a forked Python that
/// only sleeps) is the command's too: a host's SIGTERM reaches it, found by the process tree,
/// and nothing of the command is left holding its output.
#[test]
fn a_hosts_sigterm_reaches_a_forked_process_the_guard_has_not_seen_yet() {
    let Some((w, s)) = guarded_world() else {
        return;
    };
    let ready = w.home.join("ready");
    let script = format!(
        "import os, time\nopen('f').read()\nif os.fork() == 0:\n    time.sleep(30)\nelse:\n    open('{}', 'w').close()\n    time.sleep(30)\n",
        ready.display()
    );
    let started = Instant::now();
    let child = w
        .stella()
        .args(["--session", &s, "exec", "--", "python3", "-c", &script])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&ready);
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "a process of the command outlived it, holding its output"
    );
    assert_eq!(code(&out), 128 + libc::SIGTERM, "{}", stderr(&out));
}

#[test]
fn retention_never_drops_the_session_of_a_running_command() {
    let Some((w, s)) = guarded_world() else {
        return;
    };
    let ready = w.home.join("ready");
    let mut child = spawn_sh(&w, &s, &format!(": > '{}'; sleep 4", ready.display()));
    wait_for(&ready);
    std::thread::sleep(Duration::from_millis(1100));
    let out = w.run(&["session", "prune", "--older-than", "1s"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let listed = w.ok(&["status", "--all"]);
    assert!(
        listed.contains(&s),
        "the running command's session was pruned: {listed}"
    );
    child.wait().unwrap();
    // Once it ends, it is an old session like any other.
    std::thread::sleep(Duration::from_millis(1100));
    w.ok(&["session", "prune", "--older-than", "1s"]);
    assert!(!w.ok(&["status", "--all"]).contains(&s));
}

#[test]
fn a_later_write_of_a_file_the_command_wrote_is_checked_too() {
    let Some((w, s)) = guarded_world() else {
        return;
    };
    let ready = w.home.join("ready");
    let go = w.home.join("go");
    // The command writes f, someone else changes it, then the command writes it again.
    let script = format!(
        "echo mine > f; : > '{}'; while [ ! -e '{}' ]; do sleep 0.01; done; echo again > f",
        ready.display(),
        go.display()
    );
    let child = spawn_sh(&w, &s, &script);
    wait_for(&ready);
    w.write("f", "theirs\n");
    std::fs::write(&go, "").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        stderr(&out).contains("refusing to write: f\n"),
        "{}",
        stderr(&out)
    );
    assert_eq!(w.read("f"), "theirs\n");
    // Their bytes are not the session's own write: it must read them first.
    assert_eq!(status(&w, &s), "changed    f");

    // With nobody in between, a command rewrites its own file as often as it likes.
    let out = w.run(&[
        "--session",
        &s,
        "exec",
        "--",
        "sh",
        "-c",
        "cat f >/dev/null; echo 1 > f; sed -i s/1/2/ f; echo 3 >> f; sed -i s/2/4/ f",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(w.read("f"), "4\n3\n");
    assert_eq!(status(&w, &s), "unchanged  f");
}

#[test]
fn a_refusal_names_the_running_command_that_wrote_the_file() {
    let Some((w, s)) = guarded_world() else {
        return;
    };
    let other = w.start();
    w.ok(&["--session", &other, "read", "f"]);
    let ready = w.home.join("ready");
    let mut child = spawn_sh(
        &w,
        &s,
        &format!("echo mine > f; : > '{}'; sleep 3", ready.display()),
    );
    wait_for(&ready);
    std::thread::sleep(Duration::from_millis(1200));
    let mut write = w.stella();
    let out = feed(
        {
            write.args(["--session", &other, "write", "f"]);
            write
        },
        b"theirs\n",
    );
    child.wait().unwrap();
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "f changed since this session last read it: session {s} wrote it at"
        )),
        "{}",
        stderr(&out)
    );
    assert_eq!(w.read("f"), "mine\n");
}

#[test]
fn a_huge_sparse_file_costs_the_open_nothing_and_a_large_read_still_arms_the_guard() {
    let Some((w, s)) = guarded_world() else {
        return;
    };
    // 1 TiB of holes: hashing it would take minutes.
    let huge = std::fs::File::create(w.repo.join("huge")).unwrap();
    huge.set_len(1 << 40).unwrap();
    let started = Instant::now();
    let out = w.run(&["--session", &s, "exec", "--", "head", "-c1", "huge"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the command waited on the digest: {:?}",
        started.elapsed()
    );
    // What could not be hashed in time tells the session nothing.
    assert!(!status(&w, &s).contains("huge"), "{}", status(&w, &s));

    // A large file is hashed off the call path, and its read still counts.
    let big: String = "0123456789abcdef\n".repeat(1 << 20);
    w.write("big", &big);
    let out = w.run(&["--session", &s, "exec", "--", "sh", "-c", "tail -c 17 big"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        status(&w, &s).contains("unchanged  big"),
        "{}",
        status(&w, &s)
    );
    w.write("big", "theirs\n");
    let out = w.run(&["--session", &s, "exec", "--", "sh", "-c", "echo mine > big"]);
    assert!(
        stderr(&out).contains("refusing to write: big\n"),
        "{}",
        stderr(&out)
    );
    assert_eq!(w.read("big"), "theirs\n");
}

#[test]
fn a_full_store_while_the_command_runs_is_said_once_and_fails_the_end() {
    let Some((w, _)) = guarded_world() else {
        return;
    };
    if !can_mount_tmpfs() {
        return;
    }
    // In one mount namespace: the store on a small tmpfs, filled once the session exists; the
    // command runs long enough for its steps to be tried while it runs.
    let script = r#"
set -u
mkdir -p "$STELLA_HOME" && mount -t tmpfs -o size=1m tmpfs "$STELLA_HOME" || exit 90
"$BIN" session start --id s >/dev/null || exit 91
dd if=/dev/zero of="$STELLA_HOME/filler" bs=4k 2>/dev/null
"$BIN" --session s exec -- sh -c 'cat f >/dev/null; echo made > g; sleep 2.5'; echo "exec=$?"
rm "$STELLA_HOME/filler"
git --git-dir "$("$BIN" store-path)" fsck --no-progress 2>&1 && echo "fsck=ok"
"$BIN" --session s exec -- sh -c 'cat f >/dev/null'; echo "after=$?"
"$BIN" --session s status
"#;
    let out = sh_unshared(&w, script, &[]);
    let (text, errors) = (stdout(&out), stderr(&out));
    assert!(text.contains("exec=125\n"), "{text}\n{errors}");
    assert_eq!(
        errors.matches("trying again").count(),
        1,
        "said once while it ran: {errors}"
    );
    assert!(
        errors
            .contains("'sh' ran (exit status 0), but what it read and wrote could not be recorded"),
        "{errors}"
    );
    assert!(errors.contains("No space left on device"), "{errors}");
    assert!(text.contains("fsck=ok\n"), "{text}\n{errors}");
    assert!(text.contains("after=0\n"), "{text}\n{errors}");
    // The write it could not record is not the session's: a re-read is needed.
    assert!(text.contains("unchanged  f\n"), "{text}");
    assert!(!text.contains("unchanged  g"), "{text}");
}

/// A command that keeps reading many files is journaled in fewer, larger steps as it goes (each
/// large step is a pack of its own), and every file it read is recorded.
#[test]
fn a_bulk_command_is_journaled_in_few_packs() {
    let Some((w, s)) = guarded_world() else {
        return;
    };
    for d in 0..16 {
        for f in 0..100 {
            w.write(&format!("d{d}/f{f}"), &format!("{d} {f}\n"));
        }
    }
    let packs = || {
        std::fs::read_dir(w.store().join("objects/pack"))
            .map(|d| {
                d.filter(|e| {
                    e.as_ref()
                        .is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".pack"))
                })
                .count()
            })
            .unwrap_or(0)
    };
    let before = packs();
    // About five seconds of reading 100 new files every quarter second: a step every half
    // second would write eight packs or more.
    let out = w
        .stella()
        .args(["--session", &s, "exec", "--", "sh", "-c"])
        .arg("for d in $(seq 0 15); do cat d$d/* > /dev/null; sleep 0.3; done")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let written = packs() - before;
    assert!(
        (1..=5).contains(&written),
        "{written} packs for one bulk command"
    );
    let status = status(&w, &s);
    assert_eq!(status.lines().filter(|l| l.contains(" d")).count(), 1600);
}
