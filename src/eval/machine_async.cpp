// Machine<D>: Hopper's asynchronous world: mbarrier objects, TMA and bulk
// copies, cluster barriers, proxy fences.
#include "machine.hpp"

namespace tileverify::machine {

template <class D>
bool Machine<D>::async_step(std::uint32_t t, const Instr& in) {
  fail(DiagKind::Unsupported, t, std::string(opcode_name(in.op)) + " is not modelled yet");
  return false;
}

template class Machine<SymbolicDomain>;
template class Machine<ConcreteDomain>;
template class Machine<PayloadDomain>;

}  // namespace tileverify::machine
