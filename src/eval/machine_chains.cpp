// Machine<SymbolicDomain>: the symbolic shortcuts of float arithmetic: fma
// chains summed into one running sum, and the memo of results that threads
// repeat.
#include "machine.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace tileverify::machine {

// ------------------------------------------------------------ fma chains

// A dot product compiles to a chain of fmas, each adding one product to
// the sum the previous one made:
//   fma.rn.f32 %f43, %f11, %f12, %f104;
//   fma.rn.f32 %f44, %f13, %f14, %f43;  ...
//   fma.rn.f32 %f104, %f41, %f42, %f57;
// Symbolically each fma interns its partial sum, and nothing but the next
// fma reads it: in an attention kernel those were 40% of all nodes. Where
// the code shows that (the register one fma writes is written nowhere
// else and read only as the addend of the next fma, and no branch leads
// into the code between them), the chain's products go into one
// ExprContext::RunningSum per thread, and the last fma writes what the
// sequential fmas would have: the same handle (see RunningSum). The
// registers in between are never written; nothing reads them.
//
// A member whose sources are not plain float values (an undefined
// register, float bits in an integer one), or that runs after an atomic
// returned a value (schedule marks), puts the sum so far into its addend
// register and runs the ordinary way, diagnostics included, and so do the
// rest of the chain's members in that pass.

template <class D>
bool Machine<D>::chain_candidate(const Instr& in) {
  return (in.op == Opcode::Fma || in.op == Opcode::Mad) && (in.type == DType::F32 || in.type == DType::F64) &&
         in.guard < 0 && !in.saturate && in.dst.size() == 1 && in.src.size() == 3 &&
         in.src[2].kind == Operand::Kind::Reg;
}

template <class D>
void Machine<D>::find_chains() {
  const std::vector<Instr>& code = p_.code;
  // Most small kernels have no two fmas: no tables to make (a one-thread
  // reduction's whole symbolic run is 20 us).
  if (std::count_if(code.begin(), code.end(), chain_candidate) < 2) return;
  std::vector<std::uint32_t> reads(r_, 0), writes(r_, 0), writer(r_, kNone);
  std::vector<char> entered(code.size() + 1, 0);  // a branch target
  for (std::uint32_t pc = 0; pc < code.size(); ++pc) {
    const Instr& in = code[pc];
    for (const Operand& o : in.src)
      if (o.kind == Operand::Kind::Reg && o.index < r_) ++reads[o.index];
    if (in.guard >= 0 && std::uint32_t(in.guard) < r_) ++reads[std::uint32_t(in.guard)];
    for (std::uint32_t d : in.dst)
      if (d < r_) ++writes[d], writer[d] = pc;
    if (in.op == Opcode::Bra && in.target < entered.size()) entered[in.target] = 1;
  }
  // last_entry[k]: the last branch target <= k (0 if none). Members i < j
  // link only where none lies in (i, j]: a thread that reached j from
  // elsewhere would find no running sum. Leaving between them is harmless
  // (a branch, a ret): what i wrote is read by j alone, and the thread's
  // next pass through the chain starts at its first member.
  std::vector<std::uint32_t> last_entry(code.size(), 0);
  for (std::uint32_t k = 1; k < code.size(); ++k) last_entry[k] = entered[k] ? k : last_entry[k - 1];
  // prev[j]: the member before j (kNone: none).
  std::vector<std::uint32_t> prev(code.size(), kNone), next(code.size(), kNone);
  for (std::uint32_t j = 0; j < code.size(); ++j) {
    const Instr& in = code[j];
    if (!chain_candidate(in)) continue;
    const std::uint32_t r = in.src[2].index;
    if (r >= r_ || reads[r] != 1 || writes[r] != 1 || writer[r] >= j) continue;
    const std::uint32_t i = writer[r];
    if (!chain_candidate(code[i]) || last_entry[j] > i) continue;
    prev[j] = i;
    next[i] = j;
  }
  // Slots: a chain takes the first slot whose last chain ended before it
  // began (a thread is in at most one chain of a slot at a time).
  std::vector<std::uint32_t> slot_end;  // per slot: the last pc of its latest chain
  for (std::uint32_t pc = 0; pc < code.size(); ++pc) {
    if (prev[pc] != kNone || next[pc] == kNone) continue;  // not a chain's first member
    std::uint32_t last = pc;
    while (next[last] != kNone) last = next[last];
    std::uint32_t slot = 0;
    while (slot < slot_end.size() && slot_end[slot] >= pc) ++slot;
    if (slot == slot_end.size()) slot_end.push_back(0);
    slot_end[slot] = last;
    if (chain_of_.empty()) chain_of_.assign(code.size(), ChainLink{});
    for (std::uint32_t k = pc; k != kNone; k = next[k]) chain_of_[k] = ChainLink{slot, k == pc, k == last};
  }
  chain_slots_ = std::uint32_t(slot_end.size());
}

