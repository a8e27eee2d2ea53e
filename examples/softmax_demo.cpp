// The decider on VOLTA's motivating example (section 2): naive softmax
// (Fig. 1a) against online softmax (Fig. 1b), N = 4, and the same online
// softmax with its rescale factor dropped. Prints the expressions a symbolic
// run of both kernels produces, then the verdict for every output.
//
// Exit status: 0 when both verdicts come out as they must (equivalent, then
// not equivalent with a confirmed counterexample), 1 otherwise.
#include "tileverify/decide.hpp"
#include "workloads.hpp"

#include <cstdio>
#include <string>

using namespace tileverify;
using namespace tileverify::workloads;

namespace {

std::string inputs_text(const ExprContext& c, const Assignment& a) {
  std::string s;
  for (const auto& kv : a.values) {
    if (!s.empty()) s += ", ";
    s += c.to_string(kv.first) + " = " + kv.second.str();
  }
  return s;
}

// Decides every output; prints one line each and returns whether all are proved.
bool check_pair(const ExprContext& c, const std::vector<Expr>& ref, const std::vector<Expr>& opt) {
  Decider dec(c);
  bool all = true;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    Decision d = dec.decide(ref[i], opt[i]);
    all = all && d.proved();
    std::printf("  y[%zu]: %-8s", i, verdict_name(d.verdict));
    if (d.refuted()) {
      const Counterexample& cx = d.counterexample;
      std::printf(" at %s\n          naive gives %s\n          online gives %s\n", inputs_text(c, cx.inputs).c_str(),
                  cx.lhs_value.c_str(), cx.rhs_value.c_str());
    } else {
      std::printf(" (%s, %.1f ms)\n", d.reason.c_str(), d.stats.seconds * 1e3);
    }
  }
  return all;
}

}  // namespace

int main() {
  const int n = 4;
  ExprContext c;
  auto naive = naive_softmax(c, n);
  auto online = online_softmax(c, n);
  auto buggy = online_softmax(c, n, ExpForm::Exp, /*rescale=*/false);

  std::printf("tileverify: VOLTA's softmax identity (section 2), N = %d\n\n", n);
  std::printf("What a symbolic run of each kernel computes for y[0]:\n");
  std::printf("  naive   y[0] = %s\n", c.to_string(naive[0], 400).c_str());
  std::printf("  online  y[0] = %s\n\n", c.to_string(online[0], 400).c_str());

  std::printf("Naive against online softmax:\n");
  bool equivalent = check_pair(c, naive, online);
  std::printf("verdict: %s\n\n", equivalent ? "EQUIVALENT (every output proved equal over the reals)"
                                            : "NOT PROVED");

  std::printf("Naive against online softmax without the rescale factor d * exp(m - new_m):\n");
  std::printf("  buggy   y[0] = %s\n", c.to_string(buggy[0], 400).c_str());
  bool buggy_equivalent = check_pair(c, naive, buggy);
  std::printf("verdict: %s\n", buggy_equivalent ? "EQUIVALENT (unexpected!)"
                                                : "NOT EQUIVALENT (counterexamples above)");
  return equivalent && !buggy_equivalent ? 0 : 1;
}
