//! Checkpoint and replay under attack: killed half-way, fed hostile transcripts, malformed and
//! raced artifacts, and artifacts whose every string tries to drive the terminal.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::*;

/// Bytes that do not compress, so packing them takes a while.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// A session that read `n` files of 512 KiB of noise; returns its id.
fn session_holding_megabytes(w: &World, n: usize) -> String {
    let mut names = Vec::new();
    for i in 0..n {
        let name = format!("data/blob-{i}.bin");
        std::fs::create_dir_all(w.repo.join("data")).unwrap();
        std::fs::write(w.repo.join(&name), noise(i as u64 + 7, 512 << 10)).unwrap();
        names.push(name);
    }
    let s = w.start();
    let mut args = vec!["--session", s.as_str(), "read"];
    args.extend(names.iter().map(String::as_str));
    w.ok(&args);
    s
}

/// The processes `pid` started (its children, from every thread).
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for t in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(t.path().join("children")) {
            out.extend(
                text.split_whitespace()
                    .filter_map(|c| c.parse::<u32>().ok()),
            );
        }
    }
    out
}

/// Whether `pid` is a live process (a zombie waiting to be reaped is not).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
        Err(_) => false,
    }
}

/// Live processes whose command line or environment names `needle` (git's helpers get the store
/// as `GIT_DIR`), other than this test itself.
fn processes_naming(needle: &str) -> Vec<(u32, String)> {
    let me = std::process::id();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me || !alive(pid) {
            continue;
        }
        let read = |f: &str| std::fs::read(e.path().join(f)).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&read("cmdline")).replace('\0', " ");
        let environ = String::from_utf8_lossy(&read("environ")).into_owned();
        if cmdline.contains(needle) || environ.contains(needle) {
            out.push((pid, cmdline));
        }
    }
    out
}

fn kill(pid: u32, signal: i32) {
    // SAFETY: a plain kill(2) on a pid this test started or recorded.
    unsafe { libc::kill(pid as libc::pid_t, signal) };
}

/// Wait until `done` holds, up to `limit`.
fn eventually(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if done() {
            return true;
        }
        if start.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Kill `cmd`'s process with SIGKILL, either after `delay` or, when `catch_child` holds words,
/// once a child runs whose command line has one of them (the child is stopped first, so it is
/// still mid-work when its parent dies). Then check that no child it started outlives it, and that no
/// process still names `store`. Returns whether a child was caught.
fn kill_and_check(
    mut cmd: Command,
    delay: Duration,
    catch_child: Option<&[&str]>,
    store: &Path,
) -> bool {
    let mut child: Child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut caught = None;
    match catch_child {
        None => std::thread::sleep(delay),
        Some(words) => {
            let start = Instant::now();
            while caught.is_none() && start.elapsed() < Duration::from_secs(20) {
                if child.try_wait().unwrap().is_some() {
                    break;
                }
                caught = children(pid).into_iter().find(|c| {
                    std::fs::read(format!("/proc/{c}/cmdline")).is_ok_and(|l| {
                        String::from_utf8_lossy(&l)
                            .split('\0')
                            .any(|a| words.contains(&a))
                    })
                });
            }
            if let Some(c) = caught {
                kill(c, libc::SIGSTOP);
            }
        }
    }
    let started = children(pid);
    kill(pid, libc::SIGKILL);
    child.wait().unwrap();
    let survivors = |pids: &[u32]| {
        pids.iter()
            .copied()
            .filter(|p| alive(*p))
            .collect::<Vec<_>>()
    };
    let gone = eventually(Duration::from_secs(3), || survivors(&started).is_empty());
    let left = survivors(&started);
    let naming = processes_naming(store.to_str().unwrap());
    // Never leave a stray process behind, whatever the verdict.
    for p in left.iter().chain(naming.iter().map(|(p, _)| p)) {
        kill(*p, libc::SIGKILL);
    }
    assert!(
        gone,
        "children of the killed process (killed after {delay:?}) outlived it: {left:?}"
    );
    assert!(
        naming.is_empty(),
        "processes still work on the store: {naming:?}"
    );
    caught.is_some()
}

/// Every file under `dir` except git's own folder, with its bytes.
fn tree_files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    listing(dir)
        .into_iter()
        .filter(|p| !p.starts_with(dir.join(".git")) && p.is_file())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect()
}

