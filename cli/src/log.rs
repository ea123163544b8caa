use std::io::Write;
use std::process::ExitCode;

use crate::ctx::{Ctx, parse_session_id};
use crate::error::Result;
use crate::term::Slot;
use stella::text::format_time;

/// Show a session's steps, newest first; without a session, every session's
///
/// One line per step: its commit in the store, when, and what happened (`read src/a.rs`,
/// `write src/a.rs`, `turn begin`, …). A replayed session's history continues into the session
/// it was replayed from, through the artifact's checkpoint commit. Without a session, every
/// session is shown with where it was replayed from, and sessions replayed from one artifact
/// are named as forks of it. The same history is readable with plain git:
/// `git --git-dir="$(git stella store-path)" log refs/stella/sessions/<id>`.
///
/// A refused write is a step too (`refused write src/a.rs`); with --json its step carries what
/// was refused: the path, the digests seen and found, and the session that wrote what was found
/// when one did.
///
/// With --graph, the sessions' histories are drawn as one graph, as `git log --graph` draws
/// branches: each step once, a replay joined to the session it came from, and forks of one
/// artifact branching from its checkpoint; each session's newest step is labelled with its
/// name. git draws it, from the store.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella log agent-1
  git stella log | head
  git stella log agent-1 --json | jq '.steps[] | select(.refused)'
  git stella log --date=relative -n 5
  git stella log --graph

Exit status:
  0  shown
  2  an error: an unknown session, not inside a git working tree")]
