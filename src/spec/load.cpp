// Spec files: a spec read whole (its JSON, sizes, kernels, params), from
// text or from a file, and the size suites made from one.
#include "reader.hpp"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <system_error>

namespace tileverify {

namespace fs = std::filesystem;
using namespace spec_detail;

namespace {

// The spec's JSON, checked to be an object of known keys, and its sizes.
struct ParsedSpec {
  json j;
  SizesDecl sizes;
};
ParsedSpec parsed_spec(const std::string& text, const Deadline& deadline) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) fail("is empty (a spec is a JSON object)");
  ParsedSpec ps;
  ps.j = parse_json(text, deadline);
  const json& j = ps.j;
  if (!j.is_object()) fail("the spec is " + shown(j) + ", " + what_kind(j) + ": it must be a JSON object, {...}");
  only_keys(j, "the spec",
            {"kernel", "ref", "opt", "grid", "cluster", "cta", "ctas", "params", "expect", "description", "strict",
             "sizes", "tiles", "suite"});
  ps.sizes = sizes_decl_of(j, text, deadline);
  check_deadline(deadline, "checking its sizes");
  return ps;
}

// The Spec of parsed JSON `j` (which it changes: the sizes are put in) at
// the sizes `overrides`.
Spec spec_at(json& j, const SizesDecl& sizes, const std::string& path, std::vector<PtxRef>* refs,
             const SizeMap& overrides) {
  Spec s;
  if (sizes.present) {
    s.sizes = sizes_with(sizes, overrides);
    substitute_sizes(j, s.sizes);
  } else if (!overrides.empty()) {
    sizes_with(sizes, overrides);  // the error: no "sizes" to give them to
  }
  s.path = path;
  fs::path base = fs::path(path).parent_path();
  if (j.contains("kernel")) {
    if (j.contains("ref") || j.contains("opt"))
      fail("the spec has \"kernel\" and \"ref\"/\"opt\": give \"kernel\" for one kernel, or \"ref\" and \"opt\" for two");
    s.ref = kernel_of(j["kernel"], "kernel", base, refs);
  } else {
    if (!j.contains("ref")) fail("the spec needs \"ref\" and \"opt\" (or \"kernel\" for one kernel)");
    s.ref = kernel_of(j["ref"], "ref", base, refs);
    if (j.contains("opt")) s.opt = kernel_of(j["opt"], "opt", base, refs);
  }
  if (j.contains("grid")) s.grid = dim3_of(j["grid"], "grid", DimKind::Grid);
  if (j.contains("cta")) s.cta = dim3_of(j["cta"], "cta", DimKind::Cta);
  if (j.contains("ctas")) {
    if (!j["ctas"].is_string() || j["ctas"].get<std::string>() != "all")
      fail("\"ctas\" is " + shown(j["ctas"]) + ": it can only be \"all\" (or leave it out and name one CTA with \"cta\")");
    s.all_ctas = true;
  }
  if (j.contains("cluster")) s.cluster = cluster_of(j["cluster"], "cluster");
  // Each kernel's cluster (its own, else the spec's) divides its grid (its
  // own, else the spec's).
  for (const auto& [k, name] : {std::pair<const std::optional<KernelSpec>*, const char*>{&s.ref, "ref"}, {&s.opt, "opt"}}) {
    if (!*k) continue;
    const std::string entry = j.contains("kernel") ? "kernel" : name;
    cluster_fits((*k)->cluster ? *(*k)->cluster : s.cluster, field((*k)->cluster ? entry + ".cluster" : "cluster"),
                 (*k)->grid ? *(*k)->grid : s.grid, (*k)->grid ? entry + ".grid" : "grid");
  }
  cta_inside(s.cta, s.grid, "grid");
  // One CTA is run of each kernel: it must exist in a kernel's own grid too.
  if (!s.all_ctas)
    for (const auto& [k, name] : {std::pair<const std::optional<KernelSpec>*, const char*>{&s.ref, "ref"}, {&s.opt, "opt"}})
      if (*k && (*k)->grid) cta_inside(s.cta, *(*k)->grid, std::string(j.contains("kernel") ? "kernel" : name) + ".grid");
  if (!j.contains("params")) fail("the spec needs a \"params\" list (the kernel parameters, in order)");
  if (!j["params"].is_array())
    fail("\"params\" is " + shown(j["params"]) + ": it must be a list of the kernel parameters, in order");
  std::set<std::string> names;
  for (std::size_t i = 0; i < j["params"].size(); ++i) s.params.push_back(param_of(j["params"][i], i, &names));
  for (const std::optional<KernelSpec>* k : {&s.ref, &s.opt}) {
    if (!*k) continue;
    for (const auto& binding : (*k)->symbols) {
      const std::string& var = binding.first;
      const std::string& tensor = binding.second;
      auto p = std::find_if(s.params.begin(), s.params.end(), [&](const ParamSpec& q) { return q.name == tensor; });
      if (p == s.params.end() || !p->tensor)
        fail("symbols: '" + var + "' is given by '" + tensor + "', which is no tensor of \"params\"");
      if (p->role != Role::In) fail("symbols: the tensor '" + tensor + "' that gives '" + var + "' must have role \"in\"");
    }
  }
  resolve_maps(s);
  for (const std::optional<KernelSpec>* k : {&s.ref, &s.opt})
    if (*k)
      for (const ParamSpec& p : s.params)
        for (const ParamSpec& m : p.map_array ? p.fields : std::vector<ParamSpec>{p})
          if (m.tensor_map && bound_to_symbol(**k, m.map_tensor))
            fail("symbols: '" + m.map_tensor + "' gives a module variable and is viewed by the tensor map '" + m.name +
                 "': a module variable is memory of its own, which a tensor map cannot view");
  check_args(s);
  if (j.contains("expect")) {
    // The verdicts of the report (outcome_name): a misspelt expectation
    // would make a test suite compare against a verdict that never comes.
    std::string list;
    bool known = false;
    for (Outcome o : {Outcome::Equivalent, Outcome::NotEquivalent, Outcome::Race, Outcome::Deadlock, Outcome::OutOfBounds,
                      Outcome::Uninitialized, Outcome::Unsupported, Outcome::Unknown, Outcome::Ok, Outcome::Error,
                      Outcome::Trap, Outcome::PayloadsAgree, Outcome::PayloadsDiffer, Outcome::BarrierDivergence,
                      Outcome::LaunchContract}) {
      list += std::string(list.empty() ? "" : ", ") + outcome_name(o);
      known = known || (j["expect"].is_string() && j["expect"].get<std::string>() == outcome_name(o));
    }
    if (!known) fail("\"expect\" is " + shown(j["expect"]) + ": it must be a verdict, one of " + list);
    s.expect = j["expect"].get<std::string>();
  }
  if (j.contains("strict")) {
    if (!j["strict"].is_boolean())
      fail("\"strict\" is " + shown(j["strict"]) + ": it must be true or false");
    s.strict = j["strict"].get<bool>();
  }
  if (j.contains("description")) text_of(j["description"], "description", "what the spec checks", true);
  return s;
}

