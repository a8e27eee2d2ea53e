// nvcc's inline expansions of CUDA math functions, recognised whole.
//
// Without fast math, nvcc 13 (CUDA 13.0, the same text for sm_80 and sm_90)
// inlines libdevice's tanhf, erff, logf, log2f and log1pf as straight-line
// code with float-bit tricks (the exponent of a float split off with integer
// adds and masks) and branches on the input's value (erff's |x| >= 1.00296,
// logf's test for +inf / NaN). Both are outside the structured-CTA class: a
// float used as an integer, a branch on tensor data. What the code computes
// is nevertheless one real function of one input, so the whole sequence is
// replaced by one instruction computing that function (Opcode::Tanh, Erf,
// Log, Lg2, Log1p), as lower.cpp's find_idioms does for expf's 2^n.
//
// Soundness rests on matching exactly what nvcc emits (docs/evaluator.md,
// "Math functions as nvcc emits them"): every instruction of the form, in
// order (unrelated instructions may sit between them, outside the form's
// branches), with its opcode (up to .ftz, which only flushes subnormals: the
// model has none), its constants, and the dataflow from the input to the
// output; the form's intermediate registers used nowhere else in the body;
// its labels the target of its own branches only; the input not written
// while the form runs. Anything else is left alone, and is unsupported as
// before.
#include "lower_ops.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

namespace tileverify::ptx::lowering {

namespace {

using PK = ptx::Operand::Kind;

// The forms, as nvcc 13.0 emits them (nvcc -O3 -arch=sm_90 or sm_80, and
// with -use_fast_math, which adds .ftz and changes nothing else; fast-math
// logf and log2f are lg2.approx, tanhf tanh.approx, which lower directly).
// %x is the input, %y the output; %t, %r, %p are the form's own registers.
// A constant moved into a register (mov.f32 %t, 0f...) may also be an
// immediate, or a register set once from the same constant anywhere before.
// What nvcc may sink into logf's and log2f's form, between its last branch
// and its final select (which it may, since -(-inf) = +inf and c (-inf) =
// -inf for c > 0): -logf(x) (a negative log-likelihood), logf(x) * c.
enum class Post : std::uint8_t { None, Neg, MulPositive };
struct FormText {
  const char* function;
  Opcode op;
  const char* code;
  Post post = Post::None;
};

// tanhf: for |x| >= 0.6, 1 - 2 / (2^(2|x| log2 e) + 1) (1 from |x| >= 9.01 on)
// with the sign of x; below 0.6 an odd polynomial.
constexpr const char* kTanh = R"(
abs.f32 %t0, %x;
mul.f32 %t1, %t0, 0f4038AA3B;
ex2.approx.ftz.f32 %t2, %t1;
add.f32 %t3, %t2, 0f3F800000;
mov.f32 %t4, 0f3F800000;
rcp.approx.ftz.f32 %t5, %t3;
mov.f32 %t6, 0fC0000000;
fma.rn.f32 %t7, %t5, %t6, %t4;
setp.ge.f32 %p0, %t0, 0f41102CB4;
selp.f32 %t8, 0f3F800000, %t7, %p0;
copysign.f32 %t9, %x, %t8;
mul.f32 %t10, %x, %x;
mov.f32 %t11, 0fBD563CAE;
mov.f32 %t12, 0f3C80F082;
fma.rn.f32 %t13, %t12, %t10, %t11;
mov.f32 %t14, 0f3E085941;
fma.rn.f32 %t15, %t13, %t10, %t14;
mov.f32 %t16, 0fBEAAA9ED;
fma.rn.f32 %t17, %t15, %t10, %t16;
mov.f32 %t18, 0f00000000;
fma.rn.f32 %t19, %t17, %t10, %t18;
fma.rn.f32 %t20, %t19, %x, %x;
setp.ge.f32 %p1, %t0, 0f3F19999A;
selp.f32 %y, %t9, %t20, %p1;
)";

// erff: one polynomial in |x| (|x| >= 1.00296) or x^2 (below), selected
// coefficient by coefficient; for |x| >= 1.00296 the branch computes
// 1 - 2^p with the sign of x.
constexpr const char* kErf = R"(
abs.f32 %t0, %x;
setp.ltu.f32 %p0, %t0, 0f3F8060FE;
setp.ge.f32 %p1, %t0, 0f3F8060FE;
mul.f32 %t1, %x, %x;
selp.f32 %t2, %t0, %t1, %p1;
selp.f32 %t3, 0f38EB4C3A, 0f38B1E96A, %p1;
selp.f32 %t4, 0fBAAE005B, 0fBA574D20, %p1;
fma.rn.f32 %t5, %t3, %t2, %t4;
selp.f32 %t6, 0f3C09919F, 0f3BAAD5EA, %p1;
fma.rn.f32 %t7, %t5, %t2, %t6;
selp.f32 %t8, 0fBD24D99A, 0fBCDC1BE7, %p1;
fma.rn.f32 %t9, %t7, %t2, %t8;
selp.f32 %t10, 0f3E235519, 0f3DE718AF, %p1;
fma.rn.f32 %t11, %t9, %t2, %t10;
selp.f32 %t12, 0f3F69B4F9, 0fBEC093AC, %p1;
fma.rn.f32 %t13, %t11, %t2, %t12;
selp.f32 %t14, 0f3F210A14, 0f3E0375D3, %p1;
fma.rn.f32 %t15, %t13, %t2, %t14;
neg.f32 %t16, %t0;
selp.f32 %t17, %t16, %x, %p1;
fma.rn.f32 %y, %t15, %t17, %t17;
@%p0 bra $M0;
ex2.approx.ftz.f32 %t18, %y;
mov.f32 %t19, 0f3F800000;
sub.f32 %t20, %t19, %t18;
copysign.f32 %y, %x, %t20;
$M0:
)";

