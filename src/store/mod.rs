//! The private journal store: one bare git repository per workspace, outside the working tree.
//!
//! Every ref update is a compare-and-swap (the expected old value must match) retried on the new
//! tip until a deadline. Writers also hold an `flock` on `<id dir>/store.lock` while they move a
//! ref. Git's own `<ref>.lock` files carry no owner, so a process killed while holding one would
//! wedge the ref forever; because every Stella writer holds the flock while such a file can exist,
//! a `.lock` seen while holding the flock belongs to a dead process and is removed. The kernel
//! drops an flock when its process dies, so the flock itself can never go stale.
//!
//! The store is one type, [`Store`], whose methods live in a room each by what they are for:
//! opening it, its leases and its lock here; moving and reading refs in `refs`; what makes a step
//! durable, and what a crash leaves, in `durable`; running git on it in `git`; and writing
//! objects into it as a pack in `pack`.

mod durable;
mod git;
mod pack;
mod refs;

pub use git::git_command;
pub(crate) use git::{BIG_FILE_THRESHOLD, STREAM_FROM, blob_stream};
pub(crate) use pack::{PackWriter, entry_header};
pub(crate) use refs::ReflogEntry;

use std::path::{Path, PathBuf};
use std::time::Duration;

use gix::ObjectId;

use crate::fsutil::{self, FileLock, LockError};
use durable::sync_dir;

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

/// An open journal store.
///
/// Reads go straight to the object database and the ref files. The full repository (its config,
/// which a write needs for its reflog settings, and gix's tree editing) is opened on first use:
/// opening it was a fifth of the guard's time, and the guard only reads.
pub struct Store {
    /// Opened on first use too: a command that reads no object (a guarded `true`, a hook that
    /// finds nothing to check) neither lists the packs nor tears their handles down at exit.
    objects: std::cell::OnceCell<gix::odb::Handle>,
    refs: gix::refs::file::Store,
    repo: std::cell::OnceCell<gix::Repository>,
    /// How many pack indexes it can hold ([`slots`]), for the repository opened on it too.
    slots: std::cell::OnceCell<gix::odb::store::init::Slots>,
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
    let on_disk = in_pack_folder(dir, |name| {
        name.ends_with(b".idx") || name == b"multi-pack-index"
    });
    gix::odb::store::init::Slots::Given(
        u16::try_from(on_disk.saturating_mul(2).max(1024)).unwrap_or(u16::MAX),
    )
}

/// The folder of the packs of the store at `dir`.
fn pack_folder(dir: &Path) -> PathBuf {
    dir.join("objects").join("pack")
}

