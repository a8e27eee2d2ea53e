// tileverify/cuda.hpp — running PTX on a real GPU, optionally.
//
// Contract: this component compiles and links without the CUDA toolkit. The
// CUDA driver (libcuda.so.1) is opened with dlopen at the first call that
// needs it; on a machine without it, or without a GPU, every call returns an
// error string ("no CUDA driver (libcuda.so.1 not found)", "no CUDA GPU")
// and nothing throws or aborts. No function of this header lets an
// exception escape.
//
// The pieces:
//   - Gpu: one device and its primary context (shared with the CUDA runtime
//     of the same process), with the DeviceLimits the device reports;
//   - DeviceBuffer: device memory, freed on destruction;
//   - Module / Function: PTX loaded through the driver's JIT (a JIT error
//     returns the JIT's log), and a kernel of it with its KernelResources;
//   - check_launch: the launch configuration against DeviceLimits and
//     KernelResources, before anything runs. It needs no GPU, so it can be
//     used (and is tested) with DeviceLimits::h100_sxm() on any machine;
//   - launch: check_launch, then the launch, a synchronize, and the CUDA
//     error by name with the kernel and its launch configuration.
// docs/cuda.md is the user's guide.
#pragma once

#include "tileverify/eval.hpp"  // Dim3
#include "tileverify/program.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace tileverify::cuda {

// ----------------------------------------------------------------------------
// Limits of a device and resources of a kernel

// What a device allows one launch. Filled from a live GPU by Gpu::limits(),
// or by hand (h100_sxm()) to check launches on a machine without one.
struct DeviceLimits {
  std::string name;
  int cc_major = 0, cc_minor = 0;           // compute capability
  std::uint32_t max_threads_per_block = 0;  // 1024 on every current GPU
  Dim3 max_block{0, 0, 0};                  // largest block dimensions
  Dim3 max_grid{0, 0, 0};                   // largest grid dimensions
  std::uint32_t shared_per_block = 0;        // shared memory a block gets without the opt-in (48 KiB)
  std::uint32_t shared_per_block_optin = 0;  // with cudaFuncAttributeMaxDynamicSharedMemorySize
  std::uint32_t registers_per_block = 0;     // 32-bit registers
  std::uint32_t max_registers_per_thread = 255;
  // Cluster sizes (CTAs per cluster): the portable maximum, and the one a
  // kernel gets with cudaFuncAttributeNonPortableClusterSizeAllowed; 0: the
  // device has no clusters (before compute capability 9.0).
  std::uint32_t max_cluster_size = 0;
  std::uint32_t max_cluster_size_optin = 0;
  std::uint32_t sm_count = 0;
  std::uint32_t warp_size = 32;

  // An H100 SXM5 (compute capability 9.0, 132 SMs), from the CUDA C++
  // Programming Guide's "Technical Specifications per Compute Capability"
  // table and its "Thread Block Clusters" section; Gpu::limits() of a live
  // H100 gives the same numbers (docs/cuda.md quotes one).
  static DeviceLimits h100_sxm();
};

// What a compiled kernel uses, as cuFuncGetAttribute reports it
// (Function::resources()); on a machine without a GPU the caller fills it,
// e.g. from ptxas -v.
struct KernelResources {
  std::uint32_t static_shared_bytes = 0;    // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
  std::uint32_t registers_per_thread = 0;   // CU_FUNC_ATTRIBUTE_NUM_REGS
  // CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: the largest block this kernel
  // launches with, from its registers and .maxntid; 0: unknown.
  std::uint32_t max_threads_per_block = 0;
  std::uint32_t local_bytes_per_thread = 0;  // CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES (informative)
};

// One launch: its shape, dynamic shared memory and the kernel's own launch
// bounds (the PTX directives, all 0 when not given: bounds_from copies them
// from a lowered Program).
struct LaunchConfig {
  Dim3 grid, block;
  // 1x1x1: no cluster launch (a kernel with .reqnctapercluster still runs
  // in clusters of that shape, as <<<...>>> does).
  Dim3 cluster;
  std::uint32_t dynamic_shared_bytes = 0;
  // Raise the kernel's cudaFuncAttributeMaxDynamicSharedMemorySize to
  // dynamic_shared_bytes before launching, so a block may use more than the
  // default 48 KiB (up to DeviceLimits::shared_per_block_optin).
  bool shared_opt_in = false;
  // Set cudaFuncAttributeNonPortableClusterSizeAllowed, so a cluster may
  // have up to DeviceLimits::max_cluster_size_optin CTAs instead of 8.
  bool cluster_opt_in = false;
  std::array<std::uint32_t, 3> reqntid{}, maxntid{}, reqnctapercluster{};

  // Takes .reqntid, .maxntid and .reqnctapercluster from p.
  LaunchConfig& bounds_from(const Program& p) {
    reqntid = p.reqntid;
    maxntid = p.maxntid;
    reqnctapercluster = p.reqnctapercluster;
    return *this;
  }
};