// Runs chain member `in` into the thread's running sum; false: run it the
// ordinary way (the sum so far is in its addend register then).
template <class D>
bool Machine<D>::chain_step(std::uint32_t t, const Instr& in, const ChainLink& link) {
  if (chain_state_.empty()) chain_state_.resize(std::size_t(n_) * chain_slots_);
  ChainState& st = chain_state_[std::size_t(t) * chain_slots_ + link.chain];
  ExprContext& c = d_.context();
  std::uint32_t ka = kNoKey, kb = kNoKey, kc = kNoKey;
  if (link.first) {
    st.active = false;
    if (!sched_marks_ && (kc = plain_float(t, in.src[2])) != kNoKey) {
      st.sum = c.running_sum(Expr{kc});
      st.active = true;
    }
  }
  if (!st.active) return false;
  if (sched_marks_ || (ka = plain_float(t, in.src[0])) == kNoKey || (kb = plain_float(t, in.src[1])) == kNoKey) {
    st.active = false;
    if (!link.first) set_float(t, in.src[2].index, V{c.sum_of(st.sum)});
    return false;
  }
  const Expr a{ka}, b{kb};
  c.add_products(st.sum, &a, 1, &b, 1, 1);  // add_to(mul(a, b)), built as an mma's products are
  if (link.last) {
    set_float(t, in.dst[0], V{c.sum_of(st.sum)});
    st.active = false;
  }
  return true;
}

// ------------------------------------------------------------ symbolic memo

// The threads of a CTA often compute the very same values: in an online
// softmax every thread recomputes the running max and the rescaled
// denominator over the whole row, so all but one thread repeat each
// operation on the same expressions. An ExprContext operation is a pure
// function of its operand handles (the context only ever adds nodes, and a
// repeated operation finds the nodes the first one made), so the same
// float operation on the same source handles always yields the same
// handle. The memo remembers those results, keyed by the operation and the
// source handles: a hit replaces the domain calls (an fma is a mul and an
// add, a cvt.sat a max, a min and two constants) and their
// canonicalization by a comparison. Only instructions whose sources are
// all plain float values take this path; anything else (undefined
// registers, float bits in integer registers, pairs) goes the ordinary
// way, diagnostics included.
//
// Threads that repeat each other run the same instructions in the same
// order, so the memo is a log of results in the order they were made, and
// each thread has a cursor where it expects its next one: a thread
// following another reads the log front to back (in cache, prefetched),
// where a hash table would miss cache on every probe. A hash index into
// the log finds an entry when the cursor guessed wrong (a thread that took
// another branch, or made an entry of its own).
//
// The log holds at most memo_cap_ entries and starts over when full. The
// cap starts small (a tiny kernel pays for a few KB, on first use) and
// doubles, up to kMemoMaxCap, while the operations the memo misses keep
// finding their result among the nodes this run has made: that is
// recomputation a larger log would have caught. Kernels whose threads
// compute different values make new nodes instead and keep it small
// (results made by an earlier run into the same context, as the second
// kernel of a pair finds the first one's, do not count: this run's memo
// holds none of those).

