use std::io::Write;
use std::process::ExitCode;

use serde_json::json;

use crate::ctx::{Ctx, parse_session_id};
use crate::error::{CliError, Result};
use crate::output::print_json;
use crate::prune::{json_pruned, print_pruned, prune};
use crate::session_meta::{Meta, meta};
use stella::journal::Tip;
use stella::session::Context;
use stella::text::format_time;

/// Start, list, show and drop sessions
///
/// A session is one agent's (or person's) line of work: the files it read and wrote, and the
/// digests of what it saw, as commits on `refs/stella/sessions/<id>` in the store. Each agent
/// needs its own: a session cannot clobber itself, so two agents sharing one are not guarded
/// from each other.
#[derive(clap::Subcommand, Debug)]
#[command(after_long_help = "Examples:
  export STELLA_SESSION=$(git stella session start)
  git stella session start --id agent-1
  git stella session list
  git stella session show agent-1
  git stella session end agent-1
  git stella session drop agent-1
  git stella session undrop agent-1

Exit status:
  0  done
  2  an error: an unknown session, an id already taken, an invalid id")]
pub enum SessionCommand {
    Start(StartArgs),
    List(ListArgs),
    Show(ShowArgs),
    End(EndArgs),
    Drop(DropArgs),
    Undrop(UndropArgs),
    Prune(PruneArgs),
}

/// Start a session and print its id
///
/// Prints only the id on stdout, so `export STELLA_SESSION=$(git stella session start)` works.
/// There is no implicit current session: pass the id with `--session` or STELLA_SESSION.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  export STELLA_SESSION=$(git stella session start)
  git stella session start --id claude-1

Exit status:
  0  started; the id is on stdout
  2  an error: the id is taken or invalid (ids are [A-Za-z0-9._-], 1
     to 128 characters, not starting with . or -, without .., not
     ending in .lock)")]
pub struct StartArgs {
    /// Use this id instead of minting one ([A-Za-z0-9._-], 1 to 128 characters)
    // A value that starts with '-' still reaches the id's own check, which says what is wrong.
    #[arg(long, value_name = "ID", allow_hyphen_values = true)]
    pub id: Option<String>,
}

/// List the sessions of this workspace
///
/// One line per session, the most recently active first: its id, when it started, its steps, the
/// paths it tracks, and where it was replayed from (`-` for none). With no session, a note on
/// stderr says so and stdout stays empty. With --dropped, the dropped sessions still kept
/// instead, the last dropped first: 'git stella session undrop ID' brings one back.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella session list
  git stella session list --json
  git stella session list --dropped

Exit status:
  0  listed
  2  an error: not inside a git working tree")]
pub struct ListArgs {
    /// Print JSON: {sessions: [{session, started, origin, last_step, step_count, tracked_count,
    /// tip}]}; with --dropped, {dropped: [{session, dropped, last_step, step_count,
    /// tracked_count, tip}]}
    #[arg(long)]
    pub json: bool,
    /// List the dropped sessions that 'session undrop' can still bring back
    #[arg(long)]
    pub dropped: bool,
    #[command(flatten)]
    pub date: super::term::Dates,
}

/// Show one session: when it started, where it came from, its steps and how many files it tracks
///
/// `git stella --session ID status` lists the files themselves, each with whether it is unchanged.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella session show agent-1

Exit status:
  0  shown
  2  an error: no session given or an unknown one")]
pub struct ShowArgs {
    /// The session (default: --session or STELLA_SESSION)
    pub id: Option<String>,
    /// Print JSON: {session, started, origin, last_step, step_count, tracked_count, tip}
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub date: super::term::Dates,
}

/// End a session: its uncommitted writes stop being protected from other sessions
///
/// While a session is live, another session that never read a file it wrote cannot overwrite or
/// delete those bytes until git's HEAD holds them (a commit). Ending it lifts that: its work is
/// still kept in the journal ('git stella recover PATH'), and its own stale writes are still
/// refused. Its next step (a read, a write, a command) makes it live again. Claude Code's
/// SessionEnd hook ends its session.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella session end agent-1

Exit status:
  0  ended (or it had ended already)
  2  an error: no session given or an unknown one")]
pub struct EndArgs {
    /// The session (default: --session or STELLA_SESSION)
    pub id: Option<String>,
}

