// decide_equal: normal forms first, then a max/min/select case split with Z3,
// and counterexamples confirmed in high precision.
#include "tileverify/decide.hpp"

#include "renaming.hpp"

#include "normal_form.hpp"
#include "normalizer.hpp"
#include "numeric.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <z3++.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <random>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

namespace tileverify {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Proved: return "proved";
    case Verdict::Refuted: return "refuted";
    case Verdict::Unknown: return "unknown";
  }
  return "?";
}

namespace {

using detail::LimitHit;
using detail::Real;

// The most terms a case split's max/min comparisons may give Z3 (see
// case_split): Z3 internalizes about a million a second, and deleting them
// costs as much again, so this keeps the part no timeout bounds near a
// second.
constexpr double kMaxComparisonTerms = 1e6;

// ---------------------------------------------------------------- Z3 encoding

// Encodes normal forms as Z3 terms of linear real arithmetic with
// uninterpreted functions. Atoms become real variables (inputs by name;
// max/min/select atoms are tied to their chosen operand by the case
// constraints); a monomial other than a single atom becomes a variable of its
// own, n/d an uninterpreted div(n, d), exp an uninterpreted function with
// exp(t) > 0, ln2 a constant between 0.6931 and 0.6932. Everything else is
// forgotten: an over-approximation of the reals, so "unsat" is a proof; and
// the queries stay linear, where Z3 answers fast and reliably (its nonlinear
// procedures can ignore time limits).
class NfEncoder {
 public:
  NfEncoder(z3::context& z, detail::Algebra& alg, const ExprContext& ctx)
      : z_(z),
        alg_(alg),
        ctx_(ctx),
        side_(z),
        exp_(z.function("exp", z.real_sort(), z.real_sort())),
        div_(z.function("div", z.real_sort(), z.real_sort(), z.real_sort())) {}

  std::optional<z3::expr> nf(const detail::NF& n) {
    auto num = sum(n.num);
    if (!num || !n.den) return num;
    auto den = sum(n.den->sum);
    if (!den) return std::nullopt;
    return div_(*num, *den);
  }
  // The scale is multiplied into every term first: scales carry reciprocals
  // (x1 * (1 - 1.5/x1)) that are not in the sum and that Z3 would have to
  // reason about at x1 = 0.
  // A sum of more than kMaxTerms terms is not encoded: a linear query that
  // large is beyond what Z3 answers within any time limit here, and building
  // it (an attention pair's difference: millions of terms) took minutes and
  // gigabytes before the first query. The deadline is checked as terms are
  // encoded (Algebra::check_deadline, every 256 calls).
  static constexpr std::size_t kMaxTerms = 20000;
  std::optional<z3::expr> sum(const detail::Sum& s) {
    if (s.zero()) return z_.real_val(0);
    if (s.terms.size() > kMaxTerms) return std::nullopt;
    z3::expr_vector terms(z_);
    for (const detail::Term& t : s.terms) {
      alg_.check_deadline();
      auto e = term(alg_.mul(s.scale, t));
      if (!e) return std::nullopt;
      terms.push_back(*e);
    }
    return terms.size() == 1 ? terms[0] : z3::sum(terms);
  }
  z3::expr atom(std::uint32_t a) {
    auto it = atoms_.find(a);
    if (it != atoms_.end()) return it->second;
    std::string name;
    if (a < detail::Algebra::kSyntheticAtom && ctx_.op(Expr{a}) == Op::Symbol)
      name = ctx_.symbol_tensor(Expr{a}) + "[" + std::to_string(ctx_.symbol_index(Expr{a})) + "]";
    else if (a == alg_.ln2_atom())
      name = "ln2";
    else
      name = "atom" + std::to_string(a);
    z3::expr v = z_.real_const(name.c_str());
    if (a == alg_.ln2_atom()) side_.push_back(v > z_.real_val("6931/10000") && v < z_.real_val("6932/10000"));
    atoms_.emplace(a, v);
    return v;
  }
  const z3::expr_vector& side_conditions() const { return side_; }
  const std::unordered_map<std::uint32_t, z3::expr>& atoms() const { return atoms_; }

 private:
  std::optional<z3::expr> poly(detail::PolyId p) {
    std::size_t n = 0;
    const detail::PolyEntry* e = alg_.poly_entries(p, &n);
    z3::expr acc = z_.real_val(0);
    for (std::size_t i = 0; i < n; ++i) {
      alg_.check_deadline();
      auto m = mono(e[i].mono);
      if (!m) return std::nullopt;
      acc = acc + z_.real_val(alg_.coef(e[i].coef).str().c_str()) * *m;
    }
    return acc;
  }
  std::optional<z3::expr> mono(detail::MonoId m) {
    if (m == 0) return z_.real_val(1);
    std::size_t n = 0;
    const detail::MonoEntry* e = alg_.mono_entries(m, &n);
    if (n == 1 && e[0].power == 1) return atom(e[0].atom);
    auto it = monos_.find(m);
    if (it != monos_.end()) return it->second;
    z3::expr v = z_.real_const(("mono" + std::to_string(m)).c_str());
    monos_.emplace(m, v);
    return v;
  }
  std::optional<z3::expr> term(const detail::Term& t) {
    auto m = mono(t.mono);
    if (!m) return std::nullopt;
    z3::expr r = t.coef.is_one() ? *m : z_.real_val(t.coef.str().c_str()) * *m;
    if (t.exp || t.cexp) {
      auto h = poly(t.exp), c = poly(t.cexp);
      if (!h || !c) return std::nullopt;
      z3::expr x = exp_(*h + *c);
      // One side condition per distinct exponential: a case split encodes
      // the same forms at every leaf, and a condition per encoding grew the
      // list (and every leaf's assertions) without bound: 9 GB of Z3 terms
      // on an attention pair, which then took minutes to delete.
      if (exp_seen_.insert(x.id()).second) side_.push_back(x > 0);
      r = r * x;
    }
    return r;
  }

