// A null pointer inside a by-value struct (tests/cases/structs/null_field.json;
// nvcc 13, -arch=sm_80 -ptx -O3): CUTLASS's epilogue Params hold alpha_ptr,
// null unless alpha is read from memory, and the kernel tests it against 0.
struct Params {
  float* out;             // byte 0
  const float* alpha_ptr; // 8: null in the spec
  float alpha;            // 16
};

extern "C" __global__ void scale_null_field(Params p, const float* x) {
  float a = p.alpha_ptr ? *p.alpha_ptr : p.alpha;
  p.out[threadIdx.x] = a * x[threadIdx.x];
}

extern "C" __global__ void scale_plain(float* out, const float* x, float alpha) {
  out[threadIdx.x] = alpha * x[threadIdx.x];
}
