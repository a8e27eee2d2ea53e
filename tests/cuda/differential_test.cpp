// differential_test (include/tileverify/differential.hpp) on example pairs:
// on a machine without a GPU it says so (verdict no_gpu) and the GPU cases
// return early; with one, a correct pair agrees, a wrong one differs, and
// the softmax whose max became a min (equivalent over the reals) is a float
// hazard.
#include "tileverify/differential.hpp"
#include "tileverify/testing.hpp"

#include "tileverify/cuda.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <string>

using namespace tileverify;

namespace {

std::string example(const std::string& rel) {
  return std::string(TILEVERIFY_TEST_DIR) + "/../examples/kernels/" + rel;
}

Spec spec_at(const std::string& path) {
  SpecResult r = load_spec(path);
  INFO(r.error);
  REQUIRE(r.spec.has_value());
  return *r.spec;
}

bool have_gpu() {
  std::string why;
  if (cuda::device_count(&why) == 0) {
    MESSAGE("no GPU (" << why << "): the GPU differential cases do not run");
    return false;
  }
  // gpu_test.cpp's trap case leaves this process's context unusable on
  // purpose (a trap is a sticky error); doctest orders files by their
  // recorded path, which a build may give absolute or relative, so these
  // cases may come after it. Then they cannot run here: say so.
  if (!cuda::Gpu::open(0, &why)) {
    MESSAGE("the GPU cannot be opened (" << why << "; an earlier case trapped on purpose?): run this case alone");
    return false;
  }
  return true;
}

}  // namespace

TEST_CASE("differential: without a GPU the verdict is no_gpu, with the reason, and nothing else happens") {
  if (cuda::device_count() > 0) return;  // the GPU cases below cover this machine
  const DifferentialReport r = differential_test(spec_at(example("softmax/block.json")));
  CHECK(r.verdict == DifferentialVerdict::NoGpu);
  CHECK(r.exit_code() == 3);
  CHECK(r.message.find("nothing ran") != std::string::npos);
  CHECK(r.trials.empty());
}

TEST_CASE("differential: a spec that does not load is an error before any GPU work") {
  Spec s = spec_at(example("softmax/block.json"));
  s.opt->ptx += ".missing";
  const DifferentialReport r = differential_test(s);
  CHECK(r.verdict == DifferentialVerdict::Error);
  CHECK(r.exit_code() == 4);
  CHECK(r.message.find("opt") != std::string::npos);
}

TEST_CASE("gpu: differential runs: agree, differ, and the min-for-max softmax as a float hazard") {
  if (!have_gpu()) return;
  const DifferentialReport agree = differential_test(spec_at(example("softmax/online.json")));
  INFO(agree.text());
  CHECK(agree.verdict == DifferentialVerdict::Agree);
  CHECK(agree.trials.size() == 8);
  const DifferentialReport differ = differential_test(spec_at(example("softmax/online_norescale.json")));
  INFO(differ.text());
  CHECK(differ.verdict == DifferentialVerdict::Differ);
  const DifferentialReport hazard = differential_test(spec_at(example("softmax/block_min.json")));
  INFO(hazard.text());
  CHECK(hazard.verdict == DifferentialVerdict::Hazard);
  CHECK(hazard.message.find("NaN or Inf") != std::string::npos);
  CHECK(hazard.exit_code() == 1);
}

TEST_CASE("gpu: an overflow that the order of a sum explains is no hazard, one that stays is") {
  if (!have_gpu()) return;
  // The GEMM summing K in reverse: with values near FLT_MAX one order's
  // partial sums may overflow where the other's do not; with the extremes
  // scaled down, none does.
  const DifferentialReport order = differential_test(spec_at(example("hazard/gemm_order.json")));
  INFO(order.text());
  CHECK(order.verdict == DifferentialVerdict::Agree);
  for (const DifferentialTrial& t : order.trials)
    if (t.hazards) CHECK(t.hazards_scaled == 0);
  // (x * 2^80) * 2^-80 overflows for |x| >= 2^48 in any order.
  const DifferentialReport real = differential_test(spec_at(example("hazard/copy_rescaled.json")));
  INFO(real.text());
  CHECK(real.verdict == DifferentialVerdict::Hazard);
  CHECK(real.message.find("and still in") != std::string::npos);
}

TEST_CASE("replay: a counterexample of the proof runs on the GPU, or says why it cannot") {
  const Spec s = spec_at(example("softmax/online_norescale.json"));
  const Report proof = check_equivalence(s);
  REQUIRE(proof.verdict == Outcome::NotEquivalent);
  REQUIRE(proof.mismatch.has_value());
  const ReplayReport r = replay_counterexample(s, *proof.mismatch);
  INFO(r.text());
  if (cuda::device_count() == 0) {
    CHECK_FALSE(r.ran);
    CHECK(r.text().find("not replayed") != std::string::npos);
    return;
  }
  CHECK(r.ran);
  CHECK(r.output == proof.mismatch->output);
  CHECK(r.differs);  // the kernels differ in float too, at the element the proof names
  CHECK(r.differing > 0);
}

