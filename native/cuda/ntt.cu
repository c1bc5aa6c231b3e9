// NTTs over Fr (sppark's NTT on the context's streams), device Fr vectors,
// and the H polynomial.

#include "blst_compat.cuh"

#include <ff/bls12-381.hpp>
#include <ntt/ntt.cuh>

#include <cstring>
#include <string>
#include <vector>

#include "cuda_ok.cuh"
#include "device_impl.cuh"
#include "cuzk/check.hpp"
#include "cuzk/cuda/h_poly.hpp"
#include "cuzk/cuda/msm.hpp"
#include "cuzk/cuda/ntt.hpp"

static_assert(sizeof(fr_t) == sizeof(blst_fr), "Fr layout");

namespace cuzk {

namespace {

constexpr unsigned max_log_domain = MAX_LG_DOMAIN_SIZE;  // sppark's build-time limit (28)
// The first of the three streams the H polynomial runs on (a, b, c), away
// from stream 0, where the kernel region gathers and batch-adds meanwhile.
constexpr int h_stream = 1;

unsigned log2_exact(size_t n)
{
    unsigned k = 0;
    while ((size_t(1) << k) < n)
        k++;
    return k;
}

fr_t to_sppark(const blst_fr& a)
{
    fr_t r;
    std::memcpy(&r, &a, sizeof(r));
    return r;
}

blst_fr from_sppark(const fr_t& a)
{
    blst_fr r;
    std::memcpy(&r, &a, sizeof(r));
    return r;
}

// a[i] *= b[i]: the coset values of A*B.
__launch_bounds__(256) __global__
void h_product(fr_t* __restrict__ a, const fr_t* __restrict__ b, size_t n)
{
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
         i += size_t(gridDim.x) * blockDim.x) {
        fr_t x = a[i];
        x *= b[i];
        a[i] = x;
    }
}

// a[i] = (a[i] - c[i]) * z_inv: from the coefficients of A*B mod (x^n - g^n)
// and of C, those of H (both in the same, bit-reversed, order).
__launch_bounds__(256) __global__
void h_quotient(fr_t* __restrict__ a, const fr_t* __restrict__ c, fr_t z_inv, size_t n)
{
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
         i += size_t(gridDim.x) * blockDim.x) {
        fr_t x = a[i];
        x -= c[i];
        x *= z_inv;
        a[i] = x;
    }
}

// sppark's in-place bit reversal (protected in its NTT class).
struct permute_t : NTT {
    static void bit_reverse(fr_t* data, unsigned log_n, stream_t& stream)
    {
        bit_rev(data, data, log_n, stream);
    }
};

void ntt_on(stream_t& stream, void* data, unsigned log_n, NTT::InputOutputOrder order,
            NTT::Direction direction, NTT::Type type)
{
    if (log_n == 0)
        return;  // a single value: every transform here is the identity
    CUZK_SPPARK("NTT::Base_dev_ptr",
                NTT::Base_dev_ptr(stream, static_cast<fr_t*>(data), log_n, order, direction, type));
}

}  // namespace

// ---------------------------------------------------------------- buffers

cuda_fr_buffer_t::cuda_fr_buffer_t(cuda_device_t& device, size_t n) : device_(device), size_(n)
{
    data_ = device.impl().alloc(n * sizeof(blst_fr));
}

cuda_fr_buffer_t::~cuda_fr_buffer_t() { device_.impl().release(data_, size_ * sizeof(blst_fr)); }

void cuda_fr_buffer_t::upload(const blst_fr* host, size_t n, size_t offset)
{
    CUZK_REQUIRE(offset <= size_ && n <= size_ - offset, "cuda_fr_buffer_t::upload: out of range");
    if (n == 0)
        return;
    auto& impl = device_.impl();
    impl.select();
    CUZK_CUDA_OK(cudaMemcpyAsync(static_cast<blst_fr*>(data_) + offset, host, n * sizeof(blst_fr),
                                 cudaMemcpyHostToDevice, impl.stream(0)));
    CUZK_CUDA_OK(cudaStreamSynchronize(impl.stream(0)));
}

