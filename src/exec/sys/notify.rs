//! The kernel side of the shell guard: installing the filter in the child, receiving its
//! notifications, reading the paths they name out of the calling process, and answering.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use libc::{c_int, seccomp_notif, seccomp_notif_resp, sock_filter};

use super::filter;

/// Tell a gated child ([`super::spawn::spawn`]) over `sock` to run its program (`go`) or not.
pub(crate) fn let_go(sock: RawFd, go: bool) {
    let byte = [if go { GO } else { STOP }];
    // SAFETY: a valid buffer of one byte. A child gone already needs no word.
    unsafe { libc::send(sock, byte.as_ptr().cast(), 1, libc::MSG_NOSIGNAL) };
}

const GO: u8 = b'g';
const STOP: u8 = b's';

/// In the child: wait for the parent's word; anything but "go" (a "stop") ends the child
/// before its program runs. A parent killed meanwhile kills the child too: the child holds a
/// copy of the parent's end of the socket until its `exec`, so it would never see it close.
///
/// # Safety
/// Call only in a child of `parent` before its `exec` ([`super::spawn`]).
pub(super) unsafe fn wait_for_go(sock: RawFd, parent: libc::pid_t) -> io::Result<()> {
    // SAFETY: plain system calls with valid arguments.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::getppid() != parent {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        let waited = wait_for_word(sock);
        // Only while it waits: the command itself outlives a supervisor that dies (its guarded
        // calls then fail).
        libc::prctl(libc::PR_SET_PDEATHSIG, 0);
        waited
    }
}

/// The parent's word over `sock`: `Ok` for "go".
///
/// # Safety
/// Call only in a child before its `exec` ([`super::spawn`]).
unsafe fn wait_for_word(sock: RawFd) -> io::Result<()> {
    let mut byte = [0u8; 1];
    loop {
        // SAFETY: a valid buffer of one byte.
        let n = unsafe { libc::recv(sock, byte.as_mut_ptr().cast(), 1, 0) };
        if n < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return if n == 1 && byte[0] == GO {
            Ok(())
        } else {
            Err(io::Error::from_raw_os_error(libc::ECANCELED))
        };
    }
}

/// Install the filter on the calling process and send the listener over `sock`.
///
/// Runs in the child before its `exec`, sharing the parent's memory, so it allocates nothing
/// and calls only async-signal-safe functions. On failure it sends the errno instead of a descriptor, so the
/// parent can tell "this machine cannot guard" from "the command could not be started".
///
/// # Safety
/// Call only in a child before its `exec` ([`super::spawn`]); `prog` must stay valid.
pub(super) unsafe fn install_in_child(prog: &libc::sock_fprog, sock: RawFd) -> io::Result<()> {
    // SAFETY: plain system calls with valid arguments; see the function's contract.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return fail(sock);
        }
        let install = |flags: libc::c_ulong| {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                flags,
                prog as *const libc::sock_fprog,
            )
        };
        // Once the supervisor holds a call, only a fatal signal ends the caller's wait: another
        // signal would fail the call with EINTR (a shell's `fork` while a child exits), which
        // no program expects of an open or a fork. Linux 5.19+; before, the call is installed
        // without it (EINVAL).
        let mut fd = install(
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER | libc::SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
        );
        if fd < 0 && *libc::__errno_location() == libc::EINVAL {
            fd = install(libc::SECCOMP_FILTER_FLAG_NEW_LISTENER);
        }
        if fd < 0 {
            return fail(sock);
        }
        let fd = fd as c_int;
        let sent = send_fd(sock, fd);
        libc::close(fd);
        if sent < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Report the current errno over `sock` as four bytes, and return it.
unsafe fn fail(sock: RawFd) -> io::Result<()> {
    let err = io::Error::last_os_error();
    let code: i32 = err.raw_os_error().unwrap_or(libc::EINVAL);
    let bytes = code.to_ne_bytes();
    // SAFETY: a valid buffer of four bytes.
    unsafe { libc::send(sock, bytes.as_ptr().cast(), bytes.len(), libc::MSG_NOSIGNAL) };
    Err(err)
}

