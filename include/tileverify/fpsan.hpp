// tileverify/fpsan.hpp — FpSan value types: run a templated kernel in payload mode.
//
//   template <class T> T softmax_denominator(const T* x, int n);
//   softmax_denominator<float>(...)                   // ordinary floats
//   softmax_denominator<tileverify::fpsan::f32>(...)  // FpSan payloads, unchanged code
//
// f16, bf16, f32 and f64 each hold one payload (sizeof equals the float's),
// are trivially copyable and trivially default-constructible (usable in
// __shared__ arrays), and implement every operation the way Triton's FpSan
// rewrites it (tileverify/payload.hpp; docs/fpsan.md lists the formulas).
// Math functions are hidden friends under the names CUDA code uses (exp,
// expf, __expf, fmaxf, rsqrtf, ...), so call them unqualified, as a kernel
// templated on its scalar type does anyway; std::exp(x) does not find them.
//
// Payloads are not numbers: a < b follows the signed payload order (the one
// fmin/fmax use, so a < b ? a : b == fmin(a, b)), not the real order.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "tileverify/payload.hpp"

namespace tileverify {
namespace fpsan {

namespace detail {

TILEVERIFY_HD inline std::uint32_t float_to_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}
TILEVERIFY_HD inline float bits_to_float(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}
TILEVERIFY_HD inline u64 double_to_bits(double d) {
#if defined(__CUDA_ARCH__)
  return static_cast<u64>(__double_as_longlong(d));
#else
  u64 u;
  std::memcpy(&u, &d, sizeof u);
  return u;
#endif
}
TILEVERIFY_HD inline double bits_to_double(u64 u) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(u));
#else
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
#endif
}

// binary32 -> binary16, round to nearest even; NaNs stay NaNs (quiet).
// Software, so that host and device agree without cuda_fp16.h.
TILEVERIFY_HD constexpr std::uint16_t float_bits_to_half(std::uint32_t f) {
  const std::uint32_t sign = (f >> 16) & 0x8000u;
  const std::uint32_t e = (f >> 23) & 0xffu;
  std::uint32_t m = f & 0x7fffffu;
  if (e == 0xffu) return static_cast<std::uint16_t>(sign | 0x7c00u | (m != 0 ? (0x200u | (m >> 13)) : 0u));
  const int he = static_cast<int>(e) - 127 + 15;
  if (he >= 0x1f) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (he <= 0) {
    if (he < -10) return static_cast<std::uint16_t>(sign);  // below half the least subnormal
    m |= 0x800000u;
    const unsigned sh = static_cast<unsigned>(14 - he);  // 14..24
    std::uint32_t hm = m >> sh;
    const std::uint32_t r = m & ((1u << sh) - 1), halfway = 1u << (sh - 1);
    if (r > halfway || (r == halfway && (hm & 1u))) ++hm;  // may carry into the least normal: right
    return static_cast<std::uint16_t>(sign | hm);
  }
  std::uint32_t h = (static_cast<std::uint32_t>(he) << 10) | (m >> 13);
  const std::uint32_t r = m & 0x1fffu;
  if (r > 0x1000u || (r == 0x1000u && (h & 1u))) ++h;  // a carry into the exponent is right, up to inf
  return static_cast<std::uint16_t>(sign | h);
}

TILEVERIFY_HD constexpr std::uint32_t half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  int e = (h >> 10) & 0x1f;
  std::uint32_t m = h & 0x3ffu;
  if (e == 0x1f) return sign | 0x7f800000u | (m << 13);
  if (e == 0) {
    if (m == 0) return sign;
    e = 1;  // normalise the subnormal
    while ((m & 0x400u) == 0) {
      m <<= 1;
      --e;
    }
    m &= 0x3ffu;
  }
  return sign | (static_cast<std::uint32_t>(e + 112) << 23) | (m << 13);
}

TILEVERIFY_HD constexpr std::uint16_t float_bits_to_bf16(std::uint32_t f) {
  if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((f >> 16) | 0x40u);
  return static_cast<std::uint16_t>((f + 0x7fffu + ((f >> 16) & 1u)) >> 16);
}
TILEVERIFY_HD constexpr std::uint32_t bf16_bits_to_float(std::uint16_t h) { return static_cast<std::uint32_t>(h) << 16; }

}  // namespace detail

