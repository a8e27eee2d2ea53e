// decide_equal: normal forms first, then a max/min/select case split with Z3,
// and counterexamples confirmed in high precision.
#include "tileverify/decide.hpp"

#include "normal_form.hpp"
#include "normalizer.hpp"
#include "numeric.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <z3++.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <random>
#include <thread>

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

// ---------------------------------------------------------------- Z3 encoding

// Encodes expressions as Z3 real terms. exp and opaque functions become
// uninterpreted functions (exp with exp(t) > 0), ln2 a constant between
// 0.6931 and 0.6932: an over-approximation of the real semantics, so an
// "unsat" answer is a proof about the reals.
class Z3Encoder {
 public:
  Z3Encoder(const ExprContext& ctx, z3::context& z) : ctx_(ctx), z_(z), side_(z) {}

  std::optional<z3::expr> encode(Expr root) {
    std::vector<std::pair<std::uint32_t, bool>> stack{{root.id, false}};
    while (!stack.empty()) {
      auto [id, ready] = stack.back();
      stack.pop_back();
      if (cache_.count(id)) continue;
      Expr e{id};
      if (!ready) {
        stack.push_back({id, true});
        for (Expr c : ctx_.children(e))
          if (!cache_.count(c.id)) stack.push_back({c.id, false});
        continue;
      }
      auto r = encode_node(e);
      if (!r) return std::nullopt;
      cache_.emplace(id, *r);
    }
    return cache_.at(root.id);
  }

  const z3::expr_vector& side_conditions() const { return side_; }
  const std::unordered_map<std::uint32_t, z3::expr>& symbols() const { return symbols_; }

 private:
  std::optional<z3::expr> encode_node(Expr e) {
    auto kid = [&](std::size_t i) { return cache_.at(ctx_.children(e)[i].id); };
    std::size_t n = ctx_.children(e).size();
    switch (ctx_.op(e)) {
      case Op::Const: {
        const Rational& v = ctx_.constant_value(e);
        return z_.real_val(v.str().c_str());
      }
      case Op::NegInf:
      case Op::PosInf: return std::nullopt;
      case Op::Named: {
        z3::expr c = z_.real_const("ln2");
        side_.push_back(c > z_.real_val("6931/10000") && c < z_.real_val("6932/10000"));
        return c;
      }
      case Op::Symbol: {
        std::string name = ctx_.symbol_tensor(e) + "[" + std::to_string(ctx_.symbol_index(e)) + "]";
        z3::expr c = z_.real_const(name.c_str());
        symbols_.emplace(e.id, c);
        return c;
      }
      case Op::Add: {
        z3::expr r = kid(0);
        for (std::size_t i = 1; i < n; ++i) r = r + kid(i);
        return r;
      }
      case Op::Mul: {
        z3::expr r = kid(0);
        for (std::size_t i = 1; i < n; ++i) r = r * kid(i);
        return r;
      }
      case Op::Pow: {
        int k = ctx_.pow_exponent(e);
        if (k > 16 || k < -16) return std::nullopt;
        z3::expr b = kid(0);
        z3::expr r = b;
        for (int i = 1; i < (k < 0 ? -k : k); ++i) r = r * b;
        if (k < 0) r = z_.real_val(1) / r;
        return r;
      }
      case Op::Exp: {
        z3::func_decl f = z_.function("exp", z_.real_sort(), z_.real_sort());
        z3::expr r = f(kid(0));
        side_.push_back(r > 0);
        return r;
      }
      case Op::Max:
      case Op::Min: {
        bool is_max = ctx_.op(e) == Op::Max;
        z3::expr r = kid(0);
        for (std::size_t i = 1; i < n; ++i) r = z3::ite(is_max ? kid(i) > r : kid(i) < r, kid(i), r);
        return r;
      }
      case Op::Select: {
        z3::expr a = kid(0), b = kid(1);
        z3::expr c = a < b;
        switch (ctx_.select_cmp(e)) {
          case Cmp::LT: c = a < b; break;
          case Cmp::LE: c = a <= b; break;
          case Cmp::GT: c = a > b; break;
          case Cmp::GE: c = a >= b; break;
          case Cmp::EQ: c = a == b; break;
          case Cmp::NE: c = a != b; break;
        }
        return z3::ite(c, kid(2), kid(3));
      }
      case Op::Func: {
        z3::sort_vector dom(z_);
        z3::expr_vector args(z_);
        for (std::size_t i = 0; i < n; ++i) {
          dom.push_back(z_.real_sort());
          args.push_back(kid(i));
        }
        z3::func_decl f = z_.function(ctx_.name(e).c_str(), dom, z_.real_sort());
        return f(args);
      }
    }
    return std::nullopt;
  }

