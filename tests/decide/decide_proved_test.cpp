// Identities the decider must prove (issue: foundation, tests "Proved").
#include "tileverify/decide.hpp"
#include "../../examples/workloads.hpp"

#include <doctest/doctest.h>

#include <functional>

using namespace tileverify;
using namespace tileverify::workloads;

namespace {

void require_all_proved(const ExprContext& c, const std::vector<Expr>& lhs, const std::vector<Expr>& rhs) {
  REQUIRE(lhs.size() == rhs.size());
  Decider dec(c);
  for (std::size_t i = 0; i < lhs.size(); ++i) {
    Decision d = dec.decide(lhs[i], rhs[i]);
    INFO("output " << i << ": " << d.reason);
    REQUIRE(d.verdict == Verdict::Proved);
  }
}

}  // namespace

TEST_CASE("softmax: naive equals online for N = 4 (VOLTA section 2)") {
  ExprContext c;
  require_all_proved(c, naive_softmax(c, 4), online_softmax(c, 4));
}

TEST_CASE("softmax: naive equals online for N = 128, running max chain M_1..M_128") {
  ExprContext c;
  require_all_proved(c, naive_softmax(c, 128), online_softmax(c, 128));
}

TEST_CASE("softmax: expf and -use_fast_math ex2(x * 0f3FB8AA3B) forms agree") {
  ExprContext c;
  require_all_proved(c, naive_softmax(c, 16, ExpForm::Exp), online_softmax(c, 16, ExpForm::FastMath));
}

TEST_CASE("softmax: decide_all over a thread pool gives the same verdicts") {
  ExprContext c;
  auto a = naive_softmax(c, 64);
  auto b = online_softmax(c, 64);
  std::vector<std::pair<Expr, Expr>> pairs;
  for (std::size_t i = 0; i < a.size(); ++i) pairs.emplace_back(a[i], b[i]);
  auto ds = decide_all(c, pairs, {}, 2);
  REQUIRE(ds.size() == 64);
  for (const auto& d : ds) CHECK(d.verdict == Verdict::Proved);
}

TEST_CASE("matmul: a dot product summed in two orders, and tiled, is the same") {
  ExprContext c;
  const int K = 32;
  auto term = [&](int k) { return c.mul(c.symbol("a", std::uint32_t(k)), c.symbol("b", std::uint32_t(k))); };
  Expr forward = c.zero(), backward = c.zero();
  for (int k = 0; k < K; ++k) forward = c.add(forward, term(k));
  for (int k = K - 1; k >= 0; --k) backward = c.add(backward, term(k));
  // Tiled: partial sums over tiles of 8, then the tiles summed as a tree.
  std::vector<Expr> partial;
  for (int t = 0; t < K; t += 8) {
    Expr p = c.zero();
    for (int k = t; k < t + 8; ++k) p = c.add(p, term(k));
    partial.push_back(p);
  }
  Expr tiled = c.add(c.add(partial[0], partial[1]), c.add(partial[2], partial[3]));
  c.set_flatten_limit(0);  // nothing flattened at construction: the decider does all the work
  Expr nested = c.zero();
  for (int k = 0; k < K; k += 2) nested = c.add(nested, c.add(term(k + 1), term(k)));
  require_all_proved(c, {forward, forward, forward}, {backward, tiled, nested});
}

TEST_CASE("matmul: a 4x4x4 product equals its transpose-of-transposes form") {
  ExprContext c;
  const int n = 4;
  auto A = [&](int i, int k) { return c.symbol("A", std::uint32_t(i * n + k)); };
  auto B = [&](int k, int j) { return c.symbol("B", std::uint32_t(k * n + j)); };
  std::vector<Expr> lhs, rhs;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      Expr s = c.zero(), t = c.zero();
      for (int k = 0; k < n; ++k) s = c.add(s, c.mul(A(i, k), B(k, j)));
      // (B^T A^T)^T computed with the operands of each product swapped.
      for (int k = n - 1; k >= 0; --k) t = c.add(c.mul(B(k, j), A(i, k)), t);
      lhs.push_back(s);
      rhs.push_back(t);
    }
  require_all_proved(c, lhs, rhs);
}

