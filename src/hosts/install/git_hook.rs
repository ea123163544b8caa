//! git's commit-trailer hook: `prepare-commit-msg`, chained to the hook it replaces.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::fsutil::PathIo;

use super::{Error, Outcome};

/// The name of the hook Stella installs.
pub const GIT_HOOK: &str = "prepare-commit-msg";
/// Where an existing hook is kept while Stella's runs it first.
pub(crate) const CHAINED: &str = "prepare-commit-msg.stella-chained";
const MARKER: &str = "# git-stella: commit trailer hook";

/// The hook script: run the hook it replaced (with the same arguments; its failure aborts the
/// commit, as it would have), then add `Stella-Session: <id>` when `$STELLA_SESSION` is set.
/// `addIfDifferent` keeps an amend from adding the same trailer twice.
fn git_hook_script() -> String {
    format!(
        r#"#!/bin/sh
{MARKER}
# Added by 'git stella hooks install --git'; 'git stella hooks uninstall --git' removes it
# (and puts back the hook it chains to, if there was one).
chained="$(dirname "$0")/{CHAINED}"
if [ -x "$chained" ]; then
	"$chained" "$@" || exit $?
fi
if [ -n "$STELLA_SESSION" ]; then
	git interpret-trailers --in-place --if-exists addIfDifferent \
		--trailer "Stella-Session: $STELLA_SESSION" "$1" || exit $?
fi
"#
    )
}

/// The folder git runs hooks from, honouring `core.hooksPath`.
pub fn git_hooks_dir(cwd: &Path) -> Result<PathBuf, Error> {
    let out = crate::child::die_with_parent(
        Command::new("git")
            .args(["rev-parse", "--git-path", "hooks"])
            .current_dir(cwd),
    )
    .output()
    .map_err(|source| {
        Error::Io(PathIo {
            op: "run git in",
            path: cwd.to_owned(),
            source,
        })
    })?;
    if !out.status.success() {
        return Err(Error::Git {
            args: "rev-parse --git-path hooks".into(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    let rel = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    Ok(cwd.join(rel))
}

fn is_ours(path: &Path) -> bool {
    std::fs::read(path).is_ok_and(|b| String::from_utf8_lossy(&b).contains(MARKER))
}

/// Install the trailer hook into `dir`; an existing hook that is not Stella's is kept as the
/// chained hook and still runs first.
pub fn install_git(dir: &Path) -> Result<Outcome, Error> {
    let hook = dir.join(GIT_HOOK);
    let chained = dir.join(CHAINED);
    let io = |op, path: &Path| {
        let path = path.to_owned();
        move |source| Error::Io(PathIo { op, path, source })
    };
    let script = git_hook_script();
    if is_ours(&hook) {
        if std::fs::read(&hook).is_ok_and(|b| b == script.as_bytes()) {
            return Ok(Outcome::Unchanged);
        }
    } else if hook.symlink_metadata().is_ok() {
        if chained.symlink_metadata().is_ok() {
            return Err(Error::ChainTaken { path: hook });
        }
        std::fs::rename(&hook, &chained).map_err(io("move aside", &hook))?;
    }
    std::fs::create_dir_all(dir).map_err(io("create", dir))?;
    crate::fsutil::write_atomic(&hook, script.as_bytes(), 0o755).map_err(io("write", &hook))?;
    Ok(Outcome::Changed)
}

/// Remove Stella's trailer hook from `dir` and put back the hook it chained to.
pub fn uninstall_git(dir: &Path) -> Result<Outcome, Error> {
    let hook = dir.join(GIT_HOOK);
    let chained = dir.join(CHAINED);
    if !is_ours(&hook) {
        return Ok(Outcome::Unchanged);
    }
    std::fs::remove_file(&hook).map_err(|source| {
        Error::Io(PathIo {
            op: "remove",
            path: hook.clone(),
            source,
        })
    })?;
    if chained.symlink_metadata().is_ok() {
        std::fs::rename(&chained, &hook).map_err(|source| {
            Error::Io(PathIo {
                op: "restore",
                path: chained.clone(),
                source,
            })
        })?;
    }
    Ok(Outcome::Changed)
}
