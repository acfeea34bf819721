"""Exports kept per server: the same checked data gives the same graphs without a second
export; any change of the data is a new export; the cache stays within its bytes."""

from __future__ import annotations

import gc
import os
import weakref

import numpy as np
import pytest

from tests.helpers.checkpoints import tiny_checkpoint
from upload import opened
from upload.errors import UploadError
from upload.export_cache import EXPORTS, ExportCache, export_key
from upload.load import load_upload
from upload.tempdirs import EXPORTS_PREFIX

CONFIG = {"d_model": 8, "n_layer": 1}
SPEC = {"kind": "char", "vocab": ["a", "b"]}


def _weights(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"b.weight": rng.standard_normal((3, 2), np.float32), "a.bias": np.zeros(3, np.float32)}


def test_the_key_is_the_data_and_nothing_else():
    key = export_key(CONFIG, SPEC, _weights())
    assert (
        export_key(dict(reversed(CONFIG.items())), SPEC, dict(reversed(_weights().items()))) == key
    )
    changed = _weights()
    changed["b.weight"][1, 1] = np.nextafter(changed["b.weight"][1, 1], np.float32(9))  # one ulp
    reshaped = {**_weights(), "a.bias": np.zeros((1, 3), np.float32)}
    renamed = {"c.bias" if k == "a.bias" else k: v for k, v in _weights().items()}
    others = [
        export_key(CONFIG, SPEC, changed),
        export_key(CONFIG, SPEC, reshaped),
        export_key(CONFIG, SPEC, renamed),
        export_key({**CONFIG, "n_layer": 2}, SPEC, _weights()),
        export_key(CONFIG, {**SPEC, "vocab": ["a", "c"]}, _weights()),
    ]
    assert len({key, *others}) == 6


def test_a_large_vocabulary_is_keyed_by_every_entry_in_any_order():
    """A vocabulary larger than one piece of the hash (``models.pieces.PIECE``): the same
    entries in another order give the same key; one id, one token, one entry more or
    one merge changed give another."""
    words = {f"w{i}": i for i in range(20_000)}  # many pieces
    spec = {"kind": "wordpiece", "vocab": words, "merges": [["a", "b"]] * 10_000}
    key = export_key(CONFIG, spec, _weights())
    shuffled = dict(reversed(list(words.items())))
    assert export_key(CONFIG, {**spec, "vocab": shuffled}, _weights()) == key
    last = {**words, "w19999": 0}
    renamed = {("x" if t == "w12345" else t): i for t, i in words.items()}
    longer = {**words, "extra": 20_000}
    merges = [["a", "b"]] * 9_999 + [["a", "c"]]
    others = {
        export_key(CONFIG, {**spec, "vocab": v}, _weights()) for v in (last, renamed, longer)
    } | {export_key(CONFIG, {**spec, "merges": merges}, _weights())}
    assert key not in others and len(others) == 4


def test_least_recently_used_graphs_leave_first_and_big_ones_are_not_kept():
    cache = ExportCache(capacity=100)
    cache.put("a", {"inspect": b"x" * 40})
    cache.put("b", {"inspect": b"x" * 40})
    assert cache.get("a") is not None  # a is now the most recently used
    cache.put("c", {"inspect": b"x" * 40})  # 120 bytes > 100: b leaves
    assert cache.get("b") is None and cache.get("a") and cache.get("c")
    assert cache.size == 80
    cache.put("d", {"inspect": b"x" * 30, "fast": b"x" * 30})  # over half the capacity
    assert cache.get("d") is None and cache.size == 80
    assert (cache.hits, cache.misses) == (3, 2)


def test_graphs_are_kept_on_disk_and_a_lost_file_is_a_miss(tmp_path, monkeypatch):
    """The graphs lie in the cache's own folder (not in the server's memory, issue #25),
    named by this process; a file removed meanwhile gives None, never other bytes; the
    folder goes with the cache."""
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    cache = ExportCache(capacity=1000)
    cache.put("k1", {"inspect": b"i" * 10, "fast": b"f" * 20})
    (folder,) = tmp_path.glob(f"{EXPORTS_PREFIX}{os.getpid()}-*")
    assert (folder / "k1" / "fast").read_bytes() == b"f" * 20
    assert cache.get("k1") == {"inspect": b"i" * 10, "fast": b"f" * 20}
    (folder / "k1" / "fast").write_bytes(b"other")  # changed under the cache
    assert cache.get("k1") is None and cache.size == 0
    cache.put("k2", {"inspect": b"x"})
    (folder / "k2" / "inspect").unlink()
    assert cache.get("k2") is None
    del cache
    gc.collect()
    assert not folder.exists()


@pytest.mark.slow
def test_a_second_upload_of_the_same_weights_is_not_exported_again(tmp_path, monkeypatch):
    """Identical uploads share one opened model (upload/opened.py) while a session holds
    it; after the last one lets go it is freed, and the next identical upload's graphs
    come from the export cache. Other weights are exported and opened anew."""
    first = tiny_checkpoint(tmp_path / "teacher.safetensors", seed=11)
    other = tiny_checkpoint(tmp_path / "other.safetensors", seed=12)
    gc.collect()  # an earlier test's dropped upload must not be freed in the middle of this one
    hits, held = EXPORTS.hits, opened.open_bytes()
    a = load_upload({"teacher.safetensors": first.read_bytes()})
    assert EXPORTS.hits == hits and opened.open_bytes() > held  # exported, opened
    one = opened.open_bytes() - held
    b = load_upload({"student-copy.safetensors": first.read_bytes()})  # same bytes, new name
    assert b.name == "upload: student-copy.safetensors" and a.name == "upload: teacher.safetensors"
    assert b.card.checkpoint == "student-copy.safetensors"
    assert b.inspect_session is a.inspect_session and b.weights is a.weights  # shared
    assert opened.open_bytes() == held + one  # no second copy
    ids = [1, 2, 3]
    np.testing.assert_array_equal(a.inspect(ids)["attn"], b.inspect(ids)["attn"])
    c = load_upload({"other.safetensors": other.read_bytes()})
    assert EXPORTS.hits == hits  # other weights: exported
    assert c.inspect_session is not a.inspect_session
    assert not np.array_equal(a.inspect(ids)["attn"], c.inspect(ids)["attn"])
    teachers = weakref.ref(a.shared)
    del a, b
    gc.collect()
    assert teachers() is None  # the last session let go: the teacher's model was freed
    assert opened.open_bytes() == held + one  # c's only
    again = load_upload({"teacher.safetensors": first.read_bytes()})
    assert EXPORTS.hits == hits + 1  # opened again from the cached graphs, not exported
    # Past the server's budget for open uploads, a new one is one line, before any export
    # (no worker's CPU spent on a model that cannot be opened); the open ones work.
    monkeypatch.setattr(opened, "OPEN_UPLOADS_BYTES", opened.open_bytes() + 1)
    third = tiny_checkpoint(tmp_path / "t.safetensors", 13).read_bytes()
    misses = EXPORTS.misses
    with pytest.raises(UploadError, match=r"^third.safetensors: the server holds .* MB"):
        load_upload({"third.safetensors": third})
    assert EXPORTS.misses == misses  # refused before the export cache was even asked
    assert again.inspect(ids)["attn"].shape[-1] == 3
