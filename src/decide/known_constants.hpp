// Reading float constants as the reals they stand for (internal).
#pragma once

#include "tileverify/decide.hpp"
#include "tileverify/rational.hpp"

#include <vector>

namespace tileverify::detail {

// r = +-2^k * p/q with odd p, q below 2^12: compilers fold log2(e) into
// constants like scale * log2e, so exact small multiples are recognized too.
bool simple_ratio(const Rational& r);

// If v is a simple multiple of a known_constants() entry, v reads as
// r * ln2^ln2_power (r = 0 for the low half of nvcc's split log2 e).
// With `readings` (DecideLimits::constant_readings), a simple multiple of a
// reading's value reads as that multiple of its factor · ln2^ln2_power,
// after the table (the order the decider's algebra tries them in).
bool read_known_constant(const Rational& v, Rational* r, int* ln2_power,
                         const std::vector<ConstantReading>* readings = nullptr);

}  // namespace tileverify::detail
