#include "cuzk/srs.hpp"

#include <string>

#include "cuzk/check.hpp"

namespace cuzk {

void srs_t::validate() const
{
    CUZK_REQUIRE(b_g1.size() == b_g2.size(),
                 "srs: b_g1 has " + std::to_string(b_g1.size()) + " points but b_g2 has " +
                     std::to_string(b_g2.size()));
    CUZK_REQUIRE((domain() & (domain() - 1)) == 0,
                 "srs: h has " + std::to_string(h.size()) +
                     " points; the domain (h + 1) must be a power of two");
}

srs_device_state_t& srs_t::device_state(
    uint32_t device, const std::function<std::unique_ptr<srs_device_state_t>()>& make) const
{
    {
        std::lock_guard<std::mutex> guard(device_mutex_);
        const auto found = device_states_.find(device);
        if (found != device_states_.end())
            return *found->second;
    }
    std::unique_ptr<srs_device_state_t> made = make();
    CUZK_CHECK(made != nullptr, "srs_t::device_state: make() returned nothing");
    std::lock_guard<std::mutex> guard(device_mutex_);
    // Only a second lock on the same device could have raced us here; the
    // first state made stays, ours is dropped.
    return *device_states_.emplace(device, std::move(made)).first->second;
}

bool srs_t::has_device_state(uint32_t device) const
{
    std::lock_guard<std::mutex> guard(device_mutex_);
    return device_states_.count(device) != 0;
}

void srs_t::note_b_g2_on_device(uint32_t device, bool on_device) const
{
    std::lock_guard<std::mutex> guard(device_mutex_);
    b_g2_on_device_[device] = on_device;
}

bool srs_t::b_g2_on_device(uint32_t device) const
{
    std::lock_guard<std::mutex> guard(device_mutex_);
    const auto it = b_g2_on_device_.find(device);
    return it == b_g2_on_device_.end() || it->second;
}

}  // namespace cuzk
