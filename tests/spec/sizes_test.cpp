// Size variables in spec files (docs/cli.md, "Sizes and boundary suites"):
// size expressions, sizes in shapes, values and grids, overrides, boundary
// suites, and a size-parametric spec verified at several sizes.
#include "../../src/cli/args.hpp"
#include "../../src/spec/sizes.hpp"
#include "spec_helpers.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <string>

namespace fs = std::filesystem;
using spec_test::has;
using tileverify::internal::eval_size;
using Sizes = std::map<std::string, std::int64_t>;

namespace {

const fs::path kCases = fs::path(TILEVERIFY_TEST_DIR) / "cases";
const fs::path kTriton = fs::path(TILEVERIFY_TEST_DIR).parent_path() / "examples" / "triton" / "sm80";

std::int64_t value_of(const std::string& expr, const Sizes& sizes = {{"M", 129}, {"N", 1024}, {"K", 96}}) {
  tileverify::internal::SizeValue v = eval_size(expr, sizes);
  INFO(expr << ": " << v.error);
  REQUIRE(v.value.has_value());
  return *v.value;
}

std::string error_of(const std::string& expr, const Sizes& sizes = {{"M", 129}, {"N", 1024}, {"K", 96}}) {
  tileverify::internal::SizeValue v = eval_size(expr, sizes);
  INFO(expr);
  REQUIRE_FALSE(v.value.has_value());
  return v.error;
}

// One kernel (tests/cases/spec_keys has its PTX) whose launch and
// parameters the spec below gives by size.
std::string sized_spec(const std::string& extra = "") {
  return R"({
    "sizes": {"M": 129, "N": 1024, "K": 96},)" + extra + R"J(
    "kernel": {"ptx": "../softmax_online.ptx", "kernel": "online_softmax", "block": ["min(K, 64)", 1, 1],
               "grid": ["ceil(N/64)", "ceil(M/64)"]},
    "grid": ["ceil(N/64)", "ceil(M/64)", 1],
    "cta": ["ceil(N/64) - 1", 0],
    "params": [
      {"name": "x", "dtype": "f32", "shape": ["M", "K"], "role": "in"},
      {"name": "y", "dtype": "f32", "shape": ["M*K"], "role": "out"},
      {"name": "n", "dtype": "s32", "value": "K - 100"},
      {"name": "f", "dtype": "f32", "value": "K / 2"},
      {"name": "bits", "dtype": "u32", "value": "0x3fc00000"}
    ]
  })J";
}

}  // namespace

TEST_CASE("size expressions: numbers, names, precedence, ceil, min and max") {
  CHECK(value_of("42") == 42);
  CHECK(value_of("M") == 129);
  CHECK(value_of("M + N * K") == 129 + 1024 * 96);  // * before +
  CHECK(value_of("(M + N) * K") == (129 + 1024) * 96);
  CHECK(value_of("N - K - 1") == 1024 - 96 - 1);  // left to right
  CHECK(value_of("N / 64 / 2") == 8);
  CHECK(value_of("M / 64") == 2);  // integer division
  CHECK(value_of("M % 64") == 1);
  CHECK(value_of("-K + 100") == 4);
  CHECK(value_of("2 * -3") == -6);
  CHECK(value_of("-7 / 2") == -3);  // toward zero, as C divides
  CHECK(value_of("ceil(M/64)") == 3);
  CHECK(value_of("ceil(N/64)") == 16);
  CHECK(value_of("ceil((M + 1) * 2 / 64)") == 5);  // 260 / 64 rounded up
  CHECK(value_of("ceil(-7/2)") == -3);             // the exact ceiling
  CHECK(value_of("min(M, K)") == 96);
  CHECK(value_of("max(M, K) + 1") == 130);
  CHECK(value_of("min(max(M, 200), ceil(N/3))") == 200);
  CHECK(value_of(" ceil ( N / 64 ) ") == 16);
  // The names the value depends on, for messages.
  CHECK(eval_size("ceil(N/64) + 1", {{"M", 1}, {"N", 64}}).names == std::set<std::string>{"N"});
}

