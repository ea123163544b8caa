//! The session journal: one ref per session in the store, one commit per step.
//!
//! The step commit's tree is internal and may change freely (only the checkpoint's tip tree is a
//! versioned format). Its top-level files are typed in [`layout`]; the map is:
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

pub mod layout;
mod writers;

pub use layout::{Provenance, RootFile, overwritten_dir};

/// Where sessions live in the store.
pub const SESSIONS: &str = "refs/stella/sessions/";

/// Where dropped sessions wait, until gc expires them: `<DROPPED><id>/<Unix second dropped>`,
/// with `.N` after it for the Nth more drop of that id in the same second.
pub const DROPPED: &str = "refs/stella/dropped/";

/// What [`Journal::drop_session`] did with the session's journal.
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
pub type MapChange = (Option<Entry>, Option<Entry>);

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
    /// The session may have known the path before its memory of it was lost ([`Forgot`]): the
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
pub enum Forgot {
    /// Everything: the session's journal was gone, so any path may be one it knew.
    All,
    /// These paths: the steps a repair dropped touched them.
    Paths(std::collections::BTreeSet<RelPath>),
}

impl Forgot {
    /// Its bytes in the step tree: `*`, or the paths each ended by a NUL.
    pub fn encode(&self) -> Vec<u8> {
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
    pub fn decode(bytes: &[u8]) -> Forgot {
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
    pub fn covers(&self, path: &RelPath) -> bool {
        match self {
            Forgot::All => true,
            Forgot::Paths(paths) => paths.contains(path),
        }
    }

    /// Both together.
    pub fn union(self, other: Forgot) -> Forgot {
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
    pub origin_bytes: Option<ObjectId>,
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
pub struct Step {
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
    /// That step's tree: the staleness map and the top-level files of [`layout`].
    pub tree: ObjectId,
    /// How many steps the session has recorded (the step's `Stella-Step` trailer).
    pub steps: u64,
    /// How many paths the map tracks after that step (its `Stella-Tracked` trailer).
    pub tracked: u64,
    /// When that step was recorded: its commit's committer time.
    pub time: gix::date::Time,
    /// That step's summary, as [`Step::summary`] holds it: `read src/a.rs`.
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

/// The hex BLAKE3 of a path: its entry name in the map.
fn path_key(path: &RelPath) -> String {
    Digest::of(path.as_bytes()).to_hex()
}

/// The name of `path`'s entry folder in a map tree, as [`Journal::map_changed_keys`] gives it.
pub fn map_key(path: &RelPath) -> Vec<u8> {
    path_key(path).into_bytes()
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

/// The entry folder of `path` inside the step tree.
fn entry_dir(path: &RelPath) -> String {
    let h = path_key(path);
    format!("map/{}/{}/{}", &h[0..2], &h[2..4], h)
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

/// A step whose objects are written, waiting for [`Journal::commit`].
#[derive(Clone, Copy, Debug)]
pub struct Prepared {
    parent: ObjectId,
    commit: ObjectId,
}

/// Objects written in memory for one step (see [`Journal::batch`]).
pub struct Batch {
    repo: gix::Repository,
}

impl Batch {
    /// Store what is in memory as one pack, and start over empty.
    fn flush(&mut self, store: &Store) -> Result<(), Error> {
        let objects = self.repo.objects.take_object_memory().unwrap_or_default();
        self.repo.objects.enable_object_memory();
        if objects.is_empty() {
            return Ok(());
        }
        Ok(store.write_pack(
            objects
                .iter()
                .map(|(_, (kind, data))| (*kind, data.as_slice())),
        )?)
    }
}

/// A session's journal in one store.
pub struct Journal<'s> {
    pub(crate) store: &'s Store,
    /// Trees read so far, whole: the map's fan-out trees are shared by every lookup, and a step
    /// or a command under the shell guard looks up thousands of paths.
    trees: std::cell::RefCell<TreeCache>,
    /// The `forgot` file of the last step tree asked about.
    forgot: std::cell::RefCell<Option<(ObjectId, Option<std::rc::Rc<Forgot>>)>>,
}

/// Trees by id, up to a bound on the bytes held.
#[derive(Default)]
struct TreeCache {
    trees: std::collections::HashMap<ObjectId, Vec<u8>>,
    bytes: usize,
}

/// What [`TreeCache`] holds at most.
const TREE_CACHE_BYTES: usize = 64 << 20;

impl<'s> Journal<'s> {
    /// The journals of the sessions in `store`, with nothing read yet.
    pub fn new(store: &'s Store) -> Self {
        Journal {
            store,
            trees: Default::default(),
            forgot: Default::default(),
        }
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
        self.object(
            op,
            id,
            find(self.store.objects()).map_err(gix::Error::from_error),
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

    /// Tree `id`'s bytes into `buf`, from the cache when it was read before.
    fn cached_tree(&self, id: &ObjectId, buf: &mut Vec<u8>) -> Result<(), Error> {
        if let Some(data) = self.trees.borrow().trees.get(id) {
            buf.clear();
            buf.extend_from_slice(data);
            return Ok(());
        }
        self.read_tree(id, buf)?;
        let mut cache = self.trees.borrow_mut();
        if cache.bytes + buf.len() <= TREE_CACHE_BYTES {
            cache.bytes += buf.len();
            cache.trees.insert(*id, buf.clone());
        }
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
    pub fn try_tip(&self, id: &SessionId) -> Result<Option<Tip>, Error> {
        match self.tip_commit(id)? {
            Some(commit) => self.read_tip(id.as_str(), commit).map(Some),
            None => Ok(None),
        }
    }

    /// Whether session `id` exists, from its ref alone: [`Journal::try_tip`] without reading
    /// the step it names.
    pub fn has_session(&self, id: &SessionId) -> Result<bool, Error> {
        Ok(self.tip_commit(id)?.is_some())
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
    pub fn step_of(&self, commit: ObjectId) -> Result<Tip, Error> {
        self.read_tip("", commit)
    }

    /// The first parent of step `commit`.
    pub fn parent_of(&self, commit: ObjectId) -> Result<Option<ObjectId>, Error> {
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

    /// Start session `id` with `session_toml` as its metadata, on top of `parent` (an artifact's
    /// tip when replaying) or as a new history. `step`'s edits land in the same first commit, so a
    /// replayed session is guarded from its first step on.
    pub fn start(
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
            self.sync_step(commit, tree, None)?;
            Ok(commit)
        })?;
        self.tip(id)
    }

    /// Store `bytes` as a blob.
    ///
    /// A blob the store holds already is trusted only once it reads back whole: after a power
    /// cut its name can be on disk without its bytes (see [`Store::remove_leftover`]), and gix
    /// would take that file for the blob and write nothing.
    pub fn write_blob(&self, bytes: &[u8]) -> Result<ObjectId, Error> {
        use gix::objs::Write;
        let repo = self.repo()?;
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
    pub fn write_blob_stream(
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
    pub fn lease(&self, id: &SessionId) -> Result<std::fs::File, Error> {
        Ok(self.store.lease(id.as_str())?)
    }

    /// Whether a live process holds a lease on session `id`.
    pub fn leased(&self, id: &SessionId) -> bool {
        self.store.leased(id.as_str())
    }

    /// Record one step: all of its edits land in one commit, or none do.
    pub fn record(&self, id: &SessionId, step: &Step) -> Result<Tip, Error> {
        self.record_in(id, step, None)
    }

    /// Objects for one large step, kept in memory until [`Journal::record_batch`] stores them
    /// all as one pack.
    pub fn batch(&self) -> Result<Batch, Error> {
        let mut repo = self.repo()?.clone();
        repo.objects.enable_object_memory();
        Ok(Batch { repo })
    }

    /// Keep `bytes` as a blob of the step `batch` will record.
    pub fn write_blob_in(&self, batch: &Batch, bytes: &[u8]) -> Result<ObjectId, Error> {
        Ok(self
            .git("write a blob", batch.repo.write_blob(bytes))?
            .detach())
    }

    /// Record one step whose objects (and the blobs written into `batch` before) are stored as
    /// one pack rather than one file each.
    pub fn record_batch(
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
                b.flush(self.store)?;
                // gix writes nothing for an object the store holds already, so the pack lacks
                // those: loose files an earlier process left, maybe never synced, maybe broken
                // by a crash. They are checked and synced as a step written loose has them.
                let (new, old) = (self.tree_of(commit)?, self.tree_of(tip)?);
                match self.sync_step(commit, new, Some(old)) {
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
    pub fn prepare(&self, id: &SessionId, step: &Step) -> Result<Prepared, Error> {
        let tip = self
            .store
            .tip(&session_ref(id))?
            .ok_or_else(|| Error::UnknownSession { id: id.clone() })?;
        let commit = self.build(self.repo()?, id, tip, step, None)?;
        Ok(Prepared {
            parent: tip,
            commit,
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
    /// the session landed in between.
    pub fn commit(&self, id: &SessionId, step: &Step, prepared: Prepared) -> Result<Tip, Error> {
        let name = session_ref(id);
        let new = self
            .store
            .update_ref(&name, &step.summary, |repo, tip| match tip {
                None => Err(Error::UnknownSession { id: id.clone() }),
                Some(tip) if tip == prepared.parent => Ok(prepared.commit),
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
            self.sync_step(commit, new_tree, Some(current.tree))?;
        }
        Ok(commit)
    }

    /// Sync what step `commit` added to the store (the commit, the trees that changed and the
    /// blobs they now name) before the session's ref is moved to it.
    fn sync_step(
        &self,
        commit: ObjectId,
        new: ObjectId,
        old: Option<ObjectId>,
    ) -> Result<(), Error> {
        let mut ids = vec![commit];
        match self.new_objects(new, old, &mut ids) {
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
        Ok(self.store.sync_objects(&ids)?)
    }

    /// The objects of tree `new` that `old` does not hold at the same place.
    fn new_objects(
        &self,
        new: ObjectId,
        old: Option<ObjectId>,
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
        self.cached_tree(&new, &mut buf)?;
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
                self.new_objects(id, was, out)?;
            } else {
                out.push(id);
            }
        }
        Ok(())
    }

    /// Apply `step`'s edits to `editor` (a tree editor over `tree`, `None` for the empty tree),
    /// returning the new count of tracked paths.
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
        for edit in &step.map {
            match edit {
                MapEdit::Put {
                    path,
                    seen,
                    bytes,
                    first_origin,
                    wrote,
                    origin_bytes,
                } => {
                    let dir = entry_dir(path);
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
                    let ed = |r: Result<_, gix::Error>| self.git("edit a tree", r).map(|_| ());
                    ed(editor
                        .upsert(format!("{dir}/path"), EntryKind::Blob, path_blob)
                        .map(|_| ()))?;
                    ed(editor
                        .upsert(format!("{dir}/state"), EntryKind::Blob, state)
                        .map(|_| ()))?;
                    if existing.is_none()
                        && let Some(blob) = origin_bytes
                    {
                        ed(editor
                            .upsert(format!("{dir}/origin"), EntryKind::Blob, *blob)
                            .map(|_| ()))?;
                    }
                    match bytes {
                        Some((blob, exec)) => {
                            let kind = if *exec {
                                EntryKind::BlobExecutable
                            } else {
                                EntryKind::Blob
                            };
                            ed(editor
                                .upsert(format!("{dir}/seen"), kind, *blob)
                                .map(|_| ()))?;
                        }
                        None => ed(editor.remove(format!("{dir}/seen")).map(|_| ()))?,
                    }
                    states.insert(path.clone(), Some((*seen, origin, wrote_at)));
                }
                MapEdit::Remove { path } => {
                    if state_of(&states, path)?.is_some() {
                        tracked -= 1;
                        self.git("edit a tree", editor.remove(entry_dir(path)))?;
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
                        Some(_) if states.contains_key(from) => {
                            let dir = entry_dir(from);
                            ENTRY_FILES
                                .iter()
                                .filter_map(|name| {
                                    editor
                                        .get(format!("{dir}/{name}"))
                                        .map(|e| (*name, e.kind(), e.oid().to_owned()))
                                })
                                .collect()
                        }
                        Some(_) => self.entry_files(tree.expect("a tracked source"), from)?,
                    };
                    if state_of(&states, to)?.is_some() {
                        tracked -= 1;
                        self.git("edit a tree", editor.remove(entry_dir(to)))?;
                    }
                    states.insert(to.clone(), source);
                    let Some(_) = source else {
                        continue;
                    };
                    let dir = entry_dir(to);
                    let ed = |r: Result<_, gix::Error>| self.git("edit a tree", r).map(|_| ());
                    let path_blob = self.git("write a blob", repo.write_blob(to.as_bytes()))?;
                    ed(editor
                        .upsert(format!("{dir}/path"), EntryKind::Blob, path_blob)
                        .map(|_| ()))?;
                    let mut moved = false;
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
                        ed(editor
                            .upsert(format!("{dir}/{name}"), kind, oid)
                            .map(|_| ()))?;
                    }
                    // A chain of renames keeps the first source: undo moves the file back there.
                    if !moved {
                        let from_blob =
                            self.git("write a blob", repo.write_blob(from.as_bytes()))?;
                        ed(editor
                            .upsert(format!("{dir}/moved"), EntryKind::Blob, from_blob)
                            .map(|_| ()))?;
                    }
                    self.git("edit a tree", editor.remove(entry_dir(from)))?;
                    states.insert(from.clone(), None);
                }
            }
        }
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

    /// The entry for `path` in the session's current map.
    pub fn lookup(&self, id: &SessionId, path: &RelPath) -> Result<Option<Entry>, Error> {
        self.lookup_at(self.tip(id)?.tree, path)
    }

    /// The entry for `path` in the map of one step's tree (a [`Tip::tree`]).
    ///
    /// A path the map does not hold but the session may have known before its memory of it was
    /// lost ([`Forgot`]) is [`Seen::Forgotten`].
    pub fn lookup_at(&self, tree: ObjectId, path: &RelPath) -> Result<Option<Entry>, Error> {
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
    pub fn forgot_at(&self, tree: ObjectId) -> Result<Option<std::rc::Rc<Forgot>>, Error> {
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
    pub fn seen_at(&self, tree: ObjectId, path: &RelPath) -> Result<Option<(Seen, bool)>, Error> {
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
    fn state_at(&self, tree: ObjectId, path: &RelPath) -> Result<Option<State>, Error> {
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
    fn entry_files(
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
        let Some(map) = self.tree_entry(&tree, "map")? else {
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
    pub fn dropped_entries(&self, id: &SessionId) -> Result<Vec<Entry>, Error> {
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
    pub fn map_of(&self, commit: ObjectId) -> Result<Option<ObjectId>, Error> {
        self.map_in(self.tree_of(commit)?)
    }

    /// The map tree of step tree `tree` (`None`: the step tracks nothing).
    pub fn map_in(&self, tree: ObjectId) -> Result<Option<ObjectId>, Error> {
        Ok(self.tree_entry(&tree, "map")?.map(|e| e.oid))
    }

    /// The entries that differ between two map trees, as (before, after) pairs: an entry added
    /// is `(None, Some)`, dropped `(Some, None)`, changed `(Some, Some)`. Only the subtrees that
    /// differ are read, so a step's changes cost what the step changed.
    pub fn map_changes(
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

    /// The keys ([`map_key`]) of the entries that differ between two map trees, without reading
    /// the entries themselves.
    pub fn map_changed_keys(
        &self,
        before: Option<ObjectId>,
        after: Option<ObjectId>,
    ) -> Result<std::collections::HashSet<Vec<u8>>, Error> {
        let mut out = std::collections::HashSet::new();
        self.map_diff(before, after, |key, _, _| {
            out.insert(key.to_vec());
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
    pub fn root_toml<T: for<'de> serde::Deserialize<'de>>(
        &self,
        id: &SessionId,
        file: &RootFile,
    ) -> Result<Option<T>, Error> {
        Ok(self.root_file(id, file)?.and_then(|b| layout::parse(&b)))
    }

    /// The edit that puts `value` as the TOML file `file`.
    pub fn toml_edit<T: serde::Serialize>(
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
    pub fn root_file_id(&self, tree: ObjectId, file: &RootFile) -> Result<Option<ObjectId>, Error> {
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

    /// The bytes of a blob as a reader: held whole up to [`store::STREAM_FROM`], streamed
    /// beyond (see [`store::blob_stream`]).
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
    pub fn blob_digest(&self, id: ObjectId) -> Result<Digest, Error> {
        Digest::of_reader(self.blob_reader(id)?).map_err(|e| self.blob_io(e))
    }

    /// A blob that could not be read from the store.
    pub fn blob_io(&self, source: std::io::Error) -> Error {
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
        let blob = self.object(
            "read a blob",
            &id,
            self.store
                .objects()
                .find_blob(&id, &mut buf)
                .map_err(gix::Error::from_error),
        )?;
        Ok(blob.data.to_vec())
    }

    /// The tree of step `commit`.
    pub fn tree_of(&self, commit: ObjectId) -> Result<ObjectId, Error> {
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
    pub fn versions_in(
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

    /// Every session in the store with its tip, sorted by id.
    pub fn sessions(&self) -> Result<Vec<(SessionId, Tip)>, Error> {
        self.sessions_where(|_| true)
    }

    /// The sessions that recorded a step from Unix second `since` on: their ref's file changed
    /// then (a ref packed away has not moved since it was packed). One `stat` per session; only
    /// those read their tip.
    pub fn sessions_moved_since(&self, since: i64) -> Result<Vec<(SessionId, Tip)>, Error> {
        let refs = self.store.dir().to_owned();
        self.sessions_where(|name| {
            std::fs::metadata(refs.join(name))
                .is_ok_and(|m| std::os::unix::fs::MetadataExt::mtime(&m) >= since)
        })
    }

    fn sessions_where(&self, keep: impl Fn(&str) -> bool) -> Result<Vec<(SessionId, Tip)>, Error> {
        let mut out = Vec::new();
        for (name, commit) in self.store.refs(SESSIONS)? {
            let Some(id) = name
                .strip_prefix(SESSIONS)
                .and_then(|s| SessionId::parse(s).ok())
            else {
                continue;
            };
            if !keep(&name) {
                continue;
            }
            let tip = self.read_tip(id.as_str(), commit)?;
            out.push((id, tip));
        }
        Ok(out)
    }

    /// The session's steps, newest first: (commit, time, summary).
    pub fn history(
        &self,
        id: &SessionId,
    ) -> Result<Vec<(ObjectId, gix::date::Time, String)>, Error> {
        let mut out = Vec::new();
        self.walk_steps(id, |commit, time, d| {
            let summary = d.message.lines().next().unwrap_or_default();
            out.push((commit, time, summary.to_str_lossy().into_owned()));
            Ok(true)
        })?;
        Ok(out)
    }

    /// The bytes session `id` wrote at `path` in its steps from Unix second `since` on, newest
    /// first, with when each was written: only those steps are read.
    pub fn written_since(
        &self,
        id: &SessionId,
        path: &RelPath,
        since: i64,
    ) -> Result<Vec<(Digest, i64)>, Error> {
        let mut out: Vec<(Digest, i64)> = Vec::new();
        self.walk_steps(id, |_, time, d| {
            if time.seconds < since {
                return Ok(false);
            }
            if let Some(Entry {
                seen: Seen::Digest(digest),
                wrote: Some(at),
                ..
            }) = self.lookup_at(d.tree(), path)?
                && at >= since
                && !out.iter().any(|(d, _)| *d == digest)
            {
                out.push((digest, at));
            }
            Ok(true)
        })?;
        Ok(out)
    }

    /// Call `each` on the session's steps, newest first, with each step's time, until it says
    /// to stop (`false`).
    fn walk_steps(
        &self,
        id: &SessionId,
        mut each: impl FnMut(ObjectId, gix::date::Time, &CommitRef<'_>) -> Result<bool, Error>,
    ) -> Result<(), Error> {
        let mut next = Some(self.tip(id)?.commit);
        let mut buf = Vec::new();
        while let Some(commit) = next {
            let d = self.read_commit(&commit, &mut buf)?;
            let time = d
                .committer()
                .ok()
                .and_then(|s| s.time().ok())
                .unwrap_or_default();
            if !each(commit, time, &d)? {
                break;
            }
            next = d.parents().next();
        }
        Ok(())
    }

    /// Delete the session's ref and reflog.
    pub fn drop_session(&self, id: &SessionId) -> Result<DropOutcome, Error> {
        // A damaged journal is removed, not set aside: nothing whole could come back, and
        // git's gc stops at a ref whose objects are missing.
        if !self.store.is_whole(&session_ref(id))? {
            return if self.store.delete_ref(&session_ref(id))? {
                Ok(DropOutcome::Removed)
            } else {
                Err(Error::UnknownSession { id: id.clone() })
            };
        }
        let now = gix::date::Time::now_utc().seconds;
        // Dropped twice in one second (started again in between): the next number.
        let taken: Vec<String> = self
            .store
            .refs(DROPPED)?
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        let mut to = format!("{DROPPED}{id}/{now}");
        let mut nth = 1;
        while taken.contains(&to) {
            to = format!("{DROPPED}{id}/{now}.{nth}");
            nth += 1;
        }
        if self
            .store
            .rename_ref(&session_ref(id), &to, &format!("session drop {id}"))?
        {
            Ok(DropOutcome::Kept)
        } else {
            Err(Error::UnknownSession { id: id.clone() })
        }
    }

    /// Every dropped session still kept, newest drop first.
    pub fn dropped(&self) -> Result<Vec<Dropped>, Error> {
        let mut out = Vec::new();
        for (name, commit) in self.store.refs(DROPPED)? {
            let Some((id, at, nth)) = name
                .strip_prefix(DROPPED)
                .and_then(|rest| rest.rsplit_once('/'))
                .and_then(|(id, when)| {
                    let (at, nth) = when.split_once('.').unwrap_or((when, "0"));
                    Some((
                        SessionId::parse(id).ok()?,
                        at.parse().ok()?,
                        nth.parse().ok()?,
                    ))
                })
            else {
                continue;
            };
            let tip = self.read_tip(id.as_str(), commit)?;
            out.push(Dropped {
                id,
                at,
                nth,
                tip,
                ref_name: name,
            });
        }
        out.sort_by(|a, b| (b.at, b.nth).cmp(&(a.at, a.nth)).then(a.id.cmp(&b.id)));
        Ok(out)
    }

    /// Bring back the last drop of session `id`, as it was when dropped.
    pub fn undrop(&self, id: &SessionId) -> Result<Dropped, Error> {
        if self.try_tip(id)?.is_some() {
            return Err(Error::SessionExists { id: id.clone() });
        }
        let Some(last) = self.dropped()?.into_iter().find(|d| &d.id == id) else {
            return Err(Error::NotDropped { id: id.clone() });
        };
        if !self.store.rename_ref(
            &last.ref_name,
            &session_ref(id),
            &format!("session undrop {id}"),
        )? {
            return Err(Error::NotDropped { id: id.clone() });
        }
        Ok(last)
    }

    /// Forget for good the sessions dropped at Unix second `until` or before (with `dry_run`,
    /// only name them): their steps become unreachable, for `git gc` to prune.
    pub fn expire_dropped(&self, until: i64, dry_run: bool) -> Result<Vec<Dropped>, Error> {
        let old: Vec<Dropped> = self
            .dropped()?
            .into_iter()
            .filter(|d| d.at <= until)
            .collect();
        if !dry_run {
            for d in &old {
                self.store.delete_ref(&d.ref_name)?;
            }
        }
        Ok(old)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
