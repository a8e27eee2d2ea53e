// Machine<D>: memory accesses (ld, st, atom / red, cp.async and its groups)
// and the race check on them (FastTrack-style epochs and vector clocks,
// shadow cells, copies in flight).
#include "machine.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace tileverify::machine {

// ------------------------------------------------------------ race check

template <class D>
void Machine<D>::race(std::uint32_t t, Memory<V>& m, std::size_t c, std::uint32_t other, std::uint32_t other_pc,
                      Access other_kind, Access kind, std::uint32_t pc) {
  Diagnostic d;
  d.kind = DiagKind::Race;
  d.message = std::string("data race on ") + space_name(m.space) + " " + m.name + "[" + std::to_string(c) +
              "] between thread " + std::to_string(other) + " (" + access_name(other_kind) + ") and thread " +
              std::to_string(t) + " (" + access_name(kind) + ")";
  d.loc = p_.code[pc].loc;
  d.threads = {other, t};
  d.buffer = m.name;
  d.element = std::int64_t(c);
  auto info = [&](std::uint32_t u, std::uint32_t upc, Access k) {
    return AccessInfo{u, upc, k != Access::Read, p_.code[upc].loc, p_.instr_text(upc), access_name(k)};
  };
  d.accesses = {info(other, other_pc, other_kind), info(t, pc, kind)};
  throw Stop{d};
}

// FastTrack-style checks: the last write is one epoch (thread, clock); reads
// and atomics are one epoch until two unordered ones meet, then a vector clock.
template <class D>
bool Machine<D>::ordered(std::uint32_t t, std::uint32_t u, std::uint32_t clock) const {
  return u == t || vc_[std::size_t(t) * n_ + u] > clock;
}

template <class D>
void Machine<D>::add_epoch(Epochs& e, std::uint32_t t, std::uint32_t pc) {
  std::uint32_t clock = vc_[std::size_t(t) * n_ + t];
  if (e.set >= 0) {
    read_sets_[std::size_t(e.set)][t] = {clock + 1, pc};
  } else if (e.thread == kNone || ordered(t, e.thread, e.clock)) {
    e.thread = t;
    e.clock = clock;
    e.pc = pc;
  } else {  // two unordered accesses: keep both
    std::vector<std::pair<std::uint32_t, std::uint32_t>> set(n_, {0, 0});
    set[e.thread] = {e.clock + 1, e.pc};
    set[t] = {clock + 1, pc};
    e.set = new_read_set(std::move(set));
  }
}

// Calls f(thread, pc) for each access in e that no sync orders before t's.
template <class D>
template <class F>
void Machine<D>::for_unordered(const Epochs& e, std::uint32_t t, F f) {
  if (e.set >= 0) {
    const auto& set = read_sets_[std::size_t(e.set)];
    for (std::uint32_t u = 0; u < n_; ++u)
      if (set[u].first != 0 && !ordered(t, u, set[u].first - 1)) f(u, set[u].second);
  } else if (e.thread != kNone && !ordered(t, e.thread, e.clock)) {
    f(e.thread, e.pc);
  }
}

template <class D>
void Machine<D>::clear_epochs(Epochs& e) {
  if (e.set >= 0) free_sets_.push_back(e.set);
  e.set = -1;
  e.thread = kNone;
}

template <class D>
std::int32_t Machine<D>::new_read_set(std::vector<std::pair<std::uint32_t, std::uint32_t>>&& set) {
  if (!free_sets_.empty()) {
    std::int32_t k = free_sets_.back();
    free_sets_.pop_back();
    read_sets_[std::size_t(k)] = std::move(set);
    return k;
  }
  read_sets_.push_back(std::move(set));
  return std::int32_t(read_sets_.size() - 1);
}

