//! How a command fails: the error it reports, what kind of failure that is, and the exit status
//! that follows from the kind.

use std::io::{self, Write};
use std::process::ExitCode;

use stella::report::Report;
use stella::{journal, session, workspace};

use crate::output::print_json;

/// `exec`'s own failure: what a command it runs never exits with by its own choice.
pub const OWN_ERROR: u8 = 125;

/// Which way a command answers its caller, as far as exit statuses go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Caller {
    /// `hook`: an agent host reads 2 as "block".
    Hook,
    /// `exec` and a host's shell prefix: the wrapped command's statuses are its own.
    Exec,
    /// Every other command.
    Other,
}

/// What kind of failure an error is. The exit status follows from it (and from the command:
/// see [`CliError::exit_status`]), never from a number chosen where the error was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Stella could not do what was asked: a mistake in the request, a file it could not read,
    /// a configuration it cannot follow.
    Failed,
    /// The store was found damaged: [`crate::main_with`] repairs it, then reports what was lost.
    Damaged,
    /// A write to a closed pipe (`git stella log | head`): the command ends quietly.
    BrokenPipe,
    /// The program `exec` was to run exists but could not be started.
    CannotRun,
    /// The program `exec` was to run was not found.
    NotFound,
}

/// An error to report, in git's voice: the error itself (when one caused it), what kind of
/// failure it is, what to say, and a hint.
#[derive(Debug)]
pub struct CliError {
    /// What kind of failure this is: the exit status follows from it.
    pub kind: Kind,
    /// The first line: `error: <message>`.
    pub message: String,
    /// The `caused by:` lines, outermost first.
    pub causes: Vec<String>,
    /// The `hint:` line.
    pub hint: Option<String>,
    /// The library's error this reports, kept whole (its chain made the causes).
    source: Option<Box<dyn std::error::Error + 'static>>,
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref()
    }
}

impl CliError {
    pub fn new(message: impl Into<String>) -> Self {
        CliError {
            kind: Kind::Failed,
            message: message.into(),
            causes: Vec::new(),
            hint: None,
            source: None,
        }
    }

    pub fn cause(mut self, cause: impl Into<String>) -> Self {
        self.causes.push(cause.into());
        self
    }

