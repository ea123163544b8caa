use std::io::Write;
use std::process::ExitCode;

use crate::ctx::Ctx;
use crate::error::Result;

/// Print where this workspace's journal store is, for plain git
///
/// The store is a bare git repository: `git --git-dir="$(git stella store-path)" log
/// refs/stella/sessions/<id>` shows a session's steps.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git --git-dir=\"$(git stella store-path)\" log refs/stella/sessions/agent-1
  git --git-dir=\"$(git stella store-path)\" for-each-ref refs/stella

Exit status:
  0  printed
  2  an error: not inside a git working tree")]
pub struct Args {}

pub fn run(ctx: &mut Ctx<'_>, _args: &Args, out: &mut dyn Write) -> Result {
    let context = ctx.open()?;
    writeln!(out, "{}", context.store().dir().display())?;
    Ok(ExitCode::SUCCESS)
}
