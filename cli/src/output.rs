//! What commands print as JSON, in one shape for all of them.

use std::io::{self, Write};

/// The session that wrote some bytes, and when (Unix seconds), for JSON: `{session, at}`.
pub fn writer_json(session: &str, at: i64) -> serde_json::Value {
    serde_json::json!({
        "session": session,
        "at": stella::text::format_time(gix::date::Time::new(at, 0)),
    })
}

/// A refused write or delete, for JSON: `{intent, path, seen, found, writer}`; `found` is a
/// digest, `deleted`, or `null` when the file could not be read.
pub fn record_json(r: &stella::refusals::Record) -> serde_json::Value {
    serde_json::json!({
        "intent": r.intent,
        "path": r.path,
        "seen": r.seen,
        "found": match r.found.as_deref() {
            Some(stella::refusals::GONE) => Some("deleted"),
            found => found,
        },
        "writer": match (&r.writer, r.writer_at) {
            (Some(session), Some(at)) => writer_json(session, at),
            (Some(session), None) => serde_json::json!({"session": session, "at": null}),
            _ => serde_json::Value::Null,
        },
    })
}

/// Write `value` as one line of JSON.
pub fn print_json(out: &mut dyn Write, value: &serde_json::Value) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value)?;
    writeln!(out)
}
