// Compact forms of opaque functions' arguments (see normalizer.hpp): long
// linear forms are written c · B_S + r with B_S a let atom for the sum of
// the atoms in S, instead of being multiplied out.
//
// Why: a layer norm's rsqrt(Σ_i (x_i − mean)²/N + eps) with mean = Σ_j x_j/N
// expands to N(N+1)/2 monomials, through N products of (N+1)-term sums: at
// N = 300 that took minutes and gigabytes, at N = 4096 it is past any term
// limit. With mean = B/N, each square is x_i² − (2/N)·x_i·B + B²/N², and the
// whole argument 2N + 2 terms.
//
// Soundness: a let atom is a name for a polynomial (the sum of its
// support); every rewrite here replaces a polynomial by an equal one (a
// linear part by c · B_S + r, a multiple q · Σ_S x_j by q · B_S), so two
// arguments with equal keys are equal polynomials. Two equal polynomials may
// still get different keys (the functions are then two atoms, which can
// only cost a proof, never give a wrong one).
#include "normalizer.hpp"

#include <algorithm>

namespace tileverify::detail {

namespace {

// A linear part whose majority coefficient fewer atoms share stays written
// out: multiplying short sums costs less than the bookkeeping.
constexpr std::size_t kLetTerms = 16;

// The tag that starts a let atom's key (no Op has this value).
constexpr std::uint32_t kLetKey = 0xffffff01u;

}  // namespace

std::shared_ptr<const NF> Normalizer::run_in(Expr e, bool compact) {
  const bool outer = compact_;
  compact_ = compact;
  try {
    std::shared_ptr<const NF> r = run(e);
    compact_ = outer;
    return r;
  } catch (...) {
    compact_ = outer;
    throw;
  }
}

namespace {

// Degree at most one: a constant, or a constant times one atom (a let counts
// as one atom: it stands for a linear form).
bool affine_term(const Algebra& alg, const Term& t) {
  if (t.exp != 0 || t.cexp != 0) return false;
  std::size_t n = 0;
  const MonoEntry* me = alg.mono_entries(t.mono, &n);
  return n == 0 || (n == 1 && me[0].power == 1);
}

std::uint32_t the_atom(const Algebra& alg, const Term& t) {
  std::size_t n = 0;
  const MonoEntry* me = alg.mono_entries(t.mono, &n);
  return n == 1 ? me[0].atom : UINT32_MAX;
}

}  // namespace

std::uint32_t Normalizer::let_for(const std::vector<std::uint32_t>& support) {
  std::vector<std::uint32_t> key{kLetKey};
  key.insert(key.end(), support.begin(), support.end());
  const std::uint32_t atom = atom_for(std::move(key));
  if (!let_defs_.count(atom)) let_defs_.emplace(atom, LetDef{support, {}});
  return atom;
}

// The let's sum as terms, made when first asked for (a running sum makes
// many lets that are never folded).
const std::vector<Term>& Normalizer::let_terms(std::uint32_t let) {
  LetDef& d = let_defs_.at(let);
  if (d.terms.empty()) {
    d.terms.reserve(d.support.size());
    for (std::uint32_t a : d.support) d.terms.push_back(alg_.atom_term(a));
    std::sort(d.terms.begin(), d.terms.end(), key_less);
  }
  return d.terms;
}

// The canonical form of the affine part of the (sorted) terms: c · B_S + r,
// where S is the support of the linear part, c its most frequent coefficient
// (at least kLetTerms atoms have it; ties: the smallest) and r the rest;
// with no such c, the linear part written out. The other terms are kept.
std::vector<Term> Normalizer::canon_affine_terms(std::vector<Term> terms) {
  std::size_t lets = 0, atoms = 0;
  const Term* let_term = nullptr;
  for (const Term& t : terms) {
    if (!affine_term(alg_, t) || t.mono == 0) continue;
    ++atoms;
    if (is_let(the_atom(alg_, t))) {
      ++lets;
      let_term = &t;
    }
  }
  if (lets == 0 && atoms < kLetTerms) return terms;
  // Already canonical: one let c · B_S and fewer other atoms, all in S and
  // none cancelling c (so S is the support and c the majority).
  if (lets == 1) {
    const LetDef& def = let_defs_.at(the_atom(alg_, *let_term));
    const Rational& c = let_term->coef;
    bool canonical = 2 * (atoms - 1) < def.support.size() && def.support.size() - (atoms - 1) >= kLetTerms;
    for (const Term& t : terms) {
      if (!canonical) break;
      if (&t == let_term || !affine_term(alg_, t) || t.mono == 0) continue;
      const std::uint32_t a = the_atom(alg_, t);
      canonical = std::binary_search(def.support.begin(), def.support.end(), a) && t.coef != -c;
    }
    if (canonical) return terms;
  }
  // Write the linear part out as (atom, coefficient) pairs (cheaper than
  // terms: no monomial arithmetic), then find its majority coefficient.
  std::vector<std::pair<std::uint32_t, Rational>> linear;
  std::vector<Term> rest;
  for (Term& t : terms) {
    if (!affine_term(alg_, t) || t.mono == 0) {
      rest.push_back(std::move(t));
      continue;
    }
    const std::uint32_t a = the_atom(alg_, t);
    if (!is_let(a)) {
      linear.emplace_back(a, std::move(t.coef));
      continue;
    }
    alg_.check_deadline(1 + let_defs_.at(a).support.size() / 64);
    for (std::uint32_t x : let_defs_.at(a).support) linear.emplace_back(x, t.coef);
  }
  std::sort(linear.begin(), linear.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::size_t w = 0;
  for (std::size_t r = 0; r < linear.size();) {
    std::pair<std::uint32_t, Rational> acc = std::move(linear[r]);
    std::size_t q = r + 1;
    while (q < linear.size() && linear[q].first == acc.first) acc.second += linear[q++].second;
    if (!acc.second.is_zero()) linear[w++] = std::move(acc);
    r = q;
  }
  linear.resize(w);
  std::vector<const Rational*> coefs;
  coefs.reserve(linear.size());
  for (const auto& x : linear) coefs.push_back(&x.second);
  std::sort(coefs.begin(), coefs.end(), [](const Rational* x, const Rational* y) { return *x < *y; });
  const Rational* best = nullptr;
  std::size_t best_n = 0;
  for (std::size_t i = 0; i < coefs.size();) {
    std::size_t j = i;
    while (j < coefs.size() && *coefs[j] == *coefs[i]) ++j;
    if (j - i > best_n) {
      best_n = j - i;
      best = coefs[i];
    }
    i = j;
  }
  auto term_of = [&](std::uint32_t atom, Rational c) {
    Term t = alg_.atom_term(atom);
    t.coef = std::move(c);
    return t;
  };
  if (best_n < kLetTerms) {
    for (auto& x : linear) rest.push_back(term_of(x.first, std::move(x.second)));
    return alg_.flat_terms(alg_.sum_of_terms(std::move(rest)));
  }
  const Rational c = *best;
  std::vector<std::uint32_t> support;
  support.reserve(linear.size());
  for (const auto& x : linear) support.push_back(x.first);  // sorted
  const std::uint32_t let = let_for(support);
  for (auto& x : linear)
    if (x.second != c) rest.push_back(term_of(x.first, x.second - c));
  rest.push_back(term_of(let, c));
  return alg_.flat_terms(alg_.sum_of_terms(std::move(rest)));
}

void Normalizer::canon_affine(NF& f) {
  if (f.den || f.num.terms.size() < 2) return;
  // A term's degree is its scale's plus its own (powers add under
  // multiplication): without terms of degree 1 there is no linear part, and
  // the sum is left as it is without multiplying its scale in (the partial
  // sums of Σ(x_i − m)² are long and have none).
  auto degree = [&](MonoId m) {
    std::size_t n = 0;
    const MonoEntry* me = alg_.mono_entries(m, &n);
    std::int64_t d = 0;
    for (std::size_t i = 0; i < n; ++i) d += me[i].power;
    return d;
  };
  const std::int64_t base = degree(f.num.scale.mono);
  if (std::none_of(f.num.terms.begin(), f.num.terms.end(), [&](const Term& t) { return base + degree(t.mono) == 1; }))
    return;
  std::vector<Term> terms = alg_.flat_terms(f.num);
  const std::size_t n = terms.size();
  std::vector<Term> canon = canon_affine_terms(terms);
  if (canon.size() == n && std::equal(canon.begin(), canon.end(), terms.begin(), [](const Term& a, const Term& b) {
        return same_key(a, b) && a.coef == b.coef;
      }))
    return;
  f.num = alg_.sum_of_terms(std::move(canon));
  f.num_body.reset();
}

// Replaces, in the sorted terms, every q · def(let) (each of its terms
// present with exactly that coefficient) by q · let. Returns whether it did.
bool Normalizer::fold_let(std::vector<Term>& terms, std::uint32_t let) {
  const std::vector<Term>& def = let_terms(let);
  const Term* pivot = nullptr;
  for (const Term& d : def)
    if (d.mono != 0) {
      pivot = &d;
      break;
    }
  if (!pivot) return false;
  std::size_t pn = 0;
  const MonoEntry* pe = alg_.mono_entries(pivot->mono, &pn);
  std::vector<bool> removed(terms.size(), false);
  std::vector<Term> added;
  auto find = [&](const Term& t) -> std::size_t {
    auto it = std::lower_bound(terms.begin(), terms.end(), t, key_less);
    if (it == terms.end() || !same_key(*it, t)) return terms.size();
    return std::size_t(it - terms.begin());
  };
  std::vector<std::size_t> hits;
  for (std::size_t r = 0; r < terms.size(); ++r) {
    if (removed[r]) continue;
    // the pivot's monomial must divide the term's (no negative powers made)
    std::size_t tn = 0;
    const MonoEntry* te = alg_.mono_entries(terms[r].mono, &tn);
    bool divides = true;
    for (std::size_t i = 0; i < pn && divides; ++i) {
      divides = false;
      for (std::size_t j = 0; j < tn; ++j)
        if (te[j].atom == pe[i].atom) divides = te[j].power >= pe[i].power;
    }
    if (!divides) continue;
    const Term q = alg_.div(terms[r], *pivot);
    hits.clear();
    bool all = true;
    for (const Term& d : def) {
      alg_.check_deadline();
      const Term want = alg_.mul(q, d);
      const std::size_t at = find(want);
      if (at == terms.size() || removed[at] || terms[at].coef != want.coef) {
        all = false;
        break;
      }
      hits.push_back(at);
    }
    if (!all) continue;
    for (std::size_t at : hits) removed[at] = true;
    added.push_back(alg_.mul(q, alg_.atom_term(let)));
  }
  if (added.empty()) return false;
  std::vector<Term> kept;
  kept.reserve(terms.size() - added.size());
  for (std::size_t i = 0; i < terms.size(); ++i)
    if (!removed[i]) kept.push_back(std::move(terms[i]));
  for (Term& t : added) kept.push_back(std::move(t));
  terms = alg_.flat_terms(alg_.sum_of_terms(std::move(kept)));
  return true;
}

// The affine part in its canonical form, then multiples of each let's sum
// folded into it.
Sum Normalizer::canonical_sum(const Sum& s) {
  std::vector<Term> terms = canon_affine_terms(alg_.flat_terms(s));
  if (let_defs_.empty()) return alg_.sum_of_terms(std::move(terms));
  std::vector<std::uint32_t> lets;
  for (const Term& t : terms) {
    std::size_t n = 0;
    const MonoEntry* me = alg_.mono_entries(t.mono, &n);
    for (std::size_t i = 0; i < n; ++i)
      if (is_let(me[i].atom)) lets.push_back(me[i].atom);
  }
  std::sort(lets.begin(), lets.end());
  lets.erase(std::unique(lets.begin(), lets.end()), lets.end());
  for (std::uint32_t let : lets) fold_let(terms, let);
  return alg_.sum_of_terms(std::move(terms));
}

std::uint32_t Normalizer::func_arg_key(std::uint32_t arg) {
  if (!subst_)
    if (const std::uint32_t* k = func_key_cache_.find(arg)) return *k;
  const std::uint32_t key = func_key_of(*run_in(Expr{arg}, true));
  if (!subst_) func_key_cache_.insert(arg, key);
  return key;
}

// A compact form with its sums canonical (the folds back into the let
// atoms' sums applied), a single-term denominator moved into the numerator.
NF Normalizer::canonical_nf(const NF& f) {
  NF c;
  c.num = canonical_sum(f.num);
  if (f.den) {
    auto den = std::make_shared<Den>();
    den->sum = canonical_sum(f.den->sum);
    if (den->sum.single()) {
      c.num = alg_.mul(std::move(c.num), alg_.div(Term{}, den->sum.scale));
    } else {
      c.den = std::move(den);
    }
  }
  return c;
}

// The key of a compact form (canonical_nf's).
std::uint32_t Normalizer::func_key_of(const NF& f) { return alg_.nf_key(canonical_nf(f), false); }

// log(e^C · y) = C + log(y): both sides are defined exactly where y > 0 (e^C
// is positive), and equal there. Triton's attention stores m + log2(l) with
// l = Σ_j 2^(s_j − m), nvcc's reference m·log2(e) + log2(Σ_j e^(s_j − m')),
// with different maxima m, m': each is log2(Σ_j e^(s_j)) once the
// exponential factor common to l's terms comes out of the logarithm.
//
// Which factor: C is the exponent of the argument's leading term under the
// translation-invariant term order (Algebra::order), numerator over
// denominator. Two arguments that differ by a factor e^K order their terms
// alike, so their leads differ by e^K as well and both leave the same y:
// log(e^K · x) and K + log(x) get the same form. The lead's coefficient and
// monomial stay in y (their logarithm is no polynomial, and a monomial's
// sign is unknown).
Normalizer::LogArg Normalizer::log_arg(std::uint32_t arg, bool plus_one) {
  const std::uint64_t cache_key = std::uint64_t(arg) << 1 | std::uint64_t(plus_one);
  if (!subst_)
    if (auto it = log_arg_cache_.find(cache_key); it != log_arg_cache_.end()) return it->second;
  NF f;
  if (plus_one) {
    std::vector<NF> sum;
    sum.push_back(alg_.nf_of(alg_.constant_term(Rational(1))));
    sum.push_back(*run_in(Expr{arg}, true));
    f = alg_.add_many(sum);
  } else {
    f = *run_in(Expr{arg}, true);
  }
  NF c = canonical_nf(f);
  LogArg r{0, nullptr, false};
  if (!c.num.zero()) {
    Term lead = alg_.body(c.num)->lead;
    Term e;  // e^C: the lead's exponential part
    e.exp = lead.exp;
    e.cexp = lead.cexp;
    if (c.den) {
      const Term& dl = alg_.body(c.den->sum)->lead;
      Term d;
      d.exp = dl.exp;
      d.cexp = dl.cexp;
      e = alg_.div(e, d);
      e.coef = Rational(1);  // div may fold whole powers of two out of cexp
      e.mono = 0;
    }
    if (e.exp != 0 || e.cexp != 0) {
      c.num = alg_.mul(std::move(c.num), alg_.div(Term{}, e));
      std::vector<Term> shift;
      for (PolyId p : {e.exp, e.cexp}) {
        std::size_t n = 0;
        const PolyEntry* pe = alg_.poly_entries(p, &n);
        for (std::size_t i = 0; i < n; ++i) {
          Term t;
          t.coef = alg_.coef(pe[i].coef);
          t.mono = pe[i].mono;
          shift.push_back(std::move(t));
        }
      }
      NF s;
      s.num = alg_.sum_of_terms(std::move(shift));
      r.shift = std::make_shared<const NF>(std::move(s));
    }
  }
  r.key = alg_.nf_key(c, false);
  // log(e^C) = C exactly: no atom is left for log 1.
  r.one = !c.den && c.num.single() && c.num.scale.unit_key() && c.num.scale.coef.is_one();
  if (!subst_) log_arg_cache_.emplace(cache_key, r);
  return r;
}

bool Normalizer::compact_forms_agree(Expr a, Expr b) {
  if (let_defs_.empty() || subst_) return false;
  const std::shared_ptr<const NF> fa = run_in(a, true), fb = run_in(b, true);
  NF diff = alg_.add(*fa, alg_.neg(*fb));
  return alg_.is_zero(diff) || canonical_sum(diff.num).zero();
}

NF Normalizer::compute_compact(Expr e, const std::vector<std::uint32_t>& dep_ids) {
  const Op op = ctx_.op(e);
  if (op != Op::Add && op != Op::Mul && op != Op::Pow) return *run_in(e, false);
  // An operand's form is moved out when this is its only user (a running
  // sum's forms are not copied at every step), as in plain mode.
  std::vector<NF> parts;
  parts.reserve(dep_ids.size());
  for (std::uint32_t id : dep_ids) {
    std::shared_ptr<const NF>& p = *res().get_mut(id);
    if (persistent(id) || std::count(dep_ids.begin(), dep_ids.end(), id) != 1) {
      parts.push_back(*p);
      continue;
    }
    std::shared_ptr<const NF> mine = std::move(p);
    parts.push_back(mine.use_count() == 1 ? std::move(const_cast<NF&>(*mine)) : *mine);
  }
  NF r;
  if (op == Op::Pow) {
    const int k = ctx_.pow_exponent(e);
    if (k >= 2 || k <= -2) canon_affine(parts[0]);
    r = alg_.pow(std::move(parts[0]), k);
  } else if (op == Op::Add) {
    r = alg_.add_many(parts);
  } else {
    // Factors that the product multiplies out in their canonical form, so
    // that products made in different orders have one form.
    std::size_t sums = 0;
    for (const NF& f : parts) sums += !(f.num.single() && !f.den && f.num.scale.unit_key());
    if (sums >= 2)
      for (NF& f : parts) canon_affine(f);
    for (std::size_t i = 0; i < parts.size(); ++i) {
      if (!parts[i].den) continue;
      for (std::size_t j = 0; j < parts.size() && parts[i].den; ++j)
        if (j != i) alg_.cancel(parts[i], parts[j]);
    }
    r = std::move(parts[0]);
    for (std::size_t i = 1; i < parts.size(); ++i) r = alg_.mul(std::move(r), std::move(parts[i]));
  }
  // A form several nodes use (mean, in x_i − mean for every i) is made
  // canonical once, so that its users add to c · B, not to N terms.
  if (ctx_.parent_count(e) > 1) canon_affine(r);
  return r;
}

}  // namespace tileverify::detail
