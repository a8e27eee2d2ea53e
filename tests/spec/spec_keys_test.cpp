// Spec keys for compiler-generated kernels (docs/cli.md, "Spec files"):
// per-kernel "args", "block" from .reqntid and within .maxntid, "init" of
// outputs, "symbolic" float scalars, demangled kernel names, and the report's
// hint when two kernels write different elements of the one CTA checked.
// The specs with an expected verdict are tests/cases/spec_keys/*.json (run by
// cases_test.cpp); these tests check what the verdict alone does not show:
// the messages, the launches, the counterexample and the hint.
#include "tileverify/equiv.hpp"

#include "spec_helpers.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

namespace fs = std::filesystem;
using namespace tileverify;

namespace {

const fs::path kDir = fs::path(TILEVERIFY_TEST_DIR) / "cases" / "spec_keys";

using spec_test::has;
// The helpers of spec_helpers.hpp, with this file's folder.
Spec loads(const std::string& text) { return spec_test::loads(kDir, text); }
std::string parse_error(const std::string& text) { return spec_test::parse_error(kDir, text); }
Spec from_file(const std::string& name) { return spec_test::from_file(kDir, name); }
using spec_test::launch;

const std::string kPool = R"("params": [
    {"name": "x", "dtype": "f32", "shape": [128], "role": "in"},
    {"name": "y", "dtype": "f32", "shape": [128], "role": "in"},
    {"name": "out", "dtype": "f32", "shape": [128], "role": "out"},
    {"name": "n", "dtype": "s32", "value": 128}])";

std::string pair_with(const std::string& ref_args, const std::string& opt_args, const std::string& more = "") {
  return R"({"ref": {"ptx": "signature.ptx", "kernel": "add_ref", "block": [128], "args": )" + ref_args +
         R"(}, "opt": {"ptx": "signature.ptx", "kernel": "add_compiled", "block": [128], "args": )" + opt_args + "}, " +
         kPool + more + "}";
}

}  // namespace

TEST_CASE("args: each kernel its own parameter list from the params pool") {
  Spec s = from_file("signature.json");
  REQUIRE(s.ref->args.has_value());
  CHECK(s.ref->args->size() == 5);
  CHECK(s.ref->args->at(4).kind == KernelArg::Kind::Number);
  CHECK(s.opt->args->at(4).kind == KernelArg::Kind::Null);
  LaunchResult ref = launch(s, *s.ref), opt = launch(s, *s.opt);
  REQUIRE(ref.launch.has_value());
  REQUIRE(opt.launch.has_value());
  // add_ref(out, x, y, n, stride): the tensors by name, stride the number 1.
  CHECK(ref.launch->args[0].tensor.name == "out");
  CHECK(ref.launch->args[1].tensor.name == "x");
  CHECK(ref.launch->args[3].scalar == 128);
  CHECK(ref.launch->args[4].scalar == 1);
  // add_compiled(x, y, out, n, scratch0, scratch1): n a number, two nulls.
  CHECK(opt.launch->args[2].tensor.name == "out");
  CHECK(opt.launch->args[3].scalar == 128);
  CHECK(opt.launch->args[4].null_pointer);
  CHECK(opt.launch->args[5].null_pointer);
  // launch_of gives the same launch, loading the kernel itself.
  Launch again = launch_of(s, *s.opt);
  REQUIRE(again.args.size() == 6);
  CHECK(again.args[5].null_pointer);
  CHECK(again.block.x == 128);
  // The verdicts: outputs compared by name across the two signatures.
  CHECK(check_equivalence(s).verdict == Outcome::Equivalent);
  Report wrong = check_equivalence(from_file("signature_sub.json"));
  CHECK(wrong.verdict == Outcome::NotEquivalent);
  REQUIRE(wrong.mismatch.has_value());
  CHECK(wrong.mismatch->output == "out");
}

