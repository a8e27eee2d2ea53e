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
#include "merge.hpp"
#include "progress.hpp"

#include "tileverify/differential.hpp"
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
#include <map>
#include <new>
#include <optional>
#include <string>
#include <vector>

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
// runs one CTA (src/spec/load.cpp checks the spec's own "cta" the same way).
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

// A JSON string literal of UTF-8 text; bytes that are not UTF-8 become
// U+FFFD, so that --json stays valid whatever a message quotes.
std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c == '"' || c == '\\') out += '\\', out += char(c);
      else if (c == '\n') out += "\\n";
      else if (c < 0x20 || c == 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else out += char(c);
      ++i;
      continue;
    }
    // A well-formed sequence: lead byte, continuation bytes, no overlong form or surrogate.
    const std::size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
    bool ok = n != 0 && i + n <= s.size() && c < 0xf5;
    for (std::size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
    if (ok && n >= 3) {
      const unsigned char d = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xe0 && d < 0xa0) && !(c == 0xed && d >= 0xa0) && !(c == 0xf0 && d < 0x90) && !(c == 0xf4 && d >= 0x90);
    }
    if (ok) {
      out.append(s, i, n);
      i += n;
    } else {
      out += "\xef\xbf\xbd";
      ++i;
    }
  }
  return out + "\"";
}

// A report in one line: its headline, and where the headline says only the
// verdict ("NOT EQUIVALENT", "UNSAFE (race)"), the first line of evidence
// after it ("first differing output: y[256]").
std::string one_line(const std::string& text) {
  const std::size_t end = text.find('\n');
  std::string line = text.substr(0, end);
  if (line.find(':') != std::string::npos || end == std::string::npos) return line;
  std::string next = text.substr(end + 1, text.find('\n', end + 1) - end - 1);
  next.erase(0, next.find_first_not_of(' '));
  if (next.empty() || next.rfind("time:", 0) == 0) return line;
  return line + ": " + next;
}

// "M=1 N=1024 K=96": the sizes of a suite's case, in the spec's order.
std::string sizes_label(const std::map<std::string, std::int64_t>& sizes, const std::vector<std::string>& order) {
  std::string out;
  for (const std::string& n : order)
    if (sizes.count(n)) out += (out.empty() ? "" : " ") + n + "=" + std::to_string(sizes.at(n));
  for (const auto& kv : sizes)
    if (std::find(order.begin(), order.end(), kv.first) == order.end())
      out += (out.empty() ? "" : " ") + kv.first + "=" + std::to_string(kv.second);
  return out;
}

