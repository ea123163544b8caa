//! A clean world per test: a temp HOME and STELLA_HOME, a real git repository, fixed identities
//! and dates, and the binary run with nothing else from the environment.

#![allow(dead_code)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use assert_cmd::cargo::CommandCargoExt;
use serde_json::{Value, json};

pub struct World {
    pub tmp: tempfile::TempDir,
    /// The repository's working tree (canonical).
    pub repo: PathBuf,
    pub home: PathBuf,
    pub stella_home: PathBuf,
}

/// The environment every spawned process gets, and nothing more.
pub fn clean_env(cmd: &mut Command, home: &Path, stella_home: &Path) {
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("STELLA_HOME", stella_home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Test Author")
        .env("GIT_AUTHOR_EMAIL", "author@example.com")
        .env("GIT_COMMITTER_NAME", "Test Committer")
        .env("GIT_COMMITTER_EMAIL", "committer@example.com")
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .env("TZ", "UTC")
        .env("LC_ALL", "C");
    // `STELLA_TEST_PORTABLE_FS=1 cargo test` runs the suite on the fallback other systems use.
    if let Some(v) = std::env::var_os("STELLA_TEST_PORTABLE_FS") {
        cmd.env("STELLA_TEST_PORTABLE_FS", v);
    }
}

/// The repository's root, one folder above this package: the fixtures (`tests/fixtures/`), the
/// docs, `man/`, `completions/`, `install.sh` and `target/` are there.
pub fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the cli package sits in the repository")
}

/// A payload captured from a host, `tests/fixtures/<dir>/<name>.json`, its paths moved into `w`
/// (`/home/user/project` the repository, `/home/user` the home folder).
pub fn captured_payload(w: &World, dir: &str, name: &str) -> serde_json::Value {
    let path = repo_root()
        .join("tests/fixtures")
        .join(dir)
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(path)
        .unwrap()
        .replace("/home/user/project", w.repo.to_str().unwrap())
        .replace("/home/user", w.home.to_str().unwrap());
    serde_json::from_str(&text).unwrap()
}

/// `git stella hook AGENT` on `payload`: it must exit 0 and say nothing on stderr; its stdout.
pub fn hook_stdout(w: &World, agent: &str, payload: &serde_json::Value) -> String {
    let out = w.run_stdin(&["hook", agent], payload.to_string().as_bytes());
    assert_eq!(code(&out), 0, "{agent}: {payload}: {}", stderr(&out));
    assert_eq!(stderr(&out), "", "{agent}: {payload}");
    stdout(&out)
}

/// `git stella doctor` in `w`, with the built `git-stella` on PATH, as a project's hooks find it.
pub fn doctor_on_path(w: &World) -> Output {
    w.stella()
        .env("PATH", path_with_stella())
        .args(["doctor"])
        .output()
        .unwrap()
}

