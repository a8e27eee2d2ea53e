// The race check's read sets (src/eval/memory.hpp, ReadEpoch;
// machine_races.cpp, set_epoch): the entries of the threads (and copy
// agents) that read a cell without synchronizing with each other, one per
// column, sorted by column whatever order the reads come in, so that a race
// report names the lowest-numbered unordered reader, as the dense vector
// clocks before them did.
#include "tileverify/eval.hpp"

#include <doctest/doctest.h>

using namespace tileverify;
using Reg = ProgramBuilder::Reg;

// 64 threads read s[0] after a barrier; warp 0 first waits at a warp sync,
// so the round-robin run reads in warp 1 (threads 32-63) before warp 0.
// Thread 31 then writes s[0] without a barrier: every other reader is
// unordered with it, and the report names the lowest, thread 0, though
// warp 1's reads came first.
TEST_CASE("read sets: a race names the lowest unordered reader, whatever order the reads came in") {
  ProgramBuilder b("late_warp");
  auto y = b.param_pointer("y");
  auto s = b.shared("s", DType::F32, 1);
  Reg tid = b.special(Special::TidX);
  Reg zero = b.imm(DType::U32, 0);
  auto after_init = b.label(), no_sync = b.label(), end = b.label();
  b.bra_if(b.setp(Cmp::NE, tid, zero), after_init);
  b.store(s, zero, b.fimm(Rational(1)));
  b.place(after_init);
  b.bar();
  b.bra_if(b.setp(Cmp::GE, tid, b.imm(DType::U32, 32)), no_sync);
  b.warp_sync();
  b.place(no_sync);
  Reg v = b.reg(DType::F32);
  b.at({"late.cu", 9, 5});
  b.load(v, s, zero);
  b.bra_if(b.setp(Cmp::NE, tid, b.imm(DType::U32, 31)), end);
  b.at({"late.cu", 10, 5});
  b.store(s, zero, b.fimm(Rational(2)));
  b.store(y, zero, v);
  b.place(end);
  b.ret();
  const Program p = b.finish();
  Launch l;
  l.block = Dim3{64, 1, 1};
  l.args = {LaunchArg::of_tensor({"y", DType::F32, {1}, Role::Out})};
  ConcreteDomain dom;
  auto r = run_program(p, l, dom);
  REQUIRE(r.diagnostics.size() == 1);
  const Diagnostic& d = r.diagnostics[0];
  INFO(d.text());
  CHECK(d.kind == DiagKind::Race);
  REQUIRE(d.accesses.size() == 2);
  CHECK(d.accesses[0].thread == 0);
  CHECK(!d.accesses[0].write);
  CHECK(d.accesses[1].thread == 31);
  CHECK(d.accesses[1].write);
  // Every schedule finds a race on s[0].
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    RunOptions o;
    o.random_schedule = seed;
    auto rs = run_program(p, l, dom, o);
    REQUIRE(rs.diagnostics.size() == 1);
    CHECK(rs.diagnostics[0].kind == DiagKind::Race);
    CHECK(rs.diagnostics[0].buffer == "s");
  }
}
