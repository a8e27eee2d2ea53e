#!/usr/bin/env python3
"""Runs the example spec pairs on a real GPU and compares ref and opt numerically.

This is a smoke test of the example kernels themselves, not of tileverify: it
loads the PTX named by each spec through the CUDA driver API (ctypes, no other
dependencies), fills the "in"/"inout" tensors with the same random values for
both kernels, launches the whole grid, and compares the "out"/"inout" tensors.

    python3 examples/kernels/run_specs.py [SPEC.json ...]   (default: every spec)

A numeric match says nothing about races (the warp-synchronous reductions
usually "work" on hardware); a mismatch on an "equivalent" pair is a bug in
the example. Specs whose expected verdict is out_of_bounds or deadlock are run
in a child process with a timeout, since they may fault or hang the context.
Exit status 1 if an "equivalent" pair mismatches or a "not_equivalent" pair
matches (its bug must show on random inputs).
"""
import ctypes
import glob
import json
import math
import os
import random
import struct
import subprocess
import sys

ISOLATE = {"out_of_bounds", "deadlock"}
DTYPES = {"f32": ("f", 4), "f16": ("e", 2), "f64": ("d", 8), "s32": ("i", 4), "u32": ("I", 4)}


class Cuda:
    def __init__(self):
        self.lib = None
        for name in ("libcuda.so.1", "libcuda.so"):
            try:
                self.lib = ctypes.CDLL(name)
                break
            except OSError:
                pass
        if self.lib is None:
            raise RuntimeError("libcuda not found")
        self.check(self.lib.cuInit(0), "cuInit")
        dev = ctypes.c_int()
        self.check(self.lib.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
        self.ctx = ctypes.c_void_p()
        self.check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(self.ctx), dev), "cuDevicePrimaryCtxRetain")
        self.check(self.lib.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")
        self.modules = {}

    def check(self, rc, what):
        if rc != 0:
            s = ctypes.c_char_p()
            self.lib.cuGetErrorString(rc, ctypes.byref(s))
            raise RuntimeError(f"{what}: CUDA error {rc} ({s.value.decode() if s.value else '?'})")

    def function(self, ptx_path, kernel):
        if ptx_path not in self.modules:
            data = open(ptx_path, "rb").read() + b"\0"
            mod = ctypes.c_void_p()
            rc = self.lib.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(data))
            if rc != 0:  # e.g. a driver older than the PTX ISA: let the toolkit's ptxas build a cubin
                data = self.ptxas(ptx_path)
                rc = self.lib.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(data))
            self.check(rc, f"load {ptx_path}")
            self.modules[ptx_path] = mod
        fn = ctypes.c_void_p()
        self.check(self.lib.cuModuleGetFunction(ctypes.byref(fn), self.modules[ptx_path], kernel.encode()),
                   f"get {kernel}")
        return fn

    @staticmethod
    def ptxas(ptx_path):
        ptxas = os.path.join(os.path.dirname(os.environ.get("NVCC", "/usr/local/cuda/bin/nvcc")), "ptxas")
        arch = os.environ.get("ARCH", "sm_90")
        out = "/tmp/run_specs_%d.cubin" % os.getpid()
        subprocess.run([ptxas, "-arch=" + arch, ptx_path, "-o", out], check=True)
        return open(out, "rb").read()

    def alloc(self, nbytes):
        p = ctypes.c_uint64()
        self.check(self.lib.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(nbytes)), "cuMemAlloc")
        return p.value

    def free(self, p):
        self.lib.cuMemFree_v2(ctypes.c_uint64(p))

    def upload(self, dptr, data):
        self.check(self.lib.cuMemcpyHtoD_v2(ctypes.c_uint64(dptr), data, ctypes.c_size_t(len(data))), "HtoD")

    def download(self, dptr, nbytes):
        buf = ctypes.create_string_buffer(nbytes)
        self.check(self.lib.cuMemcpyDtoH_v2(buf, ctypes.c_uint64(dptr), ctypes.c_size_t(nbytes)), "DtoH")
        return buf.raw

    def launch(self, fn, grid, block, args):
        holders = []
        for kind, v in args:
            holders.append(ctypes.c_uint64(v) if kind == "ptr" else v)
        arr = (ctypes.c_void_p * len(holders))(*[ctypes.cast(ctypes.byref(h), ctypes.c_void_p) for h in holders])
        self.check(self.lib.cuLaunchKernel(fn, *[ctypes.c_uint(v) for v in grid], *[ctypes.c_uint(v) for v in block],
                                           ctypes.c_uint(0), None, arr, None), "cuLaunchKernel")
        self.check(self.lib.cuCtxSynchronize(), "cuCtxSynchronize")


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def run_kernel(cuda, spec_dir, spec, side, inputs):
    k = spec[side]
    fn = cuda.function(os.path.join(spec_dir, k["ptx"]), k["kernel"])
    args, bufs, outs = [], [], {}
    try:
        for p in spec["params"]:
            fmt, size = DTYPES[p["dtype"]]
            if "value" in p:
                args.append(("val", ctypes.c_float(p["value"]) if fmt in "fd" else ctypes.c_int32(p["value"])))
                continue
            n = numel(p["shape"])
            d = cuda.alloc(n * size)
            bufs.append(d)
            if p["role"] in ("in", "inout"):
                cuda.upload(d, inputs[p["name"]])
            else:
                cuda.upload(d, b"\xff" * (n * size))  # NaN pattern: unwritten outputs show up
            args.append(("ptr", d))
            if p["role"] in ("out", "inout"):
                outs[p["name"]] = (d, n, fmt, size)
        cuda.launch(fn, spec["grid"] + [1] * (3 - len(spec["grid"])), k["block"] + [1] * (3 - len(k["block"])), args)
        return {name: struct.unpack(f"<{n}{fmt}", cuda.download(d, n * size)) for name, (d, n, fmt, size) in outs.items()}
    finally:
        for d in bufs:
            cuda.free(d)


