// The table of float constants read as exact reals (docs/decide.md).
#include "tileverify/decide.hpp"

#include "known_constants.hpp"

#include "numeric.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

namespace tileverify {

const std::vector<KnownConstant>& known_constants() {
  static const std::vector<KnownConstant> table = [] {
    std::vector<KnownConstant> t;
    t.push_back({"log2e_f32", Rational::from_f32_bits(0x3FB8AA3Bu), "1/ln2",
                 "nvcc expf/__expf and -use_fast_math: 0f3FB8AA3B, fp32 log2(e)"});
    t.push_back({"log2e_f32_hi_lo", Rational::from_f32_bits(0x3FB8AA3Bu) + Rational::from_f32_bits(0x32A57060u),
                 "1/ln2", "nvcc expf: the split pair 0f3FB8AA3B + 0f32A57060"});
    t.push_back({"log2e_f32_lo", Rational::from_f32_bits(0x32A57060u), "0",
                 "nvcc expf: the low half 0f32A57060 of the split pair; with the high half read as 1/ln2 it adds nothing"});
    t.push_back({"log2e_f64", Rational::from_f64_bits(0x3FF71547652B82FEull), "1/ln2",
                 "0d3FF71547652B82FE, fp64 log2(e) (M_LOG2E)"});
    t.push_back({"ln2_f32", Rational::from_f32_bits(0x3F317218u), "ln2", "0f3F317218, fp32 ln(2)"});
    t.push_back({"ln2_f64", Rational::from_f64_bits(0x3FE62E42FEFA39EFull), "ln2",
                 "0d3FE62E42FEFA39EF, fp64 ln(2) (M_LN2)"});
    return t;
  }();
  return table;
}

namespace detail {

bool simple_ratio(const Rational& r) {
  std::int64_t n = 0, d = 0;
  if (r.is_zero() || !r.odd_part().to_int64_pair(&n, &d)) return false;
  return n < 4096 && n > -4096 && d < 4096;
}

bool read_known_constant(const Rational& v, Rational* r, int* ln2_power, const std::vector<ConstantReading>* readings) {
  for (const KnownConstant& k : known_constants()) {
    if (k.meaning == "0") {
      int e = 0, sg = 0;
      if ((v / k.value).is_signed_power_of_two(&e, &sg)) {
        *r = Rational(0);
        *ln2_power = 0;
        return true;
      }
      continue;
    }
    Rational ratio = v / k.value;
    if (simple_ratio(ratio)) {
      *r = ratio;
      *ln2_power = k.meaning == "ln2" ? 1 : -1;
      return true;
    }
  }
  if (readings)
    for (const ConstantReading& k : *readings) {
      if (k.ln2_power == 0) continue;  // a constant left as it is
      Rational ratio = v / k.value;
      if (simple_ratio(ratio)) {
        *r = ratio * k.factor;
        *ln2_power = k.ln2_power;
        return true;
      }
    }
  return false;
}

}  // namespace detail

// ---------------------------------------------------------------- constants rounded from products
//
// nvcc folds a product of constants written in the source, such as
// 1/sqrtf(32) * 1.4426950408889634f, into one float: the exact product
// rounded once (to within 0.5 ulp), or the product with the float log2(e)
// rounded (within 0.5 + 0.22 ulp: that float is 1.3e-8 relative from
// log2(e), at most 0.22 ulp of any float). Such a constant K is read as the
// exact product w · log2(e) when it is within 1 ulp of its format of it and
// of no other candidate product (docs/decide.md, "Constants rounded from
// products"): 1 ulp covers both ways of folding and stays tight enough that
// a constant a few ulp off remains what it is.

namespace {

using detail::Real;

Real to_real(const Rational& q) {
  const std::string s = q.str();
  const auto slash = s.find('/');
  if (slash == std::string::npos) return Real(s);
  return Real(s.substr(0, slash)) / Real(s.substr(slash + 1));
}

// Whether v is exactly a finite float of the format (f32: also as a double).
bool is_f32(const Rational& v) {
  const float f = float(v.to_double());
  return std::isfinite(f) && Rational::from_double(double(f)) == v;
}
bool is_f64(const Rational& v) {
  const double d = v.to_double();
  return std::isfinite(d) && Rational::from_double(d) == v;
}

std::string hex_bits(const Rational& v, bool f64) {
  char buf[32];
  if (f64) {
    const double d = v.to_double();
    std::uint64_t b = 0;
    std::memcpy(&b, &d, sizeof b);
    std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(b));
  } else {
    const float f = float(v.to_double());
    std::uint32_t b = 0;
    std::memcpy(&b, &f, sizeof b);
    std::snprintf(buf, sizeof buf, "0x%08x", b);
  }
  return buf;
}

// The distance between v and the next float of its format away from zero
// (v a normal float of that format).
Rational ulp_of(const Rational& v, bool f64) {
  int e = 0;
  std::frexp(std::fabs(v.to_double()), &e);  // |v| = m * 2^e, m in [0.5, 1)
  return Rational::pow2(e - (f64 ? 53 : 24));
}

std::string digits(const Real& x, bool f64) { return detail::real_to_string(x, f64 ? 17 : 9); }

// A readable name for a candidate factor: a small rational as itself, the
// float nearest 1/sqrt(n) as 1/sqrt(n)_f32 (attention's scale), else its bits.
std::string name_of(const Rational& c, bool f64) {
  if (c.is_integer() || detail::simple_ratio(c)) {
    std::int64_t n = 0, d = 0;
    if (c.to_int64_pair(&n, &d) && std::llabs(n) < 100000 && d < 100000) return c.str();
  }
  if (c.sign() > 0) {
    const double x = c.to_double();
    const double n = std::round(1 / (x * x));
    if (n >= 2 && n <= double(1 << 24)) {
      const Real r = 1 / boost::multiprecision::sqrt(Real(std::int64_t(n)));
      const double rd = r.convert_to<double>();
      const bool same = f64 ? Rational::from_double(rd) == c : Rational::from_double(double(float(rd))) == c;
      if (same) return "1/sqrt(" + std::to_string(std::int64_t(n)) + (f64 ? ")_f64" : ")_f32");
    }
  }
  return hex_bits(c, f64) + (f64 ? "_f64" : "_f32");
}

std::string joined(const std::vector<std::string>& where) {
  std::string s;
  for (std::size_t i = 0; i < where.size(); ++i) s += (i == 0 ? "" : i + 1 == where.size() ? " and " : ", ") + where[i];
  return s;
}

// A constant of either kernel, by |value|, with where it occurs.
struct Source {
  Rational value;
  bool f64 = false;
  std::vector<std::string> where;
};

// A product K may be rounded from: K ~ sign · w · M, M = log2(e) (ln2_power
// -1) or ln 2 (+1).
struct Match {
  Rational w;  // signed: K reads as w · M
  int ln2_power;
  std::string text;  // "1/sqrt(32)_f32 · log2(e) = 0.176776692 · 1.44269504"
  std::string from;  // where w comes from, if a kernel constant
  double ulps;
  const Source* factor;  // the kernel constant w is 2^k times; null for a rational
};

void add_source(std::vector<Source>& v, const Rational& value, bool f64, const std::string& where) {
  for (Source& s : v)
    if (s.value == value) {
      if (std::find(s.where.begin(), s.where.end(), where) == s.where.end()) s.where.push_back(where);
      return;
    }
  v.push_back(Source{value, f64, {where}});
}

}  // namespace

