// Unordered plain writes of the same value to one element: a note, not a
// race, unless RunOptions::strict (benign write-write races; docs/evaluator.md,
// "Same-value writes"). The bookkeeping keeps every such writer, so a later
// access must be ordered after all of them.
#include "tileverify/equiv.hpp"
#include "tileverify/eval.hpp"
#include "tileverify/payload_domain.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

using namespace tileverify;
using Reg = ProgramBuilder::Reg;
using Mem = ProgramBuilder::Mem;

namespace {

// Triton-style duplicated rows: 128 threads, thread t and t + 64 store row
// t % 64 of tile and of y, the same value 2 x[t % 64]. With differ, each
// stores 2 x[t] instead: different values.
Program dup_rows(bool differ = false) {
  ProgramBuilder b("dup_rows");
  auto x = b.param_pointer("x"), y = b.param_pointer("y");
  auto tile = b.shared("tile", DType::F32, 64);
  Reg tid = b.special(Special::TidX);
  Reg r = b.and_(tid, b.imm(DType::U32, 63));
  Reg v = b.reg(DType::F32);
  b.load(v, x, differ ? tid : r);
  Reg w = b.mul(v, b.fimm(Rational(2)));
  b.at({"dup.cu", 4, 5});
  b.store(tile, r, w);
  b.at({"dup.cu", 5, 5});
  b.bar();
  Reg u = b.reg(DType::F32);
  b.load(u, tile, b.sub(b.imm(DType::U32, 63), r));
  b.at({"dup.cu", 6, 5});
  b.store(y, r, u);
  return b.finish();
}

Launch dup_launch(std::uint32_t threads = 128) {
  Launch l;
  l.block = Dim3{threads, 1, 1};
  l.args = {LaunchArg::of_tensor({"x", DType::F32, {128}, Role::In}),
            LaunchArg::of_tensor({"y", DType::F32, {64}, Role::Out})};
  return l;
}

RunOptions strict_options() {
  RunOptions o;
  o.strict = true;
  return o;
}

// The checks every domain must pass on dup_rows: notes (one per buffer, not
// one per element) without strict, a race with it, a race for different values.
template <class D>
void check_dup_rows(D& dom) {
  auto ok = run_program(dup_rows(), dup_launch(), dom);
  INFO((ok.ok() ? std::string() : ok.diagnostics[0].text()));
  REQUIRE(ok.ok());
  REQUIRE(ok.notes.size() == 2);
  const Diagnostic& n = ok.notes[0];
  CHECK(n.kind == DiagKind::SameValueWrite);
  CHECK(n.buffer == "tile");
  CHECK(n.element == 0);
  CHECK(n.message ==
        "threads 0 and 64 write the same value to 4 bytes at shared tile+0 without synchronization (not a race: either "
        "order leaves the same value)");
  REQUIRE(n.accesses.size() == 2);
  CHECK(n.accesses[0].thread == 0);
  CHECK(n.accesses[1].thread == 64);
  CHECK(n.accesses[0].write);
  CHECK(n.accesses[1].loc.line == 4);
  CHECK(ok.notes[1].buffer == "y");
  REQUIRE(ok.outputs.at("y")[3].has_value());

  auto strict = run_program(dup_rows(), dup_launch(), dom, strict_options());
  REQUIRE(strict.diagnostics.size() == 1);
  const Diagnostic& d = strict.diagnostics[0];
  INFO(d.text());
  CHECK(d.kind == DiagKind::Race);
  CHECK(d.buffer == "tile");
  CHECK(d.message == "data race on 4 bytes at shared tile+0 between thread 0 (write) and thread 64 (write)");
  CHECK(d.detail.find("same value") != std::string::npos);
  CHECK(d.detail.find("--strict") != std::string::npos);
  CHECK(strict.notes.empty());
  CHECK(strict.outputs.empty());

  for (const RunOptions& o : {RunOptions{}, strict_options()}) {
    auto differ = run_program(dup_rows(true), dup_launch(), dom, o);
    REQUIRE(differ.diagnostics.size() == 1);
    CHECK(differ.diagnostics[0].kind == DiagKind::Race);
    CHECK(differ.diagnostics[0].detail.empty());  // the plain race explanation, no same-value line
    CHECK(differ.notes.empty());
  }
}

// Thread 0 writes h[0] with st.u32 (two f16 halves, 0x0005 each); thread 1
// writes h[0] with st.u16 0x0005 (narrow) or with st.u32 0x00050005.
Program widths(bool narrow) {
  ProgramBuilder b("widths");
  auto h = b.shared("h", DType::F16, 2);
  Mem h32{h.base, DType::U32}, h16{h.base, DType::U16};
  Reg tid = b.special(Special::TidX);
  Reg zero = b.imm(DType::U32, 0);
  auto first = b.label();
  b.bra_if(b.setp(Cmp::EQ, tid, zero), first);
  if (narrow)
    b.store(h16, zero, b.imm(DType::U16, 5));
  else
    b.store(h32, zero, b.imm(DType::U32, 0x00050005));
  b.ret();
  b.place(first);
  b.store(h32, zero, b.imm(DType::U32, 0x00050005));
  b.ret();
  return b.finish();
}

enum class After { Read, WriteSame, WriteOther };

// Three warps. Lane 0 of warps 0 and 1 store 1 to flag[0], unordered. Warp
// 2 then waits at named barrier 1 with warp `synced` (bar.sync 1, 64), or
// with both (synced = 2: bar.sync 0 for all), and its lane 0 reads flag[0]
// into y[0] or writes it (the same value 1, or 2).
Program after_two_writes(int synced, After then) {
  ProgramBuilder b("after_two_writes");
  auto y = b.param_pointer("y", DType::U32);
  auto flag = b.shared("flag", DType::U32, 1);
  Reg lane = b.special(Special::LaneId), warp = b.special(Special::WarpId);
  Reg zero = b.imm(DType::U32, 0);
  Reg not_lane0 = b.setp(Cmp::NE, lane, zero);
  auto third = b.label(), after_write = b.label(), end = b.label();
  if (synced == 2) {
    b.bra_if(b.setp(Cmp::EQ, warp, b.imm(DType::U32, 2)), third);
    b.bra_if(not_lane0, after_write);
    b.at({"flag.cu", 3, 5});
    b.store(flag, zero, b.imm(DType::U32, 1));
    b.place(after_write);
    b.place(third);
    b.bar();
    b.bra_if(b.setp(Cmp::NE, warp, b.imm(DType::U32, 2)), end);
  } else {
    b.bra_if(b.setp(Cmp::EQ, warp, b.imm(DType::U32, 2)), third);
    b.bra_if(not_lane0, after_write);
    b.at({"flag.cu", 3, 5});
    b.store(flag, zero, b.imm(DType::U32, 1));
    b.place(after_write);
    b.bra_if(b.setp(Cmp::NE, warp, b.imm(DType::U32, std::int64_t(synced))), end);
    b.bar(1, 64);
    b.bra(end);
    b.place(third);
    b.bar(1, 64);
  }
  b.bra_if(not_lane0, end);
  b.at({"flag.cu", 7, 5});
  if (then == After::Read) {
    Reg v = b.reg(DType::U32);
    b.load(v, flag, zero);
    b.store(y, zero, v);
  } else {
    b.store(flag, zero, b.imm(DType::U32, then == After::WriteSame ? 1 : 2));
  }
  b.place(end);
  b.ret();
  return b.finish();
}

Launch three_warps() {
  Launch l;
  l.block = Dim3{96, 1, 1};
  l.args = {LaunchArg::of_tensor({"y", DType::U32, {1}, Role::Out})};
  return l;
}

std::filesystem::path cases() { return std::filesystem::path(TILEVERIFY_TEST_DIR) / "cases" / "benign"; }

Spec spec_of(const char* file) {
  auto loaded = load_spec((cases() / file).string());
  INFO(loaded.error);
  REQUIRE(loaded.spec.has_value());
  return *loaded.spec;
}

}  // namespace