Spec spec_of(const std::string& text, const std::string& path, std::vector<PtxRef>* refs, const SizeMap& overrides,
             const Deadline& deadline) {
  ParsedSpec ps = parsed_spec(text, deadline);
  return spec_at(ps.j, ps.sizes, path, refs, overrides);
}

// A reading that ran out of time: no spec, and the stage it was in.
SpecResult timed_out(const std::string& path, const SpecTimeout& t) {
  SpecResult r;
  r.timed_out = true;
  r.error = "time limit reached while reading the spec " + path + " (" + t.stage + ")";
  return r;
}

// f() (which makes r.spec) with the errors of a spec as SpecResult's.
template <class F>
SpecResult spec_result(const std::string& path, F&& f) {
  SpecResult r;
  try {
    f(r);
  } catch (const SpecTimeout& t) {
    return timed_out(path, t);
  } catch (const SpecError& e) {
    // "file:1:5: not valid JSON" joins without a space, as compilers write it.
    bool located = !e.message.empty() && std::isdigit(static_cast<unsigned char>(e.message[0]));
    r.error = path + (located ? ":" : ": ") + e.message;
  } catch (const json::exception& e) {
    // Every value is inspected before it is read, so this is a bug of ours;
    // still no library text for the user, but enough to find it.
    r.error = path + ": the spec could not be read (internal error " + std::to_string(e.id) +
              " of the JSON reader; please report it with the spec file)";
  }
  return r;
}

SpecResult parse_with(const std::string& text, const std::string& path, std::vector<PtxRef>* refs,
                      const SizeMap& overrides = {}, const Deadline& deadline = std::nullopt) {
  return spec_result(path, [&](SpecResult& r) { r.spec = spec_of(text, path, refs, overrides, deadline); });
}

