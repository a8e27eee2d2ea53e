// Prints the by-value Params of CUTLASS example 48's kernel
// (cutlass::device_kernel<GemmUniversal<...>>) as the fields of a tileverify
// spec's "struct" entry: every offset is taken from the compiled Params type
// itself, and the tile scheduler's fields are computed by CUTLASS's own host
// code, so the spec holds what GemmUniversalAdapter would pass to the GPU.
//
// Host only, no GPU or driver needed: the two CUtensorMaps (which
// cuTensorMapEncodeTiled would build on a GPU) are left to the spec's
// "tensor_map" form; this prints where they are. Build and run (build.sh):
//   nvcc -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -I $CUTLASS/include
//     -I $CUTLASS/tools/util/include -I $CUTLASS/examples/common
//     -DEX48=\"$CUTLASS/examples/48_hopper_warp_specialized_gemm/48_hopper_warp_specialized_gemm.cu\"
//     48_params.cu -o 48_params && ./48_params M N K SMS MAX_ACTIVE_CLUSTERS
// The example's source is included unedited, so the types are exactly the
// ones its kernel was compiled with; its main() is renamed out of the way.
#define main example48_main
#include EX48
#undef main

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using Kernel = Gemm::GemmKernel;
using Params = Kernel::Params;

bool first_field = true;

std::size_t offset_in(const Params& p, const void* field) {
  return std::size_t(static_cast<const char*>(field) - reinterpret_cast<const char*>(&p));
}

void open_field(const char* name, std::size_t offset) {
  std::printf("%s\n      {\"name\": \"%s\", \"offset\": %zu", first_field ? "" : ",", name, offset);
  first_field = false;
}

// A field's value is printed from the field itself (enums as their integer),
// so the offset and the value cannot come from different objects.
template <class T>
void scalar(const Params& p, const char* name, const T& field, const char* dtype) {
  open_field(name, offset_in(p, &field));
  if constexpr (std::is_floating_point_v<T>)
    std::printf(", \"dtype\": \"%s\", \"value\": %.9g}", dtype, double(field));
  else if constexpr (std::is_enum_v<T>)
    std::printf(", \"dtype\": \"%s\", \"value\": %lld}", dtype, static_cast<long long>(field));
  else if constexpr (std::is_signed_v<T>)
    std::printf(", \"dtype\": \"%s\", \"value\": %lld}", dtype, static_cast<long long>(field));
  else
    std::printf(", \"dtype\": \"%s\", \"value\": %llu}", dtype, static_cast<unsigned long long>(field));
}

// A null pointer is given as the integer the host passes, 0: the kernel
// tests several for null (`if (alpha_ptr_array != nullptr)`), and a field
// {"tensor": null} did not compare equal to 0 there (tileverify at 7e4b1e2).
void pointer(const Params& p, const char* name, const void* field, const char* tensor) {
  open_field(name, offset_in(p, field));
  if (tensor) std::printf(", \"tensor\": \"%s\"}", tensor);
  else std::printf(", \"dtype\": \"u64\", \"value\": 0}");
}

// The maps are rank 3 (cp.async.bulk.tensor.3d): K, then M (or N), then the
// batch L, innermost first, as CuTe's make_tma_copy builds them from the
// (M, K, L) view of A; a box is one batch deep.
void tensor_map(const Params& p, const char* name, const void* desc, const char* tensor, int k, int rows, int box_k,
                int box_rows) {
  open_field(name, offset_in(p, desc));
  std::printf(", \"tensor_map\": {\"tensor\": \"%s\", \"dims\": [%d, %d, 1], \"box\": [%d, %d, 1], "
              "\"swizzle\": \"128B\"}}",
              tensor, k, rows, box_k, box_rows);
}

void divmod_pow2(const Params& p, const std::string& name, const cutlass::FastDivmodU64Pow2& d) {
  scalar(p, (name + ".divisor").c_str(), d.divisor, "u64");
  scalar(p, (name + ".shift_right").c_str(), d.shift_right, "u32");
}

