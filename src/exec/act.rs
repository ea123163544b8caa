//! Calls the supervisor carries out itself for the calling process, so that the check of a change
//! and the change it allows are one step: both happen under the folder hold every Stella writer
//! takes (`git stella write`, MCP, another guarded command), and the kernel never resolves the
//! path again after the check. An open comes back to the caller as a descriptor the kernel puts
//! into it (`SECCOMP_IOCTL_NOTIF_ADDFD`); a rename, unlink or truncate returns its own result.

use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use crate::fsutil;
use crate::paths::RelPath;

use super::sys::notify::{self, Answer};

/// The folder holding `rel` beneath the workspace folder `root`, opened without following any
/// link on the way; `None` where there is none, or a link stands in the way (the caller's own
/// resolution then goes on without the supervisor carrying out the call).
pub(super) fn folder(root: &OwnedFd, rel: &RelPath) -> Option<OwnedFd> {
    folder_of(root, OsStr::from_bytes(rel.as_bytes()))
}

/// [`folder`] of `rel` given as the names the call gave.
pub(super) fn folder_of(root: &OwnedFd, rel: &OsStr) -> Option<OwnedFd> {
    let bytes = rel.as_bytes();
    let parent = match bytes.iter().rposition(|b| *b == b'/') {
        Some(i) => OsStr::from_bytes(&bytes[..i]),
        None => OsStr::new("."),
    };
    rustix::fs::openat2(
        root,
        parent,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
    )
    .ok()
}

/// The same folder, told apart from another by its device and inode.
pub(super) fn identity(dir: &OwnedFd) -> (u64, u64) {
    rustix::fs::fstat(dir).map_or((0, 0), |st| (st.st_dev, st.st_ino))
}

/// Whether process `pid` sees files as the supervisor does: the same mount namespace and root.
/// Only then is a call carried out for it the call it made.
pub(super) fn same_view(pid: u32) -> bool {
    static OURS: std::sync::OnceLock<Option<View>> = std::sync::OnceLock::new();
    let ours = OURS.get_or_init(|| View::of("self"));
    ours.is_some() && View::of(&pid.to_string()) == *ours
}

/// A process's mount namespace and root folder, each by device and inode.
#[derive(PartialEq, Eq)]
struct View {
    mounts: (u64, u64),
    root: (u64, u64),
}

impl View {
    fn of(process: &str) -> Option<View> {
        let id = |p: String| {
            rustix::fs::stat(p.as_str())
                .ok()
                .map(|st| (st.st_dev, st.st_ino))
        };
        Some(View {
            mounts: id(format!("/proc/{process}/ns/mnt"))?,
            root: id(format!("/proc/{process}/root"))?,
        })
    }
}

/// Open `name` in `dir` as process `pid` asked (`flags`, and `mode` for a file it creates).
/// The last name is never followed: it was resolved before the check, and a link put there
/// since fails as `O_NOFOLLOW` does. Only a regular file is opened here: anything else (a FIFO
/// whose open waits for a reader) is left to the kernel, as it holds no bytes a check could
/// compare.
pub(super) fn open(dir: &OwnedFd, name: &OsStr, flags: libc::c_int, mode: u32, pid: u32) -> Answer {
    // Not even opened: the write end of a FIFO opened and closed here would end its reader's
    // input before the caller's own write came.
    if let Ok(st) = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        && !is_regular(st.st_mode)
    {
        return Answer::Continue;
    }
    let cloexec = flags & libc::O_CLOEXEC != 0;
    let asked = OFlags::from_bits_retain((flags & !(libc::O_CLOEXEC | libc::O_CREAT)) as u32);
    // Never waits: a FIFO put there since the look above fails with ENXIO or opens at once, and
    // is then left to the kernel.
    let base = asked | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
    let opened = match rustix::fs::openat(dir, name, base, Mode::empty()) {
        // A file to create: with the caller's mask, not the supervisor's.
        Err(Errno::NOENT) if flags & libc::O_CREAT != 0 => {
            let mask = notify::umask_of(pid).unwrap_or(0o022);
            let mode = Mode::from_raw_mode(mode & 0o7777 & !mask);
            let old = rustix::process::umask(Mode::empty());
            let opened = rustix::fs::openat(dir, name, base | OFlags::CREATE, mode);
            rustix::process::umask(old);
            opened
        }
        opened => opened,
    };
    let fd = match opened {
        Ok(fd) => fd,
        Err(Errno::NXIO) => return Answer::Continue,
        Err(e) => return Answer::Fail(e.raw_os_error()),
    };
    match rustix::fs::fstat(&fd) {
        Ok(st) if is_regular(st.st_mode) => {}
        _ => return Answer::Continue,
    }
    // Being written until the command closes it: another writer's check waits for that.
    fsutil::mark_writing(&fd);
    // The status flags as asked (`F_SETFL` changes only those it can).
    if flags & libc::O_NONBLOCK == 0
        && let Err(e) = rustix::fs::fcntl_setfl(&fd, asked)
    {
        return Answer::Fail(e.raw_os_error());
    }
    Answer::Install { fd, cloexec }
}

fn is_regular(mode: u32) -> bool {
    mode & libc::S_IFMT == libc::S_IFREG
}

/// `unlink` of `name` in `dir`.
pub(super) fn unlink(dir: &OwnedFd, name: &OsStr) -> Answer {
    done(rustix::fs::unlinkat(dir, name, AtFlags::empty()))
}

/// `truncate` of `name` in `dir` to `len` bytes.
pub(super) fn truncate(dir: &OwnedFd, name: &OsStr, len: u64) -> Answer {
    let file = rustix::fs::openat(
        dir,
        name,
        OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    );
    done(file.and_then(|f| rustix::fs::ftruncate(&f, len)))
}

/// `renameat2` of `from` in `from_dir` to `to` in `to_dir`, with the caller's `flags`.
pub(super) fn rename(
    from_dir: &OwnedFd,
    from: &OsStr,
    to_dir: &OwnedFd,
    to: &OsStr,
    flags: libc::c_uint,
) -> Answer {
    done(rustix::fs::renameat_with(
        from_dir,
        from,
        to_dir,
        to,
        rustix::fs::RenameFlags::from_bits_retain(flags),
    ))
}

fn done(result: rustix::io::Result<()>) -> Answer {
    match result {
        Ok(()) => Answer::Value(0),
        Err(e) => Answer::Fail(e.raw_os_error()),
    }
}