// logf: subnormals scaled by 2^23; the exponent e and mantissa m of x split
// off the float bits (x = 2^e m, m in [0.666, 1.333)); e ln 2 + a polynomial
// in m - 1; +inf and NaN (bits at or above 0x7f800000, negative x included)
// give x * inf + inf; 0 gives -inf.
constexpr const char* kLog = R"(
setp.lt.f32 %p0, %x, 0f00800000;
mul.f32 %t0, %x, 0f4B000000;
selp.f32 %t1, %t0, %x, %p0;
selp.f32 %t2, 0fC1B80000, 0f00000000, %p0;
mov.b32 %r0, %t1;
add.s32 %r1, %r0, -1059760811;
and.b32 %r2, %r1, -8388608;
sub.s32 %r3, %r0, %r2;
mov.b32 %t3, %r3;
cvt.rn.f32.s32 %t4, %r2;
mov.f32 %t5, 0f34000000;
fma.rn.f32 %t6, %t4, %t5, %t2;
add.f32 %t7, %t3, 0fBF800000;
mov.f32 %t8, 0f3E1039F6;
mov.f32 %t9, 0fBE055027;
fma.rn.f32 %t10, %t9, %t7, %t8;
mov.f32 %t11, 0fBDF8CDCC;
fma.rn.f32 %t12, %t10, %t7, %t11;
mov.f32 %t13, 0f3E0F2955;
fma.rn.f32 %t14, %t12, %t7, %t13;
mov.f32 %t15, 0fBE2AD8B9;
fma.rn.f32 %t16, %t14, %t7, %t15;
mov.f32 %t17, 0f3E4CED0B;
fma.rn.f32 %t18, %t16, %t7, %t17;
mov.f32 %t19, 0fBE7FFF22;
fma.rn.f32 %t20, %t18, %t7, %t19;
mov.f32 %t21, 0f3EAAAA78;
fma.rn.f32 %t22, %t20, %t7, %t21;
mov.f32 %t23, 0fBF000000;
fma.rn.f32 %t24, %t22, %t7, %t23;
mul.f32 %t25, %t7, %t24;
fma.rn.f32 %t26, %t25, %t7, %t7;
mov.f32 %t27, 0f3F317218;
fma.rn.f32 %t28, %t6, %t27, %t26;
setp.lt.u32 %p1, %r0, 2139095040;
@%p1 bra $M0;
mov.f32 %t29, 0f7F800000;
fma.rn.f32 %t28, %t1, %t29, %t29;
$M0:
setp.eq.f32 %p2, %t1, 0f00000000;
selp.f32 %y, 0fFF800000, %t28, %p2;
)";

// log2f: logf's structure with a polynomial for log2(m) and e added as is.
constexpr const char* kLog2 = R"(
setp.lt.f32 %p0, %x, 0f00800000;
mul.f32 %t0, %x, 0f4B000000;
selp.f32 %t1, %t0, %x, %p0;
selp.f32 %t2, 0fC1B80000, 0f00000000, %p0;
mov.b32 %r0, %t1;
add.s32 %r1, %r0, -1060439283;
and.b32 %r2, %r1, -8388608;
sub.s32 %r3, %r0, %r2;
mov.b32 %t3, %r3;
cvt.rn.f32.s32 %t4, %r2;
mov.f32 %t5, 0f34000000;
fma.rn.f32 %t6, %t4, %t5, %t2;
add.f32 %t7, %t3, 0fBF800000;
mov.f32 %t8, 0fBE2C7F30;
mov.f32 %t9, 0f3DC6B27F;
fma.rn.f32 %t10, %t9, %t7, %t8;
mov.f32 %t11, 0f3E2FCF2A;
fma.rn.f32 %t12, %t10, %t7, %t11;
mov.f32 %t13, 0fBE374E43;
fma.rn.f32 %t14, %t12, %t7, %t13;
mov.f32 %t15, 0f3E520BF4;
fma.rn.f32 %t16, %t14, %t7, %t15;
mov.f32 %t17, 0fBE763C8B;
fma.rn.f32 %t18, %t16, %t7, %t17;
mov.f32 %t19, 0f3E93BF99;
fma.rn.f32 %t20, %t18, %t7, %t19;
mov.f32 %t21, 0fBEB8AA49;
fma.rn.f32 %t22, %t20, %t7, %t21;
mov.f32 %t23, 0f3EF6384A;
fma.rn.f32 %t24, %t22, %t7, %t23;
mov.f32 %t25, 0fBF38AA3B;
fma.rn.f32 %t26, %t24, %t7, %t25;
mul.f32 %t27, %t7, %t26;
mul.f32 %t28, %t7, %t27;
mov.f32 %t29, 0f3FB8AA3B;
fma.rn.f32 %t30, %t7, %t29, %t28;
add.f32 %t31, %t6, %t30;
setp.lt.u32 %p1, %r0, 2139095040;
@%p1 bra $M0;
mov.f32 %t32, 0f7F800000;
fma.rn.f32 %t31, %t1, %t32, %t32;
$M0:
setp.eq.f32 %p2, %t1, 0f00000000;
selp.f32 %y, 0fFF800000, %t31, %p2;
)";

