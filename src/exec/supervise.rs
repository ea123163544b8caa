//! The shell guard's supervisor (Linux): spawn the command under the seccomp filter and answer
//! each notification until it exits, journaling what it did as it goes.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::rc::Rc;
use std::time::{Duration, Instant, SystemTime};

use gix::ObjectId;

use crate::digest::Digest;
use crate::fsutil::{self, FolderHold};
use crate::guard::{self, Check, Disk, Intent};
use crate::ids::SessionId;
use crate::journal::{self, Entry, Journal, MapEdit, Seen, Step};
use crate::paths::{self, RelPath};
use crate::session::Context;
use crate::session::record::{self, Replaced};

use super::act;
use super::process::{
    is_stella, rel_beneath, resolve_as, resolve_beneath, resolve_quick, still_guarded, under_stella,
};
use super::signatures::{Signature, Signatures, Stat};
use super::sys::filter;
use super::sys::notify::{self, Answer, Listener, Received};
use super::sys::signals::{self, Forward, IgnoreInterrupts};
use super::{BATCH_PATHS, BYTES_BUDGET, Error, Report, SESSION_ENV, exit_code, support};

/// Run `command` under the guard of session `id`, printing refusals to `err` (the command's own
/// stderr), journaling what it read and wrote as it goes (from its first second on, a step
/// about every half second while something happened; and one when it exits). `label` names the command in the
/// step's summary (its command line when `None`).
pub fn run(
    context: &Context,
    id: &SessionId,
    mut command: Command,
    label: Option<&str>,
    err: &mut dyn Write,
) -> Result<Report, Error> {
    let line = command_line(&command);
    let _span = tracing::debug_span!("shell_guard", session = %id, command = %short(label.unwrap_or(&line.to_string_lossy()), 72)).entered();
    tracing::debug_span!("config_check").in_scope(|| crate::config::check(&context.ws))?;
    support().map_err(Error::Unsupported)?;
    let program_name = command.get_program().to_owned();
    let summary = format!(
        "exec {}",
        short(label.unwrap_or(&line.to_string_lossy()), 72)
    );
    let journal = context.journal();
    let start = journal.tip(id)?;
    command.env(SESSION_ENV, id.as_str());
    let _quiet = IgnoreInterrupts::new();
    let _ended = Forward::new();
    let (mut child, listener) = tracing::debug_span!("spawn").in_scope(|| spawn(command))?;
    // Held while the command runs: `gc` and `session prune` leave a live session alone.
    let _lease = journal.lease(id).inspect_err(
        |e| tracing::warn!(error = %e, "the running command holds no lease on its session"),
    );
    let mut sup = Supervisor {
        root: context.ws.root.clone(),
        others: guard::Others::new(&journal, id, &context.ws),
        journal: &journal,
        tree: start.tree,
        known: HashMap::new(),
        last_read: HashMap::new(),
        pruned: Instant::now(),
        log: Vec::new(),
        hashing: Vec::new(),
        signatures: Signatures::new(&context.ws.root, id),
        renamed_by: HashMap::new(),
        touched_set: HashSet::new(),
        recorded: HashSet::new(),
        settle: Vec::new(),
        watch: super::watch::Watch::new(),
        start: HashMap::new(),
        ignored: HashMap::new(),
        id,
        summary,
        tip: None,
        n_reads: 0,
        n_writes: 0,
        failing: false,
        damage: None,
        flushed: Instant::now(),
        flush_every: FLUSH_EVERY,
        started: Instant::now(),
        origins: HashMap::new(),
        refused: Vec::new(),
        refusals: Vec::new(),
        told: HashSet::new(),
        told_stella: HashSet::new(),
        told_handle: HashSet::new(),
        inodes: None,
        root_id: std::fs::metadata(&context.ws.root)
            .ok()
            .map(|m| (m.dev(), m.ino())),
        data_dir: protected_data_dir(&context.ws.data_dir, &context.ws.root),
        data_rel: data_rel(
            &protected_data_dir(&context.ws.data_dir, &context.ws.root),
            &context.ws.root,
        ),
        root_fd: notify::adds_fds()
            .then(|| {
                rustix::fs::open(
                    &context.ws.root,
                    rustix::fs::OFlags::PATH
                        | rustix::fs::OFlags::DIRECTORY
                        | rustix::fs::OFlags::CLOEXEC,
                    rustix::fs::Mode::empty(),
                )
                .ok()
            })
            .flatten(),
        processes: HashMap::new(),
        cwds: HashMap::new(),
        unsettled: Vec::new(),
        root_dir: rustix::fs::open(
            &context.ws.root,
            rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .ok(),
        stat_hint: None,
        folders: HashMap::new(),
        views: HashMap::new(),
        kept: 0,
        keep_budget: crate::keep::COMMAND_MAX,
        ignores: Ignores::new(&context.ws.root),
        kept_files: Vec::new(),
        err,
    };
    let pid = child.id();
    let extra = sup.watch.as_ref().map(|w| w.raw());
    let serving = tracing::debug_span!("serve").entered();
    let served = listener.serve_ticking(pid, extra, TICK, |wake| match wake {
        notify::Wake::Call(req) => sup.handle(&listener, req),
        notify::Wake::Tick => {
            sup.tick(pid);
            Answer::Continue
        }
    });
    // Whatever still runs of the command gets ENOSYS from now on, never an unchecked call (and a
    // command still running after a failure to serve it is not left waiting for an answer).
    drop(listener);
    let status = child.wait();
    peak_memory("served");
    drop(serving);
    let status = match (served, status) {
        (Ok(()), Ok(s)) => s,
        (Err(source), _) | (_, Err(source)) => {
            return Err(Error::Supervise {
                program: program_name,
                source,
            });
        }
    };
    sup.finish(status).map_err(|e| match e {
        Error::Journal(source) => Error::Unrecorded {
            program: program_name,
            code: exit_code(status),
            source,
        },
        other => other,
    })
}

/// Log the supervisor's peak resident memory so far (`STELLA_LOG=debug`), after `phase`.
fn peak_memory(phase: &str) {
    if !tracing::enabled!(tracing::Level::DEBUG) {
        return;
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if let Some(kib) = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .map(|v| v.trim().trim_end_matches(" kB").trim())
    {
        tracing::debug!(phase, peak_kib = kib, "supervisor's peak memory");
    }
}

/// Start `command` with the filter installed, and take its listener.
fn spawn(mut command: Command) -> Result<(std::process::Child, Listener), Error> {
    let program_name = command.get_program().to_owned();
    let (ours, theirs) = UnixStream::pair().map_err(|source| Error::Spawn {
        program: program_name.clone(),
        source,
    })?;
    let child_sock = theirs.as_raw_fd();
    notify::install_on_spawn(&mut command, child_sock);
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

/// What this command saw or did to a path so far.
#[derive(Clone, Debug)]
enum Known {
    /// It read these bytes.
    Read(Digest),
    /// It read a large file, whose digest is being computed off the call path
    /// (`Supervisor::hashing`).
    Hashing(usize),
    /// It is writing the path (opened for writing, truncated, or a rename put its bytes
    /// there), and has not finished: its own work.
    Writing,
    /// It finished writing the path: the file as it left it. A later change is checked against
    /// it; the digest is known once the write is recorded. (Boxed: a command reading 100,000
    /// files keeps one `Known` each, and this is the largest.)
    Left(Box<(Signature, Option<Digest>)>),
    /// A rename brought here what the session knew, when the command started, of another path.
    Moved(RelPath),
    /// A rename took the path away, or put there bytes the session never saw: nothing known.
    Nothing,
}

/// One thing the command did that the session records, in the order it happened.
enum Event {
    /// It read these bytes.
    Read {
        path: RelPath,
        snap: Taken,
        at: Instant,
    },
    /// It renamed `from` to `to`, carrying what the session knew.
    Moved { from: RelPath, to: RelPath },
    /// It changed the path: what it left is taken from the disk when recorded, unless a
    /// [`Event::Left`] of the path follows.
    Changed { path: RelPath },
    /// It finished writing the path, which then looked like this.
    Left { path: RelPath, sig: Signature },
    /// The supervisor itself put the command's finished bytes at the path (a rename it carried
    /// out), and took them then, before anyone else could replace them.
    Wrote { path: RelPath, snap: Snapshot },
}

impl Event {
    /// The paths it concerns.
    fn paths(&self) -> [Option<&RelPath>; 2] {
        match self {
            Event::Read { path, .. }
            | Event::Changed { path }
            | Event::Left { path, .. }
            | Event::Wrote { path, .. } => [Some(path), None],
            Event::Moved { from, to } => [Some(from), Some(to)],
        }
    }
}

/// How a read's bytes were taken.
enum Taken {
    /// On the call path.
    Snap(Snapshot),
    /// Being hashed off it (`Supervisor::hashing`).
    Hashing(usize),
    /// Not read at all: the file's signature had not moved since the guard last hashed it.
    Known { digest: Digest, exec: bool },
}

/// Files larger than this are hashed off the call path: an open of a huge (or sparse) file
/// never waits on its digest.
const HASH_ON_CALL_MAX: u64 = 4 << 20;

/// How long a change of a file, or the end of a command, waits for a digest still being
/// computed; past it the read counts for nothing (a change then needs a re-read).
const HASH_WAIT: Duration = Duration::from_secs(2);

/// The digest of a large file a command read, computed on a thread of its own.
struct Hashing {
    rx: std::sync::mpsc::Receiver<Option<Digest>>,
    /// The answer, once it came: `None` when the file changed while it was hashed, or could
    /// not be read whole.
    done: Option<Option<Digest>>,
}

impl Hashing {
    fn start(file: std::fs::File, sig: Signature) -> Hashing {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let digest = Digest::of_reader(&file)
                .ok()
                .filter(|_| file.metadata().is_ok_and(|m| Signature::of(&m) == sig));
            let _ = tx.send(digest);
        });
        Hashing { rx, done: None }
    }

    /// The digest, if it is known by now.
    fn ready(&mut self) -> Option<Option<Digest>> {
        if self.done.is_none() {
            match self.rx.try_recv() {
                Ok(d) => self.done = Some(d),
                Err(std::sync::mpsc::TryRecvError::Disconnected) => self.done = Some(None),
                Err(std::sync::mpsc::TryRecvError::Empty) => {}
            }
        }
        self.done
    }

    /// The digest, waiting for it up to `limit`; `None` when it is not to be had by then.
    fn wait(&mut self, limit: Duration) -> Option<Digest> {
        if self.done.is_none() {
            self.done = Some(self.rx.recv_timeout(limit).ok().flatten());
        }
        self.done.flatten()
    }
}

/// At most this many folders are held open for reads ([`Supervisor::stat_in_folder`]); past
/// it, all are let go (a command's open files count against its limit too, and this one's).
const FOLDERS_HELD: usize = 128;

/// How often the supervisor looks at what a running command finished writing and at signals.
const TICK: Duration = Duration::from_millis(100);

/// How often what a running command did is journaled: a group commit, so a killed supervisor
/// loses at most about this much (a read waits [`TOOL_READ`] first, to know it was not a tool's
/// read of what it rewrites).
const FLUSH_EVERY: Duration = Duration::from_millis(500);

/// The longest wait between steps of a command that keeps reading or writing many files: each
/// such step is a pack of its own, and a store of hundreds of packs is slow to read. The wait
/// doubles after each large step up to this, and is back at [`FLUSH_EVERY`] after a small one.
const FLUSH_MAX: Duration = Duration::from_secs(8);

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
    /// What a blind change consults ([`guard::Check::respect`]).
    others: guard::Others<'a, 'j>,
    journal: &'a Journal<'j>,
    /// The session's map when the command started.
    tree: ObjectId,
    known: HashMap<RelPath, Known>,
    /// Who read each path last, and what that read replaced, within [`TOOL_READ`].
    last_read: HashMap<RelPath, LastRead>,
    /// When reads past [`TOOL_READ`] were last let go of.
    pruned: Instant,
    /// What the command did and the journal does not hold yet, in order.
    log: Vec<Event>,
    /// The large files it read, being hashed off the call path.
    hashing: Vec<Hashing>,
    /// What the session's guard hashed before, by `stat` signature.
    signatures: Signatures,
    /// Which process renamed a file to each path, and when.
    renamed_by: HashMap<RelPath, (u32, Instant)>,
    /// What the command changed: its own work.
    touched_set: HashSet<RelPath>,
    /// The paths its steps put in the session's map so far.
    recorded: HashSet<RelPath>,
    /// Paths whose change is done once the call that made it returns (a rename of the
    /// command's own bytes, a truncate): settled at the next look at what it finished.
    settle: Vec<RelPath>,
    /// The folders of what it writes, watched for the moment it finishes writing.
    watch: Option<super::watch::Watch>,
    /// What the session knew of each path the command's steps concern when it started, and
    /// whether git ignores the path, asked once per path.
    start: HashMap<RelPath, Option<(Seen, bool)>>,
    ignored: HashMap<RelPath, bool>,
    /// The session, and the summary of the command's steps.
    id: &'a SessionId,
    summary: String,
    /// The session's last step, once the command recorded one, and what its steps counted.
    tip: Option<journal::Tip>,
    n_reads: usize,
    n_writes: usize,
    /// The bytes a path held before the command first changed it (`None`: it did not exist).
    origins: HashMap<RelPath, Option<Digest>>,
    refused: Vec<RelPath>,
    /// What was refused and is not journaled yet, for the step's trace.
    refusals: Vec<crate::refusals::Record>,
    /// Whether the last try to journal what the command did failed.
    failing: bool,
    /// Damage found in the session's journal while the command ran: every change that needed
    /// it was refused, and the command's end reports it, so the front end repairs the session.
    damage: Option<journal::Error>,
    /// When what the command did was last journaled, and when it started.
    flushed: Instant,
    /// How long to wait from one step to the next, from [`FLUSH_EVERY`] to [`FLUSH_MAX`].
    flush_every: Duration,
    started: Instant,
    /// The process of each thread seen so far.
    processes: HashMap<u32, u32>,
    /// Each thread's working folder, while nothing can have moved it ([`Supervisor::cwd_of`]).
    cwds: HashMap<u32, Rc<Path>>,
    /// Workspace folders held open (`O_PATH`) for reads in them ([`Supervisor::stat_in_folder`]).
    folders: HashMap<PathBuf, OwnedFd>,
    /// Threads whose call that moves a working folder may not be done yet.
    unsettled: Vec<u32>,
    /// Which process was told of which refusal.
    told: HashSet<(RelPath, u32)>,
    /// Which processes were told that they may not change Stella's own state.
    told_stella: HashSet<u32>,
    /// Which processes were told that a write through a file handle is refused.
    told_handle: HashSet<u32>,
    /// The files the session tracked when the command started, by device and inode: built
    /// the first time a file with several names is changed.
    inodes: Option<HashMap<(u64, u64), Entry>>,
    /// The workspace folder's device and inode: the same folder under another name is the
    /// workspace too.
    root_id: Option<(u64, u64)>,
    /// Stella's data folder (the sessions' stores), resolved: out of the command's reach.
    data_dir: PathBuf,
    /// The data folder relative to the workspace root, when it lies inside it (empty when the
    /// whole workspace lies inside the data folder).
    data_rel: Option<PathBuf>,
    /// The workspace folder, opened: a change checked against what the session knew is carried
    /// out beneath it by the supervisor itself (`None` where the kernel cannot hand the caller
    /// a descriptor the supervisor opened: the kernel carries every call out).
    root_fd: Option<OwnedFd>,
    /// The workspace folder, opened (`O_PATH`): most paths are resolved beneath it.
    root_dir: Option<OwnedFd>,
    /// What `stat` said of the path the last read's resolution named (`locate`).
    stat_hint: Option<(u64, Stat)>,
    /// Whether each process sees files as the supervisor does, looked up once per process.
    views: HashMap<u32, bool>,
    /// How many bytes of snapshots are kept so far, against [`BYTES_BUDGET`].
    kept: u64,
    /// What the command may still keep of files it changes blind ([`crate::keep`]).
    keep_budget: u64,
    /// What git ignores, for files changed blind (not kept).
    ignores: Ignores,
    /// Files whose bytes were kept before the command changed them blind, for the next step.
    kept_files: Vec<crate::keep::Kept>,
    err: &'a mut dyn Write,
}