void cuda_fr_buffer_t::download(blst_fr* host, size_t n, size_t offset) const
{
    CUZK_REQUIRE(offset <= size_ && n <= size_ - offset, "cuda_fr_buffer_t::download: out of range");
    if (n == 0)
        return;
    auto& impl = device_.impl();
    impl.select();
    CUZK_CUDA_OK(cudaMemcpyAsync(host, static_cast<const blst_fr*>(data_) + offset,
                                 n * sizeof(blst_fr), cudaMemcpyDeviceToHost, impl.stream(0)));
    CUZK_CUDA_OK(cudaStreamSynchronize(impl.stream(0)));
}

void cuda_fr_buffer_t::zero(size_t offset, size_t n)
{
    CUZK_REQUIRE(offset <= size_ && n <= size_ - offset, "cuda_fr_buffer_t::zero: out of range");
    if (n == 0)
        return;
    auto& impl = device_.impl();
    impl.select();
    CUZK_CUDA_OK(cudaMemsetAsync(static_cast<blst_fr*>(data_) + offset, 0, n * sizeof(blst_fr),
                                 impl.stream(0)));
    CUZK_CUDA_OK(cudaStreamSynchronize(impl.stream(0)));
}

// ------------------------------------------------------------------- NTTs

void cuda_ntt(cuda_fr_buffer_t& values, unsigned log_n, bool inverse, bool coset)
{
    CUZK_REQUIRE(log_n <= max_log_domain, "cuda_ntt: domain above 2^28");
    CUZK_REQUIRE((size_t(1) << log_n) <= values.size(), "cuda_ntt: buffer shorter than the domain");
    auto& impl = values.device().impl();
    impl.select();
    ntt_on(impl.sppark_stream(0), values.device_data(), log_n, NTT::InputOutputOrder::NN,
           inverse ? NTT::Direction::inverse : NTT::Direction::forward,
           coset ? NTT::Type::coset : NTT::Type::standard);
    CUZK_CUDA_OK(cudaStreamSynchronize(impl.stream(0)));
}

void cuda_ntt(cuda_device_t& device, blst_fr* values, size_t n, bool inverse, bool coset)
{
    CUZK_REQUIRE(n != 0 && (n & (n - 1)) == 0, "cuda_ntt: n must be a power of two");
    cuda_fr_buffer_t buffer(device, n);
    buffer.upload(values, n);
    cuda_ntt(buffer, log2_exact(n), inverse, coset);
    buffer.download(values, n);
}

blst_fr cuda_ntt_root_of_unity(unsigned log_n)
{
    CUZK_REQUIRE(log_n <= 32, "cuda_ntt_root_of_unity: log_n above 32");
    return from_sppark(forward_roots_of_unity[log_n]);
}

blst_fr cuda_ntt_coset_generator() { return from_sppark(group_gen); }

// ------------------------------------------------------------ H polynomial

cuda_h_poly_t::cuda_h_poly_t(cuda_device_t& device, size_t domain)
    : device_(device), domain_(domain), log_domain_(log2_exact(domain))
{
    CUZK_REQUIRE(domain >= 2 && (domain & (domain - 1)) == 0,
                 "cuda_h_poly_t: the domain must be a power of two >= 2");
    CUZK_REQUIRE(log_domain_ <= max_log_domain, "cuda_h_poly_t: domain above 2^28");
    a_ = std::make_unique<cuda_fr_buffer_t>(device, domain);
    b_ = std::make_unique<cuda_fr_buffer_t>(device, domain);
    c_ = std::make_unique<cuda_fr_buffer_t>(device, domain);
}

cuda_h_poly_t::~cuda_h_poly_t() = default;

blst_fr* cuda_h_poly_t::staging(unsigned which)
{
    CUZK_REQUIRE(which < 3, "cuda_h_poly_t::staging: which is 0 (a), 1 (b) or 2 (c)");
    if (staging_.data() == nullptr)
        staging_ = cuda_pinned_buffer_t(3 * domain_ * sizeof(blst_fr));
    return staging_.as<blst_fr>() + which * domain_;
}

