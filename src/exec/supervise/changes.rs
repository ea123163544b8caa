//! A change: an open for writing, a truncate, a rename, a link or an unlink, checked with the
//! guard's decision table and carried out by the supervisor under the folder hold.

use super::*;

impl Supervisor<'_, '_> {
    /// Check a call that can change or remove `located`; on "allow" remember it as the command's
    /// own change.
    ///
    /// A change checked against bytes the session or the command knew is carried out by the
    /// supervisor itself (`act`), under the hold every Stella writer takes on the file's folder:
    /// no other Stella check of the path comes between this check and the change.
    pub(super) fn change(
        &mut self,
        req: &libc::seccomp_notif,
        located: Located,
        intent: Intent,
        act: Act,
    ) -> Answer {
        let located = match located {
            Located::Elsewhere if matches!(intent, Intent::Write { .. }) => {
                match self.outside_link(act) {
                    Ok(Some(path)) => Located::Inside(path),
                    Ok(None) => Located::Elsewhere,
                    Err(e) => {
                        let why = self.unreadable_journal(e);
                        let _ = writeln!(
                            self.err,
                            "stella: refusing a change of a file outside the workspace that may be a workspace file's other name: {why}"
                        );
                        return Answer::Fail(libc::EACCES);
                    }
                }
            }
            located => located,
        };
        let dir = match act {
            Act::Kernel => None,
            _ => self.folder_for(req.pid, &located),
        };
        let hold = match &dir {
            Some(d) => match self.hold(req.pid, d) {
                Ok(h) => h,
                Err(answer) => return answer,
            },
            None => None,
        };
        // Under the hold, the file is hashed through the folder the change is carried out in.
        let held = dir.as_ref().filter(|_| hold.is_some());
        match self.check(req, located, intent, held) {
            Ok(Some((path, before, checked))) => {
                let answer = match (&dir, &hold) {
                    (Some(dir), Some(_)) if checked => {
                        act.carry_out(dir, fsutil::file_name(&path), req.pid)
                    }
                    _ => Answer::Continue,
                };
                drop(hold);
                // It failed: nothing changed.
                if matches!(answer, Answer::Fail(_)) {
                    return answer;
                }
                self.changed(path, before);
                answer
            }
            Ok(None) => Answer::Continue,
            Err(answer) => answer,
        }
    }

    /// The folder of `located` in which the supervisor can carry out a change for process
    /// `pid`: inside the workspace, and the process sees files as the supervisor does.
    pub(super) fn folder_for(&mut self, pid: u32, located: &Located) -> Option<OwnedFd> {
        let (Located::Inside(path), true) = (located, self.carries_out) else {
            return None;
        };
        let same = match self.threads.get(pid) {
            Some(t) => *t.view.get_or_insert_with(|| act::same_view(pid)),
            None => act::same_view(pid),
        };
        if !same {
            return None;
        }
        // Opened where the call was placed, when it was placed by its names.
        if self.placed(path).is_some() {
            return self.change_dir.take().map(|p| p.dir);
        }
        act::folder(self.root_dir.as_ref()?, path)
    }

    /// `path` as `locate` placed it for the call being answered, if it did.
    pub(super) fn placed(&self, path: &RelPath) -> Option<&Placed> {
        self.change_dir
            .as_ref()
            .filter(|p| p.rel.as_os_str().as_bytes() == path.as_bytes())
    }

