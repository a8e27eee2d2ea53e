// Lowering the atomics: atom and red with every operation of the PTX ISA's
// "Parallel Synchronization and Communication Instructions: atom" and
// "...: red" (add, min, max, and, or, xor, exch, inc, dec, cas), in either
// order of their qualifiers (nvcc writes atom.global.add.f32; the inline
// assembly of cuda::atomic_ref writes atom.add.relaxed.gpu.s32), and the
// compare-and-swap loops of CUDA code (lift_cas_loops below), which become
// one read-modify-write. src/eval/machine_memory.cpp runs them; which
// atomics commute, and so never race, is machine_races.cpp's check_atomic.
#include "lower_ops.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <vector>

namespace tileverify::ptx::lowering {

namespace {

using PK = ptx::Operand::Kind;

Space atomic_space(const OpParts& parts) {
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string_view p = parts[i];
    if (starts_with(p, "shared")) return Space::Shared;
    if (is_word(p, "local")) return Space::Local;
    if (is_word(p, "param")) return Space::Param;
    if (is_word(p, "const")) return Space::Const;
  }
  return Space::Global;  // .global, or a generic address (tileverify's pointers know their buffer)
}

}  // namespace

// atom{.sem}{.scope}{.space}.op{.level::cache_hint}.type d, [a], b
// atom{.sem}{.scope}{.space}.cas.type d, [a], b, c
// red{.sem}{.scope}{.space}.op{.level::cache_hint}.type [a], b
// Memory-order and scope qualifiers change nothing here: tileverify orders
// accesses by barriers and warp collectives only (docs/evaluator.md, "Fences").
void lower_atomic(KernelLowering& k, const Instruction& pin, Instr& in, const OpParts& parts) {
  const auto& ops = pin.operands;
  static constexpr std::pair<std::string_view, AtomOp> kOps[] = {
      {"add", AtomOp::Add}, {"min", AtomOp::Min},   {"max", AtomOp::Max}, {"and", AtomOp::And},
      {"or", AtomOp::Or},   {"xor", AtomOp::Xor},   {"exch", AtomOp::Exch}, {"inc", AtomOp::Inc},
      {"dec", AtomOp::Dec}, {"cas", AtomOp::Cas}};
  bool found = false;
  for (std::size_t i = 1; i < parts.size() && !found; ++i)
    for (const auto& [name, op] : kOps)
      if (parts[i] == name) {
        in.mode = std::uint8_t(op);
        found = true;
        break;
      }
  if (!found)
    bad_input(pin.loc, "'" + str(pin.opcode) + "' needs an operation (.add, .min, .max, .and, .or, .xor, .exch, .inc, .dec, .cas)");
  for (std::size_t i = 1; i < parts.size(); ++i)
    if (parts[i] == "f16x2" || parts[i] == "bf16x2" || parts[i] == "v2" || parts[i] == "v4" || parts[i] == "v8" ||
        starts_with(parts[i], "L2::") || parts[i] == "b128")
      fail(pin.loc, "'" + str(pin.opcode) + "' is not supported (packed, vector, 128-bit and cache-hint atomics are not)");
  const AtomOp op = AtomOp(in.mode);
  const bool red = parts[0] == "red";
  if (red && (op == AtomOp::Exch || op == AtomOp::Cas))
    bad_input(pin.loc, "'" + str(pin.opcode) + "': red has no ." + atom_op_name(op) + " (atom has)");
  // The PTX ISA defines inc and dec on .u32 only; nvcc emits no other.
  if ((op == AtomOp::Inc || op == AtomOp::Dec) && in.type != DType::U32)
    fail(pin.loc, "'" + str(pin.opcode) + "' is not supported: atom." + atom_op_name(op) + " is modelled on .u32 only");
  in.op = Opcode::Atom;
  in.space = atomic_space(parts);
  in.cluster_space = has_part(parts, "shared::cluster");
  if (in.space == Space::Const || in.space == Space::Param || in.space == Space::Local)
    bad_input(pin.loc, "'" + str(pin.opcode) + "': atomics are on .global or .shared memory only");
  const std::size_t values = op == AtomOp::Cas ? 2 : 1;  // b, or b and c
  const std::size_t a = red ? 0 : 1;
  if (ops.size() != a + 1 + values)
    bad_input(pin.loc, "'" + str(pin.opcode) + "' takes " + std::to_string(a + 1 + values) + " operands, not " +
                           std::to_string(ops.size()));
  // An atom whose destination is the sink '_' is a red.
  if (!red && ops[0].kind != PK::Sink) in.dst = {k.reg_of(ops[0])};
  if (ops[a].kind != PK::Address) bad_input(ops[a].loc, "'" + str(pin.opcode) + "' expects an address [..] here");
  in.src = {k.address(ops[a]), k.value(ops[a + 1])};
  if (values == 2) in.src.push_back(k.value(ops[a + 2]));
}

