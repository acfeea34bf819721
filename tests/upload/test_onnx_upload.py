"""ONNX uploads: hostile graphs are refused before anything is resolved, opened or trusted.

Every graph here is real: exported from a tiny model with ``export.graphs`` and then
tampered with by ``tests/helpers/hostile_onnx.py``; the trial runs use real onnxruntime
sessions in the real child process. Nothing is mocked.
"""

from __future__ import annotations

import json
import time

import numpy as np
import onnx
import pytest
import torch
from onnx import helper
from safetensors.torch import save
from tokenizers import Tokenizer
from tokenizers import models as tk_models

from export.graphs import export_model
from models.checkpoint import save_checkpoint
from models.config import ModelConfig
from models.tokenizer import build_tokenizer, wordpiece_tokenizer
from models.transformer import Transformer
from tests.helpers import EXPORTED, hostile, hostile_onnx
from tests.helpers.nanogpt_layout import ARGS, ckpt_bytes, meta_bytes, nanogpt_state
from tests.helpers.shared import built_once
from upload.client import Worker
from upload.convert import main
from upload.errors import UploadError
from upload.formats.ours import read_ours
from upload.limits import MAX_ONNX_NODES, WAIT_FACTOR
from upload.load import load_upload
from upload.onnx_checks import EXPORTER_OPS, validate_onnx
from upload.onnx_parse import MAX_PARTS
from upload.sizes import activation_elements
from upload.tempdirs import EXPORTS_PREFIX


def refused(match: str):
    return pytest.raises(ValueError, match=match)


@pytest.fixture(scope="module")
def linear(tmp_path_factory):
    """A tiny linear-attention model (2 layers, 2 heads, d_head 8, context 16) exported to
    ONNX: (model, tokenizer, folder, {"inspect" | "fast" | "step": ModelProto})."""
    tokenizer = build_tokenizer(["the cat sat on the mat .", "the dogs are in the park ."])
    torch.manual_seed(0)
    cfg = ModelConfig(
        vocab_size=tokenizer.get_vocab_size(), n_layer=2, n_head=2, d_model=16, d_mlp=32,
        context_length=16, attention="linear",
    )  # fmt: skip
    model = Transformer(cfg).eval()

    def build(folder):
        export_model(model, folder, tokenizer, prefix="lin")

    folder = built_once(tmp_path_factory, "onnx_upload_linear", build)  # read-only to tests
    graphs = {
        role: onnx.load(str(folder / f"lin.{role}.onnx")) for role in ("inspect", "fast", "step")
    }
    return model, tokenizer, folder, graphs


def files(**graphs: onnx.ModelProto) -> dict[str, bytes]:
    """Upload dict: ``inspect=proto`` -> {"lin.inspect.onnx": bytes}."""
    return {f"lin.{role}.onnx": g.SerializeToString() for role, g in graphs.items()}


def word_level(vocab: dict[str, int]) -> Tokenizer:
    return Tokenizer(tk_models.WordLevel(vocab, unk_token="[UNK]"))


# --- good graphs ---------------------------------------------------------------------


@pytest.mark.slow
def test_good_graphs_load_and_the_activation_bound_is_exact(linear):
    model, _, _, graphs = linear
    uploaded = load_upload(files(**graphs))
    assert uploaded.has_step and uploaded.card.config["n_layer"] == 2
    ctx = model.cfg.context_length
    out = uploaded.inspect(list(range(ctx)))
    assert sum(a.size for a in out.values()) == activation_elements(model.cfg)


def test_shipped_graphs_use_only_exporter_operators():
    """The decoder-only graphs, which a student may upload again (the translation graphs
    use ONNX's GRU operator and are never uploaded)."""
    for path in sorted(p for p in EXPORTED.glob("*.onnx") if not p.name.startswith("seq2seq_")):
        if path.name.endswith(".lab.onnx"):  # an upload sets it aside (tests/ui/test_lab_views)
            continue
        if path.name in ("delta.inspect.onnx", "delta.fast.onnx"):  # a Scan over the tokens
            with pytest.raises(UploadError, match=r"'Scan' \(.*upload the model's \.safetensors"):
                validate_onnx(path.read_bytes(), path.name)
            continue
        if path.name == "delta.step.onnx":  # its inspect graph cannot come with it
            with pytest.raises(UploadError, match=r"DeltaNet model uploads as its \.safetensors"):
                validate_onnx(path.read_bytes(), path.name)
            continue
        model, _ = validate_onnx(path.read_bytes(), path.name)  # softmax graphs keep a scalar -inf
        assert {n.op_type for n in model.graph.node} <= EXPORTER_OPS, path.name


