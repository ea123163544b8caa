//! Hook adapters: each reads one agent's hook payload and maps it to the guard and the journal,
//! with the same decision table whatever the host.

pub mod codex;
pub mod common;
pub mod cursor;
pub mod gemini;
