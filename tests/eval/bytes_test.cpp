// Byte-addressed memory (src/eval/memory.hpp): accesses of 1 to 16 bytes at
// any aligned offset, checked against a plain byte array. Programs are
// generated PTX text, run by the evaluator in the concrete domain: random
// sequences of mixed-width stores and loads of integer bits into a shared
// .b8 array and into a global tensor; out-of-bounds accesses at byte
// granularity; races between overlapping accesses of different widths.
// Values with no exact parts (a 4-byte float read as halves) are
// unsupported, naming both the read and the store.
#include "tileverify/domains.hpp"
#include "tileverify/equiv.hpp"
#include "tileverify/eval.hpp"
#include "tileverify/ptx.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace tileverify;

namespace {

const char* kHeader = ".version 8.0\n.target sm_80\n.address_size 64\n";

Program lower(const std::string& text, const std::string& kernel = "k") {
  auto parsed = ptx::parse_ptx(text, "bytes.ptx");
  INFO((parsed.error ? parsed.error->text() : std::string()));
  REQUIRE(parsed.module.has_value());
  auto lowered = ptx::lower_kernel(*parsed.module, kernel);
  INFO((lowered.error ? lowered.error->text() : std::string()));
  REQUIRE(lowered.program.has_value());
  return *lowered.program;
}

TensorArg zeros(const std::string& name, DType t, std::uint64_t n) {
  TensorArg a(name, t, {n}, Role::Out);
  a.init = TensorInit::Value;
  a.init_value = Rational(0);
  return a;
}

// One access of a generated program: `count` elements of `width` bytes
// (count > 1: a vector access) at byte `offset`.
struct Access {
  bool store;
  std::size_t width, count, offset;
  std::vector<std::uint64_t> values;  // a store's
};

const char* utype(std::size_t width) {
  switch (width) {
    case 1: return "u8";
    case 2: return "u16";
    case 4: return "u32";
  }
  return "u64";
}
// The register of element i for an access of `width` bytes (8- and 16-bit
// values in .b16 registers, as nvcc gives them).
std::string reg_of(std::size_t width, std::size_t i) {
  return std::string(width <= 2 ? "%rs" : width == 4 ? "%r" : "%rd") + std::to_string(10 + i);
}

std::string vector_regs(std::size_t width, std::size_t count) {
  if (count == 1) return reg_of(width, 0);
  std::string s = "{";
  for (std::size_t i = 0; i < count; ++i) s += (i ? ", " : "") + reg_of(width, i);
  return s + "}";
}

// A kernel of one thread that applies `ops` to `space` memory (a shared
// .b8 array smem of `size` bytes, or the global tensor g) and stores every
// loaded element, zero-extended to 64 bits, as two u32 words of out.
std::string program(const std::vector<Access>& ops, bool shared, std::size_t size) {
  std::ostringstream os;
  os << kHeader << ".visible .entry k(.param .u64 k_g, .param .u64 k_out)\n{\n"
     << "  .reg .b16 %rs<20>;\n  .reg .b32 %r<20>;\n  .reg .b64 %rd<20>;\n";
  if (shared) os << "  .shared .align 16 .b8 smem[" << size << "];\n";
  os << "  ld.param.u64 %rd1, [k_g];\n  cvta.to.global.u64 %rd1, %rd1;\n"
     << "  ld.param.u64 %rd2, [k_out];\n  cvta.to.global.u64 %rd2, %rd2;\n";
  const std::string space = shared ? "shared" : "global";
  std::size_t slot = 0;
  for (const Access& a : ops) {
    const std::string addr = shared ? "[smem+" + std::to_string(a.offset) + "]" : "[%rd1+" + std::to_string(a.offset) + "]";
    const std::string vec = a.count == 1 ? "" : ".v" + std::to_string(a.count);
    if (a.store) {
      for (std::size_t i = 0; i < a.count; ++i)
        os << "  mov." << (a.width == 1 ? "u16" : utype(a.width)) << " " << reg_of(a.width, i) << ", " << a.values[i]
           << ";\n";
      os << "  st." << space << vec << "." << utype(a.width) << " " << addr << ", " << vector_regs(a.width, a.count)
         << ";\n";
      continue;
    }
    os << "  ld." << space << vec << "." << utype(a.width) << " " << vector_regs(a.width, a.count) << ", " << addr
       << ";\n";
    for (std::size_t i = 0; i < a.count; ++i, ++slot) {
      std::string wide = reg_of(8, i);
      if (a.width <= 2)
        os << "  cvt.u64.u16 " << wide << ", " << reg_of(a.width, i) << ";\n";
      else if (a.width == 4)
        os << "  cvt.u64.u32 " << wide << ", " << reg_of(a.width, i) << ";\n";
      os << "  st.global.u64 [%rd2+" << 8 * slot << "], " << wide << ";\n";
    }
  }
  os << "  ret;\n}\n";
  return os.str();
}

// A random access: 1 to 8 bytes a element, vectors of 2 or 4 up to 16
// bytes, aligned to the whole access.
Access random_access(std::mt19937_64& rng, std::size_t size, bool store) {
  static const std::size_t widths[] = {1, 2, 4, 8};
  Access a;
  a.store = store;
  a.width = widths[rng() % 4];
  const std::size_t counts[] = {1, 1, 2, 4};
  do a.count = counts[rng() % 4];
  while (a.width * a.count > 16);
  const std::size_t total = a.width * a.count;
  a.offset = total * (rng() % (size / total));
  for (std::size_t i = 0; store && i < a.count; ++i)
    a.values.push_back(a.width == 8 ? rng() : rng() & ((std::uint64_t(1) << (8 * a.width)) - 1));
  return a;
}

// Runs a random sequence of `n` accesses (after stores that fill the
// buffer, at a random width: the first access types an untyped array) and
// checks every loaded element, and a global buffer's final bytes, against
// a byte array.
void check_sequence(std::uint64_t seed, bool shared, DType gtype, std::size_t n) {
  const std::size_t size = 64;
  std::mt19937_64 rng(seed);
  std::vector<Access> ops;
  const std::size_t fill = std::size_t(1) << (rng() % 4);
  for (std::size_t off = 0; off < size; off += fill) {
    Access a{true, fill, 1, off, {rng() & (fill == 8 ? ~std::uint64_t(0) : (std::uint64_t(1) << (8 * fill)) - 1)}};
    ops.push_back(a);
  }
  for (std::size_t i = 0; i < n; ++i) ops.push_back(random_access(rng, size, rng() % 2 == 0));
  std::vector<std::uint8_t> bytes(size, 0);
  std::vector<std::uint64_t> expected;
  for (const Access& a : ops)
    for (std::size_t i = 0; i < a.count; ++i) {
      const std::size_t at = a.offset + i * a.width;
      if (a.store) {
        for (std::size_t b = 0; b < a.width; ++b) bytes[at + b] = std::uint8_t(a.values[i] >> (8 * b));
      } else {
        std::uint64_t v = 0;
        for (std::size_t b = 0; b < a.width; ++b) v |= std::uint64_t(bytes[at + b]) << (8 * b);
        expected.push_back(v);
      }
    }
  Program p = lower(program(ops, shared, size));
  Launch l;
  l.block = Dim3{1, 1, 1};
  const std::size_t gsize = dtype_bytes(gtype);
  l.args = {LaunchArg::of_tensor(zeros("g", gtype, size / gsize)),
            LaunchArg::of_tensor(zeros("out", DType::U32, 2 * expected.size() + 2))};
  ConcreteDomain dom;
  auto r = run_program(p, l, dom);
  INFO("seed " << seed << (shared ? ", shared" : ", global ") << (shared ? "" : dtype_name(gtype)));
  INFO((r.ok() ? std::string() : r.diagnostics[0].text()));
  REQUIRE(r.ok());
  const auto& out = r.outputs.at("out");
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO("load " << i);
    REQUIRE(out[2 * i].has_value());
    REQUIRE(out[2 * i + 1].has_value());
    CHECK(*out[2 * i] == double(expected[i] & 0xffffffffu));
    CHECK(*out[2 * i + 1] == double(expected[i] >> 32));
  }
  if (shared) return;
  const auto& g = r.outputs.at("g");  // the final contents, element by element in g's dtype
  REQUIRE(g.size() == size / gsize);
  for (std::size_t e = 0; e < g.size(); ++e) {
    std::uint64_t v = 0;
    for (std::size_t b = 0; b < gsize; ++b) v |= std::uint64_t(bytes[e * gsize + b]) << (8 * b);
    REQUIRE(g[e].has_value());
    // A u64 element comes out as the 64-bit integer its bits make, rounded to a double.
    CHECK(*g[e] == (gsize == 8 ? double(std::int64_t(v)) : double(v)));
  }
}

}  // namespace

