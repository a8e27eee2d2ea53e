// tileverify/program.hpp — the structured-CTA program model.
//
// Contract: a Program is one copy of a kernel's code, executed by every thread
// of a CTA: typed virtual registers, arithmetic, loads and stores to buffers
// addressed as (buffer, byte offset), branches under per-thread predicates,
// and synchronizing operations over thread sets (CTA barriers, warp barriers,
// shuffles, votes, matrix fragments). It knows nothing of PTX syntax: the PTX
// frontend is one producer, ProgramBuilder another, and compiler backends can
// build Programs directly. Semantics are given by tileverify/eval.hpp.
#pragma once

#include "tileverify/expr.hpp"
#include "tileverify/rational.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tileverify {

enum class DType : std::uint8_t { Pred, S8, U8, S16, U16, S32, U32, S64, U64, F16, BF16, F32, F64, B8, B16, B32, B64 };
std::size_t dtype_bytes(DType t);
bool dtype_is_float(DType t);
bool dtype_is_signed(DType t);
const char* dtype_name(DType t);

// Const: read-only data the module itself initializes (.const tables, and
// initialized .global arrays, which are writable but start with known values).
enum class Space : std::uint8_t { Global, Shared, Local, Param, Const };
const char* space_name(Space s);

enum class Role : std::uint8_t { In, Out, InOut, Scratch };

// An immutable string whose copies share one buffer. Every instruction of a
// program, and every operand of a parsed PTX file, names the same file: as a
// std::string, each copy of a long path was a heap allocation (most of the
// cost of reading a small kernel). It reads as a const std::string (it
// converts to one, and has the common members and operators), but can only
// be replaced as a whole. Copies may be made and dropped from several
// threads at once (the count is atomic).
class SharedString {
 public:
  SharedString() noexcept = default;
  SharedString(const std::string& s) : bits_(s.empty() ? 0 : bits_of(new Rep{{1}, s})) {}
  SharedString(std::string&& s) : bits_(s.empty() ? 0 : bits_of(new Rep{{1}, std::move(s)})) {}
  SharedString(const char* s) : SharedString(std::string(s)) {}
  SharedString(const SharedString& o) noexcept : bits_(o.bits_) { retain(); }
  SharedString(SharedString&& o) noexcept : bits_(o.bits_) { o.bits_ = 0; }
  SharedString& operator=(const SharedString& o) noexcept {
    o.retain();
    release();
    bits_ = o.bits_;
    return *this;
  }
  SharedString& operator=(SharedString&& o) noexcept {
    if (this != &o) {
      release();
      bits_ = o.bits_;
      o.bits_ = 0;
    }
    return *this;
  }
  ~SharedString() { release(); }

  // s, kept until the process ends, so that copies of it count nothing: even
  // uncontended, the atomic count of each copy made and dropped was a good
  // part of parsing a file whose path all its instructions share. For such
  // strings, of which a process sees few (file paths). Past a few thousand
  // distinct strings, it returns a counted copy instead, so that a process
  // that reads ever new files does not keep ever more of them.
  static SharedString interned(const std::string& s);

  const std::string& str() const noexcept { return bits_ ? rep()->text : empty_string(); }
  operator const std::string&() const noexcept { return str(); }
  bool empty() const noexcept { return bits_ == 0; }
  std::size_t size() const noexcept { return str().size(); }
  std::size_t length() const noexcept { return str().size(); }
  const char* c_str() const noexcept { return str().c_str(); }
  const char* data() const noexcept { return str().data(); }
  char operator[](std::size_t i) const { return str()[i]; }
  std::string::const_iterator begin() const noexcept { return str().begin(); }
  std::string::const_iterator end() const noexcept { return str().end(); }
  template <class... A>
  std::size_t find(A&&... a) const {
    return str().find(std::forward<A>(a)...);
  }
  template <class... A>
  std::size_t rfind(A&&... a) const {
    return str().rfind(std::forward<A>(a)...);
  }
  std::string substr(std::size_t pos = 0, std::size_t n = std::string::npos) const { return str().substr(pos, n); }
  // Whether both share one buffer: then they are equal without a comparison.
  bool same_buffer(const SharedString& o) const noexcept { return bits_ == o.bits_; }

