// The two-step mbarrier wait of CUTLASS's pipelines, recognised in the
// program (machine_retry.cpp asks it for a wait that is no retry loop).
// Internal to the library.
#pragma once

#include "tileverify/program.hpp"

#include <cstdint>
#include <functional>

namespace tileverify::machine {

// Whether the test_wait / try_wait at pc is a probe whose result only
// decides whether the thread then spins in a retry loop on the same barrier
// and phase, as PipelineTmaAsync::consumer_try_wait + consumer_wait(token)
// compile (nvcc 13, CUTLASS 4.x):
//
//   { try_wait.parity P, [bar], ph; selp r, 1, 0, P; }   // the probe
//   setp.ne q, r, 0; @q bra JOIN;                         // the deciding branch
//   mov hint, 10000000;
//   { L: try_wait.parity P2, [bar], ph, hint; @P2 bra DONE; bra L; DONE: }
//   JOIN:
//
// On a GPU either way the thread goes on at JOIN once the phase has
// completed, with the wait's acquire; the two ways differ only in registers
// that nothing outside them reads. Then running the probe as a retry loop
// (block until the phase completes, then true) is exact. Checked here:
// - from the probe to the deciding branch: branches on other values
//   (followed both ways, each reaching the same branch or a trap, which ends
//   the thread whatever the probe returned) and integer operations, those on
//   the result computed for both of its values;
// - its false side reaches, through integer operations and branches it
//   decides, a wait at another pc with the probe's barrier and phase operands
//   (no register of them written on the way) that is a retry loop
//   (`retry_loop`), whose exit (its result true) reaches the probe's true
//   side through branches and integer operations alone;
// - every register computed from the result, or written on the false side,
//   in the loop or on its exit, is read nowhere else in the program.
bool probe_of_retry_loop(const Program& p, std::uint32_t pc, const std::function<bool(std::uint32_t)>& retry_loop);

}  // namespace tileverify::machine