TEST_CASE("mixed-width stores and loads of integer bits into a shared .b8 array agree with a byte array") {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) check_sequence(seed, true, DType::U8, 1500);
}

TEST_CASE("mixed-width stores and loads of integer bits into a global tensor agree with a byte array") {
  const DType types[] = {DType::U8, DType::U16, DType::U32, DType::U64};
  for (std::uint64_t seed = 11; seed <= 18; ++seed) check_sequence(seed, false, types[seed % 4], 1500);
}

namespace {

// A kernel of `threads` threads over a shared .b8 array smem of `size`
// bytes: `body` is its PTX after the declarations (%tid.x in %r1, the
// pointers x and y, if given, in %rd1 and %rd2).
std::string kernel(const std::string& body, std::size_t size = 32) {
  return std::string(kHeader) +
         ".visible .entry k(.param .u64 k_x, .param .u64 k_y)\n{\n"
         "  .reg .pred %p<4>;\n  .reg .b16 %rs<20>;\n  .reg .b32 %r<20>;\n  .reg .f32 %f<20>;\n"
         "  .reg .b64 %rd<20>;\n  .reg .f64 %fd<4>;\n"
         "  .shared .align 16 .b8 smem[" + std::to_string(size) + "];\n"
         "  ld.param.u64 %rd1, [k_x];\n  cvta.to.global.u64 %rd1, %rd1;\n"
         "  ld.param.u64 %rd2, [k_y];\n  cvta.to.global.u64 %rd2, %rd2;\n"
         "  mov.u32 %r1, %tid.x;\n" +
         body + "  ret;\n}\n";
}

// Runs kernel(body) on `threads` threads with x: f32[16] (inputs 1, 2, ...)
// and y: f32[16] (an output, starting at 0).
RunResult<ConcreteDomain> run(const std::string& body, std::uint32_t threads = 1, DType xtype = DType::F32,
                              DType ytype = DType::F32) {
  Program p = lower(kernel(body));
  Launch l;
  l.block = Dim3{threads, 1, 1};
  l.args = {LaunchArg::of_tensor(TensorArg("x", xtype, {16}, Role::In)), LaunchArg::of_tensor(zeros("y", ytype, 16))};
  ConcreteDomain dom;
  for (int i = 0; i < 16; ++i) dom.inputs["x"].push_back(i + 1);
  return run_program(p, l, dom);
}

// The line of the first instruction of kernel(body) that contains `text`.
std::uint32_t line_of(const std::string& body, const std::string& text) {
  std::istringstream in(kernel(body));
  std::string line;
  for (std::uint32_t n = 1; std::getline(in, line); ++n)
    if (line.find(text) != std::string::npos) return n;
  return 0;
}

std::string st(std::size_t width, std::size_t offset, const std::string& reg) {
  return "  st.shared." + std::string(utype(width)) + " [smem+" + std::to_string(offset) + "], " + reg + ";\n";
}
std::string ld(std::size_t width, std::size_t offset, const std::string& reg) {
  return "  ld.shared." + std::string(utype(width)) + " " + reg + ", [smem+" + std::to_string(offset) + "];\n";
}

// An access by one thread of the race programs: width bytes at offset, a
// store of the value whose every byte is `fill`, or a load.
struct Side {
  bool store;
  std::size_t width, offset;
};

std::string access_text(const Side& o, std::uint8_t fill) {
  const std::string reg = o.width <= 2 ? "%rs5" : o.width == 4 ? "%r5" : "%rd5";
  if (!o.store) return ld(o.width, o.offset, reg);
  std::uint64_t v = 0;
  for (std::size_t b = 0; b < o.width; ++b) v |= std::uint64_t(fill) << (8 * b);
  return "  mov." + std::string(o.width == 1 ? "u16" : utype(o.width)) + " " + reg + ", " + std::to_string(v) + ";\n" +
         st(o.width, o.offset, reg);
}

// Thread 0 fills smem (16 bytes, at width `fill`), a barrier, then thread 0
// does a and thread 1 does b, unordered.
std::string race_body(std::size_t fill, const Side& a, const Side& b) {
  std::string s = "  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra $L_filled;\n";
  for (std::size_t off = 0; off < 16; off += fill) s += access_text(Side{true, fill, off}, 0x33);
  s += "$L_filled:\n  bar.sync 0;\n  @%p1 bra $L_one;\n" + access_text(a, 0x11) + "  ret;\n$L_one:\n" +
       access_text(b, 0x22);
  return s;
}

}  // namespace

