// Tensor maps and clusters in spec files (docs/cli.md, "Spec files"): a
// "tensor_map" entry of "params" is checked against cuTensorMapEncodeTiled's
// requirements (CUDA Driver API, "Tensor Map Object Management") with an
// error naming the field; it becomes a LaunchArg::of_tensor_map over its
// tensor where a kernel takes it, and only for a 128-byte .b8 PTX parameter;
// "cluster" divides the grid and stays within the portable 8 CTAs.
#include "tileverify/equiv.hpp"

#include "spec_helpers.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <string>

namespace fs = std::filesystem;
using namespace tileverify;

namespace {

const fs::path kDir = fs::path(TILEVERIFY_TEST_DIR) / "cases" / "tensor_maps";

using spec_test::has;
// The helpers of spec_helpers.hpp, with this file's folder.
Spec loads(const std::string& text) { return spec_test::loads(kDir, text); }
std::string parse_error(const std::string& text) { return spec_test::parse_error(kDir, text); }
Spec from_file(const std::string& name) { return spec_test::from_file(kDir, name); }
using spec_test::launch;

// map_pointer_int(const __grid_constant__ CUtensorMap a_map, float* c, int m),
// with an empty body (signatures.ptx).
const std::string kKernel = R"("kernel": {"ptx": "signatures.ptx", "kernel": "map_pointer_int", "block": [128]})";

// A spec of scale_rows over an m x 16 f32 matrix A, with `map` the
// "tensor_map" object, `a` A's entry and `more` further top-level keys.
std::string spec_with(const std::string& map, const std::string& more = "",
                      const std::string& a = R"({"name": "A", "dtype": "f32", "shape": [32, 16], "role": "in"})") {
  return "{" + kKernel + R"(, "grid": [2], "params": [)" + a + R"(,
    {"name": "a_map", "tensor_map": )" + map + R"(},
    {"name": "C", "dtype": "f32", "shape": [32, 16], "role": "out"},
    {"name": "m", "dtype": "s32", "value": 32}])" + more + "}";
}

// The error of a map, which must name `field` (under params[1].tensor_map).
std::string map_error(const std::string& map, const std::string& field, const std::string& a = "") {
  std::string e = a.empty() ? parse_error(spec_with(map)) : parse_error(spec_with(map, "", a));
  INFO(e);
  CHECK(has(e, "\"params[1].tensor_map" + field + "\""));
  return e;
}

}  // namespace

TEST_CASE("tensor_map: a valid map, its defaults and the launch argument it becomes") {
  Spec s = loads(spec_with(R"({"tensor": "A", "box": [16, 16]})"));
  const ParamSpec& p = s.params[1];
  CHECK(p.tensor_map);
  CHECK_FALSE(p.tensor);
  CHECK(p.map_tensor == "A");
  CHECK(p.dtype == DType::F32);
  // dims: the shape reversed (innermost first); strides: packed, in bytes.
  CHECK(p.map.dims == std::vector<std::uint64_t>{16, 32});
  CHECK(p.map.strides == std::vector<std::uint64_t>{64});
  CHECK(p.map.box == std::vector<std::uint32_t>{16, 16});
  CHECK(p.map.element_strides == std::vector<std::uint32_t>{1, 1});
  CHECK(p.map.swizzle == TmaSwizzle::None);
  CHECK(p.map.oob_fill == TmaOobFill::Zero);

  // In "params" order the map's tensor is no argument of its own: the
  // kernel takes (a_map, C, m).
  LaunchResult l = launch(s, *s.ref);
  INFO(l.error);
  REQUIRE(l.launch.has_value());
  REQUIRE(l.launch->args.size() == 3);
  const LaunchArg& a = l.launch->args[0];
  CHECK(a.is_tensor_map);
  CHECK_FALSE(a.is_tensor);
  CHECK(a.tensor.name == "A");
  CHECK(a.tensor.shape == std::vector<std::uint64_t>{32, 16});
  CHECK(a.tensor.role == Role::In);
  CHECK(a.map.dims == std::vector<std::uint64_t>{16, 32});
  CHECK(a.map.strides == std::vector<std::uint64_t>{64});
  CHECK(a.map.box == std::vector<std::uint32_t>{16, 16});
  CHECK(l.launch->args[1].is_tensor);
  CHECK(l.launch->args[1].tensor.name == "C");
  CHECK(l.launch->cluster.count() == 1);
}

