// Layer norm / RMS norm at real widths (compact forms of function arguments:
// src/decide/compact.cpp) and the finite-input rule for max/min (docs/decide.md,
// "Finite inputs").
#include "tileverify/decide.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <functional>

using namespace tileverify;

namespace {

Expr x_at(ExprContext& c, int i) { return c.symbol("x", std::uint32_t(i)); }

// Σ x_i in order, or as a tree over a block of `block` lanes with the lanes
// past n holding 0 (a masked load with other = 0).
// block < 0: in order, with every eighth partial sum also used by a node
// no output reaches (as a flattened sum's intermediate nodes are), so that
// partial sums are shared.
Expr sum_of(ExprContext& c, int n, const std::function<Expr(int)>& f, int block = 0) {
  if (block <= 0) {
    Expr s = c.zero();
    for (int i = 0; i < n; ++i) {
      s = c.add(s, f(i));
      if (block < 0 && i % 8 == 7) (void)c.add(s, c.symbol("unused", std::uint32_t(i)));
    }
    return s;
  }
  std::vector<Expr> v;
  for (int i = 0; i < block; ++i) v.push_back(i < n ? f(i) : c.zero());
  while (v.size() > 1) {
    std::vector<Expr> w;
    for (std::size_t i = 0; i < v.size() / 2; ++i) w.push_back(c.add(v[i], v[i + v.size() / 2]));
    v.swap(w);
  }
  return v[0];
}

enum class Var { TwoPass, SumOfSquares, DividedByBlock };

// The outputs of one layer-norm row of n values: y_i = (x_i - mean) * rstd * w_i + b_i.
std::vector<Expr> layer_norm(ExprContext& c, int n, int block, Var how) {
  const Expr inv_n = c.div(c.one(), c.constant(n));
  const Expr mean = c.mul(sum_of(c, n, [&](int i) { return x_at(c, i); }, block), inv_n);
  Expr var;
  if (how == Var::SumOfSquares) {
    const Expr sq = sum_of(c, n, [&](int i) { return c.mul(x_at(c, i), x_at(c, i)); }, block);
    var = c.sub(c.mul(sq, inv_n), c.mul(mean, mean));
  } else {
    const Expr ss = sum_of(c, n, [&](int i) {
      const Expr d = c.sub(x_at(c, i), mean);
      return c.mul(d, d);
    }, block);
    var = c.mul(ss, how == Var::DividedByBlock ? c.div(c.one(), c.constant(block)) : inv_n);
  }
  const Expr eps = c.constant(Rational(1, 100000));
  const Expr rstd = block > 0 ? c.func("rsqrt", {c.add(var, eps)}) : c.div(c.one(), c.func("sqrt", {c.add(eps, var)}));
  std::vector<Expr> y;
  for (int i = 0; i < n; ++i)
    y.push_back(c.add(c.mul(c.mul(c.sub(x_at(c, i), mean), rstd), c.symbol("w", std::uint32_t(i))),
                      c.symbol("b", std::uint32_t(i))));
  return y;
}

// Limits under which the full expansion of Σ(x_i - mean)² at n = 300 fails
// at once: each (x_i - mean)² is 301² terms.
DecideLimits norm_limits() {
  DecideLimits lim;
  lim.max_terms = 50'000;
  lim.timeout_seconds = 30;
  lim.threads = 1;
  return lim;
}

Rational flt_max() { return Rational::from_f32_bits(0x7f7fffffu); }

DecideLimits finite_f32(const std::string& tensor) {
  DecideLimits lim;
  lim.input_ranges.push_back({tensor, -flt_max(), flt_max()});
  return lim;
}

}  // namespace

