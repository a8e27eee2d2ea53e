// Entropy in bits of a distribution p of 128 values: -sum p log2 p.
// entropy_ref: one thread sums serially with log2f; entropy_tree: each
// thread's term, a shared-memory tree reduction; entropy_nats: the bug of
// logf (nats) where bits were asked for. Launch: grid [1,1,1], block [128,1,1].
#define N 128

extern "C" __global__ void entropy_ref(const float* __restrict__ p, float* __restrict__ h)
{
    if (threadIdx.x != 0) return;
    float s = 0.0f;
    for (int i = 0; i < N; ++i) s -= p[i] * log2f(p[i]);
    h[0] = s;
}

extern "C" __global__ void entropy_tree(const float* __restrict__ p, float* __restrict__ h)
{
    __shared__ float t[N];
    int i = threadIdx.x;
    float v = p[i];
    t[i] = -v * log2f(v);
    __syncthreads();
    for (int s = N / 2; s > 0; s >>= 1) {
        if (i < s) t[i] += t[i + s];
        __syncthreads();
    }
    if (i == 0) h[0] = t[0];
}

extern "C" __global__ void entropy_nats(const float* __restrict__ p, float* __restrict__ h)
{
    __shared__ float t[N];
    int i = threadIdx.x;
    float v = p[i];
    t[i] = -v * logf(v);
    __syncthreads();
    for (int s = N / 2; s > 0; s >>= 1) {
        if (i < s) t[i] += t[i + s];
        __syncthreads();
    }
    if (i == 0) h[0] = t[0];
}
