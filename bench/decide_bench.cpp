// bench/decide: times the decision procedure on the two workloads of the
// foundation issue, on one thread, and prints a Markdown table.
//   (a) online against naive softmax, N = 64, 512, 4096, all N outputs
//   (b) one attention row (512 keys x 64 dims), FlashAttention-2 against naive, all 64 outputs
// Usage: tileverify_bench_decide [--quick] [--threads T]
#include "tileverify/decide.hpp"
#include "../examples/workloads.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace tileverify;
using namespace tileverify::workloads;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Row {
  std::string workload;
  std::size_t outputs = 0, nodes = 0, peak_terms = 0, proved = 0;
  double build_s = 0, decide_s = 0;
};

Row run(const std::string& name, unsigned threads,
        const std::function<std::pair<std::vector<Expr>, std::vector<Expr>>(ExprContext&)>& make) {
  Row r;
  r.workload = name;
  ExprContext c;
  auto t0 = std::chrono::steady_clock::now();
  auto [ref, opt] = make(c);
  r.build_s = seconds_since(t0);
  r.nodes = c.size();
  std::vector<std::pair<Expr, Expr>> pairs;
  for (std::size_t i = 0; i < ref.size(); ++i) pairs.emplace_back(ref[i], opt[i]);
  r.outputs = pairs.size();
  t0 = std::chrono::steady_clock::now();
  auto ds = decide_all(c, pairs, {}, threads);
  r.decide_s = seconds_since(t0);
  for (const auto& d : ds) {
    r.proved += d.proved();
    r.peak_terms = std::max(r.peak_terms, d.stats.peak_terms);
    if (!d.proved()) std::fprintf(stderr, "%s: %s (%s)\n", name.c_str(), verdict_name(d.verdict), d.reason.c_str());
  }
  std::fprintf(stderr, "  %-38s decided in %.3f s\n", name.c_str(), r.decide_s);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  unsigned threads = 1;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) {
      quick = true;
    } else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads = unsigned(std::stoul(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--threads T]\n", argv[0]);
      return 4;
    }
  }
  std::vector<int> sizes = quick ? std::vector<int>{64, 256} : std::vector<int>{64, 512, 4096};
  AttentionShape shape;
  if (quick) shape = AttentionShape{128, 16, 32};

  std::vector<Row> rows;
  for (int n : sizes) {
    rows.push_back(run("softmax online vs naive, N=" + std::to_string(n), threads, [n](ExprContext& c) {
      return std::make_pair(naive_softmax(c, n), online_softmax(c, n));
    }));
  }
  rows.push_back(run("softmax fast-math online vs naive, N=" + std::to_string(sizes.back()), threads,
                     [n = sizes.back()](ExprContext& c) {
                       return std::make_pair(naive_softmax(c, n), online_softmax(c, n, ExpForm::FastMath));
                     }));
  std::string att = "attention row " + std::to_string(shape.keys) + "x" + std::to_string(shape.dims) +
                    ", FA2 (blocks of " + std::to_string(shape.block) + ") vs naive";
  rows.push_back(run(att, threads, [shape](ExprContext& c) {
    return std::make_pair(attention_naive(c, shape), attention_fa2(c, shape));
  }));

  std::printf("| workload | outputs | expr nodes | build (s) | decide (s) | proved | peak terms |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
  bool all = true;
  for (const Row& r : rows) {
    std::printf("| %s | %zu | %zu | %.3f | %.3f | %zu/%zu | %zu |\n", r.workload.c_str(), r.outputs, r.nodes, r.build_s,
                r.decide_s, r.proved, r.outputs, r.peak_terms);
    all = all && r.proved == r.outputs;
  }
  std::printf("\nthreads: %u\n", threads);
  return all ? 0 : 1;
}
