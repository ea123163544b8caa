//! Child processes that never outlive Stella.
//!
//! A `git` that Stella starts works for the command that started it and for nothing else: when
//! that command is killed (SIGKILL gives it no chance to clean up), a `git pack-objects` still
//! deltifying a large session, or a `git fetch` still indexing an artifact, would otherwise run on
//! for seconds or minutes, holding locks in the store and a CPU nobody asked for.

use std::process::Command;

/// Make the child started by `cmd` die (SIGKILL) when the thread that starts it dies.
///
/// Linux only (`prctl(PR_SET_PDEATHSIG)`); elsewhere nothing changes. The signal follows the
/// *thread* that spawns the child, not the process: spawn from a thread that waits for the child
/// (as every caller here does), never from one that may exit first. If the parent died between
/// `fork` and the `prctl`, the child sees another parent and gives up before `exec`, as the prctl
/// manual advises.
// The library's one `unsafe` outside the shell guard's system calls (`exec/sys/`): a pre-exec
// hook every `git` child gets, on every Linux target.
#[allow(unsafe_code)]
pub fn die_with_parent(cmd: &mut Command) -> &mut Command {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        let parent = rustix::process::getpid();
        // SAFETY: the closure runs in the child between fork and exec and makes only
        // async-signal-safe calls (prctl, getppid), allocating nothing.
        unsafe {
            cmd.pre_exec(move || {
                rustix::process::set_parent_process_death_signal(Some(
                    rustix::process::Signal::KILL,
                ))?;
                if rustix::process::getppid() != Some(parent) {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            });
        }
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marked_child_runs_and_reports_its_status() {
        let status = die_with_parent(Command::new("sh").args(["-c", "exit 3"]))
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(3));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_marked_child_dies_with_the_thread_that_started_it() {
        use std::os::unix::process::ExitStatusExt;
        let mut child = std::thread::spawn(|| {
            die_with_parent(Command::new("sleep").arg("30"))
                .spawn()
                .unwrap()
        })
        .join()
        .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    }
}
