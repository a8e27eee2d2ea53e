// Hopper's asynchronous model (docs/evaluator.md, "Asynchronous operations
// (sm_90)"): mbarrier phases, parity and token waits, arrival and tx
// counts, deadlocks on barriers, races through TMA copies, proxy fences,
// bulk groups and the launch contract of TMA boxes. Kernels are PTX text
// (sm_90a), run through parse_ptx, lower_kernel and run_program.
#include "async_test_helpers.hpp"
#include "tileverify/eval.hpp"
#include "tileverify/ptx.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace tileverify;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A kernel k(params) with the usual registers and `decls` (.shared
// variables), its body `body`.
std::string kernel(const std::string& params, const std::string& decls, const std::string& body) {
  return ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(" + params +
         ")\n{\n  .reg .pred %p<16>;\n  .reg .b32 %r<64>;\n  .reg .b64 %rd<32>;\n  .reg .f32 %f<16>;\n" + decls + body +
         "}\n";
}

Program lower(const std::string& text) { return async_test::lower(text, true); }

using async_test::Run;

// x (in) and y (out): n floats each.
Launch xy(std::uint32_t threads, std::uint64_t n) {
  Launch l;
  l.block = Dim3{threads, 1, 1};
  l.args = {LaunchArg::of_tensor({"x", DType::F32, {n}, Role::In}), LaunchArg::of_tensor({"y", DType::F32, {n}, Role::Out})};
  return l;
}

void run(Run& out, const std::string& text, const Launch& l, RunOptions o = {}) {
  Program p = lower(text);
  SymbolicDomain dom(out.ctx);
  out.r = run_program(p, l, dom, o);
}

const char* kXY = ".param .u64 x, .param .u64 y";
const char* kBarBuf = "  .shared .align 8 .b64 full_bar[2];\n  .shared .align 128 .f32 buf[64];\n";

// Addresses: %rd1 = x, %rd2 = y (global), %r1 = tid, %rd3 = 4 * tid, %r2 = &full_bar, %r3 = &buf[tid].
const char* kPrologue =
    "  ld.param.u64 %rd10, [x];\n  cvta.to.global.u64 %rd1, %rd10;\n  ld.param.u64 %rd11, [y];\n"
    "  cvta.to.global.u64 %rd2, %rd11;\n  mov.u32 %r1, %tid.x;\n  mul.wide.u32 %rd3, %r1, 4;\n"
    "  mov.u32 %r2, full_bar;\n  mov.u32 %r4, buf;\n  shl.b32 %r5, %r1, 2;\n";

// Producer warp 1 (threads 32-63) stages x into buf and arrives on
// full_bar[0] (count 32); consumer warp 0 waits for phase 0 with `wait`
// (a retry loop by default) and copies buf into y.
std::string producer_consumer(const std::string& wait, bool arrive = true) {
  return std::string(kPrologue) +
         "  setp.ne.s32 %p1, %r1, 0;\n"
         "  @%p1 bra INITED;\n"
         "  mbarrier.init.shared::cta.b64 [%r2], 32;\n"
         "INITED:\n"
         "  bar.sync 0;\n"
         "  setp.lt.u32 %p2, %r1, 32;\n"
         "  @%p2 bra CONSUMER;\n"
         "  sub.s32 %r6, %r1, 32;\n"
         "  mul.wide.u32 %rd4, %r6, 4;\n"
         "  add.s64 %rd5, %rd1, %rd4;\n"
         "  ld.global.f32 %f1, [%rd5];\n"
         "  shl.b32 %r7, %r6, 2;\n"
         "  add.s32 %r8, %r4, %r7;\n"
         "  st.shared.f32 [%r8], %f1;\n" +
         std::string(arrive ? "  mbarrier.arrive.shared::cta.b64 %rd6, [%r2];\n" : "") +
         "  ret;\n"
         "CONSUMER:\n" +
         wait +
         "  add.s32 %r9, %r4, %r5;\n"
         "  ld.shared.f32 %f2, [%r9];\n"
         "  add.s64 %rd7, %rd2, %rd3;\n"
         "  st.global.f32 [%rd7], %f2;\n"
         "  ret;\n";
}

const char* kRetryParity0 =
    "  mov.u32 %r10, 0;\n"
    "WAIT:\n"
    "  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], %r10;\n"
    "  @!%p3 bra WAIT;\n";

}  // namespace

TEST_CASE("mbarrier: a producer warp arrives, a consumer warp waits for the phase with parity 0 and reads") {
  Run r;
  run(r, kernel(kXY, kBarBuf, producer_consumer(kRetryParity0)), xy(64, 32));
  INFO(r.text());
  REQUIRE(r.r.ok());
  for (std::uint32_t i = 0; i < 32; ++i) CHECK(r.output_is("y", i, "x", i));
}

namespace {

// CUTLASS's PipelineTmaAsync::consumer_try_wait + consumer_wait as nvcc 13
// compiles them (CUTLASS example 48): a probe, a brkpt guard on another
// value, then, only if the probe failed, a retry loop with a suspend-time
// hint on the same barrier and parity. `after` follows the join.
std::string two_step_wait(const std::string& after = "") {
  return "  mov.u32 %r10, 0;\n"
         "  setp.ne.s32 %p6, %r1, 99;\n"
         "  { .reg .pred P1;\n"
         "  mbarrier.try_wait.parity.shared::cta.b64 P1, [%r2], %r10;\n"
         "  selp.b32 %r11, 1, 0, P1; }\n"
         "  @%p6 bra GUARDED;\n"
         "  brkpt;\n"
         "GUARDED:\n"
         "  setp.ne.s32 %p4, %r11, 0;\n"
         "  @%p4 bra JOIN;\n"
         "  mov.u32 %r12, 10000000;\n"
         "  { .reg .pred P1;\n"
         "  LAB_WAIT:\n"
         "  mbarrier.try_wait.parity.shared::cta.b64 P1, [%r2], %r10, %r12;\n"
         "  @P1 bra DONE;\n"
         "  bra LAB_WAIT;\n"
         "  DONE: }\n"
         "JOIN:\n" + after;
}

}  // namespace