TEST_CASE("races between accesses of different widths: where their bytes overlap, and only there") {
  // The cases the design names: a 4-byte write and a 2-byte read of its
  // upper half race; of the other half they do not.
  auto upper = run(race_body(4, Side{true, 4, 0}, Side{false, 2, 2}), 2);
  REQUIRE(upper.diagnostics.size() == 1);
  CHECK(upper.diagnostics[0].kind == DiagKind::Race);
  // Named in bytes: the upper half both touch, not element 0 of the array's
  // first access width (4 bytes here) as reports once said.
  CHECK(upper.diagnostics[0].message == "data race on 2 bytes at shared smem+2 between thread 0 (write) and thread 1 (read)");
  CHECK(upper.diagnostics[0].byte == 2);
  CHECK(upper.diagnostics[0].width == 2);
  auto disjoint = run(race_body(4, Side{true, 2, 0}, Side{false, 2, 2}), 2);
  INFO((disjoint.ok() ? std::string() : disjoint.diagnostics[0].text()));
  CHECK(disjoint.ok());
  // Random pairs: a race exactly when the byte ranges overlap and one is a write.
  std::mt19937_64 rng(7);
  const std::size_t widths[] = {1, 2, 4, 8};
  int races = 0, clean = 0;
  for (int i = 0; i < 300; ++i) {
    const std::size_t fill = widths[rng() % 4];
    Side a{rng() % 2 == 0, widths[rng() % 4], 0}, b{rng() % 2 == 0, widths[rng() % 4], 0};
    a.offset = a.width * (rng() % (16 / a.width));
    b.offset = b.width * (rng() % (16 / b.width));
    const bool overlap = a.offset < b.offset + b.width && b.offset < a.offset + a.width;
    const bool expect = overlap && (a.store || b.store);
    auto r = run(race_body(fill, a, b), 2);
    INFO("fill " << fill << ": thread 0 " << (a.store ? "stores " : "loads ") << a.width << " bytes at " << a.offset
                 << ", thread 1 " << (b.store ? "stores " : "loads ") << b.width << " bytes at " << b.offset);
    INFO((r.ok() ? std::string() : r.diagnostics[0].text()));
    if (expect) {
      REQUIRE(r.diagnostics.size() == 1);
      CHECK(r.diagnostics[0].kind == DiagKind::Race);
      ++races;
    } else {
      CHECK(r.ok());
      ++clean;
    }
  }
  CHECK(races > 50);
  CHECK(clean > 50);
}

