// Lowering a parsed PTX kernel to the structured-CTA program model.
#include "tileverify/ptx.hpp"

#include "limits.hpp"
#include "lower_ops.hpp"
#include "names.hpp"
#include "scopes.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <vector>

// Lowering runs once per kernel of every check, so the per-instruction path
// allocates only what the Program keeps: opcode parts are views into the
// opcode, register and label names are looked up in a NameTable (below), and
// opcode words are matched by switches, not by string-keyed std::maps built
// from copies. Instructions are built in place in the Program's code.

namespace tileverify::ptx {

namespace {

using namespace lowering;

// A new element for emplace_back(Fresh<T>{}), made by default- rather than
// value-initialization: emplace_back() zeroes the whole object first (a
// `rep stos` of an Instr's 144 bytes, slow to start) and then sets every
// member anyway. The compiler builds the returned T in the vector's slot;
// one that did not would move it there, with the same result.
template <class T>
struct Fresh {
  operator T() const {
    T t;
    return t;
  }
};

// Grows v geometrically to hold `extra` more elements (reserve(size + extra)
// alone would reallocate on every inlined call).
template <class T>
void reserve_more(std::vector<T>& v, std::size_t extra) {
  if (v.size() + extra > v.capacity()) v.reserve(std::max(v.size() + extra, 2 * v.capacity()));
}

// membar and fence: every form the PTX ISA documents (9.0, "Parallel
// Synchronization and Communication Instructions: membar/fence"), as the
// qualifiers after the opcode word. ptxas (CUDA 13.0) accepts each of them for
// sm_90a but membar.proxy with an .async kind, which the ISA lists all the
// same (so it is read here too). Only the tensormap acquire takes operands:
// [addr], 128.
//   membar.level;  membar.proxy.proxykind;
//   fence{.sem}.scope;  fence.acquire.sync_restrict::shared::cluster.cluster;
//   fence.release.sync_restrict::shared::cta.cluster;  fence.mbarrier_init.release.cluster;
//   fence.proxy.proxykind;  fence.proxy.tensormap::generic.{release,acquire}.scope;
//   fence.proxy.async::generic.{acquire,release}.sync_restrict::shared::{cluster,cta}.cluster
// .level = {.cta, .gl, .sys}, .sem = {.sc, .acq_rel, .acquire, .release},
// .scope = {.cta, .cluster, .gpu, .sys}, .proxykind = {.alias, .async,
// .async.global, .async.shared::cta, .async.shared::cluster}.
constexpr std::string_view kMembarForms[] = {
    "cta", "gl", "sys", "proxy.alias", "proxy.async", "proxy.async.global", "proxy.async.shared::cta",
    "proxy.async.shared::cluster"};
constexpr std::string_view kFenceForms[] = {
    "cta", "cluster", "gpu", "sys",
    "sc.cta", "sc.cluster", "sc.gpu", "sc.sys",
    "acq_rel.cta", "acq_rel.cluster", "acq_rel.gpu", "acq_rel.sys",
    "acquire.cta", "acquire.cluster", "acquire.gpu", "acquire.sys",
    "release.cta", "release.cluster", "release.gpu", "release.sys",
    "acquire.sync_restrict::shared::cluster.cluster", "release.sync_restrict::shared::cta.cluster",
    "mbarrier_init.release.cluster",
    "proxy.alias", "proxy.async", "proxy.async.global", "proxy.async.shared::cta", "proxy.async.shared::cluster",
    "proxy.tensormap::generic.release.cta", "proxy.tensormap::generic.release.cluster",
    "proxy.tensormap::generic.release.gpu", "proxy.tensormap::generic.release.sys",
    "proxy.tensormap::generic.acquire.cta", "proxy.tensormap::generic.acquire.cluster",
    "proxy.tensormap::generic.acquire.gpu", "proxy.tensormap::generic.acquire.sys",
    "proxy.async::generic.acquire.sync_restrict::shared::cluster.cluster",
    "proxy.async::generic.release.sync_restrict::shared::cta.cluster"};

// Functions of the CUDA runtime and device runtime that nvcc's PTX calls
// without defining them: what each is, and why a kernel that calls it is
// outside what tileverify verifies. `prefix`: every name that starts so.
struct ExternalFunction {
  std::string_view name;
  bool prefix;
  const char* what;
  const char* why;
};
constexpr const char* kDeviceLaunch =
    "a launch from device code starts another grid, and tileverify verifies the CTAs of one launch";
constexpr ExternalFunction kExternalFunctions[] = {
    {"vprintf", false, "the CUDA runtime's device-side printf (printf in a kernel)",
     "its output goes to the host, not into the kernel's tensors"},
    {"malloc", false, "the CUDA runtime's device-side malloc", "the device heap's memory is not a buffer the spec describes"},
    {"free", false, "the CUDA runtime's device-side free", "the device heap's memory is not a buffer the spec describes"},
    // nvcc 12/13 (CDP2): __cudaCDP2GetParameterBufferV2, __cudaCDP2LaunchDeviceV2, ...
    {"__cudaCDP", true, "the CUDA device runtime (dynamic parallelism: kernel<<<...>>> in device code)", kDeviceLaunch},
    {"cudaGetParameterBuffer", true, "the CUDA device runtime (dynamic parallelism: kernel<<<...>>> in device code)",
     kDeviceLaunch},
    {"cudaLaunchDevice", true, "the CUDA device runtime (dynamic parallelism: kernel<<<...>>> in device code)",
     kDeviceLaunch},
    {"cudaDeviceSynchronize", false, "the CUDA device runtime's wait for the grids a kernel launched (dynamic parallelism)",
     kDeviceLaunch},
    // Cooperative groups' grid and multi-grid sync went through these before
    // CUDA 11; nvcc 13 inlines it (see the %envreg message).
    {"cudaCG", true, "the CUDA device runtime's cooperative groups (grid-wide synchronization)",
     "a grid-wide sync orders the CTAs of a launch against each other, and the structured-CTA class has CTAs "
     "that synchronize only within themselves"},
};

// The registers, variables, .param slots and labels of one function body
// being lowered: the kernel itself, or one inlined instance of a .func (each
// instance has its own registers, so two calls never share state).
struct Frame {
  const Kernel* fn = nullptr;
  bool entry = true;
  std::string prefix;  // names of an inlined instance's registers and buffers: "fname#3:"
  NameTable regs, vars, labels;  // regs: the registers used so far
  DeclaredRegisters declared;    // the registers declared (made in regs on first use)
  // .param names visible here -> the argument slot they denote. The slots of
  // one call are shared by the caller (its st.param / ld.param on the call's
  // .param variables) and the callee (on its parameters and return values).
  std::map<std::string, std::string, std::less<>> params;
  // The slot of a .param name known to be visible here (params.count(name)).
  const std::string& param(std::string_view name) const { return params.find(name)->second; }
  std::vector<std::pair<std::uint32_t, const ptx::Operand*>> branches;  // bra to patch: (instruction, label)
  std::vector<std::uint32_t> returns;  // an inlined ret: a bra to the end of the instance
};

class Lowering final : public KernelLowering {
 public:
  Lowering(const Module& m, const Kernel& k, std::uint64_t dyn)
      : m_(m), k_(k), dyn_(dyn), max_shared_(limits::max_shared_per_cta(limits::compute_capability(m.target))) {}

  Program run() {
    p_.name = k_.name;
    p_.sm = unsigned(limits::compute_capability(m_.target));
    p_.reqntid = k_.reqntid;
    p_.reqnctapercluster = k_.reqnctapercluster;
    p_.maxntid = k_.maxntid;
    if (dyn_ > max_shared_)
      bad_input(k_.loc, "dynamic shared memory of " + std::to_string(dyn_) + " bytes for '" + k_.name + "' is above the " +
                            limits::kb_text(max_shared_) + " of shared memory a CTA can have " + on_target() + " (" +
                            limits::source() + ")");
    for (const Param& prm : k_.params) {
      ParamDecl d;
      d.name = prm.name;
      // A .b8 array is a by-value struct (CUTLASS's Params), or at 128 bytes
      // a CUtensorMap (const __grid_constant__ CUtensorMap): the launch gives
      // its fields or its map (the spec checks which).
      if (prm.type == ".struct" && (prm.array_bytes == 0 || prm.array_bytes > limits::kMaxParamBytes))
        fail(prm.loc, "the by-value parameter '" + prm.name + "' has " + std::to_string(prm.array_bytes) +
                          " bytes; a kernel's parameters take at most " + std::to_string(limits::kMaxParamBytes));
      if (prm.type != ".struct" && !parse_dtype(prm.type, &d.dtype)) unknown_type(prm.loc, "parameter", prm.type);
      d.pointer = prm.pointer_hint;
      d.array_bytes = std::uint32_t(prm.array_bytes);
      params_[prm.name] = std::uint32_t(p_.params.size());
      p_.params.push_back(d);
    }
    for (const VarDecl& v : m_.globals) add_module_var(v);
    Frame f;
    f.fn = &k_;
    lower_body(f);
    check_shared_total();
    Instr ret;
    ret.op = Opcode::Ret;
    ret.loc = k_.loc;
    p_.code.push_back(std::move(ret));  // falling off the end returns
    lift_cas_loops(p_);
    return std::move(p_);
  }

 private:
  // Declares a body's registers and variables in f, lowers its statements,
  // and resolves its branches.
  void lower_body(Frame& f) {
    const Kernel& k = *f.fn;
    for (const RegDecl& r : k.regs) {
      DType t;
      if (!parse_dtype(r.type, &t)) unknown_type(r.loc, "register", r.type);
      f.declared.add(r.name, r.count, t);
    }
    for (const VarDecl& v : k.vars) add_var(&f, v);
    auto [marks, first_time] = idioms_.try_emplace(&k);
    if (first_time) {
      find_idioms(k, &marks->second);
      for (std::size_t i : find_tf32_rounding(k)) {
        if (marks->second.empty()) marks->second.assign(k.body.size(), kNoIdiom);
        marks->second[i] = kIdiomTf32;
      }
    }
    const std::vector<std::int32_t>& idiom = marks->second;  // empty: none in this body
    auto [math, new_plan] = math_.try_emplace(&k);
    if (new_plan) math->second = find_math_forms(k);
    const MathPlan& plan = math->second;
    reserve_more(p_.code, k.body.size() + 1);
    Frame* outer = f_;
    f_ = &f;
    for (std::size_t i = 0; i < k.body.size(); ++i) {
      const Statement& s = k.body[i];
      if (s.kind == Statement::Kind::Label)
        f.labels.set(s.label, std::uint32_t(p_.code.size()));
      else if (!plan.at.empty() && plan.at[i] != MathPlan::kKeep)
        lower_math(s.instr, plan, plan.at[i]);
      else
        lower_or_defer(f, s.instr, idiom.empty() ? kNoIdiom : idiom[i]);
    }
    for (auto [pc, label] : f.branches) {
      if (label->kind != ptx::Operand::Kind::Name) bad_input(label->loc, "a branch needs a label to go to");
      const std::uint32_t* target = f.labels.find(label->name);
      if (!target) bad_input(label->loc, "unknown label '" + str(label->name) + "'");
      p_.code[pc].target = *target;
    }
    f_ = outer;
  }

