#include "tileverify/expr.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <stdexcept>
#include <set>
#include <vector>

using namespace tileverify;

TEST_CASE("structurally equal expressions share one handle") {
  ExprContext c;
  Expr x = c.symbol("x", 0), y = c.symbol("x", 1);
  CHECK(c.symbol("x", 0) == x);
  CHECK(c.symbol("y", 0) != x);
  CHECK(c.add(x, y) == c.add(y, x));
  CHECK(c.mul(x, y) == c.mul(y, x));
  CHECK(c.exp(c.sub(x, y)) == c.exp(c.sub(x, y)));
  CHECK(c.constant(Rational(2, 4)) == c.constant(Rational(1, 2)));
}

TEST_CASE("constructors canonicalize cheaply") {
  ExprContext c;
  Expr x = c.symbol("x", 0), y = c.symbol("x", 1), z = c.symbol("x", 2);
  CHECK(c.add(x, c.zero()) == x);
  CHECK(c.mul(x, c.one()) == x);
  CHECK(c.mul(x, c.zero()) == c.zero());
  CHECK(c.add(c.add(x, y), z) == c.add(x, c.add(y, z)));  // flattened and sorted
  CHECK(c.children(c.add(c.add(x, y), z)).size() == 3);
  CHECK(c.add(c.constant(2), c.add(x, c.constant(3))) == c.add(x, c.constant(5)));
  CHECK(c.mul(c.constant(2), c.mul(x, c.constant(3))) == c.mul(c.constant(6), x));
  CHECK(c.neg(c.neg(x)) == x);
  CHECK(c.sub(x, x) == c.zero());
  CHECK(c.add(x, x) == c.mul(c.constant(2), x));
  CHECK(c.add({x, y, c.neg(x)}) == y);
  CHECK(c.max(c.neg_inf(), x) == x);
  CHECK(c.max(x, x) == x);
  CHECK(c.max(c.max(x, y), c.max(y, x)) == c.max(x, y));
  CHECK(c.min(c.pos_inf(), x) == x);
  CHECK(c.max(c.constant(1), c.constant(3)) == c.constant(3));
  CHECK(c.exp(c.zero()) == c.one());
  CHECK(c.exp(c.neg_inf()) == c.zero());
  CHECK(c.add(c.neg_inf(), x) == c.neg_inf());
  // An infinity times known nonzero constants is an infinity, so that
  // Triton's padding lanes, 2^((-inf - m) * log2 e), are 0 in the sums they join.
  CHECK(c.mul(c.constant(Rational(3, 2)), c.neg_inf()) == c.neg_inf());
  CHECK(c.mul(c.constant(-2), c.neg_inf()) == c.pos_inf());
  CHECK(c.mul({c.neg_inf(), c.ln2(), c.constant(Rational(7, 5))}) == c.neg_inf());
  CHECK(c.ex2(c.mul(c.sub(c.neg_inf(), x), c.constant(Rational(3, 2)))) == c.zero());
  CHECK(c.mul(x, c.neg_inf()) != c.neg_inf());  // the sign of x is unknown
  CHECK(c.pow(c.pow(x, 2), 3) == c.pow(x, 6));
  CHECK(c.pow(x, 1) == x);
  CHECK(c.pow(c.constant(2), -2) == c.constant(Rational(1, 4)));
  CHECK(c.ex2(c.constant(3)) == c.constant(8));
  CHECK(c.select(Cmp::LT, x, y, z, z) == z);
  CHECK(c.select(Cmp::LT, c.one(), c.constant(2), x, y) == x);
}

TEST_CASE("the flatten limit keeps long chains from being copied over and over") {
  ExprContext c;
  c.set_flatten_limit(4);
  Expr s = c.zero();
  for (int i = 0; i < 20; ++i) s = c.add(s, c.symbol("x", std::uint32_t(i)));
  CHECK(c.children(s).size() <= 5);
}

TEST_CASE("parent counts see each distinct user once") {
  ExprContext c;
  Expr x = c.symbol("x", 0), y = c.symbol("x", 1);
  CHECK(c.parent_count(x) == 0);
  c.mul(x, x);
  c.add(x, y);
  c.add(x, y);  // interned: no new user
  CHECK(c.parent_count(x) == 2);
  CHECK(c.parent_count(y) == 1);
}

