//! `--timeline FILE.svg`: a hand-drawn SVG of one run. One row per device
//! (when its lock was held, coloured by worker), one per GPU worker (its
//! preamble, lock wait, kernel region and epilogue) and one per partition
//! worker (its syntheses), on a shared time axis, so that the interlock of
//! the workers around each lock can be seen.

use std::fmt::Write;

use cuzk_engine::metrics::{ProveSpan, SynthSpan};
use cuzk_engine::MetricsSnapshot;

const LABEL_W: f64 = 200.0;
const PLOT_W: f64 = 1100.0;
const ROW_H: f64 = 24.0;
const BAR_H: f64 = 16.0;
const TOP: f64 = 40.0;

/// Colours of the GPU workers' kernel regions, by worker index.
const WORKER_COLOURS: [&str; 6] = [
    "#d95f02", "#1b9e77", "#7570b3", "#e7298a", "#66a61e", "#e6ab02",
];
const PREAMBLE: &str = "#9ecae1";
const WAIT: &str = "#d9d9d9";
const EPILOGUE: &str = "#a1d99b";
const SYNTHESIS: &str = "#bcbddc";

/// The time axis: maps monotonic instants to x coordinates.
struct Axis {
    start_ns: u64,
    span_ns: u64,
}

impl Axis {
    fn x(&self, ns: u64) -> f64 {
        LABEL_W + PLOT_W * (ns.saturating_sub(self.start_ns)) as f64 / self.span_ns as f64
    }
}

/// The SVG document of `metrics`, headed `title`.
pub fn render(metrics: &MetricsSnapshot, title: &str) -> String {
    let axis = axis(metrics);
    let synth_workers = metrics
        .synth_spans
        .iter()
        .map(|s| s.worker + 1)
        .max()
        .unwrap_or(0);
    let rows = metrics.devices.len() + metrics.gpu_workers.len() + synth_workers;
    let height = TOP + ROW_H * (rows as f64 + 3.0);
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{height}" font-family="monospace" font-size="11">"#,
        w = LABEL_W + PLOT_W + 20.0
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="10" y="18" font-size="13">{}</text>"#,
        escape(title)
    );
    let mut row = 0;
    for device in &metrics.devices {
        label(&mut svg, row, &format!("device {} lock", device.device));
        for span in metrics
            .prove_spans
            .iter()
            .filter(|s| s.device == device.device)
        {
            let colour = WORKER_COLOURS[span.worker % WORKER_COLOURS.len()];
            let hold = span.hold();
            let tip = format!(
                "worker {} job {} partition {}",
                span.worker, span.job, span.partition
            );
            bar(
                &mut svg,
                &axis,
                row,
                (hold.taken_ns, hold.released_ns),
                colour,
                &tip,
            );
        }
        row += 1;
    }
    for worker in &metrics.gpu_workers {
        label(
            &mut svg,
            row,
            &format!("GPU worker {} (dev {})", worker.worker, worker.device),
        );
        for span in metrics
            .prove_spans
            .iter()
            .filter(|s| s.worker == worker.worker)
        {
            prove_bars(&mut svg, &axis, row, span);
        }
        row += 1;
    }
    for worker in 0..synth_workers {
        label(&mut svg, row, &format!("partition worker {worker}"));
        for span in metrics.synth_spans.iter().filter(|s| s.worker == worker) {
            synth_bar(&mut svg, &axis, row, span);
        }
        row += 1;
    }
    ticks(&mut svg, &axis, row);
    legend(&mut svg, row + 2);
    svg.push_str("</svg>\n");
    svg
}

fn axis(metrics: &MetricsSnapshot) -> Axis {
    let prove = metrics
        .prove_spans
        .iter()
        .map(|s| (s.preamble_window().0, s.epilogue_window().1));
    let synth = metrics
        .synth_spans
        .iter()
        .map(|s| (s.started_ns, s.ended_ns));
    let (start_ns, end_ns) = prove
        .chain(synth)
        .fold((u64::MAX, 0), |(lo, hi), (a, b)| (lo.min(a), hi.max(b)));
    if start_ns >= end_ns {
        return Axis {
            start_ns: 0,
            span_ns: 1,
        };
    }
    Axis {
        start_ns,
        span_ns: end_ns - start_ns,
    }
}

fn row_y(row: usize) -> f64 {
    TOP + ROW_H * row as f64
}

