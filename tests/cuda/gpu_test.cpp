// The GPU side on a real device: PTX written here by hand is loaded,
// launched and its outputs checked; a JIT error brings its log; launches
// check_launch refuses really fail when forced onto the GPU (so the check
// matches the hardware); a trap is reported by name and the device recovers.
// Without a driver or GPU each case asserts the error says so, and passes.
// The cases run in file order; the trap, which loses the context, is last.
#include "tileverify/cuda.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace tileverify;
using namespace tileverify::cuda;

namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The GPU, or nullopt after checking that the reason is one of the two
// documented ones (docs/cuda.md, "Without a GPU").
std::optional<Gpu> gpu_or_skip() {
  std::string why;
  std::optional<Gpu> g = Gpu::open(0, &why);
  if (!g) {
    CHECK((why == "no CUDA driver (libcuda.so.1 not found)" || has(why, "no CUDA GPU")));
    MESSAGE("skipped, no GPU: " << why);
  }
  return g;
}

const char* const kPtxHeader = ".version 8.0\n.target sm_90\n.address_size 64\n";

// y[i] = 2 x[i] for i < n.
const char* const kTwice = R"(
.visible .entry twice(.param .u64 x, .param .u64 y, .param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [y];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mul.wide.u32 %rd5, %r5, 4;
  add.s64 %rd6, %rd3, %rd5;
  add.s64 %rd7, %rd4, %rd5;
  ld.global.f32 %f1, [%rd6];
  add.f32 %f2, %f1, %f1;
  st.global.f32 [%rd7], %f2;
DONE:
  ret;
}
)";

// y[%ctaid.x] = %cluster_ctarank; one kernel without and one with .reqnctapercluster 2.
const char* const kRank = R"(
.visible .entry rank(.param .u64 y)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [y];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %cluster_ctarank;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  ret;
}
.visible .entry rank2(.param .u64 y) .reqnctapercluster 2, 1, 1
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [y];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %cluster_ctarank;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  ret;
}
.visible .entry fixed() .reqntid 128, 1, 1
{
  ret;
}
.visible .entry bounded() .maxntid 256, 1, 1
{
  ret;
}
)";

// 16384 bytes of static shared memory and the dynamic array: writes 7 to
// the dynamic word at byte `last` and 5 to the last static word, reads both
// back and stores the sum (12) to y[0].
const char* const kShared = R"(
.extern .shared .align 16 .b8 dyn[];
.visible .entry shared_user(.param .u64 y, .param .u32 last)
{
  .shared .align 4 .b8 stat[16384];
  .reg .b32 %r<5>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [y];
  cvta.to.global.u64 %rd1, %rd1;
  ld.param.u32 %r1, [last];
  mov.u32 %r2, dyn;
  add.u32 %r2, %r2, %r1;
  mov.u32 %r3, 7;
  st.shared.u32 [%r2], %r3;
  mov.u32 %r4, 5;
  st.shared.u32 [stat+16380], %r4;
  bar.sync 0;
  ld.shared.u32 %r3, [%r2];
  ld.shared.u32 %r4, [stat+16380];
  add.u32 %r3, %r3, %r4;
  st.global.u32 [%rd1], %r3;
  ret;
}
)";

// Spins until `ns` nanoseconds of %globaltimer have passed.
const char* const kSpin = R"(
.visible .entry spin(.param .u64 ns)
{
  .reg .pred %p;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [ns];
  mov.u64 %rd2, %globaltimer;
LOOP:
  mov.u64 %rd3, %globaltimer;
  sub.s64 %rd4, %rd3, %rd2;
  setp.lt.u64 %p, %rd4, %rd1;
  @%p bra LOOP;
  ret;
}
)";

