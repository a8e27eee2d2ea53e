// What real third-party kernels bring that the other fixtures lack: debug
// information (-lineinfo, -G) whose .loc lines name the CUDA source line in
// reports, warpSize (WARP_SZ), assert() and __trap(), packed f16x2 / bf16x2
// conversions and 32-bit moves of half data, and extern __shared__ arrays that
// only some kernels of a file use. Kernels: tests/ptx/lineinfo.cu (lineinfo.ptx
// with -lineinfo, lineinfo_debug.ptx with -G), assert.cu, pack_half2.cu,
// dyn_shared.cu, and PTX below for the forms nvcc 13 does not emit here.
#include "ptx_helpers.hpp"

#include "tileverify/decide.hpp"

using namespace tileverify;
using namespace ptx_test;

namespace {

const char* kHeader = ".version 9.0\n.target sm_80\n.address_size 64\n";

std::vector<ParamSpec> x_y(std::uint64_t n) {
  return {tensor("x", DType::F32, n, Role::In), tensor("y", DType::F32, n, Role::Out)};
}

std::vector<ParamSpec> x_y_n(std::uint64_t n, std::int64_t bound) {
  return {tensor("x", DType::F32, n, Role::In), tensor("y", DType::F32, n, Role::Out), scalar("n", bound)};
}

ptx::Module parse_text(const std::string& text, const std::string& file = "t.ptx") {
  auto r = ptx::parse_ptx(text, file);
  INFO((r.error ? r.error->text() : std::string()));
  REQUIRE(r.module.has_value());
  return *r.module;
}

ptx::Error parse_error_of(const std::string& text) {
  auto r = ptx::parse_ptx(text, "bad.ptx");
  REQUIRE(r.error.has_value());
  return *r.error;
}

// Spec of one kernel (check) or two (equiv) of tests/ptx files, with dynamic shared sizes.
Spec spec_of(const std::string& file, const std::string& ref, std::uint64_t ref_dyn, const std::string& opt,
             std::uint64_t opt_dyn, std::uint32_t block, const std::vector<ParamSpec>& params) {
  Spec s;
  s.ref = kernel_spec(file, ref, block);
  s.ref->dynamic_shared = ref_dyn;
  if (!opt.empty()) {
    s.opt = kernel_spec(file, opt, block);
    s.opt->dynamic_shared = opt_dyn;
  }
  s.grid = Dim3{1, 1, 1};
  s.params = params;
  s.path = "test";
  return s;
}

}  // namespace

// ---------------------------------------------------------------- debug information

TEST_CASE("-lineinfo PTX parses, and a race names the .cu line of both accesses") {
  auto parsed = ptx::parse_ptx_file(path_of("lineinfo.ptx"));
  INFO((parsed.error ? parsed.error->text() : std::string()));
  REQUIRE(parsed.module.has_value());
  REQUIRE(parsed.module->files.count(1));
  CHECK(parsed.module->files.at(1).find("lineinfo.cu") != std::string::npos);

  Report r = check("lineinfo.ptx", "racy_tile", 64, x_y(64));
  INFO(r.text());
  REQUIRE(r.verdict == Outcome::Race);
  const Diagnostic& d = r.diagnostics.at(0);
  REQUIRE(d.accesses.size() == 2);
  CHECK(d.accesses[0].loc.line == 52);  // the ld.shared of buf[(t + 1) % 64]
  CHECK(d.accesses[0].loc.source == "lineinfo.cu:11");
  CHECK(d.accesses[1].loc.line == 42);  // the st.shared of buf[t]
  CHECK(d.accesses[1].loc.source == "lineinfo.cu:10");
  CHECK(d.loc.source == "lineinfo.cu:10");
  // The text names both files; the JSON keeps "location" as it was and adds "source".
  CHECK(r.text().find("lineinfo.ptx:52:2 (lineinfo.cu:11): ld.shared.f32") != std::string::npos);
  CHECK(r.text().find("lineinfo.ptx:42:2 (lineinfo.cu:10): st.shared.f32") != std::string::npos);
  const std::string json = r.json();
  CHECK(json.find("\"source\": \"lineinfo.cu:11\"") != std::string::npos);
  CHECK(json.find("\"location\": \"" + path_of("lineinfo.ptx") + ":52:2\"") != std::string::npos);
}

