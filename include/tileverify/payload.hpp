// tileverify/payload.hpp — the FpSan payload algebra, header-only.
//
// FpSan (Triton's floating-point sanitizer) runs a kernel with every float
// replaced by a w-bit integer "payload" and every float op by a ring
// operation on payloads chosen so that selected identities (ring laws,
// exp(a+b) = exp(a)exp(b), angle addition, ...) hold exactly. Two kernels
// that are the same symbolic computation then produce bit-identical payloads,
// while wrong dataflow almost surely perturbs them. docs/fpsan.md explains
// when to use this and lists every formula with its origin.
//
// This header is the algebra only: format descriptors, embed/unembed, and the
// payload op of each float op, on payloads held in the low w bits of a
// std::uint64_t. Everything is constexpr and, under nvcc, __host__ __device__,
// so the same code runs on the CPU and inside a CUDA kernel. The value types
// that let a templated kernel run in payload mode unchanged are in
// tileverify/fpsan.hpp.
//
// Bit-for-bit compatibility target: triton-lang/triton,
// lib/Dialect/TritonInstrument/Transforms/FpSanitizer.cpp at commit
// 0043a8d80d60f9a791d43161189aa13e0db00353 (the rewrites), and the embedding of
// lib/Conversion/TritonInstrumentToLLVM/FpSanToLLVM.cpp with mixing constant
// 922291 (docs/fpsan.md, "Gaps and choices", on Triton versions).
#pragma once

#include <cstddef>
#include <cstdint>

#ifndef TILEVERIFY_HD
#if defined(__CUDACC__)
#define TILEVERIFY_HD __host__ __device__
#else
#define TILEVERIFY_HD
#endif
#endif

