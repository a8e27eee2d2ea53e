// `tileverify merge`: one verdict from the JSON reports of a sharded check's
// shards (docs/cli.md, "Sharding").
#pragma once

#include <string>
#include <vector>

namespace tileverify::cli {

// Prints the merged report (text, or JSON with as_json) and returns the exit
// code of its verdict: 0 equivalent or ok, 1 not_equivalent, 2 unsafe, 3
// unknown or unsupported (also when a shard is missing), 4 error (reports
// of different checks, two of one shard, a file that is no shard's report).
int run_merge(const std::vector<std::string>& paths, bool as_json);

}  // namespace tileverify::cli
