#include "numeric.hpp"

#include "known_constants.hpp"

#include <cmath>

namespace tileverify::detail {

NumericEvaluator::NumericEvaluator(const ExprContext& ctx, const std::vector<Expr>& roots,
                                   const std::vector<ConstantReading>* readings)
    : ctx_(ctx), readings_(readings), roots_(roots) {
  std::vector<std::pair<std::uint32_t, bool>> stack;
  for (Expr r : roots) stack.push_back({r.id, false});
  while (!stack.empty()) {
    auto [id, ready] = stack.back();
    stack.pop_back();
    if (pos_.count(id)) continue;
    if (!ready) {
      stack.push_back({id, true});
      for (Expr c : ctx.children(Expr{id}))
        if (!pos_.count(c.id)) stack.push_back({c.id, false});
      continue;
    }
    pos_[id] = std::uint32_t(order_.size());
    order_.push_back(Expr{id});
    if (ctx.op(Expr{id}) == Op::Symbol) symbols_.push_back(Expr{id});
    if (ctx.op(Expr{id}) == Op::Named) uses_ln2_ = true;
    // The normalizer reads log2(x) as log(x) / ln 2, and then nvcc's float
    // ln 2 and log2(e) beside it as the real constants, as with 2^x.
    if (ctx.op(Expr{id}) == Op::Func && ctx.name(Expr{id}) == "log2") uses_ln2_ = true;
    if (ctx.op(Expr{id}) == Op::Func) {
      const std::string& f = ctx.name(Expr{id});
      if (f == "log" || f == "log2" || f == "log1p" || f == "sqrt" || f == "rsqrt") partial_functions_ = true;
    }
  }
  std::sort(symbols_.begin(), symbols_.end());
}

template <class Real>
std::optional<std::vector<Real>> NumericEvaluator::eval(const std::vector<Rational>& symbol_values,
                                                        bool read_constants) {
  std::vector<Real> v(order_.size());
  std::unordered_map<std::uint32_t, std::size_t> sym_index;
  for (std::size_t i = 0; i < symbols_.size(); ++i) sym_index[symbols_[i].id] = i;
  auto rat = [](const Rational& q) {
    std::string s = q.str();
    auto slash = s.find('/');
    if (slash == std::string::npos) return Real(s);
    return Real(s.substr(0, slash)) / Real(s.substr(slash + 1));
  };
  const Real ln2 = boost::multiprecision::log(Real(2));
  for (std::size_t i = 0; i < order_.size(); ++i) {
    Expr e = order_[i];
    auto arg = [&](std::size_t k) -> const Real& { return v[pos_.at(ctx_.children(e)[k].id)]; };
    std::size_t n = ctx_.children(e).size();
    Real r;
    switch (ctx_.op(e)) {
      case Op::Const: {
        Rational q;
        int p = 0;
        if (read_constants && read_known_constant(ctx_.constant_value(e), &q, &p, readings_))
          r = rat(q) * (p > 0 ? ln2 : (p < 0 ? 1 / ln2 : Real(1)));
        else
          r = rat(ctx_.constant_value(e));
        break;
      }
      case Op::NegInf:
      case Op::PosInf: return std::nullopt;
      case Op::Named: r = ln2; break;
      case Op::Symbol: r = rat(symbol_values.at(sym_index.at(e.id))); break;
      case Op::Add:
        r = 0;
        for (std::size_t k = 0; k < n; ++k) r += arg(k);
        break;
      case Op::Mul:
        r = 1;
        for (std::size_t k = 0; k < n; ++k) r *= arg(k);
        break;
      case Op::Pow: {
        int p = ctx_.pow_exponent(e);
        const Real& b = arg(0);
        if (p < 0 && b == 0) return std::nullopt;
        r = boost::multiprecision::pow(b, p);
        break;
      }
      case Op::Exp: r = boost::multiprecision::exp(arg(0)); break;
      case Op::Max:
        r = arg(0);
        for (std::size_t k = 1; k < n; ++k)
          if (arg(k) > r) r = arg(k);
        break;
      case Op::Min:
        r = arg(0);
        for (std::size_t k = 1; k < n; ++k)
          if (arg(k) < r) r = arg(k);
        break;
      case Op::Select: {
        r = apply_cmp(ctx_.select_cmp(e), arg(0), arg(1)) ? arg(2) : arg(3);
        break;
      }
      case Op::Func: {
        const std::string& f = ctx_.name(e);
        if (n != 1) return std::nullopt;
        const Real& x = arg(0);
        if (f == "log") {
          if (x <= 0) return std::nullopt;
          r = boost::multiprecision::log(x);
        } else if (f == "log2") {
          if (x <= 0) return std::nullopt;
          r = boost::multiprecision::log(x) / ln2;
        } else if (f == "log1p") {
          if (x <= -1) return std::nullopt;
          r = boost::multiprecision::log(1 + x);
        } else if (f == "sqrt") {
          if (x < 0) return std::nullopt;
          r = boost::multiprecision::sqrt(x);
        } else if (f == "rsqrt") {
          if (x <= 0) return std::nullopt;
          r = 1 / boost::multiprecision::sqrt(x);
        } else if (f == "tanh") {
          r = boost::multiprecision::tanh(x);
        } else if (f == "sin") {
          r = boost::multiprecision::sin(x);
        } else if (f == "cos") {
          r = boost::multiprecision::cos(x);
        } else if (f == "erf") {
          r = boost::multiprecision::erf(x);
        } else {
          return std::nullopt;  // no numeric meaning known: cannot confirm anything
        }
        break;
      }
    }
    if (boost::multiprecision::isnan(r) || boost::multiprecision::isinf(r)) return std::nullopt;
    v[i] = std::move(r);
  }
  std::vector<Real> out;
  for (Expr r : roots_) out.push_back(v[pos_.at(r.id)]);
  return out;
}

template std::optional<std::vector<Real>> NumericEvaluator::eval<Real>(const std::vector<Rational>&, bool);
template std::optional<std::vector<RealLow>> NumericEvaluator::eval<RealLow>(const std::vector<Rational>&, bool);

std::optional<std::pair<Real, Real>> NumericEvaluator::differing(const std::vector<Rational>& point,
                                                                 bool read_constants, const Real& relative) {
  namespace bm = boost::multiprecision;
  auto hi = eval<Real>(point, read_constants);
  if (!hi) return std::nullopt;
  const Real &a = (*hi)[0], &b = (*hi)[1];
  Real scale = bm::abs(a);
  if (bm::abs(b) > scale) scale = bm::abs(b);
  if (scale < 1) scale = 1;
  Real diff = a - b;
  if (bm::abs(diff) <= scale * relative) return std::nullopt;
  auto lo = eval<RealLow>(point, read_constants);
  if (!lo) return std::nullopt;
  Real diff_lo((*lo)[0] - (*lo)[1]);
  if (bm::abs(diff_lo - diff) > bm::abs(diff) / 100) return std::nullopt;
  return std::make_pair(a, b);
}

std::string real_to_string(const Real& v, int digits) {
  return v.str(digits, std::ios_base::fmtflags(0));
}

}  // namespace tileverify::detail
