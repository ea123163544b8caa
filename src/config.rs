//! Stella's configuration in a project: `.stella/config.toml` and `git config stella.*`, both
//! read strictly, and what fail-closed answers.
//!
//! One rule holds at every entry point (hooks, `write`/`rm` and the other guarded writes, MCP,
//! the shell guard): while either is invalid, nothing can say what the project meant, so every
//! write Stella checks is refused, naming the error (`check`). Reads are still recorded.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::fsutil::PathIo;
use crate::workspace::{self, Settings, Workspace};

/// A duration as people write it: a whole number and a unit, `s`, `m`, `h`, `d` or `w`
/// (`90m`, `12h`, `30d`, `2w`).
pub fn parse_duration(text: &str) -> Result<Duration, BadDuration> {
    let bad = || BadDuration {
        text: text.to_owned(),
    };
    let text = text.trim();
    let unit = text.chars().last().ok_or_else(bad)?;
    let seconds = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        'w' => 604_800,
        _ => return Err(bad()),
    };
    let n: u64 = text[..text.len() - 1].parse().map_err(|_| bad())?;
    n.checked_mul(seconds)
        .map(Duration::from_secs)
        .ok_or_else(bad)
}

/// Text that is not a duration ([`parse_duration`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{text}' is not a duration: write a whole number and a unit, s, m, h, d or w (as in 30d)")]
pub struct BadDuration {
    /// The text as given.
    text: String,
}

/// What is wrong with the `stella.*` keys of git's config ([`git_on_error`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GitConfigError {
    /// `stella.fsync` set in the user's repository, where Stella does not read it.
    #[error(
        "git config stella.fsync is read from the journal store's own config, not this repository's: git config --file \"$(git stella store-path)/config\" stella.fsync false"
    )]
    FsyncHere,
    /// A `stella.*` key Stella does not read (its full name).
    #[error("git config has an unknown key '{0}' (Stella reads only stella.hookOnError)")]
    UnknownKey(String),
    /// `stella.hookOnError` set to something other than `allow` or `deny` (the value).
    #[error("git config stella.hookOnError is '{0}'; it must be 'allow' or 'deny'")]
    BadOnError(String),
}

/// Why Stella's configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `.stella/config.toml` exists but could not be read.
    #[error(transparent)]
    Io(#[from] PathIo),
    /// `.stella/config.toml` is not valid TOML, or holds a key or value Stella does not read.
    #[error("'{}' is not a valid Stella config", .path.display())]
    Toml {
        /// Where the file is.
        path: PathBuf,
        /// Where and why it does not parse.
        #[source]
        source: toml::de::Error,
    },
    /// `git config stella.*` holds a key or value Stella does not read.
    #[error(transparent)]
    Git(#[from] GitConfigError),
}

/// The project's configuration, both halves checked: `.stella/config.toml` parsed, and `git
/// config stella.*` holding nothing Stella cannot read. Every guarded write calls this first and
/// is refused on `Err`: an invalid configuration cannot say what was meant, so it never silently
/// allows.
pub(crate) fn check(ws: &Workspace) -> Result<Config, Error> {
    check_if_remembered(ws).unwrap_or_else(|unremembered| check_in_full(ws, unremembered))
}

/// [`check`] when git's configuration passed before and nothing it is read from changed since
/// (a few `stat`s, no thread needed); else what [`check_in_full`] needs, the fingerprint taken
/// here among it, so that it is taken once.
pub(crate) fn check_if_remembered(ws: &Workspace) -> Result<Result<Config, Error>, Unremembered> {
    let started = std::time::SystemTime::now();
    match remembered(ws) {
        Remembered::Pass => Ok(Config::load(&ws.root)),
        Remembered::Not(print) => Err(Unremembered { print, started }),
    }
}

/// A check [`check_if_remembered`] could not answer: the fingerprint to remember a pass by, when
/// one could be taken, and when it was taken.
pub(crate) struct Unremembered {
    print: Option<Fingerprint>,
    started: std::time::SystemTime,
}

/// [`check`], reading git's configuration ([`check_if_remembered`] said it must).
pub(crate) fn check_in_full(ws: &Workspace, unremembered: Unremembered) -> Result<Config, Error> {
    let config = Config::load(&ws.root)?;
    check_git_config(ws, unremembered)?;
    Ok(config)
}

/// Where a passing check of `git config stella.*` is remembered in `.stella/private`: the
/// fingerprint of everything the configuration was read from ([`fingerprint`]).
const GIT_CONFIG_CHECKED: &str = "git-config-checked";

/// `git config stella.*` checked ([`git_on_error`]). Reading git's configuration as git does
/// (the system's, the user's, the repository's, the environment's) is most of a check, and the
/// shell guard's command waits for it: a pass is remembered with the fingerprint of every file
/// and variable it was read from, and while the fingerprint is the same nothing is read again.
/// Remembered only when the configuration came from those files alone (no `include`), none of
/// them changed in the two seconds before the check (a change in the same tick of the clock
/// would not move its times), and the environment is known ([`Settings::git_config_env`]).
fn check_git_config(ws: &Workspace, unremembered: Unremembered) -> Result<(), GitConfigError> {
    let Ok(repo) = ws.user_config() else {
        return Ok(());
    };
    git_on_error(&repo)?;
    if let Some(print) = unremembered.print
        && print.settled(unremembered.started)
        && read_only_from(&repo, &print.files)
    {
        // A failure costs only the next command a full check.
        let _ = crate::fsutil::write_atomic(
            &ws.private_dir().join(GIT_CONFIG_CHECKED),
            print.digest.to_string().as_bytes(),
            0o600,
        );
    }
    Ok(())
}

/// Whether a pass of `ws`'s git configuration is remembered for what it is read from now.
enum Remembered {
    Pass,
    /// Not: with the fingerprint to remember a pass by, when one can be taken.
    Not(Option<Fingerprint>),
}

fn remembered(ws: &Workspace) -> Remembered {
    let remembered = remembered_now(ws);
    if matches!(remembered, Remembered::Pass) {
        tracing::debug!("git config: the pass remembered for what it is read from holds");
    }
    remembered
}

fn remembered_now(ws: &Workspace) -> Remembered {
    let Some(print) = fingerprint(ws) else {
        return Remembered::Not(None);
    };
    // A regular file only, and no more of it than a fingerprint: whatever else is put there
    // (a FIFO, a huge file) is no pass, and never holds the check up.
    let kept =
        crate::fsutil::open_regular(&ws.private_dir().join(GIT_CONFIG_CHECKED)).and_then(|file| {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut std::io::Read::take(file, 128), &mut bytes)?;
            Ok(bytes)
        });
    if kept.is_ok_and(|b| b == print.digest.to_string().as_bytes()) {
        Remembered::Pass
    } else {
        Remembered::Not(Some(print))
    }
}

