// Block scoping of PTX names (src/ptx/scopes.hpp): labels and registers
// declared in a { } block are local to it (nested blocks included) and hide
// the same names outside; sibling blocks may declare the same names. nvcc
// inlines inline-asm blocks that declare labels (CUTLASS's
// ClusterBarrier::wait) once per call site, and Triton emits one
// `{ .reg .pred complete; waitLoop: ... }` per mbarrier wait; ptxas accepts
// both and branches each copy to its own block's label.
#include "ptx_helpers.hpp"

#include <string>

using namespace tileverify;
using namespace ptx_test;

namespace {

const char* kHeader = ".version 9.0\n.target sm_90\n.address_size 64\n";

// y[t] = f(t), one thread per element; the body computes %r9 from %r1 = tid.
std::string kernel_with(const std::string& body) {
  return std::string(kHeader) + R"(
.visible .entry k(.param .u64 p_y)
{
  .reg .pred %p<4>;
  .reg .b32 %r<12>;
  .reg .f32 %f<2>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p_y];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
)" + body + R"(
  cvt.rn.f32.s32 %f1, %r9;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd3, %rd2, %rd3;
  st.global.f32 [%rd3], %f1;
  ret;
}
)";
}

// The values kernel k writes to y (n threads), run concretely.
std::vector<double> outputs_of(const std::string& text, std::uint32_t n) {
  Program p = lower_text(text);
  ConcreteDomain dom;
  auto run = run_program(p, launch_of(n, {tensor("y", DType::F32, n, Role::Out)}), dom);
  INFO((run.ok() ? std::string() : run.diagnostics[0].text()));
  REQUIRE(run.ok());
  std::vector<double> y;
  for (const auto& v : run.outputs.at("y")) {
    REQUIRE(v.has_value());
    y.push_back(double(*v));
  }
  return y;
}

// The parse error of `text`, which must not parse.
ptx::Error parse_error_of(const std::string& text) {
  auto parsed = ptx::parse_ptx(text, "t.ptx");
  REQUIRE(parsed.error.has_value());
  return *parsed.error;
}

// One copy of the inline-asm block of CUTLASS's ClusterBarrier::wait shape:
// a predicate and two labels of its own; %r9 += (x != 0 ? 20 : 10).
std::string pick(const std::string& x) {
  return "  {\n  .reg .pred p;\n  setp.ne.s32 p, " + x +
         ", 0;\n  @p bra SKIP;\n  add.s32 %r9, %r9, 10;\n  bra.uni OUT;\nSKIP:\n  add.s32 %r9, %r9, 20;\nOUT:\n  }\n";
}

}  // namespace

TEST_CASE("sibling blocks declare the same labels and predicate, and each branch goes to its own block's label") {
  const std::string body = "  mov.u32 %r9, 0;\n  and.b32 %r2, %r1, 1;\n  and.b32 %r3, %r1, 2;\n" + pick("%r2") +
                           "  mul.lo.s32 %r9, %r9, 100;\n" + pick("%r3");
  const std::vector<double> y = outputs_of(kernel_with(body), 4);
  // t & 1 picks the first copy's value, t & 2 the second's.
  CHECK(y[0] == 10 * 100 + 10);
  CHECK(y[1] == 20 * 100 + 10);
  CHECK(y[2] == 10 * 100 + 20);
  CHECK(y[3] == 20 * 100 + 20);
}

TEST_CASE("a label in a nested block hides the same label outside it, for branches inside the block only") {
  const std::string body = R"(
  mov.u32 %r9, 0;
  bra.uni L;
  mov.u32 %r9, 1000;
L:
  add.s32 %r9, %r9, 1;
  setp.ge.s32 %p1, %r9, 3;
  @%p1 bra DONE;
  {
  bra.uni L;
  mov.u32 %r9, 2000;
L:
  add.s32 %r9, %r9, 10;
  }
  bra.uni L;
DONE:
)";
  // outer L: 1; inner L: 11; outer L: 12 -> done.
  for (double v : outputs_of(kernel_with(body), 2)) CHECK(v == 12);
}

TEST_CASE("a register declared in a block hides the outer register of the same name") {
  const std::string body = R"(
  mov.u32 %r9, 5;
  {
  .reg .b32 %r9;
  mov.u32 %r9, 7;
  {
  .reg .b32 %r9;
  mov.u32 %r9, 9;
  }
  add.s32 %r10, %r9, 0;
  }
  mul.lo.s32 %r9, %r9, %r10;
)";
  // the outer %r9 (5) times the first block's %r9 (7), which its nested block did not touch
  for (double v : outputs_of(kernel_with(body), 2)) CHECK(v == 35);
}

TEST_CASE("register ranges declared in sibling blocks are each block's own") {
  const std::string body = R"(
  mov.u32 %r9, 0;
  {
  .reg .b32 %t<3>;
  mov.u32 %t2, 3;
  add.s32 %r9, %r9, %t2;
  }
  {
  .reg .b32 %t<3>;
  mov.u32 %t1, 4;
  add.s32 %t2, %t1, %t1;
  add.s32 %r9, %r9, %t2;
  }
)";
  for (double v : outputs_of(kernel_with(body), 2)) CHECK(v == 11);
}

