//! When a command finishes writing a file: inotify's `IN_CLOSE_WRITE` on the folders of the
//! files it writes, so the guard takes what it left at that moment, not when it exits.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::HashMap;

use rustix::fs::inotify;

use crate::paths::RelPath;

/// The folders watched, and the closes they reported.
pub(crate) struct Watch {
    fd: OwnedFd,
    /// The workspace folder (`""` for the root) of each watch descriptor.
    folders: HashMap<i32, Vec<u8>>,
    watched: HashMap<Vec<u8>, i32>,
    /// Where events are read, allocated once, at the first look after a folder is watched: a
    /// write's close is one event to take.
    buf: Vec<u8>,
}

/// An event's header (`struct inotify_event` without its name): watch, mask, cookie, length.
const HEAD: usize = 16;

/// The most one event takes: its header and the longest name a folder entry can have.
const EVENT_MAX: usize = HEAD + libc::NAME_MAX as usize + 1;

/// The header of one event, as the kernel wrote it (native byte order).
struct Event {
    wd: i32,
    mask: u32,
    /// The length of the name after the header, padding included.
    len: usize,
}

impl Event {
    fn at(head: &[u8]) -> Event {
        let word = |i: usize| u32::from_ne_bytes([head[i], head[i + 1], head[i + 2], head[i + 3]]);
        Event {
            wd: word(0) as i32,
            mask: word(4),
            len: word(12) as usize,
        }
    }
}

const _: () = assert!(std::mem::size_of::<libc::inotify_event>() == HEAD);

impl Watch {
    /// A new, empty watch; `None` where inotify cannot be had (the guard then takes what a
    /// command left when it is recorded).
    pub fn new() -> Option<Watch> {
        let fd =
            inotify::init(inotify::CreateFlags::NONBLOCK | inotify::CreateFlags::CLOEXEC).ok()?;
        Some(Watch {
            fd,
            folders: HashMap::default(),
            watched: HashMap::default(),
            buf: Vec::new(),
        })
    }

    pub(crate) fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Watch the folder of `path` (under `root`) for files closed after writing; whether it is
    /// watched.
    pub(crate) fn folder_of(&mut self, root: &Path, path: &RelPath) -> bool {
        let bytes = path.as_bytes();
        let folder = match bytes.iter().rposition(|b| *b == b'/') {
            Some(i) => bytes[..i].to_vec(),
            None => Vec::new(),
        };
        if self.watched.contains_key(&folder) {
            return true;
        }
        let abs = root.join(std::ffi::OsStr::from_bytes(&folder));
        let flags = inotify::WatchFlags::CLOSE_WRITE
            | inotify::WatchFlags::ONLYDIR
            | inotify::WatchFlags::DONT_FOLLOW;
        let Ok(wd) = inotify::add_watch(&self.fd, abs.as_path(), flags) else {
            return false;
        };
        self.folders.insert(wd, folder.clone());
        self.watched.insert(folder, wd);
        true
    }

    /// The files closed after writing since the last call, in order (workspace paths).
    pub(crate) fn closed(&mut self) -> Vec<RelPath> {
        let mut out = Vec::new();
        // Nothing watched, nothing to hear (a command that wrote no file: no buffer, no read).
        if self.folders.is_empty() {
            return out;
        }
        if self.buf.is_empty() {
            self.buf = vec![0u8; 64 << 10];
        }
        let mut buf = std::mem::take(&mut self.buf);
        loop {
            let n = match rustix::io::read(&self.fd, &mut buf[..]) {
                Ok(0) => break,
                Ok(n) => n,
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => break,
            };
            let mut at = 0;
            while at + HEAD <= n {
                let event = Event::at(&buf[at..at + HEAD]);
                let name = &buf[at + HEAD..(at + HEAD + event.len).min(n)];
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
                at += HEAD + event.len;
            }
            // Room was left for another event: the queue was empty when this read took it
            // (one read, not a second one to hear "nothing more"). A later event wakes the
            // supervisor again.
            if n + EVENT_MAX <= buf.len() {
                break;
            }
        }
        self.buf = buf;
        out
    }
}
