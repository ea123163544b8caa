use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use super::{Ctx, Result};

/// Repack the store and prune what no session reaches
///
/// Objects younger than the grace period are kept even when unreachable, since a writer creates
/// its objects before it moves its session's ref. A dropped session's steps are forgotten once
/// they are older than the grace period.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella session drop old-agent && git stella gc
  git stella gc --grace 0     # only when no other git-stella runs

Exit status:
  0  repacked and pruned
  2  an error: not inside a git working tree, the store cannot be
     repacked")]
pub struct Args {
    /// Keep unreachable objects younger than this many seconds
    #[arg(long, value_name = "SECONDS", default_value_t = 3600)]
    pub grace: u64,
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, _out: &mut dyn Write) -> Result {
    let context = ctx.open()?;
    context.store().gc(Duration::from_secs(args.grace))?;
    Ok(ExitCode::SUCCESS)
}
