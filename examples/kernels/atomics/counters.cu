// atomicExch, atomicInc and atomicDec (PTX atom.exch, atom.inc, atom.dec)
// on shared counters and flags, against serial references. Two of the same
// operation commute when they have the same operand (inc and dec wrap at
// it; an exchange stores it), so these never race; with different operands
// they do (docs/evaluator.md, "atom and red"). PTX: tools/regen_ptx.sh.

#define T 32  // threads of the atomic kernels

// y[0]: a ring counter bumped by every thread, wrapping at 10 (atomicInc);
// y[1]: one counted down from 0 by every thread, wrapping to 9 (atomicDec);
// y[2]: a flag every third thread raises (atomicExch of 1);
// y[3]: the largest tid through atomicMax, a native atomic beside them.
extern "C" __global__ void counters(float* y) {
  __shared__ unsigned ring, down, flag;
  __shared__ int top;
  int t = threadIdx.x;
  if (t == 0) { ring = 0; down = 0; flag = 0; top = -1; }
  __syncthreads();
  atomicInc(&ring, 9u);
  atomicDec(&down, 9u);
  if (t % 3 == 0) atomicExch(&flag, 1u);
  atomicMax(&top, t);
  __syncthreads();
  if (t == 0) {
    y[0] = (float)ring;
    y[1] = (float)down;
    y[2] = (float)flag;
    y[3] = (float)top;
  }
}

// The same in one thread, with the PTX ISA's definitions of inc and dec:
// inc: (old >= b) ? 0 : old + 1; dec: ((old == 0) || (old > b)) ? b : old - 1.
extern "C" __global__ void counters_ref(float* y) {
  if (threadIdx.x != 0) return;
  volatile unsigned n = T;  // keeps nvcc from folding the loop away
  unsigned ring = 0, down = 0, flag = 0;
  int top = -1;
  for (unsigned i = 0; i < n; ++i) {
    ring = ring >= 9u ? 0u : ring + 1;
    down = (down == 0 || down > 9u) ? 9u : down - 1;
    if (i % 3 == 0) flag = 1;
    top = top > (int)i ? top : (int)i;
  }
  y[0] = (float)ring;
  y[1] = (float)down;
  y[2] = (float)flag;
  y[3] = (float)top;
}

// Bug: each thread exchanges its own index into one slot; the last
// exchange wins, and which one is last depends on the schedule.
extern "C" __global__ void exch_last_wins(float* y) {
  __shared__ unsigned slot;
  int t = threadIdx.x;
  if (t == 0) slot = 0;
  __syncthreads();
  atomicExch(&slot, (unsigned)t);
  __syncthreads();
  if (t == 0) {
    y[0] = (float)slot;
    y[1] = 0.0f;
    y[2] = 0.0f;
    y[3] = 0.0f;
  }
}

// Bug: the ring counter wraps at 10 in even threads and at 8 in odd ones;
// increments with different bounds do not commute.
extern "C" __global__ void inc_two_bounds(float* y) {
  __shared__ unsigned ring;
  int t = threadIdx.x;
  if (t == 0) ring = 0;
  __syncthreads();
  atomicInc(&ring, t % 2 ? 7u : 9u);
  __syncthreads();
  if (t == 0) {
    y[0] = (float)ring;
    y[1] = 0.0f;
    y[2] = 0.0f;
    y[3] = 0.0f;
  }
}

// Bug: every thread takes a ticket with atomicInc and writes to the slot it
// got: which thread writes which slot depends on the schedule.
extern "C" __global__ void inc_ticket(float* y) {
  __shared__ unsigned next;
  int t = threadIdx.x;
  if (t == 0) next = 0;
  __syncthreads();
  unsigned k = atomicInc(&next, 3u);
  if (t < 4) y[k] = (float)t;
}
