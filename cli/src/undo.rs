use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;

use crate::ctx::{Ctx, print_refusals};
use crate::error::Result;
use crate::output::print_json;
use stella::journal::version_id;
use stella::session::undo::Undone;

/// Put back what was in each file before the session first wrote it
///
/// For every file the session wrote (or only the PATHs given): the bytes it read before its first
/// write, the bytes its first write replaced, or no file at all for a file it created. A file the
/// session deleted comes back as it was before the session's first write, else as the session
/// saw it when it deleted it, unless something was put in its place since. Each file goes
/// through the guard like any write: a file someone changed after the session's last write is
/// refused, by name, with the diff, and left alone; the others are undone. A folder that the
/// files it removes leave empty goes too, as with 'git rm' (never one holding anything else).
/// The undo is one step of the session, and an undo run right after it puts back what it
/// replaced.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella --session agent-1 undo
  git stella --session agent-1 undo src/lib.rs
  git stella --session agent-1 undo --dry-run   # what it would do; nothing changes
  git stella --session agent-1 undo          # again, right after: undoes the undo

Exit status:
  0  every file undone (or nothing to undo)
  1  a file changed since the session's last write was refused (each is printed);
     the other files were undone
  2  an error: no session given or an unknown one, a path outside the workspace;
     or a file left as it is, named with why (its earlier bytes were not kept or
     cannot be read, it cannot be written, a deleted file's place was taken);
     the other files were undone")]
pub struct Args {
    /// Only these files, inside the workspace
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Say what would be restored, removed, refused or left, as the real run checks it; write and
    /// record nothing (exit status as the real run's)
    #[arg(long, short = 'n')]
    pub dry_run: bool,
    /// Print JSON: {session, dry_run, restored: [{path, version}], removed, removed_folders,
    /// refused: [{intent, path, seen, found, writer}], failed: [{path, why}]}
    #[arg(long)]
    pub json: bool,
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, out: &mut dyn Write) -> Result {
    let (context, id) = ctx.open_session()?;
    let only = ctx.resolve_all(&context, &args.paths)?;
    let done = if args.dry_run {
        context.session(&id).undo_plan(&only)?
    } else {
        context.session(&id).undo(&only)?.0
    };
    let would = if args.dry_run { "would be " } else { "" };
    if done.is_empty() && !args.json {
        writeln!(out, "nothing to undo: session {id} wrote no file")?;
        return Ok(ExitCode::SUCCESS);
    }
    let here = ctx.here(context.root());
    let mut refused = Vec::new();
    let mut skipped = false;
    let (mut restored, mut removed, mut failed) = (Vec::new(), Vec::new(), Vec::new());
    let mut folders = Vec::new();
    for d in done {
        match d {
            Undone::Restored { path, digest } => {
                let version = version_id(&digest);
                if !args.json {
                    let shown = ctx.shown(&path, &here);
                    writeln!(out, "{would}restored {shown} (version {version})")?;
                }
                restored.push(json!({"path": path.to_lossy(), "version": version}));
            }
            Undone::Removed { path, why } => {
                if !args.json {
                    let shown = ctx.shown(&path, &here);
                    writeln!(out, "{would}removed {shown} ({why})")?;
                }
                removed.push(path.to_lossy().into_owned());
            }
            Undone::Skipped { path, why } => {
                skipped = true;
                if args.dry_run {
                    writeln!(ctx.err, "error: would not undo '{path}': {why}")?;
                } else {
                    writeln!(ctx.err, "error: could not undo '{path}': {why}")?;
                }
                failed.push(json!({"path": path.to_lossy(), "why": why.to_string()}));
            }
            Undone::RemovedFolder { path } => {
                if !args.json {
                    let shown = ctx.shown(&path, &here);
                    writeln!(out, "{would}removed folder {shown}/ (left empty)")?;
                }
                folders.push(path.to_lossy().into_owned());
            }
            Undone::Refused(check) => refused.push(*check),
        }
    }
    if args.json {
        print_json(
            out,
            &json!({
                "session": id.as_str(),
                "dry_run": args.dry_run,
                "restored": restored,
                "removed": removed,
                "removed_folders": folders,
                "refused": refused
                    .iter()
                    .map(|c| crate::output::record_json(&stella::refusals::Record::of(&context.journal(), c)))
                    .collect::<Vec<_>>(),
                "failed": failed,
            }),
        )?;
    }
    if !refused.is_empty() {
        let code = print_refusals(ctx, &context, &refused);
        return Ok(if skipped { ExitCode::from(2) } else { code });
    }
    Ok(if skipped {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}
