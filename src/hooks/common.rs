//! What every agent adapter shares: find the workspace a payload names, name the session after
//! the host's id, run the guard, and record reads and writes by the "nothing absorbed" rules
//! (SPEC §4). Hook settings files are edited by [`super::install`].

use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::digest::Digest;
use crate::guard::{self, Disk, Intent};
use crate::ids::SessionId;
use crate::journal::{MapEdit, Seen, Tip};
use crate::paths::RelPath;
use crate::session::{self, Context};
use crate::workspace::{self, Settings};

/// The error returned by adapters.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("the hook payload is not valid JSON")]
    Payload(#[source] serde_json::Error),
    #[error("the hook payload has no '{field}'")]
    Missing { field: &'static str },
    #[error(transparent)]
    Session(#[from] session::Error),
    #[error("could not {op} '{}'", .path.display())]
    Settings {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// Stella's own config cannot be read whole: no write is judged under a config nobody meant.
    #[error(transparent)]
    Config(Box<crate::hooks::Error>),
}

impl From<crate::journal::Error> for Error {
    fn from(e: crate::journal::Error) -> Self {
        Error::Session(e.into())
    }
}

/// Parse a payload.
pub fn parse(input: &[u8]) -> Result<Value, Error> {
    serde_json::from_slice(input).map_err(Error::Payload)
}

/// A string field of a payload.
pub fn str_field<'a>(v: &'a Value, field: &'static str) -> Result<&'a str, Error> {
    v.get(field)
        .and_then(Value::as_str)
        .ok_or(Error::Missing { field })
}

/// The Stella session named after a host's session id: the id itself when it is a valid Stella
/// id (hosts use UUIDs), else a digest of it, so the same host id always maps to the same session.
pub fn session_for(host_id: &str) -> SessionId {
    SessionId::parse(host_id).unwrap_or_else(|_| {
        let hex = Digest::of(host_id.as_bytes()).to_hex();
        SessionId::parse(&format!("h-{}", &hex[..32])).expect("a hex id is a valid session id")
    })
}

/// The workspace around `cwd` and the session `id` (created on first sight). `None` outside a
/// git working tree: adapters then do nothing (the agent may be anywhere).
pub fn open(settings: &Settings, cwd: &Path, id: &SessionId) -> Result<Option<Context>, Error> {
    match Context::open(settings, cwd) {
        Ok((ctx, _notices)) => {
            ctx.ensure_session(id)?;
            Ok(Some(ctx))
        }
        Err(session::Error::Workspace(
            workspace::Error::NotARepository { .. } | workspace::Error::Bare { .. },
        )) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// A path from the host, relative to `cwd` or absolute, resolved inside the workspace; `None`
/// when it lies outside (adapters leave such paths alone) or cannot be resolved.
pub fn resolve(ctx: &Context, cwd: &Path, raw: &str) -> Option<RelPath> {
    if raw.is_empty() {
        return None;
    }
    ctx.resolve(cwd, Path::new(raw)).ok()
}

/// Why a write the host is about to make to `raw` is denied outright: it lies in `.git/` or
/// `.stella/` (see [`crate::paths::private_area`]).
pub fn private(ctx: &Context, cwd: &Path, raw: &str) -> Option<String> {
    match crate::paths::resolve_public(&ctx.ws.root, cwd, Path::new(raw)) {
        Err(e @ crate::paths::Error::Private { .. }) => Some(format!(
            "{e}: writing there could run code (git hooks, git config) or switch Stella's guard off. Nothing was written."
        )),
        _ => None,
    }
}

/// Run the guard for each path and intent; the refusal text for the ones refused, or `None`.
pub fn guard_all(
    ctx: &Context,
    id: &SessionId,
    wanted: &[(RelPath, Intent)],
) -> Result<Option<String>, Error> {
    // A config nobody can read says nothing about what was meant: fail (and so, deny) first.
    crate::hooks::Config::load(&ctx.ws.root).map_err(|e| Error::Config(Box::new(e)))?;
    let journal = ctx.journal();
    let mut refusals = Vec::new();
    let mut refused = Vec::new();
    for (path, intent) in wanted {
        let check = guard::check(&journal, id, &ctx.ws.root, path, *intent)?;
        if check.refused() {
            refusals.push(guard::refusal_message(&journal, &ctx.ws.root, &check));
            refused.push(check);
        }
    }
    // The refusal leaves a trace in the session (never at the cost of the answer).
    let _ = crate::refusals::note(&journal, id, &refused);
    Ok((!refusals.is_empty()).then(|| refusals.join("\n\n")))
}

/// Record that the session saw exactly `bytes` at `path` (whatever the disk holds now): the
/// bytes a tool read once and showed the model.
pub fn record_seen(
    ctx: &Context,
    id: &SessionId,
    path: &RelPath,
    bytes: &[u8],
) -> Result<Tip, session::Error> {
    let digest = Digest::of(bytes);
    let blob = ctx.journal().write_blob(bytes)?;
    let edit = MapEdit::Put {
        path: path.clone(),
        seen: Seen::Digest(digest),
        bytes: Some((blob, is_exec(&ctx.abs(path)))),
        first_origin: Some(digest),
        wrote: false,
        origin_bytes: None,
    };
    ctx.record(
        id,
        "read",
        std::slice::from_ref(path),
        vec![edit],
        Vec::new(),
    )
}

/// Record a read whose content the host showed the model as `content`.
///
/// The content equals the disk: record it. It differs and the disk is not UTF-8: the host
/// rendered the bytes as text, so the file did not change; record the disk. It differs and the
/// disk is text: the file changed after the host read it, so record what the model saw and the
/// next write is refused until it re-reads. No branch records a version nobody showed the model
/// as if it had been seen, and none refuses a file nobody touched.
pub fn record_shown(
    ctx: &Context,
    id: &SessionId,
    path: &RelPath,
    content: &str,
) -> Result<(), session::Error> {
    let disk = crate::fsutil::read_regular(&ctx.abs(path)).ok();
    match disk {
        Some(d) if d == content.as_bytes() => record_seen(ctx, id, path, &d).map(drop),
        Some(d) if std::str::from_utf8(&d).is_err() => record_seen(ctx, id, path, &d).map(drop),
        _ => record_seen(ctx, id, path, content.as_bytes()).map(drop),
    }
}

/// Record a write the host's tool made. With the bytes the tool meant to write, those are
/// recorded (a later change on disk stays visible); without them, the disk is recorded. A path
/// now gone is dropped.
pub fn record_written(
    ctx: &Context,
    id: &SessionId,
    path: &RelPath,
    intended: Option<&[u8]>,
) -> Result<(), session::Error> {
    let gone = matches!(Disk::probe(&ctx.abs(path)), Disk::Missing);
    let intended = if gone { None } else { intended };
    ctx.wrote(id, std::slice::from_ref(path), intended)?;
    Ok(())
}

/// The bytes an edit tool produced from the version the session last saw, when the session saw
/// one and every `(old, new)` replacement applies to it; `None` otherwise.
pub fn edited_from_seen(
    ctx: &Context,
    id: &SessionId,
    path: &RelPath,
    edits: &[(String, String, bool)],
) -> Result<Option<Vec<u8>>, session::Error> {
    let journal = ctx.journal();
    let Some(entry) = journal.lookup(id, path)? else {
        return Ok(None);
    };
    let Some((blob, _)) = entry.bytes else {
        return Ok(None);
    };
    let Ok(mut text) = String::from_utf8(journal.blob(blob)?) else {
        return Ok(None);
    };
    for (old, new, all) in edits {
        if old.is_empty() || !text.contains(old.as_str()) {
            return Ok(None);
        }
        text = if *all {
            text.replace(old.as_str(), new)
        } else {
            text.replacen(old.as_str(), new, 1)
        };
    }
    Ok(Some(text.into_bytes()))
}

/// Record an edit the host's tool made: the edit applied to what the session saw, when that can
/// be computed; else the disk (a file the session never saw, or an edit it cannot replay).
pub fn record_edited(
    ctx: &Context,
    id: &SessionId,
    path: &RelPath,
    edits: &[(String, String, bool)],
) -> Result<(), session::Error> {
    let intended = edited_from_seen(ctx, id, path, edits)?;
    record_written(ctx, id, path, intended.as_deref())
}

/// Where a read's "before" digest waits for its "after" event (hosts that report a read only
/// after it happened, with content that may not be the file's bytes).
fn pending_file(ctx: &Context, id: &SessionId, path: &RelPath) -> PathBuf {
    let key = Digest::of(format!("{id}\0{path}").as_bytes()).to_hex();
    ctx.ws
        .store_dir()
        .with_file_name("pending-reads")
        .join(&key[..40])
}

/// Note the digest on disk before the host's read tool runs.
pub fn note_before_read(ctx: &Context, id: &SessionId, path: &RelPath) -> Result<(), Error> {
    let Some(d) = Disk::probe(&ctx.abs(path)).digest() else {
        return Ok(());
    };
    let file = pending_file(ctx, id, path);
    let err = |op, source| Error::Settings {
        op,
        path: file.clone(),
        source,
    };
    if let Some(dir) = file.parent() {
        crate::fsutil::create_private_dir(dir, 0o700).map_err(|e| err("create", e))?;
    }
    crate::fsutil::write_atomic(&file, d.to_hex().as_bytes(), 0o600).map_err(|e| err("write", e))
}

/// Drop the note of a read that failed.
pub fn forget_before_read(ctx: &Context, id: &SessionId, path: &RelPath) {
    let _ = std::fs::remove_file(pending_file(ctx, id, path));
}

/// Record a read after the host's read tool ran. `shown` is the text the model got when it is
/// the whole file. It equals the disk: recorded. Otherwise (a range, a rendering, a truncation)
/// the disk is recorded when it did not change since [`note_before_read`]; when it did, the model
/// may have seen either version, so the next write needs a re-read. Never a false refusal for a
/// file nobody touched.
pub fn record_read_after(
    ctx: &Context,
    id: &SessionId,
    path: &RelPath,
    shown: Option<&str>,
) -> Result<(), Error> {
    let file = pending_file(ctx, id, path);
    let before = std::fs::read_to_string(&file)
        .ok()
        .and_then(|h| Digest::from_hex(h.trim()));
    let _ = std::fs::remove_file(&file);
    let Ok(disk) = crate::fsutil::read_regular(&ctx.abs(path)) else {
        // Gone or unreadable now: nothing to record (the tool's own result says why).
        return Ok(());
    };
    let now = Digest::of(&disk);
    if shown.is_some_and(|s| s.as_bytes() == disk.as_slice()) || before.is_none_or(|b| b == now) {
        record_seen(ctx, id, path, &disk)?;
        return Ok(());
    }
    let blob = ctx.journal().write_blob(&disk)?;
    let edit = MapEdit::Put {
        path: path.clone(),
        seen: Seen::Reread,
        bytes: Some((blob, is_exec(&ctx.abs(path)))),
        first_origin: Some(now),
        wrote: false,
        origin_bytes: None,
    };
    ctx.record(
        id,
        "read",
        std::slice::from_ref(path),
        vec![edit],
        Vec::new(),
    )?;
    Ok(())
}

fn is_exec(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

pub use super::describe;

/// The folder a payload names: `cwd`, else the first of Cursor's `workspace_roots`, else
/// `fallback` (the hook process's own).
pub fn payload_cwd(v: &Value, fallback: &Path) -> PathBuf {
    v.get("cwd")
        .and_then(Value::as_str)
        .or_else(|| v.pointer("/workspace_roots/0").and_then(Value::as_str))
        .map_or_else(|| fallback.to_owned(), Into::into)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_id_that_is_no_valid_session_id_maps_to_a_stable_one() {
        assert_eq!(session_for("0f9e-aa").as_str(), "0f9e-aa");
        let a = session_for("conv/with spaces");
        assert_eq!(a, session_for("conv/with spaces"));
        assert!(a.as_str().starts_with("h-"));
    }
}
