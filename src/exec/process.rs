//! What the supervisor knows of the command's processes: where a path they name leads, as they
//! see it, and whether a process is Stella, under Stella's guard, or still one of the command's.

use std::io;
use std::path::{Path, PathBuf};

/// Field `n` (counting from 0 at the state) of `/proc/<pid>/stat`, after the command name, which
/// may hold spaces and parentheses: 0 state, 1 ppid, 2 pgrp, 3 session.
fn stat_field(pid: &str, n: usize) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, after) = stat.rsplit_once(')')?;
    after.split_whitespace().nth(n).map(str::to_owned)
}

/// Process `pid` and every process descended from it, as `/proc` lists them now (each task's
/// `children`), parents before their children.
pub(super) fn descendants(pid: u32) -> Vec<u32> {
    let mut out = vec![pid];
    let mut seen = std::collections::HashSet::from([pid]);
    let mut next = 0;
    // Bounded, as a command's processes are: a loop in what /proc says never runs on.
    while next < out.len() && out.len() < 1 << 16 {
        let p = out[next];
        next += 1;
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let Ok(children) = std::fs::read_to_string(task.path().join("children")) else {
                continue;
            };
            for child in children.split_whitespace().filter_map(|c| c.parse().ok()) {
                if seen.insert(child) {
                    out.push(child);
                }
            }
        }
    }
    out
}

/// Whether process `pid` still looks like one of the command's (a pid seen earlier may have
/// been reused): in this process's session, with no new privileges and a seccomp filter, as
/// every process under the guard is.
pub(super) fn still_guarded(pid: u32) -> bool {
    let session = |p: &str| stat_field(p, 3);
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
    };
    session("self").is_some()
        && session("self") == session(&pid.to_string())
        && field("NoNewPrivs:") == Some("1")
        && field("Seccomp:") == Some("2")
}

/// Whether process `pid` runs this very binary (a nested `git stella`, which may write `.stella/`).
pub(super) fn is_stella(pid: u32) -> bool {
    let (Ok(theirs), Ok(ours)) = (
        std::fs::read_link(format!("/proc/{pid}/exe")),
        std::fs::read_link("/proc/self/exe"),
    ) else {
        return false;
    };
    theirs == ours
}

/// Resolve `abs` as process `process` (thread `thread`) sees it, following symbolic links the
/// way the kernel does (`follow`: in the last component too), with `/proc/self` and
/// `/proc/thread-self` taken as that process's own. Components past one that does not exist
/// are kept as written.
pub(super) fn resolve_as(
    process: u32,
    thread: u32,
    abs: &Path,
    follow: bool,
) -> io::Result<PathBuf> {
    use std::path::Component;
    let mut out = PathBuf::from("/");
    // What is left to walk, the next path last: a link's target goes on top of the rest of the
    // path it was found in.
    let mut todo: Vec<PathBuf> = vec![abs.to_owned()];
    let mut links = 0;
    let mut missing = false;
    while let Some(path) = todo.pop() {
        let mut names = path.components().peekable();
        while let Some(c) = names.next() {
            let name = match c {
                Component::RootDir => {
                    out = PathBuf::from("/");
                    continue;
                }
                Component::CurDir | Component::Prefix(_) => continue,
                Component::ParentDir => {
                    out.pop();
                    continue;
                }
                Component::Normal(name) => name,
            };
            out.push(name);
            if out.as_os_str().len() <= "/proc/thread-self".len() {
                if out == Path::new("/proc/self") {
                    out = PathBuf::from(format!("/proc/{process}"));
                } else if out == Path::new("/proc/thread-self") {
                    out = PathBuf::from(format!("/proc/{process}/task/{thread}"));
                }
            }
            let last = names.peek().is_none() && todo.is_empty();
            // Past a name that does not exist, and the last name of a call that does not
            // follow it: taken as written.
            if missing || (last && !follow) {
                continue;
            }
            // One `readlink` per name, as realpath(3) does: a link, not a link, or nothing.
            match std::fs::read_link(&out) {
                Ok(target) => {
                    links += 1;
                    if links > 40 {
                        return Err(io::Error::from_raw_os_error(libc::ELOOP));
                    }
                    out.pop();
                    let rest: PathBuf = names.collect();
                    if !rest.as_os_str().is_empty() {
                        todo.push(rest);
                    }
                    todo.push(target);
                    break;
                }
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => missing = true,
                Err(e) => return Err(e),
            }
        }
    }
    Ok(out)
}

