// The synchronization rules of docs/evaluator.md ("Synchronization"): which
// warp syncs pair up (same mask; on sm_70+ any instruction of the same
// operation), mismatched member masks, barrier divergence, and the wait-for
// cycle of a deadlock report. Kernels built with ProgramBuilder; the .cu
// versions of the main cases are specs in tests/cases/sync.
#include "tileverify/eval.hpp"
#include "../../examples/kernels.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace tileverify;
using namespace tileverify::kernels;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// n threads with tensors x and y of n floats, or with no arguments.
Launch threads(std::uint32_t n) { return softmax_launch(n, n); }
Launch bare(std::uint32_t n) {
  Launch l;
  l.block = Dim3{n, 1, 1};
  return l;
}

RunResult<SymbolicDomain> run(const Program& p, const Launch& l, ExprContext& c, RunOptions o = {}) {
  SymbolicDomain dom(c);
  return run_program(p, l, dom, o);
}

// s[lane] = x[lane]; lanes below 16 and the others reach bar.warp.sync
// `lower` / `upper` at two instructions (lines 10 and 12); then every lane
// reads s[partner(lane)] into y[lane].
Program two_sites(std::uint32_t lower, std::uint32_t upper, bool read_other_half) {
  ProgramBuilder b("two_sites");
  auto x = b.param_pointer("x"), y = b.param_pointer("y");
  auto s = b.shared("s", DType::F32, 32);
  Reg lane = b.special(Special::LaneId);
  Reg v = b.reg(DType::F32);
  b.at({"w.cu", 8, 3});
  b.load(v, x, lane);
  b.store(s, lane, v);
  auto high = b.label(), joined = b.label();
  b.bra_if(b.setp(Cmp::GE, lane, b.imm(DType::U32, 16)), high);
  b.at({"w.cu", 10, 5}).warp_sync(lower);
  b.bra(joined);
  b.place(high);
  b.at({"w.cu", 12, 5}).warp_sync(upper);
  b.place(joined);
  b.at({"w.cu", 14, 3});
  Reg partner = read_other_half ? b.xor_(lane, b.imm(DType::U32, 16)) : b.xor_(lane, b.imm(DType::U32, 1));
  Reg w = b.reg(DType::F32);
  b.load(w, s, partner);
  b.store(y, lane, w);
  return b.finish();
}

}  // namespace

TEST_CASE("bar.warp.sync at two instructions with one mask synchronizes from sm_70 on, not on sm_6x") {
  ExprContext c;
  for (unsigned sm : {0u, 70u, 90u}) {
    Program p = two_sites(0xffffffffu, 0xffffffffu, true);
    p.sm = sm;  // 0: unknown, taken as sm_70 and later
    auto r = run(p, threads(32), c);
    INFO("sm " << sm << ": " << (r.ok() ? "" : r.diagnostics[0].text()));
    REQUIRE(r.ok());
    // The halves exchanged values through shared memory: the sync ordered the writes.
    CHECK(*r.outputs.at("y")[0] == c.symbol("x", 16));
    CHECK(*r.outputs.at("y")[20] == c.symbol("x", 4));
    CHECK(r.stats.warp_syncs == 1);
  }
  Program old = two_sites(0xffffffffu, 0xffffffffu, true);
  old.sm = 60;
  auto r = run(old, threads(32), c);
  REQUIRE(r.diagnostics.size() == 1);
  const Diagnostic& d = r.diagnostics[0];
  INFO(d.text());
  CHECK(d.kind == DiagKind::Deadlock);
  CHECK(contains(d.detail, "wait-for cycle: threads 0-15 wait at w.cu:10:5 for threads 16-31,"));
  CHECK(contains(d.detail, "which wait at w.cu:12:5 for threads 0-15"));
  CHECK(contains(d.detail, "for .target sm_6x or below"));
  CHECK(contains(d.detail, "this code is for sm_60"));
}

