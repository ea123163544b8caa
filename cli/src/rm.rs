use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::ctx::{Ctx, report_refusals};
use crate::error::Result;
use stella::session::Outcome;

/// Delete files, refused when any changed since the session saw it
///
/// Every path is checked first; if any is stale, nothing is deleted. A path already gone is
/// fine. Deleted paths are dropped from the session's map, so re-creating them later passes.
#[derive(clap::Args, Debug)]
#[command(after_long_help = concat!(decision_table!(), "
Examples:
  git stella read old.rs
  git stella rm old.rs            # refused if old.rs changed meanwhile

Exit status:
  0  deleted (or already gone) and recorded
  1  refused: a path changed since the session saw it; nothing was
     deleted
  2  an error: no session given or an unknown one, a path outside the
     workspace, an I/O failure
"))]
pub struct Args {
    /// Files to delete, inside the workspace (relative to the current folder, or absolute)
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, _out: &mut dyn Write) -> Result {
    let (context, id) = ctx.open_session()?;
    let paths = ctx.resolve_all_named(&context, &args.paths)?;
    match context.session(&id).rm(&paths)? {
        Outcome::Done(_, kept) => {
            crate::ctx::say_kept(ctx, &kept)?;
            Ok(ExitCode::SUCCESS)
        }
        Outcome::Refused(checks) => Ok(report_refusals(ctx, &context, &checks)),
    }
}