void cuda_h_poly_t::compute_staged(size_t len)
{
    compute(staging(0), staging(1), staging(2), len);
}

cuda_circuit_upload_t::cuda_circuit_upload_t(int ordinal, const void* terms,
                                             size_t terms_bytes, const blst_fr* a,
                                             const blst_fr* b, const blst_fr* c, size_t len)
    : ordinal_(ordinal), terms_bytes_(align256(terms_bytes)), len_(len)
{
    CUZK_REQUIRE(terms_bytes == 0 || terms, "cuda_circuit_upload_t: null terms");
    CUZK_REQUIRE(len == 0 || (a && b && c), "cuda_circuit_upload_t: null input");
    CUZK_CUDA_OK(cudaSetDevice(ordinal));
    cudaStream_t stream = nullptr;
    CUZK_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    stream_ = stream;
    try {
        cudaEvent_t events[2] = {nullptr, nullptr};
        for (cudaEvent_t& e : events)
            CUZK_CUDA_OK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        terms_event_ = events[0];
        event_ = events[1];
        const size_t bytes = len * sizeof(blst_fr);
        const size_t total = terms_bytes_ + 3 * align256(bytes);
        if (total != 0)
            CUZK_CUDA_OK(cudaMallocAsync(&data_, total, stream));
        // The terms first: the kernel region's sums need them before the
        // H polynomial needs a, b, c.
        if (terms_bytes != 0)
            CUZK_CUDA_OK(
                cudaMemcpyAsync(data_, terms, terms_bytes, cudaMemcpyHostToDevice, stream));
        CUZK_CUDA_OK(cudaEventRecord(events[0], stream));
        const blst_fr* inputs[3] = {a, b, c};
        for (unsigned v = 0; v < 3 && len != 0; v++)
            CUZK_CUDA_OK(cudaMemcpyAsync(const_cast<blst_fr*>(device_data(v)), inputs[v], bytes,
                                         cudaMemcpyHostToDevice, stream));
        CUZK_CUDA_OK(cudaEventRecord(events[1], stream));
    } catch (...) {
        release();
        throw;
    }
}

cuda_circuit_upload_t::~cuda_circuit_upload_t() { release(); }

void cuda_circuit_upload_t::release() noexcept
{
    (void)cudaSetDevice(ordinal_);
    auto* stream = static_cast<cudaStream_t>(stream_);
    if (data_ != nullptr)
        (void)cudaFreeAsync(data_, stream);
    if (stream != nullptr) {
        (void)cudaStreamSynchronize(stream);
        (void)cudaStreamDestroy(stream);
    }
    for (void* e : {terms_event_, event_})
        if (e != nullptr)
            (void)cudaEventDestroy(static_cast<cudaEvent_t>(e));
    data_ = nullptr;
    stream_ = nullptr;
    terms_event_ = nullptr;
    event_ = nullptr;
    (void)cudaGetLastError();
}

void cuda_circuit_upload_t::wait_terms(cuda_device_t& device) const
{
    CUZK_REQUIRE(device.ordinal() == ordinal_, "cuda_circuit_upload_t: another device");
    auto& impl = device.impl();
    impl.select();
    CUZK_CUDA_OK(cudaStreamWaitEvent(impl.stream(0), static_cast<cudaEvent_t>(terms_event_), 0));
}

const blst_fr* cuda_circuit_upload_t::device_data(unsigned which) const noexcept
{
    return reinterpret_cast<const blst_fr*>(static_cast<const char*>(data_) + terms_bytes_ +
                                            which * align256(len_ * sizeof(blst_fr)));
}

void cuda_h_poly_t::compute(const cuda_circuit_upload_t& abc)
{
    start(abc);
    finish();
}

void cuda_h_poly_t::compute(const blst_fr* a, const blst_fr* b, const blst_fr* c, size_t len)
{
    start(a, b, c, len);
    finish();
}

void cuda_h_poly_t::start(const cuda_circuit_upload_t& abc)
{
    CUZK_REQUIRE(abc.ordinal() == device_.ordinal(),
                 "cuda_h_poly_t::compute: a, b, c were uploaded to another device");
    const blst_fr* inputs[3] = {abc.device_data(0), abc.device_data(1), abc.device_data(2)};
    compute_from(inputs, abc.len(), abc.ready());
}

