//! Builds the native layer (`../native`) with the cxx bridge into
//! `libcuzk_native.a`, against blst's headers (`DEP_BLST_BINDINGS`).

use std::path::{Path, PathBuf};

fn files_with(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    files
}

fn main() {
    let native = Path::new(env!("CARGO_MANIFEST_DIR")).join("../native");
    let include = native.join("include");
    let blst = std::env::var("DEP_BLST_BINDINGS").expect("blst exports DEP_BLST_BINDINGS");
    let sources = files_with(&native.join("src"), "cpp");
    let headers = files_with(&include.join("cuzk"), "hpp");

    let mut build = cxx_build::bridge("src/bridge.rs");
    build
        .files(&sources)
        .include(&include)
        .include(&blst)
        .std("c++17")
        .flag("-O3")
        .flag_if_supported("-Wall")
        .flag_if_supported("-Wextra");

    // CUDA goes here: a `cuda` feature will compile native/cuda/*.cu with
    // nvcc (cc::Build::cuda) into a second library and link it. Nothing CUDA
    // is built today; the kernel region runs on the CPU.

    build.compile("cuzk_native");

    println!("cargo:rerun-if-changed=src/bridge.rs");
    println!("cargo:rerun-if-changed={}", native.join("src").display());
    println!("cargo:rerun-if-changed={}", include.join("cuzk").display());
    for file in sources.iter().chain(&headers) {
        println!("cargo:rerun-if-changed={}", file.display());
    }
}
