// Constants rounded from products (docs/decide.md): a float within 1 ulp of
// c · log2(e) (or c · ln 2), c a constant of either kernel or a small
// rational, is read as that exact product; exact products c · (a table
// float) are read as the table reads that float.
#include "tileverify/decide.hpp"
#include "tileverify/equiv.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace tileverify;

namespace {

const Rational kScale = Rational::from_f32_bits(0x3E3504F3u);      // 1/sqrtf(32)
const Rational kScaleLog2 = Rational::from_f32_bits(0x3E8293EEu);  // nvcc's fold of 1/sqrtf(32) * 1.4426950408889634f
const Rational kLog2e = Rational::from_f32_bits(0x3FB8AA3Bu);

Rational f32_above(std::uint32_t bits, int ulps) { return Rational::from_f32_bits(bits + std::uint32_t(ulps)); }

// The readings of those constants that are read within a tolerance or left
// as they are (entries with a note).
std::vector<ConstantReading> noted(const std::vector<ConstantReading>& all) {
  std::vector<ConstantReading> out;
  for (const ConstantReading& r : all)
    if (!r.note.empty()) out.push_back(r);
  return out;
}

DecideLimits limits_with(const std::vector<KernelConstant>& cs) {
  DecideLimits l;
  l.timeout_seconds = 10;
  l.constant_readings = read_rounded_constants(cs);
  return l;
}

}  // namespace

TEST_CASE("a folded scale * log2(e) within 1 ulp is read as the exact product, and noted") {
  auto rs = noted(read_rounded_constants({{kScale, false, "ref (k)"}, {kScaleLog2, false, "opt (k)"}}));
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].value == kScaleLog2);
  CHECK(rs[0].factor == kScale);  // the f32 scale, a rational, exactly
  CHECK(rs[0].ln2_power == -1);
  CHECK(rs[0].note ==
        "0x3e8293ee (0.255034864) in opt (k) read as 1/sqrt(32)_f32 · log2(e) = 0.176776692 · 1.44269504 "
        "(within 0.22 ulp; 1/sqrt(32)_f32 is 0x3e3504f3 in ref (k)): the verdict is over the reals with this "
        "constant read as that product");
}

TEST_CASE("the tolerance is 1 ulp: 0.78 ulp away is read, 1.22 ulp away is not") {
  // 0x3e8293ee is 0.22 ulp above 1/sqrt(32)_f32 · log2(e): one float below
  // it is 0.78 ulp below, one above 1.22 ulp above.
  auto below = noted(read_rounded_constants({{kScale, false, "ref"}, {f32_above(0x3E8293EEu, -1), false, "opt"}}));
  REQUIRE(below.size() == 1);
  CHECK(below[0].factor == kScale);
  CHECK(below[0].note.find("within 0.78 ulp") != std::string::npos);
  for (int off : {1, 2, 3, 2048})
    CHECK(noted(read_rounded_constants({{kScale, false, "ref"}, {f32_above(0x3E8293EEu, off), false, "opt"}})).empty());
}

TEST_CASE("a constant within 1 ulp of two different products is not read, and says so") {
  // 1/sqrt(32)_f32 and the next float: 0x3e8293ee is 0.22 ulp from one
  // product and 0.50 ulp from the other.
  const Rational next = Rational::from_f32_bits(0x3E3504F4u);
  auto rs = noted(read_rounded_constants({{kScale, false, "ref"}, {next, false, "ref"}, {kScaleLog2, false, "opt"}}));
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].ln2_power == 0);
  CHECK(rs[0].note.find("is not read as a product") != std::string::npos);
  // The decider leaves it as it is: ex2(x * K) is not exp(x * scale).
  ExprContext c;
  Expr x = c.symbol("x", 0);
  DecideLimits l = limits_with({{kScale, false, "ref"}, {next, false, "ref"}, {kScaleLog2, false, "opt"}});
  l.timeout_seconds = 2;
  CHECK(decide_equal(c, c.exp(c.mul(x, c.constant(kScale))), c.ex2(c.mul(x, c.constant(kScaleLog2))), l).verdict !=
        Verdict::Proved);
}

