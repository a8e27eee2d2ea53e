// The launch-contract scan (docs/reports.md, "launch_contract"). A check of
// one CTA proves what that CTA computes; a kernel with TMA copies can still
// trap in another CTA when the launch starts CTAs it has no tile for: the
// tile coordinates of such a CTA lie outside the tensor map, and a TMA copy
// there traps on the GPU ("an illegal instruction was encountered",
// tools/gpu_checks/tma_bounds.cu; the evaluator decides which copies trap and
// stops them with DiagKind::LaunchContract). So every CTA of the grid runs
// once, concretely and without race tracking, before the check of one CTA:
// cheap, since only control flow and addresses matter here and a structured
// CTA's are the same for every input.
#include "grid.hpp"

#include <algorithm>
#include <chrono>
#include <sstream>

namespace tileverify::internal {

namespace {

// The scan stops at this many CTAs that break the contract: enough to show
// the pattern (the last CTAs of the grid), not thousands of lines.
constexpr std::size_t kMostBreaking = 4;

}  // namespace

bool has_tma(const Program& p) {
  return std::any_of(p.code.begin(), p.code.end(),
                     [](const Instr& in) { return in.op == Opcode::TmaLoad || in.op == Opcode::TmaStore; });
}

bool scan_launch_contract(const Program& p, Launch l, const RunLimits& limits, const std::string& name, Report& r) {
  const auto t0 = std::chrono::steady_clock::now();
  ContractScan scan;
  scan.kernel = name;
  scan.grid_ctas = l.grid.count();
  // Half the time left at most: the check of one CTA, which decides the
  // outputs, needs the rest. Past it, the check goes on without the rest
  // of the scan, and says so.
  RunOptions opts = run_options(limits);
  std::optional<std::chrono::steady_clock::time_point> until;
  if (limits.deadline) until = t0 + (*limits.deadline - t0) / 2;
  opts.deadline = until;
  // Races are the check of one CTA's to find (and "ctas": "all"'s between
  // CTAs); here they would only slow every CTA's run down.
  opts.check_races = false;
  ConcreteDomain dom;
  const Dim3 cluster = run_cluster(p, l);
  // The one-CTA check's run (its cluster's, in a cluster launch), which
  // notes its own findings.
  const Dim3 checked = cluster_cta(l.cta, cluster, 0);
  std::vector<Diagnostic> found;  // the contract's breaches, then any other bug found
  // Notes of other CTAs' TMA copies outside their map that do not trap (a
  // load wholly past the tensor reads zeros): a launch with more CTAs than
  // tiles that is harmless, worth a line.
  std::vector<Diagnostic> notes;
  bool other_bug = false;
  bool stopped_at_checked = false;
  // Why the scan must stop before the next CTA, or "".
  auto out_of_time = [&](std::uint64_t done) -> std::string {
    if (!until) return "";
    const auto now = std::chrono::steady_clock::now();
    if (now >= *until) return "the time limit (half the time left before the check of one CTA)";
    // A grid whose projected rest would not fit stops now, not at the limit.
    const double spent = std::chrono::duration<double>(now - t0).count();
    const double left = std::chrono::duration<double>(*until - now).count();
    const double rest = spent / double(done ? done : 1) * double(scan.grid_ctas - done);
    if (done >= 8 && spent >= 0.05 && rest > left) {
      std::ostringstream os;
      os.precision(3);
      os << "the time limit: the other CTAs would take about " << rest << " s at the rate of the first " << done
         << ", more than the scan's share of the time left (" << left << " s; half the time left before the check of "
         << "one CTA)";
      return os.str();
    }
    return "";
  };
  auto go_on = [&] { return scan.stopped.empty() && !other_bug && scan.breaking.size() < kMostBreaking; };
  for (std::uint32_t z = 0; z < l.grid.z && go_on(); ++z)
    for (std::uint32_t y = 0; y < l.grid.y && go_on(); ++y)
      for (std::uint32_t x = 0; x < l.grid.x && go_on(); ++x) {
        l.cta = Dim3{x, y, z};
        if (!starts_run(l.cta, cluster)) continue;
        scan.stopped = out_of_time(scan.ctas_run);
        if (!scan.stopped.empty()) continue;
        RunResult<ConcreteDomain> run = run_program(p, l, dom, opts);
        scan.ctas_run += cluster.count();
        if (!(l.cta.x == checked.x && l.cta.y == checked.y && l.cta.z == checked.z))
          for (Diagnostic& n : run.notes)
            if (n.kind == DiagKind::LaunchContract && notes.size() < kMostBreaking) {
              n.message = with_run(l.cta, cluster, n.message);
              notes.push_back(std::move(n));
            }
        if (run.diagnostics.empty()) continue;
        auto contract = std::find_if(run.diagnostics.begin(), run.diagnostics.end(),
                                     [](const Diagnostic& d) { return d.kind == DiagKind::LaunchContract; });
        int worst = 0;
        for (const Diagnostic& d : run.diagnostics) worst = std::max(worst, severity(outcome_of(d.kind)));
        if (contract != run.diagnostics.end() && worst <= severity(Outcome::LaunchContract)) {
          Diagnostic d = *contract;
          d.message = with_run(l.cta, cluster, d.message);
          found.push_back(std::move(d));
          scan.breaking.push_back(l.cta);
          continue;
        }
        if (worst >= severity(Outcome::OutOfBounds)) {
          // A bug of another kind in this CTA (a deadlock, a trap, an access
          // out of bounds), which the check of one CTA may not reach: it is
          // the answer, naming the CTA, as "ctas": "all" would give it.
          for (Diagnostic d : run.diagnostics) {
            d.message = with_run(l.cta, cluster, d.message);
            found.push_back(std::move(d));
          }
          other_bug = true;
          continue;
        }
        // Unsupported code, a limit, a bad launch: this CTA cannot be
        // scanned, and the check of one CTA reports its own.
        const Diagnostic& d = run.diagnostics.front();
        scan.stopped = run_name(l.cta, cluster) + " (" + diag_kind_name(d.kind) + ": " + d.message + ")";
        stopped_at_checked = l.cta.x == checked.x && l.cta.y == checked.y && l.cta.z == checked.z;
      }
  scan.seconds = since(t0);
  r.stats.eval_seconds += scan.seconds;
  for (Diagnostic& n : notes) {
    n.message = name + ": " + n.message;
    r.notes.push_back(std::move(n));
  }
  if (!found.empty()) {
    take_diagnostics(r, found, name);
    r.contract_scans.push_back(std::move(scan));
    return true;
  }
  // Stopped at the CTA the check runs anyway: its report says why, once.
  if (!scan.stopped.empty() && !stopped_at_checked) {
    Diagnostic n;
    n.kind = DiagKind::Limit;
    n.message = name + ": the launch-contract scan ran " + std::to_string(scan.ctas_run) + " of the " +
                std::to_string(scan.grid_ctas) + " CTAs of the grid and stopped at " + scan.stopped +
                "; the CTAs not run may still issue TMA copies that trap on a GPU";
    r.notes.push_back(std::move(n));
  }
  r.contract_scans.push_back(std::move(scan));
  return false;
}

}  // namespace tileverify::internal
