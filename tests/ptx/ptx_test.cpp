// The PTX frontend: parsing, errors with file:line:column, lowering, and a
// kernel in nvcc's form verified against a ProgramBuilder kernel.
#include "tileverify/decide.hpp"
#include "tileverify/eval.hpp"
#include "tileverify/ptx.hpp"
#include "../../examples/kernels.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

using namespace tileverify;

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string kDir = TILEVERIFY_TEST_DIR;

ptx::Error parse_error(const std::string& text) {
  auto r = ptx::parse_ptx(text, "bad.ptx");
  REQUIRE(r.error.has_value());
  return *r.error;
}

ptx::Error lower_error(const std::string& text, const std::string& kernel = "k") {
  auto r = ptx::parse_ptx(text, "bad.ptx");
  REQUIRE(r.module.has_value());
  auto l = ptx::lower_kernel(*r.module, kernel);
  // An unsupported instruction is kept in the code (it stops a run that
  // reaches it): its error is the first one.
  if (l.program && !l.error) l.error = ptx::first_unsupported(*l.program);
  REQUIRE(l.error.has_value());
  return *l.error;
}

const char* kHeader = ".version 8.5\n.target sm_90\n.address_size 64\n";

}  // namespace

TEST_CASE("an nvcc-style fast-math naive softmax parses, lowers, and equals online softmax") {
  auto r = ptx::parse_ptx_file(kDir + "/ptx/softmax_fastmath.ptx");
  INFO((r.error ? r.error->text() : ""));
  REQUIRE(r.module.has_value());
  CHECK(r.module->version == "8.5");
  CHECK(r.module->target == "sm_90");
  REQUIRE(r.module->kernels.size() == 1);
  const ptx::Kernel& k = r.module->kernels[0];
  CHECK(k.name == "softmax");
  CHECK(k.params.size() == 2);
  auto l = ptx::lower_kernel(*r.module, "softmax");
  INFO((l.error ? l.error->text() : ""));
  REQUIRE(l.program.has_value());
  // Source locations point into the file.
  CHECK(l.program->code[0].loc.line == 25);
  CHECK(l.program->code[0].loc.file.find("softmax_fastmath.ptx") != std::string::npos);

  ExprContext c;
  SymbolicDomain dom(c);
  auto a = run_program(*l.program, kernels::softmax_launch(4, 4), dom);
  INFO((a.ok() ? "" : a.diagnostics[0].text()));
  REQUIRE(a.ok());
  auto b = run_program(kernels::online_softmax(4), kernels::softmax_launch(4, 4), dom);
  REQUIRE(b.ok());
  for (std::size_t i = 0; i < 4; ++i)
    CHECK(decide_equal(c, *a.outputs.at("y")[i], *b.outputs.at("y")[i]).proved());
}

TEST_CASE("removing the barrier from the PTX gives a race on the shared buffer with PTX line numbers") {
  std::string text = read(kDir + "/ptx/softmax_fastmath.ptx");
  auto pos = text.find("\tbar.sync \t0;");
  REQUIRE(pos != std::string::npos);
  text.replace(pos, std::string("\tbar.sync \t0;").size(), "\t// no barrier");
  auto r = ptx::parse_ptx(text, "racy.ptx");
  REQUIRE(r.module.has_value());
  auto l = ptx::lower_kernel(*r.module, "softmax");
  REQUIRE(l.program.has_value());
  ExprContext c;
  SymbolicDomain dom(c);
  auto run = run_program(*l.program, kernels::softmax_launch(4, 4), dom);
  REQUIRE(!run.diagnostics.empty());
  const Diagnostic& d = run.diagnostics.back();
  INFO(d.text());
  CHECK(d.kind == DiagKind::Race);
  CHECK(d.buffer == "_ZZ7softmaxE3buf");
  REQUIRE(d.accesses.size() == 2);
  CHECK(d.accesses[0].loc.file == "racy.ptx");
  CHECK(d.accesses[0].loc.line == 44);  // ld.shared in the loop
  CHECK(d.accesses[1].loc.line == 37);  // st.shared of buf[tid]
}

TEST_CASE("every construct the parser knows appears in a module that parses") {
  std::string text = std::string(kHeader) + R"(
.extern .shared .align 16 .b8 dyn[];
.visible .entry k(.param .u64 .ptr .global .align 4 k_param_0, .param .u32 k_param_1)
.reqntid 64, 1, 1
{
  .reg .pred %p<3>;
  .reg .b32 %r<10>, %extra;
  .reg .f32 %f<10>;
  .reg .b64 %rd<4>;
  .local .align 8 .b8 __local_depot[32];
  .pragma "nounroll";
  /* a block comment */
  ld.param.u32 %r1, [k_param_1];
  mov.u32 %r2, %laneid;
  shfl.sync.bfly.b32 %r3|%p1, %r2, 1, 31, -1;
  vote.sync.ballot.b32 %r4, %p1, 0xffffffff;
  mov.f32 %f1, 0fBF800000;
  mov.f64 %rd1, 0d3FF0000000000000;
  @!%p1 bra $L__end;
  { // a nested scope
    add.s32 %r5, %r1, -4;
  }
$L__end:
  ret;
}
)";
  auto r = ptx::parse_ptx(text, "all.ptx");
  INFO((r.error ? r.error->text() : ""));
  REQUIRE(r.module.has_value());
  const ptx::Kernel& k = r.module->kernels.at(0);
  CHECK(k.params[0].pointer_hint);
  CHECK(k.regs.size() == 5);
  CHECK(k.vars.size() == 1);
  CHECK(r.module->globals.size() == 1);
  CHECK(r.module->globals[0].unsized);
  std::size_t labels = 0;
  for (const auto& s : k.body) labels += s.kind == ptx::Statement::Kind::Label;
  CHECK(labels == 1);
  // k never uses the dynamic shared array `dyn`: it needs no size (a kernel
  // that does use one is in nvcc_forms_test.cpp).
  auto no_size = ptx::lower_kernel(*r.module, "k");
  INFO((no_size.error ? no_size.error->text() : ""));
  CHECK(no_size.program.has_value());
  auto sized = ptx::lower_kernel(*r.module, "k", 256);
  INFO((sized.error ? sized.error->text() : ""));
  CHECK(sized.program.has_value());
}

