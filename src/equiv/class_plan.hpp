// Pairing the output elements of two kernels' CTA classes (class_check.cpp
// decides the comparisons; estimate.cpp counts them). Not public.
#pragma once

#include "cta_classes.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tileverify::internal {

// One comparison: the reference's value at its representative's element
// ea renamed by d (per tensor) against the optimized one's at eb.
struct Comparison {
  std::string name;       // the output tensor
  std::uint64_t element;  // the first element it stands for
  std::uint64_t elements = 0;  // how many it stands for
  Cover ca, cb;
  std::vector<std::int64_t> d;
};

struct Plan {
  std::vector<std::string> tensors;  // the tensors d names, in order
  std::vector<Comparison> comparisons;
  std::uint64_t elements = 0;
  // An element only one kernel writes (the first): the answer, if any.
  struct OneSided {
    std::string name;
    std::uint64_t element;
    Cover ca, cb;
  };
  std::optional<OneSided> one_sided;
};

// How many elements the member of cv's class moves tensor t (none: the
// class does not read it).
std::optional<std::int64_t> shift_of(const KernelClasses& k, const Cover& cv, const std::string& t);

// Element e of an output is, in kernel k, the representative's element moved
// by the member's shifts s_k (a renaming of the inputs). Both values at e
// are equal iff R∘s_a = O∘s_b, iff R∘(s_a - s_b) = O (apply the inverse
// renaming s_b to both sides): one comparison per distinct
// (representatives' elements, s_a - s_b), whatever the number of elements.
// None when the deadline passes first (a 1024^3 GEMM has a million elements).
std::optional<Plan> plan(const KernelClasses& a, const KernelClasses& b,
                         const std::optional<std::chrono::steady_clock::time_point>& deadline);

// The comparisons of shard `index` of `count` (class_plan.cpp says how they
// are dealt).
std::vector<std::size_t> share(const Plan& p, unsigned index, unsigned count);

// The comparisons of each (reference class, optimized class) pair, in the
// order share() deals the pairs (ShardInfo::plan).
std::vector<std::uint64_t> pair_sizes(const Plan& p);

}  // namespace tileverify::internal
