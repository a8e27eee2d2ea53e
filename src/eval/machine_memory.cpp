// Machine<D>: memory accesses. The bytes of a buffer (granules, re-gridding,
// values split into cells and joined from them: memory.hpp says how), and
// ld, st, atom / red, cp.async with its groups, and ldmatrix's rows on them.
// The race check on the cells is machine_races.cpp.
#include "machine.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace tileverify::machine {

namespace {

// Whether a and b are one value (the slices of one stored value, kept in
// several cells): the same kind and fields, the same domain value.
template <class D, class V>
bool identical(const Val<V>& a, const Val<V>& b) {
  return a.kind == b.kind && a.cmp == b.cmp && a.buf == b.buf && a.i == b.i && D::same(a.f, b.f) && D::same(a.g, b.g);
}

std::uint64_t low_bytes(std::size_t n) { return n >= 8 ? ~std::uint64_t(0) : (std::uint64_t(1) << (8 * n)) - 1; }

// "a 4-byte", "an 8-byte" (access widths are 1 to 16 bytes).
std::string sized(std::size_t n) { return std::string(n == 8 || n == 11 ? "an " : "a ") + std::to_string(n) + "-byte"; }

}  // namespace

// ------------------------------------------------------------ bytes

// An access cell() cannot take at the buffer's granule as it is: the first
// access of an untyped array sets its granule and unit (its initializer is
// read in cells of that size); a narrower access re-grids the buffer down.
template <class D>
void Machine<D>::adapt(std::uint32_t t, Memory<V>& m, std::size_t width) {
  if (width == 0 || width > 16 || (width & (width - 1)) != 0)
    fail(DiagKind::Unsupported, t, sized(width) + " access to '" + m.name + "'");
  if (m.untyped) {
    m.untyped = false;
    m.set_unit(std::uint32_t(width));
    if (width == m.g) return;
    m.set_granule(std::uint32_t(width));
    const std::size_t total = m.per_thread ? std::size_t(m.ncells) * n_ : std::size_t(m.ncells);
    m.cells.assign(total, Cell<V>{});
    if (!m.per_thread && o_.check_races) m.shadow.assign(total, Shadow{});
    fill_initial(m);
    return;
  }
  if (width < m.g) regrid(m, std::uint32_t(width));
}

// Cuts every cell in k = g / g2 (an access narrower than the granule came):
// each piece is the exact part of integer bits or of a pair of halves, or a
// slice of a value that has no parts. A piece keeps its cell's shadow, copy
// in flight and store; touch records are per element and stay.
template <class D>
void Machine<D>::regrid(Memory<V>& m, std::uint32_t g2) {
  const std::uint32_t k = m.g / g2;
  const std::size_t total = m.cells.size();
  reserve_cells(m, "'" + m.name + "' in cells of " + std::to_string(g2) + " bytes", std::uint64_t(total) * (k - 1));
  // Rare (a tensor read narrower than its elements), so every page is made.
  detail::PagedArray<Cell<V>> cells;
  cells.count_into(&paged_bytes_);
  cells.assign(total * k, Cell<V>{});
  for (std::size_t i = 0; i < total; ++i) split_cell(m.cells[i], m.g, g2, &cells[i * k]);
  m.cells.swap(cells);
  if (!m.shadow.empty()) {
    detail::PagedArray<Shadow> shadow;
    shadow.count_into(&paged_bytes_);
    shadow.assign(total * k, Shadow{});
    for (std::size_t i = 0; i < total; ++i) {
      shadow[i * k] = m.shadow[i];
      for (std::uint32_t j = 1; j < k; ++j) shadow[i * k + j] = copy_shadow(m.shadow[i]);
    }
    m.shadow.swap(shadow);
  }
  if (!m.pending.empty()) {
    std::vector<std::uint32_t> pending(total * k);
    for (std::size_t i = 0; i < total * k; ++i) pending[i] = m.pending[i / k];
    m.pending.swap(pending);
  }
  m.g = g2;
  m.gshift = log2_of(g2);
  m.ncells *= k;  // not bytes / g2 rounded up: each thread's block of local memory stays where it was
}

template <class D>
void Machine<D>::misaligned(std::uint32_t t, const Memory<V>& m, std::int64_t byte, std::size_t width) {
  fail(DiagKind::Unsupported, t,
       "a misaligned access to '" + m.name + "': " + std::to_string(width) + " bytes at byte " + std::to_string(byte) +
           ", which is not a multiple of " + std::to_string(width) + " (a GPU faults on it)");
}

