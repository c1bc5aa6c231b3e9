// G1 MSM (sppark's msm_t, XYZZ buckets) and batch addition over
// device-resident point sets; the point sets themselves; the G2 MSM of
// B_G2's tail (at the end).

#include "blst_compat.cuh"

// msm_t::invoke returns its errors with a malloc'ed message we free.
#define TAKE_RESPONSIBILITY_FOR_ERROR_MESSAGE
#include "sppark_g1.cuh"
#include <ff/bls12-381-fp2.hpp>
#include <msm/pippenger.cuh>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "cuda_ok.cuh"
#include "device_impl.cuh"
#include "batch_add.cuh"
#include "gather.cuh"
#include "cuzk/check.hpp"
#include "cuzk/cuda/g2.hpp"
#include "cuzk/cuda/msm.hpp"
#include "cuzk/cuda/points.hpp"

namespace cuzk {

namespace {

using msm_engine_t = msm_t<bucket_t, point_t, affine_t, scalar_t>;
using bucket_mem_t = bucket_t::mem_t;
using affine_mem_t = affine_t::mem_t;

constexpr size_t max_points = size_t(1) << 31;  // sppark keeps a sign in bit 31
constexpr unsigned words_per_point = sizeof(blst_p1_affine) / 16;
constexpr unsigned sum_threads = 128;

__global__ void check_indices(const uint32_t* __restrict__ idx, size_t n, uint32_t limit,
                              uint32_t* bad)
{
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
         i += size_t(gridDim.x) * blockDim.x)
        if (idx[i] >= limit)
            *bad = 1;
}

// out[0] = the sum of in[0..n), one block of sum_threads threads.
__launch_bounds__(sum_threads) __global__
void sum_buckets(bucket_mem_t* out, const bucket_mem_t* in, uint32_t n)
{
    extern __shared__ uint4 shared_words[];
    auto* partial = reinterpret_cast<bucket_mem_t*>(shared_words);

    bucket_t acc;
    acc.inf();
    for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
        bucket_t p = in[i];
        acc.add(p);
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (uint32_t half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            bucket_t a = partial[threadIdx.x];
            bucket_t b = partial[threadIdx.x + half];
            a.add(b);
            partial[threadIdx.x] = a;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[0] = static_cast<bucket_t>(partial[0]);
}

// XYZZ (X, Y, ZZZ, ZZ) to Jacobian (X*ZZ, Y*ZZZ, ZZ), in blst's types.
blst_p1 xyzz_to_jacobian(const blst_fp xyzz[4])
{
    blst_p1 out;
    blst_fp_mul(&out.x, &xyzz[0], &xyzz[3]);
    blst_fp_mul(&out.y, &xyzz[1], &xyzz[2]);
    out.z = xyzz[3];
    return out;
}

blst_p1 infinity()
{
    blst_p1 out;
    std::memset(&out, 0, sizeof(out));
    return out;
}

// The window bias cuzk uses when none is set (msm_bias_auto). sppark picks
// wbits = log2(1.5 n) - 8 (within [10, 18]); on an H200 wider windows won
// (harness --sweep, docs/cuda.md): wbits 14 at 2^20 (-20%), 16 at 2^22
// (-18%), 17 at 2^24 (-4%; 18 was slower again). So aim for log2(1.5 n) - 6,
// at most 17, and never narrower than sppark's choice; below 2^18 (not
// measured) keep sppark's.
int auto_window_bias(size_t n)
{
    int lg = 0;
    for (size_t m = n + n / 2; m > 1; m >>= 1)
        lg++;
    if (lg < 18)
        return 0;
    const int sppark = std::max(10, std::min(lg - 8, 18));
    const int target = std::min(lg - 6, 17);
    return std::max(0, target - sppark);
}

// msm_t derives its window from the length it is constructed with (and uses
// that length for nothing else when it gets no points): scale it by 2^bias.
size_t sizing_length(const cuda_device_t::impl_t& impl, size_t n)
{
    int bias = impl.msm_bias == cuda_device_t::msm_bias_auto ? auto_window_bias(n) : impl.msm_bias;
    bias = std::max(-20, std::min(20, bias));
    if (bias >= 0)
        return n << bias;
    return std::max<size_t>(n >> -bias, 1);
}

// One sppark MSM over device points; scalars on the host or the device.
void run_msm(blst_p1& out, cuda_device_t::impl_t& impl, const void* d_points,
             const void* scalars, bool scalars_on_device, size_t n, bool mont)
{
    if (n == 0) {
        out = infinity();
        return;
    }
    impl.select();
    // msm_t copies host scalars a batch at a time, overlapping all but the
    // first batch with the kernels. With the wider windows above there are
    // few batches, so a pageable first batch (the driver copies those at a
    // few GB/s) costs a lot: copy pageable scalars into pinned staging on
    // several threads first (docs/cuda.md, "Measurements", has the
    // comparison).
    // Scalars that are already pinned (cuda_pinned_buffer_t) skip that pass
    // and are faster still.
    const size_t scalar_bytes = n * sizeof(scalar_t);
    if (!scalars_on_device && impl.stage_pageable && scalar_bytes >= (size_t(1) << 20) &&
        !cuda_is_pinned(scalars)) {
        void* staged = impl.host_staging_at_least(scalar_bytes);
        parallel_copy(staged, scalars, scalar_bytes);
        scalars = staged;
    }
    point_t result;
    msm_engine_t* msm = nullptr;
    CUZK_SPPARK("msm_t(nullptr, n, sizeof(affine_t), device)",
                msm = new msm_engine_t(nullptr, sizing_length(impl, n), sizeof(affine_t),
                                       impl.sppark_id));
    RustError err;
    auto* points = const_cast<affine_t*>(static_cast<const affine_t*>(d_points));
    if (scalars_on_device) {
        auto* d_scalars = const_cast<scalar_t*>(static_cast<const scalar_t*>(scalars));
        err = msm->invoke(result, dev_ptr_t<affine_t>{points}, n, dev_ptr_t<scalar_t>{d_scalars},
                          mont);
    } else {
        err = msm->invoke(result, dev_ptr_t<affine_t>{points}, n,
                          static_cast<const scalar_t*>(scalars), mont);
    }
    // On failure msm_t's destructor would synchronise and throw from a
    // destructor (std::terminate); give up its buckets instead.
    check_rust_error(err, "msm_t::invoke(result, points, n, scalars, mont)", __FILE__, __LINE__);
    delete msm;
    static_assert(sizeof(result) == sizeof(out), "Jacobian layout");
    std::memcpy(&out, &result, sizeof(out));
}

// Sums `nbuckets` buckets at d_buckets on stream 0 and returns the total.
blst_p1 finish_sum(cuda_device_t::impl_t& impl, bucket_mem_t* d_buckets, uint32_t nbuckets,
                   bucket_mem_t* d_total)
{
    sum_buckets<<<1, sum_threads, sum_threads * sizeof(bucket_mem_t), impl.stream(0)>>>(
        d_total, d_buckets, nbuckets);
    CUZK_CUDA_LAUNCHED(sum_buckets);
    blst_fp xyzz[4];
    static_assert(sizeof(xyzz) == sizeof(bucket_mem_t), "XYZZ layout");
    CUZK_CUDA_OK(cudaMemcpyAsync(xyzz, d_total, sizeof(xyzz), cudaMemcpyDeviceToHost,
                                 impl.stream(0)));
    CUZK_CUDA_OK(cudaStreamSynchronize(impl.stream(0)));
    return xyzz_to_jacobian(xyzz);
}

// Gathers points[d_idx[i] - base] (device indices) into `at` (device
// memory with room for n points and one more word) on stream 0, and waits.
const affine_t* gather(const cuda_points_t& points, const uint32_t* d_idx, uint32_t base, size_t n,
                       char* at)
{
    auto& impl = points.device().impl();
    const size_t pts_bytes = align256(n * sizeof(blst_p1_affine));
    auto* d_pts = reinterpret_cast<uint4*>(at);
    auto* d_bad = reinterpret_cast<uint32_t*>(at + pts_bytes);
    CUZK_CUDA_OK(cudaMemsetAsync(d_bad, 0, sizeof(uint32_t), impl.stream(0)));
    gather_points<words_per_point><<<grid_for(impl, n * words_per_point, 256), 256, 0, impl.stream(0)>>>(
        d_pts, static_cast<const uint4*>(points.device_data()), d_idx, base, n,
        static_cast<uint32_t>(points.size()), d_bad);
    CUZK_CUDA_LAUNCHED(gather_points);
    require_no_bad_index(impl, d_bad);  // waits for the gather too
    return reinterpret_cast<const affine_t*>(d_pts);
}

size_t gather_bytes(size_t n) { return align256(n * sizeof(blst_p1_affine)) + 256; }

template <class scalar_in_t>
void msm_gather(blst_p1& out, const cuda_points_t& points, const uint32_t* indices,
                const scalar_in_t* scalars, size_t n, bool mont)
{
    CUZK_REQUIRE(n < max_points, "cuda_msm_gather: too many terms");
    if (n == 0) {
        out = infinity();
        return;
    }
    auto& impl = points.device().impl();
    impl.select();
    const size_t idx_bytes = align256(n * sizeof(uint32_t));
    char* at = static_cast<char*>(impl.scratch_at_least(idx_bytes + gather_bytes(n)));
    const uint32_t* d_idx = upload_indices(impl, at, indices, n);
    const affine_t* d_pts = gather(points, d_idx, 0, n, at + idx_bytes);
    run_msm(out, impl, d_pts, scalars, false, n, mont);
}

}  // namespace

// ------------------------------------------------------------- point sets

cuda_points_t::cuda_points_t(cuda_device_t& device, const blst_p1_affine* points, size_t n)
    : device_(device), size_(n), bytes_(n * sizeof(blst_p1_affine))
{
    CUZK_REQUIRE(n < max_points, "cuda_points_t: at most 2^31 - 1 points");
    CUZK_REQUIRE(points != nullptr || n == 0, "cuda_points_t: null points");
    data_ = device.impl().alloc(bytes_);
    try {
        upload(points, n, 0);
    } catch (...) {
        device.impl().release(data_, bytes_);
        throw;
    }
}

cuda_points_t::cuda_points_t(cuda_device_t& device, size_t n)
    : device_(device), size_(n), bytes_(n * sizeof(blst_p1_affine))
{
    CUZK_REQUIRE(n < max_points, "cuda_points_t: at most 2^31 - 1 points");
    data_ = device.impl().alloc(bytes_);
}

cuda_points_t::~cuda_points_t()
{
    if (upload_event_ != nullptr) {
        (void)cudaSetDevice(device_.ordinal());
        (void)cudaEventSynchronize(static_cast<cudaEvent_t>(upload_event_));
        (void)cudaEventDestroy(static_cast<cudaEvent_t>(upload_event_));
    }
    device_.impl().release(data_, bytes_);
}

void cuda_points_t::upload(const blst_p1_affine* points, size_t n, size_t offset)
{
    CUZK_REQUIRE(offset <= size_ && n <= size_ - offset, "cuda_points_t::upload: out of range");
    if (n == 0)
        return;
    auto& impl = device_.impl();
    impl.select();
    CUZK_CUDA_OK(cudaMemcpyAsync(static_cast<blst_p1_affine*>(data_) + offset, points,
                                 n * sizeof(blst_p1_affine), cudaMemcpyHostToDevice,
                                 impl.stream(0)));
    CUZK_CUDA_OK(cudaStreamSynchronize(impl.stream(0)));
}

void cuda_points_t::upload_async(const blst_p1_affine* points, size_t n, size_t offset)
{
    CUZK_REQUIRE(offset <= size_ && n <= size_ - offset,
                 "cuda_points_t::upload_async: out of range");
    auto& impl = device_.impl();
    impl.select();
    if (upload_event_ == nullptr) {
        cudaEvent_t event;
        CUZK_CUDA_OK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
        upload_event_ = event;
    }
    const cudaStream_t copy = impl.stream(cuda_device_t::impl_t::nstreams - 1);
    if (n != 0)
        CUZK_CUDA_OK(cudaMemcpyAsync(static_cast<blst_p1_affine*>(data_) + offset, points,
                                     n * sizeof(blst_p1_affine), cudaMemcpyHostToDevice, copy));
    CUZK_CUDA_OK(cudaEventRecord(static_cast<cudaEvent_t>(upload_event_), copy));
}

void cuda_points_t::wait_upload()
{
    if (upload_event_ == nullptr)
        return;
    device_.impl().select();
    CUZK_CUDA_OK(cudaEventSynchronize(static_cast<cudaEvent_t>(upload_event_)));
}

// -------------------------------------------------------------------- MSM

void cuda_msm(blst_p1& out, const cuda_points_t& points, const blst_scalar* scalars, size_t n)
{
    CUZK_REQUIRE(n <= points.size(), "cuda_msm: more scalars than points");
    run_msm(out, points.device().impl(), points.device_data(), scalars, false, n, false);
}

void cuda_msm(blst_p1& out, const cuda_points_t& points, const blst_fr* scalars, size_t n)
{
    CUZK_REQUIRE(n <= points.size(), "cuda_msm: more scalars than points");
    run_msm(out, points.device().impl(), points.device_data(), scalars, false, n, true);
}

void cuda_msm(blst_p1& out, const cuda_points_t& points, const cuda_fr_buffer_t& scalars, size_t n)
{
    CUZK_REQUIRE(n <= points.size() && n <= scalars.size(), "cuda_msm: n exceeds points or scalars");
    CUZK_REQUIRE(&scalars.device() == &points.device(), "cuda_msm: scalars on another device");
    run_msm(out, points.device().impl(), points.device_data(), scalars.device_data(), true, n, true);
}

void cuda_msm(blst_p1& out, const cuda_points_t& points, const cuda_fr_buffer_t& scalars,
              size_t offset, size_t n)
{
    CUZK_REQUIRE(n <= points.size() && offset <= scalars.size() && n <= scalars.size() - offset,
                 "cuda_msm: n exceeds points, or offset + n the scalars");
    CUZK_REQUIRE(&scalars.device() == &points.device(), "cuda_msm: scalars on another device");
    const auto* first = static_cast<const blst_fr*>(scalars.device_data()) + offset;
    run_msm(out, points.device().impl(), points.device_data(), first, true, n, true);
}

void cuda_msm_gather(blst_p1& out, const cuda_points_t& points, const uint32_t* indices,
                     const blst_scalar* scalars, size_t n)
{
    msm_gather(out, points, indices, scalars, n, false);
}

void cuda_msm_gather(blst_p1& out, const cuda_points_t& points, const uint32_t* indices,
                     const blst_fr* scalars, size_t n)
{
    msm_gather(out, points, indices, scalars, n, true);
}

namespace {

// sppark reads scalars in 16-byte words: a misaligned address would be a
// sticky device error (the context lost), so refuse it here.
void require_aligned(const blst_scalar* d_scalars, const char* who)
{
    CUZK_REQUIRE(reinterpret_cast<uintptr_t>(d_scalars) % 16 == 0,
                 std::string(who) + ": device scalars must be 16-byte aligned");
}

}  // namespace

void cuda_msm_on_device(blst_p1& out, const cuda_points_t& points, const blst_scalar* d_scalars,
                        size_t n)
{
    CUZK_REQUIRE(n <= points.size(), "cuda_msm_on_device: more scalars than points");
    require_aligned(d_scalars, "cuda_msm_on_device");
    run_msm(out, points.device().impl(), points.device_data(), d_scalars, true, n, false);
}

void cuda_msm_gather_on_device(blst_p1& out, const cuda_points_t& points,
                               const uint32_t* d_indices, uint32_t base,
                               const blst_scalar* d_scalars, size_t n)
{
    CUZK_REQUIRE(n < max_points, "cuda_msm_gather_on_device: too many terms");
    require_aligned(d_scalars, "cuda_msm_gather_on_device");
    if (n == 0) {
        out = infinity();
        return;
    }
    auto& impl = points.device().impl();
    impl.select();
    char* at = static_cast<char*>(impl.scratch_at_least(gather_bytes(n)));
    const affine_t* d_pts = gather(points, d_indices, base, n, at);
    run_msm(out, impl, d_pts, d_scalars, true, n, false);
}

// --------------------------------------------------------- batch addition

void cuda_batch_add(blst_p1& out, const cuda_points_t& points, const uint32_t* indices, size_t n)
{
    CUZK_REQUIRE(n < max_points, "cuda_batch_add: too many points");
    if (n == 0) {
        out = infinity();
        return;
    }
    auto& impl = points.device().impl();
    impl.select();
    const unsigned grid = static_cast<unsigned>(impl.info.sm_count);
    const uint32_t nbuckets = grid * BATCH_ADD_BLOCK_SIZE / WARP_SZ;
    const size_t idx_bytes = align256(n * sizeof(uint32_t));
    const size_t bucket_bytes = align256((nbuckets + 1) * sizeof(bucket_mem_t));
    char* base = static_cast<char*>(impl.scratch_at_least(idx_bytes + bucket_bytes + 256));
    uint32_t* d_idx = upload_indices(impl, base, indices, n);
    auto* d_buckets = reinterpret_cast<bucket_mem_t*>(base + idx_bytes);
    auto* d_words = reinterpret_cast<uint32_t*>(base + idx_bytes + bucket_bytes);
    uint32_t* d_bad = d_words;
    uint32_t* d_count = d_words + 1;
    const uint32_t words[2] = {0, static_cast<uint32_t>(n)};
    CUZK_CUDA_OK(cudaMemcpyAsync(d_words, words, sizeof(words), cudaMemcpyHostToDevice,
                                 impl.stream(0)));
    check_indices<<<grid_for(impl, n, 256), 256, 0, impl.stream(0)>>>(
        d_idx, n, static_cast<uint32_t>(points.size()), d_bad);
    CUZK_CUDA_LAUNCHED(check_indices);
    require_no_bad_index(impl, d_bad);  // also keeps `words` alive until copied
    // sppark's list form: each entry an index, bit 31 a sign (never set here).
    batch_addition<bucket_t><<<grid, BATCH_ADD_BLOCK_SIZE, 0, impl.stream(0)>>>(
        d_buckets, static_cast<const affine_mem_t*>(points.device_data()), n, d_idx, *d_count);
    CUZK_CUDA_LAUNCHED(batch_addition);
    out = finish_sum(impl, d_buckets, nbuckets, d_buckets + nbuckets);
}

namespace {

// A bitmap sum's buckets and their total.
size_t sum_bucket_bytes(const cuda_device_t::impl_t& impl)
{
    return align256((bitmap_buckets<bucket_t, affine_mem_t>(impl) + 1) * sizeof(bucket_mem_t));
}

// The sum of the points whose bit is set in d_bitmap (device), with its
// scratch (bitmap_sum_bytes) at `at`.
blst_p1 bitmap_sum(const cuda_points_t& points, const uint64_t* d_bitmap, size_t nbits, char* at)
{
    auto& impl = points.device().impl();
    const uint32_t nbuckets = bitmap_buckets<bucket_t, affine_mem_t>(impl);
    auto* d_buckets = reinterpret_cast<bucket_mem_t*>(at);
    launch_ones_sum<bucket_t, affine_mem_t>(impl, points.device_data(), d_bitmap, nbits, d_buckets,
                                             nbuckets, at + sum_bucket_bytes(impl));
    return finish_sum(impl, d_buckets, nbuckets, d_buckets + nbuckets);
}

// The scratch of bitmap_sum over nbits.
size_t bitmap_sum_bytes(const cuda_device_t::impl_t& impl, size_t nbits)
{
    return sum_bucket_bytes(impl) + ones_list_bytes(impl, nbits);
}

}  // namespace

void cuda_batch_add_bitmap(blst_p1& out, const cuda_points_t& points, const uint64_t* bitmap,
                           size_t nbits)
{
    CUZK_REQUIRE(nbits <= points.size(), "cuda_batch_add_bitmap: more bits than points");
    if (nbits == 0) {
        out = infinity();
        return;
    }
    auto& impl = points.device().impl();
    impl.select();
    const size_t map_bytes = align256(cuda_bitmap_device_bytes(nbits));
    char* at =
        static_cast<char*>(impl.scratch_at_least(map_bytes + bitmap_sum_bytes(impl, nbits)));
    const uint64_t* d_map = upload_bitmap(impl, at, bitmap, nbits);
    out = bitmap_sum(points, d_map, nbits, at + map_bytes);
}

void cuda_batch_add_bitmap_on_device(blst_p1& out, const cuda_points_t& points,
                                     const uint64_t* d_bitmap, size_t nbits)
{
    CUZK_REQUIRE(nbits <= points.size(), "cuda_batch_add_bitmap_on_device: more bits than points");
    if (nbits == 0) {
        out = infinity();
        return;
    }
    auto& impl = points.device().impl();
    impl.select();
    char* at = static_cast<char*>(impl.scratch_at_least(bitmap_sum_bytes(impl, nbits)));
    out = bitmap_sum(points, d_bitmap, nbits, at);
}

}  // namespace cuzk