TEST_CASE("re-gridding keeps what the race check knows: a barrier still orders, an unordered write still races") {
  // 4-byte writes by thread 0, a barrier, then thread 1 reads single bytes:
  // the array is re-gridded to bytes, each byte ordered after the write.
  const std::string ordered = "  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra $L_one;\n  mov.u32 %r5, 7;\n" + st(4, 0, "%r5") +
                              "$L_one:\n  bar.sync 0;\n  @%p1 bra $L_end;\n  ret;\n$L_end:\n" + ld(1, 3, "%rs5");
  auto r = run(ordered, 2);
  INFO((r.ok() ? std::string() : r.diagnostics[0].text()));
  CHECK(r.ok());
  // Without the barrier, the byte read races with the word written before it was cut.
  const std::string unordered = "  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra $L_one;\n  mov.u32 %r5, 7;\n" +
                                st(4, 0, "%r5") + "  ret;\n$L_one:\n  mov.u32 %r6, 9;\n" + st(4, 4, "%r6") +
                                ld(1, 3, "%rs5");
  auto u = run(unordered, 2);
  REQUIRE(u.diagnostics.size() == 1);
  CHECK(u.diagnostics[0].kind == DiagKind::Race);
  REQUIRE(u.diagnostics[0].accesses.size() == 2);
  CHECK(u.diagnostics[0].accesses[0].thread == 0);
  CHECK(u.diagnostics[0].accesses[1].kind == "read");
}

TEST_CASE("out of bounds at byte granularity: a tensor's message in its elements, an untyped array's in bytes") {
  std::mt19937_64 rng(3);
  const std::size_t widths[] = {1, 2, 4, 8};
  for (int i = 0; i < 200; ++i) {
    const std::size_t width = widths[rng() % 4], count = width <= 4 && rng() % 2 ? 2 : 1;
    const std::size_t offset = width * count * (rng() % (96 / (width * count)));
    const bool store = rng() % 2 == 0, shared = rng() % 2 == 0;
    // y is u16[16] (32 bytes); smem 32 bytes.
    const std::string vec = count == 2 ? ".v2" : "";
    const std::string reg = width <= 2 ? "%rs5" : width == 4 ? "%r5" : "%rd5";
    const std::string regs = count == 2 ? "{" + reg + ", " + reg + "}" : reg;
    const std::string addr = shared ? "[smem+" + std::to_string(offset) + "]" : "[%rd2+" + std::to_string(offset) + "]";
    const std::string space = shared ? "shared" : "global";
    std::string body = "  mov." + std::string(width == 1 ? "u16" : utype(width)) + " " + reg + ", 1;\n";
    body += store ? "  st." + space + vec + "." + utype(width) + " " + addr + ", " + regs + ";\n"
                  : "  ld." + space + vec + "." + utype(width) + " " + regs + ", " + addr + ";\n";
    auto r = run(body, 1, DType::F32, DType::U16);
    const bool out = offset + width * count > 32;
    INFO(body);
    INFO((r.ok() ? std::string() : r.diagnostics.back().text()));
    const bool oob = !r.ok() && r.diagnostics.back().kind == DiagKind::OutOfBounds;
    CHECK(oob == out);
    if (!oob) continue;
    const Diagnostic& d = r.diagnostics.back();
    const std::size_t first_out = std::max<std::size_t>(offset, 32 / width * width);  // the first element past the end
    // Memory is named in bytes, whatever width the array was first accessed
    // at; a tensor adds the element the spec counts.
    const std::string what =
        std::string(store ? "write to " : "read of ") + std::to_string(d.width) + (d.width == 1 ? " byte at " : " bytes at ");
    CHECK(d.byte + std::int64_t(d.width) > 32);
    CHECK((d.width == width || d.width == width * count));
    if (shared) {
      CHECK(d.message == what + "shared smem+" + std::to_string(d.byte) + ", but 'smem' has 32 bytes");
    } else {
      CHECK(d.element == std::int64_t(first_out / 2));
      CHECK(d.byte == std::int64_t(first_out));
      CHECK(d.message == what + "global y+" + std::to_string(first_out) + " (element " + std::to_string(first_out / 2) +
                             "), but 'y' has 16 elements (32 bytes)");
    }
  }
}

