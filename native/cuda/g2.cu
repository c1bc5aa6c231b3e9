// G2 batch addition on the device: sppark's batch_addition over XYZZ
// buckets of Fp2 (two threads per Fp2 element), then a fold of the
// per-warp buckets on the device.

#include "blst_compat.cuh"

#include <ff/bls12-381-fp2.hpp>
#include <ec/xyzz_t.hpp>

#include <cstring>

#include "cuda_ok.cuh"
#include "device_impl.cuh"
#include "batch_add.cuh"
#include "cuzk/align.hpp"
#include "cuzk/check.hpp"
#include "cuzk/cuda/g2.hpp"

namespace cuzk {

namespace {

using bucket_g2_t = xyzz_t<fp2_t>;
using bucket_g2_mem_t = bucket_g2_t::mem_t;
using affine_g2_mem_t = bucket_g2_t::affine_t::mem_t;

static_assert(sizeof(affine_g2_mem_t) == sizeof(blst_p2_affine), "affine G2 (device) size");
static_assert(sizeof(bucket_g2_mem_t) == 4 * sizeof(blst_fp2), "XYZZ G2 bucket size");

constexpr size_t max_points = size_t(1) << 31;

// buckets[i] += buckets[i + stride] for every i that is a multiple of
// 2 * stride, i + stride < n; each pair of threads holds one bucket.
__global__ void fold_g2(bucket_g2_mem_t* buckets, uint32_t n, uint32_t stride)
{
    const uint32_t pair = (blockIdx.x * blockDim.x + threadIdx.x) / bucket_g2_t::degree;
    const uint64_t i = uint64_t(pair) * 2 * stride;
    if (i + stride < n) {
        bucket_g2_t a = buckets[i];
        bucket_g2_t b = buckets[i + stride];
        a.add(b);
        buckets[i] = a;
    }
}

}  // namespace

cuda_g2_points_t::cuda_g2_points_t(cuda_device_t& device, const blst_p2_affine* points, size_t n)
    : device_(device), size_(n)
{
    CUZK_REQUIRE(n < max_points, "cuda_g2_points_t: at most 2^31 - 1 points");
    CUZK_REQUIRE(points != nullptr || n == 0, "cuda_g2_points_t: null points");
    auto& impl = device.impl();
    impl.select();
    data_ = impl.alloc(bytes());
    try {
        CUZK_CUDA_OK(cudaMemcpyAsync(data_, points, bytes(), cudaMemcpyHostToDevice,
                                     impl.stream(0)));
        CUZK_CUDA_OK(cudaStreamSynchronize(impl.stream(0)));
    } catch (...) {
        impl.release(data_, bytes());
        throw;
    }
}

cuda_g2_points_t::~cuda_g2_points_t() { device_.impl().release(data_, bytes()); }

namespace {

size_t bucket_bytes(const cuda_device_t::impl_t& impl)
{
    return align256(bitmap_buckets<bucket_g2_t, affine_g2_mem_t>(impl) * sizeof(bucket_g2_mem_t));
}

// The sum of the points whose bit is set in d_bitmap (device), with the
// buckets at `at` in the context's scratch (bucket_bytes(impl)), then the
// share sum's list (ones_list_bytes(impl, nbits)).
blst_p2 bitmap_sum(const cuda_g2_points_t& points, const uint64_t* d_bitmap, size_t nbits, char* at)
{
    auto& impl = points.device().impl();
    const uint32_t nbuckets = bitmap_buckets<bucket_g2_t, affine_g2_mem_t>(impl);
    auto* d_buckets = reinterpret_cast<bucket_g2_mem_t*>(at);
    launch_ones_sum<bucket_g2_t, affine_g2_mem_t>(impl, points.device_data(), d_bitmap, nbits,
                                                   d_buckets, nbuckets, at + bucket_bytes(impl));
    const cudaStream_t s = impl.stream(0);

    // Fold the per-warp buckets into bucket 0.
    constexpr unsigned block = 128;
    for (uint32_t stride = 1; stride < nbuckets; stride *= 2) {
        const uint64_t pairs = (uint64_t(nbuckets) + 2 * stride - 1) / (2 * stride);
        const unsigned blocks =
            static_cast<unsigned>((pairs * bucket_g2_t::degree + block - 1) / block);
        fold_g2<<<blocks, block, 0, s>>>(d_buckets, nbuckets, stride);
        CUZK_CUDA_LAUNCHED(fold_g2);
    }
    blst_fp2 xyzz[4];
    static_assert(sizeof(xyzz) == sizeof(bucket_g2_mem_t), "XYZZ G2 layout");
    CUZK_CUDA_OK(cudaMemcpyAsync(xyzz, d_buckets, sizeof(xyzz), cudaMemcpyDeviceToHost, s));
    CUZK_CUDA_OK(cudaStreamSynchronize(s));
    // XYZZ (X, Y, ZZZ, ZZ) to Jacobian (X*ZZ, Y*ZZZ, ZZ); ZZ = 0 is infinity.
    blst_p2 out;
    blst_fp2_mul(&out.x, &xyzz[0], &xyzz[3]);
    blst_fp2_mul(&out.y, &xyzz[1], &xyzz[2]);
    out.z = xyzz[3];
    return out;
}

}  // namespace

void cuda_batch_add_bitmap(blst_p2& out, const cuda_g2_points_t& points, const uint64_t* bitmap,
                           size_t nbits)
{
    CUZK_REQUIRE(nbits <= points.size(), "cuda_batch_add_bitmap(G2): more bits than points");
    std::memset(&out, 0, sizeof(out));
    if (nbits == 0)
        return;
    auto& impl = points.device().impl();
    impl.select();
    const size_t map_bytes = align256(cuda_bitmap_device_bytes(nbits));
    char* at = static_cast<char*>(impl.scratch_at_least(map_bytes + bucket_bytes(impl) +
                                                        ones_list_bytes(impl, nbits)));
    const uint64_t* d_map = upload_bitmap(impl, at, bitmap, nbits);
    out = bitmap_sum(points, d_map, nbits, at + map_bytes);
}

void cuda_batch_add_bitmap_on_device(blst_p2& out, const cuda_g2_points_t& points,
                                     const uint64_t* d_bitmap, size_t nbits)
{
    CUZK_REQUIRE(nbits <= points.size(),
                 "cuda_batch_add_bitmap_on_device(G2): more bits than points");
    std::memset(&out, 0, sizeof(out));
    if (nbits == 0)
        return;
    auto& impl = points.device().impl();
    impl.select();
    char* at = static_cast<char*>(
        impl.scratch_at_least(bucket_bytes(impl) + ones_list_bytes(impl, nbits)));
    out = bitmap_sum(points, d_bitmap, nbits, at);
}

}  // namespace cuzk
