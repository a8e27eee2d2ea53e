// Machine<Domain>: one copy of the code, a program counter per thread,
// VOLTA's sync rule, vector-clock race detection, bounds and initialization
// checks. Explicitly instantiated for the two domains.
#include "tileverify/eval.hpp"
#include "tileverify/payload_domain.hpp"

#include "warp_semantics.hpp"

#include <algorithm>
#include <deque>
#include <random>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include <unistd.h>

namespace tileverify {

std::uint64_t default_memory_budget() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return std::uint64_t(4) << 30;  // unknown: 4 GiB
  return std::uint64_t(pages) / 2 * std::uint64_t(page);
}

const char* diag_kind_name(DiagKind k) {
  switch (k) {
    case DiagKind::Race: return "race";
    case DiagKind::Deadlock: return "deadlock";
    case DiagKind::OutOfBounds: return "out_of_bounds";
    case DiagKind::Uninitialized: return "uninitialized";
    case DiagKind::NotStructured: return "not_structured";
    case DiagKind::Unsupported: return "unsupported";
    case DiagKind::BadLaunch: return "bad_launch";
    case DiagKind::Trap: return "trap";
    case DiagKind::Limit: return "limit";
  }
  return "?";
}

// Saturates at UINT64_MAX: a shape of [2^32, 2^32] is too large, never 0.
std::uint64_t TensorArg::elements() const {
  std::uint64_t n = 1;
  for (std::uint64_t d : shape) {
    if (d != 0 && n > UINT64_MAX / d) return UINT64_MAX;
    n *= d;
  }
  return n;
}

std::string Diagnostic::text() const {
  std::ostringstream os;
  os << diag_kind_name(kind) << ": " << message << "\n";
  if (kind == DiagKind::Race && accesses.size() == 2) {
    bool async = false, atomic = false;
    for (std::size_t i = 0; i < 2; ++i) {
      const AccessInfo& a = accesses[i];
      std::string how = a.kind.empty() ? (a.write ? "write" : "read ") : a.kind;
      async = async || a.kind == "cp.async write";
      atomic = atomic || a.kind == "atomic";
      os << "  " << (i == 0 ? "earlier " : "later   ") << how << " by thread " << a.thread << " at " << a.loc.with_source()
         << ": " << a.instr << "\n";
    }
    if (!detail.empty())
      ;  // the reporter explains this race itself (e.g. between two CTAs)
    else if (async)
      os << "  cp.async writes shared memory only when a cp.async.wait_group / wait_all of the copying\n"
            "  thread retires its group: wait for the group (and, for other threads, then add a barrier)\n"
            "  before touching the destination\n";
    else if (atomic)
      os << "  atomics never race with each other, but an atomic and a plain access of the same element\n"
            "  race unless a barrier orders them (e.g. __syncthreads() / bar.sync between them)\n";
    else
      os << "  no barrier or other synchronization orders these two accesses: the result depends on\n"
            "  which thread runs first (add a barrier between them, e.g. __syncthreads() / bar.sync)\n";
  } else {
    // A bad launch is found before any instruction runs: it has no place.
    if ((kind != DiagKind::BadLaunch && kind != DiagKind::Limit) || !loc.file.empty())
      os << "  at " << loc.with_source() << "\n";
    if (!threads.empty()) {
      os << "  thread" << (threads.size() > 1 ? "s " : " ");
      for (std::size_t i = 0; i < threads.size() && i < 16; ++i) os << (i ? ", " : "") << threads[i];
      if (threads.size() > 16) os << ", ... (" << threads.size() << " in all)";
      os << "\n";
    }
  }
  if (!detail.empty()) os << detail;
  return os.str();
}

namespace {

constexpr std::uint32_t kNone = UINT32_MAX;

// Pair: two 16-bit floats packed in one 32-bit register (f low half, g high half),
// as mma.sync and ldmatrix fragments hold them.
// Data: an integer that depends on integer tensor data, held in f as a domain
// value over the integers (no wraparound, as floats have no rounding).
enum class VKind : std::uint8_t { Undef, Int, Float, Ptr, Cond, Pair, Data };

template <class V>
struct Val {
  VKind kind = VKind::Undef;
  Cmp cmp = Cmp::EQ;
  std::uint32_t buf = 0;
  std::int64_t i = 0;
  V f{};
  V g{};
  // pc + 1 of an atom whose returned (old) value this value derives from:
  // atomics run in schedule order, so such a value differs between
  // schedules; or of a shuffle that read a lane outside its member mask (an
  // undefined value); 0: none. Checked where it could change what the kernel
  // does (an output, an address, a branch).
  std::uint32_t sched = 0;
};

// Accesses of one kind to one element that may be unordered among
// themselves (plain reads, atomics): one epoch (thread, clock) while they are
// ordered, a vector clock (an index into read_sets_) once two are not.
struct Epochs {
  std::uint32_t thread = kNone, clock = 0, pc = 0;
  std::int32_t set = -1;
};

struct Shadow {
  std::uint32_t w_thread = kNone, w_clock = 0, w_pc = 0;
  Epochs reads, atomics;
};

enum class Access : std::uint8_t { Read, Write, Atomic, AsyncWrite };

inline const char* access_name(Access a) {
  switch (a) {
    case Access::Read: return "read";
    case Access::Write: return "write";
    case Access::Atomic: return "atomic";
    case Access::AsyncWrite: return "cp.async write";
  }
  return "?";
}

template <class V>
struct Memory {
  std::string name;
  Space space = Space::Global;
  DType dtype = DType::F32;
  std::size_t esize = 4;
  Role role = Role::Scratch;
  std::uint64_t elements = 0;  // per thread for local memory
  bool per_thread = false;
  bool untyped = false;  // declared as bytes: typed by its first access
  bool read_only = false;          // .const data
  bool lazy_inputs = false;        // input cells whose symbol is not made yet hold an invalid handle
  std::vector<std::uint8_t> init;  // initial bytes of module data (empty: none)
  std::vector<Val<V>> cells;
  std::vector<Shadow> shadow;
  std::vector<std::uint32_t> pending;  // per cell: id of a cp.async not yet retired (0: none); empty until one targets it
  std::vector<Touch> touches;          // tensor arguments, with RunOptions::record_touches
};

// One element of an issued cp.async: its source was read at the cp.async, its
// shared destination is written when a wait retires its group.
template <class V>
struct AsyncCopy {
  std::uint32_t thread = 0, pc = 0, buf = 0;
  std::size_t cell = 0;
  Val<V> value;
};

struct Stop {
  Diagnostic diag;
};

enum class TState : std::uint8_t { Run, Wait, Done };

template <class D>
class Machine {
  using V = typename D::Value;

 public:
  Machine(const Program& p, const Launch& l, D& d, const RunOptions& o) : p_(p), l_(l), d_(d), o_(o) {}

  RunResult<D> run() {
    RunResult<D> result;
    try {
      setup();
      schedule();
      collect(result);
      if (uninitialized_) result.diagnostics.push_back(*uninitialized_);
    } catch (const Stop& s) {
      // A race explains an uninitialized read that came before it; anything
      // else is reported after that read.
      if (uninitialized_ && s.diag.kind != DiagKind::Race) result.diagnostics.push_back(*uninitialized_);
      result.diagnostics.push_back(s.diag);
    } catch (const std::bad_alloc&) {
      // Allocations the budget does not count (the expressions' tables
      // between two checks, the standard library's own) can still fail.
      if (uninitialized_) result.diagnostics.push_back(*uninitialized_);
      result.diagnostics.push_back(limit_diag("the run ran out of memory after " + steps_text() + " (" +
                                              std::to_string(bytes_ >> 20) + " MiB of it counted)"));
    }
    if (!result.diagnostics.empty()) result.outputs.clear();
    result.stats = stats_;
    return result;
  }

 private:
  // ------------------------------------------------------------ setup
  void setup() {
    n_ = std::uint32_t(l_.block.count());
    if (n_ == 0 || n_ > 4096) bad_launch("a CTA must have between 1 and 4096 threads, not " + std::to_string(n_));
    // One thread races with nobody (its cp.async copies are checked apart
    // from races between threads): no shadow memory, no vector clocks.
    if (n_ == 1) o_.check_races = false;
    if (l_.args.size() != p_.params.size())
      bad_launch("the program has " + std::to_string(p_.params.size()) + " parameters but the launch gives " +
                 std::to_string(l_.args.size()));
    r_ = std::uint32_t(p_.registers.size());
    budget_ = o_.max_memory_bytes ? o_.max_memory_bytes : UINT64_MAX;
    reserve("the registers (" + std::to_string(r_) + " per thread)", std::uint64_t(n_) * r_, sizeof(Val<V>));
    reserve("the vector clocks of the race check", std::uint64_t(n_) * n_, sizeof(std::uint32_t));
    if constexpr (kMemo) find_chains();
    regs_.assign(std::size_t(n_) * r_, Val<V>{});
    constant_values_.assign(p_.constants.size(), V{});
    constant_made_.assign(p_.constants.size(), 0);
    state_.assign(n_, TState::Run);
    arrival_.assign(n_, 0);
    pc_.assign(n_, 0);
    vc_.assign(std::size_t(n_) * n_, 0);
    param_buf_.assign(p_.params.size(), kNone);
    for (std::size_t i = 0; i < p_.params.size(); ++i) {
      const LaunchArg& a = l_.args[i];
      // A 64-bit parameter may be a pointer or a scalar (PTX does not say);
      // a narrower one must be a scalar.
      if (a.is_tensor && dtype_bytes(p_.params[i].dtype) != 8)
        bad_launch("parameter '" + p_.params[i].name + "' is a " + (p_.params[i].pointer ? "pointer" : "scalar") +
                   " but the launch gives a " + (a.is_tensor ? "tensor" : "scalar"));
      if (!a.is_tensor) continue;
      Memory<V> m;
      m.name = a.tensor.name;
      m.space = Space::Global;
      m.dtype = a.tensor.dtype;
      m.esize = dtype_bytes(a.tensor.dtype);
      m.role = a.tensor.role;
      m.elements = a.tensor.elements();
      reserve_cells(m, "tensor '" + m.name + "'", m.elements);
      m.cells.resize(m.elements);
      if (o_.check_races) m.shadow.resize(m.elements);
      if (m.role == Role::In || m.role == Role::InOut) fill_inputs(m);
      param_buf_[i] = std::uint32_t(mem_.size());
      mem_.push_back(std::move(m));
    }
    decl_buf_.assign(p_.buffers.size(), kNone);
    for (std::size_t i = 0; i < p_.buffers.size(); ++i) {
      const BufferDecl& b = p_.buffers[i];
      Memory<V> m;
      m.name = b.name;
      m.space = b.space;
      m.dtype = b.dtype;
      m.esize = dtype_bytes(b.dtype);
      m.elements = b.elements;
      m.per_thread = b.space == Space::Local;
      m.untyped = b.dtype == DType::B8;
      m.read_only = b.read_only;
      m.init = b.init;
      auto bound = l_.symbols.find(b.name);
      if (bound != l_.symbols.end() && b.space != Space::Shared && b.space != Space::Local) {
        // Filled by the host (cudaMemcpyToSymbol), replacing any initializer.
        const TensorArg& ta = bound->second;
        if (ta.role != Role::In)
          bad_launch("module variable '" + b.name + "' can only be given as an input tensor (role \"in\")");
        const std::uint64_t bytes = b.elements * dtype_bytes(b.dtype), given = ta.elements() * dtype_bytes(ta.dtype);
        if (bytes != given)
          bad_launch("module variable '" + b.name + "' has " + std::to_string(bytes) + " bytes, but the tensor '" +
                     ta.name + "' given for it has " + std::to_string(given));
        m.name = ta.name;
        m.dtype = ta.dtype;
        m.esize = dtype_bytes(ta.dtype);
        m.elements = ta.elements();
        m.untyped = false;
        m.init.clear();
        m.role = Role::In;
        reserve_cells(m, "tensor '" + m.name + "'", m.elements);
        m.cells.resize(m.elements);
        if (o_.check_races) m.shadow.resize(m.elements);
        fill_inputs(m);
        decl_buf_[i] = std::uint32_t(mem_.size());
        mem_.push_back(std::move(m));
        continue;
      }
      if (b.from_host)
        bad_launch("'" + b.name + "' is __constant__ data the host fills (cudaMemcpyToSymbol): give it as an input "
                   "tensor, with \"symbols\": {\"" + b.name + "\": \"<tensor>\"} in the kernel's spec entry");
      const std::uint64_t total = m.per_thread ? mul_sat(b.elements, n_) : b.elements;
      reserve_cells(m, std::string(m.per_thread ? ".local" : b.space == Space::Shared ? ".shared" : "module") +
                           " array '" + b.name + "'" + (m.per_thread ? " (one per thread)" : ""),
                    total);
      m.cells.resize(total);
      if (!m.per_thread && o_.check_races) m.shadow.resize(total);
      fill_initial(m);
      decl_buf_[i] = std::uint32_t(mem_.size());
      mem_.push_back(std::move(m));
    }
  }

  // A tensor's input values: symbols (integer ones for integer dtypes). In
  // the symbolic domain an element's symbol is made when something first
  // reads it (input() there is a hash-consed node with a string-keyed name:
  // a CTA of a reduction reads 128 of the 512 elements it is given, and
  // making them all was most of its symbolic run).
  static constexpr bool kLazyInputs = std::is_same<D, SymbolicDomain>::value;
  void fill_inputs(Memory<V>& m) {
    const bool ints = !dtype_is_float(m.dtype) && m.dtype != DType::Pred;
    m.lazy_inputs = kLazyInputs;
    for (std::uint64_t e = 0; e < m.elements; ++e) {
      m.cells[e].kind = ints ? VKind::Data : VKind::Float;
      if (!kLazyInputs) m.cells[e].f = ints ? d_.int_input(m.name, e) : d_.input(m.name, e);
    }
  }
  // Cell c's value for a read: makes its input symbol first if it is still
  // to be made (see fill_inputs). Every read of a cell goes through here.
  const Val<V>& read_cell(Memory<V>& m, std::size_t c) {
    Val<V>& v = m.cells[c];
    if constexpr (kLazyInputs) {
      if (m.lazy_inputs && !v.f.valid() && (v.kind == VKind::Float || v.kind == VKind::Data))
        v.f = v.kind == VKind::Data ? d_.int_input(m.name, c) : d_.input(m.name, c);
    }
    return v;
  }

  // Module data starts with its initializer: each element's little-endian
  // bytes as an integer (its bits); a float load reads them as a float.
  static void fill_initial(Memory<V>& m) {
    if (m.init.empty() || m.per_thread) return;
    for (std::size_t e = 0; e < m.cells.size(); ++e) {
      std::uint64_t bits = 0;
      for (std::size_t b = 0; b < m.esize && e * m.esize + b < m.init.size(); ++b)
        bits |= std::uint64_t(m.init[e * m.esize + b]) << (8 * b);
      m.cells[e].kind = VKind::Int;
      m.cells[e].i = std::int64_t(bits);
    }
  }

