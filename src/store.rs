//! The private journal store: one bare git repository per workspace, outside the working tree.
//!
//! Every ref update is a compare-and-swap (the expected old value must match) retried on the new
//! tip until a deadline. Writers also hold an `flock` on `<id dir>/store.lock` while they move a
//! ref. Git's own `<ref>.lock` files carry no owner, so a process killed while holding one would
//! wedge the ref forever; because every Stella writer holds the flock while such a file can exist,
//! a `.lock` seen while holding the flock belongs to a dead process and is removed. The kernel
//! drops an flock when its process dies, so the flock itself can never go stale.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gix::ObjectId;
use gix::bstr::BString;
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
use gix::refs::{FullName, Target};

use crate::fsutil::{self, FileLock, LockError};

/// How long a writer keeps trying before it gives up with a clear error. Generous, because 32
/// writers on 2 cores must all land.
pub(crate) const WRITE_DEADLINE: Duration = Duration::from_secs(60);

/// The error returned by [`Store`] operations.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// gix could not read or write the store's objects, refs or config.
    #[error("could not {op} in the store '{}'", .store.display())]
    Git {
        /// What failed, as the message says it: `list refs`, `update a ref`…
        op: &'static str,
        /// The store's folder.
        store: PathBuf,
        /// What gix reported.
        #[source]
        source: gix::Error,
    },
    /// A file or folder of the store could not be read or written, or git could not be run on
    /// it.
    #[error("could not {op} '{}'", .path.display())]
    Io {
        /// What failed, as the message says it.
        op: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The I/O error that stopped it.
        #[source]
        source: std::io::Error,
    },
    /// The store's lock (`store.lock`) could not be taken.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// Other writers moved the ref at every try until `WRITE_DEADLINE` ran out.
    #[error("'{name}' kept moving under concurrent writers for {waited:?}; nothing was recorded")]
    Contended {
        /// The ref that kept moving.
        name: String,
        /// How long the writer kept trying.
        waited: Duration,
    },
    /// git itself, run on the store (to collect garbage, to index a pack), failed.
    #[error("'git {args}' failed in the store: {stderr}")]
    GitCommand {
        /// Its arguments, as one line.
        args: String,
        /// What it said on stderr.
        stderr: String,
    },
    /// Objects a step named were already in the store, left unreadable by an earlier crash
    /// (their names reached the disk, their bytes did not). They were removed: the next try
    /// writes them afresh.
    #[error("the store held {} left broken by an earlier crash ({}); {} removed and nothing was recorded: run the command again", crate::text::count(.ids.len() as u64, "object"), .ids.iter().map(|i| format!("'{i}'")).collect::<Vec<_>>().join(", "), if .ids.len() == 1 { "it was" } else { "they were" })]
    Leftover {
        /// The objects removed.
        ids: Vec<ObjectId>,
    },
    /// The ref's file exists but names no object: a power cut left it empty or torn.
    #[error("the ref '{name}' in the store '{}' holds no object id", .store.display())]
    DamagedRef {
        /// The ref whose file is damaged.
        name: String,
        /// The store's folder.
        store: PathBuf,
    },
}

/// One line of a ref's reflog: a move from `old` to `new` (`None`: the ref did not exist), and
/// the message the writer gave it (for a session, the step's summary).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ReflogEntry {
    pub(crate) old: Option<ObjectId>,
    pub(crate) new: Option<ObjectId>,
    pub(crate) message: String,
}

/// An open journal store.
///
/// Reads go straight to the object database and the ref files. The full repository (its config,
/// which a write needs for its reflog settings, and gix's tree editing) is opened on first use:
/// opening it was a fifth of the guard's time, and the guard only reads.
pub struct Store {
    objects: gix::odb::Handle,
    refs: gix::refs::file::Store,
    repo: std::cell::OnceCell<gix::Repository>,
    /// How many pack indexes it can hold ([`slots`]), for the repository opened on it too.
    slots: gix::odb::store::init::Slots,
    dir: PathBuf,
    lock_path: PathBuf,
    /// When this process opened the store: a loose object older than that was not written by
    /// this command.
    opened: std::time::SystemTime,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("dir", &self.dir).finish()
    }
}

/// The signature on every journal commit and reflog entry. The store is opened isolated from the
/// user's config, so there is no configured committer to fall back on.
pub(crate) fn signature(time: gix::date::Time) -> gix::actor::Signature {
    gix::actor::Signature {
        name: "Stella".into(),
        email: "stella@localhost".into(),
        time,
    }
}

/// How many pack indexes an open store can hold. gix fixes this once, when the store is opened
/// (with its default, from the packs on disk, at least 32): a guarded command that runs for
/// minutes writes a pack with each large step, and past the count it could read none of them.
/// Twice what is on disk, and at least 1,024 (a few tens of KiB).
///
/// Counted here by name, in one listing of the pack folder: gix's own count stats each pack,
/// index and reverse index, three calls per pack before every command (hooks included).
fn slots(dir: &Path) -> gix::odb::store::init::Slots {
    let on_disk = std::fs::read_dir(dir.join("objects").join("pack")).map_or(0, |entries| {
        entries
            .filter_map(Result::ok)
            .filter(|e| {
                let name = e.file_name();
                let name = name.as_encoded_bytes();
                name.ends_with(b".idx") || name == b"multi-pack-index"
            })
            .count()
    });
    gix::odb::store::init::Slots::Given(
        u16::try_from(on_disk.saturating_mul(2).max(1024)).unwrap_or(u16::MAX),
    )
}

impl Store {
    /// Open the store at `dir`, creating it if it does not exist yet.
    pub(crate) fn open_or_init(dir: &Path) -> Result<Store, Error> {
        if !dir.join("HEAD").exists() {
            init(dir)?;
        }
        Self::open(dir)
    }

    /// Open the store at `dir` if it exists.
    pub fn open_existing(dir: &Path) -> Result<Option<Store>, Error> {
        if dir.join("HEAD").exists() {
            Self::open(dir).map(Some)
        } else {
            Ok(None)
        }
    }

