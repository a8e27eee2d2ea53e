// Lowering a parsed PTX kernel to the structured-CTA program model.
#include "tileverify/ptx.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <sstream>

namespace tileverify::ptx {

namespace {

struct Failure {
  Error error;
};

[[noreturn]] void fail(const SourceLoc& loc, const std::string& msg) { throw Failure{{loc, msg}}; }

std::vector<std::string> split(const std::string& op) {
  std::vector<std::string> parts;
  std::stringstream ss(op);
  std::string p;
  while (std::getline(ss, p, '.')) parts.push_back(p);
  return parts;
}

bool parse_dtype(const std::string& s, DType* t) {
  static const std::map<std::string, DType> types = {
      {"pred", DType::Pred}, {"s8", DType::S8},   {"u8", DType::U8},   {"s16", DType::S16}, {"u16", DType::U16},
      {"s32", DType::S32},   {"u32", DType::U32}, {"s64", DType::S64}, {"u64", DType::U64}, {"f16", DType::F16},
      {"bf16", DType::BF16}, {"f32", DType::F32}, {"f64", DType::F64}, {"b8", DType::B8},   {"b16", DType::B16},
      {"b32", DType::B32},   {"b64", DType::B64}, {"tf32", DType::F32}, {"f16x2", DType::B32}, {"bf16x2", DType::B32}};
  auto it = types.find(s[0] == '.' ? s.substr(1) : s);
  if (it == types.end()) return false;
  *t = it->second;
  return true;
}

// The registers, variables, .param slots and labels of one function body
// being lowered: the kernel itself, or one inlined instance of a .func (each
// instance has its own registers, so two calls never share state).
struct Frame {
  const Kernel* fn = nullptr;
  bool entry = true;
  std::string prefix;  // names of an inlined instance's registers and buffers: "fname#3:"
  std::map<std::string, std::uint32_t> regs, vars, labels;
  // .param names visible here -> the argument slot they denote. The slots of
  // one call are shared by the caller (its st.param / ld.param on the call's
  // .param variables) and the callee (on its parameters and return values).
  std::map<std::string, std::string> params;
  std::vector<std::pair<std::uint32_t, const ptx::Operand*>> branches;  // bra to patch: (instruction, label)
  std::vector<std::uint32_t> returns;  // an inlined ret: a bra to the end of the instance
};

class Lowering {
 public:
  Lowering(const Module& m, const Kernel& k, std::uint64_t dyn) : m_(m), k_(k), dyn_(dyn) {}

  Program run() {
    p_.name = k_.name;
    for (const Param& prm : k_.params) {
      ParamDecl d;
      d.name = prm.name;
      if (prm.type == ".struct") fail(prm.loc, "by-value struct parameters are not supported ('" + prm.name + "')");
      if (!parse_dtype(prm.type, &d.dtype)) fail(prm.loc, "unknown parameter type '" + prm.type + "'");
      d.pointer = prm.pointer_hint;
      params_[prm.name] = std::uint32_t(p_.params.size());
      p_.params.push_back(d);
    }
    for (const VarDecl& v : m_.globals) add_module_var(v);
    Frame f;
    f.fn = &k_;
    lower_body(f);
    Instr ret;
    ret.op = Opcode::Ret;
    ret.loc = k_.loc;
    p_.code.push_back(ret);  // falling off the end returns
    return p_;
  }

 private:
  // Declares a body's registers and variables in f, lowers its statements,
  // and resolves its branches.
  void lower_body(Frame& f) {
    const Kernel& k = *f.fn;
    for (const RegDecl& r : k.regs) {
      DType t;
      if (!parse_dtype(r.type, &t)) fail(r.loc, "unknown register type '" + r.type + "'");
      if (r.count < 0) {
        add_reg(f, r.name, t);
      } else {
        for (int i = 0; i < r.count; ++i) add_reg(f, r.name + std::to_string(i), t);
      }
    }
    for (const VarDecl& v : k.vars) add_var(&f, v);
    std::vector<const Instruction*> code;
    for (const Statement& s : k.body)
      if (s.kind == Statement::Kind::Instruction) code.push_back(&s.instr);
    if (idioms_done_.insert(&k).second) find_idioms(code);
    Frame* outer = f_;
    f_ = &f;
    for (const Statement& s : k.body) {
      if (s.kind == Statement::Kind::Label)
        f.labels[s.label] = std::uint32_t(p_.code.size());
      else
        lower(s.instr);
    }
    for (auto [pc, label] : f.branches) {
      auto it = f.labels.find(label->name);
      if (it == f.labels.end()) fail(label->loc, "unknown label '" + label->name + "'");
      p_.code[pc].target = it->second;
    }
    f_ = outer;
  }

  void add_reg(Frame& f, const std::string& name, DType t) {
    f.regs[name] = std::uint32_t(p_.registers.size());
    p_.registers.push_back({f.prefix + name, t});
  }

