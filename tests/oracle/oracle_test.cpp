// The host side of differential testing (tileverify/oracle.hpp): encodings,
// seeded inputs, the comparison oracle, the exact reference and its hazards.
#include "tileverify/oracle.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

using namespace tileverify;
using namespace tileverify::oracle;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// A simple independent bf16 rounding of an f32 (the common bit trick: add
// 0x7fff plus the lowest kept bit, truncate), to compare with bf16_bits.
std::uint16_t bf16_by_bit_trick(std::uint32_t u) {
  return std::uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// A deterministic stream of doubles with every exponent (not the oracle's
// generator: the tests should not lean on what they test).
struct TestRng {
  std::uint64_t s = 0x243F6A8885A308D3ull;
  std::uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
};

}  // namespace

TEST_CASE("oracle: f16 rounds to nearest even, with overflow, subnormals and -0") {
  CHECK(f16_bits(1.0) == 0x3c00);
  CHECK(f16_bits(-2.0) == 0xc000);
  CHECK(f16_bits(0.0) == 0x0000);
  CHECK(f16_bits(-0.0) == 0x8000);
  CHECK(f16_bits(65504.0) == 0x7bff);   // the largest finite
  CHECK(f16_bits(65519.99) == 0x7bff);  // below the midpoint to 65536
  CHECK(f16_bits(65520.0) == 0x7c00);   // the midpoint: ties to even, which is infinity
  CHECK(f16_bits(1e6) == 0x7c00);
  CHECK(f16_bits(-1e6) == 0xfc00);
  CHECK(f16_bits(kInf) == 0x7c00);
  CHECK(f16_bits(-kInf) == 0xfc00);
  CHECK(f16_bits(kNaN) == 0x7e00);
  CHECK(std::isnan(f16_value(0x7e00)));
  // Ties between neighbours of 1 (spacing 2^-10): to the even one.
  CHECK(f16_bits(1 + std::ldexp(1.0, -11)) == 0x3c00);
  CHECK(f16_bits(1 + 3 * std::ldexp(1.0, -11)) == 0x3c02);
  CHECK(f16_bits(1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)) == 0x3c01);  // just above the tie
  // Subnormals: 2^-24 is the smallest, 2^-25 a tie with 0 (even: 0).
  CHECK(f16_bits(std::ldexp(1.0, -24)) == 0x0001);
  CHECK(f16_bits(std::ldexp(1.0, -25)) == 0x0000);
  CHECK(f16_bits(std::ldexp(1.0, -25) * 1.0000001) == 0x0001);
  CHECK(f16_bits(3 * std::ldexp(1.0, -25)) == 0x0002);  // 1.5 * 2^-24: tie, up to even 2
  CHECK(f16_bits(-std::ldexp(1.0, -26)) == 0x8000);       // underflows to -0
  CHECK(f16_bits(std::ldexp(1.0, -14)) == 0x0400);        // the smallest normal
  CHECK(f16_bits(1023 * std::ldexp(1.0, -24)) == 0x03ff);  // the largest subnormal
  CHECK(f16_bits(1023.5 * std::ldexp(1.0, -24)) == 0x0400);  // tie, up into the normals
  CHECK(f16_value(0x0001) == std::ldexp(1.0, -24));
  CHECK(f16_value(0x7bff) == 65504.0);
  CHECK(f16_value(0x8000) == 0.0);
  CHECK(std::signbit(f16_value(0x8000)));
  // The residual breaks a tie that only rounding x made.
  const double tie = 1 + std::ldexp(1.0, -11);
  CHECK(f16_bits(tie, +1) == 0x3c01);
  CHECK(f16_bits(tie, -1) == 0x3c00);
  CHECK(f16_bits(-tie, -1) == 0xbc01);  // the real is further from 0
  CHECK(f16_bits(-tie, +1) == 0xbc00);
  CHECK(f16_bits(1.25, -1) == f16_bits(1.25));  // not a tie: the residual changes nothing

  // Every f16 value comes back through the double.
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    double v = f16_value(std::uint16_t(b));
    if (std::isnan(v)) continue;
    REQUIRE(f16_bits(v) == b);
  }
}

TEST_CASE("oracle: bf16 and f32 agree with independent roundings") {
  CHECK(bf16_bits(1.0) == 0x3f80);
  CHECK(bf16_bits(-0.0) == 0x8000);
  CHECK(bf16_bits(1 + std::ldexp(1.0, -8)) == 0x3f80);      // tie, to even
  CHECK(bf16_bits(1 + 3 * std::ldexp(1.0, -8)) == 0x3f82);  // tie, to even
  CHECK(bf16_bits(3.5e38) == 0x7f80);                       // past the largest finite (3.39e38)
  CHECK(bf16_value(0x7f7f) == std::ldexp(255.0, 120));
  CHECK(bf16_value(0x0001) == std::ldexp(1.0, -133));  // the smallest subnormal
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    double v = bf16_value(std::uint16_t(b));
    if (std::isnan(v)) continue;
    REQUIRE(bf16_bits(v) == b);
  }
  TestRng rng;
  for (int i = 0; i < 200000; ++i) {
    std::uint64_t bits = rng.next();
    // Exponents near f32's range, where the interesting cases are.
    bits = (bits & 0x800FFFFFFFFFFFFFull) | (std::uint64_t(1023 - 160 + (rng.next() % 300)) << 52);
    double x;
    std::memcpy(&x, &bits, 8);
    float f = float(x);  // the hardware's conversion: to nearest even
    REQUIRE(f32_bits(x) == float_bits(f));
    REQUIRE(f32_value(f32_bits(x)) == double(f));
    if (std::isfinite(f)) REQUIRE(bf16_bits(double(f)) == bf16_by_bit_trick(float_bits(f)));
  }
  CHECK(f32_bits(std::ldexp(1.0, -150)) == 0);  // a tie with 0
  CHECK(f32_bits(std::ldexp(1.0, -150), +1) == 1);
}

