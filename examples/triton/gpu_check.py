#!/usr/bin/env python3
"""Runs every kernel of the corpus on a GPU (Triton's JIT, the GPU's own
architecture) against PyTorch and prints whether it matches: the expected
verdicts in build.py are checked against real runs, not only reasoned out.

    python3 examples/triton/gpu_check.py      # needs a CUDA GPU, Triton and PyTorch
    python3 examples/triton/gpu_check.py matmul_wgmma matmul_tma   # only these

The sm_90 matmuls (build.CORPUS_SM90) run on a GPU of compute capability 9
or more only; their tensor-descriptor arguments are TensorDescriptors over
the tensors (triton.tools.tensor_descriptor).
"""
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import build  # noqa: E402
import kernels  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "triton"))
import spec_from_triton as sft  # noqa: E402


def make_args(c):
    vals, tensors = [], {}
    fn = getattr(kernels, c["kernel"])
    kw = {}
    for p in fn.params:
        v = sft.parse_value(c["args"][p.name])
        if v["kind"] in ("tensor", "desc"):
            dt = getattr(torch, sft.DTYPES[v["dtype"]])
            t = torch.randn(v["shape"], device="cuda").to(dt)
            if v["role"] == "out":
                t.fill_(float("nan"))
            tensors[p.name] = t
            a = t
            if v["kind"] == "desc":
                from triton.tools.tensor_descriptor import TensorDescriptor
                a = TensorDescriptor.from_tensor(t, v["block"])
        elif v["kind"] == "symbolic":
            a = 0.3
            tensors[p.name] = a
        else:
            a = v["value"]
            tensors[p.name] = a
        if p.is_constexpr:
            kw[p.name] = a
        else:
            vals.append(a)
    return fn, vals, kw, tensors


def reference(stem, t):
    if stem.startswith("vadd"):
        return "out_ptr", t["x_ptr"] + t["y_ptr"]
    if stem.startswith("softmax"):
        return "y_ptr", torch.softmax(t["x_ptr"], dim=1)
    if stem.startswith("layernorm"):
        x = t["x_ptr"]
        return "y_ptr", torch.nn.functional.layer_norm(x, (x.shape[1],), t["w_ptr"], t["b_ptr"], eps=t["eps"])
    if stem.startswith("matmul_tma"):
        return "c_desc", t["a_desc"].float() @ t["b_desc"].float()
    if stem.startswith("matmul"):
        return "c_ptr", t["a_ptr"].float() @ t["b_ptr"].float()
    if stem.startswith("attention_lse") or stem.startswith("attention_tma_lse"):
        # O and the base-2 log-sum-exp of each row (Triton's tutorial's M).
        q, k, v = (t.get(n + "_ptr", t.get(n + "_desc")).float() for n in ("q", "k", "v"))
        s = q @ k.T * t["sm_scale"]
        return [("o_ptr", torch.softmax(s, dim=1) @ v), ("lse_ptr", torch.logsumexp(s, dim=1) / math.log(2))]
    if stem.startswith("attention"):
        q, k, v = (t[n].float() for n in ("q_ptr", "k_ptr", "v_ptr"))
        return "o_ptr", torch.softmax(q @ k.T * t["sm_scale"], dim=1) @ v
    raise KeyError(stem)


bad = 0
corpus = dict(build.CORPUS)
if torch.cuda.get_device_capability()[0] >= 9:
    corpus.update(build.CORPUS_SM90)
only = sys.argv[1:]
for stem, c in corpus.items():
    if only and stem not in only:
        continue
    torch.manual_seed(0)
    fn, vals, kw, t = make_args(c)
    if "num_stages" in c:
        kw["num_stages"] = c["num_stages"]
    fn[c["grid"]](*vals, num_warps=c["num_warps"], **kw)
    torch.cuda.synchronize()
    checks = reference(stem, t)
    if not isinstance(checks, list):
        checks = [checks]
    tol = 2e-2 if ("f16" in stem or "tf32" in stem or "attention" in stem or stem in build.CORPUS_SM90) else 1e-4
    ok, err = True, 0.0
    for out, want in checks:
        got = t[out]
        ok = ok and torch.allclose(got.float(), want.float(), atol=tol, rtol=tol) and not torch.isnan(got).any()
        err = max(err, (got.float() - want.float()).abs().nan_to_num(float("inf")).max().item())
    matches = "matches" if ok else "DIFFERS"
    agree = ok == (c["expect"] == "equivalent")
    bad += not agree
    print(f"{stem:28s} {matches:8s} max|err| {err:.3g}   expected {c['expect']}{'' if agree else '   <-- MISMATCH'}")
print("all as expected" if not bad else f"{bad} not as expected")