TEST_CASE("attention: FA1's per-block normalization cancels l_old without expanding") {
  // keep * o = l_old e^{..} * x / l_old is one flattened product; multiplying
  // its factors in order expanded l_old * x before meeting 1/l_old, and the
  // normal form doubled with every block (the fa1 example hit the term limit).
  ExprContext c;
  AttentionShape s;
  s.keys = 256;
  s.dims = 2;
  s.block = 16;
  auto a = attention_naive(c, s);
  auto b = attention_fa1(c, s);
  DecideLimits lim;
  lim.max_terms = 100'000;
  lim.timeout_seconds = 30;
  Decider dec(c, lim);
  for (std::size_t i = 0; i < a.size(); ++i) {
    Decision d = dec.decide(a[i], b[i]);
    INFO("output " << i << ": " << d.reason);
    CHECK(d.verdict == Verdict::Proved);
  }
}

TEST_CASE("max(a, b) + min(a, b) = a + b needs a case split and is proved") {
  ExprContext c;
  Expr a = c.symbol("a", 0), b = c.symbol("b", 0);
  Decision d = decide_equal(c, c.add(c.max(a, b), c.min(a, b)), c.add(a, b));
  INFO(d.reason);
  CHECK(d.verdict == Verdict::Proved);
  CHECK(d.stats.cases >= 2);
}

TEST_CASE("exp rules: exp(a)*exp(b) = exp(a+b), e^{x+1} = e * e^x, 2^3 = 8") {
  ExprContext c;
  Expr x = c.symbol("x", 0), y = c.symbol("y", 0);
  CHECK(decide_equal(c, c.mul(c.exp(x), c.exp(y)), c.exp(c.add(x, y))).proved());
  CHECK(decide_equal(c, c.exp(c.add(x, c.one())), c.mul(c.exp(c.one()), c.exp(x))).proved());
  CHECK(decide_equal(c, c.ex2(c.add(x, c.constant(3))), c.mul(c.constant(8), c.ex2(x))).proved());
  Expr half = c.constant(Rational(1, 2));
  CHECK(decide_equal(c, c.mul(c.ex2(half), c.ex2(half)), c.constant(2)).proved());
  CHECK(decide_equal(c, c.div(c.one(), c.exp(x)), c.exp(c.neg(x))).proved());
}

TEST_CASE("nvcc's split log2(e) pair and the fp32 constant both read as 1/ln2") {
  ExprContext c;
  Expr x = c.symbol("x", 0);
  Expr hi = c.constant(Rational::from_f32_bits(0x3FB8AA3Bu));
  Expr lo = c.constant(Rational::from_f32_bits(0x32A57060u));
  Expr split = c.ex2(c.add(c.mul(x, hi), c.mul(x, lo)));
  CHECK(decide_equal(c, split, c.exp(x)).proved());
  // A power of two times the constant too: ex2(x * (log2e / 8)) = exp(x / 8).
  Expr eighth = c.constant(Rational::from_f32_bits(0x3FB8AA3Bu) * Rational(1, 8));
  CHECK(decide_equal(c, c.ex2(c.mul(x, eighth)), c.exp(c.mul(x, c.constant(Rational(1, 8))))).proved());
}

