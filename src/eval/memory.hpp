// The evaluator's memory: byte-addressed buffers of cells, and the shadow
// state of the race check that goes with each cell.
//
// A buffer (a tensor argument, a .shared/.local array, module data) is
// bytes. It is stored as cells of one size, its granule g: a tensor's dtype
// size, or for an untyped (.b8) array the width of its first access. An
// access of width g at an aligned offset, nearly every access a kernel
// makes, is one cell, as when memory was typed. A narrower access re-grids
// the buffer down (each cell becomes g / g' cells); a wider one spans
// several cells and joins them. A cell holds a value (Val) and which slice
// of a stored value it is: part p of n, n = the store's width / g, and the
// pc of the store (a cp.async copies a source's slices as they are). Values
// that split exactly are stored split (integer bits into narrower integers,
// a packed pair of halves into its two halves), so slices are only of values
// that have no exact parts: a float of 4 or 8 bytes, a pointer, integer
// tensor data. Reading a slice alone, or joining values that do not make
// one (two f32 read as 8 bytes), is unsupported and names the store.
//
// Internal to the library; machine.hpp includes it before Machine<D>.
// Machine_memory.cpp does the accesses, machine_races.cpp the race check.
#pragma once

#include "tileverify/eval.hpp"
#include "../util/paged_array.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tileverify::machine {

template <class V>
struct Val;  // machine.hpp

inline constexpr std::uint32_t kNone = UINT32_MAX;
// Memory::pending marks of cells that are no copy's (machine_async.cpp).
inline constexpr std::uint32_t kMbarCell = UINT32_MAX, kMapCell = UINT32_MAX - 1;

// A cell: a value and its tag, which says what slice of a stored value the
// cell holds and which store made it. Deriving from Val puts the tag in
// Val's tail padding (g++ and clang++ reuse a non-POD base's tail padding),
// so a cell is no larger than a value.
//
// tag bits 0-3: the part p; 4-6: log2 of the parts n (1: a whole value);
// 7-31: pc + 1 of the instruction that stored the value (st, atom, wmma,
// cp.async), 0 for an input or initial value, kTagPcMax when the pc does
// not fit.
template <class V>
struct Cell : Val<V> {
  std::uint32_t tag = 0;
};

inline constexpr std::uint32_t kSliceBits = 0x7f;
inline constexpr std::uint32_t kTagPcMax = (std::uint32_t(1) << 25) - 1;

inline std::uint32_t log2_of(std::uint32_t x) {  // x a power of two
  std::uint32_t s = 0;
  while ((std::uint32_t(1) << s) < x) ++s;
  return s;
}

// The tag of part p of n (n a power of two up to 16) stored at pc.
inline std::uint32_t make_tag(std::uint32_t pc, std::uint32_t part = 0, std::uint32_t parts = 1) {
  const std::uint32_t at = pc == kNone ? 0 : pc + 1 < kTagPcMax ? pc + 1 : kTagPcMax;
  return at << 7 | log2_of(parts) << 4 | part;
}
inline std::uint32_t tag_part(std::uint32_t tag) { return tag & 0xf; }
inline std::uint32_t tag_parts(std::uint32_t tag) { return std::uint32_t(1) << (tag >> 4 & 7); }
// The storing pc, or kNone (an input or initial value, or a pc too large to keep).
inline std::uint32_t tag_pc(std::uint32_t tag) {
  const std::uint32_t at = tag >> 7;
  return at == 0 || at == kTagPcMax ? kNone : at - 1;
}
// Part p of n becomes parts p·k .. p·k + k - 1 of n·k when its cell is cut in k.
inline std::uint32_t sub_tag(std::uint32_t tag, std::uint32_t k, std::uint32_t j) {
  const std::uint32_t parts = tag_parts(tag) * k;
  return (tag & ~kSliceBits) | log2_of(parts) << 4 | (tag_part(tag) * k + j);
}

// Accesses of one kind to one cell that may be unordered among themselves
// (plain reads, atomics): one epoch (thread, clock) while they are ordered,
// a vector clock (an index into Machine::read_sets_) once two are not.
struct Epochs {
  std::uint32_t thread = kNone, clock = 0, pc = 0;
  std::int32_t set = -1;
};

// The last write is one epoch (w_*). Unordered plain writes of the same
// value are not a race (see check_write); after them every writer unordered
// with the others is kept, as later accesses must be ordered after all of
// them: w_* is the latest, w_more (an index into write_sets_, -1: none)
// holds the others.
// The atomics are also kept by kind (kinds: an index into
// Machine::atomic_kinds_, -1: none), each thread's latest of each kind, since
// whether two atomics commute depends on both (machine_races.cpp, check_atomic).
struct Shadow {
  std::uint32_t w_thread = kNone, w_clock = 0, w_pc = 0;
  std::int32_t w_more = -1;
  Epochs reads, atomics;
  std::int32_t kinds = -1;
};