TEST_CASE("same-value writes of duplicated rows: notes (strict: a race), different values race: symbolic domain") {
  ExprContext c;
  SymbolicDomain dom(c);
  check_dup_rows(dom);
  // The outputs are those of one thread per row.
  auto dup = run_program(dup_rows(), dup_launch(), dom);
  auto one = run_program(dup_rows(), dup_launch(64), dom);
  REQUIRE(one.ok());
  CHECK(one.notes.empty());
  for (std::size_t i = 0; i < 64; ++i) CHECK(*dup.outputs.at("y")[i] == *one.outputs.at("y")[i]);
  // Every schedule gives the same outputs and the same note.
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    RunOptions o;
    o.random_schedule = seed;
    auto r = run_program(dup_rows(), dup_launch(), dom, o);
    REQUIRE(r.ok());
    CHECK(r.notes.size() == 2);
    CHECK(*r.outputs.at("y")[7] == *one.outputs.at("y")[7]);
  }
}

TEST_CASE("same-value writes: concrete domain (the same bits) and payload domain (the same payload)") {
  ConcreteDomain concrete;
  check_dup_rows(concrete);
  PayloadDomain payload(7);
  check_dup_rows(payload);
}

TEST_CASE("a same-value note prints both writes and why it is not a race") {
  ExprContext c;
  SymbolicDomain dom(c);
  auto r = run_program(dup_rows(), dup_launch(), dom);
  REQUIRE(r.notes.size() == 2);
  const std::string t = r.notes[0].text();
  INFO(t);
  CHECK(t.rfind("same_value_write: threads 0 and 64 write the same value to 4 bytes at shared tile+0", 0) == 0);
  CHECK(t.find("\n  earlier write by thread 0 at dup.cu:4:5: ") != std::string::npos);
  CHECK(t.find("\n  later   write by thread 64 at dup.cu:4:5: ") != std::string::npos);
  CHECK(t.find("the PTX memory model calls this a data race, but both writes store the same value (--strict reports "
               "it)\n") != std::string::npos);
  CHECK(t.find("add a barrier") == std::string::npos);  // not the race explanation
}

