// Machine<D>: TMA and bulk copies (cp.async.bulk.tensor, cp.async.bulk):
// the box walk over a tensor map with its swizzle, loads that complete on
// an mbarrier (multicast to the CTAs of a cluster), stores through bulk
// async-groups and their waits. The copies are the accesses of agents
// (machine_async.cpp, "agents"); docs/evaluator.md, "TMA and bulk copies".
#include "machine.hpp"
#include "swizzle.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace tileverify::machine {

namespace {

std::string dims_text(const std::vector<std::uint64_t>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "x" : "") + std::to_string(v[i]);
  return s;
}

// Element idx of a TMA box at coord (innermost dimension first): whether it
// lies inside the tensor, and then its byte offset in the tensor.
bool box_element(const TensorMap& mp, const std::vector<std::int64_t>& coord, const std::vector<std::uint32_t>& idx,
                 const std::vector<std::uint64_t>& stride, std::uint64_t* gbyte) {
  bool inside = true;
  *gbyte = 0;
  for (std::size_t d = 0; d < coord.size(); ++d) {
    const std::int64_t g = coord[d] + std::int64_t(idx[d]);
    if (g < 0 || g >= std::int64_t(mp.dims[d]))
      inside = false;
    else
      *gbyte += std::uint64_t(g) * stride[d];
  }
  return inside;
}

// The box element after idx, innermost dimension fastest.
void next_box_index(const TensorMap& mp, std::vector<std::uint32_t>& idx) {
  for (std::size_t d = 0; d < idx.size() && ++idx[d] == mp.box[d]; ++d) idx[d] = 0;
}

}  // namespace

// ------------------------------------------------------------ TMA

// The tensor map an operand [map, ..] names: the parameter's address (or a
// register holding it). *tensor_buf: the memory of its tensor.
template <class D>
const TensorMap& Machine<D>::tensor_map_of(std::uint32_t t, const Operand& o, std::uint32_t* tensor_buf, std::string* name,
                                           Addr* at) {
  const Addr a = address(t, o);
  if (at) *at = a;
  for (std::uint32_t i = 0; i < map_desc_buf_.size(); ++i)
    if (map_desc_buf_[i] == a.buf) {
      if (a.offset != 0)
        fail(DiagKind::Unsupported, t, "a TMA tensor-map operand at byte " + std::to_string(a.offset) + " of the map '" +
                                           p_.params[i].name + "' (it must be the map's address)");
      *tensor_buf = map_tensor_buf_[i];
      *name = p_.params[i].name;
      return l_.args[i].map;
    }
  // A map of a `const CUtensorMap*` buffer: map k at byte 128 k (its entry
  // in struct_maps_ below).
  for (std::uint32_t i = 0; i < map_array_buf_.size(); ++i) {
    if (map_array_buf_[i] != a.buf || a.buf == kNone) continue;
    const std::uint64_t n = l_.args[i].fields.size();
    if (a.offset < 0 || a.offset % 128 != 0 || std::uint64_t(a.offset) / 128 >= n)
      fail(DiagKind::Unsupported, t,
           "a TMA tensor-map operand at byte " + std::to_string(a.offset) + " of '" + mem_[a.buf].name + "', the " +
               std::to_string(n) + " tensor map" + (n == 1 ? "" : "s") + " the parameter '" + p_.params[i].name +
               "' points to (const CUtensorMap*): " +
               (a.offset >= 0 && std::uint64_t(a.offset) < 128 * n
                    ? "not the start of a map (map k lies at byte 128 k)"
                    : "outside the buffer, whose maps are bytes 0 to " + std::to_string(128 * n - 1)));
    break;
  }
  // A map inside a by-value struct: the address of its first byte.
  bool in_struct = false;
  for (const StructMap& sm : struct_maps_) {
    if (sm.buf != a.buf) continue;
    in_struct = true;
    if (a.offset == std::int64_t(sm.offset)) {
      *tensor_buf = sm.tensor_buf;
      *name = sm.name;
      return *sm.map;
    }
  }
  if (in_struct || std::find(struct_buf_.begin(), struct_buf_.end(), a.buf) != struct_buf_.end())
    fail(DiagKind::Unsupported, t,
         "a TMA tensor-map operand at byte " + std::to_string(a.offset) + " of the struct parameter '" + mem_[a.buf].name +
             "', where the spec gives no tensor map (a \"tensor_map\" field at that offset)");
  fail(DiagKind::Unsupported, t,
       "a TMA tensor-map operand that points into '" + mem_[a.buf].name +
           "', not to a CUtensorMap parameter (give the parameter as a tensor map in the launch)");
}

