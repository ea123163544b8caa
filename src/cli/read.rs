use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use super::{Ctx, Result};

/// Record that the session read these files
///
/// Records the digest of the bytes now on disk, and keeps the bytes in the journal. A path that
/// does not exist or cannot be read is an error, and then nothing is recorded: one command is one
/// step, whole or not at all.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Files inside the workspace, relative to the current folder or absolute
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, _out: &mut dyn Write) -> Result {
    let context = ctx.open()?;
    let id = ctx.session_id()?;
    let paths = ctx.resolve_all(&context, &args.paths)?;
    context.read(&id, &paths)?;
    Ok(ExitCode::SUCCESS)
}