// log2f as Triton 3.6 emits libdevice's __nv_log2f (tl.math.log2, LLVM's
// NVPTX backend): nvcc's form on untyped .b32 registers, without the two
// bit-cast moves (the float register is read by the integer add and
// subtract directly), its constants moved with mov.b32.
constexpr const char* kLog2Triton = R"(
setp.lt.f32 %p0, %x, 0f00800000;
mul.f32 %t0, %x, 0f4B000000;
selp.f32 %t1, %t0, %x, %p0;
selp.f32 %t2, 0fC1B80000, 0f00000000, %p0;
add.s32 %r1, %t1, -1060439283;
and.b32 %r2, %r1, -8388608;
sub.s32 %r3, %t1, %r2;
cvt.rn.f32.s32 %t4, %r2;
mov.f32 %t5, 0f34000000;
fma.rn.f32 %t6, %t4, %t5, %t2;
add.f32 %t7, %r3, 0fBF800000;
mov.f32 %t8, 0fBE2C7F30;
mov.f32 %t9, 0f3DC6B27F;
fma.rn.f32 %t10, %t9, %t7, %t8;
mov.f32 %t11, 0f3E2FCF2A;
fma.rn.f32 %t12, %t10, %t7, %t11;
mov.f32 %t13, 0fBE374E43;
fma.rn.f32 %t14, %t12, %t7, %t13;
mov.f32 %t15, 0f3E520BF4;
fma.rn.f32 %t16, %t14, %t7, %t15;
mov.f32 %t17, 0fBE763C8B;
fma.rn.f32 %t18, %t16, %t7, %t17;
mov.f32 %t19, 0f3E93BF99;
fma.rn.f32 %t20, %t18, %t7, %t19;
mov.f32 %t21, 0fBEB8AA49;
fma.rn.f32 %t22, %t20, %t7, %t21;
mov.f32 %t23, 0f3EF6384A;
fma.rn.f32 %t24, %t22, %t7, %t23;
mov.f32 %t25, 0fBF38AA3B;
fma.rn.f32 %t26, %t24, %t7, %t25;
mul.f32 %t27, %t7, %t26;
mul.f32 %t28, %t7, %t27;
mov.f32 %t29, 0f3FB8AA3B;
fma.rn.f32 %t30, %t7, %t29, %t28;
add.f32 %t31, %t6, %t30;
setp.lt.u32 %p1, %t1, 2139095040;
@%p1 bra $M0;
mov.f32 %t32, 0f7F800000;
fma.rn.f32 %t31, %t1, %t32, %t32;
$M0:
setp.eq.f32 %p2, %t1, 0f00000000;
selp.f32 %y, 0fFF800000, %t31, %p2;
)";

// log1pf: the exponent of 1 + x (rounded toward zero) scales x and 1 apart,
// a polynomial in the scaled sum; bits of x at or above 0x7f800000 (+inf,
// NaN, negative x) go to x * inf + inf unless x < -1 ... -0 (bits below
// 0xbf800001 as signed: -1 < x <= -0), and x = 0 keeps its sign.
constexpr const char* kLog1p = R"(
add.rz.f32 %t0, %x, 0f3F800000;
mov.b32 %r0, %t0;
add.s32 %r1, %r0, -1061158912;
and.b32 %r2, %r1, -8388608;
mov.b32 %r3, %x;
sub.s32 %r4, %r3, %r2;
mov.b32 %t2, %r4;
mov.u32 %r5, 1082130432;
sub.s32 %r6, %r5, %r2;
mov.b32 %t3, %r6;
mov.f32 %t4, 0fBF800000;
mov.f32 %t5, 0f3E800000;
fma.rn.f32 %t6, %t5, %t3, %t4;
add.f32 %t7, %t6, %t2;
cvt.rn.f32.s32 %t8, %r2;
mul.f32 %t9, %t8, 0f34000000;
mov.f32 %t10, 0f3DD80012;
mov.f32 %t11, 0fBD39BF78;
fma.rn.f32 %t12, %t11, %t7, %t10;
mov.f32 %t13, 0fBE0778E0;
fma.rn.f32 %t14, %t12, %t7, %t13;
mov.f32 %t15, 0f3E146475;
fma.rn.f32 %t16, %t14, %t7, %t15;
mov.f32 %t17, 0fBE2A68DD;
fma.rn.f32 %t18, %t16, %t7, %t17;
mov.f32 %t19, 0f3E4CAF9E;
fma.rn.f32 %t20, %t18, %t7, %t19;
mov.f32 %t21, 0fBE800042;
fma.rn.f32 %t22, %t20, %t7, %t21;
mov.f32 %t23, 0f3EAAAAE6;
fma.rn.f32 %t24, %t22, %t7, %t23;
mov.f32 %t25, 0fBF000000;
fma.rn.f32 %t26, %t24, %t7, %t25;
mul.f32 %t27, %t7, %t26;
fma.rn.f32 %t28, %t27, %t7, %t7;
mov.f32 %t29, 0f3F317218;
fma.rn.f32 %y, %t9, %t29, %t28;
setp.lt.u32 %p0, %r3, 2139095040;
@%p0 bra $M0;
setp.lt.s32 %p1, %r3, -1082130431;
@%p1 bra $M1;
mov.f32 %t30, 0f7F800000;
fma.rn.f32 %y, %x, %t30, %t30;
$M1:
setp.eq.f32 %p2, %x, 0f00000000;
selp.f32 %y, 0f80000000, %y, %p2;
$M0:
)";

constexpr FormText kForms[] = {
    {"tanhf", Opcode::Tanh, kTanh},
    {"erff", Opcode::Erf, kErf},
    {"logf", Opcode::Log, kLog},
    {"log2f", Opcode::Lg2, kLog2},
    {"log1pf", Opcode::Log1p, kLog1p},
    {"log2f (Triton)", Opcode::Lg2, kLog2Triton},
    {"-logf", Opcode::Log, kLog, Post::Neg},
    {"-log2f", Opcode::Lg2, kLog2, Post::Neg},
    {"logf * c", Opcode::Log, kLog, Post::MulPositive},
    {"log2f * c", Opcode::Lg2, kLog2, Post::MulPositive},
};

