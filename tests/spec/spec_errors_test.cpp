// Spec files and command-line values that are wrong: each must be refused
// with a message that names the field (or option), the value found and what
// is allowed, never crash, wrap around or be read as something else
// (docs/cli.md, "Validation"). The same inputs through the command line, with
// exit codes and time limits, are tests/regressions/expected.txt.
#include "tileverify/equiv.hpp"

#include "../../src/cli/args.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

namespace {

// A spec's text with `params` and any other top-level fields; one kernel.
std::string spec_text(const std::string& params, const std::string& more = "",
                      const std::string& kernel_more = "") {
  return R"({"kernel": {"ptx": "a.ptx", "kernel": "k", "block": [32, 1, 1])" + kernel_more + "}, \"params\": [" +
         params + "]" + (more.empty() ? "" : ", " + more) + "}";
}

std::string tensor(const std::string& shape, const std::string& role = "\"out\"", const std::string& dtype = "\"f32\"") {
  return R"({"name": "x", "dtype": )" + dtype + R"(, "shape": )" + shape + R"(, "role": )" + role + "}";
}

// The error of a spec that must be refused; it also must not carry the
// JSON library's own exception text.
std::string error_of(const std::string& text, const std::string& path = "s.json") {
  auto r = tileverify::parse_spec(text, path);
  INFO(text);
  CHECK_FALSE(r.spec.has_value());
  CHECK(r.error.rfind(path, 0) == 0);  // the file first
  CHECK(r.error.find("json.exception") == std::string::npos);
  CHECK(r.error.find("parse_error") == std::string::npos);
  return r.error;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Asserts that the error names every one of `parts` (the field, the value, the rule).
#define CHECK_ERROR(text, ...)                                                \
  do {                                                                        \
    std::string error_ = error_of(text);                                      \
    for (const char* part_ : {__VA_ARGS__}) {                                 \
      INFO("error: " << error_ << "\n  lacks: " << part_);                   \
      CHECK(has(error_, part_));                                              \
    }                                                                         \
  } while (0)

tileverify::Spec loads(const std::string& text) {
  auto r = tileverify::parse_spec(text, "s.json");
  INFO(text << "\n" << r.error);
  REQUIRE(r.spec.has_value());
  return *r.spec;
}

// A fresh folder for files, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("tileverify_spec_test_" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name, std::ios::binary) << text;
    return (path / name).string();
  }
};

}  // namespace

