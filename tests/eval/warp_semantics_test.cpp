// Warp collective semantics (src/eval/warp_semantics.hpp) against the PTX ISA
// tables and pseudo-code.  The concrete entries below are read off the PTX
// figures/formulas by hand, so they check the header's closed forms rather
// than restate them; tools/gpu_checks/warp_layouts.cu checks the same header
// against an H100.
#include <doctest/doctest.h>

#include <vector>

#include "../../src/eval/warp_semantics.hpp"

using namespace tileverify::warp;

namespace {

constexpr RowCol rc(int r, int c) { return RowCol{r, c}; }

// Each (lane, i) pair lands on a distinct in-range cell and every cell is hit:
// the fragment layout is a bijection between (lane, i) and the matrix.
template <class F>
bool is_bijection(F cell, int count, int rows, int cols) {
  if (32 * count != rows * cols) return false;
  std::vector<int> hits(rows * cols, 0);
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < count; ++i) {
      const RowCol x = cell(lane, i);
      if (x.row < 0 || x.row >= rows || x.col < 0 || x.col >= cols) return false;
      ++hits[x.row * cols + x.col];
    }
  for (int h : hits)
    if (h != 1) return false;
  return true;
}

struct Combo {
  MmaShape s;
  MmaType t;
};
const Combo kSupported[] = {{MmaShape::M16N8K8, MmaType::F16},
                            {MmaShape::M16N8K8, MmaType::BF16},
                            {MmaShape::M16N8K8, MmaType::TF32},
                            {MmaShape::M16N8K16, MmaType::F16},
                            {MmaShape::M16N8K16, MmaType::BF16}};

}  // namespace

// Compile-time use: the layouts are constexpr.
static_assert(mma_a(MmaShape::M16N8K16, MmaType::F16, 0, 4) == RowCol{0, 8});
static_assert(mma_a(MmaShape::M16N8K8, MmaType::TF32, 0, 1) == RowCol{8, 0});
static_assert(shfl_source(ShflMode::Up, 0, 1, 0).src_lane == 0);
static_assert(!shfl_source(ShflMode::Up, 0, 1, 0).pred);

TEST_CASE("mma fragment element counts") {
  CHECK(mma_a_count(MmaShape::M16N8K16, MmaType::F16) == 8);
  CHECK(mma_b_count(MmaShape::M16N8K16, MmaType::F16) == 4);
  CHECK(mma_c_count(MmaShape::M16N8K16, MmaType::F16) == 4);
  CHECK(mma_a_count(MmaShape::M16N8K16, MmaType::BF16) == 8);
  CHECK(mma_a_count(MmaShape::M16N8K8, MmaType::F16) == 4);
  CHECK(mma_b_count(MmaShape::M16N8K8, MmaType::F16) == 2);
  CHECK(mma_c_count(MmaShape::M16N8K8, MmaType::BF16) == 4);
  CHECK(mma_a_count(MmaShape::M16N8K8, MmaType::TF32) == 4);
  CHECK(mma_b_count(MmaShape::M16N8K8, MmaType::TF32) == 2);
  CHECK(mma_c_count(MmaShape::M16N8K8, MmaType::TF32) == 4);
  CHECK(mma_ab_elems_per_reg(MmaType::F16) == 2);
  CHECK(mma_ab_elems_per_reg(MmaType::TF32) == 1);
  CHECK(mma_k(MmaShape::M16N8K8) == 8);
  CHECK(mma_k(MmaShape::M16N8K16) == 16);
  // There is no mma.m16n8k16 for .tf32.
  CHECK_FALSE(mma_supported(MmaShape::M16N8K16, MmaType::TF32));
  CHECK(mma_a_count(MmaShape::M16N8K16, MmaType::TF32) == 0);
  CHECK(mma_a(MmaShape::M16N8K16, MmaType::TF32, 0, 0) == kNoCell);
  // Out-of-range arguments give the sentinel, not a cell.
  CHECK(mma_a(MmaShape::M16N8K16, MmaType::F16, 0, 8) == kNoCell);
  CHECK(mma_b(MmaShape::M16N8K8, MmaType::F16, 0, 2) == kNoCell);
  CHECK(mma_c(MmaShape::M16N8K8, MmaType::F16, 32, 0) == kNoCell);
  CHECK(mma_c(MmaShape::M16N8K8, MmaType::F16, -1, 0) == kNoCell);
}

