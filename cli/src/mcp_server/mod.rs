//! `stella-mcp`: the MCP server that `git stella mcp` runs, the only binary with tokio (the
//! `mcp` feature): its command line here, its transport in `server.rs`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use server::{Server, StartError};
use stella::ids::{InvalidId, SessionId};
use stella::report::Report;

use crate::env;

mod server;

/// Serve guarded file tools over MCP on stdin and stdout
///
/// One connection is one Stella session: the one named by --session or STELLA_SESSION (created
/// when new, so a fixed id per agent keeps its guard across restarts), else a minted one that the
/// server's instructions announce.
#[derive(Parser, Debug)]
#[command(name = "stella-mcp", bin_name = "git stella mcp", version)]
struct Args {
    /// Run as if started in DIR
    #[arg(short = 'C', value_name = "DIR")]
    dir: Option<PathBuf>,
    /// The session this connection acts as
    #[arg(long, value_name = "ID", env = "STELLA_SESSION")]
    session: Option<String>,
}

/// Run the server on this process's arguments, environment and standard streams.
pub fn main() -> ExitCode {
    env::apply_test_switches();
    let args = Args::parse();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", Report::of(&e).render());
            ExitCode::from(2)
        }
    }
}

/// The error returned by [`run`]: why the server did not start, or why it stopped.
#[derive(Debug, thiserror::Error)]
enum Error {
    /// The working folder could not be read, or the async runtime could not start.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// `--session` or `STELLA_SESSION` is not a session id.
    #[error(transparent)]
    Session(#[from] InvalidId),
    /// The environment does not give Stella's settings.
    #[error(transparent)]
    Settings(#[from] env::Error),
    /// The workspace or the session could not be opened.
    #[error(transparent)]
    Start(#[from] StartError),
    /// The connection to the client failed while serving it.
    #[error("the MCP connection failed")]
    Connection(#[source] Box<dyn std::error::Error + Send + Sync>),
}

fn run(args: Args) -> Result<(), Error> {
    let mut cwd = env::current_dir()?;
    if let Some(dir) = &args.dir {
        cwd = cwd.join(dir);
    }
    let session = match args.session.as_deref().filter(|s| !s.is_empty()) {
        Some(s) => Some(SessionId::parse(s)?),
        None => None,
    };
    let settings = env::settings()?;
    let (server, notices) = Server::start(settings, cwd, session)?;
    for n in notices {
        eprintln!("stella: {n}");
    }
    eprintln!("stella: MCP server for session {}", server.session());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(server::serve_stdio(server))
        .map_err(Error::Connection)
}