// Named in bytes, as every report names memory (memory_place); a tensor of
// the spec also in its elements, which the spec counts.
template <class D>
void Machine<D>::out_of_bounds(std::uint32_t t, const Memory<V>& m, std::int64_t byte, std::size_t width, bool write) {
  const std::int64_t e = byte >> m.ushift;  // rounds down for a negative offset too
  Diagnostic d;
  d.kind = DiagKind::OutOfBounds;
  d.message = std::string(write ? "write to " : "read of ") + m.place(byte, width) + ", but '" + m.name + "' has " +
              (m.spec_tensor() ? std::to_string(m.elements()) + " elements (" + std::to_string(m.bytes) + " bytes)"
                               : std::to_string(m.bytes) + " bytes");
  d.loc = p_.code[pc_[t]].loc;
  d.threads = {t};
  d.buffer = m.name;
  d.element = e;
  d.byte = byte;
  d.width = std::uint32_t(width);
  d.detail = "  instruction: " + p_.instr_text(pc_[t]) + "\n";
  throw Stop{d};
}

// v, `width` bytes stored with the whole-value tag `tag`, as width / g cells
// of g bytes: integer bits and the halves of a pair exactly, any other value
// as its slices.
template <class D>
void Machine<D>::pieces(const Val<V>& v, std::size_t width, std::uint32_t g, std::uint32_t tag, Cell<V>* out) {
  const std::size_t k = width / g;
  if (k == 1) {
    out[0] = make_cell(v, tag);
    return;
  }
  if (v.kind == VKind::Int || v.kind == VKind::Undef) {
    for (std::size_t j = 0; j < k; ++j) {
      out[j] = make_cell(v, tag);
      if (v.kind == VKind::Int) out[j].i = std::int64_t(std::uint64_t(v.i) >> (8 * g * j) & low_bytes(g));
    }
    return;
  }
  if (v.kind == VKind::Pair && width == 4) {
    Val<V> h = v;
    h.kind = VKind::Float;
    h.g = V{};
    pieces(h, 2, g, tag, out);
    h.f = v.g;
    pieces(h, 2, g, tag, out + k / 2);
    return;
  }
  for (std::size_t j = 0; j < k; ++j) out[j] = make_cell(v, (tag & ~kSliceBits) | log2_of(std::uint32_t(k)) << 4 | std::uint32_t(j));
}

// A cell of `width` bytes as cells of g: a whole value in its pieces, a
// slice in its sub-slices.
template <class D>
void Machine<D>::split_cell(const Cell<V>& x, std::size_t width, std::uint32_t g, Cell<V>* out) {
  if (!(x.tag & kSliceBits)) return pieces(x, width, g, x.tag, out);
  const std::uint32_t k = std::uint32_t(width / g);
  for (std::uint32_t j = 0; j < k; ++j) out[j] = make_cell(x, sub_tag(x.tag, k, j));
}

// The value of `width` bytes from cell c (no byte of them Undef): one
// cell's whole value; a stored value's slices 0..k-1 in order; else the two
// halves joined (integer bits, or two 16-bit halves as a packed pair).
// Anything else has no exact value at this width: unsupported, naming the
// store(s) of the bytes.
template <class D>
auto Machine<D>::join(const Reader& r, Memory<V>& m, std::size_t c, std::size_t width) -> Val<V> {
  const std::size_t k = width >> m.gshift;
  const std::uint32_t tag = m.cells[c].tag;
  if (k == 1) {
    if (tag & kSliceBits) bad_bytes(r, m, c, "splits " + origin(m, c));
    return read_cell(m, c);
  }
  if (tag_parts(tag) == k && tag_part(tag) == 0) {
    Val<V> v = read_cell(m, c);
    const std::uint32_t logk = log2_of(std::uint32_t(k));
    std::size_t j = 1;
    for (; j < k; ++j) {
      const Val<V>& o = read_cell(m, c + j);
      if ((m.cells[c + j].tag & kSliceBits) != (logk << 4 | std::uint32_t(j)) || !identical<D>(v, o)) break;
      v.sched = std::max(v.sched, o.sched);
    }
    if (j == k) return v;
  }
  const Val<V> lo = join(r, m, c, width / 2), hi = join(r, m, c + k / 2, width / 2);
  return combine(r, m, c, k, lo, hi, width / 2);
}