TEST_CASE("size expressions: errors name the column") {
  CHECK(error_of("K+") == "expected a number, a size name or '(' at column 3");
  CHECK(error_of("") == "expected a number, a size name or '(' at column 1");
  CHECK(error_of("M K") == "expected an operator (+ - * / %) or the end of the expression, found 'K' at column 3");
  CHECK(has(error_of("Q * 2"), "unknown size name 'Q' (the sizes are K, M, N) at column 1"));
  CHECK(has(error_of("M + Q", {}), "unknown size name 'M' (the spec has no \"sizes\") at column 1"));
  CHECK(error_of("(M + 1") == "expected ')' (to close the '(' at column 1), found the end of the expression at column 7");
  CHECK(has(error_of("ceil(N)"), "ceil takes a division, ceil(a/b) at column 6"));
  CHECK(has(error_of("ceil(N/64 + 1)"), "ceil takes a division"));
  CHECK(has(error_of("ceil N"), "expected '(' after ceil"));
  CHECK(has(error_of("min(M)"), "expected ',' (min takes two arguments, min(a, b)), found ')' at column 6"));
  CHECK(has(error_of("sqrt(M)"), "'sqrt' is not a function (the functions are ceil(a/b), min(a, b) and max(a, b)) at column 1"));
  CHECK(error_of("M / (K - 96)") == "division by zero at column 3");
  CHECK(error_of("ceil(M / (K - K))") == "division by zero at column 8");
  CHECK(error_of("M % 0") == "remainder of a division by zero at column 3");
  CHECK(error_of("1.5") == "sizes are integers: no fractions at column 2");
  CHECK(error_of("2M") == "expected an operator after the number at column 2");
  CHECK(has(error_of("99999999999999999999"), "too large for 64 bits at column 1"));
  CHECK(error_of("N * N * N * N * N * N * N") == "the value overflows 64 bits at column 23");
  CHECK(has(error_of(std::string(200, '(') + "1" + std::string(200, ')')), "nested more than 64 deep"));
  CHECK(has(error_of(std::string(2000, '1')), "too long"));
}

TEST_CASE("sizes: shapes, values, grids, blocks and the CTA take expressions") {
  tileverify::Spec s = spec_test::loads(kCases, sized_spec());
  CHECK(s.sizes == Sizes{{"M", 129}, {"N", 1024}, {"K", 96}});
  CHECK(s.grid.x == 16);
  CHECK(s.grid.y == 3);
  CHECK(s.grid.z == 1);
  CHECK(s.cta.x == 15);
  REQUIRE(s.ref->grid.has_value());
  CHECK(s.ref->grid->x == 16);
  CHECK(s.ref->grid->y == 3);
  CHECK(s.ref->block.x == 64);
  CHECK(s.params[0].shape == std::vector<std::uint64_t>{129, 96});
  CHECK(s.params[1].shape == std::vector<std::uint64_t>{129 * 96});
  CHECK(s.params[2].value == -4);          // an s32 scalar may be negative
  CHECK(s.params[3].value == 0x42400000);  // 48 as an f32
  CHECK(s.params[4].value == 0x3fc00000);  // a hex string is still the bits

  // The same spec with numbers is the same Spec.
  tileverify::Spec plain = spec_test::loads(kCases, R"({
    "kernel": {"ptx": "../softmax_online.ptx", "kernel": "online_softmax", "block": [64, 1, 1], "grid": [16, 3]},
    "grid": [16, 3, 1], "cta": [15, 0],
    "params": [
      {"name": "x", "dtype": "f32", "shape": [129, 96], "role": "in"},
      {"name": "y", "dtype": "f32", "shape": [12384], "role": "out"},
      {"name": "n", "dtype": "s32", "value": -4},
      {"name": "f", "dtype": "f32", "value": 48},
      {"name": "bits", "dtype": "u32", "value": "0x3fc00000"}
    ]
  })");
  CHECK(plain.sizes.empty());
  CHECK(plain.params[0].shape == s.params[0].shape);
  CHECK(plain.params[3].value == s.params[3].value);
}

