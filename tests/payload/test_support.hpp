// Shared helpers for the payload-algebra tests: deterministic random payloads
// (fixed seeds, so a failure reproduces) biased towards the payloads where
// wrap-around and sign handling go wrong.
#pragma once

#include <cstdint>
#include <random>
#include <type_traits>

#include <doctest/doctest.h>

#include "tileverify/payload.hpp"

namespace payload_test {

using tileverify::fpsan::u64;

constexpr int kSamples = 4000;  // per property and width

template <unsigned W>
using width_c = std::integral_constant<unsigned, W>;

template <unsigned W>
class payload_rng {
 public:
  explicit payload_rng(std::uint64_t seed) : gen_(seed * 0x9e3779b97f4a7c15u + W) {}
  u64 operator()() {
    const u64 mask = tileverify::fpsan::wrap<W>(~u64{0});
    const u64 r = gen_();
    switch (r % 16) {  // one draw in 16 from the edge cases
      case 0: {
        constexpr u64 sign = u64{1} << (W - 1);
        const u64 edges[] = {0, 1, mask, sign, sign - 1, 2, mask - 1, sign + 1};
        return edges[(r >> 4) % 8];
      }
      case 1:
        return (r >> 8) % 64;  // small
      default:
        return gen_() & mask;
    }
  }
  u64 odd() { return (*this)() | 1; }
  u64 even() { return (*this)() & ~u64{1}; }

 private:
  std::mt19937_64 gen_;
};

}  // namespace payload_test

// Short names for the widths in test-case names (and CTest names).
TYPE_TO_STRING_AS("w8", payload_test::width_c<8>);
TYPE_TO_STRING_AS("w16", payload_test::width_c<16>);
TYPE_TO_STRING_AS("w32", payload_test::width_c<32>);
TYPE_TO_STRING_AS("w64", payload_test::width_c<64>);
