#!/usr/bin/env bash
# A soak (issue 12): many proof requests through one engine, every request
# proof verified, the resident memory (VmRSS) read after each request; prints
# the median over the first and the last tenth of the requests and a verdict
# (exit 1 on FAIL). The engine side is cuzk-engine/examples/soak.rs.
#
#   scripts/soak.sh                  CPU: mul-chain 1000 (tiny), 2 partitions,
#                                    1,000 requests, at nice 19
#   scripts/soak.sh FLAGS...         the example's own flags instead: --backend
#                                    --workload --size --partitions --requests
#                                    --in-flight --params --samples --max-growth-mib
#
# SOAK_BIN=path runs a soak binary built elsewhere (the GPU machine has no
# cargo); SOAK_FEATURES=supraseal-c2/cuda builds the CUDA one (after
# `source scripts/cuda-env.sh`); SOAK_NICE sets the nice value (default 19).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${SOAK_BIN:-}
if [ -z "$BIN" ]; then
    cargo build --release -p cuzk-engine --example soak \
        ${SOAK_FEATURES:+--features "$SOAK_FEATURES"} >&2
    BIN=target/release/examples/soak
fi
args=("$@")
[ $# -gt 0 ] || args=(--backend cpu --workload mul-chain --size 1000 --partitions 2 --requests 1000)
revision=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || revision+=-dirty
echo "soak: $(date -u +%FT%TZ), revision $revision, $(nproc) cores: $BIN ${args[*]}"
exec nice -n "${SOAK_NICE:-19}" "$BIN" "${args[@]}"
