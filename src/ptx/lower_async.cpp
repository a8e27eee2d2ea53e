// Lowering Hopper's asynchronous instructions: mbarrier.*, cp.async.bulk
// (with and without .tensor), barrier.cluster and mapa (PTX ISA 8.x,
// "Parallel Synchronization and Communication Instructions: mbarrier",
// "Data Movement and Conversion Instructions: cp.async.bulk,
// cp.async.bulk.tensor", "barrier.cluster", "mapa"), cp.async.mbarrier.arrive,
// nanosleep and the timer registers (what libcu++'s cuda::barrier and
// cuda::pipeline compile to). The encodings are the
// ones program.hpp documents at each opcode; src/eval/machine_async.cpp runs
// them. What the evaluator does not model is refused here, as unsupported,
// with the reason (im2col, reductions, copies between CTAs of a cluster).
#include "lower_ops.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace tileverify::ptx::lowering {

namespace {

using PK = ptx::Operand::Kind;

[[noreturn]] void unsupported(const Instruction& pin, const std::string& why) {
  fail(pin.loc, "'" + str(pin.opcode) + "' is not supported: " + why);
}

void need_ops(const Instruction& pin, std::size_t lo, std::size_t hi) {
  const std::size_t n = pin.operands.size();
  if (n < lo || n > hi)
    bad_input(pin.loc, "'" + str(pin.opcode) + "' takes " +
                           (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) +
                           " operands, not " + std::to_string(n));
}

// The state space of an mbarrier instruction's address: .shared / .shared::cta
// (or none: a generic address, which tileverify models as the same shared
// pointer), or .shared::cluster (a possibly remote barrier).
bool cluster_space(const OpParts& parts) { return has_part(parts, "shared::cluster"); }

// An address operand [a] (not a tensor-map address).
tileverify::Operand plain_address(KernelLowering& k, const Instruction& pin, const ptx::Operand& o) {
  if (o.kind != PK::Address) bad_input(o.loc, "'" + str(pin.opcode) + "' expects an address [..] here");
  return k.address(o);
}

// ---------------------------------------------------------------- mbarrier

void mbarrier(KernelLowering& k, const Instruction& pin, Instr& in, const OpParts& parts) {
  const auto& ops = pin.operands;
  const std::string_view what = parts.size() > 1 ? parts[1] : "";
  in.space = Space::Shared;
  in.type = DType::B64;
  if (is_word(what, "init")) {
    need_ops(pin, 2, 2);
    in.op = Opcode::MbarInit;
    in.src = {plain_address(k, pin, ops[0]), k.value(ops[1])};
    return;
  }
  if (is_word(what, "arrive") || is_word(what, "arrive_drop")) {
    // mbarrier.arrive{.expect_tx}{.noComplete}{.sem}{.scope}{.space}.b64 state, [a]{, count | txCount}
    need_ops(pin, 2, 3);
    in.op = Opcode::MbarArrive;
    std::uint8_t mode = 0;
    if (is_word(what, "arrive_drop")) mode |= MbarArriveFlags::kDrop;
    if (has_part(parts, "expect_tx")) mode |= MbarArriveFlags::kExpectTx;
    if (has_part(parts, "noComplete")) mode |= MbarArriveFlags::kNoComplete;
    if (has_part(parts, "relaxed")) mode |= MbarArriveFlags::kRelaxed;
    if (cluster_space(parts)) mode |= MbarArriveFlags::kRemote;
    in.mode = mode;
    if (ops[0].kind == PK::Sink)
      in.dst.clear();
    else
      k.set_dsts(in.dst, ops[0]);
    if ((mode & MbarArriveFlags::kRemote) && !in.dst.empty())
      bad_input(ops[0].loc, "an arrive on a .shared::cluster barrier returns no state: its destination must be the sink '_' (PTX ISA, mbarrier.arrive)");
    const tileverify::Operand a = plain_address(k, pin, ops[1]);
    tileverify::Operand count = tileverify::Operand::integer(1), tx = tileverify::Operand::integer(0);
    if (mode & MbarArriveFlags::kExpectTx) {
      // "When both qualifiers .arrive and .expect_tx are specified, then the
      // count argument of the arrive-on operation is assumed to be 1."
      if (ops.size() != 3) bad_input(pin.loc, "'" + str(pin.opcode) + "' needs its txCount operand");
      tx = k.value(ops[2]);
    } else if (ops.size() == 3) {
      count = k.value(ops[2]);
    } else if (mode & MbarArriveFlags::kNoComplete) {
      bad_input(pin.loc, "mbarrier.arrive.noComplete needs its count operand");
    }
    in.src = {a, count, tx};
    return;
  }
  if (is_word(what, "expect_tx") || is_word(what, "complete_tx")) {
    need_ops(pin, 2, 2);
    in.op = Opcode::MbarTx;
    in.mode = is_word(what, "complete_tx") ? 1 : 0;
    in.src = {plain_address(k, pin, ops[0]), k.value(ops[1])};
    return;
  }
  if (is_word(what, "test_wait") || is_word(what, "try_wait")) {
    // mbarrier.{test,try}_wait{.parity}{.sem}{.scope}{.space}.b64 p, [a], state|parity{, suspendTimeHint}
    const bool try_wait = is_word(what, "try_wait");
    need_ops(pin, 3, try_wait ? 4 : 3);
    in.op = Opcode::MbarWait;
    std::uint8_t mode = 0;
    if (has_part(parts, "parity")) mode |= MbarWaitFlags::kParity;
    if (try_wait) mode |= MbarWaitFlags::kTry;
    if (has_part(parts, "relaxed")) mode |= MbarWaitFlags::kRelaxed;
    in.mode = mode;
    if (cluster_space(parts)) unsupported(pin, "waiting on a .shared::cluster barrier is not valid PTX");
    in.dst = {k.reg_of(ops[0])};
    in.src = {plain_address(k, pin, ops[1]), k.value(ops[2])};
    // The suspend-time hint only bounds how long the hardware may suspend the
    // thread before returning false: a retry loop waits either way.
    return;
  }
  if (is_word(what, "inval")) {
    need_ops(pin, 1, 1);
    in.op = Opcode::MbarInval;
    in.src = {plain_address(k, pin, ops[0])};
    return;
  }
  if (is_word(what, "pending_count"))
    unsupported(pin, "mbarrier.pending_count reads the opaque state of an arrive, which tileverify does not model");
  unsupported(pin, "unknown mbarrier operation");
}

// ---------------------------------------------------------------- bulk copies

// The qualifiers of a cp.async.bulk{.tensor} that tileverify does not model,
// with why; null: none.
const char* unmodelled_bulk(const OpParts& parts) {
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string_view p = parts[i];
    if (starts_with(p, "im2col")) return "the im2col modes of TMA are not modelled (only .tile)";
    if (starts_with(p, "tile::gather4") || starts_with(p, "tile::scatter4"))
      return "TMA gather4 / scatter4 are not modelled (only .tile)";
    if (starts_with(p, "cta_group")) return ".cta_group (sm_100) is not modelled";
    if (is_word(p, "cp_mask")) return "byte masks of bulk copies (.cp_mask) are not modelled";
    if (starts_with(p, "prefetch")) return "TMA prefetches are not modelled";
    if (starts_with(p, "mbarrier::complete_tx") && !is_word(p, "mbarrier::complete_tx::bytes"))
      return "unknown completion mechanism";
  }
  return nullptr;
}

