//! Journaling what the command did: steps as it runs (on ticks) and when it exits.

use super::*;

impl Supervisor<'_, '_> {
    /// Store a snapshot's bytes, when it has them.
    pub(super) fn keep(
        &self,
        batch: &Option<journal::Batch>,
        snap: &Snapshot,
    ) -> Result<Option<(ObjectId, bool)>, journal::Error> {
        let Some(bytes) = &snap.bytes else {
            return Ok(None);
        };
        let blob = match batch {
            Some(b) => self.journal.write_blob_in(b, bytes)?,
            None => self.journal.write_blob(bytes)?,
        };
        Ok(Some((blob, snap.exec)))
    }

    /// Between calls: pass on a signal that asked to end the command, take in what it finished
    /// writing, and journal what is due.
    pub(super) fn tick(&mut self, pid: u32) {
        if let Some(signal) = signals::take_end() {
            self.ending = Some((signal, HashSet::new()));
        }
        if let Some((signal, told)) = &mut self.ending {
            // To the command and every process of it: each the guard has seen, and each
            // descended from it now (a child forked but not yet seen making a call; a shell
            // waiting for its child would otherwise leave the child running). A fork is a call
            // the supervisor answers, so none is under way while it is here; one answered just
            // before may still be creating its child, which the next tick passes it on to.
            let mut pids: HashSet<u32> = self.processes.values().copied().collect();
            pids.extend(descendants(pid));
            pids.retain(|p| still_guarded(*p));
            pids.insert(pid);
            for p in pids {
                if told.insert(p)
                    && let Some(p) = rustix::process::Pid::from_raw(p as i32)
                {
                    let _ = rustix::process::kill_process(p, *signal);
                }
            }
        }
        self.closes();
        // A read older than a tool's read window is the session's for good: what it replaced
        // is never needed again (a command reading 100,000 files would keep it all).
        if self.pruned.elapsed() >= TOOL_READ {
            self.pruned = Instant::now();
            self.last_read.retain(|_, r| r.at.elapsed() < TOOL_READ);
        }
        // A command shorter than a tool's read window is one step, journaled when it ends.
        if self.flushed.elapsed() < self.flush_every || self.started.elapsed() < TOOL_READ {
            return;
        }
        self.flushed = Instant::now();
        match self.flush(false) {
            Ok(()) => self.failing = false,
            // Kept for the next try; the last one, at exit, reports it. Said once a spell.
            Err(e) if !self.failing => {
                self.failing = true;
                tracing::warn!(error = %e, "could not journal what the command did so far; trying again");
            }
            Err(_) => {}
        }
    }

    /// What a change refused because the session's journal could not be read says, the damage
    /// kept for the command's end.
    pub(super) fn unreadable_journal(&mut self, e: journal::Error) -> String {
        let said = format!("the session's journal could not be read: {e}");
        if e.is_damage() {
            self.damage.get_or_insert(e);
            format!(
                "{said}; nothing was changed. Stella repairs the journal when this command ends: then read the file again before changing it"
            )
        } else {
            format!("{said}; nothing was changed")
        }
    }

    /// The command ended: take in the rest and journal everything.
    pub(super) fn finish(mut self, status: ExitStatus) -> Result<Report, Error> {
        let _span = tracing::debug_span!("record").entered();
        self.closes();
        self.flush(true)?;
        self.signatures.save();
        peak_memory("recorded");
        if let Some(damage) = self.damage.take() {
            return Err(Error::Journal(damage));
        }
        Ok(Report {
            status,
            tip: self.tip,
            reads: self.n_reads,
            writes: self.n_writes,
            refused: self.refused,
        })
    }

