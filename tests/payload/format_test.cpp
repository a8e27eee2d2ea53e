// Format descriptors and the embedding: the constants derived from Triton's
// rule, the fp32 vectors of the research notes, and bijectivity.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "test_support.hpp"
#include "tileverify/fpsan.hpp"

using namespace tileverify::fpsan;
using payload_test::u64;

namespace {

template <class F>
void check_constants(unsigned shift, u64 mul_a, u64 mul_b_pos, u64 mul_b_neg) {
  CHECK(F::shift == shift);
  CHECK(F::mul_a == mul_a);
  CHECK(F::mul_b_pos == mul_b_pos);
  CHECK(F::mul_b_neg == mul_b_neg);
  // The inverses the unembedding uses really are inverses mod 2^(w-1).
  CHECK(((F::mul_a * F::mul_a_inv) & F::mag) == 1);
  CHECK(((F::mul_b_pos * F::mul_b_pos_inv) & F::mag) == 1);
  CHECK(((F::mul_b_neg * F::mul_b_neg_inv) & F::mag) == 1);
  // The three fixed points the whole construction is tuned for.
  CHECK(embed<F>(0) == 0);
  CHECK(embed<F>(F::one_bits) == 1);
  CHECK(embed<F>(F::one_bits | F::sign) == F::mask);
  CHECK(unembed<F>(1) == F::one_bits);
  CHECK(unembed<F>(F::mask) == (F::one_bits | F::sign));
}

template <class F>
void check_exhaustive_bijection() {
  const u64 n = u64{1} << F::width;
  std::vector<bool> seen(n, false);
  for (u64 u = 0; u < n; ++u) {
    const u64 p = embed<F>(u);
    REQUIRE(p < n);
    REQUIRE_FALSE(seen[p]);  // injective on a finite set: a bijection
    seen[p] = true;
    REQUIRE(unembed<F>(p) == u);
    // embed(-x) = -embed(x), except at +-0: -0.0 lands on the sign payload.
    if ((u & F::mag) != 0) REQUIRE(embed<F>(u ^ F::sign) == neg<F::width>(p));
  }
  CHECK(embed<F>(F::sign) == F::sign);  // -0.0
}

template <class F>
void check_random_round_trip(std::uint64_t seed) {
  std::mt19937_64 g(seed);
  for (int i = 0; i < 200000; ++i) {
    const u64 u = g() & F::mask;
    REQUIRE(unembed<F>(embed<F>(u)) == u);
    REQUIRE(embed<F>(unembed<F>(u)) == u);
    if ((u & F::mag) != 0) REQUIRE(embed<F>(u ^ F::sign) == neg<F::width>(embed<F>(u)));
  }
}

std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

}  // namespace

TEST_CASE("format constants match the table derived from Triton's rule") {
  check_constants<fp32_format>(23, 0xe12b3, 0x3dcfec05, 0x423013fb);
  check_constants<fp16_format>(10, 0x12b3, 0x6e35, 0x11cb);
  check_constants<bf16_format>(7, 0x12b3, 0x4285, 0x3d7b);
  check_constants<fp64_format>(52, 0xe12b3, 0x42e1f84ff3b31f85u, 0x3d1e07b00c4ce07bu);
  check_constants<fp8_e4m3_format>(3, 0x33, 0x25, 0x5b);
  check_constants<fp8_e5m2_format>(2, 0x33, 0x59, 0x27);
  check_constants<fp8_e4m3fnuz_format>(6, 0x33, 0x41, 0x3f);
}

TEST_CASE("fp32 embedding vectors of docs/fpsan.md") {
  const struct {
    float f;
    u64 payload;
  } vectors[] = {{0.0f, 0x00000000}, {1.0f, 0x00000001},  {-1.0f, 0xffffffff}, {2.0f, 0x27f60280},
                 {0.5f, 0x081df882}, {-2.0f, 0xd809fd80}, {3.0f, 0x04ff103d}};
  for (const auto& v : vectors) {
    CAPTURE(v.f);
    CHECK(embed<fp32_format>(bits_of(v.f)) == v.payload);
    CHECK(unembed<fp32_format>(v.payload) == bits_of(v.f));
    CHECK(f32(v.f).payload() == v.payload);
    CHECK(f32::from_payload(v.payload).to_float() == v.f);
  }
}

TEST_CASE("embed and unembed are inverse bijections: every fp16, bf16 and fp8 pattern") {
  check_exhaustive_bijection<fp16_format>();
  check_exhaustive_bijection<bf16_format>();
  check_exhaustive_bijection<fp8_e4m3_format>();
  check_exhaustive_bijection<fp8_e5m2_format>();
  check_exhaustive_bijection<fp8_e4m3fnuz_format>();
}

TEST_CASE("embed and unembed round-trip on random fp32 and fp64 patterns") {
  check_random_round_trip<fp32_format>(1);
  check_random_round_trip<fp64_format>(2);
}