  // ------------------------------------------------------------ limits
  static std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b) {
    return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
  }
  static std::string bytes_text(std::uint64_t b) {
    if (b == UINT64_MAX) return "more than 16 EiB";
    std::ostringstream os;
    os.precision(3);
    if (b >= (std::uint64_t(1) << 30)) os << double(b) / double(std::uint64_t(1) << 30) << " GiB";
    else if (b >= (std::uint64_t(1) << 20)) os << double(b) / double(std::uint64_t(1) << 20) << " MiB";
    else os << b << " bytes";
    return os.str();
  }
  std::string steps_text() const { return std::to_string(stats_.thread_instructions) + " thread-instructions"; }
  Diagnostic limit_diag(const std::string& msg) const {
    Diagnostic d;
    d.kind = DiagKind::Limit;
    d.message = msg;
    return d;
  }
  // Counts `count` items of `each` bytes against the memory budget before
  // they are allocated: over it, the run stops as a Limit naming `what`.
  void reserve(const std::string& what, std::uint64_t count, std::uint64_t each) {
    const std::uint64_t need = mul_sat(count, each);
    if (need > budget_ || bytes_ > budget_ - need)
      throw Stop{limit_diag("memory limit: " + what + " needs " + bytes_text(need) + " (" + std::to_string(count) +
                            " elements), over the run's memory budget of " + bytes_text(budget_) +
                            (bytes_ >= (std::uint64_t(1) << 20) ? " with " + bytes_text(bytes_) + " already in use"
                                                                : std::string()) +
                            " (--max-memory)")};
    bytes_ += need;
  }
  // A memory's cells, their shadow for the race check and touch records.
  void reserve_cells(const Memory<V>& m, const std::string& what, std::uint64_t cells) {
    std::uint64_t each = sizeof(Val<V>);
    if (!m.per_thread && o_.check_races) each += sizeof(Shadow);
    if (o_.record_touches && m.space == Space::Global) each += sizeof(Touch);
    reserve(what, cells, each);
    // Symbols are indexed by 32 bits: only a budget above 100 GiB gets here.
    if (cells > UINT32_MAX)
      throw Stop{limit_diag(what + " has " + std::to_string(cells) +
                            " elements; tileverify handles at most 2^32 elements in one memory")};
  }
  // Every few thousand thread-instructions: the deadline, and the memory
  // the expressions built so far take.
  void check_limits(std::uint32_t t) {
    if (o_.deadline && std::chrono::steady_clock::now() > *o_.deadline)
      fail(DiagKind::Limit, t, "time limit reached after " + steps_text() + " (the run had not finished)");
    if constexpr (std::is_same<D, SymbolicDomain>::value) {
      const std::uint64_t arena = d_.context().memory_bytes();
      if (arena > budget_ || bytes_ > budget_ - arena)
        fail(DiagKind::Limit, t,
             "memory limit: the run's expressions take " + bytes_text(arena) + " after " + steps_text() +
                 ", over the memory budget of " + bytes_text(budget_) + " with its memories (--max-memory)");
    }
  }

  [[noreturn]] void bad_launch(const std::string& msg) {
    Diagnostic d;
    d.kind = DiagKind::BadLaunch;
    d.message = msg;
    throw Stop{d};
  }

  [[noreturn]] void fail(DiagKind k, std::uint32_t t, const std::string& msg) {
    Diagnostic d;
    d.kind = k;
    d.message = msg;
    d.loc = p_.code[pc_[t]].loc;
    d.threads = {t};
    d.detail = "  instruction: " + p_.instr_text(pc_[t]) + "\n";
    throw Stop{d};
  }

  // ------------------------------------------------------------ scheduling
  void schedule() {
    std::mt19937_64 rng(o_.random_schedule ? *o_.random_schedule : 0);
    for (;;) {
      if (o_.random_schedule) {
        std::vector<std::uint32_t> runnable;
        for (;;) {
          runnable.clear();
          for (std::uint32_t t = 0; t < n_; ++t)
            if (state_[t] == TState::Run) runnable.push_back(t);
          if (runnable.empty()) break;
          std::uint32_t t = runnable[rng() % runnable.size()];
          unsigned burst = unsigned(1 + rng() % 8);
          for (unsigned k = 0; k < burst && state_[t] == TState::Run; ++k) step(t);
        }
      } else {
        for (std::uint32_t t = 0; t < n_; ++t)
          while (state_[t] == TState::Run) step(t);
      }
      bool all_done = true;
      for (std::uint32_t t = 0; t < n_; ++t) all_done = all_done && state_[t] == TState::Done;
      if (all_done) return;
      if (!release_groups()) deadlock();
    }
  }

  // The thread set a sync instruction names, for thread t.
  std::vector<std::uint32_t> sync_set(std::uint32_t t, const Instr& in) {
    std::vector<std::uint32_t> s;
    if (in.op == Opcode::Bar) {
      s.resize(n_);
      for (std::uint32_t u = 0; u < n_; ++u) s[u] = u;
      return s;
    }
    s.reserve(32);
    std::uint32_t mask = 0xffffffffu;  // mma.sync.aligned and ldmatrix.sync.aligned: the whole warp
    auto mask_at = [&](std::size_t i) {
      return std::uint32_t(as_int(t, operand(t, in.src[i]), "a member mask"));  // an immediate or a register
    };
    if (in.op == Opcode::WarpSync)
      mask = mask_at(0);
    else if (in.op == Opcode::Shfl)
      mask = mask_at(3);
    else if (in.op == Opcode::Vote || in.op == Opcode::Redux)
      mask = mask_at(1);
    std::uint32_t warp = t / 32;
    for (std::uint32_t lane = 0; lane < 32; ++lane)
      if (mask >> lane & 1) {
        std::uint32_t u = warp * 32 + lane;
        if (u < n_) s.push_back(u);
      }
    return s;
  }

  // Releases every group of waiting threads whose sync is complete.
  // bar.sync id, count with count below the CTA size: the barrier completes
  // when `count` threads have arrived at barrier `id` (from any instruction),
  // as in hardware; the earliest arrivals form the group.
  bool counted(const Instr& in) const { return in.op == Opcode::Bar && in.src.size() > 1 && in.src[1].imm != std::int64_t(n_); }

  bool release_counted(std::uint32_t t) {
    const Instr& in = p_.code[pc_[t]];
    std::vector<std::uint32_t> waiting;
    for (std::uint32_t u = 0; u < n_; ++u) {
      if (state_[u] != TState::Wait) continue;
      const Instr& other = p_.code[pc_[u]];
      if (counted(other) && other.src[0].imm == in.src[0].imm && other.src[1].imm == in.src[1].imm) waiting.push_back(u);
    }
    std::size_t count = std::size_t(in.src[1].imm);
    if (waiting.size() < count) return false;
    std::sort(waiting.begin(), waiting.end(), [&](std::uint32_t a, std::uint32_t b) { return arrival_[a] < arrival_[b]; });
    waiting.resize(count);
    std::sort(waiting.begin(), waiting.end());
    join_clocks(waiting);
    ++stats_.block_syncs;
    for (std::uint32_t u : waiting) {
      state_[u] = TState::Run;
      ++pc_[u];
    }
    return true;
  }

  bool release_groups() {
    bool any = false;
    for (std::uint32_t t = 0; t < n_; ++t) {
      if (state_[t] != TState::Wait) continue;
      const Instr& in = p_.code[pc_[t]];
      if (counted(in)) {
        any = release_counted(t) || any;
        continue;
      }
      std::vector<std::uint32_t> set = sync_set(t, in);
      if (std::find(set.begin(), set.end(), t) == set.end())
        fail(DiagKind::Deadlock, t, "thread " + std::to_string(t) + " is not in the thread set of its own sync");
      bool complete = true;
      std::vector<std::uint32_t> group;
      for (std::uint32_t u : set) {
        if (state_[u] == TState::Done) continue;
        // A CTA barrier's set is every thread, whoever asks: only a warp
        // collective's (its mask operand) needs each member's own.
        if (state_[u] != TState::Wait || pc_[u] != pc_[t] ||
            (in.op != Opcode::Bar && sync_set(u, p_.code[pc_[u]]) != set)) {
          complete = false;
          break;
        }
        group.push_back(u);
      }
      if (!complete) continue;
      collective(in, group);
      join_clocks(group);
      if (in.op == Opcode::Bar)
        ++stats_.block_syncs;
      else
        ++stats_.warp_syncs;
      for (std::uint32_t u : group) {
        state_[u] = TState::Run;
        ++pc_[u];
      }
      any = true;
    }
    return any;
  }

  [[noreturn]] void deadlock() {
    Diagnostic d;
    d.kind = DiagKind::Deadlock;
    std::ostringstream os;
    std::uint32_t first = kNone;
    std::map<std::uint32_t, std::vector<std::uint32_t>> by_pc;
    for (std::uint32_t t = 0; t < n_; ++t)
      if (state_[t] == TState::Wait) {
        by_pc[pc_[t]].push_back(t);
        if (first == kNone) first = t;
      }
    std::uint32_t done = 0;
    for (std::uint32_t t = 0; t < n_; ++t) done += state_[t] == TState::Done;
    d.message = "no thread can make progress: " + std::to_string(n_ - done) +
                " threads wait at syncs whose thread sets never complete";
    d.loc = p_.code[pc_[first]].loc;
    for (auto& [pc, ts] : by_pc) {
      os << "  waiting at " << p_.code[pc].loc.with_source() << " (" << p_.instr_text(pc) << "): threads ";
      for (std::size_t i = 0; i < ts.size() && i < 8; ++i) os << (i ? ", " : "") << ts[i];
      if (ts.size() > 8) os << ", ... (" << ts.size() << ")";
      std::vector<std::uint32_t> set = sync_set(ts[0], p_.code[pc]);
      std::vector<std::uint32_t> missing;
      for (std::uint32_t u : set)
        if (state_[u] == TState::Run || (state_[u] == TState::Wait && pc_[u] != pc)) missing.push_back(u);
      for (std::uint32_t u : set)
        if (state_[u] == TState::Wait && pc_[u] == pc && sync_set(u, p_.code[pc]) != set &&
            std::find(missing.begin(), missing.end(), u) == missing.end())
          missing.push_back(u);
      if (!missing.empty()) {
        os << "; it needs threads ";
        for (std::size_t i = 0; i < missing.size() && i < 8; ++i) os << (i ? ", " : "") << missing[i];
        if (missing.size() > 8) os << ", ...";
        os << ", which are at another sync or in a different set";
      }
      os << "\n";
      for (std::uint32_t t : ts) d.threads.push_back(t);
    }
    if (done) os << "  " << done << " threads have returned\n";
    d.detail = os.str();
    throw Stop{d};
  }

  // Every member first ticks its own clock, then all take the join: each
  // member's accesses before the sync are now ordered before everything any
  // member does after it.
  void join_clocks(const std::vector<std::uint32_t>& group) {
    if (!o_.check_races || group.empty()) return;
    for (std::uint32_t u : group) ++vc_[std::size_t(u) * n_ + u];
    std::vector<std::uint32_t> j(n_, 0);
    for (std::uint32_t u : group) {
      const std::uint32_t* c = &vc_[std::size_t(u) * n_];
      for (std::uint32_t k = 0; k < n_; ++k) j[k] = std::max(j[k], c[k]);
    }
    for (std::uint32_t u : group) std::copy(j.begin(), j.end(), vc_.begin() + std::ptrdiff_t(std::size_t(u) * n_));
  }

  // ------------------------------------------------------------ values
  Val<V>& reg(std::uint32_t t, std::uint32_t r) { return regs_[std::size_t(t) * r_ + r]; }

  std::int64_t special(std::uint32_t t, Special s) {
    std::uint32_t x = t % l_.block.x, y = (t / l_.block.x) % l_.block.y, z = t / (l_.block.x * l_.block.y);
    switch (s) {
      case Special::TidX: return x;
      case Special::TidY: return y;
      case Special::TidZ: return z;
      case Special::NtidX: return l_.block.x;
      case Special::NtidY: return l_.block.y;
      case Special::NtidZ: return l_.block.z;
      case Special::CtaidX: return l_.cta.x;
      case Special::CtaidY: return l_.cta.y;
      case Special::CtaidZ: return l_.cta.z;
      case Special::NctaidX: return l_.grid.x;
      case Special::NctaidY: return l_.grid.y;
      case Special::NctaidZ: return l_.grid.z;
      case Special::LaneId: return t % 32;
      case Special::WarpId: return t / 32;
    }
    return 0;
  }

  V constant_operand(std::uint32_t index) {
    if (!constant_made_[index]) {
      constant_values_[index] = d_.constant(p_.constants[index]);
      constant_made_[index] = 1;
    }
    return constant_values_[index];
  }

  Val<V> operand(std::uint32_t t, const Operand& o) {
    Val<V> v;
    switch (o.kind) {
      case Operand::Kind::Reg: {
        const Val<V>& r = reg(t, o.index);
        if (r.kind == VKind::Undef)
          fail(DiagKind::Uninitialized, t, "register " + p_.registers[o.index].name + " is read before it is written");
        return r;
      }
      case Operand::Kind::Int:
        v.kind = VKind::Int;
        v.i = o.imm;
        return v;
      case Operand::Kind::Float:
        v.kind = VKind::Float;
        v.f = constant_operand(o.index);
        return v;
      case Operand::Kind::Special:
        v.kind = VKind::Int;
        v.i = special(t, Special(o.index));
        return v;
      case Operand::Kind::Buffer:
        v.kind = VKind::Ptr;
        v.buf = decl_buf_[o.index];
        v.i = o.imm;
        return v;
      case Operand::Kind::Param: {
        const LaunchArg& a = l_.args[o.index];
        if (a.is_tensor) {
          v.kind = VKind::Ptr;
          v.buf = param_buf_[o.index];
          v.i = 0;
        } else {
          v.kind = VKind::Int;
          v.i = a.scalar;
        }
        return v;
      }
      case Operand::Kind::None: break;
    }
    fail(DiagKind::Unsupported, t, "missing operand");
  }

  static std::int64_t wrap(std::int64_t v, DType t) {
    std::size_t bits = dtype_bytes(t) * 8;
    if (t == DType::Pred) return v != 0;
    if (bits >= 64) return v;
    std::uint64_t m = (std::uint64_t(1) << bits) - 1;
    std::uint64_t u = std::uint64_t(v) & m;
    if (dtype_is_signed(t) && (u >> (bits - 1))) u |= ~m;
    return std::int64_t(u);
  }

  std::int64_t as_int(std::uint32_t t, const Val<V>& v, const char* what) {
    if (v.kind == VKind::Int) return v.i;
    if (v.kind == VKind::Float)
      fail(DiagKind::NotStructured, t, std::string(what) + " depends on tensor data (a float used as an integer)");
    if (v.kind == VKind::Cond) fail(DiagKind::NotStructured, t, std::string(what) + " depends on tensor data");
    if (v.kind == VKind::Data) fail(DiagKind::NotStructured, t, std::string(what) + " depends on integer tensor data");
    fail(DiagKind::NotStructured, t, std::string(what) + ": a pointer used as an integer");
  }