  BufferDecl buffer_of(const VarDecl& v, const std::string& prefix) {
    BufferDecl b;
    b.name = prefix + v.name;
    if (!parse_dtype(v.type, &b.dtype)) fail(v.loc, "unknown variable type '" + v.type + "'");
    b.elements = v.elements;
    return b;
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
        fail(use, "'" + v.name + "' is dynamic shared memory (extern .shared, declared at " + v.loc.text() +
                      "): give its size in bytes (spec key \"dynamic_shared\")");
      add_var(nullptr, v);
      return vars_.at(v.name);
    }
    if (!v.init_error.empty()) fail(use, v.init_error);
    if (v.unsized) fail(use, "'" + v.name + "' is an external array of unknown size");
    BufferDecl b = buffer_of(v, "");
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
        f->vars[v.name] = it->second;
        return;
      }
    }
    BufferDecl b = buffer_of(v, !f || f->entry ? "" : shared ? f->fn->name + ":" : f->prefix);
    b.space = shared ? Space::Shared : Space::Local;
    if (v.unsized) {
      if (dyn_ == 0)
        fail(v.loc, "'" + v.name + "' is dynamic shared memory: give its size in bytes (spec key \"dynamic_shared\")");
      b.elements = dyn_ / dtype_bytes(b.dtype);
    }
    std::uint32_t id = std::uint32_t(p_.buffers.size());
    p_.buffers.push_back(b);
    if (!f) {
      vars_[v.name] = id;
    } else {
      f->vars[v.name] = id;
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

  std::uint32_t reg_of(const ptx::Operand& o) {
    auto it = f_->regs.find(o.name);
    if (it == f_->regs.end()) fail(o.loc, "'" + o.name + "' is not a declared register");
    return it->second;
  }

  // A name that denotes memory or a parameter: a variable of this body, a
  // module variable, or (in the kernel itself) a kernel parameter.
  bool named_memory(const ptx::Operand& o, std::int64_t offset, tileverify::Operand* out) {
    std::uint32_t id = 0;
    if (auto it = f_->vars.find(o.name); it != f_->vars.end()) {
      *out = tileverify::Operand::buffer(it->second, offset);
    } else if (module_var(o, &id)) {
      *out = tileverify::Operand::buffer(id, offset);
    } else if (f_->entry && params_.count(o.name)) {
      *out = tileverify::Operand::param(params_[o.name], offset);
    } else if (f_->params.count(o.name)) {
      fail(o.loc, "the address of the .param variable '" + o.name + "' is taken; only ld.param / st.param on it are supported");
    } else {
      return false;
    }
    return true;
  }

  static bool special_of(const std::string& n, Special* s) {
    static const std::map<std::string, Special> sp = {
        {"%tid.x", Special::TidX},     {"%tid.y", Special::TidY},       {"%tid.z", Special::TidZ},
        {"%ntid.x", Special::NtidX},   {"%ntid.y", Special::NtidY},     {"%ntid.z", Special::NtidZ},
        {"%ctaid.x", Special::CtaidX}, {"%ctaid.y", Special::CtaidY},   {"%ctaid.z", Special::CtaidZ},
        {"%nctaid.x", Special::NctaidX}, {"%nctaid.y", Special::NctaidY}, {"%nctaid.z", Special::NctaidZ},
        {"%laneid", Special::LaneId},  {"%warpid", Special::WarpId}};
    auto it = sp.find(n);
    if (it == sp.end()) return false;
    *s = it->second;
    return true;
  }

  tileverify::Operand value(const ptx::Operand& o) {
    switch (o.kind) {
      case ptx::Operand::Kind::Name: {
        Special s;
        if (special_of(o.name, &s)) return tileverify::Operand::special(s);
        if (o.name == "WARP_SZ") return tileverify::Operand::integer(32);  // CUDA's warpSize: a PTX constant
        if (f_->regs.count(o.name)) return tileverify::Operand::reg(f_->regs[o.name]);
        tileverify::Operand mem;
        if (named_memory(o, 0, &mem)) return mem;
        if (o.name[0] == '!') fail(o.loc, "negated predicate operands are not supported");
        fail(o.loc, "'" + o.name + "' is not a declared register, variable or parameter");
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
    fail(o.loc, "unexpected operand here");
  }

  tileverify::Operand address(const ptx::Operand& o) {
    if (o.kind != ptx::Operand::Kind::Address) fail(o.loc, "expected an address [..]");
    if (o.name.empty()) fail(o.loc, "absolute addresses are not supported");
    if (!o.elements.empty()) fail(o.loc, "tensor-map addresses [map, {coordinates}] are not supported");
    if (f_->regs.count(o.name)) return tileverify::Operand::reg(f_->regs[o.name], o.value);
    tileverify::Operand mem;
    if (named_memory(o, o.value, &mem)) return mem;
    fail(o.loc, "'" + o.name + "' in an address is not a declared register, variable or parameter");
  }

  std::vector<std::uint32_t> dsts(const ptx::Operand& o) {
    std::vector<std::uint32_t> d;
    if (o.kind == ptx::Operand::Kind::Vector) {
      for (const auto& e : o.elements) d.push_back(reg_of(e));
    } else {
      d.push_back(reg_of(o));
    }
    return d;
  }

  void need(const Instruction& in, std::size_t n) {
    if (in.operands.size() != n)
      fail(in.loc, "'" + in.opcode + "' takes " + std::to_string(n) + " operands, not " + std::to_string(in.operands.size()));
  }

  // nvcc's expf (without fast math) builds 2^n from the float bits of a
  // rounding trick: j = fma.rm(t, 252, 0f4B400001); bits(j) << 23 is the
  // float 2^(j - 12583039). As reals that is ex2(j - 12583039), and the
  // kernel's e^x = 2^(x*log2e - n) * 2^n needs nothing else. The pattern
  //   mov.b32 %rA, %fJ;  shl.b32 %rC, %rA, 23;  mov.b32 %fD, %rC
  // with %fJ from that fma.rm is rewritten one for one:
  //   shl -> add.f32 %rC, %fJ, -12583039;  mov -> ex2.approx.f32 %fD, %rC.
  void find_idioms(const std::vector<const Instruction*>& code) {
    std::map<std::string, std::size_t> def;
    std::map<std::string, int> defs;
    for (std::size_t i = 0; i < code.size(); ++i)
      if (!code[i]->operands.empty() && code[i]->operands[0].kind == ptx::Operand::Kind::Name) {
        def[code[i]->operands[0].name] = i;
        ++defs[code[i]->operands[0].name];
      }
    auto defined_by = [&](const std::string& reg, const char* opcode_prefix) -> const Instruction* {
      auto it = def.find(reg);
      if (it == def.end() || defs[reg] != 1) return nullptr;
      const Instruction* d = code[it->second];
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
      if (shl.opcode != "shl.b32" || shl.operands.size() != 3 || shl.operands[2].kind != ptx::Operand::Kind::Int ||
          shl.operands[2].value != 23)
        continue;
      const Instruction* bits = defined_by(shl.operands[1].name, "mov.b32");
      if (!bits || bits->operands.size() != 2) continue;
      const Instruction* magic = defined_by(bits->operands[1].name, "fma.rm");
      std::int64_t addend = 0;
      if (!magic || magic->operands.size() != 4 || !f32_bits(magic->operands[3], &addend) || addend != 0x4B400001)
        continue;
      for (std::size_t k = i + 1; k < code.size(); ++k) {
        const Instruction& mv = *code[k];
        if (mv.opcode == "mov.b32" && mv.operands.size() == 2 && mv.operands[1].name == shl.operands[0].name) {
          idiom_add_[&shl] = bits->operands[1].name;
          idiom_ex2_.insert(&mv);
          break;
        }
      }
    }
  }

  void lower(const Instruction& pin) {
    Instr in;
    in.loc = pin.loc;
    if (in.loc.source.empty()) in.loc.source = call_source_;  // a callee without .loc lines: the call's line
    if (auto it = idiom_add_.find(&pin); it != idiom_add_.end()) {
      in.op = Opcode::Add;
      in.type = DType::F32;
      in.dst = {reg_of(pin.operands[0])};
      in.src = {value(ptx::Operand{ptx::Operand::Kind::Name, it->second, 0, {}, {}, pin.loc})};
      p_.constants.push_back(Rational(-12583039));
      in.src.push_back(tileverify::Operand{tileverify::Operand::Kind::Float, std::uint32_t(p_.constants.size() - 1), 0});
      p_.code.push_back(in);
      return;
    }
    if (idiom_ex2_.count(&pin)) {
      in.op = Opcode::Ex2;
      in.type = DType::F32;
      in.dst = {reg_of(pin.operands[0])};
      in.src = {value(pin.operands[1])};
      p_.code.push_back(in);
      return;
    }
    if (!pin.guard.empty()) {
      in.guard = std::int32_t(reg_of(ptx::Operand{ptx::Operand::Kind::Name, pin.guard, 0, {}, {}, pin.loc}));
      in.guard_negated = pin.guard_negated;
    }
    std::vector<std::string> parts = split(pin.opcode);
    const std::string& base = parts[0];
    // The last type-like part is the operation type.
    std::vector<DType> types;
    for (std::size_t i = 1; i < parts.size(); ++i) {
      DType t;
      if (parse_dtype(parts[i], &t)) types.push_back(t);
    }
    auto has = [&](const char* m) {
      for (std::size_t i = 1; i < parts.size(); ++i)
        if (parts[i] == m) return true;
      return false;
    };
    in.type = types.empty() ? DType::B32 : types.back();
    const auto& ops = pin.operands;
    auto simple = [&](Opcode op, std::size_t nsrc) {
      need(pin, nsrc + 1);
      in.op = op;
      in.dst = dsts(ops[0]);
      for (std::size_t i = 1; i <= nsrc; ++i) in.src.push_back(value(ops[i]));
      if (!ops[0].pred_out.empty()) fail(ops[0].loc, "a predicate output '|p' is not supported on '" + pin.opcode + "'");
    };

    static const std::map<std::string, Opcode> unary = {{"neg", Opcode::Neg},     {"abs", Opcode::Abs},   {"not", Opcode::Not},
                                                        {"rcp", Opcode::Rcp},     {"sqrt", Opcode::Sqrt}, {"rsqrt", Opcode::Rsqrt},
                                                        {"ex2", Opcode::Ex2},     {"lg2", Opcode::Lg2},   {"tanh", Opcode::Tanh}};
    static const std::map<std::string, Opcode> binary = {{"add", Opcode::Add}, {"sub", Opcode::Sub}, {"div", Opcode::Div},
                                                         {"rem", Opcode::Rem}, {"min", Opcode::Min}, {"max", Opcode::Max},
                                                         {"and", Opcode::And}, {"or", Opcode::Or},   {"xor", Opcode::Xor},
                                                         {"shl", Opcode::Shl}, {"shr", Opcode::Shr}};
    if (base == "mov" || base == "cvta") {
      need(pin, 2);
      in.op = Opcode::Mov;
      if (ops[1].kind == ptx::Operand::Kind::Vector) {  // pack
        in.dst = dsts(ops[0]);
        for (const auto& e : ops[1].elements) in.src.push_back(value(e));
      } else {
        in.dst = dsts(ops[0]);  // a vector destination unpacks
        in.src.push_back(value(ops[1]));
      }
    } else if (unary.count(base)) {
      simple(unary.at(base), 1);
    } else if (binary.count(base)) {
      simple(binary.at(base), 2);
    } else if (base == "mul") {
      simple(has("wide") ? Opcode::MulWide : (has("hi") ? Opcode::MulHi : Opcode::Mul), 2);
    } else if (base == "mad") {
      if (has("hi")) fail(pin.loc, "mad.hi is not supported");
      simple(has("wide") ? Opcode::MadWide : Opcode::Mad, 3);
    } else if (base == "bfi") {
      simple(Opcode::Bfi, 4);
    } else if (base == "bfe") {
      simple(Opcode::Bfe, 3);
    } else if (base == "fma") {
      simple(Opcode::Fma, 3);
    } else if (base == "selp") {
      simple(Opcode::Selp, 3);
    } else if (base == "setp") {
      if (ops.size() == 4) fail(pin.loc, "setp with a combining predicate is not supported");
      simple(Opcode::Setp, 2);
      static const std::map<std::string, Cmp> cmps = {
          {"lt", Cmp::LT}, {"le", Cmp::LE}, {"gt", Cmp::GT}, {"ge", Cmp::GE}, {"eq", Cmp::EQ}, {"ne", Cmp::NE},
          {"lo", Cmp::LT}, {"ls", Cmp::LE}, {"hi", Cmp::GT}, {"hs", Cmp::GE}, {"ltu", Cmp::LT}, {"leu", Cmp::LE},
          {"gtu", Cmp::GT}, {"geu", Cmp::GE}, {"equ", Cmp::EQ}, {"neu", Cmp::NE}};
      bool found = false;
      for (std::size_t i = 1; i < parts.size() && !found; ++i)
        if (cmps.count(parts[i])) {
          in.cmp = cmps.at(parts[i]);
          found = true;
        }
      if (!found) fail(pin.loc, "unsupported comparison in '" + pin.opcode + "'");
      if (!ops[0].pred_out.empty()) fail(ops[0].loc, "setp with two predicate outputs is not supported");
    } else if (base == "cvt" && (has("f16x2") || has("bf16x2"))) {
      // cvt.rn{.relu}{.satfinite}.{f16,bf16}x2.f32 d, a, b: d packs cvt(a) in its
      // high half and cvt(b) in its low half (a Pair: f low, g high).
      if (ops.size() != 3 || types.size() != 2 || types[1] != DType::F32 || has("rs"))
        fail(pin.loc, "'" + pin.opcode + "' is not supported: of the packed conversions only cvt.{rn,rz,rm,rp}" +
                          "{.relu}{.satfinite}.{f16,bf16}x2.f32 d, a, b are");
      simple(Opcode::Cvt, 2);
      in.type = DType::B32;
      in.src_type = DType::F32;
      in.mode = has("relu") ? 1 : 0;
    } else if (base == "cvt") {
      simple(Opcode::Cvt, 1);
      in.saturate = has("sat");
      in.mode = has("relu") ? 1 : 0;
      if (types.size() != 2) fail(pin.loc, "cvt needs a destination and a source type");
      in.type = types[0];
      in.src_type = types[1];
    } else if ((base == "ld" || base == "st") && has("param") && ops.size() == 2 &&
               ops[base == "ld" ? 1 : 0].kind == ptx::Operand::Kind::Address &&
               f_->params.count(ops[base == "ld" ? 1 : 0].name)) {
      return param_slot_access(pin, in, base == "ld", types.empty() ? DType::B32 : types.back());
    } else if (base == "ld" || base == "st") {
      in.op = base == "ld" ? Opcode::Ld : Opcode::St;
      in.space = space_of(parts);
      if (in.space == Space::Const && in.op == Opcode::St) fail(pin.loc, "a store to .const memory");
      need(pin, 2);
      if (in.op == Opcode::Ld) {
        in.dst = dsts(ops[0]);
        in.src.push_back(address(ops[1]));
      } else {
        in.src.push_back(address(ops[0]));
        if (ops[1].kind == ptx::Operand::Kind::Vector)
          for (const auto& e : ops[1].elements) in.src.push_back(value(e));
        else
          in.src.push_back(value(ops[1]));
      }
    } else if (base == "bra") {
      need(pin, 1);
      in.op = Opcode::Bra;
      f_->branches.emplace_back(std::uint32_t(p_.code.size()), &ops[0]);  // resolved at the end of the body
    } else if (base == "ret" && !f_->entry) {
      in.op = Opcode::Bra;  // back to the caller: the end of this inlined instance
      f_->returns.push_back(std::uint32_t(p_.code.size()));
    } else if (base == "ret" || base == "exit") {
      in.op = Opcode::Ret;
    } else if (base == "trap") {
      need(pin, 0);
      in.op = Opcode::Trap;
    } else if (base == "call") {
      return call(pin, in);
    } else if (base == "atom" || base == "red") {
      atomic(pin, in, parts);
    } else if (base == "cp" && parts.size() > 1 && parts[1] == "async") {
      cp_async(pin, in, parts);
    } else if (base == "wmma") {
      wmma(pin, in, parts);
    } else if ((base == "bar" || base == "barrier") && has("warp")) {
      need(pin, 1);
      in.op = Opcode::WarpSync;
      in.src.push_back(mask(ops[0]));
    } else if ((base == "bar" || base == "barrier") && (has("sync") || parts.size() == 1 || (parts.size() == 2 && parts[1] == "aligned"))) {
      in.op = Opcode::Bar;
      if (ops.empty() || ops.size() > 2) fail(pin.loc, "bar.sync takes a barrier id and an optional thread count");
      for (const auto& o : ops) {
        if (o.kind != ptx::Operand::Kind::Int) fail(o.loc, "barrier ids and counts in registers are not supported");
        in.src.push_back(tileverify::Operand::integer(o.value));
      }
    } else if (base == "shfl") {
      need(pin, 5);
      in.op = Opcode::Shfl;
      in.mode = std::uint8_t(has("up") ? ShflMode::Up : has("down") ? ShflMode::Down : has("bfly") ? ShflMode::Bfly : ShflMode::Idx);
      if (!has("up") && !has("down") && !has("bfly") && !has("idx")) fail(pin.loc, "unknown shfl mode in '" + pin.opcode + "'");
      in.dst = {reg_of(ops[0])};
      in.src = {value(ops[1]), value(ops[2]), value(ops[3]), mask(ops[4])};
    } else if (base == "vote") {
      need(pin, 3);
      in.op = Opcode::Vote;
      if (has("uni")) fail(pin.loc, "vote.uni is not supported");
      in.mode = std::uint8_t(has("all") ? VoteMode::All : has("any") ? VoteMode::Any : VoteMode::Ballot);
      in.dst = {reg_of(ops[0])};
      in.src = {value(ops[1]), mask(ops[2])};
    } else if (base == "redux") {
      need(pin, 3);
      in.op = Opcode::Redux;
      if (!has("sync")) fail(pin.loc, "redux needs .sync");
      if (has("add")) in.mode = std::uint8_t(AtomOp::Add);
      else if (has("min")) in.mode = std::uint8_t(AtomOp::Min);
      else if (has("max")) in.mode = std::uint8_t(AtomOp::Max);
      else if (has("and")) in.mode = std::uint8_t(AtomOp::And);
      else if (has("or")) in.mode = std::uint8_t(AtomOp::Or);
      else if (has("xor")) in.mode = std::uint8_t(AtomOp::Xor);
      else fail(pin.loc, "unknown redux operation in '" + pin.opcode + "'");
      if (dtype_is_float(in.type)) fail(pin.loc, "redux.sync on floats (sm_100a) is not supported");
      in.dst = {reg_of(ops[0])};
      in.src = {value(ops[1]), mask(ops[2])};
    } else if (base == "mma") {
      need(pin, 4);
      in.op = Opcode::Mma;
      if (!has("row") || !has("col")) fail(pin.loc, "only mma.sync .row.col layouts are supported");
      in.mode = std::uint8_t(has("m16n8k16") ? MmaShape::M16N8K16 : MmaShape::M16N8K8);
      if (!has("m16n8k16") && !has("m16n8k8")) fail(pin.loc, "unsupported mma shape in '" + pin.opcode + "'");
      in.type = DType::F32;
      in.src_type = has("bf16") ? DType::BF16 : has("tf32") ? DType::F32 : DType::F16;
      in.dst = dsts(ops[0]);
      for (std::size_t i = 1; i < 4; ++i)
        for (const auto& e : ops[i].elements) in.src.push_back(value(e));
    } else if (base == "ldmatrix") {
      need(pin, 2);
      in.op = Opcode::LdMatrix;
      in.mode = std::uint8_t(has("x4") ? 4 : has("x2") ? 2 : 1);
      in.trans = has("trans");
      in.space = Space::Shared;
      in.dst = dsts(ops[0]);
      in.src = {address(ops[1])};
    } else {
      fail(pin.loc, "unsupported instruction '" + pin.opcode + "'");
    }
    p_.code.push_back(in);
  }

  static bool has_part(const std::vector<std::string>& parts, const char* m) {
    for (std::size_t i = 1; i < parts.size(); ++i)
      if (parts[i] == m) return true;
    return false;
  }

  // The state space an opcode names (.shared::cta is .shared); none: generic,
  // which for this model is global (shared memory is reached through .shared).
  static Space space_of(const std::vector<std::string>& parts) {
    for (std::size_t i = 1; i < parts.size(); ++i) {
      const std::string& p = parts[i];
      if (p.rfind("shared", 0) == 0) return Space::Shared;
      if (p == "local") return Space::Local;
      if (p == "param") return Space::Param;
      if (p == "const") return Space::Const;
      if (p == "global") return Space::Global;
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
    const std::string& id = f_->params.at(addr.name);
    std::vector<ptx::Operand> elems = data.kind == ptx::Operand::Kind::Vector ? data.elements : std::vector<ptx::Operand>{data};
    for (std::size_t k = 0; k < elems.size(); ++k) {
      Instr mv = in;
      mv.op = Opcode::Mov;
      mv.type = t;
      std::uint32_t r = slot(id, addr.value + std::int64_t(k * dtype_bytes(t)), t);
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
      fail(pin.loc, "'" + pin.opcode + "' needs the name of the function it calls");
    const ptx::Operand& fname = ops[i++];
    if (i < ops.size() && ops[i].kind == ptx::Operand::Kind::Vector) args = &ops[i++];
    if (i < ops.size() || f_->regs.count(fname.name))
      fail(pin.loc, "indirect calls (through a register or a prototype) are not supported: '" + pin.opcode + "'");
    const Kernel* callee = m_.find(fname.name);
    if (!callee && (fname.name == "__assertfail" || fname.name == "__assert_fail")) return assert_call(in, args);
    if (!callee)
      fail(fname.loc, "call to '" + fname.name +
                          "', whose body is not in this file (external functions such as printf are not supported)");
    if (callee->is_entry) fail(fname.loc, "call to '" + fname.name + "', which is a kernel (.entry), not a .func");
    if (std::find(call_stack_.begin(), call_stack_.end(), fname.name) != call_stack_.end() || fname.name == k_.name)
      fail(pin.loc, "recursive call to '" + fname.name + "': calls are inlined, and recursion cannot be");
    std::size_t nargs = args ? args->elements.size() : 0, nrets = rets ? rets->elements.size() : 0;
    if (nargs != callee->params.size() || nrets != callee->returns.size())
      fail(pin.loc, "call to '" + fname.name + "' with " + std::to_string(nargs) + " arguments and " +
                        std::to_string(nrets) + " return values; it takes " + std::to_string(callee->params.size()) +
                        " and " + std::to_string(callee->returns.size()));

    Frame f;
    f.fn = callee;
    f.entry = false;
    f.prefix = fname.name + "#" + std::to_string(++instances_) + ":";
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
        fail(formal.loc, "unknown parameter type '" + formal.type + "'");
      }
      if (actual.kind == ptx::Operand::Kind::Name && f_->params.count(actual.name)) {
        f.params[formal.name] = f_->params.at(actual.name);
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
    std::string outer_source = call_source_;
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
        auto it = slots_.find(f_->params.at(x.name) + "+0");  // what st.param put in the slot
        in.src.push_back(it == slots_.end() ? tileverify::Operand{} : tileverify::Operand::reg(it->second));
      } else {
        in.src.push_back(value(x));
      }
    }
    p_.code.push_back(in);
  }

  // ---------------------------------------------------------------- atomics
  // atom{.sem}{.scope}{.space}.op.type d, [a], b and red...op.type [a], b.
  // The memory-order qualifiers do not matter here: atomics are not used to
  // order other accesses (only barriers and warp collectives do that).
  void atomic(const Instruction& pin, Instr& in, const std::vector<std::string>& parts) {
    const auto& ops = pin.operands;
    static const std::map<std::string, AtomOp> ops_by_name = {{"add", AtomOp::Add}, {"min", AtomOp::Min},
                                                              {"max", AtomOp::Max}, {"and", AtomOp::And},
                                                              {"or", AtomOp::Or},   {"xor", AtomOp::Xor}};
    static const std::set<std::string> unsupported = {"exch", "cas", "inc", "dec"};
    bool found = false;
    for (std::size_t i = 1; i < parts.size(); ++i) {
      if (unsupported.count(parts[i]))
        fail(pin.loc, "'" + pin.opcode + "' is not supported: of the atomics only add, min, max, and, or and xor " +
                          "(which commute, so that their result does not depend on the schedule) are");
      if (auto it = ops_by_name.find(parts[i]); it != ops_by_name.end()) {
        in.mode = std::uint8_t(it->second);
        found = true;
      }
    }
    if (!found) fail(pin.loc, "'" + pin.opcode + "': unknown atomic operation");
    for (std::size_t i = 1; i < parts.size(); ++i)
      if (parts[i] == "f16x2" || parts[i] == "bf16x2" || parts[i] == "v2" || parts[i] == "v4" || parts[i] == "v8" ||
          parts[i].rfind("L2::", 0) == 0)
        fail(pin.loc, "'" + pin.opcode + "' is not supported (packed, vector and cache-hint atomics are not)");
    in.op = Opcode::Atom;
    in.space = space_of(parts);
    if (in.space == Space::Const || in.space == Space::Param || in.space == Space::Local)
      fail(pin.loc, "'" + pin.opcode + "': atomics on this state space are not supported");
    bool red = parts[0] == "red" || (ops.size() == 3 && ops[0].kind == ptx::Operand::Kind::Sink);
    need(pin, parts[0] == "red" ? 2 : 3);
    std::size_t a = parts[0] == "red" ? 0 : 1;
    if (!red) in.dst = {reg_of(ops[0])};
    in.src = {address(ops[a]), value(ops[a + 1])};
  }

  // ---------------------------------------------------------------- cp.async
  void cp_async(const Instruction& pin, Instr& in, const std::vector<std::string>& parts) {
    const auto& ops = pin.operands;
    const std::string& what = parts.size() > 2 ? parts[2] : "";
    if (what == "bulk" || has_part(parts, "bulk"))
      fail(pin.loc, "'" + pin.opcode + "' is not supported: bulk asynchronous copies (cp.async.bulk, TMA) are not modelled");
    if (what == "mbarrier")
      fail(pin.loc, "'" + pin.opcode + "' is not supported: mbarrier-based completion of cp.async is not modelled");
    if (what == "commit_group") {
      need(pin, 0);
      in.op = Opcode::CpAsyncCommit;
    } else if (what == "wait_group") {
      need(pin, 1);
      if (ops[0].kind != ptx::Operand::Kind::Int || ops[0].value < 0)
        fail(ops[0].loc, "cp.async.wait_group needs a constant number of groups");
      in.op = Opcode::CpAsyncWait;
      in.src = {tileverify::Operand::integer(ops[0].value)};
    } else if (what == "wait_all") {
      need(pin, 0);
      in.op = Opcode::CpAsyncWait;
      in.mode = 1;
    } else if (what == "ca" || what == "cg") {
      if (has_part(parts, "L2::cache_hint"))
        fail(pin.loc, "'" + pin.opcode + "': the cache-policy operand of cp.async is not supported");
      if (ops.size() != 3 && ops.size() != 4)
        fail(pin.loc, "'" + pin.opcode + "' takes a destination, a source, a copy size and an optional source size");
      if (ops[2].kind != ptx::Operand::Kind::Int || (ops[2].value != 4 && ops[2].value != 8 && ops[2].value != 16) ||
          (what == "cg" && ops[2].value != 16))
        fail(ops[2].loc, "the size of a cp.async must be 4, 8 or 16 bytes (16 for .cg)");
      in.op = Opcode::CpAsync;
      in.space = Space::Shared;
      in.src = {address(ops[0]), address(ops[1]), tileverify::Operand::integer(ops[2].value)};
      if (ops.size() == 4) in.src.push_back(value(ops[3]));
    } else {
      fail(pin.loc, "unsupported instruction '" + pin.opcode + "'");
    }
  }

  // ---------------------------------------------------------------- wmma
  // wmma.load.{a,b,c}.sync.aligned.{row,col}.shape[.space].type frag, [p][, stride]
  // wmma.mma.sync.aligned.{row,col}.{row,col}.shape.dtype.ctype d, a, b, c (f16)
  //   or ...shape.f32.{bf16,tf32}.{bf16,tf32}.f32
  // wmma.store.d.sync.aligned.{row,col}.shape[.space].type [p], frag[, stride]
  void wmma(const Instruction& pin, Instr& in, const std::vector<std::string>& parts) {
    const auto& ops = pin.operands;
    static const std::map<std::string, WmmaShape> shapes = {{"m16n16k16", WmmaShape::M16N16K16},
                                                            {"m32n8k16", WmmaShape::M32N8K16},
                                                            {"m8n32k16", WmmaShape::M8N32K16},
                                                            {"m16n16k8", WmmaShape::M16N16K8}};
    bool shaped = false;
    for (const std::string& p : parts)
      if (auto it = shapes.find(p); it != shapes.end()) {
        in.shape = std::uint8_t(it->second);
        shaped = true;
      }
    if (!shaped) fail(pin.loc, "'" + pin.opcode + "': only the m16n16k16, m32n8k16, m8n32k16 and m16n16k8 wmma shapes are supported");
    for (const char* t : {"s8", "u8", "s4", "u4", "b1", "f64", "s32"})
      if (has_part(parts, t)) fail(pin.loc, "'" + pin.opcode + "': integer, sub-byte and f64 wmma are not supported");
    // The element type: the last type part (for loads and stores, the memory's).
    DType type = DType::F32;
    for (std::size_t i = 1; i < parts.size(); ++i) {
      DType t;
      if (parse_dtype(parts[i], &t)) type = t;
    }
    auto fragment = [&](const ptx::Operand& o) {
      if (o.kind != ptx::Operand::Kind::Vector) fail(o.loc, "a wmma fragment must be a {..} list of registers");
      return o;
    };
    auto stride = [&](std::size_t i) {
      return i < ops.size() ? value(ops[i]) : tileverify::Operand::integer(-1);  // -1: the dense default
    };
    const std::string op = parts.size() > 1 ? parts[1] : "";
    if (op == "load" || op == "store") {
      std::string m = parts.size() > 2 ? parts[2] : "";
      if (!((op == "load" && (m == "a" || m == "b" || m == "c")) || (op == "store" && m == "d")))
        fail(pin.loc, "'" + pin.opcode + "': unknown wmma matrix");
      if (!has_part(parts, "row") && !has_part(parts, "col")) fail(pin.loc, "'" + pin.opcode + "' needs .row or .col");
      if (ops.size() != 2 && ops.size() != 3) fail(pin.loc, "'" + pin.opcode + "' takes a fragment, an address and an optional stride");
      in.op = op == "load" ? Opcode::WmmaLoad : Opcode::WmmaStore;
      in.mode = std::uint8_t(m == "a" ? WmmaMatrix::A : m == "b" ? WmmaMatrix::B : WmmaMatrix::C);
      in.trans = has_part(parts, "col");
      in.type = has_part(parts, "tf32") ? DType::F32 : type;
      in.space = space_of(parts);
      if (op == "load") {
        in.dst = dsts(fragment(ops[0]));
        in.src = {address(ops[1]), stride(2)};
      } else {
        in.src = {address(ops[0]), stride(2)};
        for (const auto& e : fragment(ops[1]).elements) in.src.push_back(value(e));
      }
      return;
    }
    if (op != "mma") fail(pin.loc, "unsupported instruction '" + pin.opcode + "'");
    need(pin, 4);
    in.op = Opcode::WmmaMma;
    in.src_type = has_part(parts, "tf32") ? DType::F32 : has_part(parts, "bf16") ? DType::BF16 : DType::F16;
    // The result type comes right after the shape: .f32 or .f16.
    in.type = DType::F32;
    for (std::size_t i = 1; i + 1 < parts.size(); ++i)
      if (shapes.count(parts[i])) in.type = parts[i + 1] == "f16" ? DType::F16 : DType::F32;
    in.dst = dsts(fragment(ops[0]));
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
    auto [m, n, k] = dims.at(WmmaShape(in.shape));
    const int per_ab = dtype_bytes(in.src_type) == 2 ? 2 : 1;
    const std::size_t nc = fragment(ops[3]).elements.size(), nd = in.dst.size();
    auto covers = [](std::size_t regs, int per, int elems) { return regs > 0 && (32 * int(regs) * per) % elems == 0; };
    if (!covers(na, per_ab, m * k) || !covers(nb, per_ab, k * n) || nc == 0 || nd == 0 ||
        (m * n) % (32 * int(nc)) != 0 || (m * n) % (32 * int(nd)) != 0 || m * n / (32 * int(nc)) > 2 ||
        m * n / (32 * int(nd)) > 2)
      fail(pin.loc, "'" + pin.opcode + "': fragments of " + std::to_string(na) + ", " + std::to_string(nb) + ", " +
                        std::to_string(nc) + " and " + std::to_string(nd) + " registers do not fit the shape");
  }

  // Member masks: an immediate, or a register (nvcc often moves -1 into one first).
  tileverify::Operand mask(const ptx::Operand& o) {
    if (o.kind == ptx::Operand::Kind::Int) return tileverify::Operand::integer(std::int64_t(std::uint32_t(o.value)));
    return value(o);
  }

  const Module& m_;
  const Kernel& k_;
  std::uint64_t dyn_;
  Program p_;
  Frame* f_ = nullptr;  // the body being lowered
  std::map<std::string, std::uint32_t> vars_, params_;  // module variables; kernel parameters
  std::map<std::string, const VarDecl*> module_data_;     // .global / .const data, by name
  std::map<std::string, std::uint32_t> shared_of_func_;   // "func:var" -> the buffer of a .shared in a .func
  std::map<std::string, std::uint32_t> slots_;            // "slot+offset" -> its register
  std::vector<std::string> call_stack_;                   // functions being inlined, outermost first
  std::string call_source_;                               // the CUDA line of the call being inlined
  std::uint32_t instances_ = 0;
  std::set<const Kernel*> idioms_done_;
  std::map<const Instruction*, std::string> idiom_add_;  // shl of the expf idiom -> the fma.rm register
  std::set<const Instruction*> idiom_ex2_;
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
  try {
    r.program = Lowering(m, *k, dynamic_shared_bytes).run();
  } catch (const Failure& f) {
    r.error = f.error;
  }
  return r;
}

}  // namespace tileverify::ptx