TEST_CASE("spec JSON syntax errors: file:line:column and what is wrong, in plain words") {
  CHECK_ERROR("garbage", "s.json:1:1: not valid JSON", "'garbage' is not a JSON value");
  CHECK_ERROR("{\n  \"grid\": [1],\n}", "s.json:2:14:", "trailing comma");
  CHECK_ERROR("{\"params\": [1, 2,]}", "s.json:1:17:", "trailing comma");
  CHECK_ERROR("{\"grid\": [1] \"cta\": [0]}", "s.json:1:14:", "expected ',' or '}' after the value of \"grid\"");
  CHECK_ERROR("{\"grid\" [1]}", "s.json:1:9:", "expected ':' after the key \"grid\"");
  CHECK_ERROR("{'grid': [1]}", "s.json:1:2:", "double quotes");
  CHECK_ERROR("{grid: [1]}", "s.json:1:2:", "a key must be in double quotes: \"grid\"");
  CHECK_ERROR("{\"grid\": [1, 2", "s.json:1:15:", "a ']' is missing");
  CHECK_ERROR("{\"grid\": [1]", "s.json:1:13:", "a '}' is missing");
  CHECK_ERROR("{\"kernel\": \"abc", "s.json:1:12:", "never closed");
  CHECK_ERROR("{\"grid\": [1e999]}", "s.json:1:11:", "1e999 is too large");
  CHECK_ERROR("{\"grid\": [NaN]}", "s.json:1:11:", "'NaN' is not a JSON number");
  CHECK_ERROR("{\"grid\": [True]}", "s.json:1:11:", "lower case, not 'True'");
  CHECK_ERROR("{\"grid\": [01]}", "s.json:1:11:", "'01'", "leading zeros");
  CHECK_ERROR("{\"grid\": [-]}", "s.json:1:11:", "'-' must be followed by digits");
  CHECK_ERROR("{\n// a comment\n}", "s.json:2:1:", "no comments");
  CHECK_ERROR("{} {}", "s.json:1:4:", "more text after the end of the JSON object");
  CHECK_ERROR("{\"a\": \"x\ny\"}", "s.json:1:9:", "a line break inside a string");
  CHECK_ERROR("{\"a\": \"\\q\"}", "s.json:1:8:", "'\\q' is not a JSON escape");
  CHECK_ERROR("{\"a\": \"\xff\"}", "s.json:1:8:", "not UTF-8");
  CHECK_ERROR("{\"a\": \"\xf0\x8d\x9a\x99\"}", "s.json:1:8:", "not UTF-8");  // an overlong form
  CHECK_ERROR("{\"a\": \"\\ud800\"}", "s.json:1:8:", "'\\ud800' is half of a UTF-16 pair");
  CHECK_ERROR("{\"a\": \"\\udc00\"}", "s.json:1:8:", "'\\udc00' is half of a UTF-16 pair");
  CHECK_ERROR("{\"a\": \"\\u12\"}", "s.json:1:8:", "4 hex digits");
  // nlohmann keeps the last of two equal keys; a spec with two is a mistake.
  CHECK_ERROR(spec_text(R"({"name": "x", "dtype": "f32", "shape": [4], "shape": [8], "role": "out"})"),
              "the key \"shape\" appears twice");
  // Nesting a million deep is refused before anything recurses over it (it
  // overflowed the stack), valid JSON or not.
  CHECK_ERROR(std::string(1000000, '[') + std::string(1000000, ']'), "s.json:1:65: lists and objects nested more than 64");
  CHECK_ERROR("{\"a\": " + std::string(1000000, '{'), "nested more than 64 deep");
  CHECK(loads(spec_text("", "\"description\": \"" + std::string(100000, '[') + "\"")).params.empty());  // in a string
  // Empty text, or only spaces: said so, not "unexpected end of input".
  CHECK_ERROR("", "s.json: is empty");
  CHECK_ERROR(" \n\t ", "s.json: is empty");
}

TEST_CASE("spec structure: an object, known keys (typos caught, with a suggestion), one kernel or ref/opt") {
  CHECK_ERROR("[1, 2]", "the spec is [1,2], a list", "JSON object");
  CHECK_ERROR(spec_text("", "\"grdi\": [1]"), "unknown key \"grdi\"", "did you mean \"grid\"?", "\"cta\"");
  CHECK_ERROR(spec_text(R"({"name": "x", "dtype": "f32", "shpae": [4], "role": "out"})"), "\"params[0]\"",
              "unknown key \"shpae\"", "did you mean \"shape\"?");
  CHECK_ERROR(spec_text("", "", ", \"dynamic_shard\": 4"), "\"kernel\" has the unknown key \"dynamic_shard\"",
              "did you mean \"dynamic_shared\"?");
  CHECK_ERROR(spec_text("", "\"zzzzzzzz\": 1"), "unknown key \"zzzzzzzz\"; its keys are");  // no far-fetched guess
  CHECK(!has(error_of(spec_text("", "\"zzzzzzzz\": 1")), "did you mean"));
  // A long key is cut in the message, not repeated whole.
  std::string long_key = error_of(spec_text("", "\"" + std::string(100000, 'k') + "\": 1"));
  CHECK(has(long_key, "unknown key \"" + std::string(60, 'k') + "...\""));
  CHECK(long_key.size() < 400);
  CHECK_ERROR(spec_text("", R"("ref": {"ptx": "a.ptx", "kernel": "k", "block": [1]})"), "\"kernel\" and \"ref\"/\"opt\"");
  CHECK_ERROR(R"({"opt": {"ptx": "a.ptx", "kernel": "k", "block": [1]}, "params": []})", "needs \"ref\"");
  CHECK_ERROR(R"({"kernel": {"ptx": "a.ptx", "kernel": "k", "block": [1]}})", "needs a \"params\" list");
  CHECK_ERROR(R"({"kernel": {"ptx": "a.ptx", "kernel": "k", "block": [1]}, "params": {"x": 1}})",
              "\"params\" is {\"x\":1}", "must be a list");
  CHECK_ERROR(R"({"kernel": "a.ptx", "params": []})", "\"kernel\" is \"a.ptx\"", "must be an object");
  CHECK_ERROR(R"({"kernel": {"ptx": "a.ptx"}, "params": []})", "\"kernel\" needs \"kernel\"");
  // "block" may be left to the PTX's .reqntid: checked at launch (spec_keys_test.cpp).
  CHECK(loads(R"({"kernel": {"ptx": "a.ptx", "kernel": "k"}, "params": []})").ref->block.count() == 0);
  CHECK_ERROR(spec_text("", "", R"(, "args": ["x", 3, null])"), "\"kernel.args[0]\" is \"x\": no entry of \"params\"",
              "\"params\" is empty");
  CHECK_ERROR(spec_text("", "", R"(, "args": [""])"), "\"kernel.args[0]\" is empty");
  CHECK_ERROR(R"({"kernel": {"ptx": 5, "kernel": "k", "block": [1]}, "params": []})", "\"kernel.ptx\" is 5",
              "must be a string");
  CHECK_ERROR(R"({"kernel": {"ptx": "a.ptx", "kernel": "", "block": [1]}, "params": []})", "\"kernel.kernel\" is empty");
  CHECK_ERROR(spec_text("", "", R"(, "symbols": {"c": 3})"), "\"kernel.symbols.c\" is 3", "must be a string");
  CHECK_ERROR(spec_text("", "", R"(, "symbols": ["c"])"), "\"kernel.symbols\" is [\"c\"]");
  CHECK_ERROR(spec_text("", "\"ctas\": \"some\""), "\"ctas\" is \"some\"", "only be \"all\"");
  CHECK_ERROR(spec_text("", "\"expect\": \"equivalnt\""), "\"expect\" is \"equivalnt\"", "not_equivalent");
  CHECK_ERROR(spec_text("", "\"expect\": 0"), "\"expect\" is 0");
  CHECK_ERROR(spec_text("", "\"description\": 5"), "\"description\" is 5", "must be a string");
  // What every spec of the repository uses still loads.
  tileverify::Spec s = loads(spec_text(tensor("[4]"), R"("expect": "race", "description": "d", "grid": [2], "cta": [1])",
                                       R"(, "description": "k", "dynamic_shared": 0)"));
  CHECK(s.expect == "race");
  CHECK(s.cta.x == 1);
}