TEST_CASE("tensor_map: every field given") {
  Spec s = loads(spec_with(R"({"tensor": "A", "box": [8, 4], "dims": [8, 64], "strides": [32],
      "element_strides": [1, 2], "interleave": "none", "swizzle": "32B", "l2_promotion": "128B", "oob_fill": "nan",
      "description": "the left half of each row, as 64 rows of 8"})"));
  const TensorMap& m = s.params[1].map;
  CHECK(m.dims == std::vector<std::uint64_t>{8, 64});
  CHECK(m.strides == std::vector<std::uint64_t>{32});
  CHECK(m.element_strides == std::vector<std::uint32_t>{1, 2});
  CHECK(m.swizzle == TmaSwizzle::B32);
  CHECK(m.l2_promotion == TmaL2Promotion::B128);
  CHECK(m.oob_fill == TmaOobFill::NanRequestZeroFma);
  // A permuted view of outer dimensions is a valid map: strides need not grow.
  loads(spec_with(R"({"tensor": "A", "box": [4, 2, 2], "dims": [4, 4, 32], "strides": [64, 16]})",
                  "", R"({"name": "A", "dtype": "f32", "shape": [32, 4, 4], "role": "in"})"));
}

TEST_CASE("tensor_map: each rule of cuTensorMapEncodeTiled refused, naming the field") {
  // The message of the brief, word for word.
  CHECK(has(map_error(R"({"tensor": "A", "box": [300, 16]})", ".box[0]"),
            "\"params[1].tensor_map.box[0]\" is 300: a box dimension must be from 1 to 256 (cuTensorMapEncodeTiled)"));
  CHECK(has(map_error(R"({"tensor": "A", "box": [16, 0]})", ".box[1]"), "from 1 to 256"));
  CHECK(has(map_error(R"({"tensor": "A", "box": [16]})", ".box"), "one entry per dimension"));
  CHECK(has(map_error(R"({"tensor": "A", "box": [16, 16], "element_strides": [1]})", ".element_strides"),
            "one entry per dimension"));
  CHECK(has(map_error(R"({"tensor": "A", "box": [16, 16], "dims": [16, 32], "strides": [64, 64]})", ".strides"),
            "dimensions 1 to rank - 1"));
  // Rank: 1 to 5.
  CHECK(has(map_error(R"({"tensor": "A", "box": [4, 1, 1, 1, 1, 1], "dims": [4, 1, 1, 1, 1, 1]})", ".box"),
            "1 to 5 dimensions"));
  CHECK(has(map_error(R"({"tensor": "A", "box": [16, 16], "dims": []})", ".dims"), "1 to 5 dimensions"));
  CHECK(has(parse_error(spec_with(R"({"tensor": "A", "box": [4, 1, 1, 1, 1]})", "",
                                  R"({"name": "A", "dtype": "f32", "shape": [1, 1, 1, 1, 1, 4], "role": "in"})")),
            "give \"dims\""));
  // Interleave needs rank 3 or more.
  CHECK(has(map_error(R"({"tensor": "A", "box": [16, 16], "interleave": "16B"})", ".interleave"),
            "3 dimensions or more"));
  // globalDim: 1 to 2^32.
  CHECK(has(map_error(R"({"tensor": "A", "box": [16, 16], "dims": [0, 32]})", ".dims[0]"), "from 1 to 2^32"));
  CHECK(has(map_error(R"({"tensor": "A", "box": [16, 16], "dims": [4294967297, 1], "strides": [16]})", ".dims[0]"),
            "from 1 to 2^32"));
  // globalStrides: multiples of 16, below 2^40; the packed default says so.
  std::string e = map_error(R"({"tensor": "A", "box": [4, 4]})", ".strides[0]",
                            R"({"name": "A", "dtype": "f32", "shape": [32, 5], "role": "in"})");
  CHECK(has(e, "is 20: "));
  CHECK(has(e, "multiple of 16 bytes"));
  CHECK(has(e, "\"strides\" not given"));
  CHECK(has(map_error(R"({"tensor": "A", "box": [16, 16], "strides": [1099511627776]})", ".strides[0]"),
            "below 2^40"));
  // 32B interleave: strides multiples of 32, and a 32B swizzle.
  const std::string a3 = R"({"name": "A", "dtype": "f16", "shape": [8, 4, 8], "role": "in"})";
  CHECK(has(map_error(R"({"tensor": "A", "box": [8, 4, 4], "interleave": "32B", "swizzle": "32B"})", ".strides[0]", a3),
            "multiple of 32 bytes with 32B interleave"));
  CHECK(has(map_error(R"({"tensor": "A", "box": [8, 4, 4], "dims": [16, 2, 8], "interleave": "32B"})", ".swizzle", a3),
            "the swizzle must be \"32B\""));
  // The inner box dimension: a multiple of 16 bytes without interleave, at
  // most the swizzle span with a swizzle.
  CHECK(has(map_error(R"({"tensor": "A", "box": [2, 16]})", ".box[0]"), "multiple of 16 bytes"));
  CHECK(has(map_error(R"({"tensor": "A", "box": [32, 16], "dims": [32, 16], "strides": [128], "swizzle": "64B"})",
                      ".box[0]", R"({"name": "A", "dtype": "f32", "shape": [16, 32], "role": "in"})"),
            "more than the 64 bytes of swizzle \"64B\""));
  // elementStrides: 1 to 8.
  CHECK(has(map_error(R"({"tensor": "A", "box": [16, 16], "element_strides": [1, 9]})", ".element_strides[1]"),
            "from 1 to 8"));
  CHECK(has(map_error(R"({"tensor": "A", "box": [16, 16], "element_strides": [0, 1]})", ".element_strides[0]"),
            "from 1 to 8"));
  // A NaN fill is for float data only.
  CHECK(has(map_error(R"({"tensor": "A", "box": [16, 16], "oob_fill": "nan"})", ".oob_fill",
                      R"({"name": "A", "dtype": "s32", "shape": [32, 16], "role": "in"})"),
            "only for float data types"));
  // The map lies inside its tensor.
  e = map_error(R"({"tensor": "A", "box": [16, 16], "dims": [16, 64]})", ".dims");
  CHECK(has(e, "spans 4096 bytes from the start of 'A', which has 2048 bytes"));
  CHECK(has(e, "inside its tensor"));
  CHECK(has(map_error(R"({"tensor": "A", "box": [16, 16], "dims": [16, 32], "strides": [128]})", ".dims"),
            "inside its tensor"));
}

