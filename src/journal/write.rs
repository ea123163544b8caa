//! Writing the journal: a session's first commit, blobs, and each step as one commit (built
//! in memory, its objects written as loose objects or one pack, synced, then the ref moved).

use super::*;

/// A step whose objects are written, waiting for [`Journal::commit`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Prepared {
    parent: ObjectId,
    commit: ObjectId,
    /// The Unix second the step was built in: its time, and its writes' time.
    second: i64,
}

/// Objects written in memory for one step (see [`Journal::batch`]).
pub(crate) struct Batch {
    repo: gix::Repository,
}

impl Batch {
    /// What is in memory, taken out: the batch starts over empty.
    fn take(&mut self) -> gix::odb::memory::Storage {
        let objects = self.repo.objects.take_object_memory().unwrap_or_default();
        self.repo.objects.enable_object_memory();
        objects
    }

    /// Put back what [`Batch::take`] took (nothing was written in between).
    fn give_back(&mut self, objects: gix::odb::memory::Storage) {
        self.repo.objects.set_object_memory(objects);
    }
}

/// Store `objects` (a batch's, taken out) as one pack.
fn write_pack(store: &Store, objects: &gix::odb::memory::Storage) -> Result<(), Error> {
    if objects.is_empty() {
        return Ok(());
    }
    Ok(store.write_pack(level_order(objects).into_iter())?)
}

/// `objects` in the order a walk from their commits reaches them, level by level (the commit,
/// its tree, the trees that one names, and so on), then whatever no walk reaches. The next
/// steps read back this step's fan-out trees, a few here and a few there: found side by side
/// near the pack's start rather than spread over all of it, they cost a command under the
/// shell guard a few pages of each pack mapped, not every page.
fn level_order(objects: &gix::odb::memory::Storage) -> Vec<(gix::objs::Kind, &[u8])> {
    use gix::objs::Kind;
    let mut order: Vec<ObjectId> = Vec::with_capacity(objects.len());
    let mut placed: std::collections::HashSet<ObjectId> = std::collections::HashSet::new();
    for (id, (kind, _)) in objects.iter() {
        if *kind == Kind::Commit && placed.insert(*id) {
            order.push(*id);
        }
    }
    let mut at = 0;
    while at < order.len() {
        let id = order[at];
        at += 1;
        let (kind, data) = &objects[&id];
        let mut place = |next: ObjectId| {
            if objects.contains_key(&next) && placed.insert(next) {
                order.push(next);
            }
        };
        match kind {
            Kind::Commit => {
                if let Ok(commit) = gix::objs::CommitRef::from_bytes(data, gix::hash::Kind::Sha1) {
                    place(commit.tree());
                }
            }
            Kind::Tree => {
                for entry in
                    gix::objs::TreeRefIter::from_bytes(data, gix::hash::Kind::Sha1).flatten()
                {
                    place(entry.oid.to_owned());
                }
            }
            Kind::Blob | Kind::Tag => {}
        }
    }
    let mut ordered: Vec<(Kind, &[u8])> = order
        .iter()
        .map(|id| {
            let (kind, data) = &objects[id];
            (*kind, data.as_slice())
        })
        .collect();
    ordered.extend(
        objects
            .iter()
            .filter(|(id, _)| !placed.contains(*id))
            .map(|(_, (kind, data))| (*kind, data.as_slice())),
    );
    ordered
}

impl<'s> Journal<'s> {
    /// Start session `id` with `session_toml` as its metadata, on top of `parent` (an artifact's
    /// tip when replaying) or as a new history. `step`'s edits land in the same first commit, so a
    /// replayed session is guarded from its first step on.
    pub(crate) fn start(
        &self,
        id: &SessionId,
        session: &layout::SessionFile,
        parent: Option<ObjectId>,
        step: &Step,
    ) -> Result<Tip, Error> {
        let blob = self.write_blob(layout::to_toml(session).as_bytes())?;
        let name = session_ref(id);
        self.store.update_ref(&name, &step.summary, |repo, tip| {
            if tip.is_some() {
                return Err(Error::SessionExists { id: id.clone() });
            }
            let empty_id = ObjectId::empty_tree(repo.object_hash());
            let empty = self.git("read a tree", repo.find_tree(empty_id))?;
            let mut editor = self.git("build a tree", empty.edit())?;
            self.git(
                "build a tree",
                editor
                    .upsert(RootFile::Session.name().as_str(), EntryKind::Blob, blob)
                    .map(|_| ()),
            )?;
            let tracked = self.apply(repo, None, &mut editor, step, 0)?;
            self.note_writers(id, step)?;
            let tree = self.git("write a tree", editor.write())?.detach();
            let commit = self.write_commit(repo, tree, parent, &step.summary, 1, tracked)?;
            self.sync_step(commit, None)?;
            Ok(commit)
        })?;
        self.tip(id)
    }

