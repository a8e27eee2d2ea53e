// Readable infix printing of expressions.
#include "tileverify/expr.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace tileverify {

namespace {

// Short exact decimal for dyadic/decimal rationals ("0.125"), else "n/d".
std::string rational_text(const Rational& v, bool* is_fraction) {
  *is_fraction = false;
  if (v.is_integer()) return v.str();
  // Float constants (dyadic, exactly a double) read best as their decimal:
  // 12102203/8388608 is nvcc's log2(e), 1.44269502.
  int k = 0, sg = 0;
  if (v.odd_part().is_integer() && !v.is_signed_power_of_two(&k, &sg)) {
    double d = v.to_double();
    if (Rational::from_double(d) == v) {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.9g", d);
      std::string t = buf;
      if (t.find_first_of(".e") != std::string::npos && t.size() <= 16) return t;
    }
  }
  std::string s = v.str();
  auto slash = s.find('/');
  if (slash != std::string::npos && s.size() < 40) {
    // Try an exact decimal of at most 12 fraction digits.
    Rational x = v;
    bool neg = x.sign() < 0;
    if (neg) x = -x;
    Rational ip = x.floor();
    Rational frac = x - ip;
    std::string digits;
    for (int i = 0; i < 12 && !frac.is_zero(); ++i) {
      frac = frac * Rational(10);
      Rational d = frac.floor();
      digits += char('0' + d.to_int64());
      frac = frac - d;
    }
    if (frac.is_zero()) return (neg ? "-" : "") + ip.str() + "." + digits;
  }
  *is_fraction = true;
  return s;
}

class Printer {
 public:
  Printer(const ExprContext& ctx, std::size_t limit) : ctx_(ctx), limit_(limit) {}
  std::string out;

  void print(Expr e, int prec) {
    if (full()) return;
    if (depth_ >= kMaxDepth) {  // deep chains (long accumulations) would exhaust the stack
      out += "...";
      limit_ = out.size();  // nothing more after the cut
      return;
    }
    struct Depth {
      int& d;
      explicit Depth(int& x) : d(x) { ++d; }
      ~Depth() { --d; }
    } guard(depth_);
    switch (ctx_.op(e)) {
      case Op::Const: {
        bool frac = false;
        std::string t = rational_text(ctx_.constant_value(e), &frac);
        bool paren = (frac && prec >= 2) || (t[0] == '-' && prec >= 2);
        emit(paren ? "(" + t + ")" : t);
        return;
      }
      case Op::NegInf: emit(prec >= 2 ? "(-inf)" : "-inf"); return;
      case Op::PosInf: emit("inf"); return;
      case Op::Named: emit(ctx_.name(e)); return;
      case Op::Symbol:
        emit(ctx_.symbol_tensor(e) + "[" + std::to_string(ctx_.symbol_index(e)) + "]");
        return;
      case Op::Add: print_add(e, prec); return;
      case Op::Mul: print_mul(e, prec); return;
      case Op::Pow: {
        int k = ctx_.pow_exponent(e);
        Expr base = ctx_.children(e)[0];
        if (k < 0) {
          if (prec >= 2) emit("(");
          emit("1/");
          print_power(base, -k);
          if (prec >= 2) emit(")");
        } else {
          print_power(base, k);
        }
        return;
      }
      case Op::Exp: {
        // exp(y * ln2) is how 2^y is built: print it as ex2(y).
        Expr arg = ctx_.children(e)[0];
        if (ctx_.op(arg) == Op::Mul) {
          std::vector<Expr> rest;
          bool has_ln2 = false;
          for (Expr f : ctx_.children(arg)) {
            if (!has_ln2 && ctx_.op(f) == Op::Named && ctx_.name(f) == "ln2")
              has_ln2 = true;
            else
              rest.push_back(f);
          }
          if (has_ln2) {
            emit("ex2(");
            for (std::size_t i = 0; i < rest.size(); ++i) {
              if (i) emit("*");
              print(rest[i], 2);
            }
            emit(")");
            return;
          }
        }
        call("exp", e);
        return;
      }
      case Op::Max: call("max", e); return;
      case Op::Min: call("min", e); return;
      case Op::Func: call(ctx_.name(e), e); return;
      case Op::Select: {
        auto k = ctx_.children(e);
        emit("select(");
        print(k[0], 1);
        emit(std::string(" ") + cmp_symbol(ctx_.select_cmp(e)) + " ");
        print(k[1], 1);
        emit(", ");
        print(k[2], 0);
        emit(", ");
        print(k[3], 0);
        emit(")");
        return;
      }
    }
  }

 private:
  bool full() const { return out.size() >= limit_; }
  void emit(const std::string& s) {
    if (full()) return;
    out += s;
    if (out.size() >= limit_) {
      out.resize(limit_);
      out += "...";
    }
  }

