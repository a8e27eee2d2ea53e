// Valid PTX outside the structured-CTA class is `unsupported` with a message
// that names the construct and says why, at its file:line:column: a grid sync
// (cooperative groups' %envreg reads), printf (vprintf), function pointers
// and indirect calls, device-side launches, calls to functions of other
// files. Kernels: tests/ptx/outside_class.cu (nvcc -rdc=true), and PTX below
// for the device runtime's functions nvcc 13 reaches only after a kernel's
// address (which fails first).
#include "ptx_helpers.hpp"

#include <fstream>
#include <sstream>

using namespace tileverify;
using namespace ptx_test;

namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The line of tests/ptx/`file` that first contains `needle` after the line
// that opens `.entry kernel(` (1-based), so that the checks below follow a
// regenerated file.
std::uint32_t line_of(const std::string& file, const std::string& kernel, const std::string& needle) {
  std::ifstream in(path_of(file));
  std::string line;
  std::uint32_t n = 0;
  bool inside = false;
  while (std::getline(in, line)) {
    ++n;
    if (has(line, ".entry " + kernel + "(")) inside = true;
    else if (inside && has(line, needle)) return n;
  }
  FAIL("no '" << needle << "' in " << kernel);
  return 0;
}

// The error lowering `kernel` of outside_class.ptx gives.
ptx::Error error_of(const std::string& kernel) {
  auto parsed = ptx::parse_ptx_file(path_of("outside_class.ptx"));
  INFO((parsed.error ? parsed.error->text() : std::string()));
  REQUIRE(parsed.module.has_value());
  auto lowered = ptx::lower_kernel(*parsed.module, kernel);
  // Kept in the code as an Unsupported instruction (it stops a run that reaches it).
  if (lowered.program && !lowered.error) lowered.error = ptx::first_unsupported(*lowered.program);
  REQUIRE(lowered.error.has_value());
  return *lowered.error;
}

const char* kHeader = ".version 9.0\n.target sm_80\n.address_size 64\n";

}  // namespace

TEST_CASE("nvcc's constructs outside the structured-CTA class are unsupported, named, at their line") {
  struct Case {
    const char* kernel;
    const char* at;  // text on the line the error must point to
    std::vector<const char*> says;
  };
  const Case cases[] = {
      {"grid_sync", "%envreg2",
       {"'%envreg2' is an environment register (%envreg0..%envreg31", "cooperative groups' this_grid()", "grid.sync()",
        "outside the structured-CTA class"}},
      {"print", "vprintf",
       {"call to 'vprintf', whose body is not in this file (declared at ", "device-side printf",
        "outside the structured-CTA class", "output goes to the host"}},
      {"function_pointer", "_Z5twicef",
       {"the address of the function '_Z5twicef' (the .func at ", "function pointers and calls through them",
        "outside the structured-CTA class"}},
      {"function_table", "table;",
       {"'table' (at ", "holds the address of the function '_Z5twicef' (a table of function pointers)",
        "outside the structured-CTA class"}},
      {"pointer_parameter", "call (retval0)",
       {"an indirect call (through '%rd1' with the prototype 'prototype_3')", "function pointers",
        "outside the structured-CTA class"}},
      {"launch_child", "child;",
       {"the address of the kernel 'child' (the .entry at ", "dynamic parallelism, kernel<<<...>>> in a kernel",
        "outside the structured-CTA class", "a launch from device code starts another grid"}},
      {"call_elsewhere", "elsewhere,",
       {"call to 'elsewhere', whose body is not in this file (declared at ", "inlines every call"}},
  };
  for (const Case& c : cases) {
    INFO(c.kernel);
    const ptx::Error e = error_of(c.kernel);
    INFO(e.text());
    CHECK(e.unsupported);
    for (const char* s : c.says) CHECK(has(e.message, s));
    CHECK(has(e.loc.file.str(), "outside_class.ptx"));
    CHECK(e.loc.line == line_of("outside_class.ptx", c.kernel, c.at));
    CHECK(!has(e.message, "is not a declared register"));  // what these once said, as if the PTX were malformed
  }
  // The verdict, as `tileverify check` gives it: unsupported (exit 3), not error (exit 4).
  Report r = check("outside_class.ptx", "grid_sync", 32,
                   {tensor("x", DType::F32, 32, Role::In), tensor("y", DType::F32, 32, Role::InOut)});
  CHECK(r.verdict == Outcome::Unsupported);
  CHECK(r.exit_code() == 3);
  // printf: the argument buffer's 8-byte store into a local array first
  // accessed at 4 bytes is a store of 8 bytes (memory is bytes), so the run
  // stops at the vprintf call, which the report names.
  Report p = check("outside_class.ptx", "print", 32,
                   {tensor("x", DType::F32, 32, Role::In), tensor("y", DType::F32, 32, Role::Out)});
  INFO(p.text());
  CHECK(p.verdict == Outcome::Unsupported);
  CHECK(has(p.text(), "unsupported: print: call to 'vprintf'"));
}

