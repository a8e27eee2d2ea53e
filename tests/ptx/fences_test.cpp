// membar and fence: every form the PTX ISA documents lowers to a Fence, which
// orders nothing between threads (docs/evaluator.md, "Fences"); qualifiers
// outside those forms are bad input at the qualifier's column. nvcc's own
// fences are in tests/cases/fences (threadfence.cu, atomic_thread_fence.cu,
// proxy.cu), whose specs check the verdicts.
#include "ptx_helpers.hpp"

#include <algorithm>

using namespace tileverify;
using namespace ptx_test;

namespace {

// A kernel whose line 9 is `stmt` (written from column 3), with a 64-bit
// register %rd1 holding its parameter.
std::string kernel_with(const std::string& stmt) {
  return ".version 9.0\n.target sm_90a\n.address_size 64\n"
         ".visible .entry k(.param .u64 p)\n{\n"
         "  .reg .b64 %rd<2>;\n"
         "  .reg .pred %p<2>;\n"
         "  ld.param.u64 %rd1, [p];\n"
         "  " + stmt + "\n"
         "  ret;\n}\n";
}

std::size_t fences_in(const Program& p) {
  return std::size_t(std::count_if(p.code.begin(), p.code.end(), [](const Instr& in) { return in.op == Opcode::Fence; }));
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("every documented membar and fence form lowers to a Fence") {
  // PTX ISA 9.0, "Parallel Synchronization and Communication Instructions:
  // membar/fence": the syntax block, one line per form here.
  const char* forms[] = {
      "membar.cta;", "membar.gl;", "membar.sys;", "membar.proxy.alias;",
      "fence.cta;", "fence.cluster;", "fence.gpu;", "fence.sys;",  // .sem absent: .acq_rel
      "fence.sc.cta;", "fence.sc.cluster;", "fence.sc.gpu;", "fence.sc.sys;",
      "fence.acq_rel.cta;", "fence.acq_rel.cluster;", "fence.acq_rel.gpu;", "fence.acq_rel.sys;",
      "fence.acquire.gpu;", "fence.release.cta;",
      "fence.acquire.sync_restrict::shared::cluster.cluster;", "fence.release.sync_restrict::shared::cta.cluster;",
      "fence.mbarrier_init.release.cluster;",
      "fence.proxy.alias;", "fence.proxy.async;", "fence.proxy.async.global;", "fence.proxy.async.shared::cta;",
      "fence.proxy.async.shared::cluster;",
      "fence.proxy.tensormap::generic.release.cta;", "fence.proxy.tensormap::generic.release.sys;",
      "fence.proxy.tensormap::generic.acquire.gpu [%rd1], 128;",
      "fence.proxy.tensormap::generic.acquire.cluster [p], 128;",
      "fence.proxy.async::generic.acquire.sync_restrict::shared::cluster.cluster;",
      "fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster;",
      "@%p1 membar.gl;",
  };
  for (const char* form : forms) {
    INFO(form);
    const Program p = lower_text(kernel_with(form));
    REQUIRE(fences_in(p) == 1);
    const Instr& fence = *std::find_if(p.code.begin(), p.code.end(), [](const Instr& in) { return in.op == Opcode::Fence; });
    CHECK(fence.src.empty());  // it reads nothing, the tensormap acquire's [addr] included
    CHECK(fence.dst.empty());
    CHECK(fence.loc.line == 9);
    CHECK(has(p.listing(), "fence"));
  }
}

TEST_CASE("nvcc's fences lower: __threadfence*, cuda::atomic_thread_fence, sm_90 proxy and cluster fences") {
  CHECK(fences_in(lower_file("../cases/fences/threadfence.ptx", "threadfence_barrier")) == 3);
  CHECK(fences_in(lower_file("../cases/fences/threadfence.ptx", "threadfence_only")) == 3);
  CHECK(fences_in(lower_file("../cases/fences/atomic_thread_fence.ptx", "thread_fence_barrier")) == 6);
  CHECK(fences_in(lower_file("../cases/fences/atomic_thread_fence.ptx", "seq_cst_fence_only")) == 1);
  CHECK(fences_in(lower_file("../cases/fences/proxy.ptx", "proxy_fence_barrier")) == 8);
  CHECK(fences_in(lower_file("../cases/fences/proxy.ptx", "proxy_fence_only")) == 1);
}

TEST_CASE("a fence orders nothing between threads, and keeps a thread's own order") {
  // Thread t writes s[t]; after a fence, it reads s[t] (its own write: fine)
  // or s[t ^ 1] (its neighbour's: a race, fence or not).
  auto kernel = [](const char* index) {
    return ".version 9.0\n.target sm_80\n.address_size 64\n"
           ".visible .entry k(.param .u64 x, .param .u64 y)\n{\n"
           "  .reg .b32 %r<8>;\n  .reg .b64 %rd<6>;\n  .reg .f32 %f<3>;\n"
           "  .shared .align 4 .f32 s[64];\n"
           "  ld.param.u64 %rd1, [x];\n  ld.param.u64 %rd2, [y];\n"
           "  mov.u32 %r1, %tid.x;\n  mul.wide.u32 %rd3, %r1, 4;\n"
           "  add.s64 %rd4, %rd1, %rd3;\n  ld.global.f32 %f1, [%rd4];\n"
           "  mov.u32 %r2, s;\n  shl.b32 %r3, %r1, 2;\n  add.s32 %r4, %r2, %r3;\n"
           "  st.shared.f32 [%r4], %f1;\n"
           "  fence.sc.gpu;\n  membar.cta;\n  fence.proxy.async;\n" +
           std::string("  xor.b32 %r5, %r1, ") + index + ";\n" +
           "  shl.b32 %r6, %r5, 2;\n  add.s32 %r7, %r2, %r6;\n"
           "  ld.shared.f32 %f2, [%r7];\n"
           "  add.s64 %rd5, %rd2, %rd3;\n  st.global.f32 [%rd5], %f2;\n"
           "  ret;\n}\n";
  };
  const Launch l = launch_of(64, {tensor("x", DType::F32, 64, Role::In), tensor("y", DType::F32, 64, Role::Out)});
  ConcreteDomain dom;
  const auto own = run_program(lower_text(kernel("0")), l, dom);
  INFO((own.ok() ? "" : own.diagnostics[0].text()));
  CHECK(own.ok());
  const auto neighbour = run_program(lower_text(kernel("1")), l, dom);
  REQUIRE(neighbour.diagnostics.size() == 1);
  CHECK(neighbour.diagnostics[0].kind == DiagKind::Race);
}

TEST_CASE("a misspelt or missing fence qualifier is bad input at its column") {
  struct Bad {
    const char* stmt;
    std::uint32_t column;  // statement from column 3
    const char* message;
  };
  const Bad bad[] = {
      {"fence.sc.gpus;", 11, "unknown qualifier '.gpus' in 'fence.sc.gpus': after 'fence.sc' comes .cta, .cluster, .gpu or .sys (PTX ISA, membar/fence)"},
      {"membar.glob;", 9, "unknown qualifier '.glob' in 'membar.glob': after 'membar' comes .cta, .gl, .sys or .proxy (PTX ISA, membar/fence)"},
      {"fence.proxy.asink;", 14, "unknown qualifier '.asink' in 'fence.proxy.asink': after 'fence.proxy' comes .alias, .async, .tensormap::generic or .async::generic (PTX ISA, membar/fence)"},
      {"fence.proxy.async.shared::cta.global;", 32, "unknown qualifier '.global'"},
      {"fence.relaxed.gpu;", 8, "unknown qualifier '.relaxed'"},
      {"fence.sc.cta.gpu;", 15, "unknown qualifier '.gpu' in 'fence.sc.cta.gpu': nothing comes after 'fence.sc.cta' (PTX ISA, membar/fence)"},
      {"fence.sc;", 3, "'fence.sc' is incomplete: after 'fence.sc' comes .cta, .cluster, .gpu or .sys (PTX ISA, membar/fence)"},
      {"membar;", 3, "'membar' is incomplete: after 'membar' comes .cta, .gl, .sys or .proxy"},
      {"fence.proxy.tensormap::generic.acquire.gpu;", 3, "'fence.proxy.tensormap::generic.acquire.gpu' takes 2 operands, not 0"},
      {"fence.sc.gpu %rd1;", 3, "'fence.sc.gpu' takes 0 operands, not 1"},
      {"fence.proxy.tensormap::generic.acquire.gpu [%rd1], 64;", 54, "the size operand of 'fence.proxy.tensormap::generic.acquire.gpu' must be 128"},
      {"fence.proxy.tensormap::generic.acquire.gpu [%rd7], 128;", 46, "'%rd7' in an address is not a declared register"},
  };
  for (const Bad& b : bad) {
    INFO(b.stmt);
    const ptx::Error e = lower_error_of(kernel_with(b.stmt), "k");
    INFO(e.text());
    CHECK(has(e.message, b.message));
    CHECK(!e.unsupported);  // ptxas refuses each of these: malformed PTX, not an unsupported construct
    CHECK(e.loc.file == "t.ptx");
    CHECK(e.loc.line == 9);
    CHECK(e.loc.column == b.column);
  }
  // As printed: file:line:column first.
  CHECK(lower_error_of(kernel_with("fence.sc.gpus;"), "k").text().rfind("t.ptx:9:11: error: unknown qualifier '.gpus'", 0) == 0);
}
