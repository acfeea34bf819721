"""The inspection contract: names and shapes of the exported ONNX graphs.

This is the one place the contract is written down. ``export/graphs.py``
produces graphs that follow it, the app reads them by these names, and upload
validation (``upload/``) checks foreign ONNX files against it.

Symbols: L layers, H heads, T tokens (dynamic), V vocabulary size,
C = d_model, D = d_head = C // H. All float outputs are float32.

Inspect graph (``<kind>.inspect.onnx``), input ``input_ids`` int64 (1, T):

==============  ==================  =================================================
name            shape               meaning
==============  ==================  =================================================
logits          (1, T, V)           next-token logits at every position
attn            (L, H, T, T)        attention pattern: row = query, column = key;
                                    causal; softmax rows sum to 1; for linear attention
                                    the implied matrix phi(Q)phi(K)^T, masked, each row
                                    divided by its sum + eps, so row i sums to
                                    phi(q_i)^T z_i / (phi(q_i)^T z_i + eps) <= 1
q, k, v         (L, H, T, D)        queries, keys, values after the multi-head reshape
scores          (L, H, T, T)        pre-mask scores: QK^T / sqrt(D) for softmax,
                                    phi(Q)phi(K)^T for linear
head_out        (L, H, T, D)        per-head output (attn @ v), before merging heads
pos_enc         (T, C)              positional encoding added to the token embedding
attn_in         (L, T, C)           LayerNorm'd residual each attention layer reads:
                                    q = attn_in W_Q^T + b_Q (used to check W_Q W_K^T)
phi_q, phi_k    (L, H, T, D)        linear only: feature map phi(x) = elu(x) + 1
state           (L, H, T, D, D)     linear only: S_i = sum_{j<=i} phi(k_j) v_j^T
normalizer      (L, H, T, D)        linear only: z_i = sum_{j<=i} phi(k_j)
beta            (L, H, T)           delta only: write strength beta_t = sigmoid(W_beta x_t)
state           (L, H, T, D, D)     delta: S_t = S_{t-1} + beta_t k_t (v_t - S_{t-1}^T k_t)^T
==============  ==================  =================================================

For DeltaNet (``delta``, ``models/delta.py``) q and k are the convolved, SiLU'd and
L2-normalised vectors the delta rule uses, v the convolved values; ``scores`` is QK^T
before the mask; ``attn`` is the implied matrix A = (QK^T * M)(I + L)^-1 diag(beta),
L = tril(diag(beta) K K^T, -1), with attn @ v = head_out: rows need not sum to 1 and
entries can be negative. ``attn_in`` is still the LayerNorm'd residual, but q is no
longer a linear function of it (the convolution mixes four tokens).

Block outputs of the inspect graph (optional: a graph without them has no block view),
one set per layer l, TransformerLens-style names, batch row 0, one token per row:

==========================  =========  ===========================================
name                        shape      meaning
==========================  =========  ===========================================
blocks.{l}.resid_pre        (T, C)     residual stream into block l
blocks.{l}.ln1              (T, C)     LayerNorm 1 of it (what attention reads)
blocks.{l}.attn.out         (T, C)     attention's output after W_O (added to resid)
blocks.{l}.resid_mid        (T, C)     resid_pre + attn.out
blocks.{l}.ln2              (T, C)     LayerNorm 2 of resid_mid (what the MLP reads)
blocks.{l}.mlp.hidden       (T, M)     the MLP's hidden layer after GELU, M = d_mlp
blocks.{l}.mlp.out          (T, C)     the MLP's output (added to resid)
blocks.{l}.resid_post       (T, C)     resid_mid + mlp.out: block l+1's resid_pre
==========================  =========  ===========================================

Every graph carries ``config`` (``ModelConfig.to_json()``: the sizes, the attention
kind, the positional scheme, and the MLP's ``activation`` and LayerNorm's ``ln_eps`` when
they are not the defaults, as for GPT-2's GELU-new) and ``tokenizer`` (JSON) in its
metadata, so a set of graph files is a complete model.

Fast graph (``<kind>.fast.onnx``): input ``input_ids`` (1, T), output ``logits``
(1, T, V) only; linear attention is computed without any T x T tensor.

Step graph (``linear.step.onnx``, linear attention only), one token at a time:
inputs ``token`` int64 (1, 1), ``position`` int64 (1,), ``state`` (L, H, D, D),
``normalizer`` (L, H, D); outputs ``logits`` (1, V), ``state_out`` (L, H, D, D),
``normalizer_out`` (L, H, D). Start from zeros; O(1) work per token. DeltaNet's
(``delta.step.onnx``) carries ``conv`` (L, 3, 3, C) instead of the normalizer: the q, k, v
projections (axis 1) of the last three tokens (axis 2) its width-4 convolutions read.

Lab graph (``<kind>.lab.onnx``, ``models/lab.py``): a batch of B runs with a hand on
every head and residual cell (ablation, activation patching), and run 0's logit lens and
direct logit attribution. Inputs: ``input_ids`` int64 (B, T); ``head_mask`` (B, L, H, T)
and ``head_values`` (B, L, H, T, D): where the mask is 1 the head's output (head_out) is
replaced by the value; ``resid_mask`` (B, L+1, T) and ``resid_values`` (B, L+1, T, C):
the same for the residual stream into block l (l < L) and after the last block (l = L).
With every mask 0 it computes the inspect graph's numbers.

==================  ==========  =====================================================
name                shape       meaning
==================  ==========  =====================================================
logits              (B, T, V)   next-token logits of every run
head_out            (B,L,H,T,D) every head's output, after the overrides
resid               (B,L+1,T,C) the residual stream at each boundary, after overrides
lens_top            (L+1, T)    run 0: top token of each boundary's residual read
                                through the final LayerNorm and unembedding (int64)
lens_top_prob       (L+1, T)    run 0: its probability
lens_target_prob    (L+1, T)    run 0: probability of the next token of the sentence
                                (last position: of the model's top prediction)
target              (T,)        run 0: the model's top prediction (int64)
dla_heads           (L, H, T)   run 0: each head's direct contribution to the target's
                                logit, the final LayerNorm's scale frozen
dla_mlp             (L, T)      run 0: each MLP's
dla_embed           (T,)        run 0: the token embedding + positional encoding's
dla_bias            (T,)        run 0: the attention output biases + final LN bias
==================  ==========  =====================================================

The four dla outputs sum to ``logits[0, t, target[t]]``.

A foreign ONNX language model (one not made by this project, ``upload/onnx_foreign.py``)
gives what can be found in it, under the same names: ``logits`` (1, T, V), ``attn``
(L, H, T, T) (its attention Softmax outputs, layers in graph order) and, where the
Softmax input is a tensor of the graph, ``masked_scores`` (L, H, T, T): what the
Softmax receives, the graph's own mask included (−inf or a large negative number
where a key is blocked). It has no q, k, v, scores, head_out or pos_enc.
"""

