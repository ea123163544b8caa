//! The artifact: one session packed into a self-contained git bundle (SPEC §6).
//!
//! A git bundle v2 with no prerequisites, holding one ref `refs/stella/checkpoints/<session-id>`.
//! Its tip is one commit on top of the session's journal (so the history travels) whose tree is
//! the versioned format:
//!
//! | entry | content |
//! |---|---|
//! | `stella.toml` | format, session, base commit, producer, times, provenance |
//! | `fingerprint` | `<blake3>  <path>` per touched path, sorted: what `b3sum` prints |
//! | `origins` | the same form for where the session started (`-` for a path it created) |
//! | `files/<path>` | the bytes as the session last saw them (executable bit kept) |
//! | `transcript/<name>` | the conversation, verbatim |
//! | `base` | a gitlink (mode 160000) naming the base commit, SHA-1 repositories only |
//!
//! Stella writes the pack beginning with the tip commit, its tree, `stella.toml`, `fingerprint` and
//! `origins`, stored whole, so a reader has the head after a few kilobytes and reads the rest in
//! the same pass; `git bundle create` orders every commit of the history first. So Stella writes
//! those five entries itself and appends the rest as stock `git pack-objects` packs it (reusing
//! the store's compressed data: recompressing 50 MB in-process measured 4.8× `git bundle
//! create`). An unchanged session gives identical bytes; the cost against `git bundle create` is
//! in `bench/`.
//!
//! Reading accepts any valid bundle whose refs include one checkpoint ref, in any pack order
//! (an artifact travels through stock git: pushed, fetched, bundled again), and a checkpoint ref
//! already in the project's repository ([`Source`]). Every byte is checked before anything is
//! decided from it ([`read_head`], [`read_file`]): a damaged artifact is [`Error::Corrupt`].
//!
//! **Contents warning.** An artifact holds the conversation verbatim — the full bytes of every
//! file the agent read, whatever commands printed, anything it read outside the workspace — and,
//! in its history, every version of every file the session saw, plus the history of any session
//! it was replayed from. Any secrets in them travel too (a `.env`, keys in tests, customer rows in
//! fixtures). Stella does not encrypt, redact, classify or expire it. Treat an artifact like the
//! source tree and the chat log together.

mod read;
mod write;

use std::collections::BTreeMap;
use std::io;
use std::ops::RangeInclusive;

use gix::ObjectId;
use gix::bstr::ByteSlice;
use serde::{Deserialize, Serialize};

use crate::digest::Digest;
pub(crate) use crate::journal::Provenance;
use crate::paths::RelPath;
pub use read::{Head, Opened, Source, read_file, read_file_with, read_head};
pub use write::write_bundle;
pub(crate) use write::write_bundle_with;

/// The format this build writes.
pub(crate) const FORMAT: u32 = 1;

/// The formats this build reads. Each release reads the current format and at least the two
/// before it.
pub(crate) const FORMATS_READ: RangeInclusive<u32> = 1..=1;

/// Where checkpoints live in a bundle.
pub const CHECKPOINTS: &str = "refs/stella/checkpoints/";

/// The warning every artifact carries, shown by `inspect` and the checkpoint docs.
pub const CONTENTS_WARNING: &str = "This artifact holds the conversation verbatim: the full bytes of every file the agent read, \
whatever its commands printed and anything it read outside the workspace; and, in its history, every version of every \
file the session saw, plus the history of any session it was replayed from. Any secrets in them travel too. \
Stella does not encrypt, redact, classify or expire it: share it as you would share the source tree and the chat log.";
/// `stella.toml`: the artifact's manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The artifact format it was written in (`FORMAT` for this build).
    pub format: u32,
    /// The id of the session packed.
    pub session: String,
    /// The workspace `HEAD` when the artifact was made; `none` on an unborn branch.
    pub(crate) base: String,
    /// The hash of the workspace's repository: `sha1` or `sha256`.
    pub object_format: String,
    /// What wrote it: `git-stella <version>`.
    pub producer: String,
    /// When the session started, as [`crate::text::format_time`] writes it.
    pub started: String,
    /// When the session recorded its last step, written the same way.
    pub last_step: String,
    /// How many steps the session had recorded.
    pub steps: u64,
    /// Paths the session may have seen in two versions: they need a re-read before any write.
    #[serde(default)]
    pub needs_reread: Vec<String>,
    /// Transcript names and their sizes in bytes.
    #[serde(default)]
    pub transcripts: BTreeMap<String, u64>,
    /// The chain of replays this session descends from, oldest first.
    #[serde(default)]
    pub provenance: Vec<Provenance>,
}

