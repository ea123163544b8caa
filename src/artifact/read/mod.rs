//! The readers: an artifact read and checked whole, in one pass when its pack is in Stella's
//! order (`streaming`), indexed by stock git when it is not (`indexed`).

mod indexed;
mod streaming;

use std::io::{self, BufRead, Read, Write};
use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::{
    CHECKPOINTS, Error, HEAD_BLOBS, Manifest, check_format, not_artifact, parse_sums, write_bundle,
};
use crate::digest::Digest;
use crate::paths::RelPath;
use indexed::read_indexed;
use streaming::{Streamed, read_streaming};

/// Most bytes a head object may claim before the artifact is refused: a hostile size claim must
/// not make the reader allocate it.
const MAX_HEAD_OBJECT: u64 = 256 << 20;

/// What the head of an artifact says: the tip, its manifest, fingerprint and origins, read from a
/// bundle whose every byte was checked first (see [`read_head`]).
#[derive(Clone, Debug)]
pub struct Head {
    /// The bundle's one checkpoint ref, `refs/stella/checkpoints/…`.
    pub refname: String,
    /// The commit that ref names, on top of the session's journal.
    pub tip: ObjectId,
    pub(crate) tree: ObjectId,
    /// `stella.toml`, parsed.
    pub manifest: Manifest,
    /// `stella.toml` as the artifact holds it.
    pub manifest_text: String,
    /// Each path the session touched with the digest of the bytes it last saw there, sorted.
    pub fingerprint: Vec<(RelPath, Digest)>,
    /// Each of those paths with the digest of the bytes the session started from, `None` for a
    /// path it created.
    pub origins: Vec<(RelPath, Option<Digest>)>,
    /// Objects in the pack.
    pub objects: u32,
}

impl Head {
    /// The session id the artifact was made from.
    pub fn session(&self) -> &str {
        &self.manifest.session
    }
}

/// Where an artifact comes from: a bundle file, or a checkpoint ref already in the project's
/// repository (fetched there with stock git).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A bundle file, or a pipe that carries one.
    File(PathBuf),
    /// A checkpoint ref, `refs/stella/checkpoints/…`, in the project's repository.
    Ref(String),
}

impl Source {
    /// What a command-line argument names: a ref when nothing exists at that path (relative to
    /// `cwd`) and it is spelled `refs/stella/checkpoints/…`; a file otherwise.
    ///
    /// A file wins over a ref of the same spelling, so an argument that named a file keeps naming
    /// it; `./refs/stella/checkpoints/…` always names a file.
    pub fn from_arg(cwd: &Path, arg: &Path) -> Source {
        let path = cwd.join(arg);
        let absent = matches!(std::fs::symlink_metadata(&path),
            Err(e) if e.kind() == io::ErrorKind::NotFound);
        match arg.to_str() {
            Some(name) if absent && name.starts_with(CHECKPOINTS) => Source::Ref(name.to_owned()),
            _ => Source::File(path),
        }
    }

    /// Open the artifact, checked whole; `user_repo` opens the project's repository, which only a
    /// ref needs.
    pub fn open(
        &self,
        user_repo: impl FnOnce() -> Result<gix::Repository, gix::Error>,
    ) -> Result<Opened, Error> {
        self.open_with(user_repo, |_| ()).map(|(opened, ())| opened)
    }

