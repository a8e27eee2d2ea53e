// Clusters of several CTAs (docs/evaluator.md, "Clusters"): a run holds
// every CTA of the cluster, each with its own shared memory; mapa and
// .shared::cluster accesses reach another CTA's, barrier.cluster orders
// them, remote mbarrier arrives land on the peer's barrier, and every
// access to a CTA's shared memory must come before that CTA exits.
// Kernels are PTX text (sm_90a) on a cluster of two CTAs of one warp each.
#include "../ptx/ptx_helpers.hpp"

#include <cstdint>
#include <string>
#include <vector>

using namespace tileverify;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string kernel(const std::string& body) {
  return ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 x, .param .u64 y)\n{\n"
         "  .reg .pred %p<16>;\n  .reg .b32 %r<64>;\n  .reg .b64 %rd<32>;\n  .reg .f32 %f<16>;\n"
         "  .shared .align 8 .b64 bar[1];\n  .shared .align 16 .f32 buf[32];\n"
         // %rd1 = x, %rd2 = y, %r1 = tid, %r2 = &bar, %r3 = rank, %r4 = &buf, %r5 = 4 tid,
         // %r6 = the peer's rank, %rd3 = 4 (32 rank + tid): this thread's element of the cluster.
         "  ld.param.u64 %rd10, [x];\n  cvta.to.global.u64 %rd1, %rd10;\n  ld.param.u64 %rd11, [y];\n"
         "  cvta.to.global.u64 %rd2, %rd11;\n  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, bar;\n"
         "  mov.u32 %r3, %cluster_ctarank;\n  mov.u32 %r4, buf;\n  shl.b32 %r5, %r1, 2;\n  xor.b32 %r6, %r3, 1;\n"
         "  shl.b32 %r7, %r3, 5;\n  add.s32 %r7, %r7, %r1;\n  mul.wide.u32 %rd3, %r7, 4;\n" +
         body + "}\n";
}

struct Run {
  ExprContext ctx;
  RunResult<SymbolicDomain> r;
  std::string text() const {
    std::string s;
    for (const Diagnostic& d : r.diagnostics) s += d.text() + "\n";
    return s;
  }
  bool output_is(std::size_t i, std::uint32_t j) {
    auto it = r.outputs.find("y");
    if (it == r.outputs.end() || i >= it->second.size() || !it->second[i]) return false;
    return *it->second[i] == ctx.symbol("x", j);
  }
};

// Two CTAs of 32 threads in one cluster (the second CTA is the run's `cta`:
// a run covers the cluster that holds it); x and y of 64 floats.
Launch pair() {
  Launch l;
  l.block = Dim3{32, 1, 1};
  l.grid = Dim3{2, 1, 1};
  l.cluster = Dim3{2, 1, 1};
  l.cta = Dim3{1, 0, 0};
  l.args = {LaunchArg::of_tensor({"x", DType::F32, {64}, Role::In}), LaunchArg::of_tensor({"y", DType::F32, {64}, Role::Out})};
  return l;
}

void run(Run& out, const std::string& body, const Launch& l = pair()) {
  Program p = ptx_test::lower_text(kernel(body));
  SymbolicDomain dom(out.ctx);
  out.r = run_program(p, l, dom);
}

const char* kClusterSync = "  barrier.cluster.arrive;\n  barrier.cluster.wait;\n";

// Each CTA stages its half of x in buf, then reads its peer's buf through
// mapa (`read`: the load, from %r9) into its half of y.
std::string exchange(const std::string& first_sync, const std::string& address, const std::string& read,
                     const std::string& last_sync) {
  return "  add.s64 %rd4, %rd1, %rd3;\n  ld.global.f32 %f1, [%rd4];\n  add.s32 %r8, %r4, %r5;\n"
         "  st.shared.f32 [%r8], %f1;\n" +
         first_sync + address + read + "  add.s64 %rd5, %rd2, %rd3;\n  st.global.f32 [%rd5], %f2;\n" + last_sync +
         "  ret;\n";
}

