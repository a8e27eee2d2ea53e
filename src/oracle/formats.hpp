// Binary float formats and integer ranges of the dtypes (internal to src/oracle).
#pragma once

#include "tileverify/program.hpp"

#include <cstdint>
#include <cstring>

namespace tileverify::oracle::detail {

// An IEEE-style binary format: `mant` stored fraction bits, `exp_bits`
// exponent bits, bias 2^(exp_bits-1) - 1 (bf16 is f32 with 16 fraction
// bits dropped, so the same description covers it).
struct FloatFormat {
  int mant;
  int exp_bits;
  int bias() const { return (1 << (exp_bits - 1)) - 1; }
  int emin() const { return 1 - bias(); }  // exponent of the smallest normal
  int emax() const { return bias(); }      // exponent of the largest finite
};

constexpr FloatFormat kF16{10, 5};
constexpr FloatFormat kBF16{7, 8};
constexpr FloatFormat kF32{23, 8};
constexpr FloatFormat kF64{52, 11};

// The format of a float dtype; false for the others.
inline bool float_format(DType t, FloatFormat* f) {
  switch (t) {
    case DType::F16: *f = kF16; return true;
    case DType::BF16: *f = kBF16; return true;
    case DType::F32: *f = kF32; return true;
    case DType::F64: *f = kF64; return true;
    default: return false;
  }
}

inline std::uint64_t double_bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, 8);
  return b;
}
inline double bits_double(std::uint64_t b) {
  double x;
  std::memcpy(&x, &b, 8);
  return x;
}

// Bits of the format nearest to x (see f16_bits in oracle.hpp).
std::uint64_t encode_float(double x, FloatFormat f, int residual);
double decode_float(std::uint64_t bits, FloatFormat f);

// Integer dtypes (the B types as unsigned, Pred as 0/1): bit width and signedness.
struct IntFormat {
  int bits;
  bool is_signed;
  bool pred;
};
IntFormat int_format(DType t);

}  // namespace tileverify::oracle::detail
