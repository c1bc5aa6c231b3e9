#!/usr/bin/env bash
# The test command: every crate's unit, integration and doc tests, in release
# mode (debug-mode curve arithmetic is tens of times slower), then, when no
# arguments narrow the run, the fixture tool's own tests (tools/fil-fixtures
# is a cargo workspace of its own: its CC C1 outputs at 2 KiB, 8 MiB, 32 GiB
# and 64 GiB, made without sealing and checked by storage-proofs' verifier).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release --workspace "$@"
if [ $# -eq 0 ]; then
    (cd tools/fil-fixtures && cargo test --release --locked)
fi