  z3::context& z_;
  detail::Algebra& alg_;
  const ExprContext& ctx_;
  z3::expr_vector side_;
  std::unordered_set<unsigned> exp_seen_;  // Z3 ids of the exp terms in side_
  z3::func_decl exp_, div_;
  std::unordered_map<std::uint32_t, z3::expr> atoms_;
  std::unordered_map<detail::MonoId, z3::expr> monos_;
};

}  // namespace

// ---------------------------------------------------------------- the decider

struct Decider::Impl {
  const ExprContext& ctx;
  DecideLimits limits;
  detail::Algebra alg;
  detail::Normalizer norm;

  Impl(const ExprContext& c, const DecideLimits& l) : ctx(c), limits(l), alg(c, l), norm(c, alg) {}

  Decision decide(Expr a, Expr b);

 private:
  bool normal_forms_agree(Expr a, Expr b) {
    auto fa = norm.run(a);
    auto fb = norm.run(b);
    detail::NF diff = alg.add(*fa, alg.neg(*fb));
    return alg.is_zero(diff);
  }
  std::optional<Counterexample> search_witness(Expr a, Expr b, unsigned attempts, std::uint64_t salt);
  std::optional<Counterexample> check_point(detail::NumericEvaluator& ev, const std::vector<Rational>& point);
  Decision case_split(Expr a, Expr b, Decision d);
};

std::optional<Counterexample> Decider::Impl::check_point(detail::NumericEvaluator& ev,
                                                         const std::vector<Rational>& point) {
  // Relative size a difference must have. Exact arithmetic would need none;
  // 1e-30 is far above the rounding of 100-digit evaluation. Where 2^x occurs
  // the decider reads nvcc's float log2(e) as 1/ln2, a relative change near
  // 1e-8 per unit of exponent, so there the difference must be 1e-4, and it
  // must also show when the constants are read that way (nested exponentials
  // amplify that reading without bound).
  static const Real strict("1e-30"), loose("1e-4");
  auto vals = ev.differing(point, false, ev.uses_ln2() ? loose : strict);
  if (!vals) return std::nullopt;
  if (ev.uses_ln2() && !ev.differing(point, true, loose)) return std::nullopt;
  Counterexample cx;
  for (std::size_t i = 0; i < ev.symbols().size(); ++i) cx.inputs.values.emplace_back(ev.symbols()[i], point[i]);
  cx.lhs_value = detail::real_to_string(vals->first);
  cx.rhs_value = detail::real_to_string(vals->second);
  cx.lhs = vals->first.convert_to<double>();
  cx.rhs = vals->second.convert_to<double>();
  return cx;
}

// Random points with small dyadic coordinates (exactly representable as
// floats, so a counterexample can be replayed on a GPU as it is).
std::optional<Counterexample> Decider::Impl::search_witness(Expr a, Expr b, unsigned attempts, std::uint64_t salt) {
  detail::NumericEvaluator ev(ctx, {a, b}, &limits.constant_readings);
  std::mt19937_64 rng(limits.seed ^ (std::uint64_t(a.id) << 32 | b.id) ^ salt);
  std::vector<Rational> point(ev.symbols().size());
  for (unsigned t = 0; t < attempts; ++t) {
    if (std::chrono::steady_clock::now() > alg.deadline) return std::nullopt;
    int range = t < attempts / 2 ? 16 : 64;  // |x| <= 2, then |x| <= 8 (in eighths)
    // A logarithm or square root of an input has a value only where the
    // input is positive: every other point is drawn from positive values.
    std::uniform_int_distribution<int> dist(ev.has_partial_functions() && t % 2 == 1 ? 1 : -range, range);
    for (std::size_t i = 0; i < point.size(); ++i) {
      int v = dist(rng);
      // Integer inputs take integer values: |x| <= 16, then |x| <= 64.
      point[i] = ctx.is_integer_symbol(ev.symbols()[i]) ? Rational(v) : Rational(v, 8);
    }
    if (auto cx = check_point(ev, point)) return cx;
  }
  return std::nullopt;
}

