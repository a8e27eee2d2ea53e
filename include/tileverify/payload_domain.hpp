// tileverify/payload_domain.hpp — running a Program on FpSan payloads.
//
// Contract: PayloadDomain is a value domain for run_program (see
// domains.hpp) in which every float is a 32-bit FpSan payload and every float
// operation is its payload operation (tileverify/payload.hpp): ring
// arithmetic mod 2^32, exp = exp2(x · embed(log2 e)), signed payload order for
// min/max and comparisons, tagged unary functions. Two kernels that compute
// the same expression under the identities the algebra keeps give
// bit-identical payloads; most wrong kernels give different ones. A run is as
// fast as a concrete one, but agreement is evidence, not a proof (see
// docs/fpsan.md); races, deadlocks and out-of-bounds accesses are still found
// by the evaluator, as in any domain.
//
// Modelling choices (docs/fpsan.md): one payload width (fp32's) for every
// float of a run, as the symbolic domain has one real line (f16, bf16 and f64
// data and constants are embedded as the nearest f32); -inf and +inf are the
// least and greatest payloads, so a running max that starts at -inf behaves;
// integer tensor data are plain 32-bit integers under the same ring
// operations (which are then exact integer arithmetic mod 2^32).
#pragma once

#include "tileverify/eval.hpp"
#include "tileverify/payload.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace tileverify {

class PayloadDomain {
 public:
  using Value = std::uint32_t;
  static constexpr unsigned W = 32;

  // Inputs not given here are pseudo-random payloads from (seed, tensor, index).
  explicit PayloadDomain(std::uint64_t seed = 1) : seed_(seed) {}
  std::map<std::string, std::vector<Value>> inputs;

  Value input(const std::string& tensor, std::uint64_t index) const {
    auto it = inputs.find(tensor);
    if (it != inputs.end() && index < it->second.size()) return it->second[index];
    return Value(fpsan::murmur64_fmix(seed_ ^ fpsan::stable_string_hash(tensor.c_str()) ^ (index * 0x9E3779B97F4A7C15ull)));
  }
  Value int_input(const std::string& tensor, std::uint64_t index) const { return input(tensor, index); }
  Value constant(const Rational& v) const {
    float f = float(v.to_double());
    std::uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return Value(fpsan::embed<fpsan::fp32_format>(bits));
  }
  Value infinity(bool negative) const { return negative ? 0x80000000u : 0x7fffffffu; }
  Value poison(const std::string& buffer, std::uint64_t index) const { return input("uninitialized:" + buffer, index); }
  Value add(Value a, Value b) const { return Value(fpsan::add<W>(a, b)); }
  Value sub(Value a, Value b) const { return Value(fpsan::sub<W>(a, b)); }
  Value mul(Value a, Value b) const { return Value(fpsan::mul<W>(a, b)); }
  Value div(Value a, Value b) const { return Value(fpsan::div<W>(a, b)); }
  Value fma(Value a, Value b, Value c) const { return Value(fpsan::fma<W>(a, b, c)); }
  Value neg(Value a) const { return Value(fpsan::neg<W>(a)); }
  Value abs(Value a) const { return max(a, neg(a)); }  // as |x| = max(x, -x) over the reals
  Value min(Value a, Value b) const { return Value(fpsan::min<W>(a, b)); }
  Value max(Value a, Value b) const { return Value(fpsan::max<W>(a, b)); }
  Value rcp(Value a) const { return Value(fpsan::inv<W>(a)); }  // 1 / a = 1 · inv(a)
  Value exp(Value a) const { return Value(fpsan::exp<W>(a)); }
  Value ex2(Value a) const { return Value(fpsan::exp2<W>(a)); }
  Value func(const char* name, Value a) const {
    std::string f(name);
    if (f == "sqrt") return Value(fpsan::sqrt<W>(a));
    if (f == "rsqrt") return Value(fpsan::rsqrt<W>(a));
    if (f == "log2") return Value(fpsan::log2<W>(a));
    if (f == "log") return Value(fpsan::log<W>(a));
    // Not one of FpSan's tagged ops (tanh): tagged like a pure extern function.
    fpsan::u64 x = a;
    return Value(fpsan::extern_elementwise<W>(fpsan::stable_string_hash(name), &x, 1));
  }
  Value select(Cmp c, Value a, Value b, Value t, Value f) const {
    return apply_cmp(c, std::int32_t(a), std::int32_t(b)) ? t : f;  // signed payload order, as min/max
  }
  std::string text(Value v) const {
    char s[16];
    std::snprintf(s, sizeof s, "0x%08x", unsigned(v));
    return s;
  }
  // The same payload (for these payload inputs).
  static bool same(Value a, Value b) { return a == b; }
  // The float whose bits are this payload unembedded (what FpSan hands back).
  static float to_float(Value v) {
    std::uint32_t bits = std::uint32_t(fpsan::unembed<fpsan::fp32_format>(v));
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }

 private:
  std::uint64_t seed_;
};

extern template RunResult<PayloadDomain> run_program(const Program&, const Launch&, PayloadDomain&, const RunOptions&);

}  // namespace tileverify
