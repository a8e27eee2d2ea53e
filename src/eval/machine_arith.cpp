// Machine<D>: arithmetic instructions on integers, floats, integer tensor
// data and pointers (mov, cvt, selp, setp and the ALU operations).
#include "machine.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace tileverify::machine {

// The float with these bits in format `type` (f32 unless f64, f16 or bf16); none for NaN.
template <class D>
auto Machine<D>::from_bits(std::uint64_t bits, DType type) -> std::optional<V> {
  if (type == DType::F16 || type == DType::BF16) {
    std::uint16_t h = std::uint16_t(bits);
    bool special = type == DType::F16 ? (h & 0x7c00u) == 0x7c00u : (h & 0x7f80u) == 0x7f80u;
    std::uint16_t frac = type == DType::F16 ? (h & 0x3ffu) : (h & 0x7fu);
    if (special) return frac ? std::nullopt : std::optional<V>(d_.infinity(h >> 15));
    return d_.constant(type == DType::F16 ? Rational::from_f16_bits(h) : Rational::from_bf16_bits(h));
  }
  if (type != DType::F64 && (bits & 0x7fffffffu) == 0x7f800000u) return d_.infinity(bits >> 31 & 1);
  if (type == DType::F64 && (bits & 0x7fffffffffffffffull) == 0x7ff0000000000000ull) return d_.infinity(bits >> 63);
  try {
    if (type == DType::F64) return d_.constant(Rational::from_f64_bits(bits));
    return d_.constant(Rational::from_f32_bits(std::uint32_t(bits)));
  } catch (const std::domain_error&) {
    return std::nullopt;
  }
}