TEST_CASE("mismatched __syncwarp masks: lanes 0-15 with 0x0000ffff, lanes 16-31 with 0xffffffff") {
  ExprContext c;
  // Each half reads its own half: without the mask rule the run ends cleanly,
  // lanes 0-15 completing their sync alone and exiting before 16-31 sync.
  Program p = two_sites(0x0000ffffu, 0xffffffffu, false);
  for (std::uint64_t seed : {0, 1, 2, 3, 4, 5, 6, 7}) {
    RunOptions o;
    if (seed) o.random_schedule = seed;
    auto r = run(p, threads(32), c, o);
    REQUIRE(r.diagnostics.size() == 1);
    const Diagnostic& d = r.diagnostics[0];
    INFO("seed " << seed << ": " << d.text());
    CHECK(d.kind == DiagKind::Deadlock);
    CHECK(d.message == "mismatched __syncwarp masks: threads 16-31 use mask 0xffffffff, threads 0-15 mask 0x0000ffff");
    CHECK(d.threads.size() == 32);
    CHECK(contains(d.detail, "threads 16-31 wait at w.cu:12:5 (bar.warp.sync 0xffffffff) with mask 0xffffffff, which names threads 0-15"));
    CHECK(contains(d.detail, "threads 0-15 executed their corresponding __syncwarp at w.cu:10:5"));
    CHECK(contains(d.detail, "and then exited"));
    CHECK(contains(d.detail, "must execute a corresponding __syncwarp() with the same mask"));
  }
}

TEST_CASE("two waiting groups whose masks name each other: mismatched at once") {
  ExprContext c;
  // Lanes 16-31 name lane 0 too: each group waits for the other with its own mask.
  auto r = run(two_sites(0xffffffffu, 0xffff0001u, false), threads(32), c);
  REQUIRE(r.diagnostics.size() == 1);
  const Diagnostic& d = r.diagnostics[0];
  INFO(d.text());
  CHECK(d.kind == DiagKind::Deadlock);
  CHECK(contains(d.message, "mismatched __syncwarp masks: threads 0-15 use mask 0xffffffff, threads 16-31 mask 0xffff0001"));
  CHECK(contains(d.detail, "neither can complete"));
}

