// demangle: a C++ symbol as the source spells it ("_ZZ4red5E1s" ->
// "red5::s", "_Z10sgemm_smemILi32EEvPKfS1_Pfi" -> "void sgemm_smem<32>(...)"),
// for reports and for matching a spec's kernel names; anything that is not
// an Itanium-ABI mangled name comes back unchanged.
#pragma once

#include <string>

namespace tileverify::util {

std::string demangle(const std::string& name);

// The demangled name without its parameter list and return type
// ("void sgemm_smem<32>(float const*, float*)" -> "sgemm_smem<32>"), which is
// how people name a kernel; unmangled names come back unchanged.
std::string demangled_base(const std::string& name);

}  // namespace tileverify::util
