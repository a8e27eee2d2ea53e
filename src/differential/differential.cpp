// differential_test: a spec's two kernels on a GPU, on generated inputs,
// compared with the oracles (include/tileverify/differential.hpp says what
// the verdicts mean; docs/cuda.md, "Differential runs", how to read them).
#include "tileverify/differential.hpp"

#include "tileverify/cuda.hpp"

#include "../equiv/grid.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tileverify {

namespace {

// One kernel of the spec, ready to launch: its lowered program (for the
// parameters and launch bounds), its PTX text and the spec's launch.
struct Prepared {
  std::string role;  // "ref" / "opt"
  const KernelSpec* spec = nullptr;
  Program program;
  std::string ptx;
  Launch launch;
  // Loaded on the first run (the JIT compiles the PTX once per check).
  std::optional<cuda::Module> module{};
  std::optional<cuda::Function> function{};
};

bool prepare(const Spec& s, const KernelSpec& k, const std::string& role, Prepared* out, std::string* why) {
  KernelLoad loaded = load_kernel(k);
  if (!loaded.program) {
    *why = role + ": " + loaded.error;
    return false;
  }
  tileverify::LaunchResult l = launch_for(s, k, *loaded.program);
  if (!l.launch) {
    *why = role + ": " + l.error;
    return false;
  }
  std::ifstream in(k.ptx, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) {
    *why = role + ": cannot read " + k.ptx;
    return false;
  }
  out->role = role;
  out->spec = &k;
  out->program = std::move(*loaded.program);
  out->ptx = text.str();
  out->launch = std::move(*l.launch);
  return true;
}

// The tensor an argument holds or a tensor map views (none: a scalar or null).
const TensorArg* tensor_of(const LaunchArg& a) {
  if (a.null_pointer) return nullptr;
  if (a.is_tensor || a.is_tensor_map) return &a.tensor;
  return nullptr;
}

// A launch's arguments with each by-value struct, and each pointer to tensor
// maps, replaced by its fields: what holds tensors, maps and scalars.
std::vector<const LaunchArg*> leaves(const Launch& l) {
  std::vector<const LaunchArg*> out;
  for (const LaunchArg& a : l.args)
    if (a.is_struct || a.is_map_array)
      for (const LaunchArg& f : a.fields) out.push_back(&f);
    else
      out.push_back(&a);
  return out;
}

// The element type of the tensor `name` as the kernel's launch gives it.
DType tensor_dtype(const Launch& l, const std::string& name) {
  for (const LaunchArg* a : leaves(l))
    if (const TensorArg* t = tensor_of(*a); t && t->name == name) return t->dtype;
  return DType::F32;
}

// A trial's inputs, the same for both kernels: the initial bytes of each
// tensor by name, and the value of each symbolic float scalar.
struct TrialInputs {
  std::map<std::string, std::vector<std::uint8_t>> tensors;
  std::map<std::string, double> scalars;
};

struct TrialKind {
  std::string name;
  bool stress;
  oracle::InputSpec spec;
};

// Large magnitudes: 2^20 (2^10 in f16, whose largest finite is 65504):
// sums of exponentials of such values overflow unless the kernel
// stabilises them as the reference does.
oracle::InputSpec for_dtype(oracle::InputSpec s, DType t) {
  if (s.distribution == oracle::Distribution::Scaled && t == DType::F16) s.scale_exp = std::min(s.scale_exp, 10);
  return s;
}

std::uint64_t name_seed(const std::string& name, std::uint64_t seed) {
  std::uint64_t h = 1469598103934665603ull ^ seed;  // FNV-1a over the name: each tensor its own stream
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string make_inputs(const std::vector<const Prepared*>& kernels, const TrialKind& kind, std::uint64_t seed,
                        TrialInputs* in) {
  for (const Prepared* k : kernels)
    for (const LaunchArg* arg : leaves(k->launch)) {
      const LaunchArg& a = *arg;
      if (a.symbolic && !in->scalars.count(a.tensor.name)) {
        // A float scalar the proof held symbolic (a scale, an epsilon): a
        // value of about 1, the same for both kernels.
        oracle::InputSpec u;
        u.lo = 0.5;
        u.hi = 2;
        oracle::GeneratedTensor g = oracle::generate(DType::F64, 1, u, name_seed(a.tensor.name, seed));
        in->scalars[a.tensor.name] = g.values.empty() ? 1.0 : g.values[0];
        continue;
      }
      const TensorArg* t = tensor_of(a);
      if (!t || in->tensors.count(t->name)) continue;
      const std::uint64_t n = t->elements();
      const std::size_t size = dtype_bytes(t->dtype);
      if (n == UINT64_MAX || n > (std::uint64_t(1) << 34) / size) return "tensor '" + t->name + "' is too large to upload";
      std::vector<std::uint8_t> bytes;
      if (t->role == Role::In || t->role == Role::InOut || t->init == TensorInit::Input) {
        oracle::GeneratedTensor g = oracle::generate(t->dtype, n, for_dtype(kind.spec, t->dtype), name_seed(t->name, seed));
        if (!g.error.empty()) return "tensor '" + t->name + "': " + g.error;
        bytes = std::move(g.bytes);
      } else if (t->init == TensorInit::Value) {
        bytes.resize(std::size_t(n) * size);
        const double v = t->init_inf ? (t->init_inf < 0 ? -INFINITY : INFINITY) : t->init_value.to_double();
        for (std::uint64_t e = 0; e < n; ++e) oracle::encode(t->dtype, v, bytes.data() + e * size);
      } else {
        // An output the kernel should write: NaN bytes (all ones), so that an
        // element a kernel leaves unwritten shows as NaN.
        bytes.assign(std::size_t(n) * size, 0xff);
      }
      in->tensors[t->name] = std::move(bytes);
    }
  return "";
}

cuda::TensorMapDataType map_dtype(DType t) {
  switch (t) {
    case DType::F16: return cuda::TensorMapDataType::F16;
    case DType::BF16: return cuda::TensorMapDataType::BF16;
    case DType::F64: return cuda::TensorMapDataType::F64;
    case DType::U8:
    case DType::S8:
    case DType::B8: return cuda::TensorMapDataType::U8;
    case DType::U16:
    case DType::S16:
    case DType::B16: return cuda::TensorMapDataType::U16;
    case DType::S32: return cuda::TensorMapDataType::S32;
    case DType::U32:
    case DType::B32: return cuda::TensorMapDataType::U32;
    case DType::S64: return cuda::TensorMapDataType::S64;
    case DType::U64:
    case DType::B64: return cuda::TensorMapDataType::U64;
    default: return cuda::TensorMapDataType::F32;
  }
}

struct KernelRun {
  std::string error;
  std::map<std::string, std::vector<std::uint8_t>> outputs;  // Out / InOut tensors, as downloaded
  double seconds = 0;
  bool context_lost = false;
  bool timed_out = false;  // the kernel may still run: nothing of its context may be freed (leak_after_hang)
};

// A kernel still running after the timeout keeps its context busy: freeing
// its memory or unloading its module would wait for it, forever if it
// hangs. What it uses is moved here and never freed; the process ends soon
// (the CLI leaves at once after the report).
template <class T>
void leak_after_hang(T&& owned) {
  new std::decay_t<T>(std::forward<T>(owned));
}

// The bytes the kernel receives for one argument (not a struct: a field of
// one is passed here): a tensor map encoded over its tensor's device buffer,
// a device address, or a scalar's bits in `type` (a symbolic float: the
// trial's value in that float type).
bool arg_bytes(const cuda::Gpu& gpu, const LaunchArg& a, DType type,
               const std::map<std::string, cuda::DeviceBuffer>& buffers, const TrialInputs& in,
               std::vector<std::uint8_t>* out, std::string* why) {
  if (a.is_tensor_map) {
    const TensorMap& m = a.map;
    cuda::TensorMapTiled desc;
    desc.dtype = map_dtype(a.tensor.dtype);
    desc.global_address = buffers.at(a.tensor.name).address();
    desc.dims = m.dims;
    desc.strides = m.strides;
    if (desc.strides.empty() && m.dims.size() > 1) {  // packed, innermost first
      std::uint64_t s = dtype_bytes(a.tensor.dtype);
      for (std::size_t dim = 0; dim + 1 < m.dims.size(); ++dim) desc.strides.push_back(s *= m.dims[dim]);
    }
    desc.box = m.box;
    desc.element_strides = m.element_strides;
    desc.swizzle = cuda::TensorMapSwizzle(std::uint32_t(m.swizzle));
    desc.interleave = std::uint32_t(m.interleave);
    desc.l2_promotion = std::uint32_t(m.l2_promotion);
    desc.oob_fill = std::uint32_t(m.oob_fill);
    std::optional<cuda::CuTensorMap> map = cuda::encode_tensor_map_tiled(gpu, desc, why);
    if (!map) {
      *why = "tensor map: " + *why;
      return false;
    }
    *out = cuda::arg(*map);
  } else if (a.null_pointer) {
    *out = cuda::arg(std::uint64_t(0));
  } else if (a.is_tensor) {
    *out = cuda::arg(buffers.at(a.tensor.name).address());
  } else {
    out->assign(std::max<std::size_t>(1, dtype_bytes(type)), 0);
    if (a.symbolic) {
      oracle::encode(dtype_is_float(type) ? type : a.tensor.dtype, in.scalars.at(a.tensor.name), out->data());
    } else {
      const std::uint64_t bits = std::uint64_t(a.scalar);
      std::memcpy(out->data(), &bits, std::min<std::size_t>(out->size(), sizeof bits));  // little-endian
    }
  }
  return true;
}

KernelRun run_kernel(const cuda::Gpu& gpu, Prepared& k, const TrialInputs& in, double timeout) {
  KernelRun r;
  std::string why;
  if (!k.module) {
    k.module = cuda::Module::load_ptx(gpu, k.ptx, &why);
    if (!k.module) {
      r.error = k.role + ": " + why;
      return r;
    }
  }
  if (!k.function) {
    k.function = k.module->function(k.program.name, &why);
    if (!k.function) {
      r.error = k.role + ": " + why;
      return r;
    }
  }
  cuda::Function* fn = &*k.function;
  // One device buffer per tensor name (two arguments naming one tensor
  // share it, as in the evaluator).
  std::map<std::string, cuda::DeviceBuffer> buffers;
  std::map<std::string, const TensorArg*> tensors;
  for (const LaunchArg* a : leaves(k.launch)) {
    const TensorArg* t = tensor_of(*a);
    if (!t || buffers.count(t->name)) continue;
    const std::vector<std::uint8_t>& init = in.tensors.at(t->name);
    std::optional<cuda::DeviceBuffer> b = cuda::DeviceBuffer::alloc(gpu, std::max<std::size_t>(init.size(), 16), &why);
    if (!b || !b->upload(init.data(), init.size(), &why)) {
      r.error = k.role + ": tensor '" + t->name + "': " + why;
      return r;
    }
    buffers.emplace(t->name, std::move(*b));
    tensors[t->name] = t;
  }
  std::vector<std::vector<std::uint8_t>> args;
  std::vector<cuda::DeviceBuffer> map_buffers;  // `const CUtensorMap*` arguments' maps
  for (std::size_t i = 0; i < k.launch.args.size() && i < k.program.params.size(); ++i) {
    const LaunchArg& a = k.launch.args[i];
    const ParamDecl& d = k.program.params[i];
    std::vector<std::uint8_t> bytes;
    if (a.is_map_array) {
      // `const CUtensorMap*`: the maps encoded one after the other (map k at
      // byte 128 k), copied to a device buffer as the host's cudaMemcpy
      // would; the kernel gets its address.
      std::vector<std::uint8_t> maps;
      for (std::size_t m = 0; m < a.fields.size(); ++m) {
        std::vector<std::uint8_t> map;
        if (!arg_bytes(gpu, a.fields[m], DType::U64, buffers, in, &map, &why)) {
          r.error = k.role + ": map " + std::to_string(m) + " of parameter '" + d.name + "': " + why;
          return r;
        }
        maps.insert(maps.end(), map.begin(), map.end());
      }
      std::optional<cuda::DeviceBuffer> b = cuda::DeviceBuffer::alloc(gpu, std::max<std::size_t>(maps.size(), 128), &why);
      if (!b || !b->upload(maps.data(), maps.size(), &why)) {
        r.error = k.role + ": the tensor maps of parameter '" + d.name + "': " + why;
        return r;
      }
      bytes = cuda::arg(b->address());
      map_buffers.push_back(std::move(*b));
    } else if (a.is_struct) {
      // Its bytes, field by field at their offsets; bytes no field covers
      // are undefined for the evaluator, which reports a kernel that reads
      // them: zero here.
      bytes.assign(a.struct_bytes, 0);
      for (std::size_t f = 0; f < a.fields.size() && f < a.layout.size(); ++f) {
        const LaunchArg::Field& at = a.layout[f];
        std::vector<std::uint8_t> field;
        if (!arg_bytes(gpu, a.fields[f], at.dtype, buffers, in, &field, &why)) {
          r.error = k.role + ": field '" + at.name + "' of parameter '" + d.name + "': " + why;
          return r;
        }
        if (std::uint64_t(at.offset) + field.size() > bytes.size()) {
          r.error = k.role + ": field '" + at.name + "' lies outside parameter '" + d.name + "'";
          return r;
        }
        std::memcpy(bytes.data() + at.offset, field.data(), field.size());
      }
    } else if (!arg_bytes(gpu, a, d.dtype, buffers, in, &bytes, &why)) {
      r.error = k.role + ": parameter '" + d.name + "': " + why;
      return r;
    }
    args.push_back(std::move(bytes));
  }
  cuda::LaunchConfig cfg;
  cfg.grid = k.launch.grid;
  cfg.block = k.launch.block;
  cfg.cluster = k.launch.cluster;
  cfg.dynamic_shared_bytes = std::uint32_t(k.spec->dynamic_shared);
  cfg.shared_opt_in = k.spec->dynamic_shared > 0;
  cfg.bounds_from(k.program);
  cuda::LaunchOptions opts;
  opts.timeout_seconds = timeout;
  cuda::LaunchResult lr = cuda::launch(*fn, cfg, args, opts);
  r.seconds = lr.seconds;
  r.context_lost = lr.context_lost;
  r.timed_out = lr.timed_out;
  if (!lr.ok) {
    r.error = k.role + ": " + lr.message;
    if (lr.timed_out) {
      leak_after_hang(std::move(buffers));
      leak_after_hang(std::move(map_buffers));
    }
    return r;
  }
  for (auto& [name, buf] : buffers) {
    const TensorArg* t = tensors.at(name);
    if (t->role != Role::Out && t->role != Role::InOut) continue;
    std::vector<std::uint8_t> bytes(in.tensors.at(name).size());
    if (!buf.download(bytes.data(), bytes.size(), &why)) {
      r.error = k.role + ": tensor '" + name + "': " + why;
      return r;
    }
    r.outputs[name] = std::move(bytes);
  }
  return r;
}

// The exact reference (DifferentialOptions::exact): the reference kernel's
// outputs as expressions over its inputs, from a symbolic run of the whole
// grid.
struct ExactReference {
  ExprContext ctx;
  std::map<std::string, std::vector<std::optional<Expr>>> outputs;
};

std::unique_ptr<ExactReference> exact_reference(const Spec& spec, const Prepared& ref, std::string* why) {
  if (!spec.all_ctas) {
    *why = "the exact reference needs a spec with \"ctas\": \"all\" (the GPU runs the whole grid)";
    return nullptr;
  }
  auto e = std::make_unique<ExactReference>();
  SymbolicDomain dom(e->ctx);
  RunLimits limits;
  limits.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  limits.max_memory_bytes = default_memory_budget();
  internal::GridRun<Expr> g = internal::run_grid(ref.program, ref.launch, dom, limits, false);
  if (!g.diagnostics.empty()) {
    *why = "the reference's symbolic run stopped: " + g.diagnostics.front().message;
    return nullptr;
  }
  e->outputs = std::move(g.outputs);
  return e;
}

// Elements where the reference is finite and the output is not: what a
// stress trial reports as a hazard of the optimized kernel.
std::uint64_t nonfinite_where_finite(DType t, const std::vector<std::uint8_t>& ref, const std::vector<std::uint8_t>& out) {
  if (!dtype_is_float(t) || ref.size() != out.size()) return 0;
  const std::vector<double> a = oracle::decode_all(t, ref), b = oracle::decode_all(t, out);
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) n += std::isfinite(a[i]) && !std::isfinite(b[i]);
  return n;
}

std::string num(double x) {
  std::ostringstream os;
  os.precision(9);
  os << x;
  return os.str();
}

}  // namespace

