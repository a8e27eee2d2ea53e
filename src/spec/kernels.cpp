// Spec files: launch shapes (block, grid, cluster, CTA) within CUDA's
// limits, and the "kernel"/"ref"/"opt" entries.
#include "reader.hpp"

namespace tileverify::spec_detail {

namespace fs = std::filesystem;

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


// ------------------------------------------------------------ kernels

// extern .shared bytes: at most 2^32 (a 32-bit shared address space); the PTX
// lowering checks the target's real maximum (228 KB per block on sm_90).
constexpr std::uint64_t kDynamicSharedMax = std::uint64_t(1) << 32;

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


}  // namespace tileverify::spec_detail
