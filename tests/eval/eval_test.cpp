// The evaluator on programs built with ProgramBuilder (issue: structured-CTA
// program model and evaluator, "Tests").
#include "tileverify/decide.hpp"
#include "tileverify/eval.hpp"
#include "../../examples/kernels.hpp"

#include <doctest/doctest.h>

using namespace tileverify;
using namespace tileverify::kernels;

namespace {

std::vector<Expr> outputs_of(const RunResult<SymbolicDomain>& r, const std::string& name) {
  std::vector<Expr> out;
  for (const auto& v : r.outputs.at(name)) {
    REQUIRE(v.has_value());
    out.push_back(*v);
  }
  return out;
}

void require_equivalent(ExprContext& c, const Program& ref, const Launch& lref, const Program& opt, const Launch& lopt,
                        const std::string& out) {
  SymbolicDomain dom(c);
  auto a = run_program(ref, lref, dom), b = run_program(opt, lopt, dom);
  INFO((a.ok() ? std::string() : a.diagnostics[0].text()) << (b.ok() ? std::string() : b.diagnostics[0].text()));
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  auto ya = outputs_of(a, out), yb = outputs_of(b, out);
  REQUIRE(ya.size() == yb.size());
  std::vector<std::pair<Expr, Expr>> pairs;
  for (std::size_t i = 0; i < ya.size(); ++i) pairs.emplace_back(ya[i], yb[i]);
  for (const Decision& d : decide_all(c, pairs, {}, 1)) CHECK(d.verdict == Verdict::Proved);
}

}  // namespace

TEST_CASE("naive and online softmax are equivalent end to end, N = 4 and N = 128") {
  for (std::uint32_t n : {4u, 128u}) {
    ExprContext c;
    require_equivalent(c, naive_softmax(n), softmax_launch(n, n), online_softmax(n), softmax_launch(n, n), "y");
  }
}

TEST_CASE("softmax without its barrier: a race between buf[1]'s reader and writer (VOLTA section 2)") {
  ExprContext c;
  SymbolicDomain dom(c);
  auto r = run_program(naive_softmax(4, /*with_barrier=*/false), softmax_launch(4, 4), dom);
  REQUIRE(r.diagnostics.size() == 1);
  const Diagnostic& d = r.diagnostics[0];
  INFO(d.text());
  CHECK(d.kind == DiagKind::Race);
  CHECK(d.buffer == "buf");
  CHECK(d.element == 1);
  REQUIRE(d.accesses.size() == 2);
  CHECK(d.accesses[0].thread == 0);  // thread 0 read buf[1] in its sum loop
  CHECK_FALSE(d.accesses[0].write);
  CHECK(d.accesses[0].loc.line == 8);
  CHECK(d.accesses[1].thread == 1);  // thread 1 then wrote it
  CHECK(d.accesses[1].write);
  CHECK(d.accesses[1].loc.line == 4);
  CHECK(r.outputs.empty());
}

TEST_CASE("FaialAA's M[tid] = tid; x = M[tid]; M[x] = ... is race-free (VOLTA 6.4)") {
  ProgramBuilder b("faial");
  auto m = b.shared("M", DType::U32, 64);
  Reg tid = b.special(Special::TidX);
  b.store(m, tid, tid);
  Reg x = b.reg(DType::U32);
  b.load(x, m, tid);
  b.store(m, x, b.imm(DType::U32, 7));
  Launch l;
  l.block = Dim3{64, 1, 1};
  ExprContext c;
  SymbolicDomain dom(c);
  auto r = run_program(b.finish(), l, dom);
  INFO((r.ok() ? "" : r.diagnostics[0].text()));
  CHECK(r.ok());
}

TEST_CASE("warp barriers at two different places on sm_6x: deadlock, naming the stuck threads") {
  // From sm_70 on they would synchronize (tests/eval/sync_rules_test.cpp).
  ProgramBuilder b("warp_deadlock");
  Reg lane = b.special(Special::LaneId);
  auto upper = b.label(), done = b.label();
  b.bra_if(b.setp(Cmp::GE, lane, b.imm(DType::U32, 16)), upper);
  b.at({"warp.cu", 10, 5}).warp_sync(0xffffffffu);
  b.bra(done);
  b.place(upper);
  b.at({"warp.cu", 12, 5}).warp_sync(0xffffffffu);
  b.place(done);
  Launch l;
  l.block = Dim3{32, 1, 1};
  ExprContext c;
  SymbolicDomain dom(c);
  Program p = b.finish();
  p.sm = 60;
  auto r = run_program(p, l, dom);
  REQUIRE(r.diagnostics.size() == 1);
  INFO(r.diagnostics[0].text());
  CHECK(r.diagnostics[0].kind == DiagKind::Deadlock);
  CHECK(r.diagnostics[0].threads.size() == 32);
  CHECK(r.diagnostics[0].detail.find("warp.cu:10:5") != std::string::npos);
  CHECK(r.diagnostics[0].detail.find("warp.cu:12:5") != std::string::npos);
}