  V as_float(std::uint32_t t, const Val<V>& v, DType type) {
    if (v.kind == VKind::Float) return v.f;
    if (v.kind == VKind::Int) {  // raw bits of a float constant (mov.b32 %f, 0x3f800000)
      if (std::optional<V> x = from_bits(std::uint64_t(v.i), type)) return *x;
      fail(DiagKind::Unsupported, t, "an infinite or NaN float constant");
    }
    if (v.kind == VKind::Data)
      fail(DiagKind::NotStructured, t, "integer tensor data read as the bits of a float");
    fail(DiagKind::NotStructured, t, "a float operation on a pointer or predicate");
  }

  // The float with these bits in format `type` (f32 unless f64, f16 or bf16); none for NaN.
  std::optional<V> from_bits(std::uint64_t bits, DType type) {
    if (type == DType::F16 || type == DType::BF16) {
      std::uint16_t h = std::uint16_t(bits);
      bool special = type == DType::F16 ? (h & 0x7c00u) == 0x7c00u : (h & 0x7f80u) == 0x7f80u;
      std::uint16_t frac = type == DType::F16 ? (h & 0x3ffu) : (h & 0x7fu);
      if (special) return frac ? std::nullopt : std::optional<V>(d_.infinity(h >> 15));
      return d_.constant(type == DType::F16 ? Rational::from_f16_bits(h) : Rational::from_bf16_bits(h));
    }
    if (type != DType::F64 && (bits & 0x7fffffffu) == 0x7f800000u) return d_.infinity(bits >> 31 & 1);
    if (type == DType::F64 && (bits & 0x7fffffffffffffffull) == 0x7ff0000000000000ull) return d_.infinity(bits >> 63);
    try {
      if (type == DType::F64) return d_.constant(Rational::from_f64_bits(bits));
      return d_.constant(Rational::from_f32_bits(std::uint32_t(bits)));
    } catch (const std::domain_error&) {
      return std::nullopt;
    }
  }

  void set(std::uint32_t t, std::uint32_t r, const Val<V>& v) { reg(t, r) = v; }

  Val<V> int_val(std::int64_t x) {
    Val<V> v;
    v.kind = VKind::Int;
    v.i = x;
    return v;
  }
  Val<V> float_val(V x) {
    Val<V> v;
    v.kind = VKind::Float;
    v.f = x;
    return v;
  }
  Val<V> data_val(V x) {
    Val<V> v;
    v.kind = VKind::Data;
    v.f = x;
    return v;
  }
  // An integer operand as a domain value (for arithmetic on integer data).
  V as_data(std::uint32_t t, const Val<V>& v, DType type, const char* what) {
    if (v.kind == VKind::Data) return v.f;
    return d_.constant(Rational(dtype_is_signed(type) ? wrap(as_int(t, v, what), type)
                                                      : std::int64_t(std::uint64_t(wrap(as_int(t, v, what), type)) & mask(type))));
  }

  // ------------------------------------------------------------ memory
  struct Addr {
    std::uint32_t buf;
    std::int64_t offset;
  };

  Addr address(std::uint32_t t, const Operand& o) {
    if (o.kind == Operand::Kind::Buffer) return Addr{decl_buf_[o.index], o.imm};
    Val<V> v = operand(t, o);
    if (v.sched) schedule_dependent(t, v.sched, "an address");
    if (v.kind != VKind::Ptr)
      fail(DiagKind::NotStructured, t,
           v.kind == VKind::Int ? "an address that is an integer, not a pointer into a known buffer"
                                : "an address that depends on tensor data");
    return Addr{v.buf, v.i + (o.kind == Operand::Kind::Reg ? o.imm : 0)};
  }

  // The cell of element `k` of an access at `a`, checked.
  std::size_t cell(std::uint32_t t, const Addr& a, std::size_t k, std::size_t width_bytes, bool write) {
    Memory<V>& m = mem_[a.buf];
    if (m.untyped && width_bytes != m.esize) {
      // A byte array (.shared .b8 buf[N]) takes the width of its first access as
      // its element size; accessing it at other widths later is unsupported.
      m.elements = m.elements * m.esize / width_bytes;
      m.esize = width_bytes;
      m.cells.assign(m.per_thread ? m.elements * n_ : m.elements, Val<V>{});
      if (!m.per_thread && o_.check_races) m.shadow.assign(m.elements, Shadow{});
      fill_initial(m);
    }
    m.untyped = false;
    if (width_bytes != m.esize)
      fail(DiagKind::Unsupported, t,
           "a " + std::to_string(width_bytes) + "-byte access to '" + m.name + "', whose elements are " +
               std::to_string(m.esize) + " bytes");
    std::int64_t byte = a.offset + std::int64_t(k * width_bytes);
    if (byte % std::int64_t(m.esize) != 0) fail(DiagKind::Unsupported, t, "a misaligned access to '" + m.name + "'");
    std::int64_t e = byte / std::int64_t(m.esize);
    if (e < 0 || std::uint64_t(e) >= m.elements) {
      Diagnostic d;
      d.kind = DiagKind::OutOfBounds;
      d.message = std::string(write ? "write to " : "read of ") + m.name + "[" + std::to_string(e) + "], but '" +
                  m.name + "' has " + std::to_string(m.elements) + " elements";
      d.loc = p_.code[pc_[t]].loc;
      d.threads = {t};
      d.buffer = m.name;
      d.element = e;
      d.detail = "  instruction: " + p_.instr_text(pc_[t]) + "\n";
      throw Stop{d};
    }
    return m.per_thread ? std::size_t(t) * m.elements + std::size_t(e) : std::size_t(e);
  }

  [[noreturn]] void race(std::uint32_t t, Memory<V>& m, std::size_t c, std::uint32_t other, std::uint32_t other_pc,
                         Access other_kind, Access kind, std::uint32_t pc) {
    Diagnostic d;
    d.kind = DiagKind::Race;
    d.message = std::string("data race on ") + space_name(m.space) + " " + m.name + "[" + std::to_string(c) +
                "] between thread " + std::to_string(other) + " (" + access_name(other_kind) + ") and thread " +
                std::to_string(t) + " (" + access_name(kind) + ")";
    d.loc = p_.code[pc].loc;
    d.threads = {other, t};
    d.buffer = m.name;
    d.element = std::int64_t(c);
    auto info = [&](std::uint32_t u, std::uint32_t upc, Access k) {
      return AccessInfo{u, upc, k != Access::Read, p_.code[upc].loc, p_.instr_text(upc), access_name(k)};
    };
    d.accesses = {info(other, other_pc, other_kind), info(t, pc, kind)};
    throw Stop{d};
  }

  // FastTrack-style checks: the last write is one epoch (thread, clock); reads
  // and atomics are one epoch until two unordered ones meet, then a vector clock.
  bool ordered(std::uint32_t t, std::uint32_t u, std::uint32_t clock) const {
    return u == t || vc_[std::size_t(t) * n_ + u] > clock;
  }

  void add_epoch(Epochs& e, std::uint32_t t, std::uint32_t pc) {
    std::uint32_t clock = vc_[std::size_t(t) * n_ + t];
    if (e.set >= 0) {
      read_sets_[std::size_t(e.set)][t] = {clock + 1, pc};
    } else if (e.thread == kNone || ordered(t, e.thread, e.clock)) {
      e.thread = t;
      e.clock = clock;
      e.pc = pc;
    } else {  // two unordered accesses: keep both
      std::vector<std::pair<std::uint32_t, std::uint32_t>> set(n_, {0, 0});
      set[e.thread] = {e.clock + 1, e.pc};
      set[t] = {clock + 1, pc};
      e.set = new_read_set(std::move(set));
    }
  }

  // Calls f(thread, pc) for each access in e that no sync orders before t's.
  template <class F>
  void for_unordered(const Epochs& e, std::uint32_t t, F f) {
    if (e.set >= 0) {
      const auto& set = read_sets_[std::size_t(e.set)];
      for (std::uint32_t u = 0; u < n_; ++u)
        if (set[u].first != 0 && !ordered(t, u, set[u].first - 1)) f(u, set[u].second);
    } else if (e.thread != kNone && !ordered(t, e.thread, e.clock)) {
      f(e.thread, e.pc);
    }
  }

  void clear_epochs(Epochs& e) {
    if (e.set >= 0) free_sets_.push_back(e.set);
    e.set = -1;
    e.thread = kNone;
  }

  std::int32_t new_read_set(std::vector<std::pair<std::uint32_t, std::uint32_t>>&& set) {
    if (!free_sets_.empty()) {
      std::int32_t k = free_sets_.back();
      free_sets_.pop_back();
      read_sets_[std::size_t(k)] = std::move(set);
      return k;
    }
    read_sets_.push_back(std::move(set));
    return std::int32_t(read_sets_.size() - 1);
  }

  // An element a cp.async will write when its group is retired: any access
  // before that, by any thread, the copying one included, races with the copy.
  void check_pending(std::uint32_t t, Memory<V>& m, std::size_t c, Access kind, std::uint32_t pc) {
    if (m.pending.empty() || m.pending[c] == 0) return;
    const AsyncCopy<V>& cp = copies_[m.pending[c] - 1];
    race(t, m, c, cp.thread, cp.pc, Access::AsyncWrite, kind, pc);
  }

  void check_read(std::uint32_t t, Memory<V>& m, std::size_t c) { check_read(t, m, c, pc_[t]); }
  void touch(Memory<V>& m, std::size_t c, std::uint8_t kind, std::uint32_t t, std::uint32_t pc) {
    if (!o_.record_touches || m.role == Role::Scratch || m.space != Space::Global) return;
    if (m.touches.size() < m.cells.size()) m.touches.resize(m.cells.size());
    Touch& x = m.touches[c];
    bool first_update = kind != Touch::kRead && !(x.kinds & (Touch::kWrite | Touch::kAtomic));
    if (x.kinds == 0 || first_update) {
      x.thread = t;
      x.pc = pc;
    }
    if (kind == Touch::kAtomic) x.atomic_op = p_.code[pc].mode;
    x.kinds |= kind;
  }

  void check_read(std::uint32_t t, Memory<V>& m, std::size_t c, std::uint32_t pc) {
    touch(m, c, Touch::kRead, t, pc);
    check_pending(t, m, c, Access::Read, pc);
    if (!o_.check_races || m.per_thread) return;
    Shadow& s = m.shadow[c];
    if (s.w_thread != kNone && !ordered(t, s.w_thread, s.w_clock))
      race(t, m, c, s.w_thread, s.w_pc, Access::Write, Access::Read, pc);
    for_unordered(s.atomics, t, [&](std::uint32_t u, std::uint32_t upc) {
      race(t, m, c, u, upc, Access::Atomic, Access::Read, pc);
    });
    add_epoch(s.reads, t, pc);
  }

  void check_write(std::uint32_t t, Memory<V>& m, std::size_t c, std::uint32_t pc, Access kind = Access::Write) {
    touch(m, c, Touch::kWrite, t, pc);
    check_pending(t, m, c, kind, pc);
    if (!o_.check_races || m.per_thread) return;
    Shadow& s = m.shadow[c];
    if (s.w_thread != kNone && !ordered(t, s.w_thread, s.w_clock))
      race(t, m, c, s.w_thread, s.w_pc, Access::Write, kind, pc);
    for_unordered(s.reads, t, [&](std::uint32_t u, std::uint32_t upc) { race(t, m, c, u, upc, Access::Read, kind, pc); });
    for_unordered(s.atomics, t, [&](std::uint32_t u, std::uint32_t upc) {
      race(t, m, c, u, upc, Access::Atomic, kind, pc);
    });
    // Everything later that is ordered after this write is ordered after the
    // reads and atomics it was ordered after: they need no checking any more.
    clear_epochs(s.reads);
    clear_epochs(s.atomics);
    s.w_thread = t;
    s.w_clock = vc_[std::size_t(t) * n_ + t];
    s.w_pc = pc;
  }

  // Atomics commute with each other (the same operation on the same type),
  // so two of them never race; an atomic and a plain access do, unless ordered.
  void check_atomic(std::uint32_t t, Memory<V>& m, std::size_t c, std::uint32_t pc) {
    touch(m, c, Touch::kAtomic, t, pc);
    check_pending(t, m, c, Access::Atomic, pc);
    if (!o_.check_races || m.per_thread) return;
    Shadow& s = m.shadow[c];
    if (s.w_thread != kNone && !ordered(t, s.w_thread, s.w_clock))
      race(t, m, c, s.w_thread, s.w_pc, Access::Write, Access::Atomic, pc);
    for_unordered(s.reads, t, [&](std::uint32_t u, std::uint32_t upc) {
      race(t, m, c, u, upc, Access::Read, Access::Atomic, pc);
    });
    const Instr& in = p_.code[pc];
    for_unordered(s.atomics, t, [&](std::uint32_t u, std::uint32_t upc) {
      const Instr& other = p_.code[upc];  // atom.add and atom.max on one element do not commute
      if (other.mode != in.mode || other.type != in.type) race(t, m, c, u, upc, Access::Atomic, Access::Atomic, pc);
    });
    add_epoch(s.atomics, t, pc);
  }

  // ------------------------------------------------------------ execution
  void step(std::uint32_t t) {
    if (++stats_.thread_instructions > o_.max_steps)
      fail(DiagKind::Limit, t,
           "step limit of " + std::to_string(o_.max_steps) +
               " thread-instructions reached (an endless loop, or a kernel larger than the limit)");
    if ((stats_.thread_instructions & 4095) == 0) check_limits(t);
    if (stats_.thread_instructions == o_.long_run_steps && o_.on_long_run) o_.on_long_run();
    std::uint32_t pc = pc_[t];
    if (pc >= p_.code.size()) {
      state_[t] = TState::Done;
      return;
    }
    const Instr& in = p_.code[pc];
    if (in.guard >= 0) {
      const Val<V>& g = reg(t, std::uint32_t(in.guard));
      if (g.kind == VKind::Cond) fail(DiagKind::NotStructured, t, "an instruction predicated on tensor data");
      if (g.sched) schedule_dependent(t, g.sched, "a branch or predicated instruction");
      bool on = as_int(t, g, "a guard predicate") != 0;
      if (on == in.guard_negated) {
        pc_[t] = pc + 1;
        return;
      }
    }
    switch (in.op) {
      case Opcode::Bra:
        pc_[t] = in.target;
        return;
      case Opcode::Ret:
        state_[t] = TState::Done;
        return;
      case Opcode::Bar:
        if (counted(in)) {
          std::int64_t c = in.src[1].imm;
          if (c <= 0 || c % 32 != 0 || c > std::int64_t(n_))
            fail(DiagKind::Unsupported, t,
                 "a barrier thread count must be a positive multiple of 32 up to the CTA size, not " + std::to_string(c));
        }
        arrival_[t] = ++arrivals_;
        state_[t] = TState::Wait;
        return;
      case Opcode::WarpSync:
      case Opcode::Shfl:
      case Opcode::Vote:
      case Opcode::Redux:
      case Opcode::Mma:
      case Opcode::LdMatrix:
      case Opcode::WmmaLoad:
      case Opcode::WmmaMma:
      case Opcode::WmmaStore:
        state_[t] = TState::Wait;
        return;
      case Opcode::Ld:
        load(t, in);
        break;
      case Opcode::St:
        store(t, in);
        break;
      case Opcode::Atom:
        atomic(t, in);
        break;
      case Opcode::Trap:
        trap(t, in);  // stops the run
      case Opcode::CpAsync:
        cp_async(t, in);
        break;
      case Opcode::CpAsyncCommit:
        need_copy_groups();
        copy_groups_[t].push_back(std::move(open_copies_[t]));
        open_copies_[t].clear();
        break;
      case Opcode::CpAsyncWait: {
        // wait_all is commit_group + wait_group 0 (PTX ISA).
        need_copy_groups();
        if (in.mode == 1) {
          copy_groups_[t].push_back(std::move(open_copies_[t]));
          open_copies_[t].clear();
        }
        std::size_t keep = in.mode == 1 ? 0 : std::size_t(in.src[0].imm);
        while (copy_groups_[t].size() > keep) {
          retire(t, copy_groups_[t].front());
          copy_groups_[t].pop_front();
        }
        break;
      }
      default:
        alu(t, in);
        break;
    }
    pc_[t] = pc + 1;
  }