TEST_CASE("mma.m16n8k16 .f16/.bf16 fragments: PTX table entries") {
  for (MmaType t : {MmaType::F16, MmaType::BF16}) {
    CAPTURE(static_cast<int>(t));
    const MmaShape s = MmaShape::M16N8K16;
    // A, lane 0: a0..a7 = A(0,0) A(0,1) A(8,0) A(8,1) A(0,8) A(0,9) A(8,8) A(8,9)
    const RowCol a0[8] = {rc(0, 0), rc(0, 1), rc(8, 0), rc(8, 1), rc(0, 8), rc(0, 9), rc(8, 8), rc(8, 9)};
    // lane 5: groupID 1, threadID_in_group 1
    const RowCol a5[8] = {rc(1, 2), rc(1, 3), rc(9, 2), rc(9, 3), rc(1, 10), rc(1, 11), rc(9, 10), rc(9, 11)};
    // lane 31: groupID 7, threadID_in_group 3
    const RowCol a31[8] = {rc(7, 6),  rc(7, 7),  rc(15, 6),  rc(15, 7),
                           rc(7, 14), rc(7, 15), rc(15, 14), rc(15, 15)};
    for (int i = 0; i < 8; ++i) {
      CAPTURE(i);
      CHECK(mma_a(s, t, 0, i) == a0[i]);
      CHECK(mma_a(s, t, 5, i) == a5[i]);
      CHECK(mma_a(s, t, 31, i) == a31[i]);
    }
    // B (KxN): row = 2*tig + (i&1) (+8 for i >= 2), col = groupID.
    const RowCol b0[4] = {rc(0, 0), rc(1, 0), rc(8, 0), rc(9, 0)};
    const RowCol b5[4] = {rc(2, 1), rc(3, 1), rc(10, 1), rc(11, 1)};
    const RowCol b31[4] = {rc(6, 7), rc(7, 7), rc(14, 7), rc(15, 7)};
    // C/D: rows groupID, groupID+8; cols 2*tig, 2*tig+1.
    const RowCol c0[4] = {rc(0, 0), rc(0, 1), rc(8, 0), rc(8, 1)};
    const RowCol c13[4] = {rc(3, 2), rc(3, 3), rc(11, 2), rc(11, 3)};
    const RowCol c31[4] = {rc(7, 6), rc(7, 7), rc(15, 6), rc(15, 7)};
    for (int i = 0; i < 4; ++i) {
      CAPTURE(i);
      CHECK(mma_b(s, t, 0, i) == b0[i]);
      CHECK(mma_b(s, t, 5, i) == b5[i]);
      CHECK(mma_b(s, t, 31, i) == b31[i]);
      CHECK(mma_c(s, t, 0, i) == c0[i]);
      CHECK(mma_c(s, t, 13, i) == c13[i]);
      CHECK(mma_c(s, t, 31, i) == c31[i]);
    }
  }
}

TEST_CASE("mma.m16n8k8 .f16/.bf16 fragments: PTX table entries") {
  for (MmaType t : {MmaType::F16, MmaType::BF16}) {
    CAPTURE(static_cast<int>(t));
    const MmaShape s = MmaShape::M16N8K8;
    // A: a0,a1 row groupID; a2,a3 row groupID+8; col 2*tig + (i&1).
    const RowCol a0[4] = {rc(0, 0), rc(0, 1), rc(8, 0), rc(8, 1)};
    const RowCol a6[4] = {rc(1, 4), rc(1, 5), rc(9, 4), rc(9, 5)};
    const RowCol a31[4] = {rc(7, 6), rc(7, 7), rc(15, 6), rc(15, 7)};
    for (int i = 0; i < 4; ++i) {
      CAPTURE(i);
      CHECK(mma_a(s, t, 0, i) == a0[i]);
      CHECK(mma_a(s, t, 6, i) == a6[i]);
      CHECK(mma_a(s, t, 31, i) == a31[i]);
      CHECK(mma_c(s, t, 6, i) == a6[i]);  // C has the same shape of formula
    }
    // B: row = 2*tig + i, col = groupID.
    CHECK(mma_b(s, t, 0, 0) == rc(0, 0));
    CHECK(mma_b(s, t, 0, 1) == rc(1, 0));
    CHECK(mma_b(s, t, 5, 0) == rc(2, 1));
    CHECK(mma_b(s, t, 5, 1) == rc(3, 1));
    CHECK(mma_b(s, t, 31, 0) == rc(6, 7));
    CHECK(mma_b(s, t, 31, 1) == rc(7, 7));
    CHECK(mma_c(s, t, 31, 3) == rc(15, 7));
  }
}

