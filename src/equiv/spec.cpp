// Spec files: reading and checking the JSON that names a check's kernels,
// launch and parameters (docs/cli.md, "Spec files").
//
// A spec comes from people and from scripts, and tileverify runs in test
// suites and CI jobs, where a crash or a silent wrong answer is worse than a
// refusal. So every field is checked for its type and range before it is
// used, and every message names the field, the value found and what is
// allowed. No exception text of the JSON library reaches the user: syntax
// errors are described by our own small checker (JsonSyntax below), with
// file:line:column, and every value is inspected before it is converted.
#include "tileverify/equiv.hpp"

#include "../util/demangle.hpp"
#include "kernel_names.hpp"
#include "sizes.hpp"
#include "tensor_map.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>

namespace tileverify {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct SpecError {
  std::string message;
};

[[noreturn]] void fail(const std::string& message) { throw SpecError{message}; }

// ------------------------------------------------------------ showing values

// A string as a JSON literal: quotes, escapes, and bytes that are not UTF-8
// replaced (a message must itself be printable, and valid in a JSON report).
std::string json_quoted(const std::string& s) {
  // A key or name of a megabyte would make a message of a megabyte.
  std::string q = json(s.size() > 80 ? s.substr(0, 60) : s).dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 80 ? q.insert(q.size() - 1, "...") : q;
}

// A value as the spec wrote it (compact JSON), cut short when long: a
// message quotes a value, not a 10 000-element list.
std::string shown(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

// "ref.block" -> "\"ref.block\"": fields are named as dotted paths in quotes.
std::string field(const std::string& path) { return "\"" + path + "\""; }

std::string what_kind(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "a list";
    case json::value_t::object: return "an object";
    default: return "a number";
  }
}

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

// Reading a spec (a 64 MiB one takes seconds) counts against the check's
// deadline (docs/cli.md, --timeout): past it, reading stops with the stage
// it was in, and the result is a time-out, not an error of the spec.
using Deadline = std::optional<std::chrono::steady_clock::time_point>;
struct SpecTimeout {
  std::string stage;  // "parsing its JSON"
};
void check_deadline(const Deadline& deadline, const std::string& stage) {
  if (deadline && std::chrono::steady_clock::now() > *deadline) throw SpecTimeout{stage};
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

// The text as JSON. Duplicate keys are refused: nlohmann keeps the last one
// silently, and a spec with two "shape"s is a mistake whichever one wins.
json parse_json(const std::string& text, const Deadline& deadline = std::nullopt) {
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

// ------------------------------------------------------------ keys

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// A key the spec format does not know is an error, not ignored: "shpae"
// ignored would leave the tensor without a shape, or worse, a field with its
// default value that the author meant to set.
void only_keys(const json& object, const std::string& where, std::initializer_list<const char*> allowed) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    const std::string& key = it.key();
    if (std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; })) continue;
    std::string list, nearest;
    std::size_t best = 3;  // suggest only close matches (a typo, not another word)
    for (const char* a : allowed) {
      list += std::string(list.empty() ? "" : ", ") + "\"" + a + "\"";
      std::size_t d = edit_distance(key, a);
      if (d < best) {
        best = d;
        nearest = a;
      }
    }
    fail(where + " has the unknown key " + json_quoted(key) + (nearest.empty() ? "" : " (did you mean \"" + nearest + "\"?)") +
         "; its keys are " + list);
  }
}

// ------------------------------------------------------------ integers

// Why v is not a non-negative integer, or "" with the value in *out.
// nlohmann keeps integers up to 2^64 - 1 exact and turns anything else (a
// fraction, an exponent, a larger integer) into a double; a double is never
// converted to an integer here (1e300 to uint64 is undefined behaviour, and
// 512.5 would be silently cut to 512).
std::string not_uint(const json& v, std::uint64_t* out) {
  if (v.is_number_unsigned()) {
    *out = v.get<std::uint64_t>();
    return "";
  }
  if (v.is_number_integer()) return "negative";
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::fabs(d) >= 18446744073709551616.0) return "far too large";
    if (d == std::floor(d)) return "not written as an integer (no decimal point or exponent)";
    return "not an integer";
  }
  if (v.is_string()) return "a string (write the number without quotes)";
  return what_kind(v) + ", not an integer";
}

// An integer from lo to hi; the message names the field, the value and the range.
std::uint64_t uint_in(const json& v, const std::string& name, std::uint64_t lo, std::uint64_t hi,
                      const std::string& meaning) {
  std::uint64_t u = 0;
  std::string why = not_uint(v, &u);
  if (why.empty() && (u < lo || u > hi)) why = u < lo ? "too small" : "too large";
  if (!why.empty())
    fail(field(name) + " is " + shown(v) + ", " + why + ": it must be an integer from " + std::to_string(lo) + " to " +
         std::to_string(hi) + " (" + meaning + ")");
  return u;
}

std::string text_of(const json& v, const std::string& name, const std::string& meaning, bool may_be_empty = false) {
  if (!v.is_string()) fail(field(name) + " is " + shown(v) + ", " + what_kind(v) + ": it must be a string (" + meaning + ")");
  std::string s = v.get<std::string>();
  if (s.empty() && !may_be_empty) fail(field(name) + " is empty: it must name " + meaning);
  return s;
}

// ------------------------------------------------------------ launch shapes

// CUDA's limits on launches, from the CUDA C++ Programming Guide, "Compute
// Capabilities", table "Technical Specifications per Compute Capability"
// (the same for every compute capability since 3.0, sm_80 and sm_90
// included): a block is at most 1024 x 1024 x 64 threads and 1024 threads
// in all; a grid at most (2^31 - 1) x 65535 x 65535 blocks. A launch outside
// them fails on every GPU, so a spec outside them is a mistake, and limits
// this small also keep every count in 64 bits.
constexpr std::uint64_t kBlockMax[3] = {1024, 1024, 64};
constexpr std::uint64_t kBlockThreadsMax = 1024;
constexpr std::uint64_t kGridMax[3] = {2147483647, 65535, 65535};
// A CTA index is a grid coordinate: below the grid's largest x.
constexpr std::uint64_t kCtaMax = 2147483646;

enum class DimKind { Block, Grid, Cta };

std::string dim3_text(const Dim3& d) {
  return "[" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + "]";
}

Dim3 dim3_of(const json& j, const std::string& name, DimKind kind) {
  const char* like = kind == DimKind::Block ? "[128, 1, 1]" : kind == DimKind::Grid ? "[4, 1, 1]" : "[0, 0, 0]";
  const char* rule = kind == DimKind::Block
                         ? "each dimension of a block must be positive: x and y 1 to 1024, z 1 to 64, and 1024 "
                           "threads at most in all (CUDA's limits)"
                     : kind == DimKind::Grid
                         ? "each dimension of a grid must be positive: x 1 to 2147483647, y and z 1 to 65535 (CUDA's "
                           "limits)"
                         : "a CTA index is 1 to 3 non-negative integers, each below the grid's dimension";
  if (!j.is_array() || j.empty() || j.size() > 3)
    fail(field(name) + " is " + shown(j) + ": it must be a list of 1 to 3 " +
         (kind == DimKind::Cta ? "non-negative" : "positive") + " integers, like " + like);
  std::uint32_t v[3] = {kind == DimKind::Cta ? 0u : 1u, kind == DimKind::Cta ? 0u : 1u, kind == DimKind::Cta ? 0u : 1u};
  static const char* axis[3] = {"x", "y", "z"};
  for (std::size_t i = 0; i < j.size(); ++i) {
    std::uint64_t u = 0;
    std::string why = not_uint(j[i], &u);
    std::uint64_t lo = kind == DimKind::Cta ? 0 : 1;
    std::uint64_t hi = kind == DimKind::Block ? kBlockMax[i] : kind == DimKind::Grid ? kGridMax[i] : kCtaMax;
    if (why.empty() && u < lo) why = "0";
    else if (why.empty() && u > hi) why = "more than " + std::to_string(hi);
    if (!why.empty())
      fail(field(name) + " " + shown(j) + ": " + axis[i] + " is " + shown(j[i]) + (why == "0" ? "" : ", " + why) + "; " +
           rule);
    v[i] = std::uint32_t(u);
  }
  Dim3 d{v[0], v[1], v[2]};
  if (kind == DimKind::Block && std::uint64_t(d.x) * d.y * d.z > kBlockThreadsMax)
    fail(field(name) + " " + shown(j) + " has " + std::to_string(std::uint64_t(d.x) * d.y * d.z) +
         " threads, more than the 1024 a CUDA block can have");
  return d;
}

// A cluster launch (CUDA C++ Programming Guide, "Thread Block Clusters"):
// the grid is a whole number of clusters in each dimension, and 8 CTAs is
// the portable cluster size; more (16 on an H100) needs the kernel's
// cudaFuncAttributeNonPortableClusterSizeAllowed opt-in, which a spec cannot
// express, so it is refused.
constexpr std::uint64_t kPortableClusterSize = 8;

Dim3 cluster_of(const json& j, const std::string& name) {
  const std::string rule = "a cluster is 1 to 3 positive integers (missing ones are 1), at most 8 CTAs in all, "
                           "like [2, 1, 1]";
  if (!j.is_array() || j.empty() || j.size() > 3) fail(field(name) + " is " + shown(j) + ": " + rule);
  std::uint32_t v[3] = {1, 1, 1};
  static const char* axis[3] = {"x", "y", "z"};
  for (std::size_t i = 0; i < j.size(); ++i) {
    std::uint64_t u = 0;
    std::string why = not_uint(j[i], &u);
    if (why.empty() && u == 0) why = "zero";
    if (why.empty() && u > kPortableClusterSize) why = "more than 8";
    if (!why.empty()) fail(field(name) + " " + shown(j) + ": " + axis[i] + " is " + shown(j[i]) + ", " + why + "; " + rule);
    v[i] = std::uint32_t(u);
  }
  Dim3 c{v[0], v[1], v[2]};
  if (c.count() > kPortableClusterSize)
    fail(field(name) + " " + shown(j) + " has " + std::to_string(c.count()) + " CTAs: 8 is the portable cluster size "
         "(CUDA C++ Programming Guide, \"Thread Block Clusters\"); a larger cluster needs the kernel's non-portable "
         "opt-in (cudaFuncAttributeNonPortableClusterSizeAllowed), which a spec does not model");
  return c;
}

// cluster_label: how the message names the cluster ("\"cluster\"", a field).
void cluster_fits(const Dim3& cluster, const std::string& cluster_label, const Dim3& grid, const std::string& grid_name) {
  static const char* axis[3] = {"x", "y", "z"};
  const std::uint32_t c[3] = {cluster.x, cluster.y, cluster.z}, g[3] = {grid.x, grid.y, grid.z};
  for (int i = 0; i < 3; ++i)
    if (g[i] % c[i] != 0)
      fail(cluster_label + " " + dim3_text(cluster) + " does not divide " + field(grid_name) + " " +
           dim3_text(grid) + ": " + axis[i] + " " + std::to_string(g[i]) + " is not a multiple of " +
           std::to_string(c[i]) + "; a cluster launch's grid is a whole number of clusters in each dimension (CUDA "
           "C++ Programming Guide, \"Thread Block Clusters\")");
}

void cta_inside(const Dim3& cta, const Dim3& grid, const std::string& grid_name) {
  if (cta.x >= grid.x || cta.y >= grid.y || cta.z >= grid.z)
    fail("\"cta\" " + dim3_text(cta) + " lies outside " + field(grid_name) + " " + dim3_text(grid) +
         ": each component must be below the grid's (CTAs are numbered from 0)");
}

// ------------------------------------------------------------ params

DType dtype_of(const json& v, const std::string& name) {
  static const std::pair<const char*, DType> names[] = {
      {"f32", DType::F32}, {"f16", DType::F16}, {"bf16", DType::BF16}, {"f64", DType::F64}, {"s32", DType::S32},
      {"u32", DType::U32}, {"s64", DType::S64}, {"u64", DType::U64},   {"s8", DType::S8},   {"u8", DType::U8},
      {"s16", DType::S16}, {"u16", DType::U16}, {"b32", DType::B32}, {"b64", DType::B64}};
  std::string list;
  for (const auto& entry : names) list += std::string(list.empty() ? "" : ", ") + entry.first;
  if (v.is_string())
    for (const auto& entry : names)
      if (v.get<std::string>() == entry.first) return entry.second;
  fail(field(name) + " is " + shown(v) + (v.is_string() ? "" : ", " + what_kind(v)) + ": it must be one of " + list);
}

