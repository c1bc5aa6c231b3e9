#!/usr/bin/env bash
# The Filecoin benchmarks of BENCHMARKS.md, run ON the GPU machine from the
# repo root with the bundle of scripts/build-cuda.sh (gpu-bundle/cuzk) and,
# for the reference, tools/fil-fixtures/build-supraseal.sh (gpu-ref/fil-c2-ref).
#
#   scripts/gpu-filecoin.sh STEP...
#
# Steps (run in the order given):
#   setup:KIND:SIZE          cuzk setup --kind KIND --sector-size SIZE (test
#                            parameters under filecoin-proofs' names in $PARAMS)
#   bench:KIND:SIZE:N[:TAG]  cuzk bench on the fixture of SIZE, N requests,
#                            2 GPU workers, every proof verified (TAG names
#                            its log and JSON apart from another run's, e.g.
#                            one with CUZK_WITNESS_PIECES=0)
#   synth:KIND:SIZE[:P]      cuzk synth on the fixture of SIZE: the first P
#                            partitions (default 1) on the compiled path,
#                            the witness from the gadgets and from the
#                            native program side by side, checked equal
#                            (SYNTH_REPEAT runs of each, default 1, the
#                            median reported)
#   ref:SIZE:N               filecoin-proofs' seal_commit_phase2 (bellperson
#                            0.27 + supraseal-c2) on the same C1, N requests
#   refs:SIZE:N:P            P such processes at once on the same GPU (what a
#                            user could run instead of cuzk), N requests
#                            each; a summary of how many ended with every
#                            proof verified and their proofs per hour, in
#                            $OUT/refs-porep-SIZE-xP.txt
#   urgent:SIZE:P:W          `cuzk serve --urgent-priority 3` with the PoRep
#                            and WinningPoSt keys of SIZE preloaded: W
#                            WinningPoSt proofs (HIGH) one at a time on an
#                            idle daemon, then P PoRep C2 jobs submitted at
#                            once and, after URGENT_DELAY seconds (default
#                            120), W WinningPoSt proofs while they run; each
#                            timed from submission to proof
#                            ($OUT/urgent-SIZE.txt), every outcome verified
#                            by the engine
#   first:SIZE:N             `cuzk serve` with the PoRep key of SIZE
#                            preloaded (parameters and compiled shape,
#                            timed), then N PoRep C2 proofs one at a time
#                            through `cuzk client prove`, each timed from
#                            submission to proof: the first proof with the
#                            parameters resident ($OUT/first-SIZE.txt),
#                            every outcome verified by the engine
#   cc:SIZE                  a CC fixture of SIZE made without sealing (C1,
#                            WinningPoSt, a WindowPoSt partition) into
#                            $FIXTURES/SIZE, by $FIL_FIXTURES (default
#                            gpu-ref/fil-fixtures: tools/fil-fixtures'
#                            release binary, copied there to travel); the
#                            production sizes (32GiB, 64GiB) are made so
# KIND: porep, snap-deals, winning-post, window-post. Fixtures (made by
# tools/fil-fixtures): $FIXTURES/SIZE (default gpu-bundle/fixtures) when it
# exists, else cuzk-filecoin/fixtures/SIZE (2KiB, 8MiB, 512MiB committed). Logs and JSON go to $OUT
# (default gpu-results/); parameters to $PARAMS (default /tmp/fil-params).
# Bench concurrency: PARTITION_WORKERS (default: the cores), GPU_WORKERS
# (default 2), QUEUE_DEPTH (default: the engine's), HOST_MEMORY_LIMIT (e.g.
# 96GiB; default the engine's, 85 % of the machine), DEVICE_MEMORY_LIMIT
# (e.g. 24GiB: the device memory cuzk may use, as on a smaller card),
# SYNTHESIS (e.g. compiled-gadgets: the witness from the gadgets); at 32
# GiB host memory bounds them (a partition in flight holds about 17 GB).
# STEP_TIMEOUT (seconds, default 900) bounds each step. BACKEND=cpu runs the benches on the CPU backend (a check without a GPU).
set -uo pipefail
cd "$(dirname "$0")/.."
B=${CUZK:-gpu-bundle/cuzk}
REF=${REF:-gpu-ref/fil-c2-ref}
OUT=${OUT:-gpu-results}
PARAMS=${PARAMS:-/tmp/fil-params}
FIXTURES=${FIXTURES:-gpu-bundle/fixtures}
REV=${CUZK_REV:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
mkdir -p "$OUT" "$PARAMS"

{ date -u; echo "revision $REV"; nproc; free -g | head -2
  nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv; } > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
nvidia-smi --query-gpu=timestamp,index,memory.used,utilization.gpu --format=csv,noheader -lms 500 \
    > "$OUT/gpu-samples.csv" 2>/dev/null &
SAMPLER=$!
trap 'kill $SAMPLER 2>/dev/null' EXIT

# The fixture of a size: $FIXTURES/SIZE when it is there, else the committed
# one (cuzk-filecoin/fixtures/SIZE; 512MiB's lacks the SnapDeals proofs).
fixture() { if [ -d "$FIXTURES/$1" ]; then echo "$FIXTURES/$1"; else echo "cuzk-filecoin/fixtures/$1"; fi; }
# meta FIXTURE KEY [SECTION]: a string field of meta.json (first match after SECTION).
meta() {
    local f=$1/meta.json
    if [ -n "${3:-}" ]; then
        sed -n "/\"$3\"/,\$p" "$f" | grep -m1 "\"$2\"" | sed -E 's/.*: *"?([^",]*)"?,?$/\1/'
    else
        grep -m1 "\"$2\"" "$f" | sed -E 's/.*: *"?([^",]*)"?,?$/\1/'
    fi
}
# inputs KIND FIXTURE: the cuzk input flags for that kind.
inputs() {
    local kind=$1 fx=$2 miner
    miner=$(meta "$fx" miner_id)
    case $kind in
        porep) echo "--c1 $fx/c1-curio.json --miner-id $miner" ;;
        winning-post) echo "--miner-id $miner --randomness $(meta "$fx" randomness winning) --vanilla $fx/winning/vanilla-0.bin" ;;
        window-post)
            # Every sector of the partition, in order (2,349 at 32 GiB).
            local v=""
            for p in $(ls "$fx"/window/vanilla-*.bin | sort -V); do v="$v --vanilla $p"; done
            echo "--miner-id $miner --randomness $(meta "$fx" randomness window)$v" ;;
        snap-deals)
            local v=""
            for p in $(ls "$fx"/snap/partition-*.bin | sort -V); do v="$v --vanilla $p"; done
            echo "--miner-id $miner --comm-r-old $(meta "$fx" comm_r_old snap) --comm-r-new $(meta "$fx" comm_r_new snap)" \
                 "--comm-d-new $(meta "$fx" comm_d_new snap)$v" ;;
    esac
}
run() {
    local name=$1; shift
    echo "== $name: $*"
    timeout "${STEP_TIMEOUT:-900}" /usr/bin/time -f "max RSS %M KiB, wall %e s" "$@" > "$OUT/$name.log" 2>&1
    echo "   exit $?"
    grep -v $'\r' "$OUT/$name.log" | tail -n 16
}

