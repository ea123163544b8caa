//! Which working copy are we in: the workspace root, its id, and the owner record that tells a
//! copy from a move.
//!
//! The id lives in `.stella/private/workspace.toml` (ignored by git through the folder's own
//! `.gitignore`); the data dir keeps, per id, the canonical path that owns it. Comparing the two
//! on every command tells the cases apart (SPEC §3):
//! - same path: same workspace;
//! - the recorded path is the same folder seen another way (symlink, bind mount), proven by a
//!   probe file written here and looked for there: same workspace;
//! - the recorded path still holds a checkout with the same id: this is a copy, so it gets a fresh
//!   id and never writes into the original's history;
//! - otherwise the checkout moved: keep the id, record the new path.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::fsutil::{self, FileLock, PathIo};
use crate::ids::{SessionId, WorkspaceId};
use crate::paths::RelPath;

/// What the library needs from the environment, built once at the edge.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Where Stella keeps its data: `$STELLA_HOME` or the platform data dir.
    pub data_dir: PathBuf,
    /// Whether `GIT_DIR` or `GIT_WORK_TREE` is set: then the workspace is found the way git
    /// finds it with those overrides, through a full open of the repository. Without them a
    /// walk up from the current folder suffices, which keeps the guard's hot path short.
    pub git_env_overrides: bool,
    /// The variables git's configuration can come from or be found by, as the process has them
    /// (every `GIT_*`, `HOME`, `XDG_CONFIG_HOME`): with them, a passing check of the
    /// configuration is remembered until one of them or a configuration file changes
    /// ([`crate::config::check`]). `None` (unknown): it is checked in full every time.
    pub git_config_env: Option<Vec<(OsString, OsString)>>,
}

impl Settings {
    /// Settings for `data_dir`, with git's environment overrides not in play, and the
    /// configuration checked in full every time.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Settings {
            data_dir: data_dir.into(),
            git_env_overrides: false,
            git_config_env: None,
        }
    }
}

/// One working tree of a git repository, with its id.
#[derive(Clone, Debug)]
pub struct Workspace {
    /// The canonical workspace root.
    pub root: PathBuf,
    /// Its id, kept in `.stella/private`: its store and sessions are found by it.
    pub id: WorkspaceId,
    pub(crate) data_dir: PathBuf,
    /// Whether git's environment overrides are in play (see [`Settings::git_env_overrides`]).
    pub(crate) git_env_overrides: bool,
    /// [`Settings::git_config_env`], when known.
    pub(crate) git_config_env: Option<std::sync::Arc<[(OsString, OsString)]>>,
}

/// Something a person should hear about, said once on stderr by the CLI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// This checkout is a copy of another one; it got its own id.
    Copied {
        /// The checkout it was copied from, which keeps the id and the sessions.
        original: PathBuf,
    },
    /// `.stella/private` was missing at a path the data dir knows; its id was adopted again.
    Adopted {
        /// The id adopted.
        id: WorkspaceId,
    },
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Notice::Copied { original } => write!(
                f,
                "this checkout is a copy of '{}': it gets its own workspace id and starts with no sessions",
                original.display()
            ),
            Notice::Adopted { id } => write!(
                f,
                "'.stella/private' was missing; adopted this checkout's workspace id {id} again, with its sessions"
            ),
        }
    }
}

