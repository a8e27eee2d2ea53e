// What the asynchronous-model tests (mbarrier_test.cpp,
// mbarrier_libcu_test.cpp) share: lowering kernel k of PTX text, and a
// symbolic run with its context and a readable text of its findings.
#pragma once

#include "tileverify/eval.hpp"
#include "tileverify/ptx.hpp"

#include <doctest/doctest.h>

#include <string>

namespace async_test {

// Kernel k of `text`, lowered; fails the test if it does not lower, and,
// with all_supported, if any instruction is left unsupported.
inline tileverify::Program lower(const std::string& text, bool all_supported) {
  auto parsed = tileverify::ptx::parse_ptx(text, "k.ptx");
  INFO((parsed.error ? parsed.error->text() : std::string()));
  REQUIRE(parsed.module.has_value());
  auto lowered = tileverify::ptx::lower_kernel(*parsed.module, "k");
  INFO((lowered.error ? lowered.error->text() : std::string()));
  REQUIRE(lowered.program.has_value());
  if (all_supported) {
    auto un = tileverify::ptx::first_unsupported(*lowered.program);
    INFO((un ? un->text() : std::string()));
    CHECK(!un.has_value());
  }
  return *lowered.program;
}

struct Run {
  tileverify::ExprContext ctx;
  tileverify::RunResult<tileverify::SymbolicDomain> r;
  std::string text() const {
    std::string s;
    for (const tileverify::Diagnostic& d : r.diagnostics) s += d.text() + "\n";
    for (const tileverify::Diagnostic& d : r.notes) s += "note: " + d.text() + "\n";
    return s;
  }
  bool output_is(const std::string& tensor, std::size_t i, const std::string& input, std::uint32_t j) {
    auto it = r.outputs.find(tensor);
    if (it == r.outputs.end() || i >= it->second.size() || !it->second[i]) return false;
    return *it->second[i] == ctx.symbol(input, j);
  }
  const tileverify::Diagnostic& last() const { return r.diagnostics.back(); }
};

}  // namespace async_test
