// Spec files: tensor maps (cuTensorMapEncodeTiled's arguments) and the
// layout of by-value structs, resolved against the tensors of "params".
#include "reader.hpp"

#include "tensor_map.hpp"

#include <algorithm>

namespace tileverify::spec_detail {

// ------------------------------------------------------------ tensor maps

namespace {

// A list of 1 to 5 non-negative integers (a tensor map's dims, strides, box,
// element strides), each at most `most`; the ranges cuTensorMapEncodeTiled
// sets are checked with the other rules of the map (tensor_map.cpp), once
// the tensor's dtype and shape are known.
std::vector<std::uint64_t> map_list(const json& v, const std::string& name, std::uint64_t most, const std::string& rule) {
  const bool strides = name.size() >= 8 && name.compare(name.size() - 8, 8, ".strides") == 0;
  const std::string like = strides ? "a list of 1 to 4 integers, the byte strides of dimensions 1 to rank - 1 (leave "
                                      "it out for a 1-dimensional map)"
                                    : "a list of 1 to 5 integers, innermost dimension first";
  if (!v.is_array() || v.empty() || v.size() > internal::kTensorMapMaxRank - (strides ? 1 : 0))
    fail(field(name) + " is " + shown(v) + ": it must be " + like + " (a tensor map has 1 to 5 dimensions, "
         "cuTensorMapEncodeTiled)");
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::uint64_t u = 0;
    std::string why = not_uint(v[i], &u);
    if (why.empty() && u > most) why = "too large";
    if (!why.empty())
      fail(field(name + "[" + std::to_string(i) + "]") + " is " + shown(v[i]) + ", " + why + ": " + rule +
           " (cuTensorMapEncodeTiled)");
    out.push_back(u);
  }
  return out;
}

// One of a mode's names ("none", "32B", ...), by the enum's order.
template <class E>
E mode_of(const json& v, const std::string& name, std::initializer_list<const char*> names, const std::string& what) {
  std::string list;
  for (const char* n : names) list += std::string(list.empty() ? "" : ", ") + "\"" + n + "\"";
  if (v.is_string()) {
    std::size_t i = 0;
    for (const char* n : names) {
      if (v.get<std::string>() == n) return E(i);
      ++i;
    }
  }
  fail(field(name) + " is " + shown(v) + ": " + what + " is one of " + list + " (cuTensorMapEncodeTiled)");
}

}  // namespace

// "tensor_map": {"tensor": "A", "box": [64, 64], ...}: what the host passes
// to cuTensorMapEncodeTiled. The tensor's dtype and the defaults that depend
// on its shape are filled in, and the map checked, in resolve_maps.
void tensor_map_of(const json& j, const std::string& where, ParamSpec* ps) {
  if (!j.is_object())
    fail(field(where) + " is " + shown(j) + ": it must be an object like {\"tensor\": \"A\", \"box\": [64, 64]} "
         "(the arguments of cuTensorMapEncodeTiled)");
  only_keys(j, field(where), {"tensor", "box", "dims", "strides", "element_strides", "interleave", "swizzle",
                              "l2_promotion", "oob_fill", "description"});
  for (const char* key : {"tensor", "box"})
    if (!j.contains(key))
      fail(field(where) + " needs \"" + key + "\" (" +
           (std::string(key) == "tensor" ? "the tensor of \"params\" it views" : "the box one TMA copy moves, innermost first") +
           ")");
  ps->tensor = false;
  ps->tensor_map = true;
  ps->map_tensor = text_of(j["tensor"], where + ".tensor", "a tensor of \"params\" (the memory the map views)");
  TensorMap& m = ps->map;
  for (std::uint64_t b : map_list(j["box"], where + ".box", 0xffffffffu, "a box dimension must be from 1 to 256"))
    m.box.push_back(std::uint32_t(b));
  if (j.contains("dims"))
    m.dims = map_list(j["dims"], where + ".dims", UINT64_MAX, "a global dimension must be from 1 to 2^32");
  if (j.contains("strides"))
    m.strides = map_list(j["strides"], where + ".strides", UINT64_MAX,
                         "a global stride must be a multiple of 16 bytes, below 2^40");
  if (j.contains("element_strides"))
    for (std::uint64_t e : map_list(j["element_strides"], where + ".element_strides", 0xffffffffu,
                                    "an element stride must be from 1 to 8"))
      m.element_strides.push_back(std::uint32_t(e));
  if (j.contains("interleave"))
    m.interleave = mode_of<TmaInterleave>(j["interleave"], where + ".interleave", {"none", "16B", "32B"},
                                          "the interleaved layout");
  if (j.contains("swizzle"))
    m.swizzle = mode_of<TmaSwizzle>(j["swizzle"], where + ".swizzle", {"none", "32B", "64B", "128B"},
                                    "the shared-memory swizzle");
  if (j.contains("l2_promotion"))
    m.l2_promotion = mode_of<TmaL2Promotion>(j["l2_promotion"], where + ".l2_promotion",
                                             {"none", "64B", "128B", "256B"}, "the L2 promotion");
  if (j.contains("oob_fill"))
    m.oob_fill = mode_of<TmaOobFill>(j["oob_fill"], where + ".oob_fill", {"zero", "nan"},
                                     "what out-of-bound elements read as (\"nan\": NAN_REQUEST_ZERO_FMA)");
  if (j.contains("description")) text_of(j["description"], where + ".description", "what the map is for", true);
}