TEST_CASE("a value with no exact parts read at another width is unsupported, naming the read and the store") {
  const std::string split = "  ld.global.f32 %f1, [%rd1];\n  st.shared.f32 [smem+4], %f1;\n" + ld(2, 6, "%rs1");
  auto r = run(split);
  REQUIRE(r.diagnostics.size() == 1);
  const Diagnostic& d = r.diagnostics[0];
  INFO(d.text());
  CHECK(d.kind == DiagKind::Unsupported);
  CHECK(d.message.rfind("a 2-byte read of smem at byte 6 splits the 4-byte f32 value written at bytes.ptx:" +
                            std::to_string(line_of(split, "st.shared.f32")) + ":",
                        0) == 0);
  CHECK(d.message.find("(st.shared.f32 [smem+4], %f1)") != std::string::npos);
  CHECK(d.loc.line == line_of(split, "ld.shared.u16"));
  // Two floats read as one 8-byte integer: nothing joins them.
  const std::string join = "  ld.global.f32 %f1, [%rd1];\n  st.shared.f32 [smem], %f1;\n  st.shared.f32 [smem+4], %f1;\n" +
                           ld(8, 0, "%rd5");
  auto j = run(join);
  REQUIRE(j.diagnostics.size() == 1);
  INFO(j.diagnostics[0].text());
  CHECK(j.diagnostics[0].kind == DiagKind::Unsupported);
  CHECK(j.diagnostics[0].message.rfind("an 8-byte read of smem at byte 0 joins the 4-byte f32 value written at", 0) == 0);
  CHECK(j.diagnostics[0].message.find("and the 4-byte f32 value written at") != std::string::npos);
  // An 8-byte float read as two 4-byte words: the upper one splits it.
  const std::string f64 = "  ld.global.f32 %f1, [%rd1];\n  cvt.f64.f32 %fd1, %f1;\n  st.shared.f64 [smem+8], %fd1;\n" +
                          ld(4, 12, "%r5");
  auto w = run(f64);
  REQUIRE(w.diagnostics.size() == 1);
  CHECK(w.diagnostics[0].message.rfind("a 4-byte read of smem at byte 12 splits the 8-byte f64 value written at", 0) == 0);
  // The input element of a tensor: x[1] read as its upper half.
  auto in = run("  ld.global.u16 %rs1, [%rd1+6];\n");
  REQUIRE(in.diagnostics.size() == 1);
  CHECK(in.diagnostics[0].message ==
        "a 2-byte read of x at byte 6 splits the 4-byte f32 value at global x+4 (element 1) held at the start (an input or "
        "initial value)");
}

TEST_CASE("packed halves: a pair stored as 32 bits reads as its halves, two halves read as 32 bits are a pair") {
  // cvt.rn.f16x2.f32 d, a, b puts a in the high half: y[0] = x[0], y[1] = x[1].
  const std::string body =
      "  ld.global.f32 %f1, [%rd1];\n  ld.global.f32 %f2, [%rd1+4];\n  cvt.rn.f16x2.f32 %r2, %f2, %f1;\n" + st(4, 0, "%r2") +
      ld(2, 0, "%rs1") + ld(2, 2, "%rs2") +
      "  cvt.f32.f16 %f3, %rs1;\n  cvt.f32.f16 %f4, %rs2;\n  st.global.f32 [%rd2], %f3;\n  st.global.f32 [%rd2+4], %f4;\n"
      // Two 16-bit float stores read as one word: a pair, unpacked into y[2], y[3].
      "  cvt.rn.f16.f32 %rs3, %f2;\n  cvt.rn.f16.f32 %rs4, %f1;\n" +
      st(2, 8, "%rs3") + st(2, 10, "%rs4") + ld(4, 8, "%r3") +
      "  mov.b32 {%rs5, %rs6}, %r3;\n  cvt.f32.f16 %f5, %rs5;\n  cvt.f32.f16 %f6, %rs6;\n"
      "  st.global.f32 [%rd2+8], %f5;\n  st.global.f32 [%rd2+12], %f6;\n";
  auto r = run(body);
  INFO((r.ok() ? std::string() : r.diagnostics[0].text()));
  REQUIRE(r.ok());
  const auto& y = r.outputs.at("y");
  CHECK(*y[0] == 1);
  CHECK(*y[1] == 2);
  CHECK(*y[2] == 2);
  CHECK(*y[3] == 1);
}

TEST_CASE("output elements are joined from narrower stores, in the tensor's dtype") {
  // The bits of 1.0f (0x3f800000) stored as two 16-bit halves into y[0]; a
  // pair of halves stored as 32 bits into y (f16) gives two elements.
  auto r = run("  mov.u16 %rs1, 0;\n  mov.u16 %rs2, 16256;\n  st.global.u16 [%rd2], %rs1;\n  st.global.u16 [%rd2+2], %rs2;\n");
  INFO((r.ok() ? std::string() : r.diagnostics[0].text()));
  REQUIRE(r.ok());
  CHECK(*r.outputs.at("y")[0] == 1.0);
  auto h = run("  ld.global.f32 %f1, [%rd1];\n  ld.global.f32 %f2, [%rd1+4];\n  cvt.rn.f16x2.f32 %r2, %f2, %f1;\n"
               "  st.global.b32 [%rd2+4], %r2;\n",
               1, DType::F32, DType::F16);
  INFO((h.ok() ? std::string() : h.diagnostics[0].text()));
  REQUIRE(h.ok());
  CHECK(*h.outputs.at("y")[2] == 1);
  CHECK(*h.outputs.at("y")[3] == 2);
  // A float stored as 32 bits into two f16 elements: no element has a value.
  auto f = run("  ld.global.f32 %f1, [%rd1];\n  st.global.f32 [%rd2+4], %f1;\n", 1, DType::F32, DType::F16);
  REQUIRE(f.diagnostics.size() == 1);
  CHECK(f.diagnostics[0].kind == DiagKind::Unsupported);
  CHECK(f.diagnostics[0].message.rfind("output y[2] splits the 4-byte f32 value written at", 0) == 0);
}

