// tileverify/rational.hpp — exact rational numbers.
//
// Contract: a Rational is an exact element of Q, always in lowest terms with a
// positive denominator. Values whose numerator and denominator fit in 64 bits
// take a fast inline path; anything larger moves transparently to an
// arbitrary-precision GMP rational (Boost.Multiprecision's mpq_rational), so no
// operation ever overflows or rounds. The big representation is hidden behind a
// pointer so this header needs neither GMP nor Boost.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace tileverify {

__extension__ typedef __int128 int128_t;  // GCC/Clang/nvcc host; __extension__ keeps -Wpedantic quiet

struct BigRational;  // defined in src/rational.cpp (wraps mpq_rational)

class Rational {
 public:
  Rational() = default;
  Rational(std::int64_t n) : num_(n), den_(1) {}  // NOLINT: implicit on purpose
  Rational(int n) : num_(n), den_(1) {}           // NOLINT
  // n/d; d must not be zero (programmer error: throws std::domain_error).
  Rational(std::int64_t n, std::int64_t d);

  // The exact value of an IEEE-754 binary32 / binary64 bit pattern.
  // Throws std::domain_error for inf and NaN (they are not rationals).
  static Rational from_f32_bits(std::uint32_t bits);
  static Rational from_f64_bits(std::uint64_t bits);
  static Rational from_f16_bits(std::uint16_t bits);   // IEEE binary16
  static Rational from_bf16_bits(std::uint16_t bits);  // the high half of an f32
  static Rational from_double(double v);
  // Decimal ("-3", "1/8", "0.125", "1e-3") — throws std::invalid_argument on bad text.
  static Rational parse(const std::string& text);
  static Rational pow2(int k);  // 2^k exactly, for any int k

  bool is_zero() const { return !big_ && num_ == 0; }
  bool is_one() const { return !big_ && num_ == 1 && den_ == 1; }
  bool is_integer() const;
  bool is_small() const { return !big_; }
  int sign() const;

  Rational operator-() const;
  Rational inverse() const;  // 1/x; x must be nonzero (throws std::domain_error)
  friend Rational operator+(const Rational& a, const Rational& b);
  friend Rational operator-(const Rational& a, const Rational& b);
  friend Rational operator*(const Rational& a, const Rational& b);
  friend Rational operator/(const Rational& a, const Rational& b);
  Rational& operator+=(const Rational& o) { return *this = *this + o; }
  Rational& operator-=(const Rational& o) { return *this = *this - o; }
  Rational& operator*=(const Rational& o) { return *this = *this * o; }
  Rational pow(int k) const;  // integer power; 0^negative throws std::domain_error

  // Largest integer <= x, as a Rational, and whether it fits an int64.
  Rational floor() const;
  bool fits_int64() const { return !big_ && den_ == 1; }
  std::int64_t to_int64() const { return num_; }  // precondition: fits_int64()
  // x with every factor 2 removed from numerator and denominator (0 stays 0).
  Rational odd_part() const;
  // Numerator and denominator, when both fit 64 bits.
  bool to_int64_pair(std::int64_t* num, std::int64_t* den) const {
    if (big_) return false;
    *num = num_;
    *den = den_;
    return true;
  }
  // If x = ±2^k for some integer k, sets k and returns true.
  bool is_signed_power_of_two(int* k, int* sign_out) const;

  friend bool operator==(const Rational& a, const Rational& b);
  friend bool operator!=(const Rational& a, const Rational& b) { return !(a == b); }
  friend bool operator<(const Rational& a, const Rational& b) { return compare(a, b) < 0; }
  friend bool operator>(const Rational& a, const Rational& b) { return compare(a, b) > 0; }
  friend bool operator<=(const Rational& a, const Rational& b) { return compare(a, b) <= 0; }
  friend bool operator>=(const Rational& a, const Rational& b) { return compare(a, b) >= 0; }
  static int compare(const Rational& a, const Rational& b);

  std::size_t hash() const;
  double to_double() const;
  long double to_long_double() const;
  std::string str() const;  // "3", "-1/8", exact

 private:
  std::int64_t num_ = 0;
  std::int64_t den_ = 1;
  std::shared_ptr<const BigRational> big_;  // set iff the value does not fit the fast path

  friend struct BigRational;
  static Rational from_i128(int128_t n, int128_t d);  // d > 0, not yet reduced
  static Rational from_big(BigRational&& b);
};

}  // namespace tileverify
