// The tileverify command: `tileverify equiv SPEC.json`, `tileverify check SPEC.json`,
// `tileverify fpsan SPEC.json` (payload checking, docs/fpsan.md).
// Exit codes (docs/cli.md): 0 equivalent / clean, 1 not
// equivalent, 2 unsafe (race, deadlock, out of bounds, uninitialized, trap),
// 3 outside the supported class or undecided (a limit was hit), 4 bad input
// or usage.
//
// The command runs in compilers' test suites and CI jobs, where a hang or an
// abort is worse than a wrong guess and a wrong answer worse than both. So:
// every option value is range-checked (args.hpp); every check runs under a
// time limit (--timeout, 300 s unless told) and a memory budget
// (--max-memory); and whatever goes wrong inside still ends in a report in
// the requested format, with an exit code a script can act on.
#include "args.hpp"

#include "tileverify/equiv.hpp"

#include <CLI/CLI.hpp>

#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <new>
#include <optional>
#include <string>

namespace {

using tileverify::Outcome;
using tileverify::Report;

// Bad input or usage, the reason also a bad_input diagnostic (at the spec
// file, when it concerns the spec), as the library gives its own.
Report error_report(const std::string& message, const std::string& file = "") {
  Report r;
  r.verdict = Outcome::Error;
  r.error = message;
  tileverify::Diagnostic d;
  d.kind = tileverify::DiagKind::BadInput;
  d.message = message;
  d.loc.file = file;
  r.diagnostics.push_back(d);
  return r;
}

// A check that could not finish is unknown (exit 3), not an error of the
// input: the same spec may pass with more memory, or once a bug is fixed.
Report unknown_report(const std::string& message, bool limit) {
  Report r;
  r.verdict = Outcome::Unknown;
  r.error = message;
  if (limit) {
    tileverify::Diagnostic d;
    d.kind = tileverify::DiagKind::Limit;
    d.message = message;
    r.diagnostics.push_back(d);
  }
  return r;
}

// A JSON string literal of ASCII text (other bytes become '?'), for the last
// resort below, which cannot rely on the JSON library.
std::string ascii_json(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += char(c);
    else if (c == '\n') out += "\\n";
    else if (c < 0x20 || c >= 0x7f) out += '?';
    else out += char(c);
  }
  return out + "\"";
}

// The report, in the requested format. `headline` replaces the text report
// of a check that ended in an exception (its stats would say nothing).
void print(const Report& r, bool as_json, const std::string& headline) {
  std::string out;
  try {
    out = as_json ? r.json() + "\n" : headline.empty() ? r.text() : headline + "\n";
  } catch (...) {
    // The report itself could not be written (memory, or bytes that are not
    // UTF-8 in a message): still one line in the requested format.
    std::string what = r.error.empty() ? "the report could not be written" : r.error;
    out = as_json ? "{\"verdict\": " + ascii_json(tileverify::outcome_name(r.verdict)) +
                        ", \"diagnostics\": [], \"error\": " + ascii_json(what) + "}\n"
                  : std::string(tileverify::outcome_name(r.verdict)) + ": " + what + "\n";
  }
  std::fputs(out.c_str(), stdout);
}

std::string dim3_text(const tileverify::Dim3& d) {
  return "[" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + "]";
}

// "" when the CTA exists in the grid of the spec and of every kernel that
// runs one CTA (spec.cpp checks the spec's own "cta" the same way).
std::string cta_problem(const tileverify::Spec& spec, const std::string& spec_path) {
  auto outside = [&](const tileverify::Dim3& g) {
    return spec.cta.x >= g.x || spec.cta.y >= g.y || spec.cta.z >= g.z;
  };
  std::string where;
  if (outside(spec.grid)) where = "\"grid\" " + dim3_text(spec.grid);
  for (const std::optional<tileverify::KernelSpec>* k : {&spec.ref, &spec.opt})
    if (where.empty() && !spec.all_ctas && *k && (*k)->grid && outside(*(*k)->grid))
      where = "the grid " + dim3_text(*(*k)->grid) + " of kernel '" + (*k)->kernel + "'";
  if (where.empty()) return "";
  return "--cta " + dim3_text(spec.cta) + " lies outside " + where + " of " + spec_path +
         ": each component must be below the grid's (CTAs are numbered from 0)";
}

}  // namespace

