// The exceptions of the CUDA backend. Plain C++: no CUDA header needed, so
// that the bridge (bridge_error.hpp) can tell them apart in any build.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace cuzk {

// A failed CUDA call: the runtime's error code, the call as written in the
// source, the runtime's description, and the file and line it was made
// from. what() reads "file:line: call: errorName: description".
class cuda_error_t : public std::runtime_error {
public:
    cuda_error_t(int code, std::string call, const char* file, int line, const std::string& detail);

    // The cudaError_t value (0 never appears here).
    int code() const noexcept { return code_; }
    const std::string& call() const noexcept { return call_; }
    // "errorName: description" (or sppark's message).
    const std::string& detail() const noexcept { return detail_; }
    const std::string& file() const noexcept { return file_; }
    int line() const noexcept { return line_; }

private:
    int code_;
    std::string call_;
    std::string detail_;
    std::string file_;
    int line_;
};

// The proving key cannot be used on a device: even streamed from host memory
// it needs `needed` bytes of device memory, and only `available` are there
// (free memory, or the lock's limit if lower).
class device_memory_error_t : public std::runtime_error {
public:
    device_memory_error_t(uint32_t device, uint64_t needed, uint64_t available)
        : std::runtime_error("device " + std::to_string(device) + " needs " +
                             std::to_string(needed) + " bytes of device memory, " +
                             std::to_string(available) + " available"),
          device_(device),
          needed_(needed),
          available_(available)
    {}

    uint32_t device() const noexcept { return device_; }
    uint64_t needed() const noexcept { return needed_; }
    uint64_t available() const noexcept { return available_; }

private:
    uint32_t device_;
    uint64_t needed_;
    uint64_t available_;
};

}  // namespace cuzk
