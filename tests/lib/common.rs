//! A clean world per test: a real git repository with one commit, and Stella's settings built
//! in-process with the data dir in the same temporary folder, so nothing touches the real home.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use stella::guard::{Check, Verdict};
use stella::ids::SessionId;
use stella::paths::RelPath;
use stella::session::{Context, Outcome};
use stella::workspace::Settings;

pub struct World {
    _tmp: tempfile::TempDir,
    /// The repository's working tree (canonical).
    pub repo: PathBuf,
    /// The home folder the `git` runs get, so no user or system configuration leaks in.
    home: PathBuf,
    /// Built here as the command line builds it from the environment: the library reads none.
    pub settings: Settings,
}

impl World {
    /// A fresh repository with one commit, and settings whose data dir is beside it.
    pub fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let repo = base.join("repo");
        let home = base.join("home");
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let w = World {
            settings: Settings::new(base.join("stella")),
            _tmp: tmp,
            repo,
            home,
        };
        w.git(&["init", "-q", "-b", "main"]);
        w.write("README", "hello\n");
        w.git(&["add", "README"]);
        w.git(&["commit", "-q", "-m", "init"]);
        w
    }

    /// The workspace opened afresh, as a new process opens it.
    pub fn open(&self) -> Context {
        self.open_in(&self.repo)
    }

    /// [`World::open`] from folder `dir` inside the repository.
    pub fn open_in(&self, dir: &Path) -> Context {
        Context::open(&self.settings, dir).unwrap().0
    }

    /// Stock `git ARGS` in the repository, which must succeed: its stdout.
    pub fn git(&self, args: &[&str]) -> String {
        let mut cmd = Command::new("git");
        cmd.args(args).current_dir(&self.repo);
        for var in [
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_INDEX_FILE",
            "GIT_OBJECT_DIRECTORY",
            "GIT_CONFIG_PARAMETERS",
            "GIT_CONFIG_COUNT",
        ] {
            cmd.env_remove(var);
        }
        cmd.env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Test Author")
            .env("GIT_AUTHOR_EMAIL", "author@example.com")
            .env("GIT_COMMITTER_NAME", "Test Committer")
            .env("GIT_COMMITTER_EMAIL", "committer@example.com")
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .env("TZ", "UTC")
            .env("LC_ALL", "C");
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// The summaries of session `id`'s steps, newest first, as plain `git log` reads them from
    /// the journal store.
    pub fn git_log(&self, ctx: &Context, id: &SessionId) -> Vec<String> {
        let store = ctx.store().dir().to_str().unwrap().to_owned();
        let session = format!("refs/stella/sessions/{id}");
        self.git(&["--git-dir", &store, "log", "--format=%s", &session])
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Change a file as another party would: straight on disk, Stella not told.
    pub fn write(&self, path: &str, text: &str) {
        let abs = self.repo.join(path);
        std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
        std::fs::write(abs, text).unwrap();
    }

    pub fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.repo.join(path)).unwrap()
    }

    pub fn exists(&self, path: &str) -> bool {
        self.repo.join(path).exists()
    }
}

/// A path relative to the workspace root.
pub fn p(s: &str) -> RelPath {
    RelPath::from_bytes(s.as_bytes()).unwrap()
}

/// The checks of a refused write or delete; panics on one that went ahead.
#[track_caller]
pub fn refused(outcome: Outcome) -> Vec<Check> {
    match outcome {
        Outcome::Refused(checks) => checks,
        Outcome::Done(..) => panic!("the change went ahead; it should have been refused"),
    }
}

/// Panics unless the write or delete went ahead.
#[track_caller]
pub fn done(outcome: Outcome) {
    if let Outcome::Refused(checks) = outcome {
        let verdicts: Vec<(String, Verdict)> = checks
            .iter()
            .map(|c| (c.path.to_string(), c.verdict))
            .collect();
        panic!("the change was refused: {verdicts:?}");
    }
}
