// Lists of points or scalars that are either contiguous or gathered through
// pointers, and the argument form blst's multi-point functions take.
#pragma once

#include <cstddef>

#include <blst.h>

namespace cuzk {

// `size` items: base[0..size) when `ptrs` is null, else *ptrs[0..size).
template <class T>
struct gather_t {
    const T* base = nullptr;
    const T* const* ptrs = nullptr;
    size_t size = 0;

    static gather_t contiguous(const T* items, size_t n) { return {items, nullptr, n}; }
    static gather_t indirect(const T* const* items, size_t n) { return {nullptr, items, n}; }

    const T* at(size_t i) const { return ptrs ? ptrs[i] : base + i; }
};

// blst takes lists as `const Arg* const list[]`: either one pointer per item,
// or {first, nullptr} for contiguous items. This builds that argument for the
// items of a gather_t from index `from` on. `Arg` is `byte` for scalars (blst
// reads them as 32-byte strings); blst_scalar is exactly those 32 bytes.
template <class T, class Arg = T>
class blst_list_t {
public:
    blst_list_t(const gather_t<T>& list, size_t from)
    {
        if (list.ptrs) {
            arg_ = reinterpret_cast<const Arg* const*>(list.ptrs + from);
        } else {
            pair_[0] = reinterpret_cast<const Arg*>(list.base + from);
            arg_ = pair_;
        }
    }
    blst_list_t(const blst_list_t&) = delete;  // arg_ may point into pair_
    blst_list_t& operator=(const blst_list_t&) = delete;

    const Arg* const* get() const { return arg_; }

private:
    const Arg* pair_[2] = {nullptr, nullptr};
    const Arg* const* arg_ = nullptr;
};

using blst_scalars_t = blst_list_t<blst_scalar, byte>;

}  // namespace cuzk
