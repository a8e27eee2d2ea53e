// Chains of fmas (a dot product: each fma adds one product to the sum the
// previous one made) run into one running sum per thread, symbolically
// (machine.cpp, "fma chains"). The outputs must be the handles the
// sequential fmas build, the partial sums must not be built, and anything
// that could observe a partial sum must stop the chain there.
#include "tileverify/eval.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <functional>

using namespace tileverify;
using Reg = ProgramBuilder::Reg;

namespace {

Instr fma_into(Reg d, Reg a, Reg b, Reg c, std::int32_t guard = -1) {
  Instr in;
  in.op = Opcode::Fma;
  in.type = DType::F32;
  in.dst = {d.id};
  in.src = {Operand::reg(a.id), Operand::reg(b.id), Operand::reg(c.id)};
  in.guard = guard;
  return in;
}

struct Dot {
  ProgramBuilder b{"dot"};
  ProgramBuilder::Mem x = b.param_pointer("x"), y = b.param_pointer("y"), out = b.param_pointer("out");
  Reg tid = b.special(Special::TidX);
  // x[tid * n + i] (per_thread) or x[i], into a fresh register.
  Reg in(ProgramBuilder::Mem m, std::int64_t i, bool per_thread, std::int64_t n) {
    Reg r = b.reg(DType::F32);
    if (per_thread) {
      b.load(r, m, b.mul(tid, b.imm(DType::U32, n)), i);
    } else {
      b.load_at(r, m, i);
    }
    return r;
  }
  // The code from two_passes() to end_passes() runs twice, `pass` 0 then 1.
  Reg pass;
  ProgramBuilder::Label pass_top;
  void two_passes() {
    pass = b.imm(DType::U32, 0);
    pass_top = b.label();
    b.place(pass_top);
  }
  void end_passes() {
    b.assign(Opcode::Add, pass, pass, b.imm(DType::U32, 1));
    b.bra_if(b.setp(Cmp::LT, pass, b.imm(DType::U32, 2)), pass_top);
  }
};

Launch dot_launch(std::uint32_t threads, std::uint64_t xs, std::uint64_t outs) {
  Launch l;
  l.block = Dim3{threads, 1, 1};
  l.args = {LaunchArg::of_tensor({"x", DType::F32, {xs}, Role::In}),
            LaunchArg::of_tensor({"y", DType::F32, {xs}, Role::In}),
            LaunchArg::of_tensor({"out", DType::F32, {outs}, Role::Out})};
  return l;
}

// A symbolic run that must succeed (the first diagnostic is shown if not).
RunResult<SymbolicDomain> run_ok(const Program& p, const Launch& l, SymbolicDomain& dom) {
  auto r = run_program(p, l, dom);
  INFO((r.ok() ? std::string() : r.diagnostics[0].text()));
  REQUIRE(r.ok());
  return r;
}

std::vector<Expr> outputs(const RunResult<SymbolicDomain>& r) {
  std::vector<Expr> v;
  for (const auto& e : r.outputs.at("out")) {
    REQUIRE(e.has_value());
    v.push_back(*e);
  }
  return v;
}

// sum_{i < n} x[base + i] * y[base + i] + start, as n fmas in order build it.
Expr sequential(SymbolicDomain& dom, std::uint32_t base, std::uint32_t n, Expr start) {
  Expr acc = start;
  for (std::uint32_t i = 0; i < n; ++i) acc = dom.fma(dom.input("x", base + i), dom.input("y", base + i), acc);
  return acc;
}

}  // namespace

TEST_CASE("an fma chain gives the handle the sequential fmas build, without their partial sums") {
  constexpr std::int64_t n = 64;
  for (std::uint32_t threads : {1u, 32u}) {
    for (bool per_thread : {false, true}) {  // 32 threads repeating one dot product, or each its own
      Dot d;
      Reg acc = d.b.fimm(Rational(0));
      for (std::int64_t i = 0; i < n; ++i) {
        Reg next = d.b.reg(DType::F32);
        d.b.emit(fma_into(next, d.in(d.x, i, per_thread, n), d.in(d.y, i, per_thread, n), acc));
        acc = next;
      }
      d.b.store(d.out, d.tid, acc);
      const Program p = d.b.finish();
      const Launch l = dot_launch(threads, std::uint64_t(n) * threads, threads);

      ExprContext c;
      SymbolicDomain dom(c);
      auto r = run_ok(p, l, dom);
      CHECK(r.stats.thread_instructions > std::uint64_t(n) * threads);  // every fma still counts as executed
      const std::vector<Expr> out = outputs(r);
      const std::size_t nodes = c.size();
      for (std::uint32_t t = 0; t < threads; ++t)
        CHECK(out[t] == sequential(dom, per_thread ? t * std::uint32_t(n) : 0, std::uint32_t(n), dom.constant(Rational(0))));
      // Rebuilding made the partial sums the run left out: 63 per distinct
      // dot product, less the 7 that nest into the next chunk of 8.
      const std::size_t distinct = per_thread ? threads : 1;
      CHECK(c.size() - nodes >= distinct * 50);

      // The concrete domain runs the same fmas, rounding included.
      ConcreteDomain cd;
      auto rc = run_program(p, l, cd);
      REQUIRE(rc.ok());
      for (std::uint32_t t = 0; t < threads; ++t) {
        double a = 0;
        for (std::uint32_t i = 0; i < n; ++i) {
          const std::uint32_t e = (per_thread ? t * std::uint32_t(n) : 0) + i;
          a = std::fma(cd.input("x", e), cd.input("y", e), a);
        }
        CHECK(*rc.outputs.at("out")[t] == a);
      }
    }
  }
}

