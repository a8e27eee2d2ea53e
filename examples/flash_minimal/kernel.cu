// flash-attention-minimal's forward kernel (github.com/tspeterkim/flash-attention-minimal,
// flash.cu at commit 00f8f46, Apache-2.0), extracted unedited by trim.awk
// into flash_kernel.inc, which this file includes: the host code beside it
// needs PyTorch's headers. extern "C" keeps the kernel's name readable.
#include <cuda_runtime.h>
#include <math.h>
extern "C" {
#include "flash_kernel.inc"
}