/// A message of one data buffer and `control_len` bytes of the control buffer, for
/// `sendmsg`/`recvmsg` of one descriptor (SCM_RIGHTS).
///
/// # Safety
/// The message points at `iov` and `control`: use it only while both live.
unsafe fn one_buffer_message(
    iov: &mut libc::iovec,
    control: &mut [u64; 4],
    control_len: usize,
) -> libc::msghdr {
    // SAFETY: msghdr is plain data; all-zero is its empty value.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = control_len as _;
    msg
}

/// Send `fd` with one marker byte over a Unix socket (SCM_RIGHTS).
unsafe fn send_fd(sock: RawFd, fd: c_int) -> isize {
    let mut byte = [b'F'];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // A buffer big enough and aligned for one descriptor's control message.
    let mut control = [0u64; 4];
    // SAFETY: the message points at live local buffers; CMSG_* compute within `control`.
    unsafe {
        let control_len = libc::CMSG_SPACE(std::mem::size_of::<c_int>() as u32) as usize;
        let msg = one_buffer_message(&mut iov, &mut control, control_len);
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<c_int>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<c_int>(), fd);
        libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL)
    }
}

/// What the child sent: the listener, or the errno of a failed install.
pub(crate) enum Received {
    Listener(OwnedFd),
    Failed(io::Error),
    Nothing,
}

/// Receive what [`install_in_child`] sent, without waiting.
pub(crate) fn receive(sock: RawFd) -> io::Result<Received> {
    let mut buf = [0u8; 4];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let mut control = [0u64; 4];
    // SAFETY: the message points at live local buffers; the descriptor is taken only from a
    // well-formed SCM_RIGHTS control message.
    unsafe {
        let control_len = std::mem::size_of_val(&control);
        let mut msg = one_buffer_message(&mut iov, &mut control, control_len);
        let n = libc::recvmsg(sock, &mut msg, libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC);
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::EAGAIN) => Ok(Received::Nothing),
                _ => Err(e),
            };
        }
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if !cmsg.is_null()
            && (*cmsg).cmsg_level == libc::SOL_SOCKET
            && (*cmsg).cmsg_type == libc::SCM_RIGHTS
        {
            let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<c_int>());
            return Ok(Received::Listener(OwnedFd::from_raw_fd(fd)));
        }
        if n == 4 {
            return Ok(Received::Failed(io::Error::from_raw_os_error(
                i32::from_ne_bytes(buf),
            )));
        }
        Ok(Received::Nothing)
    }
}

/// Whether this kernel can run the guard: user notification and the "continue" answer (5.5).
pub(crate) fn kernel_support() -> Result<(), crate::exec::Unsupported> {
    let action: u32 = libc::SECCOMP_RET_USER_NOTIF;
    // SAFETY: SECCOMP_GET_ACTION_AVAIL reads one u32.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_GET_ACTION_AVAIL,
            0,
            &action as *const u32,
        )
    };
    if rc != 0 {
        return Err(crate::exec::Unsupported::NoUserNotification(
            io::Error::last_os_error(),
        ));
    }
    let release = kernel_release();
    if !release_at_least(&release, (5, 5)) {
        return Err(crate::exec::Unsupported::OldKernel { release });
    }
    Ok(())
}

fn kernel_release() -> String {
    // SAFETY: uname fills a zeroed struct.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut u) != 0 {
            return "unknown".into();
        }
        std::ffi::CStr::from_ptr(u.release.as_ptr())
            .to_string_lossy()
            .into_owned()
    }
}

/// The filter program, owned by the closure that installs it in the child.
pub(crate) struct Program {
    filter: Vec<sock_filter>,
}

impl Program {
    pub fn new() -> Program {
        Program {
            filter: filter::program(),
        }
    }

    /// The program as `seccomp(2)` takes it: a pointer into `self`, computed without allocating.
    pub(crate) fn fprog(&self) -> libc::sock_fprog {
        filter::fprog(&self.filter)
    }
}

/// One notification, in a buffer as large as the kernel's own struct.
pub(crate) struct Request {
    buf: Vec<u64>,
}

impl Request {
    pub(crate) fn notif(&self) -> &seccomp_notif {
        // SAFETY: the buffer is at least as large as, and aligned for, `seccomp_notif`.
        unsafe { &*self.buf.as_ptr().cast::<seccomp_notif>() }
    }
}

/// `SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP`, which the libc crate does not name yet.
const SYNC_WAKE_UP: libc::c_ulong = 1;

/// The listener: receive notifications, answer them.
pub(crate) struct Listener {
    fd: OwnedFd,
    notif_size: usize,
    resp_size: usize,
}

