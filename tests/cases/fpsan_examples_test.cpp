// `tileverify fpsan` (check_payloads) on every example pair: equivalent pairs
// give bit-identical payloads, broken ones differ, unsafe ones are reported
// as by `check`. Payload agreement is evidence, never a proof; and the FpSan
// algebra keeps only some identities, so a few equivalent pairs differ (see
// kDiffersByDesign and docs/fpsan.md).
#include "tileverify/equiv.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <set>

namespace fs = std::filesystem;

namespace {

// Equivalent over the reals, but only through x · inv(y) · y = x for a y that
// is a sum of an even number of exponentials: an even payload, whose FpSan
// "inverse" is no inverse (Triton's algebra, kept bit for bit). FA1 and the
// online/block softmaxes normalize by partial sums and multiply them back;
// FA2 and the naive forms divide once, and agree. block_min (block with its
// max turned into a min) is compared with block: the same normalization by
// a sum of exponentials on both sides, shifted by different amounts.
// math/: FpSan tags rsqrt apart from inv(sqrt) (rmsnorm: x / sqrtf against
// x * rsqrtf), log apart from log2 times the float ln 2 (logsoftmax_fastopt:
// logf against the fast-math __logf), and log1p apart from log(1 + x)
// (softplus: log1pf(e^x) against logf(1 + e^x)).
// The layer and RMS norms (examples/kernels/norm) take 1 / sqrt(v) in the
// reference and rsqrt(v) in the block kernels: equal reals, different
// payloads (and sum(x^2)/N - mean^2 is another algebra than the two passes).
// hazard/copy_rescaled: (x * 2^80) * 2^-80 against x, equal through the
// product of the two constants, which FpSan does not fold.
const std::set<std::string> kDiffersByDesign = {"copy_rescaled",
                                                "fa1",
                                                "fa1_tc",
                                                "online",
                                                "block",
                                                "block_min",
                                                "rmsnorm",
                                                "logsoftmax_fastopt",
                                                "softplus",
                                                "layernorm_n300",
                                                "layernorm_n4096",
                                                "layernorm_sumsq_n300",
                                                "layernorm_sumsq_n4096",
                                                "rmsnorm_n300",
                                                "rmsnorm_n4096"};

std::string stem_of(const fs::path& p) {
  std::string s = p.stem().string();  // fa1.fastmath -> fa1
  return s.substr(0, s.find('.'));
}

}  // namespace

TEST_CASE("fpsan: example pairs agree, broken pairs differ, unsafe pairs are reported") {
  fs::path root = fs::path(TILEVERIFY_TEST_DIR).parent_path() / "examples" / "kernels";
  std::vector<fs::path> specs;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.path().extension() == ".json") specs.push_back(e.path());
  std::sort(specs.begin(), specs.end());
  int agree = 0, differ = 0, unsafe = 0;
  for (const fs::path& p : specs) {
    auto loaded = tileverify::load_spec(p.string());
    REQUIRE(loaded.spec.has_value());
    const tileverify::Spec& s = *loaded.spec;
    if (!s.opt || s.expect.empty()) continue;
    const std::string family = p.parent_path().filename().string();
    tileverify::PayloadOptions o;
    // 100 random inputs where a run is cheap; the large tiles (0.2-0.4 s a
    // run on the interpreter) and the whole grids of the scaling family
    // (half of this test's time with 100) get a few in CI, and 100 in
    // docs/fpsan.md.
    o.trials = family == "sgemm" || family == "attention" || family == "scaling" ? 3 : 100;
    tileverify::Report r = tileverify::check_payloads(s, o);
    INFO(p.string() << "\n" << r.text());
    const std::string got = tileverify::outcome_name(r.verdict);
    if (s.expect == "equivalent" && !kDiffersByDesign.count(stem_of(p))) {
      CHECK(got == "payloads_agree");
      CHECK(r.stats.trials == o.trials);
      ++agree;
    } else if (s.expect == "equivalent" || s.expect == "not_equivalent") {
      CHECK(got == "payloads_differ");
      REQUIRE(r.mismatch.has_value());
      CHECK(r.mismatch->why.find("seed") != std::string::npos);
      ++differ;
    } else {
      CHECK(got == s.expect);  // race, deadlock, out_of_bounds, uninitialized
      ++unsafe;
    }
  }
  MESSAGE(agree << " pairs agree, " << differ << " differ, " << unsafe << " unsafe");
  CHECK(agree >= 30);
  CHECK(differ >= 10);
  CHECK(unsafe >= 10);
}

TEST_CASE("fpsan: a differing pair names the element, both payloads and the seed that reproduces it") {
  fs::path dir = fs::path(TILEVERIFY_TEST_DIR) / "cases";
  auto loaded = tileverify::load_spec((dir / "int_scan_inclusive.json").string());
  REQUIRE(loaded.spec.has_value());
  tileverify::PayloadOptions o;
  o.trials = 5;
  o.seed = 42;
  tileverify::Report r = tileverify::check_payloads(*loaded.spec, o);
  REQUIRE(r.verdict == tileverify::Outcome::PayloadsDiffer);
  CHECK(r.exit_code() == 1);
  REQUIRE(r.mismatch.has_value());
  CHECK(r.mismatch->output == "y");
  CHECK(r.mismatch->why.find("--trials 1 --seed 42") != std::string::npos);
  // The same seed alone reproduces it.
  o.trials = 1;
  tileverify::Report again = tileverify::check_payloads(*loaded.spec, o);
  CHECK(again.verdict == tileverify::Outcome::PayloadsDiffer);
  CHECK(again.mismatch->element == r.mismatch->element);
  CHECK(again.mismatch->ref_expr == r.mismatch->ref_expr);
}
