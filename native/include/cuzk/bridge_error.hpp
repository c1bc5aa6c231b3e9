// How native failures cross the cxx bridge: as a typed value, never as a
// message to parse back. Every bridge function that can fail takes a
// `NativeError&` (a shared struct of supraseal-c2/src/bridge.rs) and runs
// its body in guarded(), which catches everything and records the
// exception's type and fields in that struct:
//
//   cuda_error_t           kind from its code (cuda_error_kind: Sticky,
//                          Transient, OutOfMemory), code, call, detail, location
//   device_memory_error_t  KeyTooLarge, device, needed, available
//   std::invalid_argument  InvalidInput (a CUZK_REQUIRE: the caller's input)
//   anything else          Internal, with its what()
//
// supraseal-c2's error.rs maps the struct into its typed Error. The bridge
// functions are declared without cxx's Result: nothing escapes guarded().
#pragma once

#include <exception>
#include <type_traits>

namespace cuzk::ffi {

struct NativeError;

// Fills `error` from `current` (defined in native/src/bridge.cpp).
void record_error(NativeError& error, std::exception_ptr current) noexcept;

// body(), or T{} with `error` filled when it throws.
template <class F>
auto guarded(NativeError& error, F&& body) noexcept -> decltype(body())
{
    using T = decltype(body());
    try {
        if constexpr (std::is_void_v<T>) {
            body();
            return;
        } else {
            return body();
        }
    } catch (...) {
        record_error(error, std::current_exception());
    }
    if constexpr (!std::is_void_v<T>)
        return T{};
}

}  // namespace cuzk::ffi
