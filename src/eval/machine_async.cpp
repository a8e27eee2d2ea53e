// Machine<D>: Hopper's asynchronous world: mbarrier objects (phases,
// arrivals, tx-counts, waits), TMA and bulk copies (cp.async.bulk{.tensor},
// multicast to the CTAs of a cluster), their bulk async-groups,
// barrier.cluster and fence.proxy.async (what reaches across a cluster's
// CTAs: machine_cluster.cpp). docs/evaluator.md, "Asynchronous operations
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
#include "swizzle.hpp"

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace tileverify::machine {

namespace {

std::string dims_text(const std::vector<std::uint64_t>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "x" : "") + std::to_string(v[i]);
  return s;
}

// Element idx of a TMA box at coord (innermost dimension first): whether it
// lies inside the tensor, and then its byte offset in the tensor.
bool box_element(const TensorMap& mp, const std::vector<std::int64_t>& coord, const std::vector<std::uint32_t>& idx,
                 const std::vector<std::uint64_t>& stride, std::uint64_t* gbyte) {
  bool inside = true;
  *gbyte = 0;
  for (std::size_t d = 0; d < coord.size(); ++d) {
    const std::int64_t g = coord[d] + std::int64_t(idx[d]);
    if (g < 0 || g >= std::int64_t(mp.dims[d]))
      inside = false;
    else
      *gbyte += std::uint64_t(g) * stride[d];
  }
  return inside;
}

// The box element after idx, innermost dimension fastest.
void next_box_index(const TensorMap& mp, std::vector<std::uint32_t>& idx) {
  for (std::size_t d = 0; d < idx.size() && ++idx[d] == mp.box[d]; ++d) idx[d] = 0;
}

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
      return true;
    }
    case Opcode::MbarTx: {
      Mbar& b = mbar_of(t, in.src[0], false);
      const std::uint32_t bar = mbar_at_[{b.buf, b.byte}];
      const std::int64_t tx = control_int(t, operand(t, in.src[1]), "an mbarrier tx count");
      mbar_access(t, b, false);
      if (in.mode == 0) {  // expect-tx: more bytes to come this phase
        b.tx += tx;
        b.tx_expected += tx;
      } else {  // complete-tx by the thread itself: .relaxed, no release (PTX ISA, mbarrier.complete_tx)
        b.tx -= tx;
        b.tx_done += tx;
        if (b.pending == 0 && b.tx == 0) mbar_complete(b, bar);
      }
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

// "full_bar[2]": the buffer and the barrier's index in it (8 bytes each).
// In a buffer of other data (a kernel's one shared array): "sm at byte 32768".
template <class D>
std::string Machine<D>::mbar_name(const Mbar& b) const {
  const Memory<V>& m = mem_[b.buf];
  if (m.unit == 8) return m.name + "[" + std::to_string(b.byte / 8) + "]";
  return m.name + " at byte " + std::to_string(b.byte);
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
      check_mbar(t, m, c + j, pc);
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
    if (!(in.mode & MbarWaitFlags::kRelaxed)) mbar_acquire(u, bb);
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
  b.tx -= bytes;
  b.tx_done += bytes;
  if (o_.check_races) {
    if (b.clock.size() <= a) b.clock.resize(w_, 0);
    b.clock[a] = std::max<std::uint32_t>(b.clock[a], 1);
  }
  if (b.pending == 0 && b.tx == 0) mbar_complete(b, bar);
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
    if ((x != 0 && x != 1) && !async_noted_[pc_[t]]) {
      async_noted_[pc_[t]] = 1;
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
  if (ready) {
    bool certain = retry;
    if (!certain && o_.check_races) {
      certain = true;
      const std::uint32_t* row = &vc_[std::size_t(t) * w_];
      for (std::size_t i = 0; i < b.done.size() && certain; ++i) certain = i == t || b.done[i] <= row[i];
    }
    if (!(in.mode & MbarWaitFlags::kRelaxed)) mbar_acquire(t, b);
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
  agents_.push_back(Agent{t, pc_[t], write});
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
std::string Machine<D>::async_race_detail(Access a, std::uint32_t apc, Access b, std::uint32_t bpc) const {
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
           "  mbarrier.test_wait / try_wait: cp.async.bulk operations using the mbarrier are then performed and visible)\n";
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
  if (m.pending[c] == kMapCell)
    fail(DiagKind::Unsupported, t,
         "a " + async_access_name(kind, pc) + " of the bytes of the tensor map '" + m.name +
             "': tileverify models a tensor map as what TMA reads through it, not as its 128-byte encoding");
  std::string name = m.name + " at byte " + std::to_string(byte);
  for (const Mbar& b : mbars_)
    if (b.buf != kNone && &mem_[b.buf] == &m && std::uint64_t(b.byte) <= byte && byte < std::uint64_t(b.byte) + 8)
      name = mbar_name(b);
  fail(DiagKind::Unsupported, t,
       "a " + async_access_name(kind, pc) + " of the bytes of the mbarrier " + name +
           " while it is in use: the PTX ISA (mbarrier) allows only mbarrier instructions on an initialized mbarrier "
           "object, until mbarrier.inval");
}

// ------------------------------------------------------------ TMA

// The tensor map an operand [map, ..] names: the parameter's address (or a
// register holding it). *tensor_buf: the memory of its tensor.
template <class D>
const TensorMap& Machine<D>::tensor_map_of(std::uint32_t t, const Operand& o, std::uint32_t* tensor_buf, std::uint32_t* arg) {
  const Addr a = address(t, o);
  for (std::uint32_t i = 0; i < map_desc_buf_.size(); ++i)
    if (map_desc_buf_[i] == a.buf) {
      if (a.offset != 0)
        fail(DiagKind::Unsupported, t, "a TMA tensor-map operand at byte " + std::to_string(a.offset) + " of the map '" +
                                           p_.params[i].name + "' (it must be the map's address)");
      *tensor_buf = map_tensor_buf_[i];
      *arg = i;
      return l_.args[i].map;
    }
  fail(DiagKind::Unsupported, t,
       "a TMA tensor-map operand that points into '" + mem_[a.buf].name +
           "', not to a CUtensorMap parameter (give the parameter as a tensor map in the launch)");
}

// cp.async.bulk.tensor: a TMA load (global box -> shared, then complete-tx
// on the mbarrier) or store (shared -> global box, in the thread's bulk
// async-group). PTX ISA, "cp.async.bulk.tensor" and "Tensor Access Modes":
// the box at the coordinates, its elements innermost first, row-major in
// shared memory, with the map's swizzle (swizzle.hpp); elements outside the
// tensor's dimensions read as the OOB fill (zero) and are not stored.
template <class D>
void Machine<D>::tma(std::uint32_t t, const Instr& in) {
  const bool load = in.op == Opcode::TmaLoad;
  const std::size_t dims = in.mode;
  const Operand& map_op = load ? in.src[1] : in.src[0];
  const std::size_t first = load ? 3 : 2;  // the first coordinate
  std::uint32_t tbuf = kNone, arg = 0;
  const TensorMap& mp = tensor_map_of(t, map_op, &tbuf, &arg);
  const std::string pname = p_.params[arg].name;
  if (mp.dims.size() != dims)
    bad_launch("the " + std::to_string(dims) + "-d TMA at " + in.loc.with_source() + " uses the tensor map '" + pname +
               "', which has " + std::to_string(mp.dims.size()) + " dimensions");
  if (mp.interleave != TmaInterleave::None)
    fail(DiagKind::Unsupported, t, "the tensor map '" + pname + "' is interleaved, which is not modelled");
  for (std::uint32_t e : mp.element_strides)
    if (e != 1) fail(DiagKind::Unsupported, t, "the tensor map '" + pname + "' has element strides other than 1, which are not modelled");
  // .multicast::cluster: the box goes to the same offset of the shared
  // memory of every CTA of ctaMask, each completing on its mbarrier at the
  // mbarrier operand's offset (PTX ISA, cp.async.bulk.tensor).
  std::int64_t mask = 0;
  if (load && in.shape == 1) {
    mask = control_int(t, operand(t, in.src.back()), "a TMA multicast mask") & 0xffff;
    if (mask == 0 || (mask >> ncta_) != 0)
      fail(DiagKind::OutOfBounds, t,
           "a TMA multicast with CTA mask " + std::to_string(mask) + " in a cluster of " + std::to_string(ncta_) +
               (ncta_ == 1 ? " CTA" : " CTAs") + ": every bit set must name a CTA rank of the cluster, and one must be set");
  }
  Memory<V>& tm = mem_[tbuf];
  const std::uint64_t esize = dtype_bytes(tm.dtype);
  std::vector<std::int64_t> coord(dims);
  for (std::size_t d = 0; d < dims; ++d)
    coord[d] = wrap(control_int(t, operand(t, in.src[first + d]), "a TMA coordinate"), DType::S32);
  // Where the box lies against the tensor's shape. The PTX ISA (Tensor
  // Access Modes, tile mode: bounding box) has a load fill the elements
  // outside with the OOB fill and a store skip them; an H100 / H200 does so,
  // except that a store whose box starts at a negative coordinate traps
  // (error 715, illegal instruction; tools/gpu_checks/tma_bounds.cu), which
  // is what a launch with more CTAs than tiles does when it counts tiles
  // from the end: the launch contract. Anything else outside is a note.
  bool outside = false, partly = false, negative = false;
  for (std::size_t d = 0; d < dims; ++d) {
    const std::int64_t lo = coord[d], hi = coord[d] + std::int64_t(mp.box[d]);
    if (hi <= 0 || lo >= std::int64_t(mp.dims[d]))
      outside = true;
    else if (lo < 0 || hi > std::int64_t(mp.dims[d]))
      partly = true;
    negative = negative || lo < 0;
  }
  auto where = [&]() {
    std::string c, b;
    for (std::size_t d = 0; d < dims; ++d) {
      c += (d ? ", " : "") + std::to_string(coord[d]);
      b += (d ? "x" : "") + std::to_string(mp.box[d]);
    }
    return std::string(load ? "TMA load" : "TMA store") + " at coordinates (" + c + ") with box " + b;
  };
  const Dim3& own = cta_of_rank_[rank(t)];
  const std::string cta = "CTA (" + std::to_string(own.x) + "," + std::to_string(own.y) + "," + std::to_string(own.z) + ")";
  const std::string against = " the tensor's shape " + dims_text(mp.dims) + " (dims innermost first, tensor map '" + pname + "')";
  if (!load && negative) {
    Diagnostic d;
    d.kind = DiagKind::LaunchContract;
    d.message = cta + ": " + where() + " starts at a negative coordinate of" + against +
                ": on a GPU this traps (an H100 / H200 ends the launch with error 715, illegal instruction); a CTA that "
                "owns no tile must not issue it";
    d.loc = in.loc;
    d.threads = {t};
    d.detail = "  instruction: " + p_.instr_text(pc_[t]) +
               "\n  the PTX ISA (Tensor Access Modes, tile mode) says only that elements outside the tensor are not\n"
               "  written; tools/gpu_checks/tma_bounds.cu shows the trap for any negative coordinate of a store,\n"
               "  partly or wholly outside, while loads anywhere and stores past the end complete\n";
    throw Stop{d};
  }
  if (outside || partly) {
    if (load && mp.oob_fill != TmaOobFill::Zero)
      fail(DiagKind::Unsupported, t, "a TMA box partly outside the tensor with the NaN out-of-bound fill, which is not modelled");
    if (!async_noted_[pc_[t]]) {
      async_noted_[pc_[t]] = 1;
      Diagnostic d;
      d.kind = DiagKind::LaunchContract;
      d.loc = in.loc;
      d.threads = {t};
      d.message = cta + ": " + where() + " lies " + (outside ? "wholly" : "partly") + " outside" + against + ": " +
                  (load ? "the elements outside read as zero (the map's out-of-bound fill)" : "the elements outside are not written");
      notes_.push_back(std::move(d));
    }
  }
  // Shared memory: 128-byte aligned (PTX ISA, cp.async.bulk.tensor), and
  // at the swizzle pattern's repeat so that the pattern is the buffer's.
  const Addr s = address(t, load ? in.src[0] : in.src[1]);
  Memory<V>& sm = mem_[s.buf];
  if (sm.space != Space::Shared || sm.per_thread)
    fail(DiagKind::Unsupported, t, "a TMA copy to or from '" + sm.name + "', which is not shared memory");
  const unsigned span = swizzle_span(unsigned(mp.swizzle));
  const std::uint64_t align = std::max<std::uint64_t>(128, swizzle_repeat(span));
  if (s.offset < 0 || std::uint64_t(s.offset) % align != 0)
    fail(DiagKind::Unsupported, t,
         "a TMA copy at byte " + std::to_string(s.offset) + " of '" + sm.name + "': the shared address must be " +
             std::to_string(align) + "-byte aligned" +
             (span ? " for the " + std::to_string(span) + "B swizzle pattern to be the buffer's" : " (PTX ISA, cp.async.bulk.tensor)"));
  if (span && mp.box[0] * esize > span)
    bad_launch("the tensor map '" + pname + "' has an inner box of " + std::to_string(mp.box[0] * esize) +
               " bytes, more than its " + std::to_string(span) + "B swizzle span (cuTensorMapEncodeTiled)");
  const std::uint32_t pc = pc_[t];
  // A load's destinations: (shared buffer, its mbarrier), one per CTA of a
  // multicast, else the operands' own.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> dests;
  if (load && mask) {
    const Addr ba = address(t, in.src[2]);
    for (std::uint32_t r = 0; r < ncta_; ++r) {
      if (!(mask >> r & 1)) continue;
      Mbar& b = mbar_at(t, Addr{rank_copy(ba.buf, r), ba.offset}, false);
      mbar_access(t, b, false);
      check_init_fenced(t, b);
      if (r != rank(t)) record_remote(t, r, pc);
      dests.emplace_back(rank_copy(s.buf, r), mbar_at_[{b.buf, b.byte}]);
    }
  } else if (load) {
    Mbar& b = mbar_of(t, in.src[2], false);
    mbar_access(t, b, false);
    check_init_fenced(t, b);
    dests.emplace_back(s.buf, mbar_at_[{b.buf, b.byte}]);
  }
  // Byte strides of the tensor's dimensions.
  std::vector<std::uint64_t> stride(dims, esize);
  for (std::size_t d = 1; d < dims; ++d) {
    if (!mp.strides.empty()) {
      stride[d] = mp.strides[d - 1];
    } else {
      stride[d] = stride[d - 1] * mp.dims[d - 1];
    }
  }
  std::uint64_t total = 1;
  for (std::size_t d = 0; d < dims; ++d) total *= mp.box[d];
  if (load) {
    for (const auto& [dbuf, bar] : dests) {
      // One agent per destination: each CTA's copy completes on its own barrier.
      const std::uint32_t agent = new_agent(t, true);
      if (ncta_ > 1 && buf_rank_[dbuf] != rank(t)) record_remote(agent, buf_rank_[dbuf], pc);
      tma_load_box(t, mp, tbuf, stride, coord, Addr{dbuf, s.offset}, span, agent);
      // The complete-tx counts every byte of the box, the filled ones too.
      mbar_complete_tx(agent, mbars_[bar], bar, std::int64_t(total * esize));
    }
    return;
  }
  const std::uint32_t ra = new_agent(t, false), wa = new_agent(t, true);
  std::vector<std::uint32_t> idx(dims, 0);
  for (std::uint64_t l = 0; l < total; ++l) {
    std::uint64_t gbyte = 0;
    const bool inside = box_element(mp, coord, idx, stride, &gbyte);
    const std::int64_t sbyte = std::int64_t(swizzle_offset(std::uint64_t(s.offset) + l * esize, span));
    if (inside) {
      const std::size_t sc = cell(t, Addr{s.buf, sbyte}, 0, esize, false);
      const std::size_t k = std::max<std::size_t>(1, esize >> sm.gshift);
      for (std::size_t j = 0; j < k; ++j) agent_access(ra, sm, sc + j, false, true);
      Cell<V> v;
      bool undef = false;
      for (std::size_t j = 0; j < k; ++j) undef = undef || sm.cells[sc + j].kind == VKind::Undef;
      if (undef) {
        note_uninitialized(t, sm, sc);
        v = make_cell(float_val(poison(sm, sc)), make_tag(pc));
      } else if (k == 1 && !(sm.cells[sc].tag & kSliceBits)) {
        v = make_cell(read_cell(sm, sc), make_tag(pc));
      } else {
        v = make_cell(join(Reader{t, std::size_t(esize), "TMA read", sm.byte_of(sc)}, sm, sc, esize), make_tag(pc));
      }
      const std::size_t gc = cell(t, Addr{tbuf, std::int64_t(gbyte)}, 0, esize, true);
      check_writable(t, tm);
      const std::size_t kg = std::max<std::size_t>(1, esize >> tm.gshift);
      if (kg == 1) {
        agent_access(wa, tm, gc, true, false);
        tm.cells[gc] = v;
      } else {
        Cell<V> p[16];
        split_cell(v, esize, tm.g, p);
        for (std::size_t j = 0; j < kg; ++j) {
          agent_access(wa, tm, gc + j, true, false);
          tm.cells[gc + j] = p[j];
        }
      }
    }
    next_box_index(mp, idx);
  }
  if (bulk_groups_.empty()) bulk_groups_.assign(n_, BulkGroups{});
  bulk_groups_[t].open.push_back(BulkOp{ra, wa});
}

// A TMA load's box into shared memory at s (of buffer s.buf) as agent ra's
// writes: elements innermost first, row-major, swizzled (swizzle.hpp);
// those outside the tensor's dimensions read as the OOB fill, zero.
template <class D>
void Machine<D>::tma_load_box(std::uint32_t t, const TensorMap& mp, std::uint32_t tbuf,
                              const std::vector<std::uint64_t>& stride, const std::vector<std::int64_t>& coord,
                              const Addr& s, unsigned span, std::uint32_t ra) {
  Memory<V>& tm = mem_[tbuf];
  Memory<V>& sm = mem_[s.buf];
  const std::size_t dims = coord.size();
  const std::uint64_t esize = dtype_bytes(tm.dtype);
  const std::uint32_t pc = pc_[t];
  std::uint64_t total = 1;
  for (std::size_t d = 0; d < dims; ++d) total *= mp.box[d];
  std::vector<std::uint32_t> idx(dims, 0);
  for (std::uint64_t l = 0; l < total; ++l) {
    std::uint64_t gbyte = 0;
    const bool inside = box_element(mp, coord, idx, stride, &gbyte);
    const std::int64_t sbyte = std::int64_t(swizzle_offset(std::uint64_t(s.offset) + l * esize, span));
    const std::size_t sc = cell(t, Addr{s.buf, sbyte}, 0, esize, true);
    Cell<V> v = make_cell(int_val(0), make_tag(pc));  // the OOB fill: zero bits are 0 in every format
    if (inside) {
      const std::size_t gc = cell(t, Addr{tbuf, std::int64_t(gbyte)}, 0, esize, false);
      agent_access(ra, tm, gc, false, false);
      const Val<V>& x = read_cell(tm, gc);
      if (x.kind == VKind::Undef) {
        note_uninitialized(t, tm, gc);
        v = make_cell(float_val(poison(tm, gc)), make_tag(pc));
      } else {
        v = make_cell(x, (tm.cells[gc].tag & kSliceBits) | make_tag(pc));
      }
    }
    // The shared cell may have been cut finer than the element since (an
    // access of another width): the value goes in its pieces.
    const std::size_t k = esize >> sm.gshift;
    if (k <= 1) {
      agent_access(ra, sm, sc, true, false);
      sm.cells[sc] = v;
    } else {
      Cell<V> p[16];
      split_cell(v, esize, sm.g, p);
      for (std::size_t j = 0; j < k; ++j) {
        agent_access(ra, sm, sc + j, true, false);
        sm.cells[sc + j] = p[j];
      }
    }
    next_box_index(mp, idx);
  }
}

// cp.async.bulk (not .tensor): `size` bytes, a multiple of 16, between
// 16-byte aligned addresses (PTX ISA, cp.async.bulk): global -> shared with
// complete-tx on an mbarrier, or shared -> global in a bulk async-group.
template <class D>
void Machine<D>::bulk_copy(std::uint32_t t, const Instr& in) {
  const bool to_shared = in.space == Space::Shared;
  const Addr dst = address(t, in.src[0]), src = address(t, in.src[1]);
  Memory<V>& dm = mem_[dst.buf];
  Memory<V>& sm = mem_[src.buf];
  const std::int64_t size = control_int(t, operand(t, in.src[2]), "a bulk copy's size");
  if (size <= 0 || size % 16 != 0)
    fail(DiagKind::Unsupported, t, "a bulk copy of " + std::to_string(size) + " bytes (the PTX ISA wants a positive multiple of 16)");
  if (dst.offset % 16 != 0 || src.offset % 16 != 0)
    fail(DiagKind::Unsupported, t, "a bulk copy between addresses that are not 16-byte aligned (PTX ISA, cp.async.bulk)");
  Memory<V>& shared = to_shared ? dm : sm;
  Memory<V>& global = to_shared ? sm : dm;
  if (shared.space != Space::Shared || shared.per_thread)
    fail(DiagKind::Unsupported, t, "a bulk copy with '" + shared.name + "' as its shared memory, which it is not");
  if (global.space != Space::Global && global.space != Space::Const)
    fail(DiagKind::Unsupported, t, "a bulk copy with '" + global.name + "' as its global memory, which it is not");
  if (!to_shared) check_writable(t, dm);
  std::uint32_t bar = kNone;
  if (to_shared) {
    Mbar& b = mbar_of(t, in.src[3], false);
    bar = mbar_at_[{b.buf, b.byte}];
    mbar_access(t, b, false);
    check_init_fenced(t, b);
  }
  std::int64_t unit = 16;
  if (!sm.untyped) unit = std::min<std::int64_t>(unit, sm.g);
  if (!dm.untyped) unit = std::min<std::int64_t>(unit, dm.g);
  if (sm.untyped && dm.untyped) unit = 4;
  const std::size_t u = std::size_t(unit);
  const std::uint32_t pc = pc_[t];
  const std::uint32_t ra = new_agent(t, to_shared);
  const std::uint32_t wa = to_shared ? ra : new_agent(t, true);
  for (std::size_t k = 0; k < std::size_t(size) / u; ++k) {
    const std::size_t sc = cell(t, src, k, u, false);
    const std::size_t dc = cell(t, dst, k, u, true);
    agent_access(ra, sm, sc, false, !to_shared);
    const Val<V>& x = read_cell(sm, sc);
    Cell<V> v;
    if (x.kind == VKind::Undef) {
      note_uninitialized(t, sm, sc);
      v = make_cell(float_val(poison(sm, sc)), make_tag(pc));
    } else {
      v = make_cell(x, (sm.cells[sc].tag & kSliceBits) | make_tag(pc));
    }
    agent_access(wa, dm, dc, true, false);
    dm.cells[dc] = v;
  }
  if (to_shared) {
    mbar_complete_tx(ra, mbars_[bar], bar, size);
  } else {
    if (bulk_groups_.empty()) bulk_groups_.assign(n_, BulkGroups{});
    bulk_groups_[t].open.push_back(BulkOp{ra, wa});
  }
}

// cp.async.bulk.wait_group{.read} N (PTX ISA): waits until at most N of the
// thread's most recent bulk async-groups are pending; .read only until their
// source reads are done. Waiting orders the thread after the agents.
template <class D>
void Machine<D>::bulk_wait(std::uint32_t t, const Instr& in) {
  if (bulk_groups_.empty()) return;
  BulkGroups& g = bulk_groups_[t];
  const std::size_t keep = std::size_t(in.src[0].imm);
  auto join = [&](std::uint32_t a) {
    if (o_.check_races && a != kNone) vc_[std::size_t(t) * w_ + a] = std::max<std::uint32_t>(vc_[std::size_t(t) * w_ + a], 1);
  };
  if (in.mode == 1) {
    for (std::size_t i = g.read_done; i + keep < g.committed.size(); ++i) {
      for (const BulkOp& op : g.committed[i]) join(op.read_agent);
      g.read_done = i + 1;
    }
    return;
  }
  while (g.committed.size() > keep) {
    for (const BulkOp& op : g.committed.front()) {
      join(op.read_agent);
      join(op.write_agent);
    }
    g.committed.pop_front();
    if (g.read_done) --g.read_done;
  }
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
    }
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
