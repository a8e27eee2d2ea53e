// wgmma.mma_async, stmatrix and the shared window (src/eval/machine_wgmma.cpp):
// generated PTX kernels run in the concrete domain against a GEMM computed
// here with the layout functions of warp_semantics.hpp (which
// tools/gpu_checks/wgmma_layouts.cu checks on an H100); the in-flight
// accumulator rules; descriptors built with bit operations on shared
// pointers, and integer .shared addresses.
#include "tileverify/domains.hpp"
#include "tileverify/eval.hpp"
#include "tileverify/ptx.hpp"

#include "../../src/eval/warp_semantics.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

using namespace tileverify;

namespace {

Program lower(const std::string& text, const std::string& kernel = "k") {
  auto parsed = ptx::parse_ptx(text, "wgmma.ptx");
  INFO((parsed.error ? parsed.error->text() : std::string()));
  REQUIRE(parsed.module.has_value());
  auto lowered = ptx::lower_kernel(*parsed.module, kernel);
  INFO((lowered.error ? lowered.error->text() : std::string()));
  REQUIRE(lowered.program.has_value());
  if (const Instr* u = lowered.program->first_unsupported()) FAIL(lowered.program->unsupported_of(*u).why);
  return *lowered.program;
}

TensorArg tensor(const std::string& name, DType t, std::uint64_t n, Role r) {
  TensorArg a(name, t, {n}, r);
  if (r == Role::Out) {
    a.init = TensorInit::Value;
    a.init_value = Rational(0);
  }
  return a;
}

// One wgmma test: A (64 x 16) and B (N x 16) f16 operands, each from a
// descriptor over a shared array (K-major or MN-major, a swizzle mode), or A
// from registers; a second mma_async may follow (scale-d from a predicate,
// imm-scale-a -1); an optional instruction between issue and wait.
struct Case {
  int n = 64;
  warp::WgmmaSwizzle swa = warp::WgmmaSwizzle::B128, swb = warp::WgmmaSwizzle::B128;
  bool ta = false, tb = false;  // imm-trans-a/b: MN-major
  bool a_regs = false;
  bool second = false;          // a second mma_async: scale-d %p, imm-scale-a -1
  bool fence = true;
  bool proxy_fence = true;      // fence.proxy.async after the stores
  bool barrier = true;          // bar.sync between the stores and the wgmma
  bool strict = false;          // RunOptions::strict
  bool f16_acc = false;         // .f16 accumulators, two a register
  std::string before_wait;      // PTX placed between commit and wait
  std::int64_t lbo_a = 0, sbo_a = 0, lbo_b = 0, sbo_b = 0;
};

// The strides of the canonical layout this test lays operands out in: rows
// x 16 elements.
void strides(warp::WgmmaSwizzle s, bool mn_major, int rows, std::int64_t* lbo, std::int64_t* sbo) {
  const int W = warp::wgmma_swizzle_bytes(s);
  if (!mn_major) {
    *lbo = s == warp::WgmmaSwizzle::None ? std::int64_t(rows / 8) * 128 : 0;  // K core matrices after all M ones
    *sbo = s == warp::WgmmaSwizzle::None ? 128 : 8 * W;
    return;
  }
  if (s == warp::WgmmaSwizzle::None) {
    *sbo = 128;                          // MN core matrices next to each other
    *lbo = std::int64_t(rows / 8) * 128;  // then the next 8 k
  } else {
    const int per_row = W / 2;
    *sbo = 8 * W;                                                    // 8 k rows per atom, atoms along K first
    *lbo = std::int64_t(2) * 8 * W;                                  // then along MN (16 k = 2 atoms)
    if (rows < per_row) *lbo = 0;
  }
}

std::uint64_t flags(warp::WgmmaSwizzle s, std::int64_t lbo, std::int64_t sbo) {
  warp::WgmmaDesc d;
  d.lbo = unsigned(lbo);
  d.sbo = unsigned(sbo);
  d.swizzle = s;
  return warp::wgmma_encode(d);
}

std::size_t smem_bytes(warp::WgmmaSwizzle s, bool mn_major, int rows) {
  const int W = warp::wgmma_swizzle_bytes(s);
  if (s == warp::WgmmaSwizzle::None) return std::size_t(rows) * 16 * 2;
  if (!mn_major) return std::size_t(rows / 8) * 8 * std::size_t(W);
  const int per_row = W / 2;
  return std::size_t((rows + per_row - 1) / per_row) * 2 * 8 * std::size_t(W);
}

std::string regs(const char* prefix, int first, int count) {
  std::string s = "{";
  for (int i = 0; i < count; ++i) s += (i ? ", " : "") + std::string(prefix) + std::to_string(first + i);
  return s + "}";
}

// The kernel: threads copy the global operands (in shared-memory byte
// order, as halves) into the shared arrays, fence.proxy.async, bar.sync;
// thread-uniform descriptors from the arrays' addresses (shr, and, cvt, or
// with the layout flags); wgmma; each thread stores its N/2 accumulators
// to out[tid * N/2 + i].
std::string kernel(const Case& c) {
  const int n = c.n, nd = n / 2;
  const std::size_t abytes = c.a_regs ? 16 : smem_bytes(c.swa, c.ta, 64), bbytes = smem_bytes(c.swb, c.tb, n);
  std::string s = ".version 8.0\n.target sm_90a\n.address_size 64\n";
  s += ".visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pout, .param .u64 fa, .param .u64 fb, .param .u32 sd)\n{\n";
  s += ".reg .pred %p<4>;\n.reg .b16 %h<4>;\n.reg .b32 %r<40>;\n.reg .b64 %rd<40>;\n.reg .f32 %f<" + std::to_string(nd + 1) + ">;\n";
  s += ".reg .b32 %a<4>;\n.reg .b32 %g<" + std::to_string(nd / 2 + 1) + ">;\n";
  s += ".shared .align 1024 .b8 sa[" + std::to_string(abytes) + "];\n.shared .align 1024 .b8 sb[" + std::to_string(bbytes) + "];\n";
  s += "ld.param.u64 %rd1, [pa];\nld.param.u64 %rd2, [pb];\nld.param.u64 %rd3, [pout];\n";
  s += "ld.param.u64 %rd4, [fa];\nld.param.u64 %rd5, [fb];\nld.param.u32 %r30, [sd];\n";
  s += "setp.ne.u32 %p3, %r30, 0;\n";
  s += "mov.u32 %r1, %tid.x;\n";
  auto copy = [&](const char* g, const char* sh, std::size_t bytes, const char* tag) {
    std::string x;
    x += "mov.u32 %r2, %r1;\n";
    x += std::string("L") + tag + ":\nsetp.ge.u32 %p1, %r2, " + std::to_string(bytes / 2) + ";\n@%p1 bra E" + tag + ";\n";
    x += "mul.wide.u32 %rd6, %r2, 2;\nadd.s64 %rd7, " + std::string(g) + ", %rd6;\nld.global.b16 %h1, [%rd7];\n";
    x += "mul.lo.u32 %r3, %r2, 2;\nmov.u32 %r4, " + std::string(sh) + ";\nadd.u32 %r5, %r4, %r3;\nst.shared.b16 [%r5], %h1;\n";
    x += "add.u32 %r2, %r2, 128;\nbra L" + std::string(tag) + ";\nE" + tag + ":\n";
    return x;
  };
  if (!c.a_regs) s += copy("%rd1", "sa", abytes, "A");
  s += copy("%rd2", "sb", bbytes, "B");
  s += std::string(c.proxy_fence ? "fence.proxy.async.shared::cta;\n" : "") + (c.barrier ? "bar.sync 0;\n" : "");
  // descriptors: ((addr >> 4) & 0x3fff) | flags
  s += "mov.u32 %r10, sa;\nshr.u32 %r11, %r10, 4;\nand.b32 %r12, %r11, 16383;\ncvt.u64.u32 %rd10, %r12;\nor.b64 %rd11, %rd10, %rd4;\n";
  s += "mov.u32 %r13, sb;\nbfe.u32 %r14, %r13, 4, 14;\ncvt.u64.u32 %rd12, %r14;\nor.b64 %rd13, %rd12, %rd5;\n";
  if (c.a_regs) {
    s += "mul.wide.u32 %rd14, %r1, 16;\nadd.s64 %rd15, %rd1, %rd14;\n";
    for (int i = 0; i < 4; ++i) s += "ld.global.b32 %a" + std::to_string(i) + ", [%rd15+" + std::to_string(4 * i) + "];\n";
  }
  if (c.fence) s += "wgmma.fence.sync.aligned;\n";
  const std::string d = c.f16_acc ? regs("%g", 1, nd / 2) : regs("%f", 1, nd),
                    shape = "m64n" + std::to_string(n) + (c.f16_acc ? "k16.f16.f16.f16" : "k16.f32.f16.f16");
  const std::string a = c.a_regs ? regs("%a", 0, 4) : "%rd11";
  const std::string trans = c.a_regs ? std::string(c.tb ? "1" : "0") : std::string(c.ta ? "1" : "0") + ", " + (c.tb ? "1" : "0");
  s += "wgmma.mma_async.sync.aligned." + shape + " " + d + ", " + a + ", %rd13, 0, 1, 1, " + trans + ";\n";
  if (c.second) s += "wgmma.mma_async.sync.aligned." + shape + " " + d + ", " + a + ", %rd13, %p3, -1, 1, " + trans + ";\n";
  s += "wgmma.commit_group.sync.aligned;\n" + c.before_wait + "wgmma.wait_group.sync.aligned 0;\n";
  s += "mul.wide.u32 %rd20, %r1, " + std::to_string(nd * (c.f16_acc ? 2 : 4)) + ";\nadd.s64 %rd21, %rd3, %rd20;\n";
  if (c.f16_acc)
    for (int i = 0; i < nd / 2; ++i) s += "st.global.b32 [%rd21+" + std::to_string(4 * i) + "], %g" + std::to_string(i + 1) + ";\n";
  else
    for (int i = 0; i < nd; ++i) s += "st.global.f32 [%rd21+" + std::to_string(4 * i) + "], %f" + std::to_string(i + 1) + ";\n";
  s += "ret;\n}\n";
  return s;
}

struct Outcome {
  RunResult<ConcreteDomain> run;
  std::vector<double> expect;  // per thread and accumulator register
};

Outcome run_case(const Case& c, int scale_d = 1) {
  const int n = c.n, k = 16;
  const std::size_t abytes = c.a_regs ? 128 * 16 : smem_bytes(c.swa, c.ta, 64), bbytes = smem_bytes(c.swb, c.tb, n);
  std::int64_t la = c.lbo_a, sa = c.sbo_a, lb = c.lbo_b, sb = c.sbo_b;
  std::int64_t la0, sa0, lb0, sb0;
  strides(c.swa, c.ta, 64, &la0, &sa0);
  strides(c.swb, c.tb, n, &lb0, &sb0);
  if (!la && !sa) la = la0, sa = sa0;
  if (!lb && !sb) lb = lb0, sb = sb0;
  // Small integers, distinct enough that a wrong layout shows.
  std::vector<double> ga(abytes / 2), gb(bbytes / 2);
  for (std::size_t i = 0; i < ga.size(); ++i) ga[i] = double(int(i * 7 % 11) - 5);
  for (std::size_t i = 0; i < gb.size(); ++i) gb[i] = double(int(i * 5 % 13) - 6);
  // The operands as the layouts (the test's own strides) place them.
  std::vector<double> A(64 * k), B(std::size_t(n) * k);
  for (int m = 0; m < 64; ++m)
    for (int kk = 0; kk < k; ++kk) {
      if (c.a_regs) continue;
      const unsigned off = warp::wgmma_swizzle(c.swa, warp::wgmma_offset(c.ta, c.swa, unsigned(la0), unsigned(sa0), m, kk, 2));
      A[std::size_t(m * k + kk)] = ga[off / 2];
    }
  if (c.a_regs)
    for (int t = 0; t < 128; ++t)
      for (int i = 0; i < 8; ++i) {
        const warp::RowCol rc = warp::wgmma_a_reg(t, i, false);
        A[std::size_t(rc.row * k + rc.col)] = ga[std::size_t(t * 8 + i)];
      }
  for (int nn = 0; nn < n; ++nn)
    for (int kk = 0; kk < k; ++kk) {
      const unsigned off = warp::wgmma_swizzle(c.swb, warp::wgmma_offset(c.tb, c.swb, unsigned(lb0), unsigned(sb0), nn, kk, 2));
      B[std::size_t(nn * k + kk)] = gb[off / 2];
    }
  Outcome o;
  o.expect.resize(std::size_t(128 * n / 2));
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < n / 2; ++i) {
      const warp::RowCol rc = warp::wgmma_d(t, i);
      double s = 0;
      for (int kk = 0; kk < k; ++kk) s += A[std::size_t(rc.row * k + kk)] * B[std::size_t(rc.col * k + kk)];
      o.expect[std::size_t(t * n / 2 + i)] = c.second ? (scale_d ? 0.0 : -s) : s;
    }
  const Program p = lower(kernel(c));
  Launch l;
  l.block = Dim3{128, 1, 1};
  l.args.push_back(LaunchArg::of_tensor(tensor("a", DType::F16, ga.size(), Role::In)));
  l.args.push_back(LaunchArg::of_tensor(tensor("b", DType::F16, gb.size(), Role::In)));
  l.args.push_back(LaunchArg::of_tensor(tensor("out", c.f16_acc ? DType::F16 : DType::F32, o.expect.size(), Role::Out)));
  l.args.push_back(LaunchArg::of_scalar(std::int64_t(flags(c.swa, la, sa))));
  l.args.push_back(LaunchArg::of_scalar(std::int64_t(flags(c.swb, lb, sb))));
  l.args.push_back(LaunchArg::of_scalar(scale_d));
  ConcreteDomain dom;
  dom.inputs["a"] = ga;
  dom.inputs["b"] = gb;
  RunOptions ro;
  ro.strict = c.strict;
  o.run = run_program(p, l, dom, ro);
  return o;
}

