#!/usr/bin/env bash
# The kernel-region measurements of issue 14 in one device call, run ON the
# GPU machine from the repo root with the bundle of scripts/build-cuda.sh
# (carry gpu-bundle/tests.tgz, and either gpu-bundle/cuzk or the gzipped
# binaries below: both cuzk builds and the tests do not fit one call's 64
# MiB unpacked).
#
#   scripts/gpu-msm.sh [steps...]      steps: tests sweep ba plans l l-ab l-order
#                                      l-early l-ones l-env ncu p27 p27-ones p27-env
#                                      p27-base
#
#   tests    scripts/gpu-run.sh -- --tests-only (the harness's checks, then
#            every test executable, --ignored device runs included)
#   sweep    cuzk-cuda-harness --bench-only --max-log 24: sppark's MSM and
#            the table MSM side by side, with every other kernel benchmark
#   ba       the harness's benchmarks at 2^22 (--max-log 22): among them
#            the G1 and G2 bitmap sums by the share sum and sppark's kernel
#   plans    cuzk-cuda-harness --bench-only --plan-bench --max-log 22, traced:
#            the 2^27 table plans (uniform, mixed in one pass, the latter
#            with 256-thread accumulation) alternating
#   l        one L bench (every proof verified), each kernel region's steps
#            and each H MSM's traced (CUZK_MSM_TRACE=1): medians printed
#   l-ab     L benches alternating two builds, base and new, twice:
#            gpu-base/cuzk-base.gz and gpu-base/cuzk-new.gz (git-ignored)
#   l-order  L benches with the H polynomial beside the sums (CUZK_H_OVERLAP=1,
#            the default) and before them (0), alternating, twice
#   l-early  L benches with a, b, c copied from the preamble's start
#            (CUZK_ABC_EARLY=1, the default) and not (0), alternating, twice
#   l-ones   L benches with the ones summed by the share sum (the default)
#            and by sppark's kernel (CUZK_ONES_KERNEL=sppark), alternating,
#            twice (L_ONES: the CUZK_ONES_KERNEL values, default "share sppark")
#   l-env    L benches, one for each of L_ENV (default "CUZK_MSM_ADD=fused
#            CUZK_MSM_ADD=sppark": variables set for that bench), alternating,
#            twice
#   ncu      Nsight Compute on the table MSM's accumulation at 2^22
#   p27      scripts/gpu-bench.sh p27, traced (P27_GPU_WORKERS etc. pass
#            through; P27_LIMIT seconds, default 330)
#   p27-ones p27 once for each of P27_ONES (default "share sppark"), as
#            CUZK_ONES_KERNEL
#   p27-env  p27 once for each of P27_ENV (default "CUZK_MSM_ADD=fused
#            CUZK_MSM_ADD=sppark"), with that variable set
#   p27-base p27 once with the base build (gpu-base/cuzk-base.gz)
#
# Everything lands in $OUT/r/ and is packed into $OUT/results.tgz after each
# step (a call returns at most 8 files, and a call cut off at its limit keeps
# what was packed); the console gets each step's summary lines.
set -uo pipefail
cd "$(dirname "$0")/.."
[ -d gpu-bundle/tests ] || tar xzf gpu-bundle/tests.tgz -C gpu-bundle
OUT=${OUT:-gpu-results}
R=$OUT/r
mkdir -p "$R"
pack() { tar czf "$OUT/results.tgz" -C "$OUT" r; }
H=gpu-bundle/tests/cuzk-cuda-harness
B=gpu-bundle/cuzk
for v in base new; do
    if [ -f gpu-base/cuzk-$v.gz ]; then gunzip -c gpu-base/cuzk-$v.gz >/tmp/cuzk-$v && chmod +x /tmp/cuzk-$v; fi
done
[ -x "$B" ] || B=/tmp/cuzk-new
L_ARGS=(bench --backend cuda --workload sha-chain --size 300 --partitions 10 --requests 8
        --partition-workers 8 --gpu-workers-per-device 2)

step() {  # name limit command...
    local name=$1 limit=$2
    shift 2
    echo "== $name ($(date -u +%T))"
    timeout "$limit" "$@" >"$R/$name.log" 2>&1
    echo "   rc $?"
}
# The kernel region's and the H MSM's traced steps: medians.
trace_medians() {
    python3 - "$1" <<'EOF'
import re, statistics, sys
region, msm = {}, {}
for line in open(sys.argv[1], errors="replace"):
    if line.startswith("kernel region:"):
        for k, v in re.findall(r"([A-Za-z_0-9 ]+?) ([0-9.]+)", line[len("kernel region:"):]):
            region.setdefault(k.strip(), []).append(float(v))
    elif line.startswith("msm_table"):
        for k, v in re.findall(r"([a-z+-]+) ([0-9.]+)", line.split(":", 1)[1]):
            msm.setdefault(k, []).append(float(v))
for name, d in (("region", region), ("H MSM", msm)):
    if d:
        print("   %s medians: %s" % (name, ", ".join("%s %.2f" % (k, statistics.median(v)) for k, v in d.items())))
EOF
}
bench_l() {  # name binary [env...]: one traced L bench and its summary
    local name=$1 bin=$2
    shift 2
    env "$@" CUZK_MSM_TRACE=1 timeout 300 "$bin" "${L_ARGS[@]}" --json "$R/$name.json" \
        >"$R/$name.log" 2>&1
    echo "== $name: rc $?"
    grep -A9 '^sha-chain' "$R/$name.log" | grep -E 'verified|proofs per hour|lock occupancy|stage medians'
    trace_medians "$R/$name.log"
}

