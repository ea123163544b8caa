//! When a command finishes writing a file: inotify's `IN_CLOSE_WRITE` on the folders of the
//! files it writes, so the guard takes what it left at that moment, not when it exits.

use std::collections::HashMap;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::paths::RelPath;

/// The folders watched, and the closes they reported.
pub struct Watch {
    fd: OwnedFd,
    /// The workspace folder (`""` for the root) of each watch descriptor.
    folders: HashMap<i32, Vec<u8>>,
    watched: HashMap<Vec<u8>, i32>,
    /// Where events are read, allocated once: a write's close is one event to take.
    buf: Vec<u8>,
}

/// The most one event takes: its header and the longest name a folder entry can have.
const EVENT_MAX: usize = std::mem::size_of::<libc::inotify_event>() + libc::NAME_MAX as usize + 1;

impl Watch {
    /// A new, empty watch; `None` where inotify cannot be had (the guard then takes what a
    /// command left when it is recorded).
    pub fn new() -> Option<Watch> {
        // SAFETY: inotify_init1 takes flags and returns a new descriptor or -1.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        Some(Watch {
            // SAFETY: a fresh descriptor we own.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            folders: HashMap::new(),
            watched: HashMap::new(),
            buf: vec![0u8; 64 << 10],
        })
    }

    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Watch the folder of `path` (under `root`) for files closed after writing; whether it is
    /// watched.
    pub fn folder_of(&mut self, root: &Path, path: &RelPath) -> bool {
        let bytes = path.as_bytes();
        let folder = match bytes.iter().rposition(|b| *b == b'/') {
            Some(i) => bytes[..i].to_vec(),
            None => Vec::new(),
        };
        if self.watched.contains_key(&folder) {
            return true;
        }
        let abs = root.join(std::ffi::OsStr::from_bytes(&folder));
        let Ok(c) = CString::new(abs.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: a valid descriptor and a NUL-terminated path.
        let wd = unsafe {
            libc::inotify_add_watch(
                self.fd.as_raw_fd(),
                c.as_ptr(),
                libc::IN_CLOSE_WRITE | libc::IN_ONLYDIR | libc::IN_DONT_FOLLOW,
            )
        };
        if wd < 0 {
            return false;
        }
        self.folders.insert(wd, folder.clone());
        self.watched.insert(folder, wd);
        true
    }

    /// The files closed after writing since the last call, in order (workspace paths).
    pub fn closed(&mut self) -> Vec<RelPath> {
        let mut out = Vec::new();
        let mut buf = std::mem::take(&mut self.buf);
        loop {
            // SAFETY: reading into a buffer we own, of its length.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                if n < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                break;
            }
            let mut at = 0;
            let head = std::mem::size_of::<libc::inotify_event>();
            while at + head <= n as usize {
                // SAFETY: the kernel wrote a whole event header here; read it unaligned.
                let event: libc::inotify_event =
                    unsafe { std::ptr::read_unaligned(buf[at..].as_ptr().cast()) };
                let name = &buf[at + head..at + head + event.len as usize];
                let name = &name[..name.iter().position(|b| *b == 0).unwrap_or(name.len())];
                if event.mask & libc::IN_CLOSE_WRITE != 0
                    && !name.is_empty()
                    && let Some(folder) = self.folders.get(&event.wd)
                {
                    let mut path = folder.clone();
                    if !path.is_empty() {
                        path.push(b'/');
                    }
                    path.extend_from_slice(name);
                    out.extend(RelPath::from_bytes(&path));
                }
                if event.mask & libc::IN_IGNORED != 0
                    && let Some(folder) = self.folders.remove(&event.wd)
                {
                    self.watched.remove(&folder);
                }
                at += head + event.len as usize;
            }
            // Room was left for another event: the queue was empty when this read took it
            // (one read, not a second one to hear "nothing more"). A later event wakes the
            // supervisor again.
            if (n as usize) + EVENT_MAX <= buf.len() {
                break;
            }
        }
        self.buf = buf;
        out
    }
}
