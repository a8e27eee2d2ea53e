// Lowering wgmma.* and stmatrix (PTX ISA 8.x, "Warpgroup MMA Instructions").
#include "lower_ops.hpp"

namespace tileverify::ptx::lowering {

void lower_wgmma(KernelLowering&, const Instruction& pin, Instr&, const OpParts&) {
  fail(pin.loc, "'" + str(pin.opcode) + "' is not supported yet: wgmma and stmatrix are being modelled");
}

}  // namespace tileverify::ptx::lowering
