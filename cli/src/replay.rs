use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use crate::artifact_arg::source_err;
use crate::ctx::{Ctx, parse_session_id};
use crate::error::Result;
use crate::output::print_mismatches;
use stella::session::replay::{Options, Outcome};
use stella::text::escape_controls;

/// Start a new session from an artifact, refused when it does not belong to this tree
///
/// The whole artifact is checked first (the pack's checksum, every object it carries): a corrupt
/// or truncated one is an error (exit 2) before any check of the tree, write or session, even
/// with --ignore-fingerprint. FILE may also name a checkpoint ref fetched into this repository
/// with stock git (refs/stella/checkpoints/<id>, when no file has that name): Stella itself
/// uploads nothing and opens no network connection.
///
/// Apply (the default): re-hash every path in the artifact's fingerprint here; any mismatch
/// refuses (exit 1), names each file, and consumes nothing. On success the artifact's objects
/// are imported into this workspace's store (with git's object checks on) and a new session
/// starts whose staleness map is the artifact's fingerprint, so the guard protects those files at
/// once. Prints the new session's id.
///
/// --materialize first writes each of the session's files into the tree, where that loses
/// nobody's work: the path is absent, already holds the session's bytes, or holds the bytes the
/// session started from or the base commit's version. Anything else refuses before the first
/// file is written, and so does a malformed artifact (a file it lacks or whose bytes do not match
/// its fingerprint, a path that is both a file and a folder). Each file is checked again just
/// before it takes its name: one that changed since it was checked is left as it is and
/// materialize stops there. It never writes outside the workspace, into .git or .stella, or
/// through a symbolic link.
///
/// --ignore-fingerprint is the only override; Stella never takes it on its own. Mismatched paths
/// keep the artifact's digests, so a write to them is refused until they are re-read.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella replay agent-1.stella.bundle
  git stella replay --materialize agent-1.stella.bundle    # a fresh clone at the base
  git stella replay --materialize --as 0bb3a8b0-21cf agent-1.stella.bundle
  git stella replay --ignore-fingerprint agent-1.stella.bundle
  git fetch origin refs/stella/checkpoints/agent-1:refs/stella/checkpoints/agent-1
  git stella replay refs/stella/checkpoints/agent-1

Exit status:
  0  a new session started; its id is printed (with --dry-run: nothing
     would be refused)
  1  refused: the fingerprint does not match this tree, or materialize
     would overwrite someone's work (with --dry-run: would refuse);
     nothing was consumed or written.
     Or a file changed while materialize ran: the files before it were
     written, no session was started
  2  an error: not a readable artifact, a corrupt or truncated one, an
     unsupported format, a hostile path, an existing --as id")]
pub struct Args {
    /// The artifact: a file, or a checkpoint ref in this repository
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Write the session's files into the tree first
    #[arg(long)]
    pub materialize: bool,
    /// With --materialize: print what would be written, kept and refused; write, import and
    /// start nothing
    #[arg(long, requires = "materialize")]
    pub dry_run: bool,
    /// Replay even when the fingerprint does not match this tree
    #[arg(long)]
    pub ignore_fingerprint: bool,
    /// Name the new session (an existing id is an error); without it, the session keeps the id
    /// it had where it was checkpointed when that id is free here, else gets a new one
    #[arg(long = "as", value_name = "ID")]
    pub as_id: Option<String>,
    /// Print JSON: {outcome (started, mismatch, blocked, changed, plan), session, from, written,
    /// mismatches, blocked, changed_path, write, keep}
    #[arg(long)]
    pub json: bool,
}

/// Paths materialize would refuse, and why, in JSON.
fn blocked_json(blocked: &[stella::session::replay::Blocked]) -> serde_json::Value {
    blocked
        .iter()
        .map(|b| serde_json::json!({"path": b.path.to_lossy(), "why": b.why}))
        .collect::<Vec<_>>()
        .into()
}