/// `PATH` with the built `git-stella`'s folder first: where a project's hooks, run by a real
/// host, find Stella, as they would where it is installed.
pub fn path_with_stella() -> std::ffi::OsString {
    let built = assert_cmd::cargo::cargo_bin("git-stella");
    std::env::join_paths(std::iter::once(built.parent().unwrap().to_owned()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap()
}

impl World {
    /// A fresh repository with one commit.
    pub fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let repo = base.join("repo");
        let home = base.join("home");
        let stella_home = base.join("stella");
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let w = World {
            tmp,
            repo,
            home,
            stella_home,
        };
        w.git(&["init", "-q", "-b", "main"]);
        w.write("README", "hello\n");
        w.git(&["add", "README"]);
        w.git(&["commit", "-q", "-m", "init"]);
        w
    }

    pub fn base(&self) -> PathBuf {
        self.repo.parent().unwrap().to_owned()
    }

    /// `git-stella` run in the repository.
    pub fn stella(&self) -> Command {
        self.stella_in(&self.repo)
    }

    pub fn stella_in(&self, dir: &Path) -> Command {
        let mut cmd = Command::cargo_bin("git-stella").unwrap();
        clean_env(&mut cmd, &self.home, &self.stella_home);
        cmd.current_dir(dir);
        cmd
    }

    /// Run `git-stella ARGS` and return its output.
    pub fn run(&self, args: &[&str]) -> Output {
        self.stella().args(args).output().unwrap()
    }

    /// Run `git-stella ARGS`, which must succeed; its stdout, trimmed.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "git-stella {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    /// Run `git-stella ARGS` with `stdin` and return its output.
    /// [`World::run_stdin`], which must succeed: its stdout.
    pub fn ok_stdin(&self, args: &[&str], stdin: &[u8]) -> String {
        let out = self.run_stdin(args, stdin);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        stdout(&out)
    }

    pub fn run_stdin(&self, args: &[&str], stdin: &[u8]) -> Output {
        let mut cmd = self.stella();
        cmd.args(args);
        feed(cmd, stdin)
    }

    pub fn start(&self) -> String {
        self.ok(&["session", "start"])
    }

    pub fn git(&self, args: &[&str]) -> String {
        git_in(&self.repo, &self.home, args)
    }

    pub fn write(&self, rel: &str, content: &str) {
        let p = self.repo.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(p, content).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.repo.join(rel)).unwrap()
    }

    pub fn store(&self) -> PathBuf {
        PathBuf::from(self.ok(&["store-path"]))
    }

    /// `git --git-dir=<store> ARGS`.
    pub fn store_git(&self, args: &[&str]) -> String {
        let store = self.store();
        let mut full = vec!["--git-dir", store.to_str().unwrap()];
        full.extend_from_slice(args);
        git_in(&self.repo, &self.home, &full)
    }

    /// `--session SESSION checkpoint -o ARTIFACT`, which must succeed; its stdout.
    pub fn checkpoint_to(&self, session: &str, artifact: &Path) -> String {
        self.ok(&[
            "--session",
            session,
            "checkpoint",
            "-o",
            artifact.to_str().unwrap(),
        ])
    }

    /// A new bare repository beside the workspace, `artifact` fetched into it with `refspec`.
    pub fn bare_with(&self, artifact: &Path, refspec: &str) -> PathBuf {
        let bare = self.base().join("fresh.git");
        git_in(
            &self.base(),
            &self.home,
            &["init", "-q", "--bare", bare.to_str().unwrap()],
        );
        git_in(
            &bare,
            &self.home,
            &["fetch", "-q", artifact.to_str().unwrap(), refspec],
        );
        bare
    }

    /// Leave loose object `id` of the store as a power cut can: its name there, its bytes not
    /// (and older than any command that runs next). Its path.
    pub fn empty_loose_object(&self, id: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let object = self.store().join("objects").join(&id[..2]).join(&id[2..]);
        std::fs::set_permissions(&object, std::fs::Permissions::from_mode(0o644)).unwrap();
        let f = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&object)
            .unwrap();
        f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(60))
            .unwrap();
        object
    }

    pub fn steps(&self, session: &str) -> usize {
        self.store_git(&[
            "rev-list",
            "--count",
            &format!("refs/stella/sessions/{session}"),
        ])
        .parse()
        .unwrap()
    }
}

