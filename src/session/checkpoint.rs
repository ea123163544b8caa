//! The checkpoint: a session packed into an artifact, the format [`crate::artifact`] writes and
//! reads.

use std::collections::BTreeMap;
use std::io::{self, Write};

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::object::tree::EntryKind;

use crate::artifact::{
    self, CHECKPOINTS, FORMAT, Manifest, sum_line, user_head, write_bundle_with,
};
use crate::journal::layout::{self, HostFile, SessionFile};
use crate::journal::{Entry, RootFile, Seen, Tip};
use crate::session::turn::{self, TurnError};
use crate::session::{ArtifactError, Session};
use crate::text::format_time;

/// What `checkpoint` wrote.
#[derive(Debug)]
pub struct Checkpoint {
    /// The artifact's tip: the checkpoint commit on top of the session's journal.
    pub tip: ObjectId,
    /// Its manifest, as `stella.toml` holds it.
    pub manifest: Manifest,
    /// How many paths the session tracked: its fingerprint's and those needing a re-read.
    pub paths: usize,
    /// Host transcript files that were not taken, and why: the caller should say so.
    pub skipped_transcripts: Vec<SkippedTranscript>,
}

/// A host transcript file `checkpoint` did not read (not a regular file, or too large: see
/// `turn::read_transcript_file`).
#[derive(Debug)]
pub struct SkippedTranscript {
    /// The path the host named.
    pub path: String,
    /// Why it was not read.
    pub why: turn::TranscriptFileError,
    /// Whether the artifact carries the copy the journal last stored under that name instead.
    pub stored_copy: bool,
}

/// The transcripts an artifact carries: each one's bytes, by name.
type Transcripts = BTreeMap<String, Vec<u8>>;

/// The sum files of a checkpoint, as [`Session::put_files`] builds them from the session's map.
#[derive(Default)]
struct Sums {
    /// `fingerprint`: the digest of each path as the session last saw it.
    fingerprint: Vec<u8>,
    /// `origins`: the digest of each path where the session started from it.
    origins: Vec<u8>,
    /// The paths the session must read again before it writes them.
    needs_reread: Vec<String>,
}

fn turn_err(e: TurnError) -> ArtifactError {
    match e {
        TurnError::Session(s) => ArtifactError::Session(s),
        other => artifact::Error::Io(io::Error::other(other.to_string())).into(),
    }
}