TEST_CASE("parent counts stop at kManyParents: a widely used node never reads as unused") {
  ExprContext c;
  Expr x = c.symbol("x", 0);
  for (std::uint32_t i = 0; i < 300; ++i) c.mul(x, c.symbol("y", i));
  CHECK(c.parent_count(x) == ExprContext::kManyParents);
  c.add(x, c.symbol("y", 0));
  CHECK(c.parent_count(x) == ExprContext::kManyParents);
}

TEST_CASE("hash() is the whole hash a node was interned with, after the tables grow") {
  ExprContext c;
  std::vector<Expr> built;
  for (std::uint32_t i = 0; i < 5000; ++i) built.push_back(c.add(c.symbol("a", i), c.mul(c.symbol("b", i), c.symbol("b", i + 1))));
  // Equal nodes hash equally, distinct ones (almost surely) not, with bits in
  // both halves (the node keeps the lower half; the table slot the upper).
  std::set<std::size_t> seen;
  bool upper = false;
  for (std::uint32_t i = 0; i < 5000; ++i) {
    CHECK(c.hash(built[i]) == c.hash(c.add(c.symbol("a", i), c.mul(c.symbol("b", i), c.symbol("b", i + 1)))));
    seen.insert(c.hash(built[i]));
    upper = upper || (c.hash(built[i]) >> 32) != 0;
  }
  CHECK(seen.size() == 5000);
  CHECK(upper);
}

TEST_CASE("select: comparisons with infinities fold, and a > b ? a : b is max(a, b)") {
  ExprContext c;
  Expr x0 = c.symbol("x", 0), x1 = c.symbol("x", 1), ninf = c.neg_inf(), pinf = c.pos_inf();
  Expr e = c.exp(c.add(x0, x1));
  // m = -INFINITY; if (x > m) m = x;
  CHECK(c.select(Cmp::GT, x0, ninf, x0, ninf) == x0);
  CHECK(c.select(Cmp::GT, e, ninf, x1, ninf) == x1);
  CHECK(c.select(Cmp::LT, x0, ninf, x1, x0) == x0);
  CHECK(c.select(Cmp::LE, x0, pinf, x1, x0) == x1);
  CHECK(c.select(Cmp::GT, ninf, x0, x1, x0) == x0);
  CHECK(c.select(Cmp::EQ, ninf, ninf, x1, x0) == x1);
  CHECK(c.select(Cmp::GT, ninf, ninf, x1, x0) == x0);
  // a value that may itself be -inf is not folded
  Expr m = c.max(ninf, c.select(Cmp::GT, x0, x1, ninf, x1));
  CHECK(c.may_be_infinite(m));
  CHECK(!c.may_be_infinite(e));
  CHECK(c.op(c.select(Cmp::GT, m, ninf, x1, x0)) == Op::Select);
  // the four spellings of max and min
  CHECK(c.select(Cmp::GT, x0, x1, x0, x1) == c.max(x0, x1));
  CHECK(c.select(Cmp::GE, x0, x1, x1, x0) == c.min(x0, x1));
  CHECK(c.select(Cmp::LT, x0, x1, x0, x1) == c.min(x0, x1));
  CHECK(c.select(Cmp::LE, x0, x1, x1, x0) == c.max(x0, x1));
  CHECK(c.op(c.select(Cmp::EQ, x0, x1, x0, x1)) == Op::Select);
}

TEST_CASE("expressions print readably") {
  ExprContext c;
  Expr x0 = c.symbol("x", 0), x1 = c.symbol("x", 1);
  CHECK(c.to_string(c.exp(c.sub(x0, c.max(x0, x1)))) == "exp(x[0] - max(x[0], x[1]))");
  CHECK(c.to_string(c.div(x0, c.add(x0, x1))) == "x[0] / (x[0] + x[1])");
  CHECK(c.to_string(c.mul(c.constant(Rational(1, 8)), x0)) == "0.125*x[0]");
  CHECK(c.to_string(c.sub(c.constant(3), x0)) == "-x[0] + 3");
  CHECK(c.to_string(c.pow(x0, 2)) == "x[0]^2");
  CHECK(c.to_string(c.func("rsqrt", {x1})) == "rsqrt(x[1])");
  CHECK(c.to_string(c.select(Cmp::GT, x0, c.zero(), x1, c.zero())) == "select(x[0] > 0, x[1], 0)");
  CHECK(c.to_string(c.ex2(x0)) == "ex2(x[0])");
  std::string cut = c.to_string(c.add(c.max(x0, x1), c.exp(x1)), 10);
  CHECK(cut.size() == 13);
  CHECK(cut.substr(10) == "...");
}

