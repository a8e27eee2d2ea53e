// `tileverify merge` (src/cli/merge.cpp, docs/cli.md "Sharding"): reports
// that do not add up are refused, naming the file and the field; no report,
// however malformed, gets past merge as an exception; and the reports of a
// real sharded check merge to its verdict.
#include "../../src/cli/merge.hpp"

#include "tileverify/equiv.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using nlohmann::json;
using tileverify::cli::merge_reports;
using tileverify::cli::MergeInput;
using tileverify::cli::MergeOutput;

namespace {

const fs::path kExamples = fs::path(TILEVERIFY_TEST_DIR).parent_path() / "examples" / "kernels";

// The shares of a plan of two class pairs of 5 and 3 comparisons over 4
// shards (fewer pairs than shards: pair 0 is dealt to shards 0 and 2, pair 1
// to shards 1 and 3), as class_check.cpp's share() deals them.
const unsigned kShare[4] = {3, 2, 2, 1};

json check_of(const std::string& command = "equiv") {
  return {{"command", command}, {"strict", "false"},          {"cta_classes", "true"}, {"ctas", "all"},
          {"spec", "0123456789abcdef/512"}, {"sizes", "M=100"}, {"ref.kernel", "ref_k"}, {"ref.ptx", "aa/10"},
          {"opt.kernel", "opt_k"}, {"opt.ptx", "bb/10"}};
}

// Shard `index` of 4 of an equivalence check that passed, as tileverify writes it.
json shard(unsigned index) {
  const std::uint64_t c = kShare[index];
  return {{"verdict", "equivalent"},
          {"diagnostics", json::array()},
          {"notes", json::array()},
          {"shard",
           {{"index", index},
            {"count", 4},
            {"fingerprint", "00000000deadbeef"},
            {"check", check_of()},
            {"comparisons_total", 8},
            {"elements_total", 80},
            {"whole", false},
            {"plan", {5, 3}}}},
          {"stats",
           {{"parse_seconds", 0.1},
            {"eval_seconds", 0.1},
            {"decide_seconds", 0.1},
            {"outputs_compared", 10 * c},
            {"proved", 10 * c},
            {"comparisons", c},
            {"ref_block_syncs", 0},
            {"ref_warp_syncs", 0},
            {"opt_block_syncs", 0},
            {"opt_warp_syncs", 0}}}};
}

std::vector<json> four() { return {shard(0), shard(1), shard(2), shard(3)}; }

// Shard 1 refuted, with its counterexample.
json refuted(unsigned index = 1) {
  json j = shard(index);
  j["verdict"] = "not_equivalent";
  j["stats"]["proved"] = 0;
  j["counterexample"] = {{"output", "C"},          {"element", 7},
                         {"ref", "A[7] + B[7]"}, {"opt", "A[7]"},
                         {"inputs", {{"A", {1, 2}}, {"B", {3, nullptr}}}},
                         {"ref_value", "4"},     {"opt_value", "1"}};
  return j;
}

MergeOutput merge(const std::vector<json>& reports, bool as_json = false) {
  std::vector<MergeInput> in;
  for (std::size_t i = 0; i < reports.size(); ++i) in.push_back({"r" + std::to_string(i) + ".json", reports[i].dump()});
  return merge_reports(in, as_json);
}

// The merge is refused (exit 4) and the message names `what` (file, field).
void refused(const std::vector<json>& reports, const std::string& what) {
  const MergeOutput o = merge(reports);
  INFO(o.out);
  CHECK(o.exit_code == 4);
  CHECK(o.out.rfind("ERROR: ", 0) == 0);
  CHECK(o.out.find(what) != std::string::npos);
}

}  // namespace

TEST_CASE("merge: the shards of one check that add up merge to its verdict") {
  const MergeOutput o = merge(four());
  INFO(o.out);
  CHECK(o.exit_code == 0);
  CHECK(o.out.rfind("EQUIVALENT (4 of 4 shards of check 00000000deadbeef)", 0) == 0);
  CHECK(o.out.find("8 of 8 comparisons, 80 of 80 output elements") != std::string::npos);
  // In any order of the files.
  CHECK(merge({shard(3), shard(1), shard(0), shard(2)}).exit_code == 0);
  const MergeOutput j = merge(four(), true);
  CHECK(json::parse(j.out)["verdict"] == "equivalent");
}

