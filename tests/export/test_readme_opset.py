"""The README's table of exports known to work names the TorchScript exporter's default
opset: it must be the one the installed torch writes (#44 item 24: it said 17, torch 2.13
writes 20)."""

from __future__ import annotations

import re

import torch
from torch.onnx import _constants

from tests.helpers import ROOT


def test_the_readme_names_the_torchscript_exporter_s_default_opset():
    row = next(
        line for line in (ROOT / "README.md").read_text().splitlines()
        if line.startswith("| TorchScript (`dynamo=False`")
    )  # fmt: skip
    said = re.search(r"default opset: (\d+) in torch (\d+\.\d+)", row)
    assert said, row
    assert int(said.group(1)) == _constants.ONNX_DEFAULT_OPSET, row
    assert torch.__version__.startswith(said.group(2)), (row, torch.__version__)
