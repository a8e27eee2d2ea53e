// Machine<D>: the race check on memory accesses: FastTrack-style epochs
// and vector clocks per cell (shadow cells at the buffer's granule, so
// accesses of different widths conflict exactly where their bytes overlap),
// copies in flight, same-value writes, and the touch records of checks over
// many CTAs.
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
  // An asynchronous copy's agent (a clock column past the threads) is
  // reported as its issuing thread and instruction.
  const std::uint32_t agent = other >= n_ && other != kNone ? other - n_ : kNone;
  if (other >= n_ && other != kNone) {
    other_kind = other_kind == Access::Read ? Access::AgentRead : Access::AgentWrite;
    other = agents_[other - n_].thread;
  }
  Diagnostic d;
  d.kind = DiagKind::Race;
  // The cell both accesses cover (each covers whole cells, a narrower one
  // having re-gridded the buffer), in bytes: an element index would count in
  // a unit that differs between kernels (an untyped array's first access).
  const std::uint64_t e = m.element_of(c);
  auto name = [&](Access k, std::uint32_t at) { return async_access_name(k, at); };
  d.message = "data race on " + m.place(std::int64_t(m.byte_of(c)), m.g) + " between thread " + tname(other) + " (" + name(other_kind, other_pc) + ") and thread " +
              tname(t) + " (" + name(kind, pc) + ")";
  d.loc = p_.code[pc].loc;
  d.threads = {other, t};
  d.buffer = m.name;
  d.element = std::int64_t(e);
  d.byte = std::int64_t(m.byte_of(c));
  d.width = m.g;
  auto info = [&](std::uint32_t u, std::uint32_t upc, Access k) {
    return AccessInfo{u, upc, k != Access::Read && k != Access::AgentRead, p_.code[upc].loc, p_.instr_text(upc),
                      name(k, upc)};
  };
  d.accesses = {info(other, other_pc, other_kind), info(t, pc, kind)};
  if (other_kind == Access::AgentRead || other_kind == Access::AgentWrite || kind == Access::AgentRead ||
      kind == Access::AgentWrite)
    d.detail = async_race_detail(other_kind, other_pc, kind, pc, agent);
  throw Stop{d};
}

// FastTrack-style checks: the last write is one epoch (thread, clock); reads
// and atomics are one epoch until two unordered ones meet, then a vector clock.
template <class D>
bool Machine<D>::ordered(std::uint32_t t, std::uint32_t u, std::uint32_t clock) const {
  return u == t || vc_[std::size_t(t) * w_ + u] > clock;
}

// Column u's entry of a read set becomes (clock, pc). The threads of a
// round-robin run reach a cell in increasing order, so the entry is nearly
// always the last one or goes after it.
template <class D>
void Machine<D>::set_epoch(std::vector<ReadEpoch>& set, std::uint32_t u, std::uint32_t clock, std::uint32_t pc) {
  if (set.empty() || set.back().thread < u) {
    set.push_back(ReadEpoch{u, clock, pc});
    return;
  }
  auto it = set.end() - 1;
  if (it->thread != u)
    it = std::lower_bound(set.begin(), set.end(), u, [](const ReadEpoch& x, std::uint32_t v) { return x.thread < v; });
  if (it->thread == u) {
    it->clock = clock;
    it->pc = pc;
    return;
  }
  set.insert(it, ReadEpoch{u, clock, pc});
}

template <class D>
void Machine<D>::add_epoch(Epochs& e, std::uint32_t t, std::uint32_t pc) {
  std::uint32_t clock = vc_[std::size_t(t) * w_ + t];
  if (e.set >= 0) {
    set_epoch(read_sets_[std::size_t(e.set)], t, clock, pc);
  } else if (e.thread == kNone || ordered(t, e.thread, e.clock)) {
    e.thread = t;
    e.clock = clock;
    e.pc = pc;
  } else {  // two unordered accesses: keep both
    const std::int32_t k = new_read_set();
    std::vector<ReadEpoch>& set = read_sets_[std::size_t(k)];
    set_epoch(set, e.thread, e.clock, e.pc);
    set_epoch(set, t, clock, pc);
    e.set = k;
  }
}