namespace detail {
// Real numbers <-> bit patterns of the IEEE formats, keyed by width and the
// bits of 1.0 (so that a format with another mixing seed shares them).
template <unsigned W, u64 OneBits>
struct ieee_codec;

template <>
struct ieee_codec<32, 0x3f800000u> {
  static constexpr u64 inf_bits = 0x7f800000u;
  static constexpr u64 nan_bits = 0x7fc00000u;
  TILEVERIFY_HD static u64 encode(float f) { return float_to_bits(f); }
  TILEVERIFY_HD static u64 encode(double d) { return float_to_bits(static_cast<float>(d)); }
  TILEVERIFY_HD static float to_float(u64 b) { return bits_to_float(static_cast<std::uint32_t>(b)); }
  TILEVERIFY_HD static double to_double(u64 b) { return static_cast<double>(to_float(b)); }
};
template <>
struct ieee_codec<64, 0x3ff0000000000000u> {
  static constexpr u64 inf_bits = 0x7ff0000000000000u;
  static constexpr u64 nan_bits = 0x7ff8000000000000u;
  TILEVERIFY_HD static u64 encode(float f) { return double_to_bits(static_cast<double>(f)); }
  TILEVERIFY_HD static u64 encode(double d) { return double_to_bits(d); }
  TILEVERIFY_HD static double to_double(u64 b) { return bits_to_double(b); }
  TILEVERIFY_HD static float to_float(u64 b) { return static_cast<float>(to_double(b)); }
};
template <>
struct ieee_codec<16, 0x3c00u> {  // binary16
  static constexpr u64 inf_bits = 0x7c00u;
  static constexpr u64 nan_bits = 0x7e00u;
  TILEVERIFY_HD static u64 encode(float f) { return float_bits_to_half(float_to_bits(f)); }
  TILEVERIFY_HD static u64 encode(double d) { return encode(static_cast<float>(d)); }
  TILEVERIFY_HD static float to_float(u64 b) {
    return bits_to_float(half_bits_to_float(static_cast<std::uint16_t>(b)));
  }
  TILEVERIFY_HD static double to_double(u64 b) { return static_cast<double>(to_float(b)); }
};
template <>
struct ieee_codec<16, 0x3f80u> {  // bfloat16
  static constexpr u64 inf_bits = 0x7f80u;
  static constexpr u64 nan_bits = 0x7fc0u;
  TILEVERIFY_HD static u64 encode(float f) { return float_bits_to_bf16(float_to_bits(f)); }
  TILEVERIFY_HD static u64 encode(double d) { return encode(static_cast<float>(d)); }
  TILEVERIFY_HD static float to_float(u64 b) {
    return bits_to_float(bf16_bits_to_float(static_cast<std::uint16_t>(b)));
  }
  TILEVERIFY_HD static double to_double(u64 b) { return static_cast<double>(to_float(b)); }
};
}  // namespace detail

// real_codec<F>: real numbers <-> F's bit patterns, for fp32, fp64, fp16 and
// bf16. Doubles reach the 16-bit formats through float (like
// __float2half(float(d))).
template <class F>
struct real_codec : detail::ieee_codec<F::width, F::one_bits> {};

template <class F>
class value;

template <class T>
struct is_value : std::false_type {};
template <class F>
struct is_value<value<F>> : std::true_type {};

// One float of format F, held as its FpSan payload.
template <class F>
class value {
 public:
  using format_type = F;
  using word = typename F::word;
  static constexpr unsigned width = F::width;

  // Trivial, so that __shared__ arrays of values are allowed; T{} is +0.
  value() = default;

  // From a real number: embed its bit pattern (what FpSan does to a float
  // that enters the kernel). Implicit, so that T x = 0; x * 0.5f; fmaxf(x, 0)
  // read as they do with float.
  template <class A, std::enable_if_t<std::is_arithmetic<A>::value, int> = 0>
  TILEVERIFY_HD value(A v) : p_(static_cast<word>(embed<F>(encode_real(v)))) {}  // NOLINT(google-explicit-constructor)

  // Between formats: the payload cast of extf/truncf. Widening is implicit
  // (as float -> double is), narrowing and same-width reinterpretation
  // (f16 <-> bf16, payload kept) are explicit, which keeps mixed-format
  // arithmetic unambiguous: f16 + f32 is computed in f32.
  template <class G, std::enable_if_t<(G::width < F::width), int> = 0>
  TILEVERIFY_HD constexpr value(value<G> v)  // NOLINT(google-explicit-constructor)
      : p_(static_cast<word>(cast<G::width, F::width>(v.payload()))) {}
  template <class G, std::enable_if_t<(G::width > F::width) || (G::width == F::width && !std::is_same<G, F>::value),
                                      int> = 0>
  TILEVERIFY_HD constexpr explicit value(value<G> v)
      : p_(static_cast<word>(cast<G::width, F::width>(v.payload()))) {}

