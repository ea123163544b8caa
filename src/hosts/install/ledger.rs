//! Install into and uninstall from a host's settings file, with the record of what install
//! changed ([`Ledger`]), so that uninstall gives back an untouched file byte for byte.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::digest::Digest;
use crate::fsutil::PathIo;
use crate::jsonedit::{self, Edit};

use super::settings::{HooksFile, holds_nothing, merge, parse, read_text, strip};
use super::{Error, Outcome, io_error};

/// Where `hooks install` keeps what it changed: a small JSON file outside the settings files
/// (`.stella/private/` for a repository's, the data dir for the user's). Paths in it are
/// relative to `base` (the repository's root, or the home folder), so a moved checkout keeps
/// its record.
pub struct Ledger {
    /// The ledger's own file ([`LEDGER_FILE`] in its folder).
    pub file: PathBuf,
    /// The folder the paths in it are relative to.
    pub base: PathBuf,
}

/// The name of the ledger file.
pub const LEDGER_FILE: &str = "hooks-installed.json";

#[derive(Default, Serialize, Deserialize)]
struct LedgerData {
    /// Per settings file: what install did to it.
    #[serde(default)]
    files: BTreeMap<String, FileRecord>,
    /// Folders install created for a settings file. Uninstall removes each one once it is empty.
    #[serde(default)]
    folders: BTreeSet<String>,
}

#[derive(Serialize, Deserialize)]
struct FileRecord {
    /// The BLAKE3 digest of the bytes install wrote: `undo` holds only while the file has them.
    installed: String,
    /// The edits that turn those bytes back into the file before Stella's first install.
    undo: Vec<Edit>,
    /// Whether Stella's first install created the file.
    created: bool,
}

impl Ledger {
    fn key(&self, path: &Path) -> String {
        path.strip_prefix(&self.base)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    }

    fn load(&self) -> Result<LedgerData, Error> {
        let Some(bytes) =
            crate::fsutil::read_optional(&self.file).map_err(io_error("read", &self.file))?
        else {
            return Ok(LedgerData::default());
        };
        serde_json::from_slice(&bytes).map_err(|e| {
            Error::Io(PathIo {
                op: "read",
                path: self.file.clone(),
                source: io::Error::new(io::ErrorKind::InvalidData, e),
            })
        })
    }

    /// Save `data`; an empty ledger is removed.
    fn save(&self, data: &LedgerData) -> Result<(), Error> {
        if data.files.is_empty() && data.folders.is_empty() {
            return match std::fs::remove_file(&self.file) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    Err(io_error("remove", &self.file)(e))
                }
                _ => Ok(()),
            };
        }
        if let Some(dir) = self.file.parent() {
            crate::fsutil::create_private_dir(dir, 0o700).map_err(io_error("create", dir))?;
        }
        let text = serde_json::to_vec_pretty(data).expect("a ledger serialises");
        crate::fsutil::write_atomic(&self.file, &text, 0o600).map_err(io_error("write", &self.file))
    }
}

fn digest(text: &str) -> String {
    Digest::of(text.as_bytes()).to_hex()
}

/// What [`install`] did.
#[derive(Debug)]
pub struct Installed {
    /// Whether the file changed.
    pub outcome: Outcome,
    /// A shell prefix of the user's that was kept: Bash commands then run without the shell
    /// guard, which the caller says.
    pub foreign_prefix: Option<String>,
}

/// Merge Stella's entries into the settings file, editing nothing else. Twice is the same as
/// once: entries already in place are left where they are.
pub fn install(file: &HooksFile, ledger: &Ledger) -> Result<Installed, Error> {
    let path = &file.path;
    let before = read_text(path)?;
    let mut doc = parse(file, before.clone().unwrap_or_default())?;
    let foreign_prefix = merge(&mut doc, file)?;
    if before.as_deref() == Some(doc.text()) {
        return Ok(Installed {
            outcome: Outcome::Unchanged,
            foreign_prefix,
        });
    }
    let mut data = ledger.load()?;
    let key = ledger.key(path);
    let mut undo = doc.undo().to_vec();
    let mut created = before.is_none();
    if let (Some(b), Some(prior)) = (&before, data.files.remove(&key)) {
        // Nothing changed since the last install: its undo still applies after this one's.
        if prior.installed == digest(b) {
            undo.extend(prior.undo);
        }
        created = prior.created;
    }
    data.files.insert(
        key,
        FileRecord {
            installed: digest(doc.text()),
            undo,
            created,
        },
    );
    if before.is_none() {
        let mut dir = path.parent();
        while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
            data.folders.insert(ledger.key(d));
            dir = d.parent();
        }
    }
    ledger.save(&data)?;
    crate::fsutil::write_settings_file(path, doc.text().as_bytes())
        .map_err(io_error("write", path))?;
    Ok(Installed {
        outcome: Outcome::Changed,
        foreign_prefix,
    })
}

/// Take Stella's entries out of the settings file, and nothing else. When the file is as install
/// left it, the ledger's record gives back the file as it was before, to the byte; otherwise each
/// of Stella's entries is taken out with what held only it. A file that then holds nothing is
/// removed when Stella created it (or nothing says who did); a symbolic link never is. Folders
/// install created are removed once empty.
pub fn uninstall(file: &HooksFile, ledger: &Ledger) -> Result<Outcome, Error> {
    let path = &file.path;
    let mut data = ledger.load()?;
    let key = ledger.key(path);
    let record = data.files.remove(&key);
    let mut outcome = Outcome::Unchanged;
    if let Some(text) = read_text(path)? {
        let restored = record
            .as_ref()
            .filter(|r| r.installed == digest(&text))
            .and_then(|r| jsonedit::apply(&text, &r.undo))
            .filter(|t| t.trim().is_empty() || file.parse_text(t.clone()).is_ok());
        let base = restored.unwrap_or_else(|| text.clone());
        let cleaned = if base.trim().is_empty() {
            base
        } else {
            strip(parse(file, base)?, file)
        };
        if cleaned != text {
            let created = record.as_ref().is_none_or(|r| r.created);
            let link = path.symlink_metadata().is_ok_and(|m| m.is_symlink());
            if created && !link && holds_nothing(&cleaned, file.header.as_ref()) {
                std::fs::remove_file(path).map_err(io_error("remove", path))?;
            } else {
                crate::fsutil::write_settings_file(path, cleaned.as_bytes())
                    .map_err(io_error("write", path))?;
            }
            outcome = Outcome::Changed;
        }
    }
    // Folders Stella created, deepest first, once nothing is left in them.
    let mut folders: Vec<String> = data.folders.iter().cloned().collect();
    folders.sort_by_key(|f| std::cmp::Reverse(Path::new(f).components().count()));
    let mut pruned = false;
    for f in folders {
        let dir = ledger.base.join(&f);
        match std::fs::remove_dir(&dir) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {}
            _ => pruned |= data.folders.remove(&f),
        }
    }
    if record.is_some() || pruned {
        ledger.save(&data)?;
    }
    Ok(outcome)
}
