//! What the supervisor remembers of each thread that made a call: its process, its working
//! folder, whether it sees files as the supervisor does. A thread's number is taken again by
//! another thread once it has ended, and the guard does not trap the calls that start threads
//! (a trapped `fork` fails with EINTR when a signal comes while it waits, and shells take
//! `SIGCHLD` without restarting calls): so each record holds the thread itself, a pidfd, and is
//! trusted only while that pidfd says the thread lives.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::rc::Rc;

use super::notify;
use super::{HashMap, HashSet};

/// What is remembered of one live thread.
pub(super) struct Thread {
    /// Readable once the thread has ended: from then on its number may be another thread's.
    alive: OwnedFd,
    /// Its process (thread group).
    pub(super) process: u32,
    /// Its working folder, while no call that can move one has come since it was read.
    pub(super) cwd: Option<Rc<Path>>,
    /// Whether it sees files as the supervisor does ([`super::act::same_view`]), once asked.
    pub(super) view: Option<bool>,
}

/// The live threads seen, by number.
pub(super) struct Threads {
    by_tid: HashMap<u32, Thread>,
    /// Every process seen making a call, for the signals passed on to the command.
    processes: HashSet<u32>,
    /// When the table is this large, the records of ended threads are let go.
    sweep_at: usize,
    /// At most this many threads are held (a descriptor each): past it, a new thread is looked
    /// up at each call, and the table is swept again every [`SWEEP_FROM`] such calls.
    max_held: usize,
    /// Calls from threads not held since the table was last swept full.
    unheld: usize,
    /// The thread checked alive during the call being answered: it cannot end while it waits
    /// for the answer, so one check a call does.
    checked: Option<u32>,
}

/// The table's size below which ended threads are never swept.
const SWEEP_FROM: usize = 256;

/// How many threads are held at most: descriptors the supervisor needs for files stay free
/// under the common limit of 1,024.
const MAX_HELD: usize = 512;

impl Threads {
    /// The command's own process, `pid`, is known from the start.
    pub(super) fn new(pid: u32) -> Threads {
        Threads {
            by_tid: HashMap::default(),
            processes: HashSet::from_iter([pid]),
            sweep_at: SWEEP_FROM,
            max_held: MAX_HELD,
            unheld: 0,
            checked: None,
        }
    }

    /// A new call is being answered: its thread is checked again at its first [`Threads::get`].
    pub(super) fn new_call(&mut self) {
        self.checked = None;
    }

    /// The record of thread `tid`, which is making the call being answered: what was
    /// remembered of it while it lived, or a fresh one. `None` where the thread cannot be held
    /// (a kernel before 6.9 holds only a process's first thread; out of descriptors): nothing
    /// about it is remembered, and each call looks it up again.
    pub(super) fn get(&mut self, tid: u32) -> Option<&mut Thread> {
        if self.checked != Some(tid)
            && self
                .by_tid
                .get(&tid)
                .is_some_and(|t| notify::ended(t.alive.as_raw_fd()))
        {
            self.by_tid.remove(&tid);
        }
        if !self.by_tid.contains_key(&tid) {
            if self.by_tid.len() >= self.sweep_at {
                self.unheld += 1;
                if self.by_tid.len() < self.max_held || self.unheld >= SWEEP_FROM {
                    self.unheld = 0;
                    self.sweep();
                }
            }
            if self.by_tid.len() >= self.max_held {
                return None;
            }
            // Held before anything is read of it: a caller still waiting for its answer (the
            // caller checks that after) is the thread this pidfd holds.
            // A process's first thread is held by the process's pidfd, which only such a
            // thread has (its number is not taken again while the process lives): its process
            // is itself, with no look in `/proc`.
            let (alive, process) = match notify::leader_pidfd(tid) {
                Some(alive) => (alive, tid),
                None => (notify::thread_pidfd(tid).ok()?, notify::tgid(tid)),
            };
            self.processes.insert(process);
            self.by_tid.insert(
                tid,
                Thread {
                    alive,
                    process,
                    cwd: None,
                    view: None,
                },
            );
        }
        self.checked = Some(tid);
        self.by_tid.get_mut(&tid)
    }