// ---------------------------------------------------------------- CAS loops
//
// CUDA builds the atomics the hardware lacks (a float max, a double add
// before sm_60, any other update) from atomicCAS (CUDA C++ Programming Guide,
// "Atomic Functions": "any atomic operation can be implemented based on
// atomicCAS()"):
//   old = *addr;  do { assumed = old; old = atomicCAS(addr, assumed, f(assumed)); } while (assumed != old);
// nvcc 13 at -O3 (sm_80, sm_90) compiles it to one block that branches back
// to itself:
//   ld.global.u32 %r8, [%rd1];
//   L: mov.b32 %f2, %r8;  max.f32 %f3, %f1, %f2;  mov.b32 %r6, %f3;
//      atom.global.cas.b32 %r4, [%rd1], %r8, %r6;
//      setp.ne.s32 %p2, %r8, %r4;  mov.u32 %r8, %r4;  @%p2 bra L;
// (or with the carried value moved into `assumed` at the top). The CAS
// succeeds exactly when memory still holds what the attempt read, and then
// stores f of it; the loop ends then. So every run of the loop is one atomic
// read-modify-write applying f, and its registers at the exit are those of
// an attempt that started from the value the CAS found. When f is one
// operation of the old value and a value the loop does not change (add,
// mul, min, max, or a constant: exch), the loop is rewritten, in place and
// with the same number of instructions, to
//   L: atom.max.f32 %r8, [%rd1], %f1   (the CAS loop: old value into the carried register)
//      the attempt's instructions, with the CAS as mov %r4, %r8 (it returned
//      what it compared with) and the exit test as its value at the exit,
//   and no branch back;
// and the first read (the ld before the loop that sets the carried register)
// becomes a relaxed atomic load: its value only picks the first attempt's
// guess, it is not a read that races with the other threads' updates.
// The form that retries while val > old (a float comparison) is read too
// (while_form). Anything else the loop does makes it a loop tileverify cannot read: its CAS
// becomes unsupported, naming the loop's lines and the reason. A CAS whose
// result no branch back depends on is a single CAS (atom.cas).

namespace {

bool pure_register_op(Opcode op) {
  switch (op) {
    case Opcode::Mov: case Opcode::Cvt: case Opcode::Selp: case Opcode::Add: case Opcode::Sub: case Opcode::Mul:
    case Opcode::MulHi: case Opcode::MulWide: case Opcode::Mad: case Opcode::MadWide: case Opcode::Fma:
    case Opcode::Div: case Opcode::Rem: case Opcode::Min: case Opcode::Max: case Opcode::Neg: case Opcode::Abs:
    case Opcode::And: case Opcode::Or: case Opcode::Xor: case Opcode::Not: case Opcode::Shl: case Opcode::Shr:
    case Opcode::Rcp: case Opcode::Sqrt: case Opcode::Rsqrt: case Opcode::Ex2: case Opcode::Exp: case Opcode::Lg2:
    case Opcode::Tanh: case Opcode::Setp: case Opcode::Bfi: case Opcode::Bfe:
      return true;
    default: return false;
  }
}

bool same_operand(const tileverify::Operand& a, const tileverify::Operand& b) {
  return a.kind == b.kind && a.index == b.index && a.imm == b.imm;
}

// One attempt of a loop, run symbolically: what each register holds, as a
// term over what the registers held when the attempt began.
class Attempt {
 public:
  struct Term {
    enum Kind : std::uint8_t { In, Leaf, Old, Result };
    Kind kind = Leaf;
    std::uint32_t reg = 0;      // In: the register
    tileverify::Operand leaf;   // Leaf: an immediate, a special register, a buffer or parameter address
    std::uint32_t pc = 0;       // Result: the instruction
    std::vector<int> args;      // Result: its operands' terms
  };

  explicit Attempt(const Program& p) : p_(p) {}

