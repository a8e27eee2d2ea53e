// Machine<SymbolicDomain>: thread classes. Threads of a CTA that compute the
// same thing on renamed inputs share the expression nodes of one of them.
//
// A float value may be a shadow (h, s): the expression h with every input
// symbol of tensor T moved by s(T) elements (ExprContext::shift_symbols).
// Moving the symbols is a renaming of the variables (injective), and every
// operation the evaluator builds (sums, products, max, exp, select, ...) is
// a function of its operands' values, so
//   op(rename(h1, s), ..., rename(hn, s)) = rename(op(h1, ..., hn), s)
// as real functions, whatever h1..hn are: a shadow is the exact value, and
// building one never depends on guessing right. Only the savings do: the
// first thread to run a float operation at (pc, its visit of pc) records
// its sources and result (a ShadowEntry); a later thread whose sources are
// those sources renamed by one shift s takes (result, s) and builds nothing.
// In a GEMM, thread (y, x) multiplies A[y][k] by B[k][x] where thread (0, 0)
// multiplies A[0][k] by B[k][0]: its whole dot product is thread (0, 0)'s
// with A moved by y rows and B by x columns.
//
// The matching, per source: a shadow (h, s') of the entry's handle h gives
// the whole shift s'; a symbol T[i] where the entry has T[j] gives s(T) =
// i - j; the entry's own handle, unrenamed, gives s = 0, unless it is a
// constant (no symbols: any s). The shifts must agree (a symbol's part of
// a shift is checked against the whole shift of another source).
//
// A thread that matches no entry computes in its own frame: when its
// shadow sources share one shift s (its symbols and constants are moved
// back by s), it computes on their handles and holds the result as a
// shadow with s; otherwise it builds its sources out (materialized) and
// computes the ordinary way, absolute from then on.
//
// Shadows are only seen where this file put them and where a value is
// moved whole: registers (mov, the float cvts that are the identity),
// whole cells of memory (ld, st), and the outputs of a run that keeps
// them (RunOptions::shadow_outputs). operand(), read_cell() and as_float()
// build the value out for every other reader, and keep it built.
#include "machine.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

