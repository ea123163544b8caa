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
            self.ending = Some((signal, HashSet::default()));
        }
        if let Some((signal, told)) = &mut self.ending {
            // To the command and every process of it: each the guard has seen, and each
            // descended from it now (a child forked but not yet seen making a call; a shell
            // waiting for its child would otherwise leave the child running). A child a fork
            // is creating right now is passed it on to by the next tick.
            let mut pids: HashSet<u32> = self.threads.processes().collect();
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
            // And the room they took: a burst of reads would otherwise keep its table's size.
            if self.last_read.capacity() > 4 * self.last_read.len() + 1024 {
                self.last_read.shrink_to_fit();
            }
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

    /// Journal the events that are due (all of them when `all`): a read once a tool's own read
    /// could no longer be in question, everything else at once, each path's events in order;
    /// and the refusals so far. In steps of at most [`STEP_EVENTS`] events, one after another:
    /// a step is built in memory, and a command that read 100,000 files for the first time
    /// would otherwise hold a step of all of them.
    pub(super) fn flush(&mut self, all: bool) -> Result<(), Error> {
        let mut steps = 0;
        while self.flush_step(all, steps)? {
            steps += 1;
        }
        Ok(())
    }

    /// One step of [`Supervisor::flush`], after `steps` full ones; whether it was full, with
    /// more due.
    fn flush_step(&mut self, all: bool, steps: usize) -> Result<bool, Error> {
        let log = std::mem::take(&mut self.log);
        let (due, later, full) = split_due(log, STEP_EVENTS, |event| match event {
            Event::Read { at, snap, .. } => {
                (!all && at.elapsed() < TOOL_READ)
                    || matches!(snap, Taken::Hashing(id) if !all && self.hashing[*id].ready().is_none())
            }
            // Still being written: what it left is not known yet.
            Event::Changed { path } => !all && matches!(self.known.get(path), Some(Known::Writing)),
            _ => false,
        });
        self.log = later;
        if due.is_empty() && self.refusals.is_empty() && self.kept_files.is_empty() {
            return Ok(false);
        }
        // Within what is due, a path's last reading or writing is what counts, up to a rename.
        let mut last: HashSet<&RelPath> = HashSet::default();
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
                // A large step read the map's trees from every earlier step's pack: what it
                // read need not stay the supervisor's until the next.
                if large {
                    memory::release_pack_pages(&self.journal.store.pack_dir());
                }
                // Once per turn, however many steps it took.
                if !full {
                    self.flush_every = if large || steps > 0 {
                        (self.flush_every * 2).min(FLUSH_MAX)
                    } else {
                        FLUSH_EVERY
                    };
                }
                Ok(full)
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
        self.learn_ignored(due)?;
        let mut step = Gathered {
            batch: if due.len() > BATCH_PATHS {
                Some(self.journal.batch()?)
            } else {
                None
            },
            moved_to: due
                .iter()
                .filter_map(|e| match e {
                    Event::Moved { to, .. } => Some(to.clone()),
                    _ => None,
                })
                .collect(),
            edits: Vec::new(),
            reads: 0,
            writes: 0,
        };
        // Digests still being computed are waited for this long in all.
        let deadline = Instant::now() + HASH_WAIT;
        for event in due {
            match event {
                Event::Read { path, snap, .. } => {
                    self.gather_read(&mut step, path, snap, deadline)?
                }
                Event::Moved { from, to } => {
                    if !(self.skips(from) && self.skips(to)) {
                        step.edits.push(record::moved(from, to));
                        step.writes += 1;
                    }
                }
                Event::Changed { path } => self.gather_changed(&mut step, path)?,
                Event::Left { path, sig } => self.gather_left(&mut step, path, *sig)?,
                Event::Wrote { path, snap } => {
                    if !self.skips(path)
                        && !self.holds(&step, path, snap.digest, snap.bytes.is_some())
                    {
                        let version = record::Version {
                            digest: snap.digest,
                            kept: self.keep(&step.batch, snap)?,
                        };
                        step.edits
                            .push(record::wrote(path, version, self.replaced(path)));
                        step.writes += 1;
                    }
                }
            }
        }
        self.commit_step(step, refused)
    }

    /// Which of the paths `due` names, new to the session, git ignores: asked once per path
    /// and step (those matter only when the session already tracks them), with what the
    /// session knew of each when the command started looked up on the way. Forgotten with the
    /// step: a command reading 100,000 new files would otherwise keep an answer for each.
    fn learn_ignored(&mut self, due: &[Event]) -> Result<(), Error> {
        self.ignored.clear();
        let mut new = Vec::new();
        let mut asked = HashSet::default();
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
        Ok(())
    }

    /// Whether `path` is one git ignores and the session never tracked: nothing to record.
    fn skips(&self, path: &RelPath) -> bool {
        self.ignored.get(path).copied().unwrap_or(false)
    }

    /// Whether the session already holds `digest` at `path` (with its bytes, when `kept`):
    /// nothing to record, unless a rename of this step brought other knowledge there.
    fn holds(&self, step: &Gathered, path: &RelPath, digest: Digest, kept: bool) -> bool {
        !step.moved_to.contains(path)
            && matches!(self.start.get(path), Some((seen, held))
                if *seen == Seen::Digest(digest) && (*held || !kept))
    }

    /// What a change of `path` replaced, as far as this command knows where it came from.
    fn replaced(&self, path: &RelPath) -> Replaced {
        Replaced::unkept(self.origins.get(path).copied().flatten())
    }

    /// Whether `path`, gone from disk, leaves an entry to remove: the session tracked it, this
    /// step moved something there, or this command put it in the map before.
    fn gone_from_map(&self, step: &Gathered, path: &RelPath) -> bool {
        self.start.contains_key(path)
            || step.moved_to.contains(path)
            || self.recorded.contains(path)
    }

    /// A read of `path`, as `snap` took it: recorded unless the session holds those bytes.
    fn gather_read(
        &mut self,
        step: &mut Gathered,
        path: &RelPath,
        snap: &Taken,
        deadline: Instant,
    ) -> Result<(), Error> {
        let taken;
        let snap = match snap {
            Taken::Snap(snap) => snap,
            // Unknown by the end of the command, or changed while hashed: the read tells the
            // session nothing.
            Taken::Hashing(id) => {
                match self.hashing[*id].wait(deadline.saturating_duration_since(Instant::now())) {
                    Some(digest) => {
                        taken = Snapshot {
                            digest,
                            bytes: None,
                            exec: false,
                        };
                        &taken
                    }
                    None => return Ok(()),
                }
            }
            // Not read: known by its signature. Held with its bytes, there is nothing to
            // record; otherwise the bytes are taken now, if they still are the same.
            Taken::Known { digest, exec } => {
                if self.skips(path) || self.holds(step, path, *digest, true) {
                    return Ok(());
                }
                taken = match self.snapshot(path) {
                    Ok(Some(now)) if now.digest == *digest => now,
                    _ => Snapshot {
                        digest: *digest,
                        bytes: None,
                        exec: *exec,
                    },
                };
                &taken
            }
        };
        if self.skips(path) || self.holds(step, path, snap.digest, snap.bytes.is_some()) {
            return Ok(());
        }
        let version = record::Version {
            digest: snap.digest,
            kept: self.keep(&step.batch, snap)?,
        };
        step.edits.push(record::read(path, version));
        step.reads += 1;
        Ok(())
    }

    /// A change of `path` the command made: what is there now, or its removal.
    fn gather_changed(&mut self, step: &mut Gathered, path: &RelPath) -> Result<(), Error> {
        if self.skips(path) {
            return Ok(());
        }
        match self.snapshot(path) {
            Ok(Some(snap)) if self.holds(step, path, snap.digest, snap.bytes.is_some()) => {}
            Ok(Some(snap)) => {
                let version = record::Version {
                    digest: snap.digest,
                    kept: self.keep(&step.batch, &snap)?,
                };
                step.edits
                    .push(record::wrote(path, version, self.replaced(path)));
                step.writes += 1;
            }
            // Gone: the entry goes too (a path the session never tracked leaves nothing).
            Ok(None) if !path.under(&self.root).exists() && self.gone_from_map(step, path) => {
                step.edits.push(record::deleted(path));
                step.writes += 1;
            }
            // Gone, never tracked; a folder, a device, something unreadable: nothing the map
            // can hold.
            _ => {}
        }
        Ok(())
    }

    /// What the command left at `path` when it finished writing it (`sig`, what `stat` said
    /// then): the bytes, when the file still is as it left it; else that they cannot be known.
    fn gather_left(
        &mut self,
        step: &mut Gathered,
        path: &RelPath,
        sig: Signature,
    ) -> Result<(), Error> {
        if self.skips(path) {
            return Ok(());
        }
        let replaced = self.replaced(path);
        // Read now, and checked against what `stat` said when it finished, before and after.
        let snap = match self.snapshot(path) {
            Ok(Some(snap)) if Signature::at(&path.under(&self.root)) == Some(sig) => Some(snap),
            _ => None,
        };
        match snap {
            // Renamed or deleted since: its own later events say what became of it.
            None if !path.under(&self.root).exists() => {
                if !self.gone_from_map(step, path) {
                    return Ok(());
                }
                step.edits.push(record::deleted(path));
            }
            Some(snap) => {
                if let Some(Known::Left(left)) = self.known.get_mut(path)
                    && left.0 == sig
                {
                    left.1 = Some(snap.digest);
                }
                if self.holds(step, path, snap.digest, snap.bytes.is_some()) {
                    return Ok(());
                }
                let version = record::Version {
                    digest: snap.digest,
                    kept: self.keep(&step.batch, &snap)?,
                };
                step.edits.push(record::wrote(path, version, replaced));
            }
            // Changed again since: what it left cannot be known, so the next change needs a
            // re-read.
            None => step.edits.push(record::wrote_unsure(path, replaced)),
        }
        step.writes += 1;
        Ok(())
    }

    /// Record what `step` gathered and the refusals `refused` as one step of the session, with
    /// the files this command kept before changing them blind.
    fn commit_step(
        &mut self,
        step: Gathered,
        refused: Vec<crate::refusals::Record>,
    ) -> Result<(), Error> {
        let Gathered {
            batch,
            edits,
            reads,
            writes,
            ..
        } = step;
        if edits.is_empty() && refused.is_empty() && self.kept_files.is_empty() {
            return Ok(());
        }
        let refused_note = match refused.len() {
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
                "{} ({reads} read, {writes} changed{refused_note})",
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
        self.n_reads += reads;
        self.n_writes += writes;
        Ok(())
    }
}

/// Split `log` into what is due now (at most `cap` events) and what waits, each in order: an
/// event waits when `waits` says so, or when an earlier event of one of its paths waits; once
/// `cap` are due, everything after waits too. Whether the cap left events waiting.
fn split_due(
    log: Vec<Event>,
    cap: usize,
    mut waits: impl FnMut(&Event) -> bool,
) -> (Vec<Event>, Vec<Event>, bool) {
    let mut due = Vec::new();
    let mut later = Vec::new();
    let mut blocked: HashSet<RelPath> = HashSet::default();
    let mut full = false;
    for event in log {
        if due.len() >= cap {
            full = true;
            later.push(event);
        } else if waits(&event) || event.paths().iter().flatten().any(|p| blocked.contains(*p)) {
            blocked.extend(event.paths().into_iter().flatten().cloned());
            later.push(event);
        } else {
            due.push(event);
        }
    }
    (due, later, full)
}

/// What one step being recorded gathers ([`Supervisor::record_due`]).
pub(super) struct Gathered {
    /// The step's objects, kept in memory and written as one pack (a large step).
    batch: Option<journal::Batch>,
    /// Where this step's renames lead: what the session held there before says nothing now.
    moved_to: HashSet<RelPath>,
    edits: Vec<MapEdit>,
    reads: usize,
    writes: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changed(path: &str) -> Event {
        Event::Changed {
            path: RelPath::from_bytes(path.as_bytes()).unwrap(),
        }
    }

    fn names(events: &[Event]) -> Vec<String> {
        events
            .iter()
            .map(|e| String::from_utf8_lossy(e.paths()[0].unwrap().as_bytes()).into_owned())
            .collect()
    }

    #[test]
    fn a_step_takes_at_most_its_cap_and_the_rest_waits_in_order() {
        let log = ["a", "b", "c", "d", "e"].map(changed).into();
        let (due, later, full) = split_due(log, 3, |_| false);
        assert_eq!(names(&due), ["a", "b", "c"]);
        assert_eq!(names(&later), ["d", "e"]);
        assert!(full);
        let (due, later, full) = split_due(later, 3, |_| false);
        assert_eq!(names(&due), ["d", "e"]);
        assert!(later.is_empty() && !full);
    }

    #[test]
    fn a_path_whose_event_waits_keeps_its_later_events_waiting() {
        let log = ["a", "b", "a", "c"].map(changed).into();
        // Only the first event of `a` waits of itself.
        let mut a_seen = 0;
        let (due, later, full) = split_due(log, 10, |e| {
            a_seen += usize::from(e.paths()[0].unwrap().as_bytes() == b"a");
            a_seen == 1 && e.paths()[0].unwrap().as_bytes() == b"a"
        });
        assert_eq!(names(&due), ["b", "c"]);
        assert_eq!(names(&later), ["a", "a"]);
        assert!(!full);
    }
}