/// How to answer a notification.
#[derive(Debug)]
pub(crate) enum Answer {
    /// Let the kernel carry out the call as the process asked.
    Continue,
    /// Fail the call with this errno.
    Fail(c_int),
    /// The supervisor carried out the call itself: it returns this value.
    Value(i64),
    /// The supervisor opened the file itself: the call returns it as a new descriptor of the
    /// process (close-on-exec when `cloexec`).
    Install { fd: OwnedFd, cloexec: bool },
}

impl Listener {
    pub fn new(fd: OwnedFd) -> Listener {
        let mut sizes = libc::seccomp_notif_sizes {
            seccomp_notif: 0,
            seccomp_notif_resp: 0,
            seccomp_data: 0,
        };
        // SAFETY: SECCOMP_GET_NOTIF_SIZES fills the struct.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_GET_NOTIF_SIZES,
                0,
                &mut sizes as *mut libc::seccomp_notif_sizes,
            )
        };
        let ours = (
            std::mem::size_of::<seccomp_notif>(),
            std::mem::size_of::<seccomp_notif_resp>(),
        );
        let (notif_size, resp_size) = if rc == 0 {
            (
                ours.0.max(usize::from(sizes.seccomp_notif)),
                ours.1.max(usize::from(sizes.seccomp_notif_resp)),
            )
        } else {
            ours
        };
        // Wake the supervisor on the caller's CPU and switch to it at once (Linux 6.6): about
        // a fifth of each round trip on a busy machine. An older kernel refuses the flag; the
        // guard works the same without it.
        // SAFETY: NOTIF_SET_FLAGS takes the flags by value.
        unsafe {
            libc::ioctl(
                fd.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_SET_FLAGS,
                SYNC_WAKE_UP,
            )
        };
        Listener {
            fd,
            notif_size,
            resp_size,
        }
    }

    pub(crate) fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Answer each notification with what `answer` says, until process `pid` exits.
    pub(crate) fn serve(
        &self,
        pid: u32,
        mut answer: impl FnMut(&seccomp_notif) -> Answer,
    ) -> io::Result<()> {
        self.serve_ticking(pid, None, Duration::MAX, |wake| match wake {
            Wake::Call(req) => answer(req),
            Wake::Tick => Answer::Continue,
        })
    }

    /// [`Listener::serve`], also waking `on` with [`Wake::Tick`] at least every `every` (between
    /// calls, never in the middle of one), when `extra` becomes readable, and when a signal
    /// interrupts the wait.
    pub(crate) fn serve_ticking(
        &self,
        pid: u32,
        extra: Option<RawFd>,
        every: Duration,
        mut on: impl FnMut(Wake<'_>) -> Answer,
    ) -> io::Result<()> {
        let exited = pidfd(pid)?;
        let mut next = Instant::now().checked_add(every);
        let mut req = Request {
            buf: vec![0u64; self.notif_size.div_ceil(8)],
        };
        loop {
            let mut fds =
                [self.raw(), exited.as_raw_fd(), extra.unwrap_or(-1)].map(|fd| libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                });
            let timeout = next.map_or(-1, |at| {
                let left = at.saturating_duration_since(Instant::now()).as_millis();
                c_int::try_from(left).unwrap_or(c_int::MAX)
            });
            // SAFETY: three valid pollfds (a negative fd is skipped).
            let rc = unsafe { libc::poll(fds.as_mut_ptr(), 3, timeout) };
            if rc < 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EINTR) {
                    on(Wake::Tick);
                    continue;
                }
                return Err(e);
            }
            if fds[2].revents != 0 || next.is_some_and(|at| Instant::now() >= at) {
                on(Wake::Tick);
                next = Instant::now().checked_add(every);
            }
            if fds[0].revents & libc::POLLIN != 0 {
                if self.receive(&mut req)? {
                    let a = on(Wake::Call(req.notif()));
                    self.answer(req.notif().id, a);
                }
                continue;
            }
            if fds[1].revents != 0 {
                return Ok(());
            }
            if fds[0].revents & (libc::POLLHUP | libc::POLLERR) != 0 {
                // Every process of the command has gone; wait for the exit itself.
                let mut one = [libc::pollfd {
                    fd: exited.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                }];
                // SAFETY: one valid pollfd.
                unsafe { libc::poll(one.as_mut_ptr(), 1, -1) };
                return Ok(());
            }
        }
    }

    /// Receive the next notification into `req`, a buffer the caller keeps from one
    /// notification to the next; `false` when it vanished (the caller was killed).
    fn receive(&self, req: &mut Request) -> io::Result<bool> {
        // The kernel takes only a zeroed struct.
        req.buf.fill(0);
        loop {
            // SAFETY: the buffer is zeroed and as large as the kernel's struct.
            let rc = unsafe {
                libc::ioctl(
                    self.raw(),
                    libc::SECCOMP_IOCTL_NOTIF_RECV,
                    req.buf.as_mut_ptr(),
                )
            };
            if rc == 0 {
                return Ok(true);
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::ENOENT) => return Ok(false),
                _ => return Err(e),
            }
        }
    }

    /// Whether the process behind `id` is still the one that made the call (so what was read
    /// from its memory belongs to it).
    pub(crate) fn valid(&self, id: u64) -> bool {
        // SAFETY: NOTIF_ID_VALID reads one u64.
        unsafe { libc::ioctl(self.raw(), libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0 }
    }

    pub(crate) fn answer(&self, id: u64, answer: Answer) {
        // On the stack unless the kernel's struct has grown past it.
        let mut small = [0u64; 16];
        let mut large = Vec::new();
        let buf: &mut [u64] = if self.resp_size <= std::mem::size_of_val(&small) {
            &mut small
        } else {
            large.resize(self.resp_size.div_ceil(8), 0);
            &mut large
        };
        // SAFETY: the buffer is at least as large as, and aligned for, the response struct.
        let resp = unsafe { &mut *buf.as_mut_ptr().cast::<seccomp_notif_resp>() };
        resp.id = id;
        match answer {
            Answer::Continue => resp.flags = libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32,
            Answer::Fail(errno) => resp.error = -errno,
            Answer::Value(v) => resp.val = v,
            Answer::Install { fd, cloexec } => match self.add_fd(id, &fd, cloexec) {
                // Installed and answered in one go.
                Ok(None) => return,
                Ok(Some(newfd)) => resp.val = i64::from(newfd),
                // The caller is gone: nobody to answer.
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return,
                Err(e) => resp.error = -e.raw_os_error().unwrap_or(libc::EIO),
            },
        }
        // A failed answer means the caller is gone (killed, or interrupted by a signal): there
        // is nobody left to answer.
        // SAFETY: the response buffer is valid for the kernel's struct size.
        unsafe { libc::ioctl(self.raw(), libc::SECCOMP_IOCTL_NOTIF_SEND, buf.as_mut_ptr()) };
    }
}

