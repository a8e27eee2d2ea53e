// Block scoping of PTX names: see scopes.hpp.
#include "scopes.hpp"

#include "names.hpp"

#include <map>
#include <unordered_set>
#include <utility>

namespace tileverify::ptx {

namespace {

// The declarations of one nested block, and the names given to them.
struct Declared {
  DeclaredRegisters regs;  // views into Kernel::regs, read before those are renamed
  std::unordered_set<std::string_view> labels;
};

class Renamer {
 public:
  Renamer(const std::vector<Declared>& decls, std::vector<std::uint32_t> parents,
          std::vector<std::pair<std::uint32_t, std::uint32_t>> braces, std::deque<std::string>& names)
      : decls_(decls), parents_(std::move(parents)), braces_(std::move(braces)), names_(names) {}

  // The name `name` denotes, used in block b.
  std::string_view resolve(std::string_view name, std::uint32_t b) {
    if (name.empty()) return name;
    for (std::uint32_t x = b; x != 0; x = parents_[x]) {
      DType t;
      if (decls_[x].labels.count(name) || decls_[x].regs.find(name, &t)) return in_block(x, name);
    }
    return name;
  }

  // The unique name of `name` declared in block b: "{LINE:COL}name". '{' is
  // no character of a PTX identifier, so it cannot meet a name as written.
  std::string_view in_block(std::uint32_t b, std::string_view name) {
    auto [it, added] = made_.try_emplace({b, std::string(name)});
    if (added) {
      names_.push_back("{" + std::to_string(braces_[b].first) + ":" + std::to_string(braces_[b].second) + "}" +
                       std::string(name));
      it->second = names_.back();
    }
    return it->second;
  }

  void operand(Operand& o, std::uint32_t b) {
    switch (o.kind) {
      case Operand::Kind::Name:
        if (!o.name.empty() && o.name[0] == '!') {  // !%p: a negated predicate
          const std::string_view p = resolve(o.name.substr(1), b);
          if (p.data() != o.name.data() + 1) {
            names_.push_back("!" + std::string(p));
            o.name = names_.back();
          }
        } else {
          o.name = resolve(o.name, b);
        }
        break;
      case Operand::Kind::Address:
        o.name = resolve(o.name, b);
        break;
      default:
        break;
    }
    // "d|p" and "_|p" (elect.sync, setp): the predicate half.
    if (!o.pred_out.empty()) o.pred_out = resolve(o.pred_out, b);
    for (Operand& e : o.elements) operand(e, b);
  }

 private:
  const std::vector<Declared>& decls_;
  const std::vector<std::uint32_t> parents_;
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> braces_;
  std::deque<std::string>& names_;
  std::map<std::pair<std::uint32_t, std::string>, std::string_view> made_;
};

}  // namespace

std::optional<Error> BlockScopes::apply(Kernel& k, std::vector<Operand>& operands,
                                        std::deque<std::string>& names) const {
  // A label defined twice in one scope is ambiguous; ptxas refuses it.
  {
    std::vector<std::unordered_set<std::string_view>> seen(blocks_.size());
    for (std::size_t i = 0; i < k.body.size(); ++i) {
      const Statement& s = k.body[i];
      if (s.kind != Statement::Kind::Label) continue;
      if (!seen[statement_block_[i]].insert(s.label).second)
        return Error{s.loc, "label '" + std::string(s.label) + "' is defined twice in one scope", false};
    }
  }
  if (nested_regs_.empty() && nested_labels_.empty()) return std::nullopt;

  std::vector<Declared> decls(blocks_.size());
  for (const Owned& r : nested_regs_) {
    const RegDecl& d = k.regs[r.index];
    decls[r.block].regs.add(d.name, d.count, DType::B32);  // only whether it is declared matters here
  }
  for (const Owned& l : nested_labels_) decls[l.block].labels.insert(k.body[l.index].label);
  std::vector<std::uint32_t> parents;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> braces;
  for (const Block& b : blocks_) {
    parents.push_back(b.parent);
    braces.emplace_back(b.line, b.column);
  }
  Renamer rename(decls, std::move(parents), std::move(braces), names);

  // Uses: only statements inside a nested block can see its names.
  const Operand* const base = operands.data();
  for (std::size_t i = 0; i < k.body.size(); ++i) {
    const std::uint32_t b = statement_block_[i];
    Statement& s = k.body[i];
    if (b == 0 || s.kind != Statement::Kind::Instruction) continue;
    Instruction& in = s.instr;
    in.guard = rename.resolve(in.guard, b);
    if (in.operands.empty()) continue;
    const std::size_t first = std::size_t(in.operands.data() - base);
    for (std::size_t j = 0; j < in.operands.size(); ++j) rename.operand(operands[first + j], b);
  }
  // Definitions, last: the tables above hold views of the names as declared.
  for (const Owned& l : nested_labels_) k.body[l.index].label = rename.in_block(l.block, k.body[l.index].label);
  for (const Owned& r : nested_regs_) {
    RegDecl& d = k.regs[r.index];
    d.name = std::string(rename.in_block(r.block, d.name));
  }
  return std::nullopt;
}

}  // namespace tileverify::ptx
