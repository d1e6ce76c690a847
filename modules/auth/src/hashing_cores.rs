//! Where password hashes run: on cores of their own, so that page workers keep
//! the others.
//!
//! Hashes run on tokio's blocking pool, whose threads go wherever the scheduler
//! puts them. The bound on concurrent hashes limits how much CPU a logon storm
//! takes, but not where: one hash at a time floating over both cores of a
//! two-core machine (even at idle priority) kept page workers waiting behind it
//! for a scheduler slice, and a cached page's p99 went from 0.2 ms to 3 ms.
//! With the hash held on one core it stayed at 0.35 ms (bench/sessions.sh,
//! bench/RESULTS.md). So a hash pins its thread to the last of the cores the
//! process may use, as many as hashes may run at once, and gives the thread
//! its cores back when it is done (the thread goes on to other blocking work).
//!
//! Linux only (`sched_setaffinity` works per thread there). Elsewhere, on a
//! single core, or when the affinity calls fail, hashes run where they land.

/// The cores hashes run on; `None` when there is nothing to set apart.
pub(crate) struct HashingCores {
    #[cfg(target_os = "linux")]
    cores: Option<libc::cpu_set_t>,
}

impl HashingCores {
    /// The last `n` of the cores this process may use (read from the calling
    /// thread, which has not been pinned yet), when that leaves at least one
    /// for the rest.
    pub(crate) fn last(n: usize) -> HashingCores {
        #[cfg(target_os = "linux")]
        {
            // SAFETY (CPU_ISSET, CPU_SET): the core numbers stay below CPU_SETSIZE.
            let cores = linux::allowed().and_then(|allowed| {
                let usable: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
                    .filter(|&c| unsafe { libc::CPU_ISSET(c, &allowed) })
                    .collect();
                if n == 0 || n >= usable.len() {
                    return None;
                }
                let mut set = linux::empty();
                for &c in usable.iter().rev().take(n) {
                    unsafe { libc::CPU_SET(c, &mut set) };
                }
                Some(set)
            });
            HashingCores { cores }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = n;
            HashingCores {}
        }
    }

    /// Runs `work` on this thread, pinned to the hashing cores while it runs.
    pub(crate) fn run<T>(&self, work: impl FnOnce() -> T) -> T {
        #[cfg(target_os = "linux")]
        let _pinned = self.cores.as_ref().and_then(linux::Pinned::to);
        work()
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::mem::{size_of, zeroed};

    pub(super) fn empty() -> libc::cpu_set_t {
        // SAFETY: cpu_set_t is a plain bit array; all zeroes is the empty set.
        unsafe { zeroed() }
    }

    /// The calling thread's allowed cores.
    pub(super) fn allowed() -> Option<libc::cpu_set_t> {
        let mut set = empty();
        // SAFETY: pid 0 is the calling thread; the size is that of `set`.
        (unsafe { libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut set) } == 0)
            .then_some(set)
    }

    fn set(cores: &libc::cpu_set_t) -> bool {
        // SAFETY: as in `allowed`.
        unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), cores) == 0 }
    }

    /// The calling thread pinned to some cores; dropping it gives the thread
    /// back the cores it had.
    pub(super) struct Pinned {
        before: libc::cpu_set_t,
    }

    impl Pinned {
        pub(super) fn to(cores: &libc::cpu_set_t) -> Option<Pinned> {
            let before = allowed()?;
            set(cores).then_some(Pinned { before })
        }
    }

    impl Drop for Pinned {
        fn drop(&mut self) {
            set(&self.before);
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn members(set: &libc::cpu_set_t) -> Vec<usize> {
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| unsafe { libc::CPU_ISSET(c, set) })
            .collect()
    }

    fn allowed() -> Vec<usize> {
        members(&linux::allowed().unwrap())
    }

    #[test]
    fn work_runs_on_the_last_cores_and_the_thread_gets_its_cores_back() {
        let before = allowed();
        let cores = HashingCores::last(before.len() / 2);
        let during = cores.run(allowed);
        if before.len() >= 2 {
            assert_eq!(during, before[before.len() - before.len() / 2..]);
        } else {
            assert_eq!(during, before, "one core: nothing to set apart");
        }
        assert_eq!(allowed(), before);
    }

    #[test]
    fn asking_for_every_core_or_none_sets_nothing_apart() {
        let usable = allowed().len();
        assert!(HashingCores::last(usable).cores.is_none());
        assert!(HashingCores::last(usable + 1).cores.is_none());
        assert!(HashingCores::last(0).cores.is_none());
    }
}