    fn open(dir: &Path) -> Result<Store, Error> {
        let slots = slots(dir);
        let objects = gix::odb::at_opts(
            dir.join("objects"),
            gix::hash::Kind::Sha1,
            None,
            gix::odb::store::init::Options {
                slots,
                ..Default::default()
            },
        )
        .map_err(|source| Error::Io {
            op: "open the objects of",
            path: dir.to_owned(),
            source,
        })?;
        // Read-only: every write goes through `repo()`, with the store's reflog settings.
        let refs = gix::refs::file::Store::at_opts(
            dir.to_owned(),
            gix::hash::Kind::Sha1,
            gix::refs::store::init::Options {
                write_reflog: gix::refs::store::WriteReflog::Disable,
                ..Default::default()
            },
        );
        Ok(Store {
            objects,
            refs,
            repo: std::cell::OnceCell::new(),
            slots,
            dir: dir.to_owned(),
            lock_path: lock_path(dir),
            opened: std::time::SystemTime::now(),
        })
    }

    /// The object database, for reads.
    pub(crate) fn objects(&self) -> &gix::odb::Handle {
        &self.objects
    }

    /// The store as a repository, opened on first use.
    pub fn repo(&self) -> Result<&gix::Repository, Error> {
        if let Some(repo) = self.repo.get() {
            return Ok(repo);
        }
        // Isolated: a broken ~/.gitconfig or a system config must not break Stella.
        let options = gix::open::Options::isolated()
            .object_store_slots(self.slots)
            .config_overrides([
                "core.logAllRefUpdates=always",
                // Stale ref locks are cleared under the store flock; never wait on one.
                "core.filesRefLockTimeout=0",
            ]);
        let repo = gix::open_opts(&self.dir, options).map_err(|e| Error::Git {
            op: "open",
            store: self.dir.clone(),
            source: e,
        })?;
        Ok(self.repo.get_or_init(|| repo))
    }

    /// Whether steps are synced to disk before they count (`stella.fsync` in the store's own
    /// config, default on), as git's `core.fsync` is for its objects and refs.
    pub(crate) fn fsync(&self) -> bool {
        match self.repo() {
            Ok(repo) => repo
                .config_snapshot()
                .boolean("stella.fsync")
                .unwrap_or(true),
            Err(_) => true,
        }
    }