/// A change the supervisor can carry out itself, once checked.
#[derive(Clone, Copy)]
enum Act {
    Open {
        flags: libc::c_int,
        mode: u32,
    },
    Unlink,
    Truncate(u64),
    /// Left to the kernel.
    Kernel,
}

impl Act {
    /// Carry it out on `name` in `dir` for process `pid`.
    fn carry_out(self, dir: &OwnedFd, name: &std::ffi::OsStr, pid: u32) -> Answer {
        match self {
            Act::Open { flags, mode } => act::open(dir, name, flags, mode, pid),
            Act::Unlink => act::unlink(dir, name),
            Act::Truncate(len) => act::truncate(dir, name, len),
            Act::Kernel => Answer::Continue,
        }
    }
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
        // A thread's calls come one after another: this one says its last has been carried out.
        if !self.unsettled.is_empty() {
            self.unsettled.retain(|t| *t != req.pid);
        }
        let Some(call) = filter::decode(req.data.nr) else {
            return Answer::Continue;
        };
        let args = req.data.args;
        let fd = |i: Option<usize>| i.map(|i| args[i] as libc::c_int);
        match call {
            filter::Call::Open {
                dirfd,
                path,
                flags,
                mode,
            } => {
                let flags = match flags {
                    Some(i) => args[i] as libc::c_int,
                    None => libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC,
                };
                let act = Act::Open {
                    flags,
                    mode: args[mode] as u32,
                };
                self.open(listener, req, fd(dirfd), args[path], flags, act)
            }
            filter::Call::Openat2 => {
                // `struct open_how`: u64 flags, mode and resolve.
                let mut how = [0u8; 24];
                match notify::read_memory(req.pid, args[2], &mut how) {
                    Ok(24) if args[3] >= 24 => {
                        let field = |i: usize| {
                            u64::from_ne_bytes(how[i * 8..i * 8 + 8].try_into().expect("8 bytes"))
                        };
                        let flags = field(0) as libc::c_int;
                        // Resolution rules of the caller's own: the kernel carries the call out.
                        let act = match field(2) {
                            0 => Act::Open {
                                flags,
                                mode: field(1) as u32,
                            },
                            _ => Act::Kernel,
                        };
                        let dirfd = Some(args[0] as libc::c_int);
                        self.open(listener, req, dirfd, args[1], flags, act)
                    }
                    // Nothing to read: the kernel fails the call itself.
                    _ => Answer::Continue,
                }
            }
            filter::Call::Truncate => {
                let located = self.locate(listener, req, None, args[0], true, true);
                let act = Act::Truncate(args[1]);
                let answer = self.change(req, located, Intent::Write { content: None }, act);
                self.settle_last(answer)
            }
            filter::Call::Unlink { dirfd, path } => {
                if dirfd.is_some() && args[2] as libc::c_int & libc::AT_REMOVEDIR != 0 {
                    return Answer::Continue;
                }
                let located = self.locate(listener, req, fd(dirfd), args[path], false, true);
                self.change(req, located, Intent::Delete, Act::Unlink)
            }
            filter::Call::Rename { from, to, flags } => {
                // A folder renamed under a thread gives its working folder another name, and a
                // folder held for reads another one.
                self.forget_folders();
                let flags = flags.map_or(0, |i| args[i] as libc::c_uint);
                let to_path = self.locate(listener, req, fd(to.0), args[to.1], false, true);
                let from_path = self.locate(listener, req, fd(from.0), args[from.1], false, true);
                self.rename(req, from_path, to_path, flags)
            }
            // A handle names no path the guard could check: a write through one is refused.
            filter::Call::OpenByHandle { flags } => {
                let flags = args[flags] as libc::c_int;
                if flags & libc::O_ACCMODE == libc::O_RDONLY && flags & libc::O_TRUNC == 0 {
                    return Answer::Continue;
                }
                let process = self.process_of(req.pid);
                if self.told_handle.insert(process) {
                    let message = "stella: refusing a write through a file handle (open_by_handle_at): the shell guard cannot tell which file it names\n";
                    if !notify::write_stderr_of(req.pid, message.as_bytes()) {
                        let _ = self.err.write_all(message.as_bytes());
                    }
                }
                Answer::Fail(libc::EACCES)
            }
            // A folder may move: until the caller's next call shows this one done, none is
            // remembered.
            filter::Call::Cwd => {
                self.forget_folders();
                self.unsettled.push(req.pid);
                Answer::Continue
            }
            // A new thread takes its number as the call runs; numbers come round again only
            // after every other one (`pid_max`).
            filter::Call::Start => {
                self.cwds.clear();
                Answer::Continue
            }
            filter::Call::Link { to } => {
                let located = self.locate(listener, req, fd(to.0), args[to.1], false, true);
                // A new name for an existing file writes no bytes: a later write through it is
                // checked as a write of that file (see `linked`).
                match self.check(req, located, Intent::Write { content: None }, None) {
                    Ok(Some((path, _, _))) => {
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
        act: Act,
    ) -> Answer {
        let writes = flags & libc::O_ACCMODE != libc::O_RDONLY
            || flags & (libc::O_TRUNC | libc::O_CREAT) != 0;
        let follow = flags & libc::O_NOFOLLOW == 0;
        let located = self.locate(listener, req, dirfd, addr, follow, writes);
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
        self.change(req, located, Intent::Write { content: None }, act)
    }

    /// Record a read of `path`'s bytes now, if it is a regular file, remembering which process
    /// read it and what was known before.
    fn read(&mut self, req: &libc::seccomp_notif, path: RelPath) {
        let meta = self
            .stat_hint
            .take()
            .filter(|(id, _)| *id == req.id)
            .map(|(_, meta)| meta);
        if matches!(self.known.get(&path), Some(Known::Writing)) {
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
        if meta.as_ref().is_some_and(|m| !m.file) {
            return;
        }
        // A file whose signature has not moved since the guard hashed it is not read again.
        let (journal, tree) = (self.journal, self.tree);
        self.signatures.check_held(journal, || journal.map_in(tree));
        let (taken, now_known) =
            if let Some((digest, exec, held)) = self.signatures.lookup(&self.root, &path, meta) {
                // The session held these very bytes when the command started, and the command
                // has not touched the path since: the read tells the session nothing, and what
                // a later change of it is checked against is what the session held.
                if held && !self.known.contains_key(&path) {
                    return;
                }
                (Taken::Known { digest, exec }, Known::Read(digest))
            } else {
                let Ok(Some((file, meta, at))) = self.open_regular(&path) else {
                    return;
                };
                // A large file is hashed off the call path: the open goes on at once.
                if meta.len() > HASH_ON_CALL_MAX {
                    let id = self.hashing.len();
                    self.hashing
                        .push(Hashing::start(file, Signature::of(&meta)));
                    (Taken::Hashing(id), Known::Hashing(id))
                } else {
                    match self.snapshot_of(file, &meta) {
                        Ok(snap) => {
                            let digest = snap.digest;
                            self.signatures
                                .learn(&path, Signature::of(&meta), at, digest);
                            (Taken::Snap(snap), Known::Read(digest))
                        }
                        Err(_) => return,
                    }
                }
            };
        let process = self.process_of(req.pid);
        let now = Instant::now();
        let known = self.known.insert(path.clone(), now_known);
        self.log.push(Event::Read {
            path: path.clone(),
            snap: taken,
            at: now,
        });
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
                    },
                );
            }
        }
    }

