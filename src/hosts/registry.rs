//! The host registry: every agent host Stella guards, and everything the command line and
//! `doctor` need to know of one, in one table ([`HOSTS`]).
//!
//! A host is one module: its `Host` adapter (payloads and answers) and its
//! [`Spec`] (how it is named, where its hooks live and how they are written, how its shell
//! commands reach the shell guard, what the person must still do before it runs them, and the
//! configurations in which it would skip them). Adding a host is that module and one line here;
//! nothing else branches on a host's name.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::install::{HooksFile, Launch};
use super::{Answer, Env};

/// Every host Stella guards, in the order the docs list them.
pub static HOSTS: [&Spec; 7] = [
    &super::claude_code::SPEC,
    &super::codex::SPEC,
    &super::gemini::SPEC,
    &super::copilot::SPEC,
    &super::opencode::SPEC,
    &super::qwen::SPEC,
    &super::cursor::SPEC,
];

/// The host named `flag` (as `--agent`, `hook` and `exec --host` spell it).
pub fn host(flag: &str) -> Option<&'static Spec> {
    HOSTS.iter().copied().find(|h| h.flag == flag)
}

/// Reads one environment variable: the library reads none itself, the command line passes this.
pub(crate) type Var<'a> = &'a dyn Fn(&str) -> Option<OsString>;

/// One agent host, as the command line and `doctor` see it.
pub struct Spec {
    /// The name on the command line: `--agent claude-code`, `hook claude-code`.
    pub flag: &'static str,
    /// The name people know it by: "Claude Code".
    pub name: &'static str,
    /// What `git stella hook <flag>` answers, one line for its help.
    pub answers: &'static str,
    /// The project's file Stella's hooks go in, relative to the repository's root.
    pub project: &'static str,
    /// The host's settings for one checkout, if it reads such a file (`--local`).
    pub local: Option<&'static str>,
    /// The user's file (hooks for every project) under `home`, where the host reads it.
    pub(crate) user: fn(home: &Path, var: Var<'_>) -> PathBuf,
    /// How Stella's hooks are written into those files.
    pub wiring: Wiring,
    /// How the model's shell commands reach the shell guard.
    pub shell: Shell,
    /// Answer one hook call within a time budget (see `super::answer_within`).
    pub answer: fn(Env, Duration, ReadInput, GiveUp) -> Answer,
    /// What the person still has to do before the host runs hooks just installed in a
    /// project's (or a checkout's) settings: trust is theirs to give.
    pub next_in_project: Option<&'static str>,
    /// The same for the user's settings.
    pub next_for_user: Option<&'static str>,
    /// The host's own `doctor` checks, run when Stella's hooks are in one of its files: the
    /// configurations in which it would skip them.
    pub doctor: fn(&Look<'_>) -> Vec<Finding>,
}

impl std::fmt::Debug for Spec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.flag)
    }
}

impl PartialEq for Spec {
    fn eq(&self, other: &Self) -> bool {
        self.flag == other.flag
    }
}

impl Eq for Spec {}

/// The hook payload, read when the call starts.
pub(crate) type ReadInput = Box<dyn FnOnce() -> std::io::Result<Vec<u8>>>;
/// What to do with the answer when the budget runs out first (answer and end the process).
pub(crate) type GiveUp = Box<dyn FnOnce(Answer) + Send>;

/// How a host's hooks are written.
pub enum Wiring {
    /// Entries Stella edits into the host's JSON settings file, the rest of it kept.
    Settings(fn(PathBuf, &Launch) -> HooksFile),
    /// A file of Stella's own (a plugin), written and removed whole.
    OwnFile {
        /// The file's text, running Stella as the launch says.
        text: fn(&Launch) -> String,
        /// Its first line, which tells it is Stella's.
        mark: &'static str,
        /// The command line the file runs, when the text is whole Stella's.
        command_of: fn(&str) -> Option<String>,
    },
}

/// How a host's shell commands reach the shell guard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shell {
    /// They do not: the host's hook cannot change a command (doctor says so).
    Unrouted,
    /// The host runs every shell command through a prefix that Stella's install sets:
    /// `git-stella <flag> '<snippet>'`, in the session `session_var` names.
    Prefix {
        /// The flag of `git-stella` that runs the snippet under the shell guard.
        flag: &'static str,
        /// The environment variable that holds the host's session id in its shell.
        session_var: &'static str,
    },
    /// The hook rewrites each command into `<git-stella> exec --host <host> --session <id> --
    /// '<command>'`. With `by_name`, the rewritten command names `git-stella` as PATH finds it
    /// (the host asks before running a command that names a path outside the workspace).
    Rewritten {
        /// Name `git-stella` as PATH finds it, rather than by its path.
        by_name: bool,
    },
}

/// Whose settings file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// The user's, for every project.
    User,
    /// The project's, committed.
    Project,
    /// One checkout's, usually not committed.
    Local,
}

impl Scope {
    /// The scope's name, as doctor says it.
    pub fn name(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
        }
    }

    /// The flag that picks it, with a space before it (none for the project's).
    pub fn flag(self) -> &'static str {
        match self {
            Scope::User => " --user",
            Scope::Project => "",
            Scope::Local => " --local",
        }
    }
}

impl Spec {
    /// The scopes this host reads hooks from.
    pub fn scopes(&self) -> Vec<Scope> {
        let mut s = vec![Scope::User, Scope::Project];
        if self.local.is_some() {
            s.push(Scope::Local);
        }
        s
    }

    /// The file of `scope`, `base` being the repository's root (or, for the user's, the home
    /// folder). `None` for a scope the host has no file for.
    pub fn file(&self, scope: Scope, base: &Path, var: Var<'_>) -> Option<PathBuf> {
        match scope {
            Scope::User => Some((self.user)(base, var)),
            Scope::Project => Some(base.join(self.project)),
            Scope::Local => self.local.map(|l| base.join(l)),
        }
    }