TEST_CASE("oracle: integer and other dtypes round, saturate and encode little-endian") {
  CHECK(round_to(DType::S8, 200) == 127);
  CHECK(round_to(DType::S8, -200) == -128);
  CHECK(round_to(DType::S32, 2.5) == 2);
  CHECK(round_to(DType::S32, 3.5) == 4);
  CHECK(round_to(DType::S32, -2.5) == -2);
  CHECK(round_to(DType::S32, -3.5) == -4);
  CHECK(round_to(DType::S32, -0.7) == -1);
  CHECK(round_to(DType::U8, -1) == 0);
  CHECK(round_to(DType::U16, 1e9) == 65535);
  CHECK(round_to(DType::S64, 1e19) == std::ldexp(1.0, 63));  // INT64_MAX, as the nearest double
  CHECK(round_to(DType::Pred, 5) == 1);
  CHECK(round_to(DType::F64, 0.1) == 0.1);
  CHECK(round_to(DType::F32, 0.1) == double(0.1f));
  std::uint8_t b[8] = {};
  encode(DType::S16, -2, b);
  CHECK(b[0] == 0xfe);
  CHECK(b[1] == 0xff);
  CHECK(decode(DType::S16, b) == -2);
  encode(DType::F16, 1.0, b);
  CHECK(b[0] == 0x00);
  CHECK(b[1] == 0x3c);
  encode(DType::U32, 4000000000.0, b);
  CHECK(decode(DType::U32, b) == 4000000000.0);
  encode(DType::S64, -5, b);
  CHECK(decode(DType::S64, b) == -5);
  CHECK(b[7] == 0xff);
  std::vector<std::uint8_t> bytes = {0x00, 0x3c, 0x00, 0xc0, 0x01};  // two f16 and a stray byte
  std::vector<double> vals = decode_all(DType::F16, bytes);
  REQUIRE(vals.size() == 2);
  CHECK(vals[0] == 1.0);
  CHECK(vals[1] == -2.0);
}

TEST_CASE("oracle: ulps, across zero and among subnormals") {
  CHECK(ulp_of(DType::F32, 1.0) == std::ldexp(1.0, -23));
  CHECK(ulp_of(DType::F32, 1.9999) == std::ldexp(1.0, -23));
  CHECK(ulp_of(DType::F32, 2.0) == std::ldexp(1.0, -22));
  CHECK(ulp_of(DType::F32, 0.0) == std::ldexp(1.0, -149));
  CHECK(ulp_of(DType::F32, 1e-45) == std::ldexp(1.0, -149));  // subnormal: the fixed spacing
  CHECK(ulp_of(DType::F16, 1.0) == std::ldexp(1.0, -10));
  CHECK(ulp_of(DType::F16, 1e-6) == std::ldexp(1.0, -24));
  CHECK(ulp_of(DType::F16, 1e9) == 32.0);  // beyond the range: the top binade's spacing
  CHECK(ulp_of(DType::BF16, 1.0) == std::ldexp(1.0, -7));
  CHECK(ulp_of(DType::F64, 1.0) == std::ldexp(1.0, -52));
  CHECK(ulp_of(DType::S32, 123) == 1);

  const double s = std::ldexp(1.0, -149);  // f32's smallest subnormal
  CHECK(ulp_distance(DType::F32, 0.0, -0.0) == 0);
  CHECK(ulp_distance(DType::F32, 0.0, s) == 1);
  CHECK(ulp_distance(DType::F32, -s, s) == 2);
  CHECK(ulp_distance(DType::F32, -3 * s, 2 * s) == 5);
  CHECK(ulp_distance(DType::F32, std::ldexp(1.0, -126), std::ldexp(1.0, -126) - s) == 1);  // normal/subnormal
  CHECK(ulp_distance(DType::F32, 1.0, double(std::nextafter(1.0f, 2.0f))) == 1);
  CHECK(ulp_distance(DType::F32, 1.0, double(std::nextafter(1.0f, 0.0f))) == 1);
  CHECK(ulp_distance(DType::F32, 1.0, 2.0) == (1u << 23));
  CHECK(ulp_distance(DType::F32, -1.0, 1.0) == 2 * std::uint64_t(0x3f800000));
  CHECK(ulp_distance(DType::F16, 65504.0, kInf) == 1);
  CHECK(ulp_distance(DType::F16, -kInf, kInf) == 2 * std::uint64_t(0x7c00));
  CHECK(ulp_distance(DType::F64, -std::numeric_limits<double>::max(), std::numeric_limits<double>::max()) ==
        2 * std::uint64_t(0x7FEFFFFFFFFFFFFFull));
  CHECK(ulp_distance(DType::F32, kNaN, 1.0) == std::numeric_limits<std::uint64_t>::max());
  CHECK(ulp_distance(DType::S32, -3, 4) == 7);
}

