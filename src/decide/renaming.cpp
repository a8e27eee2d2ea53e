#include "renaming.hpp"

#include <algorithm>
#include <vector>
#include <utility>

namespace tileverify::detail {

namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  return h;
}

// A 64-bit hash folded into the 32 bits a shape is kept in, never 0 (0: not
// computed). Shapes only pick candidates for the exact walk, so a collision
// costs a failed walk, nothing else; and half the bytes are half the pages
// of a table per context of millions of nodes.
std::uint32_t fold(std::uint64_t h) {
  const std::uint32_t f = std::uint32_t(h ^ (h >> 32));
  return f != 0 ? f : 1;
}

// Fills memo[id] for root and every node below it, children first; value(e)
// may read its children's entries and must not return 0 (0: not computed).
template <class F>
void fill_bottom_up(const ExprContext& ctx, std::vector<std::uint32_t>& memo, Expr root, F value) {
  if (root.id < memo.size() && memo[root.id]) return;  // most calls: no stack to make
  if (memo.size() < ctx.size()) memo.resize(ctx.size(), 0);
  std::vector<std::pair<std::uint32_t, bool>> stack{{root.id, false}};
  while (!stack.empty()) {
    auto [id, ready] = stack.back();
    stack.pop_back();
    if (memo[id]) continue;
    Expr e{id};
    if (!ready) {
      stack.push_back({id, true});
      for (Expr c : ctx.children(e))
        if (!memo[c.id]) stack.push_back({c.id, false});
      continue;
    }
    memo[id] = std::uint32_t(value(e));
  }
}

}  // namespace

// e's shape from its operands' shapes; 0 when one of them is not computed.
std::uint64_t RenamingMatcher::shape_of(Expr e) {
  const Op op = ctx_.op(e);
  std::uint64_t h = mix(0x51ED27u, std::uint64_t(op));
  switch (op) {
    case Op::Const: h = mix(h, ctx_.constant_value(e).hash()); break;
    case Op::Symbol:
      h = mix(h, tensor_hash(e));
      h = mix(h, ctx_.is_integer_symbol(e));
      break;
    case Op::Pow: h = mix(h, std::uint64_t(std::int64_t(ctx_.pow_exponent(e)))); break;
    case Op::Select: h = mix(h, std::uint64_t(ctx_.select_cmp(e))); break;
    case Op::Func: h = mix(h, std::hash<std::string>()(ctx_.name(e))); break;
    default: break;
  }
  ExprRange kids = ctx_.children(e);
  if (op == Op::Add || op == Op::Mul || op == Op::Max || op == Op::Min) {
    // Independent of the operands' order: renaming inputs changes handles,
    // and so the order in which these operations keep their operands. A sum
    // of strongly mixed operand shapes is a multiset hash; the lockstep
    // walk, not the hash, decides.
    std::uint64_t sum = 0;
    for (Expr c : kids) {
      std::uint64_t k = shape_[c.id];
      if (k == 0) return 0;
      k *= 0x9E3779B97F4A7C15ull;
      k ^= k >> 32;
      sum += k * 0xD6E8FEB86659FD93ull;
    }
    h = mix(mix(h, kids.size()), sum);
  } else {
    for (Expr c : kids) {
      const std::uint64_t k = shape_[c.id];
      if (k == 0) return 0;
      h = mix(h, k);
    }
  }
  return fold(h);
}

std::uint64_t RenamingMatcher::shape(Expr root) {
  fill_bottom_up(ctx_, shape_, root, [&](Expr e) { return shape_of(e); });
  return shape_[root.id];
}