  TILEVERIFY_HD static constexpr value from_payload(u64 p) { return value(payload_tag{}, p); }
  // From a float bit pattern of format F (e.g. one element of a Triton FpSan output tensor).
  TILEVERIFY_HD static constexpr value from_bits(u64 bits) { return value(payload_tag{}, embed<F>(bits)); }

  TILEVERIFY_HD constexpr u64 payload() const { return p_; }
  // The float bit pattern FpSan would store to memory: unembed(payload).
  TILEVERIFY_HD constexpr u64 bits() const { return unembed<F>(p_); }
  TILEVERIFY_HD float to_float() const { return real_codec<F>::to_float(bits()); }
  TILEVERIFY_HD double to_double() const { return real_codec<F>::to_double(bits()); }
  TILEVERIFY_HD explicit operator float() const { return to_float(); }
  TILEVERIFY_HD explicit operator double() const { return to_double(); }

  // ---- arithmetic: the ring mod 2^w -------------------------------------
  friend TILEVERIFY_HD constexpr value operator+(value a, value b) { return from_payload(add<width>(a.p_, b.p_)); }
  friend TILEVERIFY_HD constexpr value operator-(value a, value b) { return from_payload(sub<width>(a.p_, b.p_)); }
  friend TILEVERIFY_HD constexpr value operator*(value a, value b) { return from_payload(mul<width>(a.p_, b.p_)); }
  friend TILEVERIFY_HD constexpr value operator/(value a, value b) { return from_payload(div<width>(a.p_, b.p_)); }
  friend TILEVERIFY_HD constexpr value operator-(value a) { return from_payload(neg<width>(a.p_)); }
  friend TILEVERIFY_HD constexpr value operator+(value a) { return a; }
  TILEVERIFY_HD constexpr value& operator+=(value b) { return *this = *this + b; }
  TILEVERIFY_HD constexpr value& operator-=(value b) { return *this = *this - b; }
  TILEVERIFY_HD constexpr value& operator*=(value b) { return *this = *this * b; }
  TILEVERIFY_HD constexpr value& operator/=(value b) { return *this = *this / b; }

  // ---- comparisons: payload equality, signed payload order ---------------
  friend TILEVERIFY_HD constexpr bool operator==(value a, value b) { return a.p_ == b.p_; }
  friend TILEVERIFY_HD constexpr bool operator!=(value a, value b) { return a.p_ != b.p_; }
  friend TILEVERIFY_HD constexpr bool operator<(value a, value b) { return signed_less<width>(a.p_, b.p_); }
  friend TILEVERIFY_HD constexpr bool operator>(value a, value b) { return signed_less<width>(b.p_, a.p_); }
  friend TILEVERIFY_HD constexpr bool operator<=(value a, value b) { return !signed_less<width>(b.p_, a.p_); }
  friend TILEVERIFY_HD constexpr bool operator>=(value a, value b) { return !signed_less<width>(a.p_, b.p_); }

  // ---- math under the names kernels use ---------------------------------
#define TILEVERIFY_FPSAN_UNARY(fn, op) \
  friend TILEVERIFY_HD constexpr value fn(value x) { return from_payload(::tileverify::fpsan::op<width>(x.p_)); }
#define TILEVERIFY_FPSAN_BINARY(fn, op)                                                 \
  friend TILEVERIFY_HD constexpr value fn(value a, value b) {                           \
    return from_payload(::tileverify::fpsan::op<width>(a.p_, b.p_));                    \
  }
#define TILEVERIFY_FPSAN_FMA(fn) \
  friend TILEVERIFY_HD constexpr value fn(value a, value b, value c) { return from_payload(::tileverify::fpsan::fma<width>(a.p_, b.p_, c.p_)); }

