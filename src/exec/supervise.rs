//! The shell guard's supervisor (Linux): spawn the command under the seccomp filter and answer
//! each notification until it exits, then record one step.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use gix::ObjectId;

use crate::digest::Digest;
use crate::guard::{self, Check, Disk, Intent};
use crate::ids::SessionId;
use crate::journal::{self, Entry, Journal, MapEdit, Seen, Step};
use crate::paths::{self, RelPath};
use crate::record::{self, Replaced};
use crate::session::Context;

use super::notify::{self, Answer, Listener, Received};
use super::{BATCH_PATHS, BYTES_BUDGET, Error, Report, SESSION_ENV, exit_code, filter, support};

/// Run `command` under the guard of session `id`, printing refusals to `err` (the command's own
/// stderr), then record what it read and wrote as one step. `label` names the command in the
/// step's summary (its command line when `None`).
pub fn run(
    context: &Context,
    id: &SessionId,
    mut command: Command,
    label: Option<&str>,
    err: &mut dyn Write,
) -> Result<Report, Error> {
    support().map_err(Error::Unsupported)?;
    let program_name = command.get_program().to_owned();
    let line = command_line(&command);
    let summary = format!(
        "exec {}",
        short(label.unwrap_or(&line.to_string_lossy()), 72)
    );
    let journal = context.journal();
    let start = journal.tip(id)?;
    command.env(SESSION_ENV, id.as_str());
    let _quiet = IgnoreInterrupts::new();
    let (mut child, listener) = spawn(command)?;
    let mut sup = Supervisor {
        root: context.ws.root.clone(),
        journal: &journal,
        tree: start.tree,
        known: HashMap::new(),
        last_read: HashMap::new(),
        reads: HashMap::new(),
        read_seq: HashMap::new(),
        moves: Vec::new(),
        seq: 0,
        renamed_by: HashMap::new(),
        touched: Vec::new(),
        touched_set: HashSet::new(),
        origins: HashMap::new(),
        refused: Vec::new(),
        refusals: Vec::new(),
        told: HashSet::new(),
        told_stella: HashSet::new(),
        inodes: None,
        data_dir: protected_data_dir(&context.ws.data_dir, &context.ws.root),
        processes: HashMap::new(),
        kept: 0,
        err,
    };
    let served = listener.serve(child.id(), |req| sup.handle(&listener, req));
    // Whatever still runs of the command gets ENOSYS from now on, never an unchecked call (and a
    // command still running after a failure to serve it is not left waiting for an answer).
    drop(listener);
    let status = child.wait();
    let status = match (served, status) {
        (Ok(()), Ok(s)) => s,
        (Err(source), _) | (_, Err(source)) => {
            return Err(Error::Supervise {
                program: program_name,
                source,
            });
        }
    };
    sup.record(id, status, summary).map_err(|e| match e {
        Error::Journal(source) => Error::Unrecorded {
            program: program_name,
            code: exit_code(status),
            source,
        },
        other => other,
    })
}

/// Start `command` with the filter installed, and take its listener.
fn spawn(mut command: Command) -> Result<(std::process::Child, Listener), Error> {
    let program_name = command.get_program().to_owned();
    let (ours, theirs) = UnixStream::pair().map_err(|source| Error::Spawn {
        program: program_name.clone(),
        source,
    })?;
    let child_sock = theirs.as_raw_fd();
    let program = notify::Program::new();
    // SAFETY: the closure only makes async-signal-safe system calls on memory it owns.
    unsafe {
        command.pre_exec(move || notify::install_in_child(&program.fprog(), child_sock));
    }
    let spawned = command.spawn();
    drop(theirs);
    let mut child = match spawned {
        Ok(c) => c,
        Err(source) => {
            return Err(match notify::receive(ours.as_raw_fd()) {
                // A process has one supervisor at most: this one runs under Stella's already.
                Ok(Received::Failed(e))
                    if e.raw_os_error() == Some(libc::EBUSY) && under_stella() =>
                {
                    Error::Nested
                }
                Ok(Received::Failed(e)) => Error::Unsupported(why_not(&e)),
                _ => Error::Spawn {
                    program: program_name,
                    source,
                },
            });
        }
    };
    match notify::receive(ours.as_raw_fd()) {
        Ok(Received::Listener(fd)) => Ok((child, Listener::new(fd))),
        other => {
            let _ = child.kill();
            let _ = child.wait();
            let source = match other {
                Err(e) | Ok(Received::Failed(e)) => e,
                _ => io::Error::other("the command started without its filter"),
            };
            Err(Error::Supervise {
                program: program_name,
                source,
            })
        }
    }
}

/// Try the guard for real on `true`: whether this machine, inside whatever container or sandbox
/// it runs, lets a command run under it.
pub fn probe() -> Result<(), String> {
    support()?;
    let mut command = Command::new("true");
    command.stdin(Stdio::null()).stdout(Stdio::null());
    let (mut child, listener) = spawn(command).map_err(|e| match e {
        Error::Unsupported(why) => why,
        other => crate::report::Report::of(&other).one_line(),
    })?;
    // The guard must read the paths a command names out of its memory: where ptrace rules
    // forbid that (`kernel.yama.ptrace_scope` 2 or 3), every checked call would be refused.
    let mut unreadable = None;
    listener
        .serve(child.id(), |n| {
            if let Some(filter::Call::Open { path, .. }) = filter::decode(n.data.nr)
                && let Err(e) = notify::read_path(n.pid, n.data.args[path])
                && matches!(e.raw_os_error(), Some(libc::EPERM | libc::EACCES))
            {
                unreadable = Some(e);
            }
            Answer::Continue
        })
        .map_err(|e| e.to_string())?;
    let status = child.wait().map_err(|e| e.to_string())?;
    if let Some(e) = unreadable {
        return Err(format!(
            "this process may not read the memory of the commands it starts ({e}); see kernel.yama.ptrace_scope"
        ));
    }
    if status.success() {
        Ok(())
    } else {
        Err(format!("a trial command under the guard failed ({status})"))
    }
}

