// PTX lexer and parser: text -> ptx::Module, every error with file:line:column.
#include "tileverify/ptx.hpp"

#include <cctype>
#include <fstream>
#include <functional>
#include <sstream>
#include <tuple>

namespace tileverify::ptx {

const Kernel* Module::find(const std::string& name) const {
  for (const Kernel& k : kernels)
    if (k.name == name) return &k;
  return nullptr;
}

namespace {

struct Token {
  enum class Kind { Ident, Number, Punct, String, End };
  Kind kind = Kind::End;
  std::string text;
  SourceLoc loc;
};

struct Failure {
  Error error;
};

class Lexer {
 public:
  Lexer(const std::string& text, const std::string& file) : s_(text), file_(file) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    for (;;) {
      skip_space();
      Token t;
      t.loc = here();
      if (i_ >= s_.size()) {
        t.kind = Token::Kind::End;
        out.push_back(t);
        return out;
      }
      char c = s_[i_];
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%' || c == '.') {
        // Identifiers, opcodes and directives: dotted words (ld.global.f32, %tid.x, .reg).
        std::size_t b = i_;
        for (;;) {
          while (i_ < s_.size() && ident_char(s_[i_])) advance();
          // "::" joins qualifiers (.shared::cta, .mbarrier::complete_tx::bytes);
          // a single ':' ends a label.
          if (i_ + 2 < s_.size() && s_[i_] == ':' && s_[i_ + 1] == ':' && ident_char(s_[i_ + 2])) {
            advance();
            advance();
            continue;
          }
          break;
        }
        t.kind = Token::Kind::Ident;
        t.text = s_.substr(b, i_ - b);
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        std::size_t b = i_;
        while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.')) advance();
        t.kind = Token::Kind::Number;
        t.text = s_.substr(b, i_ - b);
      } else if (c == '"') {
        std::size_t b = i_;
        advance();
        while (i_ < s_.size() && s_[i_] != '"' && s_[i_] != '\n') advance();
        if (i_ >= s_.size() || s_[i_] != '"') throw Failure{{t.loc, "unterminated string"}};
        advance();
        t.kind = Token::Kind::String;
        t.text = s_.substr(b, i_ - b);
      } else if (std::string(",;:{}[]()<>+-@!|=").find(c) != std::string::npos) {
        advance();
        t.kind = Token::Kind::Punct;
        t.text = std::string(1, c);
      } else {
        throw Failure{{t.loc, std::string("unexpected character '") + c + "'"}};
      }
      out.push_back(t);
    }
  }

 private:
  static bool ident_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%' || c == '.';
  }
  SourceLoc here() const { return SourceLoc{file_, line_, col_}; }
  void advance() {
    if (s_[i_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++i_;
  }
  void skip_space() {
    for (;;) {
      while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) advance();
      if (i_ + 1 < s_.size() && s_[i_] == '/' && s_[i_ + 1] == '/') {
        while (i_ < s_.size() && s_[i_] != '\n') advance();
      } else if (i_ + 1 < s_.size() && s_[i_] == '/' && s_[i_ + 1] == '*') {
        SourceLoc start = here();
        advance();
        advance();
        while (i_ + 1 < s_.size() && !(s_[i_] == '*' && s_[i_ + 1] == '/')) advance();
        if (i_ + 1 >= s_.size()) throw Failure{{start, "unterminated comment"}};
        advance();
        advance();
      } else {
        return;
      }
    }
  }
  const std::string& s_;
  std::string file_;
  std::size_t i_ = 0;
  std::uint32_t line_ = 1, col_ = 1;
};

class Parser {
 public:
  Parser(std::vector<Token> toks, const std::string& file) : t_(std::move(toks)) { m_.file = file; }

  Module run() {
    while (!at_end()) top_level();
    resolve_sources();
    return m_;
  }