std::string errno_text(int e) { return std::error_code(e, std::generic_category()).message(); }

// A spec file is a few kilobytes; reading stops here so that a spec path
// naming a device or a huge file cannot exhaust memory.
constexpr std::size_t kMaxSpecBytes = std::size_t(64) << 20;

}  // namespace

SpecResult parse_spec(const std::string& text, const std::string& path) { return parse_with(text, path, nullptr); }
SpecResult parse_spec(const std::string& text, const std::string& path, const std::map<std::string, std::int64_t>& sizes) {
  return parse_with(text, path, nullptr, sizes);
}

namespace {

// The spec file's text, or why it cannot be read ("file: ...").
std::string read_spec_text(const std::string& path, std::string* text) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return path + ": is a directory, not a spec file";
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return path + ": cannot read the spec file (" + errno_text(errno) + ")";
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0 && text->size() <= kMaxSpecBytes) text->append(buf, n);
  int read_errno = std::ferror(f) ? errno : 0;
  std::fclose(f);
  if (read_errno) return path + ": cannot read the spec file (" + errno_text(read_errno) + ")";
  if (text->size() > kMaxSpecBytes) return path + ": is larger than 64 MiB, too large for a spec file";
  if (text->empty()) return path + ": is empty";
  return "";
}

// The spec at `path`, read and parsed once: the spec at `overrides`, and
// the parsed JSON without its "suite" (what a suite's sizes are made from:
// copying a list of 10^5 entries per size made --shapes suite quadratic).
struct ReadSpec {
  SpecResult base;
  std::shared_ptr<const ParsedSpec> parsed;
};
ReadSpec read_spec(const std::string& path, const SizeMap& overrides, const Deadline& deadline) {
  ReadSpec out;
  std::string text;
  std::string unreadable = read_spec_text(path, &text);
  if (!unreadable.empty()) {
    out.base.error = unreadable;
    return out;
  }
  std::error_code ec;
  std::vector<PtxRef> refs;
  std::shared_ptr<ParsedSpec> parsed;
  SpecResult& r = out.base;
  r = spec_result(path, [&](SpecResult& into) {
    check_deadline(deadline, "reading the file");
    parsed = std::make_shared<ParsedSpec>(parsed_spec(text, deadline));
    parsed->j.erase("suite");
    json j = parsed->j;
    into.spec = spec_at(j, parsed->sizes, path, &refs, overrides);
    check_deadline(deadline, "checking its fields");
  });
  if (!r.spec) return out;
  out.parsed = parsed;
  // The PTX files are read later, by the check; a wrong path is a mistake in
  // the spec, so it is reported now, saying where relative paths start.
  fs::path base = fs::path(path).parent_path();
  fs::path folder = fs::absolute(base.empty() ? fs::path(".") : base, ec).lexically_normal();
  if (folder.filename().empty() && folder.has_parent_path()) folder = folder.parent_path();  // "/a/b/" -> "/a/b"
  for (const PtxRef& ref : refs) {
    std::string from =
        fs::path(ref.as_written).is_absolute() ? "" : " (relative to the spec's folder " + folder.string() + ")";
    std::string error;
    fs::file_status st = fs::status(ref.resolved, ec);
    if (!fs::exists(st)) {
      error = "no such file " + json_quoted(ref.as_written) + from;
    } else if (fs::is_directory(st)) {
      error = json_quoted(ref.as_written) + " is a directory, not a PTX file" + from;
    } else {
      errno = 0;
      std::FILE* ptx = std::fopen(ref.resolved.c_str(), "rb");
      if (!ptx) error = "cannot read " + json_quoted(ref.as_written) + " (" + errno_text(errno) + ")" + from;
      else std::fclose(ptx);
    }
    if (!error.empty()) {
      out.base = SpecResult{std::nullopt, path + ": " + field(ref.field) + ": " + error};
      out.parsed.reset();
      return out;
    }
  }
  return out;
}

SpecResult load_with(const std::string& path, const SizeMap& overrides, const Deadline& deadline = std::nullopt) {
  return read_spec(path, overrides, deadline).base;
}

// "file: message" -> "message", where the suite's line already says which spec.
std::string without_path(const std::string& error, const std::string& path) {
  const std::string prefix = path + ": ";
  return error.compare(0, prefix.size(), prefix) == 0 ? error.substr(prefix.size()) : error;
}

}  // namespace

