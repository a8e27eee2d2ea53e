// tileverify/oracle.hpp — the host side of differential testing.
//
// Contract: everything a differential run of two kernels on real inputs needs
// on the host, with no GPU: seeded input tensors in a dtype's exact encoding
// (and the value each element encodes), comparison of an optimized kernel's
// output with a reference kernel's, and an exact reference: the outputs'
// expressions (from a symbolic run) evaluated on the same inputs with MPFR,
// against which each float kernel's rounding error is measured.
//
// Conventions: values cross the API as doubles, which hold every f16, bf16,
// f32 and f64 value and every integer up to 2^53 exactly. Encodings are
// little-endian, as on every GPU tileverify targets. No function throws:
// failures are an `error` string in the result (or, for the scalar helpers,
// a documented fallback value). docs/oracles.md explains the oracles and
// their default tolerances to users.
#pragma once

#include "tileverify/expr.hpp"
#include "tileverify/program.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tileverify::oracle {

// ---------------------------------------------------------------------------
// Encodings

// The IEEE binary16 / bfloat16 / binary32 bits nearest to x, rounding to
// nearest, ties to even; overflow gives infinity, NaN a quiet NaN with x's
// sign. `residual` is the sign of (true value - x) when x is itself a rounded
// value (the exact reference passes it): it breaks a tie that is only a tie
// because x was rounded, so that rounding twice gives the once-rounded result.
std::uint16_t f16_bits(double x, int residual = 0);
std::uint16_t bf16_bits(double x, int residual = 0);
std::uint32_t f32_bits(double x, int residual = 0);
double f16_value(std::uint16_t bits);
double bf16_value(std::uint16_t bits);
double f32_value(std::uint32_t bits);

// x rounded to the dtype (floats: as above; integers: to nearest, ties to
// even, saturated to the type's range, NaN as 0; Pred: 0 or 1). The B types
// are read as unsigned integers of their width.
double round_to(DType t, double x, int residual = 0);
// Writes round_to(t, x) in t's encoding at dst (dtype_bytes(t) bytes).
void encode(DType t, double x, std::uint8_t* dst, int residual = 0);
// The value of the element at src.
double decode(DType t, const std::uint8_t* src);
// All elements of a byte array; a trailing partial element is ignored.
std::vector<double> decode_all(DType t, const std::vector<std::uint8_t>& bytes);

// The spacing of t's values at x: 2^(max(floor(log2|x|), emin) - mantissa
// bits); at 0, the smallest subnormal; beyond the largest finite, the
// largest binade's spacing. Integers: 1.
double ulp_of(DType t, double x);
// How many values of t lie between a and b, counting one end: 0 when equal
// (and between +0 and -0), 1 between 0 and the smallest subnormal, across
// zero the sum of both sides. Both are first rounded to t. Integers: |a - b|.
// UINT64_MAX when either is NaN.
std::uint64_t ulp_distance(DType t, double a, double b);

// ---------------------------------------------------------------------------
// Input generation

enum class Distribution : std::uint8_t {
  Uniform,  // uniform in [lo, hi]
  Normal,   // normal(mean, sd)
  Scaled,   // uniform in [lo, hi] times 2^scale_exp: huge or tiny magnitudes
  Special,  // uniform in [lo, hi], with special values at special_rate
};

struct InputSpec {
  Distribution distribution = Distribution::Uniform;
  double lo = -1, hi = 1;
  double mean = 0, sd = 1;
  int scale_exp = 0;
  double special_rate = 0.1;  // Special: the chance that an element is a special value
  bool nonfinite = false;     // Special: also ±inf and NaN among the special values
  // Special: the special values of magnitude 2^(emax/2) and above (the
  // largest finite, half of it, the one whose square overflows) scaled by
  // 2^-((emax+1)/4) (2^-32 in f32): products of them with ordinary values,
  // and sums of many such, stay finite, while a square of the largest still
  // overflows. A special-values trial whose overflow goes away so came from
  // a sum's partial results, which the order of the sum decides (tileverify
  // test, docs/cuda.md).
  bool extremes_scaled = false;
};

