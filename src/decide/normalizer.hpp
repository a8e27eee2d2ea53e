// Expression DAG -> exp-polynomial normal form (internal to the decide module).
#pragma once

#include "normal_form.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <unordered_map>

#include "../util/flat_map.hpp"
#include "../util/hash.hpp"
#include <vector>

namespace tileverify::detail {

// Opaque subterms (max, min, select, opaque functions, exponentials of
// non-polynomials) become atoms keyed by the normal forms of their operands,
// so that max(exp(x), y) and max(y, ex2(x * log2e)) are one atom. max/min
// operands are flattened, sorted and deduplicated by normal form.
class Normalizer {
 public:
  Normalizer(const ExprContext& ctx, Algebra& alg) : ctx_(ctx), alg_(alg) {}

  // The normal form of e. Normal forms of nodes with several users are kept
  // for later calls; single-use intermediate results are moved, not copied.
  std::shared_ptr<const NF> run(Expr e);

  // Case-split mode: the listed max/min/select atoms evaluate to the chosen
  // operand (an expression id). Clears remembered forms.
  void set_substitution(const std::unordered_map<std::uint32_t, std::uint32_t>* subst);

  // The atom a max/min/select node became in plain mode (false if it was
  // never normalized, or all its operands had one form).
  bool atom_of(Expr e, std::uint32_t* atom) const;
  // Whether an atom is a max/min/select (an atom to split on).
  bool splittable(std::uint32_t atom) const {
    const AtomInfo* a = info(atom);
    return a && a->kind != AtomInfo::kOther;
  }
  bool is_max(std::uint32_t atom) const {
    const AtomInfo* a = info(atom);
    return a && a->kind == AtomInfo::kMax;
  }
  // The expressions an opaque atom is built from (operands of a max/min,
  // the compared values and branches of a select, the arguments of a
  // function or of a non-polynomial exponential).
  const std::vector<std::uint32_t>& operands(std::uint32_t atom) const;
  // The max/min/select atoms that the normal forms of a and b depend on,
  // directly or through other atoms' operands (plain mode, after run(a), run(b)).
  std::vector<std::uint32_t> split_atoms(Expr a, Expr b);
  // The operands a max/min/select atom can take: for max/min one expression
  // per distinct normal form, in operand order; for select [if_true, if_false].
  const std::vector<std::uint32_t>& alternatives(std::uint32_t atom) const {
    const AtomInfo* a = info(atom);
    if (!a || a->kind == AtomInfo::kOther) throw std::out_of_range("not a max/min/select atom");
    return a->kind == AtomInfo::kSelect ? a->select_alternatives : a->operands;
  }
  // For a select atom: the compared operands and the comparison.
  struct SelectInfo {
    Cmp cmp;
    std::uint32_t a, b;
  };
  const SelectInfo* select_info(std::uint32_t atom) const {
    const AtomInfo* a = info(atom);
    return a && a->kind == AtomInfo::kSelect ? &a->select : nullptr;
  }

 private:
  void deps(Expr e, std::vector<std::uint32_t>& out);
  void atoms_in(const NF& f, std::vector<std::uint32_t>& out) const;
  NF compute(Expr e, const std::vector<std::uint32_t>& dep_ids);
  NF function(Expr e, const std::vector<std::uint32_t>& dep_ids);
  std::uint32_t operand_key(std::uint32_t id);
  std::uint32_t ln2_node();
  inline static const std::string kSqrt = "sqrt", kLog = "log";
  std::uint32_t ln2_ = UINT32_MAX - 1;  // ln2_node(): not looked up yet
  bool has_log2_ = false;               // a log2 atom was normalized (products then read known constants)
  bool persistent(std::uint32_t id) const;
  std::uint32_t atom_for(std::vector<std::uint32_t>&& key);

