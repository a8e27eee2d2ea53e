#include "demangle.hpp"

#include <cstdlib>
#include <cxxabi.h>
#include <memory>

namespace tileverify::util {

std::string demangle(const std::string& name) {
  if (name.size() < 3 || name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || !out) return name;
  return out.get();
}

std::string demangled_base(const std::string& name) {
  std::string d = demangle(name);
  if (d == name) return name;
  // The parameter list: the last top-level '(' ... ')' (template arguments may
  // hold parentheses, as in sgemm<(int)32>).
  int depth = 0;
  std::size_t open = std::string::npos;
  for (std::size_t i = d.size(); i-- > 0;) {
    char c = d[i];
    if (c == ')' || c == '>') ++depth;
    else if (c == '(' || c == '<') {
      --depth;
      if (depth == 0 && c == '(') {
        open = i;
        break;
      }
    }
  }
  std::string base = open == std::string::npos ? d : d.substr(0, open);
  // The return type of a function template ("void sgemm_smem<32>"): the last
  // top-level space.
  depth = 0;
  for (std::size_t i = base.size(); i-- > 0;) {
    char c = base[i];
    if (c == '>' || c == ')') ++depth;
    else if (c == '<' || c == '(') --depth;
    else if (c == ' ' && depth == 0) return base.substr(i + 1);
  }
  return base;
}

}  // namespace tileverify::util
