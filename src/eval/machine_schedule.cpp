// Machine<D>: scheduling the threads and running their instructions (step),
// synchronization (barriers, warp syncs, the vector clocks they join),
// deadlock reports, traps and values that depend on the schedule.
#include "machine.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace tileverify::machine {

// ------------------------------------------------------------ scheduling

template <class D>
void Machine<D>::schedule() {
  wait_mask_.assign(n_, 0);
  last_sync_.assign(std::size_t(n_) * 4, LastSync{});
  syncs_done_.assign(n_, 0);
  exit_pc_.assign(n_, kNone);
  divergence_noted_.assign(p_.code.size(), 0);
  std::mt19937_64 rng(o_.random_schedule ? *o_.random_schedule : 0);
  for (;;) {
    if (o_.random_schedule) {
      std::vector<std::uint32_t> runnable;
      for (;;) {
        runnable.clear();
        for (std::uint32_t t = 0; t < n_; ++t)
          if (state_[t] == TState::Run) runnable.push_back(t);
        if (runnable.empty()) break;
        std::uint32_t t = runnable[rng() % runnable.size()];
        unsigned burst = unsigned(1 + rng() % 8);
        for (unsigned k = 0; k < burst && state_[t] == TState::Run; ++k) step(t);
      }
    } else {
      for (std::uint32_t t = 0; t < n_; ++t)
        while (state_[t] == TState::Run) step(t);
    }
    bool all_done = true;
    for (std::uint32_t t = 0; t < n_; ++t) all_done = all_done && state_[t] == TState::Done;
    if (all_done) return;
    // Threads an mbarrier phase released (machine_async.cpp) run again even
    // when no group of waiting threads completed.
    if (!release_groups() && !any_running()) deadlock();
  }
}

// ------------------------------------------------------------ warp syncs

namespace {

// The kinds of masked warp syncs, whose pairing and mask rules are the same:
// an index into Machine::last_sync_, or -1 for the rest (CTA barriers and
// the .aligned collectives, which name no mask).
int sync_kind(Opcode op) {
  switch (op) {
    case Opcode::WarpSync: return 0;
    case Opcode::Shfl: return 1;
    case Opcode::Vote: return 2;
    case Opcode::Redux: return 3;
    default: return -1;
  }
}

std::string hex(std::uint32_t mask) {
  char s[16];
  std::snprintf(s, sizeof s, "0x%08x", mask);
  return s;
}

// The rule a masked sync of kind k breaks when its members use different
// masks, in the guide's words (CUDA C++ Programming Guide, "Synchronization
// Functions" for __syncwarp, "Warp Shuffle Functions", "Warp Vote Functions"
// and "Warp Reduce Functions" for the others).
const char* mask_rule(int k) {
  switch (k) {
    case 0:
      return "  CUDA C++ Programming Guide, Synchronization Functions: all non-exited threads named in mask\n"
             "  must execute a corresponding __syncwarp() with the same mask, or the result is undefined\n";
    case 1:
      return "  CUDA C++ Programming Guide, Warp Shuffle Functions: all non-exited threads named in mask must\n"
             "  execute the same intrinsic with the same mask, or the result is undefined\n";
    case 2:
      return "  CUDA C++ Programming Guide, Warp Vote Functions: all non-exited threads named in mask must\n"
             "  execute the same intrinsic with the same mask, or the result is undefined\n";
    default:
      return "  CUDA C++ Programming Guide, Warp Reduce Functions: all non-exited threads named in mask must\n"
             "  execute the same intrinsic with the same mask, or the result is undefined\n";
  }
}

}  // namespace

// The member mask of the warp sync thread t arrives at: the mask operand of
// bar.warp.sync and the .sync collectives; the whole warp for the .aligned
// ones (mma.sync, ldmatrix, wmma). PTX ISA, bar.warp.sync (and shfl.sync,
// vote.sync, redux.sync alike): the behavior is undefined if the executing
// thread is not in the membermask, which no schedule can make complete.
template <class D>
std::uint32_t Machine<D>::member_mask(std::uint32_t t, const Instr& in) {
  std::uint32_t mask = 0xffffffffu;
  auto mask_at = [&](std::size_t i) {
    return std::uint32_t(control_int(t, operand(t, in.src[i]), "a member mask"));  // an immediate or a register
  };
  if (in.op == Opcode::WarpSync)
    mask = mask_at(0);
  else if (in.op == Opcode::Shfl)
    mask = mask_at(3);
  else if (in.op == Opcode::Vote || in.op == Opcode::Redux)
    mask = mask_at(1);
  else if (in.op == Opcode::ElectSync)
    mask = mask_at(0);
  if (!(mask >> (t % 32) & 1)) {
    Diagnostic d;
    d.kind = DiagKind::Deadlock;
    d.message = "thread " + tname(t) + " is not in the thread set of its own sync (member mask " + hex(mask) +
                ", lane " + std::to_string(t % 32) + ")";
    d.loc = in.loc;
    d.threads = {t};
    d.detail = "  instruction: " + p_.instr_text(pc_[t]) +
               "\n  PTX ISA, bar.warp.sync (and shfl.sync, vote.sync, redux.sync): the behavior is undefined if the\n"
               "  executing thread is not in the membermask\n";
    throw Stop{d};
  }
  return mask;
}

