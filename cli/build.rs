//! What `git-stella --version` says beyond the package version: the commit it was built from and
//! the date of the build, as `git describe`-less builds of git and jj do.
//!
//! The commit comes from `git rev-parse` when the source is a git checkout (a source tarball has
//! none: "unknown"); the date is today's in UTC, or `SOURCE_DATE_EPOCH`'s for a reproducible
//! build. Only the files that move `HEAD` make the script run again. This package sits one folder
//! below the repository's root, so its `.git` is `../.git`.
//!
//! (The library's `cfg(shell_guard)` is set by the root package's `build.rs`.)

// A build script is its own program, run by cargo, which talks to it through the environment
// (`SOURCE_DATE_EPOCH`): `clippy.toml`'s rule is for the packages' programs.
#![allow(clippy::disallowed_methods)]

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    let git_dir = Path::new("../.git");
    let commit = if git_dir.is_dir() {
        for watched in ["HEAD", "packed-refs"] {
            if git_dir.join(watched).exists() {
                println!("cargo:rerun-if-changed=../.git/{watched}");
            }
        }
        // The branch HEAD points at moves with every commit.
        if let Ok(head) = std::fs::read_to_string(git_dir.join("HEAD"))
            && let Some(branch) = head.trim().strip_prefix("ref: ")
            && git_dir.join(branch).exists()
        {
            println!("cargo:rerun-if-changed=../.git/{branch}");
        }
        Command::new("git")
            .args(["rev-parse", "--short=12", "HEAD"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .filter(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_hexdigit()))
    } else {
        None
    };
    let seconds = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64)
        });
    let (y, m, d) = civil_from_days(seconds.div_euclid(86_400));
    println!(
        "cargo:rustc-env=STELLA_COMMIT={}",
        commit.as_deref().unwrap_or("unknown")
    );
    println!("cargo:rustc-env=STELLA_BUILD_DATE={y:04}-{m:02}-{d:02}");
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}
