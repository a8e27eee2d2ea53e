// CUTLASS's rounding of f32 operands to tf32 before mma.sync .tf32
// (NumericConverter<tfloat32_t, float, round_half_ulp_truncate>, the default
// of its tf32 tensor-op GEMMs on float data, as nvcc 13 emits it):
//   add.s32      a, x, 4096;            the f32 bits plus half a tf32 ulp
//   mov.b32      f, x;
//   abs.f32      g, f;
//   setp.geu.f32 p, g, 0f7F800000;      |x| is infinite or NaN
//   selp.b32     y, x, a, p;            then x itself
// mma.sync .tf32 reads y as a tf32 value, which (PTX ISA, "Alternate
// Floating-Point Data Formats") keeps the f32 sign and exponent and at least
// 10 mantissa bits, its layout implementation-defined; an H200 ignores the
// low 13 bits (tools/gpu_checks/tf32_rounding.cu), so y there is x rounded
// to the nearest tf32, ties away from zero. That is a conversion
// between float formats, the identity over the reals (architecture.md,
// decision 1): y is x. This holds only where y is read as an mma.sync .tf32
// A or B operand; anywhere else the bits plus 4096 are no rounding of x, so
// a form whose y is read any other way is left alone, and its integer add on
// float bits stays outside the model (not_structured at the add).
#include "lower_ops.hpp"

#include <algorithm>
#include <unordered_map>