TEST_CASE("a shared read by threads 48..63 of a 48-element array is out of bounds (VOLTA 6.2)") {
  ProgramBuilder b("oob");
  auto x = b.param_pointer("x"), y = b.param_pointer("y");
  auto s = b.shared("s", DType::F32, 48);
  Reg tid = b.special(Special::TidX);
  auto skip = b.label();
  b.bra_if(b.setp(Cmp::GE, tid, b.imm(DType::U32, 48)), skip);
  Reg v = b.reg(DType::F32);
  b.load(v, x, tid);
  b.store(s, tid, v);
  b.place(skip);
  b.bar();
  Reg w = b.reg(DType::F32);
  b.at({"oob.cu", 20, 7});
  b.load(w, s, tid);
  b.store(y, tid, w);
  ExprContext c;
  SymbolicDomain dom(c);
  auto r = run_program(b.finish(), softmax_launch(64, 64), dom);
  REQUIRE(r.diagnostics.size() == 1);
  const Diagnostic& d = r.diagnostics[0];
  INFO(d.text());
  CHECK(d.kind == DiagKind::OutOfBounds);
  CHECK(d.buffer == "s");
  CHECK(d.element == 48);
  CHECK(d.threads == std::vector<std::uint32_t>{48});
  CHECK(d.loc.line == 20);
}

TEST_CASE("an uninitialized shared read is reported") {
  ProgramBuilder b("uninit");
  auto y = b.param_pointer("y");
  auto s = b.shared("s", DType::F32, 4);
  Reg tid = b.special(Special::TidX);
  Reg w = b.reg(DType::F32);
  b.load(w, s, tid);
  b.store(y, tid, w);
  Launch l;
  l.block = Dim3{4, 1, 1};
  l.args = {LaunchArg::of_tensor({"y", DType::F32, {4}, Role::Out})};
  ExprContext c;
  SymbolicDomain dom(c);
  auto r = run_program(b.finish(), l, dom);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].kind == DiagKind::Uninitialized);
  CHECK(r.diagnostics[0].buffer == "s");
  CHECK(r.diagnostics[0].element == 0);
}

TEST_CASE("a shuffle-based warp sum equals a serial sum") {
  ExprContext c;
  Launch warp = softmax_launch(32, 32), one = softmax_launch(32, 1);
  warp.args[1].tensor.shape = {1};
  one.args[1].tensor.shape = {1};
  require_equivalent(c, serial_sum(32), one, shuffle_sum(), warp, "y");
}

TEST_CASE("the concrete domain computes the same softmax values as the symbolic one") {
  ConcreteDomain dom;
  auto r = run_program(naive_softmax(8), softmax_launch(8, 8), dom);
  REQUIRE(r.ok());
  double total = 0;
  for (const auto& v : r.outputs.at("y")) total += *v;
  CHECK(total == doctest::Approx(1.0));
  auto o = run_program(online_softmax(8), softmax_launch(8, 8), dom);
  REQUIRE(o.ok());
  for (std::size_t i = 0; i < 8; ++i) CHECK(*o.outputs.at("y")[i] == doctest::Approx(*r.outputs.at("y")[i]));
}

TEST_CASE("confluence: race-free programs give identical outputs under 50 random schedules (Theorem 1)") {
  ExprContext c;
  SymbolicDomain dom(c);
  Program p = naive_softmax(16);
  Launch l = softmax_launch(16, 16);
  auto base = run_program(p, l, dom);
  REQUIRE(base.ok());
  Program s = shuffle_sum();
  Launch ls = softmax_launch(32, 32);
  ls.args[1].tensor.shape = {1};
  auto sbase = run_program(s, ls, dom);
  REQUIRE(sbase.ok());
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    RunOptions o;
    o.random_schedule = seed;
    auto r = run_program(p, l, dom, o);
    REQUIRE(r.ok());
    CHECK(outputs_of(r, "y") == outputs_of(base, "y"));  // hash-consed: the very same expressions
    auto rs = run_program(s, ls, dom, o);
    REQUIRE(rs.ok());
    CHECK(outputs_of(rs, "y") == outputs_of(sbase, "y"));
  }
}

TEST_CASE("confluence: a racy program is reported as racy under every schedule (Theorem 2)") {
  ExprContext c;
  SymbolicDomain dom(c);
  Program p = naive_softmax(16, /*with_barrier=*/false);
  Launch l = softmax_launch(16, 16);
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    RunOptions o;
    o.random_schedule = seed;
    auto r = run_program(p, l, dom, o);
    REQUIRE(!r.diagnostics.empty());
    CHECK(r.diagnostics.back().kind == DiagKind::Race);
  }
}