    /// The bytes at `path` now; `None` when it is not a regular file (or gone).
    fn snapshot(&mut self, path: &RelPath) -> io::Result<Option<Snapshot>> {
        let Some((file, meta, at)) = self.open_regular(path)? else {
            return Ok(None);
        };
        let snap = self.snapshot_of(file, &meta)?;
        self.signatures
            .learn(path, Signature::of(&meta), at, snap.digest);
        Ok(Some(snap))
    }

    /// The regular file at `path`, opened for reading without following a symlink or waiting
    /// on a FIFO, with the moment just before it was opened; `None` when there is none.
    fn open_regular(
        &self,
        path: &RelPath,
    ) -> io::Result<Option<(std::fs::File, std::fs::Metadata, SystemTime)>> {
        let at = SystemTime::now();
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
        Ok(meta.is_file().then_some((file, meta, at)))
    }

    /// The bytes of `file` (whose metadata is `meta`): the digest, and the bytes themselves
    /// while the command's budget lasts.
    fn snapshot_of(
        &mut self,
        file: std::fs::File,
        meta: &std::fs::Metadata,
    ) -> io::Result<Snapshot> {
        let exec = meta.mode() & 0o111 != 0;
        if self.kept + meta.len() <= BYTES_BUDGET {
            let mut bytes = Vec::with_capacity(meta.len() as usize);
            // Through `take`: a `File`'s own `read_to_end` asks the size again (`fstat`,
            // `lseek`), which `meta` already said.
            (&file).take(u64::MAX).read_to_end(&mut bytes)?;
            let digest = Digest::of(&bytes);
            let fits = self.kept + bytes.len() as u64 <= BYTES_BUDGET;
            if fits {
                self.kept += bytes.len() as u64;
            }
            let bytes = fits.then_some(bytes);
            return Ok(Snapshot {
                digest,
                bytes,
                exec,
            });
        }
        Ok(Snapshot {
            digest: Digest::of_reader(&file)?,
            bytes: None,
            exec,
        })
    }

