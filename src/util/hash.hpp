// Hash mixing shared by the library's tables (internal).
#pragma once

#include <cstdint>

namespace tileverify::detail {

// splitmix64's finalizer: every input bit affects every output bit, so ids
// and combined hashes can be masked into open-addressing tables.
inline std::uint64_t finalize64(std::uint64_t h) {
  h ^= h >> 30;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 27;
  h *= 0x94D049BB133111EBull;
  h ^= h >> 31;
  return h;
}

// Folds v into the running hash h. Boost's hash_combine (h ^ (v + c + (h << 6)
// + (h >> 2))) only spreads small inputs over the low bits: products of two
// input symbols, whose ids are small, collided in all 64 bits by the
// thousands (5.3 M full comparisons for 262 K new nodes of a 64x64 SGEMM
// tile). Rotating and multiplying by an odd constant keeps every input bit
// in play; finalize64 still runs before the hash indexes a table.
inline std::uint64_t combine64(std::uint64_t h, std::uint64_t v) {
  h = (h << 23) | (h >> 41);
  return (h ^ v) * 0x9E3779B97F4A7C15ull;
}

}  // namespace tileverify::detail