// Many registers: 2n volatile loads (which ptxas keeps in order), then the
// sum of x[k] * x[2n-1-k], so about n values are live at once.
std::string register_hungry(int n) {
  std::string s = ".visible .entry hungry(.param .u64 x, .param .u64 y)\n{\n";
  s += "  .reg .pred %p<2>;\n  .reg .f32 %f<" + std::to_string(2 * n + 2) + ">;\n  .reg .b64 %rd<4>;\n  .reg .b32 %r<2>;\n";
  s += "  ld.param.u64 %rd1, [x];\n  ld.param.u64 %rd2, [y];\n";
  s += "  cvta.to.global.u64 %rd1, %rd1;\n  cvta.to.global.u64 %rd2, %rd2;\n";
  for (int k = 0; k < 2 * n; ++k)
    s += "  ld.volatile.global.f32 %f" + std::to_string(k) + ", [%rd1+" + std::to_string(4 * k) + "];\n";
  s += "  mov.f32 %f" + std::to_string(2 * n) + ", 0f00000000;\n";
  for (int k = 0; k < n; ++k)
    s += "  fma.rn.f32 %f" + std::to_string(2 * n) + ", %f" + std::to_string(k) + ", %f" + std::to_string(2 * n - 1 - k) +
         ", %f" + std::to_string(2 * n) + ";\n";
  s += "  mov.u32 %r1, %tid.x;\n  setp.ne.u32 %p1, %r1, 0;\n";
  s += "  @%p1 bra DONE;\n  st.global.f32 [%rd2], %f" + std::to_string(2 * n) + ";\nDONE:\n  ret;\n}\n";
  return s;
}

std::optional<Function> kernel(const Gpu& g, const std::string& body, const std::string& name,
                               std::optional<Module>& keep) {
  std::string why;
  keep = Module::load_ptx(g, kPtxHeader + body, &why);
  if (!keep) {
    FAIL_CHECK("load of " << name << ": " << why);
    return std::nullopt;
  }
  std::optional<Function> f = keep->function(name, &why);
  if (!f) FAIL_CHECK(why);
  return f;
}

LaunchConfig config(Dim3 grid, Dim3 block) {
  LaunchConfig c;
  c.grid = grid;
  c.block = block;
  return c;
}

LaunchOptions forced() {
  LaunchOptions o;
  o.check = false;
  return o;
}

}  // namespace

TEST_CASE("gpu: without a device every call says why, and error names need no driver") {
  std::string why;
  int n = device_count(&why);
  if (n == 0) {
    CHECK_FALSE(driver_available());
    CHECK((has(why, "no CUDA driver") || has(why, "no CUDA GPU")));
    CHECK_FALSE(Gpu::open(0, &why).has_value());
    CHECK(!why.empty());
  } else {
    CHECK(driver_available());
    CHECK_FALSE(Gpu::open(n, &why).has_value());
    CHECK(why == "no CUDA GPU with ordinal " + std::to_string(n) + " (the machine has " + std::to_string(n) + ")");
  }
  CHECK(error_text(715) == "CUDA_ERROR_ILLEGAL_INSTRUCTION (715): an illegal instruction was encountered");
  CHECK(has(error_text(1), "CUDA_ERROR_INVALID_VALUE (1)"));
}

TEST_CASE("gpu: the device's limits are those of DeviceLimits::h100_sxm() on an H100") {
  std::optional<Gpu> g = gpu_or_skip();
  if (!g) return;
  const DeviceLimits& l = g->limits();
  const DeviceLimits h = DeviceLimits::h100_sxm();
  MESSAGE("device " << l.name << ", compute capability " << l.cc_major << "." << l.cc_minor << ", " << l.sm_count
                    << " SMs, " << l.max_threads_per_block << " threads/block, block max " << l.max_block.x << "x"
                    << l.max_block.y << "x" << l.max_block.z << ", grid max " << l.max_grid.x << "x" << l.max_grid.y
                    << "x" << l.max_grid.z << ", shared/block " << l.shared_per_block << " (opt-in "
                    << l.shared_per_block_optin << "), registers/block " << l.registers_per_block << ", clusters "
                    << l.max_cluster_size << " (opt-in " << l.max_cluster_size_optin << ")");
  CHECK(l.sm_count > 0);
  if (l.cc_major != 9 || l.cc_minor != 0) {
    MESSAGE("not a compute capability 9.0 device: the H100 comparison is skipped");
    return;
  }
  CHECK(l.max_threads_per_block == h.max_threads_per_block);
  CHECK(l.max_block.x == h.max_block.x);
  CHECK(l.max_block.y == h.max_block.y);
  CHECK(l.max_block.z == h.max_block.z);
  CHECK(l.max_grid.x == h.max_grid.x);
  CHECK(l.max_grid.y == h.max_grid.y);
  CHECK(l.max_grid.z == h.max_grid.z);
  CHECK(l.shared_per_block == h.shared_per_block);
  CHECK(l.shared_per_block_optin == h.shared_per_block_optin);
  CHECK(l.registers_per_block == h.registers_per_block);
  CHECK(l.max_cluster_size == h.max_cluster_size);
  CHECK(l.warp_size == 32);
  if (has(l.name, "H100") && !has(l.name, "PCIe")) CHECK(l.sm_count == h.sm_count);
}