TEST_CASE("oracle: inputs are deterministic for a seed and encode what they claim") {
  InputSpec spec;
  GeneratedTensor a = generate(DType::F32, 1000, spec, 42);
  GeneratedTensor b = generate(DType::F32, 1000, spec, 42);
  GeneratedTensor c = generate(DType::F32, 1000, spec, 43);
  REQUIRE(a.error.empty());
  CHECK(a.bytes.size() == 4000);
  CHECK(a.values.size() == 1000);
  CHECK(a.bytes == b.bytes);
  CHECK(a.bytes != c.bytes);
  CHECK(a.values == decode_all(DType::F32, a.bytes));
  CHECK(a.values_exact);
  // Pinned bits: the generator (xoshiro256** seeded by splitmix64, our own
  // normal sampler) must give these on every platform; a change here changes
  // every differential test's inputs, so make it on purpose.
  GeneratedTensor pin = generate(DType::F32, 3, spec, 1);
  GeneratedTensor pin_normal = generate(DType::F64, 2, InputSpec{Distribution::Normal}, 7);
  auto f64_bits = [](double v) {
    std::uint64_t u;
    std::memcpy(&u, &v, 8);
    return u;
  };
  CHECK(f32_bits(pin.values[0]) == 1053805246u);
  CHECK(f32_bits(pin.values[1]) == 1025993395u);
  CHECK(f32_bits(pin.values[2]) == 1041745083u);
  CHECK(f64_bits(pin_normal.values[0]) == 4606861418906446347ull);
  CHECK(f64_bits(pin_normal.values[1]) == 13822518775143033888ull);

  for (DType t : {DType::F16, DType::BF16, DType::F64, DType::S8, DType::U16, DType::S32, DType::U64}) {
    GeneratedTensor g = generate(t, 257, InputSpec{Distribution::Special}, 5);
    REQUIRE(g.error.empty());
    CHECK(g.bytes.size() == 257 * dtype_bytes(t));
    CHECK(g.values == decode_all(t, g.bytes));
    CHECK(g.bytes == generate(t, 257, InputSpec{Distribution::Special}, 5).bytes);
  }
  CHECK_FALSE(generate(DType::U64, 100, InputSpec{Distribution::Special, 0, 0, 0, 1, 0, 1.0}, 1).values_exact);

  InputSpec bad;
  bad.lo = 2;
  bad.hi = 1;
  CHECK_FALSE(generate(DType::F32, 10, bad, 1).error.empty());
  InputSpec bad_rate{Distribution::Special};
  bad_rate.special_rate = 1.5;
  CHECK_FALSE(generate(DType::F32, 10, bad_rate, 1).error.empty());
  CHECK(generate(DType::F32, 0, spec, 1).bytes.empty());
}

TEST_CASE("oracle: the distributions look like themselves") {
  const std::size_t n = 100000;
  SUBCASE("uniform") {
    InputSpec s;
    s.lo = -2;
    s.hi = 6;
    GeneratedTensor g = generate(DType::F32, n, s, 11);
    double sum = 0, sq = 0;
    for (double v : g.values) {
      REQUIRE(v >= -2);
      REQUIRE(v <= 6);
      sum += v;
      sq += v * v;
    }
    double mean = sum / n, var = sq / n - mean * mean;
    CHECK(mean == doctest::Approx(2).epsilon(0.01));
    CHECK(var == doctest::Approx(64.0 / 12).epsilon(0.02));
  }
  SUBCASE("normal") {
    InputSpec s{Distribution::Normal};
    s.mean = 3;
    s.sd = 0.5;
    GeneratedTensor g = generate(DType::F64, n, s, 12);
    double sum = 0, sq = 0;
    std::size_t within1 = 0, within2 = 0, beyond4 = 0;
    for (double v : g.values) {
      sum += v;
      sq += v * v;
      double z = std::fabs(v - 3) / 0.5;
      within1 += z <= 1;
      within2 += z <= 2;
      beyond4 += z > 4;
    }
    double mean = sum / n, sd = std::sqrt(sq / n - mean * mean);
    CHECK(std::fabs(mean - 3) < 0.01);
    CHECK(sd == doctest::Approx(0.5).epsilon(0.01));
    CHECK(double(within1) / n == doctest::Approx(0.6827).epsilon(0.01));
    CHECK(double(within2) / n == doctest::Approx(0.9545).epsilon(0.005));
    CHECK(beyond4 < 20);  // 6.3e-5 of them expected: about 6
  }
  SUBCASE("scaled") {
    InputSpec s{Distribution::Scaled};
    s.lo = 1;
    s.hi = 2;
    s.scale_exp = -140;  // f32 subnormals
    GeneratedTensor g = generate(DType::F32, 1000, s, 13);
    for (double v : g.values) {
      REQUIRE(v >= std::ldexp(1.0, -140));
      REQUIRE(v <= std::ldexp(1.0, -139));
      REQUIRE(v < std::ldexp(1.0, -126));
    }
    s.scale_exp = 20;  // beyond f16's range: infinity
    GeneratedTensor big = generate(DType::F16, 10, s, 13);
    for (double v : big.values) CHECK(v == kInf);
    s.scale_exp = 100;
    GeneratedTensor f32 = generate(DType::F32, 100, s, 13);
    for (double v : f32.values) CHECK((v >= std::ldexp(1.0, 100) && v <= std::ldexp(1.0, 101)));
  }
  SUBCASE("special values at their rate") {
    InputSpec s{Distribution::Special};
    s.lo = s.hi = 0.25;  // a background that is not a special value
    s.special_rate = 0.3;
    std::vector<double> specials = special_values(DType::F16);
    GeneratedTensor g = generate(DType::F16, n, s, 14);
    std::size_t special = 0, neg_zero = 0;
    std::set<std::uint16_t> seen;
    for (double v : g.values) {
      if (v == 0.25) continue;
      ++special;
      REQUIRE(std::find(specials.begin(), specials.end(), v) != specials.end());
      seen.insert(f16_bits(v));
      neg_zero += v == 0 && std::signbit(v);
    }
    CHECK(double(special) / n == doctest::Approx(0.3).epsilon(0.02));
    CHECK(seen.size() == specials.size());  // every special value turns up (-0 and 0 apart)
    CHECK(neg_zero > 0);
    for (double v : g.values) REQUIRE(std::isfinite(v));
    s.nonfinite = true;
    GeneratedTensor nf = generate(DType::F16, 10000, s, 15);
    CHECK(std::any_of(nf.values.begin(), nf.values.end(), [](double v) { return std::isnan(v); }));
    CHECK(std::any_of(nf.values.begin(), nf.values.end(), [](double v) { return v == -kInf; }));
  }
  SUBCASE("special values with the extremes scaled down (tileverify test's re-run of a hazard)") {
    InputSpec s{Distribution::Special};
    s.special_rate = 0.5;
    GeneratedTensor plain = generate(DType::F32, 4000, s, 21);
    s.extremes_scaled = true;
    GeneratedTensor scaled = generate(DType::F32, 4000, s, 21);
    const double flt_max = std::ldexp(2 - std::ldexp(1.0, -23), 127);
    std::size_t moved = 0;
    for (std::size_t i = 0; i < plain.values.size(); ++i) {
      const double p = plain.values[i], q = scaled.values[i];
      if (std::fabs(p) >= std::ldexp(1.0, 63)) {  // the largest, half of it, 2^65: 2^-32 of each
        REQUIRE(q == std::ldexp(p, -32));
        ++moved;
      } else {
        REQUIRE(q == p);  // the same draw otherwise
      }
    }
    CHECK(moved > 0);
    CHECK(std::count(plain.values.begin(), plain.values.end(), flt_max) > 0);
    // A square of the largest still overflows f32; a product with 2 or a
    // sum of 2^28 such products does not.
    CHECK(std::ldexp(flt_max, -32) * std::ldexp(flt_max, -32) > flt_max);
    CHECK(std::ldexp(flt_max, -32) * 2 * std::ldexp(1.0, 28) < flt_max);
  }
  SUBCASE("special values of each dtype") {
    std::vector<double> f16 = special_values(DType::F16);
    auto has = [](const std::vector<double>& v, double x) { return std::find(v.begin(), v.end(), x) != v.end(); };
    CHECK(has(f16, 65504.0));
    CHECK(has(f16, -65504.0));
    CHECK(has(f16, std::ldexp(1.0, -14)));
    CHECK(has(f16, std::ldexp(1.0, -24)));
    CHECK(has(f16, 1023 * std::ldexp(1.0, -24)));
    CHECK(has(f16, 256.0));   // squares to infinity
    CHECK(has(f16, 2048.0));  // 2048 + 1 rounds back to 2048
    CHECK(has(f16, 1 + std::ldexp(1.0, -10)));
    CHECK_FALSE(has(f16, kInf));
    CHECK(has(special_values(DType::F16, true), kInf));
    for (DType t : {DType::F16, DType::BF16, DType::F32, DType::F64})
      for (double v : special_values(t)) REQUIRE(round_to(t, v) == v);  // all representable
    std::vector<double> s8 = special_values(DType::S8);
    CHECK(has(s8, 127));
    CHECK(has(s8, -128));
    CHECK(has(s8, 16));
    CHECK(special_values(DType::Pred) == std::vector<double>{0, 1});
    // Integers saturate instead of wrapping.
    InputSpec s;
    s.lo = -1000;
    s.hi = 1000;
    GeneratedTensor g = generate(DType::S8, 1000, s, 16);
    CHECK(*std::min_element(g.values.begin(), g.values.end()) == -128);
    CHECK(*std::max_element(g.values.begin(), g.values.end()) == 127);
  }
}

