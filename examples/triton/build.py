#!/usr/bin/env python3
"""Builds the Triton corpus: compiles every kernel of kernels.py with Triton
for sm_80 (sm80/) and sm_90 (sm90/) through tools/triton/spec_from_triton.py
and completes each spec with its nvcc reference (refs.cu -> refs.ptx) and the
verdict expected.

    python3 examples/triton/build.py            # from the repository root
    python3 examples/triton/build.py matmul_tma # only the kernels named

CORPUS_SM90 (the matmuls at tile shapes where Triton emits wgmma, and TMA
through host-side tensor descriptors) is built for sm_90 only. Every spec
of both folders carries its expected verdict (CTest example.triton and
example.triton_sm90).

The PTX is checked in as Triton wrote it; only this script writes it,
except sm90/matmul_grouped*.ptx (kernels.py's matmul_grouped, Triton's
tutorial matmul at 128 x 256 x 64, 8 warps, 3 stages; DROP 0 and 1), whose
specs are the hand-written size-parametric sm90/matmul_grouped*.sizes.json:
it was compiled on an H200 with spec_from_triton.py at M = N = K = 4096
(strides K, N, N; --grid 512 --num-warps 8 --num-stages 3 --arch 90), and
at 80 x 256 x 96, which gave the same PTX (every size and stride a multiple
of 16: the same specialization).
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "triton"))
import spec_from_triton as sft  # noqa: E402

KERNELS = os.path.join(HERE, "kernels.py")

# Sizes are small on purpose: the whole grid of both kernels runs and every
# output is decided ("ctas": "all"), and boundary masks are exercised.
N = 1000                  # vector add: the last CTA is partly masked
SM_ROWS, SM_COLS = 4, 100  # softmax, one row per program, BLOCK 128
LP_ROWS, LP_COLS = 5, 100  # looping softmax: 2 programs, column blocks of 32
LN_ROWS, LN_COLS = 3, 50   # layernorm, BLOCK 64
MM_M, MM_N, MM_K = 32, 32, 48  # matmul: K is not a multiple of 32
SEQ, HEAD = 64, 16        # attention


MM90 = 128               # sm_90 matmuls: M = N = K = 128, a 2 x 2 grid of 64 x 64 tiles


# The values of the float scalars in the .concrete.json variants.
CONCRETE = {"eps": 1e-5, "sm_scale": 0.25}


def vadd(kernel, expect):
    return dict(kernel=kernel, grid=(4,), num_warps=4,
                args={"x_ptr": f"f32[{N}]:in", "y_ptr": f"f32[{N}]:in", "out_ptr": f"f32[{N}]:out", "n": str(N),
                      "BLOCK": "256"},
                ref=dict(kernel="vadd_ref", block=[256, 1, 1], grid=[4, 1, 1], args=["x_ptr", "y_ptr", "out_ptr", "n"]),
                expect=expect)


def softmax_row(expect):
    return dict(kernel="softmax_row", grid=(SM_ROWS,), num_warps=4,
                args={"x_ptr": f"f32[{SM_ROWS},{SM_COLS}]:in", "y_ptr": f"f32[{SM_ROWS},{SM_COLS}]:out",
                      "x_row_stride": str(SM_COLS), "y_row_stride": str(SM_COLS), "n_cols": str(SM_COLS),
                      "BLOCK": "128"},
                ref=dict(kernel="softmax_ref", block=[SM_ROWS, 1, 1], grid=[1, 1, 1],
                         args=["x_ptr", "y_ptr", SM_ROWS, "n_cols"]),
                expect=expect)


def softmax_loop(kernel, expect):
    return dict(kernel=kernel, grid=(2,), num_warps=1,
                args={"x_ptr": f"f32[{LP_ROWS},{LP_COLS}]:in", "y_ptr": f"f32[{LP_ROWS},{LP_COLS}]:out",
                      "n_rows": str(LP_ROWS), "n_cols": str(LP_COLS), "BLOCK": "32"},
                ref=dict(kernel="softmax_ref", block=[LP_ROWS, 1, 1], grid=[1, 1, 1],
                         args=["x_ptr", "y_ptr", "n_rows", "n_cols"]),
                expect=expect)


def layernorm(kernel, expect):
    return dict(kernel=kernel, grid=(LN_ROWS,), num_warps=2,
                args={"x_ptr": f"f32[{LN_ROWS},{LN_COLS}]:in", "w_ptr": f"f32[{LN_COLS}]:in",
                      "b_ptr": f"f32[{LN_COLS}]:in", "y_ptr": f"f32[{LN_ROWS},{LN_COLS}]:out",
                      "n_cols": str(LN_COLS), "eps": "f32:symbolic", "BLOCK": "64"},
                ref=dict(kernel="layernorm_ref", block=[LN_ROWS, 1, 1], grid=[1, 1, 1],
                         args=["x_ptr", "w_ptr", "b_ptr", "y_ptr", LN_ROWS, "n_cols", "eps"]),
                expect=expect)


def layernorm_wide(cols, block, warps, kernel="layernorm", expect="equivalent"):
    """Layer norm at the widths of Triton's tutorial (BLOCK the next power of
    two, num_warps = min(max(BLOCK // 256, 1), 8)): 300 columns in a masked
    block of 512, and 4096 columns unmasked."""
    rows = 2
    return dict(kernel=kernel, grid=(rows,), num_warps=warps,
                args={"x_ptr": f"f32[{rows},{cols}]:in", "w_ptr": f"f32[{cols}]:in",
                      "b_ptr": f"f32[{cols}]:in", "y_ptr": f"f32[{rows},{cols}]:out",
                      "n_cols": str(cols), "eps": "f32:symbolic", "BLOCK": str(block)},
                ref=dict(kernel="layernorm_ref", block=[rows, 1, 1], grid=[1, 1, 1],
                         args=["x_ptr", "w_ptr", "b_ptr", "y_ptr", rows, "n_cols", "eps"]),
                expect=expect)


def matmul(dtype, precision, bm, bn, bk, warps, dropped, expect):
    t = "f16" if dtype == "f16" else "f32"
    return dict(kernel="matmul", grid=((MM_M // bm) * (MM_N // bn),), num_warps=warps,
                args={"a_ptr": f"{t}[{MM_M},{MM_K}]:in", "b_ptr": f"{t}[{MM_K},{MM_N}]:in",
                      "c_ptr": f"f32[{MM_M},{MM_N}]:out", "M": str(MM_M), "N": str(MM_N), "K": str(MM_K),
                      "stride_am": str(MM_K), "stride_ak": "1", "stride_bk": str(MM_N), "stride_bn": "1",
                      "stride_cm": str(MM_N), "stride_cn": "1", "BLOCK_M": str(bm), "BLOCK_N": str(bn),
                      "BLOCK_K": str(bk), "PRECISION": precision, "K_BLOCKS_DROPPED": str(dropped)},
                ref=dict(kernel="matmul_ref_" + t, block=[16, 16, 1], grid=[MM_N // 16, MM_M // 16, 1],
                         args=["a_ptr", "b_ptr", "c_ptr", "M", "N", "K"]),
                expect=expect)


def attention(block_m, rescale, expect):
    return dict(kernel="attention", grid=(SEQ // block_m,), num_warps=4,
                args={"q_ptr": f"f16[{SEQ},{HEAD}]:in", "k_ptr": f"f16[{SEQ},{HEAD}]:in",
                      "v_ptr": f"f16[{SEQ},{HEAD}]:in", "o_ptr": f"f32[{SEQ},{HEAD}]:out",
                      "sm_scale": "f32:symbolic", "seq_len": str(SEQ), "HEAD": str(HEAD), "BLOCK_M": str(block_m),
                      "BLOCK_N": "32", "RESCALE": str(rescale)},
                ref=dict(kernel="attention_ref", block=[SEQ, 1, 1], grid=[1, 1, 1],
                         args=["q_ptr", "k_ptr", "v_ptr", "o_ptr", "sm_scale", "seq_len", HEAD]),
                expect=expect)


# The LSE output is m * log2(e) + log2(l) with l a sum of exponentials of
# scores minus the running max m; the reference takes the max of the scaled
# scores, Triton scales the max: they agree through log(e^c x) = c + log(x)
# (docs/decide.md). The wrong reference twin stores the LSE in base e.
def attention_lse(kernel, rescale, expect):
    """Attention forward with its base-2 log-sum-exp output (Triton's
    tutorial's M), against attention_lse_ref. The _tma kernel takes Q, K, V
    as host-side tensor descriptors (sm_90 only)."""
    if kernel == "attention_tma_lse":
        io = {"q_desc": f"f16[{SEQ},{HEAD}]:in@desc[64,{HEAD}]", "k_desc": f"f16[{SEQ},{HEAD}]:in@desc[32,{HEAD}]",
              "v_desc": f"f16[{SEQ},{HEAD}]:in@desc[32,{HEAD}]"}
        names = ["q", "k", "v"]
    else:
        io = {"q_ptr": f"f16[{SEQ},{HEAD}]:in", "k_ptr": f"f16[{SEQ},{HEAD}]:in", "v_ptr": f"f16[{SEQ},{HEAD}]:in"}
        names = ["q_ptr", "k_ptr", "v_ptr"]
    io.update({"o_ptr": f"f32[{SEQ},{HEAD}]:out", "lse_ptr": f"f32[{SEQ}]:out", "sm_scale": "f32:symbolic",
               "seq_len": str(SEQ), "HEAD": str(HEAD), "BLOCK_M": "64", "BLOCK_N": "32", "RESCALE": str(rescale)})
    return dict(kernel=kernel, grid=(SEQ // 64,), num_warps=4, args=io,
                ref=dict(kernel="attention_lse_ref", block=[SEQ, 1, 1], grid=[1, 1, 1],
                         args=names + ["o_ptr", "lse_ptr", "sm_scale", "seq_len", HEAD]),
                expect=expect,
                **({"wrong_refs": {"base_e": "attention_lse_ref_base_e"}} if expect == "equivalent" else {}))


def matmul_sm90(kernel, dropped=0, expect="equivalent"):
    """The sm_90 matmuls (wgmma; and TMA through tensor descriptors), f16 in,
    f32 out, against matmul_ref_f16. Built for sm_90 only, with num_stages 3
    (the K loop runs 4 times over 3 buffers, so the buffers wrap around)."""
    t = f"[{MM90},{MM90}]"
    if kernel == "matmul_wgmma":
        args = {"a_ptr": f"f16{t}:in", "b_ptr": f"f16{t}:in", "c_ptr": f"f32{t}:out", "K": str(MM90),
                "stride_am": str(MM90), "stride_bk": str(MM90), "stride_cm": str(MM90)}
        names = ["a_ptr", "b_ptr", "c_ptr"]
    else:  # host-side tensor descriptors: block shapes as in Python, outermost first
        args = {"a_desc": f"f16{t}:in@desc[64,32]", "b_desc": f"f16{t}:in@desc[32,64]",
                "c_desc": f"f32{t}:out@desc[64,64]", "K": str(MM90)}
        names = ["a", "b", "c"]  # the descriptors' tensors (spec_from_triton names them so)
    args.update({"BLOCK_M": "64", "BLOCK_N": "64", "BLOCK_K": "32", "K_BLOCKS_DROPPED": str(dropped)})
    return dict(kernel=kernel, grid=(MM90 // 64, MM90 // 64), num_warps=4, num_stages=3, args=args,
                ref=dict(kernel="matmul_ref_f16", block=[16, 16, 1], grid=[MM90 // 16, MM90 // 16, 1],
                         args=names + [MM90, MM90, "K"]),
                expect=expect)


# Built for sm_90 only, with "expect" (the Hopper forms: wgmma, TMA).
CORPUS_SM90 = {
    "matmul_wgmma": matmul_sm90("matmul_wgmma"),
    "matmul_tma": matmul_sm90("matmul_tma"),
    "matmul_wgmma_dropk": matmul_sm90("matmul_wgmma", 1, "not_equivalent"),
    "matmul_tma_dropk": matmul_sm90("matmul_tma", 1, "not_equivalent"),
    "attention_tma_lse": attention_lse("attention_tma_lse", True, "equivalent"),
    "attention_tma_lse_norescale": attention_lse("attention_tma_lse", False, "not_equivalent"),
}


CORPUS = {
    "vadd": vadd("vadd", "equivalent"),
    "vadd_offbyone": vadd("vadd_offbyone", "not_equivalent"),
    "softmax_row": softmax_row("equivalent"),
    "softmax_loop": softmax_loop("softmax_loop", "equivalent"),
    "softmax_loop_norescale": softmax_loop("softmax_loop_norescale", "not_equivalent"),
    "layernorm": layernorm("layernorm", "equivalent"),
    "layernorm_nomask": layernorm("layernorm_nomask", "not_equivalent"),
    "matmul_f16_32x32x32": matmul("f16", "ieee", 32, 32, 32, 4, 0, "equivalent"),
    "matmul_f16_16x32x16": matmul("f16", "ieee", 16, 32, 16, 2, 0, "equivalent"),
    "matmul_f32_32x32x32": matmul("f32", "ieee", 32, 32, 32, 4, 0, "equivalent"),
    "matmul_f32_16x32x16": matmul("f32", "ieee", 16, 32, 16, 2, 0, "equivalent"),
    "matmul_tf32_32x32x32": matmul("f32", "tf32", 32, 32, 32, 4, 0, "equivalent"),
    "matmul_tf32_16x32x16": matmul("f32", "tf32", 16, 32, 16, 2, 0, "equivalent"),
    "matmul_f16_dropk": matmul("f16", "ieee", 32, 32, 16, 4, 1, "not_equivalent"),
    "attention_m32": attention(32, True, "equivalent"),
    "attention_m64": attention(64, True, "equivalent"),
    "attention_m64_norescale": attention(64, False, "not_equivalent"),
    "attention_lse": attention_lse("attention_lse", True, "equivalent"),
    "layernorm_300": layernorm_wide(300, 512, 2),
    "layernorm_300_nomask": layernorm_wide(300, 512, 2, "layernorm_nomask", "not_equivalent"),
    "layernorm_4096": layernorm_wide(4096, 4096, 8),
}


def compact_json(obj):
    """JSON with lists of numbers, strings and nulls on one line."""
    text = json.dumps(obj, indent=2)
    return re.sub(r"\[\s*([^\[\]{}]*?)\s*\]", lambda m: "[" + re.sub(r",\s+", ", ", m.group(1)) + "]", text) + "\n"


def build(arch, out_dir, only=None, corpus=None):
    os.makedirs(out_dir, exist_ok=True)
    for stem, c in (corpus or CORPUS).items():
        if only and stem not in only:
            continue
        argv = [KERNELS, c["kernel"], "--grid", ",".join(map(str, c["grid"])), "--num-warps", str(c["num_warps"]),
                "--arch", str(arch), "--out-dir", out_dir, "--stem", stem]
        if "num_stages" in c:
            argv += ["--num-stages", str(c["num_stages"])]
        for k, v in c["args"].items():
            argv += ["--arg", f"{k}={v}"]
        try:
            spec = sft.main(argv)
        except BaseException as e:  # record what failed, go on with the others
            print(f"{stem}: FAILED: {e}", file=sys.stderr)
            continue
        ref = c["ref"]
        spec["description"] = (f"Triton {c['kernel']} ({stem}, sm_{arch}) against the naive nvcc reference "
                               f"{ref['kernel']} (refs.cu); PTX as Triton emitted it, from build.py")
        spec["ref"] = {"ptx": "../refs.ptx", "kernel": ref["kernel"], "block": ref["block"], "grid": ref["grid"],
                       "args": ref["args"]}
        spec["grid"] = spec["opt"]["grid"]
        spec["ctas"] = "all"
        keys = ["description", "ref", "opt", "grid", "ctas", "params"]
        # "now": the verdict tileverify gives today where it falls short of
        # the expected one (docs/triton.md says why); CTest checks that one.
        spec["expect"] = c.get("now", c["expect"])
        keys.append("expect")
        ordered = {k: spec[k] for k in keys}
        with open(os.path.join(out_dir, stem + ".json"), "w") as f:
            f.write(compact_json(ordered))
        # The same kernel against a wrong reference (a twin of the right one
        # with one bug): not_equivalent.
        for suffix, wrong in c.get("wrong_refs", {}).items():
            twin = json.loads(json.dumps(ordered))
            twin["ref"]["kernel"] = wrong
            twin["description"] = twin["description"].replace(f"reference {ref['kernel']} ", f"reference {wrong} ")
            twin["expect"] = "not_equivalent"
            with open(os.path.join(out_dir, f"{stem}_{suffix}.json"), "w") as f:
                f.write(compact_json(twin))
        # The same check without symbolic scalars: each float scalar a
        # concrete value (the proof then covers that value only).
        symbolic = [p for p in ordered["params"] if p.get("symbolic")]
        if symbolic:
            concrete = json.loads(json.dumps(ordered))
            for p in concrete["params"]:
                if p.get("symbolic"):
                    del p["symbolic"]
                    p["value"] = CONCRETE[p["name"]]
            concrete["description"] += "; scalars concrete"
            with open(os.path.join(out_dir, stem + ".concrete.json"), "w") as f:
                f.write(compact_json(concrete))


if __name__ == "__main__":
    only = sys.argv[1:] or None
    build(80, os.path.join(HERE, "sm80"), only)
    build(90, os.path.join(HERE, "sm90"), only)
    build(90, os.path.join(HERE, "sm90"), only, CORPUS_SM90)