TEST_CASE("malformed PTX gives errors with line and column, never a crash") {
  SUBCASE("a truncated file") {
    auto e = parse_error(std::string(kHeader) + ".visible .entry k()\n{\n  ret;\n");
    CHECK(e.message.find("never closed") != std::string::npos);
    CHECK(e.loc.line == 5);
  }
  SUBCASE("a truncated instruction") {
    auto e = parse_error(std::string(kHeader) + ".visible .entry k()\n{\n  add.s32 %r1, %r2");
    CHECK(e.message.find("end of file") != std::string::npos);
  }
  SUBCASE("unbalanced braces") {
    auto e = parse_error(std::string(kHeader) + ".visible .entry k()\n{\n  {\n  ret;\n}\n");
    CHECK(e.message.find("unbalanced braces") != std::string::npos);
  }
  SUBCASE("an unknown directive") {
    auto e = parse_error(".version 8.5\n.bogus 3;\n");
    CHECK(e.loc.line == 2);
    CHECK(e.loc.column == 1);
    CHECK(e.message.find(".bogus") != std::string::npos);
  }
  SUBCASE("a malformed float constant") {
    auto e = parse_error(std::string(kHeader) + ".visible .entry k()\n{\n  .reg .f32 %f<2>;\n  mov.f32 %f1, 0f3F80;\n}\n");
    CHECK(e.loc.line == 7);
    CHECK(e.loc.column == 16);
  }
  SUBCASE("an unknown opcode") {
    auto e = lower_error(std::string(kHeader) + ".visible .entry k()\n{\n  .reg .b32 %r<2>;\n  frobnicate.b32 %r1, %r0;\n}\n");
    CHECK(e.loc.line == 7);
    CHECK(e.loc.column == 3);
    CHECK(e.message.find("frobnicate.b32") != std::string::npos);
  }
  SUBCASE("an undeclared register") {
    auto e = lower_error(std::string(kHeader) + ".visible .entry k()\n{\n  .reg .b32 %r<2>;\n  add.s32 %r1, %r7, 1;\n}\n");
    CHECK(e.loc.line == 7);
    CHECK(e.loc.column == 16);
    CHECK(e.message.find("%r7") != std::string::npos);
  }
  SUBCASE("an unknown label") {
    auto e = lower_error(std::string(kHeader) + ".visible .entry k()\n{\n  bra $L__nowhere;\n}\n");
    CHECK(e.message.find("$L__nowhere") != std::string::npos);
  }
  SUBCASE("a kernel that is not there") {
    auto e = lower_error(std::string(kHeader) + ".visible .entry k()\n{\n  ret;\n}\n", "other");
    CHECK(e.message.find("no kernel named 'other'") != std::string::npos);
  }
  SUBCASE("a missing file") {
    auto r = ptx::parse_ptx_file("/nonexistent/x.ptx");
    REQUIRE(r.error.has_value());
    CHECK(r.error->message.find("cannot read") != std::string::npos);
  }
}

TEST_CASE("float-bit tricks are lifted only in nvcc's expf pattern; elsewhere they are not structured") {
  std::string text = std::string(kHeader) + R"(
.visible .entry k(.param .u64 k_param_0)
{
  .reg .b32 %r<4>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [k_param_0];
  cvta.to.global.u64 %rd2, %rd1;
  ld.global.f32 %f1, [%rd2];
  mov.b32 %r1, %f1;
  shl.b32 %r2, %r1, 23;
  mov.b32 %f2, %r2;
  st.global.f32 [%rd2], %f2;
  ret;
}
)";
  auto r = ptx::parse_ptx(text, "bits.ptx");
  REQUIRE(r.module.has_value());
  auto l = ptx::lower_kernel(*r.module, "k");
  REQUIRE(l.program.has_value());
  Launch launch;
  launch.block = Dim3{1, 1, 1};
  launch.args = {LaunchArg::of_tensor({"x", DType::F32, {1}, Role::InOut})};
  ExprContext c;
  SymbolicDomain dom(c);
  auto run = run_program(*l.program, launch, dom);
  REQUIRE(run.diagnostics.size() == 1);
  CHECK(run.diagnostics[0].kind == DiagKind::NotStructured);
  CHECK(run.diagnostics[0].loc.line == 14);  // the shl
}
