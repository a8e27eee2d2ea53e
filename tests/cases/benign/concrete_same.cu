// Unordered stores whose values only a symbolic run tells apart: every
// thread of a CTA stores max(x[i], 5) to y[blockIdx.x]. For any input in
// [-2, 2) (the concrete domain's pseudo-random inputs) that is 5, the same
// float in every thread, which a concrete run notes as a same-value write;
// for other inputs the values differ, so it is a race.
// nvcc -arch=sm_80 -ptx -lineinfo concrete_same.cu -o concrete_same.ptx (nvcc 13.0)
extern "C" __global__ void max_floor(const float* x, float* y) {
  y[blockIdx.x] = fmaxf(x[blockIdx.x * blockDim.x + threadIdx.x], 5.0f);
}

// The same kernel without the race: thread 0 alone stores.
extern "C" __global__ void max_floor_one(const float* x, float* y) {
  if (threadIdx.x == 0) y[blockIdx.x] = fmaxf(x[blockIdx.x * blockDim.x], 5.0f);
}
