"""Model configuration: one frozen dataclass of plain values.

The same config describes the shipped models, checkpoints trained with
``python -m training.train`` and converted nanoGPT checkpoints, so it also holds
the switches nanoGPT and GPT-2 need (learned positional embeddings, biases, the MLP's
GELU, LayerNorm's epsilon).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields

from models.config_checks import check_llama_fields

# The attention kinds a config accepts: the keys of ``models.attention.ATTENTION_REGISTRY``.
ATTENTION_KINDS = ("softmax", "linear", "delta")
# The shipped models in exported/: one per attention kind, in this order everywhere (model
# picker, side-by-side comparison, bench rows, tests). The one spelling of the shipped kinds.
SHIPPED_KINDS = ("softmax", "linear", "delta")
# "rotary": nothing is added to the embedding; q and k are rotated by their positions
# inside attention (RoPE, Su et al. 2021; ``models/rotary.py``), as in Llama and GPT-NeoX.
POSITION_SCHEMES = ("sinusoidal", "learned", "rotary")
# The residual stream's normalisation: LayerNorm (Ba et al. 2016; GPT-2, ours) or RMSNorm
# (Zhang & Sennrich 2019; Llama, Mistral, Qwen2): ``models/norms.py``.
NORMS = ("layernorm", "rmsnorm")
# The MLP's GELU (Hendrycks & Gimpel 2016): "gelu" is exact, x Phi(x) (ours, nanoGPT);
# "gelu_new" its tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))),
# which GPT-2 was trained with (Hugging Face's name for it; torch's approximate="tanh").
# "silu": x sigmoid(x), the gate of a gated MLP (SwiGLU, Shazeer 2020; Llama).
ACTIVATIONS = ("gelu", "gelu_new", "silu")
# Fields written to a config's JSON only when they differ from these defaults, so every
# checkpoint, graph and model card written before they existed reads and writes the same.
QUIET_DEFAULTS = {
    "activation": "gelu",
    "ln_eps": 1e-5,
    "n_kv_head": None,
    "norm": "layernorm",
    "gated_mlp": False,
    "qkv_bias": None,
    "rope_theta": 10000.0,
    "rotary_dim": None,
    "rope_scale": 1.0,
    "sliding_window": None,
    "window_layers": None,
    "parallel_residual": False,
}
# Keys that older checkpoints and graph metadata wrote for today's field names.
LEGACY_KEYS = {"pos_enc": "position_scheme", "eps": "attn_eps"}
# Fields a config may mark ``unknown`` (set after the class below).
_FIELD_NAMES: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ModelConfig:
    """Hyper-parameters of a decoder-only transformer.

    Attributes:
        vocab_size: number of token ids V.
        n_layer: number of blocks L.
        n_head: heads per attention layer H.
        d_model: residual stream width C; must be divisible by ``n_head``.
        context_length: longest sequence T the model was trained on (tokens).
        attention: ``"softmax"``, ``"linear"`` (Katharopoulos et al. 2020) or ``"delta"``
            (DeltaNet, Yang et al. 2024: ``models/delta.py``).
        position_scheme: which positional encoding is added to the token embedding:
            ``"sinusoidal"`` (Vaswani et al. 2017) or ``"learned"`` (GPT-2). The encoding
            itself, the (T, C) array, is the inspect graph's output ``pos_enc``.
        d_mlp: hidden width of the MLP.
        bias: whether the linear layers have biases.
        ln_bias: whether LayerNorm has a bias (nanoGPT's ``bias=False`` drops both).
        tie_weights: whether the unembedding shares the token-embedding matrix.
        scale_embedding: multiply token embeddings by sqrt(d_model) before adding
            the positional encoding (Vaswani et al. 2017, section 3.4), so that the
            unit-amplitude sinusoids do not drown the token identity. GPT-2/nanoGPT: False.
        attn_eps: the linear-attention normalizer epsilon ε in
            phi(q_i)^T S_i / (phi(q_i)^T z_i + ε) (``eps`` in older files; LayerNorm's
            is ``ln_eps``).
        activation: the MLP's GELU, one of :data:`ACTIVATIONS`: ``"gelu"`` (exact; ours,
            nanoGPT) or ``"gelu_new"`` (the tanh approximation; GPT-2).
        ln_eps: the epsilon LayerNorm adds to the variance (1e-5: torch's default, ours,
            nanoGPT and GPT-2's ``layer_norm_epsilon``).
        n_kv_head: key/value heads H_kv of grouped-query attention (Ainslie et al. 2023):
            query head h reads key/value head h // (H / H_kv); None: H_kv = H.
        norm: ``"layernorm"`` or ``"rmsnorm"`` (:data:`NORMS`), for every norm of the model.
        gated_mlp: the MLP is W_down (act(W_gate x) * W_up x) (SwiGLU with ``"silu"``;
            Shazeer 2020) instead of W_proj act(W_fc x).
        qkv_bias: whether q, k and v projections have biases (Qwen2: yes, while its other
            linear layers have none); None: as ``bias``.
        rope_theta: the rotary base θ: pair i of a head turns by position · θ^(-2i/d_rot).
        rotary_dim: how many leading dimensions of each head RoPE rotates (GPT-NeoX's
            ``rotary_pct``); None: all d_head.
        rope_scale: linear position interpolation (Chen et al. 2023): positions are
            divided by it before rotating; 1.0: none.
        sliding_window: softmax attention sees only the last ``sliding_window`` keys
            (query i reads keys j with i - window < j <= i; Mistral); None: every key.
        window_layers: the layers the sliding window applies to (GPT-Neo's "local"
            layers); None: every layer.
        parallel_residual: GPT-NeoX's block x + attn(ln_1(x)) + mlp(ln_2(x)), both read
            the block's input; False: the sequential pre-LN block.
        unknown: names of fields the model's files do not tell (a foreign ONNX graph
            gives its layers, heads, vocabulary and context, not its d_model, MLP,
            positions or biases): their values are placeholders that pass validation,
            and every view shows them as unknown, never as facts (``shown``).

    Raises:
        ValueError: on an unknown attention kind or positional encoding, a
            non-positive size, ``d_model`` not divisible by ``n_head``, an odd
            ``d_model`` with sinusoidal positions, ``attn_eps`` or ``ln_eps`` outside (0, 1),
            or an activation not in :data:`ACTIVATIONS`.
    """

    vocab_size: int
    n_layer: int = 3
    n_head: int = 4
    d_model: int = 128
    context_length: int = 64
    attention: str = "softmax"
    position_scheme: str = "sinusoidal"
    d_mlp: int = 256
    bias: bool = True
    ln_bias: bool = True
    tie_weights: bool = True
    scale_embedding: bool = False
    attn_eps: float = 1e-6
    activation: str = "gelu"
    ln_eps: float = 1e-5
    n_kv_head: int | None = None
    norm: str = "layernorm"
    gated_mlp: bool = False
    qkv_bias: bool | None = None
    rope_theta: float = 10000.0
    rotary_dim: int | None = None
    rope_scale: float = 1.0
    sliding_window: int | None = None
    window_layers: tuple[int, ...] | None = None
    parallel_residual: bool = False
    unknown: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "unknown", tuple(self.unknown))  # a JSON list, too
        if isinstance(self.window_layers, list):  # a JSON list
            object.__setattr__(self, "window_layers", tuple(self.window_layers))
        if any(name not in _FIELD_NAMES for name in self.unknown):
            raise ValueError(f"unknown must name config fields, got {list(self.unknown)!r}")
        if self.attention not in ATTENTION_KINDS:
            raise ValueError(f"attention must be one of {ATTENTION_KINDS}, got {self.attention!r}")
        if self.position_scheme not in POSITION_SCHEMES:
            raise ValueError(
                f"position_scheme must be one of {POSITION_SCHEMES}, got {self.position_scheme!r}"
            )
        for name in ("vocab_size", "n_layer", "n_head", "d_model", "context_length", "d_mlp"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.d_model % self.n_head:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_head={self.n_head}")
        if self.position_scheme == "sinusoidal" and self.d_model % 2:
            raise ValueError(f"sinusoidal positions need an even d_model, got {self.d_model}")
        for name in ("attn_eps", "ln_eps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not (isinstance(value, int | float) and 0 < value < 1):
                raise ValueError(f"{name} must be a number in (0, 1), got {value!r}")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {ACTIVATIONS}, got {self.activation!r}")
        if self.norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}, got {self.norm!r}")
        check_llama_fields(self)

    @property
    def d_head(self) -> int:
        """Width of one head: d_model // n_head."""
        return self.d_model // self.n_head

    @property
    def kv_heads(self) -> int:
        """Key/value heads H_kv: ``n_kv_head``, or H without grouped-query attention."""
        return self.n_kv_head or self.n_head

    def window_of(self, layer: int) -> int | None:
        """The sliding window of layer ``layer``: ``sliding_window`` where it applies
        (every layer, or those of ``window_layers``), else None (every earlier key)."""
        if self.window_layers is not None and layer not in self.window_layers:
            return None
        return self.sliding_window

    @property
    def d_rotary(self) -> int:
        """Dimensions of a head RoPE rotates: ``rotary_dim`` or d_head (0 without RoPE)."""
        if self.position_scheme != "rotary":
            return 0
        return self.rotary_dim or self.d_head

    @property
    def has_qkv_bias(self) -> bool:
        """Whether the q, k, v projections have biases (``qkv_bias``, else ``bias``)."""
        return self.bias if self.qkv_bias is None else self.qkv_bias

    def num_parameters(self) -> int:
        """Distinct parameters ``models.transformer.Transformer(self)`` allocates (tied
        weights counted once; float32 values), from the config alone: the one formula
        behind the upload size limit and the merged-form lesson's model total."""
        C, M, V = self.d_model, self.d_mlp, self.vocab_size
        kv = self.kv_heads * self.d_head  # width of the key and value projections
        with_bias = self.ln_bias and self.norm == "layernorm"
        ln = C * (2 if with_bias else 1)  # LayerNorm weight (+ bias); RMSNorm: weight
        mlp_in = 2 if self.gated_mlp else 1  # gate and up, or fc
        biases = (C + M * mlp_in + C if self.bias else 0) + (C + 2 * kv if self.has_qkv_bias else 0)
        block = 2 * ln + 2 * C * C + 2 * C * kv + (mlp_in + 1) * C * M + biases
        if self.attention == "delta":  # three width-4 convolutions, W_beta and its bias
            block += 3 * C * 4 + (C + 1) * self.n_head
        pos = self.context_length * C if self.position_scheme == "learned" else 0
        return V * C * (1 if self.tie_weights else 2) + pos + self.n_layer * block + ln

    def to_dict(self) -> dict:
        """Plain dict of the fields plus the derived ``d_head`` (for model cards); the
        fields of :data:`QUIET_DEFAULTS` only where they differ from their default, and
        ``unknown`` only when some field is."""
        data = {**asdict(self), "d_head": self.d_head}
        for name, default in QUIET_DEFAULTS.items():
            if data[name] == default:
                del data[name]
        if self.unknown:
            data["unknown"] = list(self.unknown)
        else:
            del data["unknown"]
        return data

    def shown(self) -> dict:
        """``to_dict()`` as it is shown: each field in ``unknown`` (and ``d_head`` with
        ``d_model``) as the string "unknown" instead of its placeholder value."""
        hidden = set(self.unknown) | ({"d_head"} if "d_model" in self.unknown else set())
        data = self.to_dict()
        data.pop("unknown", None)
        return {k: "unknown" if k in hidden else v for k, v in data.items()}

    def to_json(self) -> str:
        """``to_dict()`` as compact JSON with sorted keys (checkpoint and ONNX metadata)."""
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict) -> ModelConfig:
        """Build a config from a dict; unknown keys and ``d_head`` are ignored, and the
        legacy keys of :data:`LEGACY_KEYS` (``pos_enc``, ``eps``: the shipped checkpoints' and
        graphs' metadata) are read as today's names.

        Raises:
            ValueError: if a required field is missing, a value has the wrong
                type, or ``d_head`` disagrees with ``d_model // n_head``.
        """
        if not isinstance(data, dict):
            raise ValueError("config must be a JSON object")
        names = {f.name for f in fields(cls)}
        renamed = ((LEGACY_KEYS.get(k, k), v) for k, v in data.items())
        kwargs = {k: v for k, v in renamed if k in names}
        if "vocab_size" not in kwargs:
            raise ValueError("config is missing 'vocab_size'")
        try:
            cfg = cls(**kwargs)
        except TypeError as exc:
            raise ValueError(f"bad config: {exc}") from exc
        if "d_head" in data and data["d_head"] != cfg.d_head:
            raise ValueError(f"config d_head={data['d_head']} != d_model // n_head = {cfg.d_head}")
        return cfg

    @classmethod
    def from_json(cls, text: str) -> ModelConfig:
        """Parse ``to_json()`` output.

        Raises:
            ValueError: for invalid JSON or any problem ``from_dict`` reports.
        """
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"config is not valid JSON: {exc}") from exc
        return cls.from_dict(data)


_FIELD_NAMES = frozenset(f.name for f in fields(ModelConfig)) - {"unknown"}
