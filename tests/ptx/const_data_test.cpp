// Module data with initializers: .const tables (nvcc's __constant__ arrays
// and scalars) and initialized .global arrays (__device__ data) are buffers
// with known contents. Kernels: tests/ptx/const_data.cu (const_data.ptx).
#include "ptx_helpers.hpp"

#include <algorithm>

using namespace tileverify;
using namespace ptx_test;

namespace {

const char* kHeader = ".version 9.0\n.target sm_80\n.address_size 64\n";

std::vector<ParamSpec> x_y() { return {tensor("x", DType::F32, 8, Role::In), tensor("y", DType::F32, 8, Role::Out)}; }

}  // namespace

TEST_CASE("nvcc's __constant__ float and int tables, a __constant__ scalar and __device__ data read as their values") {
  auto parsed = ptx::parse_ptx_file(path_of("const_data.ptx"));
  REQUIRE(parsed.module.has_value());
  const ptx::VarDecl* offsets = nullptr;
  for (const ptx::VarDecl& v : parsed.module->globals)
    if (v.name == "offsets") offsets = &v;
  REQUIRE(offsets != nullptr);
  CHECK(offsets->has_init);
  REQUIRE(offsets->init.size() == 16);  // nvcc leaves out trailing zeros; the rest of the array is zero
  CHECK(offsets->init[4] == 255);
  CHECK(offsets->init[15] == 0);

  Report r = equiv("const_data.ptx", "tables_ref", "tables", 8, x_y());
  INFO(r.text());
  CHECK(r.verdict == Outcome::Equivalent);
  CHECK(r.stats.outputs_compared == 8);

  Program p = lower_file("const_data.ptx", "tables");
  ConcreteDomain dom;
  dom.inputs["x"] = {1, 1, 1, 1, 1, 1, 1, 1};
  auto run = run_program(p, launch_of(8, x_y()), dom);
  REQUIRE(run.ok());
  // y[1] = x[1] * 2 * 2.5 + 5 + x[0]; y[3] = x[3] * -3 * 2.5 + 4 + x[5].
  CHECK(*run.outputs.at("y")[1] == doctest::Approx(11));
  CHECK(*run.outputs.at("y")[3] == doctest::Approx(-2.5));
}

TEST_CASE("a __constant__ array without an initializer (cudaMemcpyToSymbol) is an input the launch gives") {
  auto parsed = ptx::parse_ptx_file(path_of("const_data.ptx"));
  REQUIRE(parsed.module.has_value());
  auto l = ptx::lower_kernel(*parsed.module, "host_table");
  REQUIRE(l.program.has_value());
  const Program& p = *l.program;
  auto b = std::find_if(p.buffers.begin(), p.buffers.end(), [](const BufferDecl& d) { return d.name == "from_host"; });
  REQUIRE(b != p.buffers.end());
  CHECK(b->from_host);
  ExprContext ctx;
  SymbolicDomain dom(ctx);
  // Not given: a bad launch that names the variable and the spec key.
  auto missing = run_program(p, launch_of(8, x_y()), dom);
  REQUIRE(missing.diagnostics.size() == 1);
  CHECK(missing.diagnostics[0].kind == DiagKind::BadLaunch);
  CHECK(missing.diagnostics[0].message.find("'from_host' is __constant__ data the host fills") != std::string::npos);
  // Given as the tensor w: y[t] = x[t] * w[t % 4].
  Launch given = launch_of(8, x_y());
  given.symbols["from_host"] = TensorArg{"w", DType::F32, {4}, Role::In};
  auto run = run_program(p, given, dom);
  REQUIRE(run.ok());
  CHECK(*run.outputs.at("y")[5] == ctx.mul(ctx.symbol("x", 5), ctx.symbol("w", 1)));
  // A tensor of the wrong size is a bad launch too.
  given.symbols["from_host"] = TensorArg{"w", DType::F32, {8}, Role::In};
  auto wrong = run_program(p, given, dom);
  REQUIRE(!wrong.ok());
  CHECK(wrong.diagnostics[0].message.find("has 16 bytes, but the tensor 'w' given for it has 32") != std::string::npos);
}

TEST_CASE("initializers: f16 tables, 0f floats, two-dimensional arrays, and addresses that are errors only when used") {
  const std::string text = std::string(kHeader) + R"(
.const .align 2 .b16 halves[4] = {15360, 16384, 14336, 48128};
.const .align 4 .f32 grid[2][2] = {{0f3F800000, 0f40000000}, {0f40400000, 0fC0800000}};
.global .align 8 .u64 ptrs[1] = {generic(grid)};
.visible .entry k(.param .u64 p_y)
{
  .reg .b16 %h<2>;
  .reg .b32 %r<3>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p_y];
  cvta.to.global.u64 %rd2, %rd1;
  ld.const.b16 %h1, [halves+6];
  cvt.f32.f16 %f1, %h1;
  ld.const.f32 %f2, [grid+12];
  add.f32 %f3, %f1, %f2;
  st.global.f32 [%rd2], %f3;
  ld.const.v2.f32 {%f1, %f2}, [grid];
  st.global.f32 [%rd2+4], %f1; st.global.f32 [%rd2+8], %f2;
  ret;
}
.visible .entry uses_ptrs(.param .u64 p_y)
{
  .reg .b64 %rd<2>;
  ld.global.u64 %rd1, [ptrs];
  ret;
}
.visible .entry writes_const(.param .u64 p_y)
{
  .reg .b64 %rd<2>;
  .reg .f32 %f<2>;
  mov.u64 %rd1, grid;
  mov.f32 %f1, 0f00000000;
  st.f32 [%rd1], %f1;
  ret;
}
)";
  auto parsed = ptx::parse_ptx(text, "data.ptx");
  INFO((parsed.error ? parsed.error->text() : ""));
  REQUIRE(parsed.module.has_value());
  auto l = ptx::lower_kernel(*parsed.module, "k");
  INFO((l.error ? l.error->text() : ""));
  REQUIRE(l.program.has_value());
  ExprContext c;
  SymbolicDomain dom(c);
  Launch launch = launch_of(1, {tensor("y", DType::F32, 3, Role::Out)});
  auto run = run_program(*l.program, launch, dom);
  INFO((run.ok() ? "" : run.diagnostics[0].text()));
  REQUIRE(run.ok());
  CHECK(c.to_string(*run.outputs.at("y")[0]) == "-5");  // f16 0xBC00 = -1, plus grid[1][1] = -4
  CHECK(c.to_string(*run.outputs.at("y")[1]) == "1");
  CHECK(c.to_string(*run.outputs.at("y")[2]) == "2");

  auto bad = ptx::lower_kernel(*parsed.module, "uses_ptrs");
  if (bad.program && !bad.error) bad.error = ptx::first_unsupported(*bad.program);  // kept in the code
  REQUIRE(bad.error.has_value());
  CHECK(bad.error->message.find("initializer of 'ptrs'") != std::string::npos);
  CHECK(bad.error->loc.line == 28);

  // A generic store into .const data: the evaluator refuses it.
  auto w = ptx::lower_kernel(*parsed.module, "writes_const");
  REQUIRE(w.program.has_value());
  auto wrun = run_program(*w.program, launch, dom);
  REQUIRE(!wrun.ok());
  CHECK(wrun.diagnostics.back().message.find("read-only") != std::string::npos);
}
