// The public checks: running a spec's kernels (one CTA or the whole grid),
// deciding every output element. Payload checks are in payloads.cpp, spec
// files are read in src/spec/, reports written in report.cpp.
#include "tileverify/equiv.hpp"

#include "cta_classes.hpp"
#include "grid.hpp"
#include "internal.hpp"
#include "../spec/kernel_names.hpp"
#include "tileverify/ptx.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <unordered_map>

namespace tileverify {

namespace fs = std::filesystem;
using namespace internal;  // the helpers payloads.cpp shares (internal.hpp)
// ---------------------------------------------------------------- running

// A spec's launches (launch_of, launch_for) are made in src/spec/launch.cpp, which
// checks them against the kernel's PTX parameters and thread counts.

namespace internal {

// Lowers kernel k from an already parsed PTX file.
KernelLoad lower_parsed(const ptx::ParseResult& parsed, const KernelSpec& k) {
  KernelLoad r;
  if (parsed.error) {
    r.error = parsed.error->text();
    r.bad_input = !parsed.error->unsupported;  // a parse error is bad input, unless the parser knows the form
    r.loc = parsed.error->loc;
    return r;
  }
  // The spec may name the kernel demangled ("sgemm_smem<32>").
  const std::optional<std::string> entry = kernel_entry(*parsed.module, k.kernel, &r.error);
  if (!entry) {
    r.bad_input = true;
    r.loc.file = k.ptx;
    return r;
  }
  auto lowered = ptx::lower_kernel(*parsed.module, *entry, k.dynamic_shared);
  if (lowered.error) {
    r.error = lowered.error->text();
    r.bad_input = !lowered.error->unsupported;
    r.loc = lowered.error->loc;
    return r;
  }
  r.program = std::move(lowered.program);
  return r;
}

}  // namespace internal

KernelLoad load_kernel(const KernelSpec& k) { return lower_parsed(ptx::parse_ptx_file(k.ptx), k); }

namespace internal {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::optional<Program> take_program(KernelLoad l, Report* r) {
  if (!l.program) {
    // Unsupported PTX is outside the supported class; a missing kernel is bad input.
    r->verdict = l.bad_input ? Outcome::Error : Outcome::Unsupported;
    r->error = l.error;
    // The reason as a diagnostic too, with its place, as a run's are.
    Diagnostic d;
    d.kind = l.bad_input ? DiagKind::BadInput : DiagKind::Unsupported;
    d.loc = l.loc;
    const std::string prefix = l.loc.with_source() + ": error: ";
    d.message = l.error.rfind(prefix, 0) == 0 ? l.error.substr(prefix.size()) : l.error;
    r->diagnostics.push_back(std::move(d));
  }
  return std::move(l.program);
}

std::optional<Program> load_program(const KernelSpec& k, Report* r) { return take_program(load_kernel(k), r); }

// Kernel k's launch checked against its program (launch_for); none, with the
// error in *r (bad input), when the spec's launch does not fit the kernel.
std::optional<Launch> checked_launch(const Spec& spec, const KernelSpec& k, const Program& p, Report* r) {
  LaunchResult l = launch_for(spec, k, p);
  if (!l.launch) {
    r->verdict = Outcome::Error;
    r->error = l.error;
  }
  return std::move(l.launch);
}

// The options of one kernel run under a check's limits.
RunOptions run_options(const RunLimits& l) {
  RunOptions o;
  o.deadline = l.deadline;
  o.max_memory_bytes = l.max_memory_bytes ? l.max_memory_bytes : default_memory_budget();
  o.max_steps = l.max_steps;
  o.strict = l.strict;
  o.thread_classes = l.thread_classes;
  return o;
}
RunLimits run_limits(const DecideLimits& d) {
  RunLimits l;
  l.deadline = d.deadline;
  l.max_memory_bytes = d.max_memory_bytes;
  l.grid_progress = d.grid_progress;
  l.strict = d.strict;
  l.cta_classes = d.cta_classes;
  l.thread_classes = d.thread_classes;
  l.shard_index = d.shard_index;
  l.shard_count = d.shard_count;
  return l;
}
bool past(const std::optional<std::chrono::steady_clock::time_point>& deadline) {
  return deadline && std::chrono::steady_clock::now() > *deadline;
}
// A check that ran out of time between its phases (after reading the PTX,
// say): Unknown, with what was done.
void time_ran_out(Report& r, const std::string& what) {
  Diagnostic d;
  d.kind = DiagKind::Limit;
  d.message = "time limit reached " + what;
  r.diagnostics.push_back(d);
  r.verdict = Outcome::Unknown;
}

Outcome outcome_of(DiagKind k) {
  switch (k) {
    case DiagKind::Race: return Outcome::Race;
    case DiagKind::Deadlock: return Outcome::Deadlock;
    case DiagKind::OutOfBounds: return Outcome::OutOfBounds;
    case DiagKind::Uninitialized: return Outcome::Uninitialized;
    case DiagKind::NotStructured:
    case DiagKind::Unsupported: return Outcome::Unsupported;
    case DiagKind::BadLaunch: return Outcome::Error;
    case DiagKind::Trap: return Outcome::Trap;
    case DiagKind::Limit: return Outcome::Unknown;
    case DiagKind::BarrierDivergence: return Outcome::BarrierDivergence;
    case DiagKind::SameValueWrite: return Outcome::Race;
    case DiagKind::ConstantRead: return Outcome::Equivalent;  // never a verdict: only a note
    case DiagKind::BadInput: return Outcome::Error;
    case DiagKind::LaunchContract: return Outcome::LaunchContract;
    case DiagKind::Undefined: return Outcome::Race;  // never a verdict: only a warning note
  }
  return Outcome::Error;
}

// How serious a verdict from a run is: a bug found (race and deadlock
// first: they explain what follows them) is never hidden by a later
// unsupported instruction or limit, of the same kernel or the other one.
int severity(Outcome o) {
  switch (o) {
    case Outcome::Race:
    case Outcome::Deadlock: return 5;
    case Outcome::OutOfBounds:
    case Outcome::Uninitialized:
    case Outcome::BarrierDivergence:
    case Outcome::LaunchContract:
    case Outcome::Trap: return 4;
    case Outcome::Error: return 3;
    case Outcome::Unsupported: return 2;
    case Outcome::Unknown: return 1;
    default: return 0;
  }
}

// The most serious diagnostic decides the verdict (among equals, the later).
void take_diagnostics(Report& r, const std::vector<Diagnostic>& ds, const std::string& which) {
  for (Diagnostic d : ds) {
    d.message = which + ": " + d.message;
    r.diagnostics.push_back(d);
  }
  if (ds.empty()) return;
  Outcome o = outcome_of(ds.front().kind);
  for (const Diagnostic& d : ds)
    if (severity(outcome_of(d.kind)) >= severity(o)) o = outcome_of(d.kind);
  if (r.verdict == Outcome::Ok || r.verdict == Outcome::Equivalent || severity(o) > severity(r.verdict)) r.verdict = o;
}

// Notes of a run (barrier divergence and same-value writes when not strict):
// a grid repeats them in every CTA, so a few of each kind are kept.
void take_notes(Report& r, const std::vector<Diagnostic>& ns, const std::string& which) {
  for (Diagnostic d : ns) {
    std::size_t same = 0;
    for (const Diagnostic& e : r.notes) same += e.kind == d.kind;
    if (same >= 4) continue;
    d.message = which + ": " + d.message;
    r.notes.push_back(std::move(d));
  }
}

std::string abbreviate(const ExprContext& c, Expr e) { return c.to_string(e, 300); }

}  // namespace internal

namespace {

Report check_one(const Spec& spec, const RunLimits& limits);
Report equivalence_one(const Spec& spec, const DecideLimits& limits);
Report grid_check(const Spec& spec, const RunLimits& run, const DecideLimits* limits);
Report grid_check_each(const Spec& spec, const RunLimits& run, const DecideLimits* limits);
// A shard other than 0 of a check that shard 0 does whole: the report of
// nothing done (merge takes shard 0's).
Report nothing_to_do(const Spec& spec, const RunLimits& run, const DecideLimits* limits, const std::string& why);

using Outputs = std::map<std::string, std::vector<std::optional<Expr>>>;
// bo's handles are in c2 when given (the optimized kernel ran into its own
// context), else in c.
// reading_notes: a note per DecideLimits::constant_readings entry (placed
// in the code), reported if a decision read by it (or, for a constant left
// as it is, if not every output was proved).
Report decide_outputs(Report r, ExprContext& c, const Outputs& ao, const Outputs& bo, const DecideLimits& limits,
                      const std::string& ref_name, const std::string& opt_name, const ExprContext* c2 = nullptr,
                      const std::vector<Diagnostic>& reading_notes = {},
                      const std::optional<Dim3>& one_cta_of_many = std::nullopt);

Report grid_check(const Spec& spec, const RunLimits& run, const DecideLimits* limits) {
  // A sharded check splits the comparisons of CTA classes (class_check);
  // a check without them (`check`, or a grid that goes CTA by CTA) is done
  // whole by shard 0, and the other shards report that they did nothing.
  const bool sharded = run.shard_count > 1;
  RunLimits whole = run;
  whole.shard_count = 1;
  whole.shard_index = 0;
  if (sharded && !limits && run.shard_index != 0)
    return nothing_to_do(spec, run, limits, "a check has no comparisons to split");
  std::string unused;
  if (run.cta_classes) {
    std::optional<Report> by_classes = class_check(spec, limits ? run : whole, limits, &unused);
    if (by_classes) {
      if (sharded && !by_classes->shard) {
        by_classes->shard = shard_info(spec, run, limits != nullptr);
        by_classes->shard->whole = true;
      }
      return std::move(*by_classes);
    }
  }
  if (sharded && run.shard_index != 0) return nothing_to_do(spec, run, limits, unused);
  Report r = grid_check_each(spec, whole, limits);
  r.cta_classes_unused = unused;
  if (sharded) {
    r.shard = shard_info(spec, run, limits != nullptr);
    r.shard->whole = true;
  }
  return r;
}

Report nothing_to_do(const Spec& spec, const RunLimits& run, const DecideLimits* limits, const std::string& why) {
  Report r;
  r.verdict = limits ? Outcome::Equivalent : Outcome::Ok;
  r.cta_classes_unused = why;
  r.shard = shard_info(spec, run, limits != nullptr);
  r.shard->whole = true;
  return r;
}

Report grid_check_each(const Spec& spec, const RunLimits& run, const DecideLimits* limits) {
  Report r;
  r.verdict = limits ? Outcome::Equivalent : Outcome::Ok;
  auto kernels = kernels_of(spec);
  ExprContext c;
  SymbolicDomain dom(c);
  std::vector<GridRun<Expr>> runs;
  std::vector<KernelConstant> constants;  // of both kernels, for read_constants
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto p = load_program(*kernels[i].first, &r);
    r.stats.parse_seconds += since(t0);
    if (!p) return r;
    const std::optional<Launch> l = checked_launch(spec, *kernels[i].first, *p, &r);
    if (!l) return r;
    add_constants(constants, *p, *l, kernels[i].second);
    t0 = std::chrono::steady_clock::now();
    runs.push_back(run_grid(*p, *l, dom, run));
    r.stats.eval_seconds += since(t0);
    (i == 0 ? r.stats.ref : r.stats.opt) = runs.back().stats;
    take_diagnostics(r, runs.back().diagnostics, kernels[i].second);
    take_notes(r, runs.back().notes, kernels[i].second);
    if (!r.diagnostics.empty()) return r;
  }
  if (!limits) return r;
  if (past(limits->deadline)) {
    time_ran_out(r, "after running both kernels over the grid, before deciding the outputs");
    return r;
  }
  std::vector<Diagnostic> reading_notes;
  const DecideLimits dl = read_constants(*limits, constants, {}, &reading_notes);
  return decide_outputs(std::move(r), c, runs[0].outputs, runs[1].outputs, dl, kernels[0].second,
                        kernels[1].second, nullptr, reading_notes);
}

}  // namespace