// The dims of .1d .. .5d.
int tensor_dims(const Instruction& pin, const OpParts& parts) {
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string_view p = parts[i];
    if (p.size() == 2 && p[1] == 'd' && p[0] >= '1' && p[0] <= '5') return p[0] - '0';
  }
  bad_input(pin.loc, "'" + str(pin.opcode) + "' needs its dimension (.1d to .5d)");
}

// [map, {c0, ..}]: the map's address (the operand without its coordinates)
// and the coordinates, which must be as many as the dims.
void tensor_operand(KernelLowering& k, const Instruction& pin, const ptx::Operand& o, int dims,
                    tileverify::Operand* map, std::vector<tileverify::Operand>* coords) {
  if (o.kind != PK::Address || o.elements.empty())
    bad_input(o.loc, "'" + str(pin.opcode) + "' expects a tensor-map operand [map, {c0, ..}] here");
  // The parser keeps the braces: one element, the vector of coordinates.
  const std::vector<ptx::Operand>& cs =
      o.elements.size() == 1 && o.elements[0].kind == PK::Vector ? o.elements[0].elements : o.elements;
  if (int(cs.size()) != dims)
    bad_input(o.loc, "'" + str(pin.opcode) + "' has " + std::to_string(dims) + " dimensions but " +
                         std::to_string(cs.size()) + " coordinates");
  ptx::Operand base = o;
  base.elements.clear();
  *map = k.address(base);
  for (const auto& e : cs) coords->push_back(k.value(e));
}

