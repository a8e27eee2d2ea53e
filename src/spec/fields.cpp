// Spec files: the readers of single values (integers, strings, dtypes,
// shapes, scalars' bits), the check of an object's keys, and how messages
// show what the spec wrote.
#include "reader.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tileverify::spec_detail {

// ------------------------------------------------------------ showing values

// A string as a JSON literal: quotes, escapes, and bytes that are not UTF-8
// replaced (a message must itself be printable, and valid in a JSON report).
std::string json_quoted(const std::string& s) {
  // A key or name of a megabyte would make a message of a megabyte.
  std::string q = json(s.size() > 80 ? s.substr(0, 60) : s).dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 80 ? q.insert(q.size() - 1, "...") : q;
}

// A value as the spec wrote it (compact JSON), cut short when long: a
// message quotes a value, not a 10 000-element list.
std::string shown(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

// "ref.block" -> "\"ref.block\"": fields are named as dotted paths in quotes.
std::string field(const std::string& path) { return "\"" + path + "\""; }

std::string what_kind(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "a list";
    case json::value_t::object: return "an object";
    default: return "a number";
  }
}


// ------------------------------------------------------------ keys

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// A key the spec format does not know is an error, not ignored: "shpae"
// ignored would leave the tensor without a shape, or worse, a field with its
// default value that the author meant to set.
void only_keys(const json& object, const std::string& where, std::initializer_list<const char*> allowed) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    const std::string& key = it.key();
    if (std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; })) continue;
    std::string list, nearest;
    std::size_t best = 3;  // suggest only close matches (a typo, not another word)
    for (const char* a : allowed) {
      list += std::string(list.empty() ? "" : ", ") + "\"" + a + "\"";
      std::size_t d = edit_distance(key, a);
      if (d < best) {
        best = d;
        nearest = a;
      }
    }
    fail(where + " has the unknown key " + json_quoted(key) + (nearest.empty() ? "" : " (did you mean \"" + nearest + "\"?)") +
         "; its keys are " + list);
  }
}

// ------------------------------------------------------------ integers

// Why v is not a non-negative integer, or "" with the value in *out.
// nlohmann keeps integers up to 2^64 - 1 exact and turns anything else (a
// fraction, an exponent, a larger integer) into a double; a double is never
// converted to an integer here (1e300 to uint64 is undefined behaviour, and
// 512.5 would be silently cut to 512).
std::string not_uint(const json& v, std::uint64_t* out) {
  if (v.is_number_unsigned()) {
    *out = v.get<std::uint64_t>();
    return "";
  }
  if (v.is_number_integer()) return "negative";
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::fabs(d) >= 18446744073709551616.0) return "far too large";
    if (d == std::floor(d)) return "not written as an integer (no decimal point or exponent)";
    return "not an integer";
  }
  if (v.is_string()) return "a string (write the number without quotes)";
  return what_kind(v) + ", not an integer";
}

// An integer from lo to hi; the message names the field, the value and the range.
std::uint64_t uint_in(const json& v, const std::string& name, std::uint64_t lo, std::uint64_t hi,
                      const std::string& meaning) {
  std::uint64_t u = 0;
  std::string why = not_uint(v, &u);
  if (why.empty() && (u < lo || u > hi)) why = u < lo ? "too small" : "too large";
  if (!why.empty())
    fail(field(name) + " is " + shown(v) + ", " + why + ": it must be an integer from " + std::to_string(lo) + " to " +
         std::to_string(hi) + " (" + meaning + ")");
  return u;
}

std::string text_of(const json& v, const std::string& name, const std::string& meaning, bool may_be_empty) {
  if (!v.is_string()) fail(field(name) + " is " + shown(v) + ", " + what_kind(v) + ": it must be a string (" + meaning + ")");
  std::string s = v.get<std::string>();
  if (s.empty() && !may_be_empty) fail(field(name) + " is empty: it must name " + meaning);
  return s;
}


// ------------------------------------------------------------ params

DType dtype_of(const json& v, const std::string& name) {
  static const std::pair<const char*, DType> names[] = {
      {"f32", DType::F32}, {"f16", DType::F16}, {"bf16", DType::BF16}, {"f64", DType::F64}, {"s32", DType::S32},
      {"u32", DType::U32}, {"s64", DType::S64}, {"u64", DType::U64},   {"s8", DType::S8},   {"u8", DType::U8},
      {"s16", DType::S16}, {"u16", DType::U16}, {"b32", DType::B32}, {"b64", DType::B64}};
  std::string list;
  for (const auto& entry : names) list += std::string(list.empty() ? "" : ", ") + entry.first;
  if (v.is_string())
    for (const auto& entry : names)
      if (v.get<std::string>() == entry.first) return entry.second;
  fail(field(name) + " is " + shown(v) + (v.is_string() ? "" : ", " + what_kind(v)) + ": it must be one of " + list);
}

// The most elements one tensor may have: 2^48 (256 T elements, a petabyte of
// f32) is beyond every GPU's memory, yet far from overflowing the byte and
// index arithmetic of 64-bit counts. Whether a smaller tensor fits is the
// run's memory budget to say (--max-memory): that is a limit (unknown), this
// is bad input.
constexpr std::uint64_t kMaxElements = std::uint64_t(1) << 48;

