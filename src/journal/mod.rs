//! The session journal: one ref per session in the store, one commit per step.
//!
//! The step commit's tree is internal and may change freely (only the checkpoint's tip tree is a
//! versioned format). Its top-level files are typed in `layout`; the map is:
//!
//! ```text
//! map/<h[0..2]>/<h[2..4]>/<h>/ one entry per tracked path, h = BLAKE3 of the path
//!     path                     the path, relative to the workspace root
//!     state                    "digest <hex>|reread" and "origin <hex>|-" lines
//!     state                    and "wrote <unix seconds>" when the session wrote those bytes
//!     seen                     the bytes the session last saw (mode 100755 when executable)
//!     origin                   the bytes a first write replaced unseen (for `undo`)
//!     moved                    the path the session's knowledge came from, when a rename
//!                              carried it here (for `undo`, which moves it back)
//! ```
//!
//! Sharding by a hash of the path keeps a step's cost flat: it rewrites the root, `map`, two
//! small fan-out trees and the entry, whatever the number of tracked paths. It also keeps a file
//! `a` and a later `a/b` from ever colliding, and copes with 100,000 files in one folder.
//! The commit message's first line says what happened (`read src/a.rs`), so
//! `git --git-dir=<store> log refs/stella/sessions/<id>` reads as the session's history; its
//! trailers carry the step number and how many paths are tracked, so listing sessions reads tips
//! only.

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::object::tree::EntryKind;
use gix::objs::FindExt as _;
use gix::objs::{CommitRef, TreeRefIter};

use crate::digest::Digest;
use crate::ids::SessionId;
use crate::paths::RelPath;
use crate::store::{self, Store};

pub(crate) mod layout;
mod read;
mod sessions;
mod write;
mod writers;

pub(crate) use write::Batch;

pub(crate) use layout::overwritten_dir;
pub use layout::{Provenance, RootFile, SessionFile};

/// Where sessions live in the store.
pub const SESSIONS: &str = "refs/stella/sessions/";

/// Where dropped sessions wait, until gc expires them: `<DROPPED><id>/<Unix second dropped>`,
/// with `.N` after it for the Nth more drop of that id in the same second.
pub(crate) const DROPPED: &str = "refs/stella/dropped/";

/// What `Journal::drop_session` did with the session's journal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropOutcome {
    /// Set aside, for `undrop`, until gc expires it.
    Kept,
    /// Removed: it was damaged, and nothing whole could come back.
    Removed,
}

/// A dropped session, which `undrop` can bring back until it expires.
#[derive(Clone, Debug)]
pub struct Dropped {
    /// The session that was dropped.
    pub id: SessionId,
    /// When it was dropped (Unix seconds), and which drop of that id in that second.
    pub at: i64,
    nth: u32,
    /// Its last step, as it was when dropped.
    pub tip: Tip,
    ref_name: String,
}

/// One entry that differs between two map trees: (before, after), `None` where it is absent.
pub(crate) type MapChange = (Option<Entry>, Option<Entry>);

/// The ref of `id`.
pub fn session_ref(id: &SessionId) -> String {
    format!("{SESSIONS}{id}")
}

/// What the session believes about a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seen {
    /// The digest of the bytes the session last read or wrote.
    Digest(Digest),
    /// The session may have seen either of two versions: the next write needs a re-read.
    Reread,
    /// The session may have known the path before its memory of it was lost (`Forgot`): the
    /// next change of an existing file needs a re-read. Never stored in the map: a lookup
    /// answers it for a path the map does not hold.
    Forgotten,
}

impl Seen {
    /// As `status --json`, `guard --json` and the refusal log show it: the digest's hex,
    /// `reread` or `forgotten`.
    pub fn label(&self) -> String {
        match self {
            Seen::Digest(d) => d.to_hex(),
            Seen::Reread => "reread".into(),
            Seen::Forgotten => "forgotten".into(),
        }
    }
}

