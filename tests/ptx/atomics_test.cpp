// atom / red: commutative accumulation that is race-free among atomics but
// races with plain accesses, and the schedule-dependence of atom's old value;
// exch, inc, dec and cas, which commute only with the same operands;
// compare-and-swap loops read as one read-modify-write.
// Kernels: tests/ptx/atomics.cu (nvcc 13 PTX in atomics.ptx), the
// examples/kernels/atomics kernels (nvcc 13 PTX), and PTX below.
#include "ptx_helpers.hpp"

#include "tileverify/decide.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

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
  CHECK(d.text().find("atomics that commute never race with each other") != std::string::npos);
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
  // y[atomicAdd(&n, 1)] = x[t]: no race (each thread has its own slot), but
  // y's order is the schedule's (machine_slots.cpp).
  Report ticket = check("atomics.ptx", "ticket", 32, x_y(32));
  INFO(ticket.text());
  REQUIRE(ticket.verdict == Outcome::Unsupported);
  CHECK(ticket.diagnostics.back().message.find("output y[") != std::string::npos);
  CHECK(ticket.diagnostics.back().message.find("depends on which thread took which slot from an atom.add") !=
        std::string::npos);
  CHECK(ticket.diagnostics.back().detail.find("atomics.ptx:277:2") != std::string::npos);  // the atom

  Report prefix = check("atomics.ptx", "prefix_by_atomic", 32, x_y(32));
  INFO(prefix.text());
  REQUIRE(prefix.verdict == Outcome::Race);
  CHECK(prefix.diagnostics.back().message.find("output y[") != std::string::npos);
  CHECK(prefix.diagnostics.back().loc.line == 318);
}


