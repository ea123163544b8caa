use std::io::Write;
use std::process::ExitCode;

use serde_json::json;

use crate::ctx::Ctx;
use crate::error::{CliError, Result};
use crate::output::print_json;
use stella::session::Freshness;

/// Show where the session stands: its open turn, if any, and what to re-read
///
/// Prints the resume point (turn, step, last note, when) when a turn was left open, how many
/// files the session tracks, and which of them changed on disk since the session saw them: a
/// resuming agent should re-read those before writing. Always exits 0.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella resume
  git stella resume --json
  git stella resume --transcript session.jsonl >conversation.jsonl

Exit status:
  0  shown, whether or not a turn was left open
  2  an error: no session given or an unknown one, no such transcript")]
pub struct Args {
    /// Print JSON: {session, turn, tracked_count, changed}
    #[arg(long)]
    pub json: bool,
    /// Print the stored transcript NAME verbatim instead
    #[arg(long, value_name = "NAME")]
    pub transcript: Option<String>,
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, out: &mut dyn Write) -> Result {
    let (context, id) = ctx.open_session()?;
    if let Some(name) = &args.transcript {
        let Some(bytes) = context.session(&id).transcript(name)? else {
            let names = context.session(&id).transcript_names()?;
            return Err(
                CliError::new(format!("session '{id}' holds no transcript '{name}'")).hint(
                    if names.is_empty() {
                        "store one with 'git stella step --transcript FILE'".to_owned()
                    } else {
                        format!("it holds: {}", names.join(", "))
                    },
                ),
            );
        };
        out.write_all(&bytes)?;
        return Ok(ExitCode::SUCCESS);
    }
    let point = context.session(&id).resume_point()?;
    let status = context.session(&id).status()?;
    let changed: Vec<_> = status
        .iter()
        .filter(|(_, f)| matches!(f, Freshness::Changed | Freshness::Gone))
        .collect();
    if args.json {
        print_json(
            out,
            &json!({
                "session": id.as_str(),
                "turn": point.as_ref().map(|p| json!({
                    "id": p.turn, "started": p.started, "step_count": p.steps,
                    "note": p.note, "updated": p.updated,
                })),
                "tracked_count": status.len(),
                "changed": changed.iter().map(|(e, f)| json!({
                    "path": e.path.to_lossy(), "state": f.as_str(),
                })).collect::<Vec<_>>(),
            }),
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(out, "session {id}")?;
    match &point {
        Some(p) => {
            writeln!(
                out,
                "open turn {} since {}: {}, last at {}",
                p.turn,
                p.started,
                stella::text::count(p.steps, "step"),
                p.updated
            )?;
            if let Some(n) = &p.note {
                writeln!(out, "last note: {n}")?;
            }
        }
        None => writeln!(out, "no open turn")?,
    }
    writeln!(
        out,
        "{}",
        stella::text::count(status.len() as u64, "tracked file")
    )?;
    if !changed.is_empty() {
        writeln!(
            out,
            "changed since this session saw them (re-read before writing):"
        )?;
        for (e, f) in changed {
            writeln!(out, "  {:<8} {}", f.as_str(), e.path)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
