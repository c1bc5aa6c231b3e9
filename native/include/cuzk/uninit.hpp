// Vectors whose resize leaves trivial elements uninitialised: the preamble
// sizes arrays of millions of scalars and pointers that parallel passes then
// fill, and a value-initialising resize would zero them on one thread first.
#pragma once

#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace cuzk {

template <class T>
class default_init_allocator_t : public std::allocator<T> {
public:
    template <class U>
    struct rebind {
        using other = default_init_allocator_t<U>;
    };

    using std::allocator<T>::allocator;

    // resize(n) constructs with no arguments: default-initialise (no zeroing
    // for trivial types) instead of value-initialise.
    template <class U>
    void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>)
    {
        ::new (static_cast<void*>(p)) U;
    }

    template <class U, class... Args>
    void construct(U* p, Args&&... args)
    {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};

template <class T>
using uninit_vector_t = std::vector<T, default_init_allocator_t<T>>;

}  // namespace cuzk