 private:
  struct Rep {
    std::atomic<std::size_t> refs;
    std::string text;
  };
  // The Rep's address; its low bit set: interned (no count).
  static constexpr std::uintptr_t kInterned = 1;
  static std::uintptr_t bits_of(Rep* r) noexcept { return reinterpret_cast<std::uintptr_t>(r); }
  Rep* rep() const noexcept { return reinterpret_cast<Rep*>(bits_ & ~kInterned); }
  bool counted() const noexcept { return bits_ != 0 && (bits_ & kInterned) == 0; }
  void retain() const noexcept {
    if (counted()) rep()->refs.fetch_add(1, std::memory_order_relaxed);
  }
  void release() noexcept {
    if (counted()) drop();
    bits_ = 0;
  }
  void drop() noexcept {
    // A sole owner needs no atomic read-modify-write: no other thread can
    // be copying a string that only this one holds.
    if (rep()->refs.load(std::memory_order_acquire) == 1 || rep()->refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
      delete rep();
  }
  static const std::string& empty_string() noexcept;
  std::uintptr_t bits_ = 0;  // 0: the empty string
};

inline bool operator==(const SharedString& a, const SharedString& b) { return a.same_buffer(b) || a.str() == b.str(); }
inline bool operator==(const SharedString& a, const std::string& b) { return a.str() == b; }
inline bool operator==(const std::string& a, const SharedString& b) { return a == b.str(); }
inline bool operator==(const SharedString& a, const char* b) { return a.str() == b; }
inline bool operator==(const char* a, const SharedString& b) { return a == b.str(); }
inline bool operator!=(const SharedString& a, const SharedString& b) { return !(a == b); }
inline bool operator!=(const SharedString& a, const std::string& b) { return !(a == b); }
inline bool operator!=(const std::string& a, const SharedString& b) { return !(a == b); }
inline bool operator!=(const SharedString& a, const char* b) { return !(a == b); }
inline bool operator!=(const char* a, const SharedString& b) { return !(a == b); }
inline bool operator<(const SharedString& a, const SharedString& b) { return a.str() < b.str(); }
inline std::string operator+(const SharedString& a, const std::string& b) { return a.str() + b; }
inline std::string operator+(const std::string& a, const SharedString& b) { return a + b.str(); }
inline std::string operator+(const SharedString& a, const char* b) { return a.str() + b; }
inline std::string operator+(const char* a, const SharedString& b) { return a + b.str(); }
inline std::string operator+(const SharedString& a, char b) { return a.str() + b; }
inline std::string operator+(char a, const SharedString& b) { return a + b.str(); }
std::ostream& operator<<(std::ostream& os, const SharedString& s);

// A place in the source the program came from (a PTX file, or a builder call site).
struct SourceLoc {
  SharedString file;
  std::uint32_t line = 0;
  std::uint32_t column = 0;
  // The CUDA source line this place was compiled from, "k.cu:31", when the
  // PTX carries it (.loc debug info: nvcc -lineinfo or -G); empty otherwise.
  SharedString source = {};
  std::string text() const;         // "file:line:column", or "instruction N" when unknown
  std::string with_source() const;  // text() and, when known, " (k.cu:31)"
};

// The cluster registers (sm_90) follow the launch's cluster shape
// (Launch::cluster; 1x1x1 when the kernel is not launched as clusters, where
// every CTA is a cluster of one, as the PTX ISA defines them then).
enum class Special : std::uint8_t {
  TidX, TidY, TidZ, NtidX, NtidY, NtidZ, CtaidX, CtaidY, CtaidZ, NctaidX, NctaidY, NctaidZ, LaneId, WarpId,
  ClusterCtaidX, ClusterCtaidY, ClusterCtaidZ,     // %cluster_ctaid: this CTA's place in its cluster
  ClusterNctaidX, ClusterNctaidY, ClusterNctaidZ,  // %cluster_nctaid: the cluster's shape
  ClusterCtarank, ClusterNctarank,                 // %cluster_ctarank, %cluster_nctarank
  ClusteridX, ClusteridY, ClusteridZ,              // %clusterid: the cluster's place in the grid
  NclusteridX, NclusteridY, NclusteridZ,           // %nclusterid: the grid's shape in clusters
  IsExplicitCluster,                               // %is_explicit_cluster
  ReservedSmem,  // %reserved_smem_offset_*: an opaque value, reported where it is used
};

// A buffer the program declares itself (.shared / .local arrays).
struct BufferDecl {
  std::string name;
  Space space = Space::Shared;
  DType dtype = DType::F32;
  std::uint64_t elements = 0;
  // Initial contents, little-endian bytes (empty: none; reads before a write
  // are uninitialized). PTX module data (.const tables, initialized .global
  // arrays) comes with its values.
  std::vector<std::uint8_t> init = {};
  bool read_only = false;  // .const: a write is an error
  // .const data without an initializer: the host fills it (cudaMemcpyToSymbol),
  // so a launch must give it (Launch::symbols).
  bool from_host = false;
};

// A kernel parameter: a pointer (bound to a tensor at launch) or a scalar.
struct ParamDecl {
  std::string name;
  DType dtype = DType::U64;
  bool pointer = false;
  // .param .b8 name[N]: a by-value array of N bytes (a CUtensorMap is 128); 0: a scalar or pointer.
  std::uint32_t array_bytes = 0;
};

struct Operand {
  enum class Kind : std::uint8_t { None, Reg, Int, Float, Special, Buffer, Param };
  Kind kind = Kind::None;
  std::uint32_t index = 0;  // register, special, buffer, param, or constant-table index (Float)
  std::int64_t imm = 0;     // Int immediate; for Reg/Buffer/Param used as an address: byte offset
  static Operand reg(std::uint32_t r, std::int64_t offset = 0) { return {Kind::Reg, r, offset}; }
  static Operand integer(std::int64_t v) { return {Kind::Int, 0, v}; }
  static Operand special(Special s) { return {Kind::Special, std::uint32_t(s), 0}; }
  static Operand buffer(std::uint32_t b, std::int64_t offset = 0) { return {Kind::Buffer, b, offset}; }
  static Operand param(std::uint32_t p, std::int64_t offset = 0) { return {Kind::Param, p, offset}; }
};

enum class Opcode : std::uint8_t {
  // data movement and conversion
  Mov, Cvt, Selp,
  // integer and float arithmetic (type decides which)
  Add, Sub, Mul, MulHi, MulWide, Mad, MadWide, Fma, Div, Rem, Min, Max, Neg, Abs,
  And, Or, Xor, Not, Shl, Shr,
  Rcp, Sqrt, Rsqrt, Ex2, Exp, Lg2, Tanh,
  // The real functions ln, ln(1 + x) and erf: what nvcc 13 inlines for logf,
  // log1pf and erff, recognised whole by the lowering (src/ptx/lower_math.cpp).
  Log, Log1p, Erf,
  Setp,
  // memory
  Ld, St,
  // control
  Bra, Ret,
  // synchronization and warp collectives
  Bar, WarpSync, Shfl, Vote, Mma, LdMatrix,
  // bit fields (integer): bfi d, a, b, pos, len inserts a's low len bits into b at pos;
  // bfe d, a, pos, len extracts them (sign-extended for signed types)
  Bfi, Bfe,
  // atom.{op} d, [a], v / red.{op} [a], v (no dst): read-modify-write of one
  // element; mode is the AtomOp; atom.cas d, [a], cmp, new has both in src.
  // Atomics that commute never race with each other, only with plain
  // accesses (see docs/evaluator.md). shape 1: a compare-and-swap loop the
  // lowering read as this one read-modify-write (its source line is the CAS).
  Atom,
  // cp.async [dst], [src], cp_size[, src_size]: reads src now, writes the
  // shared dst when a wait retires the copy's group. CpAsyncWait src[0] is N
  // (wait until at most N groups are pending); mode 1: wait_all.
  CpAsync, CpAsyncCommit, CpAsyncWait,
  // wmma.load.{a,b,c} frag, [p], stride / wmma.mma d, a, b, c /
  // wmma.store.d [p], frag, stride: warp collectives over 16x16-style tiles.
  WmmaLoad, WmmaMma, WmmaStore,
  // trap (PTX trap; __trap()) and a failed assert() (a call to the CUDA
  // runtime's __assertfail, mode 1, src: the message, file, line and function
  // arguments as given): executing it stops the run with DiagKind::Trap.
  Trap,
  // redux.sync.{op} d, a, membermask: every member gets the op (an AtomOp in
  // mode: add, min, max, and, or, xor) over all members' a.
  Redux,
  // membar / fence (every form, fence.proxy.* included): no operands, and
  // nothing to do. A fence orders memory only together with synchronizing
  // (release/acquire) accesses, which the structured-CTA class has none of,
  // so it adds no happens-before edge (docs/evaluator.md, "Fences"). Kept
  // so that listings and reports show it. mode: a FenceKind (the proxy
  // fences matter to the asynchronous model: TMA reads shared memory through
  // the async proxy).
  Fence,
  // ---- Hopper (sm_90) asynchronous operations (PTX ISA 8.x, "Parallel
  // Synchronization and Communication Instructions: mbarrier", "Data
  // Movement and Conversion Instructions: cp.async.bulk{,.tensor}",
  // "Warpgroup MMA Instructions"). An mbarrier is an 8-byte object in shared
  // memory; its address is src[0] of every mbarrier instruction.
  //
  // mbarrier.init [a], count: src {a, count}.
  MbarInit,
  // mbarrier.arrive{.expect_tx}{.release}{.cta,.cluster}{.shared::cta,::cluster}.b64 state, [a]{, n}
  // and mbarrier.arrive_drop: dst {state} (empty for the sink '_'); src {a, count, tx}: count
  // arrivals (the integer 1 when not given) after tx expected bytes (.expect_tx; else the
  // integer 0); mode: MbarArriveFlags.
  MbarArrive,
  // mbarrier.expect_tx (mode 0) / mbarrier.complete_tx (mode 1) [a], tx: src {a, tx}.
  MbarTx,
  // mbarrier.test_wait / try_wait{.parity} p, [a], state-or-parity{, hint}: dst {p};
  // src {a, state or phase parity}; mode: MbarWaitFlags.
  MbarWait,
  // mbarrier.inval [a]: src {a}.
  MbarInval,
  // cp.async.bulk.tensor.{1-5}d.shared::cluster.global{.tile}.mbarrier::complete_tx::bytes
  // {.multicast::cluster} [dst], [tmap, {c0, ..}], [mbar]{, ctaMask}: a TMA load.
  // src {dst, tmap, mbar, c0 .. c(n-1)[, ctaMask]}; mode: n (dims); shape: 1 with .multicast.
  TmaLoad,
  // cp.async.bulk.tensor.{1-5}d.global.shared::cta{.tile}.bulk_group [tmap, {c0, ..}], [src]:
  // a TMA store. src {tmap, src, c0 .. c(n-1)}; mode: n.
  TmaStore,
  // cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [mbar]
  // (space Shared: src {dst, src, size, mbar}) and
  // cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size (space Global: src {dst, src, size}).
  BulkCopy,
  // cp.async.bulk.commit_group; cp.async.bulk.wait_group{.read} N: src {N}, mode 1 with .read.
  BulkCommit, BulkWait,
  // elect.sync d|p, membermask: dst {d, p} (d: the elected lane; p: whether this lane is it;
  // either may be the sink, then dst holds kNoReg for it); src {membermask}. A masked warp sync.
  ElectSync,
  // barrier.cluster.arrive{.release}{.aligned} (mode 0) / barrier.cluster.wait{.acquire}{.aligned} (mode 1) /
  // barrier.cluster.arrive.relaxed{.aligned} (mode 2).
  ClusterBar,
  // mapa{.shared::cluster}.u32/u64 d, a, rank: the address a has in the shared memory of CTA rank.
  Mapa,
  // wgmma.fence / wgmma.commit_group / wgmma.wait_group N (src {N}) / wgmma.mma_async: warpgroup
  // collectives (.sync.aligned over the four warps of a warpgroup). WgmmaMma
  // (wgmma.mma_async.sync.aligned.m64nNkK.dtype.atype.btype d, a, b, scale-d, imm-scale-a,
  // imm-scale-b[, imm-trans-a][, imm-trans-b]): type: the accumulator's (F32, or F16 packed two
  // a register); src_type: the inputs' (F16, BF16, or F32 for .tf32); shape: N / 8; dst: the
  // accumulator registers d (read too, unless scale-d is false); src {a-desc, b-desc, scale-d}
  // or, with A in registers, {a0, a1, a2, a3, b-desc, scale-d} (scale-d: a predicate register or
  // an immediate); mode bits: 1 A in registers, 2 imm-trans-a, 4 imm-trans-b, 8 imm-scale-a = -1,
  // 16 imm-scale-b = -1 (src/ptx/lower_wgmma.cpp builds it, src/eval/machine_wgmma.cpp runs it).
  WgmmaFence, WgmmaCommit, WgmmaWait, WgmmaMma,
  // stmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16 [a], {r..}: a warp collective, the
  // inverse of ldmatrix. mode: 1, 2 or 4; trans; src {a, r0 ..}.
  StMatrix,
  // mov d, %clock / %clock_hi / %clock64 / %globaltimer{,_lo,_hi}: dst {d}; mode: the TimerKind.
  // The value is the schedule's (src/eval/machine_async.cpp): allowed where only a retry loop's
  // backoff reads it, unsupported where it reaches anything the kernel computes.
  Timer,
  // nanosleep.u32 t: src {t}. Suspends the thread for a while: no effect on what it computes.
  Nanosleep,
  // cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [a]: src {a}; mode 1 with .noinc. The
  // mbarrier tracks the thread's prior cp.async copies and gets an arrive-on when they complete.
  CpAsyncMbarArrive,
  // An instruction tileverify does not model, kept in place of it: a thread
  // that reaches it stops the run as DiagKind::Unsupported, with
  // Program::unsupported[src[0].imm]. So a bug found before it is reported,
  // and code no thread of the launch runs (a debug printf) does not matter.
  Unsupported,
};
const char* opcode_name(Opcode op);

// Instr::mode of a Timer: which special register it reads (PTX ISA, Special Registers).
enum class TimerKind : std::uint8_t { Clock, ClockHi, Clock64, GlobalTimer, GlobalTimerLo, GlobalTimerHi };

// Instr::mode of a Fence.
enum class FenceKind : std::uint8_t {
  Plain,        // membar, fence.{sc,acq_rel,...}.scope, fence.proxy.{alias,tensormap}
  ProxyAsync,   // fence.proxy.async{.shared::cta,.shared::cluster,.global}: orders the thread's
                // generic-proxy accesses with the async proxy (TMA, bulk copies, wgmma operands)
  MbarrierInit, // fence.mbarrier_init.release.cluster
  SetMaxNReg,   // setmaxnreg.{inc,dec}.sync.aligned.u32: a register-allocation hint, no effect on values
};
// Instr::mode bits of MbarArrive and MbarWait. kRelaxed: .relaxed (no
// release / acquire semantics; the default is .release / .acquire).
struct MbarArriveFlags {
  static constexpr std::uint8_t kDrop = 1, kExpectTx = 2, kRemote = 4, kNoComplete = 8, kRelaxed = 16;
};
struct MbarWaitFlags {
  static constexpr std::uint8_t kParity = 1, kTry = 2, kRelaxed = 4;
};
// A destination register that is the sink '_' (elect.sync's unused outputs).
constexpr std::uint32_t kNoReg = 0xffffffffu;

// A vector of trivially copyable elements that keeps up to N of them in
// itself: an instruction's destinations and sources were two heap blocks
// each (a third of the cost of lowering a PTX kernel, and again to free
// them). It has the vector members that Programs are built and read with,
// and is assigned from a std::vector or a {..} list.
template <class T, std::size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable<T>::value, "elements are copied as bytes");

 public:
  using value_type = T;
  using size_type = std::size_t;
  using reference = T&;
  using const_reference = const T&;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() noexcept = default;
  SmallVector(std::initializer_list<T> l) { assign(l.begin(), l.size()); }
  template <class A>
  SmallVector(const std::vector<T, A>& v) {
    assign(v.data(), v.size());
  }
  SmallVector(const SmallVector& o) { assign(o.data_, o.size_); }
  SmallVector(SmallVector&& o) noexcept { take(o); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) {
      size_ = 0;
      assign(o.data_, o.size_);
    }
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      free_heap();
      take(o);
    }
    return *this;
  }
  SmallVector& operator=(std::initializer_list<T> l) {
    size_ = 0;
    assign(l.begin(), l.size());
    return *this;
  }
  template <class A>
  SmallVector& operator=(const std::vector<T, A>& v) {
    size_ = 0;
    assign(v.data(), v.size());
    return *this;
  }
  ~SmallVector() { free_heap(); }

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  std::size_t capacity() const noexcept { return cap_; }
  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  T* begin() noexcept { return data_; }
  T* end() noexcept { return data_ + size_; }
  const T* begin() const noexcept { return data_; }
  const T* end() const noexcept { return data_ + size_; }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  T& at(std::size_t i) {
    if (i >= size_) throw std::out_of_range("SmallVector::at");
    return data_[i];
  }
  const T& at(std::size_t i) const {
    if (i >= size_) throw std::out_of_range("SmallVector::at");
    return data_[i];
  }
  T& front() noexcept { return data_[0]; }
  const T& front() const noexcept { return data_[0]; }
  T& back() noexcept { return data_[size_ - 1]; }
  const T& back() const noexcept { return data_[size_ - 1]; }

  void reserve(std::size_t n) {
    if (n > cap_) grow(n);
  }
  void push_back(const T& x) {
    if (size_ == cap_) {
      const T copy = x;  // x may be an element of this vector
      grow(2 * std::size_t(cap_));
      data_[size_++] = copy;
      return;
    }
    data_[size_++] = x;
  }
  template <class... A>
  T& emplace_back(A&&... a) {
    push_back(T{std::forward<A>(a)...});
    return back();
  }
  void pop_back() noexcept { --size_; }
  void clear() noexcept { size_ = 0; }
  void resize(std::size_t n, const T& x = T()) {
    reserve(n);
    for (std::size_t i = size_; i < n; ++i) data_[i] = x;
    size_ = std::uint32_t(n);
  }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    if (a.size_ != b.size_) return false;
    for (std::size_t i = 0; i < a.size_; ++i)
      if (!(a.data_[i] == b.data_[i])) return false;
    return true;
  }
  friend bool operator!=(const SmallVector& a, const SmallVector& b) { return !(a == b); }

 private:
  T* local() noexcept { return reinterpret_cast<T*>(local_); }
  bool on_heap() const noexcept { return cap_ > N; }
  void free_heap() noexcept {
    if (on_heap()) ::operator delete(data_);
    data_ = local();
    cap_ = N;
    size_ = 0;
  }
  // Appends n elements to an emptied vector.
  void assign(const T* from, std::size_t n) {
    reserve(n);
    if (n) std::memcpy(static_cast<void*>(data_), from, n * sizeof(T));
    size_ = std::uint32_t(n);
  }
  void take(SmallVector& o) noexcept {
    if (o.on_heap()) {
      data_ = o.data_;
      cap_ = o.cap_;
    } else if (o.size_) {
      std::memcpy(static_cast<void*>(local()), o.local(), o.size_ * sizeof(T));
    }
    size_ = o.size_;
    o.data_ = o.local();
    o.cap_ = N;
    o.size_ = 0;
  }
  void grow(std::size_t n) {
    T* d = static_cast<T*>(::operator new(n * sizeof(T)));
    if (size_) std::memcpy(static_cast<void*>(d), data_, size_ * sizeof(T));
    if (on_heap()) ::operator delete(data_);
    data_ = d;
    cap_ = std::uint32_t(n);
  }
  T* data_ = local();
  std::uint32_t size_ = 0, cap_ = N;
  alignas(T) unsigned char local_[N * sizeof(T)];
};

