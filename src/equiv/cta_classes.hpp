// CTA classes: a whole grid ("ctas": "all") checked by running one CTA per
// class of CTAs that run the same trace translated (docs/architecture.md,
// "CTA classes"; src/eval/cta_affine.hpp says when a CTA is in a class and
// why that is sound). Not public.
#pragma once

#include "grid.hpp"
#include "internal.hpp"

#include "../eval/cta_affine.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tileverify::internal {

// The elements of a global tensor of `elements` that a representative
// touched, in order, with how. Kept sparse: a CTA touches a tile of a
// tensor that may hold 16 M elements, and a class is kept while the other
// kernel's classes run.
struct ClassTouches {
  std::uint64_t elements = 0;
  std::vector<std::pair<std::uint64_t, Touch>> touched;
};

struct CtaClass {
  std::unique_ptr<CtaAffineLog> log;  // the representative's run: log->cta() is the representative
  std::map<std::string, std::vector<std::optional<Expr>>> outputs;  // the representative's
  // Its outputs that are renamings of the handle in `outputs` (thread
  // classes: RunResult::output_shifts and shift_vectors); empty: none.
  std::map<std::string, std::vector<std::uint32_t>> output_shifts;
  std::vector<std::map<std::string, std::int64_t>> shift_vectors;
  std::map<std::string, ClassTouches> touches;                       // the representative's
  std::vector<Dim3> members;                                         // grid order; the representative first
  // Per member: how many elements each global tensor moves (element_shifts).
  std::vector<std::map<std::string, std::int64_t>> shifts;
  // Whether the representative's run wrote the same value twice without
  // synchronization (a SameValueWrite note): a race check that compared
  // values (class_check).
  bool same_value_writes = false;
};

// Which CTA of which class writes an element of an output: the element is
// the representative's element `elem` moved by the member's shift.
struct Cover {
  static constexpr std::uint32_t kNoClass = UINT32_MAX;
  std::uint32_t cls = kNoClass, member = 0;
  std::uint64_t elem = 0;
};

struct KernelClasses {
  std::vector<CtaClass> classes;
  std::vector<Diagnostic> diagnostics, notes;  // of the representatives' runs
  RunStats stats;
  // Why the grid is to be run CTA by CTA instead (empty: it is not): a run
  // that cannot stand for other CTAs, clusters, TMA, CTAs that touch each
  // other's elements.
  std::string fallback;
  std::uint64_t grid_ctas = 0;
  // Per output tensor, per element (spread).
  std::map<std::string, std::vector<Cover>> covers;
  // A kernel run CTA by CTA beside another's classes (by_grid): one class
  // with no representative, whose outputs are the whole grid's, each element
  // its own (shift 0 for every tensor), and the CTA that wrote it.
  bool by_grid = false;
  std::map<std::string, std::vector<std::optional<Dim3>>> writers;
};

// A kernel's grid run (run_grid) as KernelClasses (by_grid): so that when one
// kernel cannot use CTA classes the other still does (a naive reference
// beside a TMA kernel runs one CTA, not its whole grid). `tensors`: the
// global tensors the other kernel's classes shift, each 0 here.
KernelClasses as_grid_classes(GridRun<Expr>&& g, const std::vector<std::string>& tensors);

// Runs kernel p over the grid of launch l one class at a time: the first CTA
// no class holds yet runs (symbolically, into dom) and takes into its class
// every later CTA its log carries to. Stops at the first run with a
// diagnostic (in .diagnostics, its CTA named), or with .fallback set.
// In the concrete domain (a shard's classification: cheaper) the
// representatives' outputs are not kept (class_check runs the ones it
// needs symbolically).
template <class Domain>
KernelClasses run_classes(const Program& p, Launch l, Domain& dom, const RunLimits& limits);

// The element maps (.covers) of every output, and the test that no element
// one CTA writes is touched by another (else .fallback: the grid run then
// reports the race between them, exactly). Past the deadline: a Limit
// diagnostic in .diagnostics instead.
void spread(const Program& p, const Launch& l, KernelClasses& k,
            const std::optional<std::chrono::steady_clock::time_point>& deadline);

// One line per class for reports: "CTA (0,0,0) and 960 more (x 0-30, y 0-30)".
std::vector<CtaClassSummary> summarize(const KernelClasses& k, const std::string& kernel);

}  // namespace tileverify::internal
