// Reports as users read them (docs/reports.md): names as the CUDA source
// spells them, expf printed as exp, the JSON report's shape (counterexample
// inputs, diagnostics for every unsupported or bad-input verdict).
#include "tileverify/equiv.hpp"

#include "../../src/util/source_name.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

fs::path cases() { return fs::path(TILEVERIFY_TEST_DIR) / "cases"; }

tileverify::Spec spec_at(const fs::path& p) {
  auto loaded = tileverify::load_spec(p.string());
  INFO(loaded.error);
  REQUIRE(loaded.spec.has_value());
  return *loaded.spec;
}

}  // namespace

TEST_CASE("source names: mangled names as the source spells them") {
  using tileverify::util::source_name;
  CHECK(source_name("_ZZ4red5PKfPfE1s") == "red5::s");
  CHECK(source_name("_Z10sgemm_smemILi32EEvPKfS1_Pfi") == "sgemm_smem<32>");
  CHECK(source_name("_ZZ10sgemm_smemILi32EEvPKfS1_PfiE4tile") == "sgemm_smem<32>::tile");
  CHECK(source_name("_ZN12_GLOBAL__N_13fooEv") == "(anonymous namespace)::foo");
  CHECK(source_name("_Z3mapIPFviEEvT_") == "map<void (*)(int)>");  // parentheses inside template arguments stay
  CHECK(source_name("_ZN1A3getEv") == "A::get");
  // Not mangled, or not a whole mangled name: unchanged.
  CHECK(source_name("buf") == "buf");
  CHECK(source_name("_Z7exp_refPKfPf_param_0") == "_Z7exp_refPKfPf_param_0");
  CHECK(tileverify::util::source_names_in("race: _Z4red5PKfPf: on shared _ZZ4red5PKfPfE1s[1] (x_Zy)") ==
        "race: red5: on shared red5::s[1] (x_Zy)");
}

TEST_CASE("reports: kernels and buffers by their source names, the PTX names kept in the JSON") {
  const fs::path dir = cases() / "readable";
  {
    auto r = tileverify::check(spec_at(dir / "red5_race.json"));
    REQUIRE(r.verdict == tileverify::Outcome::Race);
    const std::string text = r.text();
    INFO(text);
    CHECK(text.find("race: red5: data race on 4 bytes at shared red5::s+4 between thread 0 (read) and thread 1 (write)") !=
          std::string::npos);
    // The instructions quoted are the PTX's.
    CHECK(text.find("ld.shared.f32 %f4, [_ZZ4red5PKfPfE1s+4]") != std::string::npos);
    const json j = json::parse(r.json());
    const json& d = j["diagnostics"].at(0);
    CHECK(d["buffer"] == "_ZZ4red5PKfPfE1s");
    CHECK(d["buffer_name"] == "red5::s");
    CHECK(d["message"].get<std::string>().find("red5::s+4") != std::string::npos);
    CHECK(d["message_ptx"].get<std::string>().find("_Z4red5PKfPf: data race on 4 bytes at shared _ZZ4red5PKfPfE1s+4") !=
          std::string::npos);
    // The element as before (in the array's unit, here its first access's
    // 4 bytes), and the bytes, which mean the same in every kernel.
    CHECK(d["element"] == 1);
    CHECK(d["byte"] == 4);
    CHECK(d["width"] == 4);
  }
  {
    auto r = tileverify::check(spec_at(dir / "sgemm_race.json"));
    REQUIRE(r.verdict == tileverify::Outcome::Race);
    INFO(r.text());
    CHECK(r.text().find("race: sgemm_smem<32>: data race on 4 bytes at shared sgemm_smem<32>::tile+4") != std::string::npos);
    const json j = json::parse(r.json());
    CHECK(j["diagnostics"].at(0)["buffer"] == "_ZZ10sgemm_smemILi32EEvPKfS1_PfiE4tile");
    CHECK(j["diagnostics"].at(0)["buffer_name"] == "sgemm_smem<32>::tile");
  }
}