// The most elements one tensor may have: 2^48 (256 T elements, a petabyte of
// f32) is beyond every GPU's memory, yet far from overflowing the byte and
// index arithmetic of 64-bit counts. Whether a smaller tensor fits is the
// run's memory budget to say (--max-memory): that is a limit (unknown), this
// is bad input.
constexpr std::uint64_t kMaxElements = std::uint64_t(1) << 48;

std::vector<std::uint64_t> shape_of(const json& v, const std::string& name, const std::string& tensor) {
  const std::string rule = "a shape is a list of positive integers, like [128] or [64, 64]";
  if (!v.is_array() || v.empty()) fail(field(name) + " of '" + tensor + "' is " + shown(v) + ": " + rule);
  std::vector<std::uint64_t> shape;
  std::uint64_t elements = 1;
  bool overflow = false;
  for (const json& d : v) {
    std::uint64_t u = 0;
    std::string why = not_uint(d, &u);
    if (why.empty() && u == 0) why = "zero";
    if (!why.empty()) fail(field(name) + " of '" + tensor + "' is " + shown(v) + ": " + shown(d) + " is " + why + "; " + rule);
    shape.push_back(u);
    if (elements > UINT64_MAX / u) overflow = true;
    else elements *= u;
  }
  if (overflow || elements > kMaxElements)
    fail("'" + tensor + "' (" + field(name) + " " + shown(v) + ") has " +
         (overflow ? std::string("more than 2^64") : std::to_string(elements)) +
         " elements, more than any GPU memory holds (at most 2^48 = " + std::to_string(kMaxElements) + ")");
  return shape;
}

double half_value(std::uint16_t bits, bool bf16) {
  return double((bf16 ? Rational::from_bf16_bits(bits) : Rational::from_f16_bits(bits)).to_long_double());
}

// The bit pattern a kernel receives for a scalar argument of the given dtype,
// as a C++ host would pass it: numbers are converted (to the nearest
// representable value, ties to even, for the float types); a string "0x.."
// gives the bits themselves.
// `key` names the value in messages: "\"value\"" for a scalar, "\"init\"" for a
// tensor's initial value, "the number" for an "args" entry.
std::int64_t scalar_bits(const json& v, DType t, const std::string& where, const std::string& key = "\"value\"") {
  const std::size_t bits = dtype_bytes(t) * 8;
  if (v.is_string()) {
    std::string text = v.get<std::string>();
    if (text.size() < 3 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X') ||
        text.find_first_not_of("0123456789abcdefABCDEF", 2) != std::string::npos || text.size() - 2 > bits / 4)
      fail(where + ": a string " + key + " must be the scalar's bits in hex, at most " + std::to_string(bits / 4) +
           " digits, like \"0x3fc00000\", not " + shown(v));
    return std::int64_t(std::stoull(text.substr(2), nullptr, 16));
  }
  if (!v.is_number())
    fail(where + ": " + key + " is " + shown(v) + ", " + what_kind(v) + ": it must be a number (or a hex string of bits)");
  if (dtype_is_float(t)) {
    double d = v.get<double>();
    if (!std::isfinite(d)) fail(where + ": " + key + " must be finite");
    if (t == DType::F64) {
      std::uint64_t b;
      std::memcpy(&b, &d, sizeof b);
      return std::int64_t(b);
    }
    if (t == DType::F32) {
      // float(d) of a double beyond float's range is undefined behaviour:
      // compare first (FLT_MAX plus half an ulp still rounds to FLT_MAX).
      if (std::fabs(d) >= 3.4028235677973366e38) fail(where + ": " + shown(v) + " is out of the range of f32");
      float f = float(d);
      std::uint32_t b;
      std::memcpy(&b, &f, sizeof b);
      return std::int64_t(b);
    }
    // f16 / bf16: the nearest of the 2^16 patterns (ties to the even one).
    bool bf16 = t == DType::BF16;
    std::uint32_t best = 0;
    double best_err = INFINITY;
    for (std::uint32_t b = 0; b < 0x10000u; ++b) {
      int exp = bf16 ? int((b >> 7) & 0xff) : int((b >> 10) & 0x1f);
      if (exp == (bf16 ? 0xff : 0x1f)) continue;
      double err = std::fabs(half_value(std::uint16_t(b), bf16) - d);
      if (err < best_err || (err == best_err && (b & 1) == 0 && (best & 1) == 1)) {
        best = b;
        best_err = err;
      }
    }
    if (best_err > std::fabs(d) * 1e-2 && best_err > 1e-7)
      fail(where + ": " + shown(v) + " is out of the range of " + (bf16 ? "bf16" : "f16"));
    return std::int64_t(best);
  }
  if (!v.is_number_integer())
    fail(where + ": " + key + " " + shown(v) + " must be an integer for an integer dtype");
  if (dtype_is_signed(t)) {
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(INT64_MAX))
      fail(where + ": " + shown(v) + " is out of the range of the dtype");
    std::int64_t x = v.get<std::int64_t>();
    if (bits < 64 && (x < -(std::int64_t(1) << (bits - 1)) || x >= (std::int64_t(1) << (bits - 1))))
      fail(where + ": " + shown(v) + " is out of the range of the dtype");
    return x;
  }
  if (!v.is_number_unsigned())
    fail(where + ": " + shown(v) + " is negative, but the dtype is unsigned (give the bits as \"0x..\")");
  std::uint64_t u = v.get<std::uint64_t>();
  if (bits < 64 && u >> bits) fail(where + ": " + shown(v) + " is out of the range of the dtype");
  return std::int64_t(u);
}

// ------------------------------------------------------------ kernels

// extern .shared bytes: at most 2^32 (a 32-bit shared address space); the PTX
// lowering checks the target's real maximum (228 KB per block on sm_90).
constexpr std::uint64_t kDynamicSharedMax = std::uint64_t(1) << 32;

// Where a kernel's PTX path came from, for load_spec's file checks.
struct PtxRef {
  std::string field;  // "ref.ptx"
  std::string as_written;
  std::string resolved;
};

KernelSpec kernel_of(const json& j, const std::string& what, const fs::path& base, std::vector<PtxRef>* refs) {
  if (!j.is_object())
    fail(field(what) + " is " + shown(j) + ": it must be an object with \"ptx\", \"kernel\" and \"block\"");
  only_keys(j, field(what),
            {"ptx", "kernel", "block", "grid", "cluster", "dynamic_shared", "symbols", "args", "description"});
  // "block" may be left to the PTX's .reqntid: that is checked at launch
  // (launch_for), when the PTX has been read.
  for (const char* key : {"ptx", "kernel"})
    if (!j.contains(key)) fail(field(what) + " needs \"" + key + "\"");
  KernelSpec k;
  k.entry = what;
  std::string ptx = text_of(j["ptx"], what + ".ptx", "the PTX file, relative to the spec's folder");
  fs::path p = ptx;
  k.ptx = (p.is_absolute() ? p : base / p).string();
  if (refs) refs->push_back(PtxRef{what + ".ptx", ptx, k.ptx});
  k.kernel = text_of(j["kernel"], what + ".kernel", "the kernel's .entry in the PTX file");
  if (j.contains("block")) k.block = dim3_of(j["block"], what + ".block", DimKind::Block);
  else k.block = Dim3{0, 0, 0};
  if (j.contains("dynamic_shared"))
    k.dynamic_shared = uint_in(j["dynamic_shared"], what + ".dynamic_shared", 0, kDynamicSharedMax,
                               "bytes of extern .shared memory");
  if (j.contains("grid")) k.grid = dim3_of(j["grid"], what + ".grid", DimKind::Grid);
  if (j.contains("cluster")) k.cluster = cluster_of(j["cluster"], what + ".cluster");
  if (j.contains("symbols")) {
    const json& m = j["symbols"];
    if (!m.is_object())
      fail(field(what + ".symbols") + " is " + shown(m) + ": it must map module variable names to tensor names, like "
           "{\"c_filter\": \"w\"}");
    for (auto it = m.begin(); it != m.end(); ++it)
      k.symbols[it.key()] = text_of(it.value(), what + ".symbols." + it.key(), "a tensor of \"params\"");
  }
  if (j.contains("args")) {
    // The names are checked against "params" in spec_of, the count and the
    // types against the PTX parameters at launch.
    const json& a = j["args"];
    if (!a.is_array())
      fail(field(what + ".args") + " is " + shown(a) + ": it must be a list with one entry per PTX parameter of the "
           "kernel, in order: the name of a \"params\" entry, a number, or null");
    k.args.emplace();
    for (std::size_t i = 0; i < a.size(); ++i) {
      const json& e = a[i];
      const std::string at = what + ".args[" + std::to_string(i) + "]";
      KernelArg arg;
      if (e.is_null()) {
        arg.kind = KernelArg::Kind::Null;
      } else if (e.is_string()) {
        arg.text = text_of(e, at, "a \"params\" entry");
      } else if (e.is_number()) {
        arg.kind = KernelArg::Kind::Number;
        arg.text = e.dump();
      } else {
        fail(field(at) + " is " + shown(e) + ", " + what_kind(e) + ": an argument is the name of a \"params\" entry "
             "(a string), a number (a scalar of the PTX parameter's type), or null (a pointer the kernel never "
             "dereferences)");
      }
      k.args->push_back(std::move(arg));
    }
  }
  return k;
}

// An output tensor's "init": what every element holds when the kernel
// starts. A number is rounded to the tensor's dtype as the host would store
// it; integer tensors take integers only.
void init_of(const json& v, const std::string& named, ParamSpec* ps) {
  const std::string rule = "\"init\" is a number, \"-inf\", \"inf\" or \"input\"";
  if (ps->role == Role::In)
    fail(named + " has \"init\" but is an input: only an \"out\" or \"inout\" tensor starts with a given value (an "
         "input's elements are its symbols " + ps->name + "[i])");
  const bool ints = !dtype_is_float(ps->dtype);
  if (v.is_string()) {
    const std::string t = v.get<std::string>();
    if (t == "input") {
      ps->init = TensorInit::Input;
      return;
    }
    if (t != "-inf" && t != "inf" && t != "+inf")
      fail(named + ": \"init\" is " + shown(v) + ": " + rule + " (the tensor's symbols " + ps->name + "[i])");
    if (ints)
      fail(named + ": \"init\" is " + shown(v) + " but the tensor holds integers (" + dtype_name(ps->dtype) +
           "): an integer tensor starts with an integer");
    ps->init = TensorInit::Value;
    ps->init_inf = t == "-inf" ? -1 : 1;
    return;
  }
  if (!v.is_number()) fail(named + ": \"init\" is " + shown(v) + ", " + what_kind(v) + ": " + rule);
  const std::int64_t bits = scalar_bits(v, ps->dtype, named, "\"init\"");
  ps->init = TensorInit::Value;
  switch (ps->dtype) {
    case DType::F32: ps->init_value = Rational::from_f32_bits(std::uint32_t(bits)); break;
    case DType::F64: ps->init_value = Rational::from_f64_bits(std::uint64_t(bits)); break;
    case DType::F16: ps->init_value = Rational::from_f16_bits(std::uint16_t(bits)); break;
    case DType::BF16: ps->init_value = Rational::from_bf16_bits(std::uint16_t(bits)); break;
    default:
      // scalar_bits gives a signed dtype's value and an unsigned one's bits:
      // an unsigned 64-bit value above 2^63 - 1 is refused (the evaluator
      // keeps integer data in 64 signed bits).
      if (!dtype_is_signed(ps->dtype) && bits < 0)
        fail(named + ": \"init\" " + shown(v) + " is above 9223372036854775807, the largest initial value of an "
             "integer tensor");
      ps->init_value = Rational(bits);
  }
}

// ------------------------------------------------------------ tensor maps