// An element a cp.async will write when its group is retired: any access
// before that, by any thread, the copying one included, races with the copy.
template <class D>
void Machine<D>::check_pending(std::uint32_t t, Memory<V>& m, std::size_t c, Access kind, std::uint32_t pc) {
  if (m.pending.empty() || m.pending[c] == 0) return;
  const AsyncCopy<V>& cp = copies_[m.pending[c] - 1];
  race(t, m, c, cp.thread, cp.pc, Access::AsyncWrite, kind, pc);
}

template <class D>
void Machine<D>::check_read(std::uint32_t t, Memory<V>& m, std::size_t c) { check_read(t, m, c, pc_[t]); }

template <class D>
void Machine<D>::touch(Memory<V>& m, std::size_t c, std::uint8_t kind, std::uint32_t t, std::uint32_t pc) {
  if (!o_.record_touches || m.role == Role::Scratch || m.space != Space::Global) return;
  if (m.touches.size() < m.cells.size()) m.touches.resize(m.cells.size());
  Touch& x = m.touches[c];
  bool first_update = kind != Touch::kRead && !(x.kinds & (Touch::kWrite | Touch::kAtomic));
  if (x.kinds == 0 || first_update) {
    x.thread = t;
    x.pc = pc;
  }
  if (kind == Touch::kAtomic) x.atomic_op = p_.code[pc].mode;
  x.kinds |= kind;
}

template <class D>
template <class F>
void Machine<D>::for_unordered_writes(const Shadow& s, std::uint32_t t, F f) {
  if (s.w_thread != kNone && !ordered(t, s.w_thread, s.w_clock)) f(s.w_thread, s.w_pc);
  if (s.w_more >= 0)
    for (const WriteEpoch& w : write_sets_[std::size_t(s.w_more)])
      if (!ordered(t, w.thread, w.clock)) f(w.thread, w.pc);
}

template <class D>
void Machine<D>::check_read(std::uint32_t t, Memory<V>& m, std::size_t c, std::uint32_t pc) {
  touch(m, c, Touch::kRead, t, pc);
  check_pending(t, m, c, Access::Read, pc);
  if (!o_.check_races || m.per_thread) return;
  Shadow& s = m.shadow[c];
  for_unordered_writes(s, t, [&](std::uint32_t u, std::uint32_t upc) {
    race(t, m, c, u, upc, Access::Write, Access::Read, pc);
  });
  for_unordered(s.atomics, t, [&](std::uint32_t u, std::uint32_t upc) {
    race(t, m, c, u, upc, Access::Atomic, Access::Read, pc);
  });
  add_epoch(s.reads, t, pc);
}

// The width of a plain store's elements (st, wmma.store); 0 for any other
// write (a cp.async's, retired by its wait).
template <class D>
std::size_t Machine<D>::plain_width(std::uint32_t pc) const {
  const Instr& in = p_.code[pc];
  return in.op == Opcode::St || in.op == Opcode::WmmaStore ? dtype_bytes(in.type) : 0;
}

// Whether two values stored to one cell are the same value: the
// domain's identity for floats (SymbolicDomain: the same expression;
// ConcreteDomain: the same bits; PayloadDomain: the same payload), equality
// for integers and pointers. Conservative: the same bits held as an integer
// and as a float count as different, and so does a schedule-dependent value
// (what an atom returned), which other schedules would make different.
template <class D>
bool Machine<D>::same_value(const Val<V>& a, const Val<V>& b) const {
  if (a.kind != b.kind || a.sched != 0 || b.sched != 0) return false;
  switch (a.kind) {
    case VKind::Int: return a.i == b.i;  // whole registers: a load does not cut a stored value to its width
    case VKind::Float:
    case VKind::Data: return D::same(a.f, b.f);
    case VKind::Pair: return D::same(a.f, b.f) && D::same(a.g, b.g);
    case VKind::Ptr: return a.buf == b.buf && a.i == b.i;
    case VKind::Cond: return a.cmp == b.cmp && D::same(a.f, b.f) && D::same(a.g, b.g);
    case VKind::Undef: return false;
  }
  return false;
}

