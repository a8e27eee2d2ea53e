// CUTLASS's f32 -> tf32 rounding before mma.sync .tf32 (src/ptx/lower_tf32.cpp):
// read as x where only tf32 mma operands read the result, left outside the
// model (not_structured at its integer add on float bits) anywhere else.
// Kernels: tests/ptx/tf32_rounding.ptx (hand-written, the form nvcc 13 emits
// for CUTLASS example 14).
#include "ptx_helpers.hpp"

using namespace tileverify;
using namespace ptx_test;

namespace {

Spec tf32_spec(const std::string& opt, bool leak) {
  Spec s;
  s.ref = kernel_spec("tf32_rounding.ptx", "naive_tf32", 128);
  s.opt = kernel_spec("tf32_rounding.ptx", opt, 32);
  auto p = [](const char* n) { return KernelArg{KernelArg::Kind::Param, n}; };
  s.ref->args = std::vector<KernelArg>{p("A"), p("B"), p("D")};
  s.opt->args = leak ? std::vector<KernelArg>{p("A"), p("B"), p("D"), p("E")} : std::vector<KernelArg>{p("A"), p("B"), p("D")};
  s.grid = Dim3{1, 1, 1};
  s.params = {tensor("A", DType::F32, 128, Role::In), tensor("B", DType::F32, 64, Role::In),
              tensor("D", DType::F32, 128, Role::Out)};
  if (leak) s.params.push_back(tensor("E", DType::F32, 32, Role::Out));
  s.path = "test";
  return s;
}

}  // namespace

TEST_CASE("CUTLASS's tf32 rounding of mma operands (bits + 4096 unless infinite) is the operand itself over the reals") {
  Report r = check_equivalence(tf32_spec("tf32_rounded", false));
  INFO(r.text());
  CHECK(r.verdict == Outcome::Equivalent);
  CHECK(r.stats.outputs_compared == 128);
}

TEST_CASE("the same rounding whose result is also stored as a float stays outside the model, at the add") {
  Spec s = tf32_spec("tf32_rounded_leak", true);
  s.ref = s.opt;  // check runs ref alone
  s.opt.reset();
  Report r = check(s);
  INFO(r.text());
  CHECK(r.verdict == Outcome::Unsupported);
  REQUIRE(!r.diagnostics.empty());
  CHECK(r.diagnostics.back().loc.line == 118);  // add.s32 %r30, %r10, 4096 of the leaking kernel
}
