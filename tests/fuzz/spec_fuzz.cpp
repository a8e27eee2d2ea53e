// libFuzzer harness for spec files (tileverify::parse_spec): the bytes are a
// spec's JSON text. Every input must give a Spec or an error message, without
// a crash, an escaping exception, a sanitizer report or a timeout
// (docs/fuzzing.md). A spec that parses is also turned into the launch of
// each of its kernels (launch_of), as every check does first.
#include "tileverify/equiv.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "spec_fuzz: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const tileverify::SpecResult r = tileverify::parse_spec(text, "fuzz.json");
  if (r.spec.has_value() == !r.error.empty()) broken("not exactly one of spec and error");
  if (!r.spec) return 0;
  for (const auto* k : {&r.spec->ref, &r.spec->opt})
    if (k->has_value()) (void)tileverify::launch_of(*r.spec, **k);
  return 0;
}
