//! Refresh the committed man pages (`man/`) and shell completions (`completions/`) from the clap
//! tree: `cargo run --example gen-docs`. A test fails when they are stale.

fn main() -> std::io::Result<()> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for path in stella::cli::docs::generate(root)? {
        println!("{}", path.strip_prefix(root).unwrap_or(&path).display());
    }
    Ok(())
}