template <class D>
auto Machine<D>::combine(const Reader& r, Memory<V>& m, std::size_t c, std::size_t k, const Val<V>& lo,
                         const Val<V>& hi, std::size_t half) -> Val<V> {
  Val<V> v;
  v.sched = std::max(lo.sched, hi.sched);
  if (lo.kind == VKind::Undef || hi.kind == VKind::Undef) return v;  // some byte never written (an output's)
  if (lo.kind == VKind::Int && hi.kind == VKind::Int && half <= 4) {
    v.kind = VKind::Int;
    v.i = std::int64_t((std::uint64_t(lo.i) & low_bytes(half)) | (std::uint64_t(hi.i) & low_bytes(half)) << (8 * half));
    return v;
  }
  // Integer bits in a 16-bit half are a number here only as zero, which is
  // the same in f16 and bf16 (which one they are is not known).
  auto half_value = [&](const Val<V>& h, V* out) {
    if (h.kind == VKind::Float) {
      *out = h.f;
      return true;
    }
    if (h.kind != VKind::Int || (std::uint64_t(h.i) & 0x7fff) != 0) return false;
    *out = d_.constant(Rational(0));
    return true;
  };
  if (half == 2 && half_value(lo, &v.f) && half_value(hi, &v.g)) {
    v.kind = VKind::Pair;  // f the lower address
    return v;
  }
  bad_bytes(r, m, c, "joins " + origin(m, c) + " and " + origin(m, c + k / 2) + ", which make no " +
                         std::to_string(2 * half) + "-byte value");
}

// What cell c holds, for messages: "the 4-byte f32 value written at
// k.ptx:12:3 (st.shared.f32 [%r1], %f1)".
template <class D>
std::string Machine<D>::origin(const Memory<V>& m, std::size_t c) const {
  const Cell<V> x = m.cells.peek(c);
  const std::uint32_t pc = tag_pc(x.tag);
  const std::size_t bytes = std::size_t(tag_parts(x.tag)) << m.gshift;
  std::string kind = "16-bit float";
  switch (x.kind) {
    case VKind::Shadow:  // a float of 4 or 8 bytes
    case VKind::Float:  // a float's width says its format, but for f16 / bf16: the store's or the tensor's type
      if (bytes == 4 || bytes == 8)
        kind = bytes == 4 ? "f32" : "f64";
      else if (pc != kNone && dtype_is_float(p_.code[pc].type))
        kind = dtype_name(p_.code[pc].type);
      else if (pc == kNone && dtype_is_float(m.dtype))
        kind = dtype_name(m.dtype);
      break;
    case VKind::Int: kind = "integer"; break;
    case VKind::Ptr: kind = "pointer"; break;
    case VKind::Data: kind = "integer data"; break;
    case VKind::Pair: kind = "packed pair"; break;
    case VKind::Cond: kind = "predicate"; break;
    case VKind::Undef: kind = "unwritten"; break;
  }
  const std::string s = "the " + std::to_string(bytes) + "-byte " + kind + " value";
  if (pc != kNone) return s + " written at " + p_.code[pc].loc.with_source() + " (" + p_.instr_text(pc) + ")";
  if (x.tag >> 7 != 0) return s + " a store wrote";
  // Where the whole value starts: cell c is part tag_part of it.
  const std::int64_t start = std::int64_t(m.byte_of(c)) - std::int64_t(tag_part(x.tag)) * std::int64_t(m.g);
  const std::string place = m.place(start, bytes);  // "4 bytes at global x+4 (element 1)"
  return s + place.substr(place.find(" at ")) + " held at the start (an input or initial value)";
}

template <class D>
void Machine<D>::bad_bytes(const Reader& r, const Memory<V>& m, std::size_t c, const std::string& what) {
  Diagnostic d;
  d.kind = DiagKind::Unsupported;
  d.message = (r.t == kNone ? "output " + m.name + "[" + std::to_string(r.byte >> m.ushift) + "]"
                            : sized(r.width) + " " + r.what + " of " + m.name + " at byte " + std::to_string(r.byte)) +
              " " + what;
  const std::uint32_t store = tag_pc(m.cells.peek(c).tag);
  if (r.t != kNone) {
    d.loc = p_.code[pc_[r.t]].loc;
    d.threads = {r.t};
    d.detail = "  instruction: " + p_.instr_text(pc_[r.t]) + "\n";
  } else if (store != kNone) {
    d.loc = p_.code[store].loc;
  }
  d.buffer = m.name;
  d.element = std::int64_t(r.byte >> m.ushift);
  d.detail +=
      "  memory is bytes, and a value splits or joins where its parts are exact: integer bits, the two\n"
      "  halves of a packed pair; a 4- or 8-byte float, a pointer or integer tensor data has no parts\n";
  throw Stop{d};
}

template <class D>
auto Machine<D>::read_slow(std::uint32_t t, Memory<V>& m, std::size_t c, std::size_t width, std::uint32_t pc)
    -> Val<V> {
  const std::size_t k = width >> m.gshift;
  for (std::size_t j = 0; j < k; ++j) check_read(t, m, c + j, pc);
  for (std::size_t j = 0; j < k && aff_; ++j)
    if (m.cells[c + j].aff) affine_break(t, "an integer that depends on the CTA index is read in pieces");
  for (std::size_t j = 0; j < k; ++j)
    if (m.cells[c + j].kind == VKind::Undef) {
      if (m.per_thread) return unset_local(t, m, c + j);
      note_uninitialized(t, m, c + j);
      return Val<V>{};
    }
  return join(Reader{t, width, "read", m.byte_of(c)}, m, c, width);
}

