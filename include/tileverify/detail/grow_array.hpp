// tileverify/detail/grow_array.hpp — internal: an append-only array for the
// large tables of an ExprContext.
//
// A symbolic run of an attention kernel builds ~2.4 M expression nodes, a few
// hundred MB of tables that grow by doubling. With std::vector each doubling
// allocates fresh pages (a page fault each), copies, and gives the old pages
// back: a fifth of the run went into the kernel's page-fault path. GrowArray
// keeps large arrays in their own mappings and grows them in place or by
// remapping (no copy, no second fault) where the OS allows it (Linux);
// elsewhere it falls back to realloc.
#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace tileverify::detail {

// Resizes a block from old_bytes to new_bytes of capacity (old == nullptr:
// a new block; new_bytes == 0: frees it), keeping the first keep_bytes.
// Throws std::bad_alloc.
void* grow_block(void* old, std::size_t old_bytes, std::size_t new_bytes, std::size_t keep_bytes);

template <class T>
class GrowArray {
  static_assert(std::is_trivially_copyable<T>::value, "GrowArray moves its elements as bytes");

 public:
  GrowArray() = default;
  GrowArray(const GrowArray&) = delete;
  GrowArray& operator=(const GrowArray&) = delete;
  GrowArray(GrowArray&& o) noexcept { swap(o); }
  GrowArray& operator=(GrowArray&& o) noexcept {
    GrowArray tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  ~GrowArray() {
    if (data_ != nullptr) grow_block(data_, cap_ * sizeof(T), 0, 0);
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  // The address of the data pointer: stays valid while the array grows, so a
  // view can re-read it on every access.
  const T* const* data_address() const { return const_cast<const T* const*>(&data_); }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

  void push_back(const T& v) {
    if (size_ == cap_) grow(size_ + 1);
    data_[size_++] = v;
  }
  void pop_back() { --size_; }
  template <class It>
  void append(It first, It last) {
    std::size_t n = std::size_t(last - first);
    if (size_ + n > cap_) grow(size_ + n);
    for (std::size_t i = 0; i < n; ++i) data_[size_ + i] = first[i];
    size_ += n;
  }
  // Grows to n elements, new ones equal to fill.
  void resize(std::size_t n, const T& fill) {
    if (n > cap_) grow(n);
    for (std::size_t i = size_; i < n; ++i) data_[i] = fill;
    size_ = n;
  }
  void assign(std::size_t n, const T& fill) {
    size_ = 0;
    resize(n, fill);
  }
  void swap(GrowArray& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(cap_, o.cap_);
  }

 private:
  void grow(std::size_t need) {
    std::size_t cap = cap_ < 64 ? 64 : cap_;
    while (cap < need) cap *= 2;
    data_ = static_cast<T*>(grow_block(data_, cap_ * sizeof(T), cap * sizeof(T), size_ * sizeof(T)));
    cap_ = cap;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0, cap_ = 0;
};

}  // namespace tileverify::detail