// Splits on which operand every max/min takes (ties go to the first operand,
// so the cases partition the input space) and which branch every select
// takes. A case is proved by normal forms with the chosen operands
// substituted, or else by Z3: the difference of the two sides' normal forms
// cannot be nonzero under the case's constraints. Proved only if every
// feasible case is proved and at least one case is feasible.
Decision Decider::Impl::case_split(Expr a, Expr b, Decision d) {
  struct Atom {
    std::uint32_t key;
    std::vector<std::uint32_t> alts;
    std::vector<z3::expr> conditions;  // case i holds: the atom equals alts[i], and alts[i] wins
  };
  z3::context z;
  NfEncoder enc(z, alg, ctx);
  std::vector<Atom> atoms;
  auto cannot = [&](const std::string& what) {
    d.reason = "the case split cannot encode " + what + " for Z3 (a sum of more than " +
               std::to_string(NfEncoder::kMaxTerms) + " terms)";
    return d;
  };
  auto form = [&](std::uint32_t id) { return enc.nf(*norm.run(Expr{id})); };
  // The operands' forms without a substitution, encoded once: every leaf of
  // the split asks for them again (ties), and re-encoding them filled the Z3
  // context with copies, which then took half a second to delete.
  std::unordered_map<std::uint32_t, std::optional<z3::expr>> plain_forms;
  auto plain_form = [&](std::uint32_t id) -> std::optional<z3::expr> {
    auto it = plain_forms.find(id);
    if (it == plain_forms.end()) it = plain_forms.emplace(id, form(id)).first;
    return it->second;
  };
  std::vector<std::uint32_t> keys;
  bool timed_out = false;
  try {
    keys = norm.split_atoms(a, b);
  } catch (const LimitHit& h) {
    d.reason = h.reason;
    return d;
  }
  // What the split would cost is known before anything is given to Z3: the
  // number of cases, and the size of the difference to refute. Building the
  // encodings of a split that cannot run (a max over 512 scores: 512^2
  // comparisons) filled the Z3 context with gigabytes that took minutes to
  // delete.
  std::vector<std::vector<std::uint32_t>> alternatives;
  double total = 1;
  for (std::uint32_t key : keys) {
    alternatives.push_back(norm.alternatives(key));
    total *= double(alternatives.back().size());
  }
  if (keys.empty()) return d;
  if (total > double(limits.max_case_splits)) {
    d.reason = "the normal forms differ with max/min/select treated as atoms, and splitting on them needs " +
               (total > 1e15 ? std::string("more than 10^15") : std::to_string(std::uint64_t(total))) +
               " cases (max_case_splits = " + std::to_string(limits.max_case_splits) + ")";
    return d;
  }
  // The goal: the numerator of lhs - rhs is nonzero somewhere in the case.
  detail::NF diff = alg.add(*norm.run(a), alg.neg(*norm.run(b)));
  if (diff.num.terms.size() > NfEncoder::kMaxTerms) return cannot("the difference");
  // A max or min over n operands is encoded as n * (n - 1) comparisons, and
  // Z3 turns each into a linear sum over both operands' terms when the
  // formula is asserted. That internalization, and deleting the context
  // afterwards, are bounded by no query timeout: a max over 128 attention
  // scores of ~100 terms each ran 28 s past a 10 s deadline. So their size
  // is counted first, as the split's case count is.
  {
    double comparison_terms = 0;
    for (std::size_t k = 0; k < keys.size(); ++k) {
      if (norm.select_info(keys[k])) continue;
      double sum = 0;
      for (std::uint32_t x : alternatives[k]) sum += double(norm.run(Expr{x})->num.terms.size());
      comparison_terms += 2 * double(alternatives[k].size() > 0 ? alternatives[k].size() - 1 : 0) * sum;
      alg.check_deadline(alternatives[k].size());
    }
    if (comparison_terms > kMaxComparisonTerms) {
      d.reason = "the normal forms differ with max/min/select treated as atoms, and the comparisons of a case split "
                 "on them would give Z3 about " + std::to_string(std::uint64_t(comparison_terms)) +
                 " terms (more than " + std::to_string(std::uint64_t(kMaxComparisonTerms)) + ")";
      return d;
    }
  }
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const std::uint32_t key = keys[k];
    Atom at{key, std::move(alternatives[k]), {}};
    z3::expr self = enc.atom(key);
    std::vector<z3::expr> zs;
    for (std::uint32_t x : at.alts) {
      auto ze = plain_form(x);
      if (!ze) return cannot("an operand");
      zs.push_back(*ze);
    }
    if (const auto* info = norm.select_info(key)) {
      auto l = plain_form(info->a), r = plain_form(info->b);
      if (!l || !r) return cannot("a comparison");
      z3::expr cond = apply_cmp(info->cmp, *l, *r);
      at.conditions = {cond && self == zs[0], !cond && self == zs[1]};
    } else {
      bool is_max = norm.is_max(key);
      for (std::size_t i = 0; i < zs.size(); ++i) {
        z3::expr c = self == zs[i];
        for (std::size_t j = 0; j < zs.size(); ++j) {
          if (i == j) continue;
          if (is_max)
            c = c && (j < i ? zs[i] > zs[j] : zs[i] >= zs[j]);
          else
            c = c && (j < i ? zs[i] < zs[j] : zs[i] <= zs[j]);
        }
        at.conditions.push_back(c);
      }
    }
    atoms.push_back(std::move(at));
  }
  auto goal = enc.sum(diff.num);
  if (!goal) return cannot("the difference");

  z3::solver solver(z);
  // Every query gets z3_timeout_ms, or what is left before the deadline if
  // that is less: a case split makes hundreds of queries, and a deadline
  // consulted only between them was overrun by minutes. Z3's timer does not
  // interrupt every procedure (nonlinear arithmetic can run on); its
  // resource limit does, deterministically, so it shrinks with the time.
  unsigned query_ms = 0;
  auto check = [&]() -> z3::check_result {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(alg.deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      return z3::unknown;
    }
    const unsigned ms = unsigned(std::min<long long>(limits.z3_timeout_ms, left));
    if (ms != query_ms) {
      query_ms = ms;
      z3::params params(z);
      params.set("timeout", ms);
      params.set("rlimit", unsigned(std::min<std::uint64_t>(UINT32_MAX, std::uint64_t(ms) * 20000)));
      solver.set(params);
    }
    return solver.check();
  };
  for (unsigned i = 0; i < enc.side_conditions().size(); ++i) solver.add(enc.side_conditions()[i]);
  // Side conditions of exponentials first met in a leaf are asserted there,
  // and again in later leaves (each leaf's scope is popped); these are at
  // the base level.
  const unsigned base_sides = enc.side_conditions().size();

  detail::NumericEvaluator ev(ctx, {a, b}, &limits.constant_readings);
  std::unordered_map<std::uint32_t, std::uint32_t> subst;
  std::size_t feasible = 0, unproved = 0;
  std::optional<Counterexample> witness;

  // The constraints of the current case over the substituted forms: with
  // every split atom replaced by its chosen operand, what remains is
  // arithmetic over the inputs, which linear reasoning can often finish
  // (at ties, say, where the two sides are equal only because operands are).
  auto case_constraints = [&](std::vector<z3::expr>& out) -> bool {
    for (const Atom& at : atoms) {
      auto chosen = subst.find(at.key);
      if (chosen == subst.end()) return false;
      std::size_t k = std::size_t(std::find(at.alts.begin(), at.alts.end(), chosen->second) - at.alts.begin());
      auto zk = form(at.alts[k]);
      if (!zk) return false;
      if (const auto* info = norm.select_info(at.key)) {
        auto l = form(info->a), r = form(info->b);
        if (!l || !r) return false;
        z3::expr cond = apply_cmp(info->cmp, *l, *r);
        out.push_back(k == 0 ? cond : !cond);
        continue;
      }
      bool is_max = norm.is_max(at.key);
      for (std::size_t j = 0; j < at.alts.size(); ++j) {
        if (j == k) continue;
        auto zj = form(at.alts[j]);
        if (!zj) return false;
        if (is_max)
          out.push_back(j < k ? *zk > *zj : *zk >= *zj);
        else
          out.push_back(j < k ? *zk < *zj : *zk <= *zj);
      }
    }
    return true;
  };

  // At a tie (the case's constraints force the chosen operand of a max to
  // equal another operand) the other operand is an equally exact choice.
  // Tries those other choices: often only one of them makes the forms agree
  // (max(a,b) = a + b - min(a,b) where a = b needs min -> b when max -> a).
  auto prove_by_ties = [&]() -> bool {
    std::vector<std::vector<std::uint32_t>> choices;
    std::size_t combos = 1;
    for (const Atom& at : atoms) {
      std::uint32_t k = subst.at(at.key);
      std::vector<std::uint32_t> same{k};
      if (!norm.select_info(at.key)) {
        auto zk = plain_form(k);
        for (std::uint32_t j : at.alts) {
          if (j == k || !zk) continue;
          auto zj = plain_form(j);
          if (!zj) continue;
          solver.push();
          solver.add(*zj != *zk);
          if (check() == z3::unsat) same.push_back(j);
          solver.pop();
        }
      }
      combos *= same.size();
      choices.push_back(std::move(same));
    }
    if (combos <= 1 || combos > 64) return false;
    std::unordered_map<std::uint32_t, std::uint32_t> alt_subst;
    for (std::size_t c = 1; c < combos; ++c) {
      std::size_t rest = c;
      for (std::size_t i = 0; i < atoms.size(); ++i) {
        alt_subst[atoms[i].key] = choices[i][rest % choices[i].size()];
        rest /= choices[i].size();
      }
      norm.set_substitution(&alt_subst);
      bool same = false;
      try {
        same = normal_forms_agree(a, b);
      } catch (const LimitHit&) {
      }
      norm.set_substitution(nullptr);
      if (same) return true;
    }
    return false;
  };

  auto prove_leaf = [&]() -> bool {
    norm.set_substitution(&subst);
    bool same = false;
    std::optional<z3::expr> case_goal;
    std::vector<z3::expr> region;
    try {
      detail::NF case_diff = alg.add(*norm.run(a), alg.neg(*norm.run(b)));
      same = alg.is_zero(case_diff);
      if (!same && case_constraints(region)) case_goal = enc.sum(case_diff.num);
    } catch (const LimitHit&) {
    }
    norm.set_substitution(nullptr);
    if (same) return true;
    if (case_goal) {
      solver.push();
      for (const z3::expr& c : region) solver.add(c);
      for (unsigned i = base_sides; i < enc.side_conditions().size(); ++i) solver.add(enc.side_conditions()[i]);
      solver.add(*case_goal != 0);
      bool proved = check() == z3::unsat;
      solver.pop();
      if (proved) return true;
    }
    if (prove_by_ties()) return true;
    solver.push();
    solver.add(*goal != 0);
    z3::check_result r = check();
    bool proved = r == z3::unsat;
    if (r == z3::sat && !witness) {
      // A model of the over-approximation: confirm it numerically.
      z3::model m = solver.get_model();
      std::vector<Rational> point;
      bool ok = true;
      for (Expr s : ev.symbols()) {
        auto it = enc.atoms().find(s.id);
        z3::expr v = it == enc.atoms().end() ? z.real_val(0) : m.eval(it->second, true);
        if (!v.is_numeral()) {
          ok = false;
          break;
        }
        try {
          point.push_back(Rational::parse(Z3_get_numeral_string(z, v)));
          // Z3 solves over the reals; a fractional value of an integer input
          // is no counterexample (the random search may still find one).
          if (ctx.is_integer_symbol(s) && !point.back().is_integer()) {
            ok = false;
            break;
          }
        } catch (...) {
          ok = false;
          break;
        }
      }
      if (ok) witness = check_point(ev, point);
    }
    solver.pop();
    return proved;
  };

  std::function<void(std::size_t)> dfs = [&](std::size_t level) {
    if (witness || timed_out) return;
    if (std::chrono::steady_clock::now() > alg.deadline) {
      timed_out = true;
      return;
    }
    if (level == atoms.size()) {
      ++feasible;
      ++d.stats.cases;
      if (!prove_leaf()) ++unproved;
      return;
    }
    for (std::size_t i = 0; i < atoms[level].alts.size(); ++i) {
      solver.push();
      solver.add(atoms[level].conditions[i]);
      if (check() != z3::unsat) {  // unknown counts as feasible
        subst[atoms[level].key] = atoms[level].alts[i];
        dfs(level + 1);
        subst.erase(atoms[level].key);
      }
      solver.pop();
      if (witness || timed_out) return;
    }
  };
  dfs(0);

  if (witness) {
    d.verdict = Verdict::Refuted;
    d.counterexample = *witness;
    d.reason = "the two sides differ at a concrete input (found by the case split)";
  } else if (timed_out) {
    d.reason = alg.time_limit_reason() + " during the case split";
  } else if (feasible == 0) {
    d.reason = "the case split found no feasible case (nothing is proved from that)";
  } else if (unproved == 0) {
    d.verdict = Verdict::Proved;
    d.reason = "proved in each of the " + std::to_string(feasible) + " feasible cases of a max/min/select case split";
  } else {
    d.reason = std::to_string(unproved) + " of " + std::to_string(feasible) +
               " cases of the max/min/select case split could not be proved, and no input was found on which the values differ";
  }
  return d;
}

