#include "source_name.hpp"

#include "demangle.hpp"

namespace tileverify::util {

namespace {

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

// Drops the parameter lists of a demangled name (a '(' ... ')' at the top
// level of template arguments, right after a name or a template argument
// list) and a cv-qualifier after one; "(anonymous namespace)" is a name and
// stays. Empty when the brackets do not pair up (an operator< or operator(),
// which the caller then leaves demangled in full).
std::string without_parameters(const std::string& d) {
  std::string out;
  int angle = 0, brace = 0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    const char c = d[i];
    if (c == '<') ++angle;
    if (c == '>') --angle;
    if (c == '{') ++brace;
    if (c == '}') --brace;
    if (angle < 0 || brace < 0) return "";
    const bool after_name = !out.empty() && (word_char(out.back()) || out.back() == '>');
    if (c == '(' && angle == 0 && brace == 0 && after_name) {
      int paren = 0;
      std::size_t j = i;
      for (; j < d.size(); ++j) {
        if (d[j] == '(') ++paren;
        if (d[j] == ')' && --paren == 0) break;
      }
      if (j == d.size()) return "";
      i = j;
      for (const char* q : {" const", " volatile"})
        if (d.compare(i + 1, std::string(q).size(), q) == 0) i += std::string(q).size();
      continue;
    }
    out += c;
  }
  return angle == 0 && brace == 0 ? out : "";
}

}  // namespace

std::string source_name(const std::string& name) {
  const std::string d = demangle(name);
  if (d == name) return name;
  std::string s = without_parameters(d);
  if (s.empty()) return d;
  // The return type of a function template ("void sgemm_smem<32>"): up to the
  // last space outside brackets.
  int depth = 0;
  for (std::size_t i = s.size(); i-- > 0;) {
    const char c = s[i];
    if (c == '>' || c == ')' || c == '}') ++depth;
    else if (c == '<' || c == '(' || c == '{') --depth;
    else if (c == ' ' && depth == 0) return s.substr(i + 1);
  }
  return s;
}

std::string source_names_in(const std::string& text) {
  if (text.find("_Z") == std::string::npos) return text;
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (text.compare(i, 2, "_Z") == 0 && (i == 0 || !word_char(text[i - 1]))) {
      std::size_t j = i;
      while (j < text.size() && word_char(text[j])) ++j;
      out += source_name(text.substr(i, j - i));
      i = j;
    } else {
      out += text[i++];
    }
  }
  return out;
}

}  // namespace tileverify::util