// The handle of a source that is a plain float value (a float register or
// immediate), else kNoKey (no valid handle is kNoKey).
template <class D>
std::uint32_t Machine<D>::plain_float(std::uint32_t t, const Operand& o) {
  if (o.kind == Operand::Kind::Reg) {
    const Val<V>& r = reg(t, o.index);
    return r.kind == VKind::Float ? r.f.id : kNoKey;
  }
  return o.kind == Operand::Kind::Float ? constant_operand(o.index).id : kNoKey;
}

template <class D>
std::size_t Machine<D>::memo_slot(std::uint32_t tag, std::uint32_t k0, std::uint32_t k1, std::uint32_t k2,
                                  std::uint32_t k3) const {
  std::uint64_t h = (std::uint64_t(k0) << 32 | k1) * 0x9E3779B97F4A7C15ull;
  h ^= (std::uint64_t(k2) << 32 | k3) * 0xC2B2AE3D27D4EB4Full;
  h ^= std::uint64_t(tag) * 0x165667B19E3779F9ull;
  h ^= h >> 29;
  return std::size_t((h * 0x9E3779B97F4A7C15ull) >> memo_shift_);
}

// A cap of `cap` entries, with an index of 2 * cap slots over the log.
template <class D>
void Machine<D>::memo_reserve(std::size_t cap) {
  memo_cap_ = cap;
  memo_log_.reserve(cap);
  unsigned bits = 1;
  while ((std::size_t(1) << bits) < 2 * cap) ++bits;
  memo_shift_ = 64 - bits;
  memo_index_.assign(std::size_t(1) << bits, kNoKey);
  for (std::size_t i = 0; i < memo_log_.size(); ++i) {
    const MemoEntry& e = memo_log_[i];
    memo_index_[memo_slot(e.tag, e.k0, e.k1, e.k2, e.k3)] = std::uint32_t(i);
  }
  memo_repeats_ = 0;
}