/// Run stock git, which must succeed; its stdout, trimmed.
pub fn git_in(dir: &Path, home: &Path, args: &[&str]) -> String {
    let mut cmd = Command::new("git");
    clean_env(&mut cmd, home, &home.join("unused"));
    let out = cmd.current_dir(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Run `cmd` with `stdin` and return its output.
pub fn feed(mut cmd: Command, stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A command may exit before it reads its input (bad arguments): that is its answer.
    if let Err(e) = child.stdin.take().unwrap().write_all(stdin) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    child.wait_with_output().unwrap()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

impl World {
    /// Another "machine": a fresh clone of `other`'s repository at its HEAD, with its own HOME
    /// and STELLA_HOME.
    pub fn clone_of(other: &World) -> World {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let repo = base.join("repo");
        let home = base.join("home");
        let stella_home = base.join("stella");
        std::fs::create_dir_all(&home).unwrap();
        git_in(
            &base,
            &home,
            &[
                "clone",
                "-q",
                other.repo.to_str().unwrap(),
                repo.to_str().unwrap(),
            ],
        );
        World {
            tmp,
            repo,
            home,
            stella_home,
        }
    }
}

/// A scratch bare repository to build objects in.
pub struct Forge {
    pub dir: PathBuf,
    pub home: PathBuf,
}

impl Forge {
    pub fn new(w: &World) -> Forge {
        let dir = w.base().join(format!("forge-{}.git", rand_suffix()));
        git_in(
            &w.base(),
            &w.home,
            &["init", "-q", "--bare", dir.to_str().unwrap()],
        );
        Forge {
            dir,
            home: w.home.clone(),
        }
    }

    pub fn git_stdin(&self, args: &[&str], stdin: &[u8]) -> String {
        let mut cmd = Command::new("git");
        clean_env(&mut cmd, &self.home, &self.home);
        let mut child = cmd
            .arg("--git-dir")
            .arg(&self.dir)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
        stdout(&out).trim().to_owned()
    }

    pub fn blob(&self, bytes: &[u8]) -> String {
        self.git_stdin(&["hash-object", "-w", "--stdin"], bytes)
    }

    /// A tree from raw entries (mode, name, id), written as given: no validation at all.
    pub fn tree(&self, entries: &[(&str, &[u8], &str)]) -> String {
        let mut raw = Vec::new();
        for (mode, name, id) in entries {
            raw.extend_from_slice(mode.as_bytes());
            raw.push(b' ');
            raw.extend_from_slice(name);
            raw.push(0);
            raw.extend(hex(id));
        }
        self.git_stdin(
            &["hash-object", "-t", "tree", "--literally", "-w", "--stdin"],
            &raw,
        )
    }

    pub fn commit(&self, tree: &str) -> String {
        self.git_stdin(&["commit-tree", tree, "-m", "forged"], b"")
    }

    /// An artifact whose tip tree holds the given manifest, fingerprint and files tree.
    pub fn artifact(&self, manifest: &str, fingerprint: &str, files: Option<&str>) -> PathBuf {
        let m = self.blob(manifest.as_bytes());
        let f = self.blob(fingerprint.as_bytes());
        let o = self.blob(b"");
        let mut entries: Vec<(&str, &[u8], &str)> = Vec::new();
        if let Some(files) = files {
            entries.push(("40000", b"files", files));
        }
        entries.push(("100644", b"fingerprint", &f));
        entries.push(("100644", b"origins", &o));
        entries.push(("100644", b"stella.toml", &m));
        let tip = self.commit(&self.tree(&entries));
        let repo = gix::open(&self.dir).unwrap();
        let path = self.dir.with_extension(format!("{}.bundle", rand_suffix()));
        let mut file = std::fs::File::create(&path).unwrap();
        stella::artifact::write_bundle(
            &repo,
            "refs/stella/checkpoints/evil",
            gix::ObjectId::from_hex(tip.as_bytes()).unwrap(),
            &mut file,
        )
        .unwrap();
        path
    }
}

pub fn hex(id: &str) -> Vec<u8> {
    (0..id.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&id[i..i + 2], 16).unwrap())
        .collect()
}

pub fn rand_suffix() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

pub fn manifest(format: &str) -> String {
    format!(
        "format = {format}\nsession = \"evil\"\nbase = \"none\"\nobject_format = \"sha1\"\nproducer = \"forge\"\nstarted = \"\"\nlast_step = \"\"\nsteps = 1\n"
    )
}

pub fn b3(bytes: &[u8]) -> String {
    stella::digest::Digest::of(bytes).to_hex()
}

/// Make a FIFO at `path` (`mkfifo`), which must succeed.
pub fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// Every file under `dir`, for "nothing was written" checks; but the remembered pass of the
/// configuration check (`.stella/private/git-config-checked`), which any command that checks
/// the configuration writes once the configuration has settled, refused or not.
pub fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                stack.push(p.clone());
            }
            if p.ends_with(".stella/private/git-config-checked") {
                continue;
            }
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Stella's refusal of a write to `file` that changed since the session read it, word for word;
/// `diff`: the hunk from what the session saw to what is on disk.
pub fn write_refusal(file: &str, diff: &str) -> String {
    format!(
        "refusing to write: {file}\n\
{file} changed since this session last read it: another process or a person edited it after this session looked.\n\
This write would overwrite their work with a plan formed against content that no longer exists.\n\
Nothing was written. To recover, re-read {file} and redo the change against what is there now.\n\
--- {file} (seen by this session)\n\
+++ {file} (on disk now)\n\
{diff}"
    )
}

/// The pack inside the bundle at `artifact`, indexed and verified by stock git (`git index-pack`,
/// `git verify-pack -v`, which refuses a pack holding one object twice): its listing, a line
/// per entry, `<id> <kind> <size> <size in pack> <offset>` and for a delta its depth and base.
pub fn verified_pack(w: &World, artifact: &Path) -> String {
    let bytes = std::fs::read(artifact).unwrap();
    let start = bytes.windows(4).position(|b| b == b"PACK").unwrap();
    let dir = tempfile::tempdir_in(w.base()).unwrap();
    let pack = dir.path().join("a.pack");
    std::fs::write(&pack, &bytes[start..]).unwrap();
    git_in(dir.path(), &w.home, &["index-pack", "a.pack"]);
    git_in(dir.path(), &w.home, &["verify-pack", "-v", "a.idx"])
}

/// A captured Claude Code payload (`tests/fixtures/claude-code/NAME`), its paths moved into `w`'s
/// repository and home.
pub fn claude_fixture_text(w: &World, name: &str) -> String {
    let path = repo_root().join("tests/fixtures/claude-code").join(name);
    std::fs::read_to_string(path)
        .unwrap()
        .replace("/home/dev/src/demo", w.repo.to_str().unwrap())
        .replace("/home/dev", w.home.to_str().unwrap())
}

/// Whether `program` is on PATH. Without it a test says it skipped `what`, loudly; under CI
/// (`CI` set, where `.ci/run` installs every tool the tests drive) a missing tool fails instead.
pub fn have(program: &str, what: &str) -> bool {
    let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .any(|d| d.join(program).is_file());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "'{program}' is missing under CI, where .ci/run installs it ({what})"
        );
        skipped(&format!("{what}: '{program}' is not installed"));
    }
    found
}

