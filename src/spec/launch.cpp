// Spec files: the launch of one kernel of a spec, checked against its PTX.
#include "reader.hpp"

#include <algorithm>

namespace tileverify {

namespace fs = std::filesystem;
using namespace spec_detail;

// ------------------------------------------------------------ launches
//
// What a spec alone cannot check, because it needs the PTX: the count and
// widths of a kernel's "args", the type a number converts to, the block
// against .reqntid and .maxntid. launch_for checks them once the kernel is
// lowered, with messages that name the spec file and key like the others.

namespace {

std::string ptx_type(DType t) { return std::string(".") + dtype_name(t); }
// ".u64", or ".b8[128]" for a by-value array (a CUtensorMap).
std::string ptx_type(const ParamDecl& d) {
  return d.array_bytes ? ".b8[" + std::to_string(d.array_bytes) + "]" : ptx_type(d.dtype);
}

// "x_ptr (.u64), n (.u32)": a kernel's PTX parameters, for messages.
std::string ptx_params(const Program& p) {
  if (p.params.empty()) return "none";
  std::string out;
  for (const ParamDecl& d : p.params) out += (out.empty() ? "" : ", ") + d.name + " (" + ptx_type(d) + ")";
  return out;
}

std::string dims_text(const std::array<std::uint32_t, 3>& d) {
  return std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]);
}

std::string entry_of(const KernelSpec& k) { return k.entry.empty() ? std::string("kernel") : k.entry; }

// The block: the spec's, which must be .reqntid where the kernel has one and
// within .maxntid (a launch outside them fails on the GPU), or .reqntid when
// the spec gives none. .maxntid bounds the threads in all: nvcc writes
// __launch_bounds__(256) as .maxntid 256, 1, 1, and a 16 x 16 block of such
// a kernel launches.
Dim3 block_for(const KernelSpec& k, const Program& p) {
  const std::string what = entry_of(k);
  const auto& req = p.reqntid;
  const auto& max = p.maxntid;
  if (k.block.x == 0) {
    if (req[0] == 0)
      fail(field(what) + " needs \"block\": the PTX of '" + p.name + "' has no .reqntid to take it from");
    return Dim3{req[0], req[1], req[2]};
  }
  const Dim3& b = k.block;
  if (req[0] != 0 && (b.x != req[0] || b.y != req[1] || b.z != req[2]))
    fail(field(what + ".block") + " " + dim3_text(b) + " is not the block '" + p.name + "' requires: its .reqntid is " +
         dims_text(req) + ", and a launch with another block fails (leave \"block\" out to take .reqntid)");
  const std::uint64_t most = std::uint64_t(max[0]) * max[1] * max[2];
  if (most != 0 && b.count() > most)
    fail(field(what + ".block") + " " + dim3_text(b) + " has " + std::to_string(b.count()) + " threads, more than the " +
         std::to_string(most) + " of the .maxntid " + dims_text(max) + " of '" + p.name +
         "' (its __launch_bounds__): a launch with more threads fails");
  return b;
}

// The cluster: the spec's, which must be the kernel's .reqnctapercluster
// where it has one (a launch with another fails on the GPU), or that one
// when the spec gives none (as <<<...>>> runs a __cluster_dims__ kernel);
// the grid must be a whole number of them.
void cluster_for(const KernelSpec& k, const Program& p, const Launch& l) {
  const auto& req = p.reqnctapercluster;
  if (req[0] == 0) return;
  const Dim3 want{req[0], req[1] ? req[1] : 1, req[2] ? req[2] : 1};
  const std::string what = entry_of(k);
  const std::string name = k.cluster ? what + ".cluster" : "cluster";
  if (l.cluster.count() != 1 && (l.cluster.x != want.x || l.cluster.y != want.y || l.cluster.z != want.z))
    fail(field(name) + " " + dim3_text(l.cluster) + " is not the cluster '" + p.name +
         "' requires: its .reqnctapercluster is " + dims_text(req) +
         ", and a launch with another cluster fails (leave \"cluster\" out to take .reqnctapercluster)");
  cluster_fits(want, k.cluster ? field(name) : "the .reqnctapercluster of '" + k.kernel + "'", l.grid,
               k.grid ? what + ".grid" : "grid");
}

TensorArg tensor_of(const ParamSpec& p) {
  TensorArg t{p.name, p.dtype, p.shape, p.role};
  t.init = p.init;
  t.init_value = p.init_value;
  t.init_inf = p.init_inf;
  return t;
}

