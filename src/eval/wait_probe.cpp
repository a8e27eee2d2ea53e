// probe_of_retry_loop (wait_probe.hpp): CUTLASS's two-step mbarrier wait.
#include "wait_probe.hpp"

#include <array>
#include <map>
#include <optional>
#include <set>
#include <vector>

namespace tileverify::machine {

namespace {

constexpr int kSteps = 64;     // instructions on one way
constexpr int kBudget = 1024;  // instructions over all ways

bool integer_op(Opcode op) {
  switch (op) {
    case Opcode::Mov: case Opcode::Cvt: case Opcode::Selp: case Opcode::Add: case Opcode::Sub:
    case Opcode::Mul: case Opcode::Mad: case Opcode::Min: case Opcode::Max: case Opcode::And:
    case Opcode::Or: case Opcode::Xor: case Opcode::Not: case Opcode::Shl: case Opcode::Shr:
    case Opcode::Setp: return true;
    default: return false;
  }
}

using Known = std::map<std::uint32_t, std::int64_t>;

std::optional<std::int64_t> value_of(const Known& k, const Operand& o) {
  if (o.kind == Operand::Kind::Int) return o.imm;
  if (o.kind != Operand::Kind::Reg || o.imm != 0) return std::nullopt;
  auto it = k.find(o.index);
  if (it == k.end()) return std::nullopt;
  return it->second;
}

// The value of an integer operation whose operands are all known; the forms
// a wait's result goes through (mov, selp, setp, logic); none for others.
std::optional<std::int64_t> fold(const Instr& in, const Known& k) {
  std::array<std::int64_t, 3> v{};
  if (in.src.size() > 3) return std::nullopt;
  for (std::size_t i = 0; i < in.src.size(); ++i) {
    auto x = value_of(k, in.src[i]);
    if (!x) return std::nullopt;
    v[i] = *x;
  }
  const bool pred = in.type == DType::Pred;
  switch (in.op) {
    case Opcode::Mov: case Opcode::Cvt: return v[0];
    case Opcode::Not: return pred ? std::int64_t(!v[0]) : ~v[0];
    case Opcode::And: return v[0] & v[1];
    case Opcode::Or: return v[0] | v[1];
    case Opcode::Xor: return pred ? std::int64_t((v[0] != 0) != (v[1] != 0)) : v[0] ^ v[1];
    case Opcode::Selp: return v[2] ? v[0] : v[1];
    case Opcode::Setp:
      switch (in.cmp) {
        case Cmp::EQ: return v[0] == v[1];
        case Cmp::NE: return v[0] != v[1];
        case Cmp::LT: return v[0] < v[1];
        case Cmp::LE: return v[0] <= v[1];
        case Cmp::GT: return v[0] > v[1];
        case Cmp::GE: return v[0] >= v[1];
      }
      return std::nullopt;
    default: return std::nullopt;
  }
}

bool reads_any(const Instr& in, const std::set<std::uint32_t>& regs) {
  if (in.guard >= 0 && regs.count(std::uint32_t(in.guard))) return true;
  for (const Operand& o : in.src)
    if (o.kind == Operand::Kind::Reg && regs.count(o.index)) return true;
  return false;
}

struct Walk {
  const Program& p;
  std::uint32_t pc;
  int budget = kBudget;
  std::set<std::uint32_t> region;  // instructions that may read the registers below
  std::set<std::uint32_t> private_regs;  // the result's, and those of the false side, the loop and its exit
  std::set<std::uint32_t> written;  // registers written from the probe to the deciding branch
  std::uint32_t decide = kNoReg;    // the deciding branch
  std::array<Known, 2> at_decide;   // the result's registers there, for results 0 and 1

  // From q to the branch that the result decides, with `chain` the result's
  // registers (their values for 0 and 1); every way must reach the same one.
  bool to_decide(std::uint32_t q, std::array<Known, 2> chain) {
    for (int steps = 0; steps < kSteps; ++steps) {
      if (--budget < 0 || q >= p.code.size()) return false;
      const Instr& in = p.code[q];
      const bool on_result = in.guard >= 0 && chain[0].count(std::uint32_t(in.guard));
      if (in.op == Opcode::Bra && on_result) {
        if (decide != kNoReg) return decide == q && at_decide == chain;
        decide = q;
        at_decide = chain;
        region.insert(q);
        return true;
      }
      if (on_result) return false;  // a predicated operation on the result
      if (in.op == Opcode::Bra) {
        if (in.guard >= 0) return to_decide(in.target, chain) && to_decide(q + 1, chain);
        q = in.target;
        continue;
      }
      if (in.op == Opcode::Trap) return true;  // this way ends the thread, whatever the probe returned
      if (!integer_op(in.op) || in.dst.size() != 1) return false;
      std::set<std::uint32_t> result_regs;
      for (const auto& [r, v] : chain[0]) result_regs.insert(r);
      if (reads_any(in, result_regs)) {
        auto v0 = fold(in, chain[0]), v1 = fold(in, chain[1]);
        if (!v0 || !v1 || in.guard >= 0) return false;
        chain[0][in.dst[0]] = *v0;
        chain[1][in.dst[0]] = *v1;
        private_regs.insert(in.dst[0]);
        region.insert(q);
      } else {
        chain[0].erase(in.dst[0]);
        chain[1].erase(in.dst[0]);
      }
      written.insert(in.dst[0]);
      ++q;
    }
    return false;
  }

