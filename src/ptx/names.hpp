// Name lookup for the PTX lowering (lower.cpp, its only user): NameTable,
// name -> index for the registers, variables and labels instructions name,
// and DeclaredRegisters, the registers a body declares.
#pragma once

#include "tileverify/program.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tileverify::ptx {

// The n bytes at p (n <= 8) in one word, by fixed-size loads (overlapping
// where n is not a load's size): every byte lands in the word, so that two
// such words of the same n are equal only if the bytes are.
inline std::uint64_t load_upto8(const char* p, std::size_t n) {
  std::uint64_t a = 0, b = 0;
  if (n >= 4) {
    std::uint32_t x, y;
    std::memcpy(&x, p, 4);
    std::memcpy(&y, p + n - 4, 4);
    a = x;
    b = y;
  } else if (n > 0) {
    a = std::uint8_t(p[0]) | std::uint32_t(std::uint8_t(p[n / 2])) << 8 | std::uint32_t(std::uint8_t(p[n - 1])) << 16;
  }
  return a | b << 32;
}

// name -> index for the names an instruction's operands look up (registers,
// variables, labels). A std::map did several string comparisons a lookup and
// a node allocation per register. Most names are a stem and a number (%r12,
// %rd3, $L__BB0_7: what .reg %r<N> declares): those are an array index in the
// stem's family. Any other name goes to a hash table (open addressing, the
// names copied into one buffer).
class NameTable {
 public:
  // Sets name's index; naming it again replaces the earlier one (as map[name] = id did).
  void set(std::string_view name, std::uint32_t id) {
    std::string_view stem;
    std::uint32_t number = 0;
    if (numbered(name, &stem, &number)) {
      Family* f = family(stem);
      if (!f && families_.size() < 16) f = &families_.emplace_back(Family{pack(stem), stem.size(), std::string(stem), {}});
      // A family's array grows with its largest number, so a stray huge
      // number (%r9999999) goes to the hash table instead.
      if (f && (number < f->ids.size() || (number < (1u << 20) && number <= 2 * f->ids.size() + 1024))) {
        if (number >= f->ids.size()) f->ids.resize(std::max<std::size_t>(number + 1, 2 * f->ids.size()), kNone);
        f->ids[number] = id;
        return;
      }
    }
    set_hashed(name, id);
  }
  // The index of name, or null (valid until the next set()).
  const std::uint32_t* find(std::string_view name) const {
    std::string_view stem;
    std::uint32_t number = 0;
    if (numbered(name, &stem, &number)) {
      // In the array if set since it covered the number; else maybe hashed
      // from before (an array only grows, so a name once in it stays there).
      const Family* f = family(stem);
      if (f && number < f->ids.size() && f->ids[number] != kNone) return &f->ids[number];
    }
    return find_hashed(name);
  }

 private:
  static bool in_digits(char c) { return c >= '0' && c <= '9'; }
  static constexpr std::uint32_t kNone = ~std::uint32_t(0);  // no index for this number
  struct Family {
    std::uint64_t key;               // the stem, packed (see pack())
    std::size_t size;                // of the stem
    std::string stem;
    std::vector<std::uint32_t> ids;  // by number; kNone: not set
  };
  // Up to 8 of a stem's bytes in one word, which with the length tells
  // families apart by two comparisons (and by the whole stem when it is
  // longer): the bytes p[0], p[n/2], p[n-1] below 4 bytes, two overlapping
  // 4-byte loads from 4 on, so that the key holds every byte. No switch on
  // the length: its indirect jump mispredicted where stems of different
  // lengths (%f, %rd) alternate, as they do in most instructions.
  static std::uint64_t pack(std::string_view stem) { return load_upto8(stem.data(), std::min<std::size_t>(stem.size(), 8)); }
  // name = stem + a decimal number without leading zeros ("%r12": "%r", 12).
  // Up to 7 digits, read from the end in one pass.
  static bool numbered(std::string_view name, std::string_view* stem, std::uint32_t* number) {
    std::uint32_t v = 0, scale = 1;
    std::size_t j = name.size();
    for (; j > 0; --j) {
      const std::uint32_t d = std::uint32_t(std::uint8_t(name[j - 1])) - '0';
      if (d > 9) break;
      if (scale == 10000000) return false;  // an eighth digit
      v += d * scale;
      scale *= 10;
    }
    if (scale == 1 || (scale > 10 && name[j] == '0')) return false;  // no digits, or a leading zero
    *stem = name.substr(0, j);
    *number = v;
    return true;
  }
  // The family of stem, or null. There are at most 16 (set() hashes the
  // names of any further stem), so that this search stays short.
  const Family* family(std::string_view stem) const {
    const std::uint64_t key = pack(stem);
    for (const Family& f : families_)
      if (f.key == key && f.size == stem.size() && (stem.size() <= 8 || same(f.stem, stem))) return &f;
    return nullptr;
  }
  Family* family(std::string_view stem) {
    return const_cast<Family*>(static_cast<const NameTable*>(this)->family(stem));
  }
  // The hash table: out of line, as most names never reach it.
  [[gnu::noinline]] void set_hashed(std::string_view name, std::uint32_t id) {
    if (4 * (size_ + 1) > 3 * slots_.size()) rehash(std::max<std::size_t>(16, 2 * slots_.size()));
    const std::uint32_t h = hash(name);
    for (std::size_t i = h & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      Slot& s = slots_[i];
      if (s.length == kEmpty) {
        s = Slot{h, std::uint32_t(names_.size()), std::uint32_t(name.size()), id};
        names_.append(name);
        ++size_;
        return;
      }
      if (s.hash == h && s.length == name.size() && same(key(s), name)) {
        s.id = id;
        return;
      }
    }
  }
  [[gnu::noinline]] const std::uint32_t* find_hashed(std::string_view name) const {
    if (size_ == 0) return nullptr;
    const std::uint32_t h = hash(name);
    for (std::size_t i = h & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      const Slot& s = slots_[i];
      if (s.length == kEmpty) return nullptr;
      if (s.hash == h && s.length == name.size() && same(key(s), name)) return &s.id;
    }
  }
  static constexpr std::uint32_t kEmpty = ~std::uint32_t(0);  // a slot's length when it holds no name
  struct Slot {
    std::uint32_t hash = 0;
    std::uint32_t offset = 0, length = kEmpty;  // the name, in names_
    std::uint32_t id = 0;
  };
  // Register names are short (%r12, %rd3): the bytes are packed 8 at a time
  // into a word, which one multiplication mixes (a byte-at-a-time hash is a
  // chain of dependent multiplications, as long as the name).
  static std::uint32_t hash(std::string_view s) {
    std::uint64_t h = s.size();
    std::size_t i = 0;
    for (; i < s.size();) {
      std::uint64_t word = 0;
      for (std::size_t end = std::min(s.size(), i + 8); i < end; ++i) word = (word << 8) | std::uint8_t(s[i]);
      h = (h ^ word) * 0x9E3779B97F4A7C15ull;
      h ^= h >> 29;
    }
    return std::uint32_t(h ^ (h >> 32));
  }
  std::string_view key(const Slot& s) const { return std::string_view(names_.data() + s.offset, s.length); }
  // a == b for names whose hashes and lengths already match: a plain loop,
  // cheaper than a call to memcmp for a few bytes.
  static bool same(std::string_view a, std::string_view b) {
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i]) return false;
    return true;
  }
  void rehash(std::size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    for (const Slot& s : old) {
      if (s.length == kEmpty) continue;
      std::size_t i = s.hash & (capacity - 1);
      while (slots_[i].length != kEmpty) i = (i + 1) & (capacity - 1);
      slots_[i] = s;
    }
  }
  std::vector<Family> families_;
  std::vector<Slot> slots_;  // a power of two, at most 3/4 full
  std::string names_;
  std::size_t size_ = 0;
};