  void load(std::uint32_t t, const Instr& in) {
    if (in.space == Space::Param) {
      set(t, in.dst[0], operand(t, in.src[0]));
      return;
    }
    Addr a = address(t, in.src[0]);
    Memory<V>& m = mem_[a.buf];
    for (std::size_t k = 0; k < in.dst.size(); ++k) {
      if (packed(m, in.type)) {
        set(t, in.dst[k], load_pair(t, m, a, k));
        continue;
      }
      std::size_t c = cell(t, a, k, dtype_bytes(in.type), false);
      check_read(t, m, c);
      Val<V> v = read_cell(m, c);
      if (v.kind == VKind::Undef) {
        // Report it, but run on with a poison value: the read may be one side
        // of a race (a missing barrier), which is the better report.
        note_uninitialized(t, m, c);
        set(t, in.dst[k], float_val(d_.poison(m.name, c)));
        continue;
      }
      if (v.kind == VKind::Int && !m.init.empty()) {
        // Module data holds bits: a float load reads a float, a signed load sign-extends.
        if (dtype_is_float(in.type))
          v = float_val(as_float(t, v, in.type));
        else
          v.i = wrap(v.i, in.type);
      }
      set(t, in.dst[k], v);
    }
  }

  void note_uninitialized(std::uint32_t t, const Memory<V>& m, std::size_t c) {
    if (uninitialized_) return;
    Diagnostic d;
    d.kind = DiagKind::Uninitialized;
    d.message = "read of " + m.name + "[" + std::to_string(c) + "], which nothing has written";
    d.loc = p_.code[pc_[t]].loc;
    d.threads = {t};
    d.buffer = m.name;
    d.element = std::int64_t(c);
    d.detail = "  instruction: " + p_.instr_text(pc_[t]) + "\n";
    uninitialized_ = d;
  }

  // trap, or a failed assert(): on a GPU the kernel stops here with an error
  // (the launch fails). The assert's message, file and function are C strings
  // in module data ($str arrays), read from their initializers.
  [[noreturn]] void trap(std::uint32_t t, const Instr& in) {
    auto arg = [&](std::size_t i) -> Val<V> {
      if (i >= in.src.size()) return Val<V>{};
      const Operand& o = in.src[i];
      if (o.kind == Operand::Kind::Reg) return reg(t, o.index);  // an unset register: no text, not an error
      return o.kind == Operand::Kind::None ? Val<V>{} : operand(t, o);
    };
    auto text = [&](std::size_t i) {
      std::string s;
      Val<V> v = arg(i);
      if (v.kind != VKind::Ptr || v.i < 0) return s;
      const std::vector<std::uint8_t>& bytes = mem_[v.buf].init;
      for (std::size_t k = std::size_t(v.i); k < bytes.size() && bytes[k] != 0 && s.size() < 400; ++k)
        s += bytes[k] >= 0x20 && bytes[k] < 0x7f ? char(bytes[k]) : '?';
      return s;
    };
    Diagnostic d;
    d.kind = DiagKind::Trap;
    d.loc = in.loc;
    d.threads = {t};
    if (in.mode == 1) {
      std::string msg = text(0), file = text(1), func = text(3);
      Val<V> line = arg(2);
      d.message = msg.empty() ? "an assert() failed" : "assertion `" + msg + "` failed";
      std::string where = file;
      if (!file.empty() && line.kind == VKind::Int) where += ":" + std::to_string(line.i);
      if (!func.empty()) where += (where.empty() ? "in " : ", in ") + func;
      if (!where.empty()) d.message += " (" + where + ")";
    } else {
      d.message = "the kernel executed a trap instruction (__trap())";
    }
    d.detail = "  instruction: " + p_.instr_text(pc_[t]) + "\n"
               "  on a GPU the kernel stops here and the launch fails with an error\n";
    throw Stop{d};
  }

  // t: the thread that uses the value (kNone for an output: then the atomic is the place).
  // A mark names an atom (a schedule-dependent old value) or a shuffle (an
  // undefined value read from outside the member mask).
  [[noreturn]] void schedule_dependent(std::uint32_t t, std::uint32_t sched, const std::string& what) {
    const std::uint32_t atom_pc = sched - 1;
    if (p_.code[atom_pc].op == Opcode::Shfl) {
      Diagnostic d;
      d.kind = DiagKind::Uninitialized;
      d.message = what + " depends on an undefined value: in a shuffle, " + undefined_why_[atom_pc];
      d.loc = p_.code[t == kNone ? atom_pc : pc_[t]].loc;
      if (t != kNone) d.threads = {t};
      d.detail = "  the shuffle: " + p_.code[atom_pc].loc.with_source() + ": " + p_.instr_text(atom_pc) +
                 "\n  CUDA leaves undefined what a shuffle reads from a lane outside its member mask or from\n"
                 "  an exited thread (see NVIDIA/cuda-samples#398 for this bug in reduce7); an H100 happened\n"
                 "  to return 0 in our test, which no GPU promises\n";
      throw Stop{d};
    }
    Diagnostic d;
    d.kind = DiagKind::Race;
    d.message = what + " depends on the value an atomic returned, which depends on the schedule";
    d.loc = p_.code[t == kNone ? atom_pc : pc_[t]].loc;
    if (t != kNone) d.threads = {t};
    d.detail = "  the atomic: " + p_.code[atom_pc].loc.with_source() + ": " + p_.instr_text(atom_pc) +
               "\n  atomics run in an order the schedule decides: the final value they accumulate does not\n"
               "  depend on it, but the old value each one returns does\n";
    throw Stop{d};
  }

  void check_writable(std::uint32_t t, const Memory<V>& m) {
    if (m.read_only) fail(DiagKind::Unsupported, t, "a write to '" + m.name + "', which is read-only .const data");
  }

  // Packed 16-bit data: a 32-bit integer access (ld/st .u32 / .b32, and their
  // vectors: the uint4 copies of half arrays) to memory of 16-bit elements
  // moves two elements, element 2k in the low half. A register holds them as
  // a Pair (floats) or as the 32 bits (integers). A byte array that a Pair is
  // stored into first takes 16-bit elements.
  static bool packed(const Memory<V>& m, DType access) {
    return dtype_bytes(access) == 4 && !dtype_is_float(access) && !m.untyped && m.esize == 2;
  }

  Val<V> load_pair(std::uint32_t t, Memory<V>& m, const Addr& a, std::size_t k) {
    Val<V> half[2];
    for (std::size_t h = 0; h < 2; ++h) {
      std::size_t c = cell(t, a, 2 * k + h, 2, false);
      check_read(t, m, c);
      half[h] = read_cell(m, c);
      if (half[h].kind == VKind::Undef) {
        note_uninitialized(t, m, c);
        half[h] = float_val(d_.poison(m.name, c));
      }
    }
    Val<V> v;
    if (half[0].kind == VKind::Int && half[1].kind == VKind::Int) {
      v = int_val(std::int64_t((std::uint64_t(half[0].i) & 0xffff) | (std::uint64_t(half[1].i) & 0xffff) << 16));
    } else if (half[0].kind == VKind::Float && half[1].kind == VKind::Float) {
      v.kind = VKind::Pair;
      v.f = half[0].f;
      v.g = half[1].f;
    } else {
      fail(DiagKind::Unsupported, t, "a 32-bit load of two 16-bit elements of '" + m.name + "' that are not both numbers");
    }
    v.sched = std::max(half[0].sched, half[1].sched);
    return v;
  }

  void store(std::uint32_t t, const Instr& in) {
    Addr a = address(t, in.src[0]);
    Memory<V>& m = mem_[a.buf];
    check_writable(t, m);
    for (std::size_t k = 1; k < in.src.size(); ++k) {
      const bool pair = in.src[k].kind == Operand::Kind::Reg && reg(t, in.src[k].index).kind == VKind::Pair;
      if ((pair && m.untyped && dtype_bytes(in.type) == 4 && !dtype_is_float(in.type)) || packed(m, in.type)) {
        Val<V> pv = operand(t, in.src[k]);
        for (std::size_t h = 0; h < 2; ++h) {
          std::size_t c = cell(t, a, 2 * (k - 1) + h, 2, true);
          Val<V> half = pv;
          if (pv.kind == VKind::Pair) {
            half.kind = VKind::Float;
            half.f = h == 0 ? pv.f : pv.g;
          } else if (pv.kind == VKind::Int) {
            half.i = std::int64_t(std::uint64_t(pv.i) >> (16 * h) & 0xffff);
          } else {
            fail(DiagKind::Unsupported, t, "a 32-bit store into 16-bit elements of '" + m.name + "' of a value that is not two halves");
          }
          check_write(t, m, c, pc_[t]);
          m.cells[c] = half;
        }
        continue;
      }
      std::size_t c = cell(t, a, k - 1, dtype_bytes(in.type), true);
      Val<V> v = operand(t, in.src[k]);
      if (v.kind == VKind::Data && dtype_is_float(m.dtype))
        fail(DiagKind::NotStructured, t, "integer tensor data stored as the bits of a float into '" + m.name + "'");
      check_write(t, m, c, pc_[t]);
      m.cells[c] = v;
    }
  }

  // atom / red: one read-modify-write. The value left in memory is the same
  // for every order of the atomics (they commute: reals add associatively,
  // max and min are order-free), which is why two atomics never race. The old
  // value an atom returns is the one of this schedule: it is marked, and
  // using it where the schedule would show (an output, an address, a branch)
  // is reported.
  void atomic(std::uint32_t t, const Instr& in) {
    Addr a = address(t, in.src[0]);
    Memory<V>& m = mem_[a.buf];
    check_writable(t, m);
    const DType ty = in.type;
    std::size_t c = cell(t, a, 0, dtype_bytes(ty), true);
    Val<V> v = operand(t, in.src[1]);
    check_atomic(t, m, c, pc_[t]);
    Val<V> old = read_cell(m, c);
    const bool fl = dtype_is_float(ty);
    if (old.kind == VKind::Undef) {
      note_uninitialized(t, m, c);
      old = fl ? float_val(d_.poison(m.name, c)) : int_val(0);
    }
    Val<V> now;
    const AtomOp op = AtomOp(in.mode);
    if (fl) {
      V x = as_float(t, old, ty), y = as_float(t, v, ty);
      switch (op) {
        case AtomOp::Add: now = float_val(d_.add(x, y)); break;
        case AtomOp::Min: now = float_val(d_.min(x, y)); break;
        case AtomOp::Max: now = float_val(d_.max(x, y)); break;
        default: fail(DiagKind::Unsupported, t, std::string("atom.") + atom_op_name(op) + " on a float type");
      }
    } else if (old.kind == VKind::Data || v.kind == VKind::Data) {
      V x = as_data(t, old, ty, "an atomic's memory operand"), y = as_data(t, v, ty, "an atomic's operand");
      switch (op) {
        case AtomOp::Add: now = data_val(d_.add(x, y)); break;
        case AtomOp::Min: now = data_val(d_.min(x, y)); break;
        case AtomOp::Max: now = data_val(d_.max(x, y)); break;
        default:
          fail(DiagKind::NotStructured, t, std::string("atom.") + atom_op_name(op) + " on integer tensor data (a bit operation)");
      }
      old.kind = VKind::Data;
      old.f = x;
    } else {
      std::int64_t x = wrap(as_int(t, old, "an atomic's memory operand"), ty);
      std::int64_t y = wrap(as_int(t, v, "an atomic's operand"), ty);
      bool lt = dtype_is_signed(ty) ? x < y : (std::uint64_t(x) & mask(ty)) < (std::uint64_t(y) & mask(ty));
      switch (op) {
        case AtomOp::Add: now = int_val(wrap(std::int64_t(std::uint64_t(x) + std::uint64_t(y)), ty)); break;
        case AtomOp::Min: now = int_val(lt ? x : y); break;
        case AtomOp::Max: now = int_val(lt ? y : x); break;
        case AtomOp::And: now = int_val(wrap(x & y, ty)); break;
        case AtomOp::Or: now = int_val(wrap(x | y, ty)); break;
        case AtomOp::Xor: now = int_val(wrap(x ^ y, ty)); break;
      }
      old.i = x;
    }
    now.sched = std::max(old.sched, v.sched);
    m.cells[c] = now;
    if (!in.dst.empty()) {
      sched_marks_ = true;
      old.sched = pc_[t] + 1;
      set(t, in.dst[0], old);
    }
  }

  // cp.async [dst], [src], cp_size[, src_size]: the source is read now (as a
  // load by this thread); each destination element is pending until a wait
  // retires the copy's group, and is written then, by this thread. Bytes past
  // src_size are zeros (the zero-fill form predicated copies use).
  void cp_async(std::uint32_t t, const Instr& in) {
    Addr dst = address(t, in.src[0]), src = address(t, in.src[1]);
    Memory<V>& dm = mem_[dst.buf];
    Memory<V>& sm = mem_[src.buf];
    if (dm.space != Space::Shared || dm.per_thread)
      fail(DiagKind::Unsupported, t, "cp.async into '" + dm.name + "', which is not shared memory");
    if (sm.space != Space::Global && sm.space != Space::Const)
      fail(DiagKind::Unsupported, t, "cp.async from '" + sm.name + "', which is not global memory");
    std::int64_t cp_size = in.src[2].imm;
    std::int64_t src_size = in.src.size() > 3 ? as_int(t, operand(t, in.src[3]), "a cp.async source size") : cp_size;
    // Elements of the source's type (a tensor's dtype), or of the destination's.
    std::size_t width = !sm.untyped ? sm.esize : !dm.untyped ? dm.esize : 4;
    if (cp_size <= 0 || cp_size % std::int64_t(width) != 0 || src_size < 0 || src_size > cp_size ||
        src_size % std::int64_t(width) != 0)
      fail(DiagKind::Unsupported, t,
           "a cp.async of " + std::to_string(cp_size) + " bytes (" + std::to_string(src_size) +
               " from the source) in elements of " + std::to_string(width) + " bytes");
    const std::uint32_t pc = pc_[t];
    for (std::size_t k = 0; k < std::size_t(cp_size) / width; ++k) {
      std::size_t dc = cell(t, dst, k, width, true);
      Val<V> v = int_val(0);  // zero-fill: all-zero bits are 0 in every format
      if (std::int64_t(k * width) < src_size) {
        std::size_t sc = cell(t, src, k, width, false);
        check_read(t, sm, sc, pc);
        v = read_cell(sm, sc);
        if (v.kind == VKind::Undef) {
          note_uninitialized(t, sm, sc);
          v = float_val(d_.poison(sm.name, sc));
        }
      }
      if (dm.pending.size() != dm.cells.size()) dm.pending.assign(dm.cells.size(), 0);
      check_pending(t, dm, dc, Access::AsyncWrite, pc);  // two copies in flight to one element
      AsyncCopy<V> cp;
      cp.thread = t;
      cp.pc = pc;
      cp.buf = dst.buf;
      cp.cell = dc;
      cp.value = v;
      copies_.push_back(cp);
      std::uint32_t id = std::uint32_t(copies_.size());
      dm.pending[dc] = id;
      need_copy_groups();
      open_copies_[t].push_back(id);
    }
  }