TEST_CASE("masks that are not mismatched: nested, shrinking, after a common sync, tail lanes that exit first") {
  ExprContext c;
  SUBCASE("lanes 0-15 sync twice among themselves, then the whole warp once") {
    ProgramBuilder b("nested");
    auto x = b.param_pointer("x"), y = b.param_pointer("y");
    auto s = b.shared("s", DType::F32, 32);
    Reg lane = b.special(Special::LaneId);
    Reg v = b.reg(DType::F32);
    b.load(v, x, lane);
    b.store(s, lane, v);
    auto skip = b.label();
    b.bra_if(b.setp(Cmp::GE, lane, b.imm(DType::U32, 16)), skip);
    b.warp_sync(0x0000ffffu);
    b.warp_sync(0x0000ffffu);
    b.place(skip);
    b.warp_sync(0xffffffffu);
    Reg w = b.reg(DType::F32);
    b.load(w, s, b.xor_(lane, b.imm(DType::U32, 16)));
    b.store(y, lane, w);
    auto r = run(b.finish(), threads(32), c);
    INFO((r.ok() ? "" : r.diagnostics[0].text()));
    CHECK(r.ok());
  }
  SUBCASE("a tree sum whose mask shrinks with the lanes still at work") {
    // for (o = 16; o > 0; o /= 2) if (lane < 2o) { if (lane < o) s[lane] += s[lane + o]; __syncwarp(low 2o lanes); }
    ProgramBuilder b("tree");
    auto x = b.param_pointer("x"), y = b.param_pointer("y");
    auto s = b.shared("s", DType::F32, 32);
    Reg lane = b.special(Special::LaneId);
    Reg v = b.reg(DType::F32);
    b.load(v, x, lane);
    b.store(s, lane, v);
    b.warp_sync(0xffffffffu);
    auto out = b.label();
    for (std::uint32_t o = 16; o > 0; o /= 2) {
      b.bra_if(b.setp(Cmp::GE, lane, b.imm(DType::U32, 2 * o)), out);
      auto skip = b.label();
      b.bra_if(b.setp(Cmp::GE, lane, b.imm(DType::U32, o)), skip);
      Reg a = b.reg(DType::F32), e = b.reg(DType::F32);
      b.load(a, s, lane);
      b.load(e, s, lane, o);
      b.store(s, lane, b.add(a, e));
      b.place(skip);
      b.warp_sync(o == 16 ? 0xffffffffu : (1u << (2 * o)) - 1);
    }
    Reg zero = b.imm(DType::U32, 0);
    auto last = b.label();
    b.bra_if(b.setp(Cmp::NE, lane, zero), last);
    Reg total = b.reg(DType::F32);
    b.load(total, s, zero);
    b.store(y, zero, total);
    b.place(last);
    b.place(out);
    auto r = run(b.finish(), threads(32), c);
    INFO((r.ok() ? "" : r.diagnostics[0].text()));
    CHECK(r.ok());
  }
  SUBCASE("lanes 0-15 exit after a sync with everyone; lanes 16-31 sync with the full mask again") {
    ProgramBuilder b("common");
    Reg lane = b.special(Special::LaneId);
    b.warp_sync(0x0000ffffu | 0xffff0000u);
    auto stay = b.label();
    b.bra_if(b.setp(Cmp::GE, lane, b.imm(DType::U32, 16)), stay);
    b.ret();
    b.place(stay);
    b.warp_sync(0xffffffffu);
    auto r = run(b.finish(), bare(32), c);
    INFO((r.ok() ? "" : r.diagnostics[0].text()));
    CHECK(r.ok());
  }
  SUBCASE("lanes 0-15 sync among themselves, then a CTA barrier with everyone, then exit") {
    ProgramBuilder b("barrier_between");
    Reg lane = b.special(Special::LaneId);
    auto skip = b.label();
    b.bra_if(b.setp(Cmp::GE, lane, b.imm(DType::U32, 16)), skip);
    b.warp_sync(0x0000ffffu);
    b.place(skip);
    b.bar();
    auto stay = b.label();
    b.bra_if(b.setp(Cmp::GE, lane, b.imm(DType::U32, 16)), stay);
    b.ret();
    b.place(stay);
    b.warp_sync(0xffffffffu);
    auto r = run(b.finish(), bare(32), c);
    INFO((r.ok() ? "" : r.diagnostics[0].text()));
    CHECK(r.ok());
  }
  SUBCASE("tail lanes that return before any sync") {
    ProgramBuilder b("tail");
    Reg lane = b.special(Special::LaneId);
    auto stay = b.label();
    b.bra_if(b.setp(Cmp::LT, lane, b.imm(DType::U32, 20)), stay);
    b.ret();
    b.place(stay);
    b.warp_sync(0xffffffffu);
    b.warp_sync(0xffffffffu);
    auto r = run(b.finish(), bare(32), c);
    CHECK(r.ok());
  }
}

