//! Sets `cfg(shell_guard)` where the shell guard's supervisor is built: Linux on x86_64 and
//! aarch64, the architectures its seccomp filter is written for.
//!
//! (The version the command line prints is the `git-stella` package's, in `cli/build.rs`.)

// A build script is its own program, run by cargo, which talks to it through the environment
// (`CARGO_CFG_*`): `clippy.toml`'s rule is for the packages' programs.
#![allow(clippy::disallowed_methods)]

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo::rustc-check-cfg=cfg(shell_guard)");
    let target = |key: &str| std::env::var(key).unwrap_or_default();
    if target("CARGO_CFG_TARGET_OS") == "linux"
        && matches!(
            target("CARGO_CFG_TARGET_ARCH").as_str(),
            "x86_64" | "aarch64"
        )
    {
        println!("cargo:rustc-cfg=shell_guard");
    }
}
