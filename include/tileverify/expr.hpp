// tileverify/expr.hpp — interned expressions over the reals.
//
// Contract: an ExprContext owns an arena of hash-consed expression nodes; an
// Expr is a 32-bit handle into it. Structurally equal expressions built in the
// same context get the same handle. Constructors canonicalize cheaply (they
// flatten nested sums/products/max/min, sort operands by handle, fold
// constants, and drop neutral elements) so that many trivially equal
// expressions already share one node; deciding real equality in general is the
// job of tileverify/decide.hpp, not of these constructors.
//
// Values are reals (floating-point rounding is not modelled), extended with
// -inf/+inf only where kernels use them as identities (max(-inf, x) = x,
// exp(-inf) = 0, -inf + x = -inf).
//
// Threading: building expressions mutates the context and is not thread-safe.
// Reading (op, children, printing, evaluation) is safe from many threads as
// long as nobody builds at the same time.
#pragma once

#include "tileverify/detail/grow_array.hpp"
#include "tileverify/rational.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tileverify {

enum class Op : std::uint8_t {
  Const,   // a rational constant
  NegInf,  // -infinity (the identity of max)
  PosInf,  // +infinity (the identity of min)
  Named,   // a named transcendental constant; today only "ln2"
  Symbol,  // an input element: tensor name + flat element index
  Add,     // n-ary sum
  Mul,     // n-ary product
  Pow,     // integer power; negative powers are division
  Exp,     // e^x
  Max,     // n-ary maximum
  Min,     // n-ary minimum
  Select,  // (a cmp b) ? t : f, children [a, b, t, f]
  Func,    // a named opaque function (log, sqrt, tanh, erf, ...), an uninterpreted atom
};

enum class Cmp : std::uint8_t { LT, LE, GT, GE, EQ, NE };
const char* cmp_symbol(Cmp c);

// a cmp b, for any type with the six comparisons (numbers, Rational, or
// expression types of other libraries whose comparisons build terms).
template <class T>
auto apply_cmp(Cmp c, const T& a, const T& b) -> decltype(a < b) {
  switch (c) {
    case Cmp::LT: return a < b;
    case Cmp::LE: return a <= b;
    case Cmp::GT: return a > b;
    case Cmp::GE: return a >= b;
    case Cmp::EQ: return a == b;
    case Cmp::NE: return a != b;
  }
  return a != a;  // unreachable: every Cmp is handled above
}

struct Expr {
  std::uint32_t id = UINT32_MAX;
  bool valid() const { return id != UINT32_MAX; }
  friend bool operator==(Expr a, Expr b) { return a.id == b.id; }
  friend bool operator!=(Expr a, Expr b) { return a.id != b.id; }
  friend bool operator<(Expr a, Expr b) { return a.id < b.id; }
};

// A read-only view of an expression's operands. It stays valid while the
// context grows (it indexes the context's storage on every access), so code
// may build new expressions while walking operands.
class ExprRange {
 public:
  // store: where the context keeps the address of its operand array.
  ExprRange(const std::uint32_t* const* store, std::size_t offset, std::size_t n)
      : store_(store), offset_(offset), n_(n) {}
  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  Expr operator[](std::size_t i) const { return Expr{(*store_)[offset_ + i]}; }
  struct iterator {
    const std::uint32_t* const* store;
    std::size_t i;
    Expr operator*() const { return Expr{(*store)[i]}; }
    iterator& operator++() {
      ++i;
      return *this;
    }
    bool operator!=(const iterator& o) const { return i != o.i; }
    bool operator==(const iterator& o) const { return i == o.i; }
  };
  iterator begin() const { return {store_, offset_}; }
  iterator end() const { return {store_, offset_ + n_}; }

 private:
  const std::uint32_t* const* store_;
  std::size_t offset_;
  std::size_t n_;
};

// Values for input symbols, e.g. a counterexample.
struct Assignment {
  std::vector<std::pair<Expr, Rational>> values;  // (symbol, value)
};

class ExprContext {
 public:
  ExprContext();
  ~ExprContext();
  ExprContext(const ExprContext&) = delete;
  ExprContext& operator=(const ExprContext&) = delete;
  ExprContext(ExprContext&&) noexcept;
  ExprContext& operator=(ExprContext&&) noexcept;