// Whether waiting threads t and u are at the same warp sync. The member
// masks must be equal (PTX ISA: each waits for the threads of membermask to
// execute one "with the same membermask value"). From sm_70 on (and when
// the target is unknown) the instructions may differ: PTX ISA, bar.warp.sync
// requires the same instruction only "for .target sm_6x or below", and
// shfl.sync, vote.sync and redux.sync wait for the members to execute the
// operation "with the same qualifiers", so those pair across instructions
// of the same operation, mode and type (each member reads its own operands
// from its own instruction). mma.sync, ldmatrix and wmma are .aligned: every
// thread of the warp executes the same instruction.
template <class D>
bool Machine<D>::pairs_with(std::uint32_t t, std::uint32_t u) const {
  if (wait_mask_[t] != wait_mask_[u]) return false;
  if (pc_[t] == pc_[u]) return true;
  const Instr& a = p_.code[pc_[t]];
  const Instr& b = p_.code[pc_[u]];
  if (a.op != b.op || sync_kind(a.op) < 0 || (p_.sm != 0 && p_.sm < 70)) return false;
  return a.op == Opcode::WarpSync || (a.mode == b.mode && a.type == b.type);
}

// Releases every group of waiting threads whose sync is complete.
// bar.sync id, count with count below the CTA size: the barrier completes
// when `count` threads have arrived at barrier `id` (from any instruction),
// as in hardware; the earliest arrivals form the group.
template <class D>
bool Machine<D>::counted(const Instr& in) const {
  return in.op == Opcode::Bar && in.src.size() > 1 && in.src[1].imm != std::int64_t(nb_);
}

template <class D>
bool Machine<D>::release_counted(std::uint32_t t) {
  const Instr& in = p_.code[pc_[t]];
  std::vector<std::uint32_t> waiting;
  for (std::uint32_t u = rank(t) * nb_; u < (rank(t) + 1) * nb_; ++u) {  // a CTA barrier: t's CTA
    if (state_[u] != TState::Wait) continue;
    const Instr& other = p_.code[pc_[u]];
    if (counted(other) && other.src[0].imm == in.src[0].imm && other.src[1].imm == in.src[1].imm) waiting.push_back(u);
  }
  std::size_t count = std::size_t(in.src[1].imm);
  if (waiting.size() < count) return false;
  std::sort(waiting.begin(), waiting.end(), [&](std::uint32_t a, std::uint32_t b) { return arrival_[a] < arrival_[b]; });
  waiting.resize(count);
  std::sort(waiting.begin(), waiting.end());
  join_clocks(waiting);
  record_sync(in, waiting);
  ++stats_.block_syncs;
  for (std::uint32_t u : waiting) {
    state_[u] = TState::Run;
    ++pc_[u];
  }
  return true;
}

// A CTA barrier (bar.sync / barrier.sync without a count) completes when
// every thread that has not exited waits at it, as sm_70+ hardware does (PTX
// ISA, bar/barrier: the barrier waits for the non-exited threads); a thread
// that exited instead is barrier divergence (see barrier_divergence).
// A warp sync completes when every non-exited thread of its member mask
// waits at a sync it pairs with (pairs_with). Two threads that each name the
// other while waiting with different masks can never complete, and a thread
// that exited after a sync its namer was not part of never executed the
// corresponding one: both are reported at once (mismatched_masks).
template <class D>
bool Machine<D>::release_groups() {
  bool any = false;
  std::vector<std::uint32_t> group, exited;
  for (std::uint32_t t = 0; t < n_; ++t) {
    if (state_[t] != TState::Wait) continue;
    const Instr& in = p_.code[pc_[t]];
    if (counted(in)) {
      any = release_counted(t) || any;
      continue;
    }
    if (in.op == Opcode::MbarWait) continue;  // released when its phase completes (mbar_complete)
    if (in.op == Opcode::ClusterBar) {
      any = release_cluster_wait(t) || any;
      continue;
    }
    group.clear();
    exited.clear();
    bool complete = true;
    if (in.op == Opcode::Bar) {
      for (std::uint32_t u = rank(t) * nb_; u < (rank(t) + 1) * nb_ && complete; ++u) {
        if (state_[u] == TState::Done)
          exited.push_back(u);
        else if (state_[u] != TState::Wait || pc_[u] != pc_[t])
          complete = false;
        else
          group.push_back(u);
      }
      if (!complete) continue;
      if (!exited.empty()) barrier_divergence(t, group, exited);
    } else if (warpgroup_op(in.op)) {
      // wgmma.* is .sync.aligned over a warpgroup (PTX ISA, "Warpgroup MMA
      // Instructions"): the four warps of 128 consecutive threads, all at
      // this instruction.
      const std::uint32_t first = warpgroup_first(t);
      for (std::uint32_t u = first; u < first + 128 && complete; ++u) {
        if (u >= (rank(t) + 1) * nb_ || state_[u] != TState::Wait || pc_[u] != pc_[t])
          complete = false;
        else
          group.push_back(u);
      }
      if (!complete) continue;
    } else {
      const std::uint32_t mask = wait_mask_[t], warp = t / 32 * 32;
      const int kind = sync_kind(in.op);
      std::uint32_t with = 0;  // the lanes of the group
      for (std::uint32_t lane = 0; lane < 32 && warp + lane < n_; ++lane) {
        if (!(mask >> lane & 1)) continue;
        const std::uint32_t u = warp + lane;
        if (state_[u] == TState::Done) {
          exited.push_back(u);
        } else if (state_[u] == TState::Wait && pairs_with(t, u)) {
          group.push_back(u);
          with |= 1u << lane;
        } else {
          complete = false;
          if (kind >= 0 && state_[u] == TState::Wait && sync_kind(p_.code[pc_[u]].op) >= 0 &&
              wait_mask_[u] != mask && (wait_mask_[u] >> (t % 32) & 1))
            mismatched_masks(t, u, false);
        }
      }
      if (kind >= 0)
        for (std::uint32_t u : exited) {
          const LastSync& last = last_sync_[std::size_t(u) * 4 + std::size_t(kind)];
          if (last.pc != kNone && (with & ~last.with)) mismatched_masks(t, u, true);
        }
      if (!complete) continue;
    }
    collective(in, group);
    // Shuffles, votes, reductions and elect.sync exchange registers and wait
    // for each other (PTX ISA, shfl.sync: "wait until all non-exited
    // threads corresponding to membermask have executed shfl.sync"), but the
    // memory consistency model gives them no ordering of memory: only
    // bar.warp.sync "also guarantee[s] memory ordering among threads
    // participating in barrier" (PTX ISA, bar.warp.sync), as __syncwarp()
    // does in the CUDA guide. So a shared-memory store, a shuffle and a read
    // of the neighbour's store race (compute-sanitizer's racecheck reports
    // the same).
    // A wgmma.* instruction waits for its warp only (PTX ISA, wgmma.fence /
    // mma_async / commit_group / wait_group: ".sync ... wait until all
    // threads in the warp execute the same" instruction) and orders no
    // memory by itself; the join lets a wgmma read the shared memory its
    // warpgroup wrote before it, as the ISA's outline of the operation does,
    // and wgmma_cross_warp notes a read that relies on it.
    if (!exchanges_only(in.op)) join_clocks(group, warpgroup_op(in.op));
    record_sync(in, group);
    if (in.op == Opcode::Bar)
      ++stats_.block_syncs;
    else
      ++stats_.warp_syncs;
    for (std::uint32_t u : group) {
      state_[u] = TState::Run;
      ++pc_[u];
    }
    any = true;
  }
  return any;
}