// Thread t's write at pc and `other`'s write at other_pc are unordered and
// store the same value. The PTX ISA ("Memory Consistency Model": two
// conflicting, overlapping operations that causality order does not relate
// are a data race) calls that a data race; but memory holds the same value
// in every order, so it cannot change what the kernel computes, and
// GPUVerify tolerates such benign write-write races by default too (its
// --no-benign-tolerance reports them). A note then (one per buffer, a few
// per run: a duplicated layout repeats it on every element), and a race
// under RunOptions::strict, which follows the letter of the model.
template <class D>
void Machine<D>::same_value_write(std::uint32_t t, Memory<V>& m, std::size_t c, std::uint32_t other,
                                  std::uint32_t other_pc, std::uint32_t pc) {
  const std::string where = std::string(space_name(m.space)) + " " + m.name + "[" + std::to_string(c) + "]";
  if (!o_.strict) {
    std::size_t mine = 0;
    for (const Diagnostic& n : notes_) {
      if (n.kind != DiagKind::SameValueWrite) continue;
      if (n.buffer == m.name) return;
      ++mine;
    }
    if (mine >= 4) return;
  }
  Diagnostic d;
  d.kind = o_.strict ? DiagKind::Race : DiagKind::SameValueWrite;
  d.message = o_.strict ? "data race on " + where + " between thread " + std::to_string(other) +
                              " (write) and thread " + std::to_string(t) + " (write)"
                        : "threads " + std::to_string(other) + " and " + std::to_string(t) +
                              " write the same value to " + where +
                              " without synchronization (not a race: either order leaves the same value)";
  d.loc = p_.code[pc].loc;
  d.threads = {other, t};
  d.buffer = m.name;
  d.element = std::int64_t(c);
  auto info = [&](std::uint32_t u, std::uint32_t upc) {
    return AccessInfo{u, upc, true, p_.code[upc].loc, p_.instr_text(upc), access_name(Access::Write)};
  };
  d.accesses = {info(other, other_pc), info(t, pc)};
  if (!o_.strict) {
    notes_.push_back(std::move(d));
    return;
  }
  d.detail =
      "  both threads write the same value, so either order leaves it in memory (without --strict this is a note),\n"
      "  but the PTX memory model calls any two unordered writes of one element a data race (order them\n"
      "  with a barrier, e.g. __syncthreads() / bar.sync, or let one thread write)\n";
  throw Stop{d};
}

template <class D>
void Machine<D>::check_write(std::uint32_t t, Memory<V>& m, std::size_t c, std::uint32_t pc, Access kind,
                             const Val<V>* value) {
  touch(m, c, Touch::kWrite, t, pc);
  check_pending(t, m, c, kind, pc);
  if (!o_.check_races || m.per_thread) return;
  Shadow& s = m.shadow[c];
  // An unordered earlier write is a race unless both are plain stores of
  // one width and this one stores the value the cell holds, which every
  // writer kept in the shadow stored (they were all unordered with each
  // other, so each was checked the same way against the cell).
  std::uint32_t same = kNone, same_pc = 0;  // the first unordered writer of the same value
  const std::size_t width = kind == Access::Write && value ? plain_width(pc) : 0;
  for_unordered_writes(s, t, [&](std::uint32_t u, std::uint32_t upc) {
    if (width == 0 || plain_width(upc) != width || !same_value(*value, m.cells[c]))
      race(t, m, c, u, upc, Access::Write, kind, pc);
    if (same == kNone) {
      same = u;
      same_pc = upc;
    }
  });
  for_unordered(s.reads, t, [&](std::uint32_t u, std::uint32_t upc) { race(t, m, c, u, upc, Access::Read, kind, pc); });
  for_unordered(s.atomics, t, [&](std::uint32_t u, std::uint32_t upc) {
    race(t, m, c, u, upc, Access::Atomic, kind, pc);
  });
  if (same != kNone) same_value_write(t, m, c, same, same_pc, pc);  // a real race above is the better report
  // Everything later that is ordered after this write is ordered after the
  // reads and atomics it was ordered after: they need no checking any more.
  clear_epochs(s.reads);
  clear_epochs(s.atomics);
  if (same == kNone) {
    // Every earlier writer is ordered before this one: one epoch again.
    if (s.w_more >= 0) {
      write_sets_[std::size_t(s.w_more)].clear();
      free_write_sets_.push_back(s.w_more);
      s.w_more = -1;
    }
  } else {
    // Keep the writers unordered with this one: a later access must be
    // ordered after each of them. Those ordered before it are dropped (an
    // access ordered after this write is ordered after them too).
    if (s.w_more < 0) {
      if (!free_write_sets_.empty()) {
        s.w_more = free_write_sets_.back();
        free_write_sets_.pop_back();
      } else {
        write_sets_.emplace_back();
        s.w_more = std::int32_t(write_sets_.size() - 1);
      }
    }
    std::vector<WriteEpoch>& more = write_sets_[std::size_t(s.w_more)];
    more.erase(std::remove_if(more.begin(), more.end(),
                              [&](const WriteEpoch& w) { return ordered(t, w.thread, w.clock); }),
               more.end());
    if (s.w_thread != kNone && !ordered(t, s.w_thread, s.w_clock))
      more.push_back(WriteEpoch{s.w_thread, s.w_clock, s.w_pc});
  }
  s.w_thread = t;
  s.w_clock = vc_[std::size_t(t) * n_ + t];
  s.w_pc = pc;
}

