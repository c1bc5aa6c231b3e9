//! What the engine records (every lock hold, every synthesis span) and the
//! figures derived from it: lock occupancy, lock gaps, stage medians.
//!
//! All instants are on [`supraseal_c2::monotonic_ns`], the clock the native
//! prover stamps its lock instants with. The log keeps the last
//! [`SPANS_KEPT`] records of each kind (a few weeks of a busy 32 GiB PoRep
//! service, tens of MB) and counts the rest, so that an engine that runs
//! for months stays within bounded memory; its figures are over the
//! records kept.

use std::collections::VecDeque;

use bellperson_lite::SynthesisTimings;
use parking_lot::Mutex;
use supraseal_c2::PhaseTimings;

/// Records of each kind (prove spans, synthesis spans) the log keeps; the
/// oldest are dropped beyond it.
pub const SPANS_KEPT: usize = 100_000;

/// Lock gaps shorter than this count as "back to back".
pub const SHORT_GAP_NS: u64 = 50_000_000;
/// Lock gaps longer than this count as "the device sat idle".
pub const LONG_GAP_NS: u64 = 500_000_000;

/// One hold of a device's lock by a GPU worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LockHold {
    /// The device.
    pub device: u32,
    /// The GPU worker that held it.
    pub worker: usize,
    /// The job whose partition was proven.
    pub job: u64,
    /// The partition's index in its request.
    pub partition: usize,
    /// When the lock was taken.
    pub taken_ns: u64,
    /// When it was released.
    pub released_ns: u64,
}

/// One `gpu_prove` call by a GPU worker, with the prover's phase timings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProveSpan {
    /// The device.
    pub device: u32,
    /// The GPU worker.
    pub worker: usize,
    /// The job.
    pub job: u64,
    /// The partition's index in its request.
    pub partition: usize,
    /// The prover's phases and lock instants.
    pub timings: PhaseTimings,
}

impl ProveSpan {
    /// The lock hold of this call.
    pub fn hold(&self) -> LockHold {
        LockHold {
            device: self.device,
            worker: self.worker,
            job: self.job,
            partition: self.partition,
            taken_ns: self.timings.lock_taken_ns,
            released_ns: self.timings.lock_released_ns,
        }
    }

    /// `[start, end)` of the preamble: it ends when the wait for the lock
    /// begins.
    pub fn preamble_window(&self) -> (u64, u64) {
        let t = &self.timings;
        let end = t.lock_taken_ns.saturating_sub(t.lock_wait_ns);
        (end.saturating_sub(t.preamble_ns), end)
    }

    /// `[start, end)` of the epilogue: it starts when the lock is released.
    pub fn epilogue_window(&self) -> (u64, u64) {
        let t = &self.timings;
        (t.lock_released_ns, t.lock_released_ns + t.epilogue_ns)
    }
}

/// One partition's synthesis by a partition worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SynthSpan {
    /// The partition worker.
    pub worker: usize,
    /// The job.
    pub job: u64,
    /// The partition's index in its request.
    pub partition: usize,
    /// When the partition worker took the partition from the queue.
    pub started_ns: u64,
    /// When the host-memory budget let its synthesis start (`started_ns`
    /// when it did not have to wait): synthesis time runs from here.
    pub admitted_ns: u64,
    /// When synthesis ended.
    pub ended_ns: u64,
    /// Witness and matrix-product time, when the compiled path was used.
    pub compiled: Option<SynthesisTimings>,
}

/// Gaps between consecutive lock holds on one device, by length.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GapHistogram {
    /// Shorter than 50 ms.
    pub under_50ms: usize,
    /// From 50 ms to 500 ms.
    pub from_50_to_500ms: usize,
    /// Longer than 500 ms.
    pub over_500ms: usize,
}

impl GapHistogram {
    fn add(&mut self, gap_ns: u64) {
        match gap_ns {
            g if g < SHORT_GAP_NS => self.under_50ms += 1,
            g if g <= LONG_GAP_NS => self.from_50_to_500ms += 1,
            _ => self.over_500ms += 1,
        }
    }
}

