// PTX lexer and parser: text -> ptx::Module, every error with file:line:column.
//
// For a small kernel pair, reading the PTX used to take most of an
// equivalence check, so this file avoids work per token: a token is a view
// into the source text with its line and column (no string of its own, no
// SourceLoc), and a SourceLoc is built only where the Module keeps one or an
// error reports one. The Module's SourceLocs all share one interned file
// name (SharedString::interned): copying it costs neither an allocation nor
// an atomic count. The Module keeps the text itself (ModuleStorage), so that
// its names and opcodes are views too, and all the operands of the file in
// one array, so that an instruction's operands are a span of it: a string
// and an array per instruction were most of the allocations of a parse.
#include "tileverify/ptx.hpp"

#include "scopes.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <new>
#include <stdexcept>
#include <string_view>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tileverify::ptx {

// The memory a parsed Kernel's views and spans point into. Kernels share it
// (through Kernel::storage) and never change it once the parse is done.
struct ModuleStorage {
  // The PTX text and then kTextPadding '\0' bytes, which the lexer reads
  // past the end of a token (see lex()).
  std::string text;
  // The operands of every instruction of the file, in order: an
  // Instruction's OperandList is a span of it. The parser reserves room for
  // all of them up front (see Lexed::separators), so it never reallocates.
  std::vector<Operand> operands;
  std::deque<std::string> names;  // names not in the text as written ("! %p" -> "!%p"); a deque never moves them
};

const Kernel* Module::find(std::string_view name) const {
  for (const Kernel& k : kernels)
    if (k.name == name) return &k;
  return nullptr;
}

namespace {

constexpr std::size_t kTextPadding = 4;

// Plain data, left uninitialized when the lexer's array grows: the lexer
// writes every field of every token it makes.
struct Token {
  enum class Kind : std::uint8_t { Ident, Number, Punct, String, End };
  const char* begin;  // into the source text, which outlives the parse (null: End)
  std::uint32_t length;
  std::uint32_t line, col;
  Kind kind;
  char punct;  // a Punct token's character; 0 for any other token
  std::string_view text() const { return std::string_view(begin, length); }
};

struct Failure {
  Error error;
};

std::string str(std::string_view s) { return std::string(s); }

// A new element for emplace_back(Fresh<T>{}), made by default- rather than
// value-initialization: emplace_back() zeroes the whole object first (a
// `rep stos`, slow to start), and then sets every member anyway. (A type
// whose members all start as zeros gets the `rep stos` either way, hence
// Statement's constructor.) The compiler builds the returned T in
// the vector's slot; one that did not would move it there, with the same
// result.
template <class T>
struct Fresh {
  operator T() const {
    T t;
    return t;
  }
};

// Character classes, as <cctype> gives them in the "C" locale (the lexer used
// isalpha / isdigit / isspace), without a locale lookup per character.
enum : std::uint8_t {
  kIdentStart = 1,  // letters _ $ % .
  kIdentChar = 2,   // letters digits _ $ % .
  kDigit = 4,
  kNumberChar = 8,  // letters digits .
  kSpace = 16,      // ' ' \t \n \v \f \r
  kPunct = 32,      // , ; : { } [ ] ( ) < > + - @ ! | =
  kHex = 64,        // 0-9 a-f A-F
};

constexpr std::array<std::uint8_t, 256> make_classes() {
  std::array<std::uint8_t, 256> c{};
  for (int i = 'a'; i <= 'z'; ++i) c[std::size_t(i)] |= kIdentStart | kIdentChar | kNumberChar;
  for (int i = 'A'; i <= 'Z'; ++i) c[std::size_t(i)] |= kIdentStart | kIdentChar | kNumberChar;
  for (int i = '0'; i <= '9'; ++i) c[std::size_t(i)] |= kIdentChar | kDigit | kNumberChar | kHex;
  for (int i = 'a'; i <= 'f'; ++i) c[std::size_t(i)] |= kHex;
  for (int i = 'A'; i <= 'F'; ++i) c[std::size_t(i)] |= kHex;
  for (char x : {'_', '$', '%'}) c[std::size_t(x)] |= kIdentStart | kIdentChar;
  c[std::size_t('.')] |= kIdentStart | kIdentChar | kNumberChar;
  for (char x : {' ', '\t', '\n', '\v', '\f', '\r'}) c[std::size_t(x)] |= kSpace;
  for (char x : {',', ';', ':', '{', '}', '[', ']', '(', ')', '<', '>', '+', '-', '@', '!', '|', '='})
    c[std::size_t(x)] |= kPunct;
  return c;
}
constexpr std::array<std::uint8_t, 256> kClass = make_classes();

inline bool in_class(char c, std::uint8_t cls) { return (kClass[static_cast<unsigned char>(c)] & cls) != 0; }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

// std::stoull(digits, nullptr, 16) without the string and the exceptions:
// false where it would throw. The common case (1 to 16 hex digits) is done
// here; anything else goes to stoull itself, whose corner cases (a second
// "0x" prefix, trailing junk it stops at) stay exactly as they were.
bool hex_value(std::string_view digits, std::uint64_t* out) {
  bool plain = !digits.empty() && digits.size() <= 16;
  for (std::size_t i = 0; plain && i < digits.size(); ++i) plain = in_class(digits[i], kHex);
  if (plain) {
    std::uint64_t v = 0;
    for (char c : digits) v = (v << 4) | std::uint64_t(hex_digit(c));
    *out = v;
    return true;
  }
  try {
    *out = std::stoull(str(digits), nullptr, 16);
    return true;
  } catch (...) {
    return false;
  }
}

// An integer literal: decimal or 0x hex, with an optional U suffix.
bool parse_int_slow(const std::string& s, std::int64_t* out) {
  try {
    std::size_t used = 0;
    std::string body = s;
    if (!body.empty() && (body.back() == 'U' || body.back() == 'u')) body.pop_back();
    unsigned long long v = 0;
    if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X'))
      v = std::stoull(body.substr(2), &used, 16), used += 2;
    else
      v = std::stoull(body, &used, 10);
    if (used != body.size()) return false;
    *out = std::int64_t(v);
    return true;
  } catch (...) {
    return false;
  }
}

// The same, fast for the literals nvcc writes (up to 19 decimal or 16 hex
// digits, which cannot overflow); anything else takes the stoull path above.
bool parse_int(std::string_view s, std::int64_t* out) {
  std::string_view body = s;
  if (!body.empty() && (body.back() == 'U' || body.back() == 'u')) body.remove_suffix(1);
  if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) {
    std::string_view d = body.substr(2);
    bool plain = d.size() <= 16;
    for (std::size_t i = 0; plain && i < d.size(); ++i) plain = in_class(d[i], kHex);
    if (plain) {
      std::uint64_t v = 0;
      for (char c : d) v = (v << 4) | std::uint64_t(hex_digit(c));
      *out = std::int64_t(v);
      return true;
    }
  } else if (!body.empty() && body.size() <= 19) {
    bool plain = true;
    for (std::size_t i = 0; plain && i < body.size(); ++i) plain = in_class(body[i], kDigit);
    if (plain) {
      std::uint64_t v = 0;
      for (char c : body) v = v * 10 + std::uint64_t(c - '0');
      *out = std::int64_t(v);
      return true;
    }
  }
  return parse_int_slow(str(s), out);
}

