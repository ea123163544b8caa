//! Where a call's path lies: in the workspace (and which file), in Stella's own state, or
//! elsewhere, from the calling thread's working folder and the folders held open.

use super::*;

impl Supervisor<'_, '_> {
    /// Where the path a call names lies. `follow`: whether the call follows a symlink in the
    /// last component (an open does, unless `O_NOFOLLOW`; unlink, rename and link do not).
    ///
    /// The path is resolved as the calling process sees it: its working folder and descriptors,
    /// and `/proc/self`, `/proc/thread-self` and `/dev/fd` as its own, never the supervisor's.
    /// For a `change`, a path outside the workspace's own is inside it when one of its folders
    /// is the workspace folder itself (a bind mount of it, or the folder renamed meanwhile).
    pub(super) fn locate(
        &mut self,
        listener: &Listener,
        req: &libc::seccomp_notif,
        dirfd: Option<libc::c_int>,
        addr: u64,
        follow: bool,
        change: bool,
    ) -> Located {
        self.stat_hint = None;
        self.outside = None;
        // Every process seen is known, for the signals passed on to the command; the thread is
        // held before its memory is read, so the validity check below vouches for the hold too.
        let process = self.process_of(req.pid);
        let raw = match notify::read_path(req.pid, addr) {
            Ok(p) => p,
            Err(e) => return Located::Unknown(e),
        };
        // What was read belongs to the caller only if it is still the same process.
        if !listener.valid(req.id) {
            return Located::Elsewhere;
        }
        if raw.is_empty() {
            // `AT_EMPTY_PATH`: the descriptor itself, which was checked when it was opened.
            return Located::Elsewhere;
        }
        let raw = PathBuf::from(raw);
        let cwd = (raw.is_relative() && matches!(dirfd, None | Some(libc::AT_FDCWD)))
            .then(|| self.cwd_of(req.pid, change))
            .flatten();
        let rel = rel_beneath(cwd.as_deref(), dirfd, &raw, &self.root);
        // A read: one `stat` in its folder, held open, and that `stat` is the read's.
        let read = match (&rel, change) {
            (Some(rel), false) => self.stat_in_folder(rel, follow),
            _ => None,
        };
        let beneath = match (read, &rel, &self.root_dir) {
            (Some(stat), Some(rel), _) => {
                self.stat_hint = Some((req.id, stat));
                Some(rel.clone())
            }
            // A change: its folder, opened beneath the root with no link on the way, is kept for
            // the hold the change takes there ([`Supervisor::folder_for`]); the last name is
            // looked at in it (not there yet: a file about to be made, `tar x`, a compiler's
            // output).
            (None, Some(rel), Some(root_fd)) if change => {
                match folder_beneath(rel, follow, root_fd) {
                    Some((dir, present)) => {
                        self.change_dir = Some(Placed {
                            rel: rel.clone(),
                            dir,
                            present,
                        });
                        Some(rel.clone())
                    }
                    None => None,
                }
            }
            (None, Some(rel), Some(root_fd)) => {
                resolve_beneath(rel, follow, root_fd.as_fd()).map(|fd| {
                    // A read's `stat` comes from the descriptor, not another walk of the path.
                    self.stat_hint = std::fs::File::from(fd)
                        .metadata()
                        .ok()
                        .map(|meta| (req.id, Stat::of(&meta)));
                    rel.clone()
                })
            }
            _ => None,
        };
        // The names alone said where it is, and the kernel agreed (no link on the way): the
        // workspace path is `rel` as it stands, with no absolute path to build and take apart.
        if let Some(rel) = beneath {
            if self.data_rel.as_ref().is_some_and(|d| rel.starts_with(d)) {
                return Located::Stella(self.root.join(rel));
            }
            return self.classify(&rel, || self.root.join(&rel));
        }
        let resolved = match resolve_quick(req.pid, dirfd, &raw, follow) {
            Some(p) => p,
            None => {
                let abs = if raw.is_absolute() {
                    raw
                } else {
                    match notify::base_dir(req.pid, dirfd) {
                        Ok(base) => base.join(raw),
                        Err(e) => return Located::Unknown(e),
                    }
                };
                match resolve_as(process, req.pid, &abs, follow) {
                    Ok(p) => p,
                    // A path that cannot be resolved cannot be opened either.
                    Err(_) if follow => return Located::Elsewhere,
                    Err(e) => return Located::Unknown(e),
                }
            }
        };
        if resolved.starts_with(&self.data_dir) {
            return Located::Stella(resolved);
        }
        let rel = match resolved.strip_prefix(&self.root) {
            Ok(rel) => rel.to_owned(),
            Err(_) => match change.then(|| self.alias(&resolved)).flatten() {
                Some(rel) => rel,
                None => {
                    if change {
                        self.outside = Some(resolved);
                    }
                    return Located::Elsewhere;
                }
            },
        };
        self.classify(&rel, || resolved)
    }

