//! Repair on open: a session whose ref names a step that did not reach the disk whole is moved
//! back to its newest step that did, and the steps lost are named.
//!
//! A power cut with `stella.fsync false` (or a disk that acknowledged writes it never made) can
//! leave the session's ref pointing at a commit that is missing, a tree that is empty, or a ref
//! file that holds nothing. Reading such a session as "tracks nothing" would let every blind
//! write through, so the command that finds the damage repairs it and fails (exit 2, a hook
//! denies under fail-closed), saying which steps were lost; the next command runs on the
//! repaired session.
//!
//! Finding damage costs nothing extra: the guard reads the tip commit and the map objects of the
//! paths it checks, and a read that finds an object missing or unparsable is typed as damage
//! ([`journal::Error::is_damage`]). Only then does the walk here run: the ref's value, then
//! every value its reflog records, newest first, each followed down its parents, until a step is
//! found whose commit and every object its tree reaches are present and parse.

use std::collections::HashSet;

use gix::ObjectId;

use crate::ids::SessionId;
use crate::journal::{self, Forgot, Journal, RootEdit, RootFile, SESSIONS, Step, Tip, session_ref};
use crate::store::{self, WRITE_DEADLINE};

/// A step that did not survive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Lost {
    /// Its number, read from the commit when that survived, else counted from the step kept.
    pub(crate) step: u64,
    /// The commit the ref or its reflog named, when either said.
    pub(crate) commit: Option<ObjectId>,
    /// What the step was: its reflog message (the step's summary), else its commit's.
    pub(crate) summary: Option<String>,
}

/// What a repair did to one session.
#[derive(Clone, Debug)]
pub struct Report {
    pub(crate) session: SessionId,
    /// The newest step found whole, where the session now stands; `None` when no step was.
    pub(crate) kept: Option<Tip>,
    /// The steps after it, oldest first.
    pub(crate) lost: Vec<Lost>,
}

impl Report {
    fn range(&self) -> String {
        let (first, last) = match (self.lost.first(), self.lost.last()) {
            (Some(f), Some(l)) => (f.step, l.step),
            _ => return "no step was".into(),
        };
        if first == last {
            format!("step {first} was")
        } else {
            format!("steps {first}..{last} were")
        }
    }

    fn lines(&self) -> String {
        let mut out = String::new();
        for l in &self.lost {
            let commit = l.commit.map_or("unknown commit".to_owned(), |c| {
                c.to_hex_with_len(12).to_string()
            });
            let summary = l
                .summary
                .as_deref()
                .unwrap_or("(not recorded in the reflog)");
            out.push_str(&format!(
                "\n  lost step {} ({commit}): {}",
                l.step,
                crate::text::escape_controls(summary)
            ));
        }
        match &self.kept {
            Some(k) => out.push_str(&format!(
                "\n  session '{}' now stands at step {} ({})",
                self.session,
                k.steps,
                crate::text::escape_controls(&k.summary)
            )),
            None => out.push_str(&format!(
                "\n  no step of session '{}' is whole; it was left as it is",
                self.session
            )),
        }
        out
    }
}

/// The error returned by `on_damage`: the damage found, and what the repair did about it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Damage was found and repaired (or found past repair): nothing else was done.
    #[error("{}", repaired_text(.reports))]
    Repaired {
        /// What the repair did, one report per damaged session.
        reports: Vec<Report>,
        /// What the command found; `None` where the front end reports it itself.
        #[source]
        damage: Option<journal::Error>,
    },
    /// The repair itself failed: the store could not be read or written.
    #[error(transparent)]
    Journal(#[from] journal::Error),
}

impl Error {
    /// Whether a session was left with no whole step: it stays broken until it is dropped.
    pub fn unrepairable(&self) -> Option<&SessionId> {
        match self {
            Error::Repaired { reports, .. } => reports
                .iter()
                .find(|r| r.kept.is_none())
                .map(|r| &r.session),
            Error::Journal(_) => None,
        }
    }
}

fn repaired_text(reports: &[Report]) -> String {
    let mut text = String::new();
    for (i, r) in reports.iter().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        match r.kept {
            Some(_) if r.lost.is_empty() => text.push_str(&format!(
                "repaired session '{}': its ref did not survive a crash and was restored from its reflog; no step was lost; this command did nothing else: run it again",
                r.session
            )),
            Some(_) => text.push_str(&format!(
                "repaired session '{}': {} lost in a crash; re-read the files before writing; this command did nothing else",
                r.session,
                r.range()
            )),
            None => text.push_str(&format!(
                "session '{}' has no whole step left: {} lost in a crash; nothing was done",
                r.session,
                r.range()
            )),
        }
        text.push_str(&r.lines());
    }
    text
}