void check_gemm(const Case& c, int scale_d = 1) {
  Outcome o = run_case(c, scale_d);
  for (const Diagnostic& d : o.run.diagnostics) INFO(d.message << "\n" << d.detail);
  REQUIRE(o.run.ok());
  const auto& out = o.run.outputs.at("out");
  int wrong = 0;
  for (std::size_t i = 0; i < out.size(); ++i)
    if (!out[i] || *out[i] != o.expect[i]) ++wrong;
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("wgmma m64nNk16 f16 from descriptors: each swizzle mode, K-major") {
  for (auto s : {warp::WgmmaSwizzle::None, warp::WgmmaSwizzle::B32, warp::WgmmaSwizzle::B64, warp::WgmmaSwizzle::B128}) {
    Case c;
    c.swa = c.swb = s;
    c.n = s == warp::WgmmaSwizzle::None ? 8 : 32;
    CAPTURE(int(s));
    check_gemm(c);
  }
}

TEST_CASE("wgmma: MN-major operands (imm-trans-a, imm-trans-b)") {
  for (auto s : {warp::WgmmaSwizzle::None, warp::WgmmaSwizzle::B128, warp::WgmmaSwizzle::B64}) {
    Case c;
    c.swa = c.swb = s;
    c.ta = c.tb = true;
    c.n = 128;
    CAPTURE(int(s));
    check_gemm(c);
  }
}

TEST_CASE("wgmma: .f16 accumulators, two a register") {
  Case c;
  c.n = 16;
  c.f16_acc = true;
  check_gemm(c);
}

TEST_CASE("wgmma: A from registers; scale-d from a predicate; imm-scale-a -1") {
  Case c;
  c.a_regs = true;
  c.n = 16;
  check_gemm(c);
  c.second = true;  // D = A B, then D = -A B + (scale-d ? D : 0)
  check_gemm(c, 1);
  check_gemm(c, 0);
}

TEST_CASE("wgmma: a wrong stride byte offset reads other elements (or out of bounds)") {
  Case c;
  c.n = 64;
  c.lbo_b = 0;
  c.sbo_b = 512;  // the layout has 1024
  Outcome o = run_case(c);
  if (o.run.ok()) {
    const auto& out = o.run.outputs.at("out");
    int wrong = 0;
    for (std::size_t i = 0; i < out.size(); ++i)
      if (!out[i] || *out[i] != o.expect[i]) ++wrong;
    CHECK(wrong > 0);
  }
  c.sbo_b = 4096;  // past the end of sb: out of bounds, reported with the address
  o = run_case(c);
  REQUIRE_FALSE(o.run.ok());
  CHECK(o.run.diagnostics[0].kind == DiagKind::OutOfBounds);
}

TEST_CASE("wgmma: accumulators in flight until wait_group") {
  Case c;
  c.n = 8;
  c.before_wait = "add.f32 %f1, %f1, %f2;\n";  // reads them before the wait
  Outcome o = run_case(c);
  REQUIRE_FALSE(o.run.ok());
  CHECK(o.run.diagnostics[0].kind == DiagKind::Race);
  CHECK(o.run.diagnostics[0].message.find("in flight") != std::string::npos);
  c.before_wait = "mov.f32 %f3, 0f00000000;\n";  // writes one
  o = run_case(c);
  REQUIRE_FALSE(o.run.ok());
  CHECK(o.run.diagnostics[0].kind == DiagKind::Race);
  CHECK(o.run.diagnostics[0].message.find("written") != std::string::npos);
  c.before_wait = "wgmma.wait_group.sync.aligned 1;\nadd.f32 %f1, %f1, %f2;\n";  // waits for too little
  o = run_case(c);
  REQUIRE_FALSE(o.run.ok());
  CHECK(o.run.diagnostics[0].kind == DiagKind::Race);
}

TEST_CASE("wgmma: no wgmma.fence before the first mma_async") {
  Case c;
  c.n = 8;
  c.fence = false;
  Outcome o = run_case(c);
  REQUIRE_FALSE(o.run.ok());
  CHECK(o.run.diagnostics[0].kind == DiagKind::Race);
  CHECK(o.run.diagnostics[0].message.find("wgmma.fence") != std::string::npos);
}

TEST_CASE("wgmma lowering: the forms outside the model are unsupported, naming them") {
  const std::string head = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n.reg .b64 %rd<4>;\n.reg .f32 %f<9>;\n.reg .b32 %r<9>;\n";
  for (const char* op : {"wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 {%f1,%f2,%f3,%f4}, %rd1, %rd2, 1, 1, 1;",
                         "wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8 {%r1,%r2,%r3,%r4}, %rd1, %rd2, 1;"}) {
    auto parsed = ptx::parse_ptx(head + op + "\nret;\n}\n", "t.ptx");
    REQUIRE(parsed.module.has_value());
    auto lowered = ptx::lower_kernel(*parsed.module, "k");
    REQUIRE(lowered.program.has_value());
    const Instr* u = lowered.program->first_unsupported();
    REQUIRE(u != nullptr);
    const std::string why = lowered.program->unsupported_of(*u).why;
    CHECK((why.find("fp8") != std::string::npos || why.find("integer") != std::string::npos));
  }
}

// ------------------------------------------------------------ shared window

TEST_CASE("shared window: integer addresses from bit operations map back to their buffer") {
  // Thread t stores t at s[t] through an address rebuilt from bits
  // (and/or with the window address), reads it back through ld.shared [int].
  const std::string text = R"(.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 off)
{
.reg .pred %p<2>;
.reg .b32 %r<20>;
.reg .b64 %rd<8>;
.shared .align 4 .b8 s0[8];
.shared .align 16 .b8 s[128];
mov.u32 %r1, %tid.x;
mov.u32 %r2, s;
and.b32 %r3, %r2, -1024;
and.b32 %r4, %r2, 1023;
or.b32 %r5, %r3, %r4;
shl.b32 %r6, %r1, 2;
add.u32 %r7, %r5, %r6;
st.shared.u32 [%r7], %r1;
bar.sync 0;
ld.param.u32 %r10, [off];
add.u32 %r11, %r7, %r10;
ld.shared.u32 %r12, [%r11];
setp.eq.u32 %p1, %r5, %r2;
selp.u32 %r13, %r12, 999, %p1;
ld.param.u64 %rd1, [out];
mul.wide.u32 %rd2, %r1, 4;
add.s64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r13;
ret;
}
)";
  const Program p = lower(text);
  Launch l;
  l.block = Dim3{32, 1, 1};
  l.args.push_back(LaunchArg::of_tensor(tensor("out", DType::U32, 32, Role::Out)));
  l.args.push_back(LaunchArg::of_scalar(0));
  ConcreteDomain dom;
  auto r = run_program(p, l, dom);
  for (const Diagnostic& d : r.diagnostics) INFO(d.message);
  REQUIRE(r.ok());
  for (std::size_t i = 0; i < 32; ++i) CHECK(*r.outputs.at("out")[i] == double(i));
  // Past the end of s: out of bounds, naming the address.
  l.args[1] = LaunchArg::of_scalar(128);
  r = run_program(p, l, dom);
  REQUIRE_FALSE(r.ok());
  CHECK(r.diagnostics[0].kind == DiagKind::OutOfBounds);
  CHECK(r.diagnostics[0].message.find("0x") != std::string::npos);
}

