// Machine<D>: how integers move with the CTA index, in a run that records it
// for CTA classes (cta_affine.hpp says what is recorded and why it is sound).
#include "machine.hpp"

#include <algorithm>

namespace tileverify::machine {

namespace {

// Operations exact modulo 2^n: their result is v0 + L·(c - c0) as long as
// that stays in the type's range (for mul, mad and shl: when the multiplier
// does not move).
bool ring_op(Opcode op) {
  switch (op) {
    case Opcode::Add:
    case Opcode::Sub:
    case Opcode::Neg:
    case Opcode::Not:
    case Opcode::Mul:
    case Opcode::Mad:
    case Opcode::Shl: return true;
    default: return false;
  }
}

}  // namespace

template <class D>
void Machine<D>::affine_int(std::uint32_t t, const Instr& in, const std::int64_t* x, const std::uint32_t* l,
                            std::size_t n, Val<V>& out) {
  if (!aff_) return;
  CtaAffineLog& log = *aff_;
  const std::uint32_t pc = pc_[t];
  // The move of the result. `exact`: it is v0 + lr·(c - c0) in every CTA
  // whose values stay in the ranges recorded (for the ring operations, and
  // for those that read a moving operand at a type that holds it: the
  // operand's range at that type is recorded too). Otherwise lr is a guess
  // that a check decides per CTA (a comparison: the same outcome, lr = 0).
  std::uint32_t lr = 0;
  bool exact = ring_op(in.op);
  bool ok = true;
  const DType ty = in.type;
  // mul.wide and mad.wide read their factors at the instruction's type
  // (a register written as -1 by an s32 instruction is 2^32 - 1 to a
  // mul.wide.u32); the others are exact modulo 2^n on the bits as they are.
  const bool wide = in.op == Opcode::MulWide || in.op == Opcode::MadWide;
  auto factor = [&](std::size_t k) {
    if (!wide) return x[k];
    return dtype_is_signed(ty) ? wrap(x[k], ty) : std::int64_t(std::uint64_t(wrap(x[k], ty)) & mask(ty));
  };
  auto product = [&](std::uint32_t* into) {  // x0·x1's move, if one factor does not move
    if (l[1] == 0) return log.scale(l[0], factor(1), into);
    if (l[0] == 0) return log.scale(l[1], factor(0), into);
    exact = false;  // a product of two moving values is no affine function: checked per CTA
    *into = 0;
    return true;
  };
  // Operand k, read at type t, holds its value there in every CTA of the class.
  auto operand_in = [&](std::size_t k, DType t) {
    if (l[k] != 0) log.range(pc, l[k], x[k], t, unsigned(k) + 1);
  };
  switch (in.op) {
    case Opcode::Add: ok = log.add(l[0], l[1], &lr); break;
    case Opcode::Sub: ok = log.add(l[0], l[1], &lr, true); break;
    case Opcode::Neg:
    case Opcode::Not: ok = log.scale(l[0], -1, &lr); break;
    case Opcode::Mul: ok = product(&lr); break;
    case Opcode::MulWide:
    case Opcode::MadWide: {
      // The factors are read at the instruction's type, the product is wide.
      exact = true;
      std::uint32_t p = 0;
      ok = product(&p) && (in.op == Opcode::MulWide ? (lr = p, true) : log.add(p, n > 2 ? l[2] : 0, &lr));
      operand_in(0, ty);
      operand_in(1, ty);
      break;
    }
    case Opcode::Mad: {
      std::uint32_t p = 0;
      ok = product(&p) && log.add(p, n > 2 ? l[2] : 0, &lr);
      break;
    }
    case Opcode::Shl:
      if (l[1] != 0 || x[1] < 0 || x[1] > 62) {
        exact = false;
      } else {
        ok = log.scale(l[0], std::int64_t(1) << x[1], &lr);
      }
      break;
    case Opcode::Bfi: {
      // bfi d, a, b, pos, len with the field reaching the top bit (PTX ISA,
      // bfi: bits pos .. pos + len - 1 of b, cut at its msb, are a's low
      // bits): d = b mod 2^pos + a·2^pos mod 2^n, a shl of a plus a
      // constant when b, pos and len do not move. nvcc writes
      // blockIdx.y * 32 + threadIdx.x % 32 so (bfi.b32 d, ctaid, tid & 31, 5, 27).
      const std::int64_t bits = std::int64_t(dtype_bytes(ty)) * 8, pos = x[2] & 0xff, len = x[3] & 0xff;
      exact = l[1] == 0 && l[2] == 0 && l[3] == 0 && pos < bits && pos + len >= bits && pos <= 62;
      if (exact) ok = log.scale(l[0], std::int64_t(1) << pos, &lr);
      break;
    }
    case Opcode::Shr:
    case Opcode::Div: {
      // Exact when the divisor divides every step: floor((v + k·q) / k) =
      // floor(v / k) + q. shr rounds down at any sign and so does an
      // unsigned division; a signed one rounds toward zero (checked).
      const std::int64_t k = in.op == Opcode::Div ? x[1] : (x[1] >= 0 && x[1] < 63 ? std::int64_t(1) << x[1] : 0);
      const CtaAffineLog::Vec& v = log.vec(l[0]);
      if (l[1] == 0 && k > 0 && v[0] % k == 0 && v[1] % k == 0 && v[2] % k == 0) {
        lr = log.intern(CtaAffineLog::Vec{v[0] / k, v[1] / k, v[2] / k});
        exact = in.op == Opcode::Shr || !dtype_is_signed(ty);
        if (exact) operand_in(0, ty);
      }
      break;
    }
    case Opcode::Rem:
      // x mod k moves with x while x stays within one multiple of k (the
      // quotient's division, pinned, says so): a 1D grid's pid % grid_n is
      // the column of a row of tiles.
      if (l[1] == 0) lr = l[0];
      break;
    case Opcode::Or:
    case Opcode::Xor: ok = log.add(l[0], l[1], &lr); break;  // of disjoint bits: an add
    case Opcode::Min:
    case Opcode::Max: lr = out.i == wrap(x[0], ty) ? l[0] : l[1]; break;
    case Opcode::Abs: ok = log.scale(l[0], wrap(x[0], ty) < 0 ? -1 : 1, &lr); break;
    case Opcode::Cvt:
      // An integer conversion keeps the value while it fits both types.
      lr = l[0];
      exact = true;
      operand_in(0, in.src_type);
      break;
    default: lr = 0; break;  // setp (the same outcome), rem, and, bfe, mul.hi: the same result
  }
  if (!ok) {
    aff_ = nullptr;
    return;
  }
  out.aff = lr;
  if (exact) {
    if (lr != 0) log.range(pc, lr, out.i, in.op == Opcode::MulWide || in.op == Opcode::MadWide
                                             ? (dtype_is_signed(ty) ? DType::S64 : DType::U64)
                                             : ty);
  } else {
    log.check(CtaAffineLog::Kind::Instr, pc, n, x, l, out.i, lr);
  }
  if (log.broken()) aff_ = nullptr;
}

template <class D>
void Machine<D>::affine_product(std::uint32_t t, const Instr& in, std::int64_t x, std::int64_t y, std::uint32_t la,
                                std::uint32_t lb, std::int64_t p, std::uint32_t* out) {
  CtaAffineLog& log = *aff_;
  std::uint32_t lp = 0;
  // mad.wide reads its factors at the instruction's type (as affine_int's).
  const DType ty = in.type;
  auto factor = [&](std::int64_t v) {
    if (in.op != Opcode::MadWide) return v;
    return dtype_is_signed(ty) ? wrap(v, ty) : std::int64_t(std::uint64_t(wrap(v, ty)) & mask(ty));
  };
  bool ok = lb == 0 ? log.scale(la, factor(y), &lp) : la == 0 ? log.scale(lb, factor(x), &lp) : false;
  if (!ok && !log.broken() && in.op != Opcode::MadWide) {
    affine_break(t, "a pointer offset is a product of two values that depend on the CTA index");
    return;
  }
  if (in.op == Opcode::MadWide) {
    // The factors are read at the instruction's (narrow) type: whether that
    // stays the same in another CTA is checked there.
    const std::int64_t xs[2] = {x, y};
    const std::uint32_t ls[2] = {la, lb};
    log.check(CtaAffineLog::Kind::WideProduct, pc_[t], 2, xs, ls, p, lp);
  }
  if (log.broken() || !log.add(*out, lp, out)) aff_ = nullptr;
}

template <class D>
void Machine<D>::affine_access(std::uint32_t t, const Addr& a, const Memory<V>& m, std::int64_t byte,
                               std::size_t width) {
  // Only a tensor argument's elements are inputs that a move renames (or
  // outputs whose CTAs the grid check places); module data (a .global
  // table, initialized or not) holds the same values in every CTA, so an
  // access to it must not move, and a write to it is not placed (breaks).
  const bool global = m.space == Space::Global && !m.per_thread;
  const auto tensor = [&](const std::vector<std::uint32_t>& bufs) {
    return std::find(bufs.begin(), bufs.end(), a.buf) != bufs.end();
  };
  if (global && (a.aff != 0 || p_.code[pc_[t]].op != Opcode::Ld) && !tensor(param_buf_) &&
      !tensor(field_tensor_buf_)) {  // a tensor a struct's pointer names is an argument's tensor too
    affine_break(t, a.aff != 0 ? "an address in the module data " + m.name + " depends on the CTA index"
                               : "a write to the module data " + m.name);
    return;
  }
  aff_->access(pc_[t], a.buf, m.name, global, m.bytes, m.unit, a.aff, byte, width);
  if (aff_->broken()) aff_ = nullptr;
}

template <class D>
void Machine<D>::affine_operands(std::uint32_t t, const Instr& in) {
  // (ld and st are not here: their addresses are checked where they are
  // accessed, in cell, and stored values in store.)
  // A TMA copy's coordinates may move: tma() records what that needs (affine_tma).
  const bool tma = in.op == Opcode::TmaLoad || in.op == Opcode::TmaStore;
  const std::size_t coords = tma ? (in.op == Opcode::TmaLoad ? 3 : 2) : in.src.size();
  for (std::size_t i = 0; i < in.src.size(); ++i) {
    const Operand& o = in.src[i];
    if (o.kind != Operand::Kind::Reg || (i >= coords && i < coords + in.mode)) continue;
    const Val<V>& v = reg(t, o.index);
    if (in.op == Opcode::Atom && i == 0 && v.kind == VKind::Ptr && mem_[v.buf].space == Space::Global) {
      affine_break(t, "an atomic on global memory (CTA classes do not merge atomics across CTAs)");
      return;
    }
    // A pointer that moves is an address: its accesses are checked in cell.
    if (v.aff != 0 && v.kind != VKind::Ptr) {
      affine_break(t, std::string("an operand of ") + opcode_name(in.op) + " depends on the CTA index");
      return;
    }
  }
}

template <class D>
std::uint32_t Machine<D>::affine_tma(std::uint32_t t, const Instr& in, std::size_t first, const TensorMap& mp,
                                     const std::vector<std::uint64_t>& stride, const Addr& map, const Addr& smem) {
  // The map must be the same one in every CTA of the class (a map chosen
  // from an array by the CTA index is another tensor's, or another box), and
  // the shared side of the copy, with its swizzle, must not move at all.
  if (map.aff != 0) {
    affine_break(t, "the tensor map of a TMA copy depends on the CTA index");
    return 0;
  }
  if (smem.aff != 0) {
    affine_break(t, "the shared-memory address of a TMA copy depends on the CTA index");
    return 0;
  }
  CtaAffineLog& log = *aff_;
  const std::uint32_t pc = pc_[t];
  std::uint32_t move = 0;
  for (std::size_t d = 0; d < in.mode; ++d) {
    const Val<V> v = operand(t, in.src[first + d]);
    if (v.aff == 0) continue;
    // In another CTA the box must be clipped by the tensor's bounds as here
    // (the same elements read as the OOB fill, the same ones skipped by a
    // store): wholly inside there too, or at this very coordinate.
    const std::int64_t hi = std::int64_t(mp.dims[d]) - std::int64_t(mp.box[d]);
    const std::int64_t x[2] = {v.i, hi};
    const std::uint32_t l[2] = {v.aff, 0};
    log.check(CtaAffineLog::Kind::TmaCoord, pc, 2, x, l, CtaAffineLog::tma_side(v.i, hi), 0);
    // Each element of the box moves by stride[d] bytes per step of the
    // coordinate: the copy's global accesses move by the sum over dims.
    std::uint32_t part = 0;
    if (log.broken() || !log.scale(v.aff, std::int64_t(stride[d]), &part) || !log.add(move, part, &move)) {
      aff_ = nullptr;
      return 0;
    }
  }
  return move;
}

template class Machine<SymbolicDomain>;
template class Machine<ConcreteDomain>;
template class Machine<PayloadDomain>;

}  // namespace tileverify::machine