template <class D>
void Machine<D>::write_slow(std::uint32_t t, Memory<V>& m, std::size_t c, std::size_t width, const Val<V>& v,
                            std::uint32_t pc) {
  const std::size_t k = width >> m.gshift;
  if (v.aff) affine_break(t, "an integer that depends on the CTA index is stored in pieces");
  Cell<V> p[16];
  pieces(v, width, m.g, make_tag(pc), p);
  for (std::size_t j = 0; j < k; ++j) p[j].aff = 0;
  for (std::size_t j = 0; j < k; ++j) check_write(t, m, c + j, pc, Access::Write, &p[j], p[j].tag & kSliceBits);
  for (std::size_t j = 0; j < k; ++j) m.cells[c + j] = p[j];
}

// ldmatrix's rows: `count` 2-byte elements from a, read in cells of the
// buffer's granule (2 bytes at least), so that a tile stored as 4-byte words
// of packed pairs is read without re-gridding it. A row is read whole, so
// reading its words reads no byte the instruction does not.
template <class D>
void Machine<D>::read_halves(std::uint32_t t, const Addr& a, std::size_t count, V* out) {
  Memory<V>& m = mem_[a.buf];
  std::size_t u = m.untyped ? 2 : std::max<std::size_t>(2, std::min<std::size_t>(m.g, 8));
  while ((count * 2) % u) u /= 2;
  const std::uint32_t pc = pc_[t];
  for (std::size_t i = 0; i < count * 2 / u; ++i) {
    const std::size_t c = cell(t, a, i, u, false);
    const Val<V> v = read(t, m, c, u, pc);
    collective_sched_ = std::max(collective_sched_, v.sched);
    V* h = out + i * (u / 2);
    if (v.kind == VKind::Undef) {
      note_uninitialized(t, m, c);
      for (std::size_t j = 0; j < u / 2; ++j) h[j] = poison(m, c);
    } else if (v.kind == VKind::Float && u == 2) {
      h[0] = v.f;
    } else if (v.kind == VKind::Pair && u == 4) {
      h[0] = v.f;
      h[1] = v.g;
    } else if (v.kind == VKind::Int) {
      for (std::size_t j = 0; j < u / 2; ++j) {
        const std::uint64_t bits = std::uint64_t(v.i) >> (16 * j) & 0xffff;
        if (bits & 0x7fff)
          fail(DiagKind::Unsupported, t,
               "ldmatrix reads the integer bits " + std::to_string(bits) + " from " + m.name + " at byte " +
                   std::to_string(m.byte_of(c) + 2 * j) +
                   " as a 16-bit element: only zero is the same number in f16 and bf16, and which one it is is not known");
        h[j] = d_.constant(Rational(0));
      }
    } else {
      bad_bytes(Reader{t, 2, "ldmatrix read", m.byte_of(c)}, m, c, "splits " + origin(m, c));
    }
  }
}

// ------------------------------------------------------------ accesses

// A vector access (ld/st .v2, .v4) must be aligned to its whole size (the
// PTX ISA, "Addresses as Operands": an address is naturally aligned to a
// multiple of the access size, else the behaviour is undefined); cell()
// checks each element's alignment.
template <class D>
void Machine<D>::check_vector(std::uint32_t t, const Memory<V>& m, const Addr& a, std::size_t width, std::size_t count) {
  if (count > 1 && a.offset % std::int64_t(width * count) != 0) misaligned(t, m, a.offset, width * count);
  // The whole vector's alignment must survive a move to another CTA.
  if (__builtin_expect(aff_ != nullptr, 0) && count > 1) affine_access(t, a, m, a.offset, width * count);
}