TEST_CASE("f64: a folded 1/sqrt(32) * M_LOG2E is read within 1 ulp of f64") {
  // nvcc's 0.17677669529663687 (one ulp below the f64 nearest 1/sqrt(32),
  // so it is named by its bits), and its product with M_LOG2E rounded to
  // f64, 0.29 ulp above s · log2(e).
  const Rational s = Rational::from_f64_bits(0x3FC6A09E667F3BCCull);
  const Rational k = Rational::from_f64_bits(0x3FD0527DBD87E24Dull);
  auto rs = noted(read_rounded_constants({{s, true, "ref"}, {k, true, "opt"}}));
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].factor == s);
  CHECK(rs[0].note.find("read as 0x3fc6a09e667f3bcc_f64 · log2(e) = 0.17677669529663687 · 1.4426950408889634") !=
        std::string::npos);
  CHECK(rs[0].note.find("within 0.29 ulp") != std::string::npos);
  // Two f64 ulps away is far outside (an f32 ulp would have allowed it).
  const Rational off = Rational::from_f64_bits(0x3FD0527DBD87E24Full);
  CHECK(noted(read_rounded_constants({{s, true, "ref"}, {off, true, "opt"}})).empty());
}

TEST_CASE("c · ln 2 and small rationals are read too; short rationals are never rounded products") {
  // ln(2)/7 rounded to f32 (0.11 ulp below; ln(2)/3 is ln2_f32/3 exactly,
  // which the table reads): read as 1/7 · ln 2.
  auto ln = noted(read_rounded_constants({{Rational::from_f32_bits(0x3DCACB89u), false, "opt"}}));
  REQUIRE(ln.size() == 1);
  CHECK(ln[0].ln2_power == 1);
  CHECK(ln[0].factor == Rational(1, 7));
  // K = f32(scale · ln 2) makes scale ~ K · log2(e): of two constants that
  // are each other's product, the log2(e) side is read (the one exponents
  // of ex2 use), here the scale, as K · log2(e).
  const Rational k = Rational::from_f32_bits(0x3DFAF232u);  // 0.33 ulp below 1/sqrt(32)_f32 · ln 2
  auto both = noted(read_rounded_constants({{kScale, false, "ref"}, {k, false, "opt"}}));
  REQUIRE(both.size() == 1);
  CHECK(both[0].value == kScale);
  CHECK(both[0].ln2_power == -1);
  CHECK(both[0].factor == k);
  // log2(e) / 3 rounded to f32: the factor is the rational 1/3, from no kernel.
  auto third = noted(read_rounded_constants({{Rational::from_f32_bits(0x3EF6384Fu), false, "opt"}}));
  REQUIRE(third.size() == 1);
  CHECK(third[0].factor == Rational(1, 3));
  // 0.5 is 0.11 ulp from log2e_f32/2 · ln 2, but a constant that is a short
  // rational is what the kernel says, and the table's floats are no factors.
  CHECK(noted(read_rounded_constants({{Rational(1, 2), false, "ref"}, {kLog2e, false, "ref"}})).empty());
  // A near miss of log2(e) stays what it is (docs/decide.md: 2^(1.4427 x) is not e^x).
  CHECK(noted(read_rounded_constants({{Rational::from_f32_bits(0x3FB8AA65u), false, "opt"}})).empty());
}

TEST_CASE("the decider reads the folded constant: exp(x * scale) = ex2(x * fold(scale * log2e))") {
  ExprContext c;
  Expr x = c.symbol("x", 0), y = c.symbol("x", 1);
  // A softmax pair: the reference with expf((x - m) * scale), the other
  // kernel with exp2f(x * K - m * K).
  Expr m = c.max(x, y);
  auto ref = [&](Expr v) { return c.exp(c.mul(c.sub(v, m), c.constant(kScale))); };
  auto opt = [&](Expr v) {
    return c.ex2(c.sub(c.mul(v, c.constant(kScaleLog2)), c.mul(m, c.constant(kScaleLog2))));
  };
  Expr a = c.div(ref(x), c.add(ref(x), ref(y)));
  Expr b = c.div(opt(x), c.add(opt(x), opt(y)));
  const std::vector<KernelConstant> cs{{kScale, false, "ref"}, {kScaleLog2, false, "opt"}};
  DecideLimits l = limits_with(cs);
  Decision d = decide_equal(c, a, b, l);
  INFO(d.reason);
  CHECK(d.verdict == Verdict::Proved);
  // It says which reading it used (the one with a note).
  REQUIRE(d.constants_read.size() == 1);
  CHECK(l.constant_readings[d.constants_read[0]].value == kScaleLog2);
  // Without the readings the same pair is not proved.
  DecideLimits plain;
  plain.timeout_seconds = 2;
  CHECK(decide_equal(c, a, b, plain).verdict != Verdict::Proved);
  // A constant two ulp off is not read: not proved, never "equal".
  Expr off = c.ex2(c.mul(x, c.constant(f32_above(0x3E8293EEu, 2))));
  DecideLimits lo = limits_with({{kScale, false, "ref"}, {f32_above(0x3E8293EEu, 2), false, "opt"}});
  lo.timeout_seconds = 2;
  CHECK(decide_equal(c, c.exp(c.mul(x, c.constant(kScale))), off, lo).verdict != Verdict::Proved);
}

