use std::io::Write;
use std::process::ExitCode;

use crate::ctx::Ctx;
use crate::error::Result;

/// Create or confirm this workspace's id, .stella/private/ and the store
///
/// Idempotent: run it again and it prints the same id. Every other command does this on its own
/// when needed. Prints the workspace id on stdout.
///
/// The id is random, minted on this machine and kept in `.stella/private/`, which ignores itself
/// so it is never committed. A copy of the working tree gets an id of its own (said on stderr);
/// a moved one keeps its id; one whose `.stella/private/` was removed (`git clean -fdx`) adopts
/// its id again from Stella's data dir, so its sessions stay guarded.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella init
  git -C ../other-checkout stella init   # each working tree its own id

Exit status:
  0  the workspace is ready; its id is on stdout
  2  an error: not inside a git working tree, Stella's data dir cannot
     be created")]
pub struct Args {}

pub fn run(ctx: &mut Ctx<'_>, _args: &Args, out: &mut dyn Write) -> Result {
    let context = ctx.open()?;
    writeln!(out, "{}", context.workspace().id)?;
    Ok(ExitCode::SUCCESS)
}
