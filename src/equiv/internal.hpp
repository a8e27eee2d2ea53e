// What the checks of equiv.cpp and payloads.cpp share: loading a spec's
// kernels, the limits of a run, and turning runs into a Report. Not public.
#pragma once

#include "tileverify/decide.hpp"
#include "tileverify/equiv.hpp"
#include "tileverify/program.hpp"

#include <chrono>
#include <new>
#include <optional>
#include <string>
#include <vector>

namespace tileverify::internal {

double since(std::chrono::steady_clock::time_point t0);
bool past(const std::optional<std::chrono::steady_clock::time_point>& deadline);
// The options of one kernel run under a check's limits.
RunOptions run_options(const RunLimits& l);
// A check's limits as those of its kernel runs.
RunLimits run_limits(const DecideLimits& d);
// A check that ran out of time between its phases: Unknown, with what was done.
void time_ran_out(Report& r, const std::string& what);
// A run's diagnostics into the report, each message prefixed with `which`
// (the kernel); the most serious decides the verdict.
void take_diagnostics(Report& r, const std::vector<Diagnostic>& ds, const std::string& which);
// A run's notes, a few of each kind.
void take_notes(Report& r, const std::vector<Diagnostic>& ns, const std::string& which);

// The spec's kernels with the names reports use: the kernel name alone for
// one kernel; "ref (name)" / "opt (name)" for two, or, with by_file, their
// PTX file names when both have the same kernel name (equiv.cpp).
std::vector<std::pair<const KernelSpec*, std::string>> kernels_of(const Spec& spec, bool by_file = false);
std::optional<Program> load_program(const KernelSpec& k, Report* r);
std::optional<Launch> checked_launch(const Spec& spec, const KernelSpec& k, const Program& p, Report* r);
// The evidence for output `name`[index] from its decision (its inputs named
// while the context is alive).
Mismatch mismatch_of(const ExprContext& c, const std::string& name, std::uint64_t index, Expr x, Expr y,
                     const Decision& d);
std::string abbreviate(const ExprContext& c, Expr e);
// The float constants of a kernel and its launch; the limits with the
// readings of both kernels' constants and a note for each (read_constants).
void add_constants(std::vector<KernelConstant>& out, const Program& p, const Launch& l, const std::string& name);
DecideLimits read_constants(const DecideLimits& limits, const std::vector<KernelConstant>& cs,
                            const std::vector<const Program*>& ks, std::vector<Diagnostic>* notes);

// "ctas": "all" by CTA classes (class_check.cpp): the report, or none (and
// why in *why) when a kernel's grid has to be run CTA by CTA. limits: the
// equivalence check's (none: `check`).
std::optional<Report> class_check(const Spec& spec, const RunLimits& run, const DecideLimits* limits, std::string* why);
// A shard's ShardInfo before its plan (shard_info.cpp): its index and count,
// and what makes the reports of the shards of one check one check's (the
// command: equiv when `equiv`, else check; the options of `run` that change a
// verdict; the spec file, its sizes, the kernels and their PTX files).
ShardInfo shard_info(const Spec& spec, const RunLimits& run, bool equiv);

// Both kernels of a pair spec, lowered, with their launches and report names;
// none (and the reason in *r) when the spec is no pair or a kernel does not load.
struct LoadedPair {
  Program ref;
  std::optional<Program> own_opt;  // none: the optimized kernel is the reference itself
  const Program& opt() const { return own_opt ? *own_opt : ref; }
  Launch ref_launch, opt_launch;
  std::string ref_name, opt_name;
  double parse_seconds = 0;
};
std::optional<LoadedPair> load_pair(const Spec& spec, const std::string& what, Report* r);

// A report whose verdict is `error` or `unsupported` names its reason in
// Report::diagnostics too (docs/reports.md), as a diagnostic of kind
// bad_input or unsupported; one that only has Report::error (a spec that
// does not fit its kernels) gets one at the spec file.
inline void error_as_diagnostic(Report& r, const std::string& spec_path) {
  if ((r.verdict != Outcome::Error && r.verdict != Outcome::Unsupported) || !r.diagnostics.empty() || r.error.empty())
    return;
  Diagnostic d;
  d.kind = r.verdict == Outcome::Error ? DiagKind::BadInput : DiagKind::Unsupported;
  d.message = r.error;
  d.loc.file = spec_path;
  r.diagnostics.push_back(std::move(d));
}

// No exception leaves the public checks: running out of memory is a limit
// (Unknown), anything else a bug of ours, reported as Unknown with a request
// to report it, never an abort of the caller.
template <class F>
Report guarded(const Spec& spec, F&& check) {
  const std::string what = spec.path.empty() ? std::string("the kernels") : "the spec " + spec.path;
  Report r;
  r.verdict = Outcome::Unknown;
  try {
    Report done = check();
    error_as_diagnostic(done, spec.path);
    return done;
  } catch (const std::bad_alloc&) {
    r.error = "ran out of memory while checking " + what + " (lower --max-memory so that a limit ends it earlier, "
              "or check a smaller launch)";
  } catch (const std::exception& e) {
    r.error = std::string("internal error: ") + e.what() + "; please report it, with " + what + " and its PTX";
  } catch (...) {
    r.error = "internal error (an unknown exception); please report it, with " + what + " and its PTX";
  }
  return r;
}

}  // namespace tileverify::internal