/// Why the filter could not be installed, in words.
fn why_not(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EBUSY) => format!(
            "the process already runs under another seccomp supervisor, and a process can have only one ({e})"
        ),
        Some(libc::EACCES | libc::EPERM) => {
            format!("the container or sandbox forbids installing a seccomp filter ({e})")
        }
        Some(libc::EINVAL | libc::ENOSYS) => {
            format!("the kernel offers no seccomp user notification ({e})")
        }
        _ => e.to_string(),
    }
}

/// The command line, for the step's summary.
fn command_line(command: &Command) -> OsString {
    let mut line = command.get_program().to_owned();
    for a in command.get_args() {
        line.push(" ");
        line.push(a);
    }
    line
}

fn short(text: &str, max: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    let cut: String = one_line.chars().take(max).collect();
    format!("{cut}…")
}

/// While the command runs, Ctrl-C and Ctrl-\ are the command's: the supervisor stays to record
/// what it did (as a shell does while it waits for a command).
struct IgnoreInterrupts {
    old: [libc::sighandler_t; 2],
}

impl IgnoreInterrupts {
    fn new() -> Self {
        // SAFETY: setting dispositions to SIG_IGN; the old ones are restored on drop.
        unsafe {
            IgnoreInterrupts {
                old: [
                    libc::signal(libc::SIGINT, libc::SIG_IGN),
                    libc::signal(libc::SIGQUIT, libc::SIG_IGN),
                ],
            }
        }
    }
}

impl Drop for IgnoreInterrupts {
    fn drop(&mut self) {
        // SAFETY: restoring the dispositions saved in `new`.
        unsafe {
            libc::signal(libc::SIGINT, self.old[0]);
            libc::signal(libc::SIGQUIT, self.old[1]);
        }
    }
}

/// What this command saw or did to a path so far.
#[derive(Clone, Debug)]
enum Known {
    /// It read these bytes.
    Read(Digest),
    /// It changed the path: its own work, not checked again within the command.
    Changed,
    /// A rename brought here what the session knew, when the command started, of another path.
    Moved(RelPath),
    /// A rename took the path away, or put there bytes the session never saw: nothing known.
    Nothing,
}

/// How close before its own change a process's read of the same path counts as the tool reading
/// what it rewrites rather than a read the agent acted on: tools read and write within
/// milliseconds, while an agent reads, thinks for seconds, then writes.
const TOOL_READ: Duration = Duration::from_secs(1);

/// What a process's reads of a path replaced, until that process changes the path.
struct LastRead {
    /// The thread group (process) that read it.
    process: u32,
    /// When it last read it.
    at: Instant,
    known: Option<Known>,
    snapshot: Option<Snapshot>,
}

/// Put back `value` for `key` (`None`: remove it).
fn restore<V>(map: &mut HashMap<RelPath, V>, key: &RelPath, value: Option<V>) {
    match value {
        Some(v) => {
            map.insert(key.clone(), v);
        }
        None => {
            map.remove(key);
        }
    }
}

/// A file's bytes as the guard saw them.
struct Snapshot {
    digest: Digest,
    /// The bytes themselves, while the command's budget lasts.
    bytes: Option<Vec<u8>>,
    exec: bool,
}

/// Where a path named by a call lies.
enum Located {
    Inside(RelPath),
    /// Outside the workspace, or in `.git/` (git writes there itself): not the guard's business.
    Elsewhere,
    /// In `.stella/` or Stella's data folder: only Stella itself may change it.
    Stella(PathBuf),
    /// The path could not be read or resolved.
    Unknown(io::Error),
}

struct Supervisor<'a, 'j> {
    root: PathBuf,
    journal: &'a Journal<'j>,
    /// The session's map when the command started.
    tree: ObjectId,
    known: HashMap<RelPath, Known>,
    /// Who read each path last, and what that read replaced.
    last_read: HashMap<RelPath, LastRead>,
    /// What the command read.
    reads: HashMap<RelPath, Snapshot>,
    /// When (in the order of the command's events) it last read each path.
    read_seq: HashMap<RelPath, u64>,
    /// The renames that carried the session's knowledge, in order, each with its place in the
    /// order of events.
    moves: Vec<(u64, RelPath, RelPath)>,
    /// Which process renamed a file to each path, and when.
    renamed_by: HashMap<RelPath, (u32, Instant)>,
    /// The count of events so far: reads and renames.
    seq: u64,
    /// What the command changed, in order.
    touched: Vec<RelPath>,
    touched_set: HashSet<RelPath>,
    /// The bytes a path held before the command first changed it (`None`: it did not exist).
    origins: HashMap<RelPath, Option<Digest>>,
    refused: Vec<RelPath>,
    /// What was refused, for the step's trace.
    refusals: Vec<crate::refusals::Record>,
    /// The process of each thread seen so far.
    processes: HashMap<u32, u32>,
    /// Which process was told of which refusal.
    told: HashSet<(RelPath, u32)>,
    /// Which processes were told that they may not change Stella's own state.
    told_stella: HashSet<u32>,
    /// The files the session tracked when the command started, by device and inode: built
    /// the first time a file with several names is changed.
    inodes: Option<HashMap<(u64, u64), Entry>>,
    /// Stella's data folder (the sessions' stores), resolved: out of the command's reach.
    data_dir: PathBuf,
    /// How many bytes of snapshots are kept so far, against [`BYTES_BUDGET`].
    kept: u64,
    err: &'a mut dyn Write,
}