    /// Hold `dir` against every other Stella writer. `Ok(None)` when the caller is Stella itself
    /// holding it (a nested `git stella write` renaming its file into place): it checks its own.
    pub(super) fn hold<'d>(
        &mut self,
        pid: u32,
        dir: &'d OwnedFd,
    ) -> Result<Option<FolderHold<'d>>, Answer> {
        FolderHold::take_or(dir, || is_stella(pid)).map_err(|e| {
            let _ = writeln!(
                self.err,
                "stella: refusing a file change the shell guard could not hold still to check: {e}"
            );
            Answer::Fail(libc::EBUSY)
        })
    }

    /// Check a call that can change or remove `located`: `Err` with the answer that fails it,
    /// else the workspace path it changes (`None` for a path outside the guard's business) with
    /// the digest it holds before the change, and whether the check compared the disk with what
    /// the session or the command knew (so that the change must follow it in the same step).
    ///
    /// A process that read the path itself and now changes it is a tool reading what it is about
    /// to rewrite (`sed -i`, a patch, an editor's save): that read tells the session nothing, so
    /// the change is judged by what was known before it, and a refusal forgets the read.
    pub(super) fn check(
        &mut self,
        req: &libc::seccomp_notif,
        located: Located,
        intent: Intent,
        held: Option<&OwnedFd>,
    ) -> Result<Option<(RelPath, Option<Digest>, bool)>, Answer> {
        let path = match located {
            Located::Inside(p) => p,
            Located::Elsewhere => return Ok(None),
            // Stella's own state: Stella itself (a nested `git stella`) may write it; nothing
            // else the command runs may, or one command could switch every session's guard off.
            Located::Stella(p) => {
                if is_stella(req.pid) {
                    return Ok(None);
                }
                let process = self.process_of(req.pid);
                // Once per process: `rm -rf` of the data folder says it once, not per file.
                if self.told_stella.insert(process) {
                    let (shown, folder) = match p.strip_prefix(&self.root) {
                        Ok(rel) if rel.starts_with(".stella") => {
                            (rel.display().to_string(), ".stella/".to_owned())
                        }
                        Ok(rel) => (
                            rel.display().to_string(),
                            self.data_dir.display().to_string(),
                        ),
                        Err(_) => (p.display().to_string(), self.data_dir.display().to_string()),
                    };
                    let message = format!(
                        "refusing to change {shown}: it is Stella's own state ({folder}), which only Stella writes\n"
                    );
                    if !notify::write_stderr_of(req.pid, message.as_bytes()) {
                        let _ = self.err.write_all(message.as_bytes());
                    }
                }
                return Err(Answer::Fail(libc::EACCES));
            }
            // Fail closed: a change Stella cannot place is not let through unchecked.
            Located::Unknown(e) => {
                let _ = writeln!(
                    self.err,
                    "stella: refusing a file change the shell guard could not check: {e}"
                );
                return Err(Answer::Fail(libc::EACCES));
            }
        };
        let process = self.process_of(req.pid);
        let own = self
            .last_read
            .get(&path)
            .filter(|r| r.process == process && r.at.elapsed() < TOOL_READ)
            .map(|r| r.known.clone());
        let own_read = own.is_some();
        let known = match own {
            Some(known) => known,
            None => self.known.get(&path).cloned(),
        };
        let known = match known {
            // Still writing it, or its own bytes: see whether it finished, and if it did,
            // whether they are still there.
            Some(Known::Writing) => {
                self.closes();
                self.known.get(&path).cloned()
            }
            known => known,
        };
        match known {
            Some(Known::Writing) => return Ok(Some((path, None, false))),
            Some(Known::Left(left)) if Signature::at(&path.under(&self.root)) == Some(left.0) => {
                return Ok(Some((path, None, true)));
            }
            _ => {}
        }
        let mut entry = self.entry(&path, known.as_ref());
        // Untracked, and nothing at the path, seen in the folder held for the change: no other
        // name of a file to look up, no bytes of anyone's to respect or keep.
        let absent = matches!(entry, Ok(None))
            && held.is_some_and(|dir| {
                matches!(
                    rustix::fs::statat(
                        dir,
                        fsutil::file_name(&path),
                        rustix::fs::AtFlags::SYMLINK_NOFOLLOW
                    ),
                    Err(rustix::io::Errno::NOENT)
                )
            });
        // Another name of a file the session tracks (a hard link) is that file.
        if !absent && matches!(entry, Ok(None)) && !matches!(known, Some(Known::Nothing)) {
            entry = self.linked(&path);
        }
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let why = self.unreadable_journal(e);
                let _ = writeln!(self.err, "stella: refusing to change {path}: {why}");
                return Err(Answer::Fail(libc::EACCES));
            }
        };
        let tracked = entry.is_some();
        // A file another guarded command is writing in place holds no bytes anyone meant yet:
        // compared once it is written.
        let disk = if tracked {
            self.written(&path, held)
        } else {
            Ok(Disk::Missing)
        };
        let disk = match disk {
            Ok(disk) => disk,
            Err(e) => {
                let _ = writeln!(
                    self.err,
                    "stella: refusing to change {path}: {e}; nothing was changed: read it again once it is written"
                );
                if own_read {
                    self.forget_read(&path);
                }
                return Err(Answer::Fail(libc::EBUSY));
            }
        };
        let mut check = guard::check_against(entry, &path, intent, disk);
        let others = &self.others;
        if !absent && let Err(e) = check.respect(others) {
            let _ = writeln!(
                self.err,
                "stella: refusing to change {path}: what other sessions wrote cannot be read: {e}"
            );
            return Err(Answer::Fail(libc::EACCES));
        }
        if !absent {
            self.keep_blind(req, &path, &mut check)?;
        }
        if check.refused() {
            // The bytes the session saw, for the refusal's diff.
            let seen_at = match &known {
                None => Some(&path),
                Some(Known::Moved(from)) => Some(from),
                _ => None,
            };
            self.refuse_change(req, &path, seen_at, own_read, check);
            return Err(Answer::Fail(libc::EACCES));
        }
        let before = match check.disk {
            Disk::Present(d) => Some(d),
            _ if tracked || absent => None,
            _ => Disk::probe(&path.under(&self.root)).digest(),
        };
        Ok(Some((path, before, tracked)))
    }

    /// A blind change of bytes HEAD lacks (someone's uncommitted edit, or an untracked file):
    /// kept first, unless git ignores the file (a build output, a package folder). Git is asked
    /// only about bytes HEAD lacks: a tool rewriting committed files (a formatter) never waits
    /// on it. A file git tracks although a rule ignores it (`git add -f`) is taken for ignored.
    /// `Err` with the answer that fails the change when what it would replace cannot be kept.
    fn keep_blind(
        &mut self,
        req: &libc::seccomp_notif,
        path: &RelPath,
        check: &mut Check,
    ) -> Result<(), Answer> {
        if check.refused()
            || check.verdict != guard::Verdict::Allow(guard::Allow::Untracked)
            || self.ignores.in_ignored_folder(path)
        {
            return Ok(());
        }
        let ignores = &mut self.ignores;
        let mut wanted = |p: &RelPath| !ignores.ignores(p);
        match crate::keep::for_check(check, &self.others, &mut self.keep_budget, &mut wanted) {
            Ok(Some(kept)) => {
                let line = format!("stella: {}\n", kept.line());
                if !notify::write_stderr_of(req.pid, line.as_bytes()) {
                    let _ = self.err.write_all(line.as_bytes());
                }
                self.kept_files.push(kept);
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(e) => {
                let _ = writeln!(self.err, "stella: refusing to change {path}: {e}");
                Err(Answer::Fail(libc::EACCES))
            }
        }
    }

    /// Refuse the change `check` judged, telling the caller: with the bytes the session saw at
    /// `seen_at` for the refusal's diff, and forgetting the tool's own read of `path` (`own_read`).
    fn refuse_change(
        &mut self,
        req: &libc::seccomp_notif,
        path: &RelPath,
        seen_at: Option<&RelPath>,
        own_read: bool,
        mut check: Check,
    ) {
        if let Some(at) = seen_at {
            check.entry = self
                .tree()
                .and_then(|tree| self.journal.lookup_at(tree, at))
                .ok()
                .flatten()
                .map(|mut e| {
                    e.path = path.clone();
                    e
                });
        }
        if own_read {
            self.forget_read(path);
        }
        self.refuse(req.pid, &check);
    }

    /// What is on disk at the tracked `path` once no guarded command is writing it; `Err` when
    /// one still is. Through `held`, the folder held for the change, where it can be: one open
    /// to wait for the file and hash it.
    pub(super) fn written(&self, path: &RelPath, held: Option<&OwnedFd>) -> io::Result<Disk> {
        if let Some(dir) = held {
            match fsutil::digest_written(dir, fsutil::file_name(path)) {
                Ok(Some(digest)) => return Ok(Disk::Present(digest)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Disk::Missing),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Err(e),
                Err(e) => return Ok(Disk::Unreadable(e.to_string())),
                // Not a regular file: looked at the long way, links followed.
                Ok(None) => {}
            }
        }
        fsutil::wait_written_at(&self.root, path)?;
        Ok(Disk::probe(&path.under(&self.root)))
    }

    /// After an allowed change that is done once its call returns, settle it at the next look.
    pub(super) fn settle_last(&mut self, answer: Answer) -> Answer {
        if let (Answer::Continue | Answer::Value(_), Some(Event::Changed { path })) =
            (&answer, self.log.last())
        {
            self.settle.push(path.clone());
        }
        answer
    }

    /// Remember an allowed change of `path` (which held `before`) as the command's own.
    pub(super) fn changed(&mut self, path: RelPath, before: Option<Digest>) {
        self.last_read.remove(&path);
        self.origins.entry(path.clone()).or_insert(before);
        self.known.insert(path.clone(), Known::Writing);
        self.touched_set.insert(path.clone());
        if let Some(watch) = &mut self.watch {
            watch.folder_of(&self.root, &path);
        }
        self.log.push(Event::Changed { path });
    }

    /// Forget the read of `path` a tool made just before changing it: what was known before it
    /// stands, and the read is not the session's.
    pub(super) fn forget_read(&mut self, path: &RelPath) {
        let Some(before) = self.last_read.remove(path) else {
            return;
        };
        restore(&mut self.known, path, before.known);
        // Its reads since, which the journal does not hold yet.
        let cut = self
            .log
            .iter()
            .rposition(
                |e| matches!(e, Event::Read { path: p, at, .. } if p == path && *at < before.at),
            )
            .map_or(0, |i| i + 1);
        let mut i = cut;
        while i < self.log.len() {
            if matches!(&self.log[i], Event::Read { path: p, .. } if p == path) {
                self.log.remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// Take in the files the command finished writing: what each looked like then.
    pub(super) fn closes(&mut self) {
        let Some(watch) = &mut self.watch else {
            self.settle.clear();
            return;
        };
        let settled = std::mem::take(&mut self.settle);
        for path in settled.into_iter().chain(watch.closed()) {
            // Only a file the command is writing: a close by anyone else of a file it finished
            // writing is someone else's change, which its next change is checked against.
            if !matches!(self.known.get(&path), Some(Known::Writing)) {
                continue;
            }
            let Some(sig) = Signature::at(&path.under(&self.root)) else {
                continue;
            };
            self.known
                .insert(path.clone(), Known::Left(Box::new((sig, None))));
            self.log.push(Event::Left { path, sig });
        }
    }

    /// A rename of `from` to `to` (with `RENAME_EXCHANGE` in `flags`, a swap of the two).
    ///
    /// The destination's bytes are replaced: checked as a write. A source this command wrote
    /// itself (a tool's temporary file renamed over the file it rewrites) makes the rename the
    /// destination's write. Any other source keeps what the session knew of it under its new
    /// name, so a file someone changed after the session read it stays stale when renamed, and
    /// is never taken for the session's own write. A folder carries every path beneath it.
    pub(super) fn rename(
        &mut self,
        req: &libc::seccomp_notif,
        from: Located,
        to: Located,
        flags: libc::c_uint,
    ) -> Answer {
        let write = Intent::Write { content: None };
        // Both folders held (in one order for every writer) when the supervisor can carry the
        // rename out itself.
        let names = match (&from, &to) {
            (Located::Inside(f), Located::Inside(t)) => Some((f.clone(), t.clone())),
            _ => None,
        };
        let dirs = match (
            self.folder_for(req.pid, &from),
            self.folder_for(req.pid, &to),
        ) {
            (Some(f), Some(t)) => Some((f, t)),
            _ => None,
        };
        let mut holds = Vec::new();
        let mut held = false;
        if let Some((f, t)) = &dirs {
            let (fi, ti) = (act::identity(f), act::identity(t));
            let order = match fi.cmp(&ti) {
                std::cmp::Ordering::Equal => vec![f],
                std::cmp::Ordering::Less => vec![f, t],
                std::cmp::Ordering::Greater => vec![t, f],
            };
            held = true;
            for d in order {
                match self.hold(req.pid, d) {
                    Ok(Some(h)) => holds.push(h),
                    Ok(None) => held = false,
                    Err(answer) => return answer,
                }
            }
        }
        let carry_out = |checked: bool| match (&dirs, &names) {
            (Some((fd, td)), Some((f, t))) if held && checked => {
                act::rename(fd, fsutil::file_name(f), td, fsutil::file_name(t), flags)
            }
            _ => Answer::Continue,
        };
        if flags & libc::RENAME_EXCHANGE != 0 {
            // Both are replaced: two writes.
            let mut changes = Vec::new();
            for located in [to, from] {
                match self.check(req, located, write, None) {
                    Err(answer) => return answer,
                    Ok(checked) => changes.extend(checked),
                }
            }
            let answer = carry_out(changes.iter().any(|c| c.2));
            if matches!(answer, Answer::Fail(_)) {
                return answer;
            }
            for (path, before, _) in changes {
                self.changed(path, before);
            }
            return answer;
        }
        // A rename the kernel will fail changes nothing (`mv f d/` first tries `d/` itself).
        let meta = |l: &Located| match l {
            Located::Inside(p) => std::fs::symlink_metadata(p.under(&self.root)).ok(),
            _ => None,
        };
        let (from_meta, to_meta) = (meta(&from), meta(&to));
        if let Located::Inside(_) = from {
            match (&from_meta, &to_meta) {
                (None, _) => return Answer::Continue,
                (Some(_), Some(_)) if flags & libc::RENAME_NOREPLACE != 0 => {
                    return Answer::Continue;
                }
                (Some(f), Some(t)) if t.is_dir() != f.is_dir() => return Answer::Continue,
                _ => {}
            }
        }
        let from = match from {
            // The workspace loses the source's bytes: a delete.
            from @ Located::Inside(_) if !matches!(to, Located::Inside(_)) => {
                return self.change(req, from, Intent::Delete, Act::Kernel);
            }
            Located::Inside(f) => Some(f),
            // Refused, or Stella itself moving its own files.
            Located::Stella(_) | Located::Unknown(_) => match self.check(req, from, write, None) {
                Err(answer) => return answer,
                Ok(_) => None,
            },
            Located::Elsewhere => None,
        };
        let (to, before, checked) = match self.check(req, to, write, None) {
            Err(answer) => return answer,
            Ok(None) => return Answer::Continue,
            Ok(Some(checked)) => checked,
        };
        let Some(from) = from else {
            // Bytes from outside the workspace: the destination's write.
            self.changed(to, before);
            return Answer::Continue;
        };
        if !from_meta.is_some_and(|m| m.is_dir()) {
            // The command's own bytes, about to be put in place by the supervisor: taken from
            // the file itself before the rename, under the hold. Read at the destination after
            // it, they could already be a writer's right behind it that takes no hold (a host's
            // own write tool), passed off as these while these were never kept.
            let source = match (&dirs, held && checked && self.touched_set.contains(&from)) {
                (Some((from_dir, _)), true) => self.source_bytes(from_dir, &from),
                _ => None,
            };
            let answer = carry_out(checked);
            let taken = match answer {
                Answer::Value(_) => source.map(|(file, snap, before)| {
                    // The signature it has in place (a rename moves its ctime): unless a write
                    // landed in it since, which is then not the command's.
                    let known = match file.metadata() {
                        Ok(m)
                            if m.len() == before.len()
                                && m.mtime() == before.mtime()
                                && m.mtime_nsec() == before.mtime_nsec() =>
                        {
                            let sig = Signature::of(&m);
                            self.signatures
                                .learn(&to, sig, SystemTime::now(), snap.digest);
                            Known::Left(Box::new((sig, Some(snap.digest))))
                        }
                        _ => Known::Read(snap.digest),
                    };
                    (snap, known)
                }),
                _ => None,
            };
            drop(holds);
            if !matches!(answer, Answer::Fail(_)) {
                let process = self.process_of(req.pid);
                self.carry(process, from, to.clone(), before);
            }
            if let Some((snap, known)) = taken {
                self.settle.retain(|p| *p != to);
                self.known.insert(to.clone(), known);
                self.log.push(Event::Wrote { path: to, snap });
            }
            return answer;
        }
        // A folder: every path beneath it the session or this command knows of moves with it.
        let entries = self
            .tree()
            .and_then(|tree| self.journal.entries_of_tree(tree));
        let mut under: Vec<RelPath> = match entries {
            Ok(entries) => entries.into_iter().map(|e| e.path).collect(),
            Err(e) => {
                let why = self.unreadable_journal(e);
                let _ = writeln!(self.err, "stella: refusing to rename {from}: {why}");
                return Answer::Fail(libc::EACCES);
            }
        };
        let answer = carry_out(checked);
        drop(holds);
        if matches!(answer, Answer::Fail(_)) {
            return answer;
        }
        under.extend(self.known.keys().cloned());
        under.sort();
        under.dedup();
        for path in under {
            let Some(rest) = path
                .as_bytes()
                .strip_prefix(from.as_bytes())
                .and_then(|r| r.strip_prefix(b"/"))
            else {
                continue;
            };
            // Paths the command already renamed away are known as nothing; the journal's
            // entry for them is no longer theirs.
            if matches!(self.known.get(&path), Some(Known::Nothing)) {
                continue;
            }
            let mut dest = to.as_bytes().to_vec();
            dest.push(b'/');
            dest.extend_from_slice(rest);
            if let Some(dest) = RelPath::from_bytes(&dest) {
                let process = self.process_of(req.pid);
                self.carry(process, path, dest, None);
            }
        }
        answer
    }

    /// The regular file `from` in its folder `dir`, opened, with its bytes taken and its
    /// metadata then; `None` when it is not a regular file or cannot be read whole.
    fn source_bytes(
        &mut self,
        dir: &OwnedFd,
        from: &RelPath,
    ) -> Option<(std::fs::File, Snapshot, std::fs::Metadata)> {
        let (fd, _) = fsutil::open_regular_at(dir, fsutil::file_name(from)).ok()??;
        let file = std::fs::File::from(fd);
        let meta = file.metadata().ok()?;
        let snap = self.snapshot_of(file.try_clone().ok()?, &meta).ok()?;
        Some((file, snap, meta))
    }

    /// What a rename of `from` to `to` does to this command's knowledge (`before`: what `to`
    /// held).
    pub(super) fn carry(
        &mut self,
        process: u32,
        from: RelPath,
        to: RelPath,
        before: Option<Digest>,
    ) {
        if self.touched_set.contains(&from) {
            let created_here = matches!(self.origins.get(&from), Some(None))
                && !matches!(self.at_start(&from), Ok(Some(_)));
            if created_here {
                // A file this command made (a tool's temporary file, renamed over the file it
                // rewrites): the destination's write, finished once renamed; the source is gone.
                self.changed(to.clone(), before);
                self.settle.push(to);
                self.log.push(Event::Changed { path: from });
                return;
            }
            // Its own bytes in a file the session knows: a rename, and they stay its own.
            // What it left at the source is now at the destination.
            self.log.retain(|e| {
                !matches!(e, Event::Changed { path } | Event::Left { path, .. } | Event::Wrote { path, .. } if *path == from)
            });
            if self.touched_set.remove(&to) {
                self.origins.remove(&to);
            }
            self.touched_set.remove(&from);
            self.known.insert(from.clone(), Known::Nothing);
            self.log.push(Event::Moved {
                from,
                to: to.clone(),
            });
            self.changed(to.clone(), None);
            self.settle.push(to);
            return;
        }
        // The renaming tool's own read of the source (`git mv` hashes it) is no read of the
        // session's: what was known before it moves.
        if let Some(r) = self.last_read.get(&from)
            && r.process == process
            && r.at.elapsed() < TOOL_READ
        {
            self.forget_read(&from);
        }
        let carried = match self.known.get(&from) {
            Some(Known::Read(d)) => Known::Read(*d),
            Some(Known::Hashing(id)) => Known::Hashing(*id),
            Some(Known::Moved(at)) => Known::Moved(at.clone()),
            Some(Known::Nothing) => Known::Nothing,
            Some(Known::Writing | Known::Left(..)) => unreachable!("a changed path is touched"),
            None => Known::Moved(from.clone()),
        };
        self.last_read.remove(&from);
        self.last_read.remove(&to);
        if self.touched_set.remove(&to) {
            self.origins.remove(&to);
        }
        self.known.insert(from.clone(), Known::Nothing);
        self.known.insert(to.clone(), carried);
        self.renamed_by
            .insert(to.clone(), (process, Instant::now()));
        self.log.push(Event::Moved { from, to });
    }

    /// What the session knew of `path` when the command started (its digest, and whether its
    /// bytes are kept), asked once per path it knew: from the signatures' mark when the session held the
    /// file unchanged, else from the journal.
    pub(super) fn at_start(
        &mut self,
        path: &RelPath,
    ) -> Result<Option<(Seen, bool)>, journal::Error> {
        if let Some(seen) = self.start.get(path) {
            return Ok(Some(*seen));
        }
        let (journal, tree) = (self.journal, self.tree());
        self.signatures
            .check_held(journal, || tree.and_then(|tree| journal.map_in(tree)));
        let seen = match self.signatures.held(path) {
            Some(digest) => Some((Seen::Digest(digest), true)),
            None => {
                let seen = journal.seen_at(self.tree()?, path)?;
                if let Some((Seen::Digest(digest), true)) = seen {
                    self.signatures.mark_held(path, digest);
                }
                seen
            }
        };
        // A path the session did not know is asked again if need be (a lookup in the cached
        // map): a command reading 100,000 new files would otherwise keep an entry for each.
        if let Some(seen) = seen {
            self.start.insert(path.clone(), seen);
        }
        Ok(seen)
    }

    /// The session's entry for `path`, given what this command has seen of it (`known`).
    /// Only what the decision needs: the whole entry (the bytes for a refusal's diff) is read
    /// when a refusal needs it.
    pub(super) fn entry(
        &mut self,
        path: &RelPath,
        known: Option<&Known>,
    ) -> Result<Option<Entry>, journal::Error> {
        let seen = match known {
            Some(Known::Read(d)) => Some(Seen::Digest(*d)),
            // A change waits for the digest of what was read (a bounded wait: past it, only a
            // re-read can tell).
            Some(Known::Hashing(id)) => Some(
                self.hashing[*id]
                    .wait(HASH_WAIT)
                    .map_or(Seen::Reread, Seen::Digest),
            ),
            Some(Known::Nothing) => None,
            Some(Known::Moved(from)) => {
                let from = from.clone();
                self.at_start(&from)?.map(|(s, _)| s)
            }
            // What it left, when recorded; else only a re-read can tell.
            Some(Known::Left(left)) => Some(left.1.map_or(Seen::Reread, Seen::Digest)),
            Some(Known::Writing) | None => self.at_start(path)?.map(|(seen, _)| seen),
        };
        Ok(seen.map(|seen| Entry {
            path: path.clone(),
            seen,
            origin: None,
            bytes: None,
            wrote: None,
            origin_bytes: None,
            moved_from: None,
        }))
    }

    /// The session's entry for the file `path` names when that file has other names (hard
    /// links) and one of them is a path the session tracked when the command started: the same
    /// file system object, known by its device and inode.
    pub(super) fn linked(&mut self, path: &RelPath) -> Result<Option<Entry>, journal::Error> {
        let Ok(meta) = std::fs::symlink_metadata(path.under(&self.root)) else {
            return Ok(None);
        };
        if !meta.is_file() || meta.nlink() < 2 {
            return Ok(None);
        }
        Ok(self
            .inodes()?
            .get(&(meta.dev(), meta.ino()))
            .map(|e| Entry {
                path: path.clone(),
                ..e.clone()
            }))
    }

    /// The files the session tracked when the command started, by device and inode: built the
    /// first time a file with several names is changed.
    fn inodes(&mut self) -> Result<&HashMap<(u64, u64), Entry>, journal::Error> {
        if self.inodes.is_none() {
            let mut index = HashMap::default();
            for e in self.journal.entries_of_tree(self.tree()?)? {
                if let Ok(m) = std::fs::symlink_metadata(e.path.under(&self.root)) {
                    index.insert((m.dev(), m.ino()), e);
                }
            }
            self.inodes = Some(index);
        }
        Ok(self.inodes.as_ref().expect("built above"))
    }

    /// The workspace file that an open for writing or a truncate (`act`) of a path outside the
    /// workspace reaches, when that path is another name (a hard link) of a file the session
    /// tracked when the command started and the file's workspace name still names it. Such a
    /// call changes the workspace file's bytes: it is checked, and carried out, as a change of
    /// that file under its workspace name (the same file, so the caller's descriptor is the one
    /// it asked for). An exclusive create is left to the kernel, which fails it.
    fn outside_link(&mut self, act: Act) -> Result<Option<RelPath>, journal::Error> {
        let Some(outside) = self.outside.take() else {
            return Ok(None);
        };
        if let Act::Open { flags, .. } = act
            && flags & (libc::O_CREAT | libc::O_EXCL) == libc::O_CREAT | libc::O_EXCL
        {
            return Ok(None);
        }
        let Ok(meta) = std::fs::symlink_metadata(&outside) else {
            return Ok(None);
        };
        if !meta.is_file() || meta.nlink() < 2 {
            return Ok(None);
        }
        let id = (meta.dev(), meta.ino());
        let Some(path) = self.inodes()?.get(&id).map(|e| e.path.clone()) else {
            return Ok(None);
        };
        let same = std::fs::symlink_metadata(path.under(&self.root))
            .is_ok_and(|m| (m.dev(), m.ino()) == id);
        Ok(same.then_some(path))
    }

    /// Tell the process whose call was refused: on its own stderr (a host that captures a shell
    /// command's output then shows the model why), else on the command's.
    ///
    /// Once per path and process: a command that retries (`rm -rf` walking a tree twice) says it
    /// once, while each process of a whole agent (each shell command it runs) hears it.
    pub(super) fn refuse(&mut self, pid: u32, check: &Check) {
        let process = self.process_of(pid);
        if !self.told.insert((check.path.clone(), process)) {
            return;
        }
        let message = format!(
            "{}\n",
            guard::refusal_message(self.journal, &self.root, check)
        );
        if !notify::write_stderr_of(pid, message.as_bytes()) {
            let _ = self.err.write_all(message.as_bytes());
        }
        if !self.refused.contains(&check.path) {
            self.refused.push(check.path.clone());
            self.refusals
                .push(crate::refusals::Record::of(self.journal, check));
        }
    }
}
