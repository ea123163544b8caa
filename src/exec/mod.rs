//! The shell guard (SPEC §7): run a command, and everything it starts, with every system call
//! that can read or change a workspace file checked by the supervisor before the kernel acts.
//!
//! Linux seccomp user notification, unprivileged (`PR_SET_NO_NEW_PRIVS`): the child installs a
//! filter (`sys/filter.rs`) and hands its listener to this process, which answers each notification
//! (`sys/notify.rs`). The supervisor is the process that called [`run`]: no daemon, no root, gone with
//! the command. If it dies, the kernel fails every call still waiting for it, and every later one
//! the filter sends it, with `ENOSYS`: a guarded call never passes unchecked.
//!
//! What each call means for the session:
//! - an open for reading of a regular file inside the workspace records a read of the bytes at
//!   that moment (the digest always; the bytes too while the command's budget lasts, for a
//!   refusal's diff);
//! - an open with write access, `O_TRUNC` or `O_CREAT`, `truncate`, a rename or link onto a path,
//!   and an unlink are checked with the guard's decision table (`crate::guard::decide`); a
//!   refusal fails the call with `EACCES` and prints the refusal once per path; a change of a
//!   file the session or the command knew is carried out by the supervisor itself under the
//!   folder hold every Stella writer takes (`act.rs`), so the check and the change are one step;
//! - what the command changed becomes the session's own write, with the bytes it left when it
//!   finished writing (a path it removed is dropped; a rename carries what the session knew);
//!   a later change of a file it wrote is checked against what it left there;
//! - never recorded: `.git/`, `.stella/`, paths outside the workspace, folders, devices, FIFOs,
//!   and paths git ignores that the session did not already track.
//!
//! A running command is journaled as it goes (a command that ends within a second is one step;
//! a longer one gets a step about every half second, less often while it touches many files at
//! once, see `docs/shell-guard.md`): a whole agent run under the guard shows in `status` while it
//! runs.
//!
//! What it cannot see: a file descriptor opened before the command started, and a process that
//! rewrites a path in its own memory between the check and the kernel's use of it. It guards
//! against mistakes, not against an adversary.

#[cfg(shell_guard)]
mod act;
#[cfg(shell_guard)]
mod process;
#[cfg(shell_guard)]
mod signatures;
#[cfg(shell_guard)]
mod supervise;
// The one module where `unsafe` is allowed (the crate denies it everywhere else).
#[cfg(shell_guard)]
#[allow(unsafe_code)]
mod sys;
#[cfg(shell_guard)]
mod watch;
#[cfg(shell_guard)]
pub use supervise::{probe, run};
#[cfg(not(shell_guard))]
mod unsupported;
#[cfg(not(shell_guard))]
pub use unsupported::{probe, run};

use std::ffi::OsString;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use crate::journal::{self, Tip};
use crate::paths::RelPath;

/// The supervisor's tables, keyed by the paths and thread ids every call names: hashed with
/// foldhash, whose hash of a short key is a few multiplications where std's SipHash runs rounds
/// over every byte. Seeded per process as std's is, so the command cannot choose its collisions.
#[cfg(shell_guard)]
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
#[cfg(shell_guard)]
type HashSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

/// Set in the guarded command's environment: the session whose guard it runs under, which a
/// nested `git stella exec` names. Whether a command is guarded is the kernel's word (a process
/// has one seccomp supervisor at most), never this variable's: setting it switches nothing off.
pub const SESSION_ENV: &str = "STELLA_EXEC_SESSION";

/// How many bytes of what one command read or wrote are kept in the journal (for a refusal's
/// diff); past it only digests are recorded, so `cargo build` or `npm test` under the guard never
/// copies a tree into the journal.
pub(crate) const BYTES_BUDGET: u64 = 8 << 20;

/// Past this many paths, a command's step is written as one pack (spawning `git index-pack`
/// costs a few milliseconds; thousands of loose objects cost seconds).
#[cfg_attr(not(shell_guard), allow(dead_code))]
pub(crate) const BATCH_PATHS: usize = 64;