    /// Sync the loose objects `ids` (those that are loose: packed ones are synced by git as it
    /// writes the pack) and then their folders, once each: what a step needs on disk before the
    /// ref that names it moves.
    ///
    /// An object this command found already there (gix writes nothing for an object that
    /// exists) is read back whole first: after a power cut, a name can reach the disk without
    /// its bytes, and syncing such a file would make a step durable that is not whole. Only
    /// objects older than this process are read, so a step pays for it only after a crash or
    /// when it names bytes the store held already at another place.
    pub(crate) fn sync_objects(&self, ids: &[ObjectId]) -> Result<(), Error> {
        if ids.is_empty() || !self.fsync() {
            return Ok(());
        }
        let mut dirs = std::collections::BTreeSet::new();
        let mut broken = Vec::new();
        for id in ids {
            let hex = id.to_hex().to_string();
            let dir = self.dir.join("objects").join(&hex[..2]);
            let path = dir.join(&hex[2..]);
            let Some(file) = open_existing(&path)? else {
                continue;
            };
            let old = file
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t < self.opened);
            if old && !self.reads_whole(id)? {
                std::fs::remove_file(&path).map_err(|source| Error::Io {
                    op: "remove the broken object",
                    path: path.clone(),
                    source,
                })?;
                broken.push(*id);
                continue;
            }
            file.sync_all().map_err(|source| Error::Io {
                op: "sync",
                path,
                source,
            })?;
            dirs.insert(dir);
        }
        if !broken.is_empty() {
            return Err(Error::Leftover { ids: broken });
        }
        // The fan-out folders first, then `objects/` itself, which may have gained one.
        for dir in &dirs {
            sync_dir(dir)?;
        }
        if !dirs.is_empty() {
            sync_dir(&self.dir.join("objects"))?;
        }
        Ok(())
    }

    /// Remove loose object `id` when it is older than this process and does not read back
    /// whole: a file an earlier crash left broken, which this command's own step named because
    /// gix took it for the object it was writing. `Some(Leftover)` when it was removed.
    pub(crate) fn remove_leftover(&self, id: &ObjectId) -> Result<Option<Error>, Error> {
        let hex = id.to_hex().to_string();
        let path = self.dir.join("objects").join(&hex[..2]).join(&hex[2..]);
        let old = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t < self.opened);
        if !old || self.reads_whole(id)? {
            return Ok(None);
        }
        std::fs::remove_file(&path).map_err(|source| Error::Io {
            op: "remove the broken object",
            path,
            source,
        })?;
        Ok(Some(Error::Leftover { ids: vec![*id] }))
    }

    /// [`Store::remove_leftover`] for tree `id` and every tree under it: whether any was broken
    /// (and removed, so that writing the tree again restores it).
    pub(crate) fn remove_leftover_trees(&self, id: ObjectId) -> Result<bool, Error> {
        if self.remove_leftover(&id)?.is_some() {
            return Ok(true);
        }
        let Ok(tree) = self.repo()?.find_tree(id) else {
            return Ok(false);
        };
        let subtrees: Vec<ObjectId> = tree
            .iter()
            .filter_map(Result::ok)
            .filter(|e| e.mode().is_tree())
            .map(|e| e.oid().to_owned())
            .collect();
        let mut any = false;
        for sub in subtrees {
            any |= self.remove_leftover_trees(sub)?;
        }
        Ok(any)
    }

    /// Whether loose object `id` reads back whole: it inflates, its header's size is what
    /// follows, and its bytes hash to its name. `Err` when it could not be read at all.
    ///
    /// Streamed through a fixed buffer, so checking a large blob costs time, not memory.
    fn reads_whole(&self, id: &ObjectId) -> Result<bool, Error> {
        let hex = id.to_hex().to_string();
        let path = self.dir.join("objects").join(&hex[..2]).join(&hex[2..]);
        let io_err = |source| Error::Io {
            op: "read back",
            path: path.clone(),
            source,
        };
        let file = match std::fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(io_err(e)),
        };
        let mut file = Reading {
            file,
            failed: false,
        };
        match loose_object_hash(&mut file, id.kind()) {
            Ok(found) => Ok(found == Some(*id)),
            // The disk failed, not the object.
            Err(e) if file.failed => Err(io_err(e)),
            // A deflate stream that does not inflate.
            Err(_) => Ok(false),
        }
    }

    /// Sync ref `name` and its reflog, then their folders: after the rename that moved it.
    ///
    /// A ref just `created` may have created its folders too (`refs/stella/sessions/` for a
    /// store's first session): then every folder up to the store's own is synced as well, so the
    /// names that lead to the new ref survive a power cut.
    fn sync_ref(&self, name: &str, created: bool) -> Result<(), Error> {
        if !self.fsync() {
            return Ok(());
        }
        for path in [self.dir.join(name), self.dir.join("logs").join(name)] {
            if !sync_file(&path)? {
                continue;
            }
            let mut dir = path.parent();
            while let Some(d) = dir {
                sync_dir(d)?;
                if !created || d == self.dir {
                    break;
                }
                dir = d.parent();
            }
        }
        Ok(())
    }

    /// The store's folder: the bare repository (`git stella store-path` prints it).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub(crate) fn git_err(&self, op: &'static str) -> impl FnOnce(gix::Error) -> Error + '_ {
        move |source| Error::Git {
            op,
            store: self.dir.clone(),
            source,
        }
    }

    /// A lease on `name` (a session), held by this process until the file returned is closed
    /// or the process dies (a shared `flock`): while one is held, [`Store::leased`] says so.
    pub(crate) fn lease(&self, name: &str) -> Result<std::fs::File, Error> {
        let dir = self.dir.join("leases");
        let path = dir.join(name);
        let io = |source| Error::Io {
            op: "take a lease on",
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(&dir).map_err(io)?;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        file.lock_shared().map_err(io)?;
        Ok(file)
    }

    /// Whether a live process holds a lease on `name` (see [`Store::lease`]).
    pub(crate) fn leased(&self, name: &str) -> bool {
        let Ok(file) = std::fs::File::open(self.dir.join("leases").join(name)) else {
            return false;
        };
        matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock))
    }

    /// Take the store's writer lock.
    pub(crate) fn lock(&self, deadline: Duration) -> Result<FileLock, Error> {
        Ok(FileLock::acquire(&self.lock_path, deadline)?)
    }

    /// The commit a ref points at, if the ref exists.
    pub(crate) fn tip(&self, name: &str) -> Result<Option<ObjectId>, Error> {
        match self.refs.try_find(name) {
            Ok(r) => Ok(r.and_then(|r| r.target.try_id().map(ToOwned::to_owned))),
            // A file that holds no id is damage to repair, not a failure to read.
            Err(_) if self.ref_file_is_torn(name) => Err(Error::DamagedRef {
                name: name.to_owned(),
                store: self.dir.clone(),
            }),
            Err(e) => Err(self.git_err("read a ref")(gix::Error::from_error(e))),
        }
    }

    /// Whether the loose file of ref `name` could be read and holds neither an object id nor a
    /// symbolic ref.
    fn ref_file_is_torn(&self, name: &str) -> bool {
        std::fs::read(self.dir.join(name)).is_ok_and(|bytes| {
            let text = String::from_utf8_lossy(&bytes);
            let text = text.trim_end();
            ObjectId::from_hex(text.as_bytes()).is_err() && !text.starts_with("ref: ")
        })
    }

    /// The reflog of ref `name`, oldest first. Lines a power cut left torn are skipped: the reflog
    /// is evidence for a repair, and what survives of it is still worth reading.
    pub(crate) fn reflog(&self, name: &str) -> Result<Vec<ReflogEntry>, Error> {
        let path = self.dir.join("logs").join(name);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(Error::Io {
                    op: "read the reflog",
                    path,
                    source,
                });
            }
        };
        let id = |hex: &[u8]| {
            ObjectId::from_hex(hex)
                .ok()
                .map(|id| (!id.is_null()).then_some(id))
        };
        Ok(bytes
            .split(|b| *b == b'\n')
            .filter_map(|line| {
                let old = id(line.get(..40)?)?;
                let new = id(line.get(41..81)?)?;
                let tab = line.iter().position(|b| *b == b'\t');
                let message = tab.map_or(String::new(), |t| {
                    String::from_utf8_lossy(&line[t + 1..]).into_owned()
                });
                Some(ReflogEntry { old, new, message })
            })
            .collect())
    }

    /// Whether ref `name` has a loose file, whatever it holds.
    pub(crate) fn ref_exists(&self, name: &str) -> bool {
        self.dir.join(name).exists()
    }

    /// Whether ref `name` has a reflog with anything in it.
    pub(crate) fn has_reflog(&self, name: &str) -> bool {
        std::fs::metadata(self.dir.join("logs").join(name)).is_ok_and(|m| m.len() > 0)
    }

    /// Point ref `name` back at `to`, whatever it holds now (a torn file, a missing commit,
    /// nothing), and cut its reflog back to where it last stood at `to`, adding one entry with
    /// `reflog_message`: the one ref update that is not a compare-and-swap, for a repair that
    /// decided under `lock` where the ref must stand.
    ///
    /// The reflog entries cut name the steps a repair found broken: kept, git's own walks
    /// (`fsck`, the repack of `gc`) would fail on them. What they said lives on in
    /// `reflog_message`.
    pub(crate) fn reset_ref(
        &self,
        _lock: &FileLock,
        name: &str,
        to: ObjectId,
        reflog_message: &str,
    ) -> Result<(), Error> {
        self.clear_stale_locks(name)?;
        let io = |op: &'static str, path: PathBuf| move |source| Error::Io { op, path, source };
        let log = self.dir.join("logs").join(name);
        let old = match std::fs::read(&log) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(io("read the reflog", log)(e)),
        };
        let hex = to.to_hex().to_string();
        let mut kept = 0;
        let mut at = 0;
        for line in old.split_inclusive(|b| *b == b'\n') {
            at += line.len();
            if line.ends_with(b"\n") && line.get(41..81) == Some(hex.as_bytes()) {
                kept = at;
            }
        }
        let mut text = old[..kept].to_vec();
        let now = gix::date::Time::now_utc();
        text.extend_from_slice(
            format!(
                "{hex} {hex} Stella <stella@localhost> {} +0000\t{}\n",
                now.seconds,
                reflog_message.replace('\n', " ")
            )
            .as_bytes(),
        );
        for dir in [log.parent(), self.dir.join(name).parent()]
            .into_iter()
            .flatten()
        {
            fsutil::create_private_dir(dir, 0o755).map_err(io("create", dir.to_owned()))?;
        }
        fsutil::write_atomic(&log, &text, 0o644).map_err(io("write the reflog", log.clone()))?;
        let path = self.dir.join(name);
        fsutil::write_atomic(&path, format!("{hex}\n").as_bytes(), 0o644)
            .map_err(io("write the ref", path.clone()))?;
        self.sync_ref(name, true)
    }

    /// `name` as a full ref name.
    fn full_name(&self, name: &str) -> Result<FullName, Error> {
        name.try_into()
            .map_err(|e: gix::validate::reference::name::Error| Error::Git {
                op: "name a ref",
                store: self.dir.clone(),
                source: gix::Error::from_error(e),
            })
    }

    /// Move `name` to the commit `make` builds on the current tip (`None`: the ref does not exist).
    ///
    /// `make` runs under the store lock and may run again if the tip moved (a writer that does not
    /// take the lock, such as plain git). Returns the new tip.
    pub(crate) fn update_ref<E: From<Error>>(
        &self,
        name: &str,
        reflog_message: &str,
        mut make: impl FnMut(&gix::Repository, Option<ObjectId>) -> Result<ObjectId, E>,
    ) -> Result<ObjectId, E> {
        let full = self.full_name(name)?;
        let start = Instant::now();
        loop {
            let remaining = WRITE_DEADLINE.saturating_sub(start.elapsed());
            let lock = self.lock(remaining)?;
            self.clear_stale_locks(name)?;
            let tip = self.tip(name)?;
            let new = make(self.repo()?, tip)?;
            let expected = match tip {
                Some(old) => PreviousValue::MustExistAndMatch(Target::Object(old)),
                None => PreviousValue::MustNotExist,
            };
            let edit = RefEdit::new(
                full.clone(),
                Change::Update {
                    log: LogChange {
                        mode: RefLog::AndReference,
                        force_create_reflog: true,
                        message: BString::from(reflog_message.replace('\n', " ")),
                    },
                    expected,
                    new: Target::Object(new),
                },
            );
            let mut time_buf = Default::default();
            let sig = signature(gix::date::Time::now_utc());
            match self
                .repo()?
                .edit_references_as([edit], Some(sig.to_ref(&mut time_buf)))
            {
                Ok(_) => {
                    self.sync_ref(name, tip.is_none())?;
                    return Ok(new);
                }
                // Only a lost compare-and-swap is worth another try: the ref moved under us.
                // Anything else (permissions, a full disk) is reported at once.
                Err(e) if self.tip(name)? == tip => {
                    return Err(Error::Git {
                        op: "update a ref",
                        store: self.dir.clone(),
                        source: gix::Error::from_error(e),
                    }
                    .into());
                }
                Err(e) if start.elapsed() < WRITE_DEADLINE => {
                    tracing::debug!(error = %e, "ref update lost a race; retrying on the new tip");
                    drop(lock);
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(_) => {
                    return Err(Error::Contended {
                        name: name.to_owned(),
                        waited: WRITE_DEADLINE,
                    }
                    .into());
                }
            }
        }
    }

    /// Delete `name` and its reflog, so `gc` can forget what it reached.
    pub(crate) fn delete_ref(&self, name: &str) -> Result<bool, Error> {
        let _lock = self.lock(WRITE_DEADLINE)?;
        self.clear_stale_locks(name)?;
        let old = match self.tip(name) {
            Ok(Some(old)) => old,
            Ok(None) => return Ok(false),
            // A torn ref names nothing to compare with: dropping it is removing its files.
            Err(Error::DamagedRef { .. }) => {
                for path in [self.dir.join(name), self.dir.join("logs").join(name)] {
                    match std::fs::remove_file(&path) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(source) => {
                            return Err(Error::Io {
                                op: "remove",
                                path,
                                source,
                            });
                        }
                    }
                }
                return Ok(true);
            }
            Err(e) => return Err(e),
        };
        self.edit_refs([self.deletion(name, old)?], "delete a ref")?;
        Ok(true)
    }

    /// The edit that deletes `name`, which must still point at `old`, with its reflog.
    fn deletion(&self, name: &str, old: ObjectId) -> Result<RefEdit, Error> {
        Ok(RefEdit::new(
            self.full_name(name)?,
            Change::Delete {
                expected: PreviousValue::MustExistAndMatch(Target::Object(old)),
                log: RefLog::AndReference,
            },
        ))
    }

    /// Apply `edits` as one transaction, signed now; `op` names it in an error.
    fn edit_refs(
        &self,
        edits: impl IntoIterator<Item = RefEdit>,
        op: &'static str,
    ) -> Result<(), Error> {
        let mut time_buf = Default::default();
        let sig = signature(gix::date::Time::now_utc());
        self.repo()?
            .edit_references_as(edits, Some(sig.to_ref(&mut time_buf)))
            .map_err(self.git_err(op))?;
        Ok(())
    }

    /// Give ref `from` the name `to`, which must not exist, in one transaction: `to` gets a
    /// reflog saying `why`, `from` loses its own. Whether `from` existed; a torn `from` is
    /// deleted (there is nothing to keep).
    pub(crate) fn rename_ref(&self, from: &str, to: &str, why: &str) -> Result<bool, Error> {
        {
            let _lock = self.lock(WRITE_DEADLINE)?;
            self.clear_stale_locks(from)?;
            match self.tip(from) {
                Ok(Some(old)) => {
                    let edits = [
                        RefEdit::new(
                            self.full_name(to)?,
                            Change::Update {
                                log: LogChange {
                                    mode: RefLog::AndReference,
                                    force_create_reflog: true,
                                    message: BString::from(why.replace('\n', " ")),
                                },
                                expected: PreviousValue::MustNotExist,
                                new: Target::Object(old),
                            },
                        ),
                        self.deletion(from, old)?,
                    ];
                    self.edit_refs(edits, "rename a ref")?;
                    return Ok(true);
                }
                Ok(None) => return Ok(false),
                Err(Error::DamagedRef { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        self.delete_ref(from)
    }

    /// Whether every object reachable from ref `name` is in the store (git walks them all).
    /// A ref that does not exist is not whole.
    pub(crate) fn is_whole(&self, name: &str) -> Result<bool, Error> {
        let status = git_command(&self.dir)
            .args(["rev-list", "--objects", "--quiet", name, "--"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .map_err(|source| Error::Io {
                op: "run git for",
                path: self.dir.clone(),
                source,
            })?;
        Ok(status.success())
    }

    /// Every ref under `prefix` with the commit it points at, sorted by name.
    pub(crate) fn refs(&self, prefix: &str) -> Result<Vec<(String, ObjectId)>, Error> {
        let platform = self
            .repo()?
            .references()
            .map_err(self.git_err("list refs"))?;
        let iter = platform
            .prefixed(prefix.trim_end_matches('/'))
            .map_err(self.git_err("list refs"))?;
        let mut out = Vec::new();
        for r in iter {
            let r = r.map_err(|e| Error::Git {
                op: "list refs",
                store: self.dir.clone(),
                source: gix::Error::from_error(e),
            })?;
            if let Some(id) = r.target().try_id() {
                out.push((r.name().as_bstr().to_string(), id.to_owned()));
            }
        }
        out.sort();
        Ok(out)
    }

    /// Remove git lock files for `name` and for packed refs. Call only while holding the store
    /// lock: then no live Stella writer can own them.
    fn clear_stale_locks(&self, name: &str) -> Result<(), Error> {
        for lock in [
            self.dir.join(format!("{name}.lock")),
            self.dir.join("packed-refs.lock"),
        ] {
            match std::fs::remove_file(&lock) {
                Ok(()) => {
                    tracing::warn!(lock = %lock.display(), "removed a stale lock left by a killed writer")
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(Error::Io {
                        op: "remove the stale lock",
                        path: lock,
                        source,
                    });
                }
            }
        }
        Ok(())
    }

    /// Repack the store and prune what no session reaches, keeping objects younger than `grace`
    /// (a writer creates objects before it moves its ref: those must survive).
    ///
    /// Runs stock `git gc` under the store lock: repacking is git's own job and git does it well.
    /// With `progress`, git's own progress lines go to this process's stderr (the caller
    /// decides: a terminal, and not quiet).
    pub fn gc(&self, grace: Duration, progress: bool) -> Result<(), Error> {
        let _lock = self.lock(WRITE_DEADLINE)?;
        let prune = format!("--prune={}.seconds.ago", grace.as_secs());
        let started = std::time::Instant::now();
        if progress {
            // git gc shows progress when its stderr is a terminal, as this one is.
            self.git_shown(&["gc", &prune])?;
        } else {
            self.git(&["gc", "--quiet", &prune])?;
        }
        tracing::info!(
            store = %self.dir.display(),
            ms = started.elapsed().as_millis() as u64,
            "repacked; unreachable objects older than {} s pruned",
            grace.as_secs()
        );
        Ok(())
    }

    /// Repack when loose objects pile up (git's `gc --auto` heuristic), bounded in time because
    /// git only repacks what is loose. Call only off the hot path.
    pub(crate) fn maybe_gc(&self) -> Result<(), Error> {
        // Sample one fan-out folder as git does: ~27 objects there means ~6,700 loose objects.
        let sample = self.dir.join("objects").join("17");
        let count = std::fs::read_dir(&sample).map(|d| d.count()).unwrap_or(0);
        if count < 27 {
            return Ok(());
        }
        let Ok(_lock) = self.lock(Duration::from_millis(200)) else {
            return Ok(());
        };
        self.git(&["gc", "--auto", "--quiet"])
    }

    /// Store `objects` as one pack (`git index-pack` writes it and its index into the store):
    /// a step that records thousands of paths would otherwise write tens of thousands of loose
    /// objects, one file, rename and folder check each. The objects are readable once this
    /// returns, before any ref names them.
    pub(crate) fn write_pack<'a>(
        &self,
        objects: impl ExactSizeIterator<Item = (gix::objs::Kind, &'a [u8])>,
    ) -> Result<(), Error> {
        let count = u32::try_from(objects.len()).map_err(|_| Error::Io {
            op: "write a pack into",
            path: self.dir.clone(),
            source: std::io::Error::other("too many objects for one pack"),
        })?;
        let mut pack = self.pack_writer(count)?;
        for (kind, data) in objects {
            pack.add(kind, data)?;
        }
        pack.finish()
    }

    /// Start a pack of exactly `count` objects, written into the store by `git index-pack` as
    /// they are added ([`PackWriter::add`]): one object in memory at a time, however many the
    /// pack holds.
    pub(crate) fn pack_writer(&self, count: u32) -> Result<PackWriter, Error> {
        let mut child = git_command(&self.dir)
            .args([
                "-c",
                "core.fsync=pack,pack-metadata",
                "-c",
                "core.fsyncMethod=fsync",
            ])
            .args(["index-pack", "--stdin"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|source| Error::Io {
                op: "write a pack into",
                path: self.dir.clone(),
                source,
            })?;
        let stdin = child.stdin.take().expect("piped");
        let mut pack = PackWriter {
            child: Some(child),
            out: Some(std::io::BufWriter::with_capacity(1 << 20, stdin)),
            hasher: gix::hash::hasher(gix::hash::Kind::Sha1),
            left: count,
            z: Vec::new(),
            dir: self.dir.clone(),
            fsync: self.fsync(),
        };
        let mut header = b"PACK\0\0\0\x02".to_vec();
        header.extend_from_slice(&count.to_be_bytes());
        pack.emit(&header)?;
        Ok(pack)
    }

    fn git(&self, args: &[&str]) -> Result<(), Error> {
        self.git_with(args, false)
    }

    /// [`Store::git`] with git's stderr (its progress, its complaints) shown where this
    /// process's goes.
    fn git_shown(&self, args: &[&str]) -> Result<(), Error> {
        self.git_with(args, true)
    }

    fn git_with(&self, args: &[&str], shown: bool) -> Result<(), Error> {
        let stderr = if shown {
            std::process::Stdio::inherit()
        } else {
            std::process::Stdio::piped()
        };
        let out = git_command(&self.dir)
            .args([
                "-c",
                "gc.autoDetach=false",
                "-c",
                "core.logAllRefUpdates=always",
                // A repack writes the new pack before it deletes what it replaces: synced.
                "-c",
                "core.fsync=all",
                "-c",
                "core.fsyncMethod=fsync",
                "-c",
                BIG_FILE_THRESHOLD,
            ])
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(stderr)
            .output()
            .map_err(|source| Error::Io {
                op: "run git for",
                path: self.dir.clone(),
                source,
            })?;
        if out.status.success() {
            Ok(())
        } else {
            Err(Error::GitCommand {
                args: args.join(" "),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            })
        }
    }
}

/// The variables that point git at another repository, object store or config than the one
/// it is told of: git's own list (`git rev-parse --local-env-vars`), and the quarantine a
/// receive hook runs in. Set in a caller's environment (a git hook, a push's quarantine), they
/// would send a pack meant for the store into another object folder, or have `git gc` prune
/// that folder by the store's refs.
const REPO_ENV: [&str; 16] = [
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR",
    "GIT_QUARANTINE_PATH",
];

/// A `git` for the repository at `git_dir` and nothing else: none of the caller's variables
/// that point git elsewhere (`GIT_DIR`, `GIT_INDEX_FILE` and the rest), no system or user
/// config, and killed with the thread that starts it ([`crate::child::die_with_parent`]).
pub fn git_command(git_dir: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new("git");
    cmd.arg("--git-dir").arg(git_dir);
    for var in REPO_ENV {
        cmd.env_remove(var);
    }
    cmd.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null");
    crate::child::die_with_parent(&mut cmd);
    cmd
}

/// Blobs larger than this are read as a stream ([`blob_stream`]) wherever their bytes go
/// somewhere else whole (a file written, a digest): memory stays flat whatever their size.
pub(crate) const STREAM_FROM: u64 = 8 << 20;

/// The bytes of blob `id` in the repository at `git_dir`, `size` of them (from its header), as
/// a stream through `git cat-file`: git streams a blob above `core.bigFileThreshold` from its
/// loose file or its pack without holding it. A stream that ends early, goes past `size`, or
/// whose git fails, is a read error.
pub(crate) fn blob_stream(git_dir: &Path, id: ObjectId, size: u64) -> std::io::Result<BlobStream> {
    let mut child = git_command(git_dir)
        .args(["-c", BIG_FILE_THRESHOLD, "cat-file", "blob"])
        .arg(id.to_string())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let out = child.stdout.take().expect("piped");
    Ok(BlobStream {
        child,
        out,
        left: size,
    })
}

/// A blob read through `git cat-file` (see [`blob_stream`]).
pub(crate) struct BlobStream {
    child: std::process::Child,
    out: std::process::ChildStdout,
    left: u64,
}

impl std::io::Read for BlobStream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let n = self.out.read(buf)?;
        if n == 0 {
            let status = self.child.wait()?;
            if self.left != 0 || !status.success() {
                return Err(std::io::Error::other(format!(
                    "git cat-file ended {} bytes short of the blob ({status})",
                    self.left
                )));
            }
            return Ok(0);
        }
        self.left = self.left.checked_sub(n as u64).ok_or_else(|| {
            std::io::Error::other("git cat-file gave more bytes than the blob holds")
        })?;
        Ok(n)
    }
}

impl Drop for BlobStream {
    fn drop(&mut self) {
        // Abandoned mid-way: the git is stopped, not left writing into a pipe nobody reads.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What git packs whole, never comparing it with other objects for a delta: the first version of
/// a large file is what a session holds, and git's delta search is quadratic in the bytes of the
/// objects it compares. Two 200 MB files took pack-objects 55 s, nearly all of it spent
/// comparing one with the other, and ~400 MiB; above this size git also streams the blob from
/// the store rather than loading it. git's own default is 512 MiB.
pub(crate) const BIG_FILE_THRESHOLD: &str = "core.bigFileThreshold=16m";

/// A pack going into the store (see [`Store::pack_writer`]). Dropped before
/// [`PackWriter::finish`], it stores nothing: `git index-pack` sees the pack end early and
/// removes what it wrote.
pub(crate) struct PackWriter {
    child: Option<std::process::Child>,
    out: Option<std::io::BufWriter<std::process::ChildStdin>>,
    hasher: gix::hash::Hasher,
    left: u32,
    z: Vec<u8>,
    dir: PathBuf,
    fsync: bool,
}

/// How the store's packs are compressed. `git pack-objects` copies this data into every
/// artifact as it is, and `verify` inflates it. Level 1 (zlib-rs's quick strategy) codes every
/// block with fixed Huffman codes, even incompressible ones: random files came out 5% larger
/// than they went in, and inflated 5x slower than stored blocks. From level 2 on, a block that
/// does not compress is stored.
const PACK_COMPRESSION: i32 = 2;

impl PackWriter {
    /// Add one whole object; its id.
    pub(crate) fn add(&mut self, kind: gix::objs::Kind, data: &[u8]) -> Result<ObjectId, Error> {
        use std::io::Write;
        if self.left == 0 {
            return Err(self.io_err(std::io::Error::other("more objects than the pack counts")));
        }
        self.left -= 1;
        let id =
            gix::objs::compute_hash(gix::hash::Kind::Sha1, kind, data).map_err(|e| Error::Git {
                op: "hash an object",
                store: self.dir.clone(),
                source: gix::Error::from_error(e),
            })?;
        self.emit(&entry_header(kind, data.len() as u64))?;
        let mut z = std::mem::take(&mut self.z);
        z.clear();
        let level = gix_zlib::Compression::new(PACK_COMPRESSION).expect("a zlib level");
        let mut deflate = gix_zlib::stream::deflate::Write::new(&mut z, level);
        let deflated = deflate.write_all(data).and_then(|()| deflate.flush());
        drop(deflate);
        deflated.map_err(|e| self.io_err(e))?;
        let emitted = self.emit(&z);
        self.z = z;
        emitted?;
        Ok(id)
    }

    /// End the pack and wait for `git index-pack`: its objects are in the store, synced (with
    /// `stella.fsync`), and readable once this returns.
    pub(crate) fn finish(mut self) -> Result<(), Error> {
        use std::io::Write;
        if self.left != 0 {
            return Err(self.io_err(std::io::Error::other("fewer objects than the pack counts")));
        }
        let trailer = std::mem::replace(&mut self.hasher, gix::hash::hasher(gix::hash::Kind::Sha1))
            .try_finalize()
            .map_err(|e| self.io_err(std::io::Error::other(e.to_string())))?;
        let mut out = self.out.take().expect("open until finished");
        let written = out.write_all(trailer.as_bytes()).and_then(|()| out.flush());
        // Closing stdin ends the pack for index-pack.
        drop(out);
        let child = self.child.take().expect("running");
        let output = child.wait_with_output().map_err(|e| self.io_err(e))?;
        if !output.status.success() {
            return Err(Error::GitCommand {
                args: "index-pack --stdin".into(),
                stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            });
        }
        written.map_err(|e| self.io_err(e))?;
        // git synced the pack and its index; their names are durable once the folder is.
        if self.fsync {
            sync_dir(&self.dir.join("objects").join("pack"))?;
        }
        Ok(())
    }

    fn emit(&mut self, bytes: &[u8]) -> Result<(), Error> {
        use std::io::Write;
        self.hasher.update(bytes);
        let out = self.out.as_mut().expect("open until finished");
        out.write_all(bytes).map_err(|e| self.io_err(e))
    }

    fn io_err(&self, source: std::io::Error) -> Error {
        Error::Io {
            op: "write a pack into",
            path: self.dir.clone(),
            source,
        }
    }
}

impl Drop for PackWriter {
    fn drop(&mut self) {
        // Unfinished: index-pack reads a pack that ends early, fails and removes its files.
        drop(self.out.take());
        if let Some(mut child) = self.child.take() {
            let _ = child.wait();
        }
    }
}

/// A pack entry header for a whole object: type and size, as git writes it.
pub(crate) fn entry_header(kind: gix::objs::Kind, size: u64) -> Vec<u8> {
    let type_id: u8 = match kind {
        gix::objs::Kind::Commit => 1,
        gix::objs::Kind::Tree => 2,
        gix::objs::Kind::Blob => 3,
        gix::objs::Kind::Tag => 4,
    };
    let mut out = vec![(type_id << 4) | (size & 0x0f) as u8];
    let mut rest = size >> 4;
    while rest > 0 {
        *out.last_mut().expect("one byte") |= 0x80;
        out.push((rest & 0x7f) as u8);
        rest >>= 7;
    }
    out
}

/// A file whose read errors are noted, to tell them from errors in what it holds.
struct Reading {
    file: std::fs::File,
    failed: bool,
}

impl std::io::Read for Reading {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.file.read(buf).inspect_err(|e| {
            self.failed |= e.kind() != std::io::ErrorKind::Interrupted;
        })
    }
}

/// The id a loose object's bytes hash to, inflated through a fixed buffer; `None` when its
/// header is malformed or its size is not what follows. A deflate stream that does not inflate
/// is an error.
fn loose_object_hash(
    file: impl std::io::Read,
    kind: gix::hash::Kind,
) -> std::io::Result<Option<ObjectId>> {
    let mut input = std::io::BufReader::with_capacity(64 << 10, file);
    let mut state = gix_zlib::Decompress::new();
    let mut buf = vec![0u8; 64 << 10];
    let mut hasher = gix::hash::hasher(kind);
    // The header (`blob 123\0`) is short: kept until its NUL is seen.
    let mut header = Vec::new();
    let mut declared = None;
    let mut body = 0u64;
    loop {
        let n = gix_zlib::stream::inflate::read(&mut input, &mut state, &mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        let mut rest = &buf[..n];
        if declared.is_none() {
            match rest.iter().position(|b| *b == 0) {
                Some(nul) => {
                    header.extend_from_slice(&rest[..nul]);
                    let Ok((_, size, _)) =
                        gix::objs::decode::loose_header(&[&header[..], b"\0"].concat())
                    else {
                        return Ok(None);
                    };
                    declared = Some(size);
                    rest = &rest[nul + 1..];
                }
                None if header.len() + rest.len() > 64 => return Ok(None),
                None => {
                    header.extend_from_slice(rest);
                    rest = &[];
                }
            }
        }
        body += rest.len() as u64;
    }
    if declared != Some(body) {
        return Ok(None);
    }
    hasher
        .try_finalize()
        .map(Some)
        .map_err(|e| std::io::Error::other(e.to_string()))
}

fn lock_path(store_dir: &Path) -> PathBuf {
    store_dir.parent().unwrap_or(store_dir).join("store.lock")
}

/// Create the bare store atomically: build it in a temp folder beside, then rename, so a killed
/// init never leaves half a repository behind. Concurrent inits race on the rename; the loser's
/// copy is dropped.
fn init(dir: &Path) -> Result<(), Error> {
    let parent = dir.parent().unwrap_or(Path::new("."));
    fsutil::create_private_dir(parent, 0o700).map_err(|source| Error::Io {
        op: "create",
        path: parent.to_owned(),
        source,
    })?;
    let tmp = tempfile::Builder::new()
        .prefix(".store-init-")
        .tempdir_in(parent)
        .map_err(|source| Error::Io {
            op: "create a temp folder in",
            path: parent.to_owned(),
            source,
        })?;
    let staged = tmp.path().join("store.git");
    gix::init_bare(&staged).map_err(|e| Error::Git {
        op: "create the store",
        store: dir.to_owned(),
        source: e,
    })?;
    // Bare repositories are created with reflogs off; the journal wants them on, for plain git too.
    let config = staged.join("config");
    let mut text = std::fs::read_to_string(&config).map_err(|source| Error::Io {
        op: "read",
        path: config.clone(),
        source,
    })?;
    text.push_str("[core]\n\tlogAllRefUpdates = always\n");
    fsutil::write_atomic(&config, text.as_bytes(), 0o600).map_err(|source| Error::Io {
        op: "write",
        path: config.clone(),
        source,
    })?;
    // Every file and folder of the new store reaches the disk before its name does, and the name
    // right after: a power cut never leaves a store without its HEAD or config.
    fsutil::sync_tree(&staged).map_err(|source| Error::Io {
        op: "sync",
        path: staged.clone(),
        source,
    })?;
    match std::fs::rename(&staged, dir) {
        Ok(()) => {
            sync_dir(parent)?;
            // The workspace's own folder may be as new as the store.
            parent.parent().map_or(Ok(()), sync_dir)
        }
        // Another process won the race: its store is as good as ours.
        Err(_) if dir.join("HEAD").exists() => Ok(()),
        Err(source) => Err(Error::Io {
            op: "create the store",
            path: dir.to_owned(),
            source,
        }),
    }
}

/// The file at `path` opened for reading, `None` when there is none (a packed object).
fn open_existing(path: &Path) -> Result<Option<std::fs::File>, Error> {
    match std::fs::File::open(path) {
        Ok(f) => Ok(Some(f)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(Error::Io {
            op: "sync",
            path: path.to_owned(),
            source,
        }),
    }
}

/// `fsync` the file at `path`; `Ok(false)` when there is none (a packed object, no reflog).
fn sync_file(path: &Path) -> Result<bool, Error> {
    let io = |source| Error::Io {
        op: "sync",
        path: path.to_owned(),
        source,
    };
    match std::fs::File::open(path) {
        Ok(f) => f.sync_all().map(|()| true).map_err(io),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io(e)),
    }
}

/// `fsync` a folder, so the names created in it (a renamed-in ref, new objects) survive a power cut.
fn sync_dir(dir: &Path) -> Result<(), Error> {
    std::fs::File::open(dir)
        .and_then(|f| f.sync_all())
        .map_err(|source| Error::Io {
            op: "sync",
            path: dir.to_owned(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long guarded command writes a pack with each large step, all through one open store:
    /// every one of them stays readable, however many there are.
    #[test]
    fn an_open_store_reads_every_pack_written_since() {
        use gix::objs::FindExt as _;
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open_or_init(&tmp.path().join("store.git")).unwrap();
        let mut ids = Vec::new();
        for i in 0..80 {
            let data = format!("pack {i}\n").into_bytes();
            store
                .write_pack([(gix::objs::Kind::Blob, data.as_slice())].into_iter())
                .unwrap();
            let id = gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, &data)
                .unwrap();
            ids.push((id, data));
            // Read as the guard does between steps, so the store has seen the packs so far.
            let (id, data) = ids.last().unwrap();
            let mut buf = Vec::new();
            assert_eq!(
                store.objects().find_blob(id, &mut buf).unwrap().data,
                &data[..]
            );
        }
        for (id, data) in &ids {
            let mut buf = Vec::new();
            assert_eq!(
                store.objects().find_blob(id, &mut buf).unwrap().data,
                &data[..]
            );
        }
    }

    /// The slots are counted from the pack folder's names alone: twice the indexes on disk, at
    /// least 1,024, however many packs a store has gathered.
    #[test]
    fn an_open_store_has_room_for_twice_the_packs_on_disk() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("store.git");
        let given = |dir: &Path| match slots(dir) {
            gix::odb::store::init::Slots::Given(n) => n,
            other => panic!("{other:?}"),
        };
        assert_eq!(given(&dir), 1024, "no store yet");
        Store::open_or_init(&dir).unwrap();
        assert_eq!(given(&dir), 1024);
        let packs = dir.join("objects").join("pack");
        for i in 0..700 {
            for ext in ["idx", "pack", "rev"] {
                std::fs::write(packs.join(format!("pack-{i:040}.{ext}")), b"").unwrap();
            }
        }
        assert_eq!(given(&dir), 1400);
        std::fs::write(packs.join("multi-pack-index"), b"").unwrap();
        assert_eq!(given(&dir), 1402);
    }
}
