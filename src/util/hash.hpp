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

}  // namespace tileverify::detail
