#!/usr/bin/env bash
# Builds cuzk's CUDA backend (native/cuda/) and the GPU bundle.
#
#   scripts/build-cuda.sh [--check | --sources] [--arch LIST] [--jobs N]
#
#   default   gpu-bundle/ (git-ignored), sm_90 SASS only unless --arch says
#             else, in two parts that each travel to a GPU machine on their
#             own (each must stay under the 64 MiB a run may carry):
#               gpu-bundle/tests/    run with scripts/gpu-run.sh (it travels
#                                    packed, as gpu-bundle/tests.tgz:
#                                    unpacked it is over the 64 MiB):
#                 cuzk-cuda-harness    the kernels' tests + benchmarks (C++)
#                 test-<crate>-<name>  the test executables of supraseal-c2
#                                      and cuzk-pipeline, and cuzk-engine's
#                                      device_faults, built with
#                                      --features supraseal-c2/cuda
#               gpu-bundle/cuzk      the CLI, built with the same feature
#                                    (scripts/gpu-bench.sh, gpu-filecoin.sh,
#                                    gpu-daemon.sh)
#             and target/cuda/lib/libcuzk_cuda.a (the kernels, C++ API).
#   --check   compile and link only, into target/cuda-check/ (gpu-bundle/ is
#             left alone): for CI, which has no GPU. Builds every target
#             (80,89,90 + compute_90 PTX): the harness, and supraseal-c2's
#             test executables with its `cuda` feature.
#   --sources only find (or let cargo download) the sppark and blst sources
#             the native build compiles, and check them; no nvcc needed. CI
#             runs it with an empty CARGO_HOME, as on a fresh machine.
#   --arch    comma-separated SASS targets, e.g. --arch 80,89,90. Default:
#             90 for the bundle; with --check, 80,89,90 plus compute_90 PTX
#             (so newer chips JIT-compile it).
#   --jobs    parallel compiles (default: the number of cores).
#
# Environment: SPPARK_DIR (.../sppark-0.1.16/sppark) and BLST_DIR
# (.../blst-0.3.17/blst) override the cargo-registry lookup for the harness;
# CUZK_BLST_ADX=1 builds blst and the sppark host code for ADX CPUs instead
# of blst's portable (run-time detected) code (the cargo build follows the
# blst crate's own choice). Binaries link the CUDA runtime and libstdc++
# statically: on the GPU machine they need only glibc (and libgcc_s) and the
# NVIDIA driver. The bundle must stay under 64 MiB (it travels to the GPU
# machine); the script fails if it does not.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

CHECK=0
SOURCES=0
ARCHS=""
JOBS=$(nproc 2>/dev/null || echo 2)
while [ $# -gt 0 ]; do
    case "$1" in
        --check) CHECK=1 ;;
        --arch) ARCHS="$2"; shift ;;
        --arch=*) ARCHS="${1#--arch=}" ;;
        --jobs) JOBS="$2"; shift ;;
        --jobs=*) JOBS="${1#--jobs=}" ;;
        --sources) SOURCES=1 ;;
        -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
        *) echo "build-cuda.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done

if [ -z "$ARCHS" ]; then
    if [ $CHECK = 1 ]; then ARCHS="80,89,90"; else ARCHS="90"; fi
fi
START=$(date +%s)

# ---- toolchain
if [ $SOURCES = 0 ]; then
    scripts/install-cuda.sh >/dev/null
    # shellcheck source=cuda-env.sh
    source scripts/cuda-env.sh
    command -v nvcc >/dev/null || { echo "build-cuda.sh: nvcc not found" >&2; exit 1; }
fi

