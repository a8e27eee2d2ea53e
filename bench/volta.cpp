// bench/volta: the shape of VOLTA's evaluation tables (§6, Tables 1–5) on our
// own example pairs (examples/kernels/<family>/*.json).
//
// For every pair spec it runs the full check (check_equivalence) and reports
// the verdict against the spec's "expect", the time split into parse /
// evaluate / decide, the syncs executed, PTX lines and threads of each kernel,
// the peak resident memory, and the ratio of the verification time to our
// floor: both kernels run in the concrete domain (doubles, race tracking on)
// on the same launches, i.e. what ordinary execution costs in our evaluator.
//
// Each pair runs in its own child process (this program, re-executed with a
// hidden flag) so that wait4() gives that pair's own peak RSS, and one pair at
// a time: the machine is small and shared, and the decider already uses every
// core.
//
// Usage: tileverify_bench_volta [--quick] [--family NAME] [--filter SUBSTRING]
//                               [--root DIR] [--runs N] [--write FILE]
//   --quick   CI smoke test: the reductions and one softmax pair, one
//             repetition each; no timing asserts, but exit 1 on any verdict
//             that differs from the spec's "expect" (as in every mode).
//   --runs    run each check at least N times (default 5, quick 1) and report
//             the median: one slow run can land on a moment when other work
//             takes a core. Checks under 0.5 s repeat until 0.5 s is spent.
//   --write   replace the section between <!-- volta-table:begin --> and
//             <!-- volta-table:end --> of FILE (added, with an intro, if missing);
//             only for a full run, so a filtered run cannot truncate the doc.
#include "tileverify/equiv.hpp"
#include "tileverify/eval.hpp"
#include "tileverify/ptx.hpp"

#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#ifndef TILEVERIFY_EXAMPLES_DIR
#define TILEVERIFY_EXAMPLES_DIR "examples/kernels"
#endif
#ifndef TILEVERIFY_BENCH_BUILD_TYPE
#define TILEVERIFY_BENCH_BUILD_TYPE "unknown"
#endif

using namespace tileverify;
namespace fs = std::filesystem;

namespace {

constexpr const char* kBegin = "<!-- volta-table:begin -->";
constexpr const char* kEnd = "<!-- volta-table:end -->";
// The child's stdout carries its results after this line, as "key value" lines.
constexpr const char* kResultMark = "tileverify-bench-volta-result";

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// CPU seconds of this process so far, all threads (the decider runs several).
double cpu_seconds() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// ---------------------------------------------------------------- the child: one pair

// Non-empty lines, as VOLTA's "PTX LOC" (each of our PTX files holds one kernel).
std::size_t ptx_lines(const std::string& path) {
  std::ifstream in(path);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(" \t\r") != std::string::npos) ++n;
  return n;
}