// One thread's latest atomic of one kind on a cell: its epoch, and where its
// operands are in Machine::atomic_values_ (those whose value decides whether
// it commutes: exch, inc, dec, cas; kNone: none).
struct AtomicEpoch {
  std::uint32_t thread, clock, pc, values;
};

struct WriteEpoch {
  std::uint32_t thread, clock, pc;
};

// One column's entry in a read set (Epochs::set): the latest access of a
// thread or an agent, at its own clock. A set holds only the columns that
// accessed the cell, sorted by column: a cell of a tile is read by a few
// dozen of a CTA's threads between two writes, and a dense vector clock per
// such cell (8 KB for 1024 threads) made the sets most of a GEMM run's
// memory traffic.
struct ReadEpoch {
  std::uint32_t thread, clock, pc;
};

// AgentRead / AgentWrite: an asynchronous copy's (TMA, cp.async.bulk)
// access, made by its agent (machine_async.cpp); reports name the copy.
enum class Access : std::uint8_t { Read, Write, Atomic, AsyncWrite, AgentRead, AgentWrite };

inline const char* access_name(Access a) {
  switch (a) {
    case Access::Read: return "read";
    case Access::Write: return "write";
    case Access::Atomic: return "atomic";
    case Access::AsyncWrite: return "cp.async write";
    case Access::AgentRead: return "async read";
    case Access::AgentWrite: return "async write";
  }
  return "?";
}

template <class V>
struct Memory {
  std::string name;
  Space space = Space::Global;
  DType dtype = DType::F32;
  Role role = Role::Scratch;
  std::uint64_t bytes = 0;    // its size (per thread for local memory)
  std::uint64_t ncells = 0;   // cells of g bytes (per thread for local memory): bytes / g, rounded up
  std::uint32_t g = 1;        // the granule: bytes per cell, a power of two
  std::uint32_t gshift = 0;   // log2(g)
  // The element of messages, touch records and outputs: the dtype's size;
  // for an untyped array, the width of its first access (its elements as
  // the kernel first used them). A power of two.
  std::uint32_t unit = 1, ushift = 0;
  bool per_thread = false;
  // 1: accessed at an address not taken from an atom.add; 2: at one that is
  // (Machine::slot_rule).
  std::uint8_t slot_use = 0;
  bool untyped = false;            // declared as bytes and not accessed yet: its first access sets g
  bool read_only = false;          // .const data
  bool lazy_inputs = false;        // input cells whose symbol is not made yet hold an invalid handle
  std::vector<std::uint8_t> init;  // initial bytes of module data (empty: none)
  // Made a page at a time as the kernel touches them (util/paged_array.hpp):
  // a CTA of a large grid touches a small part of each tensor.
  detail::PagedArray<Cell<V>> cells;
  detail::PagedArray<Shadow> shadow;
  // per cell: id of a cp.async not yet retired (0: none; kMbarCell, kMapCell: the bytes of an mbarrier in
  // use or of a tensor map, which plain accesses may not touch); empty until one targets it
  std::vector<std::uint32_t> pending;
  std::vector<Touch> touches;          // tensor arguments, with RunOptions::record_touches: per element (unit)

  void set_granule(std::uint32_t size) {
    g = size;
    gshift = log2_of(size);
    ncells = (bytes + size - 1) >> gshift;
  }
  void set_unit(std::uint32_t size) {
    unit = size;
    ushift = log2_of(size);
  }
  // The first byte of cell c (c counted within its thread's block for local memory).
  std::uint64_t byte_of(std::size_t c) const { return std::uint64_t(per_thread ? c % ncells : c) << gshift; }
  // The element (in units) that holds byte b.
  std::uint64_t element_of_byte(std::uint64_t b) const { return b >> ushift; }
  std::uint64_t element_of(std::size_t c) const { return byte_of(c) >> ushift; }
  std::uint64_t elements() const { return bytes >> ushift; }
  // A tensor of the spec (an argument, or module data the host fills), whose
  // elements the user counts; the kernel's own arrays are counted in bytes.
  bool spec_tensor() const { return role != Role::Scratch; }
  // Reports' name of width bytes at byte b (memory_place, eval.hpp).
  std::string place(std::int64_t b, std::uint64_t width) const {
    // >> rounds a negative offset down, to the element it starts in.
    return memory_place(space, name, b, width, spec_tensor() ? std::optional<std::int64_t>(b >> ushift) : std::nullopt);
  }
};

// One cell's worth of an issued cp.async: the source was read at the
// cp.async; the shared destination (bytes [byte, byte + width) of buf) is
// written when a wait retires the copy's group, with the source's cell as
// it was, slice tag included.
template <class V>
struct AsyncCopy {
  std::uint32_t thread = 0, pc = 0, buf = 0, width = 0;
  std::uint64_t byte = 0;
  Cell<V> value;
};

}  // namespace tileverify::machine