# --- 1. config metadata that lies about the graph's sizes -----------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "change, message",
    [
        ({"n_layer": 4}, "n_layer: the config says 4, the graph gives 2"),
        ({"n_head": 4}, "n_head: the config says 4, the graph gives 2"),
        ({"d_model": 32, "d_mlp": 64}, "d_head: the config says 16, the graph gives 8"),
        ({"vocab_size": 192}, "vocab_size: the config says 192, the graph gives"),
    ],
)
def test_config_that_does_not_match_the_graph_is_refused(linear, change, message):
    bad = hostile_onnx.with_config(linear[3]["inspect"], **change)
    validate_onnx(bad.SerializeToString())  # statically it looks fine...
    with refused(f"lin.inspect.onnx: refused: the config metadata does not match .*{message}"):
        load_upload(files(inspect=bad))  # ...running it tells


def test_step_graph_shapes_are_checked(linear):
    graphs = linear[3]
    bad = hostile_onnx.rewire_output(graphs["step"], "state_out", hostile_onnx.doubled_first_axis)
    with refused(
        r"lin.step.onnx: refused: .* output 'state_out' has shape \(4, 2, 8, 8\), the config "
        r"needs \(2, 2, 8, 8\) \(n_layer: the config says 2, the graph gives 4\)"
    ):
        load_upload(files(inspect=graphs["inspect"], step=bad))
    lying = {r: hostile_onnx.with_config(g, n_layer=3) for r, g in graphs.items()}
    with refused(
        r"lin.step.onnx: input 'state' declares \[2, 2, 8, 8\]: the config needs n_layer = 3"
    ):
        load_upload(files(step=lying["step"], inspect=lying["inspect"]))


# --- 2. NaN and inf ------------------------------------------------------------------


def test_nan_and_inf_tensors_are_refused_and_named(linear):
    inspect = linear[3]["inspect"]
    bad, name = hostile_onnx.nan_initializer(inspect)
    with refused(f"refused: tensor '{name}' contains NaN or inf"):
        load_upload({"m.onnx": bad.SerializeToString()})
    inf = helper.make_tensor("bad_const", onnx.TensorProto.FLOAT, [2], [1.0, np.inf])
    with refused("refused: tensor 'bad_const' contains NaN or inf"):
        validate_onnx(
            hostile_onnx.with_node(
                inspect, helper.make_node("Constant", [], ["c"], value=inf)
            ).SerializeToString()
        )
    nan = helper.make_node("Constant", [], ["c"], value_floats=[0.5, float("nan")], name="nan_node")
    with refused("refused: the Constant node 'nan_node' contains NaN or inf"):
        validate_onnx(hostile_onnx.with_node(inspect, nan).SerializeToString())
    mask_fill = helper.make_node("Constant", [], ["c"], value_float=-np.inf)  # a mask's -inf
    validate_onnx(hostile_onnx.with_node(inspect, mask_fill).SerializeToString())


def test_output_that_computes_nan_is_refused(linear):
    bad = hostile_onnx.rewire_output(linear[3]["inspect"], "logits", hostile_onnx.add_nan)
    with refused("lin.inspect.onnx: refused: output 'logits' contains NaN or inf on a 3-token"):
        load_upload(files(inspect=bad))


# --- 3. token ids beyond the vocabulary ----------------------------------------------