/// What a session may have known and lost: the paths of steps a repair dropped, or everything,
/// when even those are unknown (the session's journal was gone). Kept as the step tree's
/// `forgot` file, so it lasts until the session is dropped; a path the session reads or writes
/// again has its own entry and is judged by that.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Forgot {
    /// Everything: the session's journal was gone, so any path may be one it knew.
    All,
    /// These paths: the steps a repair dropped touched them.
    Paths(std::collections::BTreeSet<RelPath>),
}

impl Forgot {
    /// Its bytes in the step tree: `*`, or the paths each ended by a NUL.
    pub(crate) fn encode(&self) -> Vec<u8> {
        match self {
            Forgot::All => b"*".to_vec(),
            Forgot::Paths(paths) => {
                let mut out = Vec::new();
                for p in paths {
                    out.extend_from_slice(p.as_bytes());
                    out.push(0);
                }
                out
            }
        }
    }

    /// Read back what [`Forgot::encode`] wrote; anything unreadable is everything.
    pub(crate) fn decode(bytes: &[u8]) -> Forgot {
        if bytes == b"*" {
            return Forgot::All;
        }
        let mut paths = std::collections::BTreeSet::new();
        for part in bytes.split(|b| *b == 0).filter(|p| !p.is_empty()) {
            match RelPath::from_bytes(part) {
                Some(p) => {
                    paths.insert(p);
                }
                None => return Forgot::All,
            }
        }
        Forgot::Paths(paths)
    }

    /// Whether `path` may be one the session lost.
    pub(crate) fn covers(&self, path: &RelPath) -> bool {
        match self {
            Forgot::All => true,
            Forgot::Paths(paths) => paths.contains(path),
        }
    }

    /// Both together.
    pub(crate) fn union(self, other: Forgot) -> Forgot {
        match (self, other) {
            (Forgot::Paths(mut a), Forgot::Paths(b)) => {
                a.extend(b);
                Forgot::Paths(a)
            }
            _ => Forgot::All,
        }
    }
}

/// One tracked path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The path, relative to the workspace root.
    pub path: RelPath,
    /// What the session last saw there.
    pub seen: Seen,
    /// The digest of the bytes the session first saw here, `None` for a path it created.
    pub origin: Option<Digest>,
    /// The blob holding the bytes the session last saw, and whether they were executable.
    pub bytes: Option<(ObjectId, bool)>,
    /// When the session wrote the bytes it last saw here (Unix seconds); `None` when it last
    /// read them.
    pub wrote: Option<i64>,
    /// The bytes behind `origin`, kept when the session's first sight of the path was a write.
    pub(crate) origin_bytes: Option<ObjectId>,
    /// Where a rename brought this entry from: the path the session first knew these bytes at.
    pub moved_from: Option<RelPath>,
}

/// One change to the staleness map.
#[derive(Clone, Debug)]
pub enum MapEdit {
    /// Record what the session now knows about `path`. `first_origin` is used only when the path
    /// was not tracked yet (the session's first sight of it; `None` for a create).
    Put {
        /// The path, relative to the workspace root.
        path: RelPath,
        /// What the session now knows of its bytes.
        seen: Seen,
        /// The blob holding those bytes and whether they are executable, when the journal keeps
        /// them.
        bytes: Option<(ObjectId, bool)>,
        /// The digest of the bytes the path held before the session first came by it.
        first_origin: Option<Digest>,
        /// The session wrote these bytes (rather than read them): a refusal of another session
        /// can then say who changed the file, and when.
        wrote: bool,
        /// The bytes behind `first_origin`, when the session's first sight of the path was a
        /// write over bytes it had not read: `undo` puts them back.
        origin_bytes: Option<ObjectId>,
    },
    /// Stop tracking `path` (it was deleted: nothing is left to clobber).
    Remove {
        /// The path that was deleted.
        path: RelPath,
    },
    /// `from` was renamed to `to`: what the session knew of `from` is now what it knows of `to`
    /// (a stale source stays stale under its new name), and whatever it knew of `to` is gone,
    /// as for a delete. A source the session never tracked leaves `to` untracked.
    Move {
        /// The path renamed away.
        from: RelPath,
        /// The path it was renamed to.
        to: RelPath,
    },
}

