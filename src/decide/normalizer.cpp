#include "normalizer.hpp"

#include <algorithm>

namespace tileverify::detail {

void Normalizer::set_substitution(const std::unordered_map<std::uint32_t, std::uint32_t>* subst) {
  subst_ = subst;
  results_.clear();
  compact_results_.clear();
}

bool Normalizer::atom_of(Expr e, std::uint32_t* atom) const {
  const std::uint32_t* a = atom_of_node_.find(e.id);
  if (!a) return false;
  *atom = *a;
  return true;
}

std::uint32_t Normalizer::atom_for(std::vector<std::uint32_t>&& key) {
  const std::size_t known = atom_keys_.count();
  const std::uint32_t k = atom_keys_.intern(key.data(), key.size());
  // id 0 is the empty sequence, which no key is: key id k is atom number k - 1
  if (k - 1 >= UINT32_MAX - Algebra::kSyntheticAtom) throw LimitHit{"more than 2^31 opaque atoms"};
  if (k == known) atom_info_.emplace_back();  // a new key
  return Algebra::kSyntheticAtom + (k - 1);
}

const std::vector<std::uint32_t>& Normalizer::operands(std::uint32_t atom) const {
  static const std::vector<std::uint32_t> none;
  const AtomInfo* a = info(atom);
  return a ? a->operands : none;
}

void Normalizer::atoms_in(const NF& f, std::vector<std::uint32_t>& out) const {
  auto sum = [&](const Sum& s) {
    auto term = [&](const Term& t) {
      std::size_t n = 0;
      const MonoEntry* me = alg_.mono_entries(t.mono, &n);
      for (std::size_t i = 0; i < n; ++i) out.push_back(me[i].atom);
      const PolyEntry* pe = alg_.poly_entries(t.exp, &n);
      for (std::size_t i = 0; i < n; ++i) {
        std::size_t m = 0;
        const MonoEntry* q = alg_.mono_entries(pe[i].mono, &m);
        for (std::size_t j = 0; j < m; ++j) out.push_back(q[j].atom);
      }
    };
    term(s.scale);
    for (const Term& t : s.terms) term(t);
  };
  sum(f.num);
  if (f.den) sum(f.den->sum);
}

std::vector<std::uint32_t> Normalizer::split_atoms(Expr a, Expr b) {
  std::vector<std::uint32_t> found, work, seen_expr{a.id, b.id};
  std::unordered_map<std::uint32_t, bool> seen_atom, seen_node{{a.id, true}, {b.id, true}};
  std::vector<std::uint32_t> exprs{a.id, b.id};
  while (!exprs.empty()) {
    std::uint32_t id = exprs.back();
    exprs.pop_back();
    work.clear();
    // the operands of functions and lets are read as compact forms (their
    // plain forms are what compact forms avoid)
    const bool compact = id >= Algebra::kSyntheticAtom;
    if (compact) id -= Algebra::kSyntheticAtom;
    atoms_in(*run_in(Expr{id}, compact), work);
    for (std::size_t w = 0; w < work.size(); ++w) {
      const std::uint32_t at = work[w];
      if (at < Algebra::kSyntheticAtom || seen_atom[at]) continue;
      seen_atom[at] = true;
      if (splittable(at)) found.push_back(at);
      if (auto def = let_defs_.find(at); def != let_defs_.end())
        work.insert(work.end(), def->second.support.begin(), def->second.support.end());
      const AtomInfo* ai = info(at);
      const std::uint32_t tag = ai && ai->compact_operands ? Algebra::kSyntheticAtom : 0;
      for (std::uint32_t op : operands(at))
        if (!seen_node[op | tag]) {
          seen_node[op | tag] = true;
          exprs.push_back(op | tag);
        }
    }
  }
  return found;
}

Normalizer::Bounds Normalizer::bounds(Expr e, int depth) {
  // Deep expressions are given no bound rather than walked: a bound only
  // removes work, so missing one is never wrong.
  if (depth > 64) return {};
  if (auto it = bounds_memo_.find(e.id); it != bounds_memo_.end()) return it->second;
  Bounds b;
  const auto kids = ctx_.children(e);
  switch (ctx_.op(e)) {
    case Op::Const: b.lo = b.hi = ctx_.constant_value(e); break;
    case Op::Symbol: {
      const auto& ranges = alg_.limits().input_ranges;
      auto [it, fresh] = range_of_tensor_.try_emplace(ctx_.symbol_tensor_id(e), -1);
      if (fresh)
        for (std::size_t i = 0; i < ranges.size(); ++i)
          if (ranges[i].tensor == ctx_.symbol_tensor(e)) it->second = int(i);
      if (it->second >= 0) {
        b.lo = ranges[std::size_t(it->second)].lo;
        b.hi = ranges[std::size_t(it->second)].hi;
      }
      break;
    }
    case Op::Exp: b.lo = Rational(0); break;  // e^h > 0
    case Op::Add: {
      // a sum of bounded values is bounded by the sum of the bounds (below
      // -FLT_MAX for two f32 inputs: max(x + y, -FLT_MAX) is not x + y)
      b.lo = b.hi = Rational(0);
      for (Expr k : kids) {
        Bounds kb = bounds(k, depth + 1);
        if (b.lo) b.lo = kb.lo ? std::optional<Rational>(*b.lo + *kb.lo) : std::nullopt;
        if (b.hi) b.hi = kb.hi ? std::optional<Rational>(*b.hi + *kb.hi) : std::nullopt;
      }
      break;
    }
    case Op::Mul: {
      // a constant times one bounded value
      std::optional<Rational> c = Rational(1);
      Bounds v;
      int values = 0;
      for (Expr k : kids) {
        if (ctx_.op(k) == Op::Const) {
          c = *c * ctx_.constant_value(k);
        } else {
          v = bounds(k, depth + 1);
          ++values;
        }
      }
      if (values != 1) break;
      if (*c >= Rational(0)) {
        if (v.lo) b.lo = *c * *v.lo;
        if (v.hi) b.hi = *c * *v.hi;
      } else {
        if (v.hi) b.lo = *c * *v.hi;
        if (v.lo) b.hi = *c * *v.lo;
      }
      break;
    }
    case Op::Max:
    case Op::Min: {
      // max: at least each operand's lower bound; at most the largest upper
      // bound, if every operand has one (min the other way round)
      const bool mx = ctx_.op(e) == Op::Max;
      std::optional<Rational> any, all;
      bool all_known = true;
      for (Expr k : kids) {
        Bounds kb = bounds(k, depth + 1);
        const std::optional<Rational>& one = mx ? kb.lo : kb.hi;
        const std::optional<Rational>& every = mx ? kb.hi : kb.lo;
        if (one && (!any || (mx ? *one > *any : *one < *any))) any = one;
        if (!every) all_known = false;
        else if (!all || (mx ? *every > *all : *every < *all)) all = every;
      }
      (mx ? b.lo : b.hi) = any;
      if (all_known) (mx ? b.hi : b.lo) = all;
      break;
    }
    case Op::Select: {
      const Bounds t = bounds(kids[2], depth + 1), f = bounds(kids[3], depth + 1);
      if (t.lo && f.lo) b.lo = std::min(*t.lo, *f.lo);
      if (t.hi && f.hi) b.hi = std::max(*t.hi, *f.hi);
      break;
    }
    default: break;
  }
  bounds_memo_.emplace(e.id, b);
  return b;
}

void Normalizer::drop_bounded_constants(Op op, std::vector<std::pair<std::uint32_t, std::uint32_t>>& operands) {
  if (operands.size() < 2 || alg_.limits().input_ranges.empty()) return;
  if (std::none_of(operands.begin(), operands.end(),
                   [&](const auto& o) { return ctx_.op(Expr{o.second}) == Op::Const; }))
    return;
  const bool mx = op == Op::Max;
  // The two strongest bounds among the operands (max: largest lower bounds),
  // so that a constant is compared with the best bound of the others.
  std::optional<Rational> best, second;
  std::size_t best_at = operands.size();
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const Bounds b = bounds(Expr{operands[i].second}, 0);
    const std::optional<Rational>& v = mx ? b.lo : b.hi;
    if (!v) continue;
    auto stronger = [&](const std::optional<Rational>& than) { return !than || (mx ? *v > *than : *v < *than); };
    if (stronger(best)) {
      second = best;
      best = v;
      best_at = i;
    } else if (stronger(second)) {
      second = v;
    }
  }
  std::vector<std::pair<std::uint32_t, std::uint32_t>> kept;
  kept.reserve(operands.size());
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const Expr o{operands[i].second};
    const std::optional<Rational>& other = i == best_at ? second : best;
    // max(c, e) = e when e >= c for every input (min: e <= c)
    const bool dominated = ctx_.op(o) == Op::Const && other &&
                           (mx ? *other >= ctx_.constant_value(o) : *other <= ctx_.constant_value(o));
    if (!dominated) kept.push_back(operands[i]);
  }
  operands.swap(kept);
}

