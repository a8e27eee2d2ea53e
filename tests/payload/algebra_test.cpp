// The identities FpSan promises, as property tests over random payloads of
// every width, and the non-identities it deliberately breaks.
#include <doctest/doctest.h>

#include "test_support.hpp"

using namespace tileverify::fpsan;
using payload_test::kSamples;
using payload_test::payload_rng;
using payload_test::u64;
using payload_test::width_c;

#define ALL_WIDTHS width_c<8>, width_c<16>, width_c<32>, width_c<64>

namespace {

template <unsigned W>
constexpr u64 all_ones() {
  return wrap<W>(~u64{0});
}

// Independent reference for exp2: (1 + 2^k)^x by plain square-and-multiply.
template <unsigned W>
u64 pow_mod(u64 base, u64 e) {
  u64 r = 1;
  base = wrap<W>(base);
  while (e != 0) {
    if (e & 1) r = mul<W>(r, base);
    base = mul<W>(base, base);
    e >>= 1;
  }
  return r;
}

}  // namespace

TEST_CASE_TEMPLATE("ring laws of add, sub, mul and fma", T, ALL_WIDTHS) {
  constexpr unsigned W = T::value;
  payload_rng<W> r(10);
  for (int i = 0; i < kSamples; ++i) {
    const u64 x = r(), y = r(), z = r();
    REQUIRE(add<W>(x, 0) == x);
    REQUIRE(sub<W>(x, 0) == x);
    REQUIRE(mul<W>(x, 1) == x);
    REQUIRE(sub<W>(x, x) == 0);
    REQUIRE(add<W>(x, neg<W>(x)) == 0);
    REQUIRE(add<W>(x, y) == add<W>(y, x));
    REQUIRE(mul<W>(x, y) == mul<W>(y, x));
    REQUIRE(add<W>(add<W>(x, y), z) == add<W>(x, add<W>(y, z)));
    REQUIRE(mul<W>(mul<W>(x, y), z) == mul<W>(x, mul<W>(y, z)));
    REQUIRE(mul<W>(x, add<W>(y, z)) == add<W>(mul<W>(x, y), mul<W>(x, z)));
    REQUIRE(fma<W>(x, y, z) == add<W>(mul<W>(x, y), z));
    REQUIRE(mul<W>(x, all_ones<W>()) == neg<W>(x));  // -1 acts as -1
  }
}

TEST_CASE_TEMPLATE("min and max: signed payload order, idempotent, commutative, associative", T, ALL_WIDTHS) {
  constexpr unsigned W = T::value;
  constexpr u64 sign = u64{1} << (W - 1);
  payload_rng<W> r(11);
  for (int i = 0; i < kSamples; ++i) {
    const u64 x = r(), y = r(), z = r();
    REQUIRE(min<W>(x, x) == x);
    REQUIRE(max<W>(x, x) == x);
    REQUIRE(min<W>(x, y) == min<W>(y, x));
    REQUIRE(max<W>(x, y) == max<W>(y, x));
    REQUIRE(min<W>(min<W>(x, y), z) == min<W>(x, min<W>(y, z)));
    REQUIRE(max<W>(max<W>(x, y), z) == max<W>(x, max<W>(y, z)));
    REQUIRE(max<W>(x, sign) == x);  // the least payload is the identity of max
    REQUIRE(min<W>(x, sign - 1) == x);
  }
  CHECK(max<W>(all_ones<W>(), 0) == 0);  // -1 < 0: signed, not unsigned
  CHECK(min<W>(all_ones<W>(), 1) == all_ones<W>());
  CHECK(signed_less<W>(sign, sign - 1));
}

TEST_CASE_TEMPLATE("inverse and division", T, ALL_WIDTHS) {
  constexpr unsigned W = T::value;
  payload_rng<W> r(12);
  for (int i = 0; i < kSamples; ++i) {
    const u64 x = r(), y = r(), odd = r.odd(), even = r.even();
    REQUIRE(div<W>(x, 1) == x);
    REQUIRE(inv<W>(inv<W>(x)) == x);               // 1/(1/x) = x for every payload
    REQUIRE(div<W>(1, div<W>(1, x)) == x);
    REQUIRE(mul<W>(odd, inv<W>(odd)) == 1);        // true inverse on odd payloads
    REQUIRE(div<W>(odd, odd) == 1);
    REQUIRE(mul<W>(div<W>(x, odd), odd) == x);    // division by odd undoes multiplication
    REQUIRE((inv<W>(even) & 1) == 0);              // parity kept
    REQUIRE(div<W>(even, even) != 1);              // x/x = 1 fails for every even x
    REQUIRE(div<W>(mul<W>(x, y), odd) == mul<W>(x, div<W>(y, odd)));
  }
  CHECK(div<W>(0, 0) == 0);  // no trap, no inf
}

