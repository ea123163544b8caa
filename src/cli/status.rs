use std::io::Write;
use std::process::ExitCode;

use serde_json::json;

use super::{Ctx, Result, print_json};
use crate::journal::Seen;

/// Show every tracked file of the session: fresh, changed or gone since the session saw it
///
/// A changed or gone file is one a write would be refused for: re-read it first.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella status
  git stella status --json | jq -r '.[] | select(.state != \"fresh\") | .path'

Exit status:
  0  listed (changed files are not an error)
  2  an error: no session given or an unknown one")]
pub struct Args {
    /// Print JSON: a list of {path, state, seen}
    #[arg(long)]
    pub json: bool,
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, out: &mut dyn Write) -> Result {
    let context = ctx.open()?;
    let id = ctx.session_id()?;
    let status = context.status(&id)?;
    if args.json {
        let list: Vec<_> = status
            .iter()
            .map(|(e, f)| {
                json!({
                    "path": e.path.to_lossy(),
                    "state": f.as_str(),
                    "seen": match e.seen { Seen::Digest(d) => d.to_hex(), Seen::Reread => "reread".into() },
                })
            })
            .collect();
        print_json(out, &serde_json::Value::Array(list))?;
    } else {
        for (e, f) in &status {
            writeln!(out, "{:<10} {}", f.as_str(), e.path)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
