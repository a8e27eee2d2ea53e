// sm_90 forms that need no asynchronous model: elect.sync, the cluster
// special registers, setmaxnreg, and the fence kinds the asynchronous model
// reads (fence.proxy.async, fence.mbarrier_init), and prefetch.
#include "ptx_helpers.hpp"

#include <algorithm>

using namespace tileverify;
using namespace ptx_test;

namespace {

const char* kHead = ".version 8.0\n.target sm_90a\n.address_size 64\n";

// k(float* y): y[tid] = value, where `body` computes %r9 (an integer) from
// %r1 = %tid.x; lanes that branch to END write nothing.
std::string kernel_storing(const std::string& body) {
  return std::string(kHead) +
         ".visible .entry k(.param .u64 y)\n{\n"
         "  .reg .b32 %r<10>;\n  .reg .b64 %rd<4>;\n  .reg .pred %p<4>;\n  .reg .f32 %f<2>;\n"
         "  ld.param.u64 %rd1, [y];\n  mov.u32 %r1, %tid.x;\n" +
         body +
         "  cvt.rn.f32.u32 %f1, %r9;\n"
         "  mul.wide.u32 %rd2, %r1, 4;\n  add.s64 %rd3, %rd1, %rd2;\n  st.global.f32 [%rd3], %f1;\n"
         "END:\n  ret;\n}\n";
}

std::vector<double> run_concrete(const Program& p, std::uint32_t block, std::uint32_t n, Launch l = {}) {
  l.block = Dim3{block, 1, 1};
  if (l.args.empty()) l.args.push_back(LaunchArg::of_tensor({"y", DType::F32, {n}, Role::Out}));
  ConcreteDomain dom;
  const auto r = run_program(p, l, dom);
  INFO((r.ok() ? "" : r.diagnostics[0].text()));
  REQUIRE(r.ok());
  std::vector<double> out;
  for (const auto& v : r.outputs.at("y")) out.push_back(v ? *v : -1.0);
  return out;
}

}  // namespace

TEST_CASE("elect.sync: every member gets the leader's lane, and only the leader a true predicate") {
  // PTX ISA, elect.sync: the leader is chosen deterministically from the
  // member mask; which one the ISA leaves open. A Hopper GPU elects the lowest
  // lane of 4096 masks (tools/gpu_checks/elect_check.cu, results/elect_check_h200.txt), as the evaluator does.
  // y[tid] = leader lane * 2 + (this lane is the leader).
  const Program p = lower_text(kernel_storing("  elect.sync %r2|%p1, 0xffffffff;\n"
                                              "  selp.u32 %r3, 1, 0, %p1;\n"
                                              "  shl.b32 %r4, %r2, 1;\n  add.u32 %r9, %r4, %r3;\n"));
  const std::vector<double> y = run_concrete(p, 64, 64);
  for (std::uint32_t t = 0; t < 64; ++t) CHECK(y[t] == (t % 32 == 0 ? 1 : 0));
}

TEST_CASE("elect.sync with a partial mask elects among its members; the sink discards the lane") {
  // Lanes 0-3 leave first; the others elect with mask 0xfffffff0: lane 4 leads.
  const Program p = lower_text(kernel_storing("  and.b32 %r5, %r1, 31;\n  setp.lt.u32 %p2, %r5, 4;\n  @%p2 bra END;\n"
                                              "  elect.sync _|%p1, 0xfffffff0;\n"
                                              "  selp.u32 %r9, 1, 0, %p1;\n"));
  const std::vector<double> y = run_concrete(p, 32, 32);
  for (std::uint32_t t = 0; t < 32; ++t) CHECK(y[t] == (t < 4 ? -1 : t == 4 ? 1 : 0));
}

TEST_CASE("elect.sync by a lane outside its own mask is a deadlock, as for the other .sync collectives") {
  const Program p = lower_text(kernel_storing("  elect.sync %r9|%p1, 0x0000ffff;\n"));
  Launch l;
  l.block = Dim3{32, 1, 1};
  l.args.push_back(LaunchArg::of_tensor({"y", DType::F32, {32}, Role::Out}));
  ConcreteDomain dom;
  const auto r = run_program(p, l, dom);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].kind == DiagKind::Deadlock);
  CHECK(r.diagnostics[0].message.find("not in the thread set of its own sync") != std::string::npos);
}

