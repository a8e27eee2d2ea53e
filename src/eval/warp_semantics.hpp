// PTX ISA semantics of warp collectives, as pure functions (internal).
//
// tileverify models a warp as 32 lanes evaluated side by side; the collectives
// below are where lanes see each other's values, so their exact data movement
// has to match the hardware or equivalent kernels would be told apart (or,
// worse, different kernels told equal).  Everything here is a transcription of
// the PTX ISA manual ("Parallel Thread Execution ISA", docs.nvidia.com/cuda/
// parallel-thread-execution).  Section numbers move between ISA versions
// (ldmatrix is 9.7.13.4.15 in 7.x, 9.7.14.5.15 in 8.x, 9.7.16.5.15 in 9.4),
// so each comment names the section by its title and its URL anchor.
//
// No state, no dependencies: every function is constexpr, so the layouts can
// also be checked at compile time.  Lanes are 0..31.  Arguments outside the
// documented ranges are the caller's bug; functions that can signal it return
// a sentinel ({-1, -1} or 0) rather than throw, to stay constexpr.
//
// tools/gpu_checks/warp_layouts.cu compares every function here with what an
// H100 (sm_90) actually does.
#pragma once

namespace tileverify::warp {

inline constexpr int kWarpSize = 32;

// ---------------------------------------------------------------------------
// shfl.sync
// ---------------------------------------------------------------------------
// PTX ISA "Data Movement and Conversion Instructions: shfl.sync" (anchor
// #data-movement-and-conversion-instructions-shfl-sync).  Its Semantics
// block, for `shfl.sync.mode.b32 d[|p], a, b, c, membermask;`, reads:
//
//   lane[4:0]  = [Thread].laneid;  // position of thread in warp
//   bval[4:0] = b[4:0];            // source lane or lane offset (0..31)
//   cval[4:0] = c[4:0];            // clamp value
//   segmask[4:0] = c[12:8];
//   ...
//   maxLane = (lane[4:0] & segmask[4:0]) | (cval[4:0] & ~segmask[4:0]);
//   minLane = (lane[4:0] & segmask[4:0]);
//   switch (.mode) {
//     case .up:    j = lane - bval; pval = (j >= maxLane); break;
//     case .down:  j = lane + bval; pval = (j <= maxLane); break;
//     case .bfly:  j = lane ^ bval; pval = (j <= maxLane); break;
//     case .idx:   j = minLane  | (bval[4:0] & ~segmask[4:0]);
//                                  pval = (j <= maxLane); break;
//   }
//   if (!pval) j = lane;  // copy from own lane
//   d = SourceA[j];       // copy input a from lane j
//   if (dest predicate selected) p = pval;
//
// Only b[4:0], c[4:0] and c[12:8] are read: "an out of range value of b may
// still result in a valid computed source lane index j" (e.g. b = 33 acts as
// b = 1).  For .up, "maxLane" is really a lower bound: with cval = 0 (what
// __shfl_up_sync passes) it is the first lane of the thread's segment.
//
// Undefined cases (same section): "results are undefined if a thread sources
// a register from an inactive thread or a thread that is not in membermask",
// and "the behavior of shfl.sync is undefined if the executing thread is not
// in the membermask".  shfl_source() does not see membermask; a checker must
// call shfl_source_in_mask() for every executing lane and treat `false` as an
// error (undefined value), never as "keeps its own value".
enum class ShflMode { Up, Down, Bfly, Idx };

struct ShflResult {
  int src_lane;  // lane whose `a` lands in d (the own lane when !pred)
  bool pred;     // the optional destination predicate p
};

// `lane` is taken mod 32, like lane[4:0] in the pseudo-code.
constexpr ShflResult shfl_source(ShflMode mode, int lane, unsigned b, unsigned c) {
  const int l = lane & 31;
  const int bval = static_cast<int>(b & 0x1fu);
  const int cval = static_cast<int>(c & 0x1fu);
  const int segmask = static_cast<int>((c >> 8) & 0x1fu);
  const int max_lane = (l & segmask) | (cval & ~segmask & 0x1f);
  const int min_lane = l & segmask;
  // j is a signed int on purpose: .up computes lane - bval, which must be
  // allowed to go negative so that `j >= maxLane` fails (lane 0 of
  // shfl.up by 1 keeps its own value on hardware; a 5-bit wraparound to 31
  // would not).  .down can reach 62, above any maxLane.
  int j = 0;
  bool p = false;
  switch (mode) {
    case ShflMode::Up:
      j = l - bval;
      p = j >= max_lane;
      break;
    case ShflMode::Down:
      j = l + bval;
      p = j <= max_lane;
      break;
    case ShflMode::Bfly:
      j = l ^ bval;
      p = j <= max_lane;
      break;
    case ShflMode::Idx:
      j = min_lane | (bval & ~segmask & 0x1f);
      p = j <= max_lane;
      break;
  }
  if (!p) j = l;
  return ShflResult{j, p};
}

// True when the value lane `lane` receives is defined as far as membermask
// goes: both the executing lane and its source lane are in membermask.  The
// caller must also know the source lane executed the same shfl.sync (is not
// exited / inactive); on sm_70+ every non-exited lane in membermask does, as
// shfl.sync waits for them ("wait_for_specified_threads(membermask)").
constexpr bool shfl_source_in_mask(ShflMode mode, int lane, unsigned b, unsigned c,
                                   unsigned membermask) {
  if (((membermask >> (lane & 31)) & 1u) == 0) return false;
  const ShflResult r = shfl_source(mode, lane, b, c);
  return ((membermask >> r.src_lane) & 1u) != 0;
}

// The c operand CUDA's __shfl_*_sync(mask, v, x, width) builds for a
// power-of-two width: segmask = ~(width-1) in bits 12:8, clamp 0 for up and
// width-1 (within the segment) otherwise.  Convenience for tests and callers
// that start from CUDA C++ rather than PTX.
constexpr unsigned shfl_c_for_width(ShflMode mode, int width) {
  const unsigned seg = static_cast<unsigned>(kWarpSize - width) << 8;
  return mode == ShflMode::Up ? seg : (seg | 0x1fu);
}

// ---------------------------------------------------------------------------
// vote.sync
// ---------------------------------------------------------------------------
// PTX ISA "Parallel Synchronization and Communication Instructions: vote.sync"
// (anchor #parallel-synchronization-and-communication-instructions-vote-sync):
//  - ballot: "copies the predicate from each thread in membermask into the
//    corresponding bit position of destination register d ... A thread not
//    specified in membermask will contribute a 0".
//  - .all: "True if source predicate is True for all non-exited threads in
//    membermask"; .any: "True if source predicate is True for some thread in
//    membermask"; .uni: same value in all non-exited threads in membermask.
//  - "The behavior of vote.sync is undefined if the executing thread is not in
//    the membermask."
// Lanes outside `mask` are never read.  Exited lanes: PTX only reduces over
// non-exited lanes, so a caller with exited lanes must pass
// mask & ~exited (their ballot bit is then 0, and they cannot falsify .all).
// The ISA text does not say what ballot puts in an exited lane's bit; an H100
// gives 0, matching this rule (tools/gpu_checks/warp_layouts.cu).
// Over an empty mask .all is vacuously true and .any false; that call is
// undefined anyway (the executing lane must be in the mask).
// preds_by_lane points to 32 predicates, indexed by lane.
constexpr unsigned vote_ballot(const bool* preds_by_lane, unsigned mask) {
  unsigned bits = 0;
  for (int l = 0; l < kWarpSize; ++l)
    if (((mask >> l) & 1u) != 0 && preds_by_lane[l]) bits |= 1u << l;
  return bits;
}

constexpr bool vote_all(const bool* preds_by_lane, unsigned mask) {
  return vote_ballot(preds_by_lane, mask) == mask;
}

constexpr bool vote_any(const bool* preds_by_lane, unsigned mask) {
  return vote_ballot(preds_by_lane, mask) != 0;
}

constexpr bool vote_uni(const bool* preds_by_lane, unsigned mask) {
  const unsigned bits = vote_ballot(preds_by_lane, mask);
  return bits == 0 || bits == mask;
}

// Whether the executing lane may call vote.sync / shfl.sync with this mask.
constexpr bool lane_in_mask(int lane, unsigned mask) {
  return ((mask >> (lane & 31)) & 1u) != 0;
}

// ---------------------------------------------------------------------------
// mma.sync fragments
// ---------------------------------------------------------------------------
// PTX ISA "Warp Level Matrix Multiply-Accumulate Instructions", sections
// "Matrix Fragments for mma.m16n8k8" (anchor #warp-level-matrix-fragment-
// mma-1688) and "Matrix Fragments for mma.m16n8k16 with floating point type"
// (#warp-level-matrix-fragment-mma-16816-float).  All of them use
//   groupID           = %laneid >> 2
//   threadID_in_group = %laneid % 4
// and number fragment elements "low to high": for .f16x2 registers register r
// holds element 2r in its low half and 2r+1 in its high half; .tf32 and .f32
// hold one element per .b32 register, element r in register r.
// A is MxK (row-major indices), B is KxN, C and D are MxN and share a layout.
// An .f16 C/D packs the same c0..c3 into two .f16x2 registers, with the same
// row/col formulas (Machine::mma reads and writes both).
enum class MmaShape { M16N8K8, M16N8K16 };
enum class MmaType { F16, BF16, TF32 };

struct RowCol {
  int row;
  int col;
};

constexpr bool operator==(RowCol a, RowCol b) { return a.row == b.row && a.col == b.col; }
constexpr bool operator!=(RowCol a, RowCol b) { return !(a == b); }

inline constexpr RowCol kNoCell{-1, -1};

constexpr int mma_m(MmaShape) { return 16; }
constexpr int mma_n(MmaShape) { return 8; }
constexpr int mma_k(MmaShape s) { return s == MmaShape::M16N8K8 ? 8 : 16; }

// mma.m16n8k16 exists for .f16/.bf16 but not .tf32 (tf32 has m16n8k4 and
// m16n8k8 only, PTX ISA "Warp-level MMA: mma" shape table).
constexpr bool mma_supported(MmaShape s, MmaType t) {
  return !(s == MmaShape::M16N8K16 && t == MmaType::TF32);
}

// Elements per thread: M*K/32, K*N/32, M*N/32.  0 for unsupported combos.
constexpr int mma_a_count(MmaShape s, MmaType t) {
  return mma_supported(s, t) ? mma_m(s) * mma_k(s) / kWarpSize : 0;
}
constexpr int mma_b_count(MmaShape s, MmaType t) {
  return mma_supported(s, t) ? mma_k(s) * mma_n(s) / kWarpSize : 0;
}
constexpr int mma_c_count(MmaShape s, MmaType t) {
  return mma_supported(s, t) ? mma_m(s) * mma_n(s) / kWarpSize : 0;
}
// Elements per .b32 register of the A/B fragments (2 for .f16x2, 1 for tf32).
constexpr int mma_ab_elems_per_reg(MmaType t) { return t == MmaType::TF32 ? 1 : 2; }

namespace detail {
constexpr bool frag_args_ok(MmaShape s, MmaType t, int lane, int i, int count) {
  return mma_supported(s, t) && lane >= 0 && lane < kWarpSize && i >= 0 && i < count;
}
}  // namespace detail

// Multiplicand A (row of M, col of K).
constexpr RowCol mma_a(MmaShape s, MmaType t, int lane, int i) {
  if (!detail::frag_args_ok(s, t, lane, i, mma_a_count(s, t))) return kNoCell;
  const int g = lane >> 2, tig = lane % 4;
  if (t == MmaType::TF32) {
    // m16n8k8 .tf32 (Figure "MMA .m16n8k8 fragment layout for matrix A with
    // .tf32 type"): row = groupID for a0,a2 / groupID+8 for a1,a3;
    // col = threadID_in_group for a0,a1 / +4 for a2,a3.  Note the order
    // differs from .f16: a1 is the row below a0, not the next column.
    return RowCol{g + 8 * (i & 1), tig + 4 * (i >> 1)};
  }
  if (s == MmaShape::M16N8K8) {
    // m16n8k8 .f16/.bf16: row = groupID for a0,a1 / groupID+8 for a2,a3;
    // col = threadID_in_group*2 + (i & 0x1).
    return RowCol{g + 8 * (i >> 1), tig * 2 + (i & 1)};
  }
  // m16n8k16 .f16/.bf16: row = groupID for 0 <= i < 2 || 4 <= i < 6, else
  // groupID+8; col = threadID_in_group*2 + (i & 0x1), +8 for i >= 4.
  return RowCol{g + 8 * ((i >> 1) & 1), tig * 2 + (i & 1) + 8 * (i >> 2)};
}

// Multiplicand B (row of K, col of N).
constexpr RowCol mma_b(MmaShape s, MmaType t, int lane, int i) {
  if (!detail::frag_args_ok(s, t, lane, i, mma_b_count(s, t))) return kNoCell;
  const int g = lane >> 2, tig = lane % 4;
  if (t == MmaType::TF32) {
    // m16n8k8 .tf32: row = threadID_in_group for b0, +4 for b1; col = groupID.
    return RowCol{tig + 4 * i, g};
  }
  // m16n8k8 .f16/.bf16: row = threadID_in_group*2 + i (i = 0, 1).
  // m16n8k16 .f16/.bf16: row = threadID_in_group*2 + (i & 0x1), +8 for
  // i >= 2.  Both: col = groupID.  (The k8 formula is the k16 one with i < 2.)
  return RowCol{tig * 2 + (i & 1) + 8 * (i >> 1), g};
}

// Accumulators C and D (row of M, col of N); the same for every input type
// and both shapes: row = groupID for c0,c1 / groupID+8 for c2,c3;
// col = threadID_in_group*2 + (i & 0x1).
constexpr RowCol mma_c(MmaShape s, MmaType t, int lane, int i) {
  if (!detail::frag_args_ok(s, t, lane, i, mma_c_count(s, t))) return kNoCell;
  const int g = lane >> 2, tig = lane % 4;
  return RowCol{g + 8 * (i >> 1), tig * 2 + (i & 1)};
}

// ---------------------------------------------------------------------------
// ldmatrix (.m8n8, .b16)
// ---------------------------------------------------------------------------
// PTX ISA "Warp-level matrix load instruction: ldmatrix" (anchor
// #warp-level-matrix-instructions-ldmatrix):
//  - "The eight addresses required for each matrix are provided by eight
//    threads ... Addresses addr0-addr7 correspond to the rows of the first
//    matrix, addresses addr8-addr15 correspond to the rows of the second
//    matrix, and so on", with threads 0-7 giving addr0-7, threads 8-15
//    addr8-15, ... (table per .num: .x1 uses threads 0-7, .x2 0-15, .x4
//    0-31; the addresses of the other threads are ignored, though for
//    sm_75 and below all threads must hold valid addresses).
//  - "Each thread in a warp loads fragments of a row, with thread 0 receiving
//    the first fragment in its register r ... A group of four threads loads
//    an entire row" (figure "ldmatrix fragment layout for one 8x8 matrix
//    with 16-bit elements"): thread `lane` gets
//    row lane>>2, columns 2*(lane%4) and 2*(lane%4)+1, the lower column in
//    the low 16 bits.  This is exactly the m16n8k* A/C fragment of one 8x8
//    quadrant, which is why ldmatrix.x4 feeds mma.m16n8k16 directly.
//  - "When .num = .x2, the elements of the second matrix are loaded in the
//    next destination register in each thread" (likewise the third and
//    fourth for .x4), so register q holds matrix q.
//  - ".trans indicates that the matrix is loaded in column-major format": the
//    thread receives the same fragment position of the transposed matrix.
// RowCol below is in the coordinates of the matrix as it sits in memory:
// `row` r is the 16-byte row whose address lane ldmatrix_address_lane(q, r)
// supplied, `col` is the b16 element within that row.
inline constexpr int kLdmatrixRows = 8;

// The lane that supplies the address of row `row` (0..7) of matrix q (0..3).
constexpr int ldmatrix_address_lane(int q, int row) {
  if (q < 0 || q > 3 || row < 0 || row >= kLdmatrixRows) return -1;
  return 8 * q + row;
}

// Element i (0 = low half, 1 = high half) of the register that receives one
// 8x8 matrix, for thread `lane`.
constexpr RowCol ldmatrix_element(int lane, int i, bool trans) {
  if (lane < 0 || lane >= kWarpSize || i < 0 || i > 1) return kNoCell;
  const int r = lane >> 2, c = 2 * (lane % 4) + i;
  return trans ? RowCol{c, r} : RowCol{r, c};
}

// Number of matrices (destination registers) for .x1/.x2/.x4 is 1/2/4; the
// lanes whose addresses are read are 0 .. 8*num-1.
constexpr bool ldmatrix_lane_supplies_address(int lane, int num) {
  return lane >= 0 && lane < 8 * num;
}

// ---------------------------------------------------------------------------
// wgmma (warpgroup MMA, sm_90a)
// ---------------------------------------------------------------------------
// PTX ISA "Asynchronous Warpgroup Level Matrix Multiply-Accumulate
// Instructions" (anchor #asynchronous-warpgroup-level-matrix-instructions):
// wgmma.mma_async computes D = A * B + D (or A * B when scale-d is false) for
// A: MxK (M = 64), B: KxN, D: MxN over a warpgroup of 128 threads, warp w of
// the warpgroup (its threads 32w .. 32w+31) holding rows 16w .. 16w+15 of A
// (from registers) and of D.  Lanes here are the thread's index within its
// warpgroup, 0..127.
//
// "Register Fragments and Shared Memory Matrix Layouts" (anchor
// #asynchronous-warpgroup-level-matrix-register-fragment): the accumulator D
// of .m64nNk* holds N/2 elements per thread (f32), d[i] at
//   row = 16 * warp + groupID + 8 * ((i >> 1) & 1)
//   col = 8 * (i >> 2) + 2 * threadID_in_group + (i & 1)
// i.e. the mma.m16n8 accumulator of the warp's 16 rows, repeated for each
// 8 columns; an .f16 accumulator packs d[2j], d[2j+1] in register j.  A in
// registers is the m16n8k16 (.f16/.bf16) or m16n8k8 (.tf32) A fragment of
// the warp's 16 rows.
inline constexpr int kWarpgroupSize = 128;

constexpr RowCol wgmma_d(int thread, int i) {
  if (thread < 0 || thread >= kWarpgroupSize || i < 0 || i >= 128) return kNoCell;
  const int w = thread / 32, lane = thread % 32, g = lane >> 2, tig = lane % 4;
  return RowCol{16 * w + g + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * tig + (i & 1)};
}

// Element i of A in registers (8 elements in four .f16x2/.bf16x2 registers,
// or 4 .tf32 ones): row of M, col of K.
constexpr RowCol wgmma_a_reg(int thread, int i, bool tf32) {
  if (thread < 0 || thread >= kWarpgroupSize) return kNoCell;
  const RowCol rc = tf32 ? mma_a(MmaShape::M16N8K8, MmaType::TF32, thread % 32, i)
                         : mma_a(MmaShape::M16N8K16, MmaType::F16, thread % 32, i);
  if (rc == kNoCell) return kNoCell;
  return RowCol{rc.row + 16 * (thread / 32), rc.col};
}

// "Matrix Descriptor Format" (anchor #asynchronous-warpgroup-level-matrix-
// shared-memory-layout-matrix-descriptor): a 64-bit descriptor of a matrix
// in shared memory.
//   bits 0-13:  matrix start address, (address & 0x3FFFF) >> 4
//   bits 16-29: leading dimension byte offset, >> 4
//   bits 32-45: stride dimension byte offset, >> 4
//   bits 49-51: matrix base offset (for a swizzle pattern that does not
//               start at its repeat boundary)
//   bits 62-63: swizzle mode: 0 none (interleave), 1 128B, 2 64B, 3 32B
enum class WgmmaSwizzle { None = 0, B128 = 1, B64 = 2, B32 = 3 };

struct WgmmaDesc {
  unsigned start = 0, lbo = 0, sbo = 0;  // bytes
  int base_offset = 0;
  WgmmaSwizzle swizzle = WgmmaSwizzle::None;
};

constexpr WgmmaDesc wgmma_decode(unsigned long long d) {
  WgmmaDesc r;
  r.start = static_cast<unsigned>(d & 0x3fffu) << 4;
  r.lbo = static_cast<unsigned>((d >> 16) & 0x3fffu) << 4;
  r.sbo = static_cast<unsigned>((d >> 32) & 0x3fffu) << 4;
  r.base_offset = static_cast<int>((d >> 49) & 7u);
  r.swizzle = static_cast<WgmmaSwizzle>((d >> 62) & 3u);
  return r;
}

constexpr unsigned long long wgmma_encode(const WgmmaDesc& d) {
  return (static_cast<unsigned long long>((d.start >> 4) & 0x3fffu)) |
         (static_cast<unsigned long long>((d.lbo >> 4) & 0x3fffu) << 16) |
         (static_cast<unsigned long long>((d.sbo >> 4) & 0x3fffu) << 32) |
         (static_cast<unsigned long long>(d.base_offset & 7) << 49) |
         (static_cast<unsigned long long>(d.swizzle) << 62);
}

// The bytes of one row of a swizzle atom (16 for no swizzle: a core
// matrix row).
constexpr int wgmma_swizzle_bytes(WgmmaSwizzle s) {
  return s == WgmmaSwizzle::B128 ? 128 : s == WgmmaSwizzle::B64 ? 64 : s == WgmmaSwizzle::B32 ? 32 : 16;
}

// The swizzle of a shared-memory byte address (section "Shared Memory Matrix
// Layout", the swizzling modes): the 16-byte chunk within a row of the atom
// (address bits 4..) is XORed with the row within the atom (bits 7..):
// 128B: bits 4-6 ^= bits 7-9 (repeats every 1024 bytes); 64B: bits 4-5 ^=
// bits 7-8 (512); 32B: bit 4 ^= bit 7 (256).  The address is the absolute
// one, so a pattern starting at its repeat boundary needs base offset 0.
constexpr unsigned wgmma_swizzle(WgmmaSwizzle s, unsigned a) {
  switch (s) {
    case WgmmaSwizzle::B128: return a ^ (((a >> 7) & 7u) << 4);
    case WgmmaSwizzle::B64: return a ^ (((a >> 7) & 3u) << 4);
    case WgmmaSwizzle::B32: return a ^ (((a >> 7) & 1u) << 4);
    case WgmmaSwizzle::None: break;
  }
  return a;
}

// The byte offset from the matrix start (before the swizzle) of element
// (mn, k) of an operand with `bytes`-byte elements (2, or 4 for tf32);
// mn: the row of A (M) or the column of B (N).  The canonical layouts of
// "Shared Memory Matrix Layout" (T = 16 / bytes elements in 16 bytes,
// W = wgmma_swizzle_bytes):
//  K-major (A without imm-trans-a, B without imm-trans-b): rows of K;
//    none:     core matrices of 8 rows x 16 bytes, rows 16 bytes apart;
//              LBO between core matrices along K, SBO along M/N (8 rows);
//    swizzled: row mn % 8 of an atom at (mn % 8) * W, K along the row
//              (the instruction's 32 bytes of K fit in one), SBO between
//              atoms of 8 rows along M/N; LBO is not used.
//  MN-major (imm-trans = 1): rows of M/N;
//    none:     core matrices of 16 bytes of M/N x 8 k, k rows 16 bytes
//              apart; SBO between core matrices along M/N, LBO along K;
//    swizzled: k % 8 selects the atom row (W bytes of M/N), LBO between
//              atoms along M/N, SBO between 8-k groups.
constexpr unsigned wgmma_offset(bool mn_major, WgmmaSwizzle s, unsigned lbo, unsigned sbo, int mn, int k, int bytes) {
  const int T = 16 / bytes, W = wgmma_swizzle_bytes(s);
  const unsigned umn = static_cast<unsigned>(mn), uk = static_cast<unsigned>(k), ub = static_cast<unsigned>(bytes);
  if (!mn_major) {
    if (s == WgmmaSwizzle::None)
      return (umn % 8) * 16 + (uk / T) * lbo + (umn / 8) * sbo + (uk % T) * ub;
    return (umn % 8) * W + uk * ub + (umn / 8) * sbo;
  }
  if (s == WgmmaSwizzle::None)
    return (uk % 8) * 16 + (umn / T) * sbo + (uk / 8) * lbo + (umn % T) * ub;
  const unsigned per_row = static_cast<unsigned>(W / bytes);  // M/N elements in one atom row
  return (uk % 8) * W + (uk / 8) * sbo + (umn / per_row) * lbo + (umn % per_row) * ub;
}

// ---------------------------------------------------------------------------
// stmatrix (.m8n8, .b16)
// ---------------------------------------------------------------------------
// PTX ISA "Warp-level matrix store instruction: stmatrix" (anchor
// #warp-level-matrix-instructions-stmatrix): the inverse of ldmatrix, with
// the same fragment layout ("Each thread in a warp stores fragments of a
// row, with thread 0 storing the first fragment from its register r"): lane
// `lane` holds ldmatrix_element(lane, i, trans) of matrix q in register q,
// and lanes 8q .. 8q+7 give the row addresses of matrix q
// (ldmatrix_address_lane).
constexpr RowCol stmatrix_element(int lane, int i, bool trans) { return ldmatrix_element(lane, i, trans); }

}  // namespace tileverify::warp