  int of(const tileverify::Operand& o) {
    if (o.kind == tileverify::Operand::Kind::Reg && o.imm == 0) {
      auto it = now_.find(o.index);
      if (it != now_.end()) return it->second;
      auto in = in_.find(o.index);
      if (in != in_.end()) return in->second;
      Term t;
      t.kind = Term::In;
      t.reg = o.index;
      terms_.push_back(t);
      return in_[o.index] = int(terms_.size() - 1);
    }
    for (std::size_t i = 0; i < terms_.size(); ++i)
      if (terms_[i].kind == Term::Leaf && same_operand(terms_[i].leaf, o)) return int(i);
    Term t;
    t.kind = Term::Leaf;
    t.leaf = o;
    terms_.push_back(t);
    return int(terms_.size() - 1);
  }
  // Runs instruction pc (a pure one) of the attempt.
  void step(std::uint32_t pc) {
    const Instr& in = p_.code[pc];
    if (in.op == Opcode::Mov && in.src.size() == 1 && in.dst.size() == 1) {  // moves keep the value (floats in b32 registers too)
      now_[in.dst[0]] = of(in.src[0]);
      return;
    }
    Term t;
    t.kind = Term::Result;
    t.pc = pc;
    for (const tileverify::Operand& o : in.src) t.args.push_back(of(o));
    terms_.push_back(t);
    for (std::uint32_t d : in.dst) now_[d] = int(terms_.size() - 1);
  }
  // The CAS at pc returns the old value into its destination.
  int cas(std::uint32_t pc) {
    Term t;
    t.kind = Term::Old;
    terms_.push_back(t);
    now_[p_.code[pc].dst[0]] = int(terms_.size() - 1);
    return int(terms_.size() - 1);
  }
  int reg(std::uint32_t r) { return of(tileverify::Operand::reg(r)); }
  const Term& operator[](int i) const { return terms_[std::size_t(i)]; }
  // The registers whose start-of-attempt value the attempt read.
  const std::unordered_map<std::uint32_t, int>& inputs() const { return in_; }

 private:
  const Program& p_;
  std::vector<Term> terms_;
  std::unordered_map<std::uint32_t, int> now_, in_;
};

struct Update {
  AtomOp op = AtomOp::Add;
  DType type = DType::B32;
  tileverify::Operand operand;
};

// A loop around a CAS: [head, back] with the branch back at `back`, and the
// branch that decides whether to try again at `test`: the branch back itself
// (@%p bra head: retry while %p), or a branch out just before an
// unconditional branch back (@%p bra out; bra.uni head: leave when %p), as
// nvcc writes the loop in either order.
struct Loop {
  std::uint32_t head = 0, cas = 0, test = 0, back = 0;
  bool leaves() const { return test != back; }  // the test branch leaves the loop
};

class CasLoopLifter {
 public:
  explicit CasLoopLifter(Program& p) : p_(p), target_(p.code.size() + 1, false) {
    for (const Instr& in : p_.code)
      if (in.op == Opcode::Bra && in.target < target_.size()) target_[in.target] = true;
  }

  void run() {
    // From the last CAS back, so that nothing a rewrite changes is looked at again.
    for (std::size_t i = p_.code.size(); i-- > 0;) {
      const Instr& in = p_.code[i];
      if (in.op != Opcode::Atom || AtomOp(in.mode) != AtomOp::Cas || in.dst.empty()) continue;
      Loop l;
      l.cas = std::uint32_t(i);
      if (!retry_loop(&l)) continue;  // a single CAS
      std::string why;
      if (!lift(l, &why)) refuse(l, why);
    }
  }

 private:
  // Whether the CAS at l->cas is retried: the nearest branch back over it
  // closes a loop whose test depends on what the CAS returned.
  bool retry_loop(Loop* l) {
    bool found = false;
    for (std::uint32_t j = l->cas + 1; j < p_.code.size() && !found; ++j)
      if (p_.code[j].op == Opcode::Bra && p_.code[j].target <= l->cas) {
        l->back = j;
        found = true;
      }
    if (!found) return false;
    l->head = p_.code[l->back].target;
    l->test = l->back;
    if (p_.code[l->back].guard < 0) {
      const std::uint32_t j = l->back - 1;
      const Instr& out = p_.code[j];
      if (j <= l->cas || out.op != Opcode::Bra || out.guard < 0 || (out.target >= l->head && out.target <= l->back))
        return false;
      l->test = j;
    }
    // The registers the CAS's result reaches within the loop, over two passes
    // (a value carried to the next attempt reaches the top of the loop).
    std::vector<std::uint32_t> tainted = {p_.code[l->cas].dst[0]};
    auto is_tainted = [&](std::uint32_t r) { return std::find(tainted.begin(), tainted.end(), r) != tainted.end(); };
    for (int pass = 0; pass < 2; ++pass)
      for (std::uint32_t j = l->head; j < l->test; ++j) {
        const Instr& in = p_.code[j];
        bool reads = false;
        for (const tileverify::Operand& o : in.src)
          reads = reads || (o.kind == tileverify::Operand::Kind::Reg && is_tainted(o.index));
        if (reads)
          for (std::uint32_t d : in.dst)
            if (d != kNoReg && !is_tainted(d)) tainted.push_back(d);
      }
    return is_tainted(std::uint32_t(p_.code[l->test].guard));
  }

