"""Local weights files (a Hugging Face folder's) read without running their code: what is
read, and what is refused in one line."""

from __future__ import annotations

import re
import zipfile

import pytest
import torch
from safetensors.torch import save_file

from tests.helpers.hostile import Touch
from upload.errors import UploadError
from upload.formats.local_weights import read_safetensors, read_torch_zip
from upload.limits import local_file_limits

LIMITS = local_file_limits(1)


def test_safetensors_are_read_and_buffers_skipped(tmp_path):
    path = tmp_path / "model.safetensors"
    mask = torch.tril(torch.ones(4, 4, dtype=torch.bool))
    save_file({"h.0.attn.bias": mask, "wte.weight": torch.ones(3, 2)}, str(path))
    state = read_safetensors(path, "g/model.safetensors", LIMITS, skip=re.compile(r"attn\.bias"))
    assert list(state) == ["wte.weight"] and state["wte.weight"].sum() == 6
    with pytest.raises(UploadError, match="'h.0.attn.bias' is BOOL, not a float tensor"):
        read_safetensors(path, "g/model.safetensors", LIMITS)


def test_a_truncated_safetensors_file_is_one_line(tmp_path):
    path = tmp_path / "model.safetensors"
    save_file({"wte.weight": torch.ones(300, 20)}, str(path))
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(UploadError, match="g/model.safetensors: truncated or corrupt"):
        read_safetensors(path, "g/model.safetensors", LIMITS)


def test_a_torch_zip_is_read_by_memory_map(tmp_path):
    path = tmp_path / "pytorch_model.bin"
    torch.save({"wte.weight": torch.arange(6.0).view(3, 2)}, path)
    state = read_torch_zip(path, "g/pytorch_model.bin", LIMITS)
    assert state["wte.weight"].tolist() == [[0, 1], [2, 3], [4, 5]]


def test_a_pickle_that_runs_code_is_refused_and_runs_nothing(tmp_path):
    path, marker = tmp_path / "pytorch_model.bin", tmp_path / "ran"
    torch.save({"w": torch.zeros(2), "x": Touch(marker)}, path)
    with pytest.raises(UploadError, match=r"g/pytorch_model.bin: refused: it tries to load"):
        read_torch_zip(path, "g/pytorch_model.bin", LIMITS)
    assert not marker.exists()


def test_compressed_members_and_the_old_format_are_refused(tmp_path):
    path = tmp_path / "pytorch_model.bin"
    torch.save({"w": torch.zeros(1000)}, path)
    packed = tmp_path / "packed.bin"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info))
    with pytest.raises(UploadError, match="refused: compressed members"):
        read_torch_zip(packed, "g/pytorch_model.bin", LIMITS)
    legacy = tmp_path / "legacy.bin"
    torch.save({"w": torch.zeros(3)}, legacy, _use_new_zipfile_serialization=False)
    with pytest.raises(UploadError, match="not a PyTorch zip checkpoint"):
        read_torch_zip(legacy, "g/pytorch_model.bin", LIMITS)
