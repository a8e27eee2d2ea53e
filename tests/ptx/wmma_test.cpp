// wmma.load / wmma.mma / wmma.store: a warp computes D = A * B + C over
// 16x16-style tiles. The fragment layout is opaque in the PTX ISA, so the
// evaluator uses its own, the same for all three (docs/evaluator.md).
// Kernels: tests/ptx/wmma_gemm.cu (nvcc 13 PTX in wmma_gemm.ptx).
#include "ptx_helpers.hpp"

using namespace tileverify;
using namespace ptx_test;

namespace {

std::vector<ParamSpec> gemm_params() {
  return {tensor("a", DType::F16, 1024, Role::In), tensor("b", DType::F16, 1024, Role::In),
          tensor("c", DType::F32, 1024, Role::Out)};
}

}  // namespace

TEST_CASE("nvcc's wmma GEMM (f16 in, f32 accumulate, 4 warps, 16x16x16) equals the naive loop GEMM (spec file)") {
  auto spec = load_spec(path_of("wmma_gemm.json"));
  INFO(spec.error);
  REQUIRE(spec.spec.has_value());
  Report r = check_equivalence(*spec.spec);
  INFO(r.text());
  CHECK(outcome_name(r.verdict) == spec.spec->expect);
  CHECK(r.stats.outputs_compared == 1024);
  CHECK(r.stats.proved == 1024);
}

TEST_CASE("wmma through shared memory: row-major B, a column-major store, elementwise scaling of the accumulator") {
  Report r = equiv("wmma_gemm.ptx", "naive_gemm_rowb", "wmma_gemm_smem", 128, gemm_params());
  INFO(r.text());
  CHECK(r.verdict == Outcome::Equivalent);
  // Against the column-major-B loop the layouts disagree: the product is another one.
  Report wrong = equiv("wmma_gemm.ptx", "naive_gemm", "wmma_gemm_smem", 128, gemm_params());
  INFO(wrong.text());
  CHECK(wrong.verdict == Outcome::NotEquivalent);
}

TEST_CASE("tf32 wmma (m16n16k8) with a loaded accumulator equals c += a * b") {
  std::vector<ParamSpec> params = {tensor("a", DType::F32, 256, Role::In), tensor("b", DType::F32, 256, Role::In),
                                   tensor("c", DType::F32, 256, Role::InOut)};
  Report r = equiv("wmma_gemm.ptx", "naive_tf32", "wmma_tf32", 32, params);
  INFO(r.text());
  CHECK(r.verdict == Outcome::Equivalent);
  CHECK(r.stats.outputs_compared == 256);
}

TEST_CASE("wmma needs whole warps, and random schedules give the same outputs") {
  Program p = lower_file("wmma_gemm.ptx", "wmma_gemm");
  ExprContext c;
  SymbolicDomain dom(c);
  auto partial = run_program(p, launch_of(48, gemm_params()), dom);
  REQUIRE(!partial.ok());
  CHECK(partial.diagnostics.back().message.find("full warp") != std::string::npos);
  auto base = run_program(p, launch_of(128, gemm_params()), dom);
  REQUIRE(base.ok());
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    RunOptions o;
    o.random_schedule = seed;
    auto run = run_program(p, launch_of(128, gemm_params()), dom, o);
    REQUIRE(run.ok());
    for (std::size_t i = 0; i < 1024; i += 97) CHECK(*run.outputs.at("c")[i] == *base.outputs.at("c")[i]);
  }
}

TEST_CASE("unsupported wmma shapes and types are errors with file:line:column") {
  const std::string head = ".version 9.0\n.target sm_80\n.address_size 64\n"
                           ".visible .entry k(.param .u64 p)\n{\n  .reg .b32 %r<20>;\n  .reg .f64 %fd<9>;\n"
                           "  .reg .b64 %rd<3>;\n";
  ptx::Error f64 = lower_error_of(
      head + "  wmma.mma.sync.aligned.row.col.m8n8k4.f64.f64.f64.f64 {%fd1, %fd2}, {%fd3}, {%fd4}, {%fd5, %fd6};\n}\n", "k");
  CHECK(f64.loc.line == 9);
  CHECK(f64.loc.column == 3);
  CHECK(f64.message.find("wmma.mma.sync.aligned.row.col.m8n8k4.f64.f64.f64.f64") != std::string::npos);
  ptx::Error s8 = lower_error_of(
      head + "  wmma.load.a.sync.aligned.row.m16n16k16.global.s8 {%r1, %r2}, [%rd1], 16;\n}\n", "k");
  CHECK(s8.message.find("integer") != std::string::npos);
}