/// Say that part of a test was skipped, past the test harness's output capture, so that a
/// passing run still shows it.
pub fn skipped(what: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED: {what}");
}

/// Copy the binary `src` to `dst` and wait until it can be run: another test thread that forks
/// while the copy's file is still open for writing holds it open until its child execs, and
/// running it meanwhile fails with "Text file busy".
pub fn copy_binary(src: &Path, dst: &Path) {
    std::fs::copy(src, dst).unwrap();
    for _ in 0..200 {
        match Command::new(dst)
            .arg("--version")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
        {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(10))
            }
            _ => return,
        }
    }
    panic!("{} stayed busy", dst.display());
}

/// The Claude Code transcript path of the fixtures' session under `w`'s home (its folder
/// created), and the captured sample transcript's bytes.
pub fn claude_transcript(w: &World) -> (PathBuf, Vec<u8>) {
    let sid = "e6c55faa-d7b7-44f5-8458-fd227d2da938";
    let transcript = w
        .home
        .join(format!(".claude/projects/-home-dev-src-demo/{sid}.jsonl"));
    std::fs::create_dir_all(transcript.parent().unwrap()).unwrap();
    let sample =
        std::fs::read(repo_root().join("tests/fixtures/claude-code/transcript-sample.jsonl"))
            .unwrap();
    (transcript, sample)
}

/// The system calls `calls` (strace's `trace=` list) of `git-stella ARGS` run in `w`, one line
/// each, file descriptors shown with their paths (`-y`) and process ids stripped; `children`:
/// the processes it starts too; `env`: more environment.
pub fn strace(
    w: &World,
    args: &[&str],
    calls: &str,
    children: bool,
    env: &[(&str, &str)],
) -> Vec<String> {
    let log = w.base().join("strace.log");
    let mut cmd = Command::new("strace");
    clean_env(&mut cmd, &w.home, &w.stella_home);
    cmd.envs(env.iter().copied());
    if children {
        cmd.arg("-f");
    }
    let out = cmd
        .current_dir(&w.repo)
        .args(["-qq", "-y", "-e", "signal=none", "-e"])
        .arg(format!("trace={calls}"))
        .arg("-o")
        .arg(&log)
        .arg(assert_cmd::cargo::cargo_bin("git-stella"))
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| match l.split_once(' ') {
            Some((pid, rest)) if children && pid.bytes().all(|b| b.is_ascii_digit()) => {
                rest.trim_start().to_owned()
            }
            _ => l.to_owned(),
        })
        .collect()
}

