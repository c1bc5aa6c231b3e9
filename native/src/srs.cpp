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

}  // namespace cuzk