// The text of a form with its sunk operation: the final select of -inf or
// the joined value becomes a select of g(-inf) or g(the joined value).
std::string with_post(const FormText& t) {
  std::string code = t.code;
  if (t.post == Post::None) return code;
  const std::string select = "selp.f32 %y, 0fFF800000, ";
  const std::size_t at = code.rfind(select);
  if (at == std::string::npos) return std::string();
  const std::size_t comma = code.find(',', at + select.size());
  const std::string joined = code.substr(at + select.size(), comma - at - select.size());
  const std::string predicate = code.substr(comma);  // ", %p2;\n"
  code.erase(at);
  if (t.post == Post::Neg)
    code += "neg.f32 %t39, " + joined + ";\nselp.f32 %y, 0f7F800000, %t39" + predicate;
  else
    code += "mul.f32 %t39, " + joined + ", %c;\nselp.f32 %y, 0fFF800000, %t39" + predicate;
  return code;
}

// ---------------------------------------------------------------- compiled forms

// A form's operand: one of its registers (0 is %x, 1 is %y), a constant, or
// one of its labels.
struct FOperand {
  // Scale: %c, the positive constant of a sunk product (an immediate or a
  // register set once from one), which the function's value is multiplied by.
  enum Kind : std::uint8_t { Reg, Imm, Label, Scale } kind = Reg;
  PK imm_kind = PK::Int;  // Imm: Int or F32Bits
  std::int64_t value = 0;  // Reg, Label: the number; Imm: the constant
};
struct FStatement {
  bool label = false;
  int label_id = 0;
  std::string opcode;  // without .ftz
  int guard = -1;      // a register number, or -1
  bool guard_negated = false;
  bool branch = false;
  std::vector<FOperand> ops;
  // The form's statements before this one, in its straight-line stretch,
  // that must come before it (it reads what they write, or writes what they
  // read or write); the others may come in either order, as nvcc's
  // scheduler sometimes puts them.
  std::vector<std::size_t> after;
};
struct Form {
  const char* function = "";
  Opcode op = Opcode::Mov;
  Post post = Post::None;
  std::vector<FStatement> code;
  int regs = 0, labels = 0;
  std::size_t signature = 0;  // a statement few bodies have one like: copysign, the exponent mask
};

// The dotted opcode without its .ftz parts.
std::string without_ftz(std::string_view op) {
  std::string r;
  r.reserve(op.size());
  std::size_t b = 0;
  while (b <= op.size()) {
    std::size_t e = op.find('.', b);
    if (e == std::string_view::npos) e = op.size();
    std::string_view part = op.substr(b, e - b);
    if (part != "ftz") {
      if (!r.empty()) r += '.';
      r.append(part);
    }
    b = e + 1;
  }
  return r;
}

// Whether the kernel's opcode is `want` (a form's, without .ftz) up to .ftz
// parts, without building a string.
bool same_opcode(std::string_view op, const std::string& want) {
  std::size_t i = 0, b = 0;
  while (b <= op.size()) {
    std::size_t e = op.find('.', b);
    if (e == std::string_view::npos) e = op.size();
    std::string_view part = op.substr(b, e - b);
    b = e + 1;
    if (part == "ftz") continue;
    if (i != 0) {
      if (i >= want.size() || want[i] != '.') return false;
      ++i;
    }
    if (want.compare(i, part.size(), part) != 0) return false;
    i += part.size();
  }
  return i == want.size();
}

// Parses a form's text (as the body of a kernel, with the project's PTX
// parser) and folds its constant moves into their uses.
bool compile(const FormText& text, Form* out) {
  const std::string body = with_post(text);
  if (body.empty()) return false;
  const std::string ptx = std::string(".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry form()\n{\n") +
                          ".reg .pred %p<8>;\n.reg .f32 %t<40>;\n.reg .b32 %r<16>;\n.reg .f32 %x;\n.reg .f32 %y;\n" +
                          ".reg .f32 %c;\n" + body + "}\n";
  ParseResult parsed = parse_ptx(ptx, std::string("<") + text.function + " form>");
  if (!parsed.module || parsed.module->kernels.size() != 1) return false;
  const Kernel& k = parsed.module->kernels[0];
  Form f;
  f.function = text.function;
  f.op = text.op;
  f.post = text.post;
  std::unordered_map<std::string, int> regs{{"%x", 0}, {"%y", 1}}, labels;
  auto reg = [&](std::string_view n) { return regs.try_emplace(std::string(n), int(regs.size())).first->second; };
  auto label = [&](std::string_view n) { return labels.try_emplace(std::string(n), int(labels.size())).first->second; };
  // A register the form sets once, from a constant: its constant.
  std::unordered_map<std::string_view, const ptx::Operand*> constant;
  std::unordered_map<std::string_view, int> writes;
  for (const Statement& s : k.body)
    if (s.kind == Statement::Kind::Instruction && !s.instr.operands.empty() && !starts_with(s.instr.opcode, "bra"))
      ++writes[s.instr.operands[0].name];
  for (const Statement& s : k.body) {
    FStatement fs;
    if (s.kind == Statement::Kind::Label) {
      fs.label = true;
      fs.label_id = label(s.label);
      f.code.push_back(std::move(fs));
      continue;
    }
    const Instruction& in = s.instr;
    if (starts_with(in.opcode, "mov.") && in.operands.size() == 2 && in.operands[0].kind == PK::Name &&
        (in.operands[1].kind == PK::F32Bits || in.operands[1].kind == PK::Int) && writes[in.operands[0].name] == 1) {
      constant[in.operands[0].name] = &in.operands[1];
      continue;
    }
    fs.opcode = without_ftz(in.opcode);
    fs.branch = starts_with(in.opcode, "bra");
    if (!in.guard.empty()) {
      fs.guard = reg(in.guard);
      fs.guard_negated = in.guard_negated;
    }
    for (const ptx::Operand& o : in.operands) {
      FOperand fo;
      if (o.kind == PK::F32Bits || o.kind == PK::Int) {
        fo.kind = FOperand::Imm;
        fo.imm_kind = o.kind;
        fo.value = o.value;
      } else if (o.kind != PK::Name) {
        return false;
      } else if (fs.branch) {
        fo.kind = FOperand::Label;
        fo.value = label(o.name);
      } else if (o.name == "%c") {
        fo.kind = FOperand::Scale;
      } else if (auto c = constant.find(o.name); c != constant.end()) {
        fo.kind = FOperand::Imm;
        fo.imm_kind = c->second->kind;
        fo.value = c->second->value;
      } else {
        fo.value = reg(o.name);
      }
      fs.ops.push_back(fo);
    }
    f.code.push_back(std::move(fs));
  }
  f.regs = int(regs.size());
  f.labels = int(labels.size());
  for (std::size_t j = f.code.size(); j-- > 0;)
    if (starts_with(f.code[j].opcode, "copysign") || starts_with(f.code[j].opcode, "and.")) f.signature = j;
  auto reads = [](const FStatement& a, std::int64_t r) {
    if (a.guard == r) return true;
    for (std::size_t i = a.branch ? 0 : 1; i < a.ops.size(); ++i)
      if (a.ops[i].kind == FOperand::Reg && a.ops[i].value == r) return true;
    return false;
  };
  auto written = [](const FStatement& a) -> std::int64_t {
    return a.branch || a.label || a.ops.empty() || a.ops[0].kind != FOperand::Reg ? -1 : a.ops[0].value;
  };
  for (std::size_t j = 0; j < f.code.size(); ++j) {
    FStatement& b = f.code[j];
    if (b.label || b.branch) continue;
    for (std::size_t i = j; i-- > 0;) {
      const FStatement& a = f.code[i];
      if (a.label || a.branch) break;  // the stretch begins after a control statement
      const std::int64_t wa = written(a), wb = written(b);
      if ((wa >= 0 && (reads(b, wa) || wa == wb)) || (wb >= 0 && reads(a, wb))) b.after.push_back(i);
    }
  }
  *out = std::move(f);
  return !out->code.empty() && !out->code[0].label;
}