  // A statement of a math function's form (lower_math.cpp): dropped, or
  // the one instruction that computes the function.
  void lower_math(const Instruction& pin, const MathPlan& plan, std::int32_t at) {
    if (at < 0) return;
    Instr& in = p_.code.emplace_back(Fresh<Instr>{});
    in.loc = pin.loc;
    if (in.loc.source.empty()) in.loc.source = call_source_;
    lower_math_form(*this, plan.forms[std::size_t(at)], in);
  }

  // Lowers one instruction; one outside what tileverify verifies becomes an
  // Opcode::Unsupported in its place (under its guard, when that could be
  // read), which stops a run only when a thread reaches it: a bug found
  // before it is still the verdict, and code no thread of the launch runs
  // does not stop the check. Bad input (exit 4) is never deferred. What the
  // failed lowering left half done (its instructions, branches to patch, an
  // inlined callee's frame) is taken back first.
  void lower_or_defer(Frame& f, const Instruction& pin, std::int32_t idiom) {
    const std::size_t code = p_.code.size(), branches = f.branches.size(), returns = f.returns.size(),
                      calls = call_stack_.size();
    const SharedString source = call_source_;
    try {
      lower(pin, idiom);
    } catch (Failure& e) {
      if (!e.error.unsupported) throw;
      p_.code.resize(code);
      f.branches.resize(branches);
      f.returns.resize(returns);
      call_stack_.resize(calls);
      call_source_ = source;
      f_ = &f;
      std::int32_t guard = -1;
      if (!pin.guard.empty())
        if (const std::uint32_t* g = find_reg(pin.guard)) guard = std::int32_t(*g);
      Instr& in = p_.code.emplace_back(Fresh<Instr>{});
      in.op = Opcode::Unsupported;
      in.loc = e.error.loc;
      if (in.loc.source.empty()) in.loc.source = call_source_;
      in.guard = guard;
      in.guard_negated = guard >= 0 && pin.guard_negated;
      in.src = {tileverify::Operand::integer(std::int64_t(p_.unsupported.size()))};
      p_.unsupported.push_back({str(pin.opcode), e.error.message});
    }
  }

  // The register `name` denotes in the body being lowered, or null. A
  // declared register becomes one of the Program's when an instruction first
  // uses it (see DeclaredRegisters). The pointer is valid until the next
  // lookup.
  const std::uint32_t* find_reg(std::string_view name) {
    if (const std::uint32_t* r = f_->regs.find(name)) return r;
    return first_use(name);
  }
  [[gnu::noinline]] const std::uint32_t* first_use(std::string_view name) {
    DType t;
    if (!f_->declared.find(name, &t)) return nullptr;
    f_->regs.set(name, std::uint32_t(p_.registers.size()));
    RegisterDecl& d = p_.registers.emplace_back();
    if (__builtin_expect(!name.empty() && name[0] == '{', 0)) {  // declared in a nested { } block
      d.name = f_->prefix + described_name(name);
    } else {
      d.name.reserve(f_->prefix.size() + name.size());
      d.name.append(f_->prefix).append(name);
    }
    d.dtype = t;
    return f_->regs.find(name);
  }

  BufferDecl buffer_of(const VarDecl& v, const std::string& prefix) {
    BufferDecl b;
    b.name = prefix + v.name;
    if (!parse_dtype(v.type, &b.dtype)) unknown_type(v.loc, "variable", v.type);
    b.elements = v.elements;
    return b;
  }

  // "on sm_90", or "on any GPU" for a target the limits table does not know.
  std::string on_target() const {
    return limits::listed_max_shared_per_cta(limits::compute_capability(m_.target)) ? "on " + m_.target
                                                                                      : std::string("on any GPU");
  }

  // The bytes of v's elements of type t, which must fit in 64 bits (they
  // are counted before anything is allocated for them).
  static std::uint64_t bytes_of(const VarDecl& v, DType t) {
    std::uint64_t bytes = 0;
    if (__builtin_mul_overflow(v.elements, std::uint64_t(dtype_bytes(t)), &bytes))
      bad_input(v.loc, "'" + v.name + "' is an array of " + std::to_string(v.elements) + " elements of " +
                           std::to_string(dtype_bytes(t)) + " bytes: more bytes than fit in 64 bits");
    return bytes;
  }
  // v's size against the most a CTA or thread can have of its memory.
  static void check_size(const VarDecl& v, DType t, std::uint64_t most, const char* of_what) {
    const std::uint64_t bytes = bytes_of(v, t);
    if (bytes > most)
      bad_input(v.loc, "'" + v.name + "' takes " + std::to_string(bytes) + " bytes of " + v.space + " memory, above the " +
                           limits::kb_text(most) + " of " + of_what + " (" + limits::source() + ")" +
                           (v.space == ".shared" ? "; a larger array must be dynamic shared memory (extern .shared)" : ""));
  }

  // The statically sized .shared arrays the kernel's code uses (those it
  // does not, ptxas leaves out) against the 48 KB a CTA can have, and with
  // the launch's dynamic shared memory against the target's maximum.
  void check_shared_total() {
    std::vector<bool> used(p_.buffers.size());
    for (const Instr& in : p_.code)
      for (const tileverify::Operand& o : in.src)
        if (o.kind == tileverify::Operand::Kind::Buffer && o.index < used.size()) used[o.index] = true;
    std::uint64_t total = 0;  // each at most 48 KB, so no overflow
    for (std::uint32_t id : static_shared_)
      if (used[id]) total += p_.buffers[id].elements * dtype_bytes(p_.buffers[id].dtype);
    if (total > limits::kStaticShared)
      bad_input(k_.loc, "the .shared arrays '" + k_.name + "' uses take " + std::to_string(total) + " bytes, above the " +
                            limits::kb_text(limits::kStaticShared) + " of static shared memory a CTA can have (" +
                            limits::source() + "); more must be dynamic shared memory (extern .shared)");
    if (total + dyn_ > max_shared_)
      bad_input(k_.loc, "'" + k_.name + "' has " + std::to_string(total) + " bytes of static and " + std::to_string(dyn_) +
                            " bytes of dynamic shared memory, above the " + limits::kb_text(max_shared_) +
                            " of shared memory a CTA can have " + on_target() + " (" + limits::source() + ")");
  }

  // Module-level data: .shared arrays now; .global and .const data, and
  // dynamic shared memory (extern .shared x[]), when a kernel first names it
  // (a module may hold much data, and a dynamic array, no kernel here uses).
  void add_module_var(const VarDecl& v) {
    if (v.space == ".shared" && !v.unsized) return add_var(nullptr, v);
    if (v.space == ".global" || v.space == ".const" || v.space == ".shared") module_data_[v.name] = &v;
  }

  // .global / .const data, with its initializer. .const data without one (a
  // __constant__ the host fills with cudaMemcpyToSymbol) is an error where a
  // kernel uses it; .global data without one starts uninitialized.
  std::uint32_t add_module_data(const VarDecl& v, const SourceLoc& use) {
    if (v.space == ".shared") {  // dynamic shared memory: the launch sizes it
      if (dyn_ == 0)
        bad_input(use, "'" + v.name + "' is dynamic shared memory (extern .shared, declared at " + v.loc.text() +
                      "): give its size in bytes (spec key \"dynamic_shared\")");
      add_var(nullptr, v);
      return vars_.at(v.name);
    }
    if (!v.init_error.empty()) {
      const bool holds_function = !v.init_name.empty() && (function(v.init_name) ||
                                                           m_.declared_functions.count(v.init_name));
      if (holds_function)
        fail(use, "'" + v.name + "' (at " + v.loc.text() + ") holds the address of the function '" + v.init_name +
                      "' (a table of function pointers): " + kNoFunctionPointers);
      fail(use, v.init_error);
    }
    if (v.unsized) fail(use, "'" + v.name + "' is an external array of unknown size");
    BufferDecl b = buffer_of(v, "");
    const std::uint64_t bytes = bytes_of(v, b.dtype);
    if (v.space == ".const") {
      check_size(v, b.dtype, limits::kConstant, "constant memory a GPU has");
      const_bytes_ += bytes;  // each at most 64 KB, so no overflow
      if (const_bytes_ > limits::kConstant)
        bad_input(v.loc, "the .const data '" + k_.name + "' uses takes " + std::to_string(const_bytes_) + " bytes with '" +
                             v.name + "', above the " + limits::kb_text(limits::kConstant) + " of constant memory a GPU has (" +
                             limits::source() + ")");
    } else if (m_.address_size == 32 && bytes > (std::uint64_t(1) << 32)) {
      bad_input(v.loc, "'" + v.name + "' takes " + std::to_string(bytes) + " bytes, more than the 4 GB a 32-bit address space (.address_size 32) holds");
    }
    b.from_host = !v.has_init && v.space == ".const";
    b.space = v.space == ".const" ? Space::Const : Space::Global;
    b.read_only = v.space == ".const";
    b.init = v.init;
    std::uint32_t id = std::uint32_t(p_.buffers.size());
    vars_[v.name] = id;
    p_.buffers.push_back(b);
    return id;
  }

  // A .shared or .local array; f is null for module-level data.
  void add_var(Frame* f, const VarDecl& v) {
    if (f && v.space == ".param") {  // a call's argument slot
      f->params[v.name] = f->prefix + v.name;
      return;
    }
    if (v.space != ".shared" && v.space != ".local") {
      if (f) fail(v.loc, v.space + " variables inside a function body are not supported ('" + v.name + "')");
      return;
    }
    // .shared data belongs to the CTA, not to a call: every inlined instance
    // of a function sees the same buffer. .local data is per call.
    const bool shared = v.space == ".shared";
    std::string key = f ? f->fn->name + ":" + v.name : v.name;
    if (f && shared) {
      if (auto it = shared_of_func_.find(key); it != shared_of_func_.end()) {
        f->vars.set(v.name, it->second);
        return;
      }
    }
    BufferDecl b = buffer_of(v, !f || f->entry ? "" : shared ? f->fn->name + ":" : f->prefix);
    b.space = shared ? Space::Shared : Space::Local;
    if (v.unsized) {
      if (!shared) bad_input(v.loc, "the .local array '" + v.name + "' needs a size");
      if (dyn_ == 0)
        bad_input(v.loc, "'" + v.name + "' is dynamic shared memory: give its size in bytes (spec key \"dynamic_shared\")");
      b.elements = dyn_ / dtype_bytes(b.dtype);  // dyn_ is at most the target's maximum (run())
    } else {
      check_size(v, b.dtype, shared ? limits::kStaticShared : limits::kLocalPerThread,
                 shared ? "static shared memory a CTA can have" : "local memory a thread can have");
    }
    std::uint32_t id = std::uint32_t(p_.buffers.size());
    p_.buffers.push_back(b);
    if (shared && !v.unsized) static_shared_.push_back(id);
    if (!f) {
      vars_[v.name] = id;
    } else {
      f->vars.set(v.name, id);
      if (shared) shared_of_func_[key] = id;
    }
  }

  // A module variable's buffer, or the reason it has none.
  bool module_var(const ptx::Operand& o, std::uint32_t* id) {
    if (auto it = vars_.find(o.name); it != vars_.end()) {
      *id = it->second;
      return true;
    }
    if (auto it = module_data_.find(o.name); it != module_data_.end()) {
      *id = add_module_data(*it->second, o.loc);
      return true;
    }
    return false;
  }