TEST_CASE("-G PTX (DWARF .section blocks, generic accesses) parses and reports .cu lines too") {
  Report r = check("lineinfo_debug.ptx", "racy_tile", 64, x_y(64));
  INFO(r.text());
  REQUIRE(r.verdict == Outcome::Race);
  const Diagnostic& d = r.diagnostics.at(0);
  REQUIRE(d.accesses.size() == 2);
  CHECK(d.accesses[0].loc.line == 57);
  CHECK(d.accesses[0].loc.source == "lineinfo.cu:11");
  CHECK(d.accesses[1].loc.line == 50);
  CHECK(d.accesses[1].loc.source == "lineinfo.cu:10");

  Report eq = equiv("lineinfo_debug.ptx", "warp_size_ref", "warp_size", 64, x_y(64));
  INFO(eq.text());
  CHECK(eq.verdict == Outcome::Equivalent);
}

TEST_CASE(".file with a timestamp and size, .loc with function_name / inlined_at, .section .debug_str") {
  const std::string text = std::string(kHeader) + R"(
.visible .entry k(.param .u64 k_x)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<2>;
  .loc 2 7 0
  ld.param.u64 %rd1, [k_x];
  .loc 1 5 3, function_name $L__info_string0, inlined_at 2 12 5
  mov.u32 %r1, %tid.x;
  .loc 2 13 1
  frobnicate.b32 %r2, %r1;
  ret;
}
.visible .entry plain()
{
  ret;
}
  .file 1 "/home/u/include/helpers.cuh", 1700000000, 1234
  .file 2 "C:\work\k.cu"
  .section .debug_str
  {
$L__info_string0:
.b8 95,90,51,115,113,114,102,0
  }
  .section .debug_abbrev {
.b8 1, 17, {0}
  }
)";
  ptx::Module m = parse_text(text, "k.ptx");
  CHECK(m.files.at(1) == "/home/u/include/helpers.cuh");
  CHECK(m.files.at(2) == "C:\\work\\k.cu");
  const ptx::Kernel& k = *m.find("k");
  REQUIRE(k.body.size() == 4);  // .loc lines are not instructions (they once swallowed the next one)
  CHECK(k.body[0].instr.loc.source == "k.cu:7");
  // Code inlined from a header names the header's line and the call's.
  CHECK(k.body[1].instr.loc.source == "helpers.cuh:5, inlined at k.cu:12");
  CHECK(k.body[1].instr.inlined_file == 2);
  CHECK(k.body[1].instr.inlined_line == 12);
  CHECK(k.body[1].instr.debug_line == 5);
  CHECK(k.body[1].instr.debug_column == 3);
  CHECK(k.body[3].instr.loc.source == "k.cu:13");  // a .loc holds until the next one
  CHECK(m.find("plain")->body[0].instr.loc.source.empty());
  // A lowering error names both places.
  auto l = ptx::lower_kernel(m, "k");
  if (l.program && !l.error) l.error = ptx::first_unsupported(*l.program);  // kept in the code
  REQUIRE(l.error.has_value());
  CHECK(l.error->text().rfind("k.ptx:14:3 (k.cu:13): error: unsupported instruction 'frobnicate.b32'", 0) == 0);
}

