//! Turns, the resume point and transcripts (SPEC §2, §5).
//!
//! A turn is a span of steps opened and closed by the host (for an agent: one user prompt to the
//! end of the answer). While a turn is open the journal holds `turn.toml`, the resume point: a
//! process that dies mid-turn leaves it behind, so the next process under the same session id
//! sees exactly where the turn stood. `turn end` retracts it; the staleness map stays.
//!
//! `turn begin` while a turn is open ends the open turn and begins the new one, in one step, and
//! says so: the host has moved on to a new prompt (typically after a crash that fired no `Stop`),
//! and refusing would leave the session unable to record the turn the host is actually in.
//!
//! Transcripts are stored verbatim, as the bytes handed in. Hosts append to their transcript
//! file, so each capture stores only the bytes appended since the previous one, as a new chunk
//! (`transcript/<name>/chunks/<n>`), after checking that the stored bytes are still a prefix of
//! the file (one hash of that prefix, no second copy); a file that was rewritten is stored whole
//! again. Reading back concatenates the chunks.
//!
//! A transcript file is named by the host (a hook payload's `transcript_path`, `step
//! --transcript`), so it is read with care: only a regular file is taken, and only up to
//! [`MAX_TRANSCRIPT_BYTES`]. A device such as `/dev/zero` would grow without end, a FIFO would
//! hang the reader; either is refused at once, never read (`read_transcript_file`).

use serde::{Deserialize, Serialize};

use crate::digest::Digest;
use crate::ids::SessionId;
use crate::journal::layout::{self, TranscriptMeta};
use crate::journal::{RootEdit, RootFile, Step, Tip};
use crate::session::{Context, Error};
use crate::text::format_time;

/// The resume point: where an open turn stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResumePoint {
    /// The turn's name: the one `turn begin` was given, else eight random hex digits.
    pub turn: String,
    /// When the turn began, as [`format_time`] writes it.
    pub started: String,
    /// Step boundaries marked in this turn.
    pub steps: u64,
    /// The note of the last step boundary, if it had one.
    pub note: Option<String>,
    /// When the turn last moved (began, or marked a step), as [`format_time`] writes it.
    pub updated: String,
}

/// Most bytes a transcript file may hold for Stella to take it: 256 MiB.
///
/// Far above what a long agent session writes (tens of MB, pasted images included), low enough
/// that a runaway file cannot exhaust memory: transcripts are held whole while they are stored
/// and packed.
pub const MAX_TRANSCRIPT_BYTES: u64 = 256 << 20;

/// Why a transcript file was not taken: the error returned by `read_transcript_file`.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptFileError {
    /// It could not be opened: missing (`TranscriptFileError::is_not_found`), or forbidden.
    #[error("it could not be opened")]
    Open(#[source] std::io::Error),
    /// It is a folder, a device, a FIFO or a socket: never read.
    #[error("it is not a regular file")]
    NotRegular,
    /// It holds more than [`MAX_TRANSCRIPT_BYTES`].
    #[error(
        "it holds {size} bytes, more than the {MAX_TRANSCRIPT_BYTES} bytes a transcript may hold"
    )]
    TooLarge {
        /// Its size in bytes, or as many as were read before the cap.
        size: u64,
    },
    /// It was opened, but reading it failed.
    #[error("it could not be read")]
    Read(#[source] std::io::Error),
}

