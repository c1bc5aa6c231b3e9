//! Cross-layer benchmarks of cuzk; see `benches/partition.rs`. Run them with
//! `cargo bench -p cuzk-benches` (CPU backend; add
//! `--features supraseal-c2/cuda` for the GPU).