TEST_CASE("Triton's mbarrier wait loops, one block each with the same names, wait each on its own barrier") {
  // Two barriers, two waits in Triton 3.6's form; thread 0 arrives on both.
  const std::string text = std::string(kHeader) + R"(
.shared .align 8 .b8 bars[16];
.visible .entry k(.param .u64 p_y)
{
  .reg .pred %p<3>;
  .reg .b32 %r<12>;
  .reg .f32 %f<2>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p_y];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, bars;
  add.s32 %r3, %r2, 8;
  setp.eq.s32 %p1, %r1, 0;
  @%p1 mbarrier.init.shared::cta.b64 [%r2], 1;
  @%p1 mbarrier.init.shared::cta.b64 [%r3], 1;
  bar.sync 0;
  @%p1 mbarrier.arrive.shared::cta.b64 _, [%r2];
  mov.u32 %r4, 0;
  {
  .reg .pred complete;
  waitLoop:
  mbarrier.try_wait.parity.shared::cta.b64 complete, [%r2], %r4;
  @!complete bra.uni waitLoop;
  }
  @%p1 mbarrier.arrive.shared::cta.b64 _, [%r3];
  {
  .reg .pred complete;
  waitLoop:
  mbarrier.try_wait.parity.shared::cta.b64 complete, [%r3], %r4;
  @!complete bra.uni waitLoop;
  }
  mov.u32 %r9, 1;
  cvt.rn.f32.s32 %f1, %r9;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd3, %rd2, %rd3;
  st.global.f32 [%rd3], %f1;
  ret;
}
)";
  for (double v : outputs_of(text, 64)) CHECK(v == 1);
}

TEST_CASE("a branch from outside a block to a label inside it names no label it can see") {
  const std::string body = "  mov.u32 %r9, 0;\n  bra.uni IN;\n  {\nIN:\n  add.s32 %r9, %r9, 1;\n  }\n";
  const ptx::Error e = lower_error_of(kernel_with(body), "k");
  CHECK_FALSE(e.unsupported);
  CHECK(e.message.find("unknown label 'IN'") != std::string::npos);
}

TEST_CASE("a register declared in a block is not visible after it") {
  const std::string body = "  mov.u32 %r9, 0;\n  {\n  .reg .b32 %in;\n  mov.u32 %in, 1;\n  }\n  add.s32 %r9, %in, 1;\n";
  const ptx::Error e = lower_error_of(kernel_with(body), "k");
  CHECK_FALSE(e.unsupported);
  CHECK(e.message.find("%in") != std::string::npos);
}

TEST_CASE("a label defined twice in one scope is an error; in sibling scopes it is not") {
  const std::string twice = kernel_with("  mov.u32 %r9, 0;\n  {\nA:\n  add.s32 %r9, %r9, 1;\nA:\n  }\n");
  const ptx::Error e = parse_error_of(twice);
  CHECK(e.message.find("label 'A' is defined twice in one scope") != std::string::npos);
  CHECK(e.loc.line == 18);
  CHECK(ptx::parse_ptx(kernel_with("  mov.u32 %r9, 0;\n  {\nA:\n  }\n  {\nA:\n  }\n"), "t.ptx").module.has_value());
}

TEST_CASE("the scoped-labels regression: two inlined copies of one inline-asm block are equivalent to plain code") {
  // nvcc -ptx -O3 -arch=sm_90 of two calls to an inline-asm helper whose
  // block declares SKIP and OUT (tests/ptx/scoped_labels.cu).
  const std::vector<ParamSpec> params = {tensor("y", DType::F32, 32, Role::Out), tensor("x", DType::F32, 32, Role::In)};
  Report r = equiv("scoped_labels.ptx", "ref_plain", "opt_scoped", 32, params);
  INFO(r.text());
  CHECK(r.verdict == Outcome::Equivalent);
}

TEST_CASE("a block's predicate is found in the predicate half of a sink operand (elect.sync _|p)") {
  // CUTLASS's elect_one_sync: { .reg .pred p; elect.sync _|p, mask; selp.u32 r, 1, 0, p; }
  const std::string body = R"(
  {
  .reg .pred p;
  elect.sync _|p, 0xffffffff;
  selp.u32 %r9, 1, 0, p;
  }
)";
  const std::vector<double> y = outputs_of(kernel_with(body), 32);
  CHECK(y[0] == 1);  // an H200 elects the lowest lane (docs/evaluator.md)
  for (std::size_t i = 1; i < y.size(); ++i) CHECK(y[i] == 0);
}

TEST_CASE("reports name a block's register as written, with the block's line") {
  const std::string body = "  {\n  .reg .b32 %q;\n  add.s32 %r9, %q, 1;\n  }\n";
  Program p = lower_text(kernel_with(body));
  ConcreteDomain dom;
  auto run = run_program(p, launch_of(1, {tensor("y", DType::F32, 1, Role::Out)}), dom);
  REQUIRE(!run.ok());
  INFO(run.diagnostics.back().text());
  CHECK(run.diagnostics.back().text().find("%q (declared in the { } block at line 14)") != std::string::npos);
}