std::vector<ConstantReading> read_rounded_constants(const std::vector<KernelConstant>& constants) {
  namespace bm = boost::multiprecision;
  std::vector<ConstantReading> out;
  // Candidate factors c by |value| and the targets K by value, each once,
  // sorted by value: the table does not depend on the order of the
  // constants in the kernels.
  std::vector<Source> factors, targets;
  for (const KernelConstant& k : constants) {
    if (k.value.is_zero()) continue;
    const bool f64 = k.f64 || !is_f32(k.value);
    if (f64 && !is_f64(k.value)) continue;  // not a float at all
    Rational r;
    int p = 0;
    // The table's floats (and their simple multiples) are read as what they
    // stand for; as factors they would make every power of two "2^k · log2e_f32
    // · ln 2" (log2e_f32 · ln 2 is 1 - 1.3e-8).
    if (detail::read_known_constant(k.value, &r, &p)) continue;
    add_source(factors, k.value.sign() < 0 ? -k.value : k.value, f64, k.where);
    // A short rational (odd parts below 4096: 0.5, 3, 0.125) is what the
    // kernel says, not a rounded product: it is never read within a tolerance.
    if (!detail::simple_ratio(k.value)) add_source(targets, k.value, f64, k.where);
  }
  auto by_value = [](const Source& a, const Source& b) { return a.value < b.value; };
  std::sort(factors.begin(), factors.end(), by_value);
  std::sort(targets.begin(), targets.end(), by_value);

  // Exact products c · K (K a known_constants() float): x * scale * log2e
  // multiplied in the kernel is this, read as K is read. Simple c are read
  // by the table itself already. And quotients c / K (x * (scale /
  // 0.6931472f), which nvcc divides in the kernel), c = 1 included: 1/K is
  // read as 1 over what K is read as.
  std::vector<Rational> cs{Rational(1)};
  for (const Source& c : factors)
    if (!detail::simple_ratio(c.value)) cs.push_back(c.value);
  for (const Rational& c : cs)
    for (const KnownConstant& k : known_constants()) {
      if (k.meaning == "0") continue;
      const int power = k.meaning == "ln2" ? 1 : -1;
      if (!c.is_one()) out.push_back(ConstantReading{c * k.value, c, power, ""});
      out.push_back(ConstantReading{c / k.value, c, -power, ""});
    }
  // What the search below needs of each factor, once.
  struct Factor {
    const Source* source;
    long double value;
    std::string name, from;
  };
  std::vector<Factor> fs;
  for (const Source& c : factors) {
    const std::string name = name_of(c.value, c.f64);
    fs.push_back(Factor{&c, c.value.to_long_double(), name, name + " is " + hex_bits(c.value, c.f64) + " in " + joined(c.where)});
  }

  const Real ln2 = bm::log(Real(2));
  // The products each target is within 1 ulp of.
  std::vector<std::vector<Match>> found(targets.size());
  for (std::size_t ti = 0; ti < targets.size(); ++ti) {
    const Source& t = targets[ti];
    std::vector<Match>& matches = found[ti];
    const bool f64 = t.f64;
    int e = 0;
    std::frexp(std::fabs(t.value.to_double()), &e);
    if (e < (f64 ? -1021 : -125)) continue;  // subnormal: no product is rounded to one
    // Read by the table already (its floats are no targets, but a simple
    // multiple of one may be). An exact product c · K₀ that is a float of
    // its own needs no check: its exact entry comes first where readings
    // apply, so a reading found below is never used (and never noted).
    Rational r;
    int p = 0;
    if (detail::read_known_constant(t.value, &r, &p)) continue;
    const Real K = to_real(t.value), tol = to_real(ulp_of(t.value, f64));
    const Real absK = bm::abs(K);
    const int sign = t.value.sign();
    // Exactly: |K| within 1 ulp of w_abs · M (100 digits; never a tie, M is irrational).
    auto consider = [&](const Rational& w_abs, int power, const Real& M, const std::string& name, const std::string& from,
                        const Source* factor) {
      const Real diff = bm::abs(absK - to_real(w_abs) * M);
      if (diff > tol) return;
      const Rational w = sign < 0 ? -w_abs : w_abs;
      for (const Match& m : matches)
        if (m.w == w && m.ln2_power == power) return;  // the same product from another source
      Match m{w, power, "", from, (diff / tol).convert_to<double>(), factor};
      m.text = (sign < 0 ? "-" : "") + name + (power < 0 ? " · log2(e) = " : " · ln(2) = ") + digits(to_real(w), f64) +
               " · " + digits(M, f64);
      matches.push_back(std::move(m));
    };
    for (int power : {-1, 1}) {
      const Real M = power < 0 ? Real(1 / ln2) : ln2;
      const Real q = absK / M;  // K = w · M: the w to look for
      // Candidates are screened in long double (64-bit significand, 2^-11
      // of an f64 ulp) with a margin, and confirmed by consider().
      const long double ql = q.convert_to<long double>(), tl = (tol / M).convert_to<long double>() * 1.001L;
      // w = 2^k · c for a constant c of either kernel.
      for (const Factor& c : fs) {
        const long double k = std::round(std::log2(ql / c.value));
        if (std::fabs(k) > 16 || std::fabs(std::ldexp(c.value, int(k)) - ql) > tl) continue;
        consider(c.source->value * Rational::pow2(int(k)), power, M,
                 k == 0 ? c.name : "2^" + std::to_string(int(k)) + " · " + c.name, c.from, c.source);
      }
      // w = 2^k · a/b, odd a and b below the bound: as dense as a 1-ulp
      // window allows (odd parts below 4096, the exact rule's, are 3.4 M
      // values an octave: most f32 constants would be within an ulp of one).
      const std::int64_t bound = f64 ? 4096 : 64;
      for (std::int64_t b = 1; b < bound; b += 2) {
        const long double y = ql * b;  // y ~ 2^k · a
        int ey = 0;
        std::frexp(double(y), &ey);
        for (int k = ey - 14; k <= ey; ++k) {
          const long double a0 = std::ldexp(y, -k);
          if (a0 < 0.5L || a0 > bound) continue;
          std::int64_t lo = std::int64_t(std::floor(a0));
          if (lo % 2 == 0) --lo;
          for (std::int64_t a : {lo, lo + 2}) {
            if (a < 1 || a >= bound) continue;
            if (std::fabs(std::ldexp(static_cast<long double>(a), k) / b - ql) > tl) continue;
            const Rational w = Rational(a, b) * Rational::pow2(k);
            consider(w, power, M, w.str(), "", nullptr);
          }
        }
      }
    }
  }

  // K ~ c · log2(e) makes c ~ K · ln 2: of two constants that are each
  // other's product, the one read is K, the log2(e) side, which is the side
  // exponents need (ex2 multiplies its argument by ln 2, and only then is
  // log2(e) divided out); c is the factor, read as the float it is.
  auto abs_of = [](const Rational& v) { return v.sign() < 0 ? -v : v; };
  auto folds = [&](const Rational& k_abs, const Rational& c) {  // some K = ±k_abs has K ~ ±2^i · c · log2(e)
    for (std::size_t j = 0; j < targets.size(); ++j)
      if (abs_of(targets[j].value) == k_abs)
        for (const Match& m : found[j])
          if (m.ln2_power < 0 && m.factor && m.factor->value == c) return true;
    return false;
  };
  std::vector<std::vector<Match>> kept(targets.size());
  for (std::size_t i = 0; i < targets.size(); ++i)
    for (const Match& m : found[i])
      if (!(m.ln2_power > 0 && m.factor && folds(m.factor->value, abs_of(targets[i].value)))) kept[i].push_back(m);
  found.swap(kept);

  std::vector<ConstantReading> rounded;  // the readings made below, to check against
  for (std::size_t ti = 0; ti < targets.size(); ++ti) {
    const Source& t = targets[ti];
    const std::vector<Match>& matches = found[ti];
    if (matches.empty()) continue;
    // A simple multiple of a constant read before it is read through that
    // one (the table's order), consistently with it.
    Rational r;
    int p = 0;
    if (detail::read_known_constant(t.value, &r, &p, &rounded)) continue;
    const std::string what = hex_bits(t.value, t.f64) + " (" + digits(to_real(t.value), t.f64) + ") in " + joined(t.where);
    if (matches.size() > 1) {
      std::string note = what + " is not read as a product: it is within 1 ulp of " + matches[0].text;
      for (std::size_t i = 1; i < matches.size(); ++i) note += (i + 1 == matches.size() ? " and of " : ", of ") + matches[i].text;
      out.push_back(ConstantReading{t.value, Rational(0), 0, note + ", which differ"});
      continue;
    }
    const Match& m = matches[0];
    char ulps[32];
    std::snprintf(ulps, sizeof ulps, "%.2f", m.ulps);
    std::string note = what + " read as " + m.text + " (within " + ulps + " ulp";
    if (!m.from.empty()) note += "; " + m.from;
    note += "): the verdict is over the reals with this constant read as that product";
    rounded.push_back(ConstantReading{t.value, m.w, m.ln2_power, note});
    out.push_back(rounded.back());
  }
  return out;
}

}  // namespace tileverify
