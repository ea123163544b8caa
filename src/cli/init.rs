use std::io::Write;
use std::process::ExitCode;

use super::{Ctx, Result};

/// Create or confirm this workspace's id, `.stella/private/` and the store
///
/// Idempotent: run it again and it prints the same id. Every other command does this on its own
/// when needed. Prints the workspace id on stdout.
#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(ctx: &mut Ctx<'_>, _args: &Args, out: &mut dyn Write) -> Result {
    let context = ctx.open()?;
    writeln!(out, "{}", context.ws.id)?;
    Ok(ExitCode::SUCCESS)
}