    /// [`Source::open`], running `alongside` on the head while the rest is checked (see
    /// [`read_file_with`]).
    pub fn open_with<T: Send>(
        &self,
        user_repo: impl FnOnce() -> Result<gix::Repository, gix::Error>,
        alongside: impl FnOnce(&Head) -> T + Send,
    ) -> Result<(Opened, T), Error> {
        let (file, packed) = match self {
            Source::File(path) if std::fs::metadata(path)?.is_file() => (path.clone(), None),
            // A pipe (`/dev/stdin`, `<(…)`) can be read once; another order, and the import,
            // read the file again: it is copied to a private temporary file first.
            Source::File(path) => {
                let dir = tempfile::Builder::new()
                    .prefix("stella-artifact-")
                    .tempdir()?;
                let file = dir.path().join("artifact.stella.bundle");
                io::copy(
                    &mut std::fs::File::open(path)?,
                    &mut std::fs::File::create(&file)?,
                )?;
                (file, Some(dir))
            }
            Source::Ref(name) => {
                let repo = user_repo().map_err(|source| Error::NoRepository {
                    name: name.clone(),
                    source: Box::new(source),
                })?;
                let (file, dir) = pack_ref(&repo, name)?;
                (file, Some(dir))
            }
        };
        let (head, done) = read_file_with(&file, alongside)?;
        Ok((
            Opened {
                head,
                file,
                _packed: packed,
            },
            done,
        ))
    }
}

impl From<&Path> for Source {
    fn from(path: &Path) -> Self {
        Source::File(path.to_owned())
    }
}

impl From<&PathBuf> for Source {
    fn from(path: &PathBuf) -> Self {
        Source::File(path.clone())
    }
}

impl From<PathBuf> for Source {
    fn from(path: PathBuf) -> Self {
        Source::File(path)
    }
}

/// An artifact read and checked whole: its head, and a bundle file that holds it.
#[derive(Debug)]
pub struct Opened {
    /// What its head says.
    pub head: Head,
    /// The file named; for a ref, a bundle Stella packed from it, and for a pipe, a copy of what
    /// came through it, each in a private temporary folder that lives as long as this value.
    pub(crate) file: PathBuf,
    _packed: Option<tempfile::TempDir>,
}

/// Pack the checkpoint ref `name` of `repo` into a bundle in a private temporary folder, as
/// `checkpoint` writes one; the bundle's path, and the folder, which is removed when dropped.
/// [`Source::open`] reads it back like any file: a ref and a file meet the same checks.
pub(crate) fn pack_ref(
    repo: &gix::Repository,
    name: &str,
) -> Result<(PathBuf, tempfile::TempDir), Error> {
    let no_ref = || Error::NoRef {
        name: name.to_owned(),
    };
    let tip = repo
        .try_find_reference(name)
        .map_err(|_| no_ref())?
        .ok_or_else(no_ref)?
        .peel_to_id()
        .map_err(|_| no_ref())?
        .detach();
    let dir = tempfile::Builder::new()
        .prefix("stella-checkpoint-")
        .tempdir()?;
    let file = dir.path().join("checkpoint.stella.bundle");
    let mut out = io::BufWriter::new(std::fs::File::create(&file)?);
    write_bundle(repo, name, tip, &mut out)?;
    out.flush()?;
    drop(out);
    Ok((file, dir))
}

/// Read the artifact at `path` (see [`read_head`]), whatever the order of its pack.
///
/// A pack in Stella's order is read and checked in one pass. Any other order (stock `git bundle
/// create` puts every commit first) is indexed whole by stock `git index-pack` in a private
/// temporary repository, which checks the pack's checksum and every object, and the head is read
/// from there.
pub fn read_file(path: &Path) -> Result<Head, Error> {
    read_file_with(path, |_| ()).map(|(head, ())| head)
}

/// [`read_file`], running `alongside` on the head while the rest of the pack is checked (a pack
/// in Stella's order gives its head first; `verify` re-hashes the tree meanwhile). Its result
/// comes back only with an artifact that checked out whole.
pub fn read_file_with<T: Send>(
    path: &Path,
    alongside: impl FnOnce(&Head) -> T + Send,
) -> Result<(Head, T), Error> {
    let mut alongside = Some(alongside);
    let head = match read_streaming(std::fs::File::open(path)?, &mut alongside)? {
        Streamed::Head(head, Some(done)) => return Ok((*head, done)),
        Streamed::Head(head, None) => *head,
        Streamed::OtherOrder => read_indexed(path)?,
    };
    let alongside = alongside
        .take()
        .expect("not run: the head was read after the pack");
    let done = alongside(&head);
    Ok((head, done))
}

