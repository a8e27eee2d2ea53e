// An open-addressing hash map from 64-bit keys to 32-bit values, for the
// decider's memo tables (products of monomials, sums of polynomials, normal
// forms of nodes). They are probed millions of times per check and most
// lookups miss: std::unordered_map spends its time in per-node allocation and
// pointer chasing; one flat array of (key, value) slots does not.
// Internal to the library.
#pragma once

#include "hash.hpp"

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace tileverify::detail {

// A slot belongs to the map's current generation or is empty: reset() starts
// a new generation in O(1) (a walk that reuses the map per call would
// otherwise clear all of a capacity that one large earlier walk left behind).
class FlatMap64 {
 public:
  // The value stored for `key`, or nullptr.
  const std::uint32_t* find(std::uint64_t key) const {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.generation != generation_) return nullptr;
      if (s.key == key) return &s.value;
    }
  }
  // Stores `value` for `key` (replacing an earlier one).
  void insert(std::uint64_t key, std::uint32_t value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.generation != generation_) {
        s = Slot{key, value, generation_};
        ++size_;
        return;
      }
      if (s.key == key) {
        s.value = value;
        return;
      }
    }
  }
  // Stores `value` for `key` unless the key is present; returns the stored
  // value (the new one, or the one that was there) and whether it was added.
  std::pair<std::uint32_t, bool> try_insert(std::uint64_t key, std::uint32_t value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.generation != generation_) {
        s = Slot{key, value, generation_};
        ++size_;
        return {value, true};
      }
      if (s.key == key) return {s.value, false};
    }
  }
  std::size_t size() const { return size_; }
  // Empties the map but keeps its capacity (for maps refilled many times).
  void reset() {
    size_ = 0;
    if (++generation_ != 0) return;
    for (Slot& s : slots_) s.generation = 0;  // 2^32 resets: stale slots could look current again
    generation_ = 1;
  }
  void clear() {
    slots_.clear();
    size_ = 0;
    mask_ = 0;
    generation_ = 1;
  }

 private:
  struct Slot {
    std::uint64_t key;
    std::uint32_t value;
    std::uint32_t generation;  // 0: never used (generations start at 1)
  };
  // Keys are pairs of small ids, whose bits must be spread before masking.
  std::size_t slot(std::uint64_t k) const { return std::size_t(finalize64(k)) & mask_; }
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    const std::size_t n = old.empty() ? 64 : old.size() * 2;
    slots_.assign(n, Slot{0, 0, 0});
    mask_ = n - 1;
    size_ = 0;
    const std::uint32_t current = generation_;
    generation_ = 1;
    for (const Slot& s : old)
      if (s.generation == current) insert(s.key, s.value);
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
  std::size_t mask_ = 0;
  std::uint32_t generation_ = 1;
};

}  // namespace tileverify::detail
