// The value types, and what they are for: one templated kernel source run
// with fpsan::f32 tells equivalent formulations from wrong ones.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "test_support.hpp"
#include "tileverify/fpsan.hpp"

using namespace tileverify::fpsan;
using payload_test::kSamples;
using payload_test::payload_rng;
using payload_test::u64;

// ---------------------------------------------------------------------------
// "Kernels", written once for any scalar type the way CUDA code spells them.
// ---------------------------------------------------------------------------
namespace kernels {

template <class T>
T dot_forward(const T* a, const T* b, int n) {
  T acc = 0;
  for (int i = 0; i < n; ++i) acc = fmaf(a[i], b[i], acc);
  return acc;
}

// Pairwise tree reduction, as a warp shuffle reduction would order it.
template <class T>
T dot_tree(const T* a, const T* b, int n) {
  std::vector<T> p(n);
  for (int i = 0; i < n; ++i) p[i] = a[i] * b[i];
  for (int stride = 1; stride < n; stride *= 2)
    for (int i = 0; i + stride < n; i += 2 * stride) p[i] += p[i + stride];
  return p[0];
}

template <class T>
T dot_wrong_index(const T* a, const T* b, int n) {  // off-by-one on b
  T acc = 0;
  for (int i = 0; i < n; ++i) acc += a[i] * b[(i + 1) % n];
  return acc;
}

// Softmax-weighted sum: sum_i exp(x_i - m) v_i / sum_i exp(x_i - m).
template <class T>
T softmax_weighted_two_pass(const T* x, const T* v, int n) {
  T m = std::numeric_limits<T>::lowest();
  for (int i = 0; i < n; ++i) m = fmaxf(m, x[i]);
  T l = 0, o = 0;
  for (int i = 0; i < n; ++i) {
    const T e = expf(x[i] - m);
    l += e;
    o += e * v[i];
  }
  return o / l;
}

// The online (FlashAttention) form: one pass, rescaling the running sums
// whenever the running maximum grows.
template <class T>
T softmax_weighted_online(const T* x, const T* v, int n, bool rescale = true) {
  T m = std::numeric_limits<T>::lowest(), l = 0, o = 0;
  for (int i = 0; i < n; ++i) {
    const T m_new = fmaxf(m, x[i]);
    const T scale = rescale ? expf(m - m_new) : T(1);
    const T e = expf(x[i] - m_new);
    l = l * scale + e;
    o = o * scale + e * v[i];
    m = m_new;
  }
  return o / l;
}

// exp2 with a pre-scaled input, as Triton's softmax does it (x * log2(e)).
template <class T>
T softmax_denominator_exp2(const T* x, int n, T log2e) {
  T m = std::numeric_limits<T>::lowest(), l = 0;
  for (int i = 0; i < n; ++i) {
    const T m_new = max(m, x[i]);
    l = l * exp2f((m - m_new) * log2e) + exp2f((x[i] - m_new) * log2e);
    m = m_new;
  }
  return l;
}

// Mixed precision: half inputs, float accumulation.
template <class TIn, class TAcc>
TAcc dot_mixed(const TIn* a, const TIn* b, int n) {
  TAcc acc = 0;
  for (int i = 0; i < n; ++i) acc += TAcc(a[i]) * TAcc(b[i]);
  return acc;
}

}  // namespace kernels

namespace {

std::vector<float> random_floats(std::uint64_t seed, int n) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<float> d(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(g);
  return v;
}

template <class T>
std::vector<T> as(const std::vector<float>& v) {
  return std::vector<T>(v.begin(), v.end());
}

}  // namespace

TEST_CASE("value types: size, construction, conversion back") {
  CHECK(f32(1.0f).payload() == 1);
  CHECK(f32(-1.0f).payload() == 0xffffffffu);
  CHECK(f16(1.0f).payload() == 1);
  CHECK(bf16(-1.0f).payload() == 0xffffu);
  CHECK(f64(1.0).payload() == 1);
  CHECK(f32(0).payload() == 0);
  CHECK(f32{}.payload() == 0);  // value-initialised: +0
  CHECK(f32(2).payload() == 0x27f60280u);  // integers convert like float(2)
  CHECK(f32(2.0).payload() == 0x27f60280u);
  std::mt19937_64 g(60);
  for (int i = 0; i < 100000; ++i) {
    const std::uint32_t u = static_cast<std::uint32_t>(g());
    const f32 x = f32::from_bits(u);
    REQUIRE(x.bits() == u);
    float f;
    std::memcpy(&f, &u, 4);
    if (!std::isnan(f)) {
      REQUIRE(f32(f).payload() == x.payload());
      REQUIRE(x.to_float() == f);
      REQUIRE(static_cast<float>(x) == f);
    }
    const u64 d = g();
    REQUIRE(f64::from_bits(d).bits() == d);
  }
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    REQUIRE(f16::from_bits(h).bits() == h);
    REQUIRE(bf16::from_payload(h).payload() == h);
    const float hf = f16::from_bits(h).to_float();
    if (!std::isnan(hf)) REQUIRE(f16(hf).bits() == h);
  }
}

