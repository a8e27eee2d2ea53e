// Block scoping of PTX names (parser.cpp, its only user).
//
// A `{ }` block inside a function body is a scope: registers declared and
// labels defined in it are visible only inside it (and its nested blocks),
// and hide the same names outside. nvcc relies on it where it inlines an
// inline-asm block that declares labels or registers (CUTLASS's
// ClusterBarrier::wait, libcu++'s barrier waits), once per call site, and
// Triton emits one `{ .reg .pred complete; waitLoop: ...; }` per mbarrier
// wait. ptxas accepts the same label in sibling blocks and branches each to
// its own block's copy (tests/ptx/scopes_test.cpp).
//
// The parser records the blocks; apply() then gives every name declared in
// a nested block a name of its own, "{LINE:COL}name" (the position of the
// block's opening brace), and rewrites each use to the declaration it
// denotes: the innermost enclosing block that declares the name, or the
// function's own scope (the name unchanged). Everything after the parser
// (the lowering, reports) then sees unique names.
// Internal to the library.
#pragma once

#include "tileverify/ptx.hpp"

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tileverify::ptx {

// A name as the PTX text wrote it: without the "{LINE:COL}" that a nested
// block's declarations get (for messages).
inline std::string_view written_name(std::string_view name) {
  if (name.empty() || name[0] != '{') return name;
  const std::size_t close = name.find('}');
  return close == std::string_view::npos ? name : name.substr(close + 1);
}

// "complete (declared in the { } block at line 57)" for a nested block's
// name, the name itself for any other: how reports name a register.
inline std::string described_name(std::string_view name) {
  const std::string_view written = written_name(name);
  if (written.size() == name.size()) return std::string(name);
  const std::string_view where = name.substr(1, name.size() - written.size() - 2);
  return std::string(written) + " (declared in the { } block at line " +
         std::string(where.substr(0, where.find(':'))) + ")";
}

class BlockScopes {
 public:
  // The function body's own scope is block 0.
  BlockScopes() { blocks_.push_back(Block{0, 0, 0}); }

  void open(std::uint32_t line, std::uint32_t column) {
    blocks_.push_back(Block{current_, line, column});
    current_ = std::uint32_t(blocks_.size() - 1);
  }
  void close() { current_ = blocks_[current_].parent; }
  // The next statement of Kernel::body, and the registers k.regs[from..to)
  // just declared, belong to the current block.
  void statement() { statement_block_.push_back(current_); }
  void registers(std::size_t from, std::size_t to) {
    if (current_ != 0)
      for (std::size_t i = from; i < to; ++i) nested_regs_.push_back({std::uint32_t(i), current_});
  }
  void label(std::size_t statement) {
    if (current_ != 0) nested_labels_.push_back({std::uint32_t(statement), current_});
  }

  // Renames what nested blocks declare, in k and in the operands of its
  // instructions (which live in `operands`); new names go to `names`, whose
  // strings never move. A label defined twice in one scope is an error.
  std::optional<Error> apply(Kernel& k, std::vector<Operand>& operands, std::deque<std::string>& names) const;

 private:
  struct Block {
    std::uint32_t parent;
    std::uint32_t line, column;  // of the opening brace
  };
  std::vector<Block> blocks_;
  std::uint32_t current_ = 0;
  std::vector<std::uint32_t> statement_block_;  // per statement of Kernel::body
  struct Owned {
    std::uint32_t index;  // into Kernel::regs or Kernel::body
    std::uint32_t block;
  };
  std::vector<Owned> nested_regs_, nested_labels_;
};

}  // namespace tileverify::ptx