    /// Journal, as one step, the events that are due (all of them when `all`): a read once a
    /// tool's own read could no longer be in question, everything else at once, each path's
    /// events in order; and the refusals so far.
    pub(super) fn flush(&mut self, all: bool) -> Result<(), Error> {
        let mut due = Vec::new();
        let mut later = Vec::new();
        let mut blocked: HashSet<RelPath> = HashSet::new();
        for event in std::mem::take(&mut self.log) {
            let waits = match &event {
                Event::Read { at, snap, .. } => {
                    (!all && at.elapsed() < TOOL_READ)
                        || matches!(snap, Taken::Hashing(id) if !all && self.hashing[*id].ready().is_none())
                }
                // Still being written: what it left is not known yet.
                Event::Changed { path } => {
                    !all && matches!(self.known.get(path), Some(Known::Writing))
                }
                _ => false,
            } || event.paths().iter().flatten().any(|p| blocked.contains(*p));
            if waits {
                blocked.extend(event.paths().into_iter().flatten().cloned());
                later.push(event);
            } else {
                due.push(event);
            }
        }
        self.log = later;
        if due.is_empty() && self.refusals.is_empty() && self.kept_files.is_empty() {
            return Ok(());
        }
        // Within what is due, a path's last reading or writing is what counts, up to a rename.
        let mut last: HashSet<&RelPath> = HashSet::new();
        let mut keep = vec![true; due.len()];
        for (i, event) in due.iter().enumerate().rev() {
            match event {
                Event::Moved { from, to } => {
                    last.remove(from);
                    last.remove(to);
                }
                Event::Read { path, .. }
                | Event::Changed { path }
                | Event::Left { path, .. }
                | Event::Wrote { path, .. } => {
                    keep[i] = last.insert(path);
                }
            }
        }
        let due: Vec<Event> = due
            .into_iter()
            .zip(keep)
            .filter_map(|(e, k)| k.then_some(e))
            .collect();
        let refused = std::mem::take(&mut self.refusals);
        let large = due.len() > BATCH_PATHS;
        match self.record_due(&due, refused.clone()) {
            Ok(()) => {
                self.flush_every = if large {
                    (self.flush_every * 2).min(FLUSH_MAX)
                } else {
                    FLUSH_EVERY
                };
                Ok(())
            }
            // Kept, in order, for the next try.
            Err(e) => {
                self.log.splice(0..0, due);
                self.refusals.splice(0..0, refused);
                Err(e)
            }
        }
    }

