//! The bytes a blind change replaces (a change of a file the session never read): kept in the
//! journal first unless git's `HEAD` holds them, so `git stella recover PATH` gives back a
//! person's uncommitted edit or an untracked file that a session overwrote or deleted unseen.
//!
//! Bounded: a file larger than `FILE_MAX`, or past `COMMAND_MAX` kept by one command, is not
//! kept, and the change is refused instead (fail closed: bytes Stella cannot keep are not lost
//! quietly).

use gix::ObjectId;

use crate::digest::Digest;
use crate::guard::{Allow, Check, Conflict, Others, Verdict};
use crate::journal::{self, Journal, RootEdit, RootFile};
use crate::paths::RelPath;

/// The largest file kept before a blind change, and the most one command (a shell command under
/// the guard, one call of a tool) keeps: defined with the guard, whose refusals name them.
pub(crate) use crate::guard::{KEEP_COMMAND_MAX as COMMAND_MAX, KEEP_FILE_MAX as FILE_MAX};

/// Bytes kept before a blind change of `path`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kept {
    pub(crate) path: RelPath,
    pub(crate) digest: Digest,
    pub(crate) blob: ObjectId,
}

impl Kept {
    /// The step's root files that keep them where `recover PATH` and `recover --all` find
    /// them (see [`overwritten`]).
    pub(crate) fn root_edits(
        &self,
        journal: &Journal<'_>,
    ) -> Result<Vec<RootEdit>, journal::Error> {
        overwritten(
            journal,
            &self.path,
            &format!("blind-{}", self.digest.to_hex()),
            self.blob,
        )
    }

    /// The one line that tells the caller (`line()`).
    pub fn line(&self) -> String {
        line(&self.path)
    }
}

/// The one line that says the bytes at `path` were kept before a blind change.
pub(crate) fn line(path: &RelPath) -> String {
    format!(
        "kept the previous {path}: git stella recover {}",
        shell_word(&path.to_lossy())
    )
}

/// `text` as one word for a POSIX shell: as it is when it holds nothing a shell reads, else in
/// single quotes.
fn shell_word(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+,=@%".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// The root files that keep `blob`, the bytes at `path` that call `call` replaced unseen: the
/// blob under the path's folder of overwritten bytes, and the path itself beside it.
pub(crate) fn overwritten(
    journal: &Journal<'_>,
    path: &RelPath,
    call: &str,
    blob: ObjectId,
) -> Result<Vec<RootEdit>, journal::Error> {
    Ok(vec![
        RootEdit::Put {
            file: RootFile::Overwritten {
                path: path.clone(),
                call: call.to_owned(),
            },
            blob,
        },
        RootEdit::Put {
            file: RootFile::OverwrittenPath(path.clone()),
            blob: journal.write_blob(path.as_bytes())?,
        },
    ])
}

/// Why bytes could not be kept: the change is refused.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file, or what one command keeps, passes a limit, and git's `HEAD` does not hold its
    /// bytes.
    #[error(
        "{path} is {size} bytes, and its bytes are not in git's HEAD; Stella keeps up to {max} bytes {what} before a change made without reading it. Nothing was changed: read {path} first, or commit it"
    )]
    TooLarge {
        /// The file, relative to the workspace root.
        path: RelPath,
        /// Its size in bytes.
        size: u64,
        /// The limit it passed, in bytes: `FILE_MAX` or `COMMAND_MAX`.
        max: u64,
        /// Which limit, as the message says it: `of one file` or `in one command`.
        what: &'static str,
    },
    /// The file could not be read.
    #[error("could not keep {path} before changing it: {source}")]
    Io {
        /// The file, relative to the workspace root.
        path: RelPath,
        /// The I/O error that stopped it.
        #[source]
        source: std::io::Error,
    },
    /// The bytes could not be written into the store.
    #[error(transparent)]
    Journal(#[from] journal::Error),
}

/// After a check that allowed a blind change ([`Allow::Untracked`]): keep the bytes there
/// ([`before_blind`]); bytes too large to keep turn the check into a refusal
/// ([`Conflict::Unkept`]). Any other check is left alone.
///
/// `wanted` is asked, once git's `HEAD` is known not to hold the bytes, whether the caller keeps
/// this path at all (the shell guard does not keep what git ignores).
pub(crate) fn for_check(
    check: &mut Check,
    others: &Others<'_, '_>,
    budget: &mut u64,
    wanted: &mut dyn FnMut(&RelPath) -> bool,
) -> Result<Option<Kept>, Error> {
    if check.verdict != Verdict::Allow(Allow::Untracked) {
        return Ok(None);
    }
    match before_blind(others, &check.path, budget, wanted) {
        Err(Error::TooLarge { .. }) => {
            check.verdict = Verdict::Refuse(Conflict::Unkept);
            Ok(None)
        }
        other => other,
    }
}

/// Before a blind change of `path` (for the session of `others`): keep the bytes there unless
/// `HEAD` holds them, counting them against `budget` (what the command may still keep).
/// `None` when there is nothing to keep: no file, not a regular file, or bytes git has.
pub(crate) fn before_blind(
    others: &Others<'_, '_>,
    path: &RelPath,
    budget: &mut u64,
    wanted: &mut dyn FnMut(&RelPath) -> bool,
) -> Result<Option<Kept>, Error> {
    let abs = path.under(&others.ws.root);
    let size = match std::fs::symlink_metadata(&abs) {
        Ok(m) if m.is_file() => m.len(),
        _ => return Ok(None),
    };
    let too_large = |max, what| Error::TooLarge {
        path: path.clone(),
        size,
        max,
        what,
    };
    if size > FILE_MAX {
        // HEAD may hold them: only read back what git has, never the file whole.
        let held =
            crate::fsutil::digest_file(&abs).is_ok_and(|digest| others.head_holds(path, digest));
        if held || !wanted(path) {
            return Ok(None);
        }
        return Err(too_large(FILE_MAX, "of one file"));
    }
    let bytes = match crate::fsutil::read_regular(&abs) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(Error::Io {
                path: path.clone(),
                source,
            });
        }
    };
    let digest = Digest::of(&bytes);
    if others.head_holds(path, digest) || !wanted(path) {
        return Ok(None);
    }
    let size = bytes.len() as u64;
    if size > *budget {
        return Err(Error::TooLarge {
            path: path.clone(),
            size,
            max: COMMAND_MAX,
            what: "in one command",
        });
    }
    let blob = others.journal.write_blob(&bytes)?;
    *budget -= size;
    Ok(Some(Kept {
        path: path.clone(),
        digest,
        blob,
    }))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_path_is_one_shell_word() {
        assert_eq!(super::shell_word("src/api.rs"), "src/api.rs");
        assert_eq!(super::shell_word("my file's.rs"), "'my file'\\''s.rs'");
    }
}
