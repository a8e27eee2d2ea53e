// Exp-polynomial normal forms (internal to the decide module).
//
// A term is  coef · monomial · exp(h) · exp(c)  where
//   coef      is an exact rational,
//   monomial  is a product of atoms (input symbols, opaque max/min/select/
//             function applications, ln2) with integer, possibly negative, powers,
//   h         is a polynomial over atoms with no input-free part (h(0) = 0 in
//             VOLTA's Appendix A convention),
//   c         is the input-free part of the exponent (a polynomial in ln2 with
//             rational coefficients; integer multiples of ln2 are folded into
//             coef as powers of two).
// Monomials and polynomials are interned (32-bit ids), so term keys compare in
// O(1). A Sum is  scale · Σ terms : multiplying a sum by a single term only
// touches the scale, which keeps online-softmax chains linear.
// A normal form (NF) is a rational function num / den of two Sums.
#pragma once

#include "tileverify/decide.hpp"
#include "tileverify/expr.hpp"
#include "tileverify/rational.hpp"
#include "../util/flat_map.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tileverify::detail {

// Thrown inside the decider when a limit is reached; becomes Unknown{reason}.
struct LimitHit {
  std::string reason;
};

using MonoId = std::uint32_t;  // 0: the empty monomial (1)
using PolyId = std::uint32_t;  // 0: the zero polynomial
using CoefId = std::uint32_t;  // 0: zero, 1: one

// Interns rationals (open addressing over ids, exact comparison of values):
// every exponent term and key asks, and a node-based map cost a pointer
// chase per probe.
class CoefTable {
 public:
  CoefTable();
  CoefId intern(const Rational& v);
  const Rational& get(CoefId id) const { return values_[id]; }

 private:
  std::vector<Rational> values_;
  std::vector<std::uint64_t> hashes_;
  std::vector<CoefId> table_;  // UINT32_MAX: empty
};

struct MonoEntry {
  std::uint32_t atom;
  std::int32_t power;
  bool operator==(const MonoEntry& o) const { return atom == o.atom && power == o.power; }
};
struct PolyEntry {
  MonoId mono;
  CoefId coef;
  bool operator==(const PolyEntry& o) const { return mono == o.mono && coef == o.coef; }
};

// Interns sequences of T (contiguous storage, open addressing).
template <class T>
class SeqInterner {
 public:
  SeqInterner();
  std::uint32_t intern(const T* p, std::size_t n);
  const T* data(std::uint32_t id) const { return store_.data() + offset_[id]; }
  std::size_t size(std::uint32_t id) const { return offset_[id + 1] - offset_[id]; }
  std::size_t count() const { return offset_.size() - 1; }

 private:
  std::vector<T> store_;
  std::vector<std::size_t> offset_;
  std::vector<std::size_t> hash_;
  std::vector<std::uint32_t> table_;
};

struct Term {
  Rational coef{1};
  MonoId mono = 0;
  PolyId exp = 0;
  PolyId cexp = 0;
  bool unit_key() const { return mono == 0 && exp == 0 && cexp == 0; }
};
inline bool same_key(const Term& a, const Term& b) {
  return a.mono == b.mono && a.exp == b.exp && a.cexp == b.cexp;
}
inline bool key_less(const Term& a, const Term& b) {
  if (a.mono != b.mono) return a.mono < b.mono;
  if (a.exp != b.exp) return a.exp < b.exp;
  return a.cexp < b.cexp;
}

// scale · Σ terms; terms sorted by key_less, keys distinct, coefficients
// nonzero. A one-term sum is always kept as scale · [unit].
struct Sum {
  Term scale;
  std::vector<Term> terms;
  bool zero() const { return terms.empty(); }
  bool single() const { return terms.size() == 1; }
};

// A sum divided by its leading term (translation-invariant order): two sums
// that differ by a factor that is a single term have equal bodies.
struct Body {
  Term lead;                // the true leading term (scale included)
  std::vector<Term> terms;  // sorted by key_less
  std::size_t hash = 0;
};

// A denominator: an immutable sum of at least two terms, shared between the
// normal forms that divide by it (every output of a softmax row divides by the
// same one), with its body computed once.
struct Den {
  Sum sum;
  mutable std::shared_ptr<const Body> body;
};