  // The checks called for every operand are small enough to be inlined; the
  // messages of their failures are built out of line (cold, below).
  std::uint32_t reg_of(const ptx::Operand& o) override {
    const std::uint32_t* r = o.kind == ptx::Operand::Kind::Name ? find_reg(o.name) : nullptr;
    if (!r) not_a_register(o);
    return *r;
  }
  [[noreturn, gnu::noinline, gnu::cold]] static void not_a_register(const ptx::Operand& o) {
    switch (o.kind) {
      case ptx::Operand::Kind::Name: bad_input(o.loc, "'" + str(o.name) + "' is not a declared register");
      case ptx::Operand::Kind::Sink: bad_input(o.loc, "expected a register here, found the sink '_'");
      case ptx::Operand::Kind::Address: bad_input(o.loc, "expected a register here, found an address [..]");
      case ptx::Operand::Kind::Vector: bad_input(o.loc, "expected a register here, found a list of operands");
      default: bad_input(o.loc, "expected a register here, found a constant");
    }
  }

  // A name that denotes memory or a parameter: a variable of this body, a
  // module variable, or (in the kernel itself) a kernel parameter.
  bool named_memory(const ptx::Operand& o, std::int64_t offset, tileverify::Operand* out) {
    std::uint32_t id = 0;
    if (const std::uint32_t* v = f_->vars.find(o.name)) {
      *out = tileverify::Operand::buffer(*v, offset);
    } else if (module_var(o, &id)) {
      *out = tileverify::Operand::buffer(id, offset);
    } else if (auto it = params_.find(o.name); f_->entry && it != params_.end()) {
      *out = tileverify::Operand::param(it->second, offset);
    } else if (f_->params.count(o.name)) {
      fail(o.loc, "the address of the .param variable '" + str(o.name) + "' is taken; only ld.param / st.param on it are supported");
    } else {
      return false;
    }
    return true;
  }

  static bool special_of(std::string_view n, Special* s) {
    static constexpr std::pair<std::string_view, Special> sp[] = {
        {"%tid.x", Special::TidX},     {"%tid.y", Special::TidY},       {"%tid.z", Special::TidZ},
        {"%ntid.x", Special::NtidX},   {"%ntid.y", Special::NtidY},     {"%ntid.z", Special::NtidZ},
        {"%ctaid.x", Special::CtaidX}, {"%ctaid.y", Special::CtaidY},   {"%ctaid.z", Special::CtaidZ},
        {"%nctaid.x", Special::NctaidX}, {"%nctaid.y", Special::NctaidY}, {"%nctaid.z", Special::NctaidZ},
        {"%laneid", Special::LaneId},  {"%warpid", Special::WarpId}};
    static constexpr std::pair<std::string_view, Special> cluster[] = {
        {"%cluster_ctaid.x", Special::ClusterCtaidX},   {"%cluster_ctaid.y", Special::ClusterCtaidY},
        {"%cluster_ctaid.z", Special::ClusterCtaidZ},   {"%cluster_nctaid.x", Special::ClusterNctaidX},
        {"%cluster_nctaid.y", Special::ClusterNctaidY}, {"%cluster_nctaid.z", Special::ClusterNctaidZ},
        {"%cluster_ctarank", Special::ClusterCtarank},  {"%cluster_nctarank", Special::ClusterNctarank},
        {"%clusterid.x", Special::ClusteridX},          {"%clusterid.y", Special::ClusteridY},
        {"%clusterid.z", Special::ClusteridZ},          {"%nclusterid.x", Special::NclusteridX},
        {"%nclusterid.y", Special::NclusteridY},        {"%nclusterid.z", Special::NclusteridZ},
        {"%is_explicit_cluster", Special::IsExplicitCluster}};
    // Registers (%r12, %rd3, %f7) mostly differ in length from all of these.
    if (n.size() < 6 || n[0] != '%') return false;
    // cooperative_groups' thread_group constructor stores a pointer into
    // this reserved shared memory in every group object, used or not (at
    // -G the store stays): an opaque value, reported only where it is used.
    if (n[1] == 'r' && n.substr(0, 21) == "%reserved_smem_offset") {
      *s = Special::ReservedSmem;
      return true;
    }
    if (n.size() <= 9)
      for (const auto& [name, special] : sp)
        if (name == n) {
          *s = special;
          return true;
        }
    if (n.size() >= 12 && (n[1] == 'c' || n[1] == 'n' || n[1] == 'i'))
      for (const auto& [name, special] : cluster)
        if (name == n) {
          *s = special;
          return true;
        }
    return false;
  }

  // Registers and integers here, small enough to be inlined; the rest in
  // value_rest().
  tileverify::Operand value(const ptx::Operand& o) override {
    if (o.kind == ptx::Operand::Kind::Name) {
      Special s;
      if (special_of(o.name, &s)) return tileverify::Operand::special(s);
      if (is_word(o.name, "WARP_SZ")) return tileverify::Operand::integer(32);  // CUDA's warpSize: a PTX constant
      if (const std::uint32_t* r = find_reg(o.name)) return tileverify::Operand::reg(*r);
    } else if (o.kind == ptx::Operand::Kind::Int) {
      return tileverify::Operand::integer(o.value);
    }
    return value_rest(o);
  }
  // value() of a name that is no register (value() tried those), or of
  // anything but a name or an integer.
  [[gnu::noinline]] tileverify::Operand value_rest(const ptx::Operand& o) {
    switch (o.kind) {
      case ptx::Operand::Kind::Name: {
        tileverify::Operand mem;
        if (named_memory(o, 0, &mem)) return mem;
        if (o.name[0] == '!') fail(o.loc, "negated predicate operands are not supported");
        unresolved_name(o, "is not a declared register, variable or parameter");
      }
      case ptx::Operand::Kind::Int: return tileverify::Operand::integer(o.value);
      case ptx::Operand::Kind::F32Bits: {
        std::uint32_t bits = std::uint32_t(o.value);
        if ((bits & 0x7f800000u) == 0x7f800000u) return tileverify::Operand::integer(o.value);  // inf, NaN: by bits
        p_.constants.push_back(Rational::from_f32_bits(bits));
        return tileverify::Operand{tileverify::Operand::Kind::Float, std::uint32_t(p_.constants.size() - 1), 0};
      }
      case ptx::Operand::Kind::F64Bits: {
        std::uint64_t bits = std::uint64_t(o.value);
        if ((bits & 0x7ff0000000000000ull) == 0x7ff0000000000000ull) return tileverify::Operand::integer(o.value);
        p_.constants.push_back(Rational::from_f64_bits(bits));
        return tileverify::Operand{tileverify::Operand::Kind::Float, std::uint32_t(p_.constants.size() - 1), 0};
      }
      case ptx::Operand::Kind::Address: return address(o);
      default: break;
    }
    bad_input(o.loc, o.kind == ptx::Operand::Kind::Sink ? "the sink '_' cannot be read" : "expected a register or a constant here, found a list of operands");
  }

  tileverify::Operand address(const ptx::Operand& o) override {
    if (o.kind != ptx::Operand::Kind::Address) bad_input(o.loc, "expected an address [..]");
    if (o.name.empty()) fail(o.loc, "absolute addresses are not supported");
    if (!o.elements.empty()) fail(o.loc, "tensor-map addresses [map, {coordinates}] are not supported");
    if (const std::uint32_t* r = find_reg(o.name)) return tileverify::Operand::reg(*r, o.value);
    tileverify::Operand mem;
    if (named_memory(o, o.value, &mem)) return mem;
    unresolved_name(o, "in an address is not a declared register, variable or parameter");
  }

  // A name that is no register, variable or parameter of the body. Some are
  // valid PTX outside the structured-CTA class: an environment register, the
  // address of a function or kernel (unsupported, saying so); anything else
  // is bad input: "'x' " + what.
  [[noreturn, gnu::noinline, gnu::cold]] void unresolved_name(const ptx::Operand& o, const char* what) {
    const std::string name = str(o.name);
    if (is_envreg(o.name))
      fail(o.loc, "'" + name + "' is an environment register (%envreg0..%envreg31, set by the driver; PTX ISA, " +
                      "Special Registers): cooperative groups' this_grid() reads %envreg1 and %envreg2 to find its " +
                      "grid barrier, and grid.sync() makes the CTAs of a launch wait for each other through a " +
                      "counter in global memory, outside the structured-CTA class, whose CTAs synchronize only " +
                      "within themselves");
    if (const char* why = unmodelled_special(o.name))
      fail(o.loc, "'" + name + "' is a PTX special register tileverify does not model (PTX ISA, Special Registers): " +
                      why);
    if (const Kernel* fn = function(o.name))
      fail(o.loc, address_taken(name, fn->is_entry, (fn->is_entry ? "the .entry at " : "the .func at ") + fn->loc.text()));
    if (auto it = m_.declared_functions.find(o.name); it != m_.declared_functions.end())
      fail(o.loc, address_taken(name, false, "declared at " + it->second.text()));
    bad_input(o.loc, "'" + name + "' " + what);
  }

  // %envreg0 .. %envreg31.
  // Special registers that special_of() does not give: valid PTX (so the
  // kernel is unsupported, not bad input), with why each is left out.
  static const char* unmodelled_special(std::string_view n) {
    auto starts = [&](std::string_view p) { return n.substr(0, p.size()) == p; };
    if (starts("%clock") || starts("%globaltimer"))
      return "a clock or timer: its value depends on the hardware and the schedule, not on the kernel's inputs";
    static constexpr std::string_view others[] = {
        "%smid", "%nsmid", "%gridid", "%nwarpid", "%lanemask_eq", "%lanemask_le", "%lanemask_lt", "%lanemask_ge",
        "%lanemask_gt", "%dynamic_smem_size", "%total_smem_size", "%aggr_smem_size", "%current_graph_exec"};
    for (std::string_view o : others)
      if (n == o) return "not modelled yet";
    if (starts("%pm")) return "a performance monitor register";
    return nullptr;
  }

  static bool is_envreg(std::string_view n) {
    constexpr std::string_view stem = "%envreg";
    if (n.size() <= stem.size() || n.size() > stem.size() + 2 || n.substr(0, stem.size()) != stem) return false;
    int v = 0;
    for (char c : n.substr(stem.size())) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    return v < 32 && !(n.size() == stem.size() + 2 && n[stem.size()] == '0');  // %envreg07 is no register
  }

  // The message for the address of a function (a function pointer) or of a
  // kernel (what nvcc passes to a device-side launch) used as a value.
  static std::string address_taken(const std::string& name, bool kernel, const std::string& where) {
    if (kernel)
      return "the address of the kernel '" + name + "' (" + where + ") is taken: nvcc does this to launch it from " +
             "device code (dynamic parallelism, kernel<<<...>>> in a kernel), which is outside the structured-CTA " +
             "class: " + kDeviceLaunch;
    return "the address of the function '" + name + "' (" + where + ") is taken: " + kNoFunctionPointers;
  }
  static constexpr const char* kNoFunctionPointers =
      "function pointers and calls through them are outside the structured-CTA class, in which every call names "
      "its callee (tileverify inlines each call, so the code a thread runs cannot depend on a value)";

  // d = the destination registers of o, written into d itself: a returned
  // SmallVector was built and then copied over.
  void set_dsts(decltype(Instr::dst)& d, const ptx::Operand& o) override {
    d.clear();
    if (o.kind != ptx::Operand::Kind::Vector) {
      // resize, not push_back: inlined here, push_back's growth path made
      // GCC warn (falsely) of a write past a zero-length allocation.
      d.resize(1, reg_of(o));
      return;
    }
    d.reserve(o.elements.size());
    for (const auto& e : o.elements) d.push_back(reg_of(e));
  }