template <class D>
void Machine<D>::load(std::uint32_t t, const Instr& in) {
  // ld.param of a by-value struct's field (at an offset of the parameter, or
  // through a register holding its address) reads the struct's memory.
  const bool struct_field =
      in.space == Space::Param &&
      (in.src[0].kind == Operand::Kind::Param ? l_.args[in.src[0].index].is_struct
                                              : in.src[0].kind == Operand::Kind::Reg && is_struct_address(t, in.src[0]));
  if (in.space == Space::Param && !struct_field) {
    if (in.src[0].kind == Operand::Kind::Param && l_.args[in.src[0].index].is_tensor_map)
      fail(DiagKind::Unsupported, t,
           "a load of the bytes of the tensor map '" + p_.params[in.src[0].index].name +
               "': tileverify models tensor maps as what TMA reads, not as their 128-byte encoding");
    set(t, in.dst[0], operand(t, in.src[0]));
    return;
  }
  Addr a = address(t, in.src[0]);
  Memory<V>& m = mem_[a.buf];
  const std::size_t width = dtype_bytes(in.type);
  const std::uint32_t pc = pc_[t];
  check_vector(t, m, a, width, in.dst.size());
  for (std::size_t k = 0; k < in.dst.size(); ++k) {
    const std::size_t c = cell(t, a, k, width, false);
    Val<V> v = read(t, m, c, width, pc, true);  // a shadow stays one (machine_shadows.cpp)
    if (v.kind == VKind::Undef && m.per_thread) v = unset_local(t, m, c);
    if (__builtin_expect(slot_t_ == t, 0) && slot_now(t)) {
      // What a slot holds depends on which thread took it.
      v.sched = std::max(v.sched, pc + 1);
      v.slot = 0;
      sched_marks_ = true;
    }
    if (v.kind == VKind::Undef) {
      // Report it, but run on with a poison value: the read may be one side
      // of a race (a missing barrier), which is the better report.
      note_uninitialized(t, m, c);
      set(t, in.dst[k], float_val(poison(m, c)));
      continue;
    }
    if (v.kind == VKind::Int) {
      if (!dtype_is_float(in.type)) {
        const std::int64_t x = v.i;
        v.i = wrap(v.i, in.type);  // memory holds the bytes: ld zero- or sign-extends them
        if (__builtin_expect(v.aff != 0, 0) && aff_) {
          aff_->check(CtaAffineLog::Kind::Wrap, pc, 1, &x, &v.aff, v.i, v.aff);
          if (aff_->broken()) aff_ = nullptr;
        }
      }
      else if (!m.init.empty())
        v = float_val(as_float(t, v, in.type));  // module data holds bits: a float load reads a float
    }
    set(t, in.dst[k], v);
  }
}

template <class D>
void Machine<D>::note_uninitialized(std::uint32_t t, const Memory<V>& m, std::size_t c) {
  if (uninitialized_) return;
  Diagnostic d;
  d.kind = DiagKind::Uninitialized;
  d.message = m.space == Space::Param
                  ? "read of byte " + std::to_string(m.byte_of(c)) + " of the by-value struct parameter " + m.name +
                        ", which no field of the spec's \"struct\" covers (padding, or a field left out)"
                  : "read of " + m.place(std::int64_t(m.byte_of(c)), m.g) + ", which nothing has written";
  d.loc = p_.code[pc_[t]].loc;
  d.threads = {t};
  d.buffer = m.name;
  d.element = std::int64_t(m.element_of(c));
  d.byte = std::int64_t(m.byte_of(c));
  d.width = m.g;
  d.detail = "  instruction: " + p_.instr_text(pc_[t]) + "\n";
  uninitialized_ = d;
}

// Local memory is where nvcc -G copies aggregates member by member, padding
// and members never set included: a cooperative_groups::thread_block passed
// by value is 24 bytes of which the constructor sets 8, and its copy reads
// all 24, as the copy of a trivially copyable class copies its bytes. No
// rule of the PTX ISA makes such a load fault; only its value is unknown,
// and it matters only if something uses it. So the register
// holds an undefined value, marked like a register read before its write
// (mark_undefined): moved, stored and loaded again freely, reported as
// uninitialized where it would show: an address, a branch or predicate, an
// output, a warp collective's control operand (schedule_dependent). Shared
// and global memory keep the immediate report: there an unwritten read is
// far more often a missing store or barrier, and the race it may be one
// side of is the better report.
template <class D>
auto Machine<D>::unset_local(std::uint32_t t, const Memory<V>& m, std::size_t c) -> Val<V> {
  const std::uint32_t pc = pc_[t];
  if (!undefined_why_.count(pc))
    undefined_why_.emplace(pc, "thread " + tname(t) + " read byte " + std::to_string(m.byte_of(c)) +
                                   " of local " + m.name + ", which nothing had written");
  Val<V> v;
  v.kind = VKind::Int;
  v.sched = pc + 1;
  sched_marks_ = true;
  return v;
}

