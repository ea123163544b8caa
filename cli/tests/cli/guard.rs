//! The guard's decision table, end to end, with the exact text a model and a person read.

use std::process::Stdio;

use crate::common::*;

fn session(w: &World) -> String {
    w.start()
}

#[test]
fn a_persons_edit_between_read_and_write_is_refused_with_the_full_message() {
    let w = World::new();
    let s = session(&w);
    w.write("notes.txt", "alpha\nbeta\ngamma\n");
    w.ok(&["--session", &s, "read", "notes.txt"]);
    w.write("notes.txt", "alpha\nbetamax\ngamma\n");

    let out = w.run_stdin(
        &["--session", &s, "write", "notes.txt"],
        b"alpha\nBETA\ngamma\n",
    );
    assert_eq!(code(&out), 1);
    assert_eq!(stdout(&out), "");
    assert_eq!(
        stderr(&out),
        "refusing to write: notes.txt\n\
         notes.txt changed since this session last read it: another process or a person edited it after this session looked.\n\
         This write would overwrite their work with a plan formed against content that no longer exists.\n\
         Nothing was written. To recover, re-read notes.txt and redo the change against what is there now.\n\
         --- notes.txt (seen by this session)\n\
         +++ notes.txt (on disk now)\n\
         @@ -1,3 +1,3 @@\n\
         \x20alpha\n\
         -beta\n\
         +betamax\n\
         \x20gamma\n"
    );
    assert_eq!(w.read("notes.txt"), "alpha\nbetamax\ngamma\n");
    // The same refusal from the pre-write check, and the full diff on request.
    let out = w.run(&["--session", &s, "guard", "notes.txt"]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).starts_with("refusing to write: notes.txt\n"));
    let diff = w.ok(&["--session", &s, "diff", "notes.txt"]);
    assert!(diff.contains("-beta\n+betamax"), "{diff}");
    // Re-read, then the write passes.
    w.ok(&["--session", &s, "read", "notes.txt"]);
    let out = w.run_stdin(
        &["--session", &s, "write", "notes.txt"],
        b"alpha\nBETAMAX\ngamma\n",
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(w.read("notes.txt"), "alpha\nBETAMAX\ngamma\n");
}