// The lexer's output: the tokens, ending with an End token, and for each
// outermost '{' the number of ';' and ':' tokens up to its '}', which bounds
// the statements of a function body (a capacity hint for the parser). The
// token array is a plain buffer that the lexer fills through a pointer: a
// std::vector's emplace_back zeroed each token and checked its capacity
// through memory the token stores might alias.
struct Lexed {
  std::unique_ptr<Token[]> tokens;
  std::size_t size = 0, capacity = 0;
  std::vector<std::pair<std::size_t, std::size_t>> brace_counts;  // (index of an outermost '{', count), in order
  // ',' and ';' tokens in the whole text. Every operand of an instruction is
  // followed by its own ',' or by the instruction's ';' (nested ones go to
  // Operand::elements), so the file has at most separators + 1 of them: the
  // + 1 for an instruction cut off by the end of the file.
  std::size_t separators = 0;
  // Room for at least n tokens, keeping the first `size`.
  void grow(std::size_t n) {
    if (n <= capacity) return;
    n = std::max(n, 2 * capacity);
    std::unique_ptr<Token[]> bigger(new Token[n]);
    if (size) std::memcpy(static_cast<void*>(bigger.get()), tokens.get(), size * sizeof(Token));
    tokens = std::move(bigger);
    capacity = n;
  }
};

// A character for a message: 'c' when printable, else its byte value (a
// NUL or a UTF-8 byte would garble the message or end it early).
std::string describe_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("character '") + c + "'";
  static const char hex[] = "0123456789abcdef";
  return std::string("byte 0x") + hex[u >> 4] + hex[u & 15];
}

// Two's-complement negation and addition of the 64-bit values literals
// denote: -(-2^63) and large offsets wrap, as in PTX's own arithmetic,
// instead of overflowing a signed integer (undefined behaviour).
std::int64_t negate(std::int64_t v) { return std::int64_t(std::uint64_t(0) - std::uint64_t(v)); }
std::int64_t wrapping_add(std::int64_t a, std::int64_t b) { return std::int64_t(std::uint64_t(a) + std::uint64_t(b)); }

// How deeply {..} vectors, (..) argument lists, [..] addresses and
// initializer lists may nest. nvcc's deepest is two ([map, {x, y}]); the
// bound keeps a file of nothing but '{' from recursing until the stack is gone.
constexpr int kMaxNesting = 32;

// The scanning loops rely on kTextPadding '\0' bytes after the text (s[n]
// on): a '\0' is in no character class, so it stops them at the end without
// a bounds check (and a '\0' inside the text stops them the same way, as it
// always has), and the identifier loop's reads of four bytes at a time stay
// in the padding. Positions live in locals, not members, so that the
// compiler keeps them in registers across the token stores.
//
// kRoomForAll: the array is made large enough for any text of n bytes
// first (a token takes at least one byte, the End token none), so that
// the loop needs no check of its room per token, a measurable part of
// lexing. Otherwise it starts at about what nvcc's PTX needs and grows.
template <bool kRoomForAll>
void lex_text(const char* const s, const std::size_t n, const std::string& file, Lexed& out) {
  out.size = 0;
  out.grow(kRoomForAll ? n + 2 : n / 2 + 16);  // nvcc's PTX: about one token per 2 to 3 bytes
  Token* tokens = out.tokens.get();
  Token* limit = tokens + out.capacity;
  Token* t = tokens;  // the next token to write
  std::size_t i = 0;
  std::uint32_t line = 1;
  std::size_t line_start = 0;  // the column of s[i] is i - line_start + 1
  int depth = 0;               // of { } nesting, for brace_counts
  std::size_t count = 0;       // ';' and ':' since the outermost '{'
  std::size_t separators = 0;  // ',' and ';'
  auto column = [&](std::size_t at) { return std::uint32_t(at - line_start + 1); };
  for (;;) {
    // Spaces and comments.
    for (;;) {
      const char c = s[i];
      if (in_class(c, kSpace)) {
        if (c == '\n') {
          ++line;
          line_start = i + 1;
        }
        ++i;
      } else if (c == '/' && s[i + 1] == '/') {
        while (i < n && s[i] != '\n') ++i;
      } else if (c == '/' && s[i + 1] == '*') {
        const std::uint32_t start_line = line, start_col = column(i);
        i += 2;
        while (i + 1 < n && !(s[i] == '*' && s[i + 1] == '/')) {
          if (s[i] == '\n') {
            ++line;
            line_start = i + 1;
          }
          ++i;
        }
        if (i + 1 >= n) throw Failure{{SourceLoc{file, start_line, start_col}, "unterminated comment"}};
        i += 2;
      } else {
        break;
      }
    }
    if (!kRoomForAll && t == limit) {  // rare: more than one token per 2 bytes
      out.size = std::size_t(t - tokens);
      out.grow(out.capacity + 1);
      tokens = out.tokens.get();
      limit = tokens + out.capacity;
      t = tokens + out.size;
    }
    t->line = line;
    t->col = column(i);
    if (i >= n) {
      t->begin = nullptr;
      t->length = 0;
      t->kind = Token::Kind::End;
      t->punct = 0;
      out.size = std::size_t(t - tokens) + 1;
      out.separators = separators;
      if (depth > 0) out.brace_counts.back().second = count;  // an unclosed body: up to the end
      return;
    }
    const char c = s[i];
    const std::uint8_t cls = kClass[static_cast<unsigned char>(c)];
    const std::size_t b = i;
    char punct = 0;
    Token::Kind kind;
    if (cls & kIdentStart) {
      // Identifiers, opcodes and directives: dotted words (ld.global.f32, %tid.x, .reg).
      for (;;) {
        ++i;
        // Four bytes a step while all four continue the word (most opcodes
        // are longer than 8), then one at a time.
        while ((kClass[static_cast<unsigned char>(s[i])] & kClass[static_cast<unsigned char>(s[i + 1])] &
                kClass[static_cast<unsigned char>(s[i + 2])] & kClass[static_cast<unsigned char>(s[i + 3])] & kIdentChar) != 0)
          i += 4;
        while (in_class(s[i], kIdentChar)) ++i;
        // "::" joins qualifiers (.shared::cta, .mbarrier::complete_tx::bytes);
        // a single ':' ends a label.
        if (s[i] == ':' && s[i + 1] == ':' && in_class(s[i + 2], kIdentChar)) {
          i += 1;  // the loop's ++i steps over the second ':'
          continue;
        }
        break;
      }
      kind = Token::Kind::Ident;
    } else if (cls & kPunct) {
      ++i;
      kind = Token::Kind::Punct;
      punct = c;
      if (c == ';' || c == ':') {
        ++count;
        separators += c == ';';
      } else if (c == ',') {
        ++separators;
      } else if (c == '{') {
        if (depth++ == 0) {
          out.brace_counts.emplace_back(std::size_t(t - tokens), 0);
          count = 0;
        }
      } else if (c == '}' && depth > 0 && --depth == 0) {
        out.brace_counts.back().second = count;
      }
    } else if (cls & kDigit) {
      ++i;
      while (in_class(s[i], kNumberChar)) ++i;
      kind = Token::Kind::Number;
    } else if (c == '"') {
      ++i;
      while (i < n && s[i] != '"' && s[i] != '\n') ++i;
      if (i >= n || s[i] != '"') throw Failure{{SourceLoc{file, t->line, t->col}, "unterminated string"}};
      ++i;
      kind = Token::Kind::String;
    } else {
      throw Failure{{SourceLoc{file, t->line, t->col}, "unexpected " + describe_char(c) + " (PTX text is ASCII)"}};
    }
    t->begin = s + b;
    t->length = std::uint32_t(i - b);
    t->kind = kind;
    t->punct = punct;
    ++t;
  }
}

