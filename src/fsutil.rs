//! Small file-system helpers shared by the workspace, the store and guarded writes.

use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::digest::Digest;
use crate::paths::RelPath;

/// An I/O failure at a named path: `could not <op> '<path>'`, caused by the I/O error. The one
/// shape the error types that touch files share.
#[derive(Debug, thiserror::Error)]
#[error("could not {op} '{}'", .path.display())]
pub struct PathIo {
    pub(crate) op: &'static str,
    pub(crate) path: std::path::PathBuf,
    #[source]
    pub(crate) source: io::Error,
}

/// Create `dir` and its missing parents with `mode` (0700 for anything holding what agents read).
pub fn create_private_dir(dir: &Path, mode: u32) -> io::Result<()> {
    fs::DirBuilder::new().recursive(true).mode(mode).create(dir)
}

/// Replace `path` with `bytes` atomically: a temp file in the same folder, then a rename.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".stella-tmp-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(mode))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_data()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Create `path` exclusively with `bytes`; `Ok(false)` when it already exists.
pub(crate) fn create_new(path: &Path, bytes: &[u8], mode: u32) -> io::Result<bool> {
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
    {
        Ok(mut f) => {
            f.write_all(bytes)?;
            Ok(true)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

/// The digest of the regular file at `path`, hashed without holding it in memory. Anything else
/// is an error, found without waiting ([`open_regular`]).
pub(crate) fn digest_file(path: &Path) -> io::Result<Digest> {
    Digest::of_reader(open_regular(path)?)
}

/// Open the regular file at `path` for reading. Anything else (a FIFO, a device, a socket, a
/// folder) is an error found without waiting: a FIFO put where a file was must never hang Stella.
pub(crate) fn open_regular(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it is not a regular file",
        ));
    }
    Ok(file)
}

/// Read the regular file at `path` whole (see [`open_regular`]).
pub(crate) fn read_regular(path: &Path) -> io::Result<Vec<u8>> {
    let mut file = open_regular(path)?;
    let mut bytes = Vec::with_capacity(file.metadata()?.len() as usize);
    io::Read::read_to_end(&mut file, &mut bytes)?;
    Ok(bytes)
}

/// A reader of exactly `size` bytes: the size a streaming writer announces before the bytes (a
/// git object's header), taken from the file before it is read.
///
/// A file that ends before `size` or goes on past it changed while it was read: the read fails,
/// so the writer drops what it wrote rather than store bytes that do not match their header, and
/// [`Exact::changed`] tells that failure apart from an I/O error.
pub(crate) struct Exact<R> {
    inner: R,
    left: u64,
    changed: bool,
}

impl<R: io::Read> Exact<R> {
    pub(crate) fn new(inner: R, size: u64) -> Self {
        Exact {
            inner,
            left: size,
            changed: false,
        }
    }

    /// Whether the read failed because the file was not `size` bytes long.
    pub fn changed(&self) -> bool {
        self.changed
    }

    fn changed_error(&mut self) -> io::Error {
        self.changed = true;
        io::Error::other(CHANGED_WHILE_READ)
    }
}

/// What a file that changed size while it was streamed is refused with.
pub(crate) const CHANGED_WHILE_READ: &str = "it changed while it was read";

impl<R: io::Read> io::Read for Exact<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            // Where the size said the file ends, it must end.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(self.changed_error()),
            };
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        match self.inner.read(&mut buf[..want])? {
            0 => Err(self.changed_error()),
            n => {
                self.left -= n as u64;
                Ok(n)
            }
        }
    }
}

