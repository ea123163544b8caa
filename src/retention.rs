//! What Stella keeps, and for how long: sessions pruned by age, and the stores of checkouts that
//! are gone. A store holds every byte its sessions read or wrote (secrets included) and their
//! transcripts; nothing here ever runs on its own: `session prune`, `gc` (with the project's
//! `[retention]` setting) and `gc --all` do, and each has a dry run.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::ids::{SessionId, WorkspaceId};
use crate::journal::{self, Journal, Tip};

/// The sessions whose last step is older than `age` at `now` (Unix seconds), oldest first,
/// less those a live process holds a lease on.
pub fn sessions_older_than(
    journal: &Journal<'_>,
    age: Duration,
    now: i64,
) -> Result<Vec<(SessionId, Tip)>, journal::Error> {
    let cutoff = now.saturating_sub(i64::try_from(age.as_secs()).unwrap_or(i64::MAX));
    let mut old: Vec<(SessionId, Tip)> = journal
        .sessions()?
        .into_iter()
        .filter(|(_, tip)| tip.time.seconds < cutoff)
        // A session a running command holds is live, whatever its last step's age.
        .filter(|(id, _)| !journal.leased(id))
        .collect();
    old.sort_by_key(|(_, tip)| tip.time.seconds);
    Ok(old)
}

/// A store in Stella's data dir whose checkout is gone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Orphan {
    /// The workspace id the store was kept under.
    pub id: WorkspaceId,
    /// The folder holding the store (`<data dir>/workspaces/<id>`).
    pub dir: PathBuf,
    /// The checkout its owner record names, if it names one.
    pub owner: Option<PathBuf>,
    /// Why it counts as gone.
    pub why: &'static str,
}

/// The stores in `data_dir` whose checkout is gone: the folder their owner record names no longer
/// exists, or now belongs to another workspace id. A checkout that exists but lost its
/// `.stella/private` (a `git clean -fdx`) keeps its store: opening it adopts the store again.
pub fn orphans(data_dir: &Path) -> std::io::Result<Vec<Orphan>> {
    let mut out = Vec::new();
    for record in crate::workspace::owner_records(data_dir)? {
        let why = match &record.owner {
            None => continue,
            Some(path) if path.symlink_metadata().is_err() => "its checkout no longer exists",
            Some(path) => match crate::workspace::recorded_id(path) {
                Some(other) if other != record.id => {
                    "its checkout now belongs to another workspace id"
                }
                _ => continue,
            },
        };
        out.push(Orphan {
            id: record.id,
            dir: record.dir,
            owner: record.owner,
            why,
        });
    }
    Ok(out)
}