// A list of 1 to 5 non-negative integers (a tensor map's dims, strides, box,
// element strides), each at most `most`; the ranges cuTensorMapEncodeTiled
// sets are checked with the other rules of the map (tensor_map.cpp), once
// the tensor's dtype and shape are known.
std::vector<std::uint64_t> map_list(const json& v, const std::string& name, std::uint64_t most, const std::string& rule) {
  const bool strides = name.size() >= 8 && name.compare(name.size() - 8, 8, ".strides") == 0;
  const std::string like = strides ? "a list of 1 to 4 integers, the byte strides of dimensions 1 to rank - 1 (leave "
                                      "it out for a 1-dimensional map)"
                                    : "a list of 1 to 5 integers, innermost dimension first";
  if (!v.is_array() || v.empty() || v.size() > internal::kTensorMapMaxRank - (strides ? 1 : 0))
    fail(field(name) + " is " + shown(v) + ": it must be " + like + " (a tensor map has 1 to 5 dimensions, "
         "cuTensorMapEncodeTiled)");
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::uint64_t u = 0;
    std::string why = not_uint(v[i], &u);
    if (why.empty() && u > most) why = "too large";
    if (!why.empty())
      fail(field(name + "[" + std::to_string(i) + "]") + " is " + shown(v[i]) + ", " + why + ": " + rule +
           " (cuTensorMapEncodeTiled)");
    out.push_back(u);
  }
  return out;
}

// One of a mode's names ("none", "32B", ...), by the enum's order.
template <class E>
E mode_of(const json& v, const std::string& name, std::initializer_list<const char*> names, const std::string& what) {
  std::string list;
  for (const char* n : names) list += std::string(list.empty() ? "" : ", ") + "\"" + n + "\"";
  if (v.is_string()) {
    std::size_t i = 0;
    for (const char* n : names) {
      if (v.get<std::string>() == n) return E(i);
      ++i;
    }
  }
  fail(field(name) + " is " + shown(v) + ": " + what + " is one of " + list + " (cuTensorMapEncodeTiled)");
}

// "tensor_map": {"tensor": "A", "box": [64, 64], ...}: what the host passes
// to cuTensorMapEncodeTiled. The tensor's dtype and the defaults that depend
// on its shape are filled in, and the map checked, in resolve_maps.
void tensor_map_of(const json& j, const std::string& where, ParamSpec* ps) {
  if (!j.is_object())
    fail(field(where) + " is " + shown(j) + ": it must be an object like {\"tensor\": \"A\", \"box\": [64, 64]} "
         "(the arguments of cuTensorMapEncodeTiled)");
  only_keys(j, field(where), {"tensor", "box", "dims", "strides", "element_strides", "interleave", "swizzle",
                              "l2_promotion", "oob_fill", "description"});
  for (const char* key : {"tensor", "box"})
    if (!j.contains(key))
      fail(field(where) + " needs \"" + key + "\" (" +
           (std::string(key) == "tensor" ? "the tensor of \"params\" it views" : "the box one TMA copy moves, innermost first") +
           ")");
  ps->tensor = false;
  ps->tensor_map = true;
  ps->map_tensor = text_of(j["tensor"], where + ".tensor", "a tensor of \"params\" (the memory the map views)");
  TensorMap& m = ps->map;
  for (std::uint64_t b : map_list(j["box"], where + ".box", 0xffffffffu, "a box dimension must be from 1 to 256"))
    m.box.push_back(std::uint32_t(b));
  if (j.contains("dims"))
    m.dims = map_list(j["dims"], where + ".dims", UINT64_MAX, "a global dimension must be from 1 to 2^32");
  if (j.contains("strides"))
    m.strides = map_list(j["strides"], where + ".strides", UINT64_MAX,
                         "a global stride must be a multiple of 16 bytes, below 2^40");
  if (j.contains("element_strides"))
    for (std::uint64_t e : map_list(j["element_strides"], where + ".element_strides", 0xffffffffu,
                                    "an element stride must be from 1 to 8"))
      m.element_strides.push_back(std::uint32_t(e));
  if (j.contains("interleave"))
    m.interleave = mode_of<TmaInterleave>(j["interleave"], where + ".interleave", {"none", "16B", "32B"},
                                          "the interleaved layout");
  if (j.contains("swizzle"))
    m.swizzle = mode_of<TmaSwizzle>(j["swizzle"], where + ".swizzle", {"none", "32B", "64B", "128B"},
                                    "the shared-memory swizzle");
  if (j.contains("l2_promotion"))
    m.l2_promotion = mode_of<TmaL2Promotion>(j["l2_promotion"], where + ".l2_promotion",
                                             {"none", "64B", "128B", "256B"}, "the L2 promotion");
  if (j.contains("oob_fill"))
    m.oob_fill = mode_of<TmaOobFill>(j["oob_fill"], where + ".oob_fill", {"zero", "nan"},
                                     "what out-of-bound elements read as (\"nan\": NAN_REQUEST_ZERO_FMA)");
  if (j.contains("description")) text_of(j["description"], where + ".description", "what the map is for", true);
}

// The entry of "params" with that name (names are unique), or null.
const ParamSpec* param_named(const Spec& s, const std::string& name) {
  for (const ParamSpec& p : s.params)
    if (p.name == name) return &p;
  return nullptr;
}

// Every map's tensor: a tensor entry of "params", whose dtype the map takes;
// the defaults (dims: the shape reversed, strides: packed, element strides:
// 1); then cuTensorMapEncodeTiled's rules, each error naming the field.
void resolve_map(Spec& s, ParamSpec& p, const std::string& where) {
  const ParamSpec* t = param_named(s, p.map_tensor);
  if (!t || !t->tensor) {
    std::string tensors, nearest;
    std::size_t best = 3;
    for (const ParamSpec& q : s.params) {
      if (!q.tensor) continue;
      tensors += (tensors.empty() ? "" : ", ") + q.name;
      if (edit_distance(q.name, p.map_tensor) < best) {
        best = edit_distance(q.name, p.map_tensor);
        nearest = q.name;
      }
    }
    fail(field(where + ".tensor") + " is " + json_quoted(p.map_tensor) + ": " +
         (t ? "that entry of \"params\" is a " + std::string(t->tensor_map ? "tensor map" : "scalar") + ", not a tensor"
            : "no tensor of \"params\" has that name") +
         (nearest.empty() || t ? "" : " (did you mean \"" + nearest + "\"?)") + "; a map views a tensor entry (" +
         (tensors.empty() ? std::string("\"params\" has none") : "they are " + tensors) + ")");
  }
  p.dtype = t->dtype;
  TensorMap& m = p.map;
  if (m.dims.empty()) m.dims.assign(t->shape.rbegin(), t->shape.rend());
  if (m.dims.size() > internal::kTensorMapMaxRank)
    fail(field(where) + ": '" + t->name + "' has " + std::to_string(t->shape.size()) + " dimensions and the map has "
         "no \"dims\": a tensor map has 1 to 5 dimensions; give \"dims\" (innermost first) to view it with fewer "
         "(cuTensorMapEncodeTiled)");
  const bool packed = m.strides.empty();
  if (packed && m.dims.size() > 1) m.strides = internal::packed_strides(m.dims, dtype_bytes(t->dtype));
  if (m.element_strides.empty()) m.element_strides.assign(m.dims.size(), 1);
  TensorArg ta{t->name, t->dtype, t->shape, t->role};
  if (auto problem = internal::tensor_map_problem(m, ta))
    fail(field(where + "." + problem->field) + " " + problem->message +
         (packed && problem->field.rfind("strides", 0) == 0
              ? " (\"strides\" not given: the packed strides of dims " + internal::list_text(m.dims) + ")"
              : ""));
}

// The bytes a struct field takes.
std::uint32_t field_bytes(const ParamSpec& f) {
  if (f.tensor_map) return 128;
  if (!f.pointee.empty() || f.null_pointer) return 8;
  return std::uint32_t(dtype_bytes(f.dtype));
}

// A struct's fields in offset order, each aligned, inside and not
// overlapping the one before (after resolve_struct gave "param" fields
// their dtypes).
void check_layout(ParamSpec* ps, const std::string& where) {
  std::sort(ps->fields.begin(), ps->fields.end(), [](const ParamSpec& a, const ParamSpec& b) { return a.offset < b.offset; });
  for (std::size_t k = 0; k < ps->fields.size(); ++k) {
    const ParamSpec& f = ps->fields[k];
    const std::uint32_t size = field_bytes(f);
    if (f.offset % std::min<std::uint32_t>(size, 8) != 0)
      fail(field(where) + ": field '" + f.name + "' at byte " + std::to_string(f.offset) + " is not aligned to its " +
           std::to_string(size) + " bytes (" + (f.tensor_map ? "a CUtensorMap is 64-byte aligned" : "as C++ lays it out") + ")");
    if (f.tensor_map && f.offset % 64 != 0)
      fail(field(where) + ": the tensor map '" + f.name + "' at byte " + std::to_string(f.offset) +
           " is not 64-byte aligned (CUtensorMap is alignas(64))");
    if (k > 0 && ps->fields[k - 1].offset + field_bytes(ps->fields[k - 1]) > f.offset)
      fail(field(where) + ": fields '" + ps->fields[k - 1].name + "' and '" + f.name + "' overlap (bytes " +
           std::to_string(ps->fields[k - 1].offset) + " and " + std::to_string(f.offset) + ")");
    if (ps->struct_bytes && f.offset + size > ps->struct_bytes)
      fail(field(where) + ": field '" + f.name + "' (bytes " + std::to_string(f.offset) + " to " +
           std::to_string(f.offset + size - 1) + ") is past the struct's " + std::to_string(ps->struct_bytes) + " bytes");
  }
}

// A struct's pointer fields name tensors of "params"; its maps are resolved
// as the parameters' maps are.
void resolve_struct(Spec& s, ParamSpec& p, const std::string& where) {
  for (std::size_t k = 0; k < p.fields.size(); ++k) {
    ParamSpec& f = p.fields[k];
    const std::string at = where + ".fields['" + f.name + "']";
    if (f.tensor_map) {
      resolve_map(s, f, at + ".tensor_map");
      continue;
    }
    if (!f.same_as.empty()) {
      const ParamSpec* q = param_named(s, f.same_as);
      if (!q || q->tensor || q->tensor_map || q->is_struct)
        fail(field(at + ".param") + " is " + json_quoted(f.same_as) + ": " +
             (q ? std::string("that entry of \"params\" is not a scalar") : "no entry of \"params\" has that name") +
             "; a \"param\" field holds a scalar entry of \"params\" (a value or a symbolic float)");
      f.dtype = q->dtype;
      f.value = q->value;
      f.symbolic = q->symbolic;
      continue;
    }
    if (f.pointee.empty()) continue;
    const ParamSpec* t = param_named(s, f.pointee);
    if (!t || !t->tensor)
      fail(field(at + ".tensor") + " is " + json_quoted(f.pointee) + ": " +
           (t ? std::string("that entry of \"params\" is not a tensor") : "no tensor of \"params\" has that name") +
           "; a pointer field points to a tensor entry of \"params\"");
  }
}

void resolve_maps(Spec& s) {
  for (std::size_t i = 0; i < s.params.size(); ++i) {
    ParamSpec& p = s.params[i];
    if (p.tensor_map) resolve_map(s, p, "params[" + std::to_string(i) + "].tensor_map");
    if (p.is_struct) {
      resolve_struct(s, p, "params[" + std::to_string(i) + "].struct");
      check_layout(&p, "params[" + std::to_string(i) + "].struct");
    }
  }
}