// The reading of a coefficient is remembered per (coefficient, power of ln2)
// in a Decider. With c = float log2e: c·v·ln2 reads as v, c·v·ln2^2 as v·ln2,
// c·v/ln2 stays as it is (the rule for negative powers divides by ln 2).
// Asked in both orders of one Decider: a memo keyed by the coefficient alone
// would prove the false pair, one that kept a result monomial would give the
// second input the first one's atom, one that kept the resulting power would
// read c·v·ln2^2 as v.
TEST_CASE("known-constant readings are remembered per coefficient and power of ln2") {
  ExprContext c;
  Expr x = c.symbol("x", 0), y = c.symbol("y", 0), z = c.symbol("z", 0), w = c.symbol("w", 0);
  Expr hi = c.constant(Rational::from_f32_bits(0x3FB8AA3Bu));
  Expr inv_ln2 = c.pow(c.ln2(), -1);
  std::vector<std::function<bool(Decider&)>> cases = {
      [&](Decider& d) { return d.decide(c.ex2(c.mul(hi, x)), c.exp(x)).proved(); },
      [&](Decider& d) { return d.decide(c.ex2(c.mul(hi, y)), c.exp(y)).proved(); },
      // e^(c z / ln2) against e^(z / ln2^2): c is not 1/ln2 over the reals
      [&](Decider& d) { return !d.decide(c.exp(c.mul({hi, z, inv_ln2})), c.exp(c.mul({z, inv_ln2, inv_ln2}))).proved(); },
      [&](Decider& d) { return d.decide(c.ex2(c.mul({hi, w, c.ln2()})), c.ex2(w)).proved(); },
  };
  for (int order = 0; order < 2; ++order) {
    Decider dec(c);
    for (std::size_t k = 0; k < cases.size(); ++k) {
      const std::size_t i = order == 0 ? k : cases.size() - 1 - k;
      INFO("order " << order << ", case " << i);
      CHECK(cases[i](dec));
    }
  }
}

// Integer multiples of ln 2 in a constant exponent move into the
// coefficient as powers of two; the split is remembered per exponent inside
// a Decider, and each term still multiplies its own coefficient by it.
TEST_CASE("powers of two from constant exponents, asked again in one Decider") {
  ExprContext c;
  Expr x = c.symbol("x", 0), y = c.symbol("y", 0), z = c.symbol("z", 0);
  auto k = [&](const Rational& v) { return c.constant(v); };
  Decider dec(c);
  for (int round = 0; round < 2; ++round) {
    INFO("round " << round);
    // nvcc's expf: 2^(x - 126) * 2^126, with 3 and 5 in front
    CHECK(dec.decide(c.mul({k(3), c.ex2(c.sub(x, k(126))), c.ex2(k(126))}), c.mul(k(3), c.ex2(x))).proved());
    CHECK(dec.decide(c.mul(c.ex2(k(-126)), c.ex2(k(126))), c.one()).proved());
    CHECK(dec.decide(c.mul(k(5), c.ex2(c.add(y, k(Rational(253, 2))))),
                     c.mul({k(Rational(5) * Rational::pow2(126)), c.ex2(c.add(y, k(Rational(1, 2))))}))
              .proved());
    // two halves meet in a product whose coefficient is not 1: 3 * 2^(1/2) * 2^(1/2) = 6
    Expr half = k(Rational(1, 2));
    CHECK(dec.decide(c.mul({k(3), c.ex2(c.add(y, half)), c.ex2(half)}), c.mul(k(6), c.ex2(y))).proved());
    CHECK_FALSE(dec.decide(c.mul({k(3), c.ex2(c.add(z, half)), c.ex2(half)}), c.mul(k(2), c.ex2(z))).proved());
    CHECK_FALSE(dec.decide(c.ex2(c.add(z, k(126))), c.mul(k(Rational::pow2(125)), c.ex2(z))).proved());
    CHECK_FALSE(dec.decide(c.mul(k(3), c.ex2(c.add(z, k(126)))), c.mul(k(Rational::pow2(126)), c.ex2(z))).proved());
  }
}

