// The exceptions of the CUDA backend, and what a CUDA error code means for
// the device. Plain C++: no CUDA header needed, so that the bridge
// (bridge_error.hpp) and the CPU backend (which simulates injected faults
// with these codes) can use them in any build.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace cuzk {

// The cudaError_t values cuzk names (device.cu checks them against the
// runtime's enum).
namespace cuda_code {
constexpr int memory_allocation = 2;
constexpr int invalid_configuration = 9;
constexpr int ecc_uncorrectable = 214;
constexpr int nvlink_uncorrectable = 220;
constexpr int illegal_address = 700;
constexpr int launch_timeout = 702;
constexpr int assert_failed = 710;
constexpr int hardware_stack_error = 714;
constexpr int illegal_instruction = 715;
constexpr int misaligned_address = 716;
constexpr int invalid_address_space = 717;
constexpr int invalid_pc = 718;
constexpr int launch_failure = 719;
constexpr int unknown = 999;
}  // namespace cuda_code

// What a failed CUDA call says about its device.
enum class cuda_error_kind_t : uint8_t {
    // The call failed, the context is fine: the work may be retried.
    transient = 0,
    // Device memory ran out (cudaErrorMemoryAllocation); the context is fine.
    out_of_memory = 1,
    // The context is corrupt: every later call in this process fails (an
    // illegal address, a failed launch, an uncorrectable ECC error, ...).
    sticky = 2,
};

// The kind of a cudaError_t, from the runtime's documentation of each code:
// the ones that "leave the process in an inconsistent state" are sticky;
// cudaErrorUnknown counts as sticky too (nothing says the context survived).
constexpr cuda_error_kind_t cuda_error_kind(int code) noexcept
{
    switch (code) {
    case cuda_code::memory_allocation:
        return cuda_error_kind_t::out_of_memory;
    case cuda_code::ecc_uncorrectable:
    case cuda_code::nvlink_uncorrectable:
    case cuda_code::illegal_address:
    case cuda_code::launch_timeout:
    case cuda_code::assert_failed:
    case cuda_code::hardware_stack_error:
    case cuda_code::illegal_instruction:
    case cuda_code::misaligned_address:
    case cuda_code::invalid_address_space:
    case cuda_code::invalid_pc:
    case cuda_code::launch_failure:
    case cuda_code::unknown:
        return cuda_error_kind_t::sticky;
    default:
        return cuda_error_kind_t::transient;
    }
}

// A failed CUDA call: the runtime's error code, the call as written in the
// source, the runtime's description, and the file and line it was made
// from. what() reads "file:line: call: errorName: description".
class cuda_error_t : public std::runtime_error {
public:
    cuda_error_t(int code, std::string call, const char* file, int line, const std::string& detail)
        : std::runtime_error(base_name(file) + ":" + std::to_string(line) + ": " + call + ": " +
                             detail),
          code_(code),
          call_(std::move(call)),
          detail_(detail),
          file_(base_name(file)),
          line_(line)
    {}

    // The cudaError_t value (0 never appears here).
    int code() const noexcept { return code_; }
    cuda_error_kind_t kind() const noexcept { return cuda_error_kind(code_); }
    const std::string& call() const noexcept { return call_; }
    // "errorName: description" (or sppark's message).
    const std::string& detail() const noexcept { return detail_; }
    const std::string& file() const noexcept { return file_; }
    int line() const noexcept { return line_; }

private:
    static std::string base_name(const char* file)
    {
        std::string path(file ? file : "");
        const auto slash = path.find_last_of('/');
        return slash == std::string::npos ? path : path.substr(slash + 1);
    }

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

// A fault to inject at the start of a kernel region (supraseal-c2's
// FaultPlan): the CUDA backend causes the real thing on its device, the CPU
// backend throws the cuda_error_t the real thing would.
enum class injected_fault_t : uint8_t {
    none = 0,
    // An illegal memory access (cudaErrorIllegalAddress, sticky).
    sticky = 1,
    // A launch with an impossible block size (cudaErrorInvalidConfiguration).
    transient = 2,
    // A device allocation that cannot succeed (cudaErrorMemoryAllocation).
    alloc = 3,
};

}  // namespace cuzk