  TILEVERIFY_FPSAN_UNARY(exp, exp)
  TILEVERIFY_FPSAN_UNARY(expf, exp)
  TILEVERIFY_FPSAN_UNARY(__expf, exp)  // Triton maps __nv_fast_expf to the same model
  TILEVERIFY_FPSAN_UNARY(exp2, exp2)
  TILEVERIFY_FPSAN_UNARY(exp2f, exp2)
  TILEVERIFY_FPSAN_UNARY(sin, sin)
  TILEVERIFY_FPSAN_UNARY(sinf, sin)
  TILEVERIFY_FPSAN_UNARY(__sinf, sin)
  TILEVERIFY_FPSAN_UNARY(cos, cos)
  TILEVERIFY_FPSAN_UNARY(cosf, cos)
  TILEVERIFY_FPSAN_UNARY(__cosf, cos)
  TILEVERIFY_FPSAN_UNARY(log, log)
  TILEVERIFY_FPSAN_UNARY(logf, log)
  TILEVERIFY_FPSAN_UNARY(__logf, log)
  TILEVERIFY_FPSAN_UNARY(log2, log2)
  TILEVERIFY_FPSAN_UNARY(log2f, log2)
  TILEVERIFY_FPSAN_UNARY(__log2f, log2)
  // tl.sqrt (math.sqrt) and tl.sqrt_rn (tt.precise_sqrt) carry different
  // tags; CUDA's sqrtf takes the first, the explicitly rounded forms the second.
  TILEVERIFY_FPSAN_UNARY(sqrt, sqrt)
  TILEVERIFY_FPSAN_UNARY(sqrtf, sqrt)
  TILEVERIFY_FPSAN_UNARY(sqrt_rn, precise_sqrt)
  TILEVERIFY_FPSAN_UNARY(__fsqrt_rn, precise_sqrt)
  TILEVERIFY_FPSAN_UNARY(__dsqrt_rn, precise_sqrt)
  TILEVERIFY_FPSAN_UNARY(rsqrt, rsqrt)
  TILEVERIFY_FPSAN_UNARY(rsqrtf, rsqrt)
  TILEVERIFY_FPSAN_UNARY(__frsqrt_rn, rsqrt)
  TILEVERIFY_FPSAN_UNARY(erf, erf)
  TILEVERIFY_FPSAN_UNARY(erff, erf)
  TILEVERIFY_FPSAN_UNARY(floor, floor)
  TILEVERIFY_FPSAN_UNARY(floorf, floor)
  TILEVERIFY_FPSAN_UNARY(ceil, ceil)
  TILEVERIFY_FPSAN_UNARY(ceilf, ceil)
  TILEVERIFY_FPSAN_BINARY(fmin, min)
  TILEVERIFY_FPSAN_BINARY(fminf, min)
  TILEVERIFY_FPSAN_BINARY(min, min)
  TILEVERIFY_FPSAN_BINARY(fmax, max)
  TILEVERIFY_FPSAN_BINARY(fmaxf, max)
  TILEVERIFY_FPSAN_BINARY(max, max)
  TILEVERIFY_FPSAN_BINARY(fmod, rem)
  TILEVERIFY_FPSAN_BINARY(fmodf, rem)
  TILEVERIFY_FPSAN_BINARY(fdividef, div)
  TILEVERIFY_FPSAN_BINARY(__fdividef, div)
  TILEVERIFY_FPSAN_BINARY(__fdiv_rn, div)
  TILEVERIFY_FPSAN_BINARY(__fadd_rn, add)
  TILEVERIFY_FPSAN_BINARY(__fsub_rn, sub)
  TILEVERIFY_FPSAN_BINARY(__fmul_rn, mul)
  TILEVERIFY_FPSAN_FMA(fma)
  TILEVERIFY_FPSAN_FMA(fmaf)
  TILEVERIFY_FPSAN_FMA(__fmaf_rn)
#undef TILEVERIFY_FPSAN_UNARY
#undef TILEVERIFY_FPSAN_BINARY
#undef TILEVERIFY_FPSAN_FMA

  friend TILEVERIFY_HD constexpr void sincos(value x, value* s, value* c) {
    const cos_sin_pair cs = cos_sin<width>(x.p_);
    *s = from_payload(cs.sin);
    *c = from_payload(cs.cos);
  }
  friend TILEVERIFY_HD constexpr void sincosf(value x, value* s, value* c) { sincos(x, s, c); }