  // The per-thread cp.async bookkeeping, made on first use: a deque per
  // thread is two allocations, which a kernel without cp.async (most) would
  // pay for every thread of every run.
  void need_copy_groups() {
    if (!copy_groups_.empty()) return;
    open_copies_.assign(n_, {});
    copy_groups_.assign(n_, {});
  }

  // The copies of a group complete: each writes its element now, checked as a
  // write by the copying thread at this point of its program.
  void retire(std::uint32_t t, const std::vector<std::uint32_t>& group) {
    for (std::uint32_t id : group) {
      AsyncCopy<V>& cp = copies_[id - 1];
      Memory<V>& m = mem_[cp.buf];
      if (m.pending[cp.cell] == id) m.pending[cp.cell] = 0;
      check_write(t, m, cp.cell, cp.pc, Access::AsyncWrite);
      m.cells[cp.cell] = cp.value;
      cp.value = Val<V>{};
    }
  }

  // An arithmetic result derived from a schedule-dependent value (what an
  // atom returned) is schedule-dependent too.
  void alu(std::uint32_t t, const Instr& in) {
    if (!sched_marks_) return compute(t, in);  // no atom has returned a value: nothing to track
    std::uint32_t sched = 0;
    for (const Operand& o : in.src)
      if (o.kind == Operand::Kind::Reg) sched = std::max(sched, reg(t, o.index).sched);
    compute(t, in);
    if (sched)
      for (std::uint32_t d : in.dst) reg(t, d).sched = std::max(reg(t, d).sched, sched);
  }

  // ------------------------------------------------------------ fma chains
  // A dot product compiles to a chain of fmas, each adding one product to
  // the sum the previous one made:
  //   fma.rn.f32 %f43, %f11, %f12, %f104;
  //   fma.rn.f32 %f44, %f13, %f14, %f43;  ...
  //   fma.rn.f32 %f104, %f41, %f42, %f57;
  // Symbolically each fma interns its partial sum, and nothing but the next
  // fma reads it: in an attention kernel those were 40% of all nodes. Where
  // the code shows that (the register one fma writes is written nowhere
  // else and read only as the addend of the next fma, and no branch leads
  // into the code between them), the chain's products go into one
  // ExprContext::RunningSum per thread, and the last fma writes what the
  // sequential fmas would have: the same handle (see RunningSum). The
  // registers in between are never written; nothing reads them.
  //
  // A member whose sources are not plain float values (an undefined
  // register, float bits in an integer one), or that runs after an atomic
  // returned a value (schedule marks), puts the sum so far into its addend
  // register and runs the ordinary way, diagnostics included, and so do the
  // rest of the chain's members in that pass.
  struct ChainLink {
    std::uint32_t chain = kNone;  // the chain's state slot (chains in flight at once get distinct slots)
    bool first = false, last = false;
  };
  struct ChainState {
    ExprContext::RunningSum sum;
    bool active = false;  // the members so far went into sum
  };

  static bool chain_candidate(const Instr& in) {
    return (in.op == Opcode::Fma || in.op == Opcode::Mad) && (in.type == DType::F32 || in.type == DType::F64) &&
           in.guard < 0 && !in.saturate && in.dst.size() == 1 && in.src.size() == 3 &&
           in.src[2].kind == Operand::Kind::Reg;
  }

  void find_chains() {
    const std::vector<Instr>& code = p_.code;
    // Most small kernels have no two fmas: no tables to make (a one-thread
    // reduction's whole symbolic run is 20 us).
    if (std::count_if(code.begin(), code.end(), chain_candidate) < 2) return;
    std::vector<std::uint32_t> reads(r_, 0), writes(r_, 0), writer(r_, kNone);
    std::vector<char> entered(code.size() + 1, 0);  // a branch target
    for (std::uint32_t pc = 0; pc < code.size(); ++pc) {
      const Instr& in = code[pc];
      for (const Operand& o : in.src)
        if (o.kind == Operand::Kind::Reg && o.index < r_) ++reads[o.index];
      if (in.guard >= 0 && std::uint32_t(in.guard) < r_) ++reads[std::uint32_t(in.guard)];
      for (std::uint32_t d : in.dst)
        if (d < r_) ++writes[d], writer[d] = pc;
      if (in.op == Opcode::Bra && in.target < entered.size()) entered[in.target] = 1;
    }
    // last_entry[k]: the last branch target <= k (0 if none). Members i < j
    // link only where none lies in (i, j]: a thread that reached j from
    // elsewhere would find no running sum. Leaving between them is harmless
    // (a branch, a ret): what i wrote is read by j alone, and the thread's
    // next pass through the chain starts at its first member.
    std::vector<std::uint32_t> last_entry(code.size(), 0);
    for (std::uint32_t k = 1; k < code.size(); ++k) last_entry[k] = entered[k] ? k : last_entry[k - 1];
    // prev[j]: the member before j (kNone: none).
    std::vector<std::uint32_t> prev(code.size(), kNone), next(code.size(), kNone);
    for (std::uint32_t j = 0; j < code.size(); ++j) {
      const Instr& in = code[j];
      if (!chain_candidate(in)) continue;
      const std::uint32_t r = in.src[2].index;
      if (r >= r_ || reads[r] != 1 || writes[r] != 1 || writer[r] >= j) continue;
      const std::uint32_t i = writer[r];
      if (!chain_candidate(code[i]) || last_entry[j] > i) continue;
      prev[j] = i;
      next[i] = j;
    }
    // Slots: a chain takes the first slot whose last chain ended before it
    // began (a thread is in at most one chain of a slot at a time).
    std::vector<std::uint32_t> slot_end;  // per slot: the last pc of its latest chain
    for (std::uint32_t pc = 0; pc < code.size(); ++pc) {
      if (prev[pc] != kNone || next[pc] == kNone) continue;  // not a chain's first member
      std::uint32_t last = pc;
      while (next[last] != kNone) last = next[last];
      std::uint32_t slot = 0;
      while (slot < slot_end.size() && slot_end[slot] >= pc) ++slot;
      if (slot == slot_end.size()) slot_end.push_back(0);
      slot_end[slot] = last;
      if (chain_of_.empty()) chain_of_.assign(code.size(), ChainLink{});
      for (std::uint32_t k = pc; k != kNone; k = next[k]) chain_of_[k] = ChainLink{slot, k == pc, k == last};
    }
    chain_slots_ = std::uint32_t(slot_end.size());
  }

  // Runs chain member `in` into the thread's running sum; false: run it the
  // ordinary way (the sum so far is in its addend register then).
  bool chain_step(std::uint32_t t, const Instr& in, const ChainLink& link) {
    if (chain_state_.empty()) chain_state_.resize(std::size_t(n_) * chain_slots_);
    ChainState& st = chain_state_[std::size_t(t) * chain_slots_ + link.chain];
    ExprContext& c = d_.context();
    std::uint32_t ka = kNoKey, kb = kNoKey, kc = kNoKey;
    if (link.first) {
      st.active = false;
      if (!sched_marks_ && (kc = plain_float(t, in.src[2])) != kNoKey) {
        st.sum = c.running_sum(Expr{kc});
        st.active = true;
      }
    }
    if (!st.active) return false;
    if (sched_marks_ || (ka = plain_float(t, in.src[0])) == kNoKey || (kb = plain_float(t, in.src[1])) == kNoKey) {
      st.active = false;
      if (!link.first) set_float(t, in.src[2].index, V{c.sum_of(st.sum)});
      return false;
    }
    c.add_to(st.sum, c.mul(Expr{ka}, Expr{kb}));
    if (link.last) {
      set_float(t, in.dst[0], V{c.sum_of(st.sum)});
      st.active = false;
    }
    return true;
  }

  std::vector<ChainLink> chain_of_;  // per pc; empty: the program has no chain
  std::uint32_t chain_slots_ = 0;
  std::vector<ChainState> chain_state_;  // per thread and slot, made on first use

  // ------------------------------------------------------------ symbolic memo
  // The threads of a CTA often compute the very same values: in an online
  // softmax every thread recomputes the running max and the rescaled
  // denominator over the whole row, so all but one thread repeat each
  // operation on the same expressions. An ExprContext operation is a pure
  // function of its operand handles (the context only ever adds nodes, and a
  // repeated operation finds the nodes the first one made), so the same
  // float operation on the same source handles always yields the same
  // handle. The memo remembers those results, keyed by the operation and the
  // source handles: a hit replaces the domain calls (an fma is a mul and an
  // add, a cvt.sat a max, a min and two constants) and their
  // canonicalization by a comparison. Only instructions whose sources are
  // all plain float values take this path; anything else (undefined
  // registers, float bits in integer registers, pairs) goes the ordinary
  // way, diagnostics included.
  //
  // Threads that repeat each other run the same instructions in the same
  // order, so the memo is a log of results in the order they were made, and
  // each thread has a cursor where it expects its next one: a thread
  // following another reads the log front to back (in cache, prefetched),
  // where a hash table would miss cache on every probe. A hash index into
  // the log finds an entry when the cursor guessed wrong (a thread that took
  // another branch, or made an entry of its own).
  //
  // The log holds at most memo_cap_ entries and starts over when full. The
  // cap starts small (a tiny kernel pays for a few KB, on first use) and
  // doubles, up to kMemoMaxCap, while the operations the memo misses keep
  // finding their result among the nodes this run has made: that is
  // recomputation a larger log would have caught. Kernels whose threads
  // compute different values make new nodes instead and keep it small
  // (results made by an earlier run into the same context, as the second
  // kernel of a pair finds the first one's, do not count: this run's memo
  // holds none of those).
  static constexpr bool kMemo = std::is_same<D, SymbolicDomain>::value;
  static constexpr std::uint32_t kNoKey = UINT32_MAX;  // an unused operand of a key
  static constexpr std::size_t kMemoMinCap = 256, kMemoMaxCap = std::size_t(1) << 16;
  struct MemoEntry {
    std::uint32_t tag;             // the operation: opcode, .sat, .relu, a select's comparison
    std::uint32_t k0, k1, k2, k3;  // the sources' handles (kNoKey: none)
    std::uint32_t r;               // the result's handle
  };

  // The handle of a source that is a plain float value (a float register or
  // immediate), else kNoKey (no valid handle is kNoKey).
  std::uint32_t plain_float(std::uint32_t t, const Operand& o) {
    if (o.kind == Operand::Kind::Reg) {
      const Val<V>& r = reg(t, o.index);
      return r.kind == VKind::Float ? r.f.id : kNoKey;
    }
    return o.kind == Operand::Kind::Float ? constant_operand(o.index).id : kNoKey;
  }

  // acc + a[0] b[0] + a[as] b[bs] + ... (k products): what k fmas in that
  // order make. Symbolically, one running sum: the k - 1 partial sums the
  // fmas would intern, nothing uses (an mma's accumulator chain).
  V dot(V acc, const V* a, std::size_t as, const V* b, std::size_t bs, int k) {
    if constexpr (kMemo) {
      ExprContext& c = d_.context();
      ExprContext::RunningSum s = c.running_sum(acc);
      for (int q = 0; q < k; ++q) c.add_to(s, c.mul(a[std::size_t(q) * as], b[std::size_t(q) * bs]));
      return c.sum_of(s);
    } else {
      for (int q = 0; q < k; ++q) acc = d_.fma(a[std::size_t(q) * as], b[std::size_t(q) * bs], acc);
      return acc;
    }
  }

  // set(t, r, float_val(x)), field by field: building the value on the stack
  // and copying it whole stalls on store forwarding.
  void set_float(std::uint32_t t, std::uint32_t r, V x) {
    Val<V>& d = reg(t, r);
    d.kind = VKind::Float;
    d.cmp = Cmp::EQ;
    d.buf = 0;
    d.i = 0;
    d.f = x;
    d.g = V{};
    d.sched = 0;
  }

  std::size_t memo_slot(std::uint32_t tag, std::uint32_t k0, std::uint32_t k1, std::uint32_t k2,
                        std::uint32_t k3) const {
    std::uint64_t h = (std::uint64_t(k0) << 32 | k1) * 0x9E3779B97F4A7C15ull;
    h ^= (std::uint64_t(k2) << 32 | k3) * 0xC2B2AE3D27D4EB4Full;
    h ^= std::uint64_t(tag) * 0x165667B19E3779F9ull;
    h ^= h >> 29;
    return std::size_t((h * 0x9E3779B97F4A7C15ull) >> memo_shift_);
  }

  // A cap of `cap` entries, with an index of 2 * cap slots over the log.
  void memo_reserve(std::size_t cap) {
    memo_cap_ = cap;
    memo_log_.reserve(cap);
    unsigned bits = 1;
    while ((std::size_t(1) << bits) < 2 * cap) ++bits;
    memo_shift_ = 64 - bits;
    memo_index_.assign(std::size_t(1) << bits, kNoKey);
    for (std::size_t i = 0; i < memo_log_.size(); ++i) {
      const MemoEntry& e = memo_log_[i];
      memo_index_[memo_slot(e.tag, e.k0, e.k1, e.k2, e.k3)] = std::uint32_t(i);
    }
    memo_repeats_ = 0;
  }

