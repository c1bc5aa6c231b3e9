// The CUDA backend's whole public interface (plain C++; link libcuzk_cuda.a,
// blst and the CUDA runtime). See docs/cuda.md.
#pragma once

#include "cuzk/cuda/device.hpp"
#include "cuzk/cuda/error.hpp"
#include "cuzk/cuda/g2.hpp"
#include "cuzk/cuda/h_poly.hpp"
#include "cuzk/cuda/host_memory.hpp"
#include "cuzk/cuda/msm.hpp"
#include "cuzk/cuda/msm_table.hpp"
#include "cuzk/cuda/ntt.hpp"
#include "cuzk/cuda/points.hpp"