enum class ShflMode : std::uint8_t { Up, Down, Bfly, Idx };
enum class VoteMode : std::uint8_t { All, Any, Ballot };
enum class MmaShape : std::uint8_t { M16N8K8, M16N8K16 };
// Add .. Xor, Exch, Inc, Dec, Cas: the PTX operations. Mul: a compare-and-swap
// loop that multiplies (PTX has no atom.mul). Load: the relaxed read that
// starts a compare-and-swap loop, or ld.relaxed / ld.acquire there (it
// changes nothing; its value depends on the schedule).
enum class AtomOp : std::uint8_t { Add, Min, Max, And, Or, Xor, Exch, Inc, Dec, Cas, Mul, Load };
const char* atom_op_name(AtomOp op);
enum class WmmaShape : std::uint8_t { M16N16K16, M32N8K16, M8N32K16, M16N16K8 };
enum class WmmaMatrix : std::uint8_t { A, B, C };  // C: the accumulator (load.c, store.d)

struct Instr {
  Opcode op = Opcode::Mov;
  DType type = DType::B32;     // the operation's type (destination type for Cvt; a Cvt with two
                               // sources, cvt.{f16,bf16}x2.f32 d, a, b, packs b low and a high)
  DType src_type = DType::B32; // Cvt: source type; Mma: input (A/B) type
  Space space = Space::Global; // Ld/St/LdMatrix/Atom/CpAsync (destination)/Wmma
  Cmp cmp = Cmp::EQ;           // Setp
  std::uint8_t mode = 0;       // ShflMode / VoteMode / MmaShape / LdMatrix count (1, 2, 4) / AtomOp / WmmaMatrix /
                               // Cvt: 1 .relu / Trap: 1 a failed assert
  bool trans = false;          // LdMatrix .trans; WmmaLoad/WmmaStore: column-major memory layout
  std::uint8_t shape = 0;      // WmmaShape
  bool saturate = false;       // Cvt .sat: clamp a float to [0, 1]
  std::int32_t guard = -1;     // predicate register; -1: always
  bool guard_negated = false;
  // Ld/St/Atom: .shared::cluster, whose address may be in the shared memory
  // of another CTA of the cluster (mapa's result); a .shared::cta access
  // stays inside its own CTA.
  bool cluster_space = false;
  SmallVector<std::uint32_t, 4> dst;  // destination registers (vectors and fragments have several)
  SmallVector<Operand, 3> src;
  std::uint32_t target = 0;        // Bra: instruction index
  SourceLoc loc;
};

