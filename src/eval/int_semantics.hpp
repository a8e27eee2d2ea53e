// What an integer instruction computes from concrete operands. One
// definition for two users: the machine (machine_arith.cpp) runs it on a
// thread's registers, and the CTA-class check (cta_affine.cpp) runs it again
// on another CTA's operands to see whether that CTA takes the same path.
// Internal to the library.
#pragma once

#include "tileverify/expr.hpp"
#include "tileverify/program.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace tileverify::machine {

inline std::uint64_t int_mask(DType t) {
  const std::size_t bits = dtype_bytes(t) * 8;
  return bits >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << bits) - 1;
}

// v cut to type t's width, sign-extended for signed types: how the machine
// keeps every integer (a .pred is 0 or 1).
inline std::int64_t wrap_int(std::int64_t v, DType t) {
  const std::size_t bits = dtype_bytes(t) * 8;
  if (t == DType::Pred) return v != 0;
  if (bits >= 64) return v;
  const std::uint64_t m = (std::uint64_t(1) << bits) - 1;
  std::uint64_t u = std::uint64_t(v) & m;
  if (dtype_is_signed(t) && (u >> (bits - 1))) u |= ~m;
  return std::int64_t(u);
}

// a cmp b at type t: signed types compare as signed, the others as unsigned.
inline bool int_compare(Cmp c, DType t, std::int64_t a, std::int64_t b) {
  if (dtype_is_signed(t)) return apply_cmp(c, a, b);
  return apply_cmp(c, std::uint64_t(wrap_int(a, t)) & int_mask(t), std::uint64_t(wrap_int(b, t)) & int_mask(t));
}

enum class IntResult : std::uint8_t { Ok, DivisionByZero, NotInteger };

