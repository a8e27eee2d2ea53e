// Thread classes (src/eval/machine_shadows.cpp): a thread's float values
// may be another thread's expressions with the inputs renamed. Whatever the
// renamings are, the verdict must be the one of every thread building its
// own expressions (DecideLimits::thread_classes = false, the CLI's
// --no-thread-classes):
//   - the size-parametric example specs at random small sizes, both modes,
//     with CTA classes (whose outputs stay renamings) and on one CTA;
//   - kernels with a bug planted in one class of threads of a CTA
//     (tests/cases/thread_classes/planted.cu): a wrong column in one lane,
//     a tile of K skipped by one row of threads, an off-by-one boundary,
//     operands swapped or an index moved in some threads;
//   - what the classes save: the tiled GEMM's 1024 outputs of a CTA are one
//     comparison, not 1024.
#include "tileverify/equiv.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using Sizes = std::map<std::string, std::int64_t>;
using tileverify::Outcome;
using tileverify::Report;
using tileverify::Spec;

namespace {

const fs::path kExamples = fs::path(TILEVERIFY_TEST_DIR).parent_path() / "examples" / "kernels";
const fs::path kCases = fs::path(TILEVERIFY_TEST_DIR) / "cases" / "thread_classes";

std::string sizes_text(const Sizes& sizes) {
  std::string out;
  for (const auto& [name, value] : sizes) out += (out.empty() ? "" : " ") + name + "=" + std::to_string(value);
  return out;
}

std::string verdict_text(const Report& r) {
  std::string out = tileverify::outcome_name(r.verdict);
  if (r.mismatch) out += " at " + r.mismatch->output + "[" + std::to_string(r.mismatch->element) + "]";
  if (!r.diagnostics.empty()) out += " (" + r.diagnostics.front().message + ")";
  return out;
}

Spec load(const fs::path& path, const Sizes& sizes = {}) {
  tileverify::SpecResult loaded = tileverify::load_spec(path.string(), sizes);
  INFO(path.string() << " at " << sizes_text(sizes) << ": " << loaded.error);
  REQUIRE(loaded.spec.has_value());
  return *loaded.spec;
}

Report run(const Spec& spec, bool threads, bool ctas = true) {
  tileverify::DecideLimits limits;
  limits.thread_classes = threads;
  limits.cta_classes = ctas;
  limits.timeout_seconds = 120;
  return tileverify::check_equivalence(spec, limits);
}

struct Both {
  Report on, off;
  std::string what;
};

Both both(const fs::path& path, const Sizes& sizes = {}, bool ctas = true) {
  const Spec spec = load(path, sizes);
  Both b{run(spec, true, ctas), run(spec, false, ctas), ""};
  b.what = path.filename().string() + " at " + (sizes.empty() ? "its sizes" : sizes_text(sizes)) +
           (ctas ? "" : " CTA by CTA") + ": with thread classes " + verdict_text(b.on) + ", without " +
           verdict_text(b.off);
  return b;
}

void check_agree(const Both& b) {
  INFO(b.what);
  CHECK(b.on.verdict == b.off.verdict);
  if (b.on.verdict == Outcome::NotEquivalent) CHECK(b.on.mismatch.has_value());
}

std::int64_t draw(std::mt19937& rng, std::int64_t lo, std::int64_t hi) {
  return lo + std::int64_t(rng() % std::uint32_t(hi - lo + 1));
}

}  // namespace

