// call to a .func: inlined at the call site with fresh registers and labels
// per instance, arguments and results through the .param slots both sides
// name. Kernels: tests/ptx/calls.cu (nvcc 13 PTX in calls.ptx) and PTX below.
#include "ptx_helpers.hpp"

#include "tileverify/decide.hpp"

using namespace tileverify;
using namespace ptx_test;

namespace {

const char* kHeader = ".version 9.0\n.target sm_80\n.address_size 64\n";

std::vector<ParamSpec> calls_params() {
  return {tensor("x", DType::F32, 32, Role::In), tensor("w", DType::F32, 8, Role::In),
          tensor("y", DType::F32, 8, Role::Out), tensor("z", DType::F32, 8, Role::Out)};
}

// sum_n has a loop (labels) and is inlined three times: the ABI form, a
// predicated call, and the form with register arguments and results.
const std::string kLoops = std::string(kHeader) + R"(
.func (.param .b32 sum_ret) sum_n(.param .b64 sum_p, .param .b32 sum_count)
{
  .reg .pred %p<2>;
  .reg .b32 %r<3>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [sum_p];
  ld.param.u32 %r1, [sum_count];
  mov.f32 %f1, 0f00000000;
  mov.u32 %r2, 0;
$L_loop:
  ld.global.f32 %f2, [%rd1];
  add.f32 %f1, %f1, %f2;
  add.s64 %rd1, %rd1, 4;
  add.s32 %r2, %r2, 1;
  setp.lt.s32 %p1, %r2, %r1;
  @%p1 bra $L_loop;
  st.param.f32 [sum_ret+0], %f1;
  ret;
}
.visible .entry sums(.param .u64 p_x, .param .u64 p_y)
{
  .reg .pred %p<2>;
  .reg .b32 %r<2>;
  .reg .f32 %f<6>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [p_x];
  ld.param.u64 %rd2, [p_y];
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mov.u32 %r1, %tid.x;
  setp.eq.u32 %p1, %r1, 0;
  mov.f32 %f3, 0f00000000;
  {
  .param .b64 param0;
  st.param.b64 [param0+0], %rd3;
  .param .b32 param1;
  st.param.b32 [param1+0], 4;
  .param .b32 retval0;
  call.uni (retval0), sum_n, (param0, param1);
  ld.param.f32 %f1, [retval0+0];
  }
  {
  .param .b64 param0;
  st.param.b64 [param0+0], %rd3;
  .param .b32 param1;
  st.param.b32 [param1+0], 2;
  .param .b32 retval0;
  @%p1 call.uni (retval0), sum_n, (param0, param1);
  @%p1 ld.param.f32 %f3, [retval0+0];
  }
  call.uni (%f4), sum_n, (%rd3, 3);
  add.f32 %f5, %f1, %f3;
  add.f32 %f5, %f5, %f4;
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd5, %rd4, %rd5;
  st.global.f32 [%rd5], %f5;
  ret;
}
)";

}  // namespace

TEST_CASE("nvcc's call sequences (nested calls, results, pointer arguments) inline to the plain kernel") {
  Report r = equiv("calls.ptx", "calls_ref", "calls", 8, calls_params());
  INFO(r.text());
  CHECK(r.verdict == Outcome::Equivalent);
  CHECK(r.stats.outputs_compared == 16);  // y and z: z is written by the callee through a pointer
  Report some = equiv("calls.ptx", "calls_some_ref", "calls_some", 8, calls_params());
  INFO(some.text());
  CHECK(some.verdict == Outcome::Equivalent);
}