template <class D>
void Machine<D>::compute(std::uint32_t t, const Instr& in) {
  if constexpr (kMemo) {
    if (!chain_of_.empty()) {
      const ChainLink& link = chain_of_[std::size_t(&in - p_.code.data())];
      if (link.chain != kNone && (shadows_ ? shadow_chain_step(t, in, link) : chain_step(t, in, link))) return;
    }
    if (shadows_) {
      if (shadow_compute(t, in)) return;
      // A move of a whole shadow (mov, or a cvt between float formats, the
      // identity on reals) moves it as it is.
      if (in.src.size() == 1 && in.dst.size() == 1 && in.src[0].kind == Operand::Kind::Reg &&
          reg(t, in.src[0].index).kind == VKind::Shadow &&
          (in.op == Opcode::Mov || (in.op == Opcode::Cvt && dtype_is_float(in.type) && dtype_is_float(in.src_type) &&
                                    !in.saturate && in.mode != 1))) {
        reg(t, in.dst[0]) = reg(t, in.src[0].index);
        return;
      }
    }
    // One thread has no other thread to follow: its repeats are the
    // context's to find.
    if (n_ > 1 && memo_compute(t, in)) return;
  }
  auto src = [&](std::size_t i) { return operand(t, in.src[i]); };
  const DType ty = in.type;
  const bool fl = dtype_is_float(ty);
  Val<V> out;
  switch (in.op) {
    case Opcode::Mov:
      if (in.src.size() == 2) {  // mov.b32 d, {lo, hi}: pack two halves
        Val<V> lo = src(0), hi = src(1);
        if (dtype_bytes(p_.registers[in.dst[0]].dtype) == 8 && lo.kind == VKind::Int && hi.kind == VKind::Int) {
          // mov.b64 d, {lo, hi} of two 32-bit integers (CuTe adds an offset
          // to the low word of a wgmma descriptor so): their bits side by side
          if (__builtin_expect((lo.aff | hi.aff) != 0, 0)) affine_break(t, "a 64-bit value packed from words that depend on the CTA index");
          out = int_val(std::int64_t((std::uint64_t(lo.i) & 0xffffffffu) | std::uint64_t(hi.i) << 32));
          break;
        }
        if (p_.registers[in.dst[0]].dtype == DType::F32 && lo.kind == VKind::Int && lo.i == 0) {
          // mov.b32 %f, {0, %h}: a bf16 widened to f32 (its bits are the f32's high half), as
          // __bfloat162float does it
          out = float_val(as_float(t, hi, DType::BF16));
          break;
        }
        out.kind = VKind::Pair;
        out.f = as_float(t, lo, DType::F16);
        out.g = as_float(t, hi, DType::F16);
        break;
      }
      if (in.dst.size() == 2) {  // mov.b32 {lo, hi}, s: unpack
        Val<V> v = src(0);
        if (v.kind == VKind::Int && dtype_bytes(in.type) == 8) {  // mov.b64 {lo, hi}, x: x's two 32-bit words
          if (__builtin_expect(v.aff != 0, 0)) affine_break(t, "a 64-bit value split into words depends on the CTA index");
          const std::uint64_t x = std::uint64_t(v.i);
          if (in.dst[0] != kNoReg) set(t, in.dst[0], int_val(std::int64_t(x & 0xffffffffu)));
          if (in.dst[1] != kNoReg) set(t, in.dst[1], int_val(std::int64_t(x >> 32)));
          return;
        }
        if (v.kind != VKind::Pair) fail(DiagKind::Unsupported, t, "unpacking a register that holds no pair of halves");
        if (in.dst[0] != kNoReg) set(t, in.dst[0], float_val(v.f));  // kNoReg: the sink '_'
        if (in.dst[1] != kNoReg) set(t, in.dst[1], float_val(v.g));
        return;
      }
      out = src(0);
      break;
    case Opcode::Cvt: {
      if (in.src.size() == 2) {  // cvt.{f16,bf16}x2.f32 d, a, b: a to the high half, b to the low
        V hi = as_float(t, src(0), in.src_type), lo = as_float(t, src(1), in.src_type);
        if (in.mode == 1) {  // .relu
          hi = d_.max(hi, d_.constant(Rational(0)));
          lo = d_.max(lo, d_.constant(Rational(0)));
        }
        out.kind = VKind::Pair;
        out.f = lo;
        out.g = hi;
        break;
      }
      Val<V> a = src(0);
      if (a.kind == VKind::Ptr) {
        out = a;
      } else if (dtype_is_float(ty) && dtype_is_float(in.src_type)) {
        out = float_val(cvt_float(in, as_float(t, a, in.src_type)));  // reals: float-format casts are the identity
      } else if (a.kind == VKind::Data && !dtype_is_float(in.src_type)) {
        // Integer data: the real it converts to (rounding aside), and
        // integer-to-integer conversions keep the value (no wraparound).
        out = dtype_is_float(ty) ? float_val(a.f) : a;
      } else if (dtype_is_float(ty)) {
        if (__builtin_expect(a.aff != 0, 0)) affine_break(t, "a float computed from the CTA index");
        out = float_val(d_.constant(Rational(as_int(t, a, "an int-to-float conversion"))));
      } else if (dtype_is_float(in.src_type)) {
        fail(DiagKind::NotStructured, t, "a float-to-int conversion of tensor data");
      } else {
        const std::int64_t x = as_int(t, a, "a conversion");
        out = int_val(wrap(wrap(x, in.src_type), ty));
        if (__builtin_expect(aff_ != nullptr, 0) && a.aff) affine_int(t, in, &x, &a.aff, 1, out);
      }
      break;
    }
    case Opcode::Selp: {
      Val<V> a = src(0), b = src(1), p = src(2);
      if (p.kind == VKind::Cond) {
        if (!fl && (a.kind == VKind::Data || b.kind == VKind::Data || (a.kind == VKind::Int && b.kind == VKind::Int))) {
          out = data_val(d_.select(p.cmp, p.f, p.g, as_data(t, a, ty, "a selp operand"), as_data(t, b, ty, "a selp operand")));
          break;
        }
        if (!fl && !(a.kind == VKind::Float && b.kind == VKind::Float))
          fail(DiagKind::NotStructured, t, "an integer selected by tensor data");
        out = float_val(d_.select(p.cmp, p.f, p.g, as_float(t, a, ty), as_float(t, b, ty)));
      } else {
        if (__builtin_expect(p.aff != 0, 0)) affine_break(t, "a selp predicate depends on the CTA index");
        out = as_int(t, p, "a selp predicate") ? a : b;
      }
      break;
    }
    case Opcode::Setp: {
      Val<V> a = src(0), b = src(1);
      if (fl) {
        out.kind = VKind::Cond;
        out.cmp = in.cmp;
        out.f = as_float(t, a, ty);
        out.g = as_float(t, b, ty);
        if constexpr (std::is_same<D, SymbolicDomain>::value) {
          // Two known reals (a launch's concrete scalars and immediates:
          // CUTLASS's epilogue tests beta != 0): the comparison is decided
          // exactly, and a branch on it is the launch's, not the data's.
          ExprContext& c = d_.context();
          if (c.is_constant(out.f) && c.is_constant(out.g)) {
            out = int_val(apply_cmp(in.cmp, c.constant_value(out.f), c.constant_value(out.g)) ? 1 : 0);
            break;
          }
        }
      } else if (a.kind == VKind::Data || b.kind == VKind::Data) {
        out.kind = VKind::Cond;
        out.cmp = in.cmp;
        out.f = as_data(t, a, ty, "a comparison");
        out.g = as_data(t, b, ty, "a comparison");
      } else if (a.kind == VKind::Ptr || b.kind == VKind::Ptr) {
        out = int_val(compare_pointers(t, in, a, b));
        if (__builtin_expect(aff_ != nullptr, 0) && (a.aff | b.aff)) {
          if (a.kind == VKind::Ptr && b.kind == VKind::Ptr && a.buf == b.buf) {
            const std::int64_t xs[2] = {a.i, b.i};
            const std::uint32_t ls[2] = {a.aff, b.aff};
            aff_->check(CtaAffineLog::Kind::PtrCompare, pc_[t], 2, xs, ls, out.i, 0);
            if (aff_->broken()) aff_ = nullptr;
          } else {
            affine_break(t, "a pointer comparison that depends on the CTA index");
          }
        }
      } else {
        std::int64_t xs[2] = {as_int(t, a, "a comparison"), as_int(t, b, "a comparison")};
        out = int_val(int_compare(in.cmp, ty, xs[0], xs[1]));
        if (__builtin_expect(aff_ != nullptr, 0) && (a.aff | b.aff)) {
          const std::uint32_t ls[2] = {a.aff, b.aff};
          affine_int(t, in, xs, ls, 2, out);
        }
      }
      break;
    }
    case Opcode::Fence:
      // No happens-before edge and nothing else to do: within a thread,
      // program order already holds, and between threads a fence orders
      // only together with synchronizing accesses (docs/evaluator.md, "Fences").
      return;
    case Opcode::Unsupported: {
      // Reached: what the run found before it stands (take_diagnostics
      // ranks it above this), the rest of the kernel is not verified.
      fail(DiagKind::Unsupported, t, p_.unsupported_of(in).why);
    }
    default:
      out = fl ? float_op(t, in) : int_op(t, in);
  }
  set(t, in.dst[0], out);
}

