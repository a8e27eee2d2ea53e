// A reference and a kernel with different signatures, as a compiler's output
// and a hand-written reference have them: the reference takes the output
// first and a stride (always 1 here); the "compiled" kernel takes the
// inputs first, the length, and two scratch pointers it never dereferences
// (Triton appends two such). Specs give each kernel its own "args".
// nvcc -arch=sm_80 -ptx -lineinfo signature.cu -o signature.ptx
extern "C" __global__ void add_ref(float* out, const float* x, const float* y, int n, int stride) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i * stride] = x[i * stride] + y[i * stride];
}

extern "C" __global__ void add_compiled(const float* x, const float* y, float* out, int n, void* scratch0,
                                        void* scratch1) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = y[i] + x[i];
}

// The same with the operands subtracted: not equivalent.
extern "C" __global__ void sub_compiled(const float* x, const float* y, float* out, int n, void* scratch0,
                                        void* scratch1) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] - y[i];
}

// A kernel that dereferences what a spec may give as null.
extern "C" __global__ void uses_scratch(const float* x, float* out, float* scratch) {
    int i = threadIdx.x;
    scratch[i] = x[i];
    out[i] = scratch[i];
}