TEST_CASE("a read of bytes partly written is uninitialized at the unwritten element") {
  auto r = run("  mov.u16 %rs1, 5;\n" + st(2, 0, "%rs1") + ld(4, 0, "%r5"));
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].kind == DiagKind::Uninitialized);
  CHECK(r.diagnostics[0].message == "read of 2 bytes at shared smem+2, which nothing has written");
}

TEST_CASE("unordered stores of the same value at one width are a note per slice too, at different widths a race") {
  // Both threads store the same f32 (x[0]) as 4 bytes into an array re-gridded to 2-byte cells.
  const std::string same = "  mov.u16 %rs1, 0;\n" + st(2, 8, "%rs1") + "  bar.sync 0;\n  ld.global.f32 %f1, [%rd1];\n" +
                           "  st.shared.f32 [smem], %f1;\n";
  auto r = run(same, 2);
  INFO((r.ok() ? std::string() : r.diagnostics[0].text()));
  CHECK(r.ok());
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0].kind == DiagKind::SameValueWrite);
  // Different floats: a race.
  const std::string differ = "  mov.u16 %rs1, 0;\n" + st(2, 8, "%rs1") + "  bar.sync 0;\n  mul.wide.u32 %rd5, %r1, 4;\n"
                             "  add.s64 %rd6, %rd1, %rd5;\n  ld.global.f32 %f1, [%rd6];\n  st.shared.f32 [smem], %f1;\n";
  auto d = run(differ, 2);
  REQUIRE(d.diagnostics.size() == 1);
  CHECK(d.diagnostics[0].kind == DiagKind::Race);
}

TEST_CASE("a misaligned vector access is unsupported, as its elements' alignment alone would not say") {
  auto r = run("  mov.u32 %r5, 1;\n  st.shared.v2.u32 [smem+4], {%r5, %r5};\n");
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].kind == DiagKind::Unsupported);
  CHECK(r.diagnostics[0].message.rfind("a misaligned access to 'smem': 8 bytes at byte 4", 0) == 0);
}

TEST_CASE("cp.async copies f16 data into a .b8 array as it is; ldmatrix reads it in 2-byte elements") {
  // Lane l copies h[8l .. 8l + 7] (16 bytes) to smem + 16 l; after the wait
  // and a barrier, ldmatrix.x4 with row addresses smem + 16 l: matrix q row
  // r is h[8 (8q + r) ..]. Lane l gets in register q the elements (l / 4,
  // 2 (l % 4)) and (l / 4, 2 (l % 4) + 1) of matrix q; it stores them to
  // y[8 l + 2q], y[8 l + 2q + 1] as f32.
  const std::string text = std::string(kHeader) + R"(
.visible .entry k(.param .u64 k_h, .param .u64 k_y)
{
  .reg .b16 %rs<10>;
  .reg .b32 %r<12>;
  .reg .f32 %f<10>;
  .reg .b64 %rd<12>;
  .shared .align 16 .b8 smem[512];
  ld.param.u64 %rd1, [k_h];
  cvta.to.global.u64 %rd1, %rd1;
  ld.param.u64 %rd2, [k_y];
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 16;
  add.s64 %rd4, %rd1, %rd3;
  mov.u64 %rd5, smem;
  add.s64 %rd6, %rd5, %rd3;
  cp.async.cg.shared.global [%rd6], [%rd4], 16;
  cp.async.wait_all;
  bar.sync 0;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r2, %r3, %r4, %r5}, [%rd6];
  mul.wide.u32 %rd7, %r1, 32;
  add.s64 %rd8, %rd2, %rd7;
  mov.b32 {%rs1, %rs2}, %r2;
  cvt.f32.f16 %f1, %rs1;
  cvt.f32.f16 %f2, %rs2;
  st.global.v2.f32 [%rd8], {%f1, %f2};
  mov.b32 {%rs3, %rs4}, %r3;
  cvt.f32.f16 %f3, %rs3;
  cvt.f32.f16 %f4, %rs4;
  st.global.v2.f32 [%rd8+8], {%f3, %f4};
  mov.b32 {%rs5, %rs6}, %r4;
  cvt.f32.f16 %f5, %rs5;
  cvt.f32.f16 %f6, %rs6;
  st.global.v2.f32 [%rd8+16], {%f5, %f6};
  mov.b32 {%rs7, %rs8}, %r5;
  cvt.f32.f16 %f7, %rs7;
  cvt.f32.f16 %f8, %rs8;
  st.global.v2.f32 [%rd8+24], {%f7, %f8};
  ret;
}
)";
  Program p = lower(text);
  Launch l;
  l.block = Dim3{32, 1, 1};
  l.args = {LaunchArg::of_tensor(TensorArg("h", DType::F16, {256}, Role::In)), LaunchArg::of_tensor(zeros("y", DType::F32, 256))};
  ConcreteDomain dom;
  for (int i = 0; i < 256; ++i) dom.inputs["h"].push_back(i);
  auto r = run_program(p, l, dom);
  INFO((r.ok() ? std::string() : r.diagnostics[0].text()));
  REQUIRE(r.ok());
  const auto& y = r.outputs.at("y");
  for (int lane = 0; lane < 32; ++lane)
    for (int q = 0; q < 4; ++q)
      for (int i = 0; i < 2; ++i) {
        const int row = 8 * q + lane / 4, col = 2 * (lane % 4) + i;
        INFO("lane " << lane << ", matrix " << q << ", element " << i);
        CHECK(*y[std::size_t(8 * lane + 2 * q + i)] == double(8 * row + col));
      }
}

