//! Refresh the committed man pages (`man/`) and shell completions (`completions/`) from the clap
//! tree: `cargo run --example gen-docs`. A test fails when they are stale.

use stella_cli::docs;

fn main() -> std::io::Result<()> {
    // The generated folders sit at the repository's root, one above this package.
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest.parent().unwrap_or(manifest);
    for path in docs::generate(root)? {
        println!("{}", path.strip_prefix(root).unwrap_or(&path).display());
    }
    Ok(())
}
