// Unordered plain writes of the same value to one element (benign
// write-write races, tolerated unless --strict) and of different values (a
// race). Regenerate: see README.md.

// Several threads set a flag (`if (cond) found = 1;`): every thread from n
// on stores 1, unordered; thread 0 reads it after the barrier.
extern "C" __global__ void flag_any(int* y, int n) {
    __shared__ int found;
    if (threadIdx.x == 0) found = 0;
    __syncthreads();
    if (threadIdx.x >= n) found = 1;
    __syncthreads();
    if (threadIdx.x == 0) y[0] = found;
}

// A layout that duplicates rows across warps, as Triton's does: threads t
// and t + 64 compute and store the same element, through shared memory and
// to global memory.
extern "C" __global__ void dup_rows(const float* x, float* y) {
    __shared__ float tile[64];
    unsigned r = threadIdx.x % 64;
    tile[r] = 2.0f * x[r];
    __syncthreads();
    y[r] = tile[63 - r] + 1.0f;
}

// The same result with one thread per row.
extern "C" __global__ void rows(const float* x, float* y) {
    __shared__ float tile[64];
    unsigned r = threadIdx.x;
    tile[r] = 2.0f * x[r];
    __syncthreads();
    y[r] = tile[63 - r] + 1.0f;
}

// Threads t and t + 64 store different values to tile[t % 64]: a race.
extern "C" __global__ void dup_rows_differ(const float* x, float* y) {
    __shared__ float tile[64];
    unsigned r = threadIdx.x % 64;
    tile[r] = 2.0f * x[threadIdx.x];
    __syncthreads();
    y[r] = tile[63 - r] + 1.0f;
}

// Every CTA of the grid stores the same value to y[t] (with "ctas": "all").
extern "C" __global__ void same_tile_all_ctas(const float* x, float* y) {
    y[threadIdx.x] = 2.0f * x[threadIdx.x];
}