// The registers one function body declares, kept as declared: `.reg .b32
// %r<N>` is one entry however large N is (a broken or hostile file may
// declare %r<2147483647>, which entering every name took minutes and
// gigabytes for). A name is matched against the declarations only when an
// instruction uses it, so that lowering costs what the code uses, never
// what the declarations promise.
//
// A name declared twice denotes its last declaration, as when every name
// went into a table in order: nvcc's inline asm blocks each declare their
// scratch registers (`.reg .f16 low, high`) in nested scopes, which the
// parser flattens into one list.
class DeclaredRegisters {
 public:
  // count < 0: the single register `name`; else `name`0 .. `name`(count-1).
  // `name` must outlive this table (it is a view into the Module).
  void add(std::string_view name, std::int64_t count, DType type) {
    const std::uint32_t order = next_order_++;
    if (count < 0) {
      singles_[name] = Decl{0, type, order};
      return;
    }
    if (count == 0) return;
    // Per stem, a stack of ranges whose counts fall from bottom to top: a
    // new range hides every earlier one it covers entirely, so that the
    // latest range holding number n is found by a binary search.
    std::vector<Decl>& stack = ranges_[name];
    while (!stack.empty() && stack.back().count <= std::uint64_t(count)) stack.pop_back();
    stack.push_back(Decl{std::uint64_t(count), type, order});
  }

  // The type of the declaration `name` denotes; false if none declares it.
  bool find(std::string_view name, DType* type) const {
    const Decl* best = nullptr;
    if (auto it = singles_.find(name); it != singles_.end()) best = &it->second;
    // name = stem + number, where the stem may end in digits too: %r12 is
    // the 12th of %r<13> and the 2nd of %r1<3>. Every split of the trailing
    // digits is a candidate; numbers have at most 10 digits (counts are
    // below 2^31) and no leading zero.
    std::size_t digits = name.size();
    while (digits > 0 && name[digits - 1] >= '0' && name[digits - 1] <= '9') --digits;
    for (std::size_t j = std::max<std::size_t>({digits, 1, name.size() > 10 ? name.size() - 10 : 0}); j < name.size(); ++j) {
      if (name[j] == '0' && j + 1 < name.size()) continue;
      auto it = ranges_.find(name.substr(0, j));
      if (it == ranges_.end()) continue;
      std::uint64_t number = 0;
      for (std::size_t i = j; i < name.size(); ++i) number = number * 10 + std::uint64_t(name[i] - '0');
      const std::vector<Decl>& stack = it->second;
      const auto holding = std::partition_point(stack.begin(), stack.end(), [&](const Decl& d) { return d.count > number; });
      if (holding == stack.begin()) continue;
      const Decl& d = *(holding - 1);  // the latest range of this stem with the number
      if (!best || d.order > best->order) best = &d;
    }
    if (!best) return false;
    *type = best->type;
    return true;
  }

 private:
  struct Decl {
    std::uint64_t count;  // a range's; 0 for a single register
    DType type;
    std::uint32_t order;  // of declaration: the latest wins
  };
  std::unordered_map<std::string_view, Decl> singles_;
  std::unordered_map<std::string_view, std::vector<Decl>> ranges_;  // by stem
  std::uint32_t next_order_ = 0;
};

}  // namespace tileverify::ptx