/// Read the regular file at `path` whole (see [`open_regular`]: anything else is an error,
/// never a wait), mapping "not found" to `None`.
pub(crate) fn read_optional(path: &Path) -> io::Result<Option<Vec<u8>>> {
    match read_regular(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// An exclusive `flock` on a file, released when dropped (and by the kernel when the process dies,
/// which is what makes it a sound owner for git's owner-less `.lock` files).
#[derive(Debug)]
pub(crate) struct FileLock {
    _file: File,
}

/// Why a lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The lock file could not be opened or created.
    #[error("could not open the lock file '{path}'")]
    Open {
        /// Where the lock file is.
        path: std::path::PathBuf,
        /// The I/O error that stopped it.
        #[source]
        source: io::Error,
    },
    /// Another process held the lock until the deadline ran out.
    #[error("another process held '{path}' for more than {waited:?}")]
    Timeout {
        /// Where the lock file is.
        path: std::path::PathBuf,
        /// How long this process waited.
        waited: Duration,
    },
}

impl FileLock {
    /// Take the lock, waiting up to `deadline` with a short backoff.
    pub(crate) fn acquire(path: &Path, deadline: Duration) -> Result<FileLock, LockError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)
            .map_err(|source| LockError::Open {
                path: path.to_owned(),
                source,
            })?;
        let start = Instant::now();
        let mut pause = Duration::from_micros(200);
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(FileLock { _file: file }),
                Err(fs::TryLockError::WouldBlock) => {}
                Err(fs::TryLockError::Error(source)) => {
                    return Err(LockError::Open {
                        path: path.to_owned(),
                        source,
                    });
                }
            }
            if start.elapsed() >= deadline {
                return Err(LockError::Timeout {
                    path: path.to_owned(),
                    waited: deadline,
                });
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(8));
        }
    }
}

/// How long a writer waits for another Stella writer's hold on a folder (held for microseconds:
/// a re-check and a rename) before it gives up.
const FOLDER_LOCK_WAIT: Duration = Duration::from_secs(5);

/// Why a path beneath the workspace cannot be written safely.
fn blocked(why: String) -> io::Error {
    io::Error::other(why)
}

/// Open the folder holding `rel` beneath `root`, one component at a time, never following a link
/// (`O_NOFOLLOW` on each component). Missing folders are created when `create`, else `Ok(None)`.
pub(crate) fn open_parent_beneath(
    root: &Path,
    rel: &RelPath,
    create: bool,
) -> io::Result<Option<OwnedFd>> {
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut dir = rustix::fs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let comps: Vec<&[u8]> = rel.as_bytes().split(|b| *b == b'/').collect();
    for (i, name) in comps[..comps.len() - 1].iter().enumerate() {
        let name = OsStr::from_bytes(name);
        match rustix::fs::openat(&dir, name, dir_flags, Mode::empty()) {
            Ok(fd) => dir = fd,
            Err(Errno::NOENT) if create => {
                match rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                }
                dir = rustix::fs::openat(&dir, name, dir_flags, Mode::empty())
                    .map_err(|e| blocked(format!("its folder could not be opened safely: {e}")))?;
            }
            Err(Errno::NOENT) => return Ok(None),
            Err(Errno::LOOP) | Err(Errno::NOTDIR) => {
                let at = String::from_utf8_lossy(&comps[..=i].join(&b'/')).into_owned();
                return Err(blocked(format!(
                    "'{}' is a symbolic link or a file where a folder must go",
                    crate::text::escape_controls(&at)
                )));
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(Some(dir))
}

/// The last component of `rel`.
pub(crate) fn file_name(rel: &RelPath) -> &OsStr {
    OsStr::from_bytes(
        rel.as_bytes()
            .rsplit(|b| *b == b'/')
            .next()
            .unwrap_or_default(),
    )
}

/// An exclusive hold on a folder, so that Stella's own writers into it take turns between their
/// last re-check and the change (a rename here; the shell guard's open, rename, unlink or
/// truncate); released when dropped. Other programs are not held back.
pub(crate) struct FolderHold<'a>(&'a OwnedFd);

impl<'a> FolderHold<'a> {
    pub(crate) fn take(dir: &'a OwnedFd) -> io::Result<FolderHold<'a>> {
        FolderHold::take_or(dir, || false).map(|h| h.expect("never gives way"))
    }

    /// Take the hold, waiting for another Stella writer's; `Ok(None)`, at once, when it is held
    /// and `give_way` says not to wait (the holder is the very process asking, for instance).
    pub(crate) fn take_or(
        dir: &'a OwnedFd,
        give_way: impl FnOnce() -> bool,
    ) -> io::Result<Option<FolderHold<'a>>> {
        let start = Instant::now();
        let mut pause = Duration::from_micros(100);
        let mut give_way = Some(give_way);
        loop {
            match rustix::fs::flock(dir, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => return Ok(Some(FolderHold(dir))),
                Err(Errno::WOULDBLOCK) if give_way.take().is_some_and(|g| g()) => {
                    return Ok(None);
                }
                Err(Errno::WOULDBLOCK) if back_off(start, FOLDER_LOCK_WAIT, &mut pause) => {}
                Err(Errno::WOULDBLOCK) => {
                    return Err(io::Error::new(
                        io::ErrorKind::WouldBlock,
                        format!(
                            "another Stella writer held its folder for more than {FOLDER_LOCK_WAIT:?}"
                        ),
                    ));
                }
                // File systems without flock (some network mounts): nothing to take turns on.
                Err(Errno::NOLCK) | Err(Errno::OPNOTSUPP) => return Ok(Some(FolderHold(dir))),
                Err(e) => return Err(e.into()),
            }
        }
    }
}

impl Drop for FolderHold<'_> {
    fn drop(&mut self) {
        let _ = rustix::fs::flock(self.0, rustix::fs::FlockOperation::Unlock);
    }
}

