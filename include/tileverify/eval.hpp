// tileverify/eval.hpp — running a structured-CTA program on one CTA.
//
// Contract: Machine<Domain> executes every thread of one CTA over a single
// copy of the code, with one program counter per thread, round-robin (or, for
// testing, a seeded random schedule). Its checked dynamics follow VOLTA (§4):
//   - sync I blocks a thread until every thread of I is at the same sync or
//     has returned; mismatched sets deadlock;
//   - an access races with an earlier conflicting access of another thread
//     unless a common sync orders them (vector clocks), in shared and global
//     memory alike;
//   - out-of-bounds and uninitialized reads are errors, and so is reaching
//     a trap (__trap(), a failed assert());
//   - an address, branch or integer that depends on tensor data is outside
//     the structured-CTA class: NotStructured.
// Because these dynamics are confluent, one schedule gives the outputs of all
// schedules, or the run reports a race or deadlock. The value domain (what
// arithmetic means) is a template parameter: SymbolicDomain, ConcreteDomain.
#pragma once

#include "tileverify/domains.hpp"
#include "tileverify/program.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tileverify {

struct Dim3 {
  std::uint32_t x = 1, y = 1, z = 1;
  std::uint64_t count() const { return std::uint64_t(x) * y * z; }
};

// What a pointer parameter points to, or a scalar parameter's value.
// What an Out or InOut tensor holds when the kernel starts. Default: an
// InOut tensor its inputs (symbols name[i]), an Out tensor nothing (reading
// an element before writing it is an uninitialized read). Input: the input
// symbols, for an Out tensor too. Value: every element init_value, or
// -infinity / +infinity (init_inf -1 / +1) — a running max starts at -inf.
enum class TensorInit : std::uint8_t { Default, Input, Value };

struct TensorArg {
  TensorArg() = default;
  TensorArg(std::string n, DType t, std::vector<std::uint64_t> s, Role r = Role::In)
      : name(std::move(n)), dtype(t), shape(std::move(s)), role(r) {}
  std::string name;  // the input symbols are name[i]
  DType dtype = DType::F32;
  std::vector<std::uint64_t> shape;
  Role role = Role::In;
  TensorInit init = TensorInit::Default;
  Rational init_value;
  int init_inf = 0;  // -1: -infinity, +1: +infinity (with TensorInit::Value)
  std::uint64_t elements() const;
};

// A CUtensorMap kernel parameter (`const __grid_constant__ CUtensorMap`, a
// .param .b8 [128] in PTX), as cuTensorMapEncodeTiled (CUDA Driver API,
// "Tensor Map Object Management") takes it: the tensor it views, its global
// dimensions innermost first, the byte strides of dimensions 1 .. rank-1,
// the box (the tile one TMA copy moves), the element strides, and the
// modes. The data type is the tensor's.
enum class TmaInterleave : std::uint8_t { None, B16, B32 };
enum class TmaSwizzle : std::uint8_t { None, B32, B64, B128 };
enum class TmaL2Promotion : std::uint8_t { None, B64, B128, B256 };
// Zero: out-of-bound elements of a box read as zero; NanRequestZeroFma: as NaN.
enum class TmaOobFill : std::uint8_t { Zero, NanRequestZeroFma };

struct TensorMap {
  std::vector<std::uint64_t> dims;              // globalDim, innermost first; rank = dims.size() (1 to 5)
  std::vector<std::uint64_t> strides;           // globalStrides in bytes, rank - 1 of them
  std::vector<std::uint32_t> box;               // boxDim, rank of them
  std::vector<std::uint32_t> element_strides;   // elementStrides, rank of them (1: every element)
  TmaInterleave interleave = TmaInterleave::None;
  TmaSwizzle swizzle = TmaSwizzle::None;
  TmaL2Promotion l2_promotion = TmaL2Promotion::None;
  TmaOobFill oob_fill = TmaOobFill::Zero;
};

