// Spec files as JSON text: the strict parse, with line:column for syntax
// errors, duplicate keys and a depth limit, and the reading deadline.
#include "reader.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace tileverify::spec_detail {

void check_deadline(const Deadline& deadline, const std::string& stage) {
  if (deadline && std::chrono::steady_clock::now() > *deadline) throw SpecTimeout{stage};
}

namespace {

// ------------------------------------------------------------ JSON syntax

// Where byte `at` of `text` is, as "LINE:COLUMN" (both from 1; columns in
// bytes, as compilers count them).
std::string line_column(const std::string& text, std::size_t at) {
  at = std::min(at, text.size());
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < at; ++i)
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  return std::to_string(line) + ":" + std::to_string(at - line_start + 1);
}

// A spec nests 4 deep ("params", a parameter, its "shape"); JSON nested
// thousands deep is no spec, and the JSON library's printing and comparing
// recurse: a million '[' would overflow the stack. So depth is counted first,
// outside strings, and the text refused beyond this.
constexpr int kMaxDepth = 64;

// nlohmann's parser decides what is valid JSON; when it refuses a text, this
// checker walks it again to say where and why in words a person understands
// (its own messages read "syntax error while parsing object separator -
// unexpected number literal"). It follows RFC 8259. Where the two disagree,
// the caller falls back on nlohmann's position and a plain "not valid JSON".
class JsonSyntax {
 public:
  struct Problem {
    std::size_t at;
    std::string what;
  };

  explicit JsonSyntax(const std::string& text) : s_(text) {}

  std::optional<Problem> first_problem() {
    try {
      space();
      value();
      space();
      if (i_ < s_.size())
        stop(i_, "more text after the end of the JSON object (a spec is one object; an extra '}' or a second object?)");
    } catch (const Problem& p) {
      return p;
    }
    return std::nullopt;
  }

 private:
  [[noreturn]] void stop(std::size_t at, const std::string& what) { throw Problem{at, what}; }

  bool at_end() const { return i_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[i_]; }

