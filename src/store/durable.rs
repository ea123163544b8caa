//! What a step needs on disk before it counts, and what a crash leaves: syncing loose objects
//! and folders, and finding and removing objects an earlier power cut left named but not whole.
//!
//! Apart from the refs, because it is about files and their bytes, not about where a ref points:
//! the refs, the pack writer and the store's creation all sync through it.

use std::path::Path;

use gix::ObjectId;

use super::{Error, Store};

impl Store {
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
pub(super) fn sync_file(path: &Path) -> Result<bool, Error> {
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
pub(super) fn sync_dir(dir: &Path) -> Result<(), Error> {
    std::fs::File::open(dir)
        .and_then(|f| f.sync_all())
        .map_err(|source| Error::Io {
            op: "sync",
            path: dir.to_owned(),
            source,
        })
}
