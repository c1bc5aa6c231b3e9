#!/usr/bin/env bash
# The test command: every crate's unit, integration and doc tests, in release
# mode (debug-mode curve arithmetic is tens of times slower).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release --workspace "$@"
