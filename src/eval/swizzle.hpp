// The shared-memory layout of a TMA box: the swizzle modes of a tensor map
// (CU_TENSOR_MAP_SWIZZLE_32B / 64B / 128B), as pure functions, so that the
// TMA copies (machine_async.cpp) and the wgmma descriptors that read the same
// tiles agree on where each element lives.
//
// CUDA C++ Programming Guide, "Tensor Memory Access" (TMA swizzle): shared
// memory is seen as rows of 128 bytes cut in 16-byte chunks; with swizzle
// mode S (32, 64 or 128 bytes) the chunk index within each row is XORed with
// the row index modulo S / 16, so the pattern repeats every 8 rows of 128
// bytes for 128B (1024 bytes), 4 rows for 64B (512), 2 for 32B (256). In
// bits of the byte address: bits [4, 4 + k) ^= bits [7, 7 + k), k = log2(S /
// 16) (CUTLASS spells these Swizzle<k, 4, 3>). The pattern is one of
// absolute shared addresses, for TMA boxes that start off the repeat too
// (an H200: tools/gpu_checks/tma_swizzle_offset.cu): tileverify applies it to
// byte offsets within a buffer, which agree with the addresses because every
// buffer starts at a multiple of 1024 in the shared window.
// Internal to the library.
#pragma once

#include <cstdint>

namespace tileverify::machine {

// The swizzle span in bytes of TmaSwizzle None, B32, B64, B128 (0: none).
constexpr unsigned swizzle_span(unsigned mode) { return mode == 0 ? 0u : 16u << mode; }

// Bytes after which the pattern repeats (16: no swizzle, a chunk).
constexpr std::uint64_t swizzle_repeat(unsigned span) { return span == 0 ? 16 : std::uint64_t(span) * 8; }

// Where byte b of the unswizzled layout lands with a swizzle span of 0, 32,
// 64 or 128 bytes.
constexpr std::uint64_t swizzle_offset(std::uint64_t b, unsigned span) {
  if (span == 0) return b;
  const unsigned k = span == 32 ? 1 : span == 64 ? 2 : 3;
  const std::uint64_t mask = (std::uint64_t(1) << k) - 1;
  return b ^ (((b >> 7) & mask) << 4);
}

static_assert(swizzle_offset(0x80, 128) == 0x90, "row 1: chunk 0 -> 1");
static_assert(swizzle_offset(0x3f0, 128) == 0x380, "row 7, chunk 7 -> chunk 0");
static_assert(swizzle_offset(0x80, 32) == 0x90 && swizzle_offset(0x100, 32) == 0x100, "32B: bit 7 into bit 4");
static_assert(swizzle_offset(0x180, 64) == 0x1b0, "64B: row 3, chunk 0 -> 3");

}  // namespace tileverify::machine
