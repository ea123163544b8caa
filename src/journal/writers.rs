//! The workspace-wide index of which sessions ever wrote each path: a filter in front of the
//! sessions' maps, so that a blind change asks only the sessions that wrote the path (SPEC
//! "Blind writes and uncommitted work"), whatever the number of sessions and of paths they hold.
//!
//! ```text
//! <store>/stella-writers/<blake3 of the path, hex>   one session id per line, appended
//! <store>/stella-writers/complete                    the index covers every session's steps
//! ```
//!
//! It only ever says "maybe": a session listed for a path is then looked up in its own map,
//! which is the truth. A line is appended when a step records a write (or a move onto the path),
//! before the step is committed; it is never removed (a dropped session or a later read costs
//! one map lookup). A store from before the index is indexed once, from every session's map,
//! when first asked.

use std::io::{self, Read as _, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::PathBuf;

use super::{Error, Journal, MapEdit, Step};
use crate::digest::Digest;
use crate::ids::SessionId;
use crate::paths::RelPath;

const DIR: &str = "stella-writers";
const COMPLETE: &str = "complete";

impl Journal<'_> {
    fn writers_dir(&self) -> PathBuf {
        self.store.dir().join(DIR)
    }

    fn writers_file(&self, path: &RelPath) -> PathBuf {
        self.writers_dir()
            .join(Digest::of(path.as_bytes()).to_hex())
    }

    /// Note that session `id` writes the paths `step` writes or moves onto.
    pub(super) fn note_writers(&self, id: &SessionId, step: &Step) -> Result<(), Error> {
        for edit in &step.map {
            let path = match edit {
                MapEdit::Put {
                    path, wrote: true, ..
                } => path,
                MapEdit::Move { to, .. } => to,
                _ => continue,
            };
            self.note_writer(id, path).map_err(|e| self.writers_io(e))?;
        }
        Ok(())
    }

    fn note_writer(&self, id: &SessionId, path: &RelPath) -> io::Result<()> {
        let file = self.writers_file(path);
        let open = || {
            std::fs::OpenOptions::new()
                .read(true)
                .append(true)
                .create(true)
                .mode(0o600)
                .open(&file)
        };
        let mut f = match open() {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                std::fs::create_dir_all(self.writers_dir())?;
                open()?
            }
            r => r?,
        };
        let mut known = String::new();
        f.read_to_string(&mut known)?;
        if known.lines().any(|l| l == id.as_str()) {
            return Ok(());
        }
        // One write of a short line to a file opened for appending: lines of two sessions
        // appending at once never interleave.
        f.write_all(format!("{id}\n").as_bytes())
    }

    /// The sessions that may have written `path` (a superset: each is to be looked up).
    pub(crate) fn writers_of(&self, path: &RelPath) -> Result<Vec<SessionId>, Error> {
        if !self.writers_dir().join(COMPLETE).exists() {
            self.index_writers()?;
        }
        let text = match std::fs::read_to_string(self.writers_file(path)) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(self.writers_io(e)),
        };
        Ok(text
            .lines()
            .filter_map(|l| SessionId::parse(l).ok())
            .collect())
    }

    /// Index every session's written paths, once: a store from before the index.
    fn index_writers(&self) -> Result<(), Error> {
        for (id, tip) in self.sessions()? {
            for entry in self.entries_of_tree(tip.tree)? {
                if entry.wrote.is_some() {
                    self.note_writer(&id, &entry.path)
                        .map_err(|e| self.writers_io(e))?;
                }
            }
        }
        std::fs::create_dir_all(self.writers_dir()).map_err(|e| self.writers_io(e))?;
        std::fs::write(self.writers_dir().join(COMPLETE), b"").map_err(|e| self.writers_io(e))
    }

    fn writers_io(&self, source: io::Error) -> Error {
        Error::Store(crate::store::Error::Io {
            op: "update the index of writers in",
            path: self.writers_dir(),
            source,
        })
    }
}