const char* kMapaPtr = "  mapa.shared::cluster.u32 %r9, %r8, %r6;\n";
// The same through an integer .shared address (bit arithmetic on the pointer).
const char* kMapaInt = "  or.b32 %r10, %r8, 0;\n  mapa.shared::cluster.u32 %r9, %r10, %r6;\n";
const char* kReadCluster = "  ld.shared::cluster.f32 %f2, [%r9];\n";

}  // namespace

TEST_CASE("clusters: each CTA reads its peer's shared memory through mapa between cluster barriers") {
  for (const char* address : {kMapaPtr, kMapaInt}) {
    Run r;
    run(r, exchange(kClusterSync, address, kReadCluster, kClusterSync));
    INFO(r.text());
    REQUIRE(r.r.ok());
    for (std::uint32_t i = 0; i < 64; ++i) CHECK(r.output_is(i, (i + 32) % 64));
  }
}

TEST_CASE("clusters: the CTAs' special registers, and a grid runs one cluster per run") {
  Run r;
  run(r, "  mov.u32 %r20, %ctaid.x;\n  mov.u32 %r21, %cluster_ctaid.x;\n  mov.u32 %r22, %clusterid.x;\n"
         "  mov.u32 %r23, %nclusterid.x;\n  mov.u32 %r24, %cluster_nctarank;\n"
         "  mad.lo.u32 %r25, %r20, 1000, %r21;\n  mad.lo.u32 %r25, %r22, 100, %r25;\n  mad.lo.u32 %r25, %r23, 10, %r25;\n"
         "  add.u32 %r25, %r25, %r24;\n  cvt.rn.f32.u32 %f2, %r25;\n"
         "  add.s64 %rd5, %rd2, %rd3;\n  st.global.f32 [%rd5], %f2;\n  ret;\n");
  INFO(r.text());
  REQUIRE(r.r.ok());
  const auto& y = r.r.outputs.at("y");
  // CTA 0: ctaid 0, rank 0; CTA 1: ctaid 1, rank 1; both cluster 0 of 1, 2 CTAs a cluster.
  CHECK(*y[0] == r.ctx.constant(Rational(0 * 1000 + 0 * 100 + 1 * 10 + 2)));
  CHECK(*y[32] == r.ctx.constant(Rational(1 * 1000 + 1 + 0 * 100 + 1 * 10 + 2)));
}

TEST_CASE("clusters: a peer's shared memory read before the barrier that orders its write is a race") {
  Run r;
  run(r, exchange("", kMapaPtr, kReadCluster, kClusterSync));
  INFO(r.text());
  REQUIRE(!r.r.ok());
  CHECK(r.r.diagnostics.back().kind == DiagKind::Race);
  CHECK(contains(r.r.diagnostics.back().message, "buf@rank"));
  // The run numbers threads across the cluster (thread 32 is thread 0 of
  // rank 1): reports name each by its CTA, cluster and rank.
  CHECK(r.r.diagnostics.back().message ==
        "data race on 4 bytes at shared buf@rank1+0 between thread 0 of CTA (0,0,0), cluster (0,0,0) rank 0 (read) and "
        "thread 0 of CTA (1,0,0), cluster (0,0,0) rank 1 (write)");
  CHECK(r.r.diagnostics.back().threads == std::vector<std::uint32_t>{0, 32});
  CHECK(contains(r.r.diagnostics.back().text(), "later   write by thread 0 of CTA (1,0,0), cluster (0,0,0) rank 1 at "));
}

TEST_CASE("clusters: without a cluster barrier before the exit, a CTA can exit while its peer reads its memory") {
  Run r;
  run(r, exchange(kClusterSync, kMapaPtr, kReadCluster, ""));
  INFO(r.text());
  REQUIRE(!r.r.ok());
  const Diagnostic& d = r.r.diagnostics.back();
  CHECK(d.kind == DiagKind::Race);
  CHECK(contains(d.message, "can exit before the access of thread"));
  CHECK(contains(d.detail, "Distributed"));
  REQUIRE(d.accesses.size() == 1);
  CHECK(contains(d.accesses[0].instr, "ld"));
}

