// Expression DAG -> exp-polynomial normal form (internal to the decide module).
#pragma once

#include "normal_form.hpp"

#include <algorithm>
#include <memory>
#include <optional>
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

  // Whether a and b have equal compact forms (compact.cpp): tried once some
  // function's argument made a let atom, since only then can they be
  // smaller than the plain forms (a layer norm's outputs: 4 terms against
  // N + 3). False when they differ; the plain forms then decide.
  bool compact_forms_agree(Expr a, Expr b);

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
  // Compact forms (compact.cpp). The argument of an opaque function
  // (rsqrt(Σ(x_i − mean)²/N + eps)) is normalized without multiplying out
  // long linear forms: an affine polynomial whose coefficients are mostly one
  // value c is written c · B_S + r, with B_S the *let atom* standing for the
  // sum of the atoms of its support S and r the few other coefficients (so
  // x_i − mean is x_i − B/N, and (x_i − mean)² is 3 terms, not (N+1)²). The
  // form depends only on the polynomial, not on how it was computed. Before
  // a function's argument is keyed, multiples of a let's sum are folded back
  // into it (Σ_i x_i · B is B · B), so Σ(x_i − m)²/N and Σx_i²/N − m² meet.
  std::shared_ptr<const NF> run_in(Expr e, bool compact);
  NF compute_compact(Expr e, const std::vector<std::uint32_t>& dep_ids);
  std::uint32_t func_arg_key(std::uint32_t arg);
  std::uint32_t func_key_of(const NF& f);
  NF canonical_nf(const NF& f);
  // log's argument (1 + arg for log1p) with its exponential factor taken out:
  // the key of y, and C, for log(e^C · y) = C + log(y) (compact.cpp).
  struct LogArg {
    std::uint32_t key;
    std::shared_ptr<const NF> shift;  // C, null when zero
    bool one;                         // y is 1 (log y is 0)
  };
  LogArg log_arg(std::uint32_t arg, bool plus_one);
  void canon_affine(NF& f);
  std::vector<Term> canon_affine_terms(std::vector<Term> terms);
  std::uint32_t let_for(const std::vector<std::uint32_t>& support);
  const std::vector<Term>& let_terms(std::uint32_t let);
  Sum canonical_sum(const Sum& s);
  bool fold_let(std::vector<Term>& terms, std::uint32_t let);
  bool is_let(std::uint32_t atom) const { return let_defs_.count(atom) != 0; }
  void deps(Expr e, std::vector<std::uint32_t>& out);
  void atoms_in(const NF& f, std::vector<std::uint32_t>& out) const;
  NF compute(Expr e, const std::vector<std::uint32_t>& dep_ids);
  NF function(Expr e);
  std::uint32_t ln2_node();
  inline static const std::string kSqrt = "sqrt", kLog = "log";
  std::uint32_t ln2_ = UINT32_MAX - 1;  // ln2_node(): not looked up yet
  bool log2_in_context();
  bool holds_ln2(const NF& f) const;
  int log2_in_context_ = -1;  // log2_in_context(): -1 not scanned yet
  bool persistent(std::uint32_t id) const;
  std::uint32_t atom_for(std::vector<std::uint32_t>&& key);
  // Finite inputs (docs/decide.md): bounds every value of an expression lies
  // in, over the reals, from DecideLimits::input_ranges; and the constant
  // operands of a flattened max (min) that some other operand is never below
  // (above), which the max (min) does not need.
  struct Bounds {
    std::optional<Rational> lo, hi;
  };
  Bounds bounds(Expr e, int depth);
  void drop_bounded_constants(Op op, std::vector<std::pair<std::uint32_t, std::uint32_t>>& operands);

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
  Results compact_results_;  // compact forms, by node id
  bool compact_ = false;     // run() computes compact forms
  Results& res() { return compact_ ? compact_results_ : results_; }
  // let atom -> the sum it stands for: its support (sorted atom ids) and
  // its terms (coefficient 1, sorted by key_less)
  struct LetDef {
    std::vector<std::uint32_t> support;
    std::vector<Term> terms;  // empty until let_terms asks
  };
  std::unordered_map<std::uint32_t, LetDef> let_defs_;
  FlatMap64 func_key_cache_;  // plain mode: function argument node -> key
  std::unordered_map<std::uint64_t, LogArg> log_arg_cache_;  // plain mode: (node, plus_one) -> log_arg
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
    bool compact_operands = false;       // a function or let atom: its operands' forms are compact forms
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
  std::unordered_map<std::uint32_t, Bounds> bounds_memo_;  // by node id
  std::unordered_map<std::uint32_t, int> range_of_tensor_;  // symbol_tensor_id -> index in input_ranges, -1: none
};

}  // namespace tileverify::detail
