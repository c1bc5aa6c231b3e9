// CUZK_CUDA_OK(call): throws cuzk::cuda_error_t naming the call, file and
// line when a CUDA runtime call fails. CUZK_SPPARK(desc, code...): runs code
// that may throw sppark's exception and rethrows it as cuda_error_t.
#pragma once

#include <cstdlib>
#include <string>

#include <cuda_runtime.h>

#include <util/exception.cuh>
#include <util/rusterror.h>

#include "cuzk/cuda/error.hpp"

namespace cuzk {

[[noreturn]] inline void throw_cuda(cudaError_t code, const char* call, const char* file, int line)
{
    (void)cudaGetLastError();  // clear a sticky-free error so later calls see their own
    throw cuda_error_t(static_cast<int>(code), call, file, line,
                       std::string(cudaGetErrorName(code)) + ": " + cudaGetErrorString(code));
}

// sppark codes are the negated cudaError_t (see its CUDA_OK).
[[noreturn]] inline void throw_sppark(int code, const char* call, const char* file, int line,
                                      const std::string& detail)
{
    (void)cudaGetLastError();
    throw cuda_error_t(code < 0 ? -code : code, call, file, line, "sppark: " + detail);
}

// msm_t::invoke reports errors as a RustError (the message malloc'ed when
// TAKE_RESPONSIBILITY_FOR_ERROR_MESSAGE is defined, which msm.cu does).
inline void check_rust_error(RustError err, const char* call, const char* file, int line)
{
    if (err.code == 0)
        return;
    std::string detail = err.message ? err.message : "error " + std::to_string(err.code);
    std::free(err.message);
    throw_sppark(err.code, call, file, line, detail);
}

}  // namespace cuzk

#define CUZK_CUDA_OK(call)                                                \
    do {                                                                  \
        const cudaError_t cuzk_cuda_code_ = (call);                       \
        if (cuzk_cuda_code_ != cudaSuccess)                               \
            ::cuzk::throw_cuda(cuzk_cuda_code_, #call, __FILE__, __LINE__); \
    } while (0)

// After a <<<>>> launch: the launch's own error (bad configuration, etc.).
#define CUZK_CUDA_LAUNCHED(kernel)                                                     \
    do {                                                                               \
        const cudaError_t cuzk_cuda_code_ = cudaPeekAtLastError();                     \
        if (cuzk_cuda_code_ != cudaSuccess)                                            \
            ::cuzk::throw_cuda(cuzk_cuda_code_, "launch of " #kernel, __FILE__, __LINE__); \
    } while (0)

#define CUZK_SPPARK(desc, ...)                                                   \
    do {                                                                         \
        try {                                                                    \
            __VA_ARGS__;                                                         \
        } catch (const sppark_error& cuzk_sppark_error_) {                       \
            ::cuzk::throw_sppark(cuzk_sppark_error_.code(), (desc), __FILE__, __LINE__, \
                                 cuzk_sppark_error_.what());                     \
        }                                                                        \
    } while (0)