// --shapes: the command over every size of a suite (docs/cli.md, "Sizes and
// boundary suites"). One line per size and a summary (or one JSON object
// with every case's report); the exit code is the worst of the cases'. A
// boundary combination the spec cannot take is skipped, with the reason,
// and counts for nothing; a case of the spec's own "suite" that cannot be
// evaluated is an error (exit 4), since its author asked for it.
// The deadline (the command's) bounds reading the spec and every size; the
// sizes it leaves are not run, and counted as unknown.
int run_suite(const std::string& spec_path, bool boundary, const std::map<std::string, std::int64_t>& sizes, bool as_json,
              const std::optional<std::chrono::steady_clock::time_point>& deadline,
              const std::function<Report(const tileverify::Spec&, std::string*)>& run) {
  const char* kind = boundary ? "boundary" : "suite";
  const std::string suite_name = boundary ? "boundary suite" : "suite";
  tileverify::SizeSuite suite;
  Report failed = [&] {
    try {
      suite = tileverify::plan_suite(spec_path, boundary ? tileverify::SuiteKind::Boundary : tileverify::SuiteKind::Listed,
                                     sizes, deadline);
      if (suite.timed_out) return unknown_report(suite.error, true);
      return suite.error.empty() ? Report{} : error_report(suite.error, spec_path);
    } catch (const std::exception& e) {
      return error_report(std::string("the suite could not be made: ") + e.what(), spec_path);
    }
  }();
  if (!suite.error.empty() || suite.cases.empty()) {
    if (suite.cases.empty() && failed.error.empty()) failed = error_report(spec_path + ": the suite has no sizes", spec_path);
    print(failed, as_json, "");
    return failed.exit_code();
  }
  int worst = 0;
  std::size_t ran = 0, skipped = 0;
  std::map<std::string, std::size_t> counts;    // verdict -> cases
  std::map<std::string, std::string> first_at;  // verdict other than a pass -> its first sizes
  std::string worst_verdict;  // the first case of the worst exit code
  std::string json = "{\n\"suite\": \"" + std::string(kind) + "\",\n\"cases\": [";
  std::size_t not_run = 0;  // sizes left when the deadline passed
  for (std::size_t i = 0; i < suite.cases.size(); ++i) {
    if (deadline && std::chrono::steady_clock::now() > *deadline) {
      not_run = suite.cases.size() - i;
      break;
    }
    tileverify::SizeCase& c = suite.cases[i];
    try {
      suite.evaluate(c);
    } catch (const std::exception& e) {
      c.error = spec_path + ": the size could not be made: " + e.what();
    }
    const std::string label = sizes_label(c.sizes, suite.names);
    std::string sizes_json = "{";
    for (const auto& kv : c.sizes)
      sizes_json += (sizes_json.size() > 1 ? ", " : "") + json_string(kv.first) + ": " + std::to_string(kv.second);
    sizes_json += "}";
    json += std::string(i ? "," : "") + "\n{\"sizes\": " + sizes_json;
    if (!c.skipped.empty()) {
      ++skipped;
      if (!as_json) std::printf("%s: skipped: %s\n", label.c_str(), c.skipped.c_str());
      json += ", \"skipped\": " + json_string(c.skipped) + "}";
      std::fflush(stdout);
      continue;
    }
    std::string case_headline;
    Report r;
    if (c.spec) {
      r = run(*c.spec, &case_headline);
      // A --cta outside a boundary combination's grid is that combination's
      // shape, not the user's mistake: skipped like a grid of 0.
      if (boundary && r.verdict == Outcome::Error && r.error.rfind("--cta ", 0) == 0) {
        ++skipped;
        if (!as_json) std::printf("%s: skipped: %s\n", label.c_str(), r.error.c_str());
        json += ", \"skipped\": " + json_string(r.error) + "}";
        std::fflush(stdout);
        continue;
      }
    } else {
      r = error_report(c.error, spec_path);
    }
    ++ran;
    const std::string verdict = tileverify::outcome_name(r.verdict);
    ++counts[verdict];
    if (r.exit_code() != 0 && !first_at.count(verdict)) first_at[verdict] = label;
    if (ran == 1 || r.exit_code() > worst) {
      worst = r.exit_code();
      worst_verdict = verdict;
    }
    if (!as_json) {
      std::string line;
      try {
        line = case_headline.empty() ? one_line(r.text()) : case_headline;
      } catch (...) {
        line = std::string(tileverify::outcome_name(r.verdict)) + ": " + r.error;
      }
      std::printf("%s: %s\n", label.c_str(), line.c_str());
      std::fflush(stdout);
    } else {
      std::string body;
      try {
        body = r.json();
      } catch (...) {
        body = "{\"verdict\": " + json_string(verdict) + ", \"diagnostics\": [], \"error\": " +
               json_string(r.error.empty() ? "the report could not be written" : r.error) + "}";
      }
      json += ", \"verdict\": " + json_string(verdict) + ", \"report\": " + body + "}";
    }
  }
  if (not_run) {
    // Unknown, not skipped: these sizes are the spec's, and nothing was
    // said about them.
    const std::string why = std::to_string(not_run) + " of the " + std::to_string(suite.cases.size()) +
                            " sizes not run: the time limit (--timeout) was reached before them";
    if (ran == 0 || 3 > worst) {
      worst = 3;
      worst_verdict = "unknown";
    }
    if (!first_at.count("unknown")) first_at["unknown"] = sizes_label(suite.cases[suite.cases.size() - not_run].sizes, suite.names);
    if (!as_json) std::printf("%s\n", why.c_str());
    json += std::string(suite.cases.size() > not_run ? "," : "") + "\n{\"not_run\": " + std::to_string(not_run) +
            ", \"verdict\": \"unknown\", \"why\": " + json_string(why) + "}";
    if (ran == 0) {
      Report r = unknown_report(why, true);
      if (as_json) print(r, true, "");
      return 3;
    }
  }
  if (ran == 0) {
    // Nothing verified is no pass.
    Report r = error_report(spec_path + ": every size of the " + suite_name + " was skipped (" + std::to_string(skipped) +
                                " sizes): the spec takes none of them",
                            spec_path);
    print(r, as_json, "");
    return r.exit_code();
  }
  std::string summary;
  for (const auto& kv : counts) summary += (summary.empty() ? "" : ", ") + std::to_string(kv.second) + " " + kv.first;
  if (as_json) {
    json += "\n],\n\"sizes_run\": " + std::to_string(ran) + ",\n\"sizes_skipped\": " + std::to_string(skipped) + ",\n\"sizes_not_run\": " + std::to_string(not_run) +
            ",\n\"verdict\": " + json_string(worst_verdict) + "\n}\n";
    std::fputs(json.c_str(), stdout);
    return worst;
  }
  if (skipped) summary += "; " + std::to_string(skipped) + " skipped";
  if (not_run) summary += "; " + std::to_string(not_run) + " not run (time limit)";
  std::printf("%s of %s: %zu sizes run: %s\n", suite_name.c_str(), spec_path.c_str(), ran, summary.c_str());
  // The reports themselves: one rerun at those sizes gives the whole of it.
  for (const auto& kv : first_at) {
    std::string options;
    for (std::size_t at = 0; at < kv.second.size();) {
      std::size_t space = kv.second.find(' ', at);
      if (space == std::string::npos) space = kv.second.size();
      options += " --size " + kv.second.substr(at, space - at);
      at = space + 1;
    }
    std::printf("  %s first at %s: rerun with%s for its report\n", kv.first.c_str(), kv.second.c_str(), options.c_str());
  }
  return worst;
}

