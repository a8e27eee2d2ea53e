// Machine<D>: warp collectives: shfl, vote, redux, mma.sync and ldmatrix,
// and the wmma load / mma / store.
#include "machine.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace tileverify::machine {

// ------------------------------------------------------------ collectives

// A collective's results depend on every member's operands (and on the
// memory it reads): one schedule-dependent input marks them all. A shuffle
// moves values whole, marks included, so it needs nothing more.
// The members of a shfl, vote or redux may wait at different instructions
// of the same operation (Machine::pairs_with): each reads its operands from,
// and writes the result to, the registers of its own instruction.
template <class D>
void Machine<D>::collective(const Instr& in, const std::vector<std::uint32_t>& group) {
  collective_sched_ = 0;
  if (in.op != Opcode::Shfl)
    for (std::uint32_t t : group)
      for (const Operand& o : p_.code[pc_[t]].src)
        if (o.kind == Operand::Kind::Reg) {
          const Val<V>& r = reg(t, o.index);
          if (r.kind == VKind::Undef) mark_undefined(t, o.index);  // an mma fragment never loaded, say
          if (sched_marks_) collective_sched_ = std::max(collective_sched_, r.sched);
        }
  exchange(in, group);
  if (collective_sched_ && in.op != Opcode::Shfl)
    for (std::uint32_t t : group)
      for (std::uint32_t d : p_.code[pc_[t]].dst)
        if (d != kNoReg) reg(t, d).sched = std::max(reg(t, d).sched, collective_sched_);
}

template <class D>
void Machine<D>::exchange(const Instr& in, const std::vector<std::uint32_t>& group) {
  if (in.op == Opcode::Mma) return mma(in, group);
  if (in.op == Opcode::WmmaLoad) return wmma_load(in, group);
  if (in.op == Opcode::WmmaMma) return wmma_mma(in, group);
  if (in.op == Opcode::WmmaStore) return wmma_store(in, group);
  if (in.op == Opcode::LdMatrix) return ldmatrix(in, group);
  if (in.op == Opcode::ElectSync) return elect(in, group);
  if (in.op == Opcode::StMatrix) return stmatrix(in, group);
  if (warpgroup_op(in.op)) return wgmma(in, group);
  if (in.op == Opcode::Shfl) {
    std::vector<Val<V>> result(group.size());
    for (std::size_t gi = 0; gi < group.size(); ++gi) {
      std::uint32_t t = group[gi], lane = t % 32;
      const Instr& mine = p_.code[pc_[t]];
      std::uint32_t b = std::uint32_t(control_int(t, operand(t, mine.src[1]), "a shuffle lane"));
      std::uint32_t c = std::uint32_t(control_int(t, operand(t, mine.src[2]), "a shuffle clamp value"));
      warp::ShflResult sr = warp::shfl_source(warp::ShflMode(in.mode), int(lane), b, c);
      std::int64_t j = sr.src_lane;
      std::uint32_t src_t = (t / 32) * 32 + std::uint32_t(j);
      std::uint32_t mask = wait_mask_[t];
      if (!warp::shfl_source_in_mask(warp::ShflMode(in.mode), int(lane), b, c, mask) || src_t >= n_ ||
          state_[src_t] == TState::Done) {
        // CUDA leaves the value undefined (Programming Guide, warp shuffle
        // functions). Kernels do this in lanes whose result they drop (the
        // last steps of a tree reduction), so it is marked, like what an
        // atom returns, and reported only where it would show.
        const std::uint32_t pc = pc_[t];
        if (!undefined_why_.count(pc)) {
          char m[16];
          std::snprintf(m, sizeof m, "0x%08x", mask);
          bool out = !(mask >> j & 1) || src_t >= n_;
          undefined_why_[pc] = "in a shuffle, lane " + std::to_string(lane) + " read lane " + std::to_string(j) + ", which " +
                               (out ? std::string("is not in the member mask ") + m : std::string("had exited"));
        }
        result[gi] = operand(t, mine.src[0]);
        result[gi].sched = pc + 1;
        sched_marks_ = true;
        continue;
      }
      result[gi] = operand(src_t, p_.code[pc_[src_t]].src[0]);  // a member: it waits at its shfl
    }
    for (std::size_t gi = 0; gi < group.size(); ++gi) set(group[gi], p_.code[pc_[group[gi]]].dst[0], result[gi]);
    return;
  }
  if (in.op == Opcode::Redux) return redux(in, group);
  if (in.op == Opcode::Vote) {
    std::uint32_t ballot = 0;
    bool all = true, any = false;
    for (std::uint32_t t : group) {
      Val<V> p = operand(t, p_.code[pc_[t]].src[0]);
      if (p.kind == VKind::Cond) fail(DiagKind::NotStructured, t, "a vote on a predicate that depends on tensor data");
      bool on = as_int(t, p, "a vote predicate") != 0;
      ballot |= std::uint32_t(on) << (t % 32);
      all = all && on;
      any = any || on;
    }
    for (std::uint32_t t : group) {
      const std::uint32_t d = p_.code[pc_[t]].dst[0];
      switch (VoteMode(in.mode)) {
        case VoteMode::All: set(t, d, int_val(all)); break;
        case VoteMode::Any: set(t, d, int_val(any)); break;
        case VoteMode::Ballot: set(t, d, int_val(ballot)); break;
      }
    }
  }
}