// Products and quotients of two coefficients past 64 bits are remembered
// per ordered pair inside a Decider (2^-100 * 2^-90, 2^-90 / 2^-100 and
// 2^-100 / 2^-90 are three different results).
TEST_CASE("coefficients past 64 bits multiply and divide exactly, asked again in one Decider") {
  ExprContext c;
  Expr x = c.symbol("x", 0), y = c.symbol("y", 0);
  auto k = [&](const Rational& v) { return c.constant(v); };
  Expr a = c.ex2(c.sub(x, k(100))), b = c.ex2(c.sub(y, k(90)));  // 2^-100 e^.., 2^-90 e^..
  Decider dec(c);
  for (int round = 0; round < 2; ++round) {
    INFO("round " << round);
    CHECK(dec.decide(c.mul(a, b), c.mul(k(Rational::pow2(-190)), c.ex2(c.add(x, y)))).proved());
    CHECK_FALSE(dec.decide(c.mul(a, b), c.mul(k(Rational::pow2(-189)), c.ex2(c.add(x, y)))).proved());
    CHECK(dec.decide(c.add(a, b), c.mul(k(Rational::pow2(-100)), c.add(c.ex2(x), c.mul(k(1024), c.ex2(y))))).proved());
    CHECK(dec.decide(c.add(b, a), c.mul(k(Rational::pow2(-90)), c.add(c.ex2(y), c.mul(k(Rational(1, 1024)), c.ex2(x))))).proved());
    CHECK_FALSE(dec.decide(c.add(a, b), c.mul(k(Rational::pow2(-100)), c.add(c.ex2(x), c.mul(k(512), c.ex2(y))))).proved());
    CHECK(dec.decide(c.div(a, b), c.mul(k(Rational(1, 1024)), c.ex2(c.sub(x, y)))).proved());
    CHECK(dec.decide(c.div(b, a), c.mul(k(1024), c.ex2(c.sub(y, x)))).proved());
    // the larger addend is the base the other is rebased onto: both ways
    Expr one_z = c.add(c.one(), c.symbol("z", 0));
    // (right sides: small coefficients inside, one power of two outside)
    CHECK(dec.decide(c.add(c.mul(a, one_z), b),
                     c.mul(k(Rational::pow2(-100)), c.add(c.mul(c.ex2(x), one_z), c.mul(k(1024), c.ex2(y)))))
              .proved());
    CHECK(dec.decide(c.add(c.mul(b, one_z), a),
                     c.mul(k(Rational::pow2(-100)), c.add(c.mul({k(1024), c.ex2(y), one_z}), c.ex2(x))))
              .proved());
  }
}

TEST_CASE("rational functions: equal denominators up to a factor are recognized") {
  ExprContext c;
  Expr x = c.symbol("x", 0), y = c.symbol("y", 0);
  Expr s = c.add(x, y);
  // x/(x+y) + y/(x+y) = 1
  CHECK(decide_equal(c, c.add(c.div(x, s), c.div(y, s)), c.one()).proved());
  // (2x)/(2x+2y) = x/(x+y)
  Expr two = c.constant(2);
  CHECK(decide_equal(c, c.div(c.mul(two, x), c.add(c.mul(two, x), c.mul(two, y))), c.div(x, s)).proved());
  // 1/x + 1/y = (x+y)/(xy): needs cross-multiplication
  CHECK(decide_equal(c, c.add(c.pow(x, -1), c.pow(y, -1)), c.div(s, c.mul(x, y))).proved());
  // (x+y)^2 = x^2 + 2xy + y^2
  CHECK(decide_equal(c, c.pow(s, 2), c.add({c.pow(x, 2), c.mul({two, x, y}), c.pow(y, 2)})).proved());
}

TEST_CASE("rsqrt(s) is 1 / sqrt(s): x * rsqrt(s) = x / sqrt(s)") {
  ExprContext c;
  Expr x0 = c.symbol("x", 0), x1 = c.symbol("x", 1);
  Expr s = c.add(c.add(c.mul(x0, x0), c.mul(x1, x1)), c.constant(Rational(1, 100000)));
  CHECK(decide_equal(c, c.mul(x0, c.func("rsqrt", {s})), c.div(x0, c.func("sqrt", {s}))).proved());
  CHECK(decide_equal(c, c.mul(c.func("rsqrt", {s}), c.func("sqrt", {s})), c.one()).proved());
  CHECK(decide_equal(c, c.func("rsqrt", {s}), c.func("sqrt", {s})).refuted());
}

