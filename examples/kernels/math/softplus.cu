// Softplus log(1 + e^x) with log1pf, as PyTorch's reference writes it;
// softplus_log the same as logf(1 + e^x) (log1p(u) = log(1 + u) over the
// reals); softplus_nolog1p the bug of log in place of log1p.
// Launch: grid [1,1,1], block [128,1,1]; 128 elements.
extern "C" __global__ void softplus_ref(const float* __restrict__ x, float* __restrict__ y)
{
    int i = threadIdx.x;
    y[i] = log1pf(expf(x[i]));
}

extern "C" __global__ void softplus_log(const float* __restrict__ x, float* __restrict__ y)
{
    int i = threadIdx.x;
    y[i] = logf(1.0f + expf(x[i]));
}

extern "C" __global__ void softplus_nolog1p(const float* __restrict__ x, float* __restrict__ y)
{
    int i = threadIdx.x;
    y[i] = logf(expf(x[i]));
}
