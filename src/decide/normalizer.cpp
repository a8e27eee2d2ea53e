#include "normalizer.hpp"

#include <algorithm>

namespace tileverify::detail {

void Normalizer::set_substitution(const std::unordered_map<std::uint32_t, std::uint32_t>* subst) {
  subst_ = subst;
  results_.clear();
}

const std::vector<std::uint32_t>& Normalizer::flat_args(Expr e) { return args_of_rep_.at(atom_of(e)); }

std::uint32_t Normalizer::atom_of(Expr e) {
  Op op = ctx_.op(e);
  if (op != Op::Max && op != Op::Min) return e.id;
  auto it = rep_of_.find(e.id);
  if (it != rep_of_.end()) return it->second;
  // Flatten through nested nodes of the same kind (iteratively: chains are long).
  std::vector<std::uint32_t> args, stack{e.id};
  std::vector<std::uint32_t> seen;
  while (!stack.empty()) {
    std::uint32_t id = stack.back();
    stack.pop_back();
    for (Expr c : ctx_.children(Expr{id})) {
      if (ctx_.op(c) != op) {
        args.push_back(c.id);
        continue;
      }
      auto known = rep_of_.find(c.id);
      if (known != rep_of_.end()) {
        const auto& a = args_of_rep_[known->second];
        args.insert(args.end(), a.begin(), a.end());
      } else {
        stack.push_back(c.id);
      }
    }
  }
  std::sort(args.begin(), args.end());
  args.erase(std::unique(args.begin(), args.end()), args.end());
  std::vector<std::uint32_t> key;
  key.reserve(args.size() + 1);
  key.push_back(std::uint32_t(op));
  key.insert(key.end(), args.begin(), args.end());
  auto [kit, inserted] = keys_.emplace(std::move(key), e.id);
  std::uint32_t rep = kit->second;
  if (inserted) args_of_rep_.emplace(rep, std::move(args));
  rep_of_.emplace(e.id, rep);
  return rep;
}

void Normalizer::deps(Expr e, std::vector<std::uint32_t>& out) {
  out.clear();
  switch (ctx_.op(e)) {
    case Op::Add:
    case Op::Mul:
    case Op::Pow:
    case Op::Exp:
      for (Expr c : ctx_.children(e)) out.push_back(c.id);
      break;
    case Op::Max:
    case Op::Min:
      if (subst_) {
        auto it = subst_->find(atom_of(e));
        if (it != subst_->end()) out.push_back(it->second);
      }
      break;
    case Op::Select:
      if (subst_) {
        auto it = subst_->find(e.id);
        if (it != subst_->end()) out.push_back(it->second);
      }
      break;
    default: break;
  }
}

bool Normalizer::persistent(std::uint32_t id) const {
  return subst_ != nullptr || id == root_ || ctx_.parent_count(Expr{id}) > 1;
}

NF Normalizer::compute(Expr e, const std::vector<std::uint32_t>& dep_ids) {
  // Take each operand's form: move it out when this is its only user.
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
  switch (ctx_.op(e)) {
    case Op::Const: return alg_.nf_of(alg_.constant_term(ctx_.constant_value(e)));
    case Op::NegInf:
    case Op::PosInf: throw LimitHit{"an infinite value (-inf or +inf) reaches the compared expressions"};
    case Op::Named:
    case Op::Symbol:
    case Op::Func: return alg_.nf_of(alg_.atom_term(e.id));
    case Op::Max:
    case Op::Min:
      if (!dep_ids.empty()) return take(0);
      return alg_.nf_of(alg_.atom_term(atom_of(e)));
    case Op::Select:
      if (!dep_ids.empty()) return take(0);
      return alg_.nf_of(alg_.atom_term(e.id));
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
      return alg_.nf_of(alg_.atom_term(e.id));  // exp of a non-polynomial: an opaque atom
    }
  }
  return NF{};
}

std::shared_ptr<const NF> Normalizer::run(Expr root) {
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
    if (!expanded) {
      stack.push_back({id, true});
      for (std::uint32_t c : d)
        if (!results_.count(c)) stack.push_back({c, false});
      continue;
    }
    bool missing = false;
    for (std::uint32_t c : d) missing = missing || !results_.count(c);
    if (missing) {  // an operand was consumed by another user in between: redo it
      stack.push_back({id, true});
      for (std::uint32_t c : d)
        if (!results_.count(c)) stack.push_back({c, false});
      continue;
    }
    alg_.check_deadline();
    results_[id] = std::make_shared<const NF>(compute(e, d));
  }
  auto r = results_.at(root.id);
  if (!persistent(root.id) || ctx_.parent_count(root) <= 1) {
    // Outputs are asked for once; keep only what other nodes share.
    if (ctx_.parent_count(root) <= 1 && subst_ == nullptr) results_.erase(root.id);
  }
  root_ = UINT32_MAX;
  return r;
}

}  // namespace tileverify::detail