/// What is at a name in a folder, without following a link.
fn kind_at(dir: &OwnedFd, name: &OsStr) -> io::Result<Option<(FileType, u32)>> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some((
            FileType::from_raw_mode(st.st_mode),
            st.st_mode & 0o7777,
        ))),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The temp name a write of `name` uses while it swaps the file in. One name per target, so a
/// writer killed in that instant leaves at most one such file per path, and the next write of
/// the path takes it over (writers of one folder take turns, see [`FolderHold`]).
fn swap_name(name: &OsStr) -> std::ffi::OsString {
    let hash = blake3::hash(name.as_bytes()).to_hex();
    format!(".stella-tmp-{}", &hash[..16]).into()
}

/// Replace (or create) `root/rel` with `bytes` on Stella's behalf, never through a symlink and
/// never outside `root`: each folder is opened beneath `root` without following links (missing
/// ones are created), the bytes go to an anonymous `O_TMPFILE` so a process killed while writing
/// leaves nothing, `recheck` runs just before the new file takes the name (returning `false`
/// abandons the write with nothing changed), and an existing file's permissions are kept.
/// `Ok(false)` when `recheck` said no. Where the file system has no `O_TMPFILE`, a named temp
/// file of the writer's own in the same folder is used instead (a kill mid-write leaves it).
pub(crate) fn replace_beneath(
    root: &Path,
    rel: &RelPath,
    bytes: &[u8],
    recheck: impl FnOnce() -> bool,
) -> io::Result<bool> {
    replace_beneath_then(root, rel, bytes, recheck, || {})
}

/// [`replace_beneath`], running `placed` once the bytes took the name, still under the folder's
/// hold: what it does (recording the write) is done before another Stella writer, or a hook
/// looking for writers that raced it, can look at the file.
pub(crate) fn replace_beneath_then(
    root: &Path,
    rel: &RelPath,
    bytes: &[u8],
    recheck: impl FnOnce() -> bool,
    placed: impl FnOnce(),
) -> io::Result<bool> {
    replace_beneath_from(root, rel, &mut &bytes[..], |_| recheck(), placed)
}

/// What [`replace_beneath_checked`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Placed {
    /// The new file took the name.
    Written,
    /// `recheck` said no: nothing changed.
    Declined,
    /// The bytes did not hash to the digest they were to have: nothing changed.
    Damaged,
}

/// [`replace_beneath`] with bytes streamed from `from` (a version out of the store), so a large
/// file is written with flat memory, hashed on the way: only bytes whose digest is `digest` take
/// the name, and `recheck` runs for those alone. A read error abandons the write.
pub(crate) fn replace_beneath_checked(
    root: &Path,
    rel: &RelPath,
    from: impl io::Read,
    digest: Digest,
    recheck: impl FnOnce() -> bool,
) -> io::Result<Placed> {
    replace_beneath_checked_then(root, rel, from, digest, recheck, || {})
}

/// [`replace_beneath_checked`], running `placed` as [`replace_beneath_then`] does.
pub(crate) fn replace_beneath_checked_then(
    root: &Path,
    rel: &RelPath,
    from: impl io::Read,
    digest: Digest,
    recheck: impl FnOnce() -> bool,
    placed: impl FnOnce(),
) -> io::Result<Placed> {
    let mut damaged = false;
    let mut from = Digest::tee(from);
    let written = replace_beneath_from(
        root,
        rel,
        &mut from,
        |from| {
            damaged = from.digest() != digest;
            !damaged && recheck()
        },
        placed,
    )?;
    Ok(match (written, damaged) {
        (true, _) => Placed::Written,
        (false, true) => Placed::Damaged,
        (false, false) => Placed::Declined,
    })
}