// in on integer sources x[0 .. in.src.size()) into *r: the ALU operations,
// setp (1 or 0) and an integer-to-integer cvt. NotInteger: an opcode this
// does not compute (the caller's error).
inline IntResult int_apply(const Instr& in, const std::int64_t* x, std::int64_t* r) {
  const DType ty = in.type;
  const bool sg = dtype_is_signed(ty);
  const std::uint64_t ux = std::uint64_t(wrap_int(x[0], ty)) & int_mask(ty);
  auto u = [&](std::size_t i) { return std::uint64_t(wrap_int(x[i], ty)) & int_mask(ty); };
  switch (in.op) {
    case Opcode::Add: *r = wrap_int(x[0] + x[1], ty); return IntResult::Ok;
    case Opcode::Sub: *r = wrap_int(x[0] - x[1], ty); return IntResult::Ok;
    case Opcode::Mul: *r = wrap_int(std::int64_t(std::uint64_t(x[0]) * std::uint64_t(x[1])), ty); return IntResult::Ok;
    case Opcode::MulWide:
      *r = sg ? wrap_int(wrap_int(x[0], ty) * wrap_int(x[1], ty), DType::S64) : std::int64_t(ux * u(1));
      return IntResult::Ok;
    case Opcode::MulHi: {
      __extension__ typedef __int128 i128;
      const i128 p = sg ? i128(wrap_int(x[0], ty)) * i128(wrap_int(x[1], ty)) : i128(ux) * i128(u(1));
      *r = wrap_int(std::int64_t(p >> (dtype_bytes(ty) * 8)), ty);
      return IntResult::Ok;
    }
    case Opcode::Mad:
      *r = wrap_int(std::int64_t(std::uint64_t(x[0]) * std::uint64_t(x[1]) + std::uint64_t(x[2])), ty);
      return IntResult::Ok;
    case Opcode::MadWide: {
      const std::int64_t p = sg ? wrap_int(x[0], ty) * wrap_int(x[1], ty) : std::int64_t(ux * u(1));
      *r = wrap_int(p + x[2], sg ? DType::S64 : DType::U64);
      return IntResult::Ok;
    }
    case Opcode::Div:
    case Opcode::Rem: {
      if (x[1] == 0) return IntResult::DivisionByZero;
      if (sg) {
        const std::int64_t a = wrap_int(x[0], ty), b = wrap_int(x[1], ty);
        // b == 0 after the cut to the type's width; INT64_MIN / -1
        // overflows (and would trap the host)
        if (b == 0 || (b == -1 && a == INT64_MIN)) return IntResult::DivisionByZero;
        *r = wrap_int(in.op == Opcode::Div ? a / b : a % b, ty);
        return IntResult::Ok;
      }
      const std::uint64_t ub = u(1);
      if (ub == 0) return IntResult::DivisionByZero;
      *r = wrap_int(std::int64_t(in.op == Opcode::Div ? ux / ub : ux % ub), ty);
      return IntResult::Ok;
    }
    case Opcode::Min:
    case Opcode::Max: {
      const bool lt = sg ? wrap_int(x[0], ty) < wrap_int(x[1], ty) : ux < u(1);
      const bool take_x = in.op == Opcode::Min ? lt : !lt;
      *r = wrap_int(take_x ? x[0] : x[1], ty);
      return IntResult::Ok;
    }
    case Opcode::Bfi:
    case Opcode::Bfe: {
      const std::size_t bits = dtype_bytes(ty) * 8;
      std::int64_t pos = x[in.op == Opcode::Bfi ? 2 : 1] & 0xff, len = x[in.op == Opcode::Bfi ? 3 : 2] & 0xff;
      if (pos >= std::int64_t(bits) || len == 0) {
        *r = in.op == Opcode::Bfi ? wrap_int(x[1], ty) : 0;
        return IntResult::Ok;
      }
      if (pos + len > std::int64_t(bits)) len = std::int64_t(bits) - pos;
      const std::uint64_t field = len >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << len) - 1;
      if (in.op == Opcode::Bfi) {
        const std::uint64_t b = std::uint64_t(x[1]);
        *r = wrap_int(std::int64_t((b & ~(field << pos)) | ((std::uint64_t(x[0]) & field) << pos)), ty);
        return IntResult::Ok;
      }
      std::uint64_t f = (ux >> pos) & field;
      if (sg && (f >> (len - 1) & 1)) f |= ~field;  // sign-extend the field
      *r = wrap_int(std::int64_t(f), ty);
      return IntResult::Ok;
    }
    case Opcode::Neg: *r = wrap_int(-x[0], ty); return IntResult::Ok;
    case Opcode::Abs: *r = wrap_int(x[0] < 0 ? -x[0] : x[0], ty); return IntResult::Ok;
    case Opcode::And: *r = wrap_int(x[0] & x[1], ty); return IntResult::Ok;
    case Opcode::Or: *r = wrap_int(x[0] | x[1], ty); return IntResult::Ok;
    case Opcode::Xor: *r = wrap_int(x[0] ^ x[1], ty); return IntResult::Ok;
    case Opcode::Not: *r = ty == DType::Pred ? x[0] == 0 : wrap_int(~x[0], ty); return IntResult::Ok;  // not.pred is logical
    // The shift amount is a .u32 operand; amounts past the width are
    // clamped to it (PTX ISA, shl and shr): a register written as negative
    // by an s32 instruction is a huge amount.
    case Opcode::Shl: {
      const std::uint64_t s = std::uint64_t(x[1]) & 0xffffffffu;
      *r = s >= dtype_bytes(ty) * 8 ? 0 : wrap_int(std::int64_t(std::uint64_t(x[0]) << s), ty);
      return IntResult::Ok;
    }
    case Opcode::Shr: {
      const std::int64_t s = std::int64_t(std::min<std::uint64_t>(std::uint64_t(x[1]) & 0xffffffffu,
                                                                  dtype_bytes(ty) * 8 - 1 + (sg ? 0 : 1)));
      if (sg) *r = wrap_int(wrap_int(x[0], ty) >> s, ty);
      else *r = s >= std::int64_t(dtype_bytes(ty) * 8) ? 0 : std::int64_t(ux >> s);
      return IntResult::Ok;
    }
    case Opcode::Setp: *r = int_compare(in.cmp, ty, x[0], x[1]); return IntResult::Ok;
    case Opcode::Cvt: *r = wrap_int(wrap_int(x[0], in.src_type), ty); return IntResult::Ok;
    default: return IntResult::NotInteger;
  }
}

}  // namespace tileverify::machine
