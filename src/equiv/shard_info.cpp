// What makes the reports of a sharded check's shards one check's
// (ShardInfo::check and ::fingerprint; docs/cli.md, "Sharding").
//
// `tileverify merge` trusts a shard's verdict only for the check that shard
// ran, so everything that can change a verdict goes in: the command (a
// `check` shard says "ok" where an `equiv` shard of the same spec finds a
// difference), the options that change what is checked (--strict makes
// tolerated behaviour unsafe; --no-symmetry changes how the work is split),
// the spec file itself (its params, launch and init values, not only its
// sizes), the evaluated sizes, and each kernel's name and PTX. Time and
// memory limits and --threads are left out: they may differ between
// machines and only ever turn an answer into `unknown`.
#include "internal.hpp"

#include <cstdio>
#include <fstream>
#include <string>

namespace tileverify::internal {

namespace {

std::uint64_t fnv1a(const std::string& s, std::uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char ch : s) h = (h ^ ch) * 0x100000001b3ull;
  return h;
}

std::string hex(std::uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// A digest of a file's bytes, or a word saying it could not be read (then
// every shard that could not read it agrees, and one that could does not).
// Spec and PTX files are a few megabytes at most: the spec reader and the
// PTX reader have read them whole already.
std::string file_digest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "unreadable";
  std::uint64_t h = 0xcbf29ce484222325ull;
  char buf[1 << 16];
  std::uint64_t bytes = 0;
  while (in) {
    in.read(buf, sizeof buf);
    const std::streamsize n = in.gcount();
    for (std::streamsize i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(buf[i])) * 0x100000001b3ull;
    bytes += std::uint64_t(n);
  }
  return hex(h) + "/" + std::to_string(bytes);
}

}  // namespace

ShardInfo shard_info(const Spec& spec, const RunLimits& run, bool equiv) {
  ShardInfo s;
  s.index = run.shard_index;
  s.count = run.shard_count;
  std::map<std::string, std::string>& c = s.check;
  c["command"] = equiv ? "equiv" : "check";
  c["strict"] = run.strict || spec.strict ? "true" : "false";
  c["cta_classes"] = run.cta_classes ? "true" : "false";
  c["ctas"] = spec.all_ctas ? "all" : "one";
  c["spec"] = file_digest(spec.path);
  std::string sizes;
  for (const auto& [name, v] : spec.sizes) sizes += (sizes.empty() ? "" : " ") + name + "=" + std::to_string(v);
  c["sizes"] = sizes;
  for (const std::optional<KernelSpec>* k : {&spec.ref, &spec.opt}) {
    if (!*k) continue;
    const std::string entry = k == &spec.ref ? "ref" : "opt";
    c[entry + ".kernel"] = (*k)->kernel;
    c[entry + ".ptx"] = file_digest((*k)->ptx);
  }
  // Each key and value with its length, so that no two maps read alike.
  std::string all;
  for (const auto& [key, value] : c)
    all += std::to_string(key.size()) + ":" + key + "=" + std::to_string(value.size()) + ":" + value + ";";
  s.fingerprint = hex(fnv1a(all));
  return s;
}

}  // namespace tileverify::internal