struct NF {
  Sum num;
  std::shared_ptr<const Den> den;  // null: the denominator is 1
  mutable std::shared_ptr<const Body> num_body;  // lazily computed
};

// The tables and the arithmetic on terms, sums and normal forms.
class Algebra {
 public:
  Algebra(const ExprContext& ctx, const DecideLimits& limits);

  // atoms: expression ids of symbols and ln2, or synthetic ids (from
  // kSyntheticAtom up) for opaque applications keyed by their operands' forms
  static constexpr std::uint32_t kSyntheticAtom = 0x80000000u;
  Term atom_term(std::uint32_t atom);
  // An interned id for a normal form (equal forms, equal ids). With
  // `exponent`, the known-constant rule is applied first, as exp_of does.
  std::uint32_t nf_key(const NF& a, bool exponent);
  Term constant_term(const Rational& v);
  bool is_constant_atom(std::uint32_t atom) const;

  // terms
  Term mul(const Term& a, const Term& b);
  Term div(const Term& a, const Term& b);
  int order(const Term& a, const Term& b) const;  // translation-invariant total order

  // sums
  Sum sum_of(const Term& t);
  Sum add(Sum a, Sum b);
  Sum add_many(std::vector<Sum>& parts);
  Sum add_terms(const std::vector<const Term*>& ts);  // add_many of one-term sums of nonzero terms
  Sum mul(Sum a, Sum b);
  Sum mul(Sum a, const Term& t);
  // The terms of s with its scale multiplied in, sorted by key_less, and
  // back: the sum of nonzero terms (combined where keys are equal).
  std::vector<Term> flat_terms(const Sum& s);
  Sum sum_of_terms(std::vector<Term> terms);
  Sum neg(Sum a);
  std::shared_ptr<const Body> body(const Sum& s);
  static bool same_body(const Body& a, const Body& b);

  // normal forms
  NF nf_of(const Term& t);
  NF add(NF a, NF b);
  NF add_many(std::vector<NF>& parts);
  NF mul(NF a, NF b);
  // Cancels d's denominator against n's numerator when they agree up to a
  // single term (n's numerator becomes that term, d loses its denominator).
  bool cancel(NF& d, NF& n);
  NF inverse(NF a);
  // The known-constant rule on a term outside an exponent: its power of ln2
  // comes from log2(x) = log(x) / ln 2 (normalizer.cpp), and nvcc's float
  // ln 2 or log2(e) beside it is read as the real constant, as in exponents.
  void read_known_constants(Term* t) { apply_known_constants(&t->coef, &t->mono); }
  // The same, and also without a power of ln2: where a log2 occurs, nvcc's
  // m * 1.44269504f beside log2f(l) is m / ln 2 (a log-sum-exp in base 2).
  void read_known_constants_plain(Term* t) { apply_known_constants(&t->coef, &t->mono, true); }
  NF pow(NF a, int k);
  NF neg(NF a);
  // exp(arg); returns false when arg is not a polynomial (the caller then
  // treats the exponential as an opaque atom).
  bool exp_of(const NF& arg, Term* out);
  bool is_zero(const NF& a) const { return a.num.zero(); }

  const DecideLimits& limits() const { return limits_; }
  std::size_t peak_terms() const { return peak_terms_; }
  // The DecideLimits::constant_readings this algebra has applied so far.
  std::vector<std::size_t> readings_used() const;
  // Throws LimitHit past the deadline. Reads the clock once per 256 units
  // of work: a call is one unit, a merge of large polynomials many.
  void check_deadline(std::size_t work = 1);
  // deadline = start + timeout_seconds, or limits.deadline when that is sooner
  void set_deadline(std::chrono::steady_clock::time_point start);
  std::string time_limit_reason() const;
  std::chrono::steady_clock::time_point deadline;

  // Read access for encoders (Z3).
  const MonoEntry* mono_entries(MonoId m, std::size_t* n) const {
    *n = monos_.size(m);
    return monos_.data(m);
  }
  const PolyEntry* poly_entries(PolyId p, std::size_t* n) const {
    *n = polys_.size(p);
    return polys_.data(p);
  }
  const Rational& coef(CoefId c) const { return coefs_.get(c); }
  std::uint32_t ln2_atom() const { return ln2_atom_; }