  void space() {
    while (!at_end() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }

  // The word starting at `at` (letters, digits, '_', '.', '+', '-'), for
  // quoting what was found where a value should be.
  std::string word_at(std::size_t at) const {
    std::size_t e = at;
    while (e < s_.size() && e - at < 20 &&
           (std::isalnum(static_cast<unsigned char>(s_[e])) || s_[e] == '_' || s_[e] == '.' || s_[e] == '+' ||
            s_[e] == '-'))
      ++e;
    return e == at ? std::string(1, s_[at]) : s_.substr(at, e - at);
  }

  std::string char_at(std::size_t at) const {
    unsigned char c = static_cast<unsigned char>(s_[at]);
    if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "0x%02x", c);
      return std::string("the byte ") + buf;
    }
    return std::string("'") + char(c) + "'";
  }

  // A ',' right before the '}' or ']' at `at`: the common trailing comma.
  std::optional<std::size_t> comma_before(std::size_t at) const {
    std::size_t j = at;
    while (j > 0 && std::isspace(static_cast<unsigned char>(s_[j - 1]))) --j;
    if (j > 0 && s_[j - 1] == ',') return j - 1;
    return std::nullopt;
  }

  // The 4 hex digits at `at` as a number; a problem if they are not there
  // (or 0 with `quiet`, for a look ahead).
  unsigned hex4(std::size_t at, bool quiet = false) {
    unsigned v = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      char h = at + k < s_.size() ? s_[at + k] : '\0';
      if (!std::isxdigit(static_cast<unsigned char>(h))) {
        if (quiet) return 0;
        stop(at - 2, "'\\u' must be followed by 4 hex digits");
      }
      v = v * 16 + unsigned(std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : std::tolower(h) - 'a' + 10);
    }
    return v;
  }

  // The length of the UTF-8 sequence at `at`, or 0 if it is not one (RFC
  // 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
  std::size_t utf8_length(std::size_t at) const {
    auto byte = [&](std::size_t k) { return at + k < s_.size() ? static_cast<unsigned char>(s_[at + k]) : 0u; };
    unsigned c = byte(0);
    std::size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (n == 0) return 0;
    unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
    unsigned hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
    if (byte(1) < lo || byte(1) > hi) return 0;
    for (std::size_t k = 2; k < n; ++k)
      if (byte(k) < 0x80 || byte(k) > 0xbf) return 0;
    return n;
  }

  void value() {
    // parse_json refuses deeper texts before; this keeps the recursion
    // bounded should it ever be called on one.
    if (++depth_ > kMaxDepth) stop(i_, "lists and objects nested too deep");
    if (at_end()) stop(i_, "the text ends where a value was expected (a value after ':' or ',' is missing)");
    char c = peek();
    if (c == '{') object();
    else if (c == '[') array();
    else if (c == '"') string();
    else if (c == '-' || (c >= '0' && c <= '9')) number();
    else if (std::isalpha(static_cast<unsigned char>(c))) literal();
    else if (c == '\'') stop(i_, "strings take double quotes (\"), not single quotes");
    else if (c == '/') stop(i_, "JSON has no comments (use a \"description\" field for notes)");
    else if ((c == '}' || c == ']') && comma_before(i_))
      stop(*comma_before(i_), std::string("a ',' right before '") + c + "': JSON allows no trailing comma");
    else stop(i_, "unexpected " + char_at(i_) + " where a value was expected");
    --depth_;
  }

  void literal() {
    std::size_t start = i_;
    std::string w = word_at(start);
    for (const char* ok : {"true", "false", "null"})
      if (w == ok) {
        i_ += w.size();
        return;
      }
    std::string lower = w;
    for (char& ch : lower) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    if (lower == "true" || lower == "false" || lower == "null")
      stop(start, "JSON writes true, false and null in lower case, not '" + w + "'");
    if (lower == "nan" || lower == "inf" || lower == "infinity")
      stop(start, "'" + w + "' is not a JSON number (JSON has no NaN or infinity)");
    stop(start, "'" + w + "' is not a JSON value (a string needs double quotes: \"" + w + "\")");
  }

  void number() {
    std::size_t start = i_;
    if (peek() == '-') ++i_;
    if (!std::isdigit(static_cast<unsigned char>(peek())))
      stop(start, "'" + word_at(start) + "': a '-' must be followed by digits");
    if (peek() == '0' && i_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_ + 1])))
      stop(start, "'" + word_at(start) + "': a JSON number does not start with 0 (write it without leading zeros)");
    while (std::isdigit(static_cast<unsigned char>(peek()))) ++i_;
    if (peek() == '.') {
      ++i_;
      if (!std::isdigit(static_cast<unsigned char>(peek()))) stop(start, "'" + word_at(start) + "': digits must follow '.'");
      while (std::isdigit(static_cast<unsigned char>(peek()))) ++i_;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++i_;
      if (peek() == '+' || peek() == '-') ++i_;
      if (!std::isdigit(static_cast<unsigned char>(peek())))
        stop(start, "'" + word_at(start) + "': digits must follow the exponent 'e'");
      while (std::isdigit(static_cast<unsigned char>(peek()))) ++i_;
    }
    // nlohmann refuses a number no double holds (1e999).
    std::string text = s_.substr(start, i_ - start);
    errno = 0;
    double d = std::strtod(text.c_str(), nullptr);
    if (!std::isfinite(d) || (errno == ERANGE && d != 0))
      stop(start, "the number " + text + " is too large for any field of a spec");
  }

  void string() {
    std::size_t start = i_++;
    while (true) {
      if (at_end()) stop(start, "a string that is never closed (its '\"' has no closing '\"')");
      unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return;
      }
      if (c < 0x20)
        stop(i_, c == '\n' ? "a line break inside a string (a closing '\"' missing?)"
                           : "a control character inside a string (write it escaped, e.g. \\t)");
      if (c == '\\') {
        char e = i_ + 1 < s_.size() ? s_[i_ + 1] : '\0';
        if (e == 'u') {
          unsigned code = hex4(i_ + 2);
          if (code >= 0xdc00 && code <= 0xdfff)
            stop(i_, "'\\u" + s_.substr(i_ + 2, 4) + "' is half of a UTF-16 pair without its first half");
          if (code >= 0xd800 && code <= 0xdbff) {
            // The first half of a pair: the second must follow at once.
            unsigned low = i_ + 7 < s_.size() && s_[i_ + 6] == '\\' && s_[i_ + 7] == 'u' ? hex4(i_ + 8, true) : 0;
            if (low < 0xdc00 || low > 0xdfff)
              stop(i_, "'\\u" + s_.substr(i_ + 2, 4) + "' is half of a UTF-16 pair without its second half");
            i_ += 6;
          }
          i_ += 6;
          continue;
        }
        if (!std::strchr("\"\\/bfnrt", e) || e == '\0')
          stop(i_, std::string("'\\") + e + "' is not a JSON escape (write a backslash as \\\\)");
        i_ += 2;
        continue;
      }
      if (c >= 0x80) {
        std::size_t n = utf8_length(i_);
        if (n == 0) stop(i_, "a string holds bytes that are not UTF-8 (save the file as UTF-8)");
        i_ += n;
        continue;
      }
      ++i_;
    }
  }

  void object() {
    ++i_;
    space();
    if (peek() == '}') {
      ++i_;
      return;
    }
    while (true) {
      space();
      if (at_end()) stop(i_, "the text ends inside an object (a '}' is missing)");
      char c = peek();
      if (c == '}' && comma_before(i_)) stop(*comma_before(i_), "a ',' right before '}': JSON allows no trailing comma");
      if (c == '\'') stop(i_, "keys take double quotes (\"), not single quotes");
      if (c == '/') stop(i_, "JSON has no comments (use a \"description\" field for notes)");
      if (c != '"') {
        if (std::isalpha(static_cast<unsigned char>(c)))
          stop(i_, "a key must be in double quotes: \"" + word_at(i_) + "\", not " + word_at(i_));
        stop(i_, "unexpected " + char_at(i_) + " where a key in double quotes was expected");
      }
      std::size_t key_at = i_;
      string();
      std::string key = s_.substr(key_at, i_ - key_at);
      space();
      if (at_end()) stop(i_, "the text ends after the key " + key + " (a ':' and a value are missing)");
      if (peek() != ':') stop(i_, "expected ':' after the key " + key + ", found " + char_at(i_));
      ++i_;
      space();
      value();
      space();
      if (at_end()) stop(i_, "the text ends inside an object (a '}' is missing)");
      if (peek() == ',') {
        ++i_;
        continue;
      }
      if (peek() == '}') {
        ++i_;
        return;
      }
      stop(i_, "expected ',' or '}' after the value of " + key + ", found " + char_at(i_) + " (a missing comma?)");
    }
  }

  void array() {
    ++i_;
    space();
    if (peek() == ']') {
      ++i_;
      return;
    }
    while (true) {
      space();
      if (at_end()) stop(i_, "the text ends inside a list (a ']' is missing)");
      value();
      space();
      if (at_end()) stop(i_, "the text ends inside a list (a ']' is missing)");
      if (peek() == ',') {
        ++i_;
        continue;
      }
      if (peek() == ']') {
        ++i_;
        return;
      }
      stop(i_, "expected ',' or ']' after a list element, found " + char_at(i_) + " (a missing comma?)");
    }
  }

  const std::string& s_;
  std::size_t i_ = 0;
  int depth_ = 0;
};