struct RegisterDecl {
  std::string name;
  DType dtype;
};

struct Program {
  std::string name;
  // The compute capability the code is for (PTX .target sm_86 -> 86), or 0
  // when unknown; it selects rules that changed between architectures
  // (warp syncs at different instructions synchronize from sm_70 on).
  unsigned sm = 0;
  // The kernel's .reqntid and .maxntid (all 0: not given): the block size it
  // must be launched with, and the largest it can be.
  std::array<std::uint32_t, 3> reqntid{}, maxntid{};
  // The kernel's .reqnctapercluster (all 0: not given): the cluster shape it
  // is compiled for (__cluster_dims__); a launch without one uses it.
  std::array<std::uint32_t, 3> reqnctapercluster{};
  std::vector<ParamDecl> params;
  std::vector<BufferDecl> buffers;  // declared by the program; tensors come from the launch
  std::vector<RegisterDecl> registers;
  std::vector<Rational> constants;  // float immediates
  std::vector<Instr> code;
  // Opcode::Unsupported: the PTX instruction as written, and why it is
  // outside what tileverify verifies (the instruction has the place).
  struct UnsupportedInstr {
    std::string text;
    std::string why;
  };
  std::vector<UnsupportedInstr> unsupported;
  // The first Opcode::Unsupported instruction in code order, or null.
  const Instr* first_unsupported() const;
  // Its entry of `unsupported`.
  const UnsupportedInstr& unsupported_of(const Instr& in) const { return unsupported.at(std::size_t(in.src.at(0).imm)); }
  // A readable listing, one instruction a line, for reports and debugging.
  std::string listing() const;
  std::string instr_text(std::uint32_t pc) const;
};

