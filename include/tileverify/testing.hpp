// tileverify/testing.hpp — tileverify in a kernel author's unit tests.
//
// Framework-neutral: each function returns a Verification whose `ok` a test
// asserts and whose `explanation` (the report, or why it was skipped) it
// prints when the assertion fails:
//
//   doctest:     auto v = tileverify::verify_equivalent("softmax.json");
//                CHECK_MESSAGE(v.ok, v.explanation);
//   GoogleTest:  EXPECT_TRUE(v.ok) << v.explanation;
//
// examples/unit_test/softmax_unit_test.cpp is such a test.
#pragma once

#include "tileverify/differential.hpp"
#include "tileverify/equiv.hpp"

#include <string>

namespace tileverify {

struct Verification {
  bool ok = false;
  // Nothing could be checked here (no GPU for a GPU check): ok is true, and a
  // test may report the skip (doctest: MESSAGE, GoogleTest: GTEST_SKIP()).
  bool skipped = false;
  std::string explanation;  // the verdict line, then the whole report
  Outcome verdict = Outcome::Error;  // the proof's, for the proof checks
};

// The spec's kernels are proved equivalent (over the reals, every input,
// every schedule). A spec that does not load is not ok, with the reason.
Verification verify_equivalent(const std::string& spec_path, const DecideLimits& limits = {});

// The check of the spec gives `expected` (a known bug stays found: a
// regression test for the verifier's answer). For a spec with ref and opt
// the equivalence check runs, else the one-kernel check.
Verification verify_verdict(const std::string& spec_path, Outcome expected, const DecideLimits& limits = {});

// The spec's kernels agree on the GPU (tileverify test: ordinary and stress
// inputs); skipped without a GPU.
Verification verify_on_gpu(const std::string& spec_path, const DifferentialOptions& options = {});

}  // namespace tileverify