/// Repair the store after `damage` was found, `hint` being the session the command was acting
/// on: the error to report instead, naming what was lost, or `damage` itself when no session
/// turns out damaged (the object was not one a session needs).
pub(crate) fn on_damage(
    journal: &Journal<'_>,
    hint: Option<&SessionId>,
    damage: journal::Error,
) -> Error {
    match repair(journal, hint) {
        Ok(reports) if !reports.is_empty() => Error::Repaired {
            reports,
            damage: Some(damage),
        },
        Ok(_) => Error::Journal(damage),
        Err(e) => {
            tracing::warn!(error = %e, "the damaged store could not be repaired");
            Error::Journal(damage)
        }
    }
}

/// Repair every damaged session, `hint` first; when `hint` is whole (or `None`), every session
/// of the store is checked. Runs under the store's writer lock, so two commands that find the
/// same damage repair it once.
pub fn repair(
    journal: &Journal<'_>,
    hint: Option<&SessionId>,
) -> Result<Vec<Report>, journal::Error> {
    let store = journal.store;
    let lock = store.lock(WRITE_DEADLINE)?;
    if let Some(id) = hint
        && let Some(mut report) = diagnose(journal, id)?
    {
        settle(journal, &lock, &mut report)?;
        return Ok(vec![report]);
    }
    let mut reports = Vec::new();
    for id in sessions(store)? {
        if Some(&id) == hint {
            continue;
        }
        if let Some(mut report) = diagnose(journal, &id)? {
            settle(journal, &lock, &mut report)?;
            reports.push(report);
        }
    }
    Ok(reports)
}

/// Move the session of `report` back to its newest whole step, with one step more on top when
/// steps were lost: the session forgot what they knew ([`Forgot`]), so its next change of a file
/// they held needs a read first. Nothing moves when that step cannot be written: the session
/// stays damaged, and every command on it fails, rather than stand with nothing forgotten.
fn settle(
    journal: &Journal<'_>,
    lock: &crate::fsutil::FileLock,
    report: &mut Report,
) -> Result<(), journal::Error> {
    let Some(kept) = &report.kept else {
        return Ok(());
    };
    let id = report.session.clone();
    let target = if report.lost.is_empty() {
        kept.commit
    } else {
        let mut forgot = lost_paths(journal, kept, &report.lost);
        if let Some(before) = journal.forgot_at(kept.tree)? {
            forgot = forgot.union((*before).clone());
        }
        let blob = journal.write_blob(&forgot.encode())?;
        let summary = match &forgot {
            Forgot::All => {
                "repair: forgot every file; each must be read again before it is changed".to_owned()
            }
            Forgot::Paths(paths) => format!(
                "repair: forgot {} path{} the lost steps held; each must be read again before it is changed",
                paths.len(),
                if paths.len() == 1 { "" } else { "s" }
            ),
        };
        let step = Step {
            summary,
            map: Vec::new(),
            root: vec![RootEdit::Put {
                file: RootFile::Forgot,
                blob,
            }],
        };
        journal.step_on(&id, kept.commit, &step)?
    };
    journal
        .store
        .reset_ref(lock, &session_ref(&id), target, &reflog_message(report))?;
    if target != kept.commit {
        report.kept = Some(journal.step_of(target)?);
    }
    Ok(())
}

/// The paths the lost steps held that the step kept does not hold as they did: every file, when
/// any lost step cannot be read far enough to say.
fn lost_paths(journal: &Journal<'_>, kept: &Tip, lost: &[Lost]) -> Forgot {
    let Ok(kept) = journal.entries_of_tree(kept.tree) else {
        return Forgot::All;
    };
    let kept: std::collections::HashMap<_, _> =
        kept.into_iter().map(|e| (e.path.clone(), e)).collect();
    let mut paths = std::collections::BTreeSet::new();
    for l in lost {
        let Some(tip) = l.commit.and_then(|c| journal.step_of(c).ok()) else {
            return Forgot::All;
        };
        let Ok(entries) = journal.entries_of_tree(tip.tree) else {
            return Forgot::All;
        };
        paths.extend(
            entries
                .into_iter()
                .filter(|e| kept.get(&e.path) != Some(e))
                .map(|e| e.path),
        );
    }
    Forgot::Paths(paths)
}

/// The reflog entry of a repair: what was lost, since the entries that named it are cut.
fn reflog_message(report: &Report) -> String {
    let steps: Vec<String> = report
        .lost
        .iter()
        .map(|l| match &l.summary {
            Some(s) => format!("{} '{s}'", l.step),
            None => l.step.to_string(),
        })
        .collect();
    if steps.is_empty() {
        "repair: the ref was restored from its reflog".into()
    } else {
        format!(
            "repair: {} lost in a crash: {}",
            report.range(),
            steps.join(", ")
        )
    }
}

