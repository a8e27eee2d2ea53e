// Spec files: reading and checking the JSON that names a check's kernels,
// launch and parameters (docs/cli.md, "Spec files").
#include "tileverify/equiv.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tileverify {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct SpecError {
  std::string message;
};

Dim3 dim3_of(const json& j, const std::string& what, std::uint32_t fill = 1) {
  if (!j.is_array() || j.empty() || j.size() > 3) throw SpecError{what + " must be an array of 1 to 3 positive integers"};
  std::uint32_t v[3] = {fill, fill, fill};
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_number_integer() || j[i].get<std::int64_t>() < 0)
      throw SpecError{what + " must be an array of 1 to 3 non-negative integers"};
    v[i] = j[i].get<std::uint32_t>();
  }
  return Dim3{v[0], v[1], v[2]};
}

DType dtype_of(const std::string& s, const std::string& where) {
  static const std::pair<const char*, DType> names[] = {
      {"f32", DType::F32}, {"f16", DType::F16}, {"bf16", DType::BF16}, {"f64", DType::F64}, {"s32", DType::S32},
      {"u32", DType::U32}, {"s64", DType::S64}, {"u64", DType::U64},   {"s8", DType::S8},   {"u8", DType::U8},
      {"s16", DType::S16}, {"u16", DType::U16}, {"b32", DType::B32}, {"b64", DType::B64}};
  for (const auto& [n, t] : names)
    if (s == n) return t;
  throw SpecError{where + ": unknown dtype '" + s + "'"};
}

double half_value(std::uint16_t bits, bool bf16) {
  return double((bf16 ? Rational::from_bf16_bits(bits) : Rational::from_f16_bits(bits)).to_long_double());
}

// The bit pattern a kernel receives for a scalar argument of the given dtype,
// as a C++ host would pass it: numbers are converted (to the nearest
// representable value, ties to even, for the float types); a string "0x.."
// gives the bits themselves.
std::int64_t scalar_bits(const json& v, DType t, const std::string& where) {
  const std::size_t bits = dtype_bytes(t) * 8;
  if (v.is_string()) {
    std::string text = v.get<std::string>();
    if (text.size() < 3 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X') ||
        text.find_first_not_of("0123456789abcdefABCDEF", 2) != std::string::npos || text.size() - 2 > bits / 4)
      throw SpecError{where + ": a string \"value\" must be the scalar's bits in hex, at most " + std::to_string(bits / 4) +
                      " digits, like \"0x3fc00000\""};
    return std::int64_t(std::stoull(text.substr(2), nullptr, 16));
  }
  if (!v.is_number()) throw SpecError{where + ": \"value\" must be a number (or a hex string of bits)"};
  if (dtype_is_float(t)) {
    double d = v.get<double>();
    if (!std::isfinite(d)) throw SpecError{where + ": \"value\" must be finite"};
    if (t == DType::F64) {
      std::uint64_t b;
      std::memcpy(&b, &d, sizeof b);
      return std::int64_t(b);
    }
    if (t == DType::F32) {
      float f = float(d);
      if (!std::isfinite(f)) throw SpecError{where + ": " + v.dump() + " is out of the range of f32"};
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
      throw SpecError{where + ": " + v.dump() + " is out of the range of " + (bf16 ? "bf16" : "f16")};
    return std::int64_t(best);
  }
  if (!v.is_number_integer())
    throw SpecError{where + ": \"value\" " + v.dump() + " must be an integer for an integer dtype"};
  if (dtype_is_signed(t)) {
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(INT64_MAX))
      throw SpecError{where + ": " + v.dump() + " is out of the range of the dtype"};
    std::int64_t x = v.get<std::int64_t>();
    if (bits < 64 && (x < -(std::int64_t(1) << (bits - 1)) || x >= (std::int64_t(1) << (bits - 1))))
      throw SpecError{where + ": " + v.dump() + " is out of the range of the dtype"};
    return x;
  }
  if (v.is_number_integer() && !v.is_number_unsigned() && v.get<std::int64_t>() < 0)
    throw SpecError{where + ": " + v.dump() + " is negative, but the dtype is unsigned (give the bits as \"0x..\")"};
  std::uint64_t u = v.get<std::uint64_t>();
  if (bits < 64 && u >> bits) throw SpecError{where + ": " + v.dump() + " is out of the range of the dtype"};
  return std::int64_t(u);
}