TEST_CASE("same value at different widths is a race; at the same width it is not") {
  Launch l;
  l.block = Dim3{2, 1, 1};
  ExprContext c;
  SymbolicDomain dom(c);
  auto narrow = run_program(widths(true), l, dom);
  REQUIRE(narrow.diagnostics.size() == 1);
  INFO(narrow.diagnostics[0].text());
  CHECK(narrow.diagnostics[0].kind == DiagKind::Race);
  CHECK(narrow.diagnostics[0].element == 0);
  CHECK(narrow.notes.empty());
  auto wide = run_program(widths(false), l, dom);
  INFO((wide.ok() ? std::string() : wide.diagnostics[0].text()));
  CHECK(wide.ok());
  REQUIRE(wide.notes.size() == 1);  // h[0] and h[1]: one note for the buffer
  CHECK(wide.notes[0].buffer == "h");
}

TEST_CASE("after two unordered same-value writes, a later access must be ordered after both") {
  ExprContext c;
  SymbolicDomain dom(c);
  // The reader waits with one writer's warp: it races with the other writer,
  // whichever of the two wrote last (round-robin: thread 0, then thread 32).
  for (int synced : {0, 1}) {
    CAPTURE(synced);
    auto r = run_program(after_two_writes(synced, After::Read), three_warps(), dom);
    REQUIRE(r.diagnostics.size() == 1);
    const Diagnostic& d = r.diagnostics[0];
    INFO(d.text());
    CHECK(d.kind == DiagKind::Race);
    REQUIRE(d.accesses.size() == 2);
    CHECK(d.accesses[0].thread == (synced == 0 ? 32u : 0u));
    CHECK(d.accesses[0].write);
    CHECK(d.accesses[1].thread == 64);
    CHECK_FALSE(d.accesses[1].write);
    // A write of another value races with the unordered writer too ...
    auto w = run_program(after_two_writes(synced, After::WriteOther), three_warps(), dom);
    REQUIRE(w.diagnostics.size() == 1);
    CHECK(w.diagnostics[0].kind == DiagKind::Race);
    REQUIRE(w.diagnostics[0].accesses.size() == 2);
    CHECK(w.diagnostics[0].accesses[0].thread == (synced == 0 ? 32u : 0u));
    // ... and one of the same value is a third benign writer (one note: the same buffer).
    auto same = run_program(after_two_writes(synced, After::WriteSame), three_warps(), dom);
    INFO((same.ok() ? std::string() : same.diagnostics[0].text()));
    CHECK(same.ok());
    CHECK(same.notes.size() == 1);
  }
  // Ordered after both writes (a CTA barrier): a plain read, and the value is 1.
  auto r = run_program(after_two_writes(2, After::Read), three_warps(), dom);
  INFO((r.ok() ? std::string() : r.diagnostics[0].text()));
  REQUIRE(r.ok());
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0].buffer == "flag");
  CHECK(*r.outputs.at("y")[0] == c.constant(Rational(1)));
  auto w = run_program(after_two_writes(2, After::WriteOther), three_warps(), dom);
  CHECK(w.ok());
  // Strict: the two writes themselves are the race.
  auto s = run_program(after_two_writes(2, After::Read), three_warps(), dom, strict_options());
  REQUIRE(s.diagnostics.size() == 1);
  CHECK(s.diagnostics[0].kind == DiagKind::Race);
  CHECK(s.diagnostics[0].accesses[0].thread == 0);
  CHECK(s.diagnostics[0].accesses[1].thread == 32);
}

