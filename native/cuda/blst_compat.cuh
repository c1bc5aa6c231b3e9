// blst.h for translation units that also see sppark's host field types.
// Those pull in blst's internal vect.h, whose limb_t is `unsigned long long`
// while blst.h's is uint64_t (`unsigned long`): the two typedefs clash. blst.h
// is therefore read here, first, with its limb_t renamed; its functions are
// extern "C", so their link names do not change. Include this before
// anything else in such a .cu file.
#pragma once

#ifdef __BLST_H__
#error "blst_compat.cuh must be included before blst.h"
#endif

#define limb_t blst_h_limb_t
#include <blst.h>
#undef limb_t
