// check_launch against DeviceLimits::h100_sxm(), on any machine: every kind
// of violation with the numbers its message must name, and configurations
// at the limits accepted (docs/cuda.md, "Launch checks").
#include "tileverify/cuda.hpp"
#include "tileverify/ptx.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace tileverify;
using namespace tileverify::cuda;
using Kind = LaunchIssue::Kind;

namespace {

LaunchConfig config(Dim3 grid, Dim3 block) {
  LaunchConfig c;
  c.grid = grid;
  c.block = block;
  return c;
}

// The one issue of the list, which must be of kind k.
LaunchIssue only(const std::vector<LaunchIssue>& issues, Kind k) {
  REQUIRE(issues.size() == 1);
  CHECK(issues[0].kind == k);
  return issues[0];
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

const DeviceLimits kH100 = DeviceLimits::h100_sxm();

}  // namespace

TEST_CASE("launch check: the H100 limits are the programming guide's compute capability 9.0 column") {
  CHECK(kH100.cc_major == 9);
  CHECK(kH100.cc_minor == 0);
  CHECK(kH100.max_threads_per_block == 1024);
  CHECK(kH100.max_block.x == 1024);
  CHECK(kH100.max_block.z == 64);
  CHECK(kH100.max_grid.x == 2147483647u);
  CHECK(kH100.max_grid.y == 65535);
  CHECK(kH100.shared_per_block == 49152);
  CHECK(kH100.shared_per_block_optin == 232448);
  CHECK(kH100.registers_per_block == 65536);
  CHECK(kH100.max_cluster_size == 8);
  CHECK(kH100.max_cluster_size_optin == 16);
  CHECK(kH100.sm_count == 132);
}

TEST_CASE("launch check: valid configurations are accepted, up to each limit") {
  KernelResources k;
  k.registers_per_thread = 64;  // 64 x 1024 = 65536: exactly the register file
  k.static_shared_bytes = 16384;
  CHECK(check_launch(kH100, k, config({1, 1, 1}, {1, 1, 1})).empty());
  CHECK(check_launch(kH100, k, config({2147483647u, 65535, 65535}, {1024, 1, 1})).empty());
  CHECK(check_launch(kH100, k, config({4, 4, 1}, {16, 16, 4})).empty());
  CHECK(check_launch(kH100, k, config({4, 4, 1}, {1, 1, 64})).empty());

  LaunchConfig c = config({8, 1, 1}, {256, 1, 1});
  c.dynamic_shared_bytes = 49152 - 16384;  // exactly 48 KiB with the static part
  CHECK(check_launch(kH100, k, c).empty());
  c.dynamic_shared_bytes = 232448 - 16384;  // exactly the opt-in maximum
  c.shared_opt_in = true;
  CHECK(check_launch(kH100, k, c).empty());

  LaunchConfig cl = config({16, 2, 1}, {128, 1, 1});
  cl.cluster = {8, 1, 1};
  CHECK(check_launch(kH100, k, cl).empty());
  cl.cluster = {4, 4, 1};
  cl.grid = {16, 4, 1};
  cl.cluster_opt_in = true;
  CHECK(check_launch(kH100, k, cl).empty());

  // The kernel's bounds, met.
  LaunchConfig b = config({2, 1, 1}, {128, 1, 1});
  b.reqntid = {128, 1, 1};
  b.maxntid = {256, 0, 0};
  CHECK(check_launch(kH100, k, b).empty());
}

TEST_CASE("launch check: threads per block and block dimensions") {
  LaunchIssue i = only(check_launch(kH100, {}, config({1, 1, 1}, {32, 32, 2})), Kind::BlockThreads);
  CHECK(i.message == "block 32 x 32 x 2 has 2048 threads, more than the device's 1024 per block");
  CHECK(i.value == 2048);
  CHECK(i.limit == 1024);

  i = only(check_launch(kH100, {}, config({1, 1, 1}, {1, 1, 128})), Kind::BlockDimension);
  CHECK(i.message == "block dimension z = 128 exceeds the device's maximum 64");

  // Both at once: 2048 x 1 x 1 is too many threads and too wide.
  auto both = check_launch(kH100, {}, config({1, 1, 1}, {2048, 1, 1}));
  REQUIRE(both.size() == 2);
  CHECK(both[0].kind == Kind::BlockThreads);
  CHECK(both[1].kind == Kind::BlockDimension);
}

TEST_CASE("launch check: grid dimensions and zero dimensions") {
  LaunchIssue i = only(check_launch(kH100, {}, config({1, 65536, 1}, {32, 1, 1})), Kind::GridDimension);
  CHECK(i.message == "grid dimension y = 65536 exceeds the device's maximum 65535");
  i = only(check_launch(kH100, {}, config({1, 1, 70000}, {32, 1, 1})), Kind::GridDimension);
  CHECK(has(i.message, "grid dimension z = 70000"));

  i = only(check_launch(kH100, {}, config({0, 1, 1}, {32, 1, 1})), Kind::ZeroDimension);
  CHECK(i.message == "grid (0,1,1) has a dimension x of 0");
  i = only(check_launch(kH100, {}, config({1, 1, 1}, {32, 0, 1})), Kind::ZeroDimension);
  CHECK(has(i.message, "block (32,0,1)"));
}

TEST_CASE("launch check: shared memory without and with the opt-in") {
  KernelResources k;
  k.static_shared_bytes = 16384;
  LaunchConfig c = config({1, 1, 1}, {128, 1, 1});
  c.dynamic_shared_bytes = 100000;
  LaunchIssue i = only(check_launch(kH100, k, c), Kind::SharedMemory);
  CHECK(i.message ==
        "dynamic shared memory 100000 bytes + static 16384 exceeds the 49152 bytes a block gets without the opt-in "
        "(cudaFuncAttributeMaxDynamicSharedMemorySize); with it the device allows 232448");
  CHECK(i.value == 116384);
  CHECK(i.limit == 49152);

  c.shared_opt_in = true;  // the same launch, opted in: fine
  CHECK(check_launch(kH100, k, c).empty());

  c.dynamic_shared_bytes = 232448 - 16384 + 1;  // one byte over the opt-in maximum
  i = only(check_launch(kH100, k, c), Kind::SharedMemory);
  CHECK(has(i.message, "= 232449 exceeds the 232448 bytes a block can have on this device, even with the opt-in"));

  // One byte over 48 KiB, with no static part.
  LaunchConfig one = config({1, 1, 1}, {32, 1, 1});
  one.dynamic_shared_bytes = 49153;
  CHECK(only(check_launch(kH100, {}, one), Kind::SharedMemory).limit == 49152);
}

TEST_CASE("launch check: registers of the block") {
  KernelResources k;
  k.registers_per_thread = 255;
  LaunchIssue i = only(check_launch(kH100, k, config({1, 1, 1}, {1024, 1, 1})), Kind::Registers);
  CHECK(has(i.message, "registers: 255 per thread x 1024 threads = 261120"));
  CHECK(has(i.message, "> 65536 per block"));
  // 255 x 32 = 8160 rounds up to 8192 per warp: 32 warps hold 262144.
  CHECK(has(i.message, "32 warps x 8192 = 262144"));
  CHECK(i.value == 262144);

  // 255 registers: 8 warps (256 threads) fit exactly; 9 warps count as 12
  // (a multiple of the 4 SM sub-partitions).
  CHECK(check_launch(kH100, k, config({1, 1, 1}, {256, 1, 1})).empty());
  i = only(check_launch(kH100, k, config({1, 1, 1}, {288, 1, 1})), Kind::Registers);
  CHECK(i.value == 12 * 8192);
  CHECK(has(i.message, "9 warps counted as 12, a multiple of the 4 SM sub-partitions: 12 warps x 8192 = 98304"));

  // What an H100 does with a 206-register kernel (tests/cuda/gpu_test.cpp):
  // 256 threads launch, 288 do not, although 9 warps x 6656 = 59904 would fit.
  k.registers_per_thread = 206;
  CHECK(check_launch(kH100, k, config({1, 1, 1}, {256, 1, 1})).empty());
  CHECK(only(check_launch(kH100, k, config({1, 1, 1}, {288, 1, 1})), Kind::Registers).value == 12 * 6656);

  // More than 255 per thread.
  k.registers_per_thread = 256;
  auto over = check_launch(kH100, k, config({1, 1, 1}, {32, 1, 1}));
  REQUIRE(over.size() == 1);
  CHECK(over[0].message == "registers: 256 per thread, more than the device's 255");

  // The rounding alone: 65 registers x 1008 threads = 65520 fits the plain
  // product, but a warp takes 65 x 32 = 2080 -> 2304, and 32 warps 73728.
  k.registers_per_thread = 65;
  i = only(check_launch(kH100, k, config({1, 1, 1}, {1008, 1, 1})), Kind::Registers);
  CHECK(has(i.message, "= 65520 (allocated per warp in units of 256: 32 warps x 2304 = 73728) > 65536 per block"));
}

TEST_CASE("launch check: the kernel's own maximum block (cuFuncGetAttribute)") {
  KernelResources k;
  k.max_threads_per_block = 256;
  LaunchIssue i = only(check_launch(kH100, k, config({1, 1, 1}, {512, 1, 1})), Kind::KernelMaxThreads);
  CHECK(has(i.message, "block 512 x 1 x 1 has 512 threads, more than the 256 this kernel can launch with"));
  CHECK(check_launch(kH100, k, config({1, 1, 1}, {16, 16, 1})).empty());
}

TEST_CASE("launch check: .reqntid and .maxntid") {
  LaunchConfig c = config({1, 1, 1}, {64, 1, 1});
  c.reqntid = {128, 1, 1};
  LaunchIssue i = only(check_launch(kH100, {}, c), Kind::ReqNtid);
  CHECK(i.message == "block (64,1,1) differs from the kernel's .reqntid 128, 1, 1");
  // Same thread count, other shape: still a mismatch.
  c.block = {64, 2, 1};
  CHECK(only(check_launch(kH100, {}, c), Kind::ReqNtid).value == 128);
  // A directive with one dimension given: the others are 1.
  c.reqntid = {64, 2, 0};
  CHECK(check_launch(kH100, {}, c).empty());

  LaunchConfig m = config({1, 1, 1}, {32, 32, 1});
  m.maxntid = {256, 1, 1};
  i = only(check_launch(kH100, {}, m), Kind::MaxNtid);
  CHECK(i.message == "block 32 x 32 x 1 has 1024 threads, more than the kernel's .maxntid 256, 1, 1 (256)");
  // .maxntid bounds the product, not each dimension.
  m.block = {16, 16, 1};
  CHECK(check_launch(kH100, {}, m).empty());
}

TEST_CASE("launch check: cluster size, portable and with the opt-in") {
  LaunchConfig c = config({16, 1, 1}, {128, 1, 1});
  c.cluster = {16, 1, 1};
  LaunchIssue i = only(check_launch(kH100, {}, c), Kind::ClusterSize);
  CHECK(i.message ==
        "cluster 16 x 1 x 1 has 16 CTAs, more than the portable maximum 8 "
        "(cudaFuncAttributeNonPortableClusterSizeAllowed allows 16 on this device)");
  c.cluster_opt_in = true;
  CHECK(check_launch(kH100, {}, c).empty());
  c.cluster = {32, 1, 1};
  c.grid = {32, 1, 1};
  i = only(check_launch(kH100, {}, c), Kind::ClusterSize);
  CHECK(has(i.message, "more than the 16 this device allows with cudaFuncAttributeNonPortableClusterSizeAllowed"));
}

TEST_CASE("launch check: the grid is whole clusters; .reqnctapercluster") {
  LaunchConfig c = config({3, 1, 1}, {128, 1, 1});
  c.cluster = {2, 1, 1};
  LaunchIssue i = only(check_launch(kH100, {}, c), Kind::ClusterShape);
  CHECK(i.message == "grid (3,1,1) is not a whole number of clusters (2,1,1): dimension x 3 is not a multiple of 2");

  // Without a cluster in the launch, the kernel's .reqnctapercluster is the cluster.
  LaunchConfig r = config({3, 1, 1}, {128, 1, 1});
  r.reqnctapercluster = {2, 1, 1};
  CHECK(only(check_launch(kH100, {}, r), Kind::ClusterShape).limit == 2);
  r.grid = {4, 1, 1};
  CHECK(check_launch(kH100, {}, r).empty());
  // A launch cluster other than the kernel's.
  r.cluster = {4, 1, 1};
  i = only(check_launch(kH100, {}, r), Kind::ReqNctaPerCluster);
  CHECK(i.message == "cluster (4,1,1) differs from the kernel's .reqnctapercluster 2, 1, 1");
  // A .reqnctapercluster of 12: over the portable 8 even without a launch cluster.
  LaunchConfig big = config({12, 1, 1}, {32, 1, 1});
  big.reqnctapercluster = {12, 1, 1};
  CHECK(only(check_launch(kH100, {}, big), Kind::ClusterSize).value == 12);
}

TEST_CASE("launch check: a cluster on a device without clusters") {
  DeviceLimits a100 = kH100;
  a100.name = "A100";
  a100.cc_major = 8;
  a100.max_cluster_size = a100.max_cluster_size_optin = 0;
  LaunchConfig c = config({2, 1, 1}, {32, 1, 1});
  c.cluster = {2, 1, 1};
  LaunchIssue i = only(check_launch(a100, {}, c), Kind::ClusterUnsupported);
  CHECK(has(i.message, "compute capability 8.0; clusters need 9.0"));
  CHECK(check_launch(a100, {}, config({2, 1, 1}, {32, 1, 1})).empty());
}

TEST_CASE("launch check: several violations are all listed, each with its kind's name") {
  KernelResources k;
  k.static_shared_bytes = 40000;
  k.registers_per_thread = 128;
  LaunchConfig c = config({1, 70000, 1}, {1024, 1, 1});
  c.dynamic_shared_bytes = 20000;
  c.maxntid = {512, 1, 1};
  auto issues = check_launch(kH100, k, c);
  REQUIRE(issues.size() == 4);
  CHECK(std::string(kind_name(issues[0].kind)) == "grid_dimension");
  CHECK(std::string(kind_name(issues[1].kind)) == "shared_memory");
  CHECK(std::string(kind_name(issues[2].kind)) == "registers");
  CHECK(std::string(kind_name(issues[3].kind)) == "maxntid");
  CHECK(describe(c) == "grid (1,70000,1) block (1024,1,1) dynamic shared 20000 bytes");
}

TEST_CASE("launch check: bounds_from takes a lowered kernel's directives") {
  const char* ptx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p) .reqntid 64, 2 .reqnctapercluster 2, 1, 1
{
  ret;
}
)";
  auto m = ptx::parse_ptx(ptx);
  REQUIRE(m.module);
  auto p = ptx::lower_kernel(*m.module, "k");
  REQUIRE(p.program);
  LaunchConfig c = config({4, 1, 1}, {64, 2, 1});
  c.bounds_from(*p.program);
  CHECK(c.reqntid[0] == 64);
  CHECK(c.reqntid[1] == 2);
  CHECK(c.reqnctapercluster[0] == 2);
  CHECK(check_launch(kH100, {}, c).empty());
  c.block = {128, 1, 1};
  CHECK(only(check_launch(kH100, {}, c), Kind::ReqNtid).kind == Kind::ReqNtid);
}