TEST_CASE("Thread classes: the verdict at random sizes is the verdict without them") {
  const auto t0 = std::chrono::steady_clock::now();
  std::mt19937 rng(20261129);
  const fs::path sized = kExamples / "sized", grid = kExamples / "grid", scaling = kExamples / "scaling";
  auto gemm = [](std::int64_t hi) {
    return [hi](std::mt19937& r) { return Sizes{{"M", draw(r, 1, hi)}, {"N", draw(r, 1, hi)}, {"K", draw(r, 1, hi)}}; };
  };
  struct Family {
    fs::path spec;
    std::function<Sizes(std::mt19937&)> random;
    int draws;
  };
  auto rows = [](std::mt19937& r) { return Sizes{{"M", draw(r, 1, 24)}, {"N", draw(r, 1, 200)}}; };
  auto attention = [](std::mt19937& r) { return Sizes{{"LQ", draw(r, 1, 40)}, {"LK", draw(r, 1, 80)}}; };
  auto diff = [](std::mt19937& r) { return Sizes{{"N", draw(r, 1, 400)}}; };
  const std::vector<Family> families = {
      {sized / "gemm_tiled.sizes.json", gemm(40), 8},
      {sized / "gemm_nomask_k.sizes.json", gemm(40), 6},
      {grid / "edge_drop.sizes.json", gemm(40), 6},
      {grid / "cta7.sizes.json", gemm(48), 6},
      {scaling / "smem32.sizes.json", gemm(80), 6},
      {scaling / "reg64.sizes.json", gemm(80), 6},
      {sized / "softmax_rows.sizes.json", rows, 6},
      {sized / "softmax_notail.sizes.json", rows, 6},
      {scaling / "attention.sizes.json", attention, 2},
      {scaling / "attention_norescale.sizes.json", attention, 2},
      {kCases / "smem32_badcol.sizes.json", gemm(80), 6},
      {kCases / "smem32_droptile.sizes.json", gemm(80), 6},
      {kCases / "smem32_offbyone.sizes.json", gemm(80), 6},
      {kCases / "diff_swapped.sizes.json", diff, 6},
      {kCases / "diff_shifted.sizes.json", diff, 6},
      {kCases / "diff_self.sizes.json", diff, 4},
  };
  int runs = 0;
  std::map<std::string, int> verdicts;
  for (const Family& f : families) {
    std::vector<Sizes> all = {{}};
    for (int i = 0; i < f.draws; ++i) all.push_back(f.random(rng));
    for (const Sizes& sizes : all) {
      const Both b = both(f.spec, sizes);
      check_agree(b);
      ++runs;
      ++verdicts[tileverify::outcome_name(b.on.verdict)];
    }
    // One CTA per check too (the outputs built out of their renamings).
    check_agree(both(f.spec, {}, false));
  }
  std::string summary;
  for (const auto& [v, n] : verdicts) summary += " " + v + ": " + std::to_string(n);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE(runs << " (spec, sizes) pairs run with and without thread classes;" << summary << "; " << seconds << " s");
  CHECK(verdicts["equivalent"] >= 20);
  CHECK(verdicts["not_equivalent"] >= 20);
}

TEST_CASE("Thread classes: a bug planted in one class of threads is found, at the element it breaks") {
  struct Planted {
    const char* spec;
    Sizes sizes;
    std::string output;
  };
  // Each spec's default sizes reach its bug.
  const std::vector<Planted> planted = {
      {"smem32_badcol.sizes.json", {}, "C"},   {"smem32_droptile.sizes.json", {}, "C"},
      {"smem32_offbyone.sizes.json", {}, "C"}, {"diff_swapped.sizes.json", {}, "Out"},
      {"diff_shifted.sizes.json", {}, "Out"},
  };
  for (const Planted& p : planted) {
    const Both b = both(kCases / p.spec, p.sizes);
    INFO(b.what);
    CHECK(b.on.verdict == Outcome::NotEquivalent);
    CHECK(b.off.verdict == Outcome::NotEquivalent);
    REQUIRE(b.on.mismatch.has_value());
    CHECK(b.on.mismatch->output == p.output);
  }
  // The swapped difference is wrong exactly in the threads with
  // threadIdx.x % 8 == 3; the shifted one in thread 37 of each CTA (not the
  // last element: there thread 37 reads its own Y).
  const Both swapped = both(kCases / "diff_swapped.sizes.json");
  REQUIRE(swapped.on.mismatch.has_value());
  CHECK(swapped.on.mismatch->element % 128 % 8 == 3);
  const Both shifted = both(kCases / "diff_shifted.sizes.json");
  REQUIRE(shifted.on.mismatch.has_value());
  CHECK(shifted.on.mismatch->element % 128 == 37);
}

TEST_CASE("Thread classes: the tiled GEMM's outputs are a few comparisons, not one per element of a CTA") {
  const Both b = both(kExamples / "scaling" / "smem32.sizes.json", {{"M", 64}, {"N", 64}, {"K", 64}});
  INFO(b.what);
  CHECK(b.on.verdict == Outcome::Equivalent);
  CHECK(b.off.verdict == Outcome::Equivalent);
  // 1024 threads, one output each: 1024 comparisons without thread classes.
  CHECK(b.off.stats.comparisons == 1024);
  CHECK(b.on.stats.comparisons <= 4);
  CHECK(b.on.stats.outputs_compared == b.off.stats.outputs_compared);
}