void Normalizer::deps(Expr e, std::vector<std::uint32_t>& out) {
  out.clear();
  switch (ctx_.op(e)) {
    case Op::Max:
    case Op::Min:
    case Op::Select:
      if (compact_) break;  // made in plain mode (compute_compact)
      if (subst_) {
        std::uint32_t atom;
        if (atom_of(e, &atom)) {
          auto it = subst_->find(atom);
          if (it != subst_->end()) {
            out.push_back(it->second);
            return;
          }
        }
      }
      for (Expr c : ctx_.children(e)) out.push_back(c.id);
      break;
    case Op::Add:
    case Op::Mul:
    case Op::Pow:
      for (Expr c : ctx_.children(e)) out.push_back(c.id);
      break;
    case Op::Exp:
      if (!compact_)
        for (Expr c : ctx_.children(e)) out.push_back(c.id);
      break;
    case Op::Func: break;  // arguments: compact forms, made by compute
    default: break;
  }
}

bool Normalizer::persistent(std::uint32_t id) const {
  return subst_ != nullptr || id == root_ || ctx_.parent_count(Expr{id}) > 1;
}

NF Normalizer::compute(Expr e, const std::vector<std::uint32_t>& dep_ids) {
  // Take an operand's form: move it out when this is its only user.
  auto take = [&](std::size_t i) -> NF {
    // The stored pointer is read in place: a copy of it costs two atomic
    // updates of the count, per operand of every node.
    std::uint32_t id = dep_ids[i];
    std::shared_ptr<const NF>& p = *res().get_mut(id);
    bool last = !persistent(id) && std::count(dep_ids.begin(), dep_ids.end(), id) == 1;
    if (!last) return *p;
    std::shared_ptr<const NF> mine = std::move(p);  // drops it from the results
    if (mine.use_count() == 1) return std::move(const_cast<NF&>(*mine));
    return *mine;
  };
  // What take() does to an operand, for one read in place: dropped after its last use.
  auto release = [&](std::size_t i) {
    const std::uint32_t id = dep_ids[i];
    if (!persistent(id) && std::count(dep_ids.begin(), dep_ids.end(), id) == 1) res().drop(id);
  };
  // Whether every operand's form is one term without a denominator.
  auto all_single_terms = [&] {
    for (std::uint32_t id : dep_ids) {
      const NF& f = **res().get(id);
      if (!f.num.single() || f.den) return false;
    }
    return true;
  };
  auto key_of = [&](std::size_t i, bool exponent) {
    // Operand forms of max/min/select/functions: remembered per node, since
    // a running max asks for the same operands again and again.
    std::uint32_t id = dep_ids[i];
    if (!exponent && !subst_) {
      if (const std::uint32_t* k = key_cache_.find(id)) return *k;
    }
    std::uint32_t k = alg_.nf_key(**res().get(id), exponent);
    if (!exponent && !subst_) key_cache_.insert(id, k);
    return k;
  };
  Op op = ctx_.op(e);
  if (compact_ && op != Op::Const && op != Op::Symbol && op != Op::Named && op != Op::NegInf && op != Op::PosInf)
    return compute_compact(e, dep_ids);
  switch (op) {
    case Op::Const: return alg_.nf_of(alg_.constant_term(ctx_.constant_value(e)));
    case Op::NegInf:
    case Op::PosInf: throw LimitHit{"an infinite value (-inf or +inf) reaches the compared expressions"};
    case Op::Named:
    case Op::Symbol: return alg_.nf_of(alg_.atom_term(e.id));
    case Op::Func: return function(e);
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
        // Flatten: a same-kind operand contributes its own (form, operand)
        // list, so a running max only adds its new operand to its predecessor's.
        std::vector<std::pair<std::uint32_t, std::uint32_t>> flat, extra;
        for (std::size_t i = 0; i < dep_ids.size(); ++i) {
          auto known = ctx_.op(Expr{dep_ids[i]}) == op && !subst_ ? flat_.find(dep_ids[i]) : flat_.end();
          if (known != flat_.end()) {
            if (flat.empty()) {
              flat = known->second;
            } else {
              std::vector<std::pair<std::uint32_t, std::uint32_t>> merged;
              std::merge(flat.begin(), flat.end(), known->second.begin(), known->second.end(),
                         std::back_inserter(merged));
              flat.swap(merged);
            }
          } else {
            extra.emplace_back(key_of(i, false), dep_ids[i]);
          }
        }
        std::sort(extra.begin(), extra.end());
        std::vector<std::pair<std::uint32_t, std::uint32_t>> all;
        all.reserve(flat.size() + extra.size());
        std::merge(flat.begin(), flat.end(), extra.begin(), extra.end(), std::back_inserter(all));
        // One operand per form (the smallest expression id: deterministic).
        all.erase(std::unique(all.begin(), all.end(), [](const auto& x, const auto& y) { return x.first == y.first; }),
                  all.end());
        drop_bounded_constants(op, all);
        for (const auto& kv : all) {
          key.push_back(kv.first);
          alts.push_back(kv.second);
        }
        if (!subst_) flat_[e.id] = std::move(all);
        if (alts.size() == 1) {  // every operand has one form: max(a, a') = a
          // or the others were constants it is never below (above): the
          // form of that one operand, a direct one or one a nested max kept
          for (std::size_t i = 0; i < dep_ids.size(); ++i)
            if (dep_ids[i] == alts[0]) return take(i);
          for (std::size_t i = 0; i < dep_ids.size(); ++i) {
            auto nested = flat_.find(dep_ids[i]);
            if (ctx_.op(Expr{dep_ids[i]}) == op && nested != flat_.end() && nested->second.size() == 1 &&
                nested->second[0].second == alts[0])
              return take(i);
          }
          return *run(Expr{alts[0]});
        }
      }
      std::uint32_t atom = atom_for(std::move(key));
      if (!subst_) {
        atom_of_node_.insert(e.id, atom);
        if (AtomInfo* a = describe(atom)) {
          if (op == Op::Select) {
            a->kind = AtomInfo::kSelect;
            a->operands = dep_ids;
            a->select_alternatives = std::move(alts);
            a->select = SelectInfo{ctx_.select_cmp(e), dep_ids[0], dep_ids[1]};
          } else {  // max/min: the alternatives are the operands
            a->kind = op == Op::Max ? AtomInfo::kMax : AtomInfo::kMin;
            a->operands = std::move(alts);
          }
        }
      }
      return alg_.nf_of(alg_.atom_term(atom));
    }
    case Op::Add: {
      // Every addend one term without a denominator: the sum is built from
      // the stored terms in place (no copies of shared addends' forms).
      if (all_single_terms()) {
        std::vector<const Term*> terms;
        terms.reserve(dep_ids.size());
        for (std::uint32_t id : dep_ids) terms.push_back(&(*res().get(id))->num.scale);
        NF r;
        r.num = alg_.add_terms(terms);
        for (std::size_t i = 0; i < dep_ids.size(); ++i) release(i);
        return r;
      }
      std::vector<NF> parts;
      parts.reserve(dep_ids.size());
      for (std::size_t i = 0; i < dep_ids.size(); ++i) parts.push_back(take(i));
      return alg_.add_many(parts);
    }
    case Op::Mul: {
      // Every factor one term without a denominator (a constant times a
      // symbol, an atom, an exponential): the product is one term, made from
      // the stored forms in place, as mul() would make it, without copying
      // the forms of shared factors or gathering them in a vector.
      if (all_single_terms()) {
        Term t = (*res().get(dep_ids[0]))->num.scale;
        for (std::size_t i = 1; i < dep_ids.size(); ++i) t = alg_.mul(t, (*res().get(dep_ids[i]))->num.scale);
        // __logf: lg2.approx(x) * 0f3F317218 is log(x); a base-2 log-sum-exp's
        // m * 1.44269504f is m / ln 2 (docs/decide.md, "Opaque functions").
        if (log2_in_context()) alg_.read_known_constants_plain(&t);
        for (std::size_t i = 0; i < dep_ids.size(); ++i) release(i);
        return alg_.nf_of(t);
      }
      std::vector<NF> parts;
      parts.reserve(dep_ids.size());
      for (std::size_t i = 0; i < dep_ids.size(); ++i) parts.push_back(take(i));
      // A constant factor times a sum that holds a power of ln 2 (fast-math
      // logf of a shifted argument: 0f3F317218 · (C + log y) / ln 2) reads
      // as it would beside a single term. Beside a sum without ln 2 (expf's
      // clamp, (x - m) · 0f3BBB989D) it keeps its float value.
      if (log2_in_context())
        for (std::size_t i = 0; i < parts.size(); ++i) {
          NF& part = parts[i];
          if (part.den || !part.num.single() || !part.num.scale.unit_key()) continue;
          Term t = part.num.scale;
          alg_.read_known_constants_plain(&t);
          if (t.mono == 0) continue;
          bool beside_ln2 = false;
          for (std::size_t j = 0; j < parts.size() && !beside_ln2; ++j)
            beside_ln2 = j != i && holds_ln2(parts[j]);
          if (beside_ln2) part = alg_.nf_of(t);
        }
      // A product of many factors (flattened: keep · o = e^{..} · l · x / l in
      // an online softmax) cancels every denominator against a matching
      // numerator before anything is expanded: multiplied in order, l · x is
      // expanded first and the 1/l that follows no longer matches it.
      for (std::size_t i = 0; i < parts.size(); ++i) {
        if (!parts[i].den) continue;
        for (std::size_t j = 0; j < parts.size() && parts[i].den; ++j)
          if (j != i) alg_.cancel(parts[i], parts[j]);
      }
      // Single terms first: they only rescale the sums they multiply. Moved
      // forward in place, in order (std::stable_sort allocated a buffer for
      // every product, most of which have two factors).
      std::size_t singles = 0;
      for (std::size_t i = 0; i < parts.size(); ++i) {
        if (!parts[i].num.single() || parts[i].den) continue;
        if (i != singles)
          std::rotate(parts.begin() + std::ptrdiff_t(singles), parts.begin() + std::ptrdiff_t(i),
                      parts.begin() + std::ptrdiff_t(i) + 1);
        ++singles;
      }
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
      std::uint32_t atom = atom_for(std::move(key));
      if (!subst_)
        if (AtomInfo* a = describe(atom)) a->operands = dep_ids;
      return alg_.nf_of(alg_.atom_term(atom));
    }
  }
  return NF{};
}

