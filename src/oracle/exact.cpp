// The exact reference: output expressions evaluated on concrete inputs with
// MPFR (the decider's NumericEvaluator, src/decide/numeric.hpp, which
// confirms counterexamples the same way), and float outputs measured against
// the result in ulps of their dtype.
#include "formats.hpp"

#include "../decide/numeric.hpp"
#include "tileverify/oracle.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>

namespace tileverify::oracle {

namespace {

namespace bm = boost::multiprecision;
using tileverify::detail::NumericEvaluator;
using tileverify::detail::Real;
using tileverify::detail::RealLow;

int sign_of(const Real& v) { return v > 0 ? 1 : (v < 0 ? -1 : 0); }

// The ExactValue of a finite real.
ExactValue from_real(const Real& v, const RealLow& check) {
  ExactValue x;
  x.kind = ExactKind::Finite;
  x.nearest = v.convert_to<double>();  // mpfr_get_d, to nearest: correct rounding, subnormals included
  if (std::isinf(x.nearest)) {
    x.residual = -sign_of(v);  // the real lies inside the infinity it rounded to
  } else {
    Real rest = v - Real(x.nearest);  // exact: 100 digits hold both
    x.residual = sign_of(rest);
    x.low = rest.convert_to<double>();
  }
  x.reliable = check.convert_to<double>() == x.nearest;
  return x;
}

ExactValue undefined(std::string why) {
  ExactValue x;
  x.kind = ExactKind::Undefined;
  x.why = std::move(why);
  return x;
}

class Evaluation {
 public:
  Evaluation(const ExprContext& ctx, const InputValues& inputs, const ExactOptions& options,
             std::vector<ExactValue>& out)
      : ctx_(ctx), inputs_(inputs), options_(options), out_(out) {}

  // Evaluates roots (positions into out_) together; where that fails (one
  // root undefined makes the whole evaluation fail), halves the group, so
  // that k undefined roots cost about k log n evaluations, not n.
  void run(const std::vector<std::pair<std::size_t, Expr>>& group) {
    if (group.empty()) return;
    std::vector<Expr> roots;
    for (const auto& g : group) roots.push_back(g.second);
    NumericEvaluator ev(ctx_, roots);
    std::vector<Rational> point;
    std::string why = values_of(ev.symbols(), &point);
    if (why.empty()) {
      auto hi = ev.eval<Real>(point, options_.read_known_constants);
      if (hi) {
        auto lo = ev.eval<RealLow>(point, options_.read_known_constants);
        for (std::size_t k = 0; k < group.size(); ++k) {
          out_[group[k].first] = from_real((*hi)[k], lo ? (*lo)[k] : RealLow(0));
          if (!lo) out_[group[k].first].reliable = false;
        }
        return;
      }
      why = "not a finite real: a division by zero, a logarithm or root of a negative number, an infinity "
            "inside, or a function without a numeric meaning";
    }
    if (group.size() == 1) {
      out_[group[0].first] = undefined(why);
      return;
    }
    std::size_t half = group.size() / 2;
    run({group.begin(), group.begin() + std::ptrdiff_t(half)});
    run({group.begin() + std::ptrdiff_t(half), group.end()});
  }

 private:
  // The value of each symbol, or why there is none.
  std::string values_of(const std::vector<Expr>& symbols, std::vector<Rational>* point) const {
    point->reserve(symbols.size());
    for (Expr s : symbols) {
      const std::string& name = ctx_.symbol_tensor(s);
      std::uint32_t i = ctx_.symbol_index(s);
      auto it = inputs_.find(name);
      std::string sym = name + "[" + std::to_string(i) + "]";
      if (it == inputs_.end() || i >= it->second.size()) return "no input value for " + sym;
      double v = it->second[i];
      if (!std::isfinite(v)) return "input " + sym + " is " + (std::isnan(v) ? "NaN" : v > 0 ? "+inf" : "-inf");
      if (ctx_.is_integer_symbol(s) && v != std::floor(v))
        return "integer input " + sym + " has the non-integer value " + std::to_string(v);
      point->push_back(Rational::from_double(v));
    }
    return {};
  }