// "tensor_maps": [{...}, ...]: CUtensorMaps the host encoded and copied to
// global memory one after another (cudaMemcpy of a CUtensorMap array), for a
// `const CUtensorMap*` parameter: map k at byte 128 k, each map read as
// "tensor_map" reads one. 4096 maps is far more than a kernel names.
constexpr std::size_t kMaxMapArray = 4096;
void tensor_maps_of(const json& j, const std::string& where, ParamSpec* ps) {
  if (!j.is_array() || j.empty() || j.size() > kMaxMapArray)
    fail(field(where) + " is " + shown(j) + ": it must be a list of 1 to " + std::to_string(kMaxMapArray) +
         " tensor maps, like [{\"tensor\": \"A\", \"box\": [64, 64]}]: the CUtensorMaps a `const CUtensorMap*` "
         "parameter points to, in order");
  ps->tensor = false;
  ps->map_array = true;
  for (std::size_t k = 0; k < j.size(); ++k) {
    ParamSpec f;
    f.name = ps->name + "[" + std::to_string(k) + "]";
    f.offset = std::uint32_t(128 * k);
    tensor_map_of(j[k], where + "[" + std::to_string(k) + "]", &f);
    ps->fields.push_back(std::move(f));
  }
}

// The entry of "params" with that name (names are unique), or null.
const ParamSpec* param_named(const Spec& s, const std::string& name) {
  for (const ParamSpec& p : s.params)
    if (p.name == name) return &p;
  return nullptr;
}

namespace {

// Every map's tensor: a tensor entry of "params", whose dtype the map takes;
// the defaults (dims: the shape reversed, strides: packed, element strides:
// 1); then cuTensorMapEncodeTiled's rules, each error naming the field.
void resolve_map(Spec& s, ParamSpec& p, const std::string& where) {
  const ParamSpec* t = param_named(s, p.map_tensor);
  if (!t || !t->tensor) {
    std::string tensors, nearest;
    std::size_t best = 3;
    for (const ParamSpec& q : s.params) {
      if (!q.tensor) continue;
      tensors += (tensors.empty() ? "" : ", ") + q.name;
      if (edit_distance(q.name, p.map_tensor) < best) {
        best = edit_distance(q.name, p.map_tensor);
        nearest = q.name;
      }
    }
    fail(field(where + ".tensor") + " is " + json_quoted(p.map_tensor) + ": " +
         (t ? "that entry of \"params\" is a " +
                  std::string(t->tensor_map  ? "tensor map"
                              : t->map_array ? "list of tensor maps"
                              : t->is_struct ? "struct"
                                             : "scalar") +
                  ", not a tensor"
            : "no tensor of \"params\" has that name") +
         (nearest.empty() || t ? "" : " (did you mean \"" + nearest + "\"?)") + "; a map views a tensor entry (" +
         (tensors.empty() ? std::string("\"params\" has none") : "they are " + tensors) + ")");
  }
  p.dtype = t->dtype;
  TensorMap& m = p.map;
  if (m.dims.empty()) m.dims.assign(t->shape.rbegin(), t->shape.rend());
  if (m.dims.size() > internal::kTensorMapMaxRank)
    fail(field(where) + ": '" + t->name + "' has " + std::to_string(t->shape.size()) + " dimensions and the map has "
         "no \"dims\": a tensor map has 1 to 5 dimensions; give \"dims\" (innermost first) to view it with fewer "
         "(cuTensorMapEncodeTiled)");
  const bool packed = m.strides.empty();
  if (packed && m.dims.size() > 1) m.strides = internal::packed_strides(m.dims, dtype_bytes(t->dtype));
  if (m.element_strides.empty()) m.element_strides.assign(m.dims.size(), 1);
  TensorArg ta{t->name, t->dtype, t->shape, t->role};
  if (auto problem = internal::tensor_map_problem(m, ta))
    fail(field(where + "." + problem->field) + " " + problem->message +
         (packed && problem->field.rfind("strides", 0) == 0
              ? " (\"strides\" not given: the packed strides of dims " + internal::list_text(m.dims) + ")"
              : ""));
}

}  // namespace