// A store writes the bytes of its width: an integer's low bytes, a packed
// pair's low half for a 16-bit store. Wider than the granule, the value is
// split into the cells (write_slow).
template <class D>
void Machine<D>::store(std::uint32_t t, const Instr& in) {
  Addr a = address(t, in.src[0]);
  Memory<V>& m = mem_[a.buf];
  check_writable(t, m);
  const std::size_t width = dtype_bytes(in.type);
  const std::uint32_t pc = pc_[t];
  check_vector(t, m, a, width, in.src.size() - 1);
  for (std::size_t k = 1; k < in.src.size(); ++k) {
    const std::size_t c = cell(t, a, k - 1, width, true);
    Val<V> v = operand_keep(t, in.src[k], width == m.g);
    if (__builtin_expect(slot_t_ == t, 0) && slot_now(t)) {
      // Which slot holds this value depends on which thread took which slot.
      v.sched = std::max(v.sched, pc + 1);
      v.slot = 0;
      sched_marks_ = true;
    }
    if (v.kind == VKind::Int) {
      v.i = std::int64_t(std::uint64_t(v.i) & low_bytes(width));
      if (__builtin_expect(v.aff != 0, 0) && aff_) {
        // An output must not depend on the CTA index (its value would
        // differ from CTA to CTA, not only its place); a value in shared or
        // local memory may, while it keeps to the store's width.
        if (m.space == Space::Global && !m.per_thread)
          affine_break(t, "an integer that depends on the CTA index is stored to global memory");
        else if (width < 8)
          aff_->range(pc, v.aff, v.i, width == 4 ? DType::U32 : width == 2 ? DType::U16 : DType::U8);
      }
    } else if (v.kind == VKind::Pair && width == 2) {
      v.kind = VKind::Float;
      v.g = V{};
    } else if (v.kind == VKind::Data && dtype_is_float(m.dtype)) {
      fail(DiagKind::NotStructured, t, "integer tensor data stored as the bits of a float into '" + m.name + "'");
    }
    write(t, m, c, width, v, pc);
  }
}