  void call(const std::string& fname, Expr e) {
    emit(fname + "(");
    bool first = true;
    for (Expr c : ctx_.children(e)) {
      if (!first) emit(", ");
      first = false;
      print(c, 0);
    }
    emit(")");
  }

  void print_power(Expr base, int k) {
    print(base, 3);
    if (k != 1) emit("^" + std::to_string(k));
  }

  // A term's sign, so that sums read "a - b" rather than "a + -1*b".
  bool negative_term(Expr t) const {
    if (ctx_.op(t) == Op::Const) return ctx_.constant_value(t).sign() < 0;
    if (ctx_.op(t) == Op::Mul)
      for (Expr c : ctx_.children(t))
        if (ctx_.op(c) == Op::Const) return ctx_.constant_value(c).sign() < 0;
    return false;
  }

  void print_add(Expr e, int prec) {
    if (prec > 1) emit("(");
    // Nested sums print without parentheses, so gather their terms
    // iteratively: accumulation chains are far deeper than the stack.
    std::vector<Expr> terms, consts, stack;
    for (std::size_t i = ctx_.children(e).size(); i-- > 0;) stack.push_back(ctx_.children(e)[i]);
    while (!stack.empty() && terms.size() < limit_) {
      Expr t = stack.back();
      stack.pop_back();
      if (ctx_.op(t) == Op::Add) {
        for (std::size_t i = ctx_.children(t).size(); i-- > 0;) stack.push_back(ctx_.children(t)[i]);
      } else {
        (ctx_.op(t) == Op::Const ? consts : terms).push_back(t);
      }
    }
    bool first = true;
    auto term = [&](Expr t) {
      bool neg = negative_term(t);
      if (first)
        emit(neg ? "-" : "");
      else
        emit(neg ? " - " : " + ");
      first = false;
      if (neg)
        print_mul_like(t, true, 2);
      else
        print(t, 1);
    };
    for (Expr t : terms) term(t);
    for (Expr t : consts) term(t);
    if (!stack.empty()) emit(" + ...");
    if (prec > 1) emit(")");
  }

  void print_mul(Expr e, int prec) {
    if (negative_term(e)) {
      if (prec >= 2) emit("(");
      emit("-");
      print_mul_like(e, true, 2);
      if (prec >= 2) emit(")");
    } else {
      print_mul_like(e, false, prec);
    }
  }

  // Prints a product (or a constant) with its sign dropped when `abs` is set.
  void print_mul_like(Expr e, bool abs, int prec) {
    if (ctx_.op(e) == Op::Const) {
      Rational v = ctx_.constant_value(e);
      if (abs && v.sign() < 0) v = -v;
      bool frac = false;
      std::string t = rational_text(v, &frac);
      emit(frac && prec >= 2 ? "(" + t + ")" : t);
      return;
    }
    if (ctx_.op(e) != Op::Mul) {
      print(e, prec);
      return;
    }
    Rational coef(1);
    std::vector<Expr> num, den;
    std::vector<int> den_k;
    for (Expr c : ctx_.children(e)) {
      if (ctx_.op(c) == Op::Const)
        coef = ctx_.constant_value(c);
      else if (ctx_.op(c) == Op::Pow && ctx_.pow_exponent(c) < 0) {
        den.push_back(ctx_.children(c)[0]);
        den_k.push_back(-ctx_.pow_exponent(c));
      } else
        num.push_back(c);
    }
    if (abs && coef.sign() < 0) coef = -coef;
    bool paren = prec >= 3 || (prec >= 2 && !den.empty());
    if (paren) emit("(");
    bool first = true;
    if (!coef.is_one() || num.empty()) {
      bool frac = false;
      std::string t = rational_text(coef, &frac);
      emit(frac || t[0] == '-' ? "(" + t + ")" : t);
      first = false;
    }
    for (Expr c : num) {
      if (!first) emit("*");
      first = false;
      print(c, 2);
    }
    if (!den.empty()) {
      emit(" / ");
      bool group = den.size() > 1;
      if (group) emit("(");
      for (std::size_t i = 0; i < den.size(); ++i) {
        if (i) emit("*");
        print_power(den[i], den_k[i]);
      }
      if (group) emit(")");
    }
    if (paren) emit(")");
  }

  static constexpr int kMaxDepth = 512;
  const ExprContext& ctx_;
  std::size_t limit_;
  int depth_ = 0;
};

}  // namespace

std::string ExprContext::to_string(Expr e, std::size_t max_chars) const {
  Printer p(*this, max_chars == 0 ? 1 : max_chars);
  p.print(e, 0);
  return p.out;
}

}  // namespace tileverify
