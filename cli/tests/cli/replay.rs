//! `git stella replay`: a session carried to another machine, materialized or applied only over
//! what it saw, a fork each time, its id kept where it is free; a hostile artifact, built with raw
//! git plumbing, refused before it writes anything, and `--materialize` never writing through a
//! link or over a file, stopping at a file written while it ran; a replay killed half-way.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::*;
use crate::kill::*;

#[test]
fn unsafe_paths_in_the_fingerprint_are_refused() {
    let w = World::new();
    let forge = Forge::new(&w);
    let d = b3(b"x");
    for (path, says) in [
        ("../x", "not a Stella artifact: unsafe path \"../x\""),
        (
            "/etc/passwd",
            "not a Stella artifact: unsafe path \"/etc/passwd\"",
        ),
        ("a//b", "unsafe path"),
        (
            ".git/hooks/pre-commit",
            "not a Stella artifact: it names '.git/hooks/pre-commit', a path inside .git",
        ),
        ("sub/.GIT/config", "a path inside .git"),
        (".stella/private/workspace.toml", "a path inside .stella"),
    ] {
        let a = forge.artifact(&manifest("1"), &format!("{d}  {path}\n"), None);
        refused(&w, &["replay", "--materialize"], &a, 2, says);
        refused(&w, &["replay", "--ignore-fingerprint"], &a, 2, says);
    }
    assert!(!w.repo.join(".git/hooks/pre-commit").exists());
    let a = forge.artifact(
        &manifest("1"),
        &format!("{d}  README.md\n{d}  readme.md\n"),
        None,
    );
    refused(
        &w,
        &["replay", "--materialize"],
        &a,
        2,
        "collides with another path when case is folded",
    );
}

#[test]
fn hostile_trees_under_files_are_refused() {
    let w = World::new();
    let forge = Forge::new(&w);
    let x = forge.blob(b"x");
    let d = b3(b"x");
    // An entry named '..' under files/: git's object checks refuse it on import.
    let inner = forge.tree(&[("100644", b"x", &x)]);
    let files = forge.tree(&[("40000", b"..", &inner)]);
    let a = forge.artifact(&manifest("1"), &format!("{d}  x\n"), Some(&files));
    refused(
        &w,
        &["replay", "--materialize"],
        &a,
        2,
        "git refused its objects",
    );
    assert!(!w.base().join("x").exists());
    // A name with a slash in it.
    let files = forge.tree(&[("100644", b"etc/passwd", &x)]);
    let a = forge.artifact(&manifest("1"), &format!("{d}  x\n"), Some(&files));
    refused(
        &w,
        &["replay", "--materialize"],
        &a,
        2,
        "git refused its objects",
    );
    // A gitlink where a file belongs.
    let commit = forge.commit(&forge.tree(&[]));
    let files = forge.tree(&[("160000", b"sub", &commit)]);
    let a = forge.artifact(&manifest("1"), &format!("{d}  sub\n"), Some(&files));
    refused(
        &w,
        &["replay", "--materialize"],
        &a,
        2,
        "not a Stella artifact: files/sub is a gitlink, not a file",
    );
    assert!(!w.repo.join("sub").exists());
    // A symbolic link where a file belongs.
    let target = forge.blob(b"/etc/passwd");
    let files = forge.tree(&[("120000", b"link", &target)]);
    let a = forge.artifact(
        &manifest("1"),
        &format!("{}  link\n", b3(b"/etc/passwd")),
        Some(&files),
    );
    refused(
        &w,
        &["replay", "--materialize"],
        &a,
        2,
        "files/link is a symbolic link, not a file",
    );
    assert!(w.repo.join("link").symlink_metadata().is_err());
    // Bytes that do not match the fingerprint.
    let files = forge.tree(&[("100644", b"f", &x)]);
    let a = forge.artifact(
        &manifest("1"),
        &format!("{}  f\n", b3(b"other")),
        Some(&files),
    );
    refused(
        &w,
        &["replay", "--materialize"],
        &a,
        2,
        "files/f does not match its fingerprint",
    );
    assert!(!w.repo.join("f").exists());
}

