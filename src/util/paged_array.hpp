// An array whose elements are made a page at a time, when something first
// writes one of the page's elements (or asks for a reference to it).
//
// The evaluator keeps a cell and a race shadow for every element of every
// tensor a kernel is given, about 100 bytes an element. A representative
// CTA of a 4096^3 GEMM touches a 128-row strip of A, a 128-column strip of
// B and a 128 x 128 tile of C, but the three tensors have 16 M elements
// each: made at once, their cells took 4.6 GB and most of a minute before
// the first instruction. Pages of 256 elements are small enough that a
// column strip of a row-major matrix (one element in each row) touches one
// page per row, not all of them.
//
// An element of a page not made yet has the array's initial value: one value
// for all (`assign`), or what a fill function gives for its index (inputs of
// the concrete and payload domains, a pure function of the element). Reading
// it through peek() makes nothing. Internal to the library.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace tileverify::detail {

template <class T>
class PagedArray {
 public:
  static constexpr unsigned kPageShift = 8;
  static constexpr std::size_t kPage = std::size_t(1) << kPageShift;
  // Fills elements [first, first + n) of a page being made.
  using Fill = std::function<void(std::uint64_t first, T* out, std::size_t n)>;

  PagedArray() = default;
  PagedArray(const PagedArray& o) : size_(o.size_), init_(o.init_), fill_(o.fill_), counter_(o.counter_) {
    pages_.resize(o.pages_.size());
    for (std::size_t p = 0; p < pages_.size(); ++p)
      if (o.pages_[p]) {
        pages_[p] = std::make_unique<T[]>(kPage);
        std::copy(o.pages_[p].get(), o.pages_[p].get() + kPage, pages_[p].get());
        add_pages(1);
      }
  }
  PagedArray(PagedArray&& o) noexcept { swap(o); }
  PagedArray& operator=(PagedArray o) noexcept {
    swap(o);
    return *this;
  }
  ~PagedArray() { release(); }

  void swap(PagedArray& o) noexcept {
    std::swap(size_, o.size_);
    std::swap(pages_, o.pages_);
    std::swap(init_, o.init_);
    std::swap(fill_, o.fill_);
    std::swap(counter_, o.counter_);
    std::swap(made_, o.made_);
  }

  // Where the bytes of the pages made are counted (the machine's memory
  // budget); null: nowhere.
  void count_into(std::uint64_t* counter) {
    if (counter_) *counter_ -= bytes();
    counter_ = counter;
    if (counter_) *counter_ += bytes();
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Pages made so far, in bytes.
  std::uint64_t bytes() const { return std::uint64_t(made_) * kPage * sizeof(T); }

  // n elements, every one `value`; drops what was there. O(n / page).
  void assign(std::size_t n, const T& value) {
    release();
    size_ = n;
    init_ = value;
    fill_ = nullptr;
    pages_.resize((n + kPage - 1) >> kPageShift);  // release() left none
  }
  // n elements, element i what `fill` gives for it.
  void assign(std::size_t n, Fill fill) {
    assign(n, T{});
    fill_ = std::move(fill);
  }
  // Grows to n elements with the initial value (or the fill function's).
  void resize(std::size_t n) {
    if (n <= size_) return;  // the evaluator's memories only ever grow
    size_ = n;
    pages_.resize((n + kPage - 1) >> kPageShift);
  }

  T& operator[](std::size_t i) {
    T* page = pages_[i >> kPageShift].get();
    if (!page) page = make(i >> kPageShift);
    return page[i & (kPage - 1)];
  }
  // Element i's value, making nothing.
  T peek(std::size_t i) const {
    if (const T* page = pages_[i >> kPageShift].get()) return page[i & (kPage - 1)];
    if (!fill_) return init_;
    T v{};
    fill_(i, &v, 1);
    return v;
  }
  bool made(std::size_t i) const { return pages_[i >> kPageShift] != nullptr; }

 private:
  T* make(std::size_t p) {
    pages_[p] = std::make_unique<T[]>(kPage);
    T* page = pages_[p].get();
    const std::uint64_t first = std::uint64_t(p) << kPageShift;
    if (fill_) {
      // The last page's tail past size() is never read; fill only what exists.
      const std::size_t n = first + kPage <= size_ ? kPage : std::size_t(size_ - first);
      fill_(first, page, n);
    } else {
      std::fill(page, page + kPage, init_);
    }
    add_pages(1);
    return page;
  }
  void add_pages(std::size_t k) {
    made_ += k;
    if (counter_) *counter_ += std::uint64_t(k) * kPage * sizeof(T);
  }
  void release() {
    if (counter_) *counter_ -= bytes();
    made_ = 0;
    pages_.clear();
  }

  std::size_t size_ = 0;
  std::vector<std::unique_ptr<T[]>> pages_;
  T init_{};
  Fill fill_;
  std::uint64_t* counter_ = nullptr;
  std::size_t made_ = 0;
};

}  // namespace tileverify::detail