TEST_CASE("long-double evaluation follows the real semantics") {
  ExprContext c;
  Expr x = c.symbol("x", 0), y = c.symbol("y", 0);
  Assignment a;
  a.values = {{x, Rational(1, 2)}, {y, Rational(-2)}};
  CHECK(double(evaluate(c, c.add(x, y), a)) == doctest::Approx(-1.5));
  CHECK(double(evaluate(c, c.max(x, y), a)) == doctest::Approx(0.5));
  CHECK(double(evaluate(c, c.div(x, y), a)) == doctest::Approx(-0.25));
  CHECK(double(evaluate(c, c.ex2(y), a)) == doctest::Approx(0.25));
  CHECK(double(evaluate(c, c.select(Cmp::LT, x, y, x, y), a)) == doctest::Approx(-2));
  CHECK_THROWS_AS(evaluate(c, c.symbol("z", 0), a), std::out_of_range);
}

// Hash quality is a speed matter, but one that decides whether a 64x64 SGEMM
// tile takes 0.3 s or 0.6 s: with Boost-style hash combining, products of
// two symbols with small ids collided in all 64 bits, and every lookup
// compared dozens of stored nodes. Distinct nodes should (almost) never share
// a full hash.
TEST_CASE("products and sums of input symbols get distinct hashes") {
  ExprContext c;
  std::vector<Expr> a, b;
  for (std::uint32_t i = 0; i < 64 * 64; ++i) {
    a.push_back(c.symbol("A", i));
    b.push_back(c.symbol("B", i));
  }
  std::vector<std::size_t> hashes;
  for (std::uint32_t i = 0; i < 64; ++i)
    for (std::uint32_t j = 0; j < 64; ++j)
      for (std::uint32_t k = 0; k < 16; ++k) {
        hashes.push_back(c.hash(c.mul(a[i * 64 + k], b[k * 64 + j])));
        hashes.push_back(c.hash(c.add(a[i * 64 + k], b[k * 64 + j])));
      }
  std::sort(hashes.begin(), hashes.end());
  std::size_t repeats = 0;
  for (std::size_t i = 1; i < hashes.size(); ++i) repeats += hashes[i] == hashes[i - 1];
  CHECK(hashes.size() == 2 * 64 * 64 * 16);
  CHECK(repeats == 0);
}

TEST_CASE("GrowArray keeps its contents across growth from the heap into a mapping") {
  detail::GrowArray<std::uint64_t> a;
  for (std::uint64_t i = 0; i < 3'000'000; ++i) a.push_back(i * 7);  // 24 MB: mapped and remapped
  REQUIRE(a.size() == 3'000'000);
  bool same = true;
  for (std::uint64_t i = 0; i < a.size() && same; ++i) same = a[i] == i * 7;
  CHECK(same);
  detail::GrowArray<std::uint64_t> b(std::move(a));
  CHECK(a.size() == 0);
  CHECK(b.size() == 3'000'000);
  CHECK(b[2'999'999] == 2'999'999 * 7);
  b.resize(3'000'010, 5);
  CHECK(b[3'000'009] == 5);
  const std::uint64_t* const* where = b.data_address();
  for (int i = 0; i < 5'000'000; ++i) b.push_back(1);
  CHECK((*where)[1] == 7);  // the address of the data pointer follows the moves
}

