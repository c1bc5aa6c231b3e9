// The proving key's points, borrowed from the Rust side (no copy).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <blst.h>

namespace cuzk {

// What a backend keeps with a key on one device (the CUDA backend: the
// points in device memory, the H workspace). Destroyed with the key.
class srs_device_state_t {
public:
    virtual ~srs_device_state_t() = default;
};

// A read-only view of points another owner keeps alive: supraseal_c2::Srs
// holds the vectors these point into, unchanged, for as long as the srs_t
// that views them lives, so a key is in host memory once.
template <typename T>
class points_t {
public:
    points_t() = default;
    points_t(const T* data, size_t size) : data_(size == 0 ? nullptr : data), size_(size) {}
    const T* data() const { return data_; }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    const T& operator[](size_t i) const { return data_[i]; }
    const T* begin() const { return data_; }
    const T* end() const { return data_ + size_; }

private:
    const T* data_ = nullptr;
    size_t size_ = 0;
};

// Groth16 proving-key points in bellperson's compacted form: `a`, `b_g1` and
// `b_g2` hold only the points of variables with density. The five point
// sets are views (points_t); the single points are copies.
struct srs_t {
    blst_p1_affine alpha_g1{};
    blst_p1_affine beta_g1{};
    blst_p2_affine beta_g2{};
    blst_p1_affine delta_g1{};
    blst_p2_affine delta_g2{};
    points_t<blst_p1_affine> h;     // domain - 1 points
    points_t<blst_p1_affine> l;     // one per aux variable
    points_t<blst_p1_affine> a;     // every input, then aux with A density
    points_t<blst_p1_affine> b_g1;  // inputs then aux, with B density
    points_t<blst_p2_affine> b_g2;  // the same variables as b_g1

    // The evaluation domain the key was made for: h.size() + 1.
    size_t domain() const { return h.size() + 1; }

    // Throws std::invalid_argument unless b_g1 and b_g2 match and the
    // domain is a power of two.
    void validate() const;

    // The state kept for `device`, made by make() on first use (not under
    // this key's own mutex: make() may take long). Call with that device's
    // gpu_lock_t held; the points above must not change afterwards.
    srs_device_state_t& device_state(
        uint32_t device, const std::function<std::unique_ptr<srs_device_state_t>()>& make) const;
    // Whether device_state() has made the state for `device` (a hint for a
    // caller without the lock: it may be made right after this returns).
    bool has_device_state(uint32_t device) const;

    // What the last kernel region on `device` did of B_G2 (prover.cpp),
    // so that the next batch plans by it: a key streamed through the device
    // has no G2 points there, and its CPU share of B_G2 then starts beside
    // the kernel region instead of waiting for the epilogue. Unknown
    // (nothing noted yet): true.
    void note_b_g2_on_device(uint32_t device, bool on_device) const;
    bool b_g2_on_device(uint32_t device) const;

private:
    mutable std::mutex device_mutex_;  // guards the map, not the states
    // Declared after the points, so destroyed before them.
    mutable std::map<uint32_t, std::unique_ptr<srs_device_state_t>> device_states_;
    mutable std::map<uint32_t, bool> b_g2_on_device_;  // guarded by device_mutex_
};

}  // namespace cuzk
