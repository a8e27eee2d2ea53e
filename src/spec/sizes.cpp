// Size expressions and boundary values (sizes.hpp).
//
// The expressions are small (a grid is "ceil(N/64)"), but they come from
// people and from generators, and spec files are fuzzed: so the parser is a
// plain recursive descent with a nesting limit, every error names the column
// where reading stopped, and arithmetic is checked for overflow instead of
// wrapping around (a wrapped grid would be a wrong launch, silently).
#include "sizes.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <memory>
#include <utility>

namespace tileverify::internal {

namespace {

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

const char* const kFunctions[] = {"ceil", "min", "max"};

bool is_function(const std::string& name) {
  for (const char* f : kFunctions)
    if (name == f) return true;
  return false;
}

struct Node {
  enum class Kind { Number, Name, Negate, Binary, Ceil, Min, Max } kind = Kind::Number;
  char op = 0;             // Binary: + - * / %
  std::int64_t value = 0;  // Number; Name: its size's value
  std::size_t column = 0;  // where the number, name, operator or function is (from 1)
  std::unique_ptr<Node> a, b;
};

struct ParseError {
  std::string message;
};

// Deeper nesting than this is no size expression; the limit keeps a
// "((((...": the recursion would otherwise follow it to a stack overflow.
constexpr int kMaxNesting = 64;

class Parser {
 public:
  Parser(const std::string& text, const SizeMap& sizes, std::set<std::string>* names)
      : s_(text), sizes_(sizes), names_(names) {}

  std::unique_ptr<Node> whole() {
    std::unique_ptr<Node> n = sum();
    space();
    if (i_ < s_.size())
      stop(i_, "expected an operator (+ - * / %) or the end of the expression, found '" + std::string(1, s_[i_]) + "'");
    return n;
  }

 private:
  [[noreturn]] void stop(std::size_t at, const std::string& what) {
    throw ParseError{what + " at column " + std::to_string(at + 1)};
  }

  void space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }

  static std::unique_ptr<Node> binary(char op, std::size_t column, std::unique_ptr<Node> a, std::unique_ptr<Node> b) {
    auto n = std::make_unique<Node>();
    n->kind = Node::Kind::Binary;
    n->op = op;
    n->column = column;
    n->a = std::move(a);
    n->b = std::move(b);
    return n;
  }

  std::unique_ptr<Node> sum() {
    std::unique_ptr<Node> n = product();
    while (true) {
      space();
      if (i_ >= s_.size() || (s_[i_] != '+' && s_[i_] != '-')) return n;
      const char op = s_[i_];
      const std::size_t at = i_++ + 1;
      n = binary(op, at, std::move(n), product());
    }
  }

  std::unique_ptr<Node> product() {
    std::unique_ptr<Node> n = unary();
    while (true) {
      space();
      if (i_ >= s_.size() || (s_[i_] != '*' && s_[i_] != '/' && s_[i_] != '%')) return n;
      const char op = s_[i_];
      const std::size_t at = i_++ + 1;
      n = binary(op, at, std::move(n), unary());
    }
  }

  std::unique_ptr<Node> unary() {
    space();
    if (i_ < s_.size() && (s_[i_] == '-' || s_[i_] == '+')) {
      const bool minus = s_[i_] == '-';
      const std::size_t at = i_++ + 1;
      Deeper d(this, at - 1);
      std::unique_ptr<Node> operand = unary();
      if (!minus) return operand;
      auto n = std::make_unique<Node>();
      n->kind = Node::Kind::Negate;
      n->column = at;
      n->a = std::move(operand);
      return n;
    }
    return primary();
  }

  // Counts nesting for the limit while a parenthesis, function or sign is open.
  struct Deeper {
    Deeper(Parser* p, std::size_t at) : p_(p) {
      if (++p_->depth_ > kMaxNesting)
        p_->stop(at, "parentheses, functions and signs nested more than " + std::to_string(kMaxNesting) + " deep");
    }
    ~Deeper() { --p_->depth_; }
    Parser* p_;
  };