// "struct": {"bytes": 24, "fields": [{"name": "M", "offset": 0, "dtype": "s32",
// "value": 256}, {"name": "ptr_A", "offset": 8, "tensor": "A"}, {"name":
// "tma_a", "offset": 128, "tensor_map": {...}}]}: a by-value struct
// parameter (CUTLASS's Params), field by field at byte offsets. A list of
// values fills consecutive elements (a stride tuple). Each field must be
// aligned to its size and inside the struct; fields may not overlap;
// bytes no field covers are undefined (a kernel that reads them reads an
// uninitialized value).
void struct_of(const json& j, const std::string& where, const std::string& pname, ParamSpec* ps) {
  if (!j.is_object())
    fail(field(where) + " is " + shown(j) + ": it must be an object like {\"fields\": [{\"name\": \"M\", \"offset\": 0, "
         "\"dtype\": \"s32\", \"value\": 256}]} (a by-value struct, field by field)");
  only_keys(j, field(where), {"bytes", "fields", "description"});
  ps->tensor = false;
  ps->is_struct = true;
  if (j.contains("bytes")) {
    std::uint64_t b = 0;
    std::string why = not_uint(j["bytes"], &b);
    if (why.empty() && (b == 0 || b > 32764)) why = "not from 1 to 32764 (the most a kernel's parameters hold)";
    if (!why.empty()) fail(field(where + ".bytes") + " is " + shown(j["bytes"]) + ": " + why);
    ps->struct_bytes = std::uint32_t(b);
  }
  if (!j.contains("fields") || !j["fields"].is_array())
    fail(field(where + ".fields") + (j.contains("fields") ? " is " + shown(j["fields"]) + ": it must be a list"
                                                          : " is missing: list the struct's fields (or [] for none read)"));
  std::set<std::string> names;
  const json& fs = j["fields"];
  for (std::size_t k = 0; k < fs.size(); ++k) {
    const json& f = fs[k];
    const std::string at = where + ".fields[" + std::to_string(k) + "]";
    if (!f.is_object()) fail(field(at) + " is " + shown(f) + ": a field is an object with \"name\" and \"offset\"");
    only_keys(f, field(at),
              {"name", "offset", "dtype", "value", "symbolic", "tensor", "tensor_map", "param", "description"});
    if (!f.contains("name") || !f.contains("offset")) fail(field(at) + " needs \"name\" and \"offset\" (in bytes)");
    ParamSpec fp;
    fp.name = pname + "." + text_of(f["name"], at + ".name", "the field");
    if (!names.insert(fp.name).second) fail(field(at + ".name") + " " + json_quoted(fp.name) + " is already a field's name");
    std::uint64_t off = 0;
    std::string why = not_uint(f["offset"], &off);
    if (why.empty() && off >= 32764) why = "past the most a kernel's parameters hold (32764 bytes)";
    if (!why.empty()) fail(field(at + ".offset") + " is " + shown(f["offset"]) + ": " + why);
    fp.offset = std::uint32_t(off);
    const int kinds =
        int(f.contains("dtype")) + int(f.contains("tensor")) + int(f.contains("tensor_map")) + int(f.contains("param"));
    if (kinds != 1)
      fail(field(at) + " ('" + fp.name + "') needs one of \"dtype\" (a scalar, with \"value\" or \"symbolic\"), "
           "\"param\" (a scalar entry of \"params\": the same value or symbol), \"tensor\" (a pointer to a tensor "
           "of \"params\", or null) and \"tensor_map\" (a CUtensorMap inside the struct)");
    if (f.contains("param")) {
      if (f.contains("value") || f.contains("symbolic")) fail(field(at) + " names a \"param\": it takes no \"value\"");
      fp.tensor = false;
      fp.same_as = text_of(f["param"], at + ".param", "a scalar entry of \"params\"");  // resolved in resolve_struct
      ps->fields.push_back(std::move(fp));
      continue;
    }
    if (f.contains("tensor_map")) {
      if (f.contains("value") || f.contains("symbolic")) fail(field(at) + " is a tensor map: it takes no \"value\"");
      tensor_map_of(f["tensor_map"], at + ".tensor_map", &fp);
      ps->fields.push_back(std::move(fp));
      continue;
    }
    if (f.contains("tensor")) {
      if (f.contains("value") || f.contains("symbolic")) fail(field(at) + " is a pointer: it takes no \"value\"");
      fp.tensor = false;
      fp.dtype = DType::U64;
      if (f["tensor"].is_null()) fp.null_pointer = true;
      else fp.pointee = text_of(f["tensor"], at + ".tensor", "a tensor of \"params\" (or null)");
      ps->fields.push_back(std::move(fp));
      continue;
    }
    fp.dtype = dtype_of(f["dtype"], at + ".dtype");
    fp.tensor = false;
    if (f.contains("symbolic")) {
      if (!f["symbolic"].is_boolean() || !f["symbolic"].get<bool>() || f.contains("value"))
        fail(field(at + ".symbolic") + " must be true, without \"value\" (a float field that stands for every value)");
      if (!dtype_is_float(fp.dtype))
        fail(field(at) + " ('" + fp.name + "') is \"symbolic\" but its dtype is " + dtype_name(fp.dtype) +
             ": only float fields can be symbolic");
      fp.symbolic = true;
      ps->fields.push_back(std::move(fp));
      continue;
    }
    if (!f.contains("value")) fail(field(at) + " ('" + fp.name + "') needs \"value\" (or \"symbolic\": true)");
    const json& v = f["value"];
    if (!v.is_array()) {
      fp.value = scalar_bits(v, fp.dtype, field(at + ".value"));
      ps->fields.push_back(std::move(fp));
      continue;
    }
    if (v.empty()) fail(field(at + ".value") + " is []: give at least one value");
    for (std::size_t e = 0; e < v.size(); ++e) {  // consecutive elements: name[e]
      ParamSpec ep = fp;
      ep.name = fp.name + "[" + std::to_string(e) + "]";
      const std::uint64_t o = off + e * dtype_bytes(fp.dtype);
      if (o >= 32764) fail(field(at + ".value") + " runs past the most a kernel's parameters hold (32764 bytes)");
      ep.offset = std::uint32_t(o);
      ep.value = scalar_bits(v[e], fp.dtype, field(at + ".value[" + std::to_string(e) + "]"));
      ps->fields.push_back(std::move(ep));
    }
  }

}

ParamSpec param_of(const json& p, std::size_t i, std::set<std::string>* names) {
  std::string where = "params[" + std::to_string(i) + "]";
  if (!p.is_object()) fail(field(where) + " is " + shown(p) + ": each parameter is an object with \"name\" and \"dtype\"");
  if (p.contains("tensor_map")) {
    // A map takes its element type and default shape from its tensor.
    only_keys(p, field(where), {"name", "tensor_map", "description"});
    if (!p.contains("name")) fail(field(where) + " needs \"name\"");
  } else if (p.contains("struct")) {
    only_keys(p, field(where), {"name", "struct", "description"});
    if (!p.contains("name")) fail(field(where) + " needs \"name\"");
  } else {
    only_keys(p, field(where),
              {"name", "dtype", "shape", "role", "value", "symbolic", "init", "tensor_map", "description"});
    if (!p.contains("name") || !p.contains("dtype"))
      fail(field(where) + " needs \"name\" and \"dtype\" (or \"tensor_map\" for a CUtensorMap parameter)");
  }
  ParamSpec ps;
  ps.name = text_of(p["name"], where + ".name", "the parameter");
  if (!names->insert(ps.name).second)
    fail(field(where + ".name") + " " + json_quoted(ps.name) + " is already the name of another parameter");
  if (p.contains("tensor_map")) {
    tensor_map_of(p["tensor_map"], where + ".tensor_map", &ps);
    return ps;
  }
  if (p.contains("struct")) {
    struct_of(p["struct"], where + ".struct", ps.name, &ps);
    return ps;
  }
  ps.dtype = dtype_of(p["dtype"], where + ".dtype");
  std::string named = where + " ('" + ps.name + "')";
  if (p.contains("symbolic")) {
    if (!p["symbolic"].is_boolean())
      fail(field(where + ".symbolic") + " is " + shown(p["symbolic"]) + ": it must be true or false");
    ps.symbolic = p["symbolic"].get<bool>();
  }
  if (ps.symbolic) {
    // A symbol stands for every value; an integer scalar is a loop bound or
    // an index, which must be concrete (docs/architecture.md, structured CTAs).
    if (!dtype_is_float(ps.dtype))
      fail(named + " is \"symbolic\" but its dtype is " + dtype_name(ps.dtype) + ": only float scalars (f16, bf16, "
           "f32, f64) can be symbolic; integer scalars shape control flow and need a \"value\"");
    if (p.contains("value") || p.contains("shape") || p.contains("role") || p.contains("init"))
      fail(named + " is \"symbolic\" (a float scalar that stands for every value): it takes no \"value\", "
           "\"shape\", \"role\" or \"init\"");
    ps.tensor = false;
    return ps;
  }
  if (p.contains("value")) {
    if (p.contains("shape") || p.contains("role"))
      fail(named + " has a \"value\" (a scalar) and a \"shape\" or \"role\" (a tensor): give one or the other");
    if (p.contains("init")) fail(named + " is a scalar: \"init\" is for output tensors");
    ps.tensor = false;
    ps.value = scalar_bits(p["value"], ps.dtype, named);
    return ps;
  }
  if (!p.contains("shape") || !p.contains("role"))
    fail(named + " needs \"shape\" and \"role\" (a tensor), \"value\" (a scalar) or \"symbolic\": true (a float "
         "scalar that stands for every value)");
  ps.shape = shape_of(p["shape"], where + ".shape", ps.name);
  std::string role = text_of(p["role"], where + ".role", "\"in\", \"out\" or \"inout\"");
  if (role == "in") ps.role = Role::In;
  else if (role == "out") ps.role = Role::Out;
  else if (role == "inout") ps.role = Role::InOut;
  else fail(field(where + ".role") + " is " + json_quoted(role) + ": it must be \"in\", \"out\" or \"inout\"");
  if (p.contains("init")) init_of(p["init"], named, &ps);
  return ps;
}

// The tensors of "params" kernel k takes: those its "args" name, or without
// "args" every tensor of "params" that is not bound to a module variable.
bool bound_to_symbol(const KernelSpec& k, const std::string& tensor) {
  return std::any_of(k.symbols.begin(), k.symbols.end(), [&](const auto& kv) { return kv.second == tensor; });
}

// A tensor map taken is its tensor taken (one memory: outputs are compared
// by tensor name, so a kernel that writes C only through a TMA store map
// over C takes C).
std::set<std::string> tensors_taken(const Spec& s, const KernelSpec& k) {
  std::set<std::string> out;
  for (const ParamSpec& p : s.params) {
    if (p.tensor_map || p.is_struct) {
      if (!k.args || std::any_of(k.args->begin(), k.args->end(), [&](const KernelArg& a) {
            return a.kind == KernelArg::Kind::Param && a.text == p.name;
          })) {
        if (p.tensor_map) out.insert(p.map_tensor);
        for (const ParamSpec& f : p.fields)  // a struct's maps and pointers
          if (f.tensor_map) out.insert(f.map_tensor);
          else if (!f.pointee.empty()) out.insert(f.pointee);
      }
      continue;
    }
    if (!p.tensor) continue;
    bool bound = std::any_of(k.symbols.begin(), k.symbols.end(), [&](const auto& kv) { return kv.second == p.name; });
    bool named = k.args && std::any_of(k.args->begin(), k.args->end(), [&](const KernelArg& a) {
                   return a.kind == KernelArg::Kind::Param && a.text == p.name;
                 });
    if (k.args ? named : !bound) out.insert(p.name);
  }
  return out;
}

