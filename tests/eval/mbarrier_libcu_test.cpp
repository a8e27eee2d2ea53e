// The forms libcu++ compiles to (docs/evaluator.md, "Asynchronous
// operations (sm_90)", libcu++): cuda::barrier's wait loop with a spin
// counter, %globaltimer and nanosleep backoff; timers anywhere else; and
// cp.async.mbarrier.arrive with and without .noinc (cuda::memcpy_async
// with a barrier on sm_80). Kernels are PTX text, run through parse_ptx,
// lower_kernel and run_program.
#include "async_test_helpers.hpp"
#include "tileverify/eval.hpp"
#include "tileverify/ptx.hpp"

#include <doctest/doctest.h>

#include <string>
#include <tuple>

using namespace tileverify;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string kernel(const std::string& decls, const std::string& body) {
  return ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 x, .param .u64 y)\n{\n"
         "  .reg .pred %p<16>;\n  .reg .b32 %r<64>;\n  .reg .b64 %rd<32>;\n  .reg .f32 %f<16>;\n" +
         decls + body + "}\n";
}

Program lower(const std::string& text) { return async_test::lower(text, false); }

using async_test::Run;

void run(Run& out, const std::string& text, std::uint32_t threads, std::uint64_t n) {
  Program p = lower(text);
  Launch l;
  l.block = Dim3{threads, 1, 1};
  l.args = {LaunchArg::of_tensor({"x", DType::F32, {n}, Role::In}), LaunchArg::of_tensor({"y", DType::F32, {n}, Role::Out})};
  SymbolicDomain dom(out.ctx);
  out.r = run_program(p, l, dom, {});
}

const char* kDecls = "  .shared .align 8 .b64 bar[1];\n  .shared .align 16 .f32 buf[64];\n";

// %rd1 = x, %rd2 = y (global), %r1 = tid, %rd3 = 4 * tid, %r2 = &bar, %r4 = &buf, %r5 = 4 * tid.
const char* kPrologue =
    "  ld.param.u64 %rd10, [x];\n  cvta.to.global.u64 %rd1, %rd10;\n  ld.param.u64 %rd11, [y];\n"
    "  cvta.to.global.u64 %rd2, %rd11;\n  mov.u32 %r1, %tid.x;\n  mul.wide.u32 %rd3, %r1, 4;\n"
    "  mov.u32 %r2, bar;\n  mov.u32 %r4, buf;\n  shl.b32 %r5, %r1, 2;\n";

// cuda::barrier<thread_scope_block>::wait as nvcc 13 compiles it (-O3, sm_90):
// a timer read before the loop, 16 quick spins, then %globaltimer and a
// nanosleep that grows with the time waited; every branch leads back to the
// try_wait. `exit_on_timeout`: the long-wait branch leaves the loop instead.
std::string libcu_wait(bool exit_on_timeout = false) {
  return std::string(
             "  mov.u32 %r10, 0;\n"
             "  mov.u64 %rd20, %globaltimer;\n"
             "  mov.u32 %r20, 0;\n"
             "  bra.uni W;\n"
             "CNT:\n"
             "  add.s32 %r20, %r20, 1;\n"
             "W:\n"
             "  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], %r10;\n"
             "  selp.b32 %r11, 1, 0, %p3;\n"
             "  setp.eq.s32 %p4, %r11, 0;\n"
             "  @%p4 bra SPIN;\n"
             "  bra.uni DONE;\n"
             "SPIN:\n"
             "  setp.lt.s32 %p5, %r20, 16;\n"
             "  @%p5 bra CNT;\n"
             "  mov.u64 %rd21, %globaltimer;\n"
             "  sub.s64 %rd22, %rd21, %rd20;\n"
             "  setp.lt.s64 %p6, %rd22, 4000000;\n") +
         (exit_on_timeout ? "  @!%p6 bra DONE;\n" : "  @%p6 bra SHORT;\n  mov.u32 %r21, 1000000;\n  nanosleep.u32 %r21;\n  bra.uni W;\n") +
         "SHORT:\n"
         "  setp.lt.s64 %p7, %rd22, 40000;\n"
         "  @%p7 bra W;\n"
         "  shr.u64 %rd23, %rd22, 2;\n"
         "  cvt.u32.u64 %r22, %rd23;\n"
         "  nanosleep.u32 %r22;\n"
         "  bra.uni W;\n"
         "DONE:\n";
}