    /// The process of thread `tid`.
    pub(super) fn process_of(&mut self, tid: u32) -> u32 {
        match self.get(tid) {
            Some(t) => t.process,
            None => {
                let process = notify::tgid(tid);
                self.processes.insert(process);
                process
            }
        }
    }

    /// Every process seen making a call (some may have ended).
    pub(super) fn processes(&self) -> impl Iterator<Item = u32> + '_ {
        self.processes.iter().copied()
    }

    /// Forget every working folder and view: a call may have moved one.
    pub(super) fn forget_folders(&mut self) {
        for t in self.by_tid.values_mut() {
            t.cwd = None;
            t.view = None;
        }
    }

    /// Let go of the records of threads that have ended, all asked in one `poll`.
    fn sweep(&mut self) {
        let tids: Vec<u32> = self.by_tid.keys().copied().collect();
        let fds: Vec<_> = tids
            .iter()
            .map(|tid| self.by_tid[tid].alive.as_raw_fd())
            .collect();
        for (tid, ended) in tids.iter().zip(notify::which_ended(&fds)) {
            if ended {
                self.by_tid.remove(tid);
            }
        }
        self.sweep_at = (2 * self.by_tid.len()).max(SWEEP_FROM).min(self.max_held);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_is_remembered_while_it_lives_and_not_after() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let tid = child.id();
        let mut threads = Threads::new(std::process::id());
        let t = threads
            .get(tid)
            .expect("a live process's first thread is held");
        assert_eq!(t.process, tid);
        t.cwd = Some(Rc::from(Path::new("/somewhere")));
        assert_eq!(
            threads.get(tid).unwrap().cwd.as_deref(),
            Some(Path::new("/somewhere"))
        );
        child.kill().unwrap();
        child.wait().unwrap();
        threads.new_call();
        // Its number is free now: nothing remembered of it is trusted any more.
        assert!(threads.get(tid).is_none());
        assert!(threads.processes().any(|p| p == tid));
    }

    #[test]
    fn ended_threads_are_let_go_as_the_table_grows() {
        let mut threads = Threads::new(std::process::id());
        let mut ended = Vec::new();
        for _ in 0..SWEEP_FROM {
            let mut child = std::process::Command::new("true").spawn().unwrap();
            // Held while it lives, then reaped.
            threads.new_call();
            let held = threads.get(child.id()).is_some();
            child.wait().unwrap();
            if held {
                ended.push(child.id());
            }
        }
        assert!(!ended.is_empty());
        // The next new thread sweeps: only the live one stays.
        threads.new_call();
        let me = threads.get(std::process::id()).is_some();
        assert_eq!(threads.by_tid.len(), usize::from(me));
        assert_eq!(threads.sweep_at, SWEEP_FROM);
    }

    #[test]
    fn no_more_than_so_many_threads_are_held() {
        let mut children: Vec<_> = (0..4)
            .map(|_| {
                std::process::Command::new("sleep")
                    .arg("30")
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut threads = Threads::new(std::process::id());
        threads.max_held = 3;
        threads.sweep_at = 3;
        for child in &children[..3] {
            threads.new_call();
            assert!(threads.get(child.id()).is_some());
        }
        // Full of live threads: the fourth is not held, but its process is still known.
        threads.new_call();
        assert!(threads.get(children[3].id()).is_none());
        assert_eq!(threads.process_of(children[3].id()), children[3].id());
        // One ends: once swept, there is room again.
        children[0].kill().unwrap();
        children[0].wait().unwrap();
        for _ in 0..SWEEP_FROM {
            threads.new_call();
            let _ = threads.get(children[3].id());
        }
        assert!(threads.get(children[3].id()).is_some());
        for child in &mut children[1..] {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }
}