TEST_CASE("another mixing seed gives another bijection with the same fixed points") {
  // Some Triton versions mix with 14940041 instead of 922291 (docs/fpsan.md).
  using alt = format<32, 0x3f800000u, 14940041u>;
  CHECK(alt::mul_a == 0xe3f789);
  CHECK(embed<alt>(0) == 0);
  CHECK(embed<alt>(0x3f800000u) == 1);
  CHECK(embed<alt>(0xbf800000u) == 0xffffffffu);
  CHECK(embed<alt>(0x40000000u) != embed<fp32_format>(0x40000000u));  // 2.0 moves
  check_random_round_trip<alt>(5);
  using alt_f32 = value<alt>;  // value types work with it, sharing fp32's real codec
  CHECK(alt_f32(2.0f).to_float() == 2.0f);
  CHECK((alt_f32(1.0f) + alt_f32(1.0f)).payload() == 2);
}

TEST_CASE("format descriptors are usable in constant expressions") {
  static_assert(embed<fp32_format>(0x3f800000u) == 1, "1.0 embeds to 1");
  static_assert(unembed<fp64_format>(embed<fp64_format>(0x400921fb54442d18u)) == 0x400921fb54442d18u, "pi");
  static_assert(fp16_format::width == 16 && fp8_e5m2_format::mask == 0xff, "widths");
  CHECK(true);
}

TEST_CASE("float to half and bfloat16 conversion rounds to nearest even") {
  // Every non-NaN half and bfloat16 is exact in float and must come back.
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const float hf = real_codec<fp16_format>::to_float(h);
    if (!std::isnan(hf)) REQUIRE(real_codec<fp16_format>::encode(hf) == h);
    const float bf = real_codec<bf16_format>::to_float(h);
    if (!std::isnan(bf)) REQUIRE(real_codec<bf16_format>::encode(bf) == h);
  }
  // Random floats: the result is a nearest representable value, ties to even.
  std::mt19937_64 g(3);
  auto check_nearest = [](float f, u64 got, auto to_float, u64 max_finite) {
    const double x = f, r = to_float(got);
    const u64 mag = got & 0x7fff;
    // neighbours of the result on either side
    const double up = mag < max_finite ? to_float((got & 0x8000) | (mag + 1)) : r;
    const double down = mag > 0 ? to_float((got & 0x8000) | (mag - 1)) : r;
    if (std::isinf(r)) return;  // overflow: checked separately
    REQUIRE(std::fabs(x - r) <= std::fabs(x - up));
    REQUIRE(std::fabs(x - r) <= std::fabs(x - down));
    const bool tie = x != r && ((mag < max_finite && std::fabs(x - r) == std::fabs(x - up)) ||
                                (mag > 0 && std::fabs(x - r) == std::fabs(x - down)));
    if (tie) REQUIRE((got & 1) == 0);  // a true tie went to the even neighbour
  };
  for (int i = 0; i < 200000; ++i) {
    const std::uint32_t u = static_cast<std::uint32_t>(g());
    float f;
    std::memcpy(&f, &u, 4);
    if (std::isnan(f)) {
      CHECK(std::isnan(real_codec<fp16_format>::to_float(real_codec<fp16_format>::encode(f))));
      CHECK(std::isnan(real_codec<bf16_format>::to_float(real_codec<bf16_format>::encode(f))));
      continue;
    }
    // Scale into the half range half of the time, so that the interesting
    // (normal and subnormal) half results are well covered.
    int unused_exp = 0;
    if (i & 1) f = std::ldexp(std::frexp(f, &unused_exp), static_cast<int>(g() % 44) - 26);
    check_nearest(f, real_codec<fp16_format>::encode(f), [](u64 b) { return double(real_codec<fp16_format>::to_float(b)); },
                  0x7bff);
    check_nearest(f, real_codec<bf16_format>::encode(f), [](u64 b) { return double(real_codec<bf16_format>::to_float(b)); },
                  0x7f7f);
#if defined(__FLT16_MAX__)
    // Cross-check against the compiler's own _Float16 conversion.
    const _Float16 h = static_cast<_Float16>(f);
    std::uint16_t hb;
    std::memcpy(&hb, &h, 2);
    REQUIRE(real_codec<fp16_format>::encode(f) == hb);
#endif
  }
  CHECK(real_codec<fp16_format>::encode(65520.0f) == 0x7c00);  // rounds up to inf
  CHECK(real_codec<fp16_format>::encode(65519.0f) == 0x7bff);
  CHECK(real_codec<fp16_format>::encode(std::ldexp(1.0f, -25)) == 0x0000);            // tie to even: 0
  CHECK(real_codec<fp16_format>::encode(std::ldexp(1.5f, -25)) == 0x0001);            // above the tie
  CHECK(real_codec<fp16_format>::encode(std::ldexp(3.0f, -25)) == 0x0002);            // 1.5 ulp: tie to even 2
  CHECK(real_codec<bf16_format>::encode(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);     // tie to even
  CHECK(real_codec<bf16_format>::encode(1.0f + std::ldexp(3.0f, -8)) == 0x3f82);     // tie to even (up)
}
