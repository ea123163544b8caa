//! The shell guard's supervisor (Linux): spawn the command under the seccomp filter and answer
//! each notification until it exits, journaling what it did as it goes.

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

mod changes;
mod ignores;
mod journaling;
mod locate;
mod reads;
mod threads;

use ignores::{Ignores, ignored};

use super::act;
use super::process::{
    descendants, is_stella, rel_beneath, resolve_as, resolve_beneath, resolve_quick, still_guarded,
    under_stella,
};
use super::signatures::{Signature, Signatures, Stat};
use super::sys::filter;
use super::sys::memory;
use super::sys::notify::{self, Answer, Listener, Received};
use super::sys::signals::{self, Forward, IgnoreInterrupts};
use super::sys::spawn;
use super::{
    BATCH_PATHS, BYTES_BUDGET, Error, Report, SESSION_ENV, Unsupported, exit_code, support,
};
use super::{HashMap, HashSet};

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
    memory::allocator_gives_back();
    let _span = tracing::debug_span!("shell_guard", session = %id, command = %short(label.unwrap_or(&line.to_string_lossy()), 72)).entered();
    let program_name = command.get_program().to_owned();
    let (ours, theirs) = UnixStream::pair().map_err(|source| Error::Spawn {
        program: program_name.clone(),
        source,
    })?;
    // Checked on a thread of its own while the command starts, on the other core: the child
    // waits for the answer before its program runs, and an invalid configuration runs nothing.
    let config = ConfigCheck::start(context, &ours);
    let prepared = || {
        support()?;
        // The session's step only: what it holds is read when a call first needs it (a
        // command that touches no file of the workspace never reads it).
        Ok::<_, Error>(context.journal().tip_step(id)?)
    };
    let start = match prepared() {
        Ok(start) => start,
        // An invalid configuration is said first, as when it was checked first.
        Err(e) => return Err(config.outcome().err().map_or(e, Error::Config)),
    };
    let summary = format!(
        "exec {}",
        short(label.unwrap_or(&line.to_string_lossy()), 72)
    );
    let journal = context.journal();
    command.env(SESSION_ENV, id.as_str());
    let _quiet = IgnoreInterrupts::new();
    let _ended = Forward::new();
    // Taken before the spawn, while the configuration is checked on the other core: the child
    // waits for that check before its program runs, and these need no child.
    // Held while the command runs: `gc` and `session prune` leave a live session alone.
    let _lease = journal.lease(id).inspect_err(
        |e| tracing::warn!(error = %e, "the running command holds no lease on its session"),
    );
    // Resolved once (a canonicalize): the supervisor keeps it absolute and relative to the root.
    let data_dir = protected_data_dir(&context.ws.data_dir, &context.ws.root);
    let watch = super::watch::Watch::new();
    let root_dir = rustix::fs::open(
        &context.ws.root,
        rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .ok();
    let spawned =
        tracing::debug_span!("spawn").in_scope(|| spawn(&command, false, ours, theirs, true));
    let (mut child, listener) = match (config.outcome(), spawned) {
        (Ok(()), spawned) => spawned?,
        // The child ran nothing (it waits for the word to, and was told not to).
        (Err(invalid), spawned) => {
            if let Ok((mut child, _)) = spawned {
                let _ = child.kill();
                let _ = child.wait();
            }
            return Err(Error::Config(invalid));
        }
    };
    // A large step reads the map's trees scattered over every earlier step's pack: the pages
    // it read are let go of as it goes, not only once it is recorded.
    journal.pace_with(memory::release_pack_pages);
    let mut sup = Supervisor {
        root: context.ws.root.clone(),
        others: guard::Others::new(&journal, id, &context.ws),
        journal: &journal,
        start_step: start,
        tree: std::cell::OnceCell::new(),
        known: HashMap::default(),
        last_read: HashMap::default(),
        pruned: Instant::now(),
        log: Vec::new(),
        hashing: Vec::new(),
        signatures: Signatures::new(&context.ws.root, id),
        renamed_by: HashMap::default(),
        touched_set: HashSet::default(),
        recorded: HashSet::default(),
        settle: Vec::new(),
        watch,
        start: HashMap::default(),
        ignored: HashMap::default(),
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
        origins: HashMap::default(),
        refused: Vec::new(),
        refusals: Vec::new(),
        told: HashSet::default(),
        told_stella: HashSet::default(),
        told_handle: HashSet::default(),
        inodes: None,
        root_id: std::fs::metadata(&context.ws.root)
            .ok()
            .map(|m| (m.dev(), m.ino())),
        data_rel: data_rel(&data_dir, &context.ws.root),
        data_dir,
        carries_out: notify::adds_fds(),
        threads: threads::Threads::new(child.id()),
        ending: None,
        unsettled: Vec::new(),
        root_dir,
        stat_hint: None,
        change_dir: None,
        outside: None,
        folders: HashMap::default(),
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

/// Stella's configuration ([`crate::config::check`]), checked on a thread while the command
/// starts; the thread tells the child over the spawn's socket whether its program may run
/// ([`notify::let_go`]), whatever happens to the thread.
enum ConfigCheck {
    Running(std::thread::JoinHandle<Result<(), crate::config::Error>>),
    Done(Result<(), crate::config::Error>),
}

impl ConfigCheck {
    fn start(context: &Context, ours: &UnixStream) -> ConfigCheck {
        // A pass remembered for the files and variables the configuration is read from now
        // needs a few `stat`s: no thread.
        let unremembered = match crate::config::check_if_remembered(&context.ws) {
            Ok(checked) => {
                let checked = checked.map(drop);
                notify::let_go(ours.as_raw_fd(), checked.is_ok());
                return ConfigCheck::Done(checked);
            }
            Err(unremembered) => unremembered,
        };
        let ws = context.ws.clone();
        let thread = ours.try_clone().ok().and_then(|gate| {
            std::thread::Builder::new()
                .name("config check".into())
                .spawn(move || {
                    // Said however the check ends, a panic included: a child nobody answers
                    // would wait forever, and its parent with it.
                    let mut word = Word { gate, go: false };
                    // Silent: the command line holds stderr's lock on its own thread, so an
                    // event logged here would wait for it forever (the child with it).
                    let checked = tracing::subscriber::with_default(
                        tracing::subscriber::NoSubscriber::default(),
                        || crate::config::check_in_full(&ws, unremembered),
                    )
                    .map(drop);
                    word.go = checked.is_ok();
                    checked
                })
                .ok()
        });
        match thread {
            Some(thread) => ConfigCheck::Running(thread),
            // No thread: checked here (its fingerprint went with the thread that never started),
            // and the word given here.
            None => {
                let checked = crate::config::check(&context.ws).map(drop);
                notify::let_go(ours.as_raw_fd(), checked.is_ok());
                ConfigCheck::Done(checked)
            }
        }
    }

    /// What the check found, waiting for it.
    fn outcome(self) -> Result<(), crate::config::Error> {
        match self {
            ConfigCheck::Running(thread) => thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            ConfigCheck::Done(checked) => checked,
        }
    }
}

/// The word a [`ConfigCheck`] gives the child when it is dropped: "go" only when set.
struct Word {
    gate: UnixStream,
    go: bool,
}

impl Drop for Word {
    fn drop(&mut self) {
        notify::let_go(self.gate.as_raw_fd(), self.go);
    }
}

/// Start `command` with the filter installed, and take its listener, over the socket pair
/// `ours` and `theirs`; `gated`: the child waits for [`notify::let_go`] before its program.
/// `null_stdio`: its standard input and output are `/dev/null`, else this process's streams.
fn spawn(
    command: &Command,
    null_stdio: bool,
    ours: UnixStream,
    theirs: UnixStream,
    gated: bool,
) -> Result<(spawn::Child, Listener), Error> {
    let program_name = command.get_program().to_owned();
    let spawned = spawn::spawn(command, null_stdio, theirs.as_raw_fd(), gated);
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
                Ok(Received::Failed(e)) => Error::Unsupported(why_not(e)),
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
pub fn probe() -> Result<(), Unsupported> {
    support()?;
    let command = Command::new("true");
    let pair = UnixStream::pair().map_err(|source| {
        Unsupported::Trial(Box::new(Error::Spawn {
            program: "true".into(),
            source,
        }))
    })?;
    let (mut child, listener) =
        spawn(&command, true, pair.0, pair.1, false).map_err(|e| match e {
            Error::Unsupported(why) => why,
            other => Unsupported::Trial(Box::new(other)),
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
        .map_err(Unsupported::TrialIo)?;
    let status = child.wait().map_err(Unsupported::TrialIo)?;
    if let Some(e) = unreadable {
        return Err(Unsupported::MemoryUnreadable(e));
    }
    if status.success() {
        Ok(())
    } else {
        Err(Unsupported::TrialFailed(status))
    }
}

/// Why the filter could not be installed.
fn why_not(e: io::Error) -> Unsupported {
    match e.raw_os_error() {
        Some(libc::EBUSY) => Unsupported::Supervised(e),
        Some(libc::EACCES | libc::EPERM) => Unsupported::Forbidden(e),
        Some(libc::EINVAL | libc::ENOSYS) => Unsupported::NoUserNotification(e),
        _ => Unsupported::Filter(e),
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

/// At most this many events go into one step ([`Supervisor::flush`]).
const STEP_EVENTS: usize = 10_000;

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
    /// The session's step when the command started.
    start_step: ObjectId,
    /// Its map, read when first needed ([`Supervisor::tree`]).
    tree: std::cell::OnceCell<ObjectId>,
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
    /// What the session knew, when the command started, of each path the command's steps
    /// concern that it knew then ([`Supervisor::at_start`]).
    start: HashMap<RelPath, (Seen, bool)>,
    /// Whether git ignores each path the step being recorded concerns that the session did not
    /// know ([`Supervisor::learn_ignored`]).
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
    /// The live threads seen so far: each one's process, working folder and view.
    threads: threads::Threads,
    /// A signal that asked to end the command, once one came, and the processes it was passed
    /// on to so far.
    ending: Option<(rustix::process::Signal, HashSet<u32>)>,
    /// Workspace folders held open (`O_PATH`) for reads in them ([`Supervisor::stat_in_folder`]).
    folders: HashMap<PathBuf, OwnedFd>,
    /// Threads whose call that moves a working folder may not be done yet, each held (a pidfd)
    /// where it can be: once a thread has ended, its call is done too.
    unsettled: Vec<(u32, Option<OwnedFd>)>,
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
    /// Whether a change checked against what the session knew is carried out beneath
    /// [`Supervisor::root_dir`] by the supervisor itself (`false` where the kernel cannot hand
    /// the caller a descriptor the supervisor opened: the kernel carries every call out).
    carries_out: bool,
    /// The workspace folder, opened (`O_PATH`): most paths are resolved beneath it, and the
    /// changes the supervisor carries out are made beneath it.
    root_dir: Option<OwnedFd>,
    /// What `stat` said of the path the last read's resolution named (`locate`).
    stat_hint: Option<(u64, Stat)>,
    /// Where the call being answered changes a path, as `locate` placed it by its names.
    change_dir: Option<Placed>,
    /// The path outside the workspace the call being answered changes, as `locate` resolved it
    /// ([`Supervisor::outside_link`]).
    outside: Option<PathBuf>,
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
    /// The session's map when the command started, read from its step the first time.
    fn tree(&self) -> Result<ObjectId, journal::Error> {
        if let Some(tree) = self.tree.get() {
            return Ok(*tree);
        }
        let tree = self.journal.tree_of_step(self.id, self.start_step)?;
        Ok(*self.tree.get_or_init(|| tree))
    }

    /// The process (thread group) of thread `tid`, looked up once per thread.
    fn process_of(&mut self, tid: u32) -> u32 {
        self.threads.process_of(tid)
    }

    fn handle(&mut self, listener: &Listener, req: &libc::seccomp_notif) -> Answer {
        self.change_dir = None;
        self.threads.new_call();
        // A thread's calls come one after another: this one says its last has been carried out.
        if !self.unsettled.is_empty() {
            self.unsettled.retain(|(t, _)| *t != req.pid);
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
                self.unsettled
                    .push((req.pid, notify::thread_pidfd(req.pid).ok()));
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
}

/// A change's path placed by its names ([`Supervisor::locate`]): its folder, opened beneath the
/// workspace, for the hold the change takes there, and whether its last name was there.
struct Placed {
    rel: PathBuf,
    dir: OwnedFd,
    present: bool,
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
