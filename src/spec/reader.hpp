// The spec reader's shared parts (docs/cli.md, "Spec files"). Not public:
// include/tileverify/equiv.hpp's parse_spec, load_spec, launch_for and
// launch_of are the interface; this is what their files share.
//
// A spec comes from people and from scripts, and tileverify runs in test
// suites and CI jobs, where a crash or a silent wrong answer is worse than a
// refusal. So every field is checked for its type and range before it is
// used, and every message names the field, the value found and what is
// allowed. No exception text of the JSON library reaches the user: syntax
// errors are described by our own small checker (json_text.cpp), with
// file:line:column, and every value is inspected before it is converted.
//
// The files: json_text.cpp (the JSON parse, the deadline), fields.cpp
// (single values, keys, messages), kernels.cpp (launch shapes, kernel
// entries), params.cpp ("params" and "args"), maps.cpp (tensor maps, struct
// layouts), sizes_decl.cpp ("sizes", "tiles", "suite"), load.cpp (a spec
// whole, from text or a file; suites), launch.cpp (a kernel's launch against
// its PTX), kernel_names.cpp; sizes.cpp (size expressions) and tensor_map.cpp
// (cuTensorMapEncodeTiled's rules) beside them.
#pragma once

#include "tileverify/equiv.hpp"

#include "sizes.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tileverify::spec_detail {

using json = nlohmann::json;
using internal::SizeMap;

// A spec's mistake: the message, without the file's path (added by the caller).
struct SpecError {
  std::string message;
};

[[noreturn]] inline void fail(const std::string& message) { throw SpecError{message}; }

// Reading a spec (a 64 MiB one takes seconds) counts against the check's
// deadline (docs/cli.md, --timeout): past it, reading stops with the stage
// it was in, and the result is a time-out, not an error of the spec.
using Deadline = std::optional<std::chrono::steady_clock::time_point>;
struct SpecTimeout {
  std::string stage;  // "parsing its JSON"
};
void check_deadline(const Deadline& deadline, const std::string& stage);

// ------------------------------------------------------------ json_text.cpp

json parse_json(const std::string& text, const Deadline& deadline = std::nullopt);

// ------------------------------------------------------------ fields.cpp

std::string json_quoted(const std::string& s);
std::string shown(const json& v);
std::string field(const std::string& path);
std::string what_kind(const json& v);
std::size_t edit_distance(const std::string& a, const std::string& b);
void only_keys(const json& object, const std::string& where, std::initializer_list<const char*> allowed);
std::string not_uint(const json& v, std::uint64_t* out);
std::uint64_t uint_in(const json& v, const std::string& name, std::uint64_t lo, std::uint64_t hi,
                      const std::string& meaning);
std::string text_of(const json& v, const std::string& name, const std::string& meaning, bool may_be_empty = false);
DType dtype_of(const json& v, const std::string& name);
std::vector<std::uint64_t> shape_of(const json& v, const std::string& name, const std::string& tensor);
std::int64_t scalar_bits(const json& v, DType t, const std::string& where, const std::string& key = "\"value\"");

// ------------------------------------------------------------ kernels.cpp

enum class DimKind { Block, Grid, Cta };

std::string dim3_text(const Dim3& d);
Dim3 dim3_of(const json& j, const std::string& name, DimKind kind);
Dim3 cluster_of(const json& j, const std::string& name);
void cluster_fits(const Dim3& cluster, const std::string& cluster_label, const Dim3& grid, const std::string& grid_name);
void cta_inside(const Dim3& cta, const Dim3& grid, const std::string& grid_name);

// Where a kernel's PTX path came from, for load_spec's file checks.
struct PtxRef {
  std::string field;  // "ref.ptx"
  std::string as_written;
  std::string resolved;
};

KernelSpec kernel_of(const json& j, const std::string& what, const std::filesystem::path& base,
                     std::vector<PtxRef>* refs);

// ------------------------------------------------------------ maps.cpp

void tensor_map_of(const json& j, const std::string& where, ParamSpec* ps);
void tensor_maps_of(const json& j, const std::string& where, ParamSpec* ps);
const ParamSpec* param_named(const Spec& s, const std::string& name);
std::uint32_t field_bytes(const ParamSpec& f);
void resolve_maps(Spec& s);

// ------------------------------------------------------------ params.cpp

ParamSpec param_of(const json& p, std::size_t i, std::set<std::string>* names);
bool bound_to_symbol(const KernelSpec& k, const std::string& tensor);
void check_args(const Spec& s);

// ------------------------------------------------------------ sizes_decl.cpp

struct SizesDecl {
  bool present = false;             // the spec has "sizes"
  std::vector<std::string> order;   // the size names as the spec writes them
  SizeMap defaults, tiles;
  std::vector<SizeMap> suite;
  bool has_suite = false;
};

SizesDecl sizes_decl_of(const json& j, const std::string& text, const Deadline& deadline = std::nullopt);
SizeMap sizes_with(const SizesDecl& d, const SizeMap& overrides);
void substitute_sizes(json& j, const SizeMap& sizes);

}  // namespace tileverify::spec_detail