TEST_CASE("launch errors are reported, not crashes") {
  ExprContext c;
  SymbolicDomain dom(c);
  Launch l = softmax_launch(4, 4);
  l.args.pop_back();
  auto r = run_program(naive_softmax(4), l, dom);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].kind == DiagKind::BadLaunch);
}

TEST_CASE("a branch on tensor data is outside the structured class") {
  ProgramBuilder b("data_branch");
  auto x = b.param_pointer("x"), y = b.param_pointer("y");
  Reg tid = b.special(Special::TidX);
  Reg v = b.reg(DType::F32);
  b.load(v, x, tid);
  auto skip = b.label();
  b.bra_if(b.setp(Cmp::GT, v, b.fimm(Rational(0))), skip);
  b.store(y, tid, v);
  b.place(skip);
  ExprContext c;
  SymbolicDomain dom(c);
  auto r = run_program(b.finish(), softmax_launch(4, 4), dom);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].kind == DiagKind::NotStructured);
}

TEST_CASE("a warp barrier whose mask leaves out the executing lane is reported") {
  ProgramBuilder b("warp_mask");
  Reg lane = b.special(Special::LaneId);
  auto upper = b.label(), done = b.label();
  b.bra_if(b.setp(Cmp::GE, lane, b.imm(DType::U32, 16)), upper);
  b.warp_sync(0xffffffffu);
  b.bra(done);
  b.place(upper);
  b.warp_sync(0x0000ffffu);  // lanes 16..31 name lanes 0..15 only
  b.place(done);
  Launch l;
  l.block = Dim3{32, 1, 1};
  ExprContext c;
  SymbolicDomain dom(c);
  auto r = run_program(b.finish(), l, dom);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].kind == DiagKind::Deadlock);
  CHECK(r.diagnostics[0].message.find("not in the thread set") != std::string::npos);
}

// Two warp groups of 64 threads, each exchanging data through shared memory
// behind its own named barrier (bar.sync 1+g, 64), as warp-specialized kernels do.
static Program named_barriers(bool read_other_group) {
  ProgramBuilder b("named_barriers");
  auto x = b.param_pointer("x"), y = b.param_pointer("y");
  auto s = b.shared("s", DType::F32, 128);
  Reg tid = b.special(Special::TidX);
  Reg v = b.reg(DType::F32);
  b.load(v, x, tid);
  b.store(s, tid, v);
  auto second = b.label(), joined = b.label();
  b.bra_if(b.setp(Cmp::GE, tid, b.imm(DType::U32, 64)), second);
  b.bar(1, 64);
  b.bra(joined);
  b.place(second);
  b.bar(2, 64);
  b.place(joined);
  // Read a neighbour in the same group (tid ^ 1), or across groups (tid ^ 64).
  Reg other = b.xor_(tid, b.imm(DType::U32, read_other_group ? 64 : 1));
  Reg w = b.reg(DType::F32);
  b.load(w, s, other);
  b.store(y, tid, w);
  return b.finish();
}

TEST_CASE("named barriers with a thread count order only their own group") {
  ExprContext c;
  SymbolicDomain dom(c);
  auto ok = run_program(named_barriers(false), softmax_launch(128, 128), dom);
  INFO((ok.ok() ? "" : ok.diagnostics[0].text()));
  REQUIRE(ok.ok());
  CHECK(*ok.outputs.at("y")[0] == c.symbol("x", 1));
  CHECK(ok.stats.block_syncs == 2);
  auto racy = run_program(named_barriers(true), softmax_launch(128, 128), dom);
  REQUIRE(!racy.diagnostics.empty());
  CHECK(racy.diagnostics.back().kind == DiagKind::Race);
}

TEST_CASE("special registers: the default CTA is (0,0,0); tid, ntid, ctaid, nctaid, laneid, warpid") {
  ProgramBuilder b("specials");
  auto y = b.param_pointer("y", DType::U32);
  Reg tid = b.special(Special::TidX);
  Reg six = b.imm(DType::U32, 6);
  Reg base = b.mul(tid, six);
  Special which[6] = {Special::TidX, Special::NtidX, Special::CtaidX, Special::NctaidX, Special::LaneId, Special::WarpId};
  for (int k = 0; k < 6; ++k) b.store(y, base, b.special(which[k]), k);
  Launch l;
  l.block = Dim3{40, 1, 1};
  l.grid = Dim3{3, 1, 1};
  l.args = {LaunchArg::of_tensor({"y", DType::U32, {240}, Role::Out})};
  ConcreteDomain dom;
  auto r = run_program(b.finish(), l, dom);
  REQUIRE(r.ok());
  const auto& y0 = r.outputs.at("y");
  double expect[6] = {33, 40, 0, 3, 1, 1};  // thread 33
  for (int k = 0; k < 6; ++k) CHECK(*y0[std::size_t(33 * 6 + k)] == expect[k]);
  l.cta = Dim3{2, 0, 0};
  auto r2 = run_program(b.finish(), l, dom);
  REQUIRE(r2.ok());
  CHECK(*r2.outputs.at("y")[2] == 2);
}

