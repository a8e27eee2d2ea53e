// tileverify/equiv.hpp — the small public API: is a kernel safe, are two
// kernels the same function?
//
//   tileverify::Spec spec = tileverify::load_spec("pair.json").spec.value();
//   tileverify::Report r = tileverify::check_equivalence(spec);
//   std::puts(r.text().c_str());           // verdict first, then the evidence
//   return r.exit_code();                  // 0 equivalent, 1 not, 2 unsafe, 3 outside the class, 4 bad input
//
// A Spec names PTX files and kernels plus the launch (docs/cli.md, "Spec
// files"); kernels already built as Programs can be checked directly too.
#pragma once

#include "tileverify/decide.hpp"
#include "tileverify/eval.hpp"
#include "tileverify/program.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tileverify {

// One entry of a kernel's "args": the kernel's own parameter list, for
// kernels whose signature differs from the reference's (a compiler drops
// constant arguments and adds scratch pointers).
struct KernelArg {
  enum class Kind : std::uint8_t { Param, Number, Null };
  Kind kind = Kind::Param;
  // Param: the name of a "params" entry. Number: the number as the spec writes
  // it (JSON), converted to the PTX parameter's type at launch (launch_for).
  // Null: a pointer the kernel never dereferences.
  std::string text;
};

struct KernelSpec {
  std::string ptx;     // path (relative paths are relative to the spec file)
  // The .entry's name, mangled or as its demangled base ("sgemm_smem<32>").
  std::string kernel;
  // {0, 0, 0}: not given; the PTX's .reqntid gives it (launch_for).
  Dim3 block;
  std::uint64_t dynamic_shared = 0;  // bytes of extern .shared memory
  std::optional<Dim3> grid;          // this kernel's own grid (else the spec's)
  // "symbols": module variables filled by the host (cudaMemcpyToSymbol),
  // each given by an input tensor of "params" (variable name -> tensor name).
  // Those tensors are not parameters of this kernel.
  std::map<std::string, std::string> symbols;
  // "args": the kernel's arguments, one per PTX parameter in order, drawn
  // from "params". Without it the kernel takes "params" in order.
  std::optional<std::vector<KernelArg>> args{};
  std::string entry{};  // "ref", "opt" or "kernel": the spec key, for messages
  std::optional<Dim3> cluster{};  // "cluster": this kernel's own cluster shape (else the spec's)
};

struct ParamSpec {
  std::string name;
  DType dtype = DType::F32;
  bool tensor = true;
  std::vector<std::uint64_t> shape;  // tensors
  Role role = Role::In;              // tensors
  std::int64_t value = 0;            // scalars: the bits the kernel receives (1.5 as f32 is 0x3fc00000)
  // Float scalars with "symbolic": true: the symbol name[0], no value.
  bool symbolic = false;
  // Out/InOut tensors: "init" (a value, ±inf, or "input"), as TensorArg has it.
  TensorInit init = TensorInit::Default;
  Rational init_value{};
  int init_inf = 0;
  // A CUtensorMap parameter ("tensor_map"): a map over the tensor entry
  // map_tensor of "params" (one memory with it; dtype is that tensor's).
  // tensor is false; shape, role, value and init are unused.
  bool tensor_map = false;
  std::string map_tensor{};
  TensorMap map{};
  // A by-value struct parameter ("struct", .param .b8 name[N]): its fields,
  // each a ParamSpec at byte `offset` (a scalar, a symbolic float, a tensor
  // map, or a pointer: `pointee` names its tensor, empty with null_pointer).
  // struct_bytes 0: the PTX parameter's size.
  bool is_struct = false;
  std::uint32_t struct_bytes = 0;
  std::vector<ParamSpec> fields{};
  std::uint32_t offset = 0;
  std::string pointee{};
  bool null_pointer = false;
  std::string same_as{};  // a struct field that holds a scalar entry of "params" (its value or symbol)
  // A pointer to CUtensorMaps in global memory ("tensor_maps", `const
  // CUtensorMap*`): map k is fields[k] (a tensor map, at offset 128 k).
  bool map_array = false;
};