TEST_CASE("merge: reports of different checks are refused, naming what differs") {
  // issue 31: a `check` shard 0 (done whole, "ok") and an `equiv` shard 1
  // that found a difference carried one fingerprint and merged to OK.
  json a = shard(0), b = refuted(1);
  a["verdict"] = "ok";
  a["shard"]["count"] = b["shard"]["count"] = 2;
  a["shard"]["whole"] = true;
  a["shard"]["plan"] = json::array();
  a["shard"]["comparisons_total"] = a["shard"]["elements_total"] = 0;
  a["stats"]["comparisons"] = a["stats"]["outputs_compared"] = a["stats"]["proved"] = 0;
  a["shard"]["check"]["command"] = "check";
  refused({a, b}, "r1.json: shard.check.command \"equiv\", but r0.json: \"check\"");
  // --strict, --no-symmetry, the spec, its sizes, a kernel's PTX: each named.
  for (const char* key : {"strict", "cta_classes", "spec", "sizes", "opt.ptx", "ref.kernel"}) {
    std::vector<json> r = four();
    r[2]["shard"]["check"][key] = "something else";
    refused(r, std::string("r2.json: shard.check.") + key);
  }
  std::vector<json> r = four();
  r[3]["shard"]["check"].erase("sizes");
  refused(r, "r3.json: shard.check.sizes missing");
  r = four();
  r[1]["shard"]["fingerprint"] = "1111111111111111";
  refused(r, "r1.json: shard.fingerprint");
  r = four();
  r[1]["shard"]["plan"] = {4, 4};
  refused(r, "r1.json: shard.plan, comparisons_total or elements_total differ from r0.json's");
}

TEST_CASE("merge: the shard count is one, from 2 to 4096, in every report") {
  // issue 31: count 0 (or none) gave "EQUIVALENT (4 of 0 shards)"; 2^32 - 1
  // listed every missing shard (16 GB, minutes).
  for (const json& bad : {json(0), json(1), json(4097), json(4294967295ull), json(1.5), json("4"), json(-4), json()}) {
    std::vector<json> r = four();
    r[0]["shard"]["count"] = bad;
    refused(r, "r0.json: shard.count");
  }
  std::vector<json> r = four();
  r[0]["shard"].erase("count");
  refused(r, "r0.json: shard.count: missing");
  r = four();
  r[2]["shard"]["count"] = 8;
  refused(r, "r2.json: shard.count");
  // The largest count: one report, the others missing, answered at once.
  json big = shard(0);
  big["shard"]["count"] = 4096;
  // Its share of the plan's pairs of 5 and 3: one comparison of the first.
  big["stats"]["comparisons"] = 1;
  big["stats"]["outputs_compared"] = big["stats"]["proved"] = 10;
  const auto t0 = std::chrono::steady_clock::now();
  const MergeOutput o = merge({big});
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
  INFO(o.out);
  CHECK(o.exit_code == 3);
  CHECK(o.out.find("4095 of the 4096 shards are missing (shard 1, 2, 3, 4, 5, 6, 7, 8, ...)") != std::string::npos);
}

