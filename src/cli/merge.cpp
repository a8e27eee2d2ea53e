// `tileverify merge REPORT.json...`: the verdict of a sharded check from its
// shards' JSON reports (docs/cli.md, "Sharding"; what is checked: merge.hpp).
//
// Every value is read through the checks below, never with nlohmann's
// throwing accessors: a report is input like any other, and a field of the
// wrong type is a refusal naming the file and the field, not an abort.
#include "merge.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace tileverify::cli {

namespace {

using nlohmann::json;

// Counts of comparisons and output elements: far above any check tileverify
// can run, and low enough that 4096 of them add up without overflow.
constexpr std::uint64_t kMaxCount = std::uint64_t(1) << 48;
// A report file: tileverify writes kilobytes (megabytes with many CTA classes).
constexpr std::uint64_t kMaxReportBytes = std::uint64_t(256) << 20;

// How serious a shard's verdict is for the merged one: a bug any shard
// found first (every shard runs the same classes, so they agree on those),
// then a refutation, then what stopped a shard short of an answer. -1: not
// a verdict of equiv or check.
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
  return -1;
}

int exit_code(const std::string& v) {
  if (v == "equivalent" || v == "ok") return 0;
  if (v == "not_equivalent") return 1;
  if (rank(v) >= 8) return 2;
  if (v == "unsupported" || v == "unknown") return 3;
  return 4;
}

bool pass(const std::string& v) { return v == "equivalent" || v == "ok"; }

// A value as a message shows it: its JSON, cut short; arrays and objects by
// their kind only (printing one walks all of it).
std::string shown(const json& v) {
  if (v.is_array()) return "[...]";
  if (v.is_object()) return "{...}";
  std::string s = v.dump(-1, ' ', true, json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

std::string type_of(const json& v) {
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_null()) return "null";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  return "a number";
}

// A refusal: the file and the field, what was found and what is allowed.
struct Refused {
  std::string message;
};

[[noreturn]] void refuse(const std::string& file, const std::string& field, const std::string& why) {
  throw Refused{file + ": " + field + ": " + why};
}

// The field `key` of `obj` (an object); none when absent and not required.
const json* member(const json& obj, const std::string& key, const std::string& file, const std::string& path,
                   bool required) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    if (required) refuse(file, path, "missing (is this a --json report of `tileverify equiv` or `check` with --shard?)");
    return nullptr;
  }
  return &*it;
}

// A whole number from lo to hi, written as one: 1.5, 1.0, -1, "1" and
// 4294967297 (for an index) are refused rather than cut or converted.
std::uint64_t whole_number(const json& v, const std::string& file, const std::string& path, std::uint64_t lo,
                           std::uint64_t hi) {
  const std::string range = "it must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  if (v.is_number_unsigned()) {
    const std::uint64_t x = v.get<std::uint64_t>();
    if (x < lo || x > hi) refuse(file, path, shown(v) + " is out of range; " + range);
    return x;
  }
  if (v.is_number_integer()) refuse(file, path, shown(v) + " is negative; " + range);
  if (v.is_number()) refuse(file, path, shown(v) + " is not written as a whole number; " + range);
  refuse(file, path, type_of(v) + " (" + shown(v) + "), not a number; " + range);
}

std::uint64_t number_field(const json& obj, const std::string& key, const std::string& file, const std::string& path,
                           std::uint64_t lo, std::uint64_t hi) {
  return whole_number(*member(obj, key, file, path, true), file, path, lo, hi);
}

std::optional<std::string> string_field(const json& obj, const std::string& key, const std::string& file,
                                        const std::string& path, bool required) {
  const json* v = member(obj, key, file, path, required);
  if (!v) return std::nullopt;
  if (!v->is_string()) refuse(file, path, type_of(*v) + " (" + shown(*v) + "), not a string");
  return v->get<std::string>();
}

bool bool_field(const json& obj, const std::string& key, const std::string& file, const std::string& path) {
  const json& v = *member(obj, key, file, path, true);
  if (!v.is_boolean()) refuse(file, path, type_of(v) + " (" + shown(v) + "), not true or false");
  return v.get<bool>();
}

const json& object_field(const json& obj, const std::string& key, const std::string& file, const std::string& path) {
  const json& v = *member(obj, key, file, path, true);
  if (!v.is_object()) refuse(file, path, type_of(v) + ", not an object");
  return v;
}

