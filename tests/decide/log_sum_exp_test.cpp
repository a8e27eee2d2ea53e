// log(e^C · y) = C + log(y): a log-sum-exp meets whatever maximum its
// exponentials were shifted by (docs/decide.md, "Opaque functions"), and
// nvcc's m * 1.44269504f beside a log2 reads as m / ln 2.
#include "tileverify/decide.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace tileverify;

namespace {

// Σ_j e^(x_j - shift)
Expr sum_exp(ExprContext& c, const std::vector<Expr>& x, Expr shift) {
  std::vector<Expr> terms;
  for (Expr v : x) terms.push_back(c.exp(c.sub(v, shift)));
  return c.add(terms);
}

std::vector<Expr> inputs(ExprContext& c, const char* name, int n) {
  std::vector<Expr> x;
  for (int j = 0; j < n; ++j) x.push_back(c.symbol(name, std::uint32_t(j)));
  return x;
}

}  // namespace

TEST_CASE("log-sum-exp: the shift by the maximum comes out of the logarithm") {
  ExprContext c;
  const std::vector<Expr> x = inputs(c, "x", 4);
  Expr m = c.max(x);
  Expr shifted = c.add(m, c.func("log", {sum_exp(c, x, m)}));
  Expr plain = c.func("log", {sum_exp(c, x, c.zero())});
  CHECK(decide_equal(c, shifted, plain).proved());
  // Any shift, not only the maximum: e^(x_j - x_0).
  CHECK(decide_equal(c, c.add(x[0], c.func("log", {sum_exp(c, x, x[0])})), plain).proved());
  // Shifted twice, then corrected once: wrong, and never proved.
  Expr twice = c.add(c.mul(c.constant(2), m), c.func("log", {sum_exp(c, x, m)}));
  CHECK(!decide_equal(c, twice, plain).proved());
  Expr uncorrected = c.func("log", {sum_exp(c, x, m)});
  Decision d = decide_equal(c, uncorrected, plain);
  CHECK(!d.proved());
}

TEST_CASE("log-sum-exp: only an exponential factor moves; coefficients and other factors stay") {
  ExprContext c;
  Expr x = c.symbol("x", 0), y = c.symbol("y", 0);
  // log(2 e^x) = x + log 2
  CHECK(decide_equal(c, c.func("log", {c.mul(c.constant(2), c.exp(x))}),
                     c.add(x, c.func("log", {c.constant(2)})))
            .proved());
  // log(y e^x) = x + log y
  CHECK(decide_equal(c, c.func("log", {c.mul(y, c.exp(x))}), c.add(x, c.func("log", {y}))).proved());
  // log(e^x + e^y) is not x + log(1 + e^y) (that would be log(1 + e^(y - x)))
  CHECK(!decide_equal(c, c.func("log", {c.add(c.exp(x), c.exp(y))}),
                      c.add(x, c.func("log", {c.add(c.one(), c.exp(y))})))
             .proved());
  // log(e^x / (1 + e^y)) = x - log(1 + e^y)... only through the quotient
  // rule, which is not used (log(a/b) = log a - log b needs a, b > 0): the
  // factor comes out, the quotient stays one atom.
  Expr q = c.div(c.exp(x), c.add(c.one(), c.exp(y)));
  CHECK(decide_equal(c, c.func("log", {q}), c.add(x, c.func("log", {c.div(c.one(), c.add(c.one(), c.exp(y)))})))
            .proved());
  // log1p: log1p(e^x - 1) is log(e^x) = x
  CHECK(decide_equal(c, c.func("log1p", {c.sub(c.exp(x), c.one())}), x).proved());
}

// Triton's attention stores m + log2(l) with m the maximum of the scores
// scaled by sm_scale · log2(e) and l = Σ_j 2^(s_j · sm_scale · log2(e) - m);
// nvcc's reference m' · 1.44269504f + log2f(Σ_j e^(s_j · sm_scale - m')) with
// m' the maximum of the scaled scores. log2(e) is nvcc's f32 0f3FB8AA3B.
TEST_CASE("log-sum-exp in base 2: Triton's form against nvcc's reference") {
  ExprContext c;
  const std::vector<Expr> s = inputs(c, "s", 4);
  Expr scale = c.symbol("sm_scale", 0);
  Expr log2e = c.constant(Rational::from_f32_bits(0x3FB8AA3Bu));
  Expr qk_scale = c.mul(scale, log2e);
  std::vector<Expr> t, scaled;
  for (Expr v : s) {
    t.push_back(c.mul(v, qk_scale));
    scaled.push_back(c.mul(v, scale));
  }
  Expr big_m = c.max(t);
  std::vector<Expr> p;
  for (Expr v : t) p.push_back(c.ex2(c.sub(v, big_m)));
  Expr triton = c.add(big_m, c.func("log2", {c.add(p)}));
  Expr m = c.max(scaled);
  Expr ref = c.add(c.mul(m, log2e), c.func("log2", {sum_exp(c, scaled, m)}));
  CHECK(decide_equal(c, triton, ref).proved());
  // The reference without log2(e) on its maximum: m + log2(l) mixes bases.
  Expr no_log2e = c.add(m, c.func("log2", {sum_exp(c, scaled, m)}));
  CHECK(!decide_equal(c, triton, no_log2e).proved());
  // Natural log instead of log2: differs by the factor ln 2.
  Expr natural = c.add(m, c.func("log", {sum_exp(c, scaled, m)}));
  CHECK(!decide_equal(c, triton, natural).proved());
}

// -use_fast_math's logf(u) is lg2.approx(u) · 0f3F317218. With the
// exponential factor out, lg2(1 + e^x) is (x + log(e^-x + 1)) / ln 2, a sum:
// the float ln 2 beside it still reads as ln 2 (softplus, examples/kernels/math).
TEST_CASE("log-sum-exp: fast-math logf of a shifted argument meets log1p") {
  ExprContext c;
  Expr x = c.symbol("x", 0);
  Expr ln2_f32 = c.constant(Rational::from_f32_bits(0x3F317218u));
  Expr fast = c.mul(ln2_f32, c.func("log2", {c.add(c.exp(x), c.one())}));
  CHECK(decide_equal(c, fast, c.func("log1p", {c.exp(x)})).proved());
  // Without a log2 beside it, a product keeps the float: 0f3F317218 · x is
  // not ln 2 · x.
  ExprContext d;
  Expr y = d.symbol("y", 0);
  CHECK(!decide_equal(d, d.mul(d.constant(Rational::from_f32_bits(0x3F317218u)), y), d.mul(d.ln2(), y)).proved());
}
