// The names of diagnostic kinds and the text of a diagnostic, as reports
// and the command line print them.
#include "tileverify/eval.hpp"

#include <cstddef>
#include <sstream>
#include <string>

namespace tileverify {

const char* diag_kind_name(DiagKind k) {
  switch (k) {
    case DiagKind::Race: return "race";
    case DiagKind::Deadlock: return "deadlock";
    case DiagKind::OutOfBounds: return "out_of_bounds";
    case DiagKind::Uninitialized: return "uninitialized";
    case DiagKind::NotStructured: return "not_structured";
    case DiagKind::Unsupported: return "unsupported";
    case DiagKind::BadLaunch: return "bad_launch";
    case DiagKind::Trap: return "trap";
    case DiagKind::Limit: return "limit";
    case DiagKind::BarrierDivergence: return "barrier_divergence";
    case DiagKind::SameValueWrite: return "same_value_write";
    case DiagKind::ConstantRead: return "constant_read";
    case DiagKind::BadInput: return "bad_input";
    case DiagKind::LaunchContract: return "launch_contract";
    case DiagKind::Undefined: return "undefined";
  }
  return "?";
}

std::string Diagnostic::text() const {
  std::ostringstream os;
  os << diag_kind_name(kind) << ": " << message << "\n";
  if ((kind == DiagKind::Race || kind == DiagKind::SameValueWrite) && accesses.size() == 2) {
    bool async = false, atomic = false, both_atomic = true;
    for (std::size_t i = 0; i < 2; ++i) {
      const AccessInfo& a = accesses[i];
      std::string how = a.kind.empty() ? (a.write ? "write" : "read ") : a.kind;
      async = async || a.kind == "cp.async write";
      atomic = atomic || a.kind == "atomic";
      both_atomic = both_atomic && a.kind == "atomic";
      os << "  " << (i == 0 ? "earlier " : "later   ") << how << " by thread " << a.thread << " at " << a.loc.with_source()
         << ": " << a.instr << "\n";
    }
    if (!detail.empty())
      ;  // the reporter explains this race itself (e.g. between two CTAs)
    else if (kind == DiagKind::SameValueWrite)
      os << "  the PTX memory model calls this a data race, but both writes store the same value (--strict reports it)\n";
    else if (async)
      os << "  cp.async writes shared memory only when a cp.async.wait_group / wait_all of the copying\n"
            "  thread retires its group: wait for the group (and, for other threads, then add a barrier)\n"
            "  before touching the destination\n";
    else if (both_atomic)
      os << "  these two atomics do not commute (different operations or types, or exch, inc, dec or cas\n"
            "  with different operands): the value they leave depends on which runs first\n";
    else if (atomic)
      os << "  atomics that commute never race with each other, but an atomic and a plain access of the\n"
            "  same element race unless a barrier orders them (e.g. __syncthreads() / bar.sync between them)\n";
    else
      os << "  no barrier or other synchronization orders these two accesses: the result depends on\n"
            "  which thread runs first (add a barrier between them, e.g. __syncthreads() / bar.sync)\n";
  } else {
    // A bad launch is found before any instruction runs: it has no place.
    if ((kind != DiagKind::BadLaunch && kind != DiagKind::Limit && kind != DiagKind::ConstantRead) || !loc.file.empty())
      os << "  at " << loc.with_source() << "\n";
    if (!threads.empty()) {
      os << "  thread" << (threads.size() > 1 ? "s " : " ");
      for (std::size_t i = 0; i < threads.size() && i < 16; ++i) os << (i ? ", " : "") << threads[i];
      if (threads.size() > 16) os << ", ... (" << threads.size() << " in all)";
      os << "\n";
    }
  }
  if (!detail.empty()) os << detail;
  return os.str();
}

}  // namespace tileverify
