#!/usr/bin/env python3
"""Compile a Triton kernel and write its PTX and a tileverify spec skeleton.

    python3 tools/triton/spec_from_triton.py examples/triton/kernels.py vadd \
        --arg x=f32[1000]:in --arg y=f32[1000]:in --arg out=f32[1000]:out \
        --arg n=1000 --arg BLOCK=256 --grid 4 --num-warps 4 --arch 80 --out-dir /tmp/vadd

writes vadd.ptx (exactly as Triton emitted it), vadd.json (a spec whose "opt"
entry is the Triton kernel; add the reference as "ref") and vadd.meta.json
(Triton's metadata). Argument values:
  f32[4,100]:in     a tensor (dtype and shape; role in, out or inout;
                    out tensors may add =0, =-inf, ...: f32[8]:out=0)
  1000              an integer scalar
  0.5               a float scalar (concrete); f32:symbolic for a symbol
  any literal       for a tl.constexpr parameter ("ieee", True, 64, ...)
  f16[128,64]:in@desc[64,32]
                    a host-side tensor descriptor
                    (triton.tools.tensor_descriptor.TensorDescriptor) over a
                    tensor of that dtype and shape, with that block shape
                    (outermost first, as in Python)

The spec follows what Triton does to the signature, so that the kernel's
PTX parameters line up with "args": constexpr parameters are compiled in and
dropped; integer arguments equal to 1 are specialized to the constant 1 and
dropped; pointers and integers divisible by 16 get a divisibility hint (the
tensors tileverify models are 16-byte aligned); the hidden scratch pointers
Triton appends are null. A tensor descriptor argument is two params
entries: its tensor (named after the argument without "_desc": a_desc -> a)
and a "tensor_map" over it, with the box and swizzle Triton compiled the
kernel for (the compiled metadata's "tensordesc_meta", which Triton's
launcher passes to cuTensorMapEncodeTiled); in "args" it is the map's name
followed by the tensor's shape (i32) and strides (i64) as numbers, the
scalars Triton's launcher appends after each CUtensorMap parameter. The
block is left to the PTX's .reqntid
(num_warps * 32 threads), "dynamic_shared" is Triton's metadata "shared".

Needs Triton and PyTorch (for dtypes). It compiles through the JIT's own
binder (JITFunction.warmup with mock tensors), so the specialization is
Triton's, for the target given by --arch; no kernel is launched.
"""
import argparse
import ast
import importlib.util
import json
import os
import re
import sys

DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64", "s32": "int32",
          "u32": "uint32", "s64": "int64", "s8": "int8", "u8": "uint8", "s16": "int16"}


def parse_value(text):
    m = re.fullmatch(r"(\w+)\[([\d,\s]+)\]:(in|out|inout)(?:=([^@]+))?(?:@desc\[([\d,\s]+)\])?", text)
    if m:
        dtype, shape, role, init, block = m.groups()
        if dtype not in DTYPES:
            raise SystemExit(f"unknown tensor dtype '{dtype}' in '{text}' (one of {', '.join(DTYPES)})")
        t = {"kind": "tensor", "dtype": dtype, "shape": [int(s) for s in shape.split(",")], "role": role}
        if init is not None:
            t["init"] = init if init in ("-inf", "inf", "input") else ast.literal_eval(init)
        if block is not None:
            t["kind"] = "desc"
            t["block"] = [int(s) for s in block.split(",")]
        return t
    m = re.fullmatch(r"(f32|f16|bf16|f64):symbolic", text)
    if m:
        return {"kind": "symbolic", "dtype": m.group(1)}
    try:
        v = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        v = text  # a bare string constexpr, e.g. ieee
    return {"kind": "literal", "value": v}


