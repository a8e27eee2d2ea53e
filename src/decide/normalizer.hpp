// Expression DAG -> exp-polynomial normal form (internal to the decide module).
#pragma once

#include "normal_form.hpp"

#include <memory>
#include <unordered_map>
#include <vector>

namespace tileverify::detail {

struct VecHash {
  std::size_t operator()(const std::vector<std::uint32_t>& v) const {
    std::size_t h = v.size();
    for (std::uint32_t x : v) h ^= x + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h;
  }
};

class Normalizer {
 public:
  Normalizer(const ExprContext& ctx, Algebra& alg) : ctx_(ctx), alg_(alg) {}

  // The normal form of e. Normal forms of nodes with several users are kept
  // for later calls; single-use intermediate results are moved, not copied.
  std::shared_ptr<const NF> run(Expr e);

  // Case-split mode: max/min atoms (by representative) and select nodes (by
  // id) listed here evaluate to the chosen operand. Clears remembered forms.
  void set_substitution(const std::unordered_map<std::uint32_t, std::uint32_t>* subst);

  // max/min are atoms keyed by their flattened, sorted, deduplicated operand
  // set: max(max(a, b), c) and max(a, max(b, c)) are the same atom.
  std::uint32_t atom_of(Expr e);
  const std::vector<std::uint32_t>& flat_args(Expr e);

 private:
  void deps(Expr e, std::vector<std::uint32_t>& out);
  NF compute(Expr e, const std::vector<std::uint32_t>& dep_ids);
  bool persistent(std::uint32_t id) const;

  const ExprContext& ctx_;
  Algebra& alg_;
  const std::unordered_map<std::uint32_t, std::uint32_t>* subst_ = nullptr;
  std::unordered_map<std::uint32_t, std::shared_ptr<const NF>> results_;
  std::uint32_t root_ = UINT32_MAX;
  // max/min atoms
  std::unordered_map<std::uint32_t, std::uint32_t> rep_of_;                    // node -> representative
  std::unordered_map<std::vector<std::uint32_t>, std::uint32_t, VecHash> keys_;  // (op, args...) -> rep
  std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> args_of_rep_;
};

}  // namespace tileverify::detail
