// High-precision numeric evaluation (internal): confirms counterexamples.
#pragma once

#include "tileverify/expr.hpp"

#include <boost/multiprecision/mpfr.hpp>

#include <optional>
#include <random>
#include <vector>

namespace tileverify::detail {

using Real = boost::multiprecision::mpfr_float_100;  // 100 decimal digits

// Evaluates a fixed set of roots at many points; the reachable nodes are put
// in topological order once.
class NumericEvaluator {
 public:
  NumericEvaluator(const ExprContext& ctx, const std::vector<Expr>& roots);
  const std::vector<Expr>& symbols() const { return symbols_; }
  // Whether ln2 occurs (the roots use 2^x): see numerically_different.
  bool uses_ln2() const { return uses_ln2_; }
  // Values of the roots, or nullopt where a value is not a finite real
  // (division by zero, log of a negative number, ...).
  // With `read_constants`, constants are read as the decider reads them in
  // exponents (a float of log2 e as 1/ln2, see known_constants()): the model
  // in which 2^(x * log2e) is exactly e^x.
  std::optional<std::vector<Real>> eval(const std::vector<Rational>& symbol_values, bool read_constants = false);

 private:
  const ExprContext& ctx_;
  std::vector<Expr> roots_, order_, symbols_;
  std::unordered_map<std::uint32_t, std::uint32_t> pos_;
  bool uses_ln2_ = false;
};

// True when a and b differ by more than `relative` of their magnitude (at
// least 1). With 100 digits of working precision, 1e-60 separates genuine
// differences from rounding. Where 2^x occurs, the decider reads nvcc's float
// log2(e) as 1/ln2 (a relative change near 1e-8 per unit of exponent), so a
// refutation there must show a difference beyond that reading: 1e-4.
bool numerically_different(const Real& a, const Real& b, const Real& relative);
std::string real_to_string(const Real& v, int digits = 30);

}  // namespace tileverify::detail