TEST_CASE("layer norm: two passes in order against a masked tree over a block, N = 300, B = 512") {
  ExprContext c;
  const auto ref = layer_norm(c, 300, 0, Var::TwoPass);
  const auto opt = layer_norm(c, 300, 512, Var::TwoPass);
  Decider dec(c, norm_limits());
  for (int i : {0, 1, 150, 299}) {
    const Decision d = dec.decide(ref[std::size_t(i)], opt[std::size_t(i)]);
    INFO("y[" << i << "]: " << d.reason);
    CHECK(d.proved());
    CHECK(d.stats.peak_terms < 5000);
  }
}

TEST_CASE("layer norm: var as sum(x^2)/N - mean^2 equals sum((x - mean)^2)/N, N = 300") {
  ExprContext c;
  const auto ref = layer_norm(c, 300, 0, Var::TwoPass);
  const auto opt = layer_norm(c, 300, 512, Var::SumOfSquares);
  Decider dec(c, norm_limits());
  for (int i : {0, 299}) {
    const Decision d = dec.decide(ref[std::size_t(i)], opt[std::size_t(i)]);
    INFO(d.reason);
    CHECK(d.proved());
  }
}

TEST_CASE("layer norm at N = 4096: one output decided in well under the time a full expansion needs") {
  ExprContext c;
  const auto ref = layer_norm(c, 4096, 0, Var::TwoPass);
  const auto opt = layer_norm(c, 4096, 4096, Var::SumOfSquares);
  const auto t0 = std::chrono::steady_clock::now();
  const Decision d = decide_equal(c, ref[7], opt[7], norm_limits());
  INFO(d.reason);
  CHECK(d.proved());
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 20);
}

TEST_CASE("layer norm: the variance divided by the block width instead of N is refuted") {
  ExprContext c;
  const auto ref = layer_norm(c, 300, 0, Var::TwoPass);
  const auto bad = layer_norm(c, 300, 512, Var::DividedByBlock);
  const Decision d = decide_equal(c, ref[3], bad[3], norm_limits());
  INFO(d.reason);
  CHECK(d.refuted());
}

TEST_CASE("RMS norm: x * rsqrt(mean(x^2) + eps) * w, in order against a masked tree, N = 300") {
  ExprContext c;
  const int n = 300;
  auto rms = [&](int block) {
    const Expr ms = c.mul(sum_of(c, n, [&](int i) { return c.mul(x_at(c, i), x_at(c, i)); }, block),
                          c.div(c.one(), c.constant(n)));
    const Expr r = c.func("rsqrt", {c.add(ms, c.constant(Rational(1, 100000)))});
    std::vector<Expr> y;
    for (int i = 0; i < n; ++i) y.push_back(c.mul(c.mul(x_at(c, i), r), c.symbol("w", std::uint32_t(i))));
    return y;
  };
  const auto a = rms(0), b = rms(512);
  const Decision d = decide_equal(c, a[5], b[5], norm_limits());
  INFO(d.reason);
  CHECK(d.proved());
}

TEST_CASE("a function of two different polynomials is not one atom because of lets") {
  // sqrt(Σ(x_i - mean)²) against sqrt(Σ x_i² - mean²): they differ (the
  // latter lacks the factor N on mean²), and must not be proved equal.
  ExprContext c;
  const int n = 40;
  const Expr mean = c.mul(sum_of(c, n, [&](int i) { return x_at(c, i); }), c.div(c.one(), c.constant(n)));
  const Expr ss = sum_of(c, n, [&](int i) {
    const Expr d = c.sub(x_at(c, i), mean);
    return c.mul(d, d);
  });
  const Expr sq = c.sub(sum_of(c, n, [&](int i) { return c.mul(x_at(c, i), x_at(c, i)); }), c.mul(mean, mean));
  const Decision d = decide_equal(c, c.func("sqrt", {ss}), c.func("sqrt", {sq}));
  INFO(d.reason);
  CHECK(!d.proved());
}

