// Machine<D>: the waits of libcu++ and CUTLASS as compiled: the retry-loop
// recogniser of mbarrier.test_wait / try_wait (with the spin counters,
// timer reads and nanosleep backoff of cuda::barrier's wait), the timer
// registers, and cp.async.mbarrier.arrive (cuda::memcpy_async with a
// cuda::barrier on sm_80). docs/evaluator.md, "Asynchronous operations
// (sm_90)", explains the model; the PTX ISA sections are named where each
// rule is applied.
#include "machine.hpp"
#include "wait_probe.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tileverify::machine {

namespace {

// Operations with no effect but their destination register.
bool pure_integer_op(Opcode op) {
  switch (op) {
    case Opcode::Mov:
    case Opcode::Cvt:
    case Opcode::Selp:
    case Opcode::Add:
    case Opcode::Sub:
    case Opcode::Mul:
    case Opcode::Mad:
    case Opcode::Min:
    case Opcode::Max:
    case Opcode::And:
    case Opcode::Or:
    case Opcode::Xor:
    case Opcode::Not:
    case Opcode::Shl:
    case Opcode::Shr:
    case Opcode::Setp: return true;
    default: return false;
  }
}

// The largest pending count of an mbarrier (PTX ISA, mbarrier: "the valid
// range of the count is [1, 2^20 - 1]").
constexpr std::int64_t kMaxPending = (std::int64_t(1) << 20) - 1;

// Bounds of the search for the way back to a wait: instructions on one
// path, and instructions over all paths (each branch on a value the
// result does not decide doubles the paths).
constexpr int kPathSteps = 64;
constexpr int kSearchSteps = 1024;

const char* timer_name(std::uint8_t kind) {
  static const char* names[] = {"%clock", "%clock_hi", "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi"};
  return kind < sizeof names / sizeof names[0] ? names[kind] : "a timer";
}

}  // namespace

// ------------------------------------------------------------ retry loops

