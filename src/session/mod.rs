//! What a session does: the operations behind `read`, `wrote`, `guard`, `write`, `rm` and
//! `status`, on one open workspace and its store.
//!
//! A [`Context`] is one open workspace and its journal store (both the crate's own: callers use
//! its accessors); a [`Session`] is the handle of one session in it, which every operation on a
//! session is called on (`context.session(&id).read(&paths)`): the turn, undo and checkpoint
//! operations in their own modules too: [`turn`], [`undo`] and [`checkpoint`] (the artifact it
//! writes is [`crate::artifact`]), as is [`replay`], which starts a session from an artifact.

pub mod checkpoint;
pub mod record;
pub mod replay;
pub mod turn;
pub mod undo;

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::digest::Digest;
use crate::fsutil::Removed;
use crate::guard::{self, Check, Disk, Intent};
use crate::ids::SessionId;
use crate::journal::{self, Journal, MapEdit, RootEdit, Seen, Step, Tip};
use crate::paths::{self, Named, RelPath};
use crate::store::{self, Store};
use crate::text::format_time;
use crate::workspace::{self, Notice, Settings, Workspace};
use record::{Replaced, Sight, Version};

/// The largest file whose bytes a blind first write keeps for `undo` (the digest is always kept):
/// a bound on what the store keeps, not on memory, since a large one streams into the store.
const ORIGIN_KEEP_MAX: u64 = 64 << 20;

/// The largest file a read holds in memory whole; larger ones stream into the store, hashed on
/// the way, so a read's memory stays within a fixed budget whatever the size.
/// The same size as blobs stream out of the store from.
pub(crate) const WHOLE_READ_MAX: u64 = store::STREAM_FROM;

/// From how many small files on a read step their blobs go into a pack (see [`Session::read`]).
const PACK_FROM: usize = 16;

/// How many times a large file is streamed before a read gives up on a file that keeps
/// changing size.
const CHANGED_RETRIES: u32 = 3;

/// The error returned by [`Context`] operations.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The workspace could not be found or opened.
    #[error(transparent)]
    Workspace(#[from] workspace::Error),
    /// The store could not be opened, read or written.
    #[error(transparent)]
    Store(#[from] store::Error),
    /// The session's journal could not be read or written.
    #[error(transparent)]
    Journal(#[from] journal::Error),
    /// A path named by the caller does not resolve beneath the workspace.
    #[error(transparent)]
    Path(#[from] paths::Error),
    /// A read could not read these paths (each with why); nothing was recorded.
    #[error("could not read {}", list(.0.iter().map(|(p, _)| p)))]
    Unreadable(Vec<(RelPath, io::Error)>),
    /// The tree changed, but the step could not be recorded: the session will see its own
    /// change as someone else's until it reads the path again.
    #[error("{done}, but could not record it in the session; read it again before the next change")]
    Unrecorded {
        /// What was done to the tree: `wrote 'src/a.rs'`.
        done: String,
        /// Why the step could not be recorded.
        #[source]
        source: journal::Error,
    },
    /// A file of the workspace could not be read, written, deleted or kept.
    #[error("could not {op} '{path}'")]
    Io {
        /// What failed: `read`, `write`, `delete` or `keep`.
        op: &'static str,
        /// The file it failed on.
        path: RelPath,
        /// The I/O error that stopped it.
        #[source]
        source: io::Error,
    },
    /// The store was found damaged and repaired (or found past repair): the command did
    /// nothing else.
    #[error(transparent)]
    Repair(#[from] crate::repair::Error),
    /// Stella's configuration is invalid (`crate::config::check`): nothing was written.
    #[error(
        "Stella's configuration is invalid, so every write is refused until it is fixed; nothing was written"
    )]
    Config(#[from] crate::config::Error),
}

impl Error {
    /// The damage this error reports (see [`journal::Error::is_damage`]), if it is one.
    fn into_damage(self) -> Result<journal::Error, Error> {
        match self {
            Error::Journal(e) if e.is_damage() => Ok(e),
            Error::Store(e @ store::Error::DamagedRef { .. }) => Ok(journal::Error::Store(e)),
            other => Err(other),
        }
    }

    /// Whether this says a damaged session was repaired and now stands whole: the call that
    /// found the damage may be made again on it.
    pub(crate) fn repaired_whole(&self) -> bool {
        matches!(
            self,
            Error::Repair(r @ crate::repair::Error::Repaired { .. }) if r.unrepairable().is_none()
        )
    }

    /// Whether this reports damage that [`Context::repair_on_damage`] would repair.
    pub fn is_damage(&self) -> bool {
        match self {
            Error::Journal(e) => e.is_damage(),
            Error::Store(e) => matches!(e, store::Error::DamagedRef { .. }),
            _ => false,
        }
    }
}

/// The error returned by the operations that write or read an artifact ([`Session::checkpoint`],
/// [`Context::replay`]): the artifact's own, or the session's.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    /// The artifact could not be written, read or trusted.
    #[error(transparent)]
    Artifact(#[from] crate::artifact::Error),
    /// The session's side failed: its journal, its store, or its workspace.
    #[error(transparent)]
    Session(#[from] Error),
}

impl From<io::Error> for ArtifactError {
    fn from(e: io::Error) -> Self {
        ArtifactError::Artifact(e.into())
    }
}

impl From<store::Error> for ArtifactError {
    fn from(e: store::Error) -> Self {
        ArtifactError::Session(e.into())
    }
}

impl From<journal::Error> for ArtifactError {
    fn from(e: journal::Error) -> Self {
        ArtifactError::Session(e.into())
    }
}

fn list<'a>(paths: impl Iterator<Item = &'a RelPath>) -> String {
    paths
        .map(|p| format!("'{p}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One workspace with its store open.
pub struct Context {
    pub(crate) ws: Workspace,
    pub(crate) store: Store,
}

/// One session of a workspace: every operation on a session is called on its handle
/// ([`Context::session`]), which carries the session's id.
#[derive(Clone, Copy)]
pub struct Session<'c> {
    pub(crate) ctx: &'c Context,
    pub(crate) id: &'c SessionId,
}

impl<'c> Session<'c> {
    /// The session's id.
    pub fn id(&self) -> &'c SessionId {
        self.id
    }

    /// What the session's `session.toml` says: when it started and the replays it descends
    /// from; empty for a session that has none.
    pub fn metadata(&self) -> Result<journal::SessionFile, Error> {
        let file = self
            .ctx
            .journal()
            .root_toml(self.id, &journal::RootFile::Session)?;
        Ok(file.unwrap_or_default())
    }

    /// The workspace it belongs to.
    #[cfg(test)]
    pub(crate) fn context(&self) -> &'c Context {
        self.ctx
    }
}

/// What a `wrote --content` found: the disk already differs from what the caller meant to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotAbsorbed {
    /// The path whose bytes on disk are not what the caller meant to write.
    pub path: RelPath,
}

/// The state of one tracked path, for `status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Freshness {
    /// The bytes on disk are the ones the session last saw.
    Fresh,
    /// The bytes on disk differ from what the session last saw, or it must read them again.
    Changed,
    /// The path is gone from disk.
    Gone,
    /// The path is there but could not be read.
    Unreadable,
}

impl Freshness {
    /// As `status` shows it: `unchanged`, `changed`, `deleted` or `unreadable`.
    pub fn as_str(self) -> &'static str {
        match self {
            Freshness::Fresh => "unchanged",
            Freshness::Changed => "changed",
            Freshness::Gone => "deleted",
            Freshness::Unreadable => "unreadable",
        }
    }
}

