// The shims behind supraseal-c2/src/bridge.rs. Rust hands blstrs values over
// as u64 limbs of blst's C structs (blstrs types are #[repr(transparent)]
// over them); these check the limb counts and view them as blst types. Each
// function that can fail runs its body (the *_shim and make_srs below) in
// guarded(), which reports a failure as a NativeError (bridge_error.hpp).
#include "cuzk/bridge.hpp"

#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuzk/check.hpp"
#include "cuzk/fr.hpp"
#include "cuzk/gather.hpp"
#include "cuzk/msm.hpp"
#include "cuzk/ntt.hpp"
#include "cuzk/prover.hpp"
#include "cuzk/thread_pool.hpp"
#include "supraseal-c2/src/bridge.rs.h"

namespace cuzk::ffi {

namespace {

static_assert(sizeof(blst_fr) == 4 * 8 && sizeof(blst_p1_affine) == 12 * 8 &&
                  sizeof(blst_p2_affine) == 24 * 8 && sizeof(blst_p1) == 18 * 8 &&
                  sizeof(blst_p2) == 36 * 8,
              "blst structs are plain u64 limbs");

template <class T>
constexpr size_t limbs_of = sizeof(T) / sizeof(uint64_t);

template <class T>
span_t<T> view(rust::Slice<const uint64_t> limbs, const char* what)
{
    CUZK_REQUIRE(limbs.size() % limbs_of<T> == 0,
                 std::string(what) + ": " + std::to_string(limbs.size()) +
                     " limbs is not a whole number of items");
    return {reinterpret_cast<const T*>(limbs.data()), limbs.size() / limbs_of<T>};
}

template <class T>
T* view_out(rust::Slice<uint64_t> limbs, size_t count, const char* what)
{
    CUZK_REQUIRE(limbs.size() == count * limbs_of<T>,
                 std::string(what) + ": expected room for " + std::to_string(count) + " items");
    return reinterpret_cast<T*>(limbs.data());
}

template <class T>
const T& view_one(rust::Slice<const uint64_t> limbs, const char* what)
{
    const span_t<T> items = view<T>(limbs, what);
    CUZK_REQUIRE(items.size == 1, std::string(what) + ": expected exactly one item");
    return items[0];
}

density_t view_density(rust::Slice<const uint64_t> words, size_t bits)
{
    return {{words.data(), words.size()}, bits};
}

// Rust shares one gpu_lock_t among threads through `&` (cxx's opaque types
// allow interior mutability); every member called through this is thread-safe.
gpu_lock_t& shared(const gpu_lock_t& lock) { return const_cast<gpu_lock_t&>(lock); }

template <class Affine, class Point>
void msm_shim(rust::Slice<const uint64_t> points, rust::Slice<const uint64_t> scalars,
              rust::Slice<uint64_t> out)
{
    const span_t<Affine> pts = view<Affine>(points, "msm points");
    const span_t<blst_fr> frs = view<blst_fr>(scalars, "msm scalars");
    CUZK_REQUIRE(pts.size == frs.size, "msm: " + std::to_string(pts.size) + " points but " +
                                           std::to_string(frs.size) + " scalars");
    Point* result = view_out<Point>(out, 1, "msm result");
    thread_pool_t& pool = thread_pool_t::global();
    std::vector<blst_scalar> canonical(frs.size);
    fr_to_scalars(canonical.data(), frs.data, frs.size, pool);
    msm(*result, gather_t<Affine>::contiguous(pts.data, pts.size),
        gather_t<blst_scalar>::contiguous(canonical.data(), canonical.size()), pool);
}

template <class Affine, class Point>
void batch_add_shim(rust::Slice<const uint64_t> points, rust::Slice<const size_t> indices,
                    rust::Slice<uint64_t> out)
{
    const span_t<Affine> pts = view<Affine>(points, "batch_add points");
    std::vector<const Affine*> chosen;
    chosen.reserve(indices.size());
    for (size_t i : indices) {
        CUZK_REQUIRE(i < pts.size, "batch_add: index " + std::to_string(i) + " out of range " +
                                       std::to_string(pts.size));
        chosen.push_back(&pts[i]);
    }
    Point* result = view_out<Point>(out, 1, "batch_add result");
    batch_add(*result, gather_t<Affine>::indirect(chosen.data(), chosen.size()),
              thread_pool_t::global());
}

circuit_t to_circuit(const CircuitView& v)
{
    circuit_t c;
    c.a = view<blst_fr>(v.a, "circuit a");
    c.b = view<blst_fr>(v.b, "circuit b");
    c.c = view<blst_fr>(v.c, "circuit c");
    c.input = view<blst_fr>(v.input, "circuit input");
    c.aux = view<blst_fr>(v.aux, "circuit aux");
    c.a_aux = view_density(v.a_aux_density, v.a_aux_bits);
    c.b_input = view_density(v.b_input_density, v.b_input_bits);
    c.b_aux = view_density(v.b_aux_density, v.b_aux_bits);
    return c;
}

ErrorKind kind_of(cuda_error_kind_t kind)
{
    switch (kind) {
    case cuda_error_kind_t::sticky:
        return ErrorKind::Sticky;
    case cuda_error_kind_t::out_of_memory:
        return ErrorKind::OutOfMemory;
    case cuda_error_kind_t::transient:
        break;
    }
    return ErrorKind::Transient;
}

std::unique_ptr<srs_t> make_srs(const SrsView& parts)
{
    auto srs = std::make_unique<srs_t>();
    srs->alpha_g1 = view_one<blst_p1_affine>(parts.alpha_g1, "srs alpha_g1");
    srs->beta_g1 = view_one<blst_p1_affine>(parts.beta_g1, "srs beta_g1");
    srs->beta_g2 = view_one<blst_p2_affine>(parts.beta_g2, "srs beta_g2");
    srs->delta_g1 = view_one<blst_p1_affine>(parts.delta_g1, "srs delta_g1");
    srs->delta_g2 = view_one<blst_p2_affine>(parts.delta_g2, "srs delta_g2");
    // Views, not copies: the Rust Srs keeps the vectors alive and unchanged.
    const auto borrow = [](auto& dst, auto src) { dst = {src.data, src.size}; };
    borrow(srs->h, view<blst_p1_affine>(parts.h, "srs h"));
    borrow(srs->l, view<blst_p1_affine>(parts.l, "srs l"));
    borrow(srs->a, view<blst_p1_affine>(parts.a, "srs a"));
    borrow(srs->b_g1, view<blst_p1_affine>(parts.b_g1, "srs b_g1"));
    borrow(srs->b_g2, view<blst_p2_affine>(parts.b_g2, "srs b_g2"));
    srs->validate();
    return srs;
}

void ntt_shim(rust::Slice<uint64_t> values, bool inverse, bool coset)
{
    CUZK_REQUIRE(values.size() % limbs_of<blst_fr> == 0, "ntt: not a whole number of scalars");
    const size_t n = values.size() / limbs_of<blst_fr>;
    blst_fr* v = reinterpret_cast<blst_fr*>(values.data());
    if (coset)
        coset_ntt(v, n, inverse, thread_pool_t::global());
    else
        cuzk::ntt(v, n, inverse, thread_pool_t::global());
}

PhaseTimes prove_shim(const gpu_lock_t& lock, const srs_t& srs,
                      rust::Slice<const CircuitView> circuits, rust::Slice<const uint64_t> r,
                      rust::Slice<const uint64_t> s, rust::Slice<uint64_t> proof_a,
                      rust::Slice<uint64_t> proof_b, rust::Slice<uint64_t> proof_c,
                      injected_fault_t fault)
{
    const size_t n = circuits.size();
    blst_p1_affine* a = view_out<blst_p1_affine>(proof_a, n, "proof a");
    blst_p2_affine* b = view_out<blst_p2_affine>(proof_b, n, "proof b");
    blst_p1_affine* c = view_out<blst_p1_affine>(proof_c, n, "proof c");
    std::vector<circuit_t> batch;
    batch.reserve(n);
    for (const CircuitView& v : circuits)
        batch.push_back(to_circuit(v));

    const prove_output_t out = cuzk::prove(shared(lock), srs, batch, view<blst_fr>(r, "r"),
                                           view<blst_fr>(s, "s"), fault);
    for (size_t i = 0; i < n; i++) {
        a[i] = out.proofs[i].a;
        b[i] = out.proofs[i].b;
        c[i] = out.proofs[i].c;
    }
    PhaseTimes t;
    t.preamble_ns = out.timings.preamble_ns;
    t.lock_wait_ns = out.timings.lock_wait_ns;
    t.kernel_ns = out.timings.kernel_ns;
    t.epilogue_ns = out.timings.epilogue_ns;
    t.lock_taken_ns = out.timings.lock_taken_ns;
    t.lock_released_ns = out.timings.lock_released_ns;
    t.backend = static_cast<uint8_t>(out.timings.backend);
    t.residency = static_cast<uint8_t>(out.timings.residency);
    t.srs_upload_ns = out.timings.srs_upload_ns;
    t.classify_ns = out.timings.classify_ns;
    t.backend_prepare_ns = out.timings.backend_prepare_ns;
    t.b_g2_ns = out.timings.b_g2_ns;
    return t;
}

}  // namespace

void record_error(NativeError& error, std::exception_ptr current) noexcept
{
    try {
        std::rethrow_exception(current);
    } catch (const cuda_error_t& e) {
        error.kind = kind_of(e.kind());
        error.code = e.code();
        error.call = rust::String::lossy(e.call());
        error.detail = rust::String::lossy(e.detail());
        error.location = rust::String::lossy(e.file() + ":" + std::to_string(e.line()));
        error.message = rust::String::lossy(e.what());
    } catch (const device_memory_error_t& e) {
        error.kind = ErrorKind::KeyTooLarge;
        error.device = e.device();
        error.needed = e.needed();
        error.available = e.available();
        error.message = rust::String::lossy(e.what());
    } catch (const std::invalid_argument& e) {
        error.kind = ErrorKind::InvalidInput;
        error.message = rust::String::lossy(e.what());
    } catch (const std::exception& e) {
        error.kind = ErrorKind::Internal;
        error.message = rust::String::lossy(e.what());
    } catch (...) {
        error.kind = ErrorKind::Internal;
        error.message = rust::String::lossy("an exception that is not a std::exception");
    }
}

std::unique_ptr<gpu_lock_t> new_gpu_lock(uint32_t device, NativeError& error) noexcept
{
    return guarded(error, [&] { return std::make_unique<gpu_lock_t>(device); });
}

uint32_t lock_device(const gpu_lock_t& lock) { return lock.device(); }

uint64_t lock_acquire(const gpu_lock_t& lock, NativeError& error) noexcept
{
    return guarded(error, [&] { return shared(lock).lock(); });
}

bool lock_try_acquire(const gpu_lock_t& lock) { return shared(lock).try_lock(); }
uint64_t lock_release(const gpu_lock_t& lock) { return shared(lock).unlock(); }
bool lock_lost(const gpu_lock_t& lock) { return lock.lost(); }

LockCounters lock_counters(const gpu_lock_t& lock)
{
    const gpu_lock_stats_t s = lock.stats();
    LockCounters out;
    out.acquisitions = s.acquisitions;
    out.wait_ns = s.wait_ns;
    out.hold_ns = s.hold_ns;
    return out;
}

std::unique_ptr<srs_t> new_srs(const SrsView& parts, NativeError& error) noexcept
{
    return guarded(error, [&] { return make_srs(parts); });
}

void msm_g1(rust::Slice<const uint64_t> points, rust::Slice<const uint64_t> scalars,
            rust::Slice<uint64_t> out, NativeError& error) noexcept
{
    guarded(error, [&] { msm_shim<blst_p1_affine, blst_p1>(points, scalars, out); });
}

void msm_g2(rust::Slice<const uint64_t> points, rust::Slice<const uint64_t> scalars,
            rust::Slice<uint64_t> out, NativeError& error) noexcept
{
    guarded(error, [&] { msm_shim<blst_p2_affine, blst_p2>(points, scalars, out); });
}

void batch_add_g1(rust::Slice<const uint64_t> points, rust::Slice<const size_t> indices,
                  rust::Slice<uint64_t> out, NativeError& error) noexcept
{
    guarded(error, [&] { batch_add_shim<blst_p1_affine, blst_p1>(points, indices, out); });
}

void batch_add_g2(rust::Slice<const uint64_t> points, rust::Slice<const size_t> indices,
                  rust::Slice<uint64_t> out, NativeError& error) noexcept
{
    guarded(error, [&] { batch_add_shim<blst_p2_affine, blst_p2>(points, indices, out); });
}

void ntt(rust::Slice<uint64_t> values, bool inverse, bool coset, NativeError& error) noexcept
{
    guarded(error, [&] { ntt_shim(values, inverse, coset); });
}

PhaseTimes prove(const gpu_lock_t& lock, const srs_t& srs, rust::Slice<const CircuitView> circuits,
                 rust::Slice<const uint64_t> r, rust::Slice<const uint64_t> s,
                 rust::Slice<uint64_t> proof_a, rust::Slice<uint64_t> proof_b,
                 rust::Slice<uint64_t> proof_c, uint8_t fault, NativeError& error) noexcept
{
    return guarded(error, [&] {
        return prove_shim(lock, srs, circuits, r, s, proof_a, proof_b, proof_c,
                          static_cast<injected_fault_t>(fault));
    });
}


uint8_t* host_alloc(size_t bytes) noexcept { return static_cast<uint8_t*>(cuzk::host_alloc(bytes)); }

void host_free(uint8_t* data) noexcept { cuzk::host_free(data); }

}  // namespace cuzk::ffi