TEST_CASE_TEMPLATE("remainder is srem by den | 1", T, ALL_WIDTHS) {
  constexpr unsigned W = T::value;
  constexpr u64 sign = u64{1} << (W - 1);
  payload_rng<W> r(13);
  auto magnitude = [](u64 v) { return (v & sign) ? wrap<W>(u64{0} - v) : wrap<W>(v); };
  for (int i = 0; i < kSamples; ++i) {
    const u64 n = r(), d = r();
    const u64 q = rem<W>(n, d);
    REQUIRE(q == rem<W>(n, d | 1));
    // |q| < |d| and q has n's sign (or is 0): the truncating remainder.
    REQUIRE(magnitude(q) < magnitude(wrap<W>(d) | 1));
    REQUIRE((q == 0 || (q & sign) == (wrap<W>(n) & sign)));
    if (W <= 32) {  // n - q is a multiple of d, checked exactly where it fits in 64 bits
      auto value_of = [&](u64 v) {
        return (v & sign) ? -static_cast<long long>(magnitude(v)) : static_cast<long long>(v);
      };
      REQUIRE((value_of(wrap<W>(n)) - value_of(q)) % value_of(wrap<W>(d) | 1) == 0);
    }
  }
  CHECK(rem<W>(7, 2) == 1);           // 7 srem 3
  CHECK(rem<W>(neg<W>(7), 3) == neg<W>(1));
  CHECK(rem<W>(5, 0) == 0);           // 5 srem 1: zero denominators are safe
  CHECK(rem<W>(sign, all_ones<W>()) == 0);  // INT_MIN srem -1, undefined in LLVM, 0 here
}

TEST_CASE_TEMPLATE("exp2 is a homomorphism from + to *", T, ALL_WIDTHS) {
  constexpr unsigned W = T::value;
  constexpr unsigned k = (W + 3) / 4;
  payload_rng<W> r(14);
  CHECK(exp2<W>(0) == 1);
  CHECK(exp2<W>(1) == 1 + (u64{1} << k));
  for (int i = 0; i < kSamples; ++i) {
    const u64 x = r(), y = r();
    REQUIRE(exp2<W>(x) == pow_mod<W>(1 + (u64{1} << k), wrap<W>(x)));  // closed form = the power
    REQUIRE(exp2<W>(add<W>(x, y)) == mul<W>(exp2<W>(x), exp2<W>(y)));
    REQUIRE(exp2<W>(neg<W>(x)) == div<W>(1, exp2<W>(x)));
    REQUIRE(exp2<W>(sub<W>(x, y)) == div<W>(exp2<W>(x), exp2<W>(y)));
    REQUIRE((exp2<W>(x) & 1) == 1);
    REQUIRE(exp<W>(add<W>(x, y)) == mul<W>(exp<W>(x), exp<W>(y)));
    REQUIRE(exp<W>(neg<W>(x)) == div<W>(1, exp<W>(x)));
    REQUIRE(exp<W>(x) == exp2<W>(mul<W>(x, 0x236ee9bfu)));
  }
  CHECK(exp<W>(0) == 1);
}

TEST_CASE_TEMPLATE("sin and cos: angle addition and the unit circle", T, ALL_WIDTHS) {
  constexpr unsigned W = T::value;
  payload_rng<W> r(15);
  CHECK(cos<W>(0) == 1);
  CHECK(sin<W>(0) == 0);
  // (cos 1, sin 1) is the generator (-3/5, 4/5).
  CHECK(mul<W>(cos<W>(1), 5) == neg<W>(3));
  CHECK(mul<W>(sin<W>(1), 5) == 4);
  for (int i = 0; i < kSamples; ++i) {
    const u64 x = r(), y = r();
    const u64 sx = sin<W>(x), cx = cos<W>(x), sy = sin<W>(y), cy = cos<W>(y);
    REQUIRE(sin<W>(add<W>(x, y)) == add<W>(mul<W>(sx, cy), mul<W>(cx, sy)));
    REQUIRE(sin<W>(sub<W>(x, y)) == sub<W>(mul<W>(sx, cy), mul<W>(cx, sy)));
    REQUIRE(cos<W>(add<W>(x, y)) == sub<W>(mul<W>(cx, cy), mul<W>(sx, sy)));
    REQUIRE(cos<W>(sub<W>(x, y)) == add<W>(mul<W>(cx, cy), mul<W>(sx, sy)));
    REQUIRE(add<W>(mul<W>(sx, sx), mul<W>(cx, cx)) == 1);
    REQUIRE(sin<W>(neg<W>(x)) == neg<W>(sx));
    REQUIRE(cos<W>(neg<W>(x)) == cx);
    const cos_sin_pair both = cos_sin<W>(x);
    REQUIRE((both.cos == cx && both.sin == sx));
  }
}