  std::string lines(const Loop& l) const {
    const SourceLoc& first = p_.code[l.head].loc;
    const SourceLoc& last = p_.code[l.back].loc;
    std::string s = first.file.str() + ":" + std::to_string(first.line) + "-" + std::to_string(last.line);
    if (!first.source.empty()) s += " (" + first.source.str() + ")";
    return s;
  }

  void refuse(const Loop& l, const std::string& why) {
    Instr& in = p_.code[l.cas];
    std::string text = p_.instr_text(l.cas);
    text = text.substr(0, text.find(' '));
    const std::string msg = "'" + text + "' is not supported: the compare-and-swap loop at " + lines(l) +
                            " is not one atomic read-modify-write that tileverify can read (" + why +
                            "); a loop that reads the element, computes the new value from the value read with one "
                            "add, mul, min or max and a value the loop does not change, and retries until the CAS "
                            "succeeds is (docs/evaluator.md, \"Compare-and-swap loops\")";
    in.op = Opcode::Unsupported;
    in.dst.clear();
    in.src = {tileverify::Operand::integer(std::int64_t(p_.unsupported.size()))};
    p_.unsupported.push_back({text, msg});
  }

  std::string at(std::uint32_t pc) const { return "line " + std::to_string(p_.code[pc].loc.line); }

