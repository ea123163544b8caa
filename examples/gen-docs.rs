//! Refresh the committed man pages (`man/`) and shell completions (`completions/`) from the clap
//! tree: `cargo run --example gen-docs`. A test fails when they are stale.

/// The command line's own source: it lives with the `git-stella` binary, out of the library's
/// reach.
#[path = "../src/bin/git-stella/cli/mod.rs"]
#[allow(dead_code, unused_imports)]
mod cli;

fn main() -> std::io::Result<()> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for path in cli::docs::generate(root)? {
        println!("{}", path.strip_prefix(root).unwrap_or(&path).display());
    }
    Ok(())
}
