//! Text that reaches a terminal: bytes from files, artifacts and payloads are never printed raw;
//! and times, written the one way every file and message shows them.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `s` with every control character written as an escape (`\n`, `\t`, `\r`, `\x1b`, `\u{9b}`) and
/// backslashes doubled when anything was escaped, so a hostile name cannot move the cursor, change
/// colours, or start a line that looks like Stella's own.
pub fn escape_controls(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x80 && c.is_control() => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `1 file`, `2 files`: a count with its noun, singular or plural (`noun` is the singular; an
/// `s` makes the plural).
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A time as `2026-11-29T22:35:42+00:00`.
pub fn format_time(t: gix::date::Time) -> String {
    t.format_or_unix(gix::date::time::format::ISO8601_STRICT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_agree_with_their_noun() {
        assert_eq!(count(1u64, "file"), "1 file");
        assert_eq!(count(0u64, "file"), "0 files");
        assert_eq!(count(2u32, "step"), "2 steps");
    }

    #[test]
    fn controls_are_escaped_and_plain_text_is_borrowed() {
        assert!(matches!(escape_controls("src/a b.rs"), Cow::Borrowed(_)));
        assert!(matches!(escape_controls("a\\b"), Cow::Borrowed(_)));
        assert_eq!(
            escape_controls("a\nrefusing\x1b[31m\u{9b}\\"),
            "a\\nrefusing\\x1b[31m\\u{9b}\\\\"
        );
        assert_eq!(escape_controls("\t\r\x7f"), "\\t\\r\\x7f");
    }
}
