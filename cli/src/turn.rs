use std::io::Write;
use std::process::ExitCode;

use crate::ctx::Ctx;
use crate::error::{CliError, Result};
use stella::session::turn::TurnError;

/// Open or end a turn (one prompt to the end of its answer)
///
/// An agent host opens a turn when a prompt arrives and ends it when the answer is done; `git
/// stella step` marks the steps between. While a turn is open the journal holds a resume point,
/// so a process that dies mid-turn leaves behind where it stood (`git stella resume`).
#[derive(clap::Subcommand, Debug)]
#[command(after_long_help = "Examples:
  git stella turn begin
  git stella step --note 'edited the parser'
  git stella turn end

Exit status:
  0  done
  2  an error: no open turn to end, no session given or an unknown one")]
pub enum TurnCommand {
    Begin(BeginArgs),
    End(EndArgs),
}

/// Open a turn: the journal gets a resume point
///
/// While a turn is open, a process that dies leaves the resume point behind, so the next process
/// under the same session id sees where the turn stood ('git stella resume'). If a turn is
/// still open (its host died before ending it), it is ended and the new one begins, and this is
/// said on stderr.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella turn begin
  git stella turn begin --id prompt-7

Exit status:
  0  opened; the turn id is on stdout
  2  an error: no session given or an unknown one, an unusable turn id")]
pub struct BeginArgs {
    /// Name the turn (default: a minted id)
    #[arg(long, value_name = "T")]
    pub id: Option<String>,
}

/// End the open turn: the resume point is retracted, the staleness map stays
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella turn end

Exit status:
  0  ended
  2  an error: no open turn, no session given or an unknown one")]
pub struct EndArgs {}

impl From<TurnError> for CliError {
    fn from(e: TurnError) -> Self {
        match e {
            TurnError::Session(e) => e.into(),
            TurnError::NoOpenTurn { .. } => {
                CliError::from_error(&e).hint("open one with 'git stella turn begin'")
            }
            e => CliError::from_error(&e),
        }
    }
}

pub fn run(ctx: &mut Ctx<'_>, cmd: &TurnCommand, out: &mut dyn Write) -> Result {
    let (context, id) = ctx.open_session()?;
    match cmd {
        TurnCommand::Begin(a) => {
            if let Some(t) = &a.id
                && (t.is_empty() || t.contains('\n') || t.len() > 128)
            {
                return Err(CliError::new(format!("'{t}' is not a usable turn id")));
            }
            let (point, previous) = context.session(&id).turn_begin(a.id.as_deref())?;
            if let Some(p) = previous {
                ctx.say(format_args!(
                    "stella: turn {} was still open ({}); ended it and began turn {}",
                    p.turn,
                    stella::text::count(p.steps, "step"),
                    point.turn
                ));
            }
            writeln!(out, "{}", point.turn)?;
        }
        TurnCommand::End(_) => {
            context.session(&id).turn_end()?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
