// "ctas": "all" by CTA classes (docs/architecture.md, decision 14): both
// kernels' grids in classes, the output elements reduced to one comparison
// per distinct renaming, and the share of a shard (--shard, docs/cli.md
// "Sharding"). The classes themselves: cta_classes.cpp.
#include "class_plan.hpp"
#include "cta_classes.hpp"
#include "grid.hpp"
#include "internal.hpp"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

namespace tileverify::internal {

namespace {

// Whether a race check of p's runs can depend on values only through
// same-value writes (which the runs note): no atomic whose commuting
// depends on its operands (exch, inc, dec, cas; a cas also compares the
// element's value), and the vector clocks used for the race check alone.
// The asynchronous operations (mbarriers, bulk copies, wgmma's proxy rule,
// timers in retry loops, proxy fences) read them for what a wait sees or
// which phase an arrival counts in too, so a run of such a kernel without
// the race check is not the same run.
bool races_by_trace(const Program& p) {
  return std::all_of(p.code.begin(), p.code.end(), [](const Instr& in) {
    if (in.op == Opcode::Fence)
      return in.mode == std::uint8_t(FenceKind::Plain) || in.mode == std::uint8_t(FenceKind::SetMaxNReg);
    if (in.op == Opcode::Atom) {
      const AtomOp op = AtomOp(in.mode);
      return op != AtomOp::Exch && op != AtomOp::Inc && op != AtomOp::Dec && op != AtomOp::Cas;
    }
    return in.op < Opcode::Fence || in.op == Opcode::ElectSync || in.op == Opcode::Unsupported;
  });
}

}  // namespace

std::optional<Report> class_check(const Spec& spec, const RunLimits& run, const DecideLimits* limits, std::string* why) {
  Report r;
  r.verdict = limits ? Outcome::Equivalent : Outcome::Ok;
  auto kernels = kernels_of(spec);
  const bool sharded = run.shard_count > 1;
  ExprContext c;
  SymbolicDomain dom(c);
  ConcreteDomain concrete;
  std::vector<Program> programs;
  std::vector<Launch> launches;
  std::vector<KernelClasses> ks;
  std::vector<KernelConstant> constants;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto p = load_program(*kernels[i].first, &r);
    r.stats.parse_seconds += since(t0);
    if (!p) return r;
    const std::optional<Launch> l = checked_launch(spec, *kernels[i].first, *p, &r);
    if (!l) return r;
    add_constants(constants, *p, *l, kernels[i].second);
    programs.push_back(std::move(*p));
    launches.push_back(*l);
  }
  if (sharded) r.shard = shard_info(spec, run, limits != nullptr);
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    // A shard finds the classes from concrete runs (cheaper: no expressions),
    // and runs symbolically only the representatives its comparisons need.
    ks.push_back(sharded ? run_classes(programs[i], launches[i], concrete, run)
                         : run_classes(programs[i], launches[i], dom, run));
    KernelClasses& k = ks.back();
    if (k.fallback.empty() && k.diagnostics.empty()) spread(programs[i], launches[i], k, run.deadline);
    r.stats.eval_seconds += since(t0);
    (i == 0 ? r.stats.ref : r.stats.opt) = k.stats;
  }
  // One kernel without classes: it runs CTA by CTA and the other keeps its
  // classes (an equivalence check done whole; a shard's plan and `check`
  // keep the one grid run for both). Both without: the caller's grid run.
  std::optional<std::size_t> by_grid;
  for (std::size_t i = 0; i < ks.size(); ++i) {
    if (ks[i].fallback.empty()) continue;
    // `check` on a one-kernel spec has no other kernel.
    const bool pair = ks.size() == 2;
    const std::size_t other = pair ? 1 - i : i;
    if (!limits || sharded || !pair || by_grid || !ks[other].fallback.empty() || !ks[other].diagnostics.empty()) {
      *why = kernels[i].second + ": " + ks[i].fallback;
      if (pair && other > i && !ks[other].fallback.empty())
        *why += "; " + kernels[other].second + ": " + ks[other].fallback;
      return std::nullopt;
    }
    by_grid = i;
  }
  if (by_grid) {
    const std::size_t i = *by_grid;
    std::vector<std::string> tensors;
    for (const CtaClass& cl : ks[1 - i].classes)
      for (const auto& kv : cl.shifts.front()) tensors.push_back(kv.first);
    const std::string fallback = ks[i].fallback;
    auto t0 = std::chrono::steady_clock::now();
    ks[i] = as_grid_classes(run_grid(programs[i], launches[i], dom, run), tensors);
    r.stats.eval_seconds += since(t0);
    (i == 0 ? r.stats.ref : r.stats.opt) = ks[i].stats;
    r.cta_classes_unused = kernels[i].second + ": " + fallback;
  }
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const KernelClasses& k = ks[i];
    take_diagnostics(r, k.diagnostics, kernels[i].second);
    take_notes(r, k.notes, kernels[i].second);
    for (const CtaClassSummary& s : summarize(k, kernels[i].second)) r.cta_classes.push_back(s);
    if (!r.diagnostics.empty()) return r;
  }
  if (!limits) return r;
  if (past(limits->deadline)) {
    time_ran_out(r, "after running both kernels' CTA classes, before deciding the outputs");
    return r;
  }
  KernelClasses& a = ks[0];
  KernelClasses& b = ks[1];
  const std::string& ref_name = kernels[0].second;
  const std::string& opt_name = kernels[1].second;
  const std::optional<Plan> planned = plan(a, b, limits->deadline);
  if (!planned) {
    time_ran_out(r, "while pairing the output elements of both kernels' CTA classes");
    return r;
  }
  const Plan& pl = *planned;
  if (sharded) {
    // Before the one-sided answer too: every report of a shard that got
    // this far carries the plan, and merge checks they all carry the same.
    r.shard->comparisons_total = pl.comparisons.size();
    r.shard->elements_total = pl.elements;
    r.shard->plan = pair_sizes(pl);
  }
  // The representatives' outputs a shard needs, run symbolically now.
  auto need = [&](std::size_t k, std::uint32_t cls) -> bool {
    CtaClass& cl = ks[k].classes[cls];
    if (!cl.outputs.empty() || ks[k].by_grid) return true;
    auto t0 = std::chrono::steady_clock::now();
    Launch l = launches[k];
    l.cta = cl.log->cta();
    RunOptions o = run_options(run);
    // The classification ran this CTA with the race check (concretely in a
    // shard) and found no race. When none of its race checks compared
    // values, this run's would decide each one alike (docs/evaluator.md,
    // "One race check for both domains"): that verdict stands for both.
    if (!sharded || (!cl.same_value_writes && races_by_trace(programs[k]))) o.check_races = false;
    o.shadow_outputs = true;
    auto res = run_program(programs[k], l, dom, o);
    r.stats.eval_seconds += since(t0);
    if (!res.diagnostics.empty()) {
      std::vector<Diagnostic> ds;
      for (Diagnostic d : res.diagnostics) {
        d.message = with_cta(l.cta, d.message);
        ds.push_back(d);
      }
      take_diagnostics(r, ds, kernels[k].second);
      return false;
    }
    cl.outputs = std::move(res.outputs);
    cl.output_shifts = std::move(res.output_shifts);
    cl.shift_vectors = std::move(res.shift_vectors);
    return true;
  };
  // The representative's output element as (handle, renaming): the value is
  // the handle with its input symbols moved by the renaming (null: none;
  // thread classes, RunResult::output_shifts).
  using Shift = std::map<std::string, std::int64_t>;
  auto framed = [&](const KernelClasses& k, const Cover& cv, const std::string& name) -> std::pair<Expr, const Shift*> {
    const CtaClass& cl = k.classes[cv.cls];
    const auto& out = cl.outputs.at(name);
    if (cv.elem >= out.size() || !out[cv.elem]) throw std::runtime_error("a class's output element has no value");
    auto it = cl.output_shifts.find(name);
    if (it == cl.output_shifts.end() || cv.elem >= it->second.size() || it->second[cv.elem] == 0)
      return {*out[cv.elem], nullptr};
    return {*out[cv.elem], &cl.shift_vectors.at(it->second[cv.elem])};
  };
  std::map<std::pair<std::uint32_t, const Shift*>, Expr> built;  // framed values built out, once each
  auto value = [&](const KernelClasses& k, const Cover& cv, const std::string& name) -> Expr {
    // Named, not a structured binding: C++17 lambdas cannot capture one.
    const std::pair<Expr, const Shift*> fr = framed(k, cv, name);
    const Expr h = fr.first;
    const Shift* s = fr.second;
    if (!s) return h;
    auto it = built.find({h.id, s});
    if (it != built.end()) return it->second;
    auto moved = c.shift_symbols({h}, [&](const std::string& t) {
      auto at = s->find(t);
      return at == s->end() ? std::int64_t(0) : at->second;
    });
    if (!moved) throw std::runtime_error("a thread-class output renames an input outside its tensor");
    return built.emplace(std::make_pair(h.id, s), moved->front()).first->second;
  };
  // The CTA that wrote output element e of `name` (the cover's member, or
  // in a grid run the writer itself).
  auto writer = [&](const KernelClasses& k, const Cover& cv, const std::string& name, std::uint64_t e) -> Dim3 {
    if (!k.by_grid) return k.classes[cv.cls].members[cv.member];
    auto it = k.writers.find(name);
    if (it == k.writers.end() || e >= it->second.size() || !it->second[e]) return Dim3{0, 0, 0};
    return *it->second[e];
  };
  // The value at the element itself: the representative's moved by the member's shifts.
  auto real = [&](const KernelClasses& k, const Cover& cv, const std::string& name) -> std::optional<Expr> {
    auto moved =
        c.shift_symbols({value(k, cv, name)}, [&](const std::string& t) { return shift_of(k, cv, t).value_or(0); });
    if (!moved) return std::nullopt;
    return moved->front();
  };
  if (pl.one_sided) {
    // Every shard sees it (the plan is the same in each): the answer.
    const Plan::OneSided& o = *pl.one_sided;
    const bool wa = o.ca.cls != Cover::kNoClass;
    if (!need(wa ? 0 : 1, wa ? o.ca.cls : o.cb.cls)) return r;
    Mismatch m;
    m.output = o.name;
    m.element = o.element;
    m.why = std::string(wa ? opt_name : ref_name) + " never writes " + o.name + "[" + std::to_string(o.element) +
            "], which " + (wa ? ref_name : opt_name) + " writes";
    const std::optional<Expr> x = wa ? real(a, o.ca, o.name) : std::nullopt;
    const std::optional<Expr> y = wa ? std::nullopt : real(b, o.cb, o.name);
    m.ref_expr = x ? abbreviate(c, *x) : "(not written)";
    m.opt_expr = y ? abbreviate(c, *y) : "(not written)";
    m.cta = writer(wa ? a : b, wa ? o.ca : o.cb, o.name, o.element);
    r.verdict = Outcome::NotEquivalent;
    r.mismatch = m;
    return r;
  }
  std::vector<std::size_t> mine(pl.comparisons.size());
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = i;
  if (sharded) mine = share(pl, run.shard_index, run.shard_count);
  for (std::size_t i : mine) {
    if (!need(0, pl.comparisons[i].ca.cls) || !need(1, pl.comparisons[i].cb.cls)) return r;
    if (past(limits->deadline)) {
      time_ran_out(r, "while running the representatives of this shard's CTA classes");
      return r;
    }
  }
  bool framed_outputs = false;
  for (const KernelClasses* k : {&a, &b})
    for (const CtaClass& cl : k->classes) framed_outputs = framed_outputs || !cl.output_shifts.empty();
  // With thread classes, comparison j stands for the question
  // rename(h_a, s_a + d - s_b) = h_b (its elements' values are h_a renamed by
  // s_a and the member's shifts, h_b by s_b and its member's: apply the
  // inverse of b's renaming to both sides); comparisons that ask the same
  // question are decided once. Question q: pairs[q], first asked by
  // comparison mine[asker[q]], for `weight[q]` elements in all.
  std::vector<std::size_t> asker;
  std::vector<std::uint64_t> weight;
  std::vector<std::pair<Expr, Expr>> pairs;
  if (framed_outputs) {
    std::map<std::tuple<std::uint32_t, std::uint32_t, Shift>, std::size_t> asked;
    std::map<Shift, std::vector<std::size_t>> by_shift;  // questions by their renaming
    std::vector<Expr> hb_of, ha_of;
    for (std::size_t j = 0; j < mine.size(); ++j) {
      if (j % 4096 == 0 && past(limits->deadline)) {
        time_ran_out(r, "while pairing the thread classes' outputs for the comparisons");
        return r;
      }
      const Comparison& o = pl.comparisons[mine[j]];
      const auto [ha, sa] = framed(a, o.ca, o.name);
      const auto [hb, sb] = framed(b, o.cb, o.name);
      Shift d;
      for (std::size_t i = 0; i < pl.tensors.size(); ++i) d[pl.tensors[i]] += o.d[i];
      if (sa)
        for (const auto& [t, x] : *sa) d[t] += x;
      if (sb)
        for (const auto& [t, x] : *sb) d[t] -= x;
      for (auto it = d.begin(); it != d.end();) it = it->second == 0 ? d.erase(it) : std::next(it);
      auto [it, fresh] = asked.emplace(std::make_tuple(ha.id, hb.id, d), ha_of.size());
      if (fresh) {
        ha_of.push_back(ha);
        hb_of.push_back(hb);
        by_shift[d].push_back(it->second);
        asker.push_back(j);
        weight.push_back(0);
      }
      weight[it->second] += o.elements;
    }
    pairs.resize(ha_of.size());
    for (const auto& entry : by_shift) {
      const auto& d = entry.first;  // not a structured binding: C++17 lambdas cannot capture one
      const auto& qs = entry.second;
      if (past(limits->deadline)) {
        time_ran_out(r, "while renaming the thread classes' outputs for the comparisons");
        return r;
      }
      std::vector<Expr> roots;
      for (std::size_t q : qs) roots.push_back(ha_of[q]);
      const auto moved = c.shift_symbols(roots, [&](const std::string& t) {
        auto at = d.find(t);
        return at == d.end() ? std::int64_t(0) : at->second;
      });
      for (std::size_t i = 0; i < qs.size(); ++i) {
        if (moved) {
          pairs[qs[i]] = {(*moved)[i], hb_of[qs[i]]};
          continue;
        }
        // Moved below element 0: the question at a real element, each side
        // built out at its place.
        const Comparison& o = pl.comparisons[mine[asker[qs[i]]]];
        const std::optional<Expr> x = real(a, o.ca, o.name), y = real(b, o.cb, o.name);
        if (!x || !y) throw std::runtime_error("an output element's inputs leave the index range");
        pairs[qs[i]] = {*x, *y};
      }
    }
  } else {
    pairs.resize(mine.size());
    for (std::size_t j = 0; j < mine.size(); ++j) {
      asker.push_back(j);
      weight.push_back(pl.comparisons[mine[j]].elements);
    }
  }
  // The reference's side of each comparison, moved by d: one renaming per
  // (class, d) for all the outputs it moves.
  std::map<std::pair<std::uint32_t, std::vector<std::int64_t>>, std::vector<std::size_t>> groups;
  if (!framed_outputs)
    for (std::size_t j = 0; j < mine.size(); ++j) groups[{pl.comparisons[mine[j]].ca.cls, pl.comparisons[mine[j]].d}].push_back(j);
  std::size_t group = 0;
  for (const auto& [g, members] : groups) {
    // Each group renames a representative's outputs: in a grid whose CTAs
    // write to the wrong places there is a group per distinct shift, so the
    // deadline is read per group (issue 31: 426 s under --timeout 300).
    if (past(limits->deadline)) {
      time_ran_out(r, "while renaming the CTA classes' outputs for the comparisons (after " + std::to_string(group) +
                          " of " + std::to_string(groups.size()) + " (class, shift) groups)");
      return r;
    }
    ++group;
    std::vector<Expr> roots;
    for (std::size_t j : members) roots.push_back(value(a, pl.comparisons[mine[j]].ca, pl.comparisons[mine[j]].name));
    const std::vector<std::int64_t>& d = g.second;
    auto moved = c.shift_symbols(roots, [&](const std::string& t) {
      auto it = std::find(pl.tensors.begin(), pl.tensors.end(), t);
      return it == pl.tensors.end() ? std::int64_t(0) : d[std::size_t(it - pl.tensors.begin())];
    });
    if (moved) {
      for (std::size_t m = 0; m < members.size(); ++m) {
        const Comparison& o = pl.comparisons[mine[members[m]]];
        pairs[members[m]] = {(*moved)[m], value(b, o.cb, o.name)};
      }
      continue;
    }
    // Moved below element 0: compare at the elements themselves, each side
    // moved by its own member's shifts, one renaming per member for all its
    // elements in the group.
    for (const bool ref_side : {true, false}) {
      const KernelClasses& k = ref_side ? a : b;
      std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::size_t>> by_member;
      for (std::size_t m = 0; m < members.size(); ++m) {
        const Cover& cv = ref_side ? pl.comparisons[mine[members[m]]].ca : pl.comparisons[mine[members[m]]].cb;
        by_member[{cv.cls, cv.member}].push_back(m);
      }
      for (const auto& [who, ms] : by_member) {
        if (past(limits->deadline)) {
          time_ran_out(r, "while renaming the CTA classes' outputs for the comparisons (in group " +
                              std::to_string(group) + " of " + std::to_string(groups.size()) + ")");
          return r;
        }
        const Cover& first = ref_side ? pl.comparisons[mine[members[ms.front()]]].ca
                                      : pl.comparisons[mine[members[ms.front()]]].cb;
        std::vector<Expr> own;
        for (std::size_t m : ms) {
          const Comparison& o = pl.comparisons[mine[members[m]]];
          own.push_back(value(k, ref_side ? o.ca : o.cb, o.name));
        }
        const auto at = c.shift_symbols(own, [&](const std::string& t) { return shift_of(k, first, t).value_or(0); });
        if (!at) throw std::runtime_error("an output element's inputs leave the index range");
        for (std::size_t i = 0; i < ms.size(); ++i)
          (ref_side ? pairs[members[ms[i]]].first : pairs[members[ms[i]]].second) = (*at)[i];
      }
    }
  }
  std::vector<Diagnostic> reading_notes;
  const DecideLimits dl = read_constants(*limits, constants, {}, &reading_notes);
  auto t0 = std::chrono::steady_clock::now();
  DecideLimits stop = dl;
  stop.stop_at_first_refuted = true;
  const std::vector<Decision> ds = decide_all(c, pairs, stop, dl.threads);
  r.stats.decide_seconds = since(t0);
  std::vector<bool> read(dl.constant_readings.size(), false);
  bool all_proved = true;
  std::uint64_t elements = 0, proved = 0;
  for (std::size_t j = 0; j < ds.size(); ++j) {
    for (std::size_t i : ds[j].constants_read) read[i] = true;
    all_proved = all_proved && ds[j].proved();
    elements += weight[j];
    if (ds[j].proved()) proved += weight[j];
  }
  for (std::size_t i = 0; i < read.size() && i < reading_notes.size(); ++i)
    if (!reading_notes[i].message.empty() && (read[i] || (dl.constant_readings[i].ln2_power == 0 && !all_proved)))
      r.notes.push_back(reading_notes[i]);
  // A shard reports its share of the plan's comparisons, which merge checks
  // against the plan; a whole check, the questions it decided (thread
  // classes make many comparisons one question).
  r.stats.comparisons = sharded ? mine.size() : pairs.size();
  r.stats.outputs_compared = elements;
  // What was proved is counted even when the verdict is not "equivalent": a
  // user reads "1024 of 1088 proved" as where the trouble is.
  r.stats.proved = proved;
  for (std::size_t j = 0; j < ds.size(); ++j) {
    if (ds[j].proved()) continue;
    const bool refuted = ds[j].refuted();
    if (r.verdict == Outcome::NotEquivalent) break;
    if (!refuted && r.mismatch) continue;
    // The evidence at a real element: both values there, decided again (the
    // comparison's inputs were renamed).
    const Comparison& o = pl.comparisons[mine[asker[j]]];
    const std::optional<Expr> x = real(a, o.ca, o.name), y = real(b, o.cb, o.name);
    Decision d = ds[j];
    if (x && y && refuted) d = decide_equal(c, *x, *y, dl);
    r.mismatch = mismatch_of(c, o.name, o.element, x ? *x : pairs[j].first, y ? *y : pairs[j].second, d);
    r.mismatch->cta = writer(a, o.ca, o.name, o.element);
    r.verdict = d.refuted() ? Outcome::NotEquivalent : Outcome::Unknown;
  }
  return r;
}

}  // namespace tileverify::internal