int main(int argc, char** argv) {
#if defined(__GLIBC__)
  // Every kernel run (one per CTA with "ctas": "all", one per payload input)
  // allocates its memories and frees them at its end. Blocks of a few MB went
  // to mmap each time, and glibc's threshold did not adapt: every run faulted
  // fresh pages in, 90% of the time of a grid (fpsan on 1024 CTAs of 32
  // threads over 32768 elements: 73 s, 0.8 s with this; check: 1.4 s, 0.3 s).
  // Freed blocks up to 32 MiB now stay in the heap for the next run; larger
  // ones are still mapped and returned at once.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
  namespace cli = tileverify::cli;
  const std::uint64_t default_memory = tileverify::default_memory_budget();
  CLI::App app{"tileverify: are two GPU kernels the same function over the reals, for every input and schedule?"};
  app.require_subcommand(1);
  // Numbers are taken as text and read by args.hpp, which checks ranges and
  // says what is allowed; CLI11's own conversions wrap or pass odd values.
  // Optional, not empty-means-absent: `--cta ""` is a bad value, not "no --cta".
  std::string spec_path;
  std::optional<std::string> cta, timeout_text, memory_text, threads_text, trials_text, seed_text;
  auto into = [](std::optional<std::string>& to) { return [&to](const std::string& v) { to = v; }; };
  bool as_json = false;
  bool quiet = false;
  bool strict = false;
  const std::string timeout_help =
      "seconds for the whole check (reading, running, deciding); past it the check ends as unknown (exit 3). "
      "Default 300; 0: no limit; at most 1000000";
  const std::string memory_help = "bytes the kernel runs may allocate, with K, M, G or T (binary units), like 8G; "
                                  "over it the check ends as unknown (exit 3). Default: half the machine's memory, "
                                  "here " + cli::size_text(default_memory);
  auto add_common = [&](CLI::App* sub) {
    sub->add_option("spec", spec_path, "the spec file (JSON)")->required()->type_name("SPEC.json");
    sub->add_flag("--json", as_json, "print a machine-readable report");
    sub->add_flag("--quiet", quiet, "no progress lines on stderr");
    sub->add_flag("--strict", strict,
                  "report what sm_70+ GPUs tolerate but the CUDA guide leaves undefined as unsafe (exit 2): barrier "
                  "divergence and unordered writes of the same value (default: notes in the report)");
    sub->add_option_function<std::string>("--cta", into(cta), "verify this CTA instead of the spec's, as x,y,z (missing components are 0)")
        ->type_name("x,y,z");
    sub->add_option_function<std::string>("--timeout", into(timeout_text), timeout_help)->type_name("SECONDS");
    sub->add_option_function<std::string>("--max-memory", into(memory_text), memory_help)->type_name("SIZE");
  };
  CLI::App* equiv = app.add_subcommand("equiv", "check that ref and opt compute the same outputs");
  add_common(equiv);
  equiv->add_option_function<std::string>("--threads", into(threads_text),
                                         "threads that decide outputs, 0 to 1024 (default 0: one per hardware thread)")
      ->type_name("N");
  CLI::App* check = app.add_subcommand("check", "check one kernel for races, deadlocks and bad accesses");
  add_common(check);
  CLI::App* fpsan = app.add_subcommand(
      "fpsan", "run ref and opt on random FpSan payloads and compare the outputs bit for bit (fast evidence, not a proof)");
  add_common(fpsan);
  fpsan->add_option_function<std::string>("--trials", into(trials_text), "random inputs to run, 1 to 1000000000 (default 100)")->type_name("N");
  fpsan->add_option_function<std::string>("--seed", into(seed_text), "seed of the first input (default 1; input k uses seed + k)")->type_name("S");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 4;
  }

  // The option values, each checked; the first bad one is the answer.
  double timeout = cli::kDefaultTimeoutSeconds;
  std::uint64_t max_memory = default_memory, threads = 0, seed = 1, trials = 100;
  tileverify::Dim3 cta_dims{0, 0, 0};
  std::string bad;
  if (bad.empty() && timeout_text) bad = cli::parse_timeout(*timeout_text, &timeout);
  if (bad.empty() && memory_text) bad = cli::parse_size("--max-memory", *memory_text, &max_memory);
  if (bad.empty() && cta) bad = cli::parse_cta(*cta, &cta_dims);
  if (bad.empty() && threads_text)
    bad = cli::parse_count("--threads", *threads_text, 0, 1024, "0: one per hardware thread", &threads);
  if (bad.empty() && trials_text)
    bad = cli::parse_count("--trials", *trials_text, 1, 1000000000, "random inputs to run", &trials);
  if (bad.empty() && seed_text)
    bad = cli::parse_count("--seed", *seed_text, 0, UINT64_MAX, "the seed of the first input", &seed);
  if (!bad.empty()) {
    print(error_report(bad), as_json, "");
    return 4;
  }

  // One deadline for the whole command, from its start: reading the spec
  // and the PTX count against it too.
  const auto start = std::chrono::steady_clock::now();
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (timeout > 0)
    deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(timeout));

  // "ctas": "all" over a large grid: a progress line every 2 s too.
  auto grid_last = start;
  std::function<void(std::uint64_t, std::uint64_t)> grid_progress;
  if (!quiet)
    grid_progress = [&](std::uint64_t done, std::uint64_t total) {
      const auto now = std::chrono::steady_clock::now();
      if (now - grid_last < std::chrono::seconds(2)) return;
      grid_last = now;
      std::fprintf(stderr, "tileverify: ran %llu of %llu CTAs (%.0f s)%s", (unsigned long long)done,
                   (unsigned long long)total, std::chrono::duration<double>(now - start).count(),
                   isatty(2) ? "\r" : "\n");
    };

  Report report;
  std::string headline;  // set when the check ended in an exception
  try {
    auto loaded = tileverify::load_spec(spec_path);
    if (!loaded.spec) {
      report = error_report(loaded.error, spec_path);
    } else {
      tileverify::Spec spec = *loaded.spec;
      if (cta) spec.cta = cta_dims;
      spec.strict = spec.strict || strict;
      std::string outside = cta ? cta_problem(spec, spec_path) : "";
      if (!outside.empty()) {
        report = error_report(outside, spec_path);
      } else if (equiv->parsed()) {
        tileverify::DecideLimits limits;
        limits.threads = unsigned(threads);
        limits.deadline = deadline;
        limits.max_memory_bytes = max_memory;
        limits.grid_progress = grid_progress;
        // --timeout bounds the whole check, and also any one output.
        if (timeout > 0) limits.timeout_seconds = std::min(limits.timeout_seconds, timeout);
        // Progress on stderr for checks that take a while: a line every 2 s.
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
        tileverify::PayloadOptions payload;
        payload.trials = unsigned(trials);
        payload.seed = seed;
        payload.limits.deadline = deadline;
        payload.limits.max_memory_bytes = max_memory;
        payload.limits.grid_progress = grid_progress;  // "ctas": "all": the CTAs of every trial's runs
        report = tileverify::check_payloads(spec, payload);
      } else {
        tileverify::RunLimits limits;
        limits.deadline = deadline;
        limits.max_memory_bytes = max_memory;
        limits.grid_progress = grid_progress;
        report = tileverify::check(spec, limits);
      }
    }
  } catch (const std::bad_alloc&) {
    std::string message = "ran out of memory (the budget is " + cli::size_text(max_memory) +
                          "); raise --max-memory or give a smaller spec";
    report = unknown_report(message, true);
    headline = "UNKNOWN: " + message;
  } catch (const std::exception& e) {
    std::string message = std::string("internal error: ") + e.what() + "; please report it with the spec file";
    report = unknown_report(message, false);
    headline = "UNKNOWN: " + message;
  } catch (...) {
    std::string message = "internal error (an exception of unknown type); please report it with the spec file";
    report = unknown_report(message, false);
    headline = "UNKNOWN: " + message;
  }
  print(report, as_json, headline);
  return report.exit_code();
}