/// The outcome of a guarded write or delete.
#[derive(Debug)]
pub enum Outcome {
    /// Done; with the bytes a blind change replaced that were kept first ([`crate::keep`]).
    Done(Tip, Vec<crate::keep::Kept>),
    /// Refused, nothing written: the checks that refused it, each naming its path and why.
    Refused(Vec<Check>),
}

impl Context {
    /// Find the workspace around `cwd`, initialise it if needed, and open its store.
    pub fn open(settings: &Settings, cwd: &Path) -> Result<(Context, Vec<Notice>), Error> {
        let _span = tracing::debug_span!("open_workspace").entered();
        let root = workspace::discover_root(settings, cwd)?;
        let (ws, notices) = Workspace::open(settings, root)?;
        let store = Store::open_or_init(&ws.store_dir())?;
        Ok((Context { ws, store }, notices))
    }

    /// The journals of the workspace's sessions.
    pub fn journal(&self) -> Journal<'_> {
        Journal::new(&self.store)
    }

    /// When `e` says the store is damaged, repair it ([`crate::repair`]) and return the error
    /// that says what was lost; any other error comes back as it is. Every front end calls this
    /// on the error of a command, `session` being the session the command acted on.
    pub fn repair_on_damage(&self, session: Option<&SessionId>, e: Error) -> Error {
        match e.into_damage() {
            Ok(damage) => crate::repair::on_damage(&self.journal(), session, damage).into(),
            Err(e) => e,
        }
    }

    /// Resolve a path given on the command line (relative to `cwd`, or absolute).
    pub fn resolve(&self, cwd: &Path, path: &Path) -> Result<RelPath, Error> {
        Ok(paths::resolve_public(&self.ws.root, cwd, path)?)
    }

    /// [`Context::resolve`], keeping the symbolic link the caller named.
    pub fn resolve_named(&self, cwd: &Path, path: &Path) -> Result<Named, Error> {
        Ok(paths::resolve_named(&self.ws.root, cwd, path)?)
    }

    /// The project's configuration, checked whole before any write Stella makes or allows
    /// ([`crate::config::check`]): an invalid one refuses every write at every entry point.
    pub(crate) fn config(&self) -> Result<crate::config::Config, Error> {
        Ok(crate::config::check(&self.ws)?)
    }

    /// The handle of session `id` in this workspace.
    pub fn session<'c>(&'c self, id: &'c SessionId) -> Session<'c> {
        Session { ctx: self, id }
    }

    /// The workspace root.
    pub fn root(&self) -> &Path {
        &self.ws.root
    }

    /// The workspace: its root, id and private folder.
    pub fn workspace(&self) -> &Workspace {
        &self.ws
    }

    /// The journal store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Where `path` is on disk: beneath the workspace root.
    pub fn abs(&self, path: &RelPath) -> PathBuf {
        path.under(&self.ws.root)
    }

    /// Start a session (minting an id when none is given). Errors if it exists.
    pub fn start_session(&self, id: Option<SessionId>) -> Result<SessionId, Error> {
        let id = id.unwrap_or_else(SessionId::mint);
        let file = journal::layout::SessionFile {
            id: id.to_string(),
            started: format_time(gix::date::Time::now_utc()),
            ..Default::default()
        };
        let journal = self.journal();
        // A session this workspace had, whose journal is gone, starts out having forgotten
        // everything: it knew files, and nobody can say which.
        let step = if self.ws.had_session(&id) {
            let blob = journal.write_blob(&journal::Forgot::All.encode())?;
            Step {
                summary: FORGOT_ALL.into(),
                root: vec![RootEdit::Put {
                    file: journal::RootFile::Forgot,
                    blob,
                }],
                ..Step::default()
            }
        } else {
            Step {
                summary: "session start".into(),
                ..Step::default()
            }
        };
        journal.start(&id, &file, None, &step)?;
        self.ws.mark_session(&id);
        // Off the hot path: a good moment to repack a store that piled up loose objects.
        if let Err(e) = self.store.maybe_gc() {
            tracing::warn!(error = %e, "automatic repack failed");
        }
        Ok(id)
    }

    /// Start session `id` again when this workspace had it and its journal is gone (the data
    /// dir or the store was removed): it starts out having forgotten every file, so its next
    /// change of an existing file needs a read first (`journal::Forgot`). Whether it did.
    pub fn resume_forgotten(&self, id: &SessionId) -> Result<bool, Error> {
        if !self.ws.had_session(id) || self.journal().has_session(id)? {
            return Ok(false);
        }
        match self.start_session(Some(id.clone())) {
            Ok(_) => Ok(true),
            Err(Error::Journal(journal::Error::SessionExists { .. })) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Drop session `id`: its journal is set aside and its mark in the workspace removed. A
    /// dropped session protects nothing any more, and one started again under its id starts
    /// new; until gc expires the drop, [`Context::undrop_session`] brings it back.
    pub fn drop_session(&self, id: &SessionId) -> Result<journal::DropOutcome, Error> {
        let done = self.prune_session(id)?;
        self.ws.unmark_session(id);
        Ok(done)
    }

    /// Let go of session `id` for age (`session prune`, `gc`): as [`Context::drop_session`],
    /// except that its mark in the workspace stays, so an agent coming back to it starts it
    /// again knowing it forgot every file, and reads them before it writes.
    pub fn prune_session(&self, id: &SessionId) -> Result<journal::DropOutcome, Error> {
        let done = self.journal().drop_session(id)?;
        // The shell guard's cache of its files goes with it.
        self.ws.forget_signatures(id);
        Ok(done)
    }

    /// Bring back the last drop of session `id`, exactly as it was: it guards what it guarded.
    pub fn undrop_session(&self, id: &SessionId) -> Result<journal::Dropped, Error> {
        let dropped = self.journal().undrop(id)?;
        self.ws.mark_session(id);
        Ok(dropped)
    }

    /// Get the session, creating it when it does not exist (hook adapters name sessions after
    /// their host's ids).
    pub fn ensure_session(&self, id: &SessionId) -> Result<(), Error> {
        if self.journal().try_tip(id)?.is_some() {
            // Sessions from before the workspace kept marks get theirs here.
            if !self.ws.had_session(id) {
                self.ws.mark_session(id);
            }
            return Ok(());
        }
        match self.start_session(Some(id.clone())) {
            Ok(_) | Err(Error::Journal(journal::Error::SessionExists { .. })) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The map edit saying the session came by exactly `bytes` at `path` (`sight` says how),
    /// whatever the disk holds now; the bytes are stored. `abs` is where the file is, for its
    /// executable bit.
    pub(crate) fn seen_edit(
        &self,
        path: &RelPath,
        abs: &Path,
        bytes: &[u8],
        sight: Sight,
    ) -> Result<MapEdit, Error> {
        let blob = self.journal().write_blob(bytes)?;
        let exec = std::fs::metadata(abs).is_ok_and(|m| is_exec(&m));
        Ok(sight.edit(path, Version::kept(Digest::of(bytes), blob, exec)))
    }

    /// The map edit saying the session came by the bytes now at `path` (`sight` says how),
    /// stored as a read stores them (streamed, past [`WHOLE_READ_MAX`]): memory stays flat
    /// whatever the file's size. `None` when nothing is there. A regular file only.
    pub(crate) fn file_edit(
        &self,
        path: &RelPath,
        sight: Sight,
        pack: Option<&mut store::PackWriter>,
    ) -> Result<Option<MapEdit>, Error> {
        self.file_edit_seen(path, sight, pack, None)
    }

    fn file_edit_seen(
        &self,
        path: &RelPath,
        sight: Sight,
        pack: Option<&mut store::PackWriter>,
        sees: Option<&mut dyn Sees>,
    ) -> Result<Option<MapEdit>, Error> {
        let Some((digest, blob, exec)) = self.store_file(path, pack, sees)? else {
            return Ok(None);
        };
        Ok(Some(sight.edit(path, Version::kept(digest, blob, exec))))
    }

    /// Store the bytes of the regular file at `path` as a blob: their digest, the blob and the
    /// executable bit. `None` when it does not exist.
    ///
    /// With `pack`, the file is read whole and its blob added to that pack. Otherwise a file up
    /// to [`WHOLE_READ_MAX`] is read whole; a larger one streams from the disk into
    /// the store, hashed on the way, so memory does not grow with the file. The object header
    /// needs the size first: a file whose size changes while it streams is read again, and
    /// after [`CHANGED_RETRIES`] tries the read fails. Either way the digest names exactly the
    /// bytes stored, and `sees`, when given, is shown exactly those bytes.
    fn store_file(
        &self,
        path: &RelPath,
        pack: Option<&mut store::PackWriter>,
        mut sees: Option<&mut dyn Sees>,
    ) -> Result<Option<(Digest, gix::ObjectId, bool)>, Error> {
        use std::io::{Read, Seek};
        let abs = self.abs(path);
        let io_err = |source| Error::Io {
            op: "read",
            path: path.clone(),
            source,
        };
        match std::fs::metadata(&abs) {
            Ok(m) if m.is_dir() => return Err(io_err(io::Error::other("it is a folder"))),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(e)),
        }
        let mut file = crate::fsutil::open_regular(&abs).map_err(io_err)?;
        let meta = file.metadata().map_err(io_err)?;
        let exec = is_exec(&meta);
        let journal = self.journal();
        if pack.is_some() || meta.len() <= WHOLE_READ_MAX {
            let mut bytes = Vec::with_capacity(meta.len() as usize);
            file.read_to_end(&mut bytes).map_err(io_err)?;
            if let Some(sees) = sees {
                sees.bytes(&bytes);
            }
            let blob = match pack {
                Some(pack) => pack.add(gix::objs::Kind::Blob, &bytes)?,
                None => journal.write_blob(&bytes)?,
            };
            return Ok(Some((Digest::of(&bytes), blob, exec)));
        }
        let mut size = meta.len();
        for attempt in 1.. {
            file.rewind().map_err(io_err)?;
            if let Some(sees) = sees.as_deref_mut() {
                sees.restart();
            }
            let mut reader = Digest::tee(crate::fsutil::Exact::new(
                Seeing {
                    inner: &file,
                    sees: sees.as_deref_mut(),
                },
                size,
            ));
            match journal.write_blob_stream(size, &mut reader) {
                Ok(blob) => return Ok(Some((reader.digest(), blob, exec))),
                Err(_) if reader.get_ref().changed() && attempt < CHANGED_RETRIES => {
                    size = file.metadata().map_err(io_err)?.len();
                }
                Err(_) if reader.get_ref().changed() => {
                    return Err(io_err(io::Error::other(crate::fsutil::CHANGED_WHILE_READ)));
                }
                Err(e) => return Err(e.into()),
            }
        }
        unreachable!("the loop returns")
    }
}

/// Where the bytes of a guarded write come from.
#[derive(Clone, Copy)]
enum Source<'a> {
    /// Handed over whole.
    Bytes(&'a [u8]),
    /// A blob the store holds: streamed out of it.
    Stored(gix::ObjectId),
}

/// What is shown a file's bytes, in order, as they go into the store (see
/// [`Session::read_seeing`]).
pub(crate) trait Sees {
    /// The next bytes of the file.
    fn bytes(&mut self, chunk: &[u8]);
    /// The file changed size while it streamed and is read again from its start: forget what
    /// was shown.
    fn restart(&mut self);
    /// Whether what was shown is to be recorded as read: a tool that showed nothing of the
    /// file (a binary file, a range past its end) records nothing.
    fn keep(&self) -> bool {
        true
    }
}

/// A reader showing what passes through it to a [`Sees`].
struct Seeing<'a, 'b, R> {
    inner: R,
    sees: Option<&'a mut (dyn Sees + 'b)>,
}

impl<R: io::Read> io::Read for Seeing<'_, '_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(sees) = self.sees.as_deref_mut() {
            sees.bytes(&buf[..n]);
        }
        Ok(n)
    }
}