TEST_CASE("args: a count or width that does not fit the PTX parameters is an error naming them") {
  // One entry short: the error lists the PTX parameters with their types.
  Spec s = loads(pair_with(R"(["out", "x", "y", "n", 1])", R"(["x", "y", "out", 128, null])"));
  LaunchResult l = launch(s, *s.opt);
  CHECK_FALSE(l.launch.has_value());
  INFO(l.error);
  CHECK(has(l.error, "inline.json: \"opt.args\" has 5 entries but 'add_compiled' has 6 PTX parameters"));
  CHECK(has(l.error, "add_compiled_param_3 (.u32)"));
  CHECK(has(l.error, "add_compiled_param_5 (.u64)"));
  Report r = check_equivalence(s);
  CHECK(r.verdict == Outcome::Error);
  CHECK(r.exit_code() == 4);
  CHECK(has(r.error, "\"opt.args\" has 5 entries"));
  // null, or a tensor, where the PTX has a 32-bit integer.
  Spec t = loads(pair_with(R"(["out", "x", "y", null, 1])", R"(["x", "y", "out", "n", null, null])"));
  l = launch(t, *t.ref);
  CHECK(has(l.error, "\"ref.args[3]\" (the PTX parameter add_ref_param_3, .u32) is null, a pointer, but the parameter "
                     "has 32 bits"));
  t = loads(pair_with(R"(["out", "x", "y", "x", 1])", R"(["x", "y", "out", "n", null, null])"));
  CHECK(has(launch(t, *t.ref).error, "\"ref.args[3]\" (the PTX parameter add_ref_param_3, .u32) is the tensor 'x'"));
  // A number converts to the parameter's type: a fraction is no .u32.
  t = loads(pair_with(R"(["out", "x", "y", "n", 1.5])", R"(["x", "y", "out", 128, null, null])"));
  CHECK(has(launch(t, *t.ref).error, "\"ref.args[4]\" (the PTX parameter add_ref_param_4, .u32): the number 1.5 must be "
                                     "an integer"));
  t = loads(pair_with(R"(["out", "x", "y", "n", -1])", R"(["x", "y", "out", 128, null, null])"));
  // nvcc declares an int as .u32: -1 is the int -1, as a params s32 value gives it.
  l = launch(t, *t.ref);
  REQUIRE(l.launch.has_value());
  CHECK(l.launch->args[4].scalar == -1);
  t = loads(pair_with(R"(["out", "x", "y", "n", -2147483649])", R"(["x", "y", "out", 128, null, null])"));
  CHECK(has(launch(t, *t.ref).error, "-2147483649 is out of the range"));
  t = loads(pair_with(R"(["out", "x", "y", "n", 4294967296])", R"(["x", "y", "out", 128, null, null])"));
  CHECK(has(launch(t, *t.ref).error, "4294967296 is out of the range"));
  // A scalar of another width.
  t = loads(R"({"ref": {"ptx": "signature.ptx", "kernel": "add_ref", "block": [128], "args": ["out", "x", "y", "w", 1]},
      "opt": {"ptx": "signature.ptx", "kernel": "add_compiled", "block": [128], "args": ["x", "y", "out", 128, null, null]},
      "params": [{"name": "x", "dtype": "f32", "shape": [128], "role": "in"},
                 {"name": "y", "dtype": "f32", "shape": [128], "role": "in"},
                 {"name": "out", "dtype": "f32", "shape": [128], "role": "out"},
                 {"name": "w", "dtype": "s64", "value": 128}]})");
  CHECK(has(launch(t, *t.ref).error, "is the scalar 'w' (s64, 64 bits), but the parameter has 32 bits"));
  // Without "args", a params list that does not fit is said so too, with the way out.
  t = loads(R"({"kernel": {"ptx": "signature.ptx", "kernel": "add_compiled", "block": [128]}, )" + kPool + "}");
  l = launch(t, *t.ref);
  CHECK(has(l.error, "\"params\" gives 4 arguments but 'add_compiled' has 6 PTX parameters"));
  CHECK(has(l.error, "\"args\" in \"kernel\""));
}