// Function atoms, keyed by a name and their operands' normal forms. Three
// identities of the real functions let forms that nvcc and kernel authors
// write differently meet (docs/decide.md, "Opaque functions"); each holds on
// the function's whole domain, and both sides are undefined off it:
//   rsqrt(x) = 1 / sqrt(x)       (x > 0), so rsqrtf and 1.0f / sqrtf meet;
//   log2(x)  = log(x) / ln 2     (x > 0), so log2f, lg2.approx (fast-math logf
//                                 is lg2.approx times 0f3F317218, read as ln 2)
//                                 and logf meet;
//   log1p(x) = log(1 + x)        (x > -1), so log1pf(u) and logf(1.0f + u) meet;
//   log(e^C · y) = C + log(y)    (y > 0), so a log-sum-exp meets whatever
//                                 maximum its exponentials were shifted by (log_arg).
NF Normalizer::function(Expr e) {
  const std::string& given = ctx_.name(e);
  // Count the children, not dep_ids: a function's arguments are normalized
  // on their own, in compact form (func_arg_key), and are not among its deps.
  const bool unary = ctx_.children(e).size() == 1;
  const bool rsqrt = unary && given == "rsqrt";
  const bool log2 = unary && given == "log2" && ln2_node() != UINT32_MAX;
  const bool log1p = unary && given == "log1p";
  const std::string& name = rsqrt ? kSqrt : (log2 || log1p) ? kLog : given;
  std::vector<std::uint32_t> key{std::uint32_t(Op::Func), std::uint32_t(name.size())};
  for (char ch : name) key.push_back(std::uint8_t(ch));
  // Arguments are keyed by their compact forms (compact.cpp), so that a
  // layer norm's rsqrt(sum((x - mean)^2) / N + eps) keys in O(N).
  std::vector<std::uint32_t> args;
  for (Expr c : ctx_.children(e)) args.push_back(c.id);
  std::shared_ptr<const NF> shift;  // log(e^C · y) = C + log(y)
  bool log_one = false;             // y = 1
  if (name == kLog && unary) {
    const LogArg la = log_arg(args[0], log1p);  // log1p(x) is log(1 + x)
    key.push_back(la.key);
    shift = la.shift;
    log_one = la.one;
  } else {
    for (std::uint32_t a : args) key.push_back(func_arg_key(a));
  }
  std::uint32_t atom = atom_for(std::move(key));
  if (!subst_)
    if (AtomInfo* a = describe(atom)) {
      a->operands = args;
      a->compact_operands = true;
    }
  NF f = log_one ? NF{} : alg_.nf_of(alg_.atom_term(atom));
  if (rsqrt) return alg_.inverse(std::move(f));
  if (shift) f = alg_.add(std::move(f), *shift);
  if (log2) {
    return alg_.mul(std::move(f), alg_.inverse(alg_.nf_of(alg_.atom_term(ln2_node()))));
  }
  return f;
}

