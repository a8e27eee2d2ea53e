// Prints the "struct" spec entry of a CUTLASS 2.x device::Gemm kernel's
// parameter (cutlass::Kernel<GemmKernel>'s Params, passed by value) for a
// problem size, as JSON: the Params that Gemm::initialize builds, field by
// field at the offsets this compiler gives them. Host code only (no GPU):
// build.sh compiles it against the same CUTLASS headers as the kernel, with
// GEMM_SOURCE the file that defines `Gemm` (included unedited, its main
// renamed, so the Gemm type here is the kernel's):
//   nvcc -DGEMM_SOURCE='"14_ampere_tf32_tensorop_gemm/ampere_tf32_tensorop_gemm.cu"' ...
//   params_sm80 M N K alpha beta
#define main gemm_source_main
#include GEMM_SOURCE
#undef main

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Kernel = Gemm::GemmKernel;
using Params = Kernel::Params;

// Stand-ins for the device pointers, told apart in the Params bytes.
struct Tensor {
  const char* name;
  std::uintptr_t fake;
};
const Tensor kTensors[] = {{"A", 0xA0A0A0A000}, {"B", 0xB0B0B0B000}, {"C", 0xC0C0C0C000}, {"D", 0xD0D0D0D000}};

std::vector<std::string> fields;

// A Params member: its pointers (a stand-in above, or a null the kernel only
// compares) as pointer fields, its other words as one s32 list each run.
// `first`: the byte of the member that `at` is (names give bytes from the
// member's start).
void member(const Params& p, const void* at, std::size_t size, const char* name, bool has_null_pointers,
            std::size_t first = 0) {
  const std::size_t base = std::size_t(static_cast<const char*>(at) - reinterpret_cast<const char*>(&p));
  const auto* bytes = static_cast<const unsigned char*>(at);
  std::string run;
  std::size_t run_at = 0;
  auto flush = [&] {
    if (!run.empty())
      fields.push_back("{\"name\": \"" + std::string(name) + "+" + std::to_string(first + run_at - base) + "\", \"offset\": " +
                       std::to_string(run_at) + ", \"dtype\": \"s32\", \"value\": [" + run + "]}");
    run.clear();
  };
  for (std::size_t o = 0; o < size;) {
    std::uint64_t w8 = 0;
    if (o % 8 == 0 && o + 8 <= size && (base + o) % 8 == 0) std::memcpy(&w8, bytes + o, 8);
    const char* tensor = nullptr;
    for (const Tensor& t : kTensors)
      if (w8 == t.fake) tensor = t.name;
    if (tensor || (has_null_pointers && o % 8 == 0 && o + 8 <= size && w8 == 0 && (base + o) % 8 == 0)) {
      flush();
      fields.push_back("{\"name\": \"" + std::string(name) + "+" + std::to_string(first + o) + "\", \"offset\": " +
                       std::to_string(base + o) + ", \"tensor\": " +
                       (tensor ? "\"" + std::string(tensor) + "\"" : std::string("null")) + "}");
      o += 8;
      continue;
    }
    std::int32_t w4 = 0;
    std::memcpy(&w4, bytes + o, 4);
    if (run.empty()) run_at = base + o;
    run += (run.empty() ? "" : ", ") + std::to_string(w4);
    o += 4;
  }
  flush();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: params_sm80 M N K alpha beta\n");
    return 2;
  }
  const int m = std::atoi(argv[1]), n = std::atoi(argv[2]), k = std::atoi(argv[3]);
  const float alpha = float(std::atof(argv[4])), beta = float(std::atof(argv[5]));
  cutlass::gemm::GemmCoord problem(m, n, k);
  auto ptr = [](int i, auto* type) { return reinterpret_cast<decltype(type)>(kTensors[i].fake); };
  // What Gemm::initialize does for one split-k slice.
  Gemm::Arguments args(problem, {ptr(0, (Gemm::ElementA*)nullptr), k}, {ptr(1, (Gemm::ElementB*)nullptr), k},
                       {ptr(2, (Gemm::ElementC*)nullptr), n}, {ptr(3, (Gemm::ElementC*)nullptr), n}, {alpha, beta});
  cutlass::gemm::GemmCoord grid = Gemm::ThreadblockSwizzle().get_tiled_shape(
      problem, {Gemm::ThreadblockShape::kM, Gemm::ThreadblockShape::kN, Gemm::ThreadblockShape::kK}, 1);
  Params p(args.problem_size, grid, args.ref_A.non_const_ref(), args.ref_B.non_const_ref(),
           args.ref_C.non_const_ref(), args.ref_D, args.epilogue);

  member(p, &p.problem_size, sizeof p.problem_size, "problem_size", false);
  member(p, &p.grid_tiled_shape, sizeof p.grid_tiled_shape, "grid_tiled_shape", false);
  member(p, &p.swizzle_log_tile, sizeof p.swizzle_log_tile, "swizzle_log_tile", false);
  member(p, &p.params_A, sizeof p.params_A, "params_A", false);
  member(p, &p.ref_A, sizeof p.ref_A, "ref_A", false);
  member(p, &p.params_B, sizeof p.params_B, "params_B", false);
  member(p, &p.ref_B, sizeof p.ref_B, "ref_B", false);
  member(p, &p.params_C, sizeof p.params_C, "params_C", false);
  member(p, &p.ref_C, sizeof p.ref_C, "ref_C", false);
  member(p, &p.params_D, sizeof p.params_D, "params_D", false);
  member(p, &p.ref_D, sizeof p.ref_D, "ref_D", false);
  const std::size_t op = std::size_t(reinterpret_cast<const char*>(&p.output_op) - reinterpret_cast<const char*>(&p));
  fields.push_back("{\"name\": \"output_op.alpha\", \"offset\": " + std::to_string(op) + ", \"dtype\": \"f32\", \"value\": " +
                   std::to_string(alpha) + "}");
  fields.push_back("{\"name\": \"output_op.beta\", \"offset\": " + std::to_string(op + 4) +
                   ", \"dtype\": \"f32\", \"value\": " + std::to_string(beta) + "}");
  member(p, reinterpret_cast<const char*>(&p.output_op) + 8, sizeof p.output_op - 8, "output_op", true, 8);
  member(p, &p.semaphore, sizeof p.semaphore, "semaphore", true);
  member(p, &p.gemm_k_size, sizeof p.gemm_k_size, "gemm_k_size", false);
  member(p, &p.gather_A_indices, sizeof p.gather_A_indices, "gather_A_indices", true);
  member(p, &p.gather_B_indices, sizeof p.gather_B_indices, "gather_B_indices", true);
  member(p, &p.scatter_D_indices, sizeof p.scatter_D_indices, "scatter_D_indices", true);

  dim3 g = Gemm::ThreadblockSwizzle().get_grid_shape(grid);
  std::printf("{\"grid\": [%u, %u, %u], \"block\": [%d], \"dynamic_shared\": %zu,\n", g.x, g.y, g.z,
              Kernel::kThreadCount, sizeof(Kernel::SharedStorage));
  std::printf(" \"struct\": {\"bytes\": %zu, \"fields\": [\n", sizeof(Params));
  for (std::size_t i = 0; i < fields.size(); ++i)
    std::printf("  %s%s\n", fields[i].c_str(), i + 1 < fields.size() ? "," : "");
  std::printf(" ]}}\n");
  return 0;
}
