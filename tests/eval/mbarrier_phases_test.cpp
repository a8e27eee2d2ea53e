// Which phase a parity wait sees (docs/evaluator.md, "Asynchronous
// operations (sm_90)", *Which phase a parity wait sees*;
// src/eval/machine_mbarrier_phases.cpp): a retry loop's wait whose parity
// names a different phase depending on whether a completion it is not
// ordered after came first is a race on the barrier when it passes, and a
// warning note when it blocks (a deadlock if nothing releases it); waits
// ordered after the phase before the one they want stay exact.
#include "async_test_helpers.hpp"
#include "tileverify/eval.hpp"
#include "tileverify/ptx.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

using namespace tileverify;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Kernel k(x, y): 64 threads, full_bar[2] and empty_bar (8 bytes each), buf[64] floats.
// Registers: %r1 = tid, %r2 = &full_bar[0], %r3 = &empty_bar, %r4 = &buf[tid], %rd1 = x + 4 tid,
// %rd2 = y + 4 tid.
std::string kernel(const std::string& body) {
  return ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 x, .param .u64 y)\n{\n"
         "  .reg .pred %p<16>;\n  .reg .b32 %r<64>;\n  .reg .b64 %rd<32>;\n  .reg .f32 %f<16>;\n"
         "  .shared .align 8 .b64 full_bar[2];\n  .shared .align 8 .b64 empty_bar;\n"
         "  .shared .align 128 .f32 buf[64];\n"
         "  ld.param.u64 %rd10, [x];\n  cvta.to.global.u64 %rd11, %rd10;\n  ld.param.u64 %rd12, [y];\n"
         "  cvta.to.global.u64 %rd13, %rd12;\n  mov.u32 %r1, %tid.x;\n  mul.wide.u32 %rd3, %r1, 4;\n"
         "  add.s64 %rd1, %rd11, %rd3;\n  add.s64 %rd2, %rd13, %rd3;\n"
         "  mov.u32 %r2, full_bar;\n  mov.u32 %r3, empty_bar;\n  mov.u32 %r5, buf;\n  shl.b32 %r6, %r1, 2;\n"
         "  add.s32 %r4, %r5, %r6;\n"
         "  setp.ne.s32 %p1, %r1, 0;\n  @%p1 bra INITED;\n"
         "  mbarrier.init.shared::cta.b64 [%r2], 32;\n  mbarrier.init.shared::cta.b64 [%r3], 32;\n"
         "INITED:\n  bar.sync 0;\n" +
         body + "}\n";
}

// A retry loop waiting on full_bar[0] for the parity in %r10.
const char* kWaitFull =
    "WAIT:\n"
    "  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], %r10;\n"
    "  @!%p3 bra WAIT;\n";

// Warp 0 stages x into buf and arrives on full_bar[0] (count 32); warp 1
// waits on it for parity `parity` and copies what the producer's lane
// tid - 32 staged into y[tid].
std::string one_stage(int parity) {
  return "  setp.ge.u32 %p2, %r1, 32;\n  @%p2 bra CONSUMER;\n"
         "  ld.global.f32 %f1, [%rd1];\n  st.shared.f32 [%r4], %f1;\n"
         "  mbarrier.arrive.shared::cta.b64 _, [%r2];\n  ret;\n"
         "CONSUMER:\n  mov.u32 %r10, " +
         std::to_string(parity) + ";\n" + kWaitFull +
         "  sub.s32 %r11, %r4, 128;\n  ld.shared.f32 %f2, [%r11];\n  st.global.f32 [%rd2], %f2;\n  ret;\n";
}

void run(async_test::Run& out, const std::string& text, RunOptions o = {}, std::uint32_t threads = 64) {
  Program p = async_test::lower(text, true);
  Launch l;
  l.block = Dim3{threads, 1, 1};
  l.args = {LaunchArg::of_tensor({"x", DType::F32, {threads}, Role::In}),
            LaunchArg::of_tensor({"y", DType::F32, {threads}, Role::Out})};
  SymbolicDomain dom(out.ctx);
  out.r = run_program(p, l, dom, o);
}

}  // namespace