TEST_CASE("oracle: default tolerances") {
  Tolerance f32 = default_tolerance(DType::F32);
  CHECK(f32.rel == 1e-4);
  CHECK(f32.abs == 1e-4);
  CHECK(f32.ulps == 0);
  CHECK(default_tolerance(DType::F16).rel == 1e-2);
  CHECK(default_tolerance(DType::F16).abs == 1e-3);
  CHECK(default_tolerance(DType::BF16).rel == 2e-2);
  CHECK(default_tolerance(DType::BF16).abs == 1e-2);
  CHECK(default_tolerance(DType::F64).rel == 1e-9);
  CHECK(default_tolerance(DType::F64).abs == 1e-10);
  CHECK(default_tolerance(DType::S32).rel == 0);
  CHECK(default_tolerance(DType::S32).abs == 0);
}

TEST_CASE("oracle: every comparison class") {
  // ref, out: one element per class (and a few matches)
  std::vector<double> ref = {1.0, 1.0, 2.0, 5.0, kNaN, kInf, kInf, 3.0, kNaN, 0.0, -kInf, 1e-7};
  std::vector<double> out = {1.0, 1.00005, 2.1, kNaN, kNaN, kInf, -kInf, kInf, 7.0, 0.0, -kInf, 0.0};
  Comparison c = compare(DType::F32, ref, out);
  REQUIRE(c.error.empty());
  CHECK(c.elements == 12);
  CHECK(c.count(ElementClass::Match) == 6);  // exact, 5e-5 relative, +inf, 0, -inf, 1e-7 against 0 (abs)
  CHECK(c.count(ElementClass::Mismatch) == 1);
  CHECK(c.count(ElementClass::NanWhereNumber) == 1);
  CHECK(c.count(ElementClass::BothNan) == 1);
  CHECK(c.count(ElementClass::InfMismatch) == 2);  // the sign, the placement
  CHECK(c.count(ElementClass::NumberWhereNan) == 1);
  CHECK_FALSE(c.passed());
  // Findings first (lowest index among equals), then the mismatch, then matches.
  REQUIRE(c.worst.size() == 10);
  CHECK(c.worst[0].index == 3);
  CHECK(c.worst[0].cls == ElementClass::NanWhereNumber);
  CHECK(c.worst[1].index == 6);
  CHECK(c.worst[1].cls == ElementClass::InfMismatch);
  CHECK(c.worst[2].index == 7);
  CHECK(c.worst[3].index == 8);
  CHECK(c.worst[3].cls == ElementClass::NumberWhereNan);
  CHECK(c.worst[4].index == 2);
  CHECK(c.worst[4].cls == ElementClass::Mismatch);
  CHECK(c.worst[4].abs_error == doctest::Approx(0.1));
  CHECK(c.worst[4].rel_error == doctest::Approx(0.05));
  CHECK(c.worst[4].ulps == ulp_distance(DType::F32, 2.0, 2.1));
  CHECK(c.worst[5].cls == ElementClass::Match);
  for (const ElementReport& e : c.worst) CHECK(e.cls != ElementClass::BothNan);
  // Statistics: over the 6 elements finite in both (indices 0, 1, 2, 9, 11 and... 3 is NaN).
  CHECK(c.measured == 5);      // 0, 1, 2, 9, 11
  CHECK(c.measured_rel == 4);  // 9 has a zero reference
  CHECK(c.max_abs_error == doctest::Approx(0.1));
  CHECK(c.mean_abs_error == doctest::Approx((0.00005 + 0.1 + 1e-7) / 5));
  CHECK(c.max_rel_error == doctest::Approx(1.0));  // 1e-7 against 0: all of it
  CHECK(c.mean_rel_error == doctest::Approx((0.00005 + 0.05 + 1.0) / 4));
  CHECK(c.max_ulps == double(ulp_distance(DType::F32, 1e-7, 0)));

  // Only matches and co-located NaNs: passed.
  Comparison ok = compare(DType::F32, {1.0, kNaN, -kInf}, {1.00001, kNaN, -kInf});
  CHECK(ok.passed());
  CHECK(ok.count(ElementClass::BothNan) == 1);
  // Lengths differ: an error, nothing compared.
  Comparison bad = compare(DType::F32, {1.0}, {1.0, 2.0});
  CHECK_FALSE(bad.error.empty());
  CHECK_FALSE(bad.passed());
  // Empty arrays pass.
  CHECK(compare(DType::F16, {}, {}).passed());
}