/// The files of one map entry's folder.
const ENTRY_FILES: [&str; 5] = ["path", "state", "seen", "origin", "moved"];

/// A change to a top-level journal file (session metadata, the resume point, transcripts).
#[derive(Clone, Debug)]
pub enum RootEdit {
    /// Write `file` with the bytes of `blob`.
    Put {
        /// The top-level file.
        file: RootFile,
        /// The blob holding its new bytes.
        blob: ObjectId,
    },
    /// Remove `file` from the step tree.
    Remove {
        /// The top-level file.
        file: RootFile,
    },
}

/// A step to record.
#[derive(Clone, Debug, Default)]
pub(crate) struct Step {
    /// The first line of the step's commit message, e.g. `read src/a.rs`.
    pub summary: String,
    pub(crate) map: Vec<MapEdit>,
    pub(crate) root: Vec<RootEdit>,
}

/// A step's summary: `read src/a.rs`, or `read 3 paths: a, b, c` (cut after a few names).
pub(crate) fn summary(verb: &str, paths: &[RelPath]) -> String {
    match paths {
        [one] => format!("{verb} {one}"),
        many => {
            let shown: Vec<String> = many.iter().take(5).map(ToString::to_string).collect();
            let more = if many.len() > 5 { ", …" } else { "" };
            format!("{verb} {} paths: {}{more}", many.len(), shown.join(", "))
        }
    }
}

/// What a session's tip says about it, read without walking history.
#[derive(Clone, Debug)]
pub struct Tip {
    /// The session's last step: the commit its ref names.
    pub commit: ObjectId,
    /// That step's tree: the staleness map and the top-level files of `layout`.
    pub tree: ObjectId,
    /// How many steps the session has recorded (the step's `Stella-Step` trailer).
    pub steps: u64,
    /// How many paths the map tracks after that step (its `Stella-Tracked` trailer).
    pub tracked: u64,
    /// When that step was recorded: its commit's committer time.
    pub time: gix::date::Time,
    /// That step's summary, as `Step::summary` holds it: `read src/a.rs`.
    pub summary: String,
}

/// The error returned by journal operations.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The store could not be read or written.
    #[error(transparent)]
    Store(#[from] store::Error),
    /// No session by that id exists in this workspace.
    #[error("no session '{id}' in this workspace")]
    UnknownSession {
        /// The session asked for.
        id: SessionId,
    },
    /// A session by that id exists already: a new one cannot take its id.
    #[error("a session '{id}' already exists in this workspace")]
    SessionExists {
        /// The id asked for.
        id: SessionId,
    },
    /// No dropped session by that id is kept: it was never dropped, or gc expired it.
    #[error("no dropped session '{id}' is kept in this workspace")]
    NotDropped {
        /// The session asked for.
        id: SessionId,
    },
    /// A step says something Stella cannot read: a commit without its trailers, a map entry
    /// without a valid state.
    #[error("the journal of session '{id}' is corrupt: {why}")]
    Corrupt {
        /// The session, or empty where the reader did not know which.
        id: String,
        /// What is wrong with the step.
        why: String,
    },
    /// An object a step needs is missing or does not parse: what a power cut leaves when the
    /// session's ref reached the disk and the step's objects did not.
    #[error("the journal's object '{object}' is missing or corrupt")]
    Damaged {
        /// The object that is missing or does not parse.
        object: ObjectId,
        /// What gix reported.
        #[source]
        source: Box<gix::Error>,
    },
    /// The session's ref is gone but its reflog is not: a power cut lost the ref's file.
    #[error("session '{id}' has a reflog but no ref")]
    LostRef {
        /// The session whose ref was lost.
        id: SessionId,
    },
}

