// tileverify/domains.hpp — what arithmetic means while a program runs.
//
// Contract: a domain gives the float semantics of the evaluator; the
// scheduler, memory, synchronization and race tracking never know which one
// runs. Indices, predicates and addresses are always concrete. Integer
// tensor data (an s32 input and what add/sub/mul/min/max make of it) are
// domain values too, read as mathematical integers: the model has no
// wraparound, as it has no float rounding.
//   SymbolicDomain: values are expressions over the reals (tileverify/expr.hpp).
//   ConcreteDomain: values are doubles (reals approximated), to replay
//                   counterexamples and to check semantics against a GPU.
#pragma once

#include "tileverify/expr.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace tileverify {

class SymbolicDomain {
 public:
  using Value = Expr;
  explicit SymbolicDomain(ExprContext& ctx) : ctx_(ctx) {}
  ExprContext& context() { return ctx_; }

  Value input(const std::string& tensor, std::uint64_t index) { return ctx_.symbol(tensor, std::uint32_t(index)); }
  Value int_input(const std::string& tensor, std::uint64_t index) {
    return ctx_.int_symbol(tensor, std::uint32_t(index));
  }
  Value constant(const Rational& v) { return ctx_.constant(v); }
  Value infinity(bool negative) { return negative ? ctx_.neg_inf() : ctx_.pos_inf(); }
  // The value of a read of memory nothing has wrote (reported, then carried on
  // so that a race behind it can still be found).
  Value poison(const std::string& buffer, std::uint64_t index) {
    return ctx_.symbol("uninitialized:" + buffer, std::uint32_t(index));
  }
  Value add(Value a, Value b) { return ctx_.add(a, b); }
  Value sub(Value a, Value b) { return ctx_.sub(a, b); }
  Value mul(Value a, Value b) { return ctx_.mul(a, b); }
  Value div(Value a, Value b) { return ctx_.div(a, b); }
  Value fma(Value a, Value b, Value c) { return ctx_.add(ctx_.mul(a, b), c); }
  Value neg(Value a) { return ctx_.neg(a); }
  Value abs(Value a) { return ctx_.max(a, ctx_.neg(a)); }
  Value min(Value a, Value b) { return ctx_.min(a, b); }
  Value max(Value a, Value b) { return ctx_.max(a, b); }
  Value rcp(Value a) { return ctx_.pow(a, -1); }
  Value exp(Value a) { return ctx_.exp(a); }
  Value ex2(Value a) { return ctx_.ex2(a); }
  Value func(const char* name, Value a) { return ctx_.func(name, {a}); }
  Value select(Cmp c, Value a, Value b, Value t, Value f) { return ctx_.select(c, a, b, t, f); }
  std::string text(Value v) const { return ctx_.to_string(v, 200); }
  // Whether a and b are the same value for every input: the same
  // hash-consed expression (different expressions may still be equal).
  static bool same(Value a, Value b) { return a == b; }

 private:
  ExprContext& ctx_;
};

class ConcreteDomain {
 public:
  using Value = double;
  // Inputs not given here get deterministic pseudo-random values in [-2, 2).
  std::map<std::string, std::vector<double>> inputs;

  Value input(const std::string& tensor, std::uint64_t index) const {
    auto it = inputs.find(tensor);
    if (it != inputs.end() && index < it->second.size()) return it->second[index];
    std::uint64_t h = std::hash<std::string>()(tensor) ^ (index * 0x9E3779B97F4A7C15ull);
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    return double(h % 4096) / 1024.0 - 2.0;
  }
  // Integer tensors: given values, else pseudo-random integers in [-8, 8].
  Value int_input(const std::string& tensor, std::uint64_t index) const {
    auto it = inputs.find(tensor);
    if (it != inputs.end() && index < it->second.size()) return it->second[index];
    return std::floor(input(tensor, index) * 4.25);
  }
  Value constant(const Rational& v) const { return v.to_double(); }
  Value infinity(bool negative) const { return negative ? -HUGE_VAL : HUGE_VAL; }
  Value poison(const std::string&, std::uint64_t) const { return std::nan(""); }
  Value add(Value a, Value b) const { return a + b; }
  Value sub(Value a, Value b) const { return a - b; }
  Value mul(Value a, Value b) const { return a * b; }
  Value div(Value a, Value b) const { return a / b; }
  Value fma(Value a, Value b, Value c) const { return std::fma(a, b, c); }
  Value neg(Value a) const { return -a; }
  Value abs(Value a) const { return std::fabs(a); }
  Value min(Value a, Value b) const { return std::fmin(a, b); }
  Value max(Value a, Value b) const { return std::fmax(a, b); }
  Value rcp(Value a) const { return 1.0 / a; }
  Value exp(Value a) const { return std::exp(a); }
  Value ex2(Value a) const { return std::exp2(a); }
  Value func(const char* name, Value a) const {
    std::string f(name);
    if (f == "sqrt") return std::sqrt(a);
    if (f == "rsqrt") return 1.0 / std::sqrt(a);
    if (f == "log2") return std::log2(a);
    if (f == "tanh") return std::tanh(a);
    if (f == "log") return std::log(a);
    if (f == "log1p") return std::log1p(a);
    if (f == "erf") return std::erf(a);
    return std::nan("");
  }
  Value select(Cmp c, Value a, Value b, Value t, Value f) const { return apply_cmp(c, a, b) ? t : f; }
  std::string text(Value v) const { return std::to_string(v); }
  // The same bits (a NaN is the same as itself, 0 is not -0): the value
  // memory would hold, for these inputs.
  static bool same(Value a, Value b) {
    std::uint64_t x, y;
    std::memcpy(&x, &a, sizeof x);
    std::memcpy(&y, &b, sizeof y);
    return x == y;
  }
};

}  // namespace tileverify