// redux.sync: one value for the whole group, in lane order. Integer data
// combine over the integers (add, min, max); bit operations need known bits.
template <class D>
void Machine<D>::redux(const Instr& in, const std::vector<std::uint32_t>& group) {
  const DType ty = in.type;
  const AtomOp op = AtomOp(in.mode);
  bool data = false;
  for (std::uint32_t t : group) data = data || operand(t, p_.code[pc_[t]].src[0]).kind == VKind::Data;
  Val<V> acc;
  for (std::size_t gi = 0; gi < group.size(); ++gi) {
    const std::uint32_t t = group[gi];
    Val<V> a = operand(t, p_.code[pc_[t]].src[0]);
    if (data) {
      V x = as_data(t, a, ty, "a redux operand");
      if (gi == 0) {
        acc = data_val(x);
        continue;
      }
      switch (op) {
        case AtomOp::Add: acc.f = d_.add(acc.f, x); break;
        case AtomOp::Min: acc.f = d_.min(acc.f, x); break;
        case AtomOp::Max: acc.f = d_.max(acc.f, x); break;
        default:
          fail(DiagKind::NotStructured, t, std::string("redux.sync.") + atom_op_name(op) + " on integer tensor data (a bit operation)");
      }
      continue;
    }
    std::int64_t x = wrap(as_int(t, a, "a redux operand"), ty);
    if (gi == 0) {
      acc = int_val(x);
      continue;
    }
    std::int64_t y = acc.i;
    bool lt = dtype_is_signed(ty) ? x < y : (std::uint64_t(x) & mask(ty)) < (std::uint64_t(y) & mask(ty));
    switch (op) {
      case AtomOp::Add: acc.i = wrap(std::int64_t(std::uint64_t(x) + std::uint64_t(y)), ty); break;
      case AtomOp::Min: acc.i = lt ? x : y; break;
      case AtomOp::Max: acc.i = lt ? y : x; break;
      case AtomOp::And: acc.i = wrap(x & y, ty); break;
      case AtomOp::Or: acc.i = wrap(x | y, ty); break;
      case AtomOp::Xor: acc.i = wrap(x ^ y, ty); break;
      default: break;  // the lowering gives redux only the operations above
    }
  }
  for (std::uint32_t t : group) set(t, p_.code[pc_[t]].dst[0], acc);
}

template <class D>
warp::MmaType Machine<D>::mma_type(DType t) {
  return t == DType::BF16 ? warp::MmaType::BF16 : (t == DType::F16 ? warp::MmaType::F16 : warp::MmaType::TF32);
}

// Element i of a fragment held in registers regs[first...]: two per register
// for 16-bit inputs (low half first), one for tf32 and the accumulators.
template <class D>
auto Machine<D>::fragment(std::uint32_t t, const decltype(Instr::src)& src, std::size_t first, int i, int per_reg,
                          DType ty) -> V {
  Val<V> v = operand(t, src[first + std::size_t(i / per_reg)]);
  if (per_reg == 1) return as_float(t, v, ty);
  if (v.kind == VKind::Int) {  // 16-bit halves as bits (zero-filled memory an ldmatrix read): the mma's type reads them
    if (std::optional<V> h = from_bits(std::uint64_t(v.i) >> (16 * (i % per_reg)) & 0xffff, ty)) return *h;
    fail(DiagKind::Unsupported, t, "an mma.sync operand half whose bits are a NaN");
  }
  if (v.kind != VKind::Pair)
    fail(DiagKind::Unsupported, t, "an mma.sync operand register does not hold a pair of 16-bit values");
  return i % per_reg == 0 ? v.f : v.g;
}

