//! Records the git revision the binary is built from as
//! `CUZK_GIT_REVISION` (`git rev-parse --short HEAD`, `-dirty` when tracked
//! files differ from it; `unknown` without git). Setting
//! `CUZK_GIT_REVISION` in the build's environment overrides it (a build
//! from a source archive, say).

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=CUZK_GIT_REVISION");
    let revision = match std::env::var("CUZK_GIT_REVISION") {
        Ok(given) if !given.is_empty() => given,
        _ => {
            watch_sources();
            git_revision().unwrap_or_else(|| "unknown".to_owned())
        }
    };
    println!("cargo:rustc-env=CUZK_GIT_REVISION={revision}");
}

/// Runs git without taking the index lock (other git commands may be
/// running in the same tree) and returns its trimmed output.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("--no-optional-locks")
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn git_revision() -> Option<String> {
    let head = git(&["rev-parse", "--short", "HEAD"])?;
    let changes = git(&["status", "--porcelain", "--untracked-files=no"])?;
    Some(if changes.is_empty() {
        head
    } else {
        format!("{head}-dirty")
    })
}

/// Reruns this script when HEAD, the index or any crate of the workspace
/// changes, so that the `-dirty` mark follows what is compiled.
fn watch_sources() {
    if let Some(git_dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        for name in ["HEAD", "index", "packed-refs", "refs/heads"] {
            // A path that does not exist would rerun the script every build.
            let path = Path::new(&git_dir).join(name);
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let Ok(entries) = std::fs::read_dir(&root) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let is_source = path.join("Cargo.toml").is_file() || name == "native";
        if is_source || name == "Cargo.toml" || name == "Cargo.lock" {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}
