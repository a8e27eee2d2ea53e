// Encodings of the dtypes: rounding doubles into f16/bf16/f32 and integers,
// decoding, and ulp arithmetic. Integer arithmetic on the double's bits
// throughout, so the results do not depend on the FPU's rounding mode or on
// how a compiler converts double to float.
#include "formats.hpp"

#include "tileverify/oracle.hpp"

#include <cmath>
#include <limits>

namespace tileverify::oracle {
namespace detail {

namespace {
int bit_length(std::uint64_t m) {
  int n = 0;
  while (m) {
    ++n;
    m >>= 1;
  }
  return n;
}
}  // namespace

std::uint64_t encode_float(double x, FloatFormat f, int residual) {
  const std::uint64_t b = double_bits(x);
  const bool neg = (b >> 63) != 0;
  const int biased_d = int((b >> 52) & 0x7ff);
  const std::uint64_t frac_d = b & ((std::uint64_t(1) << 52) - 1);
  const std::uint64_t sign = std::uint64_t(neg) << (f.exp_bits + f.mant);
  const std::uint64_t all_ones = (std::uint64_t(1) << f.exp_bits) - 1;
  const std::uint64_t inf = sign | (all_ones << f.mant);
  if (biased_d == 0x7ff) return frac_d ? inf | (std::uint64_t(1) << (f.mant - 1)) : inf;
  if (biased_d == 0 && frac_d == 0) return sign;
  // |x| = m * 2^q, m an integer of at most 53 bits.
  std::uint64_t m = biased_d ? frac_d | (std::uint64_t(1) << 52) : frac_d;
  int q = biased_d ? biased_d - 1075 : -1074;
  int e = q + bit_length(m) - 1;  // floor(log2 |x|)
  int quantum = (e > f.emin() ? e : f.emin()) - f.mant;  // log2 of the spacing at x in the format
  // The residual says where the true value lies relative to x: in magnitude.
  int toward_larger = neg ? -residual : residual;
  std::uint64_t n;
  if (q >= quantum) {
    n = m << (q - quantum);  // exact: at most mant + 1 bits
  } else {
    int shift = quantum - q;
    if (shift >= 60) {
      n = 0;  // m < 2^53 is far below half the spacing
    } else {
      n = m >> shift;
      std::uint64_t rem = m & ((std::uint64_t(1) << shift) - 1);
      std::uint64_t half = std::uint64_t(1) << (shift - 1);
      if (rem > half || (rem == half && (toward_larger > 0 || (toward_larger == 0 && (n & 1))))) ++n;
    }
  }
  if (n >> (f.mant + 1)) {  // rounding carried into the next binade: n == 2^(mant+1)
    n >>= 1;
    ++quantum;
  }
  const std::uint64_t hidden = std::uint64_t(1) << f.mant;
  if (n < hidden) return sign | n;  // subnormal (or zero): biased exponent 0
  std::int64_t biased = std::int64_t(quantum) + f.mant + f.bias();
  if (biased >= std::int64_t(all_ones)) return inf;
  return sign | (std::uint64_t(biased) << f.mant) | (n - hidden);
}

double decode_float(std::uint64_t bits, FloatFormat f) {
  const bool neg = (bits >> (f.exp_bits + f.mant)) & 1;
  const std::uint64_t all_ones = (std::uint64_t(1) << f.exp_bits) - 1;
  const std::uint64_t biased = (bits >> f.mant) & all_ones;
  const std::uint64_t frac = bits & ((std::uint64_t(1) << f.mant) - 1);
  double v;
  if (biased == all_ones)
    v = frac ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (biased == 0)
    v = std::ldexp(double(frac), f.emin() - f.mant);  // exact: every format here fits a double
  else
    v = std::ldexp(double(frac | (std::uint64_t(1) << f.mant)), int(biased) - f.bias() - f.mant);
  return neg ? -v : v;
}

IntFormat int_format(DType t) {
  switch (t) {
    case DType::Pred: return {8, false, true};
    case DType::S8: return {8, true, false};
    case DType::U8: case DType::B8: return {8, false, false};
    case DType::S16: return {16, true, false};
    case DType::U16: case DType::B16: return {16, false, false};
    case DType::S32: return {32, true, false};
    case DType::U32: case DType::B32: return {32, false, false};
    case DType::S64: return {64, true, false};
    default: return {64, false, false};  // U64, B64 (floats never get here)
  }
}

}  // namespace detail

using namespace detail;

namespace {

// x rounded to an integer, ties to even, without the FPU rounding mode.
double round_half_even(double x) {
  double fl = std::floor(x);
  double diff = x - fl;  // exact: fl and x share the binade or fl is 0
  if (diff > 0.5) return fl + 1;
  if (diff < 0.5) return fl;
  return std::fmod(fl, 2.0) == 0 ? fl : fl + 1;
}

// The integer of format `f` nearest to x, saturated, as its two's-complement bits.
std::uint64_t encode_int(double x, IntFormat f) {
  if (std::isnan(x)) return 0;
  if (f.pred) return x != 0 ? 1 : 0;
  double r = round_half_even(x);
  if (f.is_signed) {
    const double top = std::ldexp(1.0, f.bits - 1);  // 2^(bits-1): first value past the max
    std::int64_t v;
    if (r >= top)
      v = f.bits == 64 ? std::numeric_limits<std::int64_t>::max() : (std::int64_t(1) << (f.bits - 1)) - 1;
    else if (r < -top)
      v = f.bits == 64 ? std::numeric_limits<std::int64_t>::min() : -(std::int64_t(1) << (f.bits - 1));
    else
      v = std::int64_t(r);
    std::uint64_t u = std::uint64_t(v);
    return f.bits == 64 ? u : u & ((std::uint64_t(1) << f.bits) - 1);
  }
  const double top = std::ldexp(1.0, f.bits);
  if (r <= 0) return 0;
  if (r >= top) return f.bits == 64 ? std::numeric_limits<std::uint64_t>::max() : (std::uint64_t(1) << f.bits) - 1;
  return std::uint64_t(r);
}

double decode_int(std::uint64_t u, IntFormat f) {
  if (f.pred) return u & 1 ? 1 : 0;
  if (!f.is_signed) return double(u);
  if (f.bits < 64 && (u >> (f.bits - 1)) & 1) u |= ~std::uint64_t(0) << f.bits;  // sign-extend
  return double(std::int64_t(u));
}

std::uint64_t load_le(const std::uint8_t* p, std::size_t n) {
  std::uint64_t u = 0;
  for (std::size_t i = 0; i < n; ++i) u |= std::uint64_t(p[i]) << (8 * i);
  return u;
}
void store_le(std::uint8_t* p, std::size_t n, std::uint64_t u) {
  for (std::size_t i = 0; i < n; ++i) p[i] = std::uint8_t(u >> (8 * i));
}

// The bits of t nearest to x (floats and integers alike).
std::uint64_t bits_of(DType t, double x, int residual) {
  FloatFormat f;
  if (float_format(t, &f)) return t == DType::F64 ? double_bits(x) : encode_float(x, f, residual);
  return encode_int(x, int_format(t));
}

double value_of(DType t, std::uint64_t bits) {
  FloatFormat f;
  if (float_format(t, &f)) return t == DType::F64 ? bits_double(bits) : decode_float(bits, f);
  return decode_int(bits, int_format(t));
}

}  // namespace

std::uint16_t f16_bits(double x, int residual) { return std::uint16_t(encode_float(x, kF16, residual)); }
std::uint16_t bf16_bits(double x, int residual) { return std::uint16_t(encode_float(x, kBF16, residual)); }
std::uint32_t f32_bits(double x, int residual) { return std::uint32_t(encode_float(x, kF32, residual)); }
double f16_value(std::uint16_t bits) { return decode_float(bits, kF16); }
double bf16_value(std::uint16_t bits) { return decode_float(bits, kBF16); }
double f32_value(std::uint32_t bits) { return decode_float(bits, kF32); }

double round_to(DType t, double x, int residual) { return value_of(t, bits_of(t, x, residual)); }

void encode(DType t, double x, std::uint8_t* dst, int residual) {
  store_le(dst, dtype_bytes(t), bits_of(t, x, residual));
}

double decode(DType t, const std::uint8_t* src) { return value_of(t, load_le(src, dtype_bytes(t))); }

std::vector<double> decode_all(DType t, const std::vector<std::uint8_t>& bytes) {
  const std::size_t w = dtype_bytes(t);
  std::vector<double> out(bytes.size() / w);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = decode(t, bytes.data() + i * w);
  return out;
}

double ulp_of(DType t, double x) {
  FloatFormat f;
  if (!float_format(t, &f)) return 1;
  double a = std::fabs(x);
  int e = f.emin();
  if (a != 0 && !std::isnan(a)) {
    if (std::isinf(a)) a = std::numeric_limits<double>::max();
    e = std::ilogb(a);  // exact: floor(log2 a), for subnormal doubles too
    if (e < f.emin()) e = f.emin();
    if (e > f.emax()) e = f.emax();
  }
  return std::ldexp(1.0, e - f.mant);
}

std::uint64_t ulp_distance(DType t, double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<std::uint64_t>::max();
  FloatFormat f;
  if (!float_format(t, &f)) {
    double ra = round_to(t, a), rb = round_to(t, b);
    double d = ra > rb ? ra - rb : rb - ra;
    return d >= 18446744073709551616.0 ? std::numeric_limits<std::uint64_t>::max() : std::uint64_t(d);
  }
  // Map sign-magnitude bits onto a line where consecutive values are
  // consecutive integers and +0 and -0 meet at 2^63.
  auto key = [&](double x) {
    std::uint64_t bits = bits_of(t, x, 0);
    const std::uint64_t sign_bit = std::uint64_t(1) << (f.exp_bits + f.mant);
    std::uint64_t mag = bits & (sign_bit - 1);
    const std::uint64_t mid = std::uint64_t(1) << 63;
    return bits & sign_bit ? mid - mag : mid + mag;
  };
  std::uint64_t ka = key(a), kb = key(b);
  return ka > kb ? ka - kb : kb - ka;
}

}  // namespace tileverify::oracle