fn label(svg: &mut String, row: usize, text: &str) {
    let y = row_y(row) + BAR_H - 4.0;
    let _ = writeln!(svg, r#"<text x="10" y="{y}">{}</text>"#, escape(text));
}

fn bar(svg: &mut String, axis: &Axis, row: usize, (from, to): (u64, u64), fill: &str, tip: &str) {
    let (x0, x1) = (axis.x(from), axis.x(to));
    let _ = writeln!(
        svg,
        r#"<rect x="{x0:.2}" y="{y}" width="{w:.2}" height="{BAR_H}" fill="{fill}" stroke="white" stroke-width="0.5"><title>{tip} ({ms:.1} ms)</title></rect>"#,
        y = row_y(row),
        w = (x1 - x0).max(0.5),
        tip = escape(tip),
        ms = to.saturating_sub(from) as f64 / 1e6,
    );
}

fn prove_bars(svg: &mut String, axis: &Axis, row: usize, span: &ProveSpan) {
    let t = &span.timings;
    let tip = format!("job {} partition {}", span.job, span.partition);
    let kernel = WORKER_COLOURS[span.worker % WORKER_COLOURS.len()];
    let wait = (
        t.lock_taken_ns.saturating_sub(t.lock_wait_ns),
        t.lock_taken_ns,
    );
    bar(
        svg,
        axis,
        row,
        span.preamble_window(),
        PREAMBLE,
        &format!("{tip}: preamble"),
    );
    bar(svg, axis, row, wait, WAIT, &format!("{tip}: lock wait"));
    bar(
        svg,
        axis,
        row,
        (t.lock_taken_ns, t.lock_released_ns),
        kernel,
        &format!("{tip}: kernel"),
    );
    bar(
        svg,
        axis,
        row,
        span.epilogue_window(),
        EPILOGUE,
        &format!("{tip}: epilogue"),
    );
}

fn synth_bar(svg: &mut String, axis: &Axis, row: usize, span: &SynthSpan) {
    let tip = format!("job {} partition {}: synthesis", span.job, span.partition);
    bar(
        svg,
        axis,
        row,
        (span.started_ns, span.ended_ns),
        SYNTHESIS,
        &tip,
    );
}

/// A time axis under the rows, with about ten round ticks.
fn ticks(svg: &mut String, axis: &Axis, row: usize) {
    let y = row_y(row) + 4.0;
    let _ = writeln!(
        svg,
        r##"<line x1="{LABEL_W}" y1="{y}" x2="{x2}" y2="{y}" stroke="#444"/>"##,
        x2 = LABEL_W + PLOT_W
    );
    let step = nice_step(axis.span_ns / 10);
    let mut t = 0;
    while t <= axis.span_ns {
        let x = axis.x(axis.start_ns + t);
        let _ = writeln!(
            svg,
            r##"<line x1="{x:.2}" y1="{y}" x2="{x:.2}" y2="{y2}" stroke="#444"/><text x="{x:.2}" y="{ty}" text-anchor="middle">{s}s</text>"##,
            y2 = y + 4.0,
            ty = y + 16.0,
            s = t as f64 / 1e9
        );
        t += step;
    }
}

/// The smallest of 1, 2 or 5 times a power of ten that is at least `ns`.
fn nice_step(ns: u64) -> u64 {
    let mut base = 1;
    loop {
        for m in [1, 2, 5] {
            if base * m >= ns.max(1) {
                return base * m;
            }
        }
        base *= 10;
    }
}

fn legend(svg: &mut String, row: usize) {
    let y = row_y(row);
    let items = [
        (PREAMBLE, "preamble"),
        (WAIT, "lock wait"),
        (WORKER_COLOURS[0], "kernel (lock held; colour = GPU worker)"),
        (EPILOGUE, "epilogue"),
        (SYNTHESIS, "synthesis"),
    ];
    let mut x = LABEL_W;
    for (fill, name) in items {
        let _ = writeln!(
            svg,
            r#"<rect x="{x}" y="{y}" width="12" height="12" fill="{fill}"/><text x="{tx}" y="{ty}">{name}</text>"#,
            tx = x + 16.0,
            ty = y + 10.0
        );
        x += 30.0 + 7.0 * name.len() as f64;
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_steps_are_round() {
        assert_eq!(nice_step(0), 1);
        assert_eq!(nice_step(7), 10);
        assert_eq!(nice_step(130_000_000), 200_000_000);
        assert_eq!(nice_step(400_000_000), 500_000_000);
    }

    #[test]
    fn empty_metrics_still_make_a_document() {
        let svg = render(&MetricsSnapshot::default(), "a <b> & c");
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert!(svg.contains("a &lt;b&gt; &amp; c"));
    }
}