TEST_CASE("value operators are the payload ops") {
  payload_rng<32> r(61);
  for (int i = 0; i < kSamples; ++i) {
    const u64 p = r(), q = r(), s = r();
    const f32 x = f32::from_payload(p), y = f32::from_payload(q), z = f32::from_payload(s);
    REQUIRE((x + y).payload() == add<32>(p, q));
    REQUIRE((x - y).payload() == sub<32>(p, q));
    REQUIRE((x * y).payload() == mul<32>(p, q));
    REQUIRE((x / y).payload() == div<32>(p, q));
    REQUIRE((-x).payload() == neg<32>(p));
    REQUIRE(fmaf(x, y, z).payload() == fma<32>(p, q, s));
    REQUIRE(fma(x, y, z) == x * y + z);
    REQUIRE(fminf(x, y).payload() == min<32>(p, q));
    REQUIRE(fmax(x, y).payload() == max<32>(p, q));
    REQUIRE(fmodf(x, y).payload() == rem<32>(p, q));
    REQUIRE(expf(x).payload() == exp<32>(p));
    REQUIRE(__expf(x) == expf(x));
    REQUIRE(exp2f(x).payload() == exp2<32>(p));
    REQUIRE(sinf(x).payload() == sin<32>(p));
    REQUIRE(cosf(x).payload() == cos<32>(p));
    REQUIRE(logf(x).payload() == log<32>(p));
    REQUIRE(log2f(x).payload() == log2<32>(p));
    REQUIRE(sqrtf(x).payload() == sqrt<32>(p));
    REQUIRE(__fsqrt_rn(x).payload() == precise_sqrt<32>(p));
    REQUIRE(rsqrtf(x).payload() == rsqrt<32>(p));
    REQUIRE(erff(x).payload() == erf<32>(p));
    REQUIRE(floorf(x).payload() == floor<32>(p));
    REQUIRE(ceilf(x).payload() == ceil<32>(p));
    f32 sv, cv;
    sincosf(x, &sv, &cv);
    REQUIRE((sv == sinf(x) && cv == cosf(x)));
    // comparisons: payload equality and the signed payload order of fmin/fmax
    REQUIRE((x == y) == (p == q));
    REQUIRE((x < y) == signed_less<32>(p, q));
    REQUIRE((x < y ? x : y) == fminf(x, y));
    REQUIRE(std::max(x, y) == fmaxf(x, y));
    f32 acc = x;
    acc += y;
    acc *= z;
    acc -= x;
    acc /= y;
    REQUIRE(acc == ((x + y) * z - x) / y);
    // embed(-x) = -embed(x): negating the float negates the payload (x != +-0)
    const float fx = x.to_float();
    if (!std::isnan(fx) && fx != 0.0f) REQUIRE(f32(-fx) == -x);
  }
  CHECK(f32(-0.0f).payload() == 0x80000000u);  // -0.0 is not -(+0.0) in payload space
  CHECK(-f32(0.0f) == f32(0.0f));
}

TEST_CASE("fabs is Triton's untouched absf: the sign bit of the unembedded float") {
  payload_rng<32> r(62);
  for (int i = 0; i < kSamples; ++i) {
    const f32 x = f32::from_payload(r());
    const f32 a = fabsf(x);
    REQUIRE((a.bits() >> 31) == 0);
    REQUIRE((a.to_float() == std::fabs(x.to_float()) || std::isnan(x.to_float())));
    // which on payloads is the signed absolute value, except at -0.0
    if (x.payload() != 0x80000000u) REQUIRE(a == (x < f32(0) ? -x : x));
  }
  CHECK(fabs(f32::from_payload(0x80000000u)).payload() == 0);
}

