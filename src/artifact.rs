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
//! The pack must begin with the tip commit, its tree, `stella.toml`, `fingerprint` and `origins`,
//! stored whole, so `inspect`, `verify` and replay's checks read only the head of the file; `git
//! bundle create` orders every commit of the history first. So Stella writes those five entries
//! itself and appends the rest as stock `git pack-objects` packs it (reusing the store's
//! compressed data: recompressing 50 MB in-process measured 4.8× `git bundle create`). An
//! unchanged session gives identical bytes; the cost against `git bundle create` is in `bench/`.
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

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::object::tree::EntryKind;
use serde::{Deserialize, Serialize};

use crate::digest::Digest;
use crate::journal::layout::{self, HostFile, SessionFile};
use crate::journal::{Entry, RootFile, Seen};
use crate::paths::RelPath;
use crate::session::{Context, format_time};

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

/// One replay the session descends from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// The session the artifact was made from.
    pub session: String,
    /// BLAKE3 of the artifact file.
    pub artifact: String,
    /// The base commit of that artifact, if any.
    pub base: Option<String>,
    /// When it was replayed.
    pub replayed: String,
}

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
    #[error("could not read the artifact")]
    Io(#[from] io::Error),
    /// Writing the artifact out failed (a full disk, a closed pipe): what was written is not an
    /// artifact.
    #[error("could not write the artifact")]
    Write(#[source] io::Error),
    #[error(transparent)]
    Session(#[from] crate::session::Error),
}

impl From<crate::store::Error> for Error {
    fn from(e: crate::store::Error) -> Self {
        Error::Session(e.into())
    }
}

impl From<crate::journal::Error> for Error {
    fn from(e: crate::journal::Error) -> Self {
        Error::Session(e.into())
    }
}

fn not_artifact(why: impl Into<String>) -> Error {
    Error::NotAnArtifact { why: why.into() }
}

/// What `checkpoint` wrote.
#[derive(Debug)]
pub struct Checkpoint {
    pub tip: ObjectId,
    pub manifest: Manifest,
    pub paths: usize,
    /// Host transcript files that were not taken, and why: the caller should say so.
    pub skipped_transcripts: Vec<SkippedTranscript>,
}

/// A host transcript file `checkpoint` did not read (not a regular file, or too large: see
/// [`crate::turn::read_transcript_file`]).
#[derive(Debug)]
pub struct SkippedTranscript {
    /// The path the host named.
    pub path: String,
    pub why: crate::turn::TranscriptFileError,
    /// Whether the artifact carries the copy the journal last stored under that name instead.
    pub stored_copy: bool,
}

/// A fingerprint or origins line: `<hex>  <path>` as `b3sum` prints it, escaping `\` and newlines
/// in the path the same way (the line then starts with `\`).
fn sum_line(digest: Option<Digest>, path: &RelPath) -> Vec<u8> {
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

impl Context {}

impl Context {}

fn turn_err(e: crate::turn::TurnError) -> Error {
    match e {
        crate::turn::TurnError::Session(s) => Error::Session(s),
        other => Error::Io(io::Error::other(other.to_string())),
    }
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
/// pack starts with the tip commit, its tree, `stella.toml`, `fingerprint` and `origins`, then
/// the rest of the history, every object stored whole, never descending into gitlinks.
///
/// [`Context::checkpoint`] builds the tip and calls this; it is public for tools (and tests)
/// that assemble an artifact's commit themselves.
pub fn write_bundle(
    repo: &gix::Repository,
    refname: &str,
    tip: ObjectId,
    out: &mut dyn Write,
) -> Result<(), Error> {
    let to_io = |e: gix::Error| io::Error::other(e.to_string());
    let commit = repo.find_commit(tip).map_err(to_io)?;
    let tree = commit.tree().map_err(to_io)?;
    let mut head = vec![tip, tree.id];
    for name in ["stella.toml", "fingerprint", "origins"] {
        let entry = tree
            .find_entry(name)
            .ok_or_else(|| not_artifact(format!("its tree has no '{name}'")))?;
        head.push(entry.object_id());
    }
    let ids = objects_to_pack(repo, tip, &head).map_err(to_io)?;
    let mut rest = PackObjects::spawn(repo, &ids[head.len()..])?;
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
    let count = u32::try_from(head.len()).expect("five") + rest_count;
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
    fn spawn(repo: &gix::Repository, ids: &[ObjectId]) -> io::Result<PackObjects> {
        use std::process::{Command, Stdio};
        // Killed with Stella: a pack nobody reads is work for nobody.
        let mut child = crate::child::die_with_parent(
            Command::new("git")
                .arg("--git-dir")
                .arg(repo.git_dir())
                .args(["-c", "pack.threads=1", "pack-objects", "--stdout", "-q"])
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null()),
        )
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

/// What the head of an artifact says, read without the rest of the file.
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

/// Read an artifact's head: the bundle header, then the tip commit, its tree, `stella.toml`,
/// `fingerprint` and `origins` from the start of the pack, each checked against the id that names
/// it. Refuses anything that is not a Stella artifact of a format this build reads.
pub fn read_head(reader: impl Read) -> Result<Head, Error> {
    let mut r = io::BufReader::with_capacity(64 * 1024, reader);
    let mut line = Vec::new();
    let read_line = |r: &mut io::BufReader<_>, line: &mut Vec<u8>| -> Result<(), Error> {
        line.clear();
        r.by_ref().take(4096).read_until(b'\n', line)?;
        if line.is_empty() {
            return Err(not_artifact(
                "the file ends where a git bundle header belongs",
            ));
        }
        if line.last() != Some(&b'\n') {
            return Err(not_artifact("it is not a git bundle"));
        }
        line.pop();
        Ok(())
    };
    read_line(&mut r, &mut line)?;
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
        read_line(&mut r, &mut line)?;
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
    let [(tip, refname)] = refs.as_slice() else {
        return Err(not_artifact(format!(
            "the bundle holds {} refs; an artifact holds exactly one under {CHECKPOINTS}",
            refs.len()
        )));
    };
    if !refname.starts_with(CHECKPOINTS) {
        return Err(not_artifact(format!(
            "the bundle's ref is '{refname}', not one under {CHECKPOINTS}: it is a plain git bundle"
        )));
    }
    let mut header = [0u8; 12];
    r.read_exact(&mut header)
        .map_err(|_| not_artifact("the pack is truncated"))?;
    if &header[..4] != b"PACK" || header[4..8] != [0, 0, 0, 2] {
        return Err(not_artifact("the bundle does not hold a version 2 pack"));
    }
    let objects = u32::from_be_bytes(header[8..12].try_into().expect("4 bytes"));
    if objects < 5 {
        return Err(not_artifact("the pack is too small to hold an artifact"));
    }
    let kind = tip.kind();
    let commit = read_object(&mut r, *tip, gix::objs::Kind::Commit)?;
    let commit = gix::objs::CommitRef::from_bytes(&commit, kind)
        .map_err(|_| not_artifact("the tip commit does not parse"))?;
    let tree_id = commit.tree();
    let tree_bytes = read_object(&mut r, tree_id, gix::objs::Kind::Tree)?;
    let tree = gix::objs::TreeRef::from_bytes(&tree_bytes, kind)
        .map_err(|_| not_artifact("the tip tree does not parse"))?;
    let id_of = |name: &str| {
        tree.entries
            .iter()
            .find(|e| e.filename == name.as_bytes().as_bstr() && e.mode.is_blob())
            .map(|e| e.oid.to_owned())
            .ok_or_else(|| not_artifact(format!("its tree has no '{name}'")))
    };
    let (manifest_id, fingerprint_id, origins_id) = (
        id_of("stella.toml")?,
        id_of("fingerprint")?,
        id_of("origins")?,
    );
    let manifest_bytes = read_object(&mut r, manifest_id, gix::objs::Kind::Blob)?;
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
    let fingerprint = read_object(&mut r, fingerprint_id, gix::objs::Kind::Blob)?;
    let fingerprint = parse_sums(&fingerprint)?
        .into_iter()
        .map(|(p, d)| {
            d.map(|d| (p, d))
                .ok_or_else(|| not_artifact("the fingerprint has a line without a digest"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let origins = parse_sums(&read_object(&mut r, origins_id, gix::objs::Kind::Blob)?)?;
    Ok(Head {
        refname: refname.clone(),
        tip: *tip,
        tree: tree_id,
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

/// Read the next pack entry, which must be a whole object of `kind` hashing to `expected`.
fn read_object(
    r: &mut impl BufRead,
    expected: ObjectId,
    kind: gix::objs::Kind,
) -> Result<Vec<u8>, Error> {
    let truncated = || not_artifact("the pack is truncated");
    let mut byte = [0u8; 1];
    r.read_exact(&mut byte).map_err(|_| truncated())?;
    let type_id = (byte[0] >> 4) & 0b111;
    let mut size = u64::from(byte[0] & 0b1111);
    let mut shift = 4;
    while byte[0] & 0x80 != 0 {
        r.read_exact(&mut byte).map_err(|_| truncated())?;
        if shift > 56 {
            return Err(not_artifact("a pack entry's size is malformed"));
        }
        size |= u64::from(byte[0] & 0x7f) << shift;
        shift += 7;
    }
    let found = match type_id {
        1 => gix::objs::Kind::Commit,
        2 => gix::objs::Kind::Tree,
        3 => gix::objs::Kind::Blob,
        4 => gix::objs::Kind::Tag,
        _ => {
            return Err(not_artifact(
                "its head is not stored whole (a delta or an unknown entry where the format puts the tip)",
            ));
        }
    };
    if found != kind {
        return Err(not_artifact(format!(
            "the pack does not start with the artifact's head (found a {found} where a {kind} belongs)"
        )));
    }
    if size > MAX_HEAD_OBJECT {
        return Err(not_artifact(format!(
            "a head object claims {size} bytes, more than an artifact's head may hold"
        )));
    }
    let mut data = vec![0u8; size as usize];
    let mut state = gix_zlib::Decompress::default();
    let n = gix_zlib::stream::inflate::read(r, &mut state, &mut data)
        .map_err(|_| not_artifact("a pack entry is corrupt"))?;
    // Drain the end of the zlib stream; any byte beyond the claimed size is corruption.
    let extra = gix_zlib::stream::inflate::read(r, &mut state, &mut [0u8; 1])
        .map_err(|_| not_artifact("a pack entry is corrupt"))?;
    if n != data.len() || extra != 0 {
        return Err(not_artifact("a pack entry's size does not match its data"));
    }
    let id = gix::objs::compute_hash(expected.kind(), kind, &data)
        .map_err(|_| not_artifact("an object could not be hashed"))?;
    if id != expected {
        return Err(not_artifact(format!(
            "an object in its head is not the one its tree names ({id} where {expected} belongs)"
        )));
    }
    Ok(data)
}

impl crate::session::Session<'_> {
    /// Pack session `id` into an artifact written to `out`.
    ///
    /// See the [module docs](self) for the format and the contents warning: the bytes written
    /// carry everything the session read, secrets included. The checkpoint commit takes its dates
    /// from the session's last step, so an unchanged session gives identical bytes. Where the
    /// artifact goes next (storage, access, retention) is the caller's business.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use stella::session::Context;
    /// use stella::workspace::Settings;
    /// # let tmp = tempfile::tempdir()?;
    /// # let repo = tmp.path().join("repo");
    /// # assert!(std::process::Command::new("git").args(["init", "-q"]).arg(&repo).status()?.success());
    /// # std::fs::write(repo.join("notes.txt"), "alpha\n")?;
    /// let settings = Settings::new(tmp.path().join("stella-data"));
    /// let (ctx, _notices) = Context::open(&settings, &repo)?;
    /// let id = ctx.start_session(None)?;
    /// let notes = ctx.resolve(&repo, "notes.txt".as_ref())?;
    /// let session = ctx.session(&id);
    /// session.read(&[notes])?;
    ///
    /// let mut artifact = Vec::new();
    /// session.checkpoint(&mut artifact)?;
    /// let head = stella::artifact::read_head(&artifact[..])?;
    /// assert_eq!(head.manifest.session, id.as_str());
    /// assert_eq!(head.fingerprint.len(), 1);
    /// # Ok(()) }
    /// ```
    pub fn checkpoint(&self, out: &mut dyn Write) -> Result<Checkpoint, Error> {
        let id = self.id;
        let journal = self.ctx.journal();
        let tip = journal.tip(id)?;
        let entries = journal.entries(id)?;
        let repo = self.ctx.store.repo()?;
        let git = |op| self.ctx.store.git_err(op);

        let session: SessionFile = journal
            .root_toml(id, &RootFile::Session)?
            .unwrap_or_default();
        let provenance = session.provenance.clone();

        let (base, object_format) = user_head(&self.ctx.ws);
        let mut editor = repo
            .edit_tree(ObjectId::empty_tree(repo.object_hash()))
            .map_err(git("build a tree"))?;
        let mut fingerprint = Vec::new();
        let mut origins = Vec::new();
        let mut needs_reread = Vec::new();
        for Entry {
            path,
            seen,
            origin,
            bytes,
            ..
        } in &entries
        {
            match seen {
                Seen::Digest(d) => fingerprint.extend(sum_line(Some(*d), path)),
                Seen::Reread => needs_reread.push(path.to_lossy().into_owned()),
            }
            origins.extend(sum_line(*origin, path));
            if let Some((blob, exec)) = bytes {
                let kind = if *exec {
                    EntryKind::BlobExecutable
                } else {
                    EntryKind::Blob
                };
                let mut name = b"files/".to_vec();
                name.extend_from_slice(path.as_bytes());
                editor
                    .upsert(name.as_bstr(), kind, *blob)
                    .map_err(git("build a tree"))?;
            }
        }
        // Transcripts: the host's file when the session knows it (hosts flush late), else the
        // last one the journal stored.
        let mut transcripts = BTreeMap::new();
        for name in self.transcript_names().map_err(turn_err)? {
            if let Some(bytes) = self.transcript(&name).map_err(turn_err)? {
                transcripts.insert(name, bytes);
            }
        }
        // A host names the file, so it may name anything: only a regular file within the cap is
        // read (a device would grow without end, a FIFO would hang); anything else is skipped and
        // reported, and a file that is not there (yet) is skipped quietly.
        let mut skipped_transcripts = Vec::new();
        for host_transcript in
            self.host_transcript_paths(session.transcript_path.as_deref().unwrap_or_default())?
        {
            let name = std::path::Path::new(&host_transcript)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "transcript".into());
            match crate::turn::read_transcript_file(host_transcript.as_ref()) {
                Ok(bytes) => {
                    transcripts.insert(name, bytes);
                }
                Err(e) if e.is_not_found() => {}
                Err(why) => skipped_transcripts.push(SkippedTranscript {
                    stored_copy: transcripts.contains_key(&name),
                    path: host_transcript,
                    why,
                }),
            }
        }
        let mut transcript_sizes = BTreeMap::new();
        for (name, bytes) in &transcripts {
            let blob = journal.write_blob(bytes)?;
            editor
                .upsert(format!("transcript/{name}"), EntryKind::Blob, blob)
                .map_err(git("build a tree"))?;
            transcript_sizes.insert(name.clone(), bytes.len() as u64);
        }
        let manifest = Manifest {
            format: FORMAT,
            session: id.to_string(),
            base: base.map_or("none".into(), |b| b.to_string()),
            object_format: object_format.to_string(),
            producer: format!("git-stella {}", env!("CARGO_PKG_VERSION")),
            started: session.started.clone(),
            last_step: format_time(tip.time),
            steps: tip.steps,
            needs_reread,
            transcripts: transcript_sizes,
            provenance,
        };
        let manifest_text = toml::to_string(&manifest).expect("the manifest serialises");
        let manifest_blob = journal.write_blob(manifest_text.as_bytes())?;
        let fingerprint_blob = journal.write_blob(&fingerprint)?;
        let origins_blob = journal.write_blob(&origins)?;
        for (name, blob) in [
            ("stella.toml", manifest_blob),
            ("fingerprint", fingerprint_blob),
            ("origins", origins_blob),
        ] {
            editor
                .upsert(name, EntryKind::Blob, blob)
                .map_err(git("build a tree"))?;
        }
        // A SHA-256 id does not fit a SHA-1 tree: then the base lives in stella.toml only.
        if let Some(base) = base.filter(|b| b.kind() == repo.object_hash()) {
            editor
                .upsert("base", EntryKind::Commit, base)
                .map_err(git("build a tree"))?;
        }
        // A tree or commit an earlier, interrupted checkpoint left broken on disk (its name
        // there, its bytes not) would be taken for the one written here: removed, written again.
        let mut tree = editor.write().map_err(git("write a tree"))?.detach();
        for _ in 0..64 {
            if !self.ctx.store.remove_leftover_trees(tree)? {
                break;
            }
            tree = editor.write().map_err(git("write a tree"))?.detach();
        }
        let sig = crate::store::signature(tip.time);
        let commit = gix::objs::Commit {
            tree,
            parents: [tip.commit].into_iter().collect(),
            author: sig.clone(),
            committer: sig,
            encoding: None,
            message: format!("checkpoint of session {id}\n").into(),
            extra_headers: Vec::new(),
        };
        let mut commit_id = repo
            .write_object(&commit)
            .map_err(git("write a commit"))?
            .detach();
        if self.ctx.store.remove_leftover(&commit_id)?.is_some() {
            commit_id = repo
                .write_object(&commit)
                .map_err(git("write a commit"))?
                .detach();
        }
        write_bundle(repo, &format!("{CHECKPOINTS}{id}"), commit_id, out).map_err(|e| match e {
            Error::Io(io) => Error::Write(io),
            e => e,
        })?;
        Ok(Checkpoint {
            tip: commit_id,
            manifest,
            paths: entries.len(),
            skipped_transcripts,
        })
    }

    /// The transcript files the session's hosts named (`transcript_path` in `session.toml` or in
    /// a host adapter's `hosts/<agent>.toml`): hosts flush late, so checkpoint reads them again.
    fn host_transcript_paths(&self, own: &str) -> Result<Vec<String>, Error> {
        let id = self.id;
        let mut out: Vec<String> = Some(own.to_owned())
            .filter(|p| !p.is_empty())
            .into_iter()
            .collect();
        let journal = self.ctx.journal();
        let tip = journal.tip(id)?;
        let repo = self.ctx.store.repo()?;
        let Ok(tree) = repo.find_tree(tip.tree) else {
            return Ok(out);
        };
        let Ok(Some(hosts)) = tree.lookup_entry_by_path(layout::HOSTS) else {
            return Ok(out);
        };
        let Ok(hosts) = repo.find_tree(hosts.object_id()) else {
            return Ok(out);
        };
        for e in hosts.iter().filter_map(Result::ok) {
            let Ok(blob) = repo.find_blob(e.oid()) else {
                continue;
            };
            let host: Option<HostFile> = layout::parse(&blob.data);
            out.extend(host.and_then(|h| h.transcript_path));
        }
        Ok(out)
    }
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
        for bytes in [
            &b""[..],
            b"garbage",
            b"# v3 git bundle\n@filter=x\n\n",
            b"# v2 git bundle\n",
        ] {
            assert!(matches!(read_head(bytes), Err(Error::NotAnArtifact { .. })));
        }
    }
}
