//! Small file-system helpers shared by the workspace, the store and guarded writes.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

/// Create `dir` and its missing parents with `mode` (0700 for anything holding what agents read).
pub fn create_private_dir(dir: &Path, mode: u32) -> io::Result<()> {
    fs::DirBuilder::new().recursive(true).mode(mode).create(dir)
}

/// Replace `path` with `bytes` atomically: a temp file in the same folder, then a rename.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
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
pub fn create_new(path: &Path, bytes: &[u8], mode: u32) -> io::Result<bool> {
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

/// Read `path`, mapping "not found" to `None`.
pub fn read_optional(path: &Path) -> io::Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// An exclusive `flock` on a file, released when dropped (and by the kernel when the process dies,
/// which is what makes it a sound owner for git's owner-less `.lock` files).
#[derive(Debug)]
pub struct FileLock {
    _file: File,
}

/// Why a lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("could not open the lock file '{path}'")]
    Open {
        path: std::path::PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("another process held '{path}' for more than {waited:?}")]
    Timeout {
        path: std::path::PathBuf,
        waited: Duration,
    },
}

impl FileLock {
    /// Take the lock, waiting up to `deadline` with a short backoff.
    pub fn acquire(path: &Path, deadline: Duration) -> Result<FileLock, LockError> {
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

/// Replace (or create) `path` with `bytes` atomically, keeping an existing file's permissions.
///
/// The bytes go to an anonymous `O_TMPFILE` in the same folder, so a process killed while writing
/// leaves nothing behind; `recheck` runs just before the file is linked in and renamed over
/// `path`, and returning `false` from it abandons the write with nothing changed. Where the file
/// system has no `O_TMPFILE`, a named temp file in the same folder is used instead.
pub fn replace_file(path: &Path, bytes: &[u8], recheck: impl FnOnce() -> bool) -> io::Result<bool> {
    use std::os::unix::fs::PermissionsExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    let existing_mode = match fs::metadata(path) {
        Ok(m) => Some(m.permissions().mode() & 0o7777),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let tmp_name = dir.join(format!(".stella-tmp-{}", crate::ids::random_hex(6)));
    // 0o666 lets the umask decide for a new file, as any editor's create would.
    let open_mode = 0o666;

    let anon = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_TMPFILE)
        .mode(open_mode)
        .open(dir);
    let named = match anon {
        Ok(mut file) => {
            file.write_all(bytes)?;
            if let Some(mode) = existing_mode {
                file.set_permissions(fs::Permissions::from_mode(mode))?;
            }
            if !recheck() {
                return Ok(false);
            }
            use std::os::fd::AsRawFd;
            let proc_path = std::ffi::CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))
                .expect("no NUL in a /proc path");
            let target = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(
                tmp_name.as_os_str(),
            ))
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
            // SAFETY: both paths are valid NUL-terminated strings that outlive the call.
            let rc = unsafe {
                libc::linkat(
                    libc::AT_FDCWD,
                    proc_path.as_ptr(),
                    libc::AT_FDCWD,
                    target.as_ptr(),
                    libc::AT_SYMLINK_FOLLOW,
                )
            };
            if rc != 0 {
                return Err(io::Error::last_os_error());
            }
            true
        }
        // No O_TMPFILE here (some file systems, older kernels): a named temp file instead.
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP) | Some(libc::EISDIR) | Some(libc::EINVAL)
            ) =>
        {
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(open_mode)
                .open(&tmp_name)?;
            let written = (|| {
                file.write_all(bytes)?;
                if let Some(mode) = existing_mode {
                    file.set_permissions(fs::Permissions::from_mode(mode))?;
                }
                Ok::<_, io::Error>(())
            })();
            if let Err(e) = written {
                let _ = fs::remove_file(&tmp_name);
                return Err(e);
            }
            if !recheck() {
                let _ = fs::remove_file(&tmp_name);
                return Ok(false);
            }
            true
        }
        Err(e) => return Err(e),
    };
    debug_assert!(named);
    if let Err(e) = fs::rename(&tmp_name, path) {
        let _ = fs::remove_file(&tmp_name);
        return Err(e);
    }
    Ok(true)
}

/// Replace (or create) `root/rel` with `bytes` on Stella's behalf, never through a symlink and
/// never outside `root`: missing folders are created, `recheck` runs just before the new file
/// takes the name (returning `false` abandons the write with nothing changed), and an existing
/// file's permissions are kept. `Ok(false)` when `recheck` said no.
pub fn replace_beneath(
    root: &Path,
    rel: &crate::paths::RelPath,
    bytes: &[u8],
    recheck: impl FnOnce() -> bool,
) -> io::Result<bool> {
    let abs = rel.under(root);
    if let Some(parent) = abs.parent() {
        fs::create_dir_all(parent)?;
    }
    replace_file(&abs, bytes, recheck)
}
