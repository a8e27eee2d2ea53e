// mma.sync and ldmatrix in the evaluator: fragment computations against a
// naive matrix product, with the PTX ISA layouts of src/eval/warp_semantics.hpp
// (checked on an H100 by tools/gpu_checks/warp_layouts.cu).
#include "tileverify/decide.hpp"
#include "tileverify/eval.hpp"
#include "../../src/eval/warp_semantics.hpp"

#include <doctest/doctest.h>

#include <functional>

using namespace tileverify;
using Reg = ProgramBuilder::Reg;

namespace {

// Every fragment layout is affine in groupID = lane >> 2 and
// threadID_in_group = lane & 3 for a fixed element: row = a*g + b*t + c.
// Recover the coefficients from three lanes and check them on all 32.
struct Affine {
  int g, t, c;
};
std::pair<Affine, Affine> affine_of(const std::function<warp::RowCol(int lane)>& f) {
  warp::RowCol o = f(0), dg = f(4), dt = f(1);
  Affine row{dg.row - o.row, dt.row - o.row, o.row}, col{dg.col - o.col, dt.col - o.col, o.col};
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane >> 2, t = lane & 3;
    warp::RowCol rc = f(lane);
    REQUIRE(rc.row == row.g * g + row.t * t + row.c);
    REQUIRE(rc.col == col.g * g + col.t * t + col.c);
  }
  return {row, col};
}

// index = row * ld + col, computed by the program from g and t.
Reg index_of(ProgramBuilder& b, Reg g, Reg t, const std::pair<Affine, Affine>& a, int ld) {
  auto term = [&](const Affine& x) {
    Reg r = b.add(b.mul(g, b.imm(DType::U32, x.g)), b.mul(t, b.imm(DType::U32, x.t)));
    return b.add(r, b.imm(DType::U32, x.c));
  };
  return b.add(b.mul(term(a.first), b.imm(DType::U32, ld)), term(a.second));
}

Launch mma_launch(std::uint32_t threads, int k) {
  Launch l;
  l.block = Dim3{threads, 1, 1};
  l.args = {LaunchArg::of_tensor({"A", DType::F16, {16, std::uint64_t(k)}, Role::In}),
            LaunchArg::of_tensor({"B", DType::F16, {std::uint64_t(k), 8}, Role::In}),
            LaunchArg::of_tensor({"C", DType::F32, {16, 8}, Role::In}),
            LaunchArg::of_tensor({"D", DType::F32, {16, 8}, Role::Out})};
  return l;
}

// One thread: D[r][c] = C[r][c] + sum_k A[r][k] * B[k][c].
Program naive_matmul(int k) {
  ProgramBuilder b("naive_mm");
  auto A = b.param_pointer("A", DType::F16), B = b.param_pointer("B", DType::F16);
  auto C = b.param_pointer("C"), D = b.param_pointer("D");
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 8; ++c) {
      Reg acc = b.reg(DType::F32);
      b.load_at(acc, C, r * 8 + c);
      for (int q = 0; q < k; ++q) {
        Reg x = b.reg(DType::F16), y = b.reg(DType::F16);
        b.load_at(x, A, r * k + q);
        b.load_at(y, B, q * 8 + c);
        acc = b.fma(b.cvt(DType::F32, x), b.cvt(DType::F32, y), acc);
      }
      b.store_at(D, r * 8 + c, acc);
    }
  return b.finish();
}