TEST_CASE("casts between value types") {
  payload_rng<16> r(63);
  for (int i = 0; i < kSamples; ++i) {
    const f16 h = f16::from_payload(r());
    const f32 w = h;  // implicit widening, sign extension
    REQUIRE(w.payload() == cast<16, 32>(h.payload()));
    REQUIRE(f16(w) == h);            // f16 -> f32 -> f16 is the identity
    REQUIRE(f16(f64(w)) == h);       // through f64 as well
    REQUIRE(bf16(h).payload() == h.payload());  // same width: payload kept
    REQUIRE((h + w) == f32(h) + w);  // mixed arithmetic happens in the wider type
  }
  for (float c : {0.0f, 1.0f, -1.0f}) {  // 0, +1 and -1 survive every cast as numbers
    CAPTURE(c);
    CHECK(f32(f16(c)).to_float() == c);
    CHECK(f16(f32(c)).to_float() == c);
    CHECK(bf16(f64(c)).to_float() == c);
    CHECK(f64(bf16(c)).to_double() == c);
    CHECK(f16(f64(c)).to_float() == c);
  }
  const f32 big = f32::from_payload(0x12345678u);
  CHECK(f16(big).payload() == 0xf154);  // folded narrowing by default
  CHECK(convert<f16>(big, cast_mode::homomorphic).payload() == 0x5678);
  CHECK(std::numeric_limits<f32>::lowest().payload() == 0x80000000u);
  CHECK(std::numeric_limits<f32>::infinity().to_float() == INFINITY);
  CHECK(isinf(std::numeric_limits<f16>::infinity()));
  CHECK(isnan(std::numeric_limits<bf16>::quiet_NaN()));
  CHECK(isfinite(f32(3.0f)));
  f16 lo, hi;
  unpack_fp4(0xa3, lo, hi);
  CHECK((lo.payload() == 3 && hi.payload() == 10));
}

TEST_CASE("extern calls tag operands, their order and the symbol") {
  const f32 x = 2.0f, y = 3.0f;
  const u64 ops[] = {x.payload(), y.payload()};
  CHECK(extern_call<f32>("__nv_powf", x, y).payload() ==
        extern_elementwise<32>(stable_string_hash("__nv_powf"), ops, 2));
  CHECK(extern_call<f32>("__nv_powf", x, y) != extern_call<f32>("__nv_powf", y, x));
  CHECK(extern_call<f32>("__nv_powf", x, y) != extern_call<f32>("__nv_atan2f", x, y));
  // integer operands are sign-cast to the result width, bool as i1
  const u64 int_ops[] = {x.payload(), 0xfffffffeu, 0xffffffffu};
  CHECK(extern_call<f32>("__nv_ldexpf", x, -2, true).payload() ==
        extern_elementwise<32>(stable_string_hash("__nv_ldexpf"), int_ops, 3));
  // Triton's alias table: known libdevice symbols with an all-f32 signature are the modelled op.
  const f32 z = 5.0f;
  CHECK(extern_call<f32>("__nv_expf", x) == expf(x));
  CHECK(extern_call<f32>("__nv_fast_expf", x) == expf(x));
  CHECK(extern_call<f32>("__nv_exp2f", x) == exp2f(x));
  CHECK(extern_call<f32>("__nv_logf", x) == logf(x));
  CHECK(extern_call<f32>("__nv_log2f", x) == log2f(x));
  CHECK(extern_call<f32>("__nv_cosf", x) == cosf(x));
  CHECK(extern_call<f32>("__nv_sinf", x) == sinf(x));
  CHECK(extern_call<f32>("__nv_rsqrtf", x) == rsqrtf(x));
  CHECK(extern_call<f32>("__nv_erff", x) == erff(x));
  CHECK(extern_call<f32>("__nv_floorf", x) == floorf(x));
  CHECK(extern_call<f32>("__nv_ceilf", x) == ceilf(x));
  CHECK(extern_call<f32>("__nv_fsqrt_rn", x) == __fsqrt_rn(x));
  CHECK(extern_call<f32>("__nv_fdiv_rn", x, y) == x / y);
  CHECK(extern_call<f32>("__nv_fmaf", x, y, z) == fmaf(x, y, z));
  CHECK(extern_call<f32>("__nv_expf", 2.0f) == expf(x));  // a plain float operand is an f32 operand
  // ... but not with another signature or arity: then it is the structural tag
  const u64 one_op[] = {x.payload()};
  CHECK(extern_call<f32>("__nv_expf", x, y) == extern_call_hashed<f32>(stable_string_hash("__nv_expf"), x, y));
  CHECK(extern_call_hashed<f32>(stable_string_hash("__nv_expf"), x).payload() ==
        extern_elementwise<32>(stable_string_hash("__nv_expf"), one_op, 1));
  CHECK(extern_call<f32>("__nv_expf", x) != extern_call_hashed<f32>(stable_string_hash("__nv_expf"), x));
  CHECK(extern_call<f64>("__nv_exp", f64(2.0)) != exp(f64(2.0)));
  CHECK(extern_call<f32>("__nv_expf", f16(2.0f)) != expf(f32(f16(2.0f))));
  // an f16 operand of an f32 call is sign-cast too
  const u64 mixed[] = {cast<16, 32>(f16(2.0f).payload())};
  CHECK(extern_call<f32>("__nv_tanhf", f16(2.0f)).payload() ==
        extern_elementwise<32>(stable_string_hash("__nv_tanhf"), mixed, 1));
}

