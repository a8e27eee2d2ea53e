// Bug: online softmax that forgets to rescale the running denominator when
// the running max grows (d += exp(v - new_m) instead of
// d = d * exp(m - new_m) + exp(v - new_m)): not equivalent.
// Launch: grid [1,1,1], block [128,1,1].
#define N 128

extern "C" __global__ void softmax_online_norescale(const float* __restrict__ x, float* __restrict__ y)
{
    int tid = threadIdx.x;
    float m = -INFINITY;
    float d = 0.0f;
    for (int i = 0; i < N; ++i) {
        float v = x[i];
        float new_m = fmaxf(m, v);
        d = d + expf(v - new_m);
        m = new_m;
    }
    y[tid] = expf(x[tid] - m) / d;
}
