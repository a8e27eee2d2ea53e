// The comparison oracle: an optimized kernel's output against a reference
// kernel's, element by element, with per-dtype tolerances; statistics with
// Eigen arrays.
#include "formats.hpp"

#include "tileverify/oracle.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>

namespace tileverify::oracle {

Tolerance default_tolerance(DType t) {
  // Why these numbers: docs/oracles.md, "Default tolerances".
  switch (t) {
    case DType::F64: return {1e-9, 1e-10, 0};
    case DType::F32: return {1e-4, 1e-4, 0};
    case DType::F16: return {1e-2, 1e-3, 0};
    case DType::BF16: return {2e-2, 1e-2, 0};
    default: return {0, 0, 0};  // integers are exact in every correct kernel
  }
}

const char* element_class_name(ElementClass c) {
  switch (c) {
    case ElementClass::Match: return "match";
    case ElementClass::Mismatch: return "mismatch";
    case ElementClass::NanWhereNumber: return "nan_where_number";
    case ElementClass::BothNan: return "both_nan";
    case ElementClass::InfMismatch: return "inf_mismatch";
    case ElementClass::NumberWhereNan: return "number_where_nan";
  }
  return "?";
}

bool Comparison::passed() const {
  return error.empty() && count(ElementClass::Match) + count(ElementClass::BothNan) == elements;
}

namespace {

// How bad an element is, for choosing the worst: the tier (findings, then
// mismatches, then matches), then how far past (or how close to) the
// tolerance, then the lower index first.
struct Badness {
  int tier;
  double ratio;
  std::uint64_t index;
  ElementClass cls;
};
bool less_bad(const Badness& a, const Badness& b) {
  if (a.tier != b.tier) return a.tier < b.tier;
  if (a.ratio != b.ratio) return a.ratio < b.ratio;
  return a.index > b.index;
}

// Keeps the n worst of a stream, by less_bad.
class WorstKeeper {
 public:
  explicit WorstKeeper(std::size_t n) : n_(n) {}
  void offer(const Badness& b) {
    if (n_ == 0) return;
    if (heap_.size() < n_) {
      heap_.push_back(b);
      std::push_heap(heap_.begin(), heap_.end(), worse);
    } else if (less_bad(heap_.front(), b)) {
      std::pop_heap(heap_.begin(), heap_.end(), worse);
      heap_.back() = b;
      std::push_heap(heap_.begin(), heap_.end(), worse);
    }
  }
  // Worst first.
  std::vector<Badness> take() {
    std::sort(heap_.begin(), heap_.end(), [](const Badness& a, const Badness& b) { return less_bad(b, a); });
    return std::move(heap_);
  }

