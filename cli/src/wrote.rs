use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::content_arg::read_content;
use crate::ctx::Ctx;
use crate::error::{CliError, Result};

/// Record writes or deletes that already happened
///
/// Records the digest of the bytes now on disk; a path that no longer exists is dropped from
/// the session's map. With --content, records the bytes the caller meant to write instead: when
/// the disk already differs, someone changed the file after the write, and that change is not
/// absorbed (the next write to it is refused).
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  apply-my-edit src/lib.rs && git stella wrote src/lib.rs
  generate >out.rs && cp out.rs src/gen.rs
  git stella wrote --content out.rs src/gen.rs
  rm old.rs && git stella wrote old.rs   # a delete drops the entry

Exit status:
  0  recorded
  2  an error: no session given or an unknown one, a path outside the
     workspace, an unreadable --content file (nothing is recorded)")]
pub struct Args {
    /// Files inside the workspace, relative to the current folder or absolute
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// The bytes that were written (one PATH only; '-' reads stdin)
    #[arg(long, value_name = "FILE")]
    pub content: Option<PathBuf>,
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, _out: &mut dyn Write) -> Result {
    let (context, id) = ctx.open_session()?;
    let paths = ctx.resolve_all(&context, &args.paths)?;
    let content = match &args.content {
        Some(_) if paths.len() != 1 => {
            return Err(CliError::new("--content goes with exactly one PATH"));
        }
        Some(file) => Some(read_content(file)?),
        None => None,
    };
    let (_, not_absorbed) = context.session(&id).wrote(&paths, content.as_deref())?;
    for n in not_absorbed {
        ctx.say(format_args!(
            "stella: '{}' on disk differs from what was written: someone changed it after the write; recorded what was written, so the next write to it is refused until it is re-read",
            n.path
        ));
    }
    Ok(ExitCode::SUCCESS)
}