TEST_CASE("operand views stay valid while the context grows") {
  ExprContext c;
  Expr x0 = c.symbol("x", 0), x1 = c.symbol("x", 1);
  Expr first = c.add(x0, x1);
  ExprRange kids = c.children(first);
  Expr acc = first;
  for (std::uint32_t i = 2; i < 400'000; ++i) acc = c.mul(acc, c.symbol("x", i));  // ~800 K nodes
  CHECK(c.size() > 700'000);
  REQUIRE(kids.size() == 2);
  CHECK(kids[0] == x0);  // operands are sorted by handle
  CHECK(kids[1] == x1);
}

TEST_CASE("joining one operand to a short sum or product gives the n-ary form") {
  ExprContext c;
  Expr x = c.symbol("x", 0), y = c.symbol("x", 1), z = c.symbol("x", 2), w = c.symbol("x", 3);
  Expr yz = c.mul(y, z), ez = c.exp(z);
  CHECK(c.mul(x, yz) == c.mul(std::vector<Expr>{x, y, z}));
  CHECK(c.mul(yz, w) == c.mul(std::vector<Expr>{w, z, y}));
  CHECK(c.mul(ez, c.mul(x, c.constant(3))) == c.mul(std::vector<Expr>{c.constant(3), ez, x}));
  CHECK(c.mul(x, c.mul(x, y)) == c.mul(std::vector<Expr>{x, x, y}));  // x^2 stays a repeated operand
  Expr s = c.add(y, z);
  CHECK(c.add(x, s) == c.add(std::vector<Expr>{z, x, y}));
  CHECK(c.add(c.add(s, c.constant(1)), w) == c.add(std::vector<Expr>{w, y, c.constant(1), z}));
  // A like term is combined, not inserted: x + (2x + y) = 3x + y.
  Expr sum = c.add(x, c.add(c.mul(c.constant(2), x), y));
  CHECK(sum == c.add(c.mul(c.constant(3), x), y));
  CHECK(c.children(sum).size() == 2);
  CHECK(c.add(c.neg(y), s) == z);
}

// A pool of terms of every kind a sum treats apart: leaves, products, like
// terms (c*t beside t), constants, infinities, and sums short and long.
static std::vector<Expr> sum_terms(ExprContext& c) {
  std::vector<Expr> p;
  for (std::uint32_t i = 0; i < 6; ++i) p.push_back(c.symbol("x", i));
  for (std::uint32_t i = 0; i < 6; ++i) p.push_back(c.mul(c.symbol("x", i), c.symbol("y", i)));
  p.push_back(c.mul(c.constant(3), c.symbol("x", 0)));
  p.push_back(c.neg(c.symbol("x", 1)));
  p.push_back(c.neg(c.mul(c.symbol("x", 2), c.symbol("y", 2))));
  p.push_back(c.constant(2));
  p.push_back(c.zero());
  p.push_back(c.neg_inf());
  p.push_back(c.exp(c.symbol("x", 3)));
  p.push_back(c.add(c.symbol("y", 0), c.symbol("y", 1)));
  Expr big = c.zero();
  for (std::uint32_t i = 0; i < 12; ++i) big = c.add(big, c.symbol("z", i));
  p.push_back(big);
  return p;
}

// The sequences: random draws from the pool, with runs of products (a dot
// product's terms) that cross the flatten limit.
static std::vector<std::vector<std::size_t>> sum_sequences(std::size_t pool) {
  std::vector<std::vector<std::size_t>> seqs;
  std::uint64_t r = 12345;
  auto next = [&] {
    r = r * 6364136223846793005ull + 1442695040888963407ull;
    return std::size_t(r >> 33);
  };
  for (int k = 0; k < 300; ++k) {
    std::vector<std::size_t> s;
    const std::size_t len = 1 + next() % 40;
    for (std::size_t i = 0; i < len; ++i) s.push_back(k % 3 == 0 ? 6 + next() % 6 : next() % pool);
    seqs.push_back(s);
  }
  return seqs;
}

TEST_CASE("a running sum returns the handle the sequential adds return, at every prefix") {
  for (std::size_t limit : {2, 4, 8, 20}) {
    ExprContext c;
    c.set_flatten_limit(limit);
    const std::vector<Expr> pool = sum_terms(c);
    for (const auto& seq : sum_sequences(pool.size())) {
      for (Expr start : {c.zero(), pool[6], pool[18], pool[19], pool[0]}) {
        std::vector<Expr> prefix;
        Expr acc = start;
        for (std::size_t i : seq) prefix.push_back(acc = c.add(acc, pool[i]));
        ExprContext::RunningSum s = c.running_sum(start);
        for (std::size_t i = 0; i < seq.size(); ++i) {
          c.add_to(s, pool[seq[i]]);
          if (i % 7 == 3) REQUIRE(c.sum_of(s) == prefix[i]);  // then goes on from the interned sum
        }
        REQUIRE(c.sum_of(s) == prefix.back());
      }
    }
  }
}

TEST_CASE("a running sum interns no node the sequential adds would not, and skips a dot product's partial sums") {
  for (std::size_t limit : {4, 8}) {
    for (const auto& seq : sum_sequences(19)) {
      // Built first in a context of its own: the same expression (printed)
      // as the adds build, from no more nodes.
      ExprContext a, b;
      a.set_flatten_limit(limit);
      b.set_flatten_limit(limit);
      const std::vector<Expr> pa = sum_terms(a), pb = sum_terms(b);
      const std::size_t before = a.size();
      REQUIRE(before == b.size());
      ExprContext::RunningSum s = a.running_sum(a.zero());
      for (std::size_t i : seq) a.add_to(s, pa[i]);
      const Expr ra = a.sum_of(s);
      Expr rb = b.zero();
      for (std::size_t i : seq) rb = b.add(rb, pb[i]);
      REQUIRE(a.to_string(ra) == b.to_string(rb));
      REQUIRE(a.size() <= b.size());
    }
  }
  // 64 products: the adds intern 63 partial sums, the running sum one per 8
  // terms (the node that the next chunk nests).
  ExprContext c;
  std::vector<Expr> p;
  for (std::uint32_t i = 0; i < 64; ++i) p.push_back(c.mul(c.symbol("q", i), c.symbol("k", i)));
  const std::size_t before = c.size();
  ExprContext::RunningSum s = c.running_sum(c.zero());
  for (Expr t : p) c.add_to(s, t);
  const Expr r = c.sum_of(s);
  CHECK(c.size() - before <= 9);
  const std::size_t after = c.size();
  Expr acc = c.zero();
  for (Expr t : p) acc = c.add(acc, t);
  CHECK(acc == r);
  CHECK(c.size() - after >= 50);  // what the running sum did not build
}

// The bulk dot product of an mma's accumulator element must be the scalar
// chain exactly: the same nodes in the same order (so every handle, and the
// identity with a naive reference's fma chain, is kept), for every kind of
// operand a sum or product treats apart, products that repeat (like terms),
// squares, and chains across the flatten limit.
TEST_CASE("add_products builds what add_to of each product builds, node for node") {
  for (std::size_t limit : {4, 8, 20}) {
    ExprContext bulk, scalar;
    bulk.set_flatten_limit(limit);
    scalar.set_flatten_limit(limit);
    std::vector<Expr> pb = sum_terms(bulk), ps = sum_terms(scalar);
    for (std::uint32_t i = 0; i < 24; ++i) {  // a GEMM's operands: fresh leaves
      pb.push_back(bulk.symbol("A", i));
      ps.push_back(scalar.symbol("A", i));
    }
    REQUIRE(bulk.size() == scalar.size());
    std::uint64_t r = 777;
    auto next = [&] {
      r = r * 6364136223846793005ull + 1442695040888963407ull;
      return std::size_t(r >> 33);
    };
    for (int round = 0; round < 400; ++round) {
      const std::size_t k = 1 + next() % 40;
      std::vector<std::size_t> ia(k), ib(k);
      const bool gemm = round % 2 == 0;  // leaves only, as a tile of A and B gives
      for (std::size_t q = 0; q < k; ++q) {
        ia[q] = gemm ? pb.size() - 24 + next() % 24 : next() % pb.size();
        ib[q] = gemm ? pb.size() - 24 + next() % 24 : next() % pb.size();
      }
      const std::size_t start = next() % pb.size();
      std::vector<Expr> ab, bb, as, bs;
      for (std::size_t q = 0; q < k; ++q) {
        ab.push_back(pb[ia[q]]), bb.push_back(pb[ib[q]]);
        as.push_back(ps[ia[q]]), bs.push_back(ps[ib[q]]);
      }
      ExprContext::RunningSum sb = bulk.running_sum(pb[start]), ss = scalar.running_sum(ps[start]);
      bulk.add_products(sb, ab.data(), 1, bb.data(), 1, k);
      for (std::size_t q = 0; q < k; ++q) scalar.add_to(ss, scalar.mul(as[q], bs[q]));
      const Expr rb = bulk.sum_of(sb), rs = scalar.sum_of(ss);
      REQUIRE(rb == rs);
      REQUIRE(bulk.size() == scalar.size());
      REQUIRE(bulk.to_string(rb) == scalar.to_string(rs));
      // And a second instruction on the same accumulator (a K loop), with B
      // read through a stride (a column of a row-major tile).
      std::vector<Expr> spread(2 * k, bulk.zero());
      for (std::size_t q = 0; q < k; ++q) spread[2 * q] = bb[k - 1 - q];
      ExprContext::RunningSum tb = bulk.running_sum(rb), ts = scalar.running_sum(rs);
      bulk.add_products(tb, ab.data(), 1, spread.data(), 2, k);
      for (std::size_t q = 0; q < k; ++q) scalar.add_to(ts, scalar.mul(as[q], bs[k - 1 - q]));
      REQUIRE(bulk.sum_of(tb) == scalar.sum_of(ts));
      REQUIRE(bulk.size() == scalar.size());
    }
  }
}

// Nodes live in small windows of the node table (by their newest operand, or
// by the id blocks of two leaf operands). A full window continues in a chain
// of pair windows (by the blocks of the two newest operands), and a full chain
// in the global table. Wherever a node went, building it twice must find it.
TEST_CASE("hash-consing holds when windows of the node table overflow") {
  ExprContext c;
  std::vector<Expr> a, b, e;
  for (std::uint32_t i = 0; i < 32; ++i) a.push_back(c.symbol("a", i));
  for (std::uint32_t i = 0; i < 32; ++i) b.push_back(c.symbol("b", i));
  for (std::uint32_t i = 0; i < 600; ++i) e.push_back(c.exp(c.symbol("s", i)));
  Expr m = c.max(e[0], e[1]);  // newer than every e[i]: the newest operand of each e[i] + m
  auto build = [&] {
    std::vector<Expr> out;
    for (Expr x : a)
      for (Expr y : b) out.push_back(c.mul(x, y));  // 1024 products over one pair of id blocks
    for (Expr x : e) out.push_back(c.add(x, m));   // 600 nodes with one newest operand
    // 1024 sums with the same newest operand and the same second newest block:
    // one anchored window, then its whole overflow chain, then the global table.
    for (Expr x : a)
      for (Expr y : b) out.push_back(c.add({m, x, y}));
    return out;
  };
  std::vector<Expr> first = build();
  const std::size_t size = c.size();
  std::vector<Expr> again = build();
  CHECK(c.size() == size);
  CHECK(first == again);
  std::sort(first.begin(), first.end());
  CHECK(std::unique(first.begin(), first.end()) == first.end());
}

TEST_CASE("import copies another context's expressions onto the same handles as building them here") {
  // The same expressions, built in two contexts in different orders (so their
  // handles, and the order of commutative operands, differ).
  auto build = [](ExprContext& c, bool reverse) {
    std::vector<Expr> xs;
    for (std::uint32_t i = 0; i < 8; ++i) xs.push_back(c.symbol("x", reverse ? 7 - i : i));
    if (reverse) std::reverse(xs.begin(), xs.end());
    Expr n = c.int_symbol("n", 0);
    std::vector<Expr> out;
    Expr m = c.neg_inf(), acc = c.zero();
    for (std::uint32_t i = 0; i < 8; ++i) {
      m = c.max(m, xs[i]);
      acc = c.add(c.mul(acc, c.exp(c.sub(xs[i], m))), c.ex2(c.mul(c.constant(Rational(1, 3)), xs[(i + 3) % 8])));
      out.push_back(c.div(acc, c.add(m, c.constant(2))));
    }
    out.push_back(c.select(Cmp::LT, xs[0], xs[1], c.func("tanh", {xs[2]}), c.pow(xs[3], -2)));
    out.push_back(c.min(c.add(n, xs[4]), c.pos_inf()));
    out.push_back(c.add(c.neg_inf(), c.pos_inf()));
    return out;
  };
  ExprContext here, there;
  there.symbol("unrelated", 5);  // shifts every handle of `there`
  std::vector<Expr> theirs = build(there, true);
  std::vector<Expr> map = here.import(there);
  std::vector<Expr> mine = build(here, false);
  const std::size_t size = here.size();
  REQUIRE(mine.size() == theirs.size());
  for (std::size_t i = 0; i < mine.size(); ++i) {
    CAPTURE(i);
    CHECK(map[theirs[i].id] == mine[i]);
  }
  CHECK(here.import(there) == map);  // importing again adds nothing
  CHECK(here.size() == size);
}

TEST_CASE("import into a context that shares nodes with the other keeps one handle per expression") {
  // `there` builds everything, `here` a part first. Imported nodes over
  // imported operands are new; those over shared operands may exist. The
  // products of one sum with 300 inputs overflow that sum's table window.
  auto build = [](ExprContext& c, std::uint32_t parts) {
    std::vector<Expr> xs, out;
    for (std::uint32_t i = 0; i < 300; ++i) xs.push_back(c.symbol("x", i));
    Expr acc = c.zero();
    for (std::uint32_t p = 0; p < parts; ++p) {
      Expr s = c.add(xs[p], c.exp(xs[p + 1]));
      for (std::uint32_t i = 0; i < 300; ++i) acc = c.add(acc, c.mul(s, xs[i]));
      out.push_back(acc);
      out.push_back(c.mul(xs[p], xs[p + 2]));
    }
    return out;
  };
  ExprContext here, there;
  std::vector<Expr> shared = build(here, 2);
  std::vector<Expr> theirs = build(there, 5);
  const std::vector<Expr> map = here.import(there);
  for (std::size_t i = 0; i < shared.size(); ++i) CHECK(map[theirs[i].id] == shared[i]);
  const std::size_t size = here.size();
  std::vector<Expr> mine = build(here, 5);
  CHECK(here.size() == size);  // built again: every node is found
  for (std::size_t i = 0; i < mine.size(); ++i) {
    CAPTURE(i);
    CHECK(map[theirs[i].id] == mine[i]);
  }
  CHECK(here.import(there) == map);
  CHECK(here.size() == size);
}

TEST_CASE("import_below copies only what the roots hold, onto the handles a full import gives") {
  auto build = [](ExprContext& c) {
    std::vector<Expr> out;
    for (std::uint32_t i = 0; i < 6; ++i) {
      Expr x = c.symbol("x", i), y = c.symbol("y", i);
      out.push_back(c.exp(c.add(c.mul(x, y), c.constant(i + 1))));
    }
    return out;
  };
  ExprContext there;
  const std::vector<Expr> theirs = build(there);
  ExprContext full;
  const std::vector<Expr> everything = full.import(there);
  ExprContext here;
  here.symbol("y", 4);  // already here: found, not copied
  const std::size_t before = here.size();
  std::vector<Expr> map;
  here.import_below(there, {theirs[2]}, map);
  REQUIRE(map.size() == there.size());
  CHECK(map[theirs[2].id].valid());
  CHECK_FALSE(map[theirs[3].id].valid());
  CHECK_FALSE(map[there.symbol("x", 3).id].valid());
  // x2, y2, x2*y2, the constant 3, the sum, exp: six nodes.
  CHECK(here.size() == before + 6);
  CHECK(here.to_string(map[theirs[2].id]) == full.to_string(everything[theirs[2].id]));
  // A second call copies the rest below its roots and reuses what is there.
  const std::size_t after_first = here.size();
  here.import_below(there, {theirs[2], theirs[4]}, map);
  CHECK(here.size() == after_first + 5);  // x4, x4*y4, 5, the sum, exp (y4 was here)
  CHECK(map[there.symbol("y", 4).id] == here.symbol("y", 4));
  // What was copied is what building here gives.
  const std::vector<Expr> mine = build(here);
  CHECK(map[theirs[2].id] == mine[2]);
  CHECK(map[theirs[4].id] == mine[4]);
}
