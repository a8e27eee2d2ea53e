"""Triton kernels of the tileverify Triton corpus (examples/triton).

Written for this corpus: each family has a correct kernel and a broken
variant with one of the bugs tile kernels ship with (an off-by-one mask, a
dropped K block, a missing rescale). build.py compiles them with Triton
(sm_80 and sm_90 PTX) through tools/triton/spec_from_triton.py.
"""
import triton
import triton.language as tl


# ---------------------------------------------------------------- vector add
@triton.jit
def vadd(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def vadd_offbyone(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # Broken: the mask drops the last element of the tensor.
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n - 1
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


# ---------------------------------------------------------------- softmax
@triton.jit
def softmax_row(x_ptr, y_ptr, x_row_stride, y_row_stride, n_cols, BLOCK: tl.constexpr):
    # One program per row, the whole row in one block.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf"))
    m = tl.max(x, axis=0)
    e = tl.exp(x - m)
    s = tl.sum(e, axis=0)
    tl.store(y_ptr + row * y_row_stride + cols, e / s, mask=mask)


@triton.jit
def softmax_loop(x_ptr, y_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    # Persistent: each program takes rows pid, pid + num_programs, ...;
    # a row is read in column blocks, with an online max and sum.
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    for row in range(pid, n_rows, nprog):
        m = tl.full([BLOCK], -float("inf"), tl.float32)
        s = tl.zeros([BLOCK], tl.float32)
        for c0 in range(0, n_cols, BLOCK):
            cols = c0 + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
            m_new = tl.maximum(m, x)
            s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
            m = m_new
        row_max = tl.max(m, axis=0)
        total = tl.sum(s * tl.exp(m - row_max), axis=0)
        for c0 in range(0, n_cols, BLOCK):
            cols = c0 + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
            tl.store(y_ptr + row * n_cols + cols, tl.exp(x - row_max) / total, mask=cols < n_cols)


@triton.jit
def softmax_loop_norescale(x_ptr, y_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    # Broken: the running sum is not rescaled when the running max grows.
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    for row in range(pid, n_rows, nprog):
        m = tl.full([BLOCK], -float("inf"), tl.float32)
        s = tl.zeros([BLOCK], tl.float32)
        for c0 in range(0, n_cols, BLOCK):
            cols = c0 + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
            m_new = tl.maximum(m, x)
            s = s + tl.exp(x - m_new)
            m = m_new
        row_max = tl.max(m, axis=0)
        total = tl.sum(s * tl.exp(m - row_max), axis=0)
        for c0 in range(0, n_cols, BLOCK):
            cols = c0 + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
            tl.store(y_ptr + row * n_cols + cols, tl.exp(x - row_max) / total, mask=cols < n_cols)


# ---------------------------------------------------------------- layernorm
@triton.jit
def layernorm(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    d = tl.where(mask, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(y_ptr + row * n_cols + cols, d * rstd * w + b, mask=mask)


@triton.jit
def layernorm_nomask(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    # Broken: the padding lanes (x = 0 there) are not masked out of the
    # variance: they add mean^2 for each padded column.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    d = x - mean
    var = tl.sum(d * d, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(y_ptr + row * n_cols + cols, d * rstd * w + b, mask=mask)


# ---------------------------------------------------------------- matmul
@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PRECISION: tl.constexpr,
           K_BLOCKS_DROPPED: tl.constexpr):
    # C = A @ B; a tile of C per program. K_BLOCKS_DROPPED > 0 is the broken
    # variant: the loop stops that many K blocks early.
    pid = tl.program_id(0)
    grid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // grid_n
    pid_n = pid % grid_n
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, tl.cdiv(K, BLOCK_K) - K_BLOCKS_DROPPED):
        k = k0 * BLOCK_K + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + k[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & (k[None, :] < K), other=0.0)
        b = tl.load(b_ptr + k[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=(k[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


# ---------------------------------------------------------------- attention
@triton.jit
def attention(q_ptr, k_ptr, v_ptr, o_ptr, sm_scale, seq_len, HEAD: tl.constexpr, BLOCK_M: tl.constexpr,
              BLOCK_N: tl.constexpr, RESCALE: tl.constexpr):
    # FlashAttention forward for one head: a block of query rows per
    # program, keys and values in blocks of BLOCK_N with an online softmax.
    # RESCALE = False is the broken variant: the accumulator is not
    # rescaled when the running max grows.
    start_m = tl.program_id(0)
    rm = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rd = tl.arange(0, HEAD)
    q = tl.load(q_ptr + rm[:, None] * HEAD + rd[None, :])
    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD], tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, seq_len, BLOCK_N):
        rn = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + rn[None, :] * HEAD + rd[:, None])
        qk = tl.dot(q, k)
        m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        p = tl.math.exp2(qk * qk_scale - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        if RESCALE:
            acc = acc * alpha[:, None]
        v = tl.load(v_ptr + rn[:, None] * HEAD + rd[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(o_ptr + rm[:, None] * HEAD + rd[None, :], acc)


# ---------------------------------------------------------------- sm_90 matmuls
# Tile shapes at which Triton 3.6 compiles tl.dot for sm_90 to wgmma
# (BLOCK_M 64 on one warpgroup). build.py compiles these for sm_90 only.
@triton.jit
def matmul_wgmma(a_ptr, b_ptr, c_ptr, K, stride_am, stride_bk, stride_cm,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, K_BLOCKS_DROPPED: tl.constexpr):
    # C = A @ B with a 2D grid of tiles and sizes that are multiples of the
    # tiles: no masks, so the loads are plain tiles that Triton pipelines
    # with cp.async into shared memory, which wgmma reads. K_BLOCKS_DROPPED
    # > 0 is the broken variant: the K loop stops that many blocks early.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K - K_BLOCKS_DROPPED * BLOCK_K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k0 + rk)[None, :])
        b = tl.load(b_ptr + (k0 + rk)[:, None] * stride_bk + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc)


@triton.jit
def matmul_tma(a_desc, b_desc, c_desc, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
               K_BLOCKS_DROPPED: tl.constexpr):
    # The same product through host-side tensor descriptors
    # (triton.tools.tensor_descriptor.TensorDescriptor): Triton passes each
    # as a CUtensorMap kernel parameter, loads tiles with TMA and stores C
    # with a TMA store. K_BLOCKS_DROPPED > 0: the broken variant, as above.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K - K_BLOCKS_DROPPED * BLOCK_K, BLOCK_K):
        a = a_desc.load([pid_m * BLOCK_M, k0])
        b = b_desc.load([k0, pid_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc)


@triton.jit
def matmul_grouped(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                   DROP: tl.constexpr):
    # Triton's matmul tutorial, written anew: a 1D grid walked in groups of
    # GROUP_M rows of tiles (pid runs down a group's column of tiles, then
    # to the next column), so that programs running together share tiles of
    # A and B in L2. Masked loads and stores (any M, N, K at run time). Built
    # at the tutorial's sm_90 configuration, 128 x 256 x 64, 8 warps, 3
    # stages: wgmma.m64n256k16 from cp.async-filled shared memory. DROP > 0
    # is the broken variant: the K loop stops that many blocks early.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    per_group = GROUP_M * tl.cdiv(N, BLOCK_N)
    first_m = (pid // per_group) * GROUP_M
    rows = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % rows
    pid_n = (pid % per_group) // rows
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K) - DROP):
        left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < left), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < left) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


# ---------------------------------------------------------------- attention with its log-sum-exp
# As Triton's fused-attention tutorial writes its forward pass: besides O it
# stores M = m_i + log2(l_i) per query row (the row's log-sum-exp in base 2,
# which the backward pass reads), with tl.math.log2 from libdevice.
@triton.jit
def attention_lse(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, sm_scale, seq_len, HEAD: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, RESCALE: tl.constexpr):
    # RESCALE = False: the broken variant (no rescale of acc when the max grows).
    start_m = tl.program_id(0)
    rm = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rd = tl.arange(0, HEAD)
    q = tl.load(q_ptr + rm[:, None] * HEAD + rd[None, :])
    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD], tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, seq_len, BLOCK_N):
        rn = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + rn[None, :] * HEAD + rd[:, None])
        qk = tl.dot(q, k)
        m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        p = tl.math.exp2(qk * qk_scale - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        if RESCALE:
            acc = acc * alpha[:, None]
        v = tl.load(v_ptr + rn[:, None] * HEAD + rd[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_new
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(lse_ptr + rm, m_i)
    tl.store(o_ptr + rm[:, None] * HEAD + rd[None, :], acc)


@triton.jit
def attention_tma_lse(q_desc, k_desc, v_desc, o_ptr, lse_ptr, sm_scale, seq_len, HEAD: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, RESCALE: tl.constexpr):
    # The same through host-side tensor descriptors (TMA loads of Q, K, V
    # tiles on sm_90), as the tutorial's sm_90 path loads them.
    start_m = tl.program_id(0)
    off_m = start_m * BLOCK_M
    rm = off_m + tl.arange(0, BLOCK_M)
    rd = tl.arange(0, HEAD)
    q = q_desc.load([off_m, 0])
    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD], tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, seq_len, BLOCK_N):
        k = k_desc.load([start_n, 0])
        qk = tl.dot(q, k.T)
        m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        p = tl.math.exp2(qk * qk_scale - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        if RESCALE:
            acc = acc * alpha[:, None]
        v = v_desc.load([start_n, 0])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_new
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(lse_ptr + rm, m_i)
    tl.store(o_ptr + rm[:, None] * HEAD + rd[None, :], acc)
