// Plain long-double evaluation of an expression DAG (iterative: DAGs from long
// kernels are deep).
#include "tileverify/expr.hpp"

#include "../util/flat_map.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace tileverify {

long double evaluate(const ExprContext& ctx, Expr root, const Assignment& values) {
  return evaluate(ctx, std::vector<Expr>{root}, values)[0];
}

std::vector<long double> evaluate(const ExprContext& ctx, const std::vector<Expr>& roots, const Assignment& values) {
  // node id -> index into vals (a flat map: the screen evaluates whole
  // kernels' outputs, millions of nodes)
  detail::FlatMap64 val, memo;
  std::vector<long double> vals;
  for (const auto& kv : values.values) {
    val.insert(kv.first.id, std::uint32_t(vals.size()));
    vals.push_back(kv.second.to_long_double());
  }
  std::vector<std::pair<std::uint32_t, bool>> stack;
  for (Expr r : roots) stack.push_back({r.id, false});
  const long double inf = std::numeric_limits<long double>::infinity();
  while (!stack.empty()) {
    auto [id, ready] = stack.back();
    stack.pop_back();
    if (memo.find(id)) continue;
    Expr e{id};
    if (!ready) {
      stack.push_back({id, true});
      for (Expr c : ctx.children(e))
        if (!memo.find(c.id)) stack.push_back({c.id, false});
      continue;
    }
    auto arg = [&](std::size_t i) { return vals[*memo.find(ctx.children(e)[i].id)]; };
    long double r = 0;
    std::size_t n = ctx.children(e).size();
    switch (ctx.op(e)) {
      case Op::Const: r = ctx.constant_value(e).to_long_double(); break;
      case Op::NegInf: r = -inf; break;
      case Op::PosInf: r = inf; break;
      case Op::Named: r = std::log(2.0L); break;
      case Op::Symbol: {
        const std::uint32_t* it = val.find(id);
        if (!it) throw std::out_of_range("evaluate: no value for " + ctx.to_string(e));
        r = vals[*it];
        break;
      }
      case Op::Add: r = 0; for (std::size_t i = 0; i < n; ++i) r += arg(i); break;
      case Op::Mul: r = 1; for (std::size_t i = 0; i < n; ++i) r *= arg(i); break;
      case Op::Pow: r = std::pow(arg(0), (long double)ctx.pow_exponent(e)); break;
      case Op::Exp: r = std::exp(arg(0)); break;
      case Op::Max: r = -inf; for (std::size_t i = 0; i < n; ++i) r = std::fmax(r, arg(i)); break;
      case Op::Min: r = inf; for (std::size_t i = 0; i < n; ++i) r = std::fmin(r, arg(i)); break;
      case Op::Select: {
        r = apply_cmp(ctx.select_cmp(e), arg(0), arg(1)) ? arg(2) : arg(3);
        break;
      }
      case Op::Func: {
        const std::string& f = ctx.name(e);
        long double x = n > 0 ? arg(0) : 0;
        if (f == "log") r = std::log(x);
        else if (f == "log2") r = std::log2(x);
        else if (f == "log1p") r = std::log1p(x);
        else if (f == "sqrt") r = std::sqrt(x);
        else if (f == "rsqrt") r = 1 / std::sqrt(x);
        else if (f == "tanh") r = std::tanh(x);
        else if (f == "erf") r = std::erf(x);
        else if (f == "sin") r = std::sin(x);
        else if (f == "cos") r = std::cos(x);
        else throw std::invalid_argument("evaluate: no numeric meaning for function '" + f + "'");
        break;
      }
    }
    memo.insert(id, std::uint32_t(vals.size()));
    vals.push_back(r);
  }
  std::vector<long double> out;
  out.reserve(roots.size());
  for (Expr r : roots) out.push_back(vals[*memo.find(r.id)]);
  return out;
}

}  // namespace tileverify
