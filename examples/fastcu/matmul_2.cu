// fast.cu's kernel 2 (pranjalssh/fast.cu at 38eb642,
// examples/matmul/matmul_2.cuh), included unedited; the lines above the
// include are the prelude its matmul.cu gives every kernel header.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda/barrier>
#include <cuda_bf16.h>
#include <cassert>

typedef __nv_bfloat16 bf16;

#include "examples/matmul/matmul_2.cuh"