// A pointer parameter is a tensor; a scalar parameter a value: its bits, or
// for a float scalar with symbolic set, the symbol `name` (a float the check
// holds for every value of). Integer scalars are always concrete: they shape
// control flow.
struct LaunchArg {
  bool is_tensor = true;
  TensorArg tensor;
  std::int64_t scalar = 0;
  bool symbolic = false;  // scalar: the float symbol tensor.name (tensor.dtype its type)
  // A pointer the kernel never dereferences (a spec's "args" entry null):
  // dereferencing it is a bad launch.
  bool null_pointer = false;
  // A CUtensorMap over `tensor` (is_tensor stays false: the kernel gets the
  // map, not a pointer). A tensor that the kernel also takes as a pointer,
  // or through another map, is one memory: arguments name it alike.
  bool is_tensor_map = false;
  TensorMap map;
  // A by-value struct (.param .align A .b8 name[N], CUTLASS's Params): its
  // N bytes given field by field. Field i is fields[i] (a scalar, a tensor
  // for a pointer, a tensor map; never a struct) at byte layout[i].offset;
  // bytes no field covers are undefined, and reading them is an error.
  struct Field {
    std::string name;              // for messages: "params.ptr_A"
    std::uint32_t offset = 0;      // bytes from the struct's start
    std::uint32_t bytes = 0;       // 8 for a pointer, 128 for a tensor map, the dtype's size for a scalar
    DType dtype = DType::U64;      // a scalar's type
  };
  // A pointer to CUtensorMaps that the host copied to global memory
  // (`const CUtensorMap*`): map k, fields[k] (is_tensor_map), lies at byte
  // 128 k of the buffer; the kernel gets the buffer's address.
  bool is_map_array = false;
  bool is_struct = false;
  std::uint32_t struct_bytes = 0;
  std::vector<Field> layout;     // sorted by offset, not overlapping
  std::vector<LaunchArg> fields;  // one per layout entry (a map array: its maps)
  static LaunchArg of_struct(std::uint32_t bytes, std::vector<Field> layout, std::vector<LaunchArg> fields) {
    LaunchArg a;
    a.is_tensor = false;
    a.is_struct = true;
    a.struct_bytes = bytes;
    a.layout = std::move(layout);
    a.fields = std::move(fields);
    return a;
  }
  static LaunchArg of_tensor(TensorArg t) {
    LaunchArg a;
    a.tensor = std::move(t);
    return a;
  }
  static LaunchArg of_scalar(std::int64_t v) {
    LaunchArg a;
    a.is_tensor = false;
    a.scalar = v;
    return a;
  }
  static LaunchArg of_symbol(std::string name, DType t) {
    LaunchArg a;
    a.is_tensor = false;
    a.tensor.name = std::move(name);
    a.tensor.dtype = t;
    a.symbolic = true;
    return a;
  }
  static LaunchArg of_null() {
    LaunchArg a;
    a.null_pointer = true;
    return a;
  }
  // `name`: the buffer's, for messages.
  static LaunchArg of_map_array(std::string name, std::vector<LaunchArg> maps) {
    LaunchArg a;
    a.is_tensor = false;
    a.tensor.name = std::move(name);
    a.is_map_array = true;
    a.fields = std::move(maps);
    return a;
  }
  static LaunchArg of_tensor_map(TensorArg t, TensorMap m) {
    LaunchArg a;
    a.is_tensor = false;
    a.tensor = std::move(t);
    a.is_tensor_map = true;
    a.map = std::move(m);
    return a;
  }
};

struct Launch {
  Dim3 block;
  Dim3 grid;
  // Which CTA (blockIdx) this run is. In a cluster of more than one CTA the
  // run is the whole cluster that holds it: its CTAs share distributed
  // shared memory and barriers, so none runs alone (run_cluster).
  Dim3 cta{0, 0, 0};
  // The cluster shape of a cluster launch (cudaLaunchKernelEx with a
  // cluster dimension, or __cluster_dims__); 1x1x1 otherwise.
  Dim3 cluster;
  std::vector<LaunchArg> args;  // one per Program parameter, in order
  // Module variables (__constant__ or __device__ arrays) the host fills with
  // cudaMemcpyToSymbol, by variable name: input tensors like the arguments.
  std::map<std::string, TensorArg> symbols;
};

// The cluster shape a run of p under l covers: the launch's, else the
// kernel's .reqnctapercluster (which a launch without a cluster runs in, as
// <<<...>>> does on a GPU), else one CTA.
inline Dim3 run_cluster(const Program& p, const Launch& l) {
  if (l.cluster.count() == 1 && p.reqnctapercluster[0] != 0)
    return Dim3{p.reqnctapercluster[0], p.reqnctapercluster[1], p.reqnctapercluster[2]};
  return l.cluster;
}

// CTA `rank` (%cluster_ctarank: x fastest) of the cluster of shape c that
// holds cta: the runs of a grid start one per cluster, at rank 0.
inline Dim3 cluster_cta(const Dim3& cta, const Dim3& c, std::uint32_t rank) {
  return Dim3{cta.x / c.x * c.x + rank % c.x, cta.y / c.y * c.y + rank / c.x % c.y, cta.z / c.z * c.z + rank / (c.x * c.y)};
}

