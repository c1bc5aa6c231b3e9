//! Progress bars on stderr (indicatif) for work a user waits on: parameter
//! generation and loading, synthesis, requests through the engine.
//!
//! Every bar belongs to one process-wide [`MultiProgress`] drawn to stderr,
//! which indicatif leaves hidden when stderr is not a terminal: redirected
//! runs and scripts see no bar and no carriage return. Log lines go through
//! [`LogWriter`], which lifts the bars while it writes, so that a line is
//! never drawn over.

use std::borrow::Cow;
use std::io::{self, Write};
use std::ops::Deref;
use std::sync::OnceLock;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How often a spinner turns, and a bar redraws its elapsed time.
const TICK: Duration = Duration::from_millis(120);

fn bars() -> &'static MultiProgress {
    static BARS: OnceLock<MultiProgress> = OnceLock::new();
    BARS.get_or_init(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()))
}

/// A bar or spinner on stderr, removed when dropped (also on an early
/// return with an error, before the error is printed).
pub struct Progress(ProgressBar);

impl Deref for Progress {
    type Target = ProgressBar;

    fn deref(&self) -> &ProgressBar {
        &self.0
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

/// A spinner showing `message` and the time elapsed, for work of unknown
/// length.
pub fn spinner(message: impl Into<Cow<'static, str>>) -> Progress {
    let style = ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    start(ProgressBar::new_spinner().with_style(style), message)
}

/// A bar of `len` steps counted in `unit`s, with `message` after it (e.g.
/// `3/10 requests` on a bar of partitions).
pub fn bar(len: u64, unit: &str, message: impl Into<Cow<'static, str>>) -> Progress {
    let template = format!("{{spinner}} [{{bar:30}}] {{pos}}/{{len}} {unit} {{msg}} ({{elapsed}})");
    let style = ProgressStyle::with_template(&template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    start(ProgressBar::new(len).with_style(style), message)
}

fn start(bar: ProgressBar, message: impl Into<Cow<'static, str>>) -> Progress {
    let bar = bars().add(bar.with_message(message));
    if !bar.is_hidden() {
        bar.enable_steady_tick(TICK);
    }
    Progress(bar)
}

/// stderr for log lines: each write lifts the bars, writes, and draws them
/// again below it (tracing-subscriber's fmt layer writes one event per
/// write).
#[derive(Clone, Copy, Debug, Default)]
pub struct LogWriter;

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        bars().suspend(|| io::stderr().lock().write_all(buf))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stderr().flush()
    }
}