TEST_CASE("merge: every field merge reads has its type and range") {
  // issue 31: an index of 1.5 or 2^32 + 1 was cut to 1; "1" and a report
  // without "stats" aborted merge (exit 134).
  for (const json& bad : {json(1.5), json(1.0), json("1"), json(4294967297ull), json(-1), json(4), json()}) {
    std::vector<json> r = four();
    r[1]["shard"]["index"] = bad;
    refused(r, "r1.json: shard.index");
  }
  std::vector<json> r = four();
  r[1].erase("stats");
  refused(r, "r1.json: stats: missing");
  r = four();
  r[2]["stats"]["proved"] = "20";
  refused(r, "r2.json: stats.proved: a string");
  r = four();
  r[0]["verdict"] = "probably_fine";
  refused(r, "r0.json: verdict");
  r = four();
  r[0]["shard"]["whole"] = "false";
  refused(r, "r0.json: shard.whole");
  r = four();
  r[1] = refuted(1);
  r[1]["counterexample"]["ref_value"] = 4;  // issue 31: aborted the text report
  refused(r, "r1.json: counterexample.ref_value");
  r[1] = refuted(1);
  r[1]["counterexample"].erase("opt_value");
  refused(r, "r1.json: counterexample");
  r[1] = refuted(1);
  r[1]["counterexample"]["element"] = "7";
  refused(r, "r1.json: counterexample.element");
  r[1] = refuted(1);
  r[1]["diagnostics"] = {{{"kind", "race"}, {"message", 3}, {"location", "k.ptx:1:1"}}};
  refused(r, "r1.json: diagnostics[0].message");
  r[1] = refuted(1);
  r[1]["shard"]["plan"] = {5, "3"};
  refused(r, "r1.json: shard.plan[1]");
  refused({json::array()}, "r0.json: not a JSON report");
  // A value nested a million levels deep crashed merge (a stack overflow
  // printing it in a message, or copying the evidence), wherever it is:
  // refused from the text, before parsing.
  {
    const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
    json at_index = shard(1), in_inputs = refuted(1);
    at_index["shard"]["index"] = "DEEP";
    in_inputs["counterexample"]["inputs"]["A"] = "DEEP";
    for (const json& j : {at_index, in_inputs}) {
      std::string text = j.dump();
      text.replace(text.find("\"DEEP\""), 6, deep);
      const MergeOutput o = merge_reports({{"r0.json", shard(0).dump()}, {"deep.json", text}}, false);
      INFO(o.out);
      CHECK(o.exit_code == 4);
      CHECK(o.out.find("deep.json: nested 100000") != std::string::npos);
    }
  }
  // Deep but allowed: arrays and objects in messages are shown by kind only.
  r = four();
  r[1]["shard"]["index"] = json::array({json::array({json::array({1})})});
  refused(r, "r1.json: shard.index: an array ([...]), not a number");
  std::vector<MergeInput> garbage = {{"g.json", "{\"verdict\": "}};
  CHECK(merge_reports(garbage, false).exit_code == 4);
}

TEST_CASE("merge: a report that contradicts itself is refused") {
  std::vector<json> r = four();
  // issue 31: the verdicts of refuted shards edited to "equivalent".
  r[1] = refuted(1);
  r[1]["verdict"] = "equivalent";
  r[1]["stats"]["proved"] = r[1]["stats"]["outputs_compared"];
  refused(r, "r1.json: counterexample: verdict equivalent, yet the report holds a counterexample");
  r = four();
  r[3]["stats"]["proved"] = 9;
  refused(r, "r3.json: stats.proved: verdict equivalent, yet 9 of the 10 output elements");
  r = four();
  r[1] = refuted(1);
  r[1].erase("counterexample");
  refused(r, "r1.json: counterexample: verdict not_equivalent without a counterexample");
  // Shard 3's report given the index 0: its comparisons are not shard 0's share.
  r = four();
  r[3]["shard"]["index"] = 0;
  r[0]["shard"]["index"] = 3;
  refused(r, "r0.json: stats.comparisons: verdict equivalent after 3 comparisons, but the share of shard 3 of 4");
  r = four();
  r[2]["shard"]["comparisons_total"] = 9;
  refused(r, "r2.json: shard.plan: its pairs hold 8 comparisons");
  // Pairs whose sum wraps around 2^64 to the total: 2^16 pairs of 2^48.
  r = four();
  json plan = json::array({131072});
  for (int i = 0; i < 65536; ++i) plan.push_back(std::uint64_t(1) << 48);
  r[0]["shard"]["plan"] = plan;
  r[0]["shard"]["comparisons_total"] = 131072;
  refused(r, "r0.json: shard.plan: its pairs hold more than 131072 comparisons");
  r = four();
  r[0]["verdict"] = "ok";  // a `check` verdict in an `equiv` report
  refused(r, "r0.json: verdict: ok is no verdict of `tileverify equiv`");
  r = four();
  r[1]["diagnostics"] = {{{"kind", "race"}, {"message", "m"}, {"location", "k.ptx:1:1"}}};
  refused(r, "r1.json: diagnostics: verdict equivalent, yet the report holds diagnostics");
}

