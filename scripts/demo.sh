#!/usr/bin/env bash
# The main job: build cuzk, generate parameters for a small sha-chain
# workload, prove a 2-partition request and verify it.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --bin cuzk
B=target/release/cuzk
W=(--workload sha-chain --size 1)
mkdir -p target/demo
[ -f target/demo/sha1.params ] || $B setup "${W[@]}" --params target/demo/sha1.params
$B prove "${W[@]}" --params target/demo/sha1.params --partitions 2 --request 0 --out target/demo/req0.proof
$B verify "${W[@]}" --params target/demo/sha1.params --partitions 2 --request 0 --proof target/demo/req0.proof