  bool lift(const Loop& l, std::string* why) {
    const Instr& cas = p_.code[l.cas];
    const Instr& test = p_.code[l.test];
    for (std::uint32_t j = l.head + 1; j <= l.back; ++j)
      if (target_[j]) return *why = "a branch enters it at " + at(j), false;
    if (cas.guard >= 0) return *why = "the CAS is predicated", false;
    for (std::uint32_t j = l.head; j < l.test; ++j) {
      if (j == l.cas) continue;
      const Instr& in = p_.code[j];
      if (in.op == Opcode::Bra) return *why = "it branches at " + at(j) + " too", false;
      if (!pure_register_op(in.op))
        return *why = "it also runs '" + p_.instr_text(j) + "' at " + at(j) + ", which is not arithmetic on registers", false;
      if (in.guard >= 0) return *why = "'" + p_.instr_text(j) + "' at " + at(j) + " is predicated", false;
    }
    // Everything the loop writes: a register it also reads before writing it
    // carries a value from one attempt to the next.
    std::vector<std::uint32_t> written;
    for (std::uint32_t j = l.head; j < l.test; ++j)
      for (std::uint32_t d : p_.code[j].dst) written.push_back(d);
    auto is_written = [&](std::uint32_t r) { return std::find(written.begin(), written.end(), r) != written.end(); };

    Attempt a(p_);
    int old = -1, cmp = -1, now = -1, where = -1;
    for (std::uint32_t j = l.head; j < l.test; ++j) {
      if (j != l.cas) {
        a.step(j);
        continue;
      }
      cmp = a.of(cas.src[1]);
      now = a.of(cas.src[2]);
      if (cas.src[0].kind == tileverify::Operand::Kind::Reg) where = a.reg(cas.src[0].index);
      old = a.cas(l.cas);
    }
    // The address, as the read-modify-write at the loop's top can name it: a
    // register the loop does not write, or what the loop moves into one (a
    // variable's address).
    tileverify::Operand address = cas.src[0];
    if (where >= 0) {
      const Attempt::Term x = a[where];
      if (x.kind == Attempt::Term::In && !is_written(x.reg)) {
        address = tileverify::Operand::reg(x.reg, cas.src[0].imm);
      } else if (x.kind == Attempt::Term::Leaf && (x.leaf.kind == tileverify::Operand::Kind::Buffer ||
                                                   x.leaf.kind == tileverify::Operand::Kind::Param)) {
        address = x.leaf;
        address.imm += cas.src[0].imm;
      } else {
        return *why = "its address is computed inside the loop", false;
      }
    }
    const Attempt::Term assumed = a[cmp];  // copies: a grows as it is asked
    if (assumed.kind != Attempt::Term::In)
      return *why = "the CAS compares with " +
                    (assumed.kind == Attempt::Term::Leaf ? std::string("a constant") : std::string("a value computed in the loop")) +
                    ", not with the value the loop read (a lock or a flag: it waits for another thread)",
             false;
    if (!is_written(assumed.reg))
      return *why = "the CAS compares with '" + p_.registers[assumed.reg].name +
                    "', which the loop does not change, not with the value the loop read (such a loop waits for "
                    "memory to hold that value)",
             false;
    // Retry exactly while the CAS returned another value than it compared
    // with: the test branch fires on "differ" when it goes back, on "equal"
    // when it leaves.
    const Attempt::Term g = a[a.reg(std::uint32_t(test.guard))];
    const bool compares = g.kind == Attempt::Term::Result && p_.code[g.pc].op == Opcode::Setp && g.args.size() == 2 &&
                          ((g.args[0] == old && g.args[1] == cmp) || (g.args[0] == cmp && g.args[1] == old)) &&
                          !dtype_is_float(p_.code[g.pc].type) &&
                          (p_.code[g.pc].cmp == Cmp::NE || p_.code[g.pc].cmp == Cmp::EQ);
    const bool fires_on_equal = compares && ((p_.code[g.pc].cmp == Cmp::EQ) != test.guard_negated);
    const std::uint32_t carried = assumed.reg;
    if (a.reg(carried) != old)
      return *why = "the value the next attempt compares with is not what the CAS returned (a lock or a flag: it "
                    "waits for another thread)",
             false;
    for (const auto& [r, term] : a.inputs())
      if (r != carried && is_written(r))
        return *why = "it carries '" + p_.registers[r].name + "' from one attempt to the next besides the value read", false;
    Update u;
    std::uint32_t skip = kNoSkip;  // the "while" form's branch around the loop
    const std::string not_retry =
        "its test at " + at(l.test) + " is not 'try again while the CAS returned another value than it compared with'";
    if (!compares) {
      if (!while_form(l, a, g, old, now, carried, address, &u, &skip)) return *why = not_retry, false;
    } else if (fires_on_equal != l.leaves()) {
      return *why = not_retry, false;
    } else if (!update_of(a, now, cmp, dtype_bytes(cas.type), &u, why)) {
      return false;
    }

    // The rewrite, in place: the read-modify-write, the attempt's
    // instructions as they run in the attempt that succeeds, the test branch
    // when it leaves; no branch back.
    Instr rmw;
    rmw.op = Opcode::Atom;
    rmw.mode = std::uint8_t(u.op);
    rmw.type = u.type;
    rmw.space = cas.space;
    rmw.cluster_space = cas.cluster_space;
    rmw.shape = 1;
    rmw.loc = cas.loc;
    rmw.dst = {carried};
    rmw.src = {address, u.operand};
    std::vector<Instr> body;
    body.reserve(l.back - l.head + 1);
    body.push_back(rmw);
    for (std::uint32_t j = l.head; j < l.test; ++j) {
      Instr in = p_.code[j];
      if (j == l.cas) {  // it returned what it compared with
        Instr mv;
        mv.op = Opcode::Mov;
        mv.type = in.type;
        mv.dst = in.dst;
        mv.src = {in.src[1]};
        mv.loc = in.loc;
        in = mv;
      } else if (j == g.pc) {  // the test's value in the attempt that succeeds
        in.cmp = l.leaves() != test.guard_negated ? Cmp::EQ : Cmp::NE;
        in.type = DType::U32;
        in.src = {tileverify::Operand::integer(0), tileverify::Operand::integer(0)};
      }
      body.push_back(in);
    }
    if (l.leaves()) body.push_back(test);  // now always taken
    std::copy(body.begin(), body.end(), p_.code.begin() + l.head);
    if (skip != kNoSkip) {  // the loop now runs whatever the first read saw: the branch around it goes
      Instr& in = p_.code[skip];
      const std::uint32_t pred = std::uint32_t(in.guard);
      Instr mv;
      mv.op = Opcode::Mov;
      mv.type = DType::Pred;
      mv.dst = {pred};
      mv.src = {tileverify::Operand::reg(pred)};
      mv.loc = in.loc;
      in = mv;
    }
    first_reads(l, carried, dtype_bytes(cas.type));
    return true;
  }

  static constexpr std::uint32_t kNoSkip = 0xffffffffu;

