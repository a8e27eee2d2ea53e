// Checks src/eval/warp_semantics.hpp against a real GPU (sm_80 or newer).
//
//   cd tools/gpu_checks && nvcc -std=c++17 -arch=sm_90 warp_layouts.cu -o /tmp/w && /tmp/w
//
// The device code knows nothing of the header: it runs raw inline PTX on
// per-lane register values prepared by the host and dumps the result
// registers.  All expectations are computed on the host from the header, so a
// wrong formula in the header shows up as a MISMATCH line.  Prints a summary
// line per family and "ALL OK" (exit 0) or "FAILED" (exit 1).
//
// Why each check can tell a wrong model from the right one:
//  - shfl.sync: every lane sends a = lane + 100, so d names the source lane;
//    swept over all modes, b in 0..63 (b[4:0] truncation), all 1024
//    (clamp, segmask) pairs, with and without junk in c's unused bits.
//  - vote.sync: random predicates, masks with lanes outside the mask holding
//    true predicates (must not reach the ballot), divergent execution, and
//    exited lanes.
//  - ldmatrix: every lane passes a different (permuted) row address, lanes
//    beyond 8*num point at decoy rows, every b16 in shared memory is unique.
//  - mma.sync: A, B, C are random small integers packed into fragments with
//    the header's layouts; D unpacked with the header's C layout must equal
//    C + A*B exactly (all values exact in f16/bf16/tf32 and f32).  mma alone
//    cannot see a relabelling of M, N or K applied consistently to all
//    operands, but any layout error that is not such a relabelling changes D.
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../../src/eval/warp_semantics.hpp"
#include "check_common.hpp"

namespace w = tileverify::warp;

static int rnd_int(int lo, int hi) { return lo + static_cast<int>(rnd() % static_cast<uint32_t>(hi - lo + 1)); }

// ----------------------------------------------------------------------------
// shfl.sync raw sweep
// ----------------------------------------------------------------------------
constexpr int kCVariants = 2048;  // cval 0..31 x segmask 0..31 x junk bits on/off
constexpr int kBValues = 64;
constexpr int kShflCombos = 4 * kBValues * kCVariants;

__host__ __device__ inline unsigned c_variant(int ci) {
  const unsigned cval = ci & 31, seg = (ci >> 5) & 31, junk = (ci >> 10) & 1 ? 0xFFFFE0E0u : 0u;
  return cval | (seg << 8) | junk;
}

__global__ void shfl_kernel(unsigned* out_d, unsigned char* out_p) {
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const int lane = threadIdx.x & 31;
  if (warp >= kShflCombos) return;  // blockDim is a multiple of 32: whole warps
  const int ci = warp % kCVariants;
  const unsigned b = (warp / kCVariants) % kBValues;
  const int mode = warp / (kCVariants * kBValues);
  const unsigned c = c_variant(ci);
  const unsigned a = lane + 100u;
  unsigned d = 0, p = 0;
  switch (mode) {  // uniform per warp
    case 0:
      asm volatile("{ .reg .pred q; shfl.sync.up.b32 %0|q, %2, %3, %4, 0xffffffff; selp.u32 %1, 1, 0, q; }"
                   : "=r"(d), "=r"(p) : "r"(a), "r"(b), "r"(c));
      break;
    case 1:
      asm volatile("{ .reg .pred q; shfl.sync.down.b32 %0|q, %2, %3, %4, 0xffffffff; selp.u32 %1, 1, 0, q; }"
                   : "=r"(d), "=r"(p) : "r"(a), "r"(b), "r"(c));
      break;
    case 2:
      asm volatile("{ .reg .pred q; shfl.sync.bfly.b32 %0|q, %2, %3, %4, 0xffffffff; selp.u32 %1, 1, 0, q; }"
                   : "=r"(d), "=r"(p) : "r"(a), "r"(b), "r"(c));
      break;
    default:
      asm volatile("{ .reg .pred q; shfl.sync.idx.b32 %0|q, %2, %3, %4, 0xffffffff; selp.u32 %1, 1, 0, q; }"
                   : "=r"(d), "=r"(p) : "r"(a), "r"(b), "r"(c));
      break;
  }
  out_d[warp * 32 + lane] = d;
  out_p[warp * 32 + lane] = static_cast<unsigned char>(p);
}