TEST_CASE("spec blocks: 1 to 3 positive integers within CUDA's limits") {
  auto block = [](const std::string& b) {
    return R"({"kernel": {"ptx": "a.ptx", "kernel": "k", "block": )" + b + R"(}, "params": []})";
  };
  CHECK_ERROR(block("[0]"), "\"kernel.block\" [0]: x is 0", "must be positive");
  CHECK_ERROR(block("[2048]"), "\"kernel.block\" [2048]: x is 2048, more than 1024");
  CHECK_ERROR(block("[4294967296]"), "\"kernel.block\"", "x is 4294967296, more than 1024");
  CHECK_ERROR(block("[1, 1025]"), "y is 1025, more than 1024");
  CHECK_ERROR(block("[1, 1, 65]"), "z is 65, more than 64");
  CHECK_ERROR(block("[32, 32, 2]"), "\"kernel.block\" [32,32,2] has 2048 threads", "1024");
  CHECK_ERROR(block("[1, 1, 1, 1]"), "\"kernel.block\" is [1,1,1,1]", "1 to 3");
  CHECK_ERROR(block("[]"), "\"kernel.block\" is []", "1 to 3");
  CHECK_ERROR(block("128"), "\"kernel.block\" is 128", "a list of 1 to 3 positive integers");
  CHECK_ERROR(block("[-1]"), "x is -1, negative");
  CHECK_ERROR(block("[1.5]"), "x is 1.5, not an integer");
  CHECK_ERROR(block("[1e300]"), "x is 1e+300, far too large");
  CHECK_ERROR(block("[32.0]"), "x is 32.0, not written as an integer");
  CHECK_ERROR(block("[\"32\"]"), "x is \"32\", a string");
  CHECK_ERROR(block("[true]"), "x is true, a boolean");
  tileverify::Spec s = loads(block("[1024]"));
  CHECK((s.ref->block.x == 1024 && s.ref->block.y == 1 && s.ref->block.z == 1));
  s = loads(block("[16, 8, 8]"));
  CHECK(s.ref->block.z == 8);
}

