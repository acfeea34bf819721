"""The lab graphs (``<kind>.lab.onnx``): the shipped ones compute the inspect graph's numbers
when nothing is overridden, and the PyTorch lab forward's under random overrides; their
sequence axis (and batch axis, but DeltaNet's) is symbolic; every export has one."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import torch

from inference import lab
from inference.runtime import load_shipped
from models import contract
from models.checkpoint import load_checkpoint
from models.config import SHIPPED_KINDS
from models.lab import lab_forward


@pytest.fixture(scope="module", params=SHIPPED_KINDS)
def shipped(request, exported_dir):
    return request.param, load_shipped(exported_dir, request.param)


def test_no_override_equals_the_inspect_graph(shipped):
    kind, model = shipped
    ids = list(np.random.default_rng(0).integers(0, model.config.vocab_size, 20))
    out = lab.lab(model, ids, B=3)
    ref = model.inspect(ids, ("logits", "head_out", *contract.block_outputs(model.config.n_layer)))
    L = model.config.n_layer
    resid = np.stack(
        [ref[f"blocks.{i}.resid_pre"] for i in range(L)] + [ref[f"blocks.{L - 1}.resid_post"]]
    )
    for b in range(3):  # every run of the batch
        assert (
            np.abs(out["logits"][b] - ref["logits"][0]).max() <= 1e-6 * np.abs(ref["logits"]).max()
        )
        assert (
            np.abs(out["head_out"][b] - ref["head_out"]).max()
            <= 1e-6 * np.abs(ref["head_out"]).max()
        )
        assert np.abs(out["resid"][b] - resid).max() <= 1e-6 * np.abs(resid).max()


def test_overrides_match_pytorch(shipped, exported_dir):
    kind, model = shipped
    torch_model, _, _ = load_checkpoint(exported_dir / f"{kind}.safetensors")
    cfg, T, B = model.config, 12, 2
    rng = np.random.default_rng(1)
    feeds = lab.overrides(cfg, B, T)
    feeds["head_mask"][:] = rng.random(feeds["head_mask"].shape) < 0.3
    feeds["head_values"][:] = rng.normal(size=feeds["head_values"].shape)
    feeds["resid_mask"][:] = rng.random(feeds["resid_mask"].shape) < 0.1
    feeds["resid_values"][:] = rng.normal(size=feeds["resid_values"].shape)
    ids = rng.integers(0, cfg.vocab_size, (B, T))
    got = model.lab({**feeds, "input_ids": ids})
    with torch.no_grad():
        want = lab_forward(torch_model.eval(), torch.from_numpy(ids),
                           *(torch.from_numpy(feeds[n]) for n in contract.LAB_INPUTS[1:]))  # fmt: skip
    for name, ref in zip(contract.LAB_OUTPUTS, want, strict=True):
        ref = ref.numpy()
        if ref.dtype == np.int64:
            assert (got[name] == ref).mean() >= 0.98, name  # near-ties may flip
        else:
            scale = max(1.0, float(np.abs(ref).max()))
            assert np.abs(got[name] - ref).max() <= 1e-4 * scale, name


def test_axes_are_symbolic(exported_dir):
    for kind in SHIPPED_KINDS:
        graph = onnx.load(str(exported_dir / f"{kind}.lab.onnx"), load_external_data=False)
        ids = next(i for i in graph.graph.input if i.name == "input_ids").type.tensor_type.shape
        assert ids.dim[1].dim_param, kind
        assert bool(ids.dim[0].dim_param) == (kind != "delta"), kind  # delta: one run a call
        assert [i.name for i in graph.graph.input] == list(contract.LAB_INPUTS)
        assert [o.name for o in graph.graph.output] == list(contract.LAB_OUTPUTS)


@pytest.mark.parametrize("kind", ["softmax", "delta"])
def test_every_export_has_a_lab_graph(tiny_exports, kind):
    model, folder = tiny_exports[kind]
    assert (folder / f"{kind}.lab.onnx").exists()
    assert (folder / f"{kind}.inspect.onnx").exists()


@pytest.mark.parametrize("kind", ["softmax", "linear"])
def test_a_fresh_lab_graph_equals_its_inspect_graph(tiny_exports, kind):
    """An export made now (TorchScript and onnxscript's optimizer for both graphs,
    ``export.torch_export.traced_export``): with nothing overridden, every run of the
    batch has the inspect graph's logits and head outputs within 1e-6 of their largest."""
    import onnxruntime as ort

    model, folder = tiny_exports[kind]
    opened = {
        g: ort.InferenceSession(
            str(folder / f"{kind}.{g}.onnx"), providers=["CPUExecutionProvider"]
        )
        for g in ("inspect", "lab")
    }
    names = [o.name for o in opened["inspect"].get_outputs()]
    ids = np.random.default_rng(0).integers(0, model.cfg.vocab_size, (1, 13))  # (1, T)
    ref = dict(zip(names, opened["inspect"].run(None, {"input_ids": ids}), strict=True))
    feeds = {"input_ids": np.repeat(ids, 2, axis=0), **lab.overrides(model.cfg, 2, 13)}
    out = dict(zip(contract.LAB_OUTPUTS, opened["lab"].run(None, feeds), strict=True))
    for b in range(2):
        for name, want in (("logits", ref["logits"][0]), ("head_out", ref["head_out"])):
            gap = np.abs(out[name][b] - want).max() / np.abs(want).max()
            assert gap <= 1e-6, (kind, name, gap)
