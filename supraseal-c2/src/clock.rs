//! The one monotonic clock that every layer's timestamps share.

/// Nanoseconds on the native prover's monotonic clock (`CLOCK_MONOTONIC`).
///
/// The lock instants in [`crate::PhaseTimings`] are on this clock, so the
/// layers above compare their own instants with them by calling this.
pub fn monotonic_ns() -> u64 {
    crate::bridge::ffi::monotonic_ns()
}