  // Triton does not rewrite math.absf: it clears the sign bit of the
  // unembedded float. On payloads that is the signed absolute value, except
  // that -0.0 (payload 0x80..0) becomes +0.
  friend TILEVERIFY_HD constexpr value fabs(value x) { return from_bits(x.bits() & ~F::sign); }
  friend TILEVERIFY_HD constexpr value fabsf(value x) { return fabs(x); }
  friend TILEVERIFY_HD constexpr value abs(value x) { return fabs(x); }

  // Classification is not rewritten by Triton either: it looks at the
  // unembedded bits. Only meaningful for comparing with such kernels.
  friend TILEVERIFY_HD constexpr bool isnan(value x) { return (x.bits() & F::mag) > real_codec<F>::inf_bits; }
  friend TILEVERIFY_HD constexpr bool isinf(value x) { return (x.bits() & F::mag) == real_codec<F>::inf_bits; }
  friend TILEVERIFY_HD constexpr bool isfinite(value x) { return (x.bits() & F::mag) < real_codec<F>::inf_bits; }

 private:
  struct payload_tag {};
  TILEVERIFY_HD constexpr value(payload_tag, u64 p) : p_(static_cast<word>(wrap<width>(p))) {}

  template <class A>
  TILEVERIFY_HD static u64 encode_real(A v) {
    if constexpr (std::is_same<A, float>::value)
      return real_codec<F>::encode(v);
    else
      return real_codec<F>::encode(static_cast<double>(v));
  }

  word p_;
};

using f16 = value<fp16_format>;
using bf16 = value<bf16_format>;
using f32 = value<fp32_format>;
using f64 = value<fp64_format>;

static_assert(sizeof(f16) == 2 && sizeof(bf16) == 2 && sizeof(f32) == 4 && sizeof(f64) == 8,
              "a value is exactly its payload");
static_assert(std::is_trivially_copyable<f32>::value && std::is_trivially_default_constructible<f32>::value,
              "values must be usable in __shared__ arrays and memcpy'd to and from the device");

// Explicit conversion with a choice of narrowing rule (the implicit and
// explicit constructors use Triton's default, cast_mode::folded).
template <class To, class G>
TILEVERIFY_HD constexpr To convert(value<G> v, cast_mode mode = cast_mode::folded) {
  return To::from_payload(cast<G::width, To::width>(v.payload(), mode));
}

// Triton leaves arith.cmpf alone, so a Triton FpSan kernel compares the
// unembedded floats numerically. This is that comparison (false on NaN),
// for code that must reproduce such a kernel's control flow.
template <class F>
TILEVERIFY_HD bool ieee_less(value<F> a, value<F> b) {
  return a.to_double() < b.to_double();
}

// ttg.fp4_to_fp: each nibble becomes a payload 0..15 of the destination format.
template <class F>
TILEVERIFY_HD constexpr void unpack_fp4(std::uint8_t packed, value<F>& lo, value<F>& hi) {
  const nibble_pair p = unpack_fp4(packed);
  lo = value<F>::from_payload(p.lo);
  hi = value<F>::from_payload(p.hi);
}

