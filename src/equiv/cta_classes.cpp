// CTA classes: running a grid one class at a time, and spreading each
// representative's outputs over its class (cta_classes.hpp).
#include "cta_classes.hpp"

#include "grid.hpp"

#include <algorithm>
#include <chrono>
#include <set>
#include <sstream>
#include <type_traits>

namespace tileverify::internal {

namespace {

std::uint64_t linear(const Dim3& c, const Dim3& grid) {
  return c.x + std::uint64_t(grid.x) * (c.y + std::uint64_t(grid.y) * c.z);
}

}  // namespace

template <class Domain>
KernelClasses run_classes(const Program& p, Launch l, Domain& dom, const RunLimits& limits) {
  KernelClasses k;
  const Dim3 grid = l.grid;
  const std::uint64_t total = grid.count();
  k.grid_ctas = total;
  if (run_cluster(p, l).count() > 1) {
    k.fallback = "the kernel runs in clusters of CTAs";
    return k;
  }
  // TMA copies are in the log like any access (machine_affine.cpp,
  // affine_tma): their coordinates move with the CTA index, their boxes
  // clip alike in every member.
  // A grid whose index table would not fit is left to the CTA-by-CTA run
  // (which says how long it would take).
  if (total > (std::uint64_t(1) << 28)) {
    k.fallback = "the grid has more than 2^28 CTAs";
    return k;
  }
  std::vector<std::uint32_t> cls(total, Cover::kNoClass);
  RunOptions opts = run_options(limits);
  opts.record_touches = true;
  opts.shadow_outputs = true;  // class_check renames outputs anyway: thread-class outputs stay renamings
  std::uint64_t done = 0;
  auto out_of_time = [&](const std::string& doing) {
    Diagnostic d;
    d.kind = DiagKind::Limit;
    d.message = "time limit reached " + doing + " after running " + std::to_string(k.classes.size()) +
                " CTA classes, which hold " + std::to_string(done) + " of the " + std::to_string(total) +
                " CTAs of the grid";
    k.diagnostics.push_back(d);
  };
  for (std::uint64_t start = 0; start < total; ++start) {
    if (cls[start] != Cover::kNoClass) continue;
    if (past(limits.deadline)) {
      out_of_time("while finding CTA classes,");
      return k;
    }
    const Dim3 rep{std::uint32_t(start % grid.x), std::uint32_t(start / grid.x % grid.y),
                   std::uint32_t(start / grid.x / grid.y)};
    l.cta = rep;
    CtaClass c;
    c.log = std::make_unique<CtaAffineLog>(p, rep);
    opts.cta_affine = c.log.get();
    auto run = run_program(p, l, dom, opts);
    k.stats.thread_instructions += run.stats.thread_instructions;
    k.stats.block_syncs += run.stats.block_syncs;
    k.stats.warp_syncs += run.stats.warp_syncs;
    for (const Diagnostic& d : run.notes)
      c.same_value_writes = c.same_value_writes || d.kind == DiagKind::SameValueWrite;
    for (Diagnostic d : run.notes) {
      bool again = false;
      for (const Diagnostic& n : k.notes)
        again = again || (n.kind == d.kind && n.loc.line == d.loc.line && n.loc.column == d.loc.column &&
                          n.loc.file == d.loc.file);
      if (!again && k.notes.size() < 8) {
        d.message = with_cta(rep, d.message);
        k.notes.push_back(std::move(d));
      }
    }
    if (!run.diagnostics.empty()) {
      for (Diagnostic d : run.diagnostics) {
        d.message = with_cta(rep, d.message);
        k.diagnostics.push_back(d);
      }
      return k;
    }
    if (c.log->broken()) {
      // This run cannot stand for other CTAs; the others' runs would not
      // either (the same code, the same reason), so the grid goes CTA by CTA.
      k.fallback = "the run of " + cta_name(rep) + " cannot stand for other CTAs: " + c.log->why_broken();
      return k;
    }
    const std::uint32_t id = std::uint32_t(k.classes.size());
    for (std::uint64_t j = start; j < total; ++j) {
      // Up to 2^28 CTAs to test against the class: the deadline holds here too.
      if ((j - start) % 4096 == 4095 && past(limits.deadline)) {
        out_of_time("while finding the members of the class of " + cta_name(rep) + ",");
        return k;
      }
      if (cls[j] != Cover::kNoClass) continue;
      const Dim3 m{std::uint32_t(j % grid.x), std::uint32_t(j / grid.x % grid.y), std::uint32_t(j / grid.x / grid.y)};
      if (j != start && !c.log->translates_to(m)) continue;
      cls[j] = id;
      c.members.push_back(m);
      c.shifts.push_back(c.log->element_shifts(m));
    }
    done += c.members.size();
    if constexpr (std::is_same<Domain, SymbolicDomain>::value) {
      c.outputs = std::move(run.outputs);
      c.output_shifts = std::move(run.output_shifts);
      c.shift_vectors = std::move(run.shift_vectors);
    }
    for (const auto& [name, ts] : run.touches) {
      ClassTouches& ct = c.touches[name];
      ct.elements = ts.size();
      for (std::uint64_t e = 0; e < ts.size(); ++e)
        if (ts[e].kinds) ct.touched.emplace_back(e, ts[e]);
    }
    k.classes.push_back(std::move(c));
    if (limits.grid_progress) limits.grid_progress(done, total);
    // Classes of one CTA each: the translation found nothing to share, and
    // keeping every CTA's run costs more than the CTA-by-CTA run.
    if (k.classes.size() >= 64 && done < 4 * k.classes.size()) {
      k.fallback = "the first " + std::to_string(k.classes.size()) + " classes hold only " + std::to_string(done) +
                   " CTAs";
      k.classes.clear();
      return k;
    }
  }
  return k;
}

template KernelClasses run_classes(const Program&, Launch, SymbolicDomain&, const RunLimits&);
template KernelClasses run_classes(const Program&, Launch, ConcreteDomain&, const RunLimits&);

void spread(const Program& p, const Launch& l, KernelClasses& k,
            const std::optional<std::chrono::steady_clock::time_point>& deadline) {
  (void)p;
  // The tensors some CTA writes: every touch of theirs, by which CTA.
  std::map<std::string, std::uint64_t> sizes;
  for (const CtaClass& c : k.classes)
    for (const auto& [name, ts] : c.touches) sizes[name] = std::max<std::uint64_t>(sizes[name], ts.elements);
  std::map<std::string, bool> written;
  for (const CtaClass& c : k.classes)
    for (const auto& [name, ts] : c.touches)
      for (const auto& [e, t] : ts.touched)
        if (t.kinds & (Touch::kWrite | Touch::kAtomic)) {
          written[name] = true;
          break;
        }
  // The outputs (a class's elements are placed in them): Out and InOut tensors.
  std::set<std::string> outputs;
  const auto output = [&](const LaunchArg& a) {
    if (a.is_tensor && (a.tensor.role == Role::Out || a.tensor.role == Role::InOut)) outputs.insert(a.tensor.name);
  };
  for (const LaunchArg& a : l.args) {
    output(a);
    for (const LaunchArg& f : a.fields) output(f);  // a by-value struct's pointers
  }
  for (const auto& [name, any] : written) {
    if (!any) continue;
    const std::uint64_t n = sizes[name];
    // owner: the CTA (linear index + 1) that first touched the element; w: whether it wrote it.
    std::vector<std::uint64_t> owner(n, 0);
    std::vector<char> w(n, 0);
    std::vector<Cover>& cover = k.covers[name];
    cover.assign(n, Cover{});
    for (std::uint32_t ci = 0; ci < k.classes.size(); ++ci) {
      const CtaClass& c = k.classes[ci];
      auto ts = c.touches.find(name);
      if (ts == c.touches.end()) continue;
      for (std::uint32_t mi = 0; mi < c.members.size(); ++mi) {
        if (mi % 256 == 255 && past(deadline)) {
          Diagnostic d;
          d.kind = DiagKind::Limit;
          d.message = "time limit reached while placing the elements of " + name + " that the CTAs of " +
                      std::to_string(k.classes.size()) + " CTA classes write";
          k.diagnostics.push_back(d);
          return;
        }
        const std::uint64_t who = linear(c.members[mi], l.grid) + 1;
        auto sh = c.shifts[mi].find(name);
        const std::int64_t s = sh == c.shifts[mi].end() ? 0 : sh->second;
        for (const auto& [e, t] : ts->second.touched) {
          const std::int64_t to = std::int64_t(e) + s;
          if (to < 0 || std::uint64_t(to) >= n) {
            k.fallback = "internal: a class moves an access of " + name + " outside it";
            return;
          }
          const bool writes = t.kinds & (Touch::kWrite | Touch::kAtomic);
          if (owner[to] != 0 && owner[to] != who && (writes || w[to])) {
            const std::uint64_t o = owner[to] - 1;
            const Dim3 other{std::uint32_t(o % l.grid.x), std::uint32_t(o / l.grid.x % l.grid.y),
                             std::uint32_t(o / l.grid.x / l.grid.y)};
            k.fallback = cta_name(other) + " and " + cta_name(c.members[mi]) + " both touch " + name + "[" +
                         std::to_string(to) + "], which one of them writes";
            return;
          }
          if (owner[to] == 0) owner[to] = who;
          if (writes) {
            w[to] = 1;
            // An output element with a value (symbolic runs keep them; a
            // concrete classification keeps none, and every write leaves one).
            const auto out = c.outputs.find(name);
            const bool valued = c.outputs.empty() ? outputs.count(name) != 0
                                                  : out != c.outputs.end() && e < out->second.size() && out->second[e];
            if (valued) cover[std::size_t(to)] = Cover{ci, mi, e};
          }
        }
      }
    }
  }
}

KernelClasses as_grid_classes(GridRun<Expr>&& g, const std::vector<std::string>& tensors) {
  KernelClasses k;
  k.by_grid = true;
  k.stats = g.stats;
  k.diagnostics = std::move(g.diagnostics);
  k.notes = std::move(g.notes);
  CtaClass c;
  c.members.push_back(Dim3{0, 0, 0});  // unused: writers name each element's CTA
  std::map<std::string, std::int64_t> zero;
  for (const std::string& t : tensors) zero[t] = 0;
  c.shifts.push_back(std::move(zero));
  for (const auto& [name, values] : g.outputs) {
    std::vector<Cover>& cv = k.covers[name];
    cv.assign(values.size(), Cover{});
    for (std::uint64_t e = 0; e < values.size(); ++e)
      if (values[e]) cv[e] = Cover{0, 0, e};
  }
  c.outputs = std::move(g.outputs);
  k.writers = std::move(g.writers);
  k.classes.push_back(std::move(c));
  return k;
}

std::vector<CtaClassSummary> summarize(const KernelClasses& k, const std::string& kernel) {
  std::vector<CtaClassSummary> out;
  if (k.by_grid) return out;
  for (const CtaClass& c : k.classes) {
    CtaClassSummary s;
    s.kernel = kernel;
    s.representative = c.log->cta();
    s.ctas = c.members.size();
    s.low = s.high = c.members.front();
    for (const Dim3& m : c.members) {
      s.low = Dim3{std::min(s.low.x, m.x), std::min(s.low.y, m.y), std::min(s.low.z, m.z)};
      s.high = Dim3{std::max(s.high.x, m.x), std::max(s.high.y, m.y), std::max(s.high.z, m.z)};
    }
    out.push_back(s);
  }
  return out;
}

}  // namespace tileverify::internal
