// Fixed-base scalar multiplication (cuzk/cuda/fixed_base.hpp): a window
// table of the base made on the host with blst, one XYZZ accumulator per
// scalar on the device (two threads per Fp2 element in G2), Jacobian out.

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

static_assert(sizeof(blst_scalar) == 8 * sizeof(uint32_t), "a scalar is 8 words");

// The fields of an XYZZ point and of a Jacobian point as stored in device
// memory (the field's mem_t: in Fp2 each thread of a pair owns one half).
template <class field_t>
struct xyzz_mem_t {
    typename field_t::mem_t X, Y, ZZZ, ZZ;
};
template <class field_t>
struct jacobian_mem_t {
    typename field_t::mem_t X, Y, Z;
};

// out[i] = scalars[i] * base for i < n, from the table of the base's
// multiples; `degree` threads per scalar. XYZZ (X, Y, ZZZ, ZZ) becomes
// Jacobian (X*ZZ, Y*ZZZ, ZZ): x = X/ZZ, y = Y/ZZZ either way.
template <class field_t>
__global__ void fixed_base_mul(jacobian_mem_t<field_t>* out,
                               const typename xyzz_t<field_t>::affine_t::mem_t* table,
                               const uint32_t* scalars, uint32_t n)
{
    using point_t = xyzz_t<field_t>;
    using affine_t = typename point_t::affine_t;
    const uint32_t i = (blockIdx.x * blockDim.x + threadIdx.x) / point_t::degree;
    if (i >= n)
        return;
    const uint32_t* k = scalars + 8 * size_t(i);
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
    out[i].X = static_cast<field_t>(xyzz.X) * zz;
    out[i].Y = static_cast<field_t>(xyzz.Y) * zzz;
    out[i].Z = zz;
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

template <class ops>
void fixed_base(cuda_device_t& device, const typename ops::affine& base,
                const blst_scalar* scalars, size_t n, typename ops::point* out)
{
    using field_t = typename ops::field_t;
    using affine_mem_t = typename xyzz_t<field_t>::affine_t::mem_t;
    static_assert(sizeof(affine_mem_t) == sizeof(typename ops::affine), "affine layout");
    static_assert(sizeof(jacobian_mem_t<field_t>) == sizeof(typename ops::point),
                  "Jacobian layout");
    CUZK_REQUIRE(scalars != nullptr || n == 0, "cuda_fixed_base: null scalars");
    CUZK_REQUIRE(out != nullptr || n == 0, "cuda_fixed_base: null output");
    if (n == 0)
        return;
    const std::vector<typename ops::affine> table = window_table<ops>(base);

    auto& impl = device.impl();
    impl.select();
    const cudaStream_t s = impl.stream(0);
    const size_t chunk = std::min(n, chunk_scalars);
    const device_block_t d_table(impl, table_len * sizeof(affine_mem_t));
    const device_block_t d_scalars(impl, chunk * sizeof(blst_scalar));
    const device_block_t d_out(impl, chunk * sizeof(typename ops::point));
    CUZK_CUDA_OK(cudaMemcpyAsync(d_table.as<void>(), table.data(),
                                 table_len * sizeof(affine_mem_t), cudaMemcpyHostToDevice, s));
    const unsigned per_block = block / xyzz_t<field_t>::degree;
    for (size_t at = 0; at < n; at += chunk) {
        const size_t m = std::min(chunk, n - at);
        CUZK_CUDA_OK(cudaMemcpyAsync(d_scalars.as<void>(), scalars + at, m * sizeof(blst_scalar),
                                     cudaMemcpyHostToDevice, s));
        const unsigned blocks = static_cast<unsigned>((m + per_block - 1) / per_block);
        fixed_base_mul<field_t><<<blocks, block, 0, s>>>(
            d_out.as<jacobian_mem_t<field_t>>(), d_table.as<const affine_mem_t>(),
            d_scalars.as<const uint32_t>(), static_cast<uint32_t>(m));
        CUZK_CUDA_LAUNCHED(fixed_base_mul);
        CUZK_CUDA_OK(cudaMemcpyAsync(out + at, d_out.as<void>(),
                                     m * sizeof(typename ops::point), cudaMemcpyDeviceToHost, s));
        CUZK_CUDA_OK(cudaStreamSynchronize(s));
    }
}

}  // namespace

void cuda_fixed_base_g1(cuda_device_t& device, const blst_p1_affine& base,
                        const blst_scalar* scalars, size_t n, blst_p1* out)
{
    fixed_base<g1_ops>(device, base, scalars, n, out);
}

void cuda_fixed_base_g2(cuda_device_t& device, const blst_p2_affine& base,
                        const blst_scalar* scalars, size_t n, blst_p2* out)
{
    fixed_base<g2_ops>(device, base, scalars, n, out);
}

}  // namespace cuzk