// "args": every name is a "params" entry, a kernel takes an output tensor
// once (two arguments naming one output would be one memory on a GPU but
// two here), and both kernels take every output (outputs are compared by
// name: one that only one kernel writes has nothing to be compared with).
// Entries no kernel takes are allowed: a generator writes every argument of
// the source, and a compiler drops some (Triton's strides equal to 1).
void check_args(const Spec& s) {
  std::vector<const KernelSpec*> ks;
  for (const std::optional<KernelSpec>* k : {&s.ref, &s.opt})
    if (*k) ks.push_back(&**k);
  bool any_args = false;
  for (const KernelSpec* k : ks) {
    if (!k->args) continue;
    any_args = true;
    std::set<std::string> outputs;
    for (std::size_t i = 0; i < k->args->size(); ++i) {
      const KernelArg& a = (*k->args)[i];
      if (a.kind != KernelArg::Kind::Param) continue;
      const std::string at = field(k->entry + ".args[" + std::to_string(i) + "]");
      auto p = std::find_if(s.params.begin(), s.params.end(), [&](const ParamSpec& q) { return q.name == a.text; });
      if (p == s.params.end()) {
        std::string names;
        for (const ParamSpec& q : s.params) names += (names.empty() ? "" : ", ") + q.name;
        fail(at + " is " + json_quoted(a.text) + ": no entry of \"params\" has that name (" +
             (names.empty() ? std::string("\"params\" is empty") : "they are " + names) +
             "); use a number for a constant and null for a pointer the kernel never dereferences");
      }
      if (p->tensor && p->role != Role::In && !outputs.insert(p->name).second)
        fail(at + " gives the output '" + p->name + "' to " + json_quoted(k->entry) + " a second time: a kernel may "
             "take an output tensor once (aliased arguments are not modeled)");
    }
  }
  if (!any_args) return;
  if (ks.size() == 2) {
    const std::set<std::string> a = tensors_taken(s, *ks[0]), b = tensors_taken(s, *ks[1]);
    for (const ParamSpec& p : s.params) {
      if (!p.tensor || p.role == Role::In || a.count(p.name) == b.count(p.name)) continue;
      const KernelSpec& without = a.count(p.name) ? *ks[1] : *ks[0];
      const KernelSpec& with = a.count(p.name) ? *ks[0] : *ks[1];
      fail(field(without.entry + (without.args ? ".args" : "")) + ": the output '" + p.name + "' is taken by \"" +
           with.entry + "\" only: outputs are compared by name, so both kernels must take every output tensor of "
           "\"params\"");
    }
    // Nothing to compare would make any pair "equivalent".
    if (std::none_of(s.params.begin(), s.params.end(), [&](const ParamSpec& p) {
          return p.tensor && p.role != Role::In && a.count(p.name);
        }))
      fail(field(ks[0]->entry + (ks[0]->args ? ".args" : "")) + " and " + field(ks[1]->entry + (ks[1]->args ? ".args" : "")) +
           " take no output tensor (role \"out\" or \"inout\"): there would be nothing to compare");
  }
}

// ------------------------------------------------------------ sizes

// "sizes", "tiles" and "suite" (docs/cli.md, "Sizes and boundary suites"):
// a spec written once for every size of a size-parametric kernel. Where a
// size goes (a shape, a grid, a scalar's value), a string is an expression
// over the sizes; it is evaluated and put into the JSON in its place before
// the spec is read, so an evaluated spec meets every rule a spec written
// with numbers meets, and the Spec it gives is the same.

using internal::SizeMap;

struct SizesDecl {
  bool present = false;             // the spec has "sizes"
  std::vector<std::string> order;   // the size names as the spec writes them
  SizeMap defaults, tiles;
  std::vector<SizeMap> suite;
  bool has_suite = false;
};

// The most a tile may be: far above any real tile, and small enough that
// every boundary value (16 tiles and a half) stays a valid size.
constexpr std::uint64_t kMaxTile = std::uint64_t(1) << 24;

std::string names_text(const SizeMap& m) {
  std::string list;
  for (const auto& kv : m) list += (list.empty() ? "" : ", ") + kv.first;
  return list;
}

// "M=129 K=96": sizes for messages, in the spec's order where it is known.
std::string sizes_text(const SizeMap& m, const std::vector<std::string>& order = {}) {
  std::string out;
  std::set<std::string> done;
  for (const std::string& n : order)
    if (m.count(n) && done.insert(n).second) out += (out.empty() ? "" : " ") + n + "=" + std::to_string(m.at(n));
  for (const auto& kv : m)
    if (!done.count(kv.first)) out += (out.empty() ? "" : " ") + kv.first + "=" + std::to_string(kv.second);
  return out;
}

// The declared size a mistyped name probably meant: "k" for "K", "MM" for
// "M"; none for "Q" among "M", "N", "K" (one-letter names are all one edit
// apart, and a suggestion of any of them would be noise).
std::string nearest_size(const std::string& name, const SizeMap& sizes) {
  std::string nearest;
  std::size_t best = std::min<std::size_t>(3, name.size());
  for (const auto& kv : sizes) {
    std::string a = name, b = kv.first;
    for (char& c : a) c = char(std::tolower(static_cast<unsigned char>(c)));
    for (char& c : b) c = char(std::tolower(static_cast<unsigned char>(c)));
    const std::size_t d = a == b ? 0 : edit_distance(name, kv.first);
    if (d < best) {
      best = d;
      nearest = kv.first;
    }
  }
  return nearest;
}

// The key of an object that must name a declared size ("tiles", "suite" entries).
void must_be_size(const std::string& key, const std::string& where, const SizeMap& sizes) {
  if (sizes.count(key)) return;
  const std::string nearest = nearest_size(key, sizes);
  fail(field(where) + " has the key " + json_quoted(key) + ", which is no size of \"sizes\"" +
       (nearest.empty() ? "" : " (did you mean \"" + nearest + "\"?)") + "; the sizes are " + names_text(sizes));
}

SizesDecl sizes_decl_of(const json& j, const std::string& text, const Deadline& deadline = std::nullopt) {
  SizesDecl d;
  if (!j.contains("sizes")) {
    for (const char* key : {"tiles", "suite"})
      if (j.contains(key))
        fail(field(key) + " needs \"sizes\": it names sizes, which \"sizes\" declares, like {\"N\": 1024}");
    return d;
  }
  d.present = true;
  const json& s = j["sizes"];
  if (!s.is_object())
    fail("\"sizes\" is " + shown(s) + ": it must be an object from size names to their default values, like "
         "{\"M\": 129, \"K\": 96}");
  for (auto it = s.begin(); it != s.end(); ++it) {
    if (!internal::size_name_ok(it.key()))
      fail("\"sizes\" has the key " + json_quoted(it.key()) + ": a size name is an identifier (letters, digits and _, "
           "not starting with a digit) other than ceil, min and max");
    d.defaults[it.key()] = std::int64_t(uint_in(it.value(), "sizes." + it.key(), 1, std::uint64_t(internal::kMaxSize),
                                                "a size is a positive integer"));
  }
  // nlohmann's objects keep keys sorted; the spec's order is the one to
  // print sizes in ("M=129 N=1024 K=96"), so it is read again, in order.
  nlohmann::ordered_json o = nlohmann::ordered_json::parse(text, nullptr, false);
  if (o.is_object() && o.contains("sizes") && o["sizes"].is_object())
    for (auto it = o["sizes"].begin(); it != o["sizes"].end(); ++it) d.order.push_back(it.key());
  if (j.contains("tiles")) {
    const json& t = j["tiles"];
    if (!t.is_object())
      fail("\"tiles\" is " + shown(t) + ": it must be an object from size names to the tile the kernel steps each by, "
           "like {\"M\": 64, \"K\": 16}");
    for (auto it = t.begin(); it != t.end(); ++it) {
      must_be_size(it.key(), "tiles", d.defaults);
      d.tiles[it.key()] = std::int64_t(uint_in(it.value(), "tiles." + it.key(), 1, kMaxTile, "a tile is a positive "
                                                                                               "integer"));
    }
  }
  if (j.contains("suite")) {
    const json& l = j["suite"];
    const std::string rule = "a list of sizes to run, each an object from size names to values, like "
                             "[{\"M\": 1}, {\"M\": 65, \"K\": 17}] (sizes it leaves out keep their defaults)";
    if (!l.is_array() || l.empty()) fail("\"suite\" is " + shown(l) + ": it must be " + rule);
    d.has_suite = true;
    for (std::size_t i = 0; i < l.size(); ++i) {
      if (i % 4096 == 4095)
        check_deadline(deadline, "checking its \"suite\" (at entry " + std::to_string(i) + " of " +
                                     std::to_string(l.size()) + ")");
      const std::string where = "suite[" + std::to_string(i) + "]";
      if (!l[i].is_object()) fail(field(where) + " is " + shown(l[i]) + ": \"suite\" is " + rule);
      SizeMap entry;
      for (auto it = l[i].begin(); it != l[i].end(); ++it) {
        must_be_size(it.key(), where, d.defaults);
        entry[it.key()] = std::int64_t(uint_in(it.value(), where + "." + it.key(), 1,
                                               std::uint64_t(internal::kMaxSize), "a size is a positive integer"));
      }
      d.suite.push_back(std::move(entry));
    }
  }
  return d;
}

// The defaults with the overrides: each must name a declared size.
SizeMap sizes_with(const SizesDecl& d, const SizeMap& overrides) {
  if (!overrides.empty() && !d.present)
    fail("sizes were given (" + sizes_text(overrides) + ") but the spec has no \"sizes\" to give them to");
  SizeMap out = d.defaults;
  for (const auto& kv : overrides) {
    if (!d.defaults.count(kv.first)) {
      const std::string nearest = nearest_size(kv.first, d.defaults);
      fail("the size " + json_quoted(kv.first) + " (given as " + kv.first + "=" + std::to_string(kv.second) +
           ") is not in \"sizes\"" + (nearest.empty() ? "" : " (did you mean \"" + nearest + "\"?)") +
           "; the sizes are " + names_text(d.defaults));
    }
    if (kv.second < 1 || kv.second > internal::kMaxSize)
      fail("the size " + kv.first + "=" + std::to_string(kv.second) + " is " + (kv.second < 1 ? "not positive" : "too large") +
           ": a size is an integer from 1 to " + std::to_string(internal::kMaxSize));
    out[kv.first] = kv.second;
  }
  return out;
}

// One place a size may go: the string there is evaluated and replaced by
// its value, which must be at least `least` (1 for a shape or a grid, 0 for
// a CTA index; none for a scalar's value, whose dtype decides).
void substitute(json& v, const std::string& name, const SizeMap& sizes, std::optional<std::int64_t> least,
                const std::string& meaning) {
  if (!v.is_string()) return;
  const std::string expr = v.get<std::string>();
  internal::SizeValue r = internal::eval_size(expr, sizes);
  if (!r.value) fail(field(name) + ": " + json_quoted(expr) + " : " + r.error);
  if (least && *r.value < *least) {
    SizeMap used;
    for (const std::string& n : r.names) used[n] = sizes.at(n);
    fail(field(name) + ": " + json_quoted(expr) + " is " + std::to_string(*r.value) +
         (used.empty() ? "" : " at " + sizes_text(used)) + ", but " + meaning + " must be " +
         (*least == 1 ? "a positive integer" : "a non-negative integer"));
  }
  if (*r.value >= 0) v = std::uint64_t(*r.value);
  else v = *r.value;
}

void substitute_list(json& v, const std::string& name, const SizeMap& sizes, std::int64_t least,
                     const std::string& meaning) {
  if (!v.is_array()) return;  // the reader says what the list must be
  for (std::size_t i = 0; i < v.size(); ++i)
    substitute(v[i], name + "[" + std::to_string(i) + "]", sizes, least, meaning);
}

// Every place of the spec a size may go. Anything that is not where the
// format puts it is left alone, for the reader to refuse as it always has.
void substitute_sizes(json& j, const SizeMap& sizes) {
  if (j.contains("grid")) substitute_list(j["grid"], "grid", sizes, 1, "a grid dimension");
  if (j.contains("cta")) substitute_list(j["cta"], "cta", sizes, 0, "a CTA index");
  for (const char* entry : {"kernel", "ref", "opt"}) {
    if (!j.contains(entry) || !j[entry].is_object()) continue;
    json& k = j[entry];
    const std::string e = entry;
    if (k.contains("block")) substitute_list(k["block"], e + ".block", sizes, 1, "a block dimension");
    if (k.contains("grid")) substitute_list(k["grid"], e + ".grid", sizes, 1, "a grid dimension");
    if (k.contains("dynamic_shared"))
      substitute(k["dynamic_shared"], e + ".dynamic_shared", sizes, 0, "a byte count");
  }
  if (!j.contains("params") || !j["params"].is_array()) return;
  for (std::size_t i = 0; i < j["params"].size(); ++i) {
    json& p = j["params"][i];
    if (!p.is_object()) continue;
    const std::string where = "params[" + std::to_string(i) + "]";
    if (p.contains("shape")) substitute_list(p["shape"], where + ".shape", sizes, 1, "a shape dimension");
    // "0x3fc00000" keeps its meaning: a scalar's bits.
    if (p.contains("value") && p["value"].is_string()) {
      const std::string t = p["value"].get<std::string>();
      if (!(t.size() >= 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')))
        substitute(p["value"], where + ".value", sizes, std::nullopt, "");
    }
    if (p.contains("tensor_map") && p["tensor_map"].is_object()) {
      json& m = p["tensor_map"];
      for (const char* key : {"dims", "box", "strides"})
        if (m.contains(key))
          substitute_list(m[key], where + ".tensor_map." + key, sizes, 1,
                          std::string("a tensor map's ") + (std::string(key) == "strides" ? "stride" : "dimension"));
    }
  }
}

// The spec's JSON, checked to be an object of known keys, and its sizes.
struct ParsedSpec {
  json j;
  SizesDecl sizes;
};
ParsedSpec parsed_spec(const std::string& text, const Deadline& deadline) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) fail("is empty (a spec is a JSON object)");
  ParsedSpec ps;
  ps.j = parse_json(text, deadline);
  const json& j = ps.j;
  if (!j.is_object()) fail("the spec is " + shown(j) + ", " + what_kind(j) + ": it must be a JSON object, {...}");
  only_keys(j, "the spec",
            {"kernel", "ref", "opt", "grid", "cluster", "cta", "ctas", "params", "expect", "description", "strict",
             "sizes", "tiles", "suite"});
  ps.sizes = sizes_decl_of(j, text, deadline);
  check_deadline(deadline, "checking its sizes");
  return ps;
}

