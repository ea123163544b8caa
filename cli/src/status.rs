use std::io::Write;
use std::process::ExitCode;

use serde_json::json;

use crate::ctx::Ctx;
use crate::error::Result;
use crate::output::print_json;
use crate::term::Slot;
use stella::session::Freshness;
use stella::text::format_time;

/// Show every tracked file of the session: unchanged, changed or deleted since the session saw it
///
/// A changed or deleted file is one a write would be refused for: re-read it first. A note on stderr
/// counts the writes the session had refused, when there were any (`git stella log` lists them),
/// and names the files a refused change left as they were while the command that wanted them
/// changed went on (a branch switch half done): until the session reads them again.
/// Paths are shown from the current folder, as git status shows them; --json gives them from
/// the workspace root.
/// With --all, one line per session of the workspace instead: when it last acted, how many files
/// it guards, how many of those changed since it saw them, and how many writes it had refused.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella status
  git stella status --json | jq -r '.files[] | select(.state != \"unchanged\") | .path'
  git stella status --all

Exit status:
  0  listed (changed files are not an error)
  2  an error: no session given or an unknown one")]
pub struct Args {
    /// Print JSON: {session, files: [{path, state, seen}], refused_count, left_behind: [{intent,
    /// path, seen, found, writer}]}; with --all, {sessions: [{session, last_step, step_count,
    /// tracked_count, changed: [{path, state}], refused_count, left_behind}]}
    #[arg(long)]
    pub json: bool,
    /// Every session of the workspace, one line each
    #[arg(long)]
    pub all: bool,
    /// With --all: how to show when each session last acted: relative, local, iso, iso-strict
    /// (the default), rfc, short, raw, unix, default; FORMAT-local for this machine's time zone
    #[arg(long, value_name = "FORMAT", requires = "all", value_parser = super::term::parse_date_format)]
    pub date: Option<super::term::DateFormat>,
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, out: &mut dyn Write) -> Result {
    let context = ctx.open()?;
    if args.all {
        return all(&context, args, out);
    }
    let id = ctx.session_id()?;
    ctx.resume_forgotten(&context, &id)?;
    let status = context.session(&id).status()?;
    let refused =
        stella::refusals::read(&context.journal(), context.journal().tip(&id)?.tree).count;
    let left = stella::refusals::left_behind(&context.journal(), context.root(), &id)?;
    if args.json {
        let list: Vec<_> = status
            .iter()
            .map(|(e, f)| {
                json!({
                    "path": e.path.to_lossy(),
                    "state": f.as_str(),
                    "seen": e.seen.label(),
                })
            })
            .collect();
        print_json(
            out,
            &json!({
                "session": id.as_str(),
                "files": list,
                "refused_count": refused,
                "left_behind": left_json(&left),
            }),
        )?;
    } else {
        // Paths as seen from the current folder, as git status shows them (JSON stays
        // repo-relative).
        let here = ctx.here(context.root());
        for (e, f) in &status {
            let shown = ctx.shown(&e.path, &here);
            let pad = " ".repeat(10usize.saturating_sub(f.as_str().len()));
            let slot = match f {
                Freshness::Fresh => Slot::Good,
                Freshness::Unreadable => Slot::Warn,
                Freshness::Changed | Freshness::Gone => Slot::Bad,
            };
            writeln!(out, "{}{pad} {shown}", ctx.paint.paint(slot, f.as_str()))?;
        }
        // A note for the person, like git's hints: stdout stays one line per file.
        if refused > 0 {
            writeln!(
                ctx.err,
                "note: the session had {refused} write{} refused ('git stella log' lists them)",
                if refused == 1 { "" } else { "s" }
            )?;
        }
        if !left.is_empty() {
            let names: Vec<String> = left
                .iter()
                .map(|r| {
                    let shown = stella::paths::RelPath::from_bytes(r.path.as_bytes())
                        .map_or_else(|| r.path.clone(), |p| ctx.shown(&p, &here));
                    match &r.writer {
                        Some(w) => format!("{shown} (holds what session {w} wrote)"),
                        None => shown,
                    }
                })
                .collect();
            let names = stella::text::escape_controls(&names.join(", ")).into_owned();
            if left.len() == 1 {
                writeln!(
                    ctx.err,
                    "note: a refused change left {names} as it was; the command that wanted it changed may have gone on without it: read it ('git stella read') before you build on it"
                )?;
            } else {
                writeln!(
                    ctx.err,
                    "note: refused changes left {} as they were: {names}; the commands that wanted them changed may have gone on without them: read them ('git stella read') before you build on them",
                    stella::text::count(left.len() as u64, "file")
                )?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The files a refused change left behind, for JSON.
fn left_json(left: &[stella::refusals::Record]) -> Vec<serde_json::Value> {
    left.iter().map(crate::output::record_json).collect()
}

/// `status --all`: every session, newest activity first.
fn all(context: &stella::session::Context, args: &Args, out: &mut dyn Write) -> Result {
    let journal = context.journal();
    let mut sessions = journal.sessions()?;
    sessions.sort_by(|a, b| b.1.time.seconds.cmp(&a.1.time.seconds).then(a.0.cmp(&b.0)));
    let mut rows = Vec::new();
    for (id, tip) in &sessions {
        let changed: Vec<_> = context
            .session(id)
            .status()?
            .into_iter()
            .filter(|(_, f)| matches!(f, Freshness::Changed | Freshness::Gone))
            .collect();
        let refused = stella::refusals::read(&journal, tip.tree).count;
        let left = stella::refusals::left_behind(&journal, context.root(), id)?;
        rows.push((id, tip, changed, refused, left));
    }
    if args.json {
        let list: Vec<_> = rows
            .iter()
            .map(|(id, tip, changed, refused, left)| {
                json!({
                    "session": id.as_str(),
                    "last_step": format_time(tip.time),
                    "step_count": tip.steps,
                    "tracked_count": tip.tracked,
                    "changed": changed
                        .iter()
                        .map(|(e, f)| json!({"path": e.path.to_lossy(), "state": f.as_str()}))
                        .collect::<Vec<_>>(),
                    "refused_count": refused,
                    "left_behind": left_json(left),
                })
            })
            .collect();
        print_json(out, &json!({ "sessions": list }))?;
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        writeln!(
            out,
            "no sessions in this workspace ('git stella session start' starts one)"
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let width = rows
        .iter()
        .map(|r| r.0.as_str().len())
        .max()
        .unwrap_or(0)
        .max(7);
    writeln!(
        out,
        "{:<width$}  {:<25}  {:>7}  {:>7}  {:>7}",
        "SESSION", "LAST ACTED", "TRACKED", "CHANGED", "REFUSED"
    )?;
    let (date, now) = (
        args.date.unwrap_or_default(),
        gix::date::Time::now_utc().seconds,
    );
    for (id, tip, changed, refused, _) in &rows {
        writeln!(
            out,
            "{:<width$}  {:<25}  {:>7}  {:>7}  {:>7}",
            id.as_str(),
            date.show(tip.time, now),
            tip.tracked,
            changed.len(),
            refused
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