const char* differential_verdict_name(DifferentialVerdict v) {
  switch (v) {
    case DifferentialVerdict::Agree: return "agree";
    case DifferentialVerdict::Differ: return "differ";
    case DifferentialVerdict::Hazard: return "hazard";
    case DifferentialVerdict::Error: return "error";
    case DifferentialVerdict::NoGpu: return "no_gpu";
  }
  return "?";
}

bool DifferentialTrial::passed() const {
  if (!error.empty()) return false;
  for (const Output& o : outputs)
    if (!o.comparison.passed()) return false;
  return true;
}

int DifferentialReport::exit_code() const {
  switch (verdict) {
    case DifferentialVerdict::Agree: return 0;
    case DifferentialVerdict::Differ:
    case DifferentialVerdict::Hazard: return 1;
    case DifferentialVerdict::NoGpu: return 3;
    case DifferentialVerdict::Error: return 4;
  }
  return 4;
}

std::string DifferentialReport::text() const {
  std::ostringstream os;
  static const char* heading[] = {"AGREE", "DIFFER", "FLOAT HAZARD", "ERROR", "NO GPU"};
  os << heading[int(verdict)] << ": " << message << "\n";
  if (!device.empty()) os << "  device: " << device << "\n";
  if (!exact_note.empty()) os << "  exact reference: none (" << exact_note << ")\n";
  for (const DifferentialTrial& t : trials) {
    os << "  trial " << t.name << (t.stress ? " (stress)" : "") << ": ";
    if (!t.error.empty()) {
      os << t.error << "\n";
      continue;
    }
    os << (t.passed() ? "outputs agree" : "outputs differ") << " (ref " << num(t.ref_seconds * 1e3) << " ms, opt "
       << num(t.opt_seconds * 1e3) << " ms)\n";
    if (t.hazards_scaled >= 0)
      os << "    NaN or Inf from opt only in " << t.hazards << " elements; with the largest special values scaled down, in "
         << t.hazards_scaled << (t.hazards_scaled ? " (a hazard)\n" : " (the order of a sum: not counted)\n");
    for (const DifferentialTrial::Output& o : t.outputs) {
      const oracle::Comparison& c = o.comparison;
      os << "    " << o.name << " (" << dtype_name(c.dtype) << ", " << c.elements << " elements): ";
      if (!c.error.empty()) {
        os << c.error << "\n";
        continue;
      }
      bool first = true;
      for (std::size_t k = 0; k < oracle::kElementClasses; ++k)
        if (c.counts[k]) {
          os << (first ? "" : ", ") << c.counts[k] << " " << oracle::element_class_name(oracle::ElementClass(k));
          first = false;
        }
      if (c.measured) os << "; max rel error " << num(c.max_rel_error) << ", max " << num(c.max_ulps) << " ulps";
      os << "\n";
      for (const auto& [who, e] : {std::make_pair("ref", &o.ref_exact), std::make_pair("opt", &o.opt_exact)}) {
        if (!*e) continue;
        const oracle::ExactComparison& x = **e;
        os << "      " << who << " against the exact value: max " << num(x.max_ulps) << " ulps (mean " << num(x.mean_ulps)
           << "), " << x.correctly_rounded << " of " << x.measured << " correctly rounded";
        for (std::size_t h = 1; h < oracle::kHazards; ++h)
          if (x.counts[h] && oracle::Hazard(h) != oracle::Hazard::Unwritten)
            os << ", " << x.counts[h] << " " << oracle::hazard_name(oracle::Hazard(h));
        os << "\n";
      }
      if (c.passed()) continue;
      std::size_t shown = 0;
      for (const oracle::ElementReport& e : c.worst) {
        if (e.cls == oracle::ElementClass::Match || e.cls == oracle::ElementClass::BothNan || shown == 3) continue;
        ++shown;
        os << "      " << o.name << "[" << e.index << "]: ref " << num(e.reference) << ", opt " << num(e.output) << " ("
           << oracle::element_class_name(e.cls) << ")\n";
      }
    }
  }
  return os.str();
}