TEST_CASE("sums of the same terms in another order are proved without normal forms, and only those") {
  ExprContext c;
  std::vector<Expr> x;
  for (std::uint32_t i = 0; i < 64; ++i) x.push_back(c.mul(c.symbol("a", i), c.symbol("b", i)));
  Expr loop = c.zero();
  for (Expr t : x) loop = c.add(loop, t);
  std::vector<Expr> level = x;  // a tree reduction, with a scaled copy of one half
  while (level.size() > 1) {
    std::vector<Expr> next;
    for (std::size_t i = 0; i + 1 < level.size(); i += 2) next.push_back(c.add(level[i], level[i + 1]));
    level = next;
  }
  Decision d = decide_equal(c, loop, level[0]);
  CHECK(d.proved());
  CHECK(d.reason == "both sides add up the same terms with the same coefficients");
  // 3 (u + v) - 2 u - 2 v against u + v: the constant multiples cancel.
  Expr u = c.symbol("u", 0), v = c.symbol("v", 0);
  Expr s = c.add(u, v);
  Expr scaled = c.add(c.mul(c.constant(3), s), c.add(c.mul(c.constant(-2), u), c.mul(c.constant(-2), v)));
  CHECK(decide_equal(c, scaled, s).reason == "both sides add up the same terms with the same coefficients");
  // One coefficient off, or a constant more: not this proof, and refuted.
  Expr off = c.add(scaled, v);
  CHECK(decide_equal(c, off, s).refuted());
  CHECK(decide_equal(c, c.add(loop, c.constant(1)), level[0]).refuted());
  // Equal over the reals, but not term by term: the full procedure proves it.
  Expr a0 = c.symbol("a", 0), b0 = c.symbol("b", 0);
  Decision expanded = decide_equal(c, c.add(x[0], c.mul(a0, a0)), c.mul(a0, c.add(a0, b0)));
  CHECK(expanded.proved());
  CHECK(expanded.reason != "both sides add up the same terms with the same coefficients");
}

TEST_CASE("a sum DAG that shares its sums is still decided (the term reading gives up, normal forms do not)") {
  // s_{k+1} = s_k + 2 (s_k + y_k): read term by term, the early sums are
  // reached exponentially often; the reading stops and normal forms decide.
  ExprContext c;
  Expr s = c.symbol("x", 0), t = s;
  for (std::uint32_t k = 0; k < 30; ++k) {
    Expr y = c.symbol("y", k);
    s = c.add(s, c.mul(c.constant(2), c.add(s, y)));
    t = c.add(c.mul(c.constant(3), t), c.mul(c.constant(2), y));
  }
  Decision d = decide_equal(c, s, t);
  CHECK(d.proved());
  CHECK(d.reason == "the exp-polynomial normal forms are identical");
}

TEST_CASE("decide_all: pairs that are one node on both sides are proved, with progress reported for each") {
  ExprContext c;
  Expr x = c.symbol("x", 0), y = c.symbol("y", 0);
  Expr e = c.div(c.exp(x), c.add(c.exp(x), c.exp(y)));
  DecideLimits limits;
  std::size_t reported = 0;
  limits.progress = [&](std::size_t done, std::size_t total) {
    CHECK(total == 3);
    reported = done;
  };
  auto ds = decide_all(c, {{e, e}, {x, x}, {y, y}}, limits, 2);
  for (const Decision& d : ds) {
    CHECK(d.proved());
    CHECK(d.reason == "the two sides are the same expression");
  }
  CHECK(reported == 3);
}

TEST_CASE("decide_all: outputs that are a proved output with its inputs renamed are proved by that renaming") {
  ExprContext c;
  // C[i][j] = sum_k A[i][k] B[k][j], summed forwards against backwards: 16
  // terms, more than a sum flattens (8), so the two orders are two nodes.
  std::vector<std::pair<Expr, Expr>> pairs;
  for (std::uint32_t i = 0; i < 4; ++i)
    for (std::uint32_t j = 0; j < 4; ++j) {
      Expr fwd = c.zero(), bwd = c.zero();
      for (std::uint32_t k = 0; k < 16; ++k) {
        fwd = c.add(fwd, c.mul(c.symbol("A", i * 16 + k), c.symbol("B", k * 4 + j)));
        bwd = c.add(bwd, c.mul(c.symbol("A", i * 16 + 15 - k), c.symbol("B", (15 - k) * 4 + j)));
      }
      REQUIRE(fwd != bwd);
      pairs.emplace_back(fwd, bwd);
    }
  auto ds = decide_all(c, pairs, {}, 1);
  int by_renaming = 0;
  for (const Decision& d : ds) {
    CHECK(d.proved());
    by_renaming += d.reason.find("inputs renamed") != std::string::npos;
  }
  CHECK(by_renaming >= 12);  // a real proof per shape, and the shapes are few
}