TEST_CASE("clusters: a .shared::cta access through a mapped address, or mapa to no CTA, is out of bounds") {
  Run cta;
  run(cta, exchange(kClusterSync, kMapaPtr, "  ld.shared.f32 %f2, [%r9];\n", kClusterSync));
  INFO(cta.text());
  REQUIRE(!cta.r.ok());
  CHECK(cta.r.diagnostics.back().kind == DiagKind::OutOfBounds);
  CHECK(contains(cta.r.diagnostics.back().message, "a .shared::cta access to the shared memory of CTA rank"));
  Run integer;  // the same through the shared window's integer address
  run(integer, exchange(kClusterSync, kMapaInt, "  ld.shared.f32 %f2, [%r9];\n", kClusterSync));
  INFO(integer.text());
  REQUIRE(!integer.r.ok());
  CHECK(integer.r.diagnostics.back().kind == DiagKind::OutOfBounds);
  Run far;
  run(far, exchange(kClusterSync, "  mapa.shared::cluster.u32 %r9, %r8, 2;\n", kReadCluster, kClusterSync));
  INFO(far.text());
  REQUIRE(!far.r.ok());
  CHECK(far.r.diagnostics.back().kind == DiagKind::OutOfBounds);
  CHECK(contains(far.r.diagnostics.back().message, "mapa to CTA rank 2 of a cluster of 2 CTAs"));
}

namespace {

// CTA 1 writes its half of x into CTA 0's buf and arrives on CTA 0's bar
// (`arrive_at`: %r11, the peer's bar, or %r2, its own); CTA 0 waits on its
// bar and copies buf into y[0..31]. `after_init`: what orders each CTA's
// mbarrier.init before the peer's use.
std::string remote_arrive(const std::string& after_init, const std::string& arrive_at) {
  return "  setp.ne.s32 %p1, %r1, 0;\n  @%p1 bra INITED;\n  mbarrier.init.shared::cta.b64 [%r2], 32;\n"
         "  fence.mbarrier_init.release.cluster;\n"
         "INITED:\n" +
         after_init +
         "  setp.eq.s32 %p2, %r3, 0;\n  @%p2 bra WAITER;\n"
         "  add.s64 %rd4, %rd1, %rd3;\n  ld.global.f32 %f1, [%rd4];\n  add.s32 %r8, %r4, %r5;\n"
         "  mapa.shared::cluster.u32 %r9, %r8, 0;\n  st.shared::cluster.f32 [%r9], %f1;\n"
         "  mapa.shared::cluster.u32 %r11, %r2, 0;\n"
         "  mbarrier.arrive.release.cluster.shared::cluster.b64 _, [" +
         arrive_at +
         "];\n  ret;\n"
         "WAITER:\n  mov.u32 %r10, 0;\n"
         "WAIT:\n  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], %r10;\n  @!%p3 bra WAIT;\n"
         "  add.s32 %r8, %r4, %r5;\n  ld.shared.f32 %f2, [%r8];\n"
         "  add.s64 %rd5, %rd2, %rd3;\n  st.global.f32 [%rd5], %f2;\n  ret;\n";
}

}  // namespace

TEST_CASE("clusters: remote arrives complete the peer's mbarrier phase, whose wait orders the peer's writes") {
  Run r;
  run(r, remote_arrive(kClusterSync, "%r11"));
  INFO(r.text());
  REQUIRE(r.r.ok());
  for (std::uint32_t i = 0; i < 32; ++i) CHECK(r.output_is(i, 32 + i));
  // No cluster barrier before the exit is needed here: CTA 0 exits after
  // its wait, which the remote writes and arrives come before.
}

TEST_CASE("clusters: a remote arrive that nothing orders after the peer's mbarrier.init is a race") {
  Run r;
  run(r, remote_arrive("", "%r11"));
  INFO(r.text());
  REQUIRE(!r.r.ok());
  const Diagnostic& d = r.r.diagnostics.back();
  CHECK(d.kind == DiagKind::Race);
  CHECK(contains(d.message, "bar@rank0"));
}