// acc + a[0] b[0] + a[as] b[bs] + ... (k products): what k fmas in that
// order make. Symbolically, one running sum built in bulk: the k - 1
// partial sums the fmas would intern, nothing uses (an mma's accumulator
// chain), and the products skip the memo (ExprContext::add_products).
template <class D>
auto Machine<D>::dot(V acc, const V* a, std::size_t as, const V* b, std::size_t bs, int k) -> V {
  if constexpr (kMemo) {
    ExprContext& c = d_.context();
    ExprContext::RunningSum s = c.running_sum(acc);
    c.add_products(s, a, as, b, bs, std::size_t(k));
    return c.sum_of(s);
  } else {
    for (int q = 0; q < k; ++q) acc = d_.fma(a[std::size_t(q) * as], b[std::size_t(q) * bs], acc);
    return acc;
  }
}

// mma.sync: D = A * B + C over the warp, with the PTX ISA fragment layouts.
template <class D>
void Machine<D>::mma(const Instr& in, const std::vector<std::uint32_t>& group) {
  warp::MmaShape shape = warp::MmaShape(in.mode);
  warp::MmaType ty = mma_type(in.src_type);
  std::uint32_t t0 = group[0];
  if (group.size() != 32 || !warp::mma_supported(shape, ty))
    fail(DiagKind::Unsupported, t0, "mma.sync needs a full warp of 32 threads and a supported shape and type");
  const int m = warp::mma_m(shape), n = warp::mma_n(shape), k = warp::mma_k(shape);
  const int per = warp::mma_ab_elems_per_reg(ty);
  const int na = warp::mma_a_count(shape, ty), nb = warp::mma_b_count(shape, ty), nc = warp::mma_c_count(shape, ty);
  const std::size_t a0 = 0, b0 = std::size_t(na / per), c0 = b0 + std::size_t(nb / per);
  // An .f16 C or D packs its nc elements two to an .f16x2 register (element
  // 2r low, 2r + 1 high); lower_mma.cpp has checked the counts against
  // .ctype, so half as many C registers means an .f16 C.
  const int per_d = in.type == DType::F16 ? 2 : 1;
  const int per_c = in.src.size() == c0 + std::size_t(nc / 2) ? 2 : 1;
  if (in.src.size() != c0 + std::size_t(nc / per_c) || in.dst.size() != std::size_t(nc / per_d))
    fail(DiagKind::Unsupported, t0, "mma.sync with the wrong number of fragment registers");
  std::vector<V> A(std::size_t(m * k)), B(std::size_t(k * n)), C(std::size_t(m * n));
  for (std::uint32_t t : group) {
    int lane = int(t % 32);
    for (int i = 0; i < na; ++i) {
      warp::RowCol rc = warp::mma_a(shape, ty, lane, i);
      A[std::size_t(rc.row * k + rc.col)] = fragment(t, in.src, a0, i, per, in.src_type);
    }
    for (int i = 0; i < nb; ++i) {
      warp::RowCol rc = warp::mma_b(shape, ty, lane, i);
      B[std::size_t(rc.row * n + rc.col)] = fragment(t, in.src, b0, i, per, in.src_type);
    }
    for (int i = 0; i < nc; ++i) {
      warp::RowCol rc = warp::mma_c(shape, ty, lane, i);
      C[std::size_t(rc.row * n + rc.col)] = fragment(t, in.src, c0, i, per_c, per_c == 2 ? DType::F16 : DType::F32);
    }
  }
  std::vector<V> acc(C);
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c)
      acc[std::size_t(r * n + c)] =
          dot(acc[std::size_t(r * n + c)], &A[std::size_t(r * k)], 1, &B[std::size_t(c)], std::size_t(n), k);
  auto d_elem = [&](std::uint32_t t, int i) {
    warp::RowCol rc = warp::mma_c(shape, ty, int(t % 32), i);
    return acc[std::size_t(rc.row * n + rc.col)];
  };
  for (std::uint32_t t : group)
    for (std::size_t r = 0; r < in.dst.size(); ++r) {
      if (per_d == 1) {
        set(t, in.dst[r], float_val(d_elem(t, int(r))));
        continue;
      }
      Val<V> pair;  // floats are reals: the .f16 result is the sum itself
      pair.kind = VKind::Pair;
      pair.f = d_elem(t, int(2 * r));
      pair.g = d_elem(t, int(2 * r + 1));
      set(t, in.dst[r], pair);
    }
}

// ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16: lanes 8q..8q+7
// give the row addresses of matrix q; every lane receives, in register q,
// its two elements of matrix q. Without .trans they are the two halves of
// one 4-byte word of a row (columns 2k and 2k + 1), so the register is that
// word as memory holds it: a packed pair of halves, or the 32-bit float a
// tf32 tile holds (ldmatrix moves bits; mma.tf32 reads them as one float).
// With .trans they come from two rows, so each is read as a 2-byte element.
template <class D>
void Machine<D>::ldmatrix(const Instr& in, const std::vector<std::uint32_t>& group) {
  const int num = in.mode;
  std::uint32_t t0 = group[0];
  if (group.size() != 32 || (num != 1 && num != 2 && num != 4) || in.dst.size() != std::size_t(num))
    fail(DiagKind::Unsupported, t0, "ldmatrix needs a full warp and .x1, .x2 or .x4 with that many registers");
  std::uint32_t warp_base = t0 - t0 % 32;
  if (!in.trans) {
    std::vector<Val<V>> words(std::size_t(num * 8 * 4));
    for (int q = 0; q < num; ++q)
      for (int r = 0; r < 8; ++r) {
        std::uint32_t t = warp_base + std::uint32_t(warp::ldmatrix_address_lane(q, r));
        const Addr a = address(t, in.src[0]);
        Memory<V>& mem = mem_[a.buf];
        for (std::size_t w = 0; w < 4; ++w) {  // the row's four words
          const std::size_t c = cell(t, a, w, 4, false);
          Val<V>& v = words[std::size_t((q * 8 + r) * 4) + w];
          v = read(t, mem, c, 4, pc_[t]);
          collective_sched_ = std::max(collective_sched_, v.sched);
          if (v.kind == VKind::Undef) {
            note_uninitialized(t, mem, c);
            v.kind = VKind::Pair;
            v.f = v.g = poison(mem, c);
          }
        }
      }
    for (std::uint32_t t : group)
      for (int q = 0; q < num; ++q) {
        warp::RowCol lo = warp::ldmatrix_element(int(t % 32), 0, false);  // the word's low half
        set(t, in.dst[std::size_t(q)], words[std::size_t((q * 8 + lo.row) * 4 + lo.col / 2)]);
      }
    return;
  }
  std::vector<V> rows(std::size_t(num * 8 * 8));
  for (int q = 0; q < num; ++q)
    for (int r = 0; r < 8; ++r) {
      std::uint32_t t = warp_base + std::uint32_t(warp::ldmatrix_address_lane(q, r));
      read_halves(t, address(t, in.src[0]), 8, &rows[std::size_t((q * 8 + r) * 8)]);  // the row's 8 elements
    }
  for (std::uint32_t t : group)
    for (int q = 0; q < num; ++q) {
      Val<V> pair;
      pair.kind = VKind::Pair;
      warp::RowCol lo = warp::ldmatrix_element(int(t % 32), 0, true);
      warp::RowCol hi = warp::ldmatrix_element(int(t % 32), 1, true);
      pair.f = rows[std::size_t((q * 8 + lo.row) * 8 + lo.col)];
      pair.g = rows[std::size_t((q * 8 + hi.row) * 8 + hi.col)];
      set(t, in.dst[std::size_t(q)], pair);
    }
}

// ------------------------------------------------------------ wmma

// The wmma fragment layouts are opaque in the PTX ISA: code may only pass a
// fragment between wmma instructions (or change every element alike). So
// the evaluator picks its own layout, the same for load, mma and store:
// slot s of lane L (element s of its fragment registers, two per register
// for 16-bit types) holds element (L * cap + s) mod (rows * cols) of the
// row-major logical matrix, cap being the slots per lane. Where the warp
// has more slots than the matrix has elements (f16 A and B: 512 slots for
// 256 elements) every element is held twice, and the first copy is the one
// that is stored.
template <class D>
void Machine<D>::wmma_dims(WmmaShape s, int* m, int* n, int* k) {
  switch (s) {
    case WmmaShape::M16N16K16: *m = 16, *n = 16, *k = 16; return;
    case WmmaShape::M32N8K16: *m = 32, *n = 8, *k = 16; return;
    case WmmaShape::M8N32K16: *m = 8, *n = 32, *k = 16; return;
    case WmmaShape::M16N16K8: *m = 16, *n = 16, *k = 8; return;
  }
}