def load_kernel(path, name):
    spec = importlib.util.spec_from_file_location("triton_kernels_module", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if not hasattr(mod, name):
        raise SystemExit(f"{path} has no kernel '{name}'")
    return getattr(mod, name)


def ptx_params(ptx, name):
    m = re.search(r"\.entry\s+" + re.escape(name) + r"\s*\((.*?)\)", ptx, re.S)
    if not m:
        raise SystemExit(f"no .entry {name} in the PTX")
    return re.findall(r"\.param\s+\.(\w+)\s+(?:\.ptr\s+\S+\s+)?(?:\.align\s+\d+\s+)?(\w+)", m.group(1))


def compile_kernel(fn, values, grid, num_warps, num_stages, arch):
    import torch
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.runtime import driver

    # The JIT binder asks the driver for the target; answer with the one asked for.
    target = GPUTarget("cuda", arch, 32)
    driver.active.get_current_target = lambda: target
    args = []
    kwargs = {}
    for p in fn.params:
        v = values[p.name]
        if v["kind"] == "tensor":
            a = getattr(torch, DTYPES[v["dtype"]])
        elif v["kind"] == "desc":
            a = make_descriptor(v)
        elif v["kind"] == "symbolic":
            a = 1.0  # floats are never specialized: any value gives the same code
        else:
            a = v["value"]
        if p.is_constexpr:
            kwargs[p.name] = a
        else:
            args.append(a)
    return fn.warmup(*args, grid=grid, num_warps=num_warps, num_stages=num_stages, **kwargs)


def make_descriptor(v):
    """A TensorDescriptor over a tensor of v's dtype and shape: the binder
    specializes on its dtype and block shape (a real tensor, on the GPU when
    there is one: the descriptor wants a data pointer)."""
    import torch
    from triton.tools.tensor_descriptor import TensorDescriptor
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    t = torch.zeros(v["shape"], dtype=getattr(torch, DTYPES[v["dtype"]]), device=dev)
    return TensorDescriptor.from_tensor(t, v["block"])


def desc_tensor_name(name):
    return name[:-len("_desc")] if name.endswith("_desc") and len(name) > 5 else name + "_tensor"


# CUtensorMapSwizzle, as Triton's tensordesc_meta gives it to cuTensorMapEncodeTiled.
SWIZZLES = {0: "none", 1: "32B", 2: "64B", 3: "128B"}


def tensordesc_meta(compiled):
    meta = getattr(compiled.metadata, "tensordesc_meta", None)
    return list(meta) if meta else []


def kept(fn, p, values):
    """Whether Triton keeps parameter p in the PTX signature."""
    v = values[p.name]
    if p.is_constexpr:
        return False
    if v["kind"] == "literal" and isinstance(v["value"], int) and not isinstance(v["value"], bool) \
            and v["value"] == 1 and not p.do_not_specialize:
        return False
    return True


def make_spec(fn, values, compiled, grid, stem, ptx):
    name = compiled.name if hasattr(compiled, "name") else fn.__name__
    params, args = [], []
    descs = tensordesc_meta(compiled)
    ndesc = 0
    for p in fn.params:
        v = values[p.name]
        if v["kind"] == "desc":
            # Triton lowers a descriptor to TMA only when it can; then its
            # metadata says how the launcher encodes the CUtensorMap.
            if ndesc >= len(descs) or descs[ndesc] is None:
                raise SystemExit(f"{p.name}: Triton compiled this tensor descriptor without TMA (no tensordesc_meta): "
                                 f"the kernel takes its base pointer, shape and strides instead")
            md = descs[ndesc]
            ndesc += 1
            tname = desc_tensor_name(p.name)
            e = {"name": tname, "dtype": v["dtype"], "shape": v["shape"], "role": v["role"]}
            if "init" in v:
                e["init"] = v["init"]
            params.append(e)
            sw = md["swizzle"]
            tm = {"tensor": tname, "box": list(reversed([int(b) for b in md["block_size"]])),
                  "swizzle": SWIZZLES.get(sw, {32: "32B", 64: "64B", 128: "128B"}.get(sw, str(sw)))}
            params.append({"name": p.name, "tensor_map": tm})
            # The launcher's scalars after the map: shape (i32), then the
            # strides in elements (i64), of the packed row-major tensor.
            strides = [1] * len(v["shape"])
            for i in range(len(v["shape"]) - 2, -1, -1):
                strides[i] = strides[i + 1] * v["shape"][i + 1]
            args.append(p.name)
            args += list(v["shape"]) + strides
            continue
        if v["kind"] == "tensor":
            e = {"name": p.name, "dtype": v["dtype"], "shape": v["shape"], "role": v["role"]}
            if "init" in v:
                e["init"] = v["init"]
            params.append(e)
        elif v["kind"] == "symbolic":
            params.append({"name": p.name, "dtype": v["dtype"], "symbolic": True})
        elif kept(fn, p, values):  # scalars Triton compiled in (constexprs, ints equal to 1) are no parameters
            val = v["value"]
            dtype = "f32" if isinstance(val, float) else "s32"
            params.append({"name": p.name, "dtype": dtype, "value": val})
        if kept(fn, p, values):
            args.append(p.name)
    declared = ptx_params(ptx, name)
    extra = len(declared) - len(args)
    if extra < 0:
        raise SystemExit(f"the PTX of {name} has {len(declared)} parameters, fewer than the {len(args)} kept "
                         f"Python arguments: Triton specialized differently than expected")
    args += [None] * extra  # Triton's hidden scratch pointers
    # Each tensor map must sit on a 128-byte .b8 parameter (a CUtensorMap).
    m = re.search(r"\.entry\s+" + re.escape(name) + r"\s*\((.*?)\)", ptx, re.S)
    raw = [d.strip() for d in m.group(1).split(",")]
    for i, a in enumerate(args):
        if isinstance(a, str) and any(q.get("name") == a and "tensor_map" in q for q in params):
            if i >= len(raw) or not re.search(r"\.b8\s+\w+\[128\]", raw[i]):
                raise SystemExit(f"{a}: PTX parameter {i} of {name} is '{raw[i] if i < len(raw) else '?'}', "
                                 f"not a 128-byte CUtensorMap: Triton passed the descriptor differently")
    opt = {"ptx": stem + ".ptx", "kernel": name, "grid": list(grid) + [1] * (3 - len(grid)), "args": args}
    shared = int(getattr(compiled.metadata, "shared", 0) or 0)
    if shared:
        opt["dynamic_shared"] = shared
    return {"description": f"Triton {fn.__name__}: fill in the reference as \"ref\"", "opt": opt, "params": params}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("module")
    ap.add_argument("kernel")
    ap.add_argument("--arg", action="append", default=[], help="NAME=VALUE, once per parameter")
    ap.add_argument("--grid", default="1", help="X[,Y[,Z]]")
    ap.add_argument("--num-warps", type=int, default=4)
    ap.add_argument("--num-stages", type=int, default=3)
    ap.add_argument("--arch", type=int, default=80, help="compute capability: 80, 90, ...")
    ap.add_argument("--out-dir", default=".")
    ap.add_argument("--stem", help="file names (default: the kernel name)")
    a = ap.parse_args(argv)
    fn = load_kernel(a.module, a.kernel)
    values = {}
    for s in a.arg:
        if "=" not in s:
            raise SystemExit(f"--arg {s}: expected NAME=VALUE")
        k, v = s.split("=", 1)
        values[k] = parse_value(v)
    missing = [p.name for p in fn.params if p.name not in values]
    if missing:
        raise SystemExit(f"no --arg for {', '.join(missing)}")
    grid = tuple(int(g) for g in a.grid.split(","))
    compiled = compile_kernel(fn, values, grid, a.num_warps, a.num_stages, a.arch)
    stem = a.stem or a.kernel
    os.makedirs(a.out_dir, exist_ok=True)
    ptx = compiled.asm["ptx"]
    with open(os.path.join(a.out_dir, stem + ".ptx"), "w") as f:
        f.write(ptx)
    spec = make_spec(fn, values, compiled, grid, stem, ptx)
    with open(os.path.join(a.out_dir, stem + ".json"), "w") as f:
        json.dump(spec, f, indent=2)
        f.write("\n")
    meta = {k: v for k, v in compiled.metadata._asdict().items() if isinstance(v, (int, str, float, bool))} \
        if hasattr(compiled.metadata, "_asdict") else {}
    if tensordesc_meta(compiled):  # how the launcher encodes each tensor map (the spec's "tensor_map" entries)
        meta["tensordesc_meta"] = tensordesc_meta(compiled)
    with open(os.path.join(a.out_dir, stem + ".meta.json"), "w") as f:
        json.dump(meta, f, indent=2, default=str)
        f.write("\n")
    print(f"{stem}: {len(ptx.splitlines())} lines of PTX, {spec['opt'].get('dynamic_shared', 0)} bytes of shared, "
          f"args {spec['opt']['args']}")
    return spec


if __name__ == "__main__":
    main()