/// The path, relative to `root`, that `raw` names from the calling thread's working folder `cwd`
/// (or absolute) when it lies inside `root` by its names alone and has no `..` on the way: the
/// common case, which [`resolve_beneath`] then checks has no symbolic link either. `None` where
/// the long way must say.
///
/// Written as git names the file whatever the call's spelling: `a//b`, `a/./b` and `./a/b` are
/// `a/b`, as the kernel takes them. (Kept as spelled, such a name was no workspace path at
/// all, and a change through it went unchecked.)
pub(super) fn rel_beneath(
    cwd: Option<&Path>,
    dirfd: Option<libc::c_int>,
    raw: &Path,
    root: &Path,
) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    use std::path::Component;
    if raw.as_os_str().as_bytes().ends_with(b"/") {
        return None;
    }
    let (base, tail) = if raw.is_absolute() {
        (Path::new(""), raw.strip_prefix(root).ok()?)
    } else {
        if !matches!(dirfd, None | Some(libc::AT_FDCWD)) {
            return None;
        }
        (cwd?.strip_prefix(root).ok()?, raw)
    };
    let mut rel = PathBuf::with_capacity(base.as_os_str().len() + tail.as_os_str().len() + 1);
    // `components` leaves out empty names and every `.` but a leading one.
    for c in base.components().chain(tail.components()) {
        match c {
            Component::Normal(name) => rel.push(name),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (!rel.as_os_str().is_empty()).then_some(rel)
}

/// The descriptor (`O_PATH`) of what `rel` ([`rel_beneath`]) names beneath `root_fd`, when no
/// symbolic link is on the way (the kernel checks that): then the names are the path, and no
/// descriptor needs naming. `None` where [`resolve_quick`] must say.
pub(super) fn resolve_beneath(
    rel: &Path,
    follow: bool,
    root_fd: std::os::fd::BorrowedFd<'_>,
) -> Option<std::os::fd::OwnedFd> {
    let mut flags = rustix::fs::OFlags::PATH | rustix::fs::OFlags::CLOEXEC;
    if !follow {
        flags |= rustix::fs::OFlags::NOFOLLOW;
    }
    rustix::fs::openat2(
        root_fd,
        rel,
        flags,
        rustix::fs::Mode::empty(),
        rustix::fs::ResolveFlags::BENEATH | rustix::fs::ResolveFlags::NO_SYMLINKS,
    )
    .ok()
}

/// [`resolve_as`] in a few system calls, for the common case: the kernel walks the path once
/// (from the calling thread's working folder or descriptor `dirfd`), and the descriptor it opens
/// names the result. `None` where only the walk by names can say: a path through `/proc` or
/// `/dev` (whose `self` would be the supervisor's), a magic link, a missing folder, a dangling
/// link as the last name, or a kernel without `openat2` (5.6).
pub(super) fn resolve_quick(
    thread: u32,
    dirfd: Option<libc::c_int>,
    raw: &Path,
    follow: bool,
) -> Option<PathBuf> {
    use std::os::fd::{AsFd, AsRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    if raw.starts_with("/proc") || raw.starts_with("/dev") {
        return None;
    }
    let base = if raw.is_absolute() {
        None
    } else {
        let at = match dirfd {
            None | Some(libc::AT_FDCWD) => format!("/proc/{thread}/cwd"),
            Some(fd) => format!("/proc/{thread}/fd/{fd}"),
        };
        let flags =
            rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC;
        Some(rustix::fs::open(at.as_str(), flags, rustix::fs::Mode::empty()).ok()?)
    };
    let open = |path: &Path, flags: rustix::fs::OFlags| -> io::Result<OwnedFd> {
        let at = base.as_ref().map_or(rustix::fs::CWD, |b| b.as_fd());
        rustix::fs::openat2(
            at,
            path,
            flags | rustix::fs::OFlags::PATH | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
            rustix::fs::ResolveFlags::NO_MAGICLINKS,
        )
        .map_err(io::Error::from)
    };
    let named = |fd: &OwnedFd| -> Option<PathBuf> {
        let p = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()?;
        let bytes = p.as_os_str().as_bytes();
        (p.is_absolute() && !p.starts_with("/proc") && !bytes.ends_with(b" (deleted)")).then_some(p)
    };
    let nofollow = if follow {
        rustix::fs::OFlags::empty()
    } else {
        rustix::fs::OFlags::NOFOLLOW
    };
    match open(raw, nofollow) {
        Ok(fd) => named(&fd),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // A new file: its folder resolved, its name as written, when no name is there at
            // all (not even a link that leads nowhere).
            let bytes = raw.as_os_str().as_bytes();
            let name = match raw.components().next_back() {
                Some(std::path::Component::Normal(n)) if !bytes.ends_with(b"/") => n,
                _ => return None,
            };
            let parent = match raw.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            let dir = open(parent, rustix::fs::OFlags::DIRECTORY).ok()?;
            let there =
                rustix::fs::statat(&dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok();
            if there {
                return None;
            }
            named(&dir).map(|d| d.join(name))
        }
        Err(_) => None,
    }
}

/// Whether some ancestor of this process runs Stella (a program of this binary's name,
/// wherever it is installed): the supervisor of the shell guard this process runs under, when
/// the kernel says it runs under one.
pub(super) fn under_stella() -> bool {
    let name = |exe: &Path| exe.file_name().map(ToOwned::to_owned);
    let Some(ours) = std::fs::read_link("/proc/self/exe")
        .ok()
        .and_then(|e| name(&e))
    else {
        return false;
    };
    let parent = |pid: &str| stat_field(pid, 1);
    let mut pid = parent("self");
    for _ in 0..256 {
        match pid.as_deref() {
            None | Some("0") => return false,
            Some(p) => {
                if std::fs::read_link(format!("/proc/{p}/exe"))
                    .is_ok_and(|e| name(&e) == Some(ours.clone()))
                {
                    return true;
                }
                pid = parent(p);
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_beneath_the_root_is_written_as_git_names_the_file() {
        let root = Path::new("/w");
        let r = |cwd: Option<&str>, dirfd: Option<libc::c_int>, raw: &str| {
            rel_beneath(cwd.map(Path::new), dirfd, Path::new(raw), root)
        };
        let some = |p: &str| Some(PathBuf::from(p));
        assert_eq!(r(Some("/w"), None, "a//b/./c"), some("a/b/c"));
        assert_eq!(r(Some("/w/sub"), None, ".//x"), some("sub/x"));
        assert_eq!(r(Some("/w/sub"), Some(libc::AT_FDCWD), "x"), some("sub/x"));
        assert_eq!(r(None, None, "/w//a/./b"), some("a/b"));
        assert_eq!(r(Some("/elsewhere"), None, "/w/./a"), some("a"));
        // The long way says: a `..`, a folder named with a trailing slash, another descriptor.
        assert_eq!(r(Some("/w"), None, "a/../b"), None);
        assert_eq!(r(Some("/w"), None, "a/"), None);
        assert_eq!(r(Some("/w"), Some(5), "a"), None);
        // Not a workspace file: the root itself, a path outside, no working folder known.
        assert_eq!(r(Some("/w"), None, "."), None);
        assert_eq!(r(None, None, "/w"), None);
        assert_eq!(r(None, None, "/wx/a"), None);
        assert_eq!(r(Some("/elsewhere"), None, "a"), None);
        assert_eq!(r(None, None, "a"), None);
    }

    #[test]
    fn paths_resolve_as_the_calling_process_sees_them() {
        use std::os::fd::AsRawFd as _;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("src")).unwrap();
        std::os::unix::fs::symlink(root.join("src"), root.join("alias")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("src/link")).unwrap();
        let me = std::process::id();
        let r = |p: &Path, follow| resolve_as(me, me, p, follow).unwrap();
        // The folder is resolved, the last name kept unless followed.
        assert_eq!(r(&root.join("alias/a.txt"), false), root.join("src/a.txt"));
        assert_eq!(r(&root.join("src/link"), false), root.join("src/link"));
        assert_eq!(r(&root.join("src/link"), true), Path::new("/etc/passwd"));
        assert_eq!(
            r(&root.join("src/../missing/x/../y"), true),
            root.join("missing/y")
        );
        // /proc/self, /dev/fd and a working folder are the caller's own.
        let file = std::fs::File::create(root.join("src/f")).unwrap();
        let fd = file.as_raw_fd();
        assert_eq!(
            r(Path::new(&format!("/dev/fd/{fd}")), true),
            root.join("src/f")
        );
        assert_eq!(
            r(Path::new(&format!("/proc/self/fd/{fd}")), true),
            root.join("src/f")
        );
        // The quick way agrees with the walk wherever it answers, and leaves /proc to it.
        std::os::unix::fs::symlink("nowhere", root.join("src/dangling")).unwrap();
        for (p, follow) in [
            (root.join("alias/a.txt"), false),
            (root.join("alias/f"), true),
            (root.join("src/link"), false),
            (root.join("src/link"), true),
            (root.join("src/dangling"), false),
            (root.join("alias/../src/./f"), true),
        ] {
            assert_eq!(
                resolve_quick(me, None, &p, follow),
                Some(r(&p, follow)),
                "{p:?}"
            );
        }
        assert_eq!(
            resolve_quick(me, None, &root.join("src/dangling"), true),
            None
        );
        assert_eq!(resolve_quick(me, None, &root.join("missing/x"), true), None);
        assert_eq!(
            resolve_quick(me, None, Path::new("/proc/self/cwd"), true),
            None
        );
        let cwd = std::fs::read_link("/proc/self/cwd").unwrap();
        assert_eq!(r(Path::new("/proc/self/cwd/x"), true), cwd.join("x"));
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .current_dir(&root)
            .spawn()
            .unwrap();
        let theirs = child.id();
        let seen = resolve_as(theirs, theirs, Path::new("/proc/self/cwd/src/f"), true).unwrap();
        // A relative path starts from the caller's working folder, never the supervisor's.
        let quick = resolve_quick(theirs, None, Path::new("alias/f"), true);
        let quick_new = resolve_quick(theirs, None, Path::new("src/new"), true);
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(seen, root.join("src/f"));
        assert_eq!(quick, Some(root.join("src/f")));
        assert_eq!(quick_new, Some(root.join("src/new")));
    }
}
