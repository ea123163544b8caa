//! The layout of a step's tree: every top-level entry, named here and nowhere else, and one
//! serde struct for each file that is not raw bytes. A caller names a [`RootFile`]; it never
//! spells a path into the journal itself.
//!
//! ```text
//! session.toml                   SessionFile: id, start time, where the session came from
//! turn.toml                      crate::session::turn::ResumePoint, present only while a turn is open
//! undo.toml                      UndoFile: the step of the session's last undo
//! refused.toml                   crate::refusals::Refused: refusals counted, the last step's
//! hosts/<host>.toml              HostFile: what a host adapter remembers between its calls
//! transcript/<name>/meta         TranscriptMeta: length, digest and chunk count
//! transcript/<name>/chunks/<n>   the transcript's bytes, appended chunk by chunk
//! overwritten/<h>/<call>         bytes a host's tool overwrote before the session saw them, or
//!                                a blind change replaced (crate::keep)
//! overwritten/<h>/path           the path <h> stands for
//! map/…                          the tracked paths (see the journal module)
//! ```

use serde::{Deserialize, Serialize};

use crate::digest::Digest;
use crate::paths::RelPath;

/// A top-level file (or folder) of a step's tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RootFile {
    /// `session.toml`: [`SessionFile`].
    Session,
    /// `turn.toml`: the open turn's resume point.
    Turn,
    /// `undo.toml`: `UndoFile`.
    Undo,
    /// `refused.toml`: the session's refusals.
    Refused,
    /// `hosts/<host>.toml`: `HostFile`.
    Host(&'static str),
    /// `transcript/<name>/meta`: `TranscriptMeta`.
    TranscriptMeta(String),
    /// `transcript/<name>/chunks`: the folder of a transcript's chunks.
    TranscriptChunks(String),
    /// `transcript/<name>/chunks/<n>`: one chunk of a transcript's bytes.
    TranscriptChunk(String, u64),
    /// `overwritten/<h>/<call>`: bytes of `path` a tool overwrote unseen, one blob per call.
    Overwritten {
        /// The path whose bytes they were.
        path: RelPath,
        /// The change that replaced them: the host's key for the tool call, else a name made
        /// from the bytes' digest (`blind-<hex>` for a blind change).
        call: String,
    },
    /// `overwritten/<h>/path`: the path those bytes were at, so that `recover --all` can name it.
    OverwrittenPath(RelPath),
    /// `forgot`: what the session may have known and lost (`super::Forgot`).
    Forgot,
}

/// The folder of every stored transcript.
pub(crate) const TRANSCRIPTS: &str = "transcript";

/// The folder of the host adapters' files.
pub(crate) const HOSTS: &str = "hosts";

impl RootFile {
    /// Its path in the step tree.
    pub(crate) fn name(&self) -> String {
        match self {
            RootFile::Session => "session.toml".into(),
            RootFile::Turn => "turn.toml".into(),
            RootFile::Undo => "undo.toml".into(),
            RootFile::Refused => "refused.toml".into(),
            RootFile::Host(host) => format!("{HOSTS}/{host}.toml"),
            RootFile::TranscriptMeta(name) => format!("{TRANSCRIPTS}/{name}/meta"),
            RootFile::TranscriptChunks(name) => format!("{TRANSCRIPTS}/{name}/chunks"),
            RootFile::TranscriptChunk(name, n) => format!("{TRANSCRIPTS}/{name}/chunks/{n:08}"),
            RootFile::Overwritten { path, call } => format!("{}/{call}", overwritten_dir(path)),
            RootFile::OverwrittenPath(path) => {
                format!("{}/{OVERWRITTEN_PATH}", overwritten_dir(path))
            }
            RootFile::Forgot => "forgot".into(),
        }
    }
}

/// The folder of every path's overwritten bytes.
pub(crate) const OVERWRITTEN: &str = "overwritten";

/// The file in a path's folder of overwritten bytes that names the path.
pub(crate) const OVERWRITTEN_PATH: &str = "path";

/// The folder of the step tree that holds bytes of `path` a tool overwrote unseen, so `recover`
/// finds them by path.
pub(crate) fn overwritten_dir(path: &RelPath) -> String {
    format!("overwritten/{}", Digest::of(path.as_bytes()).to_hex())
}

/// A TOML file of the step tree, read leniently: a file that does not parse reads as absent
/// (the journal's history stays readable across versions of these files).
pub(crate) fn parse<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Option<T> {
    toml::from_str(std::str::from_utf8(bytes).ok()?).ok()
}

/// A TOML file's text.
pub(crate) fn to_toml<T: Serialize>(value: &T) -> String {
    toml::to_string(value).expect("a journal file serialises")
}

/// One replay the session descends from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// The session the artifact was made from.
    pub session: String,
    /// BLAKE3 of the artifact file.
    pub artifact: String,
    /// The base commit of that artifact, if any.
    pub(crate) base: Option<String>,
    /// When it was replayed.
    pub replayed: String,
}

/// `session.toml`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionFile {
    pub(crate) id: String,
    /// When the session started (RFC 3339).
    pub started: String,
    /// The replays it descends from, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provenance: Vec<Provenance>,
    /// Where a host wrote the transcript, as stores of earlier versions kept it here (now in
    /// `hosts/<host>.toml`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) transcript_path: Option<String>,
}

/// `undo.toml`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct UndoFile {
    /// The step the last undo recorded.
    pub(crate) step: u64,
}

/// `hosts/<host>.toml`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct HostFile {
    /// Where the host writes the conversation's transcript.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) transcript_path: Option<String>,
}

/// `transcript/<name>/meta`: what a stored transcript is made of.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TranscriptMeta {
    pub(crate) len: u64,
    pub(crate) digest: String,
    pub(crate) chunks: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_documented_layout() {
        let p = RelPath::from_bytes(b"src/a.rs").unwrap();
        assert_eq!(RootFile::Session.name(), "session.toml");
        assert_eq!(
            RootFile::Host("claude-code").name(),
            "hosts/claude-code.toml"
        );
        assert_eq!(
            RootFile::TranscriptChunk("t.jsonl".into(), 3).name(),
            "transcript/t.jsonl/chunks/00000003"
        );
        assert!(
            RootFile::Overwritten {
                path: p,
                call: "toolu_1".into()
            }
            .name()
            .starts_with("overwritten/")
        );
        // The files as earlier versions wrote them still read.
        let s: SessionFile =
            parse(b"id = \"s\"\nstarted = \"2026-11-29T22:35:42+00:00\"\n").unwrap();
        assert_eq!((s.id.as_str(), s.provenance.len()), ("s", 0));
        assert_eq!(parse::<UndoFile>(b"step = 7\n"), Some(UndoFile { step: 7 }));
        assert_eq!(parse::<UndoFile>(b"not toml ["), None);
    }
}