TEST_CASE("cluster special registers follow Launch::cluster, and a launch without clusters is clusters of one") {
  // y[tid] = one register, picked by tid: ctarank, nctarank, clusterid.x,
  // nclusterid.x, cluster_ctaid.x, cluster_nctaid.x, is_explicit_cluster.
  const std::string body =
      "  mov.u32 %r2, %cluster_ctarank;\n  mov.u32 %r3, %cluster_nctarank;\n  mov.u32 %r4, %clusterid.x;\n"
      "  mov.u32 %r5, %nclusterid.x;\n  mov.u32 %r6, %cluster_ctaid.x;\n  mov.u32 %r7, %cluster_nctaid.x;\n"
      "  mov.u32 %r8, %is_explicit_cluster;\n"
      "  setp.eq.u32 %p1, %r1, 0;\n  selp.u32 %r9, %r2, 0, %p1;\n"
      "  setp.eq.u32 %p1, %r1, 1;\n  @%p1 mov.u32 %r9, %r3;\n"
      "  setp.eq.u32 %p1, %r1, 2;\n  @%p1 mov.u32 %r9, %r4;\n"
      "  setp.eq.u32 %p1, %r1, 3;\n  @%p1 mov.u32 %r9, %r5;\n"
      "  setp.eq.u32 %p1, %r1, 4;\n  @%p1 mov.u32 %r9, %r6;\n"
      "  setp.eq.u32 %p1, %r1, 5;\n  @%p1 mov.u32 %r9, %r7;\n"
      "  setp.eq.u32 %p1, %r1, 6;\n  @%p1 mov.u32 %r9, %r8;\n";
  const Program p = lower_text(kernel_storing(body));
  Launch l;
  l.grid = Dim3{8, 1, 1};
  l.cta = Dim3{3, 0, 0};
  const std::vector<double> plain = run_concrete(p, 7, 7, l);
  CHECK(plain == std::vector<double>{0, 1, 3, 8, 0, 1, 0});
  // In a cluster launch the run is the whole cluster (CTAs 2 and 3), whose
  // CTAs store at y[32 rank + tid].
  const std::string at_rank = kernel_storing(body);
  const std::string store = "  mul.wide.u32 %rd2, %r1, 4;\n";
  REQUIRE(at_rank.find(store) != std::string::npos);
  const Program q = lower_text(std::string(at_rank).replace(
      at_rank.find(store), store.size(), "  shl.b32 %r5, %r2, 5;\n  add.u32 %r5, %r5, %r1;\n  mul.wide.u32 %rd2, %r5, 4;\n"));
  l.cluster = Dim3{2, 1, 1};
  l.args.push_back(LaunchArg::of_tensor({"y", DType::F32, {64}, Role::Out}));
  const std::vector<double> pairs = run_concrete(q, 32, 64, l);
  CHECK(std::vector<double>(pairs.begin(), pairs.begin() + 7) == std::vector<double>{0, 2, 1, 4, 0, 2, 1});
  CHECK(std::vector<double>(pairs.begin() + 32, pairs.begin() + 39) == std::vector<double>{1, 2, 1, 4, 1, 2, 1});
}

TEST_CASE("setmaxnreg and the fences the asynchronous model reads lower to fences of their kind") {
  const Program p = lower_text(std::string(kHead) +
                               ".visible .entry k()\n{\n"
                               "  setmaxnreg.inc.sync.aligned.u32 240;\n"
                               "  fence.proxy.async.shared::cta;\n"
                               "  fence.mbarrier_init.release.cluster;\n"
                               "  fence.sc.gpu;\n"
                               "  ret;\n}\n");
  std::vector<FenceKind> kinds;
  for (const Instr& in : p.code)
    if (in.op == Opcode::Fence) kinds.push_back(FenceKind(in.mode));
  CHECK(kinds == std::vector<FenceKind>{FenceKind::SetMaxNReg, FenceKind::ProxyAsync, FenceKind::MbarrierInit,
                                        FenceKind::Plain});
}

