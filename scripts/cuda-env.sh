# Source me: puts the project's nvcc (from scripts/install-cuda.sh) on PATH.
_cuzk_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CUDA_HOME="$_cuzk_root/.cuda/nvidia/cu13"
export CUDA_PATH="$CUDA_HOME"
export PATH="$CUDA_HOME/bin:$PATH"
export NVCC="$CUDA_HOME/bin/nvcc"
unset _cuzk_root