// Variants where a partial sum is observable, or where a thread could reach
// a member without the ones before it: the outputs stay the sequential ones.
TEST_CASE("fma chains stop where the code could see a partial sum or enter the chain midway") {
  constexpr std::int64_t n = 12;
  struct Variant {
    const char* name;
    std::function<void(Dot&, std::int64_t, Reg&, Reg, Reg, Reg)> fma;  // (dot, i, acc, x, y, next)
    std::int64_t outs;
  };
  const Variant variants[] = {
      {"a partial sum stored as well", [](Dot& d, std::int64_t i, Reg& acc, Reg x, Reg y, Reg next) {
         d.b.emit(fma_into(next, x, y, acc));
         if (i == 5) d.b.store_at(d.out, 1, next);
         acc = next;
       }, 2},
      {"a partial sum read by a later product", [](Dot& d, std::int64_t i, Reg& acc, Reg x, Reg y, Reg next) {
         d.b.emit(fma_into(next, i == 7 ? acc : x, y, acc));
         acc = next;
       }, 1},
      {"a branch target between members", [](Dot& d, std::int64_t i, Reg& acc, Reg x, Reg y, Reg next) {
         if (i == 6) {
           auto l = d.b.label();
           d.b.bra(l);  // straight on, but the label is entered from elsewhere
           d.b.place(l);
         }
         d.b.emit(fma_into(next, x, y, acc));
         acc = next;
       }, 1},
      {"an accumulator written twice", [](Dot& d, std::int64_t i, Reg& acc, Reg x, Reg y, Reg next) {
         d.b.emit(fma_into(next, x, y, acc));
         if (i == 3) d.b.emit(fma_into(next, x, y, acc));  // the same fma again: next has two writers
         acc = next;
       }, 1},
  };
  for (const Variant& v : variants) {
    INFO(v.name);
    Dot d;
    Reg acc = d.b.fimm(Rational(0));
    for (std::int64_t i = 0; i < n; ++i) {
      Reg x = d.in(d.x, i, false, n), y = d.in(d.y, i, false, n);
      v.fma(d, i, acc, x, y, d.b.reg(DType::F32));
    }
    d.b.store_at(d.out, 0, acc);
    const Program p = d.b.finish();
    ExprContext c;
    SymbolicDomain dom(c);
    auto r = run_ok(p, dot_launch(1, n, std::uint64_t(v.outs)), dom);
    const std::vector<Expr> out = outputs(r);
    const Expr zero = dom.constant(Rational(0));
    if (std::string(v.name) == "a partial sum stored as well") {
      CHECK(out[1] == sequential(dom, 0, 6, zero));
      CHECK(out[0] == sequential(dom, 0, std::uint32_t(n), zero));
    } else if (std::string(v.name) == "a partial sum read by a later product") {
      Expr s7 = sequential(dom, 0, 7, zero);
      Expr s8 = dom.fma(s7, dom.input("y", 7), s7);
      Expr all = s8;
      for (std::uint32_t i = 8; i < n; ++i) all = dom.fma(dom.input("x", i), dom.input("y", i), all);
      CHECK(out[0] == all);
    } else if (std::string(v.name) == "an accumulator written twice") {
      Expr s3 = sequential(dom, 0, 3, zero);
      Expr all = dom.fma(dom.input("x", 3), dom.input("y", 3), s3);  // the second write is the same value
      for (std::uint32_t i = 4; i < n; ++i) all = dom.fma(dom.input("x", i), dom.input("y", i), all);
      CHECK(out[0] == all);
    } else {
      CHECK(out[0] == sequential(dom, 0, std::uint32_t(n), zero));
    }
  }
}