namespace tileverify {
namespace fpsan {

using u64 = std::uint64_t;

namespace detail {

// A runtime shift keeps GCC from warning about `1 << 64` in the branch that a
// width-64 instantiation never takes.
TILEVERIFY_HD constexpr u64 low_mask(unsigned w) { return w >= 64 ? ~u64{0} : (u64{1} << w) - 1; }

TILEVERIFY_HD constexpr unsigned count_trailing_zeros(u64 v) {
  unsigned n = 0;
  while (v != 0 && (v & 1) == 0) {
    v >>= 1;
    ++n;
  }
  return n;
}

// Inverse of an odd number modulo 2^64 by Newton's iteration: each step
// doubles the number of correct low bits, starting from 2 (x0 = 2 - a).
TILEVERIFY_HD constexpr u64 inv_odd_u64(u64 a) {
  u64 x = 2 - a;
  for (unsigned correct = 2; correct < 64; correct *= 2) x *= 2 - a * x;
  return x;
}

template <unsigned W>
struct word_for {
  static_assert(W >= 2 && W <= 64, "payload widths are 2..64 bits");
  using type = std::uint64_t;
};
template <> struct word_for<8> { using type = std::uint8_t; };
template <> struct word_for<16> { using type = std::uint16_t; };
template <> struct word_for<32> { using type = std::uint32_t; };

// Sign extension of the low `from` bits of v to 64 bits, without signed
// shifts (implementation-defined before C++20).
TILEVERIFY_HD constexpr u64 sign_extend(u64 v, unsigned from) {
  const u64 m = low_mask(from);
  const u64 s = u64{1} << (from - 1);
  v &= m;
  return (v & s) ? (v | ~m) : v;
}

}  // namespace detail

// ---------------------------------------------------------------------------
// Format descriptors.
//
// A float format enters the algebra only through its width and the bit
// pattern of 1.0: the embedding is a fixed invertible mix of the magnitude
// bits, tuned per format so that +0 -> 0, 1.0 -> 1 and -1.0 -> all ones.
// MulSeed is the odd mixing constant; 922291 is the one of the Triton
// commits these headers follow (docs/fpsan.md: other Triton versions).
// ---------------------------------------------------------------------------
template <unsigned W, u64 OneBits, u64 MulSeed = 922291u>
struct format {
  static_assert(W == 8 || W == 16 || W == 32 || W == 64, "FpSan formats are 8, 16, 32 or 64 bits wide");
  static constexpr unsigned width = W;
  using word = typename detail::word_for<W>::type;  // storage type of a payload
  static constexpr u64 mask = detail::low_mask(W);
  static constexpr u64 sign = u64{1} << (W - 1);
  static constexpr u64 mag = sign - 1;
  static constexpr u64 one_bits = OneBits;
  // The xor-shift amount is the position of the lowest set bit of 1.0 (the
  // exponent's lowest bit), so that mixing 1.0 lands on an odd number.
  static constexpr unsigned shift = detail::count_trailing_zeros(OneBits);
  static_assert(OneBits != 0 && shift != 0, "1.0 must have a non-zero, even bit pattern");
  // An arbitrary odd constant that moves low bits up; odd, so invertible.
  static constexpr u64 mul_a = MulSeed & mag;
  static_assert((mul_a & 1) == 1, "the mixing multiplier must be odd");
  static constexpr u64 one_mixed = ((OneBits * mul_a) & mag) ^ (((OneBits * mul_a) & mag) >> shift);
  static_assert((one_mixed & 1) == 1, "the mixed 1.0 must be odd to be invertible");
  // The second multiplier sends mixed(1.0) to 1; its negation (mod 2^(w-1))
  // is used for negative floats, which is what makes embed(-x) = -embed(x).
  static constexpr u64 mul_b_pos = detail::inv_odd_u64(one_mixed) & mag;
  static constexpr u64 mul_b_neg = (mul_b_pos * mag) & mag;
  static constexpr u64 mul_a_inv = detail::inv_odd_u64(mul_a) & mag;
  static constexpr u64 mul_b_pos_inv = detail::inv_odd_u64(mul_b_pos) & mag;
  static constexpr u64 mul_b_neg_inv = detail::inv_odd_u64(mul_b_neg) & mag;
};

using fp32_format = format<32, 0x3f800000u>;
using fp16_format = format<16, 0x3c00u>;
using bf16_format = format<16, 0x3f80u>;
using fp64_format = format<64, 0x3ff0000000000000u>;
using fp8_e4m3_format = format<8, 0x38u>;      // Float8E4M3FN (bias 7)
using fp8_e5m2_format = format<8, 0x3cu>;      // Float8E5M2 (bias 15)
using fp8_e4m3fnuz_format = format<8, 0x40u>;  // Float8E4M3FNUZ (bias 8), AMD
using fp8_e5m2fnuz_format = format<8, 0x40u>;  // Float8E5M2FNUZ (bias 16): same 1.0 bits, same algebra

// The table of docs/fpsan.md, derived from Triton's rule independently of this code.
static_assert(fp32_format::shift == 23 && fp32_format::mul_a == 0xe12b3 && fp32_format::mul_b_pos == 0x3dcfec05 &&
                  fp32_format::mul_b_neg == 0x423013fb,
              "fp32 embedding constants");
static_assert(fp16_format::shift == 10 && fp16_format::mul_a == 0x12b3 && fp16_format::mul_b_pos == 0x6e35 &&
                  fp16_format::mul_b_neg == 0x11cb,
              "fp16 embedding constants");
static_assert(bf16_format::shift == 7 && bf16_format::mul_a == 0x12b3 && bf16_format::mul_b_pos == 0x4285 &&
                  bf16_format::mul_b_neg == 0x3d7b,
              "bf16 embedding constants");
static_assert(fp64_format::shift == 52 && fp64_format::mul_a == 0xe12b3 &&
                  fp64_format::mul_b_pos == 0x42e1f84ff3b31f85u && fp64_format::mul_b_neg == 0x3d1e07b00c4ce07bu,
              "fp64 embedding constants");
static_assert(fp8_e4m3_format::shift == 3 && fp8_e4m3_format::mul_a == 0x33 && fp8_e4m3_format::mul_b_pos == 0x25 &&
                  fp8_e4m3_format::mul_b_neg == 0x5b,
              "fp8 e4m3 embedding constants");
static_assert(fp8_e5m2_format::shift == 2 && fp8_e5m2_format::mul_a == 0x33 && fp8_e5m2_format::mul_b_pos == 0x59 &&
                  fp8_e5m2_format::mul_b_neg == 0x27,
              "fp8 e5m2 embedding constants");

// ---------------------------------------------------------------------------
// embed / unembed: float bit pattern <-> payload, exact inverses.
// ---------------------------------------------------------------------------
template <class F>
TILEVERIFY_HD constexpr u64 embed(u64 bits) {
  bits &= F::mask;
  const u64 s = (bits & F::sign) ? F::sign : 0;
  const u64 y = ((bits ^ s) * F::mul_a) & F::mag;
  const u64 z = y ^ (y >> F::shift);
  return ((z * (s ? F::mul_b_neg : F::mul_b_pos)) & F::mag) ^ s;
}

template <class F>
TILEVERIFY_HD constexpr u64 unembed(u64 payload) {
  payload &= F::mask;
  // embed keeps the sign bit in place, so the payload's sign says which
  // multiplier was used.
  const u64 s = (payload & F::sign) ? F::sign : 0;
  u64 y = ((payload ^ s) * (s ? F::mul_b_neg_inv : F::mul_b_pos_inv)) & F::mag;
  // y ^= y >> k for k = shift, 2 shift, 4 shift, ... inverts y ^ (y >> shift).
  for (unsigned k = F::shift; k < F::width; k *= 2) y ^= y >> k;
  return ((y * F::mul_a_inv) & F::mag) ^ s;
}

// ---------------------------------------------------------------------------
// Ring operations on w-bit payloads (arithmetic mod 2^w). Inputs may carry
// garbage above bit w; every result is reduced to w bits.
// ---------------------------------------------------------------------------
template <unsigned W>
TILEVERIFY_HD constexpr u64 wrap(u64 x) {
  return x & detail::low_mask(W);
}
template <unsigned W>
TILEVERIFY_HD constexpr u64 add(u64 a, u64 b) {
  return wrap<W>(a + b);
}
template <unsigned W>
TILEVERIFY_HD constexpr u64 sub(u64 a, u64 b) {
  return wrap<W>(a - b);
}
template <unsigned W>
TILEVERIFY_HD constexpr u64 mul(u64 a, u64 b) {
  return wrap<W>(a * b);
}
template <unsigned W>
TILEVERIFY_HD constexpr u64 neg(u64 a) {  // arith.negf is 0 - x in Triton
  return wrap<W>(u64{0} - a);
}
template <unsigned W>
TILEVERIFY_HD constexpr u64 fma(u64 a, u64 b, u64 c) {  // no fused rounding to model: a*b + c
  return wrap<W>(a * b + c);
}

// Signed payload order: flipping the sign bit turns it into unsigned order.
template <unsigned W>
TILEVERIFY_HD constexpr bool signed_less(u64 a, u64 b) {
  constexpr u64 s = u64{1} << (W - 1);
  return (wrap<W>(a) ^ s) < (wrap<W>(b) ^ s);
}
template <unsigned W>
TILEVERIFY_HD constexpr u64 min(u64 a, u64 b) {
  return signed_less<W>(b, a) ? wrap<W>(b) : wrap<W>(a);
}
template <unsigned W>
TILEVERIFY_HD constexpr u64 max(u64 a, u64 b) {
  return signed_less<W>(a, b) ? wrap<W>(b) : wrap<W>(a);
}

// inv(u): the modular inverse of u | 1 by Newton's iteration in w bits, with
// u's own low bit put back. For odd u that is the true inverse; for even u it
// is inv(u + 1) - 1, an involution on the even payloads, so 1/(1/x) = x holds
// for every payload while x/x = 1 only for odd x.
template <unsigned W>
TILEVERIFY_HD constexpr u64 inv(u64 u) {
  const u64 a = wrap<W>(u) | 1;
  u64 x = wrap<W>(2 - a);
  for (unsigned correct = 2; correct < W; correct *= 2) x = wrap<W>(x * (2 - a * x));
  return (x & ~u64{1}) | (u & 1);
}
template <unsigned W>
TILEVERIFY_HD constexpr u64 div(u64 num, u64 den) {
  return mul<W>(num, inv<W>(den));
}

// Signed remainder (truncating, like LLVM srem) by den | 1, which is never
// zero. LLVM leaves INT_MIN srem -1 undefined; here it is 0, its value in Z.
template <unsigned W>
TILEVERIFY_HD constexpr u64 rem(u64 num, u64 den) {
  constexpr u64 s = u64{1} << (W - 1);
  const u64 n = wrap<W>(num), d = wrap<W>(den) | 1;
  const u64 n_abs = (n & s) ? wrap<W>(u64{0} - n) : n;  // 2^(w-1) for INT_MIN, still exact in 64 bits
  const u64 d_abs = (d & s) ? wrap<W>(u64{0} - d) : d;
  const u64 r = n_abs % d_abs;
  return (n & s) ? wrap<W>(u64{0} - r) : r;
}

// exp2(x) = (1 + 2^k)^x mod 2^w with k = ceil(w/4), in Triton's closed form
// 1 + x 2^k + C(x,2) 2^2k + C(x,3) 2^3k: from C(x,4) 2^4k on every term is
// 0 mod 2^w. That makes exp2 a homomorphism from (payloads, +) into the odd
// payloads under *, so exp2(a+b) = exp2(a) exp2(b) and exp2(-a) = 1/exp2(a).
template <unsigned W>
TILEVERIFY_HD constexpr u64 exp2(u64 x) {
  static_assert(W >= 8, "the closed form needs 3 ceil(w/4) <= w");
  constexpr unsigned k = (W + 3) / 4;
  x = wrap<W>(x);
  // x(x-1) is even, and the bit a w-bit product loses is shifted out by 2k.
  const u64 choose2 = wrap<W>(x * (x - 1)) >> 1;
  // Only the low w - 3k bits of C(x,3) survive the shift by 3k, and those
  // depend on x mod 2^(w-3k+1) only; reducing x first keeps x(x-1)(x-2)
  // exact (it stays below 2^w for every w in 8..64), so the division is exact.
  constexpr unsigned c3_bits = W - 3 * k;
  const u64 xl = x & detail::low_mask(c3_bits + 1);
  const u64 choose3 = (xl < 2) ? 0 : (xl * (xl - 1) * (xl - 2)) / 6;
  return wrap<W>(1 + (x << k) + (choose2 << (2 * k)) + (choose3 << (3 * k)));
}

// exp(x) = exp2(x R) with R = 0x236ee9bf truncated to w bits (Triton's
// "rcp_log2"); any fixed R keeps exp(a+b) = exp(a) exp(b).
template <unsigned W>
TILEVERIFY_HD constexpr u64 exp(u64 x) {
  return exp2<W>(mul<W>(x, 0x236ee9bfu));
}

// cos and sin: (cos x, sin x) = (a + b i)^x in (Z/2^w)[i] with
// a = -3/5, b = 4/5 (a^2 + b^2 = 1), by square-and-multiply from the top bit
// of x. Being a power map, it turns + into complex *, which is exactly the
// angle-addition formulas; the unit norm gives cos^2 + sin^2 = 1.
struct cos_sin_pair {
  u64 cos;
  u64 sin;
};
template <unsigned W>
TILEVERIFY_HD constexpr cos_sin_pair cos_sin(u64 x) {
  const u64 rcp5 = wrap<W>(detail::inv_odd_u64(5));
  const u64 a = wrap<W>(u64{0} - wrap<W>(3 * rcp5));
  const u64 b = wrap<W>(4 * rcp5);
  u64 c = 1, s = 0;
  for (unsigned i = W; i-- > 0;) {
    const u64 c2 = wrap<W>(c * c - s * s);
    const u64 s2 = wrap<W>(2 * c * s);
    if ((x >> i) & 1) {
      c = wrap<W>(a * c2 - b * s2);
      s = wrap<W>(a * s2 + b * c2);
    } else {
      c = c2;
      s = s2;
    }
  }
  return {c, s};
}
template <unsigned W>
TILEVERIFY_HD constexpr u64 cos(u64 x) {
  return cos_sin<W>(x).cos;
}
template <unsigned W>
TILEVERIFY_HD constexpr u64 sin(u64 x) {
  return cos_sin<W>(x).sin;
}

// ---------------------------------------------------------------------------
// Tagged unary ops: no algebra is modelled, only "same op, same input =>
// same output" and "different ops differ". The numbering is Triton's
// UnaryOpId; Exp, Exp2, Cos and Sin have real models above and are tagged
// only by Triton's fallback for non-float types, which cannot happen here.
// ---------------------------------------------------------------------------
enum class unary_op : std::uint64_t {
  exp = 0,
  log = 1,
  exp2 = 2,
  log2 = 3,
  cos = 4,
  sin = 5,
  sqrt = 6,
  rsqrt = 7,
  erf = 8,
  floor = 9,
  ceil = 10,
  precise_sqrt = 11,
};

// MurmurHash3's 64-bit finalizer (public domain constants).
TILEVERIFY_HD constexpr u64 murmur64_fmix(u64 h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdu;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53u;
  h ^= h >> 33;
  return h;
}

// ((x M) ^ H) M with M = 314159 (odd) and H = fmix(op id), both truncated to
// w bits: a bijection of the payloads, different for each op.
template <unsigned W>
TILEVERIFY_HD constexpr u64 tagged(u64 x, unary_op op) {
  const u64 m = wrap<W>(314159u);
  const u64 h = wrap<W>(murmur64_fmix(static_cast<u64>(op)));
  return mul<W>(mul<W>(x, m) ^ h, m);
}
template <unsigned W>
TILEVERIFY_HD constexpr u64 log(u64 x) {
  return tagged<W>(x, unary_op::log);
}
template <unsigned W>
TILEVERIFY_HD constexpr u64 log2(u64 x) {
  return tagged<W>(x, unary_op::log2);
}
template <unsigned W>
TILEVERIFY_HD constexpr u64 sqrt(u64 x) {
  return tagged<W>(x, unary_op::sqrt);
}
template <unsigned W>
TILEVERIFY_HD constexpr u64 rsqrt(u64 x) {
  return tagged<W>(x, unary_op::rsqrt);
}
template <unsigned W>
TILEVERIFY_HD constexpr u64 erf(u64 x) {
  return tagged<W>(x, unary_op::erf);
}
template <unsigned W>
TILEVERIFY_HD constexpr u64 floor(u64 x) {
  return tagged<W>(x, unary_op::floor);
}
template <unsigned W>
TILEVERIFY_HD constexpr u64 ceil(u64 x) {
  return tagged<W>(x, unary_op::ceil);
}
template <unsigned W>
TILEVERIFY_HD constexpr u64 precise_sqrt(u64 x) {
  return tagged<W>(x, unary_op::precise_sqrt);
}

// ---------------------------------------------------------------------------
// Casts between payload widths.
// ---------------------------------------------------------------------------
enum class cast_mode {
  folded,       // Triton's default narrowing
  homomorphic,  // module attribute triton.instrument.fpsan_homomorphic_casts
};

// Float-to-float conversion (extf, truncf, fp_to_fp). Widening is sign
// extension, so 0, 1 and -1 stay put. Default narrowing first xors the
// discarded high bits (normalised by the sign, times 3511) into the kept
// ones, so that two payloads differing only in high bits do not collapse;
// after a widening those bits are a pure sign copy, normalise to zero, and
// narrowing is exactly truncation again: narrow(widen(x)) = x in both modes.
// Same width (fp16 <-> bf16) keeps the payload.
template <unsigned Src, unsigned Dst>
TILEVERIFY_HD constexpr u64 cast(u64 v, cast_mode mode = cast_mode::folded) {
  v = wrap<Src>(v);
  if constexpr (Dst >= Src) {
    (void)mode;
    return wrap<Dst>(detail::sign_extend(v, Src));
  } else {
    if (mode == cast_mode::homomorphic) return wrap<Dst>(v);
    const u64 sgn = v >> (Src - 1);
    const u64 normalised = v ^ wrap<Src>(u64{0} - sgn);
    const u64 high = normalised >> Dst;
    return wrap<Dst>(v ^ wrap<Src>(high * 3511u));
  }
}

// Plain signed integer resize (sext or trunc): Triton's treatment of extern
// operands and of unpacked fp4 nibbles. Src may be any width 1..64 (an i1
// true sign-extends to all ones).
template <unsigned Src, unsigned Dst>
TILEVERIFY_HD constexpr u64 int_cast(u64 v) {
  return wrap<Dst>(detail::sign_extend(v, Src));
}

// ttg.fp4_to_fp: each nibble of a packed byte (low nibble first, it is the
// lower k index) becomes the payload 0..15 itself, not a decoded e2m1 value.
struct nibble_pair {
  u64 lo;
  u64 hi;
};
TILEVERIFY_HD constexpr nibble_pair unpack_fp4(std::uint8_t packed) {
  return {static_cast<u64>(packed & 0x0f), static_cast<u64>(packed >> 4)};
}

// ---------------------------------------------------------------------------
// Pure extern elementwise calls and elementwise inline asm: a structural tag.
// ---------------------------------------------------------------------------

// FNV-1a, 64 bit, over the bytes of a NUL-terminated string: Triton's
// stableStringHash, applied to the extern symbol (or the asm string).
TILEVERIFY_HD constexpr u64 stable_string_hash(const char* s) {
  u64 h = 14695981039346656037u;
  for (; *s != '\0'; ++s) {
    h ^= static_cast<u64>(static_cast<unsigned char>(*s));
    h *= 1099511628211u;
  }
  return h;
}

template <unsigned W>
TILEVERIFY_HD constexpr u64 rotl(u64 x, unsigned amount) {
  x = wrap<W>(x);
  amount %= W;
  if (amount == 0) return x;
  return wrap<W>((x << amount) | (x >> (W - amount)));
}

// sum_i rotl(operand_i, i) ^ hash. Operands must already be w-bit payloads:
// float operands embedded and resized with int_cast (not cast: Triton uses a
// plain sext/trunc here), integer operands int_cast from their own width.
template <unsigned W>
TILEVERIFY_HD constexpr u64 extern_elementwise(u64 symbol_hash, const u64* operands, std::size_t n) {
  u64 sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum = add<W>(sum, rotl<W>(operands[i], static_cast<unsigned>(i % W)));
  return wrap<W>(sum ^ symbol_hash);
}

// tt.elementwise_inline_asm with several results: result r uses hash ^ r.
template <unsigned W>
TILEVERIFY_HD constexpr u64 inline_asm_elementwise(u64 asm_hash, const u64* operands, std::size_t n,
                                                   unsigned result_index) {
  return extern_elementwise<W>(asm_hash ^ result_index, operands, n);
}

// ---------------------------------------------------------------------------
// dot / MMA: exact multiply-accumulate in the accumulator's ring. Operands are
// brought to the accumulator width with the float cast above (sign extension
// in every real case: fp16/bf16/fp8 inputs, fp32 accumulators).
// acc + sum_i a[i*sa] b[i*sb].
// ---------------------------------------------------------------------------
template <unsigned WAcc, unsigned WA, unsigned WB = WA>
TILEVERIFY_HD constexpr u64 dot(u64 acc, const u64* a, const u64* b, std::size_t k, std::size_t stride_a = 1,
                                std::size_t stride_b = 1) {
  u64 sum = 0;
  for (std::size_t i = 0; i < k; ++i)
    sum = add<WAcc>(sum, mul<WAcc>(cast<WA, WAcc>(a[i * stride_a]), cast<WB, WAcc>(b[i * stride_b])));
  return add<WAcc>(sum, acc);
}

// Row-major D[m][n] = C[m][n] + sum_k A[m][k] B[k][n] (C may alias D).
template <unsigned WAcc, unsigned WA, unsigned WB = WA>
TILEVERIFY_HD constexpr void mma(std::size_t m, std::size_t n, std::size_t k, const u64* a, const u64* b,
                                 const u64* c, u64* d) {
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) d[i * n + j] = dot<WAcc, WA, WB>(c[i * n + j], a + i * k, b + j, k, 1, n);
}

}  // namespace fpsan
}  // namespace tileverify