// Builds Programs in a few readable lines:
//   ProgramBuilder b("softmax");
//   auto x = b.param_pointer("x"), y = b.param_pointer("y");
//   auto buf = b.shared("buf", DType::F32, 4);
//   auto tid = b.reg(DType::U32);  b.mov(tid, Special::TidX);
//   auto v = b.reg(DType::F32);    b.load(v, x, tid);          // v = x[tid]
//   b.store(buf, tid, b.exp(v));                              // buf[tid] = exp(v)
//   b.bar();
// Reports name an instruction by its SourceLoc; call at() before emitting to
// give the next instructions one (a backend passes its own source positions).
class ProgramBuilder {
 public:
  struct Reg {
    std::uint32_t id = 0;
    DType type = DType::F32;
  };
  struct Label {
    std::uint32_t id = 0;
  };
  // Anything that designates memory: a pointer register, a pointer parameter, or a declared buffer.
  struct Mem {
    Operand base;
    DType elem;
  };

  explicit ProgramBuilder(std::string name);

  Mem param_pointer(const std::string& name, DType elem = DType::F32);
  Reg param_scalar(const std::string& name, DType type = DType::S32);  // loaded into a register
  Mem shared(const std::string& name, DType elem, std::uint64_t elements);
  Mem local(const std::string& name, DType elem, std::uint64_t elements);