 private:
  // The heap's front is the least bad kept: the one to drop.
  static bool worse(const Badness& a, const Badness& b) { return less_bad(b, a); }
  std::size_t n_;
  std::vector<Badness> heap_;
};

}  // namespace

Comparison compare(DType t, const std::vector<double>& reference, const std::vector<double>& output,
                   const CompareOptions& options) {
  Comparison c;
  c.dtype = t;
  c.tolerance = options.tolerance ? *options.tolerance : default_tolerance(t);
  if (reference.size() != output.size()) {
    c.error = "the reference has " + std::to_string(reference.size()) + " elements, the output " +
              std::to_string(output.size());
    return c;
  }
  try {
    const std::size_t n = reference.size();
    c.elements = n;
    const Tolerance tol = c.tolerance;
    Eigen::Map<const Eigen::ArrayXd> ref(reference.data(), Eigen::Index(n));
    Eigen::Map<const Eigen::ArrayXd> out(output.data(), Eigen::Index(n));
    const Eigen::ArrayXd abs_err = (out - ref).abs();
    const Eigen::ArrayXd allowed = tol.abs + tol.rel * ref.abs();
    Eigen::ArrayXd ulps(n);
    // Per element: finite in both (the statistics' set), and its class.
    Eigen::Array<bool, Eigen::Dynamic, 1> finite = ref.isFinite() && out.isFinite();
    WorstKeeper keep(options.worst);
    for (std::size_t i = 0; i < n; ++i) {
      const double r = reference[i], o = output[i];
      ElementClass cls;
      double ratio = 0;
      std::uint64_t ulp = 0;
      if (std::isnan(r)) {
        cls = std::isnan(o) ? ElementClass::BothNan : ElementClass::NumberWhereNan;
      } else if (std::isnan(o)) {
        cls = ElementClass::NanWhereNumber;
      } else if (!finite[Eigen::Index(i)]) {
        cls = r == o ? ElementClass::Match : ElementClass::InfMismatch;
      } else {
        ulp = ulp_distance(t, r, o);
        const double a = abs_err[Eigen::Index(i)], lim = allowed[Eigen::Index(i)];
        bool ok = a <= lim || (tol.ulps != 0 && ulp <= tol.ulps);
        cls = ok ? ElementClass::Match : ElementClass::Mismatch;
        ratio = lim > 0 ? a / lim : a;
      }
      ulps[Eigen::Index(i)] = double(ulp);
      ++c.counts[std::size_t(cls)];
      int tier = cls == ElementClass::Match ? 0 : cls == ElementClass::Mismatch ? 1 : 2;
      if (cls != ElementClass::BothNan) keep.offer({tier, ratio, i, cls});
    }
    for (const Badness& b : keep.take()) {
      ElementReport e;
      e.index = b.index;
      e.cls = b.cls;
      e.reference = reference[b.index];
      e.output = output[b.index];
      e.abs_error = abs_err[Eigen::Index(b.index)];
      e.rel_error = e.reference != 0 ? e.abs_error / std::fabs(e.reference)
                                     : (e.abs_error == 0 ? 0 : std::numeric_limits<double>::infinity());
      e.ulps = std::isnan(e.reference) || std::isnan(e.output) ? std::numeric_limits<std::uint64_t>::max()
                                                               : ulp_distance(t, e.reference, e.output);
      c.worst.push_back(e);
    }
    // Statistics over the elements finite in both; relative error over those
    // whose reference is also non-zero.
    const Eigen::ArrayXd zeros = Eigen::ArrayXd::Zero(Eigen::Index(n));
    c.measured = std::uint64_t(finite.count());
    if (c.measured > 0) {
      const Eigen::ArrayXd a = finite.select(abs_err, zeros);
      const Eigen::ArrayXd u = finite.select(ulps, zeros);
      c.max_abs_error = a.maxCoeff();
      c.mean_abs_error = a.sum() / double(c.measured);
      c.max_ulps = u.maxCoeff();
      c.mean_ulps = u.sum() / double(c.measured);
      const Eigen::Array<bool, Eigen::Dynamic, 1> with_rel = finite && (ref != 0);
      c.measured_rel = std::uint64_t(with_rel.count());
      if (c.measured_rel > 0) {
        const Eigen::ArrayXd rel = with_rel.select(abs_err / ref.abs(), zeros);
        c.max_rel_error = rel.maxCoeff();
        c.mean_rel_error = rel.sum() / double(c.measured_rel);
      }
    }
  } catch (const std::bad_alloc&) {
    Comparison failed;
    failed.dtype = t;
    failed.tolerance = c.tolerance;
    failed.error = "out of memory";
    return failed;
  }
  return c;
}

Comparison compare_bytes(DType t, const std::vector<std::uint8_t>& reference, const std::vector<std::uint8_t>& output,
                         const CompareOptions& options) {
  try {
    return compare(t, decode_all(t, reference), decode_all(t, output), options);
  } catch (const std::bad_alloc&) {
    Comparison failed;
    failed.dtype = t;
    failed.error = "out of memory";
    return failed;
  }
}

}  // namespace tileverify::oracle
