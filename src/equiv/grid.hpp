// Running one kernel over every CTA of its grid ("ctas": "all"), for the
// symbolic checks (equiv.cpp) and payload checks (payloads.cpp). Not public.
#pragma once

#include "internal.hpp"

#include <chrono>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace tileverify::internal {

inline std::string cta_name(const Dim3& d) {
  return "CTA (" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

// A run diagnostic's message with the CTA in front, unless the evaluator
// named it already (a launch_contract message does).
inline std::string with_cta(const Dim3& cta, const std::string& message) {
  return message.find(cta_name(cta)) != std::string::npos ? message : cta_name(cta) + ": " + message;
}

// The bytes of one element of the launch's tensor `name`, for reports that
// name its element in bytes too (memory_place); 0 when no argument names it.
inline std::uint64_t element_bytes(const std::vector<LaunchArg>& args, const std::string& name) {
  for (const LaunchArg& a : args) {
    if ((a.is_tensor || a.is_tensor_map) && a.tensor.name == name) return dtype_bytes(a.tensor.dtype);
    if (a.is_struct)
      if (const std::uint64_t b = element_bytes(a.fields, name)) return b;
  }
  return 0;
}

inline std::uint64_t element_bytes(const Launch& l, const std::string& name) {
  if (const std::uint64_t b = element_bytes(l.args, name)) return b;
  auto s = l.symbols.find(name);
  return s == l.symbols.end() ? 0 : dtype_bytes(s->second.dtype);
}

// Element e of the launch's tensor `name` in diagnostic d, and its text:
// "4 bytes at global y+12 (element 3)".
inline std::string tensor_place(const Launch& l, const std::string& name, std::uint64_t e, Diagnostic& d) {
  const std::uint64_t size = element_bytes(l, name);
  d.buffer = name;
  d.element = std::int64_t(e);
  d.byte = std::int64_t(e * size);
  d.width = std::uint32_t(size);
  return memory_place(Space::Global, name, d.byte, size, d.element);
}

// A grid runs one cluster at a time (eval.hpp, Launch::cta): a run starts
// at each CTA of rank 0, and covers the cluster's CTAs; without clusters,
// at every CTA.
inline bool starts_run(const Dim3& cta, const Dim3& cluster) {
  return cta.x % cluster.x == 0 && cta.y % cluster.y == 0 && cta.z % cluster.z == 0;
}

// "CTA (1,0,0)", or for a run of a cluster "the cluster of CTAs (0,0,0)-(0,1,0)".
inline std::string run_name(const Dim3& cta, const Dim3& cluster) {
  if (cluster.count() == 1) return cta_name(cta);
  const Dim3 last = cluster_cta(cta, cluster, std::uint32_t(cluster.count() - 1));
  return "the cluster of CTAs " + cta_name(cta).substr(4) + "-" + cta_name(last).substr(4);
}

// A run's diagnostic message with the run in front, unless it names its
// CTA already.
inline std::string with_run(const Dim3& cta, const Dim3& cluster, const std::string& message) {
  if (cluster.count() == 1) return with_cta(cta, message);
  return message.rfind("CTA (", 0) == 0 ? message : run_name(cta, cluster) + ": " + message;
}

// The verdict a run diagnostic gives, and how serious it is (equiv.cpp).
Outcome outcome_of(DiagKind k);
int severity(Outcome o);

// The launch-contract scan (contract.cpp, docs/reports.md "launch_contract"):
// whether kernel p has TMA copies (cp.async.bulk.tensor), and running it
// concretely on every CTA of launch l's grid (races untracked, within half
// the time left) to find CTAs whose copies trap on a GPU. The scan goes into
// r.contract_scans; the CTAs that break the contract (the first 4), or a
// bug of another kind in a CTA, into r.diagnostics with the verdict, and then
// it returns true: the check ends there. A scan that cannot finish (a limit,
// code it cannot run in some CTA) adds a note and returns false.
bool has_tma(const Program& p);
bool scan_launch_contract(const Program& p, Launch l, const RunLimits& limits, const std::string& name, Report& r);

// One kernel run on every CTA of its grid into one global memory. Nothing
// orders two CTAs, so an element that one CTA writes and another touches is a
// race, unless both only apply the same atomic (add, min, max): those merge.
template <class V>
struct GridRun {
  std::map<std::string, std::vector<std::optional<V>>> outputs;
  // The CTA that wrote each element of outputs (the first, for atomics
  // merged from several CTAs).
  std::map<std::string, std::vector<std::optional<Dim3>>> writers;
  std::vector<Diagnostic> diagnostics;
  std::vector<Diagnostic> notes;  // a few, from the first CTAs that had any
  RunStats stats;
};

// What an output element held when each CTA's run started: the launch's
// TensorArg::init, else its input symbol (an integer one for integer data,
// as the evaluator fills it). Each CTA's atomic result counts it once.
template <class Domain>
typename Domain::Value initial_value(const Launch& l, const std::string& name, std::uint64_t e, Domain& dom) {
  const TensorArg* t = nullptr;
  for (const LaunchArg& a : l.args)
    if (a.is_tensor && a.tensor.name == name) t = &a.tensor;
  if (t && t->init == TensorInit::Value)
    return t->init_inf != 0 ? dom.infinity(t->init_inf < 0) : dom.constant(t->init_value);
  return t && !dtype_is_float(t->dtype) ? dom.int_input(name, e) : dom.input(name, e);
}

// check_races: each CTA's run checks its own races too (a payload check
// checks them on its first input only; races between CTAs are always checked).
template <class Domain>
GridRun<typename Domain::Value> run_grid(const Program& p, Launch l, Domain& dom, const RunLimits& limits,
                                         bool check_races = true) {
  using V = typename Domain::Value;
  GridRun<V> g;
  RunOptions opts = run_options(limits);
  opts.record_touches = true;
  opts.check_races = check_races;
  const std::uint64_t total = l.grid.count();
  const Dim3 cluster = run_cluster(p, l);
  const std::uint32_t per_cta = std::uint32_t(l.block.count());
  std::uint64_t done = 0;  // CTAs run
  const auto t0 = std::chrono::steady_clock::now();
  // Before each CTA: the deadline, and (once a few CTAs give a rate) whether
  // the rest can finish before it. A grid of 2^31 CTAs would run for hours:
  // better to say so at once than at the deadline.
  auto out_of_time = [&]() -> bool {
    if (!limits.deadline) return false;
    const auto now = std::chrono::steady_clock::now();
    const double spent = std::chrono::duration<double>(now - t0).count();
    const double left = std::chrono::duration<double>(*limits.deadline - now).count();
    Diagnostic d;
    d.kind = DiagKind::Limit;
    if (left <= 0) {
      d.message = "time limit reached after running " + std::to_string(done) + " of the " + std::to_string(total) +
                  " CTAs of the grid";
    } else if (done >= 8 && spent >= 0.05 && spent / double(done) * double(total - done) > 2 * left) {
      const double need = spent / double(done) * double(total);
      std::ostringstream os;
      os.precision(3);
      os << "running all " << total << " CTAs of the grid would take about " << need << " s at the rate of the first "
         << done << " (" << spent / double(done) * 1e3 << " ms each), past the time limit (" << left
         << " s left): check one CTA (\"cta\" or --cta) or a smaller grid, or raise --timeout";
      d.message = os.str();
    } else {
      return false;
    }
    g.diagnostics.push_back(d);
    return true;
  };
  struct Owner {
    Dim3 cta;
    Touch touch;
  };
  std::map<std::string, std::vector<std::optional<Owner>>> owners;
  std::map<std::string, std::vector<std::vector<V>>> atomic_parts;  // per element: each CTA's final value
  auto access = [&](const Owner& o) {
    AccessInfo a;
    a.thread = o.touch.thread;
    a.pc = o.touch.pc;
    a.write = o.touch.kinds & (Touch::kWrite | Touch::kAtomic);
    a.loc = p.code[o.touch.pc].loc;
    a.instr = p.instr_text(o.touch.pc);
    a.kind = o.touch.kinds & Touch::kAtomic ? "atomic" : a.write ? "write" : "read";
    return a;
  };
  // Two CTAs' accesses: reports name each thread by its CTA (and, in a
  // cluster launch, its cluster and rank), numbered within the CTA.
  auto name_threads = [&](Diagnostic& d, const Owner& a, const Owner& b) {
    d.names.per_cta = per_cta;
    const Owner* both[2] = {&a, &b};
    for (std::uint32_t k = 0; k < 2; ++k) {
      const Owner& w = *both[k];
      ThreadNames::Cta c;
      c.cta = w.cta;
      c.in_cluster = cluster.count() > 1;
      c.cluster = Dim3{w.cta.x / cluster.x, w.cta.y / cluster.y, w.cta.z / cluster.z};
      c.rank = w.touch.thread / per_cta;
      d.names.ctas.push_back(c);
      d.accesses[k].thread = k * per_cta + w.touch.thread % per_cta;
    }
    d.threads = {d.accesses[0].thread, d.accesses[1].thread};
  };
  for (std::uint32_t z = 0; z < l.grid.z; ++z)
    for (std::uint32_t y = 0; y < l.grid.y; ++y)
      for (std::uint32_t x = 0; x < l.grid.x; ++x) {
        l.cta = Dim3{x, y, z};
        if (!starts_run(l.cta, cluster)) continue;
        if (out_of_time()) return g;
        auto run = run_program(p, l, dom, opts);
        done += cluster.count();
        if (limits.grid_progress) limits.grid_progress(done, total);
        g.stats.thread_instructions += run.stats.thread_instructions;
        g.stats.block_syncs += run.stats.block_syncs;
        g.stats.warp_syncs += run.stats.warp_syncs;
        for (Diagnostic d : run.notes) {
          // Every CTA runs the same code: a note the instruction made in an
          // earlier CTA already says it (the first CTA's is kept).
          // Four of each kind at most, so that many of one kind (the zero-filled
          // TMA boxes of a grid with more tiles than rows) cannot crowd out
          // another (a parity wait's note before a deadlock).
          bool again = false;
          std::size_t kind = 0;
          for (const Diagnostic& n : g.notes) {
            again = again || (n.kind == d.kind && n.loc.line == d.loc.line && n.loc.column == d.loc.column &&
                              n.loc.file == d.loc.file);
            kind += n.kind == d.kind;
          }
          if (!again && kind < 4) {
            d.message = with_run(l.cta, cluster, d.message);
            g.notes.push_back(std::move(d));
          }
        }
        if (!run.diagnostics.empty()) {
          for (Diagnostic d : run.diagnostics) {
            d.message = with_run(l.cta, cluster, d.message);
            g.diagnostics.push_back(d);
          }
          return g;
        }
        for (const auto& [name, ts] : run.touches) {
          auto& own = owners[name];
          own.resize(ts.size());
          auto out_it = run.outputs.find(name);
          for (std::size_t e = 0; e < ts.size(); ++e) {
            const Touch& t = ts[e];
            if (!t.kinds) continue;
            // A cluster's run numbers threads across its CTAs.
            Owner mine{cluster_cta(l.cta, cluster, per_cta ? t.thread / per_cta : 0), t};
            if (own[e]) {
              const Owner& o = *own[e];
              bool o_upd = o.touch.kinds & (Touch::kWrite | Touch::kAtomic), m_upd = t.kinds & (Touch::kWrite | Touch::kAtomic);
              bool both_atomic = o.touch.kinds == Touch::kAtomic && t.kinds == Touch::kAtomic &&
                                 o.touch.atomic_op == t.atomic_op && o.touch.atomic_op <= std::uint8_t(AtomOp::Max);
              // Both CTAs only stored to the element, with plain stores of
              // one width, and left the same value: the runs share one
              // context, so the same expression is the same handle. Every
              // order leaves that value (see same_value_write in
              // machine_memory.cpp): a note, or a race under strict.
              auto width = [&](std::uint32_t pc) -> std::size_t {
                const Instr& in = p.code[pc];
                return in.op == Opcode::St || in.op == Opcode::WmmaStore ? dtype_bytes(in.type) : 0;
              };
              bool same_value = false;
              if (o.touch.kinds == Touch::kWrite && t.kinds == Touch::kWrite && width(o.touch.pc) != 0 &&
                  width(o.touch.pc) == width(t.pc) && out_it != run.outputs.end() && e < out_it->second.size() &&
                  out_it->second[e]) {
                auto before = g.outputs.find(name);
                same_value = before != g.outputs.end() && e < before->second.size() && before->second[e] &&
                             Domain::same(*before->second[e], *out_it->second[e]);
              }
              if (same_value && !opts.strict) {
                bool noted = false;
                for (const Diagnostic& n : g.notes)
                  noted = noted || (n.kind == DiagKind::SameValueWrite && n.buffer == name);
                if (!noted && g.notes.size() < 8) {
                  Diagnostic d;
                  d.kind = DiagKind::SameValueWrite;
                  d.loc = p.code[t.pc].loc;
                  d.threads = {o.touch.thread, t.thread};
                  d.message = cta_name(o.cta) + " and " + cta_name(mine.cta) + " write the same value to " +
                              tensor_place(l, name, e, d) +
                              " without synchronization (not a race: either order leaves the same value)";
                  d.accesses = {access(o), access(mine)};
                  name_threads(d, o, mine);
                  g.notes.push_back(std::move(d));
                }
              } else if ((o_upd || m_upd) && !both_atomic) {
                Diagnostic d;
                d.kind = DiagKind::Race;
                d.loc = p.code[t.pc].loc;
                d.threads = {o.touch.thread, t.thread};
                d.message = "data race on " + tensor_place(l, name, e, d) + " between " + cta_name(o.cta) + " and " +
                            cta_name(mine.cta);
                d.accesses = {access(o), access(mine)};
                name_threads(d, o, mine);
                d.detail = "  the first access is in " + cta_name(o.cta) + ", the second in " + cta_name(mine.cta) +
                           ": nothing orders two CTAs of a grid\n  (no barrier reaches across CTAs), so the result "
                           "depends on which runs first; each element must be\n  written by one CTA, or only "
                           "updated by the same atomic (add, min, max)\n";
                if (same_value)
                  d.detail = "  the first write is in " + cta_name(o.cta) + ", the second in " + cta_name(mine.cta) +
                             ", and nothing orders two CTAs of a grid;\n  both write the same value, so either "
                             "order leaves it in memory (without --strict this is a note),\n  but the PTX memory model "
                             "calls any two unordered writes of one element a data race (let one\n  CTA write each "
                             "element)\n";
                g.diagnostics.push_back(d);
                return g;
              }
              if (!o_upd && m_upd) own[e] = mine;  // remember the writer over a reader
            } else {
              own[e] = mine;
            }
            if (out_it == run.outputs.end() || e >= out_it->second.size() || !out_it->second[e]) continue;
            auto& outv = g.outputs[name];
            outv.resize(ts.size());
            if (t.kinds & Touch::kAtomic) {
              auto& parts = atomic_parts[name];
              parts.resize(ts.size());
              parts[e].push_back(*out_it->second[e]);
            } else if (t.kinds & Touch::kWrite) {
              outv[e] = *out_it->second[e];
            }
            auto& who = g.writers[name];
            who.resize(ts.size());
            if (!who[e] && (t.kinds & (Touch::kWrite | Touch::kAtomic))) who[e] = mine.cta;
          }
        }
      }
  // Atomics from several CTAs: each CTA's run started from the input value y0.
  for (auto& [name, parts] : atomic_parts)
    for (std::size_t e = 0; e < parts.size(); ++e) {
      if (parts[e].empty()) continue;
      AtomOp op = AtomOp(owners[name][e]->touch.atomic_op);
      V v = parts[e][0];
      if (op == AtomOp::Add) {
        const V y0 = initial_value(l, name, e, dom);
        for (std::size_t i = 1; i < parts[e].size(); ++i) v = dom.add(v, dom.sub(parts[e][i], y0));
      } else {
        for (std::size_t i = 1; i < parts[e].size(); ++i)
          v = op == AtomOp::Max ? dom.max(v, parts[e][i]) : dom.min(v, parts[e][i]);
      }
      g.outputs[name][e] = v;
    }
  return g;
}

}  // namespace tileverify::internal