  // Runs a float instruction through the memo when it can; false: the caller
  // runs it the ordinary way. Instantiated for the symbolic domain only.
  bool memo_compute(std::uint32_t t, const Instr& in) {
    std::uint32_t k0 = kNoKey, k1 = kNoKey, k2 = kNoKey, k3 = kNoKey, cmp = 0;
    switch (in.op) {
      case Opcode::Cvt:
        if (in.src.size() != 1 || !dtype_is_float(in.type) || !dtype_is_float(in.src_type) ||
            (k0 = plain_float(t, in.src[0])) == kNoKey)
          return false;
        if (!in.saturate && in.mode != 1) {  // the identity: nothing to remember
          set_float(t, in.dst[0], V{k0});
          return true;
        }
        break;
      case Opcode::Selp: {
        if (!dtype_is_float(in.type) || in.src.size() < 3 || in.src[2].kind != Operand::Kind::Reg) return false;
        const Val<V>& p = reg(t, in.src[2].index);
        if (p.kind != VKind::Cond || (k2 = plain_float(t, in.src[0])) == kNoKey ||
            (k3 = plain_float(t, in.src[1])) == kNoKey)
          return false;
        k0 = p.f.id;
        k1 = p.g.id;
        cmp = std::uint32_t(p.cmp);
        break;
      }
      default: {
        const std::size_t n = float_arity(in.op);
        if (n == 0 || in.src.size() < n || !dtype_is_float(in.type)) return false;
        if ((k0 = plain_float(t, in.src[0])) == kNoKey) return false;
        if (n > 1 && (k1 = plain_float(t, in.src[1])) == kNoKey) return false;
        if (n > 2 && (k2 = plain_float(t, in.src[2])) == kNoKey) return false;
      }
    }
    // The operation, not the pc: nvcc's expf computes the same sum twice
    // (once for the float, once for its bits), and the lanes of a butterfly
    // reduction take max(a, b) and max(b, a). The result is a function of the
    // opcode and flags (float_apply ignores the float type) and of the
    // sources, in either order for the commutative ones (ExprContext orders
    // their operands itself; fma's product too).
    const Opcode op = in.op == Opcode::Mad ? Opcode::Fma : in.op;  // float mad is fma (float_apply)
    const std::uint32_t tag =
        ((std::uint32_t(op) << 1 | in.saturate) << 1 | (op == Opcode::Cvt && in.mode == 1)) << 3 | cmp;
    switch (op) {
      case Opcode::Add:
      case Opcode::Mul:
      case Opcode::Min:
      case Opcode::Max:
      case Opcode::Fma:
        if (k1 < k0) std::swap(k0, k1);
        break;
      default: break;
    }
    auto match = [&](const MemoEntry& e) {
      return e.tag == tag && e.k0 == k0 && e.k1 == k1 && e.k2 == k2 && e.k3 == k3;
    };
    if (memo_cap_ == 0) {
      memo_reserve(kMemoMinCap);
      memo_cursor_.assign(n_, 0);
      memo_base_ = d_.context().size();
    }
    std::uint32_t& cursor = memo_cursor_[t];
    if (cursor < memo_log_.size() && match(memo_log_[cursor])) {
      set_float(t, in.dst[0], V{memo_log_[cursor++].r});
      return true;
    }
    std::uint32_t& slot = memo_index_[memo_slot(tag, k0, k1, k2, k3)];
    if (slot < memo_log_.size() && match(memo_log_[slot])) {
      const std::uint32_t r = memo_log_[slot].r;
      if (cursor == memo_log_.size() && memo_log_.size() < memo_cap_) {
        // This thread leads (it is making the log): the entry goes into the
        // log again, so that the threads that follow find it in order.
        slot = std::uint32_t(memo_log_.size());
        memo_log_.push_back(MemoEntry{tag, k0, k1, k2, k3, r});
      }
      cursor = slot + 1;
      set_float(t, in.dst[0], V{r});
      return true;
    }
    const std::size_t nodes = d_.context().size();
    V r;
    if (in.op == Opcode::Cvt)
      r = cvt_float(in, V{k0});
    else if (in.op == Opcode::Selp)
      r = d_.select(Cmp(cmp), V{k0}, V{k1}, V{k2}, V{k3});
    else
      float_apply(in.op, [&](std::size_t i) { return V{i == 0 ? k0 : i == 1 ? k1 : k2}; }, &r);
    set_float(t, in.dst[0], r);
    // A repeat: no new node, and the result is not simply one of the sources
    // (x + 0, max(x, x): those results are old, but the operation is new).
    const bool repeat = d_.context().size() == nodes && r.id >= memo_base_ && r.id != k0 && r.id != k1 &&
                        r.id != k2 && r.id != k3;
    if (repeat && ++memo_repeats_ * 4 >= memo_cap_ && memo_cap_ < kMemoMaxCap) {
      memo_reserve(memo_cap_ * 2);
    } else if (memo_log_.size() == memo_cap_) {
      memo_log_.clear();  // start over: the cursors and the index check what they find
    }
    memo_index_[memo_slot(tag, k0, k1, k2, k3)] = std::uint32_t(memo_log_.size());  // slot may have moved
    memo_log_.push_back(MemoEntry{tag, k0, k1, k2, k3, r.id});
    cursor = std::uint32_t(memo_log_.size());
    return true;
  }

  void compute(std::uint32_t t, const Instr& in) {
    if constexpr (kMemo) {
      if (!chain_of_.empty()) {
        const ChainLink& link = chain_of_[std::size_t(&in - p_.code.data())];
        if (link.chain != kNone && chain_step(t, in, link)) return;
      }
      // One thread has no other thread to follow: its repeats are the
      // context's to find.
      if (n_ > 1 && memo_compute(t, in)) return;
    }
    auto src = [&](std::size_t i) { return operand(t, in.src[i]); };
    const DType ty = in.type;
    const bool fl = dtype_is_float(ty);
    Val<V> out;
    switch (in.op) {
      case Opcode::Mov:
        if (in.src.size() == 2) {  // mov.b32 d, {lo, hi}: pack two halves
          Val<V> lo = src(0), hi = src(1);
          if (p_.registers[in.dst[0]].dtype == DType::F32 && lo.kind == VKind::Int && lo.i == 0) {
            // mov.b32 %f, {0, %h}: a bf16 widened to f32 (its bits are the f32's high half), as
            // __bfloat162float does it
            out = float_val(as_float(t, hi, DType::BF16));
            break;
          }
          out.kind = VKind::Pair;
          out.f = as_float(t, lo, DType::F16);
          out.g = as_float(t, hi, DType::F16);
          break;
        }
        if (in.dst.size() == 2) {  // mov.b32 {lo, hi}, s: unpack
          Val<V> v = src(0);
          if (v.kind != VKind::Pair) fail(DiagKind::Unsupported, t, "unpacking a register that holds no pair of halves");
          set(t, in.dst[0], float_val(v.f));
          set(t, in.dst[1], float_val(v.g));
          return;
        }
        out = src(0);
        break;
      case Opcode::Cvt: {
        if (in.src.size() == 2) {  // cvt.{f16,bf16}x2.f32 d, a, b: a to the high half, b to the low
          V hi = as_float(t, src(0), in.src_type), lo = as_float(t, src(1), in.src_type);
          if (in.mode == 1) {  // .relu
            hi = d_.max(hi, d_.constant(Rational(0)));
            lo = d_.max(lo, d_.constant(Rational(0)));
          }
          out.kind = VKind::Pair;
          out.f = lo;
          out.g = hi;
          break;
        }
        Val<V> a = src(0);
        if (a.kind == VKind::Ptr) {
          out = a;
        } else if (dtype_is_float(ty) && dtype_is_float(in.src_type)) {
          out = float_val(cvt_float(in, as_float(t, a, in.src_type)));  // reals: float-format casts are the identity
        } else if (a.kind == VKind::Data && !dtype_is_float(in.src_type)) {
          // Integer data: the real it converts to (rounding aside), and
          // integer-to-integer conversions keep the value (no wraparound).
          out = dtype_is_float(ty) ? float_val(a.f) : a;
        } else if (dtype_is_float(ty)) {
          out = float_val(d_.constant(Rational(as_int(t, a, "an int-to-float conversion"))));
        } else if (dtype_is_float(in.src_type)) {
          fail(DiagKind::NotStructured, t, "a float-to-int conversion of tensor data");
        } else {
          out = int_val(wrap(wrap(as_int(t, a, "a conversion"), in.src_type), ty));
        }
        break;
      }
      case Opcode::Selp: {
        Val<V> a = src(0), b = src(1), p = src(2);
        if (p.kind == VKind::Cond) {
          if (!fl && (a.kind == VKind::Data || b.kind == VKind::Data || (a.kind == VKind::Int && b.kind == VKind::Int))) {
            out = data_val(d_.select(p.cmp, p.f, p.g, as_data(t, a, ty, "a selp operand"), as_data(t, b, ty, "a selp operand")));
            break;
          }
          if (!fl && !(a.kind == VKind::Float && b.kind == VKind::Float))
            fail(DiagKind::NotStructured, t, "an integer selected by tensor data");
          out = float_val(d_.select(p.cmp, p.f, p.g, as_float(t, a, ty), as_float(t, b, ty)));
        } else {
          out = as_int(t, p, "a selp predicate") ? a : b;
        }
        break;
      }
      case Opcode::Setp: {
        Val<V> a = src(0), b = src(1);
        if (fl) {
          out.kind = VKind::Cond;
          out.cmp = in.cmp;
          out.f = as_float(t, a, ty);
          out.g = as_float(t, b, ty);
        } else if (a.kind == VKind::Data || b.kind == VKind::Data) {
          out.kind = VKind::Cond;
          out.cmp = in.cmp;
          out.f = as_data(t, a, ty, "a comparison");
          out.g = as_data(t, b, ty, "a comparison");
        } else {
          std::int64_t x = as_int(t, a, "a comparison"), y = as_int(t, b, "a comparison");
          bool r = dtype_is_signed(ty) ? apply_cmp(in.cmp, x, y)
                                        : apply_cmp(in.cmp, std::uint64_t(wrap(x, ty)) & mask(ty),
                                                    std::uint64_t(wrap(y, ty)) & mask(ty));
          out = int_val(r);
        }
        break;
      }
      default:
        out = fl ? float_op(t, in) : int_op(t, in);
    }
    set(t, in.dst[0], out);
  }