namespace tileverify::ptx::lowering {

namespace {

using Kind = ptx::Operand::Kind;

std::string_view base_of(std::string_view op) { return op.substr(0, op.find('.')); }

// f(name) for each register an operand mentions.
template <class F>
void names_in(const ptx::Operand& o, F&& f) {
  if ((o.kind == Kind::Name || o.kind == Kind::Address) && !o.name.empty()) f(o.name);
  if (!o.pred_out.empty()) f(o.pred_out);
  for (const ptx::Operand& e : o.elements) names_in(e, f);
}

bool mentions(const ptx::Operand& o, std::string_view reg) {
  bool found = false;
  names_in(o, [&](std::string_view n) { found = found || n == reg; });
  return found;
}
bool mentions(const Instruction& in, std::string_view reg) {
  if (in.guard == reg) return true;
  for (const ptx::Operand& o : in.operands)
    if (mentions(o, reg)) return true;
  return false;
}

// Instructions whose first operand (a register or a {..} list) they only write.
bool writes_first(std::string_view op) {
  const std::string_view b = base_of(op);
  for (std::string_view w : {"mov", "selp", "add", "sub", "mul", "mad", "ld", "ldmatrix", "cvt", "and", "or", "xor",
                             "shl", "shr", "abs", "neg", "min", "max", "setp"})
    if (b == w) return true;
  return false;
}

// Every read of reg is an A or B operand of an mma.sync .tf32.
bool read_only_as_tf32(const Kernel& fn, std::string_view reg) {
  for (const Statement& s : fn.body) {
    if (s.kind != Statement::Kind::Instruction) continue;
    const Instruction& in = s.instr;
    if (in.guard == reg) return false;
    const bool tf32_mma = base_of(in.opcode) == "mma" && has_part(OpParts(in.opcode), "tf32");
    for (std::size_t k = 0; k < in.operands.size(); ++k) {
      const ptx::Operand& o = in.operands[k];
      if (!mentions(o, reg)) continue;
      if (k == 0 && (o.kind == Kind::Name || o.kind == Kind::Vector) && o.pred_out.empty() && writes_first(in.opcode))
        continue;  // written
      if (tf32_mma && (k == 1 || k == 2) && o.kind == Kind::Vector) continue;
      return false;
    }
  }
  return true;
}

bool is_op(const Instruction& in, std::string_view opcode, std::size_t n) {
  if (!in.guard.empty() || in.operands.size() != n || in.opcode != opcode) return false;
  for (const ptx::Operand& o : in.operands)
    if (!o.pred_out.empty()) return false;
  return true;
}

bool is_reg(const ptx::Operand& o, std::string_view name = {}) {
  return o.kind == Kind::Name && (name.empty() || o.name == name);
}

}  // namespace

std::vector<std::size_t> find_tf32_rounding(const Kernel& fn) {
  std::vector<std::size_t> out;
  auto has_selp = [](const Statement& s) {
    return s.kind == Statement::Kind::Instruction && s.instr.opcode == "selp.b32";
  };
  if (std::none_of(fn.body.begin(), fn.body.end(), has_selp)) return out;
  // register -> (the statement that writes it as its first operand, how many do)
  std::unordered_map<std::string_view, std::pair<std::size_t, int>> def;
  for (std::size_t i = 0; i < fn.body.size(); ++i) {
    const Statement& s = fn.body[i];
    if (s.kind != Statement::Kind::Instruction || s.instr.operands.empty()) continue;
    const ptx::Operand& d = s.instr.operands[0];
    if (d.kind == Kind::Name) {
      auto& e = def[d.name];
      e.first = i;
      ++e.second;
    }
  }
  // The one statement before `before` that writes reg with opcode, or none.
  auto single_def = [&](std::string_view reg, std::string_view opcode, std::size_t n, std::size_t before,
                        std::size_t* at) {
    auto it = def.find(reg);
    if (it == def.end() || it->second.second != 1 || it->second.first >= before) return false;
    *at = it->second.first;
    return is_op(fn.body[*at].instr, opcode, n);
  };
  std::unordered_map<std::string_view, bool> tf32_only;  // by y
  for (std::size_t i = 0; i < fn.body.size(); ++i) {
    if (!has_selp(fn.body[i])) continue;
    const Instruction& selp = fn.body[i].instr;
    if (!is_op(selp, "selp.b32", 4) || !is_reg(selp.operands[0]) || !is_reg(selp.operands[1]) ||
        !is_reg(selp.operands[2]) || !is_reg(selp.operands[3]))
      continue;
    const std::string_view y = selp.operands[0].name, x = selp.operands[1].name, a = selp.operands[2].name,
                           p = selp.operands[3].name;
    std::size_t ia = 0, ip = 0, ig = 0, iff = 0;
    if (!single_def(a, "add.s32", 3, i, &ia) || !is_reg(fn.body[ia].instr.operands[1], x) ||
        fn.body[ia].instr.operands[2].kind != Kind::Int || fn.body[ia].instr.operands[2].value != 4096)
      continue;
    if (!single_def(p, "setp.geu.f32", 3, i, &ip) || !is_reg(fn.body[ip].instr.operands[1]) ||
        fn.body[ip].instr.operands[2].kind != Kind::F32Bits || fn.body[ip].instr.operands[2].value != 0x7F800000)
      continue;
    const std::string_view g = fn.body[ip].instr.operands[1].name;
    if (!single_def(g, "abs.f32", 2, ip, &ig) || !is_reg(fn.body[ig].instr.operands[1])) continue;
    if (!single_def(fn.body[ig].instr.operands[1].name, "mov.b32", 2, ig, &iff) ||
        !is_reg(fn.body[iff].instr.operands[1], x))
      continue;
    // One straight run of code from the first read of x to the selp, in
    // which nothing writes x: the add, the mov and the selp read one x.
    const std::size_t lo = std::min(ia, iff);
    bool straight = true;
    for (std::size_t j = lo + 1; j < i && straight; ++j) {
      const Statement& s = fn.body[j];
      straight = s.kind == Statement::Kind::Instruction && base_of(s.instr.opcode) != "call" &&
                 (s.instr.operands.empty() || !mentions(s.instr.operands[0], x));
    }
    if (!straight) continue;
    // a is read by this selp alone (its only other mention is its add).
    std::size_t reads_of_a = 0;
    for (const Statement& s : fn.body)
      if (s.kind == Statement::Kind::Instruction && mentions(s.instr, a)) ++reads_of_a;
    if (reads_of_a != 2) continue;
    auto [only, fresh] = tf32_only.try_emplace(y, false);
    if (fresh) only->second = read_only_as_tf32(fn, y);
    if (!only->second) continue;
    out.push_back(ia);
    out.push_back(i);
  }
  return out;
}

}  // namespace tileverify::ptx::lowering
