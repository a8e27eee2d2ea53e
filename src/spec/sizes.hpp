// Size expressions of spec files (docs/cli.md, "Sizes and boundary suites"):
// "ceil(N/64)", "M*K", "min(K, 32)" over the spec's "sizes", and the
// boundary sizes a suite derives from them.
//
// Internal: sizes_decl.cpp substitutes expressions into the JSON before it checks
// the spec, so every rule of the spec format applies to evaluated values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tileverify::internal {

using SizeMap = std::map<std::string, std::int64_t>;

// The largest size a spec may give (and the largest value of a boundary
// suite): 2^48, the most elements one tensor may have.
constexpr std::int64_t kMaxSize = std::int64_t(1) << 48;

// The tile a boundary suite assumes for a size without "tiles".
constexpr std::int64_t kDefaultTile = 32;

// A size name: an identifier ([A-Za-z_][A-Za-z0-9_]*) other than the
// functions' names.
bool size_name_ok(const std::string& name);

struct SizeValue {
  std::optional<std::int64_t> value;
  // Why not: "expected ')' at column 7" (columns from 1, in bytes).
  std::string error;
  // The size names the expression uses, for messages about its value.
  std::set<std::string> names;
};

// The value of `expr` (integers, size names, + - * / % with C's precedence,
// unary minus, parentheses, ceil(a/b), min(a,b), max(a,b); / and % truncate
// toward zero as C does, ceil is the exact ceiling). Division by zero and a
// result beyond 64 bits are errors, never a wrapped value.
SizeValue eval_size(const std::string& expr, const SizeMap& sizes);

// The seven boundary values of one size for a tile, in this order: 1,
// tile-1, tile, tile+1, 2*tile+1, the first prime above 3*tile (a size no
// tiling divides), and 16*tile + tile/2 + 1 (a large non-multiple; + 1 when
// the tile is 2); each at least 1 (tile-1 of a tile of 1 is 1) and at most
// kMaxSize. Repeats are kept: the k-th value is a role (boundary_sizes
// combines all sizes at the same role).
constexpr int kBoundaryRoles = 7;
std::vector<std::int64_t> boundary_values(std::int64_t tile);

}  // namespace tileverify::internal
