// The names of diagnostic kinds and the text of a diagnostic, as reports
// and the command line print them.
#include "tileverify/eval.hpp"

#include <algorithm>
#include <cstddef>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

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

namespace {

// "0-15", "0-7, 12, 30-31", "1, 3, ..., 63 (32 threads)": reports name
// sets of threads, which are mostly runs or strided. ts sorted, no repeats.
std::string number_list(const std::vector<std::uint32_t>& ts) {
  std::ostringstream os;
  if (ts.size() > 8) {
    const std::uint32_t step = ts[1] - ts[0];
    bool strided = step > 1;
    for (std::size_t i = 2; i < ts.size() && strided; ++i) strided = ts[i] - ts[i - 1] == step;
    if (strided) {
      os << ts[0] << ", " << ts[1] << ", ..., " << ts.back() << " (" << ts.size() << " threads)";
      return os.str();
    }
  }
  std::vector<std::pair<std::uint32_t, std::uint32_t>> runs;
  for (std::uint32_t t : ts)
    if (!runs.empty() && runs.back().second + 1 == t)
      runs.back().second = t;
    else
      runs.emplace_back(t, t);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (runs.size() > 8 && i == 6) {
      os << ", ...";
      i = runs.size() - 1;
    }
    if (i) os << ", ";
    os << runs[i].first;
    if (runs[i].second != runs[i].first) os << "-" << runs[i].second;
  }
  if (runs.size() > 8) os << " (" << ts.size() << " threads)";
  return os.str();
}

std::string dim_text(const Dim3& d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

}  // namespace

std::string ThreadNames::one(std::uint32_t t) const {
  if (per_cta == 0 || t / per_cta >= ctas.size()) return std::to_string(t);
  const Cta& c = cta_of(t);
  std::string s = std::to_string(t % per_cta) + " of CTA " + dim_text(c.cta);
  if (c.in_cluster) s += ", cluster " + dim_text(c.cluster) + " rank " + std::to_string(c.rank);
  return s;
}

std::string ThreadNames::list(std::vector<std::uint32_t> ts) const {
  std::sort(ts.begin(), ts.end());
  ts.erase(std::unique(ts.begin(), ts.end()), ts.end());
  if (per_cta == 0 || ts.empty() || ts.back() / per_cta >= ctas.size()) return number_list(ts);
  // One group per CTA, numbered within it: sorted run numbers are grouped
  // by CTA already.
  std::string s;
  for (std::size_t i = 0; i < ts.size();) {
    const std::uint32_t k = ts[i] / per_cta;
    std::vector<std::uint32_t> mine;
    for (; i < ts.size() && ts[i] / per_cta == k; ++i) mine.push_back(ts[i] % per_cta);
    s += (s.empty() ? "" : i == ts.size() ? " and " : ", ") + number_list(mine) + " of CTA " + dim_text(ctas[k].cta);
  }
  return s;
}

std::string memory_place(Space space, const std::string& name, std::int64_t byte, std::uint64_t width,
                         std::optional<std::int64_t> element) {
  std::string s = std::to_string(width) + (width == 1 ? " byte at " : " bytes at ") + space_name(space) + " " + name +
                  (byte < 0 ? "-" : "+") + std::to_string(byte < 0 ? -std::uint64_t(byte) : std::uint64_t(byte));
  if (element) s += " (element " + std::to_string(*element) + ")";
  return s;
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
      os << "  " << (i == 0 ? "earlier " : "later   ") << how << " by thread " << names.one(a.thread) << " at " << a.loc.with_source()
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
    if (!threads.empty() && names.per_cta != 0) {
      os << "  thread" << (threads.size() > 1 ? "s " + names.list(threads) : " " + names.one(threads[0])) << "\n";
    } else if (!threads.empty()) {
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