TEST_CASE("malformed debug directives are clear errors with line and column") {
  SUBCASE("a .loc without a line") {
    auto e = parse_error_of(std::string(kHeader) + ".visible .entry k()\n{\n  .loc 1\n  ret;\n}\n");
    CHECK(e.message.find("'.loc' needs a line number") != std::string::npos);
    CHECK(e.loc.line == 6);
  }
  SUBCASE("a .file without a name") {
    auto e = parse_error_of(std::string(kHeader) + ".file 1\n");
    CHECK(e.message.find("expected a quoted file name after '.file 1'") != std::string::npos);
    CHECK(e.loc.line == 4);
  }
  SUBCASE("a .section that is never closed") {
    auto e = parse_error_of(std::string(kHeader) + ".section .debug_info\n{\n.b8 1\n");
    CHECK(e.message.find("unbalanced braces: the section '.debug_info'") != std::string::npos);
    CHECK(e.loc.line == 5);
    CHECK(e.loc.column == 1);
  }
}

// ---------------------------------------------------------------- warpSize

TEST_CASE("warpSize (WARP_SZ) is the constant 32, moved or as an operand") {
  Report r = equiv("lineinfo.ptx", "warp_size_ref", "warp_size", 64, x_y(64));
  INFO(r.text());
  CHECK(r.verdict == Outcome::Equivalent);

  const std::string text = std::string(kHeader) + R"(
.visible .entry k(.param .u64 k_x, .param .u64 k_y)
{
  .reg .b32 %r<4>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [k_x];
  ld.param.u64 %rd2, [k_y];
  mov.u32 %r1, %tid.x;
  rem.u32 %r2, %r1, WARP_SZ;
  mul.wide.u32 %rd3, %r2, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.f32 %f1, [%rd4];
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd5, %rd2, %rd3;
  st.global.f32 [%rd5], %f1;
  ret;
}
.visible .entry bad()
{
  mov.u32 WARP_SZ, 1;
  ret;
}
)";
  ptx::Module m = parse_text(text);
  auto l = ptx::lower_kernel(m, "k");
  INFO((l.error ? l.error->text() : std::string()));
  REQUIRE(l.program.has_value());
  ConcreteDomain dom;
  dom.inputs["x"] = std::vector<double>(64);
  for (std::size_t i = 0; i < 64; ++i) dom.inputs["x"][i] = double(i);
  auto run = run_program(*l.program, launch_of(64, x_y(64)), dom);
  REQUIRE(run.ok());
  CHECK(*run.outputs.at("y")[40] == doctest::Approx(8));  // x[40 % 32]
  auto bad = ptx::lower_kernel(m, "bad");
  REQUIRE(bad.error.has_value());
  CHECK(bad.error->message.find("'WARP_SZ' is not a declared register") != std::string::npos);
}

// ---------------------------------------------------------------- assert and trap

TEST_CASE("an assert() that holds does not change the verdict") {
  Report ok = check("assert.ptx", "checked_double", 64, x_y_n(64, 64));
  INFO(ok.text());
  CHECK(ok.verdict == Outcome::Ok);
  Report eq = equiv("assert.ptx", "plain_double", "checked_double", 64, x_y_n(64, 64));
  INFO(eq.text());
  CHECK(eq.verdict == Outcome::Equivalent);
  CHECK(eq.stats.proved == 64);
  // In a .func too (the call is inlined, the assert branched around).
  Report in_func = check("assert.ptx", "checked_in_func", 64, x_y_n(64, 100));
  INFO(in_func.text());
  CHECK(in_func.verdict == Outcome::Ok);
}

