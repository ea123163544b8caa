use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use crate::ctx::Ctx;
use crate::env;
use crate::error::{CliError, Result};

/// Serve guarded file tools over MCP on stdin and stdout
///
/// Runs 'stella-mcp', installed next to 'git-stella'. One connection is one Stella session:
/// the one named by --session or STELLA_SESSION (created when new, so a fixed id per agent keeps
/// its guard across a reconnect), else a minted one that the server announces in its
/// instructions. The tools read_file, write_file, edit_file, delete_file and status refuse a
/// write to a file that changed since the session read it, as a tool error the model can act on.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Exit status:
  0  the client closed the connection
  2  the server could not start: stella-mcp not found, not inside a git
     working tree, an invalid session id")]
pub struct Args {
    /// Arguments passed on to stella-mcp
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARG"
    )]
    pub args: Vec<OsString>,
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, _out: &mut dyn Write) -> Result {
    let exe = env::current_exe()?;
    let server = exe.with_file_name("stella-mcp");
    if !server.is_file() {
        return Err(CliError::new(format!(
            "the MCP server '{}' is missing next to '{}'",
            server.display(),
            exe.display()
        ))
        .hint("install git-stella with its default features ('cargo install git-stella'), which builds stella-mcp beside it"));
    }
    let mut cmd = std::process::Command::new(&server);
    cmd.current_dir(&ctx.cwd);
    if let Some(s) = &ctx.session {
        cmd.arg("--session").arg(s);
    }
    cmd.args(&args.args);
    // exec: the server owns stdin and stdout from here on; it returns only on failure.
    let e = std::os::unix::process::CommandExt::exec(&mut cmd);
    Err(CliError::from_error(&e).hint(format!("check that '{}' can be run", server.display())))
        .map(|()| ExitCode::SUCCESS)
}
