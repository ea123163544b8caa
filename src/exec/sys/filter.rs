//! The seccomp program the guarded command runs under: the kernel answers every system call that
//! cannot touch a file's bytes by itself, and hands the rest to the supervisor.
//!
//! Hand-assembled classic BPF, about forty instructions: the crates that build seccomp programs
//! either link the C libseccomp or know no user-notification action, and the program is small
//! enough to read whole. The unit tests run it through the kernel.

use libc::{sock_filter, sock_fprog};

/// Which system call a notification is about, as the supervisor decodes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Call {
    /// `open`/`openat`/`creat`: `(dirfd arg, path arg, flags, mode)`; `flags` is `None` where it
    /// is a constant (`creat`).
    Open {
        dirfd: Option<usize>,
        path: usize,
        flags: Option<usize>,
        mode: usize,
    },
    /// `openat2(dirfd, path, how, size)`: the flags are in the `open_how` the call points at.
    Openat2,
    Truncate,
    Unlink {
        dirfd: Option<usize>,
        path: usize,
    },
    Rename {
        from: (Option<usize>, usize),
        to: (Option<usize>, usize),
        flags: Option<usize>,
    },
    Link {
        to: (Option<usize>, usize),
    },
    /// `open_by_handle_at(mount_fd, handle, flags)`: a file named by a handle, not a path.
    OpenByHandle {
        flags: usize,
    },
    /// A call that can move a thread's working folder or root (`chdir`, `fchdir`, `chroot`,
    /// `setns`, `unshare`, `pivot_root`): what the supervisor remembers of each thread's
    /// working folder no longer holds.
    Cwd,
}

/// The calls the supervisor sees, by number on this architecture.
pub(crate) fn decode(nr: i32) -> Option<Call> {
    let nr = i64::from(nr);
    #[cfg(target_arch = "x86_64")]
    {
        let c = match nr {
            libc::SYS_open => Some(Call::Open {
                dirfd: None,
                path: 0,
                flags: Some(1),
                mode: 2,
            }),
            libc::SYS_creat => Some(Call::Open {
                dirfd: None,
                path: 0,
                flags: None,
                mode: 1,
            }),
            libc::SYS_unlink => Some(Call::Unlink {
                dirfd: None,
                path: 0,
            }),
            libc::SYS_rename => Some(Call::Rename {
                from: (None, 0),
                to: (None, 1),
                flags: None,
            }),
            libc::SYS_link => Some(Call::Link { to: (None, 1) }),
            _ => None,
        };
        if c.is_some() {
            return c;
        }
    }
    match nr {
        libc::SYS_openat => Some(Call::Open {
            dirfd: Some(0),
            path: 1,
            flags: Some(2),
            mode: 3,
        }),
        libc::SYS_openat2 => Some(Call::Openat2),
        libc::SYS_truncate => Some(Call::Truncate),
        libc::SYS_unlinkat => Some(Call::Unlink {
            dirfd: Some(0),
            path: 1,
        }),
        libc::SYS_renameat => Some(Call::Rename {
            from: (Some(0), 1),
            to: (Some(2), 3),
            flags: None,
        }),
        libc::SYS_renameat2 => Some(Call::Rename {
            from: (Some(0), 1),
            to: (Some(2), 3),
            flags: Some(4),
        }),
        libc::SYS_linkat => Some(Call::Link { to: (Some(2), 3) }),
        libc::SYS_open_by_handle_at => Some(Call::OpenByHandle { flags: 2 }),
        libc::SYS_chdir
        | libc::SYS_fchdir
        | libc::SYS_chroot
        | libc::SYS_setns
        | libc::SYS_unshare
        | libc::SYS_pivot_root => Some(Call::Cwd),
        _ => None,
    }
}

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

const RET_ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
const RET_NOTIFY: u32 = libc::SECCOMP_RET_USER_NOTIF;
const RET_ENOSYS: u32 = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;

/// Offsets into `struct seccomp_data`.
const NR: u32 = 0;
const ARCH: u32 = 4;
/// The low 32 bits of argument `i` (little-endian).
fn arg_lo(i: usize) -> u32 {
    16 + 8 * i as u32
}