TEST_CASE("mbarrier: CUTLASS's two-step wait (a probe, then a retry loop only if it failed) waits for the phase") {
  Run r;
  run(r, kernel(kXY, kBarBuf, producer_consumer(two_step_wait())), xy(64, 32));
  INFO(r.text());
  REQUIRE(r.r.ok());
  for (std::uint32_t i = 0; i < 32; ++i) CHECK(r.output_is("y", i, "x", i));
}

TEST_CASE("mbarrier: a two-step wait whose false side leaves a register read after the join is no wait") {
  // The suspend-time hint is set only on the way through the loop: reading
  // it after the join sees whether the probe failed, which is the schedule's.
  Run r;
  run(r, kernel(kXY, kBarBuf, producer_consumer(two_step_wait("  add.s32 %r13, %r12, 1;\n  setp.eq.s32 %p7, %r13, 5;\n  @%p7 bra JOIN;\n"))),
      xy(64, 32));
  REQUIRE(!r.r.ok());
  CHECK(contains(r.r.diagnostics.back().message, "whether an mbarrier phase had completed"));
}

TEST_CASE("mbarrier: CUTLASS's wait loop (@p bra DONE; bra L), nvcc's selp / setp form and address arithmetic in the loop are retry loops too") {
  const char* cutlass =
      "  mov.u32 %r10, 0;\n"
      "L:\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], %r10, 1000000;\n"
      "  @%p3 bra DONE;\n"
      "  bra L;\n"
      "DONE:\n";
  const char* selp =
      "  mov.u32 %r10, 0;\n"
      "L:\n"
      "  mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p3, [%r2], %r10;\n"
      "  selp.u32 %r11, 1, 0, %p3;\n"
      "  setp.eq.s32 %p4, %r11, 0;\n"
      "  @%p4 bra L;\n";
  // nvcc's loop around a try_wait that returns a bool (cuda::ptx::mbarrier_try_wait_parity): the
  // branch goes back to the mov of the parity before the wait.
  const char* nvcc =
      "L:\n"
      "  mov.u32 %r10, 0;\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], %r10;\n"
      "  selp.b32 %r11, 1, 0, %p3;\n"
      "  setp.eq.s32 %p4, %r11, 0;\n"
      "  @%p4 bra L;\n";
  // nvcc's loop when the barrier's address is computed in the loop body
  // (examples/hopper's cluster GEMM): the branch goes back to the address
  // arithmetic, which the wait's result does not decide.
  const char* address_in_loop =
      "  mov.u32 %r10, 0;\n"
      "L:\n"
      "  and.b32 %r12, %r10, 1;\n"
      "  shl.b32 %r13, %r12, 3;\n"
      "  mov.u32 %r14, full_bar;\n"
      "  add.s32 %r15, %r14, %r13;\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r15], %r10;\n"
      "  selp.u32 %r11, 1, 0, %p3;\n"
      "  setp.eq.s32 %p4, %r11, 0;\n"
      "  @%p4 bra L;\n";
  for (const char* w : {cutlass, selp, nvcc, address_in_loop}) {
    Run r;
    run(r, kernel(kXY, kBarBuf, producer_consumer(w)), xy(64, 32));
    INFO(r.text());
    CHECK(r.r.ok());
  }
  // A loop whose next spin waits on another barrier (a counter carried
  // around it picks the address) is no wait for one phase: its result
  // decides a branch, which depends on the schedule.
  const char* other_barrier_each_spin =
      "  mov.u32 %r10, 0;\n"
      "  mov.u32 %r12, 0;\n"
      "L:\n"
      "  and.b32 %r13, %r12, 1;\n"
      "  shl.b32 %r14, %r13, 3;\n"
      "  add.s32 %r15, %r2, %r14;\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r15], %r10;\n"
      "  add.s32 %r12, %r12, 1;\n"
      "  @!%p3 bra L;\n";
  Run spin;
  run(spin, kernel(kXY, kBarBuf, producer_consumer(other_barrier_each_spin)), xy(64, 32));
  INFO(spin.text());
  REQUIRE(!spin.r.ok());
  CHECK(spin.r.diagnostics.back().kind == DiagKind::Race);
  CHECK(contains(spin.r.diagnostics.back().message, "depends on the schedule"));
}

TEST_CASE("mbarrier: a random schedule gives the same clean run") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    Run r;
    RunOptions o;
    o.random_schedule = seed;
    run(r, kernel(kXY, kBarBuf, producer_consumer(kRetryParity0)), xy(64, 32), o);
    INFO(r.text());
    CHECK(r.r.ok());
  }
}

TEST_CASE("mbarrier: reading what the producer wrote without waiting is a race") {
  Run r;
  run(r, kernel(kXY, kBarBuf, producer_consumer("")), xy(64, 32));
  INFO(r.text());
  REQUIRE(!r.r.ok());
  CHECK(r.r.diagnostics.back().kind == DiagKind::Race);
}

TEST_CASE("mbarrier: a .relaxed arrive releases nothing: the consumer's read races") {
  std::string text = kernel(kXY, kBarBuf, producer_consumer(kRetryParity0));
  const std::string from = "mbarrier.arrive.shared::cta.b64", to = "mbarrier.arrive.relaxed.cta.shared::cta.b64";
  text.replace(text.find(from), from.size(), to);
  Run r;
  run(r, text, xy(64, 32));
  INFO(r.text());
  REQUIRE(!r.r.ok());
  CHECK(r.r.diagnostics.back().kind == DiagKind::Race);
}

TEST_CASE("mbarrier: waiting on parity 1 of a fresh barrier returns at once (the phase before phase 0)") {
  // The consumer passes at once and reads before the producer's arrive: a race, not a deadlock.
  const char* parity1 =
      "  mov.u32 %r10, 1;\n"
      "WAIT:\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], %r10;\n"
      "  @!%p3 bra WAIT;\n";
  Run r;
  run(r, kernel(kXY, kBarBuf, producer_consumer(parity1)), xy(64, 32));
  INFO(r.text());
  REQUIRE(!r.r.ok());
  CHECK(r.r.diagnostics.back().kind == DiagKind::Race);
}

