//! End-to-end tests of the `git-stella` binary, all in one test binary (one link, one rebuild).

mod common;

mod agents;
mod artifact;
mod demo;
mod guard;
mod hostile;
mod identity;
mod journal;
mod mcp;
mod properties;
mod turns;
