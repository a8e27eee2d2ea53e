#!/usr/bin/env python3
"""Writes a spec for CUTLASS example 48 from 48_params's output (stdin).

   ./48_params M N K SMS CLUSTERS | python3 48_specs.py NAME PTX EXPECT [DESCRIPTION]

EXPECT "-" leaves "expect" out (CTest then skips the spec).

The Params struct, the grid, the block and the shared-memory size come from
CUTLASS's own types and host code (48_params.cu); this only adds the tensors,
alpha and beta, and the naive reference (48_ref.cu) at the same size."""
import json
import sys



def kernel_of(ptx):
    """The name of the PTX file's one kernel (the GemmUniversal instance)."""
    for line in open(ptx):
        if line.startswith(".entry "):
            return line.split()[1].rstrip("(")
    sys.exit(ptx + ": no .entry")


def main():
    name, ptx, expect = sys.argv[1:4]
    desc = sys.argv[4] if len(sys.argv) > 4 else ""
    dump = json.load(sys.stdin)
    fields = {f["name"]: f for f in dump["struct"]["fields"]}
    m, n, k = (fields["problem_shape." + d]["value"] for d in "MNK")
    spec = {
        "description": desc,
        "ref": {"ptx": "48_ref.ptx", "kernel": "gemm_tn_ref", "block": [128], "grid": [m // 128],
                "args": [m, n, k, "A", "B", "C", "D", "alpha", "beta"]},
        "opt": {"ptx": ptx, "kernel": kernel_of(ptx), "block": dump["block"][:1], "grid": dump["grid"],
                "cluster": [4, 2, 1], "dynamic_shared": dump["shared_storage"], "args": ["params"]},
        "ctas": "all",
        "params": [
            {"name": "A", "dtype": "f32", "shape": [m, k], "role": "in"},
            {"name": "B", "dtype": "f32", "shape": [n, k], "role": "in"},
            {"name": "C", "dtype": "f32", "shape": [n, m], "role": "in"},
            {"name": "D", "dtype": "f32", "shape": [n, m], "role": "out"},
            {"name": "alpha", "dtype": "f32", "value": 1.5},
            {"name": "beta", "dtype": "f32", "value": 0.5},
            {"name": "params", "struct": dump["struct"]},
        ],
    }
    if expect != "-":  # "-": a spec the tests do not run (examples_test.sh runs those with "expect")
        spec["expect"] = expect
    with open(name, "w") as f:
        json.dump(spec, f, indent=1)
        f.write("\n")


main()
