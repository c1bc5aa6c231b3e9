//! Builds the native layer (`../native`) with the cxx bridge into
//! `libcuzk_native.a`, against blst's headers (`DEP_BLST_BINDINGS`).
//!
//! With the `cuda` feature it also compiles `native/cuda/*.cu` with nvcc
//! into `libcuzk_cuda.a` (see `cuda_build`), adds the CUDA half of the
//! bridge and the CUDA backend (`native/cuda/backend/*.cpp`), and links the
//! CUDA runtime and libstdc++ statically.

use std::path::{Path, PathBuf};

#[path = "build_cuda.rs"]
mod cuda_build;

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
    // Read when the script runs, not when it is compiled: a build script
    // compiled for another checkout sharing the target directory (same
    // source, same hash) would otherwise compile that checkout's sources.
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let native = Path::new(&manifest).join("../native");
    let include = native.join("include");
    let blst = std::env::var("DEP_BLST_BINDINGS").expect("blst exports DEP_BLST_BINDINGS");
    let cuda = std::env::var_os("CARGO_FEATURE_CUDA").is_some();
    let mut sources = files_with(&native.join("src"), "cpp");
    let mut bridges = vec!["src/bridge.rs"];
    if cuda {
        sources.extend(files_with(&native.join("cuda/backend"), "cpp"));
        bridges.push("src/cuda/bridge.rs");
    }
    let mut headers = files_with(&include.join("cuzk"), "hpp");
    headers.extend(files_with(&include.join("cuzk/cuda"), "hpp"));

    let mut build = cxx_build::bridges(&bridges);
    build
        .files(&sources)
        .include(&include)
        .include(&blst)
        .std("c++17")
        .flag("-O3")
        .flag_if_supported("-Wall")
        .flag_if_supported("-Wextra");
    if cuda {
        // libstdc++ is linked statically (cuda_build::link_runtime).
        build.cpp_link_stdlib(None);
        cuda_build::compile(&native, &blst);
    }
    build.compile("cuzk_native");
    if cuda {
        cuda_build::link_runtime();
    }

    for bridge in &bridges {
        println!("cargo:rerun-if-changed={bridge}");
    }
    println!("cargo:rerun-if-changed={}", native.join("src").display());
    println!("cargo:rerun-if-changed={}", include.join("cuzk").display());
    for file in sources.iter().chain(&headers) {
        println!("cargo:rerun-if-changed={}", file.display());
    }
}
