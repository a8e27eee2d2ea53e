// The mbarrier rules GPUs enforce beyond the PTX ISA's counting
// (docs/evaluator.md, "mbarrier rules the hardware enforces";
// src/eval/machine_mbarrier_rules.cpp): a converged warp's arrives land as
// one arrival, which must not exceed the phase's pending count (measured on
// an H200: tools/gpu_checks/mbarrier_overshoot.cu), and mbarrier.init is
// fenced before a copy completes on the barrier through the async proxy.
// The arrival cases are the measured table's rows.
#include "tileverify/eval.hpp"
#include "tileverify/ptx.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace tileverify;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

RunResult<ConcreteDomain> run_text(const std::string& body, std::uint32_t threads, RunOptions o = {},
                                   const std::string& decls = "") {
  const std::string text = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 x)\n{\n"
                           "  .reg .pred %p<8>;\n  .reg .b32 %r<32>;\n  .reg .b64 %rd<8>;\n"
                           "  .shared .align 8 .b64 bar;\n  .shared .align 128 .f32 buf[64];\n" +
                           decls + body + "}\n";
  auto parsed = ptx::parse_ptx(text, "k.ptx");
  INFO((parsed.error ? parsed.error->text() : std::string()));
  REQUIRE(parsed.module.has_value());
  auto lowered = ptx::lower_kernel(*parsed.module, "k");
  INFO((lowered.error ? lowered.error->text() : std::string()));
  REQUIRE(lowered.program.has_value());
  Launch l;
  l.block = Dim3{threads, 1, 1};
  l.args = {LaunchArg::of_tensor({"x", DType::F32, {64}, Role::In})};
  ConcreteDomain dom;
  dom.inputs["x"] = std::vector<double>(64, 1.0);
  return run_program(*lowered.program, l, dom, o);
}

// Thread 0 initialises the barrier for `count`; then `arrive` runs in every
// thread (%r1 = tid, %r3 = lane); nobody waits, as in the GPU probe.
std::string arrivals(int count, const std::string& arrive) {
  return "  mov.u32 %r1, %tid.x;\n  and.b32 %r3, %r1, 31;\n  mov.u32 %r2, bar;\n  setp.ne.s32 %p1, %r1, 0;\n"
         "  @%p1 bra INITED;\n  mbarrier.init.shared::cta.b64 [%r2], " +
         std::to_string(count) +
         ";\nINITED:\n  bar.sync 0;\n" + arrive + "  bar.sync 0;\n  ret;\n";
}

const char* kConverged = "  mbarrier.arrive.shared::cta.b64 _, [%r2];\n";
// The lanes one at a time: for l in 0..31 { if (l == lane) arrive; __syncwarp(); }
const char* kSerial =
    "  mov.u32 %r4, 0;\nLOOP:\n  setp.ne.s32 %p2, %r4, %r3;\n  @%p2 bra SKIP;\n"
    "  mbarrier.arrive.shared::cta.b64 _, [%r2];\nSKIP:\n  bar.warp.sync -1;\n  add.s32 %r4, %r4, 1;\n"
    "  setp.lt.u32 %p3, %r4, 32;\n  @%p3 bra LOOP;\n";

bool traps(const RunResult<ConcreteDomain>& r) {
  return !r.ok() && r.diagnostics.back().kind == DiagKind::Trap;
}

}  // namespace

TEST_CASE("a converged warp's arrives land as one: 4 warps on a count of 127 fault, on 128, 96 or 64 they do not") {
  auto r = run_text(arrivals(127, kConverged), 128);
  REQUIRE(traps(r));
  const Diagnostic& d = r.diagnostics.back();
  INFO(d.text());
  CHECK(contains(d.message, "the lanes of warp 3 arrive on bar[0] at one instruction"));
  CHECK(contains(d.message, "run past the end of phase 0"));
  CHECK(contains(d.message, "on a GPU this faults"));
  CHECK(contains(d.detail, "unspecified launch failure"));
  for (int ok : {128, 96, 64, 129, 160, 256}) {
    INFO("count " << ok);
    CHECK(run_text(arrivals(ok, kConverged), 128).ok());
  }
  for (int bad : {97, 100, 126}) {
    INFO("count " << bad);
    CHECK(traps(run_text(arrivals(bad, kConverged), 128)));
  }
}

TEST_CASE("one warp: counts 16, 30, 31 fault converged and not lane by lane under __syncwarp") {
  for (int count : {16, 30, 31}) {
    INFO("count " << count);
    CHECK(traps(run_text(arrivals(count, kConverged), 32)));
    auto serial = run_text(arrivals(count, kSerial), 32);
    INFO((serial.ok() ? std::string() : serial.diagnostics.back().text()));
    CHECK(serial.ok());
  }
  for (int count : {32, 33, 64}) CHECK(run_text(arrivals(count, kConverged), 32).ok());
}

