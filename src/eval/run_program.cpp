// run_program: one CTA run by a Machine<Domain> (run: setup, schedule, then
// collect the outputs), and the launch's helpers: the default memory budget,
// a tensor's element count.
#include "machine.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <new>
#include <string>
#include <utility>

namespace tileverify {

std::uint64_t default_memory_budget() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return std::uint64_t(4) << 30;  // unknown: 4 GiB
  return std::uint64_t(pages) / 2 * std::uint64_t(page);
}

// Saturates at UINT64_MAX: a shape of [2^32, 2^32] is too large, never 0.
std::uint64_t TensorArg::elements() const {
  std::uint64_t n = 1;
  for (std::uint64_t d : shape) {
    if (d != 0 && n > UINT64_MAX / d) return UINT64_MAX;
    n *= d;
  }
  return n;
}

namespace machine {

template <class D>
RunResult<D> Machine<D>::run() {
  RunResult<D> result;
  try {
    setup();
    schedule();
    if (!slot_regions_.empty()) slots_final();
    if (ncta_ > 1) check_remote_exits();
    collect(result);
    if (uninitialized_) result.diagnostics.push_back(*uninitialized_);
  } catch (const Stop& s) {
    // A race explains an uninitialized read that came before it; anything
    // else is reported after that read.
    if (uninitialized_ && s.diag.kind != DiagKind::Race) result.diagnostics.push_back(*uninitialized_);
    result.diagnostics.push_back(s.diag);
  } catch (const std::bad_alloc&) {
    // Allocations the budget does not count (the expressions' tables
    // between two checks, the standard library's own) can still fail.
    if (uninitialized_) result.diagnostics.push_back(*uninitialized_);
    result.diagnostics.push_back(limit_diag("the run ran out of memory after " + steps_text() + " (" +
                                            std::to_string(bytes_ >> 20) + " MiB of it counted)"));
  }
  if (!result.diagnostics.empty()) result.outputs.clear();
  result.notes = std::move(notes_);
  // Thread numbers run across a cluster's CTAs: reports name each thread's CTA.
  for (auto* ds : {&result.diagnostics, &result.notes})
    for (Diagnostic& d : *ds) d.names = names_;
  result.stats = stats_;
  return result;
}

// ------------------------------------------------------------ results
// Each element of an Out/InOut tensor, in its dtype: one cell, or where the
// kernel accessed the tensor narrower than its elements, the element joined
// from its cells (as a load of its width would; a value that does not make
// one is unsupported, naming the stores).
template <class D>
void Machine<D>::collect(RunResult<D>& r) {
  std::vector<std::uint32_t> bufs = param_buf_;
  for (const auto* more : {&map_tensor_buf_, &field_tensor_buf_})  // tensors only maps or structs name, once each
    for (std::uint32_t b : *more)
      if (b != kNone && std::find(bufs.begin(), bufs.end(), b) == bufs.end()) bufs.push_back(b);
  for (std::size_t i = 0; i < bufs.size(); ++i) {
    if (bufs[i] == kNone) continue;
    Memory<V>& m = mem_[bufs[i]];  // read_cell() makes the symbols of inputs never read
    const std::size_t elements = std::size_t(m.elements());
    if (o_.record_touches) {
      auto& tv = r.touches[m.name];
      tv = m.touches;
      tv.resize(elements);
    }
    if (m.role != Role::Out && m.role != Role::InOut) continue;
    auto& out = r.outputs[m.name];
    out.resize(elements);
    const unsigned down = m.ushift - m.gshift;  // a tensor's granule only ever shrinks from its dtype's size
    // Shadows stay shadows only for a caller that asked (CTA classes);
    // read_cell builds every other one out.
    const bool keep = o_.shadow_outputs && shadows_;
    std::vector<std::uint32_t>* sids = nullptr;
    for (std::size_t e = 0; e < elements; ++e) {
      const std::size_t c = e << down;
      Val<V> v;
      if (down == 0 && !m.cells.made(c)) {
        // An element the run never touched (most of a large tensor when one
        // CTA of the grid ran): its initial value, made without its page
        // (never a shadow: only a store makes one).
        v = m.cells.peek(c);
        if constexpr (kLazyInputs)
          if (m.lazy_inputs && !v.f.valid() && (v.kind == VKind::Float || v.kind == VKind::Data))
            v.f = v.kind == VKind::Data ? d_.int_input(m.name, e) : d_.input(m.name, e);
      } else {
        v = down == 0 && !(m.cells[c].tag & kSliceBits)
                ? (keep ? read_cell_keep(m, c) : read_cell(m, c))
                : join(Reader{kNone, m.unit, "read", std::uint64_t(e) << m.ushift}, m, c, m.unit);
      }
      if (v.sched) schedule_dependent(kNone, v.sched, "output " + m.name + "[" + std::to_string(e) + "]");
      if constexpr (kMemo) {
        if (v.kind == VKind::Shadow) {
          if (!sids) {
            sids = &r.output_shifts[m.name];
            sids->assign(elements, 0);
            collect_shadows(r);
          }
          (*sids)[e] = std::uint32_t(v.i);
          out[e] = v.f;
          continue;
        }
      }
      if (v.kind == VKind::Float || v.kind == VKind::Data)
        out[e] = v.f;
      else if (v.kind == VKind::Int && dtype_is_float(m.dtype) && from_bits(std::uint64_t(v.i), m.dtype))
        out[e] = *from_bits(std::uint64_t(v.i), m.dtype);  // float bits stored through an integer move
      else if (v.kind == VKind::Int)  // the stored bits, read as the tensor's type
        out[e] = d_.constant(Rational(dtype_is_signed(m.dtype) ? wrap(v.i, m.dtype)
                                                                : std::int64_t(std::uint64_t(v.i) & mask(m.dtype))));
    }
  }
}

template class Machine<SymbolicDomain>;
template class Machine<ConcreteDomain>;
template class Machine<PayloadDomain>;

}  // namespace machine

template <class Domain>
RunResult<Domain> run_program(const Program& program, const Launch& launch, Domain& domain, const RunOptions& options) {
  RunResult<Domain> r = machine::Machine<Domain>(program, launch, domain, options).run();
  // A run that stops as unsupported before it reaches an instruction the
  // lowering already knew to be unsupported (a printf's argument buffer is
  // written before the vprintf call) names that instruction too: it is
  // usually the reason the user needs.
  const Instr* kept = program.first_unsupported();
  if (!kept) return r;
  for (Diagnostic& d : r.diagnostics)
    if ((d.kind == DiagKind::Unsupported || d.kind == DiagKind::NotStructured) &&
        !(kept->loc.line == d.loc.line && kept->loc.file == d.loc.file))  // not that instruction itself
      d.detail += "  the kernel also has, at " + kept->loc.with_source() + ": " + program.unsupported_of(*kept).why + "\n";
  return r;
}

template RunResult<SymbolicDomain> run_program(const Program&, const Launch&, SymbolicDomain&, const RunOptions&);
template RunResult<ConcreteDomain> run_program(const Program&, const Launch&, ConcreteDomain&, const RunOptions&);
template RunResult<PayloadDomain> run_program(const Program&, const Launch&, PayloadDomain&, const RunOptions&);

}  // namespace tileverify
