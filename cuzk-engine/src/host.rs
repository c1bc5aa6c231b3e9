//! The host's memory: what this process holds now and at its peak and what
//! the machine has, as Linux reports it (`None` where `/proc` does not say),
//! and the gate that keeps the engine's partitions within a budget.
//!
//! A partition in flight holds its a, b, c and witness (at 32 GiB about
//! 17 GB) from the start of its synthesis until its proof is stored. The
//! gate admits a partition's synthesis only when what the process holds,
//! plus what the partitions already admitted may still grow to, plus this
//! one's estimate fits the budget; otherwise the partition worker waits
//! for a proven partition to let go (or for memory to be freed otherwise).
//! One partition is always admitted when none is in flight, so that work
//! never stops: a budget below one partition's need proves them one at a
//! time instead of failing.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

/// The process's resident memory now (`VmRSS` of `/proc/self/status`).
pub fn rss_bytes() -> Option<u64> {
    proc_kib_line("/proc/self/status", "VmRSS:")
}

/// The process's peak resident memory so far (`VmHWM`).
pub fn peak_rss_bytes() -> Option<u64> {
    proc_kib_line("/proc/self/status", "VmHWM:")
}

/// The machine's memory (`MemTotal` of `/proc/meminfo`).
pub fn total_bytes() -> Option<u64> {
    proc_kib_line("/proc/meminfo", "MemTotal:")
}

/// Memory the machine could give without swapping (`MemAvailable`).
pub fn available_bytes() -> Option<u64> {
    proc_kib_line("/proc/meminfo", "MemAvailable:")
}

/// The figure of `file`'s line `key  N kB`, in bytes.
fn proc_kib_line(file: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(file).ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The default budget: this share of the machine's memory (the rest for
/// the kernel, the page cache and other processes).
pub const DEFAULT_SHARE_PERCENT: u64 = 85;

/// The default budget on this machine; `None` where its memory is not
/// known (no budget then).
pub fn default_limit() -> Option<u64> {
    total_bytes().map(|total| total / 100 * DEFAULT_SHARE_PERCENT)
}

/// An engine's host-memory budget and what it cost ([`crate::Engine::host_memory`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Budget {
    /// The budget in bytes (`None`: none).
    pub limit: Option<u64>,
    /// Partitions whose synthesis had to wait for memory.
    pub waits: u64,
    /// Their waiting, in all.
    pub waited: Duration,
}

/// How the gate reads the process's resident memory (a test replaces it).
type Reader = Box<dyn Fn() -> Option<u64> + Send + Sync>;

/// Admits partitions into the engine by the host memory they will hold.
pub(crate) struct MemoryGate {
    limit: Option<u64>,
    resident: Reader,
    state: Mutex<GateState>,
    released: Condvar,
    waits: AtomicU64,
    waited_ns: AtomicU64,
}

#[derive(Default)]
struct GateState {
    /// Estimates of the partitions admitted and not yet released.
    admitted_bytes: u64,
    admitted: usize,
    /// Resident memory when the last partition was admitted into an empty
    /// engine: what the keys, shapes and pools hold without partitions.
    base: u64,
}

/// A partition's admission; dropping it gives its bytes back.
pub(crate) struct Ticket {
    gate: Arc<MemoryGate>,
    bytes: u64,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut state = self.gate.state.lock();
        state.admitted_bytes = state.admitted_bytes.saturating_sub(self.bytes);
        state.admitted -= 1;
        drop(state);
        self.gate.released.notify_all();
    }
}

/// While waiting, how often the gate looks again without a release (memory
/// freed elsewhere, a job cancelled).
const RECHECK: Duration = Duration::from_millis(100);

impl MemoryGate {
    /// A gate for `limit` bytes (`None`: admits everything).
    pub(crate) fn new(limit: Option<u64>) -> Self {
        Self::with_reader(limit, Box::new(rss_bytes))
    }

    fn with_reader(limit: Option<u64>, resident: Reader) -> Self {
        Self {
            limit,
            resident,
            state: Mutex::default(),
            released: Condvar::new(),
            waits: AtomicU64::new(0),
            waited_ns: AtomicU64::new(0),
        }
    }

    /// The budget, and how many admissions had to wait for how long.
    pub(crate) fn budget(&self) -> Budget {
        Budget {
            limit: self.limit,
            waits: self.waits.load(Ordering::Relaxed),
            waited: Duration::from_nanos(self.waited_ns.load(Ordering::Relaxed)),
        }
    }

