// Machine<D>: scheduling the threads and running their instructions (step),
// synchronization (barriers, warp syncs, the vector clocks they join),
// deadlock reports, traps and values that depend on the schedule.
#include "machine.hpp"

#include <algorithm>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace tileverify::machine {

// ------------------------------------------------------------ scheduling

template <class D>
void Machine<D>::schedule() {
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
    if (!release_groups()) deadlock();
  }
}

// The thread set a sync instruction names, for thread t.
template <class D>
std::vector<std::uint32_t> Machine<D>::sync_set(std::uint32_t t, const Instr& in) {
  std::vector<std::uint32_t> s;
  if (in.op == Opcode::Bar) {
    s.resize(n_);
    for (std::uint32_t u = 0; u < n_; ++u) s[u] = u;
    return s;
  }
  s.reserve(32);
  std::uint32_t mask = 0xffffffffu;  // mma.sync.aligned and ldmatrix.sync.aligned: the whole warp
  auto mask_at = [&](std::size_t i) {
    return std::uint32_t(as_int(t, operand(t, in.src[i]), "a member mask"));  // an immediate or a register
  };
  if (in.op == Opcode::WarpSync)
    mask = mask_at(0);
  else if (in.op == Opcode::Shfl)
    mask = mask_at(3);
  else if (in.op == Opcode::Vote || in.op == Opcode::Redux)
    mask = mask_at(1);
  std::uint32_t warp = t / 32;
  for (std::uint32_t lane = 0; lane < 32; ++lane)
    if (mask >> lane & 1) {
      std::uint32_t u = warp * 32 + lane;
      if (u < n_) s.push_back(u);
    }
  return s;
}

// Releases every group of waiting threads whose sync is complete.
// bar.sync id, count with count below the CTA size: the barrier completes
// when `count` threads have arrived at barrier `id` (from any instruction),
// as in hardware; the earliest arrivals form the group.
template <class D>
bool Machine<D>::counted(const Instr& in) const {
  return in.op == Opcode::Bar && in.src.size() > 1 && in.src[1].imm != std::int64_t(n_);
}

