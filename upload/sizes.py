"""What a file or a config may ask the server to hold: pure arithmetic, safe on both sides."""

from __future__ import annotations

from models.config import ModelConfig
from upload.errors import UploadError
from upload.limits import BROWSER, MAX_ONNX_DIM, MAX_UPLOAD_BYTES, Limits


def check_size(name: str, data: bytes) -> None:
    """Raises UploadError if ``data`` is empty or larger than MAX_UPLOAD_BYTES."""
    if not data:
        raise UploadError(f"{name}: the file is empty")
    if len(data) > MAX_UPLOAD_BYTES:
        raise UploadError(
            f"{name}: too large ({len(data):,} bytes); the limit is "
            f"{MAX_UPLOAD_BYTES:,} bytes ({MAX_UPLOAD_BYTES // 1_000_000} MB) per file"
        )


def activation_elements(cfg: ModelConfig, T: int | None = None) -> int:
    """Float32 values the inspect graph returns for one sentence of ``T`` tokens.

    ``T`` defaults to ``cfg.context_length`` (the longest sentence the app runs).
    Counts every contract output (``models/contract.py``): ``logits`` T*V, ``attn``
    and ``scores`` L*H*T*T each, ``q`` ``k`` ``v`` ``head_out`` L*H*T*D each,
    ``pos_enc`` T*C, ``attn_in`` L*T*C; for linear attention also ``phi_q``,
    ``phi_k``, ``normalizer`` L*H*T*D each and ``state`` L*H*T*D*D.
    """
    L, H, D, C = cfg.n_layer, cfg.n_head, cfg.d_head, cfg.d_model
    T = cfg.context_length if T is None else T
    n = T * cfg.vocab_size + 2 * L * H * T * T + 4 * L * H * T * D + T * C + L * T * C
    if cfg.attention == "linear":
        n += 3 * L * H * T * D + L * H * T * D * D
    return n


def check_config_size(name: str, cfg: ModelConfig, limits: Limits = BROWSER) -> None:
    """Refuse configs too large to build or to run here, before anything is allocated.

    Limits (``limits``, by default the browser's): ``cfg.num_parameters()`` <=
    ``limits.params`` values (MAX_PARAMS), ``context_length`` <= MAX_ONNX_DIM tokens, and
    ``activation_elements(cfg)`` (the inspect outputs at the full context) <=
    ``limits.activations`` float32 values (MAX_ACTIVATION_ELEMENTS: 256 MB; unchecked
    when None).

    Raises:
        UploadError: naming the file, the size the config asks for and the limit.
    """
    n = cfg.num_parameters()
    if n > limits.params or cfg.context_length > MAX_ONNX_DIM:
        raise UploadError(
            f"{name}: refused: the config describes {n:,} parameters and a context of "
            f"{cfg.context_length} tokens (limits {limits.params:,} and {MAX_ONNX_DIM})"
        )
    acts = activation_elements(cfg)
    if limits.activations is not None and acts > limits.activations:
        raise UploadError(
            f"{name}: refused: at its full context of {cfg.context_length} tokens the "
            f"attention outputs the app shows ({cfg.n_layer} layers x {cfg.n_head} heads x "
            f"T x T, Q/K/V, ...) would hold {acts:,} float32 values "
            f"({acts * 4 / 2**20:,.0f} MB; limit {limits.activations * 4 // 2**20} MB); "
            "a shorter context_length or fewer layers or heads would fit"
        )
