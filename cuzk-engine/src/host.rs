//! The host's memory: what this process holds now and at its peak and what
//! the machine has, as Linux reports it (`None` where `/proc` does not say),
//! and the gate that keeps the engine's partitions within a budget.
//!
//! A partition in flight holds its a, b, c and witness (at 32 GiB about
//! 17 GB) from the start of its synthesis until its proof is stored. The
//! gate admits a partition's synthesis only when it fits the budget: what
//! the process holds now, plus what the partitions still synthesizing may
//! yet allocate, plus this one's need. A need is the key's upper bound less
//! the pool blocks this partition will take for its a, b and c: blocks the
//! host pool keeps from proven partitions (or reserved ahead) are resident
//! already, so a partition that reuses them adds only its witness. Once a
//! partition is synthesized, what it holds is in the resident figure and no
//! longer counted apart. Otherwise the partition worker waits for a proven
//! partition to let go (or for memory to be freed otherwise). One partition
//! is always admitted when none is in flight, so that work never stops: a
//! budget below one partition's need proves them one at a time instead of
//! failing (the engine warns when a job is submitted).

use std::collections::HashMap;
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

/// How the gate reads how many blocks of a byte size the host pool keeps
/// (a test replaces it).
type KeptReader = Box<dyn Fn(usize) -> usize + Send + Sync>;

/// Admits partitions into the engine by the host memory they will hold.
pub(crate) struct MemoryGate {
    limit: Option<u64>,
    resident: Reader,
    kept: KeptReader,
    state: Mutex<GateState>,
    released: Condvar,
    waits: AtomicU64,
    waited_ns: AtomicU64,
}

#[derive(Default)]
struct GateState {
    /// Partitions admitted and not yet released.
    admitted: usize,
    /// What the admitted partitions still synthesizing may yet allocate.
    outstanding: u64,
    /// Kept pool blocks promised to partitions still synthesizing, by
    /// byte size.
    promised: HashMap<usize, usize>,
    /// The byte size of one evaluation vector (a, b or c) of a key's
    /// partitions, by the key's [`partition_bytes`](crate::ProvingKey::partition_bytes),
    /// learned from its first partition synthesized.
    vector_bytes: HashMap<u64, usize>,
}

/// What an admitted partition may still allocate.
struct Pending {
    bytes: u64,
    /// Kept blocks of this byte size it counts on instead.
    block: usize,
    blocks: usize,
}

/// A partition's admission; dropping it gives its bytes back.
pub(crate) struct Ticket {
    gate: Arc<MemoryGate>,
    need: u64,
    pending: Option<Pending>,
}

impl Ticket {
    /// The partition is synthesized, with evaluation vectors of
    /// `vector_bytes` each: what it holds is resident now, and the gate
    /// knows which kept blocks the key's next partitions can take.
    pub(crate) fn synthesized(&mut self, vector_bytes: usize) {
        let mut state = self.gate.state.lock();
        if let Some(pending) = self.pending.take() {
            state.settle(&pending);
        }
        state.vector_bytes.insert(self.need, vector_bytes);
        drop(state);
        self.gate.released.notify_all();
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut state = self.gate.state.lock();
        if let Some(pending) = self.pending.take() {
            state.settle(&pending);
        }
        state.admitted -= 1;
        drop(state);
        self.gate.released.notify_all();
    }
}

impl GateState {
    /// Forgets what `pending` may still allocate and the blocks promised.
    fn settle(&mut self, pending: &Pending) {
        self.outstanding = self.outstanding.saturating_sub(pending.bytes);
        if let Some(promised) = self.promised.get_mut(&pending.block) {
            *promised = promised.saturating_sub(pending.blocks);
        }
    }
}

/// While waiting, how often the gate looks again without a release (memory
/// freed elsewhere, a job cancelled).
const RECHECK: Duration = Duration::from_millis(100);

impl MemoryGate {
    /// A gate for `limit` bytes (`None`: admits everything).
    pub(crate) fn new(limit: Option<u64>) -> Self {
        Self::with_readers(
            limit,
            Box::new(rss_bytes),
            Box::new(supraseal_c2::host_pool_kept_blocks),
        )
    }

    fn with_readers(limit: Option<u64>, resident: Reader, kept: KeptReader) -> Self {
        Self {
            limit,
            resident,
            kept,
            state: Mutex::default(),
            released: Condvar::new(),
            waits: AtomicU64::new(0),
            waited_ns: AtomicU64::new(0),
        }
    }