/// What git's configuration of a workspace is read from, as one digest: the variables it can
/// come from or be found by, and each file it can be in, by its identity, size and times (or
/// its absence), with Stella's version.
struct Fingerprint {
    digest: crate::digest::Digest,
    /// The files it covers.
    files: Vec<PathBuf>,
    /// The latest time any of them was changed.
    newest: Option<std::time::SystemTime>,
}

impl Fingerprint {
    /// Whether nothing it covers changed in the two seconds before `started`, far longer than
    /// the tick of a file system's times.
    fn settled(&self, started: std::time::SystemTime) -> bool {
        self.newest
            .is_none_or(|t| t + Duration::from_secs(2) <= started)
    }
}

/// The [`Fingerprint`] of `ws`'s git configuration; `None` where it cannot be taken safely: the
/// environment unknown, git's environment overrides in play, or `.git` not a folder (a linked
/// worktree or a submodule, whose configuration is found through other files).
fn fingerprint(ws: &Workspace) -> Option<Fingerprint> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    let env = ws
        .git_config_env
        .as_deref()
        .filter(|_| !ws.git_env_overrides)?;
    let git_dir = ws.root.join(".git");
    let mut var = |name: &str| env.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    let mut files = Vec::new();
    for source in [
        gix::config::Source::System,
        gix::config::Source::Git,
        gix::config::Source::User,
    ] {
        files.extend(source.storage_location(&mut var));
    }
    files.push(git_dir.join("config"));
    files.push(git_dir.join("config.worktree"));
    let mut text: Vec<u8> =
        format!("stella {} git config check 1\n", env!("CARGO_PKG_VERSION")).into_bytes();
    let mut sorted: Vec<&(std::ffi::OsString, std::ffi::OsString)> = env.iter().collect();
    sorted.sort();
    for (name, value) in sorted {
        for part in [name, value] {
            text.extend_from_slice(&(part.len() as u64).to_le_bytes());
            text.extend_from_slice(part.as_bytes());
        }
    }
    // The repository folder by identity and owner only: its times move with every file git
    // makes in it.
    let dir = std::fs::metadata(&git_dir).ok().filter(|m| m.is_dir())?;
    let fields = [
        dir.dev(),
        dir.ino(),
        u64::from(dir.mode()),
        u64::from(dir.uid()),
    ];
    text.extend(fields.iter().flat_map(|f| f.to_le_bytes()));
    let mut newest = None;
    for path in &files {
        text.extend_from_slice(path.as_os_str().as_bytes());
        text.push(0);
        match std::fs::metadata(path) {
            Ok(m) => {
                let fields = [
                    m.dev(),
                    m.ino(),
                    u64::from(m.mode()),
                    u64::from(m.uid()),
                    m.size(),
                    m.mtime() as u64,
                    m.mtime_nsec() as u64,
                    m.ctime() as u64,
                    m.ctime_nsec() as u64,
                ];
                text.extend(fields.iter().flat_map(|f| f.to_le_bytes()));
                let at = |s: i64, ns: i64| {
                    std::time::UNIX_EPOCH
                        + Duration::new(s.max(0) as u64, ns.clamp(0, 999_999_999) as u32)
                };
                let changed = at(m.ctime(), m.ctime_nsec()).max(at(m.mtime(), m.mtime_nsec()));
                newest = newest.max(Some(changed));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => text.extend_from_slice(b"absent"),
            Err(_) => return None,
        }
        text.push(b'\n');
    }
    Some(Fingerprint {
        digest: crate::digest::Digest::of(&text),
        files,
        newest,
    })
}

