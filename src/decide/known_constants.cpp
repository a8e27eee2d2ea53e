// The table of float constants read as exact reals (docs/decide.md).
#include "tileverify/decide.hpp"

#include "known_constants.hpp"

namespace tileverify {

const std::vector<KnownConstant>& known_constants() {
  static const std::vector<KnownConstant> table = [] {
    std::vector<KnownConstant> t;
    t.push_back({"log2e_f32", Rational::from_f32_bits(0x3FB8AA3Bu), "1/ln2",
                 "nvcc expf/__expf and -use_fast_math: 0f3FB8AA3B, fp32 log2(e)"});
    t.push_back({"log2e_f32_hi_lo", Rational::from_f32_bits(0x3FB8AA3Bu) + Rational::from_f32_bits(0x32A57060u),
                 "1/ln2", "nvcc expf: the split pair 0f3FB8AA3B + 0f32A57060"});
    t.push_back({"log2e_f32_lo", Rational::from_f32_bits(0x32A57060u), "0",
                 "nvcc expf: the low half 0f32A57060 of the split pair; with the high half read as 1/ln2 it adds nothing"});
    t.push_back({"log2e_f64", Rational::from_f64_bits(0x3FF71547652B82FEull), "1/ln2",
                 "0d3FF71547652B82FE, fp64 log2(e) (M_LOG2E)"});
    t.push_back({"ln2_f32", Rational::from_f32_bits(0x3F317218u), "ln2", "0f3F317218, fp32 ln(2)"});
    t.push_back({"ln2_f64", Rational::from_f64_bits(0x3FE62E42FEFA39EFull), "ln2",
                 "0d3FE62E42FEFA39EF, fp64 ln(2) (M_LN2)"});
    return t;
  }();
  return table;
}

namespace detail {

bool simple_ratio(const Rational& r) {
  std::int64_t n = 0, d = 0;
  if (r.is_zero() || !r.odd_part().to_int64_pair(&n, &d)) return false;
  return n < 4096 && n > -4096 && d < 4096;
}

bool read_known_constant(const Rational& v, Rational* r, int* ln2_power) {
  for (const KnownConstant& k : known_constants()) {
    if (k.meaning == "0") {
      int e = 0, sg = 0;
      if ((v / k.value).is_signed_power_of_two(&e, &sg)) {
        *r = Rational(0);
        *ln2_power = 0;
        return true;
      }
      continue;
    }
    Rational ratio = v / k.value;
    if (simple_ratio(ratio)) {
      *r = ratio;
      *ln2_power = k.meaning == "ln2" ? 1 : -1;
      return true;
    }
  }
  return false;
}

}  // namespace detail

}  // namespace tileverify