    /// When a partition of `need` bytes cannot fit the budget even alone
    /// (nothing else in flight, or larger than the budget): the budget and
    /// what is resident. `None` when it fits, there is no budget, or other
    /// partitions in flight make it impossible to tell.
    pub(crate) fn too_small_for(&self, need: u64) -> Option<(u64, u64)> {
        let limit = self.limit?;
        let resident = (self.resident)().unwrap_or(0);
        let alone = self.state.lock().admitted == 0;
        let over = need > limit || (alone && resident.saturating_add(need) > limit);
        over.then_some((limit, resident))
    }

    /// The budget, and how many admissions had to wait for how long.
    pub(crate) fn budget(&self) -> Budget {
        Budget {
            limit: self.limit,
            waits: self.waits.load(Ordering::Relaxed),
            waited: Duration::from_nanos(self.waited_ns.load(Ordering::Relaxed)),
        }
    }

    /// Admits a partition that will hold at most `need` bytes (its key's
    /// [`partition_bytes`](crate::ProvingKey::partition_bytes)), waiting
    /// while it would not fit: what is resident, plus what the partitions
    /// still synthesizing may yet allocate, plus this one's need less the
    /// kept pool blocks it will take for its a, b and c. Gives up (`None`)
    /// as soon as `still_wanted` says no.
    pub(crate) fn admit(
        self: &Arc<Self>,
        need: u64,
        still_wanted: impl Fn() -> bool,
    ) -> Option<Ticket> {
        let mut state = self.state.lock();
        let mut waiting_since: Option<Instant> = None;
        loop {
            if !still_wanted() {
                return None;
            }
            let pending = self.pending(&state, need);
            let fits = match self.limit {
                None => true,
                Some(_) if state.admitted == 0 => true,
                Some(limit) => {
                    let resident = (self.resident)().unwrap_or(0);
                    resident
                        .saturating_add(state.outstanding)
                        .saturating_add(pending.bytes)
                        <= limit
                }
            };
            if fits {
                state.admitted += 1;
                state.outstanding = state.outstanding.saturating_add(pending.bytes);
                if pending.blocks > 0 {
                    *state.promised.entry(pending.block).or_default() += pending.blocks;
                }
                if let Some(since) = waiting_since {
                    let waited = since.elapsed().as_nanos() as u64;
                    self.waits.fetch_add(1, Ordering::Relaxed);
                    self.waited_ns.fetch_add(waited, Ordering::Relaxed);
                }
                return Some(Ticket {
                    gate: Arc::clone(self),
                    need,
                    pending: Some(pending),
                });
            }
            waiting_since.get_or_insert_with(Instant::now);
            self.released.wait_for(&mut state, RECHECK);
        }
    }

