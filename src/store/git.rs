//! git itself, run on the store: the one way a `git` child is started ([`git_command`]), the
//! runners that collect garbage, and blobs read as a stream through `git cat-file`.
//!
//! Apart from the refs and objects gix reads and writes in-process, because each of these starts
//! a process: what it may inherit from the caller's environment is decided here, once.

use std::path::Path;
use std::time::Duration;

use gix::ObjectId;

use super::{Error, Store, WRITE_DEADLINE};

/// How many packs the store keeps before it repacks them (git's own `gc.autoPackLimit`).
const PACK_LIMIT: usize = 50;

impl Store {
    /// Repack the store and prune what no session reaches, keeping objects younger than `grace`
    /// (a writer creates objects before it moves its ref: those must survive).
    ///
    /// Runs stock `git gc` under the store lock: repacking is git's own job and git does it well.
    /// With `progress`, git's own progress lines go to this process's stderr (the caller
    /// decides: a terminal, and not quiet).
    pub fn gc(&self, grace: Duration, progress: bool) -> Result<(), Error> {
        let _lock = self.lock(WRITE_DEADLINE)?;
        let prune = format!("--prune={}.seconds.ago", grace.as_secs());
        let started = std::time::Instant::now();
        if progress {
            // git gc shows progress when its stderr is a terminal, as this one is.
            self.git_shown(&["gc", &prune])?;
        } else {
            self.git(&["gc", "--quiet", &prune])?;
        }
        tracing::info!(
            store = %self.dir.display(),
            ms = started.elapsed().as_millis() as u64,
            "repacked; unreachable objects older than {} s pruned",
            grace.as_secs()
        );
        Ok(())
    }

    /// Repack when loose objects pile up (git's `gc --auto` heuristic), or packs do (more than
    /// git's 50): then git's geometric repack rolls the small packs into one and leaves each
    /// large one that is at least twice the next, so a repack costs about what was added since
    /// the last. Call only off the hot path.
    pub(crate) fn maybe_gc(&self) -> Result<(), Error> {
        // Sample one fan-out folder as git does: ~27 objects there means ~6,700 loose objects.
        let sample = self.dir.join("objects").join("17");
        let loose = std::fs::read_dir(&sample).map_or(0, |d| d.count());
        // Commands the shell guard records in bulk leave a pack a step and no loose object: the
        // packs would pile up unchecked, and every lookup of an object searches each one's index
        // (a store of 166 packs took a command reading 100,000 files to 233 MiB and 16.3 s; the
        // same store repacked into one, to 137 MiB and 11.7 s).
        let packs = || super::in_pack_folder(&self.dir, |name| name.ends_with(b".pack"));
        let many_loose = loose >= 27;
        if !many_loose && packs() <= PACK_LIMIT {
            return Ok(());
        }
        let Ok(_lock) = self.lock(Duration::from_millis(200)) else {
            return Ok(());
        };
        if many_loose {
            self.git(&["gc", "--auto", "--quiet"])
        } else {
            // A git older than 2.33 has no geometric repack: its `gc --auto` consolidates all.
            self.git(&["repack", "-d", "--geometric=2", "-q"])
                .or_else(|_| self.git(&["gc", "--auto", "--quiet"]))
        }
    }

    fn git(&self, args: &[&str]) -> Result<(), Error> {
        self.git_with(args, false)
    }

    /// [`Store::git`] with git's stderr (its progress, its complaints) shown where this
    /// process's goes.
    fn git_shown(&self, args: &[&str]) -> Result<(), Error> {
        self.git_with(args, true)
    }