  const ExprContext& ctx_;
  const InputValues& inputs_;
  const ExactOptions& options_;
  std::vector<ExactValue>& out_;
};

}  // namespace

const char* exact_kind_name(ExactKind k) {
  switch (k) {
    case ExactKind::Finite: return "finite";
    case ExactKind::PosInf: return "+inf";
    case ExactKind::NegInf: return "-inf";
    case ExactKind::Undefined: return "undefined";
    case ExactKind::Unwritten: return "unwritten";
  }
  return "?";
}

const char* hazard_name(Hazard h) {
  switch (h) {
    case Hazard::None: return "none";
    case Hazard::NanOutput: return "nan_output";
    case Hazard::InfOutput: return "inf_output";
    case Hazard::OutOfRange: return "out_of_range";
    case Hazard::Underflow: return "underflow";
    case Hazard::WrongInf: return "wrong_inf";
    case Hazard::ExactUndefined: return "exact_undefined";
    case Hazard::Unwritten: return "unwritten";
  }
  return "?";
}

ExactResult exact_values(const ExprContext& ctx, const std::vector<std::optional<Expr>>& outputs,
                         const InputValues& inputs, const ExactOptions& options) {
  ExactResult r;
  try {
    r.values.resize(outputs.size());
    std::vector<std::pair<std::size_t, Expr>> group;
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      if (!outputs[i] || !outputs[i]->valid() || outputs[i]->id >= ctx.size()) {
        r.values[i].kind = outputs[i] ? ExactKind::Undefined : ExactKind::Unwritten;
        if (outputs[i]) r.values[i].why = "not an expression of this context";
        continue;
      }
      // An output that is an infinity itself (a max over nothing) is one; the
      // numeric evaluator only knows finite reals.
      Op op = ctx.op(*outputs[i]);
      if (op == Op::PosInf || op == Op::NegInf) {
        r.values[i].kind = op == Op::PosInf ? ExactKind::PosInf : ExactKind::NegInf;
        r.values[i].nearest = op == Op::PosInf ? HUGE_VAL : -HUGE_VAL;
        continue;
      }
      group.push_back({i, *outputs[i]});
    }
    Evaluation(ctx, inputs, options, r.values).run(group);
  } catch (const std::bad_alloc&) {
    r = ExactResult{};
    r.error = "out of memory";
  } catch (const std::exception& e) {
    r = ExactResult{};
    r.error = std::string("internal error: ") + e.what();
  }
  return r;
}

namespace {

// The spacing of t's values in the binade of the real nearest + residual
// (nearest a double): for a real just below a power of two that rounds up
// to it, the binade below.
double ulp_at(DType t, const ExactValue& x) {
  double a = std::fabs(x.nearest);
  int toward_smaller = x.nearest < 0 ? x.residual > 0 : x.residual < 0;
  if (a != 0 && std::isfinite(a) && toward_smaller) {
    int e;
    double m = std::frexp(a, &e);
    if (m == 0.5) return ulp_of(t, a / 2);  // a is a power of two; the real lies below it
  }
  return ulp_of(t, x.nearest);
}

}  // namespace