// One concrete run of a kernel over what the check covers: the spec's CTA, or
// every CTA of the grid for "ctas": "all". Returns the thread-instructions.
std::uint64_t run_concrete(const Program& p, const Launch& base, bool all_ctas) {
  ConcreteDomain dom;
  if (!all_ctas) return run_program(p, base, dom).stats.thread_instructions;
  std::uint64_t n = 0;
  Launch l = base;
  for (std::uint32_t z = 0; z < l.grid.z; ++z)
    for (std::uint32_t y = 0; y < l.grid.y; ++y)
      for (std::uint32_t x = 0; x < l.grid.x; ++x) {
        l.cta = Dim3{x, y, z};
        n += run_program(p, l, dom).stats.thread_instructions;
      }
  return n;
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

// Runs one spec and prints its measurements after kResultMark. The check runs
// at least min_runs times and until verify_budget seconds are spent, and the
// median run is reported; the floor likewise (floor_min_reps, floor_budget),
// in turns with the check.
int child_main(const std::string& spec_path, double verify_budget, int min_runs, double floor_budget,
               int floor_min_reps) {
  std::printf("%s\n", kResultMark);
  auto loaded = load_spec(spec_path);
  if (!loaded.spec) {
    std::printf("verdict error\nerror %s\n", one_line(loaded.error).c_str());
    return 0;
  }
  const Spec& spec = *loaded.spec;
  std::printf("expect %s\n", spec.expect.c_str());
  if (!spec.ref || !spec.opt) {
    std::printf("verdict error\nerror not a pair spec (needs \"ref\" and \"opt\")\n");
    return 0;
  }
  std::printf("ref_loc %zu\nopt_loc %zu\n", ptx_lines(spec.ref->ptx), ptx_lines(spec.opt->ptx));

  // The floor's programs: parsing is not part of it (it is the same work in
  // both).
  KernelLoad ka = load_kernel(*spec.ref), kb = load_kernel(*spec.opt);
  // A spec may leave the block to the PTX's .reqntid.
  auto threads = [](const KernelSpec& k, const KernelLoad& l) -> unsigned long long {
    if (k.block.count() != 0 || !l.program) return k.block.count();
    const auto& r = l.program->reqntid;
    return (unsigned long long)r[0] * r[1] * r[2];
  };
  std::printf("ref_threads %llu\nopt_threads %llu\n", threads(*spec.ref, ka), threads(*spec.opt, kb));
  const bool floor_ok = ka.program && kb.program;
  Launch la = launch_of(spec, *spec.ref), lb = launch_of(spec, *spec.opt);

  // The check, repeated while it is cheap so that millisecond pairs are not
  // one noisy sample; each repetition starts from a fresh ExprContext.
  // CPU time is kept beside the wall time: on a shared machine it moves far
  // less when other work competes for the cores.
  //
  // Check runs and floor runs take turns, the floor's share of the time kept
  // at floor_budget / verify_budget of the check's, so that both medians come
  // from the same stretch of time: this machine's speed drifts over seconds
  // (other work on the host), and a ratio of a check measured in one stretch
  // to a floor measured in the next moved by 30%.
  struct Run {
    double wall, cpu;
    Report report;
  };
  std::vector<Run> runs;
  std::vector<double> floor;
  double spent = 0, floor_spent = 0;
  std::uint64_t instr = 0;
  const double share = verify_budget > 0 ? floor_budget / verify_budget : 1;
  auto checks_wanted = [&] { return (int(runs.size()) < min_runs || spent < verify_budget) && runs.size() < 5000; };
  auto floors_wanted = [&] {
    return floor_ok && (int(floor.size()) < floor_min_reps || floor_spent < floor_budget) && floor.size() < 20000;
  };
  while (checks_wanted() || floors_wanted()) {
    if (checks_wanted()) {
      auto t0 = std::chrono::steady_clock::now();
      double c0 = cpu_seconds();
      Report r = check_equivalence(spec);
      double s = seconds_since(t0);
      spent += s;
      runs.push_back({s, cpu_seconds() - c0, std::move(r)});
      // The peak of a process that ran one check: later repetitions (and the
      // floor) can only raise it through allocator reuse, not through the check.
      if (runs.size() == 1) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        std::printf("maxrss_one_kib %ld\n", ru.ru_maxrss);
      }
    }
    // Floor runs up to their share of the time so far (at least one a turn).
    bool first = true;
    while (floors_wanted() && (first || !checks_wanted() || floor_spent < share * spent)) {
      first = false;
      auto t0 = std::chrono::steady_clock::now();
      instr = run_concrete(*ka.program, la, spec.all_ctas) + run_concrete(*kb.program, lb, spec.all_ctas);
      double s = seconds_since(t0);
      floor_spent += s;
      floor.push_back(s);
    }
  }
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.wall < b.wall; });
  const Run& mid = runs[runs.size() / 2];
  const double total = mid.wall;
  const Report& rep = mid.report;
  std::printf("verdict %s\n", outcome_name(rep.verdict));
  if (!rep.error.empty()) std::printf("error %s\n", one_line(rep.error).c_str());
  std::printf("cpu %.9f\n", mid.cpu);
  std::printf("verify_reps %zu\ntotal %.9f\nparse %.9f\neval %.9f\ndecide %.9f\n", runs.size(), total,
              rep.stats.parse_seconds, rep.stats.eval_seconds, rep.stats.decide_seconds);
  std::printf("ref_block_syncs %llu\nopt_block_syncs %llu\nref_warp_syncs %llu\nopt_warp_syncs %llu\n",
              (unsigned long long)rep.stats.ref.block_syncs, (unsigned long long)rep.stats.opt.block_syncs,
              (unsigned long long)rep.stats.ref.warp_syncs, (unsigned long long)rep.stats.opt.warp_syncs);
  std::printf("ref_instr %llu\nopt_instr %llu\n", (unsigned long long)rep.stats.ref.thread_instructions,
              (unsigned long long)rep.stats.opt.thread_instructions);
  if (!floor_ok) {
    std::printf("floor_error %s\n", one_line(ka.program ? kb.error : ka.error).c_str());
    return 0;
  }
  std::printf("floor %.9f\nfloor_reps %zu\nfloor_instr %llu\n", median(floor), floor.size(), (unsigned long long)instr);
  return 0;
}