template <class D>
bool Machine<D>::release_counted(std::uint32_t t) {
  const Instr& in = p_.code[pc_[t]];
  std::vector<std::uint32_t> waiting;
  for (std::uint32_t u = 0; u < n_; ++u) {
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
  ++stats_.block_syncs;
  for (std::uint32_t u : waiting) {
    state_[u] = TState::Run;
    ++pc_[u];
  }
  return true;
}

template <class D>
bool Machine<D>::release_groups() {
  bool any = false;
  for (std::uint32_t t = 0; t < n_; ++t) {
    if (state_[t] != TState::Wait) continue;
    const Instr& in = p_.code[pc_[t]];
    if (counted(in)) {
      any = release_counted(t) || any;
      continue;
    }
    std::vector<std::uint32_t> set = sync_set(t, in);
    if (std::find(set.begin(), set.end(), t) == set.end())
      fail(DiagKind::Deadlock, t, "thread " + std::to_string(t) + " is not in the thread set of its own sync");
    bool complete = true;
    std::vector<std::uint32_t> group;
    for (std::uint32_t u : set) {
      if (state_[u] == TState::Done) continue;
      // A CTA barrier's set is every thread, whoever asks: only a warp
      // collective's (its mask operand) needs each member's own.
      if (state_[u] != TState::Wait || pc_[u] != pc_[t] ||
          (in.op != Opcode::Bar && sync_set(u, p_.code[pc_[u]]) != set)) {
        complete = false;
        break;
      }
      group.push_back(u);
    }
    if (!complete) continue;
    collective(in, group);
    join_clocks(group);
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

template <class D>
void Machine<D>::deadlock() {
  Diagnostic d;
  d.kind = DiagKind::Deadlock;
  std::ostringstream os;
  std::uint32_t first = kNone;
  std::map<std::uint32_t, std::vector<std::uint32_t>> by_pc;
  for (std::uint32_t t = 0; t < n_; ++t)
    if (state_[t] == TState::Wait) {
      by_pc[pc_[t]].push_back(t);
      if (first == kNone) first = t;
    }
  std::uint32_t done = 0;
  for (std::uint32_t t = 0; t < n_; ++t) done += state_[t] == TState::Done;
  d.message = "no thread can make progress: " + std::to_string(n_ - done) +
              " threads wait at syncs whose thread sets never complete";
  d.loc = p_.code[pc_[first]].loc;
  for (auto& [pc, ts] : by_pc) {
    os << "  waiting at " << p_.code[pc].loc.with_source() << " (" << p_.instr_text(pc) << "): threads ";
    for (std::size_t i = 0; i < ts.size() && i < 8; ++i) os << (i ? ", " : "") << ts[i];
    if (ts.size() > 8) os << ", ... (" << ts.size() << ")";
    std::vector<std::uint32_t> set = sync_set(ts[0], p_.code[pc]);
    std::vector<std::uint32_t> missing;
    for (std::uint32_t u : set)
      if (state_[u] == TState::Run || (state_[u] == TState::Wait && pc_[u] != pc)) missing.push_back(u);
    for (std::uint32_t u : set)
      if (state_[u] == TState::Wait && pc_[u] == pc && sync_set(u, p_.code[pc]) != set &&
          std::find(missing.begin(), missing.end(), u) == missing.end())
        missing.push_back(u);
    if (!missing.empty()) {
      os << "; it needs threads ";
      for (std::size_t i = 0; i < missing.size() && i < 8; ++i) os << (i ? ", " : "") << missing[i];
      if (missing.size() > 8) os << ", ...";
      os << ", which are at another sync or in a different set";
    }
    os << "\n";
    for (std::uint32_t t : ts) d.threads.push_back(t);
  }
  if (done) os << "  " << done << " threads have returned\n";
  d.detail = os.str();
  throw Stop{d};
}

// Every member first ticks its own clock, then all take the join: each
// member's accesses before the sync are now ordered before everything any
// member does after it.
template <class D>
void Machine<D>::join_clocks(const std::vector<std::uint32_t>& group) {
  if (!o_.check_races || group.empty()) return;
  for (std::uint32_t u : group) ++vc_[std::size_t(u) * n_ + u];
  std::vector<std::uint32_t> j(n_, 0);
  for (std::uint32_t u : group) {
    const std::uint32_t* c = &vc_[std::size_t(u) * n_];
    for (std::uint32_t k = 0; k < n_; ++k) j[k] = std::max(j[k], c[k]);
  }
  for (std::uint32_t u : group) std::copy(j.begin(), j.end(), vc_.begin() + std::ptrdiff_t(std::size_t(u) * n_));
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
    const Val<V>& g = reg(t, std::uint32_t(in.guard));
    if (g.kind == VKind::Cond) fail(DiagKind::NotStructured, t, "an instruction predicated on tensor data");
    if (g.sched) schedule_dependent(t, g.sched, "a branch or predicated instruction");
    bool on = as_int(t, g, "a guard predicate") != 0;
    if (on == in.guard_negated) {
      pc_[t] = pc + 1;
      return;
    }
  }
  switch (in.op) {
    case Opcode::Bra:
      if (in.target <= pc) check_way_out(t, in.target);  // only a loop can keep a thread forever
      pc_[t] = in.target;
      return;
    case Opcode::Ret:
      state_[t] = TState::Done;
      return;
    case Opcode::Bar:
      if (counted(in)) {
        std::int64_t c = in.src[1].imm;
        if (c <= 0 || c % 32 != 0 || c > std::int64_t(n_))
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
      state_[t] = TState::Wait;
      return;
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
  } else {
    d.message = "the kernel executed a trap instruction (__trap())";
  }
  d.detail = "  instruction: " + p_.instr_text(pc_[t]) + "\n"
             "  on a GPU the kernel stops here and the launch fails with an error\n";
  throw Stop{d};
}

// t: the thread that uses the value (kNone for an output: then the atomic is the place).
// A mark names an atom (a schedule-dependent old value) or a shuffle (an
// undefined value read from outside the member mask).
template <class D>
void Machine<D>::schedule_dependent(std::uint32_t t, std::uint32_t sched, const std::string& what) {
  const std::uint32_t atom_pc = sched - 1;
  if (p_.code[atom_pc].op == Opcode::Shfl) {
    Diagnostic d;
    d.kind = DiagKind::Uninitialized;
    d.message = what + " depends on an undefined value: in a shuffle, " + undefined_why_[atom_pc];
    d.loc = p_.code[t == kNone ? atom_pc : pc_[t]].loc;
    if (t != kNone) d.threads = {t};
    d.detail = "  the shuffle: " + p_.code[atom_pc].loc.with_source() + ": " + p_.instr_text(atom_pc) +
               "\n  CUDA leaves undefined what a shuffle reads from a lane outside its member mask or from\n"
               "  an exited thread (see NVIDIA/cuda-samples#398 for this bug in reduce7); an H100 happened\n"
               "  to return 0 in our test, which no GPU promises\n";
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