/// One instruction whose jump targets are named, resolved when the program is assembled.
enum Op {
    Load(u32),
    /// Jump to `.1` when the accumulator equals `.0`, else fall through.
    JumpIfEq(u32, Label),
    /// Jump to `.1` when the accumulator is ≥ `.0`, else fall through.
    JumpIfGe(u32, Label),
    /// Jump to `.1` when the accumulator has any bit of `.0`, else to `.2`.
    JumpIfAny(u32, Label, Label),
    Return(u32),
    Mark(Label),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Label {
    Allow,
    Notify,
    Enosys,
    OpenatFlags,
    #[cfg(target_arch = "x86_64")]
    OpenFlags,
    UnlinkatFlags,
}

/// The program: foreign architectures and `io_uring` (whose operations bypass seccomp) get
/// `ENOSYS`; opens of folders and `O_PATH` opens pass in the kernel, as does `unlinkat` of a
/// folder; every other open, every call that can replace, truncate, rename, link or unlink a
/// file, and every call that can move a working folder or root ([`Call::Cwd`]), is sent to the
/// supervisor; everything else passes. Calls that start threads and processes pass: trapped,
/// a `fork` fails with EINTR when a signal comes while it waits, which no program expects
/// (what is remembered per thread is checked against the thread itself instead,
/// `supervise::threads`).
pub(crate) fn program() -> Vec<sock_filter> {
    use Label::*;
    use Op::*;
    let mut ops = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        // The x32 ABI sets bit 30 of the number.
        ops.push(JumpIfGe(0x4000_0000, Enosys));
    }
    ops.push(JumpIfEq(libc::SYS_io_uring_setup as u32, Enosys));
    for nr in [
        libc::SYS_openat2,
        libc::SYS_truncate,
        libc::SYS_renameat,
        libc::SYS_renameat2,
        libc::SYS_linkat,
        libc::SYS_open_by_handle_at,
        libc::SYS_chdir,
        libc::SYS_fchdir,
        libc::SYS_chroot,
        libc::SYS_setns,
        libc::SYS_unshare,
        libc::SYS_pivot_root,
    ] {
        ops.push(JumpIfEq(nr as u32, Notify));
    }
    #[cfg(target_arch = "x86_64")]
    for nr in [
        libc::SYS_creat,
        libc::SYS_unlink,
        libc::SYS_rename,
        libc::SYS_link,
    ] {
        ops.push(JumpIfEq(nr as u32, Notify));
    }
    ops.push(JumpIfEq(libc::SYS_openat as u32, OpenatFlags));
    #[cfg(target_arch = "x86_64")]
    ops.push(JumpIfEq(libc::SYS_open as u32, OpenFlags));
    ops.push(JumpIfEq(libc::SYS_unlinkat as u32, UnlinkatFlags));
    ops.push(Return(RET_ALLOW));
    let quiet_open = (libc::O_DIRECTORY | libc::O_PATH) as u32;
    ops.extend([
        Mark(OpenatFlags),
        Load(arg_lo(2)),
        JumpIfAny(quiet_open, Allow, Notify),
    ]);
    #[cfg(target_arch = "x86_64")]
    ops.extend([
        Mark(OpenFlags),
        Load(arg_lo(1)),
        JumpIfAny(quiet_open, Allow, Notify),
    ]);
    ops.extend([
        Mark(UnlinkatFlags),
        Load(arg_lo(2)),
        JumpIfAny(libc::AT_REMOVEDIR as u32, Allow, Notify),
        Mark(Allow),
        Return(RET_ALLOW),
        Mark(Notify),
        Return(RET_NOTIFY),
        Mark(Enosys),
        Return(RET_ENOSYS),
    ]);
    // Not this architecture (a 32-bit program on a 64-bit kernel): its calls have other
    // numbers, so none of them may pass unchecked.
    let mut out = vec![
        stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, ARCH),
        jump(libc::BPF_JEQ, AUDIT_ARCH, 1, 0),
        stmt(libc::BPF_RET | libc::BPF_K, RET_ENOSYS),
        stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, NR),
    ];
    out.extend(assemble(&ops));
    out
}

fn stmt(code: u32, k: u32) -> sock_filter {
    sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(op: u32, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter {
        code: (libc::BPF_JMP | op | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    }
}

/// Resolve labels into the relative jump offsets classic BPF wants.
fn assemble(ops: &[Op]) -> Vec<sock_filter> {
    // Where each label lands, in instructions (marks take no room).
    let mut at = Vec::new();
    let mut pc = 0usize;
    for op in ops {
        match op {
            Op::Mark(l) => at.push((*l, pc)),
            _ => pc += 1,
        }
    }
    let target = |l: Label| {
        at.iter()
            .find(|(m, _)| *m == l)
            .map(|(_, pc)| *pc)
            .expect("every label is marked")
    };
    let offset = |from: usize, l: Label| -> u8 {
        u8::try_from(target(l) - from - 1).expect("the program is short enough for 8-bit jumps")
    };
    let mut out = Vec::new();
    for op in ops {
        let pc = out.len();
        out.push(match *op {
            Op::Mark(_) => continue,
            Op::Load(off) => stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, off),
            Op::JumpIfEq(k, l) => jump(libc::BPF_JEQ, k, offset(pc, l), 0),
            Op::JumpIfGe(k, l) => jump(libc::BPF_JGE, k, offset(pc, l), 0),
            Op::JumpIfAny(k, t, f) => jump(libc::BPF_JSET, k, offset(pc, t), offset(pc, f)),
            Op::Return(k) => stmt(libc::BPF_RET | libc::BPF_K, k),
        });
    }
    out
}

/// The program in the form `seccomp(2)` takes; `filter` must outlive its use.
pub(crate) fn fprog(filter: &[sock_filter]) -> sock_fprog {
    sock_fprog {
        len: u16::try_from(filter.len()).expect("a short program"),
        filter: filter.as_ptr().cast_mut(),
    }
}