TEST_CASE("a failed assert() is a trap: the message, file, line and function, and the .cu line") {
  Report r = check("assert.ptx", "checked_double", 64, x_y_n(64, 40));
  INFO(r.text());
  REQUIRE(r.verdict == Outcome::Trap);
  CHECK(r.exit_code() == 2);
  CHECK(std::string(outcome_name(r.verdict)) == "trap");
  const Diagnostic& d = r.diagnostics.at(0);
  CHECK(d.kind == DiagKind::Trap);
  CHECK(std::string(diag_kind_name(d.kind)) == "trap");
  CHECK(d.message.find("assertion `t < n` failed (assert.cu:10, in void checked_double(const float *, float *, int))") !=
        std::string::npos);
  CHECK(d.threads == std::vector<std::uint32_t>{40});  // the first thread with t >= 40
  CHECK(d.loc.line == 124);                           // the call to __assertfail
  CHECK(d.loc.source == "assert.cu:10");
  CHECK(r.text().find("UNSAFE (trap)") != std::string::npos);
  CHECK(r.json().find("\"verdict\": \"trap\"") != std::string::npos);

  // An equivalence check with a kernel that traps is unsafe too.
  Report eq = equiv("assert.ptx", "plain_double", "checked_double", 64, x_y_n(64, 40));
  CHECK(eq.verdict == Outcome::Trap);

  // In a .func: its own message, line and function.
  Report f = check("assert.ptx", "checked_in_func", 64, x_y_n(64, 64));
  INFO(f.text());
  REQUIRE(f.verdict == Outcome::Trap);
  CHECK(f.diagnostics.at(0).message.find("assertion `i >= 0 && i < n` failed (assert.cu:20, in void check_index(int, int))") !=
        std::string::npos);
  CHECK(f.diagnostics.at(0).threads == std::vector<std::uint32_t>{60});
  CHECK(f.diagnostics.at(0).loc.source == "assert.cu:20");
}

TEST_CASE("__trap() is a trap where a thread reaches it") {
  Report r = check("assert.ptx", "traps", 64, x_y_n(64, 64));
  INFO(r.text());
  REQUIRE(r.verdict == Outcome::Trap);
  const Diagnostic& d = r.diagnostics.at(0);
  CHECK(d.message.find("trap instruction") != std::string::npos);
  CHECK(d.threads == std::vector<std::uint32_t>{5});
  CHECK(d.loc.line == 262);
  CHECK(d.loc.source == "assert.cu:31");
  Report fine = check("assert.ptx", "traps", 4, x_y_n(4, 4));  // thread 5 does not exist
  CHECK(fine.verdict == Outcome::Ok);
}

TEST_CASE("assert() as nvcc -G emits it (through a __assert_fail wrapper), and $ names everywhere") {
  // The -G call chain: kernel -> __assert_fail (a .func of the file) -> __assertfail.
  const std::string text = std::string(kHeader) + R"(
.func __assert_fail(.param .b64 __assert_fail_param_0, .param .b64 __assert_fail_param_1,
                    .param .b32 __assert_fail_param_2, .param .b64 __assert_fail_param_3);
.extern .func __assertfail(.param .b64 p0, .param .b64 p1, .param .b32 p2, .param .b64 p3, .param .b64 p4);
.global .align 1 .b8 $str[6] = {116, 32, 60, 32, 50};
.global .align 1 .b8 $str$1[5] = {107, 46, 99, 117};
.visible .entry k(.param .u64 k_y)
{
  .reg .pred $p<2>;
  .reg .b32 $r<3>;
  .reg .b64 %rd<4>;
  .loc 1 3 2
  mov.u32 $r1, %tid.x;
  ld.global.u8 $r2, [$str+2];
  setp.lt.u32 $p1, $r1, $r2;
  @$p1 bra $L__ok;
  .loc 1 4 2
  mov.u64 %rd1, $str;
  cvta.global.u64 %rd2, %rd1;
  mov.u64 %rd3, $str$1;
  {
  .param .b64 param0;
  st.param.b64 [param0+0], %rd2;
  .param .b64 param1;
  st.param.b64 [param1+0], %rd3;
  .param .b32 param2;
  st.param.b32 [param2+0], 4;
  .param .b64 param3;
  st.param.b64 [param3+0], 0;
  call.uni __assert_fail, (param0, param1, param2, param3);
  }
$L__ok:
  ret;
}
.func __assert_fail(.param .b64 __assert_fail_param_0, .param .b64 __assert_fail_param_1,
                    .param .b32 __assert_fail_param_2, .param .b64 __assert_fail_param_3)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [__assert_fail_param_0];
  ld.param.u64 %rd2, [__assert_fail_param_1];
  ld.param.u32 %r1, [__assert_fail_param_2];
  ld.param.u64 %rd3, [__assert_fail_param_3];
  {
  .param .b64 param0;
  st.param.b64 [param0+0], %rd1;
  .param .b64 param1;
  st.param.b64 [param1+0], %rd2;
  .param .b32 param2;
  st.param.b32 [param2+0], %r1;
  .param .b64 param3;
  st.param.b64 [param3+0], %rd3;
  .param .b64 param4;
  st.param.b64 [param4+0], 1;
  call.uni __assertfail, (param0, param1, param2, param3, param4);
  }
  ret;
}
  .file 1 "k.cu"
)";
  ptx::Module m = parse_text(text, "g.ptx");
  auto l = ptx::lower_kernel(m, "k");
  INFO((l.error ? l.error->text() : std::string()));
  REQUIRE(l.program.has_value());
  ExprContext c;
  SymbolicDomain dom(c);
  auto ok = run_program(*l.program, launch_of(32, {tensor("y", DType::F32, 1, Role::Out)}), dom);  // '<' is 60
  CHECK(ok.ok());
  auto trapped = run_program(*l.program, launch_of(64, {tensor("y", DType::F32, 1, Role::Out)}), dom);
  REQUIRE(trapped.diagnostics.size() == 1);
  const Diagnostic& d = trapped.diagnostics[0];
  INFO(d.text());
  CHECK(d.kind == DiagKind::Trap);
  CHECK(d.threads == std::vector<std::uint32_t>{60});
  CHECK(d.message == "assertion `t < 2` failed (k.cu:4)");  // no function name: param3 is 0
  CHECK(d.loc.source == "k.cu:4");  // the wrapper has no .loc of its own: the call's line
}