TEST_CASE("sizes: tensor map dims and box take expressions") {
  tileverify::Spec s = spec_test::loads(kCases / "tensor_maps", R"J({
    "sizes": {"R": 32, "C": 16},
    "kernel": {"ptx": "tma_tiles.ptx", "kernel": "scale_rows_from_bottom", "block": [128]},
    "grid": ["R / 16"],
    "params": [
      {"name": "A", "dtype": "f32", "shape": ["R", "C"], "role": "in"},
      {"name": "a_map", "tensor_map": {"tensor": "A", "box": ["C", 16], "dims": ["C", "R"]}},
      {"name": "C", "dtype": "f32", "shape": ["R", "C"], "role": "out"},
      {"name": "c_map", "tensor_map": {"tensor": "C", "box": [16, "min(R, 16)"]}},
      {"name": "m", "dtype": "s32", "value": "R"}
    ]
  })J");
  CHECK(s.grid.x == 2);
  CHECK(s.params[1].map.box == std::vector<std::uint32_t>{16, 16});
  CHECK(s.params[1].map.dims == std::vector<std::uint64_t>{16, 32});
  CHECK(s.params[3].map.box == std::vector<std::uint32_t>{16, 16});
}

TEST_CASE("sizes: errors name the field, the expression and the column") {
  auto refused = [](const std::string& params) {
    return spec_test::parse_error(kCases, R"({"sizes": {"M": 129, "K": 96},
      "kernel": {"ptx": "../softmax_online.ptx", "kernel": "online_softmax", "block": [128]},
      "grid": [1], "params": [)" + params + "]}");
  };
  CHECK(has(refused(R"({"name": "x", "dtype": "f32", "shape": ["M", "K+"], "role": "in"})"),
            R"(inline.json: "params[0].shape[1]": "K+" : expected a number, a size name or '(' at column 3)"));
  CHECK(has(refused(R"({"name": "x", "dtype": "f32", "shape": ["Q"], "role": "in"})"),
            R"("params[0].shape[0]": "Q" : unknown size name 'Q' (the sizes are K, M) at column 1)"));
  // A shape of 0 or less.
  CHECK(has(refused(R"({"name": "x", "dtype": "f32", "shape": ["K - 96"], "role": "in"})"),
            R"("params[0].shape[0]": "K - 96" is 0 at K=96, but a shape dimension must be a positive integer)"));
  CHECK(has(refused(R"J({"name": "x", "dtype": "f32", "shape": ["M / (K - 96)"], "role": "in"})J"),
            R"J("params[0].shape[0]": "M / (K - 96)" : division by zero at column 3)J"));
  // A value out of its dtype's range is the dtype's rule, as for a number.
  CHECK(has(refused(R"({"name": "n", "dtype": "u32", "value": "K - 100"})"), "negative, but the dtype is unsigned"));
  CHECK(has(refused(R"({"name": "n", "dtype": "s8", "value": "M"})"), "out of the range of the dtype"));

  auto grid_refused = [](const std::string& grid) {
    return spec_test::parse_error(kCases, R"({"sizes": {"N": 100},
      "kernel": {"ptx": "../softmax_online.ptx", "kernel": "online_softmax", "block": [128]},
      "grid": )" + grid + R"(, "params": []})");
  };
  CHECK(has(grid_refused(R"(["N / 128"])"), R"("grid[0]": "N / 128" is 0 at N=100, but a grid dimension must be a positive integer)"));
  CHECK(has(grid_refused(R"([1, "N * 1000"])"), "y is 100000, more than 65535"));  // CUDA's limit, as for numbers
  CHECK(has(grid_refused(R"(["ceil(N/64"])"), R"("grid[0]": "ceil(N/64" : expected ')' (to close ceil( at column 1))"));

  // Without "sizes", a string stays what it always was: an error for a
  // shape, the bits for a value.
  CHECK(has(spec_test::parse_error(kCases, R"({"kernel": {"ptx": "../softmax_online.ptx", "kernel": "k", "block": [1]},
      "grid": [1], "params": [{"name": "x", "dtype": "f32", "shape": ["N"], "role": "in"}]})"),
            "a string (write the number without quotes)"));

  // "sizes" itself.
  auto decl_refused = [](const std::string& decl) {
    return spec_test::parse_error(kCases, "{" + decl + R"(,
      "kernel": {"ptx": "../softmax_online.ptx", "kernel": "online_softmax", "block": [128]},
      "grid": [1], "params": []})");
  };
  CHECK(has(decl_refused(R"("sizes": [1])"), "\"sizes\" is [1]: it must be an object"));
  CHECK(has(decl_refused(R"("sizes": {"2M": 1})"), "\"sizes\" has the key \"2M\": a size name is an identifier"));
  CHECK(has(decl_refused(R"("sizes": {"ceil": 1})"), "other than ceil, min and max"));
  CHECK(has(decl_refused(R"("sizes": {"M": 0})"), "\"sizes.M\" is 0, too small"));
  CHECK(has(decl_refused(R"("sizes": {"M": "64"})"), "\"sizes.M\" is \"64\", a string"));
  CHECK(has(decl_refused(R"("sizes": {"M": 64}, "tiles": {"N": 16})"),
            "\"tiles\" has the key \"N\", which is no size of \"sizes\"; the sizes are M"));
  CHECK(has(decl_refused(R"("sizes": {"M": 64}, "tiles": {"M": 0})"), "\"tiles.M\" is 0, too small"));
  CHECK(has(decl_refused(R"("tiles": {"M": 16})"), "\"tiles\" needs \"sizes\""));
  CHECK(has(decl_refused(R"("sizes": {"M": 64}, "suite": [])"), "\"suite\" is []: it must be a list of sizes"));
  CHECK(has(decl_refused(R"("sizes": {"M": 64}, "suite": [{"M": 1}, {"MM": 3}])"),
            "\"suite[1]\" has the key \"MM\", which is no size of \"sizes\" (did you mean \"M\"?)"));
  CHECK(has(decl_refused(R"("sizes": {"M": 64}, "suite": [{"M": -1}])"), "\"suite[0].M\" is -1, negative"));
  CHECK(has(decl_refused(R"("size": {"M": 64})"), "did you mean \"sizes\"?"));
}