// Notes a completed sync in last_sync_ (the members have not moved on yet):
// a masked warp sync becomes its members' last one of its kind; every sync
// adds its members, per warp, to the lanes each has synchronized with since
// its last sync of every kind.
template <class D>
void Machine<D>::record_sync(const Instr& in, const std::vector<std::uint32_t>& group) {
  // The group's lanes in each warp; groups are sorted, so a warp's members
  // are consecutive (a warp sync's are one warp).
  const int kind = sync_kind(in.op);
  for (std::size_t i = 0; i < group.size();) {
    const std::uint32_t warp = group[i] / 32;
    std::size_t j = i;
    std::uint32_t lanes = 0;
    for (; j < group.size() && group[j] / 32 == warp; ++j) lanes |= 1u << (group[j] % 32);
    for (; i < j; ++i) {
      const std::uint32_t u = group[i];
      ++syncs_done_[u];
      LastSync* last = &last_sync_[std::size_t(u) * 4];
      for (int k = 0; k < 4; ++k) last[k].with |= lanes;
      if (kind >= 0) last[kind] = LastSync{pc_[u], wait_mask_[u], lanes};
    }
  }
}

// Two groups of one warp whose warp syncs name each other's threads with
// different masks (exited: u's group exited after a sync of the same kind
// that t's group was not part of, while t's mask names it). Either way the
// masks of corresponding syncs differ: a deadlock on GPUs that wait for the
// named threads, and undefined behavior in the CUDA guide.
template <class D>
void Machine<D>::mismatched_masks(std::uint32_t t, std::uint32_t u, bool exited) {
  const int kind = sync_kind(p_.code[pc_[t]].op);
  const LastSync last = exited ? last_sync_[std::size_t(u) * 4 + std::size_t(kind)] : LastSync{};
  const std::uint32_t mask_b = exited ? last.mask : wait_mask_[u], pc_b = exited ? last.pc : pc_[u];
  const std::uint32_t warp = t / 32 * 32;
  std::vector<std::uint32_t> a, b;
  for (std::uint32_t x = warp; x < warp + 32 && x < n_; ++x) {
    if (state_[x] == TState::Wait && pairs_with(t, x)) {
      a.push_back(x);
    } else if (!exited && state_[x] == TState::Wait && pairs_with(u, x)) {
      b.push_back(x);
    } else if (exited && state_[x] == TState::Done) {
      const LastSync& l = last_sync_[std::size_t(x) * 4 + std::size_t(kind)];
      if (l.pc == last.pc && l.mask == last.mask && !(l.with >> (t % 32) & 1)) b.push_back(x);
    }
  }
  const bool syncwarp = kind == 0 && p_.code[pc_b].op == Opcode::WarpSync;
  const std::string what = syncwarp ? "__syncwarp" : std::string(opcode_name(p_.code[pc_[t]].op));
  Diagnostic d;
  d.kind = DiagKind::Deadlock;
  d.loc = p_.code[pc_[t]].loc;
  std::ostringstream os;
  os << "mismatched " << (syncwarp ? "__syncwarp masks" : "member masks") << ": threads " << names_.list(a)
     << " use mask " << hex(wait_mask_[t]) << ", threads " << names_.list(b) << " mask " << hex(mask_b);
  d.message = os.str();
  os.str("");
  os << "  threads " << names_.list(a) << " wait at " << p_.code[pc_[t]].loc.with_source() << " (" << p_.instr_text(pc_[t])
     << ") with mask " << hex(wait_mask_[t]) << ", which names threads " << names_.list(b) << "\n";
  if (exited)
    os << "  threads " << names_.list(b) << " executed their corresponding " << what << " at "
       << p_.code[pc_b].loc.with_source() << " (" << p_.instr_text(pc_b) << ") with mask " << hex(mask_b)
       << ", without threads " << names_.list(a) << ", and then exited\n";
  else
    os << "  threads " << names_.list(b) << " wait at " << p_.code[pc_b].loc.with_source() << " (" << p_.instr_text(pc_b)
       << ") with mask " << hex(mask_b) << ", which names threads " << names_.list(a)
       << ": neither can complete\n";
  os << mask_rule(kind);
  d.detail = os.str();
  d.threads = a;
  d.threads.insert(d.threads.end(), b.begin(), b.end());
  std::sort(d.threads.begin(), d.threads.end());
  throw Stop{d};
}