TEST_CASE("an external call other than assert is still a clear error") {
  const std::string text = std::string(kHeader) + R"(
.extern .func (.param .b32 r) vprintf(.param .b64 a, .param .b64 b);
.visible .entry k()
{
  .reg .b32 %r<2>;
  {
  .param .b64 param0;
  st.param.b64 [param0+0], 0;
  .param .b64 param1;
  st.param.b64 [param1+0], 0;
  .param .b32 retval0;
  call.uni (retval0), vprintf, (param0, param1);
  }
  ret;
}
)";
  auto e = lower_error_of(text, "k");
  CHECK(e.message.find("call to 'vprintf', whose body is not in this file") != std::string::npos);
  CHECK(e.loc.line == 15);
}

// ---------------------------------------------------------------- packed f16x2 / bf16x2

TEST_CASE("cvt.rn.f16x2.f32 and cvt.rn.bf16x2.f32 pack a into the high half and b into the low half") {
  Report h = equiv("pack_half2.ptx", "pack_ref", "pack_half2", 16, x_y(32));
  INFO(h.text());
  CHECK(h.verdict == Outcome::Equivalent);
  Report b = equiv("pack_half2.ptx", "pack_ref", "pack_bf162", 16, x_y(32));  // and __bfloat162float's mov.b32 %f, {0, %h}
  INFO(b.text());
  CHECK(b.verdict == Outcome::Equivalent);
  Report swapped = equiv("pack_half2.ptx", "pack_ref", "pack_half2_swapped", 16, x_y(32));
  INFO(swapped.text());
  CHECK(swapped.verdict == Outcome::NotEquivalent);
}

TEST_CASE("32-bit loads and stores of half data move two elements (half2 stores, uint4 copies through shared memory)") {
  Report st = equiv("pack_half2.ptx", "pack_half_store_ref", "pack_half2_store", 16,
                    {tensor("x", DType::F32, 32, Role::In), tensor("y", DType::F16, 32, Role::Out)});
  INFO(st.text());
  CHECK(st.verdict == Outcome::Equivalent);
  CHECK(st.stats.proved == 32);
  Report cp = equiv("pack_half2.ptx", "copy_ref", "copy_uint4", 4,
                    {tensor("h", DType::F16, 32, Role::In), tensor("y", DType::F16, 32, Role::Out)});
  INFO(cp.text());
  CHECK(cp.verdict == Outcome::Equivalent);
  CHECK(cp.stats.proved == 32);
}