// Whether some expression of the context takes a log2: the known-constant
// rule then also reads products outside exponents. Asked of the whole
// context once, so that both kernels' forms are read alike whatever order
// their nodes are normalized in.
bool Normalizer::log2_in_context() {
  if (log2_in_context_ < 0) {
    log2_in_context_ = 0;
    if (ln2_node() != UINT32_MAX)
      for (std::uint32_t id = 0; id < ctx_.size(); ++id)
        if (ctx_.op(Expr{id}) == Op::Func && ctx_.children(Expr{id}).size() == 1 && ctx_.name(Expr{id}) == "log2") {
          log2_in_context_ = 1;
          break;
        }
  }
  return log2_in_context_ == 1;
}

// Whether a term of f has ln 2 in its monomial.
bool Normalizer::holds_ln2(const NF& f) const {
  const std::uint32_t ln2 = alg_.ln2_atom();
  if (ln2 == UINT32_MAX) return false;
  auto in = [&](const Term& t) {
    std::size_t n = 0;
    const MonoEntry* me = alg_.mono_entries(t.mono, &n);
    for (std::size_t i = 0; i < n; ++i)
      if (me[i].atom == ln2) return true;
    return false;
  };
  auto sum = [&](const Sum& s) { return in(s.scale) || std::any_of(s.terms.begin(), s.terms.end(), in); };
  return sum(f.num) || (f.den && sum(f.den->sum));
}