// A CTA barrier that completed while some threads of the CTA had exited
// instead of reaching it. The CUDA C++ Programming Guide (Synchronization
// Functions) allows __syncthreads() in conditional code only if the
// condition evaluates identically across the entire thread block; sm_70+
// hardware waits only for the threads that have not exited (PTX ISA,
// bar/barrier), so the kernel runs as the evaluator ran it. A note, once per
// barrier, unless strict, where it stops the run.
template <class D>
void Machine<D>::barrier_divergence(std::uint32_t t, const std::vector<std::uint32_t>& arrived,
                                    const std::vector<std::uint32_t>& exited) {
  const std::uint32_t pc = pc_[t];
  if (!o_.strict && divergence_noted_[pc]) return;
  divergence_noted_[pc] = 1;
  Diagnostic d;
  d.kind = DiagKind::BarrierDivergence;
  d.loc = p_.code[pc].loc;
  d.threads = exited;
  d.message = "__syncthreads() (" + p_.instr_text(pc) + ") completed with " + std::to_string(arrived.size()) +
              " of the CTA's " + std::to_string(nb_) + " threads: the other " + std::to_string(exited.size()) +
              " had exited";
  std::map<std::uint32_t, std::vector<std::uint32_t>> by_exit;
  for (std::uint32_t u : exited) by_exit[exit_pc_[u]].push_back(u);
  std::ostringstream os;
  for (const auto& [at, ts] : by_exit) {
    // The threads are listed above: one place of exit needs no list again.
    os << "  " << (by_exit.size() == 1 ? "they" : "threads " + names_.list(ts)) << " exited ";
    if (at == kNone)
      os << "at the end of the kernel\n";
    else
      os << "at " << p_.code[at].loc.with_source() << " (" << p_.instr_text(at) << ")\n";
  }
  os << "  threads " << names_.list(arrived) << " reached the barrier\n"
     << "  CUDA C++ Programming Guide, Synchronization Functions: __syncthreads() is allowed in conditional\n"
     << "  code only if the conditional evaluates identically across the entire thread block, otherwise\n"
     << "  the code execution is likely to hang or produce unintended side effects\n"
     << "  sm_70 and later GPUs wait only for the threads that have not exited (PTX ISA, bar/barrier), so\n"
     << "  the barrier completes there as it did here"
     << (o_.strict ? "\n" : "; --strict reports this as an error\n");
  d.detail = os.str();
  if (o_.strict) throw Stop{d};
  notes_.push_back(std::move(d));
}

