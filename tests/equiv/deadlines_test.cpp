// One deadline from the process's start (issue 31): every stage before the
// kernels run (reading the spec, checking its suite, making a suite's
// sizes, setting up the tensors) reads it, and the renamings of CTA classes
// cost what they touch. Each case drives a stage with a deadline that has
// passed already, or measures that a stage is linear where it was not.
#include "tileverify/equiv.hpp"
#include "tileverify/eval.hpp"
#include "tileverify/expr.hpp"
#include "tileverify/ptx.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

using namespace tileverify;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

const fs::path kCases = fs::path(TILEVERIFY_TEST_DIR) / "cases";

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A spec with "sizes" whose "suite" lists `entries` sizes, in a temporary folder.
fs::path suite_spec(std::size_t entries) {
  const fs::path dir = fs::temp_directory_path() / "tileverify_deadlines_test";
  fs::create_directories(dir);
  const fs::path file = dir / ("suite_" + std::to_string(entries) + ".json");
  std::string suite;
  for (std::size_t i = 0; i < entries; ++i) suite += (i ? ", {\"N\": " : "{\"N\": ") + std::to_string(i % 4096 + 65) + "}";
  const std::string text = R"({"sizes": {"N": 200}, "tiles": {"N": 64}, "suite": [)" + suite + R"(],
      "kernel": {"ptx": ")" + (kCases / "softmax_online.ptx").string() + R"J(", "kernel": "online_softmax", "block": [128]},
      "grid": ["ceil(N/64)"], "cta": [1],
      "params": [{"name": "x", "dtype": "f32", "shape": ["N"], "role": "in"}]})J";
  std::FILE* f = std::fopen(file.string().c_str(), "w");
  REQUIRE(f);
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return file;
}

}  // namespace

TEST_CASE("reading a spec counts against the deadline: past it, the result is a time-out naming the stage") {
  const fs::path file = suite_spec(10);
  const auto gone = Clock::now() - std::chrono::seconds(1);
  SpecResult r = load_spec(file.string(), {}, gone);
  CHECK_FALSE(r.spec.has_value());
  CHECK(r.timed_out);
  CHECK(has(r.error, "time limit reached while reading the spec"));
  CHECK(has(r.error, file.string()));
  // Without a deadline (or before it) the same spec reads, and is no time-out.
  SpecResult ok = load_spec(file.string(), {}, Clock::now() + std::chrono::seconds(60));
  INFO(ok.error);
  CHECK(ok.spec.has_value());
  CHECK_FALSE(ok.timed_out);
  // A suite's reading too.
  SizeSuite s = plan_suite(file.string(), SuiteKind::Listed, {}, gone);
  CHECK(s.timed_out);
  CHECK(s.cases.empty());
  CHECK(has(s.error, "time limit reached while reading the spec"));
}

TEST_CASE("a suite of 10^5 sizes is checked in linear time and its sizes are made one by one") {
  // nlohmann's parser callback (duplicate keys) scanned the suite list at the
  // end of each entry and every size re-read the whole spec: 27.5 s for
  // reading alone, and --shapes suite never started. Now both are linear;
  // the bound leaves a busy machine room (idle: about 0.3 s).
  const fs::path file = suite_spec(100000);
  auto t0 = Clock::now();
  SpecResult r = load_spec(file.string(), {}, std::nullopt);
  const double read = seconds_since(t0);
  INFO(r.error);
  CHECK(r.spec.has_value());
  CHECK(read < 5);
  t0 = Clock::now();
  SizeSuite s = plan_suite(file.string(), SuiteKind::Listed);
  const double planned = seconds_since(t0);
  INFO(s.error);
  REQUIRE(s.error.empty());
  REQUIRE(s.cases.size() == 100000);
  CHECK(planned < 5);
  // Sizes are made when asked for: the first at once, the others untouched.
  CHECK_FALSE(s.cases[0].spec.has_value());
  t0 = Clock::now();
  for (std::size_t i = 0; i < 1000; ++i) s.evaluate(s.cases[i]);
  CHECK(seconds_since(t0) < 5);  // each size costs what the spec without its suite costs
  REQUIRE(s.cases[0].spec.has_value());
  CHECK(s.cases[0].spec->sizes.at("N") == 65);
  CHECK(s.cases[0].spec->grid.x == 2);
  CHECK_FALSE(s.cases[1000].spec.has_value());
  // A duplicate key is still refused, wherever it is.
  {
    std::FILE* f = std::fopen(file.string().c_str(), "w");
    REQUIRE(f);
    std::fputs(R"({"sizes": {"N": 2}, "suite": [{"N": 1}, {"N": 1, "N": 2}], "kernel": {}, "params": []})", f);
    std::fclose(f);
  }
  CHECK(has(load_spec(file.string()).error, "the key \"N\" appears twice in one object"));
  fs::remove_all(file.parent_path());
}