  void need(const Instruction& in, std::size_t n) {
    if (in.operands.size() != n) wrong_count(in, n);
  }
  [[noreturn, gnu::noinline, gnu::cold]] static void wrong_count(const Instruction& in, std::size_t n) {
    const std::string msg =
        "'" + str(in.opcode) + "' takes " + std::to_string(n) + " operands, not " + std::to_string(in.operands.size());
    // The extra operand of a cache-policy qualifier is valid PTX, one
    // tileverify does not model; any other count is wrong.
    if (in.opcode.find("cache_hint") != std::string_view::npos) fail(in.loc, msg + " (cache policies are not supported)");
    bad_input(in.loc, msg);
  }

  // nvcc's expf (without fast math) builds 2^n from the float bits of a
  // rounding trick: j = fma.rm(t, 252, 0f4B400001); bits(j) << 23 is the
  // float 2^(j - 12583039). As reals that is ex2(j - 12583039), and the
  // kernel's e^x = 2^(x*log2e - n) * 2^n needs nothing else. The pattern
  //   mov.b32 %rA, %fJ;  shl.b32 %rC, %rA, 23;  mov.b32 %fD, %rC
  // with %fJ from that fma.rm is rewritten one for one:
  //   shl -> add.f32 %rC, %fJ, -12583039;  mov -> ex2.approx.f32 %fD, %rC.
  // Marks the statements of fn that are part of it in *marks (one entry a
  // statement, left empty if there are none): kIdiomEx2 for the last mov, and
  // for the shl the index in idiom_regs_ of the fma.rm register.
  void find_idioms(const Kernel& fn, std::vector<std::int32_t>* marks) {
    auto idiom_shl = [](const Instruction& shl) {
      return is_word(shl.opcode, "shl.b32") && shl.operands.size() == 3 &&
             shl.operands[2].kind == ptx::Operand::Kind::Int && shl.operands[2].value == 23;
    };
    // Most bodies have no shl.b32 by 23: then there is nothing to index.
    if (std::none_of(fn.body.begin(), fn.body.end(), [&](const Statement& s) {
          return s.kind == Statement::Kind::Instruction && idiom_shl(s.instr);
        }))
      return;
    std::vector<const Instruction*> code;
    std::vector<std::size_t> statement;  // of each instruction in code
    code.reserve(fn.body.size());
    statement.reserve(fn.body.size());
    for (std::size_t i = 0; i < fn.body.size(); ++i)
      if (fn.body[i].kind == Statement::Kind::Instruction) {
        code.push_back(&fn.body[i].instr);
        statement.push_back(i);
      }
    // register -> (the last instruction that writes it, how many do)
    NameTable names;  // register -> its index in def
    std::vector<std::pair<std::size_t, int>> def;
    def.reserve(code.size());
    for (std::size_t i = 0; i < code.size(); ++i)
      if (!code[i]->operands.empty() && code[i]->operands[0].kind == ptx::Operand::Kind::Name) {
        const std::string_view name = code[i]->operands[0].name;
        const std::uint32_t* at = names.find(name);
        if (!at) {
          names.set(name, std::uint32_t(def.size()));
          def.emplace_back(i, 0);
          at = names.find(name);
        }
        def[*at].first = i;
        ++def[*at].second;
      }
    auto defined_by = [&](std::string_view reg, const char* opcode_prefix) -> const Instruction* {
      const std::uint32_t* at = names.find(reg);
      if (!at || def[*at].second != 1) return nullptr;
      const Instruction* d = code[def[*at].first];
      return d->opcode.rfind(opcode_prefix, 0) == 0 ? d : nullptr;
    };
    // The f32 bits an operand holds: an immediate, or a register set once from one.
    auto f32_bits = [&](const ptx::Operand& o, std::int64_t* bits) {
      if (o.kind == ptx::Operand::Kind::F32Bits) {
        *bits = o.value;
        return true;
      }
      const Instruction* mv = o.kind == ptx::Operand::Kind::Name ? defined_by(o.name, "mov.") : nullptr;
      if (!mv || mv->operands.size() != 2 || mv->operands[1].kind != ptx::Operand::Kind::F32Bits) return false;
      *bits = mv->operands[1].value;
      return true;
    };
    for (std::size_t i = 0; i < code.size(); ++i) {
      const Instruction& shl = *code[i];
      if (!idiom_shl(shl)) continue;
      const Instruction* bits = defined_by(shl.operands[1].name, "mov.b32");
      if (!bits || bits->operands.size() != 2) continue;
      const Instruction* magic = defined_by(bits->operands[1].name, "fma.rm");
      std::int64_t addend = 0;
      if (!magic || magic->operands.size() != 4 || !f32_bits(magic->operands[3], &addend) || addend != 0x4B400001)
        continue;
      for (std::size_t k = i + 1; k < code.size(); ++k) {
        const Instruction& mv = *code[k];
        if (is_word(mv.opcode, "mov.b32") && mv.operands.size() == 2 && mv.operands[1].name == shl.operands[0].name) {
          if (marks->empty()) marks->assign(fn.body.size(), kNoIdiom);
          (*marks)[statement[i]] = std::int32_t(idiom_regs_.size());
          idiom_regs_.push_back(bits->operands[1].name);
          (*marks)[statement[k]] = kIdiomEx2;
          break;
        }
      }
    }
  }

  // The first part of an opcode, as lower() dispatches on it.
  enum class Base : std::uint8_t {
    Other, Mov, Cvta, Unary, Binary, Mul, Mad, Bfi, Bfe, Fma, Selp, Setp, Cvt, Ld, St, Bra, Ret, Exit, Trap, Call,
    Atom, Red, Cp, Wmma, Bar, Barrier, Shfl, Vote, Redux, Mma, LdMatrix, Fence,
    Async, Wgmma, Elect, SetMaxNReg,
  };
  struct BaseInfo {
    Base base = Base::Other;
    Opcode op = Opcode::Mov;  // Unary, Binary: the operation
  };
  // A switch on the length first: each comparison is then of a known size.
  static BaseInfo base_of(std::string_view w) {
    using B = Base;
    switch (w.size()) {
      case 2:
        if (is_word(w, "ld")) return {B::Ld};
        if (is_word(w, "st")) return {B::St};
        if (is_word(w, "or")) return {B::Binary, Opcode::Or};
        if (is_word(w, "cp")) return {B::Cp};
        break;
      case 3:
        if (is_word(w, "mov")) return {B::Mov};
        if (is_word(w, "add")) return {B::Binary, Opcode::Add};
        if (is_word(w, "mul")) return {B::Mul};
        if (is_word(w, "mad")) return {B::Mad};
        if (is_word(w, "fma")) return {B::Fma};
        if (is_word(w, "cvt")) return {B::Cvt};
        if (is_word(w, "bra")) return {B::Bra};
        if (is_word(w, "shl")) return {B::Binary, Opcode::Shl};
        if (is_word(w, "shr")) return {B::Binary, Opcode::Shr};
        if (is_word(w, "sub")) return {B::Binary, Opcode::Sub};
        if (is_word(w, "and")) return {B::Binary, Opcode::And};
        if (is_word(w, "xor")) return {B::Binary, Opcode::Xor};
        if (is_word(w, "min")) return {B::Binary, Opcode::Min};
        if (is_word(w, "max")) return {B::Binary, Opcode::Max};
        if (is_word(w, "div")) return {B::Binary, Opcode::Div};
        if (is_word(w, "rem")) return {B::Binary, Opcode::Rem};
        if (is_word(w, "neg")) return {B::Unary, Opcode::Neg};
        if (is_word(w, "abs")) return {B::Unary, Opcode::Abs};
        if (is_word(w, "not")) return {B::Unary, Opcode::Not};
        if (is_word(w, "rcp")) return {B::Unary, Opcode::Rcp};
        if (is_word(w, "ex2")) return {B::Unary, Opcode::Ex2};
        if (is_word(w, "lg2")) return {B::Unary, Opcode::Lg2};
        if (is_word(w, "ret")) return {B::Ret};
        if (is_word(w, "bfi")) return {B::Bfi};
        if (is_word(w, "bfe")) return {B::Bfe};
        if (is_word(w, "red")) return {B::Red};
        if (is_word(w, "bar")) return {B::Bar};
        if (is_word(w, "mma")) return {B::Mma};
        break;
      case 4:
        if (is_word(w, "setp")) return {B::Setp};
        if (is_word(w, "selp")) return {B::Selp};
        if (is_word(w, "cvta")) return {B::Cvta};
        if (is_word(w, "sqrt")) return {B::Unary, Opcode::Sqrt};
        if (is_word(w, "tanh")) return {B::Unary, Opcode::Tanh};
        if (is_word(w, "shfl")) return {B::Shfl};
        if (is_word(w, "vote")) return {B::Vote};
        if (is_word(w, "exit")) return {B::Exit};
        if (is_word(w, "trap")) return {B::Trap};
        if (is_word(w, "call")) return {B::Call};
        if (is_word(w, "atom")) return {B::Atom};
        if (is_word(w, "wmma")) return {B::Wmma};
        if (is_word(w, "mapa")) return {B::Async};
        break;
      case 5:
        if (is_word(w, "rsqrt")) return {B::Unary, Opcode::Rsqrt};
        if (is_word(w, "redux")) return {B::Redux};
        if (is_word(w, "fence")) return {B::Fence};
        if (is_word(w, "wgmma")) return {B::Wgmma};
        if (is_word(w, "elect")) return {B::Elect};
        if (is_word(w, "brkpt")) return {B::Trap};
        break;
      case 6:
        if (is_word(w, "membar")) return {B::Fence};
        break;
      case 7:
        if (is_word(w, "barrier")) return {B::Barrier};
        break;
      case 8:
        if (is_word(w, "ldmatrix")) return {B::LdMatrix};
        if (is_word(w, "mbarrier")) return {B::Async};
        if (is_word(w, "stmatrix")) return {B::Wgmma};
        if (is_word(w, "prefetch")) return {B::Async};
        break;
      case 9:
        if (is_word(w, "nanosleep")) return {B::Async};
        if (is_word(w, "prefetchu")) return {B::Async};
        if (is_word(w, "tensormap")) return {B::Async};
        break;
      case 10:
        if (is_word(w, "setmaxnreg")) return {B::SetMaxNReg};
        break;
      default: break;
    }
    return {};
  }

  static bool cmp_of(std::string_view word, Cmp* c) {
    static constexpr std::pair<std::string_view, Cmp> cmps[] = {
        {"lt", Cmp::LT}, {"le", Cmp::LE}, {"gt", Cmp::GT}, {"ge", Cmp::GE}, {"eq", Cmp::EQ}, {"ne", Cmp::NE},
        {"lo", Cmp::LT}, {"ls", Cmp::LE}, {"hi", Cmp::GT}, {"hs", Cmp::GE}, {"ltu", Cmp::LT}, {"leu", Cmp::LE},
        {"gtu", Cmp::GT}, {"geu", Cmp::GE}, {"equ", Cmp::EQ}, {"neu", Cmp::NE}};
    for (const auto& [name, cmp] : cmps)
      if (name == word) {
        *c = cmp;
        return true;
      }
    return false;
  }

