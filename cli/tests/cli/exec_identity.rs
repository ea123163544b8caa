//! The shell guard judges files, not spellings: a rename carries what the session knew, a hard
//! link is the file it names, `/proc/self` and `/dev/fd` are the calling process's own, and
//! Stella's own state is out of a command's reach. Each test reproduces a way a person's edit
//! used to be lost (the session read `f`, then another process changed it) and shows it refused.

use crate::common::*;

/// A world whose session read `f`, which another process then changed; `None` (after a loud
/// skip, a failure under CI) where this machine cannot run the guard.
fn stale_f() -> Option<(World, String)> {
    let w = World::new();
    if !guarded_here(&w) {
        return None;
    }
    let s = w.start();
    w.write("f", "as the session read it\n");
    w.write("other", "untouched\n");
    let out = sh(&w, &s, "cat f >/dev/null");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    w.write("f", "their edit\n");
    Some((w, s))
}

fn sh(w: &World, s: &str, script: &str) -> std::process::Output {
    w.run(&["--session", s, "exec", "--", "sh", "-c", script])
}

fn refused(out: &std::process::Output, verb: &str, path: &str) {
    let err = stderr(out);
    assert!(
        err.contains(&format!("refusing to {verb}: {path}\n")),
        "expected a refusal to {verb} {path}: {err}"
    );
}

/// Every file of the repository holding `bytes`, by path.
fn holding(w: &World, bytes: &str) -> Vec<String> {
    listing(&w.repo)
        .into_iter()
        .filter(|p| !p.starts_with(".git"))
        .filter(|p| std::fs::read(w.repo.join(p)).is_ok_and(|b| b == bytes.as_bytes()))
        .map(|p| p.strip_prefix(&w.repo).unwrap_or(&p).display().to_string())
        .collect()
}

#[test]
fn a_rename_carries_the_staleness_to_the_new_name() {
    let Some((w, s)) = stale_f() else { return };
    let out = sh(&w, &s, "mv f g && rm g");
    refused(&out, "delete", "g");
    assert_eq!(w.read("g"), "their edit\n");

    // Into a folder, then the folder removed.
    let out = sh(&w, &s, "mkdir d && mv g d/ && rm -rf d");
    refused(&out, "delete", "d/g");
    assert_eq!(w.read("d/g"), "their edit\n");
    // And the rename is no write of the session: it still needs a re-read.
    let status = w.ok(&["--session", &s, "status"]);
    assert!(status.contains("changed    d/g"), "{status}");
}

#[test]
fn git_mv_does_not_make_their_edit_the_sessions_own() {
    let Some((w, s)) = stale_f() else { return };
    w.git(&["add", "f"]);
    w.git(&["commit", "-qm", "f"]);
    let out = sh(&w, &s, "git mv f g");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = sh(&w, &s, "echo mine > g");
    refused(&out, "write", "g");
    assert_eq!(w.read("g"), "their edit\n");
    // Read again, the write passes.
    let out = sh(&w, &s, "cat g >/dev/null && echo mine > g");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(w.read("g"), "mine\n");
}