TEST_CASE("shfl.sync at two instructions of the same mode pairs on sm_70+, each lane with its own operands") {
  // Lanes 0-15 shuffle register a (= x[lane]), lanes 16-31 register b
  // (= 2 x[lane]), both shfl.sync.idx reading lane ^ 16 at two instructions.
  auto build = [](ShflMode upper_mode, std::uint32_t upper_mask) {
    ProgramBuilder b("shfl_sites");
    auto x = b.param_pointer("x"), y = b.param_pointer("y");
    Reg lane = b.special(Special::LaneId);
    Reg v = b.reg(DType::F32), r = b.reg(DType::F32);
    b.load(v, x, lane);
    Reg other = b.xor_(lane, b.imm(DType::U32, 16));
    auto high = b.label(), joined = b.label();
    b.bra_if(b.setp(Cmp::GE, lane, b.imm(DType::U32, 16)), high);
    b.at({"s.cu", 5, 5});
    b.mov(r, b.shfl(ShflMode::Idx, v, other));
    b.bra(joined);
    b.place(high);
    Reg twice = b.add(v, v);
    b.at({"s.cu", 7, 5});
    b.mov(r, b.shfl(upper_mode, twice, upper_mode == ShflMode::Idx ? other : b.imm(DType::U32, 1), 0x1f, upper_mask));
    b.place(joined);
    b.store(y, lane, r);
    return b.finish();
  };
  ExprContext c;
  auto ok = run(build(ShflMode::Idx, 0xffffffffu), threads(32), c);
  INFO((ok.ok() ? "" : ok.diagnostics[0].text()));
  REQUIRE(ok.ok());
  Expr x16 = c.symbol("x", 16), x3 = c.symbol("x", 3);
  CHECK(*ok.outputs.at("y")[0] == c.add(x16, x16));  // lane 16's operand of its own instruction
  CHECK(*ok.outputs.at("y")[19] == x3);              // lane 3's operand of its own instruction
  CHECK(ok.stats.warp_syncs == 1);

  Program sm60 = build(ShflMode::Idx, 0xffffffffu);
  sm60.sm = 60;
  auto old = run(sm60, threads(32), c);
  REQUIRE(!old.ok());
  CHECK(old.diagnostics[0].kind == DiagKind::Deadlock);

  // shfl.idx and shfl.down (different qualifiers) never pair: each half waits for the other.
  auto modes = run(build(ShflMode::Down, 0xffffffffu), threads(32), c);
  REQUIRE(!modes.ok());
  INFO(modes.diagnostics[0].text());
  CHECK(modes.diagnostics[0].kind == DiagKind::Deadlock);
  CHECK(contains(modes.diagnostics[0].detail, "with the same\n  qualifiers and the same membermask"));

  // Different masks that name each other: mismatched member masks.
  auto masks = run(build(ShflMode::Idx, 0xffff0001u), threads(32), c);
  REQUIRE(!masks.ok());
  INFO(masks.diagnostics[0].text());
  CHECK(contains(masks.diagnostics[0].message, "mismatched member masks"));
  CHECK(contains(masks.diagnostics[0].detail, "Warp Shuffle Functions"));
}

namespace {

// 64 threads; odd threads return at line 5, the others store, reach
// __syncthreads() at line 7 (twice, in a loop of two, when `loop`) and read
// a neighbour's value.
Program divergent(bool loop) {
  ProgramBuilder b("divergent");
  auto x = b.param_pointer("x"), y = b.param_pointer("y");
  auto s = b.shared("s", DType::F32, 64);
  Reg tid = b.special(Special::TidX);
  auto stay = b.label();
  b.bra_if(b.setp(Cmp::EQ, b.and_(tid, b.imm(DType::U32, 1)), b.imm(DType::U32, 0)), stay);
  b.at({"d.cu", 5, 20}).ret();
  b.place(stay);
  Reg v = b.reg(DType::F32);
  b.at({"d.cu", 6, 3});
  b.load(v, x, tid);
  b.store(s, tid, v);
  Reg i = b.imm(DType::U32, 0), one = b.imm(DType::U32, 1);
  auto top = b.label();
  b.place(top);
  b.at({"d.cu", 7, 3}).bar();
  if (loop) {
    b.assign(Opcode::Add, i, i, one);
    b.bra_if(b.setp(Cmp::LT, i, b.imm(DType::U32, 2)), top);
  }
  Reg w = b.reg(DType::F32);
  b.at({"d.cu", 8, 3});
  b.load(w, s, b.and_(b.add(tid, b.imm(DType::U32, 2)), b.imm(DType::U32, 63)));
  b.store(y, tid, w);
  return b.finish();
}

}  // namespace

