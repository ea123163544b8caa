//! The fallback other systems run — a named temp file beside the target, then a rename — where
//! Linux offers an anonymous `O_TMPFILE`. `STELLA_TEST_PORTABLE_FS=1` makes every write take it
//! on Linux, so it stays covered: here for write, create, rm, undo, checkpoint and a materializing
//! replay, checked from an `strace` of the real commands (and the whole suite can run on it:
//! `STELLA_TEST_PORTABLE_FS=1 cargo test --test cli`).
//!
//! Not per command: one switch changes how every command writes a file.

use std::os::unix::fs::PermissionsExt;

use crate::common::*;

/// Run `git-stella ARGS` in `w`, traced, with the switch on or off; its file-creating calls.
fn traced(w: &World, args: &[&str], portable: bool) -> Vec<String> {
    let switch = if portable { "1" } else { "0" };
    let calls = "open,openat,linkat,rename,renameat,renameat2";
    strace(w, args, calls, true, &[("STELLA_TEST_PORTABLE_FS", switch)])
}

fn anonymous(calls: &[String]) -> bool {
    calls.iter().any(|l| l.contains("O_TMPFILE"))
}

/// A `.stella-tmp-` name created and then renamed onto `target`.
fn named_then_renamed(calls: &[String], target: &str) -> bool {
    calls
        .iter()
        .any(|l| l.contains("rename") && l.contains(".stella-tmp-") && l.contains(target))
}

#[test]
fn every_write_takes_the_named_fallback_under_the_switch_and_leaves_nothing_behind() {
    if !have(
        "strace",
        "which temp files a write uses (the strace package)",
    ) {
        return;
    }
    let w = World::new();
    w.write("a.txt", "alpha\n");
    std::fs::set_permissions(w.repo.join("a.txt"), std::fs::Permissions::from_mode(0o640)).unwrap();
    w.write("gone.txt", "bye\n");
    w.ok(&["session", "start", "--id", "s"]);
    w.ok(&["--session", "s", "read", "a.txt", "gone.txt"]);

    // Without the switch Linux writes through an anonymous file: the check below can fail.
    let calls = traced(&w, &["--session", "s", "write", "a.txt"], false);
    assert!(anonymous(&calls), "{}", calls.join("\n"));
    w.ok(&["--session", "s", "read", "a.txt"]);

    let write = |args: &[&str]| traced(&w, args, true);
    // Replace: a named temp file renamed over the file, its mode kept.
    let mut cmd = w.stella();
    cmd.env("STELLA_TEST_PORTABLE_FS", "1")
        .args(["--session", "s", "write", "a.txt"]);
    let out = feed(cmd, b"ALPHA\n");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(w.read("a.txt"), "ALPHA\n");
    let mode = std::fs::metadata(w.repo.join("a.txt"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o640);
    w.ok(&["--session", "s", "read", "a.txt"]);
    let calls = write(&["--session", "s", "write", "a.txt"]);
    assert!(!anonymous(&calls), "{}", calls.join("\n"));
    assert!(named_then_renamed(&calls, "a.txt"), "{}", calls.join("\n"));
    // Create, in a folder that does not exist yet.
    let calls = write(&["--session", "s", "write", "new/b.txt"]);
    assert!(!anonymous(&calls), "{}", calls.join("\n"));
    assert!(named_then_renamed(&calls, "b.txt"), "{}", calls.join("\n"));
    assert!(w.repo.join("new/b.txt").is_file());
    // Undo writes the file's first bytes back through the same primitive.
    let calls = write(&["--session", "s", "undo", "a.txt"]);
    assert!(!anonymous(&calls), "{}", calls.join("\n"));
    assert!(named_then_renamed(&calls, "a.txt"), "{}", calls.join("\n"));
    assert_eq!(w.read("a.txt"), "alpha\n");
    // A delete.
    write(&["--session", "s", "rm", "gone.txt"]);
    assert!(!w.repo.join("gone.txt").exists());

    // A checkpoint's artifact, and a materializing replay of it on another machine.
    let artifact = w.base().join("s.bundle");
    let calls = write(&[
        "--session",
        "s",
        "checkpoint",
        "-o",
        artifact.to_str().unwrap(),
    ]);
    assert!(!anonymous(&calls), "{}", calls.join("\n"));
    assert!(
        named_then_renamed(&calls, "s.bundle"),
        "{}",
        calls.join("\n")
    );
    let b = World::clone_of(&w);
    let calls = traced(
        &b,
        &["replay", "--materialize", artifact.to_str().unwrap()],
        true,
    );
    assert!(!anonymous(&calls), "{}", calls.join("\n"));
    assert_eq!(b.read("new/b.txt"), w.read("new/b.txt"));
    assert_eq!(b.read("a.txt"), "alpha\n");
    assert!(!b.repo.join("gone.txt").exists());

    // Nothing named `.stella-tmp-*` is left in either tree.
    for world in [&w, &b] {
        let listing = world.git(&["ls-files", "--others", "--exclude-standard"]);
        assert!(!listing.contains(".stella-tmp-"), "{listing}");
    }
    assert!(std::fs::read_dir(w.base()).unwrap().all(|e| {
        !e.unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with(".stella-tmp-")
    }));
}