void RenamingMatcher::shapes_below(std::uint32_t end) {
  // Room for every node: shape() and tensors() size their tables to the
  // context, and growing them later copies tens of MB.
  if (shape_.size() < ctx_.size()) shape_.resize(ctx_.size(), 0);
  if (tensors_.size() < ctx_.size()) tensors_.resize(ctx_.size(), 0);
  for (std::uint32_t id = 0; id < end; ++id) {
    // A node nothing uses is below no output, unless it is one (shape() and
    // tensors() compute those on demand). Two in five nodes of a symbolic
    // run are such: the partial sums a sum of up to eight operands passes
    // through, each copying the operands so far (half of all operand lists).
    if (ctx_.parent_count(Expr{id}) == 0) continue;
    // Operands are made before the nodes that use them, so their shapes and
    // masks are in already; the fallbacks keep this right for any order.
    if (shape_[id] == 0) {
      const std::uint64_t h = shape_of(Expr{id});
      if (h != 0)
        shape_[id] = std::uint32_t(h);
      else
        shape(Expr{id});
    }
    if (tensors_[id] == 0) {
      const std::uint64_t m = tensor_mask_of(Expr{id});
      if (m != 0)
        tensors_[id] = std::uint32_t(m);
      else
        tensors(Expr{id});
    }
  }
}

std::uint64_t RenamingMatcher::known_shape(std::uint32_t id) {
  if (id < shape_.size() && shape_[id] != 0) return shape_[id];
  if (shapes_from_ != nullptr && id < shapes_from_->shape_.size() && shapes_from_->shape_[id] != 0)
    return shapes_from_->shape_[id];
  return shape(Expr{id});
}

bool RenamingMatcher::same_shapes_in_order(ExprRange cx, ExprRange cy) {
  for (std::uint32_t i = 0; i < cx.size(); ++i) {
    const Expr x = cx[i], y = cy[i];
    if (x == y) continue;
    // Decided from the nodes where possible: the walk reads them next anyway
    // (settle), while the shape table is one more cache miss per operand.
    // A shape hashes the operation, and a symbol's only its tensor and kind.
    const Op op = ctx_.op(x);
    if (op != ctx_.op(y)) return false;
    if (op == Op::Symbol) {
      if (ctx_.symbol_tensor_id(x) != ctx_.symbol_tensor_id(y) || ctx_.is_integer_symbol(x) != ctx_.is_integer_symbol(y))
        return false;
      continue;
    }
    if (quick_) {
      // Only what the node itself says (see renames()).
      if (op == Op::Const || ctx_.children(x).size() != ctx_.children(y).size()) return false;
      continue;
    }
    if (known_shape(x.id) != known_shape(y.id)) return false;
  }
  return true;
}

bool RenamingMatcher::pair_by_shape(ExprRange cx, ExprRange cy) {
  sx_.clear();
  sy_.clear();
  for (std::uint32_t i = 0; i < cx.size(); ++i) {
    sx_.emplace_back(known_shape(cx[i].id), i);
    sy_.emplace_back(known_shape(cy[i].id), i);
  }
  std::sort(sx_.begin(), sx_.end());
  std::sort(sy_.begin(), sy_.end());
  for (std::size_t i = 0; i < sx_.size(); ++i)
    if (sx_[i].first != sy_[i].first) return false;
  return true;
}

std::uint32_t TensorBits::id(const std::string& tensor) {
  std::lock_guard<std::mutex> lock(mutex_);
  return index_.emplace(tensor, unsigned(index_.size())).first->second;
}

// 0 is a valid mask (no symbols), so masks are stored with bit 31 set,
// which is never a tensor's bit (TensorBits::bit_of gives 0 to 30).
constexpr std::uint64_t kTensorsDone = std::uint64_t(1) << 31;

std::uint64_t RenamingMatcher::tensor_mask_of(Expr e) {
  std::uint64_t m = 0;
  if (ctx_.op(e) == Op::Symbol) m = std::uint64_t(1) << TensorBits::bit_of(tensor_id(e));
  for (Expr c : ctx_.children(e)) {
    if (c.id >= tensors_.size() || tensors_[c.id] == 0) return 0;
    m |= tensors_[c.id];
  }
  return m | kTensorsDone;
}