  // Straight from q with `known` until stop(q) holds, through integer
  // operations and branches `known` decides; the instructions into `path`.
  template <class Stop>
  bool straight(std::uint32_t q, Known known, Stop stop, std::vector<std::uint32_t>* path) {
    for (int steps = 0; steps < kSteps; ++steps) {
      if (--budget < 0 || q >= p.code.size()) return false;
      if (stop(q)) return true;
      const Instr& in = p.code[q];
      bool on = true;
      if (in.guard >= 0) {
        auto g = value_of(known, Operand::reg(std::uint32_t(in.guard)));
        if (!g) return false;
        on = (*g != 0) != in.guard_negated;
      }
      path->push_back(q);  // branches too: they read the registers they decide on
      if (in.op == Opcode::Bra) {
        q = on ? in.target : q + 1;
        continue;
      }
      if (!on) {
        ++q;
        continue;
      }
      if (in.op == Opcode::Nanosleep) {
        ++q;
        continue;
      }
      if (!integer_op(in.op) || in.dst.size() != 1) return false;
      auto v = fold(in, known);
      if (v) known[in.dst[0]] = *v;
      else known.erase(in.dst[0]);
      ++q;
    }
    return false;
  }
};

bool same_operand(const Operand& a, const Operand& b) {
  return a.kind == b.kind && a.index == b.index && a.imm == b.imm;
}

}  // namespace

bool probe_of_retry_loop(const Program& p, std::uint32_t pc, const std::function<bool(std::uint32_t)>& retry_loop) {
  const Instr& probe = p.code[pc];
  if (probe.op != Opcode::MbarWait || probe.dst.empty() || probe.dst[0] == kNoReg) return false;
  Walk w{p, pc, kBudget, {pc}, {probe.dst[0]}, {}, kNoReg, {}};
  std::array<Known, 2> chain;
  chain[0][probe.dst[0]] = 0;
  chain[1][probe.dst[0]] = 1;
  if (!w.to_decide(pc + 1, chain) || w.decide == kNoReg) return false;
  const Instr& d = p.code[w.decide];
  const auto g0 = value_of(w.at_decide[0], Operand::reg(std::uint32_t(d.guard)));
  const auto g1 = value_of(w.at_decide[1], Operand::reg(std::uint32_t(d.guard)));
  if (!g0 || !g1) return false;
  const bool taken0 = (*g0 != 0) != d.guard_negated, taken1 = (*g1 != 0) != d.guard_negated;
  if (taken0 == taken1) return false;
  const std::uint32_t join = taken1 ? d.target : w.decide + 1, wait_side = taken0 ? d.target : w.decide + 1;
  // The false side, to the retry loop's wait.
  std::vector<std::uint32_t> false_side;
  std::uint32_t loop_wait = kNoReg;
  const auto is_wait = [&](std::uint32_t q) {
    if (p.code[q].op != Opcode::MbarWait) return false;
    loop_wait = q;
    return true;
  };
  if (!w.straight(wait_side, w.at_decide[0], is_wait, &false_side) || loop_wait == pc) return false;
  const Instr& lw = p.code[loop_wait];
  // The same barrier and phase (a suspend-time hint, a third operand, may differ).
  if (lw.guard >= 0 || lw.dst.empty() || lw.dst[0] == kNoReg || lw.src.size() < 2 || probe.src.size() < 2 ||
      (lw.mode & MbarWaitFlags::kParity) != (probe.mode & MbarWaitFlags::kParity))
    return false;
  std::set<std::uint32_t> on_way = w.written;
  for (std::uint32_t q : false_side)
    for (std::uint32_t r : p.code[q].dst) on_way.insert(r);
  for (std::size_t i = 0; i < 2; ++i) {
    if (!same_operand(probe.src[i], lw.src[i])) return false;
    if (probe.src[i].kind == Operand::Kind::Reg && on_way.count(probe.src[i].index)) return false;
  }
  if (!retry_loop(loop_wait)) return false;
  // The loop (its result false, back to the wait) and its exit (true, to the join).
  std::vector<std::uint32_t> loop, exit;
  if (!w.straight(loop_wait + 1, Known{{lw.dst[0], 0}}, [&](std::uint32_t q) { return q == loop_wait; }, &loop) ||
      !w.straight(loop_wait + 1, Known{{lw.dst[0], 1}}, [&](std::uint32_t q) { return q == join; }, &exit))
    return false;
  std::set<std::uint32_t>& mine = w.private_regs;
  mine.insert(lw.dst[0]);
  for (const auto* part : {&false_side, &loop, &exit})
    for (std::uint32_t q : *part) {
      w.region.insert(q);
      for (std::uint32_t r : p.code[q].dst) mine.insert(r);
    }
  w.region.insert(loop_wait);
  for (std::uint32_t q = 0; q < p.code.size(); ++q)
    if (!w.region.count(q) && reads_any(p.code[q], mine)) return false;
  return true;
}

}  // namespace tileverify::machine