impl Session<'_> {
    /// Pack session `id` into an artifact written to `out`.
    ///
    /// See the [artifact's docs](crate::artifact) for the format and the contents warning: the
    /// bytes written carry everything the session read, secrets included. The checkpoint commit
    /// takes its dates from the session's last step, so an unchanged session gives identical
    /// bytes. Where the artifact goes next (storage, access, retention) is the caller's business.
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
    pub fn checkpoint(&self, out: &mut dyn Write) -> Result<Checkpoint, ArtifactError> {
        self.checkpoint_with(out, false)
    }

    /// [`Session::checkpoint`], with git's progress lines on this process's stderr while the
    /// pack is written, when `progress`.
    ///
    /// The session is read back whole; its files, transcripts and sum files are put in one
    /// tree, a commit on top of the session's tip holds it, and the bundle of that commit is the
    /// artifact.
    pub fn checkpoint_with(
        &self,
        out: &mut dyn Write,
        progress: bool,
    ) -> Result<Checkpoint, ArtifactError> {
        let id = self.id;
        let _span = tracing::debug_span!("checkpoint", session = %id).entered();
        let journal = self.ctx.journal();
        let tip = journal.tip(id)?;
        // Every object of the session read back whole first: an artifact never carries a
        // damaged session, and the damage found is repaired as any command's is.
        if let Err(damage) = journal.read_whole(
            id.as_str(),
            tip.commit,
            &mut std::collections::HashSet::new(),
        )? {
            return Err(damage.into());
        }
        let entries = journal.entries(id)?;
        let (tree, manifest, skipped_transcripts) = self.checkpoint_tree(&tip, &entries)?;
        let commit_id = self.checkpoint_commit(tree, &tip)?;
        let repo = self.ctx.store.repo()?;
        write_bundle_with(
            repo,
            &format!("{CHECKPOINTS}{id}"),
            commit_id,
            out,
            progress,
        )
        .map_err(|e| match e {
            artifact::Error::Io(io) => artifact::Error::Write(io),
            e => e,
        })?;
        Ok(Checkpoint {
            tip: commit_id,
            manifest,
            paths: entries.len(),
            skipped_transcripts,
        })
    }

    /// The checkpoint's tree, written to the store: `files/` (the bytes the session kept),
    /// `transcript/`, `stella.toml` (the manifest, also returned), `fingerprint`, `origins` and
    /// `base`; and the host transcripts that were not taken.
    fn checkpoint_tree(
        &self,
        tip: &Tip,
        entries: &[Entry],
    ) -> Result<(ObjectId, Manifest, Vec<SkippedTranscript>), ArtifactError> {
        let id = self.id;
        let journal = self.ctx.journal();
        let repo = self.ctx.store.repo()?;
        let git = |op| self.ctx.store.git_err(op);
        let session: SessionFile = journal
            .root_toml(id, &RootFile::Session)?
            .unwrap_or_default();
        let (base, object_format) = user_head(&self.ctx.ws);
        let mut editor = repo
            .edit_tree(ObjectId::empty_tree(repo.object_hash()))
            .map_err(git("build a tree"))?;
        let sums = self.put_files(&mut editor, entries)?;
        let (transcripts, skipped_transcripts) = self.gather_transcripts(&session)?;
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
            needs_reread: sums.needs_reread,
            transcripts: transcript_sizes,
            provenance: session.provenance,
        };
        let manifest_text = toml::to_string(&manifest).expect("the manifest serialises");
        let manifest_blob = journal.write_blob(manifest_text.as_bytes())?;
        let fingerprint_blob = journal.write_blob(&sums.fingerprint)?;
        let origins_blob = journal.write_blob(&sums.origins)?;
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
        let tree = self.write_tree(&editor)?;
        Ok((tree, manifest, skipped_transcripts))
    }

    /// Put the bytes each entry kept under `files/` in `editor`: the sum lines of what the
    /// session saw and where it started, and the paths it must read again.
    fn put_files(
        &self,
        editor: &mut gix::object::tree::Editor<'_>,
        entries: &[Entry],
    ) -> Result<Sums, ArtifactError> {
        let mut sums = Sums::default();
        for Entry {
            path,
            seen,
            origin,
            bytes,
            ..
        } in entries
        {
            match seen {
                Seen::Digest(d) => sums.fingerprint.extend(sum_line(Some(*d), path)),
                Seen::Reread | Seen::Forgotten => {
                    sums.needs_reread.push(path.to_lossy().into_owned())
                }
            }
            sums.origins.extend(sum_line(*origin, path));
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
                    .map_err(self.ctx.store.git_err("build a tree"))?;
            }
        }
        Ok(sums)
    }

    /// The transcripts the artifact carries, by name: the host's file when the session knows it
    /// (hosts flush late), else the last one the journal stored; and the host files skipped.
    fn gather_transcripts(
        &self,
        session: &SessionFile,
    ) -> Result<(Transcripts, Vec<SkippedTranscript>), ArtifactError> {
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
            match turn::read_transcript_file(host_transcript.as_ref()) {
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
        Ok((transcripts, skipped_transcripts))
    }

    /// Write the tree `editor` holds, whole: a tree an earlier, interrupted checkpoint left
    /// broken on disk (its name there, its bytes not) would be taken for the one written here,
    /// so it is removed and written again.
    fn write_tree(
        &self,
        editor: &gix::object::tree::Editor<'_>,
    ) -> Result<ObjectId, ArtifactError> {
        let git = |op| self.ctx.store.git_err(op);
        // Each try writes from a copy of the edits: a written editor keeps only its root tree,
        // so writing it again would not restore a subtree (`files/`, say) just removed.
        let mut tree = editor
            .clone()
            .write()
            .map_err(git("write a tree"))?
            .detach();
        for _ in 0..64 {
            if !self.ctx.store.remove_leftover_trees(tree)? {
                break;
            }
            tree = editor
                .clone()
                .write()
                .map_err(git("write a tree"))?
                .detach();
        }
        Ok(tree)
    }

    /// The checkpoint commit: `tree` on top of the session's tip, dated by its last step so
    /// that an unchanged session gives identical bytes. A broken leftover of the same commit is
    /// removed and the commit written again.
    fn checkpoint_commit(&self, tree: ObjectId, tip: &Tip) -> Result<ObjectId, ArtifactError> {
        let repo = self.ctx.store.repo()?;
        let git = |op| self.ctx.store.git_err(op);
        let sig = crate::store::signature(tip.time);
        let commit = gix::objs::Commit {
            tree,
            parents: [tip.commit].into_iter().collect(),
            author: sig.clone(),
            committer: sig,
            encoding: None,
            message: format!("checkpoint of session {}\n", self.id).into(),
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
        Ok(commit_id)
    }

    /// The transcript files the session's hosts named (`transcript_path` in `session.toml` or in
    /// a host adapter's `hosts/<agent>.toml`): hosts flush late, so checkpoint reads them again.
    fn host_transcript_paths(&self, own: &str) -> Result<Vec<String>, ArtifactError> {
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