TEST_CASE("merge: equivalent only with every shard of the plan, each once") {
  std::vector<json> r = four();
  r.erase(r.begin() + 2);
  MergeOutput o = merge(r);
  INFO(o.out);
  CHECK(o.exit_code == 3);
  CHECK(o.out.rfind("UNKNOWN (3 of 4 shards", 0) == 0);
  CHECK(o.out.find("1 of the 4 shards is missing (shard 2)") != std::string::npos);
  r = four();
  r.push_back(shard(1));
  refused(r, "r4.json and r1.json are both shard 1");
  // A check run whole (no "shard") among shards.
  r = four();
  r[3].erase("shard");
  refused(r, "r3.json: not the report of a shard");
  // Shard 0 done whole while the others split the comparisons.
  r = four();
  r[0]["shard"]["whole"] = true;
  r[0]["shard"]["plan"] = json::array();
  r[0]["shard"]["comparisons_total"] = 0;
  r[0]["stats"]["comparisons"] = 0;
  refused(r, "r1.json: shard.whole is false, but r0.json: true");
  // A refutation decides even with a shard missing.
  r = four();
  r[1] = refuted(1);
  r.erase(r.begin() + 3);
  o = merge(r);
  CHECK(o.exit_code == 1);
  CHECK(o.out.find("first differing output: C[7]") != std::string::npos);
  CHECK(o.out.find("ref gives 4") != std::string::npos);
}

TEST_CASE("merge: no report, however malformed, makes merge throw") {
  // Every field of a report set with a refutation and a race, replaced by a
  // value of each other type or removed: the answer is an exit code, and for
  // a field merge reads, with another type, a refusal.
  std::vector<json> base = four();
  base[1] = refuted(1);
  base[2]["verdict"] = "race";
  base[2]["stats"]["proved"] = 0;
  base[2]["diagnostics"] = {{{"kind", "race"}, {"message", "a race"}, {"location", "k.ptx:3:1"}, {"threads", {0, 1}}}};
  REQUIRE(merge(base).exit_code == 2);
  const json values[] = {json(), json("x"), json(1.5), json(-1), json(true), json::array(), json::object(),
                         json(18446744073709551615ull)};
  // The fields merge reads (the rest it leaves alone: timings, notes, a
  // diagnostic's threads, the counterexample's input values).
  auto reads = [](const std::string& at) {
    auto starts = [&](const char* p) { return at.rfind(p, 0) == 0; };
    auto ends = [&](const std::string& e) { return at.size() >= e.size() && at.compare(at.size() - e.size(), e.size(), e) == 0; };
    if (starts("/diagnostics/"))
      return at.find('/', 13) == std::string::npos || ends("/kind") || ends("/message") || ends("/location");
    if (starts("/counterexample/inputs/")) return false;
    for (const char* p : {"/verdict", "/shard", "/stats/comparisons", "/stats/outputs_compared", "/stats/proved",
                          "/counterexample", "/error", "/cta_classes"})
      if (starts(p)) return true;
    return at == "/stats" || at == "/diagnostics";
  };
  std::size_t runs = 0;
  std::function<void(std::size_t, const json&, const std::string&)> walk = [&](std::size_t k, const json& v,
                                                                               const std::string& at) {
    if (v.is_structured())
      for (auto it = v.begin(); it != v.end(); ++it)
        walk(k, it.value(), at + "/" + (v.is_array() ? std::to_string(std::distance(v.begin(), it)) : it.key()));
    if (at.empty()) return;
    for (const json& x : values) {
      std::vector<json> r = base;
      r[k][json::json_pointer(at)] = x;
      const MergeOutput o = merge(r);  // never throws: merge_reports catches all
      ++runs;
      INFO(k << at << " = " << x.dump() << ": " << o.out);
      CHECK(o.exit_code >= 0);
      CHECK(o.exit_code <= 4);
      const bool same_kind = x.type() == v.type() || (x.is_number_integer() && v.is_number_integer());
      if (reads(at) && !same_kind) CHECK(o.exit_code == 4);
    }
  };
  for (std::size_t k = 0; k < base.size(); ++k) walk(k, base[k], "");
  CHECK(runs > 500);
}