/// Whether `repo`'s configuration came from `files` and the environment alone: no `include`,
/// no other file.
fn read_only_from(repo: &gix::Repository, files: &[PathBuf]) -> bool {
    let config = repo.config_snapshot();
    let config = config.plumbing();
    config.sections().all(|section| {
        let name = section.header().name();
        !name.eq_ignore_ascii_case(b"include".as_slice())
            && !name.eq_ignore_ascii_case(b"includeIf".as_slice())
            && section
                .meta()
                .path
                .as_deref()
                .is_none_or(|p| files.iter().any(|f| f == p))
    })
}

/// What the model and the person are told when a write is denied because the hook itself failed
/// in a project that chose fail-closed; `error` is the hook's error text (`hooks::error_text`).
pub(crate) fn fail_closed_reason(error: &str) -> String {
    format!(
        "Stella could not check this call, and this project refuses writes when the check fails (fail-closed). Nothing was written.\n{}",
        error.trim_end()
    )
}

/// What happens when the hook itself fails: let the tool run (the default, so a broken Stella
/// never stops work) or deny it (fail-closed, chosen by the project).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnError {
    /// Let the tool run.
    Allow,
    /// Deny the tool call.
    Deny,
}

/// `.stella/config.toml`, the project's own choices for hooks and retention.
///
/// ```toml
/// [retention]
/// sessions-older-than = "30d"    # `git stella gc` drops sessions idle longer than this
///
/// [hooks]
/// on-error = "deny"              # fail closed: deny a write when the hook itself fails
///
/// [[hooks.tools]]
/// name = "mcp__docs__save_page"  # a tool name; '*' matches any run of characters
/// path = "target"                # the field of the tool's input holding the file path
/// access = "write"               # "read" or "write"
/// content = "body"               # optional: the field holding the bytes a write writes
/// ```
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub(crate) hooks: HooksConfig,
    /// `[retention]`.
    #[serde(default)]
    pub retention: RetentionConfig,
}

/// `[retention]`: what `git stella gc` lets go of.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RetentionConfig {
    /// Sessions whose last step is older than this (`30d`, `2w`; see
    /// [`parse_duration`]) are dropped by `gc`.
    #[serde(default, deserialize_with = "duration")]
    pub sessions_older_than: Option<std::time::Duration>,
}

fn duration<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<std::time::Duration>, D::Error> {
    let text: String = serde::Deserialize::deserialize(d)?;
    parse_duration(&text)
        .map(Some)
        .map_err(serde::de::Error::custom)
}

#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct HooksConfig {
    #[serde(default)]
    pub(crate) on_error: Option<OnErrorSetting>,
    #[serde(default)]
    pub(crate) tools: Vec<ToolMapping>,
}

/// What a project wrote for a hook that fails (`hooks.on-error`, `stella.hookOnError`); unset,
/// the answer is [`OnError::Allow`] ([`on_error`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnErrorSetting {
    /// `allow`.
    Allow,
    /// `deny`: fail closed.
    Deny,
}

/// A tool the adapter does not know, mapped by the project to the field holding its path.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolMapping {
    pub(crate) name: String,
    pub(crate) path: String,
    pub(crate) access: Access,
    #[serde(default)]
    pub(crate) content: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Access {
    Read,
    Write,
}

/// Where the project's config lives.
pub(crate) fn config_path(root: &Path) -> PathBuf {
    root.join(".stella").join("config.toml")
}