void bulk(KernelLowering& k, const Instruction& pin, Instr& in, const OpParts& parts) {
  const auto& ops = pin.operands;
  // parts: cp, async, bulk, ...
  const bool tensor = parts.size() > 3 && is_word(parts[3], "tensor");
  const std::string_view what = parts.size() > 3 ? parts[3] : "";
  if (is_word(what, "commit_group")) {
    need_ops(pin, 0, 0);
    in.op = Opcode::BulkCommit;
    return;
  }
  if (is_word(what, "wait_group")) {
    need_ops(pin, 1, 1);
    if (ops[0].kind != PK::Int || ops[0].value < 0)
      bad_input(ops[0].loc, "cp.async.bulk.wait_group needs a constant number of groups");
    in.op = Opcode::BulkWait;
    in.mode = has_part(parts, "read") ? 1 : 0;
    in.src = {tileverify::Operand::integer(ops[0].value)};
    return;
  }
  if (const char* why = unmodelled_bulk(parts)) unsupported(pin, why);
  const bool hint = has_part(parts, "L2::cache_hint");  // the cache-policy operand comes last; ignored
  // The destination's state space follows the dims (.tensor.2d) or .bulk.
  const std::size_t dst_at = tensor ? 5 : 3;
  const bool to_shared = parts.size() > dst_at &&
                         (is_word(parts[dst_at], "shared::cluster") || is_word(parts[dst_at], "shared::cta"));
  const bool from_global = has_part(parts, "global");
  const bool to_global = parts.size() > dst_at && is_word(parts[dst_at], "global");
  if (tensor) {
    const int dims = tensor_dims(pin, parts);
    in.mode = std::uint8_t(dims);
    if (to_shared && from_global && has_part(parts, "mbarrier::complete_tx::bytes")) {
      // [dst], [map, {c..}], [mbar]{, ctaMask}{, policy}
      const bool multicast = has_part(parts, "multicast::cluster");
      need_ops(pin, 3 + (multicast ? 1 : 0) + (hint ? 1 : 0), 3 + (multicast ? 1 : 0) + (hint ? 1 : 0));
      in.op = Opcode::TmaLoad;
      in.space = Space::Shared;
      in.shape = multicast ? 1 : 0;
      tileverify::Operand map;
      std::vector<tileverify::Operand> coords;
      tensor_operand(k, pin, ops[1], dims, &map, &coords);
      in.src = {plain_address(k, pin, ops[0]), map, plain_address(k, pin, ops[2])};
      for (const auto& c : coords) in.src.push_back(c);
      if (multicast) in.src.push_back(k.value(ops[3]));
      return;
    }
    if (to_global && has_part(parts, "shared::cta") && has_part(parts, "bulk_group")) {
      // [map, {c..}], [src]{, policy}
      need_ops(pin, 2 + (hint ? 1 : 0), 2 + (hint ? 1 : 0));
      in.op = Opcode::TmaStore;
      in.space = Space::Shared;
      tileverify::Operand map;
      std::vector<tileverify::Operand> coords;
      tensor_operand(k, pin, ops[0], dims, &map, &coords);
      in.src = {map, plain_address(k, pin, ops[1])};
      for (const auto& c : coords) in.src.push_back(c);
      return;
    }
    unsupported(pin, "this form of TMA is not modelled (loads global -> shared with mbarrier completion, and "
                     "stores shared::cta -> global with bulk groups, are)");
  }
  if (to_shared && from_global && has_part(parts, "mbarrier::complete_tx::bytes")) {
    if (has_part(parts, "multicast::cluster")) unsupported(pin, "multicast bulk copies are not modelled");
    // [dst], [src], size, [mbar]{, policy}
    need_ops(pin, 4 + (hint ? 1 : 0), 4 + (hint ? 1 : 0));
    in.op = Opcode::BulkCopy;
    in.space = Space::Shared;
    in.src = {plain_address(k, pin, ops[0]), plain_address(k, pin, ops[1]), k.value(ops[2]), plain_address(k, pin, ops[3])};
    return;
  }
  if (to_global && has_part(parts, "shared::cta") && has_part(parts, "bulk_group")) {
    // [dst], [src], size{, policy}
    need_ops(pin, 3 + (hint ? 1 : 0), 3 + (hint ? 1 : 0));
    in.op = Opcode::BulkCopy;
    in.space = Space::Global;
    in.src = {plain_address(k, pin, ops[0]), plain_address(k, pin, ops[1]), k.value(ops[2])};
    return;
  }
  if (parts.size() > 4 && is_word(parts[3], "shared::cluster") && is_word(parts[4], "shared::cta"))
    unsupported(pin, "bulk copies between the shared memories of a cluster's CTAs are not modelled (clusters of "
                     "more than one CTA are not modelled yet)");
  unsupported(pin, "this form of bulk copy is not modelled");
}