/// How busy one device's lock was.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DeviceMetrics {
    /// The device.
    pub device: u32,
    /// Lock holds recorded.
    pub holds: usize,
    /// Sum of the holds' lengths.
    pub held_ns: u64,
    /// From the first take to the last release.
    pub busy_span_ns: u64,
    /// `held_ns / busy_span_ns`: the share of the busy span in which the
    /// device's lock was held (the kernel region ran). It says how well the
    /// workers keep the lock busy, not how busy the GPU's cores were. 0
    /// with no holds. (Called "GPU efficiency" before.)
    pub lock_occupancy: f64,
    /// Gaps between consecutive holds.
    pub gaps: GapHistogram,
}

impl DeviceMetrics {
    /// The figures of `device` from its holds, in any order.
    pub fn from_holds(device: u32, holds: &[LockHold]) -> Self {
        let mut spans: Vec<(u64, u64)> = holds
            .iter()
            .filter(|h| h.device == device)
            .map(|h| (h.taken_ns, h.released_ns))
            .collect();
        spans.sort_unstable();
        let held_ns = spans.iter().map(|(taken, released)| released - taken).sum();
        let busy_span_ns = match (spans.first(), spans.iter().map(|s| s.1).max()) {
            (Some(first), Some(last)) => last - first.0,
            _ => 0,
        };
        let mut gaps = GapHistogram::default();
        for pair in spans.windows(2) {
            gaps.add(pair[1].0.saturating_sub(pair[0].1));
        }
        Self {
            device,
            holds: spans.len(),
            held_ns,
            busy_span_ns,
            lock_occupancy: ratio(held_ns, busy_span_ns),
            gaps,
        }
    }
}

/// How long one GPU worker waited for its device's lock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuWorkerMetrics {
    /// The worker.
    pub worker: usize,
    /// Its device.
    pub device: u32,
    /// Partitions it proved.
    pub partitions: usize,
    /// Total time spent waiting for the lock.
    pub lock_wait_ns: u64,
    /// Median wait per partition (0 with none).
    pub median_lock_wait_ns: u64,
}

/// Median time per partition in each stage; `None` where nothing ran.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageMedians {
    /// Synthesis (partition workers).
    pub synthesis_ns: Option<u64>,
    /// Of which recording the witness (compiled path only).
    pub witness_ns: Option<u64>,
    /// Of which the sparse matrix products (compiled path only).
    pub matrix_ns: Option<u64>,
    /// Preamble (GPU worker, lock not held).
    pub preamble_ns: Option<u64>,
    /// Waiting for the lock.
    pub lock_wait_ns: Option<u64>,
    /// Kernel region (lock held).
    pub kernel_ns: Option<u64>,
    /// Epilogue (lock not held).
    pub epilogue_ns: Option<u64>,
}

/// The engine's figures at one moment, with the raw records they come from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MetricsSnapshot {
    /// One entry per configured device, in configuration order.
    pub devices: Vec<DeviceMetrics>,
    /// One entry per GPU worker.
    pub gpu_workers: Vec<GpuWorkerMetrics>,
    /// Per-stage medians.
    pub stages: StageMedians,
    /// The last [`SPANS_KEPT`] `gpu_prove` calls, in completion order.
    pub prove_spans: Vec<ProveSpan>,
    /// The last [`SPANS_KEPT`] syntheses, in completion order.
    pub synth_spans: Vec<SynthSpan>,
    /// Partitions proven since the engine started (`gpu_prove` calls,
    /// counting those whose spans were dropped).
    pub partitions_proven: usize,
    /// Spans of either kind dropped from the log to keep it bounded: the
    /// figures above cover the records kept.
    pub spans_dropped: usize,
}

impl MetricsSnapshot {
    /// The lock holds of the spans kept, in completion order.
    pub fn lock_holds(&self) -> Vec<LockHold> {
        self.prove_spans.iter().map(ProveSpan::hold).collect()
    }
}

/// A GPU worker's identity: its global index and its device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GpuWorkerId {
    pub(crate) index: usize,
    pub(crate) device: u32,
    /// Index of the device in the engine's device list (and lock list).
    pub(crate) slot: usize,
    /// The urgent lane's worker: it takes only partitions of at least this
    /// priority ([`crate::EngineConfig::urgent_priority`]).
    pub(crate) urgent_from: Option<i32>,
}

