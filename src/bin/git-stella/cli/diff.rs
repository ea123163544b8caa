use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use super::{Ctx, Result};
use stella::guard::{Intent, change_summary};

/// Show what changed on disk since the session saw these files
///
/// A unified diff from the bytes the session last read or wrote to the bytes on disk now; the
/// whole of it, where a refusal shows only the first lines. Prints nothing for a file that did
/// not change.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella diff src/lib.rs

Exit status:
  0  shown (a change is not an error); with --exit-code, nothing changed
  1  with --exit-code: a file changed since the session saw it (as git diff)
  2  an error: no session given or an unknown one, a path outside the
     workspace")]
pub struct Args {
    /// Tracked files, relative to the current folder or absolute
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Exit 1 when a file changed, 0 when none did, as 'git diff --exit-code'
    #[arg(long)]
    pub exit_code: bool,
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, out: &mut dyn Write) -> Result {
    let (context, id) = ctx.open_session()?;
    let paths = ctx.resolve_all(&context, &args.paths)?;
    let mut changed = false;
    for check in context
        .session(&id)
        .guard(&paths, Intent::Write { content: None })?
    {
        let p = &check.path;
        match (&check.entry, check.refused()) {
            (None, _) => ctx.say(format_args!("stella: '{p}' is not tracked by this session")),
            (Some(_), false) => {}
            (Some(_), true) if !check.path.under(context.root()).exists() => {
                changed = true;
                writeln!(out, "{p}: deleted since this session saw it")?
            }
            (Some(_), true) => {
                changed = true;
                match change_summary(&context.journal(), context.root(), &check, None) {
                    Some(d) => writeln!(out, "{d}")?,
                    None => writeln!(out, "{p}: changed since this session saw it")?,
                }
            }
        }
    }
    Ok(if args.exit_code && changed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