namespace tileverify::machine {

template <class D>
void Machine<D>::setup_shadows() {
  shadows_ = o_.thread_classes && n_ > 1;
  if (!shadows_) return;
  shifts_.assign(1, {});
  shift_moves_.assign(1, 0);
  shadow_index_.assign(p_.code.size(), kNone);
  for (std::uint32_t pc = 0; pc < p_.code.size(); ++pc) {
    const Instr& in = p_.code[pc];
    const std::size_t n = float_arity(in.op);
    if (n != 0 && dtype_is_float(in.type) && in.dst.size() == 1 && in.src.size() >= n) shadow_index_[pc] = shadow_pcs_++;
  }
  // Visit counts per thread and operation: a huge kernel on a huge CTA
  // runs without thread classes rather than spend memory on them.
  const std::uint64_t counts = std::uint64_t(n_) * shadow_pcs_;
  if (shadow_pcs_ == 0 || counts > (std::uint64_t(1) << 26)) {
    shadows_ = false;
    return;
  }
  reserve("the visit counts of thread classes", counts, sizeof(std::uint32_t));
  shadow_visits_.assign(std::size_t(counts), 0);
  shadow_entries_.resize(shadow_pcs_);
  last_sid_.assign(n_, 0);
}

template <class D>
std::uint32_t Machine<D>::slot_of_tensor(std::uint32_t name_id, const std::string& name) {
  if (name_id >= slot_of_name_.size()) slot_of_name_.resize(std::size_t(name_id) + 1, kNone);
  if (slot_of_name_[name_id] == kNone) {
    slot_of_name_[name_id] = std::uint32_t(slot_names_.size());
    slot_names_.push_back(name);
  }
  return slot_of_name_[name_id];
}

template <class D>
std::uint32_t Machine<D>::intern_shift(std::vector<std::int64_t>& v) {
  while (!v.empty() && v.back() == 0) v.pop_back();
  if (v.empty()) return 0;
  auto it = shift_ids_.find(v);
  if (it != shift_ids_.end()) return it->second;
  const std::uint32_t id = std::uint32_t(shifts_.size());
  shifts_.push_back(v);
  shift_moves_.push_back(std::uint32_t(v.size() - std::size_t(std::count(v.begin(), v.end(), 0))));
  shift_ids_.emplace(v, id);
  return id;
}

template <class D>
std::uint32_t Machine<D>::materialized(std::uint32_t h, std::uint32_t sid) {
  if (sid == 0) return h;
  const std::uint64_t key = std::uint64_t(h) << 32 | sid;
  auto it = materialized_.find(key);
  if (it != materialized_.end()) return it->second;
  ExprContext& c = d_.context();
  const std::vector<std::int64_t>& s = shifts_[sid];
  auto moved = c.shift_symbols({Expr{h}}, [&](const std::string& name) -> std::int64_t {
    for (std::size_t slot = 0; slot < slot_names_.size() && slot < s.size(); ++slot)
      if (slot_names_[slot] == name) return s[slot];
    return 0;
  });
  if (!moved) {
    // A shadow only ever stands for the symbols some thread read, so its
    // renaming stays in range; if not, say so rather than guess.
    Diagnostic d;
    d.kind = DiagKind::Unsupported;
    d.message = "internal: a thread-class value renames an input outside its tensor (run with --no-thread-classes)";
    throw Stop{d};
  }
  materialized_.emplace(key, moved->front().id);
  return moved->front().id;
}

template <class D>
void Machine<D>::materialize(Val<V>& v) {
  v.f = V{materialized(v.f.id, std::uint32_t(v.i))};
  v.kind = VKind::Float;
  v.i = 0;
}

template <class D>
void Machine<D>::set_framed(std::uint32_t t, std::uint32_t r, std::uint32_t h, std::uint32_t sid) {
  set_float(t, r, V{h});
  if (sid != 0) {
    Val<V>& d = reg(t, r);
    d.kind = VKind::Shadow;
    d.i = sid;
  }
}

// A source that is a float, a shadow or a float immediate, as (handle,
// shift); false for anything else (the ordinary path handles it).
template <class D>
bool Machine<D>::shadow_source(std::uint32_t t, const Operand& o, Framed* out) {
  if (o.kind == Operand::Kind::Reg) {
    const Val<V>& r = reg(t, o.index);
    if (r.kind == VKind::Float) {
      *out = Framed{r.f.id, 0};
      return true;
    }
    if (r.kind == VKind::Shadow) {
      *out = Framed{r.f.id, std::uint32_t(r.i)};
      return true;
    }
    return false;
  }
  if (o.kind == Operand::Kind::Float) {
    *out = Framed{constant_operand(o.index).id, 0};
    return true;
  }
  return false;
}

// No input symbol below it: the same value under every renaming.
static bool symbol_free_leaf(const ExprContext& c, Expr e) {
  const Op op = c.op(e);
  return op == Op::Const || op == Op::NegInf || op == Op::PosInf || op == Op::Named;
}

template <class D>
bool Machine<D>::match_entry(const ShadowEntry& e, const Framed* x, std::size_t n, std::uint32_t hint,
                             std::uint32_t* sid, bool frame) {
  const ExprContext& c = d_.context();
  std::uint32_t whole = kNone;                 // a source's whole shift
  std::uint32_t slots[3], nparts = 0;          // symbols' parts of it
  std::int64_t parts[3];
  for (std::size_t i = 0; i < n; ++i) {
    const Expr h{x[i].h}, l{e.k[i]};
    if (x[i].sid != 0) {
      if (h != l || (whole != kNone && whole != x[i].sid)) return false;
      whole = x[i].sid;
      continue;
    }
    const Op oh = c.op(h);
    if (oh == Op::Symbol && c.op(l) == Op::Symbol) {
      if (c.symbol_tensor_id(h) != c.symbol_tensor_id(l) || c.is_integer_symbol(h) != c.is_integer_symbol(l))
        return false;
      slots[nparts] = slot_of_tensor(c.symbol_tensor_id(h), c.symbol_tensor(h));
      parts[nparts++] = std::int64_t(c.symbol_index(h)) - std::int64_t(c.symbol_index(l));
      continue;
    }
    if (h != l) return false;
    if (symbol_free_leaf(c, h)) continue;
    if (whole != kNone && whole != 0) return false;
    whole = 0;
  }
  auto fits = [&](std::uint32_t s) {
    for (std::uint32_t j = 0; j < nparts; ++j)
      if (shift_at(s, slots[j]) != parts[j]) return false;
    return true;
  };
  if (whole != kNone) {
    if (!fits(whole)) return false;
    *sid = whole;
    return true;
  }
  // Mostly the shift of the thread's previous match: no vector to make.
  // Only a hint that moves no other tensor (unless it is the frame of the
  // chain being followed, whose sum holds its other tensors): the shift
  // of a value names the tensors it moves and no more, so that threads
  // that hold one value hold it alike (a same-value write compares shifts).
  std::uint32_t moved = 0;
  for (std::uint32_t j = 0; j < nparts; ++j) {
    bool again = false;
    for (std::uint32_t q = 0; q < j; ++q) again = again || slots[q] == slots[j];
    moved += !again && parts[j] != 0;
  }
  if ((frame || shift_moves_[hint] == moved) && fits(hint)) {
    *sid = hint;
    return true;
  }
  std::vector<std::int64_t> v;
  for (std::uint32_t j = 0; j < nparts; ++j) {
    if (v.size() <= slots[j]) v.resize(std::size_t(slots[j]) + 1, 0);
    bool set_before = false;
    for (std::uint32_t q = 0; q < j; ++q) set_before = set_before || slots[q] == slots[j];
    if (set_before && v[slots[j]] != parts[j]) return false;
    v[slots[j]] = parts[j];
  }
  *sid = intern_shift(v);
  return true;
}

template <class D>
bool Machine<D>::rebase(const Framed* x, std::size_t n, std::uint32_t sid, std::uint32_t* base) {
  ExprContext& c = d_.context();
  for (std::size_t i = 0; i < n; ++i) {
    if (x[i].sid != 0) {
      if (x[i].sid != sid) return false;
      base[i] = x[i].h;
      continue;
    }
    const Expr h{x[i].h};
    if (sid == 0 || symbol_free_leaf(c, h)) {
      base[i] = x[i].h;
      continue;
    }
    if (c.op(h) != Op::Symbol) return false;
    const std::string& name = c.symbol_tensor(h);
    const std::int64_t at = std::int64_t(c.symbol_index(h)) - shift_at(sid, slot_of_tensor(c.symbol_tensor_id(h), name));
    if (at < 0 || at > std::int64_t(std::numeric_limits<std::uint32_t>::max())) return false;
    base[i] = (c.is_integer_symbol(h) ? c.int_symbol(name, std::uint32_t(at)) : c.symbol(name, std::uint32_t(at))).id;
  }
  return true;
}

template <class D>
auto Machine<D>::shadow_visit(std::uint32_t t, std::uint32_t pc, std::uint64_t* id) -> ShadowEntry* {
  const std::uint32_t k = shadow_index_[pc];
  const std::uint32_t visit = shadow_visits_[std::size_t(t) * shadow_pcs_ + k]++;
  *id = std::uint64_t(k) << 32 | visit;
  std::vector<ShadowEntry>& es = shadow_entries_[k];
  return visit < es.size() ? &es[visit] : nullptr;
}

// A float operation (float_arity) of thread t through the entries; false:
// the caller runs it the ordinary way (sources that are no floats, or
// nothing to gain: absolute sources and someone else's entry).
template <class D>
bool Machine<D>::shadow_compute(std::uint32_t t, const Instr& in) {
  const std::uint32_t pc = std::uint32_t(&in - p_.code.data());  // not pc_[t]: a retry loop's head runs again
  if (shadow_index_[pc] == kNone) return false;
  const std::size_t n = float_arity(in.op);
  Framed x[3];
  for (std::size_t i = 0; i < n; ++i)
    if (!shadow_source(t, in.src[i], &x[i])) return false;
  std::uint64_t id;
  const ShadowEntry* e = shadow_visit(t, pc, &id);
  std::uint32_t sid = 0;
  // An fma chain's entries at this pc are no operation's (see shadow_chain_step).
  const bool own_kind = e && e->prev == kNoEntry && e->r != kNoKey;
  if (own_kind && match_entry(*e, x, n, last_sid_[t], &sid)) {
    last_sid_[t] = sid;
    set_framed(t, in.dst[0], e->r, sid);
    return true;
  }
  const bool lead = !e && shadow_lead(id);
  // The frame: the first shadow source's shift; without one, absolute.
  for (std::size_t i = 0; i < n && sid == 0; ++i) sid = x[i].sid;
  std::uint32_t base[3] = {kNoKey, kNoKey, kNoKey};
  if (!rebase(x, n, sid, base)) {
    for (std::size_t i = 0; i < n; ++i) x[i] = Framed{materialized(x[i].h, x[i].sid), 0};
    sid = 0;
    rebase(x, n, 0, base);
  }
  if (sid == 0 && !lead) return false;  // absolute, nothing to record: the memo's, or the ordinary way
  V r;
  float_apply(in.op, [&](std::size_t i) { return V{base[i]}; }, &r);
  if (lead) shadow_put(id, ShadowEntry{{base[0], base[1], base[2]}, r.id, kNoEntry});
  set_framed(t, in.dst[0], r.id, sid);
  return true;
}

template <class D>
void Machine<D>::shadow_replay(ChainState& st) {
  ExprContext& c = d_.context();
  const ShadowEntry& first = shadow_entries_[st.path.front() >> 32][std::uint32_t(st.path.front())];
  st.sum = c.running_sum(Expr{first.k[2]});
  for (std::uint64_t id : st.path) {
    const ShadowEntry& e = shadow_entries_[id >> 32][std::uint32_t(id)];
    const Expr a{e.k[0]}, b{e.k[1]};
    c.add_products(st.sum, &a, 1, &b, 1, 1);
  }
  st.follow = false;
}

// chain_step with thread classes: a pass through an fma chain follows the
// entries one thread made along its own pass (each entry names the one
// before it), and at the chain's last member takes that thread's sum,
// renamed; or sums in its own frame, as chain_step does, making the
// entries where it is first.
template <class D>
bool Machine<D>::shadow_chain_step(std::uint32_t t, const Instr& in, const ChainLink& link) {
  if (chain_state_.empty()) chain_state_.resize(std::size_t(n_) * chain_slots_);
  ChainState& st = chain_state_[std::size_t(t) * chain_slots_ + link.chain];
  ExprContext& c = d_.context();
  const std::uint32_t pc = std::uint32_t(&in - p_.code.data());
  if (link.first) {
    st.active = false;
    st.path.clear();
  } else if (!st.active) {
    return false;
  }
  Framed x[3];
  const std::size_t n = link.first ? 3 : 2;
  bool plain = !sched_marks_;
  for (std::size_t i = 0; i < n && plain; ++i) plain = shadow_source(t, in.src[i], &x[i]);
  if (!plain) {
    // The ordinary way from here, as chain_step: the sum so far into the addend register.
    if (!link.first) {
      if (st.follow) shadow_replay(st);
      set_framed(t, in.src[2].index, c.sum_of(st.sum).id, st.sid);
    }
    st.active = false;
    return false;
  }
  std::uint64_t id;
  const ShadowEntry* e = shadow_visit(t, pc, &id);
  const std::uint64_t prev = link.first || st.path.empty() ? kNoEntry : st.path.back();
  if (link.first || st.follow) {
    std::uint32_t sid = 0;
    const std::uint32_t hint = link.first ? last_sid_[t] : st.sid;
    if (e && e->prev == prev && match_entry(*e, x, n, hint, &sid, !link.first) && (link.first || sid == st.sid) &&
        (!link.last || e->r != kNoKey)) {
      st.active = st.follow = st.pure = true;
      st.sid = last_sid_[t] = sid;
      st.path.push_back(id);
      if (link.last) {
        set_framed(t, in.dst[0], e->r, sid);
        st.active = false;
      }
      return true;
    }
    if (link.first) {
      st.sid = 0;
      for (std::size_t i = 0; i < n && st.sid == 0; ++i) st.sid = x[i].sid;
      st.pure = true;
    } else {
      shadow_replay(st);  // in the frame of the entries followed so far
    }
    st.follow = false;
    st.active = true;
  }
  std::uint32_t base[3] = {kNoKey, kNoKey, kNoKey};
  if (!rebase(x, n, st.sid, base)) {
    // Sources in another frame: the sum so far and the sources built out,
    // absolute for the rest of the pass.
    if (!link.first && st.sid != 0) st.sum = c.running_sum(Expr{materialized(c.sum_of(st.sum).id, st.sid)});
    for (std::size_t i = 0; i < n; ++i) x[i] = Framed{materialized(x[i].h, x[i].sid), 0};
    st.sid = 0;
    st.pure = false;
    rebase(x, n, 0, base);
  }
  if (link.first) st.sum = c.running_sum(Expr{base[2]});
  const Expr a{base[0]}, b{base[1]};
  c.add_products(st.sum, &a, 1, &b, 1, 1);
  st.pure = st.pure && !e && shadow_lead(id);
  const std::uint32_t r = link.last ? c.sum_of(st.sum).id : kNoKey;
  if (st.pure) {
    shadow_put(id, ShadowEntry{{base[0], base[1], link.first ? base[2] : kNoKey}, r, prev});
    st.path.push_back(id);
  }
  if (link.last) {
    set_framed(t, in.dst[0], r, st.sid);
    st.active = false;
  }
  return true;
}

// The run's shift vectors as RunResult::shift_vectors (by tensor name; an
// output's shadow names its shift by index), made once.
template <class D>
void Machine<D>::collect_shadows(RunResult<D>& r) {
  if (!r.shift_vectors.empty()) return;
  for (const std::vector<std::int64_t>& s : shifts_) {
    std::map<std::string, std::int64_t> m;
    for (std::size_t slot = 0; slot < s.size(); ++slot)
      if (s[slot] != 0) m[slot_names_[slot]] = s[slot];
    r.shift_vectors.push_back(std::move(m));
  }
}

template class Machine<SymbolicDomain>;

}  // namespace tileverify::machine