// Atomics commute with each other (the same operation on the same type),
// so two of them never race; an atomic and a plain access do, unless ordered.
template <class D>
void Machine<D>::check_atomic(std::uint32_t t, Memory<V>& m, std::size_t c, std::uint32_t pc) {
  touch(m, c, Touch::kAtomic, t, pc);
  check_pending(t, m, c, Access::Atomic, pc);
  if (!o_.check_races || m.per_thread) return;
  Shadow& s = m.shadow[c];
  for_unordered_writes(s, t, [&](std::uint32_t u, std::uint32_t upc) {
    race(t, m, c, u, upc, Access::Write, Access::Atomic, pc);
  });
  for_unordered(s.reads, t, [&](std::uint32_t u, std::uint32_t upc) {
    race(t, m, c, u, upc, Access::Read, Access::Atomic, pc);
  });
  const Instr& in = p_.code[pc];
  for_unordered(s.atomics, t, [&](std::uint32_t u, std::uint32_t upc) {
    const Instr& other = p_.code[upc];  // atom.add and atom.max on one element do not commute
    if (other.mode != in.mode || other.type != in.type) race(t, m, c, u, upc, Access::Atomic, Access::Atomic, pc);
  });
  add_epoch(s.atomics, t, pc);
}

// ------------------------------------------------------------ accesses

template <class D>
void Machine<D>::load(std::uint32_t t, const Instr& in) {
  if (in.space == Space::Param) {
    set(t, in.dst[0], operand(t, in.src[0]));
    return;
  }
  Addr a = address(t, in.src[0]);
  Memory<V>& m = mem_[a.buf];
  for (std::size_t k = 0; k < in.dst.size(); ++k) {
    if (packed(m, in.type)) {
      set(t, in.dst[k], load_pair(t, m, a, k));
      continue;
    }
    std::size_t c = cell(t, a, k, dtype_bytes(in.type), false);
    check_read(t, m, c);
    Val<V> v = read_cell(m, c);
    if (v.kind == VKind::Undef) {
      // Report it, but run on with a poison value: the read may be one side
      // of a race (a missing barrier), which is the better report.
      note_uninitialized(t, m, c);
      set(t, in.dst[k], float_val(d_.poison(m.name, c)));
      continue;
    }
    if (v.kind == VKind::Int && !m.init.empty()) {
      // Module data holds bits: a float load reads a float, a signed load sign-extends.
      if (dtype_is_float(in.type))
        v = float_val(as_float(t, v, in.type));
      else
        v.i = wrap(v.i, in.type);
    }
    set(t, in.dst[k], v);
  }
}

