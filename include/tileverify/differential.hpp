// tileverify/differential.hpp — running a spec's two kernels on a GPU on
// generated inputs and comparing their outputs (`tileverify test`).
//
// A proof over the reals says nothing about floats: a softmax whose
// stabilising max became a min is the same function over the reals, and
// NaN for inputs of a wide range in float. differential_test runs the
// reference and the optimized kernel of a Spec on the GPU (the whole grid,
// with the spec's launch), on several sets of inputs: "benign" ones (uniform
// and normal around 1) and "stress" ones (large magnitudes, special values),
// and compares each output with the oracles of oracle.hpp. The verdict:
//   Agree   every trial's outputs match within the dtype's tolerance;
//   Differ  a benign trial differs (the kernels compute different things);
//   Hazard  only stress trials differ: equal on ordinary inputs, but the
//           optimized kernel gives NaN, Inf or wrong values where the
//           reference does not (a float hazard);
//   Error   a kernel could not be loaded or launched, or faulted (named);
//   NoGpu   no CUDA driver or device: nothing ran (a skip, not a failure).
// docs/cuda.md describes the trials and the report.
#pragma once

#include "tileverify/equiv.hpp"
#include "tileverify/oracle.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace tileverify {

struct DifferentialOptions {
  std::uint64_t seed = 1;
  unsigned trials_per_kind = 2;  // input sets of each kind (with seeds seed, seed + 1, ...)
  bool stress = true;            // also the stress trials (large magnitudes, special values)
  int device = 0;
  // Per kernel launch: a launch still running then is reported (an
  // example's kernels take milliseconds; a hung pipeline never ends).
  double timeout_seconds = 10;
  // Tolerances per output dtype; none: oracle::default_tolerance.
  std::optional<oracle::Tolerance> tolerance;
  // Also measure both kernels against the exact reference: the reference
  // kernel run symbolically over the whole grid (a spec with "ctas": "all"),
  // its outputs evaluated with MPFR on each trial's inputs, so each kernel's
  // float error is against the true value, not against the other kernel.
  // Costs one symbolic run and an MPFR evaluation of every output per trial.
  bool exact = false;
};

struct DifferentialTrial {
  std::string name;          // "uniform [-1, 1], seed 1"
  bool stress = false;
  std::string error;         // a launch or load error of this trial
  struct Output {
    std::string name;        // the output tensor
    oracle::Comparison comparison;
    // With DifferentialOptions::exact: each kernel against the exact value.
    std::optional<oracle::ExactComparison> ref_exact{}, opt_exact{};
  };
  std::vector<Output> outputs;
  double ref_seconds = 0, opt_seconds = 0;  // kernel times
  // Elements where the optimized kernel gave NaN or Inf and the reference
  // did not; for a special-values trial with some, how many remain when the
  // trial runs again with the largest special values scaled down
  // (oracle::InputSpec::extremes_scaled; -1: not run again). None remaining:
  // an overflow of partial sums, which the order of a sum decides, not
  // counted as a hazard.
  std::uint64_t hazards = 0;
  std::int64_t hazards_scaled = -1;
  bool passed() const;
};

enum class DifferentialVerdict { Agree, Differ, Hazard, Error, NoGpu };
const char* differential_verdict_name(DifferentialVerdict v);  // "agree", "differ", ...

struct DifferentialReport {
  DifferentialVerdict verdict = DifferentialVerdict::Agree;
  std::string message;   // one line: why this verdict
  std::string device;    // "NVIDIA H100 80GB HBM3"
  std::vector<DifferentialTrial> trials;
  std::string exact_note;  // with exact: why there is no exact reference, when there is none
  std::string text() const;  // the human-readable report
  std::string json() const;
  int exit_code() const;     // 0 agree, 1 differ or hazard, 3 no GPU, 4 error
};

// Never throws; every failure is in the report.
DifferentialReport differential_test(const Spec& spec, const DifferentialOptions& options = {});

// A not_equivalent counterexample run on the GPU (`equiv --gpu`): both
// kernels on the counterexample's input values (rounded to each tensor's
// dtype; elements it leaves free are 0), and what each computed in float at
// the differing element, beside the exact values of the proof.
struct ReplayReport {
  bool ran = false;
  std::string error;          // why it did not run (no GPU, a launch error)
  std::string output;         // the differing output and element
  std::uint64_t element = 0;
  double ref_value = 0, opt_value = 0;  // the float outputs there
  bool differs = false;                 // ref_value and opt_value differ beyond the tolerance
  // The mismatch is an element one kernel never writes: no counterexample
  // values, so the run used uniform random inputs (the element stays NaN
  // in the kernel that does not write it).
  bool one_sided = false;
  std::uint64_t elements = 0, differing = 0;  // over the whole output
  std::string device;
  std::string text() const;   // lines for the equivalence report
};
ReplayReport replay_counterexample(const Spec& spec, const Mismatch& mismatch, int device = 0);

}  // namespace tileverify