/// The error returned by [`run`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The command would run under Stella's shell guard already (this process does): the guard
    /// around it sees every call it makes. Nothing was started.
    #[error("this process already runs under Stella's shell guard")]
    Nested,
    /// Stella's configuration is invalid (`crate::config::check`): a command could write, so
    /// none runs until it is fixed. Nothing was started.
    #[error(
        "Stella's configuration is invalid, so no command runs under its guard until it is fixed; nothing was run"
    )]
    Config(#[from] crate::config::Error),
    /// This machine cannot guard the command; nothing was started.
    #[error("this machine cannot guard the command: {0}")]
    Unsupported(#[from] Unsupported),
    /// The command could not be started (not found, not executable); nothing ran.
    #[error("could not run '{}'", .program.to_string_lossy())]
    Spawn {
        /// The program as the command line named it.
        program: OsString,
        /// Why it could not start.
        #[source]
        source: io::Error,
    },
    /// The supervisor lost the command's listener while it ran: every call still waiting, and
    /// every later one, failed with `ENOSYS`; none passed unchecked.
    #[error("the shell guard failed while '{}' ran", .program.to_string_lossy())]
    Supervise {
        /// The program as the command line named it.
        program: OsString,
        /// What failed.
        #[source]
        source: io::Error,
    },
    /// The session's journal could not be read or written (before the command started, nothing
    /// ran; after, [`run`] reports [`Error::Unrecorded`]).
    #[error(transparent)]
    Journal(#[from] journal::Error),
    /// The command ran, but what it did could not be recorded: the session's next write to
    /// what it changed is refused until it is read again.
    #[error("'{}' ran (exit status {code}), but what it read and wrote could not be recorded", .program.to_string_lossy())]
    Unrecorded {
        /// The program as the command line named it.
        program: OsString,
        /// Its exit status, as [`Report::code`] gives it.
        code: u8,
        /// Why the step could not be written.
        #[source]
        source: journal::Error,
    },
}

/// Whether this machine can run the guard, and why not.
pub fn support() -> Result<(), Unsupported> {
    #[cfg(shell_guard)]
    return sys::notify::kernel_support();
    #[cfg(not(shell_guard))]
    Err(Unsupported::Platform)
}

/// Why this machine, or the container or sandbox it runs in, cannot run the shell guard.
#[derive(Debug, thiserror::Error)]
pub enum Unsupported {
    /// Stella was built for a system the filter is not written for.
    #[error("the shell guard is built for x86_64 and aarch64 Linux only")]
    Platform,
    /// The kernel lacks seccomp user notification (or refused the filter as invalid).
    #[error("the kernel offers no seccomp user notification ({0})")]
    NoUserNotification(io::Error),
    /// The kernel has user notification but not the "continue" answer the guard gives.
    #[error("Linux {release} is older than 5.5, which the guard needs to let a checked call go on")]
    OldKernel {
        /// The kernel's release, as `uname` says it.
        release: String,
    },
    /// Another seccomp supervisor already watches this process.
    #[error(
        "the process already runs under another seccomp supervisor, and a process can have only one ({0})"
    )]
    Supervised(io::Error),
    /// The container or sandbox forbids installing a filter.
    #[error("the container or sandbox forbids installing a seccomp filter ({0})")]
    Forbidden(io::Error),
    /// Installing the filter failed otherwise.
    #[error("{0}")]
    Filter(io::Error),
    /// Ptrace rules keep the guard from reading the paths a command names.
    #[error(
        "this process may not read the memory of the commands it starts ({0}); see kernel.yama.ptrace_scope"
    )]
    MemoryUnreadable(io::Error),
    /// A trial command under the guard could not be started or served.
    #[error("{}", crate::report::Report::of(.0.as_ref()).one_line())]
    Trial(Box<Error>),
    /// Serving or waiting for the trial command failed.
    #[error("{0}")]
    TrialIo(io::Error),
    /// The trial command ran under the guard and failed.
    #[error("a trial command under the guard failed ({0})")]
    TrialFailed(ExitStatus),
}

/// What a guarded command did.
#[derive(Debug)]
pub struct Report {
    /// How the command ended.
    pub status: ExitStatus,
    /// The step that recorded it, when it read or changed anything the session keeps.
    pub tip: Option<Tip>,
    /// Reads the step recorded (a held file read unchanged is not one).
    pub reads: usize,
    /// Changes the step recorded: files written, removed or moved.
    pub writes: usize,
    /// Paths whose change was refused.
    pub refused: Vec<RelPath>,
}

impl Report {
    /// The command's exit status as a shell reports it: its code, or 128 + the signal.
    pub fn code(&self) -> u8 {
        exit_code(self.status)
    }
}

/// An exit status as a shell reports it.
pub(crate) fn exit_code(status: ExitStatus) -> u8 {
    match (status.code(), status.signal()) {
        (Some(c), _) => c as u8,
        (None, Some(s)) => 128u8.wrapping_add(s as u8),
        _ => 1,
    }
}