TEST_CASE("mma.m16n8k8 .tf32 fragments: PTX table entries (order differs from .f16)") {
  const MmaShape s = MmaShape::M16N8K8;
  const MmaType t = MmaType::TF32;
  // A: a0 (g, tig), a1 (g+8, tig), a2 (g, tig+4), a3 (g+8, tig+4).
  const RowCol a0[4] = {rc(0, 0), rc(8, 0), rc(0, 4), rc(8, 4)};
  const RowCol a6[4] = {rc(1, 2), rc(9, 2), rc(1, 6), rc(9, 6)};
  const RowCol a31[4] = {rc(7, 3), rc(15, 3), rc(7, 7), rc(15, 7)};
  for (int i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK(mma_a(s, t, 0, i) == a0[i]);
    CHECK(mma_a(s, t, 6, i) == a6[i]);
    CHECK(mma_a(s, t, 31, i) == a31[i]);
  }
  // The .f16 layout would put a1 at (0,1): tf32 really differs.
  CHECK(mma_a(s, t, 0, 1) != mma_a(s, MmaType::F16, 0, 1));
  // B: b0 (tig, g), b1 (tig+4, g).
  CHECK(mma_b(s, t, 0, 0) == rc(0, 0));
  CHECK(mma_b(s, t, 0, 1) == rc(4, 0));
  CHECK(mma_b(s, t, 6, 0) == rc(2, 1));
  CHECK(mma_b(s, t, 6, 1) == rc(6, 1));
  CHECK(mma_b(s, t, 31, 1) == rc(7, 7));
  // C/D: same as for .f16 inputs.
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 4; ++i) CHECK(mma_c(s, t, lane, i) == mma_c(s, MmaType::F16, lane, i));
}

TEST_CASE("mma fragment layouts are bijections onto A, B and C") {
  for (const Combo& c : kSupported) {
    CAPTURE(static_cast<int>(c.s));
    CAPTURE(static_cast<int>(c.t));
    const int M = mma_m(c.s), N = mma_n(c.s), K = mma_k(c.s);
    CHECK(is_bijection([&](int l, int i) { return mma_a(c.s, c.t, l, i); }, mma_a_count(c.s, c.t), M, K));
    CHECK(is_bijection([&](int l, int i) { return mma_b(c.s, c.t, l, i); }, mma_b_count(c.s, c.t), K, N));
    CHECK(is_bijection([&](int l, int i) { return mma_c(c.s, c.t, l, i); }, mma_c_count(c.s, c.t), M, N));
  }
  // The checker itself rejects a non-bijection (a layout hitting one cell twice).
  CHECK_FALSE(is_bijection([](int l, int) { return rc(l >> 2, 0); }, 4, 16, 8));
}

TEST_CASE("bf16 layouts equal f16 layouts") {
  for (MmaShape s : {MmaShape::M16N8K8, MmaShape::M16N8K16})
    for (int lane = 0; lane < 32; ++lane) {
      for (int i = 0; i < mma_a_count(s, MmaType::F16); ++i)
        CHECK(mma_a(s, MmaType::BF16, lane, i) == mma_a(s, MmaType::F16, lane, i));
      for (int i = 0; i < mma_b_count(s, MmaType::F16); ++i)
        CHECK(mma_b(s, MmaType::BF16, lane, i) == mma_b(s, MmaType::F16, lane, i));
    }
}

TEST_CASE("ldmatrix m8n8 b16: fragment and address lanes") {
  // Thread lane holds row lane>>2, cols 2*(lane%4) and +1.
  CHECK(ldmatrix_element(0, 0, false) == rc(0, 0));
  CHECK(ldmatrix_element(0, 1, false) == rc(0, 1));
  CHECK(ldmatrix_element(5, 0, false) == rc(1, 2));
  CHECK(ldmatrix_element(5, 1, false) == rc(1, 3));
  CHECK(ldmatrix_element(31, 1, false) == rc(7, 7));
  // .trans: the same fragment of the transposed matrix.
  CHECK(ldmatrix_element(0, 1, true) == rc(1, 0));
  CHECK(ldmatrix_element(5, 1, true) == rc(3, 1));
  CHECK(ldmatrix_element(30, 0, true) == rc(4, 7));
  CHECK(ldmatrix_element(32, 0, false) == kNoCell);
  CHECK(ldmatrix_element(0, 2, false) == kNoCell);
  // Row r of matrix q comes from lane 8q + r.
  CHECK(ldmatrix_address_lane(0, 0) == 0);
  CHECK(ldmatrix_address_lane(0, 7) == 7);
  CHECK(ldmatrix_address_lane(2, 3) == 19);
  CHECK(ldmatrix_address_lane(3, 7) == 31);
  CHECK(ldmatrix_address_lane(4, 0) == -1);
  CHECK(ldmatrix_address_lane(0, 8) == -1);
  CHECK(ldmatrix_lane_supplies_address(7, 1));
  CHECK_FALSE(ldmatrix_lane_supplies_address(8, 1));
  CHECK(ldmatrix_lane_supplies_address(15, 2));
  CHECK_FALSE(ldmatrix_lane_supplies_address(16, 2));
  CHECK(ldmatrix_lane_supplies_address(31, 4));
  for (bool trans : {false, true}) {
    CAPTURE(trans);
    CHECK(is_bijection([&](int l, int i) { return ldmatrix_element(l, i, trans); }, 2, 8, 8));
    for (int lane = 0; lane < 32; ++lane)
      for (int i = 0; i < 2; ++i) {
        const RowCol a = ldmatrix_element(lane, i, trans), b = ldmatrix_element(lane, i, !trans);
        CHECK(a == rc(b.col, b.row));
      }
  }
}