TEST_CASE("spec grids and the CTA: positive, within CUDA's limits, the CTA inside every grid it runs in") {
  CHECK_ERROR(spec_text("", "\"grid\": [0]"), "\"grid\" [0]: x is 0", "each dimension of a grid must be positive");
  CHECK_ERROR(spec_text("", "\"grid\": [2147483648]"), "\"grid\" [2147483648]: x is 2147483648, more than 2147483647");
  CHECK_ERROR(spec_text("", "\"grid\": [1, 65536]"), "y is 65536, more than 65535");
  CHECK_ERROR(spec_text("", "\"grid\": [1, 1, 65536]"), "z is 65536, more than 65535");
  CHECK_ERROR(spec_text("", "\"grid\": [1e300]"), "\"grid\" [1e+300]", "far too large");
  CHECK_ERROR(spec_text("", "\"grid\": 4"), "\"grid\" is 4", "a list of 1 to 3 positive integers");
  CHECK_ERROR(spec_text("", "", ", \"grid\": [0]"), "\"kernel.grid\" [0]: x is 0");
  CHECK_ERROR(spec_text("", "\"grid\": [2, 1, 1], \"cta\": [4, 0, 0]"),
              "\"cta\" [4, 0, 0] lies outside \"grid\" [2, 1, 1]");
  CHECK_ERROR(spec_text("", "\"cta\": [1]"), "\"cta\" [1, 0, 0] lies outside \"grid\" [1, 1, 1]");
  CHECK_ERROR(spec_text("", "\"grid\": [4, 4], \"cta\": [0, 4]"), "\"cta\" [0, 4, 0] lies outside \"grid\" [4, 4, 1]");
  CHECK_ERROR(spec_text("", "\"grid\": [4], \"cta\": [-1]"), "\"cta\" [-1]: x is -1, negative");
  CHECK_ERROR(spec_text("", "\"grid\": [4], \"cta\": [99999999999999999999]"), "\"cta\"", "far too large");
  CHECK_ERROR(spec_text("", "\"grid\": [4], \"cta\": [4294967296]"), "\"cta\" [4294967296]: x is 4294967296");
  // One CTA of each kernel runs: it must lie in a kernel's own grid too...
  CHECK_ERROR(spec_text("", "\"grid\": [4], \"cta\": [2]", ", \"grid\": [1]"),
              "\"cta\" [2, 0, 0] lies outside \"kernel.grid\" [1, 1, 1]");
  // ... but with "ctas": "all" every CTA of each grid runs and "cta" is not used.
  tileverify::Spec s = loads(spec_text("", "\"grid\": [4], \"cta\": [2], \"ctas\": \"all\"", ", \"grid\": [1]"));
  CHECK(s.all_ctas);
  s = loads(spec_text("", "\"grid\": [2147483647, 65535, 65535], \"cta\": [2147483646, 65534, 65534]"));
  CHECK(s.grid.x == 2147483647u);
  CHECK(s.cta.z == 65534u);
}

TEST_CASE("spec dynamic_shared: a non-negative integer up to 2^32") {
  CHECK_ERROR(spec_text("", "", ", \"dynamic_shared\": -1"), "\"kernel.dynamic_shared\" is -1, negative",
              "from 0 to 4294967296");
  CHECK_ERROR(spec_text("", "", ", \"dynamic_shared\": 4611686018427387904"),
              "\"kernel.dynamic_shared\" is 4611686018427387904, too large");
  CHECK_ERROR(spec_text("", "", ", \"dynamic_shared\": 4294967297"), "is 4294967297, too large");
  CHECK_ERROR(spec_text("", "", ", \"dynamic_shared\": 1.5"), "\"kernel.dynamic_shared\" is 1.5, not an integer");
  CHECK_ERROR(spec_text("", "", ", \"dynamic_shared\": \"12\""), "\"kernel.dynamic_shared\" is \"12\", a string");
  CHECK(loads(spec_text("", "", ", \"dynamic_shared\": 4294967296")).ref->dynamic_shared == 4294967296ull);
}