// ---------------------------------------------------------------- the parent

struct Measured {
  std::string family, stem;  // "reduction", "red1.fastmath"
  std::string path;
  std::map<std::string, std::string> kv;  // the child's results
  long maxrss_kib = -1;  // the whole child (wait4)
  std::string failure;  // the child died or printed nothing
  bool fastmath() const { return stem.size() > 9 && stem.compare(stem.size() - 9, 9, ".fastmath") == 0; }
  std::string pair() const { return fastmath() ? stem.substr(0, stem.size() - 9) : stem; }
  std::string get(const std::string& k) const {
    auto it = kv.find(k);
    return it == kv.end() ? "" : it->second;
  }
  double num(const std::string& k) const {
    std::string v = get(k);
    return v.empty() ? NAN : std::strtod(v.c_str(), nullptr);
  }
  // Peak RSS of one check (the child's own report), else of the whole child.
  double peak_kib() const {
    double one = num("maxrss_one_kib");
    return std::isnan(one) ? double(maxrss_kib) : one;
  }
  bool matches() const {
    if (!failure.empty()) return false;
    std::string e = get("expect");
    return e.empty() || e == get("verdict");
  }
};

std::string self_exe() {
  std::vector<char> buf(4096);
  ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  return n > 0 ? std::string(buf.data(), std::size_t(n)) : std::string();
}

// Runs this program with `args` in a child, returns its stdout, and puts the
// child's own peak RSS in *maxrss_kib. wait4() reports the rusage of exactly
// that child (RUSAGE_CHILDREN would be the maximum over every child so far).
// After exec, ru_maxrss still covers the pre-exec copy of this parent, which
// holds no kernel data: the idle baseline printed with the table measures it.
std::string spawn(const std::string& exe, const std::vector<std::string>& args, long* maxrss_kib,
                  std::string* failure) {
  int fd[2];
  if (pipe(fd) != 0) {
    *failure = "pipe failed";
    return "";
  }
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    *failure = "fork failed";
    close(fd[0]);
    close(fd[1]);
    return "";
  }
  if (pid == 0) {
    dup2(fd[1], STDOUT_FILENO);
    close(fd[0]);
    close(fd[1]);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(exe.c_str()));
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  close(fd[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fd[0], buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    out.append(buf, std::size_t(n));
  }
  close(fd[0]);
  int status = 0;
  struct rusage ru;
  std::memset(&ru, 0, sizeof ru);
  while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  *maxrss_kib = ru.ru_maxrss;  // KiB on Linux
  if (WIFSIGNALED(status))
    *failure =
        std::string("killed by signal ") + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    *failure = "exit status " + std::to_string(WEXITSTATUS(status));
  return out;
}

std::map<std::string, std::string> parse_results(const std::string& out, std::string* failure) {
  std::map<std::string, std::string> kv;
  std::size_t at = out.find(kResultMark);
  if (at == std::string::npos) {
    if (failure->empty()) *failure = "no results";
    return kv;
  }
  std::istringstream in(out.substr(at + std::strlen(kResultMark)));
  for (std::string line; std::getline(in, line);) {
    std::size_t sp = line.find(' ');
    if (sp != std::string::npos) kv[line.substr(0, sp)] = line.substr(sp + 1);
  }
  return kv;
}

// ---------------------------------------------------------------- the machine

std::string first_match(const char* file, const char* key) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) {
      std::size_t c = line.find(':');
      std::string v = c == std::string::npos ? "" : line.substr(c + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      return v;
    }
  return "";
}

std::string machine_line() {
  std::string cpu = first_match("/proc/cpuinfo", "model name");
  if (cpu.empty()) cpu = "unknown CPU";
  unsigned cores = std::thread::hardware_concurrency();
  double mem_gib = std::strtod(first_match("/proc/meminfo", "MemTotal").c_str(), nullptr) / (1024.0 * 1024.0);
  struct utsname u;
  std::string os = uname(&u) == 0 ? std::string(u.sysname) + " " + u.release : "unknown OS";
#if defined(__clang__)
  std::string compiler = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  std::string compiler = std::string("g++ ") + __VERSION__;
#else
  std::string compiler = "unknown compiler";
#endif
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s, %u hardware threads, %.1f GiB RAM, %s, %s, %s build", cpu.c_str(), cores, mem_gib,
                os.c_str(), compiler.c_str(), TILEVERIFY_BENCH_BUILD_TYPE);
  return buf;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one;
  in >> one;
  return one.empty() ? "unknown" : one;
}