// One shard's report, read and checked on its own.
struct Shard {
  std::string file;
  std::string verdict;
  unsigned index = 0, count = 0;
  bool whole = false;
  std::string fingerprint;
  std::map<std::string, std::string> check;
  std::uint64_t comparisons_total = 0, elements_total = 0;
  std::vector<std::uint64_t> plan;
  std::uint64_t comparisons = 0, outputs_compared = 0, proved = 0;
  // Whether the shard got as far as the plan (ShardInfo::plan): a shard that
  // stopped before (a time limit) says nothing about the plan.
  bool planned() const { return !whole && (pass(verdict) || comparisons_total || elements_total || !plan.empty()); }
};

// The comparisons the share of shard `index` of `count` holds, worked out
// from the plan's pair sizes as the shards deal them (class_check.cpp,
// share()): with at least `count` pairs, pair j goes whole to shard
// j % count; with fewer (n), the comparisons of pair j are dealt in turn to
// the shards j, j + n, j + 2n, ... below count.
std::uint64_t share_size(const std::vector<std::uint64_t>& plan, unsigned index, unsigned count) {
  const std::uint64_t n = plan.size();
  if (n == 0) return 0;
  if (n >= count) {
    std::uint64_t sum = 0;
    for (std::uint64_t j = index; j < n; j += count) sum += plan[j];
    return sum;
  }
  const std::uint64_t j = index % n, k = (count - 1 - j) / n + 1, r = index / n;
  return plan[j] > r ? (plan[j] - r + k - 1) / k : 0;
}

// The evidence of a report that may decide the merge, its form checked:
// the diagnostics, the counterexample, the error and the CTA classes.
json evidence(const json& j, const std::string& file) {
  json e = json::object();
  const json& ds = *member(j, "diagnostics", file, "diagnostics", true);
  if (!ds.is_array()) refuse(file, "diagnostics", type_of(ds) + ", not an array");
  for (std::size_t i = 0; i < ds.size(); ++i) {
    const std::string at = "diagnostics[" + std::to_string(i) + "]";
    if (!ds[i].is_object()) refuse(file, at, type_of(ds[i]) + ", not an object");
    for (const char* key : {"kind", "message", "location"}) string_field(ds[i], key, file, at + "." + key, true);
  }
  e["diagnostics"] = ds;
  if (const json* m = member(j, "counterexample", file, "counterexample", false)) {
    if (!m->is_object()) refuse(file, "counterexample", type_of(*m) + ", not an object");
    string_field(*m, "output", file, "counterexample.output", true);
    number_field(*m, "element", file, "counterexample.element", 0, UINT64_MAX);
    for (const char* key : {"ref", "opt", "ref_value", "opt_value", "reason"})
      string_field(*m, key, file, std::string("counterexample.") + key, false);
    if (m->contains("ref_value") != m->contains("opt_value"))
      refuse(file, "counterexample", "ref_value and opt_value come together, and one of them is missing");
    if (const json* in = member(*m, "inputs", file, "counterexample.inputs", false); in && !in->is_object())
      refuse(file, "counterexample.inputs", type_of(*in) + ", not an object");
    e["counterexample"] = *m;
  }
  if (auto err = string_field(j, "error", file, "error", false)) e["error"] = *err;
  if (const json* c = member(j, "cta_classes", file, "cta_classes", false)) {
    if (!c->is_array()) refuse(file, "cta_classes", type_of(*c) + ", not an array");
    e["cta_classes"] = *c;
  }
  if (auto u = string_field(j, "cta_classes_unused", file, "cta_classes_unused", false)) e["cta_classes_unused"] = *u;
  return e;
}

