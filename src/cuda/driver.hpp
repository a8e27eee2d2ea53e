// The CUDA driver API, declared here and loaded from libcuda.so.1 at run
// time, so that the library builds on machines without the CUDA toolkit (CI)
// and runs on machines without a GPU (every call then returns an error).
//
// Only what src/cuda/ uses is declared. Handles are opaque pointers; a
// CUresult is an int. The numeric constants and struct layouts below are
// values of cuda.h (CUDA 12/13 ABI): they are part of the driver's binary
// interface, which NVIDIA keeps stable (new behaviour gets new _vN entry
// points, which is why the _v2 names are the ones loaded).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tileverify::cuda::driver {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = std::uint64_t;
using CUcontext = struct CUctx_opaque*;
using CUmodule = struct CUmod_opaque*;
using CUfunction = struct CUfunc_opaque*;
using CUstream = struct CUstream_opaque*;

// values of cuda.h (CUDA 12/13 ABI): CUresult
constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_INVALID_PTX = 218;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;

// values of cuda.h (CUDA 12/13 ABI): CUdevice_attribute
constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8;
constexpr int CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 12;
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;
constexpr int CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH = 120;

// values of cuda.h (CUDA 12/13 ABI): CUfunction_attribute
constexpr int CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
constexpr int CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
constexpr int CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3;
constexpr int CU_FUNC_ATTRIBUTE_NUM_REGS = 4;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
constexpr int CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14;

// values of cuda.h (CUDA 12/13 ABI): CUjit_option
constexpr int CU_JIT_INFO_LOG_BUFFER = 3;
constexpr int CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
constexpr int CU_JIT_LOG_VERBOSE = 12;

// values of cuda.h (CUDA 12/13 ABI): CUlaunchAttributeID
constexpr int CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4;

// values of cuda.h (CUDA 12/13 ABI): CUlaunchAttribute (an enum id padded
// to 8 bytes, then a 64-byte union) and CUlaunchConfig.
struct CUlaunchAttribute {
  int id;
  char pad[4];
  union Value {
    char pad[64];
    std::uint64_t align;  // the union holds pointers in cuda.h
    struct {
      unsigned x, y, z;
    } clusterDim;
  } value;
};
static_assert(sizeof(CUlaunchAttribute) == 72, "CUlaunchAttribute layout of cuda.h");
struct CUlaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute* attrs;
  unsigned numAttrs;
};
static_assert(sizeof(CUlaunchConfig) == 56, "CUlaunchConfig layout of cuda.h");

// The entry points, under the symbol names libcuda.so.1 exports (the _v2
// names are what cuda.h's macros select for CUDA 12/13).
struct Api {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);  // cuDevicePrimaryCtxRelease_v2
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadDataEx)(CUmodule*, const void*, unsigned, int*, void**);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuFuncGetAttribute)(int*, int, CUfunction);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuMemAlloc)(CUdeviceptr*, std::size_t);                       // _v2
  CUresult (*cuMemFree)(CUdeviceptr);                                      // _v2
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, std::size_t);         // _v2
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, std::size_t);               // _v2
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, std::size_t);        // _v2
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void**, void**);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuGetErrorString)(CUresult, const char**);
  // Optional: absent from older drivers; null then, and the feature that
  // needs one says so.
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig*, CUfunction, void**, void**);  // 11.8
  CUresult (*cuStreamQuery)(CUstream);
  CUresult (*cuTensorMapEncodeTiled)(void*, int, std::uint32_t, void*, const std::uint64_t*, const std::uint64_t*,
                                     const std::uint32_t*, const std::uint32_t*, int, int, int, int);  // 12.0
  CUresult (*cuFuncGetParamInfo)(CUfunction, std::size_t, std::size_t*, std::size_t*);                // 12.4
};

// The loaded and initialized driver, or null with the reason: "no CUDA
// driver (libcuda.so.1 not found)", "no CUDA GPU (cuInit: ...)". Loaded
// once per process (thread-safe); the library stays loaded until exit.
const Api* api(std::string* why);

// "CUDA_ERROR_ILLEGAL_INSTRUCTION" / "an illegal instruction was
// encountered" from the driver, or a built-in table without one.
std::string error_name(CUresult r);
std::string error_string(CUresult r);
// "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory"
std::string call_error(const char* call, CUresult r);

}  // namespace tileverify::cuda::driver