// No thread can run and no sync can complete. The report lists each group
// of threads waiting at one instruction with one mask and the threads it
// needs, and follows the wait-for relation between the groups (a Boost.Graph
// digraph: an edge from a group to each group holding threads it needs) to
// a cycle, or else a chain that ends at a group nothing else will join.
template <class D>
void Machine<D>::deadlock() {
  struct Group {
    std::uint32_t pc = 0, mask = 0;  // mask: an mbarrier waiter's barrier
    std::vector<std::uint32_t> threads, needs;
    std::string text = {}, summary = {};  // an mbarrier or cluster-barrier waiter's lines (async_wait_text)
  };
  std::vector<Group> groups;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::size_t> index;
  std::vector<std::size_t> group_of(n_, SIZE_MAX);
  std::uint32_t done = 0;
  for (std::uint32_t t = 0; t < n_; ++t) {
    if (state_[t] == TState::Done) ++done;
    if (state_[t] != TState::Wait) continue;
    const Opcode wop = p_.code[pc_[t]].op;
    const bool masked = wop != Opcode::Bar && wop != Opcode::MbarWait && wop != Opcode::ClusterBar;
    // Threads blocked on an mbarrier are grouped by the barrier they wait on.
    // CTA barriers by CTA (a cluster's CTAs run together).
    auto key = std::make_pair(pc_[t], masked ? wait_mask_[t] : wop == Opcode::MbarWait ? mbar_waiting_on(t)
                                                              : wop == Opcode::Bar     ? rank(t)
                                                                                       : 0u);
    auto it = index.emplace(key, groups.size()).first;
    if (it->second == groups.size()) groups.push_back(Group{key.first, key.second, {}, {}, {}, {}});
    groups[it->second].threads.push_back(t);
    group_of[t] = it->second;
  }
  for (Group& g : groups) {
    const std::uint32_t rep = g.threads[0];
    const Instr& in = p_.code[g.pc];
    if (in.op == Opcode::MbarWait || in.op == Opcode::ClusterBar) {
      g.text = async_wait_text(g.pc, in.op == Opcode::MbarWait ? g.mask : kNone, g.threads, &g.needs, &g.summary);
    } else if (in.op == Opcode::Bar) {
      for (std::uint32_t u = rank(rep) * nb_; u < (rank(rep) + 1) * nb_; ++u) {
        if (state_[u] == TState::Done) continue;
        const Instr& other = p_.code[pc_[u]];
        bool same = counted(in) ? other.op == Opcode::Bar && counted(other) && other.src[0].imm == in.src[0].imm
                                : pc_[u] == g.pc;
        if (!same) g.needs.push_back(u);
      }
    } else if (warpgroup_op(in.op)) {
      const std::uint32_t first = warpgroup_first(rep);
      for (std::uint32_t u = first; u < first + 128; ++u)
        if (u < (rank(rep) + 1) * nb_ && !(state_[u] == TState::Wait && pc_[u] == g.pc)) g.needs.push_back(u);
    } else {
      const std::uint32_t warp = rep / 32 * 32;
      for (std::uint32_t lane = 0; lane < 32 && warp + lane < n_; ++lane) {
        const std::uint32_t u = warp + lane;
        if ((g.mask >> lane & 1) && state_[u] != TState::Done && !(state_[u] == TState::Wait && pairs_with(rep, u)))
          g.needs.push_back(u);
      }
    }
  }
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  Graph graph(groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    std::vector<std::size_t> to;
    for (std::uint32_t u : groups[i].needs)
      if (group_of[u] != SIZE_MAX) to.push_back(group_of[u]);
    std::sort(to.begin(), to.end());
    to.erase(std::unique(to.begin(), to.end()), to.end());
    for (std::size_t j : to) boost::add_edge(i, j, graph);
  }
  std::vector<int> component(groups.size());
  boost::strong_components(graph, boost::make_iterator_property_map(component.begin(), boost::get(boost::vertex_index, graph)));
  std::vector<std::size_t> size(groups.size(), 0);
  for (int c : component) ++size[std::size_t(c)];
  // A cycle: from a group in a strongly connected component of two or more,
  // step to successors inside it until a group repeats. Else the chain from
  // the first group to a group with no successor.
  std::size_t start = 0;
  bool cyclic = false;
  for (std::size_t i = 0; i < groups.size() && !cyclic; ++i)
    if (size[std::size_t(component[i])] > 1) start = i, cyclic = true;
  std::vector<std::size_t> path;
  std::vector<std::size_t> seen(groups.size(), SIZE_MAX);
  for (std::size_t g = start;;) {
    if (seen[g] != SIZE_MAX) {
      path.erase(path.begin(), path.begin() + std::ptrdiff_t(seen[g]));
      path.push_back(g);  // closes the cycle
      break;
    }
    seen[g] = path.size();
    path.push_back(g);
    std::size_t next = SIZE_MAX;
    for (auto [e, end] = boost::out_edges(g, graph); e != end && next == SIZE_MAX; ++e) {
      std::size_t h = boost::target(*e, graph);
      if (!cyclic || component[h] == component[g]) next = h;
    }
    if (next == SIZE_MAX) break;
    g = next;
  }

  Diagnostic d;
  d.kind = DiagKind::Deadlock;
  d.message = "no thread can make progress: " + std::to_string(n_ - done) +
              " threads wait at syncs whose thread sets never complete";
  for (const Group& g : groups)
    if (!g.summary.empty()) {  // the first barrier wait, in the message's line
      d.message += " (" + g.summary + ")";
      break;
    }
  d.loc = p_.code[groups[0].pc].loc;
  std::ostringstream os;
  for (const Group& g : groups) {
    if (!g.text.empty()) {
      os << g.text;
      d.threads.insert(d.threads.end(), g.threads.begin(), g.threads.end());
      continue;
    }
    os << "  waiting at " << p_.code[g.pc].loc.with_source() << " (" << p_.instr_text(g.pc) << "): threads "
       << names_.list(g.threads);
    if (p_.code[g.pc].op != Opcode::Bar) os << " with mask " << hex(g.mask);
    if (!g.needs.empty()) os << "; it needs threads " << names_.list(g.needs) << ", which are at another sync";
    os << "\n";
    d.threads.insert(d.threads.end(), g.threads.begin(), g.threads.end());
  }
  std::sort(d.threads.begin(), d.threads.end());
  // The threads group g needs that group h holds.
  auto held = [&](std::size_t g, std::size_t h) {
    std::vector<std::uint32_t> ts;
    for (std::uint32_t u : groups[g].needs)
      if (group_of[u] == h) ts.push_back(u);
    return ts;
  };
  std::vector<std::string> why;  // the rules the hops of the path break
  auto note = [&](const std::string& w) {
    if (std::find(why.begin(), why.end(), w) == why.end()) why.push_back(w);
  };
  os << "  wait-for " << (cyclic ? "cycle" : "chain") << ": ";
  for (std::size_t i = 0; i < path.size(); ++i) {
    const Group& g = groups[path[i]];
    if (cyclic && i + 1 == path.size()) break;  // the first group again
    os << (i ? ",\n    which wait at " : "threads " + names_.list(g.threads) + " wait at ")
       << p_.code[g.pc].loc.with_source();
    if (i + 1 < path.size()) {
      os << " for threads " << names_.list(held(path[i], path[i + 1]));
      const Instr& a = p_.code[g.pc];
      const Instr& b = p_.code[groups[path[i + 1]].pc];
      if (a.op == Opcode::Bar && b.op == Opcode::Bar && !counted(a) && !counted(b))
        note("  bar.sync is barrier.sync.aligned: all threads of the CTA must execute the same barrier instruction\n"
             "  (PTX ISA, bar/barrier); __syncthreads() is allowed in conditional code only if the conditional\n"
             "  evaluates identically across the entire thread block (CUDA C++ Programming Guide, Synchronization\n"
             "  Functions). Measured on sm_90 GPUs (H100, H200): the two instructions complete together, as one\n"
             "  barrier would, so tests pass; compute-sanitizer --tool synccheck reports \"Barrier error detected.\n"
             "  Divergent thread(s) in block\" and the launch fails. Other GPUs and compilers need not do the same.\n");
      else if (a.op == Opcode::MbarWait || b.op == Opcode::MbarWait)
        note("  an mbarrier phase completes when its pending arrivals reach zero and its tx-count is zero (PTX ISA,\n"
             "  mbarrier, phase completion); a thread blocked in a wait loop arrives nowhere\n");
      else if (a.op == b.op && sync_kind(a.op) < 0 && a.op != Opcode::Bar && a.op != Opcode::ClusterBar)
        note("  mma.sync, ldmatrix and wmma are .aligned: all threads of the warp must execute the same\n"
             "  instruction (PTX ISA)\n");
      else if (a.op == b.op && sync_kind(a.op) >= 0 && g.mask == groups[path[i + 1]].mask) {
        if (p_.sm != 0 && p_.sm < 70)
          note("  for .target sm_6x or below, all threads in membermask must execute the same " +
               std::string(opcode_name(a.op)) + "\n  instruction in convergence (PTX ISA, " + opcode_name(a.op) +
               "); this code is for sm_" + std::to_string(p_.sm) + "\n");
        else
          note("  " + std::string(opcode_name(a.op)) + " waits for the threads of its mask to execute it with the same\n"
               "  qualifiers and the same membermask (PTX ISA, " + opcode_name(a.op) + ")\n");
      }
    } else {
      os << ", which no other thread will join";
    }
  }
  os << "\n";
  for (const std::string& w : why) os << w;
  if (done) os << "  " << done << " threads have exited\n";
  d.detail = os.str();
  throw Stop{d};
}