// Calls f(thread, pc) for each access in e that no sync orders before t's.
template <class D>
template <class F>
void Machine<D>::for_unordered(const Epochs& e, std::uint32_t t, F f) {
  if (e.set >= 0) {
    for (const ReadEpoch& x : read_sets_[std::size_t(e.set)])
      if (!ordered(t, x.thread, x.clock)) f(x.thread, x.pc);
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

// An empty read set: a freed one keeps its capacity, so a cell that
// widens again in every phase of a loop allocates once.
template <class D>
std::int32_t Machine<D>::new_read_set() {
  if (!free_sets_.empty()) {
    std::int32_t k = free_sets_.back();
    free_sets_.pop_back();
    read_sets_[std::size_t(k)].clear();
    return k;
  }
  read_sets_.emplace_back();
  return std::int32_t(read_sets_.size() - 1);
}

// An element a cp.async will write when its group is retired: any access
// before that, by any thread, the copying one included, races with the copy.
template <class D>
void Machine<D>::check_pending(std::uint32_t t, Memory<V>& m, std::size_t c, Access kind, std::uint32_t pc) {
  if (m.pending.empty() || m.pending[c] == 0) return;
  if (m.pending[c] >= kMapCell) special_cell(t, m, c, kind, pc);  // an mbarrier's or a tensor map's bytes
  const AsyncCopy<V>& cp = copies_[m.pending[c] - 1];
  race(t, m, c, cp.thread, cp.pc, Access::AsyncWrite, kind, pc);
}

// A cp.async's write lands somewhere between its issue and its completion
// (a wait_group, or the mbarrier phase it is tracked by), and is checked at
// the completion, as the issuing thread's (retire) or its agent's
// (cp_async_mbar_arrive) access ordered after what the thread has
// synchronized with by then. An access another thread made before the
// issue, unordered with it, may come after the write on a GPU however the
// thread synchronizes in between: it races with the copy, checked here at
// the issue. (Accesses after the issue meet the pending mark.)
template <class D>
void Machine<D>::check_copy_issue(std::uint32_t t, Memory<V>& m, std::size_t c, std::uint32_t pc) {
  if (!o_.check_races || m.per_thread) return;
  const Shadow& s = m.shadow[c];
  for_unordered_writes(s, t, [&](std::uint32_t u, std::uint32_t upc) {
    race(t, m, c, u, upc, Access::Write, Access::AsyncWrite, pc);
  });
  for_unordered(s.reads, t, [&](std::uint32_t u, std::uint32_t upc) {
    race(t, m, c, u, upc, Access::Read, Access::AsyncWrite, pc);
  });
  for_unordered(s.atomics, t, [&](std::uint32_t u, std::uint32_t upc) {
    race(t, m, c, u, upc, Access::Atomic, Access::AsyncWrite, pc);
  });
}

template <class D>
void Machine<D>::touch(Memory<V>& m, std::size_t c, std::uint8_t kind, std::uint32_t t, std::uint32_t pc) {
  if (!o_.record_touches || m.role == Role::Scratch || m.space != Space::Global) return;
  if (m.touches.size() < m.elements()) m.touches.resize(m.elements());
  Touch& x = m.touches[m.element_of(c)];  // per element of the tensor's dtype, whatever the access width
  bool first_update = kind != Touch::kRead && !(x.kinds & (Touch::kWrite | Touch::kAtomic));
  if (x.kinds == 0 || first_update) {
    x.thread = t;
    x.pc = pc;
  }
  if (kind == Touch::kAtomic) {
    // Checks over many CTAs combine the CTAs' values of an element that each
    // only updated with one add, min or max (grid.hpp): an element one CTA
    // updated with two operations is not one of them, so it is recorded as
    // written too. A relaxed load changes nothing and gives way to the update.
    const std::uint8_t op = p_.code[pc].mode, load = std::uint8_t(AtomOp::Load);
    if (x.kinds & Touch::kAtomic && x.atomic_op == load && op != load && !(x.kinds & Touch::kWrite)) {
      x.thread = t;  // reports name the update, not the read before it
      x.pc = pc;
    }
    if (!(x.kinds & Touch::kAtomic) || x.atomic_op == load)
      x.atomic_op = op;
    else if (op != x.atomic_op && op != load)
      x.kinds |= Touch::kWrite;
  }
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
  note_access(t, m, pc);
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
    // The same handle and renaming: the same value. Conservative, as for
    // floats: a shadow and the float it denotes count as different.
    case VKind::Shadow: return a.f == b.f && a.i == b.i;
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
  const std::string where = m.place(std::int64_t(m.byte_of(c)), m.g);
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
  d.message = o_.strict ? "data race on " + where + " between thread " + tname(other) + " (write) and thread " +
                              tname(t) + " (write)"
                        : "threads " + tname(other) + " and " + tname(t) +
                              " write the same value to " + where +
                              " without synchronization (not a race: either order leaves the same value)";
  d.loc = p_.code[pc].loc;
  d.threads = {other, t};
  d.buffer = m.name;
  d.element = std::int64_t(m.element_of(c));
  d.byte = std::int64_t(m.byte_of(c));
  d.width = m.g;
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
                             const Val<V>* value, std::uint32_t slice) {
  note_access(t, m, pc);
  touch(m, c, Touch::kWrite, t, pc);
  check_pending(t, m, c, kind, pc);
  if (!o_.check_races || m.per_thread) return;
  Shadow& s = m.shadow[c];
  // An unordered earlier write is a race unless both are plain stores of
  // one width and this one stores the value the cell holds (the same slice
  // of it, for a cell that holds a slice), which every writer kept in the
  // shadow stored (they were all unordered with each other, so each was
  // checked the same way against the cell).
  std::uint32_t same = kNone, same_pc = 0;  // the first unordered writer of the same value
  const std::size_t width = kind == Access::Write && value ? plain_width(pc) : 0;
  for_unordered_writes(s, t, [&](std::uint32_t u, std::uint32_t upc) {
    if (width == 0 || plain_width(upc) != width || !same_value(*value, m.cells[c]) ||
        (m.cells[c].tag & kSliceBits) != slice)
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
  clear_kinds(s);
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
  s.w_clock = vc_[std::size_t(t) * w_ + t];
  s.w_pc = pc;
}

// Two atomics on one element that no sync orders race unless they commute:
// then every order of them leaves the same value (PTX ISA, "Parallel
// Synchronization and Communication Instructions: atom", gives each
// operation as a function of the old value; these pairs commute as
// functions): the same operation on the same type, where add, mul, min, max,
// and, or, xor commute whatever their operands; exch (x -> b), inc
// (x -> x >= b ? 0 : x + 1), dec and cas (x -> x == b ? c : x) commute with
// another of the same operands (any function commutes with itself) and not
// otherwise (exchanges of 1 and 2 leave whichever came last). A relaxed load
// (the first read of a compare-and-swap loop) changes nothing, so commutes
// with all of them; its value is marked instead (atomic()). An atomic and a
// plain access race, unless ordered. Each thread's latest atomic of each
// kind is kept (atomic_kinds_): an earlier one of another kind may be
// unordered with a thread that the later one is ordered before.
template <class D>
bool Machine<D>::commute(const AtomicEpoch& e, std::uint32_t pc, const Val<V>* operands) const {
  const Instr& a = p_.code[e.pc];
  const Instr& b = p_.code[pc];
  if (a.mode != b.mode || a.type != b.type) return false;
  switch (AtomOp(b.mode)) {
    case AtomOp::Exch:
    case AtomOp::Inc:
    case AtomOp::Dec: return same_value(atomic_values_[e.values], operands[0]);
    case AtomOp::Cas:
      return same_value(atomic_values_[e.values], operands[0]) && same_value(atomic_values_[e.values + 1], operands[1]);
    default: return true;
  }
}

template <class D>
void Machine<D>::check_atomic(std::uint32_t t, Memory<V>& m, std::size_t c, std::uint32_t pc, const Val<V>* operands) {
  note_access(t, m, pc);
  touch(m, c, Touch::kAtomic, t, pc);
  check_pending(t, m, c, Access::Atomic, pc);
  if (!o_.check_races || m.per_thread) return;
  Shadow& s = m.shadow[c];
  for_unordered_writes(s, t, [&](std::uint32_t u, std::uint32_t upc) {
    race(t, m, c, u, upc, Access::Write, Access::Atomic, pc);
  });
  const AtomOp op = AtomOp(p_.code[pc].mode);
  if (op == AtomOp::Load) {  // reads do not conflict with reads, and it commutes with every atomic
    add_epoch(s.atomics, t, pc);
    return;
  }
  for_unordered(s.reads, t, [&](std::uint32_t u, std::uint32_t upc) {
    race(t, m, c, u, upc, Access::Read, Access::Atomic, pc);
  });
  add_epoch(s.atomics, t, pc);
  if (s.kinds < 0) {
    if (!free_kinds_.empty()) {
      s.kinds = free_kinds_.back();
      free_kinds_.pop_back();
    } else {
      atomic_kinds_.emplace_back();
      s.kinds = std::int32_t(atomic_kinds_.size() - 1);
    }
  }
  const std::size_t nvalues = op == AtomOp::Cas ? 2 : op == AtomOp::Exch || op == AtomOp::Inc || op == AtomOp::Dec ? 1 : 0;
  std::vector<AtomicEpoch>& kinds = atomic_kinds_[std::size_t(s.kinds)];
  AtomicEpoch* mine = nullptr;
  for (AtomicEpoch& e : kinds) {
    if (e.thread == t) {
      if (!mine && commute(e, pc, operands)) mine = &e;  // commuting with it: the same kind
      continue;
    }
    if (!ordered(t, e.thread, e.clock) && !commute(e, pc, operands))
      race(t, m, c, e.thread, e.pc, Access::Atomic, Access::Atomic, pc);
  }
  const std::uint32_t clock = vc_[std::size_t(t) * w_ + t];
  if (mine) {
    mine->clock = clock;
    mine->pc = pc;
    return;
  }
  std::uint32_t values = kNone;
  if (nvalues) {
    values = std::uint32_t(atomic_values_.size());
    for (std::size_t i = 0; i < nvalues; ++i) atomic_values_.push_back(operands[i]);
  }
  kinds.push_back(AtomicEpoch{t, clock, pc, values});
}

template <class D>
void Machine<D>::clear_kinds(Shadow& s) {
  if (s.kinds < 0) return;
  atomic_kinds_[std::size_t(s.kinds)].clear();
  free_kinds_.push_back(s.kinds);
  s.kinds = -1;
}

// ------------------------------------------------------------ async accesses

// mbarrier.arrive / expect_tx / complete_tx / test_wait / try_wait on the
// cells of a barrier: atomic-like accesses that commute with each other
// (the barrier's state is the same in every order of them), so they never
// race among themselves; against mbarrier.init, mbarrier.inval (plain
// writes, check_write) and plain reads they do, unless ordered.
template <class D>
void Machine<D>::check_mbar(std::uint32_t t, Memory<V>& m, std::size_t c, std::uint32_t pc, const Mbar* published) {
  if (!o_.check_races) return;
  Shadow& s = m.shadow[c];
  for_unordered_writes(s, t, [&](std::uint32_t u, std::uint32_t upc) {
    // The barrier's mbarrier.init, ordered before t by a fence.mbarrier_init
    // and a relaxed cluster barrier (mbar_init_published), and by nothing else.
    if (published && u == published->init_thread && upc == published->init_pc) return;
    race(t, m, c, u, upc, Access::Write, Access::Atomic, pc);
  });
  for_unordered(s.reads, t, [&](std::uint32_t u, std::uint32_t upc) {
    race(t, m, c, u, upc, Access::Read, Access::Atomic, pc);
  });
  add_epoch(s.atomics, t, pc);
}

// An access of cell c by agent a (an asynchronous copy, checked when its
// thread issues it: see machine_async.cpp). It is ordered after what its
// issuing thread had done or synchronized with then; a thread's later
// access is ordered after it only through the agent's clock column (an
// mbarrier phase its complete-tx counted toward, or a bulk wait_group).
// A read of shared memory through the async proxy (a TMA store's or bulk
// copy's source) must also follow a fence.proxy.async of the thread whose
// generic-proxy write it reads (PTX ISA, "Memory Consistency Model",
// "Proxies": accesses to one location through different proxies need a
// proxy fence between them).
template <class D>
void Machine<D>::agent_access(std::uint32_t a, Memory<V>& m, std::size_t c, bool write, bool async_read_of_shared) {
  const Agent& ag = agents_[a - n_];
  const std::uint32_t t = ag.thread, pc = ag.pc;
  const Access kind = write ? Access::AgentWrite : Access::AgentRead;
  touch(m, c, write ? Touch::kWrite : Touch::kRead, t, pc);
  check_pending(t, m, c, kind, pc);
  if (!o_.check_races || m.per_thread) return;
  Shadow& s = m.shadow[c];
  auto is_ordered = [&](std::uint32_t u, std::uint32_t clock) { return u == a || ordered(t, u, clock); };
  auto unfenced = [&](std::uint32_t u, std::uint32_t clock) {
    return async_read_of_shared && u < n_ && !proxy_fenced(t, u, clock);
  };
  auto proxy_race = [&](std::uint32_t u, std::uint32_t upc) {
    try {
      race(t, m, c, u, upc, Access::Write, kind, pc);
    } catch (Stop& st) {
      st.diag.message += ": no fence.proxy.async lies between the generic-proxy write and the copy";
      st.diag.detail =
          "  TMA and the bulk copies read shared memory through the async proxy; a write through the generic\n"
          "  proxy (st.shared) is visible to it only through a fence.proxy.async ordered after the write and\n"
          "  before the copy's issue: the writer's, before the synchronization that orders it with the\n"
          "  issuer, or the issuing thread's own, after it (PTX ISA, Memory Consistency Model, proxies;\n"
          "  CUDA's fence_proxy_async_shared_cta())\n";
      throw;
    }
  };
  auto each_write = [&](auto f) {
    if (s.w_thread != kNone) f(s.w_thread, s.w_clock, s.w_pc);
    if (s.w_more >= 0)
      for (const WriteEpoch& w : write_sets_[std::size_t(s.w_more)]) f(w.thread, w.clock, w.pc);
  };
  each_write([&](std::uint32_t u, std::uint32_t clock, std::uint32_t upc) {
    if (!is_ordered(u, clock)) race(t, m, c, u, upc, Access::Write, kind, pc);
    if (unfenced(u, clock)) proxy_race(u, upc);
  });
  auto each_unordered = [&](const Epochs& e, Access other) {
    if (e.set >= 0) {
      for (const ReadEpoch& x : read_sets_[std::size_t(e.set)])
        if (!is_ordered(x.thread, x.clock)) race(t, m, c, x.thread, x.pc, other, kind, pc);
    } else if (e.thread != kNone && !is_ordered(e.thread, e.clock)) {
      race(t, m, c, e.thread, e.pc, other, kind, pc);
    }
  };
  each_unordered(s.atomics, Access::Atomic);
  if (write) {
    each_unordered(s.reads, Access::Read);
    clear_epochs(s.reads);
    clear_epochs(s.atomics);
    clear_kinds(s);
    if (s.w_more >= 0) {
      write_sets_[std::size_t(s.w_more)].clear();
      free_write_sets_.push_back(s.w_more);
      s.w_more = -1;
    }
    s.w_thread = a;  // the agent's own clock is 0; a thread that acquired it holds 1 in its column
    s.w_clock = 0;
    s.w_pc = pc;
    return;
  }
  Epochs& e = s.reads;
  if (e.set >= 0) {
    set_epoch(read_sets_[std::size_t(e.set)], a, 0, pc);
  } else if (e.thread == kNone || is_ordered(e.thread, e.clock)) {
    e.thread = a;
    e.clock = 0;
    e.pc = pc;
  } else {
    const std::int32_t k = new_read_set();
    std::vector<ReadEpoch>& set = read_sets_[std::size_t(k)];
    set_epoch(set, e.thread, e.clock, e.pc);
    set_epoch(set, a, 0, pc);
    e.set = k;
  }
}

// A copy of a cell's shadow for a cell re-gridding cut from it: the read
// and write sets are the copy's own (each cell's sets change on their own).
template <class D>
Shadow Machine<D>::copy_shadow(const Shadow& s) {
  Shadow x = s;
  for (const auto& [from, to] :
       {std::make_pair(s.reads.set, &x.reads.set), std::make_pair(s.atomics.set, &x.atomics.set)}) {
    if (from < 0) continue;
    *to = new_read_set();
    read_sets_[std::size_t(*to)] = read_sets_[std::size_t(from)];
  }
  if (s.kinds >= 0) {
    std::vector<AtomicEpoch> kinds = atomic_kinds_[std::size_t(s.kinds)];
    if (!free_kinds_.empty()) {
      x.kinds = free_kinds_.back();
      free_kinds_.pop_back();
      atomic_kinds_[std::size_t(x.kinds)] = std::move(kinds);
    } else {
      atomic_kinds_.push_back(std::move(kinds));
      x.kinds = std::int32_t(atomic_kinds_.size() - 1);
    }
  }
  if (s.w_more >= 0) {
    std::vector<WriteEpoch> more = write_sets_[std::size_t(s.w_more)];
    if (!free_write_sets_.empty()) {
      x.w_more = free_write_sets_.back();
      free_write_sets_.pop_back();
      write_sets_[std::size_t(x.w_more)] = std::move(more);
    } else {
      write_sets_.push_back(std::move(more));
      x.w_more = std::int32_t(write_sets_.size() - 1);
    }
  }
  return x;
}

template class Machine<SymbolicDomain>;
template class Machine<ConcreteDomain>;
template class Machine<PayloadDomain>;

}  // namespace tileverify::machine