TEST_CASE_TEMPLATE("tagged unary ops: deterministic, bijective, distinct per op", T, ALL_WIDTHS) {
  constexpr unsigned W = T::value;
  const unary_op ops[] = {unary_op::log,   unary_op::log2,  unary_op::sqrt, unary_op::rsqrt,
                          unary_op::erf,   unary_op::floor, unary_op::ceil, unary_op::precise_sqrt};
  payload_rng<W> r(16);
  for (int i = 0; i < kSamples; ++i) {
    const u64 x = r();
    const u64 y = x;  // equal payloads ...
    for (unary_op a : ops) {
      REQUIRE(tagged<W>(x, a) == tagged<W>(y, a));  // ... give equal results
      for (unary_op b : ops)
        if (a != b) REQUIRE(tagged<W>(x, a) != tagged<W>(x, b));
    }
    REQUIRE(log<W>(x) == tagged<W>(x, unary_op::log));
    REQUIRE(sqrt<W>(x) != precise_sqrt<W>(x));
  }
  if (W <= 16) {  // a bijection: exhaustively, no two inputs share an output
    std::vector<bool> seen(std::size_t{1} << W, false);
    for (u64 x = 0; x < (u64{1} << W); ++x) {
      const u64 t = tagged<W>(x, unary_op::erf);
      REQUIRE_FALSE(seen[t]);
      seen[t] = true;
    }
  }
}

TEST_CASE_TEMPLATE("the non-identities FpSan does not preserve fail somewhere", T, ALL_WIDTHS) {
  constexpr unsigned W = T::value;
  payload_rng<W> r(17);
  int sqrt_sq = 0, log_mul = 0, exp_log = 0, div_self = 0, sin_double = 0;
  for (int i = 0; i < 200; ++i) {
    const u64 x = r(), y = r();
    sqrt_sq += mul<W>(sqrt<W>(x), sqrt<W>(x)) != x;
    log_mul += log<W>(mul<W>(x, y)) != add<W>(log<W>(x), log<W>(y));
    exp_log += exp<W>(log<W>(x)) != x;
    div_self += div<W>(x, x) != 1;
    // sin 2x = 2 sin x cos x does hold (it is angle addition): a control.
    sin_double += sin<W>(add<W>(x, x)) != mul<W>(2, mul<W>(sin<W>(x), cos<W>(x)));
  }
  CHECK(sqrt_sq > 0);
  CHECK(log_mul > 0);
  CHECK(exp_log > 0);
  CHECK(div_self > 0);
  CHECK(sin_double == 0);
  CHECK(div<W>(2, 2) != 1);
}

TEST_CASE("golden fp32 payload values from an independent Python model of Triton's formulas") {
  // Computed, while writing these tests, by a separate Python model: exp2 as
  // pow(1 + 2^8, x, 2^32) (not the closed form), cos/sin as (a + b i)^x by
  // right-to-left binary powering (not the left-to-right loop), and the tag
  // and inverse formulas with Python's big integers.
  struct row {
    u64 x, exp2, exp, cos, sin, log, sqrt, inv;
  };
  const row rows[] = {
      {0x00000001, 0x00000101, 0x774abf01, 0x99999999, 0x33333334, 0xb268618d, 0x717516e4, 0x00000001},  // 1.0
      {0x27f60280, 0x94c28001, 0x439d8001, 0x139e0001, 0x13a5f200, 0x43d6e594, 0xd0942d9d, 0x26703d80},  // 2.0
      {0x081df882, 0xb2b98201, 0x0f3dfe01, 0x2f93eae1, 0xba364628, 0x1024346e, 0xe1de5ec3, 0x0734162a},  // 0.5
      {0x04ff103d, 0xe4363d01, 0x41e58301, 0xc15c4559, 0xf1b99864, 0x302039b1, 0x0eb97cc0, 0x5c4a0715},  // 3.0
  };
  for (const row& v : rows) {
    CAPTURE(v.x);
    CHECK(exp2<32>(v.x) == v.exp2);
    CHECK(exp<32>(v.x) == v.exp);
    CHECK(cos<32>(v.x) == v.cos);
    CHECK(sin<32>(v.x) == v.sin);
    CHECK(log<32>(v.x) == v.log);
    CHECK(sqrt<32>(v.x) == v.sqrt);
    CHECK(inv<32>(v.x) == v.inv);
  }
}

TEST_CASE_TEMPLATE("murmur tags are distinct at every width, as Triton needs", T, ALL_WIDTHS) {
  constexpr unsigned W = T::value;
  std::vector<u64> tags;
  for (u64 id : {1, 3, 6, 7, 8, 9, 10, 11}) tags.push_back(wrap<W>(murmur64_fmix(id)));
  for (std::size_t i = 0; i < tags.size(); ++i)
    for (std::size_t j = i + 1; j < tags.size(); ++j) CHECK(tags[i] != tags[j]);
  CHECK(murmur64_fmix(0) == 0);  // why Exp (id 0) has a real model rather than a tag
}