TEST_CASE("spec cases: the report prints the note; strict, fpsan and whole-grid checks agree") {
  Report flag = check(spec_of("flag_any.json"));
  CHECK(flag.verdict == Outcome::Ok);
  REQUIRE(flag.notes.size() == 1);
  const std::string text = flag.text();
  INFO(text);
  CHECK(text.find("note: same_value_write: flag_any: threads 16 and 17 write the same value to 4 bytes at shared "
                  "flag_any::found+0 without synchronization (not a race: either order leaves the same "
                  "value)\n") != std::string::npos);
  CHECK(flag.json().find("\"same_value_write\"") != std::string::npos);
  CHECK(check(spec_of("flag_any_strict.json")).verdict == Outcome::Race);
  CHECK(check(spec_of("dup_rows_differ.json")).verdict == Outcome::Race);

  Report eq = check_equivalence(spec_of("dup_rows.json"));
  CHECK(eq.verdict == Outcome::Equivalent);
  CHECK(eq.notes.size() == 2);  // tile and y of the optimized kernel
  CHECK(check_equivalence(spec_of("dup_rows_strict.json")).verdict == Outcome::Race);

  // fpsan runs the kernels on payloads: the same notes and verdicts.
  Report fp = check_payloads(spec_of("dup_rows.json"));
  CHECK(fp.verdict == Outcome::PayloadsAgree);
  CHECK(fp.notes.size() == 2);
  CHECK(check_payloads(spec_of("dup_rows_strict.json")).verdict == Outcome::Race);

  // Two CTAs storing the same values: the same rule between CTAs.
  Report grid = check(spec_of("all_ctas.json"));
  INFO(grid.text());
  CHECK(grid.verdict == Outcome::Ok);
  REQUIRE(grid.notes.size() == 1);
  CHECK(grid.notes[0].message ==
        "same_tile_all_ctas: CTA (0,0,0) and CTA (1,0,0) write the same value to 4 bytes at global y+0 (element 0) "
        "without synchronization (not a race: either order leaves the same value)");
  REQUIRE(grid.notes[0].accesses.size() == 2);
  CHECK(grid.notes[0].accesses[0].thread == 0);
  // Each access's thread is named by its CTA: the runs of two CTAs both
  // number their threads from 0.
  const std::string grid_text = grid.notes[0].text();
  CHECK(grid_text.find("earlier write by thread 0 of CTA (0,0,0) at ") != std::string::npos);
  CHECK(grid_text.find("later   write by thread 0 of CTA (1,0,0) at ") != std::string::npos);
  Report grid_strict = check(spec_of("all_ctas_strict.json"));
  CHECK(grid_strict.verdict == Outcome::Race);
  REQUIRE(!grid_strict.diagnostics.empty());
  CHECK(grid_strict.diagnostics[0].detail.find("same value") != std::string::npos);
}

// A sharded check finds CTA classes from concrete runs, and its symbolic
// runs of the representatives skip the race check when the concrete run's
// could not have depended on values (class_check.cpp). Here the concrete
// run sees the same float (5) stored by every thread and notes it, while
// the symbolic values differ: the symbolic run must keep its race check
// and report the race, in the shard that runs it as in the whole check.
TEST_CASE("same-value writes only the concrete domain sees: a race in a sharded check too") {
  const Spec spec = spec_of("concrete_same.json");
  Report whole = check_equivalence(spec);
  INFO(whole.text());
  CHECK(whole.verdict == Outcome::Race);
  // One comparison (every CTA's y element renames CTA (0,0,0)'s): shard 0
  // of 2 has it and runs both representatives.
  DecideLimits limits;
  limits.shard_index = 0;
  limits.shard_count = 2;
  Report r = check_equivalence(spec, limits);
  INFO(r.text());
  CHECK(r.verdict == Outcome::Race);
  REQUIRE(!r.diagnostics.empty());
  CHECK(r.diagnostics[0].message.find("data race on 4 bytes at global y+0") != std::string::npos);
  // The concrete run alone (the classification's) calls it a same-value write.
  auto loaded = load_kernel(*spec.opt);
  REQUIRE(loaded.program.has_value());
  ConcreteDomain concrete;
  auto run = run_program(*loaded.program, launch_of(spec, *spec.opt), concrete);
  CHECK(run.ok());
  REQUIRE(!run.notes.empty());
  CHECK(run.notes[0].kind == DiagKind::SameValueWrite);
}
