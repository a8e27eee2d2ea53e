// estimate_equivalence (equiv.hpp; `tileverify equiv --estimate`): the
// classes and runs of each kernel, the prediction as runs x the measured
// first run, and what it says when it cannot estimate.
#include "tileverify/equiv.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <string>

namespace fs = std::filesystem;
using tileverify::CheckEstimate;
using tileverify::KernelEstimate;

namespace {

const fs::path kCases = fs::path(TILEVERIFY_TEST_DIR) / "cases";

tileverify::Spec load(const fs::path& path) {
  tileverify::SpecResult loaded = tileverify::load_spec(path.string());
  INFO(loaded.error);
  REQUIRE(loaded.spec.has_value());
  return *loaded.spec;
}

}  // namespace

TEST_CASE("estimate: a class per kernel where it has them, CTA by CTA beside TMA, runs x the first run") {
  // scale_ref: 5 CTAs, one class; tma_scale_map_rows: 3 x 2 CTAs by grid,
  // its TMA's tensor map picked by blockIdx.y from an array.
  const CheckEstimate e = tileverify::estimate_equivalence(load(kCases / "cta_classes" / "tma_map_rows.json"));
  INFO(e.text());
  REQUIRE(e.error.empty());
  REQUIRE(e.kernels.size() == 2);
  const KernelEstimate& ref = e.kernels[0];
  const KernelEstimate& opt = e.kernels[1];
  const std::string why = "the tensor map of a TMA copy depends on the CTA index";
  CHECK(ref.ctas == 5);
  CHECK(ref.classes == 1);
  CHECK(ref.runs == 1);
  CHECK(ref.by_grid.empty());
  CHECK(opt.ctas == 6);
  CHECK(opt.classes == 0);
  CHECK(opt.runs == 6);
  CHECK(opt.by_grid.find(why) != std::string::npos);
  CHECK(ref.finished);
  CHECK(opt.finished);
  CHECK(ref.first_bytes > 0);
  CHECK(e.run_seconds == doctest::Approx(ref.first_seconds + 6 * opt.first_seconds));
  CHECK(e.memory_bytes == ref.first_bytes + 6 * opt.first_bytes);
  CHECK(e.text().find("ESTIMATE") == 0);
  CHECK(e.json().find(why) != std::string::npos);
}

TEST_CASE("estimate: without classes every CTA is a run; both kernels with classes give the comparisons") {
  tileverify::DecideLimits off;
  off.cta_classes = false;
  const CheckEstimate each = tileverify::estimate_equivalence(load(kCases / "cta_classes" / "tma_map_rows.json"), off);
  REQUIRE(each.error.empty());
  CHECK(each.kernels[0].runs == 5);
  CHECK(each.kernels[0].by_grid == "--no-symmetry");
  // Two kernels with classes: the comparisons after renaming are counted.
  const CheckEstimate both = tileverify::estimate_equivalence(load(kCases / "structs" / "scale.json"));
  INFO(both.text());
  REQUIRE(both.error.empty());
  CHECK(both.elements == 96);
  CHECK(both.comparisons >= 1);
  CHECK(both.comparisons <= both.elements);
}

TEST_CASE("estimate: a deadline already past gives a lower bound, a bad kernel an error") {
  tileverify::DecideLimits now;
  now.deadline = std::chrono::steady_clock::now();
  const CheckEstimate late = tileverify::estimate_equivalence(load(kCases / "structs" / "scale.json"), now);
  INFO(late.text());
  // Either the classes or the first runs meet the deadline: never a
  // prediction that looks complete.
  CHECK((!late.error.empty() || late.lower_bound));
  tileverify::Spec bad = load(kCases / "structs" / "scale.json");
  bad.opt->kernel = "no_such_kernel";
  const CheckEstimate e = tileverify::estimate_equivalence(bad);
  CHECK_FALSE(e.error.empty());
  CHECK(e.text().rfind("ERROR: ", 0) == 0);
}