// cp.async.bulk.tensor: a TMA load (global box -> shared, then complete-tx
// on the mbarrier) or store (shared -> global box, in the thread's bulk
// async-group). PTX ISA, "cp.async.bulk.tensor" and "Tensor Access Modes":
// the box at the coordinates, its elements innermost first, row-major in
// shared memory, with the map's swizzle (swizzle.hpp); elements outside the
// tensor's dimensions read as the OOB fill (zero) and are not stored.
template <class D>
void Machine<D>::tma(std::uint32_t t, const Instr& in) {
  const bool load = in.op == Opcode::TmaLoad;
  const std::size_t dims = in.mode;
  const Operand& map_op = load ? in.src[1] : in.src[0];
  const std::size_t first = load ? 3 : 2;  // the first coordinate
  std::uint32_t tbuf = kNone;
  std::string pname;
  Addr map_at{kNone, 0};
  const TensorMap& mp = tensor_map_of(t, map_op, &tbuf, &pname, &map_at);
  if (mp.dims.size() != dims)
    bad_launch("the " + std::to_string(dims) + "-d TMA at " + in.loc.with_source() + " uses the tensor map '" + pname +
               "', which has " + std::to_string(mp.dims.size()) + " dimensions");
  if (mp.interleave != TmaInterleave::None)
    fail(DiagKind::Unsupported, t, "the tensor map '" + pname + "' is interleaved, which is not modelled");
  for (std::uint32_t e : mp.element_strides)
    if (e != 1) fail(DiagKind::Unsupported, t, "the tensor map '" + pname + "' has element strides other than 1, which are not modelled");
  // .multicast::cluster: the box goes to the same offset of the shared
  // memory of every CTA of ctaMask, each completing on its mbarrier at the
  // mbarrier operand's offset (PTX ISA, cp.async.bulk.tensor).
  std::int64_t mask = 0;
  if (load && in.shape == 1) {
    mask = control_int(t, operand(t, in.src.back()), "a TMA multicast mask") & 0xffff;
    if (mask == 0 || (mask >> ncta_) != 0)
      fail(DiagKind::OutOfBounds, t,
           "a TMA multicast with CTA mask " + std::to_string(mask) + " in a cluster of " + std::to_string(ncta_) +
               (ncta_ == 1 ? " CTA" : " CTAs") + ": every bit set must name a CTA rank of the cluster, and one must be set");
  }
  Memory<V>& tm = mem_[tbuf];
  const std::uint64_t esize = dtype_bytes(tm.dtype);
  std::vector<std::int64_t> coord(dims);
  for (std::size_t d = 0; d < dims; ++d)
    coord[d] = wrap(control_int(t, operand(t, in.src[first + d]), "a TMA coordinate"), DType::S32);
  // Where the box lies against the tensor's shape. The PTX ISA (Tensor
  // Access Modes, tile mode: bounding box) has a load fill the elements
  // outside with the OOB fill and a store skip them; an H100 / H200 does so,
  // except that a store whose box starts at a negative coordinate traps
  // (error 715, illegal instruction; tools/gpu_checks/tma_bounds.cu), which
  // is what a launch with more CTAs than tiles does when it counts tiles
  // from the end: the launch contract. Anything else outside is a note.
  bool outside = false, partly = false, negative = false;
  for (std::size_t d = 0; d < dims; ++d) {
    const std::int64_t lo = coord[d], hi = coord[d] + std::int64_t(mp.box[d]);
    if (hi <= 0 || lo >= std::int64_t(mp.dims[d]))
      outside = true;
    else if (lo < 0 || hi > std::int64_t(mp.dims[d]))
      partly = true;
    negative = negative || lo < 0;
  }
  auto where = [&]() {
    std::string c, b;
    for (std::size_t d = 0; d < dims; ++d) {
      c += (d ? ", " : "") + std::to_string(coord[d]);
      b += (d ? "x" : "") + std::to_string(mp.box[d]);
    }
    return std::string(load ? "TMA load" : "TMA store") + " at coordinates (" + c + ") with box " + b;
  };
  const Dim3& own = cta_of_rank_[rank(t)];
  const std::string cta = "CTA (" + std::to_string(own.x) + "," + std::to_string(own.y) + "," + std::to_string(own.z) + ")";
  const std::string against = " the tensor's shape " + dims_text(mp.dims) + " (dims innermost first, tensor map '" + pname + "')";
  if (!load && negative) {
    Diagnostic d;
    d.kind = DiagKind::LaunchContract;
    d.message = cta + ": " + where() + " starts at a negative coordinate of" + against +
                ": on a GPU this traps (an H100 / H200 ends the launch with error 715, illegal instruction); a CTA that "
                "owns no tile must not issue it";
    d.loc = in.loc;
    d.threads = {t};
    d.detail = "  instruction: " + p_.instr_text(pc_[t]) +
               "\n  the PTX ISA (Tensor Access Modes, tile mode) says only that elements outside the tensor are not\n"
               "  written; tools/gpu_checks/tma_bounds.cu shows the trap for any negative coordinate of a store,\n"
               "  partly or wholly outside, while loads anywhere and stores past the end complete\n";
    throw Stop{d};
  }
  if (outside || partly) {
    if (load && mp.oob_fill != TmaOobFill::Zero)
      fail(DiagKind::Unsupported, t, "a TMA box partly outside the tensor with the NaN out-of-bound fill, which is not modelled");
    if (!async_noted_[pc_[t]]) {
      async_noted_[pc_[t]] = 1;
      Diagnostic d;
      d.kind = DiagKind::LaunchContract;
      d.loc = in.loc;
      d.threads = {t};
      d.message = cta + ": " + where() + " lies " + (outside ? "wholly" : "partly") + " outside" + against + ": " +
                  (load ? "the elements outside read as zero (the map's out-of-bound fill)" : "the elements outside are not written");
      notes_.push_back(std::move(d));
    }
  }
  // Shared memory: 128-byte aligned (PTX ISA, cp.async.bulk.tensor). The
  // swizzle is a function of the absolute shared address, also for a box
  // that starts off the pattern's repeat (measured on an H200:
  // tools/gpu_checks/tma_swizzle_offset.cu); shared buffers start at
  // multiples of 1024 in the window, so a byte's offset in its buffer has
  // the address's swizzle bits.
  const Addr s = address(t, load ? in.src[0] : in.src[1]);
  Memory<V>& sm = mem_[s.buf];
  if (sm.space != Space::Shared || sm.per_thread)
    fail(DiagKind::Unsupported, t, "a TMA copy to or from '" + sm.name + "', which is not shared memory");
  const unsigned span = swizzle_span(unsigned(mp.swizzle));
  if (s.offset < 0 || std::uint64_t(s.offset) % 128 != 0)
    fail(DiagKind::Unsupported, t,
         "a TMA copy at byte " + std::to_string(s.offset) + " of '" + sm.name +
             "': the shared address must be 128-byte aligned (PTX ISA, cp.async.bulk.tensor)");
  if (span && mp.box[0] * esize > span)
    bad_launch("the tensor map '" + pname + "' has an inner box of " + std::to_string(mp.box[0] * esize) +
               " bytes, more than its " + std::to_string(span) + "B swizzle span (cuTensorMapEncodeTiled)");
  const std::uint32_t pc = pc_[t];
  // A load's destinations: (shared buffer, its mbarrier), one per CTA of a
  // multicast, else the operands' own.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> dests;
  if (load && mask) {
    const Addr ba = address(t, in.src[2]);
    for (std::uint32_t r = 0; r < ncta_; ++r) {
      if (!(mask >> r & 1)) continue;
      Mbar& b = mbar_at(t, Addr{rank_copy(ba.buf, r), ba.offset}, false);
      mbar_access(t, b, false);
      check_init_fenced(t, b);
      // The complete-tx on a peer's barrier is the copy's, not the issuing
      // thread's (PTX ISA, cp.async.bulk.tensor: the mbarrier signal is
      // multicast with the data): the exit rule sees it as the agent's below.
      dests.emplace_back(rank_copy(s.buf, r), mbar_at_[{b.buf, b.byte}]);
    }
  } else if (load) {
    Mbar& b = mbar_of(t, in.src[2], false);
    mbar_access(t, b, false);
    check_init_fenced(t, b);
    dests.emplace_back(s.buf, mbar_at_[{b.buf, b.byte}]);
  }
  // Byte strides of the tensor's dimensions.
  std::vector<std::uint64_t> stride(dims, esize);
  for (std::size_t d = 1; d < dims; ++d) {
    if (!mp.strides.empty()) {
      stride[d] = mp.strides[d - 1];
    } else {
      stride[d] = stride[d - 1] * mp.dims[d - 1];
    }
  }
  // In a run for CTA classes: how the box's global accesses move with the
  // CTA index (the coordinates' moves, per dimension times its stride).
  const std::uint32_t gaff = aff_ ? affine_tma(t, in, first, mp, stride, map_at, s) : 0;
  std::uint64_t total = 1;
  for (std::size_t d = 0; d < dims; ++d) total *= mp.box[d];
  if (load) {
    for (const auto& [dbuf, bar] : dests) {
      // One agent per destination: each CTA's copy completes on its own barrier.
      const std::uint32_t agent = new_agent(t, true);
      if (ncta_ > 1 && buf_rank_[dbuf] != rank(t)) record_remote(agent, buf_rank_[dbuf], pc);
      tma_load_box(t, mp, tbuf, stride, coord, Addr{dbuf, s.offset}, span, agent, gaff);
      // The complete-tx counts every byte of the box, the filled ones too.
      mbar_complete_tx(agent, mbars_[bar], bar, std::int64_t(total * esize));
    }
    return;
  }
  const std::uint32_t ra = new_agent(t, false), wa = new_agent(t, true);
  std::vector<std::uint32_t> idx(dims, 0);
  for (std::uint64_t l = 0; l < total; ++l) {
    std::uint64_t gbyte = 0;
    const bool inside = box_element(mp, coord, idx, stride, &gbyte);
    const std::int64_t sbyte = std::int64_t(swizzle_offset(std::uint64_t(s.offset) + l * esize, span));
    if (inside) {
      const std::size_t sc = cell(t, Addr{s.buf, sbyte}, 0, esize, false);
      const std::size_t k = std::max<std::size_t>(1, esize >> sm.gshift);
      for (std::size_t j = 0; j < k; ++j) agent_access(ra, sm, sc + j, false, true);
      Cell<V> v;
      bool undef = false;
      for (std::size_t j = 0; j < k; ++j) undef = undef || sm.cells[sc + j].kind == VKind::Undef;
      if (undef) {
        note_uninitialized(t, sm, sc);
        v = make_cell(float_val(poison(sm, sc)), make_tag(pc));
      } else if (k == 1 && !(sm.cells[sc].tag & kSliceBits)) {
        v = make_cell(read_cell(sm, sc), make_tag(pc));
      } else {
        v = make_cell(join(Reader{t, std::size_t(esize), "TMA read", sm.byte_of(sc)}, sm, sc, esize), make_tag(pc));
      }
      const std::size_t gc = cell(t, Addr{tbuf, std::int64_t(gbyte), gaff}, 0, esize, true);
      check_writable(t, tm);
      const std::size_t kg = std::max<std::size_t>(1, esize >> tm.gshift);
      if (kg == 1) {
        agent_access(wa, tm, gc, true, false);
        tm.cells[gc] = v;
      } else {
        Cell<V> p[16];
        split_cell(v, esize, tm.g, p);
        for (std::size_t j = 0; j < kg; ++j) {
          agent_access(wa, tm, gc + j, true, false);
          tm.cells[gc + j] = p[j];
        }
      }
    }
    next_box_index(mp, idx);
  }
  if (bulk_groups_.empty()) bulk_groups_.assign(n_, BulkGroups{});
  bulk_groups_[t].open.push_back(BulkOp{ra, wa});
}

