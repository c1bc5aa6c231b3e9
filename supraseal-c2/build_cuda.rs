//! The `cuda` feature's part of `build.rs`: nvcc, flags, libraries.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::files_with;

/// Compiles `native/cuda/*.cu` into `libcuzk_cuda.a` in OUT_DIR.
///
/// nvcc: `NVCC`, else `$CUDA_HOME/bin/nvcc`, else the project's own
/// `.cuda/nvidia/cu13/bin/nvcc` (scripts/install-cuda.sh), else `nvcc` on
/// PATH. Targets: `CUZK_CUDA_ARCHS` (e.g. `90`, or `80,89,90`) as SASS;
/// by default SASS for sm_80, sm_89, sm_90 plus compute_90 PTX. An
/// object is rebuilt only when its source, a header or the flags change
/// (msm.cu takes minutes).
pub fn compile(native: &Path, blst_bindings: &str) {
    let nvcc = nvcc();
    let sppark = env::var("DEP_SPPARK_ROOT").expect("sppark exports DEP_SPPARK_ROOT");
    let blst_src = env::var("DEP_BLST_C_SRC").expect("blst exports DEP_BLST_C_SRC");
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR")).join("cuda");
    std::fs::create_dir_all(&out).expect("creating OUT_DIR/cuda");

    let mut flags: Vec<String> = [
        "-O3",
        "-std=c++17",
        "-DNDEBUG",
        "-DFEATURE_BLS12_381",
        "-Xcompiler",
        "-fPIC",
        "-Xcompiler",
        "-Wno-unused-function",
    ]
    .map(String::from)
    .to_vec();
    flags.push(blst_flavour().into());
    for dir in [
        native.join("cuda"),
        native.join("include"),
        PathBuf::from(&sppark),
        PathBuf::from(&blst_src),
        PathBuf::from(blst_bindings),
    ] {
        flags.push(format!("-I{}", dir.display()));
    }
    flags.extend(gencode());

    let sources = files_with(&native.join("cuda"), "cu");
    let mut headers = files_with(&native.join("cuda"), "cuh");
    headers.extend(files_with(&native.join("include/cuzk/cuda"), "hpp"));
    headers.push(native.join("include/cuzk/check.hpp"));
    let stamp = format!("{} {}", nvcc.display(), flags.join(" "));
    let objects = build_objects(&nvcc, &flags, &stamp, &sources, &headers, &out);

    cc::Build::new()
        .objects(&objects)
        .cargo_warnings(false)
        .compile("cuzk_cuda");

    for file in sources.iter().chain(&headers) {
        println!("cargo:rerun-if-changed={}", file.display());
    }
    for var in ["NVCC", "CUDA_HOME", "CUZK_CUDA_ARCHS", "CUZK_BLST_ADX"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!(
        "cargo:rustc-link-search=native={}",
        cuda_home(&nvcc).join("lib").display()
    );
    println!(
        "cargo:rustc-link-search=native={}",
        cuda_home(&nvcc).join("lib64").display()
    );
}

/// The CUDA runtime and libstdc++, statically, after libcuzk_native.a:
/// the binaries then need only glibc (and libgcc_s, as every Rust
/// binary) and the NVIDIA driver.
pub fn link_runtime() {
    println!("cargo:rustc-link-lib=static:-bundle=cudart_static");
    let cxx = env::var("CXX").unwrap_or_else(|_| "c++".into());
    let libstdcxx = Command::new(&cxx)
        .arg("-print-file-name=libstdc++.a")
        .output()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .ok()
        .filter(|p| p.is_absolute());
    match libstdcxx.as_deref().and_then(Path::parent) {
        Some(dir) => {
            println!("cargo:rustc-link-search=native={}", dir.display());
            println!("cargo:rustc-link-lib=static:-bundle=stdc++");
        }
        None => println!("cargo:rustc-link-lib=stdc++"),
    }
    for lib in ["dl", "rt", "pthread"] {
        println!("cargo:rustc-link-lib={lib}");
    }
}

/// Compiles each source (in parallel) unless its object is newer than
/// it and every header and was built with the same flags.
fn build_objects(
    nvcc: &Path,
    flags: &[String],
    stamp: &str,
    sources: &[PathBuf],
    headers: &[PathBuf],
    out: &Path,
) -> Vec<PathBuf> {
    let stamp_file = out.join("flags");
    if std::fs::read_to_string(&stamp_file).ok().as_deref() != Some(stamp) {
        for source in sources {
            let _ = std::fs::remove_file(object_of(source, out));
        }
        std::fs::write(&stamp_file, stamp).expect("writing the flags stamp");
    }
    let objects: Vec<PathBuf> = sources.iter().map(|s| object_of(s, out)).collect();
    std::thread::scope(|scope| {
        let jobs: Vec<_> = sources
            .iter()
            .zip(&objects)
            .filter(|(source, object)| stale(object, source, headers))
            .map(|(source, object)| {
                scope.spawn(move || {
                    let status = Command::new(nvcc)
                        .args(flags)
                        .arg("-c")
                        .arg(source)
                        .arg("-o")
                        .arg(object)
                        .status()
                        .unwrap_or_else(|e| panic!("running {}: {e}", nvcc.display()));
                    assert!(status.success(), "nvcc failed on {}", source.display());
                })
            })
            .collect();
        for job in jobs {
            job.join().expect("nvcc job");
        }
    });
    objects
}

fn object_of(source: &Path, out: &Path) -> PathBuf {
    out.join(source.file_name().expect("file name"))
        .with_extension("o")
}

fn stale(object: &Path, source: &Path, headers: &[PathBuf]) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let Some(built) = modified(object) else {
        return true;
    };
    std::iter::once(source)
        .chain(headers.iter().map(PathBuf::as_path))
        .any(|input| modified(input).is_none_or(|t| t > built))
}

