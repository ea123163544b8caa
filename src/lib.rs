//! Stella keeps AI coding agents, and the people beside them, from silently overwriting each
//! other's work.
//!
//! Each session remembers the digest of every file it read or wrote ([`journal`]); before an
//! update or delete the bytes on disk are hashed again and compared ([`guard`]); if they changed,
//! the write is refused. The memory lives in a private git repository outside the working tree
//! ([`store`]), one per working copy ([`workspace`]), so it survives a crash of the process that
//! recorded it.
//!
//! The library never prints, never exits and reads no environment: the command line (the
//! `git-stella` package in `cli/`, with the MCP server's transport and the binaries) builds
//! [`workspace::Settings`] at the edge and passes it in. The lints below and `clippy.toml` hold
//! it to that.
//! (gix, opening the user's repository, reads git's own environment the way git does only when
//! the edge says `GIT_DIR` or `GIT_WORK_TREE` is set: see [`workspace::open_user_repo`].)
//!
//! Every public item is documented, and the compiler holds it to that (`missing_docs` is denied
//! below): what only the library itself uses is `pub(crate)`, not a public item to document.

// `unsafe` lives in one module, the shell guard's system calls (`exec/sys/`), and in one pre-exec
// hook (`child.rs`); each allows it where it is declared.
#![deny(unsafe_code)]
#![deny(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::exit,
    clippy::dbg_macro
)]
#![deny(missing_docs)]

// Every write and check is made with `openat` beneath a folder, `O_NOFOLLOW`, `flock` and Unix
// permissions: on anything else, one clear stop instead of a dozen missing imports.
#[cfg(not(unix))]
compile_error!(
    "Stella builds on Unix-like systems only (Linux is supported; see docs/install.md, Platforms)"
);

pub mod artifact;
pub mod child;
pub mod config;
pub mod digest;
pub(crate) mod edit;
pub mod exec;
pub mod fsutil;
pub mod guard;
pub mod hosts;
pub mod ids;
pub mod journal;
pub(crate) mod jsonedit;
pub mod keep;
pub mod mcp;
pub mod paths;
pub mod refusals;
pub mod repair;
pub mod report;
pub mod retention;
pub mod session;
pub mod store;
pub mod text;
pub mod timeline;
pub mod workspace;
