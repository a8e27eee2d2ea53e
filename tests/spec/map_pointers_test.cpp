// Tensor maps behind a pointer (docs/cli.md, "Tensor maps behind a
// pointer"): a "tensor_maps" entry of "params" is the global buffer a
// `const CUtensorMap*` parameter points to, map k at byte 128 k. Its maps
// are checked as "tensor_map"s, errors naming "tensor_maps[k]"; it is an
// argument only for a 64-bit pointer parameter; TMA uses map k for the
// buffer's address plus 128 k, and anything else that reaches the buffer
// (another address, a data-dependent index, a load, a store,
// tensormap.replace) is unsupported with the reason (tests/cases/map_pointers).
#include "tileverify/equiv.hpp"

#include "spec_helpers.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

namespace fs = std::filesystem;
using namespace tileverify;

namespace {

const fs::path kDir = fs::path(TILEVERIFY_TEST_DIR) / "cases" / "map_pointers";

using spec_test::has;
Spec loads(const std::string& text) { return spec_test::loads(kDir, text); }
std::string parse_error(const std::string& text) { return spec_test::parse_error(kDir, text); }
Spec from_file(const std::string& name) { return spec_test::from_file(kDir, name); }
using spec_test::launch;

// rows_by_pointer(const CUtensorMap* maps, float* c, int m, int which), with
// `maps` the "tensor_maps" list and `args` the kernel's "args".
std::string spec_with(const std::string& maps, const std::string& args = R"(["maps", "C", 32, 1])",
                      const std::string& more = "") {
  return R"({"kernel": {"ptx": "map_pointers.ptx", "kernel": "rows_by_pointer", "block": [128], "args": )" + args +
         R"(}, "grid": [2], "params": [
    {"name": "A", "dtype": "f32", "shape": [32, 16], "role": "in"},
    {"name": "B", "dtype": "f32", "shape": [32, 16], "role": "in"},
    {"name": "C", "dtype": "f32", "shape": [32, 16], "role": "out"},
    {"name": "maps", "tensor_maps": )" + maps + "}]" + more + "}";
}

const std::string kTwo = R"([{"tensor": "A", "box": [16, 16]}, {"tensor": "B", "box": [16, 8], "swizzle": "64B"}])";

// The equivalence check of a spec file of tests/cases/map_pointers.
Report check_file(const std::string& name) {
  Report r = check_equivalence(from_file(name));
  INFO(r.text());
  return r;
}

}  // namespace

TEST_CASE("tensor_maps: the maps of a `const CUtensorMap*` buffer and the launch argument they become") {
  Spec s = loads(spec_with(kTwo));
  const ParamSpec& p = s.params[3];
  CHECK(p.map_array);
  CHECK_FALSE(p.tensor);
  CHECK_FALSE(p.tensor_map);
  REQUIRE(p.fields.size() == 2);
  // Map k at byte 128 k, named by its index, read as a "tensor_map" is.
  CHECK(p.fields[0].name == "maps[0]");
  CHECK(p.fields[1].name == "maps[1]");
  CHECK(p.fields[0].offset == 0);
  CHECK(p.fields[1].offset == 128);
  CHECK(p.fields[1].tensor_map);
  CHECK(p.fields[1].map_tensor == "B");
  CHECK(p.fields[1].dtype == DType::F32);
  CHECK(p.fields[1].map.dims == std::vector<std::uint64_t>{16, 32});
  CHECK(p.fields[1].map.box == std::vector<std::uint32_t>{16, 8});
  CHECK(p.fields[1].map.swizzle == TmaSwizzle::B64);

  LaunchResult l = launch(s, *s.ref);
  INFO(l.error);
  REQUIRE(l.launch.has_value());
  REQUIRE(l.launch->args.size() == 4);
  const LaunchArg& a = l.launch->args[0];
  CHECK(a.is_map_array);
  CHECK_FALSE(a.is_tensor);
  CHECK_FALSE(a.is_tensor_map);
  CHECK(a.tensor.name == "maps");
  REQUIRE(a.fields.size() == 2);
  CHECK(a.fields[0].is_tensor_map);
  CHECK(a.fields[0].tensor.name == "A");
  CHECK(a.fields[1].tensor.name == "B");
  CHECK(a.fields[1].map.box == std::vector<std::uint32_t>{16, 8});

  // Sizes go into the maps' dims, box and strides as into a "tensor_map"'s.
  Spec sized = loads(R"({"sizes": {"R": 16}, )" +
                     spec_with(R"([{"tensor": "A", "box": [16, "R"]}, {"tensor": "B", "box": ["R", "R/2"]}])")
                         .substr(1));
  CHECK(sized.params[3].fields[0].map.box == std::vector<std::uint32_t>{16, 16});
  CHECK(sized.params[3].fields[1].map.box == std::vector<std::uint32_t>{16, 8});
}

