// `tileverify merge REPORT.json...`: the verdict of a sharded check from its
// shards' JSON reports (docs/cli.md, "Sharding").
#include "merge.hpp"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace tileverify::cli {

namespace {

// How serious a shard's verdict is for the merged one: a bug any shard
// found first (every shard runs the same classes, so they agree on those),
// then a refutation, then what stopped a shard short of an answer.
int rank(const std::string& v) {
  if (v == "race" || v == "deadlock") return 9;
  if (v == "out_of_bounds" || v == "uninitialized" || v == "barrier_divergence" || v == "launch_contract" ||
      v == "trap")
    return 8;
  if (v == "not_equivalent") return 7;
  if (v == "error") return 6;
  if (v == "unsupported") return 5;
  if (v == "unknown") return 4;
  if (v == "equivalent" || v == "ok") return 0;
  return 6;  // a verdict merge does not know: an error
}

int exit_code(const std::string& v) {
  if (v == "equivalent" || v == "ok") return 0;
  if (v == "not_equivalent") return 1;
  if (rank(v) >= 8) return 2;
  if (v == "unsupported" || v == "unknown") return 3;
  return 4;
}

int fail(const std::string& message, bool as_json) {
  if (as_json) {
    nlohmann::json j;
    j["verdict"] = "error";
    j["error"] = message;
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << "ERROR: " << message << "\n";
  }
  return 4;
}

}  // namespace