TEST_CASE("gpu: a hand-written kernel runs and computes y = 2x") {
  std::optional<Gpu> g = gpu_or_skip();
  if (!g) return;
  std::optional<Module> m;
  std::optional<Function> f = kernel(*g, kTwice, "twice", m);
  REQUIRE(f);
  CHECK(f->resources().max_threads_per_block == 1024);
  CHECK(f->resources().static_shared_bytes == 0);
  CHECK(f->resources().registers_per_thread > 0);
  MESSAGE("twice: " << f->resources().registers_per_thread << " registers; JIT log: " << m->info_log());

  const std::uint32_t n = 600;
  std::vector<float> x(n), y(n, -1.0f);
  for (std::uint32_t i = 0; i < n; ++i) x[i] = float(i) * 0.5f - 7;
  std::string why;
  auto dx = DeviceBuffer::alloc(*g, n * 4, &why);
  auto dy = DeviceBuffer::alloc(*g, n * 4, &why);
  REQUIRE(dx);
  REQUIRE(dy);
  REQUIRE(dx->upload(x, &why));
  REQUIRE(dy->fill(0, &why));
  LaunchResult r = launch(*f, config({(n + 127) / 128, 1, 1}, {128, 1, 1}),
                          {arg(dx->address()), arg(dy->address()), arg(n)});
  REQUIRE_MESSAGE(r.ok, r.message);
  CHECK(r.message.empty());
  CHECK(r.launched);
  REQUIRE(dy->download(y, &why));
  bool all = true;
  for (std::uint32_t i = 0; i < n; ++i) all = all && y[i] == 2 * x[i];
  CHECK(all);
  MESSAGE("twice, 600 elements: " << r.seconds * 1e6 << " us launch to completion");

  // void** arguments, as cuLaunchKernel takes them.
  std::uint64_t px = dx->address(), py = dy->address();
  std::uint32_t half = n / 2;
  REQUIRE(dy->fill(0, &why));
  void* args[] = {&px, &py, &half};
  r = launch(*f, config({(n + 127) / 128, 1, 1}, {128, 1, 1}), args);
  REQUIRE_MESSAGE(r.ok, r.message);
  REQUIRE(dy->download(y, &why));
  CHECK(y[half - 1] == 2 * x[half - 1]);
  CHECK(y[half] == 0.0f);

  // A wrong argument list is refused before the launch (cuFuncGetParamInfo).
  r = launch(*f, config({1, 1, 1}, {32, 1, 1}), {arg(dx->address()), arg(dy->address())});
  CHECK_FALSE(r.launched);
  CHECK(has(r.message, "has 3 parameters, 2 arguments given"));
  r = launch(*f, config({1, 1, 1}, {32, 1, 1}), {arg(dx->address()), arg(dy->address()), arg(std::uint64_t(n))});
  CHECK(has(r.message, "argument 2 has 8 bytes, the parameter 4"));

  // A copy outside the buffer is refused.
  CHECK_FALSE(dy->download(y.data(), n * 4 + 4, &why));
  CHECK(has(why, "outside the 2400-byte device buffer"));
}