// Warp 1 stores x into buf and arrives on bar (count 32); warp 0 waits with
// `wait` and copies buf to y; then `after` (warp 0).
std::string producer_consumer(const std::string& wait, const std::string& after = "") {
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
         "  st.shared.f32 [%r8], %f1;\n"
         "  mbarrier.arrive.shared::cta.b64 %rd6, [%r2];\n"
         "  ret;\n"
         "CONSUMER:\n" +
         wait +
         "  add.s32 %r9, %r4, %r5;\n"
         "  ld.shared.f32 %f2, [%r9];\n"
         "  add.s64 %rd7, %rd2, %rd3;\n"
         "  st.global.f32 [%rd7], %f2;\n" +
         after + "  ret;\n";
}

}  // namespace

TEST_CASE("libcu++: cuda::barrier's wait loop (spin counter, %globaltimer, nanosleep backoff) is a retry loop") {
  Run r;
  run(r, kernel(kDecls, producer_consumer(libcu_wait())), 64, 32);
  INFO(r.text());
  REQUIRE(r.r.ok());
  for (std::uint32_t i = 0; i < 32; ++i) CHECK(r.output_is("y", i, "x", i));
}

TEST_CASE("libcu++: a backoff branch that leaves the loop makes the wait's result the schedule's") {
  Run r;
  run(r, kernel(kDecls, producer_consumer(libcu_wait(true))), 64, 32);
  INFO(r.text());
  REQUIRE(!r.r.ok());
  CHECK(r.last().kind == DiagKind::Race);
  CHECK(contains(r.last().message, "whether an mbarrier phase had completed"));
}

TEST_CASE("libcu++: the spin counter after a blocked wait is the schedule's") {
  // The consumer blocks (the producer warp has not arrived yet), so the
  // counter holds however many spins the GPU made.
  Run r;
  run(r, kernel(kDecls, producer_consumer(libcu_wait(), "  cvt.rn.f32.s32 %f3, %r20;\n  st.global.f32 [%rd7], %f3;\n")), 64, 32);
  INFO(r.text());
  REQUIRE(!r.r.ok());
  CHECK(r.last().kind == DiagKind::Race);
  CHECK(contains(r.last().message, "output y"));
}

TEST_CASE("libcu++: a resumed thread recomputes its loop head as its last spin did; the values are not the schedule's") {
  // The loop head computes buf's address, which the consumer uses after the
  // loop; the thread enters the loop at the wait, past the head, holding 0.
  const char* head =
      "  mov.u32 %r10, 0;\n"
      "  mov.u32 %r4, 0;\n"
      "  bra.uni W;\n"
      "L:\n"
      "  mov.u32 %r4, buf;\n"
      "W:\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], %r10;\n"
      "  selp.u32 %r11, 1, 0, %p3;\n"
      "  setp.eq.s32 %p4, %r11, 0;\n"
      "  @%p4 bra L;\n";
  Run r;
  run(r, kernel(kDecls, producer_consumer(head)), 64, 32);
  INFO(r.text());
  REQUIRE(r.r.ok());
  for (std::uint32_t i = 0; i < 32; ++i) CHECK(r.output_is("y", i, "x", i));
}