struct Spec {
  std::optional<KernelSpec> ref, opt;  // `tileverify check` uses ref alone
  Dim3 grid;
  Dim3 cta{0, 0, 0};  // which CTA to verify
  // "cluster": the cluster shape of a cluster launch (Launch::cluster); each
  // dimension divides the grid's, 8 CTAs at most (the portable size).
  Dim3 cluster;
  // "ctas": "all": run every CTA of each kernel's grid into one global memory
  // and compare the whole outputs (conflicts between CTAs are races).
  bool all_ctas = false;
  std::vector<ParamSpec> params;
  std::string expect;  // optional: the verdict the spec's author expects
  // "strict": true (or --strict): barrier divergence and same-value writes,
  // which sm_70+ GPUs tolerate but the CUDA guide leaves undefined, are
  // unsafe verdicts instead of notes (RunOptions::strict).
  bool strict = false;
  std::string path;    // the spec file, for messages
  // The values of the spec's "sizes" this Spec was evaluated at (its
  // defaults, with the overrides given to load_spec); empty without "sizes".
  std::map<std::string, std::int64_t> sizes{};
};

struct SpecResult {
  std::optional<Spec> spec;
  std::string error;  // "file: what is wrong" when spec is empty
  // The deadline passed while reading (load_spec with a deadline): no
  // spec, and `error` says what reading was doing; a time-out, not an error
  // of the spec.
  bool timed_out = false;
};
SpecResult load_spec(const std::string& path);
SpecResult parse_spec(const std::string& json_text, const std::string& path);

// A spec with "sizes" evaluated at other sizes (docs/cli.md, "Sizes and
// boundary suites"): each override replaces the default of a size the spec
// declares; naming a size it does not declare, or a value that is not a
// positive integer, is an error of the spec.
SpecResult load_spec(const std::string& path, const std::map<std::string, std::int64_t>& sizes);
// The same, bounded by `deadline` (a check's, counted from its start:
// reading and checking a large spec counts against it too).
SpecResult load_spec(const std::string& path, const std::map<std::string, std::int64_t>& sizes,
                     const std::optional<std::chrono::steady_clock::time_point>& deadline);
SpecResult parse_spec(const std::string& json_text, const std::string& path,
                      const std::map<std::string, std::int64_t>& sizes);

// The boundary suite of sizes `defaults` (a Spec's `sizes`): per size, the
// values 1, tile-1, tile, tile+1, 2*tile+1, the first prime above 3*tile and
// 16*tile + tile/2 + 1 (a value below 1 is 1), with the tile from `tiles`
// (else default_tile). The combinations: each size at each of its values,
// the others at their defaults; then all sizes at once at the same one of
// the seven (all at 1, all at tile-1, ...); without repeats, in that order.
std::vector<std::map<std::string, std::int64_t>> boundary_sizes(const std::map<std::string, std::int64_t>& defaults,
                                                                 const std::map<std::string, std::int64_t>& tiles,
                                                                 std::int64_t default_tile = 32);

// One combination of a suite, evaluated: the spec at those sizes, or why not.
struct SizeCase {
  std::map<std::string, std::int64_t> sizes;
  std::optional<Spec> spec;
  // A boundary combination the spec cannot take (a shape or grid that would
  // be 0): skipped, not an error. A combination of the spec's own "suite"
  // that fails is an error instead, in `error`.
  std::string skipped;
  std::string error;
};
struct SizeSuite {
  std::vector<std::string> names;  // the spec's size names, in its order (for printing)
  std::vector<SizeCase> cases;
  std::string error;  // the spec itself could not be read (no cases then)
  bool timed_out = false;  // ... because plan_suite's deadline passed (error says where)
  // Fills in a case of `cases` (its spec, or why it is skipped or an
  // error) from the spec as read once; nothing for a case filled already.
  // Set by plan_suite; load_suite has called it on every case.
  std::function<void(SizeCase&)> evaluate;
};
enum class SuiteKind : std::uint8_t {
  Boundary,  // boundary_sizes of the spec's "sizes" and "tiles"
  Listed     // the spec's "suite" list
};
// The suite of the spec at `path`; `sizes` overrides its defaults first
// (the base that boundary combinations and "suite" entries vary).
SizeSuite load_suite(const std::string& path, SuiteKind kind, const std::map<std::string, std::int64_t>& sizes = {});
// The suite with its cases' sizes alone, each to be evaluated when it is
// run (SizeSuite::evaluate): a suite of 10^5 sizes starts at once, and a
// deadline (which bounds reading the spec) can stop it between sizes.
SizeSuite plan_suite(const std::string& path, SuiteKind kind, const std::map<std::string, std::int64_t>& sizes = {},
                     const std::optional<std::chrono::steady_clock::time_point>& deadline = std::nullopt);

