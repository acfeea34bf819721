"""The merged bilinear form of one head and what a head costs in parameters.

Source: Elhage et al. 2021, "A Mathematical Framework for Transformer Circuits"
(merged W_Q W_K^T and W_V W_O). Pure numpy, float64, on the model's
PyTorch-named weights (``blocks.<l>.attn.q_proj.weight`` (C, C), ...).
"""

from __future__ import annotations

import numpy as np

from lessons.scoring import dot_product_scores
from models.config import ModelConfig


def _head_rows(weights: dict, layer: int, head: int, n_head: int, part: str):
    """Rows of head ``head`` in ``blocks.<layer>.attn.<part>_proj``: W (D, C), b (D,).
    With grouped-query attention (k and v with H_kv < H heads of D rows) the rows of
    the key/value head query head ``head`` reads, head // (H / H_kv)."""
    W = np.asarray(weights[f"blocks.{layer}.attn.{part}_proj.weight"], np.float64)  # (H_kv D, C)
    D = np.asarray(weights[f"blocks.{layer}.attn.q_proj.weight"]).shape[0] // n_head
    shared = head // (n_head // (W.shape[0] // D))  # the key/value head it reads
    rows = slice(shared * D, (shared + 1) * D)
    bias = weights.get(f"blocks.{layer}.attn.{part}_proj.bias")
    b = np.zeros(D) if bias is None else np.asarray(bias, np.float64)[rows]  # (D,)
    return W[rows], b  # (D, C), (D,)


def homogeneous(x: np.ndarray) -> np.ndarray:
    """Append a constant 1: (T, C) -> x~ (T, C + 1), so x W^T + b = x~ [W^T; b]."""
    x = np.asarray(x, np.float64)
    return np.concatenate([x, np.ones(x.shape[:-1] + (1,))], axis=-1)


def merged_qk(weights: dict, layer: int, head: int, n_head: int) -> np.ndarray:
    """W_QK = A_Q A_K^T (C + 1, C + 1) in homogeneous coordinates.

    PyTorch's Linear computes q = x W_Q^T + b_Q with W_Q^h the head's D rows
    (D, C). Stacking A_Q = [W_Q^h^T; b_Q^h] (C + 1, D) gives q = x~ A_Q with
    x~ = [x, 1], so q_i . k_j = x~_i W_QK x~_j^T exactly, biases included (the
    last row/column hold the bias terms; without biases they are zero). Rank
    <= D. Elhage et al. 2021, "A Mathematical Framework for Transformer Circuits".
    """
    Wq, bq = _head_rows(weights, layer, head, n_head, "q")  # (D, C), (D,)
    Wk, bk = _head_rows(weights, layer, head, n_head, "k")  # (D, C), (D,)
    A_q = np.vstack([Wq.T, bq[None, :]])  # (C + 1, D)
    A_k = np.vstack([Wk.T, bk[None, :]])  # (C + 1, D)
    return A_q @ A_k.T  # (C + 1, C + 1)


def merged_ov(weights: dict, layer: int, head: int, n_head: int) -> np.ndarray:
    """W_OV = W_V^h^T W_O^h^T (C, C), row-vector convention: head output = a . (x W_OV).

    W_O^h is the head's D columns of ``o_proj.weight`` (C, D). The value bias
    adds the constant b_V^h W_O^h^T (rows of attention sum to 1), left out here.
    """
    Wv, _ = _head_rows(weights, layer, head, n_head, "v")  # (D, C)
    Wo = np.asarray(weights[f"blocks.{layer}.attn.o_proj.weight"], np.float64)  # (C, C)
    D = Wv.shape[0]
    return Wv.T @ Wo[:, head * D : (head + 1) * D].T  # (C, D) @ (D, C) -> (C, C)


def merged_scores(attn_in: np.ndarray, W_QK: np.ndarray, d_head: int) -> np.ndarray:
    """Scores from the merged matrix: x~ W_QK x~^T / sqrt(D).

    Args:
        attn_in: (T, C) the LayerNorm'd input of this layer (contract ``attn_in[layer]``).
        W_QK: (C + 1, C + 1) from :func:`merged_qk`; d_head: D.

    Returns:
        (T, T), equal to the softmax model's ``scores[layer, head]`` = QK^T / sqrt(D).
        For linear models ``scores`` is phi(Q) phi(K)^T, so compare with
        :func:`reference_scores` (q k^T / sqrt(D) from the model's q, k) instead.
    """
    x = homogeneous(attn_in)  # (T, C + 1)
    return x @ W_QK @ x.T / np.sqrt(d_head)  # (T, T)


def reference_scores(outputs: dict, layer: int, head: int, attention: str) -> np.ndarray:
    """The model's QK^T / sqrt(D) for one head: ``scores`` for softmax models (when the
    analysis kept them), recomputed from the exported ``q``, ``k`` otherwise (linear
    models, served models whose analyses keep no ``scores``). Returns (T, T)."""
    if attention == "softmax" and "scores" in outputs:
        return np.asarray(outputs["scores"][layer, head], np.float64)
    return dot_product_scores(outputs["q"][layer, head], outputs["k"][layer, head])