#[test]
fn materialize_never_writes_through_a_link_or_over_a_file() {
    let w = World::new();
    let forge = Forge::new(&w);
    let x = forge.blob(b"x");
    let sub = forge.tree(&[("100644", b"x.txt", &x)]);
    let files = forge.tree(&[("40000", b"sub", &sub)]);
    let a = forge.artifact(
        &manifest("1"),
        &format!("{}  sub/x.txt\n", b3(b"x")),
        Some(&files),
    );
    let outside = w.base().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, w.repo.join("sub")).unwrap();
    refused(
        &w,
        &["replay", "--materialize"],
        &a,
        1,
        "  sub/x.txt: 'sub' is a symbolic link or a file where a folder must go\n",
    );
    assert!(!outside.join("x.txt").exists());
    std::fs::remove_file(w.repo.join("sub")).unwrap();
    w.write("sub", "a file where a folder must go\n");
    refused(
        &w,
        &["replay", "--materialize"],
        &a,
        1,
        "'sub' is a symbolic link or a file where a folder must go",
    );
    assert_eq!(w.read("sub"), "a file where a folder must go\n");
    // The final component a link: never followed either.
    std::fs::remove_file(w.repo.join("sub")).unwrap();
    std::fs::create_dir(w.repo.join("sub")).unwrap();
    std::os::unix::fs::symlink(outside.join("x.txt"), w.repo.join("sub/x.txt")).unwrap();
    refused(
        &w,
        &["replay", "--materialize"],
        &a,
        1,
        "  sub/x.txt: it is a symbolic link\n",
    );
    // With the way clear, it writes.
    std::fs::remove_file(w.repo.join("sub/x.txt")).unwrap();
    let out = w.run(&["replay", "--materialize", a.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(w.read("sub/x.txt"), "x");
}

#[test]
fn round_trip_across_two_machines_with_materialize() {
    let a = World::new();
    let (s, artifact) = session_with_work(&a);
    let b = World::clone_of(&a);
    assert_eq!(b.read("src/lib.rs"), "pub fn one() {}\n");
    let out = b.run(&["replay", "--materialize", artifact.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let n = stdout(&out).trim().to_owned();
    let base = a.git(&["rev-parse", "HEAD"]);
    assert_eq!(
        stderr(&out),
        format!(
            "stella: replayed session {s} as {n}: 3 files guarded, 2 written\nstella: wrote 2 files of session {s}; it was made against base commit {base}, and the rest of the repository is not in the artifact\n"
        )
    );
    assert_eq!(b.read("src/lib.rs"), "pub fn one() { two() }\n");
    assert_eq!(b.read("src/new.rs"), "pub fn two() {}\n");
    // B's guard protects the materialized files at once.
    b.write("src/lib.rs", "someone in B\n");
    let out = b.run_stdin(&["--session", &n, "write", "src/lib.rs"], b"blind\n");
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).starts_with("refusing to write: src/lib.rs\n"));
    let out = b.run_stdin(
        &["--session", &n, "write", "src/new.rs"],
        b"pub fn two() { 2 }\n",
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // log in B shows provenance back to A's session.
    let log = b.ok(&["log", &n]);
    let lines: Vec<&str> = log
        .lines()
        .map(|l| l.splitn(3, ' ').nth(2).unwrap())
        .collect();
    // (B's refused write above is a step of its own, between the replay and the write.)
    assert_eq!(lines[1], "refused write src/lib.rs");
    assert_eq!(
        lines[2],
        &format!(
            "replay of session {s} from artifact {}",
            &blake3_hex(&artifact)[..12]
        )
    );
    assert_eq!(lines[3], &format!("checkpoint of session {s}"));
    assert_eq!(*lines.last().unwrap(), "session start");
    let list = b.ok(&["session", "list"]);
    assert!(
        list.contains(&format!("{s}@{}", &blake3_hex(&artifact)[..12])),
        "{list}"
    );
}

fn blake3_hex(path: &Path) -> String {
    stella::digest::Digest::of(&std::fs::read(path).unwrap()).to_hex()
}

#[test]
fn materialize_over_someones_work_is_refused_and_writes_nothing() {
    let a = World::new();
    let (_, artifact) = session_with_work(&a);
    let b = World::clone_of(&a);
    b.write("notes.txt", "B's own edit\n");
    let out = b.run(&["replay", "--materialize", artifact.to_str().unwrap()]);
    assert_eq!(code(&out), 1);
    assert_eq!(
        stderr(&out),
        "refusing to materialize: 1 file holds someone's work\n  notes.txt: it holds bytes that are neither the session's, where the session started, nor the base commit's: someone's work\nNothing was written. Commit or move those changes, or replay without --materialize.\n"
    );
    assert_eq!(
        b.read("src/lib.rs"),
        "pub fn one() {}\n",
        "nothing written at all"
    );
    assert!(!b.repo.join("src/new.rs").exists());
    assert_eq!(b.ok(&["session", "list"]), "");
}

#[test]
fn apply_refuses_a_changed_and_a_deleted_file_and_consumes_nothing() {
    let a = World::new();
    let (_, artifact) = session_with_work(&a);
    // In A itself the tree matches: apply works.
    let n = a.ok(&["replay", artifact.to_str().unwrap()]);
    assert_eq!(
        a.ok(&["verify", artifact.to_str().unwrap()]),
        "3 files match"
    );
    a.write("src/lib.rs", "changed\n");
    std::fs::remove_file(a.repo.join("src/new.rs")).unwrap();
    let store = a.store();
    let snapshot = |w: &World| {
        (
            git_in(
                &w.repo,
                &w.home,
                &["--git-dir", store.to_str().unwrap(), "for-each-ref"],
            ),
            git_in(
                &w.repo,
                &w.home,
                &["--git-dir", store.to_str().unwrap(), "count-objects", "-v"],
            ),
        )
    };
    let before = snapshot(&a);
    for cmd in ["verify", "replay"] {
        let out = a.run(&[cmd, artifact.to_str().unwrap()]);
        assert_eq!(code(&out), 1, "{cmd}");
        assert!(
            stderr(&out).starts_with(
                "the artifact does not match this tree: 2 of its files differ here\n  changed    src/lib.rs\n  deleted    src/new.rs\n"
            ),
            "{}",
            stderr(&out)
        );
    }
    assert_eq!(snapshot(&a), before, "the store is unchanged");
    // --ignore-fingerprint: the mismatched paths stay guarded with the artifact's digests.
    let out = a.run(&[
        "replay",
        "--ignore-fingerprint",
        "--as",
        "forced",
        artifact.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stderr(&out).contains("stella: replayed over a mismatch: src/lib.rs is changed here; a write to it is refused until it is re-read\n"));
    let out = a.run_stdin(&["--session", "forced", "write", "src/lib.rs"], b"x\n");
    assert_eq!(code(&out), 1);
    a.ok(&["--session", "forced", "read", "src/lib.rs"]);
    let out = a.run_stdin(&["--session", "forced", "write", "src/lib.rs"], b"x\n");
    assert_eq!(code(&out), 0);
    // An existing id is an error.
    let out = a.run(&[
        "replay",
        "--ignore-fingerprint",
        "--as",
        &n,
        artifact.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).starts_with(&format!(
        "error: a session '{n}' already exists in this workspace\n"
    )));
}

#[test]
fn two_replays_of_one_artifact_are_forks() {
    let a = World::new();
    let (s, artifact) = session_with_work(&a);
    let x = a.ok(&["replay", "--as", "fork-x", artifact.to_str().unwrap()]);
    let y = a.ok(&["replay", "--as", "fork-y", artifact.to_str().unwrap()]);
    assert_eq!((x.as_str(), y.as_str()), ("fork-x", "fork-y"));
    let short = &blake3_hex(&artifact)[..12];
    let log = a.ok(&["log"]);
    assert!(
        log.contains(&format!(
            "session fork-x (replayed from session {s} via artifact {short}; forked with fork-y)"
        )),
        "{log}"
    );
    assert!(
        log.contains(&format!(
            "session fork-y (replayed from session {s} via artifact {short}; forked with fork-x)"
        )),
        "{log}"
    );
    let store = a.store();
    let base = git_in(
        &a.repo,
        &a.home,
        &[
            "--git-dir",
            store.to_str().unwrap(),
            "merge-base",
            "refs/stella/sessions/fork-x",
            "refs/stella/sessions/fork-y",
        ],
    );
    let tip = git_in(
        &a.repo,
        &a.home,
        &[
            "--git-dir",
            store.to_str().unwrap(),
            "rev-parse",
            "refs/stella/sessions/fork-x~1",
        ],
    );
    assert_eq!(base, tip, "the common ancestor is the artifact's tip");
    // A replay of a replay carries the whole provenance chain.
    let again = a.base().join("again.bundle");
    a.checkpoint_to("fork-x", &again);
    let json: serde_json::Value =
        serde_json::from_str(&a.ok(&["inspect", "--json", again.to_str().unwrap()])).unwrap();
    assert_eq!(json["provenance"][0]["session"], s.as_str());
}

#[test]
fn a_dry_run_says_what_materialize_would_write_keep_and_refuse_and_does_nothing() {
    let a = World::new();
    let (s, artifact) = session_with_work(&a);
    let b = World::clone_of(&a);
    // notes.txt already holds the session's bytes; src/lib.rs the base's; src/new.rs is absent.
    let art = artifact.to_str().unwrap();
    let out = b.run(&["replay", "--materialize", "--dry-run", art]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "write   src/lib.rs  (holds the bytes the session started from)\n\
write   src/new.rs  (absent here)\n\
keep    notes.txt  (already holds the session's bytes)\n"
    );
    assert_eq!(
        stderr(&out),
        "stella: dry run: 2 to write, 1 kept, 0 refused; nothing was written\n"
    );
    assert_eq!(b.read("src/lib.rs"), "pub fn one() {}\n");
    assert!(!b.repo.join("src/new.rs").exists());
    assert_eq!(b.ok(&["session", "list"]), "", "no session started");
    // Nothing was imported: the artifact's tip is not in the store.
    let info: serde_json::Value = serde_json::from_str(&b.ok(&["inspect", "--json", art])).unwrap();
    let tip = info["tip"].as_str().unwrap();
    let store = b.ok(&["store-path"]);
    let found = git_at(&b.repo, &b, &["--git-dir", &store, "cat-file", "-e", tip]);
    assert!(!found.status.success(), "the dry run imported the artifact");
    assert_eq!(info["session"], s.as_str());
    // Someone's edit: the dry run names it, exits 1 as the real run would, and still writes
    // nothing; from a subfolder, paths are shown from there; --json has the same plan.
    b.write("src/lib.rs", "B's own work\n");
    let mut cmd = b.stella_in(&b.repo.join("src"));
    cmd.args(["replay", "--materialize", "--dry-run", art]);
    let out = cmd.output().unwrap();
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("refuse  lib.rs  (it holds bytes that are neither"),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains("write   new.rs  (absent here)"));
    let out = b.run(&["replay", "--materialize", "--dry-run", "--json", art]);
    assert_eq!(code(&out), 1);
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["outcome"], "plan");
    assert_eq!(json["blocked"][0]["path"], "src/lib.rs");
    assert_eq!(json["keep"], serde_json::json!(["notes.txt"]));
    assert_eq!(json["write"][0]["path"], "src/new.rs");
    assert_eq!(b.read("src/lib.rs"), "B's own work\n");
    assert!(!b.repo.join("src/new.rs").exists());
    // --dry-run means nothing without --materialize.
    let out = b.run(&["replay", "--dry-run", art]);
    assert_eq!(code(&out), 2);
}

#[test]
fn a_replay_keeps_the_sessions_id_where_it_is_free() {
    let a = World::new();
    a.write("f", "one\n");
    a.git(&["add", "f"]);
    a.git(&["commit", "-q", "-m", "f"]);
    a.ok(&["session", "start", "--id", "agent-a"]);
    a.ok(&["--session", "agent-a", "read", "f"]);
    let artifact = a.base().join("a.stella.bundle");
    a.checkpoint_to("agent-a", &artifact);
    let art = artifact.to_str().unwrap();
    // On a colleague's clone the id is free: the session keeps it.
    let b = World::clone_of(&a);
    assert_eq!(b.ok(&["replay", art]), "agent-a");
    assert!(
        b.ok(&["log", "agent-a"])
            .contains("replay of session agent-a")
    );
    // Taken there now, and in the workspace it came from: a new id each time.
    let again = b.ok(&["replay", art]);
    assert!(again != "agent-a" && !again.is_empty(), "{again}");
    let home = a.ok(&["replay", art]);
    assert!(home != "agent-a" && home != again, "{home}");
    // --as still names it.
    assert_eq!(b.ok(&["replay", "--as", "mine", art]), "mine");
}

#[test]
fn a_replay_killed_while_git_imports_leaves_no_git_running_and_no_session() {
    let a = World::new();
    let s = session_holding_megabytes(&a, 8);
    let artifact = a.base().join("agent.stella.bundle");
    a.checkpoint_to(&s, &artifact);
    let b = World::clone_of(&a);
    for i in 0..8 {
        std::fs::create_dir_all(b.repo.join("data")).unwrap();
        std::fs::write(
            b.repo.join(format!("data/blob-{i}.bin")),
            noise(i as u64 + 7, 512 << 10),
        )
        .unwrap();
    }
    let store = b.store();
    let replay = || {
        let mut cmd = b.stella();
        cmd.args(["replay", artifact.to_str().unwrap()]);
        cmd
    };
    let mut caught = false;
    for _ in 0..5 {
        caught = kill_and_check(
            replay(),
            Duration::ZERO,
            Some(&["fetch", "index-pack"]),
            &store,
        );
        if caught {
            break;
        }
        // It finished before git was caught: start again from no session.
        for id in b.ok(&["session", "list"]).lines().skip(1) {
            b.ok(&["session", "drop", id.split_whitespace().next().unwrap()]);
        }
    }
    assert!(caught, "git was never caught importing");
    assert_eq!(
        b.ok(&["session", "list"]),
        "",
        "a killed replay started a session"
    );
    assert_store_fsck_clean(&b);
    // The store still takes the artifact whole.
    let id = b.ok(&["replay", artifact.to_str().unwrap()]);
    assert_eq!(b.steps(&id), a.steps(&s) + 2);
}

/// A large file streams out of the store through `git cat-file` into the file it materializes:
/// killed while it streams, the replay leaves the file absent (never part of it under its name)
/// and no git running; run to its end, the file is whole.
#[test]
fn a_materialize_killed_while_a_large_file_streams_leaves_no_part_of_it() {
    let a = World::new();
    let big = noise(99, 24 << 20);
    std::fs::write(a.repo.join("big.bin"), &big).unwrap();
    let s = a.start();
    a.ok(&["--session", &s, "read", "big.bin"]);
    let artifact = a.base().join("agent.stella.bundle");
    a.checkpoint_to(&s, &artifact);
    let b = World::clone_of(&a);
    let store = b.store();
    let replay = || {
        let mut cmd = b.stella();
        cmd.args(["replay", "--materialize", artifact.to_str().unwrap()]);
        cmd
    };
    let before = tree_files(&b.repo);
    let mut caught = 0;
    for _ in 0..10 {
        if kill_and_check(replay(), Duration::ZERO, Some(&["cat-file"]), &store) {
            caught += 1;
        }
        // Never a part of the file under its name: absent, or (had it finished) whole.
        match std::fs::read(b.repo.join("big.bin")) {
            Ok(bytes) => {
                assert!(bytes == big, "a killed replay left part of big.bin");
                std::fs::remove_file(b.repo.join("big.bin")).unwrap();
            }
            Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::NotFound),
        }
        assert_eq!(
            tree_files(&b.repo).len(),
            before.len(),
            "a killed replay left a file in the tree"
        );
        for id in b.ok(&["session", "list"]).lines().skip(1) {
            b.ok(&["session", "drop", id.split_whitespace().next().unwrap()]);
        }
        if caught == 3 {
            break;
        }
    }
    assert_eq!(
        caught, 3,
        "git cat-file was not caught streaming three times"
    );
    assert_store_fsck_clean(&b);
    b.ok(&["replay", "--materialize", artifact.to_str().unwrap()]);
    assert!(std::fs::read(b.repo.join("big.bin")).unwrap() == big);
}

