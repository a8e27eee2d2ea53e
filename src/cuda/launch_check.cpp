// check_launch: a launch configuration against the device's limits and the
// kernel's resources, without a GPU.
//
// Sources of the rules:
//   - CUDA C++ Programming Guide, appendix "Compute Capabilities", table
//     "Technical Specifications per Compute Capability": threads per block,
//     block and grid dimensions, shared memory per block (48 KB without the
//     opt-in, 227 KB with it on 9.0), 64 K 32-bit registers per block, 255
//     per thread;
//   - the same guide, "Shared Memory" (per compute capability): allocations
//     above 48 KB per block need dynamic shared memory and an explicit
//     opt-in, cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize);
//   - the same guide, "Thread Block Clusters": 8 thread blocks per cluster
//     is the portable maximum; H100 allows 16 with
//     cudaFuncAttributeNonPortableClusterSizeAllowed; the grid is a whole
//     number of clusters;
//   - the PTX ISA, "Performance-Tuning Directives": .reqntid (the block must
//     have exactly these dimensions), .maxntid (the block may have at most
//     the product's threads), .reqnctapercluster (the cluster shape);
//   - the CUDA Occupancy Calculator's register allocation: per warp, in units
//     of 256 registers, a block holding whole warps.
// What the driver and an H100 actually do with each violation is in
// tests/cuda/gpu_test.cpp and docs/cuda.md.
#include "tileverify/cuda.hpp"

#include <utility>