std::string today() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::localtime(&t));
  return buf;
}

// ---------------------------------------------------------------- VOLTA's numbers

// The tables group our families like VOLTA's §6; `volta` summarizes the
// paper's times for the family (24-core AMD EPYC 7413).
struct Family {
  const char* dir;
  const char* title;
  const char* volta;
};
const Family kFamilies[] = {
    {"reduction", "Table 1 — reductions (Harris; 4 CTAs of 128 values, CTA 0 checked)",
     "VOLTA Table 1: 0.007 s for each of (Red-1, Red-1..4); Red-5..7 rejected as races (no time given)."},
    {"sgemm", "Table 2 — SGEMM ladder (Boehm; one 64×64 output tile, K = 64)",
     "VOLTA Table 2: 502–570 s for (MatMul-1, MatMul-1..7), 131k–524k block syncs counted per thread."},
    {"attention", "Table 3 — attention (one head: Q 16×64, K and V 512×64, d = 64)",
     "VOLTA Table 3: 22.5 s (Attention, Attention), 82.7 s FA1, 170.9 s FA1-TC, 140.2 s FA2-TC."},
    {"conv2d", "Table 4 — conv2d (input 1×8×8×4 NHWC, 3×3 filter to 8 channels, pad 1)",
     "VOLTA has no conv2d table: §6.2 verifies one LLM-generated tensor-core convolution (256 threads, a 128×128 "
     "output tile, 389/1132 PTX lines) in 29 s; its Table 4 holds LLM-generated GEMMs (203–221 s, 32×32 tiles) "
     "and Table 5 TileLang GEMMs (11–440 s), for which we have no counterpart."},
    {"softmax", "Softmax (VOLTA Fig. 1; one row of 128)",
     "VOLTA gives no softmax time (Fig. 1 is its running example)."},
    {"triton", "Triton 3.6 output for sm_80 (examples/triton; PTX as emitted, every CTA of both grids)",
     "VOLTA has no Triton table: its Table 5 (TileLang GEMMs, 11–440 s) is the nearest, compiler output of another "
     "tile language."},
};

// Families kept outside the root's folders: (family, folder relative to the root).
const std::pair<const char*, const char*> kExtraFamilies[] = {
    {"triton", "../triton/sm80"}, {"triton_sm90", "../triton/sm90"}, {"hopper", "../hopper"}};

// The VOLTA row a pair corresponds to (same optimized kernel; our references
// are serial where VOLTA's reduction reference is Red-1).
struct VoltaRow {
  const char* family;
  const char* pair;
  const char* text;
  double seconds;  // NaN: VOLTA gives no time
};
const VoltaRow kVoltaRows[] = {
    {"reduction", "red1_self", "0.007 (Red-1, Red-1)", 0.007},
    {"reduction", "red2", "0.007 (Red-1, Red-2)", 0.007},
    {"reduction", "red3", "0.007 (Red-1, Red-3)", 0.007},
    {"reduction", "red4", "0.007 (Red-1, Red-4)", 0.007},
    {"reduction", "red5", "race (Red-5)", NAN},
    {"reduction", "red6", "race (Red-6)", NAN},
    {"reduction", "red7", "race (Red-7)", NAN},
    {"sgemm", "naive_self", "502 (MatMul-1, MatMul-1)", 502},
    {"sgemm", "smem", "520 (MatMul-3)", 520},
    {"sgemm", "blocktile1d", "531 (MatMul-4)", 531},
    {"sgemm", "blocktile2d", "570 (MatMul-5)", 570},
    {"sgemm", "vectorized", "540 (MatMul-6)", 540},
    {"attention", "ref_self", "22.5 (Attention, Attention)", 22.5},
    {"attention", "fa1", "82.7 (FA1)", 82.7},
    {"attention", "fa1_tc", "170.9 (FA1-TC)", 170.9},
    {"attention", "fa2_tc", "140.2 (FA2-TC)", 140.2},
    {"conv2d", "implicit_gemm", "29 (LLM conv, §6.2; larger)", 29},
};

const VoltaRow* volta_row(const Measured& m) {
  for (const VoltaRow& v : kVoltaRows)
    if (m.family == v.family && m.pair() == v.pair) return &v;
  return nullptr;
}

std::string volta_for(const Measured& m) {
  const VoltaRow* v = volta_row(m);
  return v ? v->text : "—";
}

