use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;

use crate::ctx::Ctx;
use crate::error::Result;
use crate::output::print_json;
use stella::guard::{Intent, change_summary};
use stella::session::Freshness;

/// Show what changed on disk since the session saw these files
///
/// A unified diff from the bytes the session last read or wrote to the bytes on disk now; the
/// whole of it, where a refusal shows only the first lines. Prints nothing for a file that did
/// not change. With no path, every file the session tracks that changed or was deleted since it
/// saw it, as 'git diff' shows every changed file.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella diff
  git stella diff src/lib.rs
  git stella diff --exit-code --json src/*.rs | jq -r '.files[].state'

Exit status:
  0  shown (a change is not an error); with --exit-code, nothing changed
  1  with --exit-code: a file changed since the session saw it (as git diff)
  2  an error: no session given or an unknown one, a path outside the
     workspace")]
pub struct Args {
    /// Tracked files, relative to the current folder or absolute (none: every changed one)
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Exit 1 when a file changed, 0 when none did, as 'git diff --exit-code'
    #[arg(long)]
    pub exit_code: bool,
    /// Print JSON: {session, files: [{path, state (unchanged, changed, deleted, unreadable,
    /// untracked), diff}]}
    #[arg(long)]
    pub json: bool,
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, out: &mut dyn Write) -> Result {
    let (context, id) = ctx.open_session()?;
    let paths = if args.paths.is_empty() {
        context
            .session(&id)
            .status()?
            .into_iter()
            .filter(|(_, f)| matches!(f, Freshness::Changed | Freshness::Gone))
            .map(|(e, _)| e.path)
            .collect()
    } else {
        ctx.resolve_all(&context, &args.paths)?
    };
    let here = ctx.here(context.root());
    let mut changed = false;
    let mut files = Vec::new();
    for check in context
        .session(&id)
        .compare(&paths, Intent::Write { content: None })?
    {
        let p = &check.path;
        let shown = ctx.shown(p, &here);
        let (state, diff) = match (&check.entry, check.refused()) {
            (None, _) => {
                if !args.json {
                    ctx.say(format_args!(
                        "stella: '{shown}' is not tracked by this session"
                    ));
                }
                ("untracked", None)
            }
            (Some(_), false) if matches!(check.disk, stella::guard::Disk::Unreadable(_)) => {
                ("unreadable", None)
            }
            (Some(_), false) => ("unchanged", None),
            (Some(_), true) if !check.path.under(context.root()).exists() => ("deleted", None),
            (Some(_), true) => (
                "changed",
                change_summary(&context.journal(), context.root(), &check, None),
            ),
        };
        changed |= matches!(state, "changed" | "deleted");
        if args.json {
            files.push(json!({"path": p.to_lossy(), "state": state, "diff": diff}));
            continue;
        }
        match (state, diff) {
            ("deleted", _) => writeln!(out, "{shown}: deleted since this session saw it")?,
            ("changed", Some(d)) => writeln!(out, "{}", ctx.paint.diff(&d))?,
            ("changed", None) => writeln!(out, "{shown}: changed since this session saw it")?,
            _ => {}
        }
    }
    if args.json {
        print_json(out, &json!({ "session": id.as_str(), "files": files }))?;
    }
    Ok(if args.exit_code && changed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