impl Error {
    /// Whether this says the store is damaged (a step whose objects or ref did not survive),
    /// rather than that it could not be read: what [`crate::repair`] walks back from.
    pub fn is_damage(&self) -> bool {
        matches!(
            self,
            Error::Damaged { .. }
                | Error::LostRef { .. }
                | Error::Corrupt { .. }
                | Error::Store(store::Error::DamagedRef { .. })
        )
    }
}

/// Whether a failed object read says the object is missing or does not parse, rather than that
/// it could not be read (permissions, I/O): only the first is damage to repair.
fn damaged(e: &gix::Error) -> bool {
    !e.is_permission_denied() && (e.is_not_found() || e.is_corrupted() || e.is_validation())
}

/// The digest the map names `path`'s entry by (in hex: [`path_key`]), as
/// [`Journal::map_changed_digests`] gives it back.
pub(crate) fn entry_digest(path: &RelPath) -> Digest {
    Digest::of(path.as_bytes())
}

/// The hex BLAKE3 of a path: its entry name in the map.
fn path_key(path: &RelPath) -> String {
    entry_digest(path).to_hex()
}

/// How `recover` names a version: the first 12 hex digits of its BLAKE3 digest.
pub fn version_id(digest: &Digest) -> String {
    digest.to_hex()[..12].to_owned()
}

/// How a session came by a version of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// The session read these bytes.
    Read,
    /// The session wrote these bytes.
    Wrote,
    /// A tool of the session overwrote these bytes without the session having seen them; Stella
    /// kept them.
    Overwritten,
}

/// One version of a file, as one session of the workspace came by it.
#[derive(Clone, Debug)]
pub struct Version {
    /// The digest of its bytes: what `recover` names it by ([`version_id`]).
    pub digest: Digest,
    /// The bytes, when the journal kept them.
    pub blob: Option<ObjectId>,
    /// The session that came by it.
    pub session: SessionId,
    /// The step (counting from 1 at the start of the history) that first held it.
    pub step: u64,
    /// When that step was recorded.
    pub time: gix::date::Time,
    /// Whether the session read it, wrote it, or saw it overwritten.
    pub how: How,
}

/// The step tree's folder of tracked paths: `map/<ab>/<cd>/<digest>/`, each path's entry named
/// by its digest ([`path_key`]).
const MAP: &str = "map";

/// The entry folder of `path` inside the step tree.
fn entry_dir(path: &RelPath) -> String {
    let h = path_key(path);
    format!("{MAP}/{}/{}/{}", &h[0..2], &h[2..4], h)
}

fn state_text(seen: Seen, origin: Option<Digest>, wrote: Option<i64>) -> String {
    let seen = match seen {
        Seen::Digest(d) => d.to_hex(),
        Seen::Reread | Seen::Forgotten => "reread".into(),
    };
    let origin = origin.map_or("-".into(), |d| d.to_hex());
    match wrote {
        Some(at) => format!("digest {seen}\norigin {origin}\nwrote {at}\n"),
        None => format!("digest {seen}\norigin {origin}\n"),
    }
}

/// The `wrote` line of a state file, if any (older journals have none).
fn parse_wrote(text: &[u8]) -> Option<i64> {
    std::str::from_utf8(text)
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("wrote ")?.parse().ok())
}

/// What a map entry's state file says: what the session saw, where it started, and when it
/// wrote what it saw (if it did).
type State = (Seen, Option<Digest>, Option<i64>);

fn parse_state(text: &[u8]) -> Option<State> {
    let text = std::str::from_utf8(text).ok()?;
    let mut seen = None;
    let mut origin = None;
    for line in text.lines() {
        match line.split_once(' ')? {
            ("digest", "reread") => seen = Some(Seen::Reread),
            ("digest", hex) => seen = Some(Seen::Digest(Digest::from_hex(hex)?)),
            ("origin", "-") => origin = Some(None),
            ("origin", hex) => origin = Some(Some(Digest::from_hex(hex)?)),
            _ => {}
        }
    }
    Some((seen?, origin?, parse_wrote(text.as_bytes())))
}

