"""``models.shapes.parameter_shapes``: the shapes of the model built on the CPU, for every
kind of config, without torch's reference implementations (their first import is 1.1 s
of an upload worker's CPU)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from models.config import ATTENTION_KINDS, ModelConfig
from models.shapes import parameter_shapes
from models.transformer import Transformer
from tests.helpers import ROOT

SMALL = {"vocab_size": 37, "n_layer": 2, "n_head": 4, "d_model": 16, "d_mlp": 24}
CONFIGS = [
    *(ModelConfig(**SMALL, attention=kind) for kind in ATTENTION_KINDS),
    ModelConfig(**SMALL, position_scheme="learned", tie_weights=False, bias=False),
    # Llama-shaped: rotary, shared key/value heads, RMSNorm, SwiGLU, no biases
    ModelConfig(
        **SMALL,
        position_scheme="rotary",
        n_kv_head=2,
        norm="rmsnorm",
        gated_mlp=True,
        activation="silu",
        bias=False,
        ln_bias=False,
        tie_weights=False,
        qkv_bias=True,
    ),
    ModelConfig(**SMALL, position_scheme="rotary", rotary_dim=2, parallel_residual=True),
]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"{c.attention}-{c.position_scheme}")
def test_the_shapes_are_those_of_the_model_built_on_the_cpu(cfg):
    built = {name: tuple(value.shape) for name, value in Transformer(cfg).state_dict().items()}
    assert parameter_shapes(cfg) == built
    assert built  # the comparison compared something


def test_the_layout_imports_none_of_torchs_reference_implementations():
    """In a fresh process: ``parameter_shapes`` of a model with every kind of weight leaves
    ``torch._dynamo`` unimported; laying the same model out on the meta device with its
    initialisation imports it (so the check can fail)."""
    code = (
        "import sys, torch\n"
        "from models.config import ModelConfig\n"
        "from models.shapes import parameter_shapes\n"
        "from models.transformer import Transformer\n"
        "cfg = ModelConfig(vocab_size=37, n_layer=1, n_head=2, d_model=8, d_mlp=8)\n"
        "parameter_shapes(cfg)\n"
        "print('torch._dynamo' in sys.modules)\n"
        "with torch.device('meta'):\n"
        "    Transformer(cfg)\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "True"]