TEST_CASE("args: names, outputs and the pool are checked when the spec is read") {
  std::string e = parse_error(pair_with(R"(["out", "x", "z", "n", 1])", R"(["x", "y", "out", 128, null, null])"));
  CHECK(has(e, "\"ref.args[2]\" is \"z\": no entry of \"params\" has that name (they are x, y, out, n)"));
  e = parse_error(pair_with(R"(["out", "x", "y", "n", true])", R"(["x", "y", "out", 128, null, null])"));
  CHECK(has(e, "\"ref.args[4]\" is true, a boolean"));
  e = parse_error(pair_with(R"({"a": 1})", R"(["x", "y", "out", 128, null, null])"));
  CHECK(has(e, "\"ref.args\" is {\"a\":1}: it must be a list"));
  // An output twice in one kernel would be one memory on the GPU, two here.
  e = parse_error(pair_with(R"(["out", "x", "y", "n", 1])", R"(["x", "out", "out", 128, null, null])"));
  CHECK(has(e, "\"opt.args[2]\" gives the output 'out' to \"opt\" a second time"));
  // An input may be given twice (both read the same symbols).
  CHECK(loads(pair_with(R"(["out", "x", "x", "n", 1])", R"(["x", "y", "out", 128, null, null])")).ref->args->size() == 5);
  // An output only one kernel takes has nothing to be compared with: an
  // error, never a check that quietly compares nothing.
  e = parse_error(R"({"ref": {"ptx": "signature.ptx", "kernel": "add_ref", "block": [128], "args": ["out", "x", "y", "n", 1]},
      "opt": {"ptx": "signature.ptx", "kernel": "add_compiled", "block": [128], "args": ["x", "y", "out2", 128, null, null]},
      "params": [{"name": "x", "dtype": "f32", "shape": [128], "role": "in"},
                 {"name": "y", "dtype": "f32", "shape": [128], "role": "in"},
                 {"name": "out", "dtype": "f32", "shape": [128], "role": "out"},
                 {"name": "out2", "dtype": "f32", "shape": [128], "role": "out"},
                 {"name": "n", "dtype": "s32", "value": 128}]})");
  CHECK(has(e, "\"opt.args\": the output 'out' is taken by \"ref\" only: outputs are compared by name"));
  // With "args", params is a pool: an entry no kernel takes is allowed (a
  // generator lists the source's arguments; Triton drops strides equal to 1).
  CHECK(loads(pair_with(R"(["out", "x", "y", 128, 1])", R"(["x", "y", "out", 128, null, null])")).params.size() == 4);
  // But a pair with no output to compare would be "equivalent" whatever the kernels do.
  e = parse_error(R"({"ref": {"ptx": "signature.ptx", "kernel": "add_ref", "block": [128], "args": ["x", "x", "y", 128, 1]},
      "opt": {"ptx": "signature.ptx", "kernel": "add_compiled", "block": [128], "args": ["x", "y", "y", 128, null, null]},
      "params": [{"name": "x", "dtype": "f32", "shape": [128], "role": "in"},
                 {"name": "y", "dtype": "f32", "shape": [128], "role": "in"}]})");
  CHECK(has(e, "\"ref.args\" and \"opt.args\" take no output tensor"));
  // A kernel without "args" takes params in order, beside one with them.
  Spec mixed = loads(R"({"ref": {"ptx": "signature.ptx", "kernel": "add_ref", "block": [128], "args": ["out", "x", "y", "n", 1]},
      "opt": {"ptx": "signature.ptx", "kernel": "uses_scratch", "block": [128]},
      "params": [{"name": "x", "dtype": "f32", "shape": [128], "role": "in"},
                 {"name": "out", "dtype": "f32", "shape": [128], "role": "out"},
                 {"name": "y", "dtype": "f32", "shape": [128], "role": "in"},
                 {"name": "n", "dtype": "s32", "value": 128}]})");
  CHECK_FALSE(mixed.opt->args.has_value());
}

TEST_CASE("args: a null pointer the kernel does dereference is not a guess") {
  Spec s = loads(R"({"kernel": {"ptx": "signature.ptx", "kernel": "uses_scratch", "block": [32], "args": ["x", "out", null]},
      "params": [{"name": "x", "dtype": "f32", "shape": [32], "role": "in"},
                 {"name": "out", "dtype": "f32", "shape": [32], "role": "out"}]})");
  Report r = check(s);
  CHECK(r.verdict == Outcome::Unsupported);
  INFO(r.text());
  CHECK(has(r.text(), "null"));
}