TEST_CASE("barrier divergence: a note by default, an error with strict, once per barrier") {
  ExprContext c;
  auto r = run(divergent(true), threads(64), c);
  INFO((r.ok() ? "" : r.diagnostics[0].text()));
  REQUIRE(r.ok());
  CHECK(*r.outputs.at("y")[0] == c.symbol("x", 2));
  REQUIRE(r.notes.size() == 1);  // the barrier completed twice: one note
  const Diagnostic& n = r.notes[0];
  INFO(n.text());
  CHECK(n.kind == DiagKind::BarrierDivergence);
  CHECK(n.message == "__syncthreads() (bar.sync 0) completed with 32 of the CTA's 64 threads: the other 32 had exited");
  CHECK(n.loc.line == 7);
  CHECK(n.threads.size() == 32);
  CHECK(n.threads[0] == 1);
  CHECK(contains(n.detail, "they exited at d.cu:5:20 (ret)"));
  CHECK(contains(n.detail, "threads 0, 2, ..., 62 (32 threads) reached the barrier"));
  CHECK(contains(n.detail, "evaluates identically across the entire thread block"));
  CHECK(contains(n.detail, "--strict"));

  RunOptions strict;
  strict.strict = true;
  auto s = run(divergent(false), threads(64), c, strict);
  REQUIRE(s.diagnostics.size() == 1);
  CHECK(s.diagnostics[0].kind == DiagKind::BarrierDivergence);
  CHECK(s.notes.empty());
  CHECK(s.outputs.empty());

  // Every thread reaches the barrier: nothing to note.
  auto whole = run(naive_softmax(8), softmax_launch(8, 8), c);
  REQUIRE(whole.ok());
  CHECK(whole.notes.empty());
}

TEST_CASE("counted barriers are not barrier divergence, and a starved one is a deadlock chain") {
  // 128 threads; threads 64-127 exit; threads 0-63 meet at bar.sync 1, count.
  auto build = [](std::int64_t count) {
    ProgramBuilder b("named");
    Reg tid = b.special(Special::TidX);
    auto stay = b.label();
    b.bra_if(b.setp(Cmp::LT, tid, b.imm(DType::U32, 64)), stay);
    b.ret();
    b.place(stay);
    b.at({"n.cu", 9, 3}).bar(1, count);
    return b.finish();
  };
  ExprContext c;
  RunOptions strict;
  strict.strict = true;
  auto ok = run(build(64), bare(128), c, strict);
  INFO((ok.ok() ? "" : ok.diagnostics[0].text()));
  CHECK(ok.ok());
  CHECK(ok.notes.empty());
  auto starved = run(build(96), bare(128), c);
  REQUIRE(starved.diagnostics.size() == 1);
  INFO(starved.diagnostics[0].text());
  CHECK(starved.diagnostics[0].kind == DiagKind::Deadlock);
  CHECK(contains(starved.diagnostics[0].detail, "wait-for chain: threads 0-63 wait at n.cu:9:3, which no other thread will join"));
}

TEST_CASE("__syncthreads() at two instructions is a deadlock naming the wait-for cycle") {
  ProgramBuilder b("two_barriers");
  Reg tid = b.special(Special::TidX);
  auto high = b.label(), joined = b.label();
  b.bra_if(b.setp(Cmp::GE, tid, b.imm(DType::U32, 32)), high);
  b.at({"b.cu", 4, 5}).bar();
  b.bra(joined);
  b.place(high);
  b.at({"b.cu", 6, 5}).bar();
  b.place(joined);
  ExprContext c;
  auto r = run(b.finish(), bare(64), c);
  REQUIRE(r.diagnostics.size() == 1);
  const Diagnostic& d = r.diagnostics[0];
  INFO(d.text());
  CHECK(d.kind == DiagKind::Deadlock);
  CHECK(contains(d.detail, "wait-for cycle: threads 0-31 wait at b.cu:4:5 for threads 32-63,\n"
                           "    which wait at b.cu:6:5 for threads 0-31\n"));
  CHECK(contains(d.detail, "bar.sync is barrier.sync.aligned"));
  // What the documents leave undefined, sm_90 hardware tolerates (Boehm's
  // SGEMM kernel 11 does this and runs): the report says both.
  CHECK(contains(d.detail, "Measured on sm_90 GPUs (H100, H200): the two instructions complete together"));
  CHECK(contains(d.detail, "synccheck"));
  CHECK(r.notes.empty());
}