TEST_CASE("mbarrier: a phase counter passed without % 2 is bit 0 on the GPU, with a warning") {
  const char* parity2 =
      "  mov.u32 %r10, 2;\n"
      "WAIT:\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], %r10;\n"
      "  @!%p3 bra WAIT;\n";
  Run r;
  run(r, kernel(kXY, kBarBuf, producer_consumer(parity2)), xy(64, 32));
  INFO(r.text());
  CHECK(r.r.ok());
  REQUIRE(r.r.notes.size() == 1);
  CHECK(r.r.notes[0].warning);
  CHECK(r.r.notes[0].kind == DiagKind::Undefined);
  CHECK(contains(r.r.notes[0].message, "valid values of phaseParity are 0 and 1"));
  CHECK(contains(r.r.notes[0].message, "bit 0"));
  // parity 3 is parity 1: the consumer passes at once and races with the producer.
  const char* parity3 =
      "  mov.u32 %r10, 3;\n"
      "WAIT:\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], %r10;\n"
      "  @!%p3 bra WAIT;\n";
  Run r3;
  run(r3, kernel(kXY, kBarBuf, producer_consumer(parity3)), xy(64, 32));
  REQUIRE(!r3.r.ok());
  CHECK(r3.r.diagnostics.back().kind == DiagKind::Race);
}

TEST_CASE("mbarrier: a wait that no arrival completes is a deadlock naming the barrier and the phase") {
  Run r;
  run(r, kernel(kXY, kBarBuf, producer_consumer(kRetryParity0, false)), xy(64, 32));
  INFO(r.text());
  REQUIRE(!r.r.ok());
  const Diagnostic& d = r.r.diagnostics.back();
  CHECK(d.kind == DiagKind::Deadlock);
  CHECK(contains(d.message, "full_bar[0] to complete phase 0"));
  CHECK(contains(d.detail, "32 of 32 arrivals pending"));
  CHECK(contains(d.detail, "no thread has arrived at it yet"));
}

TEST_CASE("mbarrier: a producer waiting for a consumer that arrived once and exited deadlocks; the report says so") {
  // Thread 0 (producer) waits on empty_bar for phase 1 (parity 1) after the
  // consumers (threads 32-63) arrived in phase 0 and exited.
  const std::string body = std::string(kPrologue) +
                           "  setp.ne.s32 %p1, %r1, 0;\n"
                           "  @%p1 bra INITED;\n"
                           "  mbarrier.init.shared::cta.b64 [%r2], 32;\n"
                           "INITED:\n"
                           "  bar.sync 0;\n"
                           "  setp.lt.u32 %p2, %r1, 32;\n"
                           "  @%p2 bra PRODUCER;\n"
                           "  mbarrier.arrive.shared::cta.b64 %rd6, [%r2];\n"
                           "  ret;\n"
                           "PRODUCER:\n"
                           "  setp.ne.s32 %p5, %r1, 0;\n"
                           "  @%p5 bra OUT;\n"
                           "  mov.u32 %r10, 0;\n"
                           "W0:\n"
                           "  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], %r10;\n"
                           "  @!%p3 bra W0;\n"
                           "  mov.u32 %r10, 1;\n"
                           "W1:\n"
                           "  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], %r10;\n"
                           "  @!%p3 bra W1;\n"
                           "OUT:\n"
                           "  ret;\n";
  Run r;
  run(r, kernel(kXY, kBarBuf, body), xy(64, 32));
  INFO(r.text());
  REQUIRE(!r.r.ok());
  const Diagnostic& d = r.r.diagnostics.back();
  CHECK(d.kind == DiagKind::Deadlock);
  CHECK(contains(d.message, "thread 0 wait for full_bar[0] to complete phase 1"));
  CHECK(contains(d.detail, "(parity 1)"));
  CHECK(contains(d.detail, "threads 32-63 arrived at it in earlier phases and have exited"));
}

TEST_CASE("mbarrier: tokens, expect_tx / complete_tx, arrive counts and arrive_drop") {
  // Thread 0: init count 2; arrive (token t0) with count 1 and expect_tx 16,
  // complete_tx 16, arrive_drop: phase 0 completes; a test_wait retry loop
  // on t0 passes. Phase 1 expects 1 arrival (the drop): one arrive with
  // count 1 completes it.
  const std::string body = std::string(kPrologue) +
                           "  setp.ne.s32 %p1, %r1, 0;\n"
                           "  @%p1 bra OUT;\n"
                           "  mbarrier.init.shared.b64 [%r2], 2;\n"
                           "  mbarrier.arrive.expect_tx.shared::cta.b64 %rd6, [%r2], 16;\n"
                           "  mbarrier.complete_tx.shared::cta.b64 [%r2], 16;\n"
                           "  mbarrier.arrive_drop.shared.b64 %rd7, [%r2];\n"
                           "T0:\n"
                           "  mbarrier.test_wait.shared.b64 %p3, [%r2], %rd6;\n"
                           "  @!%p3 bra T0;\n"
                           "  mbarrier.arrive.shared.b64 %rd8, [%r2], 1;\n"
                           "T1:\n"
                           "  mbarrier.try_wait.shared::cta.b64 %p3, [%r2], %rd8;\n"
                           "  @!%p3 bra T1;\n"
                           "  mbarrier.inval.shared.b64 [%r2];\n"
                           "OUT:\n"
                           "  ret;\n";
  Run r;
  run(r, kernel(kXY, kBarBuf, body), xy(32, 32));
  INFO(r.text());
  CHECK(r.r.ok());
  // Without complete_tx, phase 0 never completes: the tx-count is in the report.
  std::string stuck = body;
  const std::string ctx = "  mbarrier.complete_tx.shared::cta.b64 [%r2], 16;\n";
  stuck.erase(stuck.find(ctx), ctx.size());
  Run s;
  run(s, kernel(kXY, kBarBuf, stuck), xy(32, 32));
  INFO(s.text());
  REQUIRE(!s.r.ok());
  CHECK(s.r.diagnostics.back().kind == DiagKind::Deadlock);
  CHECK(contains(s.r.diagnostics.back().detail, "a tx-count of 16"));
}

TEST_CASE("mbarrier: a test_wait whose result decides anything but a retry depends on the schedule") {
  const char* once =
      "  mov.u32 %r10, 0;\n"
      "  mbarrier.test_wait.parity.shared::cta.b64 %p3, [%r2], %r10;\n"
      "  @!%p3 ret;\n";
  Run r;
  run(r, kernel(kXY, kBarBuf, producer_consumer(once)), xy(64, 32));
  INFO(r.text());
  REQUIRE(!r.r.ok());
  const Diagnostic& d = r.r.diagnostics.back();
  CHECK(d.kind == DiagKind::Race);
  CHECK(contains(d.message, "whether an mbarrier phase had completed"));
}