  // The form `while (val > __int_as_float(old)) { assumed = old; old =
  // atomicCAS(a, assumed, __float_as_int(val)); }` (a float max; with < a
  // min), as nvcc 13 -O3 writes it:
  //   ld.shared.u32 %r8, [m];  mov.b32 %f2, %r8;  ...  setp.leu.f32 %p2, %f1, %f2;  @%p2 bra OUT;
  //   mov.b32 %r3, %f1;  ...
  //   L: atom.shared.cas.b32 %r8, [a], %r8, %r3;  mov.b32 %f3, %r8;  setp.gt.f32 %p3, %f1, %f3;  @%p3 bra L;
  //   OUT:
  // It stores val while memory holds less, so its CAS that succeeds stores
  // max(old, val); it stores nothing when it sees val or more, which max
  // leaves alike, provided memory cannot have dropped below what it saw: the
  // test before the loop must be of the first read of the element itself,
  // with nothing but arithmetic and loads between that read and the loop
  // (the other threads' updates that do not race with an atom.max are
  // maxima). Read as atom.max val; the branch around the loop (*skip)
  // becomes a no-op. The registers the loop leaves hold what its last CAS
  // saw in the code and the old value in the rewrite: both depend on the
  // schedule, and both are marked.
  bool while_form(const Loop& l, Attempt& a, const Attempt::Term& g, int old, int now, std::uint32_t carried,
                  const tileverify::Operand& address, Update* u, std::uint32_t* skip) {
    if (l.leaves() || p_.code[l.test].guard_negated || g.kind != Attempt::Term::Result || g.args.size() != 2) return false;
    const Instr& test = p_.code[g.pc];
    const std::size_t width = dtype_bytes(p_.code[l.cas].type);
    if (test.op != Opcode::Setp || !dtype_is_float(test.type) || dtype_bytes(test.type) != width) return false;
    // Retry while val > old (max) or val < old (min), either way round.
    int val = -1;
    bool greater = false;
    if (g.args[1] == old && (test.cmp == Cmp::GT || test.cmp == Cmp::LT)) {
      val = g.args[0];
      greater = test.cmp == Cmp::GT;
    } else if (g.args[0] == old && (test.cmp == Cmp::GT || test.cmp == Cmp::LT)) {
      val = g.args[1];
      greater = test.cmp == Cmp::LT;
    } else {
      return false;
    }
    const Attempt::Term v = a[val], n = a[now];
    if (v.kind != Attempt::Term::In || n.kind != Attempt::Term::In) return false;
    // The CAS stores the bits of val: its operand's one write in the kernel
    // is a move from val's register, which is written once too.
    const Instr* bits = only_write(n.reg);
    if (!bits || !only_write(v.reg) || bits->op != Opcode::Mov || bits->src.size() != 1 ||
        bits->src[0].kind != tileverify::Operand::Kind::Reg || bits->src[0].index != v.reg || bits->src[0].imm != 0)
      return false;
    // Back from the loop through straight code (arithmetic, loads, the one
    // branch around the loop) to the first read of the element.
    std::uint32_t branch = kNoSkip, test_pc = kNoSkip, view = carried, read = kNoSkip;
    for (std::uint32_t j = l.head; j-- > 0 && read == kNoSkip;) {
      const Instr& in = p_.code[j];
      if (target_[j + 1] && j + 1 != l.head) return false;
      const bool writes = [&](std::uint32_t r) { return std::find(in.dst.begin(), in.dst.end(), r) != in.dst.end(); }(carried);
      // val must hold the same value at the test and in the loop
      if (test_pc == kNoSkip && std::find(in.dst.begin(), in.dst.end(), v.reg) != in.dst.end()) return false;
      if (in.op == Opcode::Bra) {
        if (branch != kNoSkip || in.target != l.back + 1 || in.guard < 0 || in.guard_negated) return false;
        branch = j;
      } else if (branch != kNoSkip && test_pc == kNoSkip && in.guard < 0 &&
                 std::find(in.dst.begin(), in.dst.end(), std::uint32_t(p_.code[branch].guard)) != in.dst.end()) {
        // not (val > x) is val <= x or x >= val; not (val < x) is val >= x or x <= val
        if (in.op != Opcode::Setp || !dtype_is_float(in.type) || in.src.size() != 2) return false;
        const auto is = [](const tileverify::Operand& o, std::uint32_t r) {
          return o.kind == tileverify::Operand::Kind::Reg && o.index == r && o.imm == 0;
        };
        const int at_val = is(in.src[0], v.reg) ? 0 : is(in.src[1], v.reg) ? 1 : -1;
        if (at_val < 0 || in.src[1 - at_val].kind != tileverify::Operand::Kind::Reg) return false;
        if (in.cmp != ((greater == (at_val == 0)) ? Cmp::LE : Cmp::GE)) return false;
        test_pc = j;
        view = in.src[1 - at_val].index;
      } else if (test_pc != kNoSkip && view != carried && std::find(in.dst.begin(), in.dst.end(), view) != in.dst.end()) {
        // the test's operand: a move of the carried register
        if (in.op != Opcode::Mov || in.guard >= 0 || in.src.size() != 1 || in.src[0].kind != tileverify::Operand::Kind::Reg ||
            in.src[0].index != carried || in.src[0].imm != 0)
          return false;
        view = carried;
      } else if (writes) {
        // the first read: a load of the element the CAS updates, before the test
        if (in.op != Opcode::Ld || in.guard >= 0 || in.dst.size() != 1 || dtype_bytes(in.type) != width ||
            (branch != kNoSkip && (test_pc == kNoSkip || view != carried)) ||
            resolved(in.src[0]).kind == tileverify::Operand::Kind::None ||
            !same_operand(resolved(in.src[0]), resolved(address)))
          return false;
        read = j;
      } else if (!pure_register_op(in.op) && in.op != Opcode::Ld) {
        return false;
      }
      if (in.guard >= 0 && in.op != Opcode::Bra) return false;
    }
    // Without the test before it, the loop's first CAS would store val over
    // a larger value it read: that is not a max.
    if (read == kNoSkip || branch == kNoSkip || test_pc == kNoSkip || view != carried) return false;
    *skip = branch;
    u->op = greater ? AtomOp::Max : AtomOp::Min;
    u->type = test.type;
    u->operand = tileverify::Operand::reg(v.reg);
    return true;
  }

