//! `git stella checkpoint`: the artifact it writes, with stock git as the oracle (`git bundle
//! verify`, `git fetch`, `git fsck`), the same bytes for the same session, the host's transcript as
//! it is now, and what is said when it cannot be written.

use std::process::{Command, Stdio};

use crate::common::*;

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
fn a_checkpoint_that_cannot_be_written_says_so() {
    let w = World::new();
    w.write("a.txt", "alpha\n");
    w.ok(&["session", "start", "--id", "s"]);
    w.ok(&["--session", "s", "read", "a.txt"]);
    let full = std::fs::File::options()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let mut cmd = w.stella();
    cmd.args(["--session", "s", "checkpoint", "-o", "-"])
        .stdout(Stdio::from(full));
    let out = cmd.output().unwrap();
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out)
            .starts_with("error: could not write the artifact\ncaused by: No space left on device"),
        "{}",
        stderr(&out)
    );
}