/// While `limit` has not passed since `start`, wait `pause` (doubling, up to 4 ms) and say so:
/// the wait between two tries of a lock another process holds.
fn back_off(start: Instant, limit: Duration, pause: &mut Duration) -> bool {
    if start.elapsed() >= limit {
        return false;
    }
    std::thread::sleep(*pause);
    *pause = (*pause * 2).min(Duration::from_millis(4));
    true
}

/// How long a check waits for a guarded command to finish writing the file it checks.
pub(crate) const WRITING_WAIT: Duration = Duration::from_secs(2);

/// Mark `file`, just opened for writing on a guarded command's behalf, as being written: an
/// exclusive `flock` on its open file description, which lasts until the command's last
/// descriptor of it is closed. A file a command writes in place is empty or half written until
/// then, so a check of it in between would compare with bytes nobody meant ([`wait_written`]).
#[cfg_attr(not(shell_guard), allow(dead_code))]
pub(crate) fn mark_writing(file: &impl AsFd) {
    let _ = rustix::fs::flock(file, rustix::fs::FlockOperation::NonBlockingLockExclusive);
}

/// Wait until no guarded command is writing `name` in `dir` ([`mark_writing`]), up to
/// [`WRITING_WAIT`]: `Err` (`WouldBlock`) when one still is. A name that holds no regular file
/// has nothing to wait for.
pub(crate) fn wait_written(dir: &OwnedFd, name: &OsStr) -> io::Result<()> {
    match open_regular_at(dir, name) {
        Ok(Some((fd, _))) => wait_unmarked(&fd),
        _ => Ok(()),
    }
}

/// The digest of the regular file `name` in `dir` once no guarded command is writing it
/// ([`wait_written`]), read through the one descriptor the wait took: one open where a wait and
/// then a hash by path take three. `Ok(None)` when `name` holds something else (a symbolic link,
/// a FIFO, a folder), for the caller to look at the long way; `Err` `NotFound` when it holds
/// nothing, `WouldBlock` when a guarded command still writes it.
#[cfg_attr(not(shell_guard), allow(dead_code))]
pub(crate) fn digest_written(dir: &OwnedFd, name: &OsStr) -> io::Result<Option<Digest>> {
    let Some((fd, size)) = open_regular_at(dir, name)? else {
        return Ok(None);
    };
    wait_unmarked(&fd)?;
    Digest::of_file(File::from(fd), size).map(Some)
}

/// `name` in `dir` opened for reading when it is a regular file, without following a symbolic
/// link or waiting on a FIFO; `None` when it is something else.
pub(crate) fn open_regular_at(dir: &OwnedFd, name: &OsStr) -> io::Result<Option<(OwnedFd, u64)>> {
    let flags =
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let fd = match rustix::fs::openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::LOOP | Errno::NXIO) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let st = rustix::fs::fstat(&fd)?;
    let regular = FileType::from_raw_mode(st.st_mode).is_file();
    Ok(regular.then_some((fd, st.st_size as u64)))
}