// Texts up to this size get room for all their tokens up front: for them
// that is at most 24 MiB, the most parse_text keeps for the next parse.
constexpr std::size_t kRoomForAllBytes = (std::size_t(1) << 20) - 2;

void lex(const char* s, std::size_t n, const std::string& file, Lexed& out) {
  if (n <= kRoomForAllBytes) lex_text<true>(s, n, file, out);
  else lex_text<false>(s, n, file, out);
}

class Parser {
 public:
  Parser(const Lexed& lexed, const std::string& file, std::shared_ptr<ModuleStorage> storage)
      : t_(lexed.tokens.get()),
        nt_(lexed.size),
        brace_counts_(lexed.brace_counts),
        file_(SharedString::interned(file)),
        storage_(std::move(storage)),
        operands_(storage_->operands) {
    m_.file = file;
    operands_.reserve(lexed.separators + 1);
  }

  Module run() {
    const Operand* const reserved = operands_.data();
    while (!at_end()) top_level();
    // The bound operands_ was reserved for holds (Lexed::separators); were
    // it ever wrong, operands_ would have moved, and the spans of the
    // instructions before would point to freed memory.
    if (operands_.data() != reserved) fail(peek(), "internal error: more operands than the lexer counted");
    resolve_sources();
    return std::move(m_);
  }

 private:
  SourceLoc loc(const Token& t) const { return SourceLoc{file_, t.line, t.col}; }
  // The same into an existing (empty) SourceLoc: no temporary to move from.
  void set_loc(SourceLoc& l, const Token& t) const {
    l.file = file_;
    l.line = t.line;
    l.column = t.col;
  }
  // Tokens are never added or removed after lexing, so references into t_ stay
  // valid. p_ never passes the End token, the last one.
  const Token& peek() const { return t_[p_]; }
  const Token& peek(std::size_t k) const { return t_[std::min(p_ + k, nt_ - 1)]; }
  bool at_end() const { return peek().kind == Token::Kind::End; }
  const Token& next() {
    const Token& t = peek();
    if (!at_end()) ++p_;
    return t;
  }
  // Every punctuation token is one character.
  bool is(char punct) const { return peek().punct == punct; }
  bool accept(char punct) {
    if (!is(punct)) return false;
    ++p_;
    return true;
  }
  [[noreturn]] void fail(const SourceLoc& loc, const std::string& msg) { throw Failure{{loc, msg}}; }
  [[noreturn]] void fail(const Token& t, const std::string& msg) { throw Failure{{loc(t), msg}}; }
  // Valid PTX that tileverify does not read (every other parse error is bad input).
  [[noreturn]] void unsupported(const Token& t, const std::string& msg) { throw Failure{{loc(t), msg, true}}; }
  // Counts one level of nesting for as long as it lives (see kMaxNesting).
  class Nesting {
   public:
    Nesting(Parser& parser, const Token& at, const char* what) : parser_(parser) {
      if (++parser_.depth_ > kMaxNesting)
        parser_.fail(at, std::string(what) + " nested more than " + std::to_string(kMaxNesting) + " deep");
    }
    ~Nesting() { --parser_.depth_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    Parser& parser_;
  };
  // The error of expect() when punct is not next.
  [[noreturn]] void expect_failed(char punct, const char* what) {
    if (at_end()) fail(peek(), std::string("unexpected end of file: expected '") + punct + "' " + what);
    fail(peek(), std::string("expected '") + punct + "' " + what + ", found '" + str(peek().text()) + "'");
  }
  void expect(char punct, const char* what) {
    if (!accept(punct)) expect_failed(punct, what);
  }
  std::string_view ident(const char* what) {
    if (peek().kind != Token::Kind::Ident)
      fail(peek(), std::string("expected ") + what + (at_end() ? ", found the end of the file" : ", found '" + str(peek().text()) + "'"));
    return next().text();
  }
  std::int64_t integer(const char* what) {
    bool neg = accept('-');
    if (peek().kind != Token::Kind::Number) fail(peek(), std::string("expected ") + what);
    const Token& t = next();
    std::int64_t v = 0;
    // Most integers are a few decimal digits (offsets, counts): read here,
    // with the value parse_int would give; anything else goes to it.
    if (t.length <= 9) {
      std::uint32_t x = 0;
      std::uint32_t i = 0;
      for (; i < t.length; ++i) {
        const std::uint32_t d = std::uint32_t(std::uint8_t(t.begin[i])) - '0';
        if (d > 9) break;
        x = x * 10 + d;
      }
      if (i == t.length) return neg ? -std::int64_t(x) : std::int64_t(x);
    }
    if (!parse_int(t.text(), &v)) fail(t, "malformed integer '" + str(t.text()) + "'");
    return neg ? negate(v) : v;
  }
  // A count or an array size: a literal from 0 to 2^64 - 1 (integer() would
  // read the upper half as negative numbers).
  std::uint64_t count(const char* what) {
    if (is('-')) fail(peek(), std::string("expected ") + what + " (a number, 0 or more), found '-'");
    if (peek().kind != Token::Kind::Number) fail(peek(), std::string("expected ") + what);
    return std::uint64_t(integer(what));
  }