// The context's ln 2 node (ExprContext makes it first thing, so it is among
// the first nodes), or UINT32_MAX.
std::uint32_t Normalizer::ln2_node() {
  if (ln2_ == UINT32_MAX - 1) {
    ln2_ = UINT32_MAX;
    for (std::uint32_t id = 0; id < 16 && id < ctx_.size(); ++id)
      if (ctx_.op(Expr{id}) == Op::Named && ctx_.name(Expr{id}) == "ln2") {
        ln2_ = id;
        break;
      }
  }
  return ln2_;
}

std::shared_ptr<const NF> Normalizer::run(Expr root) {
  if (ctx_.size() >= Algebra::kSyntheticAtom) throw LimitHit{"more than 2^31 expression nodes"};
  if (const auto* done = res().get(root.id)) return *done;
  const std::uint32_t outer_root = root_;  // run_in nests runs
  root_ = root.id;
  std::vector<std::pair<std::uint32_t, bool>> stack{{root.id, false}};
  std::vector<std::uint32_t> d;
  while (!stack.empty()) {
    auto [id, expanded] = stack.back();
    stack.pop_back();
    if (res().has(id)) continue;
    Expr e{id};
    deps(e, d);
    // Operands first (again, if another user consumed one in between): the
    // node goes back under its missing operands, and comes off again if
    // none is missing (one lookup per operand).
    stack.push_back({id, true});
    const std::size_t mark = stack.size();
    for (std::uint32_t c : d)
      if (!res().has(c)) stack.push_back({c, false});
    if (stack.size() != mark) continue;
    stack.pop_back();
    (void)expanded;
    alg_.check_deadline();
    NF f = compute(e, d);
    res().put(id, std::make_shared<NF>(std::move(f)));  // non-const: take() may move out of it
  }
  std::shared_ptr<const NF> r = *res().get(root.id);
  // Outputs are asked for once; keep only what other nodes share.
  if (ctx_.parent_count(root) <= 1 && subst_ == nullptr) res().drop(root.id);
  root_ = outer_root;
  return r;
}

}  // namespace tileverify::detail