// Whether the wait at pc is a retry loop's: with its result false, every
// way through the code after it reaches the wait again through nothing but
// branches, pure operations, timer reads and nanosleep (the forms compilers
// emit: `L: try_wait p; @!p bra L;`, CUTLASS's `L: try_wait p; @p bra DONE;
// bra L; DONE:`, a selp / setp of p before the branch, and libcu++'s
// backoff: a spin counter, then %globaltimer and nanosleep, every branch of
// which leads back to the wait). Values computed from the result are known
// (false); a branch on any other value (the counter, the elapsed time) is
// followed both ways, and both must lead back. Decided once per pc.
template <class D>
bool Machine<D>::retry_wait(std::uint32_t pc) {
  if (retry_wait_.empty()) retry_wait_.assign(p_.code.size(), 0);
  if (retry_wait_[pc]) return retry_wait_[pc] == 1;
  using Known = std::map<std::uint32_t, std::int64_t>;  // registers computed from the result
  // The instructions executed on one way back, in order (branches left out).
  using Path = std::vector<std::uint32_t>;
  int budget = kSearchSteps;
  std::set<std::uint32_t> clobbered;
  // The loop head of each way back: where its last taken branch went, and
  // the instructions from there to the wait (straight-line code that every
  // spin on that way runs last).
  std::set<std::uint32_t> heads;
  std::vector<std::uint32_t> head_code;
  const auto value = [](const Known& known, const Operand& o, std::int64_t* v) {
    if (o.kind == Operand::Kind::Int) {
      *v = o.imm;
      return true;
    }
    if (o.kind != Operand::Kind::Reg || o.imm != 0) return false;
    auto it = known.find(o.index);
    if (it == known.end()) return false;
    *v = it->second;
    return true;
  };
  // Blocking until the phase completes is what the loop does only if every
  // spin waits on the same barrier and parity: the wait's operands must not
  // change around the loop. A register written on the way back is fine when
  // recomputed from values the loop does not change (nvcc recomputes the
  // barrier's address inside the loop), or from the result (false on every
  // spin); one carried from the previous spin (a counter) may differ at the
  // next wait.
  const auto steady = [&](const Path& path, std::uint32_t head, std::size_t head_at) {
    std::map<std::uint32_t, std::size_t> first_write;  // register -> index on the path
    for (std::size_t i = 0; i < path.size(); ++i)
      for (std::uint32_t d : p_.code[path[i]].dst) first_write.emplace(d, i);
    std::set<std::uint32_t> varying;
    for (std::size_t i = 0; i < path.size(); ++i) {
      const Instr& in = p_.code[path[i]];
      bool varies = false;
      for (const Operand& o : in.src)
        if (o.kind == Operand::Kind::Reg) {
          auto w = first_write.find(o.index);
          varies = varies || varying.count(o.index) || (w != first_write.end() && w->second >= i);
        }
      for (std::uint32_t d : in.dst)
        if (varies) varying.insert(d);
    }
    for (const Operand& o : p_.code[pc].src)
      if (o.kind == Operand::Kind::Reg && varying.count(o.index)) return false;
    for (std::size_t i = 0; i < path.size(); ++i)
      for (std::uint32_t d : p_.code[path[i]].dst) clobbered.insert(d);
    heads.insert(head);
    head_code.assign(path.begin() + std::ptrdiff_t(head_at), path.end());
    return true;
  };
  // Whether every way from q (with `known`, after `path`) leads back to pc.
  const auto back = [&](const auto& self, std::uint32_t q, Known known, Path path, std::uint32_t head,
                        std::size_t head_at) -> bool {
    for (int steps = 0; steps < kPathSteps; ++steps) {
      if (--budget < 0 || q >= p_.code.size()) return false;
      if (q == pc) return steady(path, head, head_at);
      const Instr& in = p_.code[q];
      bool on = true, decided = true;
      if (in.guard >= 0) {
        std::int64_t g = 0;
        decided = value(known, Operand::reg(std::uint32_t(in.guard)), &g);
        on = (g != 0) != in.guard_negated;
      }
      if (in.op == Opcode::Bra) {
        if (!decided)
          return self(self, in.target, known, path, in.target, path.size()) &&
                 self(self, q + 1, known, path, head, head_at);
        if (on) {
          head = in.target;
          head_at = path.size();
        }
        q = on ? in.target : q + 1;
        continue;
      }
      if (decided && !on) {
        ++q;
        continue;
      }
      if (in.op == Opcode::Nanosleep) {
        ++q;
        continue;
      }
      path.push_back(q);
      // A timer, or an operation on values the result does not decide (the
      // next wait's address, a counter, the elapsed time): unknown here,
      // which matters only where a branch decides on it.
      const auto unknown = [&]() {
        for (std::uint32_t d : in.dst) known.erase(d);
        ++q;
      };
      if (in.op == Opcode::Timer) {
        unknown();
        continue;
      }
      if (!pure_integer_op(in.op) || in.dst.size() != 1) return false;
      std::int64_t a = 0, b2 = 0, c = 0, r = 0;
      const std::size_t ns = in.src.size();
      if (!decided || ns == 0 || ns > 3 || !value(known, in.src[0], &a) || (ns > 1 && !value(known, in.src[1], &b2)) ||
          (ns > 2 && !value(known, in.src[2], &c))) {
        unknown();
        continue;
      }
      const bool pred = in.type == DType::Pred;
      switch (in.op) {
        case Opcode::Mov:
        case Opcode::Cvt: r = a; break;
        case Opcode::Not: r = pred ? !a : ~a; break;
        case Opcode::And: r = a & b2; break;
        case Opcode::Or: r = a | b2; break;
        case Opcode::Xor: r = pred ? (a != 0) != (b2 != 0) : a ^ b2; break;
        case Opcode::Selp: r = c ? a : b2; break;
        case Opcode::Setp:
          switch (in.cmp) {
            case Cmp::EQ: r = a == b2; break;
            case Cmp::NE: r = a != b2; break;
            case Cmp::LT: r = a < b2; break;
            case Cmp::LE: r = a <= b2; break;
            case Cmp::GT: r = a > b2; break;
            case Cmp::GE: r = a >= b2; break;
          }
          break;
        default:  // computed from the result, not followed here
          unknown();
          continue;
      }
      known[in.dst[0]] = r;
      ++q;
    }
    return false;
  };
  Known known;
  known[p_.code[pc].dst[0]] = 0;
  const bool loops = back(back, pc + 1, known, Path{}, pc + 1, 0);
  if (loops) {
    clobbered.erase(p_.code[pc].dst[0]);
    // When every way back ends in the same loop head, the head's unguarded
    // operations on values no spin changes (nvcc's recomputed barrier
    // address) give the same values on every spin: the thread recomputes
    // them on resuming, and they are not the schedule's.
    std::set<std::uint32_t> written;
    if (heads.size() == 1) {
      std::set<std::uint32_t> head_dsts;
      for (std::uint32_t q : head_code)
        for (std::uint32_t d : p_.code[q].dst) head_dsts.insert(d);
      std::set<std::uint32_t> recomputed;
      for (std::uint32_t q : head_code) {
        const Instr& in = p_.code[q];
        bool same = in.guard < 0 && in.op != Opcode::Timer;
        for (const Operand& o : in.src)
          if (o.kind == Operand::Kind::Reg && !recomputed.count(o.index) &&
              (clobbered.count(o.index) || head_dsts.count(o.index) || o.index == p_.code[pc].dst[0]))
            same = false;
        if (!same) {
          for (std::uint32_t d : in.dst) recomputed.erase(d);
          continue;
        }
        retry_heads_[pc].push_back(q);
        for (std::uint32_t d : in.dst) recomputed.insert(d);
      }
      for (std::uint32_t d : recomputed) clobbered.erase(d);
    }
    if (!clobbered.empty()) retry_clobbers_[pc].assign(clobbered.begin(), clobbered.end());
  }
  retry_wait_[pc] = 2;  // meanwhile: the probe check asks about other waits
  // CUTLASS's consumer_try_wait + consumer_wait: a probe whose false result
  // only leads into a retry loop on the same barrier and phase waits as that
  // loop does (wait_probe.hpp).
  if (loops || probe_of_retry_loop(p_, pc, [this](std::uint32_t q) { return retry_wait(q); })) retry_wait_[pc] = 1;
  return retry_wait_[pc] == 1;
}