TEST_CASE("oracle: tolerances decide matches and can be overridden") {
  // f16: 1 + 2^-10 ... 1 + 8 * 2^-10 is under 1e-2 relative.
  CHECK(compare(DType::F16, {1.0}, {1 + 8 * std::ldexp(1.0, -10)}).passed());
  CHECK_FALSE(compare(DType::F16, {1.0}, {1 + 16 * std::ldexp(1.0, -10)}).passed());
  CHECK(compare(DType::BF16, {1.0}, {1.0 + std::ldexp(1.0, -7)}).passed());
  CHECK_FALSE(compare(DType::F32, {1.0}, {1.001}).passed());
  CHECK(compare(DType::F32, {1e-9}, {-5e-7}).passed());  // near zero, the absolute part decides
  CHECK(compare(DType::F32, {0.0}, {5e-5}).passed());
  CHECK_FALSE(compare(DType::F32, {0.0}, {3e-4}).passed());
  CHECK_FALSE(compare(DType::S32, {5}, {6}).passed());   // integers: exact
  CHECK(compare(DType::S32, {5}, {5}).passed());
  // Flushed subnormals are within the absolute tolerance.
  CHECK(compare(DType::F32, {1e-40}, {0.0}).passed());

  CompareOptions strict;
  strict.tolerance = Tolerance{0, 0, 2};  // ulps only
  const double one_up = double(std::nextafter(1.0f, 2.0f));
  const double two_up = double(std::nextafter(float(one_up), 2.0f));
  const double three_up = double(std::nextafter(float(two_up), 2.0f));
  CHECK(compare(DType::F32, {1.0}, {two_up}, strict).passed());
  CHECK_FALSE(compare(DType::F32, {1.0}, {three_up}, strict).passed());
  CHECK(compare(DType::F32, {0.0}, {-std::ldexp(1.0, -149)}, strict).passed());  // across zero
  Comparison c = compare(DType::F32, {1.0}, {three_up}, strict);
  CHECK(c.tolerance.ulps == 2);
  CHECK(c.worst.at(0).ulps == 3);
  CompareOptions loose;
  loose.tolerance = Tolerance{0.5, 0, 0};
  CHECK(compare(DType::F32, {1.0}, {1.4}, loose).passed());
  CompareOptions none;
  none.worst = 0;
  CHECK(compare(DType::F32, {1.0, 2.0}, {1.0, 3.0}, none).worst.empty());
}

TEST_CASE("oracle: comparing downloaded bytes") {
  std::vector<std::uint8_t> ref(6), out(6);
  encode(DType::F16, 1.0, &ref[0]);
  encode(DType::F16, -2.0, &ref[2]);
  encode(DType::F16, 0.5, &ref[4]);
  encode(DType::F16, 1.0, &out[0]);
  encode(DType::F16, -2.0, &out[2]);
  encode(DType::F16, kNaN, &out[4]);
  Comparison c = compare_bytes(DType::F16, ref, out);
  CHECK(c.elements == 3);
  CHECK(c.count(ElementClass::Match) == 2);
  CHECK(c.count(ElementClass::NanWhereNumber) == 1);
  CHECK(c.worst.at(0).index == 2);
  CHECK(std::string(element_class_name(c.worst[0].cls)) == "nan_where_number");
}