Report check(const Spec& spec, const RunLimits& given) {
  RunLimits limits = given;
  limits.strict = limits.strict || spec.strict;
  return guarded(spec, [&] { return spec.all_ctas ? grid_check(spec, limits, nullptr) : check_one(spec, limits); });
}

namespace {

// `check` on a pair spec checks both kernels: a user who runs it on the
// spec of an equivalence check means "is either kernel unsafe?".
Report check_one(const Spec& spec, const RunLimits& limits) {
  Report r;
  r.verdict = Outcome::Ok;
  auto kernels = kernels_of(spec);
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const KernelSpec& k = *kernels[i].first;
    auto t0 = std::chrono::steady_clock::now();
    auto p = load_program(k, &r);
    r.stats.parse_seconds += since(t0);
    if (!p) return r;
    const std::optional<Launch> l = checked_launch(spec, k, *p, &r);
    if (!l) return r;
    if (past(limits.deadline)) {
      time_ran_out(r, "while reading the kernels' PTX");
      return r;
    }
    // A kernel with TMA copies: every CTA of the grid first (contract.cpp).
    if (has_tma(*p) && scan_launch_contract(*p, *l, limits, kernels[i].second, r)) return r;
    ExprContext c;
    SymbolicDomain dom(c);
    t0 = std::chrono::steady_clock::now();
    auto run = run_program(*p, *l, dom, run_options(limits));
    r.stats.eval_seconds += since(t0);
    (i == 0 ? r.stats.ref : r.stats.opt) = run.stats;
    take_diagnostics(r, run.diagnostics, kernels[i].second);
    take_notes(r, run.notes, kernels[i].second);
  }
  return r;
}

}  // namespace