TEST_CASE("block: from .reqntid when not given, and never outside .reqntid or .maxntid") {
  Spec s = from_file("reqntid.json");
  CHECK(s.ref->block.count() == 0);  // not given
  LaunchResult l = launch(s, *s.ref);
  REQUIRE(l.launch.has_value());
  CHECK((l.launch->block.x == 128 && l.launch->block.y == 1 && l.launch->block.z == 1));
  CHECK(launch_of(s, *s.ref).block.x == 128);
  CHECK(check(s).verdict == Outcome::Ok);
  auto with_block = [](const std::string& ptx, const std::string& kernel, const std::string& block) {
    return R"({"kernel": {"ptx": ")" + ptx + R"(", "kernel": ")" + kernel + "\"" + block + R"(},
      "params": [{"name": "x", "dtype": "f32", "shape": [128], "role": "in"},
                 {"name": "y", "dtype": "f32", "shape": [128], "role": "out"}]})";
  };
  // The block .reqntid names may be given too; another one is an error.
  Spec same = loads(with_block("reqntid.ptx", "scale_req", R"(, "block": [128, 1, 1])"));
  CHECK(launch(same, *same.ref).launch.has_value());
  Spec other = loads(with_block("reqntid.ptx", "scale_req", R"(, "block": [64, 2])"));
  l = launch(other, *other.ref);
  CHECK(has(l.error, "inline.json: \"kernel.block\" [64, 2, 1] is not the block 'scale_req' requires: its .reqntid is "
                     "128, 1, 1"));
  Report r = check(other);
  CHECK(r.verdict == Outcome::Error);
  CHECK(has(r.error, ".reqntid"));
  // No block and no .reqntid: the missing block, said at launch.
  Spec none = loads(with_block("launch_bounds.ptx", "scale_req", ""));
  l = launch(none, *none.ref);
  CHECK(has(l.error, "\"kernel\" needs \"block\": the PTX of 'scale_req' has no .reqntid"));
  CHECK(check(none).verdict == Outcome::Error);
  // Without a program, launch_of gives a launch every run refuses.
  CHECK(launch_of(none, *none.ref).block.count() == 0);
  // .maxntid bounds the threads in all (__launch_bounds__(64) is .maxntid 64, 1, 1).
  Spec over = from_file("maxntid.json");
  l = launch(over, *over.ref);
  CHECK(has(l.error, "\"kernel.block\" [128, 1, 1] has 128 threads, more than the 64 of the .maxntid 64, 1, 1 of "
                     "'scale_bounded'"));
  CHECK(check(over).verdict == Outcome::Error);
  CHECK(check(from_file("maxntid_2d.json")).verdict == Outcome::Ok);  // 8 x 8 = 64 threads
}

TEST_CASE("init: outputs start with a value, -inf, inf or their input symbols") {
  Spec s = from_file("init.json");
  const ParamSpec& m = s.params[1];
  const ParamSpec& sum = s.params[2];
  CHECK(m.init == TensorInit::Value);
  CHECK(m.init_inf == -1);
  CHECK(sum.init == TensorInit::Value);
  CHECK(sum.init_inf == 0);
  CHECK(sum.init_value == Rational(0));
  LaunchResult l = launch(s, *s.opt);
  REQUIRE(l.launch.has_value());
  CHECK(l.launch->args[1].tensor.init_inf == -1);
  CHECK(l.launch->args[2].tensor.init == TensorInit::Value);
  auto param = [](const std::string& p) {
    return loads(R"({"kernel": {"ptx": "init.ptx", "kernel": "rowstats_ref", "block": [32]}, "params": [)" + p + "]}")
        .params[0];
  };
  CHECK(param(R"({"name": "m", "dtype": "f32", "shape": [4], "role": "out", "init": "inf"})").init_inf == 1);
  CHECK(param(R"({"name": "m", "dtype": "f32", "shape": [4], "role": "out", "init": "input"})").init ==
        TensorInit::Input);
  CHECK(param(R"({"name": "m", "dtype": "f32", "shape": [4], "role": "inout", "init": 0.1})").init_value ==
        Rational::from_f32_bits(0x3dcccccd));  // 0.1 as an f32 holds it
  CHECK(param(R"({"name": "m", "dtype": "s32", "shape": [4], "role": "out", "init": -3})").init_value == Rational(-3));
  auto bad = [](const std::string& p) {
    return parse_error(R"({"kernel": {"ptx": "init.ptx", "kernel": "rowstats_ref", "block": [32]}, "params": [)" + p + "]}");
  };
  CHECK(has(bad(R"({"name": "x", "dtype": "f32", "shape": [4], "role": "in", "init": 0})"),
            "params[0] ('x') has \"init\" but is an input"));
  CHECK(has(bad(R"({"name": "m", "dtype": "s32", "shape": [4], "role": "out", "init": "-inf"})"),
            "params[0] ('m'): \"init\" is \"-inf\" but the tensor holds integers (s32)"));
  CHECK(has(bad(R"({"name": "m", "dtype": "s32", "shape": [4], "role": "out", "init": 0.5})"),
            "params[0] ('m'): \"init\" 0.5 must be an integer"));
  CHECK(has(bad(R"({"name": "m", "dtype": "f32", "shape": [4], "role": "out", "init": "zero"})"),
            "\"init\" is \"zero\": \"init\" is a number, \"-inf\", \"inf\" or \"input\""));
  CHECK(has(bad(R"({"name": "m", "dtype": "f32", "shape": [4], "role": "out", "init": true})"), "\"init\" is true"));
  CHECK(has(bad(R"({"name": "a", "dtype": "f32", "value": 1, "init": 0})"), "is a scalar: \"init\" is for output"));
  // Without "init" the update kernel reads its outputs uninitialized; with a
  // wrong one it computes something else (tests/cases/spec_keys).
  CHECK(check_equivalence(from_file("init_missing.json")).verdict == Outcome::Uninitialized);
  CHECK(check_equivalence(s).verdict == Outcome::Equivalent);
}