  // ---- leaves ----
  Expr constant(const Rational& v);
  Expr constant(std::int64_t v) { return constant(Rational(v)); }
  Expr zero() { return constant(Rational(0)); }
  Expr one() { return constant(Rational(1)); }
  Expr neg_inf();
  Expr pos_inf();
  Expr ln2();  // the real number ln 2
  // The element `index` (row-major, flat) of input tensor `tensor`.
  Expr symbol(const std::string& tensor, std::uint32_t index);
  // The same for an integer tensor: a symbol that only takes integer values.
  // Identities proved over the reals hold over the integers too; a
  // counterexample must give it an integer value.
  Expr int_symbol(const std::string& tensor, std::uint32_t index);

  // ---- operations (canonicalizing) ----
  Expr add(Expr a, Expr b);
  Expr add(const std::vector<Expr>& terms);
  Expr sub(Expr a, Expr b);
  Expr neg(Expr a);
  Expr mul(Expr a, Expr b);
  Expr mul(const std::vector<Expr>& factors);
  Expr div(Expr a, Expr b);
  Expr pow(Expr base, std::int32_t k);
  Expr exp(Expr a);
  Expr ex2(Expr a);  // 2^a = exp(a * ln2)
  Expr max(Expr a, Expr b);
  Expr max(const std::vector<Expr>& args);
  Expr min(Expr a, Expr b);
  Expr min(const std::vector<Expr>& args);
  Expr select(Cmp cmp, Expr a, Expr b, Expr if_true, Expr if_false);
  Expr func(const std::string& name, const std::vector<Expr>& args);

  // ---- sums built a term at a time ----
  // acc + t1 + ... + tn exactly as the adds acc = add(acc, t1), ...,
  // acc = add(acc, tn) build it: sum_of() returns the handle those adds
  // would return. What differs is what is left behind: each of those adds
  // interns its partial sum, and a chain of fmas (a dot product) uses none
  // of them but the last; here a partial sum is interned only where the
  // next add could not have extended it in place (every flatten_limit()
  // terms, or a term the adds would combine with another one). In an
  // attention kernel those partial sums were 40% of all nodes.
  //   RunningSum s = ctx.running_sum(acc);
  //   for (...) ctx.add_to(s, t);
  //   Expr total = ctx.sum_of(s);  // s may go on taking terms
  struct RunningSum {
    Expr acc;                // the sum so far, while n == 0
    std::uint32_t n = 0;     // n >= 2: the sum so far is Add(kids[0..n)), not interned yet
    std::uint32_t kids[16];  // ascending handles, as a sum node holds them
    // The like-term base of each of kids (t for c*t): a new term is checked
    // against these, where reading each operand's node again per term was a
    // tenth of a GEMM's symbolic run.
    std::uint32_t bases[16];
  };
  RunningSum running_sum(Expr acc) const {
    RunningSum s;
    s.acc = acc;
    return s;
  }
  void add_to(RunningSum& s, Expr t);
  Expr sum_of(RunningSum& s);
  // A dot product into a running sum: add_to(s, mul(a[q * a_stride],
  // b[q * b_stride])) for q = 0 .. k - 1, the same nodes made in the same
  // order (so the same handles, and sum_of(s) the handle of the sequential
  // fmas), at a fraction of the cost: a product of two operands that are
  // neither constants nor products is interned directly, without the add/mul
  // memo, and joins the sum as a term whose like base is itself. An mma's
  // accumulator element is one call per instruction.
  void add_products(RunningSum& s, const Expr* a, std::size_t a_stride, const Expr* b, std::size_t b_stride,
                    std::size_t k);

