// High-precision numeric evaluation (internal): confirms counterexamples.
#pragma once

#include "tileverify/decide.hpp"
#include "tileverify/expr.hpp"

#include <boost/multiprecision/mpfr.hpp>

#include <optional>
#include <random>
#include <vector>

namespace tileverify::detail {

using Real = boost::multiprecision::mpfr_float_100;    // 100 decimal digits
using RealLow = boost::multiprecision::mpfr_float_50;  // the cross-check

// Evaluates a fixed set of roots at many points; the reachable nodes are put
// in topological order once.
class NumericEvaluator {
 public:
  // `readings`: read_constants also reads these (DecideLimits::constant_readings).
  NumericEvaluator(const ExprContext& ctx, const std::vector<Expr>& roots,
                   const std::vector<ConstantReading>* readings = nullptr);
  const std::vector<Expr>& symbols() const { return symbols_; }
  // Whether ln2 occurs (the roots use 2^x): see numerically_different.
  bool uses_ln2() const { return uses_ln2_; }
  // Whether a function defined only on part of the reals occurs (log, log2,
  // log1p, sqrt, rsqrt): counterexamples are then looked for at positive inputs too.
  bool has_partial_functions() const { return partial_functions_; }
  // Values of the roots, or nullopt where a value is not a finite real
  // (division by zero, log of a negative number, ...).
  // With `read_constants`, constants are read as the decider reads them in
  // exponents (a float of log2 e as 1/ln2, see known_constants()): the model
  // in which 2^(x * log2e) is exactly e^x.
  template <class R>
  std::optional<std::vector<R>> eval(const std::vector<Rational>& symbol_values, bool read_constants = false);

  // The values of the two roots (100 digits) if they differ by more than
  // `relative` of their magnitude (at least 1) and the difference is the same,
  // to 1%, at 50 digits: a difference that comes from rounding (cancellation
  // of huge intermediate values) changes with the precision and is rejected.
  std::optional<std::pair<Real, Real>> differing(const std::vector<Rational>& symbol_values, bool read_constants,
                                                 const Real& relative);

 private:
  const ExprContext& ctx_;
  const std::vector<ConstantReading>* readings_;
  std::vector<Expr> roots_, order_, symbols_;
  std::unordered_map<std::uint32_t, std::uint32_t> pos_;
  bool uses_ln2_ = false;
  bool partial_functions_ = false;
};

std::string real_to_string(const Real& v, int digits = 30);

}  // namespace tileverify::detail
