//! The environment, read at the edge, and only here: every variable, folder, argument and
//! standard stream the programs take from their process goes through this file (clippy holds
//! every other file of both packages to it: `clippy.toml` disallows the rest, and only this file
//! allows them). Shared by `git-stella` and `stella-mcp` through this library: the `stella`
//! library gets [`Settings`] and never reads the environment.
//!
//! Stella's own variables are named below; the others are git's and the terminal's (`PATH`,
//! `NO_COLOR`, `PAGER`, `GIT_PAGER`, `GIT_DIR`, …) and the hosts' (each host's registry entry
//! names the variables its files and sessions are found by). clap reads `STELLA_SESSION` for
//! `--session` itself.

#![allow(clippy::disallowed_methods)] // The one file that reads the process's environment.

use std::ffi::OsString;
use std::path::PathBuf;

use stella::workspace::Settings;

/// What the environment cannot give.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("could not find a home folder for Stella's data")]
    NoHome,
    #[error("could not read the current folder")]
    Cwd(#[source] std::io::Error),
}

/// The library's settings, read from the environment: every entry point builds them here.
pub fn settings() -> Result<Settings, Error> {
    let git = git_config_env();
    Ok(Settings {
        data_dir: data_dir()?,
        git_env_overrides: git
            .iter()
            .any(|(name, _)| name == "GIT_DIR" || name == "GIT_WORK_TREE"),
        git_config_env: Some(git),
    })
}

/// The variables git's configuration can come from (`GIT_CONFIG_*`, `GIT_CONFIG_PARAMETERS`)
/// or be found by (`HOME`, `XDG_CONFIG_HOME`, `GIT_DIR`, …): every `GIT_*` one, to be sure.
fn git_config_env() -> Vec<(OsString, OsString)> {
    std::env::vars_os()
        .filter(|(name, _)| {
            name.as_encoded_bytes().starts_with(b"GIT_")
                || name == "HOME"
                || name == "XDG_CONFIG_HOME"
        })
        .collect()
}

/// Where Stella keeps its data: `$STELLA_HOME`, else the platform data dir.
pub fn data_dir() -> Result<PathBuf, Error> {
    if let Some(home) = std::env::var_os("STELLA_HOME").filter(|h| !h.is_empty()) {
        let home = PathBuf::from(home);
        return Ok(if home.is_absolute() {
            home
        } else {
            std::env::current_dir().map_err(Error::Cwd)?.join(home)
        });
    }
    directories::ProjectDirs::from("", "", "stella")
        .map(|d| d.data_dir().to_owned())
        .ok_or(Error::NoHome)
}

/// The session a command acts on, when `--session` does not say.
pub const SESSION: &str = "STELLA_SESSION";
/// What is logged to standard error, as `tracing` filters say it (`STELLA_LOG=debug`).
pub const LOG: &str = "STELLA_LOG";
/// The budget of one hook call, in milliseconds.
pub const HOOK_TIMEOUT_MS: &str = "STELLA_HOOK_TIMEOUT_MS";
/// Set by the tests: act as a machine where the shell guard cannot run.
pub const TEST_NO_SHELL_GUARD: &str = "STELLA_TEST_NO_SHELL_GUARD";

/// Variable `name`, when it is set and Unicode.
pub fn var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Variable `name`, with why it cannot be had (unset, or not Unicode).
pub fn var_checked(name: &str) -> Result<String, std::env::VarError> {
    std::env::var(name)
}

/// Variable `name` as the bytes it holds, when it is set.
pub fn var_os(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// The folder this process runs in.
pub fn current_dir() -> std::io::Result<PathBuf> {
    std::env::current_dir()
}

/// This program's own file.
pub fn current_exe() -> std::io::Result<PathBuf> {
    std::env::current_exe()
}

/// The words this program was started with, its name first.
pub fn args_os() -> std::env::ArgsOs {
    std::env::args_os()
}

/// This process's standard input.
pub fn stdin() -> std::io::Stdin {
    std::io::stdin()
}

/// This process's standard output.
pub fn stdout() -> std::io::Stdout {
    std::io::stdout()
}

/// This process's standard error.
pub fn stderr() -> std::io::Stderr {
    std::io::stderr()
}

/// Write `bytes` to `stream`'s descriptor through a copy of it, not through std's handle: a
/// thread still at work may hold that handle's lock (a hook answering while its work goes on).
pub fn write_unlocked(stream: impl std::os::fd::AsFd, bytes: &[u8]) {
    if let Ok(fd) = stream.as_fd().try_clone_to_owned() {
        let _ = std::io::Write::write_all(&mut std::fs::File::from(fd), bytes);
    }
}

/// End this process now, with `code`: only where an answer must go out before the work is done
/// (a hook out of time); everything else returns its exit status from `main`.
pub fn exit(code: i32) -> ! {
    std::process::exit(code)
}

/// Switches the tests set in the environment: `STELLA_TEST_PORTABLE_FS=1` makes every write take
/// the fallback other systems run (see [`stella::fsutil::use_named_temp_files`]).
pub fn apply_test_switches() {
    if std::env::var_os("STELLA_TEST_PORTABLE_FS").is_some_and(|v| v == "1") {
        stella::fsutil::use_named_temp_files(true);
    }
}