// ---------------------------------------------------------------- formatting

std::string fmt(const char* f, double v) {
  if (std::isnan(v)) return "—";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// Seconds with three significant digits, without scientific notation.
std::string secs(double s) {
  if (std::isnan(s)) return "—";
  if (s >= 100) return fmt("%.0f", s);
  if (s >= 10) return fmt("%.1f", s);
  if (s >= 1) return fmt("%.2f", s);
  if (s >= 0.1) return fmt("%.3f", s);
  if (s >= 0.01) return fmt("%.4f", s);
  return fmt("%.5f", s);
}

std::string ratio(double r) {
  if (std::isnan(r) || std::isinf(r)) return "—";
  return r >= 10 ? fmt("%.0f×", r) : fmt("%.1f×", r);
}

// Counts as VOLTA prints them: 1k, 524k.
std::string count(const std::string& v) {
  if (v.empty()) return "—";
  double x = std::strtod(v.c_str(), nullptr);
  if (x >= 10000) return fmt("%.0fk", x / 1000);
  if (x >= 1000) return fmt("%.1fk", x / 1000);
  return v;
}

std::string both(const Measured& m, const std::string& key, bool as_count = false) {
  std::string a = m.get("ref_" + key), b = m.get("opt_" + key);
  if (as_count) {
    a = count(a);
    b = count(b);
  }
  return (a.empty() ? "—" : a) + " / " + (b.empty() ? "—" : b);
}

std::string row_of(const Measured& m) {
  std::string name = "`" + m.pair() + "`" + (m.fastmath() ? " fast-math" : "");
  std::string expect = m.get("expect").empty() ? "—" : m.get("expect");
  std::string verdict = m.failure.empty() ? m.get("verdict") : "crashed: " + m.failure;
  verdict += m.matches() ? " ✓" : " ✗";
  if (!m.matches()) verdict = "**" + verdict + "**";
  double total = m.num("total"), floor = m.num("floor");
  std::ostringstream os;
  os << "| " << name << " | " << expect << " | " << verdict << " | " << both(m, "threads") << " | " << both(m, "loc")
     << " | " << both(m, "block_syncs", true) << " | " << both(m, "warp_syncs", true) << " | " << secs(total) << " | "
     << secs(m.num("cpu")) << " | " << secs(m.num("parse")) << " | " << secs(m.num("eval")) << " | "
     << secs(m.num("decide")) << " | " << (m.peak_kib() >= 0 ? fmt("%.1f", m.peak_kib() / 1024) : "—")
     << " | " << secs(floor * 1e3) << " | " << ratio(total / floor) << " | "
     << ratio((m.num("eval") + m.num("decide")) / floor) << " | " << volta_for(m) << " |\n";
  return os.str();
}

std::string range(std::vector<double> v, std::string (*f)(double)) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x) || std::isinf(x); }), v.end());
  if (v.empty()) return "—";
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return f(*lo) == f(*hi) ? f(*lo) : f(*lo) + "–" + f(*hi);
}

std::string mib(double kib) { return fmt("%.0f", kib / 1024); }

// Issue 33's target for a per-CTA check: at most this many times the
// concrete floor (total / concrete, the table's *ratio*).
constexpr double kTargetRatio = 3.0;

// One family's summary: time and ratio ranges, split into pairs that verify
// (the whole decision runs) and pairs that are refuted or unsafe (it stops early).
std::string summary(const std::vector<const Measured*>& rows, const Family* fam) {
  std::vector<double> eq_t, eq_r, other_t, rss, vs_volta;
  std::size_t ok = 0, within = 0;
  for (const Measured* m : rows) {
    ok += m->matches();
    double t = m->num("total");
    within += t <= kTargetRatio * m->num("floor");
    (m->get("verdict") == "equivalent" ? eq_t : other_t).push_back(t);
    if (m->get("verdict") == "equivalent") eq_r.push_back(t / m->num("floor"));
    rss.push_back(m->peak_kib());
    if (const VoltaRow* v = volta_row(*m)) vs_volta.push_back(v->seconds / t);
  }
  std::ostringstream os;
  os << rows.size() << (rows.size() == 1 ? " spec, " : " specs, ") << ok << " of " << rows.size()
     << " verdicts as expected.";
  if (!eq_t.empty())
    os << " Equivalent: " << range(eq_t, secs) << " s, " << range(eq_r, ratio) << " the concrete floor.";
  if (!other_t.empty()) os << " Refuted or unsafe: " << range(other_t, secs) << " s.";
  os << " Within " << ratio(kTargetRatio) << " the concrete floor (issue 33's target): " << within << " of "
     << rows.size() << ".";
  os << " Peak RSS " << range(rss, mib) << " MiB.";
  if (fam) os << " " << fam->volta;
  std::string vs = range(vs_volta, ratio);
  if (vs != "—") os << " VOLTA's time over ours on the rows that have a counterpart: " << vs << ".";
  return os.str();
}

