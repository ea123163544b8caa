//! `hooks install` / `hooks uninstall`: wire the guard into an agent host's settings file and the
//! commit-trailer hook into git, editing only Stella's own entries and taking out exactly those.
//!
//! A settings file is the team's: `install` adds Stella's entries as text edits and leaves every
//! other byte where it was (`jsonedit.rs`). What it changed is kept in a [`Ledger`] outside
//! the file, so `uninstall` of an otherwise untouched file gives back the original byte for byte,
//! removes the file when Stella created it, and removes the folders Stella created for it when
//! they are left empty. When the file changed since (or there is no ledger: a clone, another
//! machine), Stella's entries are found by their command and taken out one by one, with the
//! groups, event lists and objects that held nothing else.
//!
//! One idea to a file: the command line a hook runs (`command.rs`), the entries of a host's JSON
//! settings file and how they are merged and taken out (`settings.rs`), what install changed,
//! kept so that uninstall gives it back (`ledger.rs`), the files Stella writes whole
//! (`own_file.rs`) and git's commit-trailer hook (`git_hook.rs`).

use std::io;
use std::path::{Path, PathBuf};

use crate::fsutil::PathIo;

mod command;
mod git_hook;
mod ledger;
mod own_file;
mod settings;

pub use command::{
    Launch, PREFIX_KEY, find_portable, invoked_as, is_portable, is_stella_prefix, portable_command,
};
pub(crate) use command::{PREFIX_ARGS, hook_command, shell_prefix};
pub use git_hook::{GIT_HOOK, git_hooks_dir, install_git, uninstall_git};
pub use ledger::{Installed, LEDGER_FILE, Ledger, install, uninstall};
pub use own_file::{install_own_file, uninstall_own_file};
pub use settings::{HooksFile, Shape};

/// The error returned by the installers.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A settings file is not UTF-8 JSON (with comments, for a host that reads them).
    #[error("'{}' is not valid JSON; nothing was changed", .path.display())]
    InvalidJson {
        /// Where the settings file is.
        path: PathBuf,
        /// Where it stops parsing.
        #[source]
        source: serde_json::Error,
    },
    /// A settings file is JSON, but a value Stella's entries go into is not of the kind they
    /// need (the top level, or `hooks`, is not an object).
    #[error("'{}' has an unexpected shape: {why}; nothing was changed", .path.display())]
    Shape {
        /// Where the settings file is.
        path: PathBuf,
        /// What is in the way.
        why: String,
    },
    /// A file or folder could not be read, written or removed.
    #[error(transparent)]
    Io(#[from] PathIo),
    /// git, run to find the hooks folder, failed.
    #[error("'git {args}' failed: {stderr}")]
    Git {
        /// Its arguments, as one line.
        args: String,
        /// What it said on stderr.
        stderr: String,
    },
    /// The git hook is someone else's, and the place it would be moved aside to (`CHAINED`)
    /// is taken.
    #[error(
        "'{}' exists and is not a hook Stella installed, yet a chained hook is already there too; nothing was changed", .path.display()
    )]
    ChainTaken {
        /// The git hook that is not Stella's.
        path: PathBuf,
    },
    /// A file Stella writes whole (OpenCode's plugin) is there, but it is someone else's.
    #[error("'{}' is not the file Stella wrote there; nothing was changed", .path.display())]
    NotOurs {
        /// Where the file is.
        path: PathBuf,
    },
}

fn io_error(op: &'static str, path: &Path) -> impl FnOnce(io::Error) -> Error {
    let path = path.to_owned();
    move |source| Error::Io(PathIo { op, path, source })
}

/// What an install or uninstall did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Files were written or removed.
    Changed,
    /// Everything was already as asked: nothing was written.
    Unchanged,
}