TEST_CASE("ldmatrix.x4 yields the mma.m16n8k16 A fragment, .x2.trans the B fragment") {
  // The usual pairing: A (16x16, row-major) loaded with .x4 where matrix q is
  // the quadrant rows 8*(q&1).., cols 8*(q>>1)..; B (16x8, stored row-major
  // KxN) loaded with .x2.trans where matrix q is rows 8q..8q+7.  Register q
  // holds fragment elements 2q, 2q+1 (f16x2).
  for (MmaType t : {MmaType::F16, MmaType::BF16})
    for (int lane = 0; lane < 32; ++lane)
      for (int i = 0; i < 8; ++i) {
        const int q = i / 2;
        const RowCol e = ldmatrix_element(lane, i % 2, false);
        CHECK(mma_a(MmaShape::M16N8K16, t, lane, i) == rc(8 * (q & 1) + e.row, 8 * (q >> 1) + e.col));
        if (i < 4) {
          const RowCol eb = ldmatrix_element(lane, i % 2, true);
          CHECK(mma_b(MmaShape::M16N8K16, t, lane, i) == rc(8 * q + eb.row, eb.col));
        }
      }
}

TEST_CASE("shfl.sync: bfly") {
  CHECK(shfl_source(ShflMode::Bfly, 5, 1, 0x1f).src_lane == 4);
  CHECK(shfl_source(ShflMode::Bfly, 5, 1, 0x1f).pred);
  CHECK(shfl_source(ShflMode::Bfly, 5, 16, 0x1f).src_lane == 21);
  CHECK(shfl_source(ShflMode::Bfly, 31, 31, 0x1f).src_lane == 0);
  for (int lane = 0; lane < 32; ++lane) {
    const ShflResult r = shfl_source(ShflMode::Bfly, lane, 3, 0x1f);
    CHECK(r.src_lane == (lane ^ 3));
    CHECK(r.pred);
  }
  // 16-lane segments (c = 0x101f): xor into a later segment keeps own value,
  // into an earlier one is allowed (j <= maxLane only bounds from above), as
  // CUDA documents for __shfl_xor_sync with width < 32.
  CHECK(shfl_source(ShflMode::Bfly, 0, 16, 0x101f).src_lane == 0);
  CHECK_FALSE(shfl_source(ShflMode::Bfly, 0, 16, 0x101f).pred);
  CHECK(shfl_source(ShflMode::Bfly, 16, 16, 0x101f).src_lane == 0);
  CHECK(shfl_source(ShflMode::Bfly, 16, 16, 0x101f).pred);
  // A clamp below the segment end limits bfly too.
  CHECK(shfl_source(ShflMode::Bfly, 2, 4, 0x05).src_lane == 2);
  CHECK_FALSE(shfl_source(ShflMode::Bfly, 2, 4, 0x05).pred);
  CHECK(shfl_source(ShflMode::Bfly, 1, 4, 0x05).src_lane == 5);
}