fn nvcc() -> PathBuf {
    if let Some(nvcc) = env::var_os("NVCC") {
        return nvcc.into();
    }
    if let Some(home) = env::var_os("CUDA_HOME") {
        return Path::new(&home).join("bin/nvcc");
    }
    let manifest = env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let project = Path::new(&manifest).join("../.cuda/nvidia/cu13/bin/nvcc");
    if project.exists() {
        return project;
    }
    "nvcc".into()
}

/// CUDA_HOME, else the directory above nvcc's bin/.
fn cuda_home(nvcc: &Path) -> PathBuf {
    if let Some(home) = env::var_os("CUDA_HOME") {
        return home.into();
    }
    let resolved = if nvcc.components().count() > 1 {
        nvcc.to_path_buf()
    } else {
        Command::new("sh")
            .args(["-c", "command -v nvcc"])
            .output()
            .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
            .unwrap_or_default()
    };
    let canonical = resolved.canonicalize().unwrap_or(resolved);
    canonical
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| panic!("cannot find CUDA_HOME from nvcc {}", nvcc.display()))
}

/// The `-gencode` list: `CUZK_CUDA_ARCHS` as SASS, or the default.
fn gencode() -> Vec<String> {
    let archs = env::var("CUZK_CUDA_ARCHS")
        .ok()
        .filter(|a| !a.trim().is_empty());
    let list = archs.as_deref().unwrap_or("80,89,90");
    let mut out: Vec<String> = list
        .split(',')
        .map(|a| a.trim().trim_start_matches("sm_"))
        .flat_map(|a| ["-gencode".into(), format!("arch=compute_{a},code=sm_{a}")])
        .collect();
    if archs.is_none() {
        out.extend(["-gencode".into(), "arch=compute_90,code=compute_90".into()]);
    }
    out
}

/// sppark's host code calls blst's assembly, whose symbol names differ
/// between its ADX and portable flavours: use the flavour the `blst`
/// crate was built with, by the rule of its build.rs (a mismatch fails
/// at link time, naming `mulx_*` or `mul_mont_*` symbols).
/// `CUZK_BLST_ADX=1` / `=0` overrides.
fn blst_flavour() -> &'static str {
    let adx = match env::var("CUZK_BLST_ADX").as_deref() {
        Ok("1") => true,
        Ok("0") => false,
        _ => blst_uses_adx(),
    };
    if adx {
        "-D__ADX__"
    } else {
        "-D__BLST_PORTABLE__"
    }
}

fn blst_uses_adx() -> bool {
    if env::var("CARGO_CFG_TARGET_ARCH").as_deref() != Ok("x86_64") {
        return false;
    }
    let rustflags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if rustflags.contains("target-cpu=") {
        let features = env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
        return features.split(',').any(|f| f == "adx");
    }
    host_has_adx()
}

#[cfg(target_arch = "x86_64")]
fn host_has_adx() -> bool {
    std::is_x86_feature_detected!("adx")
}

#[cfg(not(target_arch = "x86_64"))]
fn host_has_adx() -> bool {
    false
}