from __future__ import annotations

INPUT_NAME = "input_ids"

COMMON_OUTPUTS = ("logits", "attn", "q", "k", "v", "scores", "head_out", "pos_enc", "attn_in")
# Outputs a foreign (uploaded) graph may omit; the views that need them say so.
OPTIONAL_OUTPUTS = ("attn_in",)
LINEAR_OUTPUTS = ("phi_q", "phi_k", "state", "normalizer")
DELTA_OUTPUTS = ("beta", "state")

# One block's hooks, in the order the block computes them (``block_outputs``).
BLOCK_HOOKS = (
    "resid_pre", "ln1", "attn.out", "resid_mid", "ln2", "mlp.hidden", "mlp.out", "resid_post",
)  # fmt: skip
BLOCK_HOOK_AXES = {hook: ("TM" if hook == "mlp.hidden" else "TC") for hook in BLOCK_HOOKS}

LAB_INPUTS = ("input_ids", "head_mask", "head_values", "resid_mask", "resid_values")
LAB_OUTPUTS = (
    "logits", "head_out", "resid", "lens_top", "lens_top_prob", "lens_target_prob", "target",
    "dla_heads", "dla_mlp", "dla_embed", "dla_bias",
)  # fmt: skip
# Axes of the lab graph's inputs and outputs ("B" the batch of runs, "K" = L + 1).
LAB_AXES = {
    "input_ids": "BT", "head_mask": "BLHT", "head_values": "BLHTD", "resid_mask": "BKT",
    "resid_values": "BKTC", "logits": "BTV", "head_out": "BLHTD", "resid": "BKTC",
    "lens_top": "KT", "lens_top_prob": "KT", "lens_target_prob": "KT", "target": "T",
    "dla_heads": "LHT", "dla_mlp": "LT", "dla_embed": "T", "dla_bias": "T",
}  # fmt: skip