TEST_CASE("shared window: buffers are 1024-aligned, from 1024; global pointers stay not_structured as integers") {
  const std::string text = R"(.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out)
{
.reg .b32 %r<8>;
.reg .b64 %rd<8>;
.shared .align 4 .b8 s0[8];
.shared .align 4 .b8 s1[8];
mov.u32 %r1, s0;
mov.u32 %r2, s1;
or.b32 %r3, %r1, 0;
or.b32 %r4, %r2, 0;
ld.param.u64 %rd1, [out];
st.global.u32 [%rd1], %r3;
st.global.u32 [%rd1+4], %r4;
ret;
}
)";
  const Program p = lower(text);
  Launch l;
  l.block = Dim3{1, 1, 1};
  l.args.push_back(LaunchArg::of_tensor(tensor("out", DType::U32, 2, Role::Out)));
  ConcreteDomain dom;
  auto r = run_program(p, l, dom);
  REQUIRE(r.ok());
  CHECK(*r.outputs.at("out")[0] == 1024);
  CHECK(*r.outputs.at("out")[1] == 2048);
  const std::string global = R"(.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out)
{
.reg .b64 %rd<8>;
ld.param.u64 %rd1, [out];
and.b64 %rd2, %rd1, -16;
st.global.u64 [%rd1], %rd2;
ret;
}
)";
  const Program q = lower(global);
  Launch g;
  g.block = Dim3{1, 1, 1};
  g.args.push_back(LaunchArg::of_tensor(tensor("out", DType::U64, 1, Role::Out)));
  auto rg = run_program(q, g, dom);
  REQUIRE_FALSE(rg.ok());
  CHECK(rg.diagnostics[0].kind == DiagKind::NotStructured);
}

