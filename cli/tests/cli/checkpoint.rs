//! `git stella checkpoint`: the artifact it writes, with stock git as the oracle (`git bundle
//! verify`, `git fetch`, `git fsck`), the same bytes for the same session, the host's transcript as
//! it is now (and hostile transcripts: a device, a FIFO, a file past the cap), what is said when it
//! cannot be written, and a checkpoint killed half-way.

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common::*;
use crate::kill::*;

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

/// The host session id the Claude Code fixtures carry.
const SID: &str = "e6c55faa-d7b7-44f5-8458-fd227d2da938";

/// A captured Claude Code payload with its paths moved into `w`'s repository and home.
fn claude_fixture(w: &World, name: &str) -> Value {
    serde_json::from_str(&claude_fixture_text(w, name)).unwrap()
}

/// Run `git stella hook claude-code` on `payload`: exit 0, and its stderr.
fn claude_hook(w: &World, payload: &Value) -> String {
    let out = w.run_stdin(&["hook", "claude-code"], payload.to_string().as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    stderr(&out)
}

/// Run `cmd` to its end, or kill it after `limit` and fail: a hang is the bug.
fn finishes_within(mut cmd: Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let ended = eventually(limit, || child.try_wait().unwrap().is_some());
    if !ended {
        let _ = child.kill();
    }
    let out = child.wait_with_output().unwrap();
    assert!(ended, "{cmd:?} still ran after {limit:?}: {}", stderr(&out));
    out
}

/// `checkpoint` of the fixtures' session, which must finish quickly and succeed: its stderr, and
/// the transcripts the artifact lists.
fn checkpoint_of_host_session(w: &World) -> (String, Value) {
    let artifact = w.base().join("host.stella.bundle");
    let mut cmd = w.stella();
    cmd.args([
        "--session",
        SID,
        "checkpoint",
        "-o",
        artifact.to_str().unwrap(),
    ]);
    let out = finishes_within(cmd, Duration::from_secs(5));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let json: Value =
        serde_json::from_str(&w.ok(&["inspect", "--json", artifact.to_str().unwrap()])).unwrap();
    (stderr(&out), json["transcripts"].clone())
}

fn checkpoint_says(w: &World) -> String {
    format!(
        "stella: checkpoint of session {SID}: 0 files; base commit {} is recorded, not carried: changes outside these files are not in the artifact\n",
        w.git(&["rev-parse", "HEAD"])
    )
}

#[test]
fn a_checkpoint_killed_at_any_point_leaves_no_file_and_no_git_running() {
    let w = World::new();
    let s = session_holding_megabytes(&w, 8);
    let store = w.store();
    // The complete artifact, for comparison: an unchanged session checkpoints to these bytes.
    let reference = w.base().join("reference.stella.bundle");
    w.checkpoint_to(&s, &reference);
    let reference = std::fs::read(reference).unwrap();
    let before = tree_files(&w.repo);
    let output = w.repo.join("agent.stella.bundle");
    let checkpoint = || {
        let mut cmd = w.stella();
        cmd.args(["--session", &s, "checkpoint", "-o", "agent.stella.bundle"]);
        cmd
    };
    let mut caught = 0;
    let delays = [0, 2, 5, 10, 20, 40, 70, 100, 150, 200, 300];
    // Then until git pack-objects was caught mid-work three times (a run may finish first).
    let runs = delays
        .iter()
        .map(|ms| (Duration::from_millis(*ms), None))
        .chain((0..10).map(|_| (Duration::ZERO, Some(&["pack-objects"][..]))));
    for (delay, catch) in runs {
        if catch.is_some() && caught == 3 {
            break;
        }
        if kill_and_check(checkpoint(), delay, catch, &store) {
            caught += 1;
        }
        let mut after = tree_files(&w.repo);
        if let Some(i) = after.iter().position(|(p, _)| *p == output) {
            // Killed after the name was given: then the file is whole.
            assert!(
                after[i].1 == reference,
                "{delay:?}: a partial artifact has the name"
            );
            after.remove(i);
            std::fs::remove_file(&output).unwrap();
        }
        // The fallback other systems run (no O_TMPFILE) writes a named temp file, which a kill
        // leaves behind by design (docs/install.md, Platforms); only under that test switch is it allowed.
        if std::env::var_os("STELLA_TEST_PORTABLE_FS").is_some() {
            after.retain(|(p, _)| {
                let left = p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(".stella-tmp-"));
                if left {
                    let _ = std::fs::remove_file(p);
                }
                !left
            });
        }
        assert_eq!(
            after.iter().map(|(p, _)| p).collect::<Vec<_>>(),
            before.iter().map(|(p, _)| p).collect::<Vec<_>>(),
            "killed after {delay:?}: files appeared in the tree"
        );
    }
    assert_eq!(
        caught, 3,
        "git pack-objects was not caught running three times"
    );
    assert_store_fsck_clean(&w);
    // And the session still checkpoints to the same bytes.
    w.ok(&["--session", &s, "checkpoint", "-o", "agent.stella.bundle"]);
    assert!(std::fs::read(&output).unwrap() == reference);
}

