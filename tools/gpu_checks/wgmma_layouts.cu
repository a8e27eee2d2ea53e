// Checks the wgmma and stmatrix layouts of src/eval/warp_semantics.hpp on an
// H100 (sm_90a).
//
//   nvcc -std=c++17 -gencode arch=compute_90a,code=sm_90a tools/gpu_checks/wgmma_layouts.cu -o /tmp/wg && /tmp/wg
//
// (sm_90a, the "a" for the architecture-specific wgmma: with nvcc 13, -arch=sm_90a
// also embeds compute_90 PTX, which ptxas refuses for wgmma.) Last result:
// results/wgmma_layouts_h200.txt (ALL OK on an H200, the dynamic shared memory at 0x400).
//
// The device code knows nothing of the header: it copies a host-made image
// into shared memory, builds each descriptor as compilers do (the shared
// address of the tile >> 4, ORed with the host's layout bits), runs raw
// inline-PTX wgmma.mma_async with the accumulators the host gave, and dumps
// them. The host computes every expectation from the header (the descriptor
// decoding, wgmma_offset, wgmma_swizzle on the absolute shared address,
// wgmma_a_reg, wgmma_d), so a wrong formula shows as a MISMATCH line. Values
// are small integers, exact in f16, bf16, tf32 and f32, so the comparison is
// exact. Prints a line per family and "ALL OK" (exit 0) or "FAILED" (exit 1).
//
// Why the checks tell layouts apart: an mma cannot see a relabelling of K
// applied to both A and B alike, so each shared-memory layout of B is first
// checked against A from registers (whose layout is the mma.sync one,
// checked by warp_layouts.cu), and each layout of A against a B layout so
// checked. Every element of the shared image is random, so reading any other
// element than the header says changes D. Tiles start at offsets of 0, 32
// and 64 bytes from a 1024-byte boundary (how kernels step through K inside
// a 128-byte swizzle row), and N = 128 makes MN-major layouts use LBO.
// stmatrix: every lane stores distinct values to permuted row addresses.
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../../src/eval/warp_semantics.hpp"
#include "check_common.hpp"

namespace w = tileverify::warp;

// Small integers in each format's bits.
enum class Ty { F16, BF16, TF32 };
static uint16_t f16_bits(int v) {  // |v| <= 16
  if (v == 0) return 0;
  const uint16_t s = v < 0 ? 0x8000 : 0;
  unsigned a = unsigned(v < 0 ? -v : v);
  int e = 0;
  while ((a >> e) > 1) ++e;
  const unsigned frac = (a << (10 - e)) & 0x3ff;
  return uint16_t(s | uint16_t((e + 15) << 10) | frac);
}
static uint16_t bf16_bits(int v) {
  float f = float(v);
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return uint16_t(b >> 16);
}
static uint32_t f32_bits(int v) {
  float f = float(v);
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// ------------------------------------------------------------ wgmma wrappers
// (one per shape and type: the accumulator list is part of the asm string)

template <int SA, int TA, int TB>
__device__ void wg_ss_f16_16(float* d, uint64_t da, uint64_t db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, %11, %12, %13, %14;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
               : "l"(da), "l"(db), "r"(scale_d), "n"(SA), "n"(1), "n"(TA), "n"(TB));
}

template <int SA, int TB>
__device__ void wg_rs_f16_16(float* d, const uint32_t* a, uint64_t db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, p, %14, %15, %16;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d), "n"(SA), "n"(1), "n"(TB));
}

template <int SA, int TA, int TB>
__device__ void wg_ss_bf16_16(float* d, uint64_t da, uint64_t db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, %11, %12, %13, %14;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
               : "l"(da), "l"(db), "r"(scale_d), "n"(SA), "n"(1), "n"(TA), "n"(TB));
}

template <int SA, int TB>
__device__ void wg_rs_bf16_16(float* d, const uint32_t* a, uint64_t db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, p, %14, %15, %16;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d), "n"(SA), "n"(1), "n"(TB));
}

