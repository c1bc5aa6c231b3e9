// Fixed-base scalar multiplication (cuzk/cuda/fixed_base.hpp): a window
// table of the base made on the host with blst, one XYZZ accumulator per
// scalar on the device (two threads per Fp2 element in G2), affine out.

#include "blst_compat.cuh"

#include "sppark_g1.cuh"
#include <ff/bls12-381-fp2.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_ok.cuh"
#include "device_impl.cuh"
#include "cuzk/check.hpp"
#include "cuzk/cuda/fixed_base.hpp"

namespace cuzk {

namespace {

constexpr uint32_t window_bits = 8;
constexpr uint32_t digits = 1u << window_bits;          // table row length
constexpr uint32_t windows = 256 / window_bits;         // covers every scalar < 2^256
constexpr size_t table_len = size_t(windows) * digits;  // row w, digit d at w * 256 + d
constexpr size_t chunk_scalars = size_t(1) << 22;       // per upload/launch/download
constexpr unsigned block = 128;

static_assert(sizeof(blst_fr) == 8 * sizeof(uint32_t), "a scalar is 8 words");

// The fields of an XYZZ point and of an affine point as stored in device
// memory (the field's mem_t: in Fp2 each thread of a pair owns one half).
// The affine layout is blst's: x, y, and zeros for the point at infinity.
template <class field_t>
struct xyzz_mem_t {
    typename field_t::mem_t X, Y, ZZZ, ZZ;
};
template <class field_t>
struct affine_out_mem_t {
    typename field_t::mem_t X, Y;
};

// out[i] = scalars[i] * base for i < n (n > 0), from the table of the base's
// multiples, `degree` threads per scalar. Scalars arrive in Montgomery form
// (blst's fr) and are made canonical here; each XYZZ sum (x = X/ZZ,
// y = Y/ZZZ) is made affine with one inversion, 1/(ZZ*ZZZ). The inversion
// pairs neighbouring threads, so threads past the end repeat the last
// scalar instead of leaving early, and only store nothing.
template <class field_t>
__global__ void fixed_base_mul(affine_out_mem_t<field_t>* out,
                               const typename xyzz_t<field_t>::affine_t::mem_t* table,
                               const fr_t* scalars, uint32_t n)
{
    using point_t = xyzz_t<field_t>;
    using affine_t = typename point_t::affine_t;
    const uint32_t at = (blockIdx.x * blockDim.x + threadIdx.x) / point_t::degree;
    const uint32_t i = at < n ? at : n - 1;
    fr_t k = scalars[i];
    k.from();
    point_t acc;
    acc = static_cast<affine_t>(table[0]);  // digit 0: the point at infinity
#pragma unroll 1
    for (uint32_t w = 0; w < windows; w++) {
        const uint32_t d = (k[w / 4] >> (window_bits * (w % 4))) & (digits - 1);
        if (d != 0)
            acc.add(static_cast<affine_t>(table[w * digits + d]));
    }
    typename point_t::mem_t stored;
    stored = acc;
    const auto& xyzz = reinterpret_cast<const xyzz_mem_t<field_t>&>(stored);
    const field_t zz = xyzz.ZZ;
    const field_t zzz = xyzz.ZZZ;
    field_t denominator = zz * zzz;
    const bool infinity = denominator.is_zero();
    if (infinity)
        denominator = field_t::one();
    const field_t inverse = denominator.reciprocal();
    const field_t x = static_cast<field_t>(xyzz.X) * (zzz * inverse);
    const field_t y = static_cast<field_t>(xyzz.Y) * (zz * inverse);
    if (at < n) {
        out[i].X = czero(x, infinity);
        out[i].Y = czero(y, infinity);
    }
}

// The blst functions of one group, for the table.
struct g1_ops {
    using affine = blst_p1_affine;
    using point = blst_p1;
    using field_t = fp_t;
    static void from_affine(point* p, const affine* a) { blst_p1_from_affine(p, a); }
    static void add(point* r, const point* a, const point* b) { blst_p1_add_or_double(r, a, b); }
    static void dbl(point* r, const point* a) { blst_p1_double(r, a); }
    static void to_affine(affine* dst, const point* const* src, size_t n)
    {
        blst_p1s_to_affine(dst, src, n);
    }
};
struct g2_ops {
    using affine = blst_p2_affine;
    using point = blst_p2;
    using field_t = fp2_t;
    static void from_affine(point* p, const affine* a) { blst_p2_from_affine(p, a); }
    static void add(point* r, const point* a, const point* b) { blst_p2_add_or_double(r, a, b); }
    static void dbl(point* r, const point* a) { blst_p2_double(r, a); }
    static void to_affine(affine* dst, const point* const* src, size_t n)
    {
        blst_p2s_to_affine(dst, src, n);
    }
};

// d * 2^(8w) * base at w * 256 + d; zeros (infinity) at d = 0.
template <class ops>
std::vector<typename ops::affine> window_table(const typename ops::affine& base)
{
    std::vector<typename ops::point> multiples(table_len);
    typename ops::point row_base;
    ops::from_affine(&row_base, &base);
    for (uint32_t w = 0; w < windows; w++) {
        typename ops::point* row = &multiples[size_t(w) * digits];
        row[1] = row_base;
        for (uint32_t d = 2; d < digits; d++)
            ops::add(&row[d], &row[d - 1], &row_base);
        for (uint32_t b = 0; b < window_bits; b++)
            ops::dbl(&row_base, &row_base);
    }
    std::vector<typename ops::affine> table(table_len);
    for (uint32_t w = 0; w < windows; w++) {
        const size_t at = size_t(w) * digits;
        // blst reads the points contiguously from the first when the second
        // pointer is null.
        const typename ops::point* rows[2] = {&multiples[at + 1], nullptr};
        ops::to_affine(&table[at + 1], rows, digits - 1);
        std::memset(&table[at], 0, sizeof(table[at]));
    }
    return table;
}

// Device memory released on every path out.
class device_block_t {
public:
    device_block_t(cuda_device_t::impl_t& impl, size_t bytes)
        : impl_(impl), bytes_(bytes), ptr_(impl.alloc(bytes))
    {
    }
    ~device_block_t() { impl_.release(ptr_, bytes_); }
    device_block_t(const device_block_t&) = delete;
    device_block_t& operator=(const device_block_t&) = delete;
    template <class T>
    T* as() const noexcept
    {
        return static_cast<T*>(ptr_);
    }

private:
    cuda_device_t::impl_t& impl_;
    size_t bytes_;
    void* ptr_;
};

// Chunks alternate between two streams, each with its own buffers: the
// kernel of one chunk runs while the previous one's points are copied out
// (a copy into pageable memory holds the calling thread until it is done).
template <class ops>
void fixed_base(cuda_device_t& device, const typename ops::affine& base, const blst_fr* scalars,
                size_t n, typename ops::affine* out)
{
    using field_t = typename ops::field_t;
    using affine_mem_t = typename xyzz_t<field_t>::affine_t::mem_t;
    using out_mem_t = affine_out_mem_t<field_t>;
    static_assert(sizeof(affine_mem_t) == sizeof(typename ops::affine), "affine layout");
    static_assert(sizeof(out_mem_t) == sizeof(typename ops::affine), "affine output layout");
    static_assert(sizeof(fr_t) == sizeof(blst_fr), "scalar layout");
    CUZK_REQUIRE(scalars != nullptr || n == 0, "cuda_fixed_base: null scalars");
    CUZK_REQUIRE(out != nullptr || n == 0, "cuda_fixed_base: null output");
    if (n == 0)
        return;
    const std::vector<typename ops::affine> table = window_table<ops>(base);

    auto& impl = device.impl();
    impl.select();
    const size_t chunk = std::min(n, chunk_scalars);
    const device_block_t d_table(impl, table_len * sizeof(affine_mem_t));
    const device_block_t d_scalars[2] = {{impl, chunk * sizeof(blst_fr)},
                                         {impl, chunk * sizeof(blst_fr)}};
    const device_block_t d_out[2] = {{impl, chunk * sizeof(out_mem_t)},
                                     {impl, chunk * sizeof(out_mem_t)}};
    const cudaStream_t streams[2] = {impl.stream(0), impl.stream(1)};
    CUZK_CUDA_OK(cudaMemcpyAsync(d_table.as<void>(), table.data(),
                                 table_len * sizeof(affine_mem_t), cudaMemcpyHostToDevice,
                                 streams[0]));
    CUZK_CUDA_OK(cudaStreamSynchronize(streams[0]));
    const unsigned per_block = block / xyzz_t<field_t>::degree;
    const size_t chunks = (n + chunk - 1) / chunk;
    // Uploads chunk c and starts its kernel on its stream.
    auto start = [&](size_t c) {
        const size_t at = c * chunk, m = std::min(chunk, n - at);
        const cudaStream_t s = streams[c % 2];
        CUZK_CUDA_OK(cudaMemcpyAsync(d_scalars[c % 2].as<void>(), scalars + at,
                                     m * sizeof(blst_fr), cudaMemcpyHostToDevice, s));
        const unsigned blocks = static_cast<unsigned>((m + per_block - 1) / per_block);
        fixed_base_mul<field_t><<<blocks, block, 0, s>>>(
            d_out[c % 2].as<out_mem_t>(), d_table.as<const affine_mem_t>(),
            d_scalars[c % 2].as<const fr_t>(), static_cast<uint32_t>(m));
        CUZK_CUDA_LAUNCHED(fixed_base_mul);
    };
    start(0);
    for (size_t c = 0; c < chunks; c++) {
        if (c + 1 < chunks)
            start(c + 1);
        const size_t at = c * chunk, m = std::min(chunk, n - at);
        const cudaStream_t s = streams[c % 2];
        CUZK_CUDA_OK(cudaMemcpyAsync(out + at, d_out[c % 2].as<void>(), m * sizeof(out_mem_t),
                                     cudaMemcpyDeviceToHost, s));
        CUZK_CUDA_OK(cudaStreamSynchronize(s));
    }
}

}  // namespace

void cuda_fixed_base_g1(cuda_device_t& device, const blst_p1_affine& base,
                        const blst_fr* scalars, size_t n, blst_p1_affine* out)
{
    fixed_base<g1_ops>(device, base, scalars, n, out);
}

void cuda_fixed_base_g2(cuda_device_t& device, const blst_p2_affine& base,
                        const blst_fr* scalars, size_t n, blst_p2_affine* out)
{
    fixed_base<g2_ops>(device, base, scalars, n, out);
}

}  // namespace cuzk
