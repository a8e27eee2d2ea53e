// mma.sync with .f16 accumulators and the mixed .f16/.f32 forms (PTX ISA,
// "Warp-level MMA: mma"; fragments "Matrix Fragments for mma.m16n8k16 with
// floating point type"), as CuTe's SM80_16x8x16_F16F16F16F16_TN emits them:
// each kernel of tests/ptx/mma_f16acc.cu against a naive product, and the
// mma forms outside the model refused by name.
#include "ptx_helpers.hpp"

using namespace tileverify;
using namespace ptx_test;

namespace {

// D = A B + C, 16 x K times K x 8, in one warp; the naive kernel with 128 threads.
Report mma_vs_naive(const std::string& kernel, std::uint64_t k) {
  Spec s;
  s.ref = kernel_spec("mma_f16acc.ptx", "naive", 128);
  s.opt = kernel_spec("mma_f16acc.ptx", kernel, 32);
  auto p = [](const char* n) { return KernelArg{KernelArg::Kind::Param, n}; };
  s.ref->args = std::vector<KernelArg>{p("A"), p("B"), p("C"), p("D"), {KernelArg::Kind::Number, std::to_string(k)}};
  s.opt->args = std::vector<KernelArg>{p("A"), p("B"), p("C"), p("D")};
  s.grid = Dim3{1, 1, 1};
  s.params = {tensor("A", DType::F16, 16 * k, Role::In), tensor("B", DType::F16, k * 8, Role::In),
              tensor("C", DType::F16, 128, Role::In), tensor("D", DType::F16, 128, Role::Out)};
  s.path = "test";
  return check_equivalence(s);
}

std::string mma_kernel(const std::string& instr) {
  return ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n"
         "  .reg .b32 %r<40>;\n  .reg .f32 %f<10>;\n  .reg .f64 %fd<10>;\n" +
         instr + "\n  ret;\n}\n";
}

}  // namespace

TEST_CASE("mma.sync m16n8k16 with .f16 C and D (two .f16x2 registers each) is the naive product") {
  Report r = mma_vs_naive("mma_k16_f16", 16);
  INFO(r.text());
  CHECK(r.verdict == Outcome::Equivalent);
  CHECK(r.stats.outputs_compared == 128);
}

TEST_CASE("mma.sync m16n8k8 with .f16 C and D is the naive product") {
  Report r = mma_vs_naive("mma_k8_f16", 8);
  INFO(r.text());
  CHECK(r.verdict == Outcome::Equivalent);
}

TEST_CASE("mma.sync mixes an .f16 C with an .f32 D, and an .f32 C with an .f16 D") {
  Report a = mma_vs_naive("mma_k16_f32_from_f16", 16);
  INFO(a.text());
  CHECK(a.verdict == Outcome::Equivalent);
  Report b = mma_vs_naive("mma_k16_f16_from_f32", 16);
  INFO(b.text());
  CHECK(b.verdict == Outcome::Equivalent);
}

TEST_CASE("the halves of an .f16 D register are elements 2r (low) and 2r + 1 (high): swapping them is caught") {
  Report r = mma_vs_naive("mma_k16_f16_swapped", 16);
  INFO(r.text());
  CHECK(r.verdict == Outcome::NotEquivalent);
}

TEST_CASE("mma.sync forms outside the model are refused by name, and wrong register counts are bad input") {
  const std::string a4 = "{%r1,%r2,%r3,%r4}, {%r5,%r6}";
  struct Case {
    std::string instr, says;
    bool unsupported;
  };
  const Case cases[] = {
      {"mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%r10,%r11,%r12,%r13}, {%r1,%r2}, {%r5}, {%r20,%r21,%r22,%r23};",
       ".s8 x .s8 inputs is not supported", true},
      {"mma.sync.aligned.m16n8k16.row.col.satfinite.s32.s8.s8.s32 {%r10,%r11,%r12,%r13}, {%r1,%r2}, {%r5}, "
       "{%r20,%r21,%r22,%r23};",
       "mma .satfinite is not supported", true},
      {"mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%f1,%f2,%f3,%f4}, " + a4 + ", {%f5,%f6,%f7,%f8};",
       "unsupported mma shape", true},
      {"mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%fd1,%fd2}, {%fd3}, {%fd4}, {%fd5,%fd6};",
       "unsupported mma shape", true},
      {"mma.sync.aligned.m16n8k16.row.col.f16.bf16.bf16.f16 {%r10,%r11}, " + a4 + ", {%r20,%r21};",
       ".bf16 inputs take an .f32 accumulator", false},
      {"mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r10,%r11,%r12,%r13}, " + a4 + ", {%r20,%r21};",
       "operand d must be a {..} list of 2 registers", false},
      {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f16 {%f1,%f2,%f3,%f4}, " + a4 + ", {%f5,%f6,%f7,%f8};",
       "operand c must be a {..} list of 2 registers", false},
  };
  for (const Case& c : cases) {
    ptx::Error e = lower_error_of(mma_kernel("  " + c.instr), "k");
    INFO(c.instr);
    INFO(e.message);
    CHECK(e.message.find(c.says) != std::string::npos);
    CHECK(e.unsupported == c.unsupported);
  }
}
