//! A read: what the command opened for reading, recorded as the session's read (or known
//! already, by its signature).

use super::*;

impl Supervisor<'_, '_> {
    pub(super) fn open(
        &mut self,
        listener: &Listener,
        req: &libc::seccomp_notif,
        dirfd: Option<libc::c_int>,
        addr: u64,
        flags: libc::c_int,
        act: Act,
    ) -> Answer {
        let writes = flags & libc::O_ACCMODE != libc::O_RDONLY
            || flags & (libc::O_TRUNC | libc::O_CREAT) != 0;
        let follow = flags & libc::O_NOFOLLOW == 0;
        let located = self.locate(listener, req, dirfd, addr, follow, writes);
        if !writes {
            if let Located::Inside(path) = located {
                self.read(req, path);
            }
            return Answer::Continue;
        }
        // An exclusive create of a path that exists fails in the kernel: nothing changes.
        if flags & libc::O_CREAT != 0
            && flags & libc::O_EXCL != 0
            && let Located::Inside(path) = &located
            && self.placed(path).map_or_else(
                || std::fs::symlink_metadata(path.under(&self.root)).is_ok(),
                |p| p.present,
            )
        {
            return Answer::Continue;
        }
        self.change(req, located, Intent::Write { content: None }, act)
    }

    /// Record a read of `path`'s bytes now, if it is a regular file, remembering which process
    /// read it and what was known before.
    pub(super) fn read(&mut self, req: &libc::seccomp_notif, path: RelPath) {
        let meta = self
            .stat_hint
            .take()
            .filter(|(id, _)| *id == req.id)
            .map(|(_, meta)| meta);
        if matches!(self.known.get(&path), Some(Known::Writing)) {
            return;
        }
        // The tool that just renamed a file here reading it (`git mv` hashes it for the index)
        // shows the session nothing.
        let reader = self.process_of(req.pid);
        if let Some((process, at)) = self.renamed_by.get(&path)
            && *process == reader
            && at.elapsed() < TOOL_READ
        {
            return;
        }
        if meta.as_ref().is_some_and(|m| !m.file) {
            return;
        }
        // A file whose signature has not moved since the guard hashed it is not read again.
        let (journal, tree) = (self.journal, self.tree());
        self.signatures
            .check_held(journal, || tree.and_then(|tree| journal.map_in(tree)));
        let (taken, now_known) =
            if let Some((digest, exec, held)) = self.signatures.lookup(&self.root, &path, meta) {
                // The session held these very bytes when the command started, and the command
                // has not touched the path since: the read tells the session nothing, and what
                // a later change of it is checked against is what the session held.
                if held && !self.known.contains_key(&path) {
                    return;
                }
                (Taken::Known { digest, exec }, Known::Read(digest))
            } else {
                let Ok(Some((file, meta, at))) = self.open_regular(&path) else {
                    return;
                };
                // A large file is hashed off the call path: the open goes on at once.
                if meta.len() > HASH_ON_CALL_MAX {
                    let id = self.hashing.len();
                    self.hashing
                        .push(Hashing::start(file, Signature::of(&meta)));
                    (Taken::Hashing(id), Known::Hashing(id))
                } else {
                    match self.snapshot_of(file, &meta) {
                        Ok(snap) => {
                            let digest = snap.digest;
                            self.signatures
                                .learn(&path, Signature::of(&meta), at, digest);
                            (Taken::Snap(snap), Known::Read(digest))
                        }
                        Err(_) => return,
                    }
                }
            };
        let process = self.process_of(req.pid);
        let now = Instant::now();
        let known = self.known.insert(path.clone(), now_known);
        self.log.push(Event::Read {
            path: path.clone(),
            snap: taken,
            at: now,
        });
        match self.last_read.get_mut(&path) {
            // The same tool reading again (a patch tool reads twice from two threads): what was
            // known before its first read still stands.
            // The window runs from its first read: a tool that reads again and again never
            // keeps it open.
            Some(r) if r.process == process && now.duration_since(r.at) < TOOL_READ => {}
            _ => {
                self.last_read.insert(
                    path,
                    LastRead {
                        process,
                        at: now,
                        known,
                    },
                );
            }
        }
    }

    /// The bytes at `path` now; `None` when it is not a regular file (or gone).
    pub(super) fn snapshot(&mut self, path: &RelPath) -> io::Result<Option<Snapshot>> {
        let Some((file, meta, at)) = self.open_regular(path)? else {
            return Ok(None);
        };
        let snap = self.snapshot_of(file, &meta)?;
        self.signatures
            .learn(path, Signature::of(&meta), at, snap.digest);
        Ok(Some(snap))
    }

    /// The regular file at `path`, opened for reading without following a symlink or waiting
    /// on a FIFO, with the moment just before it was opened; `None` when there is none.
    pub(super) fn open_regular(
        &self,
        path: &RelPath,
    ) -> io::Result<Option<(std::fs::File, std::fs::Metadata, SystemTime)>> {
        let at = SystemTime::now();
        let file = match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY)
            .open(path.under(&self.root))
        {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let meta = file.metadata()?;
        Ok(meta.is_file().then_some((file, meta, at)))
    }

    /// The bytes of `file` (whose metadata is `meta`): the digest, and the bytes themselves
    /// while the command's budget lasts.
    pub(super) fn snapshot_of(
        &mut self,
        file: std::fs::File,
        meta: &std::fs::Metadata,
    ) -> io::Result<Snapshot> {
        let exec = meta.mode() & 0o111 != 0;
        if self.kept + meta.len() <= BYTES_BUDGET {
            let mut bytes = Vec::with_capacity(meta.len() as usize);
            // Through `take`: a `File`'s own `read_to_end` asks the size again (`fstat`,
            // `lseek`), which `meta` already said.
            (&file).take(u64::MAX).read_to_end(&mut bytes)?;
            let digest = Digest::of(&bytes);
            let fits = self.kept + bytes.len() as u64 <= BYTES_BUDGET;
            if fits {
                self.kept += bytes.len() as u64;
            }
            let bytes = fits.then_some(bytes);
            return Ok(Snapshot {
                digest,
                bytes,
                exec,
            });
        }
        Ok(Snapshot {
            digest: Digest::of_reader(&file)?,
            bytes: None,
            exec,
        })
    }
}
