//! Replay: start a new session from an artifact, after checking that it belongs to this tree
//! (SPEC §6).
//!
//! - *apply* (the default) re-hashes every fingerprint path here; any mismatch refuses, and
//!   nothing is consumed (no session, no object imported).
//! - *materialize* first writes the session's files into the tree, but only over bytes whose loss
//!   loses nobody's work: absent, already the session's, where the session started, or the base
//!   commit's version. Everything is checked before the first file is written: every path, that
//!   no path is both a file and a folder of another, every file to write present in the artifact
//!   with the bytes its fingerprint names. Each write re-hashes its target just before the new
//!   file takes the name, and stops there if the target changed since it was checked.
//!
//! A successful replay starts a new session whose first journal commit has the artifact's tip as
//! parent and records the provenance; two replays of one artifact are two sessions with a common
//! ancestor. Nothing is ever merged.

use std::collections::HashSet;
use std::io;
use std::ops::ControlFlow;
use std::os::fd::OwnedFd;
use std::path::Path;

use gix::ObjectId;
use gix::bstr::ByteSlice;
use rustix::fs::{Mode, OFlags};

use crate::artifact::{self, Error, Head, Provenance};
use crate::digest::Digest;
use crate::fsutil;
use crate::guard::Disk;
use crate::ids::SessionId;
use crate::journal::Step;
use crate::journal::layout::SessionFile;
use crate::paths::RelPath;
use crate::report::Report;
use crate::session::{ArtifactError, Context};
use crate::text::format_time;

/// How a fingerprint path differs in this tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mismatch {
    /// The file here holds other bytes.
    Changed,
    /// There is no file here.
    Missing,
    /// The file could not be read, or resolves outside the workspace through a link.
    Unreadable,
}

impl Mismatch {
    /// As `replay` and `verify` show it: `changed`, `deleted` or `unreadable`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mismatch::Changed => "changed",
            Mismatch::Missing => "deleted",
            Mismatch::Unreadable => "unreadable",
        }
    }
}

/// Why materialize may not write a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocked {
    /// The path materialize would write.
    pub path: RelPath,
    /// Why it may not, in words for the person: whose work is there, or what is in the way.
    pub why: String,
}

/// How to replay.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Write the session's files into the tree first, where that loses nobody's work.
    pub materialize: bool,
    /// Start the session even where the fingerprint does not match this tree
    /// ([`Replayed::ignored`]).
    pub ignore_fingerprint: bool,
    /// The new session's id (minted when `None`); an existing id is an error.
    pub as_id: Option<SessionId>,
    /// With `materialize`: decide every path and say so ([`Outcome::Plan`]), writing, importing
    /// and starting nothing.
    pub dry_run: bool,
    /// git's progress lines on this process's stderr while the objects are imported.
    pub progress: bool,
}

/// What a materialize would do to one path it may write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Over {
    /// Nothing is there.
    Nothing,
    /// The bytes the session started from.
    Origin,
    /// The base commit's version.
    Base,
}

impl Over {
    /// As the dry run's plan says it: `absent here`, `holds the base commit's version`…
    pub fn as_str(self) -> &'static str {
        match self {
            Over::Nothing => "absent here",
            Over::Origin => "holds the bytes the session started from",
            Over::Base => "holds the base commit's version",
        }
    }
}

/// A replay that started a session.
#[derive(Clone, Debug)]
pub struct Replayed {
    /// The new session.
    pub id: SessionId,
    /// The artifact's head: its manifest, fingerprint and provenance.
    pub head: Head,
    /// `HEAD` here, when it is not the artifact's base commit.
    pub head_differs: Option<String>,
    /// Paths materialize wrote.
    pub written: Vec<RelPath>,
    /// Mismatched paths taken anyway with `ignore_fingerprint`; still guarded with the
    /// artifact's digests, so a write to them is refused until they are re-read.
    pub ignored: Vec<(RelPath, Mismatch)>,
}

