// libFuzzer harness for the PTX frontend: the bytes are a PTX file, which is
// parsed and, where it parses, every function in it is lowered with a few
// dynamic shared memory sizes. The frontend must answer every input with a
// Module / Program or an Error, in well under a second: a crash, an escaping
// exception, a sanitizer report or a timeout is a bug (docs/fuzzing.md).
//
// Beyond "no crash" the harness checks what the rest of tileverify relies on
// (and aborts where it does not hold, so that the fuzzer keeps the input):
// exactly one of result and error, errors with a position in the file, no
// "internal error" (an exception the frontend did not expect), and Programs
// whose operands index registers, buffers, params, constants and branch
// targets that exist.
#include "tileverify/ptx.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using namespace tileverify;

[[noreturn]] void broken(const char* what, const std::string& detail) {
  std::fprintf(stderr, "ptx_fuzz: %s: %s\n", what, detail.c_str());
  std::abort();
}

void check_error(const ptx::Error& e, const char* stage) {
  if (e.message.empty()) broken(stage, "an error without a message");
  if (e.message.rfind("internal error", 0) == 0 || e.message.rfind("out of memory", 0) == 0) broken(stage, e.text());
  // The file cannot be read only when it is not text given here; every
  // other error names a place in the file.
  if (e.loc.line == 0 || e.loc.column == 0) broken(stage, "an error without a position: " + e.text());
}

void check_program(const Program& p) {
  const std::size_t nregs = p.registers.size();
  auto operand_ok = [&](const Operand& o) {
    switch (o.kind) {
      case Operand::Kind::Reg: return o.index < nregs;
      case Operand::Kind::Buffer: return o.index < p.buffers.size();
      case Operand::Kind::Param: return o.index < p.params.size();
      case Operand::Kind::Float: return o.index < p.constants.size();
      default: return true;
    }
  };
  for (std::size_t pc = 0; pc < p.code.size(); ++pc) {
    const Instr& in = p.code[pc];
    if (in.guard >= 0 && std::size_t(in.guard) >= nregs) broken("lower", "a guard register out of range at " + in.loc.text());
    for (std::uint32_t d : in.dst)
      if (d >= nregs && d != kNoReg) broken("lower", "a destination register out of range at " + in.loc.text());
    for (const Operand& o : in.src)
      if (!operand_ok(o)) broken("lower", "a source operand out of range at " + in.loc.text());
    if (in.op == Opcode::Bra && in.target > p.code.size()) broken("lower", "a branch target out of range at " + in.loc.text());
  }
  if (p.code.empty() || p.code.back().op != Opcode::Ret) broken("lower", "a program that does not end in ret");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const ptx::ParseResult parsed = ptx::parse_ptx(text, "fuzz.ptx");
  if (parsed.module.has_value() == parsed.error.has_value()) broken("parse", "not exactly one of module and error");
  if (parsed.error) {
    check_error(*parsed.error, "parse");
    return 0;
  }
  // 0: without dynamic shared memory; 1024: a usual size; 2^40: above every target's maximum.
  for (const ptx::Kernel& k : parsed.module->kernels)
    for (std::uint64_t dynamic_shared : {std::uint64_t(0), std::uint64_t(1024), std::uint64_t(1) << 40}) {
      const ptx::LowerResult lowered = ptx::lower_kernel(*parsed.module, k.name, dynamic_shared);
      if (lowered.program.has_value() == lowered.error.has_value()) broken("lower", "not exactly one of program and error");
      if (lowered.error) check_error(*lowered.error, "lower");
      else check_program(*lowered.program);
    }
  return 0;
}