TEST_CASE("spec shapes: non-empty lists of positive integers, at most 2^48 elements, no overflow") {
  CHECK_ERROR(spec_text(tensor("[-1]")), "\"params[0].shape\" of 'x' is [-1]: -1 is negative");
  CHECK_ERROR(spec_text(tensor("[0]")), "\"params[0].shape\" of 'x' is [0]: 0 is zero");
  CHECK_ERROR(spec_text(tensor("[1e300]")), "\"params[0].shape\"", "1e+300 is far too large");
  CHECK_ERROR(spec_text(tensor("[512.5]")), "\"params[0].shape\"", "512.5 is not an integer");
  CHECK_ERROR(spec_text(tensor("[\"12\"]")), "\"params[0].shape\"", "\"12\" is a string");
  CHECK_ERROR(spec_text(tensor("512")), "\"params[0].shape\" of 'x' is 512", "a list of positive integers");
  CHECK_ERROR(spec_text(tensor("[]")), "\"params[0].shape\" of 'x' is []");
  CHECK_ERROR(spec_text(tensor("[4294967296, 4294967296]")), "'x'", "[4294967296,4294967296]",
              "has more than 2^64 elements, more than any GPU memory holds");
  CHECK_ERROR(spec_text(tensor("[16777216, 33554432]")), "'x'", "has 562949953421312 elements",
              "more than any GPU memory holds");
  CHECK_ERROR(spec_text(tensor("[65536, 65536, 65536, 65536, 65536]")), "'x'", "more than 2^64");
  // Large but possible: whether it fits is the run's memory budget to say.
  CHECK(loads(spec_text(tensor("[4000000000]"))).params[0].shape[0] == 4000000000ull);
  CHECK(loads(spec_text(tensor("[16777216, 16777216]"))).params[0].shape[1] == 16777216ull);  // 2^48
}

TEST_CASE("spec params: names, dtypes, roles, scalars") {
  CHECK_ERROR(spec_text(tensor("[4]", "\"out\"", "32")), "\"params[0].dtype\" is 32, a number", "one of f32");
  CHECK_ERROR(spec_text(tensor("[4]", "\"out\"", "\"f33\"")), "\"params[0].dtype\" is \"f33\"", "bf16");
  CHECK_ERROR(spec_text(tensor("[4]", "\"output\"")), "\"params[0].role\" is \"output\"", "\"inout\"");
  CHECK_ERROR(spec_text(tensor("[4]", "1")), "\"params[0].role\" is 1", "must be a string");
  CHECK_ERROR(spec_text(tensor("[4]") + ", " + tensor("[8]")), "\"params[1].name\" \"x\" is already the name");
  CHECK_ERROR(spec_text(R"({"name": "", "dtype": "f32", "value": 1})"), "\"params[0].name\" is empty");
  CHECK_ERROR(spec_text(R"({"name": 7, "dtype": "f32", "value": 1})"), "\"params[0].name\" is 7");
  CHECK_ERROR(spec_text("5"), "\"params[0]\" is 5", "an object");
  CHECK_ERROR(spec_text(R"({"name": "x", "dtype": "f32"})"), "params[0] ('x') needs \"shape\" and \"role\"");
  CHECK_ERROR(spec_text(R"({"name": "n", "dtype": "s32", "value": 4, "shape": [1]})"), "params[0] ('n')",
              "a \"value\" (a scalar) and a \"shape\"");
  CHECK_ERROR(spec_text(R"({"name": "n", "dtype": "s32", "value": [4]})"), "('n')", "\"value\" is [4], a list");
  CHECK_ERROR(spec_text(R"({"name": "a", "dtype": "f32", "value": 3.5e38})"), "('a')", "out of the range of f32");
  CHECK_ERROR(spec_text(R"({"name": "n", "dtype": "u32", "value": 1e300})"), "('n')", "1e+300", "must be an integer");
  tileverify::Spec s = loads(spec_text(R"({"name": "a", "dtype": "f32", "value": 3.4028234663852886e38})"));
  CHECK(std::uint64_t(s.params[0].value) == 0x7f7fffffu);  // FLT_MAX itself is in range
}