// How deep the arrays and objects of a JSON text nest (strings skipped).
// Copying or printing a value recurses once per level: a report nested a
// million levels deep would overflow the stack where merge copies its
// evidence, so depth is checked on the text, before anything is built.
std::size_t nesting(const std::string& text) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char ch : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (ch == '\\') escaped = true;
      else if (ch == '"') in_string = false;
    } else if (ch == '"') {
      in_string = true;
    } else if (ch == '[' || ch == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((ch == ']' || ch == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

// Reads one report: every field merge uses, its type and range, and whether
// the report agrees with itself. *ev: its evidence.
Shard read_shard(const json& j, const std::string& file, json* ev) {
  Shard s;
  s.file = file;
  s.verdict = *string_field(j, "verdict", file, "verdict", true);
  if (rank(s.verdict) < 0)
    refuse(file, "verdict", "\"" + s.verdict + "\" is no verdict of `tileverify equiv` or `check`");
  const json* sh = member(j, "shard", file, "shard", false);
  if (!sh || !sh->is_object()) {
    // A shard that stopped before it could say which one it is (a bad
    // spec, say) decides the merge: its report is the answer.
    if (s.verdict == "error") {
      const auto e = string_field(j, "error", file, "error", false);
      throw Refused{file + ": " + (e ? *e : std::string("the check ended in an error"))};
    }
    throw Refused{file + ": not the report of a shard (run the check with --shard I/N --json); a check run whole "
                         "and shards of one cannot be merged"};
  }
  s.count = unsigned(number_field(*sh, "count", file, "shard.count", 2, kMaxShards));
  s.index = unsigned(number_field(*sh, "index", file, "shard.index", 0, s.count - 1));
  s.whole = bool_field(*sh, "whole", file, "shard.whole");
  s.fingerprint = *string_field(*sh, "fingerprint", file, "shard.fingerprint", true);
  s.comparisons_total = number_field(*sh, "comparisons_total", file, "shard.comparisons_total", 0, kMaxCount);
  s.elements_total = number_field(*sh, "elements_total", file, "shard.elements_total", 0, kMaxCount);
  const json& st = object_field(j, "stats", file, "stats");
  s.comparisons = number_field(st, "comparisons", file, "stats.comparisons", 0, kMaxCount);
  s.outputs_compared = number_field(st, "outputs_compared", file, "stats.outputs_compared", 0, kMaxCount);
  s.proved = number_field(st, "proved", file, "stats.proved", 0, kMaxCount);
  *ev = evidence(j, file);

  // The report against itself.
  const std::string v = "verdict " + s.verdict;
  if (pass(s.verdict)) {
    if (ev->contains("counterexample"))
      refuse(file, "counterexample", v + ", yet the report holds a counterexample (was the verdict edited?)");
    if (!(*ev)["diagnostics"].empty())
      refuse(file, "diagnostics", v + ", yet the report holds diagnostics (was the verdict edited?)");
    if (ev->contains("error")) refuse(file, "error", v + ", yet the report holds an error");
    if (s.proved != s.outputs_compared)
      refuse(file, "stats.proved", v + ", yet " + std::to_string(s.proved) + " of the " +
                                       std::to_string(s.outputs_compared) + " output elements compared were proved");
  }
  if (s.verdict == "not_equivalent" && !ev->contains("counterexample"))
    refuse(file, "counterexample", v + " without a counterexample");
  if (s.proved > s.outputs_compared)
    refuse(file, "stats.proved", std::to_string(s.proved) + " output elements proved of " +
                                     std::to_string(s.outputs_compared) + " compared");
  if (s.whole) {
    // Shard 0 did the check whole, CTA by CTA; the others did nothing.
    if (s.comparisons_total || s.comparisons)
      refuse(file, "shard.whole", "true (shard 0 checks the whole grid), yet the report counts comparisons of CTA "
                                  "classes to split");
    if (s.index != 0 && (s.outputs_compared || s.proved))
      refuse(file, "shard.whole", "true (shard 0 checks the whole grid), yet shard " + std::to_string(s.index) +
                                      " compared output elements");
  } else {
    if (s.comparisons > s.comparisons_total)
      refuse(file, "stats.comparisons", std::to_string(s.comparisons) + " comparisons of the " +
                                            std::to_string(s.comparisons_total) + " of the whole check");
    if (s.outputs_compared > s.elements_total)
      refuse(file, "stats.outputs_compared", std::to_string(s.outputs_compared) + " output elements of the " +
                                                 std::to_string(s.elements_total) + " of the whole check");
  }

  // What check it is: its command and options, spec, sizes and PTX.
  if (!sh->contains("check"))
    refuse(file, "shard.check", "missing: a report of a tileverify that did not yet say which check a shard is of "
                                "(run the shards again with this one)");
  const json& c = *member(*sh, "check", file, "shard.check", true);
  if (!c.is_object())
    refuse(file, "shard.check", type_of(c) + ", not an object (a report of an older tileverify? run the shards again)");
  for (auto it = c.begin(); it != c.end(); ++it) {
    if (!it.value().is_string()) refuse(file, "shard.check." + it.key(), type_of(it.value()) + ", not a string");
    s.check[it.key()] = it.value().get<std::string>();
  }
  const auto command = string_field(c, "command", file, "shard.check.command", true);
  if (*command != "equiv" && *command != "check")
    refuse(file, "shard.check.command", "\"" + *command + "\": only `equiv` and `check` run in shards");
  if ((*command == "check" && (s.verdict == "equivalent" || s.verdict == "not_equivalent")) ||
      (*command == "equiv" && s.verdict == "ok"))
    refuse(file, "verdict", s.verdict + " is no verdict of `tileverify " + *command + "`");

  // The plan: the comparisons of each pair of classes, as the shards deal them.
  const json& p = *member(*sh, "plan", file, "shard.plan", true);
  if (!p.is_array()) refuse(file, "shard.plan", type_of(p) + ", not an array");
  if (p.size() > s.comparisons_total)
    refuse(file, "shard.plan", std::to_string(p.size()) + " pairs of CTA classes, more than the " +
                                   std::to_string(s.comparisons_total) + " comparisons of the whole check");
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    s.plan.push_back(whole_number(p[i], file, "shard.plan[" + std::to_string(i) + "]", 1, kMaxCount));
    sum += s.plan.back();
    // Stopped while the sum is far from wrapping around (each entry is at
    // most kMaxCount): a sum that wrapped could match any total.
    if (sum > s.comparisons_total) break;
  }
  if (sum != s.comparisons_total)
    refuse(file, "shard.plan",
           "its pairs hold " + (sum > s.comparisons_total ? "more than " : std::string()) +
               std::to_string(sum > s.comparisons_total ? s.comparisons_total : sum) +
               " comparisons, shard.comparisons_total says " + std::to_string(s.comparisons_total));
  if (s.whole && !s.plan.empty()) refuse(file, "shard.plan", "a plan in the report of a check done whole");
  return s;
}

// A shard's comparisons against its index's share of its plan (after the
// report was found to be of the same check and count as the others, so
// that a different count is named as such).
void check_share(const Shard& s) {
  if (s.whole) return;
  const std::uint64_t mine = share_size(s.plan, s.index, s.count);
  if (pass(s.verdict) ? s.comparisons != mine : s.comparisons > mine)
    refuse(s.file, "stats.comparisons",
           "verdict " + s.verdict + " after " + std::to_string(s.comparisons) + " comparisons, but the share of shard " +
               std::to_string(s.index) + " of " + std::to_string(s.count) + " in its plan is " + std::to_string(mine) +
               " (was the index edited, or the report cut?)");
}

// The reports of one check, added one at a time.
class Merger {
 public:
  explicit Merger(bool as_json) : as_json_(as_json) {}

  // False (and the refusal in *error) when the report cannot be merged.
  bool add(const std::string& file, const std::string& text, std::string* error) {
    try {
      // tileverify's reports nest 5 levels deep (a counterexample's input
      // values); 64 leaves room for what later reports may add.
      if (const std::size_t depth = nesting(text); depth > 64)
        throw Refused{file + ": nested " + std::to_string(depth) + " levels deep; no report of a shard nests more "
                             "than 64"};
      json j = json::parse(text, nullptr, false);
      if (j.is_discarded() || !j.is_object())
        throw Refused{file + ": not a JSON report (run each shard with --json and give merge those files)"};
      json ev;
      Shard s = read_shard(j, file, &ev);
      against_first(s);
      check_share(s);
      if (seen_.empty()) seen_.assign(s.count, std::string());
      if (!seen_[s.index].empty())
        throw Refused{file + " and " + seen_[s.index] + " are both shard " + std::to_string(s.index)};
      seen_[s.index] = file;
      comparisons_ += s.comparisons;
      elements_ += s.outputs_compared;
      if (!decider_ || rank(s.verdict) > rank(decider_->verdict)) {
        decider_ = s;
        evidence_ = std::move(ev);
      }
      rows_.push_back({s.file, s.index, s.verdict, s.comparisons});
      if (!first_) first_ = std::move(s);
      return true;
    } catch (const Refused& r) {
      *error = r.message;
    } catch (const std::exception& e) {
      *error = file + ": " + e.what();
    }
    return false;
  }

  MergeOutput finish() const;

 private:
  // The first report's check, count, kind of split and plan: every other
  // report must have the same.
  void against_first(const Shard& s) {
    if (!first_) {
      if (s.planned()) planned_ = s;
      return;
    }
    const Shard& f = *first_;
    auto differ = [&](const std::string& what, const std::string& here, const std::string& there) {
      throw Refused{s.file + ": " + what + " " + here + ", but " + f.file + ": " + there +
                    " (reports of different checks: another command, option, spec, size or PTX)"};
    };
    for (const auto& kv : f.check) {
      auto it = s.check.find(kv.first);
      if (it == s.check.end()) differ("shard.check." + kv.first, "missing", "\"" + kv.second + "\"");
      if (it->second != kv.second) differ("shard.check." + kv.first, "\"" + it->second + "\"", "\"" + kv.second + "\"");
    }
    for (const auto& kv : s.check)
      if (!f.check.count(kv.first)) differ("shard.check." + kv.first, "\"" + kv.second + "\"", "missing");
    if (s.fingerprint != f.fingerprint)
      differ("shard.fingerprint", s.fingerprint, f.fingerprint + " although shard.check is the same (edited?)");
    if (s.count != f.count)
      differ("shard.count", std::to_string(s.count), std::to_string(f.count) + " (the shards of one check share one count)");
    if (s.whole != f.whole)
      throw Refused{s.file + ": shard.whole is " + (s.whole ? "true" : "false") + ", but " + f.file + ": " +
                    (f.whole ? "true" : "false") + " (one says shard 0 checks the whole grid, the other that the "
                                                   "comparisons are split: reports of different runs)"};
    if (!s.planned()) return;
    if (!planned_) {
      planned_ = s;
      return;
    }
    const Shard& p = *planned_;
    if (s.plan != p.plan || s.comparisons_total != p.comparisons_total || s.elements_total != p.elements_total)
      throw Refused{s.file + ": shard.plan, comparisons_total or elements_total differ from " + p.file + "'s (" +
                    std::to_string(s.comparisons_total) + " comparisons in " + std::to_string(s.plan.size()) +
                    " pairs of classes over " + std::to_string(s.elements_total) + " elements, against " +
                    std::to_string(p.comparisons_total) + " in " + std::to_string(p.plan.size()) + " over " +
                    std::to_string(p.elements_total) + ")"};
  }

  struct Row {
    std::string file;
    unsigned index;
    std::string verdict;
    std::uint64_t comparisons;
  };
  bool as_json_;
  std::optional<Shard> first_, planned_, decider_;
  json evidence_;
  std::vector<std::string> seen_;  // by index: the file of that shard ("" none yet)
  std::vector<Row> rows_;
  std::uint64_t comparisons_ = 0, elements_ = 0;
};

MergeOutput failure(const std::string& message, bool as_json) {
  MergeOutput o;
  o.exit_code = 4;
  if (as_json) {
    json j;
    j["verdict"] = "error";
    j["error"] = message;
    o.out = j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  } else {
    o.out = "ERROR: " + message + "\n";
  }
  return o;
}

MergeOutput Merger::finish() const {
  if (!first_) return failure("no reports given", as_json_);
  const Shard& f = *first_;
  const Shard& d = *decider_;
  std::string verdict = d.verdict, why;
  // Which shards are missing: a count and the first few, whatever the count.
  std::uint64_t missing = 0;
  std::string which;
  for (unsigned i = 0; i < f.count; ++i) {
    if (!seen_[i].empty()) continue;
    if (++missing <= 8) which += (which.empty() ? "" : ", ") + std::to_string(i);
  }
  if (missing > 8) which += ", ...";
  const std::uint64_t total = planned_ ? planned_->comparisons_total : 0;
  const std::uint64_t elements_total = planned_ ? planned_->elements_total : 0;
  if (missing && rank(verdict) < 7) {
    // Without every shard only a bug or a refutation is an answer.
    verdict = "unknown";
    why = std::to_string(missing) + " of the " + std::to_string(f.count) + " shards " +
          (missing == 1 ? "is" : "are") + " missing (shard " + which + ")";
  } else if (pass(verdict) && !f.whole && (comparisons_ != total || elements_ != elements_total)) {
    // Each share was checked against the plan; the sum is checked anyway.
    verdict = "unknown";
    why = "the shards decided " + std::to_string(comparisons_) + " comparisons of " + std::to_string(total) + " and " +
          std::to_string(elements_) + " output elements of " + std::to_string(elements_total);
  }
  MergeOutput o;
  o.exit_code = exit_code(verdict);
  if (as_json_) {
    json j;
    j["verdict"] = verdict;
    if (!why.empty()) j["why"] = why;
    j["fingerprint"] = f.fingerprint;
    j["check"] = f.check;
    j["shards"] = json::array();
    for (const Row& r : rows_)
      j["shards"].push_back({{"file", r.file}, {"index", r.index}, {"verdict", r.verdict}, {"comparisons", r.comparisons}});
    j["decided_by"] = d.file;
    for (const char* key : {"diagnostics", "counterexample", "error", "cta_classes", "cta_classes_unused"})
      if (evidence_.contains(key)) j[key] = evidence_.at(key);
    j["stats"] = {{"comparisons", comparisons_},
                  {"comparisons_total", f.whole ? comparisons_ : total},
                  {"outputs_compared", elements_},
                  {"elements_total", f.whole ? elements_ : elements_total}};
    o.out = j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
    return o;
  }
  std::ostringstream os;
  std::string head = verdict;
  for (char& ch : head) ch = ch == '_' ? ' ' : char(std::toupper(static_cast<unsigned char>(ch)));
  os << head << " (" << rows_.size() << " of " << f.count << " shards of check " << f.fingerprint << ")\n";
  if (!why.empty()) os << "  " << why << "\n";
  if (f.whole)
    os << "  shard 0 checks the whole grid" << (seen_[0].empty() ? " (its report is missing)" : ": " + seen_[0]) << "\n";
  else
    os << "  " << comparisons_ << " of " << total << " comparisons, " << elements_ << " of " << elements_total
       << " output elements\n";
  for (const Row& r : rows_)
    os << "  shard " << r.index << ": " << r.verdict << ", " << r.comparisons << " comparisons (" << r.file << ")\n";
  if (rank(d.verdict) > 0) {
    // Every field used here was checked by evidence(); at() all the same.
    os << "  the evidence, from " << d.file << ":\n";
    for (const json& x : evidence_.at("diagnostics"))
      os << "    " << x.at("location").get<std::string>() << ": " << x.at("kind").get<std::string>() << ": "
         << x.at("message").get<std::string>() << "\n";
    if (evidence_.contains("counterexample")) {
      const json& m = evidence_.at("counterexample");
      os << "    first differing output: " << m.at("output").get<std::string>() << "["
         << m.at("element").get<std::uint64_t>() << "]\n";
      if (m.contains("ref_value"))
        os << "    ref gives " << m.at("ref_value").get<std::string>() << "\n    opt gives "
           << m.at("opt_value").get<std::string>() << "\n";
      else if (m.contains("reason"))
        os << "    " << m.at("reason").get<std::string>() << "\n";
    }
    if (evidence_.contains("error")) os << "    " << evidence_.at("error").get<std::string>() << "\n";
  }
  o.out = os.str();
  return o;
}

// A file's bytes, at most kMaxReportBytes; "" and *error when it cannot be read.
std::string read_report(const std::string& path, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot read";
    return "";
  }
  std::string text;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    text.append(buf, std::size_t(in.gcount()));
    if (text.size() > kMaxReportBytes) {
      *error = path + ": larger than " + std::to_string(kMaxReportBytes >> 20) + " MiB, no report of a shard";
      return "";
    }
  }
  if (in.bad()) *error = path + ": cannot read";
  return text;
}

