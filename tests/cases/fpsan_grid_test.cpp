// Payload checks over a whole grid ("ctas": "all"): every CTA of each
// kernel runs into one global memory, and the whole outputs are compared
// (tests/cases/fpsan_grid: fpsan_grid.cu and its PTX).
#include "tileverify/equiv.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <thread>

namespace fs = std::filesystem;
using tileverify::Outcome;

namespace {

tileverify::Spec grid_spec(const std::string& name) {
  auto loaded = tileverify::load_spec((fs::path(TILEVERIFY_TEST_DIR) / "cases" / name).string());
  INFO(loaded.error);
  REQUIRE(loaded.spec.has_value());
  REQUIRE(loaded.spec->all_ctas);
  return *loaded.spec;
}

tileverify::PayloadOptions few_trials() {
  tileverify::PayloadOptions o;
  o.trials = 5;
  return o;
}

}  // namespace

TEST_CASE("fpsan over the grid: CTAs mapped to tiles differently agree, the whole outputs compared") {
  auto spec = grid_spec("fpsan_grid/reversed.json");
  auto r = tileverify::check_payloads(spec, few_trials());
  INFO(r.text());
  CHECK(r.verdict == Outcome::PayloadsAgree);
  CHECK(r.stats.trials == 5);
  CHECK(r.stats.outputs_compared == 128);  // every CTA's tile
  // One CTA of the two kernels writes different tiles: that differs.
  spec.all_ctas = false;
  CHECK(tileverify::check_payloads(spec, few_trials()).verdict == Outcome::PayloadsDiffer);
}

TEST_CASE("fpsan over the grid: a difference in one CTA's tile names the element and that CTA") {
  auto r = tileverify::check_payloads(grid_spec("fpsan_grid/last_wrong.json"), few_trials());
  INFO(r.text());
  REQUIRE(r.verdict == Outcome::PayloadsDiffer);
  REQUIRE(r.mismatch.has_value());
  CHECK(r.mismatch->output == "y");
  CHECK(r.mismatch->element == 96);  // the first element of the last tile
  CHECK(r.mismatch->cta.x == 3);
  CHECK(r.text().find("first differing output: y[96] (CTA 3,0,0)") != std::string::npos);
}

TEST_CASE("fpsan over the grid: races between CTAs, and atomics merged from every CTA") {
  auto race = tileverify::check_payloads(grid_spec("fpsan_grid/overlapping.json"), few_trials());
  INFO(race.text());
  CHECK(race.verdict == Outcome::Race);
  CHECK(race.text().find("between CTA (0,0,0) and CTA (1,0,0)") != std::string::npos);
  // atomicAdd from four CTAs against a serial sum over all 128 inputs;
  // from three CTAs a quarter of the sum is missing.
  CHECK(tileverify::check_payloads(grid_spec("grid_atomic_sum.json"), few_trials()).verdict == Outcome::PayloadsAgree);
  CHECK(tileverify::check_payloads(grid_spec("grid_atomic_sum_short.json"), few_trials()).verdict ==
        Outcome::PayloadsDiffer);
}

TEST_CASE("whole grids: atomics merged from every CTA count the output's initial value once") {
  // Each CTA's run starts from the output's initial value: a given one
  // ("init") or, for an input, its symbol (an integer symbol for integer
  // data). Merged as if it were always the float input symbol, these were
  // not equivalent.
  for (const char* name : {"fpsan_grid/atomic_init_f32.json", "fpsan_grid/atomic_init_s32.json",
                           "fpsan_grid/atomic_inout_s32.json"}) {
    INFO(name);
    auto spec = grid_spec(name);
    auto eq = tileverify::check_equivalence(spec);
    INFO(eq.text());
    CHECK(eq.verdict == Outcome::Equivalent);
    CHECK(tileverify::check_payloads(spec, few_trials()).verdict == Outcome::PayloadsAgree);
  }
}

TEST_CASE("fpsan over the grid: progress counts the CTAs of every run, and the deadline holds") {
  auto spec = grid_spec("fpsan_grid/reversed.json");
  tileverify::PayloadOptions o = few_trials();
  std::uint64_t last_done = 0, last_total = 0;
  bool increasing = true;
  o.limits.grid_progress = [&](std::uint64_t done, std::uint64_t total) {
    increasing = increasing && done > last_done;
    last_done = done;
    last_total = total;
  };
  CHECK(tileverify::check_payloads(spec, o).verdict == Outcome::PayloadsAgree);
  CHECK(increasing);
  CHECK(last_total == 5 * 2 * 4);  // 5 trials, two kernels, 4 CTAs
  CHECK(last_done == last_total);
  // A deadline already past: unknown, never an answer.
  o.limits.deadline = std::chrono::steady_clock::now();
  CHECK(tileverify::check_payloads(spec, o).verdict == Outcome::Unknown);
  // A deadline that passes in the second trial, while a grid runs (the
  // progress callback waits past it): unknown, said as a limit.
  o.limits.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  o.limits.grid_progress = [&](std::uint64_t done, std::uint64_t) {
    if (done == 10) std::this_thread::sleep_for(std::chrono::milliseconds(700));
  };
  auto late = tileverify::check_payloads(spec, o);
  INFO(late.text());
  CHECK(late.verdict == Outcome::Unknown);
  CHECK(late.stats.trials == 2);
  CHECK(late.text().find("not every output could be decided") == std::string::npos);
  CHECK(late.text().find("limit: ") != std::string::npos);
}
