// Machine<Domain>: one copy of the code, a program counter per thread,
// VOLTA's sync rule, vector-clock race detection, bounds and initialization
// checks. Explicitly instantiated for the two domains.
//
// Internal to the library (not a public header): the evaluator's value type
// (memory.hpp has the memory and shadow types) and the class Machine<D>, with its members grouped
// by concern. Each group's members are defined in the file its heading names,
// which ends with the explicit instantiations of Machine<SymbolicDomain>,
// Machine<ConcreteDomain> and Machine<PayloadDomain> (the fma chains and the
// memo: the symbolic domain only). The members defined here are the small
// ones the hot paths (step, the accesses, the arithmetic) call everywhere.
#pragma once

#include "tileverify/eval.hpp"
#include "tileverify/payload_domain.hpp"

#include "cta_affine.hpp"
#include "int_semantics.hpp"
#include "memory.hpp"
#include "warp_semantics.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tileverify::machine {

// Pair: two 16-bit floats packed in one 32-bit register (f low half, g high half),
// as mma.sync and ldmatrix fragments hold them.
// Data: an integer that depends on integer tensor data, held in f as a domain
// value over the integers (no wraparound, as floats have no rounding).
// Shadow (the symbolic domain's thread classes, machine_shadows.cpp): the
// float f with every input symbol of tensor T moved by shift vector i's
// entry for T. Only the paths that know shadows see one: operand(),
// read_cell() and as_float() hand every other reader the float it denotes.
enum class VKind : std::uint8_t { Undef, Int, Float, Ptr, Cond, Pair, Data, Shadow };

template <class V>
struct Val {
  VKind kind = VKind::Undef;
  Cmp cmp = Cmp::EQ;
  // 1 + the index of the SlotForm (Machine::slot_forms_) that says how this
  // schedule-dependent integer or pointer derives from what an atom.add
  // returned (0: none). Trusted only while the form matches (slot_of).
  std::uint16_t slot = 0;
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
  // How the integer moves with the CTA index (CtaAffineLog's id of its L;
  // 0: it does not), in a run that records it (cta_affine.hpp).
  std::uint32_t aff = 0;
};

struct Stop {
  Diagnostic diag;
};

enum class TState : std::uint8_t { Run, Wait, Done };

template <class D>
class Machine {
  using V = typename D::Value;

 public:
  Machine(const Program& p, const Launch& l, D& d, const RunOptions& o)
      : p_(p), l_(l), d_(d), o_(o), aff_(o.cta_affine) {}

  // Sets up, runs every thread to the end and collects the outputs
  // (run_program.cpp).
  RunResult<D> run();

 private:
  // ------------------------------------------------------------ setup
  // The memories of the arguments and module variables (machine_setup.cpp).
  void setup();
  void setup_tensor_maps();
  void setup_structs();
  void setup_map_arrays();
  std::uint32_t map_tensor(const std::string& name, const TensorMap& mp, const TensorArg& ta);
  std::uint32_t tensor_memory(const TensorArg& ta, const std::string& what);
  // Whether an input element's symbol is made when something first reads it
  // (see fill_inputs).
  static constexpr bool kLazyInputs = std::is_same<D, SymbolicDomain>::value;
  void fill_inputs(Memory<V>& m);
  void fill_value(Memory<V>& m, const TensorArg& ta);
  // Cell c's value for a read: makes its input symbol first if it is still
  // to be made (see fill_inputs). Every read of a cell goes through here.
  // A shadow in the cell is replaced by the float it denotes (the same
  // value), so that no reader but read_cell_keep's callers sees one.
  const Val<V>& read_cell(Memory<V>& m, std::size_t c);
  // read_cell for the accesses that carry shadows (ld of a whole cell, the
  // outputs of a run that keeps them).
  const Val<V>& read_cell_keep(Memory<V>& m, std::size_t c);

  static void fill_initial(Memory<V>& m);
  void typed(Memory<V>& m, std::uint64_t elements, std::uint32_t size);

