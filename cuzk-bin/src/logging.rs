//! The process's logs: `tracing` events (and the `log` records of the
//! layers below, through tracing-log) formatted to stderr, between the
//! progress bars ([`crate::progress::LogWriter`]).
//!
//! `RUST_LOG` filters them (tracing-subscriber's `EnvFilter` syntax); without
//! it `cuzk serve` logs at `info` and the other commands show warnings and
//! their own status lines ([`CLI`] at `info`). The native prover's trace is
//! the target [`supraseal_c2::NATIVE_TRACE_TARGET`] (`cuzk::native`) at
//! `debug`: `RUST_LOG=cuzk::native=debug`, or [`TRACE_PREAMBLE_ENV`]`=1` on
//! top of whatever `RUST_LOG` says.

use std::io::IsTerminal;
use std::time::Instant;

use tracing_subscriber::EnvFilter;

/// The target of the CLI's own status lines.
pub const CLI: &str = "cuzk::cli";

/// The filter of the commands but `serve` when `RUST_LOG` is not set.
pub const DEFAULT_FILTER: &str = "warn,cuzk::cli=info";

/// The filter of `cuzk serve` when `RUST_LOG` is not set.
pub const SERVE_FILTER: &str = "info";

/// Set (and not `0`): also show the native prover's preamble steps, as
/// `cuzk::native=debug` in `RUST_LOG` would.
pub const TRACE_PREAMBLE_ENV: &str = "CUZK_TRACE_PREAMBLE";

/// Installs the subscriber; `default` is the filter when `RUST_LOG` is not
/// set. A second call changes nothing.
pub fn init(default: &str) {
    let mut filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    if trace_preamble() {
        let native = format!("{}=debug", supraseal_c2::NATIVE_TRACE_TARGET);
        if let Ok(directive) = native.parse() {
            filter = filter.add_directive(directive);
        }
    }
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(|| crate::progress::LogWriter)
        .try_init();
}

fn trace_preamble() -> bool {
    std::env::var_os(TRACE_PREAMBLE_ENV).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Seconds since `started`, to the millisecond: a log field.
pub fn secs(started: Instant) -> f64 {
    ns_secs(started.elapsed().as_nanos() as u64)
}

/// `ns` in seconds, to the millisecond: a log field.
pub fn ns_secs(ns: u64) -> f64 {
    (ns as f64 / 1e6).round() / 1e3
}