TEST_CASE("load_spec: directories, empty and missing files, and the PTX paths, said plainly") {
  TempDir dir;
  std::string folder = dir.path.string();
  auto r = tileverify::load_spec(folder);
  CHECK_FALSE(r.spec);
  CHECK(r.error == folder + ": is a directory, not a spec file");
  r = tileverify::load_spec(dir.write("empty.json", ""));
  CHECK(r.error == folder + "/empty.json: is empty");
  r = tileverify::load_spec(dir.write("blank.json", "\n  \n"));
  CHECK(has(r.error, "blank.json: is empty"));
  r = tileverify::load_spec(folder + "/nope.json");
  CHECK(r.error == folder + "/nope.json: cannot read the spec file (No such file or directory)");
  r = tileverify::load_spec(dir.write("garbage.json", "{\n  \"grid\": [1],\n  oops\n}"));
  CHECK(r.error == folder + "/garbage.json:3:3: not valid JSON: a key must be in double quotes: \"oops\", not oops");

  // PTX paths: checked at load, relative to the spec's folder.
  auto spec_for = [](const std::string& ptx) {
    return R"({"ref": {"ptx": ")" + ptx + R"(", "kernel": "k", "block": [1]}, "opt": {"ptx": "k.ptx", "kernel": "k",
      "block": [1]}, "params": []})";
  };
  dir.write("k.ptx", ".version 8.0\n");
  r = tileverify::load_spec(dir.write("missing.json", spec_for("x.ptx")));
  CHECK(r.error == folder + "/missing.json: \"ref.ptx\": no such file \"x.ptx\" (relative to the spec's folder " +
                       folder + ")");
  fs::create_directories(dir.path / "sub.ptx");
  r = tileverify::load_spec(dir.write("isdir.json", spec_for("sub.ptx")));
  CHECK(r.error == folder + "/isdir.json: \"ref.ptx\": \"sub.ptx\" is a directory, not a PTX file (relative to the "
                            "spec's folder " + folder + ")");
  r = tileverify::load_spec(dir.write("absolute.json", spec_for(folder + "/gone.ptx")));
  CHECK(r.error == folder + "/absolute.json: \"ref.ptx\": no such file \"" + folder + "/gone.ptx\"");
  r = tileverify::load_spec(dir.write("good.json", spec_for("k.ptx")));
  INFO(r.error);
  REQUIRE(r.spec);
  CHECK(r.spec->ref->ptx == folder + "/k.ptx");
  // parse_spec reads no files: a spec is checked as text alone.
  CHECK(tileverify::parse_spec(spec_for("x.ptx"), "s.json").spec.has_value());
}

TEST_CASE("command-line counts: whole numbers in range, messages naming option, value and range") {
  namespace cli = tileverify::cli;
  std::uint64_t v = 7;
  CHECK(cli::parse_count("--trials", "100", 1, 1000000000, "random inputs", &v).empty());
  CHECK(v == 100);
  std::string e = cli::parse_count("--trials", "0", 1, 1000000000, "random inputs", &v);
  CHECK(e == "--trials 0: too small; it must be a whole number from 1 to 1000000000 (random inputs)");
  CHECK(v == 100);  // untouched on an error
  CHECK(has(cli::parse_count("--threads", "1e8", 0, 1024, "t", &v), "--threads 1e8: not a whole number"));
  CHECK(has(cli::parse_count("--threads", "1025", 0, 1024, "t", &v), "--threads 1025: too large"));
  CHECK(has(cli::parse_count("--threads", "-1", 0, 1024, "t", &v), "--threads -1: negative"));
  CHECK(has(cli::parse_count("--threads", "", 0, 1024, "t", &v), "--threads '': not a whole number"));
  CHECK(has(cli::parse_count("--threads", " 4", 0, 1024, "t", &v), "--threads ' 4': not a whole number"));
  CHECK(has(cli::parse_count("--seed", "18446744073709551616", 0, UINT64_MAX, "s", &v), "too large"));
  CHECK(cli::parse_count("--seed", "18446744073709551615", 0, UINT64_MAX, "s", &v).empty());
  CHECK(v == UINT64_MAX);
}

TEST_CASE("command-line --cta: 1 to 3 components below 2^31, missing ones 0, no wraparound") {
  namespace cli = tileverify::cli;
  tileverify::Dim3 d{9, 9, 9};
  CHECK(cli::parse_cta("3", &d).empty());
  CHECK((d.x == 3 && d.y == 0 && d.z == 0));
  CHECK(cli::parse_cta("1,2,3", &d).empty());
  CHECK((d.x == 1 && d.y == 2 && d.z == 3));
  CHECK(cli::parse_cta("2147483647", &d).empty());
  CHECK(d.x == 2147483647u);
  CHECK(has(cli::parse_cta("4294967296", &d), "--cta 4294967296: x is 4294967296, too large"));
  CHECK(d.x == 2147483647u);  // untouched
  CHECK(has(cli::parse_cta("99999999999999999999,0,0", &d), "x is 99999999999999999999, too large"));
  CHECK(has(cli::parse_cta("2147483648", &d), "too large"));
  CHECK(has(cli::parse_cta("1,2,3,4", &d), "more than 3 components"));
  CHECK(has(cli::parse_cta("1,,3", &d), "y is '', not a whole number"));
  CHECK(has(cli::parse_cta("-1", &d), "x is -1, not a whole number"));
  CHECK(has(cli::parse_cta("", &d), "--cta '': x is '', not a whole number"));
}