  // ---- module level
  void top_level() {
    const Token& t = peek();
    if (t.kind != Token::Kind::Ident) fail(t, "expected a directive, found '" + str(t.text()) + "'");
    const std::string_view d = t.text();
    if (d == ".version") {
      next();
      m_.version = str(next().text());
    } else if (d == ".target") {
      next();
      m_.target = str(ident("a target"));
      while (accept(',')) ident("a target");
    } else if (d == ".address_size") {
      next();
      m_.address_size = int(integer("an address size"));
    } else if (d == ".visible" || d == ".weak" || d == ".extern") {
      next();  // linkage: applies to what follows
      if (peek().text() == ".shared" || peek().text() == ".global" || peek().text() == ".const") {
        m_.globals.push_back(var_decl());
        if (accept('=')) initializer(m_.globals.back());
        expect(';', "after a variable declaration");
      }
    } else if (d == ".entry" || d == ".func") {
      function();
    } else if (d == ".global" || d == ".shared" || d == ".const") {
      m_.globals.push_back(var_decl());
      if (accept('=')) initializer(m_.globals.back());
      expect(';', "after a variable declaration");
    } else if (d == ".file") {
      file_directive();
    } else if (d == ".section") {
      section();
    } else if (d == ".loc") {
      skip_line(next().line);
    } else if (d == ".pragma") {
      skip_statement();
    } else {
      fail(t, "unknown directive '" + str(d) + "'");
    }
  }

  // Skips an initializer up to its ';'; returns the first name in it other
  // than the generic() operator (a variable's or a function's address), or
  // an empty view.
  std::string_view skip_initializer() {
    std::string_view first_name;
    int depth = 0;
    while (!at_end()) {
      if (is('{')) ++depth;
      if (is('}')) --depth;
      if (depth == 0 && is(';')) break;
      const Token& t = next();
      if (first_name.empty() && t.kind == Token::Kind::Ident && t.text() != "generic") first_name = t.text();
    }
    return first_name;
  }

  static std::size_t type_bytes(std::string_view type) {
    if (type.size() < 3) return 0;
    std::string_view bits = type.substr(type[1] == 'b' && type[2] == 'f' ? 3 : 2);  // .bf16 / .f32 / .u8 ...
    if (bits == "8") return 1;
    if (bits == "16") return 2;
    if (bits == "32") return 4;
    if (bits == "64") return 8;
    return 0;
  }

  // Zeros that initializer() appends to fill an array (see there).
  static constexpr std::uint64_t kInitPadding = std::uint64_t(1) << 20;

  // What initializer() has read so far.
  struct InitState {
    std::size_t width = 0;
    std::vector<std::uint8_t> bytes;
    bool ok = false;
  };

  // One element of an initializer, or a {..} list of them (recursively).
  void init_element(InitState& s) {
    if (!s.ok) return;
    if (is('{')) {
      Nesting nest(*this, next(), "initializer lists");
      if (!is('}')) {
        init_element(s);
        while (s.ok && accept(',')) init_element(s);
      }
      if (s.ok && !accept('}')) s.ok = false;
      return;
    }
    bool neg = accept('-');
    if (peek().kind != Token::Kind::Number) {
      s.ok = false;
      return;
    }
    const std::string_view x = next().text();
    std::uint64_t value = 0;
    std::size_t w = s.width;
    if (x.size() == 10 && x[0] == '0' && (x[1] == 'f' || x[1] == 'F')) {
      if (!hex_value(x.substr(2), &value)) {
        s.ok = false;
        return;
      }
      value ^= neg ? 0x80000000ull : 0;
      w = 4;
    } else if (x.size() == 18 && x[0] == '0' && (x[1] == 'd' || x[1] == 'D')) {
      if (!hex_value(x.substr(2), &value)) {
        s.ok = false;
        return;
      }
      value ^= neg ? 0x8000000000000000ull : 0;
      w = 8;
    } else {
      std::int64_t iv = 0;
      if (!parse_int(x, &iv)) {
        s.ok = false;
        return;
      }
      value = std::uint64_t(neg ? negate(iv) : iv);
    }
    if (w != s.width) {  // a float constant in an array of another width
      s.ok = false;
      return;
    }
    for (std::size_t b = 0; b < s.width; ++b) s.bytes.push_back(std::uint8_t(value >> (8 * b)));
  }

