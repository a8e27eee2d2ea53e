// Seeded input tensors. Everything here must give the same bits on every
// platform for a seed: the generator is our own (xoshiro256**, seeded by
// splitmix64), the normal sampler uses only +, -, *, / and sqrt (correctly
// rounded by IEEE 754) and a logarithm written here with the same, and this
// file is compiled with -ffp-contract=off (src/CMakeLists.txt) so that no
// compiler fuses a multiply and an add on one platform and not on another.
// std::normal_distribution and std::log would differ between standard
// libraries.
#include "formats.hpp"

#include "tileverify/oracle.hpp"

#include <cmath>
#include <limits>
#include <new>

namespace tileverify::oracle {

using namespace detail;

namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& w : s_) w = splitmix64(seed);
  }
  std::uint64_t next() {  // xoshiro256** (Blackman and Vigna)
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1), 53 random bits.
  double unit() { return double(next() >> 11) * 0x1.0p-53; }
  // Uniform index in [0, n), n > 0 and small (the modulo bias is below 2^-50).
  std::size_t index(std::size_t n) { return std::size_t(next() % n); }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

// ln x for x > 0 with basic operations only: x = m * 2^e, m in [sqrt(1/2),
// sqrt(2)), ln m = 2 atanh(t) with t = (m-1)/(m+1), |t| < 0.172, by its
// series to t^25 (the next term is below 1e-19 of the sum).
double portable_log(double x) {
  int e;
  double m = std::frexp(x, &e);  // exact
  if (m < 0.70710678118654752) {
    m *= 2;
    --e;
  }
  const double t = (m - 1) / (m + 1);
  const double t2 = t * t;
  double term = t, sum = 0;
  for (int k = 1; k <= 25; k += 2) {
    sum += term / k;
    term *= t2;
  }
  return 2 * sum + e * 0.69314718055994530942;
}

// A standard normal sample: Marsaglia's polar method.
double standard_normal(Rng& rng) {
  for (;;) {
    double u = 2 * rng.unit() - 1, v = 2 * rng.unit() - 1;
    double s = u * u + v * v;
    if (s >= 1 || s == 0) continue;
    return u * std::sqrt(-2 * portable_log(s) / s);
  }
}

double uniform(Rng& rng, double lo, double hi) { return lo + (hi - lo) * rng.unit(); }

void add_pm(std::vector<double>& v, double x) {
  v.push_back(x);
  v.push_back(-x);
}

}  // namespace

std::vector<double> special_values(DType t, bool nonfinite) {
  std::vector<double> v;
  FloatFormat f;
  if (float_format(t, &f)) {
    const double inf = std::numeric_limits<double>::infinity();
    const double eps = std::ldexp(1.0, -f.mant);                                  // ulp of 1
    const double min_normal = std::ldexp(1.0, f.emin());
    const double min_sub = std::ldexp(1.0, f.emin() - f.mant);
    const double max = std::ldexp(2 - eps, f.emax());
    v.push_back(0.0);
    v.push_back(-0.0);
    add_pm(v, 1);
    add_pm(v, 1 + eps);      // the neighbours of 1: products and sums with them
    add_pm(v, 1 - eps / 2);  // are where rounding decides the result
    add_pm(v, 2 - eps);      // the largest below 2: rounding up changes the binade
    add_pm(v, min_normal);
    add_pm(v, min_normal - min_sub);  // the largest subnormal
    add_pm(v, min_sub);
    add_pm(v, 3 * min_sub);
    add_pm(v, max);
    add_pm(v, max / 2);  // doubling overflows
    add_pm(v, std::ldexp(1.0, f.emax() / 2 + 1));  // squaring overflows
    // 2^(mant+1): adding 1 is a tie that rounds back to it; adding 1 to the
    // value above it (odd) is a tie that rounds up, past the exact sum.
    add_pm(v, std::ldexp(1.0, f.mant + 1));
    add_pm(v, std::ldexp(1.0, f.mant + 1) + 2);
    add_pm(v, round_to(t, 0.1));      // not exact in binary: the encoded value is not 0.1
    add_pm(v, round_to(t, 1.0 / 3));
    if (nonfinite) {
      add_pm(v, inf);
      v.push_back(std::numeric_limits<double>::quiet_NaN());
    }
    return v;
  }
  IntFormat i = int_format(t);
  if (i.pred) return {0, 1};
  const double top = std::ldexp(1.0, i.is_signed ? i.bits - 1 : i.bits);
  v = {0, 1, top - 1, top - 2, std::ldexp(1.0, i.bits / 2)};  // max, max - 1, a square that overflows
  if (i.is_signed) {
    v.push_back(-1);
    v.push_back(-top);
    v.push_back(-top + 1);
  }
  for (double& x : v) x = round_to(t, x);  // 64-bit: top - 1 is not a double, saturate it
  return v;
}

GeneratedTensor generate(DType t, std::uint64_t count, const InputSpec& spec, std::uint64_t seed) {
  GeneratedTensor g;
  g.dtype = t;
  try {
    if (spec.distribution != Distribution::Normal && !(spec.lo <= spec.hi)) {
      g.error = "lo must not exceed hi";
      return g;
    }
    if (spec.distribution == Distribution::Normal && !(spec.sd >= 0)) {
      g.error = "sd must be non-negative";
      return g;
    }
    if (spec.distribution == Distribution::Special && !(spec.special_rate >= 0 && spec.special_rate <= 1)) {
      g.error = "special_rate must be in [0, 1]";
      return g;
    }
    const std::size_t w = dtype_bytes(t);
    if (count > std::numeric_limits<std::size_t>::max() / w / 2) {
      g.error = "too many elements";
      return g;
    }
    Rng rng(seed);
    std::vector<double> specials;
    if (spec.distribution == Distribution::Special) specials = special_values(t, spec.nonfinite);
    FloatFormat f;
    if (spec.extremes_scaled && float_format(t, &f))
      for (double& s : specials)
        if (std::isfinite(s) && std::fabs(s) >= std::ldexp(1.0, f.emax() / 2)) s = std::ldexp(s, -(f.emax() + 1) / 4);
    g.bytes.resize(std::size_t(count) * w);
    g.values.resize(std::size_t(count));
    for (std::size_t i = 0; i < count; ++i) {
      double x = 0;
      switch (spec.distribution) {
        case Distribution::Uniform: x = uniform(rng, spec.lo, spec.hi); break;
        case Distribution::Normal: x = spec.mean + spec.sd * standard_normal(rng); break;
        case Distribution::Scaled: x = std::ldexp(uniform(rng, spec.lo, spec.hi), spec.scale_exp); break;
        case Distribution::Special:
          // Draw both every time, so that element i's background value does
          // not depend on which earlier elements were special.
          x = uniform(rng, spec.lo, spec.hi);
          if (rng.unit() < spec.special_rate) x = specials[rng.index(specials.size())];
          else (void)rng.next();
          break;
      }
      std::uint8_t* p = g.bytes.data() + i * w;
      encode(t, x, p);
      double v = decode(t, p);
      g.values[i] = v;
      if (!dtype_is_float(t) && std::fabs(v) >= 9007199254740992.0) g.values_exact = false;
    }
  } catch (const std::bad_alloc&) {
    g = GeneratedTensor{};
    g.dtype = t;
    g.error = "out of memory";
  }
  return g;
}

}  // namespace tileverify::oracle
