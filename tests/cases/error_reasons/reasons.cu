// Kernels whose verdict is `unsupported`, for reports that must give the
// reason as a diagnostic with its place (tests/cases/reports_test.cpp).
// README.md gives the command (sm_90: clusters).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// __nanosleep: an instruction tileverify does not model.
__global__ void sleepy(const float* x, float* y) {
  __nanosleep(100);
  y[threadIdx.x] = x[threadIdx.x];
}
// A thread block cluster: barrier.cluster and %cluster_ctarank.
__global__ void __cluster_dims__(2, 1, 1) clustered(const float* x, float* y) {
  cg::cluster_group c = cg::this_cluster();
  c.sync();
  y[threadIdx.x] = x[threadIdx.x] + c.block_rank();
}
// clock64(): the special register %clock64.
__global__ void clocked(const float* x, float* y) {
  y[threadIdx.x] = x[threadIdx.x] + (float)clock64();
}