impl Listener {
    /// Put `fd` into the process behind notification `id`, answering the call with its number
    /// in the same step (`Ok(None)`, Linux 5.14); where the kernel cannot answer with it,
    /// the number, for the answer (`Ok(Some)`).
    fn add_fd(&self, id: u64, fd: &OwnedFd, cloexec: bool) -> io::Result<Option<c_int>> {
        let mut add = libc::seccomp_notif_addfd {
            id,
            flags: libc::SECCOMP_ADDFD_FLAG_SEND as u32,
            srcfd: fd.as_raw_fd() as u32,
            newfd: 0,
            newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
        };
        // SAFETY: NOTIF_ADDFD reads one seccomp_notif_addfd.
        let rc = unsafe { libc::ioctl(self.raw(), libc::SECCOMP_IOCTL_NOTIF_ADDFD, &add) };
        if rc >= 0 {
            return Ok(None);
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINVAL) {
            return Err(e);
        }
        add.flags = 0;
        // SAFETY: as above.
        let rc = unsafe { libc::ioctl(self.raw(), libc::SECCOMP_IOCTL_NOTIF_ADDFD, &add) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Some(rc))
    }
}

/// Whether the kernel can put a descriptor the supervisor opened into the calling process
/// (`SECCOMP_IOCTL_NOTIF_ADDFD`, Linux 5.9).
pub(crate) fn adds_fds() -> bool {
    release_at_least(&kernel_release(), (5, 9))
}

fn release_at_least(release: &str, want: (u32, u32)) -> bool {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    (major, minor) >= want
}

/// The file-creation mask of process `pid` (Linux 4.7).
pub(crate) fn umask_of(pid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("Umask:"))?;
    u32::from_str_radix(line.trim(), 8).ok()
}