TEST_CASE("a run stopped by a split names the instruction the lowering kept as unsupported too") {
  const std::string text = std::string(kHeader) +
                           ".extern .func (.param .b32 func_retval0) vprintf(.param .b64 vprintf_param_0, .param .b64 "
                           "vprintf_param_1);\n" + kernel("").substr(std::string(kHeader).size());
  const std::string body = "  ld.global.f32 %f1, [%rd1];\n  st.shared.f32 [smem], %f1;\n" + ld(2, 0, "%rs1") +
                           "  {\n  .param .b64 param0;\n  st.param.b64 [param0+0], %rd1;\n  .param .b64 param1;\n"
                           "  st.param.b64 [param1+0], %rd2;\n  .param .b32 retval0;\n"
                           "  call.uni (retval0), vprintf, (param0, param1);\n  }\n";
  std::string full = text;
  full.insert(full.rfind("  ret;"), body);
  auto parsed = ptx::parse_ptx(full, "bytes.ptx");
  INFO((parsed.error ? parsed.error->text() : std::string()));
  REQUIRE(parsed.module.has_value());
  auto lowered = ptx::lower_kernel(*parsed.module, "k");
  REQUIRE(lowered.program.has_value());
  Launch l;
  l.block = Dim3{1, 1, 1};
  l.args = {LaunchArg::of_tensor(TensorArg("x", DType::F32, {16}, Role::In)), LaunchArg::of_tensor(zeros("y", DType::F32, 16))};
  ConcreteDomain dom;
  auto r = run_program(*lowered.program, l, dom);
  REQUIRE(r.diagnostics.size() == 1);
  INFO(r.diagnostics[0].text());
  CHECK(r.diagnostics[0].message.rfind("a 2-byte read of smem at byte 0 splits", 0) == 0);
  CHECK(r.diagnostics[0].detail.find("the kernel also has, at") != std::string::npos);
  CHECK(r.diagnostics[0].detail.find("vprintf") != std::string::npos);
}

TEST_CASE("spec: a float read as its upper half names the read and the store, at their CUDA lines") {
  auto loaded = load_spec(std::string(TILEVERIFY_TEST_DIR) + "/cases/bytes/float_then_half.json");
  REQUIRE(loaded.spec.has_value());
  Report r = check(*loaded.spec);
  INFO(r.text());
  REQUIRE(r.verdict == Outcome::Unsupported);
  const Diagnostic& d = r.diagnostics.back();
  CHECK(d.message.find("a 2-byte read of ") != std::string::npos);
  CHECK(d.message.find(" at byte 2 splits the 4-byte f32 value written at ") != std::string::npos);
  CHECK(d.message.find("bytes.ptx:556:2") != std::string::npos);
  CHECK(d.message.find("(bytes.cu:108) (st.shared.f32 ") != std::string::npos);  // s[t] = x[t]
  CHECK(d.loc.with_source().find("(bytes.cu:110)") != std::string::npos);       // the __half read
  CHECK(d.detail.find("instruction: ld.shared.u16") != std::string::npos);
}

namespace {

// One warp: smem (512 bytes) filled from x by 16-byte copies (lane l: bytes
// 16 l .. 16 l + 15; with zero_fill, cp.async's src-size 0 writes zeros),
// a barrier, then `body` (lane in %r1, y in %rd2, smem + 16 lane in %r6).
std::string warp_kernel(const std::string& body, bool zero_fill) {
  return std::string(kHeader) + R"(
.visible .entry k(.param .u64 k_x, .param .u64 k_y)
{
  .reg .b32 %r<40>;
  .reg .f32 %f<20>;
  .reg .b64 %rd<12>;
  .shared .align 16 .b8 smem[512];
  ld.param.u64 %rd1, [k_x];
  cvta.to.global.u64 %rd1, %rd1;
  ld.param.u64 %rd2, [k_y];
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 16;
  add.s64 %rd4, %rd1, %rd3;
  mov.u32 %r5, smem;
  shl.b32 %r7, %r1, 4;
  add.s32 %r6, %r5, %r7;
  mov.u32 %r8, )" + std::string(zero_fill ? "0" : "16") + R"(;
  cp.async.cg.shared.global [%r6], [%rd4], 16, %r8;
  cp.async.wait_all;
  bar.sync 0;
)" + body + "  ret;\n}\n";
}

}  // namespace