  // The one instruction of the kernel that writes register r, or null.
  const Instr* only_write(std::uint32_t r) const {
    const Instr* w = nullptr;
    for (const Instr& in : p_.code)
      if (std::find(in.dst.begin(), in.dst.end(), r) != in.dst.end()) {
        if (w) return nullptr;
        w = &in;
      }
    return w;
  }

  // An address as a variable's or parameter's, when it is a register that a
  // single move of one sets; else a register written once, as it is.
  tileverify::Operand resolved(const tileverify::Operand& o) const {
    if (o.kind != tileverify::Operand::Kind::Reg) return o;
    const Instr* w = only_write(o.index);
    if (!w) return tileverify::Operand{};  // kind None: equal to nothing that is resolved
    if (w->op == Opcode::Mov && w->src.size() == 1 && w->guard < 0 &&
        (w->src[0].kind == tileverify::Operand::Kind::Buffer || w->src[0].kind == tileverify::Operand::Kind::Param)) {
      tileverify::Operand b = w->src[0];
      b.imm += o.imm;
      return b;
    }
    return o;
  }

  // f(old) = now: one operation of the value the loop read (the term cmp)
  // and a value the loop does not change, or that value alone (exch).
  bool update_of(Attempt& a, int now, int cmp, std::size_t width, Update* u, std::string* why) {
    const std::uint32_t carried = a[cmp].reg;
    auto invariant = [&](int t, tileverify::Operand* o) {
      const Attempt::Term x = a[t];
      if (x.kind == Attempt::Term::Leaf) {
        *o = x.leaf;
        return true;
      }
      if (x.kind == Attempt::Term::In && x.reg != carried) {
        *o = tileverify::Operand::reg(x.reg);
        return true;  // registers the loop writes were refused above
      }
      return false;
    };
    const Attempt::Term n = a[now];
    if (invariant(now, &u->operand)) {  // f(old) = v: an exchange
      u->op = AtomOp::Exch;
      u->type = width == 8 ? DType::B64 : width == 2 ? DType::B16 : DType::B32;
      return true;
    }
    if (n.kind != Attempt::Term::Result) return *why = "it stores back the value it read", false;
    const Instr& f = p_.code[n.pc];
    if ((f.op == Opcode::Add || f.op == Opcode::Mul || f.op == Opcode::Min || f.op == Opcode::Max) && n.args.size() == 2) {
      const int other = n.args[0] == cmp ? n.args[1] : n.args[1] == cmp ? n.args[0] : -1;
      if (other < 0 || !invariant(other, &u->operand))
        return *why = "'" + p_.instr_text(n.pc) + "' at " + at(n.pc) +
                      " does not combine the value read with a value the loop does not change",
               false;
      u->op = f.op == Opcode::Add ? AtomOp::Add : f.op == Opcode::Mul ? AtomOp::Mul : f.op == Opcode::Min ? AtomOp::Min : AtomOp::Max;
      u->type = f.type;
    } else if (f.op == Opcode::Selp && n.args.size() == 3 && a[n.args[2]].kind == Attempt::Term::Result &&
               p_.code[a[n.args[2]].pc].op == Opcode::Setp && a[n.args[2]].args.size() == 2) {
      // max and min as a comparison and a select (cuda::atomic_ref<float>::fetch_max):
      // selp d, x, y, (p cmp q) with {x, y} = {p, q}.
      const Attempt::Term test = a[n.args[2]];
      const Instr& setp = p_.code[test.pc];
      const int p = test.args[0], q = test.args[1], x = n.args[0], y = n.args[1];
      const bool straight = x == p && y == q, crossed = x == q && y == p;
      const bool greater = setp.cmp == Cmp::GT || setp.cmp == Cmp::GE, less = setp.cmp == Cmp::LT || setp.cmp == Cmp::LE;
      const int other = p == cmp ? q : q == cmp ? p : -1;
      if (!(straight || crossed) || !(greater || less) || other < 0 || !invariant(other, &u->operand))
        return *why = "'" + p_.instr_text(n.pc) + "' at " + at(n.pc) +
                      " is not the larger or smaller of the value read and a value the loop does not change",
               false;
      u->op = greater == straight ? AtomOp::Max : AtomOp::Min;
      u->type = setp.type;
    } else {
      return *why = "it computes the new value with '" + p_.instr_text(n.pc) + "' at " + at(n.pc) +
                    ", not with one add, mul, min or max of the value read",
             false;
    }
    if (dtype_bytes(u->type) != width || u->type == DType::Pred)
      return *why = "the update's type " + std::string(dtype_name(u->type)) + " is not the CAS's width", false;
    return true;
  }