TEST_CASE("mbarrier: an arrive unordered with the barrier's init races with it; a plain load of it is unsupported") {
  const std::string racy = std::string(kPrologue) +
                           "  setp.ne.s32 %p1, %r1, 0;\n"
                           "  @%p1 bra ARRIVE;\n"
                           "  mbarrier.init.shared::cta.b64 [%r2], 32;\n"
                           "  ret;\n"
                           "ARRIVE:\n"
                           "  mbarrier.arrive.shared::cta.b64 %rd6, [%r2];\n"
                           "  ret;\n";
  Run r;
  run(r, kernel(kXY, kBarBuf, racy), xy(64, 32));
  INFO(r.text());
  REQUIRE(!r.r.ok());
  CHECK(r.r.diagnostics.back().kind == DiagKind::Race);
  CHECK(contains(r.r.diagnostics.back().message, "mbarrier.init"));

  const std::string plain = std::string(kPrologue) +
                            "  mbarrier.init.shared::cta.b64 [%r2], 1;\n"
                            "  ld.shared.u64 %rd9, [%r2];\n"
                            "  ret;\n";
  Run p;
  run(p, kernel(kXY, kBarBuf, plain), xy(1, 32));
  INFO(p.text());
  REQUIRE(!p.r.ok());
  CHECK(p.r.diagnostics.back().kind == DiagKind::Unsupported);
  CHECK(contains(p.r.diagnostics.back().message, "mbarrier full_bar[0] while it is in use"));
}

TEST_CASE("mbarrier: an operation on a barrier nothing initialized is reported") {
  const std::string body = std::string(kPrologue) + "  mbarrier.arrive.shared::cta.b64 %rd6, [%r2];\n  ret;\n";
  Run r;
  run(r, kernel(kXY, kBarBuf, body), xy(32, 32));
  REQUIRE(!r.r.ok());
  CHECK(r.r.diagnostics.back().kind == DiagKind::Uninitialized);
  CHECK(contains(r.r.diagnostics.back().message, "no initialized mbarrier"));
}

TEST_CASE("barrier.cluster with a cluster of one CTA is a split barrier over the CTA") {
  // Thread 0 writes buf[0], arrives; everyone waits, then reads buf[0].
  const std::string ok = std::string(kPrologue) +
                         "  setp.ne.s32 %p1, %r1, 0;\n"
                         "  @%p1 bra ARR;\n"
                         "  mov.f32 %f1, 0f3F800000;\n"
                         "  st.shared.f32 [%r4], %f1;\n"
                         "ARR:\n"
                         "  barrier.cluster.arrive.aligned;\n"
                         "  barrier.cluster.wait.aligned;\n"
                         "  ld.shared.f32 %f2, [%r4];\n"
                         "  add.s64 %rd7, %rd2, %rd3;\n"
                         "  st.global.f32 [%rd7], %f2;\n"
                         "  ret;\n";
  Run r;
  run(r, kernel(kXY, kBarBuf, ok), xy(64, 64));
  INFO(r.text());
  CHECK(r.r.ok());
  std::string relaxed = ok;
  const std::string from = "barrier.cluster.arrive.aligned", to = "barrier.cluster.arrive.relaxed.aligned";
  relaxed.replace(relaxed.find(from), from.size(), to);
  Run x;
  run(x, kernel(kXY, kBarBuf, relaxed), xy(64, 64));
  REQUIRE(!x.r.ok());
  CHECK(x.r.diagnostics.back().kind == DiagKind::Race);
}

// ------------------------------------------------------------ TMA

namespace {

// k(map a_map over A [rows x cols] f32, y): thread 0 inits full_bar,
// everyone syncs; thread 0 arrives with expect_tx of the box's bytes and
// issues the TMA load of the box at (c0, c1) into smem; `wait` (all
// threads); then each thread t < 64 copies smem[t] to y[t].
std::string tma_kernel(const std::string& c0, const std::string& c1, const std::string& wait, int bytes = 256,
                       const std::string& after_load = "") {
  return kernel(".param .align 64 .b8 a_map[128], .param .u64 y",
                "  .shared .align 8 .b64 full_bar[1];\n  .shared .align 1024 .b8 smem[1024];\n",
                "  ld.param.u64 %rd11, [y];\n  cvta.to.global.u64 %rd2, %rd11;\n  mov.u32 %r1, %tid.x;\n"
                "  mul.wide.u32 %rd3, %r1, 4;\n  mov.u32 %r2, full_bar;\n  mov.u32 %r4, smem;\n"
                "  mov.b64 %rd20, a_map;\n  cvta.param.u64 %rd21, %rd20;\n"
                "  setp.ne.s32 %p1, %r1, 0;\n"
                "  @%p1 bra INITED;\n"
                "  mbarrier.init.shared::cta.b64 [%r2], 1;\n"
                "  fence.mbarrier_init.release.cluster;\n"
                "INITED:\n"
                "  bar.sync 0;\n"
                "  @%p1 bra ISSUED;\n"
                "  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], " +
                    std::to_string(bytes) +
                    ";\n"
                    "  mov.u32 %r20, " +
                    c0 + ";\n  mov.u32 %r21, " + c1 +
                    ";\n"
                    "  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r4], [%rd21, {%r20, %r21}], [%r2];\n" +
                    after_load +
                    "ISSUED:\n" + wait +
                    "  shl.b32 %r5, %r1, 2;\n"
                    "  add.s32 %r9, %r4, %r5;\n"
                    "  ld.shared.f32 %f2, [%r9];\n"
                    "  add.s64 %rd7, %rd2, %rd3;\n"
                    "  st.global.f32 [%rd7], %f2;\n"
                    "  ret;\n");
}

// A 16 x 32 f32 tensor A (dims innermost first: 32, 16) and an 8 x 8 box.
Launch tma_launch(TmaSwizzle sw = TmaSwizzle::None, std::uint32_t box0 = 8, std::uint32_t box1 = 8) {
  Launch l;
  l.block = Dim3{64, 1, 1};
  TensorMap m;
  m.dims = {32, 16};
  m.box = {box0, box1};
  m.swizzle = sw;
  l.args = {LaunchArg::of_tensor_map({"A", DType::F32, {16, 32}, Role::In}, m),
            LaunchArg::of_tensor({"y", DType::F32, {64}, Role::Out})};
  return l;
}

}  // namespace