TEST_CASE("tensor_map: the spec's own checks (keys, tensor, modes, lists)") {
  CHECK(has(parse_error(spec_with(R"({"tensor": "A", "box": [16, 16], "swizle": "128B"})")),
            "did you mean \"swizzle\"?"));
  CHECK(has(parse_error(spec_with(R"({"box": [16, 16]})")), "needs \"tensor\""));
  CHECK(has(parse_error(spec_with(R"({"tensor": "A"})")), "needs \"box\""));
  std::string e = parse_error(spec_with(R"({"tensor": "a", "box": [16, 16]})"));
  CHECK(has(e, "\"params[1].tensor_map.tensor\" is \"a\": no tensor of \"params\" has that name"));
  CHECK(has(e, "did you mean \"A\"?"));
  CHECK(has(parse_error(spec_with(R"({"tensor": "m", "box": [16, 16]})")), "is a scalar, not a tensor"));
  CHECK(has(parse_error(spec_with(R"({"tensor": "A", "box": [16, 16], "swizzle": "256B"})")),
            "\"none\", \"32B\", \"64B\", \"128B\""));
  CHECK(has(parse_error(spec_with(R"({"tensor": "A", "box": [16, 16], "oob_fill": "NaN"})")), "\"zero\", \"nan\""));
  CHECK(has(parse_error(spec_with(R"({"tensor": "A", "box": [16, -1]})")), "\"params[1].tensor_map.box[1]\" is -1"));
  CHECK(has(parse_error(spec_with(R"({"tensor": "A", "box": "16"})")), "\"params[1].tensor_map.box\""));
  CHECK(has(parse_error(spec_with("[16]")), "\"params[1].tensor_map\" is [16]"));
  // An empty list is never a default: a rank-1 map leaves "strides" out.
  CHECK(has(parse_error(spec_with(R"({"tensor": "A", "box": [16, 16], "strides": []})")),
            "\"params[1].tensor_map.strides\" is []: it must be a list of 1 to 4 integers"));
  CHECK(has(parse_error(spec_with(R"({"tensor": "A", "box": [16, 16], "element_strides": []})")),
            "\"params[1].tensor_map.element_strides\" is []"));
  // A map entry takes its dtype from its tensor: no "dtype", "shape" or "role".
  CHECK(has(parse_error("{" + kKernel + R"(, "params": [
      {"name": "A", "dtype": "f32", "shape": [32, 16], "role": "in"},
      {"name": "a_map", "dtype": "f32", "tensor_map": {"tensor": "A", "box": [16, 16]}}]})"),
            "unknown key \"dtype\""));
}

