//! The signals a running command's supervisor takes for the command: dispositions saved and
//! restored around it, and a handler that only notes which signal asked to end it.

/// While the command runs, Ctrl-C and Ctrl-\ are the command's: the supervisor stays to record
/// what it did (as a shell does while it waits for a command).
pub(crate) struct IgnoreInterrupts {
    old: [libc::sighandler_t; 2],
}

impl IgnoreInterrupts {
    pub fn new() -> Self {
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

/// The signal that asked this process to end (SIGTERM, SIGHUP), 0 for none yet.
static ENDED: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

extern "C" fn note_end(signal: libc::c_int) {
    ENDED.store(signal, std::sync::atomic::Ordering::SeqCst);
}

/// While the command runs, SIGTERM and SIGHUP (a host's tool timeout, a closed terminal) end
/// the command rather than the supervisor: passed on, so the supervisor stays to record
/// everything the command did.
pub(crate) struct Forward {
    old: [libc::sigaction; 2],
}

impl Forward {
    pub fn new() -> Self {
        ENDED.store(0, std::sync::atomic::Ordering::SeqCst);
        // SAFETY: installing a handler that only stores to an atomic; no SA_RESTART, so the
        // supervisor's wait is interrupted and passes the signal on.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = note_end as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            let mut old: [libc::sigaction; 2] = std::mem::zeroed();
            libc::sigaction(libc::SIGTERM, &action, &mut old[0]);
            libc::sigaction(libc::SIGHUP, &action, &mut old[1]);
            Forward { old }
        }
    }
}

impl Drop for Forward {
    fn drop(&mut self) {
        // SAFETY: restoring the actions saved in `new`.
        unsafe {
            libc::sigaction(libc::SIGTERM, &self.old[0], std::ptr::null_mut());
            libc::sigaction(libc::SIGHUP, &self.old[1], std::ptr::null_mut());
        }
    }
}

/// The signal that asked this process to end since the last call, if one did.
pub(crate) fn take_end() -> Option<rustix::process::Signal> {
    rustix::process::Signal::from_named_raw(ENDED.swap(0, std::sync::atomic::Ordering::SeqCst))
}