    /// Admits a partition that will hold `bytes`, waiting while it would
    /// not fit. Gives up (`None`) as soon as `still_wanted` says no.
    pub(crate) fn admit(
        self: &Arc<Self>,
        bytes: u64,
        still_wanted: impl Fn() -> bool,
    ) -> Option<Ticket> {
        let mut state = self.state.lock();
        let mut waiting_since: Option<Instant> = None;
        loop {
            if !still_wanted() {
                return None;
            }
            let resident = (self.resident)().unwrap_or(0);
            let fits = match self.limit {
                None => true,
                Some(_) if state.admitted == 0 => {
                    state.base = resident;
                    true
                }
                // What is resident now may not include what the admitted
                // partitions will still allocate: count them in full on
                // top of the last base, whichever is more.
                Some(limit) => {
                    let held = resident.max(state.base.saturating_add(state.admitted_bytes));
                    held.saturating_add(bytes) <= limit
                }
            };
            if fits {
                state.admitted_bytes = state.admitted_bytes.saturating_add(bytes);
                state.admitted += 1;
                if let Some(since) = waiting_since {
                    let waited = since.elapsed().as_nanos() as u64;
                    self.waits.fetch_add(1, Ordering::Relaxed);
                    self.waited_ns.fetch_add(waited, Ordering::Relaxed);
                }
                return Some(Ticket {
                    gate: Arc::clone(self),
                    bytes,
                });
            }
            waiting_since.get_or_insert_with(Instant::now);
            self.released.wait_for(&mut state, RECHECK);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_admits_what_fits_and_one_partition_always() {
        let resident = Arc::new(AtomicU64::new(10));
        let seen = Arc::clone(&resident);
        let gate = Arc::new(MemoryGate::with_reader(
            Some(100),
            Box::new(move || Some(seen.load(Ordering::Relaxed))),
        ));
        // 10 resident + 40 + 40 fits in 100; a third 40 does not.
        let first = gate.admit(40, || true).unwrap();
        let second = gate.admit(40, || true).unwrap();
        let (done, wait) = std::sync::mpsc::channel();
        let waiting = {
            let gate = Arc::clone(&gate);
            std::thread::spawn(move || {
                let ticket = gate.admit(40, || true);
                done.send(()).unwrap();
                ticket
            })
        };
        assert!(
            wait.recv_timeout(Duration::from_millis(300)).is_err(),
            "admitted past the budget"
        );
        // Memory that grew elsewhere (a key loaded: 70 resident) counts
        // too: with the first partition gone, 70 + 40 > 100 still.
        resident.store(70, Ordering::Relaxed);
        drop(first);
        assert!(
            wait.recv_timeout(Duration::from_millis(300)).is_err(),
            "70 + 40 > 100"
        );
        // Back to 20 resident: the base and the second's estimate (50) + 40 fit.
        resident.store(20, Ordering::Relaxed);
        wait.recv_timeout(Duration::from_secs(5))
            .expect("admitted once it fits");
        let third = waiting.join().unwrap().unwrap();
        assert_eq!(gate.budget().waits, 1);
        // A job no longer wanted stops waiting.
        assert!(gate.admit(40, || false).is_none());
        drop((second, third));
        // Nothing in flight: one partition goes whatever its size.
        assert!(gate.admit(1_000, || true).is_some());
        // No budget: everything goes.
        let open = Arc::new(MemoryGate::new(None));
        let tickets: Vec<_> = (0..4)
            .map(|_| open.admit(u64::MAX / 8, || true).unwrap())
            .collect();
        assert_eq!(tickets.len(), 4);
    }

    #[test]
    fn linux_says_how_much_memory_there_is() {
        if !cfg!(target_os = "linux") {
            return;
        }
        // The peak never falls: read after the current figure, it is at
        // least that.
        let rss = rss_bytes().unwrap();
        assert!(rss > 0 && peak_rss_bytes().unwrap() >= rss);
        // 64 MiB written: resident at once, so the peak covers it.
        let block = std::hint::black_box(vec![1u8; 64 << 20]);
        assert!(peak_rss_bytes().unwrap() >= 64 << 20);
        drop(block);
        let (total, available) = (total_bytes().unwrap(), available_bytes().unwrap());
        assert!(available <= total && total > 64 << 20);
    }
}