std::vector<std::uint64_t> shape_of(const json& v, const std::string& name, const std::string& tensor) {
  const std::string rule = "a shape is a list of positive integers, like [128] or [64, 64]";
  if (!v.is_array() || v.empty()) fail(field(name) + " of '" + tensor + "' is " + shown(v) + ": " + rule);
  std::vector<std::uint64_t> shape;
  std::uint64_t elements = 1;
  bool overflow = false;
  for (const json& d : v) {
    std::uint64_t u = 0;
    std::string why = not_uint(d, &u);
    if (why.empty() && u == 0) why = "zero";
    if (!why.empty()) fail(field(name) + " of '" + tensor + "' is " + shown(v) + ": " + shown(d) + " is " + why + "; " + rule);
    shape.push_back(u);
    if (elements > UINT64_MAX / u) overflow = true;
    else elements *= u;
  }
  if (overflow || elements > kMaxElements)
    fail("'" + tensor + "' (" + field(name) + " " + shown(v) + ") has " +
         (overflow ? std::string("more than 2^64") : std::to_string(elements)) +
         " elements, more than any GPU memory holds (at most 2^48 = " + std::to_string(kMaxElements) + ")");
  return shape;
}

namespace {

double half_value(std::uint16_t bits, bool bf16) {
  return double((bf16 ? Rational::from_bf16_bits(bits) : Rational::from_f16_bits(bits)).to_long_double());
}

}  // namespace

// The bit pattern a kernel receives for a scalar argument of the given dtype,
// as a C++ host would pass it: numbers are converted (to the nearest
// representable value, ties to even, for the float types); a string "0x.."
// gives the bits themselves.
// `key` names the value in messages: "\"value\"" for a scalar, "\"init\"" for a
// tensor's initial value, "the number" for an "args" entry.
std::int64_t scalar_bits(const json& v, DType t, const std::string& where, const std::string& key) {
  const std::size_t bits = dtype_bytes(t) * 8;
  if (v.is_string()) {
    std::string text = v.get<std::string>();
    if (text.size() < 3 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X') ||
        text.find_first_not_of("0123456789abcdefABCDEF", 2) != std::string::npos || text.size() - 2 > bits / 4)
      fail(where + ": a string " + key + " must be the scalar's bits in hex, at most " + std::to_string(bits / 4) +
           " digits, like \"0x3fc00000\", not " + shown(v));
    return std::int64_t(std::stoull(text.substr(2), nullptr, 16));
  }
  if (!v.is_number())
    fail(where + ": " + key + " is " + shown(v) + ", " + what_kind(v) + ": it must be a number (or a hex string of bits)");
  if (dtype_is_float(t)) {
    double d = v.get<double>();
    if (!std::isfinite(d)) fail(where + ": " + key + " must be finite");
    if (t == DType::F64) {
      std::uint64_t b;
      std::memcpy(&b, &d, sizeof b);
      return std::int64_t(b);
    }
    if (t == DType::F32) {
      // float(d) of a double beyond float's range is undefined behaviour:
      // compare first (FLT_MAX plus half an ulp still rounds to FLT_MAX).
      if (std::fabs(d) >= 3.4028235677973366e38) fail(where + ": " + shown(v) + " is out of the range of f32");
      float f = float(d);
      std::uint32_t b;
      std::memcpy(&b, &f, sizeof b);
      return std::int64_t(b);
    }
    // f16 / bf16: the nearest of the 2^16 patterns (ties to the even one).
    bool bf16 = t == DType::BF16;
    std::uint32_t best = 0;
    double best_err = INFINITY;
    for (std::uint32_t b = 0; b < 0x10000u; ++b) {
      int exp = bf16 ? int((b >> 7) & 0xff) : int((b >> 10) & 0x1f);
      if (exp == (bf16 ? 0xff : 0x1f)) continue;
      double err = std::fabs(half_value(std::uint16_t(b), bf16) - d);
      if (err < best_err || (err == best_err && (b & 1) == 0 && (best & 1) == 1)) {
        best = b;
        best_err = err;
      }
    }
    if (best_err > std::fabs(d) * 1e-2 && best_err > 1e-7)
      fail(where + ": " + shown(v) + " is out of the range of " + (bf16 ? "bf16" : "f16"));
    return std::int64_t(best);
  }
  if (!v.is_number_integer())
    fail(where + ": " + key + " " + shown(v) + " must be an integer for an integer dtype");
  if (dtype_is_signed(t)) {
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(INT64_MAX))
      fail(where + ": " + shown(v) + " is out of the range of the dtype");
    std::int64_t x = v.get<std::int64_t>();
    if (bits < 64 && (x < -(std::int64_t(1) << (bits - 1)) || x >= (std::int64_t(1) << (bits - 1))))
      fail(where + ": " + shown(v) + " is out of the range of the dtype");
    return x;
  }
  if (!v.is_number_unsigned())
    fail(where + ": " + shown(v) + " is negative, but the dtype is unsigned (give the bits as \"0x..\")");
  std::uint64_t u = v.get<std::uint64_t>();
  if (bits < 64 && u >> bits) fail(where + ": " + shown(v) + " is out of the range of the dtype");
  return std::int64_t(u);
}


}  // namespace tileverify::spec_detail