KernelSpec kernel_of(const json& j, const std::string& what, const fs::path& base) {
  if (!j.is_object()) throw SpecError{"\"" + what + "\" must be an object with \"ptx\", \"kernel\" and \"block\""};
  for (const char* key : {"ptx", "kernel", "block"})
    if (!j.contains(key)) throw SpecError{"\"" + what + "\" needs \"" + key + "\""};
  KernelSpec k;
  if (!j["ptx"].is_string() || !j["kernel"].is_string())
    throw SpecError{"\"" + what + "\": \"ptx\" and \"kernel\" must be strings"};
  fs::path p = j["ptx"].get<std::string>();
  k.ptx = (p.is_absolute() ? p : base / p).string();
  k.kernel = j["kernel"].get<std::string>();
  k.block = dim3_of(j["block"], "\"" + what + "\".block");
  if (j.contains("dynamic_shared")) k.dynamic_shared = j["dynamic_shared"].get<std::uint64_t>();
  if (j.contains("grid")) k.grid = dim3_of(j["grid"], "\"" + what + "\".grid");
  if (j.contains("symbols")) {
    const json& m = j["symbols"];
    if (!m.is_object()) throw SpecError{"\"" + what + "\".symbols must map module variable names to tensor names"};
    for (auto it = m.begin(); it != m.end(); ++it) {
      if (!it.value().is_string())
        throw SpecError{"\"" + what + "\".symbols: '" + it.key() + "' must name a tensor of \"params\""};
      k.symbols[it.key()] = it.value().get<std::string>();
    }
  }
  return k;
}

}  // namespace

SpecResult parse_spec(const std::string& text, const std::string& path) {
  SpecResult r;
  try {
    json j = json::parse(text);
    if (!j.is_object()) throw SpecError{"the spec must be a JSON object"};
    Spec s;
    s.path = path;
    fs::path base = fs::path(path).parent_path();
    if (j.contains("kernel")) {
      s.ref = kernel_of(j["kernel"], "kernel", base);
    } else {
      if (!j.contains("ref")) throw SpecError{"the spec needs \"ref\" and \"opt\" (or \"kernel\" for one kernel)"};
      s.ref = kernel_of(j["ref"], "ref", base);
      if (j.contains("opt")) s.opt = kernel_of(j["opt"], "opt", base);
    }
    if (j.contains("grid")) s.grid = dim3_of(j["grid"], "\"grid\"");
    if (j.contains("cta")) s.cta = dim3_of(j["cta"], "\"cta\"", 0);
    if (s.cta.x >= s.grid.x || s.cta.y >= s.grid.y || s.cta.z >= s.grid.z)
      throw SpecError{"\"cta\" lies outside \"grid\""};
    if (!j.contains("params") || !j["params"].is_array()) throw SpecError{"the spec needs a \"params\" array"};
    for (std::size_t i = 0; i < j["params"].size(); ++i) {
      const json& p = j["params"][i];
      std::string where = "params[" + std::to_string(i) + "]";
      if (!p.is_object() || !p.contains("name") || !p.contains("dtype"))
        throw SpecError{where + " needs \"name\" and \"dtype\""};
      ParamSpec ps;
      ps.name = p["name"].get<std::string>();
      ps.dtype = dtype_of(p["dtype"].get<std::string>(), where);
      if (p.contains("value")) {
        ps.tensor = false;
        ps.value = scalar_bits(p["value"], ps.dtype, where + " ('" + ps.name + "')");
      } else {
        if (!p.contains("shape") || !p.contains("role"))
          throw SpecError{where + " ('" + ps.name + "') needs \"shape\" and \"role\" (a tensor) or \"value\" (a scalar)"};
        for (const json& d : p["shape"]) ps.shape.push_back(d.get<std::uint64_t>());
        std::string role = p["role"].get<std::string>();
        if (role == "in") ps.role = Role::In;
        else if (role == "out") ps.role = Role::Out;
        else if (role == "inout") ps.role = Role::InOut;
        else throw SpecError{where + ": role must be \"in\", \"out\" or \"inout\", not \"" + role + "\""};
      }
      s.params.push_back(ps);
    }
    for (const std::optional<KernelSpec>* k : {&s.ref, &s.opt}) {
      if (!*k) continue;
      for (const auto& [var, tensor] : (*k)->symbols) {
        auto p = std::find_if(s.params.begin(), s.params.end(), [&](const ParamSpec& q) { return q.name == tensor; });
        if (p == s.params.end() || !p->tensor)
          throw SpecError{"symbols: '" + var + "' is given by '" + tensor + "', which is no tensor of \"params\""};
        if (p->role != Role::In)
          throw SpecError{"symbols: the tensor '" + tensor + "' that gives '" + var + "' must have role \"in\""};
      }
    }
    if (j.contains("ctas")) {
      if (!j["ctas"].is_string() || j["ctas"].get<std::string>() != "all")
        throw SpecError{"\"ctas\" can only be \"all\" (or leave it out and name one CTA with \"cta\")"};
      s.all_ctas = true;
    }
    if (j.contains("expect")) s.expect = j["expect"].get<std::string>();
    r.spec = s;
  } catch (const SpecError& e) {
    r.error = path + ": " + e.message;
  } catch (const json::exception& e) {
    r.error = path + ": " + e.what();
  }
  return r;
}

SpecResult load_spec(const std::string& path) {
  std::ifstream in(path);
  if (!in) return SpecResult{std::nullopt, path + ": cannot read the spec file"};
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_spec(ss.str(), path);
}

}  // namespace tileverify
