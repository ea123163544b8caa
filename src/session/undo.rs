//! Undo one session: put back what was in each file before the session first wrote it.
//!
//! The journal already holds every version a session saw. For each path the session wrote, the
//! version just before its first write is the one to put back: the bytes it read first, the bytes
//! its first (blind) write replaced (kept for this in the map entry's `origin`), or nothing, for a
//! file it created. A file the session deleted is a path it wrote too: it comes back as it was
//! before the session's first write, or as the session saw it when it deleted it, and only where
//! nothing has taken its place since. Each file goes through the guard like any write: a file
//! someone changed after the session's last write is refused, by name, with the diff. Undo is
//! one step of the session; an undo run right after an undo puts back what that undo replaced.

use gix::ObjectId;

use super::record::{self, Replaced};
use crate::digest::Digest;
use crate::fsutil::{self, Placed, Removed};
use crate::guard::{self, Check, Intent};
use crate::journal::layout::{self, UndoFile};
use crate::journal::{Entry, How, Journal, MapEdit, RootFile, Seen, Step, Tip};

use crate::paths::RelPath;
use crate::refusals;
use crate::session::{Error, summary};

/// What undo is to do, path by path: the entry the session holds (if any), and what the file
/// is to hold, or why it cannot go back.
type Plan = Vec<(RelPath, Option<Entry>, Result<Target, Unrestorable>)>;

/// What undo does, or did, to one path.
#[derive(Debug)]
pub enum Undone {
    /// The file holds these bytes again.
    Restored {
        /// The file, relative to the workspace root.
        path: RelPath,
        /// The digest of the bytes put back.
        digest: Digest,
    },
    /// The file is gone again: the session created it (undo), or the undo put it back (redo),
    /// as `why` says.
    Removed {
        /// The file, relative to the workspace root.
        path: RelPath,
        /// Why it was removed, for the person.
        why: &'static str,
    },
    /// A folder the removals left empty is gone too, as `git rm` removes it.
    RemovedFolder {
        /// The folder, relative to the workspace root.
        path: RelPath,
    },
    /// Someone changed the file after the session's last write: nothing was done to it.
    Refused(Box<Check>),
    /// Nothing to put back (`why` says what is missing).
    Skipped {
        /// The file, relative to the workspace root.
        path: RelPath,
        /// What is missing, for the person.
        why: String,
    },
}

/// Why a file the session deleted is not put back.
const AGAIN: &str = "something is there again: someone created it after the session deleted it";

/// What a path is to become.
enum Target {
    Bytes(Digest, ObjectId),
    Absent,
}

/// Why a path cannot go back: the session never wrote it, or the bytes it is to hold again were
/// not kept in the journal. Its text is the reason [`Undone::Skipped`] gives.
#[derive(Debug, thiserror::Error)]
enum Unrestorable {
    /// The caller named a path the session did not write.
    #[error("the session did not write it")]
    NotWritten,
    /// The version the session read before its first write has no blob.
    #[error("the bytes it read before its first write were not kept")]
    ReadBeforeFirstWrite,
    /// The bytes the session's first (blind) write replaced have no blob.
    #[error("the bytes its first write replaced were not kept")]
    ReplacedByFirstWrite,
    /// The bytes of a file the session deleted have no blob.
    #[error("the bytes it deleted were not kept")]
    Deleted,
    /// The bytes of the renamed file (this path) before the rename have no blob.
    #[error("the bytes '{renamed}' held before the session renamed it were not kept")]
    Renamed {
        /// Where the session renamed the file to.
        renamed: RelPath,
    },
    /// The map before the undo being redone has no blob for the path.
    #[error("the bytes before the undo were not kept")]
    BeforeUndo,
}