TEST_CASE("setting up a kernel's tensors reads the deadline: a 2048 x 2048 input does not run past it") {
  const std::string text =
      ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 k_param_0)\n{\nret;\n}\n";
  auto parsed = ptx::parse_ptx(text, "setup.ptx");
  REQUIRE(parsed.module.has_value());
  auto lowered = ptx::lower_kernel(*parsed.module, "k");
  REQUIRE(lowered.program.has_value());
  Launch l;
  l.block = Dim3{32, 1, 1};
  l.args.push_back(LaunchArg::of_tensor({"x", DType::F32, {2048, 2048}, Role::In}));
  RunOptions o;
  o.deadline = Clock::now() - std::chrono::milliseconds(1);
  ExprContext c;
  SymbolicDomain dom(c);
  auto res = run_program(*lowered.program, l, dom, o);
  // Before: the set-up ran to the end and the kernel (one instruction) too,
  // the deadline first read after 4096 thread-instructions.
  REQUIRE(res.diagnostics.size() == 1);
  CHECK(res.diagnostics[0].kind == DiagKind::Limit);
  CHECK(has(res.diagnostics[0].message, "time limit reached while setting up the memory of tensor 'x'"));
}

TEST_CASE("shift_symbols costs what its roots hold, not the size of the store") {
  // A large store (a CTA class's outputs and earlier groups' images) and
  // many small renamings of it: before, each call cleared two tables the
  // size of the store (issue 31: a transposed SGEMM's 15 groups at 1024
  // roots each, 118 s). 50000 renamings of 2 nodes over 1.2M nodes were
  // 60 G table entries to clear then (20 s and more); milliseconds now.
  ExprContext c;
  for (std::uint32_t i = 0; i < 400000; ++i) c.mul(c.symbol("A", i), c.symbol("B", i));
  REQUIRE(c.size() > 1200000);
  Expr acc = c.zero();
  for (std::uint32_t i = 0; i < 1000; ++i) acc = c.add(acc, c.mul(c.symbol("A", i), c.symbol("B", i)));
  const Expr x = c.add(c.symbol("A", 7), c.symbol("B", 9));
  auto t0 = Clock::now();
  for (int k = 1; k <= 50000; ++k) {
    auto moved = c.shift_symbols({x}, [&](const std::string& t) { return t == "A" ? std::int64_t(k) : std::int64_t(0); });
    REQUIRE(moved.has_value());
    if (k == 5) CHECK(moved->front() == c.add(c.symbol("A", 12), c.symbol("B", 9)));
  }
  CHECK(seconds_since(t0) < 5);
  // Below index 0: none, as before.
  CHECK_FALSE(c.shift_symbols({x}, [](const std::string&) { return std::int64_t(-10); }).has_value());
  // The large root itself still renames whole, onto the nodes built directly.
  auto whole = c.shift_symbols({acc}, [](const std::string& t) { return t == "B" ? std::int64_t(1) : std::int64_t(0); });
  REQUIRE(whole.has_value());
  Expr expect = c.zero();
  for (std::uint32_t i = 0; i < 1000; ++i) expect = c.add(expect, c.mul(c.symbol("A", i), c.symbol("B", i + 1)));
  CHECK(whole->front() == expect);
}