// A TMA load's box into shared memory at s (of buffer s.buf) as agent ra's
// writes: elements innermost first, row-major, swizzled (swizzle.hpp);
// those outside the tensor's dimensions read as the OOB fill, zero.
template <class D>
void Machine<D>::tma_load_box(std::uint32_t t, const TensorMap& mp, std::uint32_t tbuf,
                              const std::vector<std::uint64_t>& stride, const std::vector<std::int64_t>& coord,
                              const Addr& s, unsigned span, std::uint32_t ra, std::uint32_t gaff) {
  Memory<V>& tm = mem_[tbuf];
  Memory<V>& sm = mem_[s.buf];
  const std::size_t dims = coord.size();
  const std::uint64_t esize = dtype_bytes(tm.dtype);
  const std::uint32_t pc = pc_[t];
  std::uint64_t total = 1;
  for (std::size_t d = 0; d < dims; ++d) total *= mp.box[d];
  std::vector<std::uint32_t> idx(dims, 0);
  for (std::uint64_t l = 0; l < total; ++l) {
    std::uint64_t gbyte = 0;
    const bool inside = box_element(mp, coord, idx, stride, &gbyte);
    const std::int64_t sbyte = std::int64_t(swizzle_offset(std::uint64_t(s.offset) + l * esize, span));
    const std::size_t sc = cell(t, Addr{s.buf, sbyte}, 0, esize, true);
    Cell<V> v = make_cell(int_val(0), make_tag(pc));  // the OOB fill: zero bits are 0 in every format
    if (inside) {
      const std::size_t gc = cell(t, Addr{tbuf, std::int64_t(gbyte), gaff}, 0, esize, false);
      agent_access(ra, tm, gc, false, false);
      const Val<V>& x = read_cell(tm, gc);
      if (x.kind == VKind::Undef) {
        note_uninitialized(t, tm, gc);
        v = make_cell(float_val(poison(tm, gc)), make_tag(pc));
      } else {
        v = make_cell(x, (tm.cells[gc].tag & kSliceBits) | make_tag(pc));
      }
    }
    // The shared cell may have been cut finer than the element since (an
    // access of another width): the value goes in its pieces.
    const std::size_t k = esize >> sm.gshift;
    if (k <= 1) {
      agent_access(ra, sm, sc, true, false);
      sm.cells[sc] = v;
    } else {
      Cell<V> p[16];
      split_cell(v, esize, sm.g, p);
      for (std::size_t j = 0; j < k; ++j) {
        agent_access(ra, sm, sc + j, true, false);
        sm.cells[sc + j] = p[j];
      }
    }
    next_box_index(mp, idx);
  }
}