TEST_CASE("sizes: overrides choose other sizes; an override must name a size") {
  const std::string text = sized_spec();
  const std::string path = (kCases / "inline.json").string();
  tileverify::SpecResult r = tileverify::parse_spec(text, path, {{"M", 1}, {"K", 17}});
  INFO(r.error);
  REQUIRE(r.spec.has_value());
  CHECK(r.spec->sizes == Sizes{{"M", 1}, {"N", 1024}, {"K", 17}});
  CHECK(r.spec->grid.y == 1);
  CHECK(r.spec->ref->block.x == 17);
  CHECK(r.spec->params[0].shape == std::vector<std::uint64_t>{1, 17});

  r = tileverify::parse_spec(text, path, {{"Q", 4}});
  REQUIRE_FALSE(r.spec.has_value());
  CHECK(has(r.error, "inline.json: the size \"Q\" (given as Q=4) is not in \"sizes\"; the sizes are K, M, N"));
  r = tileverify::parse_spec(text, path, {{"k", 4}});
  CHECK(has(r.error, "(did you mean \"K\"?)"));
  r = tileverify::parse_spec(text, path, {{"M", 0}});
  CHECK(has(r.error, "the size M=0 is not positive"));
  r = tileverify::parse_spec(text, path, {{"N", 10}});
  REQUIRE(r.spec.has_value());
  CHECK(r.spec->cta.x == 0);  // ceil(10/64) - 1: the last tile is the first
  // A combination the spec cannot take is refused as any spec would be.
  r = tileverify::parse_spec(text, path, {{"M", 64 * 70000}});
  CHECK(has(r.error, "y is 70000, more than 65535"));
  // A spec without "sizes" takes no overrides.
  r = tileverify::parse_spec(R"({"kernel": {"ptx": "../softmax_online.ptx", "kernel": "k", "block": [1]}, "grid": [1],
                                 "params": []})",
                             path, {{"M", 1}});
  CHECK(has(r.error, "sizes were given (M=1) but the spec has no \"sizes\""));
  // load_spec: the same, from a file.
  const std::string file = (kTriton / "vadd.sizes.json").string();
  tileverify::SpecResult loaded = tileverify::load_spec(file, {{"N", 257}});
  INFO(loaded.error);
  REQUIRE(loaded.spec.has_value());
  CHECK(loaded.spec->grid.x == 2);
  CHECK(loaded.spec->params[0].shape == std::vector<std::uint64_t>{257});
  CHECK(loaded.spec->params[3].value == 257);
  CHECK(has(tileverify::load_spec(file, {{"M", 2}}).error, "vadd.sizes.json: the size \"M\""));
}