  // "= 0f3F800000" or "= {1, 2, {3, 4}}": the bytes of every element, in order.
  // Anything else (an address, generic(x), a decimal float) is kept as an
  // error for the lowering to report if a kernel reads the variable.
  void initializer(VarDecl& v) {
    std::size_t start = p_;
    InitState s;
    s.width = type_bytes(v.type);
    s.ok = s.width != 0;
    init_element(s);
    if (s.ok && !is(';')) s.ok = false;
    if (!s.ok) {
      p_ = start;
      v.init_name = str(skip_initializer());
      v.init_error = "the initializer of '" + v.name + "' is not a list of numbers (addresses and expressions are not supported)";
      return;
    }
    const std::size_t width = s.width;
    if (v.unsized) {
      v.unsized = false;
      v.elements = s.bytes.size() / width;
    }
    std::uint64_t total = 0;  // bytes of the array
    if (__builtin_mul_overflow(v.elements, std::uint64_t(width), &total))
      fail(v.loc, "the array '" + v.name + "' has more bytes than fit in 64 bits");
    if (s.bytes.size() > total) fail(v.loc, "the initializer of '" + v.name + "' has more elements than the array");
    // The rest of the array is zero: padded here up to kInitPadding bytes.
    // Past that the bytes are left out (VarDecl::init), so that a huge array
    // with a short initializer costs nothing until the lowering judges its size.
    s.bytes.resize(std::size_t(std::min<std::uint64_t>(total, std::max<std::uint64_t>(s.bytes.size(), kInitPadding))), 0);
    v.has_init = true;
    v.init = std::move(s.bytes);
  }

  void skip_statement() {
    while (!at_end() && !is(';')) next();
    expect(';', "to end the directive");
  }

  // ---- debug information (nvcc -lineinfo / -G). These directives end at the
  // end of their line, not at a ';'.
  void skip_line(std::uint32_t line) {
    while (!at_end() && peek().line == line) next();
  }

  // .file N "path"[, timestamp, size]
  void file_directive() {
    const Token& dir = next();
    const std::uint32_t line = dir.line;
    if (peek().kind != Token::Kind::Number || peek().line != line)
      fail(dir, "'.file' needs a file number and a quoted file name (.file 1 \"k.cu\")");
    const int n = int(integer("a file number"));
    if (peek().kind != Token::Kind::String || peek().line != line)
      fail(peek().line == line ? peek() : dir, "expected a quoted file name after '.file " + std::to_string(n) + "'");
    const std::string_view quoted = next().text();
    m_.files[n] = str(quoted.substr(1, quoted.size() - 2));
    skip_line(line);
  }

  // .section .debug_xxx { ... }: DWARF data, not needed here.
  void section() {
    next();
    const std::string_view name = ident("a section name");
    const Token& open = peek();
    if (!accept('{')) expect_failed('{', ("to open the section '" + str(name) + "'").c_str());
    for (int depth = 1; depth > 0;) {
      if (at_end()) fail(open, "unbalanced braces: the section '" + str(name) + "' opened here is never closed");
      if (accept('{'))
        ++depth;
      else if (accept('}'))
        --depth;
      else
        next();
    }
  }

  // .loc FILE LINE COLUMN[, function_name LABEL[, inlined_at FILE LINE COLUMN]]:
  // the CUDA source position of the instructions that follow.
  void debug_loc() {
    const Token& dir = next();
    const std::uint32_t line = dir.line;
    auto number = [&](const char* what) {
      if (peek().kind != Token::Kind::Number || peek().line != line)
        fail(peek().line == line ? peek() : dir, std::string("'.loc' needs ") + what + " (.loc FILE LINE COLUMN)");
      return integer(what);
    };
    debug_file_ = int(number("a file number"));
    debug_line_ = std::uint32_t(number("a line number"));
    debug_column_ = peek().kind == Token::Kind::Number && peek().line == line ? std::uint32_t(integer("a column")) : 0;
    // ", function_name LABEL, inlined_at FILE LINE COLUMN": the code of a
    // function inlined at that position (nvcc's own __syncwarp() is
    // sm_30_intrinsics.hpp:110 wherever a kernel calls it). Reports show
    // both. A malformed tail is ignored, as before: it is debug information.
    inlined_file_ = -1;
    inlined_line_ = 0;
    while (!at_end() && peek().line == line) {
      const Token& t = next();
      if (t.kind == Token::Kind::Ident && t.text() == "inlined_at" && peek().kind == Token::Kind::Number &&
          peek().line == line) {
        const Token& file = next();
        if (peek().kind == Token::Kind::Number && peek().line == line) {
          const Token& ln = next();
          std::uint64_t f = 0, l = 0;
          if (small_number(file.text(), &f) && small_number(ln.text(), &l)) {
            inlined_file_ = int(f);
            inlined_line_ = std::uint32_t(l);
          }
        }
      }
    }
  }

  // A decimal below 2^31 (a .loc file or line number), else false.
  static bool small_number(std::string_view s, std::uint64_t* v) {
    if (s.empty() || s.size() > 9) return false;
    std::uint64_t x = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return false;
      x = x * 10 + std::uint64_t(c - '0');
    }
    *v = x;
    return true;
  }

  static void mark(ptx::Operand& o, const SharedString& src) {
    o.loc.source = src;
    for (ptx::Operand& e : o.elements) mark(e, src);
  }

  // The CUDA position of every instruction under a .loc, now that the .file
  // directives (nvcc puts them at the end) are known: "k.cu:31".
  void resolve_sources() {
    // Runs of instructions share a .loc: the text is built once a run.
    int last_file = -1, last_inlined_file = -1;
    std::uint32_t last_line = 0, last_inlined_line = 0;
    SharedString src;
    auto name_of = [&](int number) {
      std::string file = "file " + std::to_string(number);
      if (auto it = m_.files.find(number); it != m_.files.end()) {
        file = it->second;
        std::size_t slash = file.find_last_of("/\\");
        if (slash != std::string::npos && slash + 1 < file.size()) file = file.substr(slash + 1);
      }
      return file;
    };
    for (Kernel& k : m_.kernels)
      for (Statement& st : k.body) {
        Instruction& in = st.instr;
        if (st.kind != Statement::Kind::Instruction || in.debug_file < 0 || in.debug_line == 0) continue;
        if (in.debug_file != last_file || in.debug_line != last_line || in.inlined_file != last_inlined_file ||
            in.inlined_line != last_inlined_line) {
          std::string text = name_of(in.debug_file) + ":" + std::to_string(in.debug_line);
          if (in.inlined_file >= 0 && in.inlined_line > 0)
            text += ", inlined at " + name_of(in.inlined_file) + ":" + std::to_string(in.inlined_line);
          src = text;
          last_file = in.debug_file;
          last_line = in.debug_line;
          last_inlined_file = in.inlined_file;
          last_inlined_line = in.inlined_line;
        }
        st.loc.source = src;
        in.loc.source = src;
        // The span is read-only for the Module's users; the parser owns the
        // operands it points to (in operands_), and fills them in here.
        for (const ptx::Operand& o : in.operands) mark(const_cast<ptx::Operand&>(o), src);
      }
  }