/// What a replay did.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// A new session was started from the artifact.
    Started(Box<Replayed>),
    /// The fingerprint does not match this tree: nothing consumed.
    Mismatch(Vec<(RelPath, Mismatch)>),
    /// Materialize would overwrite someone's work (or write through a link): nothing written.
    Blocked(Vec<Blocked>),
    /// A path changed between its check and its write (someone wrote it meanwhile): it was left
    /// as it is and materialize stopped there, with no session started. `written` holds the
    /// files written before it, each over bytes whose loss lost nobody's work.
    Changed {
        /// The path that changed.
        path: RelPath,
        /// The paths written before it.
        written: Vec<RelPath>,
    },
    /// A dry run of materialize: the paths it would write (and what they hold now), those that
    /// already hold the session's bytes, and those it would refuse. Nothing was written,
    /// imported or started. The artifact was checked whole; its files are checked against its
    /// fingerprint only when it is really replayed.
    Plan {
        /// The paths it would write, each with what it holds now.
        write: Vec<(RelPath, Over)>,
        /// The paths that already hold the session's bytes.
        keep: Vec<RelPath>,
        /// The paths it would refuse to write.
        blocked: Vec<Blocked>,
    },
}

/// The paths a replay is to write, each with the digest of what it held when checked (`None`:
/// absent).
type ToWrite = Vec<(RelPath, Option<Digest>)>;

/// One file materialize writes: where, which blob, and what the target held when checked
/// (`None`: absent).
struct PlannedWrite {
    path: RelPath,
    blob: ObjectId,
    /// The digest of the blob's bytes, checked against the fingerprint.
    digest: Digest,
    exec: bool,
    checked: Option<Digest>,
}

/// Re-hash every fingerprint path under `root`; the paths that differ, and how. A path that
/// resolves outside the workspace through a link is unreadable here, never followed.
pub fn verify_in(root: &Path, head: &Head) -> Result<Vec<(RelPath, Mismatch)>, Error> {
    check_paths(head.fingerprint.iter().map(|(p, _)| p))?;
    let mut out = Vec::new();
    for (path, digest) in &head.fingerprint {
        let disk = match crate::paths::resolve(root, root, path.as_path()) {
            Ok(resolved) => Disk::probe(&resolved.under(root)),
            Err(_) => Disk::Unreadable("it resolves outside the workspace".into()),
        };
        let how = match disk {
            Disk::Present(d) if d == *digest => continue,
            Disk::Present(_) => Mismatch::Changed,
            Disk::Missing => Mismatch::Missing,
            Disk::Unreadable(_) => Mismatch::Unreadable,
        };
        out.push((path.clone(), how));
    }
    Ok(out)
}

/// Reject paths an artifact may never name: `.git` anywhere, `.stella` at the top, and two paths
/// that differ only in case (they would land on one file on a case-folding file system).
fn check_paths<'a>(paths: impl Iterator<Item = &'a RelPath>) -> Result<(), Error> {
    let mut folded = HashSet::new();
    for p in paths {
        let bad = |why: &str| Error::NotAnArtifact {
            why: format!("it names '{p}', {why}"),
        };
        if let Some(area) = crate::paths::private_area(p) {
            return Err(bad(&format!("a path inside {area}")));
        }
        if !folded.insert(p.as_bytes().to_ascii_lowercase()) {
            return Err(bad("which collides with another path when case is folded"));
        }
    }
    Ok(())
}

impl Context {
    /// Re-hash every fingerprint path in this tree; the paths that differ, and how.
    pub(crate) fn verify(&self, head: &Head) -> Result<Vec<(RelPath, Mismatch)>, Error> {
        verify_in(&self.ws.root, head)
    }