TEST_CASE("boundary suites: the values for a tile and the combinations") {
  CHECK(tileverify::internal::boundary_values(64) == std::vector<std::int64_t>{1, 63, 64, 65, 129, 193, 1057});
  CHECK(tileverify::internal::boundary_values(16) == std::vector<std::int64_t>{1, 15, 16, 17, 33, 53, 265});
  CHECK(tileverify::internal::boundary_values(32) == std::vector<std::int64_t>{1, 31, 32, 33, 65, 97, 529});
  CHECK(tileverify::internal::boundary_values(1) == std::vector<std::int64_t>{1, 1, 1, 2, 3, 5, 17});
  CHECK(tileverify::internal::boundary_values(2) == std::vector<std::int64_t>{1, 1, 2, 3, 5, 7, 33});

  // One size: its seven values.
  auto one = tileverify::boundary_sizes({{"N", 1000}}, {{"N", 256}});
  std::vector<std::int64_t> ns;
  for (const Sizes& m : one) ns.push_back(m.at("N"));
  CHECK(ns == std::vector<std::int64_t>{1, 255, 256, 257, 513, 769, 4225});

  // Two sizes: each varied alone (the other at its default), then both
  // together at each role; repeats once.
  auto two = tileverify::boundary_sizes({{"M", 129}, {"K", 96}}, {{"M", 64}, {"K", 16}});
  std::vector<Sizes> want;
  for (std::int64_t k : {1, 15, 16, 17, 33, 53, 265}) want.push_back({{"M", 129}, {"K", k}});
  // M's 2*64+1 is its default: the spec's own sizes are one of the cases.
  for (std::int64_t m : {1, 63, 64, 65, 129, 193, 1057}) want.push_back({{"M", m}, {"K", 96}});
  want.push_back({{"M", 1}, {"K", 1}});
  want.push_back({{"M", 63}, {"K", 15}});
  want.push_back({{"M", 64}, {"K", 16}});
  want.push_back({{"M", 65}, {"K", 17}});
  // {M 129, K 33} (both at 2*tile+1) is K alone at 33: not repeated.
  want.push_back({{"M", 193}, {"K", 53}});
  want.push_back({{"M", 1057}, {"K", 265}});
  CHECK(two == want);

  // Without "tiles", 32.
  auto untiled = tileverify::boundary_sizes({{"N", 5}}, {});
  CHECK(untiled.size() == 7);
  CHECK(untiled[1].at("N") == 31);
  CHECK(tileverify::boundary_sizes({{"N", 5}}, {}, 8)[1].at("N") == 7);
}

TEST_CASE("boundary suites: combinations the spec cannot take are skipped with the reason") {
  const fs::path dir = fs::temp_directory_path() / "tileverify_sizes_test";
  fs::create_directories(dir);
  const fs::path file = dir / "suite.json";
  {
    std::FILE* f = std::fopen(file.string().c_str(), "w");
    REQUIRE(f);
    // The CTA is the second tile: at N < 65 there is none.
    const std::string text = R"({"sizes": {"N": 200}, "tiles": {"N": 64},
      "suite": [{"N": 1}, {"N": 130}],
      "kernel": {"ptx": ")" + (kCases / "softmax_online.ptx").string() + R"J(", "kernel": "online_softmax", "block": [128]},
      "grid": ["ceil(N/64)"], "cta": [1],
      "params": [{"name": "x", "dtype": "f32", "shape": ["N"], "role": "in"}]})J";
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  tileverify::SizeSuite b = tileverify::load_suite(file.string(), tileverify::SuiteKind::Boundary);
  INFO(b.error);
  REQUIRE(b.error.empty());
  CHECK(b.names == std::vector<std::string>{"N"});
  REQUIRE(b.cases.size() == 7);
  CHECK(b.cases[0].sizes.at("N") == 1);
  CHECK_FALSE(b.cases[0].spec.has_value());
  CHECK(has(b.cases[0].skipped, "\"cta\" [1, 0, 0] lies outside \"grid\" [1, 1, 1]"));
  CHECK(b.cases[0].error.empty());
  // N = 1, 63 and 64 are one tile: no CTA 1; 65 and above are two or more.
  for (const tileverify::SizeCase& c : b.cases)
    CHECK(c.spec.has_value() == (c.sizes.at("N") > 64));

  // The spec's own list: a case it cannot take is an error, not skipped.
  tileverify::SizeSuite l = tileverify::load_suite(file.string(), tileverify::SuiteKind::Listed);
  REQUIRE(l.error.empty());
  REQUIRE(l.cases.size() == 2);
  CHECK(l.cases[0].skipped.empty());
  CHECK(has(l.cases[0].error, "suite.json: \"cta\" [1, 0, 0] lies outside"));
  REQUIRE(l.cases[1].spec.has_value());
  CHECK(l.cases[1].spec->grid.x == 3);

  // Overrides move the base the suite varies.
  tileverify::SizeSuite o = tileverify::load_suite(file.string(), tileverify::SuiteKind::Listed, {{"N", 1000}});
  REQUIRE(o.cases.size() == 2);
  CHECK(o.cases[1].sizes.at("N") == 130);
  // A spec without "sizes" or "suite" has no suite.
  CHECK(has(tileverify::load_suite((kCases / "softmax_online.json").string(), tileverify::SuiteKind::Boundary).error,
            "the spec has no \"sizes\""));
  CHECK(has(tileverify::load_suite((kTriton / "vadd.json").string(), tileverify::SuiteKind::Listed).error,
            "the spec has no \"suite\""));
  fs::remove_all(dir);
}