  void expect(char c, const std::string& what) {
    space();
    if (i_ >= s_.size()) stop(i_, "expected " + what + ", found the end of the expression");
    if (s_[i_] != c) stop(i_, "expected " + what + ", found '" + std::string(1, s_[i_]) + "'");
    ++i_;
  }

  std::unique_ptr<Node> primary() {
    space();
    if (i_ >= s_.size()) stop(i_, "expected a number, a size name or '('");
    const char c = s_[i_];
    const std::size_t start = i_;
    if (c == '(') {
      ++i_;
      Deeper d(this, start);
      std::unique_ptr<Node> n = sum();
      expect(')', "')' (to close the '(' at column " + std::to_string(start + 1) + ")");
      return n;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::int64_t v = 0;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
        const int digit = s_[i_] - '0';
        if (v > (INT64_MAX - digit) / 10) stop(start, "the number is too large for 64 bits");
        v = v * 10 + digit;
        ++i_;
      }
      // "2M" or "1.5": no implicit products, no fractions.
      if (i_ < s_.size() && (ident_char(s_[i_]) || s_[i_] == '.'))
        stop(i_, s_[i_] == '.' ? "sizes are integers: no fractions" : "expected an operator after the number");
      auto n = std::make_unique<Node>();
      n->value = v;
      n->column = start + 1;
      return n;
    }
    if (ident_start(c)) {
      while (i_ < s_.size() && ident_char(s_[i_])) ++i_;
      const std::string name = s_.substr(start, i_ - start);
      std::size_t after = i_;
      while (after < s_.size() && (s_[after] == ' ' || s_[after] == '\t')) ++after;
      const bool call = after < s_.size() && s_[after] == '(';
      if (is_function(name)) {
        if (!call) stop(i_, "expected '(' after " + name + " (" + name + (name == "ceil" ? "(a/b))" : "(a, b))"));
        i_ = after + 1;
        Deeper d(this, start);
        auto n = std::make_unique<Node>();
        n->column = start + 1;
        if (name == "ceil") {
          n->kind = Node::Kind::Ceil;
          const std::size_t arg = i_;
          n->a = sum();
          // ceil rounds a quotient up: ceil(N/64) is the tiles N needs. Any
          // other argument is an integer already, and surely a mistake.
          if (n->a->kind != Node::Kind::Binary || n->a->op != '/') {
            std::size_t at = arg;
            while (at < s_.size() && (s_[at] == ' ' || s_[at] == '\t')) ++at;
            stop(at, "ceil takes a division, ceil(a/b)");
          }
        } else {
          n->kind = name == "min" ? Node::Kind::Min : Node::Kind::Max;
          n->a = sum();
          expect(',', "',' (" + name + " takes two arguments, " + name + "(a, b))");
          n->b = sum();
        }
        expect(')', "')' (to close " + name + "( at column " + std::to_string(start + 1) + ")");
        return n;
      }
      if (call) stop(start, "'" + name + "' is not a function (the functions are ceil(a/b), min(a, b) and max(a, b))");
      auto it = sizes_.find(name);
      if (it == sizes_.end()) {
        std::string list;
        for (const auto& kv : sizes_) list += (list.empty() ? "" : ", ") + kv.first;
        stop(start, "unknown size name '" + name + "' (" +
                        (list.empty() ? std::string("the spec has no \"sizes\"") : "the sizes are " + list) + ")");
      }
      names_->insert(name);
      auto n = std::make_unique<Node>();
      n->kind = Node::Kind::Name;
      n->value = it->second;
      n->column = start + 1;
      return n;
    }
    stop(i_, "expected a number, a size name or '(', found '" + std::string(1, c) + "'");
  }

  const std::string& s_;
  const SizeMap& sizes_;
  std::set<std::string>* names_;
  std::size_t i_ = 0;
  int depth_ = 0;
};

