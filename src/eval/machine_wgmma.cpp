// Machine<D>: wgmma.* (warpgroup matrix multiply-accumulate, sm_90) and
// stmatrix.
#include "machine.hpp"

namespace tileverify::machine {

template <class D>
void Machine<D>::wgmma(const Instr& in, const std::vector<std::uint32_t>& group) {
  fail(DiagKind::Unsupported, group.front(), std::string(opcode_name(in.op)) + " is not modelled yet");
}

template <class D>
void Machine<D>::stmatrix(const Instr& in, const std::vector<std::uint32_t>& group) {
  fail(DiagKind::Unsupported, group.front(), std::string(opcode_name(in.op)) + " is not modelled yet");
}

template class Machine<SymbolicDomain>;
template class Machine<ConcreteDomain>;
template class Machine<PayloadDomain>;

}  // namespace tileverify::machine