/// What `path` held before the session's first write to it (`versions[first]`): the version
/// before that, else the bytes that write replaced (kept in `entry`'s origin), else nothing.
fn before_first_write(
    versions: &[crate::journal::Version],
    first: usize,
    entry: &Entry,
) -> Result<Target, Unrestorable> {
    match (first.checked_sub(1).map(|i| &versions[i]), entry.origin) {
        (Some(v), _) => v
            .blob
            .map(|b| Target::Bytes(v.digest, b))
            .ok_or(Unrestorable::ReadBeforeFirstWrite),
        (None, None) => Ok(Target::Absent),
        (None, Some(d)) => entry
            .origin_bytes
            .map(|b| Target::Bytes(d, b))
            .ok_or(Unrestorable::ReplacedByFirstWrite),
    }
}

impl crate::session::Session<'_> {
    /// The folders that the files `done` removed leave empty, deepest first: removed (or, with
    /// `dry_run`, those that would be). Never the workspace root, never a folder with anything
    /// else in it, never through a link. A folder that cannot be read or removed is left: the
    /// files are undone either way.
    fn emptied_folders(&self, done: &[Undone], dry_run: bool) -> Vec<RelPath> {
        let root = &self.ctx.ws.root;
        let mut gone: std::collections::HashSet<RelPath> = done
            .iter()
            .filter_map(|d| match d {
                Undone::Removed { path, .. } => Some(path.clone()),
                _ => None,
            })
            .collect();
        let mut folders: Vec<RelPath> = gone
            .iter()
            .flat_map(|p| std::iter::successors(p.parent(), RelPath::parent))
            .collect();
        // Deepest first, each once.
        folders.sort_by(|a, b| {
            let depth = |f: &RelPath| f.as_bytes().iter().filter(|b| **b == b'/').count();
            depth(b).cmp(&depth(a)).then(a.cmp(b))
        });
        folders.dedup();
        let mut out = Vec::new();
        for folder in folders {
            let emptied = if dry_run {
                let abs = folder.under(root);
                abs.symlink_metadata().is_ok_and(|m| m.is_dir())
                    && std::fs::read_dir(&abs).is_ok_and(|mut entries| {
                        entries.all(|e| {
                            e.ok()
                                .and_then(|e| {
                                    let name = e.file_name();
                                    let mut bytes = folder.as_bytes().to_vec();
                                    bytes.push(b'/');
                                    bytes.extend(std::os::unix::ffi::OsStrExt::as_bytes(
                                        name.as_os_str(),
                                    ));
                                    RelPath::from_bytes(&bytes)
                                })
                                .is_some_and(|p| gone.contains(&p))
                        })
                    })
            } else {
                fsutil::remove_empty_folder_beneath(root, &folder).unwrap_or(false)
            };
            if emptied {
                gone.insert(folder.clone());
                out.push(folder);
            }
        }
        out
    }

    /// Undo session `id`'s writes to `only` (every path it wrote, when empty). Returns what was
    /// done per path and the step recorded, if anything changed.
    pub fn undo(&self, only: &[RelPath]) -> Result<(Vec<Undone>, Option<Tip>), Error> {
        self.undo_or_plan(only, false)
    }

    /// What [`crate::session::Session::undo`] would do to each path, checked as it would check
    /// it, with nothing written and nothing recorded (`undo --dry-run`). Restored and removed
    /// mean "would be".
    pub fn undo_plan(&self, only: &[RelPath]) -> Result<Vec<Undone>, Error> {
        Ok(self.undo_or_plan(only, true)?.0)
    }

    fn undo_or_plan(
        &self,
        only: &[RelPath],
        dry_run: bool,
    ) -> Result<(Vec<Undone>, Option<Tip>), Error> {
        if !dry_run {
            self.ctx.config()?;
        }
        let journal = self.ctx.journal();
        let tip = journal.tip(self.id)?;
        let redo = journal
            .root_file_of_tree(tip.tree, &RootFile::Undo)?
            .and_then(|b| layout::parse::<UndoFile>(&b))
            .is_some_and(|u| u.step == tip.steps);
        let mut plan = if redo {
            self.plan_redo(&journal, &tip, only)?
        } else {
            self.plan_undo(&journal, only)?
        };
        for wanted in only {
            if !plan.iter().any(|(p, _, _)| p == wanted) {
                plan.push((wanted.clone(), None, Err(Unrestorable::NotWritten)));
            }
        }
        let mut done = Vec::new();
        let mut edits = Vec::new();
        // Under a dry run, the paths that would be put back by the time a later one is judged.
        let mut would_be_back: Vec<RelPath> = Vec::new();
        for item in plan {
            done.extend(self.undo_one(
                &journal,
                item,
                redo,
                dry_run,
                &mut would_be_back,
                &mut edits,
            ));
        }
        let folders = self.emptied_folders(&done, dry_run);
        done.extend(
            folders
                .into_iter()
                .map(|path| Undone::RemovedFolder { path }),
        );
        if dry_run {
            return Ok((done, None));
        }
        let tip = self.record_undone(&journal, &tip, redo, &done, edits)?;
        Ok((done, tip))
    }

    /// The plan of an undo: each path the session wrote, back as it was before its first write;
    /// each it deleted, back as it was; renames undone, sources first.
    fn plan_undo(&self, journal: &Journal<'_>, only: &[RelPath]) -> Result<Plan, Error> {
        let id = self.id;
        let mut plan = Plan::new();
        let entries = journal.entries(id)?;
        // Undoing a file a rename brought somewhere undoes the rename: its source comes back.
        let mut only = only.to_vec();
        for e in &entries {
            if let Some(from) = &e.moved_from
                && only.contains(&e.path)
                && !only.contains(from)
            {
                only.push(from.clone());
            }
        }
        let only = only.as_slice();
        for entry in entries {
            if !only.is_empty() && !only.contains(&entry.path) {
                continue;
            }
            // A rename of the session put it here: it goes, once its source is back (the
            // source is a path the session dropped, put back below).
            if entry.moved_from.is_some() {
                plan.push((entry.path.clone(), Some(entry), Ok(Target::Absent)));
                continue;
            }
            let versions = journal.versions_in(std::slice::from_ref(id), &entry.path)?;
            let Some(first) = versions.iter().position(|v| v.how == How::Wrote) else {
                continue;
            };
            let target = before_first_write(&versions, first, &entry);
            plan.push((entry.path.clone(), Some(entry), target));
        }
        // The files the session deleted: put back as they were before its first write, or,
        // when it only read them, as it saw them when it deleted them.
        for entry in journal.dropped_entries(id)? {
            if !only.is_empty() && !only.contains(&entry.path) {
                continue;
            }
            // A renamed file the session then deleted: its source comes back instead.
            if entry.moved_from.is_some() {
                continue;
            }
            let versions = journal.versions_in(std::slice::from_ref(id), &entry.path)?;
            let target = match versions.iter().position(|v| v.how == How::Wrote) {
                Some(first) => before_first_write(&versions, first, &entry),
                None => match (entry.seen, entry.bytes) {
                    (Seen::Digest(d), Some((blob, _))) => Ok(Target::Bytes(d, blob)),
                    _ => Err(Unrestorable::Deleted),
                },
            };
            // Created, then deleted, by the session: gone before, gone now.
            if matches!(target, Ok(Target::Absent)) {
                continue;
            }
            plan.push((entry.path, None, target));
        }
        // A source the session read and renamed within one step was never a map entry of
        // its own: it comes back as the renamed file holds it, when the session did not
        // write it since.
        let sources: Vec<(RelPath, Result<Target, Unrestorable>)> = plan
            .iter()
            .filter_map(|(_, e, _)| e.as_ref())
            .filter_map(|e| Some((e, e.moved_from.clone()?)))
            .filter(|(_, from)| !plan.iter().any(|(p, _, _)| p == from))
            .map(|(e, from)| {
                let target = match (e.seen, e.bytes, e.wrote) {
                    (Seen::Digest(d), Some((blob, _)), None) => Ok(Target::Bytes(d, blob)),
                    _ => Err(Unrestorable::Renamed {
                        renamed: e.path.clone(),
                    }),
                };
                (from, target)
            })
            .collect();
        plan.extend(sources.into_iter().map(|(p, t)| (p, None, t)));
        // Files go back to where renames took them from before the renamed copies go.
        let moved = |e: &Option<Entry>| e.as_ref().is_some_and(|e| e.moved_from.is_some());
        plan.sort_by(|a, b| (moved(&a.1), &a.0).cmp(&(moved(&b.1), &b.0)));
        Ok(plan)
    }

    /// The plan of a redo: put back the session's map as it was just before the last undo.
    fn plan_redo(&self, journal: &Journal<'_>, tip: &Tip, only: &[RelPath]) -> Result<Plan, Error> {
        let id = self.id;
        let mut plan = Plan::new();
        // Put back what the last undo replaced: the session's map just before it.
        let history = journal.history(id)?;
        let parent = history
            .get(1)
            .map(|(commit, _, _)| *commit)
            .expect("an undo step has a parent");
        let before = journal.tree_of(parent)?;
        let mut paths: Vec<RelPath> = journal
            .entries_of_tree(tip.tree)?
            .into_iter()
            .chain(journal.entries_of_tree(before)?)
            .map(|e| e.path)
            .collect();
        paths.sort();
        paths.dedup();
        for path in paths {
            if !only.is_empty() && !only.contains(&path) {
                continue;
            }
            let now = journal.lookup_at(tip.tree, &path)?;
            let then = journal.lookup_at(before, &path)?;
            if now.as_ref().map(|e| (e.seen, e.bytes)) == then.as_ref().map(|e| (e.seen, e.bytes)) {
                continue;
            }
            let target = match &then {
                None => Ok(Target::Absent),
                Some(Entry {
                    seen: Seen::Digest(d),
                    bytes: Some((blob, _)),
                    ..
                }) => Ok(Target::Bytes(*d, *blob)),
                Some(_) => Err(Unrestorable::BeforeUndo),
            };
            plan.push((path, now, target));
        }
        Ok(plan)
    }

    /// Put back one path of the plan (or, under `dry_run`, say whether it would be), checked as
    /// any write: what was done, or why not; `None` where nothing is to say. A change made is
    /// added to `edits`, for the step.
    fn undo_one(
        &self,
        journal: &Journal<'_>,
        (path, entry, target): (RelPath, Option<Entry>, Result<Target, Unrestorable>),
        redo: bool,
        dry_run: bool,
        would_be_back: &mut Vec<RelPath>,
        edits: &mut Vec<MapEdit>,
    ) -> Option<Undone> {
        let target = match target {
            Ok(t) => t,
            Err(unrestorable) => {
                return Some(Undone::Skipped {
                    path,
                    why: unrestorable.to_string(),
                });
            }
        };
        let intent = match &target {
            Target::Bytes(d, _) => Intent::Write { content: Some(*d) },
            Target::Absent => Intent::Delete,
        };
        // A renamed file goes only once its source is back: never both gone.
        if let Some(from) = entry.as_ref().and_then(|e| e.moved_from.as_ref())
            && !redo
            && self.ctx.abs(from).symlink_metadata().is_err()
            && !would_be_back.contains(from)
        {
            return Some(Undone::Skipped {
                path,
                why: format!("'{from}', where the session renamed it from, could not be put back"),
            });
        }
        // A file the session deleted comes back only where nothing took its place.
        let abs = self.ctx.abs(&path);
        let must_be_absent = entry.is_none() && matches!(target, Target::Bytes(..));
        if must_be_absent && abs.symlink_metadata().is_ok() {
            return Some(Undone::Skipped {
                path,
                why: AGAIN.into(),
            });
        }
        let check = guard::check_entry(entry.clone(), &self.ctx.ws.root, &path, intent);
        if check.refused() {
            return Some(Undone::Refused(Box::new(check)));
        }
        let removed_why = if redo {
            "the undo put it back"
        } else if entry.as_ref().is_some_and(|e| e.moved_from.is_some()) {
            "the session renamed it there"
        } else {
            "the session created it"
        };
        if dry_run {
            return Some(match target {
                Target::Bytes(digest, _) => {
                    would_be_back.push(path.clone());
                    Undone::Restored { path, digest }
                }
                Target::Absent => Undone::Removed {
                    path,
                    why: removed_why,
                },
            });
        }
        let mut late = None;
        let recheck = |late: &mut Option<Check>| {
            let again = guard::check_entry(entry.clone(), &self.ctx.ws.root, &path, intent);
            let ok = !again.refused();
            *late = Some(again);
            ok
        };
        // A file that cannot be written (a link where a folder goes, a full disk) is
        // skipped, saying why: the files undone before it stay recorded, the others go on.
        let failed = |path: RelPath, e: std::io::Error| Undone::Skipped {
            path,
            why: format!("it could not be written: {e}"),
        };
        match target {
            Target::Bytes(digest, blob) => {
                // Streamed from the store, hashed on the way: only the kept bytes, whole,
                // take the name. Kept bytes that cannot be read skip this file alone.
                let from = match journal.blob_reader(blob) {
                    Ok(from) => from,
                    Err(e) => {
                        return Some(Undone::Skipped {
                            path,
                            why: format!("the kept bytes could not be read: {e}"),
                        });
                    }
                };
                let placed =
                    fsutil::replace_beneath_checked(&self.ctx.ws.root, &path, from, digest, || {
                        let taken = must_be_absent && abs.symlink_metadata().is_ok();
                        !taken && recheck(&mut late)
                    });
                let placed = match placed {
                    Ok(p) => p,
                    Err(e) => {
                        return Some(failed(path, e));
                    }
                };
                match (placed, late) {
                    (Placed::Written, _) => {}
                    (Placed::Damaged, _) => {
                        return Some(Undone::Skipped {
                            path,
                            why: "the kept bytes do not match their digest".into(),
                        });
                    }
                    (Placed::Declined, Some(c)) => {
                        return Some(Undone::Refused(Box::new(c)));
                    }
                    (Placed::Declined, None) => {
                        return Some(Undone::Skipped {
                            path,
                            why: AGAIN.into(),
                        });
                    }
                }
                let version = record::Version::kept(digest, blob, false);
                edits.push(record::wrote(&path, version, Replaced::nothing()));
                Some(Undone::Restored { path, digest })
            }
            Target::Absent => {
                match fsutil::remove_beneath(&self.ctx.ws.root, &path, || recheck(&mut late)) {
                    Err(e) => return Some(failed(path, e)),
                    Ok(Removed::Refused) => return late.map(|c| Undone::Refused(Box::new(c))),
                    Ok(Removed::Done | Removed::AlreadyGone) => {}
                }
                edits.push(record::deleted(&path));
                Some(Undone::Removed {
                    path,
                    why: removed_why,
                })
            }
        }
    }

    /// Record what an undo (or a redo) did as one step of the session, with the refusals it
    /// met; only the refusals when nothing changed.
    fn record_undone(
        &self,
        journal: &Journal<'_>,
        tip: &Tip,
        redo: bool,
        done: &[Undone],
        edits: Vec<MapEdit>,
    ) -> Result<Option<Tip>, Error> {
        let id = self.id;
        // Refusals leave a trace: in the undo's own step, or alone when nothing was undone.
        let refused: Vec<Check> = done
            .iter()
            .filter_map(|d| match d {
                Undone::Refused(c) => Some((**c).clone()),
                _ => None,
            })
            .collect();
        if edits.is_empty() {
            // The trace never costs the answer.
            let tip = refusals::note(journal, id, &refused).unwrap_or_else(|e| {
                tracing::warn!(error = %e, "the refusal could not be recorded in the session");
                None
            });
            return Ok(tip);
        }
        let changed: Vec<RelPath> = done
            .iter()
            .filter_map(|d| match d {
                Undone::Restored { path, .. } | Undone::Removed { path, .. } => Some(path.clone()),
                _ => None,
            })
            .collect();
        let mut root = if redo {
            Vec::new()
        } else {
            vec![journal.toml_edit(
                RootFile::Undo,
                &UndoFile {
                    step: tip.steps + 1,
                },
            )?]
        };
        if !refused.is_empty() {
            let records = refused
                .iter()
                .map(|c| refusals::Record::of(journal, c))
                .collect();
            root.push(refusals::edit(journal, tip.tree, records)?);
        }
        let step = Step {
            summary: summary(if redo { "redo" } else { "undo" }, &changed),
            map: edits,
            root,
        };
        let tip = journal
            .record(id, &step)
            .map_err(|source| Error::Unrecorded {
                done: format!("undid {} file(s)", changed.len()),
                source,
            })?;
        Ok(Some(tip))
    }
}