TEST_CASE("oracle: the exact reference of small expressions") {
  ExprContext ctx;
  Expr x0 = ctx.symbol("x", 0), x1 = ctx.symbol("x", 1), x2 = ctx.symbol("x", 2);
  Expr y0 = ctx.symbol("y", 0), y1 = ctx.symbol("y", 1);
  InputValues in;
  in["x"] = {1.0, std::ldexp(1.0, -24), std::ldexp(1.0, -80)};
  in["y"] = {3.0, 0.0};

  std::vector<std::optional<Expr>> outs = {
      ctx.sub(ctx.exp(x0), ctx.exp(x0)),              // 0: exactly 0
      ctx.add(ctx.mul(x0, y0), ctx.mul(x1, y0)),      // 1: 3 + 3 * 2^-24, a double
      ctx.div(x0, y0),                                // 2: 1/3
      ctx.exp(x0),                                    // 3: e
      ctx.add(std::vector<Expr>{x0, x1, x2}),         // 4: 1 + 2^-24 + 2^-80
      ctx.div(x0, y1),                                // 5: division by zero
      std::nullopt,                                   // 6: never written
      ctx.neg_inf(),                                  // 7: -inf
      ctx.func("sqrt", {ctx.add(x0, x0)}),            // 8: sqrt 2
      ctx.func("log", {ctx.neg(x0)}),                 // 9: log -1
      ctx.symbol("z", 5),                             // 10: no input
      ctx.sub(ctx.mul(ctx.add(x0, x1), ctx.add(x0, x1)), ctx.mul(x0, x0)),  // 11: 2^-23 + 2^-48
      ctx.func("mystery", {x0}),                      // 12: no numeric meaning
  };
  ExactResult r = exact_values(ctx, outs, in);
  REQUIRE(r.error.empty());
  REQUIRE(r.values.size() == outs.size());
  const auto& v = r.values;
  CHECK(v[0].kind == ExactKind::Finite);
  CHECK(v[0].nearest == 0);
  CHECK(v[0].residual == 0);
  CHECK(v[1].nearest == 3 + 3 * std::ldexp(1.0, -24));
  CHECK(v[1].residual == 0);
  CHECK(v[1].low == 0);
  // 1/3 = 0x3FD5555555555555 + 1/(3 * 2^54)
  CHECK(v[2].nearest == 1.0 / 3.0);
  CHECK(v[2].residual == 1);
  CHECK(v[2].low == doctest::Approx(1.0 / (3 * std::ldexp(1.0, 54))).epsilon(1e-12));
  CHECK(v[2].reliable);
  // e = 2.718281828459045 (the nearest double) + 1.4456e-16
  CHECK(v[3].nearest == 2.718281828459045);
  CHECK(v[3].residual == 1);
  CHECK(v[3].low == doctest::Approx(1.4456468917292502e-16).epsilon(1e-6));
  // A double tie for f32 that is no tie for the real: rounding the double
  // alone gives 1, the real rounds up.
  CHECK(v[4].nearest == 1 + std::ldexp(1.0, -24));
  CHECK(v[4].residual == 1);
  CHECK(v[4].low == std::ldexp(1.0, -80));
  CHECK(round_to(DType::F32, v[4].nearest) == 1.0);
  CHECK(round_to(DType::F32, v[4].nearest, v[4].residual) == 1 + std::ldexp(1.0, -23));
  CHECK(v[5].kind == ExactKind::Undefined);
  CHECK(v[5].why.find("not a finite real") != std::string::npos);
  CHECK(v[6].kind == ExactKind::Unwritten);
  CHECK(v[7].kind == ExactKind::NegInf);
  CHECK(v[7].nearest == -kInf);
  CHECK(v[8].nearest == std::sqrt(2.0));  // IEEE sqrt is correctly rounded
  CHECK(v[9].kind == ExactKind::Undefined);
  CHECK(v[10].kind == ExactKind::Undefined);
  CHECK(v[10].why == "no input value for z[5]");
  CHECK(v[11].nearest == std::ldexp(1.0, -23) + std::ldexp(1.0, -48));
  CHECK(v[11].residual == 0);
  CHECK(v[12].kind == ExactKind::Undefined);
  CHECK(std::string(exact_kind_name(v[7].kind)) == "-inf");
}

TEST_CASE("oracle: exact values of hard cases") {
  ExprContext ctx;
  Expr x0 = ctx.symbol("x", 0), x1 = ctx.symbol("x", 1);
  SUBCASE("cancellation below double precision") {
    // (x0 + x1) - x0 with x0 = 2^60 and x1 = 1: a double sum loses x1; the
    // exact reference does not.
    Expr e = ctx.add(ctx.mul(ctx.add(x0, x1), ctx.exp(x1)), ctx.neg(ctx.mul(x0, ctx.exp(x1))));
    ExactResult r = exact_values(ctx, {e}, {{"x", {std::ldexp(1.0, 60), 1.0}}});
    REQUIRE(r.values[0].kind == ExactKind::Finite);
    CHECK(r.values[0].nearest == 2.718281828459045);
    CHECK(r.values[0].reliable);
  }
  SUBCASE("subnormal results round correctly") {
    // 1.5 * 2^-1074: a tie between 2^-1074 and 2^-1073 (even)
    Expr e = ctx.mul(x0, x1);
    ExactResult r = exact_values(ctx, {e}, {{"x", {1.5, std::ldexp(1.0, -1074)}}});
    CHECK(r.values[0].nearest == std::ldexp(1.0, -1073));
    CHECK(r.values[0].residual == -1);
    // Past the double range: +inf, still a finite real.
    ExactResult big = exact_values(ctx, {e}, {{"x", {std::ldexp(1.0, 1000), std::ldexp(1.0, 1000)}}});
    CHECK(big.values[0].kind == ExactKind::Finite);
    CHECK(big.values[0].nearest == kInf);
  }
  SUBCASE("nvcc's log2(e) reads as 1/ln 2") {
    Expr log2e = ctx.constant(Rational::from_f32_bits(0x3FB8AA3Bu));
    Expr e = ctx.ex2(ctx.mul(x0, log2e));
    InputValues in{{"x", {1.0}}};
    ExactResult meant = exact_values(ctx, {e}, in);
    CHECK(meant.values[0].nearest == 2.718281828459045);
    ExactOptions literal;
    literal.read_known_constants = false;
    ExactResult as_written = exact_values(ctx, {e}, in, literal);
    CHECK(as_written.values[0].nearest != 2.718281828459045);
    CHECK(as_written.values[0].nearest == doctest::Approx(2.718281828459045).epsilon(1e-7));
  }
  SUBCASE("bad inputs make their elements undefined, not the others") {
    std::vector<std::optional<Expr>> outs;
    for (int i = 0; i < 9; ++i) outs.push_back(ctx.mul(ctx.symbol("a", std::uint32_t(i)), x0));
    std::vector<double> a = {1, 2, 3, kInf, 5, 6, kNaN, 8, 9};
    ExactResult r = exact_values(ctx, outs, {{"a", a}, {"x", {2.0}}});
    for (int i = 0; i < 9; ++i) {
      if (i == 3 || i == 6) {
        CHECK(r.values[std::size_t(i)].kind == ExactKind::Undefined);
      } else {
        CHECK(r.values[std::size_t(i)].kind == ExactKind::Finite);
        CHECK(r.values[std::size_t(i)].nearest == 2 * a[std::size_t(i)]);
      }
    }
    CHECK(r.values[3].why == "input a[3] is +inf");
    CHECK(r.values[6].why == "input a[6] is NaN");
  }
  SUBCASE("integer symbols need integer values") {
    Expr k = ctx.int_symbol("k", 0);
    ExactResult r = exact_values(ctx, {ctx.mul(k, x0)}, {{"k", {2.5}}, {"x", {1.0}}});
    CHECK(r.values[0].kind == ExactKind::Undefined);
    ExactResult ok = exact_values(ctx, {ctx.mul(k, x0)}, {{"k", {3.0}}, {"x", {1.5}}});
    CHECK(ok.values[0].nearest == 4.5);
  }
}

