#include "tileverify/rational.hpp"

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

using tileverify::Rational;

TEST_CASE("rationals stay exact past 64 bits and come back") {
  Rational big = Rational(INT64_MAX) * Rational(INT64_MAX);
  CHECK_FALSE(big.is_small());
  Rational back = big / Rational(INT64_MAX);
  CHECK(back.is_small());
  CHECK(back == Rational(INT64_MAX));
  CHECK((big - big).is_zero());
  CHECK(Rational(1, 3) + Rational(1, 6) == Rational(1, 2));
  CHECK(Rational(-4, 6) == Rational(2, -3));
  CHECK(Rational(7, 2).floor() == Rational(3));
  CHECK(Rational(-7, 2).floor() == Rational(-4));
  CHECK(Rational::pow2(-70) * Rational::pow2(70) == Rational(1));
  CHECK(Rational(2, 3).pow(-2) == Rational(9, 4));
  CHECK(Rational(1, 3) < Rational(1, 2));
  CHECK(big > Rational(INT64_MAX));
}

TEST_CASE("float bit patterns convert exactly") {
  // nvcc's fp32 log2(e)
  CHECK(Rational::from_f32_bits(0x3FB8AA3Bu) == Rational(12102203, 8388608));
  CHECK(Rational::from_f32_bits(0x3F800000u) == Rational(1));
  CHECK(Rational::from_f32_bits(0xBF000000u) == Rational(-1, 2));
  CHECK(Rational::from_f16_bits(0x3e00u) == Rational(3, 2));
  CHECK(Rational::from_f16_bits(0xc000u) == Rational(-2));
  CHECK(Rational::from_f16_bits(0x7bffu) == Rational(65504));
  CHECK(Rational::from_f16_bits(0x0001u) == Rational(1) / Rational::pow2(24));  // smallest subnormal
  CHECK(Rational::from_bf16_bits(0x3fc0u) == Rational(3, 2));
  CHECK(Rational::from_f32_bits(0x00000001u) == Rational::pow2(-149));  // smallest subnormal
  CHECK(Rational::from_f64_bits(0x3FF0000000000000ull) == Rational(1));
  CHECK(Rational::from_double(0.1) != Rational(1, 10));
  CHECK_THROWS_AS(Rational::from_f32_bits(0x7F800000u), std::domain_error);
}

TEST_CASE("parsing decimals and fractions is exact, bad text throws") {
  CHECK(Rational::parse("0.125") == Rational(1, 8));
  CHECK(Rational::parse("-3/4") == Rational(-3, 4));
  CHECK(Rational::parse("1e-3") == Rational(1, 1000));
  CHECK(Rational::parse("2.5E2") == Rational(250));
  CHECK_THROWS_AS(Rational::parse("abc"), std::invalid_argument);
  CHECK_THROWS_AS(Rational::parse("1/0"), std::invalid_argument);
  CHECK_THROWS_AS(Rational::parse(""), std::invalid_argument);
  CHECK_THROWS_AS(Rational(1, 0), std::domain_error);
}

TEST_CASE("powers of two are recognized with their sign") {
  int k = 0, s = 0;
  CHECK(Rational(-8).is_signed_power_of_two(&k, &s));
  CHECK(k == 3);
  CHECK(s == -1);
  CHECK(Rational(1, 16).is_signed_power_of_two(&k, &s));
  CHECK(k == -4);
  CHECK_FALSE(Rational(3, 4).is_signed_power_of_two(&k, &s));
  CHECK_FALSE(Rational(0).is_signed_power_of_two(&k, &s));
}

TEST_CASE("equal values hash equally") {
  CHECK(Rational(2, 4).hash() == Rational(1, 2).hash());
  Rational big = Rational::pow2(100);
  CHECK(big.hash() == (Rational::pow2(99) * Rational(2)).hash());
  // past 64 bits, reached by different routes; signs and reciprocals differ
  const Rational tiny = Rational::pow2(-126);
  CHECK(tiny.hash() == (Rational(3) / (Rational::pow2(126) * Rational(3))).hash());
  CHECK(tiny.hash() == Rational::parse("1/85070591730234615865843651857942052864").hash());
  CHECK(tiny.hash() != (-tiny).hash());
  CHECK(tiny.hash() != Rational::pow2(126).hash());
  CHECK(tiny.hash() != Rational::pow2(-127).hash());
}

TEST_CASE("results are reduced to lowest terms on the 64-bit path and past it") {
  CHECK(Rational(6, -4).str() == "-3/2");
  CHECK(Rational(-12, 8).str() == "-3/2");
  CHECK(Rational(0, -5).str() == "0");
  CHECK(Rational(48, 36).str() == "4/3");
  CHECK((Rational(3, 8) * Rational(4, 9)).str() == "1/6");
  CHECK((Rational(1, 8) + Rational(3, 8)).str() == "1/2");
  CHECK(Rational(INT64_MAX, INT64_MAX).str() == "1");
  CHECK(Rational(-INT64_MAX, 1).str() == "-9223372036854775807");
  CHECK((Rational(INT64_MIN) / Rational(2)).str() == "-4611686018427387904");
  Rational third_of_max = Rational(INT64_MAX) / Rational(3);  // 2^63 - 1 = 3 * 3074457345618258602 + 1
  CHECK(third_of_max.str() == "9223372036854775807/3");
  CHECK((Rational(1u << 20, 3 << 20)).str() == "1/3");
}

// Products whose numerator or denominator passes 64 bits before reducing
// (the 128-bit gcd): common factors that are powers of two, odd, or both.
TEST_CASE("products past 64 bits reduce by their whole gcd") {
  const std::int64_t p = 1000003, q = 1000033, r = 1000037, s = 999983, t = 999979;  // primes
  CHECK((Rational(p * q, r) * Rational(r * s, q * t)) == Rational(p * s, t));
  CHECK((Rational(p * q, r) * Rational(r * s, q * t)).is_small());
  CHECK((Rational(0xFFFFFF, std::int64_t(1) << 45) * Rational(std::int64_t(1) << 50, 0xFFFFFD)).str() ==
        std::to_string(0xFFFFFF * 32) + "/" + std::to_string(0xFFFFFD));
  CHECK((Rational(3 * q, std::int64_t(1) << 40) * Rational(std::int64_t(1) << 41, q * 7)).str() == "6/7");
  CHECK((Rational(q << 20, r) * Rational(r << 30, q << 40)) == Rational(1024));
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  auto next = [&] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (int i = 0; i < 2000; ++i) {
    const std::int64_t a = std::int64_t(next() >> (1 + next() % 40)) | 1, b = std::int64_t(next() >> (1 + next() % 40)) | 1;
    const int k = int(next() % 60), m = int(next() % 60);
    const Rational u(a, std::int64_t(1) << k), v(std::int64_t(1) << m, b);
    INFO(u.str() << " * " << v.str());
    const Rational w = u * v;
    CHECK(w / v == u);
    CHECK(w / u == v);
    CHECK((w * Rational(b)) / Rational(a) == Rational::pow2(m - k));
  }
}
