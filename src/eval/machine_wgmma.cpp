// Machine<D>: wgmma.* (warpgroup matrix multiply-accumulate, sm_90a),
// stmatrix, and the shared window (shared-memory addresses as integers),
// which wgmma's matrix descriptors are built from.
//
// The rules, with the PTX ISA sections they follow, are in
// docs/evaluator.md, "wgmma and shared-memory addresses"; the data layouts
// are pure functions in warp_semantics.hpp, checked on an H100 by
// tools/gpu_checks/wgmma_layouts.cu.
#include "machine.hpp"

#include <sstream>

namespace tileverify::machine {

namespace {

std::string hex(std::uint64_t x) {
  std::ostringstream s;
  s << "0x" << std::hex << x;
  return s.str();
}

}  // namespace

// ------------------------------------------------------------ shared window

// Every .shared buffer of the CTA gets an address in the shared window, in
// the order the program declares them (static .shared arrays as the kernel
// names them, the dynamic extern one among them), each aligned to 1024
// bytes: the 128-byte swizzle repeats every 1024 bytes, and compilers
// assume their tiles start at such a boundary (a wgmma descriptor's base
// offset field is for those that do not). The window starts at 1024, so
// that no buffer is at address 0 (the null pointer stays no shared
// address); CUDA reserves the first kilobyte of a CTA's shared memory for
// the system on sm_80 and later (CUDA C++ Programming Guide, "Shared
// Memory" in the compute capability 8.x section).
template <class D>
void Machine<D>::make_window() {
  window_made_ = true;
  std::uint64_t at = 1024;
  for (std::uint32_t b = 0; b < mem_.size(); ++b) {
    const Memory<V>& m = mem_[b];
    if (m.space != Space::Shared || m.per_thread) continue;
    if (ncta_ > 1 && buf_rank_[b] != kNone && buf_rank_[b] != 0) continue;  // every CTA's window is rank 0's layout
    at = (at + 1023) / 1024 * 1024;
    window_.push_back(WindowEntry{at, at + m.bytes, b});
    at += std::max<std::uint64_t>(m.bytes, 1);
  }
}

// In a cluster, a pointer into another CTA's copy (mapa's result) is a
// .shared::cluster address: the rank's tag above the window (kRankShift).
template <class D>
std::int64_t Machine<D>::window_int(std::uint32_t t, const Val<V>& p, const char* what) {
  if (p.kind != VKind::Ptr || mem_[p.buf].space != Space::Shared || mem_[p.buf].per_thread)
    return as_int(t, p, what);  // reports what it is
  if (!window_made_) make_window();
  const std::uint32_t r = ncta_ > 1 && buf_rank_[p.buf] != kNone ? buf_rank_[p.buf] : rank(t);
  const std::uint32_t base = rank_copy(p.buf, 0);
  const std::int64_t tag = r == rank(t) ? 0 : std::int64_t(r + 1) << kRankShift;
  for (const WindowEntry& e : window_)
    if (e.buf == base) return tag + std::int64_t(e.base) + p.i;
  return as_int(t, p, what);
}

template <class D>
auto Machine<D>::window_addr(std::uint32_t t, std::int64_t a, const Operand* o) -> Addr {
  if (!window_made_) make_window();
  const std::int64_t tag = a >> kRankShift;
  if (tag > 0 && tag <= std::int64_t(ncta_)) {
    const std::uint32_t r = std::uint32_t(tag - 1);
    const std::int64_t local = a & ((std::int64_t(1) << kRankShift) - 1);
    for (const WindowEntry& e : window_)
      if (local >= std::int64_t(e.base) && local < std::int64_t(e.end)) {
        const Addr x{rank_copy(e.buf, r), local - std::int64_t(e.base)};
        if (r != rank(t) && o) remote_access(t, *o, r);
        return x;
      }
  }
  for (const WindowEntry& e : window_)
    if (a >= std::int64_t(e.base) && a < std::int64_t(e.end))
      return Addr{ncta_ > 1 ? rank_copy(e.buf, rank(t)) : e.buf, a - std::int64_t(e.base)};
  std::string buffers;
  for (const WindowEntry& e : window_)
    buffers += (buffers.empty() ? "" : ", ") + mem_[e.buf].name + " at [" + hex(e.base) + ", " + hex(e.end) + ")";
  Diagnostic d;
  d.kind = DiagKind::OutOfBounds;
  d.message = "the .shared address " + hex(std::uint64_t(a)) + " is outside every shared buffer of the CTA";
  d.loc = p_.code[pc_[t]].loc;
  d.threads = {t};
  d.detail = "  instruction: " + p_.instr_text(pc_[t]) + "\n  the shared window: " +
             (buffers.empty() ? std::string("no shared buffers") : buffers) + "\n";
  throw Stop{d};
}

// ------------------------------------------------------------ wgmma

template <class D>
void Machine<D>::need_wgmma_state() {
  if (!wgmma_.empty()) return;
  reserve("the wgmma accumulator state", mul_sat(n_, r_), sizeof(Val<V>) + sizeof(std::uint32_t));
  wgmma_.resize(n_);
  in_flight_.assign(std::size_t(n_) * r_, 0);
  in_flight_val_.resize(std::size_t(n_) * r_);
  if (!o_.check_races) return;
  // No wgmma.* has joined clocks yet: the threads' clocks are all
  // synchronization has taught them so far.
  reserve("the clocks without wgmma joins", mul_sat(n_, n_), sizeof(std::uint32_t));
  sync_vc_.resize(std::size_t(n_) * n_);
  for (std::uint32_t u = 0; u < n_; ++u)
    std::copy(vc_.begin() + std::ptrdiff_t(std::size_t(u) * w_), vc_.begin() + std::ptrdiff_t(std::size_t(u) * w_ + n_),
              sync_vc_.begin() + std::ptrdiff_t(std::size_t(u) * n_));
}

// An acquire of thread t of a released clock (an mbarrier phase's, a
// cluster barrier's), for sync_vc_.
template <class D>
void Machine<D>::sync_acquire(std::uint32_t t, const std::uint32_t* clock, std::size_t width) {
  if (sync_vc_.empty()) return;
  std::uint32_t* row = &sync_vc_[std::size_t(t) * n_];
  for (std::size_t i = 0; i < width && i < n_; ++i) row[i] = std::max(row[i], clock[i]);
}

// A wgmma's shared-memory operand that thread u wrote (at its clock
// `clock`, by the instruction at upc), which the race check found ordered
// before the read: is it ordered before the wgmma of every thread of the
// warpgroup by a synchronization other than the wgmma.* instructions? The
// PTX ISA gives those no memory ordering: each waits for its own warp
// (".sync"), wgmma.fence orders register accesses, and an async proxy
// fence orders shared-memory writes before the wgmma's reads, but only
// within the writing thread. Its outline of the operation (PTX ISA,
// "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions")
// has every thread of the warpgroup write the operands, wgmma.fence,
// fence.proxy.async and issue the mma_async, with no barrier; CuTe's sm_90
// tutorial does just that. So it is accepted with a warning note; --strict
// reports it as a race.
template <class D>
void Machine<D>::wgmma_cross_warp(std::uint32_t t, const Memory<V>& mem, std::int64_t byte, std::uint32_t u,
                                  std::uint32_t clock, std::uint32_t upc) {
  if (sync_vc_.empty() || u >= n_ || (wgmma_cross_warp_noted_ && !o_.strict)) return;
  const std::uint32_t first = warpgroup_first(t);
  // A thread of the warpgroup the write is not ordered before, of another
  // warp than the writer's if there is one (the report's clearest case).
  std::uint32_t r = kNone;
  for (int pass = 0; pass < 2 && r == kNone; ++pass)
    for (std::uint32_t x = first; x < first + 128 && r == kNone; ++x)
      if (x != u && (pass == 1 || x / 32 != u / 32) && sync_vc_[std::size_t(x) * n_ + u] <= clock) r = x;
  if (r == kNone) return;
  Diagnostic d;
  d.kind = DiagKind::Race;  // a warning unless strict (kind race, not undefined: reports keep one note of a
                            // kind per instruction, and the cp.async proxy note may be due at the same wgmma)
  d.warning = !o_.strict;
  d.loc = p_.code[pc_[t]].loc;
  d.threads = {u, r};
  d.message = "wgmma.mma_async reads " + mem.name + " byte " + std::to_string(byte) + ", which thread " + tname(u) +
              " wrote; only the warpgroup's wgmma instructions order that write before the wgmma of thread " + tname(r);
  d.detail = "  the write: " + p_.code[upc].loc.with_source() + ": " + p_.instr_text(upc) +
             "\n  the wgmma: " + p_.instr_text(pc_[t]) +
             "\n  a wgmma.* instruction waits for the threads of its own warp only and orders no memory (PTX ISA,\n"
             "  wgmma.fence and wgmma.mma_async: .sync; wgmma.fence orders register accesses, an async proxy fence\n"
             "  the writing thread's shared-memory writes). The ISA's outline of a wgmma has the warpgroup's threads\n"
             "  write the operands, fence and issue it with no barrier between, as CuTe's sm_90 tutorial does, so\n"
             "  this run accepts it; --strict reports it as a race (a bar.sync or an mbarrier wait orders the write)\n";
  if (o_.strict) throw Stop{d};
  wgmma_cross_warp_noted_ = true;
  notes_.push_back(std::move(d));
}

// A read or write of an accumulator register whose wgmma.mma_async has not
// retired: the PTX ISA ("wgmma.mma_async": "Accessing the accumulator
// register ... before a wgmma.wait_group that waits for the wgmma-group
// containing the wgmma.mma_async ... is undefined behavior") leaves its value
// to the timing of the asynchronous operation.
template <class D>
void Machine<D>::in_flight(std::uint32_t t, std::uint32_t r) {
  const std::uint32_t issue = in_flight_[std::size_t(t) * r_ + r];
  const std::uint32_t mpc = issue_pc_[issue - 1];
  Diagnostic d;
  d.kind = DiagKind::Race;
  d.message = "register " + p_.registers[r].name + " is an accumulator of a wgmma.mma_async still in flight: " +
              "it is accessed before the wgmma.wait_group that retires the mma_async";
  d.loc = p_.code[pc_[t]].loc;
  d.threads = {t};
  d.detail = "  the access: " + p_.instr_text(pc_[t]) + "\n  the wgmma.mma_async: " + p_.code[mpc].loc.with_source() +
             ": " + p_.instr_text(mpc) +
             "\n  the PTX ISA (wgmma.mma_async) leaves accesses to its accumulators before that wait undefined:\n"
             "  the value depends on when the asynchronous operation writes them\n";
  throw Stop{d};
}

template <class D>
void Machine<D>::wgmma(const Instr& in, const std::vector<std::uint32_t>& group) {
  const std::uint32_t t0 = group.front();
  if (group.size() != 128 || t0 != warpgroup_first(t0))
    fail(DiagKind::Unsupported, t0, std::string(opcode_name(in.op)) + " needs a whole warpgroup of 128 threads");
  need_wgmma_state();
  switch (in.op) {
    case Opcode::WgmmaFence:
      for (std::uint32_t t : group) wgmma_[t].fenced = true;
      return;
    case Opcode::WgmmaCommit:
      // wgmma.commit_group: the uncommitted mma_asyncs become a group (an
      // empty one when there are none, PTX ISA "wgmma.commit_group").
      for (std::uint32_t t : group) {
        wgmma_[t].groups.push_back(std::move(wgmma_[t].open));
        wgmma_[t].open.clear();
        wgmma_[t].group_reads.push_back(std::move(wgmma_[t].open_reads));
        wgmma_[t].open_reads.clear();
      }
      return;
    case Opcode::WgmmaWait: return wgmma_wait(in, group);
    case Opcode::WgmmaMma: return wgmma_mma(in, group);
    default: break;
  }
  fail(DiagKind::Unsupported, t0, std::string(opcode_name(in.op)) + " is not a wgmma instruction");
}

// wgmma.wait_group N: waits until at most N of the thread's groups are
// pending (PTX ISA "wgmma.wait_group"); the registers of the retired ones get
// their results. A register some instruction wrote meanwhile (it no longer
// holds the in-flight mark) was written while the mma_async could still
// write it.
template <class D>
void Machine<D>::wgmma_wait(const Instr& in, const std::vector<std::uint32_t>& group) {
  const std::size_t keep = std::size_t(in.src[0].imm);
  for (std::uint32_t t : group) {
    WgmmaState& w = wgmma_[t];
    while (w.groups.size() > keep) {
      for (const Pending& p : w.groups.front()) {
        const std::size_t i = std::size_t(t) * r_ + p.reg;
        if (in_flight_[i] != p.issue) continue;  // a later mma_async writes it too
        if (reg(t, p.reg).kind != VKind::Undef) {
          const std::uint32_t mpc = issue_pc_[p.issue - 1];
          Diagnostic d;
          d.kind = DiagKind::Race;
          d.message = "register " + p_.registers[p.reg].name +
                      " was written while it was an accumulator of a wgmma.mma_async in flight";
          d.loc = p_.code[pc_[t]].loc;
          d.threads = {t};
          d.detail = "  the wgmma.mma_async: " + p_.code[mpc].loc.with_source() + ": " + p_.instr_text(mpc) +
                     "\n  the wait that retires it: " + p_.instr_text(pc_[t]) +
                     "\n  the PTX ISA (wgmma.mma_async) leaves accesses to its accumulators before that wait undefined\n";
          throw Stop{d};
        }
        reg(t, p.reg) = in_flight_val_[i];
        in_flight_[i] = 0;
        --in_flight_count_;
      }
      w.groups.pop_front();
      check_operand_reads(t, w.group_reads.front());
      w.group_reads.pop_front();
    }
  }
}

// The shared memory an mma_async read is read by the async proxy until its
// group retires (PTX ISA, "wgmma.mma_async": the operands may be accessed
// until the wgmma.wait_group that waits for it): the evaluator reads it at
// issue, so a write to it before the retirement (one the race check found
// ordered after the issue: by a barrier, say) would have changed what the
// hardware reads. Reported as a race at the wait.
template <class D>
void Machine<D>::check_operand_reads(std::uint32_t t, const std::vector<OperandRead>& reads) {
  for (const OperandRead& r : reads) {
    const Memory<V>& mem = mem_[r.buf];
    const Shadow sh = mem.shadow.peek(std::size_t(r.byte) >> mem.gshift);
    if (sh.w_thread == r.w_thread && sh.w_clock == r.w_clock) continue;
    const std::uint32_t mpc = issue_pc_[r.issue - 1];
    Diagnostic d;
    d.kind = DiagKind::Race;
    d.message = mem.name + " byte " + std::to_string(r.byte) + " was written while a wgmma.mma_async in flight reads it";
    d.loc = p_.code[pc_[t]].loc;
    d.threads = {t};
    if (sh.w_thread < n_) d.threads.push_back(sh.w_thread);
    d.detail = "  the wgmma.mma_async: " + p_.code[mpc].loc.with_source() + ": " + p_.instr_text(mpc) +
               (sh.w_thread != kNone ? "\n  the write: " + p_.code[sh.w_pc].loc.with_source() + ": " + p_.instr_text(sh.w_pc)
                                     : std::string()) +
               "\n  the wait that retires the mma_async: " + p_.instr_text(pc_[t]) +
               "\n  the PTX ISA lets wgmma.mma_async read its shared-memory operands until that wait retires it\n";
    throw Stop{d};
  }
}

// The rows x k operand a descriptor names (row-major: element (mn, k) at
// out[mn * k + k]), read from shared memory by thread t through the normal
// read path (bounds, races, pending copies, uninitialized bytes), in 16-byte
// chunks: the swizzles permute whole chunks, so a chunk's elements are
// consecutive in memory.
template <class D>
void Machine<D>::read_descriptor(std::uint32_t t, std::uint64_t desc, bool mn_major, int rows, int k, DType ty, V* out,
                                 std::vector<OperandRead>* reads) {
  const warp::WgmmaDesc dd = warp::wgmma_decode(desc);
  if (dd.base_offset != 0)
    fail(DiagKind::Unsupported, t,
         "a wgmma matrix descriptor with a non-zero matrix base offset (" + std::to_string(dd.base_offset) +
             ", descriptor " + hex(desc) + ") is not modelled");
  const int bytes = ty == DType::F32 ? 4 : 2, per = 16 / bytes;
  // The wgmma reads through the async proxy (PTX ISA, "Asynchronous
  // Warpgroup Level Matrix Multiply-Accumulate Operation", async proxy):
  // a generic-proxy write it reads (st.shared) must be followed
  // by a fence.proxy.async of the writing thread, ordered before the
  // wgmma by a synchronization (PTX ISA, "Memory Consistency Model",
  // proxies). The race check of the read has ordered the write itself.
  auto fenced = [&](const Addr& at) {
    if (!o_.check_races) return;
    Memory<V>& mem = mem_[at.buf];
    if (mem.per_thread) return;
    for (std::int64_t b = at.offset; b < at.offset + 16; b += std::int64_t(mem.g)) {
      const std::size_t c = std::size_t(b) >> mem.gshift;
      const Shadow& sh = mem.shadow[c];
      auto check = [&](std::uint32_t u, std::uint32_t clock, std::uint32_t upc) {
        if (u >= n_) return;  // an asynchronous copy's write (TMA): the async proxy itself
        wgmma_cross_warp(t, mem, b, u, clock, upc);
        // A cp.async's write: the PTX ISA does not say which proxy a
        // (non-bulk) cp.async writes through; Triton's sm_90 kernels read
        // cp.async data with wgmma without a fence.proxy.async after the
        // copies and run correctly on an H100 and an H200
        // (docs/evaluator.md), so it is accepted, with a warning note
        // that says both (a race under --strict).
        if (p_.code[upc].op == Opcode::CpAsync) {
          if (!o_.strict) {
            if (!cp_async_proxy_noted_) {
              cp_async_proxy_noted_ = true;
              Diagnostic d;
              d.kind = DiagKind::Undefined;
              d.warning = true;
              d.loc = p_.code[pc_[t]].loc;
              d.threads = t == u ? std::vector<std::uint32_t>{t} : std::vector<std::uint32_t>{t, u};
              d.message = "wgmma.mma_async reads " + mem.name + " byte " + std::to_string(b) + ", which thread " +
                          tname(u) + "'s cp.async wrote, with no fence.proxy.async between them";
              d.detail = "  the copy: " + p_.code[upc].loc.with_source() + ": " + p_.instr_text(upc) +
                         "\n  the wgmma: " + p_.instr_text(pc_[t]) +
                         "\n  wgmma reads shared memory through the async proxy; the PTX ISA does not say through which\n"
                         "  proxy a (non-bulk) cp.async writes. Triton 3.6 emits this order for sm_90 and its kernels\n"
                         "  compute correctly on an H100 and an H200, so this run accepts it; --strict reports it as a race\n";
              notes_.push_back(std::move(d));
            }
            return;
          }
        }
        if (proxy_fenced(t, u, clock)) return;
        Diagnostic d;
        d.kind = DiagKind::Race;
        d.message = "wgmma.mma_async reads " + mem.name + " byte " + std::to_string(b) + ", which thread " +
                    tname(u) + " wrote through the generic proxy without a fence.proxy.async ordered before the wgmma";
        d.loc = p_.code[pc_[t]].loc;
        d.threads = {t, u};
        d.detail = "  the write: " + p_.code[upc].loc.with_source() + ": " + p_.instr_text(upc) +
                   "\n  the wgmma: " + p_.instr_text(pc_[t]) +
                   "\n  wgmma reads its shared-memory operands through the async proxy; a generic-proxy write is\n"
                   "  visible to it only after the writing thread executes fence.proxy.async, before the\n"
                   "  synchronization that orders it with the wgmma (PTX ISA, wgmma's async proxy; Memory\n"
                   "  Consistency Model, proxies)\n";
        throw Stop{d};
      };
      if (sh.w_thread != kNone) check(sh.w_thread, sh.w_clock, sh.w_pc);
      if (sh.w_more >= 0)
        for (const WriteEpoch& w : write_sets_[std::size_t(sh.w_more)]) check(w.thread, w.clock, w.pc);
      reads->push_back(OperandRead{at.buf, sh.w_thread, sh.w_clock, std::uint32_t(issue_pc_.size() + 1), b});
    }
  };
  auto chunk = [&](int mn, int kk, V* dst) {
    const unsigned a = warp::wgmma_swizzle(dd.swizzle, dd.start + warp::wgmma_offset(mn_major, dd.swizzle, dd.lbo,
                                                                                       dd.sbo, mn, kk, bytes));
    const Addr at = window_addr(t, std::int64_t(a));
    if (bytes == 2) {
      read_halves(t, at, std::size_t(per), dst);
    } else {
      Memory<V>& m = mem_[at.buf];
      for (int j = 0; j < per; ++j) dst[j] = read_float(t, m, cell(t, at, std::size_t(j), 4, false), 4, DType::F32);
    }
    fenced(at);
  };
  V buf[8];
  if (!mn_major) {
    for (int mn = 0; mn < rows; ++mn)
      for (int kk = 0; kk < k; kk += per) chunk(mn, kk, &out[std::size_t(mn * k + kk)]);
    return;
  }
  for (int kk = 0; kk < k; ++kk)
    for (int mn = 0; mn < rows; mn += per) {
      chunk(mn, kk, buf);
      for (int j = 0; j < per; ++j) out[std::size_t((mn + j) * k + kk)] = buf[j];
    }
}

// wgmma.mma_async: D = A * B + (scale-d ? D : 0), computed at issue with the
// operands as they are then (shared memory is read at issue; a write to it
// before the wait would race with the read, which the race check sees as
// the write comes later only if it is unordered, see docs/evaluator.md),
// and held back from the accumulator registers until the wait_group that
// retires the mma_async's group.
template <class D>
void Machine<D>::wgmma_mma(const Instr& in, const std::vector<std::uint32_t>& group) {
  const std::uint32_t t0 = group.front();
  const int n = int(in.shape) * 8, m = 64, k = in.src_type == DType::F32 ? 8 : 16;
  const bool a_regs = in.mode & WgmmaFlags::kARegs, f16_acc = in.type == DType::F16;
  const std::size_t nb = a_regs ? 4 : 1;
  if (in.src.size() != nb + 2 || in.dst.size() != std::size_t(f16_acc ? n / 4 : n / 2))
    fail(DiagKind::Unsupported, t0, "wgmma.mma_async with the wrong number of operands");
  for (std::uint32_t t : group)
    if (!wgmma_[t].fenced) {
      Diagnostic d;
      d.kind = DiagKind::Race;
      d.message = "wgmma.mma_async without a wgmma.fence before it in the warpgroup";
      d.loc = in.loc;
      d.threads = {t};
      d.detail = "  the PTX ISA (wgmma.fence) requires one before the first wgmma.mma_async of a warpgroup: it\n"
                 "  orders the registers' earlier accesses before the asynchronous operation reads them\n";
      throw Stop{d};
    }
  // The operands the PTX ISA requires the same in every thread: the
  // descriptors and scale-d (the instruction is .aligned).
  auto uniform = [&](std::size_t i, const char* what) {
    std::int64_t v0 = 0;
    for (std::uint32_t t : group) {
      const Val<V> v = operand(t, in.src[i]);
      if (v.sched) schedule_dependent(t, v.sched, what);
      const std::int64_t x = v.kind == VKind::Ptr ? window_int(t, v, what) : as_int(t, v, what);
      if (t == t0) v0 = x;
      else if (x != v0)
        fail(DiagKind::Unsupported, t,
             std::string(what) + " differs between the threads of the warpgroup (" + hex(std::uint64_t(v0)) + " in thread " +
                 tname(t0) + ", " + hex(std::uint64_t(x)) + " here)");
    }
    return v0;
  };
  const bool scale_d = uniform(nb + 1, "wgmma's scale-d") != 0;
  std::vector<V> A(std::size_t(m * k)), B(std::size_t(n * k));
  if (a_regs) {
    const int per = k == 8 ? 1 : 2;
    for (std::uint32_t t : group)
      for (int i = 0; i < 4 * per; ++i) {
        const warp::RowCol rc = warp::wgmma_a_reg(int(t - warpgroup_first(t)), i, k == 8);
        A[std::size_t(rc.row * k + rc.col)] = fragment(t, in.src, 0, i, per, in.src_type);
      }
  } else {
    read_descriptor(t0, std::uint64_t(uniform(0, "wgmma's matrix descriptor for A")), in.mode & WgmmaFlags::kTransA,
                    m, k, in.src_type, A.data(), &wgmma_[t0].open_reads);
  }
  read_descriptor(t0, std::uint64_t(uniform(nb, "wgmma's matrix descriptor for B")), in.mode & WgmmaFlags::kTransB, n,
                  k, in.src_type, B.data(), &wgmma_[t0].open_reads);
  if (in.mode & WgmmaFlags::kNegA)
    for (V& x : A) x = d_.neg(x);
  if (in.mode & WgmmaFlags::kNegB)
    for (V& x : B) x = d_.neg(x);
  // The accumulators: an in-flight one (an earlier mma_async of this chain)
  // gives its pending result, as the hardware orders accumulator accesses
  // of successive mma_asyncs of one shape (PTX ISA, wgmma.fence).
  std::vector<V> acc(std::size_t(m * n));
  const V zero = d_.constant(Rational(0));
  for (std::uint32_t t : group) {
    for (std::size_t j = 0; j < in.dst.size(); ++j) {
      V half[2] = {zero, zero};
      if (scale_d) {
        const std::uint32_t r = in.dst[j];
        const std::size_t i = std::size_t(t) * r_ + r;
        Val<V> v = in_flight_[i] ? in_flight_val_[i] : reg(t, r).kind == VKind::Undef ? mark_undefined(t, r) : reg(t, r);
        collective_sched_ = std::max(collective_sched_, v.sched);
        if (!f16_acc) {
          half[0] = as_float(t, v, DType::F32);
        } else if (v.kind == VKind::Pair) {
          half[0] = v.f;
          half[1] = v.g;
        } else if (v.kind == VKind::Int && v.i == 0) {
          // both halves zero
        } else {
          fail(DiagKind::Unsupported, t, "an .f16 wgmma accumulator register does not hold a pair of halves");
        }
      }
      for (int h = 0; h < (f16_acc ? 2 : 1); ++h) {
        const warp::RowCol rc = warp::wgmma_d(int(t - warpgroup_first(t)), f16_acc ? int(j) * 2 + h : int(j));
        acc[std::size_t(rc.row * n + rc.col)] = half[h];
      }
    }
  }
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c)
      acc[std::size_t(r * n + c)] = dot(acc[std::size_t(r * n + c)], &A[std::size_t(r * k)], 1, &B[std::size_t(c * k)], 1, k);
  // Into flight: each thread's accumulators hold no value until the wait.
  issue_pc_.push_back(pc_[t0]);
  const std::uint32_t issue = std::uint32_t(issue_pc_.size());
  for (std::uint32_t t : group) {
    const int lane = int(t - warpgroup_first(t));  // in the warpgroup
    for (std::size_t j = 0; j < in.dst.size(); ++j) {
      Val<V> v;
      if (!f16_acc) {
        const warp::RowCol rc = warp::wgmma_d(lane, int(j));
        v = float_val(acc[std::size_t(rc.row * n + rc.col)]);
      } else {
        const warp::RowCol lo = warp::wgmma_d(lane, int(j) * 2), hi = warp::wgmma_d(lane, int(j) * 2 + 1);
        v.kind = VKind::Pair;
        v.f = acc[std::size_t(lo.row * n + lo.col)];
        v.g = acc[std::size_t(hi.row * n + hi.col)];
      }
      v.sched = collective_sched_;
      const std::uint32_t r = in.dst[j];
      const std::size_t i = std::size_t(t) * r_ + r;
      if (!in_flight_[i]) ++in_flight_count_;
      in_flight_[i] = issue;
      in_flight_val_[i] = v;
      reg(t, r) = Val<V>{};
      wgmma_[t].open.push_back(Pending{r, issue});
    }
  }
}