namespace internal {

// The spec's kernels with the names reports use: the kernel name alone for
// one kernel; "ref (name)" / "opt (name)" for two, or, with by_file, their PTX
// file names when both have the same kernel name.
std::vector<std::pair<const KernelSpec*, std::string>> kernels_of(const Spec& spec, bool by_file) {
  if (!spec.opt) return {{&*spec.ref, spec.ref->kernel}};
  std::string rn = spec.ref->kernel, on = spec.opt->kernel;
  if (by_file && rn == on && spec.ref->ptx != spec.opt->ptx) {
    rn = fs::path(spec.ref->ptx).filename().string();
    on = fs::path(spec.opt->ptx).filename().string();
  }
  return {{&*spec.ref, "ref (" + rn + ")"}, {&*spec.opt, "opt (" + on + ")"}};
}

Mismatch mismatch_of(const ExprContext& c, const std::string& name, std::uint64_t index, Expr x, Expr y,
                     const Decision& d) {
  Mismatch m;
  m.output = name;
  m.element = index;
  m.ref_expr = abbreviate(c, x);
  m.opt_expr = abbreviate(c, y);
  m.counterexample = d.counterexample;
  m.why = d.reason;
  if (d.refuted()) {  // name the inputs while the context is alive
    m.why.clear();
    for (const auto& kv : d.counterexample.inputs.values) {
      m.why += (m.why.empty() ? "" : ", ") + c.to_string(kv.first) + " = " + kv.second.str();
      if (c.op(kv.first) != Op::Symbol) continue;
      auto& values = m.inputs[c.symbol_tensor(kv.first)];
      values.resize(std::max<std::size_t>(values.size(), c.symbol_index(kv.first) + 1));
      values[c.symbol_index(kv.first)] = kv.second;
    }
  }
  return m;
}

// Constants rounded from products (docs/decide.md): the float immediates and
// scalar float arguments of both kernels, read together into one table, so
// that both sides are read alike; the report notes every constant read
// within a tolerance (and any left as it is because two products fit).
void add_constants(std::vector<KernelConstant>& out, const Program& p, const Launch& l, const std::string& name) {
  for (const Rational& v : p.constants) out.push_back(KernelConstant{v, false, name});
  // The float scalar arguments, by their PTX parameter (a symbolic scalar
  // is no constant).
  for (std::size_t i = 0; i < p.params.size() && i < l.args.size(); ++i) {
    const DType t = p.params[i].dtype;
    if (l.args[i].is_tensor || l.args[i].symbolic || (t != DType::F32 && t != DType::F64)) continue;
    const std::uint64_t bits = std::uint64_t(l.args[i].scalar);
    out.push_back(KernelConstant{t == DType::F32 ? Rational::from_f32_bits(std::uint32_t(bits)) : Rational::from_f64_bits(bits),
                                 t == DType::F64, "the scalar argument params[" + std::to_string(i) + "]"});
  }
  // A by-value struct's float fields, likewise.
  for (const LaunchArg& a : l.args)
    for (std::size_t k = 0; k < a.fields.size() && k < a.layout.size(); ++k) {
      const LaunchArg& f = a.fields[k];
      const DType t = a.layout[k].dtype;
      if (f.is_tensor || f.is_tensor_map || f.null_pointer || f.symbolic || (t != DType::F32 && t != DType::F64)) continue;
      const std::uint64_t bits = std::uint64_t(f.scalar);
      out.push_back(KernelConstant{t == DType::F32 ? Rational::from_f32_bits(std::uint32_t(bits)) : Rational::from_f64_bits(bits),
                                   t == DType::F64, "the struct field " + a.layout[k].name});
    }
}
DecideLimits read_constants(const DecideLimits& limits, const std::vector<KernelConstant>& cs,
                            const std::vector<const Program*>& ks, std::vector<Diagnostic>* notes) {
  DecideLimits dl = limits;
  dl.constant_readings = read_rounded_constants(cs);
  for (const ConstantReading& k : dl.constant_readings) {
    notes->emplace_back();
    if (k.note.empty()) continue;
    Diagnostic& d = notes->back();
    d.kind = DiagKind::ConstantRead;
    d.message = k.note;
    // Where the constant is first used, if it is an immediate.
    for (std::size_t i = 0; i < ks.size() && d.loc.file.empty(); ++i)
      for (const Instr& in : ks[i]->code) {
        bool uses = false;
        for (const Operand& o : in.src) uses = uses || (o.kind == Operand::Kind::Float && ks[i]->constants[o.index] == k.value);
        if (uses) {
          d.loc = in.loc;
          break;
        }
      }
  }
  return dl;
}

}  // namespace internal