void divmod(const Params& p, const std::string& name, const cutlass::FastDivmodU64& d) {
  scalar(p, (name + ".divisor").c_str(), d.divisor, "u64");
  scalar(p, (name + ".multiplier").c_str(), d.multiplier, "u64");
  scalar(p, (name + ".shift_right").c_str(), d.shift_right, "u32");
  scalar(p, (name + ".round_up").c_str(), d.round_up, "u32");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s M N K SM_COUNT MAX_ACTIVE_CLUSTERS\n", argv[0]);
    return 2;
  }
  const int m = std::atoi(argv[1]), n = std::atoi(argv[2]), k = std::atoi(argv[3]);

  // What the example's args_from_options passes (alpha 1, beta 0, the
  // heuristic raster order, swizzle 1), with the SM count and the number of
  // co-resident clusters chosen instead of queried, as a user may.
  cutlass::KernelHardwareInfo hw;
  hw.device_id = 0;
  hw.sm_count = std::atoi(argv[4]);
  hw.max_active_clusters = std::atoi(argv[5]);
  Kernel::TileSchedulerArguments sched_args;
  sched_args.max_swizzle_size = 1;
  sched_args.raster_order = RasterOrderOptions::Heuristic;

  // Kernel::to_underlying_arguments, less the mainloop's TMA maps (they need
  // the driver); the same steps otherwise.
  Params p{};
  p.mode = cutlass::gemm::GemmUniversalMode::kGemm;
  p.problem_shape = {m, n, k};
  p.epilogue.dC = cutlass::make_cute_packed_stride(StrideC{}, {m, n, 1});
  p.epilogue.dD = cutlass::make_cute_packed_stride(StrideD{}, {m, n, 1});
  p.hw_info = hw;
  auto problem_mnkl = cute::append<4>(p.problem_shape, 1);
  constexpr uint32_t subtiles = Kernel::CollectiveEpilogue::get_store_pipe_increment(Kernel::TileShape{});
  p.scheduler = Kernel::TileScheduler::to_underlying_arguments(problem_mnkl, Kernel::TileShape{},
      Kernel::ClusterShape{}, hw, sched_args, nullptr, subtiles);
  const dim3 grid = Kernel::get_grid_shape(p);
  const dim3 block = Kernel::get_block_shape();

  std::printf("{\"sizeof_params\": %zu, \"alignof_params\": %zu, \"grid\": [%u, %u, %u], \"block\": [%u, %u, %u],\n",
              sizeof(Params), alignof(Params), grid.x, grid.y, grid.z, block.x, block.y, block.z);
  std::printf(" \"shared_storage\": %zu, \"stages\": %d,\n", sizeof(Kernel::SharedStorage),
              int(Kernel::CollectiveMainloop::DispatchPolicy::Stages));
  std::printf(" \"struct\": {\"bytes\": %zu, \"fields\": [", sizeof(Params));
  scalar(p, "mode", p.mode, "s32");
  scalar(p, "problem_shape.M", cute::get<0>(p.problem_shape), "s32");
  scalar(p, "problem_shape.N", cute::get<1>(p.problem_shape), "s32");
  scalar(p, "problem_shape.K", cute::get<2>(p.problem_shape), "s32");
  // The maps' boxes: K innermost (A row-major, B column-major: both
  // K-contiguous), a stage's 32 elements of K (128 bytes, the 128-byte
  // swizzle's span), and the rows of the CTA's tile divided among the CTAs
  // that share it: A's 128 rows of M are multicast to the cluster's N
  // dimension (2 CTAs, 64 rows each), B's 128 of N to its M dimension (4, 32).
  using Tile = Kernel::TileShape;
  using Cluster = Kernel::ClusterShape;
  tensor_map(p, "mainloop.tma_load_a", p.mainloop.tma_load_a.get_tma_descriptor(), "A", k, m,
             cute::size<2>(Tile{}), cute::size<0>(Tile{}) / cute::size<1>(Cluster{}));
  tensor_map(p, "mainloop.tma_load_b", p.mainloop.tma_load_b.get_tma_descriptor(), "B", k, n,
             cute::size<2>(Tile{}), cute::size<1>(Tile{}) / cute::size<0>(Cluster{}));
  scalar(p, "mainloop.tma_transaction_bytes", p.mainloop.tma_transaction_bytes, "u32");
  scalar(p, "mainloop.tma_transaction_bytes_mk", p.mainloop.tma_transaction_bytes_mk, "u32");
  scalar(p, "mainloop.tma_transaction_bytes_nk", p.mainloop.tma_transaction_bytes_nk, "u32");
  // alpha and beta are the spec's "alpha" and "beta" entries, which the
  // reference takes as plain arguments.
  open_field("epilogue.thread.alpha", offset_in(p, &p.epilogue.thread.alpha));
  std::printf(", \"param\": \"alpha\"}");
  open_field("epilogue.thread.beta", offset_in(p, &p.epilogue.thread.beta));
  std::printf(", \"param\": \"beta\"}");
  pointer(p, "epilogue.thread.alpha_ptr", &p.epilogue.thread.alpha_ptr, nullptr);
  pointer(p, "epilogue.thread.beta_ptr", &p.epilogue.thread.beta_ptr, nullptr);
  pointer(p, "epilogue.thread.alpha_ptr_array", &p.epilogue.thread.alpha_ptr_array, nullptr);
  pointer(p, "epilogue.thread.beta_ptr_array", &p.epilogue.thread.beta_ptr_array, nullptr);
  pointer(p, "epilogue.ptr_C", &p.epilogue.ptr_C, "C");
  scalar(p, "epilogue.dC[1]", cute::get<1>(p.epilogue.dC), "s64");
  scalar(p, "epilogue.dC[2]", cute::get<2>(p.epilogue.dC), "s64");
  pointer(p, "epilogue.ptr_D", &p.epilogue.ptr_D, "D");
  scalar(p, "epilogue.dD[1]", cute::get<1>(p.epilogue.dD), "s64");
  scalar(p, "epilogue.dD[2]", cute::get<2>(p.epilogue.dD), "s64");
  scalar(p, "hw_info.device_id", p.hw_info.device_id, "s32");
  scalar(p, "hw_info.sm_count", p.hw_info.sm_count, "s32");
  scalar(p, "hw_info.max_active_clusters", p.hw_info.max_active_clusters, "s32");
  scalar(p, "hw_info.cluster_shape.x", p.hw_info.cluster_shape.x, "u32");
  scalar(p, "hw_info.cluster_shape.y", p.hw_info.cluster_shape.y, "u32");
  scalar(p, "hw_info.cluster_shape.z", p.hw_info.cluster_shape.z, "u32");
  scalar(p, "hw_info.cluster_shape_fallback.x", p.hw_info.cluster_shape_fallback.x, "u32");
  scalar(p, "hw_info.cluster_shape_fallback.y", p.hw_info.cluster_shape_fallback.y, "u32");
  scalar(p, "hw_info.cluster_shape_fallback.z", p.hw_info.cluster_shape_fallback.z, "u32");
  const auto& s = p.scheduler;
  divmod_pow2(p, "scheduler.divmod_cluster_shape_major", s.divmod_cluster_shape_major_);
  divmod_pow2(p, "scheduler.divmod_cluster_shape_minor", s.divmod_cluster_shape_minor_);
  divmod(p, "scheduler.divmod_batch", s.divmod_batch_);
  divmod(p, "scheduler.divmod_cluster_blk_major", s.divmod_cluster_blk_major_);
  scalar(p, "scheduler.blocks_per_problem", s.blocks_per_problem_, "u64");
  scalar(p, "scheduler.log_swizzle_size", s.log_swizzle_size_, "s32");
  scalar(p, "scheduler.raster_order", s.raster_order_, "s32");
  scalar(p, "scheduler.problem_tiles_m", s.problem_tiles_m_, "u32");
  scalar(p, "scheduler.problem_tiles_n", s.problem_tiles_n_, "u32");
  scalar(p, "scheduler.problem_tiles_l", s.problem_tiles_l_, "u32");
  scalar(p, "scheduler.cluster_shape_m", s.cluster_shape_m_, "u32");
  scalar(p, "scheduler.cluster_shape_n", s.cluster_shape_n_, "u32");
  pointer(p, "workspace", &p.workspace, nullptr);
  std::printf("\n ]}}\n");
  return 0;
}
