#!/usr/bin/env bash
# The engine benchmarks of BENCHMARKS.md, run ON the GPU machine from the repo
# root with the bundle that scripts/build-cuda.sh built (gpu-bundle/cuzk).
#   scripts/gpu-bench.sh [sections...]     sections: synth cpu-m m trace l-cached l-full l-nice0 l-gadgets x2 setup load p27
# `setup` (issue 14): `cuzk setup` of the L file on the device and on the
# CPU's 16 cores (same seed), the two files compared byte for byte; the
# device's file is kept as PARAMS_L for `load`. Then XL (2^24) on the device.
# `load` (issue 12): writes the L parameter file (PARAMS_L, default
# /tmp/L.params) with `cuzk setup` unless it is there, loads it twice with
# `cuzk load-params --srs` (first: full checks, the sidecar written; later:
# the digest), then with supraseal-c2's own loader (gpu-ref/fil-c2-ref
# load-params, when carried), then an L bench from the file, every proof
# verified (the default).
# `p27` (issue 14): one request of 10 `sha-chain` partitions of about 130 M
# constraints (P27_BLOCKS, default 4870 blocks: a 2^27 domain, the size of a
# 32 GiB PoRep partition), every proof verified. No file: the parameters
# (about 47 GB) are generated in-process on the device, and the bench then
# proves from the same compiled shape. Host memory used is sampled every
# 2 s into p27-host-mem.txt, the device's into gpu-samples.csv.
# P27_WORKERS, P27_QUEUE, P27_GPU_WORKERS (default 1 each): partition
# workers, queue depth, GPU workers.
# Logs and JSON go to $OUT (or gpu-results/). Each `cuzk` run generates its
# own parameters in-process (reading multi-GB .params files with every point
# checked is slower than generating them on 16 cores).
set -uo pipefail
cd "$(dirname "$0")/.."
B=${CUZK:-gpu-bundle/cuzk}
OUT=${OUT:-gpu-results}
mkdir -p "$OUT"
SECTIONS=${*:-synth cpu-m m l-cached l-full}

{ date -u; nproc; free -g | head -2; nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv; } > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
nvidia-smi --query-gpu=timestamp,index,memory.used,utilization.gpu --format=csv,noheader -lms 500 > "$OUT/gpu-samples.csv" 2>/dev/null &
SAMPLER=$!

run() {
    local name=$1; shift
    echo "== $name: cuzk $*"
    /usr/bin/time -f "max RSS %M KiB, wall %e s" "$B" "$@" > "$OUT/$name.log" 2>&1
    echo "   exit $?"
    grep -v '^\r' "$OUT/$name.log" | tail -n 14
}

