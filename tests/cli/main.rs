//! End-to-end tests of the `git-stella` binary, all in one test binary (one link, one rebuild).

mod common;

mod agents;
mod artifact;
mod claude_code;
mod claude_real;
mod completion;
mod demo;
mod docs;
mod doctor;
mod durability;
mod exec;
mod guard;
mod harden;
mod harden_artifact;
mod hooks_install;
mod hostile;
mod identity;
mod install;
mod journal;
mod mcp;
mod offline;
mod private_config;
mod properties;
mod recover;
mod refusals;
mod turns;
mod undo;