#[test]
fn never_read_files_and_creates_pass() {
    let w = World::new();
    let s = session(&w);
    w.write("other.txt", "someone's\n");
    assert_eq!(code(&w.run(&["--session", &s, "guard", "other.txt"])), 0);
    assert_eq!(
        code(&w.run(&["--session", &s, "guard", "--delete", "other.txt"])),
        0
    );
    assert_eq!(code(&w.run(&["--session", &s, "guard", "new/file.txt"])), 0);
    let out = w.run_stdin(
        &["--session", &s, "write", "new/deep/file.txt"],
        b"created\n",
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(w.read("new/deep/file.txt"), "created\n");
}

#[test]
fn an_unreadable_path_passes_the_guard() {
    let w = World::new();
    let s = session(&w);
    w.write("f", "x");
    w.ok(&["--session", &s, "read", "f"]);
    // A tracked file replaced by a folder cannot be read: the tool's own error says it better.
    std::fs::remove_file(w.repo.join("f")).unwrap();
    std::fs::create_dir(w.repo.join("f")).unwrap();
    let out = w.run(&["--session", &s, "guard", "f", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(v["checks"][0]["decision"], "allow");
    assert_eq!(v["checks"][0]["reason"], "unreadable");
    // A write over it fails with the read error, never a blind replace.
    let out = w.run_stdin(&["--session", &s, "write", "f"], b"y");
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).starts_with("error: could not read 'f'\n"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_file_that_cannot_be_opened_passes_the_guard() {
    let w = World::new();
    let s = session(&w);
    w.write("f", "x");
    w.ok(&["--session", &s, "read", "f"]);
    let path = w.repo.join("f");
    let _listener = if unsafe_is_root() {
        // Root reads through mode 000; a socket in the file's place cannot be opened by anyone.
        std::fs::remove_file(&path).unwrap();
        Some(std::os::unix::net::UnixListener::bind(&path).unwrap())
    } else {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
        None
    };
    let out = w.run(&["--session", &s, "guard", "f", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(v["checks"][0]["reason"], "unreadable");
}

fn unsafe_is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

#[test]
fn a_delete_under_the_session_is_a_conflict_for_a_write_not_for_a_delete() {
    let w = World::new();
    let s = session(&w);
    w.write("gone.txt", "bytes\n");
    w.ok(&["--session", &s, "read", "gone.txt"]);
    std::fs::remove_file(w.repo.join("gone.txt")).unwrap();
    let out = w.run_stdin(&["--session", &s, "write", "gone.txt"], b"again\n");
    assert_eq!(code(&out), 1);
    assert_eq!(
        stderr(&out),
        "refusing to write: gone.txt\n\
         gone.txt was deleted since this session last read it: another agent or a person removed it after this session looked.\n\
         This write would re-create it from a plan formed against content that no longer exists.\n\
         Nothing was written. To recover, find out why gone.txt was removed; if it should exist again, record that this session saw the deletion ('git stella wrote gone.txt') and create it anew.\n"
    );
    assert!(!w.repo.join("gone.txt").exists());
    // Deleting what is already gone reaches the state asked for.
    assert_eq!(
        code(&w.run(&["--session", &s, "guard", "--delete", "gone.txt"])),
        0
    );
    assert_eq!(code(&w.run(&["--session", &s, "rm", "gone.txt"])), 0);
    // The entry is gone, so the re-create passes.
    let out = w.run_stdin(&["--session", &s, "write", "gone.txt"], b"again\n");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn a_stale_delete_is_refused_and_deletes_nothing() {
    let w = World::new();
    let s = session(&w);
    w.write("a", "a\n");
    w.write("b", "b\n");
    w.ok(&["--session", &s, "read", "a", "b"]);
    w.write("b", "b changed\n");
    let out = w.run(&["--session", &s, "rm", "a", "b"]);
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).starts_with(
            "refusing to delete: b\n\
             b changed since this session last read it: another process or a person edited it after this session looked.\n\
             Deleting it would overwrite their work with a plan formed against content that no longer exists.\n\
             Nothing was deleted. To recover, re-read b and decide again against what is there now.\n"
        ),
        "{}",
        stderr(&out)
    );
    assert!(w.repo.join("a").exists() && w.repo.join("b").exists());
    w.ok(&["--session", &s, "read", "b"]);
    w.ok(&["--session", &s, "rm", "a", "b"]);
    assert!(!w.repo.join("a").exists() && !w.repo.join("b").exists());
    let status = w.ok(&["--session", &s, "status"]);
    assert_eq!(status, "");
    w.write("b", "new b\n");
    assert_eq!(code(&w.run(&["--session", &s, "guard", "b"])), 0);
}

#[test]
fn an_if_match_write_passes() {
    let w = World::new();
    let s = session(&w);
    w.write("f", "old\n");
    w.ok(&["--session", &s, "read", "f"]);
    w.write("f", "new\n");
    // Someone already wrote exactly these bytes: nothing would be lost.
    let out = w.run_stdin(&["--session", &s, "write", "f"], b"new\n");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let content = w.base().join("content");
    std::fs::write(&content, "new\n").unwrap();
    let out = w.run(&[
        "--session",
        &s,
        "guard",
        "f",
        "--content",
        content.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0);
}

#[test]
fn two_sessions_on_one_file() {
    let w = World::new();
    let a = session(&w);
    let b = session(&w);
    w.write("shared.rs", "v1\n");
    w.ok(&["--session", &a, "read", "shared.rs"]);
    w.ok(&["--session", &b, "read", "shared.rs"]);
    let out = w.run_stdin(&["--session", &b, "write", "shared.rs"], b"v2 by b\n");
    assert_eq!(code(&out), 0);
    let before = std::time::SystemTime::now();
    let out = w.run_stdin(&["--session", &a, "write", "shared.rs"], b"v2 by a\n");
    assert_eq!(code(&out), 1);
    // The refusal names the session that wrote the bytes now on disk, and when.
    let err = stderr(&out);
    let second = err.lines().nth(1).unwrap();
    let (head, tail) = second
        .split_once(" UTC, ")
        .unwrap_or_else(|| panic!("{err}"));
    let prefix =
        format!("shared.rs changed since this session last read it: session {b} wrote it at ");
    assert!(head.starts_with(&prefix), "{err}");
    let clock = &head[prefix.len()..];
    let secs = before
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let expect = |s: u64| {
        let d = s % 86_400;
        format!("{:02}:{:02}:{:02}", d / 3600, d / 60 % 60, d % 60)
    };
    // Written within the last few seconds (the clock may tick between the write and now).
    assert!(
        (0..5).any(|back| clock.ends_with(&expect(secs - back))),
        "{clock} vs {}",
        expect(secs)
    );
    assert_eq!(tail, "after this session looked.", "{err}");
    assert!(err.starts_with("refusing to write: shared.rs\n"));
    assert_eq!(w.read("shared.rs"), "v2 by b\n");

    // A person's edit is nobody the journal knows.
    w.write("shared.rs", "v2 by a person\n");
    let out = w.run_stdin(&["--session", &b, "write", "shared.rs"], b"v3 by b\n");
    assert_eq!(code(&out), 1);
    assert_eq!(
        stderr(&out).lines().nth(1).unwrap(),
        "shared.rs changed since this session last read it: another process or a person edited it after this session looked."
    );
    w.write("shared.rs", "v2 by b\n");
    w.ok(&["--session", &a, "read", "shared.rs"]);
    let out = w.run_stdin(
        &["--session", &a, "write", "shared.rs"],
        b"v3 by a on top of b\n",
    );
    assert_eq!(code(&out), 0);
    assert_eq!(w.read("shared.rs"), "v3 by a on top of b\n");
}

#[test]
fn every_stale_path_is_named_and_json_says_why() {
    let w = World::new();
    let s = session(&w);
    for f in ["x", "y", "z"] {
        w.write(f, f);
    }
    w.ok(&["--session", &s, "read", "x", "y", "z"]);
    w.write("x", "X");
    w.write("z", "Z");
    let out = w.run(&["--session", &s, "guard", "x", "y", "z", "--json"]);
    assert_eq!(code(&out), 1);
    let err = stderr(&out);
    assert!(err.contains("refusing to write: x\n") && err.contains("refusing to write: z\n"));
    assert!(!err.contains("refusing to write: y"));
    // One object, on one line.
    assert_eq!(stdout(&out).lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["session"], s.as_str());
    let lines = v["checks"].as_array().unwrap();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["path"], "x");
    assert_eq!(lines[0]["decision"], "refuse");
    assert_eq!(lines[0]["reason"], "changed");
    assert_eq!(lines[1]["decision"], "allow");
    assert_eq!(lines[1]["reason"], "unchanged");
    assert_eq!(lines[1]["seen"], lines[1]["now"]);
    assert_ne!(lines[0]["seen"], lines[0]["now"]);
}

#[test]
fn status_names_fresh_changed_and_gone() {
    let w = World::new();
    let s = session(&w);
    for f in ["fresh", "changed", "gone"] {
        w.write(f, f);
    }
    w.ok(&["--session", &s, "read", "fresh", "changed", "gone"]);
    w.write("changed", "CHANGED");
    std::fs::remove_file(w.repo.join("gone")).unwrap();
    assert_eq!(
        w.ok(&["--session", &s, "status"]),
        "changed    changed\nunchanged  fresh\ndeleted    gone"
    );
    let v: serde_json::Value =
        serde_json::from_str(&w.ok(&["--session", &s, "status", "--json"])).unwrap();
    assert_eq!(v["files"][0]["state"], "changed");
    assert_eq!(v["files"][2]["state"], "deleted");
    assert_eq!(v["refused_count"], 0);
}

#[test]
fn paths_outside_the_workspace_are_errors() {
    let w = World::new();
    let s = session(&w);
    std::fs::write(w.base().join("outside.txt"), "secret").unwrap();
    std::os::unix::fs::symlink(w.base().join("outside.txt"), w.repo.join("escape")).unwrap();
    for p in ["../outside.txt", "escape"] {
        let out = w.run(&["--session", &s, "read", p]);
        assert_eq!(code(&out), 2, "{p}");
        assert_eq!(
            stderr(&out),
            format!(
                "error: '{p}' is outside the workspace '{}'\n",
                w.repo.display()
            )
        );
    }
    assert_eq!(w.steps(&s), 1, "nothing was journaled");
    // A symlink inside the workspace is hashed as what a read returns, and recorded by target.
    w.write("real.txt", "real\n");
    std::os::unix::fs::symlink("real.txt", w.repo.join("alias")).unwrap();
    w.ok(&["--session", &s, "read", "alias"]);
    assert_eq!(w.ok(&["--session", &s, "status"]), "unchanged  real.txt");
    // Relative to a sub-folder, and absolute.
    std::fs::create_dir(w.repo.join("sub")).unwrap();
    let out = w
        .stella_in(&w.repo.join("sub"))
        .args(["--session", &s, "read", "../README"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let abs = w.repo.join("README");
    w.ok(&["--session", &s, "read", abs.to_str().unwrap()]);
}

#[test]
fn a_refusal_and_an_error_in_one_call_exit_2() {
    let w = World::new();
    let s = session(&w);
    w.write("a", "a");
    w.ok(&["--session", &s, "read", "a"]);
    w.write("a", "A");
    let out = w.run(&["--session", &s, "guard", "a", "../../outside"]);
    assert_eq!(code(&out), 2);
    // A missing file in a read is an error for that path, and nothing is recorded.
    let before = w.steps(&s);
    let out = w.run(&["--session", &s, "read", "a", "missing"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        "error: could not read 'missing'; nothing was recorded\ncaused by: 'missing': No such file or directory (os error 2)\n"
    );
    assert_eq!(w.steps(&s), before);
}

#[test]
fn write_leaves_no_temp_file_and_keeps_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let w = World::new();
    let s = session(&w);
    w.write("run.sh", "#!/bin/sh\n");
    std::fs::set_permissions(
        w.repo.join("run.sh"),
        std::fs::Permissions::from_mode(0o751),
    )
    .unwrap();
    w.ok(&["--session", &s, "read", "run.sh"]);
    let out = w.run_stdin(
        &["--session", &s, "write", "run.sh"],
        b"#!/bin/sh\necho hi\n",
    );
    assert_eq!(code(&out), 0);
    let mode = std::fs::metadata(w.repo.join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o751);
    w.write("run.sh", "changed by someone\n");
    let out = w.run_stdin(&["--session", &s, "write", "run.sh"], b"mine\n");
    assert_eq!(code(&out), 1);
    // Killed mid-write: a large stdin keeps the writer busy.
    for i in 0..10u64 {
        let mut child = w
            .stella()
            .args(["--session", &s, "write", &format!("big{i}")])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            use std::io::Write;
            let chunk = vec![b'x'; 1 << 20];
            for _ in 0..8 {
                if stdin.write_all(&chunk).is_err() {
                    break;
                }
            }
        });
        std::thread::sleep(std::time::Duration::from_millis(5 + i * 3));
        child.kill().unwrap();
        child.wait().unwrap();
        let _ = writer.join();
    }
    // Whatever the temp file would be called: nothing but the files written whole is left.
    let leftovers: Vec<_> = std::fs::read_dir(&w.repo)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| {
            let written = n
                .strip_prefix("big")
                .is_some_and(|i| i.parse::<u64>().is_ok());
            !written && ![".git", ".stella", "README", "run.sh"].contains(&n.as_str())
        })
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn thirty_two_parallel_reads_are_all_recorded() {
    let w = World::new();
    let s = session(&w);
    for i in 0..32 {
        w.write(&format!("p{i:02}"), &format!("{i}"));
    }
    let children: Vec<_> = (0..32)
        .map(|i| {
            w.stella()
                .args(["--session", &s, "read", &format!("p{i:02}")])
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let status = w.ok(&["--session", &s, "status"]);
    assert_eq!(status.lines().count(), 32);
    assert!(status.lines().all(|l| l.starts_with("unchanged")));
}

#[test]
fn wrote_with_content_absorbs_nothing() {
    let w = World::new();
    let s = session(&w);
    let meant = w.base().join("meant");
    std::fs::write(&meant, "what the agent wrote\n").unwrap();
    // Someone wrote after the agent's tool did.
    w.write("f", "someone else's bytes\n");
    let out = w.run(&[
        "--session",
        &s,
        "wrote",
        "f",
        "--content",
        meant.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0);
    assert_eq!(
        stderr(&out),
        "stella: 'f' on disk differs from what was written: someone changed it after the write; recorded what was written, so the next write to it is refused until it is re-read\n"
    );
    assert_eq!(code(&w.run(&["--session", &s, "guard", "f"])), 1);
    // Without --content, wrote records the disk; a vanished path drops out.
    w.ok(&["--session", &s, "wrote", "f"]);
    assert_eq!(code(&w.run(&["--session", &s, "guard", "f"])), 0);
    std::fs::remove_file(w.repo.join("f")).unwrap();
    w.ok(&["--session", &s, "wrote", "f"]);
    assert_eq!(w.ok(&["--session", &s, "status"]), "");
}

#[test]
fn a_long_change_shows_a_bounded_diff() {
    let w = World::new();
    let s = session(&w);
    let before: String = (0..200).map(|i| format!("line {i}\n")).collect();
    let after: String = (0..200).map(|i| format!("LINE {i}\n")).collect();
    w.write("long.txt", &before);
    w.ok(&["--session", &s, "read", "long.txt"]);
    w.write("long.txt", &after);
    let out = w.run(&["--session", &s, "guard", "long.txt"]);
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 4 + 40 + 1, "{err}");
    assert!(err.ends_with("… 363 more lines ('git stella diff long.txt' shows all of it)\n"));
    let full = w.ok(&["--session", &s, "diff", "long.txt"]);
    assert_eq!(full.lines().count(), 403);
    // Binary files are named, not diffed.
    std::fs::write(w.repo.join("bin"), [0u8, 1, 2]).unwrap();
    w.ok(&["--session", &s, "read", "bin"]);
    std::fs::write(w.repo.join("bin"), [0u8, 1, 3]).unwrap();
    let out = w.run(&["--session", &s, "guard", "bin"]);
    assert!(stderr(&out).ends_with("(no diff shown: bin is a binary file)\n"));
}

#[test]
fn a_tracked_file_in_a_folder_this_user_cannot_search_passes_as_unreadable() {
    use std::os::unix::fs::PermissionsExt;
    let w = World::new();
    let s = session(&w);
    w.write("sub/z.txt", "z\n");
    w.ok(&["--session", &s, "read", "sub/z.txt"]);
    let sub = w.repo.join("sub");
    std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o000)).unwrap();
    let mut cmd = held_to_mode_bits(&w);
    let out = cmd
        .args(["--session", &s, "guard", "--json", "sub/z.txt"])
        .output()
        .unwrap();
    std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(v["checks"][0]["path"], "sub/z.txt");
    assert_eq!(v["checks"][0]["reason"], "unreadable");
}