    /// Start a new session from an artifact: a file, or a checkpoint ref in this repository (see
    /// the [module docs](self)).
    ///
    /// The artifact is checked whole first (its pack's checksum, every object it carries): a
    /// damaged one is [`Error::Corrupt`] before any verdict, write or session.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use stella::session::replay::{Options, Outcome};
    /// use stella::session::Context;
    /// use stella::workspace::Settings;
    /// # let tmp = tempfile::tempdir()?;
    /// # let repo = tmp.path().join("repo");
    /// # assert!(std::process::Command::new("git").args(["init", "-q"]).arg(&repo).status()?.success());
    /// # std::fs::write(repo.join("notes.txt"), "alpha\n")?;
    /// # let settings = Settings::new(tmp.path().join("stella-data"));
    /// # let (ctx, _) = Context::open(&settings, &repo)?;
    /// # let session = ctx.start_session(None)?;
    /// # ctx.session(&session).read(&[ctx.resolve(&repo, "notes.txt".as_ref())?])?;
    /// # let artifact = tmp.path().join("session.stella.bundle");
    /// # ctx.session(&session).checkpoint(&mut std::fs::File::create(&artifact)?)?;
    /// // `artifact` came from `Session::checkpoint`, here or on another machine.
    /// match ctx.replay(&artifact, &Options::default())? {
    ///     Outcome::Started(replayed) => println!("new session {}", replayed.id),
    ///     Outcome::Mismatch(files) => println!("{} files differ here: nothing replayed", files.len()),
    ///     Outcome::Blocked(files) => println!("{} files hold someone's work", files.len()),
    ///     Outcome::Changed { path, .. } => println!("{path} changed while it was being written"),
    ///     Outcome::Plan { write, .. } => println!("a dry run: {} files to write", write.len()),
    /// }
    /// # Ok(()) }
    /// ```
    pub fn replay(
        &self,
        source: impl Into<artifact::Source>,
        options: &Options,
    ) -> Result<Outcome, ArtifactError> {
        let _span = tracing::debug_span!("replay", dry_run = options.dry_run).entered();
        if !options.dry_run {
            self.config()?;
        }
        let opened = source.into().open(|| self.ws.user_repo())?;
        let (head, file) = (opened.head.clone(), opened.file.as_path());
        let paths: Vec<&RelPath> = head.fingerprint.iter().map(|(p, _)| p).collect();
        check_paths(paths.iter().copied())?;
        if let Some(id) = &options.as_id
            && self.journal().try_tip(id)?.is_some()
        {
            return Err(crate::journal::Error::SessionExists { id: id.clone() }.into());
        }
        let base = head.manifest.base_commit().map(str::to_owned);
        let head_differs = self.head_differs(base.as_deref());
        let to_write = match self.decide_writes(&head, base.as_deref(), options)? {
            ControlFlow::Continue(to_write) => to_write,
            ControlFlow::Break(outcome) => return Ok(outcome),
        };

        // From here on the artifact is consumed: its objects enter the store.
        self.import(file, &head, options.progress)?;
        let files = self.artifact_files(&head)?;
        let writes = check_writes(&self.journal(), &head, &files, to_write)?;
        let mut written = Vec::new();
        if let Some(path) = self.write_checked(&writes, &mut written)? {
            return Ok(Outcome::Changed { path, written });
        }
        let mismatches = self.verify(&head)?;
        if !mismatches.is_empty() && !options.ignore_fingerprint {
            return Ok(Outcome::Mismatch(mismatches));
        }
        let id = self.start_replayed(&head, file, base, &files, options)?;
        Ok(Outcome::Started(Box::new(Replayed {
            id,
            head,
            head_differs,
            written,
            ignored: if options.ignore_fingerprint {
                mismatches
            } else {
                Vec::new()
            },
        })))
    }

    /// `HEAD` here, when it is not the artifact's base commit `base` (`None`: it had none).
    fn head_differs(&self, base: Option<&str>) -> Option<String> {
        let (here, _) = artifact::user_head(&self.ws);
        match (base, here) {
            (Some(b), Some(h)) if ObjectId::from_hex(b.as_bytes()).ok() == Some(h) => None,
            (None, None) => None,
            (_, h) => Some(h.map_or("an unborn branch".into(), |h| h.to_string())),
        }
    }

