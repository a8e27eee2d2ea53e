// A kernel author's unit test with tileverify (include/tileverify/testing.hpp):
// the online softmax must stay equivalent to the naive one, a known bug must
// stay caught, and on a machine with a GPU the kernels must agree in float.
// The specs are examples/kernels/softmax's; a project keeps its own next to
// its kernels and regenerates their PTX in its build.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "tileverify/testing.hpp"

#include <string>

namespace {

std::string spec(const std::string& name) { return std::string(SOFTMAX_SPECS) + "/" + name; }

}  // namespace

TEST_CASE("the online softmax is the naive one, for every input and schedule") {
  const tileverify::Verification v = tileverify::verify_equivalent(spec("online.json"));
  CHECK_MESSAGE(v.ok, v.explanation);
}

TEST_CASE("the online softmax without the rescale is still caught") {
  const tileverify::Verification v = tileverify::verify_verdict(spec("online_norescale.json"), tileverify::Outcome::NotEquivalent);
  CHECK_MESSAGE(v.ok, v.explanation);
}

TEST_CASE("the unsynchronized naive softmax is a race") {
  const tileverify::Verification v = tileverify::verify_verdict(spec("naive_nosync.json"), tileverify::Outcome::Race);
  CHECK_MESSAGE(v.ok, v.explanation);
}

TEST_CASE("on the GPU the online softmax agrees with the naive one in float") {
  const tileverify::Verification v = tileverify::verify_on_gpu(spec("online.json"));
  if (v.skipped) MESSAGE("skipped: " << v.explanation);
  CHECK_MESSAGE(v.ok, v.explanation);
}