TEST_CASE("interleaved fma chains (two accumulators) each keep their own running sum") {
  constexpr std::int64_t n = 20;
  for (std::uint32_t threads : {1u, 4u}) {
    Dot d;
    Reg a = d.b.fimm(Rational(0)), b = d.b.fimm(Rational(1));
    for (std::int64_t i = 0; i < n; ++i) {
      Reg x = d.in(d.x, i, true, n), y = d.in(d.y, i, true, n);
      Reg na = d.b.reg(DType::F32), nb = d.b.reg(DType::F32);
      d.b.emit(fma_into(na, x, y, a));
      d.b.emit(fma_into(nb, y, y, b));
      a = na;
      b = nb;
    }
    d.b.store(d.out, d.b.mul(d.tid, d.b.imm(DType::U32, 2)), a);
    d.b.store(d.out, d.b.add(d.b.mul(d.tid, d.b.imm(DType::U32, 2)), d.b.imm(DType::U32, 1)), b);
    const Program p = d.b.finish();
    ExprContext c;
    SymbolicDomain dom(c);
    auto r = run_ok(p, dot_launch(threads, std::uint64_t(n) * threads, 2 * threads), dom);
    const std::vector<Expr> out = outputs(r);
    for (std::uint32_t t = 0; t < threads; ++t) {
      Expr ea = dom.constant(Rational(0)), eb = dom.constant(Rational(1));
      for (std::uint32_t i = 0; i < n; ++i) {
        const Expr x = dom.input("x", t * n + i), y = dom.input("y", t * n + i);
        ea = dom.fma(x, y, ea);
        eb = dom.fma(y, y, eb);
      }
      CHECK(out[2 * t] == ea);
      CHECK(out[2 * t + 1] == eb);
    }
  }
}

// out[0] = the sum of x_i * y[i], i < n, by n fmas into fresh registers, fma
// i at dot.cu line 100 + i; x_i is x[i], but for i == odd_at the register
// odd() makes.
static Program dot_with_odd_source(std::int64_t n, std::int64_t odd_at, const std::function<Reg(ProgramBuilder&)>& odd) {
  Dot d;
  Reg acc = d.b.fimm(Rational(0));
  for (std::int64_t i = 0; i < n; ++i) {
    Reg x = i == odd_at ? odd(d.b) : d.in(d.x, i, false, n);
    Reg y = d.in(d.y, i, false, n), next = d.b.reg(DType::F32);
    d.b.at({"dot.cu", std::uint32_t(100 + i), 1});
    d.b.emit(fma_into(next, x, y, acc));
    acc = next;
  }
  d.b.store_at(d.out, 0, acc);
  return d.b.finish();
}

TEST_CASE("an fma chain member that reads no plain float value runs the ordinary way") {
  constexpr std::int64_t n = 12;
  ExprContext c;
  SymbolicDomain dom(c);
  SUBCASE("float bits from an integer register: the chain goes on the ordinary way, with the same value") {
    const Program p = dot_with_odd_source(n, 5, [](ProgramBuilder& b) { return b.fbits(0x40000000u); });  // 2.0f
    auto r = run_ok(p, dot_launch(1, n, 1), dom);
    Expr e = dom.constant(Rational(0));
    for (std::uint32_t i = 0; i < n; ++i)
      e = dom.fma(i == 5 ? dom.constant(Rational(2)) : dom.input("x", i), dom.input("y", i), e);
    CHECK(outputs(r)[0] == e);
  }
  SUBCASE("an undefined register: reported at that fma, as without chains") {
    const Program p = dot_with_odd_source(n, 6, [](ProgramBuilder& b) { return b.reg(DType::F32); });  // never written
    auto r = run_program(p, dot_launch(1, n, 1), dom);
    REQUIRE(!r.diagnostics.empty());
    CHECK(r.diagnostics[0].text().find("dot.cu:106") != std::string::npos);
  }
}

