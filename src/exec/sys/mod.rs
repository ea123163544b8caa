//! The shell guard's system calls that Rust cannot check: the seccomp filter ([`filter`]), its
//! listener and the child that installs it on itself before its `exec` ([`spawn`]), reading the
//! calling process's memory ([`notify`]), signal dispositions ([`signals`]), and the
//! supervisor's own memory ([`memory`]).
//!
//! The only module of the library where `unsafe` is allowed: `#![deny(unsafe_code)]` holds every
//! other file to it (the one exception, a pre-exec hook every `git` child gets, is
//! `crate::child`'s). Everything here is built only where the filter is written for: Linux on
//! x86_64 and aarch64 (`cfg(shell_guard)`, set by the build script).

pub mod filter;
pub(crate) mod memory;
pub mod notify;
pub mod signals;
pub mod spawn;
