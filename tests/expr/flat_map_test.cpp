// The decider's internal hash map (src/util/flat_map.hpp).
#include "../../src/util/flat_map.hpp"

#include <doctest/doctest.h>

#include <cstdint>

using tileverify::detail::FlatMap64;

TEST_CASE("FlatMap64: reset forgets every entry, and the map keeps working across resets and growth") {
  FlatMap64 m;
  CHECK(m.find(7) == nullptr);
  for (std::uint64_t k = 0; k < 5000; ++k) m.insert(k * 0x10001, std::uint32_t(k));
  CHECK(m.size() == 5000);
  REQUIRE(m.find(4999 * 0x10001) != nullptr);
  CHECK(*m.find(4999 * 0x10001) == 4999);
  m.reset();
  CHECK(m.size() == 0);
  for (std::uint64_t k = 0; k < 5000; ++k) CHECK(m.find(k * 0x10001) == nullptr);
  // Every key is usable, all ones included.
  CHECK(m.try_insert(~std::uint64_t(0), 3).second);
  CHECK_FALSE(m.try_insert(~std::uint64_t(0), 4).second);
  CHECK(*m.find(~std::uint64_t(0)) == 3);
  // A small generation in a large map, then growth: only the current
  // generation's entries move to the larger table.
  for (int round = 0; round < 3; ++round) {
    m.reset();
    for (std::uint64_t k = 0; k < 10; ++k) CHECK(m.try_insert(k, std::uint32_t(k + round)).second);
    for (std::uint64_t k = 0; k < 10; ++k) CHECK(*m.find(k) == k + round);
    CHECK(m.find(11 * 0x10001) == nullptr);
  }
  for (std::uint64_t k = 100; k < 20000; ++k) m.insert(k, 1);
  CHECK(m.size() == 19910);
  CHECK(*m.find(3) == 5);
  CHECK(m.find(10) == nullptr);
  CHECK(m.find(5 * 0x10001) == nullptr);
}
