// nvcc 13's inline expansions of tanhf, erff, logf, log2f and log1pf are
// recognised whole and become one instruction (src/ptx/lower_math.cpp);
// anything that is not exactly such a form stays as it was (unsupported).
#include "ptx_helpers.hpp"

#include "tileverify/decide.hpp"
#include "tileverify/domains.hpp"
#include "tileverify/expr.hpp"

#include <fstream>
#include <sstream>

using namespace tileverify;
using ptx_test::equiv;
using ptx_test::tensor;

namespace {

std::string file_text(const std::string& file) {
  std::ifstream in(ptx_test::path_of(file));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The text of math_forms.ptx with `from` (which must occur, once, inside
// kernel `kernel`) replaced by `to`.
std::string mutated(const std::string& kernel, const std::string& from, const std::string& to) {
  std::string t = file_text("math_forms.ptx");
  const std::size_t k = t.find(".entry " + kernel + "(");
  REQUIRE(k != std::string::npos);
  const std::size_t end = t.find("\n}\n", k);
  const std::size_t at = t.find(from, k);
  REQUIRE(at < end);
  REQUIRE(t.find(from, at + 1) > end);
  return t.replace(at, from.size(), to);
}

std::size_t count_op(const Program& p, Opcode op) {
  std::size_t n = 0;
  for (const Instr& in : p.code) n += in.op == op;
  return n;
}

struct Run {
  std::vector<Diagnostic> diagnostics;
  std::string y0;  // the output element 0, printed
};

Run run_one(const Program& p) {
  Launch l = ptx_test::launch_of(1, {tensor("x", DType::F32, 1, Role::In), tensor("y", DType::F32, 1, Role::Out)});
  ExprContext c;
  SymbolicDomain dom(c);
  auto r = run_program(p, l, dom);
  Run out;
  out.diagnostics = r.diagnostics;
  if (r.diagnostics.empty() && r.outputs.at("y").at(0)) out.y0 = c.to_string(*r.outputs.at("y").at(0));
  return out;
}

const std::vector<ParamSpec> kUnary = {tensor("x", DType::F32, 32, Role::In), tensor("y", DType::F32, 32, Role::Out)};

}  // namespace

TEST_CASE("math forms: nvcc's tanhf, erff, logf, log2f and log1pf become one instruction each") {
  struct Case {
    const char* kernel;
    Opcode op;
    const char* printed;
  };
  const Case cases[] = {{"m_tanh", Opcode::Tanh, "tanh(x[0])"},
                        {"m_erf", Opcode::Erf, "erf(x[0])"},
                        {"m_log", Opcode::Log, "log(x[0])"},
                        {"m_log2", Opcode::Lg2, "log2(x[0])"},
                        {"m_log1p", Opcode::Log1p, "log1p(x[0])"}};
  for (const Case& k : cases) {
    CAPTURE(k.kernel);
    Program p = ptx_test::lower_file("math_forms.ptx", k.kernel);
    CHECK(count_op(p, k.op) == 1);
    CHECK(count_op(p, Opcode::Unsupported) == 0);  // copysign is gone with its form
    CHECK(count_op(p, Opcode::And) == 0);          // and the float-bit masks
    CHECK(count_op(p, Opcode::Setp) == 0);         // and the branches on the input
    Run r = run_one(p);
    CHECK(r.diagnostics.empty());
    CHECK(r.y0 == k.printed);
  }
}

TEST_CASE("math forms: an operation nvcc sinks into logf's form is kept after the function") {
  SUBCASE("-logf(x)") {
    Program p = ptx_test::lower_file("math_forms.ptx", "m_neg_log");
    CHECK(count_op(p, Opcode::Log) == 1);
    CHECK(count_op(p, Opcode::Neg) == 1);
    CHECK(count_op(p, Opcode::Setp) == 0);
    Run r = run_one(p);
    CHECK(r.diagnostics.empty());
    CHECK(r.y0 == "-log(x[0])");
  }
  SUBCASE("logf(x) * 1.44269504f") {
    Program p = ptx_test::lower_file("math_forms.ptx", "m_log_log2e");
    CHECK(count_op(p, Opcode::Log) == 1);
    CHECK(count_op(p, Opcode::Setp) == 0);
    Run r = run_one(p);
    CHECK(r.diagnostics.empty());
    CHECK(r.y0.find("log(x[0])") != std::string::npos);
  }
  SUBCASE("-logf(x) is not logf(x)") {
    CHECK(equiv("math_forms.ptx", "m_log", "m_neg_log", 32, kUnary).verdict == Outcome::NotEquivalent);
  }
}

TEST_CASE("math forms: a near miss is left as it was") {
  SUBCASE("a mutated constant in logf's mask: the float-bit arithmetic stops the run") {
    Program p = ptx_test::lower_text(mutated("m_log", "-8388608", "-8388607"), "m_log");
    CHECK(count_op(p, Opcode::Log) == 0);
    Run r = run_one(p);
    REQUIRE(r.diagnostics.size() == 1);
    CHECK(r.diagnostics[0].kind == DiagKind::NotStructured);
  }
  SUBCASE("a mutated polynomial coefficient of erff: its branch on |x| stops the run") {
    Program p = ptx_test::lower_text(mutated("m_erf", "0f3F210A14", "0f3F210A15"), "m_erf");
    CHECK(count_op(p, Opcode::Erf) == 0);
    Run r = run_one(p);
    REQUIRE(r.diagnostics.size() == 1);
    CHECK(r.diagnostics[0].kind == DiagKind::NotStructured);
  }
  SUBCASE("an intermediate register of tanhf used outside the form") {
    // x*x (the polynomial's argument) is also stored: copysign stays, unsupported.
    Program p = ptx_test::lower_text(
        mutated("m_tanh", "st.global.f32 \t[%rd7], %f23;", "st.global.f32 \t[%rd7], %f23;\n\tst.global.f32 \t[%rd7], %f12;"),
        "m_tanh");
    CHECK(count_op(p, Opcode::Tanh) == 0);
    CHECK(count_op(p, Opcode::Unsupported) == 1);
  }
  SUBCASE("the input written while the form runs") {
    Program p = ptx_test::lower_text(
        mutated("m_log2", "cvt.rn.f32.s32 \t%f9, %r4;", "cvt.rn.f32.s32 \t%f9, %r4;\n\tmov.f32 \t%f5, 0f3F800000;"),
        "m_log2");
    CHECK(count_op(p, Opcode::Lg2) == 0);
  }
  SUBCASE("a branch from outside into erff's label") {
    Program p = ptx_test::lower_text(
        mutated("m_erf", "abs.f32 \t%f5, %f1;", "setp.eq.s32 \t%p2, %r1, 7;\n\t@%p2 bra \t$L__BB1_2;\n\tabs.f32 \t%f5, %f1;"),
        "m_erf");
    CHECK(count_op(p, Opcode::Erf) == 0);
  }
  SUBCASE("an unrelated instruction inside erff's branch") {
    Program p = ptx_test::lower_text(
        mutated("m_erf", "sub.f32 \t%f25, %f24, %f23;", "sub.f32 \t%f25, %f24, %f23;\n\tadd.s64 \t%rd2, %rd2, 4;"), "m_erf");
    CHECK(count_op(p, Opcode::Erf) == 0);
  }
  SUBCASE("a product by a negative constant nvcc sank into logf's form") {
    Program p = ptx_test::lower_file("math_forms.ptx", "m_log_negscale");
    CHECK(count_op(p, Opcode::Log) == 0);
    Run r = run_one(p);
    REQUIRE(r.diagnostics.size() == 1);
    CHECK(r.diagnostics[0].kind == DiagKind::NotStructured);
  }
  SUBCASE("a sunk product by a positive constant that differs where the form uses it") {
    // The select must still pick -inf at 0: with +inf the form is not logf(x) * c.
    Program p = ptx_test::lower_text(
        mutated("m_log_log2e", "selp.f32 \t%f35, 0fFF800000, %f34, %p3;", "selp.f32 \t%f35, 0f7F800000, %f34, %p3;"),
        "m_log_log2e");
    CHECK(count_op(p, Opcode::Log) == 0);
  }
}

TEST_CASE("math forms: the same function in other forms meets them") {
  SUBCASE("logf and the fast-math __logf (lg2.approx times ln 2)") {
    CHECK(equiv("math_forms.ptx", "m_log", "m_fast_log", 32, kUnary).verdict == Outcome::Equivalent);
  }
  SUBCASE("log2f and __log2f (lg2.approx)") {
    CHECK(equiv("math_forms.ptx", "m_log2", "m_fast_log2", 32, kUnary).verdict == Outcome::Equivalent);
  }
  SUBCASE("log1pf(x) and logf(1 + x)") {
    CHECK(equiv("math_forms.ptx", "m_log1p", "m_log_1p", 32, kUnary).verdict == Outcome::Equivalent);
  }
  SUBCASE("tanhf and tanh.approx.f32") {
    CHECK(equiv("math_forms.ptx", "m_tanh", "m_tanh_hw", 32, kUnary).verdict == Outcome::Equivalent);
  }
  SUBCASE("different functions are refuted") {
    Report r = equiv("math_forms.ptx", "m_log", "m_log1p", 32, kUnary);
    CHECK(r.verdict == Outcome::NotEquivalent);
    r = equiv("math_forms.ptx", "m_tanh", "m_erf", 32, kUnary);
    CHECK(r.verdict == Outcome::NotEquivalent);
    r = equiv("math_forms.ptx", "m_log", "m_log2", 32, kUnary);
    CHECK(r.verdict == Outcome::NotEquivalent);
  }
}

TEST_CASE("math forms: the decider's identities of function atoms, and no others") {
  ExprContext c;
  const Expr x = c.symbol("x", 0), y = c.symbol("x", 1);
  const Expr ln2_f32 = c.constant(Rational::from_f32_bits(0x3F317218u));
  auto proved = [&](Expr a, Expr b) { return decide_equal(c, a, b).verdict == Verdict::Proved; };
  auto refuted = [&](Expr a, Expr b) { return decide_equal(c, a, b).verdict == Verdict::Refuted; };
  // log2(x) = log(x) / ln 2; nvcc's float ln 2 beside it is read as ln 2 (__logf)
  CHECK(proved(c.func("log", {x}), c.mul(ln2_f32, c.func("log2", {x}))));
  // log1p(x) = log(1 + x)
  CHECK(proved(c.func("log1p", {x}), c.func("log", {c.add(c.constant(Rational(1)), x)})));
  // rsqrt(x) = 1 / sqrt(x)
  CHECK(proved(c.func("rsqrt", {x}), c.div(c.constant(Rational(1)), c.func("sqrt", {x}))));
  // different functions, or arguments, are refuted at points inside their domains
  CHECK(refuted(c.func("log", {x}), c.func("log2", {x})));
  CHECK(refuted(c.func("log1p", {x}), c.func("log", {x})));
  CHECK(refuted(c.func("erf", {x}), c.func("tanh", {x})));
  CHECK(refuted(c.func("log", {c.add(x, y)}), c.add(c.func("log", {x}), c.func("log", {y}))));
  // true only on part of the domain, or not known: never proved
  CHECK_FALSE(proved(c.mul(c.func("sqrt", {x}), c.func("sqrt", {x})), x));
  CHECK_FALSE(proved(c.func("log", {c.mul(x, y)}), c.add(c.func("log", {x}), c.func("log", {y}))));
  CHECK_FALSE(proved(c.func("tanh", {c.neg(x)}), c.neg(c.func("tanh", {x}))));
}

TEST_CASE("Triton's __nv_log2f, two copies interleaved (the first copy's select after the second's branch), is lifted twice") {
  // examples/triton/sm80/attention_lse.ptx: tl.math.log2 of the two rows each
  // thread holds, on untyped .b32 registers, the copies interleaved by LLVM.
  auto parsed = ptx::parse_ptx_file(std::string(TILEVERIFY_TEST_DIR) + "/../examples/triton/sm80/attention_lse.ptx");
  REQUIRE(parsed.module.has_value());
  auto lowered = ptx::lower_kernel(*parsed.module, "attention_lse", 6144);  // its metadata's shared bytes
  INFO((lowered.error ? lowered.error->text() : std::string()));
  REQUIRE(lowered.program.has_value());
  const Program& p = *lowered.program;
  CHECK(count_op(p, Opcode::Lg2) == 2);
  CHECK(count_op(p, Opcode::Unsupported) == 0);
}