// cp.async.bulk (not .tensor): `size` bytes, a multiple of 16, between
// 16-byte aligned addresses (PTX ISA, cp.async.bulk): global -> shared with
// complete-tx on an mbarrier, or shared -> global in a bulk async-group.
template <class D>
void Machine<D>::bulk_copy(std::uint32_t t, const Instr& in) {
  const bool to_shared = in.space == Space::Shared;
  const Addr dst = address(t, in.src[0]), src = address(t, in.src[1]);
  Memory<V>& dm = mem_[dst.buf];
  Memory<V>& sm = mem_[src.buf];
  const std::int64_t size = control_int(t, operand(t, in.src[2]), "a bulk copy's size");
  if (size <= 0 || size % 16 != 0)
    fail(DiagKind::Unsupported, t, "a bulk copy of " + std::to_string(size) + " bytes (the PTX ISA wants a positive multiple of 16)");
  if (dst.offset % 16 != 0 || src.offset % 16 != 0)
    fail(DiagKind::Unsupported, t, "a bulk copy between addresses that are not 16-byte aligned (PTX ISA, cp.async.bulk)");
  Memory<V>& shared = to_shared ? dm : sm;
  Memory<V>& global = to_shared ? sm : dm;
  if (shared.space != Space::Shared || shared.per_thread)
    fail(DiagKind::Unsupported, t, "a bulk copy with '" + shared.name + "' as its shared memory, which it is not");
  if (global.space != Space::Global && global.space != Space::Const)
    fail(DiagKind::Unsupported, t, "a bulk copy with '" + global.name + "' as its global memory, which it is not");
  if (!to_shared) check_writable(t, dm);
  std::uint32_t bar = kNone;
  if (to_shared) {
    Mbar& b = mbar_of(t, in.src[3], false);
    bar = mbar_at_[{b.buf, b.byte}];
    mbar_access(t, b, false);
    check_init_fenced(t, b);
  }
  std::int64_t unit = 16;
  if (!sm.untyped) unit = std::min<std::int64_t>(unit, sm.g);
  if (!dm.untyped) unit = std::min<std::int64_t>(unit, dm.g);
  if (sm.untyped && dm.untyped) unit = 4;
  const std::size_t u = std::size_t(unit);
  const std::uint32_t pc = pc_[t];
  const std::uint32_t ra = new_agent(t, to_shared);
  const std::uint32_t wa = to_shared ? ra : new_agent(t, true);
  for (std::size_t k = 0; k < std::size_t(size) / u; ++k) {
    const std::size_t sc = cell(t, src, k, u, false);
    const std::size_t dc = cell(t, dst, k, u, true);
    agent_access(ra, sm, sc, false, !to_shared);
    const Val<V>& x = read_cell(sm, sc);
    Cell<V> v;
    if (x.kind == VKind::Undef) {
      note_uninitialized(t, sm, sc);
      v = make_cell(float_val(poison(sm, sc)), make_tag(pc));
    } else {
      v = make_cell(x, (sm.cells[sc].tag & kSliceBits) | make_tag(pc));
    }
    agent_access(wa, dm, dc, true, false);
    dm.cells[dc] = v;
  }
  if (to_shared) {
    mbar_complete_tx(ra, mbars_[bar], bar, size);
  } else {
    if (bulk_groups_.empty()) bulk_groups_.assign(n_, BulkGroups{});
    bulk_groups_[t].open.push_back(BulkOp{ra, wa});
  }
}