template <class D>
auto Machine<D>::float_op(std::uint32_t t, const Instr& in) -> Val<V> {
  V r;
  if (float_apply(in.op, [&](std::size_t i) { return as_float(t, operand(t, in.src[i]), in.type); }, &r))
    return float_val(r);
  fail(DiagKind::Unsupported, t, std::string(opcode_name(in.op)) + " on float type " + dtype_name(in.type));
}

// A comparison with a pointer operand (a bounds check on pointers, a null
// test): two pointers into one buffer compare their offsets; into different
// buffers, or against the null pointer, only equality is known (a buffer is
// never at address 0 and buffers do not overlap), not their order.
template <class D>
bool Machine<D>::compare_pointers(std::uint32_t t, const Instr& in, const Val<V>& a, const Val<V>& b) {
  if (a.kind == VKind::Ptr && b.kind == VKind::Ptr && a.buf == b.buf) return apply_cmp(in.cmp, a.i, b.i);
  // Shared pointers have addresses (the shared window): compared with each
  // other or with integers, as integers. Any other pointer's address is not modelled.
  auto shared_or_int = [&](const Val<V>& v) {
    return v.kind == VKind::Int || (v.kind == VKind::Ptr && mem_[v.buf].space == Space::Shared && !mem_[v.buf].per_thread);
  };
  if (shared_or_int(a) && shared_or_int(b)) {
    const DType ty = in.type;
    const std::int64_t x = a.kind == VKind::Ptr ? window_int(t, a, "a comparison") : as_int(t, a, "a comparison");
    const std::int64_t y = b.kind == VKind::Ptr ? window_int(t, b, "a comparison") : as_int(t, b, "a comparison");
    return dtype_is_signed(ty) ? apply_cmp(in.cmp, wrap(x, ty), wrap(y, ty))
                               : apply_cmp(in.cmp, std::uint64_t(wrap(x, ty)) & mask(ty), std::uint64_t(wrap(y, ty)) & mask(ty));
  }
  const bool null_test = (a.kind == VKind::Int && a.i == 0) || (b.kind == VKind::Int && b.i == 0);
  if ((a.kind == VKind::Ptr && b.kind == VKind::Ptr) || null_test) {
    if (in.cmp == Cmp::EQ) return false;
    if (in.cmp == Cmp::NE) return true;
    fail(DiagKind::NotStructured, t,
         null_test ? "an ordered comparison of a pointer with the null pointer (its address is not modelled)"
                   : "an ordered comparison of pointers into different buffers (their addresses are not modelled)");
  }
  fail(DiagKind::NotStructured, t, "a comparison of a pointer with an integer: its address is not modelled");
}