/// A Gemini CLI hook payload for `w`, shaped as Gemini CLI 0.61.0 sends it.
pub fn gemini_payload(
    w: &World,
    event: &str,
    tool: &str,
    input: serde_json::Value,
    response: Option<serde_json::Value>,
) -> serde_json::Value {
    let mut p = serde_json::json!({
        "session_id": "5f0c8d1e-2a3b-4c5d-9e8f-7a6b5c4d3e2f",
        "transcript_path": w.home.join(".gemini/tmp/chats/session.json"),
        "cwd": w.repo,
        "hook_event_name": event,
        "timestamp": "2026-11-29T23:00:00.000Z",
        "tool_name": tool,
        "tool_input": input,
    });
    if let Some(r) = response {
        p["tool_response"] = r;
    }
    p
}

/// Another process holding the workspace's owner lock, its owner record gone: a command that
/// opens the workspace waits for it. Kill the child to let go.
pub fn hold_owner_lock(w: &World) -> std::process::Child {
    let id_dir = PathBuf::from(w.ok(&["store-path"]))
        .parent()
        .unwrap()
        .to_owned();
    std::fs::remove_file(id_dir.join("owner")).unwrap();
    hold_lock(&id_dir.join("owner.lock"))
}

/// Another process holding `lock` (flock) until it is killed. Returns once the lock is held, so
/// a test never races the holder on a busy machine; killing the returned child lets it go.
pub fn hold_lock(lock: &Path) -> std::process::Child {
    use std::io::BufRead as _;
    // `-o`: the command does not inherit the locked descriptor, so the lock ends with `flock`.
    let mut holder = Command::new("flock")
        .arg("-o")
        .arg(lock)
        .args(["sh", "-c", "echo held; exec sleep 30"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(holder.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "held\n", "flock did not take {}", lock.display());
    holder
}

/// The path of a real agent client named by the environment variable `var` (`.ci/run` installs
/// the client and sets it), or `None`: the test says it skipped `what`, loudly. Under CI (`CI`
/// set) a missing client fails the test instead.
pub fn client_bin(var: &str, what: &str) -> Option<PathBuf> {
    match std::env::var_os(var).filter(|v| !v.is_empty()) {
        Some(bin) => {
            let bin = PathBuf::from(bin);
            assert!(bin.is_file(), "{var} names no file: {}", bin.display());
            Some(bin)
        }
        None => {
            assert!(
                std::env::var_os("CI").is_none_or(|v| v.is_empty()),
                "CI is set but {var} is not: {what} must run in CI (.ci/run installs it)"
            );
            skipped(&format!(
                "{what}: set {var} to the client (.ci/run installs it)"
            ));
            None
        }
    }
}

/// Run `cmd` to its end, for at most `limit`, in a process group of its own, then SIGKILL what is
/// left of the group: a client that starts helpers (node relaunching itself, a shell's background
/// job) leaves nothing running. Its output is read as it comes, so a chatty client never blocks.
pub fn run_bounded(cmd: &mut Command, limit: std::time::Duration) -> Output {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    let mut child = cmd
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let group = child.id() as i32;
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            child.kill().unwrap();
            break child.wait().unwrap();
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    // SAFETY: kill(2) with a negative pid signals the group the child led; nothing else.
    unsafe { libc::kill(-group, libc::SIGKILL) };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// One HTTP/1.1 request, as a loopback mock of a model API reads it.
pub struct HttpRequest {
    pub method: String,
    /// Without the query.
    pub path: String,
    pub query: String,
    pub body: Vec<u8>,
}

/// The next request on a connection, or `None` when the client closed it.
pub fn read_http_request(
    reader: &mut impl std::io::BufRead,
) -> std::io::Result<Option<HttpRequest>> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let target = parts.next().unwrap_or_default();
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let (path, query) = (path.to_owned(), query.to_owned());
    let mut length = 0;
    let mut chunked = false;
    loop {
        let mut h = String::new();
        reader.read_line(&mut h)?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let lower = h.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
            chunked = true;
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            let mut chunk = vec![0; n + 2];
            reader.read_exact(&mut chunk)?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else {
        body.resize(length, 0);
        reader.read_exact(&mut body)?;
    }
    Ok(Some(HttpRequest {
        method,
        path,
        query,
        body,
    }))
}

/// A loopback HTTP server on a free port, each connection on a thread of its own: `answer` gets
/// every request and writes the reply, returning whether the connection stays open.
pub fn serve_loopback<F>(answer: F) -> u16
where
    F: Fn(HttpRequest, &mut std::net::TcpStream) -> std::io::Result<bool> + Send + Sync + 'static,
{
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let answer = std::sync::Arc::new(answer);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let answer = std::sync::Arc::clone(&answer);
            std::thread::spawn(move || -> std::io::Result<()> {
                conn.set_read_timeout(Some(std::time::Duration::from_secs(120)))?;
                let mut reader = std::io::BufReader::new(conn.try_clone()?);
                while let Some(request) = read_http_request(&mut reader)? {
                    if !answer(request, &mut conn)? {
                        break;
                    }
                }
                Ok(())
            });
        }
    });
    port
}