TEST_CASE("libcu++: a timer value that reaches an output, an address or a branch is unsupported, naming the read") {
  const char* stored =
      "  mov.u64 %rd20, %globaltimer;\n"
      "  cvt.rn.f32.u64 %f1, %rd20;\n"
      "  st.global.f32 [%rd2], %f1;\n";
  const char* address =
      "  mov.u64 %rd20, %clock64;\n"
      "  and.b64 %rd21, %rd20, 4;\n"
      "  add.s64 %rd22, %rd2, %rd21;\n"
      "  st.global.f32 [%rd22], %f1;\n";
  const char* branch =
      "  mov.u32 %r20, %clock;\n"
      "  setp.lt.u32 %p1, %r20, 100;\n"
      "  @%p1 bra SKIP;\n"
      "  st.global.f32 [%rd2], %f1;\n"
      "SKIP:\n";
  for (auto [body, timer, what] : {std::make_tuple(stored, "%globaltimer", "output y[0]"),
                                   std::make_tuple(address, "%clock64", "an address"),
                                   std::make_tuple(branch, "%clock", "a branch")}) {
    Run r;
    run(r, kernel(kDecls, std::string(kPrologue) + "  mov.f32 %f1, 0f00000000;\n" + body + "  ret;\n"), 1, 4);
    INFO(r.text());
    REQUIRE(!r.r.ok());
    CHECK(r.last().kind == DiagKind::Unsupported);
    CHECK(contains(r.last().message, timer));
    CHECK(contains(r.last().message, what));
  }
  // A timer read that nothing uses is harmless.
  Run unused;
  run(unused, kernel(kDecls, std::string(kPrologue) + "  mov.u64 %rd20, %globaltimer;\n  nanosleep.u32 100;\n  ret;\n"), 1, 4);
  INFO(unused.text());
  CHECK(unused.r.ok());
}

namespace {

// 32 threads: thread i copies x[i] into buf[i] with cp.async, then `track`
// (cp.async.mbarrier.arrive ...) and `arrive`; all wait for phase 0 (parity
// 0, a retry loop) and write buf[(i + 1) % 32] to y[i]. `early`: the read
// comes before the wait.
std::string cp_async_kernel(int count, const std::string& track, const std::string& arrive, bool early = false,
                            int shift = 1) {
  const std::string read = "  add.s32 %r12, %r1, " + std::to_string(shift) +
                           ";\n  and.b32 %r13, %r12, 31;\n  shl.b32 %r14, %r13, 2;\n  add.s32 %r15, %r4, %r14;\n"
                           "  ld.shared.f32 %f2, [%r15];\n";
  return kernel(kDecls, std::string(kPrologue) +
                            "  setp.ne.s32 %p1, %r1, 0;\n"
                            "  @%p1 bra INITED;\n"
                            "  mbarrier.init.shared::cta.b64 [%r2], " + std::to_string(count) + ";\n"
                            "INITED:\n"
                            "  bar.sync 0;\n"
                            "  add.s64 %rd4, %rd1, %rd3;\n"
                            "  add.s32 %r6, %r4, %r5;\n"
                            "  cp.async.ca.shared.global [%r6], [%rd4], 4, 4;\n" +
                            track + arrive + (early ? read : "") +
                            "  mov.u32 %r10, 0;\n"
                            "W:\n"
                            "  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], %r10;\n"
                            "  @!%p3 bra W;\n" +
                            (early ? "" : read) +
                            "  add.s64 %rd7, %rd2, %rd3;\n"
                            "  st.global.f32 [%rd7], %f2;\n"
                            "  ret;\n");
}

const char* kTrack = "  cp.async.mbarrier.arrive.shared.b64 [%r2];\n";
const char* kTrackNoinc = "  cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%r2];\n";
const char* kArrive = "  mbarrier.arrive.shared.b64 %rd6, [%r2];\n";

}  // namespace

TEST_CASE("cp.async.mbarrier.arrive: the barrier's phase waits for the thread's copies, and a wait orders them") {
  Run r;
  run(r, cp_async_kernel(32, kTrack, kArrive), 32, 32);
  INFO(r.text());
  REQUIRE(r.r.ok());
  for (std::uint32_t i = 0; i < 32; ++i) CHECK(r.output_is("y", i, "x", (i + 1) % 32));
  // The same read before the wait races with another thread's copy.
  Run early;
  run(early, cp_async_kernel(32, kTrack, kArrive, true), 32, 32);
  INFO(early.text());
  REQUIRE(!early.r.ok());
  CHECK(early.last().kind == DiagKind::Race);
  // Without the tracking, only cp.async.wait_group would retire the copies:
  // the phase completes with them still in flight.
  Run untracked;
  run(untracked, cp_async_kernel(32, "", kArrive), 32, 32);
  INFO(untracked.text());
  REQUIRE(!untracked.r.ok());
  CHECK(untracked.last().kind == DiagKind::Race);
  CHECK(contains(untracked.last().message, "cp.async"));
}

