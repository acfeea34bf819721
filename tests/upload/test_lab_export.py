"""An upload's lab graph (#45) is exported when a lab view first asks, once per shared
model: the upload opens without it (one export less before its first view), and every
session of the same checkpoint gets the one export."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from inference import lab
from models.checkpoint import save_checkpoint
from models.lab import lab_forward
from tests.helpers.export_cache import tiny_model
from upload.load import load_upload


@pytest.mark.slow
def test_the_lab_graph_is_made_on_first_use_and_shared(tmp_path, tiny_tokenizer):
    model = tiny_model("softmax", tiny_tokenizer)
    path = tmp_path / "tiny.safetensors"
    save_checkpoint(path, model, tiny_tokenizer)
    first = load_upload({"tiny.safetensors": path.read_bytes()})
    assert first.has_lab and not first.lab_graph.opened
    ids = [1, 4, 2, 7, 3, 5]
    mask = np.zeros((1, 2, 2, len(ids)), np.float32)
    mask[0, 1, 0] = 1.0  # L1 H0 zeroed
    out = lab.lab(first, ids, head_mask=mask)
    assert first.lab_graph.opened
    with torch.no_grad():
        want = lab_forward(model.eval(), torch.tensor([ids]), torch.from_numpy(mask),
                           torch.zeros(1, 2, 2, len(ids), 16), torch.zeros(1, 3, len(ids)),
                           torch.zeros(1, 3, len(ids), 32))[0]  # fmt: skip
    assert np.abs(out["logits"] - want.numpy()).max() <= 1e-5
    second = load_upload({"again.safetensors": path.read_bytes()})  # another session's
    assert second.lab_graph is first.lab_graph  # the same graph, already open