template <class D>
void Machine<D>::note_uninitialized(std::uint32_t t, const Memory<V>& m, std::size_t c) {
  if (uninitialized_) return;
  Diagnostic d;
  d.kind = DiagKind::Uninitialized;
  d.message = "read of " + m.name + "[" + std::to_string(c) + "], which nothing has written";
  d.loc = p_.code[pc_[t]].loc;
  d.threads = {t};
  d.buffer = m.name;
  d.element = std::int64_t(c);
  d.detail = "  instruction: " + p_.instr_text(pc_[t]) + "\n";
  uninitialized_ = d;
}

// Packed 16-bit data: a 32-bit integer access (ld/st .u32 / .b32, and their
// vectors: the uint4 copies of half arrays) to memory of 16-bit elements
// moves two elements, element 2k in the low half. A register holds them as
// a Pair (floats) or as the 32 bits (integers). A byte array that a Pair is
// stored into first takes 16-bit elements.
template <class D>
bool Machine<D>::packed(const Memory<V>& m, DType access) {
  return dtype_bytes(access) == 4 && !dtype_is_float(access) && !m.untyped && m.esize == 2;
}

template <class D>
auto Machine<D>::load_pair(std::uint32_t t, Memory<V>& m, const Addr& a, std::size_t k) -> Val<V> {
  Val<V> half[2];
  for (std::size_t h = 0; h < 2; ++h) {
    std::size_t c = cell(t, a, 2 * k + h, 2, false);
    check_read(t, m, c);
    half[h] = read_cell(m, c);
    if (half[h].kind == VKind::Undef) {
      note_uninitialized(t, m, c);
      half[h] = float_val(d_.poison(m.name, c));
    }
  }
  Val<V> v;
  if (half[0].kind == VKind::Int && half[1].kind == VKind::Int) {
    v = int_val(std::int64_t((std::uint64_t(half[0].i) & 0xffff) | (std::uint64_t(half[1].i) & 0xffff) << 16));
  } else if (half[0].kind == VKind::Float && half[1].kind == VKind::Float) {
    v.kind = VKind::Pair;
    v.f = half[0].f;
    v.g = half[1].f;
  } else {
    fail(DiagKind::Unsupported, t, "a 32-bit load of two 16-bit elements of '" + m.name + "' that are not both numbers");
  }
  v.sched = std::max(half[0].sched, half[1].sched);
  return v;
}

template <class D>
void Machine<D>::store(std::uint32_t t, const Instr& in) {
  Addr a = address(t, in.src[0]);
  Memory<V>& m = mem_[a.buf];
  check_writable(t, m);
  for (std::size_t k = 1; k < in.src.size(); ++k) {
    const bool pair = in.src[k].kind == Operand::Kind::Reg && reg(t, in.src[k].index).kind == VKind::Pair;
    if ((pair && m.untyped && dtype_bytes(in.type) == 4 && !dtype_is_float(in.type)) || packed(m, in.type)) {
      Val<V> pv = operand(t, in.src[k]);
      for (std::size_t h = 0; h < 2; ++h) {
        std::size_t c = cell(t, a, 2 * (k - 1) + h, 2, true);
        Val<V> half = pv;
        if (pv.kind == VKind::Pair) {
          half.kind = VKind::Float;
          half.f = h == 0 ? pv.f : pv.g;
        } else if (pv.kind == VKind::Int) {
          half.i = std::int64_t(std::uint64_t(pv.i) >> (16 * h) & 0xffff);
        } else {
          fail(DiagKind::Unsupported, t, "a 32-bit store into 16-bit elements of '" + m.name + "' of a value that is not two halves");
        }
        check_write(t, m, c, pc_[t], Access::Write, &half);
        m.cells[c] = half;
      }
      continue;
    }
    std::size_t c = cell(t, a, k - 1, dtype_bytes(in.type), true);
    Val<V> v = operand(t, in.src[k]);
    if (v.kind == VKind::Data && dtype_is_float(m.dtype))
      fail(DiagKind::NotStructured, t, "integer tensor data stored as the bits of a float into '" + m.name + "'");
    check_write(t, m, c, pc_[t], Access::Write, &v);
    m.cells[c] = v;
  }
}