TEST_CASE("symbolic float scalars: a counterexample names them, fpsan runs with them") {
  Spec s = from_file("alpha.json");
  CHECK(s.params[3].symbolic);
  LaunchResult l = launch(s, *s.ref);
  REQUIRE(l.launch.has_value());
  CHECK(l.launch->args[3].symbolic);
  CHECK(l.launch->args[3].tensor.name == "alpha");
  CHECK(check_equivalence(s).verdict == Outcome::Equivalent);
  Report wrong = check_equivalence(from_file("alpha_wrong.json"));
  REQUIRE(wrong.verdict == Outcome::NotEquivalent);
  INFO(wrong.text());
  CHECK(has(wrong.text(), "alpha[0] = "));
  CHECK(has(wrong.json(), "alpha[0]"));
  bool alpha_given = false;
  for (const auto& kv : wrong.mismatch->counterexample.inputs.values) alpha_given = alpha_given || kv.second != Rational(1);
  CHECK(alpha_given);
  // FpSan payloads: alpha is an input like the tensors' elements.
  PayloadOptions o;
  o.trials = 20;
  Report agree = check_payloads(s, o);
  INFO(agree.text());
  CHECK(agree.verdict == Outcome::PayloadsAgree);
  CHECK(check_payloads(from_file("alpha_wrong.json"), o).verdict == Outcome::PayloadsDiffer);
  // Only float scalars: an integer one shapes control flow.
  auto bad = [](const std::string& p) {
    return parse_error(R"({"kernel": {"ptx": "alpha.ptx", "kernel": "axpy_ref", "block": [32]}, "params": [)" + p + "]}");
  };
  CHECK(has(bad(R"({"name": "n", "dtype": "s32", "symbolic": true})"),
            "params[0] ('n') is \"symbolic\" but its dtype is s32: only float scalars"));
  CHECK(has(bad(R"({"name": "a", "dtype": "f32", "symbolic": true, "value": 2})"), "takes no \"value\""));
  CHECK(has(bad(R"({"name": "a", "dtype": "f32", "symbolic": 1})"), "\"params[0].symbolic\" is 1: it must be true or false"));
  CHECK(has(bad(R"({"name": "a", "dtype": "f32"})"), "\"symbolic\": true"));
  for (const char* t : {"f16", "bf16", "f64"})
    CHECK(loads(R"({"kernel": {"ptx": "alpha.ptx", "kernel": "axpy_ref", "block": [32]}, "params": [{"name": "a", "dtype": ")" +
                std::string(t) + R"(", "symbolic": true}]})")
              .params[0]
              .symbolic);
}

TEST_CASE("kernel names: demangled, exact, ambiguous and missing") {
  Spec s = from_file("template.json");
  KernelLoad k = load_kernel(*s.ref);
  REQUIRE(k.program.has_value());
  CHECK(k.program->name == "_Z9tile_copyILi32EEvPKfPf");
  KernelSpec named = *s.ref;
  named.kernel = "_Z9tile_copyILi64EEvPKfPf";  // the mangled name still works
  CHECK(load_kernel(named).program->name == "_Z9tile_copyILi64EEvPKfPf");
  named.kernel = "void tile_copy<64>(float const*, float*)";  // and the whole demangled one
  CHECK(load_kernel(named).program->name == "_Z9tile_copyILi64EEvPKfPf");
  named.kernel = "twice(double const*, double*)";
  CHECK(load_kernel(named).program->name == "_Z5twicePKdPd");
  CHECK(check_equivalence(s).verdict == Outcome::Equivalent);
  named.kernel = "twice";
  KernelLoad two = load_kernel(named);
  CHECK_FALSE(two.program.has_value());
  CHECK(two.bad_input);
  INFO(two.error);
  CHECK(has(two.error, "'twice' names 2 kernels: _Z5twicePKfPf (twice(float const*, float*)), _Z5twicePKdPd "
                       "(twice(double const*, double*))"));
  named.kernel = "tile_copy<16>";
  KernelLoad none = load_kernel(named);
  CHECK(none.bad_input);
  INFO(none.error);
  CHECK(has(none.error, "no kernel named 'tile_copy<16>'"));
  CHECK(has(none.error, "_Z9tile_copyILi32EEvPKfPf (tile_copy<32>), _Z9tile_copyILi64EEvPKfPf (tile_copy<64>), copy_plain"));
  CHECK(check(from_file("template_ambiguous.json")).verdict == Outcome::Error);
}