// atom / red: one read-modify-write, as the PTX ISA's "Parallel
// Synchronization and Communication Instructions: atom" defines each
// operation. Atomics that commute (check_atomic) leave the same value in
// memory in every order of them (reals add associatively, max and min are
// order-free, a function commutes with itself), which is why they never
// race. The old value an atom returns is the one of this schedule: it is
// marked, and using it where the schedule would show (an output, an
// address, a branch) is reported. AtomOp::Load (a compare-and-swap loop's
// first read) returns the value and writes nothing.
template <class D>
void Machine<D>::atomic(std::uint32_t t, const Instr& in) {
  Addr a = address(t, in.src[0]);
  Memory<V>& m = mem_[a.buf];
  const AtomOp op = AtomOp(in.mode);
  if (op != AtomOp::Load) check_writable(t, m);
  const DType ty = in.type;
  const std::size_t width = dtype_bytes(ty);
  const std::size_t c = cell(t, a, 0, width, true);
  Val<V> operands[2];
  if (op != AtomOp::Load) operands[0] = operand(t, in.src[1]);
  if (op == AtomOp::Cas) operands[1] = operand(t, in.src[2]);
  const Val<V>& v = operands[0];
  const std::uint32_t pc = pc_[t];
  const std::size_t k = width >> m.gshift;
  for (std::size_t j = 0; j < k; ++j) check_atomic(t, m, c + j, pc, operands);
  Val<V> old;
  if (k == 1 && !(m.cells[c].tag & kSliceBits)) {
    old = read_cell(m, c);
  } else {
    std::size_t j = 0;
    while (j < k && m.cells[c + j].kind != VKind::Undef) ++j;
    if (j == k) old = join(Reader{t, width, "atomic", m.byte_of(c)}, m, c, width);
  }
  const bool fl = dtype_is_float(ty);
  if (old.kind == VKind::Undef) {
    note_uninitialized(t, m, c);
    old = fl ? float_val(poison(m, c)) : int_val(0);
  }
  const std::string name = std::string("atom.") + atom_op_name(op);
  Val<V> now;
  bool writes = true;
  if (op == AtomOp::Load) {
    writes = false;
  } else if (op == AtomOp::Exch) {
    now = v;
  } else if (op == AtomOp::Cas) {
    // x == b ? c : x, on the bits; the model has the bits of integers only,
    // or knows two values equal when they are the same value.
    const Val<V>& cmp = operands[0];
    if (old.sched || cmp.sched) schedule_dependent(t, std::max(old.sched, cmp.sched), "the comparison of an atom.cas");
    bool equal = false;
    if (old.kind == VKind::Int && cmp.kind == VKind::Int)
      equal = (std::uint64_t(old.i) & low_bytes(width)) == (std::uint64_t(cmp.i) & low_bytes(width));
    else if (same_value(old, cmp))
      equal = true;
    else
      fail(DiagKind::NotStructured, t,
           "atom.cas compares the element's value with its operand, and whether they are equal depends on the data");
    now = equal ? operands[1] : old;
    if (!equal) writes = false;
  } else if (fl) {
    V x = as_float(t, old, ty), y = as_float(t, v, ty);
    switch (op) {
      case AtomOp::Add: now = float_val(d_.add(x, y)); break;
      case AtomOp::Mul: now = float_val(d_.mul(x, y)); break;
      case AtomOp::Min: now = float_val(d_.min(x, y)); break;
      case AtomOp::Max: now = float_val(d_.max(x, y)); break;
      default: fail(DiagKind::Unsupported, t, name + " on a float type");
    }
  } else if (old.kind == VKind::Data || v.kind == VKind::Data) {
    V x = as_data(t, old, ty, "an atomic's memory operand"), y = as_data(t, v, ty, "an atomic's operand");
    switch (op) {
      case AtomOp::Add: now = data_val(d_.add(x, y)); break;
      case AtomOp::Mul: now = data_val(d_.mul(x, y)); break;
      case AtomOp::Min: now = data_val(d_.min(x, y)); break;
      case AtomOp::Max: now = data_val(d_.max(x, y)); break;
      case AtomOp::Inc:
      case AtomOp::Dec:
        fail(DiagKind::NotStructured, t, name + " on integer tensor data (it wraps at its bound, a comparison of the data)");
      default:
        fail(DiagKind::NotStructured, t, name + " on integer tensor data (a bit operation)");
    }
    old.kind = VKind::Data;
    old.f = x;
  } else {
    // atomicMax((int*)p, __float_as_int(v)): the integer order of float bits
    // is the float order for non-negative floats only (two negative floats
    // compare reversed), and the sign of tensor data is not known here.
    if ((op == AtomOp::Min || op == AtomOp::Max) && (old.kind == VKind::Float || v.kind == VKind::Float))
      fail(DiagKind::NotStructured, t,
           name + "." + dtype_name(ty) + " on the bits of a float (integer order is float order only for "
           "non-negative floats, and the sign of the data is not known)");
    std::int64_t x = wrap(as_int(t, old, "an atomic's memory operand"), ty);
    std::int64_t y = wrap(as_int(t, v, "an atomic's operand"), ty);
    bool lt = dtype_is_signed(ty) ? x < y : (std::uint64_t(x) & mask(ty)) < (std::uint64_t(y) & mask(ty));
    const std::uint64_t ux = std::uint64_t(x) & mask(ty), uy = std::uint64_t(y) & mask(ty);
    switch (op) {
      case AtomOp::Add: now = int_val(wrap(std::int64_t(std::uint64_t(x) + std::uint64_t(y)), ty)); break;
      case AtomOp::Mul: now = int_val(wrap(std::int64_t(std::uint64_t(x) * std::uint64_t(y)), ty)); break;
      case AtomOp::Min: now = int_val(lt ? x : y); break;
      case AtomOp::Max: now = int_val(lt ? y : x); break;
      case AtomOp::And: now = int_val(wrap(x & y, ty)); break;
      case AtomOp::Or: now = int_val(wrap(x | y, ty)); break;
      case AtomOp::Xor: now = int_val(wrap(x ^ y, ty)); break;
      // PTX ISA, atom: inc: (r >= s) ? 0 : r + 1; dec: ((r == 0) || (r > s)) ? s : r - 1 (unsigned).
      case AtomOp::Inc: now = int_val(wrap(std::int64_t(ux >= uy ? 0 : ux + 1), ty)); break;
      case AtomOp::Dec: now = int_val(wrap(std::int64_t(ux == 0 || ux > uy ? uy : ux - 1), ty)); break;
      default: fail(DiagKind::Unsupported, t, name + " on an integer type");
    }
    old.i = x;
  }
  if (writes) {
    if (now.kind == VKind::Int)
      now.i = std::int64_t(std::uint64_t(now.i) & low_bytes(width));  // memory holds the bytes, as a store leaves them
    // What the update stored depends on the marked values it read (an
    // exchange reads only its operand).
    now.sched = op == AtomOp::Exch ? v.sched : std::max({now.sched, old.sched, v.sched, operands[1].sched});
    if (k == 1) {
      m.cells[c] = make_cell(now, make_tag(pc));
    } else {
      Cell<V> p[16];
      pieces(now, width, m.g, make_tag(pc), p);
      for (std::size_t j = 0; j < k; ++j) m.cells[c + j] = p[j];
    }
  }
  std::uint16_t form = 0;
  if ((op == AtomOp::Add && !in.dst.empty() && old.kind == VKind::Int) || !counter_of_.empty())
    form = slot_atomic(t, in, a.buf, c, old, v, now);
  if (!in.dst.empty()) {
    sched_marks_ = true;
    old.sched = pc + 1;
    old.slot = form;
    set(t, in.dst[0], old);
  }
}

// ------------------------------------------------------------ cp.async