TEST_CASE("oracle: float outputs measured against the exact value") {
  auto finite = [](double nearest, int residual = 0, double low = 0) {
    ExactValue x;
    x.kind = ExactKind::Finite;
    x.nearest = nearest;
    x.residual = residual;
    x.low = low;
    return x;
  };
  ExactValue third = finite(1.0 / 3.0, 1, 1.0 / (3 * std::ldexp(1.0, 54)));
  const double third_f = double(1.0f / 3.0f);
  const double third_next = double(std::nextafter(1.0f / 3.0f, 1.0f));
  ExactValue pinf, undef, unwritten;
  pinf.kind = ExactKind::PosInf;
  pinf.nearest = kInf;
  undef.kind = ExactKind::Undefined;
  unwritten.kind = ExactKind::Unwritten;
  std::vector<ExactValue> exact = {
      finite(1.0),             // 0: exact output
      third,                   // 1: correctly rounded f32
      third,                   // 2: one f32 off
      finite(1.0),             // 3: NaN output
      finite(1e5),             // 4: within f32's range, output inf
      finite(1e-40),           // 5: an f32 subnormal, output flushed to 0
      finite(1e-46),           // 6: rounds to 0 in f32: 0 is right
      pinf,                    // 7: +inf, output +inf
      pinf,                    // 8: +inf, output finite
      pinf,                    // 9: +inf, output NaN
      undef,                   // 10
      unwritten,               // 11
      finite(1e39),            // 12: beyond f32's range
      finite(2.0, -1, -std::ldexp(1.0, -60)),  // 13: just below 2
  };
  std::vector<double> out = {1.0, third_f, third_next, kNaN, kInf, 0.0, 0.0, kInf, 3e38, kNaN, 5.0, 0.0,
                             kInf, 2.0};
  ExactComparison m = measure(DType::F32, out, exact);
  REQUIRE(m.error.empty());
  CHECK(m.elements == 14);
  CHECK(m.count(Hazard::None) == 6);  // 0, 1, 2, 6, 7, 13
  CHECK(m.count(Hazard::NanOutput) == 2);
  CHECK(m.count(Hazard::InfOutput) == 1);
  CHECK(m.count(Hazard::Underflow) == 1);
  CHECK(m.count(Hazard::WrongInf) == 1);
  CHECK(m.count(Hazard::ExactUndefined) == 1);
  CHECK(m.count(Hazard::Unwritten) == 1);
  CHECK(m.count(Hazard::OutOfRange) == 1);
  // None: 0, 1, 2, 6, 13 measured; 7 (the right infinity) is None but not measured.
  CHECK(m.measured == 5);
  CHECK(m.correctly_rounded == 4);  // all but element 2
  auto report = [&](std::uint64_t i) {
    for (const auto& e : m.worst)
      if (e.index == i) return e;
    return ExactElementReport{};
  };
  REQUIRE(m.worst.size() == 10);
  // Hazards first in enum order: NanOutput (3, 9), InfOutput (4), OutOfRange (12), Underflow (5), WrongInf (8).
  CHECK(m.worst[0].index == 3);
  CHECK(m.worst[1].index == 9);
  CHECK(m.worst[2].hazard == Hazard::InfOutput);
  CHECK(m.worst[3].hazard == Hazard::OutOfRange);
  CHECK(m.worst[4].hazard == Hazard::Underflow);
  CHECK(m.worst[5].hazard == Hazard::WrongInf);
  CHECK(m.worst[6].index == 2);  // then the largest error
  CHECK(std::string(hazard_name(m.worst[4].hazard)) == "underflow");
  // 1/3 in f32: 0x3EAAAAAB is above 1/3 by 1/3 of an ulp (2^-25 spacing).
  CHECK(report(1).ulps == doctest::Approx(1.0 / 3).epsilon(1e-6));
  CHECK(report(2).ulps == doctest::Approx(4.0 / 3).epsilon(1e-6));
  CHECK(report(2).rel_error == doctest::Approx(4.0 / 3 * std::ldexp(1.0, -25) * 3).epsilon(1e-6));
  // Just below 2, the spacing is [1, 2)'s: 2 is 2^-60 away, a tiny fraction of 2^-23.
  CHECK(report(13).ulps == doctest::Approx(std::ldexp(1.0, -37)));
  CHECK(m.max_ulps == doctest::Approx(4.0 / 3).epsilon(1e-6));
  CHECK(m.mean_ulps ==
        doctest::Approx((0 + 1.0 / 3 + 4.0 / 3 + std::ldexp(1e-46, 149) + std::ldexp(1.0, -37)) / 5).epsilon(1e-6));

  // f16: 1e5 is out of range; 1e-6 rounds to a subnormal, so 0 is underflow;
  // 1e-9 rounds to 0, so 0 is right.
  ExactComparison h = measure(DType::F16, {kInf, 0.0, 0.0}, {finite(1e5), finite(1e-6), finite(1e-9)});
  CHECK(h.count(Hazard::OutOfRange) == 1);
  CHECK(h.count(Hazard::Underflow) == 1);
  CHECK(h.count(Hazard::None) == 1);
  CHECK_FALSE(measure(DType::F32, {1.0}, {}).error.empty());
}