// The Spec of parsed JSON `j` (which it changes: the sizes are put in) at
// the sizes `overrides`.
Spec spec_at(json& j, const SizesDecl& sizes, const std::string& path, std::vector<PtxRef>* refs,
             const SizeMap& overrides) {
  Spec s;
  if (sizes.present) {
    s.sizes = sizes_with(sizes, overrides);
    substitute_sizes(j, s.sizes);
  } else if (!overrides.empty()) {
    sizes_with(sizes, overrides);  // the error: no "sizes" to give them to
  }
  s.path = path;
  fs::path base = fs::path(path).parent_path();
  if (j.contains("kernel")) {
    if (j.contains("ref") || j.contains("opt"))
      fail("the spec has \"kernel\" and \"ref\"/\"opt\": give \"kernel\" for one kernel, or \"ref\" and \"opt\" for two");
    s.ref = kernel_of(j["kernel"], "kernel", base, refs);
  } else {
    if (!j.contains("ref")) fail("the spec needs \"ref\" and \"opt\" (or \"kernel\" for one kernel)");
    s.ref = kernel_of(j["ref"], "ref", base, refs);
    if (j.contains("opt")) s.opt = kernel_of(j["opt"], "opt", base, refs);
  }
  if (j.contains("grid")) s.grid = dim3_of(j["grid"], "grid", DimKind::Grid);
  if (j.contains("cta")) s.cta = dim3_of(j["cta"], "cta", DimKind::Cta);
  if (j.contains("ctas")) {
    if (!j["ctas"].is_string() || j["ctas"].get<std::string>() != "all")
      fail("\"ctas\" is " + shown(j["ctas"]) + ": it can only be \"all\" (or leave it out and name one CTA with \"cta\")");
    s.all_ctas = true;
  }
  if (j.contains("cluster")) s.cluster = cluster_of(j["cluster"], "cluster");
  // Each kernel's cluster (its own, else the spec's) divides its grid (its
  // own, else the spec's).
  for (const auto& [k, name] : {std::pair<const std::optional<KernelSpec>*, const char*>{&s.ref, "ref"}, {&s.opt, "opt"}}) {
    if (!*k) continue;
    const std::string entry = j.contains("kernel") ? "kernel" : name;
    cluster_fits((*k)->cluster ? *(*k)->cluster : s.cluster, field((*k)->cluster ? entry + ".cluster" : "cluster"),
                 (*k)->grid ? *(*k)->grid : s.grid, (*k)->grid ? entry + ".grid" : "grid");
  }
  cta_inside(s.cta, s.grid, "grid");
  // One CTA is run of each kernel: it must exist in a kernel's own grid too.
  if (!s.all_ctas)
    for (const auto& [k, name] : {std::pair<const std::optional<KernelSpec>*, const char*>{&s.ref, "ref"}, {&s.opt, "opt"}})
      if (*k && (*k)->grid) cta_inside(s.cta, *(*k)->grid, std::string(j.contains("kernel") ? "kernel" : name) + ".grid");
  if (!j.contains("params")) fail("the spec needs a \"params\" list (the kernel parameters, in order)");
  if (!j["params"].is_array())
    fail("\"params\" is " + shown(j["params"]) + ": it must be a list of the kernel parameters, in order");
  std::set<std::string> names;
  for (std::size_t i = 0; i < j["params"].size(); ++i) s.params.push_back(param_of(j["params"][i], i, &names));
  for (const std::optional<KernelSpec>* k : {&s.ref, &s.opt}) {
    if (!*k) continue;
    for (const auto& binding : (*k)->symbols) {
      const std::string& var = binding.first;
      const std::string& tensor = binding.second;
      auto p = std::find_if(s.params.begin(), s.params.end(), [&](const ParamSpec& q) { return q.name == tensor; });
      if (p == s.params.end() || !p->tensor)
        fail("symbols: '" + var + "' is given by '" + tensor + "', which is no tensor of \"params\"");
      if (p->role != Role::In) fail("symbols: the tensor '" + tensor + "' that gives '" + var + "' must have role \"in\"");
    }
  }
  resolve_maps(s);
  for (const std::optional<KernelSpec>* k : {&s.ref, &s.opt})
    if (*k)
      for (const ParamSpec& p : s.params)
        if (p.tensor_map && bound_to_symbol(**k, p.map_tensor))
          fail("symbols: '" + p.map_tensor + "' gives a module variable and is viewed by the tensor map '" + p.name +
               "': a module variable is memory of its own, which a tensor map cannot view");
  check_args(s);
  if (j.contains("expect")) {
    // The verdicts of the report (outcome_name): a misspelt expectation
    // would make a test suite compare against a verdict that never comes.
    std::string list;
    bool known = false;
    for (Outcome o : {Outcome::Equivalent, Outcome::NotEquivalent, Outcome::Race, Outcome::Deadlock, Outcome::OutOfBounds,
                      Outcome::Uninitialized, Outcome::Unsupported, Outcome::Unknown, Outcome::Ok, Outcome::Error,
                      Outcome::Trap, Outcome::PayloadsAgree, Outcome::PayloadsDiffer, Outcome::BarrierDivergence,
                      Outcome::LaunchContract}) {
      list += std::string(list.empty() ? "" : ", ") + outcome_name(o);
      known = known || (j["expect"].is_string() && j["expect"].get<std::string>() == outcome_name(o));
    }
    if (!known) fail("\"expect\" is " + shown(j["expect"]) + ": it must be a verdict, one of " + list);
    s.expect = j["expect"].get<std::string>();
  }
  if (j.contains("strict")) {
    if (!j["strict"].is_boolean())
      fail("\"strict\" is " + shown(j["strict"]) + ": it must be true or false");
    s.strict = j["strict"].get<bool>();
  }
  if (j.contains("description")) text_of(j["description"], "description", "what the spec checks", true);
  return s;
}

Spec spec_of(const std::string& text, const std::string& path, std::vector<PtxRef>* refs, const SizeMap& overrides,
             const Deadline& deadline) {
  ParsedSpec ps = parsed_spec(text, deadline);
  return spec_at(ps.j, ps.sizes, path, refs, overrides);
}

// A reading that ran out of time: no spec, and the stage it was in.
SpecResult timed_out(const std::string& path, const SpecTimeout& t) {
  SpecResult r;
  r.timed_out = true;
  r.error = "time limit reached while reading the spec " + path + " (" + t.stage + ")";
  return r;
}

// f() (which makes r.spec) with the errors of a spec as SpecResult's.
template <class F>
SpecResult spec_result(const std::string& path, F&& f) {
  SpecResult r;
  try {
    f(r);
  } catch (const SpecTimeout& t) {
    return timed_out(path, t);
  } catch (const SpecError& e) {
    // "file:1:5: not valid JSON" joins without a space, as compilers write it.
    bool located = !e.message.empty() && std::isdigit(static_cast<unsigned char>(e.message[0]));
    r.error = path + (located ? ":" : ": ") + e.message;
  } catch (const json::exception& e) {
    // Every value is inspected before it is read, so this is a bug of ours;
    // still no library text for the user, but enough to find it.
    r.error = path + ": the spec could not be read (internal error " + std::to_string(e.id) +
              " of the JSON reader; please report it with the spec file)";
  }
  return r;
}

SpecResult parse_with(const std::string& text, const std::string& path, std::vector<PtxRef>* refs,
                      const SizeMap& overrides = {}, const Deadline& deadline = std::nullopt) {
  return spec_result(path, [&](SpecResult& r) { r.spec = spec_of(text, path, refs, overrides, deadline); });
}

std::string errno_text(int e) { return std::error_code(e, std::generic_category()).message(); }

// A spec file is a few kilobytes; reading stops here so that a spec path
// naming a device or a huge file cannot exhaust memory.
constexpr std::size_t kMaxSpecBytes = std::size_t(64) << 20;

}  // namespace

SpecResult parse_spec(const std::string& text, const std::string& path) { return parse_with(text, path, nullptr); }
SpecResult parse_spec(const std::string& text, const std::string& path, const std::map<std::string, std::int64_t>& sizes) {
  return parse_with(text, path, nullptr, sizes);
}

// ------------------------------------------------------------ launches
//
// What a spec alone cannot check, because it needs the PTX: the count and
// widths of a kernel's "args", the type a number converts to, the block
// against .reqntid and .maxntid. launch_for checks them once the kernel is
// lowered, with messages that name the spec file and key like the others.

namespace {

std::string ptx_type(DType t) { return std::string(".") + dtype_name(t); }
// ".u64", or ".b8[128]" for a by-value array (a CUtensorMap).
std::string ptx_type(const ParamDecl& d) {
  return d.array_bytes ? ".b8[" + std::to_string(d.array_bytes) + "]" : ptx_type(d.dtype);
}

// "x_ptr (.u64), n (.u32)": a kernel's PTX parameters, for messages.
std::string ptx_params(const Program& p) {
  if (p.params.empty()) return "none";
  std::string out;
  for (const ParamDecl& d : p.params) out += (out.empty() ? "" : ", ") + d.name + " (" + ptx_type(d) + ")";
  return out;
}

std::string dims_text(const std::array<std::uint32_t, 3>& d) {
  return std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]);
}

std::string entry_of(const KernelSpec& k) { return k.entry.empty() ? std::string("kernel") : k.entry; }

// The block: the spec's, which must be .reqntid where the kernel has one and
// within .maxntid (a launch outside them fails on the GPU), or .reqntid when
// the spec gives none. .maxntid bounds the threads in all: nvcc writes
// __launch_bounds__(256) as .maxntid 256, 1, 1, and a 16 x 16 block of such
// a kernel launches.
Dim3 block_for(const KernelSpec& k, const Program& p) {
  const std::string what = entry_of(k);
  const auto& req = p.reqntid;
  const auto& max = p.maxntid;
  if (k.block.x == 0) {
    if (req[0] == 0)
      fail(field(what) + " needs \"block\": the PTX of '" + p.name + "' has no .reqntid to take it from");
    return Dim3{req[0], req[1], req[2]};
  }
  const Dim3& b = k.block;
  if (req[0] != 0 && (b.x != req[0] || b.y != req[1] || b.z != req[2]))
    fail(field(what + ".block") + " " + dim3_text(b) + " is not the block '" + p.name + "' requires: its .reqntid is " +
         dims_text(req) + ", and a launch with another block fails (leave \"block\" out to take .reqntid)");
  const std::uint64_t most = std::uint64_t(max[0]) * max[1] * max[2];
  if (most != 0 && b.count() > most)
    fail(field(what + ".block") + " " + dim3_text(b) + " has " + std::to_string(b.count()) + " threads, more than the " +
         std::to_string(most) + " of the .maxntid " + dims_text(max) + " of '" + p.name +
         "' (its __launch_bounds__): a launch with more threads fails");
  return b;
}