std::uint64_t RenamingMatcher::tensors(Expr root) {
  if (root.id < tensors_.size() && tensors_[root.id] != 0) return tensors_[root.id] & ~kTensorsDone;
  // The sweep's masks (shapes_below), shared by the matchers of all threads.
  if (shapes_from_ != nullptr && root.id < shapes_from_->tensors_.size() && shapes_from_->tensors_[root.id] != 0)
    return shapes_from_->tensors_[root.id] & ~kTensorsDone;
  fill_bottom_up(ctx_, tensors_, root, [&](Expr e) { return tensor_mask_of(e); });
  return tensors_[root.id] & ~kTensorsDone;
}

// Per tensor name of this context, looked up once (a sweep meets every
// symbol: hashing its name string each time was a fifth of the sweep).
RenamingMatcher::TensorInfo& RenamingMatcher::tensor_info(Expr symbol) {
  const std::uint32_t name = ctx_.symbol_tensor_id(symbol);
  if (name >= tensor_info_.size()) tensor_info_.resize(name + 1);
  TensorInfo& t = tensor_info_[name];
  if (!t.known) {
    const std::string& s = ctx_.symbol_tensor(symbol);
    t = TensorInfo{bits_.id(s), std::hash<std::string>()(s), true};
  }
  return t;
}

std::uint64_t RenamingMatcher::key(Expr symbol) {
  // Read from the node, which the walk has just read: a table from handles
  // to keys cost a cache miss per symbol, and filling it interned every
  // symbol of the second context into the first.
  return std::uint64_t(tensor_id(symbol)) << 33 | std::uint64_t(ctx_.is_integer_symbol(symbol)) << 32 |
         ctx_.symbol_index(symbol);
}

bool renames(RenamingMatcher& ma, Expr a1, Expr a2, RenamingMatcher& mb, Expr b1, Expr b2, Substitution& s) {
  // First with operands paired by position wherever each pair agrees in
  // what its nodes say (operation, operand count, a symbol's tensor): that
  // reads no shapes, a cache miss per operand. Where a renaming reorders
  // operands that look alike that way (two products), the walk fails and
  // is repeated with shapes. Any pairing that succeeds is a proof.
  for (bool quick : {true, false}) {
    s.reset();
    ma.begin(quick);
    mb.begin(quick);
    if (ma.walk(a1, a2, s) && mb.walk(b1, b2, s))
      return ma.fixes(s.moved) && (&ma == &mb || mb.fixes(s.moved));
    // A shared subtree holding a symbol that moves (every output of a
    // softmax row shares its denominator) is no mismatch of operand order:
    // not worth a second walk.
    if (ma.conflict() || mb.conflict()) return false;
  }
  return false;
}