// The bytes a struct field takes.
std::uint32_t field_bytes(const ParamSpec& f) {
  if (f.tensor_map) return 128;
  if (!f.pointee.empty() || f.null_pointer) return 8;
  return std::uint32_t(dtype_bytes(f.dtype));
}

namespace {

// A struct's fields in offset order, each aligned, inside and not
// overlapping the one before (after resolve_struct gave "param" fields
// their dtypes).
void check_layout(ParamSpec* ps, const std::string& where) {
  std::sort(ps->fields.begin(), ps->fields.end(), [](const ParamSpec& a, const ParamSpec& b) { return a.offset < b.offset; });
  for (std::size_t k = 0; k < ps->fields.size(); ++k) {
    const ParamSpec& f = ps->fields[k];
    const std::uint32_t size = field_bytes(f);
    if (f.offset % std::min<std::uint32_t>(size, 8) != 0)
      fail(field(where) + ": field '" + f.name + "' at byte " + std::to_string(f.offset) + " is not aligned to its " +
           std::to_string(size) + " bytes (" + (f.tensor_map ? "a CUtensorMap is 64-byte aligned" : "as C++ lays it out") + ")");
    if (f.tensor_map && f.offset % 64 != 0)
      fail(field(where) + ": the tensor map '" + f.name + "' at byte " + std::to_string(f.offset) +
           " is not 64-byte aligned (CUtensorMap is alignas(64))");
    if (k > 0 && ps->fields[k - 1].offset + field_bytes(ps->fields[k - 1]) > f.offset)
      fail(field(where) + ": fields '" + ps->fields[k - 1].name + "' and '" + f.name + "' overlap (bytes " +
           std::to_string(ps->fields[k - 1].offset) + " and " + std::to_string(f.offset) + ")");
    if (ps->struct_bytes && f.offset + size > ps->struct_bytes)
      fail(field(where) + ": field '" + f.name + "' (bytes " + std::to_string(f.offset) + " to " +
           std::to_string(f.offset + size - 1) + ") is past the struct's " + std::to_string(ps->struct_bytes) + " bytes");
  }
}

// A struct's pointer fields name tensors of "params"; its maps are resolved
// as the parameters' maps are.
void resolve_struct(Spec& s, ParamSpec& p, const std::string& where) {
  for (std::size_t k = 0; k < p.fields.size(); ++k) {
    ParamSpec& f = p.fields[k];
    const std::string at = where + ".fields['" + f.name + "']";
    if (f.tensor_map) {
      resolve_map(s, f, at + ".tensor_map");
      continue;
    }
    if (!f.same_as.empty()) {
      const ParamSpec* q = param_named(s, f.same_as);
      if (!q || q->tensor || q->tensor_map || q->is_struct || q->map_array)
        fail(field(at + ".param") + " is " + json_quoted(f.same_as) + ": " +
             (q ? std::string("that entry of \"params\" is not a scalar") : "no entry of \"params\" has that name") +
             "; a \"param\" field holds a scalar entry of \"params\" (a value or a symbolic float)");
      f.dtype = q->dtype;
      f.value = q->value;
      f.symbolic = q->symbolic;
      continue;
    }
    if (f.pointee.empty()) continue;
    const ParamSpec* t = param_named(s, f.pointee);
    if (!t || !t->tensor)
      fail(field(at + ".tensor") + " is " + json_quoted(f.pointee) + ": " +
           (t ? std::string("that entry of \"params\" is not a tensor") : "no tensor of \"params\" has that name") +
           "; a pointer field points to a tensor entry of \"params\"");
  }
}

}  // namespace

void resolve_maps(Spec& s) {
  for (std::size_t i = 0; i < s.params.size(); ++i) {
    ParamSpec& p = s.params[i];
    if (p.tensor_map) resolve_map(s, p, "params[" + std::to_string(i) + "].tensor_map");
    if (p.map_array)
      for (std::size_t k = 0; k < p.fields.size(); ++k)
        resolve_map(s, p.fields[k], "params[" + std::to_string(i) + "].tensor_maps[" + std::to_string(k) + "]");
    if (p.is_struct) {
      resolve_struct(s, p, "params[" + std::to_string(i) + "].struct");
      check_layout(&p, "params[" + std::to_string(i) + "].struct");
    }
  }
}

}  // namespace tileverify::spec_detail