TEST_CASE("gpu: a PTX JIT error returns the JIT's log") {
  std::optional<Gpu> g = gpu_or_skip();
  if (!g) return;
  std::string ptx = std::string(kPtxHeader) + R"(
.visible .entry broken(.param .u64 y)
{
  .reg .b32 %r<2>;
  mov.u32 %r1, %undeclared_register;
  ret;
}
)";
  std::string why;
  std::optional<Module> m = Module::load_ptx(*g, ptx, &why);
  CHECK_FALSE(m);
  CHECK(has(why, "cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX (218)"));
  CHECK(has(why, "JIT log:"));
  CHECK(has(why, "undeclared_register"));
  MESSAGE(why);

  // A kernel name the module does not have.
  std::optional<Module> ok = Module::load_ptx(*g, std::string(kPtxHeader) + kTwice, &why);
  REQUIRE(ok);
  CHECK_FALSE(ok->function("thrice", &why));
  CHECK(has(why, "kernel thrice: cuModuleGetFunction: CUDA_ERROR_NOT_FOUND"));
}

TEST_CASE("gpu: shared memory over the limit is refused by check_launch and fails on the GPU") {
  std::optional<Gpu> g = gpu_or_skip();
  if (!g) return;
  std::optional<Module> m;
  std::optional<Function> f = kernel(*g, kShared, "shared_user", m);
  REQUIRE(f);
  REQUIRE(f->resources().static_shared_bytes == 16384);
  const DeviceLimits& l = g->limits();
  std::string why;
  auto dy = DeviceBuffer::alloc(*g, 4, &why);
  REQUIRE(dy);
  auto run = [&](std::uint32_t dynamic, bool opt_in, const LaunchOptions& o) {
    LaunchConfig c = config({1, 1, 1}, {32, 1, 1});
    c.dynamic_shared_bytes = dynamic;
    c.shared_opt_in = opt_in;
    dy->fill(0);
    return launch(*f, c, {arg(dy->address()), arg(std::uint32_t(dynamic - 4))}, o);
  };
  auto result = [&] {
    std::uint32_t v = 0;
    dy->download(&v, 4);
    return v;
  };

  // Exactly the default 48 KiB with the static part: runs.
  const std::uint32_t fits = l.shared_per_block - 16384;
  LaunchResult r = run(fits, false, {});
  CHECK_MESSAGE(r.ok, r.message);
  CHECK(result() == 12);

  // One word more, without the opt-in: refused, and the driver refuses it too.
  r = run(fits + 4, false, {});
  CHECK_FALSE(r.launched);
  REQUIRE(r.issues.size() == 1);
  CHECK(r.issues[0].kind == LaunchIssue::Kind::SharedMemory);
  CHECK(has(r.message, "without the opt-in"));
  MESSAGE("refused: " << r.message);
  r = run(fits + 4, false, forced());
  CHECK_FALSE(r.ok);
  CHECK_FALSE(r.launched);
  CHECK(r.cuda_error != 0);
  MESSAGE("forced, 4 bytes over 48 KiB without the opt-in: " << r.message);

  // The opt-in maximum exactly: runs.
  const std::uint32_t most = l.shared_per_block_optin - 16384;
  r = run(most, true, {});
  CHECK_MESSAGE(r.ok, r.message);
  CHECK(result() == 12);
  // One word more: refused; forced, the driver refuses the opt-in itself.
  r = run(most + 4, true, {});
  CHECK_FALSE(r.launched);
  CHECK(has(r.message, "even with the opt-in"));
  r = run(most + 4, true, forced());
  CHECK_FALSE(r.ok);
  CHECK_FALSE(r.launched);
  CHECK(r.cuda_error != 0);
  MESSAGE("forced, 4 bytes over the opt-in maximum: " << r.message);
}