/// The error returned by [`discover_root`] and [`Workspace::open`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No git repository holds the folder.
    #[error("not a git repository (or any of the parent directories): {}", .path.display())]
    NotARepository {
        /// The folder the search started from.
        path: PathBuf,
        /// What gix said.
        #[source]
        source: gix::Error,
    },
    /// The repository is bare: there is no working tree to guard.
    #[error("this operation must be run in a work tree: '{}' is a bare repository", .git_dir.display())]
    Bare {
        /// The repository's git folder.
        git_dir: PathBuf,
    },
    /// A file or folder of the workspace's own (`.stella/private`, the data dir) could not be
    /// read or written.
    #[error(transparent)]
    Io(#[from] PathIo),
    /// The workspace's id file does not hold an id.
    #[error("'{}' is corrupt: {why}", .path.display())]
    Corrupt {
        /// The id file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// The lock that settles which checkout owns an id could not be taken.
    #[error(transparent)]
    Lock(#[from] fsutil::LockError),
}

impl Error {
    fn io<'a>(op: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> Error + 'a {
        move |source| {
            Error::Io(PathIo {
                op,
                path: path.to_owned(),
                source,
            })
        }
    }
}

/// The canonical root of the working tree that contains `cwd`, honouring `GIT_DIR` and
/// `GIT_WORK_TREE` like git does when `settings` says they are set; each `git worktree` has its
/// own root.
pub fn discover_root(settings: &Settings, cwd: &Path) -> Result<PathBuf, Error> {
    if !settings.git_env_overrides
        && let Ok((path, _trust)) = gix::discover::upwards(cwd)
    {
        let (git_dir, workdir) = path.into_repository_and_work_tree_directories();
        if let Some(workdir) = workdir
            && !config_may_move_work_tree(&git_dir)
        {
            return canonical_root(cwd, &workdir);
        }
        // A bare repository, or a work tree set in its config: let the full open decide.
    }
    let repo =
        open_user_repo(settings.git_env_overrides, cwd).map_err(|e| Error::NotARepository {
            path: cwd.to_owned(),
            source: e,
        })?;
    let Some(workdir) = repo.workdir() else {
        return Err(Error::Bare {
            git_dir: repo.git_dir().to_owned(),
        });
    };
    canonical_root(cwd, workdir)
}

/// The user's repository around `dir`. Stella reads no environment itself: only when the edge
/// found `GIT_DIR` or `GIT_WORK_TREE` set (`overrides`) does gix open the repository the way git
/// does with them; otherwise it is found by walking up from `dir`.
pub fn open_user_repo(overrides: bool, dir: &Path) -> Result<gix::Repository, gix::Error> {
    if overrides {
        gix::discover_with_environment_overrides(dir)
    } else {
        gix::discover(dir)
    }
}

impl Workspace {
    /// The user's repository of this workspace (see [`open_user_repo`]).
    pub(crate) fn user_repo(&self) -> Result<gix::Repository, gix::Error> {
        open_user_repo(self.git_env_overrides, &self.root)
    }

    /// [`Workspace::user_repo`], opened to read its configuration only: as git reads it (the
    /// system's, the user's, the repository's, includes and the environment's overrides), but
    /// without looking at its packs, which gix otherwise lists and stats one by one to size its
    /// object store, a cost that grew with every pack before each guarded command.
    pub(crate) fn user_config(&self) -> Result<gix::Repository, gix::Error> {
        use gix::sec::trust::DefaultForLevel;
        let options = |level| {
            gix::open::Options::default_for_level(level)
                .object_store_slots(gix::odb::store::init::Slots::Given(32))
        };
        let trust = gix::sec::trust::Mapping {
            full: options(gix::sec::Trust::Full),
            reduced: options(gix::sec::Trust::Reduced),
        };
        let upwards = gix::discover::upwards::Options::default();
        let repo = if self.git_env_overrides {
            gix::ThreadSafeRepository::discover_with_environment_overrides_opts(
                &self.root, upwards, trust,
            )
        } else {
            gix::ThreadSafeRepository::discover_opts(&self.root, upwards, trust)
        };
        repo.map(Into::into)
    }

    /// The user's repository, to read `HEAD` and objects only: without git's environment
    /// overrides it is opened at the root, isolated from the system's and the user's git config
    /// (which say nothing about where objects are and cost most of an open), else as
    /// [`Workspace::user_repo`] opens it.
    pub(crate) fn user_objects(&self) -> Result<gix::Repository, gix::Error> {
        if self.git_env_overrides {
            return self.user_repo();
        }
        gix::open_opts(&self.root, gix::open::Options::isolated())
    }
}

/// Whether the repository's own config could put its work tree elsewhere: it mentions
/// `core.worktree`, per-worktree config or an include (which could hold either). A plain search
/// rather than a parse, so the common repository costs the fast lookup one small read; anything
/// it flags goes to the full open, which reads config as git does.
fn config_may_move_work_tree(git_dir: &Path) -> bool {
    let Ok(config) = std::fs::read(git_dir.join("config")) else {
        return false;
    };
    let config = config.to_ascii_lowercase();
    [b"worktree".as_slice(), b"include"]
        .iter()
        .any(|key| config.windows(key.len()).any(|w| w == *key))
}

fn canonical_root(cwd: &Path, workdir: &Path) -> Result<PathBuf, Error> {
    let workdir = if workdir.is_absolute() {
        workdir.to_owned()
    } else {
        cwd.join(workdir)
    };
    workdir
        .canonicalize()
        .map_err(Error::io("resolve the workspace root", &workdir))
}

/// The identity file's content.
#[derive(Serialize, Deserialize)]
struct IdFile {
    id: String,
    /// Where the id was minted; informational, for people reading the file.
    #[serde(default)]
    minted_at: Option<PathBuf>,
}

const ID_FILE: &str = "workspace.toml";
const OWNER_LOCK_WAIT: Duration = Duration::from_secs(10);

impl Workspace {
    /// Open (and if needed initialise) the workspace whose root is `root`, returning what a person
    /// should be told.
    pub fn open(settings: &Settings, root: PathBuf) -> Result<(Workspace, Vec<Notice>), Error> {
        let mut notices = Vec::new();
        let data_dir = settings.data_dir.clone();
        let private = private_dir(&root);
        let id_path = private.join(ID_FILE);

        let id = match read_id_file(&id_path)? {
            // The common case creates nothing (the data dir's folders are made with the owner
            // record), but puts back an ignore file someone removed.
            Some(id) => {
                ensure_ignore_file(&private)?;
                id
            }
            None => {
                fsutil::create_private_dir(&data_dir.join("workspaces"), 0o700)
                    .map_err(Error::io("create the data dir", &data_dir))?;
                fsutil::create_private_dir(&private, 0o700)
                    .map_err(Error::io("create", &private))?;
                ensure_ignore_file(&private)?;
                match find_owned_id(&data_dir, &root)? {
                    Some(id) => {
                        write_id_file(&id_path, &id, &root)?;
                        notices.push(Notice::Adopted { id: id.clone() });
                        id
                    }
                    None => {
                        let id = WorkspaceId::mint();
                        write_id_file(&id_path, &id, &root)?;
                        id
                    }
                }
            }
        };

        let ws = Workspace {
            root,
            id,
            data_dir,
            git_env_overrides: settings.git_env_overrides,
            git_config_env: settings.git_config_env.as_deref().map(Into::into),
        };
        let ws = ws.reconcile_owner(&mut notices)?;
        tracing::info!(root = %ws.root.display(), id = %ws.id, store = %ws.store_dir().display(), "workspace");
        Ok((ws, notices))
    }

    /// Compare the owner record with this path and settle copy, move or same folder.
    fn reconcile_owner(mut self, notices: &mut Vec<Notice>) -> Result<Workspace, Error> {
        let dir = self.id_dir();
        let owner_path = dir.join("owner");
        let read_owner = || {
            fsutil::read_optional(&owner_path)
                .map_err(Error::io("read the owner record", &owner_path))
                .map(|b| b.map(|b| PathBuf::from(bytes_to_os(trim_nl(&b)))))
        };
        // The common case reads one small file, creates nothing and takes no lock.
        if let Ok(Some(owner)) = read_owner()
            && owner == self.root
        {
            return Ok(self);
        }
        let workspaces = self.data_dir.join("workspaces");
        fsutil::create_private_dir(&workspaces, 0o700)
            .map_err(Error::io("create the data dir", &self.data_dir))?;
        fsutil::create_private_dir(&dir, 0o700).map_err(Error::io("create", &dir))?;
        let _lock = FileLock::acquire(&dir.join("owner.lock"), OWNER_LOCK_WAIT)?;
        let recorded = read_owner()?;
        match recorded {
            Some(p) if p == self.root => Ok(self),
            None => {
                write_owner(&owner_path, &self.root)?;
                Ok(self)
            }
            Some(other) => {
                if same_folder(&self.root, &other) {
                    Ok(self)
                } else if read_id_file(&private_dir(&other).join(ID_FILE))
                    .ok()
                    .flatten()
                    .as_ref()
                    == Some(&self.id)
                {
                    drop(_lock);
                    let id = WorkspaceId::mint();
                    write_id_file(&private_dir(&self.root).join(ID_FILE), &id, &self.root)?;
                    self.id = id;
                    let dir = self.id_dir();
                    fsutil::create_private_dir(&dir, 0o700).map_err(Error::io("create", &dir))?;
                    write_owner(&dir.join("owner"), &self.root)?;
                    notices.push(Notice::Copied { original: other });
                    Ok(self)
                } else {
                    tracing::info!(from = %other.display(), to = %self.root.display(), "workspace moved");
                    write_owner(&owner_path, &self.root)?;
                    Ok(self)
                }
            }
        }
    }

    /// `<data dir>/workspaces/<id>`.
    pub(crate) fn id_dir(&self) -> PathBuf {
        self.data_dir.join("workspaces").join(self.id.as_str())
    }

    /// The private bare repository holding this workspace's sessions.
    pub(crate) fn store_dir(&self) -> PathBuf {
        self.id_dir().join("store.git")
    }

    /// `.stella/private` inside the workspace.
    pub fn private_dir(&self) -> PathBuf {
        private_dir(&self.root)
    }

    /// `.stella/private/sessions/<id>`: an empty file saying session `id` was started here. The
    /// workspace keeps it beside its id, away from the store, so a session whose journal is gone
    /// (the data dir removed, the store lost) is known for one that existed and forgot, never
    /// taken for a new one that knew nothing.
    fn session_mark(&self, id: &SessionId) -> PathBuf {
        self.private_dir().join("sessions").join(id.as_str())
    }

    /// Where the shell guard keeps what it knows of session `id`'s files by their `stat`
    /// signature, relative to the workspace folder (machine-local, a cache: deleting it costs the
    /// next command a re-hash). Read, written and removed beneath the workspace, never through a
    /// link.
    pub(crate) fn signatures_file(id: &SessionId) -> RelPath {
        RelPath::from_bytes(format!(".stella/private/exec/{}.signatures", id.as_str()).as_bytes())
            .expect("a session id is one path component")
    }

    /// Remove what the shell guard kept of session `id`'s files (its session is let go of).
    pub(crate) fn forget_signatures(&self, id: &SessionId) {
        let _ = fsutil::remove_beneath(&self.root, &Self::signatures_file(id), || true);
    }

    /// Whether session `id` was started in this workspace (and not dropped since).
    pub(crate) fn had_session(&self, id: &SessionId) -> bool {
        std::fs::symlink_metadata(self.session_mark(id)).is_ok()
    }

    /// Remember that session `id` exists here. A mark that cannot be written costs only the
    /// protection it would give if the journal were lost later: a warning, not a failure.
    pub(crate) fn mark_session(&self, id: &SessionId) {
        let mark = self.session_mark(id);
        let made = mark
            .parent()
            .map_or(Ok(()), |dir| fsutil::create_private_dir(dir, 0o700))
            .and_then(|()| {
                std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(&mark)
                    .map(drop)
            });
        if let Err(e) = made {
            tracing::warn!(path = %mark.display(), error = %e, "could not mark the session as this workspace's");
        }
    }

    /// Forget that session `id` existed here (it was dropped).
    pub(crate) fn unmark_session(&self, id: &SessionId) {
        if let Err(e) = std::fs::remove_file(self.session_mark(id))
            && e.kind() != io::ErrorKind::NotFound
        {
            tracing::warn!(id = %id, error = %e, "could not unmark a dropped session");
        }
    }
}

fn private_dir(root: &Path) -> PathBuf {
    root.join(".stella").join("private")
}

/// Give `.stella/private` a `.gitignore` of `*`, so it is never committed whatever the
/// repository's own ignore rules say.
fn ensure_ignore_file(private: &Path) -> Result<(), Error> {
    let ignore = private.join(".gitignore");
    if !ignore.exists() {
        fsutil::write_atomic(&ignore, b"*\n", 0o644).map_err(Error::io("write", &ignore))?;
    }
    Ok(())
}

fn read_id_file(path: &Path) -> Result<Option<WorkspaceId>, Error> {
    let Some(bytes) = fsutil::read_optional(path).map_err(Error::io("read", path))? else {
        return Ok(None);
    };
    let corrupt = |why: String| Error::Corrupt {
        path: path.to_owned(),
        why,
    };
    let text = std::str::from_utf8(&bytes).map_err(|_| corrupt("it is not UTF-8".into()))?;
    let file: IdFile = toml::from_str(text).map_err(|e| corrupt(e.message().to_owned()))?;
    WorkspaceId::parse(&file.id)
        .map(Some)
        .map_err(|e| corrupt(e.to_string()))
}

/// The workspace id recorded in the checkout at `root`, when it holds a readable one.
pub(crate) fn recorded_id(root: &Path) -> Option<WorkspaceId> {
    read_id_file(&private_dir(root).join(ID_FILE))
        .ok()
        .flatten()
}

fn write_id_file(path: &Path, id: &WorkspaceId, root: &Path) -> Result<(), Error> {
    let text = toml::to_string(&IdFile {
        id: id.to_string(),
        minted_at: Some(root.to_owned()),
    })
    .expect("the id file serialises");
    fsutil::write_atomic(path, text.as_bytes(), 0o600).map_err(Error::io("write", path))
}

fn write_owner(path: &Path, root: &Path) -> Result<(), Error> {
    use std::os::unix::ffi::OsStrExt;
    let mut bytes = root.as_os_str().as_bytes().to_vec();
    bytes.push(b'\n');
    fsutil::write_atomic(path, &bytes, 0o600).map_err(Error::io("write the owner record", path))
}

/// The id whose owner record names `root`, if any: `.stella/private` was removed (for example by
/// `git clean -fdx`) at a path Stella already knows.
fn find_owned_id(data_dir: &Path, root: &Path) -> Result<Option<WorkspaceId>, Error> {
    let dir = data_dir.join("workspaces");
    let records = owner_records(data_dir).map_err(Error::io("list", &dir))?;
    Ok(records
        .into_iter()
        .find(|r| r.owner.as_deref() == Some(root))
        .map(|r| r.id))
}

/// One workspace Stella's data dir knows: its id, its folder there, and the checkout its owner
/// record names (when it has a readable one).
#[derive(Clone, Debug)]
pub(crate) struct OwnerRecord {
    pub(crate) id: WorkspaceId,
    pub(crate) dir: PathBuf,
    pub(crate) owner: Option<PathBuf>,
}

/// Every workspace folder in `data_dir` (entries that are not a workspace id are skipped).
pub(crate) fn owner_records(data_dir: &Path) -> io::Result<Vec<OwnerRecord>> {
    let dir = data_dir.join("workspaces");
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let Some(id) = entry
            .file_name()
            .to_str()
            .and_then(|n| WorkspaceId::parse(n).ok())
        else {
            continue;
        };
        let owner = fsutil::read_optional(&entry.path().join("owner"))
            .ok()
            .flatten()
            .map(|bytes| PathBuf::from(bytes_to_os(trim_nl(&bytes))));
        out.push(OwnerRecord {
            id,
            dir: entry.path(),
            owner,
        });
    }
    out.sort_by(|a, b| a.dir.cmp(&b.dir));
    Ok(out)
}

/// Whether `a` and `b` are the same folder: a probe file written through one path and looked for
/// through the other (jj's secure-config design), since a bind mount has no symlink to resolve.
fn same_folder(a: &Path, b: &Path) -> bool {
    let name = format!("probe-{}", crate::ids::random_hex(8));
    let here = private_dir(a).join(&name);
    if fsutil::create_new(&here, b"", 0o600).is_err() {
        return false;
    }
    let seen = private_dir(b).join(&name).exists();
    let _ = std::fs::remove_file(&here);
    seen
}

fn trim_nl(b: &[u8]) -> &[u8] {
    b.strip_suffix(b"\n").unwrap_or(b)
}

fn bytes_to_os(b: &[u8]) -> &std::ffi::OsStr {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::OsStr::from_bytes(b)
}