TEST_CASE("shfl.sync: up clamps at the segment start") {
  CHECK(shfl_source(ShflMode::Up, 3, 2, 0).src_lane == 1);
  CHECK(shfl_source(ShflMode::Up, 3, 2, 0).pred);
  // lane - b < 0: own value, predicate false (j is signed, no 5-bit wrap).
  CHECK(shfl_source(ShflMode::Up, 0, 1, 0).src_lane == 0);
  CHECK_FALSE(shfl_source(ShflMode::Up, 0, 1, 0).pred);
  CHECK(shfl_source(ShflMode::Up, 1, 2, 0).src_lane == 1);
  CHECK_FALSE(shfl_source(ShflMode::Up, 1, 2, 0).pred);
  // 16-lane segments, c = 0x1000: maxLane = segment start = 16 for lanes 16..31.
  CHECK(shfl_source(ShflMode::Up, 17, 1, 0x1000).src_lane == 16);
  CHECK(shfl_source(ShflMode::Up, 17, 1, 0x1000).pred);
  CHECK(shfl_source(ShflMode::Up, 16, 1, 0x1000).src_lane == 16);
  CHECK_FALSE(shfl_source(ShflMode::Up, 16, 1, 0x1000).pred);
  // A clamp value raises the lower bound: with cval 4, lane 6 - 3 = 3 < 4.
  CHECK(shfl_source(ShflMode::Up, 6, 3, 0x04).src_lane == 6);
  CHECK_FALSE(shfl_source(ShflMode::Up, 6, 3, 0x04).pred);
  CHECK(shfl_source(ShflMode::Up, 7, 3, 0x04).src_lane == 4);
}

TEST_CASE("shfl.sync: down past maxLane keeps the own value") {
  CHECK(shfl_source(ShflMode::Down, 29, 2, 0x1f).src_lane == 31);
  CHECK(shfl_source(ShflMode::Down, 29, 2, 0x1f).pred);
  CHECK(shfl_source(ShflMode::Down, 30, 2, 0x1f).src_lane == 30);
  CHECK_FALSE(shfl_source(ShflMode::Down, 30, 2, 0x1f).pred);
  CHECK(shfl_source(ShflMode::Down, 31, 31, 0x1f).src_lane == 31);
  CHECK_FALSE(shfl_source(ShflMode::Down, 31, 31, 0x1f).pred);
  // clamp 4: lane 2 + 2 = 4 ok, lane 3 + 2 = 5 > 4.
  CHECK(shfl_source(ShflMode::Down, 2, 2, 0x04).src_lane == 4);
  CHECK(shfl_source(ShflMode::Down, 3, 2, 0x04).src_lane == 3);
  CHECK_FALSE(shfl_source(ShflMode::Down, 3, 2, 0x04).pred);
  // 16-lane segments, c = 0x101f: maxLane = 15 for lanes 0..15.
  CHECK(shfl_source(ShflMode::Down, 13, 2, 0x101f).src_lane == 15);
  CHECK(shfl_source(ShflMode::Down, 14, 2, 0x101f).src_lane == 14);
  CHECK_FALSE(shfl_source(ShflMode::Down, 14, 2, 0x101f).pred);
}

TEST_CASE("shfl.sync: idx broadcast and segments") {
  for (int lane = 0; lane < 32; ++lane) {
    const ShflResult r = shfl_source(ShflMode::Idx, lane, 7, 0x1f);
    CHECK(r.src_lane == 7);
    CHECK(r.pred);
    // 16-lane segments: each half broadcasts its own lane 3.
    CHECK(shfl_source(ShflMode::Idx, lane, 3, 0x101f).src_lane == (lane & 16) + 3);
    // 8-lane segments (segmask 0x18): b = 10 reads b % 8 = 2 of the segment.
    CHECK(shfl_source(ShflMode::Idx, lane, 10, 0x181f).src_lane == (lane & 24) + 2);
  }
  CHECK(shfl_source(ShflMode::Idx, 13, 2, 0x181f).src_lane == 10);
  // clamp below the index: own value.
  CHECK(shfl_source(ShflMode::Idx, 9, 7, 0x05).src_lane == 9);
  CHECK_FALSE(shfl_source(ShflMode::Idx, 9, 7, 0x05).pred);
  CHECK(shfl_source(ShflMode::Idx, 9, 5, 0x05).src_lane == 5);
}

TEST_CASE("shfl.sync: only b[4:0], c[4:0] and c[12:8] are read") {
  for (ShflMode m : {ShflMode::Up, ShflMode::Down, ShflMode::Bfly, ShflMode::Idx})
    for (int lane = 0; lane < 32; ++lane) {
      const ShflResult a = shfl_source(m, lane, 1, 0x101f);
      const ShflResult b = shfl_source(m, lane, 33, 0xFFFFE0E0u | 0x101f);
      CHECK(a.src_lane == b.src_lane);
      CHECK(a.pred == b.pred);
    }
  CHECK(shfl_source(ShflMode::Up, 5, 33, 0).src_lane == 4);
}