    /// The paths a replay is to write, each with what it held when checked (`None`: absent):
    /// with `materialize`, those it may write without losing anybody's work; else none, once the
    /// tree matches the fingerprint. `Break` with the outcome when the replay ends here, before
    /// anything is consumed: a dry run's plan, a blocked path, a mismatch.
    fn decide_writes(
        &self,
        head: &Head,
        base: Option<&str>,
        options: &Options,
    ) -> Result<ControlFlow<Outcome, ToWrite>, ArtifactError> {
        if !options.materialize {
            let mismatches = self.verify(head)?;
            if !mismatches.is_empty() && !options.ignore_fingerprint {
                return Ok(ControlFlow::Break(Outcome::Mismatch(mismatches)));
            }
            return Ok(ControlFlow::Continue(Vec::new()));
        }
        let mut planned = Vec::new();
        let mut keep = Vec::new();
        let blocked = self.plan_materialize(head, base, &mut planned, &mut keep)?;
        if options.dry_run {
            return Ok(ControlFlow::Break(Outcome::Plan {
                write: planned.into_iter().map(|(p, _, over)| (p, over)).collect(),
                keep,
                blocked,
            }));
        }
        if !blocked.is_empty() {
            return Ok(ControlFlow::Break(Outcome::Blocked(blocked)));
        }
        Ok(ControlFlow::Continue(
            planned.into_iter().map(|(p, d, _)| (p, d)).collect(),
        ))
    }

    /// Write each checked file into the tree, adding it to `written`; the path that changed
    /// between its check and its write, where materialize stopped (it is left as it is).
    fn write_checked(
        &self,
        writes: &[PlannedWrite],
        written: &mut Vec<RelPath>,
    ) -> Result<Option<RelPath>, ArtifactError> {
        // Nothing was written before this point; from here on only what was checked is.
        for w in writes {
            // Streamed from the store, hashed on the way: the bytes that take the name are the
            // ones checked against the fingerprint.
            let from = self.journal().blob_reader(w.blob)?;
            let root = &self.ws.root;
            let placed =
                crate::fsutil::replace_beneath_checked(root, &w.path, from, w.digest, || {
                    probe_beneath(root, &w.path).is_ok_and(|now| now == w.checked)
                })
                .map_err(|e| {
                    Error::Io(io::Error::new(
                        e.kind(),
                        format!("could not write '{}': {e}", w.path),
                    ))
                })?;
            if placed == crate::fsutil::Placed::Damaged {
                return Err(Error::Io(io::Error::other(format!(
                    "could not write '{}': the store gave other bytes than were checked",
                    w.path
                )))
                .into());
            }
            if placed == crate::fsutil::Placed::Declined {
                return Ok(Some(w.path.clone()));
            }
            set_executable(root, &w.path, w.exec).map_err(|e| {
                Error::Io(io::Error::new(
                    e.kind(),
                    format!("could not set the mode of '{}': {e}", w.path),
                ))
            })?;
            written.push(w.path.clone());
        }
        Ok(None)
    }

    /// Start the replayed session, its first step on top of the artifact's tip: the id it had
    /// where it was checkpointed when that is free here (or `--as`'s), else a new one.
    fn start_replayed(
        &self,
        head: &Head,
        file: &Path,
        base: Option<String>,
        files: &[(RelPath, ObjectId, bool)],
        options: &Options,
    ) -> Result<SessionId, ArtifactError> {
        // Without --as, the session keeps the id it had where it was checkpointed, when that id
        // is free here (a colleague's `log`, `status` and trailers then name it the same way);
        // otherwise it gets a new one.
        let original = SessionId::parse(&head.manifest.session)
            .ok()
            .filter(|_| options.as_id.is_none());
        let id = match (&options.as_id, &original) {
            (Some(id), _) => id.clone(),
            (None, Some(id)) if self.journal().try_tip(id)?.is_none() => id.clone(),
            _ => SessionId::mint(),
        };
        let artifact_digest = crate::fsutil::digest_file(file)?;
        let mut provenance = head.manifest.provenance.clone();
        provenance.push(Provenance {
            session: head.manifest.session.clone(),
            artifact: artifact_digest.to_hex(),
            base,
            replayed: format_time(gix::date::Time::now_utc()),
        });
        let session = SessionFile {
            id: id.to_string(),
            started: format_time(gix::date::Time::now_utc()),
            provenance,
            transcript_path: None,
        };
        let step = self.replay_step(head, files, &artifact_digest)?;
        match self.journal().start(&id, &session, Some(head.tip), &step) {
            // The original id was taken meanwhile: a new one, as when it was taken before.
            Err(crate::journal::Error::SessionExists { .. })
                if options.as_id.is_none() && original.as_ref() == Some(&id) =>
            {
                let id = SessionId::mint();
                let session = SessionFile {
                    id: id.to_string(),
                    ..session
                };
                self.journal().start(&id, &session, Some(head.tip), &step)?;
                Ok(id)
            }
            Err(e) => Err(e.into()),
            Ok(_) => Ok(id),
        }
    }

