// Machine<D>: slots taken from an atom.add, A[atomicAdd(&n, 1)] = x
// (docs/evaluator.md, "Slots taken from atom.add").
//
// The old values the atom.adds of one counter return are distinct, in every
// schedule: the PTX ISA ("Parallel Synchronization and Communication
// Instructions: atom") makes each atom one indivisible read-modify-write,
// so the adds on one location happen in some order and each reads the sum
// of those before it; with one positive step d and no wrap the k-th of them
// reads w + k·d (w: the counter's value before them). Which thread gets
// which k is the schedule's choice, but the set {w + k·d} is not. So a
// thread's accesses at base + scale·old (base the same for every thread and
// schedule, |scale|·d at least the access's width) never meet another
// thread's accesses at its slot, in any schedule: those are no race. What
// the run must check for that argument to hold:
//   - the counter: every atomic on it is an atom.add of the same unmarked
//     step d > 0 whose old value is what the previous one left (no plain
//     write between them), and no value reaches the type's sign bit;
//   - the address: base + scale·old, followed exactly through the
//     operations that are exact modulo 2^64 (64-bit add, sub, mul, shl;
//     mul.wide and cvt of the old value itself, which is below 2^31) with
//     every other operand unmarked, and the same (base, scale) for every
//     access of the buffer;
//   - the buffer: accessed at slots only (any other access could meet a
//     slot in some schedule), not per-thread, and for a counter in global
//     memory, by one CTA (other CTAs' adds would interleave).
// What a slot holds is marked (its contents depend on which thread took it),
// so an output holding one is reported as depending on the schedule
// (schedule_dependent): the kernel is race-free, but its elements come in
// an order tileverify does not compare.
#include "machine.hpp"

#include <algorithm>
#include <limits>