// Trap: a kernel reached trap / a failed assert() (unsafe, exit code 2 like a race).
// BarrierDivergence: only under Spec::strict (unsafe, exit code 2).
// LaunchContract: the launch makes a CTA do what traps on a GPU (a TMA store
// at a negative coordinate of its tensor map; unsafe, exit code 2).
// PayloadsAgree / PayloadsDiffer: the answers of check_payloads (exit codes 0
// and 1), which are evidence about equivalence, not a decision.
enum class Outcome {
  Equivalent, NotEquivalent, Race, Deadlock, OutOfBounds, Uninitialized, Unsupported, Unknown, Ok, Error, Trap,
  PayloadsAgree, PayloadsDiffer, BarrierDivergence, LaunchContract
};
const char* outcome_name(Outcome o);  // "equivalent", "not_equivalent", ... as in the JSON report

struct Mismatch {
  std::string output;  // tensor name
  std::uint64_t element = 0;
  std::string ref_expr, opt_expr;  // abbreviated
  Counterexample counterexample;   // empty inputs when one side did not write the element
  // The counterexample's input values by tensor, element i at [i] (none for
  // an element it leaves free): its symbols' names, kept for the JSON report.
  std::map<std::string, std::vector<std::optional<Rational>>> inputs;
  std::string why;
  Dim3 cta{0, 0, 0};  // the CTA whose run showed it
};

struct ReportStats {
  double parse_seconds = 0, eval_seconds = 0, decide_seconds = 0;
  RunStats ref, opt;
  std::size_t outputs_compared = 0, proved = 0;
  // "ctas": "all" by CTA classes: the distinct comparisons the output
  // elements came down to (0: none made that way).
  std::size_t comparisons = 0;
  unsigned trials = 0;  // check_payloads: random inputs run
};

// The launch-contract scan of one kernel (docs/reports.md,
// "launch_contract"): a kernel with TMA copies runs concretely on every CTA
// of its grid, before the check of one CTA, to find the CTAs whose copies
// trap on a GPU (a launch with CTAs that own no tile).
struct ContractScan {
  std::string kernel;             // as the report names it ("ref (name)")
  std::uint64_t ctas_run = 0;     // CTAs run
  std::uint64_t grid_ctas = 0;    // CTAs in the grid
  std::vector<Dim3> breaking;     // CTAs that break the contract (the first 4)
  std::string stopped;            // why the scan ended before the grid's end; empty if it did not
  double seconds = 0;             // the scan's time (part of ReportStats::eval_seconds)
};

// A whole grid ("ctas": "all") checked by CTA classes (docs/reports.md, "CTA
// classes"): the CTAs of one kernel's grid that one representative's run
// stands for.
struct CtaClassSummary {
  std::string kernel;  // as the report names it ("opt (name)")
  Dim3 representative;
  std::uint64_t ctas = 0;  // in the class, the representative included
  Dim3 low, high;          // the box of the class's CTA indices
};