// ------------------------------------------------------------ stmatrix

TEST_CASE("stmatrix: the ldmatrix layout, and a round trip through ldmatrix") {
  for (bool trans : {false, true}) {
    // Lane l stores x4 matrices from in[l*4 + q] (pairs of halves), then
    // ldmatrix.x4 (same .trans) reads them back; and s as plain halves.
    const std::string tr = trans ? ".trans" : "";
    const std::string text = R"(.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out, .param .u64 raw)
{
.reg .b16 %h<4>;
.reg .b32 %r<30>;
.reg .b64 %rd<12>;
.shared .align 16 .b8 s[512];
mov.u32 %r1, %tid.x;
ld.param.u64 %rd1, [in];
ld.param.u64 %rd2, [out];
ld.param.u64 %rd3, [raw];
mul.wide.u32 %rd4, %r1, 16;
add.s64 %rd5, %rd1, %rd4;
ld.global.v4.b32 {%r2, %r3, %r4, %r5}, [%rd5];
mov.u32 %r6, s;
shl.b32 %r7, %r1, 4;
add.u32 %r8, %r6, %r7;
stmatrix.sync.aligned.m8n8.x4)" + tr + R"(.shared.b16 [%r8], {%r2, %r3, %r4, %r5};
bar.warp.sync -1;
ldmatrix.sync.aligned.m8n8.x4)" + tr + R"(.shared.b16 {%r10, %r11, %r12, %r13}, [%r8];
add.s64 %rd6, %rd2, %rd4;
st.global.v4.b32 [%rd6], {%r10, %r11, %r12, %r13};
mul.wide.u32 %rd7, %r1, 32;
add.s64 %rd8, %rd3, %rd7;
mov.u32 %r20, 0;
LOOP:
shl.b32 %r21, %r20, 1;
add.u32 %r22, %r8, %r21;
ld.shared.b16 %h1, [%r22];
cvt.u64.u32 %rd9, %r21;
add.s64 %rd10, %rd8, %rd9;
st.global.b16 [%rd10], %h1;
add.u32 %r20, %r20, 1;
setp.lt.u32 %p1, %r20, 8;
@%p1 bra LOOP;
ret;
}
)";
    std::string t2 = text;
    t2.insert(t2.find(".reg .b16"), ".reg .pred %p<2>;\n");
    const Program p = lower(t2);
    Launch l;
    l.block = Dim3{32, 1, 1};
    l.args.push_back(LaunchArg::of_tensor(tensor("in", DType::F16, 32 * 8, Role::In)));
    l.args.push_back(LaunchArg::of_tensor(tensor("out", DType::F16, 32 * 8, Role::Out)));
    l.args.push_back(LaunchArg::of_tensor(tensor("raw", DType::F16, 32 * 16, Role::Out)));
    ConcreteDomain dom;
    std::vector<double> in(256);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = double(i);
    dom.inputs["in"] = in;
    auto r = run_program(p, l, dom);
    for (const Diagnostic& d : r.diagnostics) INFO(d.message << "\n" << d.detail);
    REQUIRE(r.ok());
    CAPTURE(trans);
    for (std::size_t i = 0; i < 256; ++i) CHECK(*r.outputs.at("out")[i] == in[i]);
    // Row `row` of matrix q (at byte 16 (8q + row) of s) holds, at column
    // col, the element the fragment layout assigns there.
    const auto& raw = r.outputs.at("raw");
    for (int q = 0; q < 4; ++q)
      for (int lane = 0; lane < 32; ++lane)
        for (int i = 0; i < 2; ++i) {
          const warp::RowCol rc = warp::stmatrix_element(lane, i, trans);
          const int row_lane = 8 * q + rc.row;  // the lane that gave the row's address
          CHECK(*raw[std::size_t(row_lane * 16 + rc.col)] == in[std::size_t(lane * 8 + q * 2 + i)]);
        }
  }
}

