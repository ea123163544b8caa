//! Checkpoint, inspect, verify and replay, with stock git as the oracle and hostile artifacts
//! built from raw plumbing.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

/// A session that read two files, edited one and created a third; returns (session, artifact).
pub fn session_with_work(w: &World) -> (String, PathBuf) {
    w.write("src/lib.rs", "pub fn one() {}\n");
    w.write("notes.txt", "alpha\nbeta\n");
    w.git(&["add", "."]);
    w.git(&["commit", "-q", "-m", "work"]);
    let s = w.start();
    w.ok(&["--session", &s, "read", "src/lib.rs", "notes.txt"]);
    let out = w.run_stdin(
        &["--session", &s, "write", "src/lib.rs"],
        b"pub fn one() { two() }\n",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = w.run_stdin(
        &["--session", &s, "write", "src/new.rs"],
        b"pub fn two() {}\n",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let path = PathBuf::from(w.ok(&["--session", &s, "checkpoint"]));
    (s, path)
}

fn git_at(dir: &Path, w: &World, args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new("git");
    clean_env(&mut cmd, &w.home, &w.stella_home);
    cmd.current_dir(dir).args(args).output().unwrap()
}

#[test]
fn a_checkpoint_is_kept_private_beneath_stella_and_git_never_tracks_it() {
    let w = World::new();
    let (s, artifact) = session_with_work(&w);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        artifact,
        w.repo
            .join(format!(".stella/private/checkpoints/{s}.stella.bundle"))
    );
    assert_eq!(
        std::fs::metadata(&artifact).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let status = w.git(&["status", "--porcelain", "--untracked-files=all"]);
    assert!(
        !status.contains(".stella"),
        "git never tracks checkpoints: {status}"
    );
}

#[test]
fn stock_git_accepts_the_bundle_and_it_carries_no_base_objects() {
    let w = World::new();
    let (s, artifact) = session_with_work(&w);
    let fresh = w.base().join("fresh.git");
    git_in(
        &w.base(),
        &w.home,
        &["init", "-q", "--bare", fresh.to_str().unwrap()],
    );
    let verify = git_at(
        &fresh,
        &w,
        &["bundle", "verify", artifact.to_str().unwrap()],
    );
    assert!(verify.status.success(), "{}", stderr(&verify));
    let said = stdout(&verify) + &stderr(&verify);
    assert!(
        said.contains("The bundle records a complete history."),
        "{said}"
    );
    let fetch = git_at(
        &fresh,
        &w,
        &[
            "fetch",
            "-q",
            artifact.to_str().unwrap(),
            "refs/stella/*:refs/stella/*",
        ],
    );
    assert!(fetch.status.success(), "{}", stderr(&fetch));
    let fsck = git_at(&fresh, &w, &["fsck", "--full", "--strict"]);
    assert!(fsck.status.success(), "{}", stderr(&fsck));
    let tip = format!("refs/stella/checkpoints/{s}");
    let tree = git_in(&fresh, &w.home, &["ls-tree", "--name-only", &tip]);
    assert_eq!(tree, "base\nfiles\nfingerprint\norigins\nstella.toml");
    let base = w.git(&["rev-parse", "HEAD"]);
    let gitlink = git_in(&fresh, &w.home, &["ls-tree", &tip, "base"]);
    assert_eq!(gitlink, format!("160000 commit {base}\tbase"));
    let has_base = git_at(&fresh, &w, &["cat-file", "-e", &base]);
    assert!(
        !has_base.status.success(),
        "the base commit must not travel"
    );
    // The history travels: the checkpoint's parent is the journal tip.
    let log = git_in(&fresh, &w.home, &["log", "--format=%s", &tip]);
    assert_eq!(
        log,
        format!(
            "checkpoint of session {s}\nwrite src/new.rs\nwrite src/lib.rs\nread 2 paths: src/lib.rs, notes.txt\nsession start"
        )
    );
    let manifest = git_in(&fresh, &w.home, &["show", &format!("{tip}:stella.toml")]);
    assert!(manifest.starts_with("format = 1\n"), "{manifest}");
    assert!(
        manifest.contains(&format!("base = \"{base}\"")),
        "{manifest}"
    );
    let origins = git_in(&fresh, &w.home, &["show", &format!("{tip}:origins")]);
    assert!(origins.lines().any(|l| l == "-  src/new.rs"), "{origins}");

    // b3sum (installed by .ci/run) verifies the fingerprint against the tree by hand.
    let fingerprint = w.base().join("fingerprint");
    std::fs::write(
        &fingerprint,
        git_in(&fresh, &w.home, &["show", &format!("{tip}:fingerprint")]) + "\n",
    )
    .unwrap();
    match Command::new("b3sum")
        .arg("--check")
        .arg(&fingerprint)
        .current_dir(&w.repo)
        .output()
    {
        Ok(out) => {
            assert!(out.status.success(), "{}", stderr(&out));
            assert_eq!(
                stdout(&out),
                "notes.txt: OK\nsrc/lib.rs: OK\nsrc/new.rs: OK\n"
            );
        }
        Err(_) => {
            assert!(std::env::var_os("CI").is_none(), "b3sum is missing in CI");
            skipped("checking the fingerprint with b3sum: 'b3sum' is not installed");
        }
    }
}

/// A session that only read: its `origins` is its `fingerprint`, one object, which the pack
/// carries once (stock `git verify-pack` refuses a pack holding an object twice), and Stella
/// reads that artifact whole too.
#[test]
fn each_object_is_in_the_artifact_once() {
    let w = World::new();
    w.write("a.txt", "a\n");
    let s = w.start();
    w.ok(&["--session", &s, "read", "a.txt"]);
    let artifact = w.base().join("read.bundle");
    w.checkpoint_to(&s, &artifact);
    let listing = verified_pack(&w, &artifact);
    let tip = format!("refs/stella/checkpoints/{s}");
    let fresh = w.bare_with(&artifact, &format!("{tip}:{tip}"));
    let fingerprint = git_in(
        &fresh,
        &w.home,
        &["rev-parse", &format!("{tip}:fingerprint")],
    );
    let origins = git_in(&fresh, &w.home, &["rev-parse", &format!("{tip}:origins")]);
    assert_eq!(fingerprint, origins);
    assert_eq!(
        listing
            .lines()
            .filter(|l| l.starts_with(&fingerprint))
            .count(),
        1,
        "{listing}"
    );
    assert_eq!(
        w.ok(&["verify", artifact.to_str().unwrap()]),
        "1 file matches"
    );
    // Read in one pass, as Stella reads its own order: without git, which another order needs.
    let no_git = w.base().join("no-git");
    std::fs::create_dir_all(&no_git).unwrap();
    let inspect = w
        .stella()
        .env("PATH", &no_git)
        .args(["inspect", artifact.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(code(&inspect), 0, "{}", stderr(&inspect));
    assert!(stdout(&inspect).contains("a.txt"), "{}", stdout(&inspect));
}

#[test]
fn an_unchanged_session_checkpoints_to_identical_bytes() {
    let w = World::new();
    let (s, artifact) = session_with_work(&w);
    let first = std::fs::read(&artifact).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let other = w.base().join("again.bundle");
    let out = w.checkpoint_to(&s, &other);
    assert_eq!(out, other.to_str().unwrap());
    assert_eq!(std::fs::read(&other).unwrap(), first);
    let piped = w.run(&["--session", &s, "checkpoint", "-o", "-"]);
    assert_eq!(piped.stdout, first);
    // A new step changes it.
    w.ok(&["--session", &s, "read", "README"]);
    w.checkpoint_to(&s, &other);
    assert_ne!(std::fs::read(&other).unwrap(), first);
}

#[test]
fn a_checkpoint_writes_again_a_subtree_a_crash_left_empty() {
    // A power cut can leave a loose tree's name on disk without its bytes: here the `files/`
    // tree of an earlier checkpoint. The next checkpoint removes it and must write it again,
    // not just the root tree that names it.
    let w = World::new();
    let (s, artifact) = session_with_work(&w);
    let first = std::fs::read(&artifact).unwrap();
    let heads = w.git(&["bundle", "list-heads", artifact.to_str().unwrap()]);
    let commit = heads.split_whitespace().next().unwrap().to_owned();
    let files = w.store_git(&["rev-parse", &format!("{commit}:files")]);
    let object = w.empty_loose_object(&files);
    let again = w.base().join("again.bundle");
    let out = w.run(&["--session", &s, "checkpoint", "-o", again.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read(&again).unwrap(), first);
    assert!(std::fs::metadata(&object).unwrap().len() > 0);
}

#[test]
fn inspect_shows_the_manifest_and_the_warning() {
    let w = World::new();
    let (s, artifact) = session_with_work(&w);
    let out = w
        .stella_in(&w.home)
        .args(["inspect", artifact.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with(&format!(
            "format      1\nsession     {s}\nbase        {}\n",
            w.git(&["rev-parse", "HEAD"])
        )),
        "{text}"
    );
    assert!(text.contains("files       3\n"), "{text}");
    assert!(text.contains("  src/new.rs\n"), "{text}");
    assert!(stderr(&out).starts_with("warning: This artifact holds the conversation verbatim"));
    let json: serde_json::Value =
        serde_json::from_str(&w.ok(&["inspect", "--json", artifact.to_str().unwrap()])).unwrap();
    assert_eq!(json["format"], 1);
    assert_eq!(json["fingerprint"].as_array().unwrap().len(), 3);
    assert!(
        json["warning"]
            .as_str()
            .unwrap()
            .contains("Stella does not encrypt, redact")
    );
}

#[test]
fn inspect_refuses_what_is_not_an_artifact() {
    let w = World::new();
    let dir = w.base();
    let garbage = dir.join("garbage");
    std::fs::write(&garbage, b"\x00\x01 random bytes that are no bundle").unwrap();
    let empty = dir.join("empty");
    std::fs::write(&empty, b"").unwrap();
    let plain = dir.join("plain.bundle");
    w.git(&[
        "bundle",
        "create",
        "-q",
        plain.to_str().unwrap(),
        "HEAD",
        "main",
    ]);
    let v3 = dir.join("v3.bundle");
    std::fs::write(&v3, b"# v3 git bundle\n@object-format=sha1\n\n").unwrap();
    for (file, why) in [
        (&garbage, "it is not a git bundle"),
        (&empty, "the file ends where a git bundle header belongs"),
        (
            &plain,
            "the bundle holds 2 refs, none under refs/stella/checkpoints/: it is a plain git bundle",
        ),
        (
            &v3,
            "it is a v3 git bundle; Stella artifacts are v2 bundles",
        ),
    ] {
        let out = w.run(&["inspect", file.to_str().unwrap()]);
        assert_eq!(code(&out), 2);
        assert_eq!(
            stderr(&out),
            format!("error: not a Stella artifact: {why}\n")
        );
    }
    let one_ref = dir.join("one.bundle");
    w.git(&["bundle", "create", "-q", one_ref.to_str().unwrap(), "main"]);
    let out = w.run(&["inspect", one_ref.to_str().unwrap()]);
    assert_eq!(
        stderr(&out),
        "error: not a Stella artifact: the bundle's ref is 'refs/heads/main', not one under refs/stella/checkpoints/: it is a plain git bundle\n"
    );
    let missing = w.run(&["inspect", "nope.bundle"]);
    assert_eq!(code(&missing), 2);
    assert!(stderr(&missing).starts_with("error: could not read the artifact\n"));
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
fn checkpoint_takes_the_hosts_transcript_as_it_is_now() {
    let w = World::new();
    let transcript = w.base().join("host-1.jsonl");
    std::fs::write(&transcript, "{\"type\":\"user\"}\n").unwrap();
    let payload = serde_json::json!({
        "session_id": "host-1",
        "transcript_path": transcript,
        "cwd": w.repo,
        "hook_event_name": "SessionStart",
        "source": "startup",
    });
    let out = w.run_stdin(&["hook", "claude-code"], payload.to_string().as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // The host appends after its last hook call, and fires no Stop before the checkpoint.
    let full = "{\"type\":\"user\"}\n{\"type\":\"assistant\",\"late\":true}\n";
    std::fs::write(&transcript, full).unwrap();
    let artifact = w.base().join("host.bundle");
    w.checkpoint_to("host-1", &artifact);
    let json: serde_json::Value =
        serde_json::from_str(&w.ok(&["inspect", "--json", artifact.to_str().unwrap()])).unwrap();
    assert_eq!(json["transcripts"]["host-1.jsonl"], full.len());
    let fresh = w.bare_with(&artifact, "refs/stella/*:refs/stella/*");
    let stored = git_in(
        &fresh,
        &w.home,
        &[
            "show",
            "refs/stella/checkpoints/host-1:transcript/host-1.jsonl",
        ],
    );
    assert_eq!(stored + "\n", full);
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
fn log_graph_draws_forks_and_replays_once() {
    let w = World::new();
    w.write("a.txt", "one\n");
    w.git(&["add", "a.txt"]);
    w.git(&["commit", "-q", "-m", "a"]);
    w.ok(&["session", "start", "--id", "origin"]);
    w.ok(&["--session", "origin", "read", "a.txt"]);
    let artifact = w.base().join("origin.stella");
    w.checkpoint_to("origin", &artifact);
    let there = World::clone_of(&w);
    let a = artifact.to_str().unwrap();
    there.ok(&["replay", a, "--as", "fork-1"]);
    there.ok(&["replay", a, "--as", "fork-2"]);
    there.ok_stdin(&["--session", "fork-1", "write", "a.txt"], b"first\n");
    there.ok(&["--session", "fork-2", "read", "a.txt"]);
    there.ok(&["session", "start", "--id", "alone"]);

    let graph = there.ok(&["log", "--graph"]);
    // The origin's steps, shared by both forks, are drawn once; each fork once.
    for step in [
        "session start",
        "read a.txt",
        "checkpoint of session origin",
    ] {
        let lines: Vec<&str> = graph
            .lines()
            .filter(|l| l.ends_with(step) && !l.contains(") "))
            .collect();
        assert_eq!(lines.len(), 1, "{graph}");
    }
    assert_eq!(
        graph.matches("replay of session origin").count(),
        2,
        "{graph}"
    );
    for label in [
        "(fork-1) write a.txt",
        "(fork-2) read a.txt",
        "(alone) session start",
    ] {
        assert_eq!(graph.matches(label).count(), 1, "{graph}");
    }
    // The forks branch where the checkpoint is: git's graph joins them there.
    assert!(graph.contains("|/"), "{graph}");
    let plain = there.ok(&["log"]);
    assert_eq!(
        plain.matches("checkpoint of session origin").count(),
        2,
        "{plain}"
    );

    // One session: its own line, back through the replay into the origin.
    let one = there.ok(&["log", "--graph", "fork-2"]);
    assert_eq!(
        one.lines()
            .map(|l| l.split_once(' ').unwrap().0)
            .collect::<Vec<_>>(),
        ["*"; 5],
        "{one}"
    );
    assert!(!one.contains("fork-1"), "{one}");
    let out = there.run(&["log", "--graph", "--json"]);
    assert_eq!(code(&out), 2, "--graph draws; --json does not");
}