TEST_CASE("device runtime calls, environment registers and undeclared callees") {
  // The call sequence of a device-side launch (what outside_class.ptx's
  // launch_child reaches after taking child's address), and cooperative
  // groups' grid sync as CUDA 9 to 10 compiled it.
  const std::string decls = std::string(kHeader) +
                            ".extern .func (.param .b32 func_retval0) __cudaCDP2LaunchDeviceV2(.param .b64 a, .param .b64 b);\n"
                            ".extern .func (.param .b32 func_retval0) cudaCGSynchronizeGrid(.param .b64 a, .param .b32 b);\n";
  auto kernel = [&](const std::string& body) {
    return decls + ".visible .entry k()\n{\n  .reg .b32 %r<3>;\n  .reg .b64 %rd<3>;\n" + body + "\n  ret;\n}\n";
  };
  SUBCASE("a device-side launch") {
    const ptx::Error e = lower_error_of(kernel("  {\n  .param .b64 param0;\n  st.param.b64 [param0+0], %rd1;\n"
                                               "  .param .b64 param1;\n  st.param.b64 [param1+0], 0;\n"
                                               "  .param .b32 retval0;\n"
                                               "  call.uni (retval0), __cudaCDP2LaunchDeviceV2, (param0, param1);\n  }"),
                                        "k");
    INFO(e.text());
    CHECK(e.unsupported);
    CHECK(has(e.message, "call to '__cudaCDP2LaunchDeviceV2', whose body is not in this file (declared at t.ptx:4:9)"));
    CHECK(has(e.message, "the CUDA device runtime (dynamic parallelism"));
    CHECK(e.loc.line == 16);
    CHECK(e.loc.column == 23);
  }
  SUBCASE("cooperative groups' grid sync through the device runtime") {
    const ptx::Error e = lower_error_of(kernel("  {\n  .param .b64 param0;\n  st.param.b64 [param0+0], %rd1;\n"
                                               "  .param .b32 param1;\n  st.param.b32 [param1+0], 0;\n"
                                               "  .param .b32 retval0;\n"
                                               "  call.uni (retval0), cudaCGSynchronizeGrid, (param0, param1);\n  }"),
                                        "k");
    INFO(e.text());
    CHECK(e.unsupported);
    CHECK(has(e.message, "cooperative groups (grid-wide synchronization)"));
    CHECK(has(e.message, "synchronize only within themselves"));
  }
  SUBCASE("a callee neither defined nor declared is malformed PTX") {
    const ptx::Error e = lower_error_of(kernel("  call.uni nowhere, ();"), "k");
    CHECK(!e.unsupported);
    CHECK(e.message == "call to 'nowhere', which this file neither defines nor declares");
  }
  SUBCASE("every %envreg is named; a register past %envreg31 is not one") {
    for (const char* r : {"%envreg0", "%envreg9", "%envreg31"}) {
      const ptx::Error e = lower_error_of(kernel(std::string("  mov.u32 %r1, ") + r + ";"), "k");
      INFO(e.text());
      CHECK(e.unsupported);
      CHECK(has(e.message, std::string("'") + r + "' is an environment register"));
      CHECK(e.loc.line == 10);
      CHECK(e.loc.column == 16);
    }
    for (const char* r : {"%envreg32", "%envreg07", "%envreg"}) {
      const ptx::Error e = lower_error_of(kernel(std::string("  mov.u32 %r1, ") + r + ";"), "k");
      INFO(e.text());
      CHECK(!e.unsupported);
      CHECK(has(e.message, "is not a declared register, variable or parameter"));
    }
  }
  SUBCASE("the address of a function only declared here") {
    const ptx::Error e = lower_error_of(kernel("  mov.u64 %rd1, cudaCGSynchronizeGrid;"), "k");
    CHECK(e.unsupported);
    CHECK(has(e.message, "the address of the function 'cudaCGSynchronizeGrid' (declared at t.ptx:5:9) is taken"));
  }
}