/// Replay `artifact` with `--materialize`: exit `exit`, stderr exactly `says`, and not one file
/// of the tree created, changed or removed; no session started.
fn materialize_refused(w: &World, artifact: &Path, exit: i32, says: &str) {
    w.ok(&["init"]);
    let before = tree_files(&w.repo);
    let out = w.run(&["replay", "--materialize", artifact.to_str().unwrap()]);
    assert_eq!(code(&out), exit, "{}", stderr(&out));
    assert_eq!(stderr(&out), says);
    assert!(
        tree_files(&w.repo) == before,
        "materialize wrote into the tree"
    );
    assert_eq!(w.ok(&["session", "list"]), "", "a session appeared");
}

#[test]
fn materialize_of_a_malformed_artifact_writes_nothing_at_all() {
    let w = World::new();
    let forge = Forge::new(&w);
    let (one, two) = (forge.blob(b"one\n"), forge.blob(b"two\n"));
    let c = forge.tree(&[("100644", b"d.txt", &two)]);
    // The first file is fine; the second has no files/ entry.
    let files = forge.tree(&[("100644", b"a.txt", &one), ("40000", b"c", &c)]);
    let fingerprint = format!(
        "{}  a.txt\n{}  b.txt\n{}  c/d.txt\n",
        b3(b"one\n"),
        b3(b"bee\n"),
        b3(b"two\n")
    );
    let a = forge.artifact(&manifest("1"), &fingerprint, Some(&files));
    materialize_refused(
        &w,
        &a,
        2,
        "error: not a Stella artifact: its fingerprint names 'b.txt' but it holds no files/b.txt\n",
    );
    // The second file's bytes are not the ones its fingerprint names.
    let files = forge.tree(&[
        ("100644", b"a.txt", &one),
        ("100644", b"b.txt", &one),
        ("40000", b"c", &c),
    ]);
    let a = forge.artifact(&manifest("1"), &fingerprint, Some(&files));
    materialize_refused(
        &w,
        &a,
        2,
        "error: not a Stella artifact: files/b.txt does not match its fingerprint\n",
    );
    // One path both a file and a folder: the file would be written, then its folder fail.
    let files = forge.tree(&[("100644", b"a.txt", &one), ("100644", b"x", &two)]);
    let fingerprint = format!(
        "{}  a.txt\n{}  x\n{}  x/y\n",
        b3(b"one\n"),
        b3(b"two\n"),
        b3(b"why\n")
    );
    let a = forge.artifact(&manifest("1"), &fingerprint, Some(&files));
    materialize_refused(
        &w,
        &a,
        1,
        "refusing to materialize: 1 file holds someone's work\n  x: the artifact also names 'x/y' beneath it: one path cannot be both a file and a folder\nNothing was written. Commit or move those changes, or replay without --materialize.\n",
    );
}

