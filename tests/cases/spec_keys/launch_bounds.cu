// Block sizes from the PTX. nvcc writes __launch_bounds__(64) as
// .maxntid 64, 1, 1; it never writes .reqntid, so reqntid.ptx is
// launch_bounds.ptx with the line ".reqntid 128, 1, 1" added after the
// parameter list of scale_req (as a compiler such as Triton writes it).
// nvcc -arch=sm_80 -ptx -lineinfo launch_bounds.cu -o launch_bounds.ptx
extern "C" __global__ void scale_req(const float* x, float* y) {
    y[threadIdx.x] = 3.0f * x[threadIdx.x];
}

extern "C" __global__ void __launch_bounds__(64) scale_bounded(const float* x, float* y) {
    y[threadIdx.x] = x[threadIdx.x] + x[threadIdx.x] + x[threadIdx.x];
}

extern "C" __global__ void __launch_bounds__(64) scale_bounded_2d(const float* x, float* y) {
    unsigned i = threadIdx.y * blockDim.x + threadIdx.x;
    y[i] = 3.0f * x[i];
}