// A tensor map's argument carries its tensor (spec_of checked that it is
// one), so that the evaluator makes one memory of the tensor and its maps.
LaunchArg arg_of(const Spec& s, const ParamSpec& p) {
  if (p.is_struct) {
    std::vector<LaunchArg::Field> layout;
    std::vector<LaunchArg> fields;
    for (const ParamSpec& f : p.fields) {
      layout.push_back(LaunchArg::Field{f.name, f.offset, field_bytes(f), f.dtype});
      if (f.null_pointer) {
        fields.push_back(LaunchArg::of_null());
      } else if (!f.pointee.empty()) {
        const ParamSpec* t = param_named(s, f.pointee);
        fields.push_back(LaunchArg::of_tensor(t ? tensor_of(*t) : TensorArg{f.pointee, DType::F32, {}}));
      } else if (!f.same_as.empty()) {
        const ParamSpec* q = param_named(s, f.same_as);
        fields.push_back(q ? arg_of(s, *q) : arg_of(s, f));
      } else {
        fields.push_back(arg_of(s, f));
      }
    }
    return LaunchArg::of_struct(p.struct_bytes, std::move(layout), std::move(fields));
  }
  if (p.tensor_map) {
    const ParamSpec* t = param_named(s, p.map_tensor);
    return LaunchArg::of_tensor_map(t ? tensor_of(*t) : TensorArg{p.map_tensor, p.dtype, {}}, p.map);
  }
  if (p.map_array) {
    std::vector<LaunchArg> maps;
    for (const ParamSpec& f : p.fields) maps.push_back(arg_of(s, f));
    return LaunchArg::of_map_array(p.name, std::move(maps));
  }
  if (p.tensor) return LaunchArg::of_tensor(tensor_of(p));
  if (p.symbolic) return LaunchArg::of_symbol(p.name, p.dtype);
  return LaunchArg::of_scalar(p.value);
}

// Whether a tensor map or a by-value struct names the tensor (it is then
// passed through them, not as an argument of its own in "params" order).
bool viewed_by_map(const Spec& s, const std::string& tensor) {
  return std::any_of(s.params.begin(), s.params.end(), [&](const ParamSpec& p) {
    return (p.tensor_map && p.map_tensor == tensor) ||
           std::any_of(p.fields.begin(), p.fields.end(), [&](const ParamSpec& f) {
             return (f.tensor_map && f.map_tensor == tensor) || f.pointee == tensor;
           });
  });
}

// A CUtensorMap is passed by value, as the 128-byte array nvcc and Triton
// declare (.param .align 64 .b8 name[128]; nvcc aligns it to 128): a map
// given for any other parameter, or anything else for such an array, would
// make the kernel read a descriptor from a pointer or a pointer from a
// descriptor.
constexpr std::uint64_t kTensorMapBytes = 128;
bool map_param(const ParamDecl& d) { return d.array_bytes == kTensorMapBytes; }

// A scalar for a by-value struct of its size: nvcc passes a __half or
// __nv_bfloat16 (a struct of one 16-bit field) as .param .align 2 .b8 p[2].
bool small_struct_scalar(const ParamSpec& q, const ParamDecl& d) {
  return d.array_bytes && !q.is_struct && !q.tensor && !q.tensor_map && !q.map_array && d.array_bytes == dtype_bytes(q.dtype);
}

// The argument for a struct parameter given a scalar of its size: a struct of
// that one field.
LaunchArg as_struct(const Spec& s, const ParamSpec& q, const ParamDecl& d) {
  return LaunchArg::of_struct(d.array_bytes, {LaunchArg::Field{q.name, 0, d.array_bytes, q.dtype}}, {arg_of(s, q)});
}

