use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::ctx::Ctx;
use crate::error::Result;

/// Record that the session read these files
///
/// Records the digest of the bytes now on disk, and keeps the bytes in the journal. A path that
/// does not exist or cannot be read is an error, and then nothing is recorded: one command is one
/// step, whole or not at all.
///
/// Call it when the agent has read a file (an agent host does so after its Read tool): from then
/// on, a write to that file is refused if anybody changes it first. The record is durable before
/// the command returns.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella read src/lib.rs src/main.rs
  git stella --session agent-1 read README.md

Exit status:
  0  recorded
  2  an error: no session given or an unknown one, a path outside the
     workspace, a file that does not exist or cannot be read (then
     nothing is recorded)")]
pub struct Args {
    /// Files the session read, inside the workspace (relative to the current folder, or absolute)
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, _out: &mut dyn Write) -> Result {
    let (context, id) = ctx.open_session()?;
    let paths = ctx.resolve_all(&context, &args.paths)?;
    context.session(&id).read(&paths)?;
    Ok(ExitCode::SUCCESS)
}