TEST_CASE("TMA: a 2-d box lands in shared memory row-major, and a wait on the barrier orders it") {
  Run r;
  run(r, tma_kernel("8", "4", kRetryParity0), tma_launch());
  INFO(r.text());
  REQUIRE(r.r.ok());
  // y[t] = box element (t % 8, t / 8) = A[4 + t / 8][8 + t % 8].
  for (std::uint32_t t = 0; t < 64; ++t) CHECK(r.output_is("y", t, "A", (4 + t / 8) * 32 + 8 + t % 8));
}

TEST_CASE("TMA: the 128B swizzle XORs each 16-byte chunk with the row within 8 rows of 128 bytes") {
  // A 32 x 8 box of f32 (128-byte rows): smem byte b holds what the
  // unswizzled layout has at swizzle(b) (an involution).
  Launch l = tma_launch(TmaSwizzle::B128, 32, 8);
  Run r;
  run(r, tma_kernel("0", "0", kRetryParity0, 1024), l);
  INFO(r.text());
  REQUIRE(r.r.ok());
  for (std::uint32_t t = 0; t < 64; ++t) {
    const std::uint32_t b = t * 4;
    const std::uint32_t u = b ^ (((b >> 7) & 7) << 4);  // the unswizzled byte
    const std::uint32_t e = u / 4;                       // box element: row e / 32, column e % 32
    CHECK(r.output_is("y", t, "A", (e / 32) * 32 + e % 32));
  }
}

TEST_CASE("TMA: a swizzled box 128-byte aligned off the pattern's repeat is swizzled by its shared address") {
  // CUTLASS example 48 puts its stages at byte 384 of the dynamic shared
  // memory. An H200 swizzles such a box by the absolute shared address (a box
  // at 384 starts in row 3 of the 1024-byte pattern:
  // tools/gpu_checks/results/tma_swizzle_offset_h200.txt), as wgmma reads it.
  std::string text = tma_kernel("0", "0", kRetryParity0, 1024);
  const std::string base = "  mov.u32 %r4, smem;\n", decl = "smem[1024]";
  text.replace(text.find(base), base.size(), base + "  add.s32 %r4, %r4, 384;\n");
  text.replace(text.find(decl), decl.size(), "smem[2048]");
  Run r;
  run(r, text, tma_launch(TmaSwizzle::B128, 32, 8));
  INFO(r.text());
  REQUIRE(r.r.ok());
  for (std::uint32_t t = 0; t < 64; ++t) {
    const std::uint32_t at = 384 + t * 4;                     // the byte thread t reads (the buffer is 1024-aligned)
    const std::uint32_t u = (at ^ (((at >> 7) & 7) << 4)) - 384;  // its byte in the unswizzled box
    const std::uint32_t e = u / 4;
    CHECK(r.output_is("y", t, "A", (e / 32) * 32 + e % 32));
  }
}

TEST_CASE("TMA: reading the box without waiting races with the copy, even in the issuing thread") {
  Run r;
  run(r, tma_kernel("8", "4", ""), tma_launch());
  INFO(r.text());
  REQUIRE(!r.r.ok());
  const Diagnostic& d = r.r.diagnostics.back();
  CHECK(d.kind == DiagKind::Race);
  REQUIRE(d.accesses.size() == 2);
  CHECK(d.accesses[0].kind == "TMA write");
  CHECK(contains(d.detail, "mbarrier phase"));
}

TEST_CASE("TMA: a load box outside the tensor (wholly or partly) is zero-filled, with a note") {
  Run out;
  Launch l = tma_launch();
  l.cta = Dim3{3, 0, 0};
  run(out, tma_kernel("32", "0", kRetryParity0), l);
  INFO(out.text());
  REQUIRE(out.r.ok());
  REQUIRE(out.r.notes.size() == 1);
  CHECK(out.r.notes[0].kind == DiagKind::LaunchContract);
  CHECK(contains(out.r.notes[0].message,
                 "CTA (3,0,0): TMA load at coordinates (32, 0) with box 8x8 lies wholly outside the tensor's shape 32x16"));
  CHECK(*out.r.outputs.at("y")[0] == out.ctx.constant(Rational(0)));

  Run part;
  run(part, tma_kernel("28", "12", kRetryParity0), tma_launch());
  INFO(part.text());
  REQUIRE(part.r.ok());
  REQUIRE(part.r.notes.size() == 1);
  CHECK(part.r.notes[0].kind == DiagKind::LaunchContract);
  CHECK(contains(part.r.notes[0].message, "partly outside"));
  // Element (0, 0) of the box is A[12][28]; (4, 0) is column 32: zero.
  CHECK(part.output_is("y", 0, "A", 12 * 32 + 28));
  const auto& y = part.r.outputs.at("y");
  REQUIRE(y[4]);
  CHECK(*y[4] == part.ctx.constant(Rational(0)));
  REQUIRE(y[40]);  // row 5 of the box: A row 17, outside
  CHECK(*y[40] == part.ctx.constant(Rational(0)));
}