// A thread released from the retry loop at wait_pc moves on as if its last
// spin had returned true: it runs the loop head's recomputed operations
// again, as that spin did. The other registers its spins wrote (a spin
// counter, a timer difference) hold, on a GPU, what the spins left: values
// of the schedule, which this run never computed. They are marked as the
// wait's (Val::sched): harmless while only the loop reads them, reported
// where one reaches a branch, an address or an output.
template <class D>
void Machine<D>::retry_resume(std::uint32_t t, std::uint32_t wait_pc) {
  auto head = retry_heads_.find(wait_pc);
  if (head != retry_heads_.end())
    for (std::uint32_t q : head->second) alu(t, p_.code[q]);
  auto it = retry_clobbers_.find(wait_pc);
  if (it == retry_clobbers_.end()) return;
  for (std::uint32_t r : it->second) {
    Val<V>& v = reg(t, r);
    if (v.kind == VKind::Undef) v.kind = VKind::Int;
    v.sched = wait_pc + 1;
  }
  sched_marks_ = true;
}

// ------------------------------------------------------------ timers

// mov d, %globaltimer (or a clock): the value is the hardware's at this
// moment of this schedule. It is the integer 0 marked as the timer's
// (Val::sched): a retry loop's backoff may read it (retry_wait never runs
// those paths), anything the kernel computes from it is unsupported
// (timer_reaches), naming the read.
template <class D>
void Machine<D>::timer_read(std::uint32_t t, const Instr& in) {
  Val<V> v = int_val(0);
  v.sched = pc_[t] + 1;
  sched_marks_ = true;
  set(t, in.dst[0], v);
}

template <class D>
void Machine<D>::timer_reaches(std::uint32_t t, std::uint32_t timer_pc, const std::string& what) {
  const Instr& in = p_.code[timer_pc];
  Diagnostic d;
  d.kind = DiagKind::Unsupported;
  d.message = what + " depends on the timer " + timer_name(in.mode) + " read at " + in.loc.text() +
              ": its value is the hardware's and the schedule's, not a function of the kernel's inputs";
  d.loc = p_.code[t == kNone ? timer_pc : pc_[t]].loc;
  if (t != kNone) d.threads = {t};
  d.detail = "  the read: " + in.loc.with_source() + ": " + p_.instr_text(timer_pc) +
             "\n  tileverify accepts a timer only where the backoff of a loop that retries an mbarrier wait reads it\n"
             "  (libcu++'s cuda::barrier::wait): every way through that loop returns to the wait, so the time read\n"
             "  decides only how long the thread sleeps, never what it computes (PTX ISA, Special Registers)\n";
  throw Stop{d};
}

// ------------------------------------------------------------ cp.async.mbarrier.arrive

