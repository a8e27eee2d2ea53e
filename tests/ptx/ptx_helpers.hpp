// Small helpers for the PTX feature tests: lower a kernel of a checked-in
// .ptx file, run it, and check pairs of kernels through the public equiv API.
#pragma once

#include "tileverify/equiv.hpp"
#include "tileverify/eval.hpp"
#include "tileverify/ptx.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace ptx_test {

inline std::string path_of(const std::string& file) { return std::string(TILEVERIFY_TEST_DIR) + "/ptx/" + file; }

// The kernel `kernel` of tests/ptx/`file`, lowered; fails the test if it does not lower.
inline tileverify::Program lower_file(const std::string& file, const std::string& kernel) {
  auto parsed = tileverify::ptx::parse_ptx_file(path_of(file));
  INFO((parsed.error ? parsed.error->text() : std::string()));
  REQUIRE(parsed.module.has_value());
  auto lowered = tileverify::ptx::lower_kernel(*parsed.module, kernel);
  INFO((lowered.error ? lowered.error->text() : std::string()));
  REQUIRE(lowered.program.has_value());
  return *lowered.program;
}

// The kernel `kernel` of PTX text, lowered; fails the test if it does not parse or lower.
inline tileverify::Program lower_text(const std::string& text, const std::string& kernel = "k") {
  auto parsed = tileverify::ptx::parse_ptx(text, "t.ptx");
  INFO((parsed.error ? parsed.error->text() : std::string()));
  REQUIRE(parsed.module.has_value());
  auto lowered = tileverify::ptx::lower_kernel(*parsed.module, kernel);
  INFO((lowered.error ? lowered.error->text() : std::string()));
  REQUIRE(lowered.program.has_value());
  return *lowered.program;
}

// The lowering error for `kernel` of PTX text (which must parse).
inline tileverify::ptx::Error lower_error_of(const std::string& text, const std::string& kernel,
                                            const std::string& file = "t.ptx") {
  auto parsed = tileverify::ptx::parse_ptx(text, file);
  INFO((parsed.error ? parsed.error->text() : std::string()));
  REQUIRE(parsed.module.has_value());
  auto lowered = tileverify::ptx::lower_kernel(*parsed.module, kernel);
  // An unsupported instruction is kept in the code (it stops a run that
  // reaches it): its error is the first one.
  if (lowered.program && !lowered.error) lowered.error = tileverify::ptx::first_unsupported(*lowered.program);
  REQUIRE(lowered.error.has_value());
  return *lowered.error;
}

inline tileverify::ParamSpec tensor(const std::string& name, tileverify::DType t, std::uint64_t n, tileverify::Role r) {
  tileverify::ParamSpec p;
  p.name = name;
  p.dtype = t;
  p.shape = {n};
  p.role = r;
  return p;
}

inline tileverify::ParamSpec scalar(const std::string& name, std::int64_t v) {
  tileverify::ParamSpec p;
  p.name = name;
  p.dtype = tileverify::DType::S32;
  p.tensor = false;
  p.value = v;
  return p;
}

inline tileverify::Launch launch_of(std::uint32_t block, const std::vector<tileverify::ParamSpec>& params) {
  tileverify::Launch l;
  l.block = tileverify::Dim3{block, 1, 1};
  for (const auto& p : params)
    l.args.push_back(p.tensor ? tileverify::LaunchArg::of_tensor({p.name, p.dtype, p.shape, p.role})
                              : tileverify::LaunchArg::of_scalar(p.value));
  return l;
}

inline tileverify::KernelSpec kernel_spec(const std::string& file, const std::string& kernel, std::uint32_t block) {
  tileverify::KernelSpec k;
  k.ptx = path_of(file);
  k.kernel = kernel;
  k.block = tileverify::Dim3{block, 1, 1};
  return k;
}

// `tileverify equiv` on two kernels of tests/ptx/`file`, both with `block` threads.
inline tileverify::Report equiv(const std::string& file, const std::string& ref, const std::string& opt,
                                std::uint32_t block, const std::vector<tileverify::ParamSpec>& params) {
  tileverify::Spec s;
  s.ref = kernel_spec(file, ref, block);
  s.opt = kernel_spec(file, opt, block);
  s.grid = tileverify::Dim3{1, 1, 1};
  s.params = params;
  s.path = "test";
  return tileverify::check_equivalence(s);
}

// `tileverify check` on one kernel.
inline tileverify::Report check(const std::string& file, const std::string& kernel, std::uint32_t block,
                                const std::vector<tileverify::ParamSpec>& params) {
  tileverify::Spec s;
  s.ref = kernel_spec(file, kernel, block);
  s.grid = tileverify::Dim3{1, 1, 1};
  s.params = params;
  s.path = "test";
  return tileverify::check(s);
}

}  // namespace ptx_test