  const ExprContext& ctx_;
  z3::context& z_;
  z3::expr_vector side_;
  std::unordered_map<std::uint32_t, z3::expr> cache_;
  std::unordered_map<std::uint32_t, z3::expr> symbols_;
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
  auto vals = ev.eval(point);
  if (!vals || !detail::numerically_different((*vals)[0], (*vals)[1])) return std::nullopt;
  Counterexample cx;
  for (std::size_t i = 0; i < ev.symbols().size(); ++i) cx.inputs.values.emplace_back(ev.symbols()[i], point[i]);
  cx.lhs_value = detail::real_to_string((*vals)[0]);
  cx.rhs_value = detail::real_to_string((*vals)[1]);
  cx.lhs = (*vals)[0].convert_to<double>();
  cx.rhs = (*vals)[1].convert_to<double>();
  return cx;
}

// Random points with small dyadic coordinates (exactly representable as
// floats, so a counterexample can be replayed on a GPU as it is).
std::optional<Counterexample> Decider::Impl::search_witness(Expr a, Expr b, unsigned attempts, std::uint64_t salt) {
  detail::NumericEvaluator ev(ctx, {a, b});
  std::mt19937_64 rng(limits.seed ^ (std::uint64_t(a.id) << 32 | b.id) ^ salt);
  std::vector<Rational> point(ev.symbols().size());
  for (unsigned t = 0; t < attempts; ++t) {
    if (std::chrono::steady_clock::now() > alg.deadline) return std::nullopt;
    int range = t < attempts / 2 ? 16 : 64;  // |x| <= 2, then |x| <= 8 (in eighths)
    std::uniform_int_distribution<int> dist(-range, range);
    for (auto& p : point) p = Rational(dist(rng), 8);
    if (auto cx = check_point(ev, point)) return cx;
  }
  return std::nullopt;
}