// atom / red: one read-modify-write. The value left in memory is the same
// for every order of the atomics (they commute: reals add associatively,
// max and min are order-free), which is why two atomics never race. The old
// value an atom returns is the one of this schedule: it is marked, and
// using it where the schedule would show (an output, an address, a branch)
// is reported.
template <class D>
void Machine<D>::atomic(std::uint32_t t, const Instr& in) {
  Addr a = address(t, in.src[0]);
  Memory<V>& m = mem_[a.buf];
  check_writable(t, m);
  const DType ty = in.type;
  std::size_t c = cell(t, a, 0, dtype_bytes(ty), true);
  Val<V> v = operand(t, in.src[1]);
  check_atomic(t, m, c, pc_[t]);
  Val<V> old = read_cell(m, c);
  const bool fl = dtype_is_float(ty);
  if (old.kind == VKind::Undef) {
    note_uninitialized(t, m, c);
    old = fl ? float_val(d_.poison(m.name, c)) : int_val(0);
  }
  Val<V> now;
  const AtomOp op = AtomOp(in.mode);
  if (fl) {
    V x = as_float(t, old, ty), y = as_float(t, v, ty);
    switch (op) {
      case AtomOp::Add: now = float_val(d_.add(x, y)); break;
      case AtomOp::Min: now = float_val(d_.min(x, y)); break;
      case AtomOp::Max: now = float_val(d_.max(x, y)); break;
      default: fail(DiagKind::Unsupported, t, std::string("atom.") + atom_op_name(op) + " on a float type");
    }
  } else if (old.kind == VKind::Data || v.kind == VKind::Data) {
    V x = as_data(t, old, ty, "an atomic's memory operand"), y = as_data(t, v, ty, "an atomic's operand");
    switch (op) {
      case AtomOp::Add: now = data_val(d_.add(x, y)); break;
      case AtomOp::Min: now = data_val(d_.min(x, y)); break;
      case AtomOp::Max: now = data_val(d_.max(x, y)); break;
      default:
        fail(DiagKind::NotStructured, t, std::string("atom.") + atom_op_name(op) + " on integer tensor data (a bit operation)");
    }
    old.kind = VKind::Data;
    old.f = x;
  } else {
    std::int64_t x = wrap(as_int(t, old, "an atomic's memory operand"), ty);
    std::int64_t y = wrap(as_int(t, v, "an atomic's operand"), ty);
    bool lt = dtype_is_signed(ty) ? x < y : (std::uint64_t(x) & mask(ty)) < (std::uint64_t(y) & mask(ty));
    switch (op) {
      case AtomOp::Add: now = int_val(wrap(std::int64_t(std::uint64_t(x) + std::uint64_t(y)), ty)); break;
      case AtomOp::Min: now = int_val(lt ? x : y); break;
      case AtomOp::Max: now = int_val(lt ? y : x); break;
      case AtomOp::And: now = int_val(wrap(x & y, ty)); break;
      case AtomOp::Or: now = int_val(wrap(x | y, ty)); break;
      case AtomOp::Xor: now = int_val(wrap(x ^ y, ty)); break;
    }
    old.i = x;
  }
  now.sched = std::max(old.sched, v.sched);
  m.cells[c] = now;
  if (!in.dst.empty()) {
    sched_marks_ = true;
    old.sched = pc_[t] + 1;
    set(t, in.dst[0], old);
  }
}

// ------------------------------------------------------------ cp.async

