// Prints the three kinds of report the evaluator gives for broken kernels:
// a race (softmax without its barrier), a deadlock (the two halves of a warp
// at __syncwarp() with mismatched masks), and an out-of-bounds read (64
// threads reading a 48-element array). docs/reports.md shows and explains
// this output.
#include "tileverify/eval.hpp"
#include "kernels.hpp"

#include <cstdio>

using namespace tileverify;
using namespace tileverify::kernels;

namespace {

// Lanes 0-15 __syncwarp(0x0000ffff), lanes 16-31 __syncwarp(0xffffffff),
// which names lanes 0-15 too: the masks of corresponding syncs differ.
Program warp_deadlock() {
  ProgramBuilder b("warp_deadlock");
  Reg lane = b.special(Special::LaneId);
  auto upper = b.label(), done = b.label();
  b.at({"reduce.cu", 14, 5});
  b.bra_if(b.setp(Cmp::GE, lane, b.imm(DType::U32, 16)), upper);
  b.at({"reduce.cu", 15, 7}).warp_sync(0x0000ffffu);
  b.bra(done);
  b.place(upper);
  b.at({"reduce.cu", 17, 7}).warp_sync(0xffffffffu);
  b.place(done);
  return b.finish();
}

Program out_of_bounds() {
  ProgramBuilder b("tile_copy");
  auto x = b.param_pointer("x"), y = b.param_pointer("y");
  auto s = b.shared("tile", DType::F32, 48);
  Reg tid = b.special(Special::TidX);
  auto skip = b.label();
  b.at({"tile.cu", 6, 3});
  b.bra_if(b.setp(Cmp::GE, tid, b.imm(DType::U32, 48)), skip);
  Reg v = b.reg(DType::F32);
  b.at({"tile.cu", 7, 5});
  b.load(v, x, tid);
  b.store(s, tid, v);
  b.place(skip);
  b.at({"tile.cu", 8, 3}).bar();
  Reg w = b.reg(DType::F32);
  b.at({"tile.cu", 9, 3});
  b.load(w, s, tid);
  b.store(y, tid, w);
  return b.finish();
}

void show(const char* title, const Program& p, const Launch& l) {
  ExprContext c;
  SymbolicDomain dom(c);
  auto r = run_program(p, l, dom);
  std::printf("== %s\n", title);
  for (const Diagnostic& d : r.diagnostics) std::printf("%s\n", d.text().c_str());
}

}  // namespace

int main() {
  show("softmax without __syncthreads (4 threads)", naive_softmax(4, false), softmax_launch(4, 4));
  Launch warp;
  warp.block = Dim3{32, 1, 1};
  show("__syncwarp with mismatched masks on two paths (32 threads)", warp_deadlock(), warp);
  show("64 threads, 48-element shared tile", out_of_bounds(), softmax_launch(64, 64));
  return 0;
}
