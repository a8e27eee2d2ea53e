// Lowering a parsed PTX kernel to the structured-CTA program model.
#include "tileverify/ptx.hpp"

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
    for (const RegDecl& r : k_.regs) {
      DType t;
      if (!parse_dtype(r.type, &t)) fail(r.loc, "unknown register type '" + r.type + "'");
      if (r.count < 0) {
        add_reg(r.name, t);
      } else {
        for (int i = 0; i < r.count; ++i) add_reg(r.name + std::to_string(i), t);
      }
    }
    for (const VarDecl& v : m_.globals) add_var(v);
    for (const VarDecl& v : k_.vars) add_var(v);
    // Labels: instruction indices.
    std::uint32_t n = 0;
    for (const Statement& s : k_.body) {
      if (s.kind == Statement::Kind::Label) {
        labels_[s.label] = n;
      } else {
        ++n;
      }
    }
    std::vector<const Instruction*> code;
    for (const Statement& s : k_.body)
      if (s.kind == Statement::Kind::Instruction) code.push_back(&s.instr);
    find_idioms(code);
    for (const Instruction* in : code) lower(*in);
    Instr ret;
    ret.op = Opcode::Ret;
    ret.loc = k_.loc;
    p_.code.push_back(ret);  // falling off the end returns
    return p_;
  }

 private:
  void add_reg(const std::string& name, DType t) {
    regs_[name] = std::uint32_t(p_.registers.size());
    p_.registers.push_back({name, t});
  }

  void add_var(const VarDecl& v) {
    if (v.space != ".shared" && v.space != ".local") return;  // .global/.const data: not modelled (loads fail clearly)
    BufferDecl b;
    b.name = v.name;
    b.space = v.space == ".shared" ? Space::Shared : Space::Local;
    if (!parse_dtype(v.type, &b.dtype)) fail(v.loc, "unknown variable type '" + v.type + "'");
    b.elements = v.elements;
    if (v.unsized) {
      if (dyn_ == 0)
        fail(v.loc, "'" + v.name + "' is dynamic shared memory: give its size in bytes (spec key \"dynamic_shared\")");
      b.elements = dyn_ / dtype_bytes(b.dtype);
    }
    vars_[v.name] = std::uint32_t(p_.buffers.size());
    p_.buffers.push_back(b);
  }

  std::uint32_t reg_of(const ptx::Operand& o) {
    auto it = regs_.find(o.name);
    if (it == regs_.end()) fail(o.loc, "'" + o.name + "' is not a declared register");
    return it->second;
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
        if (regs_.count(o.name)) return tileverify::Operand::reg(regs_[o.name]);
        if (vars_.count(o.name)) return tileverify::Operand::buffer(vars_[o.name]);
        if (params_.count(o.name)) return tileverify::Operand::param(params_[o.name]);
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
    if (regs_.count(o.name)) return tileverify::Operand::reg(regs_[o.name], o.value);
    if (vars_.count(o.name)) return tileverify::Operand::buffer(vars_[o.name], o.value);
    if (params_.count(o.name)) return tileverify::Operand::param(params_[o.name], o.value);
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
    } else if (base == "cvt") {
      simple(Opcode::Cvt, 1);
      in.saturate = has("sat");
      if (types.size() != 2) fail(pin.loc, "cvt needs a destination and a source type");
      in.type = types[0];
      in.src_type = types[1];
    } else if (base == "ld" || base == "st") {
      in.op = base == "ld" ? Opcode::Ld : Opcode::St;
      in.space = has("shared") ? Space::Shared : has("local") ? Space::Local : has("param") ? Space::Param : Space::Global;
      if (has("const")) fail(pin.loc, "loads from .const memory are not supported");
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
      auto it = labels_.find(ops[0].name);
      if (it == labels_.end()) fail(ops[0].loc, "unknown label '" + ops[0].name + "'");
      in.target = it->second;
    } else if (base == "ret" || base == "exit") {
      in.op = Opcode::Ret;
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

  // Member masks: an immediate, or a register (nvcc often moves -1 into one first).
  tileverify::Operand mask(const ptx::Operand& o) {
    if (o.kind == ptx::Operand::Kind::Int) return tileverify::Operand::integer(std::int64_t(std::uint32_t(o.value)));
    return value(o);
  }

  const Module& m_;
  const Kernel& k_;
  std::uint64_t dyn_;
  Program p_;
  std::map<std::string, std::uint32_t> regs_, vars_, params_, labels_;
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