TEST_CASE("cp.async.mbarrier.arrive without .noinc is no arrival; with .noinc it is one of the count") {
  // Without .noinc the pending count goes up by one and the copies' arrive-on
  // takes it back: the threads' own arrivals must still complete the phase.
  Run none;
  run(none, cp_async_kernel(32, kTrack, ""), 32, 32);
  INFO(none.text());
  REQUIRE(!none.r.ok());
  CHECK(none.last().kind == DiagKind::Deadlock);
  // With .noinc the copies' arrive-ons are the 32 arrivals.
  Run noinc;
  run(noinc, cp_async_kernel(32, kTrackNoinc, ""), 32, 32);
  INFO(noinc.text());
  REQUIRE(noinc.r.ok());
  for (std::uint32_t i = 0; i < 32; ++i) CHECK(noinc.output_is("y", i, "x", (i + 1) % 32));
  // .noinc and the threads' arrivals: the count must cover both.
  Run both;
  run(both, cp_async_kernel(64, kTrackNoinc, kArrive), 32, 32);
  INFO(both.text());
  CHECK(both.r.ok());
  // A count that covers only half: the phase can complete before some
  // copies land, and their arrive-ons then count in the next phase. (Each
  // thread reads its own element here: another's would race first.)
  Run half;
  run(half, cp_async_kernel(32, kTrackNoinc, kArrive, false, 0), 32, 32);
  INFO(half.text());
  REQUIRE(!half.r.ok());
  CHECK(half.last().kind == DiagKind::Race);
  CHECK(contains(half.last().message, ".noinc"));
}

TEST_CASE("cp.async.mbarrier.arrive: lowering") {
  Program p = lower(kernel(kDecls, std::string(kPrologue) + kTrack + kTrackNoinc + "  ret;\n"));
  bool inc = false, noinc = false;
  for (const Instr& in : p.code)
    if (in.op == Opcode::CpAsyncMbarArrive) (in.mode ? noinc : inc) = true;
  CHECK(inc);
  CHECK(noinc);
  // Only the shared state spaces are valid (PTX ISA, cp.async.mbarrier.arrive).
  auto parsed = ptx::parse_ptx(
      kernel(kDecls, std::string(kPrologue) + "  cp.async.mbarrier.arrive.shared::cluster.b64 [%r2];\n  ret;\n"), "k.ptx");
  REQUIRE(parsed.module.has_value());
  auto bad = ptx::lower_kernel(*parsed.module, "k");
  REQUIRE(bad.error.has_value());
  CHECK(contains(bad.error->text(), "shared::cluster"));
}

TEST_CASE("cp.async: a copy into an element another thread wrote, unordered with the issue, races whatever follows") {
  // Thread 0 stores buf[0]; thread 1 copies into it, then both meet at a
  // barrier before thread 1's wait. The copy may land before the store on a
  // GPU: the barrier orders the store before the wait, not before the copy.
  const std::string body = std::string(kPrologue) +
                           "  setp.ne.s32 %p1, %r1, 0;\n"
                           "  @%p1 bra COPY;\n"
                           "  mov.f32 %f1, 0f3F800000;\n"
                           "  st.shared.f32 [%r4], %f1;\n"
                           "  bra.uni JOIN;\n"
                           "COPY:\n"
                           "  cp.async.ca.shared.global [%r4], [%rd1], 4, 4;\n"
                           "JOIN:\n"
                           "  bar.sync 0;\n"
                           "  cp.async.wait_all;\n"
                           "  ret;\n";
  Run r;
  run(r, kernel(kDecls, body), 2, 4);
  INFO(r.text());
  REQUIRE(!r.r.ok());
  CHECK(r.last().kind == DiagKind::Race);
  CHECK(contains(r.last().message, "cp.async write"));
}