/// Read a NUL-terminated path from process `pid` at `addr` (at most `PATH_MAX` bytes).
pub(crate) fn read_path(pid: u32, addr: u64) -> io::Result<OsString> {
    let mut out = Vec::new();
    let mut at = addr;
    let page = 4096u64;
    // Most paths are short: the first read takes a little, a long path the rest page by page.
    let mut chunk = [0u8; 4096];
    let mut want = 256;
    while out.len() < libc::PATH_MAX as usize {
        // Never read across a page boundary in one go: the next page may be unmapped.
        let len = ((page - at % page) as usize).min(want);
        want = chunk.len();
        let got = read_memory(pid, at, &mut chunk[..len])?;
        if got == 0 {
            return Err(io::Error::from_raw_os_error(libc::EFAULT));
        }
        if let Some(nul) = chunk[..got].iter().position(|b| *b == 0) {
            out.extend_from_slice(&chunk[..nul]);
            return Ok(OsString::from_vec(out));
        }
        out.extend_from_slice(&chunk[..got]);
        at += got as u64;
    }
    Err(io::Error::from_raw_os_error(libc::ENAMETOOLONG))
}

/// Read `buf.len()` bytes of process `pid`'s memory at `addr`.
pub(crate) fn read_memory(pid: u32, addr: u64, buf: &mut [u8]) -> io::Result<usize> {
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: `local` is our own live buffer; the kernel checks `remote`.
    let n = unsafe { libc::process_vm_readv(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// The folder a relative path of process `pid` starts from: its working directory, or the
/// folder open as `dirfd`.
pub(crate) fn base_dir(pid: u32, dirfd: Option<c_int>) -> io::Result<PathBuf> {
    match dirfd {
        None | Some(libc::AT_FDCWD) => std::fs::read_link(format!("/proc/{pid}/cwd")),
        Some(fd) => std::fs::read_link(format!("/proc/{pid}/fd/{fd}")),
    }
}

/// Open a pidfd for `pid`, readable once it exits.
pub(crate) fn pidfd(pid: u32) -> io::Result<OwnedFd> {
    pidfd_open(pid, 0)
}

fn pidfd_open(pid: u32, flags: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, flags) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// A pidfd of thread `tid` itself (`PIDFD_THREAD`, Linux 6.9), or, where the kernel cannot
/// hold a single thread, of the process `tid` leads; an error when `tid` is neither.
pub(crate) fn thread_pidfd(tid: u32) -> io::Result<OwnedFd> {
    match pidfd_open(tid, PIDFD_THREAD) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => pidfd_open(tid, 0),
        held => held,
    }
}

/// A pidfd of the process `tid` leads (its first thread, whose number is the process's);
/// `None` when `tid` is another thread of its process, or gone.
pub(crate) fn leader_pidfd(tid: u32) -> Option<OwnedFd> {
    pidfd_open(tid, 0).ok()
}

/// `PIDFD_THREAD` (`O_EXCL`), which the libc crate does not name yet.
const PIDFD_THREAD: libc::c_int = libc::O_EXCL;

/// Whether the thread or process `pidfd` holds has ended (its pidfd is readable); a `poll` that
/// fails says it has, so nothing is trusted that cannot be checked.
pub(crate) fn ended(pidfd: RawFd) -> bool {
    let mut one = [readable(pidfd)];
    !poll_now(&mut one) || one[0].revents != 0
}

/// [`ended`] for each of `pidfds`, asked in one `poll`.
pub(crate) fn which_ended(pidfds: &[RawFd]) -> Vec<bool> {
    let mut fds: Vec<libc::pollfd> = pidfds.iter().map(|fd| readable(*fd)).collect();
    let polled = poll_now(&mut fds);
    fds.iter().map(|fd| !polled || fd.revents != 0).collect()
}

fn readable(fd: RawFd) -> libc::pollfd {
    libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    }
}

/// `poll` without waiting; whether it worked.
fn poll_now(fds: &mut [libc::pollfd]) -> bool {
    // SAFETY: a valid array of pollfds of its length.
    unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 0) >= 0 }
}

