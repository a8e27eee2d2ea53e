// The PTX frontend on bad and hostile input: every error is a value with
// file:line:column, classified as bad input (exit 4) or as PTX outside what
// tileverify verifies (exit 3); no input aborts, hangs or allocates what
// its declarations promise before the code uses it.
#include "tileverify/ptx.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <string>

using namespace tileverify;

namespace {

std::string kernel(const std::string& target, const std::string& body, const std::string& before = "") {
  return ".version 8.5\n.target " + target + "\n.address_size 64\n" + before +
         ".visible .entry k(.param .u64 k_param_0)\n{\n" + body + "}\n";
}
std::string kernel(const std::string& body) { return kernel("sm_90", body); }

ptx::Error parse_error(const std::string& text) {
  auto r = ptx::parse_ptx(text, "bad.ptx");
  REQUIRE(r.error.has_value());
  CHECK(!r.module.has_value());
  return *r.error;
}

ptx::LowerResult lower(const std::string& text, std::uint64_t dynamic_shared = 0) {
  auto r = ptx::parse_ptx(text, "bad.ptx");
  INFO((r.error ? r.error->text() : ""));
  REQUIRE(r.module.has_value());
  return ptx::lower_kernel(*r.module, "k", dynamic_shared);
}

ptx::Error lower_error(const std::string& text, std::uint64_t dynamic_shared = 0) {
  auto l = lower(text, dynamic_shared);
  // An unsupported instruction is kept in the code (it stops a run that
  // reaches it): its error is the first one.
  if (l.program && !l.error) l.error = ptx::first_unsupported(*l.program);
  REQUIRE(l.error.has_value());
  // Every error points into the file.
  CHECK(l.error->loc.line > 0);
  CHECK(l.error->loc.column > 0);
  CHECK(l.error->loc.file == std::string("bad.ptx"));
  return *l.error;
}

Program lowered(const std::string& text, std::uint64_t dynamic_shared = 0) {
  auto l = lower(text, dynamic_shared);
  INFO((l.error ? l.error->text() : ""));
  REQUIRE(l.program.has_value());
  return *l.program;
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("a register range costs nothing until its registers are used: %r<2147483647> lowers at once") {
  const auto t0 = std::chrono::steady_clock::now();
  Program p = lowered(kernel("  .reg .b32 %r<2147483647>;\n  .reg .b64 %rd<2147483647>;\n"
                             "  mov.u32 %r2147483646, %tid.x;\n  add.s32 %r7, %r2147483646, 1;\n  ret;\n"));
  CHECK(seconds_since(t0) < 1.0);
  // The Program holds the registers the code uses, not the ones declared.
  REQUIRE(p.registers.size() == 2);
  CHECK(p.registers[0].name == "%r2147483646");
  CHECK(p.registers[0].dtype == DType::B32);
  CHECK(p.registers[1].name == "%r7");
}

TEST_CASE("registers are resolved against their declarations on first use") {
  SUBCASE("a stem ending in a digit: %r1<3> declares %r10 %r11 %r12, next to %r<5>") {
    Program p = lowered(kernel("  .reg .b32 %r<5>;\n  .reg .f32 %r1<3>;\n  mov.f32 %r12, 0f3F800000;\n  mov.u32 %r4, 1;\n  ret;\n"));
    REQUIRE(p.registers.size() == 2);
    CHECK(p.registers[0].name == "%r12");
    CHECK(p.registers[0].dtype == DType::F32);
    CHECK(p.registers[1].dtype == DType::B32);
    auto e = lower_error(kernel("  .reg .b32 %r<5>;\n  .reg .f32 %r1<3>;\n  mov.f32 %r13, 0f3F800000;\n  ret;\n"));
    CHECK(has(e.message, "'%r13' is not a declared register"));
    CHECK(!e.unsupported);
  }
  SUBCASE("numbers are written without leading zeros") {
    auto e = lower_error(kernel("  .reg .b32 %r<5>;\n  mov.u32 %r01, 1;\n  ret;\n"));
    CHECK(has(e.message, "'%r01'"));
    CHECK(e.loc.line == 7);
    CHECK(e.loc.column == 11);
  }
  SUBCASE("a name declared twice (inline asm scopes) is its last declaration") {
    Program p = lowered(kernel("  .reg .b32 %r<8>;\n  .reg .f32 %r<2>;\n  .reg .b16 low;\n  .reg .f16 low;\n"
                               "  mov.u32 %r5, 1;\n  mov.f32 %r1, 0f3F800000;\n  mov.b16 low, 1;\n  ret;\n"));
    REQUIRE(p.registers.size() == 3);
    CHECK(p.registers[0].dtype == DType::B32);  // %r5: only the first range holds it
    CHECK(p.registers[1].dtype == DType::F32);  // %r1: the second range hides the first
    CHECK(p.registers[2].dtype == DType::F16);  // low: the later declaration
  }
  SUBCASE("each inlined instance of a function has its own registers, made as it uses them") {
    Program p = lowered(kernel("sm_90",
                               "  .reg .b32 %r<3>;\n  mov.u32 %r1, 2;\n  call.uni f, (%r1);\n  call.uni f, (%r1);\n  ret;\n",
                               ".func f(.param .b32 a)\n{\n  .reg .b32 %r<1000000>;\n  ld.param.b32 %r999, [a];\n  ret;\n}\n"));
    std::size_t in_f = 0;
    for (const RegisterDecl& r : p.registers) in_f += has(r.name, ":%r999");
    CHECK(in_f == 2);
    CHECK(p.registers.size() < 10);
  }
}

TEST_CASE("lowering a .func, which only a call runs, is bad input naming it") {
  auto r = ptx::parse_ptx(kernel("sm_90", "  ret;\n", ".func f()\n{\n  ret;\n}\n"), "bad.ptx");
  REQUIRE(r.module.has_value());
  auto l = ptx::lower_kernel(*r.module, "f");
  REQUIRE(l.error.has_value());
  CHECK(!l.error->unsupported);
  CHECK(l.error->loc.line == 4);
  CHECK(has(l.error->message, "'f' is a .func, not a kernel"));
}

TEST_CASE("register counts outside 0 .. 2^31-1 are parse errors with their position") {
  for (const char* count : {"-1", "2147483648", "66666666666663", "18446744073709551615"}) {
    INFO(count);
    auto e = parse_error(kernel(std::string("  .reg .b16 %rs<") + count + ">;\n  ret;\n"));
    CHECK(!e.unsupported);
    CHECK(e.loc.line == 6);
    CHECK(e.loc.column == 17);
  }
  auto e = parse_error(kernel("  .reg .b16 %rs<66666666666663>;\n  ret;\n"));
  CHECK(has(e.message, "'%rs<66666666666663>' declares more registers"));
}

TEST_CASE("bad input and unsupported PTX are told apart") {
  SUBCASE("an undeclared register is bad input") {
    auto e = lower_error(kernel("  .reg .b32 %r<2>;\n  add.s32 %r1, %r7, 1;\n  ret;\n"));
    CHECK(!e.unsupported);
    CHECK(e.loc.line == 7);
    CHECK(e.loc.column == 16);
  }
  SUBCASE("an undeclared guard, label or variable is bad input") {
    CHECK(!lower_error(kernel("  @%p1 ret;\n")).unsupported);
    CHECK(!lower_error(kernel("  bra $L__nowhere;\n")).unsupported);
    CHECK(!lower_error(kernel("  .reg .b64 %rd<2>;\n  ld.shared.u64 %rd1, [nothing];\n  ret;\n")).unsupported);
  }
  SUBCASE("wrong operand counts and kinds are bad input") {
    auto e = lower_error(kernel("  .reg .b32 %r<3>;\n  add.s32 %r1, %r2;\n  ret;\n"));
    CHECK(!e.unsupported);
    CHECK(has(e.message, "takes 3 operands, not 2"));
    auto k = lower_error(kernel("  .reg .b32 %r<3>;\n  add.s32 5, %r1, %r2;\n  ret;\n"));
    CHECK(!k.unsupported);
    CHECK(has(k.message, "expected a register here, found a constant"));
    CHECK(!lower_error(kernel("  .reg .b32 %r<3>;\n  ld.global.u32 %r1, %r2;\n  ret;\n")).unsupported);
    CHECK(!lower_error(kernel("  bra 5;\n")).unsupported);
  }
  SUBCASE("a store to .const and an atomic on .local are bad input") {
    CHECK(!lower_error(kernel("  .reg .b64 %rd<2>;\n  st.const.u32 [%rd1], 1;\n  ret;\n")).unsupported);
    CHECK(!lower_error(kernel("  .reg .b64 %rd<2>;\n  .reg .b32 %r<2>;\n  atom.local.add.u32 %r1, [%rd1], 1;\n  ret;\n")).unsupported);
  }
  SUBCASE("an unknown type is bad input; a PTX type tileverify does not model is unsupported") {
    CHECK(!lower_error(kernel("  .reg .b33 %x;\n  ret;\n")).unsupported);
    auto e = lower_error(kernel("  .reg .b128 %x;\n  ret;\n"));
    CHECK(e.unsupported);
    CHECK(has(e.message, ".b128"));
  }
  SUBCASE("valid PTX outside what tileverify verifies is unsupported") {
    CHECK(lower_error(kernel("  .reg .b32 %r<3>;\n  popc.b32 %r1, %r2;\n  ret;\n")).unsupported);
    CHECK(lower_error(kernel("  .reg .b32 %r<3>;\n  .reg .b64 %rd<2>;\n  atom.global.add.noftz.f16x2 %r1, [%rd1], %r2;\n  ret;\n"))
              .unsupported);
    // An extra cache-policy operand is valid PTX, just not modelled.
    auto e = lower_error(kernel("  .reg .b32 %r<3>;\n  .reg .b64 %rd<3>;\n  ld.global.L2::cache_hint.u32 %r1, [%rd1], %rd2;\n  ret;\n"));
    CHECK(e.unsupported);
    CHECK(has(e.message, "cache"));
  }
  SUBCASE("parse errors are bad input; a decimal float is unsupported") {
    CHECK(!parse_error(kernel("  add.s32 %r1, %r2 %r3;\n")).unsupported);
    auto e = parse_error(kernel("  .reg .f32 %f<2>;\n  mov.f32 %f1, 1.5;\n  ret;\n"));
    CHECK(e.unsupported);
    CHECK(e.loc.line == 7);
  }
}

TEST_CASE("static .shared arrays above the 48 KB a CTA can have are bad input, with the guide cited") {
  auto e = lower_error(kernel("  .reg .b32 %r<2>;\n  .shared .align 4 .b8 s[4294967292];\n  mov.u32 %r1, s;\n  ret;\n"));
  CHECK(!e.unsupported);
  CHECK(e.loc.line == 7);
  CHECK(e.loc.column == 3);
  CHECK(has(e.message, "'s' takes 4294967292 bytes of .shared memory"));
  CHECK(has(e.message, "48 KB (49152 bytes) of static shared memory a CTA can have"));
  CHECK(has(e.message, "CUDA C++ Programming Guide"));
  // 48 KB itself is allowed, at module level too.
  lowered(kernel("sm_90", "  .reg .b32 %r<2>;\n  mov.u32 %r1, s;\n  ret;\n", ".shared .align 4 .f32 s[12288];\n"));
  auto m = lower_error(kernel("sm_90", "  ret;\n", ".shared .align 4 .f32 s[12289];\n"));
  CHECK(m.loc.line == 4);
}

TEST_CASE("the .shared arrays a kernel uses count together; the ones it does not, not at all") {
  const std::string arrays = ".shared .align 4 .b8 a[32768];\n.shared .align 4 .b8 b[32768];\n";
  lowered(kernel("sm_90", "  .reg .b32 %r<3>;\n  mov.u32 %r1, a;\n  ret;\n", arrays));
  auto e = lower_error(kernel("sm_90", "  .reg .b32 %r<3>;\n  mov.u32 %r1, a;\n  mov.u32 %r2, b;\n  ret;\n", arrays));
  CHECK(!e.unsupported);
  CHECK(has(e.message, "take 65536 bytes"));
  CHECK(e.loc.line == 6);  // the kernel
}

TEST_CASE("element counts times element sizes are checked for overflow") {
  auto e = lower_error(kernel("  .shared .align 4 .f32 s[4611686018427387905];\n  ret;\n"));
  CHECK(!e.unsupported);
  CHECK(has(e.message, "more bytes than fit in 64 bits"));
  auto p = parse_error(kernel("  .shared .align 4 .b8 s[4294967296][4294967296];\n  ret;\n"));
  CHECK(has(p.message, "more elements than fit in 64 bits"));
  CHECK(p.loc.line == 6);
  auto n = parse_error(kernel("  .shared .align 4 .b8 s[-4];\n  ret;\n"));
  CHECK(has(n.message, "array size"));
  CHECK(n.loc.column == 26);
}

TEST_CASE(".local arrays above the 512 KB a thread can have are bad input") {
  auto e = lower_error(kernel("  .reg .b64 %rd<2>;\n  .local .align 4 .b8 l[576460752303423488];\n  mov.u64 %rd1, l;\n  ret;\n"));
  CHECK(!e.unsupported);
  CHECK(has(e.message, "512 KB (524288 bytes) of local memory a thread can have"));
  lowered(kernel("  .reg .b64 %rd<2>;\n  .local .align 4 .b8 l[524288];\n  mov.u64 %rd1, l;\n  ret;\n"));
  CHECK(!lower_error(kernel("  .reg .b64 %rd<2>;\n  .local .b8 l[];\n  mov.u64 %rd1, l;\n  ret;\n"), 1024).unsupported);
}

TEST_CASE(".const data above the 64 KB of constant memory is bad input where a kernel uses it") {
  const std::string body = "  .reg .b64 %rd<2>;\n  mov.u64 %rd1, c;\n  ret;\n";
  auto e = lower_error(kernel("sm_90", body, ".const .align 4 .b8 c[65537];\n"));
  CHECK(has(e.message, "64 KB (65536 bytes) of constant memory"));
  lowered(kernel("sm_90", body, ".const .align 4 .b8 c[65536] = {1};\n"));
  // Not used: not judged.
  lowered(kernel("sm_90", "  ret;\n", ".const .align 4 .b8 c[65537];\n"));
}

TEST_CASE("dynamic shared memory above the target's maximum is bad input") {
  const std::string body = "  .reg .b32 %r<2>;\n  mov.u32 %r1, d;\n  ret;\n";
  const std::string dyn = ".extern .shared .align 16 .b8 d[];\n";
  struct Case {
    const char* target;
    std::uint64_t most;
  };
  for (const Case& c : {Case{"sm_90", 227 * 1024}, Case{"sm_90a", 227 * 1024}, Case{"sm_80", 163 * 1024},
                        Case{"sm_86", 99 * 1024}, Case{"sm_75", 64 * 1024}, Case{"sm_70", 96 * 1024},
                        Case{"sm_61", 48 * 1024}, Case{"sm_999", 227 * 1024}}) {
    INFO(c.target);
    lowered(kernel(c.target, body, dyn), c.most);
    auto e = lower_error(kernel(c.target, body, dyn), c.most + 1);
    CHECK(!e.unsupported);
    CHECK(has(e.message, std::to_string(c.most) + " bytes) of shared memory a CTA can have"));
    CHECK(e.loc.line == 5);  // the kernel's .entry
  }
  // Also when the kernel does not use it: the launch asks for it.
  auto unused = lower_error(kernel("  ret;\n"), std::uint64_t(1) << 62);
  CHECK(has(unused.message, "4611686018427387904 bytes"));
  CHECK(has(unused.message, "on sm_90"));
  // Static and dynamic together.
  auto both = lower_error(kernel("sm_80", "  .reg .b32 %r<3>;\n  mov.u32 %r1, d;\n  mov.u32 %r2, s;\n  ret;\n",
                                 dyn + ".shared .align 4 .b8 s[49152];\n"),
                          163 * 1024 - 49151);
  CHECK(has(both.message, "49152 bytes of static and"));
}

TEST_CASE("initializers of huge arrays cost what they write, not the array's size") {
  const auto t0 = std::chrono::steady_clock::now();
  auto r = ptx::parse_ptx(kernel("sm_90", "  ret;\n", ".global .align 1 .b8 g[1000000000000] = {1, 2};\n"), "g.ptx");
  CHECK(seconds_since(t0) < 1.0);
  REQUIRE(r.module.has_value());
  const ptx::VarDecl& g = r.module->globals.at(0);
  CHECK(g.elements == 1000000000000ull);
  CHECK(g.init.size() <= (std::size_t(1) << 20));
  CHECK(g.init[1] == 2);
  CHECK(g.init[2] == 0);
  auto over = parse_error(kernel("sm_90", "  ret;\n", ".global .align 8 .u64 g[2305843009213693952] = {1};\n"));
  CHECK(has(over.message, "more bytes than fit in 64 bits"));
}

TEST_CASE("calls: the inlining is bounded in depth and in size") {
  SUBCASE("a chain of functions each calling the next twice") {
    std::string funcs;
    for (int i = 40; i >= 0; --i) {
      funcs += ".func f" + std::to_string(i) + "()\n{\n";
      if (i < 40) funcs += "  call.uni f" + std::to_string(i + 1) + ";\n  call.uni f" + std::to_string(i + 1) + ";\n";
      funcs += "  ret;\n}\n";
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto e = lower_error(kernel("sm_90", "  call.uni f0;\n  ret;\n", funcs));
    CHECK(seconds_since(t0) < 5.0);
    CHECK(e.unsupported);
    CHECK(has(e.message, "statements"));
  }
  SUBCASE("many functions and many calls: a callee is found by an index, not a search") {
    std::string funcs, calls;
    for (int i = 0; i < 10000; ++i) funcs += ".func f" + std::to_string(i) + "()\n{\n  ret;\n}\n";
    for (int i = 0; i < 100000; ++i) calls += "  call.uni f" + std::to_string(i * 7919 % 10000) + ";\n";
    auto r = ptx::parse_ptx(kernel("sm_90", calls + "  ret;\n", funcs), "many.ptx");
    REQUIRE(r.module.has_value());
    const auto t0 = std::chrono::steady_clock::now();
    auto l = ptx::lower_kernel(*r.module, "k");
    // About 0.1 s in a release build (a linear search per call took 3.5 s); the
    // bound only guards against a hang, since sanitizer builds on a loaded
    // machine run many times slower: speed belongs in bench/, not in tests.
    CHECK(seconds_since(t0) < 30.0);
    REQUIRE(l.program.has_value());
    CHECK(l.program->code.size() == 100002);  // per call its ret (a branch to its end); the kernel's ret, and the ret after the end
  }
  SUBCASE("a chain of 100 calls") {
    std::string funcs;
    for (int i = 100; i >= 0; --i) {
      funcs += ".func f" + std::to_string(i) + "()\n{\n";
      if (i < 100) funcs += "  call.uni f" + std::to_string(i + 1) + ";\n";
      funcs += "  ret;\n}\n";
    }
    auto e = lower_error(kernel("sm_90", "  call.uni f0;\n  ret;\n", funcs));
    CHECK(e.unsupported);
    CHECK(has(e.message, "nested more than 64 deep"));
  }
}

TEST_CASE("the parser: deep nesting, extreme literals and stray bytes are errors or values, never a crash") {
  SUBCASE("vector operands nested 10000 deep") {
    auto e = parse_error(kernel("  mov.b32 " + std::string(10000, '{') + "%r1;\n"));
    CHECK(has(e.message, "nested more than"));
    CHECK(e.loc.line == 6);
  }
  SUBCASE("initializer lists nested 10000 deep") {
    auto e = parse_error(kernel("sm_90", "  ret;\n", ".global .b32 g[1] = " + std::string(10000, '{') + "1;\n"));
    CHECK(has(e.message, "nested more than"));
  }
  SUBCASE("-2^63 and offsets that overflow wrap as 64-bit values") {
    auto r = ptx::parse_ptx(kernel("  .reg .b64 %rd<3>;\n  add.s64 %rd1, %rd2, -9223372036854775808;\n"
                                   "  ld.global.u64 %rd1, [%rd2+9223372036854775807+1];\n  ret;\n"),
                            "x.ptx");
    // The second line is malformed (two offsets); the first parses to -2^63.
    REQUIRE(r.error.has_value());
    auto ok = ptx::parse_ptx(kernel("  .reg .b64 %rd<3>;\n  add.s64 %rd1, %rd2, -9223372036854775808;\n"
                                    "  ld.global.u64 %rd1, [%rd2+-9223372036854775808];\n  ret;\n"),
                             "x.ptx");
    REQUIRE(ok.module.has_value());
    const auto& body = ok.module->kernels.at(0).body;
    CHECK(body.at(0).instr.operands[2].value == INT64_MIN);
    CHECK(body.at(1).instr.operands[1].value == INT64_MIN);
  }
  SUBCASE("a NUL or a non-ASCII byte is named by its value") {
    auto e = parse_error(kernel(std::string("  ret;\n  \0;\n", 12)));
    CHECK(has(e.message, "byte 0x00"));
    CHECK(e.loc.line == 7);
    CHECK(e.loc.column == 3);
    CHECK(has(parse_error(kernel("  \xc3\xa9;\n")).message, "byte 0xc3"));
  }
}