  static std::uint64_t mask(DType t) {
    std::size_t bits = dtype_bytes(t) * 8;
    return bits >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << bits) - 1;
  }

  Val<V> float_op(std::uint32_t t, const Instr& in) {
    V r;
    if (float_apply(in.op, [&](std::size_t i) { return as_float(t, operand(t, in.src[i]), in.type); }, &r))
      return float_val(r);
    fail(DiagKind::Unsupported, t, std::string(opcode_name(in.op)) + " on float type " + dtype_name(in.type));
  }

  // The sources a float operation reads (0: not one float_apply knows).
  static std::size_t float_arity(Opcode op) {
    switch (op) {
      case Opcode::Add:
      case Opcode::Sub:
      case Opcode::Mul:
      case Opcode::Div:
      case Opcode::Min:
      case Opcode::Max: return 2;
      case Opcode::Mad:
      case Opcode::Fma: return 3;
      case Opcode::Neg:
      case Opcode::Abs:
      case Opcode::Rcp:
      case Opcode::Sqrt:
      case Opcode::Rsqrt:
      case Opcode::Ex2:
      case Opcode::Exp:
      case Opcode::Lg2:
      case Opcode::Tanh: return 1;
      default: return 0;
    }
  }

  // The domain operation of float opcode `op` on the sources f(0), f(1), ...
  // into *out; false for an opcode it does not know. Shared by float_op and
  // the symbolic memo (memo_compute), so both build the same values.
  template <class F>
  bool float_apply(Opcode op, F f, V* out) {
    switch (op) {
      case Opcode::Add: *out = d_.add(f(0), f(1)); return true;
      case Opcode::Sub: *out = d_.sub(f(0), f(1)); return true;
      case Opcode::Mul: *out = d_.mul(f(0), f(1)); return true;
      case Opcode::Div: *out = d_.div(f(0), f(1)); return true;
      case Opcode::Mad:
      case Opcode::Fma: *out = d_.fma(f(0), f(1), f(2)); return true;
      case Opcode::Min: *out = d_.min(f(0), f(1)); return true;
      case Opcode::Max: *out = d_.max(f(0), f(1)); return true;
      case Opcode::Neg: *out = d_.neg(f(0)); return true;
      case Opcode::Abs: *out = d_.abs(f(0)); return true;
      case Opcode::Rcp: *out = d_.rcp(f(0)); return true;
      case Opcode::Sqrt: *out = d_.func("sqrt", f(0)); return true;
      case Opcode::Rsqrt: *out = d_.func("rsqrt", f(0)); return true;
      case Opcode::Ex2: *out = d_.ex2(f(0)); return true;
      case Opcode::Exp: *out = d_.exp(f(0)); return true;
      case Opcode::Lg2: *out = d_.func("log2", f(0)); return true;
      case Opcode::Tanh: *out = d_.func("tanh", f(0)); return true;
      default: return false;
    }
  }

  // A float-to-float cvt: the value itself (reals have no formats), clamped
  // by .sat and .relu.
  V cvt_float(const Instr& in, V v) {
    if (in.saturate) v = d_.min(d_.max(v, d_.constant(Rational(0))), d_.constant(Rational(1)));
    if (in.mode == 1) v = d_.max(v, d_.constant(Rational(0)));  // .relu
    return v;
  }

  Val<V> int_op(std::uint32_t t, const Instr& in) {
    const DType ty = in.type;
    Val<V> a = operand(t, in.src[0]);
    // Pointer arithmetic: pointer +- integer, pointer - pointer.
    if (in.op == Opcode::Add || in.op == Opcode::Sub) {
      Val<V> b = operand(t, in.src[1]);
      if (a.kind == VKind::Ptr || b.kind == VKind::Ptr) {
        if (a.kind == VKind::Ptr && b.kind == VKind::Ptr && in.op == Opcode::Sub && a.buf == b.buf)
          return int_val(a.i - b.i);
        if (b.kind == VKind::Ptr && in.op == Opcode::Add) std::swap(a, b);
        if (a.kind != VKind::Ptr || b.kind == VKind::Ptr)
          fail(DiagKind::NotStructured, t, "arithmetic between two pointers");
        std::int64_t off = as_int(t, b, "a pointer offset");
        a.i = in.op == Opcode::Add ? a.i + off : a.i - off;
        return a;
      }
    }
    if (in.op == Opcode::Mad && in.src.size() == 3) {  // a*b + pointer (nvcc's shared-memory addressing)
      Val<V> c = operand(t, in.src[2]);
      if (c.kind == VKind::Ptr) {
        c.i += as_int(t, a, "a pointer offset") * as_int(t, operand(t, in.src[1]), "a pointer offset");
        return c;
      }
    }
    for (const Operand& o : in.src)
      if (o.kind == Operand::Kind::Reg && reg(t, o.index).kind == VKind::Data) return data_op(t, in);
    std::int64_t x = as_int(t, a, "integer arithmetic");
    auto y = [&](std::size_t i) { return as_int(t, operand(t, in.src[i]), "integer arithmetic"); };
    bool sg = dtype_is_signed(ty);
    std::uint64_t ux = std::uint64_t(wrap(x, ty)) & mask(ty);
    switch (in.op) {
      case Opcode::Add: return int_val(wrap(x + y(1), ty));
      case Opcode::Sub: return int_val(wrap(x - y(1), ty));
      case Opcode::Mul: return int_val(wrap(std::int64_t(std::uint64_t(x) * std::uint64_t(y(1))), ty));
      case Opcode::MulWide: {
        std::int64_t b = y(1);
        DType wide = sg ? DType::S64 : DType::U64;
        if (sg) return int_val(wrap(wrap(x, ty) * wrap(b, ty), wide));
        return int_val(std::int64_t((std::uint64_t(wrap(x, ty)) & mask(ty)) * (std::uint64_t(wrap(b, ty)) & mask(ty))));
      }
      case Opcode::MulHi: {
        __extension__ typedef __int128 i128;
        i128 p = sg ? i128(wrap(x, ty)) * i128(wrap(y(1), ty))
                    : i128(ux) * i128(std::uint64_t(wrap(y(1), ty)) & mask(ty));
        return int_val(wrap(std::int64_t(p >> (dtype_bytes(ty) * 8)), ty));
      }
      case Opcode::Mad: return int_val(wrap(std::int64_t(std::uint64_t(x) * std::uint64_t(y(1)) + std::uint64_t(y(2))), ty));
      case Opcode::MadWide: {
        DType wide = sg ? DType::S64 : DType::U64;
        std::int64_t p = sg ? wrap(x, ty) * wrap(y(1), ty)
                            : std::int64_t(ux * (std::uint64_t(wrap(y(1), ty)) & mask(ty)));
        return int_val(wrap(p + y(2), wide));
      }
      case Opcode::Div:
      case Opcode::Rem: {
        std::int64_t b = y(1);
        if (b == 0) fail(DiagKind::Unsupported, t, "integer division by zero");
        if (sg) return int_val(wrap(in.op == Opcode::Div ? wrap(x, ty) / wrap(b, ty) : wrap(x, ty) % wrap(b, ty), ty));
        std::uint64_t ub = std::uint64_t(wrap(b, ty)) & mask(ty);
        return int_val(wrap(std::int64_t(in.op == Opcode::Div ? ux / ub : ux % ub), ty));
      }
      case Opcode::Min:
      case Opcode::Max: {
        std::int64_t b = y(1);
        bool lt = sg ? wrap(x, ty) < wrap(b, ty) : ux < (std::uint64_t(wrap(b, ty)) & mask(ty));
        bool take_x = in.op == Opcode::Min ? lt : !lt;
        return int_val(wrap(take_x ? x : b, ty));
      }
      case Opcode::Bfi:
      case Opcode::Bfe: {
        std::size_t bits = dtype_bytes(ty) * 8;
        std::int64_t pos = y(in.op == Opcode::Bfi ? 2 : 1) & 0xff, len = y(in.op == Opcode::Bfi ? 3 : 2) & 0xff;
        if (pos >= std::int64_t(bits) || len == 0) return int_val(in.op == Opcode::Bfi ? wrap(y(1), ty) : 0);
        if (pos + len > std::int64_t(bits)) len = std::int64_t(bits) - pos;
        std::uint64_t field = len >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << len) - 1;
        if (in.op == Opcode::Bfi) {
          std::uint64_t b = std::uint64_t(y(1));
          std::uint64_t r = (b & ~(field << pos)) | ((std::uint64_t(x) & field) << pos);
          return int_val(wrap(std::int64_t(r), ty));
        }
        std::uint64_t f = (ux >> pos) & field;
        if (sg && (f >> (len - 1) & 1)) f |= ~field;  // sign-extend the field
        return int_val(wrap(std::int64_t(f), ty));
      }
      case Opcode::Neg: return int_val(wrap(-x, ty));
      case Opcode::Abs: return int_val(wrap(x < 0 ? -x : x, ty));
      case Opcode::And: return int_val(wrap(x & y(1), ty));
      case Opcode::Or: return int_val(wrap(x | y(1), ty));
      case Opcode::Xor: return int_val(wrap(x ^ y(1), ty));
      case Opcode::Not: return int_val(ty == DType::Pred ? x == 0 : wrap(~x, ty));  // not.pred is logical
      case Opcode::Shl: {
        std::int64_t s = y(1);
        return int_val(s >= std::int64_t(dtype_bytes(ty) * 8) ? 0 : wrap(std::int64_t(std::uint64_t(x) << s), ty));
      }
      case Opcode::Shr: {
        std::int64_t s = std::min<std::int64_t>(y(1), std::int64_t(dtype_bytes(ty) * 8) - 1 + (sg ? 0 : 1));
        if (sg) return int_val(wrap(wrap(x, ty) >> s, ty));
        return int_val(s >= std::int64_t(dtype_bytes(ty) * 8) ? 0 : std::int64_t(ux >> s));
      }
      default: break;
    }
    fail(DiagKind::Unsupported, t, std::string(opcode_name(in.op)) + " on integer type " + dtype_name(ty));
  }

  // Arithmetic on integer tensor data, over the integers: the ring
  // operations, min/max and shifts left by a known amount. Bit operations,
  // division and high halves of products depend on the binary representation
  // (or on wraparound), which the model does not have.
  Val<V> data_op(std::uint32_t t, const Instr& in) {
    const DType ty = in.type;
    auto x = [&](std::size_t i) { return as_data(t, operand(t, in.src[i]), ty, "integer arithmetic"); };
    switch (in.op) {
      case Opcode::Add: return data_val(d_.add(x(0), x(1)));
      case Opcode::Sub: return data_val(d_.sub(x(0), x(1)));
      case Opcode::Mul:
      case Opcode::MulWide: return data_val(d_.mul(x(0), x(1)));
      case Opcode::Mad:
      case Opcode::MadWide: return data_val(d_.add(d_.mul(x(0), x(1)), x(2)));
      case Opcode::Neg: return data_val(d_.neg(x(0)));
      case Opcode::Abs: return data_val(d_.abs(x(0)));
      case Opcode::Min: return data_val(d_.min(x(0), x(1)));
      case Opcode::Max: return data_val(d_.max(x(0), x(1)));
      case Opcode::Shl: {
        Val<V> s = operand(t, in.src[1]);
        if (s.kind == VKind::Int && s.i >= 0 && s.i < 63)
          return data_val(d_.mul(x(0), d_.constant(Rational(std::int64_t(1) << s.i))));
        break;
      }
      default: break;
    }
    fail(DiagKind::NotStructured, t,
         std::string(opcode_name(in.op)) + "." + dtype_name(ty) +
             " on integer tensor data (integer data is modelled as mathematical integers: add, sub, mul, mad, "
             "min, max, neg, abs and shl by a constant; not its bits)");
  }

  // ------------------------------------------------------------ collectives
  // A collective's results depend on every member's operands (and on the
  // memory it reads): one schedule-dependent input marks them all. A shuffle
  // moves values whole, marks included, so it needs nothing more.
  void collective(const Instr& in, const std::vector<std::uint32_t>& group) {
    collective_sched_ = 0;
    if (sched_marks_ && in.op != Opcode::Shfl)
      for (std::uint32_t t : group)
        for (const Operand& o : in.src)
          if (o.kind == Operand::Kind::Reg) collective_sched_ = std::max(collective_sched_, reg(t, o.index).sched);
    exchange(in, group);
    if (collective_sched_ && in.op != Opcode::Shfl)
      for (std::uint32_t t : group)
        for (std::uint32_t d : in.dst) reg(t, d).sched = std::max(reg(t, d).sched, collective_sched_);
  }

  void exchange(const Instr& in, const std::vector<std::uint32_t>& group) {
    if (in.op == Opcode::Mma) return mma(in, group);
    if (in.op == Opcode::WmmaLoad) return wmma_load(in, group);
    if (in.op == Opcode::WmmaMma) return wmma_mma(in, group);
    if (in.op == Opcode::WmmaStore) return wmma_store(in, group);
    if (in.op == Opcode::LdMatrix) return ldmatrix(in, group);
    if (in.op == Opcode::Shfl) {
      std::vector<Val<V>> result(group.size());
      for (std::size_t gi = 0; gi < group.size(); ++gi) {
        std::uint32_t t = group[gi], lane = t % 32;
        std::uint32_t b = std::uint32_t(as_int(t, operand(t, in.src[1]), "a shuffle lane"));
        std::uint32_t c = std::uint32_t(as_int(t, operand(t, in.src[2]), "a shuffle clamp value"));
        warp::ShflResult sr = warp::shfl_source(warp::ShflMode(in.mode), int(lane), b, c);
        std::int64_t j = sr.src_lane;
        std::uint32_t src_t = (t / 32) * 32 + std::uint32_t(j);
        std::uint32_t mask = std::uint32_t(as_int(t, operand(t, in.src[3]), "a member mask"));
        if (!warp::shfl_source_in_mask(warp::ShflMode(in.mode), int(lane), b, c, mask) || src_t >= n_ ||
            state_[src_t] == TState::Done) {
          // CUDA leaves the value undefined (Programming Guide, warp shuffle
          // functions). Kernels do this in lanes whose result they drop (the
          // last steps of a tree reduction), so it is marked, like what an
          // atom returns, and reported only where it would show.
          const std::uint32_t pc = std::uint32_t(&in - p_.code.data());
          if (!undefined_why_.count(pc)) {
            char m[16];
            std::snprintf(m, sizeof m, "0x%08x", mask);
            bool out = !(mask >> j & 1) || src_t >= n_;
            undefined_why_[pc] = "lane " + std::to_string(lane) + " read lane " + std::to_string(j) + ", which " +
                                 (out ? std::string("is not in the member mask ") + m : std::string("had exited"));
          }
          result[gi] = operand(t, in.src[0]);
          result[gi].sched = pc + 1;
          sched_marks_ = true;
          continue;
        }
        result[gi] = operand(src_t, in.src[0]);
      }
      for (std::size_t gi = 0; gi < group.size(); ++gi) set(group[gi], in.dst[0], result[gi]);
      return;
    }
    if (in.op == Opcode::Redux) return redux(in, group);
    if (in.op == Opcode::Vote) {
      std::uint32_t ballot = 0;
      bool all = true, any = false;
      for (std::uint32_t t : group) {
        Val<V> p = operand(t, in.src[0]);
        if (p.kind == VKind::Cond) fail(DiagKind::NotStructured, t, "a vote on a predicate that depends on tensor data");
        bool on = as_int(t, p, "a vote predicate") != 0;
        ballot |= std::uint32_t(on) << (t % 32);
        all = all && on;
        any = any || on;
      }
      for (std::uint32_t t : group) {
        switch (VoteMode(in.mode)) {
          case VoteMode::All: set(t, in.dst[0], int_val(all)); break;
          case VoteMode::Any: set(t, in.dst[0], int_val(any)); break;
          case VoteMode::Ballot: set(t, in.dst[0], int_val(ballot)); break;
        }
      }
    }
  }

  // redux.sync: one value for the whole group, in lane order. Integer data
  // combine over the integers (add, min, max); bit operations need known bits.
  void redux(const Instr& in, const std::vector<std::uint32_t>& group) {
    const DType ty = in.type;
    const AtomOp op = AtomOp(in.mode);
    bool data = false;
    for (std::uint32_t t : group) data = data || operand(t, in.src[0]).kind == VKind::Data;
    Val<V> acc;
    for (std::size_t gi = 0; gi < group.size(); ++gi) {
      const std::uint32_t t = group[gi];
      Val<V> a = operand(t, in.src[0]);
      if (data) {
        V x = as_data(t, a, ty, "a redux operand");
        if (gi == 0) {
          acc = data_val(x);
          continue;
        }
        switch (op) {
          case AtomOp::Add: acc.f = d_.add(acc.f, x); break;
          case AtomOp::Min: acc.f = d_.min(acc.f, x); break;
          case AtomOp::Max: acc.f = d_.max(acc.f, x); break;
          default:
            fail(DiagKind::NotStructured, t, std::string("redux.sync.") + atom_op_name(op) + " on integer tensor data (a bit operation)");
        }
        continue;
      }
      std::int64_t x = wrap(as_int(t, a, "a redux operand"), ty);
      if (gi == 0) {
        acc = int_val(x);
        continue;
      }
      std::int64_t y = acc.i;
      bool lt = dtype_is_signed(ty) ? x < y : (std::uint64_t(x) & mask(ty)) < (std::uint64_t(y) & mask(ty));
      switch (op) {
        case AtomOp::Add: acc.i = wrap(std::int64_t(std::uint64_t(x) + std::uint64_t(y)), ty); break;
        case AtomOp::Min: acc.i = lt ? x : y; break;
        case AtomOp::Max: acc.i = lt ? y : x; break;
        case AtomOp::And: acc.i = wrap(x & y, ty); break;
        case AtomOp::Or: acc.i = wrap(x | y, ty); break;
        case AtomOp::Xor: acc.i = wrap(x ^ y, ty); break;
      }
    }
    for (std::uint32_t t : group) set(t, in.dst[0], acc);
  }

  static warp::MmaType mma_type(DType t) {
    return t == DType::BF16 ? warp::MmaType::BF16 : (t == DType::F16 ? warp::MmaType::F16 : warp::MmaType::TF32);
  }

  // Element i of a fragment held in registers regs[first...]: two per register
  // for 16-bit inputs (low half first), one for tf32 and the accumulators.
  V fragment(std::uint32_t t, const decltype(Instr::src)& src, std::size_t first, int i, int per_reg, DType ty) {
    Val<V> v = operand(t, src[first + std::size_t(i / per_reg)]);
    if (per_reg == 1) return as_float(t, v, ty);
    if (v.kind != VKind::Pair)
      fail(DiagKind::Unsupported, t, "an mma.sync operand register does not hold a pair of 16-bit values");
    return i % per_reg == 0 ? v.f : v.g;
  }

  // mma.sync: D = A * B + C over the warp, with the PTX ISA fragment layouts.
  void mma(const Instr& in, const std::vector<std::uint32_t>& group) {
    warp::MmaShape shape = warp::MmaShape(in.mode);
    warp::MmaType ty = mma_type(in.src_type);
    std::uint32_t t0 = group[0];
    if (group.size() != 32 || !warp::mma_supported(shape, ty))
      fail(DiagKind::Unsupported, t0, "mma.sync needs a full warp of 32 threads and a supported shape and type");
    const int m = warp::mma_m(shape), n = warp::mma_n(shape), k = warp::mma_k(shape);
    const int per = warp::mma_ab_elems_per_reg(ty);
    const int na = warp::mma_a_count(shape, ty), nb = warp::mma_b_count(shape, ty), nc = warp::mma_c_count(shape, ty);
    const std::size_t a0 = 0, b0 = std::size_t(na / per), c0 = b0 + std::size_t(nb / per);
    if (in.src.size() != c0 + std::size_t(nc) || in.dst.size() != std::size_t(nc))
      fail(DiagKind::Unsupported, t0, "mma.sync with the wrong number of fragment registers");
    std::vector<V> A(std::size_t(m * k)), B(std::size_t(k * n)), C(std::size_t(m * n));
    for (std::uint32_t t : group) {
      int lane = int(t % 32);
      for (int i = 0; i < na; ++i) {
        warp::RowCol rc = warp::mma_a(shape, ty, lane, i);
        A[std::size_t(rc.row * k + rc.col)] = fragment(t, in.src, a0, i, per, in.src_type);
      }
      for (int i = 0; i < nb; ++i) {
        warp::RowCol rc = warp::mma_b(shape, ty, lane, i);
        B[std::size_t(rc.row * n + rc.col)] = fragment(t, in.src, b0, i, per, in.src_type);
      }
      for (int i = 0; i < nc; ++i) {
        warp::RowCol rc = warp::mma_c(shape, ty, lane, i);
        C[std::size_t(rc.row * n + rc.col)] = fragment(t, in.src, c0, i, 1, DType::F32);
      }
    }
    std::vector<V> acc(C);
    for (int r = 0; r < m; ++r)
      for (int c = 0; c < n; ++c)
        acc[std::size_t(r * n + c)] =
            dot(acc[std::size_t(r * n + c)], &A[std::size_t(r * k)], 1, &B[std::size_t(c)], std::size_t(n), k);
    for (std::uint32_t t : group)
      for (int i = 0; i < nc; ++i) {
        warp::RowCol rc = warp::mma_c(shape, ty, int(t % 32), i);
        set(t, in.dst[std::size_t(i)], float_val(acc[std::size_t(rc.row * n + rc.col)]));
      }
  }

  // ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16: lanes 8q..8q+7
  // give the row addresses of matrix q; every lane receives, in register q,
  // its two elements of matrix q.
  void ldmatrix(const Instr& in, const std::vector<std::uint32_t>& group) {
    const int num = in.mode;
    std::uint32_t t0 = group[0];
    if (group.size() != 32 || (num != 1 && num != 2 && num != 4) || in.dst.size() != std::size_t(num))
      fail(DiagKind::Unsupported, t0, "ldmatrix needs a full warp and .x1, .x2 or .x4 with that many registers");
    std::uint32_t warp_base = t0 - t0 % 32;
    std::vector<V> rows(std::size_t(num * 8 * 8));
    for (int q = 0; q < num; ++q)
      for (int r = 0; r < 8; ++r) {
        std::uint32_t t = warp_base + std::uint32_t(warp::ldmatrix_address_lane(q, r));
        Addr a = address(t, in.src[0]);
        Memory<V>& mem = mem_[a.buf];
        for (int col = 0; col < 8; ++col) {
          std::size_t c = cell(t, a, std::size_t(col), 2, false);
          check_read(t, mem, c);
          const Val<V>& v = read_cell(mem, c);
          collective_sched_ = std::max(collective_sched_, v.sched);
          if (v.kind != VKind::Float) fail(DiagKind::Uninitialized, t, "ldmatrix reads " + mem.name + "[" + std::to_string(c) + "], which nothing has written");
          rows[std::size_t((q * 8 + r) * 8 + col)] = v.f;
        }
      }
    for (std::uint32_t t : group)
      for (int q = 0; q < num; ++q) {
        Val<V> pair;
        pair.kind = VKind::Pair;
        warp::RowCol lo = warp::ldmatrix_element(int(t % 32), 0, in.trans);
        warp::RowCol hi = warp::ldmatrix_element(int(t % 32), 1, in.trans);
        pair.f = rows[std::size_t((q * 8 + lo.row) * 8 + lo.col)];
        pair.g = rows[std::size_t((q * 8 + hi.row) * 8 + hi.col)];
        set(t, in.dst[std::size_t(q)], pair);
      }
  }

  // ------------------------------------------------------------ wmma
  // The wmma fragment layouts are opaque in the PTX ISA: code may only pass a
  // fragment between wmma instructions (or change every element alike). So
  // the evaluator picks its own layout, the same for load, mma and store:
  // slot s of lane L (element s of its fragment registers, two per register
  // for 16-bit types) holds element (L * cap + s) mod (rows * cols) of the
  // row-major logical matrix, cap being the slots per lane. Where the warp
  // has more slots than the matrix has elements (f16 A and B: 512 slots for
  // 256 elements) every element is held twice, and the first copy is the one
  // that is stored.
  static void wmma_dims(WmmaShape s, int* m, int* n, int* k) {
    switch (s) {
      case WmmaShape::M16N16K16: *m = 16, *n = 16, *k = 16; return;
      case WmmaShape::M32N8K16: *m = 32, *n = 8, *k = 16; return;
      case WmmaShape::M8N32K16: *m = 8, *n = 32, *k = 16; return;
      case WmmaShape::M16N16K8: *m = 16, *n = 16, *k = 8; return;
    }
  }

  // The (rows, cols) of the matrix a wmma.load / store moves.
  static std::pair<int, int> wmma_matrix(const Instr& in) {
    int m = 0, n = 0, k = 0;
    wmma_dims(WmmaShape(in.shape), &m, &n, &k);
    switch (WmmaMatrix(in.mode)) {
      case WmmaMatrix::A: return {m, k};
      case WmmaMatrix::B: return {k, n};
      case WmmaMatrix::C: break;
    }
    return {m, n};
  }

  // The address and leading dimension (in elements) a warp gives; .aligned
  // requires every lane to give the same.
  std::pair<Addr, std::int64_t> wmma_address(const Instr& in, const std::vector<std::uint32_t>& group, int rows,
                                             int cols) {
    std::uint32_t t0 = group[0];
    if (group.size() != 32) fail(DiagKind::Unsupported, t0, "wmma needs a full warp of 32 threads");
    std::pair<Addr, std::int64_t> first{Addr{0, 0}, 0};
    for (std::size_t gi = 0; gi < group.size(); ++gi) {
      std::uint32_t t = group[gi];
      Addr a = address(t, in.src[0]);
      std::int64_t ld = in.src[1].kind == Operand::Kind::Int && in.src[1].imm < 0
                            ? (in.trans ? rows : cols)  // no stride: the matrix is dense
                            : as_int(t, operand(t, in.src[1]), "a wmma stride");
      if (ld <= 0) fail(DiagKind::Unsupported, t, "a wmma stride of " + std::to_string(ld));
      if (gi == 0)
        first = {a, ld};
      else if (a.buf != first.first.buf || a.offset != first.first.offset || ld != first.second)
        fail(DiagKind::Unsupported, t,
             "the lanes of a warp give different addresses or strides to a wmma instruction (.aligned needs the same)");
    }
    return first;
  }

  // Memory offset, in elements, of element (r, c) of a matrix stored row- or column-major.
  static std::size_t wmma_offset(const Instr& in, int r, int c, std::int64_t ld) {
    return std::size_t(in.trans ? std::int64_t(c) * ld + r : std::int64_t(r) * ld + c);
  }

  V read_float(std::uint32_t t, Memory<V>& m, std::size_t c, DType ty) {
    check_read(t, m, c);
    const Val<V>& v = read_cell(m, c);
    collective_sched_ = std::max(collective_sched_, v.sched);
    if (v.kind == VKind::Undef) {
      note_uninitialized(t, m, c);
      return d_.poison(m.name, c);
    }
    return as_float(t, v, ty);
  }

  static int slots_per_reg(DType t) { return dtype_bytes(t) == 2 ? 2 : 1; }

  void set_fragment(std::uint32_t t, const decltype(Instr::dst)& regs, const std::vector<V>& slots, int per) {
    for (std::size_t r = 0; r < regs.size(); ++r) {
      Val<V> v = float_val(slots[r * std::size_t(per)]);
      if (per == 2) {
        v.kind = VKind::Pair;
        v.g = slots[r * 2 + 1];
      }
      set(t, regs[r], v);
    }
  }

  void wmma_load(const Instr& in, const std::vector<std::uint32_t>& group) {
    auto [rows, cols] = wmma_matrix(in);
    auto [a, ld] = wmma_address(in, group, rows, cols);
    const int per = slots_per_reg(in.type), cap = int(in.dst.size()) * per;
    const std::size_t width = dtype_bytes(in.type);
    if (cap == 0 || (32 * cap) % (rows * cols) != 0)
      fail(DiagKind::Unsupported, group[0], "a wmma fragment of " + std::to_string(in.dst.size()) + " registers");
    Memory<V>& mem = mem_[a.buf];
    for (std::uint32_t t : group) {
      int lane = int(t % 32);
      std::vector<V> slots(static_cast<std::size_t>(cap));
      for (int s = 0; s < cap; ++s) {
        int e = (lane * cap + s) % (rows * cols);
        std::size_t c = cell(t, a, wmma_offset(in, e / cols, e % cols, ld), width, false);
        slots[std::size_t(s)] = read_float(t, mem, c, in.type);
      }
      set_fragment(t, in.dst, slots, per);
    }
  }

  // wmma.mma: src is {na, nb, A registers, B registers, C registers}.
  void wmma_mma(const Instr& in, const std::vector<std::uint32_t>& group) {
    std::uint32_t t0 = group[0];
    if (group.size() != 32) fail(DiagKind::Unsupported, t0, "wmma needs a full warp of 32 threads");
    int m = 0, n = 0, k = 0;
    wmma_dims(WmmaShape(in.shape), &m, &n, &k);
    const int per_ab = slots_per_reg(in.src_type);
    const std::size_t na = std::size_t(in.src[0].imm), nb = std::size_t(in.src[1].imm);
    const std::size_t nc = in.src.size() - 2 - na - nb;
    const int cap_a = int(na) * per_ab, cap_b = int(nb) * per_ab;
    const int per_c = m * n / (32 * int(nc)), per_d = m * n / (32 * int(in.dst.size()));
    // Where a fragment's slots come from: (first register, slots per register, element type).
    auto gather = [&](std::size_t first, int cap, int per, DType ty, int elems) {
      std::vector<V> x(static_cast<std::size_t>(elems));
      for (std::uint32_t t : group)
        for (int s = 0; s < cap; ++s)
          x[std::size_t((int(t % 32) * cap + s) % elems)] = fragment(t, in.src, first, s, per, ty);
      return x;
    };
    std::vector<V> A = gather(2, cap_a, per_ab, in.src_type, m * k);
    std::vector<V> B = gather(2 + na, cap_b, per_ab, in.src_type, k * n);
    std::vector<V> acc = gather(2 + na + nb, int(nc) * per_c, per_c, per_c == 2 ? DType::F16 : DType::F32, m * n);
    for (int r = 0; r < m; ++r)
      for (int c = 0; c < n; ++c)
        acc[std::size_t(r * n + c)] =
            dot(acc[std::size_t(r * n + c)], &A[std::size_t(r * k)], 1, &B[std::size_t(c)], std::size_t(n), k);
    const int cap_d = int(in.dst.size()) * per_d;
    for (std::uint32_t t : group) {
      std::vector<V> slots(static_cast<std::size_t>(cap_d));
      for (int s = 0; s < cap_d; ++s) slots[std::size_t(s)] = acc[std::size_t((int(t % 32) * cap_d + s) % (m * n))];
      set_fragment(t, in.dst, slots, per_d);
    }
  }

  // wmma.store.d: src is {address, stride, fragment registers}.
  void wmma_store(const Instr& in, const std::vector<std::uint32_t>& group) {
    auto [rows, cols] = wmma_matrix(in);
    auto [a, ld] = wmma_address(in, group, rows, cols);
    const int per = slots_per_reg(in.type), cap = int(in.src.size() - 2) * per;
    const std::size_t width = dtype_bytes(in.type);
    Memory<V>& mem = mem_[a.buf];
    check_writable(group[0], mem);
    for (std::uint32_t t : group) {
      int lane = int(t % 32);
      for (int s = 0; s < cap; ++s) {
        int e = lane * cap + s;
        if (e >= rows * cols) break;  // a second copy of an element: the first one is stored
        std::size_t c = cell(t, a, wmma_offset(in, e / cols, e % cols, ld), width, true);
        Val<V> v = operand(t, in.src[2 + std::size_t(s / per)]);
        if (per == 2) {
          if (v.kind != VKind::Pair) fail(DiagKind::Unsupported, t, "a wmma fragment register that holds no pair of halves");
          v = float_val(s % 2 == 0 ? v.f : v.g);
        }
        check_write(t, mem, c, pc_[t]);
        mem.cells[c] = v;
      }
    }
  }

  // ------------------------------------------------------------ results
  void collect(RunResult<D>& r) {
    for (std::size_t i = 0; i < p_.params.size(); ++i) {
      if (param_buf_[i] == kNone) continue;
      Memory<V>& m = mem_[param_buf_[i]];  // read_cell() makes the symbols of inputs never read
      if (o_.record_touches) {
        auto& tv = r.touches[m.name];
        tv = m.touches;
        tv.resize(m.cells.size());
      }
      if (m.role != Role::Out && m.role != Role::InOut) continue;
      auto& out = r.outputs[m.name];
      out.resize(m.cells.size());
      for (std::size_t e = 0; e < m.cells.size(); ++e) {
        const Val<V>& v = read_cell(m, e);
        if (v.sched) schedule_dependent(kNone, v.sched, "output " + m.name + "[" + std::to_string(e) + "]");
        if (v.kind == VKind::Float || v.kind == VKind::Data)
          out[e] = v.f;
        else if (v.kind == VKind::Int && dtype_is_float(m.dtype) && from_bits(std::uint64_t(v.i), m.dtype))
          out[e] = *from_bits(std::uint64_t(v.i), m.dtype);  // float bits stored through an integer move
        else if (v.kind == VKind::Int)  // the stored bits, read as the tensor's type
          out[e] = d_.constant(Rational(dtype_is_signed(m.dtype) ? wrap(v.i, m.dtype)
                                                                  : std::int64_t(std::uint64_t(v.i) & mask(m.dtype))));
      }
    }
  }

  const Program& p_;
  const Launch& l_;
  D& d_;
  RunOptions o_;
  std::uint32_t n_ = 0, r_ = 0;
  std::vector<Val<V>> regs_;
  // The domain value of each float immediate of the program, made on first
  // use: a loop body's constants are otherwise rebuilt (for the symbolic
  // domain: a Rational and a hash lookup) on every iteration of every thread.
  std::vector<V> constant_values_;
  std::vector<char> constant_made_;
  std::vector<TState> state_;
  std::vector<std::uint32_t> pc_;
  std::vector<std::uint32_t> vc_;  // n x n vector clocks
  std::vector<Memory<V>> mem_;
  std::vector<std::uint32_t> param_buf_, decl_buf_;
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> read_sets_;  // (clock + 1, pc) per thread
  std::vector<std::int32_t> free_sets_;
  RunStats stats_;
  std::uint64_t budget_ = UINT64_MAX, bytes_ = 0;  // the memory budget, and what reserve() counted
  std::optional<Diagnostic> uninitialized_;  // the first read of unwritten memory
  std::vector<std::uint64_t> arrival_;        // when each thread reached its current barrier
  // The symbolic memo (memo_compute): the log, its cap (0: not used yet),
  // the index over it (memo_shift_: 64 - log2 of its size), each thread's
  // cursor, the misses since the cap last grew whose result this run had
  // made already, and the context's size when the run first used the memo.
  std::vector<MemoEntry> memo_log_;
  std::size_t memo_cap_ = 0;
  std::vector<std::uint32_t> memo_index_;
  unsigned memo_shift_ = 63;
  std::vector<std::uint32_t> memo_cursor_;
  std::size_t memo_repeats_ = 0;
  std::size_t memo_base_ = 0;
  std::uint64_t arrivals_ = 0;
  bool sched_marks_ = false;            // whether any value carries a schedule mark (Val::sched)
  std::map<std::uint32_t, std::string> undefined_why_;  // shuffles that read undefined values: pc -> which lanes
  std::uint32_t collective_sched_ = 0;  // the schedule mark of what the running collective read
  std::vector<AsyncCopy<V>> copies_;                               // every cp.async element issued; ids are index + 1
  std::vector<std::vector<std::uint32_t>> open_copies_;           // per thread: copies not yet committed to a group
  std::vector<std::deque<std::vector<std::uint32_t>>> copy_groups_;  // per thread: committed groups, oldest first
};

}  // namespace

template <class Domain>
RunResult<Domain> run_program(const Program& program, const Launch& launch, Domain& domain, const RunOptions& options) {
  return Machine<Domain>(program, launch, domain, options).run();
}

template RunResult<SymbolicDomain> run_program(const Program&, const Launch&, SymbolicDomain&, const RunOptions&);
template RunResult<ConcreteDomain> run_program(const Program&, const Launch&, ConcreteDomain&, const RunOptions&);
template RunResult<PayloadDomain> run_program(const Program&, const Launch&, PayloadDomain&, const RunOptions&);

}  // namespace tileverify