  // ---- inspection ----
  std::size_t size() const { return nodes_.size(); }
  // About how many bytes the context holds (nodes, operands, tables,
  // constants): for memory budgets, not exact.
  std::size_t memory_bytes() const;
  Op op(Expr e) const { return nodes_[e.id].op; }
  ExprRange children(Expr e) const {  // inline: decision walks call it per node
    const Node& n = nodes_[e.id];
    return ExprRange(kids_.data_address(), n.n == 0 ? 0 : n.a, n.n);
  }
  const Rational& constant_value(Expr e) const { return constants_[nodes_[e.id].a]; }  // op == Const
  bool is_constant(Expr e) const { return op(e) == Op::Const; }
  const std::string& symbol_tensor(Expr e) const { return names_[nodes_[e.id].a]; }  // op == Symbol
  std::uint32_t symbol_index(Expr e) const { return nodes_[e.id].b; }  // op == Symbol
  // The tensor's name as a number: equal within one context exactly when the
  // names are equal (a cheap comparison for walks over millions of symbols).
  std::uint32_t symbol_tensor_id(Expr e) const { return nodes_[e.id].a; }  // op == Symbol
  bool is_integer_symbol(Expr e) const { return op(e) == Op::Symbol && nodes_[e.id].aux == 1; }
  std::int32_t pow_exponent(Expr e) const;         // op == Pow
  Cmp select_cmp(Expr e) const;                    // op == Select
  // False when no -inf/+inf occurs in e: e is then a finite real wherever it
  // is defined, which settles comparisons against -inf and +inf.
  bool may_be_infinite(Expr e) const { return nodes_[e.id].has_inf; }
  const std::string& name(Expr e) const;           // op == Func or Named
  // How many distinct nodes use `e` as an operand (over the whole context),
  // up to kManyParents: the count stops there.
  static constexpr std::uint32_t kManyParents = 255;
  std::uint32_t parent_count(Expr e) const { return parents_[e.id]; }
  std::size_t hash(Expr e) const;

  // Sums, products, max and min flatten nested operands of their own kind only
  // while those have at most this many operands: it keeps construction linear
  // for long accumulation chains (sum += a[i]) at the cost of some nesting.
  void set_flatten_limit(std::size_t n) { flatten_limit_ = n; }
  std::size_t flatten_limit() const { return flatten_limit_; }

  // Readable infix, e.g. "exp(x[0] - max(x[0], x[1]))". Output longer than
  // max_chars is cut and ends in "...".
  std::string to_string(Expr e, std::size_t max_chars = 4096) const;

  // Copies every node of `other` (another context) into this one and returns,
  // for each handle of `other`, the handle of the same expression here. Lets
  // two kernels be evaluated into separate contexts on separate threads and
  // then compared in one. Linear in other.size().
  std::vector<Expr> import(const ExprContext& other);
  // Copies the nodes of `other` below `roots` that `map` does not hold yet.
  // map[id] is the handle here of `other`'s node id (invalid: not copied);
  // it is sized on first use and kept by the caller across calls, so that
  // importing a few outputs of a large context costs what they hold.
  void import_below(const ExprContext& other, const std::vector<Expr>& roots, std::vector<Expr>& map);

  // `roots` with every input symbol of tensor T (integer or not) replaced by
  // the symbol of element index + shift(T) of T, as built here: a renaming of
  // the inputs, which keeps every identity (CTA classes use it to carry one
  // CTA's outputs to another's). None when a new index leaves [0, 2^32).
  // shift is asked once per tensor.
  std::optional<std::vector<Expr>> shift_symbols(const std::vector<Expr>& roots,
                                                 const std::function<std::int64_t(const std::string&)>& shift);

  // All distinct Symbol nodes reachable from the given roots, in handle order.
  std::vector<Expr> symbols_of(const std::vector<Expr>& roots) const;