STEP_INPUTS = ("token", "position", "state", "normalizer")
STEP_OUTPUTS = ("logits", "state_out", "normalizer_out")
# Attention kind -> (step inputs, step outputs) for the recurrent kinds.
KIND_STEP = {
    "linear": (STEP_INPUTS, STEP_OUTPUTS),
    "delta": (("token", "position", "state", "conv"), ("logits", "state_out", "conv_out")),
}

# Axes of every inspect output, one letter per axis: "1" a length-1 axis, L n_layer,
# H n_head, T tokens, D d_head, C d_model, V vocab_size. Upload validation runs
# foreign graphs once and checks their real output shapes against these.
OUTPUT_AXES = {
    "logits": "1TV",
    "attn": "LHTT",
    "q": "LHTD",
    "k": "LHTD",
    "v": "LHTD",
    "scores": "LHTT",
    "head_out": "LHTD",
    "pos_enc": "TC",
    "attn_in": "LTC",
    "phi_q": "LHTD",
    "phi_k": "LHTD",
    "state": "LHTDD",
    "normalizer": "LHTD",
    "beta": "LHT",
}
STEP_OUTPUT_AXES = {
    "logits": "1V",
    "state_out": "LHDD",
    "normalizer_out": "LHD",
    "conv_out": "L33C",
}
STEP_INPUT_AXES = {
    "token": "11",
    "position": "1",
    "state": "LHDD",
    "normalizer": "LHD",
    "conv": "L33C",
}

# What a foreign graph gives (``masked_scores`` only where every Softmax input is a tensor).
FOREIGN_OUTPUT_AXES = {"logits": "1TV", "attn": "LHTT", "masked_scores": "LHTT"}
FOREIGN_OUTPUTS = tuple(FOREIGN_OUTPUT_AXES)

# Rank of every inspect output, used to validate foreign graphs.
OUTPUT_RANKS = {name: len(axes) for name, axes in OUTPUT_AXES.items()}


def axis_sizes(cfg, T: int) -> dict[str, int]:
    """Axis letter -> size for a ``ModelConfig`` and a sentence of ``T`` tokens."""
    return {
        "1": 1,
        "3": 3,
        "L": cfg.n_layer,
        "K": cfg.n_layer + 1,
        "H": cfg.n_head,
        "T": T,
        "D": cfg.d_head,
        "C": cfg.d_model,
        "V": cfg.vocab_size,
        "M": cfg.d_mlp,
    }


# Attention kind -> the outputs its inspect graph adds to COMMON_OUTPUTS (one entry per
# kind in ``models.config.ATTENTION_KINDS``, the keys of ``models.attention.ATTENTION_REGISTRY``).
KIND_OUTPUTS = {"softmax": (), "linear": LINEAR_OUTPUTS, "delta": DELTA_OUTPUTS}


def inspect_outputs(attention: str) -> tuple[str, ...]:
    """Output names of the inspect graph for an attention kind, in graph order.

    Raises:
        ValueError: for an attention kind not in ``KIND_OUTPUTS``.
    """
    if attention not in KIND_OUTPUTS:
        raise ValueError(f"unknown attention kind {attention!r}")
    return COMMON_OUTPUTS + KIND_OUTPUTS[attention]


def step_names(attention: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(inputs, outputs)`` of the step graph of a recurrent attention kind.

    Raises:
        ValueError: for a kind with no step graph (softmax).
    """
    if attention not in KIND_STEP:
        raise ValueError(f"{attention!r} attention has no step graph")
    return KIND_STEP[attention]


def block_outputs(n_layer: int, layer: int | None = None) -> tuple[str, ...]:
    """Names of the block outputs (``blocks.{l}.{hook}``) of every layer, or of ``layer``
    alone, in graph order; the same for every attention kind."""
    layers = range(n_layer) if layer is None else (layer,)
    return tuple(f"blocks.{lay}.{hook}" for lay in layers for hook in BLOCK_HOOKS)


def is_block_output(name: str) -> bool:
    """True for a block output's name (``blocks.0.resid_pre``)."""
    return name.startswith("blocks.")


def graph_file(kind: str, graph: str) -> str:
    """File name of a shipped graph, e.g. ``graph_file("linear", "step")``."""
    return f"{kind}.{graph}.onnx"