 private:
  const Token& peek(std::size_t k = 0) const { return t_[std::min(p_ + k, t_.size() - 1)]; }
  bool at_end() const { return peek().kind == Token::Kind::End; }
  Token next() {
    Token t = peek();
    if (!at_end()) ++p_;
    return t;
  }
  bool is(const char* punct) const { return peek().kind == Token::Kind::Punct && peek().text == punct; }
  bool accept(const char* punct) {
    if (!is(punct)) return false;
    ++p_;
    return true;
  }
  [[noreturn]] void fail(const SourceLoc& loc, const std::string& msg) { throw Failure{{loc, msg}}; }
  void expect(const char* punct, const char* what) {
    if (at_end()) fail(peek().loc, std::string("unexpected end of file: expected '") + punct + "' " + what);
    if (!accept(punct)) fail(peek().loc, std::string("expected '") + punct + "' " + what + ", found '" + peek().text + "'");
  }
  std::string ident(const char* what) {
    if (peek().kind != Token::Kind::Ident)
      fail(peek().loc, std::string("expected ") + what + (at_end() ? ", found the end of the file" : ", found '" + peek().text + "'"));
    return next().text;
  }
  std::int64_t integer(const char* what) {
    bool neg = accept("-");
    if (peek().kind != Token::Kind::Number) fail(peek().loc, std::string("expected ") + what);
    Token t = next();
    std::int64_t v = 0;
    if (!parse_int(t.text, &v)) fail(t.loc, "malformed integer '" + t.text + "'");
    return neg ? -v : v;
  }
  static bool parse_int(const std::string& s, std::int64_t* out) {
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

  // ---- module level
  void top_level() {
    const Token& t = peek();
    if (t.kind != Token::Kind::Ident) fail(t.loc, "expected a directive, found '" + t.text + "'");
    std::string d = t.text;
    if (d == ".version") {
      next();
      m_.version = next().text;
    } else if (d == ".target") {
      next();
      m_.target = ident("a target");
      while (accept(",")) ident("a target");
    } else if (d == ".address_size") {
      next();
      m_.address_size = int(integer("an address size"));
    } else if (d == ".visible" || d == ".weak" || d == ".extern") {
      next();  // linkage: applies to what follows
      if (peek().text == ".shared" || peek().text == ".global" || peek().text == ".const") {
        m_.globals.push_back(var_decl());
        if (accept("=")) initializer(m_.globals.back());
        expect(";", "after a variable declaration");
      }
    } else if (d == ".entry" || d == ".func") {
      function();
    } else if (d == ".global" || d == ".shared" || d == ".const") {
      m_.globals.push_back(var_decl());
      if (accept("=")) initializer(m_.globals.back());
      expect(";", "after a variable declaration");
    } else if (d == ".file") {
      file_directive();
    } else if (d == ".section") {
      section();
    } else if (d == ".loc") {
      skip_line(next().loc.line);
    } else if (d == ".pragma") {
      skip_statement();
    } else {
      fail(t.loc, "unknown directive '" + d + "'");
    }
  }

  void skip_initializer() {
    int depth = 0;
    while (!at_end()) {
      if (is("{")) ++depth;
      if (is("}")) --depth;
      if (depth == 0 && is(";")) return;
      next();
    }
  }

  static std::size_t type_bytes(const std::string& type) {
    if (type.size() < 3) return 0;
    std::string bits = type.substr(type[1] == 'b' && type[2] == 'f' ? 3 : 2);  // .bf16 / .f32 / .u8 ...
    if (bits == "8") return 1;
    if (bits == "16") return 2;
    if (bits == "32") return 4;
    if (bits == "64") return 8;
    return 0;
  }

  // "= 0f3F800000" or "= {1, 2, {3, 4}}": the bytes of every element, in order.
  // Anything else (an address, generic(x), a decimal float) is kept as an
  // error for the lowering to report if a kernel reads the variable.
  void initializer(VarDecl& v) {
    std::size_t start = p_;
    std::size_t width = type_bytes(v.type);
    std::vector<std::uint8_t> bytes;
    bool ok = width != 0;
    std::function<void()> element = [&]() {
      if (!ok) return;
      if (accept("{")) {
        if (!is("}")) {
          element();
          while (ok && accept(",")) element();
        }
        if (ok && !accept("}")) ok = false;
        return;
      }
      bool neg = accept("-");
      if (peek().kind != Token::Kind::Number) {
        ok = false;
        return;
      }
      std::string x = next().text;
      std::uint64_t value = 0;
      std::size_t w = width;
      try {
        if (x.size() == 10 && x[0] == '0' && (x[1] == 'f' || x[1] == 'F')) {
          value = std::stoull(x.substr(2), nullptr, 16) ^ (neg ? 0x80000000ull : 0);
          w = 4;
        } else if (x.size() == 18 && x[0] == '0' && (x[1] == 'd' || x[1] == 'D')) {
          value = std::stoull(x.substr(2), nullptr, 16) ^ (neg ? 0x8000000000000000ull : 0);
          w = 8;
        } else {
          std::int64_t iv = 0;
          if (!parse_int(x, &iv)) {
            ok = false;
            return;
          }
          value = std::uint64_t(neg ? -iv : iv);
        }
      } catch (...) {
        ok = false;
        return;
      }
      if (w != width) {  // a float constant in an array of another width
        ok = false;
        return;
      }
      for (std::size_t b = 0; b < width; ++b) bytes.push_back(std::uint8_t(value >> (8 * b)));
    };
    element();
    if (ok && !is(";")) ok = false;
    if (!ok) {
      p_ = start;
      skip_initializer();
      v.init_error = "the initializer of '" + v.name + "' is not a list of numbers (addresses and expressions are not supported)";
      return;
    }
    if (v.unsized) {
      v.unsized = false;
      v.elements = bytes.size() / width;
    }
    if (bytes.size() > v.elements * width) fail(v.loc, "the initializer of '" + v.name + "' has more elements than the array");
    bytes.resize(v.elements * width, 0);  // the rest of the array is zero
    v.has_init = true;
    v.init = std::move(bytes);
  }

  void skip_statement() {
    while (!at_end() && !is(";")) next();
    expect(";", "to end the directive");
  }

  // ---- debug information (nvcc -lineinfo / -G). These directives end at the
  // end of their line, not at a ';'.
  void skip_line(std::uint32_t line) {
    while (!at_end() && peek().loc.line == line) next();
  }

  // .file N "path"[, timestamp, size]
  void file_directive() {
    const SourceLoc loc = next().loc;
    if (peek().kind != Token::Kind::Number || peek().loc.line != loc.line)
      fail(loc, "'.file' needs a file number and a quoted file name (.file 1 \"k.cu\")");
    const int n = int(integer("a file number"));
    if (peek().kind != Token::Kind::String || peek().loc.line != loc.line)
      fail(peek().loc.line == loc.line ? peek().loc : loc, "expected a quoted file name after '.file " + std::to_string(n) + "'");
    const std::string quoted = next().text;
    m_.files[n] = quoted.substr(1, quoted.size() - 2);
    skip_line(loc.line);
  }

  // .section .debug_xxx { ... }: DWARF data, not needed here.
  void section() {
    next();
    const std::string name = ident("a section name");
    const SourceLoc open = peek().loc;
    expect("{", ("to open the section '" + name + "'").c_str());
    for (int depth = 1; depth > 0;) {
      if (at_end()) fail(open, "unbalanced braces: the section '" + name + "' opened here is never closed");
      if (accept("{"))
        ++depth;
      else if (accept("}"))
        --depth;
      else
        next();
    }
  }

  // .loc FILE LINE COLUMN[, function_name LABEL[, inlined_at FILE LINE COLUMN]]:
  // the CUDA source position of the instructions that follow.
  void debug_loc() {
    const SourceLoc loc = next().loc;
    auto number = [&](const char* what) {
      if (peek().kind != Token::Kind::Number || peek().loc.line != loc.line)
        fail(peek().loc.line == loc.line ? peek().loc : loc,
             std::string("'.loc' needs ") + what + " (.loc FILE LINE COLUMN)");
      return integer(what);
    };
    debug_file_ = int(number("a file number"));
    debug_line_ = std::uint32_t(number("a line number"));
    debug_column_ = peek().kind == Token::Kind::Number && peek().loc.line == loc.line ? std::uint32_t(integer("a column")) : 0;
    skip_line(loc.line);
  }

  // The CUDA position of every instruction under a .loc, now that the .file
  // directives (nvcc puts them at the end) are known: "k.cu:31".
  void resolve_sources() {
    std::function<void(ptx::Operand&, const std::string&)> mark = [&](ptx::Operand& o, const std::string& src) {
      o.loc.source = src;
      for (ptx::Operand& e : o.elements) mark(e, src);
    };
    for (Kernel& k : m_.kernels)
      for (Statement& st : k.body) {
        Instruction& in = st.instr;
        if (st.kind != Statement::Kind::Instruction || in.debug_file < 0 || in.debug_line == 0) continue;
        std::string file = "file " + std::to_string(in.debug_file);
        if (auto it = m_.files.find(in.debug_file); it != m_.files.end()) {
          file = it->second;
          std::size_t slash = file.find_last_of("/\\");
          if (slash != std::string::npos && slash + 1 < file.size()) file = file.substr(slash + 1);
        }
        const std::string src = file + ":" + std::to_string(in.debug_line);
        st.loc.source = src;
        in.loc.source = src;
        for (ptx::Operand& o : in.operands) mark(o, src);
      }
  }

  VarDecl var_decl() {
    VarDecl v;
    v.loc = peek().loc;
    v.space = ident("a state space");
    for (;;) {
      std::string w = peek().text;
      if (w == ".align") {
        next();
        integer("an alignment");
      } else if (peek().kind == Token::Kind::Ident && w.size() > 1 && w[0] == '.' && w != ".v2" && w != ".v4") {
        v.type = next().text;
        if (peek().kind == Token::Kind::Ident && peek().text[0] != '.') break;
      } else if (w == ".v2" || w == ".v4") {
        next();
      } else {
        break;
      }
    }
    v.name = ident("a variable name");
    if (accept("[")) {
      if (accept("]")) {
        v.unsized = true;
        v.elements = 0;
      } else {
        v.elements = std::uint64_t(integer("an array size"));
        expect("]", "after an array size");
      }
      while (!v.unsized && accept("[")) {  // x[2][3]: six elements
        v.elements *= std::uint64_t(integer("an array size"));
        expect("]", "after an array size");
      }
    }
    return v;
  }

  Param param() {
    Param p;
    p.loc = peek().loc;
    std::string sp = ident("'.param'");
    if (sp != ".param" && sp != ".reg") fail(p.loc, "expected '.param', found '" + sp + "'");
    while (peek().kind == Token::Kind::Ident && peek().text[0] == '.') {
      std::string w = next().text;
      if (w == ".ptr") {
        p.pointer_hint = true;
      } else if (w == ".align") {
        integer("an alignment");
      } else if (w == ".global" || w == ".shared" || w == ".const" || w == ".local") {
      } else {
        p.type = w;
      }
    }
    p.name = ident("a parameter name");
    if (accept("[")) {  // .param .align 8 .b8 p[16]: a by-value struct
      integer("an array size");
      expect("]", "after an array size");
      p.type = ".struct";
    }
    if (p.type == ".u64" || p.type == ".b64" || p.type == ".s64") p.pointer_hint = true;
    return p;
  }

  void function() {
    debug_file_ = -1;  // a .loc holds until the next one, within one function
    Kernel k;
    k.loc = peek().loc;
    k.is_entry = next().text == ".entry";
    if (!k.is_entry && is("(")) {  // return parameters
      next();
      if (!is(")")) {
        k.returns.push_back(param());
        while (accept(",")) k.returns.push_back(param());
      }
      expect(")", "after the return parameters");
    }
    k.name = ident("a function name");
    if (accept("(")) {
      if (!is(")")) {
        k.params.push_back(param());
        while (accept(",")) k.params.push_back(param());
      }
      expect(")", "after the parameter list");
    }
    // Performance directives (.maxntid 128, 1, 1 / .reqntid / .minnctapersm / .noreturn ...).
    while (peek().kind == Token::Kind::Ident && peek().text[0] == '.') {
      next();
      while (peek().kind == Token::Kind::Number) {
        next();
        accept(",");
      }
    }
    if (accept(";")) {  // a declaration only
      return;
    }
    SourceLoc open = peek().loc;
    expect("{", "to open the function body");
    body(k, open);
    m_.kernels.push_back(std::move(k));
  }

  void body(Kernel& k, const SourceLoc& open) {
    int depth = 1;
    while (depth > 0) {
      if (at_end()) fail(open, "unbalanced braces: the body of '" + k.name + "' opened here is never closed");
      if (accept("{")) {
        ++depth;
        continue;
      }
      if (accept("}")) {
        --depth;
        continue;
      }
      const Token& t = peek();
      if (t.kind == Token::Kind::Ident && t.text == ".reg") {
        reg_decl(k);
      } else if (t.kind == Token::Kind::Ident && (t.text == ".shared" || t.text == ".local" || t.text == ".global" || t.text == ".const")) {
        k.vars.push_back(var_decl());
        expect(";", "after a variable declaration");
      } else if (t.kind == Token::Kind::Ident && t.text == ".param") {
        k.vars.push_back(var_decl());  // the argument and return slots of a call sequence
        expect(";", "after a .param declaration");
      } else if (t.kind == Token::Kind::Ident && t.text == ".loc") {
        debug_loc();
      } else if (t.kind == Token::Kind::Ident && (t.text == ".pragma" || t.text == ".callprototype")) {
        skip_statement();  // a prototype only serves indirect calls, which the lowering rejects
      } else if (t.kind == Token::Kind::Ident && peek(1).kind == Token::Kind::Punct && peek(1).text == ":" ) {
        Statement s;
        s.kind = Statement::Kind::Label;
        s.loc = t.loc;
        s.label = next().text;
        next();
        k.body.push_back(s);
      } else {
        k.body.push_back(instruction());
      }
    }
  }

  void reg_decl(Kernel& k) {
    SourceLoc loc = next().loc;
    std::string type;
    while (peek().kind == Token::Kind::Ident && peek().text[0] == '.') type = next().text;
    if (type.empty()) fail(loc, "a .reg declaration needs a type");
    do {
      RegDecl r;
      r.loc = peek().loc;
      r.type = type;
      r.name = ident("a register name");
      if (accept("<")) {
        r.count = int(integer("a register count"));
        expect(">", "after a register count");
      }
      k.regs.push_back(r);
    } while (accept(","));
    expect(";", "after a register declaration");
  }

  Statement instruction() {
    Statement s;
    s.loc = peek().loc;
    Instruction& in = s.instr;
    in.loc = peek().loc;
    if (accept("@")) {
      in.guard_negated = accept("!");
      in.guard = ident("a guard predicate");
    }
    if (peek().kind != Token::Kind::Ident)
      fail(peek().loc, at_end() ? std::string("unexpected end of file: expected an instruction")
                                : "expected an instruction, found '" + peek().text + "'");
    in.loc = peek().loc;
    in.debug_file = debug_file_;
    in.debug_line = debug_line_;
    in.debug_column = debug_column_;
    in.opcode = next().text;
    if (!is(";")) {
      in.operands.push_back(operand());
      while (accept(",")) in.operands.push_back(operand());
    }
    if (at_end()) fail(in.loc, "unexpected end of file: '" + in.opcode + "' is not terminated by ';'");
    expect(";", ("after '" + in.opcode + "'").c_str());
    return s;
  }

  Operand operand() {
    Operand o;
    o.loc = peek().loc;
    if (accept("[")) {
      o.kind = Operand::Kind::Address;
      if (peek().kind == Token::Kind::Ident) o.name = next().text;
      else o.value = integer("an address");
      if (accept("+")) o.value += integer("an address offset");
      else if (is("-")) o.value += integer("an address offset");
      while (accept(",")) o.elements.push_back(operand());  // [tensormap, {x, y}]: TMA coordinates
      expect("]", "to close the address");
      return o;
    }
    // {a, b, ...} vector operands and (a, b, ...) call argument lists.
    for (auto [open, close, what] : {std::tuple{"{", "}", "to close the vector operand"},
                                     std::tuple{"(", ")", "to close the argument list"}}) {
      if (!accept(open)) continue;
      o.kind = Operand::Kind::Vector;
      if (!is(close)) {
        o.elements.push_back(operand());
        while (accept(",")) o.elements.push_back(operand());
      }
      expect(close, what);
      return o;
    }
    if (accept("!")) {  // !%p as an operand (e.g. selp, vote): negated predicate
      o.kind = Operand::Kind::Name;
      o.name = "!" + ident("a predicate");
      return o;
    }
    if (peek().kind == Token::Kind::Ident) {
      o.name = next().text;
      o.kind = o.name == "_" ? Operand::Kind::Sink : Operand::Kind::Name;
      if (accept("|")) o.pred_out = ident("a predicate after '|'");
      return o;
    }
    bool neg = accept("-");
    if (peek().kind != Token::Kind::Number)
      fail(peek().loc, at_end() ? std::string("unexpected end of file in an operand") : "expected an operand, found '" + peek().text + "'");
    Token t = next();
    const std::string& x = t.text;
    auto hex_bits = [&](std::size_t digits, Operand::Kind kind) {
      if (x.size() != digits + 2) fail(t.loc, "malformed float constant '" + x + "'");
      try {
        o.value = std::int64_t(std::stoull(x.substr(2), nullptr, 16));
      } catch (...) {
        fail(t.loc, "malformed float constant '" + x + "'");
      }
      o.kind = kind;
    };
    if (x.size() > 2 && x[0] == '0' && (x[1] == 'f' || x[1] == 'F')) {
      hex_bits(8, Operand::Kind::F32Bits);
      if (neg) o.value ^= 0x80000000;
    } else if (x.size() > 2 && x[0] == '0' && (x[1] == 'd' || x[1] == 'D')) {
      hex_bits(16, Operand::Kind::F64Bits);
      if (neg) o.value = std::int64_t(std::uint64_t(o.value) ^ 0x8000000000000000ull);
    } else if (x.find('.') != std::string::npos) {
      fail(t.loc, "decimal float constants are not supported ('" + x + "'); nvcc writes floats as 0fXXXXXXXX");
    } else {
      o.kind = Operand::Kind::Int;
      if (!parse_int(x, &o.value)) fail(t.loc, "malformed integer '" + x + "'");
      if (neg) o.value = -o.value;
    }
    return o;
  }

  std::vector<Token> t_;
  std::size_t p_ = 0;
  Module m_;
  int debug_file_ = -1;  // the .loc in force
  std::uint32_t debug_line_ = 0, debug_column_ = 0;
};

}  // namespace

ParseResult parse_ptx(const std::string& text, const std::string& file) {
  ParseResult r;
  try {
    Lexer lx(text, file);
    Parser ps(lx.run(), file);
    r.module = ps.run();
  } catch (const Failure& f) {
    r.error = f.error;
  }
  return r;
}

ParseResult parse_ptx_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ParseResult r;
    r.error = Error{SourceLoc{path, 0, 0}, "cannot read the file"};
    return r;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_ptx(ss.str(), path);
}

}  // namespace tileverify::ptx
