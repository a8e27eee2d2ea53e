// A cooperative_groups::thread_block passed by value, built for debugging:
//   nvcc -G -ptx -arch=sm_80 cg_debug.cu -o cg_debug.G.ptx
// (not by tools/regen_ptx.sh, which builds -O3). At -G nvcc keeps every
// object in local memory and copies it member by member: the 24-byte
// thread_block is copied whole although its constructor sets only some of
// its bytes. Copying unset bytes is harmless; using them is not
// (docs/evaluator.md, "Bytes nothing wrote").

#include <cooperative_groups.h>

namespace cg = cooperative_groups;

// (No block.sync() here: at -G nvcc calls __barrier_sync(id) with the id in
// a register, which tileverify does not take, an unsupported of its own.)
__device__ float scaled(cg::thread_block block, const float* x) { return 2.0f * x[block.thread_rank()]; }

// y = 2x through a thread_block copied into a __device__ function.
extern "C" __global__ void cg_block_arg(const float* x, float* y) {
  cg::thread_block block = cg::this_thread_block();
  y[threadIdx.x] = scaled(block, x);
}

extern "C" __global__ void cg_block_ref(const float* x, float* y) { y[threadIdx.x] = 2.0f * x[threadIdx.x]; }

// Bug: a struct whose index member is never set, copied into a function
// that reads x at that index: a use of unset bytes (an address).
struct Pick {
  float scale;
  int index;
};

__device__ float pick(Pick p, const float* x) { return p.scale * x[p.index]; }

extern "C" __global__ void cg_unset_index(const float* x, float* y) {
  Pick p;
  p.scale = 2.0f;
  y[threadIdx.x] = pick(p, x);
}