/// The thread group (process) of thread `tid`; `tid` itself when /proc cannot say.
pub(crate) fn tgid(tid: u32) -> u32 {
    use std::io::Read;
    // `Tgid:` is the fourth line, after a name of at most 64 escaped bytes: one read of the
    // head of the file holds it (three system calls, where reading it whole takes eleven).
    let mut head = [0u8; 512];
    let n = std::fs::File::open(format!("/proc/{tid}/status"))
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    head[..n]
        .split(|b| *b == b'\n')
        .find_map(|l| l.strip_prefix(b"Tgid:"))
        .and_then(|v| std::str::from_utf8(v).ok()?.trim().parse().ok())
        .unwrap_or(tid)
}

/// Write `bytes` to the stderr of process `pid` when it is a pipe, a socket or a terminal (never
/// blocking, never taking a terminal); whether it was written. A regular file is left alone:
/// opened anew it would have an offset of its own, and the process's next write would land over
/// these bytes.
pub(crate) fn write_stderr_of(pid: u32, bytes: &[u8]) -> bool {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(mut stderr) = std::fs::OpenOptions::new()
        .append(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(format!("/proc/{pid}/fd/2"))
    else {
        return false;
    };
    if stderr.metadata().is_ok_and(|m| m.is_file()) {
        return false;
    }
    stderr.write_all(bytes).is_ok()
}

/// Why [`Listener::serve_ticking`] wakes its caller.
pub(crate) enum Wake<'a> {
    /// A call to answer.
    Call(&'a seccomp_notif),
    /// Time passed, a signal came, or the extra descriptor is readable: the answer is ignored.
    Tick,
}

#[cfg(test)]
mod tests {
    use super::{read_path, tgid};

    #[test]
    fn a_path_is_read_whole_whatever_its_length_and_wherever_it_ends() {
        let me = std::process::id();
        // Three pages, the path's end placed around the second page's boundary.
        let mut pages = vec![0u8; 3 * 4096 + 4096];
        let base = pages.as_ptr() as usize;
        let boundary = (base / 4096 + 2) * 4096 - base;
        for len in [1, 255, 256, 257, 300, 4095] {
            for end in [boundary - 1, boundary, boundary + 1, boundary + 200] {
                let Some(start) = end.checked_sub(len) else {
                    continue;
                };
                let path: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
                pages.fill(0);
                pages[start..end].copy_from_slice(&path);
                let got = read_path(me, (base + start) as u64).unwrap();
                assert_eq!(
                    got.as_encoded_bytes(),
                    &path[..],
                    "{len} bytes ending at {end}"
                );
            }
        }
        // A path that ends on the last byte before an unmapped page is read without touching
        // that page.
        // SAFETY: a fresh private mapping of two pages, the second unmapped again at once; the
        // first is written only within its bounds and unmapped at the end.
        unsafe {
            let two = libc::mmap(
                std::ptr::null_mut(),
                2 * 4096,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(two, libc::MAP_FAILED);
            let first = two.cast::<u8>();
            assert_eq!(libc::munmap(first.add(4096).cast(), 4096), 0);
            let path = b"src/last-bytes-of-the-page.rs\0";
            let at = first.add(4096 - path.len());
            std::ptr::copy_nonoverlapping(path.as_ptr(), at, path.len());
            let got = read_path(me, at as u64).unwrap();
            assert_eq!(got.as_encoded_bytes(), &path[..path.len() - 1]);
            libc::munmap(two, 4096);
        }
        // No end within PATH_MAX: too long, as the kernel would say.
        let long = vec![b'x'; 8192];
        let e = read_path(me, long.as_ptr() as u64).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENAMETOOLONG));
    }

    #[test]
    fn a_thread_is_known_by_its_process() {
        let me = std::process::id();
        assert_eq!(tgid(me), me);
        let tid = // SAFETY: gettid takes nothing and cannot fail.
        std::thread::spawn(|| unsafe { libc::gettid() } as u32)
            .join()
            .unwrap();
        assert_ne!(tid, me);
        // The thread is gone by now, so this reads its number back (no status left to read) …
        assert_eq!(tgid(tid), tid);
        // … while a live one is its process's.
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            // SAFETY: gettid takes nothing and cannot fail.
            tx.send(unsafe { libc::gettid() } as u32).unwrap();
            let _ = done_rx.recv();
        });
        let live = rx.recv().unwrap();
        assert_eq!(tgid(live), me);
        done_tx.send(()).unwrap();
        t.join().unwrap();
    }
}