fn is_exec(meta: &std::fs::Metadata) -> bool {
    meta.permissions().mode() & 0o111 != 0
}

pub(crate) use crate::journal::summary;

/// The first step of a session this workspace had whose journal was gone.
pub(crate) const FORGOT_ALL: &str = "session start: this session's journal was gone; every existing file must be read again before it is changed";

/// A failure to keep what a blind change replaces, as the session's error.
pub(crate) fn kept_error(e: crate::keep::Error, path: &RelPath) -> Error {
    match e {
        crate::keep::Error::Journal(e) => Error::Journal(e),
        crate::keep::Error::Io { source, .. } => Error::Io {
            op: "read",
            path: path.clone(),
            source,
        },
        too_large @ crate::keep::Error::TooLarge { .. } => Error::Io {
            op: "keep",
            path: path.clone(),
            source: io::Error::other(too_large.to_string()),
        },
    }
}

impl Session<'_> {
    /// Record that the session read `paths`: their bytes now on disk. Every path must be
    /// readable, or nothing is recorded.
    ///
    /// Many small files go into the store as packs rather than loose objects: their blobs
    /// stream into one pack as they are read, the step's other objects into a second. A
    /// thousand files read in one step otherwise left five thousand loose objects, which `git
    /// pack-objects` then had to inflate, compare with each other and deflate again for every
    /// checkpoint; objects that share a pack and were stored whole are neither compared again
    /// nor recompressed.
    pub fn read(&self, paths: &[RelPath]) -> Result<Tip, Error> {
        let id = self.id;
        let journal = self.ctx.journal();
        journal.tip(id)?;
        // The pack's header counts its objects: the small files are counted first.
        let small: Vec<bool> = paths
            .iter()
            .map(|p| {
                std::fs::metadata(self.ctx.abs(p))
                    .is_ok_and(|m| m.is_file() && m.len() <= WHOLE_READ_MAX)
            })
            .collect();
        let n_small = small.iter().filter(|s| **s).count();
        let mut edits: Vec<Option<MapEdit>> = paths.iter().map(|_| None).collect();
        let mut failed = Vec::new();
        let mut pack = None;
        // The other paths first: a path that is missing or not a file fails the read before
        // any pack is started. A pack begun and abandoned leaves a temporary file behind until
        // `gc` (only a small file that goes away between its count and its read does that).
        for smalls in [false, true] {
            if smalls {
                if !failed.is_empty() {
                    break;
                }
                pack = match u32::try_from(n_small) {
                    Ok(n) if n_small >= PACK_FROM => Some(self.ctx.store.pack_writer(n)?),
                    _ => None,
                };
            }
            for ((path, small), edit) in paths.iter().zip(&small).zip(&mut edits) {
                if *small != smalls {
                    continue;
                }
                match self.ctx.file_edit(path, Sight::Read, pack.as_mut()) {
                    Ok(Some(e)) => *edit = Some(e),
                    Ok(None) => {
                        failed.push((path.clone(), io::Error::from_raw_os_error(libc::ENOENT)))
                    }
                    Err(Error::Io { path, source, .. }) => failed.push((path, source)),
                    Err(e) => return Err(e),
                }
            }
        }
        // Unfinished, the pack stores nothing.
        if !failed.is_empty() {
            return Err(Error::Unreadable(failed));
        }
        let edits: Vec<MapEdit> = edits.into_iter().flatten().collect();
        let Some(pack) = pack else {
            return self.record("read", paths, edits, Vec::new());
        };
        pack.finish()?;
        let step = Step {
            summary: summary("read", paths),
            map: edits,
            root: Vec::new(),
        };
        Ok(journal.record_batch(id, &step, journal.batch()?)?)
    }

    /// Record writes (or deletes) that already happened. With `content`, record the bytes the
    /// caller meant to write, and report paths whose disk bytes already differ from them: that
    /// change is someone else's and is never absorbed.
    pub fn wrote(
        &self,
        paths: &[RelPath],
        content: Option<&[u8]>,
    ) -> Result<(Tip, Vec<NotAbsorbed>), Error> {
        let id = self.id;
        self.ctx.journal().tip(id)?;
        let mut edits = Vec::new();
        let mut not_absorbed = Vec::new();
        for path in paths {
            let abs = self.ctx.abs(path);
            let edit = match content {
                Some(content) => {
                    if Disk::probe(&abs).digest() != Some(Digest::of(content)) {
                        not_absorbed.push(NotAbsorbed { path: path.clone() });
                    }
                    let sight = Sight::Wrote(Replaced::nothing());
                    Some(self.ctx.seen_edit(path, &abs, content, sight)?)
                }
                None => {
                    let sight = Sight::Wrote(Replaced::nothing());
                    self.ctx.file_edit(path, sight, None)?
                }
            };
            edits.push(edit.unwrap_or_else(|| record::deleted(path)));
        }
        let tip = self.record("wrote", paths, edits, Vec::new())?;
        Ok((tip, not_absorbed))
    }

    /// Check `paths` before an update or delete, without writing anything: the answer a write
    /// or delete would get, so an invalid configuration, which refuses every write, is an error
    /// here too.
    pub fn guard(&self, paths: &[RelPath], intent: Intent) -> Result<Vec<Check>, Error> {
        self.ctx.config()?;
        self.compare(paths, intent)
    }

    /// What a check of `paths` finds: the bytes on disk against the session's memory and the
    /// other sessions' writes, as [`Session::guard`] does, without the configuration's say. For
    /// showing where files stand (`diff`), not for deciding a change.
    pub fn compare(&self, paths: &[RelPath], intent: Intent) -> Result<Vec<Check>, Error> {
        let id = self.id;
        let journal = self.ctx.journal();
        // One read of the session's tip serves every path.
        let tree = journal.tip(id)?.tree;
        let others = self.others(&journal);
        paths
            .iter()
            .map(|p| {
                let entry = journal.lookup_at(tree, p)?;
                let mut check = guard::check_entry(entry, &self.ctx.ws.root, p, intent);
                check.respect(&others)?;
                Ok(check)
            })
            .collect()
    }

    /// What a blind change of this session consults ([`guard::Check::respect`]).
    pub(crate) fn others<'a, 'j>(&'a self, journal: &'a Journal<'j>) -> guard::Others<'a, 'j> {
        guard::Others::new(journal, self.id, &self.ctx.ws)
    }

    /// A guarded write: check, store the step's objects, write atomically beneath the workspace
    /// (re-checking just before the rename), then record. What can fail for want of space or
    /// permission fails before the file is touched; if the record still fails after the write,
    /// the error says the file was written.
    pub fn write(&self, path: &RelPath, content: &[u8]) -> Result<Outcome, Error> {
        self.write_from(path, Digest::of(content), Source::Bytes(content))
    }

    /// A guarded write of a version the store holds (blob `blob`, whose bytes have `digest`),
    /// as [`Session::write`] writes: the bytes stream from the store into the file, and only
    /// bytes that hash to `digest` take its name.
    pub fn restore(
        &self,
        path: &RelPath,
        blob: gix::ObjectId,
        digest: Digest,
    ) -> Result<Outcome, Error> {
        self.write_from(path, digest, Source::Stored(blob))
    }

    fn write_from(
        &self,
        path: &RelPath,
        digest: Digest,
        source: Source<'_>,
    ) -> Result<Outcome, Error> {
        self.ctx.config()?;
        let id = self.id;
        let journal = self.ctx.journal();
        let intent = Intent::Write {
            content: Some(digest),
        };
        let abs = self.ctx.abs(path);
        let others = self.others(&journal);
        let mut check = guard::check(&others, path, intent)?;
        // Bytes a blind write replaces that git's HEAD lacks are kept first, for `recover`.
        let kept = crate::keep::for_check(
            &mut check,
            &others,
            &mut crate::keep::COMMAND_MAX.clone(),
            &mut |_| true,
        )
        .map_err(|e| kept_error(e, path))?;
        if check.refused() {
            return Ok(Outcome::Refused(vec![check]));
        }
        // The session's first sight of an existing untracked file is what it overwrote: kept
        // (up to a size) so that undo can put it back.
        let (before, origin_bytes) = match (&check.entry, &kept) {
            (Some(_), _) => (check.disk.clone(), None),
            (None, Some(k)) => (Disk::Present(k.digest), Some(k.blob)),
            (None, None) => match std::fs::symlink_metadata(&abs) {
                Ok(m) if m.is_file() && m.len() <= ORIGIN_KEEP_MAX => {
                    match self.ctx.store_file(path, None, None) {
                        Ok(Some((digest, blob, _))) => (Disk::Present(digest), Some(blob)),
                        Ok(None) | Err(Error::Io { .. }) => (Disk::probe(&abs), None),
                        Err(e) => return Err(e),
                    }
                }
                _ => (Disk::probe(&abs), None),
            },
        };
        if let Disk::Unreadable(_) = before
            && abs.exists()
        {
            // Never replace bytes it cannot compare: fail like any write would.
            let source = crate::fsutil::open_regular(&abs)
                .err()
                .unwrap_or_else(|| io::Error::other("it is not a regular file"));
            return Err(Error::Io {
                op: "read",
                path: path.clone(),
                source,
            });
        }
        // A replaced file keeps its mode; a new one is created without the executable bit.
        let exec = std::fs::metadata(&abs).is_ok_and(|m| is_exec(&m));
        let step = Step {
            summary: summary("write", std::slice::from_ref(path)),
            map: vec![record::wrote(
                path,
                Version::kept(
                    digest,
                    match source {
                        Source::Bytes(content) => journal.write_blob(content)?,
                        Source::Stored(blob) => blob,
                    },
                    exec,
                ),
                Replaced {
                    digest: before.digest(),
                    kept: origin_bytes,
                },
            )],
            root: kept
                .iter()
                .map(|k| k.root_edits(&journal))
                .collect::<Result<Vec<_>, _>>()?
                .concat(),
        };
        let prepared = journal.prepare(id, &step)?;
        let mut late = None;
        let mut late_err = None;
        let entry = check.entry.clone();
        let recheck = || {
            let mut again = guard::check_entry(entry.clone(), &self.ctx.ws.root, path, intent);
            if let Err(e) = again.respect(&others) {
                late_err = Some(e);
                return false;
            }
            let ok = !again.refused();
            late = Some(again);
            ok
        };
        let io_err = |source| Error::Io {
            op: "write",
            path: path.clone(),
            source,
        };
        // Recorded while the folder is still held: a hook looking for a write that raced its
        // host's (it takes the same hold) finds this one recorded, never half done.
        let mut committed = None;
        let commit = || committed = Some(journal.commit(id, &step, prepared));
        let written = match source {
            Source::Bytes(content) => {
                let root = &self.ctx.ws.root;
                crate::fsutil::replace_beneath_then(root, path, content, recheck, commit)
                    .map_err(io_err)?
            }
            Source::Stored(blob) => {
                let from = journal.blob_reader(blob)?;
                let root = &self.ctx.ws.root;
                match crate::fsutil::replace_beneath_checked_then(
                    root, path, from, digest, recheck, commit,
                )
                .map_err(io_err)?
                {
                    crate::fsutil::Placed::Damaged => {
                        return Err(io_err(io::Error::other(
                            "the store gave other bytes than the version's",
                        )));
                    }
                    placed => placed == crate::fsutil::Placed::Written,
                }
            }
        };
        if let Some(e) = late_err {
            return Err(e.into());
        }
        if !written {
            return Ok(Outcome::Refused(late.into_iter().collect()));
        }
        let tip = committed
            .expect("a written file is committed")
            .map_err(|source| Error::Unrecorded {
                done: format!("wrote '{path}'"),
                source,
            })?;
        Ok(Outcome::Done(tip, kept.into_iter().collect()))
    }

    /// A guarded delete of every path, then their entries are dropped. Refused as a whole when
    /// any path is stale. A path named through a symbolic link removes the link, like `rm(1)`;
    /// the file it points to is checked, and stays.
    pub fn rm(&self, paths: &[Named]) -> Result<Outcome, Error> {
        self.ctx.config()?;
        let id = self.id;
        let targets: Vec<RelPath> = paths.iter().map(|n| n.path.clone()).collect();
        let mut checks = self.compare(&targets, Intent::Delete)?;
        let journal = self.ctx.journal();
        let others = self.others(&journal);
        let mut budget = crate::keep::COMMAND_MAX;
        let mut kept = Vec::new();
        for (check, named) in checks.iter_mut().zip(paths) {
            check.via = named.link.clone();
            // A link is removed, not what it reaches: only a file itself has bytes to keep.
            if named.link.is_none()
                && let Some(k) = crate::keep::for_check(check, &others, &mut budget, &mut |_| true)
                    .map_err(|e| kept_error(e, &named.path))?
            {
                kept.push(k);
            }
        }
        let refused: Vec<Check> = checks.iter().filter(|c| c.refused()).cloned().collect();
        if !refused.is_empty() {
            return Ok(Outcome::Refused(refused));
        }
        let removed: Vec<RelPath> = paths
            .iter()
            .map(|n| n.link.clone().unwrap_or_else(|| n.path.clone()))
            .collect();
        let root_edits = kept
            .iter()
            .map(|k| Ok((k.path.clone(), k.root_edits(&journal)?)))
            .collect::<Result<Vec<_>, journal::Error>>()?;
        let step_of = |paths: &[RelPath]| Step {
            summary: summary("rm", paths),
            map: paths.iter().map(record::deleted).collect(),
            root: root_edits
                .iter()
                .filter(|(p, _)| paths.contains(p))
                .flat_map(|(_, edits)| edits.iter().cloned())
                .collect(),
        };
        let step = step_of(&removed);
        let prepared = journal.prepare(id, &step)?;
        let mut done = Vec::new();
        let mut failure = None;
        for ((named, check), path) in paths.iter().zip(checks).zip(&removed) {
            let mut late = None;
            let mut late_err = None;
            let outcome = crate::fsutil::remove_beneath(&self.ctx.ws.root, path, || {
                let mut again = guard::check_entry(
                    check.entry.clone(),
                    &self.ctx.ws.root,
                    &named.path,
                    Intent::Delete,
                );
                if let Err(e) = again.respect(&others) {
                    late_err = Some(e);
                    return false;
                }
                let ok = !again.refused();
                late = Some(Check {
                    via: named.link.clone(),
                    ..again
                });
                ok
            });
            match outcome {
                Ok(Removed::Done) | Ok(Removed::AlreadyGone) => done.push(path.clone()),
                Ok(Removed::Refused) => {
                    failure = Some(match late_err {
                        Some(e) => Err(e.into()),
                        None => Ok(late.into_iter().collect::<Vec<_>>()),
                    });
                    break;
                }
                Err(source) => {
                    failure = Some(Err(Error::Io {
                        op: "delete",
                        path: path.clone(),
                        source,
                    }));
                    break;
                }
            }
        }
        // Whatever was deleted is recorded, even when a later path failed.
        let tip = if done.len() == removed.len() {
            journal.commit(id, &step, prepared)
        } else if done.is_empty() {
            journal.tip(id)
        } else {
            journal.record(id, &step_of(&done))
        };
        let tip = tip.map_err(|source| Error::Unrecorded {
            done: format!("deleted {}", list(done.iter())),
            source,
        });
        match failure {
            Some(Ok(refused)) => {
                tip?;
                Ok(Outcome::Refused(refused))
            }
            Some(Err(e)) => {
                tip?;
                Err(e)
            }
            None => Ok(Outcome::Done(tip?, kept)),
        }
    }

    /// Every tracked path and how it stands on disk now.
    pub fn status(&self) -> Result<Vec<(journal::Entry, Freshness)>, Error> {
        let id = self.id;
        let entries = self.ctx.journal().entries(id)?;
        Ok(entries
            .into_iter()
            .map(|e| {
                let f = match (Disk::probe(&self.ctx.abs(&e.path)), e.seen) {
                    (Disk::Missing, _) => Freshness::Gone,
                    (Disk::Unreadable(_), _) => Freshness::Unreadable,
                    (Disk::Present(now), Seen::Digest(d)) if now == d => Freshness::Fresh,
                    (Disk::Present(_), _) => Freshness::Changed,
                };
                (e, f)
            })
            .collect())
    }

    /// Record one step whose summary names the verb and the paths.
    pub fn record(
        &self,
        verb: &str,
        paths: &[RelPath],
        map: Vec<MapEdit>,
        root: Vec<RootEdit>,
    ) -> Result<Tip, Error> {
        let id = self.id;
        let step = Step {
            summary: summary(verb, paths),
            map,
            root,
        };
        Ok(self.ctx.journal().record(id, &step)?)
    }

    /// End the session: from now until it records another step, its writes are no longer
    /// protected from other sessions' blind changes (`guard::Check::respect`); what it knows
    /// still guards its own writes. Ending an ended session records nothing.
    pub fn end(&self) -> Result<Tip, Error> {
        let journal = self.ctx.journal();
        let tip = journal.tip(self.id)?;
        if guard::ended(&tip) {
            return Ok(tip);
        }
        let step = Step {
            summary: guard::ENDED.into(),
            map: Vec::new(),
            root: Vec::new(),
        };
        Ok(journal.record(self.id, &step)?)
    }

    /// Record that the session read `path`, its bytes shown to `sees` as they go into the store:
    /// what `sees` was shown is exactly the version recorded, and a large file streams, so a
    /// tool can cut what it shows from a file of any size with flat memory. `None` when the file
    /// does not exist, or when `sees` does not [keep](Sees::keep) what it was shown.
    pub(crate) fn read_seeing(
        &self,
        path: &RelPath,
        sees: &mut dyn Sees,
    ) -> Result<Option<Tip>, Error> {
        let Some(edit) = self
            .ctx
            .file_edit_seen(path, Sight::Read, None, Some(&mut *sees))?
        else {
            return Ok(None);
        };
        if !sees.keep() {
            return Ok(None);
        }
        self.record("read", std::slice::from_ref(path), vec![edit], Vec::new())
            .map(Some)
    }

    /// Record that the session saw exactly `bytes` at `path`: the bytes a tool read once and
    /// showed the model.
    pub(crate) fn record_seen(&self, path: &RelPath, bytes: &[u8]) -> Result<Tip, Error> {
        let edit = self
            .ctx
            .seen_edit(path, &self.ctx.abs(path), bytes, Sight::Read)?;
        self.record("read", std::slice::from_ref(path), vec![edit], Vec::new())
    }
}