TEST_CASE("tensor_map: a map only for a 128-byte .b8 parameter, and nothing else for one") {
  const std::string pool = R"("grid": [2], "params": [
      {"name": "A", "dtype": "f32", "shape": [32, 16], "role": "in"},
      {"name": "a_map", "tensor_map": {"tensor": "A", "box": [16, 16]}},
      {"name": "C", "dtype": "f32", "shape": [32, 16], "role": "out"},
      {"name": "m", "dtype": "s32", "value": 32}])";
  auto with_args = [&](const std::string& args) {
    return R"({"kernel": {"ptx": "signatures.ptx", "kernel": "map_pointer_int", "block": [128], "args": )" + args + "}, " +
           pool + "}";
  };
  // "args" may give the tensor as a pointer and its map.
  Spec ok = loads(with_args(R"(["a_map", "C", "m"])"));
  LaunchResult l = launch(ok, *ok.ref);
  REQUIRE(l.launch.has_value());
  CHECK(l.launch->args[0].is_tensor_map);

  Spec s = loads(with_args(R"(["a_map", "a_map", "m"])"));
  l = launch(s, *s.ref);
  REQUIRE_FALSE(l.launch.has_value());
  CHECK(has(l.error, "\"kernel.args[1]\" (the PTX parameter map_pointer_int_param_1, .u64)"));
  CHECK(has(l.error, "is the tensor map 'a_map'"));
  CHECK(has(l.error, "the parameter is a pointer"));

  s = loads(with_args(R"(["A", "C", "m"])"));
  l = launch(s, *s.ref);
  REQUIRE_FALSE(l.launch.has_value());
  CHECK(has(l.error, "(the PTX parameter map_pointer_int_param_0, .b8[128])"));
  CHECK(has(l.error, "is the tensor 'A', a pointer, but the parameter is a 128-byte array"));

  s = loads(with_args(R"([null, "C", "m"])"));
  l = launch(s, *s.ref);
  REQUIRE_FALSE(l.launch.has_value());
  CHECK(has(l.error, "is null, but the parameter is a 128-byte array"));

  s = loads(with_args(R"(["m", "C", "m"])"));
  l = launch(s, *s.ref);
  REQUIRE_FALSE(l.launch.has_value());
  CHECK(has(l.error, "is the scalar 'm', but the parameter is a 128-byte array"));

  // "params" in order: a map where the kernel takes a pointer.
  s = loads(R"({"kernel": {"ptx": "signatures.ptx", "kernel": "map_pointer_int", "block": [128]}, "params": [
      {"name": "a_map", "tensor_map": {"tensor": "A", "box": [16, 16]}},
      {"name": "c_map", "tensor_map": {"tensor": "C", "box": [16, 16]}},
      {"name": "m", "dtype": "s32", "value": 32},
      {"name": "A", "dtype": "f32", "shape": [32, 16], "role": "in"},
      {"name": "C", "dtype": "f32", "shape": [32, 16], "role": "out"}]})");
  l = launch(s, *s.ref);
  REQUIRE_FALSE(l.launch.has_value());
  CHECK(has(l.error, "\"params\" entry 'c_map' (the PTX parameter map_pointer_int_param_1, .u64)"));
  CHECK(has(l.error, "the parameter is a pointer"));
  // ... and one argument short, with the reason.
  s = loads(R"({"kernel": {"ptx": "signatures.ptx", "kernel": "map_pointer_int", "block": [128]}, "params": [
      {"name": "A", "dtype": "f32", "shape": [32, 16], "role": "in"},
      {"name": "a_map", "tensor_map": {"tensor": "A", "box": [16, 16]}},
      {"name": "m", "dtype": "s32", "value": 32}]})");
  l = launch(s, *s.ref);
  REQUIRE_FALSE(l.launch.has_value());
  CHECK(has(l.error, "gives 2 arguments"));
  CHECK(has(l.error, "A: a tensor a \"tensor_map\" views is passed through its map"));
  // A by-value struct of another size is no map: it takes a "struct".
  s = loads(R"({"kernel": {"ptx": "signatures.ptx", "kernel": "struct64", "block": [32]}, "params": [
      {"name": "A", "dtype": "f32", "shape": [32, 16], "role": "in"},
      {"name": "a_map", "tensor_map": {"tensor": "A", "box": [16, 16]}}]})");
  KernelLoad k = load_kernel(*s.ref);
  REQUIRE(k.program.has_value());
  l = launch(s, *s.ref);
  REQUIRE_FALSE(l.launch.has_value());
  CHECK(has(l.error, "the parameter is a by-value struct of 64 bytes: give a \"struct\" entry"));
}

