//! Fail closed, lose nothing: each scenario an adversarial run broke, run again as it was found.
//!
//! Not per command: each runs whatever commands the scenario ran, and what it checks (a damaged
//! or repaired store, a race, a fifo, the environment) holds for every command.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

/// The path of the loose object `id` in the store.
fn loose(w: &World, id: &str) -> PathBuf {
    w.store().join("objects").join(&id[..2]).join(&id[2..])
}

/// Session `id` reads `t.txt` and `d.txt`, then loses its map object (what a power cut leaves
/// when the ref reached the disk and the step's objects did not), then `t.txt` changes: the map
/// object's id.
fn damaged_session(w: &World, id: &str) -> String {
    w.ok(&["session", "start", "--id", id]);
    w.write("t.txt", "ours\n");
    w.write("d.txt", "keep\n");
    w.ok(&["--session", id, "read", "t.txt", "d.txt"]);
    let map = w.store_git(&[
        "rev-parse",
        &format!("refs/stella/sessions/{id}^{{tree}}:map"),
    ]);
    std::fs::remove_file(loose(w, &map)).unwrap();
    w.write("t.txt", "theirs\n");
    map
}

#[test]
fn a_map_that_cannot_be_read_whole_stops_every_write() {
    // Each way in finds the damage itself: it repairs the session and does nothing else.
    for (i, (args, stdin)) in [
        (vec!["guard", "t.txt"], &b""[..]),
        (vec!["write", "t.txt"], &b"mine\n"[..]),
        (vec!["rm", "d.txt"], &b""[..]),
    ]
    .into_iter()
    .enumerate()
    {
        let w = World::new();
        let s = format!("s{i}");
        let map = damaged_session(&w, &s);
        let mut full = vec!["--session", s.as_str()];
        full.extend(&args);
        let out = w.run_stdin(&full, stdin);
        let err = stderr(&out);
        assert_eq!(code(&out), 2, "{args:?}: {err}");
        assert!(err.contains(&map), "{err}");
        assert!(
            err.starts_with(&format!(
                "error: repaired session '{s}': step 2 was lost in a crash; re-read the files before writing; this command did nothing else\n"
            )),
            "{err}"
        );
        assert_eq!(w.read("t.txt"), "theirs\n");
        assert_eq!(w.read("d.txt"), "keep\n");
    }
}

#[test]
fn the_command_after_a_repair_runs_on_the_newest_whole_step_and_the_lost_steps_are_named() {
    let w = World::new();
    let map = damaged_session(&w, "s");
    w.write("n.txt", "new\n");
    let lost = w.store_git(&["rev-parse", "refs/stella/sessions/s"]);
    let before = w.store_git(&["rev-parse", "refs/stella/sessions/s~1"]);

    let guard = w.run(&["--session", "s", "guard", "t.txt"]);
    assert_eq!(code(&guard), 2);
    assert_eq!(
        stderr(&guard),
        format!(
            "error: repaired session 's': step 2 was lost in a crash; re-read the files before writing; this command did nothing else
  lost step 2 ({}): read 2 paths: t.txt, d.txt
  session 's' now stands at step 2 (repair: forgot every file; each must be read again before it is changed)
caused by: the journal's object '{map}' is missing or corrupt
caused by: An object with id {map} could not be found
",
            &lost[..12]
        )
    );
    // The ref stands on the newest whole step, one step saying what the session forgot on top,
    // and its reflog says why.
    assert_eq!(
        w.store_git(&["rev-parse", "refs/stella/sessions/s~1"]),
        before
    );
    assert_eq!(
        w.store_git(&["log", "-g", "-1", "--format=%gs", "refs/stella/sessions/s"]),
        "repair: step 2 was lost in a crash: 2 'read 2 paths: t.txt, d.txt'"
    );
    fsck_clean(&w);

    // The next command runs on the repaired session. The lost step's map is gone, so nobody can
    // say which files it held: every existing file needs a read before it changes, and a file
    // that does not exist yet may be created.
    for (args, stdin) in [
        (vec!["guard", "t.txt"], &b""[..]),
        (vec!["write", "n.txt"], &b"mine\n"[..]),
        (vec!["rm", "d.txt"], &b""[..]),
    ] {
        let mut full = vec!["--session", "s"];
        full.extend(&args);
        let out = w.run_stdin(&full, stdin);
        assert_eq!(code(&out), 1, "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out)
                .contains("may be a file this session knew before its memory of it was lost"),
            "{}",
            stderr(&out)
        );
    }
    assert_eq!(w.read("t.txt"), "theirs\n");
    assert_eq!(w.read("d.txt"), "keep\n");
    assert_eq!(w.read("n.txt"), "new\n");
    w.ok_stdin(&["--session", "s", "write", "created.txt"], b"fresh\n");
    w.ok(&["--session", "s", "read", "t.txt"]);
    w.ok_stdin(&["--session", "s", "write", "t.txt"], b"mine\n");
    w.write("t.txt", "someone else\n");
    let refused = w.run_stdin(&["--session", "s", "write", "t.txt"], b"again\n");
    assert_eq!(code(&refused), 1, "{}", stderr(&refused));
    assert_eq!(w.read("t.txt"), "someone else\n");
}