TEST_CASE("gpu: the register rule of check_launch is the driver's") {
  std::optional<Gpu> g = gpu_or_skip();
  if (!g) return;
  std::optional<Module> m;
  std::optional<Function> f = kernel(*g, register_hungry(100), "hungry", m);
  REQUIRE(f);
  const KernelResources k = f->resources();
  MESSAGE("hungry: " << k.registers_per_thread << " registers per thread, at most " << k.max_threads_per_block
                     << " threads per block");
  REQUIRE(k.max_threads_per_block < 1024);  // the registers must be what limits it
  KernelResources regs_only = k;
  regs_only.max_threads_per_block = 0;
  const std::uint32_t most = k.max_threads_per_block;
  CHECK(check_launch(g->limits(), regs_only, config({1, 1, 1}, {most, 1, 1})).empty());
  auto over = check_launch(g->limits(), regs_only, config({1, 1, 1}, {most + 32, 1, 1}));
  REQUIRE(over.size() == 1);
  CHECK(over[0].kind == LaunchIssue::Kind::Registers);
  MESSAGE("refused: " << over[0].message);

  std::string why;
  auto dx = DeviceBuffer::alloc(*g, 4 * 200, &why);
  auto dy = DeviceBuffer::alloc(*g, 4, &why);
  REQUIRE(dx);
  REQUIRE(dy);
  std::vector<float> x(200, 1.0f);
  REQUIRE(dx->upload(x, &why));
  LaunchResult r = launch(*f, config({1, 1, 1}, {most, 1, 1}), {arg(dx->address()), arg(dy->address())});
  CHECK_MESSAGE(r.ok, r.message);
  float y = 0;
  REQUIRE(dy->download(&y, 4, &why));
  CHECK(y == 100.0f);
  r = launch(*f, config({1, 1, 1}, {most + 32, 1, 1}), {arg(dx->address()), arg(dy->address())}, forced());
  CHECK_FALSE(r.ok);
  CHECK(r.cuda_error != 0);
  MESSAGE("forced, one warp more: " << r.message);
}

TEST_CASE("gpu: clusters run with cuLaunchKernelEx; over-limit clusters fail as check_launch says") {
  std::optional<Gpu> g = gpu_or_skip();
  if (!g) return;
  if (g->limits().max_cluster_size == 0) {
    MESSAGE("no clusters on " << g->limits().name);
    CHECK(g->limits().cc_major < 9);
    return;
  }
  std::optional<Module> m;
  std::optional<Function> f = kernel(*g, kRank, "rank", m);
  std::optional<Function> f2 = m->function("rank2");
  REQUIRE(f);
  REQUIRE(f2);
  std::string why;
  auto dy = DeviceBuffer::alloc(*g, 4 * 64, &why);
  REQUIRE(dy);
  auto ranks = [&](std::size_t n) {
    std::vector<std::uint32_t> v(n);
    dy->download(v.data(), 4 * n);
    return v;
  };

  LaunchConfig c = config({4, 1, 1}, {32, 1, 1});
  c.cluster = {2, 1, 1};
  LaunchResult r = launch(*f, c, {arg(dy->address())});
  REQUIRE_MESSAGE(r.ok, r.message);
  CHECK(ranks(4) == std::vector<std::uint32_t>{0, 1, 0, 1});

  // The kernel's .reqnctapercluster 2 applies to a plain launch too.
  LaunchConfig p = config({4, 1, 1}, {32, 1, 1});
  p.reqnctapercluster = {2, 1, 1};
  REQUIRE(dy->fill(0xff));
  r = launch(*f2, p, {arg(dy->address())});
  REQUIRE_MESSAGE(r.ok, r.message);
  CHECK(ranks(4) == std::vector<std::uint32_t>{0, 1, 0, 1});

  // 16 CTAs: refused without the opt-in, and the GPU refuses it too.
  LaunchConfig big = config({16, 1, 1}, {32, 1, 1});
  big.cluster = {16, 1, 1};
  r = launch(*f, big, {arg(dy->address())});
  CHECK_FALSE(r.launched);
  REQUIRE(r.issues.size() == 1);
  CHECK(r.issues[0].kind == LaunchIssue::Kind::ClusterSize);
  r = launch(*f, big, {arg(dy->address())}, forced());
  CHECK_FALSE(r.ok);
  CHECK(r.cuda_error != 0);
  MESSAGE("forced, cluster of 16 without the opt-in: " << r.message);
  // With it, 16 run.
  big.cluster_opt_in = true;
  r = launch(*f, big, {arg(dy->address())});
  CHECK_MESSAGE(r.ok, r.message);
  std::vector<std::uint32_t> want(16);
  for (std::uint32_t i = 0; i < 16; ++i) want[i] = i;
  CHECK(ranks(16) == want);
  // 32 is over even the opt-in.
  big.cluster = {32, 1, 1};
  big.grid = {32, 1, 1};
  CHECK_FALSE(launch(*f, big, {arg(dy->address())}).launched);
  r = launch(*f, big, {arg(dy->address())}, forced());
  CHECK_FALSE(r.ok);
  MESSAGE("forced, cluster of 32 with the opt-in: " << r.message);

  // A grid that is not whole clusters.
  LaunchConfig odd = config({3, 1, 1}, {32, 1, 1});
  odd.cluster = {2, 1, 1};
  CHECK_FALSE(launch(*f, odd, {arg(dy->address())}).launched);
  r = launch(*f, odd, {arg(dy->address())}, forced());
  CHECK_FALSE(r.ok);
  MESSAGE("forced, grid 3 in clusters of 2: " << r.message);
  odd.cluster = {1, 1, 1};
  odd.reqnctapercluster = {2, 1, 1};
  CHECK_FALSE(launch(*f2, odd, {arg(dy->address())}).launched);
  r = launch(*f2, odd, {arg(dy->address())}, forced());
  CHECK_FALSE(r.ok);
  MESSAGE("forced, grid 3 of a .reqnctapercluster 2 kernel: " << r.message);
}