/// Read an artifact in Stella's order from a stream: the bundle header, then the tip commit, its
/// tree, `stella.toml`, `fingerprint` and `origins` at the start of the pack, each checked
/// against the id that names it; then every other entry, each inflated whole, and the pack's
/// trailing checksum against every byte before it. Nothing is decided before the whole pack
/// checked out: a damaged or truncated artifact is [`Error::Corrupt`], whatever it claims.
///
/// A pack in another order cannot be read in one pass: [`read_file`] reads it.
pub fn read_head(reader: impl Read) -> Result<Head, Error> {
    match read_streaming(reader, &mut None::<fn(&Head)>)? {
        Streamed::Head(head, _) => Ok(*head),
        Streamed::OtherOrder => Err(not_artifact(
            "its pack does not start with the artifact's head; read it from a file, which is indexed whole",
        )),
    }
}

fn corrupt(why: impl Into<String>) -> Error {
    Error::Corrupt { why: why.into() }
}

/// Read the bundle header up to the pack: the one ref under [`CHECKPOINTS`] and its tip. Other
/// refs may travel beside it; prerequisites may not (an artifact is self-contained).
fn read_bundle_header(r: &mut impl BufRead) -> Result<(String, ObjectId), Error> {
    // Past the signature the file is a bundle: ending early is a truncation.
    let read_line = |r: &mut dyn BufRead, line: &mut Vec<u8>, signed: bool| {
        line.clear();
        r.take(4096).read_until(b'\n', line)?;
        if line.last() != Some(&b'\n') {
            return Err(match (signed, line.is_empty()) {
                (true, _) => corrupt("the file ends inside the bundle header"),
                (false, true) => not_artifact("the file ends where a git bundle header belongs"),
                (false, false) => not_artifact("it is not a git bundle"),
            });
        }
        line.pop();
        Ok(())
    };
    let mut line = Vec::new();
    read_line(r, &mut line, false)?;
    match line.as_slice() {
        b"# v2 git bundle" => {}
        b"# v3 git bundle" => {
            return Err(not_artifact(
                "it is a v3 git bundle; Stella artifacts are v2 bundles",
            ));
        }
        _ => return Err(not_artifact("it is not a git bundle")),
    }
    let mut refs = Vec::new();
    loop {
        read_line(r, &mut line, true)?;
        if line.is_empty() {
            break;
        }
        if line.starts_with(b"-") {
            return Err(not_artifact(
                "the bundle has prerequisites; an artifact is self-contained",
            ));
        }
        let text = std::str::from_utf8(&line)
            .map_err(|_| not_artifact("a bundle ref line is not UTF-8"))?;
        let (id, name) = text
            .split_once(' ')
            .ok_or_else(|| not_artifact("a bundle ref line is malformed"))?;
        let id = ObjectId::from_hex(id.as_bytes())
            .map_err(|_| not_artifact("a bundle ref line has a malformed id"))?;
        refs.push((id, name.to_owned()));
    }
    let checkpoints: Vec<&(ObjectId, String)> = refs
        .iter()
        .filter(|(_, name)| name.starts_with(CHECKPOINTS))
        .collect();
    match (checkpoints.as_slice(), refs.as_slice()) {
        ([(tip, name)], _) => Ok((name.clone(), *tip)),
        ([], [(_, name)]) => Err(not_artifact(format!(
            "the bundle's ref is '{name}', not one under {CHECKPOINTS}: it is a plain git bundle"
        ))),
        ([], _) => Err(not_artifact(format!(
            "the bundle holds {} refs, none under {CHECKPOINTS}: it is a plain git bundle",
            refs.len()
        ))),
        (many, _) => Err(not_artifact(format!(
            "the bundle holds {} refs under {CHECKPOINTS}; an artifact holds exactly one",
            many.len()
        ))),
    }
}

