// How native exceptions cross the cxx bridge. cxx turns an exception into
// a Rust cxx::Exception carrying one message; this trycatch (cxx's
// customisation point, found because bridge.hpp includes it) writes the
// message of the typed exceptions in a fixed form that supraseal-c2's
// error.rs parses back into typed errors:
//
//   cuda_error_t           "CUDA call `<call>` failed: <detail> (at <file>:<line>)"
//   device_memory_error_t  "device memory: device <d> needs <n> bytes of device memory, <m> available"
//
// Everything else keeps its what().
#pragma once

#include <exception>
#include <string>

#include "cuzk/cuda/error.hpp"

namespace cuzk::ffi {

inline std::string bridge_message(const cuda_error_t& e)
{
    return "CUDA call `" + e.call() + "` failed: " + e.detail() + " (at " + e.file() + ":" +
           std::to_string(e.line()) + ")";
}

inline std::string bridge_message(const device_memory_error_t& e)
{
    return std::string("device memory: ") + e.what();
}

}  // namespace cuzk::ffi

namespace rust::behavior {

template <typename Try, typename Fail>
static void trycatch(Try&& func, Fail&& fail) noexcept try {
    func();
} catch (const ::cuzk::cuda_error_t& e) {
    const std::string message = ::cuzk::ffi::bridge_message(e);
    fail(message.c_str());
} catch (const ::cuzk::device_memory_error_t& e) {
    const std::string message = ::cuzk::ffi::bridge_message(e);
    fail(message.c_str());
} catch (const std::exception& e) {
    fail(e.what());
}

}  // namespace rust::behavior
