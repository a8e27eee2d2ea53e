// Online softmax (VOLTA Fig. 1b): every thread streams the whole row keeping a
// running max m and a running denominator d rescaled whenever m grows.
// Launch: grid [1,1,1], block [128,1,1].
#define N 128

extern "C" __global__ void softmax_online(const float* __restrict__ x, float* __restrict__ y)
{
    int tid = threadIdx.x;
    float m = -INFINITY;
    float d = 0.0f;
    for (int i = 0; i < N; ++i) {
        float v = x[i];
        float new_m = fmaxf(m, v);
        d = d * expf(m - new_m) + expf(v - new_m);
        m = new_m;
    }
    y[tid] = expf(x[tid] - m) / d;
}