template <class D>
auto Machine<D>::int_op(std::uint32_t t, const Instr& in) -> Val<V> {
  const DType ty = in.type;
  Val<V> a = operand(t, in.src[0]);
  // Pointer arithmetic: pointer +- integer, pointer - pointer.
  if (in.op == Opcode::Add || in.op == Opcode::Sub) {
    Val<V> b = operand(t, in.src[1]);
    if (a.kind == VKind::Ptr || b.kind == VKind::Ptr) {
      if (a.kind == VKind::Ptr && b.kind == VKind::Ptr && in.op == Opcode::Sub && a.buf == b.buf) {
        Val<V> d = int_val(a.i - b.i);
        if (__builtin_expect(aff_ != nullptr, 0) && (a.aff | b.aff)) affine_move(a.aff, b.aff, true, &d.aff);
        return d;
      }
      if (b.kind == VKind::Ptr && in.op == Opcode::Add) std::swap(a, b);
      if (a.kind != VKind::Ptr || b.kind == VKind::Ptr)
        fail(DiagKind::NotStructured, t, "arithmetic between two pointers");
      std::int64_t off = as_int(t, b, "a pointer offset");
      a.i = in.op == Opcode::Add ? a.i + off : a.i - off;
      if (__builtin_expect(aff_ != nullptr, 0) && b.aff) affine_move(a.aff, b.aff, in.op == Opcode::Sub, &a.aff);
      return a;
    }
  }
  // a*b + pointer: nvcc's shared-memory addressing (mad.lo.s64), and
  // Triton's index times element size plus base (mad.wide.s32 d, i, 4, p):
  // the product at the instruction's width, widened, added to the offset.
  if ((in.op == Opcode::Mad || in.op == Opcode::MadWide) && in.src.size() == 3) {
    Val<V> c = operand(t, in.src[2]);
    if (c.kind == VKind::Ptr) {
      const Val<V> b = operand(t, in.src[1]);
      const std::int64_t x = as_int(t, a, "a pointer offset"), y = as_int(t, b, "a pointer offset");
      std::int64_t p;
      if (in.op == Opcode::MadWide) {
        const bool sg = dtype_is_signed(ty);
        p = sg ? wrap(x, ty) * wrap(y, ty)
               : std::int64_t((std::uint64_t(wrap(x, ty)) & mask(ty)) * (std::uint64_t(wrap(y, ty)) & mask(ty)));
      } else {
        p = x * y;
      }
      c.i += p;
      if (__builtin_expect(aff_ != nullptr, 0) && (a.aff | b.aff)) affine_product(t, in, x, y, a.aff, b.aff, p, &c.aff);
      return c;
    }
  }
  for (const Operand& o : in.src)
    if (o.kind == Operand::Kind::Reg && reg(t, o.index).kind == VKind::Data) return data_op(t, in);
  // Any other operation on a pointer into shared memory (a bit field of it,
  // a mask, a shift: how compilers build wgmma matrix descriptors) operates
  // on its address in the shared window; the result is an integer.
  std::int64_t x = a.kind == VKind::Ptr ? window_int(t, a, "integer arithmetic") : as_int(t, a, "integer arithmetic");
  auto y = [&](std::size_t i) {
    const Val<V> v = operand(t, in.src[i]);
    return v.kind == VKind::Ptr ? window_int(t, v, "integer arithmetic") : as_int(t, v, "integer arithmetic");
  };
  // The operation itself: int_semantics.hpp.
  std::int64_t xs[4] = {x, 0, 0, 0};
  const std::size_t n = std::min<std::size_t>(in.src.size(), 4);
  for (std::size_t i = 1; i < n; ++i) xs[i] = y(i);
  std::int64_t r = 0;
  switch (int_apply(in, xs, &r)) {
    case IntResult::Ok: {
      Val<V> out = int_val(r);
      if (__builtin_expect(aff_ != nullptr, 0)) {
        std::uint32_t ls[4] = {a.aff, 0, 0, 0};
        bool moves = a.aff != 0;
        for (std::size_t i = 1; i < n; ++i) moves |= (ls[i] = operand(t, in.src[i]).aff) != 0;
        if (moves) affine_int(t, in, xs, ls, n, out);
      }
      return out;
    }
    case IntResult::DivisionByZero: fail(DiagKind::Unsupported, t, "integer division by zero");
    case IntResult::NotInteger: break;
  }
  fail(DiagKind::Unsupported, t, std::string(opcode_name(in.op)) + " on integer type " + dtype_name(ty));
}


