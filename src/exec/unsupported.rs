//! The shell guard where it cannot run (systems other than Linux, and Linux on architectures the
//! filter is not written for): every command is refused before it starts, with the reason, and
//! the caller decides (run unguarded, or fail closed).

use std::io::Write;
use std::process::Command;

use super::{Error, Report, Unsupported, support};
use crate::ids::SessionId;
use crate::session::Context;

/// Refuse to guard `command`: nothing is started.
pub fn run(
    _context: &Context,
    _id: &SessionId,
    _command: Command,
    _label: Option<&str>,
    _err: &mut dyn Write,
) -> Result<Report, Error> {
    Err(Error::Unsupported(
        support().err().unwrap_or(Unsupported::Platform),
    ))
}

/// Whether the guard runs here: never.
pub fn probe() -> Result<(), Unsupported> {
    support()?;
    Err(Unsupported::Platform)
}
