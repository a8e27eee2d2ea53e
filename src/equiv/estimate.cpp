// What an equivalence check would cost, before it runs (equiv.hpp,
// estimate_equivalence; docs/cli.md "Estimating a check"). The classes come
// from concrete runs, as a shard finds them (no expressions); one symbolic
// run per kernel is timed, and the check makes `runs` of them.
#include "class_plan.hpp"
#include "cta_classes.hpp"
#include "grid.hpp"
#include "internal.hpp"
#include "../util/units.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <exception>
#include <new>
#include <sstream>

namespace tileverify {

using namespace internal;

namespace {

std::string seconds_text(double s) {
  char buf[48];
  if (s < 1) {
    std::snprintf(buf, sizeof buf, "%.3g s", s);
  } else if (s < 120) {
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  } else if (s < 7200) {
    std::snprintf(buf, sizeof buf, "%.0f min", s / 60);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  }
  return buf;
}

// Times the symbolic run of `cta` into a context of its own.
void measure(const Program& p, Launch l, const Dim3& cta, const RunLimits& run, KernelEstimate& k,
             std::vector<Diagnostic>& found) {
  ExprContext c;
  SymbolicDomain dom(c);
  l.cta = cta;
  k.first = cta;
  const std::size_t before = c.memory_bytes();
  const auto t0 = std::chrono::steady_clock::now();
  RunResult<SymbolicDomain> res = run_program(p, l, dom, run_options(run));
  k.first_seconds = since(t0);
  k.first_bytes = c.memory_bytes() > before ? c.memory_bytes() - before : 0;
  for (Diagnostic& d : res.diagnostics) {
    if (d.kind == DiagKind::Limit) {
      k.finished = false;
      continue;
    }
    d.message = k.kernel + ": " + with_cta(cta, d.message);
    found.push_back(std::move(d));
  }
}

CheckEstimate estimate(const Spec& spec, const DecideLimits& limits) {
  CheckEstimate e;
  e.spec = spec.path;
  const auto t0 = std::chrono::steady_clock::now();
  const RunLimits run = run_limits(limits);
  const auto kernels = kernels_of(spec);
  Report r;  // what loading says, if it fails
  std::vector<Program> programs;
  std::vector<Launch> launches;
  for (const auto& [k, name] : kernels) {
    std::optional<Program> p = load_program(*k, &r);
    if (!p) break;
    std::optional<Launch> l = checked_launch(spec, *k, *p, &r);
    if (!l) break;
    programs.push_back(std::move(*p));
    launches.push_back(*l);
  }
  if (programs.size() != kernels.size()) {
    e.error = !r.error.empty() ? r.error : !r.diagnostics.empty() ? r.diagnostics.front().message : "a kernel could not be read";
    return e;
  }
  ConcreteDomain concrete;
  std::vector<KernelClasses> ks;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    KernelEstimate k;
    k.kernel = kernels[i].second;
    const Dim3 cluster = run_cluster(programs[i], launches[i]);
    if (!spec.all_ctas) {
      k.ctas = 1;
      k.runs = 1;
      measure(programs[i], launches[i], spec.cta, run, k, e.diagnostics);
      e.kernels.push_back(k);
      continue;
    }
    k.ctas = launches[i].grid.count();
    KernelClasses kc;
    if (limits.cta_classes) {
      kc = run_classes(programs[i], launches[i], concrete, run);
      if (kc.fallback.empty() && kc.diagnostics.empty()) spread(programs[i], launches[i], kc, run.deadline);
      for (Diagnostic d : kc.diagnostics) {
        if (d.kind == DiagKind::Limit) {
          e.error = k.kernel + ": " + d.message;
          return e;
        }
        d.message = k.kernel + ": " + d.message;
        e.diagnostics.push_back(std::move(d));
      }
    } else {
      kc.fallback = "--no-symmetry";
    }
    if (kc.fallback.empty() && !kc.classes.empty()) {
      k.classes = kc.classes.size();
      k.runs = k.classes;
      measure(programs[i], launches[i], kc.classes.front().log->cta(), run, k, e.diagnostics);
    } else {
      k.by_grid = kc.fallback.empty() ? "no classes" : kc.fallback;
      k.runs = k.ctas / std::max<std::uint64_t>(1, cluster.count());
      measure(programs[i], launches[i], Dim3{0, 0, 0}, run, k, e.diagnostics);
    }
    e.kernels.push_back(k);
    ks.push_back(std::move(kc));
  }
  // The comparisons, when both kernels have classes (else one per element
  // both write, which the grid runs find).
  if (ks.size() == 2 && ks[0].fallback.empty() && ks[1].fallback.empty() && e.diagnostics.empty())
    if (std::optional<Plan> pl = plan(ks[0], ks[1], run.deadline)) {
      e.elements = pl->elements;
      e.comparisons = pl->comparisons.size();
    }
  for (const KernelEstimate& k : e.kernels) {
    e.run_seconds += double(k.runs) * k.first_seconds;
    e.memory_bytes += k.runs * k.first_bytes;
    e.lower_bound = e.lower_bound || !k.finished;
  }
  e.seconds = since(t0);
  return e;
}

}  // namespace