// `tileverify test`: the differential run of one spec, or of every size of
// a suite (one line per size, a summary; the exit code the worst).
int run_test(const std::string& spec_path, const std::optional<bool>& boundary,
             const std::map<std::string, std::int64_t>& sizes, bool as_json,
             const tileverify::DifferentialOptions& options) {
  auto guarded = [&](const tileverify::Spec& spec) {
    try {
      return tileverify::differential_test(spec, options);
    } catch (...) {  // differential_test never throws; this keeps the promise if it ever did
      tileverify::DifferentialReport r;
      r.verdict = tileverify::DifferentialVerdict::Error;
      r.message = "internal error; please report it with the spec file";
      return r;
    }
  };
  if (!boundary) {
    auto loaded = sizes.empty() ? tileverify::load_spec(spec_path) : tileverify::load_spec(spec_path, sizes);
    if (!loaded.spec) {
      print(error_report(loaded.error, spec_path), as_json, "");
      return 4;
    }
    const tileverify::DifferentialReport r = guarded(*loaded.spec);
    std::fputs((as_json ? r.json() : r.text()).c_str(), stdout);
    return r.exit_code();
  }
  tileverify::SizeSuite suite;
  try {
    suite = tileverify::load_suite(spec_path, *boundary ? tileverify::SuiteKind::Boundary : tileverify::SuiteKind::Listed,
                                   sizes);
  } catch (const std::exception& e) {
    suite.error = std::string("the suite could not be made: ") + e.what();
  }
  if (!suite.error.empty() || suite.cases.empty()) {
    print(error_report(suite.error.empty() ? spec_path + ": the suite has no sizes" : suite.error, spec_path), as_json, "");
    return 4;
  }
  int worst = 0;
  std::size_t ran = 0;
  std::map<std::string, std::size_t> counts;
  std::string json = "{\"suite\": \"" + std::string(*boundary ? "boundary" : "suite") + "\", \"cases\": [";
  for (std::size_t i = 0; i < suite.cases.size(); ++i) {
    const tileverify::SizeCase& c = suite.cases[i];
    const std::string label = sizes_label(c.sizes, suite.names);
    std::string line, body;
    int code = 0;
    if (!c.skipped.empty()) {
      line = "skipped: " + c.skipped;
      body = "{\"skipped\": " + json_string(c.skipped) + "}";
    } else if (!c.spec) {
      line = "ERROR: " + c.error;
      body = "{\"verdict\": \"error\", \"message\": " + json_string(c.error) + "}";
      code = 4;
    } else {
      const tileverify::DifferentialReport r = guarded(*c.spec);
      ++ran;
      ++counts[tileverify::differential_verdict_name(r.verdict)];
      line = r.text().substr(0, r.text().find('\n'));
      body = r.json();
      body.erase(body.find_last_not_of('\n') + 1);
      code = r.exit_code();
    }
    worst = std::max(worst, code);
    if (!as_json) {
      std::printf("%s: %s\n", label.c_str(), line.c_str());
      std::fflush(stdout);
    }
    json += std::string(i ? ", " : "") + "{\"sizes\": " + json_string(label) + ", \"report\": " + body + "}";
  }
  if (as_json) {
    std::fputs((json + "]}\n").c_str(), stdout);
  } else {
    std::string summary;
    for (const auto& kv : counts) summary += (summary.empty() ? "" : ", ") + std::to_string(kv.second) + " " + kv.first;
    std::printf("%s of %s: %zu sizes run: %s\n", *boundary ? "boundary suite" : "suite", spec_path.c_str(), ran,
                summary.c_str());
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  // --timeout counts from here, the process's start: reading the options,
  // the spec (10^5 suite entries) and the PTX are part of the check's time.
  const auto start = std::chrono::steady_clock::now();
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
  std::optional<std::string> shard_text;
  std::optional<std::string> cta, timeout_text, memory_text, threads_text, trials_text, seed_text, shapes_text;
  std::vector<std::string> size_texts;  // --size, each occurrence
  auto into = [](std::optional<std::string>& to) { return [&to](const std::string& v) { to = v; }; };
  bool as_json = false;
  bool quiet = false;
  bool strict = false;
  bool no_symmetry = false;
  bool no_thread_classes = false;
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
    sub->add_option_function<std::string>(
           "--shard", into(shard_text),
           "with \"ctas\": \"all\", check only shard I of N (0 to N - 1) of the comparisons; run all N (on N machines, "
           "or N jobs) with --json and combine the reports with `tileverify merge` (docs/cli.md, \"Sharding\")")
        ->type_name("I/N");
    sub->add_flag("--no-symmetry", no_symmetry,
                  "with \"ctas\": \"all\", run every CTA of the grid instead of one per class of CTAs that run the "
                  "same code on translated data (slower; the verdict is the same)");
    sub->add_flag("--no-thread-classes", no_thread_classes,
                  "build every thread's own expressions instead of sharing one thread's among the threads that "
                  "compute the same on renamed inputs (slower, more memory; the verdict is the same)");
    sub->add_option_function<std::string>("--cta", into(cta), "verify this CTA instead of the spec's, as x,y,z (missing components are 0)")
        ->type_name("x,y,z");
    sub->add_option_function<std::string>("--timeout", into(timeout_text), timeout_help)->type_name("SECONDS");
    sub->add_option_function<std::string>("--max-memory", into(memory_text), memory_help)->type_name("SIZE");
    sub->add_option("--size", size_texts,
                    "a size of the spec's \"sizes\" at another value, like M=129 (repeat it for each size)")
        ->type_name("NAME=VALUE")
        ->allow_extra_args(false);
    sub->add_option_function<std::string>("--shapes", into(shapes_text),
                                          "run over a suite of sizes: boundary (derived from \"sizes\" and \"tiles\") "
                                          "or suite (the spec's \"suite\" list); one line per size and a summary")
        ->type_name("boundary|suite");
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
  // GPU: differential runs, and the GPU's view of a proof's answer.
  std::optional<std::string> device_text;
  bool no_stress = false, gpu = false;
  equiv->add_flag("--gpu", gpu,
                  "also run the kernels on the GPU: a not_equivalent counterexample is replayed in float; an "
                  "equivalent verdict gets a short float-hazard pass (docs/cuda.md)");
  equiv->add_option_function<std::string>("--device", into(device_text), "the CUDA device for --gpu (default 0)")->type_name("N");
  bool estimate = false;
  equiv->add_flag("--estimate", estimate,
                  "decide nothing: find the CTA classes, time one symbolic run of each kernel and print what the "
                  "check would take (docs/cli.md, \"Estimating a check\")");
  CLI::App* merge = app.add_subcommand(
      "merge", "combine the --json reports of the shards of a check run with --shard I/N into one verdict");
  std::vector<std::string> merge_paths;
  merge->add_option("reports", merge_paths, "the shards' JSON reports")->required()->type_name("REPORT.json");
  merge->add_flag("--json", as_json, "print a machine-readable report");
  CLI::App* test = app.add_subcommand(
      "test", "run ref and opt on the GPU on generated inputs and compare their float outputs (differential testing; "
              "needs a CUDA GPU)");
  test->add_option("spec", spec_path, "the spec file (JSON)")->required()->type_name("SPEC.json");
  test->add_flag("--json", as_json, "print a machine-readable report");
  test->add_option_function<std::string>("--trials", into(trials_text), "input sets of each kind, 1 to 1000 (default 2)")->type_name("N");
  test->add_option_function<std::string>("--seed", into(seed_text), "seed of the first input set (default 1)")->type_name("S");
  test->add_flag("--no-stress", no_stress, "only ordinary inputs (no large magnitudes, no special values)");
  bool exact = false;
  test->add_flag("--exact", exact,
                 "also measure both kernels against the exact reference (the reference run symbolically, evaluated "
                 "with MPFR on each trial's inputs); needs \"ctas\": \"all\"");
  std::optional<std::string> rel_text, abs_text;
  test->add_option_function<std::string>("--rel", into(rel_text),
                                         "relative tolerance of every output (default: per dtype, docs/oracles.md); "
                                         "with --abs, an element matches when |opt - ref| <= abs + rel |ref|")
      ->type_name("R");
  test->add_option_function<std::string>("--abs", into(abs_text), "absolute tolerance of every output (default: per dtype)")
      ->type_name("A");
  test->add_option_function<std::string>("--device", into(device_text), "the CUDA device (default 0)")->type_name("N");
  test->add_option("--size", size_texts, "a size of the spec's \"sizes\" at another value, like M=129 (repeat it)")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false);
  test->add_option_function<std::string>("--shapes", into(shapes_text),
                                         "run over a suite of sizes: boundary or suite (as for equiv)")
      ->type_name("boundary|suite");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 4;
  }

  if (merge->parsed()) {
    // run_merge turns every failure into a refusal itself; this is the last
    // line should one ever escape it (an abort is never an answer).
    try {
      return cli::run_merge(merge_paths, as_json);
    } catch (...) {
      print(error_report("merge: internal error; please report it with the report files"), as_json, "");
      return 4;
    }
  }

  // The option values, each checked; the first bad one is the answer.
  double timeout = cli::kDefaultTimeoutSeconds;
  std::uint64_t max_memory = default_memory, threads = 0, seed = 1, trials = 100;
  tileverify::Dim3 cta_dims{0, 0, 0};
  std::string bad;
  if (bad.empty() && timeout_text) bad = cli::parse_timeout(*timeout_text, &timeout);
  if (bad.empty() && memory_text) bad = cli::parse_size("--max-memory", *memory_text, &max_memory);
  if (bad.empty() && cta) bad = cli::parse_cta(*cta, &cta_dims);
  unsigned shard_index = 0, shard_count = 1;
  if (bad.empty() && shard_text) bad = cli::parse_shard(*shard_text, &shard_index, &shard_count);
  // fpsan's trials are not split: a shard would run the whole check and
  // say nothing of it (issue 31).
  if (bad.empty() && shard_text && fpsan->parsed())
    bad = "--shard is for equiv and check (a whole-grid check split over machines); fpsan runs whole: leave --shard out";
  if (bad.empty() && shard_text && shapes_text) bad = "--shard checks one size; it cannot be combined with --shapes";
  if (bad.empty() && shard_text && gpu) bad = "--shard cannot be combined with --gpu (run --gpu once, unsharded)";
  if (bad.empty() && threads_text)
    bad = cli::parse_count("--threads", *threads_text, 0, 1024, "0: one per hardware thread", &threads);
  if (test->parsed()) trials = 2;
  if (bad.empty() && trials_text)
    bad = test->parsed() ? cli::parse_count("--trials", *trials_text, 1, 1000, "input sets of each kind", &trials)
                         : cli::parse_count("--trials", *trials_text, 1, 1000000000, "random inputs to run", &trials);
  std::uint64_t device = 0;
  if (bad.empty() && device_text) bad = cli::parse_count("--device", *device_text, 0, 1023, "a CUDA device ordinal", &device);
  double rel = 0, abs = 0;
  tileverify::oracle::Tolerance oracle_tolerance;
  if (bad.empty() && rel_text) bad = cli::parse_tolerance("--rel", *rel_text, &rel);
  if (bad.empty() && abs_text) bad = cli::parse_tolerance("--abs", *abs_text, &abs);
  if (bad.empty() && seed_text)
    bad = cli::parse_count("--seed", *seed_text, 0, UINT64_MAX, "the seed of the first input", &seed);
  std::map<std::string, std::int64_t> sizes;
  for (const std::string& t : size_texts)
    if (bad.empty()) bad = cli::parse_size_choice(t, &sizes);
  bool shapes_boundary = false;
  if (bad.empty() && shapes_text) bad = cli::parse_shapes(*shapes_text, &shapes_boundary);
  if (!bad.empty()) {
    print(error_report(bad), as_json, "");
    return 4;
  }
  if (test->parsed()) {
    tileverify::DifferentialOptions options;
    options.seed = seed;
    options.trials_per_kind = unsigned(trials);
    options.stress = !no_stress;
    options.exact = exact;
    options.device = int(device);
    if (rel_text || abs_text) {
      oracle_tolerance.rel = rel;
      oracle_tolerance.abs = abs;
      options.tolerance = oracle_tolerance;
    }
    const int code =
        run_test(spec_path, shapes_text ? std::optional<bool>(shapes_boundary) : std::nullopt, sizes, as_json, options);
    // A kernel that timed out may still run on the GPU; the driver's
    // teardown at exit would wait for it. The report is out: leave now.
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(code);
  }

  // One deadline for the whole command, from the process's start: reading
  // the spec and the PTX count against it too.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (timeout > 0)
    deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(timeout));

  // Progress on stderr for checks that take a while (docs/cli.md, "Progress"):
  // the CTAs of a whole grid run, then the outputs decided.
  cli::Progress progress(start, stderr, isatty(2));
  std::function<void(std::uint64_t, std::uint64_t)> grid_progress;
  if (!quiet)
    grid_progress = [&](std::uint64_t done, std::uint64_t total) { progress.update("ran", "CTAs", done, total); };

  // One check of one spec, at the sizes it was evaluated at.
  auto run_spec = [&](tileverify::Spec spec) -> Report {
    if (cta) spec.cta = cta_dims;
    spec.strict = spec.strict || strict;
    std::string outside = cta ? cta_problem(spec, spec_path) : "";
    if (!outside.empty()) return error_report(outside, spec_path);
    if (shard_count > 1 && !spec.all_ctas)
      return error_report(spec_path + ": --shard splits a whole-grid check: the spec needs \"ctas\": \"all\"", spec_path);
    if (equiv->parsed()) {
      tileverify::DecideLimits limits;
      limits.threads = unsigned(threads);
      limits.deadline = deadline;
      limits.max_memory_bytes = max_memory;
      limits.grid_progress = grid_progress;
      limits.cta_classes = !no_symmetry;
      limits.thread_classes = !no_thread_classes;
      limits.shard_index = shard_index;
      limits.shard_count = shard_count;
      // --timeout bounds the whole check, and also any one output.
      if (timeout > 0) limits.timeout_seconds = std::min(limits.timeout_seconds, timeout);
      if (!quiet)
        limits.progress = [&](std::size_t done, std::size_t total) {
          progress.update("decided", "outputs", done, total);
        };
      return tileverify::check_equivalence(spec, limits);
    }
    if (fpsan->parsed()) {
      tileverify::PayloadOptions payload;
      payload.trials = unsigned(trials);
      payload.seed = seed;
      payload.limits.deadline = deadline;
      payload.limits.max_memory_bytes = max_memory;
      payload.limits.grid_progress = grid_progress;  // "ctas": "all": the CTAs of every trial's runs
      return tileverify::check_payloads(spec, payload);
    }
    tileverify::RunLimits limits;
    limits.deadline = deadline;
    limits.max_memory_bytes = max_memory;
    limits.grid_progress = grid_progress;
    limits.cta_classes = !no_symmetry;
    limits.thread_classes = !no_thread_classes;
    limits.shard_index = shard_index;
    limits.shard_count = shard_count;
    return tileverify::check(spec, limits);
  };

  // Whatever goes wrong inside a check still ends in a report; `headline`
  // replaces the text report of one that ended in an exception.
  auto guarded = [&](const std::function<Report()>& body, std::string* headline) -> Report {
    try {
      return body();
    } catch (const std::bad_alloc&) {
      std::string message = "ran out of memory (the budget is " + cli::size_text(max_memory) +
                            "); raise --max-memory or give a smaller spec";
      *headline = "UNKNOWN: " + message;
      return unknown_report(message, true);
    } catch (const std::exception& e) {
      std::string message = std::string("internal error: ") + e.what() + "; please report it with the spec file";
      *headline = "UNKNOWN: " + message;
      return unknown_report(message, false);
    } catch (...) {
      std::string message = "internal error (an exception of unknown type); please report it with the spec file";
      *headline = "UNKNOWN: " + message;
      return unknown_report(message, false);
    }
  };

  if (shapes_text)
    return run_suite(spec_path, shapes_boundary, sizes, as_json, deadline,
                     [&](const tileverify::Spec& spec, std::string* headline) {
                       Report r = guarded([&] { return run_spec(spec); }, headline);
                       progress.end_line();
                       return r;
                     });

  if (estimate) {
    if (shapes_text || shard_count > 1 || gpu) {
      std::fprintf(stderr, "--estimate estimates one check: not with --shapes, --shard or --gpu\n");
      return 4;
    }
    tileverify::SpecResult loaded = tileverify::load_spec(spec_path, sizes, deadline);
    tileverify::CheckEstimate e;
    e.spec = spec_path;
    if (!loaded.spec) {
      e.error = loaded.error;
    } else {
      tileverify::DecideLimits limits;
      limits.deadline = deadline;
      limits.max_memory_bytes = max_memory;
      limits.cta_classes = !no_symmetry;
      limits.thread_classes = !no_thread_classes;
      if (cta) loaded.spec->cta = cta_dims;
      e = tileverify::estimate_equivalence(*loaded.spec, limits);
    }
    std::fputs((as_json ? e.json() : e.text()).c_str(), stdout);
    return !e.error.empty() ? (loaded.timed_out ? 3 : 4) : e.diagnostics.empty() ? 0 : 2;
  }

  std::string headline;
  std::optional<tileverify::Spec> used;  // the spec checked, for --gpu
  Report report = guarded(
      [&] {
        auto loaded = tileverify::load_spec(spec_path, sizes, deadline);
        if (loaded.timed_out) return unknown_report(loaded.error, true);
        if (!loaded.spec) return error_report(loaded.error, spec_path);
        used = loaded.spec;
        return run_spec(*loaded.spec);
      },
      &headline);
  progress.end_line();  // the report starts on a line of its own
  if (gpu && used && headline.empty()) {
    // The GPU's view, after the proof's report: evidence beside the verdict,
    // which it leaves as it is (docs/cuda.md, "equiv --gpu").
    std::string text, json_field;
    if (report.verdict == Outcome::NotEquivalent && report.mismatch) {
      const tileverify::ReplayReport rr = tileverify::replay_counterexample(*used, *report.mismatch, int(device));
      text = rr.text();
      json_field = "{\"replayed\": " + std::string(rr.ran ? "true" : "false") + ", \"device\": " + json_string(rr.device) +
                   ", \"error\": " + json_string(rr.error) + ", \"output\": " + json_string(rr.output) +
                   ", \"element\": " + std::to_string(rr.element) + ", \"ref\": " + json_string(std::to_string(rr.ref_value)) +
                   ", \"opt\": " + json_string(std::to_string(rr.opt_value)) + ", \"differs\": " + (rr.differs ? "true" : "false") + "}";
    } else if (report.verdict == Outcome::Equivalent) {
      tileverify::DifferentialOptions o;
      o.seed = seed;
      o.trials_per_kind = 1;
      o.device = int(device);
      const tileverify::DifferentialReport d = tileverify::differential_test(*used, o);
      if (d.verdict == tileverify::DifferentialVerdict::Hazard)
        text = "  warning: equivalent over the reals, but in float " + d.message.substr(d.message.find("but ") + 4) + "\n";
      else if (d.verdict == tileverify::DifferentialVerdict::Differ)
        text = "  warning: equivalent over the reals, but on the GPU " + d.message + " (float rounding beyond the "
               "tolerance: see tileverify test)\n";
      else if (d.verdict == tileverify::DifferentialVerdict::Agree)
        text = "  on the GPU (" + d.device + "): the float outputs agree on " + std::to_string(d.trials.size()) +
               " input sets, large magnitudes and special values included\n";
      else
        text = "  on the GPU: not run (" + d.message + ")\n";
      json_field = d.json();
      json_field.erase(json_field.find_last_not_of('\n') + 1);
    }
    if (!json_field.empty()) {
      if (as_json) {
        std::string out = report.json();
        const std::size_t close = out.find_last_of('}');
        if (close != std::string::npos) out = out.substr(0, close) + ", \"gpu\": " + json_field + "}";
        std::fputs((out + "\n").c_str(), stdout);
      } else {
        std::string out = report.text();
        // Before the timing line, as part of the evidence.
        const std::size_t timing = out.rfind("  time:");
        out.insert(timing == std::string::npos ? out.size() : timing, text);
        std::fputs(out.c_str(), stdout);
      }
      return report.exit_code();
    }
  }
  print(report, as_json, headline);
  return report.exit_code();
}