template <int SA, int TA, int TB>
__device__ void wg_ss_tf32_16(float* d, uint64_t da, uint64_t db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, %11, %12;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
               : "l"(da), "l"(db), "r"(scale_d), "n"(SA), "n"(1));
}

template <int SA, int TB>
__device__ void wg_rs_tf32_16(float* d, const uint32_t* a, uint64_t db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, p, %14, %15;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d), "n"(SA), "n"(1));
}

template <int SA, int TA, int TB>
__device__ void wg_ss_f16_64(float* d, uint64_t da, uint64_t db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, %35, %36, %37, %38;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
               : "l"(da), "l"(db), "r"(scale_d), "n"(SA), "n"(1), "n"(TA), "n"(TB));
}

template <int SA, int TB>
__device__ void wg_rs_f16_64(float* d, const uint32_t* a, uint64_t db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, %38, %39, %40;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d), "n"(SA), "n"(1), "n"(TB));
}

template <int SA, int TA, int TB>
__device__ void wg_ss_bf16_64(float* d, uint64_t da, uint64_t db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, %35, %36, %37, %38;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
               : "l"(da), "l"(db), "r"(scale_d), "n"(SA), "n"(1), "n"(TA), "n"(TB));
}

template <int SA, int TB>
__device__ void wg_rs_bf16_64(float* d, const uint32_t* a, uint64_t db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, %38, %39, %40;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d), "n"(SA), "n"(1), "n"(TB));
}

template <int SA, int TA, int TB>
__device__ void wg_ss_tf32_64(float* d, uint64_t da, uint64_t db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, %35, %36;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
               : "l"(da), "l"(db), "r"(scale_d), "n"(SA), "n"(1));
}

template <int SA, int TB>
__device__ void wg_rs_tf32_64(float* d, const uint32_t* a, uint64_t db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, %38, %39;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d), "n"(SA), "n"(1));
}

template <int SA, int TA, int TB>
__device__ void wg_ss_f16_128(float* d, uint64_t da, uint64_t db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, %67, %68, %69, %70;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
               : "l"(da), "l"(db), "r"(scale_d), "n"(SA), "n"(1), "n"(TA), "n"(TB));
}

template <int SA, int TB>
__device__ void wg_rs_f16_128(float* d, const uint32_t* a, uint64_t db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, %70, %71, %72;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d), "n"(SA), "n"(1), "n"(TB));
}

template <int SA, int TA, int TB>
__device__ void wg_ss_bf16_128(float* d, uint64_t da, uint64_t db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, %67, %68, %69, %70;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
               : "l"(da), "l"(db), "r"(scale_d), "n"(SA), "n"(1), "n"(TA), "n"(TB));
}

template <int SA, int TB>
__device__ void wg_rs_bf16_128(float* d, const uint32_t* a, uint64_t db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, %70, %71, %72;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d), "n"(SA), "n"(1), "n"(TB));
}

template <int SA, int TA, int TB>
__device__ void wg_ss_tf32_128(float* d, uint64_t da, uint64_t db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, %67, %68;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
               : "l"(da), "l"(db), "r"(scale_d), "n"(SA), "n"(1));
}

template <int SA, int TB>
__device__ void wg_rs_tf32_128(float* d, const uint32_t* a, uint64_t db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, %70, %71;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d), "n"(SA), "n"(1));
}

// One wgmma configuration.
struct Config {
  const char* family;
  Ty ty;
  int n;
  bool a_regs;
  bool ta, tb;  // MN-major A / B
  w::WgmmaSwizzle swa, swb;
  unsigned offa, offb;  // tile starts in the shared image (bytes)
  int sa;               // imm-scale-a
  int scale_d;
};

static constexpr unsigned kImage = 48 * 1024;  // the shared image, bytes