[[noreturn]] void eval_error(const Node& n, const std::string& what) {
  throw ParseError{what + " at column " + std::to_string(n.column)};
}

std::int64_t eval(const Node& n) {
  switch (n.kind) {
    case Node::Kind::Number:
    case Node::Kind::Name: return n.value;
    case Node::Kind::Negate: {
      const std::int64_t v = eval(*n.a);
      if (v == INT64_MIN) eval_error(n, "the value overflows 64 bits");
      return -v;
    }
    case Node::Kind::Min: return std::min(eval(*n.a), eval(*n.b));
    case Node::Kind::Max: return std::max(eval(*n.a), eval(*n.b));
    case Node::Kind::Ceil: {
      const Node& q = *n.a;
      const std::int64_t a = eval(*q.a), b = eval(*q.b);
      if (b == 0) eval_error(q, "division by zero");
      if (a == INT64_MIN && b == -1) eval_error(q, "the value overflows 64 bits");
      std::int64_t r = a / b;
      if (a % b != 0 && ((a < 0) == (b < 0))) ++r;  // C truncates toward zero; a positive quotient rounds up
      return r;
    }
    case Node::Kind::Binary: {
      const std::int64_t a = eval(*n.a), b = eval(*n.b);
      std::int64_t r = 0;
      switch (n.op) {
        case '+':
          if (__builtin_add_overflow(a, b, &r)) eval_error(n, "the value overflows 64 bits");
          return r;
        case '-':
          if (__builtin_sub_overflow(a, b, &r)) eval_error(n, "the value overflows 64 bits");
          return r;
        case '*':
          if (__builtin_mul_overflow(a, b, &r)) eval_error(n, "the value overflows 64 bits");
          return r;
        default:
          if (b == 0) eval_error(n, n.op == '/' ? "division by zero" : "remainder of a division by zero");
          if (a == INT64_MIN && b == -1) eval_error(n, "the value overflows 64 bits");
          return n.op == '/' ? a / b : a % b;
      }
    }
  }
  return 0;
}

bool is_prime(std::int64_t n) {
  if (n < 2) return false;
  for (std::int64_t d = 2; d <= n / d; ++d)
    if (n % d == 0) return false;
  return true;
}

}  // namespace

bool size_name_ok(const std::string& name) {
  if (name.empty() || !ident_start(name[0]) || is_function(name)) return false;
  for (char c : name)
    if (!ident_char(c)) return false;
  return true;
}

SizeValue eval_size(const std::string& expr, const SizeMap& sizes) {
  SizeValue out;
  // A size expression is a line; a megabyte of one is no spec.
  constexpr std::size_t kMaxLength = 1000;
  if (expr.size() > kMaxLength) {
    out.error = "longer than " + std::to_string(kMaxLength) + " characters, too long for a size expression";
    return out;
  }
  try {
    Parser p(expr, sizes, &out.names);
    std::unique_ptr<Node> n = p.whole();
    out.value = eval(*n);
  } catch (const ParseError& e) {
    out.error = e.message;
  }
  return out;
}

std::vector<std::int64_t> boundary_values(std::int64_t tile) {
  std::vector<std::int64_t> out;
  // The spec reader keeps tiles far below this (every value stays in range).
  if (tile < 1 || tile > kMaxSize / 32) return out;
  auto add = [&](std::int64_t v) { out.push_back(std::min(std::max<std::int64_t>(v, 1), kMaxSize)); };
  add(1);
  add(tile - 1);
  add(tile);
  add(tile + 1);
  add(2 * tile + 1);
  // A prime is a multiple of no tile but 1 and itself.
  std::int64_t p = 3 * tile + 1;
  while (!is_prime(p)) ++p;
  add(p);
  // Many full tiles and a partial one whose remainder is neither 1 (that is
  // tile+1's) nor 0.
  std::int64_t rest = tile / 2 + 1;
  if (rest % tile == 0) rest = 1;
  add(16 * tile + rest);
  return out;
}

}  // namespace tileverify::internal
