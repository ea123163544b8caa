//! Which paths git ignores, asked of `git check-ignore` as the command goes.

use super::*;

/// The paths among `paths` that git ignores, asked of git itself: the ones its ignore rules
/// match (`git check-ignore --no-index`, one call), less those git tracks (a tracked file is
/// never ignored). `check-ignore` without `--no-index` does both but took 1.2 s for 10,000 paths.
pub(super) fn ignored(root: &Path, paths: &[RelPath]) -> HashSet<RelPath> {
    if paths.is_empty() {
        return HashSet::default();
    }
    let mut input = Vec::new();
    for p in paths {
        input.extend_from_slice(p.as_bytes());
        input.push(0);
    }
    let matched = nul_list(git_output(
        root,
        &["check-ignore", "--no-index", "--stdin", "-z"],
        input,
    ));
    if matched.is_empty() {
        return matched;
    }
    let tracked = nul_list(git_output(
        root,
        &["ls-files", "-z", "--cached"],
        Vec::new(),
    ));
    matched.difference(&tracked).cloned().collect()
}

/// What git ignores, asked for a command: of one `git check-ignore` kept running
/// ([`IgnoreQuery`]), each folder once.
pub(super) struct Ignores {
    root: PathBuf,
    /// Started when first needed.
    query: Option<IgnoreQuery>,
    /// Whether git ignores each folder asked about (by its path with a trailing `/`).
    folders: HashMap<Vec<u8>, bool>,
}

impl Ignores {
    /// Whether a folder above `path` is already known to be ignored: no file is read, and git
    /// is not asked (a package folder being removed file by file).
    pub(super) fn in_ignored_folder(&self, path: &RelPath) -> bool {
        let bytes = path.as_bytes();
        bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'/')
            .any(|(i, _)| self.folders.get(&bytes[..=i]) == Some(&true))
    }

    pub(super) fn new(root: &Path) -> Ignores {
        Ignores {
            root: root.to_owned(),
            query: None,
            folders: HashMap::default(),
        }
    }

    /// Whether git ignores `path` (asked of one `git check-ignore` kept for the command). A
    /// path git cannot be asked about is not ignored: its bytes are kept.
    ///
    /// Each folder above the path is asked first, once per command: a file in an ignored folder
    /// (a package folder, a build tree) costs a lookup, not a question.
    pub(super) fn ignores(&mut self, path: &RelPath) -> bool {
        let bytes = path.as_bytes();
        for (i, _) in bytes.iter().enumerate().filter(|(_, b)| **b == b'/') {
            let folder = &bytes[..=i];
            let ignored = match self.folders.get(folder) {
                Some(known) => *known,
                None => {
                    // With its trailing `/`: git matches a folder's patterns (`build/`) only so.
                    let answer = self.ask_ignored(folder);
                    self.folders.insert(folder.to_vec(), answer);
                    answer
                }
            };
            if ignored {
                return true;
            }
        }
        self.ask_ignored(bytes)
    }

    /// [`Ignores::ignores`] asked of git for `path` alone (a path of the workspace).
    fn ask_ignored(&mut self, path: &[u8]) -> bool {
        if self.query.is_none() {
            self.query = IgnoreQuery::start(&self.root);
        }
        let answer = self.query.as_mut().and_then(|q| q.ignores(path));
        if answer.is_none() {
            self.query = None;
        }
        answer.unwrap_or(false)
    }
}

/// One `git check-ignore --stdin` kept running for a command, asked one path at a time (git
/// answers each path at once when its output is a pipe): about 40 µs a path, where a `git` per
/// path costs milliseconds.
pub(super) struct IgnoreQuery {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl IgnoreQuery {
    fn start(root: &Path) -> Option<IgnoreQuery> {
        let mut child = crate::child::die_with_parent(&mut Command::new("git"))
            .args(["check-ignore", "--stdin", "-z", "-n", "-v", "--no-index"])
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let stdin = child.stdin.take()?;
        let stdout = std::io::BufReader::new(child.stdout.take()?);
        Some(IgnoreQuery {
            child,
            stdin,
            stdout,
        })
    }

    /// Whether git's ignore rules match `path` (`None`: git did not answer).
    fn ignores(&mut self, path: &[u8]) -> Option<bool> {
        use std::io::BufRead as _;
        self.stdin.write_all(path).ok()?;
        self.stdin.write_all(b"\0").ok()?;
        self.stdin.flush().ok()?;
        // Four fields: the rule's source (empty when nothing matched), line, pattern, path.
        let mut source = Vec::new();
        self.stdout.read_until(0, &mut source).ok()?;
        for _ in 0..3 {
            let mut field = Vec::new();
            self.stdout.read_until(0, &mut field).ok()?;
            field.last().is_some_and(|b| *b == 0).then_some(())?;
        }
        Some(source.len() > 1)
    }
}

impl Drop for IgnoreQuery {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A NUL-separated list of paths, as git prints it with `-z`.
pub(super) fn nul_list(out: Vec<u8>) -> HashSet<RelPath> {
    out.split(|b| *b == 0)
        .filter_map(RelPath::from_bytes)
        .collect()
}

/// What `git ARGS` prints with `input` on its stdin (nothing when it cannot run).
pub(super) fn git_output(root: &Path, args: &[&str], input: Vec<u8>) -> Vec<u8> {
    let child = crate::child::die_with_parent(&mut Command::new("git"))
        .args(args)
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return Vec::new();
    };
    let stdin = child.stdin.take();
    let writer = std::thread::spawn(move || {
        if let Some(mut s) = stdin {
            let _ = s.write_all(&input);
        }
    });
    let mut out = Vec::new();
    if let Some(mut s) = child.stdout.take() {
        let _ = s.read_to_end(&mut out);
    }
    let _ = writer.join();
    let _ = child.wait();
    out
}