// The (rows, cols) of the matrix a wmma.load / store moves.
template <class D>
std::pair<int, int> Machine<D>::wmma_matrix(const Instr& in) {
  int m = 0, n = 0, k = 0;
  wmma_dims(WmmaShape(in.shape), &m, &n, &k);
  switch (WmmaMatrix(in.mode)) {
    case WmmaMatrix::A: return {m, k};
    case WmmaMatrix::B: return {k, n};
    case WmmaMatrix::C: break;
  }
  return {m, n};
}

// The address and leading dimension (in elements) a warp gives; .aligned
// requires every lane to give the same.
template <class D>
auto Machine<D>::wmma_address(const Instr& in, const std::vector<std::uint32_t>& group, int rows,
                              int cols) -> std::pair<Addr, std::int64_t> {
  std::uint32_t t0 = group[0];
  if (group.size() != 32) fail(DiagKind::Unsupported, t0, "wmma needs a full warp of 32 threads");
  std::pair<Addr, std::int64_t> first{Addr{0, 0}, 0};
  for (std::size_t gi = 0; gi < group.size(); ++gi) {
    std::uint32_t t = group[gi];
    Addr a = address(t, in.src[0]);
    std::int64_t ld = in.src[1].kind == Operand::Kind::Int && in.src[1].imm < 0
                          ? (in.trans ? rows : cols)  // no stride: the matrix is dense
                          : as_int(t, operand(t, in.src[1]), "a wmma stride");
    if (ld <= 0) fail(DiagKind::Unsupported, t, "a wmma stride of " + std::to_string(ld));
    if (gi == 0)
      first = {a, ld};
    else if (a.buf != first.first.buf || a.offset != first.first.offset || ld != first.second)
      fail(DiagKind::Unsupported, t,
           "the lanes of a warp give different addresses or strides to a wmma instruction (.aligned needs the same)");
  }
  return first;
}

// Memory offset, in elements, of element (r, c) of a matrix stored row- or column-major.
template <class D>
std::size_t Machine<D>::wmma_offset(const Instr& in, int r, int c, std::int64_t ld) {
  return std::size_t(in.trans ? std::int64_t(c) * ld + r : std::int64_t(r) * ld + c);
}

template <class D>
auto Machine<D>::read_float(std::uint32_t t, Memory<V>& m, std::size_t c, std::size_t width, DType ty) -> V {
  const Val<V> v = read(t, m, c, width, pc_[t]);
  collective_sched_ = std::max(collective_sched_, v.sched);
  if (v.kind == VKind::Undef) {
    note_uninitialized(t, m, c);
    return poison(m, c);
  }
  return as_float(t, v, ty);
}

template <class D>
int Machine<D>::slots_per_reg(DType t) { return dtype_bytes(t) == 2 ? 2 : 1; }

template <class D>
void Machine<D>::set_fragment(std::uint32_t t, const decltype(Instr::dst)& regs, const std::vector<V>& slots, int per) {
  for (std::size_t r = 0; r < regs.size(); ++r) {
    Val<V> v = float_val(slots[r * std::size_t(per)]);
    if (per == 2) {
      v.kind = VKind::Pair;
      v.g = slots[r * 2 + 1];
    }
    set(t, regs[r], v);
  }
}

template <class D>
void Machine<D>::wmma_load(const Instr& in, const std::vector<std::uint32_t>& group) {
  auto [rows, cols] = wmma_matrix(in);
  auto [a, ld] = wmma_address(in, group, rows, cols);
  const int per = slots_per_reg(in.type), cap = int(in.dst.size()) * per;
  const std::size_t width = dtype_bytes(in.type);
  if (cap == 0 || (32 * cap) % (rows * cols) != 0)
    fail(DiagKind::Unsupported, group[0], "a wmma fragment of " + std::to_string(in.dst.size()) + " registers");
  Memory<V>& mem = mem_[a.buf];
  for (std::uint32_t t : group) {
    int lane = int(t % 32);
    std::vector<V> slots(static_cast<std::size_t>(cap));
    for (int s = 0; s < cap; ++s) {
      int e = (lane * cap + s) % (rows * cols);
      std::size_t c = cell(t, a, wmma_offset(in, e / cols, e % cols, ld), width, false);
      slots[std::size_t(s)] = read_float(t, mem, c, width, in.type);
    }
    set_fragment(t, in.dst, slots, per);
  }
}

