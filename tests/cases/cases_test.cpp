// Spec-file cases, run as a user would run `tileverify equiv`: every
// tests/cases/*.json with an "expect" key must give that verdict. A new case
// is a new file (as in Alive2's test suite). The examples/kernels specs run
// through CTest's example.* tests (see tests/CMakeLists.txt).
#include "tileverify/equiv.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> spec_files() {
  std::vector<fs::path> out;
  fs::path root = fs::path(TILEVERIFY_TEST_DIR).parent_path();
  for (const fs::path& dir : {root / "tests" / "cases"}) {
    if (!fs::exists(dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(dir))
      if (e.path().extension() == ".json") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("every spec file with an expected verdict gets it") {
  int checked = 0;
  for (const fs::path& p : spec_files()) {
    auto loaded = tileverify::load_spec(p.string());
    INFO(p.string() << ": " << loaded.error);
    REQUIRE(loaded.spec.has_value());
    if (loaded.spec->expect.empty()) continue;
    tileverify::DecideLimits limits;
    limits.timeout_seconds = 30;
    tileverify::Report r = loaded.spec->opt ? tileverify::check_equivalence(*loaded.spec, limits)
                                            : tileverify::check(*loaded.spec);
    INFO(r.text());
    CHECK(std::string(tileverify::outcome_name(r.verdict)) == loaded.spec->expect);
    ++checked;
  }
  MESSAGE(checked << " spec files checked");
  CHECK(checked >= 3);
}

TEST_CASE("reports: exit codes and the JSON shape of docs/cli.md") {
  fs::path dir = fs::path(TILEVERIFY_TEST_DIR) / "cases";
  auto eq = tileverify::check_equivalence(*tileverify::load_spec((dir / "softmax_online.json").string()).spec);
  CHECK(eq.exit_code() == 0);
  CHECK(eq.json().find("\"verdict\": \"equivalent\"") != std::string::npos);
  auto ne = tileverify::check_equivalence(*tileverify::load_spec((dir / "softmax_online_norescale.json").string()).spec);
  CHECK(ne.exit_code() == 1);
  CHECK(ne.json().find("\"counterexample\"") != std::string::npos);
  CHECK(ne.text().find("first differing output: y[0]") != std::string::npos);
  {
    // A counterexample over 128 inputs: the text names the first 24, the
    // JSON every one (an attention kernel's has 65 K).
    auto wide = tileverify::check_equivalence(*tileverify::load_spec(
        (fs::path(TILEVERIFY_TEST_DIR) / ".." / "examples" / "kernels" / "softmax" / "online_norescale.json").string()).spec);
    REQUIRE(wide.verdict == tileverify::Outcome::NotEquivalent);
    CHECK(wide.text().find("x[23] = ") != std::string::npos);
    CHECK(wide.text().find("x[24] = ") == std::string::npos);
    CHECK(wide.text().find("... (128 inputs in all; --json lists every one)") != std::string::npos);
    // The JSON: every input, by tensor (reports_test.cpp checks its shape).
    CHECK(wide.mismatch->inputs.at("x").size() == 128);
    CHECK(wide.json().find("\"inputs\": {") != std::string::npos);
    CHECK(ne.text().find("inputs in all") == std::string::npos);  // 4 inputs: all shown
  }
  // The first refutation ends the check: the other outputs are not decided.
  CHECK(ne.stats.outputs_compared >= 1);
  CHECK(ne.stats.outputs_compared < 128);
  auto race = tileverify::check_equivalence(*tileverify::load_spec((dir / "softmax_nobarrier.json").string()).spec);
  CHECK(race.exit_code() == 2);
  CHECK(race.json().find("\"accesses\"") != std::string::npos);
  // `check` on a pair spec checks both kernels (it once checked ref alone and said OK).
  auto checked_pair = tileverify::check(*tileverify::load_spec((dir / "softmax_nobarrier.json").string()).spec);
  CHECK(checked_pair.verdict == tileverify::Outcome::Race);
  CHECK(checked_pair.text().find("opt (softmax)") != std::string::npos);
  auto all = tileverify::check_equivalence(*tileverify::load_spec((dir / "red3_all_ctas.json").string()).spec);
  CHECK(all.verdict == tileverify::Outcome::Equivalent);
  CHECK(all.stats.outputs_compared == 4);  // one sum per CTA, four CTAs
  CHECK(!tileverify::parse_spec("{\"ctas\": \"some\", \"kernel\": {\"ptx\": \"a\", \"kernel\": \"k\", \"block\": [1]}, \"params\": []}", "c.json").spec);
  auto bad = tileverify::parse_spec("{\"ref\": {\"ptx\": \"x.ptx\", \"kernel\": \"k\"}}", "bad.json");
  CHECK(!bad.spec);
  // "block" may come from the PTX's .reqntid, so a missing one is found at launch (tests/spec).
  CHECK(bad.error.find("needs a \"params\" list") != std::string::npos);
  auto missing = tileverify::parse_spec(
      "{\"ref\": {\"ptx\": \"nope.ptx\", \"kernel\": \"k\", \"block\": [1]}, \"opt\": {\"ptx\": \"nope.ptx\", \"kernel\": \"k\", "
      "\"block\": [1]}, \"params\": []}",
      "m.json");
  REQUIRE(missing.spec);
  auto err = tileverify::check_equivalence(*missing.spec);
  CHECK(err.exit_code() == 4);
  CHECK(err.text().find("cannot read the file") != std::string::npos);
}

TEST_CASE("spec scalars: numbers are converted to the dtype, out-of-range and mistyped values are errors") {
  auto with = [](const std::string& dtype, const std::string& value) {
    return tileverify::parse_spec("{\"kernel\": {\"ptx\": \"a.ptx\", \"kernel\": \"k\", \"block\": [1]}, \"params\": "
                                  "[{\"name\": \"s\", \"dtype\": \"" + dtype + "\", \"value\": " + value + "}]}",
                                  "s.json");
  };
  auto bits = [&](const std::string& dtype, const std::string& value) {
    auto r = with(dtype, value);
    INFO(dtype << " " << value << ": " << r.error);
    REQUIRE(r.spec);
    return std::uint64_t(r.spec->params[0].value);
  };
  CHECK(bits("f32", "1.5") == 0x3fc00000u);
  CHECK(bits("f32", "2") == 0x40000000u);
  CHECK(bits("f32", "-0.5") == 0xbf000000u);
  CHECK(bits("f32", "\"0x3fc00000\"") == 0x3fc00000u);
  CHECK(bits("f64", "1.5") == 0x3ff8000000000000ull);
  CHECK(bits("f16", "1.5") == 0x3e00u);
  CHECK(bits("f16", "-2") == 0xc000u);
  CHECK(bits("bf16", "1.5") == 0x3fc0u);
  CHECK(bits("s32", "-7") == std::uint64_t(std::int64_t(-7)));
  CHECK(bits("u32", "4294967295") == 0xffffffffu);
  for (auto dv : {std::pair<const char*, const char*>{"u32", "-1"}, {"s32", "1.5"}, {"s32", "2147483648"},
                  {"u8", "256"}, {"f32", "1e39"}, {"f16", "1e6"}, {"f32", "\"1.5\""}, {"f32", "\"0x123456789\""}}) {
    // Not a structured binding: INFO's lambda captures these, which C++17 (clang) does not allow for bindings.
    const char *dtype = dv.first, *value = dv.second;
    auto r = with(dtype, value);
    INFO(dtype << " " << value);
    CHECK(!r.spec);
    CHECK(r.error.find("params[0] ('s')") != std::string::npos);
  }
}

TEST_CASE("__constant__ data the host fills: given by \"symbols\", or a clear error naming the variable") {
  fs::path dir = fs::path(TILEVERIFY_TEST_DIR) / "cases";
  auto unbound = tileverify::load_spec((dir / "constant_filter_unbound.json").string());
  REQUIRE(unbound.spec.has_value());
  tileverify::Report r = tileverify::check(*unbound.spec);
  CHECK(r.verdict == tileverify::Outcome::Error);
  CHECK(r.exit_code() == 4);
  std::string text = r.text();
  INFO(text);
  CHECK(text.find("'c_w' is __constant__ data the host fills") != std::string::npos);
  CHECK(text.find("\"symbols\"") != std::string::npos);
  CHECK(text.find("ERROR: \n") == std::string::npos);  // the first line says what is wrong
  CHECK(text.find("<unknown>") == std::string::npos);
  // A binding to a tensor that is not an input of "params" is a spec error.
  auto bad = tileverify::parse_spec(R"({"kernel": {"ptx": "constant_filter.ptx", "kernel": "conv_const", "block": [32,1,1],
      "symbols": {"c_w": "w"}}, "params": [{"name": "x", "dtype": "f32", "shape": [34], "role": "in"}]})",
                                    (dir / "inline.json").string());
  REQUIRE(!bad.spec.has_value());
  CHECK(bad.error.find("'c_w' is given by 'w', which is no tensor") != std::string::npos);
}