bool RenamingMatcher::walk(Expr x1, Expr x2, Substitution& s) {
  // One lockstep walk. Operands of sums, products, max and min are paired
  // by position where their shapes agree position by position, and by shape
  // where they do not (a renaming that reorders them). Retrying a failed
  // positional walk by shape walked an attention row twice.
  //
  // Maps kept across calls (reset, not freed): decide_all calls this once
  // per output, on walks of thousands of nodes.
  FlatMap64& visited = visited_;  // since begin(): walks of one pair share it
  auto bind = [&](std::uint32_t u, std::uint32_t v) {
    // A substitution: each symbol gets one image (two symbols may get the
    // same one: an identity stays an identity under any substitution). The
    // caller has checked that v is of u's tensor and kind.
    const std::uint32_t image_index = ctx_.symbol_index(Expr{v});
    auto [image, added] = s.sigma.try_insert(key(Expr{u}), image_index);
    if (added && image_index != ctx_.symbol_index(Expr{u})) {
      s.moved |= tensors(Expr{u});
      if (fixed_mask_ & s.moved) return !(conflict_ = true);
    }
    return image == image_index;
  };
  // An operand pair is settled where it is found when it is one node on
  // both sides (left as it is: the substitution must fix it, so it must hold
  // no tensor that moves, now or by a later binding) or two symbols (a
  // binding); other pairs go on the stack. Half the pairs of an attention
  // output are of the first two kinds.
  std::vector<std::pair<std::uint32_t, std::uint32_t>>& stack = stack_;
  stack.clear();
  auto settle = [&](std::uint32_t u, std::uint32_t v) {
    if (u == v) {
      const std::uint64_t m = tensors(Expr{u});
      if (m & s.moved) return !(conflict_ = true);
      fixed_mask_ |= m;
      return true;
    }
    const Expr x{u}, y{v};
    if (ctx_.op(x) != Op::Symbol) {
      stack.push_back({u, v});
      return true;
    }
    return ctx_.op(y) == Op::Symbol && ctx_.is_integer_symbol(x) == ctx_.is_integer_symbol(y) &&
           ctx_.symbol_tensor_id(x) == ctx_.symbol_tensor_id(y) && bind(u, v);
  };
  if (!settle(x1.id, x2.id)) return false;
  while (!stack.empty()) {
    auto [u, v] = stack.back();
    stack.pop_back();
    Expr x{u}, y{v};
    const Op op = ctx_.op(x);
    if (op != ctx_.op(y)) return false;
    switch (op) {
      case Op::Const:  // interned: different nodes are different values
      case Op::NegInf:
      case Op::PosInf:
      case Op::Named: return false;
      case Op::Pow:
        if (ctx_.pow_exponent(x) != ctx_.pow_exponent(y)) return false;
        break;
      case Op::Select:
        if (ctx_.select_cmp(x) != ctx_.select_cmp(y)) return false;
        break;
      case Op::Func:
        if (ctx_.name(x) != ctx_.name(y)) return false;
        break;
      default: break;
    }
    ExprRange cx = ctx_.children(x), cy = ctx_.children(y);
    if (cx.size() != cy.size()) return false;
    // A pair reached again is expanded again unless it is remembered. That
    // cannot happen to a pair of nodes with one user each (reached only from
    // the pair of those users, expanded once: below, each distinct operand
    // pair is settled once), and costs no more than remembering for a pair
    // over leaves (a product of two inputs: remembering it is a cache miss in
    // a table of a whole attention row). The users counted are all users in
    // the context: in a long sum, each product is an operand of every partial
    // sum of its chunk, most of which no output uses.
    //
    // Likewise for a pair whose operands are each a leaf or one node on both
    // sides (a product p_j * v[j][d] of an attention output against
    // p_j * v[j][d'], sharing p_j): expanding it again settles the same
    // pairs, at the cost of reading its operands.
    bool over_leaves = true;
    for (std::uint32_t i = 0; i < cx.size() && over_leaves; ++i)
      over_leaves = cx[i] == cy[i] || ctx_.children(cx[i]).size() == 0;
    if (!over_leaves && (ctx_.parent_count(x) > 1 || ctx_.parent_count(y) > 1) &&
        !visited.try_insert(std::uint64_t(u) << 32 | v, 1).second)
      continue;
    // Each distinct operand pair once (x * x, select(a > b, a, c)). The
    // operands of sums, products, max and min are sorted on both sides (by
    // handle, or here by shape and then position), so a repeated pair is
    // next to its first occurrence.
    const bool sorted = op == Op::Add || op == Op::Mul || op == Op::Max || op == Op::Min;
    if (sorted && cx.size() > 1 && !same_shapes_in_order(cx, cy)) {
      // The renaming reorders these operands (they are kept in handle
      // order): pair them by shape. Where the shapes agree position by
      // position, that pairing is the positional one, taken below.
      if (!pair_by_shape(cx, cy)) return false;
      for (std::size_t i = 0; i < sx_.size(); ++i) {
        const std::uint32_t p = cx[sx_[i].second].id, q = cy[sy_[i].second].id;
        if (i > 0 && p == cx[sx_[i - 1].second].id && q == cy[sy_[i - 1].second].id) continue;
        if (!settle(p, q)) return false;
      }
      continue;
    }
    for (std::size_t i = 0; i < cx.size(); ++i) {
      bool repeated = false;
      for (std::size_t j = sorted && i > 0 ? i - 1 : 0; j < i && !repeated; ++j)
        repeated = cx[j] == cx[i] && cy[j] == cy[i];
      if (!repeated && !settle(cx[i].id, cy[i].id)) return false;
    }
  }
  return true;
}

}  // namespace tileverify::detail