    /// Check a call that can change or remove `located`; on "allow" remember it as the command's
    /// own change.
    ///
    /// A change checked against bytes the session or the command knew is carried out by the
    /// supervisor itself (`act`), under the hold every Stella writer takes on the file's folder:
    /// no other Stella check of the path comes between this check and the change.
    fn change(
        &mut self,
        req: &libc::seccomp_notif,
        located: Located,
        intent: Intent,
        act: Act,
    ) -> Answer {
        let dir = match act {
            Act::Kernel => None,
            _ => self.folder_for(req.pid, &located),
        };
        let hold = match &dir {
            Some(d) => match self.hold(req.pid, d) {
                Ok(h) => h,
                Err(answer) => return answer,
            },
            None => None,
        };
        // Under the hold, the file is hashed through the folder the change is carried out in.
        let held = dir.as_ref().filter(|_| hold.is_some());
        match self.check(req, located, intent, held) {
            Ok(Some((path, before, checked))) => {
                let answer = match (&dir, &hold) {
                    (Some(dir), Some(_)) if checked => {
                        act.carry_out(dir, fsutil::file_name(&path), req.pid)
                    }
                    _ => Answer::Continue,
                };
                drop(hold);
                // It failed: nothing changed.
                if matches!(answer, Answer::Fail(_)) {
                    return answer;
                }
                self.changed(path, before);
                answer
            }
            Ok(None) => Answer::Continue,
            Err(answer) => answer,
        }
    }

    /// The folder of `located` in which the supervisor can carry out a change for process
    /// `pid`: inside the workspace, and the process sees files as the supervisor does.
    fn folder_for(&mut self, pid: u32, located: &Located) -> Option<OwnedFd> {
        let (Located::Inside(path), Some(_)) = (located, &self.root_fd) else {
            return None;
        };
        let process = self.process_of(pid);
        if !*self
            .views
            .entry(process)
            .or_insert_with(|| act::same_view(pid))
        {
            return None;
        }
        act::folder(self.root_fd.as_ref()?, path)
    }