TEST_CASE("cvt .relu on packed and single conversions; other packed forms are clear errors") {
  const std::string text = std::string(kHeader) + R"(
.visible .entry k(.param .u64 k_x, .param .u64 k_y)
{
  .reg .b16 %h<3>;
  .reg .b32 %r<3>;
  .reg .f32 %f<8>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [k_x];
  ld.param.u64 %rd2, [k_y];
  ld.global.f32 %f1, [%rd1];
  ld.global.f32 %f2, [%rd1+4];
  cvt.rn.relu.f16x2.f32 %r1, %f1, %f2;
  mov.b32 {%h1, %h2}, %r1;
  cvt.f32.f16 %f3, %h1;
  cvt.f32.f16 %f4, %h2;
  cvt.rn.relu.f16.f32 %h1, %f1;
  cvt.f32.f16 %f5, %h1;
  st.global.f32 [%rd2], %f3;
  st.global.f32 [%rd2+4], %f4;
  st.global.f32 [%rd2+8], %f5;
  ret;
}
.visible .entry stochastic()
{
  .reg .b32 %r<3>;
  .reg .f32 %f<3>;
  cvt.rs.f16x2.f32 %r1, %f1, %f2, %r2;
  ret;
}
)";
  ptx::Module m = parse_text(text);
  auto l = ptx::lower_kernel(m, "k");
  INFO((l.error ? l.error->text() : std::string()));
  REQUIRE(l.program.has_value());
  ConcreteDomain dom;
  dom.inputs["x"] = {-1.5, 2.5, 0};
  auto run = run_program(*l.program, launch_of(1, {tensor("x", DType::F32, 3, Role::In), tensor("y", DType::F32, 3, Role::Out)}), dom);
  REQUIRE(run.ok());
  CHECK(*run.outputs.at("y")[0] == doctest::Approx(2.5));  // the low half: relu(b)
  CHECK(*run.outputs.at("y")[1] == doctest::Approx(0));    // the high half: relu(a), a = -1.5
  CHECK(*run.outputs.at("y")[2] == doctest::Approx(0));
  auto rs = ptx::lower_kernel(m, "stochastic");
  if (rs.program && !rs.error) rs.error = ptx::first_unsupported(*rs.program);  // kept in the code
  REQUIRE(rs.error.has_value());
  CHECK(rs.error->message.find("'cvt.rs.f16x2.f32' is not supported") != std::string::npos);
  CHECK(rs.error->loc.line == 30);
}

// ---------------------------------------------------------------- dynamic shared memory

TEST_CASE("extern __shared__: only a kernel that uses the array needs \"dynamic_shared\"") {
  auto parsed = ptx::parse_ptx_file(path_of("dyn_shared.ptx"));
  REQUIRE(parsed.module.has_value());
  auto direct = ptx::lower_kernel(*parsed.module, "reverse_direct");  // no size: fine, it never names smem
  INFO((direct.error ? direct.error->text() : std::string()));
  CHECK(direct.program.has_value());
  auto unsized = ptx::lower_kernel(*parsed.module, "reverse_dyn");
  REQUIRE(unsized.error.has_value());
  CHECK(unsized.error->message.find("'smem' is dynamic shared memory") != std::string::npos);
  CHECK(unsized.error->message.find("\"dynamic_shared\"") != std::string::npos);
  CHECK(unsized.error->loc.line == 36);  // where the kernel names it
  auto sized = ptx::lower_kernel(*parsed.module, "reverse_dyn", 256);
  REQUIRE(sized.program.has_value());
  std::size_t shared_buffers = 0;
  for (const BufferDecl& b : sized.program->buffers) shared_buffers += b.name == "smem";
  CHECK(shared_buffers == 1);

  // Through the spec: 0 bytes (or none) for the kernel that does not use it.
  Report r = check_equivalence(spec_of("dyn_shared.ptx", "reverse_direct", 0, "reverse_dyn", 256, 64, x_y(64)));
  INFO(r.text());
  CHECK(r.verdict == Outcome::Equivalent);
  Report missing = check_equivalence(spec_of("dyn_shared.ptx", "reverse_direct", 0, "reverse_dyn", 0, 64, x_y(64)));
  CHECK(missing.verdict == Outcome::Error);
  CHECK(missing.error.find("dynamic shared memory") != std::string::npos);
  Report small = check(spec_of("dyn_shared.ptx", "reverse_dyn", 128, "", 0, 64, x_y(64)));  // 32 floats for 64 threads
  CHECK(small.verdict == Outcome::OutOfBounds);
}