TEST_CASE("oracle: a kernel's float sum measured against the exact sum") {
  // The path a differential run takes: generate inputs, build the output's
  // expression as a symbolic run would, evaluate it exactly, and measure a
  // float computation of it.
  ExprContext ctx;
  const std::size_t n = 4096;
  GeneratedTensor x = generate(DType::F32, n, InputSpec{}, 99);
  REQUIRE(x.error.empty());
  std::vector<Expr> terms;
  for (std::size_t i = 0; i < n; ++i) terms.push_back(ctx.symbol("x", std::uint32_t(i)));
  Expr sum = ctx.add(terms);
  ExactResult r = exact_values(ctx, {sum}, {{"x", x.values}});
  REQUIRE(r.values.at(0).kind == ExactKind::Finite);
  float naive = 0;
  for (double v : x.values) naive += float(v);
  double in_double = 0;
  for (double v : x.values) in_double += v;
  ExactComparison m = measure(DType::F32, {double(naive)}, r.values);
  ExactComparison d = measure(DType::F32, {double(float(in_double))}, r.values);
  CHECK(m.count(Hazard::None) == 1);
  CHECK(d.max_ulps <= 0.5 + 1e-6);  // a double sum of 4096 floats, rounded once, is correctly rounded here
  CHECK(m.max_ulps >= d.max_ulps);
  // The float kernel and the double one agree under the f32 tolerance.
  CHECK(compare(DType::F32, {double(float(in_double))}, {double(naive)}).passed());
}

TEST_CASE("oracle: the f32 default holds for reordered dot products of 4096 terms") {
  // Two correct orders of one reduction (a sequential fma chain, and 32
  // strided partial sums joined by a tree, as a warp reduction does) on the
  // default unit-scale inputs: docs/oracles.md's reason for abs 1e-4.
  const std::size_t k = 4096, outputs = 300;
  GeneratedTensor a = generate(DType::F32, k * outputs, InputSpec{}, 21);
  GeneratedTensor b = generate(DType::F32, k * outputs, InputSpec{}, 22);
  std::vector<double> sequential, blocked;
  for (std::size_t o = 0; o < outputs; ++o) {
    float s = 0, part[32] = {};
    for (std::size_t i = 0; i < k; ++i) {
      float x = float(a.values[o * k + i]), y = float(b.values[o * k + i]);
      s = std::fma(x, y, s);
      part[i % 32] = std::fma(x, y, part[i % 32]);
    }
    for (int w = 16; w >= 1; w /= 2)
      for (int j = 0; j < w; ++j) part[j] += part[j + w];
    sequential.push_back(s);
    blocked.push_back(part[0]);
  }
  Comparison c = compare(DType::F32, sequential, blocked);
  CHECK(c.passed());
  CHECK(c.max_abs_error > 1e-6);  // the old candidate, abs 1e-6, would not do
}

TEST_CASE("oracle: scaled extremes take away a reverse-order sum's overflow, not a rescaling's") {
  // examples/kernels/hazard in float on the CPU (fmaf as nvcc's fma.rn.f32):
  // C = A·B summed k = 0..63 (the reference) and k = 63..0 (the register-
  // blocked kernel), and (x·2^80)·2^-80 against x, on special-values inputs
  // at tileverify test's rate. Elements where the second is NaN or Inf and
  // the first is not: some with the plain specials in both pairs; with the
  // extremes scaled, none in the GEMM (an order effect) and some still in
  // the rescaling (its own overflow).
  auto count = [](bool scaled, std::uint64_t seed, int* gemm, int* copy) {
    InputSpec s{Distribution::Special};
    s.special_rate = 0.05;
    s.extremes_scaled = scaled;
    const GeneratedTensor a = generate(DType::F32, 4096, s, 2 * seed), b = generate(DType::F32, 4096, s, 2 * seed + 1);
    *gemm = *copy = 0;
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 64; ++j) {
        float up = 0, down = 0;
        for (int k = 0; k < 64; ++k) up = std::fmaf(float(a.values[i * 64 + k]), float(b.values[k * 64 + j]), up);
        for (int k = 63; k >= 0; --k) down = std::fmaf(float(a.values[i * 64 + k]), float(b.values[k * 64 + j]), down);
        *gemm += std::isfinite(up) && !std::isfinite(down);
      }
    for (double v : a.values) {
      volatile float big = float(v) * 0x1p80f;  // two roundings, as the kernel's two mul.f32
      *copy += !std::isfinite(big * 0x1p-80f);
    }
  };
  int plain_gemm = 0, plain_copy = 0;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    int gemm = 0, copy = 0;
    count(false, seed, &gemm, &copy);
    plain_gemm += gemm;
    plain_copy += copy;
    count(true, seed, &gemm, &copy);
    CHECK(gemm == 0);
    CHECK(copy > 0);
  }
  CHECK(plain_gemm > 0);  // the false alarm the re-run takes away
  CHECK(plain_copy > 0);
}
