// Arithmetic on exp-polynomial normal forms.
#include "normal_form.hpp"

#include "known_constants.hpp"
#include "../util/hash.hpp"

#include <algorithm>
#include <cstring>

namespace tileverify::detail {

namespace {

constexpr std::uint32_t kEmpty = UINT32_MAX;

inline std::size_t mix(std::size_t h, std::size_t v) { return std::size_t(combine64(h, v)); }
inline std::size_t hash_item(const MonoEntry& e) { return mix(e.atom * 0x100000001B3ull, std::uint32_t(e.power)); }
inline std::size_t hash_item(const PolyEntry& e) { return mix(e.mono * 0x100000001B3ull, e.coef); }
inline std::size_t hash_item(std::uint32_t x) { return x * 0x9E3779B97F4A7C15ull; }

inline std::uint64_t pair_key(std::uint32_t a, std::uint32_t b) { return std::uint64_t(a) << 32 | b; }

}  // namespace

// ---------------------------------------------------------------- tables

CoefTable::CoefTable() : table_(256, kEmpty) {
  intern(Rational(0));
  intern(Rational(1));
}

CoefId CoefTable::intern(const Rational& v) {
  const std::uint64_t h = finalize64(v.hash());
  std::size_t mask = table_.size() - 1;
  std::size_t slot = h & mask;
  for (; table_[slot] != kEmpty; slot = (slot + 1) & mask) {
    const CoefId id = table_[slot];
    if (hashes_[id] == h && values_[id] == v) return id;
  }
  const CoefId id = CoefId(values_.size());
  values_.push_back(v);
  hashes_.push_back(h);
  table_[slot] = id;
  if (values_.size() * 2 > table_.size()) {
    std::vector<CoefId> bigger(table_.size() * 2, kEmpty);
    mask = bigger.size() - 1;
    for (CoefId i = 0; i < values_.size(); ++i) {
      std::size_t s = hashes_[i] & mask;
      while (bigger[s] != kEmpty) s = (s + 1) & mask;
      bigger[s] = i;
    }
    table_.swap(bigger);
  }
  return id;
}

template <class T>
SeqInterner<T>::SeqInterner() : offset_{0}, table_(1024, kEmpty) {
  intern(nullptr, 0);  // id 0: the empty sequence
}

template <class T>
std::uint32_t SeqInterner<T>::intern(const T* p, std::size_t n) {
  std::size_t h = 0xcbf29ce484222325ull ^ n;
  for (std::size_t i = 0; i < n; ++i) h = mix(h, hash_item(p[i]));
  h = finalize64(h);  // spread the bits before probing
  std::size_t mask = table_.size() - 1, slot = h & mask;
  while (table_[slot] != kEmpty) {
    std::uint32_t id = table_[slot];
    if (hash_[id] == h && size(id) == n && std::equal(p, p + n, data(id))) return id;
    slot = (slot + 1) & mask;
  }
  std::uint32_t id = std::uint32_t(count());
  store_.insert(store_.end(), p, p + n);
  offset_.push_back(store_.size());
  hash_.push_back(h);
  table_[slot] = id;
  if (count() * 2 > table_.size()) {
    std::vector<std::uint32_t> bigger(table_.size() * 2, kEmpty);
    std::size_t m = bigger.size() - 1;
    for (std::uint32_t i = 0; i < count(); ++i) {
      std::size_t s = hash_[i] & m;
      while (bigger[s] != kEmpty) s = (s + 1) & m;
      bigger[s] = i;
    }
    table_.swap(bigger);
  }
  return id;
}

template class SeqInterner<MonoEntry>;
template class SeqInterner<PolyEntry>;
template class SeqInterner<std::uint32_t>;

// ---------------------------------------------------------------- setup

Algebra::Algebra(const ExprContext& ctx, const DecideLimits& limits) : ctx_(ctx), limits_(limits) {
  set_deadline(std::chrono::steady_clock::now());
  for (const KnownConstant& k : known_constants()) {
    if (k.meaning == "1/ln2") log2e_values_.push_back({k.value, Rational(1), kNoReading});
    if (k.meaning == "ln2") ln2_values_.push_back({k.value, Rational(1), kNoReading});
  }
  // After the table, as read_known_constant tries them (the numeric check
  // of a counterexample reads constants the same way).
  for (std::size_t i = 0; i < limits.constant_readings.size(); ++i) {
    const ConstantReading& k = limits.constant_readings[i];
    if (k.ln2_power < 0) log2e_values_.push_back({k.value, k.factor, std::uint32_t(i)});
    if (k.ln2_power > 0) ln2_values_.push_back({k.value, k.factor, std::uint32_t(i)});
  }
  reading_used_.assign(limits.constant_readings.size(), false);
}

std::vector<std::size_t> Algebra::readings_used() const {
  std::vector<std::size_t> r;
  for (std::size_t i = 0; i < reading_used_.size(); ++i)
    if (reading_used_[i]) r.push_back(i);
  return r;
}

void Algebra::set_deadline(std::chrono::steady_clock::time_point start) {
  deadline = start + std::chrono::microseconds(std::int64_t(limits_.timeout_seconds * 1e6));
  overall_ = limits_.deadline && *limits_.deadline < deadline;
  if (overall_) deadline = *limits_.deadline;
}

std::string Algebra::time_limit_reason() const {
  return overall_ ? std::string("the time budget of the whole check ran out")
                  : "time limit of " + std::to_string(limits_.timeout_seconds) + " s reached";
}

void Algebra::check_deadline(std::size_t work) {
  deadline_work_ += work;
  if (deadline_work_ < 256) return;
  deadline_work_ = 0;
  if (std::chrono::steady_clock::now() > deadline) throw LimitHit{time_limit_reason()};
}

void Algebra::note_terms(std::size_t n) {
  if (n > peak_terms_) peak_terms_ = n;
  if (n > limits_.max_terms)
    throw LimitHit{"term limit reached: a normal form needs " + std::to_string(n) + " terms (max_terms = " +
                   std::to_string(limits_.max_terms) + ")"};
}

bool Algebra::is_constant_atom(std::uint32_t atom) const {
  return atom < kSyntheticAtom && ctx_.op(Expr{atom}) == Op::Named;
}

Term Algebra::atom_term(std::uint32_t atom) {
  MonoEntry e{atom, 1};
  Term t;
  t.mono = monos_.intern(&e, 1);
  if (ln2_atom_ == UINT32_MAX && atom < kSyntheticAtom && ctx_.op(Expr{atom}) == Op::Named &&
      ctx_.name(Expr{atom}) == "ln2") {
    ln2_atom_ = atom;
    ln2_mono_ = t.mono;
  }
  return t;
}

Term Algebra::constant_term(const Rational& v) {
  Term t;
  t.coef = v;
  return t;
}

// ---------------------------------------------------------------- monomials and polynomials

MonoId Algebra::mono_mul(MonoId a, MonoId b) {
  if (a == 0) return b;
  if (b == 0) return a;
  if (a > b) std::swap(a, b);
  std::uint64_t key = pair_key(a, b);
  if (const std::uint32_t* hit = mono_mul_memo_.find(key)) return *hit;
  const MonoEntry *pa = monos_.data(a), *pb = monos_.data(b);
  std::size_t na = monos_.size(a), nb = monos_.size(b), i = 0, j = 0;
  std::vector<MonoEntry>& out = mono_scratch_;  // reused: most products are new monomials
  out.clear();
  while (i < na || j < nb) {
    if (j == nb || (i < na && pa[i].atom < pb[j].atom)) {
      out.push_back(pa[i++]);
    } else if (i == na || pb[j].atom < pa[i].atom) {
      out.push_back(pb[j++]);
    } else {
      std::int64_t p = std::int64_t(pa[i].power) + pb[j].power;
      if (p > 1000000 || p < -1000000) throw LimitHit{"monomial degree above 10^6"};
      if (p != 0) out.push_back(MonoEntry{pa[i].atom, std::int32_t(p)});
      ++i;
      ++j;
    }
  }
  MonoId r = monos_.intern(out.data(), out.size());
  mono_mul_memo_.insert(key, r);
  return r;
}

// Remembered both ways, as poly_neg is: every division of terms (the rebasing
// of each addend of a sum onto the sum's scale) inverts a monomial.
MonoId Algebra::mono_inv(MonoId a) {
  if (a == 0) return 0;
  if (const std::uint32_t* hit = mono_inv_memo_.find(a)) return *hit;
  std::vector<MonoEntry>& out = mono_scratch_;
  out.assign(monos_.data(a), monos_.data(a) + monos_.size(a));
  for (auto& e : out) e.power = -e.power;
  const MonoId r = monos_.intern(out.data(), out.size());
  mono_inv_memo_.insert(a, r);
  mono_inv_memo_.insert(r, a);
  return r;
}

PolyId Algebra::poly_add(PolyId a, PolyId b) {
  if (a == 0) return b;
  if (b == 0) return a;
  if (a > b) std::swap(a, b);
  std::uint64_t key = pair_key(a, b);
  if (const std::uint32_t* hit = poly_add_memo_.find(key)) return *hit;
  const PolyEntry *pa = polys_.data(a), *pb = polys_.data(b);
  std::size_t na = polys_.size(a), nb = polys_.size(b), i = 0, j = 0;
  // Before anything is interned: a multiplication of large sums spends its
  // time here, thousands of entries a call.
  check_deadline((na + nb) / 16);
  std::vector<PolyEntry> out;
  out.reserve(na + nb);
  while (i < na || j < nb) {
    if (j == nb || (i < na && pa[i].mono < pb[j].mono)) {
      out.push_back(pa[i++]);
    } else if (i == na || pb[j].mono < pa[i].mono) {
      out.push_back(pb[j++]);
    } else {
      Rational s = coefs_.get(pa[i].coef) + coefs_.get(pb[j].coef);
      if (!s.is_zero()) out.push_back(PolyEntry{pa[i].mono, coefs_.intern(s)});
      ++i;
      ++j;
    }
  }
  PolyId r = polys_.intern(out.data(), out.size());
  poly_add_memo_.insert(key, r);
  return r;
}

PolyId Algebra::poly_neg(PolyId a) {
  if (a == 0) return 0;
  if (const std::uint32_t* hit = poly_neg_memo_.find(a)) return *hit;
  std::vector<PolyEntry> out(polys_.data(a), polys_.data(a) + polys_.size(a));
  for (auto& e : out) e.coef = coefs_.intern(-coefs_.get(e.coef));
  PolyId r = polys_.intern(out.data(), out.size());
  poly_neg_memo_.insert(a, r);
  poly_neg_memo_.insert(r, a);
  return r;
}

// Lexicographic order of exponent vectors, coordinates in atom-id order. Lex
// order on Z^n is invariant under translation, so the leading term of t·S is
// t times the leading term of S.
int Algebra::mono_order(MonoId a, MonoId b) const {
  if (a == b) return 0;
  const MonoEntry *pa = monos_.data(a), *pb = monos_.data(b);
  std::size_t na = monos_.size(a), nb = monos_.size(b), i = 0, j = 0;
  while (i < na || j < nb) {
    std::uint32_t atom;
    std::int64_t x = 0, y = 0;
    if (j == nb || (i < na && pa[i].atom < pb[j].atom)) {
      atom = pa[i].atom;
      x = pa[i++].power;
    } else if (i == na || pb[j].atom < pa[i].atom) {
      atom = pb[j].atom;
      y = pb[j++].power;
    } else {
      atom = pa[i].atom;
      x = pa[i++].power;
      y = pb[j++].power;
    }
    (void)atom;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

int Algebra::poly_order(PolyId a, PolyId b) const {
  if (a == b) return 0;
  const PolyEntry *pa = polys_.data(a), *pb = polys_.data(b);
  std::size_t na = polys_.size(a), nb = polys_.size(b), i = 0, j = 0;
  static const Rational zero(0);
  while (i < na || j < nb) {
    const Rational* x = &zero;
    const Rational* y = &zero;
    if (j == nb || (i < na && pa[i].mono < pb[j].mono)) {
      x = &coefs_.get(pa[i++].coef);
    } else if (i == na || pb[j].mono < pa[i].mono) {
      y = &coefs_.get(pb[j++].coef);
    } else {
      x = &coefs_.get(pa[i++].coef);
      y = &coefs_.get(pb[j++].coef);
    }
    int c = Rational::compare(*x, *y);
    if (c != 0) return c;
  }
  return 0;
}

int Algebra::order(const Term& a, const Term& b) const {
  int c = mono_order(a.mono, b.mono);
  if (c) return c;
  c = poly_order(a.exp, b.exp);
  if (c) return c;
  return poly_order(a.cexp, b.cexp);
}

// e^{q·ln2} with q = n + f, n integer, 0 <= f < 1: move 2^n into the coefficient,
// so that e^{3·ln2} is the rational 8 and sqrt(2)·sqrt(2) = 2.
// The split of an exponent is remembered per exponent id, and 2^n per n: an
// expf in nvcc's form carries e^{-126·ln2} and e^{126·ln2} in every term,
// and 2^-126 is a GMP rational (its floor, subtraction and power cost more
// than the rest of the term product).
void Algebra::canon_cexp(Term& t) {
  if (t.cexp == 0 || ln2_mono_ == UINT32_MAX) return;
  const CexpSplit* split;
  if (const std::uint32_t* hit = cexp_memo_.find(t.cexp)) {
    split = &cexp_splits_[*hit];
  } else {
    CexpSplit r{0, t.cexp};
    const PolyEntry* p = polys_.data(t.cexp);
    std::size_t n = polys_.size(t.cexp);
    for (std::size_t i = 0; i < n; ++i) {
      if (p[i].mono != ln2_mono_) continue;
      const Rational& q = coefs_.get(p[i].coef);
      Rational whole = q.floor();
      if (whole.is_zero()) break;
      if (!whole.fits_int64() || whole.to_int64() > 100000 || whole.to_int64() < -100000)
        throw LimitHit{"constant factor 2^" + whole.str() + " is too large"};
      r.whole = std::int32_t(whole.to_int64());
      std::vector<PolyEntry> out(p, p + n);
      Rational rest = q - whole;
      if (rest.is_zero())
        out.erase(out.begin() + std::ptrdiff_t(i));
      else
        out[i].coef = coefs_.intern(rest);
      r.rest = polys_.intern(out.data(), out.size());
      break;
    }
    cexp_memo_.insert(t.cexp, std::uint32_t(cexp_splits_.size()));
    cexp_splits_.push_back(r);
    split = &cexp_splits_.back();
  }
  if (split->whole == 0) return;
  auto it = pow2_.find(split->whole);
  if (it == pow2_.end()) it = pow2_.emplace(split->whole, Rational::pow2(split->whole)).first;
  t.coef = t.coef.is_one() ? it->second : t.coef * it->second;
  t.cexp = split->rest;
}

// ---------------------------------------------------------------- terms

// Products and quotients of two coefficients outside 64 bits (GMP rationals)
// are remembered by their interned ids: nvcc's expf multiplies 2^-126 by
// 2^126 in every exponential, and a GMP product allocates and reduces.
Rational Algebra::coef_mul(const Rational& a, const Rational& b, bool divide) {
  if (a.is_small() || b.is_small()) return divide ? a / b : a * b;
  const std::uint64_t key = pair_key(coefs_.intern(a), coefs_.intern(b));
  FlatMap64& memo = divide ? big_div_memo_ : big_mul_memo_;
  if (const std::uint32_t* hit = memo.find(key)) return coefs_.get(*hit);
  Rational r = divide ? a / b : a * b;
  memo.insert(key, coefs_.intern(r));
  return r;
}

Term Algebra::mul(const Term& a, const Term& b) {
  Term r;
  r.coef = coef_mul(a.coef, b.coef, false);
  r.mono = mono_mul(a.mono, b.mono);
  r.exp = poly_add(a.exp, b.exp);
  r.cexp = poly_add(a.cexp, b.cexp);
  if (r.cexp) canon_cexp(r);
  return r;
}

Term Algebra::div(const Term& a, const Term& b) {
  Term r;
  r.coef = coef_mul(a.coef, b.coef, true);
  r.mono = mono_mul(a.mono, mono_inv(b.mono));
  r.exp = poly_add(a.exp, poly_neg(b.exp));
  r.cexp = poly_add(a.cexp, poly_neg(b.cexp));
  if (r.cexp) canon_cexp(r);
  return r;
}

// ---------------------------------------------------------------- sums

void Algebra::sort_combine(std::vector<Term>& v) {
  std::sort(v.begin(), v.end(), key_less);
  std::size_t w = 0;
  for (std::size_t r = 0; r < v.size();) {
    Term acc = std::move(v[r]);
    std::size_t s = r + 1;
    while (s < v.size() && same_key(v[s], acc)) acc.coef += v[s++].coef;
    if (!acc.coef.is_zero()) v[w++] = std::move(acc);
    r = s;
  }
  v.resize(w);
}

void Algebra::merge_into(std::vector<Term>& big, std::vector<Term>& small) {
  if (small.empty()) return;
  if (small.size() * 16 < big.size()) {
    for (Term& t : small) {
      auto it = std::lower_bound(big.begin(), big.end(), t, key_less);
      if (it != big.end() && same_key(*it, t)) {
        it->coef += t.coef;
        if (it->coef.is_zero()) big.erase(it);
      } else {
        big.insert(it, std::move(t));
      }
    }
    return;
  }
  std::vector<Term> out;
  out.reserve(big.size() + small.size());
  std::size_t i = 0, j = 0;
  while (i < big.size() || j < small.size()) {
    if (j == small.size() || (i < big.size() && key_less(big[i], small[j]))) {
      out.push_back(std::move(big[i++]));
    } else if (i == big.size() || key_less(small[j], big[i])) {
      out.push_back(std::move(small[j++]));
    } else {
      Term t = std::move(big[i++]);
      t.coef += small[j++].coef;
      if (!t.coef.is_zero()) out.push_back(std::move(t));
    }
  }
  big.swap(out);
}

void Algebra::absorb(Sum& s) {
  if (s.terms.empty()) {
    s.scale = Term{};
    return;
  }
  if (s.terms.size() == 1) {
    const Term& t = s.terms[0];
    if (!(t.unit_key() && t.coef.is_one())) {
      s.scale = mul(s.scale, t);
      s.terms[0] = Term{};
    }
  }
}

Sum Algebra::sum_of(const Term& t) {
  Sum s;
  if (t.coef.is_zero()) return s;
  s.scale = t;
  s.terms.push_back(Term{});
  return s;
}

Sum Algebra::neg(Sum a) {
  a.scale.coef = -a.scale.coef;
  return a;
}

Sum Algebra::add(Sum a, Sum b) {
  if (a.zero()) return b;
  if (b.zero()) return a;
  if (a.terms.size() < b.terms.size()) std::swap(a, b);
  check_deadline();
  // b = ratio · a.scale · Σ b.terms: rebase the smaller sum onto a's scale.
  Term ratio = div(b.scale, a.scale);
  if (ratio.unit_key()) {
    if (!ratio.coef.is_one())
      for (Term& t : b.terms) t.coef *= ratio.coef;
  } else {
    for (Term& t : b.terms) t = mul(ratio, t);
    std::sort(b.terms.begin(), b.terms.end(), key_less);  // a bijection on keys: no merging needed
  }
  merge_into(a.terms, b.terms);
  note_terms(a.terms.size());
  absorb(a);
  return a;
}

// acc with the terms of rest (rebased onto its scale) merged in.
Sum Algebra::finish_sum(Sum acc, std::vector<Term>& rest) {
  note_terms(acc.terms.size() + rest.size());
  sort_combine(rest);
  merge_into(acc.terms, rest);
  absorb(acc);
  return acc;
}

Sum Algebra::add_many(std::vector<Sum>& parts) {
  std::size_t base = SIZE_MAX;
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (!parts[i].zero() && (base == SIZE_MAX || parts[i].terms.size() > parts[base].terms.size())) base = i;
  if (base == SIZE_MAX) return Sum{};
  Sum acc = std::move(parts[base]);
  std::vector<Term> rest;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i == base || parts[i].zero()) continue;
    check_deadline();
    Term ratio = div(parts[i].scale, acc.scale);
    if (ratio.unit_key()) {
      for (Term& t : parts[i].terms) {
        t.coef *= ratio.coef;
        rest.push_back(std::move(t));
      }
    } else {
      for (Term& t : parts[i].terms) rest.push_back(mul(ratio, t));
    }
  }
  return finish_sum(std::move(acc), rest);
}

// The sum add_many makes of one-term sums (nonzero terms): the first is the
// scale, each other one is rebased onto it (div(t, scale) times the unit
// term is that quotient itself), then sorted and combined.
Sum Algebra::add_terms(const std::vector<const Term*>& ts) {
  if (ts.empty()) return Sum{};
  Sum acc = sum_of(*ts[0]);
  std::vector<Term> rest;
  rest.reserve(ts.size() - 1);
  for (std::size_t i = 1; i < ts.size(); ++i) {
    check_deadline();
    Term ratio = div(*ts[i], acc.scale);
    if (ratio.unit_key()) {
      Term u;
      u.coef = std::move(ratio.coef);
      rest.push_back(std::move(u));
    } else {
      rest.push_back(std::move(ratio));
    }
  }
  return finish_sum(std::move(acc), rest);
}

Sum Algebra::mul(Sum a, const Term& t) {
  if (a.zero() || t.coef.is_zero()) return Sum{};
  a.scale = mul(a.scale, t);
  return a;
}

std::vector<Term> Algebra::flat_terms(const Sum& s) {
  std::vector<Term> out;
  out.reserve(s.terms.size());
  for (const Term& t : s.terms) out.push_back(mul(s.scale, t));
  std::sort(out.begin(), out.end(), key_less);  // a bijection on keys: nothing to combine
  return out;
}

Sum Algebra::sum_of_terms(std::vector<Term> terms) {
  if (terms.empty()) return Sum{};
  sort_combine(terms);
  if (terms.empty()) return Sum{};
  Sum acc = sum_of(terms[0]);
  std::vector<Term> rest;
  rest.reserve(terms.size() - 1);
  for (std::size_t i = 1; i < terms.size(); ++i) rest.push_back(div(terms[i], acc.scale));
  return finish_sum(std::move(acc), rest);
}

Sum Algebra::mul(Sum a, Sum b) {
  if (a.zero() || b.zero()) return Sum{};
  if (a.single()) return mul(std::move(b), a.scale);
  if (b.single()) return mul(std::move(a), b.scale);
  note_terms(a.terms.size() * b.terms.size());
  std::vector<Term> out;
  out.reserve(a.terms.size() * b.terms.size());
  for (const Term& x : a.terms) {
    check_deadline();
    for (const Term& y : b.terms) out.push_back(mul(x, y));
  }
  sort_combine(out);
  Sum s;
  s.scale = mul(a.scale, b.scale);
  s.terms = std::move(out);
  absorb(s);
  return s;
}

std::shared_ptr<const Body> Algebra::body(const Sum& s) {
  auto b = std::make_shared<Body>();
  std::size_t lead = 0;
  for (std::size_t i = 1; i < s.terms.size(); ++i)
    if (order(s.terms[i], s.terms[lead]) > 0) lead = i;
  const Term& l = s.terms[lead];
  b->lead = mul(s.scale, l);
  b->terms.reserve(s.terms.size());
  for (const Term& t : s.terms) b->terms.push_back(div(t, l));
  std::sort(b->terms.begin(), b->terms.end(), key_less);
  std::size_t h = b->terms.size();
  for (const Term& t : b->terms) {
    h = mix(h, t.coef.hash());
    h = mix(h, t.mono);
    h = mix(h, t.exp);
    h = mix(h, t.cexp);
  }
  b->hash = h;
  return b;
}

bool Algebra::same_body(const Body& a, const Body& b) {
  if (a.hash != b.hash || a.terms.size() != b.terms.size()) return false;
  for (std::size_t i = 0; i < a.terms.size(); ++i)
    if (!same_key(a.terms[i], b.terms[i]) || a.terms[i].coef != b.terms[i].coef) return false;
  return true;
}

const Body& Algebra::num_body(const NF& a) {
  if (!a.num_body) a.num_body = body(a.num);
  return *a.num_body;
}

const Body& Algebra::den_body(const Den& d) {
  if (!d.body) d.body = body(d.sum);
  return *d.body;
}

bool Algebra::same_den(const std::shared_ptr<const Den>& a, const std::shared_ptr<const Den>& b) {
  if (a == b) return true;
  if (a->sum.terms.size() != b->sum.terms.size()) return false;
  auto key = a.get() < b.get() ? std::make_pair(a.get(), b.get()) : std::make_pair(b.get(), a.get());
  auto it = same_den_memo_.find(key);
  if (it != same_den_memo_.end()) return it->second;
  bool same = same_body(den_body(*a), den_body(*b));
  compared_dens_.push_back(a);
  compared_dens_.push_back(b);
  same_den_memo_.emplace(key, same);
  return same;
}

// ---------------------------------------------------------------- normal forms

NF Algebra::nf_of(const Term& t) {
  NF r;
  r.num = sum_of(t);
  return r;
}

NF Algebra::neg(NF a) {
  a.num = neg(std::move(a.num));
  a.num_body.reset();
  return a;
}

void Algebra::set_den(NF& r, Sum d) {
  if (d.zero()) throw LimitHit{"division by an expression that is identically zero"};
  if (d.single()) {
    r.num = mul(std::move(r.num), div(Term{}, d.scale));
    r.num_body.reset();
    r.den.reset();
    return;
  }
  auto den = std::make_shared<Den>();
  den->sum = std::move(d);
  r.den = std::move(den);
}

// Cancels a numerator against a denominator that equals it up to a single term.
void Algebra::simplify(NF& a) {
  if (!a.den) return;
  if (a.num.zero()) {
    a.den.reset();
    return;
  }
  if (a.num.terms.size() != a.den->sum.terms.size()) return;
  const Body& bn = num_body(a);
  const Body& bd = den_body(*a.den);
  if (!same_body(bn, bd)) return;
  a.num = sum_of(div(bn.lead, bd.lead));
  a.num_body.reset();
  a.den.reset();
}

NF Algebra::add(NF a, NF b) {
  if (a.num.zero()) return b;
  if (b.num.zero()) return a;
  NF r;
  if (!a.den && !b.den) {
    r.num = add(std::move(a.num), std::move(b.num));
    return r;
  }
  if (a.den && b.den) {
    if (same_den(a.den, b.den)) {
      // D_a = (lead_a / lead_b) * D_b, so n_b / D_b = n_b * (lead_a / lead_b) / D_a.
      Term ratio = div(den_body(*a.den).lead, den_body(*b.den).lead);
      r.num = add(std::move(a.num), mul(std::move(b.num), ratio));
      r.den = a.den;
      simplify(r);
      return r;
    }
    r.num = add(mul(std::move(a.num), b.den->sum), mul(std::move(b.num), a.den->sum));
    set_den(r, mul(a.den->sum, b.den->sum));
    simplify(r);
    return r;
  }
  if (b.den) std::swap(a, b);  // now only a has a denominator
  r.num = add(std::move(a.num), mul(std::move(b.num), a.den->sum));
  r.den = a.den;
  simplify(r);
  return r;
}

NF Algebra::add_many(std::vector<NF>& parts) {
  bool plain = true;
  for (const NF& p : parts) plain = plain && !p.den;
  if (plain) {
    std::vector<Sum> sums;
    sums.reserve(parts.size());
    for (NF& p : parts) sums.push_back(std::move(p.num));
    NF r;
    r.num = add_many(sums);
    return r;
  }
  NF acc = std::move(parts[0]);
  for (std::size_t i = 1; i < parts.size(); ++i) acc = add(std::move(acc), std::move(parts[i]));
  return acc;
}

bool Algebra::cancel(NF& d, NF& n) {
  if (!d.den || n.num.single() || d.den->sum.terms.size() != n.num.terms.size()) return false;
  const Body& bd = den_body(*d.den);
  const Body& bn = num_body(n);
  if (!same_body(bd, bn)) return false;
  n.num = sum_of(div(bn.lead, bd.lead));
  n.num_body.reset();
  d.den.reset();
  return true;
}

NF Algebra::mul(NF a, NF b) {
  if (a.num.zero() || b.num.zero()) return NF{};
  // Cancel a denominator against the other side's numerator when they agree
  // up to a single term: (e^x / sum_j e^{x_j}) * (sum_j e^{x_j}) needs no expansion.
  cancel(a, b);
  cancel(b, a);
  NF r;
  r.num = mul(std::move(a.num), std::move(b.num));
  if (a.den && b.den)
    set_den(r, mul(a.den->sum, b.den->sum));
  else if (a.den)
    r.den = a.den;
  else if (b.den)
    r.den = b.den;
  simplify(r);
  return r;
}

NF Algebra::inverse(NF a) {
  if (a.num.zero()) throw LimitHit{"division by an expression that is identically zero"};
  NF r;
  if (a.num.single()) {
    Term inv = div(Term{}, a.num.scale);
    r.num = a.den ? mul(a.den->sum, inv) : sum_of(inv);
    return r;
  }
  r.num = a.den ? a.den->sum : sum_of(Term{});
  r.num_body = a.den ? a.den->body : nullptr;
  auto den = std::make_shared<Den>();
  den->sum = std::move(a.num);
  den->body = a.num_body;
  r.den = std::move(den);
  return r;
}

NF Algebra::pow(NF a, int k) {
  if (k == 0) return nf_of(Term{});
  if (k > limits_.max_power || k < -limits_.max_power)
    throw LimitHit{"power " + std::to_string(k) + " is above max_power = " + std::to_string(limits_.max_power)};
  if (k < 0) return inverse(pow(std::move(a), -k));
  NF result = nf_of(Term{});
  NF base = std::move(a);
  unsigned e = unsigned(k);
  while (e) {
    if (e & 1) result = mul(std::move(result), base);
    e >>= 1;
    if (e) base = mul(base, base);
  }
  return result;
}

// Known constants: c * ln2^p with c = r * (a float of log2 e), r simple,
// reads as r * ln2^(p-1); with c = r * (a float of ln 2) and p < 0 as
// r * ln2^(p+1). Repeated while it applies (ex2 of ex2 gives ln2^2).
// DecideLimits::constant_readings extend the table: c = r * value reads as
// r * factor * ln2^(p-1) (or p+1).
// What happens depends on c and p only, never on the other atoms of m.
int Algebra::ln2_power(MonoId m) const {
  const MonoEntry* me = monos_.data(m);
  for (std::size_t i = 0; i < monos_.size(m); ++i)
    if (me[i].atom == ln2_atom_) return me[i].power;
  return 0;
}

MonoId Algebra::ln2_pow_mono(std::int32_t k) {
  if (k == 0) return 0;
  const MonoEntry e{ln2_atom_, k};
  return monos_.intern(&e, 1);
}

void Algebra::apply_known_constants(Rational* c, MonoId* m, bool plain) {
  if (ln2_mono_ == UINT32_MAX) return;
  const std::int32_t p = ln2_power(*m);
  const std::int32_t q = known_constants_power(c, p, plain);
  if (q != p) *m = mono_mul(*m, ln2_pow_mono(q - p));
}

// The rules on c * ln2^p: updates c, returns the power of ln2 left. With
// `plain`, also at p = 0, where log2(e) is tried before ln 2.
std::int32_t Algebra::known_constants_power(Rational* c, std::int32_t p, bool plain) {
  if (p == 0 && !plain) return 0;  // no rule applies without ln2
  // Remembered per (coefficient, power of ln2), which is all the rules read:
  // the divisions below run on rationals like log2(e) in float (24-bit
  // numerators) that overflow 64 bits into GMP, and every exponent term of
  // every expf asks, each with its own input atom in its monomial (a memo
  // keyed by the whole monomial missed on half the calls of a 128-element
  // softmax). p = 0 is only ever asked with `plain`.
  const std::uint64_t key = std::uint64_t(coefs_.intern(*c)) << 32 | std::uint32_t(p);
  if (const std::uint32_t* hit = known_memo_.find(key)) {
    const KnownResult& k = known_results_[*hit];
    if (k.shift != 0) *c = coefs_.get(k.coef);
    for (std::uint32_t i : k.readings) reading_used_[i] = true;
    return p + k.shift;
  }
  std::vector<std::uint32_t> readings;
  const std::int32_t q = apply_known_constants_uncached(c, p, plain, &readings);
  for (std::uint32_t i : readings) reading_used_[i] = true;
  known_memo_.insert(key, std::uint32_t(known_results_.size()));
  known_results_.push_back(KnownResult{coefs_.intern(*c), q - p, std::move(readings)});
  return q;
}

// Applies the rules to c * ln2^p; returns the power of ln2 left. From p = 0
// (`plain`) one rule applies, log2(e) first; from p != 0 they apply until
// p is 0.
std::int32_t Algebra::apply_known_constants_uncached(Rational* c, std::int32_t p, bool plain,
                                                     std::vector<std::uint32_t>* readings) {
  if (p == 0) {
    if (!plain) return 0;
    // Only the table's own floats: a rounded product read outside an
    // exponent would read expf's clamp constant 0f3BBB989D (log2(e)/252).
    for (const auto* table : {&log2e_values_, &ln2_values_})
      for (const KnownEntry& k : *table) {
        if (k.reading != kNoReading) continue;
        Rational r = *c / k.value;
        if (!simple_ratio(r)) continue;
        *c = k.factor.is_one() ? r : r * k.factor;
        if (k.reading != kNoReading) readings->push_back(k.reading);
        return table == &log2e_values_ ? -1 : 1;
      }
    return 0;
  }
  for (int guard = 0; guard < 64 && p != 0; ++guard) {
    bool applied = false;
    for (const KnownEntry& k : p >= 1 ? log2e_values_ : ln2_values_) {
      Rational r = *c / k.value;
      if (simple_ratio(r)) {
        *c = k.factor.is_one() ? r : r * k.factor;
        if (k.reading != kNoReading) readings->push_back(k.reading);
        p += p >= 1 ? -1 : 1;
        applied = true;
        break;
      }
    }
    if (!applied) break;
  }
  return p;
}

bool Algebra::exp_of(const NF& arg, Term* out) {
  if (arg.den) return false;
  const Sum& s = arg.num;
  if (s.zero()) {
    *out = Term{};
    return true;
  }
  if (s.scale.exp || s.scale.cexp) return false;
  std::vector<std::pair<MonoId, Rational>> entries;
  entries.reserve(s.terms.size());
  // A scale that is a power of ln2 (ex2's, as in 2^(x·log2e) = e^(x·log2e·ln2))
  // goes into each term's power of ln2 directly: multiplying it into every
  // monomial, only for the known-constant rule to divide it out again, made
  // two monomials per term of every exponent (an attention row: 64 K).
  const bool ln2_scale =
      ln2_mono_ != UINT32_MAX && (s.scale.mono == 0 || (monos_.size(s.scale.mono) == 1 && ln2_power(s.scale.mono) != 0));
  const std::int32_t scale_power = ln2_scale ? ln2_power(s.scale.mono) : 0;
  for (const Term& t : s.terms) {
    if (t.exp || t.cexp) return false;
    Rational c = s.scale.coef * t.coef;
    MonoId m;
    if (ln2_scale) {
      // What mono_mul then apply_known_constants give: t.mono · ln2^(q - pt).
      const std::int32_t pt = ln2_power(t.mono);
      const std::int32_t q = known_constants_power(&c, scale_power + pt);
      m = q == pt ? t.mono : mono_mul(t.mono, ln2_pow_mono(q - pt));
    } else {
      m = mono_mul(s.scale.mono, t.mono);
      apply_known_constants(&c, &m);
    }
    entries.emplace_back(m, std::move(c));
  }
  std::sort(entries.begin(), entries.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<PolyEntry> var, cst;
  for (std::size_t i = 0; i < entries.size();) {
    Rational c = entries[i].second;
    std::size_t j = i + 1;
    while (j < entries.size() && entries[j].first == entries[i].first) c += entries[j++].second;
    if (!c.is_zero()) {
      MonoId m = entries[i].first;
      bool constant = true;
      const MonoEntry* me = monos_.data(m);
      for (std::size_t q = 0; q < monos_.size(m) && constant; ++q) constant = is_constant_atom(me[q].atom);
      (constant ? cst : var).push_back(PolyEntry{m, coefs_.intern(c)});
    }
    i = j;
  }
  Term r;
  r.exp = polys_.intern(var.data(), var.size());
  r.cexp = polys_.intern(cst.data(), cst.size());
  canon_cexp(r);
  *out = r;
  return true;
}

// The terms of s with the scale multiplied in, sorted, as (coef, mono, exp, cexp) ids.
// Built in scratch vectors (max/min operands ask for a key each), and a
// unit term is the scale itself: both are canonical already.
void Algebra::append_key(const Sum& s, bool exponent, std::vector<std::uint32_t>& out) {
  std::vector<Term>& terms = key_terms_;
  terms.clear();
  for (const Term& t : s.terms) {
    Term u = t.unit_key() && t.coef.is_one() ? s.scale : mul(s.scale, t);
    if (exponent) apply_known_constants(&u.coef, &u.mono);
    terms.push_back(std::move(u));
  }
  if (terms.size() > 1)
    sort_combine(terms);
  else if (terms.size() == 1 && terms[0].coef.is_zero())
    terms.clear();
  out.push_back(std::uint32_t(terms.size()));
  for (const Term& t : terms) {
    out.push_back(coefs_.intern(t.coef));
    out.push_back(t.mono);
    out.push_back(t.exp);
    out.push_back(t.cexp);
  }
}

std::uint32_t Algebra::nf_key(const NF& a, bool exponent) {
  std::vector<std::uint32_t>& seq = key_seq_;
  seq.clear();
  append_key(a.num, exponent, seq);
  if (a.den) append_key(a.den->sum, exponent, seq);
  return nf_keys_.intern(seq.data(), seq.size());
}


}  // namespace tileverify::detail