// wmma.mma: src is {na, nb, A registers, B registers, C registers}.
template <class D>
void Machine<D>::wmma_mma(const Instr& in, const std::vector<std::uint32_t>& group) {
  std::uint32_t t0 = group[0];
  if (group.size() != 32) fail(DiagKind::Unsupported, t0, "wmma needs a full warp of 32 threads");
  int m = 0, n = 0, k = 0;
  wmma_dims(WmmaShape(in.shape), &m, &n, &k);
  const int per_ab = slots_per_reg(in.src_type);
  const std::size_t na = std::size_t(in.src[0].imm), nb = std::size_t(in.src[1].imm);
  const std::size_t nc = in.src.size() - 2 - na - nb;
  const int cap_a = int(na) * per_ab, cap_b = int(nb) * per_ab;
  const int per_c = m * n / (32 * int(nc)), per_d = m * n / (32 * int(in.dst.size()));
  // Where a fragment's slots come from: (first register, slots per register, element type).
  auto gather = [&](std::size_t first, int cap, int per, DType ty, int elems) {
    std::vector<V> x(static_cast<std::size_t>(elems));
    for (std::uint32_t t : group)
      for (int s = 0; s < cap; ++s)
        x[std::size_t((int(t % 32) * cap + s) % elems)] = fragment(t, in.src, first, s, per, ty);
    return x;
  };
  std::vector<V> A = gather(2, cap_a, per_ab, in.src_type, m * k);
  std::vector<V> B = gather(2 + na, cap_b, per_ab, in.src_type, k * n);
  std::vector<V> acc = gather(2 + na + nb, int(nc) * per_c, per_c, per_c == 2 ? DType::F16 : DType::F32, m * n);
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c)
      acc[std::size_t(r * n + c)] =
          dot(acc[std::size_t(r * n + c)], &A[std::size_t(r * k)], 1, &B[std::size_t(c)], std::size_t(n), k);
  const int cap_d = int(in.dst.size()) * per_d;
  for (std::uint32_t t : group) {
    std::vector<V> slots(static_cast<std::size_t>(cap_d));
    for (int s = 0; s < cap_d; ++s) slots[std::size_t(s)] = acc[std::size_t((int(t % 32) * cap_d + s) % (m * n))];
    set_fragment(t, in.dst, slots, per_d);
  }
}

// wmma.store.d: src is {address, stride, fragment registers}.
template <class D>
void Machine<D>::wmma_store(const Instr& in, const std::vector<std::uint32_t>& group) {
  auto [rows, cols] = wmma_matrix(in);
  auto [a, ld] = wmma_address(in, group, rows, cols);
  const int per = slots_per_reg(in.type), cap = int(in.src.size() - 2) * per;
  const std::size_t width = dtype_bytes(in.type);
  Memory<V>& mem = mem_[a.buf];
  check_writable(group[0], mem);
  for (std::uint32_t t : group) {
    int lane = int(t % 32);
    for (int s = 0; s < cap; ++s) {
      int e = lane * cap + s;
      if (e >= rows * cols) break;  // a second copy of an element: the first one is stored
      std::size_t c = cell(t, a, wmma_offset(in, e / cols, e % cols, ld), width, true);
      Val<V> v = operand(t, in.src[2 + std::size_t(s / per)]);
      if (per == 2) {
        if (v.kind != VKind::Pair) fail(DiagKind::Unsupported, t, "a wmma fragment register that holds no pair of halves");
        v = float_val(s % 2 == 0 ? v.f : v.g);
      }
      write(t, mem, c, width, v, pc_[t]);
    }
  }
}

// elect.sync d|p, membermask (PTX ISA, elect.sync): one leader among the
// threads of the member mask (those that have not exited: the group); every
// member gets its lane in d, and p is true in the leader alone. The ISA
// promises only that the choice is deterministic for a mask; Hopper GPUs
// elect the lowest lane (tools/gpu_checks/elect_check.cu: 4096 masks on an
// H200), which is what this does.
template <class D>
void Machine<D>::elect(const Instr& in, const std::vector<std::uint32_t>& group) {
  std::uint32_t leader = group.front();
  for (std::uint32_t t : group) leader = std::min(leader, t);
  for (std::uint32_t t : group) {
    const Instr& mine = p_.code[pc_[t]];
    if (mine.dst[0] != kNoReg) set(t, mine.dst[0], int_val(leader % 32));
    if (mine.dst[1] != kNoReg) set(t, mine.dst[1], int_val(t == leader ? 1 : 0));
  }
  (void)in;
}

template class Machine<SymbolicDomain>;
template class Machine<ConcreteDomain>;
template class Machine<PayloadDomain>;

}  // namespace tileverify::machine
