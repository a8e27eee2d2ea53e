// Output pairs that are one pair up to a renaming of the inputs (internal).
//
// Kernels compute many outputs by the same code on different inputs: every
// C[i][j] of a GEMM is Σ_k A[i][k]·B[k][j], every O[i][d] of an attention
// kernel is the same softmax-weighted sum of another column of V. If
// (a', b') = σ(a, b) for a substitution σ of input symbols by input symbols,
// then a ≡ b implies a' ≡ b' (evaluate a ≡ b at σ's image), so one proof
// serves the whole family. The check is exact: a lockstep walk over both DAGs
// that builds σ and fails on any difference, and nodes the two pairs share
// must be fixed by σ; hashes only pick the candidate.
#pragma once

#include "tileverify/expr.hpp"

#include "../util/flat_map.hpp"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace tileverify::detail {

class RenamingMatcher {
 public:
  // shapes_from: another matcher whose shapes this one may read (it must not
  // change while this one is used: matchers on several threads share one).
  explicit RenamingMatcher(const ExprContext& ctx, const RenamingMatcher* shapes_from = nullptr)
      : ctx_(ctx), shapes_from_(shapes_from) {}
  // A hash of e that ignores which element of a tensor each symbol is (so a
  // renaming within tensors keeps it) and the order of the operands of sums,
  // products, max and min (a renaming can reorder them: operands are sorted
  // by handle); memoized per node.
  std::uint64_t shape(Expr e);
  // Takes the shapes `other` has computed.
  void adopt_shapes(const RenamingMatcher& other);
  // Whether (a2, b2) is (a1, b1) with its input symbols substituted, each by
  // a symbol of the same tensor and kind. Exact.
  bool renames(Expr a1, Expr b1, Expr a2, Expr b2);

 private:
  std::uint64_t tensors(Expr e);  // a bit per tensor occurring below e (bit 61: all tensors past the 61st)
  // One lockstep walk; by_shape: pair the operands of sums, products, max
  // and min by shape instead of by position.
  bool walk(Expr a1, Expr b1, Expr a2, Expr b2, bool by_shape);
  std::uint64_t known_shape(std::uint32_t id);  // shape(), read from shapes_from_ when it has it
  // Sorts the operands of x and y (commutative) by shape, then position,
  // into sx_ and sy_; false if their shapes differ as multisets.
  bool pair_by_shape(ExprRange cx, ExprRange cy);
  const ExprContext& ctx_;
  const RenamingMatcher* shapes_from_;
  std::vector<std::uint64_t> shape_, tensors_;  // by node id; 0: not computed
  std::unordered_map<std::string, unsigned> tensor_index_;
  // Scratch for renames(), kept between calls.
  FlatMap64 visited_, sigma_;
  std::vector<std::uint32_t> fixed_, moved_from_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> stack_;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> sx_, sy_;  // (shape, operand index)
  std::vector<std::uint64_t> kid_shapes_;
};

}  // namespace tileverify::detail
