//! The artifact a command names on its command line (`inspect`, `verify`, `replay`): a file, or a
//! checkpoint ref fetched into this repository, opened and checked whole, and its errors said with
//! the git command that fixes them.

use crate::ctx::Ctx;
use crate::error::{CliError, Result, artifact_err};
use stella::text::escape_controls;

/// Open the artifact an argument names: a file, or a checkpoint ref in this repository
/// ([`stella::artifact::Source::from_arg`]), checked whole; `alongside` runs on its head while
/// the rest is checked ([`stella::artifact::read_file_with`]).
pub fn open_artifact<T: Send>(
    ctx: &Ctx<'_>,
    arg: &std::path::Path,
    alongside: impl FnOnce(&stella::artifact::Head) -> T + Send,
) -> Result<(stella::artifact::Opened, T)> {
    stella::artifact::Source::from_arg(&ctx.cwd, arg)
        .open_with(
            || stella::workspace::open_user_repo(ctx.settings.git_env_overrides, &ctx.cwd),
            alongside,
        )
        .map_err(source_err)
}

/// [`artifact_err`], with a hint where the fix is a git command: fetch a ref that is not here,
/// fetch or copy a damaged artifact again.
pub fn source_err(e: impl Into<stella::session::ArtifactError>) -> CliError {
    use stella::artifact::Error;
    use stella::session::ArtifactError::Artifact;
    let e = e.into();
    let hint = match &e {
        Artifact(Error::NoRef { name }) => {
            Some(format!("fetch it first: git fetch <remote> {name}:{name}"))
        }
        Artifact(Error::Corrupt { .. }) => {
            Some("fetch or copy the artifact again: this copy was not used".to_owned())
        }
        _ => None,
    };
    let mut err = artifact_err(e);
    // The name is the caller's own argument; escaped all the same, as every other line is.
    err.hint = err.hint.or(hint.map(|h| escape_controls(&h).into_owned()));
    err
}
