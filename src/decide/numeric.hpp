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
  // Values of the roots, or nullopt where a value is not a finite real
  // (division by zero, log of a negative number, ...).
  std::optional<std::vector<Real>> eval(const std::vector<Rational>& symbol_values);

 private:
  const ExprContext& ctx_;
  std::vector<Expr> roots_, order_, symbols_;
  std::unordered_map<std::uint32_t, std::uint32_t> pos_;
};

// True when a and b are different reals beyond any rounding in the evaluation.
bool numerically_different(const Real& a, const Real& b);
std::string real_to_string(const Real& v, int digits = 30);

}  // namespace tileverify::detail
