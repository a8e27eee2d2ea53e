// Compiled with: nvcc -arch=sm_80 -ptx scale.cu -o scale.ptx (nvcc 13.0)
// Softmax-attention row pair with a scale that is not a power of two:
// the reference uses expf, the other kernel __expf, which multiplies
// (s - m) by the f32 scale and then by nvcc's f32 log2(e) (README.md).
#define LK 16
#define D 8
extern "C" __global__ void att_ref(const float* Q, const float* K, const float* V, float* O) {
  const float scale = 0.17677669529663687f;  // 1/sqrtf(32)
  float s[LK];
  float m = -INFINITY;
  for (int j = 0; j < LK; ++j) {
    float acc = 0.f;
    for (int d = 0; d < D; ++d) acc += Q[d] * K[j * D + d];
    s[j] = acc;
    m = fmaxf(m, acc);
  }
  float l = 0.f;
  for (int j = 0; j < LK; ++j) { s[j] = expf((s[j] - m) * scale); l += s[j]; }
  for (int d = 0; d < D; ++d) {
    float o = 0.f;
    for (int j = 0; j < LK; ++j) o += s[j] * V[j * D + d];
    O[d] = o / l;
  }
}
extern "C" __global__ void att_fast(const float* Q, const float* K, const float* V, float* O) {
  const float scale = 0.17677669529663687f;
  float s[LK];
  float m = -INFINITY;
  for (int j = 0; j < LK; ++j) {
    float acc = 0.f;
    for (int d = 0; d < D; ++d) acc += Q[d] * K[j * D + d];
    s[j] = acc;
    m = fmaxf(m, acc);
  }
  float l = 0.f;
  for (int j = 0; j < LK; ++j) { s[j] = __expf((s[j] - m) * scale); l += s[j]; }
  for (int d = 0; d < D; ++d) {
    float o = 0.f;
    for (int j = 0; j < LK; ++j) o += s[j] * V[j * D + d];
    O[d] = o / l;
  }
}
