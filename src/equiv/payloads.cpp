// Payload checks (docs/fpsan.md): ref and opt run on random FpSan payload
// inputs and their outputs compared bit for bit.
#include "internal.hpp"
#include "tileverify/equiv.hpp"
#include "tileverify/payload_domain.hpp"

#include <algorithm>
#include <chrono>
#include <sstream>

namespace tileverify {

using namespace internal;

namespace {

Report payloads(const Spec& spec, const PayloadOptions& options) {
  Report r;
  if (spec.all_ctas) {
    r.error = spec.path + ": payload checks run one CTA (the spec's \"cta\", or --cta), not \"ctas\": \"all\"";
    return r;
  }
  auto pair = load_pair(spec, "a payload check", &r);
  if (!pair) return r;
  r.stats.parse_seconds = pair->parse_seconds;
  r.verdict = Outcome::Ok;  // take_diagnostics replaces it with what a run found
  auto t0 = std::chrono::steady_clock::now();
  for (unsigned trial = 0; trial < std::max(1u, options.trials); ++trial) {
    const std::uint64_t seed = options.seed + trial;
    if (past(options.limits.deadline)) {
      time_ran_out(r, "after " + std::to_string(trial) + " of the " + std::to_string(options.trials) +
                          " trials (the outputs agreed on all of them)");
      break;
    }
    PayloadDomain dom(seed);
    // Addresses and control flow of a structured kernel do not depend on the
    // data, so the first run's race check holds for every input.
    RunOptions ro = run_options(options.limits);
    ro.check_races = trial == 0;
    auto x = run_program(pair->ref, pair->ref_launch, dom, ro);
    auto y = run_program(pair->opt(), pair->opt_launch, dom, ro);
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
    for (const auto& [name, xs] : x.outputs) {
      auto other = y.outputs.find(name);
      for (std::size_t e = 0; e < xs.size() && !r.mismatch; ++e) {
        ++r.stats.outputs_compared;
        std::optional<std::uint32_t> p = xs[e], q;
        if (other != y.outputs.end() && e < other->second.size()) q = other->second[e];
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
