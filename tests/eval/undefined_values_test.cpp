// Registers read before any write hold a marked undefined value, reported
// `uninitialized` only where it shows (an output, an address, a branch, a
// lane or mask); and pointer arithmetic in the integer forms compilers emit
// (mad.wide with a pointer addend, pointer comparisons). The PTX is written
// the way Triton 3.6 writes it for sm_80 (examples/triton).
#include "tileverify/eval.hpp"
#include "tileverify/ptx.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace tileverify;

namespace {

// Lanes 0-3 load a partial maximum (predicated ld.shared); all 32 lanes run
// a butterfly reduction over it, whose upper lanes read registers of lanes
// that never loaded; lane 0 alone stores the result. `use` replaces the
// final store: "store" (lane 0 only: fine), "all" (every lane stores its own
// value: lanes 4-31 store undefined data), "branch" (every lane branches on
// it), "address" (every lane indexes with the raw bits).
std::string reduce_ptx(const std::string& use) {
  std::string body = R"(
.version 8.7
.target sm_80
.address_size 64
.extern .shared .align 16 .b8 global_smem[];
.visible .entry red(.param .u64 x, .param .u64 y)
.reqntid 32
{
  .reg .pred %p<4>;
  .reg .b32 %r<20>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<8>;
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [y];
  mov.u32 %r1, %tid.x;
  mad.wide.s32 %rd3, %r1, 4, %rd1;
  ld.global.b32 %r2, [%rd3];
  mov.u32 %r3, global_smem;
  shl.b32 %r4, %r1, 2;
  add.s32 %r5, %r3, %r4;
  st.shared.b32 [%r5], %r2;
  bar.sync 0;
  setp.lt.s32 %p1, %r1, 4;
  @%p1 ld.shared.b32 %r6, [%r5];
  shfl.sync.bfly.b32 %r7, %r6, 2, 31, -1;
  mov.b32 %f1, %r6;
  mov.b32 %f2, %r7;
  max.f32 %f3, %f1, %f2;
  mov.b32 %r8, %f3;
  shfl.sync.bfly.b32 %r9, %r8, 1, 31, -1;
  mov.b32 %f4, %r9;
  max.f32 %f5, %f3, %f4;
)";
  if (use == "store") {
    body += R"(
  setp.eq.s32 %p2, %r1, 0;
  @%p2 st.global.f32 [%rd2], %f5;
  ret;
}
)";
  } else if (use == "all") {
    body += R"(
  mad.wide.s32 %rd4, %r1, 4, %rd2;
  st.global.f32 [%rd4], %f5;
  ret;
}
)";
  } else if (use == "branch") {
    body += R"(
  setp.gt.f32 %p3, %f5, 0f00000000;
  @%p3 bra DONE;
  setp.eq.s32 %p2, %r1, 0;
  @%p2 st.global.f32 [%rd2], %f5;
DONE:
  ret;
}
)";
  } else {  // address
    body += R"(
  @%p1 mov.u32 %r10, %r1;
  mul.wide.u32 %rd5, %r10, 4;
  add.s64 %rd6, %rd2, %rd5;
  st.global.f32 [%rd6], %f5;
  ret;
}
)";
  }
  return body;
}

RunResult<SymbolicDomain> run(const std::string& text, ExprContext& c, std::uint64_t ys = 1) {
  auto parsed = ptx::parse_ptx(text, "red.ptx");
  REQUIRE(parsed.module);
  auto lowered = ptx::lower_kernel(*parsed.module, "red", 128);
  REQUIRE(lowered.program);
  Launch l;
  l.block = Dim3{32, 1, 1};
  l.args = {LaunchArg::of_tensor({"x", DType::F32, {32}, Role::In}),
            LaunchArg::of_tensor({"y", DType::F32, {ys}, Role::Out})};
  SymbolicDomain dom(c);
  return run_program(*lowered.program, l, dom, RunOptions{});
}

}  // namespace

TEST_CASE("an undefined register that is discarded is no error (Triton's predicated load + butterfly)") {
  ExprContext c;
  auto r = run(reduce_ptx("store"), c);
  INFO((r.diagnostics.empty() ? std::string() : r.diagnostics[0].text()));
  REQUIRE(r.ok());
  // Lane 0 combines lanes 0-3: max of x[0..3] (lane 0 reads lanes 2 and 1 and 3).
  REQUIRE(r.outputs.at("y").at(0));
  const std::string y = c.to_string(*r.outputs.at("y").at(0));
  CHECK(y.find("x[0]") != std::string::npos);
  CHECK(y.find("x[3]") != std::string::npos);
  CHECK(y.find("x[4]") == std::string::npos);
}

