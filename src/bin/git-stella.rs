//! `git stella`: the entry point git runs for `git stella <command>`.

fn main() -> std::process::ExitCode {
    let mut out = std::io::stdout().lock();
    let mut err = std::io::stderr().lock();
    stella::cli::main_with(std::env::args_os(), &mut out, &mut err)
}
