//! Starting the guarded command as `posix_spawn` starts a program: a child that shares the
//! supervisor's memory (`clone` with `CLONE_VM | CLONE_VFORK`) on a stack of its own until its
//! `exec`. After a `fork` the kernel copies the supervisor's page tables and write-protects its
//! pages, so the supervisor faults on each page it writes afterwards, and the child's `exec`
//! tears the copy down again: a guarded `true` took 2.15-2.35 ms with a `fork` and 1.79-1.87 ms
//! this way (`perf stat -r 300`, alternating), 206 page faults against 152.
//!
//! Between the `clone` and the `exec` the child does what `std::process::Command` would
//! (signals back to their defaults and unblocked, the working folder) and what the guard needs
//! ([`super::notify`]: the filter installed and its listener sent, then the parent's word
//! waited for). It shares the parent's memory, so it allocates nothing and runs no handler of
//! the parent's: every signal stays blocked until the handlers Stella and Rust install are
//! default again. The thread that starts it waits until it runs its program or gives up (the
//! configuration check's thread goes on and gives it the word).

use std::ffi::{CStr, CString, OsStr, c_void};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicI32, Ordering};

use libc::{c_char, c_int};

use super::notify;

unsafe extern "C" {
    /// The process's environment, which the child gets with the command's changes, as
    /// `std::process::Command` gives it.
    static environ: *const *const c_char;
}

/// Signals that may have a handler in this process while a command starts: Stella's
/// ([`super::signals`]: SIGTERM, SIGHUP; SIGINT and SIGQUIT are ignored), and Rust's (SIGSEGV and
/// SIGBUS for stack overflows; SIGPIPE ignored). The child sets each back to its default before
/// it unblocks signals, as `Command` does for SIGPIPE.
const RESET: [c_int; 7] = [
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGPIPE,
    libc::SIGSEGV,
    libc::SIGBUS,
];

/// A guarded child, started by [`spawn`]; reaped by [`Child::wait`].
pub(crate) struct Child {
    pid: libc::pid_t,
    status: Option<ExitStatus>,
}

impl Child {
    pub(crate) fn id(&self) -> u32 {
        self.pid as u32
    }

    /// Kill it (SIGKILL), unless it was reaped already.
    pub(crate) fn kill(&mut self) -> io::Result<()> {
        if self.status.is_some() {
            return Ok(());
        }
        // SAFETY: a plain system call; the pid is this child's until it is reaped.
        if unsafe { libc::kill(self.pid, libc::SIGKILL) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Wait for it to end, and reap it.
    pub(crate) fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        let mut raw: c_int = 0;
        loop {
            // SAFETY: a plain system call with a valid pointer.
            if unsafe { libc::waitpid(self.pid, &mut raw, 0) } >= 0 {
                break;
            }
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                return Err(e);
            }
        }
        let status = ExitStatus::from_raw(raw);
        self.status = Some(status);
        Ok(status)
    }
}

/// Everything the child needs, made before it starts.
struct Prepared {
    argv: Vec<CString>,
    envp: Vec<CString>,
    cwd: Option<CString>,
    /// `/dev/null`, for its standard input and output.
    null: Option<OwnedFd>,
    /// The errno the child gave up with, set before it exits.
    failed: AtomicI32,
}

fn c_string(s: &OsStr) -> io::Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "a NUL byte in the command's arguments, environment or folder",
        )
    })
}

impl Prepared {
    fn of(command: &Command, null_stdio: bool) -> io::Result<Prepared> {
        let mut argv = vec![c_string(command.get_program())?];
        for arg in command.get_args() {
            argv.push(c_string(arg)?);
        }
        let changes: Vec<(&OsStr, Option<&OsStr>)> = command.get_envs().collect();
        let mut envp = Vec::new();
        // SAFETY: `environ` is the C library's NULL-terminated array of NUL-terminated strings;
        // nothing in this process changes it while a command starts (Stella never sets a
        // variable).
        unsafe {
            let mut at = environ;
            while !at.is_null() && !(*at).is_null() {
                let entry = CStr::from_ptr(*at);
                let bytes = entry.to_bytes();
                // A name may start with '=', as std reads it.
                let name = bytes
                    .iter()
                    .skip(1)
                    .position(|b| *b == b'=')
                    .map(|i| &bytes[..=i]);
                if let Some(name) = name
                    && !changes.iter().any(|(k, _)| k.as_bytes() == name)
                {
                    envp.push(entry.to_owned());
                }
                at = at.add(1);
            }
        }
        for (name, value) in changes {
            if let Some(value) = value {
                let mut entry = name.as_bytes().to_vec();
                entry.push(b'=');
                entry.extend_from_slice(value.as_bytes());
                envp.push(c_string(OsStr::from_bytes(&entry))?);
            }
        }
        let cwd = command
            .get_current_dir()
            .map(|d| c_string(d.as_os_str()))
            .transpose()?;
        let null = if null_stdio {
            Some(rustix::fs::open(
                "/dev/null",
                rustix::fs::OFlags::RDWR | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )?)
        } else {
            None
        };
        Ok(Prepared {
            argv,
            envp,
            cwd,
            null,
            failed: AtomicI32::new(0),
        })
    }
}