pub struct Args {
    /// The session (default: --session or STELLA_SESSION; none: every session)
    pub id: Option<String>,
    /// Print JSON: {steps: [{session, commit, time, summary, paths, refused}]}
    #[arg(long, conflicts_with = "graph")]
    pub json: bool,
    /// Draw every session's steps (or the session's, with its origins) as one graph: forks and
    /// replays each drawn once
    #[arg(long)]
    pub graph: bool,
    #[command(flatten)]
    pub date: super::term::Dates,
    /// Show only the last N steps of each session
    #[arg(short = 'n', long = "max-count", value_name = "N")]
    pub max_count: Option<usize>,
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, out: &mut dyn Write) -> Result {
    let id = match (&args.id, &ctx.session) {
        (Some(id), _) | (None, Some(id)) => Some(parse_session_id(id)?),
        (None, None) => None,
    };
    let context = ctx.open()?;
    if args.graph {
        return graph(ctx, &context, id.as_ref(), args, out);
    }
    let journal = context.journal();
    let ids = match id {
        Some(id) => vec![id],
        None => journal.sessions()?.into_iter().map(|(id, _)| id).collect(),
    };
    if args.json {
        let mut steps = Vec::new();
        for id in &ids {
            // The session's timeline, newest first: each step with the paths whose entry it
            // changed and what it refused (a refusal's own path is one of its paths).
            let timeline = stella::timeline::of(&journal, id, false)?;
            for step in timeline
                .iter()
                .rev()
                .take(args.max_count.unwrap_or(usize::MAX))
            {
                let refused: Vec<_> = step.refused.iter().map(|r| &r.record).collect();
                let paths: Vec<String> = step
                    .paths
                    .iter()
                    .map(|p| p.path.to_lossy().into_owned())
                    .chain(refused.iter().map(|r| r.path.clone()))
                    .collect();
                steps.push(serde_json::json!({
                    "session": id.as_str(),
                    "commit": step.commit.to_string(),
                    "time": format_time(step.time),
                    "summary": step.summary,
                    "paths": paths,
                    "refused": refused.into_iter().map(crate::output::record_json).collect::<Vec<_>>(),
                }));
            }
        }
        crate::output::print_json(out, &serde_json::json!({ "steps": steps }))?;
        return Ok(ExitCode::SUCCESS);
    }
    let date = args.date.format();
    let now = gix::date::Time::now_utc().seconds;
    let many = ids.len() > 1 || args.id.is_none() && ctx.session.is_none();
    let metas: Vec<_> = ids
        .iter()
        .map(|id| crate::session_meta::meta(&context, id))
        .collect();
    for (i, id) in ids.iter().enumerate() {
        if many {
            if i > 0 {
                writeln!(out)?;
            }
            match &metas[i].origin {
                Some((origin, artifact)) => {
                    let forks: Vec<&str> = ids
                        .iter()
                        .zip(&metas)
                        .filter(|(other, m)| {
                            *other != id && m.origin.as_ref().is_some_and(|(_, a)| a == artifact)
                        })
                        .map(|(other, _)| other.as_str())
                        .collect();
                    let forks = if forks.is_empty() {
                        String::new()
                    } else {
                        format!("; forked with {}", forks.join(", "))
                    };
                    // The origin's name came from an artifact: escaped, never printed raw.
                    writeln!(
                        out,
                        "session {id} (replayed from session {} via artifact {}{forks})",
                        stella::text::escape_controls(origin),
                        stella::text::escape_controls(
                            &artifact.chars().take(12).collect::<String>()
                        )
                    )?;
                }
                None => writeln!(out, "session {id}")?,
            }
        }
        let history = journal.history(id)?;
        for (commit, time, summary) in history
            .into_iter()
            .take(args.max_count.unwrap_or(usize::MAX))
        {
            let short = ctx
                .paint
                .paint(Slot::Commit, &commit.to_hex_with_len(10).to_string());
            let summary = stella::text::escape_controls(&summary);
            let summary = if summary.starts_with("refused ") {
                ctx.paint.paint(Slot::Bad, &summary)
            } else {
                summary.into_owned()
            };
            writeln!(out, "{short} {} {summary}", date.show(time, now))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `log --graph`: git draws the store's session refs, and each line's fields are shown as the
/// plain log shows them (times by --date, names and summaries escaped, refusals in red).
fn graph(
    ctx: &mut Ctx<'_>,
    context: &stella::session::Context,
    id: Option<&stella::ids::SessionId>,
    args: &Args,
    out: &mut dyn Write,
) -> Result {
    const SESSIONS: &str = stella::journal::SESSIONS;
    let mut cmd = stella::store::git_command(context.store().dir());
    cmd.args([
        "log",
        "--graph",
        "--decorate=full",
        "--format=%x1f%H%x1f%ct%x1f%D%x1f%s",
    ])
    .arg(format!("--decorate-refs={SESSIONS}"));
    if let Some(n) = args.max_count {
        cmd.arg(format!("--max-count={n}"));
    }
    match id {
        Some(id) => cmd.arg(stella::journal::session_ref(id)),
        None => {
            if context.journal().sessions()?.is_empty() {
                return Ok(ExitCode::SUCCESS);
            }
            cmd.arg(format!("--glob={SESSIONS}*"))
        }
    };
    let shown = cmd.output().map_err(|e| {
        crate::error::CliError::new("could not run git to draw the graph").cause(e.to_string())
    })?;
    if !shown.status.success() {
        return Err(
            crate::error::CliError::new("git could not draw the sessions' graph")
                .cause(String::from_utf8_lossy(&shown.stderr).trim().to_owned()),
        );
    }
    let date = args.date.format();
    let now = gix::date::Time::now_utc().seconds;
    for line in String::from_utf8_lossy(&shown.stdout).lines() {
        let mut fields = line.splitn(5, '\u{1f}');
        let graph = fields.next().unwrap_or_default();
        let (Some(commit), Some(time), Some(refs), Some(summary)) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            // A line of the graph alone, between steps.
            writeln!(out, "{graph}")?;
            continue;
        };
        let short = ctx
            .paint
            .paint(Slot::Commit, commit.get(..10).unwrap_or(commit));
        let time = gix::date::Time::new(time.parse().unwrap_or(0), 0);
        let names: Vec<String> = refs
            .split(", ")
            .filter_map(|r| r.strip_prefix(SESSIONS))
            .map(|name| stella::text::escape_controls(name).into_owned())
            .collect();
        let label = if names.is_empty() {
            String::new()
        } else {
            ctx.paint
                .paint(Slot::Name, &format!("({}) ", names.join(", ")))
        };
        let summary = stella::text::escape_controls(summary);
        let summary = if summary.starts_with("refused ") {
            ctx.paint.paint(Slot::Bad, &summary)
        } else {
            summary.into_owned()
        };
        writeln!(
            out,
            "{graph}{short} {} {label}{summary}",
            date.show(time, now)
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
