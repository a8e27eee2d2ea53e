// CtaAffineLog: what a run records about how it moves with the CTA index,
// and the test of another CTA against it (cta_affine.hpp says why it is sound).
#include "cta_affine.hpp"

#include "int_semantics.hpp"

#include <cstring>

namespace tileverify {

namespace {

// Checks kept before the log gives up (each is computed again per CTA).
constexpr std::size_t kMaxChecks = 1u << 21;
constexpr std::uint32_t kNone = UINT32_MAX;  // no instruction

std::string dim3_text(const Dim3& d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

// The range of the int64 values the machine keeps for type t (wrap_int's image).
void type_range(DType t, std::int64_t* lo, std::int64_t* hi) {
  const std::size_t bits = dtype_bytes(t) * 8;
  if (t == DType::Pred) {
    *lo = 0;
    *hi = 1;
  } else if (bits >= 64) {
    *lo = INT64_MIN;
    *hi = INT64_MAX;
  } else if (dtype_is_signed(t)) {
    *lo = -(std::int64_t(1) << (bits - 1));
    *hi = (std::int64_t(1) << (bits - 1)) - 1;
  } else {
    *lo = 0;
    *hi = (std::int64_t(1) << bits) - 1;
  }
}

}  // namespace

CtaAffineLog::CtaAffineLog(const Program& p, const Dim3& cta) : p_(p), cta_(cta) {
  vecs_.push_back(Vec{0, 0, 0});
  ids_[Vec{0, 0, 0}] = kZero;
}

std::uint32_t CtaAffineLog::intern(const Vec& v) {
  auto it = ids_.find(v);
  if (it != ids_.end()) return it->second;
  const std::uint32_t id = std::uint32_t(vecs_.size());
  vecs_.push_back(v);
  ids_.emplace(v, id);
  return id;
}

bool CtaAffineLog::add(std::uint32_t a, std::uint32_t b, std::uint32_t* out, bool subtract) {
  if (b == kZero) {
    *out = a;
    return true;
  }
  Vec r;
  for (int i = 0; i < 3; ++i) {
    const bool over = subtract ? __builtin_sub_overflow(vecs_[a][i], vecs_[b][i], &r[i])
                               : __builtin_add_overflow(vecs_[a][i], vecs_[b][i], &r[i]);
    if (over) {
      break_at(kNone, "an integer that depends on the CTA index overflows");
      return false;
    }
  }
  *out = intern(r);
  return true;
}

bool CtaAffineLog::scale(std::uint32_t a, std::int64_t k, std::uint32_t* out) {
  if (a == kZero || k == 1) {
    *out = k == 0 ? kZero : a;
    return true;
  }
  Vec r;
  for (int i = 0; i < 3; ++i)
    if (__builtin_mul_overflow(vecs_[a][i], k, &r[i])) {
      break_at(kNone, "an integer that depends on the CTA index overflows");
      return false;
    }
  *out = intern(r);
  return true;
}

void CtaAffineLog::range(std::uint32_t pc, std::uint32_t lid, std::int64_t v0, DType type, unsigned slot) {
  const std::uint64_t key = (std::uint64_t(pc) << 3 | slot) << 32 | lid;
  auto it = ranges_.find(key);
  if (it == ranges_.end()) {
    ranges_.emplace(key, Range{v0, v0, type, lid});
    return;
  }
  it->second.lo = std::min(it->second.lo, v0);
  it->second.hi = std::max(it->second.hi, v0);
}

std::size_t CtaAffineLog::CheckHash::operator()(const Check& c) const {
  std::uint64_t h = std::uint64_t(c.kind) * 0x9e3779b97f4a7c15ull ^ c.pc;
  auto mix = [&](std::uint64_t v) { h = (h ^ v) * 0x100000001b3ull + (h >> 29); };
  for (std::uint8_t i = 0; i < c.n; ++i) {
    mix(std::uint64_t(c.x[i]));
    mix(c.l[i]);
  }
  mix(std::uint64_t(c.r));
  mix(c.lr);
  return std::size_t(h);
}

bool CtaAffineLog::CheckEq::operator()(const Check& a, const Check& b) const {
  if (a.kind != b.kind || a.n != b.n || a.pc != b.pc || a.r != b.r || a.lr != b.lr) return false;
  for (std::uint8_t i = 0; i < a.n; ++i)
    if (a.x[i] != b.x[i] || a.l[i] != b.l[i]) return false;
  return true;
}

void CtaAffineLog::check(Kind k, std::uint32_t pc, std::size_t n, const std::int64_t* x, const std::uint32_t* l,
                         std::int64_t r, std::uint32_t lr) {
  if (broken()) return;
  Check c{};
  c.kind = k;
  c.n = std::uint8_t(std::min<std::size_t>(n, 4));
  c.pc = pc;
  for (std::uint8_t i = 0; i < c.n; ++i) {
    c.x[i] = x[i];
    c.l[i] = l[i];
  }
  c.r = r;
  c.lr = lr;
  seen_.insert(c);
  if (seen_.size() > kMaxChecks)
    break_at(pc, "more than " + std::to_string(kMaxChecks) +
                     " distinct operations on integers that depend on the CTA index");
}

void CtaAffineLog::access(std::uint32_t pc, std::uint32_t buf, const std::string& name, bool global,
                          std::uint64_t bytes, std::uint32_t element_bytes, std::uint32_t lid, std::int64_t byte,
                          std::size_t width) {
  if (broken()) return;
  if (!global && lid != kZero) {
    break_at(pc, "an address in " + name + " (shared or local memory) depends on the CTA index");
    return;
  }
  auto it = buffers_.find(buf);
  if (it == buffers_.end()) {
    Buffer b;
    b.name = name;
    b.global = global;
    b.bytes = bytes;
    b.element_bytes = element_bytes ? element_bytes : 1;
    b.lid = lid;
    b.lo = byte;
    b.hi = byte + std::int64_t(width);
    b.align = width;
    buffers_.emplace(buf, b);
    return;
  }
  Buffer& b = it->second;
  if (b.lid != lid) {
    const Vec& u = vecs_[b.lid];
    const Vec& v = vecs_[lid];
    break_at(pc, "two accesses to " + name + " move differently with the CTA index (by (" + std::to_string(u[0]) + "," +
                     std::to_string(u[1]) + "," + std::to_string(u[2]) + ") and (" + std::to_string(v[0]) + "," +
                     std::to_string(v[1]) + "," + std::to_string(v[2]) + ") bytes per CTA)");
    return;
  }
  b.lo = std::min(b.lo, byte);
  b.hi = std::max(b.hi, byte + std::int64_t(width));
  b.align = std::max<std::uint64_t>(b.align, width);
}

void CtaAffineLog::break_at(std::uint32_t pc, const std::string& why) {
  if (!broken_.empty()) return;
  broken_ = why;
  if (pc != kNone && pc < p_.code.size()) broken_ = p_.code[pc].loc.with_source() + ": " + why;
}

bool CtaAffineLog::moved(std::uint32_t lid, const Vec& d, std::int64_t* out) const {
  const Vec& l = vecs_[lid];
  std::int64_t s = 0;
  for (int i = 0; i < 3; ++i) {
    std::int64_t p;
    if (__builtin_mul_overflow(l[i], d[i], &p) || __builtin_add_overflow(s, p, &s)) return false;
  }
  *out = s;
  return true;
}

bool CtaAffineLog::translates_to(const Dim3& c, std::string* why) const {
  if (broken()) {
    if (why) *why = broken_;
    return false;
  }
  const Vec d{std::int64_t(c.x) - std::int64_t(cta_.x), std::int64_t(c.y) - std::int64_t(cta_.y),
              std::int64_t(c.z) - std::int64_t(cta_.z)};
  auto no = [&](std::uint32_t pc, const std::string& what) {
    if (why) *why = (pc < p_.code.size() ? p_.code[pc].loc.with_source() + ": " : std::string()) + what + " in CTA " +
                    dim3_text(c) + " (not as in " + dim3_text(cta_) + ")";
    return false;
  };
  for (const auto& [key, r] : ranges_) {
    std::int64_t s, lo, hi, a, b;
    type_range(r.type, &lo, &hi);
    if (!moved(r.lid, d, &s) || __builtin_add_overflow(r.lo, s, &a) || __builtin_add_overflow(r.hi, s, &b) || a < lo ||
        b > hi)
      return no(std::uint32_t(key >> 35), "an integer leaves the range of its type");
  }
  for (const auto& [buf, b] : buffers_) {
    std::int64_t s;
    if (!moved(b.lid, d, &s)) return no(kNone, "an address of " + b.name + " overflows");
    if (s % std::int64_t(b.element_bytes) != 0) return no(kNone, "the accesses to " + b.name + " move by part of an element");
    // A vector access aligned in c0 stays aligned when the move is a
    // multiple of its width (accesses are aligned to their own width).
    if (s % std::int64_t(b.align) != 0) return no(kNone, "a vector access to " + b.name + " would be misaligned");
    if (b.lo + s < 0 || b.hi + s > std::int64_t(b.bytes)) return no(kNone, "an access falls outside " + b.name);
  }
  for (const Check& k : seen_) {
    std::int64_t x[4] = {0, 0, 0, 0};
    for (std::uint8_t i = 0; i < k.n; ++i) {
      std::int64_t s;
      if (!moved(k.l[i], d, &s) || __builtin_add_overflow(k.x[i], s, &x[i])) return no(k.pc, "an operand overflows");
    }
    std::int64_t want, got = 0;
    if (!moved(k.lr, d, &want) || __builtin_add_overflow(k.r, want, &want)) return no(k.pc, "a result overflows");
    const Instr& in = p_.code[k.pc];
    switch (k.kind) {
      case Kind::Instr:
        if (machine::int_apply(in, x, &got) != machine::IntResult::Ok) return no(k.pc, "a division by zero");
        break;
      case Kind::PtrCompare: got = apply_cmp(in.cmp, x[0], x[1]); break;
      case Kind::WideProduct: {
        const DType ty = in.type;
        got = dtype_is_signed(ty)
                  ? machine::wrap_int(x[0], ty) * machine::wrap_int(x[1], ty)
                  : std::int64_t((std::uint64_t(machine::wrap_int(x[0], ty)) & machine::int_mask(ty)) *
                                 (std::uint64_t(machine::wrap_int(x[1], ty)) & machine::int_mask(ty)));
        break;
      }
      case Kind::Wrap: got = machine::wrap_int(x[0], in.type); break;
      case Kind::TmaCoord: got = tma_side(x[0], x[1]); break;
    }
    if (got != want)
      return no(k.pc, in.op == Opcode::Setp        ? std::string("a comparison comes out otherwise")
                      : k.kind == Kind::TmaCoord ? std::string("a TMA box is clipped by the tensor's bounds otherwise")
                                                 : std::string("an integer operation (") + opcode_name(in.op) +
                                                       ") gives another result");
  }
  return true;
}

std::map<std::string, std::int64_t> CtaAffineLog::element_shifts(const Dim3& c) const {
  const Vec d{std::int64_t(c.x) - std::int64_t(cta_.x), std::int64_t(c.y) - std::int64_t(cta_.y),
              std::int64_t(c.z) - std::int64_t(cta_.z)};
  std::map<std::string, std::int64_t> out;
  for (const auto& [buf, b] : buffers_) {
    if (!b.global) continue;
    std::int64_t s = 0;
    moved(b.lid, d, &s);
    out[b.name] = s / std::int64_t(b.element_bytes);
  }
  return out;
}

}  // namespace tileverify