TEST_CASE("tensor_map: a kernel that writes an output only through a map takes it") {
  // ref writes C with plain stores, opt through a TMA store map over C: both
  // take C, compared by name.
  const std::string pool = R"("grid": [2], "params": [
      {"name": "A", "dtype": "f32", "shape": [32, 16], "role": "in"},
      {"name": "a_map", "tensor_map": {"tensor": "A", "box": [16, 16]}},
      {"name": "C", "dtype": "f32", "shape": [32, 16], "role": "out"},
      {"name": "c_map", "tensor_map": {"tensor": "C", "box": [16, 16]}},
      {"name": "m", "dtype": "s32", "value": 32}])";
  auto pair = [&](const std::string& opt_args) {
    return R"({"ref": {"ptx": "signatures.ptx", "kernel": "map_pointer_int", "block": [128], "args": ["a_map", "C", "m"]},
               "opt": {"ptx": "signatures.ptx", "kernel": "two_maps", "block": [128], "args": )" +
           opt_args + "}, " + pool + "}";
  };
  Spec s = loads(pair(R"(["a_map", "c_map", "m"])"));
  LaunchResult l = launch(s, *s.opt);
  INFO(l.error);
  REQUIRE(l.launch.has_value());
  CHECK(l.launch->args[1].is_tensor_map);
  CHECK(l.launch->args[1].tensor.name == "C");
  CHECK(l.launch->args[1].tensor.role == Role::Out);
  // Without the map over C, opt takes no output.
  CHECK(has(parse_error(pair(R"(["a_map", "a_map", "m"])")), "the output 'C' is taken by \"ref\" only"));
  // A module variable's tensor cannot be viewed by a map.
  CHECK(has(parse_error(R"({"kernel": {"ptx": "signatures.ptx", "kernel": "map_pointer_int", "block": [128],
      "symbols": {"c_table": "A"}}, "params": [
      {"name": "A", "dtype": "f32", "shape": [32, 16], "role": "in"},
      {"name": "a_map", "tensor_map": {"tensor": "A", "box": [16, 16]}}]})"),
            "a tensor map cannot view"));
}

