//! Refusals leave a trace: each one is a step of the session's journal, with the path, what the
//! session had seen, what was found, and who wrote it when a session did. Recorded only on the
//! refusal path, so an allowed write costs nothing more; `log` shows them, `status` counts them.

use serde::{Deserialize, Serialize};

use crate::guard::{self, Check, Disk, Intent};
use crate::ids::SessionId;
use crate::journal::{self, Journal, RootEdit, RootFile, Step, Tip};
use crate::paths::RelPath;

/// The journal file holding the count and the last refusal step's records.
pub(crate) const FILE: RootFile = RootFile::Refused;

/// `refused.toml`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Refused {
    /// Refusals over the session's whole life.
    pub count: u64,
    /// What the step that last changed this file refused.
    #[serde(default)]
    pub last: Vec<Record>,
    /// The newest refusal of each path, newest first, at most [`LEFT_MAX`]: where a refused
    /// change may have left a file behind while the command that wanted it went on.
    #[serde(default)]
    pub(crate) left: Vec<Record>,
}

/// How many refused paths `refused.toml` remembers for [`left_behind`].
pub(crate) const LEFT_MAX: usize = 256;

/// What [`Record::found`] says of a file that was not there.
pub const GONE: &str = "gone";

/// One refused write or delete.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// `write` or `delete`.
    pub intent: String,
    /// The path, relative to the workspace root.
    pub path: String,
    /// The BLAKE3 the session had seen (`reread` when it may have seen two versions).
    pub seen: Option<String>,
    /// The BLAKE3 found on disk, or `gone`.
    pub found: Option<String>,
    /// The session that wrote what was found, when one of this workspace's did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer: Option<String>,
    /// When it wrote it (Unix seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_at: Option<i64>,
}

impl Record {
    /// The record of a refused check (looks up who wrote the bytes found).
    pub fn of(journal: &Journal<'_>, check: &Check) -> Record {
        let found = match &check.disk {
            Disk::Present(d) => Some(d.to_hex()),
            Disk::Missing => Some(GONE.into()),
            Disk::Unreadable(_) => None,
        };
        let writer = check
            .disk
            .digest()
            .and_then(|now| guard::writer_of(journal, &check.path, now));
        Record {
            intent: match check.intent {
                Intent::Write { .. } => "write".into(),
                Intent::Delete => "delete".into(),
            },
            path: check.path.to_lossy().into_owned(),
            seen: check.entry.as_ref().map(|e| e.seen.label()),
            found,
            writer_at: writer.as_ref().map(|w| w.at),
            writer: writer.map(|w| w.session.to_string()),
        }
    }
}

/// What `refused.toml` says in step tree `tree` (nothing refused when absent or unreadable).
pub fn read(journal: &Journal<'_>, tree: gix::ObjectId) -> Refused {
    journal
        .root_file_of_tree(tree, &RootFile::Refused)
        .ok()
        .flatten()
        .and_then(|b| journal::layout::parse(&b))
        .unwrap_or_default()
}

/// The edit that adds `records` to the count kept in `tree`.
pub(crate) fn edit(
    journal: &Journal<'_>,
    tree: gix::ObjectId,
    records: Vec<Record>,
) -> Result<RootEdit, journal::Error> {
    let before = read(journal, tree);
    let mut left = records.clone();
    left.extend(
        before
            .left
            .into_iter()
            .filter(|old| !records.iter().any(|r| r.path == old.path)),
    );
    left.truncate(LEFT_MAX);
    let now = Refused {
        count: before.count + records.len() as u64,
        last: records,
        left,
    };
    journal.toml_edit(RootFile::Refused, &now)
}

/// The files a refused change of session `id` left as they were and that still stand so: the
/// bytes on disk are still those found when the change was refused (or the file is still gone),
/// and the session has not read or written them since. A command that went on past a refusal
/// (a branch switch half done) left exactly these files behind. Newest refusal first.
pub fn left_behind(
    journal: &Journal<'_>,
    root: &std::path::Path,
    id: &SessionId,
) -> Result<Vec<Record>, journal::Error> {
    let tip = journal.tip(id)?;
    let mut left = Vec::new();
    for record in read(journal, tip.tree).left {
        let Some(found) = record.found.as_deref() else {
            continue;
        };
        // A name that was not UTF-8 is recorded lossily: it cannot be found again.
        let Some(path) = RelPath::from_bytes(record.path.as_bytes())
            .filter(|_| !record.path.contains(char::REPLACEMENT_CHARACTER))
        else {
            continue;
        };
        let now = match Disk::probe(&path.under(root)) {
            Disk::Present(d) => d,
            Disk::Missing if found == GONE => {
                left.push(record);
                continue;
            }
            _ => continue,
        };
        if now.to_hex() != found {
            continue;
        }
        let seen = journal.lookup_at(tip.tree, &path)?.map(|e| e.seen);
        if seen != Some(journal::Seen::Digest(now)) {
            left.push(record);
        }
    }
    Ok(left)
}

/// Record the refused `checks` as one step of session `id`. A session that does not exist yet
/// has nothing to record into: `Ok(None)`.
pub fn note(
    journal: &Journal<'_>,
    id: &SessionId,
    checks: &[Check],
) -> Result<Option<Tip>, journal::Error> {
    let refused: Vec<&Check> = checks.iter().filter(|c| c.refused()).collect();
    if refused.is_empty() {
        return Ok(None);
    }
    let tip = match journal.try_tip(id)? {
        Some(t) => t,
        None => return Ok(None),
    };
    let records = refused.iter().map(|c| Record::of(journal, c)).collect();
    let paths: Vec<RelPath> = refused.iter().map(|c| c.path.clone()).collect();
    let verb = match refused[0].intent {
        Intent::Write { .. } => "refused write",
        Intent::Delete => "refused delete",
    };
    let step = Step {
        summary: crate::journal::summary(verb, &paths),
        map: Vec::new(),
        root: vec![edit(journal, tip.tree, records)?],
    };
    journal.record(id, &step).map(Some)
}
