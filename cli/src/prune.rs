//! Sessions idle longer than an age, let go of: what `session prune --older-than` does, and what
//! `gc` does first under '[retention] sessions-older-than' in '.stella/config.toml'. Both say it
//! the same way, on stdout and in JSON.

use std::io::Write;

use serde_json::json;

use crate::error::Result;
use stella::text::format_time;

/// Let go of the workspace's sessions idle longer than `age` (only list them with `dry_run`):
/// each with its last step's time.
pub(crate) fn prune(
    context: &stella::session::Context,
    age: std::time::Duration,
    dry_run: bool,
) -> Result<Vec<(stella::ids::SessionId, gix::date::Time)>> {
    let now = gix::date::Time::now_utc().seconds;
    let old = stella::retention::sessions_older_than(&context.journal(), age, now)?;
    let mut pruned = Vec::with_capacity(old.len());
    for (id, tip) in old {
        if !dry_run {
            context.prune_session(&id)?;
        }
        pruned.push((id, tip.time));
    }
    Ok(pruned)
}

/// One line per pruned session, as [`prune`] returned them.
pub(crate) fn print_pruned(
    pruned: &[(stella::ids::SessionId, gix::date::Time)],
    dry_run: bool,
    date: &crate::term::Dates,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let verb = if dry_run { "would drop" } else { "dropped" };
    let now = gix::date::Time::now_utc().seconds;
    for (id, last) in pruned {
        writeln!(
            out,
            "{verb} session {id} (last step {})",
            date.show(*last, now)
        )?;
    }
    Ok(())
}

/// Pruned sessions in JSON: `[{session, last_step}]`.
pub(crate) fn json_pruned(
    pruned: &[(stella::ids::SessionId, gix::date::Time)],
) -> serde_json::Value {
    pruned
        .iter()
        .map(|(id, last)| json!({"session": id.as_str(), "last_step": format_time(*last)}))
        .collect()
}
