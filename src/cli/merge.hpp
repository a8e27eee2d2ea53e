// `tileverify merge`: one verdict from the JSON reports of a sharded check's
// shards (docs/cli.md, "Sharding").
//
// merge cannot rerun anything, so it says "equivalent" only when the reports
// add up: every field it reads has the type and range tileverify writes, all
// reports are of one check (the same command, options that change a verdict,
// spec, sizes and PTX: ShardInfo::check), each report agrees with itself (a
// pass holds no counterexample, everything it compared was proved, its
// comparisons are its index's share of the plan), and every shard of the
// plan is there exactly once. Anything else is refused (exit 4) with the file
// and the field named. It guards against accidents (a report of another run,
// a shard given twice, a file edited by hand), not against a report forged
// to pass those checks.
#pragma once

#include <string>
#include <vector>

namespace tileverify::cli {

// The most shards merge takes, as many as --shard allows (args.hpp): a count
// above it is no report of this tileverify, and merge's own work stays small
// whatever a report claims.
constexpr unsigned kMaxShards = 4096;

struct MergeInput {
  std::string name;  // the file, for messages
  std::string text;  // its contents
};

struct MergeOutput {
  int exit_code = 4;
  std::string out;  // the merged report, text or JSON, ending in a newline
};

// The merge of `reports` in the order given: the exit code of its verdict
// (0 equivalent or ok, 1 not_equivalent, 2 unsafe, 3 unknown or unsupported,
// also when a shard is missing, 4 error or refused). Never throws.
MergeOutput merge_reports(const std::vector<MergeInput>& reports, bool as_json);

// The same for report files: reads them, prints the merged report on stdout
// and returns its exit code. Never throws.
int run_merge(const std::vector<std::string>& paths, bool as_json);

}  // namespace tileverify::cli