namespace {

Report compare(const Program& ref, const Launch& lr, const Program& opt, const Launch& lo, const DecideLimits& limits,
               const std::string& ref_name, const std::string& opt_name) {
  Report r;
  r.verdict = Outcome::Equivalent;
  ExprContext c;
  SymbolicDomain dom(c);
  auto t0 = std::chrono::steady_clock::now();
  RunResult<SymbolicDomain> a, b;
  // A long reference run (past ~5 ms of symbolic work) starts the optimized
  // kernel on a second thread, into its own context (a symbolic run is
  // mostly hash-consing, which is not thread-safe within one context); the
  // decision copies from it what it needs. Short runs go one after the other
  // (a thread costs more than it saves there).
  const unsigned threads = limits.threads ? limits.threads : std::max(1u, std::thread::hardware_concurrency());
  std::unique_ptr<ExprContext> c2;  // made when the second thread starts
  std::unique_ptr<SymbolicDomain> dom2;
  std::thread other;
  std::exception_ptr failed;
  RunOptions ro = run_options(run_limits(limits));
  // Two runs in parallel build into two contexts: each gets half the budget.
  if (threads >= 2) ro.max_memory_bytes /= 2;
  RunOptions ro_b = ro;
  if (threads >= 2) {
    ro.long_run_steps = 20000;
    ro.on_long_run = [&] {
      c2 = std::make_unique<ExprContext>();
      dom2 = std::make_unique<SymbolicDomain>(*c2);
      other = std::thread([&] {
        try {
          b = run_program(opt, lo, *dom2, ro_b);
        } catch (...) {
          failed = std::current_exception();
        }
      });
    };
  }
  try {
    a = run_program(ref, lr, dom, ro);
  } catch (...) {
    if (other.joinable()) other.join();
    throw;
  }
  if (other.joinable()) {
    other.join();
    if (failed) std::rethrow_exception(failed);
    // Large contexts stay apart: decide_all checks renamings in each and
    // copies into c only the outputs it decides (copying all of an attention
    // kernel's 2.4 M nodes took a quarter of a second). A small one is
    // copied whole: that costs less than the second context's own sweep and
    // symbol table (a softmax's 3000 nodes: 0.3 ms against 7 ms).
    constexpr std::size_t kKeepApart = 100000;
    if (c2->size() < kKeepApart) {
      const std::vector<Expr> moved = c.import(*c2);
      for (auto& [name, values] : b.outputs)
        for (auto& v : values)
          if (v) v = moved[v->id];
      dom2.reset();
      c2.reset();
    }
  } else {
    b = run_program(opt, lo, dom, ro_b);
  }
  r.stats.eval_seconds = since(t0);
  r.stats.ref = a.stats;
  r.stats.opt = b.stats;
  take_diagnostics(r, a.diagnostics, ref_name);
  take_notes(r, a.notes, ref_name);
  take_diagnostics(r, b.diagnostics, opt_name);
  take_notes(r, b.notes, opt_name);
  if (!r.diagnostics.empty()) return r;
  if (past(limits.deadline)) {
    time_ran_out(r, "after running both kernels, before deciding the outputs");
    return r;
  }
  std::vector<KernelConstant> cs;
  add_constants(cs, ref, lr, ref_name);
  add_constants(cs, opt, lo, opt_name);
  std::vector<Diagnostic> reading_notes;
  const DecideLimits dl = read_constants(limits, cs, {&ref, &opt}, &reading_notes);
  // One CTA of a larger grid: kernels that map CTAs to tiles differently
  // write different elements there, which the report then suggests.
  std::optional<Dim3> one_cta;
  if (lr.grid.count() > 1 || lo.grid.count() > 1) one_cta = lr.cta;
  return decide_outputs(std::move(r), c, a.outputs, b.outputs, dl, ref_name, opt_name, c2.get(), reading_notes,
                        one_cta);
}

// Compares two kernels' outputs element by element (r.verdict is Equivalent on entry).
Report decide_outputs(Report r, ExprContext& c, const Outputs& ao, const Outputs& bo, const DecideLimits& limits,
                      const std::string& ref_name, const std::string& opt_name, const ExprContext* c2,
                      const std::vector<Diagnostic>& reading_notes, const std::optional<Dim3>& one_cta_of_many) {
  // The optimized kernel's handles here (copied from c2 on demand).
  std::vector<Expr> imported;
  auto here = [&](Expr y) {
    if (c2 == nullptr) return y;
    c.import_below(*c2, {y}, imported);
    return imported[y.id];
  };
  // Pair up every output element; elements neither kernel wrote are not this CTA's.
  struct Item {
    std::string name;
    std::uint64_t index;
    Expr x, y;
  };
  std::vector<Item> items;
  // An element only one kernel writes is a difference (an output only one
  // kernel has too: every element it writes is one). The first one is the
  // evidence; on one CTA of a larger grid the elements both kernels write
  // are still decided, to tell kernels that only cover different elements
  // there (a different CTA-to-tile mapping) from kernels that compute
  // different values.
  std::optional<Mismatch> one_sided;
  std::set<std::string> names;
  for (const auto& kv : ao) names.insert(kv.first);
  for (const auto& kv : bo) names.insert(kv.first);
  static const std::vector<std::optional<Expr>> kNone;
  for (const std::string& name : names) {
    const auto xi = ao.find(name), yi = bo.find(name);
    const auto& xs = xi == ao.end() ? kNone : xi->second;
    const auto& ys = yi == bo.end() ? kNone : yi->second;
    for (std::uint64_t i = 0; i < std::max(xs.size(), ys.size()); ++i) {
      const std::optional<Expr> x = i < xs.size() ? xs[i] : std::nullopt, y = i < ys.size() ? ys[i] : std::nullopt;
      if (!x && !y) continue;
      if (x && y) {
        items.push_back({name, i, *x, *y});
        continue;
      }
      if (one_sided) continue;
      Mismatch m;
      m.output = name;
      m.element = i;
      m.why = std::string(x ? opt_name : ref_name) + " never writes " + name + "[" + std::to_string(i) + "], which " +
              (x ? ref_name : opt_name) + " writes";
      m.ref_expr = x ? abbreviate(c, *x) : "(not written)";
      m.opt_expr = y ? abbreviate(c, here(*y)) : "(not written)";
      one_sided = m;
      if (!one_cta_of_many) {
        r.verdict = Outcome::NotEquivalent;
        r.mismatch = m;
        return r;
      }
    }
  }
  std::vector<std::pair<Expr, Expr>> pairs;
  for (const Item& it : items) pairs.emplace_back(it.x, it.y);
  auto t0 = std::chrono::steady_clock::now();
  // The first refuted output is the answer: the rest are not decided (a
  // broken attention kernel took minutes when every output was). Output
  // pairs that are a proved pair with renamed inputs cost one exact check.
  DecideLimits stop = limits;
  stop.stop_at_first_refuted = true;
  auto ds = decide_all(c, c2 ? *c2 : c, pairs, imported, stop, limits.threads);  // one context: the plain decide_all
  r.stats.decide_seconds = since(t0);
  // The constants read within a tolerance that some decision read by: the
  // verdict is about the kernels with those constants read so.
  std::vector<bool> read(limits.constant_readings.size(), false);
  bool all_proved = true;
  for (const Decision& d : ds) {
    for (std::size_t i : d.constants_read) read[i] = true;
    all_proved = all_proved && d.proved();
  }
  for (std::size_t i = 0; i < read.size() && i < reading_notes.size(); ++i)
    if (!reading_notes[i].message.empty() && (read[i] || (limits.constant_readings[i].ln2_power == 0 && !all_proved)))
      r.notes.push_back(reading_notes[i]);
  r.stats.outputs_compared = 0;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    // Those left undecided after a refutation were not compared.
    r.stats.outputs_compared += ds[i].reason.rfind("not decided:", 0) != 0;
    r.stats.proved += ds[i].proved();
    if (ds[i].proved()) continue;
    bool refuted = ds[i].refuted();
    if (r.verdict == Outcome::NotEquivalent) continue;  // the first refuted element is the evidence
    if (refuted || !r.mismatch) {
      r.mismatch = mismatch_of(c, items[i].name, items[i].index, items[i].x, here(items[i].y), ds[i]);
      r.verdict = refuted ? Outcome::NotEquivalent : Outcome::Unknown;
    }
  }
  // A refuted element is the better evidence; otherwise the element only one
  // kernel writes decides, and when every element both write is proved
  // equal, the difference is only in which elements each writes.
  if (one_sided && r.verdict != Outcome::NotEquivalent) {
    if (r.verdict == Outcome::Equivalent)
      one_sided->why += "; the kernels write different elements on " + cta_name(*one_cta_of_many) +
                        ": they may map CTAs to tiles differently; \"ctas\": \"all\" runs the whole grid and compares "
                        "the whole outputs";
    r.verdict = Outcome::NotEquivalent;
    r.mismatch = *one_sided;
  }
  return r;
}

}  // namespace