TEST_CASE("tensor_maps: the spec's errors name the list or the map") {
  for (const char* bad : {"[]", R"({"tensor": "A", "box": [16, 16]})", "\"A\""}) {
    const std::string e = parse_error(spec_with(bad));
    INFO(e);
    CHECK(has(e, "\"params[3].tensor_maps\" is "));
    CHECK(has(e, "it must be a list of 1 to 4096 tensor maps"));
  }
  std::string e = parse_error(spec_with(R"([{"tensor": "A", "box": [16, 16]}, {"tensor": "B", "box": [300, 16]}])"));
  CHECK(has(e, "\"params[3].tensor_maps[1].box[0]\" is 300"));
  e = parse_error(spec_with(R"([{"tensor": "A", "box": [16, 16]}, {"tensor": "Bb", "box": [16, 16]}])"));
  CHECK(has(e, "\"params[3].tensor_maps[1].tensor\" is \"Bb\": no tensor of \"params\" has that name"));
  CHECK(has(e, "did you mean \"B\"?"));
  e = parse_error(spec_with(R"([{"tensor": "maps", "box": [16, 16]}])"));
  CHECK(has(e, "\"params[3].tensor_maps[0].tensor\" is \"maps\": that entry of \"params\" is a list of tensor maps, "
               "not a tensor"));
  e = parse_error(spec_with(R"([{"tensor": "A", "box": [16, 16], "swizle": "64B"}])"));
  CHECK(has(e, "\"params[3].tensor_maps[0]\" has the unknown key \"swizle\" (did you mean \"swizzle\"?)"));
  // A map list is not a tensor: "dtype" or "shape" beside it is a mistake.
  const std::string with_dtype = R"({"kernel": {"ptx": "map_pointers.ptx", "kernel": "rows_by_pointer", "block": [128]},
    "params": [{"name": "maps", "dtype": "u64", "tensor_maps": [{"tensor": "A", "box": [16, 16]}]}]})";
  e = parse_error(with_dtype);
  CHECK(has(e, "\"params[0]\" has the unknown key \"dtype\"; its keys are \"name\", \"tensor_maps\", \"description\""));
  // A struct field's "param" names a scalar, not a map list.
  const std::string struct_param = R"({"kernel": {"ptx": "map_pointers.ptx", "kernel": "rows_by_pointer", "block": [128]},
    "params": [{"name": "A", "dtype": "f32", "shape": [32, 16], "role": "in"},
    {"name": "maps", "tensor_maps": [{"tensor": "A", "box": [16, 16]}]},
    {"name": "p", "struct": {"fields": [{"name": "x", "offset": 0, "param": "maps"}]}}]})";
  e = parse_error(struct_param);
  CHECK(has(e, "\"params[2].struct.fields['p.x'].param\" is \"maps\": that entry of \"params\" is not a scalar"));
}

