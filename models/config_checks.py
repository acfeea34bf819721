"""The checks of a config's Llama-family fields (grouped-query attention, rotary
positions, sliding windows), apart from ``models/config.py``'s dataclass."""

from __future__ import annotations


def check_llama_fields(cfg) -> None:
    """The grouped-query, rotary and sliding-window fields of ``cfg`` (a
    :class:`~models.config.ModelConfig`; Llama-family models).

    Raises:
        ValueError: H_kv not dividing H, an odd or too wide ``rotary_dim``, a
            non-positive θ, scale or window, or rotary positions or a sliding
            window on an attention other than softmax.
    """
    for name in ("n_kv_head", "rotary_dim", "sliding_window"):
        value = getattr(cfg, name)
        if value is not None and (type(value) is not int or value <= 0):
            raise ValueError(f"{name} must be a positive integer or null, got {value!r}")
    if cfg.n_kv_head is not None and cfg.n_head % cfg.n_kv_head:
        raise ValueError(f"n_head={cfg.n_head} is not a multiple of n_kv_head={cfg.n_kv_head}")
    if cfg.rotary_dim is not None and (cfg.rotary_dim % 2 or cfg.rotary_dim > cfg.d_head):
        raise ValueError(
            f"rotary_dim must be even and at most d_head={cfg.d_head}, got {cfg.rotary_dim}"
        )
    for name in ("rope_theta", "rope_scale"):
        value = getattr(cfg, name)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ValueError(f"{name} must be a positive number, got {value!r}")
    special = cfg.position_scheme == "rotary" or cfg.sliding_window is not None
    layers = cfg.window_layers
    if layers is not None and not (
        isinstance(layers, tuple) and all(type(i) is int and 0 <= i < cfg.n_layer for i in layers)
    ):
        raise ValueError(f"window_layers must list layers 0..{cfg.n_layer - 1}, got {layers!r}")
    grouped = cfg.n_kv_head not in (None, cfg.n_head)
    if (special or grouped) and cfg.attention != "softmax":
        raise ValueError(
            "rotary positions, grouped-query attention and a sliding window are implemented for softmax attention only"
        )
    if cfg.position_scheme == "rotary" and cfg.d_head % 2:
        raise ValueError(f"rotary positions need an even d_head, got {cfg.d_head}")