/// A lost step whose map survived names its paths: only those need a read again.
#[test]
fn a_repair_forgets_only_the_paths_of_the_lost_steps_when_their_map_survived() {
    let w = World::new();
    session(&w);
    w.write("kept.txt", "kept\n");
    w.write("t.txt", "ours\n");
    w.write("other.txt", "other\n");
    w.ok(&["--session", "s", "read", "kept.txt"]);
    w.ok(&["--session", "s", "read", "t.txt"]);
    // The lost step's bytes of t.txt are gone; its map, naming t.txt, is whole.
    let blob = w.git(&["hash-object", "t.txt"]);
    std::fs::remove_file(loose(&w, &blob)).unwrap();
    w.write("t.txt", "theirs\n");
    // A checkpoint reads every object of the session, and so finds the damage.
    let artifact = w.base().join("s.bundle");
    let out = w.run(&[
        "--session",
        "s",
        "checkpoint",
        "-o",
        artifact.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("now stands at step 3 (repair: forgot 1 path the lost steps held"),
        "{}",
        stderr(&out)
    );
    // t.txt was held by the lost step: a read first. Files it never held are judged as before.
    let out = w.run_stdin(&["--session", "s", "write", "t.txt"], b"mine\n");
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("refusing to write: t.txt"),
        "{}",
        stderr(&out)
    );
    w.ok_stdin(&["--session", "s", "write", "kept.txt"], b"mine\n");
    w.ok_stdin(&["--session", "s", "write", "other.txt"], b"mine\n");
    assert_eq!(w.read("t.txt"), "theirs\n");
}

