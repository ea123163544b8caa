//! `git stella undo`: put back what was there before a session's first write, through the guard.

use crate::common::*;

#[test]
fn undo_restores_what_nobody_touched_refuses_what_someone_did_and_can_be_undone() {
    let w = World::new();
    w.ok(&["session", "start", "--id", "s"]);
    w.write("read-first.txt", "one\n");
    w.write("blind.txt", "two\n");
    w.write("theirs.txt", "three\n");
    w.ok(&["--session", "s", "read", "read-first.txt", "theirs.txt"]);
    for (path, bytes) in [
        ("read-first.txt", "ONE\n"),
        ("read-first.txt", "ONE again\n"),
        ("blind.txt", "TWO\n"),
        ("theirs.txt", "THREE\n"),
        ("created.txt", "new\n"),
    ] {
        let out = w.run_stdin(&["--session", "s", "write", path], bytes.as_bytes());
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    // Someone edits one of the files after the session's last write.
    w.write("theirs.txt", "THREE, and their line\n");

    let out = w.run(&["--session", "s", "undo"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let id = |b: &str| b3(b.as_bytes())[..12].to_owned();
    assert_eq!(
        stdout(&out),
        format!(
            "restored blind.txt (version {})\nremoved created.txt (the session created it)\nrestored read-first.txt (version {})\n",
            id("two\n"),
            id("one\n")
        )
    );
    assert_eq!(
        stderr(&out),
        "refusing to write: theirs.txt\n\
         theirs.txt changed since this session last read it: another process or a person edited it after this session looked.\n\
         This write would overwrite their work with a plan formed against content that no longer exists.\n\
         Nothing was written. To recover, re-read theirs.txt and redo the change against what is there now.\n\
         --- theirs.txt (seen by this session)\n\
         +++ theirs.txt (on disk now)\n\
         @@ -1 +1 @@\n\
         -THREE\n\
         +THREE, and their line\n"
    );
    assert_eq!(w.read("read-first.txt"), "one\n");
    assert_eq!(w.read("blind.txt"), "two\n");
    assert_eq!(w.read("theirs.txt"), "THREE, and their line\n");
    assert!(!w.repo.join("created.txt").exists());

    // The undo is a step; undoing it right away puts back what it replaced.
    let log = w.ok(&["log", "s"]);
    assert!(
        log.lines()
            .next()
            .unwrap()
            .ends_with(" undo 3 paths: blind.txt, created.txt, read-first.txt"),
        "{log}"
    );
    let out = w.run(&["--session", "s", "undo"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(w.read("read-first.txt"), "ONE again\n");
    assert_eq!(w.read("blind.txt"), "TWO\n");
    assert_eq!(w.read("created.txt"), "new\n");
    assert_eq!(w.read("theirs.txt"), "THREE, and their line\n");
    assert!(
        w.ok(&["log", "s"])
            .lines()
            .next()
            .unwrap()
            .contains(" redo 3 paths: ")
    );

    // Only the paths given, and a path the session never wrote is named.
    let out = w.run(&["--session", "s", "undo", "blind.txt", "README"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stdout(&out),
        format!("restored blind.txt (version {})\n", id("two\n"))
    );
    assert_eq!(
        stderr(&out),
        "error: could not undo 'README': the session did not write it\n"
    );
    assert_eq!(w.read("read-first.txt"), "ONE again\n");
    fsck(&w);
}

fn fsck(w: &World) {
    let out = w.store_git(&["fsck", "--strict", "--no-progress"]);
    assert!(!out.contains("missing") && !out.contains("error"), "{out}");
}

#[test]
fn a_session_that_wrote_nothing_has_nothing_to_undo() {
    let w = World::new();
    w.ok(&["session", "start", "--id", "s"]);
    w.write("f", "x\n");
    w.ok(&["--session", "s", "read", "f"]);
    assert_eq!(
        w.ok(&["--session", "s", "undo"]),
        "nothing to undo: session s wrote no file"
    );
    assert_eq!(w.read("f"), "x\n");
}

/// A file the session deleted comes back with undo: as the session saw it when it deleted it,
/// or as it was before the session's first write to it; never over something that took its
/// place since. Undoing that undo deletes them again.
#[test]
fn undo_puts_back_what_the_session_deleted_unless_something_took_its_place() {
    let w = World::new();
    w.ok(&["session", "start", "--id", "s"]);
    w.write("read.txt", "read\n");
    w.write("taken.txt", "taken\n");
    w.write("written.txt", "before\n");
    w.ok(&[
        "--session",
        "s",
        "read",
        "read.txt",
        "taken.txt",
        "written.txt",
    ]);
    let out = w.run_stdin(&["--session", "s", "write", "written.txt"], b"after\n");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // Created, then deleted: nothing to undo there.
    let out = w.run_stdin(&["--session", "s", "write", "made.txt"], b"made\n");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    w.ok(&[
        "--session",
        "s",
        "rm",
        "read.txt",
        "taken.txt",
        "written.txt",
        "made.txt",
    ]);
    // Someone puts a file of their own where the session deleted one.
    w.write("taken.txt", "theirs\n");

    let out = w.run(&["--session", "s", "undo"]);
    let id = |b: &str| b3(b.as_bytes())[..12].to_owned();
    assert_eq!(
        stdout(&out),
        format!(
            "restored read.txt (version {})\nrestored written.txt (version {})\n",
            id("read\n"),
            id("before\n")
        )
    );
    assert_eq!(
        stderr(&out),
        "error: could not undo 'taken.txt': something is there again: someone created it after the session deleted it\n"
    );
    assert_eq!(code(&out), 2);
    assert_eq!(w.read("read.txt"), "read\n");
    assert_eq!(w.read("written.txt"), "before\n");
    assert_eq!(w.read("taken.txt"), "theirs\n");
    // Restored as the session's own: a change since would be someone else's.
    assert_eq!(
        w.ok(&["--session", "s", "status"]),
        "unchanged  read.txt\nunchanged  written.txt"
    );

    // Undoing the undo deletes them again.
    let out = w.run(&["--session", "s", "undo"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "removed read.txt (the undo put it back)\nremoved written.txt (the undo put it back)\n"
    );
    assert!(!w.repo.join("read.txt").exists() && !w.repo.join("written.txt").exists());
    assert_eq!(w.read("taken.txt"), "theirs\n");

    // Named, one deleted file comes back alone.
    let out = w.run(&["--session", "s", "undo", "read.txt"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(w.read("read.txt"), "read\n");
    assert!(!w.repo.join("written.txt").exists());
}

/// Undo never writes through what took a deleted file's place, and one file it cannot put back
/// stops only that file: a FIFO where the file was (never opened, so nothing hangs), a link
/// where its folder was (nothing written outside), kept bytes missing from the store. Each is
/// named; the rest is undone and recorded.
#[test]
fn undo_of_deleted_files_skips_what_it_cannot_put_back_and_does_the_rest() {
    let w = World::new();
    w.ok(&["session", "start", "--id", "s"]);
    std::fs::create_dir_all(w.repo.join("sub")).unwrap();
    for (path, bytes) in [
        ("sub/a.txt", "a\n"),
        ("fifo.txt", "f\n"),
        ("lost.txt", "lost bytes\n"),
        ("ok.txt", "ok\n"),
    ] {
        w.write(path, bytes);
    }
    let paths = ["sub/a.txt", "fifo.txt", "lost.txt", "ok.txt"];
    let mut read = vec!["--session", "s", "read"];
    read.extend(paths);
    w.ok(&read);
    let mut rm = vec!["--session", "s", "rm"];
    rm.extend(paths);
    w.ok(&rm);
    std::fs::remove_dir(w.repo.join("sub")).unwrap();
    let outside = w.base().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, w.repo.join("sub")).unwrap();
    let fifo = w.repo.join("fifo.txt");
    mkfifo(&fifo);
    // The kept bytes of lost.txt go missing from the store.
    let copy = w.base().join("lost-copy");
    std::fs::write(&copy, "lost bytes\n").unwrap();
    let lost = w.git(&["hash-object", copy.to_str().unwrap()]);
    std::fs::remove_file(w.store().join("objects").join(&lost[..2]).join(&lost[2..])).unwrap();

    let out = w.run(&["--session", "s", "undo"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!("restored ok.txt (version {})\n", &b3(b"ok\n")[..12])
    );
    let said = stderr(&out);
    for expected in [
        "error: could not undo 'fifo.txt': something is there again: someone created it after the session deleted it\n",
        "error: could not undo 'lost.txt': the kept bytes could not be read: ",
        "error: could not undo 'sub/a.txt': it could not be written: 'sub' is a symbolic link",
    ] {
        assert!(said.contains(expected), "{expected:?} in:\n{said}");
    }
    assert_eq!(listing(&outside), Vec::<std::path::PathBuf>::new());
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    assert!(!w.repo.join("lost.txt").exists());
    assert_eq!(w.read("ok.txt"), "ok\n");
    // What was undone is recorded: the file is the session's again.
    assert_eq!(w.ok(&["--session", "s", "status"]), "unchanged  ok.txt");
}

#[test]
fn a_dry_run_says_what_undo_would_do_and_changes_nothing() {
    let w = World::new();
    w.write("f", "one\n");
    w.write("h", "aitch\n");
    let s = w.start();
    w.ok(&["--session", &s, "read", "f", "h"]);
    w.ok_stdin(&["--session", &s, "write", "f"], b"two\n");
    w.ok_stdin(&["--session", &s, "write", "g"], b"new\n");
    w.ok_stdin(&["--session", &s, "write", "h"], b"mine\n");
    w.write("h", "a person's\n");
    let log = w.ok(&["log", &s]);

    let out = w.run(&["--session", &s, "undo", "--dry-run"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let said = stdout(&out);
    assert!(said.contains("would be restored f (version "), "{said}");
    assert!(
        said.contains("would be removed g (the session created it)"),
        "{said}"
    );
    assert!(
        stderr(&out).starts_with("refusing to write: h\n"),
        "{}",
        stderr(&out)
    );
    // Nothing written, nothing recorded.
    assert_eq!(
        (w.read("f"), w.read("g"), w.read("h")),
        ("two\n".into(), "new\n".into(), "a person's\n".into())
    );
    assert_eq!(w.ok(&["log", &s]), log);
    let v: serde_json::Value =
        serde_json::from_str(&stdout(&w.run(&["--session", &s, "undo", "-n", "--json"]))).unwrap();
    assert_eq!(v["dry_run"], true);
    assert_eq!(v["removed"], serde_json::json!(["g"]));
    assert_eq!(v["refused"][0]["path"], "h");
    assert_eq!(v["refused"].as_array().unwrap().len(), 1, "{v}");

    // The real run does what the dry run said.
    let out = w.run(&["--session", &s, "undo"]);
    assert_eq!(code(&out), 1);
    assert_eq!(stdout(&out), said.replace("would be ", ""));
    assert_eq!(w.read("f"), "one\n");
    assert!(!w.repo.join("g").exists());
}

#[test]
fn folders_the_undo_leaves_empty_go_too_and_no_other() {
    let w = World::new();
    w.write("kept/theirs.txt", "a person's\n");
    let s = w.start();
    for (path, bytes) in [
        ("new/deep/c.txt", &b"c\n"[..]),
        ("new/d.txt", b"d\n"),
        ("kept/mine.txt", b"mine\n"),
        ("shared/e.txt", b"e\n"),
    ] {
        w.ok_stdin(&["--session", &s, "write", path], bytes);
    }
    // Someone puts a file in a folder the session made: that folder stays.
    w.write("shared/notes.txt", "someone's\n");

    let plan = w.ok(&["--session", &s, "undo", "--dry-run"]);
    for line in [
        "would be removed folder new/deep/ (left empty)",
        "would be removed folder new/ (left empty)",
    ] {
        assert!(plan.contains(line), "{plan}");
    }
    assert!(
        !plan.contains("folder kept/") && !plan.contains("folder shared/"),
        "{plan}"
    );
    assert!(
        w.repo.join("new/deep/c.txt").exists(),
        "a dry run changes nothing"
    );
    let v: serde_json::Value =
        serde_json::from_str(&w.ok(&["--session", &s, "undo", "-n", "--json"])).unwrap();
    assert_eq!(v["removed_folders"], serde_json::json!(["new/deep", "new"]));

    let done = w.ok(&["--session", &s, "undo"]);
    assert_eq!(done, plan.replace("would be ", ""));
    assert!(!w.repo.join("new").exists());
    assert_eq!(w.read("kept/theirs.txt"), "a person's\n");
    assert!(!w.repo.join("kept/mine.txt").exists());
    assert_eq!(w.read("shared/notes.txt"), "someone's\n");
    assert!(!w.repo.join("shared/e.txt").exists());
    // What is left is what others made.
    assert_eq!(w.git(&["status", "--porcelain"]), "?? kept/\n?? shared/");
}