TEST_CASE("launch_of and load_kernel: what the checks run, for tools that run kernels themselves") {
  fs::path dir = fs::path(TILEVERIFY_TEST_DIR) / "cases";
  auto loaded = tileverify::load_spec((dir / "constant_filter.json").string());
  REQUIRE(loaded.spec.has_value());
  const tileverify::Spec& s = *loaded.spec;
  // The reference takes w as a pointer; the optimized kernel reads it from c_w.
  tileverify::Launch ref = tileverify::launch_of(s, *s.ref), opt = tileverify::launch_of(s, *s.opt);
  CHECK(ref.args.size() == 3);
  CHECK(ref.symbols.empty());
  CHECK(opt.args.size() == 2);
  REQUIRE(opt.symbols.count("c_w") == 1);
  CHECK(opt.symbols.at("c_w").name == "w");
  tileverify::KernelLoad k = tileverify::load_kernel(*s.opt);
  REQUIRE(k.program.has_value());
  CHECK(k.program->params.size() == 2);
  tileverify::KernelSpec missing = *s.opt;
  missing.kernel = "no_such_kernel";
  tileverify::KernelLoad bad = tileverify::load_kernel(missing);
  CHECK(!bad.program);
  CHECK(bad.bad_input);
  CHECK(bad.error.find("no kernel named 'no_such_kernel'") != std::string::npos);
}