TEST_CASE("shfl.sync: CUDA __shfl_*_sync(width) c operand and semantics") {
  CHECK(shfl_c_for_width(ShflMode::Up, 32) == 0x0000u);
  CHECK(shfl_c_for_width(ShflMode::Up, 16) == 0x1000u);
  CHECK(shfl_c_for_width(ShflMode::Down, 16) == 0x101fu);
  CHECK(shfl_c_for_width(ShflMode::Idx, 32) == 0x001fu);
  CHECK(shfl_c_for_width(ShflMode::Bfly, 1) == 0x1f1fu);
  // The CUDA Programming Guide's description of the width variants, as an
  // independent model: up/down stay inside the width-segment, idx reads
  // srcLane % width of the own segment, xor may read earlier segments only.
  for (int width = 1; width <= 32; width *= 2)
    for (int delta = 0; delta < 32; ++delta)
      for (int lane = 0; lane < 32; ++lane) {
        CAPTURE(width);
        CAPTURE(delta);
        CAPTURE(lane);
        const unsigned d = static_cast<unsigned>(delta);
        const int seg = lane / width * width;
        const int up = lane % width >= delta ? lane - delta : lane;
        const int down = lane % width + delta < width ? lane + delta : lane;
        const int idx = seg + delta % width;
        const int x = lane ^ delta;
        const int bfly = x < seg + width ? x : lane;
        CHECK(shfl_source(ShflMode::Up, lane, d, shfl_c_for_width(ShflMode::Up, width)).src_lane == up);
        CHECK(shfl_source(ShflMode::Down, lane, d, shfl_c_for_width(ShflMode::Down, width)).src_lane == down);
        CHECK(shfl_source(ShflMode::Idx, lane, d, shfl_c_for_width(ShflMode::Idx, width)).src_lane == idx);
        CHECK(shfl_source(ShflMode::Bfly, lane, d, shfl_c_for_width(ShflMode::Bfly, width)).src_lane == bfly);
      }
}

TEST_CASE("shfl.sync: source lanes outside membermask are flagged") {
  const unsigned lo = 0x0000ffffu;
  CHECK(shfl_source_in_mask(ShflMode::Idx, 3, 5, 0x1f, lo));
  CHECK_FALSE(shfl_source_in_mask(ShflMode::Idx, 3, 20, 0x1f, lo));  // source 20 not in mask
  CHECK_FALSE(shfl_source_in_mask(ShflMode::Idx, 20, 5, 0x1f, lo));  // executing lane not in mask
  CHECK(shfl_source_in_mask(ShflMode::Down, 15, 1, 0x1f, lo) == false);  // reads lane 16
  CHECK(shfl_source_in_mask(ShflMode::Down, 15, 1, 0x0f, lo));           // clamped: own value
  CHECK(shfl_source_in_mask(ShflMode::Bfly, 1, 1, 0x1f, 0x3u));
  CHECK_FALSE(shfl_source_in_mask(ShflMode::Bfly, 1, 2, 0x1f, 0x3u));
  CHECK(lane_in_mask(4, 0x10u));
  CHECK_FALSE(lane_in_mask(5, 0x10u));
}

TEST_CASE("vote.sync: ballot, all, any, uni over membermask") {
  bool p[32];
  for (int l = 0; l < 32; ++l) p[l] = (l % 3) == 0;  // lanes 0,3,...,30
  CHECK(vote_ballot(p, 0xffffffffu) == 0x49249249u);
  // Lanes outside membermask contribute 0 even when their predicate is true.
  CHECK(vote_ballot(p, 0x0000000fu) == 0x00000009u);
  CHECK(vote_ballot(p, 0x00000006u) == 0u);
  CHECK_FALSE(vote_all(p, 0xffffffffu));
  CHECK(vote_any(p, 0xffffffffu));
  CHECK_FALSE(vote_uni(p, 0xffffffffu));
  // Restricted to lanes whose predicate is true (0 and 3): all, any, uni.
  CHECK(vote_all(p, 0x9u));
  CHECK(vote_any(p, 0x9u));
  CHECK(vote_uni(p, 0x9u));
  // Restricted to false lanes (1, 2): not all, not any, but uniform.
  CHECK_FALSE(vote_all(p, 0x6u));
  CHECK_FALSE(vote_any(p, 0x6u));
  CHECK(vote_uni(p, 0x6u));
  // A false lane outside the mask cannot falsify .all (exited lanes are
  // modelled by removing them from the mask).
  CHECK(vote_all(p, 0x1u | (1u << 30)));
  CHECK_FALSE(vote_all(p, 0x1u | (1u << 31)));
  bool all_true[32];
  for (bool& b : all_true) b = true;
  CHECK(vote_ballot(all_true, 0xa5a5a5a5u) == 0xa5a5a5a5u);
  CHECK(vote_ballot(all_true, 0x80000000u) == 0x80000000u);
  CHECK(vote_all(all_true, 0xffffffffu));
  // Empty mask (undefined in PTX: the executing lane must be in it).
  CHECK(vote_ballot(all_true, 0u) == 0u);
  CHECK_FALSE(vote_any(all_true, 0u));
}