TEST_CASE("each inlined instance has its own registers and labels, also in predicated and register-argument calls") {
  auto parsed = ptx::parse_ptx(kLoops, "loops.ptx");
  INFO((parsed.error ? parsed.error->text() : ""));
  REQUIRE(parsed.module.has_value());
  auto lowered = ptx::lower_kernel(*parsed.module, "sums");
  INFO((lowered.error ? lowered.error->text() : ""));
  REQUIRE(lowered.program.has_value());
  const Program& p = *lowered.program;
  // Three instances of sum_n's registers.
  int instances = 0;
  for (const RegisterDecl& r : p.registers) instances += r.name.find(":%f1") != std::string::npos;
  CHECK(instances == 3);

  ConcreteDomain dom;
  dom.inputs["x"] = {1, 2, 4, 8, 16, 32, 64, 128};
  Launch l = launch_of(4, {tensor("x", DType::F32, 8, Role::In), tensor("y", DType::F32, 4, Role::Out)});
  auto run = run_program(p, l, dom);
  INFO((run.ok() ? "" : run.diagnostics[0].text()));
  REQUIRE(run.ok());
  // sum of 4, plus (thread 0 only) the sum of 2, plus the sum of 3.
  CHECK(*run.outputs.at("y")[0] == doctest::Approx(15 + 3 + 7));
  for (std::size_t t = 1; t < 4; ++t) CHECK(*run.outputs.at("y")[t] == doctest::Approx(15 + 7));
}

TEST_CASE("recursion, external functions, indirect calls and wrong arity are clear errors") {
  SUBCASE("recursion (nvcc's PTX for a recursive __device__ function)") {
    auto parsed = ptx::parse_ptx_file(path_of("calls.ptx"));
    REQUIRE(parsed.module.has_value());
    auto l = ptx::lower_kernel(*parsed.module, "recursive");
    if (l.program && !l.error) l.error = ptx::first_unsupported(*l.program);  // kept in the code
    REQUIRE(l.error.has_value());
    CHECK(l.error->message.find("recursive call to '_Z4factfi'") != std::string::npos);
    CHECK(l.error->loc.line == 102);
    CHECK(l.error->loc.column == 2);
    CHECK(l.error->loc.file.find("calls.ptx") != std::string::npos);
  }
  const std::string decls = std::string(kHeader) +
                            ".extern .func (.param .b32 func_retval0) vprintf(.param .b64 vprintf_param_0, .param .b64 "
                            "vprintf_param_1);\n"
                            ".func (.param .b32 r) one(.param .b32 a)\n{\n  .reg .b32 %q<2>;\n  ld.param.b32 %q1, [a];\n"
                            "  st.param.b32 [r+0], %q1;\n  ret;\n}\n";
  auto kernel = [&](const std::string& body) {
    return decls + ".visible .entry k()\n{\n  .reg .b32 %r<3>;\n  .reg .b64 %rd<3>;\n" + body + "\n  ret;\n}\n";
  };
  SUBCASE("a function without a body here") {
    ptx::Error e = lower_error_of(kernel("  {\n  .param .b64 param0;\n  st.param.b64 [param0+0], %rd1;\n  .param .b64 param1;\n"
                                         "  st.param.b64 [param1+0], %rd2;\n  .param .b32 retval0;\n"
                                         "  call.uni (retval0), vprintf, (param0, param1);\n  }"),
                                  "k");
    CHECK(e.message.find("'vprintf'") != std::string::npos);
    CHECK(e.message.find("not in this file") != std::string::npos);
    CHECK(e.loc.line == 22);
    CHECK(e.loc.column == 23);
  }
  SUBCASE("an indirect call through a prototype") {
    ptx::Error e = lower_error_of(
        kernel("  prototype_0 : .callprototype (.param .b32 _) _ (.param .b32 _);\n  {\n  .param .b32 param0;\n"
               "  .param .b32 retval0;\n  call (retval0), %rd1, (param0), prototype_0;\n  }"),
        "k");
    CHECK(e.message.find("an indirect call (through '%rd1' with the prototype 'prototype_0')") != std::string::npos);
    CHECK(e.message.find("function pointers") != std::string::npos);
    CHECK(e.unsupported);
    CHECK(e.loc.line == 20);
  }
  SUBCASE("the wrong number of arguments") {
    ptx::Error e = lower_error_of(kernel("  {\n  .param .b32 retval0;\n  call.uni (retval0), one, ();\n  }"), "k");
    CHECK(e.message.find("with 0 arguments") != std::string::npos);
  }
}