TEST_CASE("command-line --timeout: 0 (no limit) or positive seconds up to 10^6, finite, plain notation") {
  namespace cli = tileverify::cli;
  double s = -1;
  CHECK(cli::parse_timeout("300", &s).empty());
  CHECK(s == 300);
  CHECK(cli::parse_timeout("0", &s).empty());
  CHECK(s == 0);
  CHECK(cli::parse_timeout("2.5", &s).empty());
  CHECK(s == 2.5);
  CHECK(cli::parse_timeout("1e6", &s).empty());
  CHECK(s == 1e6);
  CHECK(has(cli::parse_timeout("1e300", &s), "--timeout 1e300: too large"));
  CHECK(has(cli::parse_timeout("1e999", &s), "--timeout 1e999: too large"));
  CHECK(has(cli::parse_timeout("1000001", &s), "too large"));
  CHECK(has(cli::parse_timeout("-5", &s), "--timeout -5: negative"));
  CHECK(has(cli::parse_timeout("inf", &s), "--timeout inf: not a number"));
  CHECK(has(cli::parse_timeout("nan", &s), "not a number"));
  CHECK(has(cli::parse_timeout("0x10", &s), "not a number"));
  CHECK(has(cli::parse_timeout("10s", &s), "--timeout 10s: not a number"));
  CHECK(has(cli::parse_timeout("1e-400", &s), "--timeout 1e-400: too small"));
  CHECK(has(cli::parse_timeout("0.0001", &s), "too small"));
  CHECK(cli::parse_timeout("5", &s).empty());
  CHECK(s == 5);
}

TEST_CASE("command-line --max-memory: bytes with K, M, G, T (binary), positive, no overflow") {
  namespace cli = tileverify::cli;
  std::uint64_t b = 0;
  CHECK(cli::parse_size("--max-memory", "4096", &b).empty());
  CHECK(b == 4096);
  CHECK(cli::parse_size("--max-memory", "8G", &b).empty());
  CHECK(b == (std::uint64_t(8) << 30));
  CHECK(cli::parse_size("--max-memory", "512m", &b).empty());
  CHECK(b == (std::uint64_t(512) << 20));
  CHECK(cli::parse_size("--max-memory", "2TiB", &b).empty());
  CHECK(b == (std::uint64_t(2) << 40));
  CHECK(cli::parse_size("--max-memory", "1K", &b).empty());
  CHECK(b == 1024);
  CHECK(has(cli::parse_size("--max-memory", "1Q", &b), "--max-memory 1Q: not a size"));
  CHECK(has(cli::parse_size("--max-memory", "0", &b), "--max-memory 0: zero"));
  CHECK(has(cli::parse_size("--max-memory", "-1G", &b), "--max-memory -1G: negative"));
  CHECK(has(cli::parse_size("--max-memory", "1.5G", &b), "not a size"));
  CHECK(has(cli::parse_size("--max-memory", "16777216T", &b), "too large"));
  CHECK(has(cli::parse_size("--max-memory", "18446744073709551616", &b), "too large"));
  CHECK(b == 1024);
  CHECK(cli::size_text(512) == "512 bytes");
  CHECK(cli::size_text(std::uint64_t(3) << 29) == "1.5 GiB");
  CHECK(cli::size_text(std::uint64_t(12) << 30) == "12 GiB");
  // Three significant digits (the evaluator's memory-budget messages use
  // the same function): a budget and a need just apart stay apart.
  CHECK(cli::size_text(40000) == "39.1 KiB");
  CHECK(cli::size_text(std::uint64_t(11.8 * double(std::uint64_t(1) << 30))) == "11.8 GiB");
  CHECK(cli::size_text(std::uint64_t(4000000000) * 32) == "119 GiB");
  CHECK(cli::size_text(UINT64_MAX) == "more than 16 EiB");
}
