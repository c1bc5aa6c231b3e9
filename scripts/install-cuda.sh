#!/usr/bin/env bash
# Installs nvcc and the CUDA runtime from PyPI wheels into .cuda/ (git-ignored),
# pinned to versions that work with CUDA 13.0 drivers. Idempotent.
# Afterwards:  source scripts/cuda-env.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DIR="$PWD/.cuda"
STAMP="$DIR/.installed-13.0"

if [ ! -f "$STAMP" ]; then
    PY=$(command -v python3 || command -v python)
    "$PY" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --target "$DIR" \
        nvidia-cuda-nvcc==13.0.88 \
        nvidia-nvvm==13.0.88 \
        nvidia-cuda-runtime==13.0.96 \
        nvidia-cuda-crt==13.0.88 \
        nvidia-cuda-cccl==13.0.85
    CU="$DIR/nvidia/cu13"
    [ -e "$CU/lib64" ] || ln -s lib "$CU/lib64"
    touch "$STAMP"
fi
echo "CUDA installed in $DIR/nvidia/cu13; to use it:"
echo "  source scripts/cuda-env.sh"
