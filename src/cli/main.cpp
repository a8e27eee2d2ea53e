// The tileverify command: `tileverify equiv SPEC.json`, `tileverify check SPEC.json`,
// `tileverify fpsan SPEC.json` (payload checking, docs/fpsan.md).
// Exit codes (DESIGN.md): 0 equivalent / clean, 1 not equivalent, 2 unsafe
// (race, deadlock, out of bounds, uninitialized), 3 outside the supported
// class or undecided, 4 bad input or usage.
#include "tileverify/equiv.hpp"

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

namespace {

bool parse_cta(const std::string& s, tileverify::Dim3* out) {
  std::stringstream ss(s);
  std::string part;
  std::uint32_t v[3] = {0, 0, 0};
  int n = 0;
  while (std::getline(ss, part, ',')) {
    if (n == 3 || part.empty() || part.find_first_not_of("0123456789") != std::string::npos) return false;
    v[n++] = std::uint32_t(std::stoul(part));
  }
  if (n == 0) return false;
  *out = tileverify::Dim3{v[0], v[1], v[2]};
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tileverify: are two GPU kernels the same function over the reals, for every input and schedule?"};
  app.require_subcommand(1);
  std::string spec_path, cta;
  bool as_json = false;
  double timeout = 0;
  bool quiet = false;
  auto add_common = [&](CLI::App* sub) {
    sub->add_option("spec", spec_path, "the spec file (JSON)")->required();
    sub->add_flag("--json", as_json, "print a machine-readable report");
    sub->add_flag("--quiet", quiet, "no progress lines on stderr");
    sub->add_option("--cta", cta, "verify this CTA instead of the spec's, as x,y,z");
  };
  CLI::App* equiv = app.add_subcommand("equiv", "check that ref and opt compute the same outputs");
  add_common(equiv);
  unsigned threads = 0;
  equiv->add_option("--threads", threads, "threads that decide outputs (default: one per hardware thread)");
  equiv->add_option("--timeout", timeout,
                    "seconds for deciding all outputs; what is undecided then is unknown (default: no limit, "
                    "60 s per output)");
  CLI::App* check = app.add_subcommand("check", "check one kernel for races, deadlocks and bad accesses");
  add_common(check);
  tileverify::PayloadOptions payload;
  CLI::App* fpsan = app.add_subcommand(
      "fpsan", "run ref and opt on random FpSan payloads and compare the outputs bit for bit (fast evidence, not a proof)");
  add_common(fpsan);
  fpsan->add_option("--trials", payload.trials, "random inputs to run (default 100)")->check(CLI::PositiveNumber);
  fpsan->add_option("--seed", payload.seed, "seed of the first input (default 1; input k uses seed + k)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 4;
  }

  auto loaded = tileverify::load_spec(spec_path);
  tileverify::Report report;
  if (!loaded.spec) {
    report.verdict = tileverify::Outcome::Error;
    report.error = loaded.error;
  } else {
    tileverify::Spec spec = *loaded.spec;
    if (!cta.empty() && !parse_cta(cta, &spec.cta)) {
      std::fprintf(stderr, "tileverify: --cta wants x,y,z (non-negative integers), not '%s'\n", cta.c_str());
      return 4;
    }
    if (spec.cta.x >= spec.grid.x || spec.cta.y >= spec.grid.y || spec.cta.z >= spec.grid.z) {
      std::fprintf(stderr, "tileverify: the CTA %s lies outside the grid of %s\n", cta.c_str(), spec_path.c_str());
      return 4;
    }
    if (equiv->parsed()) {
      tileverify::DecideLimits limits;
      limits.threads = threads;
      if (timeout > 0) {
        // --timeout bounds the whole decision phase, and any one output.
        limits.deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(std::int64_t(timeout * 1e6));
        limits.timeout_seconds = std::min(limits.timeout_seconds, timeout);
      }
      // Progress on stderr for checks that take a while: a line every 2 s.
      auto start = std::chrono::steady_clock::now();
      auto last = start;
      bool printed = false;
      if (!quiet)
        limits.progress = [&](std::size_t done, std::size_t total) {
          auto now = std::chrono::steady_clock::now();
          if (done < total && now - last < std::chrono::seconds(2)) return;
          if (done == total && !printed) return;
          last = now;
          printed = true;
          std::fprintf(stderr, "tileverify: decided %zu of %zu outputs (%.0f s)%s", done, total,
                       std::chrono::duration<double>(now - start).count(), isatty(2) ? "\r" : "\n");
          if (done == total && isatty(2)) std::fputc('\n', stderr);
        };
      report = tileverify::check_equivalence(spec, limits);
    } else if (fpsan->parsed()) {
      report = tileverify::check_payloads(spec, payload);
    } else {
      report = tileverify::check(spec);
    }
  }
  std::fputs((as_json ? report.json() + "\n" : report.text()).c_str(), stdout);
  return report.exit_code();
}
