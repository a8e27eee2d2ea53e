// Command-line values read with range checks (args.hpp).
#include "args.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tileverify::cli {

namespace {

// The value as the user typed it, quoted when it is empty or holds spaces
// or unprintable bytes (so that the message shows where it starts and ends).
std::string as_given(const std::string& text) {
  bool plain = !text.empty();
  for (unsigned char c : text) plain = plain && c > 0x20 && c < 0x7f && c != '\'';
  if (plain) return text;
  std::string q = "'";
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f) {
      q += char(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      q += buf;
    }
  }
  return q + "'";
}

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// Decimal digits to a number no larger than hi; false on overflow past hi.
bool digits_value(const std::string& s, std::uint64_t hi, std::uint64_t* out) {
  std::uint64_t v = 0;
  for (char c : s) {
    std::uint64_t d = std::uint64_t(c - '0');
    if (v > (hi - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

}  // namespace

std::string parse_count(const std::string& option, const std::string& text, std::uint64_t lo, std::uint64_t hi,
                        const std::string& meaning, std::uint64_t* out) {
  std::string why;
  std::uint64_t v = 0;
  if (!text.empty() && text[0] == '-' && all_digits(text.substr(1))) why = "negative";
  else if (!all_digits(text)) why = "not a whole number";
  else if (!digits_value(text, hi, &v)) why = "too large";
  else if (v < lo) why = "too small";
  if (!why.empty())
    return option + " " + as_given(text) + ": " + why + "; it must be a whole number from " + std::to_string(lo) + " to " +
           std::to_string(hi) + " (" + meaning + ")";
  *out = v;
  return "";
}

std::string parse_cta(const std::string& text, Dim3* out) {
  const std::string rule = "--cta is x,y,z: 1 to 3 whole numbers, each below 2147483648 (missing ones are 0), like 3,0,0";
  std::uint32_t v[3] = {0, 0, 0};
  std::size_t n = 0, start = 0;
  while (true) {
    std::size_t comma = text.find(',', start);
    std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (n == 3) return "--cta " + as_given(text) + ": more than 3 components; " + rule;
    static const char* axis[3] = {"x", "y", "z"};
    std::uint64_t u = 0;
    if (!all_digits(part))
      return "--cta " + as_given(text) + ": " + axis[n] + " is " + as_given(part) + ", not a whole number; " + rule;
    if (!digits_value(part, 2147483647, &u))
      return "--cta " + as_given(text) + ": " + axis[n] + " is " + part + ", too large; " + rule;
    v[n++] = std::uint32_t(u);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  *out = Dim3{v[0], v[1], v[2]};
  return "";
}

std::string parse_shard(const std::string& text, unsigned* index, unsigned* count) {
  const std::string rule = "--shard is I/N: shard I (0 to N - 1) of N shards, N from 2 to 4096, like 0/4";
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos) return "--shard " + as_given(text) + ": no '/'; " + rule;
  const std::string i = text.substr(0, slash), n = text.substr(slash + 1);
  std::uint64_t iv = 0, nv = 0;
  if (!all_digits(i) || !digits_value(i, 4095, &iv)) return "--shard " + as_given(text) + ": I is " + as_given(i) + "; " + rule;
  if (!all_digits(n) || !digits_value(n, 4096, &nv) || nv < 2)
    return "--shard " + as_given(text) + ": N is " + as_given(n) + "; " + rule;
  if (iv >= nv) return "--shard " + as_given(text) + ": I must be below N; " + rule;
  *index = unsigned(iv);
  *count = unsigned(nv);
  return "";
}

std::string parse_timeout(const std::string& text, double* seconds) {
  const std::string rule = "it must be a number of seconds from 0 to 1000000 (0: no time limit), like 300 or 2.5";
  // Plain decimal notation only: strtod would also take "inf", "nan" and
  // hex floats, and skip leading spaces.
  bool plain = !text.empty();
  for (char c : text) plain = plain && ((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-');
  char* end = nullptr;
  double v = plain ? std::strtod(text.c_str(), &end) : 0;
  if (!plain || end != text.c_str() + text.size()) return "--timeout " + as_given(text) + ": not a number; " + rule;
  if (std::signbit(v) && v != 0) return "--timeout " + as_given(text) + ": negative; " + rule;
  // strtod gives HUGE_VAL for 1e999: not finite, caught here too.
  if (!std::isfinite(v) || v > kMaxTimeoutSeconds) return "--timeout " + as_given(text) + ": too large; " + rule;
  // 1e-400 reads as 0, which would mean no limit at all: a positive
  // timeout is at least a millisecond.
  std::string mantissa = text.substr(0, text.find_first_of("eE"));
  bool nonzero = mantissa.find_first_of("123456789") != std::string::npos;
  if ((v == 0 && nonzero) || (v > 0 && v < 1e-3))
    return "--timeout " + as_given(text) + ": too small (a positive timeout is at least 0.001 s); " + rule;
  *seconds = v;
  return "";
}

std::string parse_tolerance(const std::string& option, const std::string& text, double* value) {
  const std::string rule = "it must be a number from 0 to 1e6, like 1e-3 or 0.02";
  bool plain = !text.empty();
  for (char c : text) plain = plain && ((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-');
  char* end = nullptr;
  double v = plain ? std::strtod(text.c_str(), &end) : 0;
  if (!plain || end != text.c_str() + text.size()) return option + " " + as_given(text) + ": not a number; " + rule;
  if (std::signbit(v) || !std::isfinite(v) || v > 1e6) return option + " " + as_given(text) + ": out of range; " + rule;
  *value = v;
  return "";
}

std::string parse_size(const std::string& option, const std::string& text, std::uint64_t* bytes) {
  const std::string rule = "it must be a positive number of bytes, optionally with K, M, G or T (binary units: 1K = 1024), "
                           "like 8G or 512M";
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  std::string suffix = text.substr(digits);
  for (char& c : suffix) c = char(std::toupper(static_cast<unsigned char>(c)));
  int shift = -1;
  static const std::pair<const char*, int> units[] = {{"", 0},    {"B", 0},     {"K", 10},    {"KIB", 10},
                                                       {"M", 20}, {"MIB", 20},  {"G", 30},    {"GIB", 30},
                                                       {"T", 40}, {"TIB", 40}};
  for (const auto& unit : units)
    if (suffix == unit.first) shift = unit.second;
  if (digits == 0 || shift < 0) {
    if (!text.empty() && text[0] == '-') return option + " " + as_given(text) + ": negative; " + rule;
    return option + " " + as_given(text) + ": not a size; " + rule;
  }
  std::uint64_t v = 0;
  if (!digits_value(text.substr(0, digits), UINT64_MAX >> shift, &v))
    return option + " " + as_given(text) + ": too large (2^64 bytes or more); " + rule;
  if (v == 0) return option + " " + as_given(text) + ": zero; " + rule;
  *bytes = v << shift;
  return "";
}

std::string parse_size_choice(const std::string& text, std::map<std::string, std::int64_t>* sizes) {
  const std::string rule = "--size is NAME=VALUE, a size of the spec's \"sizes\" and a whole number from 1 to "
                           "281474976710656, like M=129";
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos) return "--size " + as_given(text) + ": no '='; " + rule;
  const std::string name = text.substr(0, eq), value = text.substr(eq + 1);
  bool ident = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name) ident = ident && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!ident) return "--size " + as_given(text) + ": " + (name.empty() ? std::string("no name") : "the name " + as_given(name) + " is not an identifier") + "; " + rule;
  std::uint64_t v = 0;
  std::string why;
  if (!all_digits(value)) why = value.empty() ? "no value" : "the value " + as_given(value) + " is not a whole number";
  else if (!digits_value(value, std::uint64_t(1) << 48, &v)) why = "the value is too large";
  else if (v == 0) why = "the value is 0";
  if (!why.empty()) return "--size " + as_given(text) + ": " + why + "; " + rule;
  if (!sizes->emplace(name, std::int64_t(v)).second)
    return "--size " + as_given(text) + ": " + name + " is given twice (" + name + "=" + std::to_string(sizes->at(name)) +
           " before)";
  return "";
}

std::string parse_shapes(const std::string& text, bool* boundary) {
  if (text == "boundary" || text == "suite") {
    *boundary = text == "boundary";
    return "";
  }
  return "--shapes " + as_given(text) + ": it must be \"boundary\" (the boundary sizes of the spec's \"sizes\" and "
         "\"tiles\") or \"suite\" (the spec's \"suite\" list)";
}

}  // namespace tileverify::cli
