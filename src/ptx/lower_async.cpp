// Lowering Hopper's asynchronous instructions: mbarrier.*, cp.async.bulk
// (with and without .tensor), barrier.cluster and mapa (PTX ISA 8.x).
#include "lower_ops.hpp"

namespace tileverify::ptx::lowering {

void lower_async(KernelLowering&, const Instruction& pin, Instr&, const OpParts&) {
  fail(pin.loc, "'" + str(pin.opcode) + "' is not supported yet: Hopper's asynchronous operations (mbarrier, TMA, bulk copies) are being modelled");
}

}  // namespace tileverify::ptx::lowering