TEST_CASE("cluster: 1 to 3 dimensions that divide the grid, 8 CTAs at most") {
  Spec s = loads(spec_with(R"({"tensor": "A", "box": [16, 16]})", R"(, "cluster": [2])"));
  CHECK(s.cluster.x == 2);
  CHECK(s.cluster.y == 1);
  CHECK(s.cluster.z == 1);
  LaunchResult l = launch(s, *s.ref);
  REQUIRE(l.launch.has_value());
  CHECK(l.launch->cluster.x == 2);
  CHECK(l.launch->cluster.count() == 2);

  const std::string map = R"({"tensor": "A", "box": [16, 16]})";
  CHECK(has(parse_error(spec_with(map, R"(, "cluster": [3])")),
            "\"cluster\" [3, 1, 1] does not divide \"grid\" [2, 1, 1]: x 2 is not a multiple of 3"));
  CHECK(has(parse_error(spec_with(map, R"(, "cluster": [16])")), "more than 8"));
  std::string e = parse_error(R"({"kernel": {"ptx": "signatures.ptx", "kernel": "map_pointer_int", "block": [128]},
      "grid": [4, 4], "cluster": [4, 4], "params": []})");
  CHECK(has(e, "has 16 CTAs: 8 is the portable cluster size"));
  CHECK(has(e, "cudaFuncAttributeNonPortableClusterSizeAllowed"));
  CHECK(has(parse_error(spec_with(map, R"(, "cluster": [0])")), "x is 0, zero"));
  CHECK(has(parse_error(spec_with(map, R"(, "cluster": [1, 1, 1, 1])")), "1 to 3 positive integers"));
  CHECK(has(parse_error(spec_with(map, R"(, "cluster": 2)")), "\"cluster\" is 2"));
  CHECK(has(parse_error(spec_with(map, R"(, "clustre": [2])")), "did you mean \"cluster\"?"));

  // A kernel's own cluster, against its own grid.
  const std::string pool = R"("grid": [2], "params": [
      {"name": "A", "dtype": "f32", "shape": [32, 16], "role": "in"},
      {"name": "a_map", "tensor_map": {"tensor": "A", "box": [16, 16]}},
      {"name": "C", "dtype": "f32", "shape": [32, 16], "role": "out"},
      {"name": "m", "dtype": "s32", "value": 32}])";
  s = loads(R"({"kernel": {"ptx": "signatures.ptx", "kernel": "map_pointer_int", "block": [128], "grid": [4], "cluster": [4]},
               )" + pool + "}");
  REQUIRE(s.ref->cluster.has_value());
  l = launch(s, *s.ref);
  REQUIRE(l.launch.has_value());
  CHECK(l.launch->cluster.x == 4);
  CHECK(has(parse_error(R"({"kernel": {"ptx": "signatures.ptx", "kernel": "map_pointer_int", "block": [128], "cluster": [4]},
               )" + pool + "}"),
            "\"kernel.cluster\" [4, 1, 1] does not divide \"grid\" [2, 1, 1]"));
  CHECK(has(parse_error(R"({"kernel": {"ptx": "signatures.ptx", "kernel": "map_pointer_int", "block": [128], "grid": [6]},
               "cluster": [4], )" + pool + "}"),
            "\"cluster\" [4, 1, 1] does not divide \"kernel.grid\" [6, 1, 1]"));
}

// ---------------------------------------------------------------- the launch-contract scan

namespace {

// from_bottom.json's kernel and params, with the given grids (and more keys).
std::string from_bottom_with(const std::string& grid, const std::string& more = "") {
  return R"({"kernel": {"ptx": "tma_tiles.ptx", "kernel": "scale_rows_from_bottom", "block": [128]}, "grid": )" + grid +
         R"(, "params": [
    {"name": "A", "dtype": "f32", "shape": [32, 16], "role": "in"},
    {"name": "a_map", "tensor_map": {"tensor": "A", "box": [16, 16]}},
    {"name": "C", "dtype": "f32", "shape": [32, 16], "role": "out"},
    {"name": "c_map", "tensor_map": {"tensor": "C", "box": [16, 16]}},
    {"name": "m", "dtype": "s32", "value": 32}])" + more + "}";
}

}  // namespace