ExactComparison measure(DType t, const std::vector<double>& output, const std::vector<ExactValue>& exact,
                        std::size_t worst) {
  ExactComparison c;
  c.dtype = t;
  if (output.size() != exact.size()) {
    c.error = "the output has " + std::to_string(output.size()) + " elements, the exact reference " +
              std::to_string(exact.size());
    return c;
  }
  try {
    const std::size_t n = output.size();
    c.elements = n;
    std::vector<Hazard> hazards(n, Hazard::None);
    Eigen::ArrayXd ulps = Eigen::ArrayXd::Zero(Eigen::Index(n)), rels = Eigen::ArrayXd::Zero(Eigen::Index(n));
    Eigen::Array<bool, Eigen::Dynamic, 1> measured =
        Eigen::Array<bool, Eigen::Dynamic, 1>::Constant(Eigen::Index(n), false);
    std::vector<std::uint64_t> candidates;  // elements `worst` may list
    for (std::size_t i = 0; i < n; ++i) {
      const ExactValue& x = exact[i];
      const double o = output[i];
      Hazard& h = hazards[i];
      switch (x.kind) {
        case ExactKind::Unwritten: h = Hazard::Unwritten; break;
        case ExactKind::Undefined: h = Hazard::ExactUndefined; break;
        case ExactKind::PosInf:
        case ExactKind::NegInf:
          if (std::isnan(o)) h = Hazard::NanOutput;
          else if (o != x.nearest) h = Hazard::WrongInf;
          break;
        case ExactKind::Finite: {
          const double rounded = round_to(t, x.nearest, x.residual);  // the correctly rounded output
          if (std::isnan(o)) h = Hazard::NanOutput;
          else if (std::isinf(rounded)) h = Hazard::OutOfRange;
          else if (std::isinf(o)) h = Hazard::InfOutput;
          else if (o == 0 && rounded != 0) h = Hazard::Underflow;
          if (h != Hazard::None) break;
          // |o - real| = |(o - nearest) - low|: o - nearest is exact when
          // they are close (Sterbenz), and low carries the real's next bits.
          const double diff = std::fabs((o - x.nearest) - x.low);
          ulps[Eigen::Index(i)] = diff / ulp_at(t, x);
          rels[Eigen::Index(i)] = x.nearest != 0 ? diff / std::fabs(x.nearest)
                                                 : (diff == 0 ? 0 : std::numeric_limits<double>::infinity());
          measured[Eigen::Index(i)] = true;
          break;
        }
      }
      ++c.counts[std::size_t(h)];
      if (x.kind == ExactKind::Finite && !x.reliable) ++c.unreliable;
      if (worst > 0 && h != Hazard::ExactUndefined && h != Hazard::Unwritten) candidates.push_back(i);
    }
    // Hazards first, in enum order, then the largest errors, then by index.
    auto badder = [&](std::uint64_t a, std::uint64_t b) {
      Hazard ha = hazards[a], hb = hazards[b];
      if ((ha != Hazard::None) != (hb != Hazard::None)) return ha != Hazard::None;
      if (ha != hb) return ha < hb;
      double ua = ulps[Eigen::Index(a)], ub = ulps[Eigen::Index(b)];
      if (ua != ub) return ua > ub;
      return a < b;
    };
    std::size_t keep = std::min(worst, candidates.size());
    std::partial_sort(candidates.begin(), candidates.begin() + std::ptrdiff_t(keep), candidates.end(), badder);
    for (std::size_t k = 0; k < keep; ++k) {
      std::uint64_t i = candidates[k];
      ExactElementReport e;
      e.index = i;
      e.hazard = hazards[i];
      e.output = output[i];
      e.exact = exact[i];
      e.ulps = ulps[Eigen::Index(i)];
      e.rel_error = rels[Eigen::Index(i)];
      c.worst.push_back(std::move(e));
    }
    c.measured = std::uint64_t(measured.count());
    if (c.measured > 0) {
      c.max_ulps = ulps.maxCoeff();  // unmeasured elements hold 0
      c.mean_ulps = ulps.sum() / double(c.measured);
      c.max_rel_error = rels.maxCoeff();
      c.mean_rel_error = rels.sum() / double(c.measured);
      c.correctly_rounded = std::uint64_t((measured && ulps <= 0.5).count());
    }
  } catch (const std::bad_alloc&) {
    ExactComparison failed;
    failed.dtype = t;
    failed.error = "out of memory";
    return failed;
  }
  return c;
}

}  // namespace tileverify::oracle