CheckEstimate estimate_equivalence(const Spec& spec, const DecideLimits& limits) {
  try {
    return estimate(spec, limits);
  } catch (const std::bad_alloc&) {
    CheckEstimate e;
    e.spec = spec.path;
    e.error = "ran out of memory while estimating";
    return e;
  } catch (const std::exception& x) {
    CheckEstimate e;
    e.spec = spec.path;
    e.error = std::string("internal error: ") + x.what();
    return e;
  }
}

std::string CheckEstimate::text() const {
  std::ostringstream os;
  if (!error.empty()) {
    os << "ERROR: " << error << "\n";
    return os.str();
  }
  os << "ESTIMATE of the equivalence check of " << spec << " (nothing decided)\n";
  for (const KernelEstimate& k : kernels) {
    os << "  " << k.kernel << ": ";
    if (k.classes)
      os << k.classes << (k.classes == 1 ? " CTA class" : " CTA classes") << " for " << k.ctas << " CTAs";
    else if (!k.by_grid.empty())
      os << "CTA by CTA (" << k.by_grid << "): " << k.runs << " runs for " << k.ctas << " CTAs";
    else
      os << cta_name(k.first);
    os << "; the run of " << cta_name(k.first) << (k.finished ? " took " : " did not end in ")
       << seconds_text(k.first_seconds) << " and " << util::size_text(k.first_bytes) << " of expressions\n";
  }
  if (comparisons)
    os << "  " << elements << " output elements, " << comparisons << " distinct comparisons after renaming\n";
  os << "  predicted: " << (lower_bound ? "more than " : "about ") << seconds_text(run_seconds)
     << " to run the kernels, " << (lower_bound ? "more than " : "") << util::size_text(memory_bytes)
     << " of expressions; renaming the representatives' outputs and deciding the "
     << (comparisons ? std::to_string(comparisons) + " comparisons" : std::string("outputs"))
     << " come on top (an identity costs microseconds, an output that needs normal forms up to the per-output "
        "limit)\n";
  for (const Diagnostic& d : diagnostics) os << "  found on the way: " << d.message << "\n";
  os << "  time: " << seconds_text(seconds) << "\n";
  return os.str();
}

std::string CheckEstimate::json() const {
  nlohmann::json j;
  j["spec"] = spec;
  if (!error.empty()) {
    j["error"] = error;
    return j.dump(2) + "\n";
  }
  nlohmann::json ks = nlohmann::json::array();
  for (const KernelEstimate& k : kernels)
    ks.push_back({{"kernel", k.kernel},
                  {"ctas", k.ctas},
                  {"classes", k.classes},
                  {"by_grid", k.by_grid},
                  {"runs", k.runs},
                  {"first", {k.first.x, k.first.y, k.first.z}},
                  {"first_seconds", k.first_seconds},
                  {"first_bytes", k.first_bytes},
                  {"finished", k.finished}});
  j["kernels"] = ks;
  j["elements"] = elements;
  j["comparisons"] = comparisons;
  j["run_seconds"] = run_seconds;
  j["memory_bytes"] = memory_bytes;
  j["lower_bound"] = lower_bound;
  nlohmann::json ds = nlohmann::json::array();
  for (const Diagnostic& d : diagnostics) ds.push_back(d.message);
  j["found"] = ds;
  j["seconds"] = seconds;
  return j.dump(2) + "\n";
}

}  // namespace tileverify
