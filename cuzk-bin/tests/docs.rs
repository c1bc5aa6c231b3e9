//! The README and docs/ stay true to the code: every `cuzk` flag they show
//! exists in that command's `--help`, and every repository path they name
//! exists.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// README.md, docs/*.md and each crate's README.
fn documents() -> Vec<PathBuf> {
    let root = root();
    let mut docs = vec![root.join("README.md"), root.join("BENCHMARKS.md")];
    for dir in [
        "docs",
        "supraseal-c2",
        "tools/fil-fixtures",
        "cuzk-filecoin/fixtures",
    ] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "md") {
                docs.push(path);
            }
        }
    }
    docs.sort();
    docs
}

/// `cuzk <words> --help`.
fn help(words: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(words)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "cuzk {words:?} --help");
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommands listed under "Commands:" in a help text.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// Every command path (`bench`, `client submit`, ...) and its flags.
fn command_flags() -> HashMap<String, BTreeSet<String>> {
    let mut all = HashMap::new();
    let mut queue = vec![Vec::<String>::new()];
    while let Some(words) = queue.pop() {
        let refs: Vec<&str> = words.iter().map(String::as_str).collect();
        let text = help(&refs);
        for sub in subcommands(&text) {
            let mut next = words.clone();
            next.push(sub);
            queue.push(next);
        }
        all.insert(words.join(" "), flags_in(&text));
    }
    all
}

/// Tokens that look like long flags.
fn flags_in(text: &str) -> BTreeSet<String> {
    let mut flags = BTreeSet::new();
    for (i, _) in text.match_indices("--") {
        let before = text[..i].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '-') {
            continue;
        }
        let name: String = text[i + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if name.len() > 1 && name.starts_with(|c: char| c.is_ascii_lowercase()) {
            flags.insert(format!("--{}", name.trim_end_matches('-')));
        }
    }
    flags
}

#[test]
fn every_cuzk_flag_the_docs_show_exists() {
    let commands = command_flags();
    let mut wrong = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for (n, line) in text.lines().enumerate() {
            // A command line: `cuzk` (or the scripts' `$B`) then words.
            let Some(at) = ["cuzk ", "$B "]
                .iter()
                .filter_map(|p| line.find(p).map(|i| i + p.len()))
                .min()
            else {
                continue;
            };
            let rest = &line[at..];
            // The longest command path the line names; flags and their
            // values may stand between its words (`client --addr A prove`).
            let mut path = String::new();
            let mut chain = vec![String::new()];
            for w in rest.split_whitespace() {
                let longer = if path.is_empty() {
                    w.to_string()
                } else {
                    format!("{path} {w}")
                };
                if commands.contains_key(&longer) {
                    path = longer;
                    chain.push(path.clone());
                }
            }
            if path.is_empty() {
                continue;
            }
            for flag in flags_in(rest) {
                if !chain.iter().any(|c| commands[c].contains(&flag)) {
                    let file = doc.strip_prefix(root()).unwrap().display().to_string();
                    wrong.push(format!("{file}:{}: cuzk {path} has no {flag}", n + 1));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_repository_path_the_docs_name_exists() {
    let tops = [
        "scripts/",
        "docs/",
        "native/",
        "cuzk-bin/",
        "cuzk-daemon/",
        "cuzk-engine/",
        "cuzk-filecoin/",
        "cuzk-pipeline/",
        "bellperson-lite/",
        "supraseal-c2/",
        "tools/",
        "benches/",
        "fuzz/",
        ".ci/",
    ];
    let root = root();
    let mut missing = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for (n, line) in text.lines().enumerate() {
            for quoted in line.split('`').skip(1).step_by(2) {
                let path = quoted.split_whitespace().next().unwrap_or("");
                let path = path.trim_end_matches([',', '.', ':', ')']);
                // Build outputs (`fuzz/out/`, `.../target/...`) are not in a
                // clean checkout.
                let built = path.starts_with("fuzz/out") || path.contains("target/");
                if !tops.iter().any(|t| path.starts_with(t))
                    || built
                    || path.contains(['*', '<', '{', '$', '…'])
                    || path.contains("...")
                {
                    continue;
                }
                // `file.rs:123` names a line of the file.
                let file = path.split(':').next().unwrap();
                if !root.join(file).exists() {
                    let doc = doc.strip_prefix(&root).unwrap().display().to_string();
                    missing.push(format!("{doc}:{}: {path}", n + 1));
                }
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