namespace {

std::string example(const std::string& file) {
  return std::string(TILEVERIFY_TEST_DIR) + "/../examples/kernels/atomics/" + file;
}

Program lower_example(const std::string& file, const std::string& kernel) {
  auto parsed = ptx::parse_ptx_file(example(file));
  INFO((parsed.error ? parsed.error->text() : std::string()));
  REQUIRE(parsed.module.has_value());
  auto lowered = ptx::lower_kernel(*parsed.module, kernel);
  INFO((lowered.error ? lowered.error->text() : std::string()));
  REQUIRE(lowered.program.has_value());
  return *lowered.program;
}

Report equiv_example(const std::string& spec) {
  SpecResult s = load_spec(example(spec));
  INFO(s.error);
  REQUIRE(s.spec.has_value());
  return check_equivalence(*s.spec);
}

std::size_t count_text(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string kernel_text(const std::string& body, const std::string& params = ".param .u64 p") {
  return std::string(kHeader) + ".visible .entry k(" + params +
         ")\n{\n  .reg .pred %p<4>;\n  .reg .b32 %r<12>;\n  .reg .f32 %f<8>;\n  .reg .b64 %rd<4>;\n" + body + "\n  ret;\n}\n";
}

}  // namespace

TEST_CASE("atom.exch, .inc, .dec and .cas lower with their operands, and inc and dec on another type than .u32 are unsupported") {
  Program p = lower_text(kernel_text(R"(  ld.param.u64 %rd1, [p];
  atom.global.exch.b32 %r1, [%rd1], %r2;
  atom.global.inc.u32 %r1, [%rd1], 16;
  atom.global.dec.u32 %r1, [%rd1], 16;
  atom.global.cas.b32 %r1, [%rd1], %r2, %r3;
  atom.add.relaxed.gpu.s32 %r1, [%rd1], %r2;
  atom.max.acq_rel.gpu.s32 %r1, [%rd1], %r2;
  atom.exch.acquire.gpu.b64 %rd2, [%rd1], %rd3;
  atom.cas.relaxed.cta.b32 %r1, [%rd1], %r2, %r3;
  red.global.inc.u32 [%rd1], 3;)"));
  const std::string l = p.listing();
  INFO(l);
  CHECK(l.find("atom.global.exch.b32 %r1, [%rd1], %r2") != std::string::npos);
  CHECK(l.find("atom.global.inc.u32 %r1, [%rd1], 16") != std::string::npos);
  CHECK(l.find("atom.global.dec.u32 %r1, [%rd1], 16") != std::string::npos);
  CHECK(l.find("atom.global.cas.b32 %r1, [%rd1], %r2, %r3") != std::string::npos);
  CHECK(l.find("atom.global.add.s32 %r1") != std::string::npos);  // cuda::atomic_ref's order of qualifiers
  CHECK(l.find("atom.global.max.s32 %r1") != std::string::npos);
  CHECK(l.find("atom.global.exch.b64 %rd2") != std::string::npos);
  CHECK(l.find("red.global.inc.u32 [%rd1], 3") != std::string::npos);

  ptx::Error inc = lower_error_of(kernel_text("  ld.param.u64 %rd1, [p];\n  atom.global.inc.u64 %rd2, [%rd1], 16;"), "k");
  CHECK(inc.message.find("u32 only") != std::string::npos);
  ptx::Error half2 = lower_error_of(kernel_text("  ld.param.u64 %rd1, [p];\n  atom.global.add.noftz.f16x2 %r1, [%rd1], %r2;"), "k");
  CHECK(half2.message.find("packed") != std::string::npos);
  ptx::Error red_cas = lower_error_of(kernel_text("  ld.param.u64 %rd1, [p];\n  red.global.cas.b32 [%rd1], %r2, %r3;"), "k");
  CHECK(!red_cas.unsupported);  // bad input: red has no cas
}

TEST_CASE("atomicInc and atomicDec wrap at their bound as the PTX ISA defines, and exchanges of one value and incs of one bound commute") {
  Program p = lower_example("counters.ptx", "counters");
  Launch l = launch_of(32, {tensor("y", DType::F32, 4, Role::Out)});
  ConcreteDomain dom;
  for (std::uint64_t seed = 0; seed <= 50; ++seed) {
    RunOptions o;
    if (seed) o.random_schedule = seed;
    auto run = run_program(p, l, dom, o);
    INFO("seed " << seed << ": " << (run.ok() ? std::string() : run.diagnostics[0].text()));
    REQUIRE(run.ok());
    // 32 incs wrapping at 9 from 0: 32 mod 10; 32 decs from 0 (0 -> 9 -> 8 ... -> 0 -> 9): 8.
    CHECK(*run.outputs.at("y")[0] == 2);
    CHECK(*run.outputs.at("y")[1] == 8);
    CHECK(*run.outputs.at("y")[2] == 1);
    CHECK(*run.outputs.at("y")[3] == 31);
  }
  Report r = equiv_example("counters.json");
  INFO(r.text());
  CHECK(r.verdict == Outcome::Equivalent);
}

TEST_CASE("exchanges of different values race, and so do incs with different bounds and tickets taken by atomicInc") {
  for (const char* spec : {"exch_last_wins.json", "inc_two_bounds.json"}) {
    Report r = equiv_example(spec);
    INFO(spec << ": " << r.text());
    REQUIRE(r.verdict == Outcome::Race);
    const Diagnostic& d = r.diagnostics.back();
    REQUIRE(d.accesses.size() == 2);
    CHECK(d.accesses[0].kind == "atomic");
    CHECK(d.accesses[1].kind == "atomic");
    CHECK(d.accesses[0].instr.find(spec[0] == 'e' ? "atom.shared.exch" : "atom.shared.inc") != std::string::npos);
    CHECK(d.text().find("these two atomics do not commute") != std::string::npos);
  }
  Report ticket = equiv_example("inc_ticket.json");
  INFO(ticket.text());
  REQUIRE(ticket.verdict == Outcome::Race);
  CHECK(ticket.diagnostics.back().message.find("depends on the value an atomic returned") != std::string::npos);
}

TEST_CASE("an atomic of another kind that a thread ran before its latest one still races with an unordered atomic") {
  // Thread 0 adds, then takes the maximum; thread 1 only takes the maximum.
  // Thread 1's max and thread 0's add do not commute (max(x + 1, 5, 7) is not
  // max(x, 7) + 1 then max 5), though thread 0's latest atomic is a max.
  const std::string text = kernel_text(R"(  .shared .align 4 .u32 c;
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra $L_one;
  st.shared.u32 [c], 0;
$L_one:
  bar.sync 0;
  @!%p1 red.shared.add.u32 [c], 1;
  @!%p1 red.shared.max.u32 [c], 5;
  @%p1 red.shared.max.u32 [c], 7;)");
  Program p = lower_text(text);
  ExprContext c;
  SymbolicDomain dom(c);
  auto run = run_program(p, launch_of(2, {tensor("p", DType::F32, 1, Role::In)}), dom);
  REQUIRE(!run.ok());
  const Diagnostic& d = run.diagnostics.back();
  INFO(d.text());
  CHECK(d.kind == DiagKind::Race);
  REQUIRE(d.accesses.size() == 2);
  CHECK(d.accesses[0].instr.find("red.shared.add") != std::string::npos);
  CHECK(d.accesses[1].instr.find("red.shared.max") != std::string::npos);
}

TEST_CASE("a single atom.cas computes (x == b) ? c : x, and CASes of the same operands commute while others race") {
  auto run_with = [](const std::string& cas) {
    Program p = lower_text(kernel_text(R"(  .shared .align 4 .u32 flag;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra $L_one;
  st.shared.u32 [flag], 0;
$L_one:
  bar.sync 0;
  )" + cas + R"(
  bar.sync 0;
  @%p1 bra $L_end;
  ld.shared.u32 %r3, [flag];
  cvt.rn.f32.u32 %f1, %r3;
  st.global.f32 [%rd1], %f1;
$L_end:)"));
    ConcreteDomain dom;
    return run_program(p, launch_of(8, {tensor("p", DType::F32, 1, Role::Out)}), dom);
  };
  auto same = run_with("atom.shared.cas.b32 %r2, [flag], 0, 7;");
  INFO((same.ok() ? std::string() : same.diagnostics[0].text()));
  REQUIRE(same.ok());
  CHECK(*same.outputs.at("p")[0] == 7);
  auto own = run_with("atom.shared.cas.b32 %r2, [flag], 0, %r1;");  // the first thread's index wins
  REQUIRE(!own.ok());
  CHECK(own.diagnostics.back().kind == DiagKind::Race);
  CHECK(own.diagnostics.back().accesses.at(0).kind == "atomic");
}

TEST_CASE("a CAS float-max loop is one read-modify-write: a block's maximum equals the serial maximum in every schedule") {
  Program p = lower_example("cas.ptx", "max_cas_block");
  const std::string l = p.listing();
  INFO(l);
  CHECK(count_text(l, "atom.shared.max.f32") == 1);
  CHECK(count_text(l, "(a compare-and-swap loop)") == 1);
  CHECK(count_text(l, "ld.relaxed.shared") == 1);  // the loop's first read
  CHECK(count_text(l, "atom.shared.cas") == 0);

  Report r = equiv_example("cas_max_block.json");
  INFO(r.text());
  CHECK(r.verdict == Outcome::Equivalent);
  CHECK(r.stats.outputs_compared == 1);  // the verified CTA's element

  Launch launch = launch_of(128, {tensor("x", DType::F32, 512, Role::In), tensor("y", DType::F32, 4, Role::Out)});
  ExprContext c;
  SymbolicDomain dom(c);
  auto base = run_program(p, launch, dom);
  REQUIRE(base.ok());
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    RunOptions o;
    o.random_schedule = seed;
    auto run = run_program(p, launch, dom, o);
    INFO("seed " << seed << ": " << (run.ok() ? std::string() : run.diagnostics[0].text()));
    REQUIRE(run.ok());
    CHECK(decide_equal(c, *run.outputs.at("y")[0], *base.outputs.at("y")[0]).proved());
  }
  for (const char* spec : {"cas_max_block_all.json", "cas_min_block.json", "cas_sum_f64.json", "cas_max_grid.json"}) {
    Report e = equiv_example(spec);
    INFO(spec << ": " << e.text());
    CHECK(e.verdict == Outcome::Equivalent);
  }
}

TEST_CASE("broken CAS loops: one attempt races, max and min by CAS race, add for max is not equivalent, the old value races") {
  Report once = equiv_example("cas_once.json");
  INFO(once.text());
  REQUIRE(once.verdict == Outcome::Race);
  // No loop: the first read is a plain read, unordered with the other threads' CAS.
  CHECK(once.diagnostics.back().accesses.at(0).kind != once.diagnostics.back().accesses.at(1).kind);

  // nvcc closes the min loop with a branch out and bra.uni back: both loops are read.
  Program mixed = lower_example("cas.ptx", "max_min_cas");
  CHECK(count_text(mixed.listing(), "(a compare-and-swap loop)") == 2);
  Report maxmin = equiv_example("cas_max_min.json");
  INFO(maxmin.text());
  REQUIRE(maxmin.verdict == Outcome::Race);
  const Diagnostic& d = maxmin.diagnostics.back();
  REQUIRE(d.accesses.size() == 2);
  CHECK(d.accesses[0].kind == "atomic");
  CHECK(d.accesses[1].kind == "atomic");
  std::vector<std::string> ops = {d.accesses[0].instr.substr(0, 20), d.accesses[1].instr.substr(0, 20)};
  std::sort(ops.begin(), ops.end());
  CHECK(ops[0] == "atom.shared.max.f32 ");
  CHECK(ops[1] == "atom.shared.min.f32 ");

  Report add = equiv_example("cas_add_not_max.json");
  INFO(add.text());
  CHECK(add.verdict == Outcome::NotEquivalent);

  Report old = equiv_example("cas_old_value.json");
  INFO(old.text());
  REQUIRE(old.verdict == Outcome::Race);
  CHECK(old.diagnostics.back().message.find("depends on the value an atomic returned") != std::string::npos);
  CHECK(old.diagnostics.back().detail.find("(a compare-and-swap loop)") != std::string::npos);

  Report grid = equiv_example("cas_max_min_grid.json");
  INFO(grid.text());
  CHECK(grid.verdict == Outcome::Race);
}

TEST_CASE("CAS loops that are not one read-modify-write are unsupported, naming the loop's lines and why") {
  Report wrong = equiv_example("cas_wrong_compare.json");
  INFO(wrong.text());
  REQUIRE(wrong.verdict == Outcome::Unsupported);
  Program p = lower_example("cas.ptx", "max_cas_wrong_compare");
  auto e = ptx::first_unsupported(p);
  REQUIRE(e.has_value());
  INFO(e->text());
  CHECK(e->message.find("the compare-and-swap loop at ") != std::string::npos);
  CHECK(e->message.find("cas.ptx:") != std::string::npos);
  CHECK(e->message.find("which the loop does not change, not with the value the loop read") != std::string::npos);

  Program lock = lower_example("cas.ptx", "max_by_lock");
  auto l = ptx::first_unsupported(lock);
  REQUIRE(l.has_value());
  INFO(l->text());
  CHECK(l->message.find("compares with a constant") != std::string::npos);
  CHECK(l->message.find("lock") != std::string::npos);
  Report r = equiv_example("cas_lock.json");
  CHECK(r.verdict == Outcome::Unsupported);

  // A loop whose update is two operations of the value read (x * v + 1).
  ptx::Error two = lower_error_of(kernel_text(R"(  ld.param.u64 %rd1, [p];
  ld.global.u32 %r1, [%rd1];
$L_try:
  mov.b32 %f1, %r1;
  mul.f32 %f2, %f1, 0f40000000;
  add.f32 %f3, %f2, 0f3F800000;
  mov.b32 %r2, %f3;
  atom.global.cas.b32 %r3, [%rd1], %r1, %r2;
  setp.ne.s32 %p1, %r1, %r3;
  mov.u32 %r1, %r3;
  @%p1 bra $L_try;)"), "k", "two.ptx");
  INFO(two.text());
  CHECK(two.loc.line == 17);  // the atom.cas
  CHECK(two.message.find("two.ptx:13-20") != std::string::npos);
  CHECK(two.message.find("add.f32") != std::string::npos);
}

TEST_CASE("a CAS loop written as a branch out and bra.uni back, with the carried value moved first, is read too") {
  Program p = lower_text(kernel_text(R"(  .shared .align 4 .f32 m;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra $L_one;
  st.shared.f32 [m], 0f00000000;
$L_one:
  bar.sync 0;
  cvt.rn.f32.u32 %f1, %r1;
  ld.shared.u32 %r6, [m];
$L_try:
  mov.u32 %r2, %r6;
  mov.b32 %f2, %r2;
  add.f32 %f3, %f2, %f1;
  mov.b32 %r5, %f3;
  atom.shared.cas.b32 %r6, [m], %r2, %r5;
  setp.eq.s32 %p2, %r2, %r6;
  @%p2 bra $L_done;
  bra.uni $L_try;
$L_done:
  bar.sync 0;
  @%p1 bra $L_end;
  ld.shared.f32 %f4, [m];
  st.global.f32 [%rd1], %f4;
$L_end:)"));
  INFO(p.listing());
  CHECK(count_text(p.listing(), "atom.shared.add.f32") == 1);
  ConcreteDomain dom;
  for (std::uint64_t seed = 0; seed <= 20; ++seed) {
    RunOptions o;
    if (seed) o.random_schedule = seed;
    auto run = run_program(p, launch_of(16, {tensor("p", DType::F32, 1, Role::Out)}), dom, o);
    INFO((run.ok() ? std::string() : run.diagnostics[0].text()));
    REQUIRE(run.ok());
    CHECK(*run.outputs.at("p")[0] == 120);  // 0 + 1 + ... + 15
  }
}

TEST_CASE("cuda::atomic_ref: relaxed and acq_rel atomics, fetch_max and compare_exchange loops, acquire loads after a barrier") {
  Report r = equiv_example("atomic_ref.json");
  INFO(r.text());
  CHECK(r.verdict == Outcome::Equivalent);
  Report bad = equiv_example("atomic_ref_no_barrier.json");
  INFO(bad.text());
  CHECK(bad.verdict == Outcome::Race);
}

TEST_CASE("over a grid, an element one CTA updates with two different atomics is not combined: it races with the other CTAs") {
  // Each CTA adds 1 to y[0], then (after a barrier) takes the maximum with 5:
  // max(y + 1, 5) from two CTAs is not one CTA's update applied twice.
  const std::string text = kernel_text(R"(  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @!%p1 red.global.add.f32 [%rd1], 0f3F800000;
  bar.sync 0;
  @!%p1 red.global.max.f32 [%rd1], 0f40A00000;)");
  const std::string file = (std::filesystem::temp_directory_path() / "tileverify_atomics_grid.ptx").string();
  {
    std::ofstream out(file);
    out << text;
  }
  Spec s;
  KernelSpec k;
  k.ptx = file;
  k.kernel = "k";
  k.block = Dim3{2, 1, 1};
  s.ref = k;
  s.opt = k;
  s.grid = Dim3{2, 1, 1};
  s.all_ctas = true;
  s.params = {tensor("p", DType::F32, 1, Role::InOut)};
  s.path = "test";
  Report r = check_equivalence(s);
  INFO(r.text());
  CHECK(r.verdict == Outcome::Race);
}

TEST_CASE("atomicMax on the bits of a float is not read as a float max: integer order is float order for non-negative floats only") {
  // atomicMax((int*)&m, __float_as_int(fabsf(x[t]))), as nvcc 13 compiles it.
  Program p = lower_text(kernel_text(R"(  .shared .align 4 .f32 m;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra $L_one;
  st.shared.u32 [m], 0;
$L_one:
  bar.sync 0;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.f32 %f1, [%rd3];
  abs.f32 %f2, %f1;
  mov.b32 %r2, %f2;
  atom.shared.max.s32 %r3, [m], %r2;)"));
  ExprContext c;
  SymbolicDomain dom(c);
  auto run = run_program(p, launch_of(4, {tensor("p", DType::F32, 4, Role::In)}), dom);
  REQUIRE(!run.ok());
  INFO(run.diagnostics.back().text());
  CHECK(run.diagnostics.back().kind == DiagKind::NotStructured);
  CHECK(run.diagnostics.back().message.find("non-negative floats") != std::string::npos);
}

TEST_CASE("a read before a barrier that precedes a CAS loop stays a plain read: its value is not schedule-dependent") {
  // Every thread reads m, waits at the barrier, then takes the maximum by CAS:
  // the read is ordered before every update, so thread 0 may write it out.
  Program p = lower_text(kernel_text(R"(  .shared .align 4 .f32 m;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra $L_one;
  st.shared.f32 [m], 0f00000000;
$L_one:
  bar.sync 0;
  cvt.rn.f32.u32 %f1, %r1;
  ld.shared.u32 %r6, [m];
  mov.u32 %r8, %r6;
  bar.sync 0;
$L_try:
  mov.b32 %f2, %r6;
  max.f32 %f3, %f2, %f1;
  mov.b32 %r5, %f3;
  atom.shared.cas.b32 %r7, [m], %r6, %r5;
  setp.ne.s32 %p2, %r6, %r7;
  mov.u32 %r6, %r7;
  @%p2 bra $L_try;
  @%p1 bra $L_end;
  st.global.u32 [%rd1], %r8;
$L_end:)"));
  INFO(p.listing());
  CHECK(count_text(p.listing(), "(a compare-and-swap loop)") == 1);
  CHECK(count_text(p.listing(), "ld.relaxed") == 0);
  ConcreteDomain dom;
  auto run = run_program(p, launch_of(8, {tensor("p", DType::F32, 1, Role::Out)}), dom);
  INFO((run.ok() ? std::string() : run.diagnostics[0].text()));
  REQUIRE(run.ok());
  CHECK(*run.outputs.at("p")[0] == 0);
}

namespace {

// nvcc 13's "while (val > __int_as_float(old)) old = atomicCAS(a, old, __float_as_int(val))",
// with `before` (the first read, the test around the loop) replaceable.
std::string while_greater(const std::string& before) {
  return kernel_text(R"(  .shared .align 4 .f32 m;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra $L_one;
  st.shared.f32 [m], 0fBF800000;
$L_one:
  bar.sync 0;
  cvt.rn.f32.u32 %f1, %r1;
)" + before + R"(
  mov.b32 %r3, %f1;
  mov.u32 %r7, m;
$L_try:
  atom.shared.cas.b32 %r8, [%r7], %r8, %r3;
  mov.b32 %f3, %r8;
  setp.gt.f32 %p3, %f1, %f3;
  @%p3 bra $L_try;
$L_out:
  bar.sync 0;
  @%p1 bra $L_end;
  ld.shared.f32 %f4, [m];
  st.global.f32 [%rd1], %f4;
$L_end:)");
}

}  // namespace

TEST_CASE("the 'CAS while val > old' float max is one atomic max when its test before the loop is of the first read") {
  const std::string read_and_test = R"(  ld.shared.u32 %r8, [m];
  mov.b32 %f2, %r8;
  setp.le.f32 %p2, %f1, %f2;
  @%p2 bra $L_out;)";
  Program p = lower_text(while_greater(read_and_test));
  INFO(p.listing());
  CHECK(count_text(p.listing(), "atom.shared.max.f32") == 1);
  CHECK(count_text(p.listing(), "ld.relaxed.shared") == 1);
  ConcreteDomain dom;
  for (std::uint64_t seed = 0; seed <= 20; ++seed) {
    RunOptions o;
    if (seed) o.random_schedule = seed;
    auto run = run_program(p, launch_of(8, {tensor("p", DType::F32, 1, Role::Out)}), dom, o);
    INFO((run.ok() ? std::string() : run.diagnostics[0].text()));
    REQUIRE(run.ok());
    CHECK(*run.outputs.at("p")[0] == 7);
  }
  for (const char* spec : {"cas_while_greater.json", "cas_while_less.json"}) {
    Report r = equiv_example(spec);
    INFO(spec << ": " << r.text());
    CHECK(r.verdict == Outcome::Equivalent);
  }

  // Not the same loop, so not lifted: a test of another value than the first
  // read (it skips the loop when val <= 0, whatever memory holds), no test at
  // all (the first CAS would store val over a larger value), or a store
  // between the first read and the loop.
  const std::string other_value = R"(  ld.shared.u32 %r8, [m];
  mov.f32 %f2, 0f00000000;
  setp.le.f32 %p2, %f1, %f2;
  @%p2 bra $L_out;)";
  const std::string no_test = "  ld.shared.u32 %r8, [m];";
  const std::string store_between = R"(  ld.shared.u32 %r8, [m];
  mov.b32 %f2, %r8;
  st.shared.f32 [m], %f1;
  setp.le.f32 %p2, %f1, %f2;
  @%p2 bra $L_out;)";
  // val set between the test and the loop: the test saw another value.
  const std::string val_after_test = R"(  ld.shared.u32 %r8, [m];
  mov.b32 %f2, %r8;
  setp.le.f32 %p2, %f1, %f2;
  @%p2 bra $L_out;
  add.f32 %f1, %f1, 0f3F800000;)";
  for (const std::string& before : {other_value, no_test, store_between, val_after_test}) {
    Program q = lower_text(while_greater(before));
    INFO(q.listing());
    CHECK(count_text(q.listing(), "(a compare-and-swap loop)") == 0);
    auto e = ptx::first_unsupported(q);
    REQUIRE(e.has_value());
    CHECK(e->message.find("the compare-and-swap loop at ") != std::string::npos);
  }
}

// Slots taken with atom.add (machine_slots.cpp): a compaction of x into the
// global buffer y, one slot per thread from a shared counter, and the count
// into n. Variants below change one line each.
namespace {

const std::string kSlots = std::string(kHeader) + R"(
.visible .entry slots(.param .u64 p_x, .param .u64 p_y, .param .u64 p_n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<10>;
  .shared .align 4 .u32 cnt;
  ld.param.u64 %rd1, [p_x];
  ld.param.u64 %rd2, [p_y];
  ld.param.u64 %rd3, [p_n];
  cvta.to.global.u64 %rd4, %rd1;
  cvta.to.global.u64 %rd5, %rd2;
  cvta.to.global.u64 %rd9, %rd3;
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra $L_skip;
  st.shared.u32 [cnt], 0;
$L_skip:
  bar.sync 0;
  mul.wide.u32 %rd6, %r1, 4;
  add.s64 %rd7, %rd4, %rd6;
  ld.global.f32 %f1, [%rd7];
  atom.shared.add.u32 %r2, [cnt], 1;
  mul.wide.u32 %rd8, %r2, 4;
  add.s64 %rd8, %rd5, %rd8;
  st.global.f32 [%rd8], %f1;
  ld.global.f32 %f2, [%rd8];
  bar.sync 0;
  @%p1 bra $L_end;
  ld.shared.u32 %r3, [cnt];
  cvt.rn.f32.u32 %f1, %r3;
  st.global.f32 [%rd9], %f1;
$L_end:
  ret;
}
)";

RunResult<ConcreteDomain> run_slots(const std::string& text, Role y_role, std::uint64_t seed = 0) {
  auto parsed = ptx::parse_ptx(text, "slots.ptx");
  REQUIRE(parsed.module.has_value());
  auto lowered = ptx::lower_kernel(*parsed.module, "slots");
  REQUIRE(lowered.program.has_value());
  ConcreteDomain dom;
  RunOptions o;
  if (seed) o.random_schedule = seed;
  return run_program(*lowered.program, launch_of(32, {tensor("x", DType::F32, 32, Role::In),
                                                      tensor("y", DType::F32, 32, y_role),
                                                      tensor("n", DType::F32, 1, Role::Out)}),
                     dom, o);
}

std::string with(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("slots taken with atom.add are distinct in every schedule: no race") {
  // y scratch: only the count is an output, the same in every schedule
  // (the round-robin one and random ones).
  for (std::uint64_t seed = 0; seed <= 20; ++seed) {
    auto run = run_slots(kSlots, Role::Scratch, seed);
    INFO("seed " << seed << ": " << (run.diagnostics.empty() ? std::string() : run.diagnostics.back().text()));
    REQUIRE(run.ok());
    CHECK(*run.outputs.at("n")[0] == 32);
  }

  // y an output: its order is the schedule's, which is no race but not compared.
  auto out = run_slots(kSlots, Role::Out);
  REQUIRE(!out.ok());
  const Diagnostic& d = out.diagnostics.back();
  INFO(d.text());
  CHECK(d.kind == DiagKind::Unsupported);
  CHECK(d.message.find("output y[") != std::string::npos);
  CHECK(d.message.find("which slot") != std::string::npos);
}

TEST_CASE("slots that tileverify cannot show distinct are unsupported, never a race") {
  struct Case {
    const char* what;
    std::string from, to, expect;
  };
  const Case cases[] = {
      {"steps that differ", "atom.shared.add.u32 %r2, [cnt], 1;",
       "add.u32 %r3, %r1, 1;\n  atom.shared.add.u32 %r2, [cnt], %r3;", "add 1 and 2"},
      {"a slot narrower than the store", "mul.wide.u32 %rd8, %r2, 4;", "mul.wide.u32 %rd8, %r2, 2;",
       "may overlap another thread's slot"},
      {"a plain access to the slots' buffer", "ld.global.f32 %f2, [%rd8];", "ld.global.f32 %f2, [%rd5];",
       "accessed both at slots"},
      {"a slot through a 32-bit add", "mul.wide.u32 %rd8, %r2, 4;", "add.s32 %r2, %r2, 1;\n  mul.wide.u32 %rd8, %r2, 4;",
       "computed in a way tileverify cannot show"},
      {"a counter written between its adds", "ld.global.f32 %f2, [%rd8];",
       "ld.global.f32 %f2, [%rd8];\n  @!%p1 st.shared.u32 [cnt], 0;", ""},
  };
  for (const Case& c : cases) {
    auto run = run_slots(with(kSlots, c.from, c.to), Role::Scratch);
    REQUIRE(!run.ok());
    const Diagnostic& d = run.diagnostics.back();
    INFO(c.what << ": " << d.text());
    // The last case is a race indeed: the plain store to the counter is
    // unordered with the other threads' adds.
    if (c.expect.empty()) {
      CHECK(d.kind == DiagKind::Race);
      continue;
    }
    CHECK(d.kind == DiagKind::Unsupported);
    CHECK(d.message.find(c.expect) != std::string::npos);
  }
}