// cp.async.mbarrier.arrive{.noinc} [bar] (PTX ISA, "cp.async.mbarrier.arrive",
// and "cp.async", mbarrier-based completion): an arrive-on operation is
// triggered on the barrier when all prior cp.async operations of the thread
// complete. Without .noinc the pending count is first incremented by one, so
// the arrive-on makes no net change to it: the phase cannot complete before
// the copies do. With .noinc there is no increment: the arrive-on is one of
// the arrivals the barrier's count expects.
//
// The copies not yet retired by a cp.async.wait_group are completed here,
// as the writes of one agent (its own vector-clock column, as TMA's copies
// are): the agent is released into the current phase, so a thread reading
// the destination is ordered after the writes only by a wait that observes
// this phase's completion. Performing them now is exact for the form
// without .noinc, whose copies always land in this phase. They leave their
// cp.async groups: a later cp.async.wait_group does not order the thread
// after them (a race may be reported that a GPU would not show; never one
// missed). With .noinc the arrive-on counts in this phase here; a GPU may
// deliver it later, into the next phase, when other arrivals complete this
// one first: check_async_arrivals reports any arrival that could do so.
template <class D>
void Machine<D>::cp_async_mbar_arrive(std::uint32_t t, const Instr& in) {
  Mbar& b = mbar_of(t, in.src[0], false);
  const std::uint32_t bar = mbar_at_[{b.buf, b.byte}];
  mbar_access(t, b, false);
  const bool noinc = in.mode & 1;
  if (!noinc && std::int64_t(b.pending) + 1 > kMaxPending)
    fail(DiagKind::Unsupported, t,
         "cp.async.mbarrier.arrive raises the pending count of " + mbar_name(b) + " past 2^20 - 1, which the PTX ISA "
         "(cp.async.mbarrier.arrive) leaves undefined");
  if (noinc && b.pending == 0)
    fail(DiagKind::Unsupported, t,
         "cp.async.mbarrier.arrive.noinc on " + mbar_name(b) + ", whose phase " + std::to_string(b.phase) +
             " has no arrivals pending: more arrivals than the phase expects are undefined in the PTX ISA (mbarrier)");
  if (noinc && !b.async_arrivals.empty()) check_async_arrivals(t, b);
  std::vector<std::uint32_t> ids;
  if (!copy_groups_.empty()) {
    for (const auto& g : copy_groups_[t]) ids.insert(ids.end(), g.begin(), g.end());
    ids.insert(ids.end(), open_copies_[t].begin(), open_copies_[t].end());
    copy_groups_[t].clear();
    open_copies_[t].clear();
  }
  const std::uint32_t agent = new_agent(t, true);
  for (std::uint32_t id : ids) {
    AsyncCopy<V>& cp = copies_[id - 1];
    Memory<V>& m = mem_[cp.buf];
    const std::size_t c = std::size_t(cp.byte >> m.gshift), k = std::max<std::size_t>(1, cp.width >> m.gshift);
    Cell<V> p[16];
    if (k == 1)
      p[0] = cp.value;
    else
      split_cell(cp.value, cp.width, m.g, p);
    for (std::size_t j = 0; j < k; ++j) {
      if (m.pending[c + j] == id) m.pending[c + j] = 0;
      agent_access(agent, m, c + j, true, false);
      m.cells[c + j] = p[j];
    }
    cp.value = Cell<V>{};
  }
  // The copies' writes are released into the phase the arrive-on counts toward.
  if (o_.check_races) {
    if (b.clock.size() <= agent) b.clock.resize(w_, 0);
    b.clock[agent] = std::max<std::uint32_t>(b.clock[agent], 1);
  }
  if (!noinc) return;  // incremented, then decremented by the arrive-on: no net change
  b.async_arrivals.emplace_back(b.phase, agent);
  const std::uint64_t before = b.phase;
  b.pending -= 1;
  if (b.pending == 0 && b.tx == 0) mbar_complete(b, bar);
  mbar_mark(agent, 0, b, before, pc_[t]);
}

// An arrival on b by thread t (or the .noinc arrive-on of t's copies),
// in b's current phase. An earlier .noinc arrive-on was counted in the phase
// current when it was issued; on a GPU it comes when its copies complete. If
// this arrival is not ordered after those copies (t has not observed them),
// it could come first and complete that phase in the arrive-on's place,
// which would then count in this one: which phase each counts in depends on
// the schedule, a race on the barrier.
template <class D>
void Machine<D>::check_async_arrivals(std::uint32_t t, Mbar& b) {
  if (!o_.check_races) return;
  for (const auto& [phase, agent] : b.async_arrivals) {
    if (phase >= b.phase || agent - n_ >= agents_.size() || vc_[std::size_t(t) * w_ + agent] > 0) continue;
    const Agent& ag = agents_[agent - n_];
    Diagnostic d;
    d.kind = DiagKind::Race;
    d.message = "an arrival on " + mbar_name(b) + " in its phase " + std::to_string(b.phase) + " by thread " +
                tname(t) + " is not ordered after the cp.async copies of thread " + tname(ag.thread) +
                " whose asynchronous arrive-on (.noinc) counted in phase " + std::to_string(phase) +
                ": if they complete later, this arrival completes phase " + std::to_string(phase) +
                " without them, and which phase each counts in depends on the schedule";
    d.loc = p_.code[pc_[t]].loc;
    d.threads = {ag.thread, t};
    d.detail = "  the arrive-on: " + p_.code[ag.pc].loc.with_source() + ": " + p_.instr_text(ag.pc) +
               "\n  the arrival: " + p_.code[pc_[t]].loc.with_source() + ": " + p_.instr_text(pc_[t]) +
               "\n  cp.async.mbarrier.arrive.noinc's arrive-on comes when the copies complete (PTX ISA,\n"
               "  cp.async.mbarrier.arrive); the barrier's count must leave no phase that can complete without it\n";
    throw Stop{d};
  }
}

template class Machine<SymbolicDomain>;
template class Machine<ConcreteDomain>;
template class Machine<PayloadDomain>;

}  // namespace tileverify::machine