namespace tileverify::cuda {
namespace {

std::string dims(const Dim3& d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}
std::string times(const Dim3& d) {
  return std::to_string(d.x) + " x " + std::to_string(d.y) + " x " + std::to_string(d.z);
}
std::string triple(const std::array<std::uint32_t, 3>& a) {
  return std::to_string(a[0]) + ", " + std::to_string(a[1]) + ", " + std::to_string(a[2]);
}
// A PTX launch-bound directive: missing dimensions count as 1 (the PTX ISA
// lets .reqntid 128 stand for 128, 1, 1); all 0: not given.
bool given(const std::array<std::uint32_t, 3>& a) { return a[0] != 0 || a[1] != 0 || a[2] != 0; }
Dim3 as_dim(const std::array<std::uint32_t, 3>& a) {
  return Dim3{a[0] ? a[0] : 1, a[1] ? a[1] : 1, a[2] ? a[2] : 1};
}
bool same(const Dim3& a, const Dim3& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
std::uint32_t at(const Dim3& d, int i) { return i == 0 ? d.x : i == 1 ? d.y : d.z; }

struct Issues {
  std::vector<LaunchIssue> list;
  void add(LaunchIssue::Kind k, std::string message, std::uint64_t value, std::uint64_t limit) {
    list.push_back(LaunchIssue{k, std::move(message), value, limit});
  }
};

}  // namespace

const char* kind_name(LaunchIssue::Kind k) {
  using K = LaunchIssue::Kind;
  switch (k) {
    case K::ZeroDimension: return "zero_dimension";
    case K::BlockThreads: return "block_threads";
    case K::BlockDimension: return "block_dimension";
    case K::GridDimension: return "grid_dimension";
    case K::SharedMemory: return "shared_memory";
    case K::Registers: return "registers";
    case K::KernelMaxThreads: return "kernel_max_threads";
    case K::ReqNtid: return "reqntid";
    case K::MaxNtid: return "maxntid";
    case K::ClusterUnsupported: return "cluster_unsupported";
    case K::ClusterSize: return "cluster_size";
    case K::ClusterShape: return "cluster_shape";
    case K::ReqNctaPerCluster: return "reqnctapercluster";
  }
  return "?";
}

std::string describe(const LaunchConfig& c) {
  std::string s = "grid " + dims(c.grid) + " block " + dims(c.block);
  if (c.cluster.count() != 1) s += " cluster " + dims(c.cluster);
  if (c.dynamic_shared_bytes) s += " dynamic shared " + std::to_string(c.dynamic_shared_bytes) + " bytes";
  return s;
}

std::vector<LaunchIssue> check_launch(const DeviceLimits& dev, const KernelResources& k, const LaunchConfig& c) {
  using K = LaunchIssue::Kind;
  Issues out;
  static const char* const kAxis[3] = {"x", "y", "z"};

  // A dimension of 0 is an invalid launch (cudaErrorInvalidConfiguration
  // in the runtime, CUDA_ERROR_INVALID_VALUE in the driver).
  const std::pair<const char*, const Dim3*> shapes[] = {{"grid", &c.grid}, {"block", &c.block}, {"cluster", &c.cluster}};
  for (const auto& [what, d] : shapes)
    for (int i = 0; i < 3; ++i)
      if (at(*d, i) == 0)
        out.add(K::ZeroDimension, std::string(what) + " " + dims(*d) + " has a dimension " + kAxis[i] + " of 0", 0, 1);

  // Threads per block and block dimensions (Compute Capabilities table:
  // "Maximum number of threads per block", "Maximum x-, y- or z-dimension of a block").
  const std::uint64_t threads = c.block.count();
  if (dev.max_threads_per_block && threads > dev.max_threads_per_block)
    out.add(K::BlockThreads,
            "block " + times(c.block) + " has " + std::to_string(threads) + " threads, more than the device's " +
                std::to_string(dev.max_threads_per_block) + " per block",
            threads, dev.max_threads_per_block);
  for (int i = 0; i < 3; ++i)
    if (at(dev.max_block, i) && at(c.block, i) > at(dev.max_block, i))
      out.add(K::BlockDimension,
              "block dimension " + std::string(kAxis[i]) + " = " + std::to_string(at(c.block, i)) +
                  " exceeds the device's maximum " + std::to_string(at(dev.max_block, i)),
              at(c.block, i), at(dev.max_block, i));
  // "Maximum x-dimension of a grid of thread blocks" (2^31 - 1), y and z (65535).
  for (int i = 0; i < 3; ++i)
    if (at(dev.max_grid, i) && at(c.grid, i) > at(dev.max_grid, i))
      out.add(K::GridDimension,
              "grid dimension " + std::string(kAxis[i]) + " = " + std::to_string(at(c.grid, i)) +
                  " exceeds the device's maximum " + std::to_string(at(dev.max_grid, i)),
              at(c.grid, i), at(dev.max_grid, i));

  // Shared memory: static + dynamic within the default 48 KB per block, or,
  // with the opt-in, within the device's opt-in maximum (227 KB on 9.0).
  // The driver's own rule is the function attribute
  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, which is 48 KB minus
  // the static size until raised, and can be raised to the opt-in maximum
  // minus the static size: the same two bounds.
  const std::uint64_t shared = std::uint64_t(c.dynamic_shared_bytes) + k.static_shared_bytes;
  const std::string shared_text = "dynamic shared memory " + std::to_string(c.dynamic_shared_bytes) +
                                  " bytes + static " + std::to_string(k.static_shared_bytes);
  if (dev.shared_per_block_optin && shared > dev.shared_per_block_optin)
    out.add(K::SharedMemory,
            shared_text + " = " + std::to_string(shared) + " exceeds the " + std::to_string(dev.shared_per_block_optin) +
                " bytes a block can have on this device, even with the opt-in (cudaFuncAttributeMaxDynamicSharedMemorySize)",
            shared, dev.shared_per_block_optin);
  else if (!c.shared_opt_in && dev.shared_per_block && shared > dev.shared_per_block)
    out.add(K::SharedMemory,
            shared_text + " exceeds the " + std::to_string(dev.shared_per_block) +
                " bytes a block gets without the opt-in (cudaFuncAttributeMaxDynamicSharedMemorySize); with it the device allows " +
                std::to_string(dev.shared_per_block_optin),
            shared, dev.shared_per_block);

  // Registers (the CUDA Occupancy Calculator's rule, cuda_occupancy.h,
  // cudaOccMaxBlocksPerSMRegsLimit): a warp holds registers_per_thread x 32
  // rounded up to the allocation unit of 256, and the hardware's launch
  // check counts the block's warps rounded up to a multiple of the SM's
  // sub-partitions (4 on every architecture since 7.0), as if each
  // sub-partition held the same number. An H100 agrees: a 206-register
  // kernel launches with 256 threads, not 288 (tests/cuda/gpu_test.cpp).
  if (k.registers_per_thread && dev.registers_per_block && threads) {
    const std::uint64_t warp = dev.warp_size ? dev.warp_size : 32;
    const std::uint64_t partitions = dev.cc_major == 6 && dev.cc_minor == 0 ? 2 : 4;
    const std::uint64_t warps = (threads + warp - 1) / warp;
    const std::uint64_t counted = (warps + partitions - 1) / partitions * partitions;
    const std::uint64_t per_warp = (k.registers_per_thread * warp + 255) / 256 * 256;
    const std::uint64_t allocated = counted * per_warp;
    const std::uint64_t plain = threads * k.registers_per_thread;
    if (allocated > dev.registers_per_block) {
      std::string m = "registers: " + std::to_string(k.registers_per_thread) + " per thread x " + std::to_string(threads) +
                      " threads = " + std::to_string(plain);
      if (allocated != plain) {
        m += " (allocated per warp in units of 256: ";
        if (counted != warps)
          m += std::to_string(warps) + " warps counted as " + std::to_string(counted) + ", a multiple of the " +
               std::to_string(partitions) + " SM sub-partitions: ";
        m += std::to_string(counted) + " warps x " + std::to_string(per_warp) + " = " + std::to_string(allocated) + ")";
      }
      m += " > " + std::to_string(dev.registers_per_block) + " per block";
      out.add(K::Registers, std::move(m), allocated, dev.registers_per_block);
    }
  }
  if (dev.max_registers_per_thread && k.registers_per_thread > dev.max_registers_per_thread)
    out.add(K::Registers,
            "registers: " + std::to_string(k.registers_per_thread) + " per thread, more than the device's " +
                std::to_string(dev.max_registers_per_thread),
            k.registers_per_thread, dev.max_registers_per_thread);
  // The kernel's own maximum, which the driver computes from its registers
  // and .maxntid; over it the launch fails (CUDA_ERROR_INVALID_VALUE or
  // CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES).
  if (k.max_threads_per_block && threads > k.max_threads_per_block)
    out.add(K::KernelMaxThreads,
            "block " + times(c.block) + " has " + std::to_string(threads) + " threads, more than the " +
                std::to_string(k.max_threads_per_block) +
                " this kernel can launch with (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: its registers or .maxntid)",
            threads, k.max_threads_per_block);

  // The PTX launch bounds (PTX ISA, "Performance-Tuning Directives").
  if (given(c.reqntid) && !same(c.block, as_dim(c.reqntid)))
    out.add(K::ReqNtid, "block " + dims(c.block) + " differs from the kernel's .reqntid " + triple(c.reqntid), threads,
            as_dim(c.reqntid).count());
  if (given(c.maxntid) && threads > as_dim(c.maxntid).count())
    out.add(K::MaxNtid,
            "block " + times(c.block) + " has " + std::to_string(threads) + " threads, more than the kernel's .maxntid " +
                triple(c.maxntid) + " (" + std::to_string(as_dim(c.maxntid).count()) + ")",
            threads, as_dim(c.maxntid).count());

  // Clusters ("Thread Block Clusters"). The cluster a launch runs in is the
  // configuration's, else the kernel's .reqnctapercluster.
  const bool explicit_cluster = c.cluster.count() != 1;
  const Dim3 cluster = !explicit_cluster && given(c.reqnctapercluster) ? as_dim(c.reqnctapercluster) : c.cluster;
  if (cluster.count() > 1 || (explicit_cluster && cluster.count() != 0)) {
    const std::uint64_t ctas = cluster.count();
    if (dev.max_cluster_size == 0) {
      out.add(K::ClusterUnsupported,
              "cluster " + times(cluster) + " on a device without thread block clusters (compute capability " +
                  std::to_string(dev.cc_major) + "." + std::to_string(dev.cc_minor) + "; clusters need 9.0)",
              ctas, 1);
    } else {
      const std::uint32_t max = c.cluster_opt_in ? dev.max_cluster_size_optin : dev.max_cluster_size;
      if (ctas > max) {
        std::string m = "cluster " + times(cluster) + " has " + std::to_string(ctas) + " CTAs, more than ";
        if (c.cluster_opt_in)
          m += "the " + std::to_string(max) + " this device allows with cudaFuncAttributeNonPortableClusterSizeAllowed";
        else
          m += "the portable maximum " + std::to_string(max) +
               (dev.max_cluster_size_optin > max
                    ? " (cudaFuncAttributeNonPortableClusterSizeAllowed allows " +
                          std::to_string(dev.max_cluster_size_optin) + " on this device)"
                    : std::string());
        out.add(K::ClusterSize, std::move(m), ctas, max);
      }
    }
    for (int i = 0; i < 3; ++i)
      if (at(cluster, i) && at(c.grid, i) % at(cluster, i) != 0)
        out.add(K::ClusterShape,
                "grid " + dims(c.grid) + " is not a whole number of clusters " + dims(cluster) + ": dimension " +
                    kAxis[i] + " " + std::to_string(at(c.grid, i)) + " is not a multiple of " +
                    std::to_string(at(cluster, i)),
                at(c.grid, i), at(cluster, i));
  }
  if (explicit_cluster && given(c.reqnctapercluster) && !same(c.cluster, as_dim(c.reqnctapercluster)))
    out.add(K::ReqNctaPerCluster,
            "cluster " + dims(c.cluster) + " differs from the kernel's .reqnctapercluster " + triple(c.reqnctapercluster),
            c.cluster.count(), as_dim(c.reqnctapercluster).count());
  return std::move(out.list);
}

DeviceLimits DeviceLimits::h100_sxm() {
  DeviceLimits d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.cc_major = 9;
  d.cc_minor = 0;
  // Compute Capabilities table, column 9.0.
  d.max_threads_per_block = 1024;
  d.max_block = Dim3{1024, 1024, 64};
  d.max_grid = Dim3{2147483647u, 65535, 65535};
  d.shared_per_block = 48 * 1024;         // 48 KB without the opt-in
  d.shared_per_block_optin = 227 * 1024;  // 227 KB = 232448 bytes with it
  d.registers_per_block = 64 * 1024;
  d.max_registers_per_thread = 255;
  // "Thread Block Clusters": 8 portable, 16 with the non-portable opt-in.
  d.max_cluster_size = 8;
  d.max_cluster_size_optin = 16;
  d.sm_count = 132;  // H100 SXM5 (the PCIe card has 114)
  d.warp_size = 32;
  return d;
}

}  // namespace tileverify::cuda