  // ------------------------------------------------------------ limits
  // The memory budget and the deadline (machine_setup.cpp).
  static std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b) {
    return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
  }
  std::string steps_text() const { return std::to_string(stats_.thread_instructions) + " thread-instructions"; }
  Diagnostic limit_diag(const std::string& msg) const {
    Diagnostic d;
    d.kind = DiagKind::Limit;
    d.message = msg;
    return d;
  }
  void reserve(const std::string& what, std::uint64_t count, std::uint64_t each);
  void reserve_bytes(const std::string& what, std::uint64_t count, std::uint64_t need);
  void reserve_cells(const Memory<V>& m, const std::string& what, std::uint64_t cells);
  void check_limits(std::uint32_t t);
  void reserve_tensor(const std::string& what, std::uint64_t cells);
  void paged(Memory<V>& m);
  void setup_deadline(const std::string& what) const;
  // A taken branch into code from which no path reaches ret, trap or the
  // end of the kernel: the thread can never finish, which ends the run at
  // once instead of at the step or time limit.
  void check_way_out(std::uint32_t t, std::uint32_t target);

  // ------------------------------------------------------------ stops
  // A run stops by throwing Stop with its diagnostic.
  [[noreturn]] void bad_launch(const std::string& msg) {
    Diagnostic d;
    d.kind = DiagKind::BadLaunch;
    d.message = msg;
    throw Stop{d};
  }

  [[noreturn]] void unsupported_launch(const std::string& msg) {
    Diagnostic d;
    d.kind = DiagKind::Unsupported;
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
  // Running the threads, syncs and the vector clocks they join, deadlocks
  // (machine_schedule.cpp).
  void schedule();
  std::uint32_t member_mask(std::uint32_t t, const Instr& in);
  bool pairs_with(std::uint32_t t, std::uint32_t u) const;
  bool counted(const Instr& in) const;
  bool release_counted(std::uint32_t t);
  bool release_groups();
  void record_sync(const Instr& in, const std::vector<std::uint32_t>& group);
  [[noreturn]] void mismatched_masks(std::uint32_t t, std::uint32_t u, bool exited);
  void barrier_divergence(std::uint32_t t, const std::vector<std::uint32_t>& arrived,
                          const std::vector<std::uint32_t>& exited);
  [[noreturn]] void deadlock();
  // warpgroup: a wgmma.* collective, whose join the clocks of sync_vc_
  // leave out (machine_wgmma.cpp, wgmma_cross_warp).
  void join_clocks(const std::vector<std::uint32_t>& group, bool warpgroup = false);

  // ------------------------------------------------------------ values
  // Registers, operands and their kinds (from_bits: machine_arith.cpp).
  Val<V>& reg(std::uint32_t t, std::uint32_t r) { return regs_[std::size_t(t) * r_ + r]; }

  // Thread t's CTA in the cluster the run covers (0 outside clusters), and
  // the buffer declaration i is in that CTA (shared ones have a copy each).
  std::uint32_t rank(std::uint32_t t) const { return t / nb_; }
  // The first thread of t's warpgroup: four warps from a multiple of 128
  // threads of its CTA.
  std::uint32_t warpgroup_first(std::uint32_t t) const { return t / nb_ * nb_ + t % nb_ / 128 * 128; }
  std::uint32_t decl_buf(std::uint32_t t, std::uint32_t i) const {
    return ncta_ == 1 ? decl_buf_[i] : rank_buf_[std::size_t(t / nb_) * p_.buffers.size() + i];
  }

  std::int64_t special(std::uint32_t t, Special s);

  V constant_operand(std::uint32_t index);

  // A register read before any write holds an undefined value, as a
  // shuffle from outside its member mask gives one: kernels do this in lanes
  // whose result they discard (a predicated load in some lanes, then a
  // butterfly reduction in all of them). From its first read on the register
  // holds the integer 0 marked undefined (Val::sched), reported only where
  // it would show: an output, an address, a branch (schedule_dependent).
  const Val<V>& mark_undefined(std::uint32_t t, std::uint32_t r);

  // %reserved_smem_offset_*: the place of the shared memory the CUDA runtime
  // reserves for itself (PTX ISA, "Special Registers"), which tileverify
  // does not model: a value marked like an undefined one, whose use is
  // reported as unsupported (schedule_dependent).
  Val<V> reserved_smem(std::uint32_t t);

  Val<V> operand(std::uint32_t t, const Operand& o);

  // operand(), except that a shadow comes back as it is when `keep` (a
  // store of a whole cell: memory holds it as a register does).
  Val<V> operand_keep(std::uint32_t t, const Operand& o, bool keep) {
    if (keep && o.kind == Operand::Kind::Reg && reg(t, o.index).kind == VKind::Shadow) return reg(t, o.index);
    return operand(t, o);
  }

  static std::int64_t wrap(std::int64_t v, DType t) { return wrap_int(v, t); }

  std::int64_t as_int(std::uint32_t t, const Val<V>& v, const char* what);

  // An integer that decides what happens (a lane, a mask, a count) rather
  // than flowing into data: a marked value (undefined, or what an atom
  // returned) is reported here.
  std::int64_t control_int(std::uint32_t t, const Val<V>& v, const char* what) {
    if (v.sched) schedule_dependent(t, v.sched, what);
    return as_int(t, v, what);
  }

  V as_float(std::uint32_t t, const Val<V>& v, DType type);

  std::optional<V> from_bits(std::uint64_t bits, DType type);

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
    if (__builtin_expect(v.aff != 0, 0)) affine_break(t, "integer tensor data combined with the CTA index");
    return d_.constant(Rational(dtype_is_signed(type) ? wrap(as_int(t, v, what), type)
                                                      : std::int64_t(std::uint64_t(wrap(as_int(t, v, what), type)) & mask(type))));
  }

  // ------------------------------------------------------------ memory
  // Addresses and the checked cell of an access.
  struct Addr {
    std::uint32_t buf;
    std::int64_t offset;
    std::uint32_t aff = 0;  // how the offset moves with the CTA index (Val::aff)
  };

  // Whether register operand o holds an address in a by-value struct parameter.
  bool is_struct_address(std::uint32_t t, const Operand& o) {
    if (std::all_of(struct_buf_.begin(), struct_buf_.end(), [](std::uint32_t b) { return b == kNone; })) return false;
    const Val<V> v = operand(t, o);
    return v.kind == VKind::Ptr && std::find(struct_buf_.begin(), struct_buf_.end(), v.buf) != struct_buf_.end();
  }

  Addr address(std::uint32_t t, const Operand& o);

  // The first cell of access number k of `width` bytes at a (bytes
  // a.offset + k·width onwards), checked: aligned to its width and inside
  // the buffer. An untyped array takes `width` as its granule at its first
  // access, and a narrower access re-grids the buffer first (adapt), so the
  // access covers width / g whole cells from the one returned. An access of
  // the granule's width, nearly all of them, takes no branch of adapt's.
  std::size_t cell(std::uint32_t t, const Addr& a, std::size_t k, std::size_t width, bool write);

  void check_writable(std::uint32_t t, const Memory<V>& m) {
    if (m.read_only) fail(DiagKind::Unsupported, t, "a write to '" + m.name + "', which is read-only .const data");
  }

  // ------------------------------------------------------------ bytes
  // Granules, re-gridding, and values split into cells and joined from them
  // (machine_memory.cpp; memory.hpp says how).
  void adapt(std::uint32_t t, Memory<V>& m, std::size_t width);
  void regrid(Memory<V>& m, std::uint32_t g);
  Shadow copy_shadow(const Shadow& s);
  [[noreturn]] void misaligned(std::uint32_t t, const Memory<V>& m, std::int64_t byte, std::size_t width);
  [[noreturn]] void out_of_bounds(std::uint32_t t, const Memory<V>& m, std::int64_t byte, std::size_t width, bool write);
  static Cell<V> make_cell(const Val<V>& v, std::uint32_t tag) {
    Cell<V> c;
    static_cast<Val<V>&>(c) = v;
    c.tag = tag;
    return c;
  }
  static void pieces(const Val<V>& v, std::size_t width, std::uint32_t g, std::uint32_t tag, Cell<V>* out);
  static void split_cell(const Cell<V>& x, std::size_t width, std::uint32_t g, Cell<V>* out);
  // The access a join or split reads for (its messages): thread t (kNone:
  // the output collection) and how many bytes; what: "read", "atomic", ...
  struct Reader {
    std::uint32_t t;
    std::size_t width;
    const char* what;
    std::uint64_t byte;  // where the access starts
  };
  Val<V> join(const Reader& r, Memory<V>& m, std::size_t c, std::size_t width);
  Val<V> combine(const Reader& r, Memory<V>& m, std::size_t c, std::size_t k, const Val<V>& lo, const Val<V>& hi,
                 std::size_t half);
  std::string origin(const Memory<V>& m, std::size_t c) const;
  [[noreturn]] void bad_bytes(const Reader& r, const Memory<V>& m, std::size_t c, const std::string& what);
  // A read of `width` bytes from cell c by thread t at pc, race-checked;
  // Undef when some byte was never written (noted as such).
  // keep: a shadow in the cell comes back as it is (ld).
  Val<V> read(std::uint32_t t, Memory<V>& m, std::size_t c, std::size_t width, std::uint32_t pc, bool keep = false) {
    if (width == m.g && !(m.cells[c].tag & kSliceBits)) {
      check_read(t, m, c, pc);
      return keep ? read_cell_keep(m, c) : read_cell(m, c);
    }
    return read_slow(t, m, c, width, pc);
  }
  Val<V> read_slow(std::uint32_t t, Memory<V>& m, std::size_t c, std::size_t width, std::uint32_t pc);
  // A plain store (st, wmma.store) of v, `width` bytes from cell c, race-checked.
  void write(std::uint32_t t, Memory<V>& m, std::size_t c, std::size_t width, const Val<V>& v, std::uint32_t pc);
  void write_slow(std::uint32_t t, Memory<V>& m, std::size_t c, std::size_t width, const Val<V>& v, std::uint32_t pc);

  // ------------------------------------------------------------ race check
  // Shadow cells, epochs and vector clocks (machine_races.cpp).
  [[noreturn]] void race(std::uint32_t t, Memory<V>& m, std::size_t c, std::uint32_t other, std::uint32_t other_pc,
                         Access other_kind, Access kind, std::uint32_t pc);
  bool ordered(std::uint32_t t, std::uint32_t u, std::uint32_t clock) const;
  void add_epoch(Epochs& e, std::uint32_t t, std::uint32_t pc);
  template <class F>
  void for_unordered(const Epochs& e, std::uint32_t t, F f);
  void clear_epochs(Epochs& e);
  std::int32_t new_read_set();
  static void set_epoch(std::vector<ReadEpoch>& set, std::uint32_t u, std::uint32_t clock, std::uint32_t pc);
  template <class F>
  void for_unordered_writes(const Shadow& s, std::uint32_t t, F f);
  void check_pending(std::uint32_t t, Memory<V>& m, std::size_t c, Access kind, std::uint32_t pc);
  void touch(Memory<V>& m, std::size_t c, std::uint8_t kind, std::uint32_t t, std::uint32_t pc);
  void check_read(std::uint32_t t, Memory<V>& m, std::size_t c, std::uint32_t pc);
  // `value` and `slice` (its tag's slice bits): what a plain store (st,
  // wmma.store) writes into the cell; null for a cp.async.
  void check_write(std::uint32_t t, Memory<V>& m, std::size_t c, std::uint32_t pc, Access kind = Access::Write,
                   const Val<V>* value = nullptr, std::uint32_t slice = 0);
  std::size_t plain_width(std::uint32_t pc) const;
  bool same_value(const Val<V>& a, const Val<V>& b) const;
  void same_value_write(std::uint32_t t, Memory<V>& m, std::size_t c, std::uint32_t other, std::uint32_t other_pc,
                        std::uint32_t pc);
  // operands: the atomic's value operands (b, and c of a cas), as commuting depends on some.
  void check_atomic(std::uint32_t t, Memory<V>& m, std::size_t c, std::uint32_t pc, const Val<V>* operands);
  bool commute(const AtomicEpoch& e, std::uint32_t pc, const Val<V>* operands) const;
  void clear_kinds(Shadow& s);

  // ------------------------------------------------------------ accesses
  // ld, st, atom / red and cp.async with its groups (machine_memory.cpp).
  void check_vector(std::uint32_t t, const Memory<V>& m, const Addr& a, std::size_t width, std::size_t count);
  void load(std::uint32_t t, const Instr& in);
  void note_uninitialized(std::uint32_t t, const Memory<V>& m, std::size_t c);
  // A load of thread-local bytes nothing wrote: the register gets an
  // undefined value (as mark_undefined), reported only where it is used.
  Val<V> unset_local(std::uint32_t t, const Memory<V>& m, std::size_t c);
  V poison(const Memory<V>& m, std::size_t c) { return d_.poison(m.name, m.element_of(c)); }
  void store(std::uint32_t t, const Instr& in);
  void atomic(std::uint32_t t, const Instr& in);
  void cp_async(std::uint32_t t, const Instr& in);
  void need_copy_groups();
  void retire(std::uint32_t t, const std::vector<std::uint32_t>& group);
  // The 2-byte elements of `count` · 2 bytes at a (ldmatrix's rows), read
  // in cells of the buffer's granule (no re-gridding for them).
  void read_halves(std::uint32_t t, const Addr& a, std::size_t count, V* out);

  // ------------------------------------------------------------ execution
  // One instruction of one thread, traps, schedule-dependent values
  // (machine_schedule.cpp).
  void step(std::uint32_t t);
  [[noreturn]] void trap(std::uint32_t t, const Instr& in);
  [[noreturn]] void schedule_dependent(std::uint32_t t, std::uint32_t sched, const std::string& what);

  // An arithmetic result derived from a schedule-dependent value (what an
  // atom returned) is schedule-dependent too.
  void alu(std::uint32_t t, const Instr& in);

  // ------------------------------------------------------------ atomic slots
  // Addresses taken from what atom.add returned: A[atomicAdd(&n, 1)] = x
  // (machine_slots.cpp).
  // How a value derives from the old value of one atom.add: value = base +
  // scale·old, modulo 2^64 (base from unmarked values only, so the same in
  // every schedule; `value` is this schedule's, which slot_of checks).
  struct SlotForm {
    std::uint32_t atom_pc = 0, counter = 0;  // counter: index into slot_counters_
    std::int64_t old = 0, scale = 1, value = 0;
    bool ptr = false;
    std::uint32_t buf = 0;
  };
  // A counter slots are taken from: every atomic on it is an atom.add of the
  // same positive step, so the old values are one set in every schedule.
  struct SlotCounter {
    std::uint32_t buf = 0;
    std::size_t cell = 0;
    std::int64_t step = 0, next = 0;  // next: the value the next atom.add reads
    std::string spoiled;              // why the old values may differ between schedules (empty: they do not)
  };
  // A buffer accessed at slots: base + scale·old + [0, scale·step) is each slot's room.
  struct SlotRegion {
    std::uint32_t counter = 0;
    std::int64_t base = 0, scale = 0;
  };
  const SlotForm* slot_of(const Val<V>& v) const;
  // atom(): the counter's bookkeeping; the old value's form (0: none).
  std::uint16_t slot_atomic(std::uint32_t t, const Instr& in, std::uint32_t buf, std::size_t c, const Val<V>& old,
                            const Val<V>& step, const Val<V>& now);
  void slot_alu(std::uint32_t t, const Instr& in, std::size_t from);
  Addr slot_address(std::uint32_t t, const Operand& o, const Val<V>& v, const SlotForm& f);
  // Every read, write and atomic: a buffer is accessed at slots only or not at all.
  void slot_rule(std::uint32_t t, Memory<V>& m, std::uint32_t pc);
  void note_access(std::uint32_t t, Memory<V>& m, std::uint32_t pc) {
    if (__builtin_expect((m.slot_use & 2) || slot_pc_ == pc, 0))
      slot_rule(t, m, pc);
    else
      m.slot_use |= 1;
  }
  bool slot_now(std::uint32_t t) const { return slot_t_ == t && slot_pc_ == pc_[t]; }
  void slots_final();
  std::vector<SlotForm> slot_forms_;
  std::vector<SlotCounter> slot_counters_;
  std::map<std::pair<std::uint32_t, std::size_t>, std::uint32_t> counter_of_;  // (buf, cell) -> slot_counters_
  std::map<std::uint32_t, SlotRegion> slot_regions_;                          // by buffer
  std::map<std::uint32_t, std::uint32_t> slot_accesses_;  // pc of a slot ld / st -> the atom.add's pc
  std::uint32_t slot_t_ = kNone, slot_pc_ = kNone;       // the access in progress is at a slot

  // ------------------------------------------------------------ fma chains
  // The symbolic domain's running sums of fma chains (machine_chains.cpp).
  struct ChainLink {
    std::uint32_t chain = kNone;  // the chain's state slot (chains in flight at once get distinct slots)
    bool first = false, last = false;
  };
  struct ChainState {
    ExprContext::RunningSum sum;
    bool active = false;  // the members so far went into sum
    // Thread classes (shadow_chain_step): following entries (sum unused;
    // path says which), or summing in the frame of shift sid; pure: every
    // member so far either followed or made the entry of its visit, so the
    // sum is the one those entries describe.
    bool follow = false, pure = false;
    std::uint32_t sid = 0;
    std::vector<std::uint64_t> path;  // the entries of this pass's members
  };

  static bool chain_candidate(const Instr& in);
  void find_chains();
  bool chain_step(std::uint32_t t, const Instr& in, const ChainLink& link);

  std::vector<ChainLink> chain_of_;  // per pc; empty: the program has no chain
  std::uint32_t chain_slots_ = 0;
  std::vector<ChainState> chain_state_;  // per thread and slot, made on first use

  // ------------------------------------------------------------ symbolic memo
  // Results that threads repeat, in the symbolic domain (machine_chains.cpp).
  static constexpr bool kMemo = std::is_same<D, SymbolicDomain>::value;
  static constexpr std::uint32_t kNoKey = UINT32_MAX;  // an unused operand of a key
  static constexpr std::size_t kMemoMinCap = 256, kMemoMaxCap = std::size_t(1) << 16;
  struct MemoEntry {
    std::uint32_t tag;             // the operation: opcode, .sat, .relu, a select's comparison
    std::uint32_t k0, k1, k2, k3;  // the sources' handles (kNoKey: none)
    std::uint32_t r;               // the result's handle
  };

  std::uint32_t plain_float(std::uint32_t t, const Operand& o);
  std::size_t memo_slot(std::uint32_t tag, std::uint32_t k0, std::uint32_t k1, std::uint32_t k2,
                        std::uint32_t k3) const;
  void memo_reserve(std::size_t cap);
  bool memo_compute(std::uint32_t t, const Instr& in);

  // ------------------------------------------------------------ thread classes
  // Floats as shadows of another thread's (machine_shadows.cpp, the symbolic
  // domain only; evaluator.md, "Thread classes").
  // The entry of the first thread to run a float operation at (pc, visit):
  // its sources' and result's handles in its own frame (k: kNoKey where
  // unused; r: kNoKey for a chain member that is not its chain's last) and,
  // for a chain member, the entry its thread ran before in the same pass
  // (kNoEntry: none), so that a pass is followed along one thread's path.
  static constexpr std::uint64_t kNoEntry = UINT64_MAX;
  struct ShadowEntry {
    std::uint32_t k[3];
    std::uint32_t r;
    std::uint64_t prev;
  };
  // A source as (handle, shift id): a float (shift 0) or a shadow.
  struct Framed {
    std::uint32_t h, sid;
  };
  void setup_shadows();
  bool shadow_source(std::uint32_t t, const Operand& o, Framed* out);
  std::uint32_t slot_of_tensor(std::uint32_t name_id, const std::string& name);
  std::int64_t shift_at(std::uint32_t sid, std::uint32_t slot) const {
    const std::vector<std::int64_t>& v = shifts_[sid];
    return slot < v.size() ? v[slot] : 0;
  }
  std::uint32_t intern_shift(std::vector<std::int64_t>& v);
  // The handle of the float that (h, sid) denotes (made once, then cached).
  std::uint32_t materialized(std::uint32_t h, std::uint32_t sid);
  // v (a shadow) as the float it denotes. (Defined in machine_shadows.cpp:
  // the other domains' explicit instantiations must not make it.)
  void materialize(Val<V>& v);
  void set_framed(std::uint32_t t, std::uint32_t r, std::uint32_t h, std::uint32_t sid);
  // The shift under which sources x (n of them) are entry e's sources; false: they are not.
  // frame: hint is the frame of the chain being followed, taken whenever it fits.
  bool match_entry(const ShadowEntry& e, const Framed* x, std::size_t n, std::uint32_t hint, std::uint32_t* sid,
                   bool frame = false);
  // x in the frame of shift sid (base[i]: the handle whose renaming by sid is x[i]); false: some is not.
  bool rebase(const Framed* x, std::size_t n, std::uint32_t sid, std::uint32_t* base);
  // The entry of thread t's visit of pc (null: none yet), counting the visit; *id: where it is or goes.
  ShadowEntry* shadow_visit(std::uint32_t t, std::uint32_t pc, std::uint64_t* id);
  bool shadow_lead(std::uint64_t id) const {
    return std::uint32_t(id) == shadow_entries_[id >> 32].size() && shadow_entry_count_ < kShadowEntryCap;
  }
  void shadow_put(std::uint64_t id, const ShadowEntry& e) {
    shadow_entries_[id >> 32].push_back(e);
    ++shadow_entry_count_;
  }
  bool shadow_compute(std::uint32_t t, const Instr& in);
  bool shadow_chain_step(std::uint32_t t, const Instr& in, const ChainLink& link);
  // A pass that followed entries: its running sum in their frame, made from them.
  void shadow_replay(ChainState& st);
  void collect_shadows(RunResult<D>& r);

  static constexpr std::size_t kShadowEntryCap = std::size_t(1) << 22;
  bool shadows_ = false;                        // thread classes run (o_.thread_classes, symbolic, > 1 thread)
  std::vector<std::vector<std::int64_t>> shifts_;  // shift id -> shift per tensor slot (trailing zeros cut); 0: none
  std::map<std::vector<std::int64_t>, std::uint32_t> shift_ids_;
  std::vector<std::uint32_t> shift_moves_;      // per shift id: how many tensors it moves
  std::vector<std::uint32_t> slot_of_name_;     // the context's tensor name id -> slot (kNone: none yet)
  std::vector<std::string> slot_names_;         // slot -> tensor name
  std::unordered_map<std::uint64_t, std::uint32_t> materialized_;  // (h << 32 | sid) -> the float's handle
  std::vector<std::uint32_t> shadow_index_;     // per pc: its index among the float operations (kNone: not one)
  std::uint32_t shadow_pcs_ = 0;
  std::vector<std::uint32_t> shadow_visits_;    // per thread and float operation: visits so far
  std::vector<std::vector<ShadowEntry>> shadow_entries_;  // per float operation, per visit
  std::size_t shadow_entry_count_ = 0;
  std::vector<std::uint32_t> last_sid_;         // per thread: the shift of its last matched entry (a first guess)

  // set(t, r, float_val(x)), field by field: building the value on the stack
  // and copying it whole stalls on store forwarding.
  void set_float(std::uint32_t t, std::uint32_t r, V x);

  // ------------------------------------------------------------ CTA classes
  // How values move with the CTA index, in a run that records it
  // (cta_affine.hpp; machine_affine.cpp).
  // Every special register that depends on the CTA index: %ctaid, and
  // %clusterid (= %ctaid without clusters; CTA classes do not run clusters).
  std::uint32_t special_aff(Special s);
  // The run can no longer stand for other CTAs: the log keeps why, and
  // nothing more is recorded.
  void affine_break(std::uint32_t t, const std::string& why) {
    if (!aff_) return;
    aff_->break_at(t == kNone ? kNone : pc_[t], why);
    aff_ = nullptr;
  }
  // out = in(x) for integer operands x with moves l (n of them): out.aff,
  // and what must hold in another CTA.
  void affine_int(std::uint32_t t, const Instr& in, const std::int64_t* x, const std::uint32_t* l, std::size_t n,
                  Val<V>& out);
  // *out = a ± b (a pointer's offset moved by an integer's).
  void affine_move(std::uint32_t a, std::uint32_t b, bool subtract, std::uint32_t* out) {
    if (!aff_->add(a, b, out, subtract)) aff_ = nullptr;
  }
  // A product x·y = p (moves la, lb) added to a pointer whose move is *out.
  void affine_product(std::uint32_t t, const Instr& in, std::int64_t x, std::int64_t y, std::uint32_t la,
                      std::uint32_t lb, std::int64_t p, std::uint32_t* out);
  void affine_access(std::uint32_t t, const Addr& a, const Memory<V>& m, std::int64_t byte, std::size_t width);
  // A TMA copy (coordinates from in.src[first], `stride` the tensor's byte
  // strides) of the map at `map` to or from shared memory at `smem`: what
  // must hold in another CTA, and how its global accesses move (0 when the
  // log breaks).
  std::uint32_t affine_tma(std::uint32_t t, const Instr& in, std::size_t first, const TensorMap& mp,
                           const std::vector<std::uint64_t>& stride, const Addr& map, const Addr& smem);
  // Operands of an instruction that is no ALU operation or plain access
  // (a barrier, a shuffle, an atomic, ...): none may move with the CTA index,
  // except its addresses.
  void affine_operands(std::uint32_t t, const Instr& in);
  // Warp collectives that order no memory between their members
  // (machine_schedule.cpp, release_groups): register exchanges and the
  // warp-wide matrix instructions (whose own accesses happen at the
  // collective, checked against the members' earlier ones).
  static bool exchanges_only(Opcode op) {
    switch (op) {
      case Opcode::Shfl:
      case Opcode::Vote:
      case Opcode::Redux:
      case Opcode::ElectSync:
      case Opcode::Mma:
      case Opcode::LdMatrix:
      case Opcode::StMatrix:
      case Opcode::WmmaLoad:
      case Opcode::WmmaMma:
      case Opcode::WmmaStore: return true;
      default: return false;
    }
  }
  // The opcodes step() runs itself rather than through the ALU (compute).
  static bool steps_itself(Opcode op) {
    switch (op) {
      case Opcode::Bar: case Opcode::WarpSync: case Opcode::Shfl: case Opcode::Vote: case Opcode::Redux:
      case Opcode::Mma: case Opcode::LdMatrix: case Opcode::WmmaLoad: case Opcode::WmmaMma: case Opcode::WmmaStore:
      case Opcode::ElectSync: case Opcode::StMatrix: case Opcode::WgmmaFence: case Opcode::WgmmaCommit:
      case Opcode::WgmmaWait: case Opcode::WgmmaMma: case Opcode::MbarInit: case Opcode::MbarArrive:
      case Opcode::MbarTx: case Opcode::MbarWait: case Opcode::MbarInval: case Opcode::TmaLoad:
      case Opcode::TmaStore: case Opcode::BulkCopy: case Opcode::BulkCommit: case Opcode::BulkWait:
      case Opcode::ClusterBar: case Opcode::Mapa: case Opcode::Atom: case Opcode::Trap: case Opcode::CpAsync:
      case Opcode::CpAsyncCommit: case Opcode::CpAsyncWait: case Opcode::Timer: case Opcode::Nanosleep:
      case Opcode::CpAsyncMbarArrive: return true;
      default: return false;
    }
  }

  // ------------------------------------------------------------ arithmetic
  // Integer, float and integer-data operations (machine_arith.cpp); the
  // float operations here are shared with the symbolic memo.
  void compute(std::uint32_t t, const Instr& in);
  bool compare_pointers(std::uint32_t t, const Instr& in, const Val<V>& a, const Val<V>& b);

  static std::uint64_t mask(DType t) { return int_mask(t); }

  // compute alone calls float_op and int_op, and int_op alone data_op: they
  // are inlined into it, as the compiler did while the machine was one file
  // (an ALU instruction makes one call, not two; the concrete domain ran 9%
  // slower without). machine_arith.cpp defines them.
  [[gnu::always_inline]] inline Val<V> float_op(std::uint32_t t, const Instr& in);

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
      case Opcode::Tanh:
      case Opcode::Log:
      case Opcode::Log1p:
      case Opcode::Erf: return 1;
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
      case Opcode::Log: *out = d_.func("log", f(0)); return true;
      case Opcode::Log1p: *out = d_.func("log1p", f(0)); return true;
      case Opcode::Erf: *out = d_.func("erf", f(0)); return true;
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

  [[gnu::always_inline]] inline Val<V> int_op(std::uint32_t t, const Instr& in);  // inlined: see float_op
  [[gnu::always_inline]] inline Val<V> data_op(std::uint32_t t, const Instr& in);

  // ------------------------------------------------------------ collectives
  // shfl, vote, redux, mma.sync and ldmatrix (machine_warp.cpp).
  void collective(const Instr& in, const std::vector<std::uint32_t>& group);
  void exchange(const Instr& in, const std::vector<std::uint32_t>& group);
  void redux(const Instr& in, const std::vector<std::uint32_t>& group);
  static warp::MmaType mma_type(DType t);
  V fragment(std::uint32_t t, const decltype(Instr::src)& src, std::size_t first, int i, int per_reg, DType ty);
  V dot(V acc, const V* a, std::size_t as, const V* b, std::size_t bs, int k);
  void mma(const Instr& in, const std::vector<std::uint32_t>& group);
  void ldmatrix(const Instr& in, const std::vector<std::uint32_t>& group);
  // elect.sync: the lowest lane of the group is elected (machine_warp.cpp).
  void elect(const Instr& in, const std::vector<std::uint32_t>& group);

  // ------------------------------------------------------------ wgmma
  // wgmma.* (collectives of a warpgroup: four consecutive warps, all at one
  // instruction) and stmatrix (machine_wgmma.cpp).
  static bool warpgroup_op(Opcode op) {
    return op == Opcode::WgmmaFence || op == Opcode::WgmmaCommit || op == Opcode::WgmmaWait || op == Opcode::WgmmaMma;
  }
  void wgmma(const Instr& in, const std::vector<std::uint32_t>& group);
  void stmatrix(const Instr& in, const std::vector<std::uint32_t>& group);
  // WgmmaMma's mode bits (program.hpp).
  struct WgmmaFlags {
    static constexpr std::uint8_t kARegs = 1, kTransA = 2, kTransB = 4, kNegA = 8, kNegB = 16;
  };
  void wgmma_mma(const Instr& in, const std::vector<std::uint32_t>& group);
  void wgmma_wait(const Instr& in, const std::vector<std::uint32_t>& group);
  // The operand matrix (rows x k, row-major; rows: M for A, N for B) a
  // descriptor names, read from shared memory by thread t.
  // Each 16-byte chunk read is noted in `reads` with the last write of its
  // cells, so that the wait can tell a write while the read was in flight.
  struct OperandRead {
    std::uint32_t buf, w_thread, w_clock, issue;
    std::int64_t byte;
  };
  void read_descriptor(std::uint32_t t, std::uint64_t desc, bool mn_major, int rows, int k, DType ty, V* out,
                       std::vector<OperandRead>* reads);
  void check_operand_reads(std::uint32_t t, const std::vector<OperandRead>& reads);
  // An accumulator register of an mma_async still in flight, read or written
  // by another instruction of thread t (docs/evaluator.md, "wgmma and
  // shared-memory addresses"): a race, as the value depends on timing.
  [[noreturn]] void in_flight(std::uint32_t t, std::uint32_t r);
  // Per thread: its wgmma groups, the uncommitted one and then the committed
  // ones, oldest first; each lists the accumulator registers its mma_asyncs
  // write, with the issue number of the mma_async. An in-flight register
  // holds an Undef value; its result waits in in_flight_val_ until the group
  // of its latest mma_async retires. Empty until a wgmma instruction runs.
  struct Pending {
    std::uint32_t reg, issue;
  };
  struct WgmmaState {
    std::vector<Pending> open;
    std::deque<std::vector<Pending>> groups;
    // The shared-memory reads of the mma_asyncs (kept by the warpgroup's
    // first thread), per group like `open` and `groups`.
    std::vector<OperandRead> open_reads;
    std::deque<std::vector<OperandRead>> group_reads;
    bool fenced = false;  // a wgmma.fence has run (PTX ISA, wgmma.fence: required before the first mma_async)
  };
  void need_wgmma_state();
  std::vector<WgmmaState> wgmma_;
  std::vector<std::uint32_t> in_flight_;  // per thread and register: the issue number of the latest mma_async (0: none)
  std::vector<Val<V>> in_flight_val_;     // per thread and register: its result
  std::vector<std::uint32_t> issue_pc_;   // issue number - 1 -> the mma_async's pc
  std::uint32_t in_flight_count_ = 0;     // registers in flight, all threads
  bool cp_async_proxy_noted_ = false;     // the note on cp.async data read by wgmma without a proxy fence was made
  // What each thread knows of the others' clocks (the first n_ columns of
  // vc_) without the joins of the warpgroup collectives: which writes a
  // synchronization other than wgmma.* orders before a wgmma's reads
  // (docs/evaluator.md, "wgmma and shared-memory addresses"). Row-major, n_
  // x n_; empty until the first wgmma instruction (vc_ holds no such join
  // before it) or without the race check. Acquires update it: the CTA and
  // warp barriers exactly (join_clocks), an mbarrier wait and
  // barrier.cluster.wait with the releasers' full clocks (sync_acquire),
  // so a release whose thread learned of a write through a wgmma.* join
  // passes that knowledge on: a note missed, never one made wrongly.
  std::vector<std::uint32_t> sync_vc_;
  bool wgmma_cross_warp_noted_ = false;   // the note on a wgmma read ordered only by wgmma.* itself was made
  void sync_acquire(std::uint32_t t, const std::uint32_t* clock, std::size_t width);
  void wgmma_cross_warp(std::uint32_t t, const Memory<V>& mem, std::int64_t byte, std::uint32_t u, std::uint32_t clock,
                        std::uint32_t upc);

  // The shared window: every .shared buffer of the CTA at a concrete address
  // (docs/evaluator.md, "wgmma and shared-memory addresses"), made on first
  // use. A shared pointer used as an integer is its address; an integer
  // used as a .shared address maps back through it.
  struct WindowEntry {
    std::uint64_t base, end;
    std::uint32_t buf;
  };
  std::vector<WindowEntry> window_;
  bool window_made_ = false;
  void make_window();
  // The integer address of pointer p (its buffer shared), or as_int's report.
  std::int64_t window_int(std::uint32_t t, const Val<V>& p, const char* what);
  // o: the operand of an access through the address (remote_access's rule
  // when it names another CTA); none: only the translation (mapa).
  Addr window_addr(std::uint32_t t, std::int64_t a, const Operand* o = nullptr);
  // Whether address operand o of `in` is in the .shared state space.
  static bool shared_operand(const Instr& in, const Operand& o) {
    if (in.op == Opcode::CpAsync) return &o == &in.src[0];  // the destination; the source is global
    return in.op == Opcode::LdMatrix || in.op == Opcode::StMatrix || in.space == Space::Shared;
  }

  // ------------------------------------------------------------ async
  // mbarrier objects, TMA and bulk copies, cluster barriers, proxy fences
  // (machine_async.cpp). async_step runs one such instruction of thread t;
  // false: t now waits (its pc stays), true: it moved on. The model and its
  // rules: docs/evaluator.md, "Asynchronous operations (sm_90)".
  bool async_step(std::uint32_t t, const Instr& in);

  // An mbarrier object (PTX ISA, "mbarrier"): the 8 bytes at (buf, byte)
  // of shared memory, its phase, arrival and tx counts, and for the race
  // check the join of the clocks of what released into its current phase
  // (arrives with .release, and the async copies whose complete-tx counted)
  // and of its last completed phase (what a successful wait acquires).
  // The lanes of one warp that execute one mbarrier.arrive together when the
  // warp is converged: their arrivals land as one (machine_mbarrier_rules.cpp).
  struct ArriveGroup {
    std::uint64_t phase = 0;               // the phase its first lane arrived in
    std::uint32_t first = 0, lanes = 0;    // its first thread; how many lanes arrived so far
    std::int64_t total = 0;                // their arrival counts so far
  };
  // An operation on an mbarrier by thread or agent `who` at its clock
  // `clock` (an access epoch), after which the barrier was in phase `phase`
  // or later; `completed`: the operation completed phase - 1.
  struct PhaseMark {
    std::uint32_t who = 0, clock = 0, pc = 0;
    std::uint64_t phase = 0;
    bool completed = false;
  };
  // A thread's latest expect-tx on an mbarrier (machine_async.cpp,
  // mbar_excess): the phase it was made in, and whether a copy the thread
  // issued after it completed that phase (then a later copy of the thread
  // counts against a later phase: more bytes than it announced).
  struct MbarExpect {
    std::uint32_t thread = 0, pc = 0;
    std::uint64_t phase = 0;
    std::int64_t phase_bytes = 0;  // the bytes that phase expected in all, once completed
    bool spent = false;
  };
  struct Mbar {
    std::uint32_t buf = 0;
    std::int64_t byte = 0;
    bool valid = false, invalidated = false;
    std::uint32_t expected = 0, pending = 0;
    std::int64_t tx = 0, tx_expected = 0, tx_done = 0;  // tx-count; bytes expected and completed this phase
    std::uint64_t phase = 0;
    std::uint32_t init_thread = 0, init_pc = 0;
    std::vector<std::uint32_t> clock, done;   // w_ wide or shorter (missing entries are 0)
    std::vector<std::int64_t> arrived;        // per thread: the last phase it arrived in (-1: never)
    std::vector<std::uint32_t> waiters;       // threads blocked in a retry loop on it
    std::uint32_t init_clock = 0;             // the init thread's own clock at mbarrier.init
    // The arrive groups of the recent phases (machine_mbarrier_rules.cpp):
    // (warp, pc, the lanes' syncs completed, their visits to pc) -> group.
    std::map<std::array<std::uint32_t, 4>, ArriveGroup> groups;
    // The asynchronous arrive-ons of cp.async.mbarrier.arrive.noinc: (phase it counted in, the
    // copies' agent); an arrival not ordered after the copies must not land in a later phase.
    std::vector<std::pair<std::uint64_t, std::uint32_t>> async_arrivals;
    // What each operation on it showed of its phase, for the parity waits'
    // check (machine_mbarrier_phases.cpp): oldest first, those of the last
    // two phases only.
    std::vector<PhaseMark> marks;
    std::vector<MbarExpect> expects;  // each thread's latest expect-tx on it
  };
  // An asynchronous copy's identity for the race check: vector-clock column
  // n_ + its index. The issuing thread and instruction name it in reports.
  struct Agent {
    std::uint32_t thread = 0, pc = 0;
    bool write = false;
    // A copy whose bytes counted against a later phase than its thread's
    // expect-tx announced them for (mbar_excess): the text its race
    // reports add.
    std::string excess;
  };
  // A store's agents in its thread's bulk async-group (cp.async.bulk.commit_group).
  struct BulkOp {
    std::uint32_t read_agent = kNone, write_agent = kNone;
  };
  struct BulkGroups {
    std::vector<BulkOp> open;
    std::deque<std::vector<BulkOp>> committed;  // oldest first
    std::size_t read_done = 0;                   // the oldest groups whose reads a wait_group.read retired
  };
  Mbar& mbar_of(std::uint32_t t, const Operand& o, bool init) { return mbar_at(t, address(t, o), init); }
  Mbar& mbar_at(std::uint32_t t, const Addr& a, bool init);
  std::string mbar_name(const Mbar& b) const;
  void mbar_access(std::uint32_t t, const Mbar& b, bool init_or_inval);
  void mbar_release(std::uint32_t t, Mbar& b);
  void mbar_complete(Mbar& b, std::uint32_t bar);
  // The rules GPUs enforce beyond the ISA's arithmetic (machine_mbarrier_rules.cpp):
  // a converged warp's arrives land as one arrival, which must not exceed
  // the phase's pending count; mbarrier.init is fenced before the async
  // proxy uses the barrier.
  void arrive_group(std::uint32_t t, Mbar& b, std::int64_t count);
  void prune_arrive_groups(Mbar& b);
  [[noreturn]] void mbar_overshoot(std::uint32_t t, const Mbar& b, const std::string& what);
  void mbar_init_fence(std::uint32_t t);
  void check_init_fenced(std::uint32_t t, Mbar& b);
  void mbar_init_publish(std::uint32_t t, std::uint64_t phase);
  void mbar_init_observe(std::uint32_t t, std::uint64_t phase);
  bool mbar_init_published(std::uint32_t t, const Mbar& b) const;
  void mbar_complete_tx(std::uint32_t agent, Mbar& b, std::uint32_t bar, std::int64_t bytes);
  void mbar_expect(std::uint32_t t, Mbar& b, std::uint32_t pc);
  void mbar_excess(std::uint32_t agent, Mbar& b, const MbarExpect& e, std::int64_t bytes);
  bool tx_excess_noted_ = false;  // the note on a copy's bytes counted against a later phase was made
  bool mbar_ready(std::uint32_t t, const Instr& in, const Mbar& b, std::uint64_t* want);
  void mbar_acquire(std::uint32_t t, const Mbar& b);
  bool mbar_wait(std::uint32_t t, const Instr& in);
  // Which phases a parity wait can see (machine_mbarrier_phases.cpp):
  // mbar_mark records an operation of `who` (a thread, or a copy's agent) on
  // b, done when b was in phase `before`; check_parity_wait reports a retry
  // loop's wait whose outcome the schedule decides.
  void mbar_mark(std::uint32_t who, std::uint32_t clock, Mbar& b, std::uint64_t before, std::uint32_t pc);
  void check_parity_wait(std::uint32_t t, const Instr& in, const Mbar& b);
  bool retry_wait(std::uint32_t pc);
  // cp.async.mbarrier.arrive, timers and nanosleep (machine_async.cpp): the
  // forms libcu++'s cuda::barrier / cuda::pipeline compile to.
  void cp_async_mbar_arrive(std::uint32_t t, const Instr& in);
  void check_async_arrivals(std::uint32_t t, Mbar& b);
  void check_copy_issue(std::uint32_t t, Memory<V>& m, std::size_t c, std::uint32_t pc);
  void timer_read(std::uint32_t t, const Instr& in);
  [[noreturn]] void timer_reaches(std::uint32_t t, std::uint32_t timer_pc, const std::string& what);
  void retry_resume(std::uint32_t t, std::uint32_t wait_pc);
  void cluster_bar(std::uint32_t t, const Instr& in, bool* waits);
  bool release_cluster_wait(std::uint32_t t);
  std::uint32_t new_agent(std::uint32_t t, bool write);
  void agent_access(std::uint32_t a, Memory<V>& m, std::size_t c, bool write, bool async_read_of_shared);
  void check_mbar(std::uint32_t t, Memory<V>& m, std::size_t c, std::uint32_t pc, const Mbar* published = nullptr);
  void tma(std::uint32_t t, const Instr& in);
  void tma_load_box(std::uint32_t t, const TensorMap& mp, std::uint32_t tbuf, const std::vector<std::uint64_t>& stride,
                    const std::vector<std::int64_t>& coord, const Addr& s, unsigned span, std::uint32_t ra,
                    std::uint32_t gaff);
  void bulk_copy(std::uint32_t t, const Instr& in);
  void bulk_wait(std::uint32_t t, const Instr& in);
  const TensorMap& tensor_map_of(std::uint32_t t, const Operand& o, std::uint32_t* tensor_buf, std::string* name,
                                 Addr* at = nullptr);
  void async_proxy_fence(std::uint32_t t);
  // Deadlock reports: the line for threads blocked on barrier `bar` (an
  // mbarrier index; kNone: barrier.cluster.wait), and the threads they wait for.
  std::string async_wait_text(std::uint32_t pc, std::uint32_t bar, const std::vector<std::uint32_t>& threads,
                              std::vector<std::uint32_t>* needs, std::string* summary);
  std::uint32_t mbar_waiting_on(std::uint32_t t) const;
  // A plain access (or a copy) touching the bytes of an mbarrier in use or
  // of a tensor map (Memory::pending's marks): unsupported.
  [[noreturn]] void special_cell(std::uint32_t t, Memory<V>& m, std::size_t c, Access kind, std::uint32_t pc);
  // Race reports: an access's name ("TMA write" for an agent's) and the
  // lines that explain an asynchronous copy's part in a race.
  std::string async_access_name(Access k, std::uint32_t pc) const;
  std::string async_race_detail(Access a, std::uint32_t apc, Access b, std::uint32_t bpc,
                                std::uint32_t agent = kNone) const;
  bool any_running() const;
  // A run's async state, made at the first async instruction: programs
  // without one pay nothing (w_ stays n_).
  std::uint32_t w_ = 0;  // vector-clock width: n_ threads, then the agents' columns
  // The cluster shape: the launch's, or the kernel's .reqnctapercluster
  // when the launch gives none (machine_setup.cpp).
  Dim3 cluster_;
  std::vector<Agent> agents_;
  std::vector<Mbar> mbars_;
  std::map<std::pair<std::uint32_t, std::int64_t>, std::uint32_t> mbar_at_;  // (buf, byte) -> index into mbars_
  std::vector<BulkGroups> bulk_groups_;                                        // per thread, made on first use
  // Per thread: its own clock at its last fence.proxy.async (0: none), and
  // what it had synchronized with then (its clock row over the threads):
  // a generic-proxy write is visible to a later async-proxy access when
  // some proxy fence lies between them in happens-before order (PTX ISA,
  // "Memory Consistency Model", proxies): the writer's own fence after the
  // write, or, as Triton places it, a fence of the issuing thread after the
  // barrier that ordered the write before it (proxy_fenced). Empty until a
  // proxy fence runs. wgmma's shared-memory operands read through the
  // async proxy too.
  std::vector<std::uint32_t> async_proxy_fence_;
  std::vector<std::uint32_t> proxy_fence_seen_;  // n x n
  // Per thread: its own clock at its last fence.mbarrier_init (empty: none
  // ran), its completed syncs of any kind, and its visits to each
  // mbarrier.arrive ((thread << 32 | pc) -> count): what tells the lanes of
  // one converged arrive apart from the same instruction's next visit.
  std::vector<std::uint32_t> mbar_init_fence_;
  bool init_fence_noted_ = false;  // a missing init fence was noted (once a run)
  // fence.mbarrier_init published through a relaxed cluster arrive: per
  // cluster-barrier phase, (thread, its fence's clock); per (waiter << 32 |
  // initializing thread), the latest such fence the waiter's cluster waits
  // ordered it after (machine_mbarrier_rules.cpp).
  std::map<std::uint64_t, std::vector<std::pair<std::uint32_t, std::uint32_t>>> cluster_init_fences_;
  std::unordered_map<std::uint64_t, std::uint32_t> init_fence_seen_;
  std::vector<std::uint32_t> syncs_done_;
  std::unordered_map<std::uint64_t, std::uint32_t> arrive_visits_;
  bool proxy_fenced(std::uint32_t t, std::uint32_t u, std::uint32_t clock) const;
  std::vector<std::uint64_t> cluster_arrived_, cluster_waited_;  // per thread: barrier.cluster arrives and waits
  std::map<std::uint64_t, std::vector<std::uint32_t>> cluster_clock_;  // per cluster-barrier phase: the arrivals' join
  std::vector<std::uint8_t> retry_wait_;   // per pc: 0 unknown, 1 a retry loop's wait, 2 not one
  // Per retry loop's wait: the registers its spins write, other than those
  // of the loop head they recompute alike each time (a spin counter, a timer
  // difference): the thread resumes with them marked as the schedule's; and
  // the loop head's instructions (the barrier's address), which it runs
  // again on resuming, as its last spin did (retry_resume).
  std::map<std::uint32_t, std::vector<std::uint32_t>> retry_clobbers_, retry_heads_;
  std::vector<std::uint8_t> async_noted_;  // per pc: a warning note was made
  std::vector<std::uint32_t> map_desc_buf_;    // per parameter: the memory of a tensor map's descriptor (kNone: none)
  std::vector<std::uint32_t> map_tensor_buf_;  // per parameter: the memory of a tensor map's tensor (kNone: none)
  std::vector<std::uint32_t> struct_buf_;      // per parameter: the memory of a by-value struct (kNone: none)
  std::vector<std::uint32_t> map_array_buf_;   // per parameter: the global buffer of `const CUtensorMap*` maps (kNone: none)
  std::vector<std::uint32_t> field_tensor_buf_;  // tensors made for maps and struct fields (collected as outputs)
  // A tensor map inside a struct parameter, or in a map array's buffer: TMA
  // names it by its address.
  struct StructMap {
    std::uint32_t buf, offset, tensor_buf;
    const TensorMap* map;
    std::string name;
  };
  std::vector<StructMap> struct_maps_;

  // ------------------------------------------------------------ clusters
  // Distributed shared memory and mapa (machine_cluster.cpp).
  std::uint32_t rank_copy(std::uint32_t buf, std::uint32_t r) const;  // buf's copy in CTA rank r
  void remote_access(std::uint32_t t, const Operand& o, std::uint32_t r);
  void record_remote(std::uint32_t col, std::uint32_t r, std::uint32_t pc);
  void check_remote_exits();
  void mapa(std::uint32_t t, const Instr& in);
  // The shared window's tag of CTA rank r's shared memory in a
  // .shared::cluster address (bits 24 and up: rank + 1; 0: the executing
  // CTA's own, the .shared::cta window).
  static constexpr unsigned kRankShift = 24;

  // ------------------------------------------------------------ wmma
  // wmma.load, wmma.mma and wmma.store (machine_warp.cpp).
  static void wmma_dims(WmmaShape s, int* m, int* n, int* k);
  static std::pair<int, int> wmma_matrix(const Instr& in);
  std::pair<Addr, std::int64_t> wmma_address(const Instr& in, const std::vector<std::uint32_t>& group, int rows,
                                             int cols);
  static std::size_t wmma_offset(const Instr& in, int r, int c, std::int64_t ld);
  V read_float(std::uint32_t t, Memory<V>& m, std::size_t c, std::size_t width, DType ty);
  static int slots_per_reg(DType t);
  void set_fragment(std::uint32_t t, const decltype(Instr::dst)& regs, const std::vector<V>& slots, int per);
  void wmma_load(const Instr& in, const std::vector<std::uint32_t>& group);
  void wmma_mma(const Instr& in, const std::vector<std::uint32_t>& group);
  void wmma_store(const Instr& in, const std::vector<std::uint32_t>& group);

  // ------------------------------------------------------------ results
  // The output tensors and touch records (run_program.cpp).
  void collect(RunResult<D>& r);

  const Program& p_;
  const Launch& l_;
  D& d_;
  RunOptions o_;
  CtaAffineLog* aff_;  // o_.cta_affine until the log breaks, then null
  std::uint32_t n_ = 0, r_ = 0;
  std::vector<Val<V>> regs_;
  // The domain value of each float immediate of the program, made on first
  // use: a loop body's constants are otherwise rebuilt (for the symbolic
  // domain: a Rational and a hash lookup) on every iteration of every thread.
  std::vector<V> constant_values_;
  std::vector<char> constant_made_;
  std::vector<TState> state_;
  std::vector<std::uint32_t> pc_;
  std::vector<std::uint32_t> vc_;  // n x w_ vector clocks (w_ = n_ unless async copies add columns)
  std::vector<Memory<V>> mem_;
  std::vector<std::uint32_t> param_buf_, decl_buf_;
  // Clusters (machine_cluster.cpp): threads per CTA and CTAs in the run,
  // each rank's CTA (blockIdx), per rank and declaration its buffer, per
  // buffer the rank of a shared copy (kNone: a buffer of the whole run).
  std::uint32_t nb_ = 1, ncta_ = 1;
  std::vector<Dim3> cta_of_rank_;
  // How reports name threads: by number, or in a cluster by CTA and number.
  ThreadNames names_;
  std::string tname(std::uint32_t t) const { return names_.one(t); }
  std::vector<std::uint32_t> rank_buf_, buf_rank_;
  struct CopyRank {
    std::uint32_t buf, rank, decl;
  };
  std::vector<CopyRank> copy_ranks_;
  // Per rank, per vector-clock column (a thread or an agent): 1 + the
  // clock of its last access to that CTA's shared memory from outside it,
  // and the access's pc; checked against the CTA's exit (check_remote_exits).
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> remote_;
  std::vector<std::vector<ReadEpoch>> read_sets_;  // Epochs::set: sorted by column
  std::vector<std::int32_t> free_sets_;
  std::vector<std::vector<WriteEpoch>> write_sets_;  // Shadow::w_more
  std::vector<std::vector<AtomicEpoch>> atomic_kinds_;  // Shadow::kinds
  std::vector<std::int32_t> free_kinds_;
  std::vector<Val<V>> atomic_values_;  // AtomicEpoch::values
  std::vector<std::int32_t> free_write_sets_;
  std::vector<Diagnostic> notes_;  // RunResult::notes
  RunStats stats_;
  std::uint64_t budget_ = UINT64_MAX, bytes_ = 0;  // the memory budget, and what reserve() counted
  std::uint64_t paged_bytes_ = 0;                   // the pages of tensors' cells and shadows made so far
  std::vector<std::uint8_t> way_out_;  // per pc: some path leads to an exit (made at the first backward branch)
  std::optional<Diagnostic> uninitialized_;  // the first read of unwritten memory
  std::vector<std::uint64_t> arrival_;        // when each thread reached its current barrier
  // Warp-sync bookkeeping (machine_schedule.cpp, sized by schedule()): the
  // member mask each waiting thread named, and per thread and kind of
  // masked sync (bar.warp.sync, shfl, vote, redux) its last completed one:
  // its pc and mask, and the lanes it has synchronized with since (through
  // any sync), which tells a lane that exited after a sync without us.
  struct LastSync {
    std::uint32_t pc = kNone, mask = 0, with = 0;
  };
  std::vector<std::uint32_t> wait_mask_;
  std::vector<LastSync> last_sync_;          // 4 per thread
  std::vector<std::uint32_t> exit_pc_;       // the ret each exited thread executed (kNone: the kernel's end)
  std::vector<std::uint8_t> divergence_noted_;  // per pc: a barrier divergence note was made
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
  // Where undefined values arose: pc of a shuffle that read outside its mask
  // or an exited lane, or of an instruction that read a register never
  // written -> what happened ("in a shuffle, lane 3 read lane 5, which ...").
  std::map<std::uint32_t, std::string> undefined_why_;
  std::set<std::uint32_t> opaque_pcs_;  // where a %reserved_smem_offset register was read
  std::uint32_t collective_sched_ = 0;  // the schedule mark of what the running collective read
  std::vector<AsyncCopy<V>> copies_;                               // every cp.async element issued; ids are index + 1
  std::vector<std::vector<std::uint32_t>> open_copies_;           // per thread: copies not yet committed to a group
  std::vector<std::deque<std::vector<std::uint32_t>>> copy_groups_;  // per thread: committed groups, oldest first
};

}  // namespace tileverify::machine

#include "machine_inline.hpp"