    /// The replayed session's first step: its map as the artifact's fingerprint, kept bytes and
    /// origins give it (the paths it must read again unsure), and the artifact's transcripts.
    fn replay_step(
        &self,
        head: &Head,
        files: &[(RelPath, ObjectId, bool)],
        artifact_digest: &Digest,
    ) -> Result<Step, ArtifactError> {
        let origins: std::collections::HashMap<&RelPath, Option<Digest>> =
            head.origins.iter().map(|(p, d)| (p, *d)).collect();
        let mut map = Vec::new();
        for (path, digest) in &head.fingerprint {
            let bytes = files
                .iter()
                .find(|(p, _, _)| p == path)
                .map(|(_, b, e)| (*b, *e));
            let version = super::record::Version {
                digest: *digest,
                kept: bytes,
            };
            let origin = origins.get(path).copied().flatten();
            map.push(super::record::replayed(path, version, origin));
        }
        for p in &head.manifest.needs_reread {
            if let Some(path) = RelPath::from_bytes(p.as_bytes()) {
                map.push(super::record::replayed_unsure(&path));
            }
        }
        let mut root = Vec::new();
        for (name, blob) in self.artifact_transcripts(head)? {
            let bytes = self.journal().blob(blob)?;
            root.extend(self.whole_transcript_edits(&name, &bytes)?);
        }
        Ok(Step {
            // A commit message plain `git log` prints: the artifact's session name escaped.
            summary: format!(
                "replay of session {} from artifact {}",
                crate::text::escape_controls(&head.manifest.session),
                &artifact_digest.to_hex()[..12]
            ),
            map,
            root,
        })
    }

    /// Decide, for every path, whether materialize may write it; collect the ones to write, with
    /// what each held when checked (`None`: absent), and the ones that already hold the
    /// session's bytes.
    fn plan_materialize(
        &self,
        head: &Head,
        base: Option<&str>,
        to_write: &mut Vec<(RelPath, Option<Digest>, Over)>,
        keep: &mut Vec<RelPath>,
    ) -> Result<Vec<Blocked>, Error> {
        let origins: std::collections::HashMap<&RelPath, Option<Digest>> =
            head.origins.iter().map(|(p, d)| (p, *d)).collect();
        let base_tree = base.and_then(|b| self.user_base_tree(b));
        // Every folder the fingerprint's paths need, and one path beneath each.
        let mut folders: std::collections::HashMap<&[u8], &RelPath> =
            std::collections::HashMap::new();
        for (path, _) in &head.fingerprint {
            let bytes = path.as_bytes();
            for (i, _) in bytes.iter().enumerate().filter(|(_, b)| **b == b'/') {
                folders.entry(&bytes[..i]).or_insert(path);
            }
        }
        let mut blocked = Vec::new();
        for (path, digest) in &head.fingerprint {
            let block = |why: &str| Blocked {
                path: path.clone(),
                why: why.to_owned(),
            };
            if let Some(beneath) = folders.get(path.as_bytes()) {
                blocked.push(block(&format!(
                    "the artifact also names '{beneath}' beneath it: one path cannot be both a file and a folder"
                )));
                continue;
            }
            let now = match probe_beneath(&self.ws.root, path) {
                Err(why) => {
                    blocked.push(block(&Report::of(&why).one_line()));
                    continue;
                }
                Ok(None) => {
                    to_write.push((path.clone(), None, Over::Nothing));
                    continue;
                }
                Ok(Some(now)) => now,
            };
            if now == *digest {
                keep.push(path.clone());
                continue;
            }
            let at_origin = origins.get(path).copied().flatten() == Some(now);
            let at_base = !at_origin
                && base_tree
                    .as_ref()
                    .is_some_and(|(repo, tree)| base_digest(repo, *tree, path) == Some(now));
            if at_origin || at_base {
                let over = if at_origin { Over::Origin } else { Over::Base };
                to_write.push((path.clone(), Some(now), over));
            } else {
                blocked.push(block(
                    "it holds bytes that are neither the session's, where the session started, nor the base commit's: someone's work",
                ));
            }
        }
        Ok(blocked)
    }