TEST_CASE("finite inputs: max(-FLT_MAX, x...) is max(x...) for f32 inputs") {
  ExprContext c;
  const Expr lowest = c.constant(-flt_max());
  std::vector<Expr> xs;
  for (int i = 0; i < 8; ++i) xs.push_back(x_at(c, i));
  // a running max started at -FLT_MAX, as LLM-written kernels start it
  Expr m = lowest;
  for (Expr x : xs) m = c.max(m, x);
  const Expr ref_m = c.max(xs);
  // log-sum-exp: the max does not cancel
  auto lse = [&](Expr mx) {
    std::vector<Expr> es;
    for (Expr x : xs) es.push_back(c.exp(c.sub(x, mx)));
    return c.add(mx, c.func("log", {c.add(es)}));
  };
  const Decision d = decide_equal(c, lse(ref_m), lse(m), finite_f32("x"));
  INFO(d.reason);
  CHECK(d.proved());
  CHECK(d.stats.cases == 0);
  // without the inputs' ranges the rule does not apply
  CHECK(!decide_equal(c, ref_m, m).proved());
  // max(exp(x), -FLT_MAX) = exp(x) needs no range: exp is positive
  CHECK(decide_equal(c, c.max(c.exp(xs[0]), lowest), c.exp(xs[0]), finite_f32("y")).proved());
  // min(x, FLT_MAX) = x
  CHECK(decide_equal(c, c.min(xs[1], c.constant(flt_max())), xs[1], finite_f32("x")).proved());
}

TEST_CASE("finite inputs: a sum may go below -FLT_MAX, so max(x + y, -FLT_MAX) stays") {
  ExprContext c;
  const Expr lowest = c.constant(-flt_max());
  const Expr s = c.add(x_at(c, 0), x_at(c, 1));
  const Decision d = decide_equal(c, c.max(s, lowest), s, finite_f32("x"));
  INFO(d.reason);
  CHECK(!d.proved());
  // nor does an f64 input's, nor an input without a range
  DecideLimits f64;
  f64.input_ranges.push_back({"x", -Rational::from_f64_bits(0x7fefffffffffffffull), Rational::from_f64_bits(0x7fefffffffffffffull)});
  CHECK(!decide_equal(c, c.max(x_at(c, 0), lowest), x_at(c, 0), f64).proved());
  CHECK(!decide_equal(c, c.max(c.symbol("z", 0), lowest), c.symbol("z", 0), finite_f32("x")).proved());
  // an f16 input is above -65504 - 1, an f32 one is not
  DecideLimits f16;
  f16.input_ranges.push_back({"h", -Rational(65504), Rational(65504)});
  const Expr below = c.constant(Rational(-65505));
  CHECK(decide_equal(c, c.max(c.symbol("h", 0), below), c.symbol("h", 0), f16).proved());
  CHECK(!decide_equal(c, c.max(x_at(c, 0), below), x_at(c, 0), finite_f32("x")).proved());
}

TEST_CASE("layer norm: partial sums that other nodes share do not change the forms") {
  // The first compact forms made a let of any shared partial sum, and the
  // reference's mean became let + 3 symbols while the block's was one let.
  ExprContext c;
  const auto ref = layer_norm(c, 300, -1, Var::TwoPass);
  const auto opt = layer_norm(c, 300, 512, Var::SumOfSquares);
  Decider dec(c, norm_limits());
  for (int i : {0, 299}) {
    const Decision d = dec.decide(ref[std::size_t(i)], opt[std::size_t(i)]);
    INFO(d.reason);
    CHECK(d.proved());
  }
}

TEST_CASE("a weighted sum has no majority coefficient and is written out, as before") {
  ExprContext c;
  const int n = 40;
  auto weighted = [&](bool reversed) {
    Expr s = c.zero();
    for (int k = 0; k < n; ++k) {
      const int i = reversed ? n - 1 - k : k;
      s = c.add(s, c.mul(c.constant(i + 1), x_at(c, i)));
    }
    return c.func("sqrt", {c.mul(s, s)});
  };
  const Decision d = decide_equal(c, c.mul(weighted(false), x_at(c, 0)), c.mul(x_at(c, 0), weighted(true)));
  INFO(d.reason);
  CHECK(d.proved());
}