// ---------------------------------------------------------------- cp.async + mbarrier, nanosleep

// cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [addr] (PTX ISA, "Parallel Synchronization
// and Communication Instructions: cp.async.mbarrier.arrive"): the barrier gets an arrive-on when
// all of the thread's prior cp.async copies complete; without .noinc its pending count is first
// raised by one, so the arrive-on changes nothing but holds the phase open until the copies land.
void cp_async_mbarrier(KernelLowering& k, const Instruction& pin, Instr& in, const OpParts& parts) {
  if (!(parts.size() > 3 && is_word(parts[3], "arrive")))
    unsupported(pin, "of the cp.async.mbarrier instructions only cp.async.mbarrier.arrive exists");
  for (std::size_t i = 4; i < parts.size(); ++i) {
    const std::string_view p = parts[i];
    if (!is_word(p, "noinc") && !is_word(p, "shared") && !is_word(p, "shared::cta") && !is_word(p, "b64"))
      bad_input(pin.loc, "'" + str(pin.opcode) + "': cp.async.mbarrier.arrive takes .noinc, .shared{::cta} and .b64, not ." +
                             str(p));
  }
  need_ops(pin, 1, 1);
  in.op = Opcode::CpAsyncMbarArrive;
  in.space = Space::Shared;
  in.type = DType::B64;
  in.mode = has_part(parts, "noinc") ? 1 : 0;
  in.src = {plain_address(k, pin, pin.operands[0])};
}

}  // namespace

// The timers of the PTX ISA's "Special Registers": %clock, %clock_hi, %clock64 (SM cycle
// counters) and %globaltimer{,_lo,_hi} (nanoseconds). libcu++'s barrier and pipeline waits read
// %globaltimer to pace their backoff; what they read is the schedule's, not the kernel's.
bool lower_timer(KernelLowering& k, const Instruction& pin, Instr& in) {
  if (pin.operands.size() != 2 || pin.operands[1].kind != PK::Name) return false;
  static constexpr std::pair<std::string_view, TimerKind> timers[] = {
      {"%clock", TimerKind::Clock},           {"%clock_hi", TimerKind::ClockHi},
      {"%clock64", TimerKind::Clock64},       {"%globaltimer", TimerKind::GlobalTimer},
      {"%globaltimer_lo", TimerKind::GlobalTimerLo}, {"%globaltimer_hi", TimerKind::GlobalTimerHi}};
  for (const auto& [name, kind] : timers)
    if (pin.operands[1].name == name) {
      if (pin.operands[0].kind == PK::Vector) bad_input(pin.operands[0].loc, "a timer is read into one register");
      in.op = Opcode::Timer;
      in.mode = std::uint8_t(kind);
      in.dst = {k.reg_of(pin.operands[0])};
      return true;
    }
  return false;
}