/// The engine's log, appended to by workers.
pub(crate) struct Recorder {
    log: Mutex<Log>,
}

struct Log {
    kept: usize,
    proves: VecDeque<ProveSpan>,
    synths: VecDeque<SynthSpan>,
    proven: usize,
    dropped: usize,
}

impl Default for Log {
    fn default() -> Self {
        Self {
            kept: SPANS_KEPT,
            proves: VecDeque::new(),
            synths: VecDeque::new(),
            proven: 0,
            dropped: 0,
        }
    }
}

/// Appends `item`, dropping the oldest beyond `kept`; returns how many
/// were dropped.
fn push_bounded<T>(log: &mut VecDeque<T>, item: T, kept: usize) -> usize {
    log.push_back(item);
    let over = log.len().saturating_sub(kept);
    log.drain(..over);
    over
}

impl Recorder {
    /// A recorder that keeps `kept` spans of each kind (at least one).
    pub(crate) fn keeping(kept: usize) -> Self {
        Self {
            log: Mutex::new(Log {
                kept: kept.max(1),
                ..Log::default()
            }),
        }
    }

    pub(crate) fn record_synthesis(&self, span: SynthSpan) {
        let mut guard = self.log.lock();
        let log = &mut *guard;
        log.dropped += push_bounded(&mut log.synths, span, log.kept);
    }

    pub(crate) fn record_prove(&self, span: ProveSpan) {
        let mut guard = self.log.lock();
        let log = &mut *guard;
        log.dropped += push_bounded(&mut log.proves, span, log.kept);
        log.proven += 1;
    }

    pub(crate) fn partitions_proven(&self) -> usize {
        self.log.lock().proven
    }

    /// Copies the log (briefly holding its mutex) and derives the figures.
    pub(crate) fn snapshot(&self, devices: &[u32], workers: &[GpuWorkerId]) -> MetricsSnapshot {
        let (prove_spans, synth_spans, partitions_proven, spans_dropped): (Vec<_>, Vec<_>, _, _) = {
            let log = self.log.lock();
            (
                log.proves.iter().copied().collect(),
                log.synths.iter().copied().collect(),
                log.proven,
                log.dropped,
            )
        };
        let holds: Vec<LockHold> = prove_spans.iter().map(ProveSpan::hold).collect();
        MetricsSnapshot {
            devices: devices
                .iter()
                .map(|&d| DeviceMetrics::from_holds(d, &holds))
                .collect(),
            gpu_workers: workers
                .iter()
                .map(|w| worker_metrics(w, &prove_spans))
                .collect(),
            stages: stage_medians(&prove_spans, &synth_spans),
            prove_spans,
            synth_spans,
            partitions_proven,
            spans_dropped,
        }
    }
}

fn worker_metrics(worker: &GpuWorkerId, spans: &[ProveSpan]) -> GpuWorkerMetrics {
    let waits: Vec<u64> = spans
        .iter()
        .filter(|s| s.worker == worker.index)
        .map(|s| s.timings.lock_wait_ns)
        .collect();
    GpuWorkerMetrics {
        worker: worker.index,
        device: worker.device,
        partitions: waits.len(),
        lock_wait_ns: waits.iter().sum(),
        median_lock_wait_ns: median(waits).unwrap_or(0),
    }
}

fn stage_medians(proves: &[ProveSpan], synths: &[SynthSpan]) -> StageMedians {
    let phase =
        |f: fn(&PhaseTimings) -> u64| median(proves.iter().map(|s| f(&s.timings)).collect());
    StageMedians {
        synthesis_ns: median(synths.iter().map(|s| s.ended_ns - s.admitted_ns).collect()),
        witness_ns: median(
            synths
                .iter()
                .filter_map(|s| Some(s.compiled?.witness_ns))
                .collect(),
        ),
        matrix_ns: median(
            synths
                .iter()
                .filter_map(|s| Some(s.compiled?.matrix_ns))
                .collect(),
        ),
        preamble_ns: phase(|t| t.preamble_ns),
        lock_wait_ns: phase(|t| t.lock_wait_ns),
        kernel_ns: phase(|t| t.kernel_ns),
        epilogue_ns: phase(|t| t.epilogue_ns),
    }
}

