//! NVML's figures in `/metrics`: a series for each figure measured, none
//! for a device or figure that was not (never a 0 that reads as idle).

use cuzk_daemon::gpu::{Memory, Reading};
use cuzk_daemon::metrics::{Gauges, Metrics};

/// The sample lines of `text` whose name starts with `prefix`.
fn samples<'t>(text: &'t str, prefix: &str) -> Vec<&'t str> {
    text.lines().filter(|l| l.starts_with(prefix)).collect()
}

#[test]
fn measured_figures_are_exported_and_unmeasured_ones_are_absent() {
    let measured = Reading {
        utilization_percent: Some(87),
        memory: Some(Memory {
            used_bytes: 3 << 30,
            free_bytes: 1 << 30,
            total_bytes: 4 << 30,
        }),
    };
    let memory_only = Reading {
        utilization_percent: None,
        ..measured
    };
    let gauges = Gauges {
        gpus: vec![(0, measured), (1, Reading::default()), (2, memory_only)],
        ..Gauges::default()
    };
    let metrics = Metrics::new();
    let text = metrics.render(&gauges);
    assert_eq!(
        samples(&text, "cuzk_gpu_utilization_ratio{"),
        [r#"cuzk_gpu_utilization_ratio{device="0"} 0.87"#],
        "{text}"
    );
    let mut used = samples(&text, "cuzk_gpu_memory_used_bytes{");
    used.sort_unstable();
    assert_eq!(
        used,
        [
            r#"cuzk_gpu_memory_used_bytes{device="0"} 3221225472"#,
            r#"cuzk_gpu_memory_used_bytes{device="2"} 3221225472"#,
        ],
        "{text}"
    );
    assert_eq!(samples(&text, "cuzk_gpu_memory_total_bytes{").len(), 2);

    // A later scrape without NVML drops what the earlier one showed.
    let text = metrics.render(&Gauges::default());
    for name in [
        "utilization_ratio",
        "memory_used_bytes",
        "memory_total_bytes",
    ] {
        let series = samples(&text, &format!("cuzk_gpu_{name}{{"));
        assert!(series.is_empty(), "{series:?}");
    }
}