    fn git_with(&self, args: &[&str], shown: bool) -> Result<(), Error> {
        let stderr = if shown {
            std::process::Stdio::inherit()
        } else {
            std::process::Stdio::piped()
        };
        let out = git_command(&self.dir)
            .args([
                "-c",
                "gc.autoDetach=false",
                "-c",
                "core.logAllRefUpdates=always",
                // A repack writes the new pack before it deletes what it replaces: synced.
                "-c",
                "core.fsync=all",
                "-c",
                "core.fsyncMethod=fsync",
                "-c",
                BIG_FILE_THRESHOLD,
            ])
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(stderr)
            .output()
            .map_err(|source| Error::Io {
                op: "run git for",
                path: self.dir.clone(),
                source,
            })?;
        if out.status.success() {
            Ok(())
        } else {
            Err(Error::GitCommand {
                args: args.join(" "),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            })
        }
    }
}

/// The variables that point git at another repository, object store or config than the one
/// it is told of: git's own list (`git rev-parse --local-env-vars`), and the quarantine a
/// receive hook runs in. Set in a caller's environment (a git hook, a push's quarantine), they
/// would send a pack meant for the store into another object folder, or have `git gc` prune
/// that folder by the store's refs.
const REPO_ENV: [&str; 16] = [
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR",
    "GIT_QUARANTINE_PATH",
];

/// A `git` for the repository at `git_dir` and nothing else: none of the caller's variables
/// that point git elsewhere (`GIT_DIR`, `GIT_INDEX_FILE` and the rest), no system or user
/// config, and killed with the thread that starts it ([`crate::child::die_with_parent`]).
pub fn git_command(git_dir: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new("git");
    cmd.arg("--git-dir").arg(git_dir);
    for var in REPO_ENV {
        cmd.env_remove(var);
    }
    cmd.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null");
    crate::child::die_with_parent(&mut cmd);
    cmd
}

/// Blobs larger than this are read as a stream ([`blob_stream`]) wherever their bytes go
/// somewhere else whole (a file written, a digest): memory stays flat whatever their size.
pub(crate) const STREAM_FROM: u64 = 8 << 20;

/// The bytes of blob `id` in the repository at `git_dir`, `size` of them (from its header), as
/// a stream through `git cat-file`: git streams a blob above `core.bigFileThreshold` from its
/// loose file or its pack without holding it. A stream that ends early, goes past `size`, or
/// whose git fails, is a read error.
pub(crate) fn blob_stream(git_dir: &Path, id: ObjectId, size: u64) -> std::io::Result<BlobStream> {
    let mut child = git_command(git_dir)
        .args(["-c", BIG_FILE_THRESHOLD, "cat-file", "blob"])
        .arg(id.to_string())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let out = child.stdout.take().expect("piped");
    Ok(BlobStream {
        child,
        out,
        left: size,
    })
}

/// A blob read through `git cat-file` (see [`blob_stream`]).
pub(crate) struct BlobStream {
    child: std::process::Child,
    out: std::process::ChildStdout,
    left: u64,
}

impl std::io::Read for BlobStream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let n = self.out.read(buf)?;
        if n == 0 {
            let status = self.child.wait()?;
            if self.left != 0 || !status.success() {
                return Err(std::io::Error::other(format!(
                    "git cat-file ended {} bytes short of the blob ({status})",
                    self.left
                )));
            }
            return Ok(0);
        }
        self.left = self.left.checked_sub(n as u64).ok_or_else(|| {
            std::io::Error::other("git cat-file gave more bytes than the blob holds")
        })?;
        Ok(n)
    }
}

impl Drop for BlobStream {
    fn drop(&mut self) {
        // Abandoned mid-way: the git is stopped, not left writing into a pipe nobody reads.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What git packs whole, never comparing it with other objects for a delta: the first version of
/// a large file is what a session holds, and git's delta search is quadratic in the bytes of the
/// objects it compares. Two 200 MB files took pack-objects 55 s, nearly all of it spent
/// comparing one with the other, and ~400 MiB; above this size git also streams the blob from
/// the store rather than loading it. git's own default is 512 MiB.
pub(crate) const BIG_FILE_THRESHOLD: &str = "core.bigFileThreshold=16m";
