//! End-to-end tests of the `git-stella` binary, all in one test binary (one link, one rebuild).

mod common;

mod claude_code;
mod claude_real;
mod guard;
mod hooks_install;
mod identity;
mod journal;
mod turns;