for s in ${*:-tests l}; do case $s in
    tests)   OUT=$R/tests GPU_RUN_TIMEOUT=240 scripts/gpu-run.sh -- --tests-only >"$R/tests.log" 2>&1
             echo "== tests: rc $?"; grep -E '\| (FAILED|TIMEOUT)' "$R/tests.log"
             grep -E '^[0-9]+ checks' "$R/tests.log" ;;
    sweep)   step sweep 300 "$H" --bench-only --max-log 24
             grep -E 'G1 MSM|table' "$R/sweep.log" | grep -v '^   table' | tail -n 30 ;;
    ba)      step ba 200 "$H" --bench-only --max-log 22
             grep -E 'batch add' "$R/ba.log" ;;
    plans)   CUZK_MSM_TRACE=1 step plans 200 "$H" --bench-only --plan-bench --max-log 22
             grep -E 'G1 MSM plan|^msm_table' "$R/plans.log" ;;
    l)       bench_l L "$B" ;;
    l-ab)    for round in 1 2; do for v in base new; do
                 bench_l L-$v-$round /tmp/cuzk-$v
             done; done ;;
    l-order) for round in 1 2; do for o in 1 0; do
                 bench_l L-overlap$o-$round "$B" CUZK_H_OVERLAP=$o
             done; done ;;
    l-early) for round in 1 2; do for e in 1 0; do
                 bench_l L-early$e-$round "$B" CUZK_ABC_EARLY=$e
             done; done ;;
    l-ones)  for round in 1 2; do for k in ${L_ONES:-share sppark}; do
                 bench_l L-ones-$k-$round "$B" CUZK_ONES_KERNEL=$k
             done; done ;;
    l-env)   for round in 1 2; do for e in ${L_ENV:-CUZK_MSM_ADD=fused CUZK_MSM_ADD=sppark}; do
                 bench_l "L-${e//=/-}-$round" "$B" "$e"
             done; done ;;
    ncu)     step ncu 150 ncu --clock-control none -k regex:accumulate_shares -s 20 -c 1 \
                 --section SpeedOfLight --section ComputeWorkloadAnalysis --section Occupancy \
                 --section WarpStateStats --section MemoryWorkloadAnalysis --section LaunchStats \
                 --print-details all "$H" --bench-only --max-log 22
             grep -E 'accumulate_|Duration|Throughput|pipeline|Registers Per|Achieved Occupancy|Stall|stall' \
                 "$R/ncu.log" | head -n 30 ;;
    p27)     CUZK=$B CUZK_MSM_TRACE=1 OUT=$R step p27-console "${P27_LIMIT:-330}" scripts/gpu-bench.sh p27
             grep -A9 '^sha-chain' "$R/p27.log"; trace_medians "$R/p27.log" ;;
    p27-ones) for k in ${P27_ONES:-share sppark}; do
                 mkdir -p "$R/p27-$k"
                 CUZK=$B CUZK_MSM_TRACE=1 CUZK_ONES_KERNEL=$k OUT=$R/p27-$k \
                     step p27-$k-console "${P27_LIMIT:-330}" scripts/gpu-bench.sh p27
                 echo "== p27, ones by $k"
                 grep -A9 '^sha-chain' "$R/p27-$k/p27.log"; trace_medians "$R/p27-$k/p27.log"
                 pack
             done ;;
    p27-env|p27-base)
             if [ "$s" = p27-base ]; then runs=base; else runs=${P27_ENV:-CUZK_MSM_ADD=fused CUZK_MSM_ADD=sppark}; fi
             for e in $runs; do
                 name=p27-${e//=/-}; bin=$B
                 if [ "$e" = base ]; then bin=/tmp/cuzk-base; fi
                 mkdir -p "$R/$name"
                 ( if [ "$e" != base ]; then export "$e"; fi
                   CUZK=$bin CUZK_MSM_TRACE=1 OUT=$R/$name \
                       step $name-console "${P27_LIMIT:-330}" scripts/gpu-bench.sh p27 )
                 echo "== $name"
                 grep -A10 '^sha-chain' "$R/$name/p27.log"; trace_medians "$R/$name/p27.log"
                 pack
             done ;;
    *) echo "unknown step $s" ;;
esac; pack; done