namespace tileverify::machine {

template <class D>
std::uint16_t Machine<D>::slot_atomic(std::uint32_t t, const Instr& in, std::uint32_t buf, std::size_t c,
                                      const Val<V>& old, const Val<V>& step, const Val<V>& now) {
  const AtomOp op = AtomOp(in.mode);
  if (op == AtomOp::Load) return 0;  // a read: it changes no old value
  const std::uint32_t pc = pc_[t];
  const DType ty = in.type;
  const bool wide = dtype_bytes(ty) == 8;
  const std::int64_t top = wide ? std::numeric_limits<std::int64_t>::max() : std::int64_t(0x7fffffff);
  const bool add = op == AtomOp::Add && !dtype_is_float(ty) && !in.dst.empty() && old.kind == VKind::Int &&
                   step.kind == VKind::Int && step.sched == 0 && (dtype_bytes(ty) == 4 || wide);
  auto it = counter_of_.find({buf, c});
  if (it == counter_of_.end()) {
    if (!add || step.i <= 0 || old.i < 0 || old.i > top - step.i) return 0;
    SlotCounter k;
    k.buf = buf;
    k.cell = c;
    k.step = step.i;
    k.next = now.i;
    it = counter_of_.emplace(std::make_pair(buf, c), std::uint32_t(slot_counters_.size())).first;
    slot_counters_.push_back(k);
  } else {
    SlotCounter& k = slot_counters_[it->second];
    auto at = [&] { return " (" + p_.code[pc].loc.with_source() + ": " + p_.instr_text(pc) + ")"; };
    if (k.spoiled.empty()) {  // else the first reason stays
      if (!add)
        k.spoiled = "the counter is also updated by an atomic other than an atom.add with a result" + at();
      else if (step.i != k.step)
        k.spoiled = "atom.adds on the counter add " + std::to_string(k.step) + " and " + std::to_string(step.i) + at();
      else if (old.i != k.next)
        k.spoiled = "the counter was written between two of its atom.adds" + at();
      else if (old.i > top - step.i)
        k.spoiled = "the counter reaches its type's sign bit" + at();
      else
        k.next = now.i;
    }
    // An add's old value keeps its form with a spoiled counter too, so that
    // its use as an address says why (slot_address).
    if (!add) return 0;
  }
  if (slot_forms_.size() >= std::numeric_limits<std::uint16_t>::max()) return 0;
  SlotForm f;
  f.atom_pc = pc;
  f.counter = it->second;
  f.old = old.i;
  f.value = old.i;
  slot_forms_.push_back(f);
  return std::uint16_t(slot_forms_.size());
}

// An instruction with one marked operand, which has a slot form: computed as
// alu() would, and the result's form where the operation keeps one.
template <class D>
void Machine<D>::slot_alu(std::uint32_t t, const Instr& in, std::size_t from) {
  const SlotForm f = *slot_of(reg(t, in.src[from].index));
  const std::uint32_t sched = reg(t, in.src[from].index).sched;
  Val<V> other;  // the unmarked operand of a binary operation, read before compute() may overwrite it
  const bool binary = in.src.size() == 2;
  if (binary) other = operand(t, in.src[1 - from]);
  compute(t, in);
  std::uint16_t form = 0;
  const std::uint32_t d = in.dst.empty() ? kNoReg : in.dst[0];
  if (d != kNoReg && in.dst.size() == 1) {
    const Val<V>& out = reg(t, d);
    SlotForm g = f;
    g.value = out.i;
    g.ptr = out.kind == VKind::Ptr;
    g.buf = out.buf;
    const bool raw = f.scale == 1 && f.value == f.old && !f.ptr;  // the old value itself (below 2^31)
    const bool wide = dtype_bytes(in.type) == 8;
    const bool konst = other.kind == VKind::Int && other.sched == 0;
    bool keep = out.kind == VKind::Int || out.kind == VKind::Ptr;
    switch (in.op) {
      case Opcode::Mov: keep = keep && in.src.size() == 1; break;
      case Opcode::Cvt:
        keep = keep && raw && in.src.size() == 1 && !dtype_is_float(in.type) && !dtype_is_float(in.src_type) &&
               dtype_bytes(in.src_type) < dtype_bytes(in.type) && out.i == f.old;
        break;
      case Opcode::MulWide: {
        std::int64_t k = other.i;
        k = dtype_is_signed(in.type) ? wrap(k, in.type) : std::int64_t(std::uint64_t(wrap(k, in.type)) & mask(in.type));
        keep = keep && raw && binary && konst && out.kind == VKind::Int;
        g.scale = k;
        break;
      }
      case Opcode::Add:
      case Opcode::Sub:
        keep = keep && binary && wide && other.sched == 0 &&
               (other.kind == VKind::Int || (other.kind == VKind::Ptr && in.op == Opcode::Add));
        if (in.op == Opcode::Sub && from == 1) keep = keep && !__builtin_mul_overflow(f.scale, -1, &g.scale);
        break;
      case Opcode::Mul:
        keep = keep && binary && wide && konst && out.kind == VKind::Int && !__builtin_mul_overflow(f.scale, other.i, &g.scale);
        break;
      case Opcode::Shl:
        keep = keep && binary && wide && konst && from == 0 && other.i >= 0 && other.i < 62 && out.kind == VKind::Int &&
               !__builtin_mul_overflow(f.scale, std::int64_t(1) << other.i, &g.scale);
        break;
      default: keep = false; break;
    }
    if (keep && slot_forms_.size() < std::numeric_limits<std::uint16_t>::max()) {
      slot_forms_.push_back(g);
      form = std::uint16_t(slot_forms_.size());
    }
  }
  for (std::uint32_t r : in.dst)
    if (r != kNoReg) {
      Val<V>& x = reg(t, r);
      x.sched = std::max(x.sched, sched);
      x.slot = r == d ? form : 0;
    }
}

template <class D>
auto Machine<D>::slot_address(std::uint32_t t, const Operand& o, const Val<V>& v, const SlotForm& f) -> Addr {
  const Instr& in = p_.code[pc_[t]];
  const std::string name = "an address taken from an atom.add (" + p_.code[f.atom_pc].loc.with_source() + ")";
  if (in.op != Opcode::Ld && in.op != Opcode::St)
    fail(DiagKind::Unsupported, t, name + " used by " + opcode_name(in.op) + ": tileverify follows slots through ld and st only");
  if (v.kind != VKind::Ptr)
    fail(DiagKind::Unsupported, t, name + " as an integer .shared address: tileverify follows slots into global memory only");
  const SlotCounter& k = slot_counters_[f.counter];
  if (!k.spoiled.empty()) fail(DiagKind::Unsupported, t, name + ", whose old values may differ between schedules: " + k.spoiled);
  const Memory<V>& m = mem_[v.buf];
  const Memory<V>& cm = mem_[k.buf];
  if (m.per_thread || m.space != Space::Global)
    fail(DiagKind::Unsupported, t, name + " into " + std::string(space_name(m.space)) + " " + m.name +
                                       ": tileverify follows slots into global memory only");
  if (cm.space == Space::Global && !cm.per_thread && l_.grid.count() > 1)
    fail(DiagKind::Unsupported, t, name + ": the counter " + cm.name + " is in global memory, where the CTAs of the grid "
                                       "take slots from it in an order between CTAs that tileverify does not follow");
  const std::int64_t width = std::int64_t(dtype_bytes(in.type)) * std::int64_t(in.op == Opcode::Ld ? in.dst.size() : in.src.size() - 1);
  const std::int64_t imm = o.kind == Operand::Kind::Reg ? o.imm : 0;
  std::int64_t room = 0;
  if (f.scale <= 0 || __builtin_mul_overflow(f.scale, k.step, &room) || imm < 0 || imm + width > room)
    fail(DiagKind::Unsupported, t, name + " at " + std::to_string(f.scale) + " * old + " + std::to_string(imm) +
                                       " (bytes), which may overlap another thread's slot of " + std::to_string(room) +
                                       " bytes");
  const std::int64_t base = std::int64_t(std::uint64_t(v.i) - std::uint64_t(f.scale) * std::uint64_t(f.old));
  auto r = slot_regions_.find(v.buf);
  if (r == slot_regions_.end()) {
    slot_regions_.emplace(v.buf, SlotRegion{f.counter, base, f.scale});
  } else if (r->second.counter != f.counter || r->second.base != base || r->second.scale != f.scale) {
    fail(DiagKind::Unsupported, t, name + ": " + m.name + " is accessed at slots of another form too, which may meet in "
                                       "other schedules");
  }
  slot_t_ = t;
  slot_pc_ = pc_[t];
  slot_accesses_[pc_[t]] = f.atom_pc;
  Addr a{v.buf, v.i + imm, v.aff};
  if (__builtin_expect(ncta_ > 1, 0) && buf_rank_[a.buf] != kNone && buf_rank_[a.buf] != t / nb_)
    remote_access(t, o, buf_rank_[a.buf]);
  return a;
}

template <class D>
void Machine<D>::slot_rule(std::uint32_t t, Memory<V>& m, std::uint32_t pc) {
  const bool at_slot = slot_now(t) && pc == pc_[t];
  if (at_slot ? (m.slot_use & 1) != 0 : (m.slot_use & 2) != 0)
    fail(DiagKind::Unsupported, t,
         m.name + " is accessed both at slots taken from an atom.add and elsewhere: tileverify shows slots distinct "
                  "from each other, not from other accesses, which may meet a slot in another schedule");
  m.slot_use |= at_slot ? 2 : 1;
}

// At the end of the run: a counter that a later atomic spoiled spoils the
// slots taken before it too.
template <class D>
void Machine<D>::slots_final() {
  for (const auto& [buf, r] : slot_regions_) {
    const SlotCounter& k = slot_counters_[r.counter];
    if (k.spoiled.empty()) continue;
    Diagnostic d;
    d.kind = DiagKind::Unsupported;
    d.message = mem_[buf].name + " is accessed at slots taken from an atom.add on " + mem_[k.buf].name +
                ", whose old values may differ between schedules: " + k.spoiled;
    throw Stop{d};
  }
}

template class Machine<SymbolicDomain>;
template class Machine<ConcreteDomain>;
template class Machine<PayloadDomain>;

}  // namespace tileverify::machine