TEST_CASE("part of a warp arriving converged is one arrival of its lanes") {
  const std::string partial = "  setp.lt.u32 %p2, %r3, LANES;\n  @%p2 mbarrier.arrive.shared::cta.b64 _, [%r2];\n";
  auto lanes = [&](int n) {
    std::string s = partial;
    s.replace(s.find("LANES"), 5, std::to_string(n));
    return s;
  };
  CHECK(run_text(arrivals(16, lanes(16)), 32).ok());
  CHECK(traps(run_text(arrivals(16, lanes(17)), 32)));
  CHECK(traps(run_text(arrivals(30, lanes(20)), 64)));
  CHECK(run_text(arrivals(40, lanes(20)), 64).ok());
}

TEST_CASE("an arrive whose own count exceeds the pending count, and an init count of 0, fault") {
  const std::string count2 = "  mbarrier.arrive.shared::cta.b64 _, [%r2], 2;\n";
  CHECK(run_text(arrivals(64, count2), 32).ok());
  CHECK(traps(run_text(arrivals(40, count2), 32)));
  CHECK(traps(run_text(arrivals(63, count2), 32)));
  const std::string single5 = "  @%p1 bra NOPE;\n  mbarrier.arrive.shared::cta.b64 _, [%r2], 5;\nNOPE:\n";
  auto one = run_text(arrivals(4, single5), 32);
  REQUIRE(traps(one));
  CHECK(contains(one.diagnostics.back().message, "has only 4 arrivals pending"));
  auto zero = run_text(arrivals(0, kConverged), 32);
  REQUIRE(traps(zero));
  CHECK(contains(zero.diagnostics.back().message, "mbarrier.init with count 0"));
}

TEST_CASE("one elected lane per warp arriving for the warp is one arrival each") {
  // The usual fix: elect.sync picks a lane, which arrives once per warp; 4 warps on a count of 4.
  const std::string elected = "  elect.sync %r5|%p2, 0xffffffff;\n  @%p2 mbarrier.arrive.shared::cta.b64 _, [%r2];\n";
  CHECK(run_text(arrivals(4, elected), 128).ok());
  CHECK(run_text(arrivals(2, elected), 128).ok());  // two phases of two warps each
}

namespace {

// Thread 0: init (count 1), FENCE, bar.sync; thread 0 arrives with
// expect_tx and bulk-copies x into buf; everyone waits for phase 0.
std::string bulk_after(const std::string& fence) {
  return "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, bar;\n  mov.u32 %r4, buf;\n  ld.param.u64 %rd1, [x];\n"
         "  cvta.to.global.u64 %rd2, %rd1;\n  setp.ne.s32 %p1, %r1, 0;\n  @%p1 bra INITED;\n"
         "  mbarrier.init.shared::cta.b64 [%r2], 1;\n" +
         fence +
         "INITED:\n  bar.sync 0;\n  @%p1 bra ISSUED;\n"
         "  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 256;\n"
         "  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r4], [%rd2], 256, [%r2];\n"
         "ISSUED:\n  mov.u32 %r10, 0;\nWAIT:\n  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], %r10;\n"
         "  @!%p3 bra WAIT;\n  ret;\n";
}

}  // namespace

TEST_CASE("mbarrier.init not fenced before a copy completes on it: a warning saying both, a race under --strict") {
  auto plain = run_text(bulk_after(""), 32);
  REQUIRE(plain.ok());
  REQUIRE(plain.notes.size() == 1);
  CHECK(plain.notes[0].kind == DiagKind::Undefined);
  CHECK(plain.notes[0].warning);
  CHECK(contains(plain.notes[0].message, "no fence.proxy.async or fence.mbarrier_init orders before the copy"));
  CHECK(contains(plain.notes[0].detail, "Triton 3.6 emits neither"));
  RunOptions strict;
  strict.strict = true;
  auto s = run_text(bulk_after(""), 32, strict);
  REQUIRE(!s.ok());
  CHECK(s.diagnostics.back().kind == DiagKind::Race);
  for (const char* fence : {"  fence.proxy.async.shared::cta;\n", "  fence.mbarrier_init.release.cluster;\n"}) {
    INFO(fence);
    auto f = run_text(bulk_after(fence), 32, strict);
    INFO((f.ok() ? std::string() : f.diagnostics.back().text()));
    CHECK(f.ok());
    CHECK(f.notes.empty());
  }
  // A fence before the init does not count.
  std::string early = bulk_after("");
  early.insert(early.find("  mbarrier.init"), "  fence.proxy.async.shared::cta;\n");
  CHECK(!run_text(early, 32, strict).ok());
}