TEST_CASE("mbarrier phases: a wait for parity 1 after arrivals it is not ordered after completed phase 0") {
  // Warp 0 runs first: phase 0 completes before warp 1 reaches its wait,
  // which then waits for phase 1, which nobody completes: a deadlock, as an
  // H200 hangs on the CuTe tutorial with this bug. Run before the arrivals,
  // the same wait would pass at once and read buf before it is written: a
  // note at the wait says so, naming the arrive that completed phase 0.
  async_test::Run r;
  run(r, kernel(one_stage(1)));
  INFO(r.text());
  REQUIRE(!r.r.ok());
  CHECK(r.last().kind == DiagKind::Deadlock);
  REQUIRE(r.r.notes.size() == 1);
  const Diagnostic& n = r.r.notes[0];
  CHECK(n.warning);
  CHECK(n.kind == DiagKind::Race);
  CHECK(contains(n.message, "full_bar[0] for parity 1 waits for phase 1, but nothing orders the completion of its phase 0"));
  CHECK(contains(n.detail, "phase 0 completed: thread 31 at"));
  CHECK(contains(n.detail, "passes at once, before any phase has completed"));
  CHECK(contains(n.detail, "the deadlock reported is this wait"));
  // In every schedule the verdict is a race (the wait passed before the
  // producer's stores, and reads buf) or this deadlock.
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    async_test::Run s;
    RunOptions o;
    o.random_schedule = seed;
    run(s, kernel(one_stage(1)), o);
    INFO(s.text());
    REQUIRE(!s.r.ok());
    CHECK((s.last().kind == DiagKind::Race || s.last().kind == DiagKind::Deadlock));
  }
}

TEST_CASE("mbarrier phases: a wait released by the phase after one it was not ordered after is the race") {
  // Warp 0 arrives on full_bar[0] (phase 0 completes) and waits on
  // empty_bar; warp 1 waits on full_bar[0] for parity 1, so for phase 1;
  // warp 2 arrives on empty_bar, and warp 0 arrives again, completing phase
  // 1 and releasing warp 1. Run before warp 0's first arrivals, warp 1's
  // wait would have passed at once: which phase it sees is the schedule's.
  const std::string body =
      "  setp.ge.u32 %p2, %r1, 32;\n  @%p2 bra NOT0;\n"
      "  mbarrier.arrive.shared::cta.b64 _, [%r2];\n  mov.u32 %r10, 0;\n"
      "E:\n  mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r3], %r10;\n  @!%p4 bra E;\n"
      "  mbarrier.arrive.shared::cta.b64 _, [%r2];\n  ret;\n"
      "NOT0:\n  setp.ge.u32 %p5, %r1, 64;\n  @%p5 bra WARP2;\n  mov.u32 %r10, 1;\n" +
      std::string(kWaitFull) +
      "  ret;\n"
      "WARP2:\n  mbarrier.arrive.shared::cta.b64 _, [%r3];\n  ret;\n";
  async_test::Run r;
  run(r, kernel(body), {}, 96);
  INFO(r.text());
  REQUIRE(!r.r.ok());
  const Diagnostic& d = r.last();
  CHECK(d.kind == DiagKind::Race);
  CHECK(contains(d.message, "full_bar[0] for parity 1 sees a phase the schedule decides"));
  CHECK(contains(d.detail, "in this run the barrier was in phase 1, and the wait waited for phase 1"));
}

TEST_CASE("mbarrier phases: the right parity is exact in every schedule") {
  for (std::uint64_t seed = 0; seed <= 8; ++seed) {
    async_test::Run s;
    RunOptions o;
    o.random_schedule = seed;
    run(s, kernel(one_stage(0)), o);
    INFO(s.text());
    CHECK(s.r.ok());
  }
}