def test_tokenizer_ids_beyond_vocab_size_are_refused_in_every_format(linear, tmp_path):
    tokenizer = wordpiece_tokenizer({"[UNK]": 0, "the": 1, "cat": 5000})
    bad = hostile_onnx.with_metadata(linear[3]["inspect"], "tokenizer", tokenizer.to_str())
    with refused("m.onnx: the tokenizer has 3 tokens .largest id 5,000. but the model has 146"):
        load_upload({"m.onnx": bad.SerializeToString()})
    cfg = ModelConfig(vocab_size=8, n_layer=1, n_head=2, d_model=8, d_mlp=16, context_length=8)
    save_checkpoint(tmp_path / "ids.safetensors", Transformer(cfg), tokenizer)
    with refused("tokenizer has 3 tokens .largest id 5,000. but the model has 8 token rows"):
        read_ours((tmp_path / "ids.safetensors").read_bytes(), "ids.safetensors")


# --- 4. external data, wherever it hides ---------------------------------------------


WHERE = [
    "function If branch",
    "function attribute default",
    "training_info",
    "sparse_initializer",
    "sparse attribute",
]


@pytest.mark.parametrize("where", WHERE)
def test_external_data_anywhere_is_refused(linear, where):
    bad = hostile_onnx.external_elsewhere(linear[3]["inspect"], where, "../../etc/passwd")
    with refused(r"refused: tensor '.*' points to an outside file \('../../etc/passwd'\)"):
        validate_onnx(bad.SerializeToString())


def test_hidden_external_data_is_never_opened_and_existence_never_leaks(
    linear, tmp_path, monkeypatch
):
    data = hostile_onnx.external_elsewhere(
        linear[3]["inspect"], "function If branch", "weights.bin"
    ).SerializeToString()
    exists, missing = tmp_path / "exists", tmp_path / "missing"
    exists.mkdir(), missing.mkdir()
    sentinel = hostile.OpenDetector(exists / "weights.bin")  # a real file that reports opens
    messages = []
    try:
        for folder in (exists, missing):  # the relative path resolves to each in turn
            monkeypatch.chdir(folder)
            for load in (validate_onnx, lambda d: load_upload({"model.onnx": d})):
                with pytest.raises(ValueError) as info:
                    load(data)
                messages.append(str(info.value))
    finally:
        assert not sentinel.close(), "the external data file was opened"
    assert len(set(messages)) == 1 and "points to an outside file ('weights.bin')" in messages[0]


# --- 5. memory and time --------------------------------------------------------------


def test_activation_memory_is_bounded_in_every_format(linear):
    big = {"context_length": 4096}
    cfg = {**linear[0].cfg.to_dict(), **big}
    data = save(
        {"wte.weight": torch.zeros(1)}, metadata={"config": json.dumps(cfg), "tokenizer": "{}"}
    )
    message = "refused: at its full context of 4096 tokens the outputs the app shows"
    with refused(message):
        load_upload({"long.safetensors": data})
    with refused(message):
        load_upload(
            {
                "ckpt.pt": ckpt_bytes(
                    nanogpt_state(ARGS), {**ARGS, "block_size": 4096}, optimizer=False
                ),
                "meta.pkl": meta_bytes(),
            }
        )
    with refused(message):
        load_upload(files(inspect=hostile_onnx.with_config(linear[3]["inspect"], **big)))


@pytest.mark.parametrize("op", ["Loop", "Scan", "If", "RandomNormal", "SequenceEmpty"])
def test_control_flow_and_unlisted_operators_are_refused(linear, op):
    bad = hostile_onnx.with_node(linear[3]["inspect"], helper.make_node(op, [], ["x"]))
    with refused(f"refused: it uses the operator '{op}'"):
        validate_onnx(bad.SerializeToString())


def test_graph_with_too_many_parts_is_refused_before_the_slow_passes(linear):
    bad = hostile_onnx.copy(linear[3]["inspect"])
    bad.graph.node.extend(
        helper.make_node("Identity", [f"pad{i}"], [f"pad{i + 1}"]) for i in range(MAX_PARTS)
    )
    start = time.monotonic()
    with refused(
        f"refused: the model has more than {MAX_ONNX_NODES:,} nodes or {MAX_PARTS:,} parts"
    ):
        validate_onnx(bad.SerializeToString())
    assert time.monotonic() - start < 10