static void check_shfl() {
  const long before = g_mismatch;
  const size_t n = static_cast<size_t>(kShflCombos) * 32;
  unsigned* dd;
  unsigned char* dp;
  CK(cudaMalloc(&dd, n * sizeof(unsigned)));
  CK(cudaMalloc(&dp, n));
  shfl_kernel<<<kShflCombos * 32 / 256, 256>>>(dd, dp);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<unsigned> hd(n);
  std::vector<unsigned char> hp(n);
  CK(cudaMemcpy(hd.data(), dd, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hp.data(), dp, n, cudaMemcpyDeviceToHost));
  CK(cudaFree(dd));
  CK(cudaFree(dp));
  const w::ShflMode modes[4] = {w::ShflMode::Up, w::ShflMode::Down, w::ShflMode::Bfly, w::ShflMode::Idx};
  const char* names[4] = {"up", "down", "bfly", "idx"};
  long checked = 0;
  for (int warp = 0; warp < kShflCombos; ++warp) {
    const int ci = warp % kCVariants;
    const unsigned b = (warp / kCVariants) % kBValues;
    const int mode = warp / (kCVariants * kBValues);
    const unsigned c = c_variant(ci);
    for (int lane = 0; lane < 32; ++lane) {
      const w::ShflResult r = w::shfl_source(modes[mode], lane, b, c);
      const unsigned got_src = hd[warp * 32 + lane] - 100u;
      const bool got_p = hp[warp * 32 + lane] != 0;
      ++checked;
      if (static_cast<int>(got_src) != r.src_lane || got_p != r.pred)
        mismatch("shfl.%s b=%u c=0x%08x lane=%d: gpu src=%d p=%d, header src=%d p=%d", names[mode], b, c,
                 lane, static_cast<int>(got_src), got_p, r.src_lane, r.pred);
    }
  }
  std::printf("shfl.sync raw sweep: %ld lane results checked, %ld mismatches\n", checked, g_mismatch - before);
}

// CUDA's __shfl_*_sync(width) wrappers against shfl_c_for_width().
__global__ void shfl_intrinsic_kernel(int* out) {
  const int lane = threadIdx.x;
  int k = 0;
  for (int width = 1; width <= 32; width *= 2)
    for (int delta = 0; delta < 40; ++delta) {
      const int v = lane + 100;
      out[(k * 4 + 0) * 32 + lane] = __shfl_up_sync(0xffffffffu, v, delta, width);
      out[(k * 4 + 1) * 32 + lane] = __shfl_down_sync(0xffffffffu, v, delta, width);
      out[(k * 4 + 2) * 32 + lane] = __shfl_xor_sync(0xffffffffu, v, delta, width);
      out[(k * 4 + 3) * 32 + lane] = __shfl_sync(0xffffffffu, v, delta, width);
      ++k;
    }
}