impl Manifest {
    /// The base commit, if there was one.
    pub fn base_commit(&self) -> Option<&str> {
        (self.base != "none").then_some(self.base.as_str())
    }
}

/// The error returned by artifact operations.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The bytes are whole, but they are not an artifact: not a bundle, no checkpoint ref, a
    /// manifest or fingerprint that does not parse, a path an artifact may never name.
    #[error("not a Stella artifact: {why}")]
    NotAnArtifact {
        /// What is wrong, for the message.
        why: String,
    },
    /// The artifact's format is outside `FORMATS_READ` (`check_format`).
    #[error(
        "this artifact has format {format}; this git-stella reads formats {}–{}; {reader}",
        FORMATS_READ.start(),
        FORMATS_READ.end()
    )]
    UnsupportedFormat {
        /// The format its manifest names.
        format: u32,
        /// Who reads it instead: a newer git-stella, or none.
        reader: String,
    },
    /// The bytes are damaged: the file ends early, an object does not inflate, the pack's
    /// checksum does not match. Found before anything is decided from the artifact.
    #[error("the artifact is corrupt or truncated: {why}")]
    Corrupt {
        /// What is damaged, for the message.
        why: String,
    },
    /// The argument named a checkpoint ref this repository does not have.
    #[error("no checkpoint ref '{name}' in this repository")]
    NoRef {
        /// The ref, `refs/stella/checkpoints/…`.
        name: String,
    },
    /// The argument named a checkpoint ref, and there is no repository here to hold it.
    #[error("'{name}' names a checkpoint ref, and there is no git repository here")]
    NoRepository {
        /// The ref, `refs/stella/checkpoints/…`.
        name: String,
        /// Why the repository could not be opened.
        #[source]
        source: Box<gix::Error>,
    },
    /// The artifact, or the temporary copy a ref or a pipe is read through, could not be read.
    #[error("could not read the artifact")]
    Io(#[from] io::Error),
    /// Writing the artifact out failed (a full disk, a closed pipe): what was written is not an
    /// artifact.
    #[error("could not write the artifact")]
    Write(#[source] io::Error),
}

fn not_artifact(why: impl Into<String>) -> Error {
    Error::NotAnArtifact { why: why.into() }
}

/// A fingerprint or origins line: `<hex>  <path>` as `b3sum` prints it, escaping `\` and newlines
/// in the path the same way (the line then starts with `\`).
pub(crate) fn sum_line(digest: Option<Digest>, path: &RelPath) -> Vec<u8> {
    let hex = digest.map_or("-".to_owned(), |d| d.to_hex());
    let raw = path.as_bytes();
    let mut line = Vec::new();
    if raw.iter().any(|b| *b == b'\\' || *b == b'\n') {
        line.push(b'\\');
        line.extend_from_slice(hex.as_bytes());
        line.extend_from_slice(b"  ");
        for b in raw {
            match b {
                b'\\' => line.extend_from_slice(b"\\\\"),
                b'\n' => line.extend_from_slice(b"\\n"),
                b => line.push(*b),
            }
        }
    } else {
        line.extend_from_slice(hex.as_bytes());
        line.extend_from_slice(b"  ");
        line.extend_from_slice(raw);
    }
    line.push(b'\n');
    line
}

/// Parse `sum_line` output back; `None` digest for `-`.
pub(crate) fn parse_sums(text: &[u8]) -> Result<Vec<(RelPath, Option<Digest>)>, Error> {
    let mut out = Vec::new();
    for line in text.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let (escaped, line) = match line.strip_prefix(b"\\") {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        let Some(pos) = line.find(b"  ") else {
            return Err(not_artifact("a fingerprint line has no '  ' separator"));
        };
        let (hex, path) = (&line[..pos], &line[pos + 2..]);
        let digest = match hex {
            b"-" => None,
            hex => Some(
                std::str::from_utf8(hex)
                    .ok()
                    .and_then(Digest::from_hex)
                    .ok_or_else(|| not_artifact("a fingerprint line has a malformed digest"))?,
            ),
        };
        let path = if escaped {
            let mut p = Vec::new();
            let mut it = path.iter();
            while let Some(b) = it.next() {
                match (b, it.clone().next()) {
                    (b'\\', Some(b'\\')) => {
                        p.push(b'\\');
                        it.next();
                    }
                    (b'\\', Some(b'n')) => {
                        p.push(b'\n');
                        it.next();
                    }
                    (b, _) => p.push(*b),
                }
            }
            p
        } else {
            path.to_vec()
        };
        let path = RelPath::from_bytes(&path)
            .ok_or_else(|| not_artifact(format!("unsafe path {:?}", path.as_bstr())))?;
        out.push((path, digest));
    }
    Ok(out)
}

/// The user repository's `HEAD` commit (none on an unborn branch) and its object format.
pub(crate) fn user_head(ws: &crate::workspace::Workspace) -> (Option<ObjectId>, gix::hash::Kind) {
    match ws.user_repo() {
        Ok(repo) => (
            repo.head_id().ok().map(|id| id.detach()),
            repo.object_hash(),
        ),
        Err(_) => (None, gix::hash::Kind::Sha1),
    }
}

/// The head's three blobs, by name, in the tip tree: `stella.toml`, `fingerprint`, `origins`.
const HEAD_BLOBS: [&str; 3] = ["stella.toml", "fingerprint", "origins"];

/// Refuse a format outside the support window, naming who reads it.
pub(crate) fn check_format(format: u32) -> Result<(), Error> {
    if FORMATS_READ.contains(&format) {
        return Ok(());
    }
    let reader = if format > *FORMATS_READ.end() {
        "a newer git-stella reads it".to_owned()
    } else {
        // No release ever wrote a format below 1.
        "no version of git-stella reads it".to_owned()
    };
    Err(Error::UnsupportedFormat { format, reader })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sum_lines_round_trip_like_b3sum() {
        let d = Digest::of(b"x");
        for p in ["plain/path.txt", "back\\slash", "new\nline"] {
            let path = RelPath::from_bytes(p.as_bytes()).unwrap();
            let line = sum_line(Some(d), &path);
            assert_eq!(parse_sums(&line).unwrap(), vec![(path.clone(), Some(d))]);
            let created = sum_line(None, &path);
            assert_eq!(parse_sums(&created).unwrap(), vec![(path, None)]);
        }
        assert_eq!(
            sum_line(Some(d), &RelPath::from_bytes(b"a\\b").unwrap()),
            format!("\\{}  a\\\\b\n", d.to_hex()).into_bytes()
        );
        assert!(parse_sums(b"zz  ../x\n").is_err());
    }

    #[test]
    fn formats_outside_the_window_are_refused_by_name() {
        assert!(check_format(1).is_ok());
        let newer = check_format(2).unwrap_err().to_string();
        assert_eq!(
            newer,
            "this artifact has format 2; this git-stella reads formats 1–1; a newer git-stella reads it"
        );
        let older = check_format(0).unwrap_err().to_string();
        assert!(older.ends_with("no version of git-stella reads it"));
    }
}
