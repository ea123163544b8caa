//! Reading a session's map: entries by path, the map's changes, root files, blobs, and the
//! versions of a path across sessions.

use super::*;

impl Journal<'_> {
    /// The entry for `path` in the session's current map.
    pub fn lookup(&self, id: &SessionId, path: &RelPath) -> Result<Option<Entry>, Error> {
        self.lookup_at(self.tip(id)?.tree, path)
    }

    /// The entry for `path` in the map of one step's tree (a [`Tip::tree`]).
    ///
    /// A path the map does not hold but the session may have known before its memory of it was
    /// lost ([`Forgot`]) is [`Seen::Forgotten`].
    pub(crate) fn lookup_at(&self, tree: ObjectId, path: &RelPath) -> Result<Option<Entry>, Error> {
        match self.tree_entry(&tree, &entry_dir(path))? {
            Some(entry) => self.decode_entry(&entry.oid, Some(path)),
            None if self.forgets(tree, path)? => Ok(Some(Entry {
                path: path.clone(),
                seen: Seen::Forgotten,
                origin: None,
                bytes: None,
                wrote: None,
                origin_bytes: None,
                moved_from: None,
            })),
            None => Ok(None),
        }
    }

    /// What the session of step tree `tree` lost, if anything.
    pub(crate) fn forgot_at(&self, tree: ObjectId) -> Result<Option<std::rc::Rc<Forgot>>, Error> {
        if let Some((at, forgot)) = &*self.forgot.borrow()
            && *at == tree
        {
            return Ok(forgot.clone());
        }
        let forgot = self
            .root_file_of_tree(tree, &RootFile::Forgot)?
            .map(|b| std::rc::Rc::new(Forgot::decode(&b)));
        *self.forgot.borrow_mut() = Some((tree, forgot.clone()));
        Ok(forgot)
    }

    fn forgets(&self, tree: ObjectId, path: &RelPath) -> Result<bool, Error> {
        Ok(self.forgot_at(tree)?.is_some_and(|f| f.covers(path)))
    }

    /// What the session saw of `path` in tree `tree`, and whether the journal holds those bytes:
    /// [`Journal::lookup_at`] without reading the path back (for callers that only compare).
    pub(crate) fn seen_at(
        &self,
        tree: ObjectId,
        path: &RelPath,
    ) -> Result<Option<(Seen, bool)>, Error> {
        let Some(folder) = self.tree_entry(&tree, &entry_dir(path))? else {
            return Ok(self
                .forgets(tree, path)?
                .then_some((Seen::Forgotten, false)));
        };
        let mut buf = Vec::new();
        // An entry's own folder is read once per command: not worth the cache's memory.
        self.read_tree(&folder.oid, &mut buf)?;
        let (mut state, mut bytes) = (None, false);
        for e in gix::objs::TreeRefIter::from_bytes(&buf, gix::hash::Kind::Sha1) {
            let e = Self::entry(&folder.oid, e)?;
            match e.filename.as_bytes() {
                b"state" => state = Some(e.oid.to_owned()),
                b"seen" => bytes = true,
                _ => {}
            }
        }
        let seen = state
            .and_then(|id| self.blob(id).ok())
            .and_then(|b| parse_state(&b))
            .ok_or_else(|| Error::Corrupt {
                id: String::new(),
                why: "a map entry has no valid state".into(),
            })?;
        Ok(Some((seen.0, bytes)))
    }

    /// The state of `path`'s entry in tree `tree` (what the session saw, where it started), read
    /// without the rest of the entry: a step only needs to know whether and where it started.
    pub(super) fn state_at(&self, tree: ObjectId, path: &RelPath) -> Result<Option<State>, Error> {
        let Some(state) = self.tree_entry(&tree, &format!("{}/state", entry_dir(path)))? else {
            return Ok(None);
        };
        parse_state(&self.blob(state.oid)?)
            .map(Some)
            .ok_or_else(|| Error::Corrupt {
                id: String::new(),
                why: "a map entry has no valid state".into(),
            })
    }

    /// Decode one entry folder; `expected` guards against a hash collision.
    fn decode_entry(
        &self,
        folder: &ObjectId,
        expected: Option<&RelPath>,
    ) -> Result<Option<Entry>, Error> {
        let corrupt = |why: &str| Error::Corrupt {
            id: String::new(),
            why: why.to_owned(),
        };
        let mut path = None;
        let mut state = None;
        let mut origin_bytes = None;
        let mut moved_from = None;
        let mut bytes = None;
        let mut buf = Vec::new();
        for e in self.read_tree(folder, &mut buf)? {
            let e = Self::entry(folder, e)?;
            let oid = e.oid.to_owned();
            match e.filename.as_bytes() {
                b"path" => path = RelPath::from_bytes(&self.blob(oid)?),
                b"state" => {
                    let text = self.blob(oid)?;
                    state = parse_state(&text);
                }
                b"seen" => bytes = Some((oid, e.mode.is_executable())),
                b"origin" => origin_bytes = Some(oid),
                b"moved" => moved_from = RelPath::from_bytes(&self.blob(oid)?),
                _ => {}
            }
        }
        let path = path.ok_or_else(|| corrupt("a map entry has no valid path"))?;
        let (seen, origin, wrote) =
            state.ok_or_else(|| corrupt("a map entry has no valid state"))?;
        if expected.is_some_and(|p| *p != path) {
            return Ok(None);
        }
        Ok(Some(Entry {
            path,
            seen,
            origin,
            bytes,
            wrote,
            origin_bytes,
            moved_from,
        }))
    }

    /// The files of `path`'s entry folder in step tree `tree`: name, kind and object.
    pub(super) fn entry_files(
        &self,
        tree: ObjectId,
        path: &RelPath,
    ) -> Result<Vec<(&'static str, EntryKind, ObjectId)>, Error> {
        let Some(folder) = self.tree_entry(&tree, &entry_dir(path))? else {
            return Ok(Vec::new());
        };
        let mut buf = Vec::new();
        let mut out = Vec::new();
        for e in self.read_tree(&folder.oid, &mut buf)? {
            let e = Self::entry(&folder.oid, e)?;
            if let Some(name) = ENTRY_FILES
                .iter()
                .find(|n| n.as_bytes() == e.filename.as_bytes())
            {
                out.push((*name, e.mode.kind(), e.oid.to_owned()));
            }
        }
        Ok(out)
    }

    /// Every tracked path of the session, sorted by path.
    pub fn entries(&self, id: &SessionId) -> Result<Vec<Entry>, Error> {
        let tip = self.tip(id)?;
        self.entries_of_tree(tip.tree)
    }

    /// Every map entry in a step tree, sorted by path.
    pub fn entries_of_tree(&self, tree: ObjectId) -> Result<Vec<Entry>, Error> {
        let Some(map) = self.tree_entry(&tree, MAP)? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        let mut stack = vec![(map.oid, 0u8)];
        let mut buf = Vec::new();
        while let Some((tree_id, depth)) = stack.pop() {
            if depth == 3 {
                out.extend(self.decode_entry(&tree_id, None)?);
                continue;
            }
            for e in self.read_tree(&tree_id, &mut buf)? {
                let e = Self::entry(&tree_id, e)?;
                if e.mode.is_tree() {
                    stack.push((e.oid.to_owned(), depth + 1));
                }
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    /// The paths the session tracked once and no longer does (it deleted them, or a write
    /// found them gone), each with its entry just before it was dropped; newest drop first,
    /// once per path. Only the map's subtrees that changed from one step to the next are read.
    pub(crate) fn dropped_entries(&self, id: &SessionId) -> Result<Vec<Entry>, Error> {
        let history = self.history(id)?;
        if history.is_empty() {
            return Ok(Vec::new());
        }
        // Each step's map tree, newest first, read once.
        let maps = history
            .iter()
            .map(|(commit, _, _)| self.map_of(*commit))
            .collect::<Result<Vec<Option<ObjectId>>, Error>>()?;
        let now = maps[0];
        let mut out: Vec<Entry> = Vec::new();
        for pair in maps.windows(2) {
            for (had, has) in self.map_changes(pair[1], pair[0])? {
                if let (Some(entry), None) = (had, has)
                    && self.lookup_in(now, &entry.path)?.is_none()
                    && !out.iter().any(|e| e.path == entry.path)
                {
                    out.push(entry);
                }
            }
        }
        Ok(out)
    }

    /// The map tree of step `commit` (`None`: the step tracks nothing).
    pub(crate) fn map_of(&self, commit: ObjectId) -> Result<Option<ObjectId>, Error> {
        self.map_in(self.tree_of(commit)?)
    }

    /// The map tree of step tree `tree` (`None`: the step tracks nothing).
    pub(crate) fn map_in(&self, tree: ObjectId) -> Result<Option<ObjectId>, Error> {
        Ok(self.tree_entry(&tree, MAP)?.map(|e| e.oid))
    }

    /// The entries that differ between two map trees, as (before, after) pairs: an entry added
    /// is `(None, Some)`, dropped `(Some, None)`, changed `(Some, Some)`. Only the subtrees that
    /// differ are read, so a step's changes cost what the step changed.
    pub(crate) fn map_changes(
        &self,
        before: Option<ObjectId>,
        after: Option<ObjectId>,
    ) -> Result<Vec<MapChange>, Error> {
        let mut out = Vec::new();
        self.map_diff(before, after, |_, had, has| {
            let decode = |folder: Option<ObjectId>| match folder {
                Some(f) => self.decode_entry(&f, None),
                None => Ok(None),
            };
            out.push((decode(had)?, decode(has)?));
            Ok(())
        })?;
        Ok(out)
    }

    /// The digests of the paths whose entries differ between two map trees (each entry is named
    /// by its path's digest), without reading the entries themselves. A name that is no digest
    /// names no path.
    pub(crate) fn map_changed_digests(
        &self,
        before: Option<ObjectId>,
        after: Option<ObjectId>,
    ) -> Result<Vec<Digest>, Error> {
        let mut out = Vec::new();
        self.map_diff(before, after, |key, _, _| {
            out.extend(std::str::from_utf8(key).ok().and_then(Digest::from_hex));
            Ok(())
        })?;
        Ok(out)
    }

    /// Walk the entry folders that differ between two map trees, in the trees' order: `leaf`
    /// gets each one's key and its folder on either side.
    fn map_diff(
        &self,
        before: Option<ObjectId>,
        after: Option<ObjectId>,
        mut leaf: impl FnMut(&[u8], Option<ObjectId>, Option<ObjectId>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut stack = vec![(before, after, 0u8, Vec::new())];
        while let Some((had, has, depth, name)) = stack.pop() {
            if had == has {
                continue;
            }
            if depth == 3 {
                leaf(&name, had, has)?;
                continue;
            }
            let mut children: std::collections::BTreeMap<
                Vec<u8>,
                (Option<ObjectId>, Option<ObjectId>),
            > = std::collections::BTreeMap::new();
            for (side, tree) in [(0, had), (1, has)] {
                let Some(tree) = tree else { continue };
                let mut buf = Vec::new();
                for e in self.read_tree(&tree, &mut buf)? {
                    let e = Self::entry(&tree, e)?;
                    if e.mode.is_tree() {
                        let slot = children.entry(e.filename.to_vec()).or_default();
                        if side == 0 {
                            slot.0 = Some(e.oid.to_owned());
                        } else {
                            slot.1 = Some(e.oid.to_owned());
                        }
                    }
                }
            }
            // Pushed in reverse so entries come out in the trees' order.
            for (name, (had, has)) in children.into_iter().rev() {
                stack.push((had, has, depth + 1, name));
            }
        }
        Ok(())
    }

    /// `path`'s entry in the map tree `map` (`None`: no map, or no entry).
    fn lookup_in(&self, map: Option<ObjectId>, path: &RelPath) -> Result<Option<Entry>, Error> {
        let Some(map) = map else {
            return Ok(None);
        };
        let dir = entry_dir(path);
        let inner = dir
            .strip_prefix("map/")
            .expect("entry folders are under map/");
        match self.tree_entry(&map, inner)? {
            Some(e) => self.decode_entry(&e.oid, Some(path)),
            None => Ok(None),
        }
    }

    /// The bytes of a top-level journal file at the session's tip.
    pub fn root_file(&self, id: &SessionId, file: &RootFile) -> Result<Option<Vec<u8>>, Error> {
        let tip = self.tip(id)?;
        self.root_file_of_tree(tip.tree, file)
    }

    /// A top-level TOML file at the session's tip, typed (see [`layout::parse`]).
    pub(crate) fn root_toml<T: for<'de> serde::Deserialize<'de>>(
        &self,
        id: &SessionId,
        file: &RootFile,
    ) -> Result<Option<T>, Error> {
        Ok(self.root_file(id, file)?.and_then(|b| layout::parse(&b)))
    }

    /// The edit that puts `value` as the TOML file `file`.
    pub(crate) fn toml_edit<T: serde::Serialize>(
        &self,
        file: RootFile,
        value: &T,
    ) -> Result<RootEdit, Error> {
        let blob = self.write_blob(layout::to_toml(value).as_bytes())?;
        Ok(RootEdit::Put { file, blob })
    }

    /// The bytes of a top-level journal file in a step tree.
    /// The blob id of a top-level journal file in step tree `tree`: comparing ids tells whether a
    /// step changed the file without reading it.
    pub(crate) fn root_file_id(
        &self,
        tree: ObjectId,
        file: &RootFile,
    ) -> Result<Option<ObjectId>, Error> {
        Ok(self.tree_entry(&tree, &file.name())?.map(|e| e.oid))
    }

    pub(crate) fn root_file_of_tree(
        &self,
        tree: ObjectId,
        file: &RootFile,
    ) -> Result<Option<Vec<u8>>, Error> {
        match self.tree_entry(&tree, &file.name())? {
            Some(e) => self.blob(e.oid).map(Some),
            None => Ok(None),
        }
    }

    /// The size of a blob, from its header: its bytes are not read.
    pub fn blob_size(&self, id: ObjectId) -> Result<u64, Error> {
        let header = self.repo()?.find_header(id).map_err(gix::Error::from_error);
        Ok(self.object("read a blob", &id, header)?.size())
    }

    /// The bytes of a blob as a reader: held whole up to `store::STREAM_FROM`, streamed
    /// beyond (see `store::blob_stream`).
    pub fn blob_reader(&self, id: ObjectId) -> Result<Box<dyn std::io::Read + Send>, Error> {
        let size = self.blob_size(id)?;
        if size <= store::STREAM_FROM {
            return Ok(Box::new(std::io::Cursor::new(self.blob(id)?)));
        }
        store::blob_stream(self.store.dir(), id, size)
            .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>)
            .map_err(|e| self.blob_io(e))
    }

    /// The digest of a blob's bytes, streamed when it is large (see [`Journal::blob_reader`]).
    pub(crate) fn blob_digest(&self, id: ObjectId) -> Result<Digest, Error> {
        Digest::of_reader(self.blob_reader(id)?).map_err(|e| self.blob_io(e))
    }

    /// A blob that could not be read from the store.
    pub(crate) fn blob_io(&self, source: std::io::Error) -> Error {
        store::Error::Io {
            op: "read a blob from",
            path: self.store.dir().to_owned(),
            source,
        }
        .into()
    }

    /// The bytes of a blob.
    pub fn blob(&self, id: ObjectId) -> Result<Vec<u8>, Error> {
        use gix::objs::FindExt;
        let mut buf = Vec::new();
        let blob = self.find("read a blob", &id, |o| o.find_blob(&id, &mut buf))?;
        Ok(blob.data.to_vec())
    }

    /// The tree of step `commit`.
    pub(crate) fn tree_of(&self, commit: ObjectId) -> Result<ObjectId, Error> {
        let mut buf = Vec::new();
        Ok(self.read_commit(&commit, &mut buf)?.tree())
    }

    /// Every version of `path` that any session of this store read, wrote or saw overwritten,
    /// oldest first: one per session and change of bytes (walks every history; for recovery, never
    /// on a hot path).
    pub fn versions(&self, path: &RelPath) -> Result<Vec<Version>, Error> {
        let sessions: Vec<SessionId> = self.sessions()?.into_iter().map(|(id, _)| id).collect();
        self.versions_in(&sessions, path)
    }

    /// [`Journal::versions`], in the histories of `sessions` only.
    pub(crate) fn versions_in(
        &self,
        sessions: &[SessionId],
        path: &RelPath,
    ) -> Result<Vec<Version>, Error> {
        self.versions_following(sessions, path, 0)
    }

    /// [`Journal::versions_in`], following a rename back to where the session first knew the
    /// bytes (`depth` renames deep so far).
    fn versions_following(
        &self,
        sessions: &[SessionId],
        path: &RelPath,
        depth: u32,
    ) -> Result<Vec<Version>, Error> {
        let dir = entry_dir(path);
        let over = overwritten_dir(path);
        let mut out = Vec::new();
        let mut buf = Vec::new();
        for session in sessions {
            let mut history = self.history(session)?;
            history.reverse();
            let mut last_folder = None;
            let mut last_digest = None;
            let mut kept = std::collections::HashSet::new();
            // The rename that first brought the path's entry here, and at which step.
            let mut moved: Option<(RelPath, u64)> = None;
            let first = out.len();
            for (i, (commit, time, _)) in history.iter().enumerate() {
                let step = i as u64 + 1;
                let tree = self.read_commit(commit, &mut buf)?.tree();
                let folder = self.tree_entry(&tree, &dir)?.map(|e| e.oid);
                if folder != last_folder {
                    last_folder = folder;
                    let entry = match folder {
                        Some(f) => self.decode_entry(&f, Some(path))?,
                        None => None,
                    };
                    if let Some(Entry {
                        moved_from: Some(from),
                        ..
                    }) = &entry
                        && moved.is_none()
                        && from != path
                    {
                        moved = Some((from.clone(), step));
                    }
                    match entry {
                        Some(Entry {
                            seen: Seen::Digest(d),
                            bytes,
                            wrote,
                            ..
                        }) if last_digest != Some(d) => {
                            last_digest = Some(d);
                            out.push(Version {
                                digest: d,
                                blob: bytes.map(|(b, _)| b),
                                session: session.clone(),
                                step,
                                time: *time,
                                how: if wrote.is_some() {
                                    How::Wrote
                                } else {
                                    How::Read
                                },
                            });
                        }
                        Some(_) => {}
                        None => last_digest = None,
                    }
                }
                if let Some(o) = self.tree_entry(&tree, &over)?
                    && o.mode.is_tree()
                {
                    let mut tbuf = Vec::new();
                    let blobs: Vec<ObjectId> = self
                        .read_tree(&o.oid, &mut tbuf)?
                        .filter_map(|e| e.ok())
                        .filter(|e| e.filename != layout::OVERWRITTEN_PATH)
                        .map(|e| e.oid.to_owned())
                        .collect();
                    for blob in blobs {
                        if kept.insert(blob) {
                            out.push(Version {
                                digest: self.blob_digest(blob)?,
                                blob: Some(blob),
                                session: session.clone(),
                                step,
                                time: *time,
                                how: How::Overwritten,
                            });
                        }
                    }
                }
            }
            // The versions it had under its old name, before the rename.
            if let Some((from, at)) = moved
                && depth < 16
            {
                let before =
                    self.versions_following(std::slice::from_ref(session), &from, depth + 1)?;
                out.splice(first..first, before.into_iter().filter(|v| v.step < at));
            }
        }
        out.sort_by_key(|v| v.time.seconds);
        Ok(out)
    }

    /// Every version any session kept because a change replaced it unseen (a blind change,
    /// [`crate::keep`], or a host's tool that overwrote a change), kept from Unix second `since`
    /// on: newest first, each with its path. Walks every history (for `recover --all`, never on
    /// a hot path); bytes kept by versions that did not name their path are left out.
    pub fn kept_since(&self, since: i64) -> Result<Vec<(RelPath, Version)>, Error> {
        let mut out = Vec::new();
        let mut buf = Vec::new();
        for (session, _) in self.sessions()? {
            let mut history = self.history(&session)?;
            history.reverse();
            let mut last = None;
            let mut known = std::collections::HashSet::new();
            for (i, (commit, time, _)) in history.iter().enumerate() {
                let tree = self.read_commit(commit, &mut buf)?.tree();
                let folder = self.tree_entry(&tree, layout::OVERWRITTEN)?.map(|e| e.oid);
                if folder == last {
                    continue;
                }
                last = folder;
                let Some(folder) = folder else { continue };
                let dirs: Vec<ObjectId> = self
                    .read_tree(&folder, &mut buf)?
                    .filter_map(|e| e.ok())
                    .filter(|e| e.mode.is_tree())
                    .map(|e| e.oid.to_owned())
                    .collect();
                for dir in dirs {
                    let files: Vec<(bool, ObjectId)> = self
                        .read_tree(&dir, &mut buf)?
                        .filter_map(|e| e.ok())
                        .map(|e| (e.filename == layout::OVERWRITTEN_PATH, e.oid.to_owned()))
                        .collect();
                    let Some(path) = files
                        .iter()
                        .find(|(is_path, _)| *is_path)
                        .and_then(|(_, oid)| RelPath::from_bytes(&self.blob(*oid).ok()?))
                    else {
                        continue;
                    };
                    for (_, blob) in files.into_iter().filter(|(is_path, _)| !is_path) {
                        if known.insert(blob) && time.seconds >= since {
                            let version = Version {
                                digest: self.blob_digest(blob)?,
                                blob: Some(blob),
                                session: session.clone(),
                                step: i as u64 + 1,
                                time: *time,
                                how: How::Overwritten,
                            };
                            out.push((path.clone(), version));
                        }
                    }
                }
            }
        }
        out.sort_by_key(|(_, v)| std::cmp::Reverse(v.time.seconds));
        Ok(out)
    }
}