TEST_CASE("wgmma: shared operands written without fence.proxy.async, or overwritten before the wait") {
  Case c;
  c.n = 8;
  c.proxy_fence = false;
  Outcome o = run_case(c);
  REQUIRE_FALSE(o.run.ok());
  CHECK(o.run.diagnostics[0].kind == DiagKind::Race);
  CHECK(o.run.diagnostics[0].message.find("fence.proxy.async") != std::string::npos);
  // A write ordered after the issue (by a barrier) but before the wait: the
  // async proxy may still be reading it.
  c.proxy_fence = true;
  c.before_wait = "bar.sync 0;\nsetp.eq.u32 %p2, %r1, 0;\n@%p2 st.shared.b16 [sb], %h1;\n";
  o = run_case(c);
  REQUIRE_FALSE(o.run.ok());
  CHECK(o.run.diagnostics[0].kind == DiagKind::Race);
  CHECK(o.run.diagnostics[0].message.find("in flight reads it") != std::string::npos);
  // The same write after the wait is fine.
  c.before_wait = "";
  check_gemm(c);
}

TEST_CASE("wgmma: operands other warps wrote, ordered only by the wgmma instructions: a note, a race under --strict") {
  // Every thread stores its part of A and B, fences the proxy and issues
  // the wgmma: the PTX ISA's outline of a wgmma, with no barrier. Accepted,
  // with a warning note naming the write and a thread of another warp.
  auto cross_warp_note = [](const RunResult<ConcreteDomain>& r) -> const Diagnostic* {
    for (const Diagnostic& d : r.notes)
      if (d.message.find("only the warpgroup's wgmma instructions order that write") != std::string::npos) return &d;
    return nullptr;
  };
  Case c;
  c.n = 8;
  c.barrier = false;
  Outcome o = run_case(c);
  for (const Diagnostic& d : o.run.diagnostics) INFO(d.message << "\n" << d.detail);
  REQUIRE(o.run.ok());
  const Diagnostic* note = cross_warp_note(o.run);
  REQUIRE(note != nullptr);
  CHECK(note->warning);
  CHECK(note->kind == DiagKind::Race);
  CHECK(note->message.find("reads sa byte 0, which thread 0 wrote") != std::string::npos);
  REQUIRE(note->threads.size() == 2);
  CHECK(note->threads[1] / 32 != note->threads[0] / 32);  // a thread of another warp
  CHECK(note->detail.find("st.shared.b16") != std::string::npos);
  CHECK(note->detail.find("--strict") != std::string::npos);
  // Under --strict the same run is a race.
  c.strict = true;
  o = run_case(c);
  REQUIRE_FALSE(o.run.ok());
  CHECK(o.run.diagnostics[0].kind == DiagKind::Race);
  CHECK(o.run.diagnostics[0].message.find("only the warpgroup's wgmma instructions order that write") != std::string::npos);
  // A bar.sync between the stores and the wgmma orders them: no note, and
  // --strict is clean too.
  c.barrier = true;
  o = run_case(c);
  REQUIRE(o.run.ok());
  CHECK(cross_warp_note(o.run) == nullptr);
  c.strict = false;
  o = run_case(c);
  REQUIRE(o.run.ok());
  CHECK(cross_warp_note(o.run) == nullptr);
}

TEST_CASE("wgmma: a CTA that is no whole number of warpgroups, or a warpgroup with an exited thread, deadlocks") {
  const std::string text = R"(.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u32 n)
{
.reg .pred %p<2>;
.reg .b32 %r<4>;
ld.param.u32 %r1, [n];
mov.u32 %r2, %tid.x;
setp.ge.u32 %p1, %r2, %r1;
@%p1 ret;
wgmma.fence.sync.aligned;
ret;
}
)";
  const Program p = lower(text);
  for (std::uint32_t block : {96u, 128u}) {
    Launch l;
    l.block = Dim3{block, 1, 1};
    l.args.push_back(LaunchArg::of_scalar(block == 96 ? 96 : 100));  // 128: threads 100.. exit first
    ConcreteDomain dom;
    auto r = run_program(p, l, dom);
    REQUIRE_FALSE(r.ok());
    CAPTURE(block);
    CHECK(r.diagnostics[0].kind == DiagKind::Deadlock);
    INFO(r.diagnostics[0].message << "\n" << r.diagnostics[0].detail);
    CHECK(r.diagnostics[0].text().find("wgmma.fence") != std::string::npos);
  }
}