#[test]
fn a_session_with_no_whole_step_fails_every_time_and_never_reads_as_empty() {
    let w = World::new();
    w.ok(&["session", "start", "--id", "s"]);
    w.write("t.txt", "x\n");
    w.ok(&["--session", "s", "read", "t.txt"]);
    // Both steps broken: the first has lost its commit, the second its map.
    for object in [
        "refs/stella/sessions/s~1",
        "refs/stella/sessions/s^{tree}:map",
    ] {
        let id = w.store_git(&["rev-parse", object]);
        std::fs::remove_file(loose(&w, &id)).unwrap();
    }
    for _ in 0..2 {
        let out = w.run(&["--session", "s", "status"]);
        assert_eq!(code(&out), 2, "{}", stderr(&out));
        assert!(
            stderr(&out).starts_with(
                "error: session 's' has no whole step left: steps 1..2 were lost in a crash; nothing was done\n"
            ),
            "{}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains("hint: 'git stella session drop s' removes it"),
            "{}",
            stderr(&out)
        );
    }
    // Dropped, it is removed rather than set aside (nothing whole could come back), and gc,
    // which stops at a ref whose objects are missing, still runs.
    let out = w.run(&["session", "drop", "s"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains("its journal was damaged, so it was removed rather than kept for undrop"),
        "{}",
        stderr(&out)
    );
    assert_eq!(w.ok(&["session", "list", "--dropped"]), "");
    w.ok(&["gc", "--grace", "0"]);
    w.ok(&["session", "start", "--id", "s"]);
    w.ok(&["--session", "s", "read", "t.txt"]);
}

#[test]
fn a_torn_or_lost_ref_is_restored_from_its_reflog() {
    let w = World::new();
    let s = session(&w);
    w.write("t.txt", "ours\n");
    w.ok(&["--session", &s, "read", "t.txt"]);
    let tip = w.store_git(&["rev-parse", "refs/stella/sessions/s"]);
    let reff = w.store().join("refs/stella/sessions/s");
    for damage in ["torn", "lost"] {
        match damage {
            "torn" => std::fs::write(&reff, "").unwrap(),
            _ => std::fs::remove_file(&reff).unwrap(),
        }
        // Never a new session that tracks nothing: the command fails and restores the ref.
        let out = w.run(&["--session", &s, "status"]);
        assert_eq!(code(&out), 2, "{damage}: {}", stderr(&out));
        assert!(
            stderr(&out).starts_with(
                "error: repaired session 's': its ref did not survive a crash and was restored from its reflog; no step was lost; this command did nothing else: run it again\n"
            ),
            "{}",
            stderr(&out)
        );
        assert_eq!(w.store_git(&["rev-parse", "refs/stella/sessions/s"]), tip);
        assert_eq!(w.ok(&["--session", &s, "status"]), "unchanged  t.txt");
    }
}

#[test]
fn the_hook_denies_a_write_the_repaired_session_may_have_known() {
    // No fail-closed: the deny is the guard's own answer, not a failed hook's.
    let w = World::new();
    w.write("notes.txt", "alpha\nbeta\n");
    for f in ["SessionStart-startup.json", "PostToolUse-Read.json"] {
        let out = feed(
            {
                let mut c = w.stella();
                c.args(["hook", "claude-code"]);
                c
            },
            claude_fixture_text(&w, f).as_bytes(),
        );
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let sid = "e6c55faa-d7b7-44f5-8458-fd227d2da938";
    let map = w.store_git(&[
        "rev-parse",
        &format!("refs/stella/sessions/{sid}^{{tree}}:map"),
    ]);
    std::fs::remove_file(loose(&w, &map)).unwrap();
    w.write("notes.txt", "alpha\nbetamax\n");
    let pre = claude_fixture_text(&w, "PreToolUse-Write.json").replace("new.txt", "notes.txt");
    let mut c = w.stella();
    c.args(["hook", "claude-code"]);
    let out = feed(c, pre.as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    let reason = v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    // The repair left the session whole, knowing it forgot what the lost step held: the call is
    // judged on it, and the repair is said on stderr.
    assert!(reason.contains("memory of it was lost"), "{reason}");
    assert!(
        stderr(&out).contains("repaired session") && stderr(&out).contains(&map),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_full_store_changes_nothing_in_the_tree() {
    if !can_mount_tmpfs() {
        return;
    }
    let w = World::new();
    let content = w.base().join("content");
    std::fs::write(&content, vec![b'x'; 200_000]).unwrap();
    // Everything runs inside one mount namespace: the store lives on a 2 MiB tmpfs, which is
    // filled to the last byte after the session has read its files.
    let script = r#"
set -u
mkdir -p "$STELLA_HOME" && mount -t tmpfs -o size=2m tmpfs "$STELLA_HOME" || exit 90
s() { "$BIN" "$@"; }
s session start --id s >/dev/null || exit 91
printf 'old\n' > t.txt; printf 'keep\n' > d.txt
s --session s read t.txt d.txt || exit 92
dd if=/dev/zero of="$STELLA_HOME/filler" bs=4k 2>/dev/null
s --session s write t.txt < "$CONTENT"; echo "write=$?"
s --session s write new.txt < "$CONTENT"; echo "create=$?"
s --session s rm d.txt; echo "rm=$?"
echo "t=$(cat t.txt) d=$(cat d.txt) new=$(test -e new.txt && echo yes || echo no)"
ls -A | grep stella-tmp && echo "temp files left"
rm "$STELLA_HOME/filler"
git --git-dir "$(s store-path)" fsck --strict --no-progress 2>&1 && echo "fsck=ok"
s --session s write t.txt < "$CONTENT"; echo "after=$?"
"#;
    let out = sh_unshared(&w, script, &[("CONTENT", &content)]);
    let text = stdout(&out);
    let errors = stderr(&out);
    assert!(text.contains("write=2\n"), "{text}\n{errors}");
    assert!(text.contains("create=2\n"), "{text}\n{errors}");
    assert!(text.contains("rm=2\n"), "{text}\n{errors}");
    assert!(text.contains("t=old d=keep new=no\n"), "{text}\n{errors}");
    assert!(!text.contains("temp files left"), "{text}");
    assert!(text.contains("fsck=ok\n"), "{text}\n{errors}");
    assert!(text.contains("after=0\n"), "{text}\n{errors}");
    assert!(
        errors.contains("No space left on device"),
        "the error names the cause: {errors}"
    );
}

#[test]
fn two_sessions_racing_on_one_file_have_exactly_one_winner() {
    const TRIALS: usize = 1000;
    let w = World::new();
    w.ok(&["session", "start", "--id", "a"]);
    w.ok(&["session", "start", "--id", "b"]);
    let names: Vec<String> = (0..TRIALS).map(|i| format!("race/f{i}")).collect();
    for n in &names {
        w.write(n, "base\n");
    }
    let mut read = vec!["--session", "", "read"];
    read.extend(names.iter().map(String::as_str));
    for s in ["a", "b"] {
        read[1] = s;
        w.ok(&read);
    }
    let spawn = |s: &str, name: &str| {
        let mut cmd = w.stella();
        cmd.args(["--session", s, "write", name])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(format!("{s}\n").as_bytes())
            .unwrap();
        child
    };
    let mut lost = Vec::new();
    for name in &names {
        let a = spawn("a", name);
        let b = spawn("b", name);
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        let disk = w.read(name);
        match (code(&a), code(&b)) {
            (0, 1) if disk == "a\n" => {}
            (1, 0) if disk == "b\n" => {}
            other => lost.push(format!(
                "{name}: exits {other:?}, disk {disk:?}\n{}{}",
                stderr(&a),
                stderr(&b)
            )),
        }
    }
    assert!(
        lost.is_empty(),
        "{} of {TRIALS} trials had no single winner:\n{}",
        lost.len(),
        lost.join("\n")
    );
    fsck_clean(&w);
}

/// Run `cmd`, killing it if it is not done within `limit`.
fn within(mut cmd: Command, stdin: &[u8], limit: Duration) -> Output {
    use std::io::Write;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(stdin);
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            let mut out = Output {
                status: child.wait().unwrap(),
                stdout: Vec::new(),
                stderr: Vec::new(),
            };
            child
                .stdout
                .take()
                .unwrap()
                .read_to_end(&mut out.stdout)
                .unwrap();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_end(&mut out.stderr)
                .unwrap();
            return out;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("{cmd:?} did not return within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_fifo_at_a_tracked_path_never_hangs_a_command() {
    let w = World::new();
    let s = session(&w);
    w.write("f", "bytes\n");
    w.ok(&["--session", &s, "read", "f"]);
    std::fs::remove_file(w.repo.join("f")).unwrap();
    mkfifo(&w.repo.join("f"));
    let second = Duration::from_secs(1);
    let run = |args: &[&str], stdin: &[u8]| {
        let mut cmd = w.stella();
        cmd.args(["--session", &s]).args(args);
        within(cmd, stdin, second)
    };
    // Per the decision table a path that cannot be read is allowed: the tool's own error says it.
    let guard = run(&["guard", "f"], b"");
    assert_eq!(code(&guard), 0, "{}", stderr(&guard));
    let status = run(&["status"], b"");
    assert_eq!(stdout(&status), "unreadable f\n");
    let read = run(&["read", "f"], b"");
    assert_eq!(code(&read), 2);
    assert!(
        stderr(&read).contains("it is not a regular file"),
        "{}",
        stderr(&read)
    );
    let write = run(&["write", "f"], b"x\n");
    assert_eq!(code(&write), 2);
    assert!(
        stderr(&write).contains("it is not a regular file"),
        "{}",
        stderr(&write)
    );
    assert!(
        w.repo
            .join("f")
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_fifo_like()
    );
    let wrote = run(&["wrote", "f"], b"");
    assert_eq!(code(&wrote), 2);
    // A host's file tool read it: the hook's before- and after-event answer, record nothing.
    let mut post: serde_json::Value =
        serde_json::from_str(&claude_fixture_text(&w, "PostToolUse-Read.json")).unwrap();
    post["tool_input"]["file_path"] = w.repo.join("f").to_str().unwrap().into();
    post["tool_response"]["file"]["content"] = "".into();
    let mut pre = post.clone();
    pre["hook_event_name"] = "PreToolUse".into();
    for payload in [&pre, &post] {
        let mut hook = w.stella();
        hook.args(["hook", "claude-code"]);
        let out = within(hook, payload.to_string().as_bytes(), second);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    // Had the hook recorded the FIFO as read, the host's session would show that step.
    let host = post["session_id"].as_str().unwrap();
    let log = stdout(&w.run(&["log", host]));
    assert!(!log.contains("read f"), "{log}");
    let rm = run(&["rm", "f"], b"");
    assert_eq!(code(&rm), 0, "{}", stderr(&rm));
    assert!(w.repo.join("f").symlink_metadata().is_err());
    fsck_clean(&w);
}

trait FifoLike {
    fn is_fifo_like(&self) -> bool;
}

impl FifoLike for std::fs::FileType {
    fn is_fifo_like(&self) -> bool {
        std::os::unix::fs::FileTypeExt::is_fifo(self)
    }
}

#[test]
fn a_permission_error_during_a_ref_update_surfaces_at_once() {
    use std::os::unix::fs::PermissionsExt;
    let w = World::new();
    let s = session(&w);
    w.write("a", "a\n");
    let refs = w.store().join("refs/stella/sessions");
    std::fs::set_permissions(&refs, std::fs::Permissions::from_mode(0o555)).unwrap();
    let mut cmd = held_to_mode_bits(&w);
    let start = Instant::now();
    let out = cmd.args(["--session", &s, "read", "a"]).output().unwrap();
    let took = start.elapsed();
    std::fs::set_permissions(&refs, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(took < Duration::from_secs(5), "took {took:?}");
    assert!(
        stderr(&out).contains("Permission denied"),
        "the cause is named: {}",
        stderr(&out)
    );
    assert_eq!(w.steps(&s), 1, "nothing was recorded");
}

/// git's variables that point it at another repository, object folder or config (a git hook's
/// environment, a push's quarantine) never redirect the git Stella runs on its store: a read's
/// pack, a checkpoint, a `gc` and a replay's import all land in the store, and nothing in the
/// folders the variables name.
#[test]
fn git_repository_variables_in_the_environment_never_redirect_the_store() {
    let a = World::new();
    for i in 0..20 {
        a.write(&format!("f{i:02}.txt"), &format!("file {i}\n"));
    }
    let stray = a.base().join("stray");
    std::fs::create_dir_all(stray.join("objects")).unwrap();
    let with_env = |w: &World, args: &[&str]| {
        let out = w
            .stella()
            .args(args)
            .env("GIT_OBJECT_DIRECTORY", stray.join("objects"))
            .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", stray.join("objects"))
            .env("GIT_QUARANTINE_PATH", stray.join("objects"))
            .env("GIT_INDEX_FILE", stray.join("index"))
            .env("GIT_CONFIG_PARAMETERS", "'gc.pruneexpire'='now'")
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
        stdout(&out)
    };
    let s = a.start();
    let files: Vec<String> = (0..20).map(|i| format!("f{i:02}.txt")).collect();
    let mut read = vec!["--session", s.as_str(), "read"];
    read.extend(files.iter().map(String::as_str));
    with_env(&a, &read);
    let artifact = a.base().join("a.bundle");
    with_env(
        &a,
        &[
            "--session",
            &s,
            "checkpoint",
            "-o",
            artifact.to_str().unwrap(),
        ],
    );
    with_env(&a, &["gc"]);
    let b = World::clone_of(&a);
    with_env(&b, &["replay", "--materialize", artifact.to_str().unwrap()]);
    assert_eq!(b.read("f07.txt"), "file 7\n");

    assert_eq!(
        listing(&stray.join("objects")),
        Vec::<std::path::PathBuf>::new()
    );
    assert!(!stray.join("index").exists());
    for w in [&a, &b] {
        w.store_git(&["fsck", "--full", "--strict", "--no-progress"]);
    }
    assert_eq!(
        a.ok(&["verify", artifact.to_str().unwrap()]),
        "20 files match"
    );
    assert_eq!(a.steps(&s), 2);
}

/// A session whose journal is gone (the data dir removed, or only the store) is not a new
/// session that knew nothing: the workspace remembers it existed, so it must read an existing
/// file again before it changes it, through a hook, a command or the host's shell alike.
#[test]
fn a_session_whose_journal_is_gone_reads_again_before_it_changes_a_file() {
    let sid = "e6c55faa-d7b7-44f5-8458-fd227d2da938";
    for lose in ["data dir", "store"] {
        let w = World::new();
        w.write("notes.txt", "alpha\nbeta\n");
        let hook = |name: &str| {
            let payload: serde_json::Value = serde_json::from_str(
                &claude_fixture_text(&w, name).replace("new.txt", "notes.txt"),
            )
            .unwrap();
            hook_json(&w, "claude-code", &payload)
        };
        hook("SessionStart-startup.json");
        hook("PostToolUse-Read.json");
        w.ok(&["session", "start", "--id", "cli"]);
        w.ok(&["--session", "cli", "read", "notes.txt"]);
        let store = w.store();
        match lose {
            "data dir" => std::fs::remove_dir_all(&w.stella_home).unwrap(),
            _ => std::fs::remove_dir_all(&store).unwrap(),
        }
        // Someone changes the file while the sessions' memory is gone.
        w.write("notes.txt", "alpha\nTHEIRS\n");

        let answer = hook("PreToolUse-Write.json");
        assert!(denies(&answer), "{lose}: {answer}");
        let reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert!(
            reason.contains(
                "notes.txt may be a file this session knew before its memory of it was lost"
            ),
            "{lose}: {reason}"
        );
        let out = w.run_stdin(&["--session", "cli", "write", "notes.txt"], b"mine\n");
        assert_eq!(code(&out), 1, "{lose}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("session cli existed in this workspace, but its journal is gone"),
            "{lose}: {}",
            stderr(&out)
        );
        if guarded_here(&w) {
            let mut shell = w.stella();
            shell
                .env("CLAUDE_CODE_SESSION_ID", sid)
                .args(["exec", "--host", "claude-code"])
                .arg(format!(
                    "eval 'echo mine > notes.txt' < /dev/null && pwd -P >| {}/cwd-file",
                    w.tmp.path().display()
                ));
            let out = shell.output().unwrap();
            assert_ne!(code(&out), 0, "{lose}: {}", stderr(&out));
            assert!(
                stderr(&out).contains("refusing to write: notes.txt"),
                "{lose}: {}",
                stderr(&out)
            );
        }
        assert_eq!(w.read("notes.txt"), "alpha\nTHEIRS\n", "{lose}");
        // A file that does not exist yet may be created, and one read again may be changed.
        w.ok_stdin(&["--session", "cli", "write", "fresh.txt"], b"new\n");
        w.ok(&["--session", "cli", "read", "notes.txt"]);
        w.ok_stdin(&["--session", "cli", "write", "notes.txt"], b"mine\n");
        hook("PostToolUse-Read.json");
        // A dropped session no longer exists here: started again under its id, it starts new.
        w.ok(&["session", "drop", "cli"]);
        w.ok(&["session", "start", "--id", "cli"]);
        w.write("notes.txt", "changed again\n");
        w.ok_stdin(&["--session", "cli", "write", "notes.txt"], b"blind\n");
    }
}
