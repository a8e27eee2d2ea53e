#include "normalizer.hpp"

#include <algorithm>

namespace tileverify::detail {

void Normalizer::set_substitution(const std::unordered_map<std::uint32_t, std::uint32_t>* subst) {
  subst_ = subst;
  results_.clear();
}

bool Normalizer::atom_of(Expr e, std::uint32_t* atom) const {
  auto it = atom_of_node_.find(e.id);
  if (it == atom_of_node_.end()) return false;
  *atom = it->second;
  return true;
}

std::uint32_t Normalizer::atom_for(std::vector<std::uint32_t>&& key) {
  auto it = atoms_.find(key);
  if (it != atoms_.end()) return it->second;
  if (next_atom_ == UINT32_MAX) throw LimitHit{"more than 2^31 opaque atoms"};
  std::uint32_t a = next_atom_++;
  atoms_.emplace(std::move(key), a);
  return a;
}

// max(max(a, b), c) -> {a, b, c}, iteratively (running-max chains are long).
const std::vector<std::uint32_t>& Normalizer::flat_operands(Expr e) {
  auto it = flat_.find(e.id);
  if (it != flat_.end()) return it->second;
  Op op = ctx_.op(e);
  std::vector<std::uint32_t> args, stack{e.id};
  while (!stack.empty()) {
    std::uint32_t id = stack.back();
    stack.pop_back();
    for (Expr c : ctx_.children(Expr{id})) {
      if (ctx_.op(c) != op) {
        args.push_back(c.id);
        continue;
      }
      auto known = flat_.find(c.id);
      if (known != flat_.end())
        args.insert(args.end(), known->second.begin(), known->second.end());
      else
        stack.push_back(c.id);
    }
  }
  std::sort(args.begin(), args.end());
  args.erase(std::unique(args.begin(), args.end()), args.end());
  return flat_.emplace(e.id, std::move(args)).first->second;
}

void Normalizer::deps(Expr e, std::vector<std::uint32_t>& out) {
  out.clear();
  switch (ctx_.op(e)) {
    case Op::Max:
    case Op::Min:
    case Op::Select:
      if (subst_) {
        std::uint32_t atom;
        if (!atom_of(e, &atom)) throw LimitHit{"a max/min/select was not seen before the case split"};
        auto it = subst_->find(atom);
        if (it != subst_->end()) {
          out.push_back(it->second);
          return;
        }
      }
      if (ctx_.op(e) == Op::Select) {
        for (Expr c : ctx_.children(e)) out.push_back(c.id);
      } else {
        out = flat_operands(e);
      }
      break;
    case Op::Add:
    case Op::Mul:
    case Op::Pow:
    case Op::Exp:
    case Op::Func:
      for (Expr c : ctx_.children(e)) out.push_back(c.id);
      break;
    default: break;
  }
}

bool Normalizer::persistent(std::uint32_t id) const {
  return subst_ != nullptr || id == root_ || ctx_.parent_count(Expr{id}) > 1;
}

NF Normalizer::compute(Expr e, const std::vector<std::uint32_t>& dep_ids) {
  // Take an operand's form: move it out when this is its only user.
  auto take = [&](std::size_t i) -> NF {
    std::uint32_t id = dep_ids[i];
    auto it = results_.find(id);
    std::shared_ptr<const NF> p = it->second;
    bool last = !persistent(id) && std::count(dep_ids.begin(), dep_ids.end(), id) == 1;
    if (last) {
      results_.erase(it);
      if (p.use_count() == 1) return std::move(const_cast<NF&>(*p));
    }
    return *p;
  };
  auto key_of = [&](std::size_t i, bool exponent) { return alg_.nf_key(*results_.at(dep_ids[i]), exponent); };
  Op op = ctx_.op(e);
  switch (op) {
    case Op::Const: return alg_.nf_of(alg_.constant_term(ctx_.constant_value(e)));
    case Op::NegInf:
    case Op::PosInf: throw LimitHit{"an infinite value (-inf or +inf) reaches the compared expressions"};
    case Op::Named:
    case Op::Symbol: return alg_.nf_of(alg_.atom_term(e.id));
    case Op::Func: {
      const std::string& name = ctx_.name(e);
      std::vector<std::uint32_t> key{std::uint32_t(op), std::uint32_t(name.size())};
      for (char ch : name) key.push_back(std::uint8_t(ch));
      for (std::size_t i = 0; i < dep_ids.size(); ++i) key.push_back(key_of(i, false));
      return alg_.nf_of(alg_.atom_term(atom_for(std::move(key))));
    }
    case Op::Max:
    case Op::Min:
    case Op::Select: {
      std::uint32_t chosen_atom;
      if (subst_ && atom_of(e, &chosen_atom) && subst_->count(chosen_atom)) return take(0);
      std::vector<std::uint32_t> key{std::uint32_t(op)};
      std::vector<std::uint32_t> alts;
      if (op == Op::Select) {
        key.push_back(std::uint32_t(ctx_.select_cmp(e)));
        for (std::size_t i = 0; i < 4; ++i) key.push_back(key_of(i, false));
        alts = {dep_ids[2], dep_ids[3]};
      } else {
        std::vector<std::pair<std::uint32_t, std::uint32_t>> by_key;  // (form, operand)
        for (std::size_t i = 0; i < dep_ids.size(); ++i) by_key.emplace_back(key_of(i, false), dep_ids[i]);
        std::stable_sort(by_key.begin(), by_key.end(),
                         [](const auto& x, const auto& y) { return x.first < y.first; });
        for (std::size_t i = 0; i < by_key.size(); ++i) {
          if (i > 0 && by_key[i].first == by_key[i - 1].first) continue;
          key.push_back(by_key[i].first);
          alts.push_back(by_key[i].second);
        }
        if (alts.size() == 1) {  // every operand has the same form: max(a, a') = a
          auto pos = std::find(dep_ids.begin(), dep_ids.end(), alts[0]) - dep_ids.begin();
          return take(std::size_t(pos));
        }
      }
      std::uint32_t atom = atom_for(std::move(key));
      if (!subst_) {
        atom_of_node_[e.id] = atom;
        alternatives_.emplace(atom, std::move(alts));
        if (op == Op::Select) select_info_.emplace(atom, SelectInfo{ctx_.select_cmp(e), dep_ids[0], dep_ids[1]});
      }
      return alg_.nf_of(alg_.atom_term(atom));
    }
    case Op::Add: {
      std::vector<NF> parts;
      parts.reserve(dep_ids.size());
      for (std::size_t i = 0; i < dep_ids.size(); ++i) parts.push_back(take(i));
      return alg_.add_many(parts);
    }
    case Op::Mul: {
      std::vector<NF> parts;
      parts.reserve(dep_ids.size());
      for (std::size_t i = 0; i < dep_ids.size(); ++i) parts.push_back(take(i));
      // Single terms first: they only rescale the sums they multiply.
      std::stable_sort(parts.begin(), parts.end(), [](const NF& x, const NF& y) {
        return (x.num.single() && !x.den) > (y.num.single() && !y.den);
      });
      NF acc = std::move(parts[0]);
      for (std::size_t i = 1; i < parts.size(); ++i) acc = alg_.mul(std::move(acc), std::move(parts[i]));
      return acc;
    }
    case Op::Pow: return alg_.pow(take(0), ctx_.pow_exponent(e));
    case Op::Exp: {
      NF arg = take(0);
      Term t;
      if (alg_.exp_of(arg, &t)) return alg_.nf_of(t);
      // exp of a non-polynomial: an opaque atom, keyed by the exponent's form.
      std::vector<std::uint32_t> key{std::uint32_t(op), alg_.nf_key(arg, true)};
      return alg_.nf_of(alg_.atom_term(atom_for(std::move(key))));
    }
  }
  return NF{};
}

std::shared_ptr<const NF> Normalizer::run(Expr root) {
  if (ctx_.size() >= Algebra::kSyntheticAtom) throw LimitHit{"more than 2^31 expression nodes"};
  auto done = results_.find(root.id);
  if (done != results_.end()) return done->second;
  root_ = root.id;
  std::vector<std::pair<std::uint32_t, bool>> stack{{root.id, false}};
  std::vector<std::uint32_t> d;
  while (!stack.empty()) {
    auto [id, expanded] = stack.back();
    stack.pop_back();
    if (results_.count(id)) continue;
    Expr e{id};
    deps(e, d);
    bool missing = false;
    for (std::uint32_t c : d) missing = missing || !results_.count(c);
    if (missing) {  // operands first (again, if another user consumed one in between)
      stack.push_back({id, true});
      for (std::uint32_t c : d)
        if (!results_.count(c)) stack.push_back({c, false});
      continue;
    }
    (void)expanded;
    alg_.check_deadline();
    results_[id] = std::make_shared<const NF>(compute(e, d));
  }
  auto r = results_.at(root.id);
  // Outputs are asked for once; keep only what other nodes share.
  if (ctx_.parent_count(root) <= 1 && subst_ == nullptr) results_.erase(root.id);
  root_ = UINT32_MAX;
  return r;
}

}  // namespace tileverify::detail
