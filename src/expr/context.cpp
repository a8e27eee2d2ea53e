// ExprContext: hash-consing and the cheap canonicalizing constructors.
#include "tileverify/expr.hpp"

#include "../util/flat_map.hpp"
#include "../util/hash.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

namespace tileverify {

namespace {

constexpr std::uint64_t kEmptySlot = ~std::uint64_t(0);

// Pair windows: a level-0 window has kPairSlots0 slots (most hold a few
// nodes: an anchored window's overflow, the products of two blocks of
// inputs that a dot product touches); a full one continues in a level-1
// window of kWindowSlots.
constexpr std::uint32_t kPairSlots0 = 32;

inline std::size_t mix(std::size_t h, std::size_t v) { return std::size_t(detail::combine64(h, v)); }

inline std::size_t finalize(std::size_t h) { return std::size_t(detail::finalize64(h)); }

}  // namespace

const char* cmp_symbol(Cmp c) {
  switch (c) {
    case Cmp::LT: return "<";
    case Cmp::LE: return "<=";
    case Cmp::GT: return ">";
    case Cmp::GE: return ">=";
    case Cmp::EQ: return "==";
    case Cmp::NE: return "!=";
  }
  return "?";
}

struct ExprContext::Memo {
  // shift_symbols' marks and images, one slot per node, each stamped with
  // the call that wrote it (epoch << 32 | image): a call reads and writes
  // only the slots of the nodes its roots reach, never clears the table,
  // and keeps array speed where a hash map cost a third more on a grid of
  // large groups.
  std::vector<std::uint64_t> shift_slots;
  std::uint32_t shift_epoch = 0;
  // The last result of add/mul on each (a, b), direct-mapped: the threads of
  // a CTA recomputing the same running max and sum repeat the same
  // operations, which then skip canonicalization and the node table.
  //
  // It starts small and grows with the context: a context is made per
  // check, and 64 KB filled (then given back to the OS, and faulted in again
  // by the next check) was a sixth of checking the smallest kernel pair.
  struct Recent {
    std::uint32_t a = UINT32_MAX, b = UINT32_MAX, r = 0;
    Op op = Op::Const;
  };
  static constexpr std::size_t kRecentMin = 1 << 8, kRecent = 1 << 12;
  std::vector<Recent> recent = std::vector<Recent>(kRecentMin);
  // compute() unless op(a, b) is the recent entry of its slot. nodes: the
  // context's size.
  template <class F>
  Expr cached(Op op, Expr a, Expr b, std::size_t nodes, F compute) {
    if (recent.size() < kRecent && nodes > 16 * recent.size()) recent.assign(recent.size() * 4, Recent{});
    const std::uint64_t k = detail::finalize64((std::uint64_t(a.id) << 32 | b.id) * 4 + std::uint64_t(op));
    const Recent& seen = recent[k & (recent.size() - 1)];
    if (seen.a == a.id && seen.b == b.id && seen.op == op) return Expr{seen.r};
    const Expr r = compute();
    // Indexed again: compute() may have grown the table.
    recent[k & (recent.size() - 1)] = Recent{a.id, b.id, r.id, op};
    return r;
  }
  detail::FlatMap64 table[4];
  // Windows of kWindowSlots slots for nodes over two leaves, one per pair of
  // operand id blocks (see intern).
  detail::FlatMap64 pair_window;  // (block of kids[0]) << 32 | block of kids[1] -> window
  detail::GrowArray<std::uint64_t> pair_slots;
  bool last_window_valid = false;  // the window pair_window_base found last
  std::uint64_t last_window_key = 0;
  std::size_t last_window_base = 0;
};

std::size_t ExprContext::memory_bytes() const {
  // Each node: its record, hash and parent count, and about two table slots
  // (the anchored windows and the global table); the memo grows with the
  // context to about as much again.
  const std::size_t per_node = sizeof(Node) + sizeof(std::uint32_t) + 1 + 2 * sizeof(std::uint64_t);
  return nodes_.size() * per_node * 2 + kids_.size() * sizeof(std::uint32_t) + constants_.size() * 64 +
         (anchored_.size() + table_.size()) * sizeof(std::uint64_t);
}

ExprContext::~ExprContext() = default;
ExprContext::ExprContext(ExprContext&&) noexcept = default;
ExprContext& ExprContext::operator=(ExprContext&&) noexcept = default;

ExprContext::ExprContext() : memo_(new Memo) {
  table_.assign(1024, kEmptySlot);  // small (see Memo::recent); both grow
  anchored_.assign(std::size_t(32) * kWindowSlots, kEmptySlot);
  neg_inf_ = intern(Op::NegInf, 0, nullptr, 0, 0, 0);
  pos_inf_ = intern(Op::PosInf, 0, nullptr, 0, 0, 0);
  zero_ = constant(Rational(0));
  one_ = constant(Rational(1));
  minus_one_ = constant(Rational(-1));
  ln2_ = intern(Op::Named, 0, nullptr, 0, name_id("ln2"), 0);
}

std::uint32_t ExprContext::name_id(const std::string& s) {
  auto it = name_ids_.find(s);
  if (it != name_ids_.end()) return it->second;
  std::uint32_t id = std::uint32_t(names_.size());
  names_.push_back(s);
  name_ids_.emplace(s, id);
  return id;
}

std::size_t ExprContext::node_hash(Op op, std::uint8_t aux, const std::uint32_t* kids, std::uint32_t n,
                                   std::uint32_t a, std::uint32_t b) const {
  std::size_t h = mix(std::size_t(op) * 0x100000001B3ull, aux);
  h = mix(h, n);
  h = mix(h, b);
  if (op == Op::Const)
    h = mix(h, constants_[a].hash());
  else if (n == 0)
    h = mix(h, a);
  for (std::uint32_t i = 0; i < n; ++i) h = mix(h, kids[i]);
  return finalize(h);  // the combine above leaves low bits clustered; probing needs them spread
}

std::size_t ExprContext::hash(Expr e) const {
  // Recomputed: hashes_ keeps only the lower half (4 bytes a node).
  const Node& n = nodes_[e.id];
  return node_hash(n.op, n.aux, n.n == 0 ? nullptr : kids_.data() + n.a, n.n, n.a, n.b);
}

// A node with operands is looked for, and placed, first in the window of its
// newest operand (see anchored_): a node is almost always built soon after
// its newest operand, so the windows in use are the last few, in cache,
// where a hash table spreading 2 M nodes over 32 MB would miss cache on
// every new node.
//
// An operation on two leaves (a product of two inputs) has no recent operand
// to be near, and every input takes part in many of them. Its window is that
// of the pair of id blocks of its operands: a dot product walks consecutive
// elements of a row (q[i][k] * k[j][k], k = 0, 1, ...), and neighbouring
// threads walk neighbouring columns, so consecutive products mostly share a
// block pair. Everything else, and nodes whose window is full, go to the
// global table.
//
// A window that fills up overflows into the pair window of the node's two
// newest operands: the products p[j] * v[j][d] of an attention kernel anchor
// 64 nodes (one per d) at each exponential, and a block of 32 ids holds ten of
// those, far more than a window's slots; spread over (exponential block,
// v block) pairs they are again a few nodes per window, found in cache. A
// full pair window (of either kind) continues in a second one, and only then
// does a node go to the global table. Windows only fill up, so a lookup that
// follows the same chain finds every node where it was put.
ExprContext::Home ExprContext::home_of(const std::uint32_t* kids, std::uint32_t n) const {
  if (n > 0 && nodes_[*std::max_element(kids, kids + n)].n > 0) return Home::Anchored;
  if (n == 2 && nodes_[kids[0]].n == 0) return Home::PairWindow;
  return Home::Global;
}

std::uint64_t ExprContext::overflow_key(const std::uint32_t* kids, std::uint32_t n) {
  std::uint32_t first = 0, second = 0;  // the largest and second largest operand ids
  for (std::uint32_t i = 0; i < n; ++i) {
    if (kids[i] > first) {
      second = first;
      first = kids[i];
    } else if (kids[i] > second && kids[i] != first) {
      second = kids[i];
    }
  }
  // Bit 63 keeps these windows apart from those of leaf pairs (block ids
  // have at most 27 bits, so bits 59-62 are free for chain_key's level).
  return std::uint64_t(1) << 63 | std::uint64_t(first >> kAnchorShift) << 32 | (second >> kAnchorShift);
}

Expr ExprContext::intern_indexed(Op op, std::uint8_t aux, const std::uint32_t* kids, std::uint32_t n,
                                 std::uint32_t a, std::uint32_t b) {
  const std::size_t h = node_hash(op, aux, kids, n, a, b);

  auto same = [&](const Node& m) {
    if (m.op != op || m.aux != aux || m.n != n || m.b != b) return false;
    if (op == Op::Const) return constants_[m.a] == constants_[a];
    if (n == 0) return m.a == a;
    return std::equal(kids, kids + n, kids_.data() + m.a);
  };

  // Slots hold (upper hash bits << 32 | id): most mismatches are decided
  // without touching the node arrays (they are far larger than cache).
  const std::uint64_t tag = std::uint64_t(h >> 32) << 32;
  auto matches = [&](std::uint64_t e) {
    std::uint32_t id = std::uint32_t(e);
    // The slot holds the hash's upper half, hashes_ its lower: the whole hash.
    return (e & ~std::uint64_t(0xffffffffu)) == tag && hashes_[id] == std::uint32_t(h) && same(nodes_[id]);
  };
  auto hit = [&](std::uint64_t e) {
    if (op == Op::Const) constants_.pop_back();  // the caller's tentative entry
    return Expr{std::uint32_t(e)};
  };

  constexpr std::size_t kNone = ~std::size_t(0);
  std::size_t local_slot = kNone;  // in anchored_, or (pair_window) in memo_->pair_slots
  bool pair_window = false;
  auto scan = [&](const std::uint64_t* w, std::size_t base, std::uint32_t slots) -> std::uint64_t {
    for (std::uint32_t i = 0, s = std::uint32_t(h) & (slots - 1); i < slots; ++i, s = (s + 1) & (slots - 1)) {
      if (w[s] == kEmptySlot) {
        local_slot = base + s;
        return kEmptySlot;
      }
      if (matches(w[s])) return w[s];
    }
    return kEmptySlot;  // full: the next window of the chain, or the global table
  };
  const Home home = home_of(kids, n);
  std::uint64_t chain = 0;  // the key of its pair windows, if it has any
  bool has_chain = false;
  if (home == Home::Anchored) {
    const std::uint32_t anchor = *std::max_element(kids, kids + n);
    const std::size_t base = std::size_t(anchor >> kAnchorShift) * kWindowSlots;
    std::uint64_t e = scan(&anchored_[base], base, kWindowSlots);
    if (e != kEmptySlot) return hit(e);
    if (local_slot == kNone) chain = overflow_key(kids, n), has_chain = true;  // full
  } else if (home == Home::PairWindow) {
    chain = pair_key(kids), has_chain = true;
  }
  for (std::uint32_t level = 0; has_chain && local_slot == kNone && level < kPairLevels; ++level) {
    const std::uint32_t slots = pair_window_slots(level);
    const std::size_t base = pair_window_base(chain_key(chain, level), slots);
    std::uint64_t e = scan(&memo_->pair_slots[base], base, slots);
    if (e != kEmptySlot) return hit(e);
    pair_window = local_slot != kNone;
  }
  std::size_t mask = table_.size() - 1;
  std::size_t slot = h & mask;
  if (local_slot == kNone) {
    while (table_[slot] != kEmptySlot) {
      if (matches(table_[slot])) return hit(table_[slot]);
      slot = (slot + 1) & mask;
    }
  }
  const std::uint32_t id = append(op, aux, kids, n, a, b, h);
  if (local_slot != kNone) {
    (pair_window ? memo_->pair_slots[local_slot] : anchored_[local_slot]) = tag | id;
    return Expr{id};
  }
  table_[slot] = tag | id;
  note_global_insert();
  return Expr{id};
}

std::uint64_t ExprContext::pair_key(const std::uint32_t* kids) {
  return std::uint64_t(kids[0] >> kAnchorShift) << 32 | (kids[1] >> kAnchorShift);
}

// Level 0 is the chain's first window; a full one continues in the next.
std::uint64_t ExprContext::chain_key(std::uint64_t chain, std::uint32_t level) {
  return chain ^ std::uint64_t(level) << 59;
}

std::uint32_t ExprContext::pair_window_slots(std::uint32_t level) { return level == 0 ? kPairSlots0 : kWindowSlots; }

std::size_t ExprContext::pair_window_base(std::uint64_t key, std::uint32_t slots) {
  Memo& m = *memo_;
  // Consecutive products mostly share their window (a dot product's terms).
  if (m.last_window_valid && m.last_window_key == key) return m.last_window_base;
  const std::size_t fresh = m.pair_slots.size();  // a multiple of kPairSlots0
  const std::size_t base =
      m.pair_window.try_insert(key, std::uint32_t(fresh / kPairSlots0)).first * std::size_t(kPairSlots0);
  if (base == fresh) m.pair_slots.resize(fresh + slots, kEmptySlot);
  m.last_window_valid = true;
  m.last_window_key = key;
  m.last_window_base = base;
  return base;
}

// A new node, in no table yet.
std::uint32_t ExprContext::append(Op op, std::uint8_t aux, const std::uint32_t* kids, std::uint32_t n,
                                  std::uint32_t a, std::uint32_t b, std::size_t h) {
  if (nodes_.size() >= UINT32_MAX - 1) throw std::length_error("ExprContext: more than 2^32 nodes");
  Node node{op, aux, op == Op::NegInf || op == Op::PosInf, n, a, b};
  for (std::uint32_t i = 0; i < n && !node.has_inf; ++i) node.has_inf = nodes_[kids[i]].has_inf;
  if (n > 0) {
    node.a = std::uint32_t(kids_.size());
    kids_.append(kids, kids + n);
    // Count each distinct operand once.
    for (std::uint32_t i = 0; i < n; ++i) {
      bool seen = false;
      for (std::uint32_t j = 0; j < i && !seen; ++j) seen = kids[j] == kids[i];
      if (!seen && parents_[kids[i]] != kManyParents) ++parents_[kids[i]];
    }
  }
  std::uint32_t id = std::uint32_t(nodes_.size());
  nodes_.push_back(node);
  hashes_.push_back(std::uint32_t(h));
  parents_.push_back(0);
  // A window for the new id. Past a few thousand windows, filled an eighth
  // at a time, not doubled: filling touches every page (a page fault each),
  // and doubling filled up to twice the windows a run uses (the array's
  // capacity still doubles, in address space only). Small tables double: a
  // small kernel's context must stay small.
  if (nodes_.size() > (anchored_.size() / kWindowSlots) << kAnchorShift) {
    const std::size_t n = anchored_.size();
    anchored_.resize(n + std::min(n, std::max(n / 8, std::size_t(4096) * kWindowSlots)), kEmptySlot);
  }
  return id;
}

void ExprContext::note_global_insert() {
  ++global_count_;
  if (global_count_ * 2 <= table_.size()) return;  // keep the load factor under 1/2
  detail::GrowArray<std::uint64_t> bigger;
  bigger.assign(table_.size() * 2, kEmptySlot);
  std::size_t m = bigger.size() - 1;
  for (std::uint64_t e : table_) {
    if (e == kEmptySlot) continue;
    std::size_t s = hashes_[std::uint32_t(e)] & m;  // the lower half: tables stay under 2^32 slots
    while (bigger[s] != kEmptySlot) s = (s + 1) & m;
    bigger[s] = e;
  }
  table_.swap(bigger);
}

void ExprContext::place(std::uint32_t id) {
  const Node& node = nodes_[id];
  const std::uint32_t* kids = kids_.data() + node.a;
  const std::size_t h = hash(Expr{id});
  const std::uint64_t entry = std::uint64_t(h >> 32) << 32 | id;
  auto put = [&](std::uint64_t* w, std::uint32_t slots) {
    for (std::uint32_t i = 0, s = std::uint32_t(h) & (slots - 1); i < slots; ++i, s = (s + 1) & (slots - 1)) {
      if (w[s] == kEmptySlot) {
        w[s] = entry;
        return true;
      }
    }
    return false;
  };
  const Home home = home_of(kids, node.n);
  if (home == Home::Anchored &&
      put(&anchored_[std::size_t(*std::max_element(kids, kids + node.n) >> kAnchorShift) * kWindowSlots],
          kWindowSlots))
    return;
  if (home != Home::Global) {
    const std::uint64_t chain = home == Home::Anchored ? overflow_key(kids, node.n) : pair_key(kids);
    for (std::uint32_t level = 0; level < kPairLevels; ++level) {
      const std::uint32_t slots = pair_window_slots(level);
      if (put(&memo_->pair_slots[pair_window_base(chain_key(chain, level), slots)], slots)) return;
    }
  }
  std::size_t mask = table_.size() - 1, slot = h & mask;
  while (table_[slot] != kEmptySlot) slot = (slot + 1) & mask;
  table_[slot] = entry;
  note_global_insert();
}

void ExprContext::index_unindexed() {
  std::vector<std::uint32_t> ids;
  ids.swap(unindexed_);
  for (std::uint32_t id : ids) place(id);
}

// ---- leaves ----

Expr ExprContext::constant(const Rational& v) {
  constants_.push_back(v);
  return intern(Op::Const, 0, nullptr, 0, std::uint32_t(constants_.size() - 1), 0);
}

Expr ExprContext::neg_inf() { return neg_inf_; }
Expr ExprContext::pos_inf() { return pos_inf_; }
Expr ExprContext::ln2() { return ln2_; }

Expr ExprContext::symbol(const std::string& tensor, std::uint32_t index) {
  return intern(Op::Symbol, 0, nullptr, 0, name_id(tensor), index);
}

Expr ExprContext::int_symbol(const std::string& tensor, std::uint32_t index) {
  return intern(Op::Symbol, 1, nullptr, 0, name_id(tensor), index);
}

// ---- binary memo: repeated identical operations (every thread of a CTA
// computing the same running max) cost one hash lookup ----

namespace {
int memo_slot(Op op) {
  switch (op) {
    case Op::Add: return 0;
    case Op::Mul: return 1;
    case Op::Max: return 2;
    default: return 3;  // Min
  }
}
}  // namespace

bool ExprContext::memo_get(Op op, Expr a, Expr b, Expr* out) const {
  const std::uint32_t* r = memo_->table[memo_slot(op)].find(std::uint64_t(a.id) << 32 | b.id);  // exact key
  if (r == nullptr) return false;
  *out = Expr{*r};
  return true;
}

void ExprContext::memo_put(Op op, Expr a, Expr b, Expr r) {
  memo_->table[memo_slot(op)].insert(std::uint64_t(a.id) << 32 | b.id, r.id);
}

// ---- n-ary canonical forms ----

Expr ExprContext::nary(Op op, std::vector<std::uint32_t>& kids) {
  return intern(op, 0, kids.data(), std::uint32_t(kids.size()), 0, 0);
}

Expr ExprContext::add(const std::vector<Expr>& terms) {
  std::vector<std::uint32_t> kids;
  kids.reserve(terms.size() + 4);
  Rational sum(0);
  bool has_neg_inf = false, has_pos_inf = false;
  auto take = [&](Expr t) {
    switch (op(t)) {
      case Op::Const: sum += constant_value(t); break;
      case Op::NegInf: has_neg_inf = true; break;
      case Op::PosInf: has_pos_inf = true; break;
      default: kids.push_back(t.id);
    }
  };
  for (Expr t : terms) {
    if (op(t) == Op::Add && nodes_[t.id].n <= flatten_limit_) {
      for (Expr c : children(t)) take(c);
    } else {
      take(t);
    }
  }
  if (has_neg_inf != has_pos_inf) return has_neg_inf ? neg_inf_ : pos_inf_;
  if (has_neg_inf) {  // inf - inf: undefined; keep it visible rather than guess
    kids.push_back(neg_inf_.id);
    kids.push_back(pos_inf_.id);
  }
  // Combine like terms c1*t + c2*t (t = x - x is the common case: the first
  // step of an online max subtracts a value from itself). Most sums have
  // none: look for a repeated base first, without building coefficients.
  bool repeated = false;
  {
    std::uint32_t small[16];
    std::vector<std::uint32_t> big;
    std::uint32_t* bases = small;
    if (kids.size() > 16) {
      big.resize(kids.size());
      bases = big.data();
    }
    for (std::size_t i = 0; i < kids.size(); ++i) bases[i] = like_base(Expr{kids[i]});
    std::sort(bases, bases + kids.size());
    for (std::size_t i = 1; i < kids.size() && !repeated; ++i) repeated = bases[i] == bases[i - 1];
  }
  if (repeated) {
    std::vector<std::pair<std::uint32_t, Rational>> like;
    like.reserve(kids.size());
    for (std::uint32_t k : kids) {
      const Node& n = nodes_[k];
      if (n.op == Op::Mul && n.n == 2 && nodes_[kids_[n.a]].op == Op::Const)
        like.emplace_back(kids_[n.a + 1], constants_[nodes_[kids_[n.a]].a]);
      else if (n.op == Op::Mul && n.n == 2 && nodes_[kids_[n.a + 1]].op == Op::Const)
        like.emplace_back(kids_[n.a], constants_[nodes_[kids_[n.a + 1]].a]);
      else
        like.emplace_back(k, Rational(1));
    }
    std::sort(like.begin(), like.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    kids.clear();
    for (std::size_t i = 0; i < like.size();) {
      Rational c = like[i].second;
      std::size_t j = i + 1;
      while (j < like.size() && like[j].first == like[i].first) c += like[j++].second;
      if (!c.is_zero()) kids.push_back(c.is_one() ? like[i].first : mul(constant(c), Expr{like[i].first}).id);
      i = j;
    }
  }
  if (!sum.is_zero()) kids.push_back(constant(sum).id);
  if (kids.empty()) return zero_;
  if (kids.size() == 1) return Expr{kids[0]};
  std::sort(kids.begin(), kids.end());
  return nary(Op::Add, kids);
}

Expr ExprContext::mul(const std::vector<Expr>& factors) {
  std::vector<std::uint32_t> kids;
  kids.reserve(factors.size() + 4);
  Rational prod(1);
  bool has_inf = false;
  auto take = [&](Expr t) {
    switch (op(t)) {
      case Op::Const: prod *= constant_value(t); break;
      case Op::NegInf:
      case Op::PosInf: has_inf = true; kids.push_back(t.id); break;
      default: kids.push_back(t.id);
    }
  };
  for (Expr f : factors) {
    if (op(f) == Op::Mul && nodes_[f.id].n <= flatten_limit_) {
      for (Expr c : children(f)) take(c);
    } else {
      take(f);
    }
  }
  if (prod.is_zero() && !has_inf) return zero_;
  if (has_inf && !prod.is_zero()) {
    // An infinity times known nonzero constants (numbers, ln 2) is an
    // infinity: Triton's padding lanes compute 2^((-inf - m) * log2(e)),
    // which must be exp(-inf) = 0 for the sum they join to stay finite.
    bool known = true, negative = prod.sign() < 0;
    for (std::uint32_t k : kids) {
      const Op o = nodes_[k].op;
      if (o == Op::NegInf)
        negative = !negative;
      else if (o != Op::PosInf && k != ln2_.id)
        known = false;
    }
    if (known) return negative ? neg_inf_ : pos_inf_;
  }
  if (!prod.is_one()) kids.push_back(constant(prod).id);
  if (kids.empty()) return one_;
  if (kids.size() == 1) return Expr{kids[0]};
  std::sort(kids.begin(), kids.end());
  return nary(Op::Mul, kids);
}

// The binary forms take a fast path when there is nothing to canonicalize
// (two distinct non-constant operands, neither of the same kind, no like
// terms): a symbolic run builds millions of such nodes. Otherwise they go
// through the n-ary form, remembering the result when flattening was costly.
namespace {
inline bool leafish_for(Op self, Op o) {
  return o != self && o != Op::Const && o != Op::NegInf && o != Op::PosInf;
}
}  // namespace

// Whether the n-ary form would copy more than 8 operands out of `e`: only
// then is its result worth a memo entry. An operand over the flatten limit
// stays one operand, so with the default limit (8) nothing is memoized: the
// lookup, a cache miss into a table as large as the run, cost more than the
// bounded work it saved (3% of an attention kernel's symbolic run).
bool ExprContext::flattens_big(Op kind, Expr e) const {
  const std::uint32_t n = nodes_[e.id].n;
  return nodes_[e.id].op == kind && n > 8 && n <= flatten_limit_;
}

std::uint32_t ExprContext::like_base(Expr e) const {
  const Node& n = nodes_[e.id];
  if (n.op == Op::Mul && n.n == 2) {
    if (nodes_[kids_[n.a]].op == Op::Const) return kids_[n.a + 1];
    if (nodes_[kids_[n.a + 1]].op == Op::Const) return kids_[n.a];
  }
  return e.id;
}

// x joined to a short sum or product g of the same kind (x neither of that
// kind nor a constant or infinity): g's operands are already canonical, so
// the result is g's operands with x inserted in order, which is what the
// n-ary form would build, without its temporary vectors. Returns an invalid
// Expr when the case does not apply (see join_operand).
Expr ExprContext::insert_operand(Op kind, Expr x, Expr g) {
  const Node& gn = nodes_[g.id];
  if (gn.n >= 16) return Expr{};
  std::uint32_t kids[16];
  std::uint32_t n = gn.n;
  std::copy(kids_.data() + gn.a, kids_.data() + gn.a + n, kids);
  if (!join_operand(kind, kids, n, x)) return Expr{};
  return intern(kind, 0, kids, n, 0, 0);
}

// Inserts x into kids[0..n), the ascending operands of a sum or product, as
// the n-ary form would place it; false where the n-ary form would do more:
// flatten no further (n over the flatten limit; 16 slots), or, for a sum,
// combine x with a like term (c*t next to t).
bool ExprContext::join_operand(Op kind, std::uint32_t* kids, std::uint32_t& n, Expr x) const {
  if (n + 1 > 16 || n > flatten_limit_) return false;
  if (kind == Op::Add) {
    const std::uint32_t xb = like_base(x);
    for (std::uint32_t j = 0; j < n; ++j)
      if (like_base(Expr{kids[j]}) == xb) return false;
  }
  std::uint32_t i = n;
  for (; i > 0 && kids[i - 1] > x.id; --i) kids[i] = kids[i - 1];
  kids[i] = x.id;
  ++n;
  return true;
}

Expr ExprContext::add(Expr a, Expr b) {
  if (a.id > b.id) std::swap(a, b);  // commutative: one memo entry
  return memo_->cached(Op::Add, a, b, nodes_.size(), [&] { return add_uncached(a, b); });
}

Expr ExprContext::add_uncached(Expr a, Expr b) {
  const bool leaf_a = leafish_for(Op::Add, op(a)), leaf_b = leafish_for(Op::Add, op(b));
  if (leaf_a && leaf_b && like_base(a) != like_base(b)) {
    std::uint32_t kids[2] = {a.id, b.id};
    return intern(Op::Add, 0, kids, 2, 0, 0);
  }
  if (leaf_a != leaf_b && op(leaf_a ? b : a) == Op::Add) {
    Expr r = leaf_a ? insert_operand(Op::Add, a, b) : insert_operand(Op::Add, b, a);
    if (r.valid()) return r;
  }
  const bool costly = flattens_big(Op::Add, a) || flattens_big(Op::Add, b);
  Expr r;
  if (costly && memo_get(Op::Add, a, b, &r)) return r;
  r = add(std::vector<Expr>{a, b});
  if (costly) memo_put(Op::Add, a, b, r);
  return r;
}

// A running sum takes t in place where add(sum, t) would go through
// insert_operand (or add_uncached's case of two leaves): the node those
// make is the sorted operands, which the sum keeps; anything else is the
// add itself, on the sum interned.
void ExprContext::add_to(RunningSum& s, Expr t) {
  const bool leaf_t = leafish_for(Op::Add, op(t));
  add_term(s, t, leaf_t, leaf_t ? like_base(t) : 0);
}

// join_operand(Op::Add, s.kids, s.n, t), with the operands' like bases
// taken from s.bases (kept beside s.kids) instead of their nodes.
bool ExprContext::join_running(RunningSum& s, Expr t, std::uint32_t base_t) const {
  if (s.n + 1 > 16 || s.n > flatten_limit_) return false;
  for (std::uint32_t j = 0; j < s.n; ++j)
    if (s.bases[j] == base_t) return false;
  std::uint32_t i = s.n;
  for (; i > 0 && s.kids[i - 1] > t.id; --i) {
    s.kids[i] = s.kids[i - 1];
    s.bases[i] = s.bases[i - 1];
  }
  s.kids[i] = t.id;
  s.bases[i] = base_t;
  ++s.n;
  return true;
}

void ExprContext::add_term(RunningSum& s, Expr t, bool leaf_t, std::uint32_t base_t) {
  if (s.n > 0) {
    if (leaf_t && join_running(s, t, base_t)) return;
    s.acc = intern(Op::Add, 0, s.kids, s.n, 0, 0);
    s.n = 0;
  }
  const Expr acc = s.acc;
  // A sum over the flatten limit is one operand to the n-ary add, as a leaf
  // is (the chunks of a long chain).
  const bool leaf_acc =
      leafish_for(Op::Add, op(acc)) || (op(acc) == Op::Add && nodes_[acc.id].n > flatten_limit_);
  if (leaf_t && leaf_acc) {
    const std::uint32_t base_acc = like_base(acc);
    if (base_acc != base_t) {
      const bool acc_first = acc.id < t.id;
      s.kids[0] = acc_first ? acc.id : t.id;
      s.kids[1] = acc_first ? t.id : acc.id;
      s.bases[0] = acc_first ? base_acc : base_t;
      s.bases[1] = acc_first ? base_t : base_acc;
      s.n = 2;
      return;
    }
  } else if (leaf_t && op(acc) == Op::Add) {
    const Node& g = nodes_[acc.id];
    if (g.n < 16) {
      std::copy(kids_.data() + g.a, kids_.data() + g.a + g.n, s.kids);
      for (std::uint32_t j = 0; j < g.n; ++j) s.bases[j] = like_base(Expr{s.kids[j]});
      s.n = g.n;
      if (join_running(s, t, base_t)) return;
      s.n = 0;
    }
  }
  s.acc = add(acc, t);
}

// A product of two operands that leafish_for(Op::Mul) admits is the node
// mul_uncached interns first thing, and a term whose like base is itself
// (neither operand is a constant); everything else goes the general way.
// Skipping the memo changes no handle: it only remembers results.
void ExprContext::add_products(RunningSum& s, const Expr* a, std::size_t a_stride, const Expr* b,
                               std::size_t b_stride, std::size_t k) {
  for (std::size_t q = 0; q < k; ++q) {
    Expr x = a[q * a_stride], y = b[q * b_stride];
    if (x.id > y.id) std::swap(x, y);
    if (leafish_for(Op::Mul, op(x)) && leafish_for(Op::Mul, op(y))) {
      const std::uint32_t kids[2] = {x.id, y.id};
      const Expr t = intern(Op::Mul, 0, kids, 2, 0, 0);
      add_term(s, t, true, t.id);
    } else {
      add_to(s, mul(x, y));
    }
  }
}

Expr ExprContext::sum_of(RunningSum& s) {
  if (s.n > 0) {
    s.acc = intern(Op::Add, 0, s.kids, s.n, 0, 0);
    s.n = 0;
  }
  return s.acc;
}

Expr ExprContext::mul(Expr a, Expr b) {
  if (a.id > b.id) std::swap(a, b);
  return memo_->cached(Op::Mul, a, b, nodes_.size(), [&] { return mul_uncached(a, b); });
}

Expr ExprContext::mul_uncached(Expr a, Expr b) {
  bool const_a = op(a) == Op::Const, const_b = op(b) == Op::Const;
  bool plain_a = leafish_for(Op::Mul, op(a)), plain_b = leafish_for(Op::Mul, op(b));
  if ((plain_a && plain_b) || (const_a && plain_b && !constant_value(a).is_zero() && !constant_value(a).is_one()) ||
      (const_b && plain_a && !constant_value(b).is_zero() && !constant_value(b).is_one())) {
    std::uint32_t kids[2] = {a.id, b.id};
    return intern(Op::Mul, 0, kids, 2, 0, 0);
  }
  if (plain_a != plain_b && op(plain_a ? b : a) == Op::Mul) {
    Expr r = plain_a ? insert_operand(Op::Mul, a, b) : insert_operand(Op::Mul, b, a);
    if (r.valid()) return r;
  }
  const bool costly = flattens_big(Op::Mul, a) || flattens_big(Op::Mul, b);
  Expr r;
  if (costly && memo_get(Op::Mul, a, b, &r)) return r;
  r = mul(std::vector<Expr>{a, b});
  if (costly) memo_put(Op::Mul, a, b, r);
  return r;
}

Expr ExprContext::neg(Expr a) { return mul(minus_one_, a); }
Expr ExprContext::sub(Expr a, Expr b) { return add(a, neg(b)); }
Expr ExprContext::div(Expr a, Expr b) { return mul(a, pow(b, -1)); }

Expr ExprContext::pow(Expr base, std::int32_t k) {
  if (k == 0) return one_;
  if (k == 1) return base;
  if (op(base) == Op::Const) {
    const Rational& v = constant_value(base);
    if (!(v.is_zero() && k < 0)) return constant(v.pow(k));
  }
  if (op(base) == Op::Pow) {
    std::int64_t kk = std::int64_t(pow_exponent(base)) * k;
    if (kk >= INT32_MIN && kk <= INT32_MAX) return pow(children(base)[0], std::int32_t(kk));
  }
  std::uint32_t kid = base.id;
  return intern(Op::Pow, 0, &kid, 1, 0, std::uint32_t(k));
}

Expr ExprContext::exp(Expr a) {
  switch (op(a)) {
    case Op::NegInf: return zero_;
    case Op::PosInf: return pos_inf_;
    case Op::Const:
      if (constant_value(a).is_zero()) return one_;
      break;
    default: break;
  }
  std::uint32_t kid = a.id;
  return intern(Op::Exp, 0, &kid, 1, 0, 0);
}

Expr ExprContext::ex2(Expr a) {
  if (op(a) == Op::Const && constant_value(a).fits_int64()) {
    std::int64_t k = constant_value(a).to_int64();
    if (k >= -1024 && k <= 1024) return constant(Rational::pow2(int(k)));
  }
  return exp(mul(a, ln2_));
}

Expr ExprContext::max_min(Op kind, const std::vector<Expr>& args) {
  // max: -inf is neutral, +inf absorbs; min the other way round.
  const Op neutral = kind == Op::Max ? Op::NegInf : Op::PosInf;
  const Op absorbing = kind == Op::Max ? Op::PosInf : Op::NegInf;
  std::vector<std::uint32_t> kids;
  kids.reserve(args.size() + 4);
  bool have_const = false, absorbed = false;
  Rational best;
  auto take = [&](Expr t) {
    Op o = op(t);
    if (o == neutral) return;
    if (o == absorbing) {
      absorbed = true;
      return;
    }
    if (o == Op::Const) {
      const Rational& v = constant_value(t);
      if (!have_const || (kind == Op::Max ? v > best : v < best)) best = v;
      have_const = true;
      return;
    }
    kids.push_back(t.id);
  };
  for (Expr t : args) {
    if (op(t) == kind && nodes_[t.id].n <= flatten_limit_) {
      for (Expr c : children(t)) take(c);
    } else {
      take(t);
    }
  }
  if (absorbed) return Expr{kind == Op::Max ? pos_inf_ : neg_inf_};
  if (have_const) kids.push_back(constant(best).id);
  std::sort(kids.begin(), kids.end());
  kids.erase(std::unique(kids.begin(), kids.end()), kids.end());
  if (kids.empty()) return kind == Op::Max ? neg_inf_ : pos_inf_;
  if (kids.size() == 1) return Expr{kids[0]};
  return nary(kind, kids);
}

Expr ExprContext::max(const std::vector<Expr>& args) { return max_min(Op::Max, args); }
Expr ExprContext::min(const std::vector<Expr>& args) { return max_min(Op::Min, args); }

Expr ExprContext::max(Expr a, Expr b) {
  if (a.id > b.id) std::swap(a, b);
  Expr r;
  if (memo_get(Op::Max, a, b, &r)) return r;
  r = max_min(Op::Max, {a, b});
  memo_put(Op::Max, a, b, r);
  return r;
}

Expr ExprContext::min(Expr a, Expr b) {
  if (a.id > b.id) std::swap(a, b);
  Expr r;
  if (memo_get(Op::Min, a, b, &r)) return r;
  r = max_min(Op::Min, {a, b});
  memo_put(Op::Min, a, b, r);
  return r;
}

Expr ExprContext::select(Cmp cmp, Expr a, Expr b, Expr if_true, Expr if_false) {
  if (if_true == if_false) return if_true;
  if (op(a) == Op::Const && op(b) == Op::Const) {
    return apply_cmp(cmp, constant_value(a), constant_value(b)) ? if_true : if_false;
  }
  // Against an infinity the order is known: -inf < every finite value < +inf.
  // `m = -INFINITY; if (x > m) m = x;` starts with select(x > -inf, x, -inf).
  auto rank = [&](Expr e) {
    if (op(e) == Op::NegInf) return -1;
    if (op(e) == Op::PosInf) return 1;
    return may_be_infinite(e) ? 2 : 0;  // 2: unknown
  };
  int ra = rank(a), rb = rank(b);
  if (ra != 2 && rb != 2 && (ra != 0 || rb != 0)) return apply_cmp(cmp, ra, rb) ? if_true : if_false;
  // a > b ? a : b is max(a, b) over the reals (at a tie both sides agree), and
  // likewise for the other orders: a running max written with `if` becomes a
  // max chain, not a tree of case splits.
  bool greater = cmp == Cmp::GT || cmp == Cmp::GE, less = cmp == Cmp::LT || cmp == Cmp::LE;
  if ((greater || less) && ((if_true == a && if_false == b) || (if_true == b && if_false == a))) {
    bool pick_larger = greater == (if_true == a);
    return pick_larger ? max(a, b) : min(a, b);
  }
  std::uint32_t kids[4] = {a.id, b.id, if_true.id, if_false.id};
  return intern(Op::Select, std::uint8_t(cmp), kids, 4, 0, 0);
}

Expr ExprContext::func(const std::string& fname, const std::vector<Expr>& args) {
  std::vector<std::uint32_t> kids;
  kids.reserve(args.size());
  for (Expr a : args) kids.push_back(a.id);
  return intern(Op::Func, 0, kids.data(), std::uint32_t(kids.size()), 0, name_id(fname));
}

// ---- inspection ----

std::int32_t ExprContext::pow_exponent(Expr e) const { return std::int32_t(nodes_[e.id].b); }
Cmp ExprContext::select_cmp(Expr e) const { return Cmp(nodes_[e.id].aux); }
const std::string& ExprContext::name(Expr e) const {
  const Node& n = nodes_[e.id];
  return names_[n.op == Op::Func ? n.b : n.a];
}

Expr ExprContext::import_node(const ExprContext& other, std::uint32_t id, const std::vector<Expr>& map,
                              std::uint32_t before, std::vector<std::uint32_t>& kids) {
  const Expr e{id};
  const Node& n = other.nodes_[id];
  switch (n.op) {
    case Op::Const:
      constants_.push_back(other.constant_value(e));
      return intern_indexed(Op::Const, 0, nullptr, 0, std::uint32_t(constants_.size() - 1), 0);
    case Op::NegInf: return neg_inf_;
    case Op::PosInf: return pos_inf_;
    case Op::Named: return intern_indexed(Op::Named, 0, nullptr, 0, name_id(other.name(e)), 0);
    case Op::Symbol: return intern_indexed(Op::Symbol, n.aux, nullptr, 0, name_id(other.symbol_tensor(e)), n.b);
    default: break;
  }
  // Children come first in handle order, so they are mapped already. The
  // constructors' canonical forms depend on handles only through the order
  // of the operands of commutative operations, which are sorted again; the
  // mapping is one to one, so nothing else changes (no new like terms or
  // duplicates appear).
  kids.clear();
  bool fresh = false;  // an operand that this import created
  for (std::uint32_t i = 0; i < n.n; ++i) {
    kids.push_back(map[other.kids_[n.a + i]].id);
    fresh = fresh || kids.back() >= before;
  }
  if (n.op == Op::Add || n.op == Op::Mul || n.op == Op::Max || n.op == Op::Min) std::sort(kids.begin(), kids.end());
  const std::uint32_t b = n.op == Op::Func ? name_id(other.name(e)) : n.b;
  if (!fresh) return intern_indexed(n.op, n.aux, kids.data(), n.n, 0, b);  // it may exist here already
  // Nodes of `other` are distinct, and so are their images: a node with an
  // operand this import created exists nowhere else (nothing made before the
  // import can use that operand). Appending it without a lookup saves the
  // probes (cache misses in tables of millions of slots); it enters the
  // tables before the next lookup.
  const std::uint32_t added = append(n.op, n.aux, kids.data(), n.n, 0, b, node_hash(n.op, n.aux, kids.data(), n.n, 0, b));
  unindexed_.push_back(added);
  return Expr{added};
}

std::vector<Expr> ExprContext::import(const ExprContext& other) {
  if (!unindexed_.empty()) index_unindexed();  // a node of `other` may equal one of them
  std::vector<Expr> map(other.size());
  const std::uint32_t before = std::uint32_t(nodes_.size());  // nodes from here on are imported
  std::vector<std::uint32_t> kids;
  for (std::uint32_t id = 0; id < other.size(); ++id) map[id] = import_node(other, id, map, before, kids);
  return map;
}

namespace {

// The nodes of ctx below `roots` that skip(id) does not exclude, in handle
// order (operands before the nodes that use them).
template <class Skip>
std::vector<std::uint32_t> nodes_below(const ExprContext& ctx, const std::vector<Expr>& roots, Skip skip) {
  std::vector<std::uint32_t> todo, stack;
  std::vector<char> seen(ctx.size(), 0);
  for (Expr r : roots)
    if (r.valid() && !skip(r.id) && !seen[r.id]) {
      seen[r.id] = 1;
      stack.push_back(r.id);
    }
  while (!stack.empty()) {
    const std::uint32_t id = stack.back();
    stack.pop_back();
    todo.push_back(id);
    for (Expr c : ctx.children(Expr{id}))
      if (!skip(c.id) && !seen[c.id]) {
        seen[c.id] = 1;
        stack.push_back(c.id);
      }
  }
  std::sort(todo.begin(), todo.end());
  return todo;
}

}  // namespace

void ExprContext::import_below(const ExprContext& other, const std::vector<Expr>& roots, std::vector<Expr>& map) {
  if (map.size() < other.size()) map.resize(other.size());
  if (roots.empty()) return;  // (and no table of other's size to make)
  // The nodes to copy: below the roots, not copied before; operands first.
  const std::vector<std::uint32_t> todo = nodes_below(other, roots, [&](std::uint32_t id) { return map[id].valid(); });
  if (todo.empty()) return;
  if (!unindexed_.empty()) index_unindexed();
  const std::uint32_t before = std::uint32_t(nodes_.size());
  std::vector<std::uint32_t> kids;
  for (std::uint32_t id : todo) map[id] = import_node(other, id, map, before, kids);
}

std::optional<std::vector<Expr>> ExprContext::shift_symbols(
    const std::vector<Expr>& roots, const std::function<std::int64_t(const std::string&)>& shift) {
  // CTA classes call this once per (class, shift) group, on a store that
  // holds every representative's outputs and every group's images: a table
  // the size of the store made and cleared per call made a grid of many
  // groups quadratic (issue 31). The epoch-stamped slots of the Memo cost a
  // call what its roots reach (growing the table is paid once, by the
  // nodes that make the store grow).
  std::vector<std::uint64_t>& slots = memo_->shift_slots;
  if (slots.size() < nodes_.size()) slots.resize(nodes_.size(), 0);
  if (++memo_->shift_epoch == 0) {  // after 2^32 calls: stale stamps could match again
    std::fill(slots.begin(), slots.end(), 0);
    memo_->shift_epoch = 1;
  }
  const std::uint64_t stamp = std::uint64_t(memo_->shift_epoch) << 32;
  auto image = [&](std::uint32_t id) { return std::uint32_t(slots[id]); };
  std::vector<std::uint32_t> todo, stack;
  auto reach = [&](std::uint32_t id) {
    if ((slots[id] & ~std::uint64_t(UINT32_MAX)) == stamp) return;
    slots[id] = stamp | UINT32_MAX;
    stack.push_back(id);
  };
  for (Expr r : roots)
    if (r.valid()) reach(r.id);
  while (!stack.empty()) {
    const std::uint32_t id = stack.back();
    stack.pop_back();
    todo.push_back(id);
    for (Expr c : children(Expr{id})) reach(c.id);
  }
  // Operands have smaller ids than the nodes that use them: handle order
  // maps every operand before its users.
  std::sort(todo.begin(), todo.end());
  if (!unindexed_.empty()) index_unindexed();
  std::unordered_map<std::uint32_t, std::int64_t> moves;  // name id -> shift
  std::vector<std::uint32_t> kids;
  for (const std::uint32_t id : todo) {
    const Node n = nodes_[id];  // a copy: interning may move the table
    std::uint32_t to_id = id;
    if (n.op == Op::Symbol) {
      auto m = moves.find(n.a);
      if (m == moves.end()) m = moves.emplace(n.a, shift(names_[n.a])).first;
      const std::int64_t to = std::int64_t(n.b) + m->second;
      if (to < 0 || to > std::int64_t(UINT32_MAX - 1)) return std::nullopt;
      if (m->second != 0) to_id = intern_indexed(Op::Symbol, n.aux, nullptr, 0, n.a, std::uint32_t(to)).id;
    } else if (n.n != 0) {
      // A renaming is one to one, so no operands become equal or like
      // terms: the node is the same node on the images, its commutative
      // operands sorted again (as import_node does). Constants, infinities
      // and named values (no operands) are their own images.
      kids.clear();
      bool same = true;
      for (std::uint32_t i = 0; i < n.n; ++i) {
        const std::uint32_t k = kids_[n.a + i];
        kids.push_back(image(k));
        same = same && kids.back() == k;
      }
      if (!same) {
        if (n.op == Op::Add || n.op == Op::Mul || n.op == Op::Max || n.op == Op::Min) std::sort(kids.begin(), kids.end());
        to_id = intern_indexed(n.op, n.aux, kids.data(), n.n, 0, n.b).id;
      }
    }
    slots[id] = stamp | to_id;
  }
  std::vector<Expr> out;
  out.reserve(roots.size());
  for (Expr r : roots) out.push_back(r.valid() ? Expr{image(r.id)} : r);
  return out;
}

std::vector<Expr> ExprContext::symbols_of(const std::vector<Expr>& roots) const {
  std::vector<char> seen(nodes_.size(), 0);
  std::vector<std::uint32_t> stack;
  std::vector<Expr> out;
  for (Expr r : roots) stack.push_back(r.id);
  while (!stack.empty()) {
    std::uint32_t id = stack.back();
    stack.pop_back();
    if (seen[id]) continue;
    seen[id] = 1;
    if (nodes_[id].op == Op::Symbol) out.push_back(Expr{id});
    for (Expr c : children(Expr{id})) stack.push_back(c.id);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tileverify