  const ExprContext& ctx_;
  Algebra& alg_;
  const std::unordered_map<std::uint32_t, std::uint32_t>* subst_ = nullptr;
  // Normal forms of nodes, by node id: an index into vals (a dropped form
  // leaves an empty pointer, reused if the node comes back). Probed several
  // times per node, so the index is a table of pages of 1024 consecutive
  // ids, made when a node in them is first stored: no hashing or probing
  // (a hash map's probes were a sixth of normalizing a softmax), and the
  // nodes one output uses are mostly near each other in id order.
  struct Results {
    static constexpr unsigned kPageBits = 10;
    static constexpr std::uint32_t kNone = UINT32_MAX;
    std::vector<std::unique_ptr<std::uint32_t[]>> pages;
    std::vector<std::shared_ptr<const NF>> vals;
    const std::uint32_t* slot(std::uint32_t id) const {
      const std::size_t p = id >> kPageBits;
      if (p >= pages.size() || !pages[p]) return nullptr;
      const std::uint32_t* s = &pages[p][id & ((1u << kPageBits) - 1)];
      return *s == kNone ? nullptr : s;
    }
    const std::shared_ptr<const NF>* get(std::uint32_t id) const {
      const std::uint32_t* s = slot(id);
      return s && vals[*s] ? &vals[*s] : nullptr;
    }
    std::shared_ptr<const NF>* get_mut(std::uint32_t id) {
      const std::uint32_t* s = slot(id);
      return s && vals[*s] ? &vals[*s] : nullptr;
    }
    bool has(std::uint32_t id) const { return get(id) != nullptr; }
    void put(std::uint32_t id, std::shared_ptr<const NF> p) {
      if (const std::uint32_t* s = slot(id)) {
        vals[*s] = std::move(p);
        return;
      }
      const std::size_t page = id >> kPageBits;
      if (page >= pages.size()) pages.resize(page + 1);
      if (!pages[page]) {
        pages[page].reset(new std::uint32_t[std::size_t(1) << kPageBits]);
        std::fill_n(pages[page].get(), std::size_t(1) << kPageBits, kNone);
      }
      pages[page][id & ((1u << kPageBits) - 1)] = std::uint32_t(vals.size());
      vals.push_back(std::move(p));
    }
    void drop(std::uint32_t id) {
      if (const std::uint32_t* s = slot(id)) vals[*s].reset();
    }
    void clear() {
      pages.clear();
      vals.clear();
    }
  };
  Results results_;
  std::uint32_t root_ = UINT32_MAX;
  // key -> atom: keys are interned (exact sequence comparison), and the
  // atom of key id k is Algebra::kSyntheticAtom + k (atoms are made in key order)
  SeqInterner<std::uint32_t> atom_keys_;
  FlatMap64 atom_of_node_;  // plain mode: max/min/select node -> atom
  FlatMap64 key_cache_;     // plain mode: node -> nf_key
  // What plain mode learned about each synthetic atom, indexed by
  // atom - kSyntheticAtom (atoms are numbered densely from there): the
  // first node that made an atom describes it.
  struct AtomInfo {
    enum Kind : std::uint8_t { kOther, kMax, kMin, kSelect } kind = kOther;
    bool known = false;                  // operands recorded
    std::vector<std::uint32_t> operands;  // for max/min also the alternatives
    std::vector<std::uint32_t> select_alternatives;
    SelectInfo select{};
  };
  std::vector<AtomInfo> atom_info_;
  const AtomInfo* info(std::uint32_t atom) const {
    if (atom < Algebra::kSyntheticAtom) return nullptr;
    const std::size_t i = atom - Algebra::kSyntheticAtom;
    return i < atom_info_.size() && atom_info_[i].known ? &atom_info_[i] : nullptr;
  }
  // The atom's record if it has none yet (else null: the first one stays).
  AtomInfo* describe(std::uint32_t atom) {
    AtomInfo& a = atom_info_[atom - Algebra::kSyntheticAtom];
    if (a.known) return nullptr;
    a.known = true;
    return &a;
  }
  // plain mode, max/min node -> its flattened operands as (form, expression),
  // sorted by form, one per form: a running max extends its predecessor's
  std::unordered_map<std::uint32_t, std::vector<std::pair<std::uint32_t, std::uint32_t>>> flat_;
};

}  // namespace tileverify::detail
