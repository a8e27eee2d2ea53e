// Lowering wgmma.* and stmatrix (PTX ISA 8.x, "Warpgroup MMA Instructions"
// and "Warp-level matrix store instruction: stmatrix").
//
// The Instr encoding of WgmmaMma is documented at the opcode in
// include/tileverify/program.hpp (src/eval/machine_wgmma.cpp reads it).
#include "lower_ops.hpp"

namespace tileverify::ptx::lowering {

namespace {

// WgmmaMma's mode bits (program.hpp).
struct WgmmaFlags {
  static constexpr std::uint8_t kARegs = 1, kTransA = 2, kTransB = 4, kNegA = 8, kNegB = 16;
};

// The N of a shape "m64nNkK", or 0 when it is none of the dense shapes
// (m64, N a multiple of 8 up to 256, K the one the types give).
int wgmma_n(std::string_view shape, int k) {
  const std::string_view head = "m64n";
  if (shape.substr(0, head.size()) != head) return 0;
  std::size_t i = head.size();
  int n = 0;
  while (i < shape.size() && shape[i] >= '0' && shape[i] <= '9' && n <= 256) n = n * 10 + (shape[i++] - '0');
  const std::string tail = "k" + std::to_string(k);
  if (shape.substr(i) != tail || n < 8 || n > 256 || n % 8) return 0;
  return n;
}

// An immediate operand of wgmma.mma_async (imm-scale-a/b, imm-trans-a/b).
std::int64_t wgmma_imm(const ptx::Operand& o, const char* what) {
  if (o.kind != ptx::Operand::Kind::Int) bad_input(o.loc, std::string("wgmma.mma_async's ") + what + " must be an immediate");
  return o.value;
}

void lower_mma_async(KernelLowering& k, const Instruction& pin, Instr& in, const OpParts& parts) {
  const std::string op = str(pin.opcode);
  // The forms outside the model, named (PTX ISA, "wgmma.mma_async" and "wgmma.mma_async.sp").
  if (has_part(parts, "sp")) fail(pin.loc, "'" + op + "': sparse wgmma (wgmma.mma_async.sp) is not supported");
  for (const char* t : {"e4m3", "e5m2"})
    if (has_part(parts, std::string_view(t)))
      fail(pin.loc, "'" + op + "': wgmma on fp8 (." + t + ") inputs is not supported");
  for (const char* t : {"s8", "u8", "b1", "s32"})
    if (has_part(parts, std::string_view(t)))
      fail(pin.loc, "'" + op + "': integer wgmma (." + t + ") is not supported");
  if (parts.size() != 8 || !is_word(parts[2], "sync") || !is_word(parts[3], "aligned"))
    bad_input(pin.loc, "'" + op + "': expected wgmma.mma_async.sync.aligned.shape.dtype.atype.btype");
  DType d = DType::F32, a = DType::F32, b = DType::F32;
  const bool tf32 = is_word(parts[6], "tf32");
  if (!parse_dtype(parts[5], &d) || !parse_dtype(parts[6], &a) || !parse_dtype(parts[7], &b))
    bad_input(pin.loc, "'" + op + "': unknown types");
  if (tf32 != is_word(parts[7], "tf32") || (!tf32 && a != b) || (!tf32 && a != DType::F16 && a != DType::BF16))
    fail(pin.loc, "'" + op + "': only .f16.f16, .bf16.bf16 and .tf32.tf32 inputs are supported");
  if (d != DType::F32 && !(d == DType::F16 && a == DType::F16))
    bad_input(pin.loc, "'" + op + "': the accumulator is .f32 (or .f16 with .f16 inputs)");
  const int kdim = tf32 ? 8 : 16;
  const int n = wgmma_n(parts[4], kdim);
  if (n == 0) bad_input(pin.loc, "'" + op + "': the shape must be m64nNk" + std::to_string(kdim) + " with N = 8, 16, .. 256");
  in.op = Opcode::WgmmaMma;
  in.type = d;
  in.src_type = tf32 ? DType::F32 : a;
  in.shape = std::uint8_t(n / 8);
  const OperandList& ops = pin.operands;
  if (ops.size() < 4) bad_input(pin.loc, "'" + op + "' needs d, a, b and scale-d");
  const bool a_regs = ops[1].kind == ptx::Operand::Kind::Vector;
  // d, a, b, scale-d, imm-scale-a, imm-scale-b then imm-trans-a (descriptor A
  // only) and imm-trans-b, which only .f16/.bf16 have.
  const std::size_t trans = tf32 ? 0 : (a_regs ? 1 : 2);
  if (ops.size() != 6 + trans)
    bad_input(pin.loc, "'" + op + "' takes " + std::to_string(6 + trans) + " operands: d, a, b, scale-d, imm-scale-a, imm-scale-b" +
                           (trans == 2 ? ", imm-trans-a, imm-trans-b" : trans == 1 ? ", imm-trans-b" : ""));
  std::uint8_t mode = a_regs ? WgmmaFlags::kARegs : 0;
  for (int i = 0; i < 2; ++i) {
    const std::int64_t s = wgmma_imm(ops[4 + std::size_t(i)], i == 0 ? "imm-scale-a" : "imm-scale-b");
    if (s != 1 && s != -1) bad_input(ops[4 + std::size_t(i)].loc, "imm-scale-a/b must be 1 or -1");
    if (s == -1) mode |= i == 0 ? WgmmaFlags::kNegA : WgmmaFlags::kNegB;
  }
  if (trans == 2) {
    const std::int64_t ta = wgmma_imm(ops[6], "imm-trans-a");
    if (ta != 0 && ta != 1) bad_input(ops[6].loc, "imm-trans-a must be 0 or 1");
    if (ta) mode |= WgmmaFlags::kTransA;
  }
  if (trans >= 1) {
    const std::int64_t tb = wgmma_imm(ops[6 + trans - 1], "imm-trans-b");
    if (tb != 0 && tb != 1) bad_input(ops[6 + trans - 1].loc, "imm-trans-b must be 0 or 1");
    if (tb) mode |= WgmmaFlags::kTransB;
  }
  in.mode = mode;
  k.set_dsts(in.dst, ops[0]);
  const std::size_t want_d = std::size_t(d == DType::F32 ? n / 2 : n / 4);
  if (in.dst.size() != want_d)
    bad_input(ops[0].loc, "'" + op + "' has " + std::to_string(want_d) + " accumulator registers, not " +
                              std::to_string(in.dst.size()));
  if (a_regs) {
    if (ops[1].elements.size() != 4) bad_input(ops[1].loc, "wgmma's A in registers is four .b32 registers");
    for (const auto& e : ops[1].elements) in.src.push_back(k.value(e));
  } else {
    in.src.push_back(k.value(ops[1]));
  }
  in.src.push_back(k.value(ops[2]));
  in.src.push_back(k.value(ops[3]));  // scale-d: a predicate or an immediate
}

void lower_stmatrix(KernelLowering& k, const Instruction& pin, Instr& in, const OpParts& parts) {
  const std::string op = str(pin.opcode);
  if (!has_part(parts, "sync") || !has_part(parts, "aligned")) bad_input(pin.loc, "'" + op + "' needs .sync.aligned");
  if (!has_part(parts, "m8n8") || !has_part(parts, "b16"))
    fail(pin.loc, "'" + op + "': only stmatrix .m8n8 .b16 is supported");
  in.op = Opcode::StMatrix;
  in.mode = std::uint8_t(has_part(parts, "x4") ? 4 : has_part(parts, "x2") ? 2 : has_part(parts, "x1") ? 1 : 0);
  if (in.mode == 0) bad_input(pin.loc, "'" + op + "' needs .x1, .x2 or .x4");
  in.trans = has_part(parts, "trans");
  // Without a state space the address is generic (PTX ISA: it must point
  // into .shared); generic shared addresses are not modelled as integers.
  if (!has_part(parts, "shared") && !has_part(parts, "shared::cta"))
    fail(pin.loc, "'" + op + "': stmatrix with a generic address is not supported (use .shared)");
  in.space = Space::Shared;
  in.type = DType::B16;
  const OperandList& ops = pin.operands;
  if (ops.size() != 2 || ops[1].kind != ptx::Operand::Kind::Vector || ops[1].elements.size() != in.mode)
    bad_input(pin.loc, "'" + op + "' takes [address], {" + std::to_string(in.mode) + " registers}");
  in.src.push_back(k.address(ops[0]));
  for (const auto& e : ops[1].elements) in.src.push_back(k.value(e));
}

}  // namespace

void lower_wgmma(KernelLowering& k, const Instruction& pin, Instr& in, const OpParts& parts) {
  const std::string op = str(pin.opcode);
  if (is_word(parts[0], "stmatrix")) return lower_stmatrix(k, pin, in, parts);
  if (parts.size() < 2) bad_input(pin.loc, "unknown instruction '" + op + "'");
  const std::string_view what = parts[1];
  auto sync_aligned = [&] {
    if (parts.size() != 4 || !is_word(parts[2], "sync") || !is_word(parts[3], "aligned"))
      bad_input(pin.loc, "'" + op + "' needs .sync.aligned");
  };
  if (is_word(what, "fence")) {
    sync_aligned();
    if (!pin.operands.empty()) bad_input(pin.loc, "wgmma.fence takes no operands");
    in.op = Opcode::WgmmaFence;
  } else if (is_word(what, "commit_group")) {
    sync_aligned();
    if (!pin.operands.empty()) bad_input(pin.loc, "wgmma.commit_group takes no operands");
    in.op = Opcode::WgmmaCommit;
  } else if (is_word(what, "wait_group")) {
    sync_aligned();
    if (pin.operands.size() != 1 || pin.operands[0].kind != ptx::Operand::Kind::Int || pin.operands[0].value < 0)
      bad_input(pin.loc, "wgmma.wait_group takes one immediate N >= 0");
    in.op = Opcode::WgmmaWait;
    in.src.push_back(tileverify::Operand::integer(pin.operands[0].value));
  } else if (is_word(what, "mma_async")) {
    lower_mma_async(k, pin, in, parts);
  } else {
    fail(pin.loc, "'" + op + "' is not supported");
  }
}

}  // namespace tileverify::ptx::lowering