Report check_equivalence(const Program& ref, const Launch& lr, const Program& opt, const Launch& lo,
                         const DecideLimits& limits) {
  return guarded(Spec{}, [&] { return compare(ref, lr, opt, lo, limits, ref.name, opt.name); });
}

namespace {

// Every input element is a finite value of its tensor's dtype (decide.md,
// "Finite inputs"): the largest finite float of the format (0x7f7fffff for
// f32, 65504 for f16), the integer range for integer tensors.
std::vector<DecideLimits::InputRange> finite_input_ranges(const Spec& spec) {
  std::vector<DecideLimits::InputRange> out;
  for (const ParamSpec& p : spec.params) {
    if (!(p.tensor || p.symbolic) || p.tensor_map) continue;
    std::optional<Rational> hi, lo;
    switch (p.dtype) {
      case DType::F16: hi = Rational::from_f16_bits(0x7bff); break;
      case DType::BF16: hi = Rational::from_bf16_bits(0x7f7f); break;
      case DType::F32: hi = Rational::from_f32_bits(0x7f7fffffu); break;
      case DType::F64: hi = Rational::from_f64_bits(0x7fefffffffffffffull); break;
      case DType::S8: lo = Rational(-128), hi = Rational(127); break;
      case DType::U8: lo = Rational(0), hi = Rational(255); break;
      case DType::S16: lo = Rational(-32768), hi = Rational(32767); break;
      case DType::U16: lo = Rational(0), hi = Rational(65535); break;
      case DType::S32: lo = Rational(std::int64_t(INT32_MIN)), hi = Rational(std::int64_t(INT32_MAX)); break;
      case DType::U32: lo = Rational(0), hi = Rational(std::int64_t(UINT32_MAX)); break;
      default: break;  // 64-bit integers, predicates, raw bits: no bound
    }
    if (!hi) continue;
    if (!lo) lo = -*hi;
    out.push_back({p.name, *lo, *hi});
  }
  return out;
}

}  // namespace

