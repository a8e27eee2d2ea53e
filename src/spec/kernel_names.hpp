// Which kernel of a PTX file a spec's "kernel" names. Compilers mangle C++
// names (a template kernel sgemm_smem<32> is _Z10sgemm_smemILi32EEvPKfS1_Pfi),
// so a spec may give the name as people write it. Not public.
#pragma once

#include "tileverify/ptx.hpp"

#include <optional>
#include <string>

namespace tileverify::internal {

// The function of m that `name` names: the one of that exact name, else the
// one .entry whose demangled name ("void sgemm_smem<32>(float const*, ...)")
// or its base ("sgemm_smem<32>") is `name`. None, with the reason in *error
// (bad input, listing the file's kernels mangled and demangled), when no
// kernel or more than one matches.
std::optional<std::string> kernel_entry(const ptx::Module& m, const std::string& name, std::string* error);

}  // namespace tileverify::internal