void check_map_param(const std::string& at, const ParamSpec& q, const ParamDecl& d) {
  if (q.is_struct) {
    if (!d.array_bytes)
      fail(at + " is the struct '" + q.name + "', passed by value, but the parameter is " +
           (d.pointer ? "a pointer" : "a scalar") + " (a by-value struct is .param .b8 " + d.name + "[N])");
    if (q.struct_bytes && q.struct_bytes != d.array_bytes)
      fail(at + " is the struct '" + q.name + "' of " + std::to_string(q.struct_bytes) + " bytes (\"bytes\"), but the "
           "parameter has " + std::to_string(d.array_bytes) + " (sizeof the kernel's struct)");
    for (const ParamSpec& f : q.fields)
      if (std::uint64_t(f.offset) + field_bytes(f) > d.array_bytes)
        fail(at + ": field '" + f.name + "' (bytes " + std::to_string(f.offset) + " to " +
             std::to_string(f.offset + field_bytes(f) - 1) + ") is past the parameter's " +
             std::to_string(d.array_bytes) + " bytes");
    return;
  }
  if (q.map_array) {
    // `const CUtensorMap*`: a 64-bit pointer parameter.
    if (d.array_bytes || dtype_bytes(d.dtype) != 8)
      fail(at + " is the tensor maps '" + q.name + "', a pointer to CUtensorMaps in global memory (const "
           "CUtensorMap*), but the parameter is " +
           (d.array_bytes ? "a by-value array of " + std::to_string(d.array_bytes) + " bytes" +
                                (map_param(d) ? ": a CUtensorMap passed by value (const __grid_constant__ CUtensorMap) "
                                                "is a \"tensor_map\" entry of \"params\""
                                              : std::string())
                          : "a scalar of " + std::to_string(dtype_bytes(d.dtype) * 8) + " bits, not a 64-bit pointer"));
    return;
  }
  if (small_struct_scalar(q, d)) return;
  if (d.array_bytes && !map_param(d))
    fail(at + " is the " + (q.tensor_map ? "tensor map '" + q.name + "'" : q.tensor ? "tensor '" + q.name + "'" : "scalar '" + q.name + "'") +
         ", but the parameter is a by-value struct of " + std::to_string(d.array_bytes) +
         " bytes: give a \"struct\" entry of \"params\" with its fields");
  if (q.tensor_map && !map_param(d))
    fail(at + " is the tensor map '" + q.name + "', a CUtensorMap passed by value, but the parameter is " +
         (d.array_bytes ? "an array of " + std::to_string(d.array_bytes) + " bytes"
                        : std::string(d.pointer ? "a pointer" : "a scalar")) +
         ": a tensor map parameter is .param .b8 " + d.name + "[128] (const __grid_constant__ CUtensorMap)");
  if (!q.tensor_map && map_param(d))
    fail(at + " is the " + (q.tensor ? "tensor '" + q.name + "', a pointer," : "scalar '" + q.name + "',") +
         " but the parameter is a 128-byte array, a CUtensorMap passed by value (const __grid_constant__ "
         "CUtensorMap): give a \"tensor_map\" entry of \"params\" for it (or a \"struct\" for another struct of 128 bytes)");
}

// The launch without the PTX's checks: block, grid, CTA and the bindings;
// with `params` as the arguments when the kernel has no "args".
Launch plain_launch(const Spec& s, const KernelSpec& k) {
  Launch l;
  l.block = k.block;
  l.grid = k.grid ? *k.grid : s.grid;
  l.cta = s.cta;
  l.cluster = k.cluster ? *k.cluster : s.cluster;
  for (const auto& binding : k.symbols) {
    const ParamSpec* q = param_named(s, binding.second);
    if (q && q->tensor) l.symbols[binding.first] = tensor_of(*q);
  }
  // A tensor a map views is passed through the map: in "params" order it is
  // no argument of its own ("args" can give it as a pointer too).
  if (!k.args)
    for (const ParamSpec& q : s.params)
      if (!(q.tensor && (bound_to_symbol(k, q.name) || viewed_by_map(s, q.name)))) l.args.push_back(arg_of(s, q));
  return l;
}