TEST_CASE("ldmatrix without .trans moves 4-byte words: a tile of floats (tf32) arrives as floats") {
  // Row r of the one matrix is x[4r .. 4r + 3]; lane l receives the word
  // (row l / 4, word l % 4): x[l].
  Program p = lower(warp_kernel("  ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r10}, [%r6];\n"
                                "  mul.wide.u32 %rd5, %r1, 4;\n  add.s64 %rd6, %rd2, %rd5;\n  st.global.b32 [%rd6], %r10;\n",
                                false));
  Launch l;
  l.block = Dim3{32, 1, 1};
  l.args = {LaunchArg::of_tensor(TensorArg("x", DType::F32, {128}, Role::In)), LaunchArg::of_tensor(zeros("y", DType::F32, 32))};
  ConcreteDomain dom;
  for (int i = 0; i < 128; ++i) dom.inputs["x"].push_back(i);
  auto r = run_program(p, l, dom);
  INFO((r.ok() ? std::string() : r.diagnostics[0].text()));
  REQUIRE(r.ok());
  for (int i = 0; i < 32; ++i) CHECK(*r.outputs.at("y")[std::size_t(i)] == i);
  // With .trans each element is a 2-byte half of a float: unsupported, naming the copy.
  Program t = lower(warp_kernel("  ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%r10}, [%r6];\n", false));
  auto tr = run_program(t, l, dom);
  REQUIRE(tr.diagnostics.size() == 1);
  INFO(tr.diagnostics[0].text());
  CHECK(tr.diagnostics[0].kind == DiagKind::Unsupported);
  CHECK(tr.diagnostics[0].message.find("a 2-byte ldmatrix read of smem at byte 0 splits the 4-byte f32 value written at") == 0);
  CHECK(tr.diagnostics[0].message.find("(cp.async [%r6], [%rd4], 16, %r8)") != std::string::npos);
}

TEST_CASE("zero-filled cp.async tiles feed mma.sync as zeros (integer bits read in the mma's type)") {
  // A (16x16) and B (16x8) f16 tiles are all zeros (cp.async with src-size
  // 0): D = C, the accumulators read from y.
  const std::string body = R"(
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r10, %r11, %r12, %r13}, [%r6];
  ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r14, %r15}, [%r6];
  mul.wide.u32 %rd5, %r1, 16;
  add.s64 %rd6, %rd2, %rd5;
  ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd6];
  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f5, %f6, %f7, %f8}, {%r10, %r11, %r12, %r13}, {%r14, %r15}, {%f1, %f2, %f3, %f4};
  st.global.v4.f32 [%rd6], {%f5, %f6, %f7, %f8};
)";
  Program p = lower(warp_kernel(body, true));
  Launch l;
  l.block = Dim3{32, 1, 1};
  TensorArg y("y", DType::F32, {128}, Role::InOut);
  l.args = {LaunchArg::of_tensor(TensorArg("x", DType::F16, {256}, Role::In)), LaunchArg::of_tensor(y)};
  ConcreteDomain dom;
  for (int i = 0; i < 128; ++i) dom.inputs["y"].push_back(i + 0.5);
  auto r = run_program(p, l, dom);
  INFO((r.ok() ? std::string() : r.diagnostics[0].text()));
  REQUIRE(r.ok());
  for (int i = 0; i < 128; ++i) CHECK(*r.outputs.at("y")[std::size_t(i)] == i + 0.5);
}

TEST_CASE("touch records stay per element of the tensor's dtype, whatever the access width") {
  // A 4-byte store into y (f16) touches elements 2 and 3; a 2-byte read of
  // x (u32, all zero bits) touches x[1] only.
  Program p = lower(kernel("  ld.global.u16 %rs1, [%rd1+6];\n  mov.u32 %r5, 0;\n  st.global.u32 [%rd2+4], %r5;\n"));
  Launch l;
  l.block = Dim3{1, 1, 1};
  l.args = {LaunchArg::of_tensor(zeros("x", DType::U32, 4)), LaunchArg::of_tensor(zeros("y", DType::F16, 8))};
  RunOptions o;
  o.record_touches = true;
  ConcreteDomain dom;
  auto r = run_program(p, l, dom, o);
  INFO((r.ok() ? std::string() : r.diagnostics[0].text()));
  REQUIRE(r.ok());
  const auto& x = r.touches.at("x");
  const auto& y = r.touches.at("y");
  REQUIRE(x.size() == 4);
  REQUIRE(y.size() == 8);
  CHECK(x[0].kinds == 0);
  CHECK(x[1].kinds == Touch::kRead);
  for (std::size_t e = 0; e < 8; ++e) CHECK(y[e].kinds == (e == 2 || e == 3 ? Touch::kWrite : 0));
}