/// Wait until no guarded command holds `fd`'s file marked as being written ([`mark_writing`]).
fn wait_unmarked(fd: &OwnedFd) -> io::Result<()> {
    let start = Instant::now();
    let mut pause = Duration::from_micros(100);
    loop {
        match rustix::fs::flock(fd, rustix::fs::FlockOperation::NonBlockingLockShared) {
            Ok(()) | Err(Errno::NOLCK) | Err(Errno::OPNOTSUPP) => return Ok(()),
            Err(Errno::WOULDBLOCK) if back_off(start, WRITING_WAIT, &mut pause) => {}
            Err(Errno::WOULDBLOCK) => {
                return Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    format!("a guarded command was still writing it after {WRITING_WAIT:?}"),
                ));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// [`wait_written`] for `rel` beneath `root`.
#[cfg_attr(not(shell_guard), allow(dead_code))]
pub(crate) fn wait_written_at(root: &Path, rel: &RelPath) -> io::Result<()> {
    match open_parent_beneath(root, rel, false) {
        Ok(Some(dir)) => wait_written(&dir, file_name(rel)),
        _ => Ok(()),
    }
}

/// [`replace_beneath`] with the bytes streamed from `from`; `recheck` is shown the reader once it
/// is drained. A read error abandons the write.
fn replace_beneath_from<R: io::Read>(
    root: &Path,
    rel: &RelPath,
    from: &mut R,
    recheck: impl FnOnce(&R) -> bool,
    placed: impl FnOnce(),
) -> io::Result<bool> {
    let dir = open_parent_beneath(root, rel, true)?.expect("folders are created");
    let name = file_name(rel);
    let existing_mode = match kind_at(&dir, name)? {
        None => None,
        Some((FileType::RegularFile, mode)) => Some(mode),
        Some((FileType::Symlink, _)) => return Err(blocked("it is a symbolic link".into())),
        Some((FileType::Directory, _)) => return Err(blocked("it is a folder".into())),
        Some(_) => return Err(blocked("it is not a regular file".into())),
    };
    // 0o666 lets the umask decide for a new file, as any editor's create would.
    let open_mode = Mode::from_raw_mode(0o666);
    let (file, named, swap) = match anonymous_in(&dir, open_mode)? {
        Some(file) => (file, false, swap_name(name)),
        // No anonymous file here: a named temp file of this writer's own, since it exists
        // before the folder hold is taken (a kill leaves it behind).
        None => {
            let mut swap = swap_name(name);
            swap.push(format!("-{}", crate::ids::random_hex(6)));
            let fd = rustix::fs::openat(
                &dir,
                &swap,
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                open_mode,
            )?;
            (File::from(fd), true, swap)
        }
    };
    let drop_named = || {
        if named {
            let _ = rustix::fs::unlinkat(&dir, &swap, AtFlags::empty());
        }
    };
    let filled = (|| {
        io::copy(from, &mut &file)?;
        if let Some(mode) = existing_mode {
            file.set_permissions(fs::Permissions::from_mode(mode))?;
        }
        Ok::<_, io::Error>(())
    })();
    if let Err(e) = filled {
        drop_named();
        return Err(e);
    }
    let _hold = FolderHold::take(&dir).inspect_err(|_| drop_named())?;
    // A file a guarded command is writing in place is compared once it is written.
    wait_written(&dir, name).inspect_err(|_| drop_named())?;
    if !recheck(from) {
        drop_named();
        return Ok(false);
    }
    if !named {
        let proc_path = anonymous_path(&file);
        let link = |to: &OsStr| {
            rustix::fs::linkat(
                rustix::fs::CWD,
                proc_path.as_str(),
                &dir,
                to,
                AtFlags::SYMLINK_FOLLOW,
            )
        };
        // A new file takes its name directly: nothing is ever visible under another name.
        if existing_mode.is_none() {
            match link(name) {
                Ok(()) => {
                    placed();
                    return Ok(true);
                }
                Err(Errno::EXIST) => {}
                Err(e) => return Err(e.into()),
            }
        }
        match link(&swap) {
            Ok(()) => {}
            Err(Errno::EXIST) => {
                // Left by a writer killed in this very step: take the name over.
                rustix::fs::unlinkat(&dir, &swap, AtFlags::empty())?;
                link(&swap)?;
            }
            Err(e) => return Err(e.into()),
        }
    }
    if let Err(e) = rustix::fs::renameat(&dir, &swap, &dir, name) {
        let _ = rustix::fs::unlinkat(&dir, &swap, AtFlags::empty());
        return Err(e.into());
    }
    placed();
    Ok(true)
}

/// Write a host's settings file the user asked Stella to edit (`hooks install`), with the same
/// primitive as every other write: an anonymous temp file, an atomic rename, the file's mode
/// kept. A settings file the user keeps as a symbolic link (a dotfile manager) is written where
/// the link points, the link kept: the link is the user's own choice, not an agent's.
pub(crate) fn write_settings_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => fs::canonicalize(path)?,
        _ => path.to_owned(),
    };
    let (Some(dir), Some(name)) = (target.parent(), target.file_name()) else {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    };
    create_private_dir(dir, 0o777)?;
    let name = RelPath::from_bytes(name.as_bytes())
        .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    replace_beneath(&dir.canonicalize()?, &name, bytes, || true).map(|_| ())
}

/// What [`remove_beneath`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Removed {
    /// What was at the path (a file, or a link itself) is gone.
    Done,
    /// Nothing was there.
    AlreadyGone,
    /// `recheck` said no; nothing was removed.
    Refused,
}

