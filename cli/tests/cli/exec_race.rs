//! Two writers at the same moment: where Stella makes the write, the check and the write it
//! allows are one step. Two guarded commands (or a guarded command and `git stella write`) that
//! both saw a file and write it at once: exactly one wins, the other is refused and writes
//! nothing, every time.
//!
//! To make "at once" certain rather than lucky, the test holds the folder hold every Stella
//! writer takes (an `flock` on the file's folder) while both writers start, so both wait at the
//! same point, then lets go.

use std::os::fd::AsRawFd;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use crate::common::*;

/// The folder hold Stella's writers take on `dir`, held by the test until dropped.
struct Held {
    _file: std::fs::File,
}

impl Held {
    fn take(dir: &std::path::Path) -> Held {
        let f = std::fs::File::open(dir).unwrap();
        // SAFETY: a valid descriptor.
        assert_eq!(unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) }, 0);
        Held { _file: f }
    }
}

fn spawn(mut cmd: Command) -> Child {
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn exec_sh(w: &World, s: &str, script: &str) -> Child {
    let mut cmd = w.stella();
    cmd.args(["--session", s, "exec", "--", "sh", "-c", script]);
    spawn(cmd)
}

fn cli_write(w: &World, s: &str, path: &str, bytes: &str) -> Child {
    let mut cmd = w.stella();
    cmd.args(["--session", s, "write", path])
        .stdin(Stdio::piped());
    let mut child = spawn(cmd);
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(bytes.as_bytes())
        .unwrap();
    child
}

/// Both writers start while the hold is taken, then race for it.
fn race(w: &World, start: impl FnOnce() -> [Child; 2]) -> [Output; 2] {
    let held = Held::take(&w.repo);
    let children = start();
    // Long enough for both to reach the hold on a busy machine; either way they overlap.
    std::thread::sleep(Duration::from_millis(400));
    drop(held);
    children.map(|c| c.wait_with_output().unwrap())
}

/// Exactly one of the two writes happened: the other was refused, naming the file, and the file
/// holds the winner's bytes.
fn exactly_one_won(w: &World, outs: &[Output; 2], bytes: [&str; 2], round: usize) {
    let won: Vec<usize> = (0..2).filter(|i| code(&outs[*i]) == 0).collect();
    assert_eq!(
        won.len(),
        1,
        "round {round}: exactly one writer must win: {:?} / {:?}",
        stderr(&outs[0]),
        stderr(&outs[1])
    );
    let (winner, loser) = (won[0], 1 - won[0]);
    assert!(
        stderr(&outs[loser]).contains("refusing to write: f"),
        "round {round}: the loser is told why: {}",
        stderr(&outs[loser])
    );
    assert_eq!(w.read("f"), bytes[winner], "round {round}");
}

fn two_sessions_that_read_f(w: &World, round: usize) -> (String, String) {
    w.write("f", &format!("base {round}\n"));
    let (a, b) = (w.start(), w.start());
    w.ok(&["--session", &a, "read", "f"]);
    w.ok(&["--session", &b, "read", "f"]);
    (a, b)
}

#[test]
fn two_guarded_commands_writing_what_both_saw_exactly_one_wins() {
    let w = World::new();
    if !guarded_here(&w) {
        return;
    }
    for round in 0..8 {
        let (a, b) = two_sessions_that_read_f(&w, round);
        // A truncating write, then a tool's temporary file renamed over the file.
        let script = |who: &str| match round % 2 {
            0 => format!("printf '{who}\\n' > f"),
            _ => format!("printf '{who}\\n' > f.{who} && mv f.{who} f"),
        };
        let outs = race(&w, || {
            [exec_sh(&w, &a, &script("A")), exec_sh(&w, &b, &script("B"))]
        });
        exactly_one_won(&w, &outs, ["A\n", "B\n"], round);
        let _ = std::fs::remove_file(w.repo.join("f.A"));
        let _ = std::fs::remove_file(w.repo.join("f.B"));
    }
}

#[test]
fn a_guarded_command_and_a_guarded_write_at_once_exactly_one_wins() {
    let w = World::new();
    if !guarded_here(&w) {
        return;
    }
    for round in 0..6 {
        let (a, b) = two_sessions_that_read_f(&w, round);
        let outs = race(&w, || {
            [
                exec_sh(&w, &a, "printf 'A\\n' > f"),
                cli_write(&w, &b, "f", "B\n"),
            ]
        });
        exactly_one_won(&w, &outs, ["A\n", "B\n"], round);
    }
}

#[test]
fn a_guarded_delete_and_a_guarded_write_at_once_exactly_one_wins() {
    let w = World::new();
    if !guarded_here(&w) {
        return;
    }
    for round in 0..4 {
        let (a, b) = two_sessions_that_read_f(&w, round);
        let outs = race(&w, || {
            [
                exec_sh(&w, &a, "rm f"),
                exec_sh(&w, &b, "printf 'B\\n' > f"),
            ]
        });
        let won: Vec<usize> = (0..2).filter(|i| code(&outs[*i]) == 0).collect();
        assert_eq!(won.len(), 1, "round {round}: {outs:?}");
        match won[0] {
            0 => assert!(!w.repo.join("f").exists(), "round {round}"),
            _ => assert_eq!(w.read("f"), "B\n", "round {round}"),
        }
    }
}

#[test]
fn a_write_the_supervisor_carries_out_is_the_write_the_command_asked_for() {
    let w = World::new();
    if !guarded_here(&w) {
        return;
    }
    let s = w.start();
    w.write("f", "one\ntwo\n");
    w.ok(&["--session", &s, "read", "f"]);
    // Append, then read and write through one descriptor: the open the supervisor made is the
    // caller's (its offset, its mode).
    let script =
        "printf 'three\\n' >> f && exec 3<>f && cat <&3 >/dev/null && printf 'four\\n' >&3";
    let out = w
        .stella()
        .args(["--session", &s, "exec", "--", "sh", "-c", script])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(w.read("f"), "one\ntwo\nthree\nfour\n");
    assert_eq!(w.ok(&["--session", &s, "status"]), "unchanged  f");
    // A file the session knows is gone, made again: with the caller's umask, not Stella's.
    let out = w
        .stella()
        .args(["--session", &s, "exec", "--", "rm", "f"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let script =
        "umask 077 && printf x > f && stat -c %a f && umask 002 && printf y > g && stat -c %a g";
    let out = w
        .stella()
        .args(["--session", &s, "exec", "--", "sh", "-c", script])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "600\n664\n");
    assert_eq!(w.read("f"), "x");
    assert_eq!(
        w.ok(&["--session", &s, "status"]),
        "unchanged  f\nunchanged  g"
    );
}

/// Sessions a and b, both of which may read notes.txt, and a command of a's that truncated it
/// and takes a second to write it, caught mid-write (the file empty); `None` where this machine
/// cannot guard a command.
fn a_writes_slowly() -> Option<(World, Child)> {
    let w = World::new();
    if !guarded_here(&w) {
        return None;
    }
    w.write("notes.txt", "original\n");
    w.ok(&["session", "start", "--id", "a"]);
    w.ok(&["session", "start", "--id", "b"]);
    w.ok(&["--session", "a", "read", "notes.txt"]);
    let a = exec_sh(
        &w,
        "a",
        "exec 3>notes.txt; sleep 1; printf 'written by a\\n' >&3",
    );
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(w.read("notes.txt"), "", "a is mid-write");
    Some((w, a))
}

/// A command writing a file in place leaves it empty or half written until it is done. Another
/// session that read it in that moment knows bytes nobody meant, and its write must not count
/// them as the file: every Stella writer's check waits for the command to finish writing (the
/// shell guard marks a file it opens for a command with an `flock` until the command closes
/// it), then compares, and refuses.
#[test]
fn a_file_a_command_is_still_writing_is_compared_once_it_is_written() {
    let Some((w, a)) = a_writes_slowly() else {
        return;
    };
    // B reads it in that moment (it is empty), and writes on what it read.
    w.ok(&["--session", "b", "read", "notes.txt"]);
    let b = w.run_stdin(&["--session", "b", "write", "notes.txt"], b"written by b\n");
    let a = a.wait_with_output().unwrap();
    assert!(a.status.success(), "{}", stderr(&a));
    assert_eq!(code(&b), 1, "b's write is refused: {}", stderr(&b));
    assert!(
        stderr(&b).contains("refusing to write: notes.txt"),
        "{}",
        stderr(&b)
    );
    assert_eq!(w.read("notes.txt"), "written by a\n");
}

/// The same under the shell guard on both sides: a guarded command's change of a file another
/// guarded command is still writing waits for that one to finish, then is compared with what
/// it wrote, and refused. The check waits and hashes through the folder it holds for the
/// change.
#[test]
fn a_guarded_change_of_a_file_another_command_is_still_writing_waits_and_is_refused() {
    let Some((w, a)) = a_writes_slowly() else {
        return;
    };
    // B reads the empty file, then rewrites it, each under its own guard, while A still writes.
    let read = exec_sh(&w, "b", "cat notes.txt")
        .wait_with_output()
        .unwrap();
    assert!(read.status.success(), "{}", stderr(&read));
    let b = exec_sh(&w, "b", "printf 'written by b\\n' > notes.txt");
    let b = b.wait_with_output().unwrap();
    let a = a.wait_with_output().unwrap();
    assert!(a.status.success(), "{}", stderr(&a));
    assert!(!b.status.success(), "b's change is refused: {}", stderr(&b));
    assert!(
        stderr(&b).contains("refusing to write: notes.txt"),
        "{}",
        stderr(&b)
    );
    assert_eq!(w.read("notes.txt"), "written by a\n");
}