// Arithmetic on integer tensor data, over the integers: the ring
// operations, min/max and shifts left by a known amount. Bit operations,
// division and high halves of products depend on the binary representation
// (or on wraparound), which the model does not have.
template <class D>
auto Machine<D>::data_op(std::uint32_t t, const Instr& in) -> Val<V> {
  const DType ty = in.type;
  auto x = [&](std::size_t i) { return as_data(t, operand(t, in.src[i]), ty, "integer arithmetic"); };
  switch (in.op) {
    case Opcode::Add: return data_val(d_.add(x(0), x(1)));
    case Opcode::Sub: return data_val(d_.sub(x(0), x(1)));
    case Opcode::Mul:
    case Opcode::MulWide: return data_val(d_.mul(x(0), x(1)));
    case Opcode::Mad:
    case Opcode::MadWide: return data_val(d_.add(d_.mul(x(0), x(1)), x(2)));
    case Opcode::Neg: return data_val(d_.neg(x(0)));
    case Opcode::Abs: return data_val(d_.abs(x(0)));
    case Opcode::Min: return data_val(d_.min(x(0), x(1)));
    case Opcode::Max: return data_val(d_.max(x(0), x(1)));
    case Opcode::Shl: {
      Val<V> s = operand(t, in.src[1]);
      if (s.kind == VKind::Int && s.i >= 0 && s.i < 63)
        return data_val(d_.mul(x(0), d_.constant(Rational(std::int64_t(1) << s.i))));
      break;
    }
    default: break;
  }
  fail(DiagKind::NotStructured, t,
       std::string(opcode_name(in.op)) + "." + dtype_name(ty) +
           " on integer tensor data (integer data is modelled as mathematical integers: add, sub, mul, mad, "
           "min, max, neg, abs and shl by a constant; not its bits)");
}

template class Machine<SymbolicDomain>;
template class Machine<ConcreteDomain>;
template class Machine<PayloadDomain>;

}  // namespace tileverify::machine
