// GrowArray's storage: small blocks from malloc, large ones in their own
// anonymous mappings on Linux, grown by mremap (no copy, no second fault).
// Transparent huge pages were tried (madvise): with the usual "defrag on
// madvise" setting the kernel compacts memory synchronously at each fault,
// and an attention kernel's symbolic run spent 0.6 s in the kernel instead
// of 0.15 s.
#include "tileverify/detail/grow_array.hpp"

#include <cstdlib>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tileverify::detail {

namespace {

#if defined(__linux__)
// Blocks of at least this size are mapped; smaller ones live on the heap.
constexpr std::size_t kMapBytes = std::size_t(2) << 20;

std::size_t round_up(std::size_t n) { return (n + kMapBytes - 1) / kMapBytes * kMapBytes; }

void* map_block(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return p;
}
#endif

}  // namespace

void* grow_block(void* old, std::size_t old_bytes, std::size_t new_bytes, std::size_t keep_bytes) {
#if defined(__linux__)
  const bool old_mapped = old != nullptr && old_bytes >= kMapBytes;
  if (new_bytes == 0) {
    if (old_mapped)
      munmap(old, round_up(old_bytes));
    else
      std::free(old);
    return nullptr;
  }
  if (new_bytes >= kMapBytes) {
    if (old_mapped) {
      void* p = mremap(old, round_up(old_bytes), round_up(new_bytes), MREMAP_MAYMOVE);
      if (p == MAP_FAILED) throw std::bad_alloc();
      return p;
    }
    void* p = map_block(round_up(new_bytes));
    if (old != nullptr) {
      std::memcpy(p, old, keep_bytes);
      std::free(old);
    }
    return p;
  }
  // Shrinking is never asked for, so a heap block stays a heap block.
#else
  (void)old_bytes;
  (void)keep_bytes;
  if (new_bytes == 0) {
    std::free(old);
    return nullptr;
  }
#endif
  void* p = std::realloc(old, new_bytes);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace tileverify::detail
