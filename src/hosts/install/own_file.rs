//! A file Stella writes whole for a host (OpenCode's plugin), marked by its first line so that
//! Stella never touches someone else's.

use std::path::Path;

use crate::fsutil::PathIo;

use super::{Error, Outcome, io_error};

/// Write `text`, a file of Stella's own whose first line is `mark` (OpenCode's plugin), at
/// `path`: created, or brought up to date when it is Stella's; a file of someone else's there is
/// an error, and stays as it is.
pub fn install_own_file(path: &Path, text: &str, mark: &str) -> Result<Outcome, Error> {
    let io = io_error;
    match std::fs::read(path) {
        Ok(bytes) if bytes == text.as_bytes() => return Ok(Outcome::Unchanged),
        Ok(bytes) if !bytes.starts_with(mark.as_bytes()) => {
            return Err(Error::NotOurs {
                path: path.to_owned(),
            });
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io("read", path)(e)),
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io("create", dir))?;
    }
    crate::fsutil::write_atomic(path, text.as_bytes(), 0o644).map_err(io("write", path))?;
    Ok(Outcome::Changed)
}

/// Remove the file of Stella's own at `path` (its first line `mark`), and the folders that
/// leaves empty up to `base`; a file of someone else's there stays.
pub fn uninstall_own_file(path: &Path, mark: &str, base: &Path) -> Result<Outcome, Error> {
    match std::fs::read(path) {
        Ok(bytes) if bytes.starts_with(mark.as_bytes()) => {}
        Ok(_) => {
            return Err(Error::NotOurs {
                path: path.to_owned(),
            });
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Outcome::Unchanged),
        Err(source) => {
            return Err(Error::Io(PathIo {
                op: "read",
                path: path.to_owned(),
                source,
            }));
        }
    }
    std::fs::remove_file(path).map_err(|source| {
        Error::Io(PathIo {
            op: "remove",
            path: path.to_owned(),
            source,
        })
    })?;
    let mut dir = path.parent();
    while let Some(d) = dir.filter(|d| d.starts_with(base) && *d != base) {
        if std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
    Ok(Outcome::Changed)
}