TEST_CASE("reports: expf prints as exp, with and without -use_fast_math") {
  const fs::path dir = cases() / "readable";
  for (const char* name : {"exp_wrong.json", "exp_wrong_fast.json"}) {
    auto r = tileverify::check_equivalence(spec_at(dir / name));
    INFO(name << "\n" << r.text());
    REQUIRE(r.verdict == tileverify::Outcome::NotEquivalent);
    REQUIRE(r.mismatch.has_value());
    CHECK(r.mismatch->ref_expr == "exp(x[0])");
    CHECK(r.mismatch->opt_expr == "2*exp(x[0])");
  }
  // Printing only: the pair that is equal stays equivalent.
  CHECK(tileverify::check_equivalence(spec_at(dir / "exp_sum.json")).verdict == tileverify::Outcome::Equivalent);
}

TEST_CASE("printing: 2^y factors print as one exponential, exp where log2(e) reads as 1/ln 2") {
  tileverify::ExprContext c;
  const tileverify::Expr x = c.symbol("x", 0), y = c.symbol("y", 0);
  const tileverify::Rational hi = tileverify::Rational::from_f32_bits(0x3FB8AA3Bu);
  const tileverify::Rational lo = tileverify::Rational::from_f32_bits(0x32A57060u);
  // __expf(x): 2^(x * 0f3FB8AA3B).
  CHECK(c.to_string(c.ex2(c.mul(c.constant(hi), x))) == "exp(x[0])");
  // expf(x) as nvcc reduces it: 2^n * 2^(x*hi + x*lo - n), n from a clamp of x.
  const tileverify::Expr clamp = c.min(c.constant(1), c.max(c.constant(0), c.add(c.mul(c.constant(tileverify::Rational(3, 512)), x), c.constant(tileverify::Rational(1, 2)))));
  const tileverify::Expr n = c.sub(c.mul(c.constant(252), clamp), c.constant(126));
  const tileverify::Expr reduced =
      c.mul(c.ex2(n), c.ex2(c.sub(c.add(c.mul(c.constant(hi), x), c.mul(c.constant(lo), x)), n)));
  CHECK(c.to_string(reduced) == "exp(x[0])");
  CHECK(c.to_string(c.mul(c.constant(2), reduced)) == "2*exp(x[0])");
  CHECK(c.to_string(c.ex2(c.mul(c.constant(hi * tileverify::Rational(1, 2)), x))) == "exp(0.5*x[0])");
  // A coefficient that is not log2(e): 2^y as built.
  CHECK(c.to_string(c.ex2(c.mul(c.constant(tileverify::Rational(3, 2)), x))) == "ex2(x[0]*1.5)");  // unchanged
  // Two such factors: one 2^(sum).
  CHECK(c.to_string(c.mul(c.ex2(x), c.ex2(y))) == "ex2(x[0] + y[0])");
}

TEST_CASE("JSON report: counterexample inputs are an object of tensors, each a list of values") {
  auto r = tileverify::check_equivalence(spec_at(cases() / "readable" / "exp_wrong.json"));
  REQUIRE(r.verdict == tileverify::Outcome::NotEquivalent);
  const json j = json::parse(r.json());
  const json& inputs = j["counterexample"]["inputs"];
  REQUIRE(inputs.is_object());
  REQUIRE(inputs["x"].is_array());
  REQUIRE(inputs["x"].size() == 1);  // y[0] reads x[0] only
  CHECK(inputs["x"][0].is_number());
  // The same value as the text's "x[0] = 3/2".
  const std::string shown = r.mismatch->why.substr(r.mismatch->why.find(" = ") + 3);
  CHECK(tileverify::Rational::from_double(inputs["x"][0].get<double>()) == tileverify::Rational::parse(shown));
  // The text keeps its list.
  CHECK(r.text().find("counterexample: x[0] = ") != std::string::npos);

  // Numbers where JSON holds them exactly; exact rationals as strings;
  // null for an element the counterexample leaves free.
  tileverify::Report made;
  made.verdict = tileverify::Outcome::NotEquivalent;
  tileverify::Mismatch m;
  m.output = "y";
  m.counterexample.lhs_value = "1";
  m.counterexample.rhs_value = "2";
  m.inputs["x"] = {tileverify::Rational(1, 3), std::nullopt, tileverify::Rational(-2), tileverify::Rational(5, 8)};
  made.mismatch = m;
  const json k = json::parse(made.json());
  CHECK(k["counterexample"]["inputs"]["x"] == json::parse(R"(["1/3", null, -2, 0.625])"));
}

