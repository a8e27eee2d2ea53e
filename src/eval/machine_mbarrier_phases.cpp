// Machine<D>: which phase of an mbarrier a parity wait can see
// (docs/evaluator.md, "Asynchronous operations (sm_90)", *Waits*).
//
// A retry loop on mbarrier.try_wait.parity blocks until "the phase
// indicated by phaseParity" has completed (PTX ISA, mbarrier.test_wait /
// try_wait), and the evaluator runs it in one schedule. That is exact when
// the thread is ordered after every phase completion but the last one it
// could meet: then the loop sees the same phase however late it runs. It is
// not when a completion the thread is not ordered after changes what the
// parity names. A wait for parity 1 on a barrier still in phase 0 passes at
// once (the phase before phase 0 counts as complete); on the same barrier
// in phase 1 it waits for phase 1. If phase 0 was completed by copies or
// arrivals nothing orders before the wait, a GPU may run the wait before or
// after them: the thread then either reads what the phase was to publish
// before it landed, or waits for a phase that may never come. Where the
// evaluator's eager copies completed the phase first, it saw only the
// second (a deadlock, or a late pass), so the choice itself is reported:
// a race on the barrier, naming the wait and the completion.
#include "machine.hpp"

#include <algorithm>
#include <sstream>
#include <string>

namespace tileverify::machine {

// An operation of `who` on b at `clock` (its epoch: ordered before a thread
// u exactly when ordered(u, who, clock)), done while b was in phase
// `before`. Only the marks of the last two phases can decide a wait (see
// check_parity_wait), so older ones are dropped.
template <class D>
void Machine<D>::mbar_mark(std::uint32_t who, std::uint32_t clock, Mbar& b, std::uint64_t before, std::uint32_t pc) {
  if (!o_.check_races) return;
  if (!b.marks.empty() && b.marks.front().phase + 1 < b.phase) {
    auto keep = std::find_if(b.marks.begin(), b.marks.end(), [&](const PhaseMark& m) { return m.phase + 1 >= b.phase; });
    b.marks.erase(b.marks.begin(), keep);
  }
  b.marks.push_back(PhaseMark{who, clock, pc, b.phase, b.phase > before});
}

// Thread t is at a retry loop's parity wait on b (or is released from one:
// then b has just completed the phase it waited for). The wait could run
// when b is in any phase x from the first one whose completion t is not
// ordered after, up to the phase b is in now: in x it passes at once,
// seeing phase x - 1, if x's parity is not P, and otherwise waits for x. The
// phase seen is the same for every such x only if t is ordered after the
// completion of the phase before the one it sees or waits for. "Ordered
// after the completion" is shown by any operation on b made after it (an
// arrival, a complete-tx, a wait that saw the phase) that is ordered before
// t: the barrier's operations take effect one at a time, so t cannot see a
// phase earlier than one such an operation saw.
//
// A wait that passes, at once or when released, is then a race. One that
// blocks may never be released, and a GPU that ran it late hangs there just
// as this run would (an H200 hangs on examples/cutlass's
// wgmma_tma_sm90_parity): it gets a warning note saying why, and is reported
// as the race if it is released.
template <class D>
void Machine<D>::check_parity_wait(std::uint32_t t, const Instr& in, const Mbar& b) {
  if (!o_.check_races) return;
  const bool released = state_[t] == TState::Wait;
  const std::uint64_t now = released ? b.phase - 1 : b.phase;  // b's phase when t reached the wait
  if (now == 0) return;
  const std::uint64_t parity =
      std::uint64_t(control_int(t, operand(t, in.src[1]), "an mbarrier wait's phase parity")) & 1;
  const bool passes = !released && (now & 1) != parity;
  const std::uint64_t need = passes ? now - 1 : now;  // the phase whose predecessor t must be ordered after
  if (need == 0) return;
  const PhaseMark* completion = nullptr;
  for (auto it = b.marks.rbegin(); it != b.marks.rend() && it->phase >= need; ++it) {
    if (ordered(t, it->who, it->clock)) return;
    if (it->phase == need && it->completed) completion = &*it;
  }
  const std::uint32_t pc = pc_[t];
  const bool blocks = !released && !passes;
  Diagnostic d;
  d.kind = DiagKind::Race;
  d.message = "the mbarrier wait on " + mbar_name(b) + " for parity " + std::to_string(parity) +
              (blocks ? " waits for phase " + std::to_string(now) + ", but" : " sees a phase the schedule decides:") +
              " nothing orders the completion of its phase " + std::to_string(need - 1) + " before this wait";
  d.loc = in.loc;
  std::ostringstream os;
  os << "  the wait: " << in.loc.with_source() << ": " << p_.instr_text(pc) << "\n";
  if (completion) {
    if (completion->who >= n_) {
      const Agent& a = agents_[completion->who - n_];
      d.threads = {a.thread, t};
      os << "  phase " << need - 1 << " completed: the complete-tx of the copy thread " << a.thread << " issued at "
         << p_.code[a.pc].loc.with_source() << ": " << p_.instr_text(a.pc) << "\n";
    } else {
      d.threads = {completion->who, t};
      os << "  phase " << need - 1 << " completed: thread " << completion->who << " at "
         << p_.code[completion->pc].loc.with_source() << ": " << p_.instr_text(completion->pc) << "\n";
    }
  } else {
    d.threads = {t};
  }
  const std::uint64_t early = need - 1;  // a phase the wait may run in, whose parity is not P
  os << "  run while the barrier is in phase " << early << ", the wait passes at once, ";
  if (early == 0)
    os << "before any phase has completed (a barrier counts the phase before phase 0 as complete)";
  else
    os << "seeing phase " << early - 1;
  os << ";\n  in this run the barrier " << (blocks ? "is" : "was") << " in phase " << now << ", and the wait "
     << (passes     ? "passes seeing phase " + std::to_string(now - 1)
         : released ? "waited for phase " + std::to_string(now)
                    : "waits for phase " + std::to_string(now))
     << (blocks ? " (if nothing completes it, the deadlock reported is this wait)" : "") << "\n"
     << "  A parity wait waits for the phase with that parity, the current phase or the one before it (PTX ISA,\n"
     << "  mbarrier.test_wait / try_wait): the parity must name the phase this thread expects to complete next,\n"
     << "  and the thread must be ordered after the phase before it (for a pipeline stage: a wait's parity flips\n"
     << "  each time the stage index wraps, starting from 0 for the consumer of a full barrier)\n";
  d.detail = os.str();
  if (!blocks) throw Stop{d};
  if (async_noted_[pc] & 2) return;
  async_noted_[pc] |= 2;
  d.warning = true;
  notes_.push_back(std::move(d));
}

template class Machine<SymbolicDomain>;
template class Machine<ConcreteDomain>;
template class Machine<PayloadDomain>;

}  // namespace tileverify::machine
