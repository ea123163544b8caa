//! How a host renders the bytes it wrote or read (line endings, invalid UTF-8), to tell which
//! of the texts an edit could make is the one on disk.

/// The largest text an edit is replayed on when the host did not send it (the session's own
/// copy is read from the store): replaying holds it and its results in memory. An edit to a
/// larger file needs a re-read before the session's next write.
pub(super) const REPLAY_MAX: u64 = 16 << 20;

/// What an edit is replayed on to know what it wrote.
pub(super) enum Base {
    /// The text before the edit: the host's, else the session's last sight of the file.
    Text(String),
    /// The session never saw the file as text.
    Unseen,
    /// The session saw it, but it is larger than [`REPLAY_MAX`].
    TooLarge,
}

/// Whether a file of `size` bytes can be `text` as a host shows or stores it (see
/// [`renders_as`] and [`landed`]): CRLF for LF at most doubles a text, a byte-order mark and a
/// final newline add a few bytes, and an invalid byte shown as U+FFFD takes three. The disk is
/// read whole to compare only then, so memory grows with what the host sent, not with the file.
pub(super) fn may_render(size: u64, text: &str) -> bool {
    let text = text.len() as u64;
    size <= 2 * text + 8 && text <= 3 * size + 8
}

/// Whether `text` is how a host renders the file bytes `disk` as text: the same bytes, or the
/// same after decoding (invalid UTF-8 replaced), dropping a byte-order mark and turning CRLF
/// into LF.
pub(crate) fn renders_as(disk: &[u8], text: &str) -> bool {
    if disk == text.as_bytes() {
        return true;
    }
    rendered(&String::from_utf8_lossy(disk)) == rendered(text)
}

pub(super) fn rendered(text: &str) -> String {
    text.strip_prefix('\u{feff}')
        .unwrap_or(text)
        .replace("\r\n", "\n")
}

/// What a host may do to a text on its way to disk: keep or add a byte-order mark, turn LF into
/// CRLF (the file's own line endings), add or drop the final newline.
pub(super) fn as_stored(text: &str) -> String {
    let text = rendered(text);
    text.strip_suffix('\n').map(str::to_owned).unwrap_or(text)
}

/// The bytes a write tool left on disk, out of the texts it may have written (`candidates`, the
/// likeliest first): the disk's own bytes when they are one of them as the host stores text
/// (a byte-order mark, its line endings, a final newline added or dropped) — provably the
/// tool's own result — else the likeliest text itself. Never the disk's bytes when they are
/// other content: a change made after the tool stays visible.
pub fn landed(candidates: &[String], disk: Option<&[u8]>) -> Vec<u8> {
    if let Some(disk) = disk
        && let Ok(text) = std::str::from_utf8(disk)
        && candidates
            .iter()
            .any(|c| c.as_bytes() == disk || as_stored(c) == as_stored(text))
    {
        return disk.to_vec();
    }
    candidates
        .first()
        .map(|c| c.as_bytes().to_vec())
        .unwrap_or_default()
}
