// Spec files: "sizes", "tiles" and "suite", and the sizes put into the
// JSON before it is read.
#include "reader.hpp"

#include <algorithm>
#include <cctype>

namespace tileverify::spec_detail {

// ------------------------------------------------------------ sizes

// "sizes", "tiles" and "suite" (docs/cli.md, "Sizes and boundary suites"):
// a spec written once for every size of a size-parametric kernel. Where a
// size goes (a shape, a grid, a scalar's value), a string is an expression
// over the sizes; it is evaluated and put into the JSON in its place before
// the spec is read, so an evaluated spec meets every rule a spec written
// with numbers meets, and the Spec it gives is the same.

namespace {

// The most a tile may be: far above any real tile, and small enough that
// every boundary value (16 tiles and a half) stays a valid size.
constexpr std::uint64_t kMaxTile = std::uint64_t(1) << 24;

std::string names_text(const SizeMap& m) {
  std::string list;
  for (const auto& kv : m) list += (list.empty() ? "" : ", ") + kv.first;
  return list;
}

// "M=129 K=96": sizes for messages, in the spec's order where it is known.
std::string sizes_text(const SizeMap& m, const std::vector<std::string>& order = {}) {
  std::string out;
  std::set<std::string> done;
  for (const std::string& n : order)
    if (m.count(n) && done.insert(n).second) out += (out.empty() ? "" : " ") + n + "=" + std::to_string(m.at(n));
  for (const auto& kv : m)
    if (!done.count(kv.first)) out += (out.empty() ? "" : " ") + kv.first + "=" + std::to_string(kv.second);
  return out;
}

// The declared size a mistyped name probably meant: "k" for "K", "MM" for
// "M"; none for "Q" among "M", "N", "K" (one-letter names are all one edit
// apart, and a suggestion of any of them would be noise).
std::string nearest_size(const std::string& name, const SizeMap& sizes) {
  std::string nearest;
  std::size_t best = std::min<std::size_t>(3, name.size());
  for (const auto& kv : sizes) {
    std::string a = name, b = kv.first;
    for (char& c : a) c = char(std::tolower(static_cast<unsigned char>(c)));
    for (char& c : b) c = char(std::tolower(static_cast<unsigned char>(c)));
    const std::size_t d = a == b ? 0 : edit_distance(name, kv.first);
    if (d < best) {
      best = d;
      nearest = kv.first;
    }
  }
  return nearest;
}

// The key of an object that must name a declared size ("tiles", "suite" entries).
void must_be_size(const std::string& key, const std::string& where, const SizeMap& sizes) {
  if (sizes.count(key)) return;
  const std::string nearest = nearest_size(key, sizes);
  fail(field(where) + " has the key " + json_quoted(key) + ", which is no size of \"sizes\"" +
       (nearest.empty() ? "" : " (did you mean \"" + nearest + "\"?)") + "; the sizes are " + names_text(sizes));
}

}  // namespace

SizesDecl sizes_decl_of(const json& j, const std::string& text, const Deadline& deadline) {
  SizesDecl d;
  if (!j.contains("sizes")) {
    for (const char* key : {"tiles", "suite"})
      if (j.contains(key))
        fail(field(key) + " needs \"sizes\": it names sizes, which \"sizes\" declares, like {\"N\": 1024}");
    return d;
  }
  d.present = true;
  const json& s = j["sizes"];
  if (!s.is_object())
    fail("\"sizes\" is " + shown(s) + ": it must be an object from size names to their default values, like "
         "{\"M\": 129, \"K\": 96}");
  for (auto it = s.begin(); it != s.end(); ++it) {
    if (!internal::size_name_ok(it.key()))
      fail("\"sizes\" has the key " + json_quoted(it.key()) + ": a size name is an identifier (letters, digits and _, "
           "not starting with a digit) other than ceil, min and max");
    d.defaults[it.key()] = std::int64_t(uint_in(it.value(), "sizes." + it.key(), 1, std::uint64_t(internal::kMaxSize),
                                                "a size is a positive integer"));
  }
  // nlohmann's objects keep keys sorted; the spec's order is the one to
  // print sizes in ("M=129 N=1024 K=96"), so it is read again, in order.
  nlohmann::ordered_json o = nlohmann::ordered_json::parse(text, nullptr, false);
  if (o.is_object() && o.contains("sizes") && o["sizes"].is_object())
    for (auto it = o["sizes"].begin(); it != o["sizes"].end(); ++it) d.order.push_back(it.key());
  if (j.contains("tiles")) {
    const json& t = j["tiles"];
    if (!t.is_object())
      fail("\"tiles\" is " + shown(t) + ": it must be an object from size names to the tile the kernel steps each by, "
           "like {\"M\": 64, \"K\": 16}");
    for (auto it = t.begin(); it != t.end(); ++it) {
      must_be_size(it.key(), "tiles", d.defaults);
      d.tiles[it.key()] = std::int64_t(uint_in(it.value(), "tiles." + it.key(), 1, kMaxTile, "a tile is a positive "
                                                                                               "integer"));
    }
  }
  if (j.contains("suite")) {
    const json& l = j["suite"];
    const std::string rule = "a list of sizes to run, each an object from size names to values, like "
                             "[{\"M\": 1}, {\"M\": 65, \"K\": 17}] (sizes it leaves out keep their defaults)";
    if (!l.is_array() || l.empty()) fail("\"suite\" is " + shown(l) + ": it must be " + rule);
    d.has_suite = true;
    for (std::size_t i = 0; i < l.size(); ++i) {
      if (i % 4096 == 4095)
        check_deadline(deadline, "checking its \"suite\" (at entry " + std::to_string(i) + " of " +
                                     std::to_string(l.size()) + ")");
      const std::string where = "suite[" + std::to_string(i) + "]";
      if (!l[i].is_object()) fail(field(where) + " is " + shown(l[i]) + ": \"suite\" is " + rule);
      SizeMap entry;
      for (auto it = l[i].begin(); it != l[i].end(); ++it) {
        must_be_size(it.key(), where, d.defaults);
        entry[it.key()] = std::int64_t(uint_in(it.value(), where + "." + it.key(), 1,
                                               std::uint64_t(internal::kMaxSize), "a size is a positive integer"));
      }
      d.suite.push_back(std::move(entry));
    }
  }
  return d;
}

// The defaults with the overrides: each must name a declared size.
SizeMap sizes_with(const SizesDecl& d, const SizeMap& overrides) {
  if (!overrides.empty() && !d.present)
    fail("sizes were given (" + sizes_text(overrides) + ") but the spec has no \"sizes\" to give them to");
  SizeMap out = d.defaults;
  for (const auto& kv : overrides) {
    if (!d.defaults.count(kv.first)) {
      const std::string nearest = nearest_size(kv.first, d.defaults);
      fail("the size " + json_quoted(kv.first) + " (given as " + kv.first + "=" + std::to_string(kv.second) +
           ") is not in \"sizes\"" + (nearest.empty() ? "" : " (did you mean \"" + nearest + "\"?)") +
           "; the sizes are " + names_text(d.defaults));
    }
    if (kv.second < 1 || kv.second > internal::kMaxSize)
      fail("the size " + kv.first + "=" + std::to_string(kv.second) + " is " + (kv.second < 1 ? "not positive" : "too large") +
           ": a size is an integer from 1 to " + std::to_string(internal::kMaxSize));
    out[kv.first] = kv.second;
  }
  return out;
}

namespace {

// One place a size may go: the string there is evaluated and replaced by
// its value, which must be at least `least` (1 for a shape or a grid, 0 for
// a CTA index; none for a scalar's value, whose dtype decides).
void substitute(json& v, const std::string& name, const SizeMap& sizes, std::optional<std::int64_t> least,
                const std::string& meaning) {
  if (!v.is_string()) return;
  const std::string expr = v.get<std::string>();
  internal::SizeValue r = internal::eval_size(expr, sizes);
  if (!r.value) fail(field(name) + ": " + json_quoted(expr) + " : " + r.error);
  if (least && *r.value < *least) {
    SizeMap used;
    for (const std::string& n : r.names) used[n] = sizes.at(n);
    fail(field(name) + ": " + json_quoted(expr) + " is " + std::to_string(*r.value) +
         (used.empty() ? "" : " at " + sizes_text(used)) + ", but " + meaning + " must be " +
         (*least == 1 ? "a positive integer" : "a non-negative integer"));
  }
  if (*r.value >= 0) v = std::uint64_t(*r.value);
  else v = *r.value;
}

void substitute_list(json& v, const std::string& name, const SizeMap& sizes, std::int64_t least,
                     const std::string& meaning) {
  if (!v.is_array()) return;  // the reader says what the list must be
  for (std::size_t i = 0; i < v.size(); ++i)
    substitute(v[i], name + "[" + std::to_string(i) + "]", sizes, least, meaning);
}

}  // namespace

// Every place of the spec a size may go. Anything that is not where the
// format puts it is left alone, for the reader to refuse as it always has.
void substitute_sizes(json& j, const SizeMap& sizes) {
  if (j.contains("grid")) substitute_list(j["grid"], "grid", sizes, 1, "a grid dimension");
  if (j.contains("cta")) substitute_list(j["cta"], "cta", sizes, 0, "a CTA index");
  for (const char* entry : {"kernel", "ref", "opt"}) {
    if (!j.contains(entry) || !j[entry].is_object()) continue;
    json& k = j[entry];
    const std::string e = entry;
    if (k.contains("block")) substitute_list(k["block"], e + ".block", sizes, 1, "a block dimension");
    if (k.contains("grid")) substitute_list(k["grid"], e + ".grid", sizes, 1, "a grid dimension");
    if (k.contains("dynamic_shared"))
      substitute(k["dynamic_shared"], e + ".dynamic_shared", sizes, 0, "a byte count");
  }
  if (!j.contains("params") || !j["params"].is_array()) return;
  for (std::size_t i = 0; i < j["params"].size(); ++i) {
    json& p = j["params"][i];
    if (!p.is_object()) continue;
    const std::string where = "params[" + std::to_string(i) + "]";
    if (p.contains("shape")) substitute_list(p["shape"], where + ".shape", sizes, 1, "a shape dimension");
    // "0x3fc00000" keeps its meaning: a scalar's bits.
    if (p.contains("value") && p["value"].is_string()) {
      const std::string t = p["value"].get<std::string>();
      if (!(t.size() >= 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')))
        substitute(p["value"], where + ".value", sizes, std::nullopt, "");
    }
    auto map_sizes = [&](json& m, const std::string& at) {
      if (!m.is_object()) return;
      for (const char* key : {"dims", "box", "strides"})
        if (m.contains(key))
          substitute_list(m[key], at + "." + key, sizes, 1,
                          std::string("a tensor map's ") + (std::string(key) == "strides" ? "stride" : "dimension"));
    };
    if (p.contains("tensor_map")) map_sizes(p["tensor_map"], where + ".tensor_map");
    if (p.contains("tensor_maps") && p["tensor_maps"].is_array())
      for (std::size_t k = 0; k < p["tensor_maps"].size(); ++k)
        map_sizes(p["tensor_maps"][k], where + ".tensor_maps[" + std::to_string(k) + "]");
  }
}


}  // namespace tileverify::spec_detail