// Trap: a thread executed trap (__trap()) or a failed assert(); the message
// gives the assert's condition, file, line and function when the PTX has them.
// Limit: the run stopped at a limit of RunOptions (time, steps, memory)
// before it finished; nothing is known about the rest of it.
// BarrierDivergence: a CTA barrier that some threads of its set never reach
// because they exited (undefined in the CUDA guide, tolerated by sm_70+
// hardware). SameValueWrite: unordered writes of the same value to one
// element. Both are notes (RunResult::notes) unless RunOptions::strict, where
// a barrier divergence is an error and a same-value write a Race.
// ConstantRead: only ever a note (Report::notes) of an equivalence check: a
// constant read as an exact product (read_rounded_constants, docs/decide.md).
// BadInput: a report's reason for the verdict `error` (malformed PTX or spec,
// a kernel that is not there), where in the file when known.
// LaunchContract: the launch makes a CTA do what traps on a GPU: a TMA store
// at a negative coordinate of its tensor map (an H100 and an H200 stop with
// "illegal instruction", error 715; tools/gpu_checks/tma_bounds.cu), as a
// CTA that owns no tile issues it; unsafe, like a race. TMA loads anywhere
// and stores past the end are defined (zero fill, skipped elements): notes.
// Undefined: only ever a warning note: the kernel does what the PTX ISA
// leaves undefined (an mbarrier phase parity other than 0 or 1) or does not
// settle, and GPUs do something definite with it, which the run follows and
// the note states (docs/evaluator.md).
enum class DiagKind {
  Race, Deadlock, OutOfBounds, Uninitialized, NotStructured, Unsupported, BadLaunch, Trap, Limit,
  BarrierDivergence, SameValueWrite, ConstantRead, BadInput, LaunchContract, Undefined
};
const char* diag_kind_name(DiagKind k);

// How reports name `width` bytes at byte `byte` of a memory, in one form for
// every space: "4 bytes at shared smem+18464" (an offset in bytes, whatever
// the kernel's element type); a tensor of the spec, whose elements the spec
// counts, adds its element: "4 bytes at global y+12 (element 3)". An
// offset before the start (out of bounds) is "y-4 (element -1)".
std::string memory_place(Space space, const std::string& name, std::int64_t byte, std::uint64_t width,
                         std::optional<std::int64_t> element = std::nullopt);

struct AccessInfo {
  std::uint32_t thread = 0;
  std::uint32_t pc = 0;
  bool write = false;
  SourceLoc loc;
  std::string instr;
  // How the access touched the element: "read", "write", "atomic" (atom/red)
  // or "cp.async write" (the asynchronous copy's write, retired by a wait).
  std::string kind = "";
};

// How reports name the threads of a diagnostic. A run of one CTA numbers
// its threads by their linear threadIdx, and reports name them so
// ("thread 5"). A run of a cluster numbers them across the cluster's CTAs,
// rank by rank, and a check over a grid may name threads of two CTAs: then
// thread t is thread t % per_cta of ctas[t / per_cta], and reports say
// "thread 5 of CTA (0,1,0), cluster (0,0,0) rank 1" (or "thread 5 of CTA
// (1,0,0)" outside clusters).
struct ThreadNames {
  struct Cta {
    Dim3 cta{0, 0, 0};
    bool in_cluster = false;   // a launch with clusters: the two below are known
    Dim3 cluster{0, 0, 0};     // %clusterid
    std::uint32_t rank = 0;    // %cluster_ctarank
  };
  std::uint32_t per_cta = 0;  // 0: one CTA, threads named by number alone
  std::vector<Cta> ctas;
  // "5", or "5 of CTA (0,1,0), cluster (0,0,0) rank 1": a thread, after the
  // word "thread".
  std::string one(std::uint32_t t) const;
  // "0-15", "0-7, 12, 30-31", "1, 3, ..., 63 (32 threads)", or by CTA
  // "0-127 of CTA (0,0,0) and 0-127 of CTA (0,1,0)": threads, after the
  // word "threads".
  std::string list(std::vector<std::uint32_t> ts) const;
  // The CTA and thread within it of thread t (per_cta != 0).
  const Cta& cta_of(std::uint32_t t) const { return ctas.at(t / per_cta); }
};

struct Diagnostic {
  DiagKind kind = DiagKind::NotStructured;
  std::string message;                 // one line: what went wrong
  SourceLoc loc;                       // where (the instruction that found it)
  std::vector<std::uint32_t> threads;  // the threads involved
  std::string buffer;                  // memory diagnostics: the buffer,
  std::int64_t element = -1;           //   the element (in the buffer's unit: a tensor's dtype; an
                                       //   untyped array's first access width),
  std::int64_t byte = -1;              //   the first byte (from the buffer's start)
  std::uint32_t width = 0;             //   and how many bytes from there (0: not known)
  std::vector<AccessInfo> accesses;    // races: the earlier and the later access
  ThreadNames names;                   // how `threads` and the accesses' threads are named
  std::string detail;                  // more lines (stuck threads of a deadlock, ...)
  // A note (RunResult::notes) that reports print as a warning: what the PTX
  // ISA leaves undefined but the hardware does something definite with.
  bool warning = false;
  std::string text() const;            // the full human-readable report
};