TEST_CASE("launch contract: every CTA of a TMA kernel's grid is run, and a stray CTA is the verdict") {
  // One CTA too many: CTA (2,0,0) owns rows [-16, 0).
  Report r = check(from_file("from_bottom_stray.json"));
  INFO(r.text());
  CHECK(r.verdict == Outcome::LaunchContract);
  CHECK(r.exit_code() == 2);
  REQUIRE(r.contract_scans.size() == 1);
  const ContractScan& s = r.contract_scans[0];
  CHECK(s.kernel == "scale_rows_from_bottom");
  CHECK(s.ctas_run == 3);
  CHECK(s.grid_ctas == 3);
  REQUIRE(s.breaking.size() == 1);
  CHECK(s.breaking[0].x == 2);
  CHECK(s.stopped.empty());
  const std::string text = r.text();
  CHECK(has(text, "UNSAFE (launch_contract): CTA (2,0,0) of scale_rows_from_bottom issues TMA copies that trap on a "
                  "GPU (3 of the 3 CTAs of the grid run)"));
  CHECK(has(text, "launch only the CTAs that have one"));
  REQUIRE_FALSE(r.diagnostics.empty());
  CHECK(r.diagnostics[0].kind == DiagKind::LaunchContract);
  CHECK(has(r.diagnostics[0].message, "CTA (2,0,0)"));
  const std::string json = r.json();
  CHECK(has(json, "\"verdict\": \"launch_contract\""));
  CHECK(has(json, "\"launch_contract\": ["));
  CHECK(has(json, "\"ctas_run\": 3"));

  // Every CTA owns a tile: the scan runs them all and the check goes on.
  r = check(from_file("from_bottom.json"));
  INFO(r.text());
  CHECK(r.verdict == Outcome::Ok);
  REQUIRE(r.contract_scans.size() == 1);
  CHECK(r.contract_scans[0].ctas_run == 2);
  CHECK(r.contract_scans[0].breaking.empty());
  CHECK(has(r.json(), "\"breaking\": []"));
}

TEST_CASE("launch contract: stray CTAs whose loads read zeros are safe, and noted") {
  // CTAs 2 and 3 of scale_rows_stray.json load boxes wholly below A, which a
  // GPU fills with zeros (tools/gpu_checks/tma_bounds.cu), and store nothing.
  Report r = check(from_file("scale_rows_stray.json"));
  INFO(r.text());
  CHECK(r.verdict == Outcome::Ok);
  REQUIRE(r.contract_scans.size() == 1);
  CHECK(r.contract_scans[0].ctas_run == 4);
  CHECK(r.contract_scans[0].breaking.empty());
  REQUIRE(r.notes.size() == 2);
  CHECK(has(r.notes[0].message, "scale_rows: CTA (2,0,0): TMA load at coordinates (0, 32)"));
  CHECK(has(r.notes[0].message, "wholly outside"));
  CHECK(has(r.notes[1].message, "CTA (3,0,0)"));
}

TEST_CASE("launch contract: the scan stops at 4 breaking CTAs and names them") {
  Report r = check(loads(from_bottom_with("[8]")));
  INFO(r.text());
  CHECK(r.verdict == Outcome::LaunchContract);
  REQUIRE(r.contract_scans.size() == 1);
  CHECK(r.contract_scans[0].breaking.size() == 4);
  CHECK(r.contract_scans[0].ctas_run == 6);  // CTAs 0 and 1 own tiles; 2 to 5 break it
  CHECK(has(r.text(), "CTAs (2,0,0), (3,0,0), (4,0,0) and (5,0,0) of scale_rows_from_bottom issue TMA copies"));
  CHECK(has(r.text(), "the scan stops at 4 such CTAs"));
  CHECK(r.diagnostics.size() == 4);
}

TEST_CASE("launch contract: another bug in a CTA the one-CTA check does not run is the verdict") {
  // m = 48 rows of A, but C has 32: CTA (2,0,0) writes past C. The check of
  // CTA (0,0,0) alone is clean.
  const std::string spec = R"({"kernel": {"ptx": "tma_tiles.ptx", "kernel": "scale_rows", "block": [128]}, "grid": [3],
    "params": [
    {"name": "A", "dtype": "f32", "shape": [48, 16], "role": "in"},
    {"name": "a_map", "tensor_map": {"tensor": "A", "box": [16, 16]}},
    {"name": "C", "dtype": "f32", "shape": [32, 16], "role": "out"},
    {"name": "m", "dtype": "s32", "value": 48}]})";
  Report r = check(loads(spec));
  INFO(r.text());
  CHECK(r.verdict == Outcome::OutOfBounds);
  REQUIRE_FALSE(r.diagnostics.empty());
  CHECK(has(r.diagnostics[0].message, "scale_rows: CTA (2,0,0): "));
  REQUIRE(r.contract_scans.size() == 1);
  CHECK(r.contract_scans[0].breaking.empty());
}

