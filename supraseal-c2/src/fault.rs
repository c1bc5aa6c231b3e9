//! Fault injection: make the k-th kernel region on a device's lock fail, so
//! that the layers above can be tested on what a failing GPU does.
//!
//! A plan is a comma-separated list of `KIND@K` or `KIND@K:devD` (the
//! form of the `CUZK_FAULT` variable, which the engine reads): the `K`-th
//! kernel region (1-based; one per [`crate::prove`] call) on device `D`'s
//! lock, or on every lock when no device is named, fails as `KIND` says:
//!
//! | kind | CUDA backend | CPU backend |
//! | --- | --- | --- |
//! | `sticky` | a kernel writes to an unmapped address: `cudaErrorIllegalAddress`, the context is lost for the process | the same error (code 700), and the lock stays lost |
//! | `transient` | a launch with 4096 threads a block: `cudaErrorInvalidConfiguration` | the same error (code 9) |
//! | `alloc` | a `cudaMalloc` of 2^60 bytes: `cudaErrorMemoryAllocation` | the same error (code 2) |
//! | `panic` | the calling thread panics, holding the lock | the same |
//!
//! Each fault fires once. A sticky one needs nothing more: the lock's
//! device is lost ([`crate::GpuLock::is_lost`]) and every later kernel region
//! on it fails with the same error, as on a real GPU.
//!
//! ```
//! use supraseal_c2::{FaultKind, FaultPlan};
//! let plan: FaultPlan = "sticky@3:dev1,transient@2".parse()?;
//! assert_eq!(plan.faults()[0].kind, FaultKind::Sticky);
//! assert_eq!(plan.to_string(), "sticky@3:dev1,transient@2");
//! # Ok::<(), supraseal_c2::ParseFaultError>(())
//! ```

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// The environment variable the engine reads a [`FaultPlan`] from.
pub const FAULT_ENV: &str = "CUZK_FAULT";

/// What an injected fault does (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// A sticky CUDA error: the device is lost.
    Sticky,
    /// A CUDA error that leaves the device usable.
    Transient,
    /// A failed device allocation.
    Alloc,
    /// A panic on the calling thread, with the lock held.
    Panic,
}

impl FaultKind {
    const NAMES: [(&'static str, FaultKind); 4] = [
        ("sticky", FaultKind::Sticky),
        ("transient", FaultKind::Transient),
        ("alloc", FaultKind::Alloc),
        ("panic", FaultKind::Panic),
    ];

    fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, kind)| *kind == self)
            .map_or("?", |(name, _)| name)
    }

    /// The native `injected_fault_t` (`panic` is Rust's: 0, none).
    pub(crate) fn native_code(self) -> u8 {
        match self {
            FaultKind::Sticky => 1,
            FaultKind::Transient => 2,
            FaultKind::Alloc => 3,
            FaultKind::Panic => 0,
        }
    }
}

/// One fault of a [`FaultPlan`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InjectedFault {
    /// What happens.
    pub kind: FaultKind,
    /// Which kernel region on the lock fails, counting from 1.
    pub call: u64,
    /// The device whose lock it is; `None`: every lock's.
    pub device: Option<u32>,
}

/// Faults to inject into kernel regions (the module docs give the form).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FaultPlan {
    faults: Vec<InjectedFault>,
}

/// Why a fault plan could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("fault {entry:?}: expected KIND@K or KIND@K:devD, KIND one of sticky, transient, alloc, panic, K from 1")]
pub struct ParseFaultError {
    entry: String,
}

impl FaultPlan {
    /// A plan of these faults.
    pub fn new(faults: Vec<InjectedFault>) -> Self {
        Self { faults }
    }

    /// The plan in [`FAULT_ENV`]; empty when it is unset or empty.
    pub fn from_env() -> Result<Self, ParseFaultError> {
        std::env::var(FAULT_ENV).unwrap_or_default().parse()
    }

    /// The faults, in the order given.
    pub fn faults(&self) -> &[InjectedFault] {
        &self.faults
    }

    /// Whether there is no fault to inject.
    pub fn is_empty(&self) -> bool {
        self.faults.is_empty()
    }

    /// This plan's faults, then `other`'s.
    pub fn merged(mut self, other: FaultPlan) -> Self {
        self.faults.extend(other.faults);
        self
    }
}