// A shard's part of a sharded check (RunLimits::shard_count > 1).
struct ShardInfo {
  unsigned index = 0, count = 1;
  // What makes a check one check, the same in every shard's report: the
  // command ("equiv" or "check"), the options that change a verdict
  // ("strict", "cta_classes"), digests of the spec file and each kernel's
  // PTX, the kernels' names, the sizes. `tileverify merge` refuses reports
  // that differ in any of them, naming it (docs/cli.md, "Sharding").
  std::map<std::string, std::string> check{};
  // A digest of `check`: one word to compare and show.
  std::string fingerprint;
  std::size_t comparisons_total = 0;  // of the whole check; this shard's are ReportStats::comparisons
  std::uint64_t elements_total = 0;   // output elements of the whole check
  // Nothing to split: shard 0 checked everything (one CTA, or CTA by CTA).
  bool whole = false;
  // The comparisons of each (reference class, optimized class) pair of the
  // plan, in the order the shares deal them: enough for merge to work out
  // every shard's share and check each report's count against its index.
  // Empty when the shard stopped before its plan (or has nothing to split).
  std::vector<std::uint64_t> plan{};
};

struct Report {
  Outcome verdict = Outcome::Error;
  std::vector<Diagnostic> diagnostics;  // races, deadlocks, ... (with which kernel in `message`)
  // Warnings and notes that leave the verdict alone: barrier divergence and
  // same-value writes (not strict), constants read as exact products.
  std::vector<Diagnostic> notes;
  std::optional<Mismatch> mismatch;     // for NotEquivalent (and Unknown: the first undecided element)
  std::string error;                    // for Error: what was wrong with the input
  std::vector<ContractScan> contract_scans;  // kernels with TMA copies, one CTA checked
  std::vector<CtaClassSummary> cta_classes;  // "ctas": "all" checked by CTA classes
  // "ctas": "all" run CTA by CTA although classes were asked for: why.
  std::string cta_classes_unused;
  std::optional<ShardInfo> shard;  // a shard of a sharded check
  ReportStats stats;
  std::string text() const;  // for people: the verdict first, then the evidence
  std::string json() const;  // {"verdict": ..., "diagnostics": [...], "counterexample": {...}, "stats": {...}}
  int exit_code() const;     // docs/cli.md: 0, 1, 2, 3 or 4
};

// The pieces the checks are made of, for tools that run a spec's kernels
// themselves (benchmarks, other value domains): the launch of one kernel of a
// spec (its block and grid, the spec's CTA, its arguments, its "symbols"
// bindings), and the kernel lowered from its PTX file (else the error,
// file:line:column, and whether it is bad input rather than PTX outside what
// tileverify supports; KernelSpec::kernel may be a demangled name).
//
// launch_for is the launch checked against the kernel's lowered program: the
// number and widths of its "args", numbers converted to the PTX parameters'
// types, the block (from .reqntid when the spec gives none; within
// .reqntid / .maxntid); else the error ("spec.json: \"opt.args\" ...", bad
// input). launch_of is the same without a program at hand: for a kernel entry
// with "args" or without "block" it loads the kernel itself (load_kernel);
// if that or the launch fails, the launch has no arguments and a block of 0
// threads, which every run refuses as a bad launch.
struct LaunchResult {
  std::optional<Launch> launch;
  std::string error;
};
LaunchResult launch_for(const Spec& spec, const KernelSpec& kernel, const Program& program);
Launch launch_of(const Spec& spec, const KernelSpec& kernel);
struct KernelLoad {
  std::optional<Program> program;
  std::string error;
  bool bad_input = false;
  SourceLoc loc;  // where in the PTX the error is (the file alone when no line is known)
};
KernelLoad load_kernel(const KernelSpec& kernel);

