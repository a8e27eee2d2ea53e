// Log-softmax of one row of 128: y = x - max - log(sum exp(x - max)).
// logsoftmax_ref: every thread computes the row's max and sum serially.
// logsoftmax_online: online log-sum-exp, each thread streams 4 elements
// keeping a running (max, sum) and rescaling the sum when the max grows, then
// a warp-shuffle merge of the pairs and a shared-memory merge of the 4 warps.
// logsoftmax_nomax: the bug of dropping the max from the result.
// Launch: grid [1,1,1], block [128,1,1].
#define N 128

extern "C" __global__ void logsoftmax_ref(const float* __restrict__ x, float* __restrict__ y)
{
    float m = -INFINITY;
    for (int i = 0; i < N; ++i) m = fmaxf(m, x[i]);
    float s = 0.0f;
    for (int i = 0; i < N; ++i) s += expf(x[i] - m);
    int t = threadIdx.x;
    y[t] = x[t] - m - logf(s);
}

__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2)
{
    float mn = fmaxf(m, m2);
    s = s * expf(m - mn) + s2 * expf(m2 - mn);
    m = mn;
}

extern "C" __global__ void logsoftmax_online(const float* __restrict__ x, float* __restrict__ y)
{
    __shared__ float sm[4], ss[4];
    int t = threadIdx.x;
    float m = -INFINITY, s = 0.0f;
    // 4 elements per thread would need N = 512; here each thread takes the
    // element t and merges through the tree.
    {
        float v = x[t];
        float mn = fmaxf(m, v);
        s = s * expf(m - mn) + expf(v - mn);
        m = mn;
    }
    for (int o = 16; o > 0; o >>= 1) {
        float m2 = __shfl_xor_sync(0xffffffffu, m, o);
        float s2 = __shfl_xor_sync(0xffffffffu, s, o);
        merge(m, s, m2, s2);
    }
    if ((t & 31) == 0) {
        sm[t >> 5] = m;
        ss[t >> 5] = s;
    }
    __syncthreads();
    m = sm[0];
    s = ss[0];
    for (int w = 1; w < 4; ++w) merge(m, s, sm[w], ss[w]);
    y[t] = x[t] - (m + logf(s));
}

extern "C" __global__ void logsoftmax_nomax(const float* __restrict__ x, float* __restrict__ y)
{
    float m = -INFINITY;
    for (int i = 0; i < N; ++i) m = fmaxf(m, x[i]);
    float s = 0.0f;
    for (int i = 0; i < N; ++i) s += expf(x[i] - m);
    int t = threadIdx.x;
    y[t] = x[t] - logf(s);
}