/// Drop a session: it stops guarding anything, and its id is free again
///
/// A dropped session no longer refuses its own stale writes or protects its uncommitted work
/// from other sessions. It is set aside, not deleted: 'git stella session undrop ID' brings it
/// back exactly as it was, until 'git stella gc' expires the drop (14 days by default, as git
/// keeps what a deleted branch pointed at; 'gc --expire-dropped' sets it). --dry-run says what
/// the session guards and changes nothing.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella session drop agent-1 --dry-run
  git stella session drop agent-1
  git stella session undrop agent-1                       # changed your mind
  git stella session drop agent-1 && git stella gc --expire-dropped now --grace 0   # forget now

Exit status:
  0  dropped (or, with --dry-run, shown)
  2  an error: an unknown session")]
pub struct DropArgs {
    /// The session to drop (required: nothing is dropped by default)
    pub id: String,
    /// Only say what the session guards; drop nothing
    #[arg(short = 'n', long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub date: super::term::Dates,
}

/// Bring back a dropped session, exactly as it was when dropped
///
/// The last drop of that id is restored: the session guards what it guarded and its history is
/// whole. The id must be free ('session drop' the session now using it first). A drop is kept
/// until 'git stella gc' expires it; 'git stella session list --dropped' lists them.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella session list --dropped
  git stella session undrop agent-1

Exit status:
  0  brought back
  2  an error: no dropped session of that id is kept, or a session has that id now")]
pub struct UndropArgs {
    /// The dropped session to bring back
    #[arg(value_name = "DROPPED_ID")]
    pub id: String,
    #[command(flatten)]
    pub date: super::term::Dates,
}

/// Drop every session whose last step is older than a duration
///
/// Each session dropped is named with its last step's time. A store holds every byte its sessions
/// read or wrote, secrets included: pruning is how it stops growing. A pruned session is dropped
/// as 'session drop' drops it: 'session undrop' brings it back until 'git stella gc' expires the
/// drop (14 days; 'gc --expire-dropped'), and what it saw is then forgotten. A project can have
/// 'gc' prune for it: '[retention] sessions-older-than = "30d"' in '.stella/config.toml'.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella session prune --older-than 30d --dry-run
  git stella session prune --older-than 30d && git stella gc

Exit status:
  0  pruned (or, with --dry-run, listed), including when nothing was old enough
  2  an error: a duration that does not read, not inside a git working tree")]
pub struct PruneArgs {
    /// Sessions idle longer than this: a whole number and a unit, s, m, h, d or w (30d, 2w)
    #[arg(long, value_name = "DURATION", value_parser = parse_age)]
    pub older_than: std::time::Duration,
    /// Only list the sessions that would be dropped
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub date: super::term::Dates,
    /// Print JSON: {dry_run, sessions: [{session, last_step}]}
    #[arg(long)]
    pub json: bool,
}

fn parse_age(text: &str) -> std::result::Result<std::time::Duration, String> {
    stella::config::parse_duration(text).map_err(|e| e.to_string())
}

/// One line of `session list`.
struct Row<'a> {
    id: &'a stella::ids::SessionId,
    /// When it started (or was dropped), as asked.
    when: String,
    tip: &'a Tip,
    /// Where it was replayed from; `None`: the column is not shown.
    origin: Option<String>,
}