// The canonical strides this check lays a rows x k tile out with.
static void strides(w::WgmmaSwizzle s, bool mn_major, int rows, int k, int bytes, unsigned* lbo, unsigned* sbo) {
  const unsigned W = unsigned(w::wgmma_swizzle_bytes(s));
  if (!mn_major) {
    if (s == w::WgmmaSwizzle::None) {
      *sbo = 128;                       // core matrices along M/N: 128 bytes apart
      *lbo = unsigned(rows / 8) * 128;  // along K: after all of them
    } else {
      *sbo = 8 * W;
      *lbo = 16;  // unused by the layout (the hardware must ignore it)
    }
    return;
  }
  if (s == w::WgmmaSwizzle::None) {
    *sbo = 128;
    *lbo = unsigned(rows * bytes / 16) * 128;
    return;
  }
  *sbo = 8 * W;                          // 8 k rows per atom, atoms along K next
  *lbo = unsigned((k + 7) / 8) * 8 * W;  // then the next atom along M/N
}

template <int N, int TYI, int AREGS, int SA, int TA, int TB>
__global__ void wgmma_kernel(const uint32_t* image, const uint32_t* aregs, uint64_t fa, uint64_t fb, uint32_t offa,
                             uint32_t offb, const float* cinit, int scale_d, float* dout, uint32_t* base_out) {
  extern __shared__ __align__(1024) uint32_t smem[];
  const int tid = int(threadIdx.x);
  for (unsigned i = unsigned(tid); i < kImage / 4; i += 128) smem[i] = image[i];
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  const uint32_t base = uint32_t(__cvta_generic_to_shared(smem));
  if (tid == 0) *base_out = base;
  const uint64_t da = fa | uint64_t(((base + offa) >> 4) & 0x3fff), db = fb | uint64_t(((base + offb) >> 4) & 0x3fff);
  float d[N / 2];
  for (int i = 0; i < N / 2; ++i) d[i] = cinit[tid * (N / 2) + i];
  uint32_t a[4];
  for (int i = 0; i < 4; ++i) a[i] = aregs[tid * 4 + i];
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  if constexpr (N == 16 && TYI == 0) {
    if constexpr (AREGS) wg_rs_f16_16<SA, TB>(d, a, db, scale_d);
    else wg_ss_f16_16<SA, TA, TB>(d, da, db, scale_d);
  }
  if constexpr (N == 16 && TYI == 1) {
    if constexpr (AREGS) wg_rs_bf16_16<SA, TB>(d, a, db, scale_d);
    else wg_ss_bf16_16<SA, TA, TB>(d, da, db, scale_d);
  }
  if constexpr (N == 16 && TYI == 2) {
    if constexpr (AREGS) wg_rs_tf32_16<SA, TB>(d, a, db, scale_d);
    else wg_ss_tf32_16<SA, TA, TB>(d, da, db, scale_d);
  }
  if constexpr (N == 64 && TYI == 0) {
    if constexpr (AREGS) wg_rs_f16_64<SA, TB>(d, a, db, scale_d);
    else wg_ss_f16_64<SA, TA, TB>(d, da, db, scale_d);
  }
  if constexpr (N == 64 && TYI == 1) {
    if constexpr (AREGS) wg_rs_bf16_64<SA, TB>(d, a, db, scale_d);
    else wg_ss_bf16_64<SA, TA, TB>(d, da, db, scale_d);
  }
  if constexpr (N == 64 && TYI == 2) {
    if constexpr (AREGS) wg_rs_tf32_64<SA, TB>(d, a, db, scale_d);
    else wg_ss_tf32_64<SA, TA, TB>(d, da, db, scale_d);
  }
  if constexpr (N == 128 && TYI == 0) {
    if constexpr (AREGS) wg_rs_f16_128<SA, TB>(d, a, db, scale_d);
    else wg_ss_f16_128<SA, TA, TB>(d, da, db, scale_d);
  }
  if constexpr (N == 128 && TYI == 1) {
    if constexpr (AREGS) wg_rs_bf16_128<SA, TB>(d, a, db, scale_d);
    else wg_ss_bf16_128<SA, TA, TB>(d, da, db, scale_d);
  }
  if constexpr (N == 128 && TYI == 2) {
    if constexpr (AREGS) wg_rs_tf32_128<SA, TB>(d, a, db, scale_d);
    else wg_ss_tf32_128<SA, TA, TB>(d, da, db, scale_d);
  }
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  for (int i = 0; i < N / 2; ++i) dout[tid * (N / 2) + i] = d[i];
}

