// Every limit of a run or a check ends it as a Limit diagnostic / Unknown
// verdict with a reason: time, steps and memory. Never an abort, never a
// run past its deadline.
#include "tileverify/equiv.hpp"
#include "tileverify/ptx.hpp"

#include <doctest/doctest.h>

#include <chrono>

using namespace tileverify;
using Clock = std::chrono::steady_clock;

namespace {

const std::string kDir = TILEVERIFY_TEST_DIR;

Program lowered(const std::string& body, const std::string& params = ".param .u64 k_param_0") {
  const std::string text = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(" + params + ")\n{\n" + body + "}\n";
  auto parsed = ptx::parse_ptx(text, "limits.ptx");
  REQUIRE(parsed.module.has_value());
  auto l = ptx::lower_kernel(*parsed.module, "k");
  INFO((l.error ? l.error->text() : ""));
  REQUIRE(l.program.has_value());
  return std::move(*l.program);
}

// A thread that never leaves its loop: no path leads out of it.
const char* kEndless =
    ".reg .b32 %r<4>;\n"
    "mov.u32 %r2, 0;\n"
    "$L__BB0_1:\n"
    "add.s32 %r2, %r2, 1;\n"
    "bra.uni $L__BB0_1;\n";
// A loop that ends after 2^32 iterations: only a limit ends it.
const char* kSpin =
    ".reg .pred %p<2>;\n"
    ".reg .b32 %r<4>;\n"
    "mov.u32 %r2, 1;\n"
    "$L__BB0_1:\n"
    "add.s32 %r2, %r2, 1;\n"
    "setp.ne.s32 %p1, %r2, 0;\n"
    "@%p1 bra.uni $L__BB0_1;\n"
    "ret;\n";

Launch launch(std::vector<std::uint64_t> shape, std::uint32_t threads = 32) {
  Launch l;
  l.block = Dim3{threads, 1, 1};
  l.args.push_back(LaunchArg::of_tensor({"x", DType::F32, std::move(shape), Role::Out}));
  return l;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// check_equivalence of a spec of tests/, ending `seconds` from now; *took:
// how long it ran.
Report equiv_by_deadline(const std::string& spec_file, double seconds, double* took) {
  auto loaded = load_spec(kDir + "/" + spec_file);
  REQUIRE(loaded.spec.has_value());
  DecideLimits lim;
  const auto t0 = Clock::now();
  lim.deadline = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  Report r = check_equivalence(*loaded.spec, lim);
  *took = seconds_since(t0);
  return r;
}

}  // namespace

TEST_CASE("a loop with no way out ends the run at its first iteration") {
  Program p = lowered(kEndless);
  ExprContext c;
  SymbolicDomain dom(c);
  auto r = run_program(p, launch({32}), dom);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].kind == DiagKind::Limit);
  CHECK(r.diagnostics[0].message.find("endless loop") != std::string::npos);
  CHECK(r.diagnostics[0].message.find("can never finish") != std::string::npos);
  CHECK(r.stats.thread_instructions < 10);
  // A loop that has a way out, even one taken only after 2^32 iterations,
  // is not called endless: the step limit ends it.
  RunOptions o;
  o.max_steps = 1000;
  auto s = run_program(lowered(kSpin), launch({32}), dom, o);
  REQUIRE(s.diagnostics.size() == 1);
  CHECK(s.diagnostics[0].message.find("step limit") != std::string::npos);
}

TEST_CASE("an endless loop ends at the step limit as a Limit, not as unsupported") {
  Program p = lowered(kSpin);
  ExprContext c;
  SymbolicDomain dom(c);
  RunOptions o;
  o.max_steps = 100000;
  auto r = run_program(p, launch({32}), dom, o);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].kind == DiagKind::Limit);
  CHECK(r.diagnostics[0].message.find("step limit of 100000") != std::string::npos);
  CHECK(r.diagnostics[0].loc.line > 0);  // where the thread was
}

TEST_CASE("a run stops at its deadline, within milliseconds") {
  Program p = lowered(kSpin);
  ExprContext c;
  SymbolicDomain dom(c);
  RunOptions o;
  const auto t0 = Clock::now();
  o.deadline = t0 + std::chrono::milliseconds(200);
  auto r = run_program(p, launch({32}), dom, o);
  const double took = seconds_since(t0);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].kind == DiagKind::Limit);
  CHECK(r.diagnostics[0].message.find("time limit") != std::string::npos);
  CHECK(took >= 0.2);
  CHECK(took < 5);  // a loose bound: the machine may be loaded
}