// Every member first ticks its own clock, then all take the join: each
// member's accesses before the sync are now ordered before everything any
// member does after it.
template <class D>
void Machine<D>::join_clocks(const std::vector<std::uint32_t>& group, bool warpgroup) {
  if (!o_.check_races || group.empty()) return;
  for (std::uint32_t u : group) ++vc_[std::size_t(u) * w_ + u];
  std::vector<std::uint32_t> j(w_, 0);
  for (std::uint32_t u : group) {
    const std::uint32_t* c = &vc_[std::size_t(u) * w_];
    for (std::uint32_t k = 0; k < w_; ++k) j[k] = std::max(j[k], c[k]);
  }
  for (std::uint32_t u : group) std::copy(j.begin(), j.end(), vc_.begin() + std::ptrdiff_t(std::size_t(u) * w_));
  if (warpgroup || sync_vc_.empty()) return;
  // The same join without what wgmma.* joins taught: each member's own
  // clock from vc_, the others from sync_vc_.
  std::vector<std::uint32_t> r(n_, 0);
  for (std::uint32_t u : group) {
    const std::uint32_t* c = &sync_vc_[std::size_t(u) * n_];
    for (std::uint32_t k = 0; k < n_; ++k) r[k] = std::max(r[k], k == u ? vc_[std::size_t(u) * w_ + u] : c[k]);
  }
  for (std::uint32_t u : group) std::copy(r.begin(), r.end(), sync_vc_.begin() + std::ptrdiff_t(std::size_t(u) * n_));
}

// ------------------------------------------------------------ execution