TEST_CASE("templated dot product: equal formulations agree, a wrong one does not") {
  for (int seed = 0; seed < 50; ++seed) {
    const int n = 64;
    const auto af = random_floats(100 + seed, n), bf = random_floats(200 + seed, n);
    const auto a = as<f32>(af), b = as<f32>(bf);
    const f32 fwd = kernels::dot_forward(a.data(), b.data(), n);
    CHECK(fwd == kernels::dot_tree(a.data(), b.data(), n));
    CHECK(fwd != kernels::dot_wrong_index(a.data(), b.data(), n));
    // raw dot op of payload.hpp agrees with the value-type kernel
    std::vector<u64> pa, pb;
    for (int i = 0; i < n; ++i) {
      pa.push_back(a[i].payload());
      pb.push_back(b[i].payload());
    }
    CHECK(fwd.payload() == dot<32, 32>(0, pa.data(), pb.data(), n));
  }
}

TEST_CASE("templated online softmax: the rescaled form equals the two-pass form and dropping the rescale is caught") {
  int float_mismatches = 0, max_first_runs = 0;
  for (int seed = 0; seed < 50; ++seed) {
    const int n = 40;
    const auto xf = random_floats(300 + seed, n), vf = random_floats(400 + seed, n);
    const auto x = as<f32>(xf), v = as<f32>(vf);
    const f32 two_pass = kernels::softmax_weighted_two_pass(x.data(), v.data(), n);
    const f32 online = kernels::softmax_weighted_online(x.data(), v.data(), n);
    const f32 no_rescale = kernels::softmax_weighted_online(x.data(), v.data(), n, /*rescale=*/false);
    CHECK(two_pass == online);
    // Without the rescale the sums mix terms taken against different maxima;
    // only when the first element is already the (payload) maximum is there
    // nothing to rescale, and then the two agree exactly.
    const bool max_first = std::max_element(x.begin(), x.end()) == x.begin();
    if (max_first)
      CHECK(two_pass == no_rescale);
    else
      CHECK(two_pass != no_rescale);
    max_first_runs += max_first;
    // Half precision and double run the same source.
    const auto xh = as<f16>(xf), vh = as<f16>(vf);
    CHECK(kernels::softmax_weighted_two_pass(xh.data(), vh.data(), n) ==
          kernels::softmax_weighted_online(xh.data(), vh.data(), n));
    const auto xd = as<f64>(xf), vd = as<f64>(vf);
    CHECK(kernels::softmax_weighted_two_pass(xd.data(), vd.data(), n) ==
          kernels::softmax_weighted_online(xd.data(), vd.data(), n));
    // The exp2 variant: l * exp2((m - m') c) + ... is exactly the two-pass denominator.
    const f32 log2e = 1.4426950408889634f;
    f32 l_direct = 0, m = std::numeric_limits<f32>::lowest();
    for (const f32& xi : x) m = max(m, xi);
    for (const f32& xi : x) l_direct += exp2f((xi - m) * log2e);
    CHECK(kernels::softmax_denominator_exp2(x.data(), n, log2e) == l_direct);
    // The same kernels in float: equal only up to rounding (usually not bit-equal).
    const float tf = kernels::softmax_weighted_two_pass(xf.data(), vf.data(), n);
    const float of = kernels::softmax_weighted_online(xf.data(), vf.data(), n);
    CHECK(std::fabs(tf - of) <= 1e-4f * (1 + std::fabs(tf)));
    float_mismatches += tf != of;
  }
  CHECK(max_first_runs < 10);  // the wrong kernel was caught in most runs
  MESSAGE("float two-pass vs online differed bitwise in " << float_mismatches << " of 50 runs");
}

TEST_CASE("templated mixed precision: half inputs, float accumulation") {
  const int n = 32;
  const auto af = random_floats(500, n), bf = random_floats(501, n);
  const auto a = as<f16>(af), b = as<f16>(bf);
  const f32 acc = kernels::dot_mixed<f16, f32>(a.data(), b.data(), n);
  std::vector<u64> pa, pb;
  for (int i = 0; i < n; ++i) {
    pa.push_back(a[i].payload());
    pb.push_back(b[i].payload());
  }
  CHECK(acc.payload() == dot<32, 16>(0, pa.data(), pb.data(), n));  // Triton's tl.dot(f16, f16) -> f32
  CHECK(acc != f32(kernels::dot_mixed<f16, f16>(a.data(), b.data(), n)));
}