TEST_CASE("the sink '_' in a vector destination drops that half of an unpack (Triton's sm_90 mov.b32 {_, %rs})") {
  // y's pairs are x's pairs with their halves swapped, through two unpacks
  // that each keep one half.
  const std::string text = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p_x, .param .u64 p_y)
{
  .reg .b16 %rs<4>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [p_x];
  ld.param.u64 %rd2, [p_y];
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd6, %rd3, %rd5;
  ld.global.b32 %r2, [%rd6];
  mov.b32 {_, %rs1}, %r2;
  mov.b32 {%rs2, _}, %r2;
  mov.b32 %r3, {%rs1, %rs2};
  add.s64 %rd7, %rd4, %rd5;
  st.global.b32 [%rd7], %r3;
  ret;
}
)";
  tileverify::Program p = ptx_test::lower_text(text);
  tileverify::ConcreteDomain dom;
  std::vector<double> x(64);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = double(i + 1);
  dom.inputs["x"] = x;
  auto run = tileverify::run_program(p,
                                     ptx_test::launch_of(32, {ptx_test::tensor("x", tileverify::DType::F16, 64, tileverify::Role::In),
                                                              ptx_test::tensor("y", tileverify::DType::F16, 64, tileverify::Role::Out)}),
                                     dom);
  INFO((run.ok() ? std::string() : run.diagnostics[0].text()));
  REQUIRE(run.ok());
  const auto& y = run.outputs.at("y");
  for (std::size_t i = 0; i < 64; i += 2) {
    REQUIRE(y[i].has_value());
    REQUIRE(y[i + 1].has_value());
    CHECK(*y[i] == x[i + 1]);
    CHECK(*y[i + 1] == x[i]);
  }
}

// CuTe builds a wgmma descriptor as an integer, splits it into its two
// 32-bit words with mov.b64 {lo, hi}, adds an offset to the low word and
// packs it again: integer words, not a pair of halves.
TEST_CASE("mov.b64 splits a 64-bit integer into its words and packs two words back (CuTe's descriptor arithmetic)") {
  const std::string text = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p_y)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [p_y];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  cvt.u64.u32 %rd3, %r1;
  or.b64 %rd4, %rd3, 4611686568183201792;
  mov.b64 {%r2, %r3}, %rd4;
  shl.b32 %r4, %r1, 4;
  add.s32 %r5, %r2, %r4;
  mov.b64 %rd5, {%r5, %r3};
  mov.b64 {%r6, %r7}, %rd5;
  mul.wide.u32 %rd6, %r1, 8;
  add.s64 %rd7, %rd2, %rd6;
  st.global.v2.u32 [%rd7], {%r6, %r7};
  ret;
}
)";
  tileverify::Program p = ptx_test::lower_text(text);
  tileverify::ConcreteDomain dom;
  auto run = tileverify::run_program(
      p, ptx_test::launch_of(32, {ptx_test::tensor("y", tileverify::DType::U32, 64, tileverify::Role::Out)}), dom);
  INFO((run.ok() ? std::string() : run.diagnostics[0].text()));
  REQUIRE(run.ok());
  const auto& y = run.outputs.at("y");
  const std::uint64_t base = 4611686568183201792ull;  // 0x4000004000000000
  for (std::uint64_t t = 0; t < 32; ++t) {
    const std::uint64_t d = base | t;
    const std::uint64_t lo = ((d & 0xffffffffu) + 16 * t) & 0xffffffffu, hi = d >> 32;
    REQUIRE(y[2 * t].has_value());
    REQUIRE(y[2 * t + 1].has_value());
    CHECK(*y[2 * t] == double(lo));
    CHECK(*y[2 * t + 1] == double(hi));
  }
}