void add_args(const Spec& s, const KernelSpec& k, const Program& p, Launch& l) {
  const std::string what = entry_of(k);
  if (!k.args) {
    std::string viewed;
    for (const ParamSpec& q : s.params)
      if (q.tensor && viewed_by_map(s, q.name) && !bound_to_symbol(k, q.name))
        viewed += (viewed.empty() ? "" : ", ") + q.name;
    if (l.args.size() != p.params.size())
      fail(field("params") + " gives " + std::to_string(l.args.size()) + " arguments but '" + p.name + "' has " +
           std::to_string(p.params.size()) + " PTX parameters: " + ptx_params(p) +
           "; a kernel whose parameters are not \"params\" in order takes its own list, \"args\" in " + field(what) +
           (viewed.empty() ? "" : " (" + viewed + ": a tensor a \"tensor_map\" views is passed through its map, "
                                  "not as an argument of its own, unless \"args\" names it)"));
    std::size_t i = 0;
    for (const ParamSpec& q : s.params)
      if (!(q.tensor && (bound_to_symbol(k, q.name) || viewed_by_map(s, q.name)))) {
        const std::size_t at = i;
        const ParamDecl& d = p.params[i++];
        check_map_param(field("params") + " entry '" + q.name + "' (the PTX parameter " + d.name + ", " +
                            ptx_type(d) + ")",
                        q, d);
        if (q.is_struct) l.args[at].struct_bytes = d.array_bytes;
        if (small_struct_scalar(q, d)) l.args[at] = as_struct(s, q, d);
      }
    return;
  }
  const std::vector<KernelArg>& args = *k.args;
  if (args.size() != p.params.size())
    fail(field(what + ".args") + " has " + std::to_string(args.size()) + " entries but '" + p.name + "' has " +
         std::to_string(p.params.size()) + " PTX parameters: " + ptx_params(p) + "; give one entry per parameter, in order");
  for (std::size_t i = 0; i < args.size(); ++i) {
    const KernelArg& a = args[i];
    const ParamDecl& d = p.params[i];
    const std::size_t bits = dtype_bytes(d.dtype) * 8;
    const std::string at = field(what + ".args[" + std::to_string(i) + "]") + " (the PTX parameter " + d.name + ", " +
                           ptx_type(d) + ")";
    if (map_param(d) && a.kind != KernelArg::Kind::Param)
      fail(at + " is " + (a.kind == KernelArg::Kind::Null ? std::string("null") : "the number " + a.text) +
           ", but the parameter is a 128-byte array, a CUtensorMap passed by value (const __grid_constant__ "
           "CUtensorMap): name a \"tensor_map\" entry of \"params\" for it");
    if (d.array_bytes && a.kind != KernelArg::Kind::Param)
      fail(at + " is " + (a.kind == KernelArg::Kind::Null ? std::string("null") : "the number " + a.text) +
           ", but the parameter is a by-value struct of " + std::to_string(d.array_bytes) +
           " bytes: name a \"struct\" entry of \"params\" for it");
    switch (a.kind) {
      case KernelArg::Kind::Null:
        if (bits != 64) fail(at + " is null, a pointer, but the parameter has " + std::to_string(bits) + " bits, not 64");
        l.args.push_back(LaunchArg::of_null());
        break;
      case KernelArg::Kind::Number: {
        // A PTX integer parameter's type says nothing of the source's
        // signedness (nvcc and Triton declare an int as .u32), so a negative
        // number is read as the signed type of the parameter's width: the
        // bits a "params" s32 value of -1 gives.
        const json v = json::parse(a.text);
        DType t = d.dtype;
        if (!dtype_is_float(t) && v.is_number_integer() && !v.is_number_unsigned())
          t = bits == 8 ? DType::S8 : bits == 16 ? DType::S16 : bits == 32 ? DType::S32 : DType::S64;
        l.args.push_back(LaunchArg::of_scalar(scalar_bits(v, t, at, "the number")));
        break;
      }
      case KernelArg::Kind::Param: {
        const ParamSpec* q = param_named(s, a.text);
        if (!q) fail(at + " names '" + a.text + "', which is not in \"params\"");  // check_args refused it already
        check_map_param(at, *q, d);
        if (q->tensor_map || q->is_struct || q->map_array) {
          l.args.push_back(arg_of(s, *q));
          if (q->is_struct) l.args.back().struct_bytes = d.array_bytes;
          break;
        }
        if (small_struct_scalar(*q, d)) {
          l.args.push_back(as_struct(s, *q, d));
          break;
        }
        if (q->tensor && bits != 64)
          fail(at + " is the tensor '" + q->name + "', a pointer, but the parameter has " + std::to_string(bits) +
               " bits, not 64");
        if (!q->tensor && dtype_bytes(q->dtype) * 8 != bits)
          fail(at + " is the scalar '" + q->name + "' (" + dtype_name(q->dtype) + ", " +
               std::to_string(dtype_bytes(q->dtype) * 8) + " bits), but the parameter has " + std::to_string(bits) +
               " bits: give a scalar of its width, or a number");
        l.args.push_back(arg_of(s, *q));
        break;
      }
    }
  }
}

}  // namespace

LaunchResult launch_for(const Spec& s, const KernelSpec& k, const Program& p) {
  LaunchResult r;
  try {
    Launch l = plain_launch(s, k);
    l.block = block_for(k, p);
    cluster_for(k, p, l);
    add_args(s, k, p, l);
    r.launch = std::move(l);
  } catch (const SpecError& e) {
    r.error = (s.path.empty() ? std::string("the spec") : s.path) + ": " + e.message;
  } catch (const json::exception& e) {
    r.error = (s.path.empty() ? std::string("the spec") : s.path) + ": an \"args\" number could not be read (internal "
              "error " + std::to_string(e.id) + " of the JSON reader; please report it with the spec file)";
  }
  return r;
}

Launch launch_of(const Spec& s, const KernelSpec& k) {
  // Without "args" and with a block, the spec alone gives the launch (the
  // .reqntid and .maxntid checks are launch_for's).
  if (!k.args && k.block.x != 0) return plain_launch(s, k);
  // Only a regular file is read here: this runs on any spec (the fuzzer's
  // too), and a path such as /dev/zero would never end.
  std::error_code ec;
  if (fs::is_regular_file(k.ptx, ec)) {
    KernelLoad loaded = load_kernel(k);
    if (loaded.program) {
      LaunchResult r = launch_for(s, k, *loaded.program);
      if (r.launch) return std::move(*r.launch);
    }
  }
  Launch l;
  l.block = Dim3{0, 0, 0};
  l.grid = k.grid ? *k.grid : s.grid;
  l.cta = s.cta;
  return l;
}

}  // namespace tileverify