namespace detail {
template <unsigned W, class A>
TILEVERIFY_HD u64 extern_operand(A a) {
  if constexpr (is_value<A>::value) {
    return int_cast<A::width, W>(a.payload());
  } else if constexpr (std::is_same<A, float>::value) {
    return int_cast<32, W>(value<fp32_format>(a).payload());
  } else if constexpr (std::is_same<A, double>::value) {
    return int_cast<64, W>(value<fp64_format>(a).payload());
  } else if constexpr (std::is_same<A, bool>::value) {
    return int_cast<1, W>(a ? 1u : 0u);  // an i1 true sign-extends to all ones
  } else {
    static_assert(std::is_integral<A>::value, "extern operands are fpsan values, floats or integers");
    return int_cast<8 * sizeof(A), W>(static_cast<u64>(a));
  }
}

TILEVERIFY_HD constexpr bool same_string(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}

template <class A>
struct is_f32_operand
    : std::integral_constant<bool, std::is_same<A, value<fp32_format>>::value || std::is_same<A, float>::value> {};

// Triton's table of libdevice symbols it models as the op they compute
// (getKnownExtern): only for an all-f32 signature of the right arity;
// anything else falls back to the structural tag, as in Triton.
template <class R, class... Args>
TILEVERIFY_HD bool known_extern(const char* symbol, R* out, Args... args) {
  constexpr std::size_t n = sizeof...(Args);
  if constexpr (std::is_same<R, value<fp32_format>>::value && (is_f32_operand<Args>::value && ...) && n >= 1 &&
                n <= 3) {
    const u64 p[] = {value<fp32_format>(args).payload()...};
    u64 r = 0;
    bool found = true;
    if constexpr (n == 1) {
      if (same_string(symbol, "__nv_fast_expf") || same_string(symbol, "__nv_expf"))
        r = exp<32>(p[0]);
      else if (same_string(symbol, "__nv_exp2f"))
        r = exp2<32>(p[0]);
      else if (same_string(symbol, "__nv_logf"))
        r = log<32>(p[0]);
      else if (same_string(symbol, "__nv_log2f"))
        r = log2<32>(p[0]);
      else if (same_string(symbol, "__nv_cosf"))
        r = cos<32>(p[0]);
      else if (same_string(symbol, "__nv_sinf"))
        r = sin<32>(p[0]);
      else if (same_string(symbol, "__nv_rsqrtf"))
        r = rsqrt<32>(p[0]);
      else if (same_string(symbol, "__nv_erff"))
        r = erf<32>(p[0]);
      else if (same_string(symbol, "__nv_floorf"))
        r = floor<32>(p[0]);
      else if (same_string(symbol, "__nv_ceilf"))
        r = ceil<32>(p[0]);
      else if (same_string(symbol, "__nv_fsqrt_rn"))
        r = precise_sqrt<32>(p[0]);
      else
        found = false;
    } else if constexpr (n == 2) {
      if (same_string(symbol, "__nv_fdiv_rn"))
        r = div<32>(p[0], p[1]);
      else
        found = false;
    } else {
      if (same_string(symbol, "__nv_fmaf"))
        r = fma<32>(p[0], p[1], p[2]);
      else
        found = false;
    }
    if (found) *out = R::from_payload(r);
    return found;
  } else {
    (void)symbol;
    (void)out;
    ((void)args, ...);
    return false;
  }
}

}  // namespace detail

// A pure tt.extern_elementwise call returning R, e.g.
// extern_call<f32>("__nv_tanhf", x): the structural tag of payload.hpp's
// extern_elementwise, exactly as Triton builds it from the libdevice symbol.
// extern_call_hashed skips Triton's alias table (below) and always tags.
template <class R, class... Args>
TILEVERIFY_HD R extern_call_hashed(u64 symbol_hash, Args... args) {
  static_assert(is_value<R>::value, "the result type is an fpsan value type");
  static_assert(sizeof...(Args) > 0, "Triton only rewrites extern calls with at least one operand");
  const u64 operands[] = {detail::extern_operand<R::width>(args)...};
  return R::from_payload(extern_elementwise<R::width>(symbol_hash, operands, sizeof...(Args)));
}
// With Triton's aliases: extern_call<f32>("__nv_expf", x) == expf(x),
// likewise __nv_fast_expf, __nv_exp2f, __nv_logf, __nv_log2f, __nv_cosf,
// __nv_sinf, __nv_rsqrtf, __nv_erff, __nv_floorf, __nv_ceilf, __nv_fsqrt_rn,
// __nv_fdiv_rn and __nv_fmaf, for all-f32 signatures.
template <class R, class... Args>
TILEVERIFY_HD R extern_call(const char* symbol, Args... args) {
  R known;
  if (detail::known_extern(symbol, &known, args...)) return known;
  return extern_call_hashed<R>(stable_string_hash(symbol), args...);
}

}  // namespace fpsan
}  // namespace tileverify

// numeric_limits, so that generic code can ask for the identity of fmax:
// lowest() is the least payload in the signed order (it unembeds to -0.0),
// which is not embed(-inf): a max-reduction started at -infinity() keeps that
// payload whenever it exceeds all data payloads.
namespace std {
template <class F>
class numeric_limits<tileverify::fpsan::value<F>> {
  using V = tileverify::fpsan::value<F>;

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = true;  // ring arithmetic never rounds
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  TILEVERIFY_HD static constexpr V lowest() noexcept { return V::from_payload(F::sign); }
  TILEVERIFY_HD static constexpr V max() noexcept { return V::from_payload(F::mag); }
  TILEVERIFY_HD static constexpr V infinity() noexcept {
    return V::from_bits(tileverify::fpsan::real_codec<F>::inf_bits);
  }
  TILEVERIFY_HD static constexpr V quiet_NaN() noexcept {
    return V::from_bits(tileverify::fpsan::real_codec<F>::nan_bits);
  }
};
}  // namespace std
