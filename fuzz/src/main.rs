//! `cuzk-fuzz <target>`: one fuzz target under afl.rs (`cargo afl fuzz ...
//! target/release/cuzk-fuzz <target>`; outside AFL it runs one input from
//! standard input). `cuzk-fuzz seeds <dir>`: writes the seed corpora.
//! `scripts/fuzz.sh` does both; docs/fuzzing.md says how.

mod cap;
mod seeds;
mod targets;

use std::path::Path;
use std::process::ExitCode;

#[global_allocator]
static ALLOC: cap::Capped = cap::Capped;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let harness = |name: &str| targets::TARGETS.iter().find(|(n, _)| *n == name);
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["seeds", dir] => match seeds::write(Path::new(dir)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("cuzk-fuzz: seeds: {e}");
                ExitCode::FAILURE
            }
        },
        [name] if harness(name).is_some() => {
            let (_, run) = *harness(name).expect("a target");
            afl::fuzz_nohook!(|data: &[u8]| run(data));
            ExitCode::SUCCESS
        }
        _ => {
            let names: Vec<_> = targets::TARGETS.iter().map(|(n, _)| *n).collect();
            let names = names.join("|");
            eprintln!("usage: cuzk-fuzz <{names}> | cuzk-fuzz seeds <dir>");
            ExitCode::FAILURE
        }
    }
}
