// Tensor maps (CUtensorMap kernel parameters) checked as the CUDA driver
// checks them when a host builds one with cuTensorMapEncodeTiled (CUDA Driver
// API, "Tensor Map Object Management"): a map the driver would refuse never
// reaches a kernel on a GPU, so a spec that describes one is a mistake, and
// the evaluator may rely on every rule below. Not public.
#pragma once

#include "tileverify/eval.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tileverify::internal {

// The ranges of cuTensorMapEncodeTiled's arguments.
constexpr std::size_t kTensorMapMaxRank = 5;
constexpr std::uint64_t kTensorMapMaxDim = std::uint64_t(1) << 32;      // globalDim: 1 to 2^32
constexpr std::uint64_t kTensorMapStrideLimit = std::uint64_t(1) << 40;  // globalStrides: below 2^40
constexpr std::uint32_t kTensorMapMaxBox = 256;                          // boxDim: 1 to 256
constexpr std::uint32_t kTensorMapMaxElementStride = 8;                  // elementStrides: 1 to 8

// A rule a map breaks: the field of the map ("box[0]", "strides[1]",
// "swizzle", relative to the map) and what is wrong, starting with the value:
// "is 300: a box dimension must be from 1 to 256 (cuTensorMapEncodeTiled)".
struct TensorMapProblem {
  std::string field;
  std::string message;
};

// The first rule of cuTensorMapEncodeTiled that `map` breaks as a map over
// `tensor` (its dtype is the map's element type; its shape bounds the bytes
// the map may view), or none.
std::optional<TensorMapProblem> tensor_map_problem(const TensorMap& map, const TensorArg& tensor);

// The byte strides of dimensions 1 .. rank-1 of a packed tensor whose
// dimensions (innermost first) are `dims`: dims[0] * size, dims[0] * dims[1]
// * size, ... (saturating at 2^64 - 1, which the stride rule then refuses).
std::vector<std::uint64_t> packed_strides(const std::vector<std::uint64_t>& dims, std::size_t element_bytes);

// The spec's names of the modes ("none", "16B", "128B", "zero", "nan").
const char* interleave_name(TmaInterleave i);
const char* swizzle_name(TmaSwizzle s);
const char* l2_promotion_name(TmaL2Promotion p);
const char* oob_fill_name(TmaOobFill f);

// "[64, 64]": a list of numbers for messages.
template <class T>
std::string list_text(const std::vector<T>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace tileverify::internal
