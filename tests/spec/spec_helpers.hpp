// Helpers shared by the spec tests: a spec given as text (its relative
// paths starting in a folder of tests/cases), loaded or refused, and the
// launch a kernel of it gets.
#pragma once

#include "tileverify/equiv.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

namespace spec_test {

inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The spec `text`, read as if it were the file dir/inline.json.
inline tileverify::SpecResult inline_spec(const std::filesystem::path& dir, const std::string& text) {
  return tileverify::parse_spec(text, (dir / "inline.json").string());
}

// The spec `text`, which must load.
inline tileverify::Spec loads(const std::filesystem::path& dir, const std::string& text) {
  tileverify::SpecResult r = inline_spec(dir, text);
  INFO(text << "\n" << r.error);
  REQUIRE(r.spec.has_value());
  return *r.spec;
}

// The error for the spec `text`, which must be refused, with the file named.
inline std::string parse_error(const std::filesystem::path& dir, const std::string& text) {
  tileverify::SpecResult r = inline_spec(dir, text);
  INFO(text);
  REQUIRE_FALSE(r.spec.has_value());
  CHECK(has(r.error, "inline.json: "));
  return r.error;
}

// The spec file dir/name, which must load.
inline tileverify::Spec from_file(const std::filesystem::path& dir, const std::string& name) {
  tileverify::SpecResult r = tileverify::load_spec((dir / name).string());
  INFO(r.error);
  REQUIRE(r.spec.has_value());
  return *r.spec;
}

// The launch of kernel k of s, or its error.
inline tileverify::LaunchResult launch(const tileverify::Spec& s, const tileverify::KernelSpec& k) {
  tileverify::KernelLoad l = tileverify::load_kernel(k);
  INFO(l.error);
  REQUIRE(l.program.has_value());
  return tileverify::launch_for(s, k, *l.program);
}

}  // namespace spec_test
