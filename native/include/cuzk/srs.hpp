// The proving key's points, copied into native memory.
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

// Groth16 proving-key points in bellperson's compacted form: `a`, `b_g1` and
// `b_g2` hold only the points of variables with density.
struct srs_t {
    blst_p1_affine alpha_g1{};
    blst_p1_affine beta_g1{};
    blst_p2_affine beta_g2{};
    blst_p1_affine delta_g1{};
    blst_p2_affine delta_g2{};
    std::vector<blst_p1_affine> h;     // domain - 1 points
    std::vector<blst_p1_affine> l;     // one per aux variable
    std::vector<blst_p1_affine> a;     // every input, then aux with A density
    std::vector<blst_p1_affine> b_g1;  // inputs then aux, with B density
    std::vector<blst_p2_affine> b_g2;  // the same variables as b_g1

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

private:
    mutable std::mutex device_mutex_;  // guards the map, not the states
    // Declared after the points, so destroyed before them.
    mutable std::map<uint32_t, std::unique_ptr<srs_device_state_t>> device_states_;
};

}  // namespace cuzk