const std::vector<Form>& forms() {
  static const std::vector<Form> all = [] {
    std::vector<Form> v;
    for (const FormText& t : kForms) {
      Form f;
      if (compile(t, &f)) v.push_back(std::move(f));
    }
    return v;
  }();
  return all;
}

// ---------------------------------------------------------------- the kernel's side

bool control(std::string_view op) {
  return starts_with(op, "bra") || starts_with(op, "ret") || starts_with(op, "exit") || starts_with(op, "call") ||
         starts_with(op, "trap");
}

// The registers a statement names, read or written, guard included.
template <class F>
void for_each_register(const Instruction& in, F f) {
  if (!in.guard.empty()) f(in.guard);
  const bool branch = starts_with(in.opcode, "bra");
  for (const ptx::Operand& o : in.operands) {
    if ((o.kind == PK::Name && !branch) || (o.kind == PK::Address && !o.name.empty())) f(o.name);
    if (!o.pred_out.empty()) f(o.pred_out);
    for (const ptx::Operand& e : o.elements)
      if (e.kind == PK::Name) f(e.name);
  }
}

// Whether in writes register r (its destination operand: a register or a
// vector of them; stores, branches and reductions have none).
bool writes(const Instruction& in, std::string_view r) {
  if (in.operands.empty() || starts_with(in.opcode, "st.") || starts_with(in.opcode, "red.") || control(in.opcode))
    return false;
  const ptx::Operand& d = in.operands[0];
  if (d.kind == PK::Name) return d.name == r || d.pred_out == r;
  if (d.kind == PK::Vector)
    for (const ptx::Operand& e : d.elements)
      if (e.kind == PK::Name && e.name == r) return true;
  return false;
}

// Where each register and label of a body is named.
struct BodyIndex {
  explicit BodyIndex(const Kernel& fn) {
    for (std::uint32_t i = 0; i < fn.body.size(); ++i) {
      const Statement& s = fn.body[i];
      if (s.kind != Statement::Kind::Instruction) continue;
      for_each_register(s.instr, [&](std::string_view r) {
        std::vector<std::uint32_t>& v = mentions[r];
        if (v.empty() || v.back() != i) v.push_back(i);
      });
      if (!s.instr.operands.empty() && !control(s.instr.opcode) && s.instr.operands[0].kind == PK::Name) {
        Def& d = defs[s.instr.operands[0].name];
        ++d.count;
        d.at = i;
      }
      if (starts_with(s.instr.opcode, "bra") && !s.instr.operands.empty())
        branches_to[s.instr.operands[0].name].push_back(i);
    }
    for (std::size_t i = 0; i < fn.body.size(); ++i)
      if (fn.body[i].kind == Statement::Kind::Label) label_at[fn.body[i].label] = i;
  }
  // Whether statement `def` runs before statement `use` on every path from
  // the body's entry: `use` cannot be reached with `def` taken out.
  bool dominates(const Kernel& fn, std::size_t def, std::size_t use) {
    auto [it, fresh] = avoiding.try_emplace(def);
    std::vector<bool>& seen = it->second;
    if (fresh) {
      const std::size_t n = fn.body.size();
      seen.assign(n + 1, false);
      std::vector<std::size_t> work{0};
      auto reach = [&](std::size_t i) {
        if (i <= n && i != def && !seen[i]) {
          seen[i] = true;
          work.push_back(i);
        }
      };
      seen[0] = def != 0;
      if (def == 0) work.clear();
      while (!work.empty()) {
        const std::size_t i = work.back();
        work.pop_back();
        if (i == n) continue;
        const Statement& s = fn.body[i];
        if (s.kind == Statement::Kind::Label) {
          reach(i + 1);
          continue;
        }
        const Instruction& in = s.instr;
        const bool guarded = !in.guard.empty();
        if (starts_with(in.opcode, "bra")) {
          auto t = in.operands.empty() ? label_at.end() : label_at.find(in.operands[0].name);
          if (t == label_at.end()) {  // somewhere unknown: assume it reaches everything
            seen.assign(n + 1, true);
            break;
          }
          reach(t->second);
          if (guarded) reach(i + 1);
        } else if (starts_with(in.opcode, "ret") || starts_with(in.opcode, "exit") || starts_with(in.opcode, "trap")) {
          if (guarded) reach(i + 1);
        } else {
          reach(i + 1);
        }
      }
    }
    return !seen[use];
  }
  struct Def {
    int count = 0;
    std::uint32_t at = 0;
  };
  std::unordered_map<std::string_view, std::vector<std::uint32_t>> mentions, branches_to;
  std::unordered_map<std::string_view, Def> defs;
  std::unordered_map<std::string_view, std::size_t> label_at;
  std::unordered_map<std::size_t, std::vector<bool>> avoiding;  // def -> what the entry reaches without it
};

