// tileverify/ptx.hpp — the PTX frontend.
//
// Contract: parse_ptx() reads PTX text (ISA 8.x–9.0 as nvcc 12/13 emits it)
// into a Module of kernels; lower_kernel() turns one kernel into a
// structured-CTA Program (tileverify/program.hpp) whose instructions carry
// their PTX file:line:column. Neither throws on bad input: every error is a
// value naming file:line:column and what was wrong (an unknown opcode, a
// malformed operand, an undeclared register, a truncated file ...).
//
// Debug information (nvcc -lineinfo, -G): `.loc` lines give each following
// instruction its CUDA source line, which SourceLoc::source carries
// ("k.cu:31", with the file of the matching `.file` directive); `.section`
// blocks (DWARF data) are skipped.
#pragma once

#include "tileverify/program.hpp"

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tileverify::ptx {

struct Error {
  SourceLoc loc;
  std::string message;
  // true: well-formed PTX that tileverify does not verify (an unsupported
  // instruction or form; exit code 3). false: bad input (malformed or
  // inconsistent PTX, an undeclared register, a kernel that is not there;
  // exit code 4).
  bool unsupported = false;
  std::string text() const { return loc.with_source() + ": error: " + message; }
};

// Names and opcodes in a parsed Kernel's instructions are views, and its
// instructions' operand lists are spans: both point into memory the Kernel
// holds (Kernel::storage: the PTX text and every operand of the file), which
// its copies share. A parse made a string and a heap array for nearly every
// instruction before, most of the time it took. So an Instruction, Operand
// or Statement is valid as long as a Kernel it came from (or a copy) lives.

// One operand as written.
struct Operand {
  enum class Kind { Name, Int, F32Bits, F64Bits, Address, Vector, Sink };
  Kind kind = Kind::Name;
  std::string_view name;           // Name, Address base (empty: absolute address)
  std::int64_t value = 0;          // Int, float bits, Address offset
  std::vector<Operand> elements;   // Vector; Address: TMA coordinates ([map, {x, y}])
  std::string_view pred_out;       // "d|p": the predicate half
  SourceLoc loc;
};

// The operands of one instruction, in order (a span of Kernel::storage).
class OperandList {
 public:
  OperandList() noexcept = default;
  OperandList(const Operand* data, std::size_t size) noexcept : data_(data), size_(size) {}
  const Operand* begin() const noexcept { return data_; }
  const Operand* end() const noexcept { return data_ + size_; }
  const Operand* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  const Operand& operator[](std::size_t i) const noexcept { return data_[i]; }
  const Operand& front() const noexcept { return data_[0]; }
  const Operand& back() const noexcept { return data_[size_ - 1]; }

 private:
  const Operand* data_ = nullptr;
  std::size_t size_ = 0;
};

struct Instruction {
  std::string_view guard;  // predicate register, or empty
  bool guard_negated = false;
  std::string_view opcode;  // full dotted opcode, e.g. "ld.global.nc.v4.f32"
  OperandList operands;
  SourceLoc loc;  // loc.source: from the .loc in force, resolved through Module::files
  // The last `.loc FILE LINE COLUMN` before the instruction; file -1: none.
  int debug_file = -1;
  std::uint32_t debug_line = 0, debug_column = 0;
  // Its ", inlined_at FILE LINE COLUMN" (the call that inlined this code); file -1: none.
  int inlined_file = -1;
  std::uint32_t inlined_line = 0;
};

struct Statement {
  enum class Kind { Instruction, Label };
  Kind kind = Kind::Instruction;
  Instruction instr;
  std::string_view label;
  SourceLoc loc;

  Statement() = default;
  // A statement of kind k at `at`, the rest empty: made member by member,
  // where the parser's default-constructed ones (all zeros but one field)
  // were cleared by a `rep stos`, slow to start, once a statement.
  Statement(Kind k, const SourceLoc& at) : kind(k), loc(at) {}
};

struct RegDecl {
  std::string type;  // ".f32", ".b32", ".pred", ...
  std::string name;  // "%r" for a range declaration, or a full name
  int count = -1;    // %r<N>: N registers %r0..%r(N-1), N < 2^31; -1: a single register
  SourceLoc loc;
};

struct VarDecl {
  std::string space;  // ".shared", ".local", ".global", ".const", ".param" (call arguments in a body)
  std::string type;   // element type
  std::string name;
  std::uint64_t elements = 1;  // array length (1 for a scalar)
  bool unsized = false;        // extern .shared x[] (dynamic shared memory)
  SourceLoc loc;
  // "= {...}": the initial contents as little-endian bytes (numbers and
  // 0f/0d floats), padded with zeros to the array's size up to 1 MiB; bytes
  // past init's end are zero. An initializer with anything else (addresses,
  // generic()) sets init_error instead, reported only if a kernel uses the
  // variable.
  bool has_init = false;
  std::vector<std::uint8_t> init;
  std::string init_error;
  // With init_error: the first name the initializer holds ({f, g}: the
  // addresses of functions f and g, a table of function pointers), if any.
  std::string init_name;
};

struct Param {
  std::string type;
  std::string name;
  bool pointer_hint = false;  // .ptr attribute, or a 64-bit integer parameter
  std::uint64_t array_bytes = 0;  // .b8 p[N] (type ".struct"): N times the element size; 0: no array
  SourceLoc loc;
};

// What the views and spans of a parsed Kernel point into (defined by the parser).
struct ModuleStorage;

struct Kernel {
  std::string name;
  bool is_entry = true;  // .entry (false: .func)
  std::vector<Param> params;
  std::vector<Param> returns;  // .func return parameters
  std::vector<RegDecl> regs;
  std::vector<VarDecl> vars;   // declared in the body
  std::vector<Statement> body;
  SourceLoc loc;
  // .reqntid / .maxntid (all 0: not given; missing dimensions are 1).
  std::array<std::uint32_t, 3> reqntid{}, maxntid{};
  // .reqnctapercluster (all 0: not given): the cluster shape the kernel is
  // compiled for (__cluster_dims__), which a plain launch then uses.
  std::array<std::uint32_t, 3> reqnctapercluster{};
  // Keeps the text and operands that body refers to; shared by every Kernel
  // of one parse and by their copies.
  std::shared_ptr<const ModuleStorage> storage;
};

struct Module {
  std::string file;
  std::string version, target;
  int address_size = 64;
  std::vector<VarDecl> globals;  // module-level .shared/.global/.const
  std::vector<Kernel> kernels;
  // Functions declared without a body (`.extern .func (...) vprintf(...);`,
  // or the prototype nvcc writes before a body given later), by name: where
  // each was first declared. A call to one whose body never comes (the CUDA
  // runtime's printf, the device runtime's launches) is unsupported, and the
  // message names the function.
  std::map<std::string, SourceLoc, std::less<>> declared_functions;
  std::map<int, std::string> files;  // `.file N "path"` debug directives
  const Kernel* find(std::string_view name) const;
};

struct ParseResult {
  std::optional<Module> module;
  std::optional<Error> error;
};

ParseResult parse_ptx(const std::string& text, const std::string& file = "<ptx>");
ParseResult parse_ptx_file(const std::string& path);

struct LowerResult {
  std::optional<Program> program;
  std::optional<Error> error;
};

// Lowers kernel `name` of `m` (an .entry). `dynamic_shared_bytes` sizes an
// extern .shared array, if the kernel uses one. Memory no GPU of the
// module's .target can give (more dynamic shared memory than its maximum,
// static .shared above 48 KB, .local above 512 KB a thread, .const above
// 64 KB: the CUDA C++ Programming Guide's technical specifications) is bad
// input. A Program holds the registers the code uses, whatever the .reg
// declarations promise.
// An instruction outside what tileverify verifies does not fail the
// lowering: it becomes an Opcode::Unsupported in place, which ends a run
// (DiagKind::Unsupported) only when a thread reaches it, so that a bug found
// before it is reported and code no thread runs does not matter. Only bad
// input (Error::unsupported false) and what cannot be placed in the code
// (declarations, limits) are errors here.
LowerResult lower_kernel(const Module& m, const std::string& name, std::uint64_t dynamic_shared_bytes = 0);

// The first Opcode::Unsupported instruction of p, in code order, as the
// error it would be when reached (for tools that want to know up front).
std::optional<Error> first_unsupported(const Program& p);

}  // namespace tileverify::ptx