/// What a journal calls as it goes, with the store's pack folder ([`Journal::pace_with`]).
type Pacer = fn(&std::path::Path);

/// How many objects a journal reads, or map edits it makes, between two calls of its pacer
/// ([`Journal::pace_with`]).
const PACE_EVERY: u32 = 256;

/// A session's journal in one store.
pub struct Journal<'s> {
    pub(crate) store: &'s Store,
    /// Trees read so far, whole: the map's fan-out trees are shared by every lookup, and a step
    /// or a command under the shell guard looks up thousands of paths.
    trees: std::cell::RefCell<TreeCache>,
    /// The `forgot` file of the last step tree asked about.
    forgot: std::cell::RefCell<Option<(ObjectId, Option<std::rc::Rc<Forgot>>)>>,
    /// The pacer ([`Journal::pace_with`]), and the objects read or edits made since its last
    /// call.
    pace: std::cell::Cell<(u32, Option<Pacer>)>,
}

/// Trees by id, up to a bound on the memory held: two generations, the newest taking what is
/// read, the older one what was read before the newest filled up. A tree found in the older one
/// moves to the newest; when the newest fills, the older one is dropped and the newest takes its
/// place. So the trees every lookup passes through (the root, `map`, the fan-out) stay, while a
/// step's thousands of entry trees, read once, pass through and go.
#[derive(Default)]
struct TreeCache {
    newest: std::collections::HashMap<ObjectId, Vec<u8>>,
    older: std::collections::HashMap<ObjectId, Vec<u8>>,
    /// What `newest` holds, in bytes, each tree counted with [`TREE_COST`].
    bytes: usize,
}

/// What one generation of [`TreeCache`] holds at most, in bytes: a command under the shell
/// guard that reads 100,000 files for the first time would otherwise hold every tree its steps
/// wrote.
const TREE_GENERATION_BYTES: usize = 2 << 20;

/// What a cached tree costs beyond its bytes: its id, the `Vec`, the table's slot and the
/// allocator's header.
const TREE_COST: usize = 80;

impl TreeCache {
    /// Tree `id`'s bytes into `buf`, when the cache holds them.
    fn get(&mut self, id: &ObjectId, buf: &mut Vec<u8>) -> bool {
        if let Some(data) = self.newest.get(id) {
            buf.clear();
            buf.extend_from_slice(data);
            return true;
        }
        let Some(data) = self.older.remove(id) else {
            return false;
        };
        buf.clear();
        buf.extend_from_slice(&data);
        self.insert(*id, data);
        true
    }

    fn insert(&mut self, id: ObjectId, data: Vec<u8>) {
        let cost = data.len() + TREE_COST;
        if cost > TREE_GENERATION_BYTES {
            return;
        }
        if self.bytes + cost > TREE_GENERATION_BYTES {
            self.older = std::mem::take(&mut self.newest);
            self.bytes = 0;
        }
        self.bytes += cost;
        self.newest.insert(id, data);
    }
}

impl<'s> Journal<'s> {
    /// The journals of the sessions in `store`, with nothing read yet.
    pub fn new(store: &'s Store) -> Self {
        Journal {
            store,
            trees: Default::default(),
            forgot: Default::default(),
            pace: Default::default(),
        }
    }

    /// Call `pacer` with the store's pack folder every [`PACE_EVERY`] objects this journal reads
    /// and map edits it makes, between them (never while gix holds an object it read): the
    /// shell guard lets go of the pack pages a large step reads as it goes.
    pub(crate) fn pace_with(&self, pacer: Pacer) {
        self.pace.set((0, Some(pacer)));
    }

