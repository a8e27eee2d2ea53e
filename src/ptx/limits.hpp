// The memory a CTA and a thread can have, by PTX .target: what lower.cpp
// checks declarations and launches against, so that a size no GPU has is an
// error about the input, not an allocation that aborts the run.
//
// The numbers are the CUDA C++ Programming Guide's, appendix "Compute
// Capabilities", table "Technical Specifications per Compute Capability":
// "Maximum amount of shared memory per thread block", "Amount of local
// memory per thread" and "Constant memory size"; the 48 KB bound on
// statically sized shared memory is the same guide's ("Kernels relying on
// shared memory allocations over 48 KB per block are architecture-specific,
// and must use dynamic shared memory rather than statically sized shared
// memory arrays"). A KB is 1024 bytes there.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tileverify::ptx::limits {

constexpr std::uint64_t kKB = 1024;
constexpr std::uint64_t kStaticShared = 48 * kKB;     // statically sized .shared per CTA, every target
constexpr std::uint64_t kLocalPerThread = 512 * kKB;  // .local per thread, every target
constexpr std::uint64_t kConstant = 64 * kKB;         // .const data, every target
// A kernel's parameters, all together: 32764 bytes from Volta on with CUDA
// 12.1 (CUDA C++ Programming Guide, "Function Parameters"; 4 KB before).
constexpr std::uint64_t kMaxParamBytes = 32764;

// Where a message says the numbers come from.
inline const char* source() {
  return "CUDA C++ Programming Guide, technical specifications per compute capability";
}

// The compute capability a .target names, times ten plus the minor version
// as PTX spells it: "sm_90a" -> 90, "sm_100f" -> 100, "compute_80" -> 80;
// 0 for none or a name that is not of that form.
inline int compute_capability(std::string_view target) {
  for (std::string_view prefix : {"sm_", "compute_"}) {
    if (target.substr(0, prefix.size()) != prefix) continue;
    int cc = 0;
    std::size_t i = prefix.size();
    for (; i < target.size() && target[i] >= '0' && target[i] <= '9' && cc < 10000; ++i) cc = cc * 10 + (target[i] - '0');
    return i > prefix.size() ? cc : 0;
  }
  return 0;
}

// The most shared memory (static and dynamic together, with the opt-in of
// cudaFuncSetAttribute) one CTA can have on a compute capability the table
// lists; 0 for one it does not.
inline std::uint64_t listed_max_shared_per_cta(int cc) {
  switch (cc) {
    case 30: case 32: case 35: case 37: case 50: case 52: case 53: case 60: case 61: case 62: return 48 * kKB;
    case 70: case 72: return 96 * kKB;
    case 75: return 64 * kKB;
    case 80: case 87: return 163 * kKB;
    case 86: case 89: case 120: case 121: return 99 * kKB;
    case 90: case 100: case 101: case 103: case 110: return 227 * kKB;
    default: return 0;
  }
}

// The same for any target: one the table does not list (none given, or one
// newer than the table) gets the largest any GPU has, so that it is never
// held to less than its own.
inline std::uint64_t max_shared_per_cta(int cc) {
  const std::uint64_t listed = listed_max_shared_per_cta(cc);
  return listed ? listed : 227 * kKB;
}

// "227 KB (232448 bytes)".
inline std::string kb_text(std::uint64_t bytes) {
  return std::to_string(bytes / kKB) + " KB (" + std::to_string(bytes) + " bytes)";
}

}  // namespace tileverify::ptx::limits
