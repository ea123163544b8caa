//! `git stella mcp`: an MCP server on stdio whose file tools are guarded (SPEC §7).
//!
//! [`tools`] holds the decisions, synchronous like the rest of the library; [`server`] (only
//! with the `mcp` feature, the one part of Stella that links tokio) serves them with `rmcp`.
//! One connection is one Stella session.

#[cfg(feature = "mcp")]
pub mod server;
pub mod tools;