void cuda_h_poly_t::start(const blst_fr* a, const blst_fr* b, const blst_fr* c, size_t len)
{
    CUZK_REQUIRE(len == 0 || (a && b && c), "cuda_h_poly_t::compute: null input");
    const blst_fr* inputs[3] = {a, b, c};
    compute_from(inputs, len, nullptr);
}

void cuda_h_poly_t::finish()
{
    auto& impl = device_.impl();
    impl.select();
    // Streams 2 and 3 were joined into stream 1 before the combination.
    CUZK_CUDA_OK(cudaStreamSynchronize(impl.stream(h_stream)));
}

void cuda_h_poly_t::compute_from(const blst_fr* const host_or_device[3], size_t len,
                                 void* device_event)
{
    CUZK_REQUIRE(len <= domain_, "cuda_h_poly_t::compute: more values than the domain");
    const bool on_device = device_event != nullptr;
    auto& impl = device_.impl();
    impl.select();

    // 1/(g^n - 1): Z = x^n - 1 is that constant on the coset g<w>.
    blst_fr g = from_sppark(group_gen);
    for (unsigned i = 0; i < log_domain_; i++)
        blst_fr_sqr(&g, &g);
    blst_fr one;
    const uint64_t one_words[4] = {1, 0, 0, 0};
    blst_fr_from_uint64(&one, one_words);
    blst_fr z, z_inv;
    blst_fr_sub(&z, &g, &one);
    blst_fr_eucl_inverse(&z_inv, &z);

    // a, b, c each on its own stream (h_stream + 0..2): copy (async when
    // pinned; pageable input is first copied into staging(v) on several
    // threads, overlapping the GPU work of the vectors before it), pad, iNTT
    // to bit-reversed coefficients; a and b then go by a coset NTT to their
    // values on g<w> in natural order. C needs no coset values: it enters H
    // linearly (below), so six NTTs instead of seven.
    const blst_fr* inputs[3] = {host_or_device[0], host_or_device[1], host_or_device[2]};
    const bool stage =
        !on_device && impl.stage_pageable && len * sizeof(blst_fr) >= (size_t(1) << 20);
    for (int v = 0; v < 3 && len != 0 && !on_device; v++) {
        for (int u = 0; u < 3 && staging_.data() != nullptr; u++) {
            const blst_fr* slot = staging_.as<blst_fr>() + u * domain_;
            const bool inside = inputs[v] >= slot && inputs[v] < slot + domain_;
            CUZK_REQUIRE(!inside || u == v, "cuda_h_poly_t::compute: staging(u) passed as input v != u");
        }
    }
    cuda_fr_buffer_t* buffers[3] = {a_.get(), b_.get(), c_.get()};
    for (int v = 0; v < 3; v++) {
        blst_fr* d = static_cast<blst_fr*>(buffers[v]->device_data());
        const cudaStream_t s = impl.stream(h_stream + v);
        if (stage && !cuda_is_pinned(inputs[v])) {
            blst_fr* slot = staging(v);
            parallel_copy(slot, inputs[v], len * sizeof(blst_fr));
            inputs[v] = slot;
        }
        if (on_device)
            CUZK_CUDA_OK(cudaStreamWaitEvent(s, static_cast<cudaEvent_t>(device_event), 0));
        if (len != 0)
            CUZK_CUDA_OK(cudaMemcpyAsync(d, inputs[v], len * sizeof(blst_fr),
                                         on_device ? cudaMemcpyDeviceToDevice
                                                   : cudaMemcpyHostToDevice,
                                         s));
        if (len < domain_)
            CUZK_CUDA_OK(cudaMemsetAsync(d + len, 0, (domain_ - len) * sizeof(blst_fr), s));
        ntt_on(impl.sppark_stream(h_stream + v), d, log_domain_, NTT::InputOutputOrder::NR,
               NTT::Direction::inverse, NTT::Type::standard);
        if (v < 2)
            ntt_on(impl.sppark_stream(h_stream + v), d, log_domain_, NTT::InputOutputOrder::RN,
                   NTT::Direction::forward, NTT::Type::coset);
        CUZK_CUDA_OK(cudaEventRecord(impl.events[h_stream + v], s));
    }
    const cudaStream_t s0 = impl.stream(h_stream);
    CUZK_CUDA_OK(cudaStreamWaitEvent(s0, impl.events[h_stream + 1], 0));

    const unsigned block = 256;
    size_t blocks = (domain_ + block - 1) / block;
    const size_t cap = size_t(impl.info.sm_count) * 16;
    const unsigned grid = static_cast<unsigned>(blocks < cap ? blocks : cap);
    fr_t* a = static_cast<fr_t*>(a_->device_data());
    h_product<<<grid, block, 0, s0>>>(a, static_cast<const fr_t*>(b_->device_data()), domain_);
    CUZK_CUDA_LAUNCHED(h_product);

    // The coset iNTT of A*B's values gives A*B mod (x^n - g^n). With
    // A*B - C = H Z, Z = x^n - 1 and deg H, deg C < n, that is C + (g^n - 1) H:
    // H = (A*B mod (x^n - g^n) - C) / (g^n - 1), the same vector the coset
    // iNTT of (A*B - C) / Z's values gives (it is linear, and C's coset
    // values go back to C), for any a, b, c. Both transforms leave their
    // output bit-reversed; one reversal puts H in natural order.
    stream_t& sp0 = impl.sppark_stream(h_stream);
    ntt_on(sp0, a, log_domain_, NTT::InputOutputOrder::NR, NTT::Direction::inverse,
           NTT::Type::coset);
    CUZK_CUDA_OK(cudaStreamWaitEvent(s0, impl.events[h_stream + 2], 0));
    // For the table MSM, 1/(g^n - 1) goes in as the integer it is rather
    // than in Montgomery form: the product (x R)(z) / R = x z comes out as
    // a canonical integer (below r), the form the MSM's digits need. And
    // the MSM reads H in the bit-reversed order the transforms leave.
    fr_t factor = to_sppark(z_inv);
    if (output_ == output_t::for_table) {
        uint64_t words[4];
        blst_uint64_from_fr(words, &z_inv);
        std::memcpy(&factor, words, sizeof(factor));
    }
    h_quotient<<<grid, block, 0, s0>>>(a, static_cast<const fr_t*>(c_->device_data()), factor,
                                       domain_);
    CUZK_CUDA_LAUNCHED(h_quotient);
    if (log_domain_ != 0 && output_ == output_t::natural)
        permute_t::bit_reverse(a, log_domain_, sp0);
    computed_ = output_;
}

