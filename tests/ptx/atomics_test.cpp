// atom / red: commutative accumulation that is race-free among atomics but
// races with plain accesses, and the schedule-dependence of atom's old value.
// Kernels: tests/ptx/atomics.cu (nvcc 13 PTX in atomics.ptx) and PTX below.
#include "ptx_helpers.hpp"

#include "tileverify/decide.hpp"

using namespace tileverify;
using namespace ptx_test;

namespace {

const char* kHeader = ".version 9.0\n.target sm_80\n.address_size 64\n";

std::vector<ParamSpec> x_y(std::uint64_t n) {
  return {tensor("x", DType::F32, n, Role::In), tensor("y", DType::F32, n, Role::InOut)};
}

// red (no result) on global memory with nvcc's memory-order qualifiers, and
// atom.max / atom.add mixed on one element.
const std::string kHandWritten = std::string(kHeader) + R"(
.visible .entry red_sum(.param .u64 p_x, .param .u64 p_y)
{
  .reg .b32 %r<2>;
  .reg .f32 %f<2>;
  .reg .b64 %rd<7>;
  ld.param.u64 %rd1, [p_x];
  ld.param.u64 %rd2, [p_y];
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd6, %rd3, %rd5;
  ld.global.f32 %f1, [%rd6];
  red.relaxed.gpu.global.add.f32 [%rd4], %f1;
  red.global.max.f32 [%rd4+4], %f1;
  ret;
}
.visible .entry mixed_ops(.param .u64 p_x, .param .u64 p_y)
{
  .reg .pred %p<2>;
  .reg .b32 %r<3>;
  .shared .align 4 .u32 cnt;
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra $L_skip;
  st.shared.u32 [cnt], 0;
$L_skip:
  bar.sync 0;
  setp.eq.u32 %p1, %r1, 1;
  @%p1 atom.shared.max.u32 %r2, [cnt], %r1;
  @!%p1 atom.shared.add.u32 %r2, [cnt], 1;
  ret;
}
)";

}  // namespace

TEST_CASE("atomic adds, max and integer counts equal a plain loop, and every schedule gives the same sums") {
  Report r = equiv("atomics.ptx", "sum_ref", "sum_atomic", 32, x_y(32));
  INFO(r.text());
  CHECK(r.verdict == Outcome::Equivalent);
  CHECK(r.stats.outputs_compared == 32);

  // The accumulated values do not depend on the order of the atomics.
  Program p = lower_file("atomics.ptx", "sum_atomic");
  Launch l = launch_of(32, x_y(32));
  ExprContext c;
  SymbolicDomain dom(c);
  auto base = run_program(p, l, dom);
  REQUIRE(base.ok());
  Expr y0 = *base.outputs.at("y")[0], y1 = *base.outputs.at("y")[1];
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    RunOptions o;
    o.random_schedule = seed;
    auto run = run_program(p, l, dom, o);
    INFO("seed " << seed << ": " << (run.ok() ? std::string() : run.diagnostics[0].text()));
    REQUIRE(run.ok());
    CHECK(decide_equal(c, *run.outputs.at("y")[0], y0).proved());
    CHECK(decide_equal(c, *run.outputs.at("y")[1], y1).proved());
    for (std::size_t i = 2; i < 7; ++i) CHECK(*run.outputs.at("y")[i] == *base.outputs.at("y")[i]);
  }
  // y[6] is the largest i * 3 % 7 over 32 threads: 6; y[2..5] count 8 threads each.
  CHECK(c.to_string(*base.outputs.at("y")[6]) == "6");
  CHECK(c.to_string(*base.outputs.at("y")[2]) == "8");
}

TEST_CASE("red on global memory adds every thread's x to y, and red.max keeps the maximum") {
  auto parsed = ptx::parse_ptx(kHandWritten, "red.ptx");
  REQUIRE(parsed.module.has_value());
  auto lowered = ptx::lower_kernel(*parsed.module, "red_sum");
  INFO((lowered.error ? lowered.error->text() : ""));
  REQUIRE(lowered.program.has_value());
  ConcreteDomain dom;
  dom.inputs["x"] = {1, 2, 3, 4, 5, 6, 7, 8};
  dom.inputs["y"] = {100, -1, 0, 0, 0, 0, 0, 0};
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    RunOptions o;
    if (seed) o.random_schedule = seed;
    auto run = run_program(*lowered.program, launch_of(8, x_y(8)), dom, o);
    INFO((run.ok() ? "" : run.diagnostics[0].text()));
    REQUIRE(run.ok());
    CHECK(*run.outputs.at("y")[0] == doctest::Approx(136));
    CHECK(*run.outputs.at("y")[1] == doctest::Approx(8));
  }
}

