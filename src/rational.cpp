// Exact rationals: an int64 fast path, GMP (through Boost.Multiprecision) beyond it.
#include "tileverify/rational.hpp"

#include "util/hash.hpp"

#include <boost/multiprecision/gmp.hpp>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>
#include <utility>

namespace tileverify {

namespace mp = boost::multiprecision;

struct BigRational {
  mp::mpq_rational v;
};

namespace {

using u128 = unsigned __int128;

u128 uabs128(int128_t x) { return x < 0 ? u128(0) - u128(x) : u128(x); }

// Stein's binary gcd: shifts and subtractions, no division. a, b > 0.
std::uint64_t gcd_u64(std::uint64_t a, std::uint64_t b) {
  const int shift = __builtin_ctzll(a | b);
  a >>= __builtin_ctzll(a);
  do {
    b >>= __builtin_ctzll(b);
    if (a > b) std::swap(a, b);
    b -= a;
  } while (b != 0);
  return a << shift;
}

int ctz128(u128 x) {
  const std::uint64_t lo = std::uint64_t(x);
  return lo ? __builtin_ctzll(lo) : 64 + __builtin_ctzll(std::uint64_t(x >> 64));
}

// Stein's gcd on 128 bits, finishing in 64 bits as soon as both fit. Products
// of float constants (24-bit numerators, power-of-two denominators) pass 2^63
// before they reduce; Euclid's steps were a 64-bit division each, and a
// power-of-two denominator against an odd numerator took a dozen of them.
u128 gcd_u128(u128 a, u128 b) {
  if (a == 0) return b;
  if (b == 0) return a;
  const int shift = ctz128(a | b);
  a >>= ctz128(a);
  for (;;) {  // a odd, b > 0
    b >>= ctz128(b);
    if (a > b) std::swap(a, b);
    b -= a;
    if (b == 0) return a << shift;
    if ((a >> 64) == 0 && (b >> 64) == 0) return u128(gcd_u64(std::uint64_t(a), std::uint64_t(b))) << shift;
  }
}

constexpr int128_t kI64Max = std::numeric_limits<std::int64_t>::max();
constexpr int128_t kI64Min = std::numeric_limits<std::int64_t>::min();

mp::mpz_int to_mpz(int128_t x) {
  bool neg = x < 0;
  u128 u = uabs128(x);
  mp::mpz_int hi = mp::mpz_int(std::uint64_t(u >> 64));
  mp::mpz_int r = (hi << 64) + mp::mpz_int(std::uint64_t(u));
  return neg ? mp::mpz_int(-r) : r;
}

mp::mpq_rational as_mpq(std::int64_t n, std::int64_t d, const std::shared_ptr<const BigRational>& big) {
  if (big) return big->v;
  return mp::mpq_rational(mp::mpz_int(n), mp::mpz_int(d));
}

}  // namespace

Rational Rational::from_i128(int128_t n, int128_t d) {
  if (d < 0) {
    n = -n;
    d = -d;
  }
  if (n == 0) return Rational();
  if (n >= kI64Min + 1 && n <= kI64Max && d <= kI64Max) {
    // The common case: 64-bit gcd and division, not the 128-bit library calls.
    std::uint64_t un = n < 0 ? std::uint64_t(-std::int64_t(n)) : std::uint64_t(n), ud = std::uint64_t(d);
    std::uint64_t g = ud == 1 ? 1 : gcd_u64(un, ud);
    Rational r;
    r.num_ = std::int64_t(n) / std::int64_t(g);
    r.den_ = std::int64_t(ud / g);
    return r;
  }
  u128 g = gcd_u128(uabs128(n), u128(d));
  if (g > 1) {
    n /= int128_t(g);
    d /= int128_t(g);
  }
  if (n >= kI64Min + 1 && n <= kI64Max && d <= kI64Max) {
    Rational r;
    r.num_ = std::int64_t(n);
    r.den_ = std::int64_t(d);
    return r;
  }
  BigRational b;
  b.v = mp::mpq_rational(to_mpz(n), to_mpz(d));
  return from_big(std::move(b));
}

Rational Rational::from_big(BigRational&& b) {
  // Demote to the fast path whenever the value fits again.
  const auto& num = mp::numerator(b.v);
  const auto& den = mp::denominator(b.v);
  if (num > std::numeric_limits<std::int64_t>::min() && num <= std::numeric_limits<std::int64_t>::max() &&
      den <= std::numeric_limits<std::int64_t>::max()) {
    Rational r;
    r.num_ = num.convert_to<std::int64_t>();
    r.den_ = den.convert_to<std::int64_t>();
    return r;
  }
  Rational r;
  r.big_ = std::make_shared<const BigRational>(std::move(b));
  return r;
}

Rational::Rational(std::int64_t n, std::int64_t d) {
  if (d == 0) throw std::domain_error("Rational: zero denominator");
  *this = from_i128(n, d);
}

Rational Rational::from_f64_bits(std::uint64_t bits) {
  bool neg = bits >> 63;
  int exp = int((bits >> 52) & 0x7ff);
  std::uint64_t frac = bits & ((std::uint64_t(1) << 52) - 1);
  if (exp == 0x7ff) throw std::domain_error("Rational: inf or NaN has no rational value");
  std::uint64_t mant = exp == 0 ? frac : (frac | (std::uint64_t(1) << 52));
  int e2 = (exp == 0 ? 1 : exp) - 1075;  // value = mant * 2^e2
  Rational r = Rational(std::int64_t(mant)) * pow2(e2);
  return neg ? -r : r;
}

Rational Rational::from_f32_bits(std::uint32_t bits) {
  bool neg = bits >> 31;
  int exp = int((bits >> 23) & 0xff);
  std::uint32_t frac = bits & ((1u << 23) - 1);
  if (exp == 0xff) throw std::domain_error("Rational: inf or NaN has no rational value");
  std::uint32_t mant = exp == 0 ? frac : (frac | (1u << 23));
  int e2 = (exp == 0 ? 1 : exp) - 150;
  Rational r = Rational(std::int64_t(mant)) * pow2(e2);
  return neg ? -r : r;
}

Rational Rational::from_f16_bits(std::uint16_t bits) {
  bool neg = bits >> 15;
  int exp = (bits >> 10) & 0x1f;
  std::uint32_t frac = bits & 0x3ffu;
  if (exp == 0x1f) throw std::domain_error("Rational: inf or NaN has no rational value");
  std::uint32_t mant = exp == 0 ? frac : (frac | 0x400u);
  int e2 = (exp == 0 ? 1 : exp) - 25;
  Rational r = Rational(std::int64_t(mant)) * pow2(e2);
  return neg ? -r : r;
}

Rational Rational::from_bf16_bits(std::uint16_t bits) { return from_f32_bits(std::uint32_t(bits) << 16); }

Rational Rational::from_double(double v) {
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return from_f64_bits(bits);
}

Rational Rational::pow2(int k) {
  if (k >= 0 && k <= 62) return Rational(std::int64_t(1) << k);
  if (k < 0 && k >= -62) {
    Rational r;
    r.num_ = 1;
    r.den_ = std::int64_t(1) << (-k);
    return r;
  }
  BigRational b;
  mp::mpz_int one = 1;
  if (k > 0)
    b.v = mp::mpq_rational(mp::mpz_int(one << k));
  else
    b.v = mp::mpq_rational(one, mp::mpz_int(one << (-k)));
  return from_big(std::move(b));
}

Rational Rational::parse(const std::string& text) {
  auto bad = [&]() { return std::invalid_argument("not a rational number: '" + text + "'"); };
  if (text.empty()) throw bad();
  auto slash = text.find('/');
  if (slash != std::string::npos) {
    Rational n = parse(text.substr(0, slash));
    Rational d = parse(text.substr(slash + 1));
    if (!n.is_integer() || !d.is_integer()) throw bad();
    if (d.is_zero()) throw std::invalid_argument("zero denominator in '" + text + "'");
    return n / d;
  }
  // Decimal with optional fraction and exponent, read exactly.
  std::size_t i = 0;
  bool neg = false;
  if (text[i] == '+' || text[i] == '-') neg = text[i++] == '-';
  mp::mpz_int digits = 0;
  int frac_digits = 0;
  bool any = false, dot = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c >= '0' && c <= '9') {
      digits = digits * 10 + (c - '0');
      any = true;
      if (dot) ++frac_digits;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (!any) throw bad();
  long exp10 = 0;
  if (i < text.size()) {
    if (text[i] != 'e' && text[i] != 'E') throw bad();
    ++i;
    std::size_t used = 0;
    try {
      exp10 = std::stol(text.substr(i), &used);
    } catch (...) {
      throw bad();
    }
    if (used != text.size() - i || exp10 > 100000 || exp10 < -100000) throw bad();
  }
  exp10 -= frac_digits;
  mp::mpq_rational v(digits);
  mp::mpz_int p = mp::pow(mp::mpz_int(10), unsigned(exp10 < 0 ? -exp10 : exp10));
  if (exp10 >= 0)
    v *= mp::mpq_rational(p);
  else
    v /= mp::mpq_rational(p);
  if (neg) v = -v;
  BigRational b;
  b.v = v;
  return from_big(std::move(b));
}

bool Rational::is_integer() const {
  return big_ ? mp::denominator(big_->v) == 1 : den_ == 1;
}

int Rational::sign() const {
  if (big_) return big_->v.sign();
  return num_ > 0 ? 1 : (num_ < 0 ? -1 : 0);
}

Rational Rational::operator-() const {
  if (!big_) return from_i128(-int128_t(num_), den_);
  BigRational b;
  b.v = -big_->v;
  return from_big(std::move(b));
}

Rational Rational::inverse() const {
  if (is_zero()) throw std::domain_error("Rational: inverse of zero");
  if (!big_) return from_i128(den_, num_);
  BigRational b;
  b.v = 1 / big_->v;
  return from_big(std::move(b));
}

Rational operator+(const Rational& a, const Rational& b) {
  if (!a.big_ && !b.big_) {
    if (a.den_ == b.den_) return Rational::from_i128(int128_t(a.num_) + b.num_, a.den_);
    return Rational::from_i128(int128_t(a.num_) * b.den_ + int128_t(b.num_) * a.den_, int128_t(a.den_) * b.den_);
  }
  BigRational r;
  r.v = as_mpq(a.num_, a.den_, a.big_) + as_mpq(b.num_, b.den_, b.big_);
  return Rational::from_big(std::move(r));
}

Rational operator-(const Rational& a, const Rational& b) {
  if (!a.big_ && !b.big_) {
    if (a.den_ == b.den_) return Rational::from_i128(int128_t(a.num_) - b.num_, a.den_);
    return Rational::from_i128(int128_t(a.num_) * b.den_ - int128_t(b.num_) * a.den_, int128_t(a.den_) * b.den_);
  }
  BigRational r;
  r.v = as_mpq(a.num_, a.den_, a.big_) - as_mpq(b.num_, b.den_, b.big_);
  return Rational::from_big(std::move(r));
}

Rational operator*(const Rational& a, const Rational& b) {
  if (!a.big_ && !b.big_) {
    if (a.den_ == 1 && b.den_ == 1) {
      int128_t p = int128_t(a.num_) * b.num_;
      if (p >= kI64Min + 1 && p <= kI64Max) {
        Rational r;
        r.num_ = std::int64_t(p);
        r.den_ = 1;
        return r;
      }
    }
    return Rational::from_i128(int128_t(a.num_) * b.num_, int128_t(a.den_) * b.den_);
  }
  BigRational r;
  r.v = as_mpq(a.num_, a.den_, a.big_) * as_mpq(b.num_, b.den_, b.big_);
  return Rational::from_big(std::move(r));
}

Rational operator/(const Rational& a, const Rational& b) {
  if (b.is_zero()) throw std::domain_error("Rational: division by zero");
  if (!a.big_ && !b.big_)
    return Rational::from_i128(int128_t(a.num_) * b.den_, int128_t(a.den_) * b.num_);
  BigRational r;
  r.v = as_mpq(a.num_, a.den_, a.big_) / as_mpq(b.num_, b.den_, b.big_);
  return Rational::from_big(std::move(r));
}

Rational Rational::pow(int k) const {
  if (k == 0) return Rational(1);
  if (k < 0) return inverse().pow(-k);
  Rational result(1), base = *this;
  unsigned e = unsigned(k);
  while (e) {
    if (e & 1) result = result * base;
    e >>= 1;
    if (e) base = base * base;
  }
  return result;
}

Rational Rational::floor() const {
  if (!big_) {
    std::int64_t q = num_ / den_;
    if (num_ % den_ != 0 && num_ < 0) --q;
    return Rational(q);
  }
  mp::mpz_int n = mp::numerator(big_->v), d = mp::denominator(big_->v);
  mp::mpz_int q = n / d;
  if (q * d != n && n < 0) q -= 1;
  BigRational b;
  b.v = mp::mpq_rational(q);
  return from_big(std::move(b));
}

bool Rational::is_signed_power_of_two(int* k, int* sign_out) const {
  if (is_zero()) return false;
  mp::mpq_rational v = as_mpq(num_, den_, big_);
  mp::mpz_int n = mp::abs(mp::numerator(v)), d = mp::denominator(v);
  auto log2_exact = [](const mp::mpz_int& x, int* out) {
    if (x == 0) return false;
    unsigned long lsb = mp::lsb(x), msb = mp::msb(x);
    if (lsb != msb) return false;
    *out = int(lsb);
    return true;
  };
  int ln = 0, ld = 0;
  if (!log2_exact(n, &ln) || !log2_exact(d, &ld)) return false;
  *k = ln - ld;
  *sign_out = sign();
  return true;
}

Rational Rational::odd_part() const {
  if (is_zero()) return *this;
  mp::mpq_rational v = as_mpq(num_, den_, big_);
  mp::mpz_int n = mp::numerator(v), d = mp::denominator(v);
  n >>= mp::lsb(mp::abs(n));
  d >>= mp::lsb(d);
  BigRational b;
  b.v = mp::mpq_rational(n, d);
  return from_big(std::move(b));
}

bool operator==(const Rational& a, const Rational& b) {
  if (!a.big_ && !b.big_) return a.num_ == b.num_ && a.den_ == b.den_;
  if (!a.big_ || !b.big_) return false;  // canonical: big values never fit the fast path
  return a.big_->v == b.big_->v;
}

int Rational::compare(const Rational& a, const Rational& b) {
  if (!a.big_ && !b.big_) {
    int128_t l = int128_t(a.num_) * b.den_, r = int128_t(b.num_) * a.den_;
    return l < r ? -1 : (l > r ? 1 : 0);
  }
  auto x = as_mpq(a.num_, a.den_, a.big_), y = as_mpq(b.num_, b.den_, b.big_);
  return x < y ? -1 : (x > y ? 1 : 0);
}

std::size_t Rational::hash() const {
  if (!big_) {
    return std::size_t(detail::combine64(std::uint64_t(num_) * 0x9E3779B97F4A7C15ull, std::uint64_t(den_)));
  }
  // The limbs of the reduced numerator and denominator (a decimal string of
  // each value was made before: products of float constants and powers of
  // two past 64 bits are hashed when they are interned).
  const mpq_srcptr q = big_->v.backend().data();
  std::uint64_t h = 0x243F6A8885A308D3ull;
  for (const mpz_srcptr z : {mpq_numref(q), mpq_denref(q)}) {
    h = detail::combine64(h, std::uint64_t(std::int64_t(z->_mp_size)));
    const int n = z->_mp_size < 0 ? -z->_mp_size : z->_mp_size;
    for (int i = 0; i < n; ++i) h = detail::combine64(h, std::uint64_t(z->_mp_d[i]));
  }
  return std::size_t(detail::finalize64(h));
}

double Rational::to_double() const {
  if (!big_) return double(num_) / double(den_);  // both exact up to 2^53; fine for display
  return big_->v.convert_to<double>();
}

long double Rational::to_long_double() const {
  if (!big_) return static_cast<long double>(num_) / static_cast<long double>(den_);
  return big_->v.convert_to<long double>();
}

std::string Rational::str() const {
  if (!big_) return den_ == 1 ? std::to_string(num_) : std::to_string(num_) + "/" + std::to_string(den_);
  return big_->v.str();
}

}  // namespace tileverify