/// Whether this machine can run the shell guard (`git stella exec --check`); a loud skip when it
/// cannot, and a failure under CI, which must be able to.
pub fn guarded_here(w: &World) -> bool {
    let out = w.run(&["exec", "--check"]);
    if code(&out) == 0 {
        return true;
    }
    let why = stderr(&out);
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must be able to run the shell guard: {why}"
    );
    skipped(&format!("this machine cannot run the shell guard: {why}"));
    false
}

/// Run `script` with `sh` in the repository inside a user and mount namespace of its own (where
/// it may mount a tmpfs: see [`can_mount_tmpfs`]), with the test's clean environment, `BIN` set
/// to the git-stella cargo built, and `envs`.
pub fn sh_unshared(w: &World, script: &str, envs: &[(&str, &Path)]) -> std::process::Output {
    let mut cmd = Command::new("unshare");
    clean_env(&mut cmd, &w.home, &w.stella_home);
    cmd.args(["-rm", "sh", "-c", script])
        .env("BIN", assert_cmd::cargo::cargo_bin("git-stella"))
        .current_dir(&w.repo);
    for (name, value) in envs {
        cmd.env(name, value);
    }
    cmd.output().unwrap()
}

/// Whether this machine lets an unprivileged process mount a tmpfs in its own namespaces.
pub fn can_mount_tmpfs() -> bool {
    let ok = Command::new("unshare")
        .args(["-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"])
        .output()
        .is_ok_and(|o| o.status.success());
    // A kernel setting, not a tool .ci/run could install: skipped loudly everywhere, as the
    // bind-mount test does.
    if !ok {
        skipped("a full-store test: 'unshare -rm' cannot mount a tmpfs on this machine");
    }
    ok
}

/// The python interpreter that can import the `mcp` package (resolved with the test's own
/// environment, since spawned processes get a clean one). Without it the caller is skipped
/// locally (saying `what`), and fails under CI (`CI` set), where `.ci/run` installs it.
pub fn mcp_python(what: &str) -> Option<PathBuf> {
    python_with("mcp.client.stdio", "mcp", what)
}

/// The python interpreter that can import `module` (of the PyPI package `package`), as
/// [`mcp_python`] finds it.
pub fn python_with(module: &str, package: &str, what: &str) -> Option<PathBuf> {
    let out = Command::new("python3")
        .args([
            "-c",
            &format!("import {module}, sys; print(sys.executable)"),
        ])
        .output()
        .ok()
        .filter(|o| o.status.success());
    if out.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "python3 cannot import '{module}'; .ci/run installs '{package}' with pip"
        );
        skipped(&format!(
            "{what}: python3 cannot import '{module}'; run 'pip install {package}' to run them"
        ));
    }
    out.map(|o| PathBuf::from(String::from_utf8(o.stdout).unwrap().trim()))
}