TEST_CASE("the memory budget is checked before tensors and arrays are allocated") {
  Program p = lowered("ret;\n");
  ExprContext c;
  SymbolicDomain dom(c);
  RunOptions o;
  o.max_memory_bytes = std::uint64_t(1) << 20;
  auto r = run_program(p, launch({4000000000ull}), dom, o);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].kind == DiagKind::Limit);
  CHECK(r.diagnostics[0].message.find("tensor 'x'") != std::string::npos);
  CHECK(r.diagnostics[0].message.find("4000000000 elements") != std::string::npos);
  // Within the budget the same run is clean.
  CHECK(run_program(p, launch({1000}), dom, o).ok());

  // Shared arrays too, declared in the PTX.
  Program s = lowered(".shared .align 4 .b8 buf[40000];\nret;\n");
  o.max_memory_bytes = 100000;
  auto rs = run_program(s, launch({1}), dom, o);
  REQUIRE(rs.diagnostics.size() == 1);
  CHECK(rs.diagnostics[0].kind == DiagKind::Limit);
  CHECK(rs.diagnostics[0].message.find("'buf'") != std::string::npos);
  // Sizes as util::size_text writes them everywhere (units.hpp).
  CHECK(rs.diagnostics[0].message.find("over this run's memory budget of 97.7 KiB") != std::string::npos);
}

// A tensor's cells and race shadows are made a page at a time as the run
// touches them (util/paged_array.hpp): a CTA of a 4096^3 GEMM touches a
// strip of each 16 M-element tensor, and making them whole took 4.6 GB.
TEST_CASE("a large tensor costs only the pages the run touches") {
  Program p = lowered("ret;\n");
  ExprContext c;
  SymbolicDomain dom(c);
  RunOptions o;
  o.max_memory_bytes = std::uint64_t(64) << 20;
  // 2^26 elements: 6 GB of cells and shadows made at once; the page tables
  // (16 bytes per 256 elements) fit in the budget.
  CHECK(run_program(p, launch({std::uint64_t(1) << 26}), dom, o).ok());

  // A run that writes every element still meets the budget: as a limit.
  Program all = lowered(
      "  .reg .b32 %r<4>;\n  .reg .b64 %rd<4>;\n  .reg .pred %p<2>;\n  .reg .f32 %f<2>;\n"
      "  ld.param.u64 %rd1, [k_param_0];\n  mov.u32 %r1, 0;\n  mov.f32 %f1, 0f3F800000;\n"
      "loop:\n  mul.wide.u32 %rd2, %r1, 4;\n  add.s64 %rd3, %rd1, %rd2;\n  st.global.f32 [%rd3], %f1;\n"
      "  add.u32 %r1, %r1, 1;\n  setp.lt.u32 %p1, %r1, 4194304;\n  @%p1 bra loop;\n  ret;\n");
  auto r = run_program(all, launch({std::uint64_t(1) << 22}, 1), dom, o);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].kind == DiagKind::Limit);
  INFO(r.diagnostics[0].message);
  CHECK(r.diagnostics[0].message.find("memory limit: the parts of the tensors the run touched take") != std::string::npos);
}

TEST_CASE("a shape whose element count overflows is too large, never empty") {
  TensorArg t{"x", DType::F32, {std::uint64_t(1) << 32, std::uint64_t(1) << 32}, Role::In};
  CHECK(t.elements() == UINT64_MAX);
  TensorArg u{"x", DType::F32, {3, 0, std::uint64_t(1) << 63}, Role::In};
  CHECK(u.elements() == 0);
  Program p = lowered("ret;\n");
  ExprContext c;
  SymbolicDomain dom(c);
  auto r = run_program(p, launch({std::uint64_t(1) << 32, std::uint64_t(1) << 32}), dom);  // no budget: still refused
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].kind == DiagKind::Limit);
}

