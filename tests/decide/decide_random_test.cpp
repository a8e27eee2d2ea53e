// Property tests over random expressions: the decider never proves two
// functions equal when they differ at some point, and never refutes two
// expressions that are equal by construction.
#include "tileverify/decide.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <random>

using namespace tileverify;

namespace {

class Gen {
 public:
  Gen(ExprContext& c, std::uint64_t seed) : c_(c), rng_(seed) {}

  Expr expr(int depth) {
    if (depth == 0 || pick(4) == 0) return leaf();
    switch (pick(8)) {
      case 0: return c_.add(expr(depth - 1), expr(depth - 1));
      case 1: return c_.sub(expr(depth - 1), expr(depth - 1));
      case 2: return c_.mul(expr(depth - 1), expr(depth - 1));
      case 3: return c_.exp(c_.mul(c_.constant(Rational(1, 2)), expr(std::min(depth - 1, 2))));
      case 4: return c_.max(expr(depth - 1), expr(depth - 1));
      case 5: return c_.min(expr(depth - 1), expr(depth - 1));
      case 6: return c_.div(expr(depth - 1), c_.add(c_.one(), c_.exp(expr(std::min(depth - 1, 1)))));
      default: return c_.ex2(expr(std::min(depth - 1, 2)));
    }
  }

  // An expression equal to e over the reals, built differently.
  Expr rewrite(Expr e) {
    auto k = c_.children(e);
    switch (c_.op(e)) {
      case Op::Add: {
        Expr acc = c_.zero();
        for (std::size_t i = k.size(); i-- > 0;) acc = c_.add(rewrite(k[i]), acc);
        return acc;
      }
      case Op::Mul: {
        // Distribute over a sum operand when there is one.
        for (std::size_t i = 0; i < k.size(); ++i) {
          if (c_.op(k[i]) != Op::Add || pick(2)) continue;
          std::vector<Expr> rest;
          for (std::size_t j = 0; j < k.size(); ++j)
            if (j != i) rest.push_back(rewrite(k[j]));
          Expr other = c_.mul(rest);
          std::vector<Expr> terms;
          for (Expr t : c_.children(k[i])) terms.push_back(c_.mul(other, rewrite(t)));
          return c_.add(terms);
        }
        Expr acc = c_.one();
        for (std::size_t i = k.size(); i-- > 0;) acc = c_.mul(rewrite(k[i]), acc);
        return acc;
      }
      case Op::Exp: {
        Expr a = k[0];
        if (c_.op(a) == Op::Add) {  // exp(a + b) = exp(a) * exp(b)
          std::vector<Expr> f;
          for (Expr t : c_.children(a)) f.push_back(c_.exp(rewrite(t)));
          return c_.mul(f);
        }
        if (pick(2))  // the fast-math form
          return c_.ex2(c_.mul(rewrite(a), c_.constant(Rational::from_f32_bits(0x3FB8AA3Bu))));
        return c_.exp(rewrite(a));
      }
      case Op::Max:
      case Op::Min: {
        std::vector<Expr> args;
        for (std::size_t i = k.size(); i-- > 0;) args.push_back(rewrite(k[i]));
        if (args.size() == 2 && pick(3) == 0) {  // max(a,b) = a + b - min(a,b)
          Expr other = c_.op(e) == Op::Max ? c_.min(args[0], args[1]) : c_.max(args[0], args[1]);
          return c_.sub(c_.add(args[0], args[1]), other);
        }
        return c_.op(e) == Op::Max ? c_.max(args) : c_.min(args);
      }
      case Op::Pow: return c_.pow(rewrite(k[0]), c_.pow_exponent(e));
      default: return e;
    }
  }

  // e with one constant or symbol changed (usually a different function).
  Expr perturb(Expr e, bool* changed) {
    auto k = c_.children(e);
    if (k.empty()) {
      if (*changed || pick(3)) return e;
      *changed = true;
      if (c_.op(e) == Op::Const) return c_.constant(c_.constant_value(e) + Rational(1));
      return c_.symbol("x", std::uint32_t(pick(3)));
    }
    std::vector<Expr> args;
    for (Expr a : k) args.push_back(perturb(a, changed));
    switch (c_.op(e)) {
      case Op::Add: return c_.add(args);
      case Op::Mul: return c_.mul(args);
      case Op::Max: return c_.max(args);
      case Op::Min: return c_.min(args);
      case Op::Exp: return c_.exp(args[0]);
      case Op::Pow: return c_.pow(args[0], c_.pow_exponent(e));
      default: return e;
    }
  }

  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

 private:
  Expr leaf() {
    static const Rational consts[] = {Rational(-2), Rational(-1), Rational(1, 2), Rational(1), Rational(3)};
    if (pick(3) == 0) return c_.constant(consts[pick(5)]);
    return c_.symbol("x", std::uint32_t(pick(3)));
  }
  ExprContext& c_;
  std::mt19937_64 rng_;
};

// Whether two expressions visibly differ at a few points (long double).
bool numerically_differ(const ExprContext& c, Expr a, Expr b, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> d(-16, 16);
  for (int t = 0; t < 6; ++t) {
    Assignment as;
    for (Expr s : c.symbols_of({a, b})) as.values.emplace_back(s, Rational(d(rng), 8));
    long double x = evaluate(c, a, as), y = evaluate(c, b, as);
    if (!std::isfinite(double(x)) || !std::isfinite(double(y))) continue;
    if (std::fabs(double(x - y)) > 1e-6 * std::max(1.0, std::fabs(double(x)))) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("random rewrites of an expression are never refuted, and are mostly proved") {
  std::mt19937_64 rng(7);
  int proved = 0, total = 0;
  for (int seed = 0; seed < 150; ++seed) {
    ExprContext c;
    Gen g(c, std::uint64_t(seed));
    Expr e = g.expr(4);
    Expr r = g.rewrite(e);
    DecideLimits lim;
    lim.timeout_seconds = 3;
    lim.z3_timeout_ms = 300;
    Decision d = decide_equal(c, e, r, lim);
    INFO("seed " << seed << ": " << c.to_string(e, 300) << "  vs  " << c.to_string(r, 300) << " : " << d.reason);
    CHECK(d.verdict != Verdict::Refuted);
    proved += d.proved();
    ++total;
  }
  MESSAGE(proved << " of " << total << " rewritten pairs proved");
  CHECK(proved * 10 >= total * 9);  // the rest may be Unknown, never Refuted
}

TEST_CASE("a perturbed expression that differs numerically is never proved equal") {
  std::mt19937_64 rng(11);
  int refuted = 0, different = 0;
  for (int seed = 0; seed < 600; ++seed) {
    ExprContext c;
    Gen g(c, std::uint64_t(seed) + 1000);
    Expr e = g.expr(4);
    bool changed = false;
    Expr p = g.perturb(g.rewrite(e), &changed);
    if (!changed || !numerically_differ(c, e, p, rng)) continue;
    ++different;
    DecideLimits lim;
    lim.timeout_seconds = 3;
    lim.z3_timeout_ms = 300;
    Decision d = decide_equal(c, e, p, lim);
    INFO("seed " << seed << ": " << c.to_string(e, 300) << "  vs  " << c.to_string(p, 300) << " : " << d.reason);
    REQUIRE(d.verdict != Verdict::Proved);
    refuted += d.refuted();
  }
  MESSAGE(refuted << " of " << different << " differing pairs refuted with a counterexample");
  CHECK(different > 200);
  CHECK(refuted * 10 >= different * 9);
}