template <class D>
void Machine<D>::step(std::uint32_t t) {
  if (++stats_.thread_instructions > o_.max_steps)
    fail(DiagKind::Limit, t,
         "step limit of " + std::to_string(o_.max_steps) +
             " thread-instructions reached (an endless loop, or a kernel larger than the limit)");
  if ((stats_.thread_instructions & 4095) == 0) check_limits(t);
  if (stats_.thread_instructions == o_.long_run_steps && o_.on_long_run) o_.on_long_run();
  std::uint32_t pc = pc_[t];
  if (pc >= p_.code.size()) {
    state_[t] = TState::Done;
    return;
  }
  const Instr& in = p_.code[pc];
  if (in.guard >= 0) {
    const Val<V>& g = reg(t, std::uint32_t(in.guard)).kind == VKind::Undef ? mark_undefined(t, std::uint32_t(in.guard))
                                                                            : reg(t, std::uint32_t(in.guard));
    if (g.kind == VKind::Cond) fail(DiagKind::NotStructured, t, "an instruction predicated on tensor data");
    if (g.sched) schedule_dependent(t, g.sched, "a branch or predicated instruction");
    if (__builtin_expect(g.aff != 0, 0)) affine_break(t, "a guard predicate depends on the CTA index");
    bool on = as_int(t, g, "a guard predicate") != 0;
    if (on == in.guard_negated) {
      pc_[t] = pc + 1;
      return;
    }
  }
  // The synchronizing and collective instructions the switch below runs
  // itself (not the ALU's, not plain accesses): their operands, in a run that
  // records how values move with the CTA index.
  if (__builtin_expect(aff_ != nullptr, 0) && steps_itself(in.op)) affine_operands(t, in);
  switch (in.op) {
    case Opcode::Bra:
      if (in.target <= pc) check_way_out(t, in.target);  // only a loop can keep a thread forever
      pc_[t] = in.target;
      return;
    case Opcode::Ret:
      exit_pc_[t] = pc;  // barrier divergence reports where threads exited
      state_[t] = TState::Done;
      return;
    case Opcode::Bar:
      if (counted(in)) {
        std::int64_t c = in.src[1].imm;
        if (c <= 0 || c % 32 != 0 || c > std::int64_t(nb_))
          fail(DiagKind::Unsupported, t,
               "a barrier thread count must be a positive multiple of 32 up to the CTA size, not " + std::to_string(c));
      }
      arrival_[t] = ++arrivals_;
      state_[t] = TState::Wait;
      return;
    case Opcode::WarpSync:
    case Opcode::Shfl:
    case Opcode::Vote:
    case Opcode::Redux:
    case Opcode::Mma:
    case Opcode::LdMatrix:
    case Opcode::WmmaLoad:
    case Opcode::WmmaMma:
    case Opcode::WmmaStore:
    case Opcode::ElectSync:
    case Opcode::StMatrix:
    case Opcode::WgmmaFence:
    case Opcode::WgmmaCommit:
    case Opcode::WgmmaWait:
    case Opcode::WgmmaMma:
      wait_mask_[t] = member_mask(t, in);
      state_[t] = TState::Wait;
      return;
    case Opcode::MbarInit:
    case Opcode::MbarArrive:
    case Opcode::MbarTx:
    case Opcode::MbarWait:
    case Opcode::MbarInval:
    case Opcode::TmaLoad:
    case Opcode::TmaStore:
    case Opcode::BulkCopy:
    case Opcode::BulkCommit:
    case Opcode::BulkWait:
    case Opcode::ClusterBar:
    case Opcode::Mapa:
    case Opcode::Timer:
    case Opcode::Nanosleep:
    case Opcode::CpAsyncMbarArrive:
      if (!async_step(t, in)) return;  // t waits
      break;
    case Opcode::Fence:
      // fence.proxy.async orders this thread's generic-proxy writes before
      // the async proxy's accesses (machine_async.cpp); other fences add no
      // happens-before edge (docs/evaluator.md, "Fences").
      if (in.mode == std::uint8_t(FenceKind::ProxyAsync)) async_proxy_fence(t);
      if (in.mode == std::uint8_t(FenceKind::MbarrierInit)) mbar_init_fence(t);
      break;
    case Opcode::Ld:
      load(t, in);
      break;
    case Opcode::St:
      store(t, in);
      break;
    case Opcode::Atom:
      atomic(t, in);
      break;
    case Opcode::Trap:
      trap(t, in);  // stops the run
    case Opcode::CpAsync:
      cp_async(t, in);
      break;
    case Opcode::CpAsyncCommit:
      need_copy_groups();
      copy_groups_[t].push_back(std::move(open_copies_[t]));
      open_copies_[t].clear();
      break;
    case Opcode::CpAsyncWait: {
      // wait_all is commit_group + wait_group 0 (PTX ISA).
      need_copy_groups();
      if (in.mode == 1) {
        copy_groups_[t].push_back(std::move(open_copies_[t]));
        open_copies_[t].clear();
      }
      std::size_t keep = in.mode == 1 ? 0 : std::size_t(in.src[0].imm);
      while (copy_groups_[t].size() > keep) {
        retire(t, copy_groups_[t].front());
        copy_groups_[t].pop_front();
      }
      break;
    }
    default:
      alu(t, in);
      break;
  }
  pc_[t] = pc + 1;
}

// trap, or a failed assert(): on a GPU the kernel stops here with an error
// (the launch fails). The assert's message, file and function are C strings
// in module data ($str arrays), read from their initializers.
template <class D>
void Machine<D>::trap(std::uint32_t t, const Instr& in) {
  auto arg = [&](std::size_t i) -> Val<V> {
    if (i >= in.src.size()) return Val<V>{};
    const Operand& o = in.src[i];
    if (o.kind == Operand::Kind::Reg) return reg(t, o.index);  // an unset register: no text, not an error
    return o.kind == Operand::Kind::None ? Val<V>{} : operand(t, o);
  };
  auto text = [&](std::size_t i) {
    std::string s;
    Val<V> v = arg(i);
    if (v.kind != VKind::Ptr || v.i < 0) return s;
    const std::vector<std::uint8_t>& bytes = mem_[v.buf].init;
    for (std::size_t k = std::size_t(v.i); k < bytes.size() && bytes[k] != 0 && s.size() < 400; ++k)
      s += bytes[k] >= 0x20 && bytes[k] < 0x7f ? char(bytes[k]) : '?';
    return s;
  };
  Diagnostic d;
  d.kind = DiagKind::Trap;
  d.loc = in.loc;
  d.threads = {t};
  if (in.mode == 1) {
    std::string msg = text(0), file = text(1), func = text(3);
    Val<V> line = arg(2);
    d.message = msg.empty() ? "an assert() failed" : "assertion `" + msg + "` failed";
    std::string where = file;
    if (!file.empty() && line.kind == VKind::Int) where += ":" + std::to_string(line.i);
    if (!func.empty()) where += (where.empty() ? "in " : ", in ") + func;
    if (!where.empty()) d.message += " (" + where + ")";
  } else if (in.mode == 2) {
    d.message = "the kernel executed a breakpoint (brkpt: CUTLASS's CUTE_INVALID_CONTROL_PATH, __brkpt())";
  } else {
    d.message = "the kernel executed a trap instruction (__trap())";
  }
  d.detail = "  instruction: " + p_.instr_text(pc_[t]) + "\n" +
             (in.mode == 2 ? "  the PTX ISA says brkpt suspends execution; with no debugger attached the launch fails\n"
                             "  (unspecified launch failure on an H200, tools/gpu_checks/brkpt_check.cu)\n"
                           : "  on a GPU the kernel stops here and the launch fails with an error\n");
  throw Stop{d};
}

