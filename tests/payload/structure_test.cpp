// Casts between widths, fp4 unpacking, extern calls and dot/MMA accumulation.
#include <doctest/doctest.h>

#include "test_support.hpp"

using namespace tileverify::fpsan;
using payload_test::kSamples;
using payload_test::payload_rng;
using payload_test::u64;

namespace {

template <unsigned Narrow, unsigned Wide>
void check_cast_pair() {
  constexpr u64 ones_n = wrap<Narrow>(~u64{0}), ones_w = wrap<Wide>(~u64{0});
  // 0, +1 and -1 are fixed in both directions and both narrowing modes.
  for (cast_mode mode : {cast_mode::folded, cast_mode::homomorphic}) {
    CHECK(cast<Wide, Narrow>(0, mode) == 0);
    CHECK(cast<Wide, Narrow>(1, mode) == 1);
    CHECK(cast<Wide, Narrow>(ones_w, mode) == ones_n);
  }
  CHECK(cast<Narrow, Wide>(0) == 0);
  CHECK(cast<Narrow, Wide>(1) == 1);
  CHECK(cast<Narrow, Wide>(ones_n) == ones_w);

  payload_rng<Narrow> rn(20 + Narrow);
  payload_rng<Wide> rw(30 + Wide);
  int folded_differs = 0;
  for (int i = 0; i < kSamples; ++i) {
    const u64 x = rn(), y = rn();
    const u64 up = cast<Narrow, Wide>(x);
    REQUIRE(cast<Wide, Narrow>(up) == x);  // upcast then downcast is the identity
    REQUIRE(cast<Wide, Narrow>(up, cast_mode::homomorphic) == x);
    const bool negative = (x >> (Narrow - 1)) & 1;
    REQUIRE(up == (negative ? (x | (ones_w & ~ones_n)) : x));  // sign extension
    REQUIRE(signed_less<Wide>(cast<Narrow, Wide>(x), cast<Narrow, Wide>(y)) == signed_less<Narrow>(x, y));
    // Widening is a ring homomorphism only when nothing wraps, so that is not
    // claimed; homomorphic narrowing is one:
    const u64 a = rw(), b = rw();
    REQUIRE(cast<Wide, Narrow>(add<Wide>(a, b), cast_mode::homomorphic) ==
            add<Narrow>(cast<Wide, Narrow>(a, cast_mode::homomorphic), cast<Wide, Narrow>(b, cast_mode::homomorphic)));
    REQUIRE(cast<Wide, Narrow>(mul<Wide>(a, b), cast_mode::homomorphic) ==
            mul<Narrow>(cast<Wide, Narrow>(a, cast_mode::homomorphic), cast<Wide, Narrow>(b, cast_mode::homomorphic)));
    folded_differs += cast<Wide, Narrow>(a) != cast<Wide, Narrow>(a, cast_mode::homomorphic);
  }
  CHECK(folded_differs > 0);  // the default narrowing really folds the high bits in
}

}  // namespace

TEST_CASE("float casts: sign extension up, folded truncation down, down after up is the identity") {
  check_cast_pair<8, 16>();
  check_cast_pair<8, 32>();
  check_cast_pair<16, 32>();
  check_cast_pair<16, 64>();
  check_cast_pair<32, 64>();
  // Values from the independent Python model of castFloatPayloadToType.
  CHECK(cast<32, 16>(0x12345678) == 0xf154);
  CHECK(cast<32, 16>(0xfedcba98) == 0x2d9d);
  CHECK(cast<32, 16>(0x12345678, cast_mode::homomorphic) == 0x5678);
  CHECK(cast<16, 16>(0xabcd) == 0xabcd);  // fp16 <-> bf16 keeps the payload
}

TEST_CASE("int_cast is a plain signed resize, i1 included") {
  CHECK(int_cast<8, 32>(0x80) == 0xffffff80u);
  CHECK(int_cast<32, 8>(0x12345678) == 0x78);
  CHECK(int_cast<1, 16>(1) == 0xffff);
  CHECK(int_cast<1, 16>(0) == 0);
  CHECK(int_cast<64, 64>(0x8000000000000000u) == 0x8000000000000000u);
}

TEST_CASE("fp4 unpacking keeps the raw nibbles as payloads") {
  for (unsigned b = 0; b < 256; ++b) {
    const nibble_pair p = unpack_fp4(static_cast<std::uint8_t>(b));
    REQUIRE(p.lo == (b & 15));
    REQUIRE(p.hi == (b >> 4));
  }
}