TEST_CASE("tensor_maps: only for a 64-bit pointer parameter") {
  // rows_by_pointer's fourth parameter, `which`, is a .u32.
  Spec s = loads(spec_with(kTwo, R"(["maps", "C", 32, "maps"])"));
  LaunchResult l = launch(s, *s.ref);
  REQUIRE_FALSE(l.launch.has_value());
  CHECK(has(l.error, "\"kernel.args[3]\" (the PTX parameter rows_by_pointer_param_3, .u32) is the tensor maps 'maps', "
                     "a pointer to CUtensorMaps in global memory (const CUtensorMap*), but the parameter is a scalar "
                     "of 32 bits, not a 64-bit pointer"));

  // A CUtensorMap passed by value (.b8[128]) is a "tensor_map", not a list.
  const std::string by_value = R"({"kernel": {"ptx": "../tensor_maps/signatures.ptx", "kernel": "map_pointer_int",
    "block": [128], "args": ["maps", "C", 32]}, "params": [
    {"name": "A", "dtype": "f32", "shape": [32, 16], "role": "in"},
    {"name": "C", "dtype": "f32", "shape": [32, 16], "role": "out"},
    {"name": "maps", "tensor_maps": [{"tensor": "A", "box": [16, 16]}]}]})";
  Spec v = loads(by_value);
  l = launch(v, *v.ref);
  REQUIRE_FALSE(l.launch.has_value());
  CHECK(has(l.error, "is the tensor maps 'maps', a pointer to CUtensorMaps in global memory (const CUtensorMap*), but "
                     "the parameter is a by-value array of 128 bytes: a CUtensorMap passed by value (const "
                     "__grid_constant__ CUtensorMap) is a \"tensor_map\" entry of \"params\""));

  // In "params" order (no "args") the list is the argument where it stands,
  // and the tensors its maps view are not arguments of their own.
  const std::string in_order = R"({"kernel": {"ptx": "map_pointers.ptx", "kernel": "diff_rows", "block": [128]},
    "grid": [2], "params": [
    {"name": "A", "dtype": "f32", "shape": [32, 16], "role": "in"},
    {"name": "B", "dtype": "f32", "shape": [32, 16], "role": "in"},
    {"name": "maps", "tensor_maps": [{"tensor": "A", "box": [16, 16]}, {"tensor": "B", "box": [16, 16]}]},
    {"name": "C", "dtype": "f32", "shape": [32, 16], "role": "out"},
    {"name": "m", "dtype": "s32", "value": 32}]})";
  Spec o = loads(in_order);
  l = launch(o, *o.ref);
  INFO(l.error);
  REQUIRE(l.launch.has_value());
  REQUIRE(l.launch->args.size() == 3);
  CHECK(l.launch->args[0].is_map_array);
  CHECK(l.launch->args[1].tensor.name == "C");
}

TEST_CASE("tensor_maps: TMA uses map k at byte 128 k of the buffer") {
  CHECK(check_file("rows.json").verdict == Outcome::Equivalent);
  CHECK(check_file("rows_index1.json").verdict == Outcome::Equivalent);
  CHECK(check_file("rows_byte_128.json").verdict == Outcome::Equivalent);
  CHECK(check_file("diff.json").verdict == Outcome::Equivalent);
  // The wrong map: maps[1] views B where the reference reads A.
  CHECK(check_file("rows_wrong_index.json").verdict == Outcome::NotEquivalent);
  CHECK(check_file("diff_swapped.json").verdict == Outcome::NotEquivalent);
}

TEST_CASE("tensor_maps: an address that is no map of the buffer, and a kernel that touches the maps' bytes") {
  auto reason = [](const std::string& name) {
    Report r = check_file(name);
    CHECK(r.verdict == Outcome::Unsupported);
    REQUIRE_FALSE(r.diagnostics.empty());
    const Diagnostic& d = r.diagnostics[0];
    // The PTX line (and, with -lineinfo, the CUDA line) of the instruction.
    CHECK(d.loc.line > 0);
    return d.message + " @ " + d.loc.with_source();
  };
  std::string m = reason("rows_byte_64.json");
  INFO(m);
  CHECK(has(m, "a TMA tensor-map operand at byte 64 of 'maps', the 1 tensor map the parameter "
               "'rows_at_byte_param_0' points to (const CUtensorMap*): not the start of a map (map k lies at byte "
               "128 k)"));
  m = reason("rows_byte_256.json");
  CHECK(has(m, "a TMA tensor-map operand at byte 256 of 'maps', the 2 tensor maps the parameter "
               "'rows_at_byte_param_0' points to (const CUtensorMap*): outside the buffer, whose maps are bytes 0 "
               "to 255"));
  m = reason("rows_by_data.json");
  CHECK(has(m, "integer tensor data"));
  m = reason("rows_overwrite.json");
  CHECK(has(m, "a write of the bytes of the tensor map 'maps[0]' (byte 0 of the maps the kernel's `const "
               "CUtensorMap*` points to): tileverify models a tensor map as what TMA reads through it"));
  m = reason("rows_replace.json");
  CHECK(has(m, "'tensormap.replace.tile.global_address.global.b1024.b64' is not supported: it rewrites a tensor map "
               "in memory"));
}