/// The `git` on PATH, found the way a shell finds it.
fn real_git() -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join("git"))
        .find(|p| p.is_file())
        .expect("git on PATH")
}

#[test]
fn materialize_leaves_a_file_written_while_it_ran_and_stops_there() {
    use std::os::unix::fs::PermissionsExt;
    let a = World::new();
    a.write("a.sh", "#!/bin/sh\necho hi\n");
    std::fs::set_permissions(a.repo.join("a.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    a.write("notes.txt", "the session's notes\n");
    let s = a.start();
    a.ok(&["--session", &s, "read", "a.sh", "notes.txt"]);
    let artifact = a.base().join("agent.stella.bundle");
    a.checkpoint_to(&s, &artifact);

    // On B, neither file exists when materialize checks them; then, while git imports the
    // artifact's objects, someone creates notes.txt.
    let b = World::clone_of(&a);
    b.ok(&["init"]);
    let wrap = b.base().join("wrap");
    std::fs::create_dir_all(&wrap).unwrap();
    std::fs::write(
        wrap.join("git"),
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in fetch|index-pack) printf 'theirs\\n' > \"$THEIR_FILE\";; esac; done\nexec '{}' \"$@\"\n",
            real_git().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(wrap.join("git"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = std::env::join_paths(
        std::iter::once(wrap.clone())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let out = b
        .stella()
        .env("PATH", path)
        .env("THEIR_FILE", b.repo.join("notes.txt"))
        .args(["replay", "--materialize", artifact.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "refusing to materialize: notes.txt changed while the artifact was being materialized
Someone wrote it after it was checked: it was left as it is, and nothing after it was written.
  written before it: a.sh
No session was started. Look at what changed, then replay again.
"
    );
    assert_eq!(
        b.read("notes.txt"),
        "theirs\n",
        "their bytes were overwritten"
    );
    assert_eq!(b.read("a.sh"), "#!/bin/sh\necho hi\n");
    let mode = std::fs::metadata(b.repo.join("a.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_ne!(mode & 0o100, 0, "the executable bit travels: {mode:o}");
    assert_eq!(b.ok(&["session", "list"]), "");
    // Nothing in the tree but the two files and Stella's own folder.
    let names: Vec<String> = tree_files(&b.repo)
        .into_iter()
        .map(|(p, _)| p.strip_prefix(&b.repo).unwrap().display().to_string())
        .filter(|p| !p.starts_with(".stella/"))
        .collect();
    assert_eq!(names, ["README", "a.sh", "notes.txt"]);
}