TEST_CASE("JSON report: every unsupported or error verdict gives its reason as a diagnostic, with its place") {
  const fs::path dir = cases() / "error_reasons";
  struct Case {
    const char* spec;
    const char* kind;      // of the diagnostic
    const char* location;  // how its location ends
  };
  const Case all[] = {
      {"cluster.json", "bad_input", "cluster.json"},  // .reqnctapercluster 2 on a grid of 1
      {"clock.json", "unsupported", "reasons.ptx:121:2"},  // the timer's read, which reaches an output
      {"decimal.json", "unsupported", "decimal.ptx:32:16"},
      {"misspelt.json", "bad_input", "misspelt.ptx:9:1"},
      {"pair_misspelt.json", "bad_input", "misspelt.ptx:9:1"},
      {"missing_kernel.json", "bad_input", "reasons.ptx"},  // no line: the file has no such kernel
      {"args_count.json", "bad_input", "args_count.json"},  // the spec does not fit the kernel
  };
  for (const Case& c : all) {
    const tileverify::Spec spec = spec_at(dir / c.spec);
    const tileverify::Report r = spec.opt ? tileverify::check_equivalence(spec) : tileverify::check(spec);
    const std::string text = r.text();
    INFO(std::string(c.spec) << "\n" << text);
    CHECK(std::string(tileverify::outcome_name(r.verdict)) == spec.expect);
    const json j = json::parse(r.json());
    REQUIRE(j["diagnostics"].size() >= 1);
    const json& d = j["diagnostics"][0];
    CHECK(d["kind"] == c.kind);
    const std::string location = d["location"];
    CHECK(location.size() >= std::string(c.location).size());
    CHECK(location.compare(location.size() - std::string(c.location).size(), std::string::npos, c.location) == 0);
    CHECK(!d["message"].get<std::string>().empty());
    // The text says the reason once.
    const std::string message = d["message_ptx"];
    const std::size_t first = text.find(message);
    CHECK(first != std::string::npos);
    CHECK(text.find(message, first + 1) == std::string::npos);
  }
  // A report made without a spec file (the library's own checks of a
  // Spec built in code) still says why.
  tileverify::Spec no_opt = spec_at(dir / "nanosleep.json");
  no_opt.path.clear();
  const json j = json::parse(tileverify::check_equivalence(no_opt).json());
  CHECK(j["verdict"] == "error");
  REQUIRE(j["diagnostics"].size() == 1);
  CHECK(j["diagnostics"][0]["kind"] == "bad_input");
}

TEST_CASE("reports: bad input quotes the names of the files it is about, mangled as they are") {
  // The spec names a kernel that is not there: the list of the file's
  // kernels gives each mangled name (which the spec may use) and its
  // demangled one.
  const auto r = tileverify::check(spec_at(cases() / "error_reasons" / "missing_kernel.json"));
  INFO(r.text());
  CHECK(r.text().find("_Z6sleepyPKfPf (sleepy)") != std::string::npos);
  CHECK(json::parse(r.json())["diagnostics"][0]["message"].get<std::string>().find("_Z6sleepyPKfPf (sleepy)") !=
        std::string::npos);
}

TEST_CASE("JSON report: a warning note says so, as the text prints it \"warning:\"") {
  tileverify::Report r;
  r.verdict = tileverify::Outcome::Equivalent;
  tileverify::Diagnostic w;
  w.kind = tileverify::DiagKind::Undefined;
  w.warning = true;
  w.message = "mbarrier wait with phase parity 2";
  tileverify::Diagnostic n;
  n.kind = tileverify::DiagKind::SameValueWrite;
  n.message = "same value";
  r.notes = {w, n};
  const json j = json::parse(r.json());
  REQUIRE(j["notes"].size() == 2);
  CHECK(j["notes"][0]["kind"] == "undefined");
  CHECK(j["notes"][0]["warning"] == true);
  CHECK(!j["notes"][1].contains("warning"));
  CHECK(r.text().find("warning: undefined: mbarrier wait with phase parity 2") != std::string::npos);
}