impl FromStr for FaultPlan {
    type Err = ParseFaultError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let faults = s
            .split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .map(|entry| {
                parse_fault(entry).ok_or_else(|| ParseFaultError {
                    entry: entry.to_owned(),
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { faults })
    }
}

/// `KIND@K` or `KIND@K:devD`.
fn parse_fault(entry: &str) -> Option<InjectedFault> {
    let (kind, rest) = entry.split_once('@')?;
    let kind = FaultKind::NAMES
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(kind))?
        .1;
    let (call, device) = match rest.split_once(':') {
        Some((call, device)) => (call, Some(device.strip_prefix("dev")?.parse().ok()?)),
        None => (rest, None),
    };
    let call: u64 = call.parse().ok().filter(|&k| k > 0)?;
    Some(InjectedFault { kind, call, device })
}

impl fmt::Display for FaultPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, fault) in self.faults.iter().enumerate() {
            let comma = if i > 0 { "," } else { "" };
            write!(f, "{comma}{}@{}", fault.kind.name(), fault.call)?;
            if let Some(device) = fault.device {
                write!(f, ":dev{device}")?;
            }
        }
        Ok(())
    }
}

/// One lock's share of a plan, and its count of kernel regions.
#[derive(Debug, Default)]
pub(crate) struct FaultCounter {
    /// `(call, kind)` for this lock's device.
    faults: Mutex<Vec<(u64, FaultKind)>>,
    /// Whether `faults` is non-empty: the common case costs one load.
    armed: AtomicBool,
    calls: AtomicU64,
}

impl FaultCounter {
    /// Takes `plan`'s faults for `device` and counts kernel regions from 0.
    pub(crate) fn set(&self, plan: &FaultPlan, device: u32) {
        let mut faults = self.faults.lock().unwrap_or_else(|e| e.into_inner());
        *faults = plan
            .faults
            .iter()
            .filter(|f| f.device.is_none_or(|d| d == device))
            .map(|f| (f.call, f.kind))
            .collect();
        self.calls.store(0, Ordering::SeqCst);
        self.armed.store(!faults.is_empty(), Ordering::SeqCst);
    }

    /// Counts one kernel region; the fault it must suffer, with its number.
    pub(crate) fn next(&self) -> Option<(u64, FaultKind)> {
        if !self.armed.load(Ordering::Relaxed) {
            return None;
        }
        let call = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let faults = self.faults.lock().unwrap_or_else(|e| e.into_inner());
        faults
            .iter()
            .find(|(k, _)| *k == call)
            .map(|&(_, kind)| (call, kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_parse_and_print() {
        let plan: FaultPlan = " sticky@3:dev1 , Transient@2,alloc@1,panic@9:dev0"
            .parse()
            .unwrap();
        assert_eq!(
            plan.faults()[0],
            InjectedFault {
                kind: FaultKind::Sticky,
                call: 3,
                device: Some(1)
            }
        );
        assert_eq!(
            plan.to_string(),
            "sticky@3:dev1,transient@2,alloc@1,panic@9:dev0"
        );
        assert!("".parse::<FaultPlan>().unwrap().is_empty());
        for bad in [
            "sticky",
            "sticky@0",
            "melt@1",
            "alloc@1:1",
            "alloc@x",
            "panic@2:devx",
        ] {
            let err = bad.parse::<FaultPlan>().unwrap_err();
            assert!(err.to_string().contains(bad), "{err}");
        }
    }

    #[test]
    fn a_counter_fires_each_fault_once_on_its_device() {
        let plan: FaultPlan = "transient@2:dev1,alloc@3".parse().unwrap();
        let (zero, one) = (FaultCounter::default(), FaultCounter::default());
        zero.set(&plan, 0);
        one.set(&plan, 1);
        let fired = |c: &FaultCounter| (0..4).map(|_| c.next()).collect::<Vec<_>>();
        assert_eq!(
            fired(&zero),
            [None, None, Some((3, FaultKind::Alloc)), None]
        );
        assert_eq!(
            fired(&one),
            [
                None,
                Some((2, FaultKind::Transient)),
                Some((3, FaultKind::Alloc)),
                None
            ]
        );
        let idle = FaultCounter::default();
        assert_eq!(idle.next(), None);
    }
}