namespace {

// Two stages through one buffer: the producer (thread 63, which runs last
// in the evaluator's round-robin, so that the second load comes before the
// consumers' first reads happen) loads box (0, 0)
// into smem, everyone waits for phase 0 and reads; then, with `sync`
// between, the producer loads box (8, 0) into the same smem and everyone
// waits for phase 1 and reads again, into y[64 + t].
std::string two_rounds(const std::string& sync) {
  return kernel(".param .align 64 .b8 a_map[128], .param .u64 y",
                "  .shared .align 8 .b64 full_bar[1];\n  .shared .align 1024 .b8 smem[1024];\n",
                "  ld.param.u64 %rd11, [y];\n  cvta.to.global.u64 %rd2, %rd11;\n  mov.u32 %r1, %tid.x;\n"
                "  mul.wide.u32 %rd3, %r1, 4;\n  mov.u32 %r2, full_bar;\n  mov.u32 %r4, smem;\n"
                "  mov.b64 %rd20, a_map;\n  cvta.param.u64 %rd21, %rd20;\n"
                "  shl.b32 %r5, %r1, 2;\n  add.s32 %r9, %r4, %r5;\n  add.s64 %rd7, %rd2, %rd3;\n"
                "  setp.ne.s32 %p1, %r1, 63;\n"
                "  @%p1 bra INITED;\n"
                "  mbarrier.init.shared::cta.b64 [%r2], 1;\n"
                "INITED:\n"
                "  bar.sync 0;\n"
                "  @%p1 bra I1;\n"
                "  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 256;\n"
                "  mov.u32 %r20, 0;\n  mov.u32 %r21, 0;\n"
                "  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r4], [%rd21, {%r20, %r21}], [%r2];\n"
                "I1:\n"
                "  mov.u32 %r10, 0;\n"
                "W1:\n"
                "  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], %r10;\n"
                "  @!%p3 bra W1;\n"
                "  ld.shared.f32 %f2, [%r9];\n"
                "  st.global.f32 [%rd7], %f2;\n" +
                    sync +
                    "  @%p1 bra I2;\n"
                    "  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 256;\n"
                    "  mov.u32 %r20, 8;\n"
                    "  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r4], [%rd21, {%r20, %r21}], [%r2];\n"
                    "I2:\n"
                    "  mov.u32 %r10, 1;\n"
                    "W2:\n"
                    "  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], %r10;\n"
                    "  @!%p3 bra W2;\n"
                    "  ld.shared.f32 %f3, [%r9];\n"
                    "  st.global.f32 [%rd7+256], %f3;\n"
                    "  ret;\n");
}

}  // namespace

TEST_CASE("TMA: reusing a stage before its readers released it races with their reads") {
  Launch l = tma_launch();
  l.args[1] = LaunchArg::of_tensor({"y", DType::F32, {128}, Role::Out});
  Run ok;
  run(ok, two_rounds("  bar.sync 0;\n"), l);
  INFO(ok.text());
  REQUIRE(ok.r.ok());
  for (std::uint32_t t = 0; t < 64; ++t) {
    CHECK(ok.output_is("y", t, "A", (t / 8) * 32 + t % 8));
    CHECK(ok.output_is("y", 64 + t, "A", (t / 8) * 32 + 8 + t % 8));
  }
  Run racy;
  run(racy, two_rounds(""), l);
  INFO(racy.text());
  REQUIRE(!racy.r.ok());
  const Diagnostic& d = racy.r.diagnostics.back();
  CHECK(d.kind == DiagKind::Race);
  REQUIRE(d.accesses.size() == 2);
  CHECK((d.accesses[0].kind == "TMA write" || d.accesses[1].kind == "TMA write"));
}

namespace {

// Every thread t < 64 writes smem[t] = x[t]; `fence`; bar.sync; thread 0
// stores smem as the box (0, 0) of B through b_map, commits, waits.
std::string tma_store(const std::string& fence, const std::string& wait = "  cp.async.bulk.wait_group.read 0;\n") {
  return kernel(".param .align 64 .b8 b_map[128], .param .u64 x",
                "  .shared .align 1024 .b8 smem[1024];\n",
                "  ld.param.u64 %rd10, [x];\n  cvta.to.global.u64 %rd1, %rd10;\n  mov.u32 %r1, %tid.x;\n"
                "  mul.wide.u32 %rd3, %r1, 4;\n  mov.u32 %r4, smem;\n"
                "  mov.b64 %rd20, b_map;\n  cvta.param.u64 %rd21, %rd20;\n"
                "  add.s64 %rd5, %rd1, %rd3;\n  ld.global.f32 %f1, [%rd5];\n"
                "  shl.b32 %r5, %r1, 2;\n  add.s32 %r9, %r4, %r5;\n  st.shared.f32 [%r9], %f1;\n" +
                    fence +
                    "  bar.sync 0;\n"
                    "  setp.ne.s32 %p1, %r1, 0;\n"
                    "  @%p1 bra DONE;\n"
                    "  mov.u32 %r20, 0;\n"
                    "  cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd21, {%r20, %r20}], [%r4];\n"
                    "  cp.async.bulk.commit_group;\n" +
                    wait +
                    "DONE:\n"
                    "  ret;\n");
}

Launch store_launch() {
  Launch l;
  l.block = Dim3{64, 1, 1};
  TensorMap m;
  m.dims = {32, 16};
  m.box = {8, 8};
  l.args = {LaunchArg::of_tensor_map({"B", DType::F32, {16, 32}, Role::Out}, m),
            LaunchArg::of_tensor({"x", DType::F32, {64}, Role::In})};
  return l;
}

}  // namespace

TEST_CASE("TMA store: shared memory written by threads needs fence.proxy.async before the copy reads it") {
  Run ok;
  run(ok, tma_store("  fence.proxy.async.shared::cta;\n"), store_launch());
  INFO(ok.text());
  REQUIRE(ok.r.ok());
  for (std::uint32_t t = 0; t < 64; ++t) CHECK(ok.output_is("B", (t / 8) * 32 + t % 8, "x", t));

  Run racy;
  run(racy, tma_store(""), store_launch());
  INFO(racy.text());
  REQUIRE(!racy.r.ok());
  const Diagnostic& d = racy.r.diagnostics.back();
  CHECK(d.kind == DiagKind::Race);
  CHECK(contains(d.message, "fence.proxy.async"));
  REQUIRE(d.accesses.size() == 2);
  CHECK(d.accesses[1].kind == "TMA read");
}