// Markdown paragraphs wrapped at 80 columns, like the rest of docs/performance.md.
std::string wrap(const std::string& text, std::size_t width = 80) {
  std::istringstream in(text);
  std::string out, line;
  // A line must not start with what Markdown reads as a list item or heading.
  auto can_start = [](const std::string& w) {
    bool numbered = w.size() > 1 && w.back() == '.' && w.find_first_not_of("0123456789") == w.size() - 1;
    return w != "+" && w != "-" && w != "*" && w[0] != '#' && w[0] != '>' && !numbered;
  };
  for (std::string word; in >> word;) {
    if (!line.empty() && line.size() + 1 + word.size() > width && can_start(word)) {
      out += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line + "\n";
}

std::string report(const std::vector<Measured>& all, const std::string& command, long baseline_kib,
                   const std::string& load_before, const std::string& load_after, int min_runs, bool quick) {
  std::ostringstream os;
  os << wrap("Measured " + today() + " with `" + command + "`.") << "\n";
  // The machine is shared: the load says whether other work competed for the cores.
  os << wrap("Machine: " + machine_line() + ". Load average (1 min) " + load_before + " before the run, " + load_after +
             " after it. One pair at a time, each in its own process. A check uses every hardware thread: the "
             "decider, and the symbolic run of the second kernel once the first one runs long (the concrete floor "
             "runs on one). An "
             "idle child process peaks at " + fmt("%.1f", double(baseline_kib) / 1024) + " MiB RSS.")
     << "\n";
  const std::string check_runs =
      quick ? "1 run" : std::to_string(min_runs) + " or more runs; pairs under 0.5 s repeat until 0.5 s is spent";
  const std::string floor_runs =
      quick ? "1 run"
            : "5 or more runs, until 0.3 s is spent; check runs and floor runs take turns, the floor getting 0.6 "
              "of the check's time so far, so that both medians come from the same stretch of time (this shared "
              "machine's speed drifts over seconds)";
  os << wrap(
      "Columns: *threads*, *PTX LOC* (non-empty lines of the kernel's PTX file), *block syncs* and *warp syncs* "
      "are ref / opt. Syncs count completed synchronizations (one CTA barrier releasing all its threads is 1); "
      "VOLTA counts `bar.sync` executed per thread, so its numbers are ours times the threads that take part. "
      "*total* is the wall time of `check_equivalence` (the median of " + check_runs + "), split into *parse*, "
      "*eval* (symbolic run of both kernels) and *decide*; *CPU* is the CPU time of that same run, all threads "
      "(it moves less than wall time when other work shares the machine). *peak RSS* is the peak resident set "
      "of a fresh process per pair, read after its first check (`getrusage`). *concrete* is our floor: both "
      "kernels run by `run_program<ConcreteDomain>` on the same launches (doubles, race tracking on; median of " +
      floor_runs + "), *ratio* is total / concrete and *w/o parse* is (eval + decide) / concrete (parsing the PTX "
      "is most of the time of the smallest pairs, and the floor does not include it). *VOLTA* is the "
      "corresponding row of its tables (seconds on 24 cores).");
  std::vector<std::string> order;
  for (const Family& f : kFamilies) order.push_back(f.dir);
  for (const Measured& m : all)
    if (std::find(order.begin(), order.end(), m.family) == order.end()) order.push_back(m.family);
  for (const std::string& fam : order) {
    std::vector<const Measured*> rows;
    for (const Measured& m : all)
      if (m.family == fam) rows.push_back(&m);
    if (rows.empty()) continue;
    const Family* f = nullptr;
    for (const Family& k : kFamilies)
      if (fam == k.dir) f = &k;
    os << "\n### " << (f ? f->title : fam.c_str()) << "\n\n";
    os << "| pair | expect | verdict | threads | PTX LOC | block syncs | warp syncs | total (s) | CPU (s) | parse "
          "| eval | decide | peak RSS (MiB) | concrete (ms) | ratio | w/o parse | VOLTA (s) |\n";
    os << "|---|---|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
    for (const Measured* m : rows) os << row_of(*m);
    // A verdict that went wrong needs its reason next to the table, not only on stderr.
    std::string notes;
    for (const Measured* m : rows) {
      std::string why = !m->failure.empty() ? m->failure : m->get("error");
      if (!why.empty()) notes += "- `" + m->stem + "`: " + why + "\n";
      if (!m->get("floor_error").empty())
        notes += "- `" + m->stem + "` (concrete run): " + m->get("floor_error") + "\n";
    }
    if (!notes.empty()) os << "\n" << notes;
    os << "\n" << wrap(summary(rows, f));
  }
  return os.str();
}

const char* kIntro =
    "## VOLTA's tables on our kernel pairs (`bench/volta`)\n\n"
    "```sh\n"
    "build/bench/tileverify_bench_volta                             # prints the tables\n"
    "build/bench/tileverify_bench_volta --write docs/performance.md # and replaces the section below\n"
    "build/bench/tileverify_bench_volta --quick                     # CI smoke test (ctest: bench.volta_quick)\n"
    "```\n\n";
const char* kIntroText =
    "Every pair spec of `examples/kernels` (each plain and `-use_fast_math` build), grouped like VOLTA's §6 "
    "(Tables 1–3; our conv2d stands where its §6.2 convolution does, softmax is its Fig. 1), checked with "
    "`check_equivalence` one at a time. Besides the time it reports the ratio to what merely running both "
    "kernels costs in our evaluator, so the numbers say how much verification adds over execution on this "
    "machine, not just how fast this machine is. Everything between the markers below is generated; edit the "
    "bench, not the table.";

int write_section(const std::string& file, const std::string& body) {
  std::ifstream in(file);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", file.c_str());
    return 4;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  std::string section = std::string(kBegin) + "\n" + body + kEnd;
  std::size_t b = text.find(kBegin), e = text.find(kEnd);
  if (b != std::string::npos && e != std::string::npos && b < e) {
    text.replace(b, e + std::strlen(kEnd) - b, section);
  } else if (b == std::string::npos && e == std::string::npos) {
    if (!text.empty() && text.back() != '\n') text += "\n";
    text += "\n" + std::string(kIntro) + wrap(kIntroText) + "\n" + section + "\n";
  } else {
    std::fprintf(stderr, "%s: the volta-table markers are unbalanced; fix them by hand\n", file.c_str());
    return 4;
  }
  // Write beside the file, then rename: an interrupted run leaves the doc intact.
  std::string tmp = file + ".tmp";
  {
    std::ofstream out(tmp);
    out << text;
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", tmp.c_str());
      return 4;
    }
  }
  fs::rename(tmp, file);
  std::fprintf(stderr, "wrote the volta table into %s\n", file.c_str());
  return 0;
}

// The specs under root, by family, each plain build before its fast-math one.
std::vector<Measured> find_specs(const std::string& root, const std::string& family, const std::string& filter,
                                 bool quick) {
  std::vector<Measured> out;
  std::error_code ec;
  std::vector<std::pair<std::string, fs::path>> dirs;  // (family, folder)
  for (const auto& e : fs::directory_iterator(root, ec))
    if (e.is_directory()) dirs.emplace_back(e.path().filename().string(), e.path());
  std::sort(dirs.begin(), dirs.end());
  for (const auto& [name, rel] : kExtraFamilies)
    if (fs::is_directory(fs::path(root) / rel, ec)) dirs.emplace_back(name, fs::path(root) / rel);
  for (const auto& [fam, d] : dirs) {
    if (!family.empty() && fam != family) continue;
    // Quick: the reductions (28 small specs) and one softmax pair, a few seconds.
    if (quick && fam != "reduction" && fam != "softmax") continue;
    std::vector<fs::path> specs;
    for (const auto& e : fs::directory_iterator(d, ec))
      if (e.path().extension() == ".json" && e.path().stem().extension() != ".meta") specs.push_back(e.path());
    std::sort(specs.begin(), specs.end(), [](const fs::path& a, const fs::path& b) {
      std::string x = a.stem().string(), y = b.stem().string();
      auto key = [](const std::string& s) {
        bool fm = s.size() > 9 && s.compare(s.size() - 9, 9, ".fastmath") == 0;
        return std::make_pair(fm ? s.substr(0, s.size() - 9) : s, fm);
      };
      return key(x) < key(y);
    });
    for (const fs::path& p : specs) {
      Measured m;
      m.family = fam;
      m.stem = p.stem().string();
      m.path = p.string();
      if (quick && fam == "softmax" && m.stem != "online") continue;
      if (!filter.empty() && (fam + "/" + m.stem).find(filter) == std::string::npos) continue;
      out.push_back(m);
    }
  }
  return out;
}

int usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--quick] [--family NAME] [--filter SUBSTRING] [--root DIR] [--runs N] [--write FILE]\n"
               "  --root defaults to %s\n",
               argv0, TILEVERIFY_EXAMPLES_DIR);
  return 4;
}

}  // namespace