Report check_equivalence(const Spec& spec, const DecideLimits& given) {
  DecideLimits limits = given;
  limits.strict = limits.strict || spec.strict;
  if (limits.input_ranges.empty()) limits.input_ranges = finite_input_ranges(spec);
  return guarded(spec, [&] {
    if (spec.all_ctas && (!spec.ref || !spec.opt)) return equivalence_one(spec, limits);  // its error
    return spec.all_ctas ? grid_check(spec, run_limits(limits), &limits) : equivalence_one(spec, limits);
  });
}

namespace internal {

std::optional<LoadedPair> load_pair(const Spec& spec, const std::string& what, Report* r) {
  if (!spec.ref || !spec.opt) {
    r->error = spec.path + ": " + what + " needs \"ref\" and \"opt\"";
    return std::nullopt;
  }
  auto t0 = std::chrono::steady_clock::now();
  std::optional<Program> a, b;
  if (spec.ref->ptx == spec.opt->ptx) {
    // One PTX file with both kernels (or one kernel checked against itself):
    // read it once.
    const ptx::ParseResult parsed = ptx::parse_ptx_file(spec.ref->ptx);
    a = take_program(lower_parsed(parsed, *spec.ref), r);
    if (!a) return std::nullopt;
    if (spec.opt->kernel != spec.ref->kernel || spec.opt->dynamic_shared != spec.ref->dynamic_shared) {
      b = take_program(lower_parsed(parsed, *spec.opt), r);
      if (!b) return std::nullopt;
    }
  } else {
    a = load_program(*spec.ref, r);
    if (!a) return std::nullopt;
    b = load_program(*spec.opt, r);
    if (!b) return std::nullopt;
  }
  std::optional<Launch> la = checked_launch(spec, *spec.ref, *a, r);
  if (!la) return std::nullopt;
  std::optional<Launch> lb = checked_launch(spec, *spec.opt, b ? *b : *a, r);
  if (!lb) return std::nullopt;
  auto kernels = kernels_of(spec, true);
  return LoadedPair{std::move(*a), std::move(b), std::move(*la), std::move(*lb),
                    kernels[0].second, kernels[1].second, since(t0)};
}

}  // namespace internal

