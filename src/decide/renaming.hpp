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

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace tileverify::detail {

// A number for each tensor name, and which bit of a tensor mask it has,
// shared by the matchers of one decide_all (on several threads, over up to
// two contexts) so that their substitutions and masks agree.
class TensorBits {
 public:
  std::uint32_t id(const std::string& tensor);  // 0, 1, 2, ... in order of first use
  // The mask bit of tensor id: masks are kept in 32 bits with a flag, so
  // the 31st tensor on share bit 30 (a conflict there may be no real one:
  // a renaming is then not found, never wrongly found).
  static std::uint32_t bit_of(std::uint32_t id) { return std::min(id, 30u); }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, unsigned> index_;
};

// A substitution of input symbols being built by the walks of a pair's two
// sides (which may lie in two contexts). A symbol is named by its key, the
// same in every context: (tensor id, kind, element); a symbol's image is of
// the same tensor and kind, so its element index names it.
struct Substitution {
  FlatMap64 sigma;          // symbol key -> element index of its image
  std::uint64_t moved = 0;  // the tensors (TensorBits) with a symbol that moves
  void reset() {
    sigma.reset();
    moved = 0;
  }
};

// Walks one context's expressions. Not thread-safe; one per thread.
class RenamingMatcher {
 public:
  // shapes_from: another matcher on the same context whose shapes this one
  // may read (it must not change while this one is used: matchers on
  // several threads share one).
  RenamingMatcher(const ExprContext& ctx, TensorBits& bits, const RenamingMatcher* shapes_from = nullptr)
      : ctx_(ctx), bits_(bits), shapes_from_(shapes_from) {}
  // A hash of e that ignores which element of a tensor each symbol is (so a
  // renaming within tensors keeps it) and the order of the operands of sums,
  // products, max and min (a renaming can reorder them: operands are sorted
  // by handle); memoized per node. The same in every context.
  std::uint64_t shape(Expr e);
  // The shapes (and the tensors below) of all nodes with ids below end that
  // another node uses, in one pass in id order: for the millions of nodes
  // under an attention kernel's outputs, a sequential sweep costs a fraction
  // of a depth-first walk per output, and matchers on other threads read the
  // results.
  void shapes_below(std::uint32_t end);
  // Extends s so that x2 is x1 with its symbols substituted, each by a
  // symbol of the same tensor and kind; false if no substitution does. Adds
  // the tensors of the subtrees x1 and x2 share to those fixes() checks
  // (and fails at once where one of them is already moved).
  bool walk(Expr x1, Expr x2, Substitution& s);
  // Starts a pair: forgets the pairs visited and the shared subtrees found
  // by earlier walks. quick: operands of sums, products, max and min are
  // paired by position where each pair looks alike from its nodes alone;
  // otherwise where their shapes agree (see renames()).
  void begin(bool quick = false) {
    visited_.reset();
    fixed_mask_ = 0;
    conflict_ = false;
    quick_ = quick;
  }
  // Whether no subtree shared in the walks since begin() contains a tensor
  // of `moved` (a shared subtree is left as it is, so the substitution must
  // fix every symbol in it).
  bool fixes(std::uint64_t moved) const { return (fixed_mask_ & moved) == 0; }
  // Whether the last walk failed because a shared subtree holds a tensor
  // that the substitution moves.
  bool conflict() const { return conflict_; }

 private:
  std::uint64_t tensors(Expr e);  // a bit per tensor occurring below e (TensorBits)
  std::uint64_t tensor_mask_of(Expr e);  // from its operands' masks; 0 when one is not computed
  std::uint64_t shape_of(Expr e);  // from its operands' shapes, which are known
  std::uint64_t known_shape(std::uint32_t id);  // shape(), read from shapes_from_ when it has it
  // Whether the operands of x and y have the same shapes position by
  // position (in quick mode: look alike from their nodes, see renames()).
  bool same_shapes_in_order(ExprRange cx, ExprRange cy);
  // Sorts the operands of x and y (commutative) by shape, then position,
  // into sx_ and sy_; false if their shapes differ as multisets.
  bool pair_by_shape(ExprRange cx, ExprRange cy);
  std::uint64_t key(Expr symbol);  // its key in substitutions
  struct TensorInfo {
    std::uint32_t id = 0;     // bits_.id()
    std::uint64_t hash = 0;   // of the name, for shapes
    bool known = false;
  };
  TensorInfo& tensor_info(Expr symbol);
  std::uint32_t tensor_id(Expr symbol) { return tensor_info(symbol).id; }
  std::uint64_t tensor_hash(Expr symbol) { return tensor_info(symbol).hash; }
  const ExprContext& ctx_;
  TensorBits& bits_;
  const RenamingMatcher* shapes_from_;
  std::vector<TensorInfo> tensor_info_;  // by the context's name id
  std::vector<std::uint32_t> shape_, tensors_;  // by node id; 0: not computed
  bool quick_ = false;
  // Scratch for walk(), kept between calls.
  FlatMap64 visited_;
  std::uint64_t fixed_mask_ = 0;  // the tensors of the nodes left as they are (on both sides of a pair)
  bool conflict_ = false;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> stack_;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> sx_, sy_;  // (shape, operand index)
};

// Whether (a2, b2) is (a1, b1) with its input symbols substituted, each by a
// symbol of the same tensor and kind: a1, a2 walked by ma, b1, b2 by mb (the
// same matcher, or one on another context with symbol keys). Exact.
bool renames(RenamingMatcher& ma, Expr a1, Expr a2, RenamingMatcher& mb, Expr b1, Expr b2, Substitution& s);

}  // namespace tileverify::detail