/// How many files of the store at `dir`'s pack folder have a name `counted` takes, in one
/// listing of the folder (none when it cannot be read).
fn in_pack_folder(dir: &Path, counted: impl Fn(&[u8]) -> bool) -> usize {
    std::fs::read_dir(pack_folder(dir)).map_or(0, |entries| {
        entries
            .filter_map(Result::ok)
            .filter(|e| counted(e.file_name().as_encoded_bytes()))
            .count()
    })
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
            objects: std::cell::OnceCell::new(),
            refs,
            repo: std::cell::OnceCell::new(),
            slots: std::cell::OnceCell::new(),
            dir: dir.to_owned(),
            lock_path: lock_path(dir),
            opened: std::time::SystemTime::now(),
        })
    }

    /// How many pack indexes the store's handles hold ([`slots`]), counted once.
    fn slots(&self) -> gix::odb::store::init::Slots {
        *self.slots.get_or_init(|| slots(&self.dir))
    }

    /// The object database, for reads, opened on first use.
    pub(crate) fn objects(&self) -> Result<&gix::odb::Handle, Error> {
        if let Some(objects) = self.objects.get() {
            return Ok(objects);
        }
        let objects = gix::odb::at_opts(
            self.dir.join("objects"),
            gix::hash::Kind::Sha1,
            None,
            gix::odb::store::init::Options {
                slots: self.slots(),
                ..Default::default()
            },
        )
        .map_err(|source| Error::Io {
            op: "open the objects of",
            path: self.dir.clone(),
            source,
        })?;
        Ok(self.objects.get_or_init(|| objects))
    }

    /// The store as a repository, opened on first use.
    pub fn repo(&self) -> Result<&gix::Repository, Error> {
        if let Some(repo) = self.repo.get() {
            return Ok(repo);
        }
        // Isolated: a broken ~/.gitconfig or a system config must not break Stella.
        let options = gix::open::Options::isolated()
            .object_store_slots(self.slots())
            .config_overrides([
                "core.logAllRefUpdates=always",
                // Stale ref locks are cleared under the store flock; never wait on one.
                "core.filesRefLockTimeout=0",
            ]);
        let mut repo = gix::open_opts(&self.dir, options).map_err(|e| Error::Git {
            op: "open",
            store: self.dir.clone(),
            source: e,
        })?;
        // One object database for reads and writes: each maps every pack and index it reads,
        // and a command that reads 100,000 files for the first time had them all mapped twice
        // (gix opens its own lazily, so the one it opened never reads a file).
        repo.objects = gix::OdbHandle::new(self.objects()?.clone(), gix::hash::Kind::Sha1)
            .with_write_passthrough();
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

    /// The folder of the store's packs.
    pub(crate) fn pack_dir(&self) -> PathBuf {
        pack_folder(&self.dir)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A long guarded command writes a pack with each large step, all through one open store:
    /// every one of them stays readable, however many there are.
    #[test]
    fn an_open_store_reads_every_pack_written_since() {
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
            assert_eq!(blob_of(&store, id), &data[..]);
        }
        for (id, data) in &ids {
            assert_eq!(blob_of(&store, id), &data[..]);
        }
    }

    /// Reads and writes share one object database: a pack read through both is mapped into
    /// memory once, and an object written through the repository reads back through the
    /// read handle.
    #[cfg(target_os = "linux")]
    #[test]
    fn reads_and_writes_share_one_object_database() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open_or_init(&tmp.path().join("store.git")).unwrap();
        let data = b"one mapping\n";
        store
            .write_pack([(gix::objs::Kind::Blob, &data[..])].into_iter())
            .unwrap();
        let id =
            gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, data).unwrap();
        assert_eq!(blob_of(&store, &id), data);
        let repo = store.repo().unwrap();
        assert_eq!(&repo.find_object(id).unwrap().data[..], data);
        let pack = std::fs::read_dir(tmp.path().join("store.git/objects/pack"))
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "pack"))
            .unwrap();
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let mapped = maps
            .lines()
            .filter(|l| l.ends_with(pack.to_str().unwrap()))
            .count();
        assert_eq!(mapped, 1, "{maps}");
        let loose = repo.write_blob(b"written loose\n").unwrap().detach();
        assert_eq!(blob_of(&store, &loose), b"written loose\n");
    }

    /// Objects of every size, compressible or not, go into a pack git reads whole, and read
    /// back as they went in (each is deflated with a window sized to it).
    #[test]
    fn a_pack_holds_objects_of_every_size_as_git_reads_them() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open_or_init(&tmp.path().join("store.git")).unwrap();
        let mut objects = Vec::new();
        for len in [
            0, 1, 100, 250, 255, 256, 511, 512, 513, 4095, 8192, 40_000, 300_000,
        ] {
            let mut noise = vec![0u8; len];
            getrandom::fill(&mut noise).unwrap();
            let text: Vec<u8> = (0..len).map(|i| b"ab\n"[i % 3]).collect();
            objects.push(noise);
            objects.push(text);
        }
        write_blobs(&store, &objects).unwrap();
        for o in &objects {
            let id =
                gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, o).unwrap();
            assert_eq!(blob_of(&store, &id), &o[..]);
        }
        let fsck = std::process::Command::new("git")
            .arg("--git-dir")
            .arg(store.dir())
            .args(["fsck", "--strict", "--full"])
            .output()
            .unwrap();
        assert!(fsck.status.success(), "{fsck:?}");
        // Random bytes are stored, not coded: the pack is barely larger than what went in.
        let pack: u64 = std::fs::read_dir(tmp.path().join("store.git/objects/pack"))
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "pack"))
            .map(|e| e.metadata().unwrap().len())
            .sum();
        let noise: usize = objects.iter().step_by(2).map(Vec::len).sum();
        assert!(
            pack < noise as u64 * 101 / 100 + 4096,
            "{pack} for {noise} random bytes"
        );
    }

    /// The bytes of blob `id`, read through the store's object database.
    fn blob_of(store: &Store, id: &gix::oid) -> Vec<u8> {
        use gix::objs::FindExt as _;
        let mut buf = Vec::new();
        store
            .objects()
            .unwrap()
            .find_blob(id, &mut buf)
            .unwrap()
            .data
            .to_vec()
    }

    /// `objects`, as blobs, in one pack.
    fn write_blobs(store: &Store, objects: &[Vec<u8>]) -> Result<(), Error> {
        let blobs: Vec<_> = objects
            .iter()
            .map(|o| (gix::objs::Kind::Blob, o.as_slice()))
            .collect();
        store.write_pack(blobs.into_iter())
    }

    /// `git index-pack` failing while a pack streams into it (here: the pack folder is a file,
    /// as good as a full disk) is an error that says what git said, never a closed pipe, which
    /// the command line would take for a reader that went away and end quietly.
    #[test]
    fn a_pack_git_stops_reading_fails_with_what_git_said() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("store.git");
        let store = Store::open_or_init(&dir).unwrap();
        let packs = dir.join("objects").join("pack");
        std::fs::remove_dir_all(&packs).unwrap();
        std::fs::write(&packs, b"not a folder").unwrap();
        let mut objects = Vec::new();
        for _ in 0..64 {
            let mut noise = vec![0u8; 64 << 10];
            getrandom::fill(&mut noise).unwrap();
            objects.push(noise);
        }
        let err = write_blobs(&store, &objects).unwrap_err();
        assert!(matches!(err, Error::GitCommand { .. }), "{err:?}");
        let mut next: Option<&(dyn std::error::Error + 'static)> = Some(&err);
        while let Some(e) = next {
            let io = e.downcast_ref::<std::io::Error>();
            assert!(
                io.is_none_or(|io| io.kind() != std::io::ErrorKind::BrokenPipe),
                "{err:?}"
            );
            next = e.source();
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
