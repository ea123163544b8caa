//! What commands print in one shape for all of them: JSON, and the paths where an artifact does
//! not match this tree.

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

/// Name each path where an artifact does not match this tree, on `err` (the person's stream), as
/// `verify` and `replay` both say it.
pub fn print_mismatches(
    err: &mut dyn Write,
    mismatches: &[(stella::paths::RelPath, stella::session::replay::Mismatch)],
) {
    let _ = writeln!(
        err,
        "the artifact does not match this tree: {} of its files differ here",
        mismatches.len()
    );
    for (p, how) in mismatches {
        let _ = writeln!(err, "  {:<10} {p}", how.as_str());
    }
}
