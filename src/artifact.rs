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

use std::collections::{BTreeMap, HashSet};
use std::io::{self, BufRead, Read, Write};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::bstr::ByteSlice;
use serde::{Deserialize, Serialize};

use crate::digest::Digest;
pub use crate::journal::Provenance;
use crate::paths::RelPath;

/// The format this build writes.
pub const FORMAT: u32 = 1;

/// The formats this build reads. Each release reads the current format and at least the two
/// before it.
pub const FORMATS_READ: RangeInclusive<u32> = 1..=1;

/// Where checkpoints live in a bundle.
pub const CHECKPOINTS: &str = "refs/stella/checkpoints/";

/// The warning every artifact carries, shown by `inspect` and the checkpoint docs.
pub const CONTENTS_WARNING: &str = "This artifact holds the conversation verbatim: the full bytes of every file the agent read, \
whatever its commands printed and anything it read outside the workspace; and, in its history, every version of every \
file the session saw, plus the history of any session it was replayed from. Any secrets in them travel too. \
Stella does not encrypt, redact, classify or expire it: share it as you would share the source tree and the chat log.";

/// Most bytes a head object may claim before the artifact is refused: a hostile size claim must
/// not make the reader allocate it.
const MAX_HEAD_OBJECT: u64 = 256 << 20;

