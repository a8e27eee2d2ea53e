// Payload checks (docs/fpsan.md): ref and opt run on random FpSan payload
// inputs and their outputs compared bit for bit, on one CTA or, with
// "ctas": "all", on every CTA of the grid (grid.hpp).
#include "grid.hpp"
#include "internal.hpp"
#include "tileverify/equiv.hpp"
#include "tileverify/payload_domain.hpp"

#include <algorithm>
#include <chrono>
#include <set>
#include <sstream>

namespace tileverify {

using namespace internal;

namespace {

using PayloadOutputs = std::map<std::string, std::vector<std::optional<PayloadDomain::Value>>>;

// One kernel's outputs on one payload input: its run on the spec's CTA, or
// on every CTA of its grid. writers: for a grid, the CTA that wrote each
// output element.
struct PayloadRun {
  PayloadOutputs outputs;
  std::map<std::string, std::vector<std::optional<Dim3>>> writers;
  std::vector<Diagnostic> diagnostics, notes;
  RunStats stats;
};
PayloadRun run_payloads(const Program& p, const Launch& l, PayloadDomain& dom, const RunLimits& limits,
                        bool all_ctas, bool check_races) {
  PayloadRun out;
  if (all_ctas) {
    auto g = run_grid(p, l, dom, limits, check_races);
    out.outputs = std::move(g.outputs);
    out.writers = std::move(g.writers);
    out.diagnostics = std::move(g.diagnostics);
    out.notes = std::move(g.notes);
    out.stats = g.stats;
  } else {
    RunOptions ro = run_options(limits);
    ro.check_races = check_races;
    auto run = run_program(p, l, dom, ro);
    out.outputs = std::move(run.outputs);
    out.diagnostics = std::move(run.diagnostics);
    out.notes = std::move(run.notes);
    out.stats = run.stats;
  }
  return out;
}

Report payloads(const Spec& spec, const PayloadOptions& options) {
  Report r;
  auto pair = load_pair(spec, "a payload check", &r);
  if (!pair) return r;
  r.stats.parse_seconds = pair->parse_seconds;
  r.verdict = Outcome::Ok;  // take_diagnostics replaces it with what a run found
  const unsigned trials = std::max(1u, options.trials);
  // A grid's progress counts the CTAs of every run: two kernels a trial.
  RunLimits limits = options.limits;
  unsigned run_index = 0;
  if (spec.all_ctas && options.limits.grid_progress)
    limits.grid_progress = [&](std::uint64_t done, std::uint64_t total) {
      options.limits.grid_progress(run_index * total + done, std::uint64_t(trials) * 2 * total);
    };
  auto t0 = std::chrono::steady_clock::now();
  for (unsigned trial = 0; trial < trials; ++trial) {
    const std::uint64_t seed = options.seed + trial;
    if (past(options.limits.deadline)) {
      time_ran_out(r, "after " + std::to_string(trial) + " of the " + std::to_string(options.trials) +
                          " trials (the outputs agreed on all of them)");
      break;
    }
    PayloadDomain dom(seed);
    // Addresses and control flow of a structured kernel do not depend on the
    // data, so the first run's race check holds for every input (races
    // between CTAs are checked on every input: that costs nothing more).
    run_index = 2 * trial;
    auto x = run_payloads(pair->ref, pair->ref_launch, dom, limits, spec.all_ctas, trial == 0);
    run_index = 2 * trial + 1;
    auto y = run_payloads(pair->opt(), pair->opt_launch, dom, limits, spec.all_ctas, trial == 0);
    ++r.stats.trials;
    if (trial == 0) {
      r.stats.ref = x.stats;
      r.stats.opt = y.stats;
    }
    take_diagnostics(r, x.diagnostics, pair->ref_name);
    take_notes(r, x.notes, pair->ref_name);
    take_diagnostics(r, y.diagnostics, pair->opt_name);
    take_notes(r, y.notes, pair->opt_name);
    if (!r.diagnostics.empty()) break;
    r.stats.outputs_compared = 0;
    // Every output either kernel wrote (a grid run lists only the tensors
    // some CTA wrote): an element only one of them writes differs too.
    std::set<std::string> names;
    for (const auto& kv : x.outputs) names.insert(kv.first);
    for (const auto& kv : y.outputs) names.insert(kv.first);
    static const std::vector<std::optional<PayloadDomain::Value>> kNone;
    for (const std::string& name : names) {
      const auto xi = x.outputs.find(name), yi = y.outputs.find(name);
      const auto& xs = xi == x.outputs.end() ? kNone : xi->second;
      const auto& ys = yi == y.outputs.end() ? kNone : yi->second;
      for (std::size_t e = 0; e < std::max(xs.size(), ys.size()) && !r.mismatch; ++e) {
        ++r.stats.outputs_compared;
        std::optional<std::uint32_t> p, q;
        if (e < xs.size()) p = xs[e];
        if (e < ys.size()) q = ys[e];
        if (p == q) continue;
        Mismatch m;
        m.output = name;
        m.element = e;
        auto show = [&](const std::optional<std::uint32_t>& v) {
          if (!v) return std::string("(not written)");
          std::ostringstream os;
          os << dom.text(*v) << " (unembedded: " << PayloadDomain::to_float(*v) << ")";
          return os.str();
        };
        m.ref_expr = show(p);
        m.opt_expr = show(q);
        m.why = "on random payload inputs number " + std::to_string(trial) + " (seed " + std::to_string(seed) +
                "; rerun with --trials 1 --seed " + std::to_string(seed) + ")";
        m.cta = spec.cta;
        if (spec.all_ctas) {
          // The CTA that wrote the element (ref's, else opt's).
          for (const auto* w : {&x.writers, &y.writers}) {
            auto it = w->find(name);
            if (it != w->end() && e < it->second.size() && it->second[e]) {
              m.cta = *it->second[e];
              break;
            }
          }
        }
        r.mismatch = m;
        r.verdict = Outcome::PayloadsDiffer;
      }
      if (r.mismatch) break;
    }
    if (r.mismatch) break;
  }
  r.stats.eval_seconds = since(t0);
  if (r.verdict == Outcome::Ok) r.verdict = Outcome::PayloadsAgree;
  return r;
}

}  // namespace

Report check_payloads(const Spec& spec, const PayloadOptions& given) {
  PayloadOptions options = given;
  options.limits.strict = options.limits.strict || spec.strict;
  return guarded(spec, [&] { return payloads(spec, options); });
}

}  // namespace tileverify