    /// The base commit's tree, when this repository has that commit.
    fn user_base_tree(&self, base: &str) -> Option<(gix::Repository, ObjectId)> {
        let repo = self.ws.user_repo().ok()?;
        let id = ObjectId::from_hex(base.as_bytes()).ok()?;
        let tree = repo.find_commit(id).ok()?.tree_id().ok()?.detach();
        Some((repo, tree))
    }

    /// Import the artifact's objects into the store with git's object checking on.
    ///
    /// Stock git is the sturdier tool here, run as `git fetch` runs it for a bundle with
    /// `transfer.fsckObjects`: `git index-pack --fsck-objects` indexes the pack and refuses
    /// malformed objects and hostile tree entries (`..`, `.git`) before anything lands, then `git
    /// rev-list --objects` checks that everything the tip links to is there. The pack reaches
    /// index-pack through a pipe from this process, so it stops when Stella is killed: `git
    /// fetch` from the file would hand the file itself to an index-pack of its own, which would
    /// run on.
    fn import(&self, file: &Path, head: &Head, progress: bool) -> Result<(), Error> {
        use std::io::BufRead;
        use std::process::Stdio;
        let refused = |stderr: &[u8]| {
            let said = String::from_utf8_lossy(stderr);
            let said: Vec<&str> = said
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            let why = if said.is_empty() {
                // Shown with the progress, on the terminal.
                "git refused its objects (its message is above)".to_owned()
            } else {
                format!("git refused its objects: {}", said.join("; "))
            };
            Error::NotAnArtifact { why }
        };
        let git = |args: &[&str]| {
            let mut cmd = crate::store::git_command(self.store.dir());
            cmd.args(args)
                .env("GIT_TERMINAL_PROMPT", "0")
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
            cmd
        };
        let mut reader = io::BufReader::with_capacity(1 << 20, std::fs::File::open(file)?);
        // The bundle header (the reader checked it) ends at the first empty line; the pack follows.
        let mut line = Vec::new();
        loop {
            line.clear();
            reader.read_until(b'\n', &mut line)?;
            if line.is_empty() || line == b"\n" {
                break;
            }
        }
        // With progress, git says how the import goes on this process's stderr, and its reason
        // for a refusal too.
        let mut index = git(&["index-pack", "--stdin", "--fsck-objects"]);
        if progress {
            index.arg("-v").stderr(Stdio::inherit());
        }
        let mut child = index.stdin(Stdio::piped()).spawn()?;
        // A refusal closes the pipe early; git's message says why, not the broken pipe.
        let copied = io::copy(&mut reader, &mut child.stdin.take().expect("piped"));
        let out = child.wait_with_output()?;
        if !out.status.success() {
            return Err(refused(&out.stderr));
        }
        copied?;
        let tip = head.tip.to_string();
        let out = git(&["rev-list", "--objects", "--quiet", &tip, "--not", "--all"])
            .stdin(Stdio::null())
            .output()?;
        if !out.status.success() {
            return Err(refused(&out.stderr));
        }
        Ok(())
    }