    /// Store `bytes` as a blob.
    ///
    /// A blob the store holds already is trusted only once it reads back whole: after a power
    /// cut its name can be on disk without its bytes (see `Store::remove_leftover`), and gix
    /// would take that file for the blob and write nothing.
    pub fn write_blob(&self, bytes: &[u8]) -> Result<ObjectId, Error> {
        self.write_blob_into(self.repo()?, bytes)
    }

    /// [`Journal::write_blob`] through `repo` (the store's, or a batch's in memory).
    fn write_blob_into(&self, repo: &gix::Repository, bytes: &[u8]) -> Result<ObjectId, Error> {
        use gix::objs::Write;
        let id = self.git(
            "write a blob",
            gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, bytes)
                .map_err(gix::Error::from_error),
        )?;
        self.store.remove_leftover(&id)?;
        if repo.has_object(id) {
            return Ok(id);
        }
        self.git(
            "write a blob",
            repo.objects
                .write_buf_with_known_id(gix::objs::Kind::Blob, bytes, id),
        )
    }

    /// Store the `size` bytes `from` yields as a blob, without holding them: the object is
    /// written to a temporary file as it streams and takes its name only once whole. A reader
    /// that fails (or yields other than `size` bytes, see [`crate::fsutil::Exact`]) leaves
    /// nothing behind.
    ///
    /// The object is written even when the store holds it already, replacing any copy an
    /// earlier crash left broken: only the finished hash names it, so there is nothing to look
    /// up first.
    pub(crate) fn write_blob_stream(
        &self,
        size: u64,
        from: &mut dyn std::io::Read,
    ) -> Result<ObjectId, Error> {
        use gix::objs::Write;
        self.git(
            "write a blob",
            self.repo()?
                .objects
                .write_stream(gix::objs::Kind::Blob, size, from),
        )
    }

    fn write_commit(
        &self,
        repo: &gix::Repository,
        tree: ObjectId,
        parent: Option<ObjectId>,
        summary: &str,
        steps: u64,
        tracked: u64,
    ) -> Result<ObjectId, Error> {
        let sig = store::signature(gix::date::Time::now_utc());
        let commit = gix::objs::Commit {
            tree,
            parents: parent.into_iter().collect(),
            author: sig.clone(),
            committer: sig,
            encoding: None,
            message: format!(
                "{}\n\nStella-Step: {steps}\nStella-Tracked: {tracked}\n",
                summary.replace('\n', " ")
            )
            .into(),
            extra_headers: Vec::new(),
        };
        Ok(self
            .git("write a step", repo.write_object(&commit))?
            .detach())
    }

    /// A lease on session `id` for as long as the file returned is open: retention leaves a
    /// leased session alone (a running `exec` holds one).
    pub(crate) fn lease(&self, id: &SessionId) -> Result<std::fs::File, Error> {
        Ok(self.store.lease(id.as_str())?)
    }

    /// Whether a live process holds a lease on session `id`.
    pub(crate) fn leased(&self, id: &SessionId) -> bool {
        self.store.leased(id.as_str())
    }

    /// Record one step: all of its edits land in one commit, or none do.
    pub(crate) fn record(&self, id: &SessionId, step: &Step) -> Result<Tip, Error> {
        self.record_in(id, step, None)
    }

    /// Objects for one large step, kept in memory until [`Journal::record_batch`] stores them
    /// all as one pack.
    pub(crate) fn batch(&self) -> Result<Batch, Error> {
        let mut repo = self.repo()?.clone();
        repo.objects.enable_object_memory();
        Ok(Batch { repo })
    }

    /// Keep `bytes` as a blob of the step `batch` will record; like [`Journal::write_blob`], a
    /// blob the store holds already is trusted only once it reads back whole (the step would
    /// otherwise name a file an earlier crash left broken, and the pack would lack it).
    pub(crate) fn write_blob_in(&self, batch: &Batch, bytes: &[u8]) -> Result<ObjectId, Error> {
        self.write_blob_into(&batch.repo, bytes)
    }

    /// Record one step whose objects (and the blobs written into `batch` before) are stored as
    /// one pack rather than one file each.
    pub(crate) fn record_batch(
        &self,
        id: &SessionId,
        step: &Step,
        mut batch: Batch,
    ) -> Result<Tip, Error> {
        self.record_in(id, step, Some(&mut batch))
    }

    fn record_in(
        &self,
        id: &SessionId,
        step: &Step,
        mut batch: Option<&mut Batch>,
    ) -> Result<Tip, Error> {
        let name = session_ref(id);
        let new = self.store.update_ref(&name, &step.summary, |repo, tip| {
            let Some(tip) = tip else {
                return Err(Error::UnknownSession { id: id.clone() });
            };
            let mut tries = 0;
            loop {
                let commit = self.build(repo, id, tip, step, batch.as_deref())?;
                let Some(b) = batch.as_deref_mut() else {
                    return Ok(commit);
                };
                let old = self.tree_of(tip)?;
                let objects = b.take();
                // gix writes nothing for an object the store holds already, so the pack lacks
                // those: loose files an earlier process left, maybe never synced, maybe broken
                // by a crash. They are checked and synced as a step written loose has them.
                // Listed before the pack is written, this step's own trees read from memory.
                let synced = match self.step_objects(commit, Some(old), Some(&objects)) {
                    Ok(ids) => write_pack(self.store, &objects)
                        .and_then(|()| Ok(self.store.sync_objects(&ids)?)),
                    // Back in memory for the next try: the bytes kept before are in no pack yet.
                    Err(e) => {
                        b.give_back(objects);
                        Err(e)
                    }
                };
                match synced {
                    Err(Error::Store(store::Error::Leftover { .. })) if tries < 64 => tries += 1,
                    r => return r.map(|()| commit),
                }
            }
        });
        self.recorded(id, step, new?)
    }

    /// The tip a step just moved the session to, said at `-v`.
    fn recorded(&self, id: &SessionId, step: &Step, commit: ObjectId) -> Result<Tip, Error> {
        let tip = self.read_tip(id.as_str(), commit)?;
        tracing::info!(session = %id, step = tip.steps, tracked = tip.tracked, "recorded: {}", step.summary);
        Ok(tip)
    }

    /// Write every object of `step` on top of the session's tip now, without moving the session:
    /// what can fail for want of space or permission fails here, before the caller touches the
    /// tree. [`Journal::commit`] then moves the session in one ref update.
    pub(crate) fn prepare(&self, id: &SessionId, step: &Step) -> Result<Prepared, Error> {
        let tip = self
            .store
            .tip(&session_ref(id))?
            .ok_or_else(|| Error::UnknownSession { id: id.clone() })?;
        // Read before the build, which reads the clock again: the step's time is this second
        // or a later one.
        let second = gix::date::Time::now_utc().seconds;
        let commit = self.build(self.repo()?, id, tip, step, None)?;
        Ok(Prepared {
            parent: tip,
            commit,
            second,
        })
    }

    /// The commit of `step` on top of step `tip`, its objects written and synced, moving no ref
    /// (a repair moves the session's ref itself, under the store's lock).
    pub(crate) fn step_on(
        &self,
        id: &SessionId,
        tip: ObjectId,
        step: &Step,
    ) -> Result<ObjectId, Error> {
        self.build(self.repo()?, id, tip, step, None)
    }

    /// Record `step`, prepared by [`Journal::prepare`]; built again only when another step of
    /// the session landed in between, or the clock went on to another second.
    ///
    /// A write is prepared before its folder's hold is taken and committed once its bytes have
    /// landed, under that hold: a step built in the second before its bytes landed would say it
    /// wrote before a hook checked the file, and the hook's host, writing after that check,
    /// would replace the write with no report (a hook looks for the writes of other sessions
    /// from the second of its check on, [`Journal::written_since`]).
    pub(crate) fn commit(
        &self,
        id: &SessionId,
        step: &Step,
        prepared: Prepared,
    ) -> Result<Tip, Error> {
        let name = session_ref(id);
        let new = self
            .store
            .update_ref(&name, &step.summary, |repo, tip| match tip {
                None => Err(Error::UnknownSession { id: id.clone() }),
                Some(tip)
                    if tip == prepared.parent
                        && gix::date::Time::now_utc().seconds == prepared.second =>
                {
                    Ok(prepared.commit)
                }
                Some(tip) => self.build(repo, id, tip, step, None),
            });
        self.recorded(id, step, new?)
    }

    /// The commit of `step` on top of `tip`, its objects written (into `batch` when given).
    ///
    /// Built again when syncing it found objects an earlier crash left broken (they are removed
    /// then, so the next build writes them afresh): each try removes at least one.
    fn build(
        &self,
        repo: &gix::Repository,
        id: &SessionId,
        tip: ObjectId,
        step: &Step,
        batch: Option<&Batch>,
    ) -> Result<ObjectId, Error> {
        let in_memory = batch.is_some();
        let repo = batch.map_or(repo, |b| &b.repo);
        let mut tries = 0;
        loop {
            match self.write_step(repo, in_memory, id, tip, step) {
                Err(Error::Store(store::Error::Leftover { .. })) if tries < 64 => tries += 1,
                r => return r,
            }
        }
    }

    /// One try of [`Journal::build`] in `repo` (objects kept in memory when `in_memory`).
    fn write_step(
        &self,
        repo: &gix::Repository,
        in_memory: bool,
        id: &SessionId,
        tip: ObjectId,
        step: &Step,
    ) -> Result<ObjectId, Error> {
        let current = self.read_tip(id.as_str(), tip)?;
        let tree = self.object("read a tree", &current.tree, repo.find_tree(current.tree))?;
        let mut editor = self.git("edit a tree", tree.edit())?;
        let tracked = self.apply(repo, Some(current.tree), &mut editor, step, current.tracked)?;
        self.note_writers(id, step)?;
        let new_tree = self.git("write a tree", editor.write())?.detach();
        let commit = self.write_commit(
            repo,
            new_tree,
            Some(tip),
            &step.summary,
            current.steps + 1,
            tracked,
        )?;
        // Objects kept in memory go to disk as one pack, which git syncs as it writes it.
        if !in_memory {
            self.sync_step(commit, Some(current.tree))?;
        }
        Ok(commit)
    }

    /// Sync what step `commit` added to the store on top of tree `old` (the step before's)
    /// before the session's ref is moved to it.
    fn sync_step(&self, commit: ObjectId, old: Option<ObjectId>) -> Result<(), Error> {
        let ids = self.step_objects(commit, old, None)?;
        Ok(self.store.sync_objects(&ids)?)
    }

    /// The objects step `commit` added to the store, to sync before the session's ref is moved
    /// to it: the commit, the trees that changed from tree `old` (the step before's) and the
    /// blobs they now name; of a step kept in `memory`, those it does not hold (objects the
    /// store held already), its trees read from there.
    fn step_objects(
        &self,
        commit: ObjectId,
        old: Option<ObjectId>,
        memory: Option<&gix::odb::memory::Storage>,
    ) -> Result<Vec<ObjectId>, Error> {
        let mut ids = vec![commit];
        let listed = match memory.and_then(|m| m.get(&commit)) {
            Some((_, data)) => {
                let new = self.object(
                    "read a step",
                    &commit,
                    gix::objs::CommitRef::from_bytes(data, gix::hash::Kind::Sha1)
                        .map_err(gix::Error::from_error),
                )?;
                self.new_objects(new.tree(), old, memory, &mut ids)
            }
            // Read inside the listing: a commit gix took for one it was writing may be a file a
            // crash left empty, and is removed below like a broken tree.
            None => self
                .tree_of(commit)
                .and_then(|new| self.new_objects(new, old, memory, &mut ids)),
        };
        match listed {
            // A tree of this step that does not read back is a file an earlier crash left
            // broken, which gix took for the tree it was writing: remove it, record nothing.
            Err(Error::Damaged { object, source }) => {
                return Err(match self.store.remove_leftover(&object)? {
                    Some(leftover) => leftover.into(),
                    None => Error::Damaged { object, source },
                });
            }
            r => r?,
        }
        if let Some(memory) = memory {
            ids.retain(|id| !memory.contains_key(id));
        }
        Ok(ids)
    }

    /// The objects of tree `new` that `old` does not hold at the same place; the trees `memory`
    /// holds read from there.
    fn new_objects(
        &self,
        new: ObjectId,
        old: Option<ObjectId>,
        memory: Option<&gix::odb::memory::Storage>,
        out: &mut Vec<ObjectId>,
    ) -> Result<(), Error> {
        if Some(new) == old {
            return Ok(());
        }
        out.push(new);
        let mut buf = Vec::new();
        let mut before = std::collections::HashMap::new();
        if let Some(old) = old {
            self.cached_tree(&old, &mut buf)?;
            for e in gix::objs::TreeRefIter::from_bytes(&buf, gix::hash::Kind::Sha1) {
                let e = Self::entry(&old, e)?;
                before.insert(e.filename.to_vec(), e.oid.to_owned());
            }
        }
        match memory.and_then(|m| m.get(&new)) {
            Some((_, data)) => {
                buf.clear();
                buf.extend_from_slice(data);
            }
            None => self.cached_tree(&new, &mut buf)?,
        }
        let mut entries = Vec::new();
        for e in gix::objs::TreeRefIter::from_bytes(&buf, gix::hash::Kind::Sha1) {
            let e = Self::entry(&new, e)?;
            entries.push((e.filename.to_vec(), e.oid.to_owned(), e.mode.is_tree()));
        }
        for (name, id, is_tree) in entries {
            let was = before.get(&name).copied();
            if was == Some(id) {
                continue;
            }
            if is_tree {
                self.new_objects(id, was, memory, out)?;
            } else {
                out.push(id);
            }
        }
        Ok(())
    }

    /// Apply `step`'s edits to `editor` (a tree editor over `tree`, `None` for the empty tree),
    /// returning the new count of tracked paths.
    ///
    /// The map's edits are gathered by entry folder first, then made one first-level folder
    /// (`map/ab`) at a time, each with an editor of its own that is written and let go of
    /// before the next: one editor over the whole map held every first-level tree it touched,
    /// parsed, until the step was written (a step of 10,000 reads touches all 256 of them, and
    /// their 65,536 entries took 8 MiB).
    fn apply(
        &self,
        repo: &gix::Repository,
        tree: Option<ObjectId>,
        editor: &mut gix::object::tree::Editor<'_>,
        step: &Step,
        mut tracked: u64,
    ) -> Result<u64, Error> {
        let now = gix::date::Time::now_utc().seconds;
        // What this step did so far, by path: later edits of the same step see earlier ones.
        let mut states: std::collections::HashMap<RelPath, Option<State>> =
            std::collections::HashMap::new();
        let state_of = |states: &std::collections::HashMap<RelPath, Option<State>>,
                        path: &RelPath|
         -> Result<Option<State>, Error> {
            match (states.get(path), tree) {
                (Some(s), _) => Ok(*s),
                (None, Some(t)) => self.state_at(t, path),
                (None, None) => Ok(None),
            }
        };
        let mut folders = Folders::default();
        for edit in &step.map {
            self.paced();
            match edit {
                MapEdit::Put {
                    path,
                    seen,
                    bytes,
                    first_origin,
                    wrote,
                    origin_bytes,
                } => {
                    let existing = state_of(&states, path)?;
                    let origin = match existing {
                        Some((_, origin, _)) => origin,
                        None => {
                            tracked += 1;
                            *first_origin
                        }
                    };
                    // A read of the very bytes the session wrote leaves them its write: another
                    // session's blind change of them is still refused (see the guard).
                    let wrote_at = match existing {
                        _ if *wrote => Some(now),
                        Some((before, _, at))
                            if before == *seen && matches!(seen, Seen::Digest(_)) =>
                        {
                            at
                        }
                        _ => None,
                    };
                    let state = self.git(
                        "write a blob",
                        repo.write_blob(state_text(*seen, origin, wrote_at).as_bytes()),
                    )?;
                    let path_blob = self.git("write a blob", repo.write_blob(path.as_bytes()))?;
                    let folder = folders.of(path);
                    folder.push(FolderEdit::Put("path", EntryKind::Blob, path_blob.detach()));
                    folder.push(FolderEdit::Put("state", EntryKind::Blob, state.detach()));
                    if existing.is_none()
                        && let Some(blob) = origin_bytes
                    {
                        folder.push(FolderEdit::Put("origin", EntryKind::Blob, *blob));
                    }
                    folder.push(match bytes {
                        Some((blob, exec)) => {
                            let kind = if *exec {
                                EntryKind::BlobExecutable
                            } else {
                                EntryKind::Blob
                            };
                            FolderEdit::Put("seen", kind, *blob)
                        }
                        None => FolderEdit::Drop("seen"),
                    });
                    states.insert(path.clone(), Some((*seen, origin, wrote_at)));
                }
                MapEdit::Remove { path } => {
                    if state_of(&states, path)?.is_some() {
                        tracked -= 1;
                        folders.of(path).push(FolderEdit::Clear);
                    }
                    states.insert(path.clone(), None);
                }
                MapEdit::Move { from, to } => {
                    if from == to {
                        continue;
                    }
                    let source = state_of(&states, from)?;
                    // The folder's files as this step left them, else as the tree holds them.
                    let files = match source {
                        None => Vec::new(),
                        Some(_) => folders.files(from, || {
                            self.entry_files(tree.expect("a tracked source"), from)
                        })?,
                    };
                    if state_of(&states, to)?.is_some() {
                        tracked -= 1;
                        folders.of(to).push(FolderEdit::Clear);
                    }
                    states.insert(to.clone(), source);
                    let Some(_) = source else {
                        continue;
                    };
                    let path_blob = self
                        .git("write a blob", repo.write_blob(to.as_bytes()))?
                        .detach();
                    let mut moved = false;
                    let mut put = vec![FolderEdit::Put("path", EntryKind::Blob, path_blob)];
                    for (name, kind, oid) in files {
                        if name == "path" {
                            continue;
                        }
                        // Back where it first was: nothing left to move back.
                        if name == "moved" && oid == path_blob {
                            moved = true;
                            continue;
                        }
                        moved |= name == "moved";
                        put.push(FolderEdit::Put(name, kind, oid));
                    }
                    // A chain of renames keeps the first source: undo moves the file back there.
                    if !moved {
                        let from_blob =
                            self.git("write a blob", repo.write_blob(from.as_bytes()))?;
                        put.push(FolderEdit::Put(
                            "moved",
                            EntryKind::Blob,
                            from_blob.detach(),
                        ));
                    }
                    folders.of(to).extend(put);
                    folders.of(from).push(FolderEdit::Clear);
                    states.insert(from.clone(), None);
                }
            }
        }
        drop(states);
        self.write_folders(repo, tree, editor, folders)?;
        for edit in &step.root {
            let r = match edit {
                RootEdit::Put { file, blob } => {
                    editor.upsert(file.name().as_str(), EntryKind::Blob, *blob)
                }
                RootEdit::Remove { file } => editor.remove(file.name().as_str()),
            };
            self.git("edit a tree", r)?;
        }
        Ok(tracked)
    }

    /// Make the map's edits `folders` gathered, one first-level folder at a time (see
    /// [`Journal::apply`]), naming each new first-level tree in `editor` (over `tree`).
    fn write_folders(
        &self,
        repo: &gix::Repository,
        tree: Option<ObjectId>,
        editor: &mut gix::object::tree::Editor<'_>,
        folders: Folders,
    ) -> Result<(), Error> {
        let ed = |r: Result<_, gix::Error>| self.git("edit a tree", r).map(|_| ());
        let mut folders = folders.by_key.into_iter().peekable();
        while let Some((key, edits)) = folders.next() {
            let top = key[..2].to_owned();
            let at = format!("{MAP}/{top}");
            let before = match tree {
                Some(t) => self.tree_entry(&t, &at)?.map(|e| e.oid),
                None => None,
            };
            let base = before.unwrap_or_else(|| ObjectId::empty_tree(repo.object_hash()));
            let base = self.object("read a tree", &base, repo.find_tree(base))?;
            let mut sub = self.git("edit a tree", base.edit())?;
            let mut next = Some((key, edits));
            while let Some((key, edits)) = next {
                self.paced();
                let dir = format!("{}/{key}", &key[2..4]);
                for edit in edits {
                    match edit {
                        FolderEdit::Put(name, kind, oid) => {
                            ed(sub.upsert(format!("{dir}/{name}"), kind, oid).map(|_| ()))?;
                        }
                        FolderEdit::Drop(name) => {
                            ed(sub.remove(format!("{dir}/{name}")).map(|_| ()))?;
                        }
                        FolderEdit::Clear => ed(sub.remove(dir.as_str()).map(|_| ()))?,
                    }
                }
                next = folders.next_if(|(k, _)| k.starts_with(&top));
            }
            let written = self.git("write a tree", sub.write())?.detach();
            if written.is_empty_tree() {
                ed(editor.remove(at.as_str()).map(|_| ()))?;
            } else {
                ed(editor
                    .upsert(at.as_str(), EntryKind::Tree, written)
                    .map(|_| ()))?;
            }
        }
        Ok(())
    }
}