/// `git fsck` of the store: no error, no missing or corrupt object.
fn assert_store_fsck_clean(w: &World) {
    let store = w.store();
    let mut cmd = Command::new("git");
    clean_env(&mut cmd, &w.home, &w.stella_home);
    let out = cmd
        .arg("--git-dir")
        .arg(&store)
        .args(["fsck", "--strict", "--no-dangling", "--no-progress"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git fsck: {}{}",
        stdout(&out),
        stderr(&out)
    );
    assert_eq!(stdout(&out), "", "git fsck: {}", stderr(&out));
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

/// A manifest whose every string tries to drive the terminal or forge a line of its own.
const HOSTILE_MANIFEST: &str = r#"format = 1
session = "evil\u001b[31m\r\nrefusing to write: README"
base = "cafe\u001b]0;pwned\u0007"
object_format = "sha1"
producer = "forge\u001b[2J"
started = "2026\r\n"
last_step = "\u001b[1A"
steps = 1
needs_reread = ["re\u001bread\nrefusing to write: x"]

[transcripts]
"t\u001b.jsonl" = 3

[[provenance]]
session = "prior\u001b[31m\nx"
artifact = "ab\u001bcdééééééééééé"
replayed = "when\r"
"#;

/// Human output: no escape byte, no carriage return, exactly `lines` lines, none of them forged.
fn assert_tame(what: &str, text: &str, lines: usize) {
    assert!(
        !text.contains('\x1b'),
        "{what}: an escape reached the terminal: {text:?}"
    );
    assert!(
        !text.contains('\r'),
        "{what}: a carriage return reached the terminal: {text:?}"
    );
    assert!(
        !text.contains('\x07'),
        "{what}: a bell reached the terminal: {text:?}"
    );
    assert_eq!(
        text.lines().count(),
        lines,
        "{what}: lines were split: {text}"
    );
    assert!(
        !text.lines().any(|l| l.starts_with("refusing to write")),
        "{what}: a forged line: {text}"
    );
}

#[test]
fn strings_from_an_artifact_never_reach_the_terminal_raw() {
    let w = World::new();
    let forge = Forge::new(&w);
    let names: [&[u8]; 3] = [b"cr\r.txt", b"nl\n.txt", b"red\x1b[31m.txt"];
    let mut entries: Vec<(&str, &[u8], String)> = Vec::new();
    let mut fingerprint = String::new();
    for (i, name) in names.iter().enumerate() {
        let bytes = format!("file {i}\n");
        entries.push(("100644", name, forge.blob(bytes.as_bytes())));
        let shown = String::from_utf8(name.to_vec()).unwrap();
        if shown.contains('\n') {
            fingerprint += &format!(
                "\\{}  {}\n",
                b3(bytes.as_bytes()),
                shown.replace('\n', "\\n")
            );
        } else {
            fingerprint += &format!("{}  {shown}\n", b3(bytes.as_bytes()));
        }
    }
    let entries: Vec<(&str, &[u8], &str)> = entries
        .iter()
        .map(|(m, n, id)| (*m, *n, id.as_str()))
        .collect();
    let files = forge.tree(&entries);
    let artifact = forge.artifact(HOSTILE_MANIFEST, &fingerprint, Some(&files));
    let a = artifact.to_str().unwrap();

    let out = w.run(&["inspect", a]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // format, session, base, producer, started, last step, replayed, transcript, objects, files,
    // three files, one re-read.
    assert_tame("inspect", &stdout(&out), 14);
    assert_tame("inspect's warning", &stderr(&out), 1);
    assert!(stdout(&out).contains("session     evil\\x1b[31m\\r\\nrefusing to write: README\n"));
    assert!(
        stdout(&out).contains("  red\\x1b[31m.txt\n"),
        "{}",
        stdout(&out)
    );
    // JSON keeps the strings as they are; serde escapes them.
    let out = w.run(&["inspect", "--json", a]);
    assert_eq!(code(&out), 0);
    assert!(!stdout(&out).contains('\x1b'));
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["session"], "evil\x1b[31m\r\nrefusing to write: README");
    assert_eq!(json["fingerprint"][1]["path"], "nl\n.txt");

    let out = w.run(&["verify", a]);
    assert_eq!(code(&out), 1);
    assert_tame("verify", &stderr(&out), 4);
    let out = w.run(&["replay", a]);
    assert_eq!(code(&out), 1);
    assert_tame("replay", &stderr(&out), 5);
    assert!(
        stderr(&out).contains("  deleted    nl\\n.txt\n"),
        "{}",
        stderr(&out)
    );

    let out = w.run(&["replay", "--materialize", a]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // The summary, what was written, and that HEAD is not the base.
    assert_tame("replay --materialize", &stderr(&out), 3);
    assert_tame("replay's id", &stdout(&out), 1);
    assert!(stderr(&out).contains(
        "stella: wrote 3 files of session evil\\x1b[31m\\r\\nrefusing to write: README; it was made against base commit cafe\\x1b]0;pwned\\x07,"
    ), "{}", stderr(&out));
    for name in names {
        let name = std::ffi::OsStr::new(std::str::from_utf8(name).unwrap());
        assert!(w.repo.join(name).is_file(), "{name:?} was not written");
    }
    let id = stdout(&out).trim().to_owned();
    // What the new session remembers of its origin is escaped wherever a person reads it.
    let list = w.ok(&["session", "list"]);
    assert_tame("session list", &list, 2);
    let log = w.ok(&["log", &id]);
    // The replay step, and the forged tip it descends from.
    assert_tame("log", &log, 2);
    let plain = w.store_git(&["log", "--format=%s", &format!("refs/stella/sessions/{id}")]);
    assert!(
        !plain.contains('\x1b') && !plain.contains('\r'),
        "{plain:?}"
    );
    // An error quoting the file escapes it too: a plain bundle whose ref name is hostile.
    let bundle = w.base().join("plain.bundle");
    let mut bytes = format!(
        "# v2 git bundle\n{} refs/heads/\x1b[31mx\rrefusing to write: y\n\n",
        "a".repeat(40)
    )
    .into_bytes();
    bytes.extend_from_slice(b"PACK");
    std::fs::write(&bundle, bytes).unwrap();
    let out = w.run(&["inspect", bundle.to_str().unwrap()]);
    assert_eq!(code(&out), 2);
    assert_tame("inspect's error", &stderr(&out), 1);
}