TEST_CASE("launch contract: pairs scan both kernels; \"ctas\": \"all\" needs no scan") {
  const std::string pair = R"({"ref": {"ptx": "tma_tiles.ptx", "kernel": "scale_rows", "block": [128], "args": ["a_map", "C", "m"]},
    "opt": {"ptx": "tma_tiles.ptx", "kernel": "scale_rows_from_bottom", "block": [128], "args": ["a_map", "c_map", "m"],
            "grid": [3]},
    "grid": [2], "params": [
    {"name": "A", "dtype": "f32", "shape": [32, 16], "role": "in"},
    {"name": "a_map", "tensor_map": {"tensor": "A", "box": [16, 16]}},
    {"name": "C", "dtype": "f32", "shape": [32, 16], "role": "out"},
    {"name": "c_map", "tensor_map": {"tensor": "C", "box": [16, 16]}},
    {"name": "m", "dtype": "s32", "value": 32}]})";
  Report r = check_equivalence(loads(pair));
  INFO(r.text());
  CHECK(r.verdict == Outcome::LaunchContract);
  REQUIRE(r.contract_scans.size() == 2);
  CHECK(r.contract_scans[0].breaking.empty());
  CHECK(r.contract_scans[1].kernel == "opt (scale_rows_from_bottom)");
  REQUIRE(r.contract_scans[1].breaking.size() == 1);
  CHECK(has(r.text(), "CTA (2,0,0) of opt (scale_rows_from_bottom) issues TMA copies"));

  // The whole grid run meets the stray CTA itself.
  r = check(loads(from_bottom_with("[3]", R"(, "ctas": "all")")));
  INFO(r.text());
  CHECK(r.verdict == Outcome::LaunchContract);
  CHECK(r.contract_scans.empty());
  REQUIRE_FALSE(r.diagnostics.empty());
  CHECK(has(r.diagnostics[0].message, "CTA (2,0,0)"));
  CHECK_FALSE(has(r.diagnostics[0].message, "CTA (2,0,0): CTA (2,0,0)"));  // named once
}

TEST_CASE("launch contract: a scan cut short by the time limit leaves the verdict and says how far it got") {
  // 2 x 20000 CTAs, every one owning a tile (blockIdx.y repeats them): far
  // more than half a second of runs.
  RunLimits limits;
  limits.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  Report r = check(loads(from_bottom_with("[2, 20000]")), limits);
  INFO(r.text());
  CHECK(r.verdict == Outcome::Ok);
  REQUIRE(r.contract_scans.size() == 1);
  CHECK(r.contract_scans[0].ctas_run < 40000);
  CHECK(has(r.contract_scans[0].stopped, "the time limit"));
  REQUIRE_FALSE(r.notes.empty());
  CHECK(has(r.notes[0].message, "the launch-contract scan ran "));
  CHECK(has(r.notes[0].message, " of the 40000 CTAs of the grid"));
  CHECK(has(r.text(), "note: "));
}

TEST_CASE("launch contract: a cluster launch is scanned one cluster at a time") {
  // examples/hopper's 2-CTA cluster GEMM checked on one CTA: the scan runs
  // the grid's two clusters (4 CTAs), each as one run.
  SpecResult loaded = load_spec((fs::path(TILEVERIFY_TEST_DIR).parent_path() / "examples" / "hopper" / "cluster_gemm.json").string());
  INFO(loaded.error);
  REQUIRE(loaded.spec.has_value());
  Spec s = *loaded.spec;
  s.all_ctas = false;
  Report r = check_equivalence(s);
  INFO(r.text());
  REQUIRE(r.contract_scans.size() == 1);
  CHECK(r.contract_scans[0].ctas_run == 4);
  CHECK(r.contract_scans[0].stopped.empty());
  CHECK(r.notes.empty());
}