TEST_CASE("gpu: block, grid, .reqntid and .maxntid violations fail on the GPU as check_launch says") {
  std::optional<Gpu> g = gpu_or_skip();
  if (!g) return;
  std::optional<Module> m;
  std::optional<Function> twice = kernel(*g, kTwice, "twice", m);
  std::optional<Module> m2;
  std::optional<Function> fixed = kernel(*g, kRank, "fixed", m2);
  std::optional<Function> bounded = m2->function("bounded");
  REQUIRE(twice);
  REQUIRE(fixed);
  REQUIRE(bounded);
  CHECK(bounded->resources().max_threads_per_block == 256);
  std::string why;
  auto d = DeviceBuffer::alloc(*g, 4, &why);
  REQUIRE(d);
  const std::vector<std::vector<std::uint8_t>> args = {arg(d->address()), arg(d->address()), arg(std::uint32_t(0))};

  struct Case {
    const char* what;
    Function* fn;
    LaunchConfig c;
    LaunchIssue::Kind kind;
  };
  LaunchConfig reqntid = config({1, 1, 1}, {64, 1, 1});
  reqntid.reqntid = {128, 1, 1};
  LaunchConfig maxntid = config({1, 1, 1}, {512, 1, 1});
  maxntid.maxntid = {256, 1, 1};
  std::vector<Case> cases = {
      {"block 2048 x 1 x 1", &*twice, config({1, 1, 1}, {2048, 1, 1}), LaunchIssue::Kind::BlockThreads},
      {"block 1 x 1 x 128", &*twice, config({1, 1, 1}, {1, 1, 128}), LaunchIssue::Kind::BlockDimension},
      {"grid y 65536", &*twice, config({1, 65536, 1}, {32, 1, 1}), LaunchIssue::Kind::GridDimension},
      {"grid 0", &*twice, config({0, 1, 1}, {32, 1, 1}), LaunchIssue::Kind::ZeroDimension},
      {".reqntid 128, block 64", &*fixed, reqntid, LaunchIssue::Kind::ReqNtid},
      {".maxntid 256, block 512", &*bounded, maxntid, LaunchIssue::Kind::MaxNtid},
  };
  for (Case& k : cases) {
    const std::string what = k.what;
    CAPTURE(what);
    const bool takes_args = k.fn == &*twice;
    const std::vector<std::vector<std::uint8_t>> none;
    LaunchResult r = launch(*k.fn, k.c, takes_args ? args : none);
    CHECK_FALSE(r.launched);
    bool named = false;
    for (const LaunchIssue& i : r.issues) named = named || i.kind == k.kind;
    CHECK(named);
    r = launch(*k.fn, k.c, takes_args ? args : none, forced());
    CHECK_FALSE(r.ok);
    CHECK(r.cuda_error != 0);
    MESSAGE("forced, " << what << ": " << r.message);
  }
  // A grid x beyond the y and z maximum runs.
  LaunchResult r = launch(*twice, config({65536 * 4, 1, 1}, {32, 1, 1}), args);
  CHECK_MESSAGE(r.ok, r.message);
}