// The cluster: the spec's, which must be the kernel's .reqnctapercluster
// where it has one (a launch with another fails on the GPU), or that one
// when the spec gives none (as <<<...>>> runs a __cluster_dims__ kernel);
// the grid must be a whole number of them.
void cluster_for(const KernelSpec& k, const Program& p, const Launch& l) {
  const auto& req = p.reqnctapercluster;
  if (req[0] == 0) return;
  const Dim3 want{req[0], req[1] ? req[1] : 1, req[2] ? req[2] : 1};
  const std::string what = entry_of(k);
  const std::string name = k.cluster ? what + ".cluster" : "cluster";
  if (l.cluster.count() != 1 && (l.cluster.x != want.x || l.cluster.y != want.y || l.cluster.z != want.z))
    fail(field(name) + " " + dim3_text(l.cluster) + " is not the cluster '" + p.name +
         "' requires: its .reqnctapercluster is " + dims_text(req) +
         ", and a launch with another cluster fails (leave \"cluster\" out to take .reqnctapercluster)");
  cluster_fits(want, k.cluster ? field(name) : "the .reqnctapercluster of '" + k.kernel + "'", l.grid,
               k.grid ? what + ".grid" : "grid");
}

TensorArg tensor_of(const ParamSpec& p) {
  TensorArg t{p.name, p.dtype, p.shape, p.role};
  t.init = p.init;
  t.init_value = p.init_value;
  t.init_inf = p.init_inf;
  return t;
}

// A tensor map's argument carries its tensor (spec_of checked that it is
// one), so that the evaluator makes one memory of the tensor and its maps.
LaunchArg arg_of(const Spec& s, const ParamSpec& p) {
  if (p.is_struct) {
    std::vector<LaunchArg::Field> layout;
    std::vector<LaunchArg> fields;
    for (const ParamSpec& f : p.fields) {
      layout.push_back(LaunchArg::Field{f.name, f.offset, field_bytes(f), f.dtype});
      if (f.null_pointer) {
        fields.push_back(LaunchArg::of_null());
      } else if (!f.pointee.empty()) {
        const ParamSpec* t = param_named(s, f.pointee);
        fields.push_back(LaunchArg::of_tensor(t ? tensor_of(*t) : TensorArg{f.pointee, DType::F32, {}}));
      } else if (!f.same_as.empty()) {
        const ParamSpec* q = param_named(s, f.same_as);
        fields.push_back(q ? arg_of(s, *q) : arg_of(s, f));
      } else {
        fields.push_back(arg_of(s, f));
      }
    }
    return LaunchArg::of_struct(p.struct_bytes, std::move(layout), std::move(fields));
  }
  if (p.tensor_map) {
    const ParamSpec* t = param_named(s, p.map_tensor);
    return LaunchArg::of_tensor_map(t ? tensor_of(*t) : TensorArg{p.map_tensor, p.dtype, {}}, p.map);
  }
  if (p.tensor) return LaunchArg::of_tensor(tensor_of(p));
  if (p.symbolic) return LaunchArg::of_symbol(p.name, p.dtype);
  return LaunchArg::of_scalar(p.value);
}

// Whether a tensor map or a by-value struct names the tensor (it is then
// passed through them, not as an argument of its own in "params" order).
bool viewed_by_map(const Spec& s, const std::string& tensor) {
  return std::any_of(s.params.begin(), s.params.end(), [&](const ParamSpec& p) {
    return (p.tensor_map && p.map_tensor == tensor) ||
           std::any_of(p.fields.begin(), p.fields.end(), [&](const ParamSpec& f) {
             return (f.tensor_map && f.map_tensor == tensor) || f.pointee == tensor;
           });
  });
}

// A CUtensorMap is passed by value, as the 128-byte array nvcc and Triton
// declare (.param .align 64 .b8 name[128]; nvcc aligns it to 128): a map
// given for any other parameter, or anything else for such an array, would
// make the kernel read a descriptor from a pointer or a pointer from a
// descriptor.
constexpr std::uint64_t kTensorMapBytes = 128;
bool map_param(const ParamDecl& d) { return d.array_bytes == kTensorMapBytes; }

// A scalar for a by-value struct of its size: nvcc passes a __half or
// __nv_bfloat16 (a struct of one 16-bit field) as .param .align 2 .b8 p[2].
bool small_struct_scalar(const ParamSpec& q, const ParamDecl& d) {
  return d.array_bytes && !q.is_struct && !q.tensor && !q.tensor_map && d.array_bytes == dtype_bytes(q.dtype);
}

// The argument for a struct parameter given a scalar of its size: a struct of
// that one field.
LaunchArg as_struct(const Spec& s, const ParamSpec& q, const ParamDecl& d) {
  return LaunchArg::of_struct(d.array_bytes, {LaunchArg::Field{q.name, 0, d.array_bytes, q.dtype}}, {arg_of(s, q)});
}

void check_map_param(const std::string& at, const ParamSpec& q, const ParamDecl& d) {
  if (q.is_struct) {
    if (!d.array_bytes)
      fail(at + " is the struct '" + q.name + "', passed by value, but the parameter is " +
           (d.pointer ? "a pointer" : "a scalar") + " (a by-value struct is .param .b8 " + d.name + "[N])");
    if (q.struct_bytes && q.struct_bytes != d.array_bytes)
      fail(at + " is the struct '" + q.name + "' of " + std::to_string(q.struct_bytes) + " bytes (\"bytes\"), but the "
           "parameter has " + std::to_string(d.array_bytes) + " (sizeof the kernel's struct)");
    for (const ParamSpec& f : q.fields)
      if (std::uint64_t(f.offset) + field_bytes(f) > d.array_bytes)
        fail(at + ": field '" + f.name + "' (bytes " + std::to_string(f.offset) + " to " +
             std::to_string(f.offset + field_bytes(f) - 1) + ") is past the parameter's " +
             std::to_string(d.array_bytes) + " bytes");
    return;
  }
  if (small_struct_scalar(q, d)) return;
  if (d.array_bytes && !map_param(d))
    fail(at + " is the " + (q.tensor_map ? "tensor map '" + q.name + "'" : q.tensor ? "tensor '" + q.name + "'" : "scalar '" + q.name + "'") +
         ", but the parameter is a by-value struct of " + std::to_string(d.array_bytes) +
         " bytes: give a \"struct\" entry of \"params\" with its fields");
  if (q.tensor_map && !map_param(d))
    fail(at + " is the tensor map '" + q.name + "', a CUtensorMap passed by value, but the parameter is " +
         (d.array_bytes ? "an array of " + std::to_string(d.array_bytes) + " bytes"
                        : std::string(d.pointer ? "a pointer" : "a scalar")) +
         ": a tensor map parameter is .param .b8 " + d.name + "[128] (const __grid_constant__ CUtensorMap)");
  if (!q.tensor_map && map_param(d))
    fail(at + " is the " + (q.tensor ? "tensor '" + q.name + "', a pointer," : "scalar '" + q.name + "',") +
         " but the parameter is a 128-byte array, a CUtensorMap passed by value (const __grid_constant__ "
         "CUtensorMap): give a \"tensor_map\" entry of \"params\" for it (or a \"struct\" for another struct of 128 bytes)");
}

// The launch without the PTX's checks: block, grid, CTA and the bindings;
// with `params` as the arguments when the kernel has no "args".
Launch plain_launch(const Spec& s, const KernelSpec& k) {
  Launch l;
  l.block = k.block;
  l.grid = k.grid ? *k.grid : s.grid;
  l.cta = s.cta;
  l.cluster = k.cluster ? *k.cluster : s.cluster;
  for (const auto& binding : k.symbols) {
    const ParamSpec* q = param_named(s, binding.second);
    if (q && q->tensor) l.symbols[binding.first] = tensor_of(*q);
  }
  // A tensor a map views is passed through the map: in "params" order it is
  // no argument of its own ("args" can give it as a pointer too).
  if (!k.args)
    for (const ParamSpec& q : s.params)
      if (!(q.tensor && (bound_to_symbol(k, q.name) || viewed_by_map(s, q.name)))) l.args.push_back(arg_of(s, q));
  return l;
}

void add_args(const Spec& s, const KernelSpec& k, const Program& p, Launch& l) {
  const std::string what = entry_of(k);
  if (!k.args) {
    std::string viewed;
    for (const ParamSpec& q : s.params)
      if (q.tensor && viewed_by_map(s, q.name) && !bound_to_symbol(k, q.name))
        viewed += (viewed.empty() ? "" : ", ") + q.name;
    if (l.args.size() != p.params.size())
      fail(field("params") + " gives " + std::to_string(l.args.size()) + " arguments but '" + p.name + "' has " +
           std::to_string(p.params.size()) + " PTX parameters: " + ptx_params(p) +
           "; a kernel whose parameters are not \"params\" in order takes its own list, \"args\" in " + field(what) +
           (viewed.empty() ? "" : " (" + viewed + ": a tensor a \"tensor_map\" views is passed through its map, "
                                  "not as an argument of its own, unless \"args\" names it)"));
    std::size_t i = 0;
    for (const ParamSpec& q : s.params)
      if (!(q.tensor && (bound_to_symbol(k, q.name) || viewed_by_map(s, q.name)))) {
        const std::size_t at = i;
        const ParamDecl& d = p.params[i++];
        check_map_param(field("params") + " entry '" + q.name + "' (the PTX parameter " + d.name + ", " +
                            ptx_type(d) + ")",
                        q, d);
        if (q.is_struct) l.args[at].struct_bytes = d.array_bytes;
        if (small_struct_scalar(q, d)) l.args[at] = as_struct(s, q, d);
      }
    return;
  }
  const std::vector<KernelArg>& args = *k.args;
  if (args.size() != p.params.size())
    fail(field(what + ".args") + " has " + std::to_string(args.size()) + " entries but '" + p.name + "' has " +
         std::to_string(p.params.size()) + " PTX parameters: " + ptx_params(p) + "; give one entry per parameter, in order");
  for (std::size_t i = 0; i < args.size(); ++i) {
    const KernelArg& a = args[i];
    const ParamDecl& d = p.params[i];
    const std::size_t bits = dtype_bytes(d.dtype) * 8;
    const std::string at = field(what + ".args[" + std::to_string(i) + "]") + " (the PTX parameter " + d.name + ", " +
                           ptx_type(d) + ")";
    if (map_param(d) && a.kind != KernelArg::Kind::Param)
      fail(at + " is " + (a.kind == KernelArg::Kind::Null ? std::string("null") : "the number " + a.text) +
           ", but the parameter is a 128-byte array, a CUtensorMap passed by value (const __grid_constant__ "
           "CUtensorMap): name a \"tensor_map\" entry of \"params\" for it");
    if (d.array_bytes && a.kind != KernelArg::Kind::Param)
      fail(at + " is " + (a.kind == KernelArg::Kind::Null ? std::string("null") : "the number " + a.text) +
           ", but the parameter is a by-value struct of " + std::to_string(d.array_bytes) +
           " bytes: name a \"struct\" entry of \"params\" for it");
    switch (a.kind) {
      case KernelArg::Kind::Null:
        if (bits != 64) fail(at + " is null, a pointer, but the parameter has " + std::to_string(bits) + " bits, not 64");
        l.args.push_back(LaunchArg::of_null());
        break;
      case KernelArg::Kind::Number: {
        // A PTX integer parameter's type says nothing of the source's
        // signedness (nvcc and Triton declare an int as .u32), so a negative
        // number is read as the signed type of the parameter's width: the
        // bits a "params" s32 value of -1 gives.
        const json v = json::parse(a.text);
        DType t = d.dtype;
        if (!dtype_is_float(t) && v.is_number_integer() && !v.is_number_unsigned())
          t = bits == 8 ? DType::S8 : bits == 16 ? DType::S16 : bits == 32 ? DType::S32 : DType::S64;
        l.args.push_back(LaunchArg::of_scalar(scalar_bits(v, t, at, "the number")));
        break;
      }
      case KernelArg::Kind::Param: {
        const ParamSpec* q = param_named(s, a.text);
        if (!q) fail(at + " names '" + a.text + "', which is not in \"params\"");  // check_args refused it already
        check_map_param(at, *q, d);
        if (q->tensor_map || q->is_struct) {
          l.args.push_back(arg_of(s, *q));
          if (q->is_struct) l.args.back().struct_bytes = d.array_bytes;
          break;
        }
        if (small_struct_scalar(*q, d)) {
          l.args.push_back(as_struct(s, *q, d));
          break;
        }
        if (q->tensor && bits != 64)
          fail(at + " is the tensor '" + q->name + "', a pointer, but the parameter has " + std::to_string(bits) +
               " bits, not 64");
        if (!q->tensor && dtype_bytes(q->dtype) * 8 != bits)
          fail(at + " is the scalar '" + q->name + "' (" + dtype_name(q->dtype) + ", " +
               std::to_string(dtype_bytes(q->dtype) * 8) + " bits), but the parameter has " + std::to_string(bits) +
               " bits: give a scalar of its width, or a number");
        l.args.push_back(arg_of(s, *q));
        break;
      }
    }
  }
}

}  // namespace