# serve_daemon NAME PORT [FLAG...]: `cuzk serve` on 127.0.0.1:PORT (metrics
# on PORT+1) with the Filecoin parameters of $PARAMS and the bench's engine
# settings, a fresh state under /tmp/cuzk-NAME-state, its log in
# $OUT/NAME-daemon.log; waits until it serves and sets C to its client.
serve_daemon() {
    local name=$1 port=$2 state=/tmp/cuzk-$1-state
    shift 2
    rm -rf "$state"
    # shellcheck disable=SC2046
    "$B" serve --listen "127.0.0.1:$port" \
        --metrics-listen "127.0.0.1:$((port + 1))" --state-dir "$state" --fil-param-dir "$PARAMS" \
        --backend "${BACKEND:-cuda}" --verify true "$@" \
        --gpu-workers-per-device "${GPU_WORKERS:-2}" --partition-workers "${PARTITION_WORKERS:-$(nproc)}" \
        ${QUEUE_DEPTH:+--queue-depth "$QUEUE_DEPTH"} ${HOST_MEMORY_LIMIT:+--host-memory-limit "$HOST_MEMORY_LIMIT"} \
        ${DEVICE_MEMORY_LIMIT:+--device-memory-limit "$DEVICE_MEMORY_LIMIT"} \
        > "$OUT/$name-daemon.log" 2>&1 &
    daemon=$!
    for _ in $(seq 300); do grep -q "gRPC on" "$OUT/$name-daemon.log" && break; sleep 0.2; done
    C=("$B" client --addr "127.0.0.1:$port")
}
# stop_daemon NAME: saves its metrics, adds its peak RSS to $OUT/NAME.txt,
# stops it with SIGTERM.
stop_daemon() {
    "${C[@]}" metrics > "$OUT/$1-metrics.txt" 2>&1
    grep '^cuzk_process_peak_resident_bytes' "$OUT/$1-metrics.txt" | tee -a "$OUT/$1.txt"
    kill -TERM "$daemon"; wait "$daemon"; echo "   daemon exit $?"
}