void lower_async(KernelLowering& k, const Instruction& pin, Instr& in, const OpParts& parts) {
  const std::string_view base = parts[0];
  if (is_word(base, "mbarrier")) return mbarrier(k, pin, in, parts);
  if (is_word(base, "cp")) {
    if (parts.size() > 2 && is_word(parts[1], "async") && is_word(parts[2], "bulk")) return bulk(k, pin, in, parts);
    if (parts.size() > 2 && is_word(parts[1], "async") && is_word(parts[2], "mbarrier"))
      return cp_async_mbarrier(k, pin, in, parts);
    unsupported(pin, "unknown asynchronous copy");
  }
  if (is_word(base, "barrier") || is_word(base, "bar")) {
    // barrier.cluster.arrive{.release,.relaxed}{.aligned} / barrier.cluster.wait{.acquire}{.aligned}
    need_ops(pin, 0, 0);
    in.op = Opcode::ClusterBar;
    if (has_part(parts, "arrive"))
      in.mode = has_part(parts, "relaxed") ? 2 : 0;
    else if (has_part(parts, "wait"))
      in.mode = 1;
    else
      bad_input(pin.loc, "'" + str(pin.opcode) + "': barrier.cluster needs .arrive or .wait");
    return;
  }
  if (is_word(base, "nanosleep")) {
    // nanosleep.u32 t (PTX ISA, "nanosleep"): suspends the thread for up to t nanoseconds; it
    // changes when the thread runs, never what it computes.
    need_ops(pin, 1, 1);
    in.op = Opcode::Nanosleep;
    in.src = {k.value(pin.operands[0])};
    return;
  }
  if (is_word(base, "prefetch") || is_word(base, "prefetchu")) {
    // prefetch{.space}.level [a], prefetch{.space}.tensormap [a], prefetchu.L1
    // [a] (PTX ISA, "prefetch, prefetchu"): a hint that brings a line, or a
    // tensor map, into a cache. It changes no value, so it is a no-op, kept
    // as a Fence of the plain kind for listings.
    static constexpr std::string_view kQualifiers[] = {"global", "local", "const", "param", "L1", "L2",
                                                       "L2::evict_last", "L2::evict_normal", "tensormap"};
    for (std::size_t i = 1; i < parts.size(); ++i)
      if (std::find(std::begin(kQualifiers), std::end(kQualifiers), parts[i]) == std::end(kQualifiers))
        bad_input(pin.loc, "'" + str(pin.opcode) + "': unknown qualifier ." + std::string(parts[i]) +
                               " (prefetch takes a state space and .L1, .L2, .L2::evict_last, .L2::evict_normal "
                               "or .tensormap)");
    need_ops(pin, 1, 1);
    plain_address(k, pin, pin.operands[0]);
    in.op = Opcode::Fence;
    in.mode = std::uint8_t(FenceKind::Plain);
    return;
  }
  if (is_word(base, "tensormap"))
    unsupported(pin, "it rewrites a tensor map in memory (PTX ISA, \"tensormap.replace\"), and tileverify takes "
                     "each map as the spec gives it");
  if (is_word(base, "mapa")) {
    // mapa.shared::cluster.{u32,u64} d, a, rank
    need_ops(pin, 3, 3);
    if (!has_part(parts, "shared::cluster"))
      unsupported(pin, "mapa on generic addresses is not modelled (only .shared::cluster)");
    in.op = Opcode::Mapa;
    in.space = Space::Shared;
    in.dst = {k.reg_of(pin.operands[0])};
    in.src = {k.value(pin.operands[1]), k.value(pin.operands[2])};
    return;
  }
  unsupported(pin, "unknown asynchronous instruction");
}

}  // namespace tileverify::ptx::lowering