std::optional<std::size_t> too_deep(const std::string& text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::nullopt;
}


// The first key that appears twice in one object, found by a pass of events
// over the text. (nlohmann's parser callback would do it in the parse, but
// it scans the enclosing array at the end of every object, which made a
// "suite" of 10^5 entries take 27 s: issue 31.) Reads the deadline every
// few thousand events.
class DuplicateKeys : public nlohmann::json_sax<json> {
 public:
  explicit DuplicateKeys(const Deadline& deadline) : deadline_(deadline) {}
  std::string duplicate;
  bool null() override { return tick(); }
  bool boolean(bool) override { return tick(); }
  bool number_integer(number_integer_t) override { return tick(); }
  bool number_unsigned(number_unsigned_t) override { return tick(); }
  bool number_float(number_float_t, const string_t&) override { return tick(); }
  bool string(string_t&) override { return tick(); }
  bool binary(binary_t&) override { return tick(); }
  bool start_object(std::size_t) override {
    keys_.emplace_back();
    return tick();
  }
  bool key(string_t& k) override {
    if (!keys_.empty() && !keys_.back().insert(k).second && duplicate.empty()) duplicate = k;
    return tick();
  }
  bool end_object() override {
    if (!keys_.empty()) keys_.pop_back();
    return tick();
  }
  bool start_array(std::size_t) override { return tick(); }
  bool end_array() override { return tick(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  bool tick() {
    if (++events_ % 4096 == 0) check_deadline(deadline_, "parsing its JSON");
    return true;
  }
  const Deadline& deadline_;
  std::vector<std::set<std::string>> keys_;  // the keys of each open object
  std::uint64_t events_ = 0;
};

}  // namespace

// The text as JSON. Duplicate keys are refused: nlohmann keeps the last one
// silently, and a spec with two "shape"s is a mistake whichever one wins.
json parse_json(const std::string& text, const Deadline& deadline) {
  if (auto at = too_deep(text))
    fail(line_column(text, *at) + ": lists and objects nested more than " + std::to_string(kMaxDepth) +
         " deep; a spec nests 4 deep");
  json j;
  bool refused = false;
  std::size_t byte = 0;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    refused = true;
    byte = e.byte;
  } catch (const json::exception&) {
    // out_of_range 406: a number no double holds; the checker finds it.
    refused = true;
    byte = 0;
  }
  if (refused) {
    if (auto p = JsonSyntax(text).first_problem())
      fail(line_column(text, p->at) + ": not valid JSON: " + p->what);
    fail(line_column(text, byte ? byte - 1 : 0) + ": not valid JSON");
  }
  check_deadline(deadline, "parsing its JSON");
  DuplicateKeys dup(deadline);
  json::sax_parse(text, &dup);
  if (!dup.duplicate.empty())
    fail("the key " + json_quoted(dup.duplicate) + " appears twice in one object (one would silently replace the other)");
  return j;
}

}  // namespace tileverify::spec_detail