// cp.async [dst], [src], cp_size[, src_size]: the source is read now (as a
// load by this thread); each destination cell is pending until a wait
// retires the copy's group, and is written then, by this thread. Bytes past
// src_size are zeros (the zero-fill form predicated copies use). The copy
// moves cells of the smaller granule of the two buffers (an untyped one has
// none yet; at most cp_size), so each source cell goes to the destination as
// it is, a slice of a wider value included: a copy moves bytes, whatever
// they hold.
template <class D>
void Machine<D>::cp_async(std::uint32_t t, const Instr& in) {
  Addr dst = address(t, in.src[0]), src = address(t, in.src[1]);
  Memory<V>& dm = mem_[dst.buf];
  Memory<V>& sm = mem_[src.buf];
  if (dm.space != Space::Shared || dm.per_thread)
    fail(DiagKind::Unsupported, t, "cp.async into '" + dm.name + "', which is not shared memory");
  if (sm.space != Space::Global && sm.space != Space::Const)
    fail(DiagKind::Unsupported, t, "cp.async from '" + sm.name + "', which is not global memory");
  const std::int64_t cp_size = in.src[2].imm;
  const std::int64_t src_size =
      in.src.size() > 3 ? as_int(t, operand(t, in.src[3]), "a cp.async source size") : cp_size;
  if (cp_size <= 0 || cp_size > 16 || src_size < 0 || src_size > cp_size)
    fail(DiagKind::Unsupported, t,
         "a cp.async of " + std::to_string(cp_size) + " bytes (" + std::to_string(src_size) + " from the source)");
  std::int64_t unit = 16;
  if (!sm.untyped) unit = std::min<std::int64_t>(unit, sm.g);
  if (!dm.untyped) unit = std::min<std::int64_t>(unit, dm.g);
  if (sm.untyped && dm.untyped) unit = 4;
  while (cp_size % unit != 0 || src_size % unit != 0) unit /= 2;
  const std::size_t u = std::size_t(unit);
  const std::uint32_t pc = pc_[t];
  for (std::size_t k = 0; k < std::size_t(cp_size) / u; ++k) {
    // Both buffers have cells of u bytes once cell() has taken the first.
    const std::size_t dc = cell(t, dst, k, u, true);
    Cell<V> v = make_cell(int_val(0), make_tag(pc));  // zero-fill: all-zero bits are 0 in every format
    if (std::int64_t(k * u) < src_size) {
      const std::size_t sc = cell(t, src, k, u, false);
      check_read(t, sm, sc, pc);
      const Val<V>& x = read_cell(sm, sc);
      if (x.kind == VKind::Undef) {
        note_uninitialized(t, sm, sc);
        v = make_cell(float_val(poison(sm, sc)), make_tag(pc));
      } else {
        v = make_cell(x, (sm.cells[sc].tag & kSliceBits) | make_tag(pc));  // the slice as it is, stored by the copy
      }
    }
    if (dm.pending.size() != dm.cells.size()) dm.pending.assign(dm.cells.size(), 0);
    check_pending(t, dm, dc, Access::AsyncWrite, pc);  // two copies in flight to one cell
    check_copy_issue(t, dm, dc, pc);                   // before the issue: machine_races.cpp
    AsyncCopy<V> cp;
    cp.thread = t;
    cp.pc = pc;
    cp.buf = dst.buf;
    cp.width = std::uint32_t(u);
    cp.byte = dm.byte_of(dc);
    cp.value = v;
    copies_.push_back(cp);
    std::uint32_t id = std::uint32_t(copies_.size());
    dm.pending[dc] = id;
    need_copy_groups();
    open_copies_[t].push_back(id);
  }
}

// The per-thread cp.async bookkeeping, made on first use: a deque per
// thread is two allocations, which a kernel without cp.async (most) would
// pay for every thread of every run.
template <class D>
void Machine<D>::need_copy_groups() {
  if (!copy_groups_.empty()) return;
  open_copies_.assign(n_, {});
  copy_groups_.assign(n_, {});
}

// The copies of a group complete: each writes its cells now, checked as a
// write by the copying thread at this point of its program. The destination
// may have been re-gridded since the copy was issued (by an access to other
// cells of it): the copy's bytes are its cells now.
template <class D>
void Machine<D>::retire(std::uint32_t t, const std::vector<std::uint32_t>& group) {
  for (std::uint32_t id : group) {
    AsyncCopy<V>& cp = copies_[id - 1];
    Memory<V>& m = mem_[cp.buf];
    const std::size_t c = std::size_t(cp.byte >> m.gshift), k = cp.width >> m.gshift;
    if (k == 1) {
      if (m.pending[c] == id) m.pending[c] = 0;
      check_write(t, m, c, cp.pc, Access::AsyncWrite);
      m.cells[c] = cp.value;
    } else {
      Cell<V> p[16];
      split_cell(cp.value, cp.width, m.g, p);
      for (std::size_t j = 0; j < k; ++j) {
        if (m.pending[c + j] == id) m.pending[c + j] = 0;
        check_write(t, m, c + j, cp.pc, Access::AsyncWrite);
        m.cells[c + j] = p[j];
      }
    }
    cp.value = Cell<V>{};
  }
}

template class Machine<SymbolicDomain>;
template class Machine<ConcreteDomain>;
template class Machine<PayloadDomain>;

}  // namespace tileverify::machine
