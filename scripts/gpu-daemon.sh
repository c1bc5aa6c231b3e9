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
#    outcome. /metrics is saved after the run (daemon-metrics.txt). Once
#    per word of MODES (default `plain`), in that order: `plain` serves
#    plain-text gRPC; `tls` serves TLS with a bearer token (the certificate
#    made for 127.0.0.1 under $TLS_DIR by openssl, or found there: ca.pem,
#    server.pem, server.key), the client trusting that CA and sending the
#    token. E.g. MODES="plain tls plain tls" alternates them.
# 2. `cuzk bench` (its own key, or the daemon's file with PARAMS_FILE=1) with the same engine settings
#    and request count, in the same machine session.
# Output under $OUT (default gpu-results/; each mode's run under
# $OUT/daemon-N-MODE/).
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
TLS_DIR=${TLS_DIR:-/tmp/cuzk-tls}
TOKEN=admin-$(date +%s%N | sha256sum | head -c 24)
# A CA and a server certificate for 127.0.0.1 (ten days), unless there.
tls_files() {
    [ -f "$TLS_DIR/server.key" ] && return 0
    mkdir -p "$TLS_DIR" && command -v openssl > /dev/null || { echo "no openssl and no $TLS_DIR/server.key"; return 1; }
    ( cd "$TLS_DIR" &&
      openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 10 \
          -subj /CN=cuzk-bench-ca -keyout ca.key -out ca.pem &&
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=127.0.0.1 \
          -keyout server.key -out server.csr &&
      printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > ext.cnf &&
      openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 10 \
          -extfile ext.cnf -out server.pem ) > /dev/null 2>&1
}

# One daemon run: N requests at once, in MODE (plain or tls), into DIR.
daemon_run() {
    local mode=$1 dir=$2
    mkdir -p "$dir"
    rm -rf "$STATE"
    local serve_tls=() client_tls=()
    if [ "$mode" = tls ]; then
        tls_files || return 1
        printf 'admin %s\n' "$TOKEN" > "$TLS_DIR/tokens"
        printf '%s\n' "$TOKEN" > "$TLS_DIR/token"
        chmod 600 "$TLS_DIR/tokens" "$TLS_DIR/token" "$TLS_DIR/server.key"
        serve_tls=(--tls-cert "$TLS_DIR/server.pem" --tls-key "$TLS_DIR/server.key" --tokens-file "$TLS_DIR/tokens")
        client_tls=(--tls-ca "$TLS_DIR/ca.pem" --token-file "$TLS_DIR/token")
    fi
    "$B" serve --listen "$ADDR" --metrics-listen "127.0.0.1:$MPORT" --state-dir "$STATE" \
        --backend "$BACKEND" --gpu-workers-per-device 2 --verify true --max-jobs 4096 --generate-params true \
        "${serve_tls[@]}" > "$dir/daemon.log" 2>&1 &
    DAEMON=$!
    for _ in $(seq 100); do grep -q "gRPC on" "$dir/daemon.log" && break; sleep 0.1; done
    head -n 1 "$dir/daemon.log"

    C=("$B" client --addr "$ADDR" "${client_tls[@]}")
    local t0 t1 start end
    t0=$(now)
    "${C[@]}" preload "sha-chain/$SIZE" || { echo "preload failed"; tail "$dir/daemon.log"; kill $DAEMON; return 1; }
    t1=$(now)
    echo "$mode: key sha-chain/$SIZE ready in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s (generated and saved)"
    "${C[@]}" prove --kind sha-chain --size "$SIZE" --partitions "$PARTS" --request 100000 --out "$dir/warmup.proof" \
        || { echo "warm-up failed"; tail "$dir/daemon.log"; kill $DAEMON; return 1; }

    start=$(now)
    local JOBS=() PIDS=() FAIL=0
    for r in $(seq 1 "$N"); do
        JOBS+=("$("${C[@]}" submit --kind sha-chain --size "$SIZE" --partitions "$PARTS" --request "$r" 2>/dev/null)")
    done
    for j in "${JOBS[@]}"; do
        "${C[@]}" --json await "$j" > "$dir/await-$j.json" 2>&1 &
        PIDS+=($!)
    done
    for p in "${PIDS[@]}"; do wait "$p" || FAIL=$((FAIL + 1)); done
    end=$(now)
    local OK WALL
    OK=$(grep -l '"verified": *true' "$dir"/await-*.json 2>/dev/null | wc -l)
    WALL=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
    echo "daemon ($mode): $N requests x $PARTS partitions of sha-chain/$SIZE in $WALL s," \
         "$(awk -v n="$N" -v w="$WALL" 'BEGIN { printf "%.1f", 3600 * n / w }') requests/hour;" \
         "$FAIL awaits failed, $OK outcomes verified"
    "${C[@]}" metrics > "$dir/daemon-metrics.txt"
    "${C[@]}" status > "$dir/daemon-status.txt"
    kill -TERM $DAEMON
    wait $DAEMON
    echo "daemon ($mode) exit $?"
}

trap 'kill $DAEMON 2>/dev/null' EXIT
DAEMON=
i=0
for mode in ${MODES:-plain}; do
    i=$((i + 1))
    daemon_run "$mode" "$OUT/daemon-$i-$mode"
done

# The bench loads the daemon's key file with PARAMS_FILE=1, else generates its
# own (same circuit, other random key: the same work per proof).
KEYARG=()
if [ "${PARAMS_FILE:-0}" = 1 ]; then KEYARG=(--params "$(ls "$STATE"/params/*.params | head -n 1)"); fi
/usr/bin/time -f "max RSS %M KiB, wall %e s" "$B" bench --backend "$BACKEND" --workload sha-chain --size "$SIZE" \
    --partitions "$PARTS" --requests "$N" "${KEYARG[@]}" --gpu-workers-per-device 2 --verify \
    --json "$OUT/inprocess.json" > "$OUT/inprocess.log" 2>&1
echo "in-process bench exit $?"
grep -v $'\r' "$OUT/inprocess.log" | tail -n 14