// CUTLASS's epilogue skips reading C when beta == 0: a branch on a
// comparison of a concrete scalar with an immediate. Two known reals compare
// exactly; the branch is the launch's, not a data-dependent one.
TEST_CASE("a float comparison of a concrete scalar with a constant is decided (beta != 0 in an epilogue)") {
  const std::string text = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p_a, .param .u64 p_c, .param .f32 p_beta)
{
  .reg .pred %p<2>;
  .reg .b32 %r<2>;
  .reg .f32 %f<5>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [p_a];
  ld.param.u64 %rd2, [p_c];
  ld.param.f32 %f1, [p_beta];
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd6, %rd3, %rd5;
  add.s64 %rd7, %rd4, %rd5;
  ld.global.f32 %f2, [%rd6];
  setp.neu.f32 %p1, %f1, 0f00000000;
  @!%p1 bra $L_store;
  ld.global.f32 %f3, [%rd7];
  fma.rn.f32 %f2, %f1, %f3, %f2;
$L_store:
  st.global.f32 [%rd7], %f2;
  ret;
}
)";
  tileverify::Program p = ptx_test::lower_text(text);
  for (const std::int64_t beta_bits : {std::int64_t(0), std::int64_t(0x3f800000)}) {
    tileverify::ExprContext ctx;
    tileverify::SymbolicDomain dom(ctx);
    auto a = ptx_test::tensor("a", tileverify::DType::F32, 32, tileverify::Role::In);
    auto c = ptx_test::tensor("c", tileverify::DType::F32, 32, tileverify::Role::InOut);
    tileverify::Launch l = ptx_test::launch_of(32, {a, c});
    l.args.push_back(tileverify::LaunchArg::of_scalar(beta_bits));
    auto run = tileverify::run_program(p, l, dom);
    INFO("beta bits " << beta_bits << ": " << (run.ok() ? std::string() : run.diagnostics[0].text()));
    REQUIRE(run.ok());
    const auto& y = run.outputs.at("c");
    REQUIRE(y[3].has_value());
    const tileverify::Expr want =
        beta_bits == 0 ? ctx.symbol("a", 3) : ctx.add(ctx.symbol("a", 3), ctx.symbol("c", 3));
    CHECK(tileverify::decide_equal(ctx, *y[3], want).proved());
  }
}

// A report quotes the instruction (Program::instr_text): a vector load or
// store must read as the PTX line it comes from, with its .v4 and braces, not
// as a scalar load that happens to write four registers (found on Boehm's
// SGEMM kernel 10, whose float4 loads ran out of bounds at M = 192).
TEST_CASE("the listing of ld.v4 and st.v4 keeps the vector form") {
  const std::string text = R"(.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<6>;
  .reg .b64 %rd<3>;
  .shared .align 16 .b8 tile[64];
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd2];
  mov.u32 %r5, tile;
  st.shared.v4.u32 [%r5+16], {%r1, %r2, %r3, %r4};
  ld.global.v2.u32 {%r1, %r2}, [%rd2+8];
  ld.global.u32 %r3, [%rd2];
  ret;
}
)";
  const tileverify::Program p = ptx_test::lower_text(text);
  const std::string l = p.listing();
  INFO(l);
  CHECK(l.find("ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd2]") != std::string::npos);
  CHECK(l.find("st.shared.v4.u32 [%r5+16], {%r1, %r2, %r3, %r4}") != std::string::npos);
  CHECK(l.find("ld.global.v2.u32 {%r1, %r2}, [%rd2+8]") != std::string::npos);
  CHECK(l.find("ld.global.u32 %r3, [%rd2]") != std::string::npos);
}
