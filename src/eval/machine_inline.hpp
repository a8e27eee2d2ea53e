// Machine<D>'s inline members: the operand readers and value makers the
// instructions of every machine_*.cpp call on their hot paths, and the
// other helpers long enough to crowd the class declaration (machine.hpp
// declares them, grouped by concern). Included at the end of machine.hpp
// only; not a header of its own.
#pragma once

namespace tileverify::machine {

template <class D>
inline auto Machine<D>::read_cell(Memory<V>& m, std::size_t c) -> const Val<V>& {
  Val<V>& v = m.cells[c];
  if constexpr (kLazyInputs) {
    if (m.lazy_inputs && !v.f.valid() && (v.kind == VKind::Float || v.kind == VKind::Data))
      v.f = v.kind == VKind::Data ? d_.int_input(m.name, m.element_of(c)) : d_.input(m.name, m.element_of(c));
    if (__builtin_expect(v.kind == VKind::Shadow, 0)) materialize(v);
  }
  return v;
}

template <class D>
inline auto Machine<D>::read_cell_keep(Memory<V>& m, std::size_t c) -> const Val<V>& {
  Val<V>& v = m.cells[c];
  if constexpr (kLazyInputs) {
    if (m.lazy_inputs && !v.f.valid() && (v.kind == VKind::Float || v.kind == VKind::Data))
      v.f = v.kind == VKind::Data ? d_.int_input(m.name, m.element_of(c)) : d_.input(m.name, m.element_of(c));
  }
  return v;
}

template <class D>
inline auto Machine<D>::special(std::uint32_t t, Special s) -> std::int64_t {
  const Dim3& cta = cta_of_rank_[t / nb_];
  t %= nb_;
  std::uint32_t x = t % l_.block.x, y = (t / l_.block.x) % l_.block.y, z = t / (l_.block.x * l_.block.y);
  switch (s) {
    case Special::TidX: return x;
    case Special::TidY: return y;
    case Special::TidZ: return z;
    case Special::NtidX: return l_.block.x;
    case Special::NtidY: return l_.block.y;
    case Special::NtidZ: return l_.block.z;
    case Special::CtaidX: return cta.x;
    case Special::CtaidY: return cta.y;
    case Special::CtaidZ: return cta.z;
    case Special::NctaidX: return l_.grid.x;
    case Special::NctaidY: return l_.grid.y;
    case Special::NctaidZ: return l_.grid.z;
    case Special::LaneId: return t % 32;
    case Special::WarpId: return t / 32;
    case Special::ClusterCtaidX: return cta.x % cluster_.x;
    case Special::ClusterCtaidY: return cta.y % cluster_.y;
    case Special::ClusterCtaidZ: return cta.z % cluster_.z;
    case Special::ClusterNctaidX: return cluster_.x;
    case Special::ClusterNctaidY: return cluster_.y;
    case Special::ClusterNctaidZ: return cluster_.z;
    case Special::ClusterCtarank:
      return cta.x % cluster_.x + std::int64_t(cluster_.x) * (cta.y % cluster_.y + std::int64_t(cluster_.y) * (cta.z % cluster_.z));
    case Special::ClusterNctarank: return std::int64_t(cluster_.count());
    case Special::ClusteridX: return cta.x / cluster_.x;
    case Special::ClusteridY: return cta.y / cluster_.y;
    case Special::ClusteridZ: return cta.z / cluster_.z;
    case Special::NclusteridX: return l_.grid.x / cluster_.x;
    case Special::NclusteridY: return l_.grid.y / cluster_.y;
    case Special::NclusteridZ: return l_.grid.z / cluster_.z;
    case Special::IsExplicitCluster: return cluster_.count() > 1;
    case Special::ReservedSmem: return 0;  // operand() marks it
  }
  return 0;
}

template <class D>
inline auto Machine<D>::constant_operand(std::uint32_t index) -> V {
  if (!constant_made_[index]) {
    constant_values_[index] = d_.constant(p_.constants[index]);
    constant_made_[index] = 1;
  }
  return constant_values_[index];
}

template <class D>
inline auto Machine<D>::mark_undefined(std::uint32_t t, std::uint32_t r) -> const Val<V>& {
  // An accumulator of a wgmma.mma_async in flight holds no value until its
  // wgmma.wait_group (machine_wgmma.cpp).
  if (__builtin_expect(in_flight_count_ != 0, 0) && in_flight_[std::size_t(t) * r_ + r]) in_flight(t, r);
  const std::uint32_t pc = pc_[t];
  if (!undefined_why_.count(pc))
    undefined_why_.emplace(pc, "register " + p_.registers[r].name + " was read before it was written (first by thread " +
                                   tname(t) + ")");
  Val<V>& v = reg(t, r);
  v = Val<V>{};
  v.kind = VKind::Int;
  v.sched = pc + 1;
  sched_marks_ = true;
  return v;
}

template <class D>
inline auto Machine<D>::reserved_smem(std::uint32_t t) -> Val<V> {
  const std::uint32_t pc = pc_[t];
  opaque_pcs_.insert(pc);
  Val<V> v;
  v.kind = VKind::Int;
  v.sched = pc + 1;
  sched_marks_ = true;
  return v;
}

template <class D>
inline auto Machine<D>::operand(std::uint32_t t, const Operand& o) -> Val<V> {
  Val<V> v;
  switch (o.kind) {
    case Operand::Kind::Reg: {
      Val<V>& r = reg(t, o.index);
      if (r.kind == VKind::Undef) return mark_undefined(t, o.index);
      if constexpr (kMemo) {
        // The register keeps the float from now on: one renaming, however
        // often it is read.
        if (__builtin_expect(r.kind == VKind::Shadow, 0)) materialize(r);
      }
      return r;
    }
    case Operand::Kind::Int:
      v.kind = VKind::Int;
      v.i = o.imm;
      return v;
    case Operand::Kind::Float:
      v.kind = VKind::Float;
      v.f = constant_operand(o.index);
      return v;
    case Operand::Kind::Special:
      v.kind = VKind::Int;
      if (__builtin_expect(Special(o.index) == Special::ReservedSmem, 0)) return reserved_smem(t);
      v.i = special(t, Special(o.index));
      if (__builtin_expect(aff_ != nullptr, 0)) v.aff = special_aff(Special(o.index));
      return v;
    case Operand::Kind::Buffer:
      v.kind = VKind::Ptr;
      v.buf = decl_buf(t, o.index);
      v.i = o.imm;
      return v;
    case Operand::Kind::Param: {
      const LaunchArg& a = l_.args[o.index];
      if (a.null_pointer) {  // never dereferenced: the null pointer, an integer
        v.kind = VKind::Int;
        v.i = 0;
      } else if (a.symbolic) {
        v.kind = VKind::Float;
        v.f = d_.input(a.tensor.name, 0);
      } else if (a.is_tensor) {
        v.kind = VKind::Ptr;
        v.buf = param_buf_[o.index];
        v.i = 0;
      } else if (a.is_map_array) {  // `const CUtensorMap*`: the maps' global buffer (setup_map_arrays)
        v.kind = VKind::Ptr;
        v.buf = map_array_buf_[o.index];
        v.i = 0;
      } else if (a.is_tensor_map) {  // the parameter's address: where TMA finds the map (machine_async.cpp)
        v.kind = VKind::Ptr;
        v.buf = map_desc_buf_[o.index];
        v.i = o.imm;
      } else if (a.is_struct) {  // the parameter's address (ld.param reads through it, machine_memory.cpp)
        v.kind = VKind::Ptr;
        v.buf = struct_buf_[o.index];
        v.i = o.imm;
      } else {
        v.kind = VKind::Int;
        v.i = a.scalar;
      }
      return v;
    }
    case Operand::Kind::None: break;
  }
  fail(DiagKind::Unsupported, t, "missing operand");
}

template <class D>
inline auto Machine<D>::as_int(std::uint32_t t, const Val<V>& v, const char* what) -> std::int64_t {
  if (v.kind == VKind::Int) return v.i;
  if (v.kind == VKind::Float || v.kind == VKind::Shadow)
    fail(DiagKind::NotStructured, t, std::string(what) + " depends on tensor data (a float used as an integer)");
  if (v.kind == VKind::Cond) fail(DiagKind::NotStructured, t, std::string(what) + " depends on tensor data");
  if (v.kind == VKind::Data) fail(DiagKind::NotStructured, t, std::string(what) + " depends on integer tensor data");
  fail(DiagKind::NotStructured, t, std::string(what) + ": a pointer used as an integer");
}

template <class D>
inline auto Machine<D>::as_float(std::uint32_t t, const Val<V>& v, DType type) -> V {
  if (v.kind == VKind::Float) return v.f;
  if constexpr (kMemo) {
    if (v.kind == VKind::Shadow) return V{materialized(v.f.id, std::uint32_t(v.i))};
  }
  if (v.kind == VKind::Int) {  // raw bits of a float constant (mov.b32 %f, 0x3f800000)
    if (__builtin_expect(v.aff != 0, 0)) affine_break(t, "the bits of a float depend on the CTA index");
    if (std::optional<V> x = from_bits(std::uint64_t(v.i), type)) return *x;
    fail(DiagKind::Unsupported, t, "an infinite or NaN float constant");
  }
  if (v.kind == VKind::Data)
    fail(DiagKind::NotStructured, t, "integer tensor data read as the bits of a float");
  fail(DiagKind::NotStructured, t, "a float operation on a pointer or predicate");
}

template <class D>
inline auto Machine<D>::address(std::uint32_t t, const Operand& o) -> Addr {
  if (o.kind == Operand::Kind::Buffer) return Addr{decl_buf(t, o.index), o.imm};
  Val<V> v = operand(t, o);
  slot_t_ = kNone;
  if (v.sched) {
    if (const SlotForm* f = slot_of(v)) return slot_address(t, o, v, *f);
    schedule_dependent(t, v.sched, "an address");
  }
  if (__builtin_expect(v.kind != VKind::Ptr, 0)) {
    // An integer .shared address (one a kernel computed from a shared
    // pointer with bit operations, or wrote as a number): the shared
    // window maps it back to (buffer, offset). Only shared addresses are
    // concrete integers; a generic or global one is not modelled.
    if (v.kind == VKind::Int && shared_operand(p_.code[pc_[t]], o)) {
      if (__builtin_expect(v.aff != 0, 0)) affine_break(t, "a .shared address depends on the CTA index");
      return window_addr(t, v.i + (o.kind == Operand::Kind::Reg ? o.imm : 0), &o);
    }
    fail(DiagKind::NotStructured, t,
         v.kind == VKind::Int ? "an address that is an integer, not a pointer into a known buffer (a pointer "
                                     "a spec gives as null is the integer 0)"
                              : "an address that depends on tensor data");
  }
  const Addr a{v.buf, v.i + (o.kind == Operand::Kind::Reg ? o.imm : 0), v.aff};
  if (__builtin_expect(ncta_ > 1, 0) && buf_rank_[a.buf] != kNone && buf_rank_[a.buf] != t / nb_)
    remote_access(t, o, buf_rank_[a.buf]);
  return a;
}

template <class D>
inline auto Machine<D>::cell(std::uint32_t t, const Addr& a, std::size_t k, std::size_t width, bool write)
    -> std::size_t {
  Memory<V>& m = mem_[a.buf];
  if (__builtin_expect(width < m.g || m.untyped, 0)) adapt(t, m, width);
  const std::int64_t byte = a.offset + std::int64_t(k * width);
  if (byte & std::int64_t(width - 1)) misaligned(t, m, byte, width);
  if (byte < 0 || std::uint64_t(byte) + width > m.bytes) out_of_bounds(t, m, byte, width, write);
  if (__builtin_expect(aff_ != nullptr, 0)) affine_access(t, a, m, byte, width);
  const std::size_t c = std::size_t(byte) >> m.gshift;
  return m.per_thread ? std::size_t(t) * m.ncells + c : c;
}

template <class D>
inline auto Machine<D>::write(std::uint32_t t, Memory<V>& m, std::size_t c, std::size_t width, const Val<V>& v,
                              std::uint32_t pc) -> void {
  if (width == m.g) {
    const std::uint32_t tag = make_tag(pc);
    check_write(t, m, c, pc, Access::Write, &v, 0);
    Cell<V>& x = m.cells[c];
    static_cast<Val<V>&>(x) = v;
    x.tag = tag;
    return;
  }
  write_slow(t, m, c, width, v, pc);
}

template <class D>
inline auto Machine<D>::alu(std::uint32_t t, const Instr& in) -> void {
  if (!sched_marks_) {  // no value is marked yet: nothing to track, unless this instruction reads an undefined register
    compute(t, in);
    if (__builtin_expect(sched_marks_, 0))
      for (std::uint32_t d : in.dst)
        if (d != kNoReg) reg(t, d).sched = std::max(reg(t, d).sched, pc_[t] + 1);
    return;
  }
  std::uint32_t sched = 0;
  std::size_t marked = 0, from_slot = kNone;  // operands with a mark; the one with a slot form
  for (std::size_t i = 0; i < in.src.size(); ++i) {
    const Operand& o = in.src[i];
    if (o.kind != Operand::Kind::Reg) continue;
    if (reg(t, o.index).kind == VKind::Undef) mark_undefined(t, o.index);
    const Val<V>& r = reg(t, o.index);
    if (r.sched) {
      ++marked;
      if (r.slot && slot_of(r)) from_slot = i;
    }
    sched = std::max(sched, r.sched);
  }
  if (__builtin_expect(marked == 1 && from_slot != kNone, 0)) return slot_alu(t, in, from_slot);
  compute(t, in);
  if (sched)
    for (std::uint32_t d : in.dst)
      if (d != kNoReg) {  // kNoReg: the sink '_'
        Val<V>& r = reg(t, d);
        r.sched = std::max(r.sched, sched);
        r.slot = 0;
      }
}

template <class D>
inline auto Machine<D>::slot_of(const Val<V>& v) const -> const SlotForm* {
  if (v.slot == 0 || v.slot > slot_forms_.size()) return nullptr;
  const SlotForm& f = slot_forms_[v.slot - 1u];
  const bool ptr = v.kind == VKind::Ptr;
  if (f.atom_pc + 1 != v.sched || f.value != v.i || f.ptr != ptr || (ptr && f.buf != v.buf) ||
      (!ptr && v.kind != VKind::Int))
    return nullptr;
  return &f;
}

template <class D>
inline auto Machine<D>::set_float(std::uint32_t t, std::uint32_t r, V x) -> void {
  Val<V>& d = reg(t, r);
  d.kind = VKind::Float;
  d.cmp = Cmp::EQ;
  d.buf = 0;
  d.i = 0;
  d.f = x;
  d.g = V{};
  d.sched = 0;
}

template <class D>
inline auto Machine<D>::special_aff(Special s) -> std::uint32_t {
  switch (s) {
    case Special::CtaidX: return aff_->unit(0);
    case Special::CtaidY: return aff_->unit(1);
    case Special::CtaidZ: return aff_->unit(2);
    case Special::ClusteridX:
    case Special::ClusteridY:
    case Special::ClusteridZ:
      if (cluster_.count() == 1)
        return aff_->unit(s == Special::ClusteridX ? 0 : s == Special::ClusteridY ? 1 : 2);
      aff_->break_at(kNone, "%clusterid in a launch with clusters");
      return 0;
    default: return 0;  // the thread's own index and the launch's shape
  }
}

}  // namespace tileverify::machine