  VarDecl var_decl() {
    VarDecl v;
    set_loc(v.loc, peek());
    v.space = str(ident("a state space"));
    for (;;) {
      const std::string_view w = peek().text();
      if (w == ".align") {
        next();
        integer("an alignment");
      } else if (peek().kind == Token::Kind::Ident && w.size() > 1 && w[0] == '.' && w != ".v2" && w != ".v4") {
        v.type = str(next().text());
        if (peek().kind == Token::Kind::Ident && peek().text()[0] != '.') break;
      } else if (w == ".v2" || w == ".v4") {
        next();
      } else {
        break;
      }
    }
    v.name = str(ident("a variable name"));
    if (accept('[')) {
      if (accept(']')) {
        v.unsized = true;
        v.elements = 0;
      } else {
        v.elements = count("an array size");
        expect(']', "after an array size");
      }
      while (!v.unsized && is('[')) {  // x[2][3]: six elements
        const Token& open = next();
        if (__builtin_mul_overflow(v.elements, count("an array size"), &v.elements))
          fail(open, "the array '" + v.name + "' has more elements than fit in 64 bits");
        expect(']', "after an array size");
      }
    }
    return v;
  }

  Param param() {
    Param p;
    const Token& first = peek();
    set_loc(p.loc, first);
    const std::string_view sp = ident("'.param'");
    if (sp != ".param" && sp != ".reg") fail(first, "expected '.param', found '" + str(sp) + "'");
    while (peek().kind == Token::Kind::Ident && peek().text()[0] == '.') {
      const std::string_view w = next().text();
      if (w == ".ptr") {
        p.pointer_hint = true;
      } else if (w == ".align") {
        integer("an alignment");
      } else if (w == ".global" || w == ".shared" || w == ".const" || w == ".local") {
      } else {
        p.type = str(w);
      }
    }
    p.name = str(ident("a parameter name"));
    if (accept('[')) {  // .param .align 8 .b8 p[16]: a by-value struct (a CUtensorMap is .b8 p[128])
      const std::uint64_t n = count("an array size");
      expect(']', "after an array size");
      // The element's bits are the type's digits (.b8, .u32, .f64); the
      // spec's launch checks a tensor map parameter's size.
      std::uint64_t bits = 0;
      for (char c : p.type)
        if (c >= '0' && c <= '9') bits = bits * 10 + std::uint64_t(c - '0');
      if (bits % 8 == 0 && bits <= 64 && n <= (std::uint64_t(1) << 32)) p.array_bytes = n * (bits / 8);
      p.type = ".struct";
    }
    if (p.type == ".u64" || p.type == ".b64" || p.type == ".s64") p.pointer_hint = true;
    return p;
  }

  void function() {
    debug_file_ = -1;  // a .loc holds until the next one, within one function
    inlined_file_ = -1;
    Kernel k;
    set_loc(k.loc, peek());
    k.is_entry = next().text() == ".entry";
    if (!k.is_entry && is('(')) {  // return parameters
      next();
      if (!is(')')) {
        k.returns.push_back(param());
        while (accept(',')) k.returns.push_back(param());
      }
      expect(')', "after the return parameters");
    }
    k.name = str(ident("a function name"));
    if (accept('(')) {
      if (!is(')')) {
        k.params.push_back(param());
        while (accept(',')) k.params.push_back(param());
      }
      expect(')', "after the parameter list");
    }
    // Performance directives (.maxntid 128, 1, 1 / .reqntid / .minnctapersm / .noreturn ...).
    // .reqntid and .maxntid are kept: a spec may leave the block to .reqntid,
    // and a block above .maxntid cannot launch.
    while (peek().kind == Token::Kind::Ident && peek().text()[0] == '.') {
      const std::string_view d = next().text();
      std::array<std::uint32_t, 3>* dims = d == ".reqntid" ? &k.reqntid : d == ".maxntid" ? &k.maxntid
                                         : d == ".reqnctapercluster" ? &k.reqnctapercluster : nullptr;
      std::size_t i = 0;
      while (peek().kind == Token::Kind::Number) {
        const Token& n = peek();
        std::uint64_t v = count("a thread count");
        if (dims) {
          if (i >= 3 || v == 0 || v > 1024) fail(n, "a " + str(d) + " dimension must be 1 to 1024, at most three of them");
          (*dims)[i++] = std::uint32_t(v);
        }
        accept(',');
      }
      if (dims)
        for (; i < 3; ++i) (*dims)[i] = 1;
    }
    if (accept(';')) {  // a declaration only: kept so that a call to it can name what it is
      m_.declared_functions.emplace(std::move(k.name), k.loc);  // emplace keeps the first
      return;
    }
    const Token& open = peek();
    expect('{', "to open the function body");
    body(k, open);
    k.storage = storage_;
    m_.kernels.push_back(std::move(k));
  }

  // Capacity hints, so that the Module's vectors are allocated once rather
  // than grown (a Statement is about 300 bytes, an Operand about 180). They
  // only read the tokens ahead; the parse proper still decides everything.

  // Statements in the body from here to its closing brace: at most one per
  // ';' or ':' (a label). The lexer counted them for outermost braces; the
  // scan is for any other.
  std::size_t count_statements() const {
    const std::size_t open = p_ - 1;  // the '{' just accepted
    auto it = std::lower_bound(brace_counts_.begin(), brace_counts_.end(), std::make_pair(open, std::size_t(0)));
    if (it != brace_counts_.end() && it->first == open) return it->second;
    std::size_t n = 0;
    int depth = 1;
    for (std::size_t i = p_; i < nt_ && depth > 0; ++i) {
      const Token& t = t_[i];
      const char c = t.punct;
      if (c == ';' || c == ':') ++n;
      else if (c == '{') ++depth;
      else if (c == '}') --depth;
    }
    return n;
  }