// Runs a float instruction through the memo when it can; false: the caller
// runs it the ordinary way. Instantiated for the symbolic domain only.
template <class D>
bool Machine<D>::memo_compute(std::uint32_t t, const Instr& in) {
  std::uint32_t k0 = kNoKey, k1 = kNoKey, k2 = kNoKey, k3 = kNoKey, cmp = 0;
  switch (in.op) {
    case Opcode::Cvt:
      if (in.src.size() != 1 || !dtype_is_float(in.type) || !dtype_is_float(in.src_type) ||
          (k0 = plain_float(t, in.src[0])) == kNoKey)
        return false;
      if (!in.saturate && in.mode != 1) {  // the identity: nothing to remember
        set_float(t, in.dst[0], V{k0});
        return true;
      }
      break;
    case Opcode::Selp: {
      if (!dtype_is_float(in.type) || in.src.size() < 3 || in.src[2].kind != Operand::Kind::Reg) return false;
      const Val<V>& p = reg(t, in.src[2].index);
      if (p.kind != VKind::Cond || (k2 = plain_float(t, in.src[0])) == kNoKey ||
          (k3 = plain_float(t, in.src[1])) == kNoKey)
        return false;
      k0 = p.f.id;
      k1 = p.g.id;
      cmp = std::uint32_t(p.cmp);
      break;
    }
    default: {
      const std::size_t n = float_arity(in.op);
      if (n == 0 || in.src.size() < n || !dtype_is_float(in.type)) return false;
      if ((k0 = plain_float(t, in.src[0])) == kNoKey) return false;
      if (n > 1 && (k1 = plain_float(t, in.src[1])) == kNoKey) return false;
      if (n > 2 && (k2 = plain_float(t, in.src[2])) == kNoKey) return false;
    }
  }
  // The operation, not the pc: nvcc's expf computes the same sum twice
  // (once for the float, once for its bits), and the lanes of a butterfly
  // reduction take max(a, b) and max(b, a). The result is a function of the
  // opcode and flags (float_apply ignores the float type) and of the
  // sources, in either order for the commutative ones (ExprContext orders
  // their operands itself; fma's product too).
  const Opcode op = in.op == Opcode::Mad ? Opcode::Fma : in.op;  // float mad is fma (float_apply)
  const std::uint32_t tag =
      ((std::uint32_t(op) << 1 | in.saturate) << 1 | (op == Opcode::Cvt && in.mode == 1)) << 3 | cmp;
  switch (op) {
    case Opcode::Add:
    case Opcode::Mul:
    case Opcode::Min:
    case Opcode::Max:
    case Opcode::Fma:
      if (k1 < k0) std::swap(k0, k1);
      break;
    default: break;
  }
  auto match = [&](const MemoEntry& e) {
    return e.tag == tag && e.k0 == k0 && e.k1 == k1 && e.k2 == k2 && e.k3 == k3;
  };
  if (memo_cap_ == 0) {
    memo_reserve(kMemoMinCap);
    memo_cursor_.assign(n_, 0);
    memo_base_ = d_.context().size();
  }
  std::uint32_t& cursor = memo_cursor_[t];
  if (cursor < memo_log_.size() && match(memo_log_[cursor])) {
    set_float(t, in.dst[0], V{memo_log_[cursor++].r});
    return true;
  }
  std::uint32_t& slot = memo_index_[memo_slot(tag, k0, k1, k2, k3)];
  if (slot < memo_log_.size() && match(memo_log_[slot])) {
    const std::uint32_t r = memo_log_[slot].r;
    if (cursor == memo_log_.size() && memo_log_.size() < memo_cap_) {
      // This thread leads (it is making the log): the entry goes into the
      // log again, so that the threads that follow find it in order.
      slot = std::uint32_t(memo_log_.size());
      memo_log_.push_back(MemoEntry{tag, k0, k1, k2, k3, r});
    }
    cursor = slot + 1;
    set_float(t, in.dst[0], V{r});
    return true;
  }
  const std::size_t nodes = d_.context().size();
  V r;
  if (in.op == Opcode::Cvt)
    r = cvt_float(in, V{k0});
  else if (in.op == Opcode::Selp)
    r = d_.select(Cmp(cmp), V{k0}, V{k1}, V{k2}, V{k3});
  else
    float_apply(in.op, [&](std::size_t i) { return V{i == 0 ? k0 : i == 1 ? k1 : k2}; }, &r);
  set_float(t, in.dst[0], r);
  // A repeat: no new node, and the result is not simply one of the sources
  // (x + 0, max(x, x): those results are old, but the operation is new).
  const bool repeat = d_.context().size() == nodes && r.id >= memo_base_ && r.id != k0 && r.id != k1 &&
                      r.id != k2 && r.id != k3;
  if (repeat && ++memo_repeats_ * 4 >= memo_cap_ && memo_cap_ < kMemoMaxCap) {
    memo_reserve(memo_cap_ * 2);
  } else if (memo_log_.size() == memo_cap_) {
    memo_log_.clear();  // start over: the cursors and the index check what they find
  }
  memo_index_[memo_slot(tag, k0, k1, k2, k3)] = std::uint32_t(memo_log_.size());  // slot may have moved
  memo_log_.push_back(MemoEntry{tag, k0, k1, k2, k3, r.id});
  cursor = std::uint32_t(memo_log_.size());
  return true;
}

// Only the symbolic domain has chains and a memo (kMemo): the other domains
// never call these members, and they use ExprContext handles.
template class Machine<SymbolicDomain>;

}  // namespace tileverify::machine
