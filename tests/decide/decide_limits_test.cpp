// Every limit gives Unknown with a reason: never a crash, never a wrong answer.
#include "tileverify/decide.hpp"
#include "../../examples/workloads.hpp"

#include <doctest/doctest.h>

using namespace tileverify;
using namespace tileverify::workloads;

TEST_CASE("the term limit gives Unknown with a reason") {
  ExprContext c;
  Expr x = c.symbol("x", 0), y = c.symbol("y", 0), z = c.symbol("z", 0);
  Expr s = c.add({x, y, z});
  Expr lhs = c.pow(s, 3), rhs = c.mul({s, s, s});
  DecideLimits lim;
  lim.max_terms = 4;
  Decision d = decide_equal(c, lhs, rhs, lim);
  CHECK(d.verdict == Verdict::Unknown);
  CHECK(d.reason.find("term limit") != std::string::npos);
  // With the default limits the same identity is proved.
  CHECK(decide_equal(c, lhs, rhs).proved());
}

TEST_CASE("the power limit gives Unknown") {
  ExprContext c;
  Expr s = c.add(c.symbol("x", 0), c.symbol("y", 0));
  DecideLimits lim;
  lim.max_power = 8;
  Decision d = decide_equal(c, c.pow(s, 20), c.mul(c.pow(s, 10), c.pow(s, 10)), lim);
  CHECK(d.verdict == Verdict::Unknown);
  CHECK(d.reason.find("power") != std::string::npos);
}

TEST_CASE("the time limit gives Unknown") {
  ExprContext c;
  auto a = naive_softmax(c, 512);
  auto b = online_softmax(c, 512);
  DecideLimits lim;
  lim.timeout_seconds = 0;
  Decision d = decide_equal(c, a[0], b[0], lim);
  CHECK(d.verdict == Verdict::Unknown);
  CHECK(d.reason.find("time limit") != std::string::npos);
}

TEST_CASE("the case-split limit gives Unknown, not a guess") {
  ExprContext c;
  std::vector<Expr> lhs, rhs;
  for (int i = 0; i < 24; ++i) {
    Expr a = c.symbol("a", std::uint32_t(i)), b = c.symbol("b", std::uint32_t(i));
    lhs.push_back(c.add(c.max(a, b), c.min(a, b)));
    rhs.push_back(c.add(a, b));
  }
  Decision d = decide_equal(c, c.add(lhs), c.add(rhs));
  CHECK(d.verdict == Verdict::Unknown);
  CHECK(d.reason.find("cases") != std::string::npos);
}

TEST_CASE("division by an identically zero expression gives Unknown") {
  ExprContext c;
  Expr x = c.symbol("x", 0), y = c.symbol("y", 0);
  Decision d = decide_equal(c, c.div(x, c.sub(y, y)), x);
  CHECK(d.verdict == Verdict::Unknown);
}

TEST_CASE("infinities that reach the comparison give Unknown") {
  ExprContext c;
  Decision d = decide_equal(c, c.neg_inf(), c.symbol("x", 0));
  CHECK(d.verdict == Verdict::Unknown);
}

TEST_CASE("opaque functions: true identities outside the theory are Unknown, not Refuted") {
  ExprContext c;
  Expr x = c.symbol("x", 0);
  Expr sq = c.func("sqrt", {x});
  Decision d1 = decide_equal(c, c.mul(sq, sq), x);
  CHECK(d1.verdict == Verdict::Unknown);
  Decision d2 = decide_equal(c, c.func("log", {c.pow(x, 2)}), c.mul(c.constant(2), c.func("log", {x})));
  CHECK(d2.verdict == Verdict::Unknown);
  // Equal opaque applications are still equal.
  CHECK(decide_equal(c, c.add(sq, x), c.add(x, c.func("sqrt", {x}))).proved());
}

TEST_CASE("deep expression chains do not overflow the stack") {
  ExprContext c;
  c.set_flatten_limit(0);
  const int n = 200000;
  Expr fwd = c.zero(), bwd = c.zero();
  for (int i = 0; i < n; ++i) fwd = c.add(fwd, c.symbol("x", std::uint32_t(i)));
  for (int i = n - 1; i >= 0; --i) bwd = c.add(c.symbol("x", std::uint32_t(i)), bwd);
  CHECK(decide_equal(c, fwd, bwd).proved());
  CHECK(c.to_string(fwd, 100).size() <= 103);
}

TEST_CASE("an overall deadline: outputs not decided by then are Unknown, and progress is reported") {
  ExprContext c;
  auto a = naive_softmax(c, 32);
  auto b = online_softmax(c, 32);
  std::vector<std::pair<Expr, Expr>> pairs;
  for (std::size_t i = 0; i < a.size(); ++i) pairs.emplace_back(a[i], b[i]);
  DecideLimits lim;
  std::size_t calls = 0, last = 0;
  lim.progress = [&](std::size_t done, std::size_t total) {
    ++calls;
    CHECK(total == 32);
    CHECK(done == last + 1);
    last = done;
  };
  auto ok = decide_all(c, pairs, lim, 2);
  CHECK(calls == 32);
  for (const auto& d : ok) CHECK(d.proved());
  lim.progress = nullptr;
  lim.deadline = std::chrono::steady_clock::now();
  auto late = decide_all(c, pairs, lim, 2);
  for (const auto& d : late) {
    CHECK(d.unknown());
    CHECK(d.reason.find("time budget") != std::string::npos);
  }
}