// Splits on which operand every max/min takes (ties go to the first operand,
// so the cases partition the input space) and which branch every select
// takes. Each feasible case is proved by normal forms with the chosen operands
// substituted, or else by Z3 under the case's conditions. Proved only if every
// feasible case is proved and at least one case is feasible.
Decision Decider::Impl::case_split(Expr a, Expr b, Decision d) {
  z3::context z;
  Z3Encoder enc(ctx, z);
  struct Atom {
    std::uint32_t key;
    std::vector<std::uint32_t> alts;
    std::vector<z3::expr> conditions;
  };
  std::vector<Atom> atoms;
  std::unordered_map<std::uint32_t, bool> seen_node, seen_key;
  std::vector<std::uint32_t> stack{a.id, b.id};
  std::string why_not;
  while (!stack.empty()) {
    std::uint32_t id = stack.back();
    stack.pop_back();
    if (seen_node[id]) continue;
    seen_node[id] = true;
    Expr e{id};
    for (Expr c : ctx.children(e)) stack.push_back(c.id);
    Op op = ctx.op(e);
    if (op != Op::Max && op != Op::Min && op != Op::Select) continue;
    std::uint32_t key = op == Op::Select ? e.id : norm.atom_of(e);
    if (seen_key[key]) continue;
    seen_key[key] = true;
    Atom at{key, {}, {}};
    if (op == Op::Select) {
      auto k = ctx.children(e);
      auto whole = enc.encode(e);
      auto l = enc.encode(k[0]), r = enc.encode(k[1]);
      if (!whole || !l || !r) return d;
      z3::expr cond = whole->arg(0);  // the ite's condition
      at.alts = {k[2].id, k[3].id};
      at.conditions = {cond, !cond};
    } else {
      const auto& args = norm.flat_args(e);
      std::vector<z3::expr> zs;
      for (std::uint32_t x : args) {
        auto ze = enc.encode(Expr{x});
        if (!ze) {
          d.reason = "the case split cannot encode an operand for Z3 (an infinity or a large power)";
          return d;
        }
        zs.push_back(*ze);
      }
      for (std::size_t i = 0; i < args.size(); ++i) {
        z3::expr c = z.bool_val(true);
        for (std::size_t j = 0; j < args.size(); ++j) {
          if (i == j) continue;
          if (op == Op::Max)
            c = c && (j < i ? zs[i] > zs[j] : zs[i] >= zs[j]);
          else
            c = c && (j < i ? zs[i] < zs[j] : zs[i] <= zs[j]);
        }
        at.alts.push_back(args[i]);
        at.conditions.push_back(c);
      }
    }
    atoms.push_back(std::move(at));
  }
  if (atoms.empty()) return d;
  double total = 1;
  for (const Atom& at : atoms) total *= double(at.alts.size());
  if (total > double(limits.max_case_splits)) {
    d.reason = "the normal forms differ with max/min/select treated as atoms, and splitting on them needs " +
               (total > 1e15 ? std::string("more than 10^15") : std::to_string(std::uint64_t(total))) +
               " cases (max_case_splits = " + std::to_string(limits.max_case_splits) + ")";
    return d;
  }
  auto za = enc.encode(a), zb = enc.encode(b);
  if (!za || !zb) {
    d.reason = "the case split cannot encode the expressions for Z3 (an infinity or a large power)";
    return d;
  }
  z3::solver solver(z);
  z3::params params(z);
  params.set("timeout", limits.z3_timeout_ms);
  solver.set(params);
  for (unsigned i = 0; i < enc.side_conditions().size(); ++i) solver.add(enc.side_conditions()[i]);

  detail::NumericEvaluator ev(ctx, {a, b});
  std::unordered_map<std::uint32_t, std::uint32_t> subst;
  std::size_t feasible = 0, unproved = 0;
  std::optional<Counterexample> witness;
  bool timed_out = false;

  auto prove_leaf = [&]() -> bool {
    norm.set_substitution(&subst);
    try {
      if (normal_forms_agree(a, b)) return true;
    } catch (const LimitHit&) {
    }
    solver.push();
    solver.add(*za != *zb);
    z3::check_result r = solver.check();
    bool proved = r == z3::unsat;
    if (r == z3::sat) {
      // A model of the over-approximation: confirm it numerically.
      z3::model m = solver.get_model();
      std::vector<Rational> point;
      bool ok = true;
      for (Expr s : ev.symbols()) {
        auto it = enc.symbols().find(s.id);
        if (it == enc.symbols().end()) {
          point.push_back(Rational(0));
          continue;
        }
        z3::expr v = m.eval(it->second, true);
        if (!v.is_numeral()) {
          ok = false;
          break;
        }
        try {
          point.push_back(Rational::parse(Z3_get_numeral_string(z, v)));
        } catch (...) {
          ok = false;
          break;
        }
      }
      if (ok && !witness) witness = check_point(ev, point);
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
      if (solver.check() != z3::unsat) {  // unknown counts as feasible
        subst[atoms[level].key] = atoms[level].alts[i];
        dfs(level + 1);
        subst.erase(atoms[level].key);
      }
      solver.pop();
      if (witness || timed_out) return;
    }
  };
  dfs(0);
  norm.set_substitution(nullptr);

  if (witness) {
    d.verdict = Verdict::Refuted;
    d.counterexample = *witness;
    d.reason = "the two sides differ at a concrete input (found by the case split)";
  } else if (timed_out) {
    d.reason = "time limit of " + std::to_string(limits.timeout_seconds) + " s reached during the case split";
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

Decision Decider::Impl::decide(Expr a, Expr b) {
  auto t0 = std::chrono::steady_clock::now();
  alg.deadline = t0 + std::chrono::microseconds(std::int64_t(limits.timeout_seconds * 1e6));
  Decision d;
  auto finish = [&](Decision r) {
    r.stats.peak_terms = alg.peak_terms();
    r.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  };
  std::string limit_reason;
  try {
    if (a == b || normal_forms_agree(a, b)) {
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
    d = case_split(a, b, d);
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
Decision Decider::decide(Expr a, Expr b) { return impl_->decide(a, b); }

Decision decide_equal(const ExprContext& ctx, Expr a, Expr b, const DecideLimits& limits) {
  return Decider(ctx, limits).decide(a, b);
}

std::vector<Decision> decide_all(const ExprContext& ctx, const std::vector<std::pair<Expr, Expr>>& pairs,
                                 const DecideLimits& limits, unsigned threads) {
  std::vector<Decision> out(pairs.size());
  if (pairs.empty()) return out;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  std::size_t workers = std::min<std::size_t>(threads, pairs.size());
  if (workers == 1) {
    Decider dec(ctx, limits);
    for (std::size_t i = 0; i < pairs.size(); ++i) out[i] = dec.decide(pairs[i].first, pairs[i].second);
    return out;
  }
  // Contiguous chunks: neighbouring outputs usually share subexpressions, and
  // each worker's Decider remembers them.
  boost::asio::thread_pool pool(workers);
  std::size_t chunk = (pairs.size() + workers - 1) / workers;
  for (std::size_t w = 0; w < workers; ++w) {
    std::size_t lo = w * chunk, hi = std::min(pairs.size(), lo + chunk);
    if (lo >= hi) break;
    boost::asio::post(pool, [&, lo, hi] {
      Decider dec(ctx, limits);
      for (std::size_t i = lo; i < hi; ++i) out[i] = dec.decide(pairs[i].first, pairs[i].second);
    });
  }
  pool.join();
  return out;
}

}  // namespace tileverify