def make_inputs(spec, seed):
    rng = random.Random(seed)
    inputs = {}
    for p in spec["params"]:
        if "value" in p or p["role"] == "out":
            continue
        fmt, _ = DTYPES[p["dtype"]]
        n = numel(p["shape"])
        vals = [rng.uniform(-1.0, 1.0) for _ in range(n)] if fmt in "fde" else [rng.randint(-8, 8) for _ in range(n)]
        inputs[p["name"]] = struct.pack(f"<{n}{fmt}", *vals)
    return inputs


def compare(spec, a, b):
    reduced = any(p["dtype"] == "f16" for p in spec["params"]) or "_tc" in spec["opt"]["kernel"]
    # f32 pairs agree to ~1e-7 on the GPU; tf32/f16 tensor-core pairs to ~3e-5.
    tol = 2e-2 if reduced else 1e-4
    worst = 0.0
    for name in a:
        for x, y in zip(a[name], b[name]):
            if math.isnan(x) or math.isnan(y):
                return False, float("nan")
            worst = max(worst, abs(x - y) / (1.0 + abs(x)))
    return worst <= tol, worst


def check_one(cuda, path):
    spec = json.load(open(path))
    d = os.path.dirname(path)
    inputs = make_inputs(spec, 12345)
    a = run_kernel(cuda, d, spec, "ref", inputs)
    b = run_kernel(cuda, d, spec, "opt", inputs)
    return compare(spec, a, b)


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    if len(argv) >= 2 and argv[0] == "--one":
        try:
            ok, worst = check_one(Cuda(), argv[1])
            print(f"{'match' if ok else 'differ'} {worst:.3g}")
        except RuntimeError as e:
            print(f"error {e}")
        return 0
    paths = argv or sorted(glob.glob(os.path.join(here, "*", "*.json")))
    cuda = Cuda()
    failures = 0
    for path in paths:
        spec = json.load(open(path))
        expect = spec.get("expect", "?")
        rel = os.path.relpath(path, here)
        if expect in ISOLATE:
            try:
                r = subprocess.run([sys.executable, __file__, "--one", path], capture_output=True, text=True,
                                   timeout=60)
                outcome = (r.stdout.strip() or r.stderr.strip().splitlines()[-1:] or ["no output"])
                outcome = outcome if isinstance(outcome, str) else outcome[0]
            except subprocess.TimeoutExpired:
                outcome = "timeout (hung)"
            print(f"info  {rel:45s} expect={expect:15s} gpu: {outcome}")
            continue
        try:
            ok, worst = check_one(cuda, path)
        except RuntimeError as e:
            print(f"ERROR {rel:45s} expect={expect:15s} {e}")
            failures += 1
            continue
        if expect == "equivalent":
            status = "ok   " if ok else "FAIL "
            failures += not ok
        elif expect == "not_equivalent":
            status = "ok   " if not ok else "FAIL "
            failures += ok
        else:
            status = "info "
        print(f"{status} {rel:45s} expect={expect:15s} gpu: {'match' if ok else 'differ'} (max rel err {worst:.3g})")
    print("FAILED" if failures else "ALL OK", f"({failures} failures)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