for step in "$@"; do
    IFS=: read -r what a b c d <<< "$step"
    case $what in
        setup) run "setup-$a-$b" "$B" setup --kind "$a" --sector-size "$b" --param-dir "$PARAMS" ;;
        bench)
            fx=$(fixture "$b")
            # shellcheck disable=SC2046
            run "bench-$a-$b${d:+-$d}" "$B" bench --backend "${BACKEND:-cuda}" --kind "$a" --sector-size "$b" --param-dir "$PARAMS" \
                $(inputs "$a" "$fx") --requests "$c" --gpu-workers-per-device "${GPU_WORKERS:-2}" --verify \
                --partition-workers "${PARTITION_WORKERS:-$(nproc)}" ${QUEUE_DEPTH:+--queue-depth "$QUEUE_DEPTH"} \
                ${HOST_MEMORY_LIMIT:+--host-memory-limit "$HOST_MEMORY_LIMIT"} \
                ${DEVICE_MEMORY_LIMIT:+--device-memory-limit "$DEVICE_MEMORY_LIMIT"} \
                ${SYNTHESIS:+--synthesis "$SYNTHESIS"} \
                --json "$OUT/bench-$a-$b${d:+-$d}.json" ;;
        synth)
            fx=$(fixture "$b")
            # shellcheck disable=SC2046
            run "synth-$a-$b" "$B" synth --kind "$a" --sector-size "$b" $(inputs "$a" "$fx") \
                --partitions "${c:-1}" --repeat "${SYNTH_REPEAT:-1}" ;;
        ref)
            fx=$(fixture "$a")
            run "ref-porep-$a" "$REF" c2-bench --c1 "$fx/c1.json" --param-dir "$PARAMS" --requests "$b" \
                --miner-id "$(meta "$fx" miner_id)" --sector-id "$(meta "$fx" sector_id)" \
                --rev "$REV" --json "$OUT/ref-porep-$a.json" ;;
        refs)
            fx=$(fixture "$a") name="refs-porep-$a-x$c"
            echo "== $name: $c processes of $REF c2-bench, $b requests each"
            begin=$(date +%s.%N)
            for p in $(seq 1 "$c"); do
                ( timeout "${STEP_TIMEOUT:-900}" /usr/bin/time -f "max RSS %M KiB, wall %e s" \
                    "$REF" c2-bench --c1 "$fx/c1.json" --param-dir "$PARAMS" --requests "$b" \
                    --miner-id "$(meta "$fx" miner_id)" --sector-id "$(meta "$fx" sector_id)" \
                    --rev "$REV" --json "$OUT/$name-$p.json" > "$OUT/$name-$p.log" 2>&1
                  echo $? > "$OUT/$name-$p.exit" ) &
                pids="${pids:-} $!"
            done
            # Only these: a bare `wait` would also wait for the GPU sampler.
            # shellcheck disable=SC2086
            wait $pids; pids=""
            end=$(date +%s.%N)
            # c2-bench exits 0 only when every proof passed verify_seal. A
            # process's steady rate is over its requests after the first
            # (the first loads the parameters); they run side by side, so
            # the rates add up. The wall figure counts every proof of the
            # processes that succeeded over the whole step, loading included.
            { echo "$c processes x $b requests, $(awk -v a="$begin" -v b="$end" 'BEGIN {printf "%.1f", b - a}') s wall"
              ok=0 rate=0
              for p in $(seq 1 "$c"); do
                  code=$(cat "$OUT/$name-$p.exit")
                  r=$(grep -m1 '"proofs_per_hour"' "$OUT/$name-$p.json" 2>/dev/null | sed -E 's/.*: *([0-9.]+|null).*/\1/')
                  echo "process $p: exit $code, steady proofs/h ${r:-none}; $(grep -m1 '^max RSS' "$OUT/$name-$p.log"); last: $(grep -v '^max RSS' "$OUT/$name-$p.log" | tail -n 1)"
                  if [ "$code" = 0 ]; then
                      ok=$((ok + 1))
                      [ -n "$r" ] && [ "$r" != null ] && rate=$(awk -v x="$rate" -v y="$r" 'BEGIN {print x + y}')
                  fi
              done
              echo "$ok of $c processes ended with every proof verified"
              echo "verified proofs per hour: $(awk -v x="$rate" 'BEGIN {printf "%.0f", x}') (sum of the steady rates of those)," \
                   "$(awk -v n=$((ok * b)) -v a="$begin" -v b="$end" 'BEGIN {printf "%.0f", n * 3600 / (b - a)}') over the wall time"
            } | tee "$OUT/$name.txt" ;;
        urgent)
            fx=$(fixture "$a") name="urgent-$a"
            echo "== $name: $b PoRep C2 jobs, $c WinningPoSt proofs idle and under them"
            serve_daemon "$name" 9830 --urgent-priority 3
            "${C[@]}" preload "porep-$a" && "${C[@]}" preload "winning-post-$a" \
                || { echo "   preload failed"; tail -n 5 "$OUT/$name-daemon.log"; }
            # winning TAG: one WinningPoSt at HIGH, timed from submission to proof.
            winning() {
                local t0 t1
                t0=$(date +%s.%N)
                # shellcheck disable=SC2046
                "${C[@]}" --json prove --kind winning-post --sector-size "$a" --priority high \
                    $(inputs winning-post "$fx") --out "/tmp/$name-$1.proof" > "$OUT/$name-$1.json" 2>&1
                local code=$?
                t1=$(date +%s.%N)
                echo "$1: exit $code, $(awk -v x="$t0" -v y="$t1" 'BEGIN {printf "%.3f", y - x}') s," \
                     "verified: $(grep -c '"verified": *true' "$OUT/$name-$1.json")"
            }
            { for w in $(seq 1 "$c"); do winning "idle-$w"; done
              jobs_=()
              for p in $(seq 1 "$b"); do
                  # shellcheck disable=SC2046
                  jobs_+=("$("${C[@]}" submit --kind porep --sector-size "$a" $(inputs porep "$fx") 2>>"$OUT/$name-submit.log")")
              done
              echo "PoRep jobs: ${jobs_[*]}"
              sleep "${URGENT_DELAY:-120}"
              "${C[@]}" status > "$OUT/$name-status-busy.txt" 2>&1
              for w in $(seq 1 "$c"); do winning "busy-$w"; sleep 5; done
              for j in "${jobs_[@]}"; do
                  "${C[@]}" --json await "$j" > "$OUT/$name-await-$j.json" 2>&1
                  echo "PoRep $j: exit $?, verified: $(grep -c '"verified": *true' "$OUT/$name-await-$j.json")"
              done
            } 2>&1 | tee "$OUT/$name.txt"
            stop_daemon "$name" ;;
        first)
            fx=$(fixture "$a") name="first-$a"
            echo "== $name: the PoRep key preloaded, then $b proofs one at a time"
            serve_daemon "$name" 9832
            { t0=$(date +%s.%N)
              "${C[@]}" preload "porep-$a" || { echo "preload failed"; tail -n 5 "$OUT/$name-daemon.log"; }
              echo "preload (parameters and shape): $(awk -v x="$t0" -v y="$(date +%s.%N)" 'BEGIN {printf "%.1f", y - x}') s"
              for r in $(seq 1 "$b"); do
                  t0=$(date +%s.%N)
                  # shellcheck disable=SC2046
                  "${C[@]}" --json prove --kind porep --sector-size "$a" $(inputs porep "$fx") \
                      --out "/tmp/$name-$r.proof" > "$OUT/$name-$r.json" 2>&1
                  code=$?
                  echo "proof $r: exit $code, $(awk -v x="$t0" -v y="$(date +%s.%N)" 'BEGIN {printf "%.2f", y - x}') s" \
                       "from submission, verified: $(grep -c '"verified": *true' "$OUT/$name-$r.json")"
              done
            } 2>&1 | tee "$OUT/$name.txt"
            stop_daemon "$name" ;;
        cc) run "cc-$a" "${FIL_FIXTURES:-gpu-ref/fil-fixtures}" cc --sector-size "$a" --seed 1 \
                --out "$FIXTURES/$a" --work /tmp/fil-fixtures-work ;;
        *) echo "unknown step $step" ;;
    esac
done
ls -la "$PARAMS" > "$OUT/params.txt"
sort -t, -k3 -n "$OUT/gpu-samples.csv" 2>/dev/null | tail -n 1 | sed 's/^/peak sample: /'