/// What [`child`] is handed: pointers into memory the parent keeps alive (and does not touch)
/// until the child has run its program or ended.
struct Start<'a> {
    prepared: &'a Prepared,
    argv: &'a [*const c_char],
    envp: &'a [*const c_char],
    fprog: &'a libc::sock_fprog,
    sock: RawFd,
    gated: bool,
    parent: libc::pid_t,
}

/// Start `command` (its program, arguments, environment changes and folder; its standard
/// streams are this process's, or `/dev/null` for input and output with `null_stdio`) with the
/// filter installed, its listener sent over `sock`; `gated`: it waits for the parent's word
/// there before its program runs ([`notify::let_go`]). An error is the child's: the errno it
/// gave up with (a failed install sent its own over `sock` too).
pub(crate) fn spawn(
    command: &Command,
    null_stdio: bool,
    sock: RawFd,
    gated: bool,
) -> io::Result<Child> {
    let prepared = Prepared::of(command, null_stdio)?;
    let nul_ended = |strings: &[CString]| -> Vec<*const c_char> {
        strings
            .iter()
            .map(|s| s.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect()
    };
    let argv = nul_ended(&prepared.argv);
    let envp = nul_ended(&prepared.envp);
    let program = notify::Program::new();
    let fprog = program.fprog();
    let start = Start {
        prepared: &prepared,
        argv: &argv,
        envp: &envp,
        fprog: &fprog,
        sock,
        gated,
        parent: std::process::id() as libc::pid_t,
    };
    // Room for the C library's `execvp` (a script's arguments are copied onto the stack).
    let size = (64 << 10) + argv.len() * std::mem::size_of::<*const c_char>() * 2;
    let size = size.next_multiple_of(4096);
    // SAFETY: an anonymous private mapping, unmapped below once the child no longer runs on it.
    let stack = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
            -1,
            0,
        )
    };
    if stack == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: every signal blocked around the clone (restored below), so no handler of this
    // process runs in the child; the child runs `child` on its own stack, reads `start` only,
    // and this thread is suspended until it has run its program or ended (CLONE_VFORK), so
    // `start` and the stack outlive its use of them.
    let pid = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let pid = libc::clone(
            child,
            stack.cast::<u8>().add(size).cast(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            (&start as *const Start<'_>).cast_mut().cast(),
        );
        let cloned = io::Error::last_os_error();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        libc::munmap(stack, size);
        if pid < 0 {
            return Err(cloned);
        }
        pid
    };
    let mut child = Child { pid, status: None };
    match prepared.failed.load(Ordering::SeqCst) {
        0 => Ok(child),
        errno => {
            let _ = child.wait();
            Err(io::Error::from_raw_os_error(errno))
        }
    }
}

/// The child, between `clone` and `exec`: it allocates nothing and makes only system calls.
extern "C" fn child(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the parent's `Start`, alive and unchanged while this runs.
    let start = unsafe { &*arg.cast::<Start<'_>>() };
    // SAFETY: see `prepare_and_exec`; it returns only when it gave up.
    let errno = unsafe { prepare_and_exec(start) };
    start.prepared.failed.store(errno.max(1), Ordering::SeqCst);
    // SAFETY: ends the child at once, running nothing of the parent's (no exit handlers).
    unsafe { libc::_exit(127) }
}

/// Set the child up and run its program; the errno it gave up with, when it did.
///
/// # Safety
/// Only in the child [`spawn`] starts, with every signal blocked.
unsafe fn prepare_and_exec(start: &Start<'_>) -> c_int {
    let errno = || {
        io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EINVAL)
    };
    // SAFETY: plain system calls on memory the parent keeps alive; see the function's contract.
    unsafe {
        for sig in RESET {
            libc::signal(sig, libc::SIG_DFL);
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::pthread_sigmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        if let Some(null) = &start.prepared.null {
            for fd in [0, 1] {
                if libc::dup2(null.as_raw_fd(), fd) < 0 {
                    return errno();
                }
            }
        }
        if let Some(cwd) = &start.prepared.cwd
            && libc::chdir(cwd.as_ptr()) != 0
        {
            return errno();
        }
        if let Err(e) = notify::install_in_child(start.fprog, start.sock) {
            return e.raw_os_error().unwrap_or(libc::EINVAL);
        }
        if start.gated
            && let Err(e) = notify::wait_for_go(start.sock, start.parent)
        {
            return e.raw_os_error().unwrap_or(libc::EINVAL);
        }
        libc::execvpe(start.argv[0], start.argv.as_ptr(), start.envp.as_ptr());
        errno()
    }
}