    /// The `files/` entries of the imported tip: (path, blob, executable). Anything that is not a
    /// plain file there (a link, a gitlink, a folder where the fingerprint names a file) is refused.
    fn artifact_files(&self, head: &Head) -> Result<Vec<(RelPath, ObjectId, bool)>, ArtifactError> {
        let repo = self.store.repo()?;
        let bad = |why: String| Error::NotAnArtifact { why };
        let root = repo
            .find_tree(head.tree)
            .map_err(|e| bad(format!("its tree is unreadable: {e}")))?;
        let mut out = Vec::new();
        let Some(files) = root
            .lookup_entry_by_path("files")
            .map_err(|e| bad(format!("its tree is unreadable: {e}")))?
        else {
            return Ok(out);
        };
        if !files.mode().is_tree() {
            return Err(bad("'files' is not a folder".into()).into());
        }
        let mut stack = vec![(Vec::new(), files.object_id())];
        while let Some((prefix, id)) = stack.pop() {
            let tree = repo
                .find_tree(id)
                .map_err(|e| bad(format!("its tree is unreadable: {e}")))?;
            for e in tree.iter() {
                let e = e.map_err(|e| bad(format!("its tree is unreadable: {e}")))?;
                let mut path = prefix.clone();
                if !path.is_empty() {
                    path.push(b'/');
                }
                path.extend_from_slice(e.filename());
                let mode = e.mode();
                if mode.is_tree() {
                    stack.push((path, e.oid().to_owned()));
                    continue;
                }
                let rel = RelPath::from_bytes(&path)
                    .ok_or_else(|| bad(format!("it holds an unsafe path {:?}", path.as_bstr())))?;
                if mode.is_commit() {
                    return Err(bad(format!("files/{rel} is a gitlink, not a file")).into());
                }
                if mode.is_link() {
                    return Err(bad(format!("files/{rel} is a symbolic link, not a file")).into());
                }
                out.push((rel, e.oid().to_owned(), mode.is_executable()));
            }
        }
        check_paths(out.iter().map(|(p, _, _)| p))?;
        let fingerprinted: HashSet<&RelPath> = head.fingerprint.iter().map(|(p, _)| p).collect();
        if let Some((p, _, _)) = out.iter().find(|(p, _, _)| !fingerprinted.contains(p)) {
            return Err(bad(format!(
                "it holds files/{p}, which its fingerprint does not name"
            ))
            .into());
        }
        Ok(out)
    }

    /// The `transcript/` blobs of the imported tip.
    fn artifact_transcripts(&self, head: &Head) -> Result<Vec<(String, ObjectId)>, ArtifactError> {
        let repo = self.store.repo()?;
        let bad = |e: gix::Error| Error::NotAnArtifact {
            why: format!("its tree is unreadable: {e}"),
        };
        let root = repo.find_tree(head.tree).map_err(bad)?;
        let Some(t) = root
            .lookup_entry_by_path("transcript")
            .map_err(|e| bad(gix::Error::from_error(e)))?
        else {
            return Ok(Vec::new());
        };
        let tree = repo.find_tree(t.object_id()).map_err(bad)?;
        let mut out = Vec::new();
        for e in tree.iter().filter_map(Result::ok) {
            let name = e.filename().to_str_lossy().into_owned();
            if e.mode().is_blob() && !name.starts_with('.') && !name.contains('/') {
                out.push((name, e.oid().to_owned()));
            }
        }
        Ok(out)
    }
}