    /// Whether the file at `path` holds Stella's hooks.
    pub fn holds_stella(&self, path: &Path) -> bool {
        match &self.wiring {
            Wiring::Settings(file) => file(path.to_owned(), &Launch::Found).has_stella_hooks(),
            Wiring::OwnFile { mark, .. } => {
                std::fs::read_to_string(path).is_ok_and(|t| t.starts_with(mark))
            }
        }
    }

    /// Whether the model's shell commands run under the shell guard, given this machine can.
    pub fn routes_shell(&self) -> bool {
        self.shell != Shell::Unrouted
    }
}

/// How bad a `doctor` finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// All is well.
    Ok,
    /// Worth fixing, though Stella's hooks still run.
    Warn,
    /// Stella's hooks do not run, or cannot guard, as installed.
    Error,
}

impl Level {
    /// As doctor prints it.
    pub fn name(self) -> &'static str {
        match self {
            Level::Ok => "ok",
            Level::Warn => "warn",
            Level::Error => "error",
        }
    }
}

/// One line of `doctor`: how bad, which check, what, and what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// How bad.
    pub level: Level,
    /// Which check: a short name (`hooks-twice`), or the host's flag for its own checks.
    pub check: &'static str,
    /// What was found, in a sentence.
    pub message: String,
    /// What to do about it, when there is something to do.
    pub hint: Option<String>,
}

impl Finding {
    /// A finding of `check`, as its fields say.
    pub fn new(level: Level, check: &'static str, message: String, hint: Option<String>) -> Self {
        Finding {
            level,
            check,
            message,
            hint,
        }
    }
}

/// One of a host's files as `doctor` read it.
#[derive(Clone, Debug)]
pub struct Seen {
    /// Whose file it is.
    pub scope: Scope,
    /// Where it is.
    pub path: PathBuf,
    /// The settings as the host reads them (`Null` for a file of Stella's own).
    pub value: Value,
    /// Whether it holds Stella's hooks.
    pub stella: bool,
}

/// What a host's own `doctor` checks look at.
pub struct Look<'a> {
    /// The person's home folder, when it is known.
    pub home: Option<&'a Path>,
    /// The repository's root, when doctor runs in one.
    pub root: Option<&'a Path>,
    /// This host's files that exist and read, in the order user, project, local.
    pub seen: &'a [Seen],
    /// Reads the host's environment variables (where its user files are).
    pub var: Var<'a>,
}

impl Look<'_> {
    /// Whether the host's hooks are installed in `scope`.
    pub(crate) fn installed_in(&self, scope: Scope) -> bool {
        self.seen.iter().any(|s| s.scope == scope && s.stella)
    }

    /// An environment variable that is set, and not empty.
    pub(crate) fn var(&self, name: &str) -> Option<OsString> {
        (self.var)(name).filter(|v| !v.is_empty())
    }

    /// Whether an environment variable says `true`.
    pub(crate) fn var_is_true(&self, name: &str) -> bool {
        (self.var)(name).is_some_and(|v| v == "true")
    }
}

/// No checks of the host's own.
pub(crate) fn no_checks(_: &Look<'_>) -> Vec<Finding> {
    Vec::new()
}

/// The rule of a `trustedFolders.json` (Gemini CLI's, and Qwen Code's, which forked it) that
/// decides for `root`: the longest one covering it (`TRUST_PARENT` covering the rule's parent).
pub(crate) fn trust_rule(file: &Path, root: &Path) -> Option<String> {
    let rules: serde_json::Map<String, Value> = std::fs::read_to_string(file)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    rules
        .iter()
        .filter_map(|(rule, level)| {
            let level = level.as_str()?;
            let covered = Path::new(rule);
            let covered = if level == "TRUST_PARENT" {
                covered.parent()?
            } else {
                covered
            };
            let covered = covered
                .canonicalize()
                .unwrap_or_else(|_| covered.to_owned());
            root.starts_with(&covered).then_some((rule.len(), level))
        })
        .max_by_key(|(len, _)| *len)
        .map(|(_, level)| level.to_owned())
}

/// JSON with comments, as the hosts that forked Gemini CLI read their settings; `Null` when
/// the file is missing or does not read.
pub(crate) fn jsonc_file(path: &Path) -> Value {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| crate::jsonedit::Doc::parse_with_comments(t).ok())
        .map(|doc| doc.value(doc.root()))
        .unwrap_or_default()
}

/// The folder the environment variable `name` names, when it is set and not empty (a host's
/// `CODEX_HOME`, `COPILOT_HOME`…), else `otherwise`.
pub(crate) fn folder_from(
    var: Var<'_>,
    name: &str,
    otherwise: impl FnOnce() -> PathBuf,
) -> PathBuf {
    var(name)
        .filter(|d| !d.is_empty())
        .map_or_else(otherwise, PathBuf::from)
}

/// A path with its links resolved, or as given when it cannot be.
pub(crate) fn resolved(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_host_has_one_name_and_its_own_files() {
        let mut flags = std::collections::HashSet::new();
        let mut projects = std::collections::HashSet::new();
        let home = Path::new("/home/u");
        let none = |_: &str| None;
        let mut users = std::collections::HashSet::new();
        for h in HOSTS {
            assert!(flags.insert(h.flag), "{} twice", h.flag);
            assert!(projects.insert(h.project), "{} twice", h.project);
            assert!(users.insert((h.user)(home, &none)), "{}", h.flag);
            assert_eq!(host(h.flag), Some(h));
            assert!(!h.answers.is_empty() && !h.name.is_empty());
        }
        assert_eq!(host("nobody"), None);
    }
}