static void check_shfl_intrinsics() {
  const long before = g_mismatch;
  const int nk = 6 * 40;
  int* d;
  CK(cudaMalloc(&d, nk * 4 * 32 * sizeof(int)));
  shfl_intrinsic_kernel<<<1, 32>>>(d);
  CK(cudaGetLastError());
  std::vector<int> h(nk * 4 * 32);
  CK(cudaMemcpy(h.data(), d, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
  CK(cudaFree(d));
  const w::ShflMode modes[4] = {w::ShflMode::Up, w::ShflMode::Down, w::ShflMode::Bfly, w::ShflMode::Idx};
  int k = 0;
  long checked = 0;
  for (int width = 1; width <= 32; width *= 2)
    for (int delta = 0; delta < 40; ++delta) {
      for (int m = 0; m < 4; ++m)
        for (int lane = 0; lane < 32; ++lane) {
          const w::ShflResult r = w::shfl_source(modes[m], lane, static_cast<unsigned>(delta),
                                                 w::shfl_c_for_width(modes[m], width));
          const int got = h[(k * 4 + m) * 32 + lane] - 100;
          ++checked;
          if (got != r.src_lane)
            mismatch("__shfl intrinsic mode=%d width=%d delta=%d lane=%d: gpu src=%d header src=%d", m, width,
                     delta, lane, got, r.src_lane);
        }
      ++k;
    }
  std::printf("__shfl_*_sync(width) wrappers: %ld lane results checked, %ld mismatches\n", checked,
              g_mismatch - before);
}

// ----------------------------------------------------------------------------
// vote.sync
// ----------------------------------------------------------------------------
// Warp k votes with membermask masks[k]; only lanes in the mask execute the
// vote (divergent).  If exit_lanes[k] != 0, those lanes exit first and the
// rest vote with the full mask masks[k] (exited lanes may be in membermask).
__global__ void vote_kernel(const unsigned* masks, const unsigned* exit_lanes, const unsigned char* preds,
                            unsigned* out, int nwarps) {
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const int lane = threadIdx.x & 31;
  if (warp >= nwarps) return;
  if ((exit_lanes[warp] >> lane) & 1u) return;
  const unsigned m = masks[warp];
  unsigned ballot = 0xdeadbeefu, all = 7, any = 7, uni = 7;
  if ((m >> lane) & 1u) {
    const unsigned pr = preds[warp * 32 + lane];
    asm volatile(
        "{ .reg .pred q, r;\n"
        "  setp.ne.u32 q, %4, 0;\n"
        "  vote.sync.ballot.b32 %0, q, %5;\n"
        "  vote.sync.all.pred r, q, %5;  selp.u32 %1, 1, 0, r;\n"
        "  vote.sync.any.pred r, q, %5;  selp.u32 %2, 1, 0, r;\n"
        "  vote.sync.uni.pred r, q, %5;  selp.u32 %3, 1, 0, r; }"
        : "=r"(ballot), "=r"(all), "=r"(any), "=r"(uni)
        : "r"(pr), "r"(m));
  }
  unsigned* o = out + (warp * 32 + lane) * 4;
  o[0] = ballot;
  o[1] = all;
  o[2] = any;
  o[3] = uni;
}

static void check_vote() {
  const long before = g_mismatch;
  std::vector<unsigned> masks, exits;
  const unsigned fixed[] = {0xffffffffu, 0x1u, 0x80000000u, 0x0000ffffu, 0xffff0000u, 0x55555555u, 0xaaaaaaaau};
  for (unsigned m : fixed) {
    masks.push_back(m);
    exits.push_back(0);
  }
  for (int i = 0; i < 200; ++i) {
    unsigned m = rnd() & rnd();  // sparse-ish masks
    if (m == 0) m = 1u << (rnd() % 32);
    masks.push_back(m);
    exits.push_back(0);
  }
  // Exited lanes inside membermask: lanes 16..31 exit, 0..15 vote with full mask.
  for (int i = 0; i < 40; ++i) {
    masks.push_back(0xffffffffu);
    exits.push_back(i % 2 ? 0xffff0000u : (rnd() | 1u) & ~1u);
  }
  const int nw = static_cast<int>(masks.size());
  std::vector<unsigned char> preds(nw * 32);
  for (int k = 0; k < nw; ++k) {
    const int mode = k % 4;  // all-true, all-false, random, random
    for (int l = 0; l < 32; ++l) preds[k * 32 + l] = mode == 0 ? 1 : mode == 1 ? 0 : (rnd() & 1);
    // predicates of lanes outside the mask are true, so leaking them shows
    for (int l = 0; l < 32; ++l)
      if (!((masks[k] >> l) & 1u)) preds[k * 32 + l] = 1;
  }
  unsigned *dm, *de, *dout;
  unsigned char* dpr;
  CK(cudaMalloc(&dm, nw * 4));
  CK(cudaMalloc(&de, nw * 4));
  CK(cudaMalloc(&dpr, nw * 32));
  CK(cudaMalloc(&dout, nw * 32 * 4 * 4));
  CK(cudaMemcpy(dm, masks.data(), nw * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(de, exits.data(), nw * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dpr, preds.data(), nw * 32, cudaMemcpyHostToDevice));
  vote_kernel<<<(nw * 32 + 127) / 128, 128>>>(dm, de, dpr, dout, nw);
  CK(cudaGetLastError());
  std::vector<unsigned> out(nw * 32 * 4);
  CK(cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost));
  CK(cudaFree(dm));
  CK(cudaFree(de));
  CK(cudaFree(dpr));
  CK(cudaFree(dout));
  long checked = 0;
  for (int k = 0; k < nw; ++k) {
    bool p[32];
    for (int l = 0; l < 32; ++l) p[l] = preds[k * 32 + l] != 0;
    // The header's documented rule: exited lanes are removed from the mask.
    const unsigned eff = masks[k] & ~exits[k];
    const unsigned eb = w::vote_ballot(p, eff);
    const unsigned ea = w::vote_all(p, eff), ey = w::vote_any(p, eff), eu = w::vote_uni(p, eff);
    for (int l = 0; l < 32; ++l) {
      if (!((eff >> l) & 1u)) continue;
      const unsigned* o = &out[(k * 32 + l) * 4];
      ++checked;
      if (o[0] != eb || o[1] != ea || o[2] != ey || o[3] != eu)
        mismatch("vote mask=0x%08x exited=0x%08x lane=%d: gpu ballot=0x%08x all=%u any=%u uni=%u, header "
                 "0x%08x %u %u %u",
                 masks[k], exits[k], l, o[0], o[1], o[2], o[3], eb, ea, ey, eu);
    }
  }
  std::printf("vote.sync: %ld lane results checked (%d warps, incl. 40 with exited lanes), %ld mismatches\n",
              checked, nw, g_mismatch - before);
}

// ----------------------------------------------------------------------------
// ldmatrix .m8n8 .b16
// ----------------------------------------------------------------------------
__host__ __device__ inline int ld_row_of_lane(int lane, int num) {
  return lane < 8 * num ? (lane * 7 + 3) % 32 : 32 + lane;  // decoy rows 32..63
}
__host__ __device__ inline unsigned ld_value(int smem_row, int col) { return 0x4000u + smem_row * 8 + col; }

__global__ void ldmatrix_kernel(unsigned* out) {
  __shared__ __align__(16) unsigned short sm[64 * 8];
  const int lane = threadIdx.x;
  for (int k = lane; k < 64 * 8; k += 32) sm[k] = static_cast<unsigned short>(ld_value(k / 8, k % 8));
  __syncwarp();
  const int variant = blockIdx.x;  // num = 1,2,4 ; trans = variant >= 3
  const int num = 1 << (variant % 3);
  const bool trans = variant >= 3;
  const unsigned addr =
      static_cast<unsigned>(__cvta_generic_to_shared(&sm[ld_row_of_lane(lane, num) * 8]));
  unsigned r0 = 0xffffffffu, r1 = 0xffffffffu, r2 = 0xffffffffu, r3 = 0xffffffffu;
  if (!trans) {
    if (num == 1)
      asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r0) : "r"(addr));
    else if (num == 2)
      asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(addr));
    else
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                   : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
  } else {
    if (num == 1)
      asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r0) : "r"(addr));
    else if (num == 2)
      asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                   : "=r"(r0), "=r"(r1) : "r"(addr));
    else
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                   : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
  }
  unsigned* o = out + (variant * 32 + lane) * 4;
  o[0] = r0;
  o[1] = r1;
  o[2] = r2;
  o[3] = r3;
}