#[cfg(test)]
mod tests {
    //! Undo across a rename, on a real store and files in a temporary folder: no process.
    use super::*;
    use crate::session::Context;
    use crate::workspace::Settings;

    /// A workspace (a minimal `.git` gix recognises) with its store, and a session in it.
    fn workspace() -> (tempfile::TempDir, Context, crate::ids::SessionId) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        for dir in [".git/objects", ".git/refs/heads"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        let settings = Settings::new(tmp.path().join("data"));
        let (ctx, _) = Context::open(&settings, &root).unwrap();
        let id = ctx.start_session(None).unwrap();
        (tmp, ctx, id)
    }

    fn p(s: &str) -> RelPath {
        RelPath::from_bytes(s.as_bytes()).unwrap()
    }

    /// Rename `from` to `to` on disk, and record it in the session as the shell guard does.
    fn rename(session: &crate::session::Session<'_>, from: &str, to: &str) {
        let ctx = session.context();
        std::fs::rename(ctx.abs(&p(from)), ctx.abs(&p(to))).unwrap();
        let (from, to) = (p(from), p(to));
        let edit = record::moved(&from, &to);
        session
            .record("moved", &[from, to], vec![edit], Vec::new())
            .unwrap();
    }

    #[test]
    fn undo_moves_a_renamed_file_back() {
        let (_tmp, ctx, id) = workspace();
        let session = ctx.session(&id);
        std::fs::write(ctx.abs(&p("f")), "as read\n").unwrap();
        session.read(&[p("f")]).unwrap();
        rename(&session, "f", "g");
        let (done, _) = session.undo(&[]).unwrap();
        assert_eq!(
            std::fs::read_to_string(ctx.abs(&p("f"))).unwrap(),
            "as read\n"
        );
        assert!(!ctx.abs(&p("g")).exists(), "{done:?}");
    }

    #[test]
    fn undo_never_deletes_the_only_copy_of_someone_elses_bytes() {
        let (_tmp, ctx, id) = workspace();
        let session = ctx.session(&id);
        std::fs::write(ctx.abs(&p("f")), "as read\n").unwrap();
        session.read(&[p("f")]).unwrap();
        // Someone changes f; the session renames it (a rename carries the stale knowledge).
        std::fs::write(ctx.abs(&p("f")), "their edit\n").unwrap();
        rename(&session, "f", "g");
        let (done, _) = session.undo(&[]).unwrap();
        assert_eq!(
            std::fs::read_to_string(ctx.abs(&p("g"))).unwrap(),
            "their edit\n",
            "{done:?}"
        );
        assert!(
            done.iter()
                .any(|d| matches!(d, Undone::Refused(c) if c.path == p("g")))
        );
    }
}
