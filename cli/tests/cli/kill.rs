//! Helpers, no tests: a command killed half-way (SIGKILL, at a delay or once a given child
//! runs), and the checks that nothing it started outlives it and the store it wrote stays whole.
//! `checkpoint.rs` and `replay.rs` kill their commands this way.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

/// Bytes that do not compress, so packing them takes a while.
pub fn noise(seed: u64, len: usize) -> Vec<u8> {
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
pub fn session_holding_megabytes(w: &World, n: usize) -> String {
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
pub fn children(pid: u32) -> Vec<u32> {
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
pub fn alive(pid: u32) -> bool {
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
pub fn processes_naming(needle: &str) -> Vec<(u32, String)> {
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

pub fn kill(pid: u32, signal: i32) {
    // SAFETY: a plain kill(2) on a pid this test started or recorded.
    unsafe { libc::kill(pid as libc::pid_t, signal) };
}

/// Wait until `done` holds, up to `limit`.
pub fn eventually(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
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
pub fn kill_and_check(
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
pub fn tree_files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
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
pub fn assert_store_fsck_clean(w: &World) {
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