/// The median (the mean of the middle two for an even count).
pub fn median(mut values: Vec<u64>) -> Option<u64> {
    values.sort_unstable();
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some(((u128::from(values[n / 2 - 1]) + u128::from(values[n / 2])) / 2) as u64),
    }
}

fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hold(device: u32, taken_ns: u64, released_ns: u64) -> LockHold {
        LockHold {
            device,
            worker: 0,
            job: 0,
            partition: 0,
            taken_ns,
            released_ns,
        }
    }

    #[test]
    fn occupancy_and_gaps_from_holds() {
        const MS: u64 = 1_000_000;
        let holds = [
            hold(0, 1100 * MS, 1200 * MS),
            hold(0, 0, 100 * MS),
            hold(0, 110 * MS, 300 * MS),
            hold(0, 400 * MS, 500 * MS),
            hold(1, 0, 7),
        ];
        let m = DeviceMetrics::from_holds(0, &holds);
        assert_eq!(m.holds, 4);
        assert_eq!(m.held_ns, 490 * MS);
        assert_eq!(m.busy_span_ns, 1200 * MS);
        assert!((m.lock_occupancy - 490.0 / 1200.0).abs() < 1e-12);
        let expected = GapHistogram {
            under_50ms: 1,
            from_50_to_500ms: 1,
            over_500ms: 1,
        };
        assert_eq!(m.gaps, expected);
        assert_eq!(DeviceMetrics::from_holds(2, &holds).lock_occupancy, 0.0);
    }

    #[test]
    fn medians() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![5, 1, 3]), Some(3));
        assert_eq!(median(vec![4, 1, 3, 2]), Some(2));
        assert_eq!(median(vec![u64::MAX, u64::MAX]), Some(u64::MAX));
    }

    fn prove_span(job: u64) -> ProveSpan {
        ProveSpan {
            device: 0,
            worker: 0,
            job,
            partition: 0,
            timings: PhaseTimings::default(),
        }
    }

    #[test]
    fn the_log_keeps_the_last_spans_and_counts_every_partition() {
        let recorder = Recorder::keeping(3);
        for job in 0..10 {
            recorder.record_prove(prove_span(job));
            recorder.record_synthesis(SynthSpan {
                worker: 0,
                job,
                partition: 0,
                started_ns: job,
                admitted_ns: job,
                ended_ns: job + 1,
                compiled: None,
            });
        }
        assert_eq!(recorder.partitions_proven(), 10);
        let workers = [GpuWorkerId {
            index: 0,
            device: 0,
            slot: 0,
            urgent_from: None,
        }];
        let m = recorder.snapshot(&[0], &workers);
        assert_eq!(m.partitions_proven, 10);
        assert_eq!(m.spans_dropped, 14);
        let jobs: Vec<u64> = m.prove_spans.iter().map(|s| s.job).collect();
        assert_eq!(jobs, [7, 8, 9]);
        let jobs: Vec<u64> = m.synth_spans.iter().map(|s| s.job).collect();
        assert_eq!(jobs, [7, 8, 9]);
        assert_eq!(m.devices[0].holds, 3);
        assert_eq!(m.gpu_workers[0].partitions, 3);
    }

    #[test]
    fn windows_follow_the_phases() {
        let span = ProveSpan {
            device: 0,
            worker: 1,
            job: 2,
            partition: 3,
            timings: PhaseTimings {
                preamble_ns: 10,
                lock_wait_ns: 5,
                kernel_ns: 20,
                epilogue_ns: 7,
                lock_taken_ns: 100,
                lock_released_ns: 120,
                ..PhaseTimings::default()
            },
        };
        assert_eq!(span.preamble_window(), (85, 95));
        assert_eq!(span.epilogue_window(), (120, 127));
        assert_eq!(span.hold().taken_ns, 100);
    }
}
