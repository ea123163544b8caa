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
        touched: Vec::new(),
        touched_set: HashSet::new(),
        origins: HashMap::new(),
        refused: Vec::new(),
        refusals: Vec::new(),
        told: HashSet::new(),
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
#[derive(Clone, Copy, Debug)]
enum Known {
    /// It read these bytes.
    Read(Digest),
    /// It changed the path: its own work, not checked again within the command.
    Changed,
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
    /// In `.stella/`, the workspace's own state: only Stella itself may change it.
    Stella(RelPath),
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
                self.change(req, located, Intent::Write { content: None }, false)
            }
            filter::Call::Unlink { dirfd, path } => {
                if dirfd.is_some() && args[2] as libc::c_int & libc::AT_REMOVEDIR != 0 {
                    return Answer::Continue;
                }
                let located = self.locate(listener, req, fd(dirfd), args[path], false);
                self.change(req, located, Intent::Delete, false)
            }
            filter::Call::Rename { from, to, flags } => {
                let flags = flags.map_or(0, |i| args[i] as libc::c_uint);
                let to_path = self.locate(listener, req, fd(to.0), args[to.1], false);
                let from_path = self.locate(listener, req, fd(from.0), args[from.1], false);
                let exchange = flags & libc::RENAME_EXCHANGE != 0;
                let write = Intent::Write { content: None };
                if let Answer::Fail(e) = self.change(req, to_path, write, false) {
                    return Answer::Fail(e);
                }
                // The source loses nothing (its bytes move), unless the two swap places.
                self.change(req, from_path, write, !exchange)
            }
            filter::Call::Link { to } => {
                let located = self.locate(listener, req, fd(to.0), args[to.1], false);
                self.change(req, located, Intent::Write { content: None }, false)
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
        self.change(req, located, Intent::Write { content: None }, false)
    }

    /// Record a read of `path`'s bytes now, if it is a regular file, remembering which process
    /// read it and what was known before.
    fn read(&mut self, req: &libc::seccomp_notif, path: RelPath) {
        if matches!(self.known.get(&path), Some(Known::Changed)) {
            return;
        }
        let Ok(Some(snap)) = self.snapshot(&path) else {
            return;
        };
        let process = self.process_of(req.pid);
        let now = Instant::now();
        let known = self.known.insert(path.clone(), Known::Read(snap.digest));
        let snapshot = self.reads.insert(path.clone(), snap);
        match self.last_read.get_mut(&path) {
            // The same tool reading again (a patch tool reads twice from two threads): what was
            // known before its first read still stands.
            Some(r) if r.process == process && now.duration_since(r.at) < TOOL_READ => {
                r.at = now;
            }
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
    /// own change. `source_only`: the path is a rename's source, whose bytes move elsewhere, so
    /// it is only remembered, never refused.
    ///
    /// A process that read the path itself and now changes it is a tool reading what it is about
    /// to rewrite (`sed -i`, a patch, an editor's save): that read tells the session nothing, so
    /// the change is judged by what was known before it, and a refusal forgets the read.
    fn change(
        &mut self,
        req: &libc::seccomp_notif,
        located: Located,
        intent: Intent,
        source_only: bool,
    ) -> Answer {
        let path = match located {
            Located::Inside(p) => p,
            Located::Elsewhere => return Answer::Continue,
            // Stella's own state: Stella itself (a nested `git stella`) may write it; nothing
            // else the command runs may, or one command could switch every session's guard off.
            Located::Stella(p) => {
                if is_stella(req.pid) {
                    return Answer::Continue;
                }
                let process = self.process_of(req.pid);
                if self.told.insert((p.clone(), process)) {
                    let message = format!(
                        "refusing to change {p}: it is Stella's own state (.stella/), which only Stella writes\n"
                    );
                    if !notify::write_stderr_of(req.pid, message.as_bytes()) {
                        let _ = self.err.write_all(message.as_bytes());
                    }
                }
                return Answer::Fail(libc::EACCES);
            }
            // Fail closed: a change Stella cannot place is not let through unchecked.
            Located::Unknown(e) => {
                let _ = writeln!(
                    self.err,
                    "stella: refusing a file change the shell guard could not check: {e}"
                );
                return Answer::Fail(libc::EACCES);
            }
        };
        let process = self.process_of(req.pid);
        let own_read = self
            .last_read
            .get(&path)
            .filter(|r| r.process == process && r.at.elapsed() < TOOL_READ);
        let known = match own_read {
            Some(r) => r.known,
            None => self.known.get(&path).copied(),
        };
        if matches!(known, Some(Known::Changed)) {
            return Answer::Continue;
        }
        let entry = match self.entry(&path, known) {
            Ok(e) => e,
            Err(e) => {
                let _ = writeln!(
                    self.err,
                    "stella: refusing to change {path}: the session's journal could not be read: {e}"
                );
                return Answer::Fail(libc::EACCES);
            }
        };
        let tracked = entry.is_some();
        let mut check = guard::check_entry(entry, &self.root, &path, intent);
        if check.refused() && !source_only {
            if known.is_none() {
                // The bytes the session saw, for the refusal's diff.
                check.entry = self.journal.lookup_at(self.tree, &path).ok().flatten();
            }
            if own_read.is_some()
                && let Some(before) = self.last_read.remove(&path)
            {
                restore(&mut self.known, &path, before.known);
                restore(&mut self.reads, &path, before.snapshot);
            }
            self.refuse(req.pid, &check);
            return Answer::Fail(libc::EACCES);
        }
        self.last_read.remove(&path);
        if !self.origins.contains_key(&path) {
            let before = if tracked {
                check.disk.digest()
            } else {
                Disk::probe(&path.under(&self.root)).digest()
            };
            self.origins.insert(path.clone(), before);
        }
        self.known.insert(path.clone(), Known::Changed);
        if self.touched_set.insert(path.clone()) {
            self.touched.push(path);
        }
        Answer::Continue
    }

    /// The session's entry for `path`, given what this command has seen of it (`known`).
    /// Only what the decision needs: the whole entry (the bytes for a refusal's diff) is read
    /// when a refusal needs it.
    fn entry(&self, path: &RelPath, known: Option<Known>) -> Result<Option<Entry>, journal::Error> {
        let seen = match known {
            Some(Known::Read(d)) => Some(Seen::Digest(d)),
            _ => self.journal.seen_at(self.tree, path)?.map(|(seen, _)| seen),
        };
        Ok(seen.map(|seen| Entry {
            path: path.clone(),
            seen,
            origin: None,
            bytes: None,
            wrote: None,
            origin_bytes: None,
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
    fn locate(
        &self,
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
        let resolved = if follow {
            paths::resolve(&self.root, Path::new("/"), &abs)
        } else {
            resolve_parent(&self.root, &abs)
        };
        match resolved {
            Ok(rel) if paths::private_area(&rel) == Some(".stella") => Located::Stella(rel),
            Ok(rel) if is_private(&rel) => Located::Elsewhere,
            Ok(rel) => Located::Inside(rel),
            Err(
                paths::Error::Outside { .. }
                | paths::Error::Root { .. }
                | paths::Error::Private { .. },
            ) => Located::Elsewhere,
            Err(paths::Error::Io { source, .. }) if follow => {
                // A path that cannot be resolved cannot be opened either.
                let _ = source;
                Located::Elsewhere
            }
            Err(paths::Error::Io { source, .. }) => Located::Unknown(source),
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

    /// Record what the command read and changed as one step.
    fn record(
        mut self,
        id: &SessionId,
        status: ExitStatus,
        summary: String,
    ) -> Result<Report, Error> {
        let touched = std::mem::take(&mut self.touched);
        let mut reads: Vec<(RelPath, Snapshot)> = self
            .reads
            .drain()
            .filter(|(p, _)| !self.touched_set.contains(p))
            .collect();
        reads.sort_by(|a, b| a.0.cmp(&b.0));
        // What the session knew of each path when the command started.
        let mut start = HashMap::new();
        for p in touched.iter().chain(reads.iter().map(|(p, _)| p)) {
            start.insert(p.clone(), self.journal.seen_at(self.tree, p)?);
        }
        let tracked = |p: &RelPath| matches!(start.get(p), Some(Some(_)));
        // Paths git ignores matter only when the session already tracks them.
        let untracked: Vec<RelPath> = start.keys().filter(|p| !tracked(p)).cloned().collect();
        let ignored = ignored(&self.root, &untracked);
        // A read of the bytes the session already holds changes nothing.
        reads.retain(|(p, snap)| {
            !ignored.contains(p)
                && !matches!(start.get(p), Some(Some((seen, kept)))
                    if *seen == Seen::Digest(snap.digest) && (*kept || snap.bytes.is_none()))
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
        let mut edits = Vec::new();
        let mut n_writes = 0;
        for path in touched {
            match self.snapshot(&path) {
                // Rewritten with the bytes the session already holds: nothing to record.
                Ok(Some(snap))
                    if matches!(start.get(&path), Some(Some((seen, kept)))
                        if *seen == Seen::Digest(snap.digest)
                            && (*kept || snap.bytes.is_none())) => {}
                Ok(Some(snap)) => {
                    edits.push(MapEdit::Put {
                        path: path.clone(),
                        seen: Seen::Digest(snap.digest),
                        bytes: self.keep(&batch, &snap)?,
                        first_origin: self.origins.get(&path).copied().flatten(),
                        wrote: true,
                        origin_bytes: None,
                    });
                }
                // Gone: the entry goes too; a path the session never tracked leaves nothing.
                Ok(None) if !path.under(&self.root).exists() => {
                    if !tracked(&path) {
                        continue;
                    }
                    edits.push(MapEdit::Remove { path: path.clone() })
                }
                // A folder, a device, something unreadable: nothing the map can hold.
                _ => continue,
            }
            n_writes += 1;
        }
        for (path, snap) in reads {
            edits.push(MapEdit::Put {
                path: path.clone(),
                seen: Seen::Digest(snap.digest),
                bytes: self.keep(&batch, &snap)?,
                first_origin: Some(snap.digest),
                wrote: false,
                origin_bytes: None,
            });
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

/// Resolve the folder of `abs` and keep its last component as written (unlink, rename and link
/// act on a symlink itself, not on what it points to).
fn resolve_parent(root: &Path, abs: &Path) -> Result<RelPath, paths::Error> {
    let (Some(parent), Some(name)) = (abs.parent(), abs.file_name()) else {
        return paths::resolve(root, Path::new("/"), abs);
    };
    let parent = match paths::resolve(root, Path::new("/"), parent) {
        Ok(p) => p.as_bytes().to_vec(),
        Err(paths::Error::Root { .. }) => Vec::new(),
        Err(e) => return Err(e),
    };
    let mut bytes = parent;
    if !bytes.is_empty() {
        bytes.push(b'/');
    }
    bytes.extend_from_slice(name.as_bytes());
    RelPath::from_bytes(&bytes).ok_or_else(|| paths::Error::Outside {
        path: abs.to_owned(),
        root: root.to_owned(),
    })
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
    fn the_parent_is_resolved_and_the_name_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("src")).unwrap();
        std::os::unix::fs::symlink(root.join("src"), root.join("alias")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("src/link")).unwrap();
        let r = |p: &str| resolve_parent(&root, &root.join(p)).map(|r| r.to_string());
        assert_eq!(r("alias/a.txt").unwrap(), "src/a.txt");
        assert_eq!(r("src/link").unwrap(), "src/link");
        assert_eq!(r("top.txt").unwrap(), "top.txt");
    }
}