/// `session list`'s table: columns wide enough for the longest id (a Claude Code session id is
/// 36 characters) and the longest date, `when` headed `heading`.
fn print_table(out: &mut dyn Write, heading: &str, rows: &[Row<'_>]) -> std::io::Result<()> {
    let width = rows
        .iter()
        .map(|r| r.id.as_str().len())
        .max()
        .unwrap_or(0)
        .max(2);
    let when = rows
        .iter()
        .map(|r| r.when.chars().count())
        .max()
        .unwrap_or(0)
        .max(heading.len());
    let origin = |o: &Option<String>| o.as_ref().map_or(String::new(), |o| format!("  {o}"));
    let has_origin = rows.iter().any(|r| r.origin.is_some());
    writeln!(
        out,
        "{:<width$}  {heading:<when$}  {:>6} {:>8}{}",
        "ID",
        "STEPS",
        "TRACKED",
        if has_origin { "  ORIGIN" } else { "" }
    )?;
    for r in rows {
        writeln!(
            out,
            "{:<width$}  {:<when$}  {:>6} {:>8}{}",
            r.id.as_str(),
            r.when,
            r.tip.steps,
            r.tip.tracked,
            origin(&r.origin)
        )?;
    }
    Ok(())
}

fn json_of(id: &str, meta: &Meta, tip: &Tip) -> serde_json::Value {
    json!({
        "session": id,
        "started": meta.started,
        "origin": meta.origin.as_ref().map(|(s, a)| json!({"session": s, "artifact": a})),
        "last_step": format_time(tip.time),
        "step_count": tip.steps,
        "tracked_count": tip.tracked,
        "tip": tip.commit.to_string(),
    })
}

pub fn run(ctx: &mut Ctx<'_>, cmd: &SessionCommand, out: &mut dyn Write) -> Result {
    let context = ctx.open()?;
    match cmd {
        SessionCommand::Start(a) => {
            let id = a.id.as_deref().map(parse_session_id).transpose()?;
            let id = context.start_session(id)?;
            writeln!(out, "{id}")?;
        }
        SessionCommand::List(a) if a.dropped => list_dropped(ctx, &context, a, out)?,
        SessionCommand::List(a) => list(ctx, &context, a, out)?,
        SessionCommand::End(a) => {
            let id = match &a.id {
                Some(id) => parse_session_id(id)?,
                None => ctx.session_id()?,
            };
            context.session(&id).end()?;
            writeln!(ctx.err, "ended session {id}")?;
        }
        SessionCommand::Show(a) => show(ctx, &context, a, out)?,
        SessionCommand::Prune(a) => {
            let pruned = prune(&context, a.older_than, a.dry_run)?;
            if a.json {
                print_json(
                    out,
                    &json!({ "dry_run": a.dry_run, "sessions": json_pruned(&pruned) }),
                )?;
            } else {
                print_pruned(&pruned, a.dry_run, &a.date, out)?;
            }
            if pruned.is_empty() {
                ctx.say(format_args!("no session is idle that long"));
            } else if !a.dry_run {
                ctx.say(format_args!(
                    "'git stella session undrop ID' brings one back until 'git stella gc' expires the drop (14 days by default)"
                ));
            }
        }
        SessionCommand::Drop(a) => drop_session(ctx, &context, a, out)?,
        SessionCommand::Undrop(a) => {
            let id = parse_session_id(&a.id)?;
            let back = context.undrop_session(&id).map_err(|e| {
                let hint = match &e {
                    stella::session::Error::Journal(stella::journal::Error::NotDropped {
                        ..
                    }) => Some("'git stella session list --dropped' lists the dropped sessions still kept".to_owned()),
                    stella::session::Error::Journal(stella::journal::Error::SessionExists {
                        ..
                    }) => Some(format!("'git stella session drop {id}' sets the session now using that id aside first")),
                    _ => None,
                };
                let mut e = CliError::from(e);
                e.hint = hint.or(e.hint);
                e
            })?;
            ctx.say(format_args!(
                "brought back session {id} ({}, {} tracked; dropped {})",
                stella::text::count(back.tip.steps, "step"),
                stella::text::count(back.tip.tracked, "file"),
                a.date.show(
                    gix::date::Time::new(back.at, 0),
                    gix::date::Time::now_utc().seconds
                ),
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `session list --dropped`: the dropped sessions still kept.
fn list_dropped(
    ctx: &mut Ctx<'_>,
    context: &Context,
    a: &ListArgs,
    out: &mut dyn Write,
) -> Result<()> {
    let dropped = context.journal().dropped()?;
    let date = a.date.format();
    if a.json {
        let list: Vec<_> = dropped
            .iter()
            .map(|d| {
                json!({
                    "session": d.id.as_str(),
                    "dropped": format_time(gix::date::Time::new(d.at, 0)),
                    "last_step": format_time(d.tip.time),
                    "step_count": d.tip.steps,
                    "tracked_count": d.tip.tracked,
                    "tip": d.tip.commit.to_string(),
                })
            })
            .collect();
        print_json(out, &json!({ "dropped": list }))?;
    } else if dropped.is_empty() {
        writeln!(ctx.err, "no dropped session is kept in this workspace")?;
    } else {
        let now = gix::date::Time::now_utc().seconds;
        let rows: Vec<Row> = dropped
            .iter()
            .map(|d| Row {
                id: &d.id,
                when: date.show(gix::date::Time::new(d.at, 0), now),
                tip: &d.tip,
                origin: None,
            })
            .collect();
        print_table(out, "DROPPED", &rows)?;
    }
    Ok(())
}

/// `session list`: the sessions, the most recently active first.
fn list(ctx: &mut Ctx<'_>, context: &Context, a: &ListArgs, out: &mut dyn Write) -> Result<()> {
    let mut sessions = context.journal().sessions()?;
    // The most recently active first, as a person looks for the one they just used.
    sessions.sort_by(|x, y| {
        y.1.time
            .seconds
            .cmp(&x.1.time.seconds)
            .then_with(|| x.0.cmp(&y.0))
    });
    if a.json {
        let list: Vec<_> = sessions
            .iter()
            .map(|(id, tip)| json_of(id.as_str(), &meta(context, id), tip))
            .collect();
        print_json(out, &json!({ "sessions": list }))?;
    } else {
        if sessions.is_empty() {
            writeln!(
                ctx.err,
                "no sessions in this workspace ('git stella session start' starts one)"
            )?;
            return Ok(());
        }
        let date = a.date.format();
        let now = gix::date::Time::now_utc().seconds;
        let rows: Vec<Row> = sessions
            .iter()
            .map(|(id, tip)| {
                let meta = meta(context, id);
                Row {
                    id,
                    when: meta.started_shown(&date, now),
                    tip,
                    origin: Some(meta.origin_text()),
                }
            })
            .collect();
        print_table(out, "STARTED", &rows)?;
    }
    Ok(())
}

/// `session show`: one session's metadata and last step.
fn show(ctx: &mut Ctx<'_>, context: &Context, a: &ShowArgs, out: &mut dyn Write) -> Result<()> {
    let id = match &a.id {
        Some(id) => parse_session_id(id)?,
        None => ctx.session_id()?,
    };
    let tip = context.journal().tip(&id)?;
    let meta = meta(context, &id);
    if a.json {
        print_json(out, &json_of(id.as_str(), &meta, &tip))?;
    } else {
        writeln!(out, "session   {id}")?;
        let date = a.date.format();
        let now = gix::date::Time::now_utc().seconds;
        writeln!(out, "started   {}", meta.started_shown(&date, now))?;
        writeln!(out, "origin    {}", meta.origin_text())?;
        writeln!(
            out,
            "last step {} ({})",
            date.show(tip.time, now),
            stella::text::escape_controls(&tip.summary)
        )?;
        writeln!(out, "steps     {}", tip.steps)?;
        writeln!(out, "tracked   {}", tip.tracked)?;
        writeln!(out, "ref       {}", stella::journal::session_ref(&id))?;
    }
    Ok(())
}

/// `session drop`: set a session aside, saying what it held (or, `--dry-run`, would).
fn drop_session(
    ctx: &mut Ctx<'_>,
    context: &Context,
    a: &DropArgs,
    out: &mut dyn Write,
) -> Result<()> {
    let id = parse_session_id(&a.id)?;
    let journal = context.journal();
    // A damaged session can be dropped too (its repair's hint says so): what it holds
    // is said when it can be read.
    let summary = journal.tip(&id).and_then(|tip| {
        let wrote = journal
            .entries_of_tree(tip.tree)?
            .iter()
            .filter(|e| e.wrote.is_some())
            .count();
        Ok(format!(
            " ({}, {} tracked, {wrote} of them written by it; last step {})",
            stella::text::count(tip.steps, "step"),
            stella::text::count(tip.tracked, "file"),
            a.date.show(tip.time, gix::date::Time::now_utc().seconds),
        ))
    });
    let what = match summary {
        Ok(summary) => format!("session {id}{summary}"),
        Err(stella::journal::Error::UnknownSession { .. }) => {
            return Err(stella::journal::Error::UnknownSession { id }.into());
        }
        Err(_) => format!("session {id} (its journal cannot be read whole)"),
    };
    if a.dry_run {
        writeln!(out, "would drop {what}")?;
        ctx.say(format_args!(
            "it would stop guarding those files; 'git stella session undrop {id}' would bring it back until gc expires the drop"
        ));
    } else {
        match context.drop_session(&id).map_err(CliError::from)? {
            stella::journal::DropOutcome::Kept => {
                ctx.say(format_args!("dropped {what}"));
                ctx.say(format_args!(
                    "'git stella session undrop {id}' brings it back until 'git stella gc' expires the drop (14 days by default)"
                ));
            }
            stella::journal::DropOutcome::Removed => ctx.say(format_args!(
                "dropped {what}; its journal was damaged, so it was removed rather than kept for undrop"
            )),
        }
    }
    Ok(())
}
