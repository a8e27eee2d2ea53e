#include "driver.hpp"

#include <dlfcn.h>

#include <mutex>

namespace tileverify::cuda::driver {
namespace {

struct Loaded {
  Api api{};
  bool ok = false;
  std::string why;
};

template <class F>
bool bind(void* lib, const char* symbol, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, symbol));
  return fn != nullptr;
}

Loaded load() {
  Loaded l;
  // RTLD_LOCAL: the driver's symbols stay out of the global namespace, so a
  // CUDA runtime the application links sees its own libcuda handle unchanged.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    l.why = "no CUDA driver (libcuda.so.1 not found)";
    return l;
  }
  Api& a = l.api;
  const char* missing = nullptr;
  auto need = [&](const char* symbol, auto& fn) {
    if (!bind(lib, symbol, fn) && !missing) missing = symbol;
  };
  need("cuInit", a.cuInit);
  need("cuDeviceGet", a.cuDeviceGet);
  need("cuDeviceGetCount", a.cuDeviceGetCount);
  need("cuDeviceGetName", a.cuDeviceGetName);
  need("cuDeviceGetAttribute", a.cuDeviceGetAttribute);
  need("cuDevicePrimaryCtxRetain", a.cuDevicePrimaryCtxRetain);
  need("cuDevicePrimaryCtxRelease_v2", a.cuDevicePrimaryCtxRelease);
  need("cuCtxSetCurrent", a.cuCtxSetCurrent);
  need("cuCtxSynchronize", a.cuCtxSynchronize);
  need("cuModuleLoadDataEx", a.cuModuleLoadDataEx);
  need("cuModuleUnload", a.cuModuleUnload);
  need("cuModuleGetFunction", a.cuModuleGetFunction);
  need("cuFuncGetAttribute", a.cuFuncGetAttribute);
  need("cuFuncSetAttribute", a.cuFuncSetAttribute);
  need("cuMemAlloc_v2", a.cuMemAlloc);
  need("cuMemFree_v2", a.cuMemFree);
  need("cuMemcpyHtoD_v2", a.cuMemcpyHtoD);
  need("cuMemcpyDtoH_v2", a.cuMemcpyDtoH);
  need("cuMemsetD8_v2", a.cuMemsetD8);
  need("cuLaunchKernel", a.cuLaunchKernel);
  need("cuGetErrorName", a.cuGetErrorName);
  need("cuGetErrorString", a.cuGetErrorString);
  bind(lib, "cuLaunchKernelEx", a.cuLaunchKernelEx);
  bind(lib, "cuStreamQuery", a.cuStreamQuery);
  bind(lib, "cuTensorMapEncodeTiled", a.cuTensorMapEncodeTiled);
  bind(lib, "cuFuncGetParamInfo", a.cuFuncGetParamInfo);
  if (missing) {
    // A libcuda.so.1 this old (before CUDA 9) or broken cannot be used;
    // the handle stays open, which costs nothing and avoids racing a user.
    l.why = std::string("CUDA driver too old: libcuda.so.1 has no ") + missing;
    return l;
  }
  CUresult r = a.cuInit(0);
  if (r == CUDA_ERROR_NO_DEVICE) {
    l.why = "no CUDA GPU (cuInit: " + error_name(r) + ")";
    return l;
  }
  if (r != CUDA_SUCCESS) {
    l.why = "the CUDA driver did not initialize: " + call_error("cuInit", r);
    return l;
  }
  l.ok = true;
  return l;
}

const Loaded& loaded() {
  // A function-local static: initialized once, thread-safe (C++11).
  static const Loaded l = load();
  return l;
}

// Without a driver cuGetErrorName is not there; these are the codes a user
// of this component meets most (values of cuda.h (CUDA 12/13 ABI)).
struct Known {
  int code;
  const char* name;
  const char* text;
};
constexpr Known kKnown[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {600, "CUDA_ERROR_NOT_READY", "device not ready"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
    {702, "CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"},
    {710, "CUDA_ERROR_ASSERT", "device-side assert triggered"},
    {714, "CUDA_ERROR_HARDWARE_STACK_ERROR", "hardware stack error"},
    {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION", "an illegal instruction was encountered"},
    {716, "CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {912, "CUDA_ERROR_INVALID_CLUSTER_SIZE", "invalid cluster size"},
};

const Known* known(CUresult r) {
  for (const Known& k : kKnown)
    if (k.code == r) return &k;
  return nullptr;
}

// The driver's loader, even when cuInit failed: cuGetErrorName needs no
// initialized driver.
const Api* any_api() {
  const Loaded& l = loaded();
  return l.api.cuGetErrorName ? &l.api : nullptr;
}

}  // namespace

const Api* api(std::string* why) {
  const Loaded& l = loaded();
  if (l.ok) return &l.api;
  if (why) *why = l.why;
  return nullptr;
}

std::string error_name(CUresult r) {
  if (const Api* a = any_api()) {
    const char* s = nullptr;
    if (a->cuGetErrorName(r, &s) == CUDA_SUCCESS && s) return s;
  }
  if (const Known* k = known(r)) return k->name;
  return "CUDA error " + std::to_string(r);
}

std::string error_string(CUresult r) {
  if (const Api* a = any_api()) {
    const char* s = nullptr;
    if (a->cuGetErrorString(r, &s) == CUDA_SUCCESS && s) return s;
  }
  if (const Known* k = known(r)) return k->text;
  return "unknown error";
}

std::string call_error(const char* call, CUresult r) {
  return std::string(call) + ": " + error_name(r) + " (" + std::to_string(r) + "): " + error_string(r);
}

}  // namespace tileverify::cuda::driver