// cp.async.bulk.wait_group{.read} N (PTX ISA): waits until at most N of the
// thread's most recent bulk async-groups are pending; .read only until their
// source reads are done. Waiting orders the thread after the agents.
template <class D>
void Machine<D>::bulk_wait(std::uint32_t t, const Instr& in) {
  if (bulk_groups_.empty()) return;
  BulkGroups& g = bulk_groups_[t];
  const std::size_t keep = std::size_t(in.src[0].imm);
  auto join = [&](std::uint32_t a) {
    if (o_.check_races && a != kNone) vc_[std::size_t(t) * w_ + a] = std::max<std::uint32_t>(vc_[std::size_t(t) * w_ + a], 1);
  };
  if (in.mode == 1) {
    for (std::size_t i = g.read_done; i + keep < g.committed.size(); ++i) {
      for (const BulkOp& op : g.committed[i]) join(op.read_agent);
      g.read_done = i + 1;
    }
    return;
  }
  while (g.committed.size() > keep) {
    for (const BulkOp& op : g.committed.front()) {
      join(op.read_agent);
      join(op.write_agent);
    }
    g.committed.pop_front();
    if (g.read_done) --g.read_done;
  }
}

template class Machine<SymbolicDomain>;
template class Machine<ConcreteDomain>;
template class Machine<PayloadDomain>;

}  // namespace tileverify::machine
