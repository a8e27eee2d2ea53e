// Readable infix printing of expressions.
#include "tileverify/expr.hpp"

#include "../decide/known_constants.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>

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
        if (auto merged = exponentials({e})) {
          print_exponential(*merged);
          return;
        }
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
    // 2^y factors print as one exponential (see print_exponentials).
    std::vector<Expr> ex2s;
    for (Expr c : num)
      if (ex2_exponent(c, nullptr)) ex2s.push_back(c);
    const std::optional<Exponential> merged = ex2s.empty() ? std::nullopt : exponentials(ex2s);
    if (merged) {
      if (!first) emit("*");
      first = false;
      print_exponential(*merged);
    }
    for (Expr c : num) {
      if (merged && std::find(ex2s.begin(), ex2s.end(), c) != ex2s.end()) continue;
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

  // ---- exponentials as the source wrote them
  //
  // nvcc's expf(x) is a range reduction, 2^n · 2^(x·log2e - n) with
  // n = 252·min(1, max(0, x·log2e/252 + 0.5)) - 126, and __expf(x) is
  // 2^(x·0f3FB8AA3B). As reals both are e^x, once the float log2(e) is read
  // as 1/ln 2, as the decider reads it (known_constants(), docs/decide.md).
  // So the 2^y factors of a product print as one exponential, their
  // exponents summed (n cancels), and as exp(...) when every coefficient of
  // the sum reads as a multiple of 1/ln 2: exp(x[0]), not the reduction.
  // Only the printing changes: the decider sees the expression as built.

  // A sum of products of atoms: the atoms' handles (sorted) -> coefficient;
  // the empty key is the constant term.
  using Linear = std::map<std::vector<std::uint32_t>, Rational>;

  // Whether e is 2^y, built as exp(y·ln2); its exponent y as a sum in *out.
  bool ex2_exponent(Expr e, Linear* out) const {
    if (ctx_.op(e) != Op::Exp) return false;
    const Expr arg = ctx_.children(e)[0];
    if (ctx_.op(arg) != Op::Mul) return false;
    std::vector<Expr> rest;
    bool has_ln2 = false;
    for (Expr f : ctx_.children(arg)) {
      if (!has_ln2 && ctx_.op(f) == Op::Named && ctx_.name(f) == "ln2")
        has_ln2 = true;
      else
        rest.push_back(f);
    }
    if (!has_ln2) return false;
    if (!out) return true;
    int budget = 512;  // nodes looked at: a huge exponent prints as it is
    return add_product(rest, Rational(1), *out, budget);
  }

  // k · (the product of fs), added to out.
  bool add_product(const std::vector<Expr>& fs, Rational k, Linear& out, int& budget) const {
    std::vector<std::uint32_t> atoms;
    for (Expr f : fs) {
      if (ctx_.op(f) == Op::Const)
        k = k * ctx_.constant_value(f);
      else
        atoms.push_back(f.id);
    }
    if (atoms.size() == 1) return add_linear(Expr{atoms[0]}, k, out, budget);
    std::sort(atoms.begin(), atoms.end());
    out[atoms] = out[atoms] + k;
    return true;
  }
  bool add_linear(Expr e, const Rational& k, Linear& out, int& budget) const {
    if (--budget < 0) return false;
    switch (ctx_.op(e)) {
      case Op::Const: out[{}] = out[{}] + k * ctx_.constant_value(e); return true;
      case Op::Add:
        for (Expr c : ctx_.children(e))
          if (!add_linear(c, k, out, budget)) return false;
        return true;
      case Op::Mul: {
        std::vector<Expr> fs;
        for (Expr c : ctx_.children(e)) fs.push_back(c);
        return add_product(fs, k, out, budget);
      }
      default: out[{e.id}] = out[{e.id}] + k; return true;
    }
  }

  // The product of 2^y factors as one exponential: e^nats · 2^whole when
  // every coefficient reads as a multiple of 1/ln 2, else 2^bits.
  struct Exponential {
    bool in_nats = false;
    Linear nats, bits;
    Rational whole;
  };
  // None for a single factor whose exponent does not read so (it prints as
  // ex2(y), as built) or an exponent too large to look at.
  std::optional<Exponential> exponentials(const std::vector<Expr>& ex2s) const {
    Linear bits;
    for (Expr e : ex2s)
      if (!ex2_exponent(e, &bits)) return std::nullopt;
    Linear nats;  // the exponent in base e, where every coefficient reads so
    Rational whole(0);  // a constant left in base 2
    bool in_nats = true;
    for (const auto& [atoms, c] : bits) {
      if (c.is_zero()) continue;
      if (atoms.empty()) {
        whole = c;
        continue;
      }
      Rational r;
      int ln2_power = 0;
      if (detail::read_known_constant(c, &r, &ln2_power) && ln2_power == -1)
        nats[atoms] = r;
      else
        in_nats = false;
    }
    if (in_nats && !nats.empty()) return Exponential{true, std::move(nats), {}, whole};
    if (ex2s.size() < 2) return std::nullopt;
    return Exponential{false, {}, std::move(bits), Rational(0)};
  }
  void print_exponential(const Exponential& x) {
    emit(x.in_nats ? "exp(" : "ex2(");
    print_linear(x.in_nats ? x.nats : x.bits);
    emit(")");
    if (!x.whole.is_zero()) {
      emit("*ex2(");
      print_linear({{{}, x.whole}});
      emit(")");
    }
  }

  void print_linear(const Linear& terms) {
    // One coefficient shared, up to sign, by every term but the constant (a
    // scale times log2(e) in an attention kernel's exponent) is printed
    // once: c*(a + b - m).
    std::optional<Rational> common;
    std::size_t n = 0;
    for (const auto& [atoms, c] : terms) {
      if (atoms.empty() || c.is_zero()) continue;
      const Rational a = c.sign() < 0 ? -c : c;
      if (n++ == 0) common = a;
      else if (common && !(a == *common)) common.reset();
    }
    if (n >= 2 && common && !common->is_one()) {
      Linear rest;
      for (const auto& [atoms, c] : terms)
        if (!atoms.empty() && !c.is_zero()) rest[atoms] = Rational(c.sign());
      bool frac = false;
      const std::string t = rational_text(*common, &frac);
      emit(frac || t[0] == '-' ? "(" + t + ")" : t);
      emit("*(");
      print_linear(rest);
      emit(")");
      auto constant = terms.find({});
      if (constant != terms.end() && !constant->second.is_zero()) {
        const bool neg = constant->second.sign() < 0;
        emit(neg ? " - " : " + ");
        print_linear({{{}, neg ? -constant->second : constant->second}});
      }
      return;
    }
    bool first = true;
    auto term = [&](const std::vector<std::uint32_t>& atoms, const Rational& c) {
      if (c.is_zero()) return;
      const bool neg = c.sign() < 0;
      emit(first ? (neg ? "-" : "") : (neg ? " - " : " + "));
      first = false;
      const Rational a = neg ? -c : c;
      if (atoms.empty() || !a.is_one()) {
        bool frac = false;
        const std::string t = rational_text(a, &frac);
        emit(frac && !atoms.empty() ? "(" + t + ")" : t);
        if (!atoms.empty()) emit("*");
      }
      for (std::size_t i = 0; i < atoms.size(); ++i) {
        if (i) emit("*");
        print(Expr{atoms[i]}, atoms.size() > 1 || !a.is_one() || neg ? 2 : 1);
      }
    };
    for (const auto& [atoms, c] : terms)
      if (!atoms.empty()) term(atoms, c);
    auto constant = terms.find({});
    if (constant != terms.end()) term({}, constant->second);
    if (first) emit("0");
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
