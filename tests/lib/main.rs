//! Library tests: the session-level operations a control plane embeds (start a session, read,
//! guard, write, delete, record, read the journal), called in-process on a real git repository
//! in a temporary folder. Nothing here runs Stella as a process; stock `git` builds the
//! repository and reads the journal store as an oracle.

mod common;

mod guard;
mod journal;
mod recorder;
mod session;
