//! The shell guard end to end: real commands under `git stella exec`, every system call path it
//! checks (stale → refused and nothing changed; fresh, never read and create → allowed and
//! recorded), and how it fails.
//!
//! On a machine that cannot guard (`git stella exec --check` says why), each test says it was
//! skipped; under CI that is a failure.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::*;

/// The Python interpreter, by absolute path: a version manager's shim needs the real HOME,
/// which the tests replace.
fn python() -> String {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A world with a session and a few files.
fn setup() -> Option<(World, String)> {
    let w = World::new();
    if !guarded_here(&w) {
        return None;
    }
    let s = w.start();
    w.write("a.txt", "one\ntwo\n");
    w.write("b.txt", "bee\n");
    w.write("sub/x.txt", "ex\n");
    Some((w, s))
}

/// `git stella --session S exec -- sh -c SCRIPT` in the repository.
fn sh(w: &World, s: &str, script: &str) -> std::process::Output {
    w.run(&["--session", s, "exec", "--", "sh", "-c", script])
}

/// The session's status lines (`unchanged  a.txt`, …).
fn status(w: &World, s: &str) -> String {
    w.ok(&["--session", s, "status"])
}

fn assert_refused(out: &std::process::Output, verb: &str, path: &str) {
    let err = stderr(out);
    let line = format!("refusing to {verb}: {path}");
    assert_eq!(
        err.matches(&line).count(),
        1,
        "one refusal for {path}: {err}"
    );
    assert!(
        err.contains(&format!(
            "Nothing was {}. To recover, re-read {path}",
            if verb == "write" {
                "written"
            } else {
                "deleted"
            }
        )),
        "{err}"
    );
}

#[test]
fn a_read_is_recorded_and_a_stale_overwrite_refused() {
    let Some((w, s)) = setup() else { return };
    let out = w.run(&["--session", &s, "exec", "--", "cat", "a.txt"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "one\ntwo\n");
    assert_eq!(status(&w, &s), "unchanged  a.txt");
    let log = w.ok(&["--session", &s, "log", &s]);
    assert!(log.contains("exec cat a.txt (1 read, 0 changed)"), "{log}");

    w.write("a.txt", "one\ntwo\ntheirs\n");
    let out = sh(&w, &s, "cat > a.txt <<EOF\nmine\nEOF");
    assert_eq!(code(&out), 2, "sh's own status");
    assert_refused(&out, "write", "a.txt");
    assert!(stderr(&out).contains("+theirs"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Permission denied"),
        "{}",
        stderr(&out)
    );
    assert_eq!(w.read("a.txt"), "one\ntwo\ntheirs\n");
    assert_eq!(status(&w, &s), "changed    a.txt");
    // The refusal is in the command's step.
    let log: serde_json::Value =
        serde_json::from_str(&w.ok(&["--session", &s, "log", &s, "--json"])).unwrap();
    let log = &log["steps"];
    assert_eq!(log[0]["refused"][0]["path"], "a.txt");
    assert_eq!(log[0]["refused"][0]["intent"], "write");
    assert!(
        log[0]["summary"]
            .as_str()
            .unwrap()
            .ends_with("(0 read, 0 changed, 1 refused)"),
        "{}",
        log[0]
    );

    // A re-read through the shell settles it.
    let out = sh(&w, &s, "cat a.txt >/dev/null && echo mine > a.txt");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(w.read("a.txt"), "mine\n");
    assert_eq!(status(&w, &s), "unchanged  a.txt");
}

#[test]
fn the_commands_own_edit_is_its_own_and_the_next_edit_passes() {
    let Some((w, s)) = setup() else { return };
    w.ok(&["--session", &s, "read", "a.txt"]);
    let out = w.run(&[
        "--session",
        &s,
        "exec",
        "--",
        "sed",
        "-i",
        "s/one/ONE/",
        "a.txt",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(w.read("a.txt"), "ONE\ntwo\n");
    // What the agent's next Edit asks: allowed, nothing to re-read.
    let out = w.run(&["--session", &s, "guard", "a.txt"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(status(&w, &s), "unchanged  a.txt");
    // sed's temp file was created and renamed away: nothing of it is tracked.
    assert!(!status(&w, &s).contains("sed"), "{}", status(&w, &s));
}

#[test]
fn never_read_files_and_creates_are_allowed_and_recorded() {
    let Some((w, s)) = setup() else { return };
    let out = sh(&w, &s, "echo new > new.txt && echo over > b.txt");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(w.read("new.txt"), "new\n");
    assert_eq!(status(&w, &s), "unchanged  b.txt\nunchanged  new.txt");
    // Recorded with the bytes the command left: someone else's later change is caught.
    w.write("new.txt", "theirs\n");
    let out = sh(&w, &s, "echo again > new.txt");
    assert_refused(&out, "write", "new.txt");
    assert_eq!(w.read("new.txt"), "theirs\n");
}

#[test]
fn deletes_renames_truncates_and_links_are_checked() {
    let Some((w, s)) = setup() else { return };
    let out = sh(&w, &s, "cat a.txt b.txt sub/x.txt >/dev/null");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    w.write("a.txt", "theirs\n");
    w.write("b.txt", "theirs too\n");

    let out = sh(&w, &s, "rm a.txt");
    assert_ne!(code(&out), 0);
    assert_refused(&out, "delete", "a.txt");
    assert_eq!(w.read("a.txt"), "theirs\n");

    let out = sh(&w, &s, "truncate -s 0 b.txt");
    assert_ne!(code(&out), 0);
    assert_refused(&out, "write", "b.txt");
    assert_eq!(w.read("b.txt"), "theirs too\n");

    w.write("c.txt", "see\n");
    let out = sh(&w, &s, "mv c.txt a.txt");
    assert_ne!(code(&out), 0);
    assert_refused(&out, "write", "a.txt");
    assert_eq!(w.read("a.txt"), "theirs\n");
    assert_eq!(w.read("c.txt"), "see\n");

    // Someone deletes a tracked file: a link re-creating it is refused.
    std::fs::remove_file(w.repo.join("sub/x.txt")).unwrap();
    let out = sh(&w, &s, "ln c.txt sub/x.txt");
    assert_ne!(code(&out), 0);
    assert!(
        stderr(&out).contains("refusing to write: sub/x.txt"),
        "{}",
        stderr(&out)
    );
    assert!(!w.repo.join("sub/x.txt").exists());

    // Fresh ones pass: a delete drops the entry, a rename moves it.
    let out = sh(
        &w,
        &s,
        "cat a.txt b.txt >/dev/null; rm b.txt; mv a.txt moved.txt",
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(status(&w, &s), "unchanged  moved.txt\ndeleted    sub/x.txt");
}

#[test]
fn dirfd_relative_calls_and_a_cd_are_resolved() {
    let Some((w, s)) = setup() else { return };
    let out = sh(&w, &s, "cat sub/x.txt a.txt >/dev/null");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    w.write("sub/x.txt", "theirs\n");
    w.write("a.txt", "theirs\n");

    let out = sh(&w, &s, "cd sub && echo mine > x.txt");
    assert_refused(&out, "write", "sub/x.txt");
    // openat and unlinkat relative to an open folder.
    let script = r#"import os
fd = os.open('sub', os.O_RDONLY | os.O_DIRECTORY)
for what, call in [
    ('open', lambda: os.open('x.txt', os.O_WRONLY | os.O_TRUNC, dir_fd=fd)),
    ('unlink', lambda: os.unlink('x.txt', dir_fd=fd)),
    ('rename', lambda: os.rename('../b.txt', '../a.txt', src_dir_fd=fd, dst_dir_fd=fd)),
]:
    try:
        call()
        print(what, 'passed')
    except PermissionError:
        print(what, 'refused')
"#;
    let out = w.run(&["--session", &s, "exec", "--", &python(), "-c", script]);
    assert_eq!(
        stdout(&out),
        "open refused\nunlink refused\nrename refused\n",
        "{}",
        stderr(&out)
    );
    assert_eq!(w.read("sub/x.txt"), "theirs\n");
    assert_eq!(w.read("a.txt"), "theirs\n");
    assert_eq!(w.read("b.txt"), "bee\n");
}

/// The guard remembers each thread's working folder between its reads; a process that moves
/// (`chdir`, `fchdir`), within one process and from a thread it started, reads what it names.
#[test]
fn a_process_that_changes_folder_reads_the_file_it_names() {
    let Some((w, s)) = setup() else { return };
    w.write("sub/a.txt", "below\n");
    w.write("sub/deeper/a.txt", "deeper\n");
    let script = r#"import os, threading
seen = [open('a.txt').read()]
os.chdir('sub')
seen.append(open('a.txt').read())
fd = os.open('deeper', os.O_RDONLY | os.O_DIRECTORY)
def moved():
    os.fchdir(fd)
    seen.append(open('a.txt').read())
t = threading.Thread(target=moved)
t.start()
t.join()
os.chdir('/')
os.chdir(os.environ['BACK'])
seen.append(open('b.txt').read())
print(''.join(seen), end='')
"#;
    let out = w
        .stella()
        .args(["--session", &s, "exec", "--", &python(), "-c", script])
        .env("BACK", &w.repo)
        .output()
        .unwrap();
    assert_eq!(
        stdout(&out),
        "one\ntwo\nbelow\ndeeper\nbee\n",
        "{}",
        stderr(&out)
    );
    assert_eq!(
        status(&w, &s),
        "unchanged  a.txt\nunchanged  b.txt\nunchanged  sub/a.txt\nunchanged  sub/deeper/a.txt"
    );
}

/// A folder the command renames under one of its threads: the thread's reads name the file
/// under the new name, even when something new took the old one.
#[test]
fn a_folder_renamed_under_a_reader_names_the_file_it_reads() {
    let Some((w, s)) = setup() else { return };
    w.write("sub/a.txt", "below\n");
    let script = r#"import os, time
os.chdir('sub')
seen = [open('a.txt').read()]
root = os.environ['ROOT']  # absolute paths: no working folder is looked up on the way
os.rename(root + '/sub', root + '/moved')
os.mkdir(root + '/sub')
with open(root + '/sub/a.txt', 'w') as f:
    f.write('impostor\n')
time.sleep(1.2)  # past the window in which the renaming tool's own reads show nothing
seen.append(open('a.txt').read())
print(''.join(seen), end='')
"#;
    let out = w
        .stella()
        .args(["--session", &s, "exec", "--", &python(), "-c", script])
        .env("ROOT", &w.repo)
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "below\nbelow\n", "{}", stderr(&out));
    let status = status(&w, &s);
    assert!(
        status.lines().any(|l| l == "unchanged  moved/a.txt"),
        "the read after the rename is of moved/a.txt:\n{status}"
    );
}

/// A read is taken with one `stat` in its folder, held open from the first read there; a folder
/// renamed by the command is let go, so a read after it names the file the path now reaches,
/// not the one the folder held before.
#[test]
fn a_folder_swapped_by_the_command_names_the_file_it_now_holds() {
    let Some((w, s)) = setup() else { return };
    w.write("sub/a.txt", "below\n");
    // The session reads it first: its signature is known.
    let out = sh(&w, &s, "cat sub/a.txt > /dev/null");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let outside = w.base().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("a.txt"), "from outside\n").unwrap();
    let script = r#"import os, time
seen = [open('sub/a.txt').read()]
os.rename('sub', 'moved')
os.rename(os.environ['OUTSIDE'], 'sub')
time.sleep(1.2)  # past the window in which the renaming tool's own reads show nothing
seen.append(open('sub/a.txt').read())
print(''.join(seen), end='')
"#;
    let out = w
        .stella()
        .args(["--session", &s, "exec", "--", &python(), "-c", script])
        .env("OUTSIDE", &outside)
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "below\nfrom outside\n", "{}", stderr(&out));
    let status = status(&w, &s);
    assert!(
        status.lines().any(|l| l == "unchanged  sub/a.txt"),
        "the read after the swap is of the file now at sub/a.txt:\n{status}"
    );
}

#[test]
fn a_pipeline_of_processes_is_one_step() {
    let Some((w, s)) = setup() else { return };
    let before = w.steps(&s);
    let out = sh(&w, &s, "cat a.txt | tr a-z A-Z | tee upper.txt > /dev/null");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(w.read("upper.txt"), "ONE\nTWO\n");
    assert_eq!(w.steps(&s), before + 1);
    assert_eq!(status(&w, &s), "unchanged  a.txt\nunchanged  upper.txt");
}

#[test]
fn a_shell_forks_while_its_children_end() {
    let Some((w, s)) = setup() else { return };
    // dash takes SIGCHLD without SA_RESTART: a fork the guard held would fail with EINTR
    // ("Cannot fork") whenever a child ended while it waited, as here every time.
    let out = sh(
        &w,
        &s,
        "for i in $(seq 300); do (true) & done; wait; cat a.txt > /dev/null",
    );
    assert_eq!((code(&out), stderr(&out).as_str()), (0, ""));
    assert_eq!(status(&w, &s), "unchanged  a.txt");
}

#[test]
fn a_statically_linked_writer_is_guarded_too() {
    let Some((w, s)) = setup() else { return };
    // Raw system calls, no libc wrapper to interpose: the guard is in the kernel.
    let src = w.base().join("writer.c");
    std::fs::write(
        &src,
        "#include <fcntl.h>\n#include <unistd.h>\n#include <stdio.h>\n\
int main(int c, char **v) { int fd = open(v[1], O_WRONLY | O_TRUNC);\n\
if (fd < 0) { perror(\"open\"); return 3; } write(fd, \"static\\n\", 7); return 0; }\n",
    )
    .unwrap();
    let bin = w.base().join("writer");
    let built = Command::new("cc")
        .args(["-static", "-O1", "-o"])
        .arg(&bin)
        .arg(&src)
        .output();
    match built {
        Ok(o) if o.status.success() => {}
        other => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must build a static binary: {other:?}"
            );
            skipped(&format!("no static C toolchain here: {other:?}"));
            return;
        }
    }
    let file = Command::new("file").arg(&bin).output();
    if let Ok(f) = file {
        let text = String::from_utf8_lossy(&f.stdout).into_owned();
        assert!(text.contains("statically linked"), "{text}");
    }
    w.ok(&["--session", &s, "read", "a.txt"]);
    w.write("a.txt", "theirs\n");
    let bin = bin.to_str().unwrap();
    let out = w.run(&["--session", &s, "exec", "--", bin, "a.txt"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert_refused(&out, "write", "a.txt");
    assert_eq!(w.read("a.txt"), "theirs\n");
    let out = w.run(&["--session", &s, "exec", "--", bin, "b.txt"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(w.read("b.txt"), "static\n");
    assert!(status(&w, &s).contains("unchanged  b.txt"));
}

#[test]
fn a_killed_supervisor_fails_the_commands_later_calls() {
    let Some((w, s)) = setup() else { return };
    let mut child = w
        .stella()
        .args(["--session", &s, "exec", "--", "sh", "-c"])
        .arg("echo ready >&2; read line; echo late > a.txt; echo \"status $?\" >&2")
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut pipe = child.stderr.take().unwrap();
    use std::io::{Read, Write};
    // Once the shell runs (its start-up opens answered), SIGKILL the supervisor alone; the
    // shell lives on, waiting for its line.
    let mut ready = [0u8; 6];
    pipe.read_exact(&mut ready).unwrap();
    assert_eq!(&ready, b"ready\n");
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait();
    stdin.write_all(b"go\n").unwrap();
    drop(stdin);
    let mut err = String::new();
    // The shell holds the pipe until it exits.
    pipe.read_to_string(&mut err).unwrap();
    assert!(err.contains("status 2"), "the write failed: {err}");
    assert!(err.contains("Function not implemented"), "{err}");
    assert_eq!(w.read("a.txt"), "one\ntwo\n");
}

/// The command is started sharing the supervisor's memory until its `exec`: it starts as the
/// caller would start it all the same, with the caller's environment and the session's
/// variable, in the caller's folder, with no signal blocked, and none of those the supervisor
/// takes or ignores while it runs (INT, QUIT, HUP, TERM, PIPE) left so.
#[test]
fn the_command_starts_as_its_caller_would_start_it() {
    let Some((w, s)) = setup() else { return };
    let run = |args: &[&str]| {
        w.stella()
            .current_dir(w.repo.join("sub"))
            .env("STELLA_TEST_MARK", "kept")
            .args(["--session", &s, "exec", "--"])
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&[
        "sh",
        "-c",
        "echo $STELLA_TEST_MARK $STELLA_EXEC_SESSION; pwd",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let sub = w.repo.join("sub").canonicalize().unwrap();
    assert_eq!(stdout(&out), format!("kept {s}\n{}\n", sub.display()));
    let out = run(&["grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let mask = |name: &str| {
        let line = stdout(&out)
            .lines()
            .find_map(|l| l.strip_prefix(name).map(str::trim).map(str::to_owned))
            .unwrap_or_else(|| panic!("{name} in {}", stdout(&out)));
        u64::from_str_radix(&line, 16).unwrap()
    };
    assert_eq!(mask("SigBlk:"), 0, "{}", stdout(&out));
    for signal in [1, 2, 3, 13, 15] {
        assert_eq!(
            mask("SigIgn:") & (1 << (signal - 1)),
            0,
            "signal {signal}: {}",
            stdout(&out)
        );
    }
}

#[test]
fn the_exit_status_is_the_commands() {
    let Some((w, s)) = setup() else { return };
    assert_eq!(code(&sh(&w, &s, "exit 7")), 7);
    assert_eq!(code(&sh(&w, &s, "kill -9 $$")), 137);
    let out = w.run(&["--session", &s, "exec", "--", "no-such-command-here"]);
    assert_eq!(code(&out), 127);
    assert!(
        stderr(&out).contains("error: could not run 'no-such-command-here'"),
        "{}",
        stderr(&out)
    );
    // No session, or an unknown one: nothing runs, and exec says so on its own status, 125,
    // never the 2 a wrapped command may exit with.
    let out = w.run(&["exec", "--", "touch", "ran"]);
    assert_eq!(code(&out), 125);
    let out = w.run(&["--session", "nobody", "exec", "--", "touch", "ran"]);
    assert_eq!(code(&out), 125);
    assert!(!w.repo.join("ran").exists());
}

#[test]
fn git_internals_ignored_paths_and_outside_files_are_not_recorded() {
    let Some((w, s)) = setup() else { return };
    w.write(".gitignore", "build/\n");
    let outside = w.base().join("outside.txt");
    std::fs::write(&outside, "far\n").unwrap();
    let script = format!(
        "mkdir -p build && echo out > build/out && cat build/out {} .git/HEAD >/dev/null && git hash-object a.txt \
         && mkdir -p vendor/lib/.git vendor/up/.GIT && echo x > vendor/lib/.git/config && echo y > vendor/up/.GIT/config",
        outside.display()
    );
    let out = sh(&w, &s, &script);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // git read a.txt to hash it; nothing of build/, any .git/ folder (a nested repository's, in
    // any case) or outside is tracked.
    assert_eq!(status(&w, &s), "unchanged  a.txt");
    // A file the session already tracks is recorded even where git ignores it.
    w.write("build/keep", "k\n");
    w.ok(&["--session", &s, "read", "build/keep"]);
    let out = sh(&w, &s, "echo changed > build/keep");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(status(&w, &s).contains("unchanged  build/keep"));
}

#[test]
fn it_works_nested_in_another_seccomp_filter_and_falls_back_where_it_cannot() {
    let Some((w, s)) = setup() else { return };
    // A host's sandbox: an allow-everything filter installed before Stella's.
    let sandbox = r#"import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
buf = ctypes.create_string_buffer(struct.pack('HBBI', 0x06, 0, 0, 0x7fff0000))  # RET ALLOW
class Prog(ctypes.Structure):
    _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.c_void_p)]
prog = Prog(1, ctypes.cast(buf, ctypes.c_void_p))
assert libc.prctl(22, 2, ctypes.byref(prog), 0, 0) == 0  # PR_SET_SECCOMP, FILTER
os.execvp(sys.argv[1], sys.argv[1:])
"#;
    let stella = assert_cmd::cargo::cargo_bin("git-stella");
    w.ok(&["--session", &s, "read", "a.txt"]);
    w.write("a.txt", "theirs\n");
    let mut cmd = Command::new(python());
    clean_env(&mut cmd, &w.home, &w.stella_home);
    let out = cmd
        .current_dir(&w.repo)
        .args(["-c", sandbox])
        .arg(&stella)
        .args(["--session", &s, "exec", "--", "sh", "-c"])
        .arg("grep Seccomp_filters /proc/self/status; echo mine > a.txt")
        .output()
        .unwrap();
    assert!(
        stdout(&out).contains("Seccomp_filters:\t2"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert_refused(&out, "write", "a.txt");
    assert_eq!(w.read("a.txt"), "theirs\n");

    // Nested in Stella's own guard, the outer guard sees every call: whatever the environment
    // says, the inner command is checked (the kernel says it is supervised, not a variable).
    let inner = format!(
        "env -u STELLA_EXEC_SESSION {} --session {s} exec -- sh -c 'echo mine > a.txt'",
        stella.display()
    );
    let out = sh(&w, &s, &inner);
    assert_refused(&out, "write", "a.txt");
    assert_eq!(w.read("a.txt"), "theirs\n");
    // A caller's STELLA_EXEC_SESSION outside any guard switches nothing off.
    let mut cmd = w.stella();
    let out = cmd
        .env("STELLA_EXEC_SESSION", "anything")
        .args([
            "--session",
            &s,
            "exec",
            "--",
            "sh",
            "-c",
            "echo mine > a.txt",
        ])
        .output()
        .unwrap();
    assert_refused(&out, "write", "a.txt");
    assert_eq!(w.read("a.txt"), "theirs\n");

    // Inside another program's supervisor (here: Stella under another name) there can be no
    // second one: the command runs unguarded after one warning line...
    let other = w.home.join("other-supervisor");
    copy_binary(&stella, &other);
    let nested = |w: &World| {
        let mut cmd = Command::new(&other);
        clean_env(&mut cmd, &w.home, &w.stella_home);
        cmd.current_dir(&w.repo)
            .args(["--session", &s, "exec", "--", "sh", "-c"])
            .arg(format!(
                "{} --session {s} exec -- touch ran",
                stella.display()
            ))
            .output()
            .unwrap()
    };
    let out = nested(&w);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("stella: warning: running unguarded: the process already runs under another seccomp supervisor"),
        "{}",
        stderr(&out)
    );
    assert!(w.repo.join("ran").exists());
    // ...and under fail-closed it does not run at all.
    std::fs::remove_file(w.repo.join("ran")).unwrap();
    w.git(&["config", "stella.hookOnError", "deny"]);
    let out = nested(&w);
    assert_eq!(code(&out), 125, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("error: refusing to run the command unguarded"),
        "{}",
        stderr(&out)
    );
    assert!(!w.repo.join("ran").exists());
}

#[test]
fn claude_codes_prefix_guards_bash_calls_only() {
    let Some((w, _)) = setup() else { return };
    let snippet = |cmd: &str| {
        format!(
            "source /nonexistent/snapshot.sh 2>/dev/null || true && eval '{cmd}' < /dev/null && pwd -P >| {}/cwd-file",
            w.base().display()
        )
    };
    let prefix = |arg: &str| {
        let mut c = w.stella();
        c.env("CLAUDE_CODE_SESSION_ID", "3f0c9a7e-claude")
            .args(["--claude-code-shell", arg]);
        c.output().unwrap()
    };
    let out = prefix(&snippet("cat a.txt"));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "one\ntwo\n");
    assert_eq!(status(&w, "3f0c9a7e-claude"), "unchanged  a.txt");
    let log = w.ok(&["log", "3f0c9a7e-claude"]);
    assert!(log.contains("exec cat a.txt (1 read, 0 changed)"), "{log}");
    // The working directory is written for the next call, as without a prefix.
    assert_eq!(
        std::fs::read_to_string(w.base().join("cwd-file")).unwrap(),
        format!("{}\n", w.repo.display())
    );
    // A hook command through the prefix is the host's work: nothing recorded.
    let out = prefix("cat b.txt");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "bee\n");
    assert_eq!(status(&w, "3f0c9a7e-claude"), "unchanged  a.txt");
    // A stale write through Bash is refused.
    w.write("a.txt", "theirs\n");
    let out = prefix(&snippet("echo mine > a.txt"));
    assert_ne!(code(&out), 0);
    assert_refused(&out, "write", "a.txt");
    assert_eq!(w.read("a.txt"), "theirs\n");
}

#[test]
fn a_tool_reading_what_it_rewrites_is_not_a_read_of_the_session() {
    let Some((w, s)) = setup() else { return };
    w.write("a.txt", "alpha\nbeta\n");
    w.ok(&["--session", &s, "read", "a.txt"]);
    // Someone turns beta into betamax; the agent's `sed -i s/beta/BETA/`, planned against the
    // bytes it saw, would give BETAmax. sed reads the file itself first: that is no news.
    w.write("a.txt", "alpha\nbetamax\n");
    let out = w.run(&[
        "--session",
        &s,
        "exec",
        "--",
        "sed",
        "-i",
        "s/beta/BETA/",
        "a.txt",
    ]);
    assert_ne!(code(&out), 0);
    assert_refused(&out, "write", "a.txt");
    assert_eq!(w.read("a.txt"), "alpha\nbetamax\n");
    // The same for any program that reads and rewrites a file in one process, however often.
    let rmw = "d = open('a.txt').read(); open('a.txt', 'w').write(d.replace('beta', 'BETA'))";
    for _ in 0..2 {
        let out = w.run(&["--session", &s, "exec", "--", &python(), "-c", rmw]);
        assert_ne!(code(&out), 0);
        assert_refused(&out, "write", "a.txt");
        assert_eq!(w.read("a.txt"), "alpha\nbetamax\n");
    }
    assert_eq!(status(&w, &s), "changed    a.txt");
    // A read by another process is a read: `cat`, then the same rewrite, passes.
    let out = sh(&w, &s, "cat a.txt >/dev/null");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = w.run(&["--session", &s, "exec", "--", &python(), "-c", rmw]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(w.read("a.txt"), "alpha\nBETAmax\n");
    assert_eq!(status(&w, &s), "unchanged  a.txt");
}

#[test]
fn a_whole_agent_under_the_guard_is_guarded_call_by_call() {
    let Some((w, s)) = setup() else { return };
    // An "agent": reads through a child process (its shell), waits, then patches the file in
    // its own process, reading it first as a patch tool does; its shell's refusals reach it on
    // the child's stderr, which it shows (as a host shows the model a command's output).
    let agent = r#"import os, subprocess, sys, time
subprocess.run(['cat', 'a.txt'], stdout=subprocess.DEVNULL, check=True)
print('read', flush=True)
while not os.path.exists('go'):
    time.sleep(0.01)
def patch():
    d = open('a.txt').read()
    open('a.txt', 'w').write(d.replace('two', 'TWO'))
try:
    patch()
    print('patch passed')
except PermissionError:
    print('patch refused')
shell = subprocess.run(['sh', '-c', 'echo mine > a.txt'], stderr=subprocess.PIPE, text=True)
print('shell', shell.returncode, 'refusing to write: a.txt' in shell.stderr)
"#;
    let run = |change: bool| {
        let _ = std::fs::remove_file(w.repo.join("go"));
        let mut child = w
            .stella()
            .args(["--session", &s, "exec", "--", &python(), "-c", agent])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = child.stdout.take().unwrap();
        let mut first = [0u8; 5];
        use std::io::Read;
        out.read_exact(&mut first).unwrap();
        assert_eq!(&first, b"read\n");
        if change {
            w.write("a.txt", "one\ntwo\ntheirs\n");
        }
        std::fs::write(w.repo.join("go"), "").unwrap();
        let mut rest = String::new();
        out.read_to_string(&mut rest).unwrap();
        child.wait().unwrap();
        rest
    };
    // Another process changed the file after the agent's shell read it: both writes refused.
    assert_eq!(run(true), "patch refused\nshell 2 True\n");
    assert_eq!(w.read("a.txt"), "one\ntwo\ntheirs\n");
    // Nobody changed it: the patch is the agent's own, and so is the shell's write after it.
    assert_eq!(run(false), "patch passed\nshell 0 False\n");
    assert_eq!(w.read("a.txt"), "mine\n");
    assert_eq!(status(&w, &s), "unchanged  a.txt");
}

#[test]
fn fifos_and_symlinks_neither_hang_nor_mislead_it() {
    let Some((w, s)) = setup() else { return };
    w.ok(&["--session", &s, "read", "a.txt", "b.txt"]);
    // A tracked file replaced by a FIFO, and a new FIFO: reading and writing them through the
    // guard must not hang it (it never opens a FIFO to hash it).
    std::fs::remove_file(w.repo.join("a.txt")).unwrap();
    let fifo = |p: &str| {
        let c = std::ffi::CString::new(w.repo.join(p).to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    };
    fifo("a.txt");
    fifo("pipe");
    let mut child = w
        .stella()
        .args(["--session", &s, "exec", "--", "sh", "-c"])
        .arg("(echo one > pipe &) ; cat pipe; (echo two > a.txt &) ; cat a.txt")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the guard hung on a FIFO"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(stdout(&out), "one\ntwo\n", "{}", stderr(&out));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // Nothing of them was recorded: a FIFO is not a file the map can hold.
    assert_eq!(status(&w, &s), "unreadable a.txt\nunchanged  b.txt");

    // A symlink inside the workspace leading to a tracked file is that file; one leading outside
    // is not the guard's business.
    std::os::unix::fs::symlink(w.repo.join("b.txt"), w.repo.join("to-b")).unwrap();
    let outside = w.base().join("outside.txt");
    std::fs::write(&outside, "far\n").unwrap();
    std::os::unix::fs::symlink(&outside, w.repo.join("to-outside")).unwrap();
    w.write("b.txt", "theirs\n");
    let out = sh(&w, &s, "echo mine > to-b");
    assert_refused(&out, "write", "b.txt");
    assert_eq!(w.read("b.txt"), "theirs\n");
    let out = sh(&w, &s, "echo near > to-outside");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "near\n");
    // Removing the link removes the link, not the file: nothing of b.txt is lost, so allowed.
    let out = sh(&w, &s, "rm to-b");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(w.read("b.txt"), "theirs\n");
}

#[test]
fn a_refusal_into_a_stderr_file_is_whole() {
    let Some((w, s)) = setup() else { return };
    w.ok(&["--session", &s, "read", "a.txt"]);
    w.write("a.txt", "theirs\n");
    // The command's stderr is a file: the refusal and the shell's own error both land whole.
    let log = w.base().join("stderr.log");
    let out = w
        .stella()
        .args([
            "--session",
            &s,
            "exec",
            "--",
            "sh",
            "-c",
            "echo mine > a.txt",
        ])
        .stderr(std::fs::File::create(&log).unwrap())
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.starts_with("refusing to write: a.txt\na.txt changed since this session last read it"),
        "{text}"
    );
    assert!(text.ends_with("Permission denied\n"), "{text}");
}

/// A read of a file unchanged since the guard hashed it takes the digest from the file's `stat`
/// signature, kept per session, and what the session held of it from the same place while the
/// session's map did not change there; a change that keeps the size and puts the mtime back is
/// still seen (the ctime moved), so the session's next write is checked against what it really
/// read. A damaged signatures file only costs a re-hash.
#[test]
fn a_file_unchanged_since_it_was_hashed_is_not_read_again_and_a_change_behind_its_mtime_is_seen() {
    let Some((w, s)) = setup() else { return };
    // How many reads were known by signature, and how many of those the session was known to
    // hold.
    let cat = |w: &World| {
        let out = w
            .stella()
            .env("STELLA_LOG", "debug")
            .args(["--session", &s, "exec", "--", "cat", "a.txt"])
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let err = stderr(&out);
        let count = |field: &str| {
            err.split(&format!("{field}="))
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .unwrap_or_else(|| panic!("no {field}: {err}"))
                .parse::<usize>()
                .unwrap()
        };
        (count("known_by_signature"), count("held_by_signature"))
    };
    // Older than a timestamp's granularity: not racily clean.
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(cat(&w), (0, 0), "the first read hashes the file");
    let kept = w
        .repo
        .join(".stella/private/exec")
        .join(format!("{s}.signatures"));
    assert!(kept.is_file());
    assert_eq!(cat(&w), (1, 0), "the second is known by its signature");
    assert_eq!(cat(&w), (1, 1), "and then held, with the map unchanged");

    // The session's map changes there (it says it wrote other bytes), the file does not: what
    // it held is asked of the map again, and the read is recorded.
    let out = w.run_stdin(
        &["--session", &s, "wrote", "--content", "-", "a.txt"],
        b"other\n",
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(status(&w, &s), "changed    a.txt");
    assert_eq!(cat(&w), (1, 0));
    assert_eq!(status(&w, &s), "unchanged  a.txt");

    // A person's edit of the same size, written in place, its mtime put back.
    let path = w.repo.join("a.txt");
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    std::fs::write(&path, "ONE\nTWO\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), mtime);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(cat(&w), (0, 0), "the ctime moved: hashed again");
    let out = sh(&w, &s, "echo mine > a.txt");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(w.read("a.txt"), "mine\n");

    // Damage is ignored whole, and the file written again.
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(cat(&w).0, 0);
    let mut bytes = std::fs::read(&kept).unwrap();
    let last = bytes.len() - 40;
    bytes[last] ^= 0x55;
    std::fs::write(&kept, &bytes).unwrap();
    assert_eq!(cat(&w).0, 0, "a damaged file is not trusted");
    assert_eq!(cat(&w).0, 1, "and is written whole again");

    // It goes with its session.
    w.ok(&["session", "drop", &s]);
    assert!(!kept.exists(), "dropped with its session");
}

/// A path with a link, `.` or `..` on the way is resolved the long way and names the file it
/// reaches: a read through a linked folder inside the workspace is a read of the file there, and
/// one through a link to a folder outside is none of the session's business.
#[test]
fn reads_through_linked_folders_and_dot_dot_name_the_file_they_reach() {
    let Some((w, s)) = setup() else { return };
    std::os::unix::fs::symlink("sub", w.repo.join("linked")).unwrap();
    let outside = w.base().join("far");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("x.txt"), "far\n").unwrap();
    std::os::unix::fs::symlink(&outside, w.repo.join("away")).unwrap();
    let out = sh(
        &w,
        &s,
        "cat linked/x.txt >/dev/null && cd sub && cat ../b.txt ./../a.txt ../away/x.txt >/dev/null",
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        status(&w, &s),
        "unchanged  a.txt\nunchanged  b.txt\nunchanged  sub/x.txt"
    );
}

/// However a command spells a path (`a//b`, `a/./b`, absolute with either), it names the one
/// workspace file: a read through such a name is the file's read, and a write, truncate, rename
/// onto it or delete through it after someone changed the file is refused as any other. A file
/// made through such a name is recorded under its plain name.
#[test]
fn a_path_spelled_with_doubled_slashes_or_dots_is_the_file_it_names() {
    let Some((w, s)) = setup() else { return };
    let repo = w.repo.display().to_string();
    let spellings = [
        "sub//x.txt".to_owned(),
        "sub/./x.txt".to_owned(),
        ".//sub/.//x.txt".to_owned(),
        format!("{repo}//sub/./x.txt"),
        format!("{repo}/./sub//x.txt"),
    ];
    // The session's word on the file.
    let of_x = |w: &World| {
        status(w, &s)
            .lines()
            .filter(|l| l.ends_with(" sub/x.txt"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    for (i, name) in spellings.iter().enumerate() {
        let out = sh(&w, &s, &format!("cat '{name}' >/dev/null"));
        assert_eq!(code(&out), 0, "{name}: {}", stderr(&out));
        assert_eq!(of_x(&w), "unchanged  sub/x.txt", "a read through {name}");
        let theirs = format!("theirs {i}\n");
        w.write("sub/x.txt", &theirs);
        w.write("c.txt", "see\n");
        for (script, verb) in [
            (format!("echo mine > '{name}'"), "write"),
            (format!("truncate -s 0 '{name}'"), "write"),
            (format!("mv c.txt '{name}'"), "write"),
            (format!("rm '{name}'"), "delete"),
        ] {
            let out = sh(&w, &s, &script);
            assert_ne!(code(&out), 0, "{script}");
            assert_refused(&out, verb, "sub/x.txt");
            assert_eq!(w.read("sub/x.txt"), theirs, "{script}");
        }
    }
    assert_eq!(of_x(&w), "changed    sub/x.txt");
    let out = sh(&w, &s, &format!("echo new > '{repo}/sub//./new.txt'"));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        status(&w, &s)
            .lines()
            .any(|l| l == "unchanged  sub/new.txt"),
        "{}",
        status(&w, &s)
    );
}

/// A workspace file reached through another name of it outside the workspace (a hard link) is
/// that file: a write or truncate through the outside name after someone changed the file is
/// refused, one after a fresh read is the session's write of the file under its own name, and
/// a name the command links itself is the same. An exclusive create of the name still fails.
#[test]
fn a_hard_link_outside_the_workspace_is_the_workspace_file() {
    let Some((w, s)) = setup() else { return };
    let far = w.base().join("far");
    std::fs::create_dir_all(&far).unwrap();
    let link = far.join("a-link.txt");
    std::fs::hard_link(w.repo.join("a.txt"), &link).unwrap();
    let link = link.display().to_string();
    let out = sh(&w, &s, "cat a.txt >/dev/null");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    w.write("a.txt", "theirs\n");
    for script in [
        format!("echo mine > '{link}'"),
        format!("truncate -s 0 '{link}'"),
        format!("echo mine >> '{link}'"),
    ] {
        let out = sh(&w, &s, &script);
        assert_ne!(code(&out), 0, "{script}");
        assert_refused(&out, "write", "a.txt");
        assert_eq!(w.read("a.txt"), "theirs\n", "{script}");
    }
    let py = format!(
        "import os\ntry:\n os.open('{link}', os.O_WRONLY | os.O_CREAT | os.O_EXCL)\nexcept FileExistsError:\n print('exists')\n"
    );
    let out = w.run(&["--session", &s, "exec", "--", &python(), "-c", &py]);
    assert_eq!(stdout(&out), "exists\n", "{}", stderr(&out));

    let out = sh(
        &w,
        &s,
        &format!("cat a.txt >/dev/null && echo mine > '{link}'"),
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(w.read("a.txt"), "mine\n");
    assert_eq!(status(&w, &s), "unchanged  a.txt");

    let made = far.join("made.txt").display().to_string();
    w.write("a.txt", "theirs again\n");
    let out = sh(
        &w,
        &s,
        &format!("ln a.txt '{made}' && echo mine > '{made}'"),
    );
    assert_ne!(code(&out), 0);
    assert_refused(&out, "write", "a.txt");
    assert_eq!(w.read("a.txt"), "theirs again\n");
}

/// A file made where its folder is reached through a link is placed the long way too: made
/// through a linked folder inside the workspace, it is the file in the folder the link names
/// (and a later change of it is checked there); through a link to a folder outside, it is none
/// of the session's business; one made beside them in a plain folder is where its names say.
#[test]
fn files_made_through_linked_folders_are_the_files_they_reach() {
    let Some((w, s)) = setup() else { return };
    std::os::unix::fs::symlink("sub", w.repo.join("linked")).unwrap();
    let outside = w.base().join("far");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, w.repo.join("away")).unwrap();
    let out = sh(
        &w,
        &s,
        "echo one > linked/new.txt && echo two > away/new.txt && echo three > sub/plain.txt",
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(w.read("sub/new.txt"), "one\n");
    assert_eq!(
        std::fs::read_to_string(outside.join("new.txt")).unwrap(),
        "two\n"
    );
    assert_eq!(
        status(&w, &s),
        "unchanged  sub/new.txt\nunchanged  sub/plain.txt"
    );
    // Changed by someone else since: a write through the link is refused as the file's own.
    w.write("sub/new.txt", "theirs\n");
    let out = sh(&w, &s, "echo mine > linked/new.txt");
    assert_refused(&out, "write", "sub/new.txt");
    assert_eq!(w.read("sub/new.txt"), "theirs\n");
}

/// What the guard keeps of a session's files is Stella's own write: a FIFO put in its place
/// never hangs a command, and a link put where its folder goes is never written through.
#[test]
fn the_signatures_file_never_hangs_the_guard_nor_is_written_through_a_link() {
    let Some((w, s)) = setup() else { return };
    std::thread::sleep(Duration::from_millis(200));
    let private = w.repo.join(".stella/private");
    std::fs::create_dir_all(private.join("exec")).unwrap();
    let kept = private.join("exec").join(format!("{s}.signatures"));
    let c = std::ffi::CString::new(kept.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let mut child = w
        .stella()
        .args(["--session", &s, "exec", "--", "cat", "a.txt"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the guard hung on a FIFO"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert_eq!(status(&w, &s), "unchanged  a.txt");

    // The folder a link to one outside: nothing lands there.
    std::fs::remove_dir_all(private.join("exec")).unwrap();
    let outside = w.base().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, private.join("exec")).unwrap();
    w.write("c.txt", "sea\n");
    std::thread::sleep(Duration::from_millis(200));
    let out = w.run(&["--session", &s, "exec", "--", "cat", "c.txt"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    assert!(status(&w, &s).contains("unchanged  c.txt"));
}

#[test]
fn a_guard_killed_as_its_command_starts_leaves_no_child_waiting() {
    let Some((w, s)) = setup() else { return };
    // Killed at every moment of its start: while the configuration is checked, the child waits
    // for the word to run its program; a child whose parent died must not wait forever.
    for i in 0..40u64 {
        let mut guard = w
            .stella()
            .args(["--session", &s, "exec", "--", "sh", "-c", "true"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(500 * (i % 20)));
        let _ = guard.kill();
        let _ = guard.wait();
    }
    let waiting = || {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(Result::ok)
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .filter(|c| String::from_utf8_lossy(c).contains(&s))
            .count()
    };
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while waiting() > 0 && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(waiting(), 0, "a child of a killed guard is still there");
}
