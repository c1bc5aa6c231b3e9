// Borrowed views of memory owned elsewhere (by Rust, or by a vector).
#pragma once

#include <cstddef>

namespace cuzk {

// A read-only view of `size` consecutive items.
template <class T>
struct span_t {
    const T* data = nullptr;
    size_t size = 0;

    const T& operator[](size_t i) const { return data[i]; }
    const T* begin() const { return data; }
    const T* end() const { return data + size; }
    bool empty() const { return size == 0; }
};

}  // namespace cuzk