// One attempt to match a form at a statement.
class Matcher {
 public:
  // claimed: per statement, whether a form matched before covers it (empty:
  // none). Such a statement is passed over between this form's instructions,
  // labels and branches included: it is replaced by that form's one
  // instruction, which reads only its own input and writes only its output,
  // neither of them this form's (check() sees to that on the whole body).
  // Triton interleaves the __nv_log2f copies of the rows a thread holds.
  Matcher(const Kernel& fn, BodyIndex& index, const Form& form, const std::vector<bool>& claimed)
      : fn_(fn),
        index_(index),
        form_(form),
        claimed_(claimed) {
    b_.reg.resize(std::size_t(form.regs));
    b_.label.resize(std::size_t(form.labels));
  }

  // Matches the form with its first instruction at statement `start`;
  // fills the statements it covers (M) and the input / output operands.
  bool run(std::size_t start) {
    const std::size_t n = fn_.body.size();
    const std::vector<FStatement>& code = form_.code;
    std::vector<std::size_t> at(code.size(), SIZE_MAX);  // the kernel statement each matched
    std::size_t pos = start;
    bool first = true;
    int depth = 0;  // inside the form's own branches: nothing else may run there
    for (std::size_t j = 0; j < code.size();) {
      // A control statement (label, branch) alone; else a straight-line
      // stretch [j, end), whose statements may come in any order their
      // dependences allow.
      std::size_t end = j + 1;
      if (!code[j].label && !code[j].branch)
        while (end < code.size() && !code[end].label && !code[end].branch) ++end;
      for (std::size_t left = end - j; left > 0; --left) {
        std::size_t k = first ? start : pos + 1;
        std::size_t passed_over = 0;  // claimed statements, not counted in the window
        for (;; ++k) {
          if (k >= n || k - pos - passed_over > kWindow) return false;
          if (!first && !claimed_.empty() && claimed_[k]) {
            ++passed_over;
            continue;
          }
          const Statement& s = fn_.body[k];
          std::size_t hit = SIZE_MAX;
          for (std::size_t c = j; c < end && hit == SIZE_MAX; ++c) {
            const FStatement& fs = code[c];
            if (at[c] != SIZE_MAX) continue;
            bool ready = true;
            for (std::size_t d : fs.after) ready &= at[d] != SIZE_MAX;
            if (!ready) continue;
            if (fs.label ? s.kind == Statement::Kind::Label &&
                               bind(b_.label, b_.label_of, std::size_t(fs.label_id), s.label)
                         : s.kind == Statement::Kind::Instruction && match(s.instr, fs, k))
              hit = c;
          }
          if (hit != SIZE_MAX) {
            at[hit] = k;
            if (code[hit].label) --depth;
            if (code[hit].branch && code[hit].guard >= 0) ++depth;
            if (!code[hit].label) last_ = k;
            covered_.push_back(k);
            break;
          }
          // Anything between the form's instructions must be an instruction
          // that can run before or after the form: no label (a way in), no
          // control transfer; inside the form's branches only constant
          // moves, which are dropped with the form.
          if (first || s.kind != Statement::Kind::Instruction || control(s.instr.opcode)) return false;
          if (depth > 0) {
            if (!constant_move(s.instr)) return false;
            inside_.push_back(k);
          }
        }
        pos = k;
        first = false;
      }
      j = end;
    }
    // The form's last instruction writes the output last: it must be the
    // kernel's last one of the form.
    std::size_t final_instruction = code.size();
    while (final_instruction-- > 0 && code[final_instruction].label) {
    }
    return depth == 0 && at[final_instruction] == last_ && check();
  }

  const std::vector<std::size_t>& covered() const { return covered_; }
  // The statement that becomes the function's instruction: the form's last
  // instruction, which writes the output last.
  std::size_t last_instruction() const { return last_; }
  const ptx::Operand* input() const { return b_.input; }
  const ptx::Operand* scale() const { return b_.scale; }
  const ptx::Operand* output() const { return &fn_.body[last_instruction()].instr.operands[0]; }

 private:
  static constexpr std::size_t kWindow = 48;  // instructions skipped between two of the form's

  static bool constant_move(const Instruction& in) {
    return starts_with(in.opcode, "mov.") && in.operands.size() == 2 && in.operands[0].kind == PK::Name &&
           (in.operands[1].kind == PK::F32Bits || in.operands[1].kind == PK::Int);
  }