TEST_CASE("an atomic and a plain read of the element without a barrier between them race") {
  Report r = check("atomics.ptx", "sum_atomic_nobar", 32, x_y(32));
  INFO(r.text());
  REQUIRE(r.verdict == Outcome::Race);
  const Diagnostic& d = r.diagnostics.back();
  CHECK(d.buffer == "_ZZ16sum_atomic_nobarE1s");
  REQUIRE(d.accesses.size() == 2);
  CHECK(d.accesses[0].kind == "read");
  CHECK(d.accesses[0].loc.line == 244);  // ld.shared.f32 of s by thread 0
  CHECK(d.accesses[1].kind == "atomic");
  CHECK(d.accesses[1].loc.line == 241);  // atom.shared.add.f32 by thread 1
  CHECK(d.text().find("atomics never race with each other") != std::string::npos);
}

TEST_CASE("atom.add and atom.max on one element do not commute: they race") {
  auto parsed = ptx::parse_ptx(kHandWritten, "mixed.ptx");
  REQUIRE(parsed.module.has_value());
  auto lowered = ptx::lower_kernel(*parsed.module, "mixed_ops");
  REQUIRE(lowered.program.has_value());
  ExprContext c;
  SymbolicDomain dom(c);
  auto run = run_program(*lowered.program, launch_of(4, x_y(4)), dom);
  REQUIRE(!run.ok());
  const Diagnostic& d = run.diagnostics.back();
  INFO(d.text());
  CHECK(d.kind == DiagKind::Race);
  REQUIRE(d.accesses.size() == 2);
  CHECK(d.accesses[0].kind == "atomic");
  CHECK(d.accesses[1].kind == "atomic");
}

TEST_CASE("the old value an atom returns depends on the schedule: used as an address or an output, it is reported") {
  Report ticket = check("atomics.ptx", "ticket", 32, x_y(32));
  INFO(ticket.text());
  REQUIRE(ticket.verdict == Outcome::Race);
  CHECK(ticket.diagnostics.back().message.find("an address depends on the value an atomic returned") != std::string::npos);
  CHECK(ticket.diagnostics.back().detail.find("atomics.ptx:277:2") != std::string::npos);  // the atom

  Report prefix = check("atomics.ptx", "prefix_by_atomic", 32, x_y(32));
  INFO(prefix.text());
  REQUIRE(prefix.verdict == Outcome::Race);
  CHECK(prefix.diagnostics.back().message.find("output y[") != std::string::npos);
  CHECK(prefix.diagnostics.back().loc.line == 318);
}

TEST_CASE("atomics that do not commute are unsupported, with file:line:column and the opcode") {
  auto text = [](const std::string& instr) {
    return std::string(kHeader) +
           ".visible .entry k(.param .u64 p)\n{\n  .reg .b32 %r<4>;\n  .reg .b64 %rd<2>;\n  ld.param.u64 %rd1, [p];\n  " +
           instr + "\n  ret;\n}\n";
  };
  ptx::Error exch = lower_error_of(text("atom.global.exch.b32 %r1, [%rd1], %r2;"), "k", "a.ptx");
  CHECK(exch.loc.file == "a.ptx");
  CHECK(exch.loc.line == 9);
  CHECK(exch.loc.column == 3);
  CHECK(exch.message.find("atom.global.exch.b32") != std::string::npos);
  ptx::Error cas = lower_error_of(text("atom.global.cas.b32 %r1, [%rd1], %r2, %r3;"), "k");
  CHECK(cas.message.find("atom.global.cas.b32") != std::string::npos);
  ptx::Error half2 = lower_error_of(text("atom.global.add.noftz.f16x2 %r1, [%rd1], %r2;"), "k");
  CHECK(half2.message.find("packed") != std::string::npos);
  ptx::Error inc = lower_error_of(text("atom.global.inc.u32 %r1, [%rd1], %r2;"), "k");
  CHECK(inc.message.find("atom.global.inc.u32") != std::string::npos);
}
