// Machine<D>: Hopper's asynchronous world: mbarrier objects (phases,
// arrivals, tx-counts, waits), the agents that perform asynchronous copies
// (the copies themselves: machine_tma.cpp), barrier.cluster and
// fence.proxy.async (what reaches across a cluster's CTAs:
// machine_cluster.cpp). docs/evaluator.md, "Asynchronous operations
// (sm_90)", explains the model; the PTX ISA sections are named where each
// rule is applied.
//
// Timing: an asynchronous copy is performed when it is issued ("eager
// data"), but as the access of an agent of its own (a vector-clock column),
// so that a thread's later access to its bytes is ordered after it only
// through what the ISA says orders it: a wait that observes the completion
// of the mbarrier phase the copy's complete-tx counted toward, or a
// cp.async.bulk.wait_group that retires its group. Any access whose value
// would differ under another completion time is then a race, so performing
// the copy early changes no verdict of a race-free run.
#include "machine.hpp"

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

namespace tileverify::machine {

namespace {

const char* mbar_op_name(const Instr& in) {
  switch (in.op) {
    case Opcode::MbarInit: return "mbarrier.init";
    case Opcode::MbarArrive: return in.mode & MbarArriveFlags::kDrop ? "mbarrier.arrive_drop" : "mbarrier.arrive";
    case Opcode::MbarTx: return in.mode ? "mbarrier.complete_tx" : "mbarrier.expect_tx";
    case Opcode::MbarWait: return in.mode & MbarWaitFlags::kTry ? "mbarrier.try_wait" : "mbarrier.test_wait";
    case Opcode::MbarInval: return "mbarrier.inval";
    default: return nullptr;
  }
}

// The largest arrival count of an mbarrier (PTX ISA, mbarrier: "the valid
// range of the count is [1, 2^20 - 1]").
constexpr std::int64_t kMaxArrivals = (std::int64_t(1) << 20) - 1;
// Async copies in one run: each is a vector-clock column of every thread.
constexpr std::size_t kMaxAgents = 1 << 15;

}  // namespace

// ------------------------------------------------------------ dispatch

template <class D>
bool Machine<D>::async_step(std::uint32_t t, const Instr& in) {
  if (async_noted_.empty()) async_noted_.assign(p_.code.size(), 0);
  const std::uint32_t pc = pc_[t];
  switch (in.op) {
    case Opcode::MbarInit: {
      Mbar& b = mbar_of(t, in.src[0], true);
      const std::int64_t count = control_int(t, operand(t, in.src[1]), "an mbarrier's arrival count");
      if (count < 1)
        mbar_overshoot(t, b, "mbarrier.init with count " + std::to_string(count) +
                                 ": the PTX ISA (mbarrier) allows 1 to 2^20 - 1, and a barrier initialised for 0 "
                                 "arrivals faults at its first arrive");
      if (count > kMaxArrivals)
        fail(DiagKind::Unsupported, t,
             "mbarrier.init with count " + std::to_string(count) + ": the PTX ISA (mbarrier) allows 1 to 2^20 - 1");
      mbar_access(t, b, true);
      b.valid = true;
      b.invalidated = false;
      b.expected = b.pending = std::uint32_t(count);
      b.tx = b.tx_expected = b.tx_done = 0;
      b.phase = 0;
      b.init_thread = t;
      b.init_pc = pc;
      b.clock.clear();
      b.done.clear();
      b.arrived.assign(n_, -1);
      b.groups.clear();
      b.marks.clear();
      b.expects.clear();
      b.init_clock = o_.check_races ? vc_[std::size_t(t) * w_ + t] : 0;
      return true;
    }
    case Opcode::MbarArrive: {
      Mbar& b = mbar_of(t, in.src[0], false);
      const std::uint32_t bar = mbar_at_[{b.buf, b.byte}];
      const std::int64_t count = control_int(t, operand(t, in.src[1]), "an mbarrier arrival count");
      const std::int64_t tx = control_int(t, operand(t, in.src[2]), "an mbarrier tx count");
      mbar_access(t, b, false);
      if (!b.async_arrivals.empty()) check_async_arrivals(t, b);  // machine_retry.cpp
      if (count < 1 || count > kMaxArrivals)
        fail(DiagKind::Unsupported, t, "an arrive with count " + std::to_string(count) + " (the PTX ISA allows 1 to 2^20 - 1)");
      if (std::uint64_t(count) > b.pending)
        mbar_overshoot(t, b,
                       std::string(mbar_op_name(in)) + " of " + std::to_string(count) + " on " + mbar_name(b) +
                           ", whose phase " + std::to_string(b.phase) + " has only " + std::to_string(b.pending) +
                           " arrivals pending");
      arrive_group(t, b, count);
      if (!in.dst.empty()) set(t, in.dst[0], int_val(std::int64_t(b.phase)));  // the state: the phase arrived in
      // Its epoch is the clock before the release's tick, so that a thread
      // that acquires the release is ordered after the arrive itself.
      const std::uint64_t before = b.phase;
      const std::uint32_t clock = o_.check_races ? vc_[std::size_t(t) * w_ + t] : 0;
      if (tx > 0) mbar_expect(t, b, pc);
      b.tx += tx;  // .expect_tx: the expect-tx operation comes first
      b.tx_expected += tx;
      b.pending -= std::uint32_t(count);
      if (in.mode & MbarArriveFlags::kDrop) b.expected -= std::uint32_t(std::min<std::int64_t>(count, b.expected));
      b.arrived[t] = std::int64_t(b.phase);
      if (!(in.mode & MbarArriveFlags::kRelaxed)) mbar_release(t, b);
      if (b.pending == 0 && b.tx == 0) {
        if (in.mode & MbarArriveFlags::kNoComplete)
          fail(DiagKind::Unsupported, t,
               "mbarrier.arrive.noComplete completed the phase of " + mbar_name(b) +
                   ", which the PTX ISA (mbarrier.arrive) leaves undefined");
        mbar_complete(b, bar);
      }
      mbar_mark(t, clock, b, before, pc);
      return true;
    }
    case Opcode::MbarTx: {
      Mbar& b = mbar_of(t, in.src[0], false);
      const std::uint32_t bar = mbar_at_[{b.buf, b.byte}];
      const std::int64_t tx = control_int(t, operand(t, in.src[1]), "an mbarrier tx count");
      mbar_access(t, b, false);
      const std::uint64_t before = b.phase;
      if (in.mode == 0) {  // expect-tx: more bytes to come this phase
        if (tx > 0) mbar_expect(t, b, pc);
        b.tx += tx;
        b.tx_expected += tx;
      } else {  // complete-tx by the thread itself: .relaxed, no release (PTX ISA, mbarrier.complete_tx)
        b.tx -= tx;
        b.tx_done += tx;
        if (b.pending == 0 && b.tx == 0) mbar_complete(b, bar);
      }
      mbar_mark(t, o_.check_races ? vc_[std::size_t(t) * w_ + t] : 0, b, before, pc);
      return true;
    }
    case Opcode::MbarWait: return mbar_wait(t, in);
    case Opcode::MbarInval: {
      Mbar& b = mbar_of(t, in.src[0], false);
      mbar_access(t, b, true);
      b.valid = false;
      b.invalidated = true;
      return true;
    }
    case Opcode::TmaLoad:
    case Opcode::TmaStore: tma(t, in); return true;
    case Opcode::BulkCopy: bulk_copy(t, in); return true;
    case Opcode::BulkCommit: {
      if (bulk_groups_.empty()) bulk_groups_.assign(n_, BulkGroups{});
      BulkGroups& g = bulk_groups_[t];
      g.committed.push_back(std::move(g.open));
      g.open.clear();
      return true;
    }
    case Opcode::BulkWait: bulk_wait(t, in); return true;
    case Opcode::ClusterBar: {
      bool waits = false;
      cluster_bar(t, in, &waits);
      return !waits;
    }
    case Opcode::Mapa: mapa(t, in); return true;
    // libcu++'s forms (machine_retry.cpp).
    case Opcode::CpAsyncMbarArrive: cp_async_mbar_arrive(t, in); return true;
    case Opcode::Timer: timer_read(t, in); return true;
    case Opcode::Nanosleep: return true;  // when the thread runs, not what it computes
    default: break;
  }
  fail(DiagKind::Unsupported, t, std::string(opcode_name(in.op)) + " is not modelled");
}

// ------------------------------------------------------------ mbarrier

// The barrier at address operand o (8 bytes, 8-aligned, in shared memory):
// made by mbarrier.init (init), otherwise it must be initialized and not
// invalidated (PTX ISA, mbarrier: an operation other than init on an
// uninitialized or invalidated object is undefined).
template <class D>
auto Machine<D>::mbar_at(std::uint32_t t, const Addr& a, bool init) -> Mbar& {
  Memory<V>& m = mem_[a.buf];
  if (m.space != Space::Shared || m.per_thread)
    fail(DiagKind::Unsupported, t, "an mbarrier in '" + m.name + "', which is not shared memory (mbarrier objects are .shared)");
  cell(t, a, 0, 8, init);  // bounds and 8-byte alignment; an untyped array takes 8-byte cells
  auto it = mbar_at_.find({a.buf, a.offset});
  if (it == mbar_at_.end()) {
    if (!init)
      fail(DiagKind::Uninitialized, t,
           "'" + p_.instr_text(pc_[t]) + "' on " + m.name + " at byte " + std::to_string(a.offset) +
               ", which holds no initialized mbarrier: the PTX ISA (mbarrier) leaves any operation but mbarrier.init "
               "on it undefined");
    it = mbar_at_.emplace(std::make_pair(a.buf, a.offset), std::uint32_t(mbars_.size())).first;
    Mbar b;
    b.buf = a.buf;
    b.byte = a.offset;
    mbars_.push_back(b);
  }
  Mbar& b = mbars_[it->second];
  if (init && b.valid)
    fail(DiagKind::Unsupported, t,
         "mbarrier.init on " + mbar_name(b) + ", which holds a valid mbarrier (initialized at " +
             p_.code[b.init_pc].loc.with_source() + "): invalidate it first (mbarrier.inval)");
  if (!init && !b.valid)
    fail(DiagKind::Uninitialized, t,
         std::string(mbar_op_name(p_.code[pc_[t]]) ? mbar_op_name(p_.code[pc_[t]]) : "an mbarrier operation") + " on " +
             mbar_name(b) + ", which was invalidated (mbarrier.inval): the PTX ISA (mbarrier) leaves it undefined");
  return b;
}

// "full_bar[2]": an array the PTX declares of 8-byte elements (.b64), and
// the barrier's index in it. Elsewhere (nvcc declares every __shared__
// array as bytes, .b8; a kernel's one shared array of tiles and barriers)
// the byte offset, as reports name memory: "sm+32768". An index in units of
// the buffer's first access would count in a unit that varies by kernel.
template <class D>
std::string Machine<D>::mbar_name(const Mbar& b) const {
  const Memory<V>& m = mem_[b.buf];
  if (dtype_bytes(m.dtype) == 8) return m.name + "[" + std::to_string(b.byte / 8) + "]";
  return m.name + "+" + std::to_string(b.byte);
}

// The race check of an mbarrier instruction on the barrier's cells: init
// and inval are plain writes (and mark or unmark the bytes as a barrier in
// use, which plain accesses may not touch: special_cell), the others
// atomic-like accesses that commute with each other (check_mbar).
template <class D>
void Machine<D>::mbar_access(std::uint32_t t, const Mbar& b, bool init_or_inval) {
  Memory<V>& m = mem_[b.buf];
  const std::size_t c = std::size_t(b.byte) >> m.gshift, k = std::max<std::size_t>(1, 8 >> m.gshift);
  const std::uint32_t pc = pc_[t];
  if (m.pending.size() != m.cells.size()) m.pending.assign(m.cells.size(), 0);
  for (std::size_t j = 0; j < k; ++j) {
    if (init_or_inval) {
      if (m.pending[c + j] == kMbarCell) m.pending[c + j] = 0;  // inval: the bytes are plain memory again
      check_write(t, m, c + j, pc, Access::Write);
      m.cells[c + j] = make_cell(int_val(0), make_tag(pc));
      if (p_.code[pc].op == Opcode::MbarInit) m.pending[c + j] = kMbarCell;
    } else {
      check_mbar(t, m, c + j, pc, mbar_init_published(t, b) ? &b : nullptr);
    }
  }
}

// An arrive with .release (the default): the thread's accesses before it
// are ordered before what any thread does after a wait that observes this
// phase's completion (PTX ISA, mbarrier.test_wait / try_wait: "all memory
// accesses requested prior, in program order, to mbarrier.arrive having
// release semantics during the completed phase ... are performed and are
// visible to the executing thread").
template <class D>
void Machine<D>::mbar_release(std::uint32_t t, Mbar& b) {
  if (!o_.check_races) return;
  ++vc_[std::size_t(t) * w_ + t];
  if (b.clock.size() < w_) b.clock.resize(w_, 0);
  const std::uint32_t* row = &vc_[std::size_t(t) * w_];
  for (std::uint32_t k = 0; k < w_; ++k) b.clock[k] = std::max(b.clock[k], row[k]);
}

// The phase completes: pending arrivals and the tx-count are zero (PTX ISA,
// mbarrier, "Phase Completion": the current phase is incremented, the
// pending count is reset to the expected count, the tx-count to zero).
// Threads blocked in a retry loop whose wait this completion satisfies
// move on now, with the phase's clock.
// Thread t's expect-tx on b, in its current phase (it replaces the
// thread's earlier one).
template <class D>
void Machine<D>::mbar_expect(std::uint32_t t, Mbar& b, std::uint32_t pc) {
  for (MbarExpect& x : b.expects)
    if (x.thread == t) {
      if (x.phase != b.phase || x.spent) x = MbarExpect{t, pc, b.phase, 0, false};
      x.pc = pc;
      return;
    }
  b.expects.push_back(MbarExpect{t, pc, b.phase, 0, false});
}

// A copy whose complete-tx lands in a later phase than its thread's last
// expect-tx announced bytes for: that phase completed with the bytes of the
// thread's earlier copies, so these are more than it announced, and they
// lower the current phase's tx-count. The PTX ISA requires the tx-count to
// be set to the total of the phase's asynchronous operations, decrements
// the current phase's tx-count at each complete-tx, and at a phase
// transition reinitializes the pending arrival count only (mbarrier:
// "Tracking asynchronous operations by the mbarrier object", "Phase
// Completion of the mbarrier object"): a later phase then completes early,
// or its tx-count never returns to zero and its waiters hang, as an H200
// does on examples/hopper's tx_too_small. The race this causes is reported
// where it is found (with this text, async_race_detail); the note says it
// once, whether or not a race follows.
template <class D>
void Machine<D>::mbar_excess(std::uint32_t a, Mbar& b, const MbarExpect& e, std::int64_t bytes) {
  Agent& ag = agents_[a - n_];
  ag.excess = "  its " + std::to_string(bytes) + " bytes count against phase " + std::to_string(b.phase) + " of " +
              mbar_name(b) + " (tx-count " + std::to_string(b.tx - bytes) + "), not phase " + std::to_string(e.phase) +
              ":\n  thread " + tname(e.thread) + "'s expect-tx at " + p_.code[e.pc].loc.with_source() + " announced " +
              std::to_string(e.phase_bytes) + " bytes for phase " + std::to_string(e.phase) +
              ",\n  which completed when the thread's earlier copies delivered them. The PTX ISA (mbarrier: tx-count,\n"
              "  Phase Completion) subtracts a complete-tx from the current phase's tx-count and resets only the\n"
              "  pending arrivals at a phase transition: the excess bytes count against the next phase, so a GPU\n"
              "  may complete a later phase before its copies land, or never (an H200 hangs on such a kernel)\n";
  if (tx_excess_noted_) return;
  tx_excess_noted_ = true;
  Diagnostic d;
  d.kind = DiagKind::Undefined;
  d.warning = true;
  d.loc = p_.code[ag.pc].loc;
  d.threads = {ag.thread};
  d.message = "more bytes than announced: a copy of thread " + tname(ag.thread) + " counts " + std::to_string(bytes) +
              " bytes against phase " + std::to_string(b.phase) + " of " + mbar_name(b) + ", after its expect-tx for phase " +
              std::to_string(e.phase) + " (" + std::to_string(e.phase_bytes) + " bytes) was met: a GPU may hang";
  d.detail = "  the copy: " + p_.code[ag.pc].loc.with_source() + ": " + p_.instr_text(ag.pc) + "\n  the expect-tx: " +
             p_.code[e.pc].loc.with_source() + ": " + p_.instr_text(e.pc) + "\n" + ag.excess;
  notes_.push_back(std::move(d));
}

template <class D>
void Machine<D>::mbar_complete(Mbar& b, std::uint32_t bar) {
  b.done = std::move(b.clock);
  b.clock.clear();
  ++b.phase;
  prune_arrive_groups(b);
  b.pending = b.expected;
  b.tx = b.tx_expected = b.tx_done = 0;
  std::vector<std::uint32_t> still;
  const std::vector<std::uint32_t> waiters = std::move(mbars_[bar].waiters);
  for (std::uint32_t u : waiters) {
    const Instr& in = p_.code[pc_[u]];
    std::uint64_t want = 0;
    Mbar& bb = mbars_[bar];
    if (!mbar_ready(u, in, bb, &want)) {
      still.push_back(u);
      continue;
    }
    if ((in.mode & MbarWaitFlags::kParity) && retry_wait(pc_[u])) check_parity_wait(u, in, bb);  // before it acquires
    if (!(in.mode & MbarWaitFlags::kRelaxed)) mbar_acquire(u, bb);
    mbar_mark(u, o_.check_races ? vc_[std::size_t(u) * w_ + u] : 0, bb, bb.phase, pc_[u]);
    set(u, in.dst[0], int_val(1));
    retry_resume(u, pc_[u]);
    ++pc_[u];
    state_[u] = TState::Run;
  }
  mbars_[bar].waiters = std::move(still);
}

// An agent's complete-tx (its copy's bytes arrived): the copy's writes are
// released into the phase (only the agent's column: the issuing thread's
// own accesses are released by its arrive, not by the copy).
template <class D>
void Machine<D>::mbar_complete_tx(std::uint32_t a, Mbar& b, std::uint32_t bar, std::int64_t bytes) {
  const std::uint64_t before = b.phase;
  MbarExpect* e = nullptr;  // the issuing thread's latest expect-tx on b
  for (MbarExpect& x : b.expects)
    if (x.thread == agents_[a - n_].thread) e = &x;
  if (e && e->spent && b.phase > e->phase) mbar_excess(a, b, *e, bytes);
  b.tx -= bytes;
  b.tx_done += bytes;
  if (o_.check_races) {
    if (b.clock.size() <= a) b.clock.resize(w_, 0);
    b.clock[a] = std::max<std::uint32_t>(b.clock[a], 1);
  }
  if (b.pending == 0 && b.tx == 0) {
    if (e && e->phase == b.phase) {
      e->spent = true;  // the thread's own copies completed the phase it announced bytes for
      e->phase_bytes = b.tx_expected;
    }
    mbar_complete(b, bar);
  }
  if (o_.check_races) mbar_mark(a, 0, b, before, agents_[a - n_].pc);  // an agent's only access epoch is 0
}

// Whether the wait `in` of thread t is satisfied now: .parity P: the phase
// with parity P has completed, that is the current phase's parity is not
// P (a fresh barrier is in phase 0, so parity 1 means the phase before it,
// which counts as complete: producers start so). A state token: the phase
// it arrived in is over. *want: the phase waited for.
template <class D>
bool Machine<D>::mbar_ready(std::uint32_t t, const Instr& in, const Mbar& b, std::uint64_t* want) {
  const std::int64_t x = control_int(t, operand(t, in.src[1]), "an mbarrier wait's phase parity or state");
  if (in.mode & MbarWaitFlags::kParity) {
    if ((x != 0 && x != 1) && !(async_noted_[pc_[t]] & 1)) {  // 2: machine_mbarrier_phases.cpp's note
      async_noted_[pc_[t]] |= 1;
      Diagnostic d;
      d.kind = DiagKind::Undefined;
      d.warning = true;
      d.loc = in.loc;
      d.threads = {t};
      d.message = "mbarrier wait with phase parity " + std::to_string(x) +
                  ": the PTX ISA (mbarrier.test_wait / try_wait) says the valid values of phaseParity are 0 and 1; "
                  "GPUs use its bit 0, and so does this run (a phase counter passed without % 2?)";
      d.detail = "  instruction: " + p_.instr_text(pc_[t]) + "\n";
      notes_.push_back(std::move(d));
    }
    const std::uint64_t parity = std::uint64_t(x) & 1;
    *want = (b.phase & 1) == parity ? b.phase : b.phase - 1;
    return (b.phase & 1) != parity;
  }
  if (x < 0 || std::uint64_t(x) > b.phase)
    fail(DiagKind::Unsupported, t,
         "an mbarrier wait on " + mbar_name(b) + " with a state that no arrive on it returned (" + std::to_string(x) + ")");
  *want = std::uint64_t(x);
  if (std::uint64_t(x) + 1 < b.phase)
    fail(DiagKind::Unsupported, t,
         "an mbarrier wait on " + mbar_name(b) + " for phase " + std::to_string(x) + ", which is " +
             std::to_string(b.phase - std::uint64_t(x)) +
             " phases back: the PTX ISA (mbarrier.test_wait / try_wait) makes a wait valid only for the current "
             "phase or the immediately preceding one");
  return b.phase > std::uint64_t(x);
}

// A wait that returns true with .acquire (the default) joins the clock of
// the completed phase (PTX ISA, mbarrier.test_wait / try_wait).
template <class D>
void Machine<D>::mbar_acquire(std::uint32_t t, const Mbar& b) {
  if (!o_.check_races) return;
  std::uint32_t* row = &vc_[std::size_t(t) * w_];
  const std::size_t k = std::min<std::size_t>(b.done.size(), w_);
  for (std::size_t i = 0; i < k; ++i) row[i] = std::max(row[i], b.done[i]);
  sync_acquire(t, b.done.data(), k);
}

// test_wait / try_wait. In a retry loop (retry_wait) the thread blocks until
// the phase completes and then gets true: one schedule suffices, as the
// loop only waits. Elsewhere its result depends on timing: it carries the
// schedule mark (Val::sched), so a branch, address or output that depends
// on it is reported (schedule_dependent), unless the wait succeeds in every
// schedule: the thread is already ordered after everything that completed
// the phase.
template <class D>
bool Machine<D>::mbar_wait(std::uint32_t t, const Instr& in) {
  Mbar& b = mbar_of(t, in.src[0], false);
  mbar_access(t, b, false);
  const std::uint32_t pc = pc_[t];
  std::uint64_t want = 0;
  const bool ready = mbar_ready(t, in, b, &want);
  const bool retry = retry_wait(pc);
  if (retry && (in.mode & MbarWaitFlags::kParity)) check_parity_wait(t, in, b);  // machine_mbarrier_phases.cpp
  if (ready) {
    bool certain = retry;
    if (!certain && o_.check_races) {
      certain = true;
      const std::uint32_t* row = &vc_[std::size_t(t) * w_];
      for (std::size_t i = 0; i < b.done.size() && certain; ++i) certain = i == t || b.done[i] <= row[i];
    }
    if (!(in.mode & MbarWaitFlags::kRelaxed)) mbar_acquire(t, b);
    mbar_mark(t, o_.check_races ? vc_[std::size_t(t) * w_ + t] : 0, b, b.phase, pc);
    Val<V> v = int_val(1);
    if (!certain) {
      v.sched = pc + 1;
      sched_marks_ = true;
    }
    set(t, in.dst[0], v);
    return true;
  }
  if (retry) {
    b.waiters.push_back(t);
    state_[t] = TState::Wait;
    return false;
  }
  Val<V> v = int_val(0);
  v.sched = pc + 1;
  sched_marks_ = true;
  set(t, in.dst[0], v);
  return true;
}

template <class D>
std::uint32_t Machine<D>::mbar_waiting_on(std::uint32_t t) const {
  for (std::uint32_t i = 0; i < mbars_.size(); ++i)
    for (std::uint32_t u : mbars_[i].waiters)
      if (u == t) return i;
  return kNone;
}

template <class D>
bool Machine<D>::any_running() const {
  for (std::uint32_t t = 0; t < n_; ++t)
    if (state_[t] == TState::Run) return true;
  return false;
}

// ------------------------------------------------------------ agents

// A new agent for a copy thread t issues now: a fresh clock column (the
// clocks widen in steps, so most copies add none).
template <class D>
std::uint32_t Machine<D>::new_agent(std::uint32_t t, bool write) {
  if (agents_.size() >= kMaxAgents)
    fail(DiagKind::Limit, t,
         "more than " + std::to_string(kMaxAgents) + " asynchronous copies (TMA, bulk) in one CTA: tileverify gives each "
         "its own vector-clock column, and this run would need more");
  if (n_ + agents_.size() >= w_) {
    const std::uint32_t w = std::uint32_t(n_ + std::max<std::size_t>(64, 2 * agents_.size()));
    reserve("the vector clocks of asynchronous copies", std::uint64_t(n_) * (w - w_), sizeof(std::uint32_t));
    std::vector<std::uint32_t> vc(std::size_t(n_) * w, 0);
    for (std::uint32_t u = 0; u < n_; ++u)
      std::copy(vc_.begin() + std::ptrdiff_t(std::size_t(u) * w_), vc_.begin() + std::ptrdiff_t(std::size_t(u) * w_ + w_),
                vc.begin() + std::ptrdiff_t(std::size_t(u) * w));
    vc_.swap(vc);
    w_ = w;
  }
  agents_.push_back(Agent{t, pc_[t], write, std::string()});
  return n_ + std::uint32_t(agents_.size() - 1);
}

// fence.proxy.async: t's generic-proxy accesses so far are ordered before
// the async proxy's later ones (machine_races.cpp, agent_access).
template <class D>
void Machine<D>::async_proxy_fence(std::uint32_t t) {
  if (!o_.check_races) return;
  if (async_proxy_fence_.empty()) {
    reserve("the proxy fences' clocks", std::uint64_t(n_) * n_, sizeof(std::uint32_t));
    async_proxy_fence_.assign(n_, 0);
    proxy_fence_seen_.assign(std::size_t(n_) * n_, 0);
  }
  std::uint32_t& own = vc_[std::size_t(t) * w_ + t];
  ++own;  // writes before the fence have a smaller clock than accesses after it
  async_proxy_fence_[t] = own;
  std::copy(vc_.begin() + std::ptrdiff_t(std::size_t(t) * w_), vc_.begin() + std::ptrdiff_t(std::size_t(t) * w_ + n_),
            proxy_fence_seen_.begin() + std::ptrdiff_t(std::size_t(t) * n_));
}

// Whether thread u's generic-proxy write at clock `clock` is visible to an
// async-proxy access that thread t issues now: some thread v's last
// fence.proxy.async came after the write (in v's program order when v is
// the writer, else ordered after it by a synchronization) and before now
// (v is t, or t is ordered after v's fence). Only each thread's last fence
// is kept, so a write covered by an earlier fence of a thread that fenced
// again since may be reported: a race in doubt, never a race missed.
template <class D>
bool Machine<D>::proxy_fenced(std::uint32_t t, std::uint32_t u, std::uint32_t clock) const {
  if (async_proxy_fence_.empty()) return false;
  for (std::uint32_t v = 0; v < n_; ++v) {
    const std::uint32_t f = async_proxy_fence_[v];
    if (f == 0) continue;
    const bool after_write = v == u ? clock < f : proxy_fence_seen_[std::size_t(v) * n_ + u] > clock;
    if (after_write && (v == t || ordered(t, v, f))) return true;
  }
  return false;
}

template <class D>
std::string Machine<D>::async_access_name(Access k, std::uint32_t pc) const {
  const Instr& in = p_.code[pc];
  if (k == Access::AgentRead || k == Access::AgentWrite) {
    const char* who = in.op == Opcode::TmaLoad || in.op == Opcode::TmaStore ? "TMA"
                      : in.op == Opcode::BulkCopy                             ? "bulk copy"
                      : in.op == Opcode::CpAsyncMbarArrive                    ? "cp.async (mbarrier-tracked)"
                                                                              : "async";
    return std::string(who) + (k == Access::AgentRead ? " read" : " write");
  }
  if (const char* m = mbar_op_name(in)) return m;
  return access_name(k);
}

template <class D>
std::string Machine<D>::async_race_detail(Access a, std::uint32_t apc, Access b, std::uint32_t bpc,
                                          std::uint32_t agent) const {
  // The copy's text on bytes beyond its thread's expect-tx (mbar_excess):
  // the agent the race names, or for the access being made, the copy just
  // issued at pc (the latest agent there).
  auto excess_of = [&](std::uint32_t pc) {
    if (agent < agents_.size() && agents_[agent].pc == pc) return agents_[agent].excess;
    for (std::size_t i = agents_.size(); i-- > 0;)
      if (agents_[i].pc == pc) return agents_[i].excess;
    return std::string();
  };
  std::string s;
  for (auto [k, pc] : {std::make_pair(a, apc), std::make_pair(b, bpc)}) {
    const Instr& in = p_.code[pc];
    if (k == Access::AgentWrite && in.op == Opcode::CpAsyncMbarArrive)
      s += "  the cp.async copies the barrier tracks since " + in.loc.with_source() +
           " (cp.async.mbarrier.arrive) write shared memory\n"
           "  asynchronously; an access is ordered after them only by a wait that observes the completion of the\n"
           "  phase their arrive-on counts toward (PTX ISA, cp.async.mbarrier.arrive; cp.async, mbarrier-based completion)\n";
    else if (k == Access::AgentWrite && (in.op == Opcode::TmaLoad || (in.op == Opcode::BulkCopy && in.space == Space::Shared)))
      s += "  the copy at " + in.loc.with_source() +
           " writes shared memory asynchronously; an access is ordered after it only by a wait\n"
           "  that observes the completion of the mbarrier phase its complete-tx counts toward (PTX ISA,\n"
           "  mbarrier.test_wait / try_wait: cp.async.bulk operations using the mbarrier are then performed and visible)\n" +
           excess_of(pc);
    else if (k == Access::AgentWrite)
      s += "  the copy at " + in.loc.with_source() +
           " writes global memory asynchronously; its thread's cp.async.bulk.wait_group orders\n"
           "  it (PTX ISA, cp.async.bulk.wait_group)\n";
    else if (k == Access::AgentRead && in.op != Opcode::TmaLoad && !(in.op == Opcode::BulkCopy && in.space == Space::Shared))
      s += "  the copy at " + in.loc.with_source() +
           " reads shared memory asynchronously until its thread's cp.async.bulk.wait_group.read\n"
           "  (or wait_group) retires its group; a write to the source before that races with it\n";
    else if (k == Access::AgentWrite || k == Access::AgentRead)
      s += "  the copy at " + in.loc.with_source() + " reads global memory when it runs\n";
  }
  return s;
}

// A plain access to the bytes of an mbarrier in use or of a tensor map.
template <class D>
void Machine<D>::special_cell(std::uint32_t t, Memory<V>& m, std::size_t c, Access kind, std::uint32_t pc) {
  const std::uint64_t byte = m.byte_of(c);
  // A map parameter's or struct field's bytes are .param memory; a global
  // buffer of maps (`const CUtensorMap*`) holds map k at byte 128 k.
  if (m.pending[c] == kMapCell)
    fail(DiagKind::Unsupported, t,
         "a " + async_access_name(kind, pc) + " of the bytes of the tensor map '" + m.name +
             (m.space == Space::Global ? "[" + std::to_string(byte / 128) + "]' (byte " + std::to_string(byte) +
                                             " of the maps the kernel's `const CUtensorMap*` points to)"
                                       : "'") +
             ": tileverify models a tensor map as what TMA reads through it, not as its 128-byte encoding");
  std::string name = m.name + " at byte " + std::to_string(byte);
  for (const Mbar& b : mbars_)
    if (b.buf != kNone && &mem_[b.buf] == &m && std::uint64_t(b.byte) <= byte && byte < std::uint64_t(b.byte) + 8)
      name = mbar_name(b);
  fail(DiagKind::Unsupported, t,
       "a " + async_access_name(kind, pc) + " of the bytes of the mbarrier " + name +
           " while it is in use: the PTX ISA (mbarrier) allows only mbarrier instructions on an initialized mbarrier "
           "object, until mbarrier.inval");
}

// ------------------------------------------------------------ barrier.cluster

// barrier.cluster.arrive / wait: a split barrier over the threads of the
// run, every CTA of the cluster (PTX ISA, barrier.cluster: wait blocks until all
// non-exited threads of the cluster have arrived; arrive has .release and
// wait .acquire semantics by default). A thread's k-th wait completes once
// every non-exited thread has arrived k + 1 times.
template <class D>
void Machine<D>::cluster_bar(std::uint32_t t, const Instr& in, bool* waits) {
  if (cluster_arrived_.empty()) {
    cluster_arrived_.assign(n_, 0);
    cluster_waited_.assign(n_, 0);
  }
  if (in.mode != 1) {
    const std::uint64_t k = cluster_arrived_[t]++;
    if (k > cluster_waited_[t])
      fail(DiagKind::Unsupported, t,
           "barrier.cluster.arrive twice without a barrier.cluster.wait between: the PTX ISA (barrier.cluster) leaves it undefined");
    if (in.mode == 0 && o_.check_races) {
      ++vc_[std::size_t(t) * w_ + t];
      std::vector<std::uint32_t>& c = cluster_clock_[k];
      if (c.size() < w_) c.resize(w_, 0);
      const std::uint32_t* row = &vc_[std::size_t(t) * w_];
      for (std::uint32_t i = 0; i < w_; ++i) c[i] = std::max(c[i], row[i]);
    }
    if (in.mode == 2) mbar_init_publish(t, k);
    return;
  }
  if (cluster_arrived_[t] <= cluster_waited_[t])
    fail(DiagKind::Unsupported, t, "barrier.cluster.wait without a barrier.cluster.arrive before it (PTX ISA, barrier.cluster)");
  state_[t] = TState::Wait;
  *waits = !release_cluster_wait(t);
}

template <class D>
bool Machine<D>::release_cluster_wait(std::uint32_t t) {
  const std::uint64_t k = cluster_waited_[t];
  for (std::uint32_t u = 0; u < n_; ++u)
    if (state_[u] != TState::Done && cluster_arrived_[u] <= k) return false;
  ++cluster_waited_[t];
  if (o_.check_races) {
    auto it = cluster_clock_.find(k);
    if (it != cluster_clock_.end()) {
      std::uint32_t* row = &vc_[std::size_t(t) * w_];
      for (std::size_t i = 0; i < it->second.size() && i < w_; ++i) row[i] = std::max(row[i], it->second[i]);
      sync_acquire(t, it->second.data(), std::min<std::size_t>(it->second.size(), w_));
    }
    mbar_init_observe(t, k);
  }
  if (state_[t] == TState::Wait) {
    state_[t] = TState::Run;
    ++pc_[t];
  }
  return true;
}

// ------------------------------------------------------------ deadlocks

// The report's lines for the threads blocked at pc on mbarrier `bar` (or at
// barrier.cluster.wait: bar kNone), and the threads that could still let
// them go (the wait-for graph's edges).
template <class D>
std::string Machine<D>::async_wait_text(std::uint32_t pc, std::uint32_t bar, const std::vector<std::uint32_t>& threads,
                                        std::vector<std::uint32_t>* needs, std::string* summary) {
  std::ostringstream os;
  const std::string at = p_.code[pc].loc.with_source() + " (" + p_.instr_text(pc) + ")";
  auto list = [&](const std::vector<std::uint32_t>& ts) {
    if (names_.per_cta != 0) return names_.list(ts);  // a cluster: by CTA
    std::string s;
    // Runs of consecutive threads, as the other lines of the report name them.
    for (std::size_t i = 0; i < ts.size();) {
      std::size_t j = i;
      while (j + 1 < ts.size() && ts[j + 1] == ts[j] + 1) ++j;
      s += (i ? ", " : "") + std::to_string(ts[i]) + (j > i ? "-" + std::to_string(ts[j]) : "");
      i = j + 1;
    }
    return s;
  };
  const std::string who = (threads.size() == 1 ? "thread " : "threads ") + list(threads);
  if (bar == kNone && (p_.code[pc].op != Opcode::ClusterBar || cluster_waited_.empty())) {
    os << "  " << who << " wait at " << at << "\n";  // not a wait this file knows (no barrier found)
    *summary = who + " wait at " + p_.instr_text(pc);
    return os.str();
  }
  if (bar == kNone) {
    const std::uint64_t k = cluster_waited_[threads[0]];
    for (std::uint32_t u = 0; u < n_; ++u)
      if (state_[u] != TState::Done && cluster_arrived_[u] <= k) needs->push_back(u);
    os << "  " << who << " wait at " << at << " for threads " << list(*needs) << " to execute barrier.cluster.arrive\n";
    *summary = who + " wait at barrier.cluster.wait";
    return os.str();
  }
  const Mbar& b = mbars_[bar];
  const Instr& in = p_.code[pc];
  std::string awaited;
  if (in.mode & MbarWaitFlags::kParity)
    awaited = "phase " + std::to_string(b.phase) + " (parity " + std::to_string(b.phase & 1) + ")";
  else
    awaited = "phase " + std::to_string(b.phase);
  std::vector<std::uint32_t> exited, earlier, current;
  bool anyone = false;
  for (std::uint32_t u = 0; u < n_; ++u) {
    if (b.arrived.empty() || b.arrived[u] < 0) continue;
    anyone = true;
    if (std::uint64_t(b.arrived[u]) >= b.phase) {
      current.push_back(u);
      continue;
    }
    if (state_[u] == TState::Done)
      exited.push_back(u);
    else
      earlier.push_back(u);
  }
  if (!earlier.empty()) {
    *needs = earlier;
  } else {  // no thread has a record of arriving here: any other one might
    for (std::uint32_t u = 0; u < n_; ++u)
      if (state_[u] != TState::Done && std::find(threads.begin(), threads.end(), u) == threads.end() &&
          std::find(current.begin(), current.end(), u) == current.end())
        needs->push_back(u);
  }
  os << "  " << who << " wait at " << at << " for " << mbar_name(b) << " to complete " << awaited
     << "; the barrier is in phase " << b.phase << " with " << b.pending << " of " << b.expected << " arrivals pending";
  if (b.tx != 0 || b.tx_expected != 0)
    os << " and a tx-count of " << b.tx << " (" << b.tx_expected << " bytes expected this phase, " << b.tx_done
       << " arrived)";
  os << "\n";
  auto some = [&](const std::vector<std::uint32_t>& ts) { return (ts.size() == 1 ? "thread " : "threads ") + list(ts); };
  if (!exited.empty()) os << "    " << some(exited) << " arrived at it in earlier phases and " << (exited.size() == 1 ? "has" : "have") << " exited\n";
  if (!current.empty())
    os << "    " << some(current) << " arrived in this phase; " << b.pending << " more arrival"
       << (b.pending == 1 ? " is" : "s are") << " needed\n";
  if (!earlier.empty()) os << "    " << some(earlier) << " arrived at it in earlier phases and could arrive again\n";
  if (b.pending == 0 && b.tx > 0)
    os << "    every arrival is in, but " << b.tx << " bytes expected by expect_tx never arrived (no copy completes them)\n";
  if (!anyone && b.pending > 0) os << "    no thread has arrived at it yet\n";
  *summary = who + " wait for " + mbar_name(b) + " to complete " + awaited;
  return os.str();
}

template class Machine<SymbolicDomain>;
template class Machine<ConcreteDomain>;
template class Machine<PayloadDomain>;

}  // namespace tileverify::machine