    /// Where `rel`, a path relative to the workspace root, lies: in the workspace, in a private
    /// area (`resolved` names it for the refusal), or, the root itself or a name git cannot
    /// hold, elsewhere.
    pub(super) fn classify(&self, rel: &Path, resolved: impl FnOnce() -> PathBuf) -> Located {
        match RelPath::from_bytes(rel.as_os_str().as_bytes()) {
            Some(rel) => match paths::private_area(&rel) {
                Some(".stella") => Located::Stella(resolved()),
                // `.git` folders are git's: never recorded, as git runs in them.
                Some(_) => Located::Elsewhere,
                None => Located::Inside(rel),
            },
            None => Located::Elsewhere,
        }
    }

    /// What one `stat` says of `rel` (a path inside the workspace by its names alone), taken in
    /// its folder, which the supervisor holds open (`O_PATH`) from the first read there: one
    /// system call for a read where resolving the whole path takes three. `None` where the
    /// path must go the long way: a symbolic link on the way (the folder is opened only when
    /// none is) or as its last name when `follow`, a name that is gone, no folder to hold.
    ///
    /// A folder held names the folder it was when opened: every rename the command makes, and
    /// every call that can move a working folder or a mount, lets go of all of them (as of the
    /// remembered working folders).
    pub(super) fn stat_in_folder(&mut self, rel: &Path, follow: bool) -> Option<Stat> {
        let root_fd = self.root_dir.as_ref()?;
        let (parent, name) = (rel.parent()?, rel.file_name()?);
        let dir = if parent.as_os_str().is_empty() {
            root_fd.as_fd()
        } else {
            if !self.folders.contains_key(parent) {
                if self.folders.len() >= FOLDERS_HELD {
                    self.folders.clear();
                }
                let fd = rustix::fs::openat2(
                    root_fd,
                    parent,
                    rustix::fs::OFlags::PATH
                        | rustix::fs::OFlags::DIRECTORY
                        | rustix::fs::OFlags::CLOEXEC,
                    rustix::fs::Mode::empty(),
                    rustix::fs::ResolveFlags::BENEATH | rustix::fs::ResolveFlags::NO_SYMLINKS,
                )
                .ok()?;
                self.folders.insert(parent.to_owned(), fd);
            }
            self.folders.get(parent)?.as_fd()
        };
        let st = rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).ok()?;
        if follow && Stat::is_link(&st) {
            return None;
        }
        Some(Stat::of_raw(&st))
    }

    /// Let go of every remembered working folder and every folder held for reads: a call may
    /// have moved one.
    pub(super) fn forget_folders(&mut self) {
        self.threads.forget_folders();
        self.folders.clear();
    }

    /// Thread `tid`'s working folder, read from `/proc`; `None` when it is gone or unreadable.
    ///
    /// For a read (not `fresh`), what was read for `tid` before, while that thread lives
    /// ([`threads`]) and no call came since that could move a working folder or rename one
    /// ([`filter::Call::Cwd`], a rename); a folder read while a call that moves one may still be
    /// under way is not remembered. A change always reads it: the supervisor carries changes
    /// out itself, in the folder this names.
    pub(super) fn cwd_of(&mut self, tid: u32, fresh: bool) -> Option<Rc<Path>> {
        if !fresh && let Some(cwd) = self.threads.get(tid).and_then(|t| t.cwd.clone()) {
            return Some(cwd);
        }
        let cwd = std::fs::read_link(format!("/proc/{tid}/cwd")).ok()?;
        if !cwd.is_absolute() || cwd.as_os_str().as_bytes().ends_with(b" (deleted)") {
            return None;
        }
        let cwd: Rc<Path> = cwd.into();
        // A thread that ended after its call (a subshell's `cd`) has nothing under way.
        self.unsettled.retain(|(_, held)| {
            !held
                .as_ref()
                .is_some_and(|fd| notify::ended(fd.as_raw_fd()))
        });
        if self.unsettled.is_empty()
            && let Some(t) = self.threads.get(tid)
        {
            t.cwd = Some(cwd.clone());
        }
        Some(cwd)
    }

    /// The path of `resolved` inside the workspace, when one of its folders is the workspace
    /// folder (the same device and inode) under another name.
    pub(super) fn alias(&self, resolved: &Path) -> Option<PathBuf> {
        let root = self.root_id?;
        let mut names = Vec::new();
        let mut at = resolved;
        loop {
            if std::fs::metadata(at).is_ok_and(|m| (m.dev(), m.ino()) == root) {
                return Some(names.iter().rev().collect());
            }
            names.push(at.file_name()?);
            at = at.parent()?;
        }
    }
}

/// `rel`'s folder, opened beneath the root (`root_fd`) with no symbolic link on the way, for a
/// change of its last name, which is a file, a folder, nothing yet, or, when the call does not
/// follow it (`follow`), a link; with whether the name is there. `None` where only the long way
/// can say where the change lands.
fn folder_beneath(rel: &Path, follow: bool, root_fd: &OwnedFd) -> Option<(OwnedFd, bool)> {
    let name = rel.file_name()?;
    let dir = act::folder_of(root_fd, rel.as_os_str())?;
    match rustix::fs::statat(&dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) if follow && Stat::is_link(&st) => None,
        Ok(_) => Some((dir, true)),
        Err(rustix::io::Errno::NOENT) => Some((dir, false)),
        Err(_) => None,
    }
}
