use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;

use crate::artifact_arg::open_artifact;
use crate::ctx::Ctx;
use crate::error::Result;
use crate::output::print_json;
use stella::artifact::CONTENTS_WARNING;
use stella::text::escape_controls;

/// Show an artifact's manifest, base commit, fingerprint and what it holds
///
/// Checks the whole artifact first (the pack's checksum, every object it carries) and changes
/// nothing. FILE may also name a checkpoint ref fetched into this repository with stock git
/// (refs/stella/checkpoints/<id>, when no file has that name); a file works outside a git
/// repository.
/// Always shows the contents warning: an artifact holds the conversation verbatim and the full
/// bytes of every file the session read, secrets included; Stella does not encrypt, redact or
/// expire it.
///
/// Every string the file supplies (session, producer, provenance, paths) is shown with control
/// characters escaped (an escape byte prints as `\x1b`, a newline as `\n`), so an artifact cannot
/// drive the terminal or forge a line; --json gives them as they are, JSON-escaped.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella inspect agent-1.stella.bundle
  git stella inspect --json agent-1.stella.bundle | jq .fingerprint
  git stella inspect refs/stella/checkpoints/agent-1    # after a git fetch of it

Exit status:
  0  shown
  2  the file cannot be read, is not a Stella artifact (garbage, a plain
     git bundle), is corrupt or truncated, or has a format this build
     does not read")]
pub struct Args {
    /// The artifact: a file, or a checkpoint ref in this repository
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Print JSON: {format, session, base, object_format, producer, started, last_step,
    /// step_count, tip, object_count, provenance, fingerprint: [{path, blake3}], needs_reread, transcripts,
    /// warning}
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub date: super::term::Dates,
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, out: &mut dyn Write) -> Result {
    let head = open_artifact(ctx, &args.file, |_| ())?.0.head;
    let m = &head.manifest;
    if args.json {
        print_json(
            out,
            &json!({
                "format": m.format,
                "session": m.session,
                "base": m.base_commit(),
                "object_format": m.object_format,
                "producer": m.producer,
                "started": m.started,
                "last_step": m.last_step,
                "step_count": m.steps,
                "tip": head.tip.to_string(),
                "object_count": head.objects,
                "provenance": m.provenance,
                "fingerprint": head.fingerprint.iter().map(|(p, d)| json!({"path": p.to_lossy(), "blake3": d.to_hex()})).collect::<Vec<_>>(),
                "needs_reread": m.needs_reread,
                "transcripts": m.transcripts,
                "warning": CONTENTS_WARNING,
            }),
        )?;
    } else {
        // Every string here comes from the file: escaped, so none can drive the terminal or
        // forge a line (JSON output escapes them itself).
        let esc = escape_controls;
        writeln!(out, "format      {}", m.format)?;
        writeln!(out, "session     {}", esc(&m.session))?;
        writeln!(
            out,
            "base        {}",
            esc(m.base_commit().unwrap_or("none (unborn HEAD)"))
        )?;
        writeln!(out, "producer    {}", esc(&m.producer))?;
        let now = gix::date::Time::now_utc().seconds;
        writeln!(out, "started     {}", args.date.show_text(&m.started, now))?;
        writeln!(
            out,
            "last step   {} ({})",
            args.date.show_text(&m.last_step, now),
            stella::text::count(m.steps, "step")
        )?;
        for p in &m.provenance {
            let artifact: String = p.artifact.chars().take(12).collect();
            writeln!(
                out,
                "replayed    from session {} (artifact {}) at {}",
                esc(&p.session),
                esc(&artifact),
                args.date.show_text(&p.replayed, now)
            )?;
        }
        let total: u64 = m.transcripts.values().sum();
        writeln!(
            out,
            "transcript  {} bytes in {}",
            total,
            stella::text::count(m.transcripts.len() as u64, "file")
        )?;
        writeln!(out, "objects     {}", head.objects)?;
        writeln!(out, "files       {}", head.fingerprint.len())?;
        for (p, d) in &head.fingerprint {
            writeln!(out, "  {}  {p}", &d.to_hex()[..16])?;
        }
        for p in &m.needs_reread {
            writeln!(out, "  (re-read)         {}", esc(p))?;
        }
    }
    ctx.say(format_args!("warning: {CONTENTS_WARNING}"));
    Ok(ExitCode::SUCCESS)
}