  // Items of the list that starts here: commas outside brackets before the
  // list ends (`close`, ';' or an unmatched closing bracket), plus one;
  // looking at most 256 tokens ahead.
  std::size_t count_items(char close) const {
    std::size_t n = 1;
    int depth = 0;
    for (std::size_t i = p_, end = std::min(nt_, p_ + 256); i < end; ++i) {
      const Token& t = t_[i];
      const char c = t.punct;
      if (c == 0) continue;
      if (depth == 0 && (c == close || c == ';')) break;
      if (c == '{' || c == '[' || c == '(') {
        ++depth;
      } else if (c == '}' || c == ']' || c == ')') {
        if (depth == 0) break;
        --depth;
      } else if (c == ',' && depth == 0) {
        ++n;
      }
    }
    return n;
  }

  void body(Kernel& k, const Token& open) {
    k.body.reserve(count_statements());
    BlockScopes scopes;
    int depth = 1;
    while (depth > 0) {
      if (at_end()) fail(open, "unbalanced braces: the body of '" + k.name + "' opened here is never closed");
      if (is('{')) {
        const Token& brace = next();
        scopes.open(brace.line, brace.col);
        ++depth;
        continue;
      }
      if (accept('}')) {
        if (--depth > 0) scopes.close();
        continue;
      }
      const Token& t = peek();
      const bool ident = t.kind == Token::Kind::Ident;
      const std::string_view w = t.text();
      // Directives all start with '.'; most statements are instructions.
      if (ident && w[0] == '.' && w == ".reg") {
        const std::size_t from = k.regs.size();
        reg_decl(k);
        scopes.registers(from, k.regs.size());
      } else if (ident && w[0] == '.' && (w == ".shared" || w == ".local" || w == ".global" || w == ".const")) {
        k.vars.push_back(var_decl());
        expect(';', "after a variable declaration");
      } else if (ident && w[0] == '.' && w == ".param") {
        k.vars.push_back(var_decl());  // the argument and return slots of a call sequence
        expect(';', "after a .param declaration");
      } else if (ident && w[0] == '.' && w == ".loc") {
        debug_loc();
      } else if (ident && w[0] == '.' && (w == ".pragma" || w == ".callprototype")) {
        skip_statement();  // a prototype only serves indirect calls, which the lowering rejects
      } else if (ident && peek(1).punct == ':') {
        scopes.label(k.body.size());
        scopes.statement();
        Statement& s = k.body.emplace_back(Statement::Kind::Label, loc(t));
        s.label = next().text();
        next();
      } else {
        scopes.statement();
        // Built in place: on an error the whole Module is dropped anyway.
        instruction(k.body.emplace_back(Statement::Kind::Instruction, loc(t)));
      }
    }
    if (std::optional<Error> e = scopes.apply(k, operands_, storage_->names)) fail(e->loc, e->message);
  }

  void reg_decl(Kernel& k) {
    const Token& dir = next();
    std::string_view type;
    while (peek().kind == Token::Kind::Ident && peek().text()[0] == '.') type = next().text();
    if (type.empty()) fail(dir, "a .reg declaration needs a type");
    do {
      RegDecl r;
      set_loc(r.loc, peek());
      r.type.assign(type);
      r.name.assign(ident("a register name"));
      if (accept('<')) {
        // Lowering makes only the registers that instructions use, so that a
        // large count costs nothing; the bound is RegDecl::count's.
        const Token& at = peek();
        const std::string written = str(at.text());
        const std::uint64_t n = count("a register count");
        if (n > std::uint64_t(INT32_MAX))
          fail(at, "'" + r.name + "<" + written + ">' declares more registers than tileverify reads (at most " +
                       std::to_string(INT32_MAX) + " a declaration)");
        r.count = int(n);
        expect('>', "after a register count");
      }
      k.regs.push_back(std::move(r));
    } while (accept(','));
    expect(';', "after a register declaration");
  }

  void instruction(Statement& s) {
    Instruction& in = s.instr;
    const bool guarded = accept('@');
    if (guarded) {
      in.guard_negated = accept('!');
      in.guard = ident("a guard predicate");
    }
    if (peek().kind != Token::Kind::Ident)
      fail(peek(), at_end() ? std::string("unexpected end of file: expected an instruction")
                            : "expected an instruction, found '" + str(peek().text()) + "'");
    const Token& op = next();
    if (guarded) set_loc(in.loc, op);
    else in.loc = s.loc;  // without a guard, the statement starts at the opcode
    in.debug_file = debug_file_;
    in.debug_line = debug_line_;
    in.debug_column = debug_column_;
    in.inlined_file = inlined_file_;
    in.inlined_line = inlined_line_;
    in.opcode = op.text();
    if (!is(';')) {
      // Into the file's operand array, which has room for them all (see
      // Lexed::separators): the span's pointer stays valid.
      const std::size_t first = operands_.size();
      operand(operands_.emplace_back(Fresh<Operand>{}));
      while (accept(',')) operand(operands_.emplace_back(Fresh<Operand>{}));
      in.operands = OperandList(operands_.data() + first, operands_.size() - first);
    }
    if (at_end()) fail(in.loc, "unexpected end of file: '" + str(in.opcode) + "' is not terminated by ';'");
    if (!accept(';')) expect_failed(';', ("after '" + str(in.opcode) + "'").c_str());
  }

  // The elements of a {..} vector or a (..) argument list, up to `close`.
  void elements(Operand& o, char close, const char* what) {
    Nesting nest(*this, t_[p_ - 1], close == '}' ? "vector operands" : "argument lists");
    o.kind = Operand::Kind::Vector;
    if (!is(close)) {
      o.elements.reserve(count_items(close));
      operand(o.elements.emplace_back(Fresh<Operand>{}));
      while (accept(',')) operand(o.elements.emplace_back(Fresh<Operand>{}));
    }
    expect(close, what);
  }

