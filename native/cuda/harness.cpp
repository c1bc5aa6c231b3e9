// cuzk-cuda-harness: checks the CUDA backend against CPU references (blst)
// on pseudo-random inputs, then times it. Plain C++ (g++): it uses only the
// public headers in native/include/cuzk/cuda/.
//
//   cuzk-cuda-harness [--tests-only | --bench-only] [--sweep] [--table-sweep]
//                     [--plan-bench] [--seed N | --seed random] [--max-log K]
//
// The inputs come from a fixed seed by default, so that a failure seen once
// is seen again on the next run; `--seed random` draws one from the clock
// (for hunting rare cases). The seed is printed first either way, and
// `--seed N` replays a run.
// --sweep adds the MSM window-size sweep (the tuning behind auto_window_bias
// in msm.cu); --table-sweep times cuda_msm_table_t at several window widths
// instead of the default one; --plan-bench times only the table plans of
// the 2^27 partition and their variants (at 2^K points), instead of the
// benchmarks; --max-log K shrinks the benchmark (sizes are relative to
// 2^K, K <= 24).
// Exit status: 0 all checks passed, 1 a check failed, 2 usage or setup
// error, 77 no CUDA device.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <blst.h>

#include "cuzk/cuda/cuda.hpp"

using namespace cuzk;