TEST_CASE("check and fpsan end at the deadline as unknown (exit code 3)") {
  Spec spec;
  spec.ref = KernelSpec{kDir + "/cases/limits.ptx", "spin", Dim3{32, 1, 1}, 0, std::nullopt, {}};
  spec.params.push_back(ParamSpec{"x", DType::F32, true, {32}, Role::Out, 0});
  RunLimits lim;
  const auto t0 = Clock::now();
  lim.deadline = t0 + std::chrono::milliseconds(300);
  Report r = check(spec, lim);
  CHECK(r.verdict == Outcome::Unknown);
  CHECK(r.exit_code() == 3);
  CHECK(r.text().find("time limit") != std::string::npos);
  CHECK(seconds_since(t0) < 5);

  spec.opt = spec.ref;
  PayloadOptions po;
  po.limits.max_steps = 50000;
  Report f = check_payloads(spec, po);
  CHECK(f.verdict == Outcome::Unknown);
  CHECK(f.text().find("step limit") != std::string::npos);
}

TEST_CASE("a case split with many Z3 queries stops at the deadline") {
  // expf against __expf with a scale that is not a power of two and the
  // folded scale * log2(e) 3 ulp off (scale_off.ptx): the decider cannot
  // read it as the product and splits on the running max.
  double took = 0;
  Report r = equiv_by_deadline("cases/rounded_scale/scale.json", 1, &took);
  CHECK(r.verdict == Outcome::Unknown);
  CHECK(r.mismatch.has_value());
  CHECK(took < 4);  // max(1.1 T, T + 1 s) is measured in bench/, this bounds a hang
}

TEST_CASE("a grid that cannot finish in time stops at once, saying why") {
  double took = 0;
  Report r = equiv_by_deadline("cases/limits_huge_grid.json", 20, &took);
  CHECK(r.verdict == Outcome::Unknown);
  CHECK(r.text().find("would take about") != std::string::npos);
  CHECK(took < 10);
  auto loaded = load_spec(kDir + "/cases/limits_huge_grid.json");
  REQUIRE(loaded.spec.has_value());
  // check() too, and at a deadline already passed.
  RunLimits run;
  run.deadline = Clock::now();
  Report c = check(*loaded.spec, run);
  CHECK(c.verdict == Outcome::Unknown);
  CHECK(c.text().find("after running 0 of the 2147483647 CTAs") != std::string::npos);
}

TEST_CASE("a bug found before a limit is the verdict, of either kernel") {
  Spec spec;
  spec.ref = KernelSpec{kDir + "/cases/limits.ptx", "uninit_then_loop", Dim3{32, 1, 1}, 0, std::nullopt, {}};
  spec.params.push_back(ParamSpec{"x", DType::F32, true, {32}, Role::Out, 0});
  RunLimits lim;
  lim.max_steps = 100000;
  Report r = check(spec, lim);
  CHECK(r.verdict == Outcome::Uninitialized);
  CHECK(r.exit_code() == 2);
  REQUIRE(r.diagnostics.size() == 2);  // the limit is still reported, after the bug
  CHECK(r.diagnostics[1].kind == DiagKind::Limit);

  // The reference hits the limit, the other kernel has the bug.
  spec.opt = spec.ref;
  spec.ref->kernel = "k";
  Report two = check(spec, lim);
  CHECK(two.verdict == Outcome::Uninitialized);
}

TEST_CASE("a case split whose max comparisons are too large for Z3 is refused before it is built") {
  // Attention at head size 128 with the folded constant 3 ulp off: the
  // split on the running max over 128 scores would give Z3 about 10^6
  // terms of comparisons, whose internalization and deletion no query
  // timeout bounds (it ran 28 s past a 10 s deadline).
  double took = 0;
  // The deadline only bounds the test: the refusal comes long before it,
  // once the run is done (a loaded machine once took 3 s to get there).
  Report r = equiv_by_deadline("cases/rounded_scale/attn_d128_off3.json", 15, &took);
  INFO(r.text());
  CHECK(r.verdict == Outcome::Unknown);
  CHECK(r.text().find("comparisons of a case split") != std::string::npos);
}

TEST_CASE("an attention pair whose case split cannot run stops at the deadline") {
  // The split would need 512^k cases and a difference of millions of
  // terms: it is refused before anything is given to Z3 (once this built
  // gigabytes of Z3 terms and ran for minutes past the deadline).
  double took = 0;
  Report r = equiv_by_deadline("cases/rounded_scale/attn.json", 2, &took);
  CHECK(r.verdict == Outcome::Unknown);
  CHECK(took < 6);
}