/// `git stella hook AGENT` on `payload`, which must exit 0; its stdout as JSON (`Null` when
/// empty).
pub fn hook_json(w: &World, agent: &str, payload: &serde_json::Value) -> serde_json::Value {
    let out = w.run_stdin(&["hook", agent], payload.to_string().as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    if text.trim().is_empty() {
        serde_json::Value::Null
    } else {
        serde_json::from_str(&text).unwrap()
    }
}

/// Whether a hook's answer denies the tool call (Gemini CLI's and Cursor's `decision`, the
/// `permissionDecision` of Claude Code and Codex).
pub fn denies(v: &serde_json::Value) -> bool {
    v["decision"] == "deny" || v["hookSpecificOutput"]["permissionDecision"] == "deny"
}

/// Replace Stella's hook in the host settings file `settings` (inside the repository) with a
/// wrapper that runs it and then, right after its answer to the before-event `before` of a
/// `tool` call, has session `other` write notes.txt through Stella: another writer landing
/// between the check and the host's own write. With `times`, the moments just after that
/// answer and just before the after-event `after` are kept in `<times>.before` and
/// `<times>.after` (nanoseconds).
pub fn wrap_hook_with_other_writer(
    w: &World,
    settings: &str,
    agent: &str,
    (before, after, tool): (&str, &str, &str),
    times: &Path,
) {
    let stella = assert_cmd::cargo::cargo_bin("git-stella");
    let wrapper = w.base().join("hook-then-other-writer.sh");
    let (stella, times) = (stella.display(), times.display());
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\np=$(cat)\ncase \"$p\" in *'\"{after}\"'*'\"{tool}\"'*) date +%s%N > '{times}.after' ;; esac\nprintf '%s' \"$p\" | '{stella}' hook {agent}\nrc=$?\ncase \"$p\" in *'\"{before}\"'*'\"{tool}\"'*) printf 'alpha\\nbeta\\nthe other session\\n' | '{stella}' --session other write notes.txt >/dev/null 2>&1; date +%s%N > '{times}.before' ;; esac\nexit $rc\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let settings = w.repo.join(settings);
    let mut text = std::fs::read_to_string(&settings).unwrap();
    // A project's hooks, as JSON strings: each of the two a host's events hold.
    let wrapped = serde_json::to_string(&wrapper.display().to_string()).unwrap();
    for blocks in [true, false] {
        let hook = stella::hosts::install::portable_command(agent, blocks);
        let hook = serde_json::to_string(&hook).unwrap();
        assert!(text.contains(&hook), "{text}");
        text = text.replace(&hook, &wrapped);
    }
    std::fs::write(&settings, text).unwrap();
}

/// Milliseconds from `<times>.before` to `<times>.after` (see [`wrap_hook_with_other_writer`]).
pub fn window_ms(times: &Path) -> f64 {
    let at = |end: &str| -> u128 {
        std::fs::read_to_string(format!("{}.{end}", times.display()))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    (at("after") - at("before")) as f64 / 1e6
}

pub fn session(w: &World) -> String {
    w.ok(&["session", "start", "--id", "s"])
}

/// `git fsck` of the store finds nothing wrong.
pub fn fsck_clean(w: &World) {
    let out = w.store_git(&["fsck", "--strict", "--no-progress"]);
    assert!(!out.contains("missing") && !out.contains("error"), "{out}");
}

/// `git-stella` in `w`, held to the permission bits: root searches and writes any folder, so
/// under root it runs without the two capabilities that allow that.
pub fn held_to_mode_bits(w: &World) -> Command {
    if !is_root() {
        return w.stella();
    }
    let mut c = Command::new("setpriv");
    c.args(["--bounding-set", "-dac_override,-dac_read_search", "--"])
        .arg(assert_cmd::cargo::cargo_bin("git-stella"));
    clean_env(&mut c, &w.home, &w.stella_home);
    c.current_dir(&w.repo);
    c
}

pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A session `old`, then (after `idle`) a session `new`.
pub fn two_sessions_apart(w: &World, idle: Duration) {
    w.write("a.txt", "alpha\n");
    w.ok(&["session", "start", "--id", "old"]);
    w.ok(&["--session", "old", "read", "a.txt"]);
    std::thread::sleep(idle);
    w.ok(&["session", "start", "--id", "new"]);
}

pub fn sessions(w: &World) -> Vec<String> {
    let mut ids: Vec<String> = w
        .ok(&["session", "list"])
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect();
    ids.sort();
    ids
}

pub fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// Replay `artifact` with `args`; assert the exit code and that the message contains `says`,
/// that no session appeared and nothing outside the repository changed.
pub fn refused(w: &World, args: &[&str], artifact: &Path, exit: i32, says: &str) {
    let outside = w.base().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let before = listing(&outside);
    let mut full: Vec<&str> = args.to_vec();
    full.push(artifact.to_str().unwrap());
    let out = w.run(&full);
    assert_eq!(code(&out), exit, "{full:?}: {}", stderr(&out));
    assert!(stderr(&out).contains(says), "{full:?}: {}", stderr(&out));
    assert_eq!(listing(&outside), before, "something was written outside");
    assert_eq!(w.ok(&["session", "list"]), "", "a session appeared");
}

pub fn hook(w: &World, agent: &str, payload: &Value) -> std::process::Output {
    w.run_stdin(&["hook", agent], payload.to_string().as_bytes())
}

/// Run a hook that must succeed; its stdout as JSON (`Null` when it printed nothing).
pub fn answer(w: &World, agent: &str, payload: &Value) -> Value {
    let out = hook(w, agent, payload);
    assert_eq!(code(&out), 0, "hook {agent} failed: {}", stderr(&out));
    assert_eq!(stderr(&out), "", "hook {agent} said something on stderr");
    let text = stdout(&out);
    if text.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap()
    }
}

pub fn refusal(path: &str, seen: &str, now: &str) -> String {
    write_refusal(path, &format!("@@ -1 +1 @@\n-{seen}\n+{now}"))
}

// ---- Codex ----

pub fn codex_schema(name: &str) -> Value {
    let path = repo_root().join(format!("tests/fixtures/codex-0.171.0/{name}.schema.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Check an object against one of Codex's own schemas as far as these shapes need: every
/// required key present, no key the schema does not know (they say `additionalProperties: false`).
pub fn conforms(value: &Value, schema: &Value) {
    let obj = value.as_object().unwrap();
    let known = schema["properties"].as_object().unwrap();
    for r in schema["required"].as_array().into_iter().flatten() {
        assert!(
            obj.contains_key(r.as_str().unwrap()),
            "missing {r} in {value}"
        );
    }
    for k in obj.keys() {
        assert!(known.contains_key(k), "{k} is not in Codex's schema");
    }
}

pub fn codex(w: &World, event: &str, patch: &str) -> Value {
    let mut p = json!({
        "session_id": "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
        "transcript_path": null,
        "cwd": w.repo,
        "hook_event_name": event,
        "model": "gpt-5-codex",
        "permission_mode": "default",
        "tool_name": "apply_patch",
        "tool_input": {"command": patch},
        "tool_use_id": "call_1",
        "turn_id": "turn_1",
    });
    if event == "PostToolUse" {
        p["tool_response"] = json!("Success. Updated the following files:\n");
        conforms(&p, &codex_schema("post-tool-use.command.input"));
    } else {
        conforms(&p, &codex_schema("pre-tool-use.command.input"));
    }
    p
}

// ---- Cursor ----

pub fn cursor(w: &World, event: &str, fields: Value) -> Value {
    let mut p = json!({
        "hook_event_name": event,
        "conversation_id": "c0ffee00-1234-4abc-8def-001122334455",
        "generation_id": "gen-1",
        "workspace_roots": [w.repo],
        "cursor_version": "2.0.77",
    });
    for (k, v) in fields.as_object().unwrap() {
        p[k] = v.clone();
    }
    p
}

/// A session that read two files, edited one and created a third; returns (session, artifact).
pub fn session_with_work(w: &World) -> (String, PathBuf) {
    w.write("src/lib.rs", "pub fn one() {}\n");
    w.write("notes.txt", "alpha\nbeta\n");
    w.git(&["add", "."]);
    w.git(&["commit", "-q", "-m", "work"]);
    let s = w.start();
    w.ok(&["--session", &s, "read", "src/lib.rs", "notes.txt"]);
    let out = w.run_stdin(
        &["--session", &s, "write", "src/lib.rs"],
        b"pub fn one() { two() }\n",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = w.run_stdin(
        &["--session", &s, "write", "src/new.rs"],
        b"pub fn two() {}\n",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let path = PathBuf::from(w.ok(&["--session", &s, "checkpoint"]));
    (s, path)
}

pub fn git_at(dir: &Path, w: &World, args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new("git");
    clean_env(&mut cmd, &w.home, &w.stella_home);
    cmd.current_dir(dir).args(args).output().unwrap()
}