TEST_CASE("an undefined register that reaches an output is uninitialized, naming the register and the read") {
  ExprContext c;
  auto r = run(reduce_ptx("all"), c, 32);
  REQUIRE(!r.ok());
  const Diagnostic& d = r.diagnostics[0];
  CHECK(d.kind == DiagKind::Uninitialized);
  CHECK(d.message.find("output y[") != std::string::npos);
  CHECK(d.message.find("register %r6 was read before it was written") != std::string::npos);
  INFO(d.text());
  CHECK(d.detail.find("the shuffle:") != std::string::npos);  // lane 4 read lane 6's %r6 there
  CHECK(d.detail.find("a register holds no defined value") != std::string::npos);
}

TEST_CASE("an undefined register that decides a branch is uninitialized") {
  ExprContext c;
  auto r = run(reduce_ptx("branch"), c);
  REQUIRE(!r.ok());
  // The comparison is on tensor data for lanes 0-3 (not structured), so the
  // first report may be either; an undefined lane must not pass silently.
  const Diagnostic& d = r.diagnostics[0];
  CHECK((d.kind == DiagKind::Uninitialized || d.kind == DiagKind::NotStructured));
}

TEST_CASE("an undefined register used in an address is uninitialized") {
  ExprContext c;
  auto r = run(reduce_ptx("address"), c, 32);
  REQUIRE(!r.ok());
  const Diagnostic& d = r.diagnostics[0];
  INFO(d.text());
  CHECK(d.kind == DiagKind::Uninitialized);
  CHECK(d.message.find("an address") != std::string::npos);
}

TEST_CASE("a predicate register never written decides nothing silently") {
  const std::string text = R"(
.version 8.7
.target sm_80
.address_size 64
.visible .entry red(.param .u64 x, .param .u64 y)
{
  .reg .pred %p<3>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd2, [y];
  @%p1 bra SKIP;
  st.global.f32 [%rd2], 0f3F800000;
SKIP:
  ret;
}
)";
  ExprContext c;
  auto r = run(text, c);
  REQUIRE(!r.ok());
  CHECK(r.diagnostics[0].kind == DiagKind::Uninitialized);
  CHECK(r.diagnostics[0].message.find("register %p1") != std::string::npos);
}

TEST_CASE("pointer arithmetic in compiler forms: mad.wide with a pointer addend, pointer compares") {
  // Each lane stores x[i] to y[i] when &y[i] < y + n (a bounds check on
  // pointers, as compilers write it), with the address from mad.wide.s32.
  const std::string text = R"(
.version 8.7
.target sm_80
.address_size 64
.visible .entry red(.param .u64 x, .param .u64 y)
.reqntid 32
{
  .reg .pred %p<4>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<10>;
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [y];
  mov.u32 %r1, %tid.x;
  mad.wide.s32 %rd3, %r1, 4, %rd1;
  mad.wide.s32 %rd4, %r1, 4, %rd2;
  add.s64 %rd5, %rd2, 80;
  setp.lt.u64 %p1, %rd4, %rd5;
  setp.ne.s64 %p2, %rd4, 0;
  and.pred %p3, %p1, %p2;
  @!%p3 bra DONE;
  ld.global.f32 %f1, [%rd3];
  st.global.f32 [%rd4], %f1;
DONE:
  ret;
}
)";
  std::string fixed = text;
  fixed.replace(fixed.find(".reg .b64 %rd<10>;"), 18, ".reg .b64 %rd<10>;\n  .reg .f32 %f<2>;");
  ExprContext c;
  auto r = run(fixed, c, 20);
  INFO((r.diagnostics.empty() ? std::string() : r.diagnostics[0].text()));
  REQUIRE(r.ok());
  const auto& y = r.outputs.at("y");
  REQUIRE(y.size() == 20);
  for (std::size_t i = 0; i < 20; ++i) {
    REQUIRE(y[i]);
    CHECK(c.to_string(*y[i]) == "x[" + std::to_string(i) + "]");
  }

  // Ordering pointers into different buffers is not something a kernel can rely on.
  std::string other = fixed;
  other.replace(other.find("setp.lt.u64 %p1, %rd4, %rd5;"), 28, "setp.lt.u64 %p1, %rd4, %rd3;");
  ExprContext c2;
  auto r2 = run(other, c2, 20);
  REQUIRE(!r2.ok());
  CHECK(r2.diagnostics[0].kind == DiagKind::NotStructured);
  CHECK(r2.diagnostics[0].message.find("different buffers") != std::string::npos);
}