// Runs one configuration and compares D with the header's prediction.
template <int N, int TYI, int AREGS, int SA, int TA, int TB>
static void run(const Config& c) {
  const int k = TYI == 2 ? 8 : 16, bytes = TYI == 2 ? 4 : 2, nd = N / 2;
  // The image: random small integers in every element slot.
  std::vector<uint32_t> image(kImage / 4);
  std::vector<int> val(kImage / bytes);  // the integer in each element slot
  for (size_t i = 0; i < val.size(); ++i) val[i] = int(rnd() % 9) - 4;
  for (size_t i = 0; i < val.size(); ++i) {
    if (bytes == 4) {
      image[i] = f32_bits(val[i]);
    } else {
      const uint16_t h = TYI == 0 ? f16_bits(val[i]) : bf16_bits(val[i]);
      image[i / 2] |= uint32_t(h) << (16 * (i % 2));
    }
  }
  unsigned la, sa_, lb, sb;
  strides(c.swa, c.ta, 64, k, bytes, &la, &sa_);
  strides(c.swb, c.tb, N, k, bytes, &lb, &sb);
  w::WgmmaDesc fa{0, la, sa_, 0, c.swa}, fb{0, lb, sb, 0, c.swb};
  // A in registers: random integers placed by wgmma_a_reg.
  std::vector<int> Areg(64 * k);
  for (int& x : Areg) x = int(rnd() % 9) - 4;
  std::vector<uint32_t> aregs(128 * 4);
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < (bytes == 4 ? 4 : 8); ++i) {
      const w::RowCol rc = w::wgmma_a_reg(t, i, bytes == 4);
      const int v = Areg[rc.row * k + rc.col];
      if (bytes == 4) aregs[t * 4 + i] = f32_bits(v);
      else aregs[t * 4 + i / 2] |= uint32_t(TYI == 0 ? f16_bits(v) : bf16_bits(v)) << (16 * (i % 2));
    }
  std::vector<float> cinit(128 * nd);
  for (float& x : cinit) x = float(int(rnd() % 9) - 4);
  uint32_t *dimg, *dregs, *dbase;
  float *dc, *dd;
  CK(cudaMalloc(&dimg, kImage));
  CK(cudaMalloc(&dregs, aregs.size() * 4));
  CK(cudaMalloc(&dbase, 4));
  CK(cudaMalloc(&dc, cinit.size() * 4));
  CK(cudaMalloc(&dd, cinit.size() * 4));
  CK(cudaMemcpy(dimg, image.data(), kImage, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dregs, aregs.data(), aregs.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dc, cinit.data(), cinit.size() * 4, cudaMemcpyHostToDevice));
  auto kern = wgmma_kernel<N, TYI, AREGS, SA, TA, TB>;
  CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kImage)));
  kern<<<1, 128, kImage>>>(dimg, dregs, w::wgmma_encode(fa), w::wgmma_encode(fb), c.offa, c.offb, dc, c.scale_d, dd, dbase);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<float> dout(cinit.size());
  uint32_t base = 0;
  CK(cudaMemcpy(dout.data(), dd, dout.size() * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&base, dbase, 4, cudaMemcpyDeviceToHost));
  cudaFree(dimg);
  cudaFree(dregs);
  cudaFree(dbase);
  cudaFree(dc);
  cudaFree(dd);
  // The header's prediction: the descriptors as the device made them.
  auto element = [&](uint64_t desc, bool mn_major, int mn, int kk) {
    const w::WgmmaDesc dd_ = w::wgmma_decode(desc);
    const unsigned a = w::wgmma_swizzle(dd_.swizzle, dd_.start + w::wgmma_offset(mn_major, dd_.swizzle, dd_.lbo, dd_.sbo, mn, kk, bytes));
    const unsigned rel = a - base;
    if (a < base || rel + unsigned(bytes) > kImage) return 1000000;  // outside the image: cannot match
    return val[rel / unsigned(bytes)];
  };
  const uint64_t desc_a = w::wgmma_encode(fa) | (((base + c.offa) >> 4) & 0x3fff);
  const uint64_t desc_b = w::wgmma_encode(fb) | (((base + c.offb) >> 4) & 0x3fff);
  long bad = 0;
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < nd; ++i) {
      const w::RowCol rc = w::wgmma_d(t, i);
      long s = 0;
      for (int kk = 0; kk < k; ++kk) {
        const int av = AREGS ? Areg[rc.row * k + kk] : element(desc_a, c.ta, rc.row, kk);
        s += long(av) * long(element(desc_b, c.tb, rc.col, kk));
      }
      const double want = double(c.scale_d ? cinit[t * nd + i] : 0.0f) + double(SA) * double(s);
      if (double(dout[t * nd + i]) != want) {
        ++bad;
        mismatch("%s: thread %d d[%d] (row %d col %d): GPU %g, header %g", c.family, t, i, rc.row, rc.col,
                 double(dout[t * nd + i]), want);
      }
    }
  std::printf("%-58s base 0x%x: %s\n", c.family, base, bad ? "MISMATCH" : "OK");
}

