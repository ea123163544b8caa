use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::ctx::Ctx;
use crate::error::{CliError, Result};
use stella::session::turn::Transcript;

/// Mark a step boundary inside the open turn, optionally storing the transcript
///
/// Advances the resume point. The transcript is stored verbatim, byte for byte as handed in;
/// when the file only grew since the last step, only the new bytes are stored. It must be a
/// regular file of at most 256 MiB: a device, a FIFO or a larger file is refused unread.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella step --note 'tests pass' --transcript ~/.agent/session.jsonl

Exit status:
  0  recorded
  2  an error: no open turn, no session given or an unknown one, an
     unreadable transcript (not a regular file, or larger than 256 MiB)")]
pub struct Args {
    /// The conversation so far, stored verbatim
    #[arg(long, value_name = "FILE")]
    pub transcript: Option<PathBuf>,
    /// A short note saying where the turn stands
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, _out: &mut dyn Write) -> Result {
    let (context, id) = ctx.open_session()?;
    let transcript = match &args.transcript {
        Some(path) => {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .ok_or_else(|| {
                    CliError::new(format!("'{}' has no usable file name", path.display()))
                })?
                .to_owned();
            Some((name, ctx.cwd.join(path)))
        }
        None => None,
    };
    context.session(&id).step(
        args.note.as_deref(),
        transcript
            .as_ref()
            .map(|(name, path)| Transcript { name, path }),
    )?;
    Ok(ExitCode::SUCCESS)
}
