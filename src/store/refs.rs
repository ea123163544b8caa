//! Moving and reading the store's refs: every update a compare-and-swap under the store lock,
//! the reflogs that say how a ref moved, and the repairs of what a killed writer or a power cut
//! left (stale `.lock` files, a torn ref file).
//!
//! Apart from opening the store, because this is where a reader looks for the rule that no two
//! writers lose each other's steps.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use gix::ObjectId;
use gix::bstr::BString;
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
use gix::refs::{FullName, Target};

use super::durable::{sync_dir, sync_file};
use super::{Error, Store, WRITE_DEADLINE, git_command, signature};
use crate::fsutil::{self, FileLock};

/// One line of a ref's reflog: a move from `old` to `new` (`None`: the ref did not exist), and
/// the message the writer gave it (for a session, the step's summary).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ReflogEntry {
    pub(crate) old: Option<ObjectId>,
    pub(crate) new: Option<ObjectId>,
    pub(crate) message: String,
}

impl Store {
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
}
