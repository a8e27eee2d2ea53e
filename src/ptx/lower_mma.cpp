// Lowering mma.sync (PTX ISA, "Warp Level Matrix Multiply-Accumulate
// Instructions", "mma"): the m16n8k8 and m16n8k16 shapes with .row.col
// layouts and floating-point types. The other forms (m8n8k4, integer,
// single-bit, fp8, sparse, block-scaled) are refused by name.
#include "lower_ops.hpp"

namespace tileverify::ptx::lowering {

namespace {

// mma.sync.aligned.shape.row.col.dtype.atype.btype.ctype: the four type
// parts after the layouts, or an error naming what is there instead.
struct MmaTypes {
  std::string_view d, a, b, c;
};

MmaTypes mma_types(const Instruction& pin, const OpParts& parts) {
  const std::string op = str(pin.opcode);
  std::size_t col = 0;
  for (std::size_t i = 1; i < parts.size(); ++i)
    if (parts[i] == "col") col = i;
  if (col == 0 || parts.size() != col + 5)
    fail(pin.loc, "'" + op + "': only mma.sync.aligned.shape.row.col.dtype.atype.btype.ctype is supported");
  return {parts[col + 1], parts[col + 2], parts[col + 3], parts[col + 4]};
}

bool half_or_single(std::string_view t) { return t == "f16" || t == "f32"; }

}  // namespace

// The PTX ISA's combinations for these shapes ("Warp-level MMA: mma",
// syntax): .f16 inputs take .f16 or .f32 for C and D independently (an .f16
// C or D is two .f16x2 registers); .bf16 and .tf32 inputs take .f32 C and D.
// Every other input type (integers, .b1, .e4m3/.e5m2, .f64) is outside the
// model: refused rather than read as f16.
void lower_mma(KernelLowering& k, const Instruction& pin, Instr& in, const OpParts& parts) {
  const std::string op = str(pin.opcode);
  for (std::size_t i = 1; i < parts.size(); ++i)
    for (std::string_view q : {"sp", "block_scale", "kind::", "satfinite", "xor", "and", "popc"})
      if (starts_with(parts[i], q)) fail(pin.loc, "'" + op + "': mma ." + str(parts[i]) + " is not supported");
  if (!has_part(parts, "row") || !has_part(parts, "col")) fail(pin.loc, "only mma.sync .row.col layouts are supported");
  const bool k16 = has_part(parts, "m16n8k16");
  if (!k16 && !has_part(parts, "m16n8k8")) fail(pin.loc, "unsupported mma shape in '" + op + "'");
  if (pin.operands.size() != 4)
    bad_input(pin.loc, "'" + op + "' takes 4 operands, not " + std::to_string(pin.operands.size()));
  in.op = Opcode::Mma;
  in.mode = std::uint8_t(k16 ? MmaShape::M16N8K16 : MmaShape::M16N8K8);
  const MmaTypes t = mma_types(pin, parts);
  if (t.a != t.b || (t.a != "f16" && t.a != "bf16" && t.a != "tf32"))
    fail(pin.loc, "'" + op + "': mma.sync with ." + str(t.a) + " x ." + str(t.b) +
                      " inputs is not supported (only .f16, .bf16 and .tf32)");
  if (t.a == "tf32" && k16) bad_input(pin.loc, "'" + op + "': mma.sync .tf32 has no m16n8k16 shape");
  if (!half_or_single(t.d) || !half_or_single(t.c) || (t.a != "f16" && (t.d != "f32" || t.c != "f32")))
    bad_input(pin.loc, "'" + op + "': ." + str(t.a) + " inputs take " +
                           (t.a == "f16" ? "an .f16 or .f32" : "an .f32") + " accumulator, not ." + str(t.d) + " / ." +
                           str(t.c));
  in.type = t.d == "f16" ? DType::F16 : DType::F32;
  in.src_type = t.a == "bf16" ? DType::BF16 : t.a == "tf32" ? DType::F32 : DType::F16;
  // Registers per fragment (PTX ISA, "Matrix Fragments for mma.m16n8k8" and
  // "... mma.m16n8k16 with floating point type"): A holds M K / 32 elements a
  // lane, B K N / 32, C and D 4; two to a register for .f16/.bf16 and an .f16
  // accumulator, one for .tf32 and .f32. The evaluator tells an .f16 C from
  // an .f32 one by this count, so it is checked here.
  const std::size_t kk = k16 ? 16 : 8, per_ab = t.a == "tf32" ? 1 : 2;
  const std::size_t want[4] = {t.d == "f16" ? 2u : 4u, 16 * kk / 32 / per_ab, kk * 8 / 32 / per_ab,
                               t.c == "f16" ? 2u : 4u};
  const auto& ops = pin.operands;
  for (std::size_t i = 0; i < 4; ++i)
    if (ops[i].kind != ptx::Operand::Kind::Vector || ops[i].elements.size() != want[i])
      bad_input(ops[i].loc, "'" + op + "': operand " + "dabc"[i] + " must be a {..} list of " + std::to_string(want[i]) +
                                " registers");
  k.set_dsts(in.dst, ops[0]);
  in.src.reserve(ops[1].elements.size() + ops[2].elements.size() + ops[3].elements.size());
  for (std::size_t i = 1; i < 4; ++i)
    for (const auto& e : ops[i].elements) in.src.push_back(k.value(e));
}

}  // namespace tileverify::ptx::lowering