for s in $SECTIONS; do case $s in
    synth)    run synth-L synth --workload sha-chain --size 300 --partitions 10 --repeat 3 ;;
    cpu-m)    run cpu-M bench --backend cpu --workload sha-chain --size 38 --partitions 10 --requests 1 \
                  --synthesis full --partition-workers 16 --gpu-workers-per-device 1 --json "$OUT/cpu-M.json" ;;
    m)        run cached-M sweep --backend cuda --workload sha-chain --size 38 --partitions 10 --requests 3 \
                  --cached-synthesis --partition-workers-list 1 --gpu-workers-list 1,2 --json "$OUT/cached-M.json" ;;
    trace)    for w in 1 2; do CUZK_TRACE_PREAMBLE=1 run trace-L-$w bench --backend cuda --workload sha-chain \
                  --size 300 --partitions 10 --requests 2 --cached-synthesis --partition-workers 1 \
                  --gpu-workers-per-device $w; grep 'cuzk::native' "$OUT/trace-L-$w.log" \
                  | sed -E 's/.* step="?([a-z_0-9]+)"? ms=([0-9.]+).*/\1 \2/' | sort -k1,1 \
                  | awk '{s[$1]+=$2; n[$1]++} END {for (k in s) printf "   %-10s mean %8.2f ms over %d\n", k, s[k]/n[k], n[k]}'; done ;;
    l-cached) run cached-L sweep --backend cuda --workload sha-chain --size 300 --partitions 10 --requests 3 \
                  --cached-synthesis --partition-workers-list 1 --gpu-workers-list 1,2,4 --json "$OUT/cached-L.json" ;;
    l-full)   run full-L sweep --backend cuda --workload sha-chain --size 300 --partitions 10 --requests 8 \
                  --partition-workers-list 2,4,8 --gpu-workers-list 2 --json "$OUT/full-L.json" \
                  --timeline "$OUT/timeline-L.svg" ;;
    l-nice0)  run full-L-nice0 sweep --backend cuda --workload sha-chain --size 300 --partitions 10 --requests 8 \
                  --synthesis-nice 0 --partition-workers-list 2,4,8 --gpu-workers-list 2 --json "$OUT/full-L-nice0.json" ;;
    l-gadgets) run full-L-gadgets sweep --backend cuda --workload sha-chain --size 300 --partitions 10 \
                  --requests 8 --synthesis compiled-gadgets --partition-workers-list 16 --gpu-workers-list 2 \
                  --json "$OUT/full-L-gadgets.json" ;;
    setup)    L=${PARAMS_L:-/tmp/L.params}
              run setup-L-cuda setup --backend cuda --workload sha-chain --size 300 --params "$L" --seed 1
              run setup-L-cpu setup --backend cpu --workload sha-chain --size 300 --params /tmp/L-cpu.params --seed 1
              if cmp "$L" /tmp/L-cpu.params; then echo "   L: device and CPU files identical ($(stat -c %s "$L") bytes)"
              else echo "   L: device and CPU files DIFFER"; fi | tee "$OUT/setup-L-cmp.txt"
              rm -f /tmp/L-cpu.params
              run setup-XL-cuda setup --backend cuda --workload sha-chain --size 600 --params /tmp/XL.params
              rm -f /tmp/XL.params ;;
    load)     L=${PARAMS_L:-/tmp/L.params}
              [ -s "$L" ] || run setup-L setup --workload sha-chain --size 300 --params "$L"
              rm -f "$L.cuzk-checked"
              run load-L-first load-params --params "$L" --srs
              run load-L-later load-params --params "$L" --srs
              if [ -x gpu-ref/fil-c2-ref ]; then
                  echo "== load-L-supraseal: fil-c2-ref load-params"
                  /usr/bin/time -f "max RSS %M KiB, wall %e s" gpu-ref/fil-c2-ref load-params --params "$L" \
                      --json "$OUT/load-L-supraseal.json" > "$OUT/load-L-supraseal.log" 2>&1
                  echo "   exit $?"; tail -n 3 "$OUT/load-L-supraseal.log"
              fi
              run bench-L-file bench --backend cuda --params "$L" --workload sha-chain --size 300 \
                  --partitions 10 --requests 6 --partition-workers 8 --gpu-workers-per-device 2 \
                  --json "$OUT/bench-L-file.json" ;;
    x2)       run x2-cached-L sweep --backend cuda --workload sha-chain --size 300 --partitions 10 --requests 3 \
                  --cached-synthesis --device-counts 1,2 --partition-workers-list 1 --gpu-workers-list 2 \
                  --json "$OUT/x2-cached-L.json" ;;
    p27)      (while sleep 2; do echo "$(date -u +%T) $(free -m | awk '/Mem:/{print $3}') MiB used"; done) \
                  > "$OUT/p27-host-mem.txt" &
              MEM=$!
              run p27 bench --backend cuda --workload sha-chain --size "${P27_BLOCKS:-4870}" --partitions 10 \
                  --requests 1 --partition-workers "${P27_WORKERS:-1}" --queue-depth "${P27_QUEUE:-1}" \
                  --gpu-workers-per-device "${P27_GPU_WORKERS:-1}" \
                  --json "$OUT/p27.json"
              kill $MEM 2>/dev/null
              sort -k2 -n "$OUT/p27-host-mem.txt" | tail -n 1 | sed 's/^/   peak host memory sample: /' ;;
    *) echo "unknown section $s" ;;
esac; done
kill $SAMPLER 2>/dev/null
sort -t, -k3 -n "$OUT/gpu-samples.csv" 2>/dev/null | tail -n 1 | sed 's/^/peak sample: /'