namespace {

// ------------------------------------------------------------ utilities

unsigned hw_threads()
{
    const unsigned t = std::thread::hardware_concurrency();
    return t ? t : 1;
}

// f(begin, end, thread) over [0, n) split into one range per thread.
void parallel_for(size_t n, const std::function<void(size_t, size_t, unsigned)>& f,
                  size_t min_per_thread = 1024)
{
    unsigned t = hw_threads();
    if (n / min_per_thread < t)
        t = static_cast<unsigned>(std::max<size_t>(1, n / min_per_thread));
    if (t <= 1) {
        f(0, n, 0);
        return;
    }
    std::vector<std::thread> threads;
    const size_t chunk = (n + t - 1) / t;
    for (unsigned i = 0; i < t; i++) {
        const size_t b = std::min(n, i * chunk), e = std::min(n, b + chunk);
        threads.emplace_back([&f, b, e, i] { f(b, e, i); });
    }
    for (auto& th : threads)
        th.join();
}

struct rng_t {
    uint64_t s[4];
    explicit rng_t(uint64_t seed)
    {
        for (auto& w : s) {  // splitmix64
            seed += 0x9e3779b97f4a7c15ull;
            uint64_t z = seed;
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
            w = z ^ (z >> 31);
        }
    }
    uint64_t next()  // xoshiro256**
    {
        const uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = rotl(s[3], 45);
        return r;
    }
    uint64_t below(uint64_t n) { return next() % n; }
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
};

double now_ms()
{
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// ------------------------------------------------------------------- Fr

blst_fr fr_u64(uint64_t v)
{
    const uint64_t w[4] = {v, 0, 0, 0};
    blst_fr r;
    blst_fr_from_uint64(&r, w);
    return r;
}
blst_fr fr_add(const blst_fr& a, const blst_fr& b) { blst_fr r; blst_fr_add(&r, &a, &b); return r; }
blst_fr fr_sub(const blst_fr& a, const blst_fr& b) { blst_fr r; blst_fr_sub(&r, &a, &b); return r; }
blst_fr fr_mul(const blst_fr& a, const blst_fr& b) { blst_fr r; blst_fr_mul(&r, &a, &b); return r; }
blst_fr fr_inv(const blst_fr& a) { blst_fr r; blst_fr_eucl_inverse(&r, &a); return r; }
bool fr_eq(const blst_fr& a, const blst_fr& b) { return std::memcmp(&a, &b, sizeof(a)) == 0; }
blst_fr fr_zero() { return fr_u64(0); }
blst_fr fr_one() { return fr_u64(1); }

blst_fr fr_pow(const blst_fr& base, const uint64_t e[4])
{
    blst_fr acc = fr_one();
    for (int bit = 255; bit >= 0; bit--) {
        blst_fr_sqr(&acc, &acc);
        if ((e[bit / 64] >> (bit % 64)) & 1)
            blst_fr_mul(&acc, &acc, &base);
    }
    return acc;
}
blst_fr fr_pow(const blst_fr& base, uint64_t e)
{
    const uint64_t w[4] = {e, 0, 0, 0};
    return fr_pow(base, w);
}

blst_fr fr_random(rng_t& rng)
{
    uint8_t bytes[64];
    for (int i = 0; i < 8; i++) {
        const uint64_t w = rng.next();
        std::memcpy(bytes + 8 * i, &w, 8);
    }
    blst_scalar s;
    blst_scalar_from_le_bytes(&s, bytes, sizeof(bytes));
    blst_fr r;
    blst_fr_from_scalar(&r, &s);
    return r;
}

blst_scalar fr_to_scalar(const blst_fr& a)
{
    blst_scalar s;
    blst_scalar_from_fr(&s, &a);
    return s;
}

const blst_fr& fr_generator()
{
    static const blst_fr g = fr_u64(7);
    return g;
}

// ff's ROOT_OF_UNITY = 7^((r-1)/2^32), squared 32 - log_n times.
blst_fr fr_root_of_unity(unsigned log_n)
{
    const uint64_t t[4] = {0x53bda402fffe5bfeull << 32 | 0xffffffffull,  // (r-1) >> 32
                           0x3339d80809a1d805ull << 32 | 0x53bda402ull,
                           0x73eda753299d7d48ull << 32 | 0x3339d808ull, 0x73eda753ull};
    blst_fr w = fr_pow(fr_generator(), t);
    for (unsigned i = log_n; i < 32; i++)
        blst_fr_sqr(&w, &w);
    return w;
}

// ------------------------------------------------------ CPU transforms

void cpu_ntt(std::vector<blst_fr>& a, bool inverse)
{
    const size_t n = a.size();
    unsigned log_n = 0;
    while ((size_t(1) << log_n) < n)
        log_n++;
    for (size_t i = 1, j = 0; i < n; i++) {
        size_t bit = n >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j)
            std::swap(a[i], a[j]);
    }
    for (unsigned s = 1; s <= log_n; s++) {
        const size_t len = size_t(1) << s, half = len / 2;
        blst_fr w_len = fr_root_of_unity(s);
        if (inverse)
            w_len = fr_inv(w_len);
        std::vector<blst_fr> tw(half);
        tw[0] = fr_one();
        for (size_t j = 1; j < half; j++)
            tw[j] = fr_mul(tw[j - 1], w_len);
        for (size_t i = 0; i < n; i += len)
            for (size_t j = 0; j < half; j++) {
                const blst_fr u = a[i + j], v = fr_mul(a[i + j + half], tw[j]);
                a[i + j] = fr_add(u, v);
                a[i + j + half] = fr_sub(u, v);
            }
    }
    if (inverse) {
        const blst_fr n_inv = fr_inv(fr_u64(n));
        for (auto& x : a)
            x = fr_mul(x, n_inv);
    }
}

void cpu_coset_ntt(std::vector<blst_fr>& a, bool inverse)
{
    if (!inverse) {
        blst_fr p = fr_one();
        for (auto& x : a) {
            x = fr_mul(x, p);
            p = fr_mul(p, fr_generator());
        }
        cpu_ntt(a, false);
    } else {
        cpu_ntt(a, true);
        const blst_fr g_inv = fr_inv(fr_generator());
        blst_fr p = fr_one();
        for (auto& x : a) {
            x = fr_mul(x, p);
            p = fr_mul(p, g_inv);
        }
    }
}

// out[j] = sum_i a[i] * (shift * w^j)^i, w = the n-th root (inverse: w^-1,
// times 1/n, and the shift undone afterwards).
std::vector<blst_fr> naive_dft(const std::vector<blst_fr>& a, bool inverse, bool coset)
{
    const size_t n = a.size();
    unsigned log_n = 0;
    while ((size_t(1) << log_n) < n)
        log_n++;
    blst_fr w = fr_root_of_unity(log_n);
    if (inverse)
        w = fr_inv(w);
    std::vector<blst_fr> out(n);
    blst_fr wj = fr_one();
    for (size_t j = 0; j < n; j++) {
        blst_fr x = wj;
        if (coset && !inverse)
            x = fr_mul(x, fr_generator());
        blst_fr acc = fr_zero();
        for (size_t i = n; i-- > 0;)
            acc = fr_add(fr_mul(acc, x), a[i]);
        out[j] = acc;
        wj = fr_mul(wj, w);
    }
    if (inverse) {
        const blst_fr n_inv = fr_inv(fr_u64(n));
        const blst_fr g_inv = fr_inv(fr_generator());
        blst_fr p = fr_one();
        for (auto& x : out) {
            x = fr_mul(x, n_inv);
            if (coset) {
                x = fr_mul(x, p);
                p = fr_mul(p, g_inv);
            }
        }
    }
    return out;
}

// cuzk::h_coefficients' arithmetic: a, b, c padded to n, iNTT, coset NTT,
// (a*b - c) / (g^n - 1), coset iNTT.
std::vector<blst_fr> cpu_h(const blst_fr* a, const blst_fr* b, const blst_fr* c, size_t len, size_t n)
{
    std::vector<blst_fr> va(n, fr_zero()), vb(n, fr_zero()), vc(n, fr_zero());
    std::copy(a, a + len, va.begin());
    std::copy(b, b + len, vb.begin());
    std::copy(c, c + len, vc.begin());
    for (auto* v : {&va, &vb, &vc}) {
        cpu_ntt(*v, true);
        cpu_coset_ntt(*v, false);
    }
    const blst_fr z_inv = fr_inv(fr_sub(fr_pow(fr_generator(), n), fr_one()));
    for (size_t i = 0; i < n; i++)
        va[i] = fr_mul(fr_sub(fr_mul(va[i], vb[i]), vc[i]), z_inv);
    cpu_coset_ntt(va, true);
    return va;
}

// sum_i coeffs[i] * x^i, multi-threaded.
blst_fr poly_eval(const blst_fr* coeffs, size_t n, const blst_fr& x)
{
    std::vector<blst_fr> part(hw_threads(), fr_zero());
    parallel_for(n, [&](size_t b, size_t e, unsigned t) {
        blst_fr acc = fr_zero();
        for (size_t i = e; i-- > b;)
            acc = fr_add(fr_mul(acc, x), coeffs[i]);
        part[t] = fr_mul(acc, fr_pow(x, b));
    });
    blst_fr sum = fr_zero();
    for (auto& p : part)
        sum = fr_add(sum, p);
    return sum;
}

// The interpolants of a, b, c (values at w^i, i < n; zero past len) at x,
// x off the domain, by the barycentric formula
//   f(x) = (x^n - 1)/n * sum_i f_i w^i / (x - w^i).
void barycentric3(const blst_fr* a, const blst_fr* b, const blst_fr* c, size_t len, size_t n,
                  unsigned log_n, const blst_fr& x, blst_fr out[3])
{
    const blst_fr w = fr_root_of_unity(log_n);
    const unsigned T = hw_threads();
    std::vector<blst_fr> part(3 * T, fr_zero());
    parallel_for(len, [&](size_t bgn, size_t end, unsigned t) {
        const size_t m = end - bgn;
        std::vector<blst_fr> wi(m), d(m), prefix(m);
        blst_fr p = fr_pow(w, bgn);
        for (size_t i = 0; i < m; i++) {
            wi[i] = p;
            d[i] = fr_sub(x, p);
            p = fr_mul(p, w);
        }
        blst_fr acc = fr_one();
        for (size_t i = 0; i < m; i++) {
            prefix[i] = acc;
            acc = fr_mul(acc, d[i]);
        }
        blst_fr inv = fr_inv(acc);
        blst_fr sa = fr_zero(), sb = fr_zero(), sc = fr_zero();
        for (size_t i = m; i-- > 0;) {
            const blst_fr di_inv = fr_mul(inv, prefix[i]);
            inv = fr_mul(inv, d[i]);
            const blst_fr k = fr_mul(wi[i], di_inv);
            sa = fr_add(sa, fr_mul(a[bgn + i], k));
            sb = fr_add(sb, fr_mul(b[bgn + i], k));
            sc = fr_add(sc, fr_mul(c[bgn + i], k));
        }
        part[3 * t] = sa;
        part[3 * t + 1] = sb;
        part[3 * t + 2] = sc;
    });
    blst_fr xn = x;
    for (unsigned i = 0; i < log_n; i++)
        blst_fr_sqr(&xn, &xn);
    const blst_fr scale = fr_mul(fr_sub(xn, fr_one()), fr_inv(fr_u64(n)));
    for (int v = 0; v < 3; v++) {
        blst_fr s = fr_zero();
        for (unsigned t = 0; t < T; t++)
            s = fr_add(s, part[3 * t + v]);
        out[v] = fr_mul(s, scale);
    }
}

// ------------------------------------------------------------------- G1

blst_p1 p1_inf()
{
    blst_p1 p;
    std::memset(&p, 0, sizeof(p));
    return p;
}

blst_p1 p1_mult(const blst_p1& p, const blst_fr& k)
{
    const blst_scalar s = fr_to_scalar(k);
    blst_p1 r;
    blst_p1_mult(&r, &p, s.b, 255);
    return r;
}

blst_p1 p1_add(const blst_p1& a, const blst_p1& b)
{
    blst_p1 r;
    blst_p1_add_or_double(&r, &a, &b);
    return r;
}

std::vector<blst_p1_affine> random_points(size_t n, uint64_t seed)
{
    std::vector<blst_p1_affine> out(n);
    parallel_for(
        n,
        [&](size_t b, size_t e, unsigned t) {
            rng_t rng(seed * 1000003 + t);
            for (size_t i = b; i < e; i++) {
                const blst_p1 p = p1_mult(*blst_p1_generator(), fr_random(rng));
                blst_p1_to_affine(&out[i], &p);
            }
        },
        256);
    return out;
}

// P_i = B + i*S for i < n: cheap to make at any size, and any MSM over them
// has a closed form: sum s_i P_i = (sum s_i) B + (sum i s_i) S.
struct progression_t {
    blst_p1 B, S;
    std::vector<blst_p1_affine> points;
};

progression_t make_progression(size_t n, rng_t& rng)
{
    progression_t pr;
    pr.B = p1_mult(*blst_p1_generator(), fr_random(rng));
    pr.S = p1_mult(*blst_p1_generator(), fr_random(rng));
    pr.points.resize(n);
    blst_p1_affine s_aff;
    blst_p1_to_affine(&s_aff, &pr.S);
    parallel_for(n, [&](size_t b, size_t e, unsigned) {
        blst_p1 p = p1_add(p1_mult(pr.S, fr_u64(b)), pr.B);
        const size_t K = 1024;
        std::vector<blst_p1> buf(K);
        for (size_t i = b; i < e;) {
            const size_t k = std::min(K, e - i);
            for (size_t j = 0; j < k; j++) {
                buf[j] = p;
                blst_p1_add_or_double_affine(&p, &p, &s_aff);
            }
            const blst_p1* list[2] = {buf.data(), nullptr};
            blst_p1s_to_affine(&pr.points[i], list, k);
            i += k;
        }
    });
    return pr;
}

// The closed form for sum_k s_k P_{idx_k} (idx = null: idx_k = k).
blst_p1 progression_msm(const progression_t& pr, const blst_fr* s, const uint32_t* idx, size_t n)
{
    const unsigned T = hw_threads();
    std::vector<blst_fr> s1(T, fr_zero()), s2(T, fr_zero());
    parallel_for(n, [&](size_t b, size_t e, unsigned t) {
        blst_fr a = fr_zero(), c = fr_zero();
        for (size_t k = b; k < e; k++) {
            a = fr_add(a, s[k]);
            c = fr_add(c, fr_mul(fr_u64(idx ? idx[k] : k), s[k]));
        }
        s1[t] = a;
        s2[t] = c;
    });
    blst_fr a = fr_zero(), c = fr_zero();
    for (unsigned t = 0; t < T; t++) {
        a = fr_add(a, s1[t]);
        c = fr_add(c, s2[t]);
    }
    return p1_add(p1_mult(pr.B, a), p1_mult(pr.S, c));
}

// sum of P_{idx_k}: count*B + (sum idx_k)*S.
blst_p1 progression_sum(const progression_t& pr, const std::vector<uint32_t>& idx)
{
    const unsigned T = hw_threads();
    std::vector<uint64_t> part(T, 0);  // sums of < 2^31 indices, < 2^31 terms: fits 2^62
    parallel_for(idx.size(), [&](size_t b, size_t e, unsigned t) {
        uint64_t s = 0;
        for (size_t k = b; k < e; k++)
            s += idx[k];
        part[t] = s;
    });
    uint64_t total = 0;
    for (auto p : part)
        total += p;
    return p1_add(p1_mult(pr.B, fr_u64(idx.size())), p1_mult(pr.S, fr_u64(total)));
}

// The same in G2, for the G2 batch additions: P_i = B + i S, so that the
// sum of any subset is count*B + (sum of its indices)*S.
struct progression2_t {
    blst_p2 B, S;
    std::vector<blst_p2_affine> points;
};

blst_p2 p2_mult(const blst_p2& p, const blst_fr& k)
{
    const blst_scalar s = fr_to_scalar(k);
    blst_p2 out;
    blst_p2_mult(&out, &p, s.b, 255);
    return out;
}

progression2_t make_progression2(size_t n, rng_t& rng)
{
    progression2_t pr;
    pr.B = p2_mult(*blst_p2_generator(), fr_random(rng));
    pr.S = p2_mult(*blst_p2_generator(), fr_random(rng));
    pr.points.resize(n);
    blst_p2_affine s_aff;
    blst_p2_to_affine(&s_aff, &pr.S);
    parallel_for(n, [&](size_t b, size_t e, unsigned) {
        blst_p2 p = p2_mult(pr.S, fr_u64(b));
        blst_p2_add_or_double(&p, &p, &pr.B);
        const size_t K = 1024;
        std::vector<blst_p2> buf(K);
        for (size_t i = b; i < e;) {
            const size_t k = std::min(K, e - i);
            for (size_t j = 0; j < k; j++) {
                buf[j] = p;
                blst_p2_add_or_double_affine(&p, &p, &s_aff);
            }
            const blst_p2* list[2] = {buf.data(), nullptr};
            blst_p2s_to_affine(&pr.points[i], list, k);
            i += k;
        }
    });
    return pr;
}

// count*B + (sum of the set bits' indices)*S over bitmap[0..n).
blst_p2 progression2_sum(const progression2_t& pr, const std::vector<uint64_t>& bitmap, size_t n)
{
    uint64_t count = 0, total = 0;
    for (size_t i = 0; i < n; i++) {
        if ((bitmap[i / 64] >> (i % 64)) & 1) {
            count++;
            total += i;
        }
    }
    blst_p2 out = p2_mult(pr.B, fr_u64(count));
    const blst_p2 t = p2_mult(pr.S, fr_u64(total));
    blst_p2_add_or_double(&out, &out, &t);
    return out;
}

// CPU reference MSM: blst's Pippenger on ranges, on every thread.
blst_p1 cpu_msm(const blst_p1_affine* pts, const blst_scalar* sc, size_t n)
{
    std::vector<blst_p1_affine> p;
    std::vector<blst_scalar> s;
    p.reserve(n);
    s.reserve(n);
    for (size_t i = 0; i < n; i++)
        if (!blst_p1_affine_is_inf(&pts[i])) {  // no contribution; keep blst off that case
            p.push_back(pts[i]);
            s.push_back(sc[i]);
        }
    const unsigned T = hw_threads();
    std::vector<blst_p1> part(T, p1_inf());
    parallel_for(
        p.size(),
        [&](size_t b, size_t e, unsigned t) {
            blst_p1 acc = p1_inf();
            if (e - b < 64) {
                for (size_t i = b; i < e; i++) {
                    blst_p1 q, r;
                    blst_p1_from_affine(&q, &p[i]);
                    blst_p1_mult(&r, &q, s[i].b, 255);
                    acc = p1_add(acc, r);
                }
            } else {
                std::vector<uint64_t> scratch(blst_p1s_mult_pippenger_scratch_sizeof(e - b) / 8 + 1);
                const blst_p1_affine* pl[2] = {&p[b], nullptr};
                const byte* slist[2] = {s[b].b, nullptr};
                blst_p1s_mult_pippenger(&acc, pl, e - b, slist, 255, scratch.data());
            }
            part[t] = acc;
        },
        2048);
    blst_p1 sum = p1_inf();
    for (auto& q : part)
        sum = p1_add(sum, q);
    return sum;
}

// ---------------------------------------------------------- reporting

int g_failures = 0;
int g_checks = 0;

void check(bool ok, const std::string& what)
{
    g_checks++;
    if (!ok)
        g_failures++;
    std::printf("  [%s] %s\n", ok ? "ok" : "FAIL", what.c_str());
    std::fflush(stdout);
}

template <class F>
void guarded(const std::string& what, F&& f)
{
    try {
        f();
    } catch (const std::exception& e) {
        check(false, what + ": exception: " + e.what());
    }
}

struct row_t {
    std::string op, size, variant;
    double median_ms, min_ms;
    std::string check;
};
std::vector<row_t> g_rows;

struct timing_t {
    double median_ms, min_ms;
};

timing_t time_it(const std::function<void()>& f, int warmup = 2, int reps = 7)
{
    for (int i = 0; i < warmup; i++)
        f();
    std::vector<double> ms;
    for (int i = 0; i < reps; i++) {
        const double t0 = now_ms();
        f();
        ms.push_back(now_ms() - t0);
    }
    std::sort(ms.begin(), ms.end());
    return {ms[ms.size() / 2], ms[0]};
}

void add_row(const std::string& op, const std::string& size, const std::string& variant,
             timing_t t, bool ok, const std::string& check_name)
{
    g_rows.push_back({op, size, variant, t.median_ms, t.min_ms,
                      (ok ? "ok (" : "FAIL (") + check_name + ")"});
    check(ok, op + " " + size + " " + variant + " [" + check_name + "]");
    std::printf("    %-14s %-10s %-34s median %9.3f ms  min %9.3f ms\n", op.c_str(), size.c_str(),
                variant.c_str(), t.median_ms, t.min_ms);
    std::fflush(stdout);
}

std::string pow2(unsigned k) { return "2^" + std::to_string(k); }

size_t peak_used = 0;
void note_memory(int ordinal)
{
    const auto m = cuda_mem_info(ordinal);
    peak_used = std::max(peak_used, m.total_bytes - m.free_bytes);
}

// ---------------------------------------------------------------- tests

std::vector<blst_fr> scalars_pattern(size_t n, int pattern, rng_t& rng)
{
    std::vector<blst_fr> s(n);
    const blst_fr minus_one = fr_sub(fr_zero(), fr_one());
    for (size_t i = 0; i < n; i++) {
        switch (pattern) {
        case 0: s[i] = fr_random(rng); break;
        case 1: s[i] = fr_zero(); break;
        case 2: s[i] = fr_one(); break;
        case 3:  // mixed: 0, 1, -1, 2, small, r - small, random
            switch (rng.below(7)) {
            case 0: s[i] = fr_zero(); break;
            case 1: s[i] = fr_one(); break;
            case 2: s[i] = minus_one; break;
            case 3: s[i] = fr_u64(2); break;
            case 4: s[i] = fr_u64(rng.next() >> 32); break;
            case 5: s[i] = fr_sub(fr_zero(), fr_u64(rng.next() >> 20)); break;
            default: s[i] = fr_random(rng); break;
            }
            break;
        default:  // near r: the top of the range (sign handling in the digits)
            s[i] = fr_sub(fr_zero(), fr_u64(1 + (rng.next() >> 1)));
            break;
        }
    }
    return s;
}
const char* pattern_name[] = {"random", "all-0", "all-1", "mixed", "near-r"};

void test_roots()
{
    std::printf("== roots of unity: sppark's tables vs ff (7^((r-1)/2^32))^(2^(32-k))\n");
    bool all = true;
    for (unsigned k = 0; k <= 32; k++)
        all = all && fr_eq(cuda_ntt_root_of_unity(k), fr_root_of_unity(k));
    check(all, "forward 2^k-th roots, k = 0..32, equal ff's");
    check(fr_eq(cuda_ntt_coset_generator(), fr_generator()), "coset generator is 7");
    // the reference's own roots: w^(2^(k-1)) = -1, w^(2^k) = 1
    const blst_fr w = fr_root_of_unity(20);
    check(fr_eq(fr_pow(w, size_t(1) << 19), fr_sub(fr_zero(), fr_one())) &&
              fr_eq(fr_pow(w, size_t(1) << 20), fr_one()),
          "reference 2^20-th root is primitive");
}

void test_msm(cuda_device_t& dev, rng_t& rng)
{
    std::printf("== G1 MSM vs blst (random points, infinity points included)\n");
    const size_t N = 66536;  // 2^16 + 1000: not a power of two
    std::vector<blst_p1_affine> pts = random_points(N, rng.next());
    for (size_t i : {size_t(3), size_t(1000), size_t(65000)})
        std::memset(&pts[i], 0, sizeof(pts[i]));  // the point at infinity
    cuda_points_t dpts(dev, pts.data(), N);
    check(dpts.bytes() == N * sizeof(blst_p1_affine), "point set reports its bytes");

    for (size_t n : {size_t(1), size_t(2), size_t(3), size_t(31), size_t(32), size_t(33),
                     size_t(100), size_t(1000), size_t(1023), size_t(4097), size_t(65535), N}) {
        for (int pat = 0; pat < 5; pat++) {
            if (n > 4097 && n != N && pat != 0 && pat != 3)
                continue;
            const auto s = scalars_pattern(n, pat, rng);
            std::vector<blst_scalar> canon(n);
            for (size_t i = 0; i < n; i++)
                canon[i] = fr_to_scalar(s[i]);
            const blst_p1 want = cpu_msm(pts.data(), canon.data(), n);
            guarded("msm", [&] {
                blst_p1 got_m, got_c;
                cuda_msm(got_m, dpts, s.data(), n);
                cuda_msm(got_c, dpts, canon.data(), n);
                check(blst_p1_is_equal(&got_m, &want) && blst_p1_is_equal(&got_c, &want),
                      "msm n=" + std::to_string(n) + " " + pattern_name[pat] +
                          " (Montgomery and canonical scalars)");
            });
        }
    }

    // device-resident scalars
    guarded("msm device scalars", [&] {
        const size_t n = 5000;
        const auto s = scalars_pattern(n, 3, rng);
        std::vector<blst_scalar> canon(n);
        for (size_t i = 0; i < n; i++)
            canon[i] = fr_to_scalar(s[i]);
        cuda_fr_buffer_t ds(dev, n);
        ds.upload(s.data(), n);
        blst_p1 got;
        cuda_msm(got, dpts, ds, n);
        const blst_p1 want = cpu_msm(pts.data(), canon.data(), n);
        check(blst_p1_is_equal(&got, &want), "msm n=5000 mixed, device-resident scalars");
    });

    std::printf("== MSM over a gathered subset\n");
    for (size_t n : {size_t(1), size_t(17), size_t(1000), size_t(50000)}) {
        guarded("gather", [&] {
            std::vector<uint32_t> idx(n);
            for (auto& i : idx)
                i = static_cast<uint32_t>(rng.below(N));  // repeats allowed
            const auto s = scalars_pattern(n, n == 1000 ? 3 : 0, rng);
            std::vector<blst_scalar> canon(n);
            std::vector<blst_p1_affine> sub(n);
            for (size_t i = 0; i < n; i++) {
                canon[i] = fr_to_scalar(s[i]);
                sub[i] = pts[idx[i]];
            }
            const blst_p1 want = cpu_msm(sub.data(), canon.data(), n);
            blst_p1 got_m, got_c;
            cuda_msm_gather(got_m, dpts, idx.data(), s.data(), n);
            cuda_msm_gather(got_c, dpts, idx.data(), canon.data(), n);
            check(blst_p1_is_equal(&got_m, &want) && blst_p1_is_equal(&got_c, &want),
                  "gather msm n=" + std::to_string(n));
        });
    }
    guarded("gather bad index", [&] {
        std::vector<uint32_t> idx = {0, 1, static_cast<uint32_t>(N)};
        std::vector<blst_fr> s(3, fr_one());
        blst_p1 got;
        bool threw = false;
        try {
            cuda_msm_gather(got, dpts, idx.data(), s.data(), 3);
        } catch (const std::invalid_argument&) {
            threw = true;
        }
        check(threw, "an out-of-range index throws std::invalid_argument");
        blst_p1 again;
        std::vector<blst_scalar> c(1, fr_to_scalar(fr_u64(5)));
        cuda_msm(again, dpts, c.data(), 1);
        const blst_p1 want = cpu_msm(pts.data(), c.data(), 1);
        check(blst_p1_is_equal(&again, &want), "the context still works after that");
    });

    std::printf("== batch addition\n");
    for (size_t n : {size_t(0), size_t(1), size_t(5), size_t(1000), size_t(4097), N}) {
        guarded("batch add", [&] {
            std::vector<uint32_t> idx(n);
            for (size_t i = 0; i < n; i++)
                idx[i] = n == N ? static_cast<uint32_t>(i) : static_cast<uint32_t>(rng.below(N));
            blst_p1 want = p1_inf();
            for (auto i : idx) {
                blst_p1 q;
                blst_p1_from_affine(&q, &pts[i]);
                want = p1_add(want, q);
            }
            blst_p1 got;
            cuda_batch_add(got, dpts, idx.data(), n);
            check(blst_p1_is_equal(&got, &want), "batch add, index list n=" + std::to_string(n));
        });
    }
    for (size_t nbits : {size_t(1), size_t(63), size_t(64), size_t(65), size_t(1023), size_t(1024),
                         size_t(1025), size_t(40000), N}) {
        for (int density : {0, 50, 100}) {
            if (nbits < 1000 && density != 50)
                continue;
            guarded("bitmap", [&] {
                std::vector<uint64_t> map((nbits + 63) / 64 + 1, 0);
                blst_p1 want = p1_inf();
                for (size_t i = 0; i < nbits; i++)
                    if (rng.below(100) < static_cast<uint64_t>(density)) {
                        map[i / 64] |= uint64_t(1) << (i % 64);
                        blst_p1 q;
                        blst_p1_from_affine(&q, &pts[i]);
                        want = p1_add(want, q);
                    }
                // bits past nbits must be ignored
                for (size_t i = nbits; i < map.size() * 64; i++)
                    map[i / 64] |= uint64_t(1) << (i % 64);
                blst_p1 got;
                cuda_batch_add_bitmap(got, dpts, map.data(), nbits);
                check(blst_p1_is_equal(&got, &want), "batch add, bitmap nbits=" +
                                                         std::to_string(nbits) + " density " +
                                                         std::to_string(density) + "%");
            });
        }
    }
}

// The kernel region's sums from device-resident terms (cuda_circuit_upload_t):
// a bitmap, a tail's indices and canonical scalars in one pinned block, read
// for a window of the point set that starts at point `base` of it.
void test_device_terms(cuda_device_t& dev, rng_t& rng)
{
    std::printf("== sums from device-resident terms (a window of a point set)\n");
    const size_t N = 20000, base = 2048;
    std::vector<blst_p1_affine> pts = random_points(N, rng.next());
    std::memset(&pts[base + 7], 0, sizeof(pts[0]));  // infinity inside the window
    const size_t w = N - base;  // the window: points [base, N)
    cuda_points_t window(dev, pts.data() + base, w);
    // The block: bitmap of N bits (whole runs of 1024), tail indices, scalars.
    const size_t map_bytes = cuda_bitmap_device_bytes(N);
    const size_t tail = 777;
    const size_t sc_at = map_bytes + (tail * sizeof(uint32_t) + 255) / 256 * 256;
    cuda_pinned_buffer_t block(sc_at + tail * sizeof(blst_scalar));
    auto* map = block.as<uint64_t>();
    std::memset(map, 0, map_bytes);
    auto* idx = reinterpret_cast<uint32_t*>(block.as<char>() + map_bytes);
    auto* sc = reinterpret_cast<blst_scalar*>(block.as<char>() + sc_at);
    blst_p1 want_ones = p1_inf();
    for (size_t i = 0; i < N; i++) {
        if (rng.below(2) == 0)
            continue;
        map[i / 64] |= uint64_t(1) << (i % 64);
        if (i >= base) {
            blst_p1 q;
            blst_p1_from_affine(&q, &pts[i]);
            want_ones = p1_add(want_ones, q);
        }
    }
    std::vector<blst_p1_affine> sub(tail);
    for (size_t i = 0; i < tail; i++) {
        idx[i] = static_cast<uint32_t>(base + rng.below(w));
        sc[i] = fr_to_scalar(scalars_pattern(1, 0, rng)[0]);
        sub[i] = pts[idx[i]];
    }
    guarded("device terms", [&] {
        cuda_circuit_upload_t up(dev.ordinal(), block.data(), block.bytes(), nullptr, nullptr,
                                 nullptr, 0);
        up.wait_terms(dev);
        const char* d = static_cast<const char*>(up.terms());
        const auto* d_map = reinterpret_cast<const uint64_t*>(d);
        const auto* d_idx = reinterpret_cast<const uint32_t*>(d + map_bytes);
        const auto* d_sc = reinterpret_cast<const blst_scalar*>(d + sc_at);
        blst_p1 got;
        cuda_batch_add_bitmap_on_device(got, window, d_map + base / 64, w);
        check(blst_p1_is_equal(&got, &want_ones),
              "batch add, device bitmap of a window at point " + std::to_string(base));
        cuda_msm_gather_on_device(got, window, d_idx, static_cast<uint32_t>(base), d_sc, tail);
        const blst_p1 want_tail = cpu_msm(sub.data(), sc, tail);
        check(blst_p1_is_equal(&got, &want_tail),
              "gather msm, device indices (less the window's start) and scalars");
        cuda_msm_on_device(got, window, d_sc, tail);
        const blst_p1 want_dense = cpu_msm(pts.data() + base, sc, tail);
        check(blst_p1_is_equal(&got, &want_dense), "msm, canonical scalars on the device");
        bool threw = false;
        try {  // a window said to start at N: every index lies below it
            cuda_msm_gather_on_device(got, window, d_idx, static_cast<uint32_t>(N), d_sc, 1);
        } catch (const std::invalid_argument&) {
            threw = true;
        }
        check(threw, "a device index below the window's start throws std::invalid_argument");
        threw = false;
        try {  // scalars the MSM would read with misaligned vector loads
            cuda_msm_gather_on_device(got, window, d_idx, static_cast<uint32_t>(base),
                                      reinterpret_cast<const blst_scalar*>(d + sc_at + 4), 1);
        } catch (const std::invalid_argument&) {
            threw = true;
        }
        check(threw, "device scalars off a 16-byte boundary throw std::invalid_argument");
    });
}

// One table MSM of n scalars of pattern `pat` against blst's Pippenger.
void check_table_msm(const cuda_msm_table_t& table, const std::vector<blst_p1_affine>& pts,
                     cuda_fr_buffer_t& ds, size_t n, int pat, rng_t& rng, const std::string& what)
{
    const auto s = scalars_pattern(n, pat, rng);
    std::vector<blst_scalar> canon(n);
    for (size_t i = 0; i < n; i++)
        canon[i] = fr_to_scalar(s[i]);
    const blst_p1 want = cpu_msm(pts.data(), canon.data(), n);
    ds.upload(s.data(), n);
    blst_p1 got;
    table.msm(got, ds, n);
    check(blst_p1_is_equal(&got, &want),
          what + " n=" + std::to_string(n) + " " + pattern_name[pat]);
}

void test_msm_table(cuda_device_t& dev, rng_t& rng)
{
    std::printf("== G1 MSM over a precomputed table vs blst (infinity points included)\n");
    const size_t N = 66536;
    std::vector<blst_p1_affine> pts = random_points(N, rng.next());
    for (size_t i : {size_t(3), size_t(1000), size_t(65000)})
        std::memset(&pts[i], 0, sizeof(pts[i]));
    cuda_points_t dpts(dev, pts.data(), N);
    cuda_fr_buffer_t ds(dev, N);
    // (width, levels): c = 0 the default width; 4 and 8: many windows, few
    // buckets (long runs of one key); 22: more buckets than terms. Levels 0
    // = all; fewer make each level serve several windows (1: none stored).
    // Passes: terms a pass (0: the default, one pass here); fewer make the
    // later passes add into the buckets of the earlier ones.
    struct shape_t {
        unsigned c, levels;
        uint64_t pass_terms;
    };
    const shape_t shapes[] = {{0, 0, 0},  {4, 0, 0},  {8, 0, 0},       {13, 0, 0},
                              {22, 0, 0}, {0, 1, 0},  {8, 5, 0},       {13, 3, 0},
                              {16, 15, 0}, {0, 0, 100000}, {13, 3, 30011}};
    for (const auto& [c, levels, pass_terms] : shapes) {
        const std::string name = "c=" + std::to_string(c) + " levels=" + std::to_string(levels) +
                                 " pass=" + std::to_string(pass_terms);
        guarded("msm table " + name, [&] {
            cuda_msm_table_t table(dpts, c, levels, pass_terms);
            const unsigned want_c = c ? c : cuda_msm_table_t::default_window_bits(N);
            const unsigned k = cuda_msm_table_t::windows_for(want_c);
            const unsigned r = levels ? (k + levels - 1) / levels : 1;
            const unsigned want_levels = (k + r - 1) / r;
            const std::string what = "table c=" + std::to_string(want_c) + " levels=" +
                                     std::to_string(want_levels) +
                                     (pass_terms ? " passes of " + std::to_string(pass_terms) +
                                                       " terms"
                                                 : "");
            check(table.size() == N && table.window_bits() == want_c &&
                      table.levels() == want_levels &&
                      table.bytes() >= N * sizeof(blst_p1_affine) * (want_levels - 1) &&
                      table.bytes() <= cuda_msm_table_t::bytes_for(N, c, levels),
                  what + ": size, width, levels and bytes");
            blst_p1 got;
            table.msm(got, ds, 0);
            check(blst_p1_is_inf(&got), what + ": n = 0 is infinity");
            for (size_t n : {size_t(1), size_t(2), size_t(33), size_t(1000), size_t(4097), N}) {
                for (int pat = 0; pat < 5; pat++) {
                    if (n > 4097 && n != N && pat != 0 && pat != 3)
                        continue;
                    check_table_msm(table, pts, ds, n, pat, rng, what);
                }
            }
            bool threw = false;
            try {
                table.msm(got, ds, N + 1);
            } catch (const std::invalid_argument&) {
                threw = true;
            }
            check(threw, what + ": n > size throws");
        });
    }
    // One point and its negation, over and over (a few of a second point),
    // with scalars whose every 4-bit digit is 1: at c = 4 every term falls
    // in one bucket, so the accumulation meets P = A (a doubling) and P = -A
    // (the sum cancels).
    guarded("msm table repeated points", [&] {
        const size_t M = 40000;
        std::vector<blst_p1_affine> base = random_points(2, rng.next());
        std::vector<blst_p1_affine> rep(M);
        for (size_t i = 0; i < M; i++) {
            blst_p1 p;
            blst_p1_from_affine(&p, &base[i % 4 == 3 ? 1 : 0]);
            if (rng.below(2) == 1)
                blst_p1_cneg(&p, true);
            blst_p1_to_affine(&rep[i], &p);
        }
        cuda_points_t drep(dev, rep.data(), M);
        std::vector<blst_fr> s(M);
        std::vector<blst_scalar> canon(M);
        for (size_t i = 0; i < M; i++) {
            const uint64_t ones = 0x1111111111111111ull;
            const uint64_t small = 1 + rng.below(6);
            const uint64_t limbs[4] = {i % 5 == 0 ? small : ones, i % 5 == 0 ? 0 : ones,
                                       i % 5 == 0 ? 0 : ones, i % 5 == 0 ? 0 : ones};
            blst_fr_from_uint64(&s[i], limbs);
            canon[i] = fr_to_scalar(s[i]);
        }
        cuda_fr_buffer_t dsmall(dev, M);
        dsmall.upload(s.data(), M);
        const blst_p1 want = cpu_msm(rep.data(), canon.data(), M);
        // Both additions: cuzk's fused one (the default) and sppark's
        // (CUZK_MSM_ADD=sppark, read when a table is built).
        for (const char* add : {"fused", "sppark"}) {
            setenv("CUZK_MSM_ADD", add, 1);
            for (unsigned c : {0u, 4u, 13u}) {
                cuda_msm_table_t table(drep, c);
                blst_p1 got;
                table.msm(got, dsmall, M);
                check(blst_p1_is_equal(&got, &want),
                      std::string("table c=") + std::to_string(table.window_bits()) + ", " + add +
                          " addition: repeated and opposite points");
            }
            // Random points and scalars, several windows and chunks.
            cuda_msm_table_t table(dpts, 13, 3, 30011);
            check_table_msm(table, pts, ds, N, 0, rng,
                            std::string("table c=13 levels=3, passes of 30011 terms, ") + add +
                                " addition:");
        }
        unsetenv("CUZK_MSM_ADD");
    });
    guarded("msm table bad width", [&] {
        bool threw = false;
        try {
            cuda_msm_table_t table(dpts, 3);
        } catch (const std::invalid_argument&) {
            threw = true;
        }
        check(threw, "table: a width below 4 bits throws");
    });
    // Plans with sub-windows of different widths: the one the planner picks
    // at 2^27 with 3 levels (11 windows of 24, 23, 23, 23 bits: 256), the
    // same with the wide sub-window third (then it holds the top window),
    // three sub-windows, and one in passes of 30,011 terms; random, zero,
    // one, mixed and near-r scalars (the top window's largest digits).
    using plan_t = cuda_msm_table_t::plan_t;
    const plan_t plans[] = {plan_t{{24, 23, 23, 23}, 11}, plan_t{{23, 23, 24, 23}, 11},
                            plan_t{{13, 12, 12}, 21}, plan_t{{13, 12, 12}, 21, 50000},
                            plan_t{{9, 8}, 31, 30011}};
    for (const plan_t& plan : plans) {
        std::string name = "plan " + plan.widths_text() + ", " + std::to_string(plan.windows) +
                           " windows";
        if (plan.pass_terms != 0)
            name += ", passes of " + std::to_string(plan.pass_terms) + " terms";
        guarded("msm table " + name, [&] {
            cuda_msm_table_t table(dpts, plan);
            check(table.levels() == plan.levels() && table.plan().widths == plan.widths &&
                      table.bytes() <= cuda_msm_table_t::bytes_for(N, plan),
                  "table " + name + ": levels, widths and bytes");
            for (size_t n : {size_t(1), size_t(4097), N}) {
                for (int pat = 0; pat < 5; pat++) {
                    if (n == 1 && pat != 4)
                        continue;
                    check_table_msm(table, pts, ds, n, pat, rng, "table " + name);
                }
            }
        });
    }
    // Scalars as the H polynomial leaves them for the table: canonical
    // integers, bit-reversed (scalars[p] with P_rev(p)), n = 2^16 and
    // 2^16 - 1; a default table and a mixed plan.
    guarded("msm table canonical, bit-reversed scalars", [&] {
        const unsigned lg = 16;
        const size_t M = size_t(1) << lg;
        cuda_msm_table_t plain(dpts, 0, 4);
        cuda_msm_table_t mixed(dpts, plan_t{{13, 12, 12}, 21});
        for (int pat : {0, 3, 4}) {
            const auto s = scalars_pattern(M, pat, rng);
            std::vector<blst_scalar> canon(M);
            std::vector<blst_fr> laid(M);  // canonical words, bit-reversed
            for (size_t g = 0; g < M; g++) {
                canon[g] = fr_to_scalar(s[g]);
                size_t p = 0;
                for (unsigned bit = 0; bit < lg; bit++)
                    p |= ((g >> bit) & 1) << (lg - 1 - bit);
                uint64_t words[4];
                blst_uint64_from_fr(words, &s[g]);
                std::memcpy(&laid[p], words, sizeof(words));
            }
            ds.upload(laid.data(), M);
            for (size_t n : {M, M - 1}) {
                const blst_p1 want = cpu_msm(pts.data(), canon.data(), n);
                for (const cuda_msm_table_t* t : {&plain, &mixed}) {
                    blst_p1 got;
                    t->msm(got, ds, n, cuda_scalar_layout_t{true, lg});
                    check(blst_p1_is_equal(&got, &want),
                          std::string(t == &plain ? "default table" : "mixed plan") +
                              ", canonical bit-reversed scalars, n=" + std::to_string(n) + " " +
                              pattern_name[pat]);
                }
            }
        }
        bool threw = false;
        try {
            blst_p1 got;
            plain.msm(got, ds, M - 2, cuda_scalar_layout_t{true, lg});
        } catch (const std::invalid_argument&) {
            threw = true;
        }
        check(threw, "bit-reversed scalars with n other than 2^L or 2^L - 1 throw");
    });
    guarded("msm table plans", [&] {
        bool threw = false;
        try {  // 11 windows of 22 bits: 242 bits, short of a scalar
            cuda_msm_table_t table(dpts, plan_t{{22, 22, 22, 22}, 11});
        } catch (const std::invalid_argument&) {
            threw = true;
        }
        check(threw, "a plan whose windows cover 242 bits throws");
        threw = false;
        try {  // 23, 23, 23, 24 with 11 windows: 255 bits, the top digit could overflow
            cuda_msm_table_t table(dpts, plan_t{{23, 23, 23, 24}, 11});
        } catch (const std::invalid_argument&) {
            threw = true;
        }
        check(threw, "a plan whose windows cover 255 bits throws");
        // The planner (host arithmetic only): at 2^27 points, with room for
        // 3 levels, mixed buckets and a pass a sub-window, 11 windows (one
        // sub-window of 24 bits); at 2^23 (L), with room for every level,
        // 12 of 22 bits as before; with room for 3 levels of 22 bits only,
        // those.
        const size_t big = (size_t(1) << 27) - 1;
        const plan_t p27 = cuda_msm_table_t::plan_within(big, uint64_t(40) << 30);
        check(p27.windows == 11 && p27.levels() == 3 &&
                  p27.widths == std::vector<unsigned>{24, 23, 23, 23} &&
                  p27.pass_terms == 3 * uint64_t(big),
              "planner at 2^27, 40 GiB: 11 windows of 24, 23, 23, 23 bits, one pass each");
        const plan_t p23 = cuda_msm_table_t::plan_within((size_t(1) << 23) - 1, uint64_t(40) << 30);
        check(p23.windows == 12 && p23.widths == std::vector<unsigned>{22},
              "planner at 2^23, 40 GiB: 12 windows of 22 bits, every level");
        const uint64_t uniform3 = cuda_msm_table_t::bytes_for(big, 22, 3);
        const plan_t tight = cuda_msm_table_t::plan_within(big, uniform3);
        check(tight.windows == 12 && tight.levels() == 3 &&
                  cuda_msm_table_t::bytes_for(big, tight) <= uniform3,
              "planner at 2^27 with room for 3 uniform levels only: those");
        const plan_t none = cuda_msm_table_t::plan_within(big, 1 << 20);
        check(none.windows == 0, "planner: nothing fits in 1 MiB");
    });
}

void test_ntt(cuda_device_t& dev, rng_t& rng)
{
    std::printf("== NTT vs naive DFT (2^10) and CPU radix-2\n");
    {
        const size_t n = 1024;
        std::vector<blst_fr> x(n);
        for (auto& v : x)
            v = fr_random(rng);
        for (int mode = 0; mode < 4; mode++) {
            const bool inverse = mode & 1, coset = mode & 2;
            const auto want = naive_dft(x, inverse, coset);
            auto ref = x;
            if (coset)
                cpu_coset_ntt(ref, inverse);
            else
                cpu_ntt(ref, inverse);
            check(std::equal(ref.begin(), ref.end(), want.begin(), fr_eq),
                  std::string("CPU radix-2 = naive DFT, 2^10 ") + (inverse ? "inverse" : "forward") +
                      (coset ? " coset" : ""));
            guarded("ntt 2^10", [&] {
                auto got = x;
                cuda_ntt(dev, got.data(), n, inverse, coset);
                check(std::equal(got.begin(), got.end(), want.begin(), fr_eq),
                      std::string("GPU = naive DFT, 2^10 ") + (inverse ? "inverse" : "forward") +
                          (coset ? " coset" : ""));
            });
        }
    }
    for (unsigned k : {1u, 2u, 3u, 5u, 6u, 8u, 11u, 12u, 13u, 16u, 17u, 18u, 19u, 20u}) {
        const size_t n = size_t(1) << k;
        std::vector<blst_fr> x(n);
        for (auto& v : x)
            v = fr_random(rng);
        for (int mode = 0; mode < 4; mode++) {
            const bool inverse = mode & 1, coset = mode & 2;
            guarded("ntt", [&] {
                auto ref = x;
                if (coset)
                    cpu_coset_ntt(ref, inverse);
                else
                    cpu_ntt(ref, inverse);
                auto got = x;
                cuda_ntt(dev, got.data(), n, inverse, coset);
                check(std::equal(got.begin(), got.end(), ref.begin(), fr_eq),
                      "GPU = CPU, " + pow2(k) + (inverse ? " inverse" : " forward") +
                          (coset ? " coset" : ""));
            });
        }
    }
}

void test_h(cuda_device_t& dev, rng_t& rng)
{
    std::printf("== H polynomial vs CPU, and the H MSM\n");
    const size_t NP = (size_t(1) << 16);
    std::vector<blst_p1_affine> hp = random_points(NP, rng.next());
    cuda_points_t dhp(dev, hp.data(), NP);
    for (unsigned k = 12; k <= 16; k++) {
        const size_t n = size_t(1) << k;
        for (size_t len : {n, n - 37, size_t(1000)}) {
            guarded("h", [&] {
                std::vector<blst_fr> a(len), b(len), c(len);
                for (size_t i = 0; i < len; i++) {
                    a[i] = fr_random(rng);
                    b[i] = fr_random(rng);
                    c[i] = fr_random(rng);
                }
                const auto want = cpu_h(a.data(), b.data(), c.data(), len, n);
                cuda_h_poly_t h(dev, n);
                h.compute(a.data(), b.data(), c.data(), len);
                std::vector<blst_fr> got(n);
                h.download(got.data());
                check(std::equal(got.begin(), got.end(), want.begin(), fr_eq),
                      "H " + pow2(k) + " len " + std::to_string(len) + ", pageable inputs");
                std::copy(a.begin(), a.end(), h.staging(0));
                std::copy(b.begin(), b.end(), h.staging(1));
                std::copy(c.begin(), c.end(), h.staging(2));
                h.compute_staged(len);
                h.download(got.data());
                check(std::equal(got.begin(), got.end(), want.begin(), fr_eq),
                      "H " + pow2(k) + " len " + std::to_string(len) + ", pinned staging");
                if (len == n) {
                    // the barycentric identity the benchmark uses, cross-checked here
                    const blst_fr x =
                        fr_mul(fr_generator(), fr_pow(fr_root_of_unity(k), rng.below(n)));
                    blst_fr abc[3];
                    barycentric3(a.data(), b.data(), c.data(), len, n, k, x, abc);
                    const blst_fr z = fr_sub(fr_pow(fr_generator(), n), fr_one());
                    const blst_fr lhs = fr_mul(poly_eval(got.data(), n, x), z);
                    check(fr_eq(lhs, fr_sub(fr_mul(abc[0], abc[1]), abc[2])),
                          "H " + pow2(k) + ": h(x) (x^n - 1) = a(x) b(x) - c(x) at a coset point");
                    std::vector<blst_scalar> canon(n - 1);
                    for (size_t i = 0; i + 1 < n; i++)
                        canon[i] = fr_to_scalar(want[i]);
                    blst_p1 got_msm;
                    h.msm(got_msm, dhp);
                    const blst_p1 want_msm = cpu_msm(hp.data(), canon.data(), n - 1);
                    check(blst_p1_is_equal(&got_msm, &want_msm),
                          "H MSM " + pow2(k) + " from device-resident coefficients");
                    // Left for the table MSM: canonical and bit-reversed;
                    // download() gives the same coefficients back, and the
                    // table MSM reads them as they lie.
                    h.set_output(cuda_h_poly_t::output_t::for_table);
                    h.compute(a.data(), b.data(), c.data(), len);
                    const cuda_scalar_layout_t laid = h.layout();
                    check(laid.canonical && laid.bit_reversed_log == k,
                          "H " + pow2(k) + " for the table: canonical, bit-reversed");
                    h.download(got.data());
                    check(std::equal(got.begin(), got.end(), want.begin(), fr_eq),
                          "H " + pow2(k) + " for the table, downloaded");
                    cuda_msm_table_t table(dhp, cuda_msm_table_t::plan_t{{13, 12, 12}, 21});
                    table.msm(got_msm, h.coefficients(), n - 1, laid);
                    check(blst_p1_is_equal(&got_msm, &want_msm),
                          "H MSM " + pow2(k) + " on a table, from H left for it");
                    h.set_output(cuda_h_poly_t::output_t::natural);
                }
            });
        }
    }
}

const char* ones_kernel_name(cuda_ones_kernel_t kernel)
{
    return kernel == cuda_ones_kernel_t::sppark ? "sppark's kernel" : "share sum";
}

// The bitmap sums (G1 and G2) by the share sum and by sppark's kernel:
// random bitmaps, sizes off the warp's and the kernels' chunks, every sum
// against the closed form.
void test_ones_kernels(cuda_device_t& dev, rng_t& rng)
{
    std::printf("== bitmap sums, share sum and sppark's kernel\n");
    const size_t N = 70001;
    progression_t pr = make_progression(N, rng);
    progression2_t pr2 = make_progression2(N, rng);
    const cuda_ones_kernel_t before = dev.ones_kernel();
    guarded("bitmap sums", [&] {
        cuda_points_t P(dev, pr.points.data(), N);
        cuda_g2_points_t P2(dev, pr2.points.data(), N);
        for (size_t n : {size_t(1), size_t(1023), size_t(33000), N}) {
            for (int density : {1, 2, 4}) {  // all set, ~1/2, ~1/4
                std::vector<uint64_t> map((n + 63) / 64, 0);
                std::vector<uint32_t> idx;
                for (size_t i = 0; i < n; i++) {
                    if (density == 1 || rng.below(density) == 0) {
                        map[i / 64] |= uint64_t(1) << (i % 64);
                        idx.push_back(static_cast<uint32_t>(i));
                    }
                }
                const blst_p1 want = progression_sum(pr, idx);
                const blst_p2 want2 = progression2_sum(pr2, map, n);
                for (auto kernel : {cuda_ones_kernel_t::share_sum, cuda_ones_kernel_t::sppark}) {
                    dev.set_ones_kernel(kernel);
                    const std::string what = " bitmap sum, n=" + std::to_string(n) + ", 1/" +
                                             std::to_string(density) + " set, " +
                                             ones_kernel_name(kernel);
                    blst_p1 got;
                    cuda_batch_add_bitmap(got, P, map.data(), n);
                    check(blst_p1_is_equal(&got, &want), "G1" + what);
                    blst_p2 got2;
                    cuda_batch_add_bitmap(got2, P2, map.data(), n);
                    check(blst_p2_is_equal(&got2, &want2), "G2" + what);
                }
            }
        }
    });
    dev.set_ones_kernel(before);
}

// The G2 MSM over gathered points (B_G2's tail in the kernel region):
// indices with repeats, every scalar pattern, a length past one gathered
// chunk (2^22 terms), each against the closed form; then a bad index.
void test_g2_msm(cuda_device_t& dev, rng_t& rng)
{
    std::printf("== G2 MSM over a gathered subset\n");
    const size_t N = 70001;
    progression2_t pr = make_progression2(N, rng);
    guarded("G2 gather msm", [&] {
        cuda_g2_points_t P2(dev, pr.points.data(), N);
        struct run_t {
            size_t n;
            int pattern;
        };
        const run_t runs[] = {{1, 0}, {17, 3}, {1000, 3}, {50000, 0}, {50000, 4},
                              {4096, 1}, {4096, 2}, {(size_t(1) << 22) + 4097, 3}};
        for (const run_t& r : runs) {
            std::vector<uint32_t> idx(r.n);
            for (auto& i : idx)
                i = static_cast<uint32_t>(rng.below(N));
            const auto s = scalars_pattern(r.n, r.pattern, rng);
            std::vector<blst_scalar> canon(r.n);
            parallel_for(r.n, [&](size_t b, size_t e, unsigned) {
                for (size_t k = b; k < e; k++)
                    canon[k] = fr_to_scalar(s[k]);
            });
            // sum_k s_k P_{idx_k} = (sum s_k) B + (sum idx_k s_k) S
            const unsigned T = hw_threads();
            std::vector<blst_fr> s1(T, fr_zero()), s2(T, fr_zero());
            parallel_for(r.n, [&](size_t b, size_t e, unsigned t) {
                blst_fr a = fr_zero(), c = fr_zero();
                for (size_t k = b; k < e; k++) {
                    a = fr_add(a, s[k]);
                    c = fr_add(c, fr_mul(fr_u64(idx[k]), s[k]));
                }
                s1[t] = a;
                s2[t] = c;
            });
            blst_fr a = fr_zero(), c = fr_zero();
            for (unsigned t = 0; t < T; t++) {
                a = fr_add(a, s1[t]);
                c = fr_add(c, s2[t]);
            }
            blst_p2 want = p2_mult(pr.B, a);
            const blst_p2 sc = p2_mult(pr.S, c);
            blst_p2_add_or_double(&want, &want, &sc);
            blst_p2 got;
            const double t0 = now_ms();
            cuda_msm_gather(got, P2, idx.data(), canon.data(), r.n);
            const double ms = now_ms() - t0;
            check(blst_p2_is_equal(&got, &want), "G2 gather msm n=" + std::to_string(r.n) + ", " +
                                                     pattern_name[r.pattern] + " scalars");
            if (r.n > 100000)
                std::printf("   G2 gather msm of %zu terms: %.1f ms\n", r.n, ms);
        }
        std::vector<uint32_t> bad = {0, 1, static_cast<uint32_t>(N)};
        std::vector<blst_scalar> c(3, fr_to_scalar(fr_u64(3)));
        blst_p2 got;
        bool threw = false;
        try {
            cuda_msm_gather(got, P2, bad.data(), c.data(), 3);
        } catch (const std::invalid_argument&) {
            threw = true;
        }
        check(threw, "G2 gather msm: an out-of-range index throws std::invalid_argument");
        cuda_msm_gather(got, P2, bad.data(), c.data(), 2);
        blst_p2 want = p2_mult(pr.B, fr_u64(6));
        const blst_p2 sc = p2_mult(pr.S, fr_u64(3));
        blst_p2_add_or_double(&want, &want, &sc);
        check(blst_p2_is_equal(&got, &want), "G2 gather msm: the context still works after that");
    });
}

// ---------------------------------------------------------------- bench

void bench(cuda_device_t& dev, rng_t& rng, unsigned max_log, bool sweep, bool table_sweep)
{
    // Sizes relative to the top (2^24 by default: MSM 2^20/22/24, subset
    // 2^22/23, batch addition 2^23, NTT 2^24, H 2^20/23).
    const unsigned top = std::max(12u, std::min(24u, max_log));
    const size_t N = size_t(1) << top;
    std::printf("== bench setup: %zu points (B + i S), %zu random scalars\n", N, N);
    double t0 = now_ms();
    progression_t pr = make_progression(N, rng);
    std::vector<blst_fr> s(N);
    parallel_for(N, [&](size_t b, size_t e, unsigned t) {
        rng_t r(rng.s[0] ^ (0x9e37ull * (t + 1)));
        for (size_t i = b; i < e; i++)
            s[i] = fr_random(r);
    });
    std::vector<blst_scalar> canon(N);
    parallel_for(N, [&](size_t b, size_t e, unsigned) {
        for (size_t i = b; i < e; i++)
            canon[i] = fr_to_scalar(s[i]);
    });
    cuda_pinned_buffer_t pinned(N * sizeof(blst_fr));
    std::memcpy(pinned.data(), s.data(), N * sizeof(blst_fr));
    std::printf("   host setup %.1f s\n", (now_ms() - t0) / 1000);

    double up0 = now_ms();
    cuda_points_t P(dev, pr.points.data(), N);
    const double up_ms = now_ms() - up0;
    g_rows.push_back({"upload points", pow2(top), "pageable -> device, once",
                      up_ms, up_ms, "-"});
    std::printf("   upload %.1f ms (%.1f GB/s)\n", up_ms, P.bytes() / up_ms / 1e6);
    note_memory(dev.ordinal());

    cuda_fr_buffer_t dscal(dev, N);
    dscal.upload(s.data(), N);

    // ---- window-size sweep (tuning): sppark's window shifted by `bias` bits
    if (sweep) {
        for (unsigned k : {top - 4, top - 2, top}) {
            const size_t n = size_t(1) << k;
            const blst_p1 want = progression_msm(pr, s.data(), nullptr, n);
            for (int bias = -1; bias <= 3; bias++) {
                dev.set_msm_window_bias(bias);
                blst_p1 got;
                timing_t t = time_it([&] { cuda_msm(got, P, dscal, n); }, 1, 5);
                add_row("MSM sweep", pow2(k), "bias " + std::to_string(bias) + ", device scalars",
                        t, blst_p1_is_equal(&got, &want), "closed form");
                t = time_it([&] { cuda_msm(got, P, pinned.as<blst_fr>(), n); }, 1, 5);
                add_row("MSM sweep", pow2(k), "bias " + std::to_string(bias) + ", pinned scalars",
                        t, blst_p1_is_equal(&got, &want), "closed form");
                t = time_it([&] { cuda_msm(got, P, s.data(), n); }, 1, 5);
                add_row("MSM sweep", pow2(k), "bias " + std::to_string(bias) + ", pageable scalars",
                        t, blst_p1_is_equal(&got, &want), "closed form");
            }
            note_memory(dev.ordinal());
        }
        dev.set_msm_window_bias(cuda_device_t::msm_bias_auto);
    }

    // ---- full MSMs
    for (unsigned k : {top - 4, top - 2, top}) {
        const size_t n = size_t(1) << k;
        const blst_p1 want = progression_msm(pr, s.data(), nullptr, n);
        blst_p1 got;
        timing_t t = time_it([&] { cuda_msm(got, P, s.data(), n); });
        add_row("G1 MSM", pow2(k), "resident pts, pageable Mont scalars", t,
                blst_p1_is_equal(&got, &want), "closed form");
        t = time_it([&] { cuda_msm(got, P, canon.data(), n); });
        add_row("G1 MSM", pow2(k), "resident pts, pageable canon scalars", t,
                blst_p1_is_equal(&got, &want), "closed form");
        dev.set_stage_pageable(false);
        t = time_it([&] { cuda_msm(got, P, s.data(), n); });
        dev.set_stage_pageable(true);
        add_row("G1 MSM", pow2(k), "resident pts, pageable Mont, unstaged", t,
                blst_p1_is_equal(&got, &want), "closed form");
        t = time_it([&] { cuda_msm(got, P, pinned.as<blst_fr>(), n); });
        add_row("G1 MSM", pow2(k), "resident pts, pinned Mont scalars", t,
                blst_p1_is_equal(&got, &want), "closed form");
        t = time_it([&] { cuda_msm(got, P, dscal, n); });
        add_row("G1 MSM", pow2(k), "resident pts, device scalars", t,
                blst_p1_is_equal(&got, &want), "closed form");
        note_memory(dev.ordinal());
    }

    // ---- MSMs over precomputed tables (cuda_msm_table_t), device scalars;
    // sppark's rows above ("device scalars") are the reference
    {
        // (width, levels); the default: all levels at the default width.
        const std::vector<std::pair<unsigned, unsigned>> shapes =
            table_sweep ? std::vector<std::pair<unsigned, unsigned>>{{20, 0}, {22, 0}, {22, 6},
                                                                     {22, 4}, {22, 2}, {22, 1},
                                                                     {16, 1}}
                        : std::vector<std::pair<unsigned, unsigned>>{{0, 0}, {22, 4}};
        for (const auto& [c, levels] : shapes) {
            guarded("table bench", [&] {
                const double b0 = now_ms();
                cuda_msm_table_t table(P, c, levels);
                const double build_ms = now_ms() - b0;
                const std::string width = "c=" + std::to_string(table.window_bits()) + " levels=" +
                                          std::to_string(table.levels());
                g_rows.push_back({"MSM table build", pow2(top), width + ", " +
                                  std::to_string(table.bytes() >> 20) + " MiB", build_ms,
                                  build_ms, "-"});
                std::printf("   table %s built in %.1f ms, %.2f GiB\n", width.c_str(), build_ms,
                            table.bytes() / double(1 << 30));
                note_memory(dev.ordinal());
                for (unsigned k : {top - 4, top - 2, top}) {
                    const size_t n = size_t(1) << k;
                    const blst_p1 want = progression_msm(pr, s.data(), nullptr, n);
                    blst_p1 got;
                    const timing_t t = time_it([&] { table.msm(got, dscal, n); });
                    add_row("G1 MSM table", pow2(k), width + ", device scalars", t,
                            blst_p1_is_equal(&got, &want), "closed form");
                }
                if (!table_sweep && c == 0) {
                    // the default width per size: a table over that many points
                    for (unsigned k : {top - 4, top - 2}) {
                        const size_t n = size_t(1) << k;
                        cuda_points_t sub(dev, pr.points.data(), n);
                        cuda_msm_table_t own(sub);
                        const blst_p1 want = progression_msm(pr, s.data(), nullptr, n);
                        blst_p1 got;
                        const timing_t t = time_it([&] { own.msm(got, dscal, n); });
                        add_row("G1 MSM table", pow2(k),
                                "c=" + std::to_string(own.window_bits()) +
                                    " levels=" + std::to_string(own.levels()) +
                                    " (default), device scalars",
                                t, blst_p1_is_equal(&got, &want), "closed form");
                    }
                }
            });
        }
    }

    // ---- subset MSMs (device gather)
    for (unsigned k : {top - 2, top - 1}) {
        const size_t n = size_t(1) << k;
        std::vector<uint32_t> idx(n);
        for (auto& i : idx)
            i = static_cast<uint32_t>(rng.below(N));
        const blst_p1 want = progression_msm(pr, s.data(), idx.data(), n);
        blst_p1 got;
        timing_t t = time_it([&] { cuda_msm_gather(got, P, idx.data(), s.data(), n); });
        add_row("G1 MSM subset", pow2(k), "gather of " + pow2(top) + ", host Mont", t,
                blst_p1_is_equal(&got, &want), "closed form");
        note_memory(dev.ordinal());
    }

    // ---- batch addition
    {
        const unsigned k = top - 1;
        const size_t n = size_t(1) << k;
        std::vector<uint64_t> half((n + 63) / 64, 0), all((n + 63) / 64, ~uint64_t(0));
        std::vector<uint32_t> idx_half, idx_all(n);
        for (size_t i = 0; i < n; i++) {
            idx_all[i] = static_cast<uint32_t>(i);
            if (rng.next() & 1) {
                half[i / 64] |= uint64_t(1) << (i % 64);
                idx_half.push_back(static_cast<uint32_t>(i));
            }
        }
        const blst_p1 want_half = progression_sum(pr, idx_half);
        const blst_p1 want_all = progression_sum(pr, idx_all);
        blst_p1 got;
        timing_t t = time_it([&] { cuda_batch_add(got, P, idx_half.data(), idx_half.size()); });
        add_row("batch add", pow2(k), "index list, ~50% (" + std::to_string(idx_half.size()) + ")",
                t, blst_p1_is_equal(&got, &want_half), "closed form");
        t = time_it([&] { cuda_batch_add(got, P, idx_all.data(), n); });
        add_row("batch add", pow2(k), "index list, all", t, blst_p1_is_equal(&got, &want_all),
                "closed form");
        // The bitmap sums by either kernel.
        const cuda_ones_kernel_t before = dev.ones_kernel();
        for (auto kernel : {cuda_ones_kernel_t::share_sum, cuda_ones_kernel_t::sppark}) {
            dev.set_ones_kernel(kernel);
            const std::string per = ones_kernel_name(kernel);
            t = time_it([&] { cuda_batch_add_bitmap(got, P, half.data(), n); });
            add_row("batch add", pow2(k), "bitmap, ~50% set, " + per, t,
                    blst_p1_is_equal(&got, &want_half), "closed form");
            t = time_it([&] { cuda_batch_add_bitmap(got, P, all.data(), n); });
            add_row("batch add", pow2(k), "bitmap, all set, " + per, t,
                    blst_p1_is_equal(&got, &want_all), "closed form");
        }
        dev.set_ones_kernel(before);
        note_memory(dev.ordinal());
    }

    // ---- G2 bitmap sums (B_G2's ones), by either kernel
    {
        const unsigned k = top - 2;
        const size_t n = size_t(1) << k;
        const double g0 = now_ms();
        progression2_t pr2 = make_progression2(n, rng);
        std::printf("   G2 points: %zu made in %.1f s\n", n, (now_ms() - g0) / 1000);
        std::vector<uint64_t> half((n + 63) / 64, 0), all((n + 63) / 64, ~uint64_t(0));
        for (size_t i = 0; i < n; i++) {
            if (rng.next() & 1)
                half[i / 64] |= uint64_t(1) << (i % 64);
        }
        const blst_p2 want_half = progression2_sum(pr2, half, n);
        const blst_p2 want_all = progression2_sum(pr2, all, n);
        cuda_g2_points_t P2(dev, pr2.points.data(), n);
        const cuda_ones_kernel_t before = dev.ones_kernel();
        for (auto kernel : {cuda_ones_kernel_t::share_sum, cuda_ones_kernel_t::sppark}) {
            dev.set_ones_kernel(kernel);
            const std::string per = ones_kernel_name(kernel);
            blst_p2 got;
            timing_t t = time_it([&] { cuda_batch_add_bitmap(got, P2, half.data(), n); });
            add_row("G2 batch add", pow2(k), "bitmap, ~50% set, " + per, t,
                    blst_p2_is_equal(&got, &want_half), "closed form");
            t = time_it([&] { cuda_batch_add_bitmap(got, P2, all.data(), n); });
            add_row("G2 batch add", pow2(k), "bitmap, all set, " + per, t,
                    blst_p2_is_equal(&got, &want_all), "closed form");
        }
        dev.set_ones_kernel(before);
        note_memory(dev.ordinal());
    }

    // ---- NTT
    {
        const unsigned k = top;
        const size_t n = size_t(1) << k;
        cuda_fr_buffer_t buf(dev, n);
        std::vector<blst_fr> got(n);
        for (int mode = 0; mode < 3; mode++) {
            const bool inverse = mode == 1, coset = mode == 2;
            buf.upload(s.data(), n);
            cuda_ntt(buf, k, inverse, coset);
            buf.download(got.data(), n);
            bool ok = true;
            std::string how;
            if (!inverse) {
                // two outputs against direct evaluation
                for (int rep = 0; rep < 2; rep++) {
                    const size_t j = rng.below(n);
                    blst_fr x = fr_pow(fr_root_of_unity(k), j);
                    if (coset)
                        x = fr_mul(x, fr_generator());
                    ok = ok && fr_eq(poly_eval(s.data(), n, x), got[j]);
                }
                how = "2 outputs = direct evaluation";
            } else {
                cuda_ntt(buf, k, false, false);  // back again
                std::vector<blst_fr> back(n);
                buf.download(back.data(), n);
                ok = std::equal(back.begin(), back.end(), s.begin(), fr_eq);
                how = "forward(inverse(x)) = x";
            }
            const timing_t t = time_it([&] { cuda_ntt(buf, k, inverse, coset); }, 2, 9);
            add_row("NTT", pow2(k),
                    std::string(inverse ? "inverse" : "forward") + (coset ? " coset" : "") +
                        ", device-resident",
                    t, ok, how);
        }
        note_memory(dev.ordinal());
    }

    // ---- H polynomial (+ H MSM)
    for (unsigned k : {top - 4, top - 1}) {
        const size_t n = size_t(1) << k;
        std::vector<blst_fr> a(s.begin(), s.begin() + n), b(n), c(n);
        parallel_for(n, [&](size_t bg, size_t e, unsigned) {
            for (size_t i = bg; i < e; i++) {
                b[i] = s[(i + n / 3) % N];
                c[i] = s[(i + 2 * n / 3 + 1) % N];
            }
        });
        cuda_h_poly_t h(dev, n);
        std::copy(a.begin(), a.end(), h.staging(0));
        std::copy(b.begin(), b.end(), h.staging(1));
        std::copy(c.begin(), c.end(), h.staging(2));
        h.compute_staged(n);
        std::vector<blst_fr> coeffs(n);
        h.download(coeffs.data());
        const blst_fr x = fr_mul(fr_generator(), fr_pow(fr_root_of_unity(k), rng.below(n)));
        blst_fr abc[3];
        barycentric3(a.data(), b.data(), c.data(), n, n, k, x, abc);
        const blst_fr z = fr_sub(fr_pow(fr_generator(), n), fr_one());
        const bool ok = fr_eq(fr_mul(poly_eval(coeffs.data(), n, x), z),
                              fr_sub(fr_mul(abc[0], abc[1]), abc[2]));
        timing_t t = time_it([&] { h.compute_staged(n); });
        add_row("H poly", pow2(k), "pinned staging -> coeffs", t, ok,
                "h(x) Z(x) = a b - c at a coset point");
        std::vector<blst_fr> again(n);
        for (bool staged : {true, false}) {
            dev.set_stage_pageable(staged);
            std::fill(again.begin(), again.end(), fr_zero());
            h.compute(a.data(), b.data(), c.data(), 1);  // poison the result
            t = time_it([&] { h.compute(a.data(), b.data(), c.data(), n); });
            h.download(again.data());
            add_row("H poly", pow2(k),
                    std::string("pageable inputs") + (staged ? "" : ", unstaged") + " -> coeffs",
                    t, std::equal(again.begin(), again.end(), coeffs.begin(), fr_eq),
                    "same as pinned");
        }
        dev.set_stage_pageable(true);
        const blst_p1 want = progression_msm(pr, coeffs.data(), nullptr, n - 1);
        blst_p1 got;
        t = time_it([&] { h.msm(got, P); });
        add_row("H MSM", pow2(k) + "-1", "device coeffs x resident points", t,
                blst_p1_is_equal(&got, &want), "closed form");
        note_memory(dev.ordinal());
    }
}

void print_table(const cuda_device_t& dev)
{
    const auto mem = cuda_mem_info(dev.ordinal());
    std::printf("\n| op | size | variant | median ms | min ms | check |\n");
    std::printf("|---|---|---|---:|---:|---|\n");
    for (const auto& r : g_rows)
        std::printf("| %s | %s | %s | %.2f | %.2f | %s |\n", r.op.c_str(), r.size.c_str(),
                    r.variant.c_str(), r.median_ms, r.min_ms, r.check.c_str());
    std::printf("\ndevice memory: peak in use %.2f GiB (cudaMemGetInfo, all users), now %.2f GiB;"
                " owned by the context now %.2f GiB (scratch %.2f GiB); pinned host staging"
                " %.2f GiB\n",
                peak_used / double(1 << 30), (mem.total_bytes - mem.free_bytes) / double(1 << 30),
                dev.bytes_owned() / double(1 << 30), dev.scratch_bytes() / double(1 << 30),
                dev.host_staging_bytes() / double(1 << 30));
}

// --plan-bench: the 2^27 partition's table plans at a smaller size (the
// weighing does not depend on n), with a variant of the accumulation,
// alternating: the uniform plan of session 14 (12 windows
// of 22 bits in passes of 2^28 terms) and the planner's 2^27 plan (11
// windows of 24, 23, 23, 23, a pass a sub-window), each result against
// the closed form. CUZK_MSM_TRACE=1 prints each call's steps.
void plan_bench(cuda_device_t& dev, rng_t& rng, unsigned max_log)
{
    const unsigned top = std::max(12u, std::min(24u, max_log));
    const size_t N = size_t(1) << top;
    std::printf("== plan bench: %zu points (B + i S), random scalars\n", N);
    progression_t pr = make_progression(N, rng);
    std::vector<blst_fr> s(N);
    for (auto& x : s)
        x = fr_random(rng);
    cuda_points_t P(dev, pr.points.data(), N);
    cuda_fr_buffer_t dscal(dev, N);
    dscal.upload(s.data(), N);
    const blst_p1 want = progression_msm(pr, s.data(), nullptr, N);
    using plan_t = cuda_msm_table_t::plan_t;
    struct variant_t {
        const char* name;
        plan_t plan;
        const char* env;  // NAME=VALUE set while the table is built, or null
    };
    const variant_t variants[] = {
        {"uniform 22 x 12, passes of 2^28", plan_t{{22, 22, 22, 22}, 12}, nullptr},
        {"24,23,23,23 x 11, one pass", plan_t{{24, 23, 23, 23}, 11, 3 * uint64_t(N)}, nullptr},
        {"24,23,23,23 x 11, one pass, 256 threads", plan_t{{24, 23, 23, 23}, 11, 3 * uint64_t(N)},
         "CUZK_MSM_THREADS=256"},
    };
    for (int round = 0; round < 2; round++) {
        for (const auto& v : variants) {
            guarded(std::string("plan bench ") + v.name, [&] {
                std::string name, value;
                if (v.env != nullptr) {
                    const std::string e = v.env;
                    name = e.substr(0, e.find('='));
                    value = e.substr(e.find('=') + 1);
                    setenv(name.c_str(), value.c_str(), 1);
                }
                cuda_msm_table_t table(P, v.plan);
                if (v.env != nullptr)
                    unsetenv(name.c_str());
                blst_p1 got;
                std::printf("   %s (round %d)\n", v.name, round + 1);
                const timing_t t = time_it([&] { table.msm(got, dscal, N); }, 1, 3);
                add_row("G1 MSM plan", pow2(top), v.name, t, blst_p1_is_equal(&got, &want),
                        "closed form");
            });
        }
    }
}

}  // namespace