// stmatrix.x4 (.trans or not): lane l holds the b16 values 8l + 2q + i in
// register q (i: low/high half); lane l gives row address perm(l) * 16.
template <bool TRANS>
__global__ void stmatrix_kernel(uint16_t* out) {
  __shared__ __align__(16) uint16_t s[32 * 8];
  const int lane = int(threadIdx.x);
  for (int i = lane; i < 32 * 8; i += 32) s[i] = 0xffff;
  __syncwarp();
  uint32_t r[4];
  for (int q = 0; q < 4; ++q) r[q] = uint32_t(8 * lane + 2 * q) | uint32_t(8 * lane + 2 * q + 1) << 16;
  const int perm = (lane * 13 + 5) % 32;
  const uint32_t addr = uint32_t(__cvta_generic_to_shared(s)) + uint32_t(perm) * 16;
  if (TRANS)
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r[0]),
                 "r"(r[1]), "r"(r[2]), "r"(r[3])
                 : "memory");
  else
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r[0]), "r"(r[1]),
                 "r"(r[2]), "r"(r[3])
                 : "memory");
  __syncwarp();
  for (int i = lane; i < 32 * 8; i += 32) out[i] = s[i];
}

template <bool TRANS>
static void check_stmatrix() {
  uint16_t* d;
  CK(cudaMalloc(&d, 512));
  stmatrix_kernel<TRANS><<<1, 32>>>(d);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  uint16_t out[256];
  CK(cudaMemcpy(out, d, 512, cudaMemcpyDeviceToHost));
  cudaFree(d);
  long bad = 0;
  for (int q = 0; q < 4; ++q)
    for (int lane = 0; lane < 32; ++lane)
      for (int i = 0; i < 2; ++i) {
        const w::RowCol rc = w::stmatrix_element(lane, i, TRANS);
        const int row_lane = w::ldmatrix_address_lane(q, rc.row);
        const int slot = ((row_lane * 13 + 5) % 32) * 8 + rc.col;
        if (out[slot] != 8 * lane + 2 * q + i) {
          ++bad;
          mismatch("stmatrix%s: matrix %d lane %d half %d: slot %d holds %d", TRANS ? ".trans" : "", q, lane, i, slot,
                   int(out[slot]));
        }
      }
  std::printf("%-58s %s\n", TRANS ? "stmatrix.x4.trans" : "stmatrix.x4", bad ? "MISMATCH" : "OK");
}