/// A change to one map entry's folder, made in the order given.
#[derive(Clone, Copy, Debug)]
enum FolderEdit {
    /// Put this file in it.
    Put(&'static str, EntryKind, ObjectId),
    /// Take this file out of it.
    Drop(&'static str),
    /// Remove the folder and everything in it.
    Clear,
}

/// A step's changes to the map, by entry folder (named by its path's hex digest, so in the
/// map's order), each folder's in the order made.
#[derive(Default)]
struct Folders {
    by_key: std::collections::BTreeMap<String, Vec<FolderEdit>>,
}

impl Folders {
    /// The changes to `path`'s folder, to add to.
    fn of(&mut self, path: &RelPath) -> &mut Vec<FolderEdit> {
        self.by_key.entry(path_key(path)).or_default()
    }

    /// The files of `path`'s folder as this step's changes leave them, those of the step before
    /// read by `before` when needed.
    fn files(
        &self,
        path: &RelPath,
        before: impl FnOnce() -> Result<Vec<(&'static str, EntryKind, ObjectId)>, Error>,
    ) -> Result<Vec<(&'static str, EntryKind, ObjectId)>, Error> {
        let edits = self
            .by_key
            .get(&path_key(path))
            .map_or(&[][..], Vec::as_slice);
        let (mut files, edits) = match edits.iter().rposition(|e| matches!(e, FolderEdit::Clear)) {
            Some(at) => (Vec::new(), &edits[at + 1..]),
            None => (before()?, edits),
        };
        for edit in edits {
            match *edit {
                FolderEdit::Put(name, kind, oid) => {
                    files.retain(|(n, _, _)| *n != name);
                    files.push((name, kind, oid));
                }
                FolderEdit::Drop(name) => files.retain(|(n, _, _)| *n != name),
                FolderEdit::Clear => files.clear(),
            }
        }
        Ok(files)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::record::{self, Version};

    fn p(s: &str) -> RelPath {
        RelPath::from_bytes(s.as_bytes()).unwrap()
    }

    /// A session `s` in a new store in `tmp`.
    fn started(tmp: &std::path::Path) -> (Store, SessionId) {
        let store = Store::open_or_init(&tmp.join("store")).unwrap();
        let id = SessionId::parse("s").unwrap();
        let file = layout::SessionFile {
            id: id.to_string(),
            ..Default::default()
        };
        Journal::new(&store)
            .start(&id, &file, None, &Step::default())
            .unwrap();
        (store, id)
    }

    /// Record reads of `files` as one step written as one pack.
    fn record_files(store: &Store, id: &SessionId, files: &[(RelPath, Vec<u8>)]) -> Tip {
        let journal = Journal::new(store);
        let batch = journal.batch().unwrap();
        let map = files
            .iter()
            .map(|(path, bytes)| {
                let blob = journal.write_blob_in(&batch, bytes).unwrap();
                record::read(path, Version::kept(Digest::of(bytes), blob, false))
            })
            .collect();
        let step = Step {
            summary: "reads".into(),
            map,
            root: Vec::new(),
        };
        journal.record_batch(id, &step, batch).unwrap()
    }

    /// `n` small files named `<prefix>f<i>`.
    fn numbered(prefix: &str, n: usize) -> Vec<(RelPath, Vec<u8>)> {
        (0..n)
            .map(|i| {
                (
                    p(&format!("{prefix}f{i}")),
                    format!("file {i}\n").into_bytes(),
                )
            })
            .collect()
    }

    /// Each of `files` is in session `id`'s map with its bytes, and git finds the store whole.
    fn assert_kept(store: &Store, id: &SessionId, files: &[(RelPath, Vec<u8>)]) {
        let journal = Journal::new(store);
        for (path, bytes) in files {
            let entry = journal.lookup(id, path).unwrap().expect("recorded");
            assert_eq!(journal.blob(entry.bytes.unwrap().0).unwrap(), *bytes);
        }
        git(store, &["fsck", "--strict", "--no-dangling"]);
    }

    fn git(store: &Store, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .arg("--git-dir")
            .arg(store.dir())
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    }

    /// A write prepared in one second and committed in the next (its folder's hold waited for)
    /// carries the second it was committed in, as the step and as the write's time.
    #[test]
    fn a_step_committed_in_a_later_second_than_prepared_carries_the_later_one() {
        let tmp = tempfile::tempdir().unwrap();
        let (store, id) = started(tmp.path());
        let journal = Journal::new(&store);
        let bytes = b"mine\n";
        let blob = journal.write_blob(bytes).unwrap();
        let step = Step {
            summary: "wrote a.txt".into(),
            map: vec![record::wrote(
                &p("a.txt"),
                Version::kept(Digest::of(bytes), blob, false),
                record::Replaced::nothing(),
            )],
            root: Vec::new(),
        };
        let prepared = journal.prepare(&id, &step).unwrap();
        let second = gix::date::Time::now_utc().seconds;
        while gix::date::Time::now_utc().seconds == second {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let landed = gix::date::Time::now_utc().seconds;
        journal.commit(&id, &step, prepared).unwrap();
        let (_, time, summary) = journal.history(&id).unwrap().remove(0);
        assert_eq!(summary, "wrote a.txt");
        assert!(time.seconds >= landed, "{} < {landed}", time.seconds);
        let wrote = journal.lookup(&id, &p("a.txt")).unwrap().unwrap().wrote;
        assert!(wrote.is_some_and(|at| at >= landed), "{wrote:?} < {landed}");
        assert_eq!(
            journal.written_since(&id, &p("a.txt"), landed).unwrap(),
            [(Digest::of(bytes), wrote.unwrap())]
        );
    }

    /// The pacer is called as a large step reads and edits, every [`PACE_EVERY`] objects and
    /// edits, with the store's pack folder: not only once the step is recorded.
    #[test]
    fn a_large_step_calls_the_pacer_as_it_goes() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static CALLS: AtomicUsize = AtomicUsize::new(0);
        static AT_PACKS: AtomicUsize = AtomicUsize::new(0);
        fn pacer(dir: &std::path::Path) {
            CALLS.fetch_add(1, Ordering::SeqCst);
            if dir.ends_with("objects/pack") {
                AT_PACKS.fetch_add(1, Ordering::SeqCst);
            }
        }
        let tmp = tempfile::tempdir().unwrap();
        let (store, id) = started(tmp.path());
        let files = numbered("d/", 1000);
        record_files(&store, &id, &files);
        let journal = Journal::new(&store);
        journal.pace_with(pacer);
        let batch = journal.batch().unwrap();
        let map = files
            .iter()
            .map(|(path, bytes)| {
                let bytes = [bytes.as_slice(), b"again"].concat();
                let blob = journal.write_blob_in(&batch, &bytes).unwrap();
                record::read(path, Version::kept(Digest::of(&bytes), blob, false))
            })
            .collect();
        let step = Step {
            summary: "reads again".into(),
            map,
            root: Vec::new(),
        };
        journal.record_batch(&id, &step, batch).unwrap();
        // A thousand edits, each reading its entry's state: well past four turns.
        let calls = CALLS.load(Ordering::SeqCst);
        assert!(calls >= 2000 / PACE_EVERY as usize, "{calls} calls");
        assert_eq!(AT_PACKS.load(Ordering::SeqCst), calls);
    }

    /// Within one step, a rename of a path the step itself recorded carries what the step
    /// recorded, a rename back to where a path first was leaves no trace of the trip, and a map
    /// whose every entry goes leaves no empty folder behind; a step kept in memory and one
    /// written loose agree.
    #[test]
    fn one_step_renames_what_it_recorded_and_leaves_no_empty_folder() {
        let read = |journal: &Journal, path: &str, bytes: &[u8]| {
            let blob = journal.write_blob(bytes).unwrap();
            record::read(&p(path), Version::kept(Digest::of(bytes), blob, false))
        };
        for in_memory in [false, true] {
            let tmp = tempfile::tempdir().unwrap();
            let (store, id) = started(tmp.path());
            let journal = Journal::new(&store);
            let record = |map: Vec<MapEdit>| {
                let step = Step {
                    summary: "step".into(),
                    map,
                    root: Vec::new(),
                };
                if in_memory {
                    journal
                        .record_batch(&id, &step, journal.batch().unwrap())
                        .unwrap()
                } else {
                    journal.record(&id, &step).unwrap()
                }
            };
            record(vec![
                read(&journal, "x", b"x\n"),
                read(&journal, "y", b"y\n"),
            ]);
            let tip = record(vec![
                read(&journal, "a", b"a\n"),
                record::moved(&p("a"), &p("c")),
                record::moved(&p("x"), &p("z")),
                record::deleted(&p("y")),
                record::moved(&p("z"), &p("x")),
            ]);
            assert_eq!(tip.tracked, 2, "in memory: {in_memory}");
            let c = journal.lookup(&id, &p("c")).unwrap().expect("c tracked");
            assert_eq!(c.seen, Seen::Digest(Digest::of(b"a\n")));
            assert_eq!(c.moved_from, Some(p("a")));
            let x = journal.lookup(&id, &p("x")).unwrap().expect("x tracked");
            assert_eq!(
                (x.seen, x.moved_from),
                (Seen::Digest(Digest::of(b"x\n")), None)
            );
            for gone in ["a", "y", "z"] {
                assert!(journal.lookup(&id, &p(gone)).unwrap().is_none(), "{gone}");
            }
            let tip = record(vec![record::deleted(&p("c")), record::deleted(&p("x"))]);
            assert_eq!(tip.tracked, 0);
            let listing = git(&store, &["ls-tree", "-r", "-t", &tip.tree.to_string()]);
            assert!(!listing.contains("map"), "{listing}");
            git(&store, &["fsck", "--strict", "--no-dangling"]);
        }
    }

    /// A large step's pack holds its commit, then its trees level by level, then its blobs:
    /// what later steps read back of it lies together at its start.
    #[test]
    fn a_large_step_is_one_pack_trees_before_blobs() {
        let tmp = tempfile::tempdir().unwrap();
        let (store, id) = started(tmp.path());
        let files = numbered("d/", 200);
        let tip = record_files(&store, &id, &files);
        assert_kept(&store, &id, &files);
        let packs: Vec<_> = std::fs::read_dir(store.pack_dir())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "idx"))
            .collect();
        assert_eq!(packs.len(), 1, "{packs:?}");
        let listing = git(&store, &["verify-pack", "-v", packs[0].to_str().unwrap()]);
        // In offset order: the commit, the trees, the blobs (`verify-pack` lists by offset).
        let kinds: Vec<&str> = listing
            .lines()
            .filter_map(|l| l.split_whitespace().nth(1))
            .filter(|k| ["commit", "tree", "blob"].contains(k))
            .collect();
        let first_blob = kinds.iter().position(|k| *k == "blob").unwrap();
        assert_eq!(kinds[0], "commit");
        assert!(
            kinds[1..first_blob].iter().all(|k| *k == "tree"),
            "{kinds:?}"
        );
        assert!(
            kinds[first_blob..].iter().all(|k| *k == "blob"),
            "{kinds:?}"
        );
        assert!(listing.contains(&tip.commit.to_string()));
    }

    /// A broken loose tree an earlier crash left, which a large step names (gix takes the file
    /// for the tree and writes nothing): the step writes the tree afresh, and keeps the bytes it
    /// was given before it found the broken one.
    #[test]
    fn a_large_step_naming_a_broken_leftover_tree_keeps_everything() {
        let files = numbered("", 100);
        // The same step in another store, to learn the trees it writes (they hold no time).
        let scratch = tempfile::tempdir().unwrap();
        let (store, id) = started(scratch.path());
        let tip = record_files(&store, &id, &files);
        let trees = git(&store, &["ls-tree", "-r", "-t", &tip.commit.to_string()]);
        let entry_tree = trees
            .lines()
            .find(|l| l.contains(" tree ") && l.matches('/').count() == 3)
            .and_then(|l| l.split_whitespace().nth(2))
            .expect("an entry's tree")
            .to_owned();
        let tmp = tempfile::tempdir().unwrap();
        let (_, id) = started(tmp.path());
        plant_broken(tmp.path(), &entry_tree);
        let store = Store::open_or_init(&tmp.path().join("store")).unwrap();
        record_files(&store, &id, &files);
        assert_kept(&store, &id, &files);
    }

    /// A loose object named `hex` in the store in `tmp`, its name on disk without its bytes,
    /// from before this process opens the store.
    fn plant_broken(tmp: &std::path::Path, hex: &str) {
        let loose = tmp.join("store/objects").join(&hex[..2]);
        std::fs::create_dir_all(&loose).unwrap();
        let loose = loose.join(&hex[2..]);
        std::fs::write(&loose, b"x").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&loose)
            .unwrap()
            .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(60))
            .unwrap();
    }

    /// A broken loose blob an earlier crash left, named by a large step: the step writes the
    /// blob afresh and reads back whole.
    #[test]
    fn a_large_step_naming_a_broken_leftover_writes_it_again() {
        let tmp = tempfile::tempdir().unwrap();
        let (_, id) = started(tmp.path());
        let files = numbered("", 100);
        let broken =
            gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, &files[7].1)
                .unwrap();
        plant_broken(tmp.path(), &broken.to_string());
        let store = Store::open_or_init(&tmp.path().join("store")).unwrap();
        record_files(&store, &id, &files);
        assert_kept(&store, &id, &files);
    }
}
