//! `git stella`: the entry point git runs for `git stella <command>`.
//!
//! The command line — arguments, the environment, output and exit codes — lives in the
//! `stella_cli` library beside this file; the `stella` library never reads the environment, prints
//! or exits.

fn main() -> std::process::ExitCode {
    let mut out = stella_cli::env::stdout().lock();
    let mut err = stella_cli::env::stderr().lock();
    stella_cli::main_with(stella_cli::env::args_os(), &mut out, &mut err)
}