struct GeneratedTensor {
  DType dtype = DType::F32;
  std::vector<std::uint8_t> bytes;  // count * dtype_bytes(dtype), the upload
  std::vector<double> values;       // the value each element encodes
  // False when some value did not fit a double exactly (only S64/U64/B64
  // beyond 2^53): `values` then holds it rounded, `bytes` the exact integer.
  bool values_exact = true;
  std::string error;  // non-empty: nothing was generated (bad spec, out of memory)
};

// `count` elements of t, drawn from spec with the given seed. The same seed,
// spec, dtype and count give the same bytes on every platform and compiler
// (own PRNG and normal sampler, basic IEEE operations only). Draws outside
// an integer type's range saturate; outside a float type's range become ±inf.
GeneratedTensor generate(DType t, std::uint64_t count, const InputSpec& spec, std::uint64_t seed);

// The special values generate() mixes in for t (docs/oracles.md lists why
// each is there), without ±inf and NaN unless `nonfinite`.
std::vector<double> special_values(DType t, bool nonfinite = false);

// ---------------------------------------------------------------------------
// Comparing an optimized kernel's output with a reference kernel's

// An element matches when |out - ref| <= abs + rel * |ref|, or when it is at
// most `ulps` values of the dtype away (0: that test is off).
struct Tolerance {
  double rel = 0;
  double abs = 0;
  std::uint64_t ulps = 0;
};
// f64: rel 1e-9, abs 1e-10; f32: rel 1e-4, abs 1e-4; f16: rel 1e-2, abs 1e-3;
// bf16: rel 2e-2, abs 1e-2; integers and Pred: exact. They assume inputs of
// about unit scale and f32 accumulation; docs/oracles.md says why, and when
// to override them (reductions past ~4096 terms, tanh.approx, TF32).
Tolerance default_tolerance(DType t);

enum class ElementClass : std::uint8_t {
  Match,           // within tolerance, or the same infinity
  Mismatch,        // both finite, beyond tolerance
  NanWhereNumber,  // output NaN, reference not NaN: a finding
  BothNan,         // NaN in both: fine (co-located NaNs)
  InfMismatch,     // not NaN, but an infinity in one only, or of the other sign
  NumberWhereNan,  // output not NaN, reference NaN
};
constexpr std::size_t kElementClasses = 6;
const char* element_class_name(ElementClass c);

struct ElementReport {
  std::uint64_t index = 0;
  ElementClass cls = ElementClass::Match;
  double reference = 0, output = 0;
  double abs_error = 0;  // |output - reference|; inf or NaN for non-finite pairs
  double rel_error = 0;  // abs_error / |reference|; inf where the reference is 0 and they differ
  std::uint64_t ulps = 0;  // ulp_distance in the dtype
};

struct CompareOptions {
  std::optional<Tolerance> tolerance;  // default: default_tolerance(dtype)
  std::size_t worst = 10;              // how many elements `worst` keeps
};

struct Comparison {
  DType dtype = DType::F32;
  Tolerance tolerance;
  std::uint64_t elements = 0;
  std::array<std::uint64_t, kElementClasses> counts{};  // by ElementClass
  std::uint64_t count(ElementClass c) const { return counts[std::size_t(c)]; }
  // Findings first (NaN, Inf and NaN-placement differences), then mismatches
  // by how far past the tolerance they are, then the largest errors among
  // matches; at most CompareOptions::worst.
  std::vector<ElementReport> worst;
  // Over the elements finite in both (`measured` of them); rel over those
  // whose reference is non-zero (`measured_rel`).
  std::uint64_t measured = 0, measured_rel = 0;
  double max_abs_error = 0, mean_abs_error = 0;
  double max_rel_error = 0, mean_rel_error = 0;
  double max_ulps = 0, mean_ulps = 0;
  std::string error;  // non-empty: not compared (lengths differ, out of memory)
  // No error, and every element Match or BothNan.
  bool passed() const;
};

Comparison compare(DType t, const std::vector<double>& reference, const std::vector<double>& output,
                   const CompareOptions& options = {});
// The same on the arrays as downloaded (decode_all of each).
Comparison compare_bytes(DType t, const std::vector<std::uint8_t>& reference,
                         const std::vector<std::uint8_t>& output, const CompareOptions& options = {});

// ---------------------------------------------------------------------------
// The exact reference