@pytest.mark.parametrize("shape", [[65536, 65536, 16], [1024, 1024, 1024]])  # 256 GiB, 4 GiB
def test_graph_that_allocates_too_much_is_refused_by_the_fenced_child(linear, shape):
    bad = hostile_onnx.rewire_output(linear[3]["inspect"], "logits", hostile_onnx.allocate(shape))
    validate_onnx(bad.SerializeToString())  # nothing static gives it away
    with refused("lin.inspect.onnx.*: refused: .*(memory|3 GiB)"):
        load_upload(files(inspect=bad))


def test_sizes_set_by_token_values_are_refused(linear):
    """The trial cannot try every sentence, so sizes may follow only its length."""
    bad = hostile_onnx.rewire_output(
        linear[3]["inspect"], "logits", hostile_onnx.allocate_by_token_value
    )
    with refused(
        "refused: the size of the ConstantOfShape output 'h_big' depends on the values of "
        "the inputs"
    ):
        validate_onnx(bad.SerializeToString())


def test_graph_that_runs_too_long_is_refused_by_the_timeout(linear):
    """It never ends: it is stopped after 3 s of CPU time, or at the wall-clock cap
    (WAIT_FACTOR x 3 s) when the machine kept it waiting for a CPU too long for that."""
    bad = hostile_onnx.rewire_output(linear[3]["inspect"], "logits", hostile_onnx.slow())
    start = time.monotonic()
    worker = Worker("slow.onnx")
    with refused(
        r"^slow.onnx: stopped: (it took longer than 3 s|the server was too busy to give it "
        rf"3 s of CPU time within {WAIT_FACTOR * 3:g} s; try again later)$"
    ):
        worker.request({"op": "open"}, 3, blobs={"slow.onnx": bad.SerializeToString()})
    assert time.monotonic() - start < WAIT_FACTOR * 3 + 5
    assert worker.proc is None  # killed and forgotten; the next request starts a fresh one


# --- 7. the CLI ----------------------------------------------------------------------


def test_cli_prints_the_card_of_a_valid_onnx(linear, capsys):
    folder = linear[2]
    main([str(folder / "lin.inspect.onnx"), str(folder / "lin.fast.onnx")])
    out = capsys.readouterr().out
    for line in ("accepted: lin.inspect.onnx", "n_layer: 2", "n_head: 2", "d_model: 16",
                 "d_head: 8", "attention: linear", "position_scheme: sinusoidal",
                 "source: ONNX"):  # fmt: skip
        assert line in out.splitlines(), out
    assert any(line.startswith("parameters: ") for line in out.splitlines())


@pytest.mark.parametrize("kind", ["lying config", "external data"])
def test_cli_refuses_a_hostile_onnx_with_exit_code_2(linear, tmp_path, capsys, kind):
    inspect = linear[3]["inspect"]
    bad = (
        hostile_onnx.with_config(inspect, n_layer=4)
        if kind == "lying config"
        else hostile.external_initializer(inspect, "/etc/passwd")
    )
    path = tmp_path / "evil.onnx"
    path.write_bytes(bad.SerializeToString())
    with pytest.raises(SystemExit) as exit_info:
        main([str(path)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("refused: evil.onnx") and ("n_layer" in err or "outside file" in err)


# --- 6. temporary folders -----------------------------------------------------------


@pytest.mark.slow
def test_each_conversion_cleans_up_its_own_temp_folder(linear, tmp_path, monkeypatch):
    model, tokenizer = linear[0], linear[1]
    good, bad = tmp_path / "good.safetensors", tmp_path / "bad.safetensors"
    save_checkpoint(good, model, tokenizer)
    nan_model = Transformer(model.cfg)
    with torch.no_grad():
        nan_model.blocks[1].mlp.c_fc.weight[0, 0] = float("nan")
    save_checkpoint(bad, nan_model, tokenizer)
    base = tmp_path / "tmpbase"
    base.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(base))
    assert load_upload({"model.safetensors": good.read_bytes()}).card.config["n_layer"] == 2
    with refused("weight blocks.1.mlp.c_fc.weight contains NaN or inf"):
        load_upload({"model.safetensors": bad.read_bytes()})
    # the server's export cache keeps one folder for its whole life (upload/export_cache.py):
    # made here when this is the process's first export; every conversion's own is gone
    left = [p.name for p in base.iterdir() if not p.name.startswith(EXPORTS_PREFIX)]
    assert left == [], left