/// Every session named in the store: its ref, or only its reflog (a ref a power cut lost). Read
/// from the folders, so a torn ref file cannot hide the others.
fn sessions(store: &store::Store) -> Result<Vec<SessionId>, journal::Error> {
    let mut names = std::collections::BTreeSet::new();
    for dir in [
        store.dir().join(SESSIONS),
        store.dir().join("logs").join(SESSIONS),
    ] {
        if let Ok(entries) = std::fs::read_dir(&dir) {
            for e in entries.flatten() {
                if let Some(name) = e.file_name().to_str() {
                    names.insert(name.to_owned());
                }
            }
        }
    }
    if let Ok(refs) = store.refs(SESSIONS) {
        for (name, _) in refs {
            if let Some(n) = name.strip_prefix(SESSIONS) {
                names.insert(n.to_owned());
            }
        }
    }
    Ok(names
        .into_iter()
        .filter_map(|n| SessionId::parse(&n).ok())
        .collect())
}

/// What is wrong with session `id`, or `None` when its tip is whole (or it does not exist).
fn diagnose(journal: &Journal<'_>, id: &SessionId) -> Result<Option<Report>, journal::Error> {
    let store = journal.store;
    let name = session_ref(id);
    let tip = match store.tip(&name) {
        Ok(tip) => tip,
        Err(store::Error::DamagedRef { .. }) => None,
        Err(e) => return Err(e.into()),
    };
    let reflog = store.reflog(&name)?;
    if tip.is_none() && !store.ref_exists(&name) && reflog.is_empty() {
        return Ok(None);
    }
    let mut verified = HashSet::new();
    if let Some(t) = tip
        && journal.read_whole(id.as_str(), t, &mut verified)?.is_ok()
    {
        return Ok(None);
    }
    // Newest first: the ref, the values its reflog says it took, then where it came from.
    let candidates: Vec<ObjectId> = tip
        .into_iter()
        .chain(reflog.iter().rev().filter_map(|e| e.new))
        .chain(reflog.iter().rev().filter_map(|e| e.old))
        .collect();
    let mut tried = HashSet::new();
    let mut broken = Vec::new();
    let mut kept = None;
    'candidates: for candidate in candidates {
        let mut next = Some(candidate);
        while let Some(commit) = next.take() {
            if !tried.insert(commit) {
                break;
            }
            match journal.read_whole(id.as_str(), commit, &mut verified)? {
                Ok(whole) => {
                    kept = Some(whole);
                    break 'candidates;
                }
                Err(_) => {
                    broken.push(commit);
                    // Never below the session's first step: under it lies an artifact's
                    // history, which is another session's.
                    if journal.step_of(commit).is_ok_and(|t| t.steps > 1) {
                        next = journal.parent_of(commit).ok().flatten();
                    }
                }
            }
        }
    }
    Ok(Some(Report {
        session: id.clone(),
        lost: lost_steps(journal, &reflog, kept.as_ref(), &broken),
        kept,
    }))
}

/// The steps after `kept`, oldest first: what the reflog recorded after the ref last stood at
/// `kept`, and the broken commits the walk met on its way down.
fn lost_steps(
    journal: &Journal<'_>,
    reflog: &[store::ReflogEntry],
    kept: Option<&Tip>,
    broken: &[ObjectId],
) -> Vec<Lost> {
    let since = kept
        .and_then(|k| reflog.iter().rposition(|e| e.new == Some(k.commit)))
        .map_or(0, |i| i + 1);
    let mut commits: Vec<(ObjectId, Option<String>)> = Vec::new();
    for e in &reflog[since..] {
        if let Some(new) = e.new
            && Some(new) != kept.map(|k| k.commit)
            && !commits.iter().any(|(c, _)| *c == new)
        {
            commits.push((new, Some(e.message.clone())));
        }
    }
    for b in broken.iter().rev() {
        if !commits.iter().any(|(c, _)| c == b) {
            commits.push((*b, None));
        }
    }
    let base = kept.map_or(0, |k| k.steps);
    let mut out: Vec<Lost> = commits
        .into_iter()
        .enumerate()
        .map(|(i, (commit, message))| {
            let step = journal.step_of(commit).ok();
            Lost {
                step: step.as_ref().map_or(base + i as u64 + 1, |t| t.steps),
                commit: Some(commit),
                summary: message
                    .filter(|m| !m.is_empty())
                    .or_else(|| step.map(|t| t.summary)),
            }
        })
        .collect();
    out.sort_by_key(|l| l.step);
    out
}