// cp.async [dst], [src], cp_size[, src_size]: the source is read now (as a
// load by this thread); each destination element is pending until a wait
// retires the copy's group, and is written then, by this thread. Bytes past
// src_size are zeros (the zero-fill form predicated copies use).
template <class D>
void Machine<D>::cp_async(std::uint32_t t, const Instr& in) {
  Addr dst = address(t, in.src[0]), src = address(t, in.src[1]);
  Memory<V>& dm = mem_[dst.buf];
  Memory<V>& sm = mem_[src.buf];
  if (dm.space != Space::Shared || dm.per_thread)
    fail(DiagKind::Unsupported, t, "cp.async into '" + dm.name + "', which is not shared memory");
  if (sm.space != Space::Global && sm.space != Space::Const)
    fail(DiagKind::Unsupported, t, "cp.async from '" + sm.name + "', which is not global memory");
  std::int64_t cp_size = in.src[2].imm;
  std::int64_t src_size = in.src.size() > 3 ? as_int(t, operand(t, in.src[3]), "a cp.async source size") : cp_size;
  // Elements of the source's type (a tensor's dtype), or of the destination's.
  std::size_t width = !sm.untyped ? sm.esize : !dm.untyped ? dm.esize : 4;
  if (cp_size <= 0 || cp_size % std::int64_t(width) != 0 || src_size < 0 || src_size > cp_size ||
      src_size % std::int64_t(width) != 0)
    fail(DiagKind::Unsupported, t,
         "a cp.async of " + std::to_string(cp_size) + " bytes (" + std::to_string(src_size) +
             " from the source) in elements of " + std::to_string(width) + " bytes");
  const std::uint32_t pc = pc_[t];
  for (std::size_t k = 0; k < std::size_t(cp_size) / width; ++k) {
    std::size_t dc = cell(t, dst, k, width, true);
    Val<V> v = int_val(0);  // zero-fill: all-zero bits are 0 in every format
    if (std::int64_t(k * width) < src_size) {
      std::size_t sc = cell(t, src, k, width, false);
      check_read(t, sm, sc, pc);
      v = read_cell(sm, sc);
      if (v.kind == VKind::Undef) {
        note_uninitialized(t, sm, sc);
        v = float_val(d_.poison(sm.name, sc));
      }
    }
    if (dm.pending.size() != dm.cells.size()) dm.pending.assign(dm.cells.size(), 0);
    check_pending(t, dm, dc, Access::AsyncWrite, pc);  // two copies in flight to one element
    AsyncCopy<V> cp;
    cp.thread = t;
    cp.pc = pc;
    cp.buf = dst.buf;
    cp.cell = dc;
    cp.value = v;
    copies_.push_back(cp);
    std::uint32_t id = std::uint32_t(copies_.size());
    dm.pending[dc] = id;
    need_copy_groups();
    open_copies_[t].push_back(id);
  }
}

// The per-thread cp.async bookkeeping, made on first use: a deque per
// thread is two allocations, which a kernel without cp.async (most) would
// pay for every thread of every run.
template <class D>
void Machine<D>::need_copy_groups() {
  if (!copy_groups_.empty()) return;
  open_copies_.assign(n_, {});
  copy_groups_.assign(n_, {});
}

// The copies of a group complete: each writes its element now, checked as a
// write by the copying thread at this point of its program.
template <class D>
void Machine<D>::retire(std::uint32_t t, const std::vector<std::uint32_t>& group) {
  for (std::uint32_t id : group) {
    AsyncCopy<V>& cp = copies_[id - 1];
    Memory<V>& m = mem_[cp.buf];
    if (m.pending[cp.cell] == id) m.pending[cp.cell] = 0;
    check_write(t, m, cp.cell, cp.pc, Access::AsyncWrite);
    m.cells[cp.cell] = cp.value;
    cp.value = Val<V>{};
  }
}

template class Machine<SymbolicDomain>;
template class Machine<ConcreteDomain>;
template class Machine<PayloadDomain>;

}  // namespace tileverify::machine