    /// Record `due` (the events a flush picked) and the refusals `refused` as one step.
    pub(super) fn record_due(
        &mut self,
        due: &[Event],
        refused: Vec<crate::refusals::Record>,
    ) -> Result<(), Error> {
        // What the session knew of each path when the command started, and which paths git
        // ignores (those matter only when the session already tracks them).
        let mut new = Vec::new();
        let mut asked = HashSet::new();
        for event in due {
            for p in event.paths().into_iter().flatten() {
                if self.at_start(p)?.is_none() && !self.ignored.contains_key(p) && asked.insert(p) {
                    new.push(p.clone());
                }
            }
        }
        let ignored_now = ignored(&self.root, &new);
        for p in new {
            let ignored = ignored_now.contains(&p);
            self.ignored.insert(p, ignored);
        }
        let moved_to: HashSet<RelPath> = due
            .iter()
            .filter_map(|e| match e {
                Event::Moved { to, .. } => Some(to.clone()),
                _ => None,
            })
            .collect();
        let skip = |sup: &Self, p: &RelPath| sup.ignored.get(p).copied().unwrap_or(false);
        // Bytes the session already holds: nothing to record, unless a rename brought other
        // knowledge there.
        let holds = |sup: &Self, p: &RelPath, digest: Digest, kept: bool| {
            !moved_to.contains(p)
                && matches!(sup.start.get(p), Some(Some((seen, held)))
                    if *seen == Seen::Digest(digest) && (*held || !kept))
        };
        let batch = if due.len() > BATCH_PATHS {
            Some(self.journal.batch()?)
        } else {
            None
        };
        let mut edits = Vec::new();
        let (mut n_reads, mut n_writes) = (0, 0);
        // Digests still being computed are waited for this long in all.
        let deadline = Instant::now() + HASH_WAIT;
        for event in due {
            match event {
                Event::Read { path, snap, .. } => {
                    let hashed;
                    let snap = match snap {
                        Taken::Snap(snap) => snap,
                        // Unknown by the end of the command, or changed while hashed: the read
                        // tells the session nothing.
                        Taken::Hashing(id) => match self.hashing[*id]
                            .wait(deadline.saturating_duration_since(Instant::now()))
                        {
                            Some(digest) => {
                                hashed = Snapshot {
                                    digest,
                                    bytes: None,
                                    exec: false,
                                };
                                &hashed
                            }
                            None => continue,
                        },
                        // Not read: known by its signature. Held with its bytes, there is
                        // nothing to record; otherwise the bytes are taken now, if they still
                        // are the same.
                        Taken::Known { digest, exec } => {
                            if skip(self, path) || holds(self, path, *digest, true) {
                                continue;
                            }
                            hashed = match self.snapshot(path) {
                                Ok(Some(now)) if now.digest == *digest => now,
                                _ => Snapshot {
                                    digest: *digest,
                                    bytes: None,
                                    exec: *exec,
                                },
                            };
                            &hashed
                        }
                    };
                    if skip(self, path) || holds(self, path, snap.digest, snap.bytes.is_some()) {
                        continue;
                    }
                    let version = record::Version {
                        digest: snap.digest,
                        kept: self.keep(&batch, snap)?,
                    };
                    edits.push(record::read(path, version));
                    n_reads += 1;
                }
                Event::Moved { from, to } => {
                    if skip(self, from) && skip(self, to) {
                        continue;
                    }
                    edits.push(record::moved(from, to));
                    n_writes += 1;
                }
                Event::Changed { path } => {
                    if skip(self, path) {
                        continue;
                    }
                    let replaced = Replaced::unkept(self.origins.get(path).copied().flatten());
                    match self.snapshot(path) {
                        Ok(Some(snap)) if holds(self, path, snap.digest, snap.bytes.is_some()) => {}
                        Ok(Some(snap)) => {
                            let version = record::Version {
                                digest: snap.digest,
                                kept: self.keep(&batch, &snap)?,
                            };
                            edits.push(record::wrote(path, version, replaced));
                            n_writes += 1;
                        }
                        // Gone: the entry goes too; a path the session never tracked leaves
                        // nothing.
                        Ok(None) if !path.under(&self.root).exists() => {
                            let tracked = matches!(self.start.get(path), Some(Some(_)));
                            if tracked || moved_to.contains(path) || self.recorded.contains(path) {
                                edits.push(record::deleted(path));
                                n_writes += 1;
                            }
                        }
                        // A folder, a device, something unreadable: nothing the map can hold.
                        _ => {}
                    }
                }
                Event::Left { path, sig } => {
                    if skip(self, path) {
                        continue;
                    }
                    let replaced = Replaced::unkept(self.origins.get(path).copied().flatten());
                    // The bytes it left, when the file still is as it left it: read now, and
                    // checked against what `stat` said when it finished, before and after.
                    let snap = match self.snapshot(path) {
                        Ok(Some(snap)) if Signature::at(&path.under(&self.root)) == Some(*sig) => {
                            Some(snap)
                        }
                        _ => None,
                    };
                    match snap {
                        // Renamed or deleted since: its own later events say what became of it.
                        None if !path.under(&self.root).exists() => {
                            let tracked = matches!(self.start.get(path), Some(Some(_)));
                            if tracked || moved_to.contains(path) || self.recorded.contains(path) {
                                edits.push(record::deleted(path));
                            } else {
                                continue;
                            }
                        }
                        Some(snap) => {
                            if let Some(Known::Left(left)) = self.known.get_mut(path)
                                && left.0 == *sig
                            {
                                left.1 = Some(snap.digest);
                            }
                            if holds(self, path, snap.digest, snap.bytes.is_some()) {
                                continue;
                            }
                            let version = record::Version {
                                digest: snap.digest,
                                kept: self.keep(&batch, &snap)?,
                            };
                            edits.push(record::wrote(path, version, replaced));
                        }
                        // Changed again since: what it left cannot be known, so the next
                        // change needs a re-read.
                        None => edits.push(record::wrote_unsure(path, replaced)),
                    }
                    n_writes += 1;
                }
                Event::Wrote { path, snap } => {
                    if skip(self, path) || holds(self, path, snap.digest, snap.bytes.is_some()) {
                        continue;
                    }
                    let replaced = Replaced::unkept(self.origins.get(path).copied().flatten());
                    let version = record::Version {
                        digest: snap.digest,
                        kept: self.keep(&batch, snap)?,
                    };
                    edits.push(record::wrote(path, version, replaced));
                    n_writes += 1;
                }
            }
        }
        if edits.is_empty() && refused.is_empty() && self.kept_files.is_empty() {
            return Ok(());
        }
        let n_refused = refused.len();
        let refused_note = match n_refused {
            0 => String::new(),
            n => format!(", {n} refused"),
        };
        let mut root = if refused.is_empty() {
            Vec::new()
        } else {
            // Added to the count the session's newest step keeps.
            let tree = match &self.tip {
                Some(tip) => tip.tree,
                None => self.journal.tip(self.id)?.tree,
            };
            vec![crate::refusals::edit(self.journal, tree, refused)?]
        };
        for kept in std::mem::take(&mut self.kept_files) {
            root.extend(kept.root_edits(self.journal)?);
        }
        let put: Vec<RelPath> = edits
            .iter()
            .filter_map(|e| match e {
                MapEdit::Put { path, .. } => Some(path.clone()),
                MapEdit::Move { to, .. } => Some(to.clone()),
                MapEdit::Remove { .. } => None,
            })
            .collect();
        let step = Step {
            summary: format!(
                "{} ({n_reads} read, {n_writes} changed{refused_note})",
                self.summary
            ),
            map: edits,
            root,
        };
        let tip = match batch {
            Some(b) => self.journal.record_batch(self.id, &step, b)?,
            None => self.journal.record(self.id, &step)?,
        };
        // What this command put in the map: gone later, it is dropped from it again.
        self.recorded.extend(put);
        self.tip = Some(tip);
        self.n_reads += n_reads;
        self.n_writes += n_writes;
        Ok(())
    }
}