namespace {

// tma_store's kernel with what follows the barrier given: `issuer` runs in
// thread 0 before its copy, `others` in threads 1-63.
std::string tma_store_after_barrier(const std::string& issuer, const std::string& others) {
  return kernel(".param .align 64 .b8 b_map[128], .param .u64 x", "  .shared .align 1024 .b8 smem[1024];\n",
                "  ld.param.u64 %rd10, [x];\n  cvta.to.global.u64 %rd1, %rd10;\n  mov.u32 %r1, %tid.x;\n"
                "  mul.wide.u32 %rd3, %r1, 4;\n  mov.u32 %r4, smem;\n"
                "  mov.b64 %rd20, b_map;\n  cvta.param.u64 %rd21, %rd20;\n"
                "  add.s64 %rd5, %rd1, %rd3;\n  ld.global.f32 %f1, [%rd5];\n"
                "  shl.b32 %r5, %r1, 2;\n  add.s32 %r9, %r4, %r5;\n  st.shared.f32 [%r9], %f1;\n"
                "  bar.sync 0;\n"
                "  setp.ne.s32 %p1, %r1, 0;\n"
                "  @%p1 bra OTHERS;\n" +
                    issuer +
                    "  mov.u32 %r20, 0;\n"
                    "  cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd21, {%r20, %r20}], [%r4];\n"
                    "  cp.async.bulk.commit_group;\n  cp.async.bulk.wait_group.read 0;\n"
                    "  bra.uni DONE;\n"
                    "OTHERS:\n" +
                    others +
                    "DONE:\n"
                    "  ret;\n");
}

}  // namespace

TEST_CASE("TMA store: the proxy fence may follow the barrier in the issuing thread, as Triton places it") {
  // Every thread fences after the barrier that ordered the stores before
  // the issue (Triton 3.6's sm_90 epilogue): the issuer's own fence lies
  // between every write and the copy.
  const std::string fence = "  fence.proxy.async.shared::cta;\n";
  Run ok;
  run(ok, tma_store_after_barrier(fence, fence), store_launch());
  INFO(ok.text());
  CHECK(ok.r.ok());
}

TEST_CASE("TMA store: a writer's fence that nothing orders before the issue does not count, whenever it runs") {
  // Threads 32-63 fence after the barrier and exit; warp 0 does not fence
  // and thread 0 waits at a warp sync first, so in this schedule their
  // fences have run when it issues the copy. No proxy fence lies between
  // their writes and the copy in happens-before order: a race in every
  // schedule (this was accepted while the check asked only whether the
  // writer had fenced by then). A fence of lanes 1-31 before the warp sync
  // would be one (the barrier orders every write before it).
  const std::string others =
      "  setp.lt.u32 %p2, %r1, 32;\n  @%p2 bar.warp.sync -1;\n  @%p2 bra.uni DONE;\n  fence.proxy.async.shared::cta;\n";
  Run racy;
  run(racy, tma_store_after_barrier("  bar.warp.sync -1;\n", others), store_launch());
  INFO(racy.text());
  REQUIRE(!racy.r.ok());
  const Diagnostic& d = racy.r.diagnostics.back();
  CHECK(d.kind == DiagKind::Race);
  CHECK(contains(d.message, "fence.proxy.async"));
  CHECK(d.threads.size() == 2);
  Run ok;  // lanes 1-31 fence before the warp sync: their fences cover every write
  run(ok, tma_store_after_barrier("  bar.warp.sync -1;\n",
                                  "  setp.lt.u32 %p2, %r1, 32;\n  fence.proxy.async.shared::cta;\n  @%p2 bar.warp.sync -1;\n"),
      store_launch());
  INFO(ok.text());
  CHECK(ok.r.ok());
}

TEST_CASE("TMA store: overwriting the source before wait_group.read retires the group races") {
  const std::string after = "  mov.f32 %f9, 0f00000000;\n  st.shared.f32 [%r4], %f9;\n";
  Run ok;
  run(ok, tma_store("  fence.proxy.async.shared::cta;\n", "  cp.async.bulk.wait_group.read 0;\n" + after), store_launch());
  INFO(ok.text());
  CHECK(ok.r.ok());
  Run racy;
  run(racy, tma_store("  fence.proxy.async.shared::cta;\n", after), store_launch());
  INFO(racy.text());
  REQUIRE(!racy.r.ok());
  CHECK(racy.r.diagnostics.back().kind == DiagKind::Race);
}

TEST_CASE("TMA store: a box at a negative coordinate breaks the launch contract (it traps on a GPU)") {
  std::string text = tma_store("  fence.proxy.async.shared::cta;\n");
  const std::string from = "[%rd21, {%r20, %r20}]";
  text.replace(text.find(from), from.size(), "[%rd21, {%r20, %r22}]");
  text.replace(text.find("  mov.u32 %r20, 0;\n"), 0, "  mov.u32 %r22, -4;\n");
  Run r;
  Launch l = store_launch();
  l.cta = Dim3{2, 0, 0};
  run(r, text, l);
  INFO(r.text());
  REQUIRE(!r.r.ok());
  const Diagnostic& d = r.r.diagnostics.back();
  CHECK(d.kind == DiagKind::LaunchContract);
  CHECK(contains(d.message, "CTA (2,0,0): TMA store at coordinates (0, -4) with box 8x8 starts at a negative coordinate"));
  CHECK(contains(d.message, "error 715"));
}

TEST_CASE("a plain load of a tensor map's bytes is unsupported") {
  const std::string text = kernel(".param .align 64 .b8 a_map[128], .param .u64 y", "",
                                  "  ld.param.u64 %rd1, [a_map];\n  ret;\n");
  Run r;
  run(r, text, tma_launch());
  REQUIRE(!r.r.ok());
  CHECK(r.r.diagnostics.back().kind == DiagKind::Unsupported);
  CHECK(contains(r.r.diagnostics.back().message, "tensor map 'a_map'"));
}