std::string DifferentialReport::json() const {
  // As Report::json: nlohmann's writer, bytes that are not UTF-8 replaced.
  nlohmann::json j;
  j["verdict"] = differential_verdict_name(verdict);
  j["message"] = message;
  j["device"] = device;
  j["trials"] = nlohmann::json::array();
  for (const DifferentialTrial& t : trials) {
    nlohmann::json jt = {{"name", t.name}, {"stress", t.stress}, {"passed", t.passed()}, {"error", t.error},
                         {"hazards", t.hazards}};
    if (t.hazards_scaled >= 0) jt["hazards_scaled"] = t.hazards_scaled;
    jt["outputs"] = nlohmann::json::array();
    for (const DifferentialTrial::Output& o : t.outputs) {
      const oracle::Comparison& c = o.comparison;
      nlohmann::json jo = {{"name", o.name}, {"elements", c.elements}};
      for (std::size_t k = 0; k < oracle::kElementClasses; ++k)
        jo[oracle::element_class_name(oracle::ElementClass(k))] = c.counts[k];
      jo["max_rel_error"] = std::isfinite(c.max_rel_error) ? nlohmann::json(c.max_rel_error) : nlohmann::json();
      jo["max_ulps"] = std::isfinite(c.max_ulps) ? nlohmann::json(c.max_ulps) : nlohmann::json();
      jt["outputs"].push_back(std::move(jo));
    }
    j["trials"].push_back(std::move(jt));
  }
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

DifferentialReport differential_test(const Spec& spec, const DifferentialOptions& options) {
  DifferentialReport r;
  try {
    if (!spec.ref || !spec.opt) {
      r.verdict = DifferentialVerdict::Error;
      r.message = "a differential run needs a spec with \"ref\" and \"opt\"";
      return r;
    }
    Prepared ref, opt;
    std::string why;
    if (!prepare(spec, *spec.ref, "ref", &ref, &why) || !prepare(spec, *spec.opt, "opt", &opt, &why)) {
      r.verdict = DifferentialVerdict::Error;
      r.message = why;
      return r;
    }
    std::optional<cuda::Gpu> gpu = cuda::Gpu::open(options.device, &why);
    if (!gpu) {
      r.verdict = DifferentialVerdict::NoGpu;
      r.message = "nothing ran: " + why;
      return r;
    }
    r.device = gpu->limits().name;
    std::vector<TrialKind> kinds;
    {
      oracle::InputSpec u;  // uniform [-1, 1]
      kinds.push_back({"uniform [-1, 1]", false, u});
      oracle::InputSpec n;
      n.distribution = oracle::Distribution::Normal;
      kinds.push_back({"normal (0, 1)", false, n});
      if (options.stress) {
        oracle::InputSpec big;
        big.distribution = oracle::Distribution::Scaled;
        big.scale_exp = 20;
        kinds.push_back({"uniform [-1, 1] x 2^20", true, big});
        oracle::InputSpec sp;
        sp.distribution = oracle::Distribution::Special;
        sp.special_rate = 0.05;
        kinds.push_back({"special values (5%)", true, sp});
      }
    }
    std::string first_differ, first_hazard, first_order;
    std::unique_ptr<ExactReference> exact;
    if (options.exact) {
      exact = exact_reference(spec, ref, &why);
      if (!exact) r.exact_note = why;
    }
    for (const TrialKind& kind : kinds)
      for (unsigned j = 0; j < options.trials_per_kind; ++j) {
        const std::uint64_t seed = options.seed + j;
        DifferentialTrial t;
        t.name = kind.name + ", seed " + std::to_string(seed);
        t.stress = kind.stress;
        TrialInputs in;
        t.error = make_inputs({&ref, &opt}, kind, seed, &in);
        KernelRun a, b;
        if (t.error.empty()) {
          a = run_kernel(*gpu, ref, in, options.timeout_seconds);
          t.error = a.error;
        }
        if (t.error.empty()) {
          b = run_kernel(*gpu, opt, in, options.timeout_seconds);
          t.error = b.error;
        }
        t.ref_seconds = a.seconds;
        t.opt_seconds = b.seconds;
        if (!t.error.empty()) {
          r.trials.push_back(std::move(t));
          r.verdict = DifferentialVerdict::Error;
          r.message = r.trials.back().error;
          if (a.context_lost || b.context_lost)
            r.message += " (the GPU context is lost after such a fault: the other trials did not run)";
          if (a.timed_out || b.timed_out) {
            r.message += " (the other trials did not run; tileverify check finds why a kernel waits forever)";
            leak_after_hang(std::move(ref.module));
            leak_after_hang(std::move(ref.function));
            leak_after_hang(std::move(opt.module));
            leak_after_hang(std::move(opt.function));
            leak_after_hang(std::move(*gpu));
          }
          return r;
        }
        std::uint64_t hazards = 0;
        for (const auto& [name, bytes] : a.outputs) {
          auto other = b.outputs.find(name);
          if (other == b.outputs.end()) continue;
          const DType dt = tensor_dtype(ref.launch, name);
          oracle::CompareOptions co;
          co.tolerance = options.tolerance;
          DifferentialTrial::Output o{name, oracle::compare_bytes(dt, bytes, other->second, co)};
          if (exact) {
            auto xs = exact->outputs.find(name);
            if (xs != exact->outputs.end()) {
              oracle::InputValues values;
              for (const LaunchArg* la : leaves(ref.launch)) {
                const TensorArg* ta = tensor_of(*la);
                if (ta && (ta->role == Role::In || ta->role == Role::InOut || ta->init == TensorInit::Input))
                  values[ta->name] = oracle::decode_all(ta->dtype, in.tensors.at(ta->name));
              }
              for (const auto& [sname, v] : in.scalars) values[sname] = {v};
              const oracle::ExactResult er = oracle::exact_values(exact->ctx, xs->second, values);
              if (er.error.empty()) {
                o.ref_exact = oracle::measure(dt, oracle::decode_all(dt, bytes), er.values);
                o.opt_exact = oracle::measure(dt, oracle::decode_all(dt, other->second), er.values);
              }
            }
          }
          hazards += nonfinite_where_finite(dt, bytes, other->second);
          if (!o.comparison.passed() && first_differ.empty() && !kind.stress)
            first_differ = "trial \"" + t.name + "\": " + name + " differs in " +
                           std::to_string(o.comparison.elements - o.comparison.count(oracle::ElementClass::Match) -
                                          o.comparison.count(oracle::ElementClass::BothNan)) +
                           " of " + std::to_string(o.comparison.elements) + " elements";
          t.outputs.push_back(std::move(o));
        }
        t.hazards = hazards;
        if (kind.stress && hazards && kind.spec.distribution == oracle::Distribution::Special) {
          // Both orders of a sum are valid float evaluations: A + B + C can
          // overflow where C + B + A does not. Run the trial again with the
          // extreme values scaled so that sums of their products cannot
          // overflow in any order; what still overflows is the kernel's own.
          TrialKind tame = kind;
          tame.spec.extremes_scaled = true;
          TrialInputs in2;
          KernelRun a2, b2;
          std::string err = make_inputs({&ref, &opt}, tame, seed, &in2);
          if (err.empty()) err = (a2 = run_kernel(*gpu, ref, in2, options.timeout_seconds)).error;
          if (err.empty()) err = (b2 = run_kernel(*gpu, opt, in2, options.timeout_seconds)).error;
          if (err.empty()) {
            std::uint64_t left = 0;
            for (const auto& [name, bytes] : a2.outputs) {
              auto other = b2.outputs.find(name);
              if (other == b2.outputs.end()) continue;
              const DType dt = tensor_dtype(ref.launch, name);
              left += nonfinite_where_finite(dt, bytes, other->second);
            }
            t.hazards_scaled = std::int64_t(left);
          }
        }
        if (kind.stress && hazards && t.hazards_scaled == 0 && first_order.empty())
          first_order = "in trial \"" + t.name + "\" the optimized kernel gives NaN or Inf in " + std::to_string(hazards) +
                        " elements where the reference is finite, and in none with the largest special values scaled "
                        "down (2^-32 in f32): an overflow of partial sums, which the order of "
                        "summation decides (not counted)";
        if (kind.stress && hazards && t.hazards_scaled != 0 && first_hazard.empty())
          first_hazard = "the optimized kernel gives NaN or Inf in " + std::to_string(hazards) +
                         " elements where the reference is finite (trial \"" + t.name + "\")" +
                         (t.hazards_scaled > 0 ? ", and still in " + std::to_string(t.hazards_scaled) +
                                                     " with the largest special values scaled down (2^-32 in f32)"
                                                     " (not an effect of the order of a sum)"
                                               : std::string());
        r.trials.push_back(std::move(t));
      }
    if (!first_differ.empty()) {
      r.verdict = DifferentialVerdict::Differ;
      r.message = "the kernels' outputs differ on ordinary inputs: " + first_differ;
    } else if (!first_hazard.empty()) {
      r.verdict = DifferentialVerdict::Hazard;
      r.message = "the kernels agree on ordinary inputs, but " + first_hazard;
    } else {
      r.verdict = DifferentialVerdict::Agree;
      r.message = "every output of " + std::to_string(r.trials.size()) + " trials agrees within the tolerance" +
                  std::string(options.stress ? "" : " (stress trials off)");
      if (!first_order.empty()) r.message += "; " + first_order;
      for (const DifferentialTrial& t : r.trials)
        if (!t.passed()) {  // a stress trial: rounding differences at huge magnitudes, no NaN or Inf of the opt's own
          r.message += "; stress trials differ in rounding only (listed below), which is not counted";
          break;
        }
    }
  } catch (const std::bad_alloc&) {
    r.verdict = DifferentialVerdict::Error;
    r.message = "out of memory";
  } catch (const std::exception& e) {
    r.verdict = DifferentialVerdict::Error;
    r.message = std::string("internal error: ") + e.what();
  }
  return r;
}

std::string ReplayReport::text() const {
  std::ostringstream os;
  if (!ran) {
    os << "  on the GPU: not replayed (" << error << ")\n";
    return os.str();
  }
  os << "  on the GPU (" << device << "), " << (one_sided ? "on random inputs (an element one kernel never writes; NaN: not written)" : "the counterexample in float") << ": " << output << "[" << element << "]: ref "
     << num(ref_value) << ", opt " << num(opt_value) << (differs ? " (they differ" : " (equal within the tolerance");
  os << "; " << differing << " of " << elements << " elements of " << output << " differ)\n";
  return os.str();
}

ReplayReport replay_counterexample(const Spec& spec, const Mismatch& mismatch, int device) {
  ReplayReport r;
  r.output = mismatch.output;
  r.element = mismatch.element;
  try {
    if (!spec.ref || !spec.opt) {
      r.error = "the spec has no ref and opt";
      return r;
    }
    Prepared ref, opt;
    std::string why;
    if (!prepare(spec, *spec.ref, "ref", &ref, &why) || !prepare(spec, *spec.opt, "opt", &opt, &why)) {
      r.error = why;
      return r;
    }
    std::optional<cuda::Gpu> gpu = cuda::Gpu::open(device, &why);
    if (!gpu) {
      r.error = why;
      return r;
    }
    r.device = gpu->limits().name;
    // The initial bytes as a trial makes them (outputs NaN-filled, inits
    // kept), then the counterexample's values over the inputs.
    // An element only one kernel writes has no counterexample values: any
    // inputs show it (uniform ones; the element stays NaN where unwritten).
    TrialKind zero{"counterexample", false, oracle::InputSpec{}};
    if (!mismatch.inputs.empty()) zero.spec.lo = zero.spec.hi = 0;
    r.one_sided = mismatch.inputs.empty();
    TrialInputs in;
    r.error = make_inputs({&ref, &opt}, zero, 1, &in);
    if (!r.error.empty()) return r;
    for (const Prepared* k : {&ref, &opt})
      for (const LaunchArg* arg : leaves(k->launch)) {
        const LaunchArg& a = *arg;
        auto values = mismatch.inputs.find(a.tensor.name);
        if (values == mismatch.inputs.end()) continue;
        if (a.symbolic) {
          if (!values->second.empty() && values->second[0]) in.scalars[a.tensor.name] = values->second[0]->to_double();
          continue;
        }
        const TensorArg* t = tensor_of(a);
        if (!t) continue;
        std::vector<std::uint8_t>& bytes = in.tensors[t->name];
        const std::size_t size = dtype_bytes(t->dtype);
        for (std::size_t e = 0; e < values->second.size() && (e + 1) * size <= bytes.size(); ++e)
          if (values->second[e]) oracle::encode(t->dtype, values->second[e]->to_double(), bytes.data() + e * size);
      }
    KernelRun a = run_kernel(*gpu, ref, in, 30), b = run_kernel(*gpu, opt, in, 30);
    if (!a.error.empty() || !b.error.empty()) {
      r.error = !a.error.empty() ? a.error : b.error;
      return r;
    }
    auto x = a.outputs.find(mismatch.output), y = b.outputs.find(mismatch.output);
    if (x == a.outputs.end() || y == b.outputs.end()) {
      r.error = "output '" + mismatch.output + "' was not downloaded";
      return r;
    }
    const DType dt = tensor_dtype(ref.launch, mismatch.output);
    const std::vector<double> xs = oracle::decode_all(dt, x->second), ys = oracle::decode_all(dt, y->second);
    if (mismatch.element >= xs.size() || mismatch.element >= ys.size()) {
      r.error = "the element is outside the output";
      return r;
    }
    r.ran = true;
    r.ref_value = xs[mismatch.element];
    r.opt_value = ys[mismatch.element];
    oracle::Comparison c = oracle::compare(dt, xs, ys);
    r.elements = c.elements;
    r.differing = c.elements - c.count(oracle::ElementClass::Match) - c.count(oracle::ElementClass::BothNan);
    oracle::Comparison one = oracle::compare(dt, {r.ref_value}, {r.opt_value});
    r.differs = !one.passed();
  } catch (const std::exception& e) {
    r.ran = false;
    r.error = std::string("internal error: ") + e.what();
  }
  return r;
}

}  // namespace tileverify
