//! `git stella`: the entry point git runs for `git stella <command>`.
//!
//! The command line — arguments, the environment, output and exit codes — lives here, with the
//! binary; the `stella` library never reads the environment, prints or exits.

mod cli;

fn main() -> std::process::ExitCode {
    let mut out = cli::env::stdout().lock();
    let mut err = cli::env::stderr().lock();
    cli::main_with(cli::env::args_os(), &mut out, &mut err)
}
