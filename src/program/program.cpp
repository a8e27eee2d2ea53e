// The structured-CTA program model: type facts, listings, ProgramBuilder.
#include "tileverify/program.hpp"

#include <cstdio>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace tileverify {

std::size_t dtype_bytes(DType t) {
  switch (t) {
    case DType::Pred: return 1;
    case DType::S8: case DType::U8: case DType::B8: return 1;
    case DType::S16: case DType::U16: case DType::F16: case DType::BF16: case DType::B16: return 2;
    case DType::S32: case DType::U32: case DType::F32: case DType::B32: return 4;
    case DType::S64: case DType::U64: case DType::F64: case DType::B64: return 8;
  }
  return 4;
}

bool dtype_is_float(DType t) {
  return t == DType::F16 || t == DType::BF16 || t == DType::F32 || t == DType::F64;
}

bool dtype_is_signed(DType t) {
  return t == DType::S8 || t == DType::S16 || t == DType::S32 || t == DType::S64;
}

const char* dtype_name(DType t) {
  static const char* names[] = {"pred", "s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64",
                                "f16",  "bf16", "f32", "f64", "b8", "b16", "b32", "b64"};
  return names[std::size_t(t)];
}

const char* space_name(Space s) {
  switch (s) {
    case Space::Global: return "global";
    case Space::Shared: return "shared";
    case Space::Local: return "local";
    case Space::Param: return "param";
    case Space::Const: return "const";
  }
  return "?";
}

const char* opcode_name(Opcode op) {
  static const char* names[] = {"mov", "cvt", "selp", "add", "sub", "mul", "mul.hi", "mul.wide", "mad", "mad.wide",
                                "fma", "div", "rem", "min", "max", "neg", "abs", "and", "or", "xor", "not", "shl",
                                "shr", "rcp", "sqrt", "rsqrt", "ex2", "exp", "lg2", "tanh", "log", "log1p", "erf", "setp", "ld", "st",
                                "bra", "ret", "bar.sync", "bar.warp.sync", "shfl.sync", "vote.sync", "mma.sync",
                                "ldmatrix", "bfi", "bfe", "atom", "cp.async", "cp.async.commit_group",
                                "cp.async.wait_group", "wmma.load", "wmma.mma", "wmma.store", "trap", "redux.sync", "fence",
                                "mbarrier.init", "mbarrier.arrive", "mbarrier.tx", "mbarrier.wait", "mbarrier.inval",
                                "cp.async.bulk.tensor.load", "cp.async.bulk.tensor.store", "cp.async.bulk",
                                "cp.async.bulk.commit_group", "cp.async.bulk.wait_group", "elect.sync", "barrier.cluster",
                                "mapa", "wgmma.fence", "wgmma.commit_group", "wgmma.wait_group", "wgmma.mma_async",
                                "stmatrix", "timer", "nanosleep", "cp.async.mbarrier.arrive", "unsupported"};
  static_assert(sizeof names / sizeof names[0] == std::size_t(Opcode::Unsupported) + 1, "a name per opcode");
  return names[std::size_t(op)];
}

const char* atom_op_name(AtomOp op) {
  static const char* names[] = {"add", "min", "max", "and", "or", "xor", "exch", "inc", "dec", "cas", "mul", "load"};
  return names[std::size_t(op)];
}

const std::string& SharedString::empty_string() noexcept {
  static const std::string empty;
  return empty;
}

SharedString SharedString::interned(const std::string& s) {
  if (s.empty()) return {};
  constexpr std::size_t kMaxInterned = 4096;
  static std::mutex mutex;
  // Never destroyed: interned strings may be read during static destruction.
  static auto* const table = new std::unordered_map<std::string, Rep*>();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = table->find(s);
  if (it == table->end()) {
    if (table->size() >= kMaxInterned) return SharedString(s);
    it = table->emplace(s, new Rep{{1}, s}).first;
  }
  SharedString r;
  r.bits_ = bits_of(it->second) | kInterned;
  return r;
}

std::ostream& operator<<(std::ostream& os, const SharedString& s) { return os << s.str(); }