  // Binds form name i to kernel name `name` (one to one).
  static bool bind(std::vector<std::string_view>& fwd, std::unordered_map<std::string_view, std::size_t>& back,
                   std::size_t i, std::string_view name) {
    if (!fwd[i].empty()) return fwd[i] == name;
    auto [it, fresh] = back.try_emplace(name, i);
    if (!fresh && it->second != i) return false;
    fwd[i] = name;
    return true;
  }

  // Whether register `o` is set once, by an unguarded move of a constant that
  // `wanted` accepts, at a statement that runs before `at` on every path;
  // that move then goes with the form (constants_).
  template <class Wanted>
  bool constant_def(const ptx::Operand& o, std::size_t at, Wanted wanted) {
    auto d = index_.defs.find(o.name);
    if (d == index_.defs.end() || d->second.count != 1 || d->second.at >= at || !index_.dominates(fn_, d->second.at, at))
      return false;
    const Instruction& mv = fn_.body[d->second.at].instr;
    if (!constant_move(mv) || !mv.guard.empty() || !wanted(mv.operands[1])) return false;
    constants_.push_back(d->second.at);
    return true;
  }

  bool operand(const ptx::Operand& o, const FOperand& f, bool written, std::size_t at) {
    switch (f.kind) {
      case FOperand::Label: return o.kind == PK::Name && bind(b_.label, b_.label_of, std::size_t(f.value), o.name);
      case FOperand::Imm:
        if (o.kind == f.imm_kind) return o.value == f.value;
        if (o.kind == PK::Name)  // a register set once, before, from the same constant
          return constant_def(o, at, [&](const ptx::Operand& c) { return c.kind == f.imm_kind && c.value == f.value; });
        return false;
      case FOperand::Scale: {
        // A positive finite float: c (-inf) = -inf, which the form's select keeps.
        auto positive = [](const ptx::Operand& v) {
          return v.kind == PK::F32Bits && v.value > 0 && v.value < 0x7f800000;
        };
        if (b_.scale) return o.kind == b_.scale->kind && o.name == b_.scale->name && o.value == b_.scale->value;
        if (o.kind == PK::Name ? !constant_def(o, at, positive) : !positive(o)) return false;
        b_.scale = &o;
        return true;
      }
      case FOperand::Reg:
        if (o.kind != PK::Name || !o.pred_out.empty()) return false;
        // Only a destination or the input may be met first here: the form
        // reads every other register after writing it.
        if (b_.reg[std::size_t(f.value)].empty() && !written && f.value != 0) return false;
        if (!bind(b_.reg, b_.reg_of, std::size_t(f.value), o.name)) return false;
        if (f.value == 0 && !b_.input) b_.input = &o;
        return true;
    }
    return false;
  }

  // Whether kernel instruction `in` is the form's `fs`, binding the form's
  // registers; on a mismatch, the bindings are as before.
  bool match(const Instruction& in, const FStatement& fs, std::size_t at) {
    if (!same_opcode(in.opcode, fs.opcode) || in.operands.size() != fs.ops.size()) return false;
    if ((fs.guard < 0) != in.guard.empty() || (fs.guard >= 0 && fs.guard_negated != in.guard_negated)) return false;
    // The commutative operations may have their (first two) operands swapped.
    const bool commutes = fs.ops.size() >= 3 && (starts_with(fs.opcode, "add.") || starts_with(fs.opcode, "mul.") ||
                                                 starts_with(fs.opcode, "fma."));
    for (int swapped = 0; swapped <= int(commutes); ++swapped) {
      const Bindings saved = b_;
      const std::size_t saved_constants = constants_.size();
      bool ok = fs.guard < 0 || bind(b_.reg, b_.reg_of, std::size_t(fs.guard), in.guard);
      for (std::size_t i = 0; ok && i < fs.ops.size(); ++i) {
        std::size_t src = i;
        if (swapped && (i == 1 || i == 2)) src = 3 - i;
        ok = operand(in.operands[src], fs.ops[i], i == 0 && !fs.branch, at);
      }
      if (ok) return true;
      b_ = saved;
      constants_.resize(saved_constants);
    }
    return false;
  }

  // The conditions under which replacing the covered statements by one
  // instruction at the last of them computes what they did.
  bool check() {
    if (!b_.input || b_.reg[0].empty() || b_.reg[1].empty()) return false;
    std::vector<std::size_t> m = covered_;
    std::sort(m.begin(), m.end());
    const std::size_t first = m.front(), last = m.back();
    auto in_form = [&](std::size_t i) { return std::binary_search(m.begin(), m.end(), i); };
    auto mentions = [&](std::string_view r) -> const std::vector<std::uint32_t>& {
      static const std::vector<std::uint32_t> none;
      auto it = index_.mentions.find(r);
      return it == index_.mentions.end() ? none : it->second;
    };
    // A constant register the form alone uses goes with it (one inside the
    // form's branches must: kept there it would run unconditionally).
    std::vector<std::size_t> extra;
    std::vector<std::size_t> constants = constants_;
    constants.insert(constants.end(), inside_.begin(), inside_.end());
    for (std::size_t def : constants) {
      const std::string_view r = fn_.body[def].instr.operands[0].name;
      bool only_form = true;
      for (std::uint32_t u : mentions(r)) only_form &= u == def || in_form(u);
      if (only_form && def >= first && def <= last) extra.push_back(def);
    }
    for (std::size_t i : inside_)
      if (std::find(extra.begin(), extra.end(), i) == extra.end()) return false;
    m.insert(m.end(), extra.begin(), extra.end());
    std::sort(m.begin(), m.end());
    m.erase(std::unique(m.begin(), m.end()), m.end());
    // The form's own registers: named nowhere else in the body.
    for (std::size_t i = 2; i < b_.reg.size(); ++i)
      if (!b_.reg[i].empty())
        for (std::uint32_t u : mentions(b_.reg[i]))
          if (!in_form(u)) return false;
    // The output: no other statement names it while the form runs.
    for (std::uint32_t u : mentions(b_.reg[1]))
      if (u >= first && u <= last && !in_form(u)) return false;
    // The input: not written while the form runs.
    for (std::size_t i = first; i <= last; ++i)
      if (fn_.body[i].kind == Statement::Kind::Instruction && writes(fn_.body[i].instr, b_.reg[0])) return false;
    // Its labels: reached by its own branches only.
    for (std::string_view l : b_.label)
      if (auto it = index_.branches_to.find(l); it != index_.branches_to.end())
        for (std::uint32_t b : it->second)
          if (!in_form(b)) return false;
    covered_ = std::move(m);
    return true;
  }