  // The loads that set the carried register on the paths into the loop (the
  // loop's first read: `old = *addr`) become relaxed atomic loads. Found by
  // walking the code back from the loop's head to the nearest write of the
  // register on each path; a path through a barrier or another collective
  // stops the walk: a load before it may be ordered before the other
  // threads' updates, and then it is an ordinary read with one value.
  void first_reads(const Loop& l, std::uint32_t carried, std::size_t width) {
    std::vector<std::vector<std::uint32_t>> from(p_.code.size());  // branches to each pc
    for (std::uint32_t j = 0; j < p_.code.size(); ++j)
      if (p_.code[j].op == Opcode::Bra && p_.code[j].target < p_.code.size()) from[p_.code[j].target].push_back(j);
    std::vector<bool> seen(p_.code.size(), false);
    std::vector<std::uint32_t> work;
    auto enter = [&](std::uint32_t pc) {  // the instructions control reaches `pc` from
      if (pc > 0) {
        const Instr& prev = p_.code[pc - 1];
        const bool falls = !(prev.op == Opcode::Ret || (prev.op == Opcode::Bra && prev.guard < 0));
        if (falls && !(pc - 1 >= l.head && pc - 1 <= l.back)) work.push_back(pc - 1);
      }
      for (std::uint32_t j : from[pc])
        if (!(j >= l.head && j <= l.back)) work.push_back(j);
    };
    enter(l.head);
    while (!work.empty()) {
      const std::uint32_t j = work.back();
      work.pop_back();
      if (seen[j]) continue;
      seen[j] = true;
      Instr& in = p_.code[j];
      if (!pure_register_op(in.op) && in.op != Opcode::Ld && in.op != Opcode::St && in.op != Opcode::Atom &&
          in.op != Opcode::Bra && in.op != Opcode::Fence)
        continue;
      if (std::find(in.dst.begin(), in.dst.end(), carried) != in.dst.end()) {
        if (in.op == Opcode::Ld && in.guard < 0 && in.dst.size() == 1 && in.src.size() == 1 &&
            dtype_bytes(in.type) == width && (in.space == Space::Global || in.space == Space::Shared)) {
          in.op = Opcode::Atom;
          in.mode = std::uint8_t(AtomOp::Load);
        }
        continue;
      }
      enter(j);
    }
  }

  Program& p_;
  std::vector<bool> target_;
};

}  // namespace

void lift_cas_loops(Program& p) {
  bool any = false;
  for (const Instr& in : p.code) any = any || (in.op == Opcode::Atom && AtomOp(in.mode) == AtomOp::Cas);
  if (any) CasLoopLifter(p).run();
}

}  // namespace tileverify::ptx::lowering
