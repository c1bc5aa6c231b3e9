#!/usr/bin/env bash
# The daemon against the in-process engine (issue 13), run ON the GPU machine
# from the repo root with the bundle of scripts/build-cuda.sh.
#
#   scripts/gpu-daemon.sh [SIZE] [REQUESTS] [PARTITIONS]   (default 300 24 10: sha-chain L)
#
# 1. `cuzk serve` (CUDA backend, 2 GPU workers, every proof verified) on
#    loopback; the key is preloaded (generated and saved), one request warms
#    the shape up; then REQUESTS jobs are submitted at once and awaited in
#    parallel: requests per hour from the first submission to the last
#    outcome. /metrics is saved after the run (daemon-metrics.txt).
# 2. `cuzk bench` (its own key, or the daemon's file with PARAMS_FILE=1) with the same engine settings
#    and request count, in the same machine session.
# Output under $OUT (default gpu-results/).
set -uo pipefail
cd "$(dirname "$0")/.."
B=${CUZK:-gpu-bundle/cuzk}
OUT=${OUT:-gpu-results}
SIZE=${1:-300}
N=${2:-24}
PARTS=${3:-10}
BACKEND=${BACKEND:-cuda}
STATE=${STATE:-/tmp/cuzk-daemon-state}
PORT=${PORT:-9820}
MPORT=${MPORT:-9821}
ADDR=127.0.0.1:$PORT
mkdir -p "$OUT"
rm -rf "$STATE"

now() { date +%s.%N; }
"$B" serve --listen "$ADDR" --metrics-listen "127.0.0.1:$MPORT" --state-dir "$STATE" \
    --backend "$BACKEND" --gpu-workers-per-device 2 --verify true --max-jobs 4096 --generate-params true \
    > "$OUT/daemon.log" 2>&1 &
DAEMON=$!
trap 'kill $DAEMON 2>/dev/null' EXIT
for _ in $(seq 100); do grep -q "gRPC on" "$OUT/daemon.log" && break; sleep 0.1; done
head -n 1 "$OUT/daemon.log"

C=("$B" client --addr "$ADDR")
t0=$(now)
"${C[@]}" preload "sha-chain/$SIZE" || { echo "preload failed"; tail "$OUT/daemon.log"; exit 1; }
t1=$(now)
echo "key sha-chain/$SIZE ready in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s (generated and saved)"
"${C[@]}" prove --kind sha-chain --size "$SIZE" --partitions "$PARTS" --request 100000 --out "$OUT/warmup.proof" \
    || { echo "warm-up failed"; tail "$OUT/daemon.log"; exit 1; }

start=$(now)
JOBS=()
for r in $(seq 1 "$N"); do
    JOBS+=("$("${C[@]}" submit --kind sha-chain --size "$SIZE" --partitions "$PARTS" --request "$r" 2>/dev/null)")
done
FAIL=0
PIDS=()
for j in "${JOBS[@]}"; do
    "${C[@]}" --json await "$j" > "$OUT/await-$j.json" 2>&1 &
    PIDS+=($!)
done
for p in "${PIDS[@]}"; do wait "$p" || FAIL=$((FAIL + 1)); done
end=$(now)
OK=$(grep -l '"verified": *true' "$OUT"/await-*.json 2>/dev/null | wc -l)
WALL=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
echo "daemon: $N requests x $PARTS partitions of sha-chain/$SIZE in $WALL s," \
     "$(awk -v n="$N" -v w="$WALL" 'BEGIN { printf "%.1f", 3600 * n / w }') requests/hour;" \
     "$FAIL awaits failed, $OK outcomes verified"
"${C[@]}" metrics > "$OUT/daemon-metrics.txt"
"${C[@]}" status > "$OUT/daemon-status.txt"
kill -TERM $DAEMON
wait $DAEMON
echo "daemon exit $?"

# The bench loads the daemon's key file with PARAMS_FILE=1, else generates its
# own (same circuit, other random key: the same work per proof).
KEYARG=()
if [ "${PARAMS_FILE:-0}" = 1 ]; then KEYARG=(--params "$(ls "$STATE"/params/*.params | head -n 1)"); fi
/usr/bin/time -f "max RSS %M KiB, wall %e s" "$B" bench --backend "$BACKEND" --workload sha-chain --size "$SIZE" \
    --partitions "$PARTS" --requests "$N" "${KEYARG[@]}" --gpu-workers-per-device 2 --verify \
    --json "$OUT/inprocess.json" > "$OUT/inprocess.log" 2>&1
echo "in-process bench exit $?"
grep -v $'\r' "$OUT/inprocess.log" | tail -n 14
