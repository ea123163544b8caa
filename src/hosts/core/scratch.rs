//! What a hook keeps between a tool's two events: notes and scratch files under the session's
//! private folder, by call key.

use super::*;

impl Hook {
    pub(super) fn notes_file(&self) -> PathBuf {
        self.scratch_dir().join("changed-during-commands.json")
    }

    pub(super) fn command_notes(&self) -> std::collections::BTreeMap<String, String> {
        crate::fsutil::read_optional(&self.notes_file())
            .ok()
            .flatten()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    pub(super) fn put_command_notes(
        &self,
        notes: &std::collections::BTreeMap<String, String>,
    ) -> Result<(), Error> {
        let text = serde_json::to_vec(notes).expect("a map serialises");
        self.put_scratch(&self.notes_file(), &text)
    }

    pub(super) fn changed_in_command(&self, path: &RelPath) -> Option<String> {
        self.command_notes().remove(path.to_lossy().as_ref())
    }

    pub(super) fn forget_command_notes(&self, paths: &[RelPath]) {
        if !self.notes_file().exists() {
            return;
        }
        let mut notes = self.command_notes();
        let before = notes.len();
        for p in paths {
            notes.remove(p.to_lossy().as_ref());
        }
        if notes.len() != before {
            let _ = self.put_command_notes(&notes);
        }
    }

    // --- Scratch state between a tool's before- and after-event.
    //
    // It lives in `.stella/private/hooks/<host>/<session>/`, not in the journal: it only means
    // something between the two events of one tool call in one live host process. If the host
    // dies in between, the after-event never comes and there is nothing to finish; what must
    // survive a crash (what the session saw) is recorded in the journal by the after-event.
    // Keeping it out of the journal also keeps a read to one step, not two; keeping it in the
    // work tree's private folder (which git ignores) keeps a read from opening the store.

    pub(super) fn scratch_dir(&self) -> PathBuf {
        self.root
            .join(".stella/private/hooks")
            .join(self.agent)
            .join(self.session.as_str())
    }

    /// The scratch file of `kind` for a tool call: by the host's call id, else by the path.
    pub(super) fn scratch_file(&self, kind: &str, key: Option<&str>, path: &RelPath) -> PathBuf {
        match key {
            Some(k) => self.scratch_file_for(kind, k),
            None => {
                let hex = Digest::of(path.to_lossy().as_bytes()).to_hex();
                self.scratch_file_for(kind, &format!("path-{}", &hex[..32]))
            }
        }
    }

    pub(super) fn scratch_file_for(&self, kind: &str, key: &str) -> PathBuf {
        self.scratch_dir()
            .join(format!("{kind}-{}", clean_key(key)))
    }

    pub(super) fn put_scratch(&self, file: &Path, bytes: &[u8]) -> Result<(), Error> {
        let dir = file.parent().expect("a scratch file has a folder");
        crate::fsutil::create_private_dir(dir, 0o700).map_err(|source| {
            Error::Io(PathIo {
                op: "create",
                path: dir.to_owned(),
                source,
            })
        })?;
        crate::fsutil::write_atomic(file, bytes, 0o600).map_err(|source| {
            Error::Io(PathIo {
                op: "write",
                path: file.to_owned(),
                source,
            })
        })
    }

    /// [`Hook::put_scratch`] for a note nothing depends on surviving a crash (a lost one only
    /// leaves a race unreported): written in place, not synced.
    pub(super) fn put_note(&self, file: &Path, bytes: &[u8]) -> Result<(), Error> {
        let dir = file.parent().expect("a scratch file has a folder");
        let failed = |op: &'static str, path: &Path, source| {
            Error::Io(PathIo {
                op,
                path: path.to_owned(),
                source,
            })
        };
        crate::fsutil::create_private_dir(dir, 0o700).map_err(|e| failed("create", dir, e))?;
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(file)
            .and_then(|mut f| std::io::Write::write_all(&mut f, bytes))
            .map_err(|e| failed("write", file, e))
    }

    /// Take (read and delete) a scratch file.
    pub(super) fn take_scratch(&self, file: &Path) -> Option<Vec<u8>> {
        let bytes = crate::fsutil::read_optional(file).ok().flatten();
        let _ = std::fs::remove_file(file);
        bytes
    }

    /// Keep `text`, a tool call the host runs without telling any hook when it is done (Codex
    /// applying an `apply_patch` heredoc itself), for the session's next hook call to settle
    /// with [`Hook::take_deferred`].
    pub(crate) fn defer(&self, key: &str, text: &str) -> Result<(), Error> {
        self.put_scratch(&self.scratch_file_for("deferred", key), text.as_bytes())
    }

    /// The calls [`Hook::defer`] kept for this session, taken (each is settled once).
    pub(crate) fn take_deferred(&self) -> Vec<String> {
        let Ok(dir) = std::fs::read_dir(self.scratch_dir()) else {
            return Vec::new();
        };
        let mut files: Vec<PathBuf> = dir
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("deferred-"))
            })
            .collect();
        files.sort_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
        files
            .iter()
            .filter_map(|f| self.take_scratch(f))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .collect()
    }
}

/// A host's call id as a file name: letters and digits kept, the rest `_`, at most 100.
pub(super) fn clean_key(key: &str) -> String {
    key.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(100)
        .collect()
}

/// Size, modification time and inode of a file, as a cheap "did it change" key.
pub(super) fn stat_key(path: &Path) -> serde_json::Value {
    use std::os::unix::fs::MetadataExt;
    match std::fs::metadata(path) {
        Ok(m) => serde_json::json!([m.len(), m.mtime(), m.mtime_nsec(), m.ino()]),
        Err(_) => serde_json::Value::Null,
    }
}
