// bench/eval: thread-instructions per second of the evaluator in the Concrete
// and Symbolic domains, with and without race tracking, on a synthetic CTA:
// 1024 threads x 10,000 instructions, in blocks of 100 instructions with CTA
// barriers. Each block: a shared store, a barrier, a shared load of a
// neighbour's value, a barrier, and arithmetic (half integer address-style
// arithmetic, half float arithmetic), as in a tiled kernel's inner loop.
// Usage: tileverify_bench_eval [--quick]
#include "tileverify/eval.hpp"
#include "tileverify/program.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>

using namespace tileverify;
using Reg = ProgramBuilder::Reg;

namespace {

Program synthetic(std::uint32_t threads, int blocks) {
  ProgramBuilder b("synthetic");
  auto x = b.param_pointer("x"), y = b.param_pointer("y");
  auto s = b.shared("s", DType::F32, threads);
  Reg tid = b.special(Special::TidX);
  Reg next = b.and_(b.add(tid, b.imm(DType::U32, 1)), b.imm(DType::U32, threads - 1));
  Reg acc = b.reg(DType::F32), other = b.reg(DType::F32);
  b.load(acc, x, tid);
  Reg k = b.fimm(Rational(1, 2)), i = b.imm(DType::U32, 3), j = b.imm(DType::U32, 5);
  std::uint32_t before = b.size();
  for (int blk = 0; blk < blocks; ++blk) {
    std::uint32_t start = b.size();
    b.store(s, tid, acc);  // 4 instructions (address arithmetic + st)
    b.bar();
    b.load(other, s, next);  // 4 instructions
    b.bar();                 // the neighbour's value is read before anyone overwrites it
    while (b.size() - start < 100) {
      if ((b.size() - start) % 2) {
        b.assign(Opcode::Add, i, i, j);
      } else if ((b.size() - start) % 4 == 0) {
        b.assign(Opcode::Mul, acc, acc, k);
      } else {
        b.assign(Opcode::Add, acc, acc, other);
      }
    }
  }
  std::uint32_t body = b.size() - before;
  b.store(y, tid, acc);
  Program p = b.finish();
  std::fprintf(stderr, "synthetic program: %u instructions per thread in the timed body\n", body);
  return p;
}

template <class D>
double measure(const Program& p, const Launch& l, D& dom, bool races, RunStats* stats) {
  RunOptions o;
  o.check_races = races;
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_program(p, l, dom, o);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!r.ok()) std::fprintf(stderr, "unexpected: %s\n", r.diagnostics[0].text().c_str());
  *stats = r.stats;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && !std::strcmp(argv[1], "--quick");
  std::uint32_t threads = quick ? 128 : 1024;
  int blocks = quick ? 10 : 100;
  Program p = synthetic(threads, blocks);
  Launch l;
  l.block = Dim3{threads, 1, 1};
  l.args = {LaunchArg::of_tensor({"x", DType::F32, {threads}, Role::In}),
            LaunchArg::of_tensor({"y", DType::F32, {threads}, Role::Out})};

  std::printf("| domain | race tracking | thread-instructions | block syncs | seconds | M thread-instr/s |\n");
  std::printf("|---|---|---:|---:|---:|---:|\n");
  double conc_on = 0, sym_on = 0;
  for (int d = 0; d < 2; ++d)
    for (bool races : {true, false}) {
      RunStats st;
      double s;
      if (d == 0) {
        ConcreteDomain dom;
        s = measure(p, l, dom, races, &st);
        if (races) conc_on = s;
      } else {
        ExprContext c;
        SymbolicDomain dom(c);
        s = measure(p, l, dom, races, &st);
        if (races) sym_on = s;
      }
      std::printf("| %s | %s | %llu | %llu | %.3f | %.1f |\n", d == 0 ? "Concrete" : "Symbolic", races ? "on" : "off",
                  (unsigned long long)st.thread_instructions, (unsigned long long)st.block_syncs, s,
                  double(st.thread_instructions) / s / 1e6);
    }
  std::printf("\nsymbolic / concrete time (race tracking on): %.2f\n", sym_on / conc_on);
  return 0;
}