impl Supervisor<'_, '_> {
    /// The process (thread group) of thread `tid`, looked up once per thread.
    fn process_of(&mut self, tid: u32) -> u32 {
        *self
            .processes
            .entry(tid)
            .or_insert_with(|| notify::tgid(tid))
    }

    fn handle(&mut self, listener: &Listener, req: &libc::seccomp_notif) -> Answer {
        let Some(call) = filter::decode(req.data.nr) else {
            return Answer::Continue;
        };
        let args = req.data.args;
        let fd = |i: Option<usize>| i.map(|i| args[i] as libc::c_int);
        match call {
            filter::Call::Open { dirfd, path, flags } => {
                let flags = match flags {
                    Some(i) => args[i] as libc::c_int,
                    None => libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC,
                };
                self.open(listener, req, fd(dirfd), args[path], flags)
            }
            filter::Call::Openat2 => {
                // `struct open_how` starts with its u64 flags.
                let mut how = [0u8; 8];
                match notify::read_memory(req.pid, args[2], &mut how) {
                    Ok(8) if args[3] >= 8 => {
                        let flags = u64::from_ne_bytes(how) as libc::c_int;
                        self.open(listener, req, Some(args[0] as libc::c_int), args[1], flags)
                    }
                    // Nothing to read: the kernel fails the call itself.
                    _ => Answer::Continue,
                }
            }
            filter::Call::Truncate => {
                let located = self.locate(listener, req, None, args[0], true);
                self.change(req, located, Intent::Write { content: None })
            }
            filter::Call::Unlink { dirfd, path } => {
                if dirfd.is_some() && args[2] as libc::c_int & libc::AT_REMOVEDIR != 0 {
                    return Answer::Continue;
                }
                let located = self.locate(listener, req, fd(dirfd), args[path], false);
                self.change(req, located, Intent::Delete)
            }
            filter::Call::Rename { from, to, flags } => {
                let flags = flags.map_or(0, |i| args[i] as libc::c_uint);
                let to_path = self.locate(listener, req, fd(to.0), args[to.1], false);
                let from_path = self.locate(listener, req, fd(from.0), args[from.1], false);
                self.rename(req, from_path, to_path, flags)
            }
            filter::Call::Link { to } => {
                let located = self.locate(listener, req, fd(to.0), args[to.1], false);
                // A new name for an existing file writes no bytes: a later write through it is
                // checked as a write of that file (see `linked`).
                match self.check(req, located, Intent::Write { content: None }) {
                    Ok(Some((path, _))) => {
                        self.known.remove(&path);
                        self.last_read.remove(&path);
                        Answer::Continue
                    }
                    Ok(None) => Answer::Continue,
                    Err(answer) => answer,
                }
            }
        }
    }

    fn open(
        &mut self,
        listener: &Listener,
        req: &libc::seccomp_notif,
        dirfd: Option<libc::c_int>,
        addr: u64,
        flags: libc::c_int,
    ) -> Answer {
        let writes = flags & libc::O_ACCMODE != libc::O_RDONLY
            || flags & (libc::O_TRUNC | libc::O_CREAT) != 0;
        let follow = flags & libc::O_NOFOLLOW == 0;
        let located = self.locate(listener, req, dirfd, addr, follow);
        if !writes {
            if let Located::Inside(path) = located {
                self.read(req, path);
            }
            return Answer::Continue;
        }
        // An exclusive create of a path that exists fails in the kernel: nothing changes.
        if flags & libc::O_CREAT != 0
            && flags & libc::O_EXCL != 0
            && let Located::Inside(path) = &located
            && std::fs::symlink_metadata(path.under(&self.root)).is_ok()
        {
            return Answer::Continue;
        }
        self.change(req, located, Intent::Write { content: None })
    }

    /// Record a read of `path`'s bytes now, if it is a regular file, remembering which process
    /// read it and what was known before.
    fn read(&mut self, req: &libc::seccomp_notif, path: RelPath) {
        if matches!(self.known.get(&path), Some(Known::Changed)) {
            return;
        }
        // The tool that just renamed a file here reading it (`git mv` hashes it for the index)
        // shows the session nothing.
        let reader = self.process_of(req.pid);
        if let Some((process, at)) = self.renamed_by.get(&path)
            && *process == reader
            && at.elapsed() < TOOL_READ
        {
            return;
        }
        let Ok(Some(snap)) = self.snapshot(&path) else {
            return;
        };
        let process = self.process_of(req.pid);
        let now = Instant::now();
        let known = self.known.insert(path.clone(), Known::Read(snap.digest));
        let snapshot = self.reads.insert(path.clone(), snap);
        self.seq += 1;
        self.read_seq.insert(path.clone(), self.seq);
        match self.last_read.get_mut(&path) {
            // The same tool reading again (a patch tool reads twice from two threads): what was
            // known before its first read still stands.
            // The window runs from its first read: a tool that reads again and again never
            // keeps it open.
            Some(r) if r.process == process && now.duration_since(r.at) < TOOL_READ => {}
            _ => {
                self.last_read.insert(
                    path,
                    LastRead {
                        process,
                        at: now,
                        known,
                        snapshot,
                    },
                );
            }
        }
    }