int main(int argc, char** argv) {
  // The hidden child modes (this program re-executed by spawn()).
  if (argc >= 2 && !std::strcmp(argv[1], "--child-idle")) {
    std::printf("%s\n", kResultMark);
    return 0;
  }
  if (argc == 7 && !std::strcmp(argv[1], "--child"))
    return child_main(argv[2], std::strtod(argv[3], nullptr), std::atoi(argv[4]), std::strtod(argv[5], nullptr),
                      std::atoi(argv[6]));

  bool quick = false;
  std::string family, filter, root = TILEVERIFY_EXAMPLES_DIR, write, runs;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool has_value = i + 1 < argc;
    if (a == "--quick")
      quick = true;
    else if (a == "--family" && has_value)
      family = argv[++i];
    else if (a == "--filter" && has_value)
      filter = argv[++i];
    else if (a == "--root" && has_value)
      root = argv[++i];
    else if (a == "--write" && has_value)
      write = argv[++i];
    else if (a == "--runs" && has_value && std::atoi(argv[i + 1]) > 0)
      runs = argv[++i];
    else
      return usage(argv[0]);
  }
  if (!write.empty() && (quick || !family.empty() || !filter.empty())) {
    std::fprintf(stderr, "--write replaces the whole table: run it without --quick, --family or --filter\n");
    return 4;
  }
  std::string exe = self_exe();
  if (exe.empty()) {
    std::fprintf(stderr, "cannot find this program's path (/proc/self/exe)\n");
    return 4;
  }
  std::vector<Measured> specs = find_specs(root, family, filter, quick);
  if (specs.empty()) {
    std::fprintf(stderr, "no spec files under %s matched\n", root.c_str());
    return 4;
  }
  // Quick: one repetition of everything. Full: the check at least --runs times
  // and until 0.5 s is spent, the concrete run at least 5 times and until 0.3 s.
  // Five, not three: the median of three moved a ratio by a quarter when one
  // sample fell into a slow stretch of this shared machine.
  std::string verify_budget = quick ? "0" : "0.5", floor_budget = quick ? "0" : "0.3", floor_reps = quick ? "1" : "5";
  if (runs.empty()) runs = quick ? "1" : "5";

  auto t0 = std::chrono::steady_clock::now();
  std::string load_before = load_average();
  long baseline_kib = 0;
  std::string baseline_failure;
  spawn(exe, {"--child-idle"}, &baseline_kib, &baseline_failure);
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    Measured& m = specs[i];
    std::string out =
        spawn(exe, {"--child", m.path, verify_budget, runs, floor_budget, floor_reps}, &m.maxrss_kib, &m.failure);
    m.kv = parse_results(out, &m.failure);
    mismatches += !m.matches();
    std::fprintf(stderr, "[%2zu/%zu] %-34s %-15s %s %9.4f s  floor %9.3f ms  %7.1f MiB (child %.1f)%s%s\n", i + 1,
                 specs.size(), (m.family + "/" + m.stem).c_str(), m.get("verdict").c_str(),
                 m.matches() ? "ok  " : "FAIL", m.num("total"), m.num("floor") * 1e3, m.peak_kib() / 1024,
                 double(m.maxrss_kib) / 1024,
                 m.failure.empty() ? "" : ("  " + m.failure).c_str(),
                 m.get("error").empty() ? "" : ("  " + m.get("error")).c_str());
  }
  double wall = seconds_since(t0);

  std::string command = "tileverify_bench_volta";
  for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
  std::string body = report(specs, command, baseline_kib, load_before, load_average(), std::atoi(runs.c_str()), quick);
  std::fputs(body.c_str(), stdout);
  std::printf("\n%zu specs, %zu verdicts differ from \"expect\"; bench wall time %.1f s\n", specs.size(), mismatches,
              wall);
  if (!write.empty()) {
    int rc = write_section(write, body);
    if (rc) return rc;
  }
  return mismatches ? 1 : 0;
}