SpecResult load_spec(const std::string& path) { return load_with(path, {}); }
SpecResult load_spec(const std::string& path, const std::map<std::string, std::int64_t>& sizes) {
  return load_with(path, sizes);
}
SpecResult load_spec(const std::string& path, const std::map<std::string, std::int64_t>& sizes,
                     const std::optional<std::chrono::steady_clock::time_point>& deadline) {
  return load_with(path, sizes, deadline);
}

std::vector<std::map<std::string, std::int64_t>> boundary_sizes(const std::map<std::string, std::int64_t>& defaults,
                                                                 const std::map<std::string, std::int64_t>& tiles,
                                                                 std::int64_t default_tile) {
  std::map<std::string, std::vector<std::int64_t>> values;
  for (const auto& kv : defaults) {
    auto t = tiles.find(kv.first);
    values[kv.first] = internal::boundary_values(t != tiles.end() ? t->second : default_tile);
  }
  std::vector<SizeMap> out;
  std::set<SizeMap> seen;
  auto add = [&](const SizeMap& m) {
    if (seen.insert(m).second) out.push_back(m);
  };
  // One size at a time: a bug at one size's boundary shows alone, with the
  // others where the spec's author checked them.
  for (const auto& kv : values)
    for (std::int64_t v : kv.second) {
      SizeMap m = defaults;
      m[kv.first] = v;
      add(m);
    }
  // All at once: the corner tile, partial in every dimension.
  for (int k = 0; k < internal::kBoundaryRoles; ++k) {
    SizeMap m = defaults;
    bool any = false;
    for (const auto& kv : values)
      if (std::size_t(k) < kv.second.size()) {
        m[kv.first] = kv.second[std::size_t(k)];
        any = true;
      }
    if (any) add(m);
  }
  return out;
}

SizeSuite plan_suite(const std::string& path, SuiteKind kind, const std::map<std::string, std::int64_t>& sizes,
                     const std::optional<std::chrono::steady_clock::time_point>& deadline) {
  SizeSuite suite;
  // The spec at the base sizes first: its errors (and a missing PTX file)
  // are the spec's, not one combination's.
  ReadSpec read = read_spec(path, sizes, deadline);
  if (!read.base.spec) {
    suite.error = read.base.error;
    suite.timed_out = read.base.timed_out;
    return suite;
  }
  const SizesDecl& decl = read.parsed->sizes;
  suite.names = decl.order;
  std::vector<SizeMap> combinations;
  if (kind == SuiteKind::Boundary) {
    if (!decl.present) {
      suite.error = path + ": the spec has no \"sizes\": a boundary suite varies the sizes it declares, like "
                           "\"sizes\": {\"N\": 1024}";
      return suite;
    }
    combinations = boundary_sizes(read.base.spec->sizes, decl.tiles, internal::kDefaultTile);
  } else {
    if (!decl.has_suite) {
      suite.error = path + ": the spec has no \"suite\": a list of sizes to run, like \"suite\": [{\"M\": 1}, "
                           "{\"M\": 65, \"K\": 17}]";
      return suite;
    }
    combinations.reserve(decl.suite.size());
    for (const SizeMap& entry : decl.suite) {
      SizeMap m = read.base.spec->sizes;
      for (const auto& kv : entry) m[kv.first] = kv.second;
      combinations.push_back(std::move(m));
    }
  }
  suite.cases.reserve(combinations.size());
  for (SizeMap& m : combinations) {
    SizeCase c;
    c.sizes = std::move(m);
    suite.cases.push_back(std::move(c));
  }
  // Each size from the JSON parsed above, without reading the file again.
  std::shared_ptr<const ParsedSpec> parsed = read.parsed;
  suite.evaluate = [parsed, path, kind](SizeCase& c) {
    if (c.spec || !c.skipped.empty() || !c.error.empty()) return;
    SpecResult r = spec_result(path, [&](SpecResult& into) {
      json j = parsed->j;
      into.spec = spec_at(j, parsed->sizes, path, nullptr, c.sizes);
    });
    if (r.spec) c.spec = std::move(r.spec);
    else if (kind == SuiteKind::Boundary) c.skipped = without_path(r.error, path);
    else c.error = r.error;
  };
  return suite;
}

SizeSuite load_suite(const std::string& path, SuiteKind kind, const std::map<std::string, std::int64_t>& sizes) {
  SizeSuite suite = plan_suite(path, kind, sizes);
  for (SizeCase& c : suite.cases) suite.evaluate(c);
  return suite;
}

}  // namespace tileverify