/// Remove `root/rel` on Stella's behalf: its folders opened beneath `root` without following
/// links; a symbolic link at `rel` is removed itself, like `rm(1)`, never its target. `recheck`
/// runs just before the removal, as for [`replace_beneath`].
pub(crate) fn remove_beneath(
    root: &Path,
    rel: &RelPath,
    recheck: impl FnOnce() -> bool,
) -> io::Result<Removed> {
    let Some(dir) = open_parent_beneath(root, rel, false)? else {
        return Ok(Removed::AlreadyGone);
    };
    let name = file_name(rel);
    if let Some((FileType::Directory, _)) = kind_at(&dir, name)? {
        return Err(blocked("it is a folder".into()));
    }
    let _hold = FolderHold::take(&dir)?;
    if !recheck() {
        return Ok(Removed::Refused);
    }
    match rustix::fs::unlinkat(&dir, name, AtFlags::empty()) {
        Ok(()) => Ok(Removed::Done),
        Err(Errno::NOENT) => Ok(Removed::AlreadyGone),
        Err(e) => Err(e.into()),
    }
}

/// Remove the folder `root/rel` if it is empty, on Stella's behalf: opened beneath `root`
/// without following links, so a link in its place is left alone. Whether it was removed.
pub(crate) fn remove_empty_folder_beneath(root: &Path, rel: &RelPath) -> io::Result<bool> {
    let Some(dir) = open_parent_beneath(root, rel, false)? else {
        return Ok(false);
    };
    match rustix::fs::unlinkat(&dir, file_name(rel), AtFlags::REMOVEDIR) {
        Ok(()) => Ok(true),
        Err(Errno::NOTEMPTY | Errno::EXIST | Errno::NOENT | Errno::NOTDIR) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Whether `fd` is the writing end of a pipe (or a socket) that nobody reads any more, as a
/// command's stdout is under `git stella log | head` once `head` has gone. A write that failed
/// with a broken pipe failed because of that reader only when this holds: a pipe of Stella's own
/// (to a `git` it runs) that broke is a failure like any other.
pub fn reader_gone(fd: std::os::fd::BorrowedFd<'_>) -> bool {
    use rustix::event::{PollFd, PollFlags};
    let mut fds = [PollFd::from_borrowed_fd(fd, PollFlags::OUT)];
    let zero = rustix::event::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    rustix::event::poll(&mut fds, Some(&zero)).is_ok()
        && fds[0].revents().intersects(PollFlags::ERR | PollFlags::HUP)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_whose_reader_closed_is_told_from_one_still_read() {
        let (reader, writer) = rustix::pipe::pipe().unwrap();
        assert!(!reader_gone(writer.as_fd()));
        drop(reader);
        assert!(reader_gone(writer.as_fd()));
        // A regular file is never a closed pipe.
        let file = tempfile::tempfile().unwrap();
        assert!(!reader_gone(file.as_fd()));
    }

    #[test]
    fn exact_reads_the_size_and_refuses_a_file_that_is_shorter_or_longer() {
        let copy = |bytes: &[u8], size| {
            let mut exact = Exact::new(bytes, size);
            let mut out = Vec::new();
            let r = io::copy(&mut exact, &mut out);
            (r.map_err(|e| e.to_string()), exact.changed())
        };
        assert_eq!(copy(b"abcd", 4), (Ok(4), false));
        assert_eq!(copy(b"", 0), (Ok(0), false));
        for (bytes, size) in [(&b"abc"[..], 4), (b"abcde", 4), (b"a", 0)] {
            assert_eq!(copy(bytes, size), (Err(CHANGED_WHILE_READ.into()), true));
        }
    }

    fn rel(s: &str) -> RelPath {
        RelPath::from_bytes(s.as_bytes()).unwrap()
    }

    fn setup() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let root = base.join("ws");
        let outside = base.join("outside");
        fs::create_dir_all(root.join("sub")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        (tmp, root, outside)
    }

    #[test]
    fn a_folder_swapped_for_a_link_mid_write_never_sends_the_write_outside() {
        let (_tmp, root, outside) = setup();
        fs::write(root.join("sub/f"), "old").unwrap();
        // The worst moment: after the folders were opened, just before the rename.
        let written = replace_beneath(&root, &rel("sub/f"), b"new", || {
            fs::rename(root.join("sub"), root.join("moved")).unwrap();
            std::os::unix::fs::symlink(&outside, root.join("sub")).unwrap();
            true
        })
        .unwrap();
        assert!(written);
        assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
        assert_eq!(fs::read(root.join("moved/f")).unwrap(), b"new");

        // A link where a folder must go is refused outright, for writes and deletes.
        let err = replace_beneath(&root, &rel("sub/g"), b"x", || true).unwrap_err();
        assert_eq!(
            err.to_string(),
            "'sub' is a symbolic link or a file where a folder must go"
        );
        assert!(remove_beneath(&root, &rel("sub/g"), || true).is_err());
        assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
    }

    #[test]
    fn the_last_component_is_never_written_through() {
        let (_tmp, root, outside) = setup();
        fs::write(outside.join("target"), "theirs").unwrap();
        std::os::unix::fs::symlink(outside.join("target"), root.join("sub/link")).unwrap();
        let err = replace_beneath(&root, &rel("sub/link"), b"x", || true).unwrap_err();
        assert_eq!(err.to_string(), "it is a symbolic link");
        assert_eq!(fs::read(outside.join("target")).unwrap(), b"theirs");
        // A delete removes the link itself, like rm(1).
        assert_eq!(
            remove_beneath(&root, &rel("sub/link"), || true).unwrap(),
            Removed::Done
        );
        assert!(root.join("sub/link").symlink_metadata().is_err());
        assert_eq!(fs::read(outside.join("target")).unwrap(), b"theirs");
    }

    #[test]
    fn a_refused_recheck_changes_nothing_and_leaves_nothing() {
        let (_tmp, root, _outside) = setup();
        fs::write(root.join("sub/f"), "old").unwrap();
        assert!(!replace_beneath(&root, &rel("sub/f"), b"new", || false).unwrap());
        assert!(!replace_beneath(&root, &rel("sub/new"), b"new", || false).unwrap());
        assert_eq!(
            remove_beneath(&root, &rel("sub/f"), || false).unwrap(),
            Removed::Refused
        );
        let names: Vec<_> = fs::read_dir(root.join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("f")]);
        assert_eq!(fs::read(root.join("sub/f")).unwrap(), b"old");
    }

    #[test]
    fn a_temp_name_left_by_a_killed_writer_is_taken_over() {
        use std::os::unix::fs::PermissionsExt;
        let (_tmp, root, _outside) = setup();
        fs::write(root.join("sub/f"), "old").unwrap();
        fs::set_permissions(root.join("sub/f"), fs::Permissions::from_mode(0o640)).unwrap();
        let left = root.join("sub").join(swap_name(OsStr::new("f")));
        fs::write(&left, "partial").unwrap();
        assert!(replace_beneath(&root, &rel("sub/f"), b"new", || true).unwrap());
        assert!(!left.exists());
        assert_eq!(fs::read(root.join("sub/f")).unwrap(), b"new");
        let mode = fs::metadata(root.join("sub/f"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o640);
        // Missing folders are created; a new file appears under its own name only.
        assert!(replace_beneath(&root, &rel("a/b/c"), b"c", || true).unwrap());
        assert_eq!(fs::read(root.join("a/b/c")).unwrap(), b"c");
        assert_eq!(fs::read_dir(root.join("a/b")).unwrap().count(), 1);
    }
}

/// A new file being written beside its final name, which it takes only when complete.
///
/// The bytes go to an anonymous `O_TMPFILE` in the target's folder: a process killed while
/// writing (SIGKILL runs no cleanup) leaves no file behind, not even a `.stella-tmp-*` that `git
/// add -A` would commit. [`NewFile::persist`] links it in under the final name. Where the file
/// system has no `O_TMPFILE`, a named temp file in the same folder is used instead, removed on
/// every path but a kill.
#[derive(Debug)]
pub struct NewFile {
    file: File,
    path: std::path::PathBuf,
    /// The named temp file, on file systems without `O_TMPFILE`.
    named: Option<std::path::PathBuf>,
}

impl NewFile {
    /// Start a new file that will be named `path`, created with `mode` (umask applied).
    pub fn create(path: &Path, mode: u32) -> io::Result<NewFile> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let folder = rustix::fs::open(
            dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        if let Some(file) = anonymous_in(&folder, Mode::from_raw_mode(mode))? {
            return Ok(NewFile {
                file,
                path: path.to_owned(),
                named: None,
            });
        }
        // No anonymous file here: a named temp file instead.
        let tmp = tempfile::Builder::new()
            .prefix(".stella-tmp-")
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(mode))
            .tempfile_in(dir)?;
        let (file, tmp_path) = tmp.keep().map_err(|e| e.error)?;
        Ok(NewFile {
            file,
            path: path.to_owned(),
            named: Some(tmp_path),
        })
    }

    /// The file to write into.
    pub fn file(&mut self) -> &mut File {
        &mut self.file
    }

    /// Give the file its name, replacing whatever held it.
    ///
    /// No `fsync`, like git's own writes by default: this guards against a killed process, not
    /// a power loss.
    pub fn persist(mut self) -> io::Result<()> {
        if let Some(tmp) = self.named.take() {
            return fs::rename(&tmp, &self.path).inspect_err(|_| {
                let _ = fs::remove_file(&tmp);
            });
        }
        // Straight to the final name when it is free; else under a temp name, then renamed over.
        match link_anonymous(&self.file, &self.path) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let tmp = dir.join(format!(".stella-tmp-{}", crate::ids::random_hex(6)));
        link_anonymous(&self.file, &tmp)?;
        fs::rename(&tmp, &self.path).inspect_err(|_| {
            let _ = fs::remove_file(&tmp);
        })
    }
}

impl Drop for NewFile {
    fn drop(&mut self) {
        if let Some(tmp) = self.named.take() {
            let _ = fs::remove_file(tmp);
        }
    }
}

/// Give the anonymous (`O_TMPFILE`) `file` the name `path`, which must not exist.
fn link_anonymous(file: &File, path: &Path) -> io::Result<()> {
    rustix::fs::linkat(
        rustix::fs::CWD,
        anonymous_path(file).as_str(),
        rustix::fs::CWD,
        path,
        AtFlags::SYMLINK_FOLLOW,
    )
    .map_err(io::Error::from)
}

/// The path that names an anonymous file for `linkat`.
fn anonymous_path(file: &File) -> String {
    format!("/proc/self/fd/{}", file.as_raw_fd())
}

/// `fsync` every file and folder under `dir`, folders after what they hold (a tree just built,
/// before it is renamed into place).
pub(crate) fn sync_tree(dir: &Path) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            sync_tree(&entry.path())?;
        } else if kind.is_file() {
            File::open(entry.path())?.sync_all()?;
        }
    }
    File::open(dir)?.sync_all()
}