TEST_CASE("testing.hpp: a verdict other than the expected one fails with both names and the report") {
  const Verification wrong = verify_equivalent(example("softmax/online_norescale.json"));
  CHECK_FALSE(wrong.ok);
  CHECK(wrong.verdict == Outcome::NotEquivalent);
  CHECK(wrong.explanation.rfind("expected equivalent, got not_equivalent\n", 0) == 0);
  CHECK(wrong.explanation.find("first differing output") != std::string::npos);
  const Verification right = verify_verdict(example("softmax/online_norescale.json"), Outcome::NotEquivalent);
  CHECK(right.ok);
  const Verification missing = verify_equivalent(example("softmax/no_such_spec.json"));
  CHECK_FALSE(missing.ok);
  CHECK(missing.explanation.find("does not load") != std::string::npos);
  const Verification gpu = verify_on_gpu(example("softmax/online.json"));
  CHECK(gpu.ok);  // agrees on a GPU; without one, skipped (and ok)
  CHECK(gpu.skipped == (cuda::device_count() == 0));
}

TEST_CASE("gpu: with the exact reference, each kernel's float error is measured against the true values") {
  if (!have_gpu()) return;
  DifferentialOptions o;
  o.exact = true;
  o.trials_per_kind = 1;
  const DifferentialReport r = differential_test(spec_at(example("sized/gemm_tiled.sizes.json")), o);
  INFO(r.text());
  CHECK(r.verdict == DifferentialVerdict::Agree);
  CHECK(r.exact_note.empty());
  REQUIRE(!r.trials.empty());
  REQUIRE(!r.trials[0].outputs.empty());
  const auto& out = r.trials[0].outputs[0];
  REQUIRE(out.ref_exact.has_value());
  REQUIRE(out.opt_exact.has_value());
  CHECK(out.ref_exact->measured == out.comparison.elements);
  CHECK(out.opt_exact->measured == out.comparison.elements);
  CHECK(std::isfinite(out.ref_exact->max_ulps));
  CHECK(out.ref_exact->correctly_rounded > 0);  // some of a 20-term f32 dot product's results are correctly rounded
  CHECK(out.opt_exact->count(oracle::Hazard::NanOutput) == 0);
}

TEST_CASE("gpu: a by-value struct is launched with its fields' bytes: pointers, a symbolic scale, a tensor map") {
  if (!have_gpu()) return;
  const std::string cases = std::string(TILEVERIFY_TEST_DIR) + "/cases/structs/";
  // scale_struct reads its sizes, pointers, alpha and strides from a 40-byte
  // struct; wrong bytes at any field make it differ from scale_ref or fault.
  const DifferentialReport plain = differential_test(spec_at(cases + "scale.json"));
  INFO(plain.text());
  CHECK(plain.verdict == DifferentialVerdict::Agree);
  CHECK(!plain.trials.empty());
  // A CUtensorMap at byte 0 of a 256-byte struct, the output pointer at 128.
  const DifferentialReport tma = differential_test(spec_at(cases + "rows_tma.json"));
  INFO(tma.text());
  CHECK(tma.verdict == DifferentialVerdict::Agree);
  // The struct's m is 4 where the reference's is 2: the rows past 2 differ.
  Spec wrong = spec_at(cases + "scale.json");
  for (ParamSpec& p : wrong.params)
    for (ParamSpec& f : p.fields)
      if (f.name == "m" || f.name == "params.m") f.value = 2;
  const DifferentialReport differ = differential_test(wrong);
  INFO(differ.text());
  CHECK(differ.verdict == DifferentialVerdict::Differ);
}

TEST_CASE("gpu: tensor maps behind a pointer are encoded into a device buffer, map k at byte 128 k") {
  if (!have_gpu()) return;
  const std::string cases = std::string(TILEVERIFY_TEST_DIR) + "/cases/map_pointers/";
  // One map, and the second map of a buffer of two: each agrees with the
  // reference only if the kernel finds the right map at the right byte.
  for (const char* name : {"rows.json", "rows_index1.json", "diff.json"}) {
    const DifferentialReport r = differential_test(spec_at(cases + name));
    INFO(name << "\n" << r.text());
    CHECK(r.verdict == DifferentialVerdict::Agree);
  }
  // The kernel takes the other map of the buffer: the rows of another tensor.
  for (const char* name : {"rows_wrong_index.json", "diff_swapped.json"}) {
    const DifferentialReport r = differential_test(spec_at(cases + name));
    INFO(name << "\n" << r.text());
    CHECK(r.verdict == DifferentialVerdict::Differ);
  }
}