namespace {

// Sums of the same subexpressions with the same coefficients (a reduction
// tree against a loop, a GEMM element summed in another order) are equal
// without normal forms, which cost about a microsecond per term: each side
// is read as k + Σ c_i · t_i over the nodes t_i it adds up (through nested
// sums and constant multiples), and the two are compared. This only proves:
// anything else (other nodes equal over the reals, infinities) is left to
// the full procedure, as is a DAG whose shared sums would make the reading
// long (it stops after a fixed number of visits).
bool sums_agree(const ExprContext& ctx, Expr a, Expr b) {
  std::vector<std::pair<std::uint32_t, Rational>> terms;
  std::vector<std::pair<Expr, Rational>> stack{{a, Rational(1)}, {b, Rational(-1)}};
  Rational constant(0);
  std::size_t budget = 1 << 16;
  while (!stack.empty()) {
    if (--budget == 0) return false;
    auto [e, c] = std::move(stack.back());
    stack.pop_back();
    if (ctx.may_be_infinite(e)) return false;
    switch (ctx.op(e)) {
      case Op::Const: constant += c * ctx.constant_value(e); continue;
      case Op::Add:
        for (Expr t : ctx.children(e)) stack.emplace_back(t, c);
        continue;
      case Op::Mul: {
        ExprRange f = ctx.children(e);
        if (f.size() == 2 && ctx.op(f[0]) == Op::Const) {
          stack.emplace_back(f[1], c * ctx.constant_value(f[0]));
          continue;
        }
        if (f.size() == 2 && ctx.op(f[1]) == Op::Const) {
          stack.emplace_back(f[0], c * ctx.constant_value(f[1]));
          continue;
        }
        break;
      }
      default: break;
    }
    terms.emplace_back(e.id, std::move(c));
  }
  if (!constant.is_zero()) return false;
  std::sort(terms.begin(), terms.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  for (std::size_t i = 0; i < terms.size();) {
    Rational sum(0);
    std::size_t j = i;
    for (; j < terms.size() && terms[j].first == terms[i].first; ++j) sum += terms[j].second;
    if (!sum.is_zero()) return false;
    i = j;
  }
  return true;
}

}  // namespace

Decision Decider::Impl::decide(Expr a, Expr b) {
  auto t0 = std::chrono::steady_clock::now();
  alg.set_deadline(t0);
  Decision d;
  auto finish = [&](Decision r) {
    r.stats.peak_terms = alg.peak_terms();
    r.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  };
  if (a == b) {
    d.verdict = Verdict::Proved;
    d.reason = "the two sides are the same expression";
    return finish(d);
  }
  if (limits.deadline && t0 >= *limits.deadline) {
    d.reason = "the time budget of the whole check ran out before this output was decided";
    return finish(d);
  }
  if (sums_agree(ctx, a, b)) {
    d.verdict = Verdict::Proved;
    d.reason = "both sides add up the same terms with the same coefficients";
    return finish(d);
  }
  std::string limit_reason;
  try {
    if (norm.compact_forms_agree(a, b)) {
      d.verdict = Verdict::Proved;
      d.reason = "the compact normal forms (long linear forms as let atoms) are identical";
      return finish(d);
    }
  } catch (const LimitHit&) {
    // the plain forms below decide, and meet the limit again if it is theirs
  }
  try {
    if (normal_forms_agree(a, b)) {
      d.verdict = Verdict::Proved;
      d.reason = "the exp-polynomial normal forms are identical";
      return finish(d);
    }
  } catch (const LimitHit& h) {
    limit_reason = h.reason;
  }
  // Not proved in atom form: look for a counterexample before splitting cases.
  try {
    if (auto cx = search_witness(a, b, limits.witness_attempts / 2, 1)) {
      d.verdict = Verdict::Refuted;
      d.counterexample = *cx;
      d.reason = "the two sides differ at a concrete input";
      return finish(d);
    }
  } catch (const LimitHit& h) {
    if (limit_reason.empty()) limit_reason = h.reason;
  }
  if (limit_reason.empty()) {
    try {
      d = case_split(a, b, d);
    } catch (const LimitHit& h) {  // normalizing an operand of the split
      limit_reason = h.reason;
    }
    if (d.verdict != Verdict::Unknown) return finish(d);
  }
  if (auto cx = search_witness(a, b, limits.witness_attempts - limits.witness_attempts / 2, 2)) {
    d.verdict = Verdict::Refuted;
    d.counterexample = *cx;
    d.reason = "the two sides differ at a concrete input";
    return finish(d);
  }
  d.verdict = Verdict::Unknown;
  if (!limit_reason.empty())
    d.reason = limit_reason;
  else if (d.reason.empty())
    d.reason = "the normal forms differ, but no input was found on which the values differ";
  return finish(d);
}

Decider::Decider(const ExprContext& ctx, const DecideLimits& limits) : impl_(new Impl(ctx, limits)) {}
Decider::~Decider() = default;
Decider::Decider(Decider&&) noexcept = default;
Decider& Decider::operator=(Decider&&) noexcept = default;
// Nothing leaves a decision but its verdict: a limit met where no stage
// expected it, Z3 giving up (out of memory, say) or our own bug is Unknown
// with the reason. A Decider runs on worker threads, where an exception
// would end the process.
Decision Decider::decide(Expr a, Expr b) {
  Decision d = [&] {
    Decision u;
    try {
      return impl_->decide(a, b);
    } catch (const LimitHit& h) {
      u.reason = h.reason;
    } catch (const z3::exception& e) {
      u.reason = std::string("Z3 failed: ") + e.msg();
    } catch (const std::bad_alloc&) {
      u.reason = "ran out of memory while deciding this output";
    } catch (const std::exception& e) {
      u.reason = std::string("internal error while deciding this output: ") + e.what() + " (please report it)";
    }
    return u;
  }();
  // Also after a limit: what was read before it stays in the kept forms.
  if (!impl_->limits.constant_readings.empty()) d.constants_read = impl_->alg.readings_used();
  return d;
}

Decision decide_equal(const ExprContext& ctx, Expr a, Expr b, const DecideLimits& limits) {
  return Decider(ctx, limits).decide(a, b);
}

namespace {

// One Decider per worker slot, made when first needed and kept across the
// batches of one decide_all: the first output a Decider sees pays for the
// normal forms of everything the outputs share (a softmax denominator of 128
// exponentials: 6 ms), and a fresh Decider per batch paid for it again.
class DeciderSlots {
 public:
  DeciderSlots(const ExprContext& ctx, const DecideLimits& limits, std::size_t n)
      : ctx_(ctx), limits_(limits), slots_(n) {}
  // Slot w is used by one worker at a time.
  Decision decide(std::size_t w, Expr a, Expr b) {
    if (!slots_[w]) slots_[w] = std::make_unique<Decider>(ctx_, limits_);
    if (w != 0 || first_seconds >= 0) return slots_[w]->decide(a, b);
    const auto t0 = std::chrono::steady_clock::now();
    Decision d = slots_[w]->decide(a, b);
    first_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return d;
  }
  double first_seconds = -1;  // what slot 0's first output took (< 0: none yet)