static void check_ldmatrix() {
  const long before = g_mismatch;
  unsigned* d;
  CK(cudaMalloc(&d, 6 * 32 * 4 * 4));
  ldmatrix_kernel<<<6, 32>>>(d);
  CK(cudaGetLastError());
  std::vector<unsigned> out(6 * 32 * 4);
  CK(cudaMemcpy(out.data(), d, out.size() * 4, cudaMemcpyDeviceToHost));
  CK(cudaFree(d));
  long checked = 0;
  for (int variant = 0; variant < 6; ++variant) {
    const int num = 1 << (variant % 3);
    const bool trans = variant >= 3;
    for (int lane = 0; lane < 32; ++lane)
      for (int q = 0; q < num; ++q)
        for (int i = 0; i < 2; ++i) {
          const w::RowCol rc = w::ldmatrix_element(lane, i, trans);
          const int al = w::ldmatrix_address_lane(q, rc.row);
          if (!w::ldmatrix_lane_supplies_address(al, num)) {
            mismatch("ldmatrix header: lane %d does not supply addresses for .x%d", al, num);
            continue;
          }
          const unsigned expect = ld_value(ld_row_of_lane(al, num), rc.col);
          const unsigned got = (out[(variant * 32 + lane) * 4 + q] >> (16 * i)) & 0xffffu;
          ++checked;
          if (got != expect)
            mismatch("ldmatrix.x%d%s lane=%d reg=%d half=%d: gpu 0x%04x (smem row %u col %u), header 0x%04x "
                     "(matrix row %d col %d)",
                     num, trans ? ".trans" : "", lane, q, i, got, (got - 0x4000u) / 8, (got - 0x4000u) % 8,
                     expect, rc.row, rc.col);
        }
  }
  std::printf("ldmatrix m8n8.b16 x1/x2/x4 (+.trans): %ld elements checked, %ld mismatches\n", checked,
              g_mismatch - before);
}