// Runs `body`; whatever it throws becomes a refusal with exit code 4.
MergeOutput guarded(bool as_json, const std::function<MergeOutput()>& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return failure("ran out of memory reading the reports", as_json);
  } catch (const std::exception& e) {
    return failure(std::string("internal error: ") + e.what() + "; please report it with the report files", as_json);
  } catch (...) {
    return failure("internal error; please report it with the report files", as_json);
  }
}

}  // namespace

MergeOutput merge_reports(const std::vector<MergeInput>& reports, bool as_json) {
  return guarded(as_json, [&] {
    Merger m(as_json);
    std::string error;
    for (const MergeInput& r : reports)
      if (!m.add(r.name, r.text, &error)) return failure(error, as_json);
    return m.finish();
  });
}

int run_merge(const std::vector<std::string>& paths, bool as_json) {
  const MergeOutput o = guarded(as_json, [&] {
    Merger m(as_json);
    std::string error;
    for (const std::string& path : paths) {
      const std::string text = read_report(path, &error);
      if (!error.empty() || !m.add(path, text, &error)) return failure(error, as_json);
    }
    return m.finish();
  });
  std::fputs(o.out.c_str(), stdout);
  std::fflush(stdout);
  return o.exit_code;
}

}  // namespace tileverify::cli