def singular_values(M: np.ndarray) -> np.ndarray:
    """Singular values of a matrix, largest first: (min(R, K),)."""
    return np.linalg.svd(np.asarray(M, np.float64), compute_uv=False)


def numerical_rank(sv: np.ndarray, shape: tuple[int, int], rtol: float | None = None) -> int:
    """Count of singular values above rtol * sv_max (numpy's matrix_rank default:
    rtol = max(shape) * float64 eps). Returns an int <= min(shape)."""
    if sv.size == 0 or sv[0] == 0:
        return 0
    rtol = max(shape) * np.finfo(np.float64).eps if rtol is None else rtol
    return int((sv > rtol * sv[0]).sum())


def _with_totals(head: dict[str, int], all_heads: int, model: int, source: str) -> dict:
    """Add the derived entries shared by both counters (see :func:`head_parameter_counts`)."""
    per_head = head["q"] + head["k"] + head["v"] + head["o"]
    return {
        **head,
        "qkv": head["q"] + head["k"] + head["v"],
        "per_head": per_head,
        "merged_free": head["q"] + head["k"],
        "all_heads": all_heads,
        "model": model,
        "head_fraction": per_head / model,
        "all_heads_fraction": all_heads / model,
        "source": source,
    }


def head_parameter_counts(cfg: ModelConfig) -> dict[str, int | float | str]:
    """Parameters one head owns, against the model, from the config formula.

    Per head: Q, K, V are C x D each (+ D biases), so Q + K + V = C (2D + D)
    (+ 3D); O is D x C (its bias is shared by all heads). The merged W_QK shown
    in homogeneous coordinates is (C + 1) x (C + 1) (``merged_entries``) but only
    the head's Q and K parameters stand behind it (``merged_free``: 2 C D, + 2 D
    biases). Use :func:`weight_parameter_counts` when the weights are loaded.

    Returns:
        ints ``q``, ``k``, ``v``, ``o``, ``qkv``, ``per_head``, ``merged_entries``,
        ``merged_free``, ``all_heads``, ``model``; floats ``head_fraction``,
        ``all_heads_fraction``; ``source`` = "config".
    """
    C, D, bias = cfg.d_model, cfg.d_head, int(cfg.bias)
    head = {"q": C * D + D * bias, "k": C * D + D * bias, "v": C * D + D * bias, "o": D * C}
    head["merged_entries"] = (C + 1) ** 2
    all_heads = (head["q"] + head["k"] + head["v"] + head["o"]) * cfg.n_layer * cfg.n_head
    return _with_totals(head, all_heads, cfg.num_parameters(), "config")


def _head_sizes(weights: dict, layer: int, head: int, n_head: int) -> dict[str, int]:
    """Entries of the weight arrays one head reads: its rows of W_Q, W_K, W_V (and
    biases, when the checkpoint has them) and its columns of W_O."""
    sizes = {}
    for part in "qkv":
        W = np.asarray(weights[f"blocks.{layer}.attn.{part}_proj.weight"])  # (C, C)
        D = W.shape[0] // n_head
        rows = slice(head * D, (head + 1) * D)
        bias = weights.get(f"blocks.{layer}.attn.{part}_proj.bias")
        sizes[part] = int(W[rows].size + (0 if bias is None else np.asarray(bias)[rows].size))
    Wo = np.asarray(weights[f"blocks.{layer}.attn.o_proj.weight"])  # (C, C)
    D = Wo.shape[1] // n_head
    sizes["o"] = int(Wo[:, head * D : (head + 1) * D].size)
    return sizes


def weight_parameter_counts(weights: dict, layer: int, head: int, n_head: int) -> dict:
    """The counts of :func:`head_parameter_counts`, measured on the weight arrays.

    Per head: the sizes of head ``head``'s slices of layer ``layer``'s arrays;
    ``all_heads``: the same summed over every layer and head found in ``weights``;
    ``model``: the sizes of all arrays, with ``lm_head.weight`` counted once when it
    holds the same numbers as ``wte.weight`` (tied); ``merged_entries``: the size
    of :func:`merged_qk`'s (C + 1, C + 1) matrix.

    Args:
        weights: name -> array (PyTorch names); layer, head: the head; n_head: H.

    Returns:
        The same keys as :func:`head_parameter_counts`, ``source`` = "weights".
    """
    head_sizes = _head_sizes(weights, layer, head, n_head)
    C = np.asarray(weights[f"blocks.{layer}.attn.q_proj.weight"]).shape[1]
    head_sizes["merged_entries"] = (C + 1) ** 2
    n_layer = sum(1 for name in weights if name.endswith(".attn.q_proj.weight"))
    all_heads = sum(
        sum(_head_sizes(weights, li, h, n_head).values())
        for li in range(n_layer)
        for h in range(n_head)
    )
    tied = (
        "lm_head.weight" in weights
        and "wte.weight" in weights
        and np.array_equal(weights["lm_head.weight"], weights["wte.weight"])
    )
    model = sum(int(np.asarray(w).size) for w in weights.values())
    model -= int(np.asarray(weights["lm_head.weight"]).size) if tied else 0
    return _with_totals(head_sizes, all_heads, model, "weights")