  // Fills o, a fresh Operand already in its vector (no copy or move of it).
  void operand(Operand& o) {
    set_loc(o.loc, peek());
    // A name first, the most common operand (a name is none of the
    // punctuation the other forms start with).
    if (peek().kind == Token::Kind::Ident) {
      o.name = next().text();
      o.kind = o.name.size() == 1 && o.name[0] == '_' ? Operand::Kind::Sink : Operand::Kind::Name;
      if (accept('|')) o.pred_out = ident("a predicate after '|'");
      return;
    }
    if (is('[')) {
      Nesting nest(*this, next(), "addresses");
      o.kind = Operand::Kind::Address;
      if (peek().kind == Token::Kind::Ident) o.name = next().text();
      else o.value = integer("an address");
      if (accept('+')) o.value = wrapping_add(o.value, integer("an address offset"));
      else if (is('-')) o.value = wrapping_add(o.value, integer("an address offset"));
      while (accept(',')) operand(o.elements.emplace_back(Fresh<Operand>{}));  // [tensormap, {x, y}]: TMA coordinates
      expect(']', "to close the address");
      return;
    }
    // {a, b, ...} vector operands and (a, b, ...) call argument lists.
    if (accept('{')) {
      elements(o, '}', "to close the vector operand");
      return;
    }
    if (accept('(')) {
      elements(o, ')', "to close the argument list");
      return;
    }
    if (is('!')) {  // !%p as an operand (e.g. selp, vote): negated predicate
      const char* bang = next().begin;
      o.kind = Operand::Kind::Name;
      const std::string_view p = ident("a predicate");
      if (p.data() == bang + 1) {  // as nvcc writes it, "!%p" is in the text
        o.name = std::string_view(bang, p.size() + 1);
      } else {
        storage_->names.push_back("!" + str(p));
        o.name = storage_->names.back();
      }
      return;
    }
    bool neg = accept('-');
    if (peek().kind != Token::Kind::Number)
      fail(peek(), at_end() ? std::string("unexpected end of file in an operand") : "expected an operand, found '" + str(peek().text()) + "'");
    const Token& t = next();
    const std::string_view x = t.text();
    auto hex_bits = [&](std::size_t digits, Operand::Kind kind) {
      std::uint64_t v = 0;
      if (x.size() != digits + 2 || !hex_value(x.substr(2), &v)) fail(t, "malformed float constant '" + str(x) + "'");
      o.value = std::int64_t(v);
      o.kind = kind;
    };
    if (x.size() > 2 && x[0] == '0' && (x[1] == 'f' || x[1] == 'F')) {
      hex_bits(8, Operand::Kind::F32Bits);
      if (neg) o.value ^= 0x80000000;
    } else if (x.size() > 2 && x[0] == '0' && (x[1] == 'd' || x[1] == 'D')) {
      hex_bits(16, Operand::Kind::F64Bits);
      if (neg) o.value = std::int64_t(std::uint64_t(o.value) ^ 0x8000000000000000ull);
    } else if (x.find('.') != std::string_view::npos) {
      unsupported(t, "decimal float constants are not supported ('" + str(x) + "'); nvcc writes floats as 0fXXXXXXXX");
    } else {
      o.kind = Operand::Kind::Int;
      if (!parse_int(x, &o.value)) fail(t, "malformed integer '" + str(x) + "'");
      if (neg) o.value = negate(o.value);
    }
  }

  const Token* const t_;
  const std::size_t nt_;  // tokens, the last one End
  const std::vector<std::pair<std::size_t, std::size_t>>& brace_counts_;
  std::size_t p_ = 0;
  const SharedString file_;  // every SourceLoc of the Module shares it
  const std::shared_ptr<ModuleStorage> storage_;
  std::vector<Operand>& operands_;  // storage_->operands
  Module m_;
  int depth_ = 0;  // of nesting (see Nesting)
  int debug_file_ = -1;  // the .loc in force
  std::uint32_t debug_line_ = 0, debug_column_ = 0;
  int inlined_file_ = -1;  // the .loc's inlined_at position, if any
  std::uint32_t inlined_line_ = 0;
};

}  // namespace

namespace {

// Parses the n bytes of storage->text, which the Module's kernels then keep
// (Kernel::storage); kTextPadding '\0' bytes follow them.
ParseResult parse_text(std::shared_ptr<ModuleStorage> storage, std::size_t n, const std::string& file) {
  // The token array of a small file is a large block (about 12 bytes of
  // tokens a byte of text): allocated and freed for every parse, it cost
  // more than lexing into it. Each thread keeps its own for the next parse,
  // unless it grew past what a usual PTX file needs.
  thread_local Lexed lexed;
  lexed.brace_counts.clear();
  ParseResult r;
  try {
    lex(storage->text.data(), n, file, lexed);  // the whole file first: a lexical error anywhere wins
    r.module = Parser(lexed, file, std::move(storage)).run();
  } catch (Failure& f) {
    r.error = std::move(f.error);
  } catch (const std::bad_alloc&) {  // no exception leaves: a caller gets an error, never an abort
    r.error = Error{SourceLoc{file, 0, 0}, "out of memory while reading the PTX", true};
  } catch (const std::exception& e) {
    r.module.reset();
    r.error = Error{SourceLoc{file, 0, 0}, std::string("internal error while reading the PTX: ") + e.what(), true};
  }
  constexpr std::size_t kKeep = std::size_t(1) << 20;  // tokens: 24 MiB
  if (lexed.capacity > kKeep) lexed = Lexed();
  return r;
}

}  // namespace

ParseResult parse_ptx(const std::string& text, const std::string& file) {
  auto storage = std::make_shared<ModuleStorage>();
  storage->text.reserve(text.size() + kTextPadding);
  storage->text.append(text).append(kTextPadding, '\0');
  return parse_text(std::move(storage), text.size(), file);
}

ParseResult parse_ptx_file(const std::string& path) {
  // POSIX reads straight into the text the Module keeps, sized from fstat:
  // an ifstream (its locale, its buffer, a copy out of it) cost as much as
  // parsing a small file. As with the stream, a read error ends the text
  // where it is.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    ParseResult r;
    r.error = Error{SourceLoc{path, 0, 0}, "cannot read the file"};
    return r;
  }
  auto storage = std::make_shared<ModuleStorage>();
  std::string& text = storage->text;
  struct stat st {};
  std::size_t size = 0;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) size = std::size_t(st.st_size);
  text.resize(size + kTextPadding);  // the padding, and room for the read past the end that finds it
  std::size_t used = 0;
  for (;;) {
    if (used == text.size()) text.resize(used + (std::size_t(1) << 16));  // the file grew, or its size is unknown
    const ssize_t got = ::read(fd, &text[used], text.size() - used);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    used += std::size_t(got);
  }
  ::close(fd);
  text.resize(used + kTextPadding);  // the bytes after the text are zeros of resize(): read() wrote none of them
  return parse_text(std::move(storage), used, path);
}

}  // namespace tileverify::ptx