#[test]
fn a_transcript_path_naming_dev_zero_is_skipped_not_read_forever() {
    let w = World::new();
    let mut start = claude_fixture(&w, "SessionStart-startup.json");
    start["transcript_path"] = "/dev/zero".into();
    assert_eq!(claude_hook(&w, &start), "");
    let (said, transcripts) = checkpoint_of_host_session(&w);
    assert_eq!(
        said,
        "warning: transcript '/dev/zero' was not taken: it is not a regular file; the artifact carries no copy of it\n"
            .to_owned()
            + &checkpoint_says(&w)
    );
    assert_eq!(transcripts, serde_json::json!({}));
    // Named by hand, it is an error at once.
    w.ok(&["--session", SID, "turn", "begin"]);
    let mut cmd = w.stella();
    cmd.args(["--session", SID, "step", "--transcript", "/dev/zero"]);
    let out = finishes_within(cmd, Duration::from_secs(5));
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        "error: the transcript '/dev/zero' was not taken\ncaused by: it is not a regular file\n"
    );
}

#[test]
fn a_transcript_path_naming_a_fifo_is_skipped_without_hanging() {
    let w = World::new();
    let fifo = w.base().join(format!("{SID}.jsonl"));
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let mut start = claude_fixture(&w, "SessionStart-startup.json");
    start["transcript_path"] = fifo.to_str().unwrap().into();
    assert_eq!(claude_hook(&w, &start), "");
    let (said, transcripts) = checkpoint_of_host_session(&w);
    assert_eq!(
        said,
        format!(
            "warning: transcript '{}' was not taken: it is not a regular file; the artifact carries no copy of it\n",
            fifo.display()
        ) + &checkpoint_says(&w)
    );
    assert_eq!(transcripts, serde_json::json!({}));
}

#[test]
fn a_transcript_past_the_cap_is_skipped_and_the_stored_copy_travels() {
    let w = World::new();
    let (transcript, sample) = claude_transcript(&w);
    std::fs::write(&transcript, &sample).unwrap();
    assert_eq!(
        claude_hook(&w, &claude_fixture(&w, "SessionStart-startup.json")),
        ""
    );
    // The file grows past the cap (sparse: no disk is spent on it).
    let cap = stella::session::turn::MAX_TRANSCRIPT_BYTES;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&transcript)
        .unwrap()
        .set_len(cap + 1)
        .unwrap();
    let warning = format!(
        "stella: warning: the transcript '{}' was not stored: it holds {} bytes, more than the {cap} bytes a transcript may hold\n",
        transcript.display(),
        cap + 1
    );
    // The hooks go on without it: the turn begins and ends.
    assert_eq!(
        claude_hook(&w, &claude_fixture(&w, "UserPromptSubmit.json")),
        warning
    );
    assert_eq!(claude_hook(&w, &claude_fixture(&w, "Stop.json")), warning);
    let resume = w.ok(&["--session", SID, "resume"]);
    assert!(resume.contains("no open turn"), "{resume}");
    let (said, transcripts) = checkpoint_of_host_session(&w);
    assert_eq!(
        said,
        format!(
            "warning: transcript '{}' was not taken: it holds {} bytes, more than the {cap} bytes a transcript may hold; the artifact carries the copy the session stored last\n",
            transcript.display(),
            cap + 1
        ) + &checkpoint_says(&w)
    );
    assert_eq!(
        transcripts,
        serde_json::json!({ format!("{SID}.jsonl"): sample.len() })
    );
}
