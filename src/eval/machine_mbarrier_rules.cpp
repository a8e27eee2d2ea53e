// The mbarrier rules GPUs enforce beyond the PTX ISA's counting
// (docs/evaluator.md, "mbarrier rules the hardware enforces"):
// - a converged warp's arrives at one mbarrier.arrive land as one arrival
//   of their total count, and an arrival larger than the pending count of
//   the barrier's current phase faults the launch;
// - mbarrier.init is made visible to the async proxy (a proxy fence, or
//   fence.mbarrier_init) before a TMA or bulk copy completes on the barrier.
#include "machine.hpp"

namespace tileverify::machine {

// The measured behaviour both rules' reports quote.
static const char* const kOvershootEvidence =
    "  The PTX ISA (mbarrier) defines an arrive as decrementing the pending count of the current phase, which\n"
    "  completes at zero; it does not define an arrive larger than the pending count. An H200 ends the launch with\n"
    "  \"unspecified launch failure\" when one lands (tools/gpu_checks/mbarrier_overshoot.cu: a converged warp's 32\n"
    "  arrives on a barrier with 31 pending fault; the same arrives lane by lane under __syncwarp() do not; count 0\n"
    "  faults at the first arrive).\n";

// Thread t arrives with `count` on b (already checked against the pending
// count). Its group: the lanes of its warp at the same instruction, on the
// same visit to it (the lanes' visits counted per thread), that have
// completed the same number of syncs (so lanes that a __syncwarp() loop lets
// arrive one at a time are apart, as they are on the GPU). A converged warp
// lands the group as one arrival; were a lane of the group to arrive in a
// later phase than the group's first, the phase completed part-way through
// the group, so that one arrival was larger than what the phase had pending:
// on the GPU it faults. (With other warps' arrivals between the group's
// lanes in this run, the order with those first faults too: nothing orders
// another warp's arrive before or after a converged warp's instruction.)
template <class D>
void Machine<D>::arrive_group(std::uint32_t t, Mbar& b, std::int64_t count) {
  const std::uint32_t pc = pc_[t];
  const std::uint32_t visit = ++arrive_visits_[std::uint64_t(t) << 32 | pc];
  const std::uint32_t syncs = syncs_done_.empty() ? 0 : syncs_done_[t];
  auto [it, fresh] = b.groups.try_emplace({t / 32, pc, syncs, visit});
  ArriveGroup& g = it->second;
  if (fresh) {
    g.phase = b.phase;
    g.first = t;
  } else if (g.phase != b.phase) {
    std::string what = "the lanes of warp " + std::to_string(t / 32) + " arrive on " + mbar_name(b) +
                       " at one instruction, and their arrivals (" + std::to_string(g.total + count) +
                       " so far) run past the end of phase " + std::to_string(g.phase) + ": thread " +
                       tname(g.first) + " arrived in phase " + std::to_string(g.phase) + ", thread " +
                       tname(t) + " in phase " + std::to_string(b.phase) +
                       ". A converged warp's arrives land as one arrival of their total, more than the phase had "
                       "pending";
    Diagnostic d;
    d.kind = DiagKind::Trap;
    d.message = std::move(what) + ": on a GPU this faults";
    d.loc = p_.code[pc].loc;
    d.threads = {g.first, t};
    d.detail = "  instruction: " + p_.instr_text(pc) + "\n" + kOvershootEvidence +
               "  Initialise the barrier for a count that whole warps' arrivals reach exactly (a multiple of the\n"
               "  arriving lanes of each warp), or let one elected lane per warp arrive with the warp's count.\n";
    throw Stop{d};
  }
  ++g.lanes;
  g.total += count;
}

// Groups whose phase is two or more behind are over: a lane of one that
// had not arrived by the end of the next phase would have been found then.
template <class D>
void Machine<D>::prune_arrive_groups(Mbar& b) {
  for (auto it = b.groups.begin(); it != b.groups.end();)
    it = it->second.phase + 1 < b.phase ? b.groups.erase(it) : std::next(it);
}

template <class D>
void Machine<D>::mbar_overshoot(std::uint32_t t, const Mbar&, const std::string& what) {
  Diagnostic d;
  d.kind = DiagKind::Trap;
  d.message = what + ": on a GPU this faults";
  d.loc = p_.code[pc_[t]].loc;
  d.threads = {t};
  d.detail = "  instruction: " + p_.instr_text(pc_[t]) + "\n" + kOvershootEvidence;
  throw Stop{d};
}

// fence.mbarrier_init: the thread's mbarrier.init operations so far are
// released (PTX ISA, membar/fence: "fence.mbarrier_init ... prior
// mbarrier.init operations"); kept as its own clock, as for proxy fences.
template <class D>
void Machine<D>::mbar_init_fence(std::uint32_t t) {
  if (!o_.check_races) return;
  if (mbar_init_fence_.empty()) mbar_init_fence_.assign(n_, 0);
  std::uint32_t& own = vc_[std::size_t(t) * w_ + t];
  ++own;
  mbar_init_fence_[t] = own;
}

// A TMA or bulk copy issued by t will complete on b through the async
// proxy. The CUDA C++ Programming Guide's TMA example makes the barrier's
// initialisation visible to the async proxy first (fence.proxy.async after
// mbarrier.init: "make initialized barrier visible in async proxy"); CUTLASS
// does it with fence.mbarrier_init.release.cluster. Either, by the init's
// thread after the init and ordered before the copy, is accepted. Triton
// 3.6 emits neither (only bar.sync) and its kernels compute correctly on an
// H100 and an H200, so without --strict a missing fence is a warning note
// saying both (once a run: the first such barrier); with --strict it is a
// race between the init and the copy.
template <class D>
void Machine<D>::check_init_fenced(std::uint32_t t, Mbar& b) {
  if (!o_.check_races || init_fence_noted_) return;
  const std::uint32_t i = b.init_thread;
  if (proxy_fenced(t, i, b.init_clock)) return;
  if (!mbar_init_fence_.empty()) {
    const std::uint32_t f = mbar_init_fence_[i];
    if (f > b.init_clock && (t == i || ordered(t, i, f))) return;
  }
  if (mbar_init_published(t, b)) return;  // the fence reached t through a relaxed cluster barrier
  init_fence_noted_ = true;
  Diagnostic d;
  d.kind = o_.strict ? DiagKind::Race : DiagKind::Undefined;
  d.warning = !o_.strict;
  d.loc = p_.code[pc_[t]].loc;
  d.threads = t == i ? std::vector<std::uint32_t>{t} : std::vector<std::uint32_t>{i, t};
  d.message = "thread " + tname(t) + "'s copy completes on " + mbar_name(b) + ", whose mbarrier.init (thread " +
              tname(i) + ") no fence.proxy.async or fence.mbarrier_init orders before the copy";
  d.detail = "  the init: " + p_.code[b.init_pc].loc.with_source() + ": " + p_.instr_text(b.init_pc) +
             "\n  the copy: " + p_.instr_text(pc_[t]) +
             "\n  The copy's complete-tx acts on the barrier through the async proxy; the CUDA C++ Programming Guide's\n"
             "  TMA example fences the init before it (fence.proxy.async.shared::cta), CUTLASS with\n"
             "  fence.mbarrier_init.release.cluster. Triton 3.6 emits neither and its kernels compute correctly on an H100\n"
             "  and an H200, so " +
             std::string(o_.strict ? "only --strict reports this (as a race)\n"
                                   : "this run accepts it; --strict reports it as a race\n");
  if (o_.strict) throw Stop{d};
  notes_.push_back(std::move(d));
}

// fence.mbarrier_init.release.cluster, then barrier.cluster.arrive.relaxed,
// then barrier.cluster.wait in every thread: CUTLASS's pipelines publish
// their barriers' initialization to the cluster so (cluster_arrive_relaxed
// in the kernels' prologue). The PTX ISA (membar/fence) makes
// fence.mbarrier_init a light-weight release fence that covers only the
// thread's prior mbarrier.init operations, for a following relaxed cluster
// arrive. So a thread whose cluster wait completes the phase of that arrive
// is ordered after those inits, and after nothing else the initializing
// thread did: a relaxed arrive releases nothing else (the cluster clock
// stays as it was; the inits are exempted where their race is checked,
// check_mbar). t arrives (relaxed) in cluster-barrier phase `phase`.
template <class D>
void Machine<D>::mbar_init_publish(std::uint32_t t, std::uint64_t phase) {
  if (!o_.check_races || mbar_init_fence_.empty() || mbar_init_fence_[t] == 0) return;
  cluster_init_fences_[phase].emplace_back(t, mbar_init_fence_[t]);
}

// t's cluster wait completed phase `phase`: the init fences published in it.
template <class D>
void Machine<D>::mbar_init_observe(std::uint32_t t, std::uint64_t phase) {
  auto it = cluster_init_fences_.find(phase);
  if (it == cluster_init_fences_.end()) return;
  for (const auto& [i, fence] : it->second) {
    std::uint32_t& seen = init_fence_seen_[std::uint64_t(t) << 32 | i];
    seen = std::max(seen, fence);
  }
}

// Whether b's mbarrier.init reached t that way: its thread's fence came after
// the init (the fence's clock is past the init's) and t observed it.
template <class D>
bool Machine<D>::mbar_init_published(std::uint32_t t, const Mbar& b) const {
  if (!b.valid || t == b.init_thread) return false;
  auto it = init_fence_seen_.find(std::uint64_t(t) << 32 | b.init_thread);
  return it != init_fence_seen_.end() && it->second > b.init_clock;
}

template class Machine<SymbolicDomain>;
template class Machine<ConcreteDomain>;
template class Machine<PayloadDomain>;

}  // namespace tileverify::machine