TEST_CASE("a shuffle orders no memory: store, shfl.sync, read of the neighbour's store is a race; bar.warp.sync orders it") {
  // Lane i stores s[i] = x[i], shuffles with lane i ^ 1, then reads s[i ^ 1].
  // shfl.sync waits for its members but the PTX memory model gives it no
  // ordering of memory (only bar.warp.sync "also guarantee[s] memory
  // ordering"); compute-sanitizer's racecheck reports this pattern too.
  auto build = [](bool warp_sync) {
    ProgramBuilder b("shfl_order");
    auto x = b.param_pointer("x"), y = b.param_pointer("y");
    auto s = b.shared("s", DType::F32, 32);
    Reg lane = b.special(Special::LaneId);
    Reg v = b.reg(DType::F32), w = b.reg(DType::F32);
    b.load(v, x, lane);
    b.at({"o.cu", 6, 5});
    b.store(s, lane, v);
    Reg r = b.reg(DType::F32);
    b.mov(r, b.shfl(ShflMode::Bfly, v, b.imm(DType::U32, 1)));
    if (warp_sync) b.warp_sync(0xffffffffu);
    b.at({"o.cu", 9, 5});
    b.load(w, s, b.xor_(lane, b.imm(DType::U32, 1)));
    b.store(y, lane, b.add(w, r));
    return b.finish();
  };
  ExprContext c;
  auto racy = run(build(false), threads(32), c);
  REQUIRE(!racy.ok());
  CHECK(racy.diagnostics[0].kind == DiagKind::Race);
  CHECK(contains(racy.diagnostics[0].message, "4 bytes at shared s+"));
  auto ordered = run(build(true), threads(32), c);
  INFO((ordered.ok() ? "" : ordered.diagnostics[0].text()));
  CHECK(ordered.ok());
}

TEST_CASE("ldmatrix orders no memory either: a store, ldmatrix of another tile, the neighbour's store read is a race") {
  // The PTX memory model gives the warp-wide matrix instructions no memory
  // ordering; on an H100 compute-sanitizer's racecheck reports a store read
  // by a later ldmatrix without __syncwarp (tools/gpu_checks/ldmatrix_order.cu).
  // Here the ldmatrix reads another tile, filled and ordered before, and the
  // race is between s[i] and the read of s[i ^ 1] after it.
  auto build = [](bool warp_sync) {
    ProgramBuilder b("ldmatrix_order");
    auto x = b.param_pointer("x"), y = b.param_pointer("y");
    auto s = b.shared("s", DType::F32, 32);
    auto tile = b.shared("tile", DType::F16, 64);
    Reg lane = b.special(Special::LaneId);
    Reg v = b.reg(DType::F32), w = b.reg(DType::F32), h = b.reg(DType::F16);
    b.load(v, x, lane);
    b.load(h, x, lane);  // (a half of each lane's value: the tile's contents do not matter)
    b.store(tile, lane, h);
    b.store(tile, b.add(lane, b.imm(DType::U32, 32)), h);
    b.warp_sync(0xffffffffu);
    b.store(s, lane, v);
    b.ldmatrix(1, false, tile, b.mul(b.and_(lane, b.imm(DType::U32, 7)), b.imm(DType::U32, 8)));
    if (warp_sync) b.warp_sync(0xffffffffu);
    b.load(w, s, b.xor_(lane, b.imm(DType::U32, 1)));
    b.store(y, lane, w);
    return b.finish();
  };
  ExprContext c;
  auto racy = run(build(false), threads(32), c);
  REQUIRE(!racy.ok());
  CHECK(racy.diagnostics[0].kind == DiagKind::Race);
  CHECK(contains(racy.diagnostics[0].message, "4 bytes at shared s+"));
  auto ordered = run(build(true), threads(32), c);
  INFO((ordered.ok() ? "" : ordered.diagnostics[0].text()));
  CHECK(ordered.ok());
}