// Input values by tensor name, element by flat index (GeneratedTensor::values).
using InputValues = std::map<std::string, std::vector<double>>;

enum class ExactKind : std::uint8_t {
  Finite,     // a real number
  PosInf,     // the expression is +inf (an identity the kernel kept)
  NegInf,     // -inf
  Undefined,  // not a real: division by zero, log of a negative, inf - inf,
              // an infinite input, a function of unknown meaning, a missing input
  Unwritten,  // the kernel never wrote the element (nullopt expression)
};
const char* exact_kind_name(ExactKind k);

struct ExactValue {
  ExactKind kind = ExactKind::Undefined;
  // Finite: the real rounded to the nearest double (±inf past the double
  // range), `low` the rest rounded to a double (nearest + low carries about
  // 106 bits), `residual` the sign of real - nearest (0: nearest is exact).
  double nearest = 0, low = 0;
  int residual = 0;
  // False when a 50-digit evaluation rounds to another double than the
  // 100-digit one: cancellation so heavy that even 100 digits may be wrong.
  bool reliable = true;
  std::string why;  // Undefined: the reason
};

struct ExactOptions {
  // Read nvcc's float constants for log2(e) and ln 2 as the reals they stand
  // for (the decider's reading, docs/decide.md), so that a kernel's
  // 2^(x * 1.44269502f) is measured against e^x, the function it means,
  // rather than against the real value of its rounded constant.
  bool read_known_constants = true;
};

struct ExactResult {
  std::vector<ExactValue> values;  // one per expression
  std::string error;               // non-empty: nothing evaluated (out of memory, ...)
};

// Evaluates each expression with MPFR at 100 decimal digits, input symbol
// name[i] taking inputs.at(name)[i] (a missing value makes that element
// Undefined, naming the symbol), and checks each at 50 digits.
ExactResult exact_values(const ExprContext& ctx, const std::vector<std::optional<Expr>>& outputs,
                         const InputValues& inputs, const ExactOptions& options = {});

// How a float output relates to the exact value of its element.
enum class Hazard : std::uint8_t {
  None,            // both finite (or a correctly rounded 0 or overflow): error measured
  NanOutput,       // the exact value is a real or an infinity, the output NaN
  InfOutput,       // the exact value is a real within the dtype's range, the output ±inf
  OutOfRange,      // the exact value rounds to ±inf in the dtype: no finite output can be right
  Underflow,       // the exact value rounds to a non-zero value of the dtype, the output is 0
  WrongInf,        // the exact value is ±inf, the output something else (not NaN)
  ExactUndefined,  // no exact value to measure against (ExactKind::Undefined)
  Unwritten,       // no expression (ExactKind::Unwritten)
};
constexpr std::size_t kHazards = 8;
const char* hazard_name(Hazard h);

struct ExactElementReport {
  std::uint64_t index = 0;
  Hazard hazard = Hazard::None;
  double output = 0;
  ExactValue exact;
  double ulps = 0;       // |output - exact| in ulps of the dtype at the exact value
  double rel_error = 0;  // |output - exact| / |exact| (inf where exact is 0 and output not)
};

struct ExactComparison {
  DType dtype = DType::F32;
  std::uint64_t elements = 0;
  std::array<std::uint64_t, kHazards> counts{};  // by Hazard
  std::uint64_t count(Hazard h) const { return counts[std::size_t(h)]; }
  std::uint64_t unreliable = 0;  // exact values marked not reliable
  // Hazards first (in enum order past None, ExactUndefined and Unwritten),
  // then the largest ulp errors.
  std::vector<ExactElementReport> worst;
  // Over Hazard::None elements (`measured`): ulps and rel error; 0.5 ulp at
  // most means correctly rounded.
  std::uint64_t measured = 0;
  double max_ulps = 0, mean_ulps = 0;
  double max_rel_error = 0, mean_rel_error = 0;
  std::uint64_t correctly_rounded = 0;  // measured elements with ulps <= 0.5
  std::string error;
};

// Measures a kernel's outputs (values of dtype t) against the exact values.
ExactComparison measure(DType t, const std::vector<double>& output, const std::vector<ExactValue>& exact,
                        std::size_t worst = 10);

}  // namespace tileverify::oracle
