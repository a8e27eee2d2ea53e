// Names in reports as the CUDA source spells them: nvcc's PTX names kernels
// and function-local statics by their C++ mangled names
// ("_ZZ4red5PKfPfE1s" is red5's `static __shared__ float s[]`).
#pragma once

#include <string>

namespace tileverify::util {

// A mangled name as people write it: demangled, without parameter lists and
// return types ("_ZZ4red5PKfPfE1s" -> "red5::s",
// "_Z10sgemm_smemILi32EEvPKfS1_Pfi" -> "sgemm_smem<32>",
// "_ZZ10sgemm_smemILi32EEvPKfS1_PfiE4tile" -> "sgemm_smem<32>::tile").
// Anything else (a name that is not mangled, or that does not demangle) comes
// back unchanged.
std::string source_name(const std::string& name);

// `text` with every mangled name in it (a word that starts with _Z) replaced
// by its source_name; the rest of the text unchanged.
std::string source_names_in(const std::string& text);

}  // namespace tileverify::util
