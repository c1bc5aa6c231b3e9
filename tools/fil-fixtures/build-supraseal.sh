#!/usr/bin/env bash
# Builds fil-fixtures with its `supraseal` feature (filecoin-proofs 19.1's own
# GPU prover: bellperson 0.27's `cuda-supraseal`, the registry crate
# supraseal-c2) on a machine without a GPU, into a binary for the GPU machine:
#
#   tools/fil-fixtures/build-supraseal.sh [--jobs N]
#
#   output    gpu-ref/fil-c2-ref (at the repo root, git-ignored, stripped):
#             run `gpu-ref/fil-c2-ref c2-bench ...` there (README.md).
#   --jobs    cargo's parallel jobs (default: the number of cores).
#
# What it takes care of:
#   - nvcc from the repo's pinned wheels (scripts/install-cuda.sh).
#   - sm_90 only: sppark's build (supraseal-c2's kernels) asks for sm_80 (+
#     compute_80 PTX), sm_75, compute_100 PTX and sm_120, and ec-gpu-gen
#     (bellperson's and neptune's `cuda` kernels, which the C2 path does not
#     use) for sm_86/80/75. An nvcc wrapper replaces every architecture with
#     `-gencode arch=compute_90,code=sm_90` (H200, H100), so the kernels run
#     as native SASS, not JIT-compiled PTX.
#   - libcuda: filecoin-proofs' `cuda-supraseal` also turns on
#     filecoin-hashers' `cuda` (hence neptune's and bellperson's `cuda`,
#     rust-gpu-tools, cuda-driver-sys), which links the driver library
#     (-lcuda); storage-proofs-core's `cuda-supraseal`, which the
#     SuprasealParameters type needs, turns it on too, so no choice of
#     features avoids it. The pip wheels have no libcuda stub: one is made
#     here from cuda-driver-sys' declarations (soname libcuda.so.1, every
#     function returns CUDA_ERROR_NO_DEVICE), for the link only. At run time
#     the GPU machine's driver library is used.
#   - the CUDA runtime and libstdc++ are linked statically (cc's
#     CXXSTDLIB_STATIC): the binary needs glibc, libgcc_s and the driver's
#     libcuda.so.1 only.
#
# The build has its own target directory, tools/fil-fixtures/target/supraseal
# (the CPU build's target/release is left alone). First build on 2 cores:
# about 25 minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
TOOL="$ROOT/tools/fil-fixtures"
JOBS=$(nproc 2>/dev/null || echo 2)
while [ $# -gt 0 ]; do
    case "$1" in
        --jobs) JOBS="$2"; shift ;;
        --jobs=*) JOBS="${1#--jobs=}" ;;
        -h|--help) sed -n '2,37p' "$0"; exit 0 ;;
        *) echo "build-supraseal.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
START=$(date +%s)

# ---- nvcc
scripts/install-cuda.sh >/dev/null
# shellcheck source=../../scripts/cuda-env.sh
source scripts/cuda-env.sh
REAL_NVCC="$CUDA_HOME/bin/nvcc"
[ -x "$REAL_NVCC" ] || { echo "build-supraseal.sh: nvcc not found at $REAL_NVCC" >&2; exit 1; }

export CARGO_TARGET_DIR="$TOOL/target/supraseal"
AUX="$CARGO_TARGET_DIR/aux"
mkdir -p "$AUX/bin" "$AUX/cuda-stub"

# ---- the nvcc wrapper: every architecture becomes sm_90
cat >"$AUX/bin/nvcc" <<EOF
#!/usr/bin/env bash
# Made by build-supraseal.sh: nvcc for sm_90 only.
real="$REAL_NVCC"
EOF
cat >>"$AUX/bin/nvcc" <<'EOF'
# Feature probes (sppark's `--dryrun -arch=sm_XX`) and version queries go
# through unchanged.
for a in "$@"; do
    case "$a" in --dryrun|--version|-V) exec "$real" "$@" ;; esac
done
args=()
skip=0
for a in "$@"; do
    if [ $skip = 1 ]; then skip=0; continue; fi
    case "$a" in
        -gencode|--generate-code|-arch|--gpu-architecture|-code|--gpu-code) skip=1 ;;
        -gencode=*|--generate-code=*|-arch=*|--gpu-architecture=*|-code=*|--gpu-code=*) ;;
        *) args+=("$a") ;;
    esac
