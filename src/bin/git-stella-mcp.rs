//! `git-stella-mcp`: the MCP server that `git stella mcp` runs, the only binary with tokio.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use stella::ids::SessionId;
use stella::mcp::server::{self, Server};

/// Serve guarded file tools over MCP on stdin and stdout
///
/// One connection is one Stella session: the one named by --session or STELLA_SESSION (created
/// when new, so a fixed id per agent keeps its guard across restarts), else a minted one that the
/// server's instructions announce.
#[derive(Parser, Debug)]
#[command(name = "git-stella-mcp", bin_name = "git stella mcp", version)]
struct Args {
    /// Run as if started in DIR
    #[arg(short = 'C', value_name = "DIR")]
    dir: Option<PathBuf>,
    /// The session this connection acts as
    #[arg(long, value_name = "ID", env = "STELLA_SESSION")]
    session: Option<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Args) -> Result<(), String> {
    let fail = |e: &(dyn std::error::Error + 'static)| {
        let mut c = stella::cli::CliError::from_error(e);
        c.message = format!("error: {}", c.message);
        std::iter::once(c.message)
            .chain(c.causes.into_iter().map(|c| format!("caused by: {c}")))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut cwd = std::env::current_dir().map_err(|e| fail(&e))?;
    if let Some(dir) = &args.dir {
        cwd = cwd.join(dir);
    }
    let session = match args.session.as_deref().filter(|s| !s.is_empty()) {
        Some(s) => Some(SessionId::parse(s).map_err(|e| fail(&e))?),
        None => None,
    };
    let settings = stella::cli::settings_from_env().map_err(|e| format!("error: {}", e.message))?;
    let (server, notices) = Server::start(settings, cwd, session).map_err(|e| fail(&e))?;
    for n in notices {
        eprintln!("stella: {n}");
    }
    eprintln!("stella: MCP server for session {}", server.session());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| fail(&e))?;
    rt.block_on(server::serve_stdio(server))
        .map_err(|e| format!("error: the MCP connection failed\ncaused by: {e}"))
}