    pub fn of_kind(mut self, kind: Kind) -> Self {
        self.kind = kind;
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Build from any error, its chain becoming `caused by:` lines (each said once).
    pub fn from_error(e: &(dyn std::error::Error + 'static)) -> Self {
        let report = Report::of(e);
        let mut err = CliError::new(report.message);
        err.causes = report.causes;
        if chain_has_broken_pipe(e) {
            err.kind = Kind::BrokenPipe;
        }
        err
    }

    /// [`CliError::from_error`], keeping the error itself ([`std::error::Error::source`]).
    pub fn keeping(e: impl std::error::Error + 'static) -> Self {
        let mut err = CliError::from_error(&e);
        err.source = Some(Box::new(e));
        err
    }

    /// The exit status of a command of kind `caller` ending with this error: 2 for a failure,
    /// as every git command; a hook's own failure is 1, as an agent host reads 2 as "block"
    /// (SPEC §7); `exec`'s own is 125, as `env` and `timeout` use it, so that 2 stays the wrapped
    /// command's, with a shell's 126 and 127 for a program it could not start or find; a closed
    /// pipe, 0.
    pub fn exit_status(&self, caller: Caller) -> u8 {
        match (self.kind, caller) {
            (Kind::BrokenPipe, _) => 0,
            (Kind::CannotRun, _) => 126,
            (Kind::NotFound, _) => 127,
            (Kind::Failed | Kind::Damaged, Caller::Hook) => 1,
            (Kind::Failed | Kind::Damaged, Caller::Exec) => OWN_ERROR,
            (Kind::Failed | Kind::Damaged, Caller::Other) => 2,
        }
    }

    /// Say it as one line of JSON on `err`, for a command run with `--json`:
    /// `{"error": {kind, message, causes, hint, exit}}`.
    pub(crate) fn print_json(&self, err: &mut dyn Write, kind: &str, exit: u8) {
        let _ = print_json(
            err,
            &serde_json::json!({"error": {
                "kind": kind,
                "message": self.message,
                "causes": self.causes,
                "hint": self.hint,
                "exit": exit,
            }}),
        );
    }

    pub(crate) fn print(&self, err: &mut dyn Write) {
        let report = Report {
            message: self.message.clone(),
            causes: self.causes.clone(),
            hint: self.hint.clone(),
        };
        let _ = writeln!(err, "{}", report.render());
    }
}

/// Whether an error, or any error in its chain, is a write to a closed pipe.
fn chain_has_broken_pipe(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(e);
    while let Some(err) = next {
        if err
            .downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
        {
            return true;
        }
        next = err.source();
    }
    false
}

/// The hint under every refusal for an invalid configuration.
pub const CONFIG_HINT: &str =
    "fix it, or move it away for the defaults; 'git stella doctor' shows what is wrong";

impl From<session::Error> for CliError {
    fn from(e: session::Error) -> Self {
        use session::Error as S;
        let hint = match &e {
            S::Journal(journal::Error::UnknownSession { .. }) => Some(
                "start a session with 'git stella session start', or list them with 'git stella session list'".to_owned(),
            ),
            S::Journal(journal::Error::SessionExists { id }) => Some(format!(
                "use it with '--session {id}' or STELLA_SESSION={id}"
            )),
            S::Workspace(workspace::Error::Corrupt { path, .. }) => Some(format!(
                "remove '{}' and run 'git stella init': the workspace id is adopted again from Stella's data dir",
                path.display()
            )),
            S::Store(stella::store::Error::Lock(_)) => Some(
                "another git-stella process is writing; if none is, the lock is released when that process exits".to_owned(),
            ),
            S::Config(_) => Some(CONFIG_HINT.to_owned()),
            S::Repair(r) => r.unrepairable().map(|id| {
                format!("'git stella session drop {id}' removes it; a new session must read every file again")
            }),
            _ => None,
        };
        let damage = e.is_damage();
        let unreadable = match &e {
            S::Unreadable(failures) => Some((
                failures
                    .iter()
                    .map(|(p, err)| format!("'{p}': {err}"))
                    .collect(),
                failures
                    .iter()
                    .map(|(p, _)| format!("'{p}'"))
                    .collect::<Vec<_>>()
                    .join(", "),
            )),
            _ => None,
        };
        let mut c = CliError::keeping(e);
        if damage {
            c.kind = Kind::Damaged;
        }
        if let Some((causes, paths)) = unreadable {
            c.causes = causes;
            c.message = format!("could not read {paths}; nothing was recorded");
        }
        c.hint = hint;
        c
    }
}

macro_rules! impl_from_error {
    ($($t:ty),*) => {$(
        impl From<$t> for CliError {
            fn from(e: $t) -> Self {
                session::Error::from(e).into()
            }
        }
    )*};
}
impl_from_error!(
    journal::Error,
    workspace::Error,
    stella::store::Error,
    stella::paths::Error
);

impl From<io::Error> for CliError {
    fn from(e: io::Error) -> Self {
        CliError::keeping(e)
    }
}

pub type Result<T = ExitCode> = std::result::Result<T, CliError>;

/// Map an artifact error to git's voice; unreadable or unsupported artifacts are errors (exit 2).
///
/// Its text may quote the artifact (a ref name, a path, git's complaint about a tree entry):
/// control characters are escaped, so a hostile file cannot drive the terminal or split a line.
pub fn artifact_err(e: impl Into<stella::session::ArtifactError>) -> CliError {
    let mut err = match e.into() {
        stella::session::ArtifactError::Session(s) => s.into(),
        stella::session::ArtifactError::Artifact(e) => CliError::from_error(&e),
    };
    let esc = |s: &str| stella::text::escape_controls(s).into_owned();
    err.message = esc(&err.message);
    err.causes = err.causes.iter().map(|c| esc(c)).collect();
    err.hint = err.hint.as_deref().map(esc);
    err
}
