#!/usr/bin/env bash
# Run ON the GPU machine, from the repository root, after
# scripts/build-cuda.sh has filled gpu-bundle/tests/ (the build machine needs
# no GPU; the binaries need only glibc and the NVIDIA driver). Carry
# gpu-bundle/tests.tgz there (the device tool's `carry`: the unpacked
# folder is over what a run may carry); it is unpacked into gpu-bundle/tests
# when that folder is not there.
#
#   scripts/gpu-run.sh [-- HARNESS_ARGS...]
#
# 1. gpu-bundle/tests/cuzk-cuda-harness HARNESS_ARGS (e.g. --tests-only);
# 2. every gpu-bundle/tests/test-* executable with --ignored --test-threads=1
#    --nocapture (and CUZK_ABC_UPLOAD=1): the tests that need a CUDA device, one at a time (each
#    takes device 0's lock; timing tests print their tables);
#    Among them test-cuzk-engine-device_faults (cuda_device_faults_are_survived):
#    real faults injected into device 0's kernel regions through the engine
#    (a bad launch and a failed cudaMalloc, retried and verified; a worker
#    panic, its job failed and the next verified; then an illegal address,
#    which loses that process's CUDA context: the job fails with the typed
#    sticky error (code 700), the device is retired, the engine still
#    answers). Each executable is its own process, so the others are not
#    affected.
# 3. every test-* executable again without --ignored: the ordinary tests
#    (GPU_RUN_NORMAL=0 skips them).
# GPU_RUN_ONLY=TEXT runs only the test executables whose name contains TEXT,
# without the harness (GPU_RUN_ONLY=device_faults: the fault case alone).
# Each run has a time limit (GPU_RUN_TIMEOUT seconds, default 540). Output
# goes to the terminal and to $OUT/<step>.log when OUT is set (else
# gpu-bundle/logs/), with nvidia-smi's view of the GPU in gpu.txt. Ends with
# a summary table (summary.md); exits non-zero when any run failed.
set -uo pipefail
cd "$(dirname "$0")/.."

BUNDLE=${BUNDLE:-gpu-bundle/tests}
if [ ! -d "$BUNDLE" ] && [ -f "$BUNDLE.tgz" ]; then
    tar xzf "$BUNDLE.tgz" -C "$(dirname "$BUNDLE")" || { echo "gpu-run.sh: cannot unpack $BUNDLE.tgz" >&2; exit 1; }
fi
LOGS=${OUT:-$BUNDLE/logs}
LIMIT=${GPU_RUN_TIMEOUT:-540}
NORMAL=${GPU_RUN_NORMAL:-1}
ONLY=${GPU_RUN_ONLY:-}
ARGS=()
if [ "${1:-}" = "--" ]; then
    shift
    ARGS=("$@")
fi
mkdir -p "$LOGS"

{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "host: $(uname -srm), $(nproc) cores"
    nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
        --format=csv 2>&1 || echo "nvidia-smi failed"
} | tee "$LOGS/gpu.txt"

SUMMARY=()
FAILED=0
# run STEP BINARY ARGS...: one timed run, logged to $LOGS/STEP.log.
run() {
    local step=$1 bin=$2
    shift 2
    echo
    echo "==== $step: $bin $*"
    local t0 t1 rc secs result status
    t0=$(date +%s.%N)
    timeout "$LIMIT" "$bin" "$@" 2>&1 | tee "$LOGS/$step.log"
    rc=${PIPESTATUS[0]}
    t1=$(date +%s.%N)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    # The harness prints "N checks, M failed"; libtest "test result: ...".
    result=$(grep -E '^[0-9]+ checks, [0-9]+ failed' "$LOGS/$step.log" | tail -n1)
    if [ -z "$result" ]; then
        result=$(grep -E '^test result:' "$LOGS/$step.log" | tail -n1 |
            sed -E 's/^test result: [a-zA-Z]+\. //; s/; finished in.*//')
    fi
    case $rc in
        0) status=ok ;;
        77) status=skipped ;;
        124) status="TIMEOUT (${LIMIT} s)"; FAILED=1 ;;
        *) status="FAILED (exit $rc)"; FAILED=1 ;;
    esac
    SUMMARY+=("| $step | $status | $secs | ${result:--} |")
}

shopt -s nullglob
for bin in "$BUNDLE"/*harness*; do
    [ -z "$ONLY" ] && [ -f "$bin" ] && [ -x "$bin" ] && run "$(basename "$bin")" "$bin" "${ARGS[@]}"
done
TESTS=()
for bin in "$BUNDLE"/test-*"$ONLY"*; do
    [ -f "$bin" ] && [ -x "$bin" ] && TESTS+=("$bin")
done
for bin in "${TESTS[@]}"; do
    # CUZK_ABC_UPLOAD=1: the early a, b, c upload, which the engine uses only
    # when the lock is in use, also runs in these one-at-a-time proofs.
    CUZK_ABC_UPLOAD=1 run "$(basename "$bin").ignored" "$bin" --ignored --test-threads=1 --nocapture
done
if [ "$NORMAL" != 0 ]; then
    for bin in "${TESTS[@]}"; do
        run "$(basename "$bin")" "$bin"
    done
fi

echo
{
    echo "| run | status | seconds | result |"
    echo "|---|---|---:|---|"
    if [ ${#SUMMARY[@]} -eq 0 ]; then
        echo "| (no harness or test executable in $BUNDLE/) | - | - | - |"
        FAILED=1
    fi
    for line in "${SUMMARY[@]}"; do echo "$line"; done
} | tee "$LOGS/summary.md"
exit $FAILED
