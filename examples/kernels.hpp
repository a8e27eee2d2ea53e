// Kernels written with ProgramBuilder, as a compiler backend would emit them:
// the programs behind the examples, tests and benchmarks. Header-only.
#pragma once

#include "tileverify/eval.hpp"
#include "tileverify/program.hpp"

namespace tileverify::kernels {

using Reg = ProgramBuilder::Reg;

// for (i = 0; i < n; ++i) body(i)
template <class Body>
void counted_loop(ProgramBuilder& b, std::int64_t n, Body body) {
  Reg i = b.imm(DType::U32, 0), one = b.imm(DType::U32, 1), end = b.imm(DType::U32, n);
  auto top = b.label(), done = b.label();
  b.place(top);
  b.bra_if(b.setp(Cmp::GE, i, end), done);
  body(i);
  b.assign(Opcode::Add, i, i, one);
  b.bra(top);
  b.place(done);
}

// VOLTA Fig. 1a: buf[tid] = exp(x[tid]); __syncthreads(); sum = Σ buf[i]; y[tid] = buf[tid] / sum.
inline Program naive_softmax(std::int64_t n, bool with_barrier = true) {
  ProgramBuilder b(with_barrier ? "softmax" : "softmax_no_barrier");
  auto x = b.param_pointer("x"), y = b.param_pointer("y");
  auto buf = b.shared("buf", DType::F32, std::uint64_t(n));
  Reg tid = b.special(Special::TidX);
  Reg v = b.reg(DType::F32);
  b.at({"softmax.cu", 4, 3});
  b.load(v, x, tid);
  b.store(buf, tid, b.exp(v));
  if (with_barrier) b.at({"softmax.cu", 5, 3}).bar();
  Reg sum = b.fimm(Rational(0));
  counted_loop(b, n, [&](Reg i) {
    Reg t = b.reg(DType::F32);
    b.at({"softmax.cu", 8, 5});
    b.load(t, buf, i);
    b.assign(Opcode::Add, sum, sum, t);
  });
  Reg mine = b.reg(DType::F32);
  b.at({"softmax.cu", 9, 3});
  b.load(mine, buf, tid);
  b.store(y, tid, b.div(mine, sum));
  return b.finish();
}

// VOLTA Fig. 1b: the online softmax, every thread computing the running max and denominator.
inline Program online_softmax(std::int64_t n) {
  ProgramBuilder b("online_softmax");
  auto x = b.param_pointer("x"), y = b.param_pointer("y");
  Reg tid = b.special(Special::TidX);
  Reg m = b.fbits(0xFF800000u);  // -INFINITY
  Reg d = b.fimm(Rational(0));
  counted_loop(b, n, [&](Reg i) {
    Reg v = b.reg(DType::F32);
    b.load(v, x, i);
    Reg new_m = b.max(m, v);
    Reg scaled = b.mul(d, b.exp(b.sub(m, new_m)));
    b.assign(Opcode::Add, d, scaled, b.exp(b.sub(v, new_m)));
    b.mov(m, new_m);
  });
  Reg xt = b.reg(DType::F32);
  b.load(xt, x, tid);
  b.store(y, tid, b.div(b.exp(b.sub(xt, m)), d));
  return b.finish();
}

inline Launch softmax_launch(std::uint32_t n, std::uint32_t threads) {
  Launch l;
  l.block = Dim3{threads, 1, 1};
  l.args = {LaunchArg::of_tensor({"x", DType::F32, {n}, Role::In}), LaunchArg::of_tensor({"y", DType::F32, {n}, Role::Out})};
  return l;
}

// A warp sum with shuffles: v = x[lane]; v += shfl.down(v, 16, 8, 4, 2, 1); lane 0 writes y[0].
inline Program shuffle_sum() {
  ProgramBuilder b("warp_sum_shfl");
  auto x = b.param_pointer("x"), y = b.param_pointer("y");
  Reg lane = b.special(Special::LaneId);
  Reg v = b.reg(DType::F32);
  b.load(v, x, lane);
  for (std::int64_t off : {16, 8, 4, 2, 1}) {
    Reg other = b.shfl(ShflMode::Down, v, b.imm(DType::U32, off));
    b.assign(Opcode::Add, v, v, other);
  }
  auto skip = b.label();
  b.bra_if(b.setp(Cmp::NE, lane, b.imm(DType::U32, 0)), skip);
  b.store_at(y, 0, v);
  b.place(skip);
  return b.finish();
}

// One thread sums x[0..n) in order.
inline Program serial_sum(std::int64_t n) {
  ProgramBuilder b("serial_sum");
  auto x = b.param_pointer("x"), y = b.param_pointer("y");
  Reg acc = b.fimm(Rational(0));
  counted_loop(b, n, [&](Reg i) {
    Reg v = b.reg(DType::F32);
    b.load(v, x, i);
    b.assign(Opcode::Add, acc, acc, v);
  });
  b.store_at(y, 0, acc);
  return b.finish();
}

}  // namespace tileverify::kernels