/// What `replay --json` prints: one shape for every outcome.
fn json_of(outcome: &Outcome) -> serde_json::Value {
    let pairs = |list: &[(stella::paths::RelPath, stella::session::replay::Mismatch)]| {
        list.iter()
            .map(|(p, how)| serde_json::json!({"path": p.to_lossy(), "state": how.as_str()}))
            .collect::<Vec<_>>()
    };
    let paths = |list: &[stella::paths::RelPath]| {
        list.iter()
            .map(|p| p.to_lossy().into_owned())
            .collect::<Vec<_>>()
    };
    let mut value = serde_json::json!({
        "outcome": null,
        "session": null,
        "from": null,
        "written": [],
        "mismatches": [],
        "blocked": [],
        "changed_path": null,
        "write": [],
        "keep": [],
    });
    match outcome {
        Outcome::Mismatch(m) => {
            value["outcome"] = "mismatch".into();
            value["mismatches"] = pairs(m).into();
        }
        Outcome::Blocked(blocked) => {
            value["outcome"] = "blocked".into();
            value["blocked"] = blocked_json(blocked);
        }
        Outcome::Changed { path, written } => {
            value["outcome"] = "changed".into();
            value["changed_path"] = path.to_lossy().into();
            value["written"] = paths(written).into();
        }
        Outcome::Plan {
            write,
            keep,
            blocked,
        } => {
            value["outcome"] = "plan".into();
            value["write"] = write
                .iter()
                .map(|(p, over)| {
                    let over = match over {
                        stella::session::replay::Over::Nothing => "absent",
                        stella::session::replay::Over::Origin => "origin",
                        stella::session::replay::Over::Base => "base",
                    };
                    serde_json::json!({"path": p.to_lossy(), "over": over})
                })
                .collect::<Vec<_>>()
                .into();
            value["keep"] = paths(keep).into();
            value["blocked"] = blocked_json(blocked);
        }
        Outcome::Started(r) => {
            let m = &r.head.manifest;
            value["outcome"] = "started".into();
            value["session"] = r.id.as_str().into();
            value["from"] = serde_json::json!({"session": m.session, "base": m.base_commit()});
            value["written"] = paths(&r.written).into();
            value["mismatches"] = pairs(&r.ignored).into();
        }
    }
    value
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, out: &mut dyn Write) -> Result {
    let context = ctx.open()?;
    let options = Options {
        materialize: args.materialize,
        ignore_fingerprint: args.ignore_fingerprint,
        as_id: args.as_id.as_deref().map(parse_session_id).transpose()?,
        dry_run: args.dry_run,
        progress: ctx.progress,
    };
    let source = stella::artifact::Source::from_arg(&ctx.cwd, &args.file);
    let outcome = context.replay(source, &options).map_err(source_err)?;
    match &outcome {
        Outcome::Started(r) => tracing::info!(
            session = %r.id,
            written = r.written.len(),
            ignored = r.ignored.len(),
            "replayed: the artifact's objects are in the store and the session is guarded"
        ),
        Outcome::Mismatch(m) => tracing::info!(files = m.len(), "replay refused: fingerprint"),
        Outcome::Blocked(b) => tracing::info!(files = b.len(), "replay refused: materialize"),
        Outcome::Changed { path, .. } => tracing::info!(%path, "materialize stopped"),
        Outcome::Plan { write, .. } => tracing::info!(files = write.len(), "dry run"),
    }
    if args.json {
        crate::output::print_json(out, &json_of(&outcome))?;
    }
    // With --json, the id is in the JSON; what people read still goes to stderr.
    let mut sink = io::sink();
    let out: &mut dyn Write = if args.json { &mut sink } else { out };
    match outcome {
        Outcome::Mismatch(m) => {
            print_mismatches(ctx.err, &m);
            let _ = writeln!(
                ctx.err,
                "nothing was replayed; to replay anyway, with those files still guarded: 'git stella replay --ignore-fingerprint {}'",
                args.file.display()
            );
            Ok(ExitCode::from(1))
        }
        Outcome::Blocked(blocked) => {
            let _ = writeln!(
                ctx.err,
                "refusing to materialize: {} someone's work",
                match blocked.len() {
                    1 => "1 file holds".to_owned(),
                    n => format!("{n} files hold"),
                }
            );
            for b in &blocked {
                let _ = writeln!(ctx.err, "  {}: {}", b.path, escape_controls(&b.why));
            }
            let _ = writeln!(
                ctx.err,
                "Nothing was written. Commit or move those changes, or replay without --materialize."
            );
            Ok(ExitCode::from(1))
        }
        Outcome::Changed { path, written } => {
            let _ = writeln!(
                ctx.err,
                "refusing to materialize: {path} changed while the artifact was being materialized"
            );
            let _ = writeln!(
                ctx.err,
                "Someone wrote it after it was checked: it was left as it is, and nothing after it was written."
            );
            for p in &written {
                let _ = writeln!(ctx.err, "  written before it: {p}");
            }
            let _ = writeln!(
                ctx.err,
                "No session was started. Look at what changed, then replay again."
            );
            Ok(ExitCode::from(1))
        }
        Outcome::Plan {
            write,
            keep,
            blocked,
        } => {
            let here = ctx.here(context.root());
            for (p, over) in &write {
                writeln!(out, "write   {}  ({})", ctx.shown(p, &here), over.as_str())?;
            }
            for p in &keep {
                writeln!(
                    out,
                    "keep    {}  (already holds the session's bytes)",
                    ctx.shown(p, &here)
                )?;
            }
            for b in &blocked {
                writeln!(
                    out,
                    "refuse  {}  ({})",
                    ctx.shown(&b.path, &here),
                    escape_controls(&b.why)
                )?;
            }
            ctx.say(format_args!(
                "stella: dry run: {} to write, {} kept, {} refused; nothing was written",
                write.len(),
                keep.len(),
                blocked.len()
            ));
            Ok(ExitCode::from(if blocked.is_empty() { 0 } else { 1 }))
        }
        Outcome::Started(r) => {
            let m = &r.head.manifest;
            // The session and base come from the file: escaped, never printed raw.
            let session = escape_controls(&m.session);
            let base = escape_controls(m.base_commit().unwrap_or("none"));
            ctx.say(format_args!(
                "stella: replayed session {session} as {}: {} guarded{}",
                r.id,
                stella::text::count(r.head.fingerprint.len() as u64, "file"),
                match r.written.len() {
                    0 => String::new(),
                    n => format!(", {n} written"),
                }
            ));
            if !r.written.is_empty() {
                ctx.say(format_args!(
                    "stella: wrote {} of session {session}; it was made against base commit {base}, and the rest of the repository is not in the artifact",
                    stella::text::count(r.written.len() as u64, "file"),
                ));
            }
            if let Some(here) = &r.head_differs {
                ctx.say(format_args!(
                    "stella: HEAD here is {here}, not the artifact's base commit {base}: the fingerprint matched, which is the check that counts",
                ));
            }
            for (p, how) in &r.ignored {
                ctx.say(format_args!(
                    "stella: replayed over a mismatch: {p} is {} here; a write to it is refused until it is re-read",
                    how.as_str()
                ));
            }
            writeln!(out, "{}", r.id)?;
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