TEST_CASE("decide_all: a renaming must fix what the two pairs share (a wrong shortcut would prove a falsehood)") {
  ExprContext c;
  Expr x0 = c.symbol("x", 0), x1 = c.symbol("x", 1);
  Expr shared = c.exp(c.mul(c.constant(2), x0));            // exp(2 x0), in both pairs
  Expr sq0 = c.mul(c.exp(x0), c.exp(x0)), sq1 = c.mul(c.exp(x1), c.exp(x1));
  // exp(x0)^2 = exp(2 x0) holds; exp(x1)^2 = exp(2 x0) does not, although it is
  // the first pair with x0 renamed to x1 everywhere but inside the shared node.
  auto ds = decide_all(c, {{sq0, shared}, {sq1, shared}}, {}, 1);
  CHECK(ds[0].proved());
  CHECK(ds[1].refuted());
}

TEST_CASE("decide_all: a renaming names each symbol by its tensor too (A[0] and B[0] move separately)") {
  // Pair 1 is pair 0 with A[0] -> A[1] and B[0] -> B[1], but the node both
  // pairs share contains B[0], so it is no renaming: exp(B1)^2 = exp(2 B0) is
  // false. A substitution that named symbols by element index alone would
  // record one binding for A[0] and B[0] and miss that B moves.
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    ExprContext c;
    Expr a0 = c.symbol("A", 0), a1 = c.symbol("A", 1), b0 = c.symbol("B", 0), b1 = c.symbol("B", 1);
    Expr shared = c.exp(c.mul(c.constant(2), b0));
    auto lhs = [&](Expr a, Expr b) { return c.add(c.mul(c.exp(b), c.exp(b)), a); };
    auto ds = decide_all(c, {{lhs(a0, b0), c.add(shared, a0)}, {lhs(a1, b1), c.add(shared, a1)}}, {}, threads);
    CHECK(ds[0].proved());
    CHECK(ds[1].refuted());
  }
}

TEST_CASE("decide_all: a renaming needs one image per symbol, also where an operand repeats") {
  ExprContext c;
  Expr x0 = c.symbol("x", 0), x1 = c.symbol("x", 1), x2 = c.symbol("x", 2), x3 = c.symbol("x", 3);
  // Pair 0: x0 * x0 = x0^2 holds. Pair 1 has its shape, but x2 * x3 is no
  // renaming of x0 * x0 (x0 would need two images) and x2 * x3 = x2^2 is false.
  Expr lhs0 = c.add(c.mul(x0, x0), x1), rhs0 = c.add(c.pow(x0, 2), x1);
  Expr lhs1 = c.add(c.mul(x2, x3), x1), rhs1 = c.add(c.pow(x2, 2), x1);
  for (unsigned threads : {1u, 2u}) {
    auto ds = decide_all(c, {{lhs0, rhs0}, {lhs1, rhs1}}, {}, threads);
    CHECK(ds[0].proved());
    CHECK(ds[1].refuted());
  }
}

TEST_CASE("decide_all: a renaming may reorder the operands of sums and products") {
  // Row 0 loads q before k, row 1 k before q (as a kernel that loads a K tile
  // once and then walks the rows of Q does): handles, and so the order in
  // which each product keeps its operands, differ between the rows.
  ExprContext c;
  auto row = [&](std::uint32_t i, bool q_first) {
    std::vector<Expr> q, k;
    for (std::uint32_t d = 0; d < 4; ++d) {
      if (q_first) q.push_back(c.symbol("q", i * 4 + d));
      k.push_back(c.symbol("k", d));
      if (!q_first) q.push_back(c.symbol("q", i * 4 + d));
    }
    Expr fwd = c.zero(), bwd = c.zero();
    for (std::uint32_t d = 0; d < 4; ++d) {
      fwd = c.add(fwd, c.mul(q[d], k[d]));
      bwd = c.add(bwd, c.mul(k[3 - d], q[3 - d]));
    }
    return std::make_pair(c.exp(fwd), c.exp(bwd));
  };
  std::vector<std::pair<Expr, Expr>> pairs{row(0, true), row(1, false), row(2, false)};
  // Row 3 has their shape but is false: its right side is row 1's.
  pairs.emplace_back(row(3, false).first, pairs[1].second);
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    auto ds = decide_all(c, pairs, {}, threads);
    CHECK(ds[0].proved());
    CHECK(ds[0].reason.find("inputs renamed") == std::string::npos);
    for (int i : {1, 2}) {
      CAPTURE(i);
      CHECK(ds[i].proved());
      CHECK(ds[i].reason.find("inputs renamed") != std::string::npos);
    }
    CHECK(ds[3].refuted());
  }
}

