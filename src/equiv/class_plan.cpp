// Pairing the output elements of two kernels' CTA classes (class_plan.hpp).
#include "class_plan.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace tileverify::internal {

std::optional<std::int64_t> shift_of(const KernelClasses& k, const Cover& cv, const std::string& t) {
  const auto& m = k.classes[cv.cls].shifts[cv.member];
  auto it = m.find(t);
  if (it == m.end()) return std::nullopt;
  return it->second;
}

// Element e of an output is, in kernel k, the representative's element moved
// by the member's shifts s_k (a renaming of the inputs). Both values at e
// are equal iff R∘s_a = O∘s_b, iff R∘(s_a - s_b) = O (apply the inverse
// renaming s_b to both sides): one comparison per distinct
// (representatives' elements, s_a - s_b), whatever the number of elements.
// None when the deadline passes first (a 1024^3 GEMM has a million elements).
std::optional<Plan> plan(const KernelClasses& a, const KernelClasses& b,
                         const std::optional<std::chrono::steady_clock::time_point>& deadline) {
  Plan p;
  for (const KernelClasses* k : {&a, &b})
    for (const CtaClass& cl : k->classes)
      for (const auto& kv : cl.shifts.front())
        if (std::find(p.tensors.begin(), p.tensors.end(), kv.first) == p.tensors.end()) p.tensors.push_back(kv.first);
  std::unordered_map<std::string, std::size_t> index;
  std::set<std::string> names;
  for (const auto& kv : a.covers) names.insert(kv.first);
  for (const auto& kv : b.covers) names.insert(kv.first);
  static const std::vector<Cover> kNone;
  // Every member's shift of each of p.tensors, found once: per element
  // each lookup was a search of a map by tensor name (a 1024^3 GEMM has a
  // million elements and three tensors).
  using Shifts = std::vector<std::vector<std::optional<std::int64_t>>>;  // [class][member * tensors + i]
  auto shifts = [&](const KernelClasses& k) {
    Shifts s(k.classes.size());
    for (std::size_t c = 0; c < k.classes.size(); ++c)
      for (std::size_t m = 0; m < k.classes[c].members.size(); ++m)
        for (const std::string& t : p.tensors) s[c].push_back(shift_of(k, Cover{std::uint32_t(c), std::uint32_t(m), 0}, t));
    return s;
  };
  const Shifts sa_of = shifts(a), sb_of = shifts(b);
  const std::size_t nt = p.tensors.size();
  std::string key;
  std::vector<std::int64_t> d;
  for (const std::string& name : names) {
    const auto xi = a.covers.find(name), yi = b.covers.find(name);
    const std::vector<Cover>& xs = xi == a.covers.end() ? kNone : xi->second;
    const std::vector<Cover>& ys = yi == b.covers.end() ? kNone : yi->second;
    for (std::uint64_t e = 0; e < std::max(xs.size(), ys.size()); ++e) {
      if (e % 4096 == 0 && past(deadline)) return std::nullopt;
      const Cover ca = e < xs.size() ? xs[e] : Cover{}, cb = e < ys.size() ? ys[e] : Cover{};
      const bool wa = ca.cls != Cover::kNoClass, wb = cb.cls != Cover::kNoClass;
      if (!wa && !wb) continue;
      if (!wa || !wb) {
        if (!p.one_sided) p.one_sided = Plan::OneSided{name, e, ca, cb};
        continue;
      }
      ++p.elements;
      d.clear();
      key.assign(name);
      key.push_back('\0');
      auto put = [&](std::uint64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
      put(ca.cls);
      put(ca.elem);
      put(cb.cls);
      put(cb.elem);
      for (std::size_t i = 0; i < nt; ++i) {
        const std::optional<std::int64_t>& sa = sa_of[ca.cls][ca.member * nt + i];
        const std::optional<std::int64_t>& sb = sb_of[cb.cls][cb.member * nt + i];
        d.push_back(sa && sb ? *sa - *sb : 0);  // a tensor only one side reads: any shift of the other's
        put(std::uint64_t(d.back()));
      }
      // Nearly every element repeats a comparison: look it up before making one.
      auto it = index.find(key);
      if (it == index.end()) {
        it = index.emplace(key, p.comparisons.size()).first;
        p.comparisons.push_back(Comparison{name, e, 0, ca, cb, d});
      }
      ++p.comparisons[it->second].elements;
    }
  }
  return p;
}

// The comparisons of shard `index` of `count`: the (reference class,
// optimized class) pairs, in the order of their first comparison, are the
// units; with at least `count` of them, pair j goes to shard j % count (its
// representatives run in that shard only); with fewer, the comparisons of
// pair j are dealt in turn to the shards s with s % pairs == j (which then
// all run its two representatives).
std::vector<std::size_t> share(const Plan& p, unsigned index, unsigned count) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::size_t> pair_of;
  std::vector<std::vector<std::size_t>> pairs;
  for (std::size_t i = 0; i < p.comparisons.size(); ++i) {
    auto [it, fresh] = pair_of.emplace(std::make_pair(p.comparisons[i].ca.cls, p.comparisons[i].cb.cls), pairs.size());
    if (fresh) pairs.emplace_back();
    pairs[it->second].push_back(i);
  }
  std::vector<std::size_t> mine;
  const std::size_t n = pairs.size();
  for (std::size_t j = 0; j < n; ++j) {
    if (n >= count) {
      if (j % count == index) mine.insert(mine.end(), pairs[j].begin(), pairs[j].end());
      continue;
    }
    // The shards of pair j: j, j + n, j + 2n, ... below count.
    if (index % n != j) continue;
    const std::size_t k = (count - 1 - j) / n + 1, rank = index / n;
    for (std::size_t c = 0; c < pairs[j].size(); ++c)
      if (c % k == rank) mine.push_back(pairs[j][c]);
  }
  std::sort(mine.begin(), mine.end());
  return mine;
}

// The comparisons of each (reference class, optimized class) pair, in the
// order share() deals the pairs (ShardInfo::plan).
std::vector<std::uint64_t> pair_sizes(const Plan& p) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::size_t> pair_of;
  std::vector<std::uint64_t> sizes;
  for (const Comparison& o : p.comparisons) {
    auto [it, fresh] = pair_of.emplace(std::make_pair(o.ca.cls, o.cb.cls), sizes.size());
    if (fresh) sizes.push_back(0);
    ++sizes[it->second];
  }
  return sizes;
}

}  // namespace tileverify::internal