TEST_CASE("mbarrier phases: a second round waits for parity 1, ordered after phase 0 by its own wait or a bar.sync") {
  // Two rounds on full_bar[0]: warp 0 fills buf, arrives; warp 1 waits
  // (parity 0), reads, releases the stage on empty_bar; warp 0 waits for
  // that (parity 0), fills again, arrives; warp 1 waits with parity 1. With
  // SKIP, only lane 32 waits in round one and the others of warp 1 learn of
  // phase 0 through bar.sync 1 (64 threads; warp 0 joins it after its
  // first arrive): still ordered after phase 0, so the parity is exact.
  const std::string body =
      "  setp.ge.u32 %p2, %r1, 32;\n  @%p2 bra C1;\n"
      "  ld.global.f32 %f1, [%rd1];\n  st.shared.f32 [%r4], %f1;\n"
      "  mbarrier.arrive.shared::cta.b64 _, [%r2];\n  bra J;\n"
      "C1:\n  mov.u32 %r10, 0;\n"
      "  setp.ne.u32 %p5, %r1, 32;\n  and.pred %p6, %p5, %p7;\n  @%p6 bra J;\n" +
      std::string(kWaitFull) +
      "J:\n  bar.sync 1, 64;\n  @%p2 bra C2;\n"
      "  mov.u32 %r10, 0;\n"
      "EMPTY:\n  mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r3], %r10;\n  @!%p4 bra EMPTY;\n"
      "  add.f32 %f3, %f1, %f1;\n  st.shared.f32 [%r4], %f3;\n"
      "  mbarrier.arrive.shared::cta.b64 _, [%r2];\n  ret;\n"
      "C2:\n  sub.s32 %r11, %r4, 128;\n  ld.shared.f32 %f2, [%r11];\n"
      "  mbarrier.arrive.shared::cta.b64 _, [%r3];\n"
      "  mov.u32 %r10, 1;\n"
      "WAIT2:\n  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], %r10;\n  @!%p3 bra WAIT2;\n"
      "  ld.shared.f32 %f4, [%r11];\n  add.f32 %f5, %f2, %f4;\n  st.global.f32 [%rd2], %f5;\n  ret;\n";
  for (const char* skip : {"  setp.eq.u32 %p7, %r1, %r1;\n", "  setp.ne.u32 %p7, %r1, %r1;\n"}) {
    for (std::uint64_t seed = 0; seed <= 6; ++seed) {
      async_test::Run s;
      RunOptions o;
      o.random_schedule = seed;
      std::string text = kernel(std::string(skip) + body);
      run(s, text, o);
      INFO(skip);
      INFO(s.text());
      CHECK(s.r.ok());
    }
  }
}

TEST_CASE("mbarrier phases: a phase completed by a bulk copy's complete-tx names the copy") {
  // Thread 0 arrives with expect_tx and copies x into buf (its complete-tx
  // lands at once in this run); every thread then waits with parity 1.
  const std::string body =
      "  @%p1 bra ISSUED;\n"
      "  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], 256;\n"
      "  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r5], [%rd11], 256, [%r3];\n"
      "ISSUED:\n"
      "  mov.u32 %r10, 1;\n"
      "W:\n  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r3], %r10;\n  @!%p3 bra W;\n"
      "  ld.shared.f32 %f2, [%r4];\n  st.global.f32 [%rd2], %f2;\n  ret;\n";
  std::string text = kernel(body);
  // empty_bar is the copy's barrier here: one arrival.
  const std::string count32 = "mbarrier.init.shared::cta.b64 [%r3], 32;";
  text.replace(text.find(count32), count32.size(), "mbarrier.init.shared::cta.b64 [%r3], 1;");
  async_test::Run r;
  run(r, text);
  INFO(r.text());
  REQUIRE(!r.r.ok());
  CHECK(r.last().kind == DiagKind::Deadlock);
  // The other note is the init without a proxy fence.
  auto n = std::find_if(r.r.notes.begin(), r.r.notes.end(), [](const Diagnostic& x) { return x.kind == DiagKind::Race; });
  REQUIRE(n != r.r.notes.end());
  CHECK(contains(n->message, "empty_bar[0] for parity 1 waits for phase 1"));
  CHECK(contains(n->detail, "phase 0 completed: the complete-tx of the copy thread 0 issued at"));
  CHECK(contains(n->detail, "cp.async.bulk"));
}