// One way a launch configuration breaks a limit. `message` names the limit
// and the value; `value` and `limit` are the two numbers compared.
struct LaunchIssue {
  enum class Kind : std::uint8_t {
    ZeroDimension,      // a grid, block or cluster dimension of 0
    BlockThreads,       // threads per block over the device's maximum
    BlockDimension,     // one block dimension over the device's maximum
    GridDimension,      // one grid dimension over the device's maximum
    SharedMemory,       // static + dynamic shared memory over what the block may have
    Registers,          // registers of the block over the device's per-block file
    KernelMaxThreads,   // over the kernel's own maximum (cuFuncGetAttribute)
    ReqNtid,            // block differs from .reqntid
    MaxNtid,            // block over .maxntid
    ClusterUnsupported, // a cluster on a device without clusters
    ClusterSize,        // CTAs per cluster over the maximum
    ClusterShape,       // grid not a whole number of clusters
    ReqNctaPerCluster,  // cluster differs from .reqnctapercluster
  };
  Kind kind;
  std::string message;
  std::uint64_t value = 0, limit = 0;
};
const char* kind_name(LaunchIssue::Kind k);

// Every limit the configuration breaks (empty: the launch may go ahead). The
// rules and their sources are in the implementation (src/cuda/launch_check.cpp).
std::vector<LaunchIssue> check_launch(const DeviceLimits& device, const KernelResources& kernel,
                                      const LaunchConfig& config);
// "grid (2,2,1) block (160,1,1)", plus the cluster and dynamic shared memory when there are any.
std::string describe(const LaunchConfig& config);

// ----------------------------------------------------------------------------
// The driver

// Whether libcuda.so.1 could be loaded and initialized; why not otherwise.
bool driver_available(std::string* why = nullptr);
// The number of CUDA devices; 0 (and why) when there is no driver or GPU.
int device_count(std::string* why = nullptr);
// "CUDA_ERROR_ILLEGAL_INSTRUCTION (715): an illegal instruction was
// encountered" for a CUresult; works without a driver for the codes listed
// in the implementation, by number for others.
std::string error_text(int cuda_result);

namespace detail {
struct Context;
struct ModuleHandle;
struct LaunchAccess;
}  // namespace detail

class DeviceBuffer;
class Module;
class Function;

// A device with its primary context retained (released when the last Gpu,
// buffer, module or function of it goes). Copies share the context.
class Gpu {
 public:
  // The device `ordinal`; nullopt and the reason in *why without a driver,
  // without a GPU, or when the context cannot be made.
  static std::optional<Gpu> open(int ordinal = 0, std::string* why = nullptr);

  const DeviceLimits& limits() const { return limits_; }
  int ordinal() const { return ordinal_; }
  // Makes this device's context current on the calling thread (every call
  // of this header does so itself; this is for mixing in other driver code).
  bool make_current(std::string* why = nullptr) const;
  // Waits for the device; false and the CUDA error otherwise.
  bool synchronize(std::string* why = nullptr) const;

 private:
  friend class DeviceBuffer;
  friend class Module;
  friend struct detail::LaunchAccess;
  std::shared_ptr<detail::Context> ctx_;
  DeviceLimits limits_;
  int ordinal_ = 0;
};

// Device memory (cuMemAlloc), freed when destroyed. Move-only.
class DeviceBuffer {
 public:
  static std::optional<DeviceBuffer> alloc(const Gpu& gpu, std::size_t bytes, std::string* why = nullptr);
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  std::uint64_t address() const { return ptr_; }  // a CUdeviceptr, for kernel arguments
  std::size_t size() const { return bytes_; }
  // Copies bytes in or out at `offset`; false (and why) when the range is
  // outside the buffer or the copy fails.
  bool upload(const void* src, std::size_t bytes, std::string* why = nullptr, std::size_t offset = 0);
  bool download(void* dst, std::size_t bytes, std::string* why = nullptr, std::size_t offset = 0) const;
  bool fill(std::uint8_t byte, std::string* why = nullptr);  // cuMemsetD8 over the whole buffer

  template <class T>
  bool upload(const std::vector<T>& v, std::string* why = nullptr) {
    static_assert(std::is_trivially_copyable<T>::value, "upload copies bytes");
    return upload(v.data(), v.size() * sizeof(T), why);
  }
  template <class T>
  bool download(std::vector<T>& v, std::string* why = nullptr) const {
    static_assert(std::is_trivially_copyable<T>::value, "download copies bytes");
    return download(v.data(), v.size() * sizeof(T), why);
  }

 private:
  DeviceBuffer() = default;
  void release() noexcept;
  std::shared_ptr<detail::Context> ctx_;
  std::uint64_t ptr_ = 0;
  std::size_t bytes_ = 0;
};

// A PTX module loaded through the driver's JIT, unloaded when the module and
// every Function of it are gone.
class Module {
 public:
  // nullopt on a JIT error, with *why = "cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX
  // (218): ...; JIT log: <ptxas's messages>".
  static std::optional<Module> load_ptx(const Gpu& gpu, std::string_view ptx, std::string* why = nullptr);
  // The JIT's informational log of the load (ptxas notes), possibly empty.
  const std::string& info_log() const;
  std::optional<Function> function(const std::string& name, std::string* why = nullptr) const;