  Reg reg(DType t);
  Reg imm(DType t, std::int64_t v);         // a register holding an integer constant
  Reg fimm(const Rational& v, DType t = DType::F32);
  Reg fbits(std::uint32_t bits);            // an f32 register from its bit pattern (0xFF800000: -inf)
  Reg special(Special s);                   // tid.x etc. as a U32 register

  // Generic emission.
  ProgramBuilder& emit(Instr in);
  ProgramBuilder& at(SourceLoc loc);        // location for the following instructions
  std::uint32_t size() const { return std::uint32_t(p_.code.size()); }

  // Arithmetic; the result type is the first operand's.
  void mov(Reg d, Reg a);
  void mov(Reg d, Special s);
  Reg add(Reg a, Reg b);
  Reg sub(Reg a, Reg b);
  Reg mul(Reg a, Reg b);
  Reg div(Reg a, Reg b);
  Reg fma(Reg a, Reg b, Reg c);
  Reg max(Reg a, Reg b);
  Reg min(Reg a, Reg b);
  Reg neg(Reg a);
  Reg exp(Reg a);
  Reg ex2(Reg a);
  Reg rcp(Reg a);
  Reg sqrt(Reg a);
  Reg shl(Reg a, Reg b);
  Reg shr(Reg a, Reg b);
  Reg and_(Reg a, Reg b);
  Reg xor_(Reg a, Reg b);
  Reg setp(Cmp c, Reg a, Reg b);           // a Pred register
  Reg selp(Reg p, Reg a, Reg b);           // p ? a : b
  Reg cvt(DType to, Reg a);
  // d = op(a, b) into an existing register (loops update accumulators).
  void assign(Opcode op, Reg d, Reg a, Reg b);

