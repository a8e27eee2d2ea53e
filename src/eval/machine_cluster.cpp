// Machine<D>: clusters of several CTAs, run together (docs/evaluator.md,
// "Clusters"). The run holds every CTA of the cluster: thread t is thread
// t % nb_ of CTA rank t / nb_, each rank has its own copy of every shared
// variable (machine_setup.cpp), and what reaches across CTAs is checked
// here: accesses to another CTA's shared memory (distributed shared memory,
// reached through mapa), which must come before that CTA exits, the
// .shared::cluster addresses of the shared window, and mapa itself.
// barrier.cluster, remote mbarrier arrives and TMA multicast are the async
// model's (machine_async.cpp); they use what is here.
#include "machine.hpp"

#include <string>

namespace tileverify::machine {

namespace {

std::string cta_text(const Dim3& c) {
  return "CTA (" + std::to_string(c.x) + "," + std::to_string(c.y) + "," + std::to_string(c.z) + ")";
}

}  // namespace

template <class D>
std::uint32_t Machine<D>::rank_copy(std::uint32_t buf, std::uint32_t r) const {
  if (ncta_ == 1 || buf_rank_[buf] == kNone) return buf;
  return buf - buf_rank_[buf] + r;  // a declaration's copies are consecutive, rank 0 first
}

// Thread t's access through operand o reaches the shared memory of CTA
// rank r, another CTA of the cluster. The PTX ISA reaches another CTA's
// shared memory through the .shared::cluster state space (ld, st, atom and
// red with .shared::cluster, or generic addressing; an mbarrier arrive on
// .shared::cluster; the destination and mbarrier of a copy into
// .shared::cluster): "Distributed shared memory" and mapa. A .shared::cta
// address names the executing CTA's own shared memory only.
template <class D>
void Machine<D>::remote_access(std::uint32_t t, const Operand& o, std::uint32_t r) {
  const Instr& in = p_.code[pc_[t]];
  bool ok = false;
  switch (in.op) {
    case Opcode::Ld:
    case Opcode::St:
    case Opcode::Atom: ok = in.space != Space::Shared || in.cluster_space; break;
    case Opcode::MbarArrive: ok = (in.mode & MbarArriveFlags::kRemote) != 0; break;
    case Opcode::TmaLoad:
    case Opcode::BulkCopy: ok = in.space == Space::Shared && &o != &in.src[1]; break;  // not the source
    default: break;
  }
  if (!ok) {
    Diagnostic d;
    d.kind = DiagKind::OutOfBounds;
    d.message = "a .shared::cta access to the shared memory of CTA rank " + std::to_string(r) + " of the cluster (" +
                cta_text(cta_of_rank_[r]) + "), not the executing CTA's";
    d.loc = in.loc;
    d.threads = {t};
    d.detail = "  instruction: " + p_.instr_text(pc_[t]) +
               "\n  the address came from mapa (or another CTA's shared pointer): only .shared::cluster and generic\n"
               "  accesses reach another CTA's shared memory (PTX ISA, mapa and \"Distributed shared memory\")\n";
    throw Stop{d};
  }
  record_remote(t, r, pc_[t]);
}

// Remembers that clock column `col` (a thread, or an agent: a copy) has
// touched CTA rank r's shared memory at pc: check_remote_exits asks
// whether that access comes before r exits.
template <class D>
void Machine<D>::record_remote(std::uint32_t col, std::uint32_t r, std::uint32_t pc) {
  if (!o_.check_races) return;
  if (remote_.empty()) remote_.resize(ncta_);
  auto& rec = remote_[r];
  if (rec.size() <= col) rec.resize(std::size_t(col) + 1, {0, 0});
  const std::uint32_t clock = col < n_ ? vc_[std::size_t(col) * w_ + col] : 0;  // an agent's own epoch is 0
  rec[col] = {clock + 1, pc};
}

// After the run: every access to a CTA's shared memory from outside it must
// happen before that CTA exits (CUDA C++ Programming Guide, "Distributed
// Shared Memory": all distributed shared memory operations must complete
// before a thread block exits, which kernels ensure with a cluster barrier
// before the exit). The CTA exits with its last thread; the access is
// before that in every schedule exactly when it happens before the exit of
// one of the CTA's threads. Each column's last access stands for its
// earlier ones (they come before it in its own order).
template <class D>
void Machine<D>::check_remote_exits() {
  for (std::uint32_t r = 0; r < remote_.size(); ++r) {
    const auto& rec = remote_[r];
    for (std::uint32_t col = 0; col < rec.size(); ++col) {
      if (rec[col].first == 0) continue;
      const std::uint32_t clock = rec[col].first - 1, pc = rec[col].second;
      bool before = false;
      for (std::uint32_t x = r * nb_; x < (r + 1) * nb_ && !before; ++x)
        before = col < n_ ? ordered(x, col, clock) : vc_[std::size_t(x) * w_ + col] > 0;
      if (before) continue;
      const std::uint32_t who = col < n_ ? col : agents_[col - n_].thread;
      Diagnostic d;
      d.kind = DiagKind::Race;
      d.message = "CTA rank " + std::to_string(r) + " of the cluster (" + cta_text(cta_of_rank_[r]) +
                  ") can exit before the access of thread " + tname(who) + " to its shared memory: nothing orders the access before the exit";
      d.loc = p_.code[pc].loc;
      d.threads = {who};
      AccessInfo a;
      a.thread = who;
      a.pc = pc;
      a.write = true;
      a.loc = p_.code[pc].loc;
      a.instr = p_.instr_text(pc);
      a.kind = col < n_ ? "remote access" : "copy write";
      d.accesses = {a};
      d.detail = "  the access: " + p_.code[pc].loc.with_source() + ": " + p_.instr_text(pc) +
                 (col < n_ ? "" : " (the copy it issued)") +
                 "\n  no thread of CTA rank " + std::to_string(r) +
                 " synchronizes with it before exiting; the CUDA C++ Programming Guide (Distributed\n"
                 "  Shared Memory) requires every access to a thread block's shared memory to complete before that\n"
                 "  block exits: end the kernel with a cluster barrier (cluster.sync(); barrier.cluster.arrive and\n"
                 "  barrier.cluster.wait) after the last such access\n";
      throw Stop{d};
    }
  }
}

// mapa.shared::cluster d, a, rank (PTX ISA, mapa): the address of a's
// location in the shared memory of CTA `rank`. A shared pointer becomes
// the pointer to the same byte of that CTA's copy; an integer .shared
// address gets the rank's tag of the shared window (window_int).
template <class D>
void Machine<D>::mapa(std::uint32_t t, const Instr& in) {
  const std::int64_t r = control_int(t, operand(t, in.src[1]), "mapa's CTA rank");
  if (r < 0 || r >= std::int64_t(ncta_))
    fail(DiagKind::OutOfBounds, t,
         "mapa to CTA rank " + std::to_string(r) + " of a cluster of " + std::to_string(ncta_) +
             (ncta_ == 1 ? " CTA" : " CTAs") + " (PTX ISA, mapa: the rank must name a CTA of the cluster)");
  Val<V> v = operand(t, in.src[0]);
  if (v.kind == VKind::Ptr) {
    const Memory<V>& m = mem_[v.buf];
    if (m.space != Space::Shared || m.per_thread)
      fail(DiagKind::Unsupported, t, "mapa of a pointer into '" + m.name + "', which is not shared memory");
    v.buf = rank_copy(v.buf, std::uint32_t(r));
  } else {
    const Addr a = window_addr(t, control_int(t, v, "mapa's address"));
    Val<V> p;
    p.kind = VKind::Ptr;
    p.buf = rank_copy(a.buf, std::uint32_t(r));
    p.i = a.offset;
    v = int_val(window_int(t, p, "mapa's address"));
  }
  set(t, in.dst[0], v);
}

template class Machine<SymbolicDomain>;
template class Machine<ConcreteDomain>;
template class Machine<PayloadDomain>;

}  // namespace tileverify::machine