// t: the thread that uses the value (kNone for an output: then the atomic is the place).
// A mark names an atom (a schedule-dependent old value) or a shuffle (an
// undefined value read from outside the member mask).
template <class D>
void Machine<D>::schedule_dependent(std::uint32_t t, std::uint32_t sched, const std::string& what) {
  const std::uint32_t atom_pc = sched - 1;
  auto undefined = undefined_why_.find(atom_pc);
  if (undefined != undefined_why_.end()) {
    // A shuffle's own undefined read (outside the mask, an exited lane), or
    // a register never written, read by any instruction (a shuffle too).
    const bool shuffle = undefined->second.compare(0, 12, "in a shuffle") == 0;
    const bool at_shuffle = p_.code[atom_pc].op == Opcode::Shfl;
    const bool local = p_.code[atom_pc].op == Opcode::Ld;  // Machine::unset_local
    Diagnostic d;
    d.kind = DiagKind::Uninitialized;
    d.message = what + " depends on an undefined value: " + undefined->second;
    d.loc = p_.code[t == kNone ? atom_pc : pc_[t]].loc;
    if (t != kNone) d.threads = {t};
    d.detail = std::string(at_shuffle ? "  the shuffle: " : "  the read: ") + p_.code[atom_pc].loc.with_source() + ": " +
               p_.instr_text(atom_pc) + "\n" +
               (shuffle ? "  CUDA leaves undefined what a shuffle reads from a lane outside its member mask or from\n"
                          "  an exited thread (see NVIDIA/cuda-samples#398 for this bug in reduce7); an H100 happened\n"
                          "  to return 0 in our test, which no GPU promises\n"
                : local ? "  local memory holds no defined value until it is written: copying such bytes (a struct\n"
                          "  copied member by member, padding included) is harmless, using them is not\n"
                        : "  a register holds no defined value until it is written (a predicated load that this\n"
                          "  thread skipped, say): reading it is harmless only while the value is discarded\n");
    throw Stop{d};
  }
  if (p_.code[atom_pc].op == Opcode::Timer) timer_reaches(t, atom_pc, what);  // machine_async.cpp
  if (opaque_pcs_.count(atom_pc)) {
    Diagnostic d;
    d.kind = DiagKind::Unsupported;
    d.message = what + " depends on a %reserved_smem_offset register, the place of shared memory the CUDA runtime "
                       "reserves for itself, which tileverify does not model";
    d.loc = p_.code[t == kNone ? atom_pc : pc_[t]].loc;
    if (t != kNone) d.threads = {t};
    d.detail = "  the read: " + p_.code[atom_pc].loc.with_source() + ": " + p_.instr_text(atom_pc) + "\n";
    throw Stop{d};
  }
  if (slot_accesses_.count(atom_pc) ||
      (what == "an address" && p_.code[atom_pc].op == Opcode::Atom &&
       AtomOp(p_.code[atom_pc].mode) == AtomOp::Add && !dtype_is_float(p_.code[atom_pc].type))) {
    // machine_slots.cpp: not a race, but an order tileverify cannot follow.
    const auto at = slot_accesses_.find(atom_pc);
    const std::uint32_t atom = at == slot_accesses_.end() ? atom_pc : at->second;
    Diagnostic d;
    d.kind = DiagKind::Unsupported;
    d.message = at != slot_accesses_.end()
                    ? what + " depends on which thread took which slot from an atom.add, which depends on the schedule"
                    : what + " depends on the value an atom.add returned, computed in a way tileverify cannot show "
                             "gives each thread its own element";
    d.loc = p_.code[t == kNone ? atom_pc : pc_[t]].loc;
    if (t != kNone) d.threads = {t};
    d.detail = "  the atomic: " + p_.code[atom].loc.with_source() + ": " + p_.instr_text(atom) + "\n";
    if (at != slot_accesses_.end())
      d.detail += "  the access at the slot: " + p_.code[atom_pc].loc.with_source() + ": " + p_.instr_text(atom_pc) + "\n";
    d.detail += at != slot_accesses_.end()
                    ? "  the slots atom.add hands out are distinct in every order of the threads (no race), but\n"
                      "  which thread gets which slot is not: the elements are in a schedule's order, and\n"
                      "  tileverify checks outputs that are the same in every schedule\n"
                    : "  tileverify follows a slot through add, sub, mul, shl and widening of the 64-bit address\n"
                      "  (base + k * old): a slot used any other way is not shown distinct\n";
    throw Stop{d};
  }
  if (p_.code[atom_pc].op == Opcode::MbarWait) {
    // test_wait / try_wait outside a retry loop (machine_async.cpp, retry_wait).
    Diagnostic d;
    d.kind = DiagKind::Race;
    d.message = what + " depends on whether an mbarrier phase had completed when test_wait / try_wait ran, which "
                       "depends on the schedule";
    d.loc = p_.code[t == kNone ? atom_pc : pc_[t]].loc;
    if (t != kNone) d.threads = {t};
    d.detail = "  the wait: " + p_.code[atom_pc].loc.with_source() + ": " + p_.instr_text(atom_pc) +
               "\n  mbarrier.test_wait never blocks and mbarrier.try_wait may return false before the phase completes\n"
               "  (PTX ISA, mbarrier.test_wait / mbarrier.try_wait): only a loop that retries until it returns true\n"
               "  waits for the phase; any other use of the result sees the timing\n";
    throw Stop{d};
  }
  Diagnostic d;
  d.kind = DiagKind::Race;
  d.message = what + " depends on the value an atomic returned, which depends on the schedule";
  d.loc = p_.code[t == kNone ? atom_pc : pc_[t]].loc;
  if (t != kNone) d.threads = {t};
  d.detail = "  the atomic: " + p_.code[atom_pc].loc.with_source() + ": " + p_.instr_text(atom_pc) +
             "\n  atomics run in an order the schedule decides: the final value they accumulate does not\n"
             "  depend on it, but the old value each one returns does\n";
  throw Stop{d};
}

template class Machine<SymbolicDomain>;
template class Machine<ConcreteDomain>;
template class Machine<PayloadDomain>;

}  // namespace tileverify::machine