impl Config {
    /// Read `.stella/config.toml`; a missing file is the default config.
    pub fn load(root: &Path) -> Result<Config, Error> {
        let path = config_path(root);
        let Some(bytes) = crate::fsutil::read_optional(&path).map_err(|source| {
            Error::Io(PathIo {
                op: "read",
                path: path.clone(),
                source,
            })
        })?
        else {
            return Ok(Config::default());
        };
        let text = String::from_utf8_lossy(&bytes);
        toml::from_str(&text).map_err(|source| Error::Toml { path, source })
    }

    /// The mapping for `tool`, the first that matches.
    pub(crate) fn tool(&self, tool: &str) -> Option<&ToolMapping> {
        self.hooks.tools.iter().find(|t| glob_match(&t.name, tool))
    }
}

/// Whether the project chose fail-closed: `.stella/config.toml`'s `hooks.on-error`, else
/// `git config stella.hookOnError`. Read only when something failed, off the hot path. Both are
/// read strictly: `Err` says what is wrong with them, and a caller treats it as fail-closed — an
/// invalid config cannot say what was meant, so it never silently allows.
pub fn on_error(settings: &Settings, cwd: &Path) -> Result<OnError, Error> {
    Ok(match on_error_choice(settings, cwd)? {
        Some(OnErrorSetting::Deny) => OnError::Deny,
        Some(OnErrorSetting::Allow) | None => OnError::Allow,
    })
}

/// What the project chose for a hook that fails (`.stella/config.toml`, else git config), if it
/// chose.
pub(crate) fn on_error_choice(
    settings: &Settings,
    cwd: &Path,
) -> Result<Option<OnErrorSetting>, Error> {
    let Ok(repo) = workspace::open_user_repo(settings.git_env_overrides, cwd) else {
        return Ok(None);
    };
    let from_git = git_on_error(&repo)?;
    let from_file = match repo.workdir() {
        Some(root) => Config::load(root)?.hooks.on_error,
        None => None,
    };
    Ok(from_file.or(from_git))
}

/// The `stella.*` git config, read strictly: `stella.hookOnError` (`allow` or `deny`) is its only
/// key.
pub fn git_on_error(repo: &gix::Repository) -> Result<Option<OnErrorSetting>, GitConfigError> {
    let config = repo.config_snapshot();
    if let Some(sections) = config.plumbing().sections_by_name("stella") {
        for section in sections {
            let sub = section.header().subsection_name().map(|s| s.to_string());
            for name in section.value_names() {
                if sub.is_none() && name.eq_ignore_ascii_case("fsync") {
                    return Err(GitConfigError::FsyncHere);
                }
                if sub.is_some() || !name.eq_ignore_ascii_case("hookOnError") {
                    let full = match &sub {
                        Some(s) => format!("stella.{s}.{name}"),
                        None => format!("stella.{name}"),
                    };
                    return Err(GitConfigError::UnknownKey(full));
                }
            }
        }
    }
    match config.string("stella.hookOnError") {
        None => Ok(None),
        Some(v) if v.eq_ignore_ascii_case(b"deny".as_slice()) => Ok(Some(OnErrorSetting::Deny)),
        Some(v) if v.eq_ignore_ascii_case(b"allow".as_slice()) => Ok(Some(OnErrorSetting::Allow)),
        Some(v) => Err(GitConfigError::BadOnError(v.to_string())),
    }
}

/// The deny reason when the hook failed and fail-closed is on (`Ok`), or Stella's config is
/// invalid (`Err`); `None`: let the tool run. `unset_denies`: a project that chose nothing fails
/// closed (for a host that would let the tool run whatever a failed hook said).
pub fn deny_reason(
    settings: &Settings,
    cwd: &Path,
    error: &str,
    unset_denies: bool,
) -> Option<String> {
    match on_error_choice(settings, cwd) {
        Ok(Some(OnErrorSetting::Allow)) => None,
        Ok(None) if !unset_denies => None,
        Ok(_) => Some(fail_closed_reason(error)),
        Err(invalid) => Some(invalid_reason(&invalid)),
    }
}

/// What a refused write says when Stella's configuration is invalid: the rule, then the error.
pub(crate) fn invalid_reason(invalid: &Error) -> String {
    format!(
        "Stella's configuration is invalid, so it cannot tell what this project wants; it refuses writes until that is fixed ('git stella doctor' shows it). Nothing was written.\nstella: {}",
        crate::report::Report::of(invalid).render()
    )
}

/// A `*`-glob match over the whole name.
pub(crate) fn glob_match(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(parse_duration("90m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("30d"), Ok(Duration::from_secs(30 * 86_400)));
        assert_eq!(parse_duration("2w"), Ok(Duration::from_secs(2 * 604_800)));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
        for bad in [
            "",
            "30",
            "d",
            "3.5d",
            "-1d",
            "30 days",
            "99999999999999999999w",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
