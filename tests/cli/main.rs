//! End-to-end tests of the `git-stella` binary, all in one test binary (one link, one rebuild).

mod common;

mod completion;
mod docs;
mod guard;
mod identity;
mod install;
mod journal;
mod offline;
mod turns;
