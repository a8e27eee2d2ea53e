// Machine<D>: setting up a run (the memories of the launch arguments and
// module variables, their input symbols and initial data) and its limits
// (the memory budget, the deadline).
#include "machine.hpp"
#include "../util/units.hpp"

#include <string>
#include <type_traits>

namespace tileverify::machine {

// ------------------------------------------------------------ setup

template <class D>
void Machine<D>::setup() {
  nb_ = std::uint32_t(l_.block.count());
  if (nb_ == 0 || nb_ > 4096) bad_launch("a CTA must have between 1 and 4096 threads, not " + std::to_string(nb_));
  // A kernel compiled for a cluster shape (__cluster_dims__) runs in it when
  // the launch names none (as <<<...>>> does on a GPU); another one fails.
  cluster_ = run_cluster(p_, l_);
  if (p_.reqnctapercluster[0] != 0) {
    const Dim3 req{p_.reqnctapercluster[0], p_.reqnctapercluster[1], p_.reqnctapercluster[2]};
    if (cluster_.x != req.x || cluster_.y != req.y || cluster_.z != req.z)
      bad_launch("the launch's cluster shape is not the kernel's .reqnctapercluster " + std::to_string(req.x) + ", " +
                 std::to_string(req.y) + ", " + std::to_string(req.z));
  }
  // A cluster of several CTAs runs as one: every CTA's threads, rank after
  // rank (thread t is thread t % nb_ of CTA rank t / nb_), each CTA with its
  // own copy of the shared variables (docs/evaluator.md, "Clusters").
  ncta_ = std::uint32_t(cluster_.count());
  if (ncta_ > 1) {
    if (cluster_.x == 0 || cluster_.y == 0 || cluster_.z == 0 || ncta_ > 16)
      bad_launch("a cluster of " + std::to_string(cluster_.x) + " x " + std::to_string(cluster_.y) + " x " +
                 std::to_string(cluster_.z) + " CTAs: a cluster has 1 to 16 CTAs");
    if (l_.grid.x % cluster_.x || l_.grid.y % cluster_.y || l_.grid.z % cluster_.z)
      bad_launch("the grid is not a whole number of clusters in each dimension (CUDA C++ Programming Guide, "
                 "\"Thread Block Clusters\")");
    if (nb_ % 32 != 0)
      unsupported_launch("a cluster of CTAs of " + std::to_string(nb_) + " threads: clusters are modelled for CTAs of whole warps");
    for (std::uint32_t r = 0; r < ncta_; ++r) cta_of_rank_.push_back(cluster_cta(l_.cta, cluster_, r));
    // Reports name a thread by its CTA and its number there.
    names_.per_cta = nb_;
    for (std::uint32_t r = 0; r < ncta_; ++r) {
      const Dim3& c = cta_of_rank_[r];
      names_.ctas.push_back({c, true, Dim3{c.x / cluster_.x, c.y / cluster_.y, c.z / cluster_.z}, r});
    }
  } else {
    cta_of_rank_.push_back(l_.cta);
  }
  n_ = nb_ * ncta_;
  // One thread races with nobody (its cp.async copies are checked apart
  // from races between threads): no shadow memory, no vector clocks.
  if (n_ == 1) o_.check_races = false;
  if (l_.args.size() != p_.params.size())
    bad_launch("the program has " + std::to_string(p_.params.size()) + " parameters but the launch gives " +
               std::to_string(l_.args.size()));
  r_ = std::uint32_t(p_.registers.size());
  budget_ = o_.max_memory_bytes ? o_.max_memory_bytes : UINT64_MAX;
  reserve("the registers (" + std::to_string(r_) + " per thread)", std::uint64_t(n_) * r_, sizeof(Val<V>));
  reserve("the vector clocks of the race check", std::uint64_t(n_) * n_, sizeof(std::uint32_t));
  if constexpr (kMemo) {
    find_chains();
    setup_shadows();
  }
  regs_.assign(std::size_t(n_) * r_, Val<V>{});
  constant_values_.assign(p_.constants.size(), V{});
  constant_made_.assign(p_.constants.size(), 0);
  state_.assign(n_, TState::Run);
  arrival_.assign(n_, 0);
  pc_.assign(n_, 0);
  vc_.assign(std::size_t(n_) * n_, 0);
  w_ = n_;  // async copies add columns (machine_async.cpp, new_agent)
  param_buf_.assign(p_.params.size(), kNone);
  for (std::size_t i = 0; i < p_.params.size(); ++i) {
    const LaunchArg& a = l_.args[i];
    // A 64-bit parameter may be a pointer or a scalar (PTX does not say);
    // a narrower one must be a scalar.
    if (a.is_tensor && dtype_bytes(p_.params[i].dtype) != 8)
      bad_launch("parameter '" + p_.params[i].name + "' is a " + (p_.params[i].pointer ? "pointer" : "scalar") +
                 " but the launch gives a " + (a.is_tensor ? "tensor" : "scalar"));
    if (!a.is_tensor || a.null_pointer) continue;
    Memory<V> m;
    m.name = a.tensor.name;
    m.space = Space::Global;
    m.dtype = a.tensor.dtype;
    m.role = a.tensor.role;
    const std::uint64_t elements = a.tensor.elements();
    reserve_tensor("tensor '" + m.name + "'", elements);
    typed(m, elements, std::uint32_t(dtype_bytes(m.dtype)));
    paged(m);
    const TensorArg& ta = a.tensor;
    if (ta.init != TensorInit::Default && m.role == Role::In)
      bad_launch("tensor '" + m.name + "' is an input: only an output (or inout) tensor takes an initial value");
    if (ta.init == TensorInit::Value)
      fill_value(m, ta);
    else if (m.role == Role::In || m.role == Role::InOut || ta.init == TensorInit::Input)
      fill_inputs(m);
    param_buf_[i] = std::uint32_t(mem_.size());
    mem_.push_back(std::move(m));
  }
  setup_tensor_maps();
  setup_structs();
  setup_map_arrays();
  decl_buf_.assign(p_.buffers.size(), kNone);
  for (std::size_t i = 0; i < p_.buffers.size(); ++i) {
    const BufferDecl& b = p_.buffers[i];
    Memory<V> m;
    m.name = b.name;
    m.space = b.space;
    m.dtype = b.dtype;
    m.per_thread = b.space == Space::Local;
    typed(m, b.elements, std::uint32_t(dtype_bytes(b.dtype)));
    m.untyped = b.dtype == DType::B8;
    m.read_only = b.read_only;
    m.init = b.init;
    auto bound = l_.symbols.find(b.name);
    if (bound != l_.symbols.end() && b.space != Space::Shared && b.space != Space::Local) {
      // Filled by the host (cudaMemcpyToSymbol), replacing any initializer.
      const TensorArg& ta = bound->second;
      if (ta.role != Role::In)
        bad_launch("module variable '" + b.name + "' can only be given as an input tensor (role \"in\")");
      const std::uint64_t bytes = b.elements * dtype_bytes(b.dtype), given = ta.elements() * dtype_bytes(ta.dtype);
      if (bytes != given)
        bad_launch("module variable '" + b.name + "' has " + std::to_string(bytes) + " bytes, but the tensor '" +
                   ta.name + "' given for it has " + std::to_string(given));
      m.name = ta.name;
      m.dtype = ta.dtype;
      typed(m, ta.elements(), std::uint32_t(dtype_bytes(ta.dtype)));
      m.untyped = false;
      m.init.clear();
      m.role = Role::In;
      reserve_tensor("tensor '" + m.name + "'", m.ncells);
      paged(m);
      fill_inputs(m);
      decl_buf_[i] = std::uint32_t(mem_.size());
      mem_.push_back(std::move(m));
      continue;
    }
    if (b.from_host)
      bad_launch("'" + b.name + "' is __constant__ data the host fills (cudaMemcpyToSymbol): give it as an input "
                 "tensor, with \"symbols\": {\"" + b.name + "\": \"<tensor>\"} in the kernel's spec entry");
    const std::uint64_t total = m.per_thread ? mul_sat(b.elements, n_) : b.elements;
    reserve_cells(m, std::string(m.per_thread ? ".local" : b.space == Space::Shared ? ".shared" : "module") +
                         " array '" + b.name + "'" + (m.per_thread ? " (one per thread)" : ""),
                  total);
    m.cells.resize(total);
    if (!m.per_thread && o_.check_races) m.shadow.resize(total);
    fill_initial(m);
    decl_buf_[i] = std::uint32_t(mem_.size());
    if (ncta_ > 1 && b.space == Space::Shared) {
      // Each CTA of the cluster has its own, named "name@rankR" in reports.
      for (std::uint32_t r = 1; r < ncta_; ++r)
        reserve_cells(m, ".shared array '" + b.name + "' of CTA rank " + std::to_string(r), total);
      for (std::uint32_t r = 0; r < ncta_; ++r) {
        copy_ranks_.push_back(CopyRank{std::uint32_t(mem_.size()), r, std::uint32_t(i)});
        mem_.push_back(m);
        mem_.back().name = b.name + "@rank" + std::to_string(r);
      }
      continue;
    }
    mem_.push_back(std::move(m));
  }
  if (ncta_ > 1) {
    // Per rank and declaration: its buffer (the same for every rank unless
    // it is shared); per buffer: the rank of a shared copy.
    rank_buf_.assign(std::size_t(ncta_) * p_.buffers.size(), kNone);
    buf_rank_.assign(mem_.size(), kNone);
    for (std::uint32_t r = 0; r < ncta_; ++r)
      for (std::size_t i = 0; i < p_.buffers.size(); ++i) rank_buf_[r * p_.buffers.size() + i] = decl_buf_[i];
    for (const CopyRank& c : copy_ranks_) {
      rank_buf_[std::size_t(c.rank) * p_.buffers.size() + c.decl] = c.buf;
      buf_rank_[c.buf] = c.rank;
    }
  }
}

// CUtensorMap parameters (LaunchArg::is_tensor_map): each gets a small
// descriptor memory, which the parameter's address points to (nvcc passes
// `mov.b64 %rd, k_param_0; cvta.param.u64 %rd, %rd` to TMA), and its tensor
// a global memory, shared with any other argument that names the same
// tensor (a pointer to it, or a second map over it): outputs are collected
// by tensor name. The map must be one cuTensorMapEncodeTiled accepts (CUDA
// Driver API, "Tensor Map Object Management"), else the launch is bad.
template <class D>
void Machine<D>::setup_tensor_maps() {
  map_desc_buf_.assign(p_.params.size(), kNone);
  map_tensor_buf_.assign(p_.params.size(), kNone);
  for (std::size_t i = 0; i < p_.params.size(); ++i) {
    const LaunchArg& a = l_.args[i];
    if (!a.is_tensor_map) continue;
    const std::string& pname = p_.params[i].name;
    map_tensor_buf_[i] = map_tensor(pname, a.map, a.tensor);
    // The descriptor: 128 bytes (a .param .b8 [128]) that only TMA reads.
    Memory<V> d;
    d.name = pname;
    d.space = Space::Param;
    d.dtype = DType::B64;
    d.read_only = true;
    typed(d, 16, 8);
    d.cells.resize(16);
    d.pending.assign(16, kMapCell);
    map_desc_buf_[i] = std::uint32_t(mem_.size());
    mem_.push_back(std::move(d));
  }
}

// The memory of the tensor a map (named `name` in messages) views, after
// the checks cuTensorMapEncodeTiled makes.
template <class D>
std::uint32_t Machine<D>::map_tensor(const std::string& name, const TensorMap& mp, const TensorArg& ta) {
  const std::size_t rank = mp.dims.size();
  const std::string what = "the tensor map '" + name + "' (over '" + ta.name + "')";
  if (rank < 1 || rank > 5) bad_launch(what + " has rank " + std::to_string(rank) + ": a tensor map has 1 to 5 dimensions");
  if (mp.box.size() != rank || (!mp.strides.empty() && mp.strides.size() != rank - 1) ||
      (!mp.element_strides.empty() && mp.element_strides.size() != rank))
    bad_launch(what + " needs one box size and element stride per dimension and rank - 1 strides");
  const std::uint64_t esize = dtype_bytes(ta.dtype);
  std::uint64_t last = 0;  // the last byte an element of the map's dims can reach
  for (std::size_t d = 0; d < rank; ++d) {
    if (mp.dims[d] == 0 || mp.dims[d] > (std::uint64_t(1) << 32))
      bad_launch(what + ": dimension " + std::to_string(d) + " must be between 1 and 2^32");
    if (mp.box[d] == 0 || mp.box[d] > 256)
      bad_launch(what + ": box size " + std::to_string(mp.box[d]) + " in dimension " + std::to_string(d) +
                 " is not between 1 and 256 (cuTensorMapEncodeTiled)");
    std::uint64_t stride = esize;
    if (d > 0) {
      if (mp.strides.empty()) {
        stride = esize;
        for (std::size_t e = 0; e < d; ++e) stride = mul_sat(stride, mp.dims[e]);
      } else {
        stride = mp.strides[d - 1];
      }
      if (stride % 16 != 0) bad_launch(what + ": global strides must be multiples of 16 bytes (cuTensorMapEncodeTiled)");
    }
    last += mul_sat(mp.dims[d] - 1, stride);
  }
  if ((mp.box[0] * esize) % 16 != 0)
    bad_launch(what + ": the inner box dimension is " + std::to_string(mp.box[0] * esize) +
               " bytes, which must be a multiple of 16 (cuTensorMapEncodeTiled)");
  const std::uint32_t buf = tensor_memory(ta, what);
  if (last + esize > mem_[buf].bytes)
    bad_launch(what + ": its dimensions and strides reach byte " + std::to_string(last + esize) + " of '" + ta.name +
               "', which has " + std::to_string(mem_[buf].bytes) + " bytes");
  return buf;
}

// The memory of tensor `ta`: one per tensor name, made by the first
// argument (a pointer, a map, a struct's field) that names it; the others
// must describe it alike.
template <class D>
std::uint32_t Machine<D>::tensor_memory(const TensorArg& ta, const std::string& what) {
  auto named = [&](std::uint32_t b) { return b != kNone && mem_[b].name == ta.name; };
  std::uint32_t buf = kNone;
  for (const std::vector<std::uint32_t>* list : {&param_buf_, &map_tensor_buf_, &field_tensor_buf_})
    for (std::uint32_t b : *list)
      if (buf == kNone && named(b)) buf = b;
  if (buf != kNone) {
    const Memory<V>& m = mem_[buf];
    if (m.dtype != ta.dtype || m.elements() != ta.elements() || m.role != ta.role)
      bad_launch(what + " and another argument name the tensor '" + ta.name +
                 "' with a different dtype, shape or role: they must describe one tensor");
    return buf;
  }
  Memory<V> m;
  m.name = ta.name;
  m.space = Space::Global;
  m.dtype = ta.dtype;
  m.role = ta.role;
  const std::uint64_t elements = ta.elements();
  reserve_cells(m, "tensor '" + m.name + "'", elements);
  typed(m, elements, std::uint32_t(dtype_bytes(ta.dtype)));
  m.cells.resize(m.ncells);
  if (o_.check_races) m.shadow.resize(m.ncells);
  if (ta.init != TensorInit::Default && m.role == Role::In)
    bad_launch("tensor '" + m.name + "' is an input: only an output (or inout) tensor takes an initial value");
  if (ta.init == TensorInit::Value)
    fill_value(m, ta);
  else if (m.role == Role::In || m.role == Role::InOut || ta.init == TensorInit::Input)
    fill_inputs(m);
  buf = std::uint32_t(mem_.size());
  mem_.push_back(std::move(m));
  field_tensor_buf_.push_back(buf);  // collected with the arguments' tensors (run_program.cpp)
  return buf;
}

// By-value struct parameters (LaunchArg::is_struct, CUTLASS's Params): each
// is a read-only .param memory of its bytes, which ld.param at an offset and
// generic loads through its address (cvta.param) read. A field holds its
// scalar, a pointer to its tensor, or (for TMA, which finds it by address)
// a tensor map, whose 128 bytes no plain access may read; bytes no field
// covers are undefined. PTX ISA, "Kernel Function Parameters": kernel
// parameters are read-only, addressable through ld.param, and through
// generic addresses after cvta.param (sm_70 and later).
template <class D>
void Machine<D>::setup_structs() {
  struct_buf_.assign(p_.params.size(), kNone);
  for (std::size_t i = 0; i < p_.params.size(); ++i) {
    const LaunchArg& a = l_.args[i];
    if (!a.is_struct) continue;
    const std::string& pname = p_.params[i].name;
    if (a.struct_bytes != 0 && p_.params[i].array_bytes != a.struct_bytes)
      bad_launch("the struct given for parameter '" + pname + "' has " + std::to_string(a.struct_bytes) +
                 " bytes, but the parameter has " + std::to_string(p_.params[i].array_bytes));
    // The granule: the narrowest field (a wider access joins cells).
    std::uint32_t g = 8;
    for (const LaunchArg::Field& f : a.layout)
      if (f.bytes < g) g = f.bytes;
    Memory<V> m;
    m.name = pname;
    m.space = Space::Param;
    m.dtype = g == 1 ? DType::B8 : g == 2 ? DType::B16 : g == 4 ? DType::B32 : DType::B64;
    m.read_only = true;
    m.bytes = p_.params[i].array_bytes;
    m.set_granule(g);
    m.set_unit(g);
    m.cells.resize(m.ncells);
    if (o_.check_races) m.shadow.resize(m.ncells);
    for (std::size_t k = 0; k < a.layout.size(); ++k) {
      const LaunchArg::Field& f = a.layout[k];
      const LaunchArg& fa = a.fields[k];
      if (std::uint64_t(f.offset) + f.bytes > m.bytes || f.offset % f.bytes != 0 ||
          (k > 0 && a.layout[k - 1].offset + a.layout[k - 1].bytes > f.offset))
        bad_launch("field '" + f.name + "' of the struct '" + pname + "' at byte " + std::to_string(f.offset) +
                   " does not fit (past the end, misaligned or overlapping the field before)");
      const std::size_t c0 = f.offset >> m.gshift, cn = f.bytes >> m.gshift;
      if (fa.is_tensor_map) {
        // buf: the struct's memory, pushed below (map_tensor may push the tensor's first)
        const std::uint32_t tensor = map_tensor(f.name, fa.map, fa.tensor);
        struct_maps_.push_back(StructMap{kNone, f.offset, tensor, &fa.map, f.name});
        if (m.pending.empty()) m.pending.assign(m.ncells, 0);
        for (std::size_t c = c0; c < c0 + cn; ++c) m.pending[c] = kMapCell;
        continue;
      }
      Val<V> v;
      // A null field first: LaunchArg::of_null keeps is_tensor's default
      // (true), and read as a tensor it would be a pointer to a tensor named
      // '' that compares unequal to 0 (CUTLASS tests its null alpha_ptr).
      if (fa.null_pointer) {
        v.kind = VKind::Int;
        v.i = 0;
      } else if (fa.is_tensor) {
        v.kind = VKind::Ptr;
        v.buf = tensor_memory(fa.tensor, "field '" + f.name + "' of the struct '" + pname + "'");
        v.i = 0;
      } else if (fa.symbolic) {
        v.kind = VKind::Float;
        v.f = d_.input(fa.tensor.name, 0);
      } else {
        v.kind = VKind::Int;
        v.i = fa.scalar;
      }
      pieces(v, f.bytes, g, 0, &m.cells[c0]);
    }
    struct_buf_[i] = std::uint32_t(mem_.size());
    for (StructMap& sm : struct_maps_)
      if (sm.buf == kNone) sm.buf = struct_buf_[i];
    mem_.push_back(std::move(m));
  }
}

// `const CUtensorMap*` parameters (LaunchArg::is_map_array): the maps the
// host encoded and copied to global memory (cudaMemcpy), map k at byte
// 128 k of one buffer, which the parameter points to. TMA finds a map by its
// address (tensor_map_of), as it finds a map inside a struct. The buffer's
// bytes are only the maps' encoding, which tileverify does not model: a
// plain load or store of them (a kernel that reads or rewrites a
// descriptor) is refused by name (special_cell).
template <class D>
void Machine<D>::setup_map_arrays() {
  map_array_buf_.assign(p_.params.size(), kNone);
  for (std::size_t i = 0; i < p_.params.size(); ++i) {
    const LaunchArg& a = l_.args[i];
    if (!a.is_map_array) continue;
    std::vector<std::uint32_t> tensors;  // made first: map_tensor may push a tensor's memory
    for (std::size_t k = 0; k < a.fields.size(); ++k)
      tensors.push_back(map_tensor(a.tensor.name + "[" + std::to_string(k) + "]", a.fields[k].map, a.fields[k].tensor));
    Memory<V> m;
    m.name = a.tensor.name;
    m.space = Space::Global;
    m.dtype = DType::B64;
    const std::uint64_t cells = 16 * a.fields.size();  // 128 bytes a map
    typed(m, cells, 8);
    m.cells.resize(cells);
    m.pending.assign(cells, kMapCell);
    map_array_buf_[i] = std::uint32_t(mem_.size());
    for (std::size_t k = 0; k < a.fields.size(); ++k)
      struct_maps_.push_back(StructMap{map_array_buf_[i], std::uint32_t(128 * k), tensors[k], &a.fields[k].map,
                                       a.tensor.name + "[" + std::to_string(k) + "]"});
    mem_.push_back(std::move(m));
  }
}

// A tensor's input values: symbols (integer ones for integer dtypes). In
// the symbolic domain an element's symbol is made when something first
// reads it (input() there is a hash-consed node with a string-keyed name:
// a CTA of a reduction reads 128 of the 512 elements it is given, and
// making them all was most of its symbolic run).
template <class D>
void Machine<D>::fill_inputs(Memory<V>& m) {
  const bool ints = !dtype_is_float(m.dtype) && m.dtype != DType::Pred;
  m.lazy_inputs = kLazyInputs;
  Cell<V> input;
  input.kind = ints ? VKind::Data : VKind::Float;
  if constexpr (kLazyInputs) {
    m.cells.assign(std::size_t(m.ncells), input);
  } else {
    // The concrete and payload domains' inputs are pure functions of the
    // element (domains.hpp): a page's are made with it. Cells of the
    // dtype's size: cell e is element e.
    m.cells.assign(std::size_t(m.ncells), [this, input, ints, name = m.name](std::uint64_t first, Cell<V>* out,
                                                                            std::size_t n) {
      for (std::size_t k = 0; k < n; ++k) {
        out[k] = input;
        out[k].f = ints ? d_.int_input(name, first + k) : d_.input(name, first + k);
      }
    });
  }
}

// An output's given initial value (a running max's -inf, an accumulator's
// 0): the same in every element; integer tensors take integers only.
template <class D>
void Machine<D>::fill_value(Memory<V>& m, const TensorArg& ta) {
  const bool ints = !dtype_is_float(m.dtype);
  if (ints && (ta.init_inf != 0 || !ta.init_value.fits_int64()))
    bad_launch("tensor '" + m.name + "' holds integers (" + dtype_name(m.dtype) + "): its initial value must be a 64-bit integer");
  Val<V> v;
  if (ints) {
    v.kind = VKind::Int;
    v.i = ta.init_value.to_int64();
  } else {
    v.kind = VKind::Float;
    v.f = ta.init_inf != 0 ? d_.infinity(ta.init_inf < 0) : d_.constant(ta.init_value);
  }
  m.cells.assign(m.cells.size(), make_cell(v, 0));
}

// A buffer of `elements` elements of `size` bytes, in cells of that size.
template <class D>
void Machine<D>::typed(Memory<V>& m, std::uint64_t elements, std::uint32_t size) {
  m.bytes = mul_sat(elements, size);
  m.set_granule(size);
  m.set_unit(size);
}

// Module data starts with its initializer: each cell's little-endian bytes
// as an integer (its bits); a float load reads them as a float.
template <class D>
void Machine<D>::fill_initial(Memory<V>& m) {
  if (m.init.empty() || m.per_thread) return;
  for (std::size_t e = 0; e < m.cells.size(); ++e) {
    std::uint64_t bits = 0;
    for (std::size_t b = 0; b < m.g && e * m.g + b < m.init.size(); ++b)
      bits |= std::uint64_t(m.init[e * m.g + b]) << (8 * b);
    m.cells[e].kind = VKind::Int;
    m.cells[e].i = std::int64_t(bits);
  }
}

// ------------------------------------------------------------ limits

template <class D>
void Machine<D>::setup_deadline(const std::string& what) const {
  if (o_.deadline && std::chrono::steady_clock::now() > *o_.deadline)
    throw Stop{limit_diag("time limit reached while setting up the memory of " + what +
                          " (before the run's first instruction)")};
}

// A tensor's cells and race shadows, made a page at a time as the kernel
// touches them (memory.hpp): their bytes count against the budget as they
// are made (check_limits), not all at once.
template <class D>
void Machine<D>::paged(Memory<V>& m) {
  setup_deadline("tensor '" + m.name + "'");
  m.cells.count_into(&paged_bytes_);
  m.cells.assign(std::size_t(m.ncells), Cell<V>{});
  if (o_.check_races) {
    m.shadow.count_into(&paged_bytes_);
    m.shadow.assign(std::size_t(m.ncells), Shadow{});
  }
}

// Counts `count` items of `each` bytes against the memory budget before
// they are allocated: over it, the run stops as a Limit naming `what`.
template <class D>
void Machine<D>::reserve(const std::string& what, std::uint64_t count, std::uint64_t each) {
  reserve_bytes(what, count, mul_sat(count, each));
}

// `need` bytes for `count` elements.
template <class D>
void Machine<D>::reserve_bytes(const std::string& what, std::uint64_t count, std::uint64_t need) {
  if (need > budget_ || bytes_ > budget_ - need)
    throw Stop{limit_diag("memory limit: " + what + " needs " + util::size_text(need) + " (" + std::to_string(count) +
                          " elements), over this run's memory budget of " + util::size_text(budget_) +
                          (bytes_ >= (std::uint64_t(1) << 20) ? " with " + util::size_text(bytes_) + " already in use"
                                                              : std::string()) +
                          " (--max-memory)")};
  bytes_ += need;
}

// A tensor: its touch records now (they are one array per element), its
// cells and shadows as they are made (paged).
template <class D>
void Machine<D>::reserve_tensor(const std::string& what, std::uint64_t cells) {
  // The page tables of the cells and shadows (a pointer per page) are made
  // at once, like the touch records.
  const std::uint64_t pages = cells / detail::PagedArray<Shadow>::kPage + 1;
  const std::uint64_t need = mul_sat(cells, o_.record_touches ? sizeof(Touch) : 0) +
                             mul_sat(pages, (o_.check_races ? 2 : 1) * sizeof(void*));
  reserve_bytes(what, cells, need);
  if (cells > UINT32_MAX)
    throw Stop{limit_diag(what + " has " + std::to_string(cells) +
                          " elements; tileverify handles at most 2^32 elements in one memory")};
}

// A memory's cells, their shadow for the race check and touch records.
template <class D>
void Machine<D>::reserve_cells(const Memory<V>& m, const std::string& what, std::uint64_t cells) {
  std::uint64_t each = sizeof(Cell<V>);
  if (!m.per_thread && o_.check_races) each += sizeof(Shadow);
  if (o_.record_touches && m.space == Space::Global) each += sizeof(Touch);
  reserve(what, cells, each);
  // Symbols are indexed by 32 bits: only a budget above 100 GiB gets here.
  if (cells > UINT32_MAX)
    throw Stop{limit_diag(what + " has " + std::to_string(cells) +
                          " elements; tileverify handles at most 2^32 elements in one memory")};
}

// Every few thousand thread-instructions: the deadline, and the memory
// the expressions built so far take.
template <class D>
void Machine<D>::check_limits(std::uint32_t t) {
  if (o_.deadline && std::chrono::steady_clock::now() > *o_.deadline)
    fail(DiagKind::Limit, t, "time limit reached after " + steps_text() + " (the run had not finished)");
  std::uint64_t arena = 0;
  if constexpr (std::is_same<D, SymbolicDomain>::value) arena = d_.context().memory_bytes();
  const std::uint64_t used = bytes_ + paged_bytes_;
  if (arena > budget_ || used > budget_ - arena) {
    // Named by the larger of the two that grow while the run goes on.
    if (arena >= paged_bytes_)
      fail(DiagKind::Limit, t,
           "memory limit: the run's expressions take " + util::size_text(arena) + " after " + steps_text() +
               ", over this run's memory budget of " + util::size_text(budget_) + " with its memories (--max-memory)");
    fail(DiagKind::Limit, t,
         "memory limit: the parts of the tensors the run touched take " + util::size_text(paged_bytes_) + " after " +
             steps_text() + ", over this run's memory budget of " + util::size_text(budget_) +
             " with its other memories and expressions (--max-memory)");
  }
}

template <class D>
void Machine<D>::check_way_out(std::uint32_t t, std::uint32_t target) {
  const std::size_t n = p_.code.size();
  if (way_out_.empty()) {
    // An exit (ret, trap, the end of the code) is reachable from pc if pc
    // is one, or through its fall-through (a guarded instruction may fall
    // through) or its branch target. Sweeps from the end until nothing
    // changes: one sweep per loop a path must leave backwards, so a few,
    // with no graph to build (a grid makes a run per CTA).
    // Past 64 sweeps (code crafted to need one per instruction) it gives up
    // and calls every pc one with a way out: the limits still end the run.
    way_out_.assign(n + 1, 0);
    way_out_[n] = 1;
    int sweeps = 0;
    for (bool changed = true; changed;) {
      if (++sweeps > 64) {
        way_out_.assign(n + 1, 1);
        break;
      }
      changed = false;
      for (std::size_t pc = n; pc-- > 0;) {
        if (way_out_[pc]) continue;
        const Instr& in = p_.code[pc];
        const bool exits = in.op == Opcode::Ret || in.op == Opcode::Trap;
        const bool falls = !((in.op == Opcode::Bra || exits) && in.guard < 0);
        if (exits || (falls && way_out_[pc + 1]) || (in.op == Opcode::Bra && in.target <= n && way_out_[in.target])) {
          way_out_[pc] = 1;
          changed = true;
        }
      }
    }
  }
  if (target <= n && !way_out_[target])
    fail(DiagKind::Limit, t,
         "endless loop: the thread branched to " + p_.code[target].loc.with_source() +
             ", from where no path leads to ret, trap or the end of the kernel: it can never finish");
}

template class Machine<SymbolicDomain>;
template class Machine<ConcreteDomain>;
template class Machine<PayloadDomain>;

}  // namespace tileverify::machine