    /// What a partition of `need` bytes would still allocate: its need
    /// less the kept blocks (up to its three evaluation vectors) that no
    /// other admitted partition counts on. Those are resident already.
    fn pending(&self, state: &GateState, need: u64) -> Pending {
        let Some(&block) = state.vector_bytes.get(&need) else {
            return Pending {
                bytes: need,
                block: 0,
                blocks: 0,
            };
        };
        let promised = state.promised.get(&block).copied().unwrap_or(0);
        let blocks = (self.kept)(block).saturating_sub(promised).min(3);
        Pending {
            bytes: need.saturating_sub((blocks * block) as u64),
            block,
            blocks,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gate over a fake process: `resident` bytes, and a pool keeping
    /// `kept` blocks of every size.
    fn gate(limit: u64) -> (Arc<MemoryGate>, Arc<AtomicU64>, Arc<AtomicU64>) {
        let resident = Arc::new(AtomicU64::new(10));
        let kept = Arc::new(AtomicU64::new(0));
        let (r, k) = (Arc::clone(&resident), Arc::clone(&kept));
        let gate = Arc::new(MemoryGate::with_readers(
            Some(limit),
            Box::new(move || Some(r.load(Ordering::Relaxed))),
            Box::new(move |_| k.load(Ordering::Relaxed) as usize),
        ));
        (gate, resident, kept)
    }

    /// Admits a partition of `need` on another thread; the receiver hears
    /// when it is admitted.
    fn admit_later(
        gate: &Arc<MemoryGate>,
        need: u64,
    ) -> (
        std::thread::JoinHandle<Option<Ticket>>,
        std::sync::mpsc::Receiver<()>,
    ) {
        let (done, admitted) = std::sync::mpsc::channel();
        let gate = Arc::clone(gate);
        let thread = std::thread::spawn(move || {
            let ticket = gate.admit(need, || true);
            done.send(()).unwrap();
            ticket
        });
        (thread, admitted)
    }

    const NOT_YET: Duration = Duration::from_millis(300);

    #[test]
    fn the_gate_admits_what_fits_and_one_partition_always() {
        let (gate, resident, _) = gate(100);
        // 10 resident + 40 + 40 still to allocate fits in 100; a third 40
        // does not.
        let first = gate.admit(40, || true).unwrap();
        let mut second = gate.admit(40, || true).unwrap();
        let (waiting, admitted) = admit_later(&gate, 40);
        assert!(
            admitted.recv_timeout(NOT_YET).is_err(),
            "admitted past the budget"
        );
        // The second is synthesized: its 40 are in the resident figure now
        // (10 + 40), counted once.
        resident.store(50, Ordering::Relaxed);
        second.synthesized(10);
        assert!(
            admitted.recv_timeout(NOT_YET).is_err(),
            "50 + 40 + 40 > 100"
        );
        // Memory that grew elsewhere (a key loaded) counts too: with the
        // first gone but 70 resident, 70 + 40 > 100 still.
        resident.store(70, Ordering::Relaxed);
        drop(first);
        assert!(admitted.recv_timeout(NOT_YET).is_err(), "70 + 40 > 100");
        // Back to 50 resident (the second's 40 and the base): 50 + 40 fits.
        resident.store(50, Ordering::Relaxed);
        admitted
            .recv_timeout(Duration::from_secs(5))
            .expect("admitted once it fits");
        let third = waiting.join().unwrap().unwrap();
        assert_eq!(gate.budget().waits, 1);
        // A job no longer wanted stops waiting.
        assert!(gate.admit(40, || false).is_none());
        drop((second, third));
        // Nothing in flight: one partition goes whatever its size, and the
        // gate can say beforehand that it will not fit.
        assert_eq!(gate.too_small_for(40), None);
        assert_eq!(gate.too_small_for(60), Some((100, 50)));
        let alone = gate.admit(1_000, || true);
        assert!(alone.is_some());
        assert_eq!(gate.too_small_for(60), None, "not alone: cannot tell");
        assert_eq!(gate.too_small_for(101), Some((100, 50)));
        drop(alone);
        // No budget: everything goes.
        let open = Arc::new(MemoryGate::new(None));
        let tickets: Vec<_> = (0..4)
            .map(|_| open.admit(u64::MAX / 8, || true).unwrap())
            .collect();
        assert_eq!(tickets.len(), 4);
    }

    #[test]
    fn kept_pool_blocks_count_once_and_for_one_partition_each() {
        // A key's partition: 40 bytes, of which a, b, c are 3 x 10.
        let (gate, resident, kept) = gate(100);
        let mut first = gate.admit(40, || true).unwrap();
        // Synthesized: 10 + 40 resident; its vectors are 10 bytes each.
        resident.store(50, Ordering::Relaxed);
        first.synthesized(10);
        // Proven: its a, b, c went back to the pool, kept and resident
        // (50 - 10 of witness freed = 40).
        drop(first);
        resident.store(40, Ordering::Relaxed);
        kept.store(3, Ordering::Relaxed);
        // Without the kept blocks, 40 + 40 + 40 > 100 would hold the third
        // partition back; with them the second, the first to come, takes
        // all three blocks and adds only its 10 of witness.
        let mut second = gate.admit(40, || true).unwrap();
        let third = gate.admit(40, || true).unwrap(); // 40 + 10 + 40 = 90
                                                      // The blocks are promised to the second: a fourth needs its 40 in
                                                      // full (40 + 10 + 40 + 40 > 100).
        let (waiting, admitted) = admit_later(&gate, 40);
        assert!(
            admitted.recv_timeout(NOT_YET).is_err(),
            "a block promised twice"
        );
        // The second took its blocks (now in use, still resident) and added
        // its witness: 50 resident, the third's 40 pending.
        resident.store(50, Ordering::Relaxed);
        kept.store(0, Ordering::Relaxed);
        second.synthesized(10);
        // 50 + 40 + 40 > 100 still; the third dropped unsynthesized frees
        // what it might have used: 50 + 40 fits.
        assert!(
            admitted.recv_timeout(NOT_YET).is_err(),
            "50 + 40 + 40 > 100"
        );
        drop(third);
        admitted
            .recv_timeout(Duration::from_secs(5))
            .expect("admitted once the third is gone");
        drop((second, waiting.join().unwrap()));
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