 private:
  const ExprContext& ctx_;
  const DecideLimits& limits_;
  std::vector<std::unique_ptr<Decider>> slots_;
};

// Decides pairs[i] for every i in `which`, in parallel (worker w uses
// decider slot w, w < threads).
void decide_batch(const std::vector<std::pair<Expr, Expr>>& pairs, const std::vector<std::size_t>& which,
                  const DecideLimits& limits, unsigned threads, DeciderSlots& deciders, std::vector<Decision>& out,
                  const std::function<void()>& finished, std::atomic<bool>& refuted) {
  if (which.empty()) return;
  // Decides output which[k] unless `skip`; returns whether it was refuted.
  auto one = [&](std::size_t w, std::size_t k, bool skip) {
    const std::size_t i = which[k];
    bool refuted_here = false;
    if (skip) {
      out[i].reason = "not decided: another output was refuted first";
    } else {
      out[i] = deciders.decide(w, pairs[i].first, pairs[i].second);
      refuted_here = out[i].refuted();
      if (refuted_here) refuted = true;
    }
    finished();
    return refuted_here;
  };
  std::size_t workers = std::min<std::size_t>(threads, which.size());
  std::size_t start = 0;  // outputs before it are decided already
  auto sequential = [&](std::size_t from) {
    for (std::size_t k = from; k < which.size(); ++k) one(0, k, limits.stop_at_first_refuted && refuted.load());
  };
  if (workers == 1) return sequential(0);
  if (which.size() > 8) {
    // Outputs that share one large subexpression (the denominator of all 128
    // outputs of a softmax row) are cheap once a Decider has its normal form,
    // and each further thread would normalize it again. A fresh Decider's
    // first output shows what that costs, a next one what an output costs
    // alone; more threads only when the rest is worth twice the first.
    auto timed = [&](std::size_t k) {
      const auto t0 = std::chrono::steady_clock::now();
      one(0, k, limits.stop_at_first_refuted && refuted.load());
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    if (deciders.first_seconds < 0) timed(start++);  // records first_seconds
    const double alone = timed(start++);
    if ((limits.stop_at_first_refuted && refuted.load()) || double(which.size() - start) * alone < 2 * deciders.first_seconds)
      return sequential(start);
  }
  // Workers take short runs of consecutive outputs in index order
  // (neighbouring outputs share subexpressions, which each worker's Decider
  // remembers). An output after the first refuted one found so far is not
  // decided; every output before it is. So the first refuted output, the one
  // a report shows, is the same whatever the thread count.
  // Runs of up to 8, and for a few outputs an equal share per worker (4
  // representatives of an attention kernel: two neighbours each).
  const std::size_t kRun = std::min<std::size_t>(8, (which.size() + workers - 1) / workers);
  std::atomic<std::size_t> next{start};
  std::atomic<std::size_t> first_refuted{SIZE_MAX};
  const bool refuted_before = refuted.load();  // by an earlier batch
  auto past_first_refuted = [&](std::size_t k) {
    return limits.stop_at_first_refuted && (refuted_before || k > first_refuted.load());
  };
  boost::asio::thread_pool pool(workers);
  for (std::size_t w = 0; w < workers; ++w) {
    boost::asio::post(pool, [&, w] {
      for (;;) {
        const std::size_t lo = next.fetch_add(kRun);
        if (lo >= which.size()) break;
        for (std::size_t k = lo; k < std::min(which.size(), lo + kRun); ++k) {
          if (!one(w, k, past_first_refuted(k))) continue;
          std::size_t seen = first_refuted.load();
          while (k < seen && !first_refuted.compare_exchange_weak(seen, k)) {
          }
        }
      }
    });
  }
  pool.join();
}

}  // namespace

namespace {

// decide_all over pairs (a in ctx, b in other). `into` is ctx, writable,
// when other is another context: the b sides that are decided (not proved by
// a renaming) are imported into it, through `imported`.
std::vector<Decision> decide_pairs(const ExprContext& ctx, ExprContext* into, const ExprContext& other,
                                   const std::vector<std::pair<Expr, Expr>>& pairs, std::vector<Expr>& imported,
                                   const DecideLimits& limits, unsigned threads) {
  std::vector<Decision> out(pairs.size());
  if (pairs.empty()) return out;
  const bool split = into != nullptr;
  if (!split && std::all_of(pairs.begin(), pairs.end(), [](const std::pair<Expr, Expr>& p) { return p.first == p.second; })) {
    // Every pair is one node (a kernel against itself, or a rewrite that
    // builds the same expressions): no sweep, no decider.
    for (Decision& d : out) {
      d.verdict = Verdict::Proved;
      d.reason = "the two sides are the same expression";
      if (limits.progress) limits.progress(std::size_t(&d - out.data()) + 1, out.size());
    }
    return out;
  }
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  // More threads than pairs would idle (each costs a decider slot and a
  // stack); --threads 100000000 once allocated 800 MB of slots.
  threads = unsigned(std::min<std::size_t>({threads, pairs.size(), 1024}));
  std::mutex progress_mutex;
  std::size_t done = 0;
  std::function<void()> finished = [&] {
    if (!limits.progress) return;
    std::lock_guard<std::mutex> lock(progress_mutex);
    limits.progress(++done, pairs.size());
  };
  // Pairs that are one pair with its inputs renamed (every C[i][j] of a GEMM)
  // need one proof: decide one representative per shape, then check the
  // others against it exactly (detail::RenamingMatcher) and decide only those
  // that do not match.
  detail::TensorBits bits;
  detail::RenamingMatcher ma(ctx, bits), mb_own(other, bits);
  detail::RenamingMatcher& mb = split ? mb_own : ma;
  // Shapes hash every node below the outputs (millions for attention). One
  // pass over the nodes up to the newest output computes them all; nodes
  // that no output uses are few, and cheaper to hash than to skip. Two
  // contexts are swept at the same time.
  std::uint32_t end_a = 0, end_b = 0;
  for (const auto& [x, y] : pairs) {
    end_a = std::max(end_a, x.id + 1);
    end_b = std::max(end_b, y.id + 1);
  }
  if (!split) {
    ma.shapes_below(std::max(end_a, end_b));
  } else if (threads >= 2) {
    // An exception may not end a thread (it would end the process): it is
    // carried over and rethrown here, for the check's boundary to report.
    std::exception_ptr failed;
    std::thread t([&] {
      try {
        mb.shapes_below(end_b);
      } catch (...) {
        failed = std::current_exception();
      }
    });
    try {
      ma.shapes_below(end_a);
    } catch (...) {
      t.join();
      throw;
    }
    t.join();
    if (failed) std::rethrow_exception(failed);
  } else {
    ma.shapes_below(end_a);
    mb.shapes_below(end_b);
  }
  std::vector<std::uint64_t> key(pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i)
    key[i] = ma.shape(pairs[i].first) * 0x9E3779B97F4A7C15ull ^ mb.shape(pairs[i].second);
  // The pairs as the deciders see them: b imported where it is decided.
  std::vector<std::pair<Expr, Expr>> here_pairs;
  if (split) here_pairs.assign(pairs.size(), {Expr{}, Expr{}});
  auto bring = [&](const std::vector<std::size_t>& which) {
    if (!split) return;
    std::vector<Expr> roots;
    for (std::size_t i : which) roots.push_back(pairs[i].second);
    into->import_below(other, roots, imported);
    for (std::size_t i : which) here_pairs[i] = {pairs[i].first, imported[pairs[i].second.id]};
  };
  const std::vector<std::pair<Expr, Expr>>& decided = split ? here_pairs : pairs;

  std::unordered_map<std::uint64_t, std::size_t> last_of_shape;  // the last pair proved, per shape
  std::vector<std::size_t> reps;
  for (std::size_t i = 0; i < pairs.size(); ++i)
    if (last_of_shape.emplace(key[i], i).second) reps.push_back(i);
  bring(reps);
  std::atomic<bool> refuted{false};
  DeciderSlots deciders(ctx, limits, threads);
  // Whether each pair renames the previous pair of its shape: where that one
  // is proved, so is this one. The walks cover thousands of nodes per output
  // (an attention output's whole sum over keys), are independent, and do not
  // depend on the decisions: threads that the representatives leave idle
  // (an attention kernel has one) start on them at once, and the others join
  // when the representatives are decided.
  std::vector<std::size_t> prev(pairs.size(), SIZE_MAX);
  enum : char { kNo, kYes, kUnchecked };
  std::vector<char> renames_prev(pairs.size(), kUnchecked);
  std::vector<std::size_t> check;
  {
    std::unordered_map<std::uint64_t, std::size_t> previous;
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      auto [it, first] = previous.emplace(key[i], i);
      if (!first) {
        prev[i] = it->second;
        it->second = i;
        check.push_back(i);
      }
    }
  }
  std::atomic<std::size_t> next_check{0};
  std::function<void()> precheck_walks;
  auto precheck = [&] {
    try {
      precheck_walks();
    } catch (...) {  // out of memory: the walks left unchecked are redone (or not) below
    }
  };
  precheck_walks = [&] {
    // Memo tables are not shared between threads; shapes are read.
    detail::RenamingMatcher own_a(ctx, bits, &ma), own_b(other, bits, &mb);
    detail::RenamingMatcher& own_b_or_a = split ? own_b : own_a;
    detail::Substitution sub;
    constexpr std::size_t kChunk = 16;
    for (;;) {
      if (limits.stop_at_first_refuted && refuted.load()) return;  // nothing more will be proved
      // Unchecked walks are left to the loop below, which stops at the deadline.
      if (limits.deadline && std::chrono::steady_clock::now() > *limits.deadline) return;
      const std::size_t lo = next_check.fetch_add(kChunk);
      if (lo >= check.size()) return;
      for (std::size_t k = lo; k < std::min(check.size(), lo + kChunk); ++k) {
        const std::size_t i = check[k], r = prev[i];
        renames_prev[i] = detail::renames(own_a, pairs[r].first, pairs[i].first, own_b_or_a, pairs[r].second,
                                          pairs[i].second, sub)
                              ? kYes
                              : kNo;
      }
    }
  };
  // Parallel only with enough walks to share (16 per thread).
  const std::size_t check_threads = std::min<std::size_t>(threads, check.size() / 16);
  std::vector<std::thread> early;
  if (check_threads > 1)
    for (std::size_t t = std::min(reps.size(), std::size_t(threads)); t < check_threads; ++t) early.emplace_back(precheck);
  try {
    decide_batch(decided, reps, limits, threads, deciders, out, finished, refuted);
  } catch (...) {  // (a progress callback's, say) the walks end before it leaves
    next_check = check.size();
    for (std::thread& t : early) t.join();
    throw;
  }
  if (check_threads > 1) {
    std::vector<std::thread> late;
    for (std::size_t t = early.size() + 1; t < check_threads; ++t) late.emplace_back(precheck);
    precheck();
    for (std::thread& t : early) t.join();
    for (std::thread& t : late) t.join();
  }
  // Each pair is checked against the last proved pair of its shape (its
  // neighbour, which shares the most with it: the same row of an attention
  // output), so proofs chain: renamings compose.
  detail::Substitution sub;
  std::vector<std::size_t> rest;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const std::size_t r = last_of_shape.at(key[i]);
    if (r == i) continue;
    if (limits.stop_at_first_refuted && refuted.load()) {
      out[i].reason = "not decided: another output was refuted first";
      finished();
    } else if (limits.deadline && (i & 63) == 0 && std::chrono::steady_clock::now() > *limits.deadline) {
      // The walks cost microseconds each, but a grid has millions.
      for (std::size_t j = i; j < pairs.size(); ++j)
        if (last_of_shape.at(key[j]) != j) {
          out[j].reason = "the time budget of the whole check ran out before this output was decided";
          finished();
        }
      break;
    } else if (out[r].proved() &&
               (r == prev[i] && renames_prev[i] != kUnchecked
                    ? renames_prev[i] == kYes
                    : detail::renames(ma, pairs[r].first, pairs[i].first, mb, pairs[r].second, pairs[i].second, sub))) {
      Decision& d = out[i];
      d.verdict = Verdict::Proved;
      d.reason = "proved: the same as an earlier proved output pair with its inputs renamed";
      finished();
      last_of_shape[key[i]] = i;
    } else {
      rest.push_back(i);
    }
  }
  bring(rest);
  decide_batch(decided, rest, limits, threads, deciders, out, finished, refuted);
  return out;
}

}  // namespace

std::vector<Decision> decide_all(const ExprContext& ctx, const std::vector<std::pair<Expr, Expr>>& pairs,
                                 const DecideLimits& limits, unsigned threads) {
  std::vector<Expr> unused;
  return decide_pairs(ctx, nullptr, ctx, pairs, unused, limits, threads);
}

std::vector<Decision> decide_all(ExprContext& ctx, const ExprContext& other,
                                 const std::vector<std::pair<Expr, Expr>>& pairs, std::vector<Expr>& imported,
                                 const DecideLimits& limits, unsigned threads) {
  if (&ctx == &other) return decide_all(ctx, pairs, limits, threads);
  return decide_pairs(ctx, &ctx, other, pairs, imported, limits, threads);
}

}  // namespace tileverify