# ---- sources of sppark and blst (crates in cargo's registry)
CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}
find_crate() {  # name version -> crate directory, or nothing
    ls -d "$CARGO_HOME"/registry/src/*/"$1-$2" 2>/dev/null | head -n1
}
fetch_crate() {  # name version: let cargo download it into its registry
    local dir="$ROOT/target/cuda/fetch-$1"
    mkdir -p "$dir/src"
    # An empty [workspace] table keeps cargo from taking the helper package
    # for a member of cuzk's workspace (it lives under target/).
    printf '[package]\nname = "fetch-%s"\nversion = "0.0.0"\nedition = "2021"\n[workspace]\n[dependencies]\n%s = "=%s"\n' \
        "$1" "$1" "$2" >"$dir/Cargo.toml"
    : >"$dir/src/lib.rs"
    echo "build-cuda.sh: fetching crate $1 $2 with cargo" >&2
    cargo fetch --quiet --manifest-path "$dir/Cargo.toml" >&2
}
crate_dir() {  # name version subdir
    local d
    d=$(find_crate "$1" "$2")
    if [ -z "$d" ]; then
        fetch_crate "$1" "$2"
        d=$(find_crate "$1" "$2")
    fi
    [ -n "$d" ] && [ -d "$d/$3" ] || { echo "build-cuda.sh: crate $1 $2 not found" >&2; exit 1; }
    echo "$d/$3"
}
SPPARK_DIR=${SPPARK_DIR:-$(crate_dir sppark 0.1.16 sppark)}
BLST_DIR=${BLST_DIR:-$(crate_dir blst 0.3.17 blst)}
if [ $SOURCES = 1 ]; then
    for f in "$SPPARK_DIR/ec/jacobian_t.hpp" "$SPPARK_DIR/ff/bls12-381.hpp" \
             "$SPPARK_DIR/msm/pippenger.cuh" "$BLST_DIR/src/server.c" "$BLST_DIR/bindings/blst.h"; do
        [ -f "$f" ] || { echo "build-cuda.sh: $f missing" >&2; exit 1; }
    done
    echo "build-cuda.sh: sources found (CARGO_HOME $CARGO_HOME): $SPPARK_DIR, $BLST_DIR"
    exit 0
fi

# ---- flags
if [ "${CUZK_BLST_ADX:-0}" = 1 ]; then BLST_DEF=-D__ADX__; else BLST_DEF=-D__BLST_PORTABLE__; fi
GENCODE=()
IFS=',' read -r -a arch_list <<<"$ARCHS"
for a in "${arch_list[@]}"; do
    GENCODE+=(-gencode "arch=compute_$a,code=sm_$a")
done
if [ "$ARCHS" = "80,89,90" ]; then
    GENCODE+=(-gencode "arch=compute_90,code=compute_90")
fi
INCLUDES=(-I"$ROOT/native/cuda" -I"$ROOT/native/include" -I"$SPPARK_DIR" -I"$BLST_DIR/src" -I"$BLST_DIR/bindings")
NVFLAGS=(-O3 -std=c++17 -DNDEBUG -DFEATURE_BLS12_381 "$BLST_DEF" -Xcompiler -fPIC
         -Xcompiler -Wno-unused-function "${INCLUDES[@]}" "${GENCODE[@]}")
CXXFLAGS=(-O2 -std=c++17 -fPIC -Wall -Wextra -I"$ROOT/native/include" -I"$BLST_DIR/bindings")

if [ $CHECK = 1 ]; then
    BUILD="$ROOT/target/cuda-check"
    BUNDLE="$BUILD/bundle"
else
    BUILD="$ROOT/target/cuda"
    BUNDLE="$ROOT/gpu-bundle"
fi
TESTS="$BUNDLE/tests"
OBJ="$BUILD/obj"
mkdir -p "$OBJ" "$BUILD/lib" "$BUNDLE" "$TESTS"
# A flags stamp: objects built with other flags are rebuilt.
STAMP="$OBJ/flags"
FLAGS_NOW="${NVFLAGS[*]} | ${CXXFLAGS[*]} | $(nvcc --version | tail -n1)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$FLAGS_NOW" ]; then
    rm -f "$OBJ"/*.o
    echo "$FLAGS_NOW" >"$STAMP"
fi

# ---- a small job pool; each job logs to $OBJ/<name>.log
PIDS=()
NAMES=()
FAILED=0
wait_one() {
    local pid=${PIDS[0]} name=${NAMES[0]}
    PIDS=("${PIDS[@]:1}")
    NAMES=("${NAMES[@]:1}")
    if ! wait "$pid"; then
        echo "build-cuda.sh: FAILED: $name (log below)" >&2
        cat "$OBJ/$name.log" >&2
        FAILED=1
    fi
}
job() {  # name command...
    local name=$1
    shift
    while [ ${#PIDS[@]} -ge "$JOBS" ]; do wait_one; done
    ("$@") >"$OBJ/$name.log" 2>&1 &
    PIDS+=($!)
    NAMES+=("$name")
}
wait_all() { while [ ${#PIDS[@]} -gt 0 ]; do wait_one; done; }
# stale OUT SRC...: whether OUT is missing or older than any SRC
stale() {
    local out=$1
    shift
    [ -f "$out" ] || return 0
    local s
    for s in "$@"; do [ "$s" -nt "$out" ] && return 0; done
    return 1
}

HEADERS=("$ROOT"/native/cuda/*.cuh "$ROOT"/native/include/cuzk/cuda/*.hpp "$ROOT"/native/include/cuzk/check.hpp)
# Every native/cuda/*.cu, as supraseal-c2's build.rs compiles them; the
# heaviest first: msm.cu takes most of the time.
UNITS=(msm msm_table)
for src in "$ROOT"/native/cuda/*.cu; do
    unit=$(basename "$src" .cu)
    case " ${UNITS[*]} " in *" $unit "*) ;; *) UNITS+=("$unit") ;; esac
done
for unit in "${UNITS[@]}"; do
    src="$ROOT/native/cuda/$unit.cu"
    if stale "$OBJ/$unit.o" "$src" "${HEADERS[@]}"; then
        job "$unit" nvcc "${NVFLAGS[@]}" -c "$src" -o "$OBJ/$unit.o"
    fi
done
if stale "$OBJ/harness.o" "$ROOT/native/cuda/harness.cpp" "${HEADERS[@]}"; then
    job harness g++ "${CXXFLAGS[@]}" -c "$ROOT/native/cuda/harness.cpp" -o "$OBJ/harness.o"
fi
if stale "$OBJ/blst_server.o" "$BLST_DIR/src/server.c"; then
    job blst_server gcc -O2 -fPIC "$BLST_DEF" -c "$BLST_DIR/src/server.c" -o "$OBJ/blst_server.o"
fi
if stale "$OBJ/blst_assembly.o" "$BLST_DIR/build/assembly.S"; then
    job blst_assembly gcc -fPIC "$BLST_DEF" -c "$BLST_DIR/build/assembly.S" -o "$OBJ/blst_assembly.o"
fi
wait_all
[ $FAILED = 0 ] || exit 1

LIB="$BUILD/lib/libcuzk_cuda.a"
rm -f "$LIB"
OBJS=()
for unit in "${UNITS[@]}"; do OBJS+=("$OBJ/$unit.o"); done
ar rcs "$LIB" "${OBJS[@]}"

LDLIBS=(-L"$CUDA_HOME/lib" -lcudart_static -ldl -lrt -lpthread -static-libstdc++ -static-libgcc)
g++ -o "$TESTS/cuzk-cuda-harness" "$OBJ/harness.o" "$LIB" "$OBJ/blst_server.o" \
    "$OBJ/blst_assembly.o" "${LDLIBS[@]}"

# ---- the Rust side: supraseal-c2's `cuda` feature (build.rs runs nvcc)
# CUZK_CUDA_ARCHS=80,89,90 means build.rs's default (+ compute_90 PTX).
if [ "$ARCHS" = "80,89,90" ]; then export CUZK_CUDA_ARCHS=; else export CUZK_CUDA_ARCHS="$ARCHS"; fi
# cargo --message-format=json lines -> the executables, one per line.
executables() {
    python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    exe = m.get("executable")
    if m.get("reason") == "compiler-artifact" and exe:
        print(m["target"]["name"], str(m["profile"]["test"]).lower(), exe)
'
}
CARGO_TESTS=(cargo test --release --no-run --message-format=json --features supraseal-c2/cuda)
if [ $CHECK = 1 ]; then
    "${CARGO_TESTS[@]}" -p supraseal-c2 >"$BUILD/cargo.json" || {
        echo "build-cuda.sh: cargo build with --features supraseal-c2/cuda failed" >&2; exit 1; }
    echo "build-cuda.sh: linked $(executables <"$BUILD/cargo.json" | wc -l) supraseal-c2 test executables with the cuda feature"
else
    rm -f "$TESTS"/test-* "$BUNDLE"/test-* "$BUNDLE"/cuzk-cuda-harness "$BUNDLE"/cuzk
    for crate in supraseal-c2 cuzk-pipeline; do
        "${CARGO_TESTS[@]}" -p "$crate" >"$BUILD/cargo-$crate.json" || {
            echo "build-cuda.sh: cargo test --no-run -p $crate failed" >&2; exit 1; }
        executables <"$BUILD/cargo-$crate.json" | while read -r name test exe; do
            if [ "$test" = true ]; then cp "$exe" "$TESTS/test-$crate-$name"; fi
        done
    done
    # Parameter generation on the device (issue 14): byte-identical setups.
    "${CARGO_TESTS[@]}" -p bellperson-lite --test setup_on >"$BUILD/cargo-bellperson-lite.json" || {
        echo "build-cuda.sh: cargo test --no-run -p bellperson-lite failed" >&2; exit 1; }
    executables <"$BUILD/cargo-bellperson-lite.json" | while read -r name test exe; do
        if [ "$test" = true ]; then cp "$exe" "$TESTS/test-bellperson-lite-$name"; fi
    done
    # The engine's fault path on the device (its CPU tests run there too).
    "${CARGO_TESTS[@]}" -p cuzk-engine --test device_faults >"$BUILD/cargo-cuzk-engine.json" || {
        echo "build-cuda.sh: cargo test --no-run -p cuzk-engine failed" >&2; exit 1; }
    executables <"$BUILD/cargo-cuzk-engine.json" | while read -r name test exe; do
        if [ "$test" = true ]; then cp "$exe" "$TESTS/test-cuzk-engine-$name"; fi
    done
    cargo build --release --bin cuzk --features supraseal-c2/cuda --message-format=json \
        >"$BUILD/cargo-cuzk.json" || { echo "build-cuda.sh: cargo build --bin cuzk failed" >&2; exit 1; }
    executables <"$BUILD/cargo-cuzk.json" | while read -r name test exe; do
        if [ "$name" = cuzk ]; then cp "$exe" "$BUNDLE/cuzk"; fi
    done
    # Symbols are a fifth of each executable: drop them (panics still name
    # the file and line) so that the bundle stays under the 64 MiB it may
    # carry.
    if command -v strip >/dev/null; then
        strip "$TESTS"/test-* "$BUNDLE"/cuzk "$TESTS"/cuzk-cuda-harness
    fi
    # Unpacked, the tests are over what a run may carry; gzip (which every
    # machine has) brings them to about a third. gpu-run.sh unpacks them.
    tar czf "$BUNDLE/tests.tgz" -C "$BUNDLE" "$(basename "$TESTS")"
fi

END=$(date +%s)
echo "build-cuda.sh: built $LIB and $BUNDLE/" \
     "(archs ${ARCHS}$([ "$ARCHS" = "80,89,90" ] && echo " + compute_90 PTX"), $((END - START)) s," \
     "$JOBS jobs)"
# Each part travels on its own: each must stay under 64 MiB (with the
# repository's tracked files, a few MiB, beside it).
FAILED=0
for part in "$BUNDLE/tests.tgz" "$BUNDLE/cuzk"; do
    [ -e "$part" ] || continue
    if [ -d "$part" ]; then
        ls -la "$part"/ | awk 'NR > 1 && $5 > 0 && $1 !~ /^d/ {print "  " $5 " bytes  " $9}'
    fi
    SIZE=$(du -sb "$part" | cut -f1)
    echo "build-cuda.sh: $part is $((SIZE / 1048576)) MiB"
    if [ $CHECK = 0 ] && [ "$SIZE" -ge $((60 * 1048576)) ]; then
        echo "build-cuda.sh: $part is over 60 MiB: it cannot travel to the GPU machine" >&2
        FAILED=1
    fi
done
exit $FAILED
