//! End-to-end tests of the `git-stella` binary, all in one test binary (one link, one rebuild).
//!
//! The clap tree they read (docs, completion) is `stella_cli`'s, the binaries' own library.

// Tests set up the processes they run: they read and pass on the environment freely
// (`clippy.toml` keeps that to the command line's one file in the programs themselves).
#![allow(clippy::disallowed_methods)]

mod common;

mod boundary;
mod checkpoint;
mod claude_code;
mod claude_real;
mod codex_real;
mod command_line;
mod completion;
mod copilot_real;
mod damage;
mod demo;
mod docs;
mod doctor;
mod durability;
mod exec;
mod exec_identity;
mod exec_live;
mod exec_race;
mod gc;
mod gemini_real;
mod guard;
mod harden;
mod hook_codex;
mod hook_cursor;
mod hook_gemini;
mod hook_race;
mod hooks_install;
mod host_core;
mod hostile;
mod init;
mod inspect;
mod install;
mod journal;
mod json_schema;
mod kill;
mod large_file;
mod log;
mod mcp;
mod model_mock;
mod offline;
mod opencode_real;
mod output;
mod portable;
mod powercut;
mod private_config;
mod properties;
mod qwen_real;
mod race_load;
mod read;
mod recover;
mod replay;
mod resume;
mod rm;
mod session;
mod shell_routes;
mod show;
mod status;
mod step;
mod transport;
mod turn;
mod uncommitted;
mod undo;
mod write;