  // What lower() reads off an opcode before looking at its operands: its
  // parts, its type parts and its first part's meaning. A kernel has few
  // distinct opcodes (red_ref: 8 in 250 instructions), so each is split and
  // matched once and then found by a hash of its text.
  struct DecodedOpcode {
    explicit DecodedOpcode(std::string_view op) : text(op), parts(text) {
      // The last type-like part is the operation type; cvt needs the first two too.
      for (std::size_t i = 1; i < parts.size(); ++i) {
        DType t;
        if (!parse_dtype(parts[i], &t)) continue;
        if (ntypes == 0) first_type = t;
        if (ntypes == 1) second_type = t;
        last_type = t;
        ++ntypes;
      }
      info = base_of(parts[0]);
      space = space_of(parts);
      param = has_part(parts, "param");
    }
    DecodedOpcode(const DecodedOpcode&) = delete;  // parts are views into text
    DecodedOpcode& operator=(const DecodedOpcode&) = delete;
    const std::string text;
    const OpParts parts;
    std::size_t ntypes = 0;
    DType first_type = DType::B32, second_type = DType::B32, last_type = DType::B32;
    BaseInfo info;
    // What ld and st, most of a kernel, ask of every instruction.
    Space space = Space::Global;  // space_of(parts)
    bool param = false;           // a .param part
  };

  // The table's slots keep an opcode's length and its first and last 8
  // bytes, which for up to 16 bytes (most opcodes) are the whole text: a
  // lookup then compares in the slot, without following the entry pointer,
  // and the hash is two independent multiplications.
  struct OpcodeSlot {
    std::uint64_t head = 0, tail = 0;
    std::uint32_t length = ~std::uint32_t(0);  // none: an empty slot
    const DecodedOpcode* entry = nullptr;
  };
  static void opcode_key(std::string_view op, std::uint64_t* head, std::uint64_t* tail) {
    const std::size_t n = op.size();
    if (n <= 8) {
      *head = load_upto8(op.data(), n);
      *tail = 0;
    } else {
      std::memcpy(head, op.data(), 8);
      std::memcpy(tail, op.data() + n - 8, 8);
    }
  }
  static std::size_t opcode_hash(std::uint64_t head, std::uint64_t tail, std::size_t n) {
    const std::uint64_t h = head * 0x9E3779B97F4A7C15ull ^ tail * 0xC2B2AE3D27D4EB4Full ^ n;
    return std::size_t(h ^ (h >> 29) ^ (h >> 47));
  }

  const DecodedOpcode& decode(std::string_view op) {
    std::uint64_t head, tail;
    opcode_key(op, &head, &tail);
    const std::size_t n = op.size();
    // The last two opcodes first: code alternates between a few (ld, add,
    // ld, add ...), and these compares cost less than the hash and the slot.
    for (const OpcodeSlot& m : recent_)
      if (m.length == n && m.head == head && m.tail == tail && (n <= 16 || m.entry->text == op)) return *m.entry;
    const DecodedOpcode& d = decode_hashed(op, head, tail);
    recent_[1] = recent_[0];
    recent_[0] = OpcodeSlot{head, tail, std::uint32_t(n), &d};
    return d;
  }
  const DecodedOpcode& decode_hashed(std::string_view op, std::uint64_t head, std::uint64_t tail) {
    const std::size_t n = op.size();
    if (4 * (decoded_.size() + 1) > 3 * decoded_slots_.size()) {
      // Grow the table (open addressing, at most 3/4 full) and re-place every entry.
      std::vector<OpcodeSlot> old = std::move(decoded_slots_);
      decoded_slots_.assign(std::max<std::size_t>(32, 2 * old.size()), OpcodeSlot{});
      const std::size_t mask = decoded_slots_.size() - 1;
      for (const OpcodeSlot& o : old) {
        if (!o.entry) continue;
        std::size_t i = opcode_hash(o.head, o.tail, o.length) & mask;
        while (decoded_slots_[i].entry) i = (i + 1) & mask;
        decoded_slots_[i] = o;
      }
    }
    const std::size_t mask = decoded_slots_.size() - 1;
    for (std::size_t i = opcode_hash(head, tail, n) & mask;; i = (i + 1) & mask) {
      OpcodeSlot& slot = decoded_slots_[i];
      if (slot.length == n && slot.head == head && slot.tail == tail && (n <= 16 || slot.entry->text == op))
        return *slot.entry;
      if (!slot.entry) {
        decoded_.push_back(std::make_unique<DecodedOpcode>(op));
        slot = OpcodeSlot{head, tail, std::uint32_t(n), decoded_.back().get()};
        return *slot.entry;
      }
    }
  }

