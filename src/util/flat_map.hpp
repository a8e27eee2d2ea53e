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

class FlatMap64 {
 public:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t(0);  // a key no caller uses

  // The value stored for `key`, or nullptr.
  const std::uint32_t* find(std::uint64_t key) const {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == key) return &s.value;
      if (s.key == kEmpty) return nullptr;
    }
  }
  // Stores `value` for `key` (replacing an earlier one).
  void insert(std::uint64_t key, std::uint32_t value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.key == key) {
        s.value = value;
        return;
      }
      if (s.key == kEmpty) {
        s = Slot{key, value};
        ++size_;
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
      if (s.key == key) return {s.value, false};
      if (s.key == kEmpty) {
        s = Slot{key, value};
        ++size_;
        return {value, true};
      }
    }
  }
  std::size_t size() const { return size_; }
  // Empties the map but keeps its capacity (for maps refilled many times).
  void reset() {
    for (Slot& s : slots_) s.key = kEmpty;
    size_ = 0;
  }
  void clear() {
    slots_.clear();
    size_ = 0;
    mask_ = 0;
  }

 private:
  struct Slot {
    std::uint64_t key;
    std::uint32_t value;
  };
  // Keys are pairs of small ids, whose bits must be spread before masking.
  std::size_t slot(std::uint64_t k) const { return std::size_t(finalize64(k)) & mask_; }
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    const std::size_t n = old.empty() ? 64 : old.size() * 2;
    slots_.assign(n, Slot{kEmpty, 0});
    mask_ = n - 1;
    size_ = 0;
    for (const Slot& s : old)
      if (s.key != kEmpty) insert(s.key, s.value);
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
  std::size_t mask_ = 0;
};

}  // namespace tileverify::detail