TEST_CASE("stable_string_hash is FNV-1a 64") {
  CHECK(stable_string_hash("") == 0xcbf29ce484222325u);  // the FNV offset basis
  CHECK(stable_string_hash("a") == 0xaf63dc4c8601ec8cu);  // published FNV-1a test vector
  CHECK(stable_string_hash("__nv_tanhf") == 0xcd9e549f1b1943d1u);
  static_assert(stable_string_hash("a") == 0xaf63dc4c8601ec8cu, "usable at compile time");
}

TEST_CASE("extern elementwise: rotate by argument index, sum, xor the symbol hash") {
  const u64 h = stable_string_hash("__nv_powf");
  const u64 ops[] = {0x80000001u, 0x00000003u, 0x12345678u};
  // rotl(x0, 0) + rotl(x1, 1) + rotl(x2, 2), then ^ hash, all in 32 bits.
  const u64 expect = ((0x80000001u + 0x00000006u + 0x48d159e0u) & 0xffffffffu) ^ (h & 0xffffffffu);
  CHECK(extern_elementwise<32>(h, ops, 3) == expect);
  CHECK(rotl<32>(0x80000001u, 1) == 0x00000003u);
  // inline asm result r xors r into the hash (0xff ^ 1 = 0xfe, not 0x100)
  CHECK(inline_asm_elementwise<32>(0xff, ops, 3, 1) == extern_elementwise<32>(0xfe, ops, 3));
  CHECK(inline_asm_elementwise<32>(0xff, ops, 3, 0) == extern_elementwise<32>(0xff, ops, 3));
  CHECK(rotl<8>(0x81, 9) == 0x03);  // amounts wrap at the width
  payload_rng<32> r(40);
  for (int i = 0; i < kSamples; ++i) {
    const u64 a = r(), b = r();
    const u64 ab[] = {a, b}, ba[] = {b, a};
    REQUIRE(extern_elementwise<32>(h, ab, 2) == extern_elementwise<32>(h, ab, 2));
    if (add<32>(rotl<32>(a, 1), b) != add<32>(rotl<32>(b, 1), a))  // operand order matters where it can
      REQUIRE(extern_elementwise<32>(h, ab, 2) != extern_elementwise<32>(h, ba, 2));
    REQUIRE(extern_elementwise<32>(h, ab, 2) != extern_elementwise<32>(stable_string_hash("__nv_atan2f"), ab, 2));
    REQUIRE(inline_asm_elementwise<32>(h, ab, 2, 1) == extern_elementwise<32>(h ^ 1, ab, 2));
  }
}

TEST_CASE("dot and mma: exact ring accumulation, any order") {
  payload_rng<16> r16(50);
  payload_rng<32> r32(51);
  for (int t = 0; t < 200; ++t) {
    u64 a[16], b[16], a_rev[16], b_rev[16];
    for (int i = 0; i < 16; ++i) {
      a[i] = r16();
      b[i] = r16();
      a_rev[15 - i] = a[i];
      b_rev[15 - i] = b[i];
    }
    const u64 acc = r32();
    // fp16 operands, fp32 accumulator: operands sign-extended, products summed mod 2^32.
    u64 expect = acc;
    for (int i = 0; i < 16; ++i) expect = add<32>(expect, mul<32>(cast<16, 32>(a[i]), cast<16, 32>(b[i])));
    REQUIRE((dot<32, 16>(acc, a, b, 16) == expect));
    REQUIRE((dot<32, 16>(acc, a_rev, b_rev, 16) == expect));  // accumulation order is irrelevant
    // split-K: two half dots chained through the accumulator
    REQUIRE((dot<32, 16>(dot<32, 16>(acc, a, b, 8), a + 8, b + 8, 8) == expect));
    std::swap(b[3], b[4]);  // wrong pairing of operands
    auto prod = [](u64 x, u64 y) { return mul<32>(cast<16, 32>(x), cast<16, 32>(y)); };
    // (b[3], b[4] are now swapped: compare the swapped pairing with the original one)
    if (add<32>(prod(a[3], b[3]), prod(a[4], b[4])) != add<32>(prod(a[3], b[4]), prod(a[4], b[3])))
      REQUIRE((dot<32, 16>(acc, a, b, 16) != expect));
  }
  // 2x3 times 3x2 with an accumulator, against the scalar expansion.
  const u64 A[6] = {1, 2, 3, 4, 5, 6}, B[6] = {7, 8, 9, 10, 11, 12}, C[4] = {100, 200, 300, 400};
  u64 D[4];
  mma<32, 32>(2, 2, 3, A, B, C, D);
  CHECK(D[0] == 100 + 1 * 7 + 2 * 9 + 3 * 11);
  CHECK(D[1] == 200 + 1 * 8 + 2 * 10 + 3 * 12);
  CHECK(D[2] == 300 + 4 * 7 + 5 * 9 + 6 * 11);
  CHECK(D[3] == 400 + 4 * 8 + 5 * 10 + 6 * 12);
}