/// The pack's 12-byte header, read from `r`: a version 2 pack's, and the objects it counts.
fn read_pack_header(r: &mut impl Read) -> Result<([u8; 12], u32), Error> {
    let mut header = [0u8; 12];
    r.read_exact(&mut header)
        .map_err(|_| corrupt("the file ends inside the pack's header"))?;
    if &header[..4] != b"PACK" || header[4..8] != [0, 0, 0, 2] {
        return Err(not_artifact("the bundle does not hold a version 2 pack"));
    }
    let count = u32::from_be_bytes(header[8..12].try_into().expect("4 bytes"));
    Ok((header, count))
}

/// The ids of [`HEAD_BLOBS`] in a tip tree; `None` for one it lacks (or holds as something else
/// than a file).
fn head_entries(tree: &[u8], hash: gix::hash::Kind) -> Result<[Option<ObjectId>; 3], Error> {
    let tree = gix::objs::TreeRef::from_bytes(tree, hash)
        .map_err(|_| not_artifact("the tip tree does not parse"))?;
    Ok(HEAD_BLOBS.map(|name| {
        tree.entries
            .iter()
            .find(|e| e.filename == name.as_bytes().as_bstr() && e.mode.is_blob())
            .map(|e| e.oid.to_owned())
    }))
}

/// Read what the head's blobs say, in this order: the manifest first (so a format outside the
/// window is refused before anything else is read), then the fingerprint and origins.
fn parse_head(
    refname: String,
    tip: ObjectId,
    tree: ObjectId,
    [manifest, fingerprint, origins]: [Option<Vec<u8>>; 3],
    objects: u32,
) -> Result<Head, Error> {
    let missing = |name: &str| not_artifact(format!("its tree has no '{name}'"));
    let manifest_bytes = manifest.ok_or_else(|| missing("stella.toml"))?;
    let manifest_text =
        String::from_utf8(manifest_bytes).map_err(|_| not_artifact("stella.toml is not UTF-8"))?;
    let table: toml::Table = manifest_text.parse().map_err(|e: toml::de::Error| {
        not_artifact(format!("stella.toml is malformed: {}", e.message()))
    })?;
    let format = table
        .get("format")
        .and_then(|v| v.as_integer())
        .ok_or_else(|| not_artifact("stella.toml has no integer 'format'"))?;
    let format = u32::try_from(format).unwrap_or(u32::MAX);
    check_format(format)?;
    let manifest: Manifest = toml::from_str(&manifest_text)
        .map_err(|e| not_artifact(format!("stella.toml is malformed: {}", e.message())))?;
    let fingerprint = parse_sums(&fingerprint.ok_or_else(|| missing("fingerprint"))?)?
        .into_iter()
        .map(|(p, d)| {
            d.map(|d| (p, d))
                .ok_or_else(|| not_artifact("the fingerprint has a line without a digest"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let origins = parse_sums(&origins.ok_or_else(|| missing("origins"))?)?;
    Ok(Head {
        refname,
        tip,
        tree,
        manifest,
        manifest_text,
        fingerprint,
        origins,
        objects,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_not_an_artifact() {
        for bytes in [&b""[..], b"garbage", b"# v3 git bundle\n@filter=x\n\n"] {
            assert!(matches!(read_head(bytes), Err(Error::NotAnArtifact { .. })));
        }
        // Past the signature, a file that ends is a truncated bundle.
        for bytes in [
            &b"# v2 git bundle\n"[..],
            b"# v2 git bundle\nabc",
            b"# v2 git bundle\n0000000000000000000000000000000000000000 refs/stella/checkpoints/x\n\nPA",
        ] {
            assert!(matches!(read_head(bytes), Err(Error::Corrupt { .. })));
        }
    }
}
