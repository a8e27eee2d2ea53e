// How one CTA's run carries over to other CTAs of the grid (CTA classes,
// docs/architecture.md "CTA classes"). Internal to the library.
//
// A run with RunOptions::cta_affine set gives every integer value, beside
// its value v0 in this CTA c0, a vector L of three integers that says how it
// moves with the CTA index: in CTA c it would be v0 + L·(c - c0). %ctaid.x
// has L = (1,0,0); a value no CTA index reaches has L = 0. The machine
// computes L with the value (add adds them, a product with a value of L = 0
// scales them, ...), and records what has to hold for the claim to be true
// in another CTA:
//   - ranges: the integer operations that are exact modulo 2^n (add, sub,
//     mul.lo, mad.lo, shl, neg) are exact as long as v0 + L·(c - c0) stays
//     in the range of the instruction's type; the extremes of v0 per
//     instruction are kept;
//   - checks: every other operation on a value with L != 0 (a comparison,
//     a division, min, a conversion, ...) is kept with its operands, and is
//     computed again, by the machine's own semantics (int_semantics.hpp), on
//     the operands of CTA c: it must give v0 + Lr·(c - c0) for the Lr the
//     machine gave its result (a comparison, Lr = 0: the same outcome);
//   - accesses: per buffer, the bytes the run touched and their one L: every
//     access to a global buffer moves by the same L (so the accesses of two
//     threads meet in CTA c exactly where they meet in c0) and stays inside
//     the buffer; shared and local memory must not move at all.
// Whatever the run cannot describe so (a value with L != 0 that becomes a
// float, is stored to global memory, feeds an atomic or a warp collective)
// breaks the log: the run then stands for its own CTA only.
//
// If CTA c passes translates_to, then by induction over the trace the run of
// c executes the same instructions in the same order with every integer
// v0 + L·(c - c0): every branch and predicate the same, every shared address
// the same, every global address of buffer b moved by L_b·(c - c0). Its
// float values are c0's with every input element of b moved by as many
// elements, its races, deadlocks and bounds are c0's (the bounds are
// checked here).
#pragma once

#include "tileverify/eval.hpp"
#include "tileverify/program.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tileverify {

class CtaAffineLog {
 public:
  using Vec = std::array<std::int64_t, 3>;
  static constexpr std::uint32_t kZero = 0;  // the id of L = 0

  CtaAffineLog(const Program& p, const Dim3& cta);

  const Dim3& cta() const { return cta_; }

  // ---- vectors, by id (an id per distinct L)
  std::uint32_t intern(const Vec& v);
  const Vec& vec(std::uint32_t id) const { return vecs_[id]; }
  std::uint32_t unit(int axis) { return intern(axis == 0 ? Vec{1, 0, 0} : axis == 1 ? Vec{0, 1, 0} : Vec{0, 0, 1}); }
  // a + b, a - b, a·k, -a; false (and the log broken) when a component overflows.
  bool add(std::uint32_t a, std::uint32_t b, std::uint32_t* out, bool subtract = false);
  bool scale(std::uint32_t a, std::int64_t k, std::uint32_t* out);

  // ---- what the machine records
  // v0 moves by L = lid and must stay in the range of `type`: the result
  // of instruction pc (slot 0), or its operand k read at a narrower type
  // (slot k + 1: mul.wide's factors, cvt's source).
  void range(std::uint32_t pc, std::uint32_t lid, std::int64_t v0, DType type, unsigned slot = 0);
  // Check kinds: how to compute the result again in another CTA.
  enum class Kind : std::uint8_t {
    Instr,       // int_apply on the instruction at pc
    PtrCompare,  // apply_cmp(code[pc].cmp) on two offsets into one buffer (int64)
    WideProduct, // the product part of mad.wide / mul.wide at code[pc].type
    Wrap,        // wrap_int(x, code[pc].type): a load of an integer from memory
    TmaCoord,    // tma_side(x[0], x[1]): a TMA box's coordinate against its dimension
  };
  // A TMA box at coordinate x (as the register holds it) in a dimension of
  // hi + 1 box positions wholly inside the tensor: kBoxInside when it lies
  // wholly inside (0 <= x <= hi, and x an s32, as the copy reads it), else
  // x itself. Two CTAs whose boxes give the same side clip them alike: both
  // not at all, or at the same coordinate.
  static constexpr std::int64_t kBoxInside = INT64_MIN;
  static std::int64_t tma_side(std::int64_t x, std::int64_t hi) {
    return x >= 0 && x <= hi && x <= INT32_MAX ? kBoxInside : x;
  }
  void check(Kind k, std::uint32_t pc, std::size_t n, const std::int64_t* x, const std::uint32_t* l, std::int64_t r,
             std::uint32_t lr);
  // An access of `width` bytes at `byte` of buffer buf (its name, whether it
  // is global memory, its size and element size) whose address moves by lid.
  void access(std::uint32_t pc, std::uint32_t buf, const std::string& name, bool global, std::uint64_t bytes,
              std::uint32_t element_bytes, std::uint32_t lid, std::int64_t byte, std::size_t width);
  // The run cannot be carried to other CTAs: why (the first reason is kept).
  void break_at(std::uint32_t pc, const std::string& why);
  bool broken() const { return !broken_.empty(); }
  const std::string& why_broken() const { return broken_; }

  // ---- using the log
  // Whether CTA c runs this run's trace translated (see above); if not and
  // why is given, the first thing that differs.
  bool translates_to(const Dim3& c, std::string* why = nullptr) const;
  // For CTA c (one translates_to accepts): how many elements each global
  // buffer the run accessed moves, by the buffer's name.
  std::map<std::string, std::int64_t> element_shifts(const Dim3& c) const;
  std::size_t checks() const { return seen_.size(); }

 private:
  struct Range {
    std::int64_t lo, hi;
    DType type;
    std::uint32_t lid;
  };
  struct Check {
    Kind kind;
    std::uint8_t n;
    std::uint32_t pc;
    std::int64_t x[4];
    std::uint32_t l[4];
    std::int64_t r;
    std::uint32_t lr;
  };
  struct Buffer {
    std::string name;
    bool global = true;
    std::uint64_t bytes = 0;
    std::uint32_t element_bytes = 1;
    std::uint32_t lid = 0;
    std::int64_t lo = 0, hi = 0;  // bytes [lo, hi) touched
    std::uint64_t align = 1;      // the widest access: a move must keep it aligned
  };
  struct CheckHash {
    std::size_t operator()(const Check& c) const;
  };
  struct CheckEq {
    bool operator()(const Check& a, const Check& b) const;
  };
  // L·(c - c0), or false on overflow.
  bool moved(std::uint32_t lid, const Vec& d, std::int64_t* out) const;

  const Program& p_;
  Dim3 cta_;
  std::vector<Vec> vecs_;
  std::map<Vec, std::uint32_t> ids_;
  std::unordered_map<std::uint64_t, Range> ranges_;  // by (pc, slot, lid)
  std::unordered_set<Check, CheckHash, CheckEq> seen_;  // each distinct one once
  std::map<std::uint32_t, Buffer> buffers_;
  std::string broken_;
};

}  // namespace tileverify
