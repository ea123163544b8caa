//! The guarded file tools of `git stella mcp` (SPEC §7): the decisions, synchronous like the rest
//! of the library. The `stella-mcp` binary (the one part of Stella that links tokio) serves
//! them with `rmcp`; one connection is one Stella session.

pub mod tools;
