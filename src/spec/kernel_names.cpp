// Which kernel of a PTX file a spec's "kernel" names (kernel_names.hpp).
#include "kernel_names.hpp"

#include "../util/demangle.hpp"

#include <vector>

namespace tileverify {

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

}  // namespace tileverify