TEST_CASE("a loop that enters an fma chain midway runs its members the ordinary way") {
  // a1 = x0 y0 + 0; top: a2 = x1 y1 + a1; a3 = x2 y2 + a2; out = a3; loop to
  // top once more: the second pass reads a1 without running its fma.
  Dot d;
  Reg zero = d.b.fimm(Rational(0)), a1 = d.b.reg(DType::F32), a2 = d.b.reg(DType::F32), a3 = d.b.reg(DType::F32);
  Reg x0 = d.in(d.x, 0, false, 3), y0 = d.in(d.y, 0, false, 3);
  Reg x1 = d.in(d.x, 1, false, 3), y1 = d.in(d.y, 1, false, 3);
  Reg x2 = d.in(d.x, 2, false, 3), y2 = d.in(d.y, 2, false, 3);
  d.b.emit(fma_into(a1, x0, y0, zero));
  d.two_passes();
  d.b.emit(fma_into(a2, x1, y1, a1));
  d.b.emit(fma_into(a3, x2, y2, a2));
  d.b.store_at(d.out, 0, a3);
  d.end_passes();
  const Program p = d.b.finish();
  ExprContext c;
  SymbolicDomain dom(c);
  auto r = run_ok(p, dot_launch(1, 3, 1), dom);
  CHECK(outputs(r)[0] == sequential(dom, 0, 3, dom.constant(Rational(0))));
}

TEST_CASE("an fma chain member skipped by its guard leaves its register unwritten, as without chains") {
  // Thread 1 skips a2 = x1 y1 + a1; a3 = x2 y2 + a2 then reads a2, never
  // written: reported. Thread 0 runs every fma.
  Dot d;
  Reg zero = d.b.fimm(Rational(0)), a1 = d.b.reg(DType::F32), a2 = d.b.reg(DType::F32), a3 = d.b.reg(DType::F32);
  Reg on = d.b.setp(Cmp::EQ, d.tid, d.b.imm(DType::U32, 0));
  d.b.emit(fma_into(a1, d.in(d.x, 0, false, 3), d.in(d.y, 0, false, 3), zero));
  d.b.emit(fma_into(a2, d.in(d.x, 1, false, 3), d.in(d.y, 1, false, 3), a1, std::int32_t(on.id)));
  d.b.emit(fma_into(a3, d.in(d.x, 2, false, 3), d.in(d.y, 2, false, 3), a2));
  d.b.store(d.out, d.tid, a3);
  const Program p = d.b.finish();
  ExprContext c;
  SymbolicDomain dom(c);
  auto r = run_program(p, dot_launch(2, 3, 2), dom);
  REQUIRE(!r.diagnostics.empty());
  CHECK(r.diagnostics[0].text().find("uninitialized") != std::string::npos);
  CHECK(r.diagnostics[0].text().find("thread 1") != std::string::npos);
}

TEST_CASE("a thread that leaves an fma chain midway and comes back gets the sequential sums") {
  // Two passes of: a1 = x0 y0; a2 = x1 y1 + a1; @leave bra out; a3 = x2 y2 +
  // a2; a4 = x3 y3 + a3; out[tid] = a4; bra next; out: out[tid] = a2; next:
  // Thread 1 leaves in the first pass (its running sum is left as it was)
  // and stays in the second; thread 0 the other way round.
  Dot d;
  Reg zero = d.b.fimm(Rational(0));
  Reg one = d.b.imm(DType::U32, 1), two = d.b.imm(DType::U32, 2);
  auto out = d.b.label(), next = d.b.label();
  d.two_passes();
  Reg x[4], y[4], a[5];
  for (int k = 0; k < 4; ++k) {
    x[k] = d.in(d.x, k, false, 4);
    y[k] = d.in(d.y, k, false, 4);
  }
  a[0] = zero;
  for (int k = 1; k <= 4; ++k) a[k] = d.b.reg(DType::F32);
  Reg leave = d.b.setp(Cmp::EQ, d.b.add(d.tid, d.pass), one);  // thread 1 in pass 0, thread 0 in pass 1
  d.b.emit(fma_into(a[1], x[0], y[0], a[0]));
  d.b.emit(fma_into(a[2], x[1], y[1], a[1]));
  d.b.bra_if(leave, out);
  d.b.emit(fma_into(a[3], x[2], y[2], a[2]));
  d.b.emit(fma_into(a[4], x[3], y[3], a[3]));
  d.b.store(d.out, d.tid, a[4]);
  d.b.bra(next);
  d.b.place(out);
  d.b.store(d.out, d.b.add(d.tid, two), a[1]);  // a1 is read here too: a2's chain starts at a2
  d.b.place(next);
  d.end_passes();
  const Program p = d.b.finish();
  ExprContext c;
  SymbolicDomain dom(c);
  auto r = run_ok(p, dot_launch(2, 4, 4), dom);
  const std::vector<Expr> o = outputs(r);
  const Expr zero_e = dom.constant(Rational(0));
  CHECK(o[0] == sequential(dom, 0, 4, zero_e));
  CHECK(o[1] == sequential(dom, 0, 4, zero_e));
  CHECK(o[2] == sequential(dom, 0, 1, zero_e));
  CHECK(o[3] == sequential(dom, 0, 1, zero_e));
}