// What a whole check may spend. The deadline bounds everything: reading the
// PTX, running the kernels and deciding the outputs; past it the check ends
// as Unknown, saying how far it got. Memory (0: default_memory_budget())
// bounds what the runs allocate. Steps: thread-instructions of one kernel
// run on one CTA (an endless loop ends there, as Unknown).
struct RunLimits {
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::uint64_t max_memory_bytes = 0;
  std::uint64_t max_steps = 2'000'000'000;
  // "ctas": "all": called after each CTA a kernel runs (done of total), for
  // progress output on long grids.
  std::function<void(std::uint64_t done, std::uint64_t total)> grid_progress;
  // RunOptions::strict for every run; a spec's "strict": true turns it on too.
  bool strict = false;
  // "ctas": "all": run one CTA per class of CTAs that run the same code on
  // translated data (docs/architecture.md, "CTA classes"); off: every CTA.
  bool cta_classes = true;
  // RunOptions::thread_classes for every symbolic run (--no-thread-classes: off).
  bool thread_classes = true;
  // --shard index/count: with "ctas": "all", this check is shard `index` (0
  // to count - 1) of `count` that together check the whole grid: each runs
  // the classes of both grids, then only its share of the comparisons (and
  // of the representatives' runs); `tileverify merge` combines their
  // reports (docs/cli.md, "Sharding"). count 1: not sharded.
  unsigned shard_index = 0, shard_count = 1;
};

// One kernel: does it run cleanly (no race, deadlock, out-of-bounds or
// uninitialized access) on the CTA the spec names?
Report check(const Spec& spec, const RunLimits& limits = {});
// Two kernels: the same outputs for every input, on the CTA the spec names.
// limits.deadline and limits.max_memory_bytes bound the whole check, as
// RunLimits do for check().
Report check_equivalence(const Spec& spec, const DecideLimits& limits = {});
// FpSan payload check (docs/fpsan.md): ref and opt run on `trials` random
// payload inputs (PayloadDomain, seeds seed, seed + 1, ...) and their outputs
// are compared bit for bit. As fast as running the kernels, and it finds most
// wrong kernels, but agreement is not a proof and the algebra keeps only some
// identities (x/x = 1 fails for even payloads), so equivalent kernels can
// differ. Races, deadlocks and bad accesses are reported as by check().
struct PayloadOptions {
  unsigned trials = 100;
  std::uint64_t seed = 1;
  RunLimits limits;  // for all the trials together
};
Report check_payloads(const Spec& spec, const PayloadOptions& options = {});

// What an equivalence check of `spec` would cost, before it runs
// (`tileverify equiv --estimate`, docs/cli.md "Estimating a check"): the
// CTA classes of each kernel, found from concrete runs, and the first
// symbolic run of each, measured; the check makes `runs` such runs per
// kernel and keeps their expressions. Deciding the outputs is not
// predicted: an identity hash-consing already shows costs microseconds,
// an output that needs normal forms up to the per-output time limit.
struct KernelEstimate {
  std::string kernel;         // as reports name it ("ref (name)")
  std::uint64_t ctas = 0;     // CTAs the check runs the kernel on (1 without "ctas": "all")
  std::uint64_t classes = 0;  // its CTA classes (0: none)
  std::string by_grid;        // why it runs CTA by CTA ("ctas": "all" without classes)
  std::uint64_t runs = 0;     // symbolic runs the check makes: one per class, or per CTA (cluster)
  Dim3 first;                 // the CTA of the run measured
  double first_seconds = 0;   // its time
  std::uint64_t first_bytes = 0;  // the expressions it added
  bool finished = true;       // false: the deadline came first (first_seconds is then a lower bound)
};
struct CheckEstimate {
  std::string spec;  // its path
  std::vector<KernelEstimate> kernels;
  std::uint64_t elements = 0;     // output elements compared (0: not planned)
  std::uint64_t comparisons = 0;  // distinct comparisons after renaming (0: not planned)
  double run_seconds = 0;         // predicted: every symbolic run
  std::uint64_t memory_bytes = 0;  // predicted: the expressions they keep
  bool lower_bound = false;       // a first run hit the deadline: at least these
  std::string error;              // the spec or a kernel could not be read; nothing else is set
  std::vector<Diagnostic> diagnostics;  // a bug found on the way (a race, ...): the check will report it
  double seconds = 0;             // what the estimate took
  std::string text() const;
  std::string json() const;
};
CheckEstimate estimate_equivalence(const Spec& spec, const DecideLimits& limits = {});

// The same for Programs built directly (compiler backends).
Report check_equivalence(const Program& ref, const Launch& ref_launch, const Program& opt, const Launch& opt_launch,
                         const DecideLimits& limits = {});

}  // namespace tileverify