// ------------------------------------------------------------ stmatrix

// stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16 [a], {r..}: the
// inverse of ldmatrix (warp_semantics.hpp): lanes 8q..8q+7 give the row
// addresses of matrix q, and each lane's register q holds its two elements
// of matrix q. Without .trans they are one 4-byte word of a row, stored as
// the register holds it (a pair of halves); with .trans they go to two rows,
// stored as two 2-byte elements. Each row is written by the thread that gave
// its address.
template <class D>
void Machine<D>::stmatrix(const Instr& in, const std::vector<std::uint32_t>& group) {
  const int num = in.mode;
  const std::uint32_t t0 = group.front();
  if (group.size() != 32 || (num != 1 && num != 2 && num != 4) || in.src.size() != std::size_t(num) + 1)
    fail(DiagKind::Unsupported, t0, "stmatrix needs a full warp and .x1, .x2 or .x4 with that many registers");
  const std::uint32_t warp_base = t0 - t0 % 32;
  // Every lane's registers first (a register read before any write is
  // reported as the lane's, as for any instruction).
  std::vector<Val<V>> regs(std::size_t(32 * num));
  for (std::uint32_t t : group)
    for (int q = 0; q < num; ++q) {
      Val<V> v = operand(t, in.src[std::size_t(q) + 1]);
      collective_sched_ = std::max(collective_sched_, v.sched);
      regs[std::size_t(int(t % 32) * num + q)] = v;
    }
  auto half = [&](std::uint32_t t, const Val<V>& v, int i) -> Val<V> {
    if (v.kind == VKind::Pair) return float_val(i == 0 ? v.f : v.g);
    if (v.kind == VKind::Int) return int_val(std::int64_t((std::uint64_t(v.i) >> (16 * i)) & 0xffff));
    fail(DiagKind::Unsupported, t, "stmatrix .trans stores a register that holds no pair of 16-bit values");
  };
  for (int q = 0; q < num; ++q)
    for (int r = 0; r < 8; ++r) {
      const std::uint32_t t = warp_base + std::uint32_t(warp::ldmatrix_address_lane(q, r));
      const Addr a = address(t, in.src[0]);
      Memory<V>& mem = mem_[a.buf];
      check_writable(t, mem);
      if (!in.trans) {
        for (int w = 0; w < 4; ++w) {  // the row's four words come from lanes 4r .. 4r + 3
          const std::size_t c = cell(t, a, std::size_t(w), 4, true);
          write(t, mem, c, 4, regs[std::size_t((4 * r + w) * num + q)], pc_[t]);
        }
      } else {
        for (int col = 0; col < 8; ++col) {
          // element (r, col) of the matrix in memory: lane 4 * col / ... as ldmatrix .trans gives it
          int lane = -1, i = 0;
          for (int l = 0; l < 32 && lane < 0; ++l)
            for (int h = 0; h < 2; ++h)
              if (warp::stmatrix_element(l, h, true) == warp::RowCol{r, col}) {
                lane = l;
                i = h;
              }
          const std::size_t c = cell(t, a, std::size_t(col), 2, true);
          write(t, mem, c, 2, half(warp_base + std::uint32_t(lane), regs[std::size_t(lane * num + q)], i), pc_[t]);
        }
      }
    }
}

template class Machine<SymbolicDomain>;
template class Machine<ConcreteDomain>;
template class Machine<PayloadDomain>;

}  // namespace tileverify::machine
