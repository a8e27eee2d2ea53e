// Expression builders for the workloads used by the examples, tests and
// benchmarks: what a symbolic run of the kernels in VOLTA's Fig. 1 (naive and
// online softmax) and of an attention row produces. Header-only.
#pragma once

#include "tileverify/expr.hpp"

#include <vector>

namespace tileverify::workloads {

enum class ExpForm {
  Exp,       // expf
  FastMath,  // -use_fast_math: ex2(x * 0f3FB8AA3B)
};

inline Expr exp_as(ExprContext& c, Expr x, ExpForm form) {
  if (form == ExpForm::Exp) return c.exp(x);
  return c.ex2(c.mul(x, c.constant(Rational::from_f32_bits(0x3FB8AA3Bu))));
}

// Fig. 1a: buf[i] = exp(x[i]); sum = buf[0] + ... + buf[n-1]; y[i] = buf[i] / sum.
inline std::vector<Expr> naive_softmax(ExprContext& c, int n, ExpForm form = ExpForm::Exp) {
  std::vector<Expr> buf;
  for (int i = 0; i < n; ++i) buf.push_back(exp_as(c, c.symbol("x", std::uint32_t(i)), form));
  Expr sum = c.zero();
  for (int i = 0; i < n; ++i) sum = c.add(sum, buf[std::size_t(i)]);
  std::vector<Expr> y;
  for (int i = 0; i < n; ++i) y.push_back(c.div(buf[std::size_t(i)], sum));
  return y;
}

// Fig. 1b: the online softmax with a running max m and running denominator d.
// With rescale = false the d * exp(m - new_m) factor is dropped (a classic bug).
inline std::vector<Expr> online_softmax(ExprContext& c, int n, ExpForm form = ExpForm::Exp, bool rescale = true) {
  Expr m = c.neg_inf(), d = c.zero();
  for (int i = 0; i < n; ++i) {
    Expr v = c.symbol("x", std::uint32_t(i));
    Expr new_m = c.max(m, v);
    Expr scaled = rescale ? c.mul(d, exp_as(c, c.sub(m, new_m), form)) : d;
    d = c.add(scaled, exp_as(c, c.sub(v, new_m), form));
    m = new_m;
  }
  std::vector<Expr> y;
  for (int i = 0; i < n; ++i) y.push_back(c.div(exp_as(c, c.sub(c.symbol("x", std::uint32_t(i)), m), form), d));
  return y;
}

// One attention row: s_j = (sum_c q[c] k[j,c]) / 8, y_d = sum_j e^{s_j - m} v[j,d] / sum_j e^{s_j - m}.
struct AttentionShape {
  int keys = 512;
  int dims = 64;
  int block = 64;  // keys per block in the FlashAttention-2 form
};

inline std::vector<Expr> attention_scores(ExprContext& c, const AttentionShape& s) {
  std::vector<Expr> scores;
  Expr eighth = c.constant(Rational(1, 8));
  for (int j = 0; j < s.keys; ++j) {
    Expr acc = c.zero();
    for (int k = 0; k < s.dims; ++k)
      acc = c.add(acc, c.mul(c.symbol("q", std::uint32_t(k)), c.symbol("k", std::uint32_t(j * s.dims + k))));
    scores.push_back(c.mul(acc, eighth));
  }
  return scores;
}

inline std::vector<Expr> attention_naive(ExprContext& c, const AttentionShape& s) {
  std::vector<Expr> sc = attention_scores(c, s);
  Expr m = c.max(sc);
  std::vector<Expr> p;
  Expr l = c.zero();
  for (int j = 0; j < s.keys; ++j) {
    p.push_back(c.exp(c.sub(sc[std::size_t(j)], m)));
    l = c.add(l, p.back());
  }
  std::vector<Expr> y;
  for (int d = 0; d < s.dims; ++d) {
    Expr o = c.zero();
    for (int j = 0; j < s.keys; ++j) o = c.add(o, c.mul(p[std::size_t(j)], c.symbol("v", std::uint32_t(j * s.dims + d))));
    y.push_back(c.div(o, l));
  }
  return y;
}

// FlashAttention-2: blocks of keys, rescaling by exp(m_old - m_new), and the
// division by l deferred to the end.
inline std::vector<Expr> attention_fa2(ExprContext& c, const AttentionShape& s) {
  std::vector<Expr> sc = attention_scores(c, s);
  Expr m = c.neg_inf(), l = c.zero();
  std::vector<Expr> o(std::size_t(s.dims), c.zero());
  for (int b0 = 0; b0 < s.keys; b0 += s.block) {
    std::vector<Expr> blk(sc.begin() + b0, sc.begin() + b0 + s.block);
    Expr m_new = c.max(m, c.max(blk));
    Expr alpha = c.exp(c.sub(m, m_new));
    std::vector<Expr> p;
    Expr lsum = c.zero();
    for (int j = b0; j < b0 + s.block; ++j) {
      p.push_back(c.exp(c.sub(sc[std::size_t(j)], m_new)));
      lsum = c.add(lsum, p.back());
    }
    l = c.add(c.mul(l, alpha), lsum);
    for (int d = 0; d < s.dims; ++d) {
      Expr acc = c.zero();
      for (int j = b0; j < b0 + s.block; ++j)
        acc = c.add(acc, c.mul(p[std::size_t(j - b0)], c.symbol("v", std::uint32_t(j * s.dims + d))));
      o[std::size_t(d)] = c.add(c.mul(o[std::size_t(d)], alpha), acc);
    }
    m = m_new;
  }
  std::vector<Expr> y;
  for (int d = 0; d < s.dims; ++d) y.push_back(c.div(o[std::size_t(d)], l));
  return y;
}

// FlashAttention-1: blocks of keys with the output normalized after every
// block, o = (l_old e^{m_old - m_new} o + e^{mt - m_new} P V) / l_new, as
// FA1 and examples/kernels/attention/fa1.cu compute it.
inline std::vector<Expr> attention_fa1(ExprContext& c, const AttentionShape& s) {
  std::vector<Expr> sc = attention_scores(c, s);
  Expr m = c.neg_inf(), l = c.zero();
  std::vector<Expr> o(std::size_t(s.dims), c.zero());
  for (int b0 = 0; b0 < s.keys; b0 += s.block) {
    std::vector<Expr> blk(sc.begin() + b0, sc.begin() + b0 + s.block);
    Expr mt = c.max(blk);
    Expr m_new = c.max(m, mt);
    Expr keep = c.mul(l, c.exp(c.sub(m, m_new)));
    Expr add = c.exp(c.sub(mt, m_new));
    std::vector<Expr> p;
    Expr lt = c.zero();
    for (int j = b0; j < b0 + s.block; ++j) {
      p.push_back(c.exp(c.sub(sc[std::size_t(j)], mt)));
      lt = c.add(lt, p.back());
    }
    Expr l_new = c.add(keep, c.mul(add, lt));
    for (int d = 0; d < s.dims; ++d) {
      Expr pv = c.zero();
      for (int j = b0; j < b0 + s.block; ++j)
        pv = c.add(pv, c.mul(p[std::size_t(j - b0)], c.symbol("v", std::uint32_t(j * s.dims + d))));
      o[std::size_t(d)] = c.div(c.add(c.mul(keep, o[std::size_t(d)]), c.mul(add, pv)), l_new);
    }
    m = m_new;
    l = l_new;
  }
  return o;
}

}  // namespace tileverify::workloads