// The symbolic evaluator remembers float operations by operation and source
// handles, so that threads repeating each other's work (every thread of an
// online softmax recomputes the same running max and denominator) look the
// results up instead of rebuilding them. A remembered result must be the
// handle the domain's own operation builds: rebuilding every thread's
// output with SymbolicDomain calls in the same context must find the same
// handles and add no node. The loop is long enough (over a thousand float
// operations a thread) for the memo's log to fill, start over and grow, and
// it repeats operations with their operands swapped (max, which commutes,
// and sub, which does not), and a select on the same operands with two
// comparisons.
TEST_CASE("the symbolic memo returns the handles the domain operations build") {
  constexpr std::uint32_t n = 96, threads = 64;
  ProgramBuilder b("memo");
  auto x = b.param_pointer("x"), y = b.param_pointer("y");
  Reg tid = b.special(Special::TidX);
  Reg m = b.fbits(0xFF800000u), d = b.fimm(Rational(0)), acc = b.fimm(Rational(0));
  counted_loop(b, n, [&](Reg i) {
    Reg v = b.reg(DType::F32);
    b.load(v, x, i);
    Reg nm = b.max(m, v);
    Reg e1 = b.exp(b.sub(m, nm)), e2 = b.ex2(b.sub(v, nm));
    b.emit([&] {  // d = fma(d, e1, e2)
      Instr in;
      in.op = Opcode::Fma;
      in.type = DType::F32;
      in.dst = {d.id};
      in.src = {Operand::reg(d.id), Operand::reg(e1.id), Operand::reg(e2.id)};
      return in;
    }());
    Reg s = b.reg(DType::F32);
    b.emit([&] {  // s = cvt.sat.f32.f32(v)
      Instr in;
      in.op = Opcode::Cvt;
      in.type = in.src_type = DType::F32;
      in.saturate = true;
      in.dst = {s.id};
      in.src = {Operand::reg(v.id)};
      return in;
    }());
    Reg g = b.selp(b.setp(Cmp::LT, v, m), e1, e2), h = b.selp(b.setp(Cmp::GT, v, m), e1, e2);
    Reg q = b.max(nm, v);  // max(m, v) above, operands swapped
    b.assign(Opcode::Add, acc, b.fma(s, h, acc), b.div(q, g));
    b.assign(Opcode::Sub, acc, acc, b.sub(nm, v));  // v - nm above, operands swapped
    b.mov(m, nm);
  });
  Reg xt = b.reg(DType::F32);
  b.load(xt, x, tid);
  b.store(y, tid, b.add(b.add(acc, xt), d));
  const Program p = b.finish();
  Launch l;
  l.block = Dim3{threads, 1, 1};
  l.args = {LaunchArg::of_tensor({"x", DType::F32, {n}, Role::In}),
            LaunchArg::of_tensor({"y", DType::F32, {threads}, Role::Out})};

  ExprContext c;
  SymbolicDomain dom(c);
  auto r = run_program(p, l, dom);
  INFO((r.ok() ? std::string() : r.diagnostics[0].text()));
  REQUIRE(r.ok());
  const std::vector<Expr> out = outputs_of(r, "y");
  const std::size_t nodes = c.size();
  for (std::uint32_t t = 0; t < threads; ++t) {
    Expr mm = dom.infinity(true), dd = dom.constant(Rational(0)), aa = dom.constant(Rational(0));
    for (std::uint32_t i = 0; i < n; ++i) {
      const Expr v = dom.input("x", i), nm = dom.max(mm, v);
      const Expr e1 = dom.exp(dom.sub(mm, nm)), e2 = dom.ex2(dom.sub(v, nm));
      dd = dom.fma(dd, e1, e2);
      const Expr s = dom.min(dom.max(v, dom.constant(Rational(0))), dom.constant(Rational(1)));
      const Expr g = dom.select(Cmp::LT, v, mm, e1, e2), h = dom.select(Cmp::GT, v, mm, e1, e2);
      const Expr q = dom.max(nm, v);
      aa = dom.add(dom.fma(s, h, aa), dom.div(q, g));
      aa = dom.sub(aa, dom.sub(nm, v));
      mm = nm;
    }
    CHECK(out[t] == dom.add(dom.add(aa, dom.input("x", t)), dd));
  }
  CHECK(c.size() == nodes);  // the rebuild found every node the run made
}