 private:
  Module() = default;
  std::shared_ptr<detail::ModuleHandle> mod_;
  DeviceLimits limits_;
};

// A kernel of a loaded Module.
class Function {
 public:
  const std::string& name() const { return name_; }
  const KernelResources& resources() const { return resources_; }
  const DeviceLimits& device_limits() const { return limits_; }
  // The driver-side opt-ins launch() sets from LaunchConfig; exposed for
  // callers that launch through other means.
  bool set_max_dynamic_shared(std::uint32_t bytes, std::string* why = nullptr);
  bool allow_non_portable_cluster(bool allow, std::string* why = nullptr);
  void* handle() const { return fn_; }  // the CUfunction

 private:
  friend class Module;
  friend struct detail::LaunchAccess;
  Function() = default;
  std::shared_ptr<detail::ModuleHandle> mod_;
  void* fn_ = nullptr;
  std::string name_;
  KernelResources resources_;
  DeviceLimits limits_;
};

// ----------------------------------------------------------------------------
// Launching

struct LaunchOptions {
  // Run check_launch first and refuse the launch on any issue (the default).
  // false launches whatever the configuration is: what the driver or the
  // GPU does with it is then the result (the tests use it to show that the
  // check agrees with the hardware).
  bool check = true;
  // Seconds to wait for the kernel; 0: wait as long as it runs. A kernel
  // still running then is reported as timed out. It cannot be stopped: it
  // keeps the GPU until it ends or the process exits.
  double timeout_seconds = 0;
};

struct LaunchResult {
  bool ok = false;        // launched and completed without a CUDA error
  bool launched = false;  // the driver accepted the launch
  bool timed_out = false;
  std::vector<LaunchIssue> issues;  // check_launch's, when it refused the launch
  int cuda_error = 0;               // the CUresult, 0 for none
  std::string cuda_error_name;      // "CUDA_ERROR_ILLEGAL_INSTRUCTION"
  // Empty when ok; otherwise one readable sentence (or the issues, a line each):
  // "CUDA_ERROR_ILLEGAL_INSTRUCTION (715) in kernel K, grid (2,2,1) block
  // (160,1,1): an illegal instruction was encountered".
  std::string message;
  double seconds = 0;  // launch to completion, wall clock
  // After an error of the kernel itself (an illegal address or instruction,
  // a trap) the context is unusable, and so is CUDA for the rest of the
  // process: the CUDA documentation of these errors says the process must be
  // restarted, and on an H100 Gpu::open then fails with the same error. Run
  // kernels that may fault in a child process to survive them.
  bool context_lost = false;
};

// Launches fn with args[i] pointing at the value of parameter i (as
// cuLaunchKernel's kernelParams), and waits for it.
LaunchResult launch(Function& fn, const LaunchConfig& config, void** args, const LaunchOptions& options = {});
// The same with each parameter's bytes (arg() makes them).
LaunchResult launch(Function& fn, const LaunchConfig& config, const std::vector<std::vector<std::uint8_t>>& args,
                    const LaunchOptions& options = {});

// A kernel argument's bytes: arg(buffer.address()), arg(n), arg(tensor_map).
template <class T>
std::vector<std::uint8_t> arg(const T& value) {
  static_assert(std::is_trivially_copyable<T>::value, "a kernel argument is its bytes");
  std::vector<std::uint8_t> b(sizeof(T));
  std::memcpy(b.data(), &value, sizeof(T));
  return b;
}

// ----------------------------------------------------------------------------
// TMA tensor maps (cuTensorMapEncodeTiled)

// The enum values are cuda.h's (CUtensorMapDataType etc.): ABI, stable.
enum class TensorMapDataType : std::uint32_t { U8 = 0, U16 = 1, U32 = 2, S32 = 3, U64 = 4, S64 = 5, F16 = 6, F32 = 7, F64 = 8, BF16 = 9, F32_FTZ = 10, TF32 = 11, TF32_FTZ = 12 };
enum class TensorMapSwizzle : std::uint32_t { None = 0, B32 = 1, B64 = 2, B128 = 3 };

struct TensorMapTiled {
  TensorMapDataType dtype = TensorMapDataType::F32;
  std::uint64_t global_address = 0;                 // 16-byte aligned
  std::vector<std::uint64_t> dims;                  // elements per dimension, innermost first (1 to 5)
  std::vector<std::uint64_t> strides;               // bytes, dimensions 1.. (dims.size() - 1 entries)
  std::vector<std::uint32_t> box;                   // box elements per dimension
  std::vector<std::uint32_t> element_strides;       // empty: all 1
  TensorMapSwizzle swizzle = TensorMapSwizzle::None;
  std::uint32_t interleave = 0, l2_promotion = 0, oob_fill = 0;  // cuda.h values; 0 = none
};
// The 128-byte CUtensorMap, passed to a kernel by value (arg(map)).
struct alignas(128) CuTensorMap {
  std::uint64_t opaque[16];
};
std::optional<CuTensorMap> encode_tensor_map_tiled(const Gpu& gpu, const TensorMapTiled& desc, std::string* why = nullptr);

}  // namespace tileverify::cuda
