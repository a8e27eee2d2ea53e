// tileverify/decide.hpp — deciding whether two real expressions are equal.
//
// Contract: decide_equal(ctx, a, b) answers
//   Proved   — a and b are the same function over the reals, for all inputs.
//              Only ever from an exact argument: equal exp-polynomial normal
//              forms (exact rational coefficients), or an SMT proof (Z3) of one
//              case of a max/min/select case split. Never from sampling.
//   Refuted  — with a counterexample: input values on which both sides were
//              evaluated (MPFR, 256 bits) and differ.
//   Unknown  — with a reason: a limit was hit, or neither a proof nor a
//              confirmed counterexample was found.
//
// The procedure follows VOLTA (Appendix A): identities Σ p_i(x)·e^{h_i(x)} = 0
// are decided by normalizing every exponent with exp(h) = e^{h(0)}·exp(h−h(0))
// and comparing coefficients. Division is handled on rational functions whose
// numerator and denominator are kept in a canonical scaled form, so equal
// denominators (the Σe^{x_j−m} of every softmax row) are recognized without
// cross-multiplying. max/min/select are first treated as opaque atoms; if that
// does not prove the identity, the decider splits on which argument wins,
// with Z3 pruning infeasible cases.
//
// Modelling decisions (see docs/decide.md): 2^y = exp(y·ln2), and the float
// constants nvcc uses for log2(e) and ln(2) (the known_constants() table) are
// read as the real numbers 1/ln2 and ln2 when they scale an exponent; so are
// the kernels' constants rounded from c · log2(e) (within 1 ulp:
// DecideLimits::constant_readings, read_rounded_constants).
#pragma once

#include "tileverify/expr.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tileverify {

// A float a kernel holds: an immediate of its code or a scalar float argument.
struct KernelConstant {
  Rational value;     // exactly the float
  bool f64 = false;   // its format: f64, else f32 (f64 if the value is no f32); the tolerance is 1 ulp of it
  std::string where;  // for the report: "opt (attn_fa2)", "the scalar argument params[4]"
};

// A constant read as an exact product inside exponents (docs/decide.md,
// "Constants rounded from products"): `value` reads as
// factor · ln2^ln2_power, so factor · log2(e) for ln2_power = -1.
// ln2_power = 0: not read (the note says why).
struct ConstantReading {
  Rational value;
  Rational factor;
  int ln2_power = -1;
  // Empty for an exact product c · (a known_constants() float); else what
  // the report says: the float, where it is, what it is read as and how
  // close it is (a rounded product, read within 1 ulp of its format).
  std::string note;
};

struct DecideLimits {
  std::size_t max_terms = 2'000'000;   // terms in any one normal form (or product)
  std::size_t max_case_splits = 4096;  // leaves of one max/min/select case split
  double timeout_seconds = 60;         // wall clock per decision
  int max_power = 64;                  // largest |k| of x^k that is expanded
  unsigned witness_attempts = 40;      // random points tried to confirm a refutation
  unsigned z3_timeout_ms = 1000;       // per Z3 query (case splits)
  std::uint64_t seed = 0x7113;         // for the random points; decisions are reproducible
  // A wall-clock end for everything decided with these limits (the CLI's
  // --timeout): decisions still running then, or started later, give Unknown.
  // check_equivalence ends its whole check there (reading, running, deciding).
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // Called as decisions finish (done of total), from the deciding threads but
  // never concurrently; for progress output on long checks.
  std::function<void(std::size_t done, std::size_t total)> progress;
  // decide_all: once one pair is refuted, leave the rest Unknown ("not
  // decided: ...") instead of deciding them; for a yes/no answer over many
  // outputs, where the first counterexample is the answer.
  bool stop_at_first_refuted = false;
  // Threads for the checks that decide many outputs (check_equivalence);
  // 0: one per hardware thread. decide_all takes its own argument.
  unsigned threads = 0;
  // check_equivalence: bytes the kernel runs may allocate (RunLimits); 0:
  // default_memory_budget(). With "ctas": "all", grid_progress is called
  // after each CTA a kernel runs (done of total).
  std::uint64_t max_memory_bytes = 0;
  std::function<void(std::uint64_t done, std::uint64_t total)> grid_progress;
  // check_equivalence: the kernel runs are strict (RunOptions::strict); a
  // spec's "strict": true turns it on too.
  bool strict = false;
  // check_equivalence with "ctas": "all": CTA classes and sharding
  // (RunLimits::cta_classes, shard_index, shard_count).
  bool cta_classes = true;
  // RunLimits::thread_classes.
  bool thread_classes = true;
  unsigned shard_index = 0, shard_count = 1;
  // Constants of the two kernels read as exact products inside exponents,
  // after the known_constants() table (read_rounded_constants;
  // check_equivalence sets it from both kernels' constants, replacing what
  // is given here).
  std::vector<ConstantReading> constant_readings;
  // Inputs are finite values of their dtype (docs/decide.md, "Finite
  // inputs"): every element of `tensor` lies in [lo, hi] (for f32 inputs
  // ±FLT_MAX), so max(x, -FLT_MAX) is x. check_equivalence sets it from the
  // spec's params; a tensor not listed has no bound.
  struct InputRange {
    std::string tensor;
    Rational lo, hi;
  };
  std::vector<InputRange> input_ranges;
};