    /// One more object read or map edit: the pacer's turn when [`PACE_EVERY`] were.
    fn paced(&self) {
        let (n, pacer) = self.pace.get();
        let Some(pacer) = pacer else {
            return;
        };
        if n + 1 < PACE_EVERY {
            self.pace.set((n + 1, Some(pacer)));
            return;
        }
        self.pace.set((0, Some(pacer)));
        pacer(&self.store.pack_dir());
    }

    fn repo(&self) -> Result<&gix::Repository, Error> {
        Ok(self.store.repo()?)
    }

    /// Read tree `id` into `buf`, straight from the object database.
    fn read_tree<'b>(&self, id: &ObjectId, buf: &'b mut Vec<u8>) -> Result<TreeRefIter<'b>, Error> {
        self.find("read a tree", id, |o| o.find_tree_iter(id, buf))
    }

    /// What `find` reads from the object database, its failure named after `op` and `id`.
    fn find<T, E: std::error::Error + Send + Sync + 'static>(
        &self,
        op: &'static str,
        id: &ObjectId,
        find: impl FnOnce(&gix::odb::Handle) -> Result<T, E>,
    ) -> Result<T, Error> {
        self.paced();
        self.object(
            op,
            id,
            find(self.store.objects()?).map_err(gix::Error::from_error),
        )
    }

    /// The result of reading object `id`, a failure typed as damage when it is one.
    fn object<T>(
        &self,
        op: &'static str,
        id: &ObjectId,
        r: Result<T, gix::Error>,
    ) -> Result<T, Error> {
        r.map_err(|e| {
            if damaged(&e) {
                Error::Damaged {
                    object: *id,
                    source: Box::new(e),
                }
            } else {
                self.store.git_err(op)(e).into()
            }
        })
    }

    /// An entry of tree `id` that does not parse: the tree is damaged.
    fn entry<T, E: std::error::Error + Send + Sync + 'static>(
        id: &ObjectId,
        r: Result<T, E>,
    ) -> Result<T, Error> {
        r.map_err(|e| Error::Damaged {
            object: *id,
            source: Box::new(gix::Error::from_error(e)),
        })
    }

    /// The entry of tree `id` at `path` (folders separated by `/`), each tree on the way read
    /// through the cache.
    fn tree_entry(
        &self,
        id: &ObjectId,
        path: &str,
    ) -> Result<Option<gix::objs::tree::Entry>, Error> {
        let mut tree = *id;
        let mut parts = path.split('/').peekable();
        let mut buf = Vec::new();
        while let Some(name) = parts.next() {
            self.cached_tree(&tree, &mut buf)?;
            // Entries are sorted: stop at the name, or past where it would be.
            let mut found = None;
            for e in gix::objs::TreeRefIter::from_bytes(&buf, gix::hash::Kind::Sha1) {
                let e = Self::entry(&tree, e)?;
                if e.filename == name.as_bytes() {
                    found = Some(e);
                    break;
                }
            }
            let Some(found) = found else {
                return Ok(None);
            };
            if parts.peek().is_none() {
                return Ok(Some(found.into()));
            }
            if !found.mode.is_tree() {
                return Ok(None);
            }
            tree = found.oid.to_owned();
        }
        Ok(None)
    }

    /// Tree `id`'s bytes into `buf`, from the cache when it was read lately.
    fn cached_tree(&self, id: &ObjectId, buf: &mut Vec<u8>) -> Result<(), Error> {
        if self.trees.borrow_mut().get(id, buf) {
            return Ok(());
        }
        self.read_tree(id, buf)?;
        self.trees.borrow_mut().insert(*id, buf.clone());
        Ok(())
    }

    /// Read commit `id` into `buf`.
    fn read_commit<'b>(&self, id: &ObjectId, to: &'b mut Vec<u8>) -> Result<CommitRef<'b>, Error> {
        self.find("read a step", id, |o| o.find_commit(id, to))
    }

    fn git<T>(&self, op: &'static str, r: Result<T, gix::Error>) -> Result<T, Error> {
        r.map_err(|e| self.store.git_err(op)(e).into())
    }

    /// The session's tip, or `UnknownSession`.
    pub fn tip(&self, id: &SessionId) -> Result<Tip, Error> {
        self.try_tip(id)?
            .ok_or_else(|| Error::UnknownSession { id: id.clone() })
    }

    /// The session's tip, if the session exists.
    pub(crate) fn try_tip(&self, id: &SessionId) -> Result<Option<Tip>, Error> {
        match self.tip_commit(id)? {
            Some(commit) => self.read_tip(id.as_str(), commit).map(Some),
            None => Ok(None),
        }
    }

    /// Whether session `id` exists, from its ref alone: [`Journal::try_tip`] without reading
    /// the step it names.
    pub(crate) fn has_session(&self, id: &SessionId) -> Result<bool, Error> {
        Ok(self.tip_commit(id)?.is_some())
    }

    /// The step session `id`'s ref names, or `UnknownSession`: [`Journal::tip`] without reading
    /// the step (read it with [`Journal::tree_of_step`] when it is needed).
    pub(crate) fn tip_step(&self, id: &SessionId) -> Result<ObjectId, Error> {
        self.tip_commit(id)?
            .ok_or_else(|| Error::UnknownSession { id: id.clone() })
    }

    /// The map tree of session `id`'s step `commit` ([`Journal::tip_step`]).
    pub(crate) fn tree_of_step(&self, id: &SessionId, commit: ObjectId) -> Result<ObjectId, Error> {
        Ok(self.read_tip(id.as_str(), commit)?.tree)
    }

    /// The step session `id`'s ref names, if the session exists.
    fn tip_commit(&self, id: &SessionId) -> Result<Option<ObjectId>, Error> {
        let name = session_ref(id);
        match self.store.tip(&name)? {
            Some(commit) => Ok(Some(commit)),
            // A session whose ref is gone while its reflog is not lost it to a power cut: never
            // "a new session that tracks nothing". A dropped session loses both.
            None if self.store.has_reflog(&name) => Err(Error::LostRef { id: id.clone() }),
            None => Ok(None),
        }
    }

    fn read_tip(&self, id: &str, commit: ObjectId) -> Result<Tip, Error> {
        let mut buf = Vec::new();
        let decoded = self.read_commit(&commit, &mut buf)?;
        let message = decoded.message.to_str_lossy().into_owned();
        let trailer = |key: &str| {
            message
                .lines()
                .rev()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        let (Some(steps), Some(tracked)) = (trailer("Stella-Step:"), trailer("Stella-Tracked:"))
        else {
            return Err(Error::Corrupt {
                id: id.to_owned(),
                why: format!("step {commit} has no Stella-Step/Stella-Tracked trailers"),
            });
        };
        Ok(Tip {
            commit,
            tree: decoded.tree(),
            steps,
            tracked,
            time: Self::entry(&commit, decoded.committer())?
                .time()
                .unwrap_or_default(),
            summary: message.lines().next().unwrap_or_default().to_owned(),
        })
    }

    /// Step `commit` of session `session` read whole, for a repair: the commit and its trailers,
    /// and every object its tree reaches, read and parsed (`verified` holds the objects already
    /// found whole, shared across steps, so a walk back over many steps reads each object once).
    /// `Ok(Err(damage))` when something is missing or does not parse; `Err` when the store could
    /// not be read at all, which says nothing about the step.
    pub fn read_whole(
        &self,
        session: &str,
        commit: ObjectId,
        verified: &mut std::collections::HashSet<ObjectId>,
    ) -> Result<Result<Tip, Error>, Error> {
        let checked = self
            .read_tip(session, commit)
            .and_then(|tip| self.check_tree(tip.tree, verified).map(|()| tip));
        match checked {
            Err(e) if e.is_damage() => Ok(Err(e)),
            other => other.map(Ok),
        }
    }

    /// What step `commit` says of itself (its number and summary), read without its tree.
    pub(crate) fn step_of(&self, commit: ObjectId) -> Result<Tip, Error> {
        self.read_tip("", commit)
    }

    /// The first parent of step `commit`.
    pub(crate) fn parent_of(&self, commit: ObjectId) -> Result<Option<ObjectId>, Error> {
        let mut buf = Vec::new();
        Ok(self.read_commit(&commit, &mut buf)?.parents().next())
    }

    /// Read every object tree `id` reaches, as git's own walks do (a gitlink names a commit the
    /// store never holds).
    fn check_tree(
        &self,
        id: ObjectId,
        verified: &mut std::collections::HashSet<ObjectId>,
    ) -> Result<(), Error> {
        if verified.contains(&id) {
            return Ok(());
        }
        let mut buf = Vec::new();
        let mut entries = Vec::new();
        for e in self.read_tree(&id, &mut buf)? {
            let e = Self::entry(&id, e)?;
            entries.push((e.oid.to_owned(), e.mode));
        }
        for (oid, mode) in entries {
            if mode.is_commit() || verified.contains(&oid) {
                continue;
            }
            if mode.is_tree() {
                self.check_tree(oid, verified)?;
            } else {
                // Read through to its end (a large blob streams, never held): one that does not
                // read whole is damage, as any object that does not read.
                let mut blob = self.blob_reader(oid)?;
                std::io::copy(&mut blob, &mut std::io::sink()).map_err(|e| Error::Damaged {
                    object: oid,
                    source: Box::new(gix::Error::from_error(e)),
                })?;
                verified.insert(oid);
            }
        }
        verified.insert(id);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_cache_keeps_what_is_read_again_and_lets_the_rest_go() {
        let id = |n: u32| {
            let mut bytes = [0u8; 20];
            bytes[..4].copy_from_slice(&n.to_be_bytes());
            ObjectId::from_bytes_or_panic(&bytes)
        };
        let tree = vec![7u8; 1000];
        let mut cache = TreeCache::default();
        let mut buf = Vec::new();
        cache.insert(id(0), tree.clone());
        // Ten generations' worth of trees read once, the first one read again between them.
        let many = 10 * TREE_GENERATION_BYTES / (tree.len() + TREE_COST);
        for n in 1..=many as u32 {
            cache.insert(id(n), tree.clone());
            if n % 100 == 0 {
                assert!(cache.get(&id(0), &mut buf), "lost after {n} trees");
            }
        }
        assert_eq!(buf, tree);
        let held: usize = [&cache.newest, &cache.older]
            .iter()
            .flat_map(|g| g.values())
            .map(|t| t.len() + TREE_COST)
            .sum();
        assert!(held <= 2 * TREE_GENERATION_BYTES, "holds {held} bytes");
        assert!(
            !cache.get(&id(1), &mut buf),
            "a tree read once long ago is kept"
        );
        // Too big for a generation: not kept, and nothing else is let go for it.
        let before = cache.newest.len();
        cache.insert(id(u32::MAX), vec![0; TREE_GENERATION_BYTES]);
        assert!(!cache.get(&id(u32::MAX), &mut buf));
        assert_eq!(cache.newest.len(), before);
    }

    #[test]
    fn state_round_trips() {
        let d = Digest::of(b"x");
        for (seen, origin, wrote) in [
            (Seen::Digest(d), Some(d), None),
            (Seen::Reread, None, Some(7)),
            (Seen::Digest(d), None, Some(1_800_000_000)),
        ] {
            assert_eq!(
                parse_state(state_text(seen, origin, wrote).as_bytes()),
                Some((seen, origin, wrote))
            );
        }
        assert_eq!(parse_state(b"garbage"), None);
    }

    #[test]
    fn entry_dirs_shard_by_path_hash_and_never_nest() {
        let a = entry_dir(&RelPath::from_bytes(b"a").unwrap());
        let ab = entry_dir(&RelPath::from_bytes(b"a/b").unwrap());
        assert_eq!(a.len(), "map/xx/yy/".len() + 64);
        assert!(!ab.starts_with(&a));
    }
}