std::string SourceLoc::text() const {
  if (line == 0) return file.empty() ? std::string("<unknown>") : file.str();
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string SourceLoc::with_source() const { return source.empty() ? text() : text() + " (" + source + ")"; }

static std::string operand_text(const Program& p, const Operand& o) {
  switch (o.kind) {
    case Operand::Kind::None: return "_";
    case Operand::Kind::Reg: {
      std::string r = p.registers[o.index].name;
      return o.imm ? "[" + r + "+" + std::to_string(o.imm) + "]" : r;
    }
    case Operand::Kind::Int: return std::to_string(o.imm);
    case Operand::Kind::Float: return p.constants[o.index].str();
    case Operand::Kind::Special: {
      static const char* names[] = {"%tid.x", "%tid.y", "%tid.z", "%ntid.x", "%ntid.y", "%ntid.z", "%ctaid.x",
                                    "%ctaid.y", "%ctaid.z", "%nctaid.x", "%nctaid.y", "%nctaid.z", "%laneid",
                                    "%warpid", "%cluster_ctaid.x", "%cluster_ctaid.y", "%cluster_ctaid.z",
                                    "%cluster_nctaid.x", "%cluster_nctaid.y", "%cluster_nctaid.z", "%cluster_ctarank",
                                    "%cluster_nctarank", "%clusterid.x", "%clusterid.y", "%clusterid.z",
                                    "%nclusterid.x", "%nclusterid.y", "%nclusterid.z", "%is_explicit_cluster",
                                    "%reserved_smem_offset"};
      static_assert(sizeof names / sizeof names[0] == std::size_t(Special::ReservedSmem) + 1, "a name per register");
      return names[o.index];
    }
    case Operand::Kind::Buffer: return "[" + p.buffers[o.index].name + "+" + std::to_string(o.imm) + "]";
    case Operand::Kind::Param: return "[" + p.params[o.index].name + "+" + std::to_string(o.imm) + "]";
  }
  return "?";
}

const Instr* Program::first_unsupported() const {
  for (const Instr& in : code)
    if (in.op == Opcode::Unsupported && !in.src.empty() && std::size_t(in.src[0].imm) < unsupported.size()) return &in;
  return nullptr;
}

std::string Program::instr_text(std::uint32_t pc) const {
  if (pc >= code.size()) return "<end>";
  const Instr& in = code[pc];
  std::ostringstream os;
  if (in.guard >= 0) os << "@" << (in.guard_negated ? "!" : "") << registers[std::size_t(in.guard)].name << " ";
  if (in.op == Opcode::Atom && AtomOp(in.mode) == AtomOp::Load)  // a relaxed atomic load
    os << "ld.relaxed." << space_name(in.space);
  else if (in.op == Opcode::Atom)  // red: an atomic whose old value nobody reads
    os << (in.dst.empty() ? "red" : "atom") << "." << space_name(in.space) << "." << atom_op_name(AtomOp(in.mode));
  else if (in.op == Opcode::Redux)
    os << "redux.sync." << atom_op_name(AtomOp(in.mode));
  else if (in.op == Opcode::WmmaLoad)
    os << "wmma.load." << "abc"[in.mode % 3] << (in.trans ? ".col" : ".row");
  else if (in.op == Opcode::WmmaStore)
    os << "wmma.store.d" << (in.trans ? ".col" : ".row");
  else if (in.op == Opcode::CpAsyncWait && in.mode == 1)
    os << "cp.async.wait_all";
  else if (in.op == Opcode::Unsupported && !in.src.empty() && std::size_t(in.src[0].imm) < unsupported.size())
    return os.str() + unsupported_of(in).text + " (unsupported)";
  else if (in.op == Opcode::Trap)  // the assert's arguments are .param slots: not worth listing
    return os.str() + (in.mode == 1 ? "call __assertfail" : "trap");
  else if (in.op == Opcode::Timer && !in.dst.empty() && in.mode <= std::uint8_t(TimerKind::GlobalTimerHi)) {
    static const char* timers[] = {"%clock", "%clock_hi", "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi"};
    return os.str() + "mov." + dtype_name(in.type) + " " + registers[in.dst[0]].name + ", " + timers[in.mode];
  }
  else
    os << opcode_name(in.op);
  // ld.v2/.v4 write several registers and st.v2/.v4 read several values
  // (after the address): listed as PTX writes them, so that a report's
  // instruction reads like the line it cites.
  const std::size_t vec = in.op == Opcode::Ld ? in.dst.size() : in.op == Opcode::St && in.src.size() > 2 ? in.src.size() - 1 : 1;
  if (in.op == Opcode::Ld || in.op == Opcode::St) os << "." << space_name(in.space) << (vec > 1 ? ".v" + std::to_string(vec) : "");
  if (in.op == Opcode::Setp) os << "." << cmp_symbol(in.cmp);
  if (in.op != Opcode::Bra && in.op != Opcode::Ret && in.op != Opcode::Bar && in.op != Opcode::WarpSync &&
      in.op != Opcode::CpAsync && in.op != Opcode::CpAsyncCommit && in.op != Opcode::CpAsyncWait &&
      in.op != Opcode::Fence)
    os << "." << dtype_name(in.type);
  bool first = true;
  for (std::uint32_t d : in.dst) {
    os << (first ? (vec > 1 ? " {" : " ") : ", ") << (d == kNoReg ? std::string("_") : registers[d].name);
    first = false;
  }
  if (in.op == Opcode::Ld && vec > 1) os << "}";
  for (std::size_t i = 0; i < in.src.size(); ++i) {
    const Operand& o = in.src[i];
    std::string t = operand_text(*this, o);
    bool is_address = ((i == 0 && (in.op == Opcode::Ld || in.op == Opcode::St || in.op == Opcode::Atom ||
                                   in.op == Opcode::CpAsync || in.op == Opcode::WmmaLoad || in.op == Opcode::WmmaStore)) ||
                       (i == 1 && in.op == Opcode::CpAsync)) &&
                      t[0] != '[';
    bool is_mask = (in.op == Opcode::WarpSync && i == 0) || (in.op == Opcode::Shfl && i == 3) ||
                   ((in.op == Opcode::Vote || in.op == Opcode::Redux) && i == 1);
    if (is_address) t = "[" + t + "]";
    if (is_mask && o.kind == Operand::Kind::Int) {
      char hex[16];
      std::snprintf(hex, sizeof hex, "0x%08x", unsigned(o.imm));
      t = hex;
    }
    const bool vec_open = in.op == Opcode::St && vec > 1 && i == 1, vec_close = in.op == Opcode::St && vec > 1 && i + 1 == in.src.size();
    os << (first ? " " : ", ") << (vec_open ? "{" : "") << t << (vec_close ? "}" : "");
    first = false;
  }
  if (in.op == Opcode::Bra) os << " -> " << in.target;
  if (in.op == Opcode::Atom && in.shape == 1) os << " (a compare-and-swap loop)";
  return os.str();
}

std::string Program::listing() const {
  std::string s;
  for (std::uint32_t pc = 0; pc < code.size(); ++pc) s += std::to_string(pc) + ": " + instr_text(pc) + "\n";
  return s;
}

// ---------------------------------------------------------------- builder

ProgramBuilder::ProgramBuilder(std::string name) { p_.name = std::move(name); }

ProgramBuilder& ProgramBuilder::at(SourceLoc loc) {
  next_loc_ = std::move(loc);
  has_loc_ = true;
  return *this;
}

ProgramBuilder& ProgramBuilder::emit(Instr in) {
  if (has_loc_)
    in.loc = next_loc_;
  else if (in.loc.file.empty())
    in.loc.file = p_.name + " instruction " + std::to_string(p_.code.size());
  p_.code.push_back(std::move(in));
  return *this;
}

// One instruction of the plain form: op.type dst..., src...
static Instr make(Opcode op, DType type, std::vector<std::uint32_t> dst, std::vector<Operand> src) {
  Instr in;
  in.op = op;
  in.type = type;
  in.dst = std::move(dst);
  in.src = std::move(src);
  return in;
}

ProgramBuilder::Mem ProgramBuilder::param_pointer(const std::string& name, DType elem) {
  p_.params.push_back({name, DType::U64, true});
  return Mem{Operand::param(std::uint32_t(p_.params.size() - 1)), elem};
}

ProgramBuilder::Reg ProgramBuilder::param_scalar(const std::string& name, DType type) {
  p_.params.push_back({name, type, false});
  Reg r = reg(type);
  Instr in;
  in.op = Opcode::Ld;
  in.space = Space::Param;
  in.type = type;
  in.dst = {r.id};
  in.src = {Operand::param(std::uint32_t(p_.params.size() - 1))};
  emit(in);
  return r;
}

ProgramBuilder::Mem ProgramBuilder::shared(const std::string& name, DType elem, std::uint64_t elements) {
  p_.buffers.push_back({name, Space::Shared, elem, elements});
  return Mem{Operand::buffer(std::uint32_t(p_.buffers.size() - 1)), elem};
}

ProgramBuilder::Mem ProgramBuilder::local(const std::string& name, DType elem, std::uint64_t elements) {
  p_.buffers.push_back({name, Space::Local, elem, elements});
  return Mem{Operand::buffer(std::uint32_t(p_.buffers.size() - 1)), elem};
}

ProgramBuilder::Reg ProgramBuilder::reg(DType t) {
  std::string prefix = t == DType::Pred ? "%p" : (dtype_is_float(t) ? "%f" : "%r");
  p_.registers.push_back({prefix + std::to_string(p_.registers.size()), t});
  return Reg{std::uint32_t(p_.registers.size() - 1), t};
}

ProgramBuilder::Reg ProgramBuilder::imm(DType t, std::int64_t v) {
  Reg r = reg(t);
  emit(make(Opcode::Mov, t, {r.id}, {Operand::integer(v)}));
  return r;
}

ProgramBuilder::Reg ProgramBuilder::fimm(const Rational& v, DType t) {
  Reg r = reg(t);
  p_.constants.push_back(v);
  emit(make(Opcode::Mov, t, {r.id}, {Operand{Operand::Kind::Float, std::uint32_t(p_.constants.size() - 1), 0}}));
  return r;
}

ProgramBuilder::Reg ProgramBuilder::fbits(std::uint32_t bits) {
  Reg r = reg(DType::F32);
  emit(make(Opcode::Mov, DType::F32, {r.id}, {Operand::integer(std::int64_t(bits))}));
  return r;
}

ProgramBuilder::Reg ProgramBuilder::special(Special s) {
  Reg r = reg(DType::U32);
  mov(r, s);
  return r;
}

void ProgramBuilder::mov(Reg d, Reg a) { emit(make(Opcode::Mov, d.type, {d.id}, {Operand::reg(a.id)})); }

void ProgramBuilder::mov(Reg d, Special s) { emit(make(Opcode::Mov, d.type, {d.id}, {Operand::special(s)})); }

void ProgramBuilder::assign(Opcode op, Reg d, Reg a, Reg b) {
  emit(make(op, d.type, {d.id}, {Operand::reg(a.id), Operand::reg(b.id)}));
}

ProgramBuilder::Reg ProgramBuilder::binary(Opcode op, Reg a, Reg b) {
  Reg d = reg(a.type);
  assign(op, d, a, b);
  return d;
}

ProgramBuilder::Reg ProgramBuilder::unary(Opcode op, Reg a) {
  Reg d = reg(a.type);
  emit(make(op, a.type, {d.id}, {Operand::reg(a.id)}));
  return d;
}

ProgramBuilder::Reg ProgramBuilder::add(Reg a, Reg b) { return binary(Opcode::Add, a, b); }
ProgramBuilder::Reg ProgramBuilder::sub(Reg a, Reg b) { return binary(Opcode::Sub, a, b); }
ProgramBuilder::Reg ProgramBuilder::mul(Reg a, Reg b) { return binary(Opcode::Mul, a, b); }
ProgramBuilder::Reg ProgramBuilder::div(Reg a, Reg b) { return binary(Opcode::Div, a, b); }
ProgramBuilder::Reg ProgramBuilder::max(Reg a, Reg b) { return binary(Opcode::Max, a, b); }
ProgramBuilder::Reg ProgramBuilder::min(Reg a, Reg b) { return binary(Opcode::Min, a, b); }
ProgramBuilder::Reg ProgramBuilder::shl(Reg a, Reg b) { return binary(Opcode::Shl, a, b); }
ProgramBuilder::Reg ProgramBuilder::shr(Reg a, Reg b) { return binary(Opcode::Shr, a, b); }
ProgramBuilder::Reg ProgramBuilder::xor_(Reg a, Reg b) { return binary(Opcode::Xor, a, b); }
ProgramBuilder::Reg ProgramBuilder::and_(Reg a, Reg b) { return binary(Opcode::And, a, b); }
ProgramBuilder::Reg ProgramBuilder::neg(Reg a) { return unary(Opcode::Neg, a); }
ProgramBuilder::Reg ProgramBuilder::exp(Reg a) { return unary(Opcode::Exp, a); }
ProgramBuilder::Reg ProgramBuilder::ex2(Reg a) { return unary(Opcode::Ex2, a); }
ProgramBuilder::Reg ProgramBuilder::rcp(Reg a) { return unary(Opcode::Rcp, a); }
ProgramBuilder::Reg ProgramBuilder::sqrt(Reg a) { return unary(Opcode::Sqrt, a); }

ProgramBuilder::Reg ProgramBuilder::fma(Reg a, Reg b, Reg c) {
  Reg d = reg(a.type);
  emit(make(Opcode::Fma, a.type, {d.id}, {Operand::reg(a.id), Operand::reg(b.id), Operand::reg(c.id)}));
  return d;
}

ProgramBuilder::Reg ProgramBuilder::setp(Cmp c, Reg a, Reg b) {
  Reg d = reg(DType::Pred);
  Instr in = make(Opcode::Setp, a.type, {d.id}, {Operand::reg(a.id), Operand::reg(b.id)});
  in.cmp = c;
  emit(in);
  return d;
}

ProgramBuilder::Reg ProgramBuilder::selp(Reg p, Reg a, Reg b) {
  Reg d = reg(a.type);
  emit(make(Opcode::Selp, a.type, {d.id}, {Operand::reg(a.id), Operand::reg(b.id), Operand::reg(p.id)}));
  return d;
}

ProgramBuilder::Reg ProgramBuilder::cvt(DType to, Reg a) {
  Reg d = reg(to);
  Instr in = make(Opcode::Cvt, to, {d.id}, {Operand::reg(a.id)});
  in.src_type = a.type;
  emit(in);
  return d;
}

// The byte address of element (index + extra) of m, as a pointer register.
Operand ProgramBuilder::address(Mem m, Reg index, std::int64_t extra_elements) {
  std::int64_t esize = std::int64_t(dtype_bytes(m.elem));
  Reg base = reg(DType::U64);
  Instr mv;
  mv.op = Opcode::Mov;
  mv.type = DType::U64;
  mv.dst = {base.id};
  mv.src = {m.base};
  if (m.base.kind == Operand::Kind::Param) {  // ld.param.u64 of the pointer
    mv.op = Opcode::Ld;
    mv.space = Space::Param;
  }
  emit(mv);
  Reg scaled = reg(DType::U64);
  emit(make(Opcode::MulWide, DType::U32, {scaled.id}, {Operand::reg(index.id), Operand::integer(esize)}));
  Reg addr = reg(DType::U64);
  emit(make(Opcode::Add, DType::U64, {addr.id}, {Operand::reg(base.id), Operand::reg(scaled.id)}));
  return Operand::reg(addr.id, extra_elements * esize);
}

static Space space_of(const Program& p, const Operand& base) {
  if (base.kind == Operand::Kind::Buffer) return p.buffers[base.index].space;
  return Space::Global;
}

void ProgramBuilder::load(Reg d, Mem m, Reg index, std::int64_t extra_elements) {
  Instr in;
  in.op = Opcode::Ld;
  in.space = space_of(p_, m.base);
  in.type = m.elem;
  in.src = {address(m, index, extra_elements)};
  in.dst = {d.id};
  emit(in);
}

void ProgramBuilder::store(Mem m, Reg index, Reg v, std::int64_t extra_elements) {
  Instr in;
  in.op = Opcode::St;
  in.space = space_of(p_, m.base);
  in.type = m.elem;
  in.src = {address(m, index, extra_elements), Operand::reg(v.id)};
  emit(in);
}

void ProgramBuilder::load_at(Reg d, Mem m, std::int64_t element) {
  Reg zero = imm(DType::U32, 0);
  load(d, m, zero, element);
}

void ProgramBuilder::store_at(Mem m, std::int64_t element, Reg v) {
  Reg zero = imm(DType::U32, 0);
  store(m, zero, v, element);
}

ProgramBuilder::Label ProgramBuilder::label() {
  label_pos_.push_back(-1);
  return Label{std::uint32_t(label_pos_.size() - 1)};
}

void ProgramBuilder::place(Label l) { label_pos_[l.id] = std::int64_t(p_.code.size()); }

void ProgramBuilder::bra(Label l) {
  Instr in;
  in.op = Opcode::Bra;
  fixups_.emplace_back(std::uint32_t(p_.code.size()), l.id);
  emit(in);
}

void ProgramBuilder::bra_if(Reg pred, Label l, bool negated) {
  Instr in;
  in.op = Opcode::Bra;
  in.guard = std::int32_t(pred.id);
  in.guard_negated = negated;
  fixups_.emplace_back(std::uint32_t(p_.code.size()), l.id);
  emit(in);
}

void ProgramBuilder::ret() {
  Instr in;
  in.op = Opcode::Ret;
  emit(in);
}

void ProgramBuilder::bar(std::uint32_t id, std::int64_t count) {
  Instr in;
  in.op = Opcode::Bar;
  in.src = {Operand::integer(id)};
  if (count >= 0) in.src.push_back(Operand::integer(count));
  emit(in);
}

void ProgramBuilder::warp_sync(std::uint32_t mask) {
  Instr in;
  in.op = Opcode::WarpSync;
  in.src = {Operand::integer(std::int64_t(mask))};
  emit(in);
}

ProgramBuilder::Reg ProgramBuilder::shfl(ShflMode mode, Reg v, Reg lane_or_delta, std::uint32_t c, std::uint32_t mask) {
  Reg d = reg(v.type);
  Instr in;
  in.op = Opcode::Shfl;
  in.type = DType::B32;
  in.mode = std::uint8_t(mode);
  in.dst = {d.id};
  in.src = {Operand::reg(v.id), Operand::reg(lane_or_delta.id), Operand::integer(c), Operand::integer(std::int64_t(mask))};
  emit(in);
  return d;
}

ProgramBuilder::Reg ProgramBuilder::vote(VoteMode mode, Reg pred, std::uint32_t mask) {
  Reg d = reg(mode == VoteMode::Ballot ? DType::B32 : DType::Pred);
  Instr in;
  in.op = Opcode::Vote;
  in.mode = std::uint8_t(mode);
  in.type = mode == VoteMode::Ballot ? DType::B32 : DType::Pred;
  in.dst = {d.id};
  in.src = {Operand::reg(pred.id), Operand::integer(std::int64_t(mask))};
  emit(in);
  return d;
}

ProgramBuilder::Reg ProgramBuilder::pack(Reg lo, Reg hi) {
  Reg d = reg(DType::B32);
  emit(make(Opcode::Mov, DType::B32, {d.id}, {Operand::reg(lo.id), Operand::reg(hi.id)}));
  return d;
}

std::vector<ProgramBuilder::Reg> ProgramBuilder::mma(MmaShape shape, DType in_type, const std::vector<Reg>& a,
                                                     const std::vector<Reg>& b, const std::vector<Reg>& c) {
  Instr in;
  in.op = Opcode::Mma;
  in.type = DType::F32;
  in.src_type = in_type;
  in.mode = std::uint8_t(shape);
  std::vector<Reg> d;
  for (std::size_t i = 0; i < c.size(); ++i) {
    d.push_back(reg(DType::F32));
    in.dst.push_back(d.back().id);
  }
  for (const auto* group : {&a, &b, &c})
    for (Reg r : *group) in.src.push_back(Operand::reg(r.id));
  emit(in);
  return d;
}

std::vector<ProgramBuilder::Reg> ProgramBuilder::ldmatrix(int num, bool trans, Mem m, Reg row_element) {
  Instr in;
  in.op = Opcode::LdMatrix;
  in.type = DType::B16;
  in.space = Space::Shared;
  in.mode = std::uint8_t(num);
  in.trans = trans;
  in.src = {address(m, row_element, 0)};
  std::vector<Reg> d;
  for (int q = 0; q < num; ++q) {
    d.push_back(reg(DType::B32));
    in.dst.push_back(d.back().id);
  }
  emit(in);
  return d;
}

Program ProgramBuilder::finish() {
  for (auto [pc, label] : fixups_) {
    if (label_pos_[label] < 0)
      throw std::logic_error("ProgramBuilder: label " + std::to_string(label) + " used but never placed");
    p_.code[pc].target = std::uint32_t(label_pos_[label]);
  }
  if (p_.code.empty() || p_.code.back().op != Opcode::Ret) ret();
  return p_;
}

}  // namespace tileverify
