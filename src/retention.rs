//! What Stella keeps, and for how long: sessions pruned by age, and the stores of checkouts that
//! are gone. A store holds every byte its sessions read or wrote (secrets included) and their
//! transcripts; nothing here ever runs on its own: `session prune`, `gc` (with the project's
//! `[retention]` setting) and `gc --all` do, and each has a dry run.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::ids::{SessionId, WorkspaceId};
use crate::journal::{self, Journal, Tip};

/// A duration as people write it: a whole number and a unit, `s`, `m`, `h`, `d` or `w`
/// (`90m`, `12h`, `30d`, `2w`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || {
        format!(
            "'{text}' is not a duration: write a whole number and a unit, s, m, h, d or w (as in 30d)"
        )
    };
    let text = text.trim();
    let unit = text.chars().last().ok_or_else(bad)?;
    let seconds = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        'w' => 604_800,
        _ => return Err(bad()),
    };
    let n: u64 = text[..text.len() - 1].parse().map_err(|_| bad())?;
    n.checked_mul(seconds)
        .map(Duration::from_secs)
        .ok_or_else(bad)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(parse_duration("90m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("30d"), Ok(Duration::from_secs(30 * 86_400)));
        assert_eq!(parse_duration("2w"), Ok(Duration::from_secs(2 * 604_800)));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
        for bad in [
            "",
            "30",
            "d",
            "3.5d",
            "-1d",
            "30 days",
            "99999999999999999999w",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