TEST_CASE("sizes: Triton vadd against its reference at three sizes, and the off-by-one at the same sizes") {
  const std::string file = (kTriton / "vadd.sizes.json").string();
  // The off-by-one kernel, in the same size-parametric spec.
  const std::string broken = (kTriton / "vadd_offbyone.sizes.json").string();
  tileverify::SpecResult base = tileverify::load_spec(file);
  INFO(base.error);
  REQUIRE(base.spec.has_value());
  CHECK(base.spec->sizes == Sizes{{"N", 1000}});
  CHECK(base.spec->expect == "equivalent");
  for (std::int64_t n : {1, 257, 1000}) {
    CAPTURE(n);
    tileverify::SpecResult r = tileverify::load_spec(file, {{"N", n}});
    REQUIRE(r.spec.has_value());
    CHECK(r.spec->grid.x == std::uint32_t((n + 255) / 256));
    tileverify::Report good = tileverify::check_equivalence(*r.spec);
    INFO(good.text());
    CHECK(good.verdict == tileverify::Outcome::Equivalent);

    tileverify::SpecResult bad = tileverify::load_spec(broken, {{"N", n}});
    REQUIRE(bad.spec.has_value());
    tileverify::Report off = tileverify::check_equivalence(*bad.spec);
    INFO(off.text());
    CHECK(off.verdict == tileverify::Outcome::NotEquivalent);
    REQUIRE(off.mismatch.has_value());
    CHECK(off.mismatch->element == std::uint64_t(n - 1));  // the last element, whatever N is
  }
}


TEST_CASE("--size and --shapes: the command line's values") {
  Sizes sizes;
  CHECK(tileverify::cli::parse_size_choice("M=129", &sizes) == "");
  CHECK(tileverify::cli::parse_size_choice("K_2=96", &sizes) == "");
  CHECK(sizes == Sizes{{"M", 129}, {"K_2", 96}});
  CHECK(has(tileverify::cli::parse_size_choice("M=3", &sizes), "--size M=3: M is given twice (M=129 before)"));
  CHECK(has(tileverify::cli::parse_size_choice("M", &sizes), "--size M: no '='"));
  CHECK(has(tileverify::cli::parse_size_choice("=3", &sizes), "--size =3: no name"));
  CHECK(has(tileverify::cli::parse_size_choice("2M=3", &sizes), "the name 2M is not an identifier"));
  CHECK(has(tileverify::cli::parse_size_choice("N=0", &sizes), "--size N=0: the value is 0"));
  CHECK(has(tileverify::cli::parse_size_choice("N=-4", &sizes), "the value -4 is not a whole number"));
  CHECK(has(tileverify::cli::parse_size_choice("N=1e3", &sizes), "the value 1e3 is not a whole number"));
  CHECK(has(tileverify::cli::parse_size_choice("N=281474976710657", &sizes), "the value is too large"));
  CHECK(has(tileverify::cli::parse_size_choice("N=", &sizes), "--size N=: no value"));
  CHECK(sizes.size() == 2);  // nothing refused was added
  bool boundary = false;
  CHECK(tileverify::cli::parse_shapes("boundary", &boundary) == "");
  CHECK(boundary);
  CHECK(tileverify::cli::parse_shapes("suite", &boundary) == "");
  CHECK_FALSE(boundary);
  CHECK(has(tileverify::cli::parse_shapes("all", &boundary), "--shapes all: it must be \"boundary\""));
}
