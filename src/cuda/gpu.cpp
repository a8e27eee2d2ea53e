// Gpu, DeviceBuffer, Module, Function, launch and tensor maps over the
// run-time loaded driver (driver.hpp). Every driver call's CUresult becomes
// a message; no exception leaves these functions (allocation failures of
// the host side are caught at the API boundary too).
#include "driver.hpp"
#include "tileverify/cuda.hpp"

#include <chrono>
#include <new>
#include <thread>

namespace tileverify::cuda {

namespace d = driver;

namespace detail {

// A retained primary context: released when the last holder goes.
struct Context {
  const d::Api* api = nullptr;
  d::CUdevice device = 0;
  d::CUcontext ctx = nullptr;
  Context() = default;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context() {
    if (api && ctx) api->cuDevicePrimaryCtxRelease(device);
  }
  bool make_current(std::string* why) const {
    d::CUresult r = api->cuCtxSetCurrent(ctx);
    if (r == d::CUDA_SUCCESS) return true;
    if (why) *why = d::call_error("cuCtxSetCurrent", r);
    return false;
  }
};

// A loaded module; keeps its context alive, unloads before releasing it.
struct ModuleHandle {
  std::shared_ptr<Context> ctx;
  d::CUmodule mod = nullptr;
  std::string info_log;
  ModuleHandle() = default;
  ModuleHandle(const ModuleHandle&) = delete;
  ModuleHandle& operator=(const ModuleHandle&) = delete;
  ~ModuleHandle() {
    // After a sticky error this fails; nothing more can be done then.
    if (mod && ctx->make_current(nullptr)) ctx->api->cuModuleUnload(mod);
  }
};

struct LaunchAccess {
  static const std::shared_ptr<ModuleHandle>& module(const Function& f) { return f.mod_; }
  static const std::shared_ptr<Context>& context(const Gpu& g) { return g.ctx_; }
};

}  // namespace detail

namespace {

void set(std::string* why, std::string text) {
  if (why) *why = std::move(text);
}

// Runs body, turning a host allocation failure or any other exception into
// an error message: nothing escapes the API.
template <class R, class F>
R guarded(std::string* why, R on_error, F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    set(why, "out of host memory");
  } catch (const std::exception& e) {
    set(why, std::string("internal error: ") + e.what());
  } catch (...) {
    set(why, "internal error");
  }
  return on_error;
}

bool check(d::CUresult r, const char* call, std::string* why) {
  if (r == d::CUDA_SUCCESS) return true;
  set(why, d::call_error(call, r));
  return false;
}

std::optional<DeviceLimits> read_limits(const d::Api& a, d::CUdevice dev, std::string* why) {
  DeviceLimits l;
  char name[256] = {};
  if (!check(a.cuDeviceGetName(name, sizeof name - 1, dev), "cuDeviceGetName", why)) return std::nullopt;
  l.name = name;
  bool ok = true;
  auto get = [&](int attribute) -> std::uint32_t {
    int v = 0;
    if (a.cuDeviceGetAttribute(&v, attribute, dev) != d::CUDA_SUCCESS) {
      // An attribute this driver does not know (an older one): 0, which
      // check_launch reads as "no such limit known"; only the basic ones
      // must be there.
      if (attribute < d::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) ok = false;
      return 0;
    }
    return v < 0 ? 0 : std::uint32_t(v);
  };
  l.cc_major = int(get(d::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR));
  l.cc_minor = int(get(d::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
  l.max_threads_per_block = get(d::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  l.max_block = Dim3{get(d::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X), get(d::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
                     get(d::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)};
  l.max_grid = Dim3{get(d::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X), get(d::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y),
                    get(d::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)};
  l.shared_per_block = get(d::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  l.shared_per_block_optin = get(d::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  if (l.shared_per_block_optin < l.shared_per_block) l.shared_per_block_optin = l.shared_per_block;
  l.registers_per_block = get(d::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  l.sm_count = get(d::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  l.warp_size = get(d::CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  l.max_registers_per_thread = 255;  // every architecture since 3.5; no attribute reports it
  // The driver reports whether clusters exist, not their maximum size; the
  // programming guide's "Thread Block Clusters" gives 8 portable and 16
  // with the non-portable opt-in (measured on an H100: docs/cuda.md).
  if (get(d::CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH)) {
    l.max_cluster_size = 8;
    l.max_cluster_size_optin = 16;
  }
  if (!ok) {
    set(why, "cuDeviceGetAttribute failed for a basic limit of " + l.name);
    return std::nullopt;
  }
  return l;
}

// Sticky errors (an illegal address or instruction, a trap) leave the
// context unusable: every later call returns the same error, and a fresh
// context cannot be made in this process either (measured on an H100).
bool context_broken(const d::Api& a) { return a.cuCtxSynchronize() != d::CUDA_SUCCESS; }

}  // namespace

// ----------------------------------------------------------------------------

bool driver_available(std::string* why) {
  return guarded(why, false, [&] { return d::api(why) != nullptr; });
}

int device_count(std::string* why) {
  return guarded(why, 0, [&] {
    const d::Api* a = d::api(why);
    if (!a) return 0;
    int n = 0;
    if (!check(a->cuDeviceGetCount(&n), "cuDeviceGetCount", why)) return 0;
    if (n == 0) set(why, "no CUDA GPU");
    return n;
  });
}

std::string error_text(int r) {
  return guarded(nullptr, std::string("CUDA error ") + std::to_string(r), [&] {
    return d::error_name(r) + " (" + std::to_string(r) + "): " + d::error_string(r);
  });
}

std::optional<Gpu> Gpu::open(int ordinal, std::string* why) {
  return guarded(why, std::optional<Gpu>(), [&]() -> std::optional<Gpu> {
    const d::Api* a = d::api(why);
    if (!a) return std::nullopt;
    int n = 0;
    if (!check(a->cuDeviceGetCount(&n), "cuDeviceGetCount", why)) return std::nullopt;
    if (n == 0) {
      set(why, "no CUDA GPU");
      return std::nullopt;
    }
    if (ordinal < 0 || ordinal >= n) {
      set(why, "no CUDA GPU with ordinal " + std::to_string(ordinal) + " (the machine has " + std::to_string(n) + ")");
      return std::nullopt;
    }
    auto ctx = std::make_shared<detail::Context>();
    ctx->api = a;
    if (!check(a->cuDeviceGet(&ctx->device, ordinal), "cuDeviceGet", why)) return std::nullopt;
    d::CUcontext c = nullptr;
    if (!check(a->cuDevicePrimaryCtxRetain(&c, ctx->device), "cuDevicePrimaryCtxRetain", why)) return std::nullopt;
    ctx->ctx = c;
    if (!ctx->make_current(why)) return std::nullopt;
    std::optional<DeviceLimits> limits = read_limits(*a, ctx->device, why);
    if (!limits) return std::nullopt;
    Gpu g;
    g.ctx_ = std::move(ctx);
    g.limits_ = std::move(*limits);
    g.ordinal_ = ordinal;
    return g;
  });
}

bool Gpu::make_current(std::string* why) const {
  return guarded(why, false, [&] { return ctx_->make_current(why); });
}

bool Gpu::synchronize(std::string* why) const {
  return guarded(why, false, [&] {
    return ctx_->make_current(why) && check(ctx_->api->cuCtxSynchronize(), "cuCtxSynchronize", why);
  });
}

// ----------------------------------------------------------------------------

std::optional<DeviceBuffer> DeviceBuffer::alloc(const Gpu& gpu, std::size_t bytes, std::string* why) {
  return guarded(why, std::optional<DeviceBuffer>(), [&]() -> std::optional<DeviceBuffer> {
    if (!gpu.ctx_->make_current(why)) return std::nullopt;
    DeviceBuffer b;
    b.ctx_ = gpu.ctx_;
    // cuMemAlloc refuses 0 bytes; a 0-byte buffer is an address of 0.
    if (bytes && !check(gpu.ctx_->api->cuMemAlloc(&b.ptr_, bytes), "cuMemAlloc", why)) return std::nullopt;
    b.bytes_ = bytes;
    return std::optional<DeviceBuffer>(std::move(b));
  });
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : ctx_(std::move(o.ctx_)), ptr_(o.ptr_), bytes_(o.bytes_) {
  o.ptr_ = 0;
  o.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    release();
    ctx_ = std::move(o.ctx_);
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = 0;
    o.bytes_ = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { release(); }

void DeviceBuffer::release() noexcept {
  if (ctx_ && ptr_ && ctx_->make_current(nullptr)) ctx_->api->cuMemFree(ptr_);
  ptr_ = 0;
  bytes_ = 0;
  ctx_.reset();
}

namespace {
bool in_range(std::size_t offset, std::size_t bytes, std::size_t size, std::string* why) {
  if (offset <= size && bytes <= size - offset) return true;
  set(why, "bytes " + std::to_string(offset) + ".." + std::to_string(offset + bytes) + " are outside the " +
               std::to_string(size) + "-byte device buffer");
  return false;
}
}  // namespace

bool DeviceBuffer::upload(const void* src, std::size_t bytes, std::string* why, std::size_t offset) {
  return guarded(why, false, [&] {
    if (!ctx_) return set(why, "moved-from device buffer"), false;
    if (!in_range(offset, bytes, bytes_, why)) return false;
    if (bytes == 0) return true;
    return ctx_->make_current(why) && check(ctx_->api->cuMemcpyHtoD(ptr_ + offset, src, bytes), "cuMemcpyHtoD", why);
  });
}

bool DeviceBuffer::download(void* dst, std::size_t bytes, std::string* why, std::size_t offset) const {
  return guarded(why, false, [&] {
    if (!ctx_) return set(why, "moved-from device buffer"), false;
    if (!in_range(offset, bytes, bytes_, why)) return false;
    if (bytes == 0) return true;
    return ctx_->make_current(why) && check(ctx_->api->cuMemcpyDtoH(dst, ptr_ + offset, bytes), "cuMemcpyDtoH", why);
  });
}

bool DeviceBuffer::fill(std::uint8_t byte, std::string* why) {
  return guarded(why, false, [&] {
    if (!ctx_) return set(why, "moved-from device buffer"), false;
    if (bytes_ == 0) return true;
    return ctx_->make_current(why) && check(ctx_->api->cuMemsetD8(ptr_, byte, bytes_), "cuMemsetD8", why);
  });
}

// ----------------------------------------------------------------------------

std::optional<Module> Module::load_ptx(const Gpu& gpu, std::string_view ptx, std::string* why) {
  return guarded(why, std::optional<Module>(), [&]() -> std::optional<Module> {
    const d::Api& a = *gpu.ctx_->api;
    if (!gpu.ctx_->make_current(why)) return std::nullopt;
    // The JIT writes its messages into these buffers, NUL-terminated, and
    // replaces each size with the bytes it wrote.
    std::string text(ptx);  // the driver reads a NUL-terminated image
    std::vector<char> error_log(64 * 1024, '\0'), info_log(64 * 1024, '\0');
    int options[] = {d::CU_JIT_ERROR_LOG_BUFFER, d::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, d::CU_JIT_INFO_LOG_BUFFER,
                     d::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, d::CU_JIT_LOG_VERBOSE};
    void* values[] = {error_log.data(), reinterpret_cast<void*>(std::uintptr_t(error_log.size() - 1)),
                      info_log.data(), reinterpret_cast<void*>(std::uintptr_t(info_log.size() - 1)),
                      reinterpret_cast<void*>(std::uintptr_t(1))};
    auto handle = std::make_shared<detail::ModuleHandle>();
    handle->ctx = gpu.ctx_;
    d::CUresult r = a.cuModuleLoadDataEx(&handle->mod, text.c_str(), 5, options, values);
    if (r != d::CUDA_SUCCESS) {
      handle->mod = nullptr;
      std::string log(error_log.data());
      while (!log.empty() && (log.back() == '\n' || log.back() == '\0')) log.pop_back();
      set(why, d::call_error("cuModuleLoadDataEx", r) + (log.empty() ? std::string() : "; JIT log:\n" + log));
      return std::nullopt;
    }
    handle->info_log = info_log.data();
    Module m;
    m.mod_ = std::move(handle);
    m.limits_ = gpu.limits_;
    return std::optional<Module>(std::move(m));
  });
}

const std::string& Module::info_log() const { return mod_->info_log; }

std::optional<Function> Module::function(const std::string& name, std::string* why) const {
  return guarded(why, std::optional<Function>(), [&]() -> std::optional<Function> {
    const d::Api& a = *mod_->ctx->api;
    if (!mod_->ctx->make_current(why)) return std::nullopt;
    d::CUfunction fn = nullptr;
    d::CUresult r = a.cuModuleGetFunction(&fn, mod_->mod, name.c_str());
    if (r != d::CUDA_SUCCESS) {
      set(why, "kernel " + name + ": " + d::call_error("cuModuleGetFunction", r));
      return std::nullopt;
    }
    auto attribute = [&](int which, std::uint32_t& into) {
      int v = 0;
      if (a.cuFuncGetAttribute(&v, which, fn) == d::CUDA_SUCCESS && v > 0) into = std::uint32_t(v);
    };
    Function f;
    attribute(d::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f.resources_.static_shared_bytes);
    attribute(d::CU_FUNC_ATTRIBUTE_NUM_REGS, f.resources_.registers_per_thread);
    attribute(d::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f.resources_.max_threads_per_block);
    attribute(d::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f.resources_.local_bytes_per_thread);
    f.mod_ = mod_;
    f.fn_ = fn;
    f.name_ = name;
    f.limits_ = limits_;
    return std::optional<Function>(std::move(f));
  });
}

bool Function::set_max_dynamic_shared(std::uint32_t bytes, std::string* why) {
  return guarded(why, false, [&] {
    if (!mod_->ctx->make_current(why)) return false;
    d::CUresult r = mod_->ctx->api->cuFuncSetAttribute(static_cast<d::CUfunction>(fn_),
                                                        d::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(bytes));
    return check(r, "cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)", why);
  });
}

bool Function::allow_non_portable_cluster(bool allow, std::string* why) {
  return guarded(why, false, [&] {
    if (!mod_->ctx->make_current(why)) return false;
    d::CUresult r = mod_->ctx->api->cuFuncSetAttribute(
        static_cast<d::CUfunction>(fn_), d::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, allow ? 1 : 0);
    return check(r, "cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED)", why);
  });
}

// ----------------------------------------------------------------------------

namespace {

std::string issues_text(const std::string& kernel, const LaunchConfig& c, const std::vector<LaunchIssue>& issues) {
  std::string s = "launch of kernel " + kernel + ", " + describe(c) + ", refused:";
  for (const LaunchIssue& i : issues) s += "\n  - " + i.message;
  return s;
}

void fail(LaunchResult& r, d::CUresult code, const std::string& what) {
  r.ok = false;
  r.cuda_error = code;
  r.cuda_error_name = d::error_name(code);
  r.message = r.cuda_error_name + " (" + std::to_string(code) + ") " + what + ": " + d::error_string(code);
}

LaunchResult launch_impl(Function& fn, const LaunchConfig& c, void** args, const LaunchOptions& o) {
  LaunchResult r;
  const std::string where = "kernel " + fn.name() + ", " + describe(c);
  if (o.check) {
    r.issues = check_launch(fn.device_limits(), fn.resources(), c);
    if (!r.issues.empty()) {
      r.message = issues_text(fn.name(), c, r.issues);
      return r;
    }
  }
  const auto& mod = detail::LaunchAccess::module(fn);
  const d::Api& a = *mod->ctx->api;
  if (!mod->ctx->make_current(&r.message)) return r;
  auto f = static_cast<d::CUfunction>(fn.handle());
  if (c.shared_opt_in) {
    d::CUresult e = a.cuFuncSetAttribute(f, d::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(c.dynamic_shared_bytes));
    if (e != d::CUDA_SUCCESS) {
      fail(r, e, "setting the dynamic shared memory opt-in of " + where);
      return r;
    }
  }
  if (c.cluster_opt_in) {
    d::CUresult e = a.cuFuncSetAttribute(f, d::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
    if (e != d::CUDA_SUCCESS) {
      fail(r, e, "setting the non-portable cluster opt-in of " + where);
      return r;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  d::CUresult e;
  if (c.cluster.count() != 1) {
    if (!a.cuLaunchKernelEx) {
      r.message = "a cluster launch needs cuLaunchKernelEx, which this CUDA driver lacks (it came with CUDA 11.8)";
      return r;
    }
    d::CUlaunchAttribute attr{};
    attr.id = d::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = c.cluster.x;
    attr.value.clusterDim.y = c.cluster.y;
    attr.value.clusterDim.z = c.cluster.z;
    d::CUlaunchConfig lc{c.grid.x,  c.grid.y, c.grid.z, c.block.x, c.block.y, c.block.z, c.dynamic_shared_bytes,
                         nullptr, &attr,    1};
    e = a.cuLaunchKernelEx(&lc, f, args, nullptr);
  } else {
    e = a.cuLaunchKernel(f, c.grid.x, c.grid.y, c.grid.z, c.block.x, c.block.y, c.block.z, c.dynamic_shared_bytes,
                         nullptr, args, nullptr);
  }
  if (e != d::CUDA_SUCCESS) {
    fail(r, e, "launching " + where);
    r.context_lost = context_broken(a);
    return r;
  }
  r.launched = true;
  if (o.timeout_seconds > 0 && a.cuStreamQuery) {
    // Poll the default stream, the one the launch went to, until it is
    // done or the time is up; sleeping between polls keeps a CPU free.
    const auto deadline = start + std::chrono::duration<double>(o.timeout_seconds);
    auto pause = std::chrono::microseconds(20);
    while ((e = a.cuStreamQuery(nullptr)) == d::CUDA_ERROR_NOT_READY) {
      if (std::chrono::steady_clock::now() >= deadline) {
        r.timed_out = true;
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        r.message = "kernel " + fn.name() + ", " + describe(c) + ", still running after " +
                    std::to_string(o.timeout_seconds) +
                    " s: it may hang. It cannot be stopped; the GPU stays busy until it ends or this process exits";
        return r;
      }
      std::this_thread::sleep_for(pause);
      if (pause < std::chrono::milliseconds(2)) pause *= 2;
    }
  }
  if (e == d::CUDA_SUCCESS) e = a.cuCtxSynchronize();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (e != d::CUDA_SUCCESS) {
    fail(r, e, "in " + where);
    r.context_lost = context_broken(a);
    if (r.context_lost)
      r.message += " (the CUDA context is lost: as CUDA documents for this error, the process must be restarted to "
                   "use the GPU again)";
    return r;
  }
  r.ok = true;
  return r;
}

}  // namespace

namespace {
// guarded() for a LaunchResult: the message is the result's own.
template <class F>
LaunchResult guarded_launch(F&& body) {
  std::string why;
  LaunchResult r = guarded(&why, LaunchResult(), std::forward<F>(body));
  if (!r.ok && r.message.empty()) r.message = why;
  return r;
}
}  // namespace

LaunchResult launch(Function& fn, const LaunchConfig& config, void** args, const LaunchOptions& options) {
  return guarded_launch([&] { return launch_impl(fn, config, args, options); });
}

LaunchResult launch(Function& fn, const LaunchConfig& config, const std::vector<std::vector<std::uint8_t>>& args,
                    const LaunchOptions& options) {
  return guarded_launch([&]() -> LaunchResult {
    const auto& mod = detail::LaunchAccess::module(fn);
    // With cuFuncGetParamInfo (CUDA 12.4), a wrong count or size of
    // arguments is refused here instead of letting the kernel read garbage.
    if (const d::Api* a = mod->ctx->api; a->cuFuncGetParamInfo && mod->ctx->make_current(nullptr)) {
      auto f = static_cast<d::CUfunction>(fn.handle());
      std::size_t offset = 0, size = 0, count = 0;
      while (a->cuFuncGetParamInfo(f, count, &offset, &size) == d::CUDA_SUCCESS) {
        if (count < args.size() && args[count].size() != size) {
          LaunchResult r;
          r.message = "kernel " + fn.name() + ": argument " + std::to_string(count) + " has " +
                      std::to_string(args[count].size()) + " bytes, the parameter " + std::to_string(size);
          return r;
        }
        ++count;
      }
      if (count != args.size()) {
        LaunchResult r;
        r.message = "kernel " + fn.name() + " has " + std::to_string(count) + " parameters, " +
                    std::to_string(args.size()) + " arguments given";
        return r;
      }
    }
    // Each argument at a 128-byte boundary (a CUtensorMap's alignment),
    // in storage of that alignment.
    std::vector<CuTensorMap> storage;
    std::size_t chunks = 0;
    for (const auto& b : args) chunks += (b.size() + sizeof(CuTensorMap) - 1) / sizeof(CuTensorMap) + (b.empty() ? 1 : 0);
    storage.resize(chunks);
    std::vector<void*> pointers;
    auto* bytes = reinterpret_cast<std::uint8_t*>(storage.data());
    std::size_t at = 0;
    for (const auto& b : args) {
      if (!b.empty()) std::memcpy(bytes + at, b.data(), b.size());
      pointers.push_back(bytes + at);
      at += ((b.size() + sizeof(CuTensorMap) - 1) / sizeof(CuTensorMap) + (b.empty() ? 1 : 0)) * sizeof(CuTensorMap);
    }
    return launch_impl(fn, config, pointers.empty() ? nullptr : pointers.data(), options);
  });
}

// ----------------------------------------------------------------------------

std::optional<CuTensorMap> encode_tensor_map_tiled(const Gpu& gpu, const TensorMapTiled& t, std::string* why) {
  // Filled in place: a 128-byte aligned value is not passed through guarded().
  std::optional<CuTensorMap> map;
  guarded(why, false, [&] {
    const d::Api& a = *detail::LaunchAccess::context(gpu)->api;
    if (!a.cuTensorMapEncodeTiled) {
      set(why, "tensor maps need cuTensorMapEncodeTiled, which this CUDA driver lacks (it came with CUDA 12.0)");
      return false;
    }
    const std::size_t rank = t.dims.size();
    if (rank < 1 || rank > 5 || t.strides.size() != rank - 1 || t.box.size() != rank ||
        (!t.element_strides.empty() && t.element_strides.size() != rank)) {
      set(why, "a tiled tensor map has 1 to 5 dimensions, with one stride fewer than dimensions and a box and "
               "element strides (if given) of one entry per dimension");
      return false;
    }
    std::vector<std::uint32_t> element_strides = t.element_strides;
    if (element_strides.empty()) element_strides.assign(rank, 1);
    map.emplace();
    d::CUresult r = a.cuTensorMapEncodeTiled(
        &*map, int(t.dtype), std::uint32_t(rank), reinterpret_cast<void*>(std::uintptr_t(t.global_address)),
        t.dims.data(), t.strides.empty() ? nullptr : t.strides.data(), t.box.data(), element_strides.data(),
        int(t.interleave), int(t.swizzle), int(t.l2_promotion), int(t.oob_fill));
    if (check(r, "cuTensorMapEncodeTiled", why)) return true;
    map.reset();
    return false;
  });
  return map;
}

}  // namespace tileverify::cuda
