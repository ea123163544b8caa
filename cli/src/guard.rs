use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;

use crate::content_arg::read_content;
use crate::ctx::{Ctx, print_refusals};
use crate::error::Result;
use crate::output::print_json;
use stella::digest::Digest;
use stella::guard::{Allow, Conflict, Disk, Intent, Verdict};

/// Check files before an update or delete; exit 1 when a write would clobber someone's work
///
/// Refuses when the session read or wrote a path and its bytes changed since, or it was
/// deleted since (a write would re-create it). Allows a path the session never touched, a
/// create, a path it cannot read, a write whose bytes (--content) already equal the disk, and
/// a delete of a path already gone. Nothing is written and nothing is recorded, whatever the
/// answer: the check alone only asks (a refused `write`, `rm`, hook or MCP call is a step of the
/// session, which `git stella log` shows; a refused `guard` is not).
///
/// An agent host runs it before every tool that updates or deletes a file, and lets the tool run
/// only on exit 0. Nothing is written, whatever the outcome: after the tool ran,
/// record what it wrote with `git stella wrote`. `git stella write` and `git stella rm` do the
/// check, the change and the record in one step.
///
/// A refusal's first line is `refusing to write: <path>` (or `refusing to delete:`), followed by
/// why, the fix, and a short diff of what changed.
#[derive(clap::Args, Debug)]
#[command(after_long_help = concat!(decision_table!(), "
Examples:
  git stella guard src/lib.rs && apply-my-edit src/lib.rs
  git stella guard --delete old.txt && rm old.txt
  generate >new.rs
  git stella guard --content new.rs src/lib.rs   # equal bytes pass
  git stella guard --json src/a.rs src/b.rs

Exit status:
  0  every path is allowed
  1  a path is refused (each refusal is printed); nothing was written
  2  an error: no session given or an unknown one, a path outside the
     workspace, an unreadable --content file; with refusals too, both
     are reported
"))]
pub struct Args {
    /// Files inside the workspace, relative to the current folder or absolute
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Check for a delete instead of an update
    #[arg(long)]
    pub delete: bool,
    /// The bytes about to be written ('-' reads stdin): equal bytes on disk lose nothing
    #[arg(long, value_name = "FILE", conflicts_with = "delete")]
    pub content: Option<PathBuf>,
    /// Print JSON: {session, checks: [{path, decision, reason, seen, now, writer}]}
    #[arg(long)]
    pub json: bool,
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, out: &mut dyn Write) -> Result {
    let (context, id) = ctx.open_session()?;
    let named = ctx.resolve_all_named(&context, &args.paths)?;
    let paths: Vec<_> = named.iter().map(|n| n.path.clone()).collect();
    let intent = if args.delete {
        Intent::Delete
    } else {
        let content = match &args.content {
            Some(f) => Some(Digest::of(&read_content(f)?)),
            None => None,
        };
        Intent::Write { content }
    };
    // The check alone answers as the write would: refused while the configuration is invalid.
    let mut checks = context.session(&id).guard(&paths, intent)?;
    for (c, n) in checks.iter_mut().zip(&named) {
        c.via = n.link.clone();
    }
    if args.json {
        let mut list = Vec::with_capacity(checks.len());
        for c in &checks {
            let (decision, reason) = match c.verdict {
                Verdict::Allow(a) => (
                    "allow",
                    match a {
                        Allow::Untracked => "untracked",
                        Allow::Fresh => "unchanged",
                        Allow::Unreadable => "unreadable",
                        Allow::SameBytes => "same-bytes",
                        Allow::AlreadyGone => "already-deleted",
                    },
                ),
                Verdict::Refuse(r) => (
                    "refuse",
                    match r {
                        Conflict::Changed => "changed",
                        Conflict::Deleted => "deleted",
                        Conflict::Reread => "reread",
                        Conflict::Forgotten => "forgotten",
                        Conflict::Uncommitted => "uncommitted",
                        Conflict::Unkept => "unkept",
                    },
                ),
            };
            let seen = c.entry.as_ref().map(|e| e.seen.label());
            let now = match &c.disk {
                Disk::Present(d) => Some(d.to_hex()),
                _ => None,
            };
            let check = json!({
                "path": c.path.to_lossy(),
                "decision": decision,
                "reason": reason,
                "seen": seen,
                "now": now,
                "writer": c.writer.as_ref().map(|w| crate::output::writer_json(w.session.as_str(), w.at)),
            });
            list.push(check);
        }
        print_json(out, &json!({ "session": id.as_str(), "checks": list }))?;
    }
    // The check alone asks and records nothing: a refusal is recorded where a write was refused.
    if checks.iter().any(|c| c.refused()) {
        return Ok(print_refusals(ctx, &context, &checks));
    }
    Ok(ExitCode::SUCCESS)
}