impl TranscriptFileError {
    /// The file is not there (a host that has not written it yet, or a copy that moved).
    pub(crate) fn is_not_found(&self) -> bool {
        matches!(self, TranscriptFileError::Open(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

/// Read the transcript file at `path` whole, if it is a regular file of at most
/// [`MAX_TRANSCRIPT_BYTES`].
///
/// Opened without blocking (a FIFO with no writer would hang the open) and checked with `fstat`
/// on the open file before a byte is read; a file that grows past the cap while it is read is
/// refused too.
pub(crate) fn read_transcript_file(path: &std::path::Path) -> Result<Vec<u8>, TranscriptFileError> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .map_err(TranscriptFileError::Open)?;
    let meta = file.metadata().map_err(TranscriptFileError::Read)?;
    if !meta.file_type().is_file() {
        return Err(TranscriptFileError::NotRegular);
    }
    if meta.len() > MAX_TRANSCRIPT_BYTES {
        return Err(TranscriptFileError::TooLarge { size: meta.len() });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_TRANSCRIPT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(TranscriptFileError::Read)?;
    if bytes.len() as u64 > MAX_TRANSCRIPT_BYTES {
        return Err(TranscriptFileError::TooLarge {
            size: bytes.len() as u64,
        });
    }
    Ok(bytes)
}

/// The error for turn commands used out of order.
#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    /// A step or `turn end` came with no turn open.
    #[error("no turn is open in session '{id}'")]
    NoOpenTurn {
        /// The session asked about.
        id: SessionId,
    },
    /// The session's `turn.toml` cannot be read as a [`ResumePoint`].
    #[error("the turn state of session '{id}' is corrupt: {why}")]
    Corrupt {
        /// The session whose resume point it is.
        id: SessionId,
        /// What is wrong with it.
        why: String,
    },
    /// A transcript name that is empty, starts with `.`, or holds `/` or NUL.
    #[error("'{name}' is not a usable transcript name")]
    BadName {
        /// The name given.
        name: String,
    },
    /// The transcript file was not taken (`read_transcript_file`).
    #[error("the transcript '{}' was not taken", crate::text::escape_controls(&path.to_string_lossy()))]
    Transcript {
        /// The file the host named.
        path: std::path::PathBuf,
        /// Why it was not taken.
        #[source]
        source: TranscriptFileError,
    },
    /// The session's journal or store failed.
    #[error(transparent)]
    Session(#[from] Error),
}

impl From<crate::journal::Error> for TurnError {
    fn from(e: crate::journal::Error) -> Self {
        TurnError::Session(e.into())
    }
}

/// A transcript handed in by the host: its name in the journal and where its bytes are.
pub struct Transcript<'a> {
    /// Its name in the journal (`transcript/<name>/`): not empty, no leading `.`, no `/` or NUL.
    pub name: &'a str,
    /// The file the host writes it to.
    pub path: &'a std::path::Path,
}

impl Context {
    /// The edits that store `bytes` as the whole of transcript `name` (a replay's first step).
    pub(crate) fn whole_transcript_edits(
        &self,
        name: &str,
        bytes: &[u8],
    ) -> Result<Vec<RootEdit>, crate::journal::Error> {
        self.chunk_edits(name, bytes, 1, bytes)
    }

    /// The edits that store `new_bytes` as chunk `chunk_no` of transcript `name`, whose whole
    /// content is now `whole`, with the meta that says so.
    fn chunk_edits(
        &self,
        name: &str,
        whole: &[u8],
        chunk_no: u64,
        new_bytes: &[u8],
    ) -> Result<Vec<RootEdit>, crate::journal::Error> {
        let journal = self.journal();
        let meta = TranscriptMeta {
            len: whole.len() as u64,
            digest: Digest::of(whole).to_hex(),
            chunks: chunk_no,
        };
        Ok(vec![
            RootEdit::Put {
                file: RootFile::TranscriptChunk(name.to_owned(), chunk_no),
                blob: journal.write_blob(new_bytes)?,
            },
            journal.toml_edit(RootFile::TranscriptMeta(name.to_owned()), &meta)?,
        ])
    }
}

impl crate::session::Session<'_> {
    /// The open turn's resume point, if a turn is open.
    pub fn resume_point(&self) -> Result<Option<ResumePoint>, TurnError> {
        let id = self.id;
        let Some(bytes) = self.ctx.journal().root_file(id, &RootFile::Turn)? else {
            return Ok(None);
        };
        let text = String::from_utf8(bytes).map_err(|_| TurnError::Corrupt {
            id: id.clone(),
            why: "turn.toml is not UTF-8".into(),
        })?;
        toml::from_str(&text)
            .map(Some)
            .map_err(|e| TurnError::Corrupt {
                id: id.clone(),
                why: e.message().to_owned(),
            })
    }

    /// Open a turn; an open one is ended in the same step. Returns the turn that was still open.
    pub fn turn_begin(
        &self,
        turn: Option<&str>,
    ) -> Result<(ResumePoint, Option<ResumePoint>), TurnError> {
        let previous = self.resume_point()?;
        let now = format_time(gix::date::Time::now_utc());
        let point = ResumePoint {
            turn: turn
                .map(str::to_owned)
                .unwrap_or_else(|| crate::ids::random_hex(4)),
            started: now.clone(),
            steps: 0,
            note: None,
            updated: now,
        };
        let summary = match &previous {
            Some(p) => format!("turn begin {} (ended open turn {})", point.turn, p.turn),
            None => format!("turn begin {}", point.turn),
        };
        self.put_turn(&point, summary, Vec::new())?;
        if let Err(e) = self.ctx.store.maybe_gc() {
            tracing::warn!(error = %e, "automatic repack failed");
        }
        Ok((point, previous))
    }

    /// Mark a step boundary inside the open turn, storing the transcript when given.
    pub fn step(
        &self,
        note: Option<&str>,
        transcript: Option<Transcript<'_>>,
    ) -> Result<ResumePoint, TurnError> {
        let id = self.id;
        let Some(mut point) = self.resume_point()? else {
            return Err(TurnError::NoOpenTurn { id: id.clone() });
        };
        point.steps += 1;
        point.note = note.map(str::to_owned);
        point.updated = format_time(gix::date::Time::now_utc());
        let mut edits = Vec::new();
        if let Some(t) = transcript {
            edits.extend(self.transcript_edits(t)?);
        }
        let summary = match note {
            Some(n) => format!("step {} of turn {}: {n}", point.steps, point.turn),
            None => format!("step {} of turn {}", point.steps, point.turn),
        };
        self.put_turn(&point, summary, edits)?;
        Ok(point)
    }

    /// End the open turn: the resume point is retracted, the map stays.
    pub fn turn_end(&self) -> Result<ResumePoint, TurnError> {
        let id = self.id;
        let Some(point) = self.resume_point()? else {
            return Err(TurnError::NoOpenTurn { id: id.clone() });
        };
        let step = Step {
            summary: format!("turn end {}", point.turn),
            map: Vec::new(),
            root: vec![RootEdit::Remove {
                file: RootFile::Turn,
            }],
        };
        self.ctx.journal().record(id, &step)?;
        if let Err(e) = self.ctx.store.maybe_gc() {
            tracing::warn!(error = %e, "automatic repack failed");
        }
        Ok(point)
    }

    /// Store the transcript's new bytes as a step of its own, inside a turn or not: a host may
    /// flush its transcript after the event that ended the turn, so adapters capture it again at
    /// the next event. Records nothing when the stored copy is already complete.
    pub(crate) fn capture_transcript(
        &self,
        transcript: Transcript<'_>,
    ) -> Result<Option<Tip>, TurnError> {
        let id = self.id;
        let summary = format!("transcript {}", transcript.name);
        let edits = self.transcript_edits(transcript)?;
        if edits.is_empty() {
            return Ok(None);
        }
        let step = Step {
            summary,
            map: Vec::new(),
            root: edits,
        };
        Ok(Some(self.ctx.journal().record(id, &step)?))
    }

    fn put_turn(
        &self,
        point: &ResumePoint,
        summary: String,
        mut root: Vec<RootEdit>,
    ) -> Result<Tip, TurnError> {
        let id = self.id;
        root.push(self.ctx.journal().toml_edit(RootFile::Turn, point)?);
        let step = Step {
            summary,
            map: Vec::new(),
            root,
        };
        Ok(self.ctx.journal().record(id, &step)?)
    }

    /// The edits that store the transcript's new bytes (or all of them, when it was rewritten).
    fn transcript_edits(&self, t: Transcript<'_>) -> Result<Vec<RootEdit>, TurnError> {
        let id = self.id;
        if t.name.is_empty()
            || t.name.starts_with('.')
            || t.name.contains('/')
            || t.name.contains('\0')
        {
            return Err(TurnError::BadName {
                name: t.name.to_owned(),
            });
        }
        let bytes = read_transcript_file(t.path).map_err(|source| TurnError::Transcript {
            path: t.path.to_owned(),
            source,
        })?;
        let journal = self.ctx.journal();
        let meta: TranscriptMeta = journal
            .root_toml(id, &RootFile::TranscriptMeta(t.name.to_owned()))?
            .unwrap_or_default();
        let old_len = meta.len as usize;
        let appended = meta.chunks > 0
            && bytes.len() >= old_len
            && Digest::of(&bytes[..old_len]).to_hex() == meta.digest;
        let mut edits = Vec::new();
        let (chunk_no, new_bytes) = if appended {
            if bytes.len() == old_len {
                return Ok(edits);
            }
            (meta.chunks + 1, &bytes[old_len..])
        } else {
            if meta.chunks > 0 {
                edits.push(RootEdit::Remove {
                    file: RootFile::TranscriptChunks(t.name.to_owned()),
                });
            }
            (1, &bytes[..])
        };
        edits.extend(self.ctx.chunk_edits(t.name, &bytes, chunk_no, new_bytes)?);
        Ok(edits)
    }

    /// The names of the transcripts the session holds.
    pub fn transcript_names(&self) -> Result<Vec<String>, TurnError> {
        let id = self.id;
        let tip = self.ctx.journal().tip(id)?;
        let repo = self.ctx.store.repo().map_err(crate::journal::Error::from)?;
        let tree = repo
            .find_tree(tip.tree)
            .map_err(|e| crate::journal::Error::from(self.ctx.store.git_err("read a tree")(e)))?;
        let Ok(Some(entry)) = tree.lookup_entry_by_path(layout::TRANSCRIPTS) else {
            return Ok(Vec::new());
        };
        let sub = repo
            .find_tree(entry.object_id())
            .map_err(|e| crate::journal::Error::from(self.ctx.store.git_err("read a tree")(e)))?;
        Ok(sub
            .iter()
            .filter_map(|e| e.ok())
            .map(|e| e.filename().to_string())
            .collect())
    }

    /// The transcript `name` as last stored, byte for byte.
    pub fn transcript(&self, name: &str) -> Result<Option<Vec<u8>>, TurnError> {
        let id = self.id;
        let journal = self.ctx.journal();
        let Some(meta) = journal.root_file(id, &RootFile::TranscriptMeta(name.to_owned()))? else {
            return Ok(None);
        };
        let meta: TranscriptMeta = layout::parse(&meta).ok_or_else(|| TurnError::Corrupt {
            id: id.clone(),
            why: format!("transcript '{name}' has no valid meta"),
        })?;
        let mut out = Vec::with_capacity(meta.len as usize);
        for n in 1..=meta.chunks {
            let chunk = journal
                .root_file(id, &RootFile::TranscriptChunk(name.to_owned(), n))?
                .ok_or_else(|| TurnError::Corrupt {
                    id: id.clone(),
                    why: format!("transcript '{name}' is missing chunk {n}"),
                })?;
            out.extend_from_slice(&chunk);
        }
        if out.len() as u64 != meta.len || Digest::of(&out).to_hex() != meta.digest {
            return Err(TurnError::Corrupt {
                id: id.clone(),
                why: format!("transcript '{name}' does not match its digest"),
            });
        }
        Ok(Some(out))
    }
}