// One warp: fragments loaded per the layouts, one mma.sync, D stored per the layout.
Program mma_matmul(warp::MmaShape shape) {
  const int k = warp::mma_k(shape);
  const warp::MmaType ty = warp::MmaType::F16;
  ProgramBuilder b("mma_mm");
  auto A = b.param_pointer("A", DType::F16), B = b.param_pointer("B", DType::F16);
  auto C = b.param_pointer("C"), D = b.param_pointer("D");
  Reg lane = b.special(Special::LaneId);
  Reg g = b.shr(lane, b.imm(DType::U32, 2)), t = b.and_(lane, b.imm(DType::U32, 3));
  auto halves = [&](auto layout, int count, ProgramBuilder::Mem m, int ld) {
    std::vector<Reg> regs;
    for (int i = 0; i < count; i += 2) {
      Reg lo = b.reg(DType::F16), hi = b.reg(DType::F16);
      b.load(lo, m, index_of(b, g, t, affine_of([&](int l) { return layout(l, i); }), ld));
      b.load(hi, m, index_of(b, g, t, affine_of([&](int l) { return layout(l, i + 1); }), ld));
      regs.push_back(b.pack(lo, hi));
    }
    return regs;
  };
  auto a = halves([&](int l, int i) { return warp::mma_a(shape, ty, l, i); }, warp::mma_a_count(shape, ty), A, k);
  auto bb = halves([&](int l, int i) { return warp::mma_b(shape, ty, l, i); }, warp::mma_b_count(shape, ty), B, 8);
  std::vector<Reg> c;
  std::vector<std::pair<Affine, Affine>> cl;
  for (int i = 0; i < 4; ++i) {
    cl.push_back(affine_of([&](int l) { return warp::mma_c(shape, ty, l, i); }));
    Reg r = b.reg(DType::F32);
    b.load(r, C, index_of(b, g, t, cl.back(), 8));
    c.push_back(r);
  }
  auto d = b.mma(shape == warp::MmaShape::M16N8K16 ? MmaShape::M16N8K16 : MmaShape::M16N8K8, DType::F16, a, bb, c);
  for (int i = 0; i < 4; ++i) b.store(D, index_of(b, g, t, cl[std::size_t(i)], 8), d[std::size_t(i)]);
  return b.finish();
}

void require_same_outputs(ExprContext& c, const Program& ref, const Launch& lr, const Program& opt, const Launch& lo) {
  SymbolicDomain dom(c);
  auto x = run_program(ref, lr, dom), y = run_program(opt, lo, dom);
  INFO((x.ok() ? "" : x.diagnostics[0].text()) << (y.ok() ? "" : y.diagnostics[0].text()));
  REQUIRE(x.ok());
  REQUIRE(y.ok());
  const auto &dx = x.outputs.at("D"), &dy = y.outputs.at("D");
  REQUIRE(dx.size() == dy.size());
  Decider dec(c);
  for (std::size_t i = 0; i < dx.size(); ++i) {
    REQUIRE(dx[i].has_value());
    REQUIRE(dy[i].has_value());
    CHECK(dec.decide(*dx[i], *dy[i]).proved());
  }
}

}  // namespace

TEST_CASE("mma.sync m16n8k16 fragments compute the naive 16x8x16 matmul") {
  ExprContext c;
  require_same_outputs(c, naive_matmul(16), mma_launch(1, 16), mma_matmul(warp::MmaShape::M16N8K16), mma_launch(32, 16));
}

TEST_CASE("mma.sync m16n8k8 fragments compute the naive 16x8x8 matmul") {
  ExprContext c;
  require_same_outputs(c, naive_matmul(8), mma_launch(1, 8), mma_matmul(warp::MmaShape::M16N8K8), mma_launch(32, 8));
}

TEST_CASE("a wrong fragment layout is caught: swapping two A registers changes D") {
  ExprContext c;
  Program p = mma_matmul(warp::MmaShape::M16N8K16);
  for (Instr& in : p.code)
    if (in.op == Opcode::Mma) std::swap(in.src[0], in.src[1]);
  SymbolicDomain dom(c);
  auto x = run_program(naive_matmul(16), mma_launch(1, 16), dom), y = run_program(p, mma_launch(32, 16), dom);
  REQUIRE(x.ok());
  REQUIRE(y.ok());
  int refuted = 0;
  Decider dec(c);
  for (std::size_t i = 0; i < 128; ++i) refuted += dec.decide(*x.outputs.at("D")[i], *y.outputs.at("D")[i]).refuted();
  CHECK(refuted > 0);
}

