// Spec files: the entries of "params" (tensors, scalars, tensor maps,
// by-value structs) and the kernels' "args" checked against them.
#include "reader.hpp"

#include <algorithm>

namespace tileverify::spec_detail {

namespace {

// An output tensor's "init": what every element holds when the kernel
// starts. A number is rounded to the tensor's dtype as the host would store
// it; integer tensors take integers only.
void init_of(const json& v, const std::string& named, ParamSpec* ps) {
  const std::string rule = "\"init\" is a number, \"-inf\", \"inf\" or \"input\"";
  if (ps->role == Role::In)
    fail(named + " has \"init\" but is an input: only an \"out\" or \"inout\" tensor starts with a given value (an "
         "input's elements are its symbols " + ps->name + "[i])");
  const bool ints = !dtype_is_float(ps->dtype);
  if (v.is_string()) {
    const std::string t = v.get<std::string>();
    if (t == "input") {
      ps->init = TensorInit::Input;
      return;
    }
    if (t != "-inf" && t != "inf" && t != "+inf")
      fail(named + ": \"init\" is " + shown(v) + ": " + rule + " (the tensor's symbols " + ps->name + "[i])");
    if (ints)
      fail(named + ": \"init\" is " + shown(v) + " but the tensor holds integers (" + dtype_name(ps->dtype) +
           "): an integer tensor starts with an integer");
    ps->init = TensorInit::Value;
    ps->init_inf = t == "-inf" ? -1 : 1;
    return;
  }
  if (!v.is_number()) fail(named + ": \"init\" is " + shown(v) + ", " + what_kind(v) + ": " + rule);
  const std::int64_t bits = scalar_bits(v, ps->dtype, named, "\"init\"");
  ps->init = TensorInit::Value;
  switch (ps->dtype) {
    case DType::F32: ps->init_value = Rational::from_f32_bits(std::uint32_t(bits)); break;
    case DType::F64: ps->init_value = Rational::from_f64_bits(std::uint64_t(bits)); break;
    case DType::F16: ps->init_value = Rational::from_f16_bits(std::uint16_t(bits)); break;
    case DType::BF16: ps->init_value = Rational::from_bf16_bits(std::uint16_t(bits)); break;
    default:
      // scalar_bits gives a signed dtype's value and an unsigned one's bits:
      // an unsigned 64-bit value above 2^63 - 1 is refused (the evaluator
      // keeps integer data in 64 signed bits).
      if (!dtype_is_signed(ps->dtype) && bits < 0)
        fail(named + ": \"init\" " + shown(v) + " is above 9223372036854775807, the largest initial value of an "
             "integer tensor");
      ps->init_value = Rational(bits);
  }
}


// "struct": {"bytes": 24, "fields": [{"name": "M", "offset": 0, "dtype": "s32",
// "value": 256}, {"name": "ptr_A", "offset": 8, "tensor": "A"}, {"name":
// "tma_a", "offset": 128, "tensor_map": {...}}]}: a by-value struct
// parameter (CUTLASS's Params), field by field at byte offsets. A list of
// values fills consecutive elements (a stride tuple). Each field must be
// aligned to its size and inside the struct; fields may not overlap;
// bytes no field covers are undefined (a kernel that reads them reads an
// uninitialized value).
void struct_of(const json& j, const std::string& where, const std::string& pname, ParamSpec* ps) {
  if (!j.is_object())
    fail(field(where) + " is " + shown(j) + ": it must be an object like {\"fields\": [{\"name\": \"M\", \"offset\": 0, "
         "\"dtype\": \"s32\", \"value\": 256}]} (a by-value struct, field by field)");
  only_keys(j, field(where), {"bytes", "fields", "description"});
  ps->tensor = false;
  ps->is_struct = true;
  if (j.contains("bytes")) {
    std::uint64_t b = 0;
    std::string why = not_uint(j["bytes"], &b);
    if (why.empty() && (b == 0 || b > 32764)) why = "not from 1 to 32764 (the most a kernel's parameters hold)";
    if (!why.empty()) fail(field(where + ".bytes") + " is " + shown(j["bytes"]) + ": " + why);
    ps->struct_bytes = std::uint32_t(b);
  }
  if (!j.contains("fields") || !j["fields"].is_array())
    fail(field(where + ".fields") + (j.contains("fields") ? " is " + shown(j["fields"]) + ": it must be a list"
                                                          : " is missing: list the struct's fields (or [] for none read)"));
  std::set<std::string> names;
  const json& fs = j["fields"];
  for (std::size_t k = 0; k < fs.size(); ++k) {
    const json& f = fs[k];
    const std::string at = where + ".fields[" + std::to_string(k) + "]";
    if (!f.is_object()) fail(field(at) + " is " + shown(f) + ": a field is an object with \"name\" and \"offset\"");
    only_keys(f, field(at),
              {"name", "offset", "dtype", "value", "symbolic", "tensor", "tensor_map", "param", "description"});
    if (!f.contains("name") || !f.contains("offset")) fail(field(at) + " needs \"name\" and \"offset\" (in bytes)");
    ParamSpec fp;
    fp.name = pname + "." + text_of(f["name"], at + ".name", "the field");
    if (!names.insert(fp.name).second) fail(field(at + ".name") + " " + json_quoted(fp.name) + " is already a field's name");
    std::uint64_t off = 0;
    std::string why = not_uint(f["offset"], &off);
    if (why.empty() && off >= 32764) why = "past the most a kernel's parameters hold (32764 bytes)";
    if (!why.empty()) fail(field(at + ".offset") + " is " + shown(f["offset"]) + ": " + why);
    fp.offset = std::uint32_t(off);
    const int kinds =
        int(f.contains("dtype")) + int(f.contains("tensor")) + int(f.contains("tensor_map")) + int(f.contains("param"));
    if (kinds != 1)
      fail(field(at) + " ('" + fp.name + "') needs one of \"dtype\" (a scalar, with \"value\" or \"symbolic\"), "
           "\"param\" (a scalar entry of \"params\": the same value or symbol), \"tensor\" (a pointer to a tensor "
           "of \"params\", or null) and \"tensor_map\" (a CUtensorMap inside the struct)");
    if (f.contains("param")) {
      if (f.contains("value") || f.contains("symbolic")) fail(field(at) + " names a \"param\": it takes no \"value\"");
      fp.tensor = false;
      fp.same_as = text_of(f["param"], at + ".param", "a scalar entry of \"params\"");  // resolved in resolve_struct
      ps->fields.push_back(std::move(fp));
      continue;
    }
    if (f.contains("tensor_map")) {
      if (f.contains("value") || f.contains("symbolic")) fail(field(at) + " is a tensor map: it takes no \"value\"");
      tensor_map_of(f["tensor_map"], at + ".tensor_map", &fp);
      ps->fields.push_back(std::move(fp));
      continue;
    }
    if (f.contains("tensor")) {
      if (f.contains("value") || f.contains("symbolic")) fail(field(at) + " is a pointer: it takes no \"value\"");
      fp.tensor = false;
      fp.dtype = DType::U64;
      if (f["tensor"].is_null()) fp.null_pointer = true;
      else fp.pointee = text_of(f["tensor"], at + ".tensor", "a tensor of \"params\" (or null)");
      ps->fields.push_back(std::move(fp));
      continue;
    }
    fp.dtype = dtype_of(f["dtype"], at + ".dtype");
    fp.tensor = false;
    if (f.contains("symbolic")) {
      if (!f["symbolic"].is_boolean() || !f["symbolic"].get<bool>() || f.contains("value"))
        fail(field(at + ".symbolic") + " must be true, without \"value\" (a float field that stands for every value)");
      if (!dtype_is_float(fp.dtype))
        fail(field(at) + " ('" + fp.name + "') is \"symbolic\" but its dtype is " + dtype_name(fp.dtype) +
             ": only float fields can be symbolic");
      fp.symbolic = true;
      ps->fields.push_back(std::move(fp));
      continue;
    }
    if (!f.contains("value")) fail(field(at) + " ('" + fp.name + "') needs \"value\" (or \"symbolic\": true)");
    const json& v = f["value"];
    if (!v.is_array()) {
      fp.value = scalar_bits(v, fp.dtype, field(at + ".value"));
      ps->fields.push_back(std::move(fp));
      continue;
    }
    if (v.empty()) fail(field(at + ".value") + " is []: give at least one value");
    for (std::size_t e = 0; e < v.size(); ++e) {  // consecutive elements: name[e]
      ParamSpec ep = fp;
      ep.name = fp.name + "[" + std::to_string(e) + "]";
      const std::uint64_t o = off + e * dtype_bytes(fp.dtype);
      if (o >= 32764) fail(field(at + ".value") + " runs past the most a kernel's parameters hold (32764 bytes)");
      ep.offset = std::uint32_t(o);
      ep.value = scalar_bits(v[e], fp.dtype, field(at + ".value[" + std::to_string(e) + "]"));
      ps->fields.push_back(std::move(ep));
    }
  }

}

}  // namespace

ParamSpec param_of(const json& p, std::size_t i, std::set<std::string>* names) {
  std::string where = "params[" + std::to_string(i) + "]";
  if (!p.is_object()) fail(field(where) + " is " + shown(p) + ": each parameter is an object with \"name\" and \"dtype\"");
  if (p.contains("tensor_map")) {
    // A map takes its element type and default shape from its tensor.
    only_keys(p, field(where), {"name", "tensor_map", "description"});
    if (!p.contains("name")) fail(field(where) + " needs \"name\"");
  } else if (p.contains("tensor_maps")) {
    only_keys(p, field(where), {"name", "tensor_maps", "description"});
    if (!p.contains("name")) fail(field(where) + " needs \"name\"");
  } else if (p.contains("struct")) {
    only_keys(p, field(where), {"name", "struct", "description"});
    if (!p.contains("name")) fail(field(where) + " needs \"name\"");
  } else {
    only_keys(p, field(where),
              {"name", "dtype", "shape", "role", "value", "symbolic", "init", "tensor_map", "description"});
    if (!p.contains("name") || !p.contains("dtype"))
      fail(field(where) + " needs \"name\" and \"dtype\" (or \"tensor_map\" for a CUtensorMap parameter)");
  }
  ParamSpec ps;
  ps.name = text_of(p["name"], where + ".name", "the parameter");
  if (!names->insert(ps.name).second)
    fail(field(where + ".name") + " " + json_quoted(ps.name) + " is already the name of another parameter");
  if (p.contains("tensor_map")) {
    tensor_map_of(p["tensor_map"], where + ".tensor_map", &ps);
    return ps;
  }
  if (p.contains("tensor_maps")) {
    tensor_maps_of(p["tensor_maps"], where + ".tensor_maps", &ps);
    return ps;
  }
  if (p.contains("struct")) {
    struct_of(p["struct"], where + ".struct", ps.name, &ps);
    return ps;
  }
  ps.dtype = dtype_of(p["dtype"], where + ".dtype");
  std::string named = where + " ('" + ps.name + "')";
  if (p.contains("symbolic")) {
    if (!p["symbolic"].is_boolean())
      fail(field(where + ".symbolic") + " is " + shown(p["symbolic"]) + ": it must be true or false");
    ps.symbolic = p["symbolic"].get<bool>();
  }
  if (ps.symbolic) {
    // A symbol stands for every value; an integer scalar is a loop bound or
    // an index, which must be concrete (docs/architecture.md, structured CTAs).
    if (!dtype_is_float(ps.dtype))
      fail(named + " is \"symbolic\" but its dtype is " + dtype_name(ps.dtype) + ": only float scalars (f16, bf16, "
           "f32, f64) can be symbolic; integer scalars shape control flow and need a \"value\"");
    if (p.contains("value") || p.contains("shape") || p.contains("role") || p.contains("init"))
      fail(named + " is \"symbolic\" (a float scalar that stands for every value): it takes no \"value\", "
           "\"shape\", \"role\" or \"init\"");
    ps.tensor = false;
    return ps;
  }
  if (p.contains("value")) {
    if (p.contains("shape") || p.contains("role"))
      fail(named + " has a \"value\" (a scalar) and a \"shape\" or \"role\" (a tensor): give one or the other");
    if (p.contains("init")) fail(named + " is a scalar: \"init\" is for output tensors");
    ps.tensor = false;
    ps.value = scalar_bits(p["value"], ps.dtype, named);
    return ps;
  }
  if (!p.contains("shape") || !p.contains("role"))
    fail(named + " needs \"shape\" and \"role\" (a tensor), \"value\" (a scalar) or \"symbolic\": true (a float "
         "scalar that stands for every value)");
  ps.shape = shape_of(p["shape"], where + ".shape", ps.name);
  std::string role = text_of(p["role"], where + ".role", "\"in\", \"out\" or \"inout\"");
  if (role == "in") ps.role = Role::In;
  else if (role == "out") ps.role = Role::Out;
  else if (role == "inout") ps.role = Role::InOut;
  else fail(field(where + ".role") + " is " + json_quoted(role) + ": it must be \"in\", \"out\" or \"inout\"");
  if (p.contains("init")) init_of(p["init"], named, &ps);
  return ps;
}

// The tensors of "params" kernel k takes: those its "args" name, or without
// "args" every tensor of "params" that is not bound to a module variable.
bool bound_to_symbol(const KernelSpec& k, const std::string& tensor) {
  return std::any_of(k.symbols.begin(), k.symbols.end(), [&](const auto& kv) { return kv.second == tensor; });
}

namespace {

// A tensor map taken is its tensor taken (one memory: outputs are compared
// by tensor name, so a kernel that writes C only through a TMA store map
// over C takes C).
std::set<std::string> tensors_taken(const Spec& s, const KernelSpec& k) {
  std::set<std::string> out;
  for (const ParamSpec& p : s.params) {
    if (p.tensor_map || p.is_struct || p.map_array) {
      if (!k.args || std::any_of(k.args->begin(), k.args->end(), [&](const KernelArg& a) {
            return a.kind == KernelArg::Kind::Param && a.text == p.name;
          })) {
        if (p.tensor_map) out.insert(p.map_tensor);
        for (const ParamSpec& f : p.fields)  // a struct's maps and pointers, a map array's maps
          if (f.tensor_map) out.insert(f.map_tensor);
          else if (!f.pointee.empty()) out.insert(f.pointee);
      }
      continue;
    }
    if (!p.tensor) continue;
    bool bound = std::any_of(k.symbols.begin(), k.symbols.end(), [&](const auto& kv) { return kv.second == p.name; });
    bool named = k.args && std::any_of(k.args->begin(), k.args->end(), [&](const KernelArg& a) {
                   return a.kind == KernelArg::Kind::Param && a.text == p.name;
                 });
    if (k.args ? named : !bound) out.insert(p.name);
  }
  return out;
}

}  // namespace

// "args": every name is a "params" entry, a kernel takes an output tensor
// once (two arguments naming one output would be one memory on a GPU but
// two here), and both kernels take every output (outputs are compared by
// name: one that only one kernel writes has nothing to be compared with).
// Entries no kernel takes are allowed: a generator writes every argument of
// the source, and a compiler drops some (Triton's strides equal to 1).
void check_args(const Spec& s) {
  std::vector<const KernelSpec*> ks;
  for (const std::optional<KernelSpec>* k : {&s.ref, &s.opt})
    if (*k) ks.push_back(&**k);
  bool any_args = false;
  for (const KernelSpec* k : ks) {
    if (!k->args) continue;
    any_args = true;
    std::set<std::string> outputs;
    for (std::size_t i = 0; i < k->args->size(); ++i) {
      const KernelArg& a = (*k->args)[i];
      if (a.kind != KernelArg::Kind::Param) continue;
      const std::string at = field(k->entry + ".args[" + std::to_string(i) + "]");
      auto p = std::find_if(s.params.begin(), s.params.end(), [&](const ParamSpec& q) { return q.name == a.text; });
      if (p == s.params.end()) {
        std::string names;
        for (const ParamSpec& q : s.params) names += (names.empty() ? "" : ", ") + q.name;
        fail(at + " is " + json_quoted(a.text) + ": no entry of \"params\" has that name (" +
             (names.empty() ? std::string("\"params\" is empty") : "they are " + names) +
             "); use a number for a constant and null for a pointer the kernel never dereferences");
      }
      if (p->tensor && p->role != Role::In && !outputs.insert(p->name).second)
        fail(at + " gives the output '" + p->name + "' to " + json_quoted(k->entry) + " a second time: a kernel may "
             "take an output tensor once (aliased arguments are not modeled)");
    }
  }
  if (!any_args) return;
  if (ks.size() == 2) {
    const std::set<std::string> a = tensors_taken(s, *ks[0]), b = tensors_taken(s, *ks[1]);
    for (const ParamSpec& p : s.params) {
      if (!p.tensor || p.role == Role::In || a.count(p.name) == b.count(p.name)) continue;
      const KernelSpec& without = a.count(p.name) ? *ks[1] : *ks[0];
      const KernelSpec& with = a.count(p.name) ? *ks[0] : *ks[1];
      fail(field(without.entry + (without.args ? ".args" : "")) + ": the output '" + p.name + "' is taken by \"" +
           with.entry + "\" only: outputs are compared by name, so both kernels must take every output tensor of "
           "\"params\"");
    }
    // Nothing to compare would make any pair "equivalent".
    if (std::none_of(s.params.begin(), s.params.end(), [&](const ParamSpec& p) {
          return p.tensor && p.role != Role::In && a.count(p.name);
        }))
      fail(field(ks[0]->entry + (ks[0]->args ? ".args" : "")) + " and " + field(ks[1]->entry + (ks[1]->args ? ".args" : "")) +
           " take no output tensor (role \"out\" or \"inout\"): there would be nothing to compare");
  }
}


}  // namespace tileverify::spec_detail