namespace {

Report equivalence_one(const Spec& spec, const DecideLimits& limits) {
  Report r;
  auto p = load_pair(spec, "an equivalence check", &r);
  if (!p) return r;
  if (past(limits.deadline)) {
    time_ran_out(r, "while reading the kernels' PTX");
    return r;
  }
  // Kernels with TMA copies: every CTA of each grid first (contract.cpp); a
  // CTA whose copies trap on a GPU is the answer, before any decision.
  Report scanned;
  scanned.verdict = Outcome::Equivalent;
  scanned.stats.parse_seconds = p->parse_seconds;
  const RunLimits scan_limits = run_limits(limits);
  if (has_tma(p->ref) && scan_launch_contract(p->ref, p->ref_launch, scan_limits, p->ref_name, scanned)) return scanned;
  if (p->own_opt && has_tma(p->opt()) &&
      scan_launch_contract(p->opt(), p->opt_launch, scan_limits, p->opt_name, scanned))
    return scanned;
  r = compare(p->ref, p->ref_launch, p->opt(), p->opt_launch, limits, p->ref_name, p->opt_name);
  r.stats.parse_seconds = p->parse_seconds;
  r.stats.eval_seconds += scanned.stats.eval_seconds;
  r.contract_scans = std::move(scanned.contract_scans);
  r.notes.insert(r.notes.begin(), scanned.notes.begin(), scanned.notes.end());
  return r;
}

}  // namespace

}  // namespace tileverify
