// The paged array behind the evaluator's memories (src/util/paged_array.hpp):
// pages are made on first reference only, peek() makes none, and the bytes of
// the pages made are counted where the machine's budget reads them, through
// copies, moves and re-assignments.
#include "../../src/util/paged_array.hpp"

#include <doctest/doctest.h>

#include <cstdint>

using tileverify::detail::PagedArray;

TEST_CASE("a paged array makes a page when an element is referenced, and counts its bytes") {
  constexpr std::uint64_t kPageBytes = PagedArray<int>::kPage * sizeof(int);
  std::uint64_t counted = 0;
  PagedArray<int> a;
  a.count_into(&counted);
  a.assign(10000, 7);
  CHECK(a.size() == 10000);
  CHECK(counted == 0);
  CHECK(a.peek(9999) == 7);  // no page made
  CHECK(!a.made(9999));
  CHECK(counted == 0);
  a[300] = 5;
  CHECK(a.made(300));
  CHECK(a.made(256));
  CHECK(!a.made(255));
  CHECK(counted == kPageBytes);
  CHECK(a.peek(300) == 5);
  CHECK(a.peek(301) == 7);  // the rest of the page holds the initial value
  {
    PagedArray<int> b = a;  // a copy's pages count too
    CHECK(counted == 2 * kPageBytes);
    CHECK(b.peek(300) == 5);
    b[0] = 1;
    CHECK(counted == 3 * kPageBytes);
  }
  CHECK(counted == kPageBytes);  // and stop counting when it goes
  PagedArray<int> moved = std::move(a);
  CHECK(counted == kPageBytes);
  CHECK(moved.peek(300) == 5);
  moved.assign(10, 0);  // assigning drops the pages
  CHECK(counted == 0);
}

TEST_CASE("a paged array's fill function gives the elements of pages not made") {
  PagedArray<std::uint64_t> a;
  a.assign(1000, [](std::uint64_t first, std::uint64_t* out, std::size_t n) {
    for (std::size_t k = 0; k < n; ++k) out[k] = 3 * (first + k);
  });
  CHECK(a.peek(999) == 2997);
  CHECK(!a.made(999));
  CHECK(a[998] == 2994);  // the last page is partial: only its elements are filled
  a.resize(2000);
  CHECK(a.peek(1999) == 5997);
}