// ----------------------------------------------------------------------------
// mma.sync
// ----------------------------------------------------------------------------
struct MmaVariant {
  w::MmaShape shape;
  w::MmaType type;
  const char* name;
};
static const MmaVariant kMma[] = {
    {w::MmaShape::M16N8K16, w::MmaType::F16, "m16n8k16.row.col.f32.f16.f16.f32"},
    {w::MmaShape::M16N8K16, w::MmaType::BF16, "m16n8k16.row.col.f32.bf16.bf16.f32"},
    {w::MmaShape::M16N8K8, w::MmaType::F16, "m16n8k8.row.col.f32.f16.f16.f32"},
    {w::MmaShape::M16N8K8, w::MmaType::BF16, "m16n8k8.row.col.f32.bf16.bf16.f32"},
    {w::MmaShape::M16N8K8, w::MmaType::TF32, "m16n8k8.row.col.f32.tf32.tf32.f32"},
};
constexpr int kNumMma = 5;
constexpr int kMmaTrials = 8;

__global__ void mma_kernel(const unsigned* A, const unsigned* B, const float* C, float* D) {
  const int v = blockIdx.x % kNumMma;  // blockIdx.x = trial * kNumMma + variant
  const int lane = threadIdx.x;
  const int base = blockIdx.x * 32 + lane;
  const unsigned* a = A + base * 4;
  const unsigned* b = B + base * 2;
  const float* c = C + base * 4;
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  switch (v) {
    case 0:
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
          "{%10,%11,%12,%13};"
          : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
            "f"(c[3]));
      break;
    case 1:
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
          "{%10,%11,%12,%13};"
          : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
            "f"(c[3]));
      break;
    case 2:
      asm volatile(
          "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
          : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
          : "r"(a[0]), "r"(a[1]), "r"(b[0]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
      break;
    case 3:
      asm volatile(
          "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
          : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
          : "r"(a[0]), "r"(a[1]), "r"(b[0]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
      break;
    default:
      asm volatile(
          "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
          "{%10,%11,%12,%13};"
          : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
            "f"(c[3]));
      break;
  }
  float* o = D + base * 4;
  o[0] = d0;
  o[1] = d1;
  o[2] = d2;
  o[3] = d3;
}

static uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
// Exact encodings of small integers (|v| < 2048).
static uint32_t f16_bits(int v) {
  if (v == 0) return 0;
  const uint32_t sign = v < 0 ? 0x8000u : 0u;
  uint32_t m = static_cast<uint32_t>(v < 0 ? -v : v);
  int e = 0;
  while ((m >> (e + 1)) != 0) ++e;
  return sign | static_cast<uint32_t>(e + 15) << 10 | ((m << (10 - e)) & 0x3ffu);
}
static uint32_t bf16_bits(int v) { return float_bits(static_cast<float>(v)) >> 16; }  // exact for |v| <= 256
static uint32_t elem_bits(w::MmaType t, int v) {
  return t == w::MmaType::F16 ? f16_bits(v) : t == w::MmaType::BF16 ? bf16_bits(v) : float_bits(static_cast<float>(v));
}

static void check_mma() {
  const long before = g_mismatch;
  const int nblocks = kNumMma * kMmaTrials;
  std::vector<unsigned> ha(nblocks * 32 * 4, 0), hb(nblocks * 32 * 2, 0);
  std::vector<float> hc(nblocks * 32 * 4), hd(nblocks * 32 * 4);
  std::vector<std::vector<int>> Am(nblocks), Bm(nblocks), Cm(nblocks);
  for (int blk = 0; blk < nblocks; ++blk) {
    const MmaVariant& mv = kMma[blk % kNumMma];
    const int M = w::mma_m(mv.shape), N = w::mma_n(mv.shape), K = w::mma_k(mv.shape);
    Am[blk].resize(M * K);
    Bm[blk].resize(K * N);
    Cm[blk].resize(M * N);
    for (int& x : Am[blk]) x = rnd_int(-7, 7);
    for (int& x : Bm[blk]) x = rnd_int(-7, 7);
    for (int& x : Cm[blk]) x = rnd_int(-500, 500);
    const int epr = w::mma_ab_elems_per_reg(mv.type);
    for (int lane = 0; lane < 32; ++lane) {
      const int base = blk * 32 + lane;
      for (int i = 0; i < w::mma_a_count(mv.shape, mv.type); ++i) {
        const w::RowCol rc = w::mma_a(mv.shape, mv.type, lane, i);
        ha[base * 4 + i / epr] |= elem_bits(mv.type, Am[blk][rc.row * K + rc.col]) << (epr == 2 ? 16 * (i % 2) : 0);
      }
      for (int i = 0; i < w::mma_b_count(mv.shape, mv.type); ++i) {
        const w::RowCol rc = w::mma_b(mv.shape, mv.type, lane, i);
        hb[base * 2 + i / epr] |= elem_bits(mv.type, Bm[blk][rc.row * N + rc.col]) << (epr == 2 ? 16 * (i % 2) : 0);
      }
      for (int i = 0; i < w::mma_c_count(mv.shape, mv.type); ++i) {
        const w::RowCol rc = w::mma_c(mv.shape, mv.type, lane, i);
        hc[base * 4 + i] = static_cast<float>(Cm[blk][rc.row * N + rc.col]);
      }
    }
  }
  unsigned *da, *db;
  float *dc, *dd;
  CK(cudaMalloc(&da, ha.size() * 4));
  CK(cudaMalloc(&db, hb.size() * 4));
  CK(cudaMalloc(&dc, hc.size() * 4));
  CK(cudaMalloc(&dd, hd.size() * 4));
  CK(cudaMemcpy(da, ha.data(), ha.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(db, hb.data(), hb.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dc, hc.data(), hc.size() * 4, cudaMemcpyHostToDevice));
  mma_kernel<<<nblocks, 32>>>(da, db, dc, dd);
  CK(cudaGetLastError());
  CK(cudaMemcpy(hd.data(), dd, hd.size() * 4, cudaMemcpyDeviceToHost));
  CK(cudaFree(da));
  CK(cudaFree(db));
  CK(cudaFree(dc));
  CK(cudaFree(dd));
  long checked = 0;
  std::vector<long> per_variant(kNumMma, 0);
  for (int blk = 0; blk < nblocks; ++blk) {
    const MmaVariant& mv = kMma[blk % kNumMma];
    const int M = w::mma_m(mv.shape), N = w::mma_n(mv.shape), K = w::mma_k(mv.shape);
    std::vector<int> seen(M * N, 0);
    for (int lane = 0; lane < 32; ++lane)
      for (int i = 0; i < w::mma_c_count(mv.shape, mv.type); ++i) {
        const w::RowCol rc = w::mma_c(mv.shape, mv.type, lane, i);
        ++seen[rc.row * N + rc.col];
        long ref = Cm[blk][rc.row * N + rc.col];
        for (int k = 0; k < K; ++k) ref += static_cast<long>(Am[blk][rc.row * K + k]) * Bm[blk][k * N + rc.col];
        const float got = hd[(blk * 32 + lane) * 4 + i];
        ++checked;
        if (got != static_cast<float>(ref)) {
          ++per_variant[blk % kNumMma];
          mismatch("mma.sync.aligned.%s trial %d lane=%d d%d -> D(%d,%d): gpu %.1f, header/reference %ld", mv.name,
                   blk / kNumMma, lane, i, rc.row, rc.col, got, ref);
        }
      }
    for (int x : seen)
      if (x != 1) mismatch("mma.%s: C layout is not a bijection", mv.name);
  }
  for (int v = 0; v < kNumMma; ++v)
    std::printf("mma.sync.aligned.%s: %d random trials, %ld mismatches\n", kMma[v].name, kMmaTrials,
                per_variant[v]);
  std::printf("mma.sync total: %ld D elements checked, %ld mismatches\n", checked, g_mismatch - before);
}

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
  check_shfl();
  check_shfl_intrinsics();
  check_vote();
  check_ldmatrix();
  check_mma();
  if (g_mismatch == 0) {
    std::printf("ALL OK\n");
    return 0;
  }
  std::printf("FAILED: %ld mismatches\n", g_mismatch);
  return 1;
}