  // idiom: find_idioms()' mark for this instruction.
  void lower(const Instruction& pin, std::int32_t idiom) {
    // Built in place at the end of the code; the few paths that emit other
    // instructions instead (calls, .param slot moves) take it out first. On
    // an error the whole Program is dropped, half-built instruction and all.
    Instr& in = p_.code.emplace_back(Fresh<Instr>{});
    in.loc = pin.loc;
    if (in.loc.source.empty()) in.loc.source = call_source_;  // a callee without .loc lines: the call's line
    if (idiom >= 0) {
      in.op = Opcode::Add;
      in.type = DType::F32;
      in.dst = {reg_of(pin.operands[0])};
      in.src = {value(ptx::Operand{ptx::Operand::Kind::Name, idiom_regs_[std::size_t(idiom)], 0, {}, {}, pin.loc})};
      p_.constants.push_back(Rational(-12583039));
      in.src.push_back(tileverify::Operand{tileverify::Operand::Kind::Float, std::uint32_t(p_.constants.size() - 1), 0});
      return;
    }
    if (idiom == kIdiomTf32) {  // x rounded to tf32 for an mma operand: x over the reals (lower_tf32.cpp)
      in.op = Opcode::Mov;
      in.type = DType::B32;
      in.dst = {reg_of(pin.operands[0])};
      in.src = {value(pin.operands[1])};
      return;
    }
    if (idiom == kIdiomEx2) {
      in.op = Opcode::Ex2;
      in.type = DType::F32;
      in.dst = {reg_of(pin.operands[0])};
      in.src = {value(pin.operands[1])};
      return;
    }
    if (!pin.guard.empty()) {
      const std::uint32_t* g = find_reg(pin.guard);
      if (!g) bad_input(pin.loc, "'" + str(pin.guard) + "' is not a declared register");
      in.guard = std::int32_t(*g);
      in.guard_negated = pin.guard_negated;
    }
    const DecodedOpcode& decoded = decode(pin.opcode);
    const OpParts& parts = decoded.parts;
    const std::size_t ntypes = decoded.ntypes;
    const DType first_type = decoded.first_type, second_type = decoded.second_type, last_type = decoded.last_type;
    auto has = [&](const auto& m) { return has_part(parts, m); };
    in.type = ntypes == 0 ? DType::B32 : last_type;
    const auto& ops = pin.operands;
    auto simple = [&](Opcode op, std::size_t nsrc) {
      need(pin, nsrc + 1);
      in.op = op;
      set_dsts(in.dst, ops[0]);
      in.src.reserve(nsrc);
      for (std::size_t i = 1; i <= nsrc; ++i) in.src.push_back(value(ops[i]));
      if (!ops[0].pred_out.empty()) fail(ops[0].loc, "a predicate output '|p' is not supported on '" + str(pin.opcode) + "'");
    };

    const BaseInfo info = decoded.info;
    switch (info.base) {
      case Base::Mov:
      case Base::Cvta:
        need(pin, 2);
        if (lower_timer(*this, pin, in)) break;
        in.op = Opcode::Mov;
        if (ops[1].kind == ptx::Operand::Kind::Vector) {  // pack
          set_dsts(in.dst, ops[0]);
          in.src.reserve(ops[1].elements.size());
          for (const auto& e : ops[1].elements) in.src.push_back(value(e));
        } else if (ops[0].kind == ptx::Operand::Kind::Vector) {
          // A vector destination unpacks; the sink '_' drops its half
          // (mov.b32 {_, %rs1}, %r2: Triton's sm_90 code).
          in.dst.clear();
          for (const auto& e : ops[0].elements)
            in.dst.push_back(e.kind == ptx::Operand::Kind::Sink ? kNoReg : reg_of(e));
          in.src.push_back(value(ops[1]));
        } else {
          set_dsts(in.dst, ops[0]);
          in.src.push_back(value(ops[1]));
        }
        break;
      case Base::Unary: simple(info.op, 1); break;
      case Base::Binary: simple(info.op, 2); break;
      case Base::Mul: simple(has("wide") ? Opcode::MulWide : (has("hi") ? Opcode::MulHi : Opcode::Mul), 2); break;
      case Base::Mad:
        if (has("hi")) fail(pin.loc, "mad.hi is not supported");
        simple(has("wide") ? Opcode::MadWide : Opcode::Mad, 3);
        break;
      case Base::Bfi: simple(Opcode::Bfi, 4); break;
      case Base::Bfe: simple(Opcode::Bfe, 3); break;
      case Base::Fma: simple(Opcode::Fma, 3); break;
      case Base::Selp: simple(Opcode::Selp, 3); break;
      case Base::Setp: {
        if (ops.size() == 4) fail(pin.loc, "setp with a combining predicate is not supported");
        simple(Opcode::Setp, 2);
        bool found = false;
        for (std::size_t i = 1; i < parts.size() && !found; ++i) found = cmp_of(parts[i], &in.cmp);
        if (!found) fail(pin.loc, "unsupported comparison in '" + str(pin.opcode) + "'");
        if (!ops[0].pred_out.empty()) fail(ops[0].loc, "setp with two predicate outputs is not supported");
        break;
      }
      case Base::Cvt:
        if (has("f16x2") || has("bf16x2")) {
          // cvt.rn{.relu}{.satfinite}.{f16,bf16}x2.f32 d, a, b: d packs cvt(a) in its
          // high half and cvt(b) in its low half (a Pair: f low, g high).
          if (ops.size() != 3 || ntypes != 2 || second_type != DType::F32 || has("rs"))
            fail(pin.loc, "'" + str(pin.opcode) + "' is not supported: of the packed conversions only cvt.{rn,rz,rm,rp}" +
                              "{.relu}{.satfinite}.{f16,bf16}x2.f32 d, a, b are");
          simple(Opcode::Cvt, 2);
          in.type = DType::B32;
          in.src_type = DType::F32;
          in.mode = has("relu") ? 1 : 0;
        } else {
          simple(Opcode::Cvt, 1);
          in.saturate = has("sat");
          in.mode = has("relu") ? 1 : 0;
          if (ntypes != 2) bad_input(pin.loc, "cvt needs a destination and a source type");
          in.type = first_type;
          in.src_type = second_type;
        }
        break;
      case Base::Ld:
      case Base::St: {
        const bool load = info.base == Base::Ld;
        if (decoded.param && ops.size() == 2 && ops[load ? 1 : 0].kind == ptx::Operand::Kind::Address &&
            f_->params.count(ops[load ? 1 : 0].name))
          return param_slot_access(pin, take_back(), load, ntypes == 0 ? DType::B32 : last_type);
        in.op = load ? Opcode::Ld : Opcode::St;
        in.space = decoded.space;
        in.cluster_space = decoded.space == Space::Shared && has("shared::cluster");
        // Tested on the locals, not on in: the compiler read in.op and
        // in.space back as one word just after storing them as bytes, which
        // stalls (a load cannot take its value from two smaller stores).
        if (decoded.space == Space::Const && !load) bad_input(pin.loc, "a store to .const memory, which is read-only");
        need(pin, 2);
        if (load) {
          set_dsts(in.dst, ops[0]);
          in.src.push_back(address(ops[1]));
        } else {
          in.src.reserve(1 + (ops[1].kind == ptx::Operand::Kind::Vector ? ops[1].elements.size() : 1));
          in.src.push_back(address(ops[0]));
          if (ops[1].kind == ptx::Operand::Kind::Vector)
            for (const auto& e : ops[1].elements) in.src.push_back(value(e));
          else
            in.src.push_back(value(ops[1]));
        }
        break;
      }
      case Base::Bra:
        need(pin, 1);
        in.op = Opcode::Bra;
        f_->branches.emplace_back(std::uint32_t(p_.code.size() - 1), &ops[0]);  // resolved at the end of the body
        break;
      case Base::Ret:
      case Base::Exit:
        if (info.base == Base::Ret && !f_->entry) {
          in.op = Opcode::Bra;  // back to the caller: the end of this inlined instance
          f_->returns.push_back(std::uint32_t(p_.code.size() - 1));
        } else {
          in.op = Opcode::Ret;
        }
        break;
      case Base::Trap:
        need(pin, 0);
        in.op = Opcode::Trap;
        // brkpt: on a GPU with no debugger attached the launch fails, as for
        // trap (tools/gpu_checks/brkpt_check.cu); mode 2 names it in the report.
        if (is_word(parts[0], "brkpt")) in.mode = 2;
        break;
      case Base::Call: return call(pin, take_back());
      case Base::Atom:
      case Base::Red: lower_atomic(*this, pin, in, parts); break;
      case Base::Cp:
        if (!(parts.size() > 1 && is_word(parts[1], "async"))) fail(pin.loc, "unsupported instruction '" + str(pin.opcode) + "'");
        cp_async(pin, in, parts);
        break;
      case Base::Wmma: wmma(pin, in, parts); break;
      case Base::Bar:
      case Base::Barrier:
        if (has("cluster")) {
          lower_async(*this, pin, in, parts);
        } else if (has("warp")) {
          need(pin, 1);
          in.op = Opcode::WarpSync;
          in.src.push_back(mask(ops[0]));
        } else if (has("sync") || parts.size() == 1 || (parts.size() == 2 && is_word(parts[1], "aligned"))) {
          in.op = Opcode::Bar;
          if (ops.empty() || ops.size() > 2) bad_input(pin.loc, "bar.sync takes a barrier id and an optional thread count");
          for (const auto& o : ops) {
            if (o.kind != ptx::Operand::Kind::Int) fail(o.loc, "barrier ids and counts in registers are not supported");
            in.src.push_back(tileverify::Operand::integer(o.value));
          }
        } else {
          fail(pin.loc, "unsupported instruction '" + str(pin.opcode) + "'");
        }
        break;
      case Base::Shfl:
        if (!has("sync")) fail(pin.loc, "'" + str(pin.opcode) + "' is not supported: shfl without .sync (PTX before 6.0) is not");
        need(pin, 5);
        in.op = Opcode::Shfl;
        in.mode = std::uint8_t(has("up") ? ShflMode::Up : has("down") ? ShflMode::Down : has("bfly") ? ShflMode::Bfly : ShflMode::Idx);
        if (!has("up") && !has("down") && !has("bfly") && !has("idx"))
          bad_input(pin.loc, "'" + str(pin.opcode) + "' needs a mode: .up, .down, .bfly or .idx");
        in.dst = {reg_of(ops[0])};
        in.src = {value(ops[1]), value(ops[2]), value(ops[3]), mask(ops[4])};
        break;
      case Base::Vote:
        if (!has("sync")) fail(pin.loc, "'" + str(pin.opcode) + "' is not supported: vote without .sync (PTX before 6.0) is not");
        need(pin, 3);
        in.op = Opcode::Vote;
        if (has("uni")) fail(pin.loc, "vote.uni is not supported");
        in.mode = std::uint8_t(has("all") ? VoteMode::All : has("any") ? VoteMode::Any : VoteMode::Ballot);
        in.dst = {reg_of(ops[0])};
        in.src = {value(ops[1]), mask(ops[2])};
        break;
      case Base::Redux:
        need(pin, 3);
        in.op = Opcode::Redux;
        if (!has("sync")) bad_input(pin.loc, "redux needs .sync");
        if (has("add")) in.mode = std::uint8_t(AtomOp::Add);
        else if (has("min")) in.mode = std::uint8_t(AtomOp::Min);
        else if (has("max")) in.mode = std::uint8_t(AtomOp::Max);
        else if (has("and")) in.mode = std::uint8_t(AtomOp::And);
        else if (has("or")) in.mode = std::uint8_t(AtomOp::Or);
        else if (has("xor")) in.mode = std::uint8_t(AtomOp::Xor);
        else bad_input(pin.loc, "'" + str(pin.opcode) + "' needs an operation: .add, .min, .max, .and, .or or .xor");
        if (dtype_is_float(in.type)) fail(pin.loc, "redux.sync on floats (sm_100a) is not supported");
        in.dst = {reg_of(ops[0])};
        in.src = {value(ops[1]), mask(ops[2])};
        break;
      case Base::Mma: lower_mma(*this, pin, in, parts); break;
      case Base::LdMatrix:
        need(pin, 2);
        in.op = Opcode::LdMatrix;
        in.mode = std::uint8_t(has("x4") ? 4 : has("x2") ? 2 : 1);
        in.trans = has("trans");
        in.space = Space::Shared;
        set_dsts(in.dst, ops[0]);
        in.src = {address(ops[1])};
        break;
      case Base::Fence: fence(pin, in, parts); break;
      case Base::Async: lower_async(*this, pin, in, parts); break;
      case Base::Wgmma: lower_wgmma(*this, pin, in, parts); break;
      case Base::Elect:
        // elect.sync d|p, membermask (PTX ISA, elect.sync): either output may be the sink.
        need(pin, 2);
        if (!has("sync")) bad_input(pin.loc, "elect needs .sync");
        in.op = Opcode::ElectSync;
        in.dst = {ops[0].kind == ptx::Operand::Kind::Sink ? kNoReg : reg_of(ops[0]),
                  ops[0].pred_out.empty() ? kNoReg : reg_of(ptx::Operand{ptx::Operand::Kind::Name, ops[0].pred_out, 0, {}, {}, ops[0].loc})};
        in.src = {mask(ops[1])};
        break;
      case Base::SetMaxNReg:
        // setmaxnreg.{inc,dec}.sync.aligned.u32 imm: asks for a warp's register
        // count to change (warp-specialized kernels give consumers more); the
        // values of a program are the same either way.
        need(pin, 1);
        in.op = Opcode::Fence;
        in.mode = std::uint8_t(FenceKind::SetMaxNReg);
        break;
      case Base::Other: fail(pin.loc, "unsupported instruction '" + str(pin.opcode) + "'");
    }
  }

  // Removes the instruction lower() was building, to use as a template.
  Instr take_back() {
    Instr in = std::move(p_.code.back());
    p_.code.pop_back();
    return in;
  }

  // The state space an opcode names (.shared::cta is .shared); none: generic,
  // which for this model is global (shared memory is reached through .shared).
  static Space space_of(const OpParts& parts) {
    for (std::size_t i = 1; i < parts.size(); ++i) {
      const std::string_view p = parts[i];
      if (starts_with(p, "shared")) return Space::Shared;
      if (is_word(p, "local")) return Space::Local;
      if (is_word(p, "param")) return Space::Param;
      if (is_word(p, "const")) return Space::Const;
      if (is_word(p, "global")) return Space::Global;
    }
    return Space::Global;
  }

  // ---------------------------------------------------------------- calls
  // The register of one argument slot at one byte offset.
  std::uint32_t slot(const std::string& id, std::int64_t offset, DType t) {
    std::string key = id + "+" + std::to_string(offset);
    auto it = slots_.find(key);
    if (it != slots_.end()) return it->second;
    std::uint32_t r = std::uint32_t(p_.registers.size());
    p_.registers.push_back({key, t});
    slots_[key] = r;
    return r;
  }

  // ld.param / st.param on a call's argument slots (either side of the call):
  // a move from / to the slot's register, one per vector element.
  void param_slot_access(const Instruction& pin, Instr in, bool load, DType t) {
    const auto& ops = pin.operands;
    const ptx::Operand& addr = ops[load ? 1 : 0];
    const ptx::Operand& data = ops[load ? 0 : 1];
    const std::string& id = f_->param(addr.name);
    const bool vector = data.kind == ptx::Operand::Kind::Vector;
    const ptx::Operand* elems = vector ? data.elements.data() : &data;
    const std::size_t nelems = vector ? data.elements.size() : 1;
    for (std::size_t k = 0; k < nelems; ++k) {
      Instr mv = in;
      mv.op = Opcode::Mov;
      mv.type = t;
      // Wrapping, as addresses do: an offset near 2^63 in a broken file must not overflow.
      std::uint32_t r = slot(id, std::int64_t(std::uint64_t(addr.value) + k * dtype_bytes(t)), t);
      if (load) {
        mv.dst = {reg_of(elems[k])};
        mv.src = {tileverify::Operand::reg(r)};
      } else {
        mv.dst = {r};
        mv.src = {value(elems[k])};
      }
      p_.code.push_back(mv);
    }
  }

