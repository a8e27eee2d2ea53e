// Reading float constants as the reals they stand for (internal).
#pragma once

#include "tileverify/rational.hpp"

namespace tileverify::detail {

// r = +-2^k * p/q with odd p, q below 2^12: compilers fold log2(e) into
// constants like scale * log2e, so exact small multiples are recognized too.
bool simple_ratio(const Rational& r);

// If v is a simple multiple of a known_constants() entry, v reads as
// r * ln2^ln2_power (r = 0 for the low half of nvcc's split log2 e).
bool read_known_constant(const Rational& v, Rational* r, int* ln2_power);

}  // namespace tileverify::detail
