// Placeholder: filled in by the work on Hopper kernels (wgmma, mbarrier, tensor maps).
#include <doctest/doctest.h>
