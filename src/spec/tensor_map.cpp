// The requirements cuTensorMapEncodeTiled places on its arguments (CUDA
// Driver API, "Tensor Map Object Management"; the same text is the comment
// of cuTensorMapEncodeTiled in cuda.h), checked in the order the driver's
// documentation lists them. Every message ends with "(cuTensorMapEncodeTiled)"
// so that a user can look the rule up.
#include "tensor_map.hpp"

#include <limits>

namespace tileverify::internal {

namespace {

constexpr const char* kSource = " (cuTensorMapEncodeTiled)";

std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) return std::numeric_limits<std::uint64_t>::max();
  return a * b;
}
std::uint64_t add_sat(std::uint64_t a, std::uint64_t b) {
  return a > std::numeric_limits<std::uint64_t>::max() - b ? std::numeric_limits<std::uint64_t>::max() : a + b;
}

std::uint64_t swizzle_span(TmaSwizzle s) {
  switch (s) {
    case TmaSwizzle::B32: return 32;
    case TmaSwizzle::B64: return 64;
    case TmaSwizzle::B128: return 128;
    case TmaSwizzle::None: break;
  }
  return 0;
}

TensorMapProblem at(const std::string& field, const std::string& message) { return TensorMapProblem{field, message}; }

std::string indexed(const char* name, std::size_t i) { return std::string(name) + "[" + std::to_string(i) + "]"; }

}  // namespace

const char* interleave_name(TmaInterleave i) {
  switch (i) {
    case TmaInterleave::None: return "none";
    case TmaInterleave::B16: return "16B";
    case TmaInterleave::B32: return "32B";
  }
  return "none";
}
const char* swizzle_name(TmaSwizzle s) {
  switch (s) {
    case TmaSwizzle::None: return "none";
    case TmaSwizzle::B32: return "32B";
    case TmaSwizzle::B64: return "64B";
    case TmaSwizzle::B128: return "128B";
  }
  return "none";
}
const char* l2_promotion_name(TmaL2Promotion p) {
  switch (p) {
    case TmaL2Promotion::None: return "none";
    case TmaL2Promotion::B64: return "64B";
    case TmaL2Promotion::B128: return "128B";
    case TmaL2Promotion::B256: return "256B";
  }
  return "none";
}
const char* oob_fill_name(TmaOobFill f) { return f == TmaOobFill::Zero ? "zero" : "nan"; }

std::vector<std::uint64_t> packed_strides(const std::vector<std::uint64_t>& dims, std::size_t element_bytes) {
  std::vector<std::uint64_t> s;
  std::uint64_t bytes = element_bytes;
  for (std::size_t i = 0; i + 1 < dims.size(); ++i) {
    bytes = mul_sat(bytes, dims[i]);
    s.push_back(bytes);
  }
  return s;
}