TEST_CASE("prefetch, prefetchu and prefetch.tensormap are cache hints: plain fences, values unchanged") {
  // CUTLASS's producer warp prefetches both TMA descriptors of its Params
  // (prefetch.tensormap through cvta.param) before the mainloop.
  const Program p = lower_text(kernel_storing("  mov.b64 %rd2, y;\n  cvta.param.u64 %rd3, %rd2;\n"
                                              "  prefetch.tensormap [%rd3];\n"
                                              "  prefetch.param.tensormap [y];\n"
                                              "  prefetch.global.L2 [%rd1];\n"
                                              "  prefetch.global.L2::evict_last [%rd1];\n"
                                              "  prefetchu.L1 [%rd1];\n"
                                              "  add.u32 %r9, %r1, 7;\n"));
  std::size_t hints = 0;
  for (const Instr& in : p.code) hints += in.op == Opcode::Fence && FenceKind(in.mode) == FenceKind::Plain;
  CHECK(hints == 5);
  const std::vector<double> y = run_concrete(p, 32, 32);
  for (std::uint32_t t = 0; t < 32; ++t) CHECK(y[t] == t + 7);
}

TEST_CASE("brkpt is a trap where a thread reaches it, and nothing where none does") {
  // On an H200 with no debugger attached, a thread that executes brkpt fails
  // the launch (tools/gpu_checks/results/brkpt_check_h200.txt); CUTLASS puts one on
  // paths that must never run (CUTE_INVALID_CONTROL_PATH).
  const std::string guarded = "  setp.eq.u32 %p1, %r1, THREAD;\n  @!%p1 bra SKIP;\n  brkpt;\nSKIP:\n  mov.u32 %r9, %r1;\n";
  auto with_thread = [&](const char* thread) {
    std::string body = guarded;
    body.replace(body.find("THREAD"), 6, thread);
    return lower_text(kernel_storing(body));
  };
  const std::vector<double> y = run_concrete(with_thread("99"), 32, 32);
  for (std::uint32_t t = 0; t < 32; ++t) CHECK(y[t] == t);

  Launch l;
  l.block = Dim3{32, 1, 1};
  l.args.push_back(LaunchArg::of_tensor({"y", DType::F32, {32}, Role::Out}));
  ConcreteDomain dom;
  const auto r = run_program(with_thread("5"), l, dom);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].kind == DiagKind::Trap);
  CHECK(r.diagnostics[0].threads == std::vector<std::uint32_t>{5});
  CHECK(r.diagnostics[0].message.find("breakpoint (brkpt") != std::string::npos);
  CHECK(r.diagnostics[0].detail.find("brkpt_check.cu") != std::string::npos);
}

TEST_CASE("prefetch and prefetchu are no-ops; an unknown qualifier is bad input, tensormap.replace unsupported") {
  // PTX ISA, "prefetch, prefetchu": a cache hint, which changes no value
  // (prefetch.tensormap brings a map in for a later cp.async.bulk.tensor).
  auto kernel = [](const std::string& body) {
    return std::string(kHead) + ".visible .entry k(.param .u64 p)\n{\n  .reg .b64 %rd<3>;\n  ld.param.u64 %rd1, [p];\n" +
           body + "  ret;\n}\n";
  };
  const Program p = lower_text(kernel("  prefetch.tensormap [%rd1];\n  prefetch.global.L2::evict_last [%rd1];\n"
                                      "  prefetch.L1 [%rd1+128];\n  prefetchu.L1 [%rd1];\n"));
  int fences = 0;
  for (const Instr& in : p.code)
    if (in.op == Opcode::Fence && FenceKind(in.mode) == FenceKind::Plain) ++fences;
  CHECK(fences == 4);
  ptx::Error e = lower_error_of(kernel("  prefetch.global.L3 [%rd1];\n"), "k");
  CHECK(e.message.find("unknown qualifier .L3") != std::string::npos);
  e = lower_error_of(kernel("  prefetch.tensormap %rd1;\n"), "k");
  CHECK(e.message.find("expects an address") != std::string::npos);
  e = lower_error_of(kernel("  mov.u64 %rd2, 0;\n  tensormap.replace.tile.global_address.global.b1024.b64 [%rd1], %rd2;\n"), "k");
  CHECK(e.message.find("it rewrites a tensor map in memory") != std::string::npos);
}
