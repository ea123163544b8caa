use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::artifact_arg::open_artifact;
use crate::ctx::Ctx;
use crate::error::Result;
use crate::error::artifact_err;
use crate::output::print_mismatches;

/// Check an artifact against this tree without consuming it
///
/// Re-hashes every path in the artifact's fingerprint here. Exit 0 when all match; exit 1 when
/// not, naming each path and how it differs (changed, missing). Nothing is written anywhere. The
/// whole artifact is checked first (the pack's checksum, every object it carries): a corrupt or
/// truncated one is an error, never a verdict. FILE may also name a checkpoint ref fetched into
/// this repository (refs/stella/checkpoints/<id>, when no file has that name).
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella verify agent-1.stella.bundle

Exit status:
  0  every file of the fingerprint matches this tree
  1  some do not; each is named with how it differs (changed, missing,
     unreadable)
  2  an error: not a git tree, not a readable artifact, a corrupt or
     truncated one, an unsupported format")]
pub struct Args {
    /// The artifact: a file, or a checkpoint ref in this repository
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Print JSON: {session, matches, files: [{path, state (unchanged, changed,
    /// deleted, unreadable)}]}
    #[arg(long)]
    pub json: bool,
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, out: &mut dyn Write) -> Result {
    let root = stella::workspace::discover_root(&ctx.settings, &ctx.cwd)?;
    // The tree is re-hashed while the rest of the artifact is checked; the verdict waits for both.
    let (opened, mismatches) = open_artifact(ctx, &args.file, |head| {
        stella::session::replay::verify_in(&root, head)
    })?;
    let head = opened.head;
    let mismatches = mismatches.map_err(artifact_err)?;
    let code = ExitCode::from(if mismatches.is_empty() { 0 } else { 1 });
    if args.json {
        let files: Vec<_> = head
            .fingerprint
            .iter()
            .map(|(p, _)| {
                let state = mismatches
                    .iter()
                    .find(|(m, _)| m == p)
                    .map_or("unchanged", |(_, how)| how.as_str());
                serde_json::json!({"path": p.to_lossy(), "state": state})
            })
            .collect();
        crate::output::print_json(
            out,
            &serde_json::json!({
                "session": head.session(),
                "matches": mismatches.is_empty(),
                "files": files,
            }),
        )?;
        return Ok(code);
    }
    if mismatches.is_empty() {
        match head.fingerprint.len() {
            1 => writeln!(out, "1 file matches")?,
            n => writeln!(out, "{n} files match")?,
        }
        return Ok(ExitCode::SUCCESS);
    }
    print_mismatches(ctx.err, &mismatches);
    Ok(ExitCode::from(1))
}