TEST_CASE("ldmatrix.x1 and .x1.trans deliver the documented elements") {
  // Shared 8x8 f16 matrix S = x (row-major); lane l's register holds (S[r][c], S[r][c+1])
  // with r = l/4, c = 2*(l%4), or the transposed pair with .trans.
  for (bool trans : {false, true}) {
    ProgramBuilder b("ldm");
    auto x = b.param_pointer("x", DType::F16), y = b.param_pointer("y", DType::F16);
    auto s = b.shared("S", DType::F16, 64);
    Reg lane = b.special(Special::LaneId);
    for (int e = 0; e < 2; ++e) {  // lanes 0..31 copy x into S, two elements each
      Reg idx = b.add(b.mul(lane, b.imm(DType::U32, 2)), b.imm(DType::U32, e));
      Reg v = b.reg(DType::F16);
      b.load(v, x, idx);
      b.store(s, idx, v);
    }
    b.bar();
    Reg row = b.mul(b.and_(lane, b.imm(DType::U32, 7)), b.imm(DType::U32, 8));  // lanes 0..7: row starts
    auto regs = b.ldmatrix(1, trans, s, row);
    Reg lo = b.reg(DType::F16), hi = b.reg(DType::F16);
    Instr un;
    un.op = Opcode::Mov;
    un.type = DType::B32;
    un.dst = {lo.id, hi.id};
    un.src = {Operand::reg(regs[0].id)};
    b.emit(un);
    b.store(y, b.mul(lane, b.imm(DType::U32, 2)), lo);
    b.store(y, b.mul(lane, b.imm(DType::U32, 2)), hi, 1);
    Launch l;
    l.block = Dim3{32, 1, 1};
    l.args = {LaunchArg::of_tensor({"x", DType::F16, {64}, Role::In}), LaunchArg::of_tensor({"y", DType::F16, {64}, Role::Out})};
    ExprContext c;
    SymbolicDomain dom(c);
    auto r = run_program(b.finish(), l, dom);
    INFO((r.ok() ? "" : r.diagnostics[0].text()));
    REQUIRE(r.ok());
    for (int ln = 0; ln < 32; ++ln)
      for (int e = 0; e < 2; ++e) {
        int rr = ln / 4, cc = 2 * (ln % 4) + e;
        int src = trans ? cc * 8 + rr : rr * 8 + cc;
        CHECK(*r.outputs.at("y")[std::size_t(ln * 2 + e)] == c.symbol("x", std::uint32_t(src)));
      }
  }
}

// The accumulators are built in bulk (ExprContext::add_products), node for
// node what the naive loop's fma chain builds: in one context the outputs
// are the same handles, not just equal functions. Swapping two B registers
// (two k rows of B) still makes other products, which the decider refutes.
TEST_CASE("mma.sync's accumulator is the naive fma chain's very expression; a swapped B operand is refuted") {
  ExprContext c;
  SymbolicDomain dom(c);
  auto x = run_program(naive_matmul(16), mma_launch(1, 16), dom);
  auto y = run_program(mma_matmul(warp::MmaShape::M16N8K16), mma_launch(32, 16), dom);
  REQUIRE(x.ok());
  REQUIRE(y.ok());
  for (std::size_t i = 0; i < 128; ++i) CHECK(*x.outputs.at("D")[i] == *y.outputs.at("D")[i]);
  Program p = mma_matmul(warp::MmaShape::M16N8K16);
  for (Instr& in : p.code)
    if (in.op == Opcode::Mma) std::swap(in.src[4], in.src[5]);  // the two B registers
  auto z = run_program(p, mma_launch(32, 16), dom);
  REQUIRE(z.ok());
  int refuted = 0;
  Decider dec(c);
  for (std::size_t i = 0; i < 128; ++i) refuted += dec.decide(*x.outputs.at("D")[i], *z.outputs.at("D")[i]).refuted();
  CHECK(refuted == 128);
}