/// Whether writes take the named-temp-file fallback even where Linux offers `O_TMPFILE`.
static NAMED_TEMP_FILES: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Make every write of this process take the fallback other systems run (a named temp file
/// beside the target, then a rename) even where Linux offers an anonymous `O_TMPFILE`: a test
/// switch (`STELLA_TEST_PORTABLE_FS=1`, read by the binaries) that keeps the fallback covered.
pub fn use_named_temp_files(on: bool) {
    NAMED_TEMP_FILES.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// An anonymous file in the folder `dir` (Linux's `O_TMPFILE`), created with `mode` (umask
/// applied): a process killed while writing it leaves nothing behind. `None` where there is no
/// such thing — another system, a file system or kernel without it, or the test switch
/// [`use_named_temp_files`].
fn anonymous_in(dir: impl rustix::fd::AsFd, mode: Mode) -> io::Result<Option<File>> {
    if NAMED_TEMP_FILES.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(None);
    }
    #[cfg(target_os = "linux")]
    match rustix::fs::openat(
        dir,
        ".",
        OFlags::RDWR | OFlags::TMPFILE | OFlags::CLOEXEC,
        mode,
    ) {
        Ok(fd) => return Ok(Some(File::from(fd))),
        Err(Errno::OPNOTSUPP | Errno::ISDIR | Errno::INVAL) => {}
        Err(e) => return Err(e.into()),
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (dir, mode);
    Ok(None)
}

#[cfg(test)]
mod new_file_tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_new_file_has_no_name_until_it_is_persisted() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("out.bundle");
        let mut f = NewFile::create(&path, 0o600).unwrap();
        f.file().write_all(b"partial").unwrap();
        assert!(names(tmp.path()).is_empty());
        drop(f);
        assert!(
            names(tmp.path()).is_empty(),
            "an abandoned file leaves nothing"
        );

        let mut f = NewFile::create(&path, 0o600).unwrap();
        f.file().write_all(b"one").unwrap();
        f.persist().unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"one");
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        // Over an existing file: replaced whole, nothing else left.
        let mut f = NewFile::create(&path, 0o600).unwrap();
        f.file().write_all(b"two").unwrap();
        f.persist().unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert_eq!(names(tmp.path()), ["out.bundle"]);
    }
}