  const Kernel& fn_;
  BodyIndex& index_;
  const Form& form_;
  const std::vector<bool>& claimed_;
  // What an instruction's match binds: undone as one when it fails.
  struct Bindings {
    std::vector<std::string_view> reg, label;  // form register / label -> the kernel's
    std::unordered_map<std::string_view, std::size_t> reg_of, label_of;
    const ptx::Operand* input = nullptr;
    const ptx::Operand* scale = nullptr;  // the sunk product's constant, as the kernel writes it
  };
  Bindings b_;
  std::vector<std::size_t> covered_;    // the kernel statements matched, in the form's order
  std::vector<std::size_t> inside_;     // skipped inside the form's branches (constant moves)
  std::vector<std::size_t> constants_;  // moves that set registers read as the form's constants
  std::size_t last_ = 0;
};

}  // namespace

MathPlan find_math_forms(const Kernel& fn) {
  MathPlan plan;
  const std::vector<Form>& all = forms();
  std::unique_ptr<BodyIndex> index;  // made at the first candidate
  std::vector<bool> claimed;         // the statements of the forms found (second pass)
  bool missed = false;               // a form's start that did not match (first pass)
  for (int pass = 0; pass < 2; ++pass) {
  // The second pass retries, with the forms found passed over, where the
  // first found a form's start but no match.
  if (pass == 1) {
    if (plan.forms.empty() || !missed) break;
    claimed.assign(fn.body.size(), false);
    for (std::size_t c = 0; c < plan.at.size(); ++c) claimed[c] = plan.at[c] != MathPlan::kKeep;
    for (std::size_t at : plan.labels) claimed[at] = true;
  }
  for (const Form& form : all) {
    // Most bodies have none of a form's rare instructions (its copysign, its
    // exponent mask): then there is nothing to try.
    const FStatement& rare = form.code[form.signature];
    const bool present = std::any_of(fn.body.begin(), fn.body.end(), [&](const Statement& s) {
      if (s.kind != Statement::Kind::Instruction || s.instr.operands.size() != rare.ops.size() ||
          !same_opcode(s.instr.opcode, rare.opcode))
        return false;
      for (std::size_t i = 0; i < rare.ops.size(); ++i)
        if (rare.ops[i].kind == FOperand::Imm && s.instr.operands[i].kind != PK::Name &&
            s.instr.operands[i].value != rare.ops[i].value)
          return false;
      return true;
    });
    if (!present) continue;
    for (std::size_t i = 0; i < fn.body.size(); ++i) {
      const Statement& s = fn.body[i];
      if (s.kind != Statement::Kind::Instruction) continue;
      bool head = false;  // the opcode of a statement the form can start with
      for (std::size_t j = 0; j < form.code.size() && !form.code[j].label && !form.code[j].branch && !head; ++j)
        head = form.code[j].after.empty() && same_opcode(s.instr.opcode, form.code[j].opcode);
      if (!head) continue;
      if (!plan.at.empty() && plan.at[i] != MathPlan::kKeep) continue;
      if (!index) index = std::make_unique<BodyIndex>(fn);
      Matcher m(fn, *index, form, claimed);
      if (!m.run(i)) {
        missed = true;
        continue;
      }
      bool taken = false;  // by a form found before (never, for nvcc's code)
      for (std::size_t c : m.covered())
        taken |= !plan.at.empty() && fn.body[c].kind == Statement::Kind::Instruction && plan.at[c] != MathPlan::kKeep;
      if (taken) continue;
      if (plan.at.empty()) plan.at.assign(fn.body.size(), MathPlan::kKeep);
      for (std::size_t c : m.covered())
        if (fn.body[c].kind == Statement::Kind::Instruction) plan.at[c] = MathPlan::kDrop;
      plan.at[m.last_instruction()] = std::int32_t(plan.forms.size());
      MathForm f{m.output(), m.input(), form.op, form.function};
      f.post = form.post == Post::Neg ? Opcode::Neg : form.post == Post::MulPositive ? Opcode::Mul : Opcode::Mov;
      f.scale = m.scale();
      plan.forms.push_back(f);
      for (std::size_t c : m.covered())
        if (fn.body[c].kind == Statement::Kind::Label) plan.labels.push_back(c);
    }
  }
  }
  return plan;
}

void lower_math_form(KernelLowering& k, const MathForm& f, Instr& in) {
  in.op = f.op;
  in.type = DType::F32;
  in.dst = {k.reg_of(*f.output)};
  in.src = {k.value(*f.input)};
  if (f.post == Opcode::Mov) return;
  // The sunk operation, on the function's value, into the same register.
  Instr post = in;
  post.op = f.post;
  post.src = {tileverify::Operand::reg(in.dst[0])};
  if (f.post == Opcode::Mul) post.src.push_back(k.value(*f.scale));
  k.program().code.push_back(std::move(post));  // `in` may move: not used after this
}

}  // namespace tileverify::ptx::lowering