  // Memory: element `index` (a register) of `m`, with an extra element offset.
  void load(Reg d, Mem m, Reg index, std::int64_t extra_elements = 0);
  void store(Mem m, Reg index, Reg v, std::int64_t extra_elements = 0);
  void load_at(Reg d, Mem m, std::int64_t element);  // a constant element
  void store_at(Mem m, std::int64_t element, Reg v);

  // Control.
  Label label();
  void place(Label l);
  void bra(Label l);
  void bra_if(Reg pred, Label l, bool negated = false);
  void ret();

  // Synchronization and warp collectives.
  void bar(std::uint32_t id = 0, std::int64_t count = -1);  // count -1: all threads of the CTA
  void warp_sync(std::uint32_t mask = 0xffffffffu);
  Reg shfl(ShflMode mode, Reg v, Reg lane_or_delta, std::uint32_t c = 0x1f, std::uint32_t mask = 0xffffffffu);
  Reg vote(VoteMode mode, Reg pred, std::uint32_t mask = 0xffffffffu);
  Reg pack(Reg lo, Reg hi);  // two 16-bit values in one b32 register (mov.b32 d, {lo, hi})
  // mma.sync.aligned.{shape}.row.col.f32.{in}.{in}.f32: a, b are the A and B fragment
  // registers (packed pairs for f16/bf16), c the four f32 accumulators; returns D.
  std::vector<Reg> mma(MmaShape shape, DType in, const std::vector<Reg>& a, const std::vector<Reg>& b,
                       const std::vector<Reg>& c);
  // ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16: this lane's row address is
  // element `row_element` of m; returns one packed register per matrix.
  std::vector<Reg> ldmatrix(int num, bool trans, Mem m, Reg row_element);

  Program finish();  // resolves labels; throws std::logic_error on an unplaced label

 private:
  Operand address(Mem m, Reg index, std::int64_t extra_elements);
  Reg unary(Opcode op, Reg a);
  Reg binary(Opcode op, Reg a, Reg b);
  Program p_;
  std::vector<std::int64_t> label_pos_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> fixups_;  // (instr, label)
  SourceLoc next_loc_;
  bool has_loc_ = false;
};

}  // namespace tileverify