  // call[.uni] [(ret, ...),] fname[, (arg, ...)]: the callee's body is
  // inlined here, with fresh registers. Arguments and return values pass
  // through the .param slots both sides name; a register argument (the
  // non-ABI form) is copied into a slot of its own.
  void call(const Instruction& pin, Instr in) {
    const auto& ops = pin.operands;
    std::size_t i = 0;
    const ptx::Operand* rets = nullptr;
    const ptx::Operand* args = nullptr;
    if (i < ops.size() && ops[i].kind == ptx::Operand::Kind::Vector) rets = &ops[i++];
    if (i >= ops.size() || ops[i].kind != ptx::Operand::Kind::Name)
      bad_input(pin.loc, "'" + str(pin.opcode) + "' needs the name of the function it calls");
    const ptx::Operand& fname = ops[i++];
    if (i < ops.size() && ops[i].kind == ptx::Operand::Kind::Vector) args = &ops[i++];
    DType reg_type;
    if (i < ops.size() || f_->regs.find(fname.name) || f_->declared.find(fname.name, &reg_type) ||
        params_.count(fname.name))
      fail(pin.loc, "an indirect call (through '" + str(fname.name) + "'" +
                          (i < ops.size() && ops.back().kind == ptx::Operand::Kind::Name
                               ? " with the prototype '" + str(written_name(ops.back().name)) + "'"
                               : std::string()) +
                          "): " + kNoFunctionPointers);
    const Kernel* callee = function(fname.name);
    if (!callee && (fname.name == "__assertfail" || fname.name == "__assert_fail")) return assert_call(in, args);
    if (!callee) external_call(fname);
    if (callee->is_entry) bad_input(fname.loc, "call to '" + str(fname.name) + "', which is a kernel (.entry), not a .func");
    if (std::find(call_stack_.begin(), call_stack_.end(), fname.name) != call_stack_.end() || fname.name == k_.name)
      fail(pin.loc, "recursive call to '" + str(fname.name) + "': calls are inlined, and recursion cannot be");
    // Every call is inlined: a chain of functions that each call the next
    // twice doubles the code at every level, and a long chain of calls
    // nests the lowering as deep. Both are bounded, far above what nvcc's
    // code needs.
    if (call_stack_.size() >= kMaxCallDepth)
      fail(pin.loc, "calls nested more than " + std::to_string(kMaxCallDepth) + " deep are not supported (calls are inlined)");
    inlined_ += callee->body.size();
    if (inlined_ > kMaxInlined)
      fail(pin.loc, "inlining the calls of '" + k_.name + "' makes more than " + std::to_string(kMaxInlined) +
                        " statements, more than tileverify verifies");
    std::size_t nargs = args ? args->elements.size() : 0, nrets = rets ? rets->elements.size() : 0;
    if (nargs != callee->params.size() || nrets != callee->returns.size())
      bad_input(pin.loc, "call to '" + str(fname.name) + "' with " + std::to_string(nargs) + " arguments and " +
                        std::to_string(nrets) + " return values; it takes " + std::to_string(callee->params.size()) +
                        " and " + std::to_string(callee->returns.size()));

    Frame f;
    f.fn = callee;
    f.entry = false;
    f.prefix = str(fname.name) + "#" + std::to_string(++instances_) + ":";
    // A predicated call: skip the whole body when the guard is off.
    std::int64_t skip = -1;
    if (in.guard >= 0) {
      Instr br = in;
      br.op = Opcode::Bra;
      br.guard_negated = !in.guard_negated;
      skip = std::int64_t(p_.code.size());
      p_.code.push_back(br);
    }
    auto bind = [&](const ptx::Operand& actual, const Param& formal, bool is_return,
                    std::vector<std::pair<std::uint32_t, std::uint32_t>>* copy_back) {
      DType t;
      if (formal.type == ".struct") {
        t = DType::B8;
      } else if (!parse_dtype(formal.type, &t)) {
        unknown_type(formal.loc, "parameter", formal.type);
      }
      if (actual.kind == ptx::Operand::Kind::Name && f_->params.count(actual.name)) {
        f.params[formal.name] = f_->param(actual.name);
        return;
      }
      if (formal.type == ".struct") fail(actual.loc, "a by-value struct argument must be a .param variable");
      std::string id = f.prefix + formal.name;  // a register or constant argument: a slot of its own
      f.params[formal.name] = id;
      if (is_return) {
        copy_back->emplace_back(reg_of(actual), slot(id, 0, t));
        return;
      }
      Instr mv = in;
      mv.op = Opcode::Mov;
      mv.type = t;
      mv.guard = -1;
      mv.dst = {slot(id, 0, t)};
      mv.src = {value(actual)};
      p_.code.push_back(mv);
    };
    std::vector<std::pair<std::uint32_t, std::uint32_t>> copy_back;  // (caller register, return slot)
    for (std::size_t a = 0; a < nargs; ++a) bind(args->elements[a], callee->params[a], false, nullptr);
    for (std::size_t r = 0; r < nrets; ++r) bind(rets->elements[r], callee->returns[r], true, &copy_back);

    call_stack_.push_back(fname.name);
    SharedString outer_source = call_source_;
    call_source_ = in.loc.source;
    lower_body(f);
    call_source_ = outer_source;
    call_stack_.pop_back();
    std::uint32_t end = std::uint32_t(p_.code.size());
    for (std::uint32_t pc : f.returns) p_.code[pc].target = end;
    for (auto [reg, from] : copy_back) {
      Instr mv = in;
      mv.op = Opcode::Mov;
      mv.type = p_.registers[reg].dtype;
      mv.guard = -1;
      mv.dst = {reg};
      mv.src = {tileverify::Operand::reg(from)};
      p_.code.push_back(mv);
    }
    if (skip >= 0) p_.code[std::size_t(skip)].target = std::uint32_t(p_.code.size());
  }

  // The function `name` of the module, as Module::find() finds it (the
  // first of that name), through an index made at the first call: a file
  // of many functions and many calls made the linear search quadratic.
  const Kernel* function(std::string_view name) {
    if (functions_.empty())
      for (const Kernel& fn : m_.kernels) functions_.emplace(fn.name, &fn);  // emplace keeps the first
    auto it = functions_.find(name);
    return it == functions_.end() ? nullptr : it->second;
  }

  // A call to a function the file does not define: one it declares is valid
  // PTX (linked later, or the CUDA runtime's) that tileverify cannot inline;
  // one it does not even declare is bad input.
  [[noreturn]] void external_call(const ptx::Operand& fname) {
    const std::string name = str(fname.name);
    auto decl = m_.declared_functions.find(fname.name);
    if (decl == m_.declared_functions.end())
      bad_input(fname.loc, "call to '" + name + "', which this file neither defines nor declares");
    const std::string head = "call to '" + name + "', whose body is not in this file (declared at " + decl->second.text() + ")";
    for (const ExternalFunction& e : kExternalFunctions)
      if (e.prefix ? starts_with(fname.name, e.name) : fname.name == e.name)
        fail(fname.loc, head + ": it is " + e.what + ", outside the structured-CTA class: " + e.why);
    fail(fname.loc, head + ": tileverify inlines every call, so it verifies only calls to functions the file "
                           "defines (put the callee's source in the same .cu file)");
  }

  // A failed assert(): nvcc branches around a call to the CUDA runtime's
  // __assertfail(message, file, line, function, char size) (with -G, through
  // a __assert_fail wrapper defined in the file). The call becomes a Trap that
  // carries the first four arguments, so that the report can quote them.
  void assert_call(Instr in, const ptx::Operand* args) {
    in.op = Opcode::Trap;
    in.mode = 1;
    for (std::size_t a = 0; args && a < args->elements.size() && a < 4; ++a) {
      const ptx::Operand& x = args->elements[a];
      if (x.kind == ptx::Operand::Kind::Name && f_->params.count(x.name)) {
        auto it = slots_.find(f_->param(x.name) + "+0");  // what st.param put in the slot
        in.src.push_back(it == slots_.end() ? tileverify::Operand{} : tileverify::Operand::reg(it->second));
      } else {
        in.src.push_back(value(x));
      }
    }
    p_.code.push_back(in);
  }

  // ---------------------------------------------------------------- cp.async
  void cp_async(const Instruction& pin, Instr& in, const OpParts& parts) {
    const auto& ops = pin.operands;
    const std::string_view what = parts.size() > 2 ? parts[2] : "";
    if (what == "bulk" || has_part(parts, "bulk")) return lower_async(*this, pin, in, parts);
    if (what == "mbarrier") return lower_async(*this, pin, in, parts);
    if (what == "commit_group") {
      need(pin, 0);
      in.op = Opcode::CpAsyncCommit;
    } else if (what == "wait_group") {
      need(pin, 1);
      if (ops[0].kind != ptx::Operand::Kind::Int || ops[0].value < 0)
        bad_input(ops[0].loc, "cp.async.wait_group needs a constant number of groups");
      in.op = Opcode::CpAsyncWait;
      in.src = {tileverify::Operand::integer(ops[0].value)};
    } else if (what == "wait_all") {
      need(pin, 0);
      in.op = Opcode::CpAsyncWait;
      in.mode = 1;
    } else if (what == "ca" || what == "cg") {
      if (has_part(parts, "L2::cache_hint"))
        fail(pin.loc, "'" + str(pin.opcode) + "': the cache-policy operand of cp.async is not supported");
      if (ops.size() != 3 && ops.size() != 4)
        bad_input(pin.loc, "'" + str(pin.opcode) + "' takes a destination, a source, a copy size and an optional source size");
      if (ops[2].kind != ptx::Operand::Kind::Int || (ops[2].value != 4 && ops[2].value != 8 && ops[2].value != 16) ||
          (what == "cg" && ops[2].value != 16))
        bad_input(ops[2].loc, "the size of a cp.async must be 4, 8 or 16 bytes (16 for .cg)");
      in.op = Opcode::CpAsync;
      in.space = Space::Shared;
      in.src = {address(ops[0]), address(ops[1]), tileverify::Operand::integer(ops[2].value)};
      if (ops.size() == 4) in.src.push_back(value(ops[3]));
    } else {
      fail(pin.loc, "unsupported instruction '" + str(pin.opcode) + "'");
    }
  }

  // ---------------------------------------------------------------- fences
  // membar / fence in any documented form (kMembarForms, kFenceForms) is a
  // Fence: no operation. In the PTX memory model a fence orders accesses of
  // other threads only together with synchronizing accesses (the ISA's
  // membar/fence: "Instances of fence.acq_rel synchronize when combined with
  // additional memory operations as described in acquire and release
  // patterns in the Memory Consistency Model"), and the structured-CTA class
  // has none: a thread that spins on a flag branches on another thread's
  // data. So a fence adds no happens-before edge (a race across one stays a
  // race), and in its own thread program order holds already. The proxy
  // fences order the generic proxy against the async (TMA, bulk copies),
  // tensormap and alias proxies; tileverify models only the generic one.
  // Qualifiers outside the documented forms are bad input, at the first one
  // no form continues with.
  void fence(const Instruction& pin, Instr& in, const OpParts& parts) {
    const bool membar = is_word(parts[0], "membar");
    const std::string_view* forms = membar ? std::begin(kMembarForms) : std::begin(kFenceForms);
    const std::size_t nforms = membar ? std::size(kMembarForms) : std::size(kFenceForms);
    const std::size_t nq = parts.size() - 1;  // the qualifiers: parts[1..]
    auto shared_prefix = [&](const OpParts& form) {
      std::size_t k = 0;
      while (k < nq && k < form.size() && form[k] == parts[k + 1]) ++k;
      return k;
    };
    std::size_t best = 0;  // the most qualifiers, from the first, that some form has
    for (std::size_t f = 0; f < nforms; ++f) {
      const OpParts form(forms[f]);
      const std::size_t k = shared_prefix(form);
      if (k == nq && form.size() == nq) {
        in.op = Opcode::Fence;
        if (starts_with(forms[f], "proxy.async")) in.mode = std::uint8_t(FenceKind::ProxyAsync);
        if (!membar && starts_with(forms[f], "mbarrier_init")) in.mode = std::uint8_t(FenceKind::MbarrierInit);
        if (starts_with(forms[f], "proxy.tensormap::generic.acquire")) {
          // [addr], 128: the tensor map's address and size. The fence reads
          // no memory, but the address must still name something.
          need(pin, 2);
          address(pin.operands[0]);
          if (pin.operands[1].kind != ptx::Operand::Kind::Int || pin.operands[1].value != 128)
            bad_input(pin.operands[1].loc, "the size operand of '" + str(pin.opcode) + "' must be 128 (the bytes of a tensor map)");
        } else {
          need(pin, 0);
        }
        return;
      }
      best = std::max(best, k);
    }
    // What the forms that share the first `best` qualifiers have next.
    std::vector<std::string_view> next;
    for (std::size_t f = 0; f < nforms; ++f) {
      const OpParts form(forms[f]);
      if (form.size() > best && shared_prefix(form) == best &&
          std::find(next.begin(), next.end(), form[best]) == next.end())
        next.push_back(form[best]);
    }
    std::string options;
    for (std::size_t i = 0; i < next.size(); ++i)
      options += (i == 0 ? "." : i + 1 == next.size() ? " or ." : ", .") + str(next[i]);
    const std::string so_far(parts[0].data(), std::size_t(parts[best].data() + parts[best].size() - parts[0].data()));
    const char* source = " (PTX ISA, membar/fence)";
    if (best == nq)
      bad_input(pin.loc, "'" + str(pin.opcode) + "' is incomplete: after '" + so_far + "' comes " + options + source);
    // The column of the unknown qualifier's dot: the opcode starts at pin.loc.
    SourceLoc at = pin.loc;
    at.column += std::uint32_t(parts[best + 1].data() - parts[0].data() - 1);
    bad_input(at, "unknown qualifier '." + str(parts[best + 1]) + "' in '" + str(pin.opcode) + "': " +
                      (next.empty() ? "nothing comes after '" + so_far + "'" : "after '" + so_far + "' comes " + options) +
                      source);
  }

