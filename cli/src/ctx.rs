//! What every command gets (settings, the working folder, where to print) and what they share:
//! the session they act as, and how a refusal is said.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use stella::ids::SessionId;
use stella::session::Context;
use stella::workspace::Settings;

use crate::env;
use crate::error::{CliError, Result};
use crate::term;

/// What every command gets: settings built at the edge, and where to print.
pub struct Ctx<'a> {
    pub settings: Settings,
    pub cwd: PathBuf,
    pub session: Option<String>,
    pub quiet: bool,
    /// Colours for standard output (off unless the command and the terminal call for them).
    pub paint: term::Paint,
    /// `--color`, for what goes to stderr (a refusal), decided only when there is some.
    pub color_flag: Option<term::When>,
    /// Progress lines on stderr: it is a terminal, and not `--quiet` (git's rule).
    pub progress: bool,
    pub err: &'a mut dyn Write,
}

impl Ctx<'_> {
    /// Open the workspace around the current directory, telling the person what changed.
    pub fn open(&mut self) -> Result<Context> {
        let (ctx, notices) = Context::open(&self.settings, &self.cwd)?;
        for n in notices {
            let _ = writeln!(self.err, "stella: {n}");
        }
        Ok(ctx)
    }

    /// The workspace and the session the command acts on ([`Ctx::open`], [`Ctx::session_id`]).
    pub fn open_session(&mut self) -> Result<(Context, SessionId)> {
        let context = self.open()?;
        let id = self.session_id()?;
        self.resume_forgotten(&context, &id)?;
        Ok((context, id))
    }

    /// Start session `id` again, and say so, when this workspace had it and its journal is gone
    /// ([`Context::resume_forgotten`]).
    pub fn resume_forgotten(&mut self, context: &Context, id: &SessionId) -> Result<()> {
        if context.resume_forgotten(id)? {
            let _ = writeln!(
                self.err,
                "stella: session {id} existed in this workspace, but its journal is gone; it was started again, and every existing file must be read again before it is changed"
            );
        }
        Ok(())
    }

    /// The session named by `--session` or `$STELLA_SESSION`.
    pub fn session_id(&self) -> Result<SessionId> {
        let Some(id) = &self.session else {
            return Err(CliError::new("no session given").hint(
                "pass '--session ID' or set STELLA_SESSION; 'git stella session start' starts one",
            ));
        };
        parse_session_id(id)
    }

    /// Resolve command-line paths inside the workspace, each once.
    pub fn resolve_all(
        &self,
        ctx: &Context,
        paths: &[PathBuf],
    ) -> Result<Vec<stella::paths::RelPath>> {
        let mut seen = std::collections::HashSet::new();
        Ok(self
            .resolve_all_named(ctx, paths)?
            .into_iter()
            .map(|n| n.path)
            // One step records a path once, however often it was named.
            .filter(|p| seen.insert(p.clone()))
            .collect())
    }

    /// [`Ctx::resolve_all`], keeping the symbolic links the caller named.
    pub fn resolve_all_named(
        &self,
        ctx: &Context,
        paths: &[PathBuf],
    ) -> Result<Vec<stella::paths::Named>> {
        let mut out: Vec<stella::paths::Named> = Vec::with_capacity(paths.len());
        let mut seen = std::collections::HashSet::new();
        for p in paths {
            let named = ctx.resolve_named(&self.cwd, p)?;
            if seen.insert(named.clone()) {
                out.push(named);
            }
        }
        Ok(out)
    }

    /// Where the current folder is inside the workspace at `root` (empty at the root).
    pub fn here(&self, root: &std::path::Path) -> PathBuf {
        let cwd = self.cwd.canonicalize().unwrap_or_else(|_| self.cwd.clone());
        cwd.strip_prefix(root)
            .map(PathBuf::from)
            .unwrap_or_default()
    }

    /// A workspace path as a person reads it: from the current folder (`here`, see
    /// [`Ctx::here`]), as git status shows paths, control characters escaped. JSON keeps paths
    /// from the root.
    pub fn shown(&self, path: &stella::paths::RelPath, here: &std::path::Path) -> String {
        let shown = stella::paths::relative_from(path, here);
        stella::text::escape_controls(&shown.to_string_lossy()).into_owned()
    }

    /// Say something to the person, unless `--quiet`.
    pub fn say(&mut self, text: std::fmt::Arguments<'_>) {
        if !self.quiet {
            let _ = writeln!(self.err, "{text}");
        }
    }
}

pub fn parse_session_id(id: &str) -> Result<SessionId> {
    SessionId::parse(id).map_err(|e| CliError::from_error(&e))
}

/// The library's settings, read from the environment (see [`env`](mod@env)).
pub fn settings_from_env() -> std::result::Result<Settings, CliError> {
    env::settings().map_err(|e| match e {
        env::Error::NoHome => {
            CliError::new(e.to_string()).hint("set STELLA_HOME to a folder Stella may use")
        }
        env::Error::Cwd(io) => CliError::from_error(&io),
    })
}

/// One line on stderr per file whose bytes were kept before a blind change (even under `-q`:
/// it says where someone's work went).
pub fn say_kept(ctx: &mut Ctx<'_>, kept: &[stella::keep::Kept]) -> std::io::Result<()> {
    for k in kept {
        writeln!(ctx.err, "{}", k.line())?;
    }
    Ok(())
}

pub fn report_refusals(
    ctx: &mut Ctx<'_>,
    context: &Context,
    checks: &[stella::guard::Check],
) -> ExitCode {
    // The refusal leaves a trace in the session (never at the cost of the answer).
    if let Ok(id) = ctx.session_id()
        && let Err(e) = stella::refusals::note(&context.journal(), &id, checks)
    {
        tracing::warn!(error = %e, "the refusal could not be recorded in the session");
    }
    print_refusals(ctx, context, checks)
}

/// [`report_refusals`] for refusals the caller already recorded.
pub fn print_refusals(
    ctx: &mut Ctx<'_>,
    context: &Context,
    checks: &[stella::guard::Check],
) -> ExitCode {
    let journal = context.journal();
    // Coloured as git colours a diff, when stderr is a terminal (or --color/color.* say so).
    let paint = term::Paint {
        on: term::stderr_color(ctx.color_flag, &ctx.cwd),
    };
    for (i, c) in checks.iter().filter(|c| c.refused()).enumerate() {
        if i > 0 {
            let _ = writeln!(ctx.err);
        }
        let message = stella::guard::refusal_message(&journal, context.root(), c);
        let _ = writeln!(ctx.err, "{}", paint_refusal(&paint, &message));
    }
    ExitCode::from(1)
}

/// A refusal's first line in red and its diff coloured as `git diff` colours one.
fn paint_refusal(paint: &term::Paint, message: &str) -> String {
    if !paint.on {
        return message.to_owned();
    }
    let (first, rest) = message.split_once('\n').unwrap_or((message, ""));
    let (prose, diff) = match rest
        .find("\n--- ")
        .map(|i| i + 1)
        .or_else(|| rest.starts_with("--- ").then_some(0))
    {
        Some(at) => rest.split_at(at),
        None => (rest, ""),
    };
    let mut out = paint.paint(term::Slot::Bad, first);
    if !rest.is_empty() {
        out.push('\n');
        out.push_str(prose);
        out.push_str(&paint.diff(diff));
    }
    out
}
