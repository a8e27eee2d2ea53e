// GPUVerify's kernel annotations, for compiling its test suite's kernels
// unedited with nvcc: nvcc -include gpuverify.h (see README.md).
//
// __requires_fresh_array(p): GPUVerify may assume p points to an array no
// other pointer reaches. tileverify gives every tensor of a spec its own
// memory, so a spec that names a tensor of its own for p assumes the same:
// the annotation compiles to nothing.
// __assert(e): GPUVerify's assertion, checked for every thread; assert()
// compiles to a trap when it fails, which tileverify reports (verdict trap).
#pragma once
#include <assert.h>

#define __requires_fresh_array(p) ((void)0)
#define __assert(e) assert(e)