    /// The bytes at `path` now; `None` when it is not a regular file (or gone).
    fn snapshot(&mut self, path: &RelPath) -> io::Result<Option<Snapshot>> {
        let file = match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY)
            .open(path.under(&self.root))
        {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Ok(None);
        }
        let exec = meta.mode() & 0o111 != 0;
        if self.kept + meta.len() <= BYTES_BUDGET {
            let mut bytes = Vec::with_capacity(meta.len() as usize);
            (&file).read_to_end(&mut bytes)?;
            let digest = Digest::of(&bytes);
            let fits = self.kept + bytes.len() as u64 <= BYTES_BUDGET;
            if fits {
                self.kept += bytes.len() as u64;
            }
            let bytes = fits.then_some(bytes);
            return Ok(Some(Snapshot {
                digest,
                bytes,
                exec,
            }));
        }
        Ok(Some(Snapshot {
            digest: Digest::of_reader(&file)?,
            bytes: None,
            exec,
        }))
    }

    /// Check a call that can change or remove `located`; on "allow" remember it as the command's
    /// own change.
    fn change(&mut self, req: &libc::seccomp_notif, located: Located, intent: Intent) -> Answer {
        match self.check(req, located, intent) {
            Ok(Some((path, before))) => {
                self.changed(path, before);
                Answer::Continue
            }
            Ok(None) => Answer::Continue,
            Err(answer) => answer,
        }
    }

    /// Check a call that can change or remove `located`: `Err` with the answer that fails it,
    /// else the workspace path it changes (`None` for a path outside the guard's business) with
    /// the digest it holds before the change.
    ///
    /// A process that read the path itself and now changes it is a tool reading what it is about
    /// to rewrite (`sed -i`, a patch, an editor's save): that read tells the session nothing, so
    /// the change is judged by what was known before it, and a refusal forgets the read.
    fn check(
        &mut self,
        req: &libc::seccomp_notif,
        located: Located,
        intent: Intent,
    ) -> Result<Option<(RelPath, Option<Digest>)>, Answer> {
        let path = match located {
            Located::Inside(p) => p,
            Located::Elsewhere => return Ok(None),
            // Stella's own state: Stella itself (a nested `git stella`) may write it; nothing
            // else the command runs may, or one command could switch every session's guard off.
            Located::Stella(p) => {
                if is_stella(req.pid) {
                    return Ok(None);
                }
                let process = self.process_of(req.pid);
                // Once per process: `rm -rf` of the data folder says it once, not per file.
                if self.told_stella.insert(process) {
                    let (shown, folder) = match p.strip_prefix(&self.root) {
                        Ok(rel) => (rel.display().to_string(), ".stella/".to_owned()),
                        Err(_) => (p.display().to_string(), self.data_dir.display().to_string()),
                    };
                    let message = format!(
                        "refusing to change {shown}: it is Stella's own state ({folder}), which only Stella writes\n"
                    );
                    if !notify::write_stderr_of(req.pid, message.as_bytes()) {
                        let _ = self.err.write_all(message.as_bytes());
                    }
                }
                return Err(Answer::Fail(libc::EACCES));
            }
            // Fail closed: a change Stella cannot place is not let through unchecked.
            Located::Unknown(e) => {
                let _ = writeln!(
                    self.err,
                    "stella: refusing a file change the shell guard could not check: {e}"
                );
                return Err(Answer::Fail(libc::EACCES));
            }
        };
        let process = self.process_of(req.pid);
        let own = self
            .last_read
            .get(&path)
            .filter(|r| r.process == process && r.at.elapsed() < TOOL_READ)
            .map(|r| r.known.clone());
        let own_read = own.is_some();
        let known = match own {
            Some(known) => known,
            None => self.known.get(&path).cloned(),
        };
        if matches!(known, Some(Known::Changed)) {
            return Ok(Some((path, None)));
        }
        let entry = match self.entry(&path, known.as_ref()) {
            Ok(e) => e,
            Err(e) => {
                let _ = writeln!(
                    self.err,
                    "stella: refusing to change {path}: the session's journal could not be read: {e}"
                );
                return Err(Answer::Fail(libc::EACCES));
            }
        };
        // Another name of a file the session tracks (a hard link) is that file.
        let entry = match entry {
            None if !matches!(known, Some(Known::Nothing)) => match self.linked(&path) {
                Ok(e) => e,
                Err(e) => {
                    let _ = writeln!(
                        self.err,
                        "stella: refusing to change {path}: the session's journal could not be read: {e}"
                    );
                    return Err(Answer::Fail(libc::EACCES));
                }
            },
            entry => entry,
        };
        let tracked = entry.is_some();
        let mut check = guard::check_entry(entry, &self.root, &path, intent);
        if check.refused() {
            // The bytes the session saw, for the refusal's diff.
            let seen_at = match &known {
                None => Some(&path),
                Some(Known::Moved(from)) => Some(from),
                _ => None,
            };
            if let Some(at) = seen_at {
                check.entry = self
                    .journal
                    .lookup_at(self.tree, at)
                    .ok()
                    .flatten()
                    .map(|mut e| {
                        e.path = path.clone();
                        e
                    });
            }
            if own_read && let Some(before) = self.last_read.remove(&path) {
                restore(&mut self.known, &path, before.known);
                restore(&mut self.reads, &path, before.snapshot);
            }
            self.refuse(req.pid, &check);
            return Err(Answer::Fail(libc::EACCES));
        }
        let before = if tracked {
            check.disk.digest()
        } else {
            Disk::probe(&path.under(&self.root)).digest()
        };
        Ok(Some((path, before)))
    }

    /// Remember an allowed change of `path` (which held `before`) as the command's own.
    fn changed(&mut self, path: RelPath, before: Option<Digest>) {
        self.last_read.remove(&path);
        self.origins.entry(path.clone()).or_insert(before);
        self.known.insert(path.clone(), Known::Changed);
        if self.touched_set.insert(path.clone()) {
            self.touched.push(path);
        }
    }

    /// A rename of `from` to `to` (with `RENAME_EXCHANGE` in `flags`, a swap of the two).
    ///
    /// The destination's bytes are replaced: checked as a write. A source this command wrote
    /// itself (a tool's temporary file renamed over the file it rewrites) makes the rename the
    /// destination's write. Any other source keeps what the session knew of it under its new
    /// name, so a file someone changed after the session read it stays stale when renamed, and
    /// is never taken for the session's own write. A folder carries every path beneath it.
    fn rename(
        &mut self,
        req: &libc::seccomp_notif,
        from: Located,
        to: Located,
        flags: libc::c_uint,
    ) -> Answer {
        let write = Intent::Write { content: None };
        if flags & libc::RENAME_EXCHANGE != 0 {
            // Both are replaced: two writes.
            let checked = [self.check(req, to, write), self.check(req, from, write)];
            for c in &checked {
                if let Err(answer) = c {
                    return *answer;
                }
            }
            for (path, before) in checked.into_iter().flatten().flatten() {
                self.changed(path, before);
            }
            return Answer::Continue;
        }
        // A rename the kernel will fail changes nothing (`mv f d/` first tries `d/` itself).
        let meta = |l: &Located| match l {
            Located::Inside(p) => std::fs::symlink_metadata(p.under(&self.root)).ok(),
            _ => None,
        };
        let (from_meta, to_meta) = (meta(&from), meta(&to));
        if let Located::Inside(_) = from {
            match (&from_meta, &to_meta) {
                (None, _) => return Answer::Continue,
                (Some(_), Some(_)) if flags & libc::RENAME_NOREPLACE != 0 => {
                    return Answer::Continue;
                }
                (Some(f), Some(t)) if t.is_dir() != f.is_dir() => return Answer::Continue,
                _ => {}
            }
        }
        let from = match from {
            // The workspace loses the source's bytes: a delete.
            from @ Located::Inside(_) if !matches!(to, Located::Inside(_)) => {
                return self.change(req, from, Intent::Delete);
            }
            Located::Inside(f) => Some(f),
            // Refused, or Stella itself moving its own files.
            Located::Stella(_) | Located::Unknown(_) => match self.check(req, from, write) {
                Err(answer) => return answer,
                Ok(_) => None,
            },
            Located::Elsewhere => None,
        };
        let (to, before) = match self.check(req, to, write) {
            Err(answer) => return answer,
            Ok(None) => return Answer::Continue,
            Ok(Some(checked)) => checked,
        };
        let Some(from) = from else {
            // Bytes from outside the workspace: the destination's write.
            self.changed(to, before);
            return Answer::Continue;
        };
        if !from_meta.is_some_and(|m| m.is_dir()) {
            let process = self.process_of(req.pid);
            self.carry(process, from, to, before);
            return Answer::Continue;
        }
        // A folder: every path beneath it the session or this command knows of moves with it.
        let mut under: Vec<RelPath> = match self.journal.entries_of_tree(self.tree) {
            Ok(entries) => entries.into_iter().map(|e| e.path).collect(),
            Err(e) => {
                let _ = writeln!(
                    self.err,
                    "stella: refusing to rename {from}: the session's journal could not be read: {e}"
                );
                return Answer::Fail(libc::EACCES);
            }
        };
        under.extend(self.known.keys().cloned());
        under.sort();
        under.dedup();
        for path in under {
            let Some(rest) = path
                .as_bytes()
                .strip_prefix(from.as_bytes())
                .and_then(|r| r.strip_prefix(b"/"))
            else {
                continue;
            };
            // Paths the command already renamed away are known as nothing; the journal's
            // entry for them is no longer theirs.
            if matches!(self.known.get(&path), Some(Known::Nothing)) {
                continue;
            }
            let mut dest = to.as_bytes().to_vec();
            dest.push(b'/');
            dest.extend_from_slice(rest);
            if let Some(dest) = RelPath::from_bytes(&dest) {
                let process = self.process_of(req.pid);
                self.carry(process, path, dest, None);
            }
        }
        Answer::Continue
    }

    /// What a rename of `from` to `to` does to this command's knowledge (`before`: what `to`
    /// held).
    fn carry(&mut self, process: u32, from: RelPath, to: RelPath, before: Option<Digest>) {
        if self.touched_set.contains(&from) {
            // Bytes this command wrote: the destination's write.
            self.changed(to, before);
            return;
        }
        // The renaming tool's own read of the source (`git mv` hashes it) is no read of the
        // session's: what was known before it moves.
        if let Some(r) = self.last_read.get(&from)
            && r.process == process
            && r.at.elapsed() < TOOL_READ
            && let Some(before) = self.last_read.remove(&from)
        {
            restore(&mut self.known, &from, before.known);
            restore(&mut self.reads, &from, before.snapshot);
        }
        let carried = match self.known.get(&from) {
            Some(Known::Read(d)) => Known::Read(*d),
            Some(Known::Moved(at)) => Known::Moved(at.clone()),
            Some(Known::Nothing) => Known::Nothing,
            Some(Known::Changed) => unreachable!("a changed path is touched"),
            None => Known::Moved(from.clone()),
        };
        self.last_read.remove(&from);
        self.last_read.remove(&to);
        if self.touched_set.remove(&to) {
            self.touched.retain(|p| *p != to);
            self.origins.remove(&to);
        }
        self.known.insert(from.clone(), Known::Nothing);
        self.known.insert(to.clone(), carried);
        self.renamed_by
            .insert(to.clone(), (process, Instant::now()));
        self.seq += 1;
        self.moves.push((self.seq, from, to));
    }

    /// The session's entry for `path`, given what this command has seen of it (`known`).
    /// Only what the decision needs: the whole entry (the bytes for a refusal's diff) is read
    /// when a refusal needs it.
    fn entry(
        &self,
        path: &RelPath,
        known: Option<&Known>,
    ) -> Result<Option<Entry>, journal::Error> {
        let seen = match known {
            Some(Known::Read(d)) => Some(Seen::Digest(*d)),
            Some(Known::Nothing) => None,
            Some(Known::Moved(from)) => self.journal.seen_at(self.tree, from)?.map(|(s, _)| s),
            Some(Known::Changed) | None => {
                self.journal.seen_at(self.tree, path)?.map(|(seen, _)| seen)
            }
        };
        Ok(seen.map(|seen| Entry {
            path: path.clone(),
            seen,
            origin: None,
            bytes: None,
            wrote: None,
            origin_bytes: None,
            moved_from: None,
        }))
    }

    /// The session's entry for the file `path` names when that file has other names (hard
    /// links) and one of them is a path the session tracked when the command started: the same
    /// file system object, known by its device and inode.
    fn linked(&mut self, path: &RelPath) -> Result<Option<Entry>, journal::Error> {
        let Ok(meta) = std::fs::symlink_metadata(path.under(&self.root)) else {
            return Ok(None);
        };
        if !meta.is_file() || meta.nlink() < 2 {
            return Ok(None);
        }
        if self.inodes.is_none() {
            let mut index = HashMap::new();
            for e in self.journal.entries_of_tree(self.tree)? {
                if let Ok(m) = std::fs::symlink_metadata(e.path.under(&self.root)) {
                    index.insert((m.dev(), m.ino()), e);
                }
            }
            self.inodes = Some(index);
        }
        let index = self.inodes.as_ref().expect("built above");
        Ok(index.get(&(meta.dev(), meta.ino())).map(|e| Entry {
            path: path.clone(),
            ..e.clone()
        }))
    }

    /// Tell the process whose call was refused: on its own stderr (a host that captures a shell
    /// command's output then shows the model why), else on the command's.
    ///
    /// Once per path and process: a command that retries (`rm -rf` walking a tree twice) says it
    /// once, while each process of a whole agent (each shell command it runs) hears it.
    fn refuse(&mut self, pid: u32, check: &Check) {
        let process = self.process_of(pid);
        if !self.told.insert((check.path.clone(), process)) {
            return;
        }
        let message = format!(
            "{}\n",
            guard::refusal_message(self.journal, &self.root, check)
        );
        if !notify::write_stderr_of(pid, message.as_bytes()) {
            let _ = self.err.write_all(message.as_bytes());
        }
        if !self.refused.contains(&check.path) {
            self.refused.push(check.path.clone());
            self.refusals
                .push(crate::refusals::Record::of(self.journal, check));
        }
    }

    /// Where the path a call names lies. `follow`: whether the call follows a symlink in the
    /// last component (an open does, unless `O_NOFOLLOW`; unlink, rename and link do not).
    ///
    /// The path is resolved as the calling process sees it: its working folder and descriptors,
    /// and `/proc/self`, `/proc/thread-self` and `/dev/fd` as its own, never the supervisor's.
    fn locate(
        &mut self,
        listener: &Listener,
        req: &libc::seccomp_notif,
        dirfd: Option<libc::c_int>,
        addr: u64,
        follow: bool,
    ) -> Located {
        let raw = match notify::read_path(req.pid, addr) {
            Ok(p) => p,
            Err(e) => return Located::Unknown(e),
        };
        // What was read belongs to the caller only if it is still the same process.
        if !listener.valid(req.id) {
            return Located::Elsewhere;
        }
        if raw.is_empty() {
            // `AT_EMPTY_PATH`: the descriptor itself, which was checked when it was opened.
            return Located::Elsewhere;
        }
        let raw = PathBuf::from(raw);
        let abs = if raw.is_absolute() {
            raw
        } else {
            match notify::base_dir(req.pid, dirfd) {
                Ok(base) => base.join(raw),
                Err(e) => return Located::Unknown(e),
            }
        };
        let process = self.process_of(req.pid);
        let resolved = match resolve_as(process, req.pid, &abs, follow) {
            Ok(p) => p,
            // A path that cannot be resolved cannot be opened either.
            Err(_) if follow => return Located::Elsewhere,
            Err(e) => return Located::Unknown(e),
        };
        if resolved.starts_with(&self.data_dir) {
            return Located::Stella(resolved);
        }
        let Ok(rel) = resolved.strip_prefix(&self.root) else {
            return Located::Elsewhere;
        };
        match RelPath::from_bytes(rel.as_os_str().as_bytes()) {
            Some(rel) if paths::private_area(&rel) == Some(".stella") => Located::Stella(resolved),
            Some(rel) if is_private(&rel) => Located::Elsewhere,
            Some(rel) => Located::Inside(rel),
            // The root itself, or a name git cannot hold.
            None => Located::Elsewhere,
        }
    }

    /// Store a snapshot's bytes, when it has them.
    fn keep(
        &self,
        batch: &Option<journal::Batch>,
        snap: &Snapshot,
    ) -> Result<Option<(ObjectId, bool)>, journal::Error> {
        let Some(bytes) = &snap.bytes else {
            return Ok(None);
        };
        let blob = match batch {
            Some(b) => self.journal.write_blob_in(b, bytes)?,
            None => self.journal.write_blob(bytes)?,
        };
        Ok(Some((blob, snap.exec)))
    }

    /// Record what the command read and changed as one step: its reads and renames in the order
    /// they happened, then what it left at each path it changed.
    fn record(
        mut self,
        id: &SessionId,
        status: ExitStatus,
        summary: String,
    ) -> Result<Report, Error> {
        let touched = std::mem::take(&mut self.touched);
        let moves = std::mem::take(&mut self.moves);
        let moved_to: HashSet<RelPath> = moves.iter().map(|(_, _, to)| to.clone()).collect();
        let mut reads: Vec<(RelPath, Snapshot)> = self
            .reads
            .drain()
            .filter(|(p, _)| !self.touched_set.contains(p))
            .collect();
        reads.sort_by(|a, b| a.0.cmp(&b.0));
        // What the session knew of each path when the command started.
        let mut start = HashMap::new();
        let involved = touched
            .iter()
            .chain(reads.iter().map(|(p, _)| p))
            .chain(moves.iter().flat_map(|(_, from, to)| [from, to]));
        for p in involved {
            if !start.contains_key(p) {
                start.insert(p.clone(), self.journal.seen_at(self.tree, p)?);
            }
        }
        let tracked = |p: &RelPath| matches!(start.get(p), Some(Some(_)));
        // Paths git ignores matter only when the session already tracks them.
        let untracked: Vec<RelPath> = start.keys().filter(|p| !tracked(p)).cloned().collect();
        let ignored = ignored(&self.root, &untracked);
        // A read of the bytes the session already holds changes nothing, unless a rename
        // brought other knowledge there.
        reads.retain(|(p, snap)| {
            !ignored.contains(p)
                && (moved_to.contains(p)
                    || !matches!(start.get(p), Some(Some((seen, kept)))
                        if *seen == Seen::Digest(snap.digest) && (*kept || snap.bytes.is_none())))
        });
        let n_reads = reads.len();
        let touched: Vec<RelPath> = touched
            .into_iter()
            .filter(|p| !ignored.contains(p))
            .collect();
        // Many paths: their objects go into the store as one pack, not one file each.
        let batch = if touched.len() + reads.len() > BATCH_PATHS {
            Some(self.journal.batch()?)
        } else {
            None
        };
        // Reads and renames, in the order they happened.
        let mut ordered: Vec<(u64, MapEdit)> = Vec::new();
        for (path, snap) in reads {
            let seq = self.read_seq.get(&path).copied().unwrap_or(0);
            let version = record::Version {
                digest: snap.digest,
                kept: self.keep(&batch, &snap)?,
            };
            ordered.push((seq, record::read(&path, version)));
        }
        let mut n_writes = 0;
        for (seq, from, to) in moves {
            if ignored.contains(&from) && ignored.contains(&to) {
                continue;
            }
            ordered.push((seq, record::moved(&from, &to)));
            n_writes += 1;
        }
        ordered.sort_by_key(|(seq, _)| *seq);
        let mut edits: Vec<MapEdit> = ordered.into_iter().map(|(_, e)| e).collect();
        for path in touched {
            let replaced = Replaced::unkept(self.origins.get(&path).copied().flatten());
            match self.snapshot(&path) {
                // Rewritten with the bytes the session already holds: nothing to record.
                Ok(Some(snap))
                    if !moved_to.contains(&path)
                        && matches!(start.get(&path), Some(Some((seen, kept)))
                        if *seen == Seen::Digest(snap.digest)
                            && (*kept || snap.bytes.is_none())) => {}
                Ok(Some(snap)) => {
                    let version = record::Version {
                        digest: snap.digest,
                        kept: self.keep(&batch, &snap)?,
                    };
                    edits.push(record::wrote(&path, version, replaced));
                }
                // Gone: the entry goes too; a path the session never tracked leaves nothing.
                Ok(None) if !path.under(&self.root).exists() => {
                    if !tracked(&path) && !moved_to.contains(&path) {
                        continue;
                    }
                    edits.push(record::deleted(&path))
                }
                // A folder, a device, something unreadable: nothing the map can hold.
                _ => continue,
            }
            n_writes += 1;
        }
        let refused = std::mem::take(&mut self.refusals);
        // A refusal shows in the step's line, as a refused tool's step does (`refused write …`).
        let n_refused = refused.len();
        let refused_note = match n_refused {
            0 => String::new(),
            n => format!(", {n} refused"),
        };
        let tip = if edits.is_empty() && refused.is_empty() {
            None
        } else {
            let root = if refused.is_empty() {
                Vec::new()
            } else {
                vec![crate::refusals::edit(self.journal, self.tree, refused)?]
            };
            let step = Step {
                summary: format!("{summary} ({n_reads} read, {n_writes} changed{refused_note})"),
                map: edits,
                root,
            };
            Some(match batch {
                Some(b) => self.journal.record_batch(id, &step, b)?,
                None => self.journal.record(id, &step)?,
            })
        };
        Ok(Report {
            status,
            tip,
            reads: n_reads,
            writes: n_writes,
            refused: self.refused,
        })
    }
}

