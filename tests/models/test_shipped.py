"""The shipped exported/ folder: graphs match the checkpoints, the card meets its targets."""

import json

import numpy as np
import onnx
import pytest
import torch

from models import contract
from models.checkpoint import load_checkpoint
from models.runtime import load_shipped

KINDS = ("softmax", "linear")


@pytest.fixture(scope="module")
def card(exported_dir):
    return json.loads((exported_dir / "model_card.json").read_text())


def test_exported_folder_is_small_and_self_contained(exported_dir):
    files = list(exported_dir.iterdir())
    assert sum(f.stat().st_size for f in files) < 20_000_000  # 20 MB
    assert not [f for f in files if f.name.endswith(".data")]
    for kind in KINDS:
        assert (exported_dir / contract.graph_file(kind, "inspect")).exists()
        assert (exported_dir / contract.graph_file(kind, "fast")).exists()
    assert (exported_dir / contract.graph_file("linear", "step")).exists()
    assert (exported_dir / "tokenizer.json").exists()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("T", [1, 9, 64])
def test_shipped_graphs_match_shipped_checkpoints(exported_dir, kind, T):
    model, tokenizer, _ = load_checkpoint(exported_dir / f"{kind}.safetensors")
    shipped = load_shipped(exported_dir, kind)
    assert shipped.config == model.cfg
    assert shipped.tokenizer.to_str() == tokenizer.to_str()
    ids = torch.randint(0, model.cfg.vocab_size, (1, T), generator=torch.Generator().manual_seed(T))
    with torch.no_grad():
        logits, cache = model(ids, inspect=True)
    cache["logits"] = logits
    got = shipped.inspect(ids[0].tolist())
    for name, value in got.items():
        ref = cache[name].numpy()
        assert np.abs(value - ref).max() <= 1e-5 * max(1.0, np.abs(ref).max()), name
    assert np.abs(shipped.logits(ids[0].tolist()) - logits[0].numpy()).max() <= 1e-4


def test_shipped_tokenizer_file_is_the_models_tokenizer(exported_dir):
    _, tokenizer, _ = load_checkpoint(exported_dir / "softmax.safetensors")
    from models.tokenizer import load_tokenizer

    shipped = load_tokenizer((exported_dir / "tokenizer.json").read_text())
    assert shipped.get_vocab() == tokenizer.get_vocab()


def test_shipped_graph_axis_is_symbolic(exported_dir):
    for kind in KINDS:
        graph = onnx.load(str(exported_dir / contract.graph_file(kind, "inspect")))
        dim = graph.graph.input[0].type.tensor_type.shape.dim[1]
        assert dim.dim_param and not dim.HasField("dim_value")


def test_model_card_meets_targets(card):
    softmax = card["models"]["softmax"]["probes"]
    assert softmax["agreement_accuracy"] >= 0.95
    assert softmax["ioi_accuracy"] >= 0.90
    assert softmax["best_induction_head"]["score"] >= 0.5
    linear = card["models"]["linear"]["probes"]
    for key in ("agreement_accuracy", "ioi_accuracy", "val_perplexity"):
        assert key in linear
    # `make models` trains both at once, one thread each: the elapsed time is the longer one.
    elapsed = max(m["training"]["wall_time_s"] for m in card["models"].values())
    assert elapsed <= 30 * 60


@pytest.mark.parametrize("kind", KINDS)
def test_model_card_matches_checkpoint(exported_dir, card, kind):
    model, _, meta = load_checkpoint(exported_dir / f"{kind}.safetensors")
    entry = card["models"][kind]
    assert entry["config"] == model.cfg.to_dict()
    assert entry["parameters"] == model.num_parameters()
    assert entry["training"]["steps"] == meta["training"]["steps"]