// A long reference run starts the optimized kernel on a second thread, into
// its own expression context, imported afterwards. Verdicts, counts and the
// reported difference must be those of the one-thread check.
TEST_CASE("equivalence checks give the same report with one thread and with two") {
  fs::path ex = fs::path(TILEVERIFY_TEST_DIR).parent_path() / "examples" / "kernels";
  for (const char* name : {"sgemm/droptile.json", "sgemm/warptile.json", "softmax/online_norescale.json"}) {
    CAPTURE(name);
    auto spec = tileverify::load_spec((ex / name).string()).spec;
    REQUIRE(spec.has_value());
    tileverify::DecideLimits one, two;
    one.threads = 1;
    two.threads = 2;
    tileverify::Report a = tileverify::check_equivalence(*spec, one);
    tileverify::Report b = tileverify::check_equivalence(*spec, two);
    CHECK(b.stats.ref.thread_instructions > 20000);  // long enough to take the two-thread path
    CHECK(a.verdict == b.verdict);
    CHECK(std::string(tileverify::outcome_name(b.verdict)) == spec->expect);
    if (a.verdict == tileverify::Outcome::Equivalent) {
      CHECK(a.stats.outputs_compared == b.stats.outputs_compared);
      CHECK(a.stats.proved == b.stats.proved);
    }
    // A refuted check reports the first refuted output, whatever the threads.
    REQUIRE(a.mismatch.has_value() == b.mismatch.has_value());
    if (a.mismatch) {
      CHECK(a.mismatch->output == b.mismatch->output);
      CHECK(a.mismatch->element == b.mismatch->element);
      CHECK(a.mismatch->ref_expr == b.mismatch->ref_expr);
      CHECK(a.mismatch->opt_expr == b.mismatch->opt_expr);
    }
  }
}