/// Whether process `pid` runs this very binary (a nested `git stella`, which may write `.stella/`).
fn is_stella(pid: u32) -> bool {
    let (Ok(theirs), Ok(ours)) = (
        std::fs::read_link(format!("/proc/{pid}/exe")),
        std::fs::read_link("/proc/self/exe"),
    ) else {
        return false;
    };
    theirs == ours
}

/// `.git/` and `.stella/` are never recorded by the guard.
fn is_private(path: &RelPath) -> bool {
    let first = path.as_bytes().split(|b| *b == b'/').next().unwrap_or(b"");
    first == b".git" || first == b".stella"
}

/// Resolve `abs` as process `process` (thread `thread`) sees it, following symbolic links the
/// way the kernel does (`follow`: in the last component too), with `/proc/self` and
/// `/proc/thread-self` taken as that process's own. Components past one that does not exist
/// are kept as written.
fn resolve_as(process: u32, thread: u32, abs: &Path, follow: bool) -> io::Result<PathBuf> {
    use std::collections::VecDeque;
    use std::path::Component;
    fn parts(path: &Path, rest: &mut VecDeque<OsString>) {
        for c in path.components().rev() {
            match c {
                Component::Normal(n) => rest.push_front(n.to_owned()),
                Component::ParentDir => rest.push_front("..".into()),
                Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            }
        }
    }
    let mut rest = VecDeque::new();
    parts(abs, &mut rest);
    let mut out = PathBuf::from("/");
    let mut links = 0;
    let mut missing = false;
    while let Some(name) = rest.pop_front() {
        if name == ".." {
            out.pop();
            continue;
        }
        let mut next = out.join(&name);
        if next == Path::new("/proc/self") {
            next = PathBuf::from(format!("/proc/{process}"));
        } else if next == Path::new("/proc/thread-self") {
            next = PathBuf::from(format!("/proc/{process}/task/{thread}"));
        }
        if missing {
            out = next;
            continue;
        }
        match std::fs::symlink_metadata(&next) {
            Ok(m) if m.file_type().is_symlink() && (follow || !rest.is_empty()) => {
                links += 1;
                if links > 40 {
                    return Err(io::Error::from_raw_os_error(libc::ELOOP));
                }
                let target = std::fs::read_link(&next)?;
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                parts(&target, &mut rest);
            }
            Ok(_) => out = next,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                missing = true;
                out = next;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// Whether some ancestor of this process runs Stella (a program of this binary's name,
/// wherever it is installed): the supervisor of the shell guard this process runs under, when
/// the kernel says it runs under one.
fn under_stella() -> bool {
    let name = |exe: &Path| exe.file_name().map(ToOwned::to_owned);
    let Some(ours) = std::fs::read_link("/proc/self/exe")
        .ok()
        .and_then(|e| name(&e))
    else {
        return false;
    };
    let parent = |pid: &str| -> Option<String> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // `pid (comm) state ppid …`: the name may hold spaces and parentheses.
        let (_, after) = stat.rsplit_once(')')?;
        after.split_whitespace().nth(1).map(str::to_owned)
    };
    let mut pid = parent("self");
    for _ in 0..256 {
        match pid.as_deref() {
            None | Some("0") => return false,
            Some(p) => {
                if std::fs::read_link(format!("/proc/{p}/exe"))
                    .is_ok_and(|e| name(&e) == Some(ours.clone()))
                {
                    return true;
                }
                pid = parent(p);
            }
        }
    }
    false
}

/// The part of Stella's data folder a guarded command may not change: all of it, unless the
/// workspace lies inside it (then the stores' folder only).
fn protected_data_dir(data_dir: &Path, root: &Path) -> PathBuf {
    let data_dir = data_dir
        .canonicalize()
        .unwrap_or_else(|_| data_dir.to_owned());
    if root.starts_with(&data_dir) {
        data_dir.join("workspaces")
    } else {
        data_dir
    }
}

/// The paths among `paths` that git ignores, asked of git itself: the ones its ignore rules
/// match (`git check-ignore --no-index`, one call), less those git tracks (a tracked file is
/// never ignored). `check-ignore` without `--no-index` does both but took 1.2 s for 10,000 paths.
fn ignored(root: &Path, paths: &[RelPath]) -> HashSet<RelPath> {
    if paths.is_empty() {
        return HashSet::new();
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

/// A NUL-separated list of paths, as git prints it with `-z`.
fn nul_list(out: Vec<u8>) -> HashSet<RelPath> {
    out.split(|b| *b == 0)
        .filter_map(RelPath::from_bytes)
        .collect()
}

/// What `git ARGS` prints with `input` on its stdin (nothing when it cannot run).
fn git_output(root: &Path, args: &[&str], input: Vec<u8>) -> Vec<u8> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_folders_are_never_recorded() {
        let p = |s: &str| RelPath::from_bytes(s.as_bytes()).unwrap();
        assert!(is_private(&p(".git/config")));
        assert!(is_private(&p(".stella/private/workspace.toml")));
        assert!(!is_private(&p(".github/workflows/ci.yml")));
        assert!(!is_private(&p("src/.git-keep")));
    }

    #[test]
    fn paths_resolve_as_the_calling_process_sees_them() {
        use std::os::fd::AsRawFd as _;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("src")).unwrap();
        std::os::unix::fs::symlink(root.join("src"), root.join("alias")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("src/link")).unwrap();
        let me = std::process::id();
        let r = |p: &Path, follow| resolve_as(me, me, p, follow).unwrap();
        // The folder is resolved, the last name kept unless followed.
        assert_eq!(r(&root.join("alias/a.txt"), false), root.join("src/a.txt"));
        assert_eq!(r(&root.join("src/link"), false), root.join("src/link"));
        assert_eq!(r(&root.join("src/link"), true), Path::new("/etc/passwd"));
        assert_eq!(
            r(&root.join("src/../missing/x/../y"), true),
            root.join("missing/y")
        );
        // /proc/self, /dev/fd and a working folder are the caller's own.
        let file = std::fs::File::create(root.join("src/f")).unwrap();
        let fd = file.as_raw_fd();
        assert_eq!(
            r(Path::new(&format!("/dev/fd/{fd}")), true),
            root.join("src/f")
        );
        assert_eq!(
            r(Path::new(&format!("/proc/self/fd/{fd}")), true),
            root.join("src/f")
        );
        let cwd = std::fs::read_link("/proc/self/cwd").unwrap();
        assert_eq!(r(Path::new("/proc/self/cwd/x"), true), cwd.join("x"));
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .current_dir(&root)
            .spawn()
            .unwrap();
        let theirs = child.id();
        let seen = resolve_as(theirs, theirs, Path::new("/proc/self/cwd/src/f"), true).unwrap();
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(seen, root.join("src/f"));
    }
}