int run_merge(const std::vector<std::string>& paths, bool as_json) {
  struct Shard {
    std::string path;
    nlohmann::json report;
    unsigned index = 0;
  };
  std::vector<Shard> shards;
  unsigned count = 0;
  std::string fingerprint;
  for (const std::string& path : paths) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return fail(path + ": cannot read", as_json);
    std::stringstream text;
    text << in.rdbuf();
    nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
    if (j.is_discarded() || !j.is_object())
      return fail(path + ": not a JSON report (run each shard with --json and give merge those files)", as_json);
    if (!j.contains("verdict") || !j["verdict"].is_string())
      return fail(path + ": a report without a verdict", as_json);
    if (!j.contains("shard") || !j["shard"].is_object()) {
      // A shard that stopped before it could say which one it is (a bad
      // spec, say) decides the merge: its report is the answer.
      if (j["verdict"] == "error")
        return fail(path + ": " + j.value("error", std::string("the check ended in an error")), as_json);
      return fail(path + ": not the report of a shard (run the check with --shard I/N)", as_json);
    }
    const nlohmann::json& s = j["shard"];
    Shard sh{path, j, s.value("index", 0u)};
    const unsigned n = s.value("count", 0u);
    const std::string fp = s.value("fingerprint", std::string());
    if (count == 0) {
      count = n;
      fingerprint = fp;
    } else if (n != count || fp != fingerprint) {
      return fail(path + ": shard " + std::to_string(sh.index) + " of " + std::to_string(n) + " of check " + fp +
                      ", but " + shards.front().path + " is of " + std::to_string(count) + " shards of check " +
                      fingerprint + " (reports of different checks, or of another size or PTX)",
                  as_json);
    }
    for (const Shard& o : shards)
      if (o.index == sh.index) return fail(path + " and " + o.path + " are both shard " + std::to_string(sh.index), as_json);
    shards.push_back(std::move(sh));
  }
  if (shards.empty()) return fail("no reports given", as_json);
  std::vector<unsigned> missing;
  for (unsigned i = 0; i < count; ++i) {
    bool found = false;
    for (const Shard& s : shards) found = found || s.index == i;
    if (!found) missing.push_back(i);
  }
  // The merged verdict: the most serious shard's. Shard 0 alone decides a
  // check it did whole.
  const Shard* decider = nullptr;
  bool whole = false;
  for (const Shard& s : shards)
    if (s.report["shard"].value("whole", false) && s.index == 0) {
      decider = &s;
      whole = true;
    }
  std::uint64_t comparisons = 0, elements = 0, total = 0, elements_total = 0;
  for (const Shard& s : shards) {
    comparisons += s.report["stats"].value("comparisons", std::uint64_t(0));
    elements += s.report["stats"].value("outputs_compared", std::uint64_t(0));
    total = s.report["shard"].value("comparisons_total", std::uint64_t(0));
    elements_total = s.report["shard"].value("elements_total", std::uint64_t(0));
    if (!whole && (!decider || rank(s.report["verdict"]) > rank(decider->report["verdict"]))) decider = &s;
  }
  std::string verdict = decider->report["verdict"];
  std::string why;
  if (!missing.empty() && rank(verdict) < 7) {
    // Without every shard only a bug or a refutation is an answer.
    verdict = "unknown";
    why = std::to_string(missing.size()) + " of the " + std::to_string(count) + " shards are missing (shard " +
          std::to_string(missing.front()) + (missing.size() > 1 ? ", ..." : "") + ")";
  } else if (!whole && (verdict == "equivalent") && comparisons != total) {
    verdict = "unknown";
    why = "the shards decided " + std::to_string(comparisons) + " comparisons of " + std::to_string(total);
  }
  if (as_json) {
    nlohmann::json j;
    j["verdict"] = verdict;
    if (!why.empty()) j["why"] = why;
    j["fingerprint"] = fingerprint;
    j["shards"] = nlohmann::json::array();
    for (const Shard& s : shards)
      j["shards"].push_back({{"file", s.path},
                             {"index", s.index},
                             {"verdict", s.report["verdict"]},
                             {"comparisons", s.report["stats"].value("comparisons", std::uint64_t(0))}});
    j["decided_by"] = decider->path;
    for (const char* key : {"diagnostics", "counterexample", "error", "cta_classes", "cta_classes_unused"})
      if (decider->report.contains(key)) j[key] = decider->report[key];
    j["stats"] = {{"comparisons", comparisons},
                  {"comparisons_total", whole ? comparisons : total},
                  {"outputs_compared", elements},
                  {"elements_total", whole ? elements : elements_total}};
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::string head = verdict;
    for (char& ch : head) ch = ch == '_' ? ' ' : char(std::toupper(static_cast<unsigned char>(ch)));
    std::cout << head << " (" << shards.size() << " of " << count << " shards of check " << fingerprint << ")\n";
    if (!why.empty()) std::cout << "  " << why << "\n";
    if (whole)
      std::cout << "  shard 0 checked the whole grid: " << decider->path << "\n";
    else
      std::cout << "  " << comparisons << " of " << total << " comparisons, " << elements << " of " << elements_total
                << " output elements\n";
    for (const Shard& s : shards)
      std::cout << "  shard " << s.index << ": " << std::string(s.report["verdict"]) << ", "
                << s.report["stats"].value("comparisons", std::uint64_t(0)) << " comparisons (" << s.path << ")\n";
    if (rank(verdict) > 0 && decider) {
      std::cout << "  the evidence, from " << decider->path << ":\n";
      if (decider->report.contains("diagnostics"))
        for (const nlohmann::json& d : decider->report["diagnostics"])
          std::cout << "    " << d.value("location", std::string()) << ": " << d.value("kind", std::string()) << ": "
                    << d.value("message", std::string()) << "\n";
      if (decider->report.contains("counterexample")) {
        const nlohmann::json& m = decider->report["counterexample"];
        std::cout << "    first differing output: " << m.value("output", std::string()) << "["
                  << m.value("element", std::uint64_t(0)) << "]\n";
        if (m.contains("ref_value"))
          std::cout << "    ref gives " << std::string(m["ref_value"]) << "\n    opt gives " << std::string(m["opt_value"])
                    << "\n";
        else if (m.contains("reason"))
          std::cout << "    " << std::string(m["reason"]) << "\n";
      }
    }
  }
  return exit_code(verdict);
}

}  // namespace tileverify::cli