TEST_CASE("gpu: a kernel still running at the timeout is reported, and the GPU is usable after") {
  std::optional<Gpu> g = gpu_or_skip();
  if (!g) return;
  std::optional<Module> m;
  std::optional<Function> f = kernel(*g, kSpin, "spin", m);
  REQUIRE(f);
  LaunchOptions o;
  o.timeout_seconds = 0.2;
  LaunchResult r = launch(*f, config({1, 1, 1}, {32, 1, 1}), {arg(std::uint64_t(1500000000))}, o);  // 1.5 s
  CHECK(r.launched);
  CHECK(r.timed_out);
  CHECK_FALSE(r.ok);
  CHECK(has(r.message, "kernel spin, grid (1,1,1) block (32,1,1), still running after 0.2"));
  MESSAGE(r.message);
  std::string why;
  CHECK_MESSAGE(g->synchronize(&why), why);
  r = launch(*f, config({1, 1, 1}, {32, 1, 1}), {arg(std::uint64_t(10000000))}, o);  // 10 ms
  CHECK_MESSAGE(r.ok, r.message);
  CHECK(r.seconds >= 0.01);
}

TEST_CASE("gpu: a tensor map is encoded, and a bad one is refused by the driver") {
  std::optional<Gpu> g = gpu_or_skip();
  if (!g) return;
  std::string why;
  auto d = DeviceBuffer::alloc(*g, 64 * 64 * 4, &why);
  REQUIRE(d);
  TensorMapTiled t;
  t.dtype = TensorMapDataType::F32;
  t.global_address = d->address();
  t.dims = {64, 64};
  t.strides = {64 * 4};
  t.box = {32, 16};
  std::optional<CuTensorMap> map = encode_tensor_map_tiled(*g, t, &why);
  CHECK_MESSAGE(map, why);
  t.global_address += 4;  // not 16-byte aligned
  CHECK_FALSE(encode_tensor_map_tiled(*g, t, &why));
  CHECK(has(why, "cuTensorMapEncodeTiled: CUDA_ERROR_INVALID_VALUE"));
  t.strides.clear();
  CHECK_FALSE(encode_tensor_map_tiled(*g, t, &why));
  CHECK(has(why, "one stride fewer than dimensions"));
}

// Last: a trap loses the context, and with it the process's use of CUDA.
TEST_CASE("gpu: a trap is reported by name with the kernel and launch, and the context is lost") {
  std::optional<Gpu> g = gpu_or_skip();
  if (!g) return;
  {
    std::optional<Module> m;
    std::optional<Function> f = kernel(*g, ".visible .entry K()\n{\n  trap;\n  ret;\n}\n", "K", m);
    REQUIRE(f);
    LaunchResult r = launch(*f, config({2, 2, 1}, {160, 1, 1}), std::vector<std::vector<std::uint8_t>>{});
    MESSAGE(r.message);
    CHECK_FALSE(r.ok);
    CHECK(r.launched);
    // An H100 (driver 580) reports PTX trap as CUDA_ERROR_LAUNCH_FAILED (719).
    CHECK(r.cuda_error == 719);
    CHECK(r.cuda_error_name == "CUDA_ERROR_LAUNCH_FAILED");
    CHECK(has(r.message, "CUDA_ERROR_LAUNCH_FAILED (719) in kernel K, grid (2,2,1) block (160,1,1): unspecified launch failure"));
    CHECK(r.context_lost);
    CHECK(has(r.message, "the process must be restarted"));
    std::string why;
    CHECK_FALSE(g->synchronize(&why));
    CHECK(has(why, "CUDA_ERROR_LAUNCH_FAILED"));
  }
  // As CUDA documents for this error, the process cannot use CUDA again:
  // even with every object of the context gone, a new one cannot be made.
  g.reset();
  std::string why;
  CHECK_FALSE(Gpu::open(0, &why));
  CHECK(has(why, "CUDA_ERROR_LAUNCH_FAILED"));
  MESSAGE("Gpu::open after the trap: " << why);
}
