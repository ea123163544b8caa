use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::ctx::Ctx;
use crate::error::{CliError, Result, artifact_err};

/// Pack the session into one self-contained file (a git bundle) a colleague can replay
///
/// Writes a git bundle (v2, no prerequisites) holding one ref, refs/stella/checkpoints/<id>: the
/// session's journal plus one commit whose tree is the artifact format: stella.toml (format,
/// session, base commit, producer, times, provenance), fingerprint (`<blake3>  <path>` lines, as
/// b3sum prints them), origins, files/<path> (the bytes as the session last saw them) and
/// transcript/. The base commit (this workspace's HEAD) is recorded, never carried: the artifact
/// holds only what the session touched. The same session checkpointed twice with nothing changed
/// gives identical bytes.
///
/// transcript/ holds the transcripts the session stored, and the file its agent host names, read
/// again (hosts write late). That file is taken only when it is a regular file of at most 256
/// MiB; anything else (a device, a FIFO, a larger file) is skipped unread with a warning, and the
/// copy the session stored last travels instead.
///
/// Default output: .stella/private/checkpoints/<session-id>.stella.bundle, which git never
/// tracks. Files are created with mode 0600, and take their name only when complete: a
/// checkpoint that is interrupted, even by SIGKILL, leaves no file behind. Prints the path
/// written. Stella only writes the bytes locally: storing, moving and authorising artifacts is
/// yours.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Contents warning:
The artifact holds the conversation verbatim, which means the full bytes of every file the agent
read, whatever commands printed and anything it read outside the workspace, and, in its history,
every version of every file the session saw, plus the history of any session it was replayed
from. Any secrets in them travel too (a .env, keys in tests, customer rows in fixtures). Stella
does not encrypt, redact, classify or expire it. It is written with mode 0600.

Examples:
  git stella --session agent-1 checkpoint
  git stella --session agent-1 checkpoint -o ../agent-1.stella.bundle
  git stella --session agent-1 checkpoint -o - | ssh host 'cat > agent-1.stella.bundle'
  git bundle verify agent-1.stella.bundle     # stock git reads it

Exit status:
  0  written
  2  an error: no session given or an unknown one, the output cannot be
     written")]
pub struct Args {
    /// Write the artifact here ('-' for stdout)
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print JSON: {artifact, session, tip, file_count, base, skipped_transcripts}
    #[arg(long)]
    pub json: bool,
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, out: &mut dyn Write) -> Result {
    let (context, id) = ctx.open_session()?;
    if args.json && args.output.as_deref().is_some_and(|p| p.as_os_str() == "-") {
        return Err(
            CliError::new("--json cannot share stdout with the artifact ('-o -')")
                .hint("write the artifact to a file with '-o FILE'"),
        );
    }
    let path = match &args.output {
        Some(p) if p.as_os_str() == "-" => None,
        Some(p) => Some(stella::paths::lexical_clean(&ctx.cwd.join(p))),
        None => {
            let dir = context.workspace().private_dir().join("checkpoints");
            stella::fsutil::create_private_dir(&dir, 0o700)?;
            Some(dir.join(format!("{id}.stella.bundle")))
        }
    };
    let cp = match &path {
        None => context
            .session(&id)
            .checkpoint_with(out, ctx.progress)
            .map_err(artifact_err)?,
        Some(path) => {
            let cant_write = |e: std::io::Error| {
                let mut err = CliError::new(format!("could not write '{}'", path.display()));
                err.causes.push(e.to_string());
                err
            };
            // Streamed into a file with no name beside the target (mode 0600), named when
            // complete: a checkpoint killed half-way leaves nothing in the folder.
            let mut file = stella::fsutil::NewFile::create(path, 0o600).map_err(cant_write)?;
            let mut writer = std::io::BufWriter::with_capacity(1 << 20, file.file());
            let cp = context
                .session(&id)
                .checkpoint_with(&mut writer, ctx.progress)
                .map_err(artifact_err)?;
            writer.flush().map_err(cant_write)?;
            drop(writer);
            file.persist().map_err(cant_write)?;
            if !args.json {
                writeln!(out, "{}", path.display())?;
            }
            cp
        }
    };
    tracing::info!(
        session = %id,
        tip = %cp.tip,
        files = cp.paths,
        "checkpoint written to {}",
        path.as_ref().map_or("stdout".into(), |p| p.display().to_string())
    );
    for skipped in &cp.skipped_transcripts {
        let mut why = skipped.why.to_string();
        if let Some(source) = std::error::Error::source(&skipped.why) {
            why.push_str(&format!(" ({source})"));
        }
        let _ = writeln!(
            ctx.err,
            "warning: transcript '{}' was not taken: {why}; the artifact carries {}",
            stella::text::escape_controls(&skipped.path),
            if skipped.stored_copy {
                "the copy the session stored last"
            } else {
                "no copy of it"
            }
        );
    }
    if let (true, Some(path)) = (args.json, &path) {
        crate::output::print_json(
            out,
            &serde_json::json!({
                "artifact": path.to_string_lossy(),
                "session": id.as_str(),
                "tip": cp.tip.to_string(),
                "file_count": cp.paths,
                "base": cp.manifest.base_commit(),
                "skipped_transcripts": cp.skipped_transcripts.iter().map(|s| s.path.as_str()).collect::<Vec<_>>(),
            }),
        )?;
    }
    match cp.manifest.base_commit() {
        Some(base) => ctx.say(format_args!(
            "stella: checkpoint of session {id}: {}; base commit {base} is recorded, not carried: changes outside these files are not in the artifact",
            stella::text::count(cp.paths as u64, "file")
        )),
        None => ctx.say(format_args!(
            "stella: checkpoint of session {id}: {}; HEAD is unborn, so no base commit is recorded",
            stella::text::count(cp.paths as u64, "file")
        )),
    }
    Ok(ExitCode::SUCCESS)
}