cuda_scalar_layout_t cuda_h_poly_t::layout() const noexcept
{
    if (computed_ == output_t::natural)
        return {};
    return cuda_scalar_layout_t{true, log_domain_};
}

void cuda_h_poly_t::download(blst_fr* out) const
{
    a_->download(out, domain_);
    if (computed_ == output_t::natural)
        return;
    // Canonical integers in bit-reversed order: back to Montgomery form in
    // natural order (tests and diagnostics only).
    std::vector<blst_fr> raw(out, out + domain_);
    for (size_t p = 0; p < domain_; p++) {
        uint64_t words[4];
        std::memcpy(words, &raw[p], sizeof(words));
        size_t g = 0;
        for (unsigned bit = 0; bit < log_domain_; bit++)
            g |= ((p >> bit) & 1) << (log_domain_ - 1 - bit);
        blst_fr_from_uint64(&out[g], words);
    }
}

void cuda_h_poly_t::msm(blst_p1& out, const cuda_points_t& h_points) const
{
    CUZK_REQUIRE(h_points.size() >= domain_ - 1, "cuda_h_poly_t::msm: fewer h points than domain - 1");
    CUZK_REQUIRE(computed_ == output_t::natural,
                 "cuda_h_poly_t::msm: H was left for the table MSM (set_output)");
    cuda_msm(out, h_points, *a_, domain_ - 1);
}

}  // namespace cuzk