TEST_CASE("clusters: fence.mbarrier_init then a relaxed cluster arrive publishes the inits to the peers' waits") {
  // CUTLASS's prologue (cluster_arrive_relaxed after the pipelines' inits):
  // the fence covers the inits for a relaxed arrive (PTX ISA, membar/fence).
  const char* relaxed = "  barrier.cluster.arrive.relaxed;\n  barrier.cluster.wait;\n";
  Run r;
  run(r, remote_arrive(relaxed, "%r11"));
  INFO(r.text());
  REQUIRE(r.r.ok());
  for (std::uint32_t i = 0; i < 32; ++i) CHECK(r.output_is(i, 32 + i));
  // Without the fence, a relaxed arrive orders nothing: the init races.
  std::string unfenced = remote_arrive(relaxed, "%r11");
  const std::string fence = "  fence.mbarrier_init.release.cluster;\n";
  unfenced.erase(unfenced.find(fence), fence.size());
  Run u;
  run(u, unfenced);
  REQUIRE(!u.r.ok());
  CHECK(u.r.diagnostics.back().kind == DiagKind::Race);
  CHECK(contains(u.r.diagnostics.back().message, "mbarrier.init"));
}

TEST_CASE("clusters: arrivals on the wrong CTA's barrier leave the waiters of the other one in a deadlock") {
  Run r;
  run(r, remote_arrive(kClusterSync, "%r2"));
  INFO(r.text());
  REQUIRE(!r.r.ok());
  const Diagnostic& d = r.r.diagnostics.back();
  CHECK(d.kind == DiagKind::Deadlock);
  CHECK(contains(d.text(), "bar@rank0"));
  // The waiting threads by CTA, numbered within it, not by their number in
  // the cluster's run.
  CHECK(contains(d.text(), "\n  threads 0-31 of CTA (0,0,0) wait at t.ptx:45:3 (mbarrier.wait.b64 "));
}

TEST_CASE("reports name a cluster's threads by CTA, cluster and rank") {
  ThreadNames n;
  n.per_cta = 128;
  n.ctas = {{Dim3{0, 0, 0}, true, Dim3{0, 0, 0}, 0}, {Dim3{0, 1, 0}, true, Dim3{0, 0, 0}, 1}};
  CHECK(n.one(133) == "5 of CTA (0,1,0), cluster (0,0,0) rank 1");
  CHECK(n.list({0, 1, 2, 128, 129, 200}) == "0-2 of CTA (0,0,0) and 0-1, 72 of CTA (0,1,0)");
  CHECK(n.list({130}) == "2 of CTA (0,1,0)");
  n.ctas[1].in_cluster = false;  // two CTAs of a grid without clusters
  CHECK(n.one(133) == "5 of CTA (0,1,0)");
  CHECK(ThreadNames{}.one(133) == "133");  // one CTA: its threads by number
  CHECK(ThreadNames{}.list({3, 1, 2, 7}) == "1-3, 7");
}

TEST_CASE("clusters: a CTA barrier (bar.sync) waits for its own CTA's threads only") {
  // CTA 1 skips its bar.sync; CTA 0's completes with its own 32 threads.
  Run r;
  run(r, "  setp.eq.s32 %p2, %r3, 1;\n  @%p2 bra OUT;\n  bar.sync 0;\n"
         "  add.s64 %rd4, %rd1, %rd3;\n  ld.global.f32 %f2, [%rd4];\n  add.s64 %rd5, %rd2, %rd3;\n"
         "  st.global.f32 [%rd5], %f2;\nOUT:\n  ret;\n");
  INFO(r.text());
  REQUIRE(r.r.ok());
  CHECK(r.r.notes.empty());  // no barrier divergence: CTA 1's threads are not CTA 0's
  for (std::uint32_t i = 0; i < 32; ++i) CHECK(r.output_is(i, i));
}

TEST_CASE("clusters: a launch of CTAs that are not whole warps, or a grid of part of a cluster, is refused") {
  Launch odd = pair();
  odd.block = Dim3{48, 1, 1};
  Run r;
  run(r, "  ret;\n", odd);
  REQUIRE(!r.r.ok());
  CHECK(r.r.diagnostics.back().kind == DiagKind::Unsupported);
  CHECK(contains(r.r.diagnostics.back().message, "whole warps"));
  Launch part = pair();
  part.grid = Dim3{3, 1, 1};
  Run p;
  run(p, "  ret;\n", part);
  REQUIRE(!p.r.ok());
  CHECK(p.r.diagnostics.back().kind == DiagKind::BadLaunch);
}