TEST_CASE("exact products scale * log2e_f32 are read as scale * log2(e), with no note") {
  ExprContext c;
  Expr x = c.symbol("x", 0);
  // __expf(x * scale): ex2((x * scale) * 0f3FB8AA3B), against expf(x * scale).
  Expr fast = c.ex2(c.mul(c.mul(x, c.constant(kScale)), c.constant(kLog2e)));
  Expr precise = c.exp(c.mul(x, c.constant(kScale)));
  const std::vector<KernelConstant> cs{{kScale, false, "ref"}, {kLog2e, false, "opt"}};
  DecideLimits l = limits_with(cs);
  CHECK(noted(l.constant_readings).empty());
  CHECK(decide_equal(c, precise, fast, l).verdict == Verdict::Proved);
  DecideLimits plain;
  plain.timeout_seconds = 2;
  CHECK(decide_equal(c, precise, fast, plain).verdict != Verdict::Proved);
}

TEST_CASE("exact quotients scale / ln2_f32 are read as scale · log2(e)") {
  // exp2f(x * (scale / 0.69314718f)): nvcc divides in the kernel.
  ExprContext c;
  Expr x = c.symbol("x", 0);
  const Rational ln2_f32 = Rational::from_f32_bits(0x3F317218u);
  Expr quotient = c.ex2(c.mul(x, c.div(c.constant(kScale), c.constant(ln2_f32))));
  Expr precise = c.exp(c.mul(x, c.constant(kScale)));
  DecideLimits l = limits_with({{kScale, false, "ref"}, {ln2_f32, false, "opt"}});
  CHECK(decide_equal(c, precise, quotient, l).verdict == Verdict::Proved);
  // 3 / ln2_f32 needs no kernel constant: 1/ln2_f32 is read as log2(e).
  Expr three = c.ex2(c.mul(x, c.div(c.constant(3), c.constant(ln2_f32))));
  CHECK(decide_equal(c, c.exp(c.mul(x, c.constant(3))), three, l).verdict == Verdict::Proved);
  DecideLimits plain;
  plain.timeout_seconds = 2;
  CHECK(decide_equal(c, precise, quotient, plain).verdict != Verdict::Proved);
}

TEST_CASE("both kernels' constants are read alike: two foldings 1 ulp apart are both the product") {
  // 0x3e8293ed and 0x3e8293ee are both within 1 ulp of 1/sqrt(32)_f32 ·
  // log2(e) (0.78 below, 0.22 above): each is read as that product.
  ExprContext c;
  Expr x = c.symbol("x", 0);
  const Rational k2 = f32_above(0x3E8293EEu, -1);
  DecideLimits l = limits_with({{kScale, false, "ref"}, {kScaleLog2, false, "ref"}, {k2, false, "opt"}});
  CHECK(noted(l.constant_readings).size() == 2);
  CHECK(decide_equal(c, c.ex2(c.mul(x, c.constant(kScaleLog2))), c.ex2(c.mul(x, c.constant(k2))), l).verdict ==
        Verdict::Proved);
}

TEST_CASE("the report notes the constants read so, and only those") {
  const std::string dir = std::string(TILEVERIFY_TEST_DIR) + "/cases/rounded_scale/";
  auto spec = load_spec(dir + "softmax_d32.json");
  REQUIRE(spec.spec.has_value());
  Report r = check_equivalence(*spec.spec);
  INFO(r.text());
  REQUIRE(r.verdict == Outcome::Equivalent);
  // softmax_ref's expf also holds 0f3BBB989D, log2(e)/252 rounded, but only
  // inside the clamp that picks 2^j: no exponent reads it, so no note.
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0].kind == DiagKind::ConstantRead);
  CHECK(r.text().find("note: constant_read: 0x3e8293ee (0.255034864) in opt (softmax_exp2) read as 1/sqrt(32)_f32 · "
                      "log2(e) = 0.176776692 · 1.44269504 (within 0.22 ulp; 1/sqrt(32)_f32 is 0x3e3504f3 in ref "
                      "(softmax_ref)): the verdict is over the reals with this constant read as that product\n") !=
        std::string::npos);
  CHECK(r.json().find("\"kind\": \"constant_read\"") != std::string::npos);
  // At head size 64 the scale is 1/8 and the fold is exact: nothing to note.
  auto exact = load_spec(dir + "softmax_d64.json");
  REQUIRE(exact.spec.has_value());
  Report e = check_equivalence(*exact.spec);
  CHECK(e.verdict == Outcome::Equivalent);
  CHECK(e.notes.empty());
}
