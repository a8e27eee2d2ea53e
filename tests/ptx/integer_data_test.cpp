// Integer tensor data (s32/u32 inputs) as mathematical integers, and
// redux.sync. The spec-level cases (sums, scans, matrix products, refuted
// variants, bit operations on data) are tests/cases/int_*.json over ints.cu.
#include "ptx_helpers.hpp"

#include "tileverify/domains.hpp"

using namespace tileverify;
using namespace ptx_test;

namespace {

const char* kHeader = ".version 9.0\n.target sm_80\n.address_size 64\n";

// Every redux.sync operation on the lane index (concrete integers).
const std::string kRedux = std::string(kHeader) + R"(
.visible .entry redux_all(.param .u64 p_y)
{
  .reg .pred %p<2>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p_y];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  redux.sync.add.u32 %r2, %r1, -1;
  add.s32 %r3, %r1, -5;
  redux.sync.max.s32 %r4, %r3, -1;
  redux.sync.min.s32 %r5, %r3, -1;
  redux.sync.min.u32 %r6, %r3, -1;
  or.b32 %r7, %r1, 256;
  redux.sync.and.b32 %r8, %r7, -1;
  redux.sync.or.b32 %r9, %r1, -1;
  redux.sync.xor.b32 %r10, %r1, -1;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra $L_done;
  st.global.u32 [%rd2], %r2;
  st.global.u32 [%rd2+4], %r4;
  st.global.u32 [%rd2+8], %r5;
  st.global.u32 [%rd2+12], %r6;
  st.global.u32 [%rd2+16], %r8;
  st.global.u32 [%rd2+20], %r9;
  st.global.u32 [%rd2+24], %r10;
$L_done:
  ret;
}
)";

// Integer data written into a float tensor as its bits: not a real number.
const std::string kBits = std::string(kHeader) + R"(
.visible .entry int_as_float(.param .u64 p_x, .param .u64 p_y)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [p_x];
  ld.param.u64 %rd2, [p_y];
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  ld.global.u32 %r1, [%rd3];
  add.s32 %r2, %r1, 1;
  st.global.u32 [%rd4], %r2;
  ret;
}
)";

}  // namespace

TEST_CASE("redux.sync: add, min and max (signed and unsigned), and, or, xor over the members") {
  Program p = lower_text(kRedux, "redux_all");
  ExprContext ctx;
  SymbolicDomain dom(ctx);
  Launch l = launch_of(32, {tensor("y", DType::U32, 7, Role::Out)});
  auto r = run_program(p, l, dom);
  INFO((r.diagnostics.empty() ? std::string() : r.diagnostics[0].text()));
  REQUIRE(r.ok());
  const auto& y = r.outputs.at("y");
  auto value = [&](std::size_t i) {
    REQUIRE(y[i].has_value());
    REQUIRE(ctx.is_constant(*y[i]));
    return ctx.constant_value(*y[i]).to_double();
  };
  CHECK(value(0) == 496);  // 0 + 1 + ... + 31
  CHECK(value(1) == 26);   // max of tid - 5
  CHECK(value(2) == 4294967291.0);  // min.s32 is -5, stored as u32 bits
  CHECK(value(3) == 0);    // min.u32: -5..-1 are huge unsigned
  CHECK(value(4) == 256);  // and of tid | 256
  CHECK(value(5) == 31);   // or
  CHECK(value(6) == 0);    // xor of 0..31
}

TEST_CASE("integer data: exact arithmetic over the integers, integer-valued counterexample inputs") {
  Program p = lower_text(kBits, "int_as_float");
  ExprContext ctx;
  SymbolicDomain dom(ctx);
  // Into an integer tensor: x[0] + 1, with x[0] an integer symbol.
  Launch ok = launch_of(1, {tensor("x", DType::S32, 1, Role::In), tensor("y", DType::S32, 1, Role::Out)});
  auto r = run_program(p, ok, dom);
  REQUIRE(r.ok());
  Expr y = *r.outputs.at("y")[0];
  CHECK(y == ctx.add(ctx.int_symbol("x", 0), ctx.one()));
  // Into a float tensor: the bits of an integer are no real.
  Launch bad = launch_of(1, {tensor("x", DType::S32, 1, Role::In), tensor("y", DType::F32, 1, Role::Out)});
  auto r2 = run_program(p, bad, dom);
  REQUIRE(!r2.ok());
  CHECK(r2.diagnostics[0].kind == DiagKind::NotStructured);
  CHECK(r2.diagnostics[0].message.find("integer tensor data stored as the bits of a float") != std::string::npos);
  // The concrete domain gives integer tensors integer values.
  ConcreteDomain cd;
  for (std::uint64_t i = 0; i < 64; ++i) CHECK(cd.int_input("x", i) == std::floor(cd.int_input("x", i)));
}