#[test]
fn undo_moves_a_renamed_file_back_and_loses_nobodys_bytes() {
    let Some((w, s)) = stale_f() else { return };
    // A fresh rename: undo puts the file back where it was.
    let out = sh(&w, &s, "cat other >/dev/null && mv other moved");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = w.run(&["--session", &s, "undo", "moved"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(w.read("other"), "untouched\n");
    assert!(!w.repo.join("moved").exists());

    // A rename of a file someone changed: their bytes are never deleted.
    let out = sh(&w, &s, "mv f g");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = w.run(&["--session", &s, "undo"]);
    assert_eq!(holding(&w, "their edit\n"), ["g"], "{}", stderr(&out));
    refused(&out, "delete", "g");
}

#[test]
fn a_hard_link_is_the_file_it_names() {
    let Some((w, s)) = stale_f() else { return };
    // A link made before the command.
    std::fs::hard_link(w.repo.join("f"), w.repo.join("h")).unwrap();
    let out = sh(&w, &s, "echo x > h");
    refused(&out, "write", "h");
    assert_eq!(w.read("f"), "their edit\n");
    std::fs::remove_file(w.repo.join("h")).unwrap();
    // A link the command makes itself.
    let out = sh(&w, &s, "ln f h2 && echo x > h2");
    refused(&out, "write", "h2");
    assert_eq!(w.read("f"), "their edit\n");
}

#[test]
fn proc_self_and_dev_fd_are_the_callers_own() {
    let Some((w, s)) = stale_f() else { return };
    for script in [
        "echo x > /proc/self/cwd/f",
        "exec 3<. && echo x > /dev/fd/3/f",
        "exec 3<. && echo x > /proc/thread-self/fd/3/f",
    ] {
        let out = sh(&w, &s, script);
        refused(&out, "write", "f");
        assert_eq!(w.read("f"), "their edit\n", "{script}");
    }
    // A descriptor opened with O_PATH, reopened for writing through /proc/self/fd.
    let script =
        "import os\nfd = os.open('f', os.O_PATH)\nopen(f'/proc/self/fd/{fd}', 'w').write('x')";
    let out = w.run(&["--session", &s, "exec", "--", "python3", "-c", script]);
    refused(&out, "write", "f");
    assert_eq!(w.read("f"), "their edit\n");
}

#[test]
fn stellas_data_folder_is_out_of_a_commands_reach() {
    let Some((w, s)) = stale_f() else { return };
    let data = w.stella_home.display().to_string();
    let out = sh(&w, &s, &format!("rm -rf '{data}'"));
    assert_ne!(code(&out), 0);
    let err = stderr(&out);
    assert_eq!(
        err.matches("it is Stella's own state").count(),
        1,
        "said once: {err}"
    );
    // The session still knows what it read: a stale write is still refused.
    let out = sh(&w, &s, "echo mine > f");
    refused(&out, "write", "f");
    assert_eq!(w.read("f"), "their edit\n");
}

#[test]
fn a_data_folder_inside_the_workspace_is_out_of_a_commands_reach_too() {
    let w = World::new();
    if !guarded_here(&w) {
        return;
    }
    // Stella's data folder set to a folder of the workspace itself (nothing ignores it).
    let data = w.repo.join("stella-data");
    let stella = |args: &[&str]| {
        let mut cmd = w.stella();
        cmd.env("STELLA_HOME", &data).args(args).output().unwrap()
    };
    let out = stella(&["session", "start"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let s = stdout(&out).trim().to_owned();
    // A file Stella keeps there (it exists: the quick way to a path is taken) and a new one.
    let head = std::fs::read_dir(data.join("workspaces"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("store.git/HEAD");
    let before = std::fs::read(&head).unwrap();
    let shown = head.strip_prefix(&w.repo).unwrap().display().to_string();
    for script in [
        format!("echo x >> {shown}"),
        "echo x > stella-data/probe".into(),
    ] {
        let out = stella(&["--session", &s, "exec", "--", "sh", "-c", &script]);
        assert_ne!(code(&out), 0, "{script}");
        let err = stderr(&out);
        assert!(err.contains("it is Stella's own state"), "{script}: {err}");
        assert!(
            err.contains(&data.display().to_string()),
            "names the folder: {err}"
        );
    }
    assert_eq!(std::fs::read(&head).unwrap(), before);
    assert!(!data.join("probe").exists());
}

#[test]
fn a_tool_rereading_a_file_does_not_keep_its_window_open() {
    let Some((w, _)) = stale_f() else { return };
    let s = w.start();
    w.write("t", "v1\n");
    // The tool reads t every 0.3 s for 2.4 s; right after its last read another process
    // changes t, and the tool writes it. Its first read armed the guard, and reading again
    // never renews the window in which a tool's own read does not count.
    let ready = w.home.join("ready");
    let go = w.home.join("go");
    let script = format!(
        "import os, time\nfor _ in range(9):\n    open('t').read()\n    time.sleep(0.3)\nopen({ready:?}, 'w')\nwhile not os.path.exists({go:?}):\n    time.sleep(0.01)\nopen('t', 'w').write('tool\\n')"
    );
    let mut cmd = w.stella();
    cmd.args(["--session", &s, "exec", "--", "python3", "-c", &script]);
    let child = std::thread::spawn(move || cmd.output().unwrap());
    while !ready.exists() {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    w.write("t", "theirs\n");
    std::fs::write(&go, "").unwrap();
    let out = child.join().unwrap();
    refused(&out, "write", "t");
    assert_eq!(w.read("t"), "theirs\n");
}

#[test]
fn the_workspace_under_another_name_is_the_workspace() {
    let Some((w, s)) = stale_f() else { return };
    // The workspace folder renamed while the command runs.
    let moved = w.base().join("renamed");
    let script = format!(
        "mv '{}' '{}' && echo mine > '{}/f'; mv '{}' '{}'",
        w.repo.display(),
        moved.display(),
        moved.display(),
        moved.display(),
        w.repo.display()
    );
    let out = sh(&w, &s, &script);
    refused(&out, "write", "f");
    assert_eq!(w.read("f"), "their edit\n");

    // A bind mount of it (where this machine lets us mount).
    let mnt = w.base().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = std::process::Command::new("mount")
        .arg("--bind")
        .arg(&w.repo)
        .arg(&mnt)
        .output()
        .is_ok_and(|o| o.status.success());
    if !mounted {
        skipped("a bind mount: this machine does not let the tests mount");
        return;
    }
    let out = sh(&w, &s, &format!("echo mine > '{}/f'", mnt.display()));
    let _ = std::process::Command::new("umount").arg(&mnt).status();
    refused(&out, "write", "f");
    assert_eq!(w.read("f"), "their edit\n");
}

#[test]
fn a_write_through_a_file_handle_is_refused() {
    let Some((w, s)) = stale_f() else { return };
    let script = r#"import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
handle = ctypes.create_string_buffer(8 + 128)
ctypes.memmove(handle, (128).to_bytes(4, 'little'), 4)
mount_id = ctypes.c_int()
if libc.name_to_handle_at(-100, b'f', handle, ctypes.byref(mount_id), 0) != 0:
    print('no handles here', ctypes.get_errno()); sys.exit(3)
mount_fd = os.open('.', os.O_RDONLY)
fd = libc.open_by_handle_at(mount_fd, handle, os.O_WRONLY | os.O_TRUNC)
print('fd', fd, ctypes.get_errno())
if fd >= 0:
    os.write(fd, b'mine\n')
"#;
    let out = w.run(&["--session", &s, "exec", "--", "python3", "-c", script]);
    if code(&out) == 3 {
        skipped("file handles: this file system gives none");
        return;
    }
    assert!(
        stderr(&out).contains("refusing a write through a file handle"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(stdout(&out).contains("fd -1 13"), "{}", stdout(&out));
    assert_eq!(w.read("f"), "their edit\n");
}

#[test]
fn recover_follows_a_rename_back_to_the_old_name() {
    let Some((w, s)) = stale_f() else { return };
    // The session rewrites f, then renames it and writes it again under its new name.
    let out = sh(&w, &s, "cat f >/dev/null && echo v2 > f");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = sh(&w, &s, "mv f g && echo v3 > g");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let old = w.ok(&["recover", "f"]);
    let version = |line: &str| line.split_whitespace().next().unwrap().to_owned();
    // The first read, only ever known under the old name, and the write there.
    let first = version(old.lines().nth(1).unwrap());
    let v2 = version(old.lines().last().unwrap());
    let listed = w.ok(&["recover", "g"]);
    for v in [&first, &v2] {
        assert!(
            listed.contains(v.as_str()),
            "{v} is listed: {listed}\n{old}"
        );
    }
    assert_eq!(
        w.ok(&["recover", "g", "--show", &first]),
        "as the session read it"
    );
    assert_eq!(w.ok(&["recover", "g", "--show", &v2]), "v2");
    assert_eq!(w.read("g"), "v3\n");
}

#[test]
fn a_thread_number_taken_again_is_another_thread() {
    let w = World::new();
    if !guarded_here(&w) {
        return;
    }
    let s = w.start();
    w.write("d1/f", "one\n");
    w.write("d2/f", "two\n");
    // Process A reads `f` in d1 and ends; process B, started in d2, is given A's number (as
    // root: `ns_last_pid`) and reads `f` there. What the guard remembered of A's working folder
    // must not be B's: B read d2/f.
    let script = r#"
import os, sys
os.chdir("d2")
open("/dev/null").close()  # a call after the chdir: the guard knows it is done
for attempt in range(50):
    a = os.fork()
    if a == 0:
        os.chdir("../d1")
        open("f").read()
        os._exit(0)
    os.waitpid(a, 0)
    try:
        with open("/proc/sys/kernel/ns_last_pid", "w") as last:
            last.write(str(a - 1))
    except OSError as e:
        print("cannot choose a process number:", e, file=sys.stderr)
        sys.exit(5)
    b = os.fork()
    if b == 0:
        if os.getpid() == a:
            open("f").read()
            os._exit(0)
        os._exit(3)
    _, status = os.waitpid(b, 0)
    if os.waitstatus_to_exitcode(status) == 0:
        sys.exit(0)
sys.exit(4)
"#;
    let out = w.run(&["--session", &s, "exec", "--", "python3", "-c", script]);
    match code(&out) {
        0 => {}
        4 | 5 => {
            skipped(&format!(
                "no process here could be given a number again: {}",
                stderr(&out)
            ));
            return;
        }
        other => panic!("exit {other}: {}", stderr(&out)),
    }
    let status = w.ok(&["--session", &s, "status"]);
    assert!(status.contains("unchanged  d2/f"), "{status}");
}