// ---------------------------------------------------------------------------
// wgmma (PTX ISA "Asynchronous Warpgroup Level Matrix Multiply-Accumulate
// Instructions"): the accumulator and register-A fragments, the matrix
// descriptor, the swizzles and the canonical shared-memory layouts.
// ---------------------------------------------------------------------------

TEST_CASE("wgmma accumulator fragment: the mma.m16n8 layout per warp, repeated per 8 columns") {
  // Thread 0: d0, d1 at row 0, cols 0-1; d2, d3 at row 8; d4 at row 0, col 8.
  CHECK(wgmma_d(0, 0) == rc(0, 0));
  CHECK(wgmma_d(0, 1) == rc(0, 1));
  CHECK(wgmma_d(0, 2) == rc(8, 0));
  CHECK(wgmma_d(0, 3) == rc(8, 1));
  CHECK(wgmma_d(0, 4) == rc(0, 8));
  // Thread 37: warp 1 (rows 16-31), lane 5 (groupID 1, threadID_in_group 1).
  CHECK(wgmma_d(37, 0) == rc(17, 2));
  CHECK(wgmma_d(37, 7) == rc(25, 11));
  CHECK(wgmma_d(127, 0) == rc(55, 6));
  // A bijection onto the 64 x N accumulator for N = 8 .. 256.
  for (int n : {8, 16, 64, 256}) {
    std::vector<int> hits(std::size_t(64 * n), 0);
    for (int t = 0; t < 128; ++t)
      for (int i = 0; i < n / 2; ++i) {
        const RowCol x = wgmma_d(t, i);
        REQUIRE(x.row >= 0);
        REQUIRE(x.row < 64);
        REQUIRE(x.col < n);
        ++hits[std::size_t(x.row * n + x.col)];
      }
    for (int h : hits) CHECK(h == 1);
  }
}

TEST_CASE("wgmma A from registers: the mma A fragment, 16 rows per warp") {
  CHECK(wgmma_a_reg(0, 0, false) == rc(0, 0));
  CHECK(wgmma_a_reg(0, 2, false) == rc(8, 0));
  CHECK(wgmma_a_reg(0, 4, false) == rc(0, 8));
  CHECK(wgmma_a_reg(33, 1, false) == rc(16, 3));
  CHECK(wgmma_a_reg(0, 1, true) == rc(8, 0));  // tf32: a1 is the row below
  CHECK(wgmma_a_reg(64, 2, true) == rc(32, 4));
}

TEST_CASE("wgmma matrix descriptor: fields and round trip") {
  // Triton's 128B-swizzle descriptor: SBO 1024 bytes, swizzle mode 1.
  const WgmmaDesc d = wgmma_decode(4611686293305294848ull | 0x40u);
  CHECK(d.start == 0x400);
  CHECK(d.lbo == 0);
  CHECK(d.sbo == 1024);
  CHECK(d.base_offset == 0);
  CHECK(d.swizzle == WgmmaSwizzle::B128);
  // Triton's 32B-swizzle one (0xC000001000000000): SBO 256, mode 3.
  const WgmmaDesc e = wgmma_decode(static_cast<unsigned long long>(-4611685949707911168ll));
  CHECK(e.sbo == 256);
  CHECK(e.swizzle == WgmmaSwizzle::B32);
  WgmmaDesc f;
  f.start = 0x3fff0;
  f.lbo = 0x120;
  f.sbo = 0x3fff0;
  f.base_offset = 5;
  f.swizzle = WgmmaSwizzle::B64;
  const WgmmaDesc g = wgmma_decode(wgmma_encode(f));
  CHECK(g.start == f.start);
  CHECK(g.lbo == f.lbo);
  CHECK(g.sbo == f.sbo);
  CHECK(g.base_offset == 5);
  CHECK(g.swizzle == WgmmaSwizzle::B64);
  CHECK(wgmma_decode(0x4000ull).start == 0);  // the start address has 14 bits
}

