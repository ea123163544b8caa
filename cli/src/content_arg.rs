//! The bytes a `--content FILE` argument names ('-' for stdin): what `wrote` records as written
//! and what `guard` checks against the disk, read the same way by both.

use crate::env;
use crate::error::{CliError, Result};

/// Read a `--content` argument: a file, or stdin for `-`.
pub fn read_content(file: &std::path::Path) -> Result<Vec<u8>> {
    if file == std::path::Path::new("-") {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut env::stdin().lock(), &mut buf)?;
        Ok(buf)
    } else {
        std::fs::read(file).map_err(|e| {
            let mut err = CliError::new(format!("could not read '{}'", file.display()));
            err.causes.push(e.to_string());
            err
        })
    }
}