/// Why materialize must not write a path: what is in the way, or why it could not be looked at.
/// Said to the person on one line ([`Report::one_line`]) as the reason the path is blocked.
#[derive(Debug, thiserror::Error)]
enum Unwritable {
    /// The way to it is blocked: a link, or a file where a folder must go
    /// ([`fsutil::open_parent_beneath`] says which).
    #[error(transparent)]
    Blocked(io::Error),
    /// A folder on the way to it could not be opened.
    #[error("it could not be inspected")]
    Uninspectable(#[source] io::Error),
    /// It is a symbolic link.
    #[error("it is a symbolic link")]
    Link,
    /// It could not be opened.
    #[error("it could not be read")]
    Unopenable(#[source] rustix::io::Errno),
    /// It was opened but could not be looked at.
    #[error(transparent)]
    Unstattable(rustix::io::Errno),
    /// It is a folder, a device or another file that is not a regular one.
    #[error("it is not a regular file")]
    NotAFile,
    /// It could not be read to the end.
    #[error("it could not be read")]
    Unreadable(#[source] io::Error),
}

/// The folder holding `path` beneath `root` (see [`fsutil::open_parent_beneath`]); `Err` with
/// why materialize must not go there.
fn open_parent(root: &Path, path: &RelPath) -> Result<Option<OwnedFd>, Unwritable> {
    fsutil::open_parent_beneath(root, path, false).map_err(|e| match e.raw_os_error() {
        // No errno: the path is blocked (a link or a file where a folder must go).
        None => Unwritable::Blocked(e),
        Some(_) => Unwritable::Uninspectable(e),
    })
}

/// The digest of what is at `path` beneath `root`, read without following links; `Ok(None)` when
/// absent; `Err` when materialize must not write there.
fn probe_beneath(root: &Path, path: &RelPath) -> Result<Option<Digest>, Unwritable> {
    let Some(dir) = open_parent(root, path)? else {
        return Ok(None);
    };
    let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW;
    match rustix::fs::openat(&dir, fsutil::file_name(path), flags, Mode::empty()) {
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(rustix::io::Errno::LOOP) => Err(Unwritable::Link),
        Err(e) => Err(Unwritable::Unopenable(e)),
        Ok(fd) => {
            let stat = rustix::fs::fstat(&fd).map_err(Unwritable::Unstattable)?;
            if rustix::fs::FileType::from_raw_mode(stat.st_mode)
                != rustix::fs::FileType::RegularFile
            {
                return Err(Unwritable::NotAFile);
            }
            Digest::of_reader(std::fs::File::from(fd))
                .map(Some)
                .map_err(Unwritable::Unreadable)
        }
    }
}

/// Check every planned write against the imported artifact before the first is made: the file
/// is in `files/`, and its bytes are the ones the fingerprint names. A malformed artifact is
/// refused whole, never after some of its files were written.
fn check_writes(
    journal: &crate::journal::Journal<'_>,
    head: &Head,
    files: &[(RelPath, ObjectId, bool)],
    to_write: ToWrite,
) -> Result<Vec<PlannedWrite>, ArtifactError> {
    let files: std::collections::HashMap<&RelPath, (ObjectId, bool)> =
        files.iter().map(|(p, b, e)| (p, (*b, *e))).collect();
    let fingerprint: std::collections::HashMap<&RelPath, Digest> =
        head.fingerprint.iter().map(|(p, d)| (p, *d)).collect();
    let mut out = Vec::with_capacity(to_write.len());
    for (path, checked) in to_write {
        let Some(&(blob, exec)) = files.get(&path) else {
            return Err(Error::NotAnArtifact {
                why: format!("its fingerprint names '{path}' but it holds no files/{path}"),
            }
            .into());
        };
        let digest = journal.blob_digest(blob)?;
        if fingerprint.get(&path) != Some(&digest) {
            return Err(Error::NotAnArtifact {
                why: format!("files/{path} does not match its fingerprint"),
            }
            .into());
        }
        out.push(PlannedWrite {
            path,
            blob,
            digest,
            exec,
            checked,
        });
    }
    Ok(out)
}

/// The digest of the file at `path` in `tree` of `repo`, streamed when it is large; `None` when
/// the tree holds no file there. Only the paths a replay asks about are looked up and hashed.
fn base_digest(repo: &gix::Repository, tree: ObjectId, path: &RelPath) -> Option<Digest> {
    use std::os::unix::ffi::OsStrExt;
    let tree = repo.find_tree(tree).ok()?;
    let entry = tree
        .lookup_entry_by_path(Path::new(std::ffi::OsStr::from_bytes(path.as_bytes())))
        .ok()??;
    if !entry.mode().is_blob() {
        return None;
    }
    let id = entry.object_id();
    let size = repo.find_header(id).ok()?.size();
    if size <= crate::store::STREAM_FROM {
        return Some(Digest::of(&repo.find_blob(id).ok()?.data));
    }
    Digest::of_reader(crate::store::blob_stream(repo.git_dir(), id, size).ok()?).ok()
}

/// Give the file at `path` beneath `root` the executable bit the artifact recorded (execute
/// where it may be read, or no execute at all), never through a link.
fn set_executable(root: &Path, path: &RelPath, exec: bool) -> io::Result<()> {
    let Some(dir) = fsutil::open_parent_beneath(root, path, false)? else {
        return Err(io::ErrorKind::NotFound.into());
    };
    let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW;
    let fd = rustix::fs::openat(&dir, fsutil::file_name(path), flags, Mode::empty())?;
    let mode = rustix::fs::fstat(&fd)?.st_mode & 0o7777;
    let want = if exec {
        mode | ((mode & 0o444) >> 2)
    } else {
        mode & !0o111
    };
    if want != mode {
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(want))?;
    }
    Ok(())
}