int main(int argc, char** argv)
{
    bool tests = true, benches = true, sweep = false, table_sweep = false, plans = false;
    uint64_t seed = 0x63757a6b;  // "cuzk": fixed, so that runs repeat
    unsigned max_log = 24;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        if (a == "--tests-only")
            benches = false;
        else if (a == "--bench-only")
            tests = false;
        else if (a == "--sweep")
            sweep = true;
        else if (a == "--table-sweep")
            table_sweep = true;
        else if (a == "--plan-bench")
            plans = true;
        else if (a == "--seed" && i + 1 < argc && std::string(argv[i + 1]) == "random") {
            seed = static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
            i++;
        }
        else if (a == "--seed" && i + 1 < argc)
            seed = std::strtoull(argv[++i], nullptr, 0);
        else if (a == "--max-log" && i + 1 < argc)
            max_log = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 0));
        else {
            std::fprintf(stderr,
                         "usage: %s [--tests-only|--bench-only] [--sweep] [--table-sweep] "
                         "[--plan-bench] [--seed N|random] "
                         "[--max-log K]\n",
                         argv[0]);
            return 2;
        }
    }
    const int ndev = cuda_device_count();
    if (ndev == 0) {
        std::printf("no CUDA device: nothing to run\n");
        return 77;
    }
    std::printf("seed %" PRIu64 ", %d device(s), %u host threads\n", seed, ndev, hw_threads());
    try {
        cuda_device_t dev(0);
        const auto& info = dev.info();
        std::printf("device 0: %s, sm_%d%d, %d SMs, %.1f GiB, L2 %.0f MiB\n", info.name.c_str(),
                    info.major, info.minor, info.sm_count, info.total_bytes / double(1 << 30),
                    info.l2_bytes / double(1 << 20));
        rng_t rng(seed);
        const double t0 = now_ms();
        if (tests) {
            test_roots();
            test_ntt(dev, rng);
            test_msm(dev, rng);
            test_device_terms(dev, rng);
            test_ones_kernels(dev, rng);
            test_g2_msm(dev, rng);
            test_msm_table(dev, rng);
            test_h(dev, rng);
            std::printf("tests: %.1f s\n", (now_ms() - t0) / 1000);
        }
        if (plans) {
            plan_bench(dev, rng, max_log);
            print_table(dev);
        } else if (benches) {
            bench(dev, rng, max_log, sweep, table_sweep);
            print_table(dev);
        }
    } catch (const std::exception& e) {
        std::printf("fatal: %s\n", e.what());
        g_failures++;
    }
    std::printf("\n%d checks, %d failed\n", g_checks, g_failures);
    return g_failures ? 1 : 0;
}