 private:
  struct Node {
    Op op;
    std::uint8_t aux;    // Select: Cmp; Symbol: 1 for an integer symbol
    bool has_inf;        // -inf or +inf occurs below (or is) this node
    std::uint32_t n;     // operand count
    std::uint32_t a;     // operand offset | constant index | name index
    std::uint32_t b;     // Symbol: element index; Pow: exponent; Func: name index
  };
  Expr intern(Op op, std::uint8_t aux, const std::uint32_t* kids, std::uint32_t n, std::uint32_t a,
              std::uint32_t b) {
    if (!unindexed_.empty()) index_unindexed();
    return intern_indexed(op, aux, kids, n, a, b);
  }
  // intern, assuming every node that could equal this one is in the tables.
  Expr intern_indexed(Op op, std::uint8_t aux, const std::uint32_t* kids, std::uint32_t n, std::uint32_t a,
                      std::uint32_t b);
  std::size_t node_hash(Op op, std::uint8_t aux, const std::uint32_t* kids, std::uint32_t n, std::uint32_t a,
                        std::uint32_t b) const;
  std::uint32_t append(Op op, std::uint8_t aux, const std::uint32_t* kids, std::uint32_t n, std::uint32_t a,
                       std::uint32_t b, std::size_t h);
  // Puts node id (not in any table yet) into its window or the global table.
  void place(std::uint32_t id);
  void index_unindexed();
  enum class Home : std::uint8_t { Anchored, PairWindow, Global };  // which table a node lives in
  Home home_of(const std::uint32_t* kids, std::uint32_t n) const;
  static std::uint64_t pair_key(const std::uint32_t* kids);  // the pair window of two leaves
  static std::uint64_t overflow_key(const std::uint32_t* kids, std::uint32_t n);  // a full window's overflow
  static std::uint64_t chain_key(std::uint64_t chain, std::uint32_t level);  // its level-th window
  static constexpr std::uint32_t kPairLevels = 2;  // pair windows a node may look in before the global table
  static std::uint32_t pair_window_slots(std::uint32_t level);  // the size of a level's windows
  std::size_t pair_window_base(std::uint64_t key, std::uint32_t slots);  // first slot of window `key`, made if new
  void note_global_insert();                                // grows the global table when needed
  std::uint32_t name_id(const std::string& s);
  // Imports `other`'s node id (its operands are imported); before: this
  // context's size when the import began.
  Expr import_node(const ExprContext& other, std::uint32_t id, const std::vector<Expr>& map, std::uint32_t before,
                   std::vector<std::uint32_t>& kids);
  Expr nary(Op op, std::vector<std::uint32_t>& kids);  // kids already canonical
  Expr insert_operand(Op kind, Expr x, Expr g);
  bool join_operand(Op kind, std::uint32_t* kids, std::uint32_t& n, Expr x) const;  // x into sorted operands
  // add_to with t's leafness for a sum and like base (when a leaf) known.
  void add_term(RunningSum& s, Expr t, bool leaf_t, std::uint32_t base_t);
  bool join_running(RunningSum& s, Expr t, std::uint32_t base_t) const;  // join_operand on s's operands
  Expr add_uncached(Expr a, Expr b);  // a.id <= b.id
  Expr mul_uncached(Expr a, Expr b);
  Expr max_min(Op op, const std::vector<Expr>& args);
  std::uint32_t like_base(Expr e) const;  // t for c*t, else e itself
  bool flattens_big(Op kind, Expr e) const;  // e is a sum (product) of 9 to flatten_limit_ operands
  bool memo_get(Op op, Expr a, Expr b, Expr* out) const;
  void memo_put(Op op, Expr a, Expr b, Expr r);

  detail::GrowArray<Node> nodes_;
  // Per node: the lower half of its hash (the table slots hold the upper
  // half) and its parent count, saturating: 5 bytes where 12 were, for
  // millions of nodes.
  detail::GrowArray<std::uint32_t> hashes_;
  detail::GrowArray<std::uint8_t> parents_;
  detail::GrowArray<std::uint32_t> kids_;
  std::vector<Rational> constants_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::uint32_t> name_ids_;
  // Open addressing, slots (hash tag << 32 | node id), all ones = empty.
  // anchored_: a window of kWindowSlots slots per 2^kAnchorShift node ids; a
  // node with operands lives in the window of its largest operand id, probed
  // linearly within the window only (products of two leaves, and nodes whose
  // window is full, use the pair windows of the Memo). table_: leaves, and
  // nodes whose windows were all full.
  static constexpr std::uint32_t kAnchorShift = 5, kWindowSlots = 64;
  detail::GrowArray<std::uint64_t> anchored_;
  detail::GrowArray<std::uint64_t> table_;
  std::size_t global_count_ = 0;
  // Nodes that import() appended without entering them in the tables (each
  // has an operand that import created, so nothing before could equal it);
  // entered before the next lookup. A check never builds after its import.
  std::vector<std::uint32_t> unindexed_;
  struct Memo;                  // add, mul, max, min: (a, b) -> result
  std::unique_ptr<Memo> memo_;  // (flat hash maps, internal)
  std::size_t flatten_limit_ = 8;
  Expr neg_inf_, pos_inf_, zero_, one_, minus_one_, ln2_;
};

// Evaluates `e` in long double, with every reachable symbol taking its value
// from `values` (a missing symbol is a programmer error: std::out_of_range).
// Meant for quick checks and tests; the decider confirms counterexamples with
// MPFR at much higher precision.
long double evaluate(const ExprContext& ctx, Expr e, const Assignment& values);
// Many roots at once; shared subexpressions are evaluated once.
std::vector<long double> evaluate(const ExprContext& ctx, const std::vector<Expr>& roots, const Assignment& values);

}  // namespace tileverify