LaunchResult launch_for(const Spec& s, const KernelSpec& k, const Program& p) {
  LaunchResult r;
  try {
    Launch l = plain_launch(s, k);
    l.block = block_for(k, p);
    cluster_for(k, p, l);
    add_args(s, k, p, l);
    r.launch = std::move(l);
  } catch (const SpecError& e) {
    r.error = (s.path.empty() ? std::string("the spec") : s.path) + ": " + e.message;
  } catch (const json::exception& e) {
    r.error = (s.path.empty() ? std::string("the spec") : s.path) + ": an \"args\" number could not be read (internal "
              "error " + std::to_string(e.id) + " of the JSON reader; please report it with the spec file)";
  }
  return r;
}

Launch launch_of(const Spec& s, const KernelSpec& k) {
  // Without "args" and with a block, the spec alone gives the launch (the
  // .reqntid and .maxntid checks are launch_for's).
  if (!k.args && k.block.x != 0) return plain_launch(s, k);
  // Only a regular file is read here: this runs on any spec (the fuzzer's
  // too), and a path such as /dev/zero would never end.
  std::error_code ec;
  if (fs::is_regular_file(k.ptx, ec)) {
    KernelLoad loaded = load_kernel(k);
    if (loaded.program) {
      LaunchResult r = launch_for(s, k, *loaded.program);
      if (r.launch) return std::move(*r.launch);
    }
  }
  Launch l;
  l.block = Dim3{0, 0, 0};
  l.grid = k.grid ? *k.grid : s.grid;
  l.cta = s.cta;
  return l;
}

// ------------------------------------------------------------ kernel names

namespace internal {

std::optional<std::string> kernel_entry(const ptx::Module& m, const std::string& name, std::string* error) {
  if (m.find(name)) return name;  // exact (lower_kernel says if it is a .func)
  std::vector<const ptx::Kernel*> found;
  for (const ptx::Kernel& k : m.kernels)
    if (k.is_entry && (util::demangled_base(k.name) == name || util::demangle(k.name) == name)) found.push_back(&k);
  if (found.size() == 1) return found[0]->name;
  // "_Z10sgemm_smemILi32EEvPKfS1_Pfi (sgemm_smem<32>)"; the whole signature
  // where two kernels share a base name (overloads).
  auto both = [&](const ptx::Kernel& k, bool full) {
    const std::string d = full ? util::demangle(k.name) : util::demangled_base(k.name);
    return d == k.name ? k.name : k.name + " (" + d + ")";
  };
  std::string list;
  if (found.empty()) {
    for (const ptx::Kernel& k : m.kernels)
      if (k.is_entry) list += (list.empty() ? "" : ", ") + both(k, false);
    *error = ptx::Error{SourceLoc{m.file, 0, 0}, "no kernel named '" + name + "' (the file has: " +
                                                          (list.empty() ? std::string("no kernels") : list) + ")"}
                 .text();
  } else {
    for (const ptx::Kernel* k : found) list += (list.empty() ? "" : ", ") + both(*k, true);
    *error = ptx::Error{SourceLoc{m.file, 0, 0}, "'" + name + "' names " + std::to_string(found.size()) +
                                                          " kernels: " + list +
                                                          "; give the mangled name, or the demangled one in full"}
                 .text();
  }
  return std::nullopt;
}

}  // namespace internal

namespace {

// The spec file's text, or why it cannot be read ("file: ...").
std::string read_spec_text(const std::string& path, std::string* text) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return path + ": is a directory, not a spec file";
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return path + ": cannot read the spec file (" + errno_text(errno) + ")";
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0 && text->size() <= kMaxSpecBytes) text->append(buf, n);
  int read_errno = std::ferror(f) ? errno : 0;
  std::fclose(f);
  if (read_errno) return path + ": cannot read the spec file (" + errno_text(read_errno) + ")";
  if (text->size() > kMaxSpecBytes) return path + ": is larger than 64 MiB, too large for a spec file";
  if (text->empty()) return path + ": is empty";
  return "";
}

// The spec at `path`, read and parsed once: the spec at `overrides`, and
// the parsed JSON without its "suite" (what a suite's sizes are made from:
// copying a list of 10^5 entries per size made --shapes suite quadratic).
struct ReadSpec {
  SpecResult base;
  std::shared_ptr<const ParsedSpec> parsed;
};
ReadSpec read_spec(const std::string& path, const SizeMap& overrides, const Deadline& deadline) {
  ReadSpec out;
  std::string text;
  std::string unreadable = read_spec_text(path, &text);
  if (!unreadable.empty()) {
    out.base.error = unreadable;
    return out;
  }
  std::error_code ec;
  std::vector<PtxRef> refs;
  std::shared_ptr<ParsedSpec> parsed;
  SpecResult& r = out.base;
  r = spec_result(path, [&](SpecResult& into) {
    check_deadline(deadline, "reading the file");
    parsed = std::make_shared<ParsedSpec>(parsed_spec(text, deadline));
    parsed->j.erase("suite");
    json j = parsed->j;
    into.spec = spec_at(j, parsed->sizes, path, &refs, overrides);
    check_deadline(deadline, "checking its fields");
  });
  if (!r.spec) return out;
  out.parsed = parsed;
  // The PTX files are read later, by the check; a wrong path is a mistake in
  // the spec, so it is reported now, saying where relative paths start.
  fs::path base = fs::path(path).parent_path();
  fs::path folder = fs::absolute(base.empty() ? fs::path(".") : base, ec).lexically_normal();
  if (folder.filename().empty() && folder.has_parent_path()) folder = folder.parent_path();  // "/a/b/" -> "/a/b"
  for (const PtxRef& ref : refs) {
    std::string from =
        fs::path(ref.as_written).is_absolute() ? "" : " (relative to the spec's folder " + folder.string() + ")";
    std::string error;
    fs::file_status st = fs::status(ref.resolved, ec);
    if (!fs::exists(st)) {
      error = "no such file " + json_quoted(ref.as_written) + from;
    } else if (fs::is_directory(st)) {
      error = json_quoted(ref.as_written) + " is a directory, not a PTX file" + from;
    } else {
      errno = 0;
      std::FILE* ptx = std::fopen(ref.resolved.c_str(), "rb");
      if (!ptx) error = "cannot read " + json_quoted(ref.as_written) + " (" + errno_text(errno) + ")" + from;
      else std::fclose(ptx);
    }
    if (!error.empty()) {
      out.base = SpecResult{std::nullopt, path + ": " + field(ref.field) + ": " + error};
      out.parsed.reset();
      return out;
    }
  }
  return out;
}

SpecResult load_with(const std::string& path, const SizeMap& overrides, const Deadline& deadline = std::nullopt) {
  return read_spec(path, overrides, deadline).base;
}

// "file: message" -> "message", where the suite's line already says which spec.
std::string without_path(const std::string& error, const std::string& path) {
  const std::string prefix = path + ": ";
  return error.compare(0, prefix.size(), prefix) == 0 ? error.substr(prefix.size()) : error;
}

}  // namespace

SpecResult load_spec(const std::string& path) { return load_with(path, {}); }
SpecResult load_spec(const std::string& path, const std::map<std::string, std::int64_t>& sizes) {
  return load_with(path, sizes);
}
SpecResult load_spec(const std::string& path, const std::map<std::string, std::int64_t>& sizes,
                     const std::optional<std::chrono::steady_clock::time_point>& deadline) {
  return load_with(path, sizes, deadline);
}

std::vector<std::map<std::string, std::int64_t>> boundary_sizes(const std::map<std::string, std::int64_t>& defaults,
                                                                 const std::map<std::string, std::int64_t>& tiles,
                                                                 std::int64_t default_tile) {
  std::map<std::string, std::vector<std::int64_t>> values;
  for (const auto& kv : defaults) {
    auto t = tiles.find(kv.first);
    values[kv.first] = internal::boundary_values(t != tiles.end() ? t->second : default_tile);
  }
  std::vector<SizeMap> out;
  std::set<SizeMap> seen;
  auto add = [&](const SizeMap& m) {
    if (seen.insert(m).second) out.push_back(m);
  };
  // One size at a time: a bug at one size's boundary shows alone, with the
  // others where the spec's author checked them.
  for (const auto& kv : values)
    for (std::int64_t v : kv.second) {
      SizeMap m = defaults;
      m[kv.first] = v;
      add(m);
    }
  // All at once: the corner tile, partial in every dimension.
  for (int k = 0; k < internal::kBoundaryRoles; ++k) {
    SizeMap m = defaults;
    bool any = false;
    for (const auto& kv : values)
      if (std::size_t(k) < kv.second.size()) {
        m[kv.first] = kv.second[std::size_t(k)];
        any = true;
      }
    if (any) add(m);
  }
  return out;
}

SizeSuite plan_suite(const std::string& path, SuiteKind kind, const std::map<std::string, std::int64_t>& sizes,
                     const std::optional<std::chrono::steady_clock::time_point>& deadline) {
  SizeSuite suite;
  // The spec at the base sizes first: its errors (and a missing PTX file)
  // are the spec's, not one combination's.
  ReadSpec read = read_spec(path, sizes, deadline);
  if (!read.base.spec) {
    suite.error = read.base.error;
    suite.timed_out = read.base.timed_out;
    return suite;
  }
  const SizesDecl& decl = read.parsed->sizes;
  suite.names = decl.order;
  std::vector<SizeMap> combinations;
  if (kind == SuiteKind::Boundary) {
    if (!decl.present) {
      suite.error = path + ": the spec has no \"sizes\": a boundary suite varies the sizes it declares, like "
                           "\"sizes\": {\"N\": 1024}";
      return suite;
    }
    combinations = boundary_sizes(read.base.spec->sizes, decl.tiles, internal::kDefaultTile);
  } else {
    if (!decl.has_suite) {
      suite.error = path + ": the spec has no \"suite\": a list of sizes to run, like \"suite\": [{\"M\": 1}, "
                           "{\"M\": 65, \"K\": 17}]";
      return suite;
    }
    combinations.reserve(decl.suite.size());
    for (const SizeMap& entry : decl.suite) {
      SizeMap m = read.base.spec->sizes;
      for (const auto& kv : entry) m[kv.first] = kv.second;
      combinations.push_back(std::move(m));
    }
  }
  suite.cases.reserve(combinations.size());
  for (SizeMap& m : combinations) {
    SizeCase c;
    c.sizes = std::move(m);
    suite.cases.push_back(std::move(c));
  }
  // Each size from the JSON parsed above, without reading the file again.
  std::shared_ptr<const ParsedSpec> parsed = read.parsed;
  suite.evaluate = [parsed, path, kind](SizeCase& c) {
    if (c.spec || !c.skipped.empty() || !c.error.empty()) return;
    SpecResult r = spec_result(path, [&](SpecResult& into) {
      json j = parsed->j;
      into.spec = spec_at(j, parsed->sizes, path, nullptr, c.sizes);
    });
    if (r.spec) c.spec = std::move(r.spec);
    else if (kind == SuiteKind::Boundary) c.skipped = without_path(r.error, path);
    else c.error = r.error;
  };
  return suite;
}

SizeSuite load_suite(const std::string& path, SuiteKind kind, const std::map<std::string, std::int64_t>& sizes) {
  SizeSuite suite = plan_suite(path, kind, sizes);
  for (SizeCase& c : suite.cases) suite.evaluate(c);
  return suite;
}

}  // namespace tileverify