/// `stella.toml`: the artifact's manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    pub session: String,
    /// The workspace `HEAD` when the artifact was made; `none` on an unborn branch.
    pub base: String,
    pub object_format: String,
    pub producer: String,
    pub started: String,
    pub last_step: String,
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
    #[error("not a Stella artifact: {why}")]
    NotAnArtifact { why: String },
    #[error(
        "this artifact has format {format}; this git-stella reads formats {}–{}; {reader}",
        FORMATS_READ.start(),
        FORMATS_READ.end()
    )]
    UnsupportedFormat { format: u32, reader: String },
    /// The bytes are damaged: the file ends early, an object does not inflate, the pack's
    /// checksum does not match. Found before anything is decided from the artifact.
    #[error("the artifact is corrupt or truncated: {why}")]
    Corrupt { why: String },
    /// The argument named a checkpoint ref this repository does not have.
    #[error("no checkpoint ref '{name}' in this repository")]
    NoRef { name: String },
    /// The argument named a checkpoint ref, and there is no repository here to hold it.
    #[error("'{name}' names a checkpoint ref, and there is no git repository here")]
    NoRepository {
        name: String,
        #[source]
        source: Box<gix::Error>,
    },
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
pub fn parse_sums(text: &[u8]) -> Result<Vec<(RelPath, Option<Digest>)>, Error> {
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
pub fn user_head(ws: &crate::workspace::Workspace) -> (Option<ObjectId>, gix::hash::Kind) {
    match ws.user_repo() {
        Ok(repo) => (
            repo.head_id().ok().map(|id| id.detach()),
            repo.object_hash(),
        ),
        Err(_) => (None, gix::hash::Kind::Sha1),
    }
}

/// Every object reachable from `tip`, without descending into gitlinks, head objects first and
/// the rest in a fixed walk order.
fn objects_to_pack(
    repo: &gix::Repository,
    tip: ObjectId,
    head: &[ObjectId],
) -> Result<Vec<ObjectId>, gix::Error> {
    let mut seen: HashSet<ObjectId> = head.iter().copied().collect();
    let mut order: Vec<ObjectId> = head.to_vec();
    let mut commits = vec![tip];
    let mut trees = Vec::new();
    while let Some(c) = commits.pop() {
        let commit = repo.find_commit(c)?;
        let decoded = commit.decode().map_err(gix::Error::from_error)?;
        if seen.insert(c) {
            order.push(c);
        }
        trees.push(decoded.tree());
        for p in decoded.parents() {
            if !seen.contains(&p) {
                commits.push(p);
            }
        }
    }
    let mut i = 0;
    while i < trees.len() {
        let t = trees[i];
        i += 1;
        if t != head[1] && !seen.insert(t) {
            continue;
        }
        if t != head[1] {
            order.push(t);
        }
        let tree = repo.find_tree(t)?;
        for e in tree.iter() {
            let e = e.map_err(gix::Error::from_error)?;
            let id = e.oid().to_owned();
            if e.mode().is_tree() {
                trees.push(id);
            } else if e.mode().is_commit() {
                // A gitlink names the base commit: never carried.
            } else if seen.insert(id) {
                order.push(id);
            }
        }
    }
    Ok(order)
}

/// Write a v2 git bundle of `tip` (one ref `refname`, no prerequisites) in artifact order: the
/// pack starts with the tip commit, its tree, `stella.toml`, `fingerprint` and `origins` (each
/// object once: `origins` is often the same blob as `fingerprint`), then
/// the rest of the history, every object stored whole, never descending into gitlinks.
///
/// [`crate::session::Session::checkpoint`] builds the tip and calls this; it is public for tools (and tests)
/// that assemble an artifact's commit themselves.
pub fn write_bundle(
    repo: &gix::Repository,
    refname: &str,
    tip: ObjectId,
    out: &mut dyn Write,
) -> Result<(), Error> {
    write_bundle_with(repo, refname, tip, out, false)
}

/// [`write_bundle`], with git's progress lines on this process's stderr when `progress` (the
/// caller decides: a terminal, and not quiet).
pub fn write_bundle_with(
    repo: &gix::Repository,
    refname: &str,
    tip: ObjectId,
    out: &mut dyn Write,
    progress: bool,
) -> Result<(), Error> {
    let to_io = |e: gix::Error| io::Error::other(e.to_string());
    let commit = repo.find_commit(tip).map_err(to_io)?;
    let tree = commit.tree().map_err(to_io)?;
    let mut head = vec![tip, tree.id];
    for name in HEAD_BLOBS {
        let entry = tree
            .find_entry(name)
            .ok_or_else(|| not_artifact(format!("its tree has no '{name}'")))?;
        // `origins` is often `fingerprint` itself (a session that changed nothing it saw): one
        // object goes into a pack once, or `git verify-pack` refuses the pack.
        if !head.contains(&entry.object_id()) {
            head.push(entry.object_id());
        }
    }
    let ids = objects_to_pack(repo, tip, &head).map_err(to_io)?;
    let mut rest = PackObjects::spawn(repo, &ids[head.len()..], progress)?;
    // git's pack header says how many entries it holds; the total goes in ours.
    let mut git_header = [0u8; 12];
    rest.stdout.read_exact(&mut git_header)?;
    if &git_header[..4] != b"PACK" {
        return Err(io::Error::other("git pack-objects wrote no pack").into());
    }
    let rest_count = u32::from_be_bytes(git_header[8..12].try_into().expect("4 bytes"));

    write!(out, "# v2 git bundle\n{tip} {refname}\n\n")?;
    let mut hasher = gix::hash::hasher(repo.object_hash());
    let mut emit = |out: &mut dyn Write, bytes: &[u8]| -> io::Result<()> {
        hasher.update(bytes);
        out.write_all(bytes)
    };
    let count = u32::try_from(head.len()).expect("at most five") + rest_count;
    let mut header = b"PACK\0\0\0\x02".to_vec();
    header.extend_from_slice(&count.to_be_bytes());
    emit(out, &header)?;
    for id in &head {
        let obj = repo.find_object(*id).map_err(to_io)?;
        emit(
            out,
            &crate::store::entry_header(obj.kind, obj.data.len() as u64),
        )?;
        let mut z =
            gix_zlib::stream::deflate::Write::new(Vec::new(), gix_zlib::Compression::DEFAULT);
        z.write_all(&obj.data)?;
        z.flush()?;
        emit(out, &z.into_inner())?;
    }
    // git's entries stream through, all but its own 20-byte trailer, which covers its header.
    let trailer_len = repo.object_hash().len_in_bytes();
    let mut buf = vec![0u8; 256 * 1024];
    let mut held = 0usize;
    loop {
        let n = rest.stdout.read(&mut buf[held..])?;
        if n == 0 {
            break;
        }
        held += n;
        if held > trailer_len {
            emit(out, &buf[..held - trailer_len])?;
            buf.copy_within(held - trailer_len..held, 0);
            held = trailer_len;
        }
    }
    rest.finish()?;
    if held != trailer_len {
        return Err(io::Error::other("git pack-objects wrote a truncated pack").into());
    }
    let trailer = hasher
        .try_finalize()
        .map_err(|e| io::Error::other(e.to_string()))?;
    out.write_all(trailer.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// A pack of exactly the objects given, streamed by stock `git pack-objects`: it reuses the
/// store's compressed and deltified data, where compressing every object again cost 4.8× `git
/// bundle create` on 50 MB. Its entries follow the head's; their delta offsets are relative, so
/// they stay valid. One thread keeps the bytes the same run to run.
struct PackObjects {
    child: std::process::Child,
    stdout: std::process::ChildStdout,
    writer: std::thread::JoinHandle<io::Result<()>>,
}

impl PackObjects {
    fn spawn(repo: &gix::Repository, ids: &[ObjectId], progress: bool) -> io::Result<PackObjects> {
        use std::process::Stdio;
        // Killed with Stella (as every git Stella starts): a pack nobody reads is work for nobody.
        let mut child = crate::store::git_command(repo.git_dir())
            .args([
                "-c",
                "pack.threads=1",
                "-c",
                crate::store::BIG_FILE_THRESHOLD,
            ])
            .args(["pack-objects", "--stdout"])
            .arg(if progress { "--progress" } else { "-q" })
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if progress {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .spawn()?;
        let mut list = String::with_capacity(ids.len() * 41);
        for id in ids {
            list.push_str(&id.to_string());
            list.push('\n');
        }
        let mut stdin = child.stdin.take().expect("piped");
        let writer = std::thread::spawn(move || stdin.write_all(list.as_bytes()));
        let stdout = child.stdout.take().expect("piped");
        // A 1 MiB pipe (Linux's default ceiling for one) moves the pack in a sixteenth of the
        // reads and context switches of the default 64 KiB; where it cannot grow, nothing changes.
        #[cfg(target_os = "linux")]
        let _ = rustix::pipe::fcntl_setpipe_size(&stdout, 1 << 20);
        Ok(PackObjects {
            child,
            stdout,
            writer,
        })
    }

    fn finish(mut self) -> io::Result<()> {
        self.writer
            .join()
            .map_err(|_| io::Error::other("writing to git pack-objects failed"))??;
        let status = self.child.wait()?;
        if status.success() {
            Ok(())
        } else {
            Err(io::Error::other(format!(
                "git pack-objects failed: {status}"
            )))
        }
    }
}

/// What the head of an artifact says: the tip, its manifest, fingerprint and origins, read from a
/// bundle whose every byte was checked first (see [`read_head`]).
#[derive(Clone, Debug)]
pub struct Head {
    pub refname: String,
    pub tip: ObjectId,
    pub tree: ObjectId,
    pub manifest: Manifest,
    pub manifest_text: String,
    pub fingerprint: Vec<(RelPath, Digest)>,
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
    File(PathBuf),
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
    pub head: Head,
    /// The file named; for a ref, a bundle Stella packed from it, and for a pipe, a copy of what
    /// came through it, each in a private temporary folder that lives as long as this value.
    pub file: PathBuf,
    _packed: Option<tempfile::TempDir>,
}

/// Pack the checkpoint ref `name` of `repo` into a bundle in a private temporary folder, as
/// `checkpoint` writes one; the bundle's path, and the folder, which is removed when dropped.
/// [`Source::open`] reads it back like any file: a ref and a file meet the same checks.
pub fn pack_ref(repo: &gix::Repository, name: &str) -> Result<(PathBuf, tempfile::TempDir), Error> {
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

/// What a streaming read found: the head, and what ran alongside the check of the pack.
enum Streamed<T> {
    Head(Box<Head>, Option<T>),
    /// The pack is not in Stella's order: its head must be looked up, not read in passing.
    OtherOrder,
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

/// The pack's checksum, computed on a second thread while the reading thread inflates: hashing
/// every byte on the reading thread doubled what reading the pack costs.
///
/// The trailer is a checksum of the bytes, not an object's name, so plain SHA-1 checks it (the
/// `sha1` crate, with the CPU's SHA instructions where there are some): git's collision-detecting
/// SHA-1, which names objects, was 60% of `verify`'s time here. Objects are still named, and
/// checked, with git's.
struct Checksum {
    pending: Vec<u8>,
    chunks: Option<std::sync::mpsc::SyncSender<Vec<u8>>>,
    worker: Option<std::thread::JoinHandle<sha1::Sha1>>,
}

impl Checksum {
    const CHUNK: usize = 1 << 20;

    /// A checksum of a pack whose objects are named with `kind`, which must be SHA-1: this
    /// build reads no other.
    fn new(kind: gix::hash::Kind) -> Checksum {
        debug_assert_eq!(kind, gix::hash::Kind::Sha1);
        // A few chunks in flight bound the memory; the reader waits when the hasher lags.
        let (chunks, receive) = std::sync::mpsc::sync_channel::<Vec<u8>>(4);
        let worker = std::thread::spawn(move || {
            use sha1::Digest as _;
            let mut hasher = sha1::Sha1::new();
            for chunk in receive {
                hasher.update(&chunk);
            }
            hasher
        });
        Checksum {
            pending: Vec::with_capacity(Self::CHUNK),
            chunks: Some(chunks),
            worker: Some(worker),
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        if self.pending.len() >= Self::CHUNK {
            self.send();
        }
    }

    fn send(&mut self) {
        let full = std::mem::replace(&mut self.pending, Vec::with_capacity(Self::CHUNK));
        if let Some(chunks) = &self.chunks {
            // The worker only stops when the channel closes.
            let _ = chunks.send(full);
        }
    }

    fn finish(mut self) -> Result<ObjectId, Error> {
        self.send();
        self.chunks = None;
        let hasher = self
            .worker
            .take()
            .expect("finished once")
            .join()
            .map_err(|_| corrupt("the pack could not be hashed"))?;
        use sha1::Digest as _;
        ObjectId::try_from(hasher.finalize().as_slice())
            .map_err(|e| corrupt(format!("the pack could not be hashed: {e}")))
    }
}

/// The pack as it streams by: every byte handed out is hashed for the trailing checksum, and
/// counted.
struct Tap<'a, R> {
    inner: &'a mut io::BufReader<R>,
    hasher: Checksum,
    /// Bytes of the pack handed out so far.
    pos: u64,
}

impl<R: Read> Read for Tap<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = {
            let available = self.fill_buf()?;
            let n = available.len().min(buf.len());
            buf[..n].copy_from_slice(&available[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl<R: Read> BufRead for Tap<'_, R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        self.hasher.update(&self.inner.buffer()[..n]);
        self.pos += n as u64;
        self.inner.consume(n);
    }
}

/// What a pack entry holds, as its header says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stored {
    Whole(gix::objs::Kind),
    /// A delta against the entry that many bytes before this one.
    OffsetDelta(u64),
    /// A delta against the object of a given id.
    RefDelta,
}

/// Walks a pack entry by entry, checking each as it goes.
struct PackReader<'a, R> {
    tap: Tap<'a, R>,
    hash: gix::hash::Kind,
    count: u32,
    /// Entries begun so far.
    index: u32,
    /// Where each entry begun so far starts in the pack, ascending.
    starts: Vec<u64>,
    zlib: gix_zlib::Decompress,
    /// Where entries inflate to when their bytes are not kept.
    scratch: Vec<u8>,
}

impl<R: Read> PackReader<'_, R> {
    /// Begin the next entry: what it holds and how many bytes it inflates to.
    fn next_entry(&mut self) -> Result<(Stored, u64), Error> {
        self.index += 1;
        self.starts.push(self.tap.pos);
        let (index, count) = (self.index, self.count);
        let ends = || corrupt(format!("the file ends inside object {index} of {count}"));
        let r = &mut self.tap;
        let mut byte = [0u8; 1];
        r.read_exact(&mut byte).map_err(|_| ends())?;
        let type_id = (byte[0] >> 4) & 0b111;
        let mut size = u64::from(byte[0] & 0b1111);
        let mut shift = 4;
        while byte[0] & 0x80 != 0 {
            r.read_exact(&mut byte).map_err(|_| ends())?;
            if shift > 57 {
                return Err(corrupt(format!(
                    "object {index} of {count} has a malformed size"
                )));
            }
            size |= u64::from(byte[0] & 0x7f) << shift;
            shift += 7;
        }
        let stored = match type_id {
            1 => Stored::Whole(gix::objs::Kind::Commit),
            2 => Stored::Whole(gix::objs::Kind::Tree),
            3 => Stored::Whole(gix::objs::Kind::Blob),
            4 => Stored::Whole(gix::objs::Kind::Tag),
            6 => {
                // git's offset encoding: base 128, big-endian, each continuation adding one.
                r.read_exact(&mut byte).map_err(|_| ends())?;
                let mut offset = u64::from(byte[0] & 0x7f);
                while byte[0] & 0x80 != 0 {
                    r.read_exact(&mut byte).map_err(|_| ends())?;
                    if offset > u64::MAX >> 8 {
                        return Err(corrupt(format!(
                            "object {index} of {count} has a malformed delta offset"
                        )));
                    }
                    offset = ((offset + 1) << 7) | u64::from(byte[0] & 0x7f);
                }
                let start = self.starts[self.starts.len() - 1];
                let base = start.checked_sub(offset);
                if base.is_none_or(|b| self.starts.binary_search(&b).is_err()) {
                    return Err(corrupt(format!(
                        "object {index} of {count} is a delta against a place in the pack where no object starts"
                    )));
                }
                Stored::OffsetDelta(offset)
            }
            7 => {
                let mut id = vec![0u8; self.hash.len_in_bytes()];
                r.read_exact(&mut id).map_err(|_| ends())?;
                Stored::RefDelta
            }
            t => {
                return Err(corrupt(format!(
                    "object {index} of {count} has the unknown type {t}"
                )));
            }
        };
        Ok((stored, size))
    }

    /// Inflate the current entry's data whole: it must be one complete zlib stream of exactly
    /// `size` bytes. Kept in `keep` when given.
    fn inflate(&mut self, size: u64, mut keep: Option<&mut Vec<u8>>) -> Result<(), Error> {
        use gix_zlib::{FlushDecompress, Status};
        let (index, count) = (self.index, self.count);
        let (state, scratch) = (&mut self.zlib, &mut self.scratch);
        state.reset();
        let mut produced = 0u64;
        loop {
            let (status, consumed, written, eof) = {
                let input = self.tap.fill_buf()?;
                let eof = input.is_empty();
                let (in0, out0) = (state.total_in(), state.total_out());
                let flush = if eof {
                    FlushDecompress::Finish
                } else {
                    FlushDecompress::None
                };
                let status = state.decompress(input, scratch, flush).map_err(|_| {
                    corrupt(format!(
                        "object {index} of {count} does not inflate ({})",
                        state.error_message().unwrap_or("corrupt deflate stream")
                    ))
                })?;
                (
                    status,
                    (state.total_in() - in0) as usize,
                    (state.total_out() - out0) as usize,
                    eof,
                )
            };
            self.tap.consume(consumed);
            produced += written as u64;
            if produced > size {
                return Err(corrupt(format!(
                    "object {index} of {count} inflates to more than the {size} bytes its header says"
                )));
            }
            if let Some(keep) = keep.as_deref_mut() {
                keep.extend_from_slice(&scratch[..written]);
            }
            match status {
                Status::StreamEnd => break,
                _ if eof => {
                    return Err(corrupt(format!(
                        "the file ends inside object {index} of {count}"
                    )));
                }
                _ if consumed == 0 && written == 0 => {
                    return Err(corrupt(format!(
                        "object {index} of {count} does not inflate"
                    )));
                }
                _ => {}
            }
        }
        if produced != size {
            return Err(corrupt(format!(
                "object {index} of {count} inflates to {produced} bytes where its header says {size}"
            )));
        }
        Ok(())
    }

    /// The next entry as a head object: whole, of `kind`, hashing to `expected`. `None` when it is
    /// anything else, which a pack in another order gives.
    fn head_object(
        &mut self,
        expected: ObjectId,
        kind: gix::objs::Kind,
    ) -> Result<Option<Vec<u8>>, Error> {
        if self.index >= self.count {
            return Ok(None);
        }
        let (stored, size) = self.next_entry()?;
        if stored != Stored::Whole(kind) {
            return Ok(None);
        }
        if size > MAX_HEAD_OBJECT {
            // A large file may open a pack in another order; a commit or tree that large is a
            // hostile claim, refused before anything is allocated for it.
            if kind == gix::objs::Kind::Blob {
                return Ok(None);
            }
            return Err(not_artifact(format!(
                "a head object claims {size} bytes, more than an artifact's head may hold"
            )));
        }
        let mut data = Vec::with_capacity(size as usize);
        self.inflate(size, Some(&mut data))?;
        let id = gix::objs::compute_hash(expected.kind(), kind, &data)
            .map_err(|_| not_artifact("an object could not be hashed"))?;
        Ok((id == expected).then_some(data))
    }

    /// Every remaining entry inflated whole, then the trailing checksum against every byte of
    /// the pack before it, then the end of the file.
    fn check_rest(mut self) -> Result<(), Error> {
        while self.index < self.count {
            let (_, size) = self.next_entry()?;
            self.inflate(size, None)?;
        }
        let Tap { inner, hasher, .. } = self.tap;
        let computed = hasher.finish()?;
        let mut trailer = vec![0u8; self.hash.len_in_bytes()];
        inner
            .read_exact(&mut trailer)
            .map_err(|_| corrupt("the file ends before the pack's checksum"))?;
        if trailer != computed.as_bytes() {
            let said: String = trailer.iter().map(|b| format!("{b:02x}")).collect();
            return Err(corrupt(format!(
                "the pack's checksum is wrong: it says {said}, its bytes hash to {computed}"
            )));
        }
        if !inner.fill_buf()?.is_empty() {
            return Err(corrupt("bytes follow the pack's checksum"));
        }
        Ok(())
    }
}

/// Read a bundle in Stella's order in one pass (see [`read_head`]).
fn read_streaming<T: Send>(
    reader: impl Read,
    alongside: &mut Option<impl FnOnce(&Head) -> T + Send>,
) -> Result<Streamed<T>, Error> {
    let mut r = io::BufReader::with_capacity(256 * 1024, reader);
    let (refname, tip) = read_bundle_header(&mut r)?;
    let hash = tip.kind();
    let mut tap = Tap {
        inner: &mut r,
        hasher: Checksum::new(hash),
        pos: 0,
    };
    let (_, count) = read_pack_header(&mut tap)?;
    let mut pack = PackReader {
        tap,
        hash,
        count,
        index: 0,
        starts: Vec::new(),
        zlib: gix_zlib::Decompress::default(),
        scratch: vec![0u8; 256 * 1024],
    };
    let Some(commit) = pack.head_object(tip, gix::objs::Kind::Commit)? else {
        return Ok(Streamed::OtherOrder);
    };
    let tree_id = gix::objs::CommitRef::from_bytes(&commit, hash)
        .map_err(|_| not_artifact("the tip commit does not parse"))?
        .tree();
    let Some(tree) = pack.head_object(tree_id, gix::objs::Kind::Tree)? else {
        return Ok(Streamed::OtherOrder);
    };
    let entries = head_entries(&tree, hash)?;
    let mut blobs: Vec<Vec<u8>> = Vec::new();
    for (i, id) in entries.iter().enumerate() {
        let Some(id) = *id else {
            return Ok(Streamed::OtherOrder);
        };
        // A blob the head carried already is not carried again (artifacts written before
        // that was so carry it twice: the second copy is then one of the other entries).
        if let Some(same) = entries[..i].iter().position(|e| *e == Some(id)) {
            blobs.push(blobs[same].clone());
            continue;
        }
        let Some(blob) = pack.head_object(id, gix::objs::Kind::Blob)? else {
            return Ok(Streamed::OtherOrder);
        };
        blobs.push(blob);
    }
    let [manifest, fingerprint, origins] = <[Vec<u8>; 3]>::try_from(blobs).expect("three");
    // Read now, so `alongside` can start; surfaced only after the pack checked out.
    let parsed = parse_head(
        refname,
        tip,
        tree_id,
        [Some(manifest), Some(fingerprint), Some(origins)],
        count,
    );
    let (checked, done) = std::thread::scope(|scope| {
        let work = match &parsed {
            Ok(head) => alongside.take().map(|work| scope.spawn(move || work(head))),
            Err(_) => None,
        };
        let checked = pack.check_rest();
        let done = work.map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        (checked, done)
    });
    checked?;
    Ok(Streamed::Head(Box::new(parsed?), done))
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

/// The head's three blobs, by name, in the tip tree: `stella.toml`, `fingerprint`, `origins`.
const HEAD_BLOBS: [&str; 3] = ["stella.toml", "fingerprint", "origins"];

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

/// Read a bundle in any order: stock `git index-pack` indexes its pack in a private temporary
/// repository (checking the pack's checksum and every object it carries), `git rev-list` checks
/// that the tip's history is all there, and the head is looked up by name.
fn read_indexed(path: &Path) -> Result<Head, Error> {
    use std::process::Stdio;
    let mut r = io::BufReader::with_capacity(256 * 1024, std::fs::File::open(path)?);
    let (refname, tip) = read_bundle_header(&mut r)?;
    let (header, count) = read_pack_header(&mut r)?;
    let dir = tempfile::Builder::new()
        .prefix("stella-artifact-")
        .tempdir()?;
    // The scratch repository is the only one git may touch: none of the caller's.
    let git = |args: &[&str]| {
        let mut cmd = crate::store::git_command(dir.path());
        cmd.args(args).stdout(Stdio::null()).stderr(Stdio::piped());
        cmd
    };
    let said = |stderr: &[u8]| {
        let said = String::from_utf8_lossy(stderr);
        said.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ")
    };
    let format = format!("--object-format={}", tip.kind());
    let out = git(&["init", "-q", "--bare", &format])
        .stdin(Stdio::null())
        .output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!("git init failed: {}", said(&out.stderr))).into());
    }
    let mut child = git(&["index-pack", "--stdin"])
        .stdin(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().expect("piped");
    // A refusal closes the pipe early; git's message says why, not the broken pipe.
    let copied = stdin
        .write_all(&header)
        .and_then(|()| io::copy(&mut r, &mut stdin).map(drop));
    drop(stdin);
    let out = child.wait_with_output()?;
    if !out.status.success() {
        return Err(corrupt(format!(
            "git index-pack says: {}",
            said(&out.stderr)
        )));
    }
    copied?;
    let repo = gix::open_opts(dir.path(), gix::open::Options::isolated())
        .map_err(|e| io::Error::other(e.to_string()))?;
    let commit = match repo.find_object(tip) {
        Ok(object) if object.kind == gix::objs::Kind::Commit => object.into_commit(),
        Ok(object) => {
            return Err(not_artifact(format!(
                "the bundle's tip is a {}, not a commit",
                object.kind
            )));
        }
        Err(_) => {
            return Err(corrupt(format!(
                "the bundle names its tip {tip}, which its pack does not hold"
            )));
        }
    };
    let out = git(&["rev-list", "--objects", "--quiet", &tip.to_string()])
        .stdin(Stdio::null())
        .output()?;
    if !out.status.success() {
        return Err(corrupt(format!(
            "its pack lacks objects the tip's history needs: {}",
            said(&out.stderr)
        )));
    }
    let tree = commit
        .tree()
        .map_err(|_| not_artifact("the tip commit does not parse"))?;
    let mut blobs = [None, None, None];
    for ((blob, id), name) in blobs
        .iter_mut()
        .zip(head_entries(&tree.data, tip.kind())?)
        .zip(HEAD_BLOBS)
    {
        if let Some(id) = id {
            let size = repo
                .find_header(id)
                .map_err(|_| corrupt(format!("its pack lacks the object {id}")))?
                .size();
            if size > MAX_HEAD_OBJECT {
                return Err(not_artifact(format!(
                    "its '{name}' holds {size} bytes, more than an artifact's head may hold"
                )));
            }
            let object = repo
                .find_object(id)
                .map_err(|_| corrupt(format!("its pack lacks the object {id}")))?;
            *blob = Some(object.detach().data);
        }
    }
    parse_head(refname, tip, tree.id, blobs, count)
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

/// Refuse a format outside the support window, naming who reads it.
pub fn check_format(format: u32) -> Result<(), Error> {
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