int main() {
  using S = w::WgmmaSwizzle;
  const S kSw[4] = {S::None, S::B32, S::B64, S::B128};
  const char* kName[4] = {"none", "32B", "64B", "128B"};
  char name[4][4][96];
  // B K-major and MN-major against A from registers, each swizzle; A in
  // each layout against B K-major 128B; tile starts 0, 32, 64 bytes in.
  for (int s = 0; s < 4; ++s) {
    std::snprintf(name[s][0], 96, "f16  A regs, B K-major %s, n64", kName[s]);
    run<64, 0, 1, 1, 0, 0>({name[s][0], Ty::F16, 64, true, false, false, S::None, kSw[s], 0, 0, 1, 1});
    std::snprintf(name[s][1], 96, "f16  A regs, B MN-major %s, n128", kName[s]);
    run<128, 0, 1, 1, 0, 1>({name[s][1], Ty::F16, 128, true, false, true, S::None, kSw[s], 0, 0, 1, 1});
    std::snprintf(name[s][2], 96, "f16  A K-major %s, B K-major 128B, n16", kName[s]);
    run<16, 0, 0, 1, 0, 0>({name[s][2], Ty::F16, 16, false, false, false, kSw[s], S::B128, 0, 16384, 1, 1});
    std::snprintf(name[s][3], 96, "f16  A MN-major %s, B K-major 128B, n16", kName[s]);
    run<16, 0, 0, 1, 1, 0>({name[s][3], Ty::F16, 16, false, true, false, kSw[s], S::B128, 0, 16384, 1, 1});
  }
  run<64, 0, 1, 1, 0, 0>({"f16  A regs, B K-major 128B at +32 bytes", Ty::F16, 64, true, false, false, S::None, S::B128, 0, 32, 1, 1});
  run<64, 0, 1, 1, 0, 0>({"f16  A regs, B K-major 128B at +64 bytes", Ty::F16, 64, true, false, false, S::None, S::B128, 0, 64, 1, 1});
  run<16, 0, 0, 1, 0, 0>({"f16  A K-major 64B at +32, B K-major 128B at +96", Ty::F16, 16, false, false, false, S::B64, S::B128, 32, 16384 + 96, 1, 1});
  run<64, 0, 1, 1, 0, 0>({"f16  A regs, B K-major 32B at +1024+32 (next atom)", Ty::F16, 64, true, false, false, S::None, S::B32, 0, 1024 + 256, 1, 1});
  run<64, 1, 1, 1, 0, 0>({"bf16 A regs, B K-major 128B, n64", Ty::BF16, 64, true, false, false, S::None, S::B128, 0, 0, 1, 1});
  run<16, 1, 0, 1, 1, 1>({"bf16 A MN-major 128B, B MN-major 64B, n16", Ty::BF16, 16, false, true, true, S::B128, S::B64, 0, 16384, 1, 1});
  for (int s = 0; s < 4; ++s) {
    static char tn[4][2][96];
    std::snprintf(tn[s][0], 96, "tf32 A regs, B K-major %s, n64", kName[s]);
    run<64, 2, 1, 1, 0, 0>({tn[s][0], Ty::TF32, 64, true, false, false, S::None, kSw[s], 0, 0, 1, 1});
    std::snprintf(tn[s][1], 96, "tf32 A K-major %s, B K-major 128B, n16", kName[s]);
    run<16, 2, 0, 1, 0, 0>({tn[s][1], Ty::TF32, 16, false, false, false, kSw[s], S::B128, 0, 16384, 1, 1});
  }
  run<64, 0, 1, -1, 0, 0>({"f16  imm-scale-a -1, scale-d 1", Ty::F16, 64, true, false, false, S::None, S::B128, 0, 0, -1, 1});
  run<64, 0, 1, 1, 0, 0>({"f16  scale-d 0 (the accumulators are not read)", Ty::F16, 64, true, false, false, S::None, S::B128, 0, 0, 1, 0});
  check_stmatrix<false>();
  check_stmatrix<true>();
  std::printf("%s (%ld mismatches)\n", g_mismatch ? "FAILED" : "ALL OK", g_mismatch);
  return g_mismatch ? 1 : 0;
}