// ------------------------------------------------------------ G2 MSM
//
// sppark's msm_t over XYZZ buckets of Fp2 (two threads per Fp2 element), on
// points gathered from the key's resident B_G2 points: B_G2's tail (the
// terms whose scalar is neither 0 nor 1) in the kernel region, which on
// real circuits otherwise keeps the CPU busy for most of a partition's
// epilogue. Here and not in g2.cu: pippenger.cuh defines kernels that are
// not templates, which a second translation unit would define again.

namespace cuzk {

namespace {

using point_g2_t = jacobian_t<fp2_t>;
using bucket_g2_t = xyzz_t<fp2_t>;
using affine_g2_t = bucket_g2_t::affine_t;
using msm_g2_t = msm_t<bucket_g2_t, point_g2_t, affine_g2_t, scalar_t>;

#ifndef __CUDA_ARCH__  // on the device an Fp2 element is split over two threads
static_assert(sizeof(point_g2_t) == sizeof(blst_p2), "Jacobian G2 size");
#endif
static_assert(sizeof(affine_g2_t::mem_t) == sizeof(blst_p2_affine), "affine G2 (device) size");
static_assert(sizeof(blst_p2_affine) % 16 == 0, "affine G2 points copy as 16-byte words");

constexpr unsigned words_per_g2_point = sizeof(blst_p2_affine) / 16;
// Terms per gathered chunk: bounds the scratch (192 bytes a point, 768 MiB
// a chunk) whatever the tail's length.
constexpr size_t chunk_terms = size_t(1) << 22;

size_t gather_g2_bytes(size_t n) { return align256(n * sizeof(blst_p2_affine)) + 256; }

blst_p2 infinity_g2()
{
    blst_p2 p;
    std::memset(&p, 0, sizeof(p));
    return p;
}

// sum_k d_scalars[k] * points[d_idx[k] - base] over k < n, canonical
// scalars, all on the device; `at`: scratch of gather_g2_bytes(min(n,
// chunk_terms)). Chunk by chunk: gather, then sppark's MSM.
blst_p2 gathered_msm(const cuda_g2_points_t& points, const uint32_t* d_idx, uint32_t base,
                     const blst_scalar* d_scalars, size_t n, char* at)
{
    auto& impl = points.device().impl();
    const size_t chunk = std::min(n, chunk_terms);
    msm_g2_t* msm = nullptr;
    CUZK_SPPARK("msm_t<G2>(nullptr, n, sizeof(affine_t), device)",
                msm = new msm_g2_t(nullptr, chunk, sizeof(affine_g2_t), impl.sppark_id));
    auto* d_pts = reinterpret_cast<uint4*>(at);
    auto* d_bad = reinterpret_cast<uint32_t*>(at + align256(chunk * sizeof(blst_p2_affine)));
    blst_p2 sum = infinity_g2();
    for (size_t lo = 0; lo < n; lo += chunk) {
        const size_t m = std::min(chunk, n - lo);
        CUZK_CUDA_OK(cudaMemsetAsync(d_bad, 0, sizeof(uint32_t), impl.stream(0)));
        gather_points<words_per_g2_point>
            <<<grid_for(impl, m * words_per_g2_point, 256), 256, 0, impl.stream(0)>>>(
                d_pts, static_cast<const uint4*>(points.device_data()), d_idx + lo, base, m,
                static_cast<uint32_t>(points.size()), d_bad);
        CUZK_CUDA_LAUNCHED(gather_points);
        try {
            require_no_bad_index(impl, d_bad);  // waits for the gather too
        } catch (const std::invalid_argument&) {
            delete msm;  // the device is fine: only the input was bad
            throw;
        }
        point_g2_t result;
        auto* scalars = const_cast<scalar_t*>(reinterpret_cast<const scalar_t*>(d_scalars + lo));
        RustError err = msm->invoke(result, dev_ptr_t<affine_g2_t>{reinterpret_cast<affine_g2_t*>(d_pts)},
                                    m, dev_ptr_t<scalar_t>{scalars}, false);
        // On failure msm_t's destructor would synchronise and throw from a
        // destructor (std::terminate); give up its buckets instead.
        check_rust_error(err, "msm_t<G2>::invoke(result, points, n, scalars)", __FILE__,
                         __LINE__);
        blst_p2 part;
        std::memcpy(&part, &result, sizeof(part));
        blst_p2_add_or_double(&sum, &sum, &part);
    }
    delete msm;
    return sum;
}

}  // namespace

void cuda_msm_gather(blst_p2& out, const cuda_g2_points_t& points, const uint32_t* indices,
                     const blst_scalar* scalars, size_t n)
{
    CUZK_REQUIRE(n < max_points, "cuda_msm_gather(G2): too many terms");
    out = infinity_g2();
    if (n == 0)
        return;
    auto& impl = points.device().impl();
    impl.select();
    const size_t idx_bytes = align256(n * sizeof(uint32_t));
    const size_t scalar_bytes = align256(n * sizeof(blst_scalar));
    char* at = static_cast<char*>(impl.scratch_at_least(
        idx_bytes + scalar_bytes + gather_g2_bytes(std::min(n, chunk_terms))));
    const uint32_t* d_idx = upload_indices(impl, at, indices, n);
    auto* d_scalars = reinterpret_cast<blst_scalar*>(at + idx_bytes);
    CUZK_CUDA_OK(cudaMemcpyAsync(d_scalars, scalars, n * sizeof(blst_scalar),
                                 cudaMemcpyHostToDevice, impl.stream(0)));
    CUZK_CUDA_OK(cudaStreamSynchronize(impl.stream(0)));
    out = gathered_msm(points, d_idx, 0, d_scalars, n, at + idx_bytes + scalar_bytes);
}

void cuda_msm_gather_on_device(blst_p2& out, const cuda_g2_points_t& points,
                               const uint32_t* d_indices, uint32_t base,
                               const blst_scalar* d_scalars, size_t n)
{
    CUZK_REQUIRE(n < max_points, "cuda_msm_gather_on_device(G2): too many terms");
    // sppark reads scalars in 16-byte words: a misaligned address would be
    // a sticky device error (the context lost), so refuse it here.
    CUZK_REQUIRE(reinterpret_cast<uintptr_t>(d_scalars) % 16 == 0,
                 "cuda_msm_gather_on_device(G2): device scalars must be 16-byte aligned");
    out = infinity_g2();
    if (n == 0)
        return;
    auto& impl = points.device().impl();
    impl.select();
    char* at = static_cast<char*>(impl.scratch_at_least(gather_g2_bytes(std::min(n, chunk_terms))));
    out = gathered_msm(points, d_indices, base, d_scalars, n, at);
}

}  // namespace cuzk
