// CTA classes ("ctas": "all" checked by one representative CTA per class,
// src/equiv/cta_classes.cpp, src/eval/cta_affine.hpp): whatever the classes
// are, the verdict must be the verdict of the CTA-by-CTA run
// (DecideLimits::cta_classes = false, the CLI's --no-symmetry).
//   - the size-parametric example specs at many random small sizes, with
//     classes and without: the same verdict;
//   - the grid soundness kernels (examples/kernels/grid) at several sizes;
//   - hand-written kernels (tests/cases/cta_classes/classes.ptx) whose only
//     bug is in CTAs far from (0,0,0), reached through integer arithmetic on
//     blockIdx that the run of CTA (0,0,0) must record and check;
//   - kernels the log cannot describe (atomics, a float of blockIdx): the
//     check falls back to the CTA-by-CTA run and says why;
//   - the classes of the tiled GEMM themselves.
#include "tileverify/equiv.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using Sizes = std::map<std::string, std::int64_t>;
using tileverify::Outcome;
using tileverify::Report;
using tileverify::Spec;

namespace {

const fs::path kExamples = fs::path(TILEVERIFY_TEST_DIR).parent_path() / "examples" / "kernels";
const fs::path kCases = fs::path(TILEVERIFY_TEST_DIR) / "cases" / "cta_classes";

std::string sizes_text(const Sizes& sizes) {
  std::string out;
  for (const auto& [name, value] : sizes) out += (out.empty() ? "" : " ") + name + "=" + std::to_string(value);
  return out;
}

std::string dim_text(const tileverify::Dim3& d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

// The classes a report lists, or why there were none, for failure messages.
std::string classes_text(const Report& r) {
  std::ostringstream out;
  if (!r.cta_classes_unused.empty()) out << "    CTA by CTA: " << r.cta_classes_unused << "\n";
  for (const tileverify::CtaClassSummary& s : r.cta_classes)
    out << "    " << s.kernel << ": CTA " << dim_text(s.representative) << " stands for " << s.ctas << " CTAs, "
        << dim_text(s.low) << " to " << dim_text(s.high) << "\n";
  if (r.cta_classes.empty() && r.cta_classes_unused.empty()) out << "    (no classes listed)\n";
  return out.str();
}

std::string verdict_text(const Report& r) {
  std::string out = tileverify::outcome_name(r.verdict);
  if (r.mismatch) out += " at " + r.mismatch->output + "[" + std::to_string(r.mismatch->element) + "]";
  return out;
}

Spec load(const fs::path& path, const Sizes& sizes = {}) {
  tileverify::SpecResult loaded = tileverify::load_spec(path.string(), sizes);
  INFO(path.string() << " at " << sizes_text(sizes) << ": " << loaded.error);
  REQUIRE(loaded.spec.has_value());
  return *loaded.spec;
}

Report run(const Spec& spec, bool classes) {
  tileverify::DecideLimits limits;
  limits.cta_classes = classes;
  limits.timeout_seconds = 120;
  return tileverify::check_equivalence(spec, limits);
}

// The spec at `sizes`, with classes and without.
struct Both {
  Report on, off;
  std::string what;  // spec and sizes, both verdicts and the classes: for messages
};

Both both(const fs::path& path, const Sizes& sizes = {}) {
  const Spec spec = load(path, sizes);
  Both b{run(spec, true), run(spec, false), ""};
  b.what = path.filename().string() + " at " + (sizes.empty() ? "its sizes" : sizes_text(sizes)) +
           ": with classes " + verdict_text(b.on) + ", CTA by CTA " + verdict_text(b.off) + "\n" + classes_text(b.on);
  return b;
}

// The same verdict both ways (and a mismatch on both sides when not equivalent).
void check_agree(const Both& b) {
  INFO(b.what);
  CHECK(b.on.verdict == b.off.verdict);
  if (b.on.verdict == Outcome::NotEquivalent && b.off.verdict == Outcome::NotEquivalent) {
    CHECK(b.on.mismatch.has_value());
    CHECK(b.off.mismatch.has_value());
  }
}

bool used_classes(const Report& r) { return !r.cta_classes.empty() && r.cta_classes_unused.empty(); }

// The classes of the kernel whose report name starts with `side` ("ref", "opt").
std::vector<tileverify::CtaClassSummary> classes_of(const Report& r, const std::string& side) {
  std::vector<tileverify::CtaClassSummary> out;
  for (const tileverify::CtaClassSummary& s : r.cta_classes)
    if (s.kernel.compare(0, side.size(), side) == 0) out.push_back(s);
  return out;
}

// A value in [lo, hi] from a fixed-seed std::mt19937 (whose output the
// standard fixes, unlike that of the distributions).
std::int64_t draw(std::mt19937& rng, std::int64_t lo, std::int64_t hi) {
  return lo + std::int64_t(rng() % std::uint32_t(hi - lo + 1));
}

struct Family {
  fs::path spec;
  std::vector<Sizes> fixed;                    // sizes always run
  std::function<Sizes(std::mt19937&)> random;  // and random ones
  int draws;
  // Correct at every size: both ways must say equivalent (0: no such claim).
  bool always_equivalent;
};

Sizes gemm_sizes(std::mt19937& rng, std::int64_t hi, std::int64_t n_lo = 1) {
  return {{"M", draw(rng, 1, hi)}, {"N", draw(rng, n_lo, hi)}, {"K", draw(rng, 1, hi)}};
}

}  // namespace

TEST_CASE("CTA classes: the verdict at random sizes is the verdict CTA by CTA") {
  const auto t0 = std::chrono::steady_clock::now();
  std::mt19937 rng(20240611);
  const fs::path sized = kExamples / "sized", grid = kExamples / "grid", scaling = kExamples / "scaling";
  auto gemm = [](std::int64_t hi, std::int64_t n_lo = 1) {
    return [hi, n_lo](std::mt19937& r) { return gemm_sizes(r, hi, n_lo); };
  };
  const Sizes tile_multiples{{"M", 32}, {"N", 48}, {"K", 16}}, ones{{"M", 1}, {"N", 1}, {"K", 1}};
  const std::vector<Family> families = {
      {sized / "gemm_tiled.sizes.json", {{}, tile_multiples, ones}, gemm(40), 24, true},
      {sized / "gemm_nomask_k.sizes.json", {{}, tile_multiples, ones}, gemm(40), 16, false},
      {grid / "edge_drop.sizes.json", {{}, tile_multiples, ones}, gemm(40), 20, false},
      {grid / "clamp_store.sizes.json", {{}, tile_multiples, ones}, gemm(40), 20, false},
      {grid / "cta7.sizes.json", {{}, tile_multiples, ones}, gemm(48), 20, false},
      // The overlapping grid has ceil((N - 1) / 15) CTAs across: N >= 2.
      {grid / "overlap.sizes.json", {{}, tile_multiples, {{"M", 1}, {"N", 2}, {"K", 1}}}, gemm(40, 2), 20, false},
      {scaling / "smem32.sizes.json", {{}, {{"M", 64}, {"N", 64}, {"K", 32}}}, gemm(80), 8, true},
      {scaling / "reg64.sizes.json", {{}, {{"M", 64}, {"N", 128}, {"K", 16}}}, gemm(80), 7, true},
      {sized / "softmax_rows.sizes.json",
       {{}, {{"M", 1}, {"N", 1}}, {{"M", 4}, {"N", 128}}},
       [](std::mt19937& r) { return Sizes{{"M", draw(r, 1, 40)}, {"N", draw(r, 1, 300)}}; }, 20, true},
      {sized / "softmax_notail.sizes.json",
       {{}, {{"M", 1}, {"N", 1}}, {{"M", 4}, {"N", 128}}},
       [](std::mt19937& r) { return Sizes{{"M", draw(r, 1, 40)}, {"N", draw(r, 1, 300)}}; }, 16, false},
      {scaling / "attention.sizes.json", {{{"LQ", 40}, {"LK", 80}}},
       [](std::mt19937& r) { return Sizes{{"LQ", draw(r, 1, 40)}, {"LK", draw(r, 1, 80)}}; }, 3, true},
      {scaling / "attention_norescale.sizes.json", {{{"LQ", 40}, {"LK", 80}}},
       [](std::mt19937& r) { return Sizes{{"LQ", draw(r, 1, 40)}, {"LK", draw(r, 1, 80)}}; }, 3, false},
  };
  int comparisons = 0, with_classes = 0;
  std::map<std::string, int> verdicts;
  for (const Family& f : families) {
    std::vector<Sizes> all = f.fixed;
    for (int i = 0; i < f.draws; ++i) all.push_back(f.random(rng));
    int family_classes = 0;
    for (const Sizes& sizes : all) {
      const Both b = both(f.spec, sizes);
      check_agree(b);
      if (f.always_equivalent) {
        INFO(b.what);
        CHECK(b.on.verdict == Outcome::Equivalent);
        CHECK(b.off.verdict == Outcome::Equivalent);
        // Equivalent by classes: the classes cover both grids and the
        // outputs came down to distinct comparisons.
        if (b.on.verdict == Outcome::Equivalent && used_classes(b.on)) CHECK(b.on.stats.comparisons > 0);
      }
      ++comparisons;
      ++verdicts[tileverify::outcome_name(b.on.verdict)];
      if (used_classes(b.on)) {
        ++with_classes;
        ++family_classes;
      }
    }
    // Every family is checked by classes somewhere (the test is not the
    // CTA-by-CTA run twice); the equivalent GEMMs and softmax at every size.
    INFO(f.spec.filename().string() << ": " << family_classes << " of " << all.size() << " runs by CTA classes");
    CHECK(family_classes > 0);
    if (f.always_equivalent && f.spec.filename().string().find("attention") == std::string::npos)
      CHECK(family_classes == int(all.size()));
  }
  std::string summary;
  for (const auto& [v, n] : verdicts) summary += " " + v + ": " + std::to_string(n);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE(comparisons << " (spec, sizes) pairs run with and without classes, " << with_classes
                      << " of them by classes;" << summary << "; " << seconds << " s");
  CHECK(comparisons >= 100);
  CHECK(2 * with_classes >= comparisons);
  // Not only one verdict: the random sizes reach the bugs and the correct sizes.
  CHECK(verdicts["equivalent"] >= 20);
  CHECK(verdicts["not_equivalent"] >= 10);
  CHECK(verdicts["race"] >= 5);
}

// A sharded check finds the classes from concrete runs and skips the race
// check in its symbolic runs of the representatives where the concrete
// one stands for it (class_check.cpp; docs/evaluator.md, "One race check
// for both domains"): the shards together must give the whole check's
// verdict, races found only by a symbolic run included.
TEST_CASE("CTA classes: the shards of a check together give its verdict") {
  std::mt19937 rng(20261129);
  const fs::path sized = kExamples / "sized", grid = kExamples / "grid", scaling = kExamples / "scaling";
  // How serious a verdict is: the most serious of the shards' is the check's.
  auto rank = [](Outcome o) {
    switch (o) {
      case Outcome::Equivalent: return 0;
      case Outcome::Unknown:
      case Outcome::Unsupported: return 1;
      case Outcome::NotEquivalent: return 2;
      default: return 3;  // race, deadlock, out of bounds, ...
    }
  };
  const std::vector<std::pair<fs::path, std::function<Sizes(std::mt19937&)>>> families = {
      {scaling / "smem32.sizes.json", [](std::mt19937& r) { return gemm_sizes(r, 80); }},
      {scaling / "reg64.sizes.json", [](std::mt19937& r) { return gemm_sizes(r, 80); }},
      {grid / "edge_drop.sizes.json", [](std::mt19937& r) { return gemm_sizes(r, 40); }},
      {grid / "cta7.sizes.json", [](std::mt19937& r) { return gemm_sizes(r, 48); }},
      {grid / "overlap.sizes.json", [](std::mt19937& r) { return gemm_sizes(r, 40, 2); }},
      {sized / "softmax_rows.sizes.json",
       [](std::mt19937& r) { return Sizes{{"M", draw(r, 1, 40)}, {"N", draw(r, 1, 300)}}; }},
  };
  std::map<int, int> seen;
  auto agree = [&](const Spec& spec, const std::string& what) {
    const Report whole = run(spec, true);
    int worst = -1;
    Outcome worst_verdict = Outcome::Equivalent;
    std::string shards;
    for (unsigned i = 0; i < 3; ++i) {
      tileverify::DecideLimits limits;
      limits.timeout_seconds = 120;
      limits.shard_index = i;
      limits.shard_count = 3;
      const Report r = tileverify::check_equivalence(spec, limits);
      shards += " " + verdict_text(r);
      if (rank(r.verdict) > worst) {
        worst = rank(r.verdict);
        worst_verdict = r.verdict;
      }
    }
    INFO(what << ": whole " << verdict_text(whole) << ", shards" << shards);
    CHECK(worst == rank(whole.verdict));
    if (worst == 3) CHECK(worst_verdict == whole.verdict);
    ++seen[rank(whole.verdict)];
  };
  for (const auto& [path, random] : families)
    for (int i = 0; i < 4; ++i) {
      const Sizes sizes = random(rng);
      agree(load(path, sizes), path.filename().string() + " at " + sizes_text(sizes));
    }
  agree(load(fs::path(TILEVERIFY_TEST_DIR) / "cases" / "benign" / "concrete_same.json"), "concrete_same.json");
  // Equivalent, not equivalent and unsafe grids all among them.
  CHECK(seen[0] >= 5);
  CHECK(seen[2] >= 2);
  CHECK(seen[3] >= 2);
}

TEST_CASE("CTA classes: the grid soundness kernels at their sizes and at others") {
  const fs::path grid = kExamples / "grid";
  // The right-edge CTAs drop their partial tile: wrong whenever N is not a multiple of 16.
  for (const Sizes& s : std::vector<Sizes>{{}, {{"M", 17}, {"N", 33}, {"K", 5}}, {{"M", 64}, {"N", 50}, {"K", 16}},
                                           {{"M", 5}, {"N", 100}, {"K", 40}}}) {
    const Both b = both(grid / "edge_drop.sizes.json", s);
    INFO(b.what);
    CHECK(b.on.verdict == Outcome::NotEquivalent);
    CHECK(b.off.verdict == Outcome::NotEquivalent);
    CHECK(b.on.mismatch.has_value());
    CHECK(used_classes(b.on));
  }
  {
    const Both b = both(grid / "edge_drop.sizes.json", {{"M", 40}, {"N", 48}, {"K", 20}});
    INFO(b.what);
    CHECK(b.on.verdict == Outcome::Equivalent);
    CHECK(b.off.verdict == Outcome::Equivalent);
  }
  // Clamped stores: the edge CTAs' out-of-range threads race on column N - 1.
  for (const Sizes& s : std::vector<Sizes>{{}, {{"M", 17}, {"N", 33}, {"K", 5}}, {{"M", 64}, {"N", 50}, {"K", 16}},
                                           {{"M", 1}, {"N", 7}, {"K", 1}}}) {
    const Both b = both(grid / "clamp_store.sizes.json", s);
    INFO(b.what);
    CHECK(b.on.verdict == Outcome::Race);
    CHECK(b.off.verdict == Outcome::Race);
  }
  {
    const Both b = both(grid / "clamp_store.sizes.json", {{"M", 40}, {"N", 32}, {"K", 20}});
    INFO(b.what);
    CHECK(b.on.verdict == Outcome::Equivalent);
    CHECK(b.off.verdict == Outcome::Equivalent);
  }
  // CTA 7 in linear order reads A one column off: wrong in grids of 8 CTAs or more,
  // and the mismatch is in CTA (7 % gx, 7 / gx).
  struct Cta7 {
    Sizes sizes;
    tileverify::Dim3 cta;
  };
  for (const Cta7& c : std::vector<Cta7>{{{}, {1, 2, 0}},
                                         {{{"M", 64}, {"N", 40}, {"K", 20}}, {1, 2, 0}},
                                         {{{"M", 48}, {"N", 33}, {"K", 1}}, {1, 2, 0}},
                                         {{{"M", 40}, {"N", 64}, {"K", 17}}, {3, 1, 0}},
                                         {{{"M", 17}, {"N", 128}, {"K", 3}}, {7, 0, 0}}}) {
    const Both b = both(grid / "cta7.sizes.json", c.sizes);
    INFO(b.what);
    CHECK(b.on.verdict == Outcome::NotEquivalent);
    CHECK(b.off.verdict == Outcome::NotEquivalent);
    REQUIRE(b.on.mismatch.has_value());
    INFO("mismatch in CTA " << dim_text(b.on.mismatch->cta) << ", expected " << dim_text(c.cta));
    CHECK(b.on.mismatch->cta.x == c.cta.x);
    CHECK(b.on.mismatch->cta.y == c.cta.y);
    CHECK(b.on.mismatch->cta.z == c.cta.z);
    CHECK(used_classes(b.on));
  }
  {
    const Both b = both(grid / "cta7.sizes.json", {{"M", 32}, {"N", 48}, {"K", 20}});  // 6 CTAs: no CTA 7
    INFO(b.what);
    CHECK(b.on.verdict == Outcome::Equivalent);
    CHECK(b.off.verdict == Outcome::Equivalent);
  }
  // Neighbouring tiles overlap in a column: a race between CTAs once there are two.
  for (const Sizes& s : std::vector<Sizes>{{}, {{"M", 17}, {"N", 17}, {"K", 3}}, {{"M", 33}, {"N", 100}, {"K", 16}},
                                           {{"M", 1}, {"N", 31}, {"K", 1}}}) {
    const Both b = both(grid / "overlap.sizes.json", s);
    INFO(b.what);
    CHECK(b.on.verdict == Outcome::Race);
    CHECK(b.off.verdict == Outcome::Race);
  }
  {
    const Both b = both(grid / "overlap.sizes.json", {{"M", 40}, {"N", 16}, {"K", 20}});  // one CTA across
    INFO(b.what);
    CHECK(b.on.verdict == Outcome::Equivalent);
    CHECK(b.off.verdict == Outcome::Equivalent);
  }
}

TEST_CASE("CTA classes: a CTA far from (0,0,0) that goes wrong through integer arithmetic on blockIdx") {
  // Each kernel is tests/cases/cta_classes/classes.ptx's `base` (y[i] = 2 x[i])
  // but for some CTAs; below the first of them (G CTAs), equivalent.
  struct Case {
    const char* spec;
    std::int64_t first_wrong;  // the first CTA that goes wrong
  };
  for (const Case& c : std::vector<Case>{{"mod5_offset.json", 3},    // blockIdx.x % 5 == 3: a rotated store
                                         {"div7_value.json", 14},    // blockIdx.x / 7 == 2: 3 x[i]
                                         {"square_index.json", 8},   // blockIdx.x * blockIdx.x / 64 in the index
                                         {"shared_mod5.json", 3}}) {  // blockIdx.x % 5 through shared memory
    for (const std::int64_t g : {std::int64_t(24), std::int64_t(41), c.first_wrong + 1}) {
      const Both b = both(kCases / c.spec, {{"G", g}});
      INFO(b.what);
      CHECK(b.on.verdict == Outcome::NotEquivalent);
      CHECK(b.off.verdict == Outcome::NotEquivalent);
      CHECK(used_classes(b.on));
      REQUIRE(b.on.mismatch.has_value());
      CHECK(b.on.mismatch->cta.x == std::uint32_t(c.first_wrong));
    }
    const Both b = both(kCases / c.spec, {{"G", c.first_wrong}});
    INFO(b.what);
    CHECK(b.on.verdict == Outcome::Equivalent);
    CHECK(b.off.verdict == Outcome::Equivalent);
  }
}

TEST_CASE("CTA classes: integers whose move with blockIdx the log must not take on trust") {
  // mul.wide of blockIdx.x and a register whose bits are 0xffffffff: the
  // factor is the register read at the instruction's type (4294967295 for
  // .u32, -1 for .s32), whatever type wrote it. And initialized .global
  // tables indexed by blockIdx.x: CTA c reads table[c], not table[0].
  // And %clusterid, which is %ctaid in a launch without clusters.
  for (const char* spec : {"wide_u32_neg.json", "madwide_u32_neg.json", "wide_s32_neg.json", "table_f32.json",
                           "table_int.json", "clusterid.json"}) {
    for (const std::int64_t g : {std::int64_t(24), std::int64_t(14)}) {
      const Both b = both(kCases / spec, {{"G", g}});
      INFO(b.what);
      CHECK(b.off.verdict == Outcome::NotEquivalent);
      CHECK(b.on.verdict == Outcome::NotEquivalent);
    }
  }
}

TEST_CASE("CTA classes: a vector access stays aligned only if the move is a multiple of its width") {
  // ld.global.v4 whose address moves by 33 floats per CTA: a move by whole
  // elements, but CTA 1's vector is misaligned (a GPU faults there).
  const Both b = both(kCases / "vec_skew.json", {{"G", 24}});
  INFO(b.what);
  CHECK(b.off.verdict == Outcome::Unsupported);
  CHECK(b.on.verdict == b.off.verdict);
  REQUIRE(!b.on.diagnostics.empty());
  CHECK(b.on.diagnostics[0].message.find("CTA (1,0,0)") != std::string::npos);
  CHECK(b.on.diagnostics[0].message.find("misaligned") != std::string::npos);
}

TEST_CASE("CTA classes: a stray CTA that overwrites another's tile is a race between the two") {
  // One CTA more than tiles; tile indices clamped to the last tile: CTA G
  // writes CTA G - 1's tile with other values. The classes place every
  // CTA's writes, find the element two CTAs write, and the CTA-by-CTA run
  // then reports the race with both accesses.
  for (const std::int64_t g : {std::int64_t(24), std::int64_t(5)}) {
    const Both b = both(kCases / "stray_tile.json", {{"G", g}});
    INFO(b.what);
    CHECK(b.off.verdict == Outcome::Race);
    CHECK(b.on.verdict == Outcome::Race);
    REQUIRE(!b.on.diagnostics.empty());
    const std::string& m = b.on.diagnostics[0].message;
    CHECK(m.find("CTA (" + std::to_string(g - 1) + ",0,0) and CTA (" + std::to_string(g) + ",0,0)") != std::string::npos);
    CHECK(b.on.cta_classes_unused.find("both touch") != std::string::npos);
  }
}

TEST_CASE("CTA classes: Triton's 1D grid of tiles (pid // grid_n, pid % grid_n) is one class per row of tiles") {
  // PTX as Triton 3.6 emitted it: the row is a quotient (pinned, checked per
  // CTA), the column a remainder that moves with pid within the row.
  const fs::path spec =
      kExamples.parent_path() / "triton" / "sm80" / "matmul_f32_grid256.json";
  const Both b = both(spec, {});
  INFO(b.what);
  CHECK(b.on.verdict == Outcome::Equivalent);
  CHECK(b.off.verdict == Outcome::Equivalent);
  std::size_t opt_classes = 0;
  std::uint64_t opt_ctas = 0;
  for (const tileverify::CtaClassSummary& c : b.on.cta_classes)
    if (c.kernel.rfind("opt", 0) == 0) {
      ++opt_classes;
      opt_ctas += c.ctas;
      CHECK(c.ctas == 8);           // a row of 8 tiles
      CHECK(c.low.x % 8 == 0);      // starting at a row
      CHECK(c.high.x == c.low.x + 7);
    }
  CHECK(opt_classes == 8);
  CHECK(opt_ctas == 64);
}

TEST_CASE("CTA classes: what the log cannot describe runs CTA by CTA") {
  struct Case {
    const char* spec;
    Outcome verdict;
  };
  for (const Case& c : std::vector<Case>{{"atomic_sum.json", Outcome::Equivalent},       // atom.global.add from every CTA
                                         {"atomic_sum_mod5.json", Outcome::NotEquivalent},
                                         {"cvt_index.json", Outcome::Equivalent},        // cvt.rn.f32.u32 of %ctaid.x
                                         {"const_table.json", Outcome::NotEquivalent}}) {  // a .const table by blockIdx.x
    for (const std::int64_t g : {std::int64_t(24), std::int64_t(14)}) {
      const Both b = both(kCases / c.spec, {{"G", g}});
      INFO(b.what);
      CHECK(b.on.verdict == c.verdict);
      CHECK(b.off.verdict == c.verdict);
      CHECK_FALSE(b.on.cta_classes_unused.empty());
      // The kernel the log cannot describe has no classes (its reference,
      // when it has them, keeps them).
      CHECK(classes_of(b.on, "opt").empty());
    }
  }
}

TEST_CASE("CTA classes: a TMA copy through a map inside a struct, against a kernel of other classes") {
  // scale_half (4 CTAs, one class) against scale_rows_struct, whose TMA
  // copy (rows 16 blockIdx.x) moves with the CTA index like any access:
  // both kernels by classes, each representative renamed to its members.
  struct Case {
    const char* spec;
    Outcome verdict;
    const char* at;  // the mismatch's element, "" if none
  };
  for (const Case& c : std::vector<Case>{{"mixed_tma_ok.json", Outcome::Equivalent, ""},
                                         {"mixed_tma_scale3.json", Outcome::NotEquivalent, "C[0]"},
                                         {"mixed_tma_short.json", Outcome::NotEquivalent, "C[500]"},  // ref stops at 500
                                         {"mixed_tma_rows16.json", Outcome::NotEquivalent, "C[256]"}}) {  // opt's 2nd CTA missing
    const Both b = both(kCases / c.spec);
    INFO(b.what);
    check_agree(b);
    CHECK(b.on.verdict == c.verdict);
    CHECK(classes_of(b.on, "ref").size() >= 1);
    CHECK(classes_of(b.on, "opt").size() >= 1);
    CHECK(b.on.cta_classes_unused.empty());
    if (*c.at) {
      REQUIRE(b.on.mismatch.has_value());
      CHECK(b.on.mismatch->output + "[" + std::to_string(b.on.mismatch->element) + "]" == c.at);
    }
  }
  // The one-sided element's CTA is the TMA kernel's member that writes it:
  // row 31 is CTA 1's.
  const Both shorter = both(kCases / "mixed_tma_short.json");
  REQUIRE(shorter.on.mismatch.has_value());
  CHECK(shorter.on.mismatch->cta.x == 1);
}

TEST_CASE("CTA classes: the classes of the tiled GEMM") {
  const fs::path spec = kExamples / "sized" / "gemm_tiled.sizes.json";
  {
    // 64 x 64 in 16 x 16 tiles, K a multiple of 16: every CTA like CTA (0,0,0).
    const Report r = run(load(spec, {{"M", 64}, {"N", 64}, {"K", 64}}), true);
    INFO(classes_text(r));
    CHECK(r.verdict == Outcome::Equivalent);
    CHECK(r.cta_classes_unused.empty());
    const auto opt = classes_of(r, "opt");
    REQUIRE(opt.size() == 1);
    CHECK(opt[0].ctas == 16);
    CHECK(dim_text(opt[0].representative) == "(0,0,0)");
    CHECK(dim_text(opt[0].low) == "(0,0,0)");
    CHECK(dim_text(opt[0].high) == "(3,3,0)");
    CHECK(classes_of(r, "ref").size() == 1);
    CHECK(r.stats.comparisons > 0);
    CHECK(r.stats.comparisons < r.stats.outputs_compared);
  }
  {
    // 40 x 40: a partial tile at the right and the bottom edges (and K = 20,
    // a partial K tile in every CTA): the interior, the two edges, the corner.
    const Report r = run(load(spec, {{"M", 40}, {"N", 40}, {"K", 20}}), true);
    INFO(classes_text(r));
    CHECK(r.verdict == Outcome::Equivalent);
    const auto opt = classes_of(r, "opt");
    CHECK(opt.size() > 1);
    std::uint64_t ctas = 0;
    for (const auto& s : opt) {
      ctas += s.ctas;
      // The box holds the class and its representative.
      CHECK(s.low.x <= s.representative.x);
      CHECK(s.representative.x <= s.high.x);
      CHECK(s.low.y <= s.representative.y);
      CHECK(s.representative.y <= s.high.y);
      CHECK(s.ctas <= std::uint64_t(s.high.x - s.low.x + 1) * (s.high.y - s.low.y + 1) * (s.high.z - s.low.z + 1));
    }
    CHECK(ctas == 9);  // the 3 x 3 grid
    std::uint64_t ref_ctas = 0;
    for (const auto& s : classes_of(r, "ref")) ref_ctas += s.ctas;
    CHECK(ref_ctas == 9);
  }
}

TEST_CASE("CTA classes: the coalesced GEMM's column, a bfi of blockIdx above the lane, is one class") {
  // nvcc writes blockIdx.y * 32 + threadIdx.x % 32 as bfi.b32 col, ctaid.y,
  // tid & 31, 5, 27: a shift of the CTA index, as in the naive kernel.
  for (const char* name : {"coalesced.sizes.json", "coalesced_yx.sizes.json"}) {
    const fs::path spec = kExamples / "scaling" / name;
    const Report r = run(load(spec, {{"M", 128}, {"N", 128}, {"K", 8}}), true);
    INFO(name << ": " << classes_text(r));
    CHECK(r.verdict == Outcome::Equivalent);
    const auto opt = classes_of(r, "opt");
    REQUIRE(opt.size() == 1);
    CHECK(opt[0].ctas == 16);
    // Partial tiles at the edges: the same verdict as CTA by CTA.
    check_agree(both(spec, {{"M", 40}, {"N", 72}, {"K", 5}}));
  }
}

namespace {

// Whether a grid of gx x gy CTAs has a CTA with (x + y) % 3 == 2
// (tma_scale_off_tile's wrong CTAs).
bool has_off_tile(std::int64_t gx, std::int64_t gy) {
  for (std::int64_t y = 0; y < gy; ++y)
    for (std::int64_t x = 0; x < gx; ++x)
      if ((x + y) % 3 == 2) return true;
  return false;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

TEST_CASE("CTA classes: TMA kernels, their box coordinates moving with blockIdx") {
  // tests/cases/cta_classes/tma_classes.cu: 8 x 16 boxes of an R x C
  // tensor loaded by TMA (and stored by TMA), against one-thread-per-element
  // references. At every size the verdict with classes is the one CTA by
  // CTA, and the expected one; the TMA kernel itself runs by classes.
  struct Case {
    const char* spec;
    std::int64_t across;  // columns of x per CTA: 16, or 15 for the overlapping boxes
    // The expected verdict at R, C.
    std::function<Outcome(std::int64_t, std::int64_t)> verdict;
  };
  const auto equivalent = [](std::int64_t, std::int64_t) { return Outcome::Equivalent; };
  const std::vector<Case> cases = {
      {"tma_scale.json", 16, equivalent},
      {"tma_scale_store.json", 16, equivalent},
      {"tma_pairs.json", 15, equivalent},
      {"tma_off_tile.json", 16,
       [](std::int64_t r, std::int64_t c) {
         return has_off_tile(ceil_div(c, 16), ceil_div(r, 8)) ? Outcome::NotEquivalent : Outcome::Equivalent;
       }},
      {"tma_wrong_map.json", 16,
       [](std::int64_t, std::int64_t c) { return c > 32 ? Outcome::NotEquivalent : Outcome::Equivalent; }},
      // The edge boxes read the zero fill where pairs_flat_ref reads the next
      // row: a class of an interior CTA must not take the edge CTAs in.
      {"tma_pairs_flat.json", 15,
       [](std::int64_t r, std::int64_t) { return r >= 2 ? Outcome::NotEquivalent : Outcome::Equivalent; }},
  };
  std::mt19937 rng(20261129);
  // Tile multiples, partial tiles in one dimension or both, one CTA, a row.
  // C is a multiple of 4: a tensor map's rows are whole multiples of 16
  // bytes (cuTensorMapEncodeTiled).
  std::vector<Sizes> sizes = {{}, {{"R", 16}, {"C", 48}}, {{"R", 16}, {"C", 44}}, {{"R", 17}, {"C", 48}},
                              {{"R", 1}, {"C", 4}},  {{"R", 3}, {"C", 68}}, {{"R", 40}, {"C", 12}},
                              {{"R", 16}, {"C", 60}}};
  for (int i = 0; i < 5; ++i) sizes.push_back({{"R", draw(rng, 1, 40)}, {"C", 4 * draw(rng, 1, 17)}});
  int by_classes = 0, runs = 0;
  for (const Case& c : cases)
    for (const Sizes& s : sizes) {
      const Both b = both(kCases / c.spec, s);
      const std::int64_t r = s.empty() ? 20 : s.at("R"), cols = s.empty() ? 40 : s.at("C");
      INFO(b.what);
      check_agree(b);
      CHECK(b.on.verdict == c.verdict(r, cols));
      // The TMA kernel has classes; CTA (1,0,0) in CTA (0,0,0)'s when both
      // boxes lie wholly inside x's columns (their rows are the same).
      CHECK(b.on.cta_classes_unused.empty());
      const auto opt = classes_of(b.on, "opt");
      CHECK(!opt.empty());
      std::uint64_t largest = 0;
      for (const auto& k : opt) largest = std::max<std::uint64_t>(largest, k.ctas);
      if (cols >= c.across + 16) CHECK(largest > 1);
      ++runs;
      if (used_classes(b.on)) ++by_classes;
    }
  CHECK(by_classes == runs);
}

TEST_CASE("CTA classes: a TMA box clipped by the tensor's edge keeps its CTA out of an interior class") {
  // tma_pairs_whole: no bounds masks, so the last CTA of a row runs the
  // interior CTAs' instructions with the same outcomes; its box alone
  // reaches a column past x (the zero fill). x has a row more than y: were
  // the last CTA taken into CTA (0,0,0)'s class, its box would be assumed
  // to read the next row's first element, which is what pairs_next_ref
  // adds (a wrong "equivalent"), and not pairs_ref's zero (a wrong
  // difference).
  for (const Sizes& s : std::vector<Sizes>{{}, {{"R", 8}, {"C", 60}}, {{"R", 24}, {"C", 120}}, {{"R", 8}, {"C", 180}}}) {
    for (const auto& [spec, verdict] : std::vector<std::pair<const char*, Outcome>>{
             {"tma_pairs_whole.json", Outcome::Equivalent}, {"tma_pairs_whole_flat.json", Outcome::NotEquivalent}}) {
      const Both b = both(kCases / spec, s);
      INFO(b.what);
      check_agree(b);
      CHECK(b.on.verdict == verdict);
      CHECK(used_classes(b.on));
      // The last column of CTAs stands apart from the others.
      const auto opt = classes_of(b.on, "opt");
      CHECK(opt.size() == 2);
      for (const auto& k : opt) CHECK((k.low.x == k.high.x) == (k.representative.x != 0));
    }
  }
}

TEST_CASE("CTA classes: a TMA map operand that moves with blockIdx runs CTA by CTA") {
  // tma_scale_map_rows loads row of tiles y through maps[y]: the map is
  // another in another CTA, which no renaming of elements describes.
  for (const auto& [spec, verdict] : std::vector<std::pair<const char*, Outcome>>{
           {"tma_map_rows.json", Outcome::Equivalent}, {"tma_map_rows_z.json", Outcome::NotEquivalent}}) {
    const Both b = both(kCases / spec);
    INFO(b.what);
    check_agree(b);
    CHECK(b.on.verdict == verdict);
    CHECK(classes_of(b.on, "opt").empty());
    CHECK(b.on.cta_classes_unused.find("the tensor map of a TMA copy depends on the CTA index") != std::string::npos);
  }
}