TEST_CASE("wgmma swizzles: 16-byte chunks XORed with the row within the atom") {
  // 128B: row r of the 1024-byte atom has its chunks XORed with r.
  CHECK(wgmma_swizzle(WgmmaSwizzle::B128, 0x000) == 0x000);
  CHECK(wgmma_swizzle(WgmmaSwizzle::B128, 0x080) == 0x090);
  CHECK(wgmma_swizzle(WgmmaSwizzle::B128, 0x3f0) == 0x380);
  CHECK(wgmma_swizzle(WgmmaSwizzle::B128, 0x405) == 0x405);  // bytes within a chunk stay
  CHECK(wgmma_swizzle(WgmmaSwizzle::B64, 0x180) == 0x1b0);
  CHECK(wgmma_swizzle(WgmmaSwizzle::B64, 0x200) == 0x200);  // repeats every 512 bytes
  CHECK(wgmma_swizzle(WgmmaSwizzle::B32, 0x080) == 0x090);
  CHECK(wgmma_swizzle(WgmmaSwizzle::B32, 0x100) == 0x100);  // repeats every 256 bytes
  CHECK(wgmma_swizzle(WgmmaSwizzle::None, 0x3f0) == 0x3f0);
  // Each swizzle permutes the chunks of its atom.
  for (WgmmaSwizzle s : {WgmmaSwizzle::B32, WgmmaSwizzle::B64, WgmmaSwizzle::B128}) {
    const unsigned atom = 8u * unsigned(wgmma_swizzle_bytes(s));
    std::vector<int> hits(atom / 16, 0);
    for (unsigned a = 0; a < atom; a += 16) {
      const unsigned x = wgmma_swizzle(s, a);
      REQUIRE(x < atom);
      ++hits[x / 16];
    }
    for (int h : hits) CHECK(h == 1);
  }
}

TEST_CASE("wgmma canonical layouts: K-major and MN-major offsets") {
  // K-major, no swizzle: 8x16-byte core matrices; LBO along K, SBO along M.
  CHECK(wgmma_offset(false, WgmmaSwizzle::None, 128, 256, 0, 0, 2) == 0);
  CHECK(wgmma_offset(false, WgmmaSwizzle::None, 128, 256, 1, 0, 2) == 16);
  CHECK(wgmma_offset(false, WgmmaSwizzle::None, 128, 256, 0, 9, 2) == 128 + 2);
  CHECK(wgmma_offset(false, WgmmaSwizzle::None, 128, 256, 9, 0, 2) == 256 + 16);
  // K-major, 128B: 128-byte rows, SBO between groups of 8 rows.
  CHECK(wgmma_offset(false, WgmmaSwizzle::B128, 0, 1024, 1, 3, 2) == 128 + 6);
  CHECK(wgmma_offset(false, WgmmaSwizzle::B128, 0, 1024, 8, 0, 2) == 1024);
  CHECK(wgmma_offset(false, WgmmaSwizzle::B32, 0, 256, 3, 15, 2) == 96 + 30);
  CHECK(wgmma_offset(false, WgmmaSwizzle::B32, 0, 256, 3, 7, 4) == 96 + 28);  // tf32
  // MN-major, no swizzle: 8 MN elements per 16 bytes, k rows 16 bytes apart.
  CHECK(wgmma_offset(true, WgmmaSwizzle::None, 512, 128, 3, 1, 2) == 16 + 6);
  CHECK(wgmma_offset(true, WgmmaSwizzle::None, 512, 128, 8, 0, 2) == 128);
  CHECK(wgmma_offset(true, WgmmaSwizzle::None, 512, 128, 0, 8, 2) == 512);
  // MN-major, 128B: 64 MN elements a row, k selects the row; LBO along MN, SBO along K.
  CHECK(wgmma_offset(true, WgmmaSwizzle::B128, 8192, 1024, 63, 1, 2) == 128 + 126);
  CHECK(wgmma_offset(true, WgmmaSwizzle::B128, 8192, 1024, 64, 0, 2) == 8192);
  CHECK(wgmma_offset(true, WgmmaSwizzle::B128, 8192, 1024, 0, 9, 2) == 1024 + 128);
}

TEST_CASE("stmatrix has ldmatrix's fragment layout") {
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 2; ++i)
      for (bool t : {false, true}) CHECK(stmatrix_element(lane, i, t) == ldmatrix_element(lane, i, t));
}
