// cp.async: the global read happens at the cp.async, the shared write when a
// cp.async.wait_group / wait_all retires the copy's group. Touching the
// destination before that is a race, for the copying thread too.
// Kernels: tests/ptx/cp_async.cu (nvcc 13 PTX in cp_async.ptx) and PTX below.
#include "ptx_helpers.hpp"

using namespace tileverify;
using namespace ptx_test;

namespace {

std::vector<ParamSpec> x_y(std::uint64_t nx, std::uint64_t ny) {
  return {tensor("x", DType::F32, nx, Role::In), tensor("y", DType::F32, ny, Role::Out)};
}

}  // namespace

TEST_CASE("16-byte cp.async staging, then wait, then a barrier, equals reading global memory directly") {
  Report r = equiv("cp_async.ptx", "staged_ref", "staged", 32, x_y(128, 32));
  INFO(r.text());
  CHECK(r.verdict == Outcome::Equivalent);
  CHECK(r.stats.outputs_compared == 32);
}

TEST_CASE("two commit groups: wait_group 1 retires only the first") {
  Report ok = equiv("cp_async.ptx", "two_stages_ref", "two_stages", 32, x_y(64, 32));
  INFO(ok.text());
  CHECK(ok.verdict == Outcome::Equivalent);

  // Reading the second stage after wait_group 1: its copies are still in flight.
  Report early = equiv("cp_async.ptx", "two_stages_ref", "two_stages_early", 32, x_y(64, 32));
  INFO(early.text());
  REQUIRE(early.verdict == Outcome::Race);
  const Diagnostic& d = early.diagnostics.back();
  REQUIRE(d.accesses.size() == 2);
  CHECK(d.accesses[0].kind == "cp.async write");
  CHECK(d.accesses[0].loc.line == 268);  // the second stage's cp.async
  CHECK(d.accesses[1].kind == "read");
  CHECK(d.accesses[1].loc.line == 286);  // ld.shared of s[1][...]
  CHECK(d.text().find("cp.async.wait_group") != std::string::npos);
}

TEST_CASE("reading a cp.async destination before the wait is a race, even in the copying thread") {
  Report r = check("cp_async.ptx", "no_wait", 32, x_y(32, 32));
  INFO(r.text());
  REQUIRE(r.verdict == Outcome::Race);
  const Diagnostic& d = r.diagnostics.back();
  REQUIRE(d.accesses.size() == 2);
  CHECK(d.accesses[0].thread == d.accesses[1].thread);
  CHECK(d.accesses[0].kind == "cp.async write");
  CHECK(d.accesses[0].loc.line == 121);
  CHECK(d.accesses[1].loc.line == 126);
  CHECK(r.json().find("\"kind\": \"cp.async write\"") != std::string::npos);
}

TEST_CASE("a one-thread CTA still races with its own cp.async (races between threads are not tracked there)") {
  Report r = check("cp_async.ptx", "no_wait", 1, x_y(32, 32));
  INFO(r.text());
  REQUIRE(r.verdict == Outcome::Race);
  const Diagnostic& d = r.diagnostics.back();
  REQUIRE(d.accesses.size() == 2);
  CHECK(d.accesses[0].kind == "cp.async write");
}

TEST_CASE("after the wait, another thread still needs a barrier to read the copy") {
  Report r = check("cp_async.ptx", "no_barrier", 32, x_y(32, 32));
  INFO(r.text());
  REQUIRE(r.verdict == Outcome::Race);
  const Diagnostic& d = r.diagnostics.back();
  REQUIRE(d.accesses.size() == 2);
  CHECK(d.accesses[0].thread != d.accesses[1].thread);
  bool async_side = d.accesses[0].kind == "cp.async write" || d.accesses[1].kind == "cp.async write";
  CHECK(async_side);
  // Every schedule finds it.
  Program p = lower_file("cp_async.ptx", "no_barrier");
  ExprContext c;
  SymbolicDomain dom(c);
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    RunOptions o;
    o.random_schedule = seed;
    auto run = run_program(p, launch_of(32, x_y(32, 32)), dom, o);
    REQUIRE(!run.ok());
    CHECK(run.diagnostics.back().kind == DiagKind::Race);
  }
}

TEST_CASE("a cp.async with a source size below its copy size fills the rest with zeros") {
  Program p = lower_file("cp_async.ptx", "zero_fill");
  ConcreteDomain dom;
  std::vector<double> x(32);
  for (std::size_t i = 0; i < 32; ++i) x[i] = double(i) + 0.5;
  dom.inputs["x"] = x;
  auto params = x_y(32, 32);
  params.push_back(scalar("n", 20));
  auto run = run_program(p, launch_of(32, params), dom);
  INFO((run.ok() ? "" : run.diagnostics[0].text()));
  REQUIRE(run.ok());
  for (std::size_t t = 0; t < 32; ++t) CHECK(*run.outputs.at("y")[t] == doctest::Approx(t < 20 ? x[t] : 0.0));
}

TEST_CASE("the forms of bulk copies and TMA that stay unsupported say why, with file:line:column") {
  // TMA loads and stores of .tile boxes and cp.async.bulk with mbarrier
  // completion or bulk groups are modelled (tests/eval/mbarrier_test.cpp), and
  // so is the mbarrier completion of the non-bulk cp.async
  // (tests/eval/mbarrier_libcu_test.cpp); im2col, reductions and copies
  // between the CTAs of a cluster are not.
  const std::string head = ".version 9.0\n.target sm_90\n.address_size 64\n"
                           ".visible .entry k(.param .u64 p)\n{\n  .reg .b32 %r<4>;\n  .reg .b64 %rd<4>;\n  .reg .b16 %rs<4>;\n";
  ptx::Error im2col = lower_error_of(
      head + "  cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3, %r2}], [%r2], {%rs1};\n}\n",
      "k");
  CHECK(im2col.loc.line == 9);
  CHECK(im2col.loc.column == 3);
  CHECK(im2col.unsupported);
  CHECK(im2col.message.find("im2col") != std::string::npos);
  ptx::Error reduce = lower_error_of(
      head + "  cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%rd1, {%r2, %r3}], [%r1];\n}\n", "k");
  CHECK(reduce.unsupported);
  ptx::Error peer = lower_error_of(
      head + "  cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r1], [%r2], 256, [%r3];\n}\n", "k");
  CHECK(peer.unsupported);
  CHECK(peer.message.find("cluster") != std::string::npos);
}
