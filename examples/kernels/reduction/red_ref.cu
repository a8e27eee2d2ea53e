// Reduction reference: one thread per CTA sums the CTA's 128 values in order.
// Launch: grid [4,1,1], block [1,1,1]; x has 4*128 values, y one per CTA.
#define ELEMS_PER_CTA 128

extern "C" __global__ void red_ref(const float* __restrict__ x, float* __restrict__ y)
{
    const float* p = x + blockIdx.x * ELEMS_PER_CTA;
    float sum = 0.0f;
    for (int i = 0; i < ELEMS_PER_CTA; ++i)
        sum += p[i];
    y[blockIdx.x] = sum;
}
