//! The environment, read at the edge. Shared by `git-stella` and `stella-mcp` (which
//! includes this file by path): the library gets [`Settings`] and never reads the environment.

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
    Ok(Settings {
        data_dir: data_dir()?,
        git_env_overrides: ["GIT_DIR", "GIT_WORK_TREE"]
            .iter()
            .any(|v| std::env::var_os(v).is_some()),
    })
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

/// Switches the tests set in the environment: `STELLA_TEST_PORTABLE_FS=1` makes every write take
/// the fallback other systems run (see [`stella::fsutil::use_named_temp_files`]).
pub fn apply_test_switches() {
    if std::env::var_os("STELLA_TEST_PORTABLE_FS").is_some_and(|v| v == "1") {
        stella::fsutil::use_named_temp_files(true);
    }
}
