use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use crate::ctx::{Ctx, report_refusals};
use crate::env;
use crate::error::Result;
use stella::session::Outcome;

/// Write stdin to a file, refused when the file changed since the session saw it
///
/// The guarded write: the content is read from stdin, checked against the session's memory,
/// written to an anonymous temp file in the same folder, checked again just before it is renamed
/// over the file (so a change made meanwhile is still caught), then recorded. An existing file
/// keeps its permissions. An existing file that cannot be read is an error: Stella never replaces
/// bytes it cannot compare.
///
/// Use it where a person or a script writes on behalf of a session: it is `guard`, the write
/// and `wrote` in one step, so nothing changes between the check and the record unseen.
#[derive(clap::Args, Debug)]
#[command(after_long_help = concat!(decision_table!(), "
Examples:
  git stella read config.toml
  sed 's/false/true/' config.toml | git stella write config.toml
  printf 'fresh\\n' | git stella write new-file.txt     # a create passes

Exit status:
  0  written and recorded
  1  refused: the file changed (or was deleted) since the session saw
     it; nothing was written
  2  an error: no session given or an unknown one, a path outside the
     workspace, an existing file that cannot be read, an I/O failure
"))]
pub struct Args {
    /// The file to write, inside the workspace
    #[arg(value_name = "PATH")]
    pub path: PathBuf,
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, _out: &mut dyn Write) -> Result {
    let (context, id) = ctx.open_session()?;
    let named = context.resolve_named(&ctx.cwd, &args.path)?;
    let mut content = Vec::new();
    env::stdin().lock().read_to_end(&mut content)?;
    match context.session(&id).write(&named.path, &content)? {
        Outcome::Done(_, kept) => {
            crate::ctx::say_kept(ctx, &kept)?;
            Ok(ExitCode::SUCCESS)
        }
        Outcome::Refused(mut checks) => {
            for c in &mut checks {
                c.via = named.link.clone();
            }
            Ok(report_refusals(ctx, &context, &checks))
        }
    }
}