TEST_CASE("cp.async.bulk: global -> shared with complete_tx, then shared -> global in a bulk group") {
  // Thread 0: init, arrive.expect_tx 256, bulk copy x -> buf (256 bytes);
  // everyone waits; thread t doubles buf[t] back into buf (fence.proxy.async),
  // bar.sync; thread 0 bulk-copies buf to y and waits for the group.
  const std::string body = std::string(kPrologue) +
                           "  setp.ne.s32 %p1, %r1, 0;\n"
                           "  @%p1 bra INITED;\n"
                           "  mbarrier.init.shared::cta.b64 [%r2], 1;\n"
                           "INITED:\n"
                           "  bar.sync 0;\n"
                           "  @%p1 bra ISSUED;\n"
                           "  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 256;\n"
                           "  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r4], [%rd1], 256, [%r2];\n"
                           "ISSUED:\n" +
                           std::string(kRetryParity0) +
                           "  add.s32 %r9, %r4, %r5;\n"
                           "  ld.shared.f32 %f2, [%r9];\n"
                           "  add.f32 %f3, %f2, %f2;\n"
                           "  st.shared.f32 [%r9], %f3;\n"
                           "  FENCE\n"
                           "  bar.sync 0;\n"
                           "  @%p1 bra DONE;\n"
                           "  cp.async.bulk.global.shared::cta.bulk_group [%rd2], [%r4], 256;\n"
                           "  cp.async.bulk.commit_group;\n"
                           "  cp.async.bulk.wait_group 0;\n"
                           "DONE:\n"
                           "  ret;\n";
  auto with = [&](const std::string& fence) {
    std::string s = body;
    s.replace(s.find("  FENCE\n"), 8, fence);
    return kernel(kXY, kBarBuf, s);
  };
  Run ok;
  run(ok, with("  fence.proxy.async.shared::cta;\n"), xy(64, 64));
  INFO(ok.text());
  REQUIRE(ok.r.ok());
  for (std::uint32_t i = 0; i < 64; ++i) {
    const auto& y = ok.r.outputs.at("y")[i];
    REQUIRE(y);
    CHECK(*y == ok.ctx.add(ok.ctx.symbol("x", i), ok.ctx.symbol("x", i)));
  }
  Run racy;
  run(racy, with(""), xy(64, 64));
  INFO(racy.text());
  REQUIRE(!racy.r.ok());
  CHECK(racy.r.diagnostics.back().kind == DiagKind::Race);
  CHECK(contains(racy.r.diagnostics.back().message, "bulk copy read"));
}

TEST_CASE("TMA and mbarrier runs give the same result under random schedules") {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    RunOptions o;
    o.random_schedule = seed;
    Run ok;
    run(ok, tma_kernel("8", "4", kRetryParity0), tma_launch(), o);
    INFO(ok.text());
    CHECK(ok.r.ok());
    Run racy;
    run(racy, tma_kernel("8", "4", ""), tma_launch(), o);
    REQUIRE(!racy.r.ok());
    CHECK(racy.r.diagnostics.back().kind == DiagKind::Race);
  }
}

TEST_CASE("a cluster of one: mapa to rank 0 is the address itself, to another rank out of bounds") {
  const std::string mapa = std::string(kPrologue) + "  mapa.shared::cluster.u32 %r30, %r2, 1;\n  ret;\n";
  Run r;
  run(r, kernel(kXY, kBarBuf, mapa), xy(32, 32));
  REQUIRE(!r.r.ok());
  CHECK(r.r.diagnostics.back().kind == DiagKind::OutOfBounds);
  CHECK(contains(r.r.diagnostics.back().message, "mapa to CTA rank 1 of a cluster of 1 CTA"));
  // mapa to rank 0 in a cluster of one is the address itself.
  const std::string own = std::string(kPrologue) +
                          "  mapa.shared::cluster.u32 %r30, %r2, 0;\n"
                          "  mbarrier.init.shared::cta.b64 [%r2], 1;\n"
                          "  mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r30];\n"
                          "  mov.u32 %r10, 0;\n"
                          "W:\n"
                          "  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], %r10;\n"
                          "  @!%p3 bra W;\n"
                          "  ret;\n";
  Run o;
  run(o, kernel(kXY, kBarBuf, own), xy(1, 32));
  INFO(o.text());
  CHECK(o.r.ok());
}

TEST_CASE("mbarrier: copies beyond the expect_tx count against the next phase: the race, and a note that a GPU may hang") {
  // Thread 0 announces 128 bytes, then bulk-copies 256 (two copies of 128)
  // onto the barrier; everyone waits for phase 0 and reads buf[tid].
  auto body = [](int announced) {
    return std::string(kPrologue) +
           "  setp.ne.s32 %p1, %r1, 0;\n"
           "  @%p1 bra INITED;\n"
           "  mbarrier.init.shared::cta.b64 [%r2], 1;\n"
           "INITED:\n"
           "  bar.sync 0;\n"
           "  @%p1 bra ISSUED;\n"
           "  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], " +
           std::to_string(announced) +
           ";\n"
           "  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r4], [%rd1], 128, [%r2];\n"
           "  add.s32 %r11, %r4, 128;\n"
           "  add.s64 %rd8, %rd1, 128;\n"
           "  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r11], [%rd8], 128, [%r2];\n"
           "ISSUED:\n" +
           std::string(kRetryParity0) +
           "  add.s32 %r9, %r4, %r5;\n"
           "  ld.shared.f32 %f2, [%r9];\n"
           "  add.s64 %rd7, %rd2, %rd3;\n"
           "  st.global.f32 [%rd7], %f2;\n"
           "  ret;\n";
  };
  auto excess_note = [](const Run& r) -> const Diagnostic* {
    for (const Diagnostic& d : r.r.notes)
      if (contains(d.message, "more bytes than announced")) return &d;
    return nullptr;
  };
  Run ok;
  run(ok, kernel(kXY, kBarBuf, body(256)), xy(64, 64));
  INFO(ok.text());
  REQUIRE(ok.r.ok());
  CHECK(excess_note(ok) == nullptr);

  Run small;
  run(small, kernel(kXY, kBarBuf, body(128)), xy(64, 64));
  INFO(small.text());
  REQUIRE(!small.r.ok());
  const Diagnostic& race = small.r.diagnostics.back();
  CHECK(race.kind == DiagKind::Race);
  // The race's report says where the second copy's bytes went.
  CHECK(contains(race.detail, "its 128 bytes count against phase 1 of full_bar"));
  CHECK(contains(race.detail, "(tx-count -128), not phase 0"));
  CHECK(contains(race.detail, "announced 128 bytes for phase 0"));
  CHECK(contains(race.detail, "the excess bytes count against the next phase"));
  // And a note (in the JSON report too) says it once, naming the copy and the expect_tx.
  const Diagnostic* note = excess_note(small);
  REQUIRE(note != nullptr);
  CHECK(note->warning);
  CHECK(contains(note->message, "counts 128 bytes against phase 1 of full_bar"));
  CHECK(contains(note->message, "a GPU may hang"));
  CHECK(contains(note->detail, "the expect-tx: k.ptx:"));
  CHECK(contains(note->detail, "the copy: k.ptx:"));
}