TEST_CASE("decide_all: a renaming that swaps two operands that look alike (two products) is still found") {
  // Both outputs add x_a * y_a and exp(x_k) * y_k, made in the other order
  // in the second: its sum lists them the other way round. Paired by
  // position the two products (each of two operands) do not match; paired
  // by shape they do.
  ExprContext c;
  Expr two = c.constant(2);
  auto out = [&](std::uint32_t a, std::uint32_t k, bool product_first) {
    Expr xa = c.symbol("x", a), ya = c.symbol("y", a), xk = c.symbol("x", k), yk = c.symbol("y", k);
    Expr p, q;
    if (product_first) p = c.mul(xa, ya);
    q = c.mul(c.exp(xk), yk);
    if (!product_first) p = c.mul(xa, ya);
    // exp(x_k) written as exp(2 x_k) / exp(x_k) on the right
    Expr q_again = c.mul(c.mul(c.exp(c.mul(two, xk)), c.pow(c.exp(xk), -1)), yk);
    return std::make_pair(c.add(p, q), c.add(p, q_again));
  };
  std::vector<std::pair<Expr, Expr>> pairs{out(0, 1, true), out(2, 3, false)};
  REQUIRE(c.children(pairs[0].first)[0] != c.children(pairs[1].first)[1]);  // the orders differ
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    auto ds = decide_all(c, pairs, {}, threads);
    CHECK(ds[0].proved());
    CHECK(ds[1].proved());
    CHECK(ds[1].reason.find("inputs renamed") != std::string::npos);
  }
}

TEST_CASE("decide_all: renamings checked in parallel chain only through proved outputs") {
  ExprContext c;
  std::vector<std::pair<Expr, Expr>> pairs;
  Expr two = c.constant(2);  // first, so that every 2*x lists its operands in one order
  for (std::uint32_t k = 0; k < 64; ++k) {
    Expr x = c.symbol("x", k);
    // Outputs 20 and 21 have the shape of the others but are false
    // (exp(x20)^2 against exp(2 x0)), and 21 is 20 renamed: a chain through a
    // refuted output must not prove it.
    Expr rhs_arg = k == 20 ? c.symbol("x", 0) : k == 21 ? c.symbol("x", 1) : x;
    pairs.emplace_back(c.mul(c.exp(x), c.exp(x)), c.exp(c.mul(two, rhs_arg)));
  }
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    auto ds = decide_all(c, pairs, {}, threads);
    int by_renaming = 0;
    for (std::uint32_t k = 0; k < 64; ++k) {
      CAPTURE(k);
      if (k == 20 || k == 21) {
        CHECK(ds[k].refuted());
      } else {
        CHECK(ds[k].proved());
        by_renaming += ds[k].reason.find("inputs renamed") != std::string::npos;
      }
    }
    CHECK(by_renaming == 61);  // all but the representative and the false ones
  }
}