  // ---------------------------------------------------------------- wmma
  // wmma.load.{a,b,c}.sync.aligned.{row,col}.shape[.space].type frag, [p][, stride]
  // wmma.mma.sync.aligned.{row,col}.{row,col}.shape.dtype.ctype d, a, b, c (f16)
  //   or ...shape.f32.{bf16,tf32}.{bf16,tf32}.f32
  // wmma.store.d.sync.aligned.{row,col}.shape[.space].type [p], frag[, stride]
  void wmma(const Instruction& pin, Instr& in, const OpParts& parts) {
    const auto& ops = pin.operands;
    static const std::map<std::string_view, WmmaShape> shapes = {{"m16n16k16", WmmaShape::M16N16K16},
                                                            {"m32n8k16", WmmaShape::M32N8K16},
                                                            {"m8n32k16", WmmaShape::M8N32K16},
                                                            {"m16n16k8", WmmaShape::M16N16K8}};
    bool shaped = false;
    for (std::size_t i = 0; i < parts.size(); ++i)
      if (auto it = shapes.find(parts[i]); it != shapes.end()) {
        in.shape = std::uint8_t(it->second);
        shaped = true;
      }
    if (!shaped) fail(pin.loc, "'" + str(pin.opcode) + "': only the m16n16k16, m32n8k16, m8n32k16 and m16n16k8 wmma shapes are supported");
    for (const char* t : {"s8", "u8", "s4", "u4", "b1", "f64", "s32"})
      if (has_part(parts, t)) fail(pin.loc, "'" + str(pin.opcode) + "': integer, sub-byte and f64 wmma are not supported");
    // The element type: the last type part (for loads and stores, the memory's).
    DType type = DType::F32;
    for (std::size_t i = 1; i < parts.size(); ++i) {
      DType t;
      if (parse_dtype(parts[i], &t)) type = t;
    }
    auto fragment = [&](const ptx::Operand& o) -> const ptx::Operand& {  // the operand itself, not a copy
      if (o.kind != ptx::Operand::Kind::Vector) bad_input(o.loc, "a wmma fragment must be a {..} list of registers");
      return o;
    };
    auto stride = [&](std::size_t i) {
      return i < ops.size() ? value(ops[i]) : tileverify::Operand::integer(-1);  // -1: the dense default
    };
    const std::string_view op = parts.size() > 1 ? parts[1] : "";
    if (op == "load" || op == "store") {
      const std::string_view m = parts.size() > 2 ? parts[2] : "";
      if (!((op == "load" && (m == "a" || m == "b" || m == "c")) || (op == "store" && m == "d")))
        bad_input(pin.loc, "'" + str(pin.opcode) + "': unknown wmma matrix (wmma.load takes .a, .b or .c; wmma.store .d)");
      if (!has_part(parts, "row") && !has_part(parts, "col")) bad_input(pin.loc, "'" + str(pin.opcode) + "' needs .row or .col");
      if (ops.size() != 2 && ops.size() != 3)
        bad_input(pin.loc, "'" + str(pin.opcode) + "' takes a fragment, an address and an optional stride");
      in.op = op == "load" ? Opcode::WmmaLoad : Opcode::WmmaStore;
      in.mode = std::uint8_t(m == "a" ? WmmaMatrix::A : m == "b" ? WmmaMatrix::B : WmmaMatrix::C);
      in.trans = has_part(parts, "col");
      in.type = has_part(parts, "tf32") ? DType::F32 : type;
      in.space = space_of(parts);
      if (op == "load") {
        set_dsts(in.dst, fragment(ops[0]));
        in.src = {address(ops[1]), stride(2)};
      } else {
        in.src = {address(ops[0]), stride(2)};
        for (const auto& e : fragment(ops[1]).elements) in.src.push_back(value(e));
      }
      return;
    }
    if (op != "mma") fail(pin.loc, "unsupported instruction '" + str(pin.opcode) + "'");
    need(pin, 4);
    in.op = Opcode::WmmaMma;
    in.src_type = has_part(parts, "tf32") ? DType::F32 : has_part(parts, "bf16") ? DType::BF16 : DType::F16;
    // The result type comes right after the shape: .f32 or .f16.
    in.type = DType::F32;
    for (std::size_t i = 1; i + 1 < parts.size(); ++i)
      if (shapes.count(parts[i])) in.type = parts[i + 1] == "f16" ? DType::F16 : DType::F32;
    set_dsts(in.dst, fragment(ops[0]));
    const std::size_t na = fragment(ops[1]).elements.size(), nb = fragment(ops[2]).elements.size();
    in.src = {tileverify::Operand::integer(std::int64_t(na)), tileverify::Operand::integer(std::int64_t(nb))};
    for (std::size_t i = 1; i < 4; ++i)
      for (const auto& e : fragment(ops[i]).elements) in.src.push_back(value(e));
    // The fragments must cover their matrices a whole number of times (see
    // the evaluator's layout); nvcc's fragments always do.
    static const std::map<WmmaShape, std::array<int, 3>> dims = {{WmmaShape::M16N16K16, {16, 16, 16}},
                                                                 {WmmaShape::M32N8K16, {32, 8, 16}},
                                                                 {WmmaShape::M8N32K16, {8, 32, 16}},
                                                                 {WmmaShape::M16N16K8, {16, 16, 8}}};
    const auto [m, n, k] = dims.at(WmmaShape(in.shape));
    // In std::size_t: a fragment of a few hundred million registers would overflow int.
    const std::size_t per_ab = dtype_bytes(in.src_type) == 2 ? 2 : 1, mn = std::size_t(m * n);
    const std::size_t nc = fragment(ops[3]).elements.size(), nd = in.dst.size();
    auto covers = [](std::size_t regs, std::size_t per, std::size_t elems) { return regs > 0 && (32 * regs * per) % elems == 0; };
    if (!covers(na, per_ab, std::size_t(m * k)) || !covers(nb, per_ab, std::size_t(k * n)) || nc == 0 || nd == 0 ||
        mn % (32 * nc) != 0 || mn % (32 * nd) != 0 || mn / (32 * nc) > 2 || mn / (32 * nd) > 2)
      bad_input(pin.loc, "'" + str(pin.opcode) + "': fragments of " + std::to_string(na) + ", " + std::to_string(nb) +
                             ", " + std::to_string(nc) + " and " + std::to_string(nd) + " registers do not fit the shape");
  }

  Program& program() override { return p_; }

  // Member masks: an immediate, or a register (nvcc often moves -1 into one first).
  tileverify::Operand mask(const ptx::Operand& o) override {
    if (o.kind == ptx::Operand::Kind::Int) return tileverify::Operand::integer(std::int64_t(std::uint32_t(o.value)));
    return value(o);
  }

  const Module& m_;
  const Kernel& k_;
  std::uint64_t dyn_;
  const std::uint64_t max_shared_;  // per CTA on m_'s target (limits.hpp)
  std::vector<std::uint32_t> static_shared_;  // buffers of statically sized .shared arrays
  std::uint64_t const_bytes_ = 0;  // of the .const data made buffers so far
  Program p_;
  Frame* f_ = nullptr;  // the body being lowered
  // std::less<>: looked up by the Module's names, which are views.
  std::map<std::string, std::uint32_t, std::less<>> vars_, params_;  // module variables; kernel parameters
  std::map<std::string, const VarDecl*, std::less<>> module_data_;     // .global / .const data, by name
  std::map<std::string, std::uint32_t> shared_of_func_;   // "func:var" -> the buffer of a .shared in a .func
  std::map<std::string, std::uint32_t> slots_;            // "slot+offset" -> its register
  std::vector<std::string_view> call_stack_;              // functions being inlined, outermost first
  std::unordered_map<std::string_view, const Kernel*> functions_;  // function(): the module's, by name
  static constexpr std::size_t kMaxCallDepth = 64;           // of call_stack_
  static constexpr std::size_t kMaxInlined = std::size_t(1) << 18;  // statements of inlined bodies, all calls
  std::size_t inlined_ = 0;
  SharedString call_source_;                              // the CUDA line of the call being inlined
  std::uint32_t instances_ = 0;
  // The expf idiom, by function body (found once, however often inlined):
  // per statement, kNoIdiom, kIdiomEx2, kIdiomTf32 or an index in idiom_regs_.
  static constexpr std::int32_t kNoIdiom = -1, kIdiomEx2 = -2, kIdiomTf32 = -3;
  std::map<const Kernel*, std::vector<std::int32_t>> idioms_;
  std::map<const Kernel*, MathPlan> math_;  // the math forms, by function body
  // decode()'s table: the entries, in the order first seen, never moved once
  // made (lower() holds a reference across a call's inlining), and the slots
  // that find them.
  std::vector<std::unique_ptr<DecodedOpcode>> decoded_;
  std::vector<OpcodeSlot> decoded_slots_;
  OpcodeSlot recent_[2];  // the last two opcodes decode() looked up in the table (length ~0: none)
  std::vector<std::string_view> idiom_regs_;  // the fma.rm register of each rewritten shl (a name in the Module)
};

}  // namespace

LowerResult lower_kernel(const Module& m, const std::string& name, std::uint64_t dynamic_shared_bytes) {
  LowerResult r;
  const Kernel* k = m.find(name);
  if (!k) {
    std::string names;
    for (const Kernel& kk : m.kernels) names += (names.empty() ? "" : ", ") + kk.name;
    r.error = Error{SourceLoc{m.file, 0, 0}, "no kernel named '" + name + "' (the file has: " + names + ")"};
    return r;
  }
  // A .func runs only when called: its parameters and results are the
  // caller's .param slots, which a launch does not give.
  if (!k->is_entry) {
    r.error = Error{k->loc, "'" + name + "' is a .func, not a kernel (.entry): only kernels are launched"};
    return r;
  }
  try {
    r.program = Lowering(m, *k, dynamic_shared_bytes).run();
  } catch (const Failure& f) {
    r.error = f.error;
  } catch (const std::bad_alloc&) {  // no exception leaves: a caller gets an error, never an abort
    r.error = Error{k->loc, "out of memory while lowering '" + name + "'", true};
  } catch (const std::exception& e) {
    r.error = Error{k->loc, "internal error while lowering '" + name + "': " + e.what(), true};
  }
  return r;
}

std::optional<Error> first_unsupported(const Program& p) {
  const Instr* in = p.first_unsupported();
  if (!in) return std::nullopt;
  return Error{in->loc, p.unsupported_of(*in).why, true};
}

}  // namespace tileverify::ptx