    /// Hold `dir` against every other Stella writer. `Ok(None)` when the caller is Stella itself
    /// holding it (a nested `git stella write` renaming its file into place): it checks its own.
    fn hold<'d>(&mut self, pid: u32, dir: &'d OwnedFd) -> Result<Option<FolderHold<'d>>, Answer> {
        FolderHold::take_or(dir, || is_stella(pid)).map_err(|e| {
            let _ = writeln!(
                self.err,
                "stella: refusing a file change the shell guard could not hold still to check: {e}"
            );
            Answer::Fail(libc::EBUSY)
        })
    }

    /// Check a call that can change or remove `located`: `Err` with the answer that fails it,
    /// else the workspace path it changes (`None` for a path outside the guard's business) with
    /// the digest it holds before the change, and whether the check compared the disk with what
    /// the session or the command knew (so that the change must follow it in the same step).
    ///
    /// A process that read the path itself and now changes it is a tool reading what it is about
    /// to rewrite (`sed -i`, a patch, an editor's save): that read tells the session nothing, so
    /// the change is judged by what was known before it, and a refusal forgets the read.
    fn check(
        &mut self,
        req: &libc::seccomp_notif,
        located: Located,
        intent: Intent,
        held: Option<&OwnedFd>,
    ) -> Result<Option<(RelPath, Option<Digest>, bool)>, Answer> {
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
                        Ok(rel) if rel.starts_with(".stella") => {
                            (rel.display().to_string(), ".stella/".to_owned())
                        }
                        Ok(rel) => (
                            rel.display().to_string(),
                            self.data_dir.display().to_string(),
                        ),
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
        let known = match known {
            // Still writing it, or its own bytes: see whether it finished, and if it did,
            // whether they are still there.
            Some(Known::Writing) => {
                self.closes();
                self.known.get(&path).cloned()
            }
            known => known,
        };
        match known {
            Some(Known::Writing) => return Ok(Some((path, None, false))),
            Some(Known::Left(left)) if Signature::at(&path.under(&self.root)) == Some(left.0) => {
                return Ok(Some((path, None, true)));
            }
            _ => {}
        }
        let entry = match self.entry(&path, known.as_ref()) {
            // Another name of a file the session tracks (a hard link) is that file.
            Ok(None) if !matches!(known, Some(Known::Nothing)) => self.linked(&path),
            entry => entry,
        };
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let why = self.unreadable_journal(e);
                let _ = writeln!(self.err, "stella: refusing to change {path}: {why}");
                return Err(Answer::Fail(libc::EACCES));
            }
        };
        let tracked = entry.is_some();
        // A file another guarded command is writing in place holds no bytes anyone meant yet:
        // compared once it is written.
        let disk = if tracked {
            self.written(&path, held)
        } else {
            Ok(Disk::Missing)
        };
        let disk = match disk {
            Ok(disk) => disk,
            Err(e) => {
                let _ = writeln!(
                    self.err,
                    "stella: refusing to change {path}: {e}; nothing was changed: read it again once it is written"
                );
                if own_read {
                    self.forget_read(&path);
                }
                return Err(Answer::Fail(libc::EBUSY));
            }
        };
        let mut check = guard::check_against(entry, &path, intent, disk);
        let others = &self.others;
        if let Err(e) = check.respect(others) {
            let _ = writeln!(
                self.err,
                "stella: refusing to change {path}: what other sessions wrote cannot be read: {e}"
            );
            return Err(Answer::Fail(libc::EACCES));
        }
        // A blind change of bytes HEAD lacks (someone's uncommitted edit, or an untracked
        // file): kept first, unless git ignores the file (a build output, a package folder).
        // Git is asked only about bytes HEAD lacks: a tool rewriting committed files (a
        // formatter) never waits on it. A file git tracks although a rule ignores it (`git add
        // -f`) is taken for ignored.
        if !check.refused()
            && check.verdict == guard::Verdict::Allow(guard::Allow::Untracked)
            && !self.ignores.in_ignored_folder(&path)
        {
            let ignores = &mut self.ignores;
            let mut wanted = |p: &RelPath| !ignores.ignores(p);
            match crate::keep::for_check(
                &mut check,
                &self.others,
                &mut self.keep_budget,
                &mut wanted,
            ) {
                Ok(Some(kept)) => {
                    let line = format!("stella: {}\n", kept.line());
                    if !notify::write_stderr_of(req.pid, line.as_bytes()) {
                        let _ = self.err.write_all(line.as_bytes());
                    }
                    self.kept_files.push(kept);
                }
                Ok(None) => {}
                Err(e) => {
                    let _ = writeln!(self.err, "stella: refusing to change {path}: {e}");
                    return Err(Answer::Fail(libc::EACCES));
                }
            }
        }
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
            if own_read {
                self.forget_read(&path);
            }
            self.refuse(req.pid, &check);
            return Err(Answer::Fail(libc::EACCES));
        }
        let before = match check.disk {
            Disk::Present(d) => Some(d),
            _ if tracked => None,
            _ => Disk::probe(&path.under(&self.root)).digest(),
        };
        Ok(Some((path, before, tracked)))
    }

    /// What is on disk at the tracked `path` once no guarded command is writing it; `Err` when
    /// one still is. Through `held`, the folder held for the change, where it can be: one open
    /// to wait for the file and hash it.
    fn written(&self, path: &RelPath, held: Option<&OwnedFd>) -> io::Result<Disk> {
        if let Some(dir) = held {
            match fsutil::digest_written(dir, fsutil::file_name(path)) {
                Ok(Some(digest)) => return Ok(Disk::Present(digest)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Disk::Missing),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Err(e),
                Err(e) => return Ok(Disk::Unreadable(e.to_string())),
                // Not a regular file: looked at the long way, links followed.
                Ok(None) => {}
            }
        }
        fsutil::wait_written_at(&self.root, path)?;
        Ok(Disk::probe(&path.under(&self.root)))
    }

    /// After an allowed change that is done once its call returns, settle it at the next look.
    fn settle_last(&mut self, answer: Answer) -> Answer {
        if let (Answer::Continue | Answer::Value(_), Some(Event::Changed { path })) =
            (&answer, self.log.last())
        {
            self.settle.push(path.clone());
        }
        answer
    }

    /// Remember an allowed change of `path` (which held `before`) as the command's own.
    fn changed(&mut self, path: RelPath, before: Option<Digest>) {
        self.last_read.remove(&path);
        self.origins.entry(path.clone()).or_insert(before);
        self.known.insert(path.clone(), Known::Writing);
        self.touched_set.insert(path.clone());
        if let Some(watch) = &mut self.watch {
            watch.folder_of(&self.root, &path);
        }
        self.log.push(Event::Changed { path });
    }

    /// Forget the read of `path` a tool made just before changing it: what was known before it
    /// stands, and the read is not the session's.
    fn forget_read(&mut self, path: &RelPath) {
        let Some(before) = self.last_read.remove(path) else {
            return;
        };
        restore(&mut self.known, path, before.known);
        // Its reads since, which the journal does not hold yet.
        let cut = self
            .log
            .iter()
            .rposition(
                |e| matches!(e, Event::Read { path: p, at, .. } if p == path && *at < before.at),
            )
            .map_or(0, |i| i + 1);
        let mut i = cut;
        while i < self.log.len() {
            if matches!(&self.log[i], Event::Read { path: p, .. } if p == path) {
                self.log.remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// Take in the files the command finished writing: what each looked like then.
    fn closes(&mut self) {
        let Some(watch) = &mut self.watch else {
            self.settle.clear();
            return;
        };
        let settled = std::mem::take(&mut self.settle);
        for path in settled.into_iter().chain(watch.closed()) {
            // Only a file the command is writing: a close by anyone else of a file it finished
            // writing is someone else's change, which its next change is checked against.
            if !matches!(self.known.get(&path), Some(Known::Writing)) {
                continue;
            }
            let Some(sig) = Signature::at(&path.under(&self.root)) else {
                continue;
            };
            self.known
                .insert(path.clone(), Known::Left(Box::new((sig, None))));
            self.log.push(Event::Left { path, sig });
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
        // Both folders held (in one order for every writer) when the supervisor can carry the
        // rename out itself.
        let names = match (&from, &to) {
            (Located::Inside(f), Located::Inside(t)) => Some((f.clone(), t.clone())),
            _ => None,
        };
        let dirs = match (
            self.folder_for(req.pid, &from),
            self.folder_for(req.pid, &to),
        ) {
            (Some(f), Some(t)) => Some((f, t)),
            _ => None,
        };
        let mut holds = Vec::new();
        let mut held = false;
        if let Some((f, t)) = &dirs {
            let (fi, ti) = (act::identity(f), act::identity(t));
            let order = match fi.cmp(&ti) {
                std::cmp::Ordering::Equal => vec![f],
                std::cmp::Ordering::Less => vec![f, t],
                std::cmp::Ordering::Greater => vec![t, f],
            };
            held = true;
            for d in order {
                match self.hold(req.pid, d) {
                    Ok(Some(h)) => holds.push(h),
                    Ok(None) => held = false,
                    Err(answer) => return answer,
                }
            }
        }
        let carry_out = |checked: bool| match (&dirs, &names) {
            (Some((fd, td)), Some((f, t))) if held && checked => {
                act::rename(fd, fsutil::file_name(f), td, fsutil::file_name(t), flags)
            }
            _ => Answer::Continue,
        };
        if flags & libc::RENAME_EXCHANGE != 0 {
            // Both are replaced: two writes.
            let mut changes = Vec::new();
            for located in [to, from] {
                match self.check(req, located, write, None) {
                    Err(answer) => return answer,
                    Ok(checked) => changes.extend(checked),
                }
            }
            let answer = carry_out(changes.iter().any(|c| c.2));
            if matches!(answer, Answer::Fail(_)) {
                return answer;
            }
            for (path, before, _) in changes {
                self.changed(path, before);
            }
            return answer;
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
                return self.change(req, from, Intent::Delete, Act::Kernel);
            }
            Located::Inside(f) => Some(f),
            // Refused, or Stella itself moving its own files.
            Located::Stella(_) | Located::Unknown(_) => match self.check(req, from, write, None) {
                Err(answer) => return answer,
                Ok(_) => None,
            },
            Located::Elsewhere => None,
        };
        let (to, before, checked) = match self.check(req, to, write, None) {
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
            let answer = carry_out(checked);
            // The command's own bytes, put in place by the supervisor: taken now, still under
            // the hold, so a writer right behind it cannot pass its bytes off as these.
            let taken = match answer {
                Answer::Value(_) if self.touched_set.contains(&from) => {
                    let sig = Signature::at(&to.under(&self.root));
                    self.snapshot(&to).ok().flatten().zip(sig)
                }
                _ => None,
            };
            drop(holds);
            if !matches!(answer, Answer::Fail(_)) {
                let process = self.process_of(req.pid);
                self.carry(process, from, to.clone(), before);
            }
            if let Some((snap, sig)) = taken {
                self.settle.retain(|p| *p != to);
                self.known
                    .insert(to.clone(), Known::Left(Box::new((sig, Some(snap.digest)))));
                self.log.push(Event::Wrote { path: to, snap });
            }
            return answer;
        }
        // A folder: every path beneath it the session or this command knows of moves with it.
        let mut under: Vec<RelPath> = match self.journal.entries_of_tree(self.tree) {
            Ok(entries) => entries.into_iter().map(|e| e.path).collect(),
            Err(e) => {
                let why = self.unreadable_journal(e);
                let _ = writeln!(self.err, "stella: refusing to rename {from}: {why}");
                return Answer::Fail(libc::EACCES);
            }
        };
        let answer = carry_out(checked);
        drop(holds);
        if matches!(answer, Answer::Fail(_)) {
            return answer;
        }
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
        answer
    }

    /// What a rename of `from` to `to` does to this command's knowledge (`before`: what `to`
    /// held).
    fn carry(&mut self, process: u32, from: RelPath, to: RelPath, before: Option<Digest>) {
        if self.touched_set.contains(&from) {
            let created_here = matches!(self.origins.get(&from), Some(None))
                && !matches!(self.at_start(&from), Ok(Some(_)));
            if created_here {
                // A file this command made (a tool's temporary file, renamed over the file it
                // rewrites): the destination's write, finished once renamed; the source is gone.
                self.changed(to.clone(), before);
                self.settle.push(to);
                self.log.push(Event::Changed { path: from });
                return;
            }
            // Its own bytes in a file the session knows: a rename, and they stay its own.
            // What it left at the source is now at the destination.
            self.log.retain(|e| {
                !matches!(e, Event::Changed { path } | Event::Left { path, .. } | Event::Wrote { path, .. } if *path == from)
            });
            if self.touched_set.remove(&to) {
                self.origins.remove(&to);
            }
            self.touched_set.remove(&from);
            self.known.insert(from.clone(), Known::Nothing);
            self.log.push(Event::Moved {
                from,
                to: to.clone(),
            });
            self.changed(to.clone(), None);
            self.settle.push(to);
            return;
        }
        // The renaming tool's own read of the source (`git mv` hashes it) is no read of the
        // session's: what was known before it moves.
        if let Some(r) = self.last_read.get(&from)
            && r.process == process
            && r.at.elapsed() < TOOL_READ
        {
            self.forget_read(&from);
        }
        let carried = match self.known.get(&from) {
            Some(Known::Read(d)) => Known::Read(*d),
            Some(Known::Hashing(id)) => Known::Hashing(*id),
            Some(Known::Moved(at)) => Known::Moved(at.clone()),
            Some(Known::Nothing) => Known::Nothing,
            Some(Known::Writing | Known::Left(..)) => unreachable!("a changed path is touched"),
            None => Known::Moved(from.clone()),
        };
        self.last_read.remove(&from);
        self.last_read.remove(&to);
        if self.touched_set.remove(&to) {
            self.origins.remove(&to);
        }
        self.known.insert(from.clone(), Known::Nothing);
        self.known.insert(to.clone(), carried);
        self.renamed_by
            .insert(to.clone(), (process, Instant::now()));
        self.log.push(Event::Moved { from, to });
    }

    /// What the session knew of `path` when the command started (its digest, and whether its
    /// bytes are kept), asked once per path: from the signatures' mark when the session held the
    /// file unchanged, else from the journal.
    fn at_start(&mut self, path: &RelPath) -> Result<Option<(Seen, bool)>, journal::Error> {
        if let Some(seen) = self.start.get(path) {
            return Ok(*seen);
        }
        let (journal, tree) = (self.journal, self.tree);
        self.signatures.check_held(journal, || journal.map_in(tree));
        let seen = match self.signatures.held(path) {
            Some(digest) => Some((Seen::Digest(digest), true)),
            None => {
                let seen = journal.seen_at(tree, path)?;
                if let Some((Seen::Digest(digest), true)) = seen {
                    self.signatures.mark_held(path, digest);
                }
                seen
            }
        };
        self.start.insert(path.clone(), seen);
        Ok(seen)
    }

    /// The session's entry for `path`, given what this command has seen of it (`known`).
    /// Only what the decision needs: the whole entry (the bytes for a refusal's diff) is read
    /// when a refusal needs it.
    fn entry(
        &mut self,
        path: &RelPath,
        known: Option<&Known>,
    ) -> Result<Option<Entry>, journal::Error> {
        let seen = match known {
            Some(Known::Read(d)) => Some(Seen::Digest(*d)),
            // A change waits for the digest of what was read (a bounded wait: past it, only a
            // re-read can tell).
            Some(Known::Hashing(id)) => Some(
                self.hashing[*id]
                    .wait(HASH_WAIT)
                    .map_or(Seen::Reread, Seen::Digest),
            ),
            Some(Known::Nothing) => None,
            Some(Known::Moved(from)) => {
                let from = from.clone();
                self.at_start(&from)?.map(|(s, _)| s)
            }
            // What it left, when recorded; else only a re-read can tell.
            Some(Known::Left(left)) => Some(left.1.map_or(Seen::Reread, Seen::Digest)),
            Some(Known::Writing) | None => self.at_start(path)?.map(|(seen, _)| seen),
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
    /// For a `change`, a path outside the workspace's own is inside it when one of its folders
    /// is the workspace folder itself (a bind mount of it, or the folder renamed meanwhile).
    fn locate(
        &mut self,
        listener: &Listener,
        req: &libc::seccomp_notif,
        dirfd: Option<libc::c_int>,
        addr: u64,
        follow: bool,
        change: bool,
    ) -> Located {
        self.stat_hint = None;
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
        // Every process seen is known, for the signals passed on to the command.
        let process = self.process_of(req.pid);
        let cwd = (raw.is_relative() && matches!(dirfd, None | Some(libc::AT_FDCWD)))
            .then(|| self.cwd_of(req.pid, change))
            .flatten();
        let rel = rel_beneath(cwd.as_deref(), dirfd, &raw, &self.root);
        // A read: one `stat` in its folder, held open, and that `stat` is the read's.
        let read = match (&rel, change) {
            (Some(rel), false) => self.stat_in_folder(rel, follow),
            _ => None,
        };
        let beneath = match (read, &rel, &self.root_dir) {
            (Some(stat), Some(rel), _) => {
                self.stat_hint = Some((req.id, stat));
                Some(rel.clone())
            }
            (None, Some(rel), Some(root_fd)) => {
                resolve_beneath(rel, follow, root_fd.as_fd()).map(|fd| {
                    // A read's `stat` comes from the descriptor, not another walk of the path.
                    self.stat_hint = (!change)
                        .then(|| std::fs::File::from(fd).metadata().ok())
                        .flatten()
                        .map(|meta| (req.id, Stat::of(&meta)));
                    rel.clone()
                })
            }
            _ => None,
        };
        // The names alone said where it is, and the kernel agreed (no link on the way): the
        // workspace path is `rel` as it stands, with no absolute path to build and take apart.
        if let Some(rel) = beneath {
            if self.data_rel.as_ref().is_some_and(|d| rel.starts_with(d)) {
                return Located::Stella(self.root.join(rel));
            }
            return self.classify(&rel, || self.root.join(&rel));
        }
        let resolved = match resolve_quick(req.pid, dirfd, &raw, follow) {
            Some(p) => p,
            None => {
                let abs = if raw.is_absolute() {
                    raw
                } else {
                    match notify::base_dir(req.pid, dirfd) {
                        Ok(base) => base.join(raw),
                        Err(e) => return Located::Unknown(e),
                    }
                };
                match resolve_as(process, req.pid, &abs, follow) {
                    Ok(p) => p,
                    // A path that cannot be resolved cannot be opened either.
                    Err(_) if follow => return Located::Elsewhere,
                    Err(e) => return Located::Unknown(e),
                }
            }
        };
        if resolved.starts_with(&self.data_dir) {
            return Located::Stella(resolved);
        }
        let rel = match resolved.strip_prefix(&self.root) {
            Ok(rel) => rel.to_owned(),
            Err(_) => match change.then(|| self.alias(&resolved)).flatten() {
                Some(rel) => rel,
                None => return Located::Elsewhere,
            },
        };
        self.classify(&rel, || resolved)
    }

    /// Where `rel`, a path relative to the workspace root, lies: in the workspace, in a private
    /// area (`resolved` names it for the refusal), or, the root itself or a name git cannot
    /// hold, elsewhere.
    fn classify(&self, rel: &Path, resolved: impl FnOnce() -> PathBuf) -> Located {
        match RelPath::from_bytes(rel.as_os_str().as_bytes()) {
            Some(rel) => match paths::private_area(&rel) {
                Some(".stella") => Located::Stella(resolved()),
                // `.git` folders are git's: never recorded, as git runs in them.
                Some(_) => Located::Elsewhere,
                None => Located::Inside(rel),
            },
            None => Located::Elsewhere,
        }
    }

    /// What one `stat` says of `rel` (a path inside the workspace by its names alone), taken in
    /// its folder, which the supervisor holds open (`O_PATH`) from the first read there: one
    /// system call for a read where resolving the whole path takes three. `None` where the
    /// path must go the long way: a symbolic link on the way (the folder is opened only when
    /// none is) or as its last name when `follow`, a name that is gone, no folder to hold.
    ///
    /// A folder held names the folder it was when opened: every rename the command makes, and
    /// every call that can move a working folder or a mount, lets go of all of them (as of the
    /// remembered working folders).
    fn stat_in_folder(&mut self, rel: &Path, follow: bool) -> Option<Stat> {
        let root_fd = self.root_dir.as_ref()?;
        let (parent, name) = (rel.parent()?, rel.file_name()?);
        let dir = if parent.as_os_str().is_empty() {
            root_fd.as_fd()
        } else {
            if !self.folders.contains_key(parent) {
                if self.folders.len() >= FOLDERS_HELD {
                    self.folders.clear();
                }
                let fd = rustix::fs::openat2(
                    root_fd,
                    parent,
                    rustix::fs::OFlags::PATH
                        | rustix::fs::OFlags::DIRECTORY
                        | rustix::fs::OFlags::CLOEXEC,
                    rustix::fs::Mode::empty(),
                    rustix::fs::ResolveFlags::BENEATH | rustix::fs::ResolveFlags::NO_SYMLINKS,
                )
                .ok()?;
                self.folders.insert(parent.to_owned(), fd);
            }
            self.folders.get(parent)?.as_fd()
        };
        let st = rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).ok()?;
        if follow && Stat::is_link(&st) {
            return None;
        }
        Some(Stat::of_raw(&st))
    }

    /// Let go of every remembered working folder and every folder held for reads: a call may
    /// have moved one.
    fn forget_folders(&mut self) {
        self.cwds.clear();
        self.folders.clear();
    }

    /// Thread `tid`'s working folder, read from `/proc`; `None` when it is gone or unreadable.
    ///
    /// For a read (not `fresh`), what was read for `tid` before, unless a call came since that
    /// could move a working folder, rename one, or start a thread that may take a dead thread's
    /// number ([`filter::Call::Cwd`], [`filter::Call::Start`], a rename); a folder read while a call that moves one may still be under way
    /// is not remembered. A change always reads it: the supervisor carries changes out itself,
    /// in the folder this names.
    fn cwd_of(&mut self, tid: u32, fresh: bool) -> Option<Rc<Path>> {
        if !fresh && let Some(cwd) = self.cwds.get(&tid) {
            return Some(cwd.clone());
        }
        let cwd = std::fs::read_link(format!("/proc/{tid}/cwd")).ok()?;
        if !cwd.is_absolute() || cwd.as_os_str().as_bytes().ends_with(b" (deleted)") {
            return None;
        }
        let cwd: Rc<Path> = cwd.into();
        if self.unsettled.is_empty() {
            self.cwds.insert(tid, cwd.clone());
        }
        Some(cwd)
    }

    /// The path of `resolved` inside the workspace, when one of its folders is the workspace
    /// folder (the same device and inode) under another name.
    fn alias(&self, resolved: &Path) -> Option<PathBuf> {
        let root = self.root_id?;
        let mut names = Vec::new();
        let mut at = resolved;
        loop {
            if std::fs::metadata(at).is_ok_and(|m| (m.dev(), m.ino()) == root) {
                return Some(names.iter().rev().collect());
            }
            names.push(at.file_name()?);
            at = at.parent()?;
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

    /// Between calls: pass on a signal that asked to end the command, take in what it finished
    /// writing, and journal what is due.
    fn tick(&mut self, pid: u32) {
        if let Some(signal) = signals::take_end() {
            // To the command and every process of it the guard has seen (a shell waiting for
            // its child would otherwise leave the child running).
            let mut pids: HashSet<u32> = self.processes.values().copied().collect();
            pids.retain(|p| still_guarded(*p));
            pids.insert(pid);
            for p in pids
                .into_iter()
                .filter_map(|p| rustix::process::Pid::from_raw(p as i32))
            {
                let _ = rustix::process::kill_process(p, signal);
            }
        }
        self.closes();
        // A read older than a tool's read window is the session's for good: what it replaced
        // is never needed again (a command reading 100,000 files would keep it all).
        if self.pruned.elapsed() >= TOOL_READ {
            self.pruned = Instant::now();
            self.last_read.retain(|_, r| r.at.elapsed() < TOOL_READ);
        }
        // A command shorter than a tool's read window is one step, journaled when it ends.
        if self.flushed.elapsed() < self.flush_every || self.started.elapsed() < TOOL_READ {
            return;
        }
        self.flushed = Instant::now();
        match self.flush(false) {
            Ok(()) => self.failing = false,
            // Kept for the next try; the last one, at exit, reports it. Said once a spell.
            Err(e) if !self.failing => {
                self.failing = true;
                tracing::warn!(error = %e, "could not journal what the command did so far; trying again");
            }
            Err(_) => {}
        }
    }

    /// What a change refused because the session's journal could not be read says, the damage
    /// kept for the command's end.
    fn unreadable_journal(&mut self, e: journal::Error) -> String {
        let said = format!("the session's journal could not be read: {e}");
        if e.is_damage() {
            self.damage.get_or_insert(e);
            format!(
                "{said}; nothing was changed. Stella repairs the journal when this command ends: then read the file again before changing it"
            )
        } else {
            format!("{said}; nothing was changed")
        }
    }

    /// The command ended: take in the rest and journal everything.
    fn finish(mut self, status: ExitStatus) -> Result<Report, Error> {
        let _span = tracing::debug_span!("record").entered();
        self.closes();
        self.flush(true)?;
        self.signatures.save();
        peak_memory("recorded");
        if let Some(damage) = self.damage.take() {
            return Err(Error::Journal(damage));
        }
        Ok(Report {
            status,
            tip: self.tip,
            reads: self.n_reads,
            writes: self.n_writes,
            refused: self.refused,
        })
    }

    /// Journal, as one step, the events that are due (all of them when `all`): a read once a
    /// tool's own read could no longer be in question, everything else at once, each path's
    /// events in order; and the refusals so far.
    fn flush(&mut self, all: bool) -> Result<(), Error> {
        let mut due = Vec::new();
        let mut later = Vec::new();
        let mut blocked: HashSet<RelPath> = HashSet::new();
        for event in std::mem::take(&mut self.log) {
            let waits = match &event {
                Event::Read { at, snap, .. } => {
                    (!all && at.elapsed() < TOOL_READ)
                        || matches!(snap, Taken::Hashing(id) if !all && self.hashing[*id].ready().is_none())
                }
                // Still being written: what it left is not known yet.
                Event::Changed { path } => {
                    !all && matches!(self.known.get(path), Some(Known::Writing))
                }
                _ => false,
            } || event.paths().iter().flatten().any(|p| blocked.contains(*p));
            if waits {
                blocked.extend(event.paths().into_iter().flatten().cloned());
                later.push(event);
            } else {
                due.push(event);
            }
        }
        self.log = later;
        if due.is_empty() && self.refusals.is_empty() && self.kept_files.is_empty() {
            return Ok(());
        }
        // Within what is due, a path's last reading or writing is what counts, up to a rename.
        let mut last: HashSet<&RelPath> = HashSet::new();
        let mut keep = vec![true; due.len()];
        for (i, event) in due.iter().enumerate().rev() {
            match event {
                Event::Moved { from, to } => {
                    last.remove(from);
                    last.remove(to);
                }
                Event::Read { path, .. }
                | Event::Changed { path }
                | Event::Left { path, .. }
                | Event::Wrote { path, .. } => {
                    keep[i] = last.insert(path);
                }
            }
        }
        let due: Vec<Event> = due
            .into_iter()
            .zip(keep)
            .filter_map(|(e, k)| k.then_some(e))
            .collect();
        let refused = std::mem::take(&mut self.refusals);
        let large = due.len() > BATCH_PATHS;
        match self.record_due(&due, refused.clone()) {
            Ok(()) => {
                self.flush_every = if large {
                    (self.flush_every * 2).min(FLUSH_MAX)
                } else {
                    FLUSH_EVERY
                };
                Ok(())
            }
            // Kept, in order, for the next try.
            Err(e) => {
                self.log.splice(0..0, due);
                self.refusals.splice(0..0, refused);
                Err(e)
            }
        }
    }

    /// Record `due` (the events a flush picked) and the refusals `refused` as one step.
    fn record_due(
        &mut self,
        due: &[Event],
        refused: Vec<crate::refusals::Record>,
    ) -> Result<(), Error> {
        // What the session knew of each path when the command started, and which paths git
        // ignores (those matter only when the session already tracks them).
        let mut new = Vec::new();
        let mut asked = HashSet::new();
        for event in due {
            for p in event.paths().into_iter().flatten() {
                if self.at_start(p)?.is_none() && !self.ignored.contains_key(p) && asked.insert(p) {
                    new.push(p.clone());
                }
            }
        }
        let ignored_now = ignored(&self.root, &new);
        for p in new {
            let ignored = ignored_now.contains(&p);
            self.ignored.insert(p, ignored);
        }
        let moved_to: HashSet<RelPath> = due
            .iter()
            .filter_map(|e| match e {
                Event::Moved { to, .. } => Some(to.clone()),
                _ => None,
            })
            .collect();
        let skip = |sup: &Self, p: &RelPath| sup.ignored.get(p).copied().unwrap_or(false);
        // Bytes the session already holds: nothing to record, unless a rename brought other
        // knowledge there.
        let holds = |sup: &Self, p: &RelPath, digest: Digest, kept: bool| {
            !moved_to.contains(p)
                && matches!(sup.start.get(p), Some(Some((seen, held)))
                    if *seen == Seen::Digest(digest) && (*held || !kept))
        };
        let batch = if due.len() > BATCH_PATHS {
            Some(self.journal.batch()?)
        } else {
            None
        };
        let mut edits = Vec::new();
        let (mut n_reads, mut n_writes) = (0, 0);
        // Digests still being computed are waited for this long in all.
        let deadline = Instant::now() + HASH_WAIT;
        for event in due {
            match event {
                Event::Read { path, snap, .. } => {
                    let hashed;
                    let snap = match snap {
                        Taken::Snap(snap) => snap,
                        // Unknown by the end of the command, or changed while hashed: the read
                        // tells the session nothing.
                        Taken::Hashing(id) => match self.hashing[*id]
                            .wait(deadline.saturating_duration_since(Instant::now()))
                        {
                            Some(digest) => {
                                hashed = Snapshot {
                                    digest,
                                    bytes: None,
                                    exec: false,
                                };
                                &hashed
                            }
                            None => continue,
                        },
                        // Not read: known by its signature. Held with its bytes, there is
                        // nothing to record; otherwise the bytes are taken now, if they still
                        // are the same.
                        Taken::Known { digest, exec } => {
                            if skip(self, path) || holds(self, path, *digest, true) {
                                continue;
                            }
                            hashed = match self.snapshot(path) {
                                Ok(Some(now)) if now.digest == *digest => now,
                                _ => Snapshot {
                                    digest: *digest,
                                    bytes: None,
                                    exec: *exec,
                                },
                            };
                            &hashed
                        }
                    };
                    if skip(self, path) || holds(self, path, snap.digest, snap.bytes.is_some()) {
                        continue;
                    }
                    let version = record::Version {
                        digest: snap.digest,
                        kept: self.keep(&batch, snap)?,
                    };
                    edits.push(record::read(path, version));
                    n_reads += 1;
                }
                Event::Moved { from, to } => {
                    if skip(self, from) && skip(self, to) {
                        continue;
                    }
                    edits.push(record::moved(from, to));
                    n_writes += 1;
                }
                Event::Changed { path } => {
                    if skip(self, path) {
                        continue;
                    }
                    let replaced = Replaced::unkept(self.origins.get(path).copied().flatten());
                    match self.snapshot(path) {
                        Ok(Some(snap)) if holds(self, path, snap.digest, snap.bytes.is_some()) => {}
                        Ok(Some(snap)) => {
                            let version = record::Version {
                                digest: snap.digest,
                                kept: self.keep(&batch, &snap)?,
                            };
                            edits.push(record::wrote(path, version, replaced));
                            n_writes += 1;
                        }
                        // Gone: the entry goes too; a path the session never tracked leaves
                        // nothing.
                        Ok(None) if !path.under(&self.root).exists() => {
                            let tracked = matches!(self.start.get(path), Some(Some(_)));
                            if tracked || moved_to.contains(path) || self.recorded.contains(path) {
                                edits.push(record::deleted(path));
                                n_writes += 1;
                            }
                        }
                        // A folder, a device, something unreadable: nothing the map can hold.
                        _ => {}
                    }
                }
                Event::Left { path, sig } => {
                    if skip(self, path) {
                        continue;
                    }
                    let replaced = Replaced::unkept(self.origins.get(path).copied().flatten());
                    // The bytes it left, when the file still is as it left it: read now, and
                    // checked against what `stat` said when it finished, before and after.
                    let snap = match self.snapshot(path) {
                        Ok(Some(snap)) if Signature::at(&path.under(&self.root)) == Some(*sig) => {
                            Some(snap)
                        }
                        _ => None,
                    };
                    match snap {
                        // Renamed or deleted since: its own later events say what became of it.
                        None if !path.under(&self.root).exists() => {
                            let tracked = matches!(self.start.get(path), Some(Some(_)));
                            if tracked || moved_to.contains(path) || self.recorded.contains(path) {
                                edits.push(record::deleted(path));
                            } else {
                                continue;
                            }
                        }
                        Some(snap) => {
                            if let Some(Known::Left(left)) = self.known.get_mut(path)
                                && left.0 == *sig
                            {
                                left.1 = Some(snap.digest);
                            }
                            if holds(self, path, snap.digest, snap.bytes.is_some()) {
                                continue;
                            }
                            let version = record::Version {
                                digest: snap.digest,
                                kept: self.keep(&batch, &snap)?,
                            };
                            edits.push(record::wrote(path, version, replaced));
                        }
                        // Changed again since: what it left cannot be known, so the next
                        // change needs a re-read.
                        None => edits.push(record::wrote_unsure(path, replaced)),
                    }
                    n_writes += 1;
                }
                Event::Wrote { path, snap } => {
                    if skip(self, path) || holds(self, path, snap.digest, snap.bytes.is_some()) {
                        continue;
                    }
                    let replaced = Replaced::unkept(self.origins.get(path).copied().flatten());
                    let version = record::Version {
                        digest: snap.digest,
                        kept: self.keep(&batch, snap)?,
                    };
                    edits.push(record::wrote(path, version, replaced));
                    n_writes += 1;
                }
            }
        }
        if edits.is_empty() && refused.is_empty() && self.kept_files.is_empty() {
            return Ok(());
        }
        let n_refused = refused.len();
        let refused_note = match n_refused {
            0 => String::new(),
            n => format!(", {n} refused"),
        };
        let mut root = if refused.is_empty() {
            Vec::new()
        } else {
            // Added to the count the session's newest step keeps.
            let tree = match &self.tip {
                Some(tip) => tip.tree,
                None => self.journal.tip(self.id)?.tree,
            };
            vec![crate::refusals::edit(self.journal, tree, refused)?]
        };
        for kept in std::mem::take(&mut self.kept_files) {
            root.extend(kept.root_edits(self.journal)?);
        }
        let put: Vec<RelPath> = edits
            .iter()
            .filter_map(|e| match e {
                MapEdit::Put { path, .. } => Some(path.clone()),
                MapEdit::Move { to, .. } => Some(to.clone()),
                MapEdit::Remove { .. } => None,
            })
            .collect();
        let step = Step {
            summary: format!(
                "{} ({n_reads} read, {n_writes} changed{refused_note})",
                self.summary
            ),
            map: edits,
            root,
        };
        let tip = match batch {
            Some(b) => self.journal.record_batch(self.id, &step, b)?,
            None => self.journal.record(self.id, &step)?,
        };
        // What this command put in the map: gone later, it is dropped from it again.
        self.recorded.extend(put);
        self.tip = Some(tip);
        self.n_reads += n_reads;
        self.n_writes += n_writes;
        Ok(())
    }
}

/// The part of Stella's data folder a guarded command may not change: all of it, unless the
/// workspace lies inside it (then the stores' folder only).
/// [`Supervisor::data_rel`].
fn data_rel(data_dir: &Path, root: &Path) -> Option<PathBuf> {
    if root.starts_with(data_dir) {
        return Some(PathBuf::new());
    }
    data_dir.strip_prefix(root).ok().map(Path::to_owned)
}

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

/// What git ignores, asked for a command: of one `git check-ignore` kept running
/// ([`IgnoreQuery`]), each folder once.
struct Ignores {
    root: PathBuf,
    /// Started when first needed.
    query: Option<IgnoreQuery>,
    /// Whether git ignores each folder asked about (by its path with a trailing `/`).
    folders: HashMap<Vec<u8>, bool>,
}

impl Ignores {
    /// Whether a folder above `path` is already known to be ignored: no file is read, and git
    /// is not asked (a package folder being removed file by file).
    fn in_ignored_folder(&self, path: &RelPath) -> bool {
        let bytes = path.as_bytes();
        bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'/')
            .any(|(i, _)| self.folders.get(&bytes[..=i]) == Some(&true))
    }

    fn new(root: &Path) -> Ignores {
        Ignores {
            root: root.to_owned(),
            query: None,
            folders: HashMap::new(),
        }
    }

    /// Whether git ignores `path` (asked of one `git check-ignore` kept for the command). A
    /// path git cannot be asked about is not ignored: its bytes are kept.
    ///
    /// Each folder above the path is asked first, once per command: a file in an ignored folder
    /// (a package folder, a build tree) costs a lookup, not a question.
    fn ignores(&mut self, path: &RelPath) -> bool {
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
struct IgnoreQuery {
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