enum class Verdict { Proved, Refuted, Unknown };
const char* verdict_name(Verdict v);

struct Counterexample {
  Assignment inputs;      // a value for every input symbol of both sides
  std::string lhs_value;  // both sides at `inputs`, 30 significant digits
  std::string rhs_value;
  double lhs = 0, rhs = 0;
};

struct DecideStats {
  std::size_t peak_terms = 0;  // largest normal form built
  std::size_t cases = 0;       // case-split leaves examined
  double seconds = 0;
};

struct Decision {
  Verdict verdict = Verdict::Unknown;
  Counterexample counterexample;  // set when Refuted
  std::string reason;             // why Unknown; how it was Proved or Refuted
  DecideStats stats;
  // Indices into DecideLimits::constant_readings that a constant was read
  // by, in this decision or an earlier one of the same Decider (it keeps the
  // normal forms of shared subexpressions): the union over a check's
  // decisions is what the check read.
  std::vector<std::size_t> constants_read;
  bool proved() const { return verdict == Verdict::Proved; }
  bool refuted() const { return verdict == Verdict::Refuted; }
  bool unknown() const { return verdict == Verdict::Unknown; }
};

// Decides a == b over the reals.
Decision decide_equal(const ExprContext& ctx, Expr a, Expr b, const DecideLimits& limits = {});

// Decides many pairs, in parallel over a thread pool (threads == 0: one per
// hardware thread). Pairs that are an earlier proved pair with its input
// symbols renamed injectively (every C[i][j] of a GEMM, every O[i][d] of an
// attention kernel) are proved by an exact check of that renaming instead of
// being decided again. Each worker keeps the normal forms of shared
// subexpressions, so pairs that share a denominator pay for it once per worker.
// The context must not be modified while this runs.
std::vector<Decision> decide_all(const ExprContext& ctx, const std::vector<std::pair<Expr, Expr>>& pairs,
                                 const DecideLimits& limits = {}, unsigned threads = 0);

// decide_all for pairs built in two contexts: pairs[i] is (a in ctx, b in
// other), as when two kernels are evaluated on two threads. Renamings are
// checked where the expressions are; only the b sides that are decided (one
// per family of renamed outputs, and any output no renaming proves) are
// copied into ctx, through `imported` (ExprContext::import_below: the handle
// here of other's nodes; keep it to import more, e.g. to print an output).
// Neither context may be modified by anyone else while this runs.
std::vector<Decision> decide_all(ExprContext& ctx, const ExprContext& other,
                                 const std::vector<std::pair<Expr, Expr>>& pairs, std::vector<Expr>& imported,
                                 const DecideLimits& limits = {}, unsigned threads = 0);

// A decider that remembers normal forms across calls: decide all outputs of a
// kernel pair with one Decider and the shared subexpressions (running maxes,
// softmax denominators) are normalized once. Not thread-safe; use one per thread.
class Decider {
 public:
  explicit Decider(const ExprContext& ctx, const DecideLimits& limits = {});
  ~Decider();
  Decider(Decider&&) noexcept;
  Decider& operator=(Decider&&) noexcept;
  Decision decide(Expr a, Expr b);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Float constants that are read as exact reals inside exponents (documented in
// docs/decide.md): `value` is the exact value of the float, `meaning` is what it
// stands for ("1/ln2" or "ln2"), `origin` where compilers emit it.
struct KnownConstant {
  std::string name;
  Rational value;
  std::string meaning;
  std::string origin;
};
const std::vector<KnownConstant>& known_constants();

// The readings for the constants of both kernels, taken together (one table
// for both sides):
// - c · K for every constant c of either kernel and every float K of
//   known_constants() (read as c · what K stands for: exact, K's reading);
// - a constant within 1 ulp of its format of w · log2(e) or w · ln 2, where
//   w is ±2^k · c (|k| <= 16) for a constant c of either kernel, or a small
//   rational (odd parts below 64 for f32, 4096 for f64), read as exactly
//   that product. A constant within 1 ulp of two different products is not
//   read: its entry has ln2_power = 0 and a note saying so.
std::vector<ConstantReading> read_rounded_constants(const std::vector<KernelConstant>& constants);

}  // namespace tileverify