class CtaAffineLog;  // src/eval/cta_affine.hpp (internal)

struct RunOptions {
  std::optional<std::uint64_t> random_schedule;  // seed; none: round-robin
  bool check_races = true;
  bool record_touches = false;  // fill RunResult::touches (for checks over many CTAs)
  std::uint64_t max_steps = 2'000'000'000;       // thread-instructions before giving up (Limit)
  // The run stops with a Limit diagnostic once this passes (checked every
  // few thousand thread-instructions, so within a millisecond or so).
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // Bytes the run may allocate for its memories (tensors, shared, local and
  // dynamic shared arrays, registers), checked before allocating; a run over
  // it stops with a Limit diagnostic naming what was too large. 0: no limit.
  std::uint64_t max_memory_bytes = 0;
  // Called once, on the running thread, when the run passes long_run_steps
  // thread-instructions (0: never): a caller can then start other work in
  // parallel, which would not pay off for a short run.
  std::uint64_t long_run_steps = 0;
  std::function<void()> on_long_run;
  // What the CUDA guide leaves undefined but sm_70+ hardware tolerates is an
  // error, as in GPUVerify: barrier divergence stops the run, unordered
  // writes of the same value are races. Off: both are notes.
  bool strict = false;
  // Internal (CTA classes): the run records how it moves with the CTA index
  // into this log. Null: not recorded.
  CtaAffineLog* cta_affine = nullptr;
  // Thread classes (the symbolic domain): a thread whose float operation
  // is the first thread's at the same visit of the instruction with its
  // inputs renamed holds that thread's result and the renaming, instead of
  // building its own expression (docs/evaluator.md, "Thread classes"). The
  // results are the same reals either way; off: every thread builds its own.
  bool thread_classes = true;
  // Internal (CTA classes): outputs may stay renamings
  // (RunResult::output_shifts) instead of being built out.
  bool shadow_outputs = false;
};

struct RunStats {
  std::uint64_t thread_instructions = 0;
  std::uint64_t block_syncs = 0;  // completed CTA barriers
  std::uint64_t warp_syncs = 0;   // completed warp-level syncs (warp barriers and collectives)
};

// How a run touched one element of a tensor argument. Nothing orders two
// CTAs, so checks over a whole grid compare these between CTAs.
struct Touch {
  static constexpr std::uint8_t kRead = 1, kWrite = 2, kAtomic = 4;
  std::uint8_t kinds = 0;
  std::uint8_t atomic_op = 0;     // the AtomOp of the atomics (kAtomic)
  std::uint32_t thread = 0, pc = 0;  // the first write or atomic, else the first read
};

template <class Domain>
struct RunResult {
  using Value = typename Domain::Value;
  bool ok() const { return diagnostics.empty(); }
  std::vector<Diagnostic> diagnostics;  // empty: the run completed cleanly
  // Findings that leave the verdict alone (BarrierDivergence, SameValueWrite
  // when not strict), at most a few of each kind.
  std::vector<Diagnostic> notes;
  // Final contents of every Out/InOut tensor, by tensor name; an element
  // never written holds nullopt.
  std::map<std::string, std::vector<std::optional<Value>>> outputs;
  // With RunOptions::shadow_outputs: element i of output T is outputs[T][i]
  // with every input symbol of each tensor X moved by
  // shift_vectors[output_shifts[T][i]][X] elements (index 0: the empty
  // vector, no move; a tensor missing from a vector: 0). A tensor without
  // an entry here has no moved element.
  std::map<std::string, std::vector<std::uint32_t>> output_shifts;
  std::vector<std::map<std::string, std::int64_t>> shift_vectors;
  // With RunOptions::record_touches: every tensor argument, by name.
  std::map<std::string, std::vector<Touch>> touches;
  RunStats stats;
};

// Half the machine's physical memory: the memory budget of a check when the
// caller gives none.
std::uint64_t default_memory_budget();

template <class Domain>
RunResult<Domain> run_program(const Program& program, const Launch& launch, Domain& domain,
                              const RunOptions& options = {});

extern template RunResult<SymbolicDomain> run_program(const Program&, const Launch&, SymbolicDomain&,
                                                      const RunOptions&);
extern template RunResult<ConcreteDomain> run_program(const Program&, const Launch&, ConcreteDomain&,
                                                      const RunOptions&);

}  // namespace tileverify