std::optional<TensorMapProblem> tensor_map_problem(const TensorMap& m, const TensorArg& tensor) {
  const std::size_t rank = m.dims.size();
  const std::uint64_t esize = dtype_bytes(tensor.dtype);
  const std::string dtype = dtype_name(tensor.dtype);
  // tensorRank: 1 to 5; 3 or more with an interleaved layout.
  if (rank == 0 || rank > kTensorMapMaxRank)
    return at("dims", "has " + std::to_string(rank) + " entries: a tensor map has 1 to 5 dimensions" + kSource);
  if (m.box.size() != rank)
    return at("box", "has " + std::to_string(m.box.size()) + " entries, but \"dims\" has " + std::to_string(rank) +
                         ": the box has one entry per dimension, innermost first" + kSource);
  if (m.element_strides.size() != rank)
    return at("element_strides", "has " + std::to_string(m.element_strides.size()) + " entries, but \"dims\" has " +
                                     std::to_string(rank) + ": one entry per dimension, innermost first" + kSource);
  if (m.strides.size() != rank - 1)
    return at("strides", "has " + std::to_string(m.strides.size()) + " entries, but \"dims\" has " + std::to_string(rank) +
                             ": the byte strides of dimensions 1 to rank - 1 (" + std::to_string(rank - 1) +
                             " entries; dimension 0 is contiguous)" + kSource);
  if (m.interleave != TmaInterleave::None && rank < 3)
    return at("interleave", "is \"" + std::string(interleave_name(m.interleave)) + "\" with " + std::to_string(rank) +
                                " dimensions: an interleaved layout needs 3 dimensions or more" + kSource);
  // globalAddress: 16-byte aligned (32 with 32B interleave). The evaluator's
  // tensors start at offset 0 of their own memory, so this always holds.
  // globalDim: 1 to 2^32.
  for (std::size_t i = 0; i < rank; ++i)
    if (m.dims[i] == 0 || m.dims[i] > kTensorMapMaxDim)
      return at(indexed("dims", i), "is " + std::to_string(m.dims[i]) +
                                        ": a global dimension must be from 1 to 2^32 = 4294967296" + kSource);
  // globalStrides: multiples of 16 (of 32 with 32B interleave), below 2^40.
  const std::uint64_t align = m.interleave == TmaInterleave::B32 ? 32 : 16;
  for (std::size_t i = 0; i + 1 < rank; ++i) {
    const std::uint64_t s = m.strides[i];
    if (s % align != 0)
      return at(indexed("strides", i),
                "is " + std::to_string(s) + ": a global stride (the bytes between consecutive indices of dimension " +
                    std::to_string(i + 1) + ") must be a multiple of " + std::to_string(align) + " bytes" +
                    (align == 32 ? " with 32B interleave" : "") +
                    (i == 0 && s == m.dims[0] * esize ? " (rows of " + std::to_string(m.dims[0]) + " " + dtype +
                                                            " elements are " + std::to_string(s) +
                                                            " bytes: TMA needs rows padded to 16 bytes)"
                                                      : "") +
                    kSource);
    if (s >= kTensorMapStrideLimit)
      return at(indexed("strides", i), "is " + std::to_string(s) + ": a global stride must be below 2^40" + kSource);
  }
  // boxDim: 1 to 256; without interleave, the inner dimension a multiple of
  // 16 bytes.
  for (std::size_t i = 0; i < rank; ++i)
    if (m.box[i] == 0 || m.box[i] > kTensorMapMaxBox)
      return at(indexed("box", i), "is " + std::to_string(m.box[i]) + ": a box dimension must be from 1 to 256" + kSource);
  const std::uint64_t inner = std::uint64_t(m.box[0]) * esize;
  if (m.interleave == TmaInterleave::None && inner % 16 != 0)
    return at("box[0]", "is " + std::to_string(m.box[0]) + ": the box's inner dimension is " + std::to_string(inner) +
                            " bytes (" + std::to_string(m.box[0]) + " " + dtype + " elements), and without interleave it "
                            "must be a multiple of 16 bytes" + kSource);
  // elementStrides: 1 to 8 (the first is ignored without interleave, but
  // still must be in range).
  for (std::size_t i = 0; i < rank; ++i)
    if (m.element_strides[i] == 0 || m.element_strides[i] > kTensorMapMaxElementStride)
      return at(indexed("element_strides", i), "is " + std::to_string(m.element_strides[i]) +
                                                   ": an element stride must be from 1 to 8" + kSource);
  // Swizzling without interleave: the inner dimension of the box at most the
  // swizzle span; 32B interleave requires 32B swizzle.
  if (m.interleave == TmaInterleave::None && m.swizzle != TmaSwizzle::None && inner > swizzle_span(m.swizzle))
    return at("box[0]", "is " + std::to_string(m.box[0]) + ": the box's inner dimension is " + std::to_string(inner) +
                            " bytes (" + std::to_string(m.box[0]) + " " + dtype + " elements), more than the " +
                            std::to_string(swizzle_span(m.swizzle)) + " bytes of swizzle \"" + swizzle_name(m.swizzle) +
                            "\": with a swizzle and no interleave it must be at most the swizzle span" + kSource);
  if (m.interleave == TmaInterleave::B32 && m.swizzle != TmaSwizzle::B32)
    return at("swizzle", "is \"" + std::string(swizzle_name(m.swizzle)) +
                             "\": with interleave \"32B\" the swizzle must be \"32B\"" + kSource);
  // oobFill NaN: float data types only.
  if (m.oob_fill == TmaOobFill::NanRequestZeroFma && !dtype_is_float(tensor.dtype))
    return at("oob_fill", "is \"nan\" but '" + tensor.name + "' holds " + dtype +
                              ": filling out-of-bound elements with NaN is only for float data types" + kSource);
  // The map describes memory inside its tensor: the last byte it can address
  // (every index at its dimension's end) lies within the tensor's bytes. The
  // driver cannot know a buffer's size, but a map past its tensor reads or
  // writes memory the tensor does not own, on a GPU as here. Strides need not
  // grow with the dimension (a permuted view of the outer dimensions is a
  // valid map), so only the extent is checked.
  std::uint64_t last = esize;  // one past the last byte
  for (std::size_t i = 0; i < rank; ++i)
    last = add_sat(last, mul_sat(m.dims[i] - 1, i == 0 ? esize : m.strides[i - 1]));
  std::uint64_t elements = 1;
  for (std::uint64_t d : tensor.shape) elements = mul_sat(elements, d);
  const std::uint64_t bytes = mul_sat(elements, esize);
  if (last > bytes)
    return at("dims", "is " + list_text(m.dims) + " with strides " + list_text(m.strides) + ": the map spans " +
                          std::to_string(last) + " bytes from the start of '" + tensor.name + "', which has " +
                          std::to_string(bytes) + " bytes (shape " + list_text(tensor.shape) + " of " + dtype +
                          "): a tensor map must describe memory inside its tensor" + kSource);
  return std::nullopt;
}

}  // namespace tileverify::internal