TEST_CASE("merge: the shards of real checks, equivalent and not") {
  // The reports the library writes merge to the check's verdict: each
  // shard's comparisons are its index's share of the plan, with more pairs
  // than shards and with fewer.
  auto loaded = tileverify::load_spec((kExamples / "scaling" / "smem32.sizes.json").string(),
                                      {{"M", 100}, {"N", 100}, {"K", 40}});
  REQUIRE(loaded.spec);
  for (unsigned count : {2u, 3u, 8u}) {
    std::vector<MergeInput> in;
    for (unsigned i = 0; i < count; ++i) {
      tileverify::DecideLimits l;
      l.shard_index = i;
      l.shard_count = count;
      const tileverify::Report r = tileverify::check_equivalence(*loaded.spec, l);
      REQUIRE(r.shard);
      in.push_back({"s" + std::to_string(i) + ".json", r.json()});
    }
    const MergeOutput o = merge_reports(in, false);
    INFO(count << " shards: " << o.out);
    CHECK(o.exit_code == 0);
    CHECK(o.out.rfind("EQUIVALENT (" + std::to_string(count) + " of " + std::to_string(count) + " shards", 0) == 0);
  }
  // `check` and `equiv` of one spec are different checks, and so are a
  // strict check and one that is not.
  tileverify::RunLimits rl;
  rl.shard_count = 2;
  const tileverify::Report c0 = tileverify::check(*loaded.spec, rl);
  tileverify::DecideLimits dl;
  dl.shard_index = 1;
  dl.shard_count = 2;
  const tileverify::Report e1 = tileverify::check_equivalence(*loaded.spec, dl);
  REQUIRE(c0.shard);
  REQUIRE(e1.shard);
  CHECK(c0.shard->fingerprint != e1.shard->fingerprint);
  MergeOutput o = merge_reports({{"c0.json", c0.json()}, {"e1.json", e1.json()}}, false);
  CHECK(o.exit_code == 4);
  CHECK(o.out.find("shard.check.command") != std::string::npos);
  dl.strict = true;
  const tileverify::Report e1s = tileverify::check_equivalence(*loaded.spec, dl);
  dl.shard_index = 0;
  dl.strict = false;
  const tileverify::Report e0 = tileverify::check_equivalence(*loaded.spec, dl);
  o = merge_reports({{"e0.json", e0.json()}, {"e1s.json", e1s.json()}}, false);
  CHECK(o.exit_code == 4);
  CHECK(o.out.find("shard.check.strict") != std::string::npos);
  CHECK(merge_reports({{"e0.json", e0.json()}, {"e1.json", e1.json()}}, false).exit_code == 0);
  // The spec file's bytes count, not only its sizes and PTX: the same
  // kernels and sizes read from another spec file are another check.
  tileverify::Spec other = *loaded.spec;
  other.path = (kExamples / "grid" / "cta7.sizes.json").string();
  dl.shard_index = 1;
  const tileverify::Report o1 = tileverify::check_equivalence(other, dl);
  REQUIRE(o1.shard);
  CHECK(o1.shard->check.at("spec") != e1.shard->check.at("spec"));
  CHECK(o1.shard->check.at("sizes") == e1.shard->check.at("sizes"));
  o = merge_reports({{"e0.json", e0.json()}, {"o1.json", o1.json()}}, false);
  CHECK(o.exit_code == 4);
  CHECK(o.out.find("o1.json: shard.check.spec") != std::string::npos);
}