TEST_CASE("one CTA: kernels that write different elements there get the ctas-all hint") {
  const std::string hint = "the kernels write different elements on CTA (0,0,0): they may map CTAs to tiles "
                           "differently; \"ctas\": \"all\" runs the whole grid and compares the whole outputs";
  Spec s = from_file("ctas_hint.json");
  Report r = check_equivalence(s);
  REQUIRE(r.verdict == Outcome::NotEquivalent);
  REQUIRE(r.mismatch.has_value());
  CHECK(has(r.mismatch->why, "never writes y[0]"));
  CHECK(has(r.mismatch->why, hint));
  CHECK(has(r.text(), "\"ctas\": \"all\" runs the whole grid"));
  CHECK(has(r.json(), "ctas"));
  // The whole grid: equivalent.
  s.all_ctas = true;
  CHECK(check_equivalence(s).verdict == Outcome::Equivalent);
  // Elements both write that differ are the evidence, without the hint.
  auto add_vs = [](const std::string& opt, int ref_n, const std::string& grid) {
    return loads(R"({"ref": {"ptx": "signature.ptx", "kernel": "add_ref", "block": [64], "args": ["out", "x", "y", )" +
                 std::to_string(ref_n) + R"(, 1]}, "opt": {"ptx": "signature.ptx", "kernel": ")" + opt +
                 R"(", "block": [64], "args": ["x", "y", "out", 64, null, null]}, "grid": )" + grid + R"(,
        "params": [{"name": "x", "dtype": "f32", "shape": [128], "role": "in"},
                   {"name": "y", "dtype": "f32", "shape": [128], "role": "in"},
                   {"name": "out", "dtype": "f32", "shape": [128], "role": "out"}]})");
  };
  Report values = check_equivalence(add_vs("sub_compiled", 40, "[2]"));
  REQUIRE(values.verdict == Outcome::NotEquivalent);
  CHECK_FALSE(has(values.mismatch->why, "ctas"));
  CHECK(values.mismatch->element < 40);  // a refuted element both write
  // Equal where both write, different coverage: the hint.
  Report coverage = check_equivalence(add_vs("add_compiled", 40, "[2]"));
  REQUIRE(coverage.verdict == Outcome::NotEquivalent);
  CHECK(has(coverage.mismatch->why, "never writes out[40]"));
  CHECK(has(coverage.mismatch->why, hint));
  // A grid of one CTA is the whole grid: no hint.
  Report one = check_equivalence(add_vs("add_compiled", 40, "[1]"));
  REQUIRE(one.verdict == Outcome::NotEquivalent);
  CHECK(has(one.mismatch->why, "never writes out[40]"));
  CHECK_FALSE(has(one.mismatch->why, "ctas"));
}

TEST_CASE("\"ctas\": \"all\": an output one kernel never writes is a difference") {
  // The whole-grid outputs hold only the tensors a kernel wrote: one the
  // optimized kernel never writes (n = 0 here) was once skipped, and the
  // check said equivalent with nothing compared.
  Spec s = loads(R"({"ref": {"ptx": "signature.ptx", "kernel": "add_ref", "block": [64], "args": ["out", "x", "y", 128, 1]},
      "opt": {"ptx": "signature.ptx", "kernel": "add_compiled", "block": [64], "args": ["x", "y", "out", 0, null, null]},
      "grid": [2], "ctas": "all",
      "params": [{"name": "x", "dtype": "f32", "shape": [128], "role": "in"},
                 {"name": "y", "dtype": "f32", "shape": [128], "role": "in"},
                 {"name": "out", "dtype": "f32", "shape": [128], "role": "out"}]})");
  Report r = check_equivalence(s);
  INFO(r.text());
  REQUIRE(r.verdict == Outcome::NotEquivalent);
  CHECK(has(r.mismatch->why, "never writes out[0]"));
  CHECK_FALSE(has(r.mismatch->why, "ctas"));  // the whole grid was compared
}