done
exec "$real" "${args[@]}" -gencode arch=compute_90,code=sm_90
EOF
chmod +x "$AUX/bin/nvcc"
export PATH="$AUX/bin:$PATH"
export NVCC="$AUX/bin/nvcc"
# ec-gpu-gen calls `nvcc` itself; its default arguments name sm_86/80/75.
export EC_GPU_CUDA_NVCC_ARGS="--optimize=6 --threads=0 --fatbin -gencode arch=compute_90,code=sm_90"

# ---- the libcuda stub, from cuda-driver-sys' declarations
CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}
DRIVER_SYS_VERSION=$(awk '/^name = "cuda-driver-sys"/ {getline; gsub(/[^0-9.]/, ""); print}' "$TOOL/Cargo.lock")
( cd "$TOOL" && cargo fetch --locked --quiet )
DRIVER_SYS=$(ls -d "$CARGO_HOME"/registry/src/*/"cuda-driver-sys-$DRIVER_SYS_VERSION" 2>/dev/null | head -n1)
[ -n "$DRIVER_SYS" ] || { echo "build-supraseal.sh: cuda-driver-sys $DRIVER_SYS_VERSION not in the cargo registry" >&2; exit 1; }
{
    echo "/* Made by build-supraseal.sh: a link-time stand-in for the driver's libcuda.so.1. */"
    grep -ohE 'pub fn cu[A-Za-z0-9_]+' "$DRIVER_SYS"/src/*.rs | sed 's/pub fn //' | sort -u |
        sed 's/.*/int &(void) { return 100; \/* CUDA_ERROR_NO_DEVICE *\/ }/'
} >"$AUX/cuda-stub/libcuda-stub.c"
gcc -shared -fPIC -O1 -Wl,-soname,libcuda.so.1 -o "$AUX/cuda-stub/libcuda.so" "$AUX/cuda-stub/libcuda-stub.c"
echo "build-supraseal.sh: libcuda stub with $(grep -c '^int ' "$AUX/cuda-stub/libcuda-stub.c") functions (cuda-driver-sys $DRIVER_SYS_VERSION)"

# ---- link flags: the stub, the CUDA runtime's and libstdc++'s static archives
LIBSTDCXX_DIR=$(dirname "$(c++ -print-file-name=libstdc++.a)")
[ -f "$LIBSTDCXX_DIR/libstdc++.a" ] || { echo "build-supraseal.sh: no libstdc++.a (install libstdc++-dev)" >&2; exit 1; }
export RUSTFLAGS="-L native=$AUX/cuda-stub -L native=$CUDA_HOME/lib -L native=$LIBSTDCXX_DIR"
export CXXSTDLIB_STATIC=1

# ---- build
cd "$TOOL"
cargo build --release --locked --jobs "$JOBS" --features supraseal
BIN="$CARGO_TARGET_DIR/release/fil-fixtures"

OUT="$ROOT/gpu-ref"
mkdir -p "$OUT"
cp "$BIN" "$OUT/fil-c2-ref"
strip "$OUT/fil-c2-ref"

# ---- what it needs at run time
NEEDED=$(readelf -d "$OUT/fil-c2-ref" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
echo "build-supraseal.sh: gpu-ref/fil-c2-ref needs: $NEEDED"
for lib in $NEEDED; do
    case "$lib" in
        libc.so.*|libm.so.*|libdl.so.*|librt.so.*|libpthread.so.*|ld-linux*|libgcc_s.so.*|libcuda.so.1) ;;
        *) echo "build-supraseal.sh: unexpected dynamic dependency $lib" >&2; exit 1 ;;
    esac
done
if ! "$OUT/fil-c2-ref" --version >/dev/null 2>&1 && ! ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1'; then
    echo "build-supraseal.sh: (it does not start here: no libcuda.so.1 on this machine, as expected without a driver)"
fi
END=$(date +%s)
SIZE=$(stat -c %s "$OUT/fil-c2-ref")
echo "build-supraseal.sh: built gpu-ref/fil-c2-ref ($((SIZE / 1048576)) MiB, $SIZE bytes, sm_90, $((END - START)) s)"
