// What lowering an instruction needs, shared by lower.cpp and the files
// that lower one family of instructions each (lower_async.cpp: mbarrier and
// the bulk / tensor copies; lower_wgmma.cpp: wgmma and stmatrix;
// lower_atomics.cpp: atom, red and compare-and-swap loops): errors,
// opcode parts, type names, and the kernel being lowered (KernelLowering).
// Internal to the library.
#pragma once

#include "tileverify/ptx.hpp"

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace tileverify::ptx::lowering {

struct Failure {
  Error error;
};

// fail: PTX outside what tileverify verifies (exit 3); bad_input: PTX or a
// launch that is wrong (exit 4).
[[noreturn]] inline void fail(const SourceLoc& loc, const std::string& msg) { throw Failure{{loc, msg, true}}; }
[[noreturn]] inline void bad_input(const SourceLoc& loc, const std::string& msg) { throw Failure{{loc, msg, false}}; }

// A type that parse_dtype() does not know, for a `what` (a register, a
// parameter ...): one PTX has but tileverify does not model (b128, the fp8
// to fp4 formats, texture and surface references) is unsupported; any other
// name, or none, is bad input.
[[noreturn]] inline void unknown_type(const SourceLoc& loc, const char* what, const std::string& type) {
  static constexpr std::string_view kUnmodelled[] = {
      ".b128",   ".e4m3",   ".e5m2",   ".e4m3x2", ".e5m2x2", ".e2m1x2", ".e2m3x2",   ".e3m2x2",    ".ue8m0x2",
      ".e4m3x4", ".e5m2x4", ".e2m1x4", ".e2m3x4", ".e3m2x4", ".texref", ".samplerref", ".surfref"};
  if (type.empty()) bad_input(loc, std::string("a ") + what + " declaration needs a type (.b32, .f32, .pred ...)");
  for (std::string_view t : kUnmodelled)
    if (t == type) fail(loc, std::string(what) + "s of type '" + type + "' are not supported");
  bad_input(loc, "unknown " + std::string(what) + " type '" + type + "'");
}

// A name or opcode of the Module (a view) as a string, for messages and keys.
inline std::string str(std::string_view s) { return std::string(s); }

inline bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// w == lit, with the literal's length known at compile time, so that the
// comparison compiles to a few instructions instead of a memcmp call
// (std::string == const char* does not even compare the lengths first).
template <std::size_t N>
bool is_word(std::string_view w, const char (&lit)[N]) {
  return w.size() == N - 1 && std::memcmp(w.data(), lit, N - 1) == 0;
}

// The dot-separated parts of an opcode, as views into it: "ld.global.f32" ->
// ld, global, f32. Split as std::getline(.., '.') did: "a..b" has an empty
// part, a trailing '.' adds none.
class OpParts {
 public:
  explicit OpParts(std::string_view op) {
    std::size_t b = 0;
    for (std::size_t e = 0; e < op.size(); ++e)
      if (op[e] == '.') {
        push(op.data() + b, e - b);
        b = e + 1;
      }
    if (b < op.size() || n_ == 0) push(op.data() + b, op.size() - b);
  }
  std::size_t size() const { return n_; }
  std::string_view operator[](std::size_t i) const {
    return i < kInline ? std::string_view(begin_[i], length_[i]) : heap_[i - kInline];
  }

 private:
  static constexpr std::size_t kInline = 16;  // nvcc's longest opcodes have about 10
  void push(const char* p, std::size_t n) {
    if (n_ < kInline) {
      begin_[n_] = p;
      length_[n_] = n;
    } else {
      heap_.emplace_back(p, n);
    }
    ++n_;
  }
  // Pointers and lengths in separate plain arrays, left uninitialized: an
  // array of string_views would be zeroed for every instruction, and writing
  // a part in two halves and reading it back whole stalls store forwarding.
  const char* begin_[kInline];
  std::size_t length_[kInline];
  std::vector<std::string_view> heap_;  // parts past kInline
  std::size_t n_ = 0;
};

// A PTX type name, with or without its dot: pred, s8 .. b64, bf16, and
// tf32 (as f32) and f16x2 / bf16x2 (as b32). Called for every part of every
// opcode, hence a switch on the spelling rather than a map lookup.
inline bool parse_dtype(std::string_view s, DType* t) {
  if (!s.empty() && s[0] == '.') s.remove_prefix(1);
  switch (s.size()) {
    case 2:  // s8 u8 b8
      if (s[1] != '8') return false;
      switch (s[0]) {
        case 's': *t = DType::S8; return true;
        case 'u': *t = DType::U8; return true;
        case 'b': *t = DType::B8; return true;
        default: return false;
      }
    case 3: {  // {s,u,f,b}{16,32,64}
      int width = 0;
      if (s[1] == '1' && s[2] == '6') width = 0;
      else if (s[1] == '3' && s[2] == '2') width = 1;
      else if (s[1] == '6' && s[2] == '4') width = 2;
      else return false;
      static constexpr DType by_width[4][3] = {{DType::S16, DType::S32, DType::S64},
                                               {DType::U16, DType::U32, DType::U64},
                                               {DType::F16, DType::F32, DType::F64},
                                               {DType::B16, DType::B32, DType::B64}};
      switch (s[0]) {
        case 's': *t = by_width[0][width]; return true;
        case 'u': *t = by_width[1][width]; return true;
        case 'f': *t = by_width[2][width]; return true;
        case 'b': *t = by_width[3][width]; return true;
        default: return false;
      }
    }
    case 4:
      if (is_word(s, "pred")) *t = DType::Pred;
      else if (is_word(s, "bf16")) *t = DType::BF16;
      else if (is_word(s, "tf32")) *t = DType::F32;
      else return false;
      return true;
    case 5:
      if (!is_word(s, "f16x2")) return false;
      *t = DType::B32;
      return true;
    case 6:
      if (!is_word(s, "bf16x2")) return false;
      *t = DType::B32;
      return true;
    default: return false;
  }
}

template <std::size_t N>
bool has_part(const OpParts& parts, const char (&m)[N]) {
  for (std::size_t i = 1; i < parts.size(); ++i)
    if (is_word(parts[i], m)) return true;
  return false;
}
inline bool has_part(const OpParts& parts, std::string_view m) {
  for (std::size_t i = 1; i < parts.size(); ++i)
    if (parts[i] == m) return true;
  return false;
}

// The kernel being lowered, as a family's lowering uses it: operands become
// registers, constants and addresses of this kernel (errors thrown as
// Failure, with the operand's place).
class KernelLowering {
 public:
  // A register or constant (an address operand [..] reads as its address).
  virtual tileverify::Operand value(const ptx::Operand& o) = 0;
  // An address [reg+off], [var+off], [param+off]; a tensor-map address
  // [map, {c0, ..}] is refused here: take its name part without elements.
  virtual tileverify::Operand address(const ptx::Operand& o) = 0;
  virtual std::uint32_t reg_of(const ptx::Operand& o) = 0;
  // A member mask: an immediate or a register.
  virtual tileverify::Operand mask(const ptx::Operand& o) = 0;
  // The destination registers of o (a register or a vector of them).
  virtual void set_dsts(decltype(Instr::dst)& d, const ptx::Operand& o) = 0;
  // The program being built (its constants and unsupported-instruction table).
  virtual Program& program() = 0;

 protected:
  ~KernelLowering() = default;
};

// The families lowered outside lower.cpp. Each fills `in` (already holding
// the place and guard) from the instruction and its opcode's parts, or
// throws Failure.
void lower_async(KernelLowering& k, const Instruction& pin, Instr& in, const OpParts& parts);
void lower_wgmma(KernelLowering& k, const Instruction& pin, Instr& in, const OpParts& parts);
void lower_mma(KernelLowering& k, const Instruction& pin, Instr& in, const OpParts& parts);
// CUTLASS's f32 -> tf32 rounding before mma.sync .tf32 (lower_tf32.cpp): the
// statements of fn to lower as `mov ops[0], ops[1]` (its add.s32 of 4096 to
// the bits and its selp), in forms whose result only tf32 mma operands read.
std::vector<std::size_t> find_tf32_rounding(const Kernel& fn);
// mov d, %clock / %clock64 / %globaltimer{,_lo,_hi} as Opcode::Timer (lower_async.cpp); false
// when the mov reads no timer (pin is then the caller's).
bool lower_timer(KernelLowering& k, const Instruction& pin, Instr& in);

// nvcc's inline expansions of math functions (lower_math.cpp): a form found
// in a body becomes one instruction computing the function (op) of its input
// register into its output register, at the form's last instruction.
struct MathForm {
  const ptx::Operand* output;  // operands of the body's instructions
  const ptx::Operand* input;
  Opcode op;
  const char* function;  // the CUDA function: "logf", "erff" ...
  // An operation nvcc sank into the form, applied to the function's value:
  // Opcode::Neg, Opcode::Mul by `scale` (a positive constant), or Opcode::Mov (none).
  Opcode post = Opcode::Mov;
  const ptx::Operand* scale = nullptr;
};
struct MathPlan {
  static constexpr std::int32_t kKeep = -1, kDrop = -2;
  std::vector<std::int32_t> at;  // per statement: kKeep, kDrop or an index in forms; empty: no forms
  std::vector<MathForm> forms;
  std::vector<std::size_t> labels;  // the forms' own labels (statements), which their branches alone reach
};
MathPlan find_math_forms(const Kernel& fn);
void lower_math_form(KernelLowering& k, const MathForm& f, Instr& in);

void lower_atomic(KernelLowering& k, const Instruction& pin, Instr& in, const OpParts& parts);

// After a kernel is lowered: each compare-and-swap retry loop that applies
// one operation to the value it read becomes that one atomic
// read-modify-write (lower_atomics.cpp); one whose update it cannot read
// becomes Opcode::Unsupported at its atom.cas, with the reason.
void lift_cas_loops(Program& p);

}  // namespace tileverify::ptx::lowering
