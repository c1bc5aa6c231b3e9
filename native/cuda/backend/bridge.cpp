// The shims behind supraseal-c2/src/cuda/bridge.rs.
#include "cuzk/cuda/bridge.hpp"

#include <string>
#include <vector>

#include "backend.hpp"
#include "cuzk/check.hpp"
#include "cuzk/cuda/fixed_base.hpp"
#include "supraseal-c2/src/cuda/bridge.rs.h"

namespace cuzk::ffi {

namespace {

cuda_backend_t& cuda_of(const gpu_lock_t& lock)
{
    auto* backend = dynamic_cast<cuda_backend_t*>(&lock.backend());
    CUZK_REQUIRE(backend != nullptr, "not a CUDA lock (device " +
                                         std::to_string(lock.device()) + ")");
    return *backend;
}

template <class T>
const T* items(rust::Slice<const uint64_t> limbs, size_t& count, const char* what)
{
    constexpr size_t per = sizeof(T) / sizeof(uint64_t);
    CUZK_REQUIRE(limbs.size() % per == 0, std::string(what) + ": not a whole number of items");
    count = limbs.size() / per;
    return reinterpret_cast<const T*>(limbs.data());
}

blst_p1& result(rust::Slice<uint64_t> out)
{
    CUZK_REQUIRE(out.size() == sizeof(blst_p1) / sizeof(uint64_t), "result: one G1 point");
    return *reinterpret_cast<blst_p1*>(out.data());
}

template <class T>
T* items_mut(rust::Slice<uint64_t> limbs, size_t& count, const char* what)
{
    constexpr size_t per = sizeof(T) / sizeof(uint64_t);
    CUZK_REQUIRE(limbs.size() % per == 0, std::string(what) + ": not a whole number of items");
    count = limbs.size() / per;
    return reinterpret_cast<T*>(limbs.data());
}

// Runs `body` as a kernel region of `lock`, which this thread must hold.
template <class F>
void kernel_region(const gpu_lock_t& lock, F&& body)
{
    CUZK_REQUIRE(lock.held_by_this_thread(),
                 "device " + std::to_string(lock.device()) + ": the lock is not held");
    const_cast<gpu_lock_t&>(lock).run_kernel_region(injected_fault_t::none, body);
}

}  // namespace

uint32_t cuda_device_count() { return static_cast<uint32_t>(cuzk::cuda_device_count()); }

std::unique_ptr<gpu_lock_t> new_cuda_gpu_lock(uint32_t device, NativeError& error) noexcept
{
    return guarded(error, [&] {
        return std::make_unique<gpu_lock_t>(device, std::make_unique<cuda_backend_t>(device));
    });
}

void cuda_set_memory_limit(const gpu_lock_t& lock, uint64_t bytes, NativeError& error) noexcept
{
    guarded(error, [&] { cuda_of(lock).set_memory_limit(bytes); });
}

void cuda_set_stream_srs(const gpu_lock_t& lock, bool on, NativeError& error) noexcept
{
    guarded(error, [&] { cuda_of(lock).set_stream_srs(on); });
}

void cuda_probe_alloc(const gpu_lock_t& lock, uint64_t bytes, NativeError& error) noexcept
{
    guarded(error, [&] {
        kernel_region(lock, [&] {
            cuda_device_t& device = *cuda_of(lock).context();
            cuda_fr_buffer_t probe(device, static_cast<size_t>(bytes / sizeof(blst_fr)) + 1);
        });
    });
}

void cuda_msm_g1(const gpu_lock_t& lock, rust::Slice<const uint64_t> points,
                 rust::Slice<const uint64_t> scalars, rust::Slice<uint64_t> out,
                 NativeError& error) noexcept
{
    guarded(error, [&] {
        size_t n = 0, m = 0;
        const auto* pts = items<blst_p1_affine>(points, n, "msm points");
        const auto* frs = items<blst_fr>(scalars, m, "msm scalars");
        CUZK_REQUIRE(n == m, "msm: " + std::to_string(n) + " points but " + std::to_string(m) +
                                 " scalars");
        blst_p1& sum = result(out);
        kernel_region(lock, [&] {
            cuda_device_t& device = *cuda_of(lock).context();
            const cuda_points_t resident(device, pts, n);
            cuda_msm(sum, resident, frs, n);
        });
    });
}

void cuda_batch_add_g1(const gpu_lock_t& lock, rust::Slice<const uint64_t> points,
                       rust::Slice<const size_t> indices, rust::Slice<uint64_t> out,
                       NativeError& error) noexcept
{
    guarded(error, [&] {
        size_t n = 0;
        const auto* pts = items<blst_p1_affine>(points, n, "batch_add points");
        std::vector<uint32_t> chosen;
        chosen.reserve(indices.size());
        for (size_t i : indices) {
            CUZK_REQUIRE(i < n, "batch_add: index " + std::to_string(i) + " out of range " +
                                    std::to_string(n));
            chosen.push_back(static_cast<uint32_t>(i));
        }
        blst_p1& sum = result(out);
        kernel_region(lock, [&] {
            cuda_device_t& device = *cuda_of(lock).context();
            const cuda_points_t resident(device, pts, n);
            cuda_batch_add(sum, resident, chosen.data(), chosen.size());
        });
    });
}

void cuda_ntt(const gpu_lock_t& lock, rust::Slice<uint64_t> values, bool inverse, bool coset,
              NativeError& error) noexcept
{
    guarded(error, [&] {
        CUZK_REQUIRE(values.size() % 4 == 0, "ntt: not a whole number of scalars");
        const size_t n = values.size() / 4;
        CUZK_REQUIRE(n != 0 && (n & (n - 1)) == 0, "ntt: the length must be a power of two");
        kernel_region(lock, [&] {
            cuda_device_t& device = *cuda_of(lock).context();
            cuzk::cuda_ntt(device, reinterpret_cast<blst_fr*>(values.data()), n, inverse, coset);
        });
    });
}

namespace {

// The shared half of cuda_fixed_base_g1 / _g2: `run(device, base, scalars,
// n, out)` with the limbs checked and viewed.
template <class affine_t, class F>
void fixed_base_shim(const gpu_lock_t& lock, rust::Slice<const uint64_t> base,
                     rust::Slice<const uint64_t> scalars, rust::Slice<uint64_t> out,
                     NativeError& error, F&& run) noexcept
{
    guarded(error, [&] {
        size_t one = 0, n = 0, m = 0;
        const auto* b = items<affine_t>(base, one, "fixed_base base");
        CUZK_REQUIRE(one == 1, "fixed_base: one base point");
        const auto* ks = items<blst_fr>(scalars, n, "fixed_base scalars");
        auto* points = items_mut<affine_t>(out, m, "fixed_base output");
        CUZK_REQUIRE(n == m, "fixed_base: " + std::to_string(n) + " scalars but room for " +
                                 std::to_string(m) + " points");
        kernel_region(lock, [&] { run(*cuda_of(lock).context(), *b, ks, n, points); });
    });
}

}  // namespace

void cuda_fixed_base_g1(const gpu_lock_t& lock, rust::Slice<const uint64_t> base,
                        rust::Slice<const uint64_t> scalars, rust::Slice<uint64_t> out,
                        NativeError& error) noexcept
{
    fixed_base_shim<blst_p1_affine>(lock, base, scalars, out, error,
                                             [](auto&&... a) { cuzk::cuda_fixed_base_g1(a...); });
}

void cuda_fixed_base_g2(const gpu_lock_t& lock, rust::Slice<const uint64_t> base,
                        rust::Slice<const uint64_t> scalars, rust::Slice<uint64_t> out,
                        NativeError& error) noexcept
{
    fixed_base_shim<blst_p2_affine>(lock, base, scalars, out, error,
                                             [](auto&&... a) { cuzk::cuda_fixed_base_g2(a...); });
}

uint8_t* cuda_host_alloc(size_t bytes) noexcept
{
    return static_cast<uint8_t*>(cuzk::cuda_host_alloc(bytes));
}

void cuda_host_free(uint8_t* data) noexcept { cuzk::cuda_host_free(data); }

bool cuda_host_range_pinned(const uint8_t* data, size_t bytes) noexcept
{
    return cuzk::cuda_host_range_pinned(data, bytes);
}

}  // namespace cuzk::ffi