 private:
  MonoId mono_mul(MonoId a, MonoId b);
  MonoId mono_inv(MonoId a);
  Rational coef_mul(const Rational& a, const Rational& b, bool divide);  // a * b, or a / b
  PolyId poly_add(PolyId a, PolyId b);
  PolyId poly_neg(PolyId a);
  int mono_order(MonoId a, MonoId b) const;
  int poly_order(PolyId a, PolyId b) const;
  void canon_cexp(Term& t);
  void append_key(const Sum& s, bool exponent, std::vector<std::uint32_t>& out);
  void apply_known_constants(Rational* c, MonoId* m, bool plain = false);
  std::int32_t apply_known_constants_uncached(Rational* c, std::int32_t p, bool plain,
                                             std::vector<std::uint32_t>* readings);
  int ln2_power(MonoId m) const;
  MonoId ln2_pow_mono(std::int32_t k);  // ln2^k as a monomial
  std::int32_t known_constants_power(Rational* c, std::int32_t p, bool plain = false);  // the rules on c * ln2^p
  void merge_into(std::vector<Term>& big, std::vector<Term>& small);
  Sum finish_sum(Sum acc, std::vector<Term>& rest);
  void absorb(Sum& s);
  void sort_combine(std::vector<Term>& v);
  void note_terms(std::size_t n);
  void simplify(NF& a);
  void set_den(NF& r, Sum d);
  const Body& num_body(const NF& a);
  const Body& den_body(const Den& d);
  bool same_den(const std::shared_ptr<const Den>& a, const std::shared_ptr<const Den>& b);

  const ExprContext& ctx_;
  DecideLimits limits_;
  CoefTable coefs_;
  SeqInterner<MonoEntry> monos_;
  SeqInterner<PolyEntry> polys_;
  SeqInterner<std::uint32_t> nf_keys_;
  std::vector<Term> key_terms_;         // scratch of append_key
  std::vector<std::uint32_t> key_seq_;  // scratch of nf_key
  FlatMap64 mono_mul_memo_;
  std::vector<MonoEntry> mono_scratch_;
  FlatMap64 mono_inv_memo_;
  FlatMap64 big_mul_memo_, big_div_memo_;  // (coef, coef) -> coef, both outside 64 bits
  FlatMap64 poly_add_memo_;
  FlatMap64 poly_neg_memo_;
  // Denominator comparisons, remembered by identity (the dens are kept alive).
  std::map<std::pair<const Den*, const Den*>, bool> same_den_memo_;
  std::vector<std::shared_ptr<const Den>> compared_dens_;
  std::uint32_t ln2_atom_ = UINT32_MAX;
  MonoId ln2_mono_ = UINT32_MAX;
  // c = r * value with r simple reads as r * factor times 1/ln2
  // (log2e_values_) or ln2 (the known-constant rule); reading: the index in
  // DecideLimits::constant_readings, kNoReading for known_constants().
  static constexpr std::uint32_t kNoReading = UINT32_MAX;
  struct KnownEntry {
    Rational value, factor;
    std::uint32_t reading;
  };
  std::vector<KnownEntry> log2e_values_, ln2_values_;
  std::vector<bool> reading_used_;  // by index in DecideLimits::constant_readings
  struct CexpSplit {
    std::int32_t whole;  // 2^whole moves into the coefficient
    PolyId rest;         // the exponent left
  };
  FlatMap64 cexp_memo_;  // constant exponent -> index in cexp_splits_
  std::vector<CexpSplit> cexp_splits_;
  std::unordered_map<std::int32_t, Rational> pow2_;
  FlatMap64 known_memo_;  // (coef, power of ln2) -> index in known_results_
  struct KnownResult {
    CoefId coef;                          // the new coefficient
    std::int32_t shift;                   // the change of the ln2 power
    std::vector<std::uint32_t> readings;  // constant_readings it applied
  };
  std::vector<KnownResult> known_results_;
  bool overall_ = false;  // the deadline is limits.deadline
  std::size_t peak_terms_ = 0;
  std::size_t deadline_work_ = 0;
};

}  // namespace tileverify::detail