TEST_CASE("decide_all: with stop_at_first_refuted, the first refuted output is found whatever the threads") {
  // Outputs of different shapes (no renamings): output k sums k + 2 inputs
  // forwards against backwards; outputs 40 and 41 drop a term.
  ExprContext c;
  std::vector<std::pair<Expr, Expr>> pairs;
  for (std::uint32_t k = 0; k < 64; ++k) {
    Expr fwd = c.zero(), bwd = c.zero();
    for (std::uint32_t i = 0; i < k + 2; ++i) {
      fwd = c.add(fwd, c.mul(c.symbol("a", i), c.symbol("b", i)));
      std::uint32_t j = k + 1 - i;
      if ((k == 40 || k == 41) && j == 0) continue;
      bwd = c.add(bwd, c.mul(c.symbol("a", j), c.symbol("b", j)));
    }
    pairs.emplace_back(fwd, bwd);
  }
  DecideLimits stop;
  stop.stop_at_first_refuted = true;
  for (unsigned threads : {1u, 2u, 3u}) {
    CAPTURE(threads);
    auto ds = decide_all(c, pairs, stop, threads);
    for (std::uint32_t k = 0; k < 40; ++k) CHECK(ds[k].proved());
    CHECK(ds[40].refuted());
  }
}

TEST_CASE("decide_all over two contexts: renamings are checked in each, and only decided outputs are copied") {
  // The two kernels of a pair evaluated into separate contexts: C[i][j] =
  // sum_k A[i][k] B[k][j] forwards in one, backwards in the other, plus two
  // false outputs of the same shape. `opt` makes its symbols in another
  // order and has a symbol of its own.
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    ExprContext ref, opt;
    opt.symbol("unused_by_ref", 0);
    for (std::uint32_t k = 8; k-- > 0;) opt.symbol("B", k * 4);
    std::vector<std::pair<Expr, Expr>> pairs;
    for (std::uint32_t i = 0; i < 4; ++i)
      for (std::uint32_t j = 0; j < 4; ++j) {
        Expr fwd = ref.zero(), bwd = opt.zero();
        for (std::uint32_t k = 0; k < 8; ++k) {
          fwd = ref.add(fwd, ref.mul(ref.symbol("A", i * 8 + k), ref.symbol("B", k * 4 + j)));
          // Output (3, 3) takes B[0][0] for B[0][3]: the same shape, false.
          const std::uint32_t b = i == 3 && j == 3 && k == 7 ? 0 : (7 - k) * 4 + j;
          bwd = opt.add(bwd, opt.mul(opt.symbol("A", i * 8 + 7 - k), opt.symbol("B", b)));
        }
        pairs.emplace_back(fwd, bwd);
      }
    // Output 16: exp(x0)^2 against exp(2 x0); output 17: exp(x1)^2 against the
    // same node exp(2 x0), which is output 16 renamed everywhere but in the
    // node the two share: false.
    Expr shared = opt.exp(opt.mul(opt.constant(2), opt.symbol("x", 0)));
    for (std::uint32_t k : {0u, 1u}) {
      Expr x = ref.symbol("x", k);
      pairs.emplace_back(ref.mul(ref.exp(x), ref.exp(x)), shared);
    }
    ExprContext& here = ref;  // decide_all copies into it
    std::vector<Expr> imported;
    auto ds = decide_all(here, opt, pairs, imported, {}, threads);
    REQUIRE(ds.size() == pairs.size());
    int by_renaming = 0;
    for (std::size_t i = 0; i < 16; ++i) {
      CAPTURE(i);
      if (i == 15) {
        CHECK(ds[i].refuted());
        continue;
      }
      CHECK(ds[i].proved());
      by_renaming += ds[i].reason.find("inputs renamed") != std::string::npos;
    }
    CHECK(by_renaming >= 12);
    CHECK(ds[16].proved());
    CHECK(ds[17].refuted());
    // Renamed outputs were not copied; decided ones were, and their
    // counterexamples name this context's symbols.
    std::size_t copied = 0;
    for (std::size_t i = 0; i < 16; ++i) copied += imported[pairs[i].second.id].valid();
    CHECK(copied < 8);
    CHECK(imported[pairs[15].second.id].valid());
    CHECK_FALSE(imported[opt.symbol("unused_by_ref", 0).id].valid());
    CHECK(here.to_string(imported[pairs[17].second.id]) == "exp(2*x[0])");
    CHECK_FALSE(ds[15].counterexample.inputs.values.empty());
  }
}
