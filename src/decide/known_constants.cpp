// The table of float constants read as exact reals (docs/decide.md).
#include "tileverify/decide.hpp"

namespace tileverify {

const std::vector<KnownConstant>& known_constants() {
  static const std::vector<KnownConstant> table = [] {
    std::vector<KnownConstant> t;
    t.push_back({"log2e_f32", Rational::from_f32_bits(0x3FB8AA3Bu), "1/ln2",
                 "nvcc expf/__expf and -use_fast_math: 0f3FB8AA3B, fp32 log2(e)"});
    t.push_back({"log2e_f32_hi_lo", Rational::from_f32_bits(0x3FB8AA3Bu) + Rational::from_f32_bits(0x32A57060u),
                 "1/ln2", "nvcc expf: the split pair 0f3FB8AA3B + 0f32A57060"});
    t.push_back({"log2e_f64", Rational::from_f64_bits(0x3FF71547652B82FEull), "1/ln2",
                 "0d3FF71547652B82FE, fp64 log2(e) (M_LOG2E)"});
    t.push_back({"ln2_f32", Rational::from_f32_bits(0x3F317218u), "ln2", "0f3F317218, fp32 ln(2)"});
    t.push_back({"ln2_f64", Rational::from_f64_bits(0x3FE62E42FEFA39EFull), "ln2",
                 "0d3FE62E42FEFA39EF, fp64 ln(2) (M_LN2)"});
    return t;
  }();
  return table;
}

}  // namespace tileverify
