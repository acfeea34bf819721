"""ONNX graphs against PyTorch, recurrent step graph against the parallel form.

Every comparison here is absolute: max |onnx - pytorch| <= 1e-5 for every output. The
tiny random models keep values small (logits ~0.4, the cumulative normalizer ~20 at
T = 16), so float32 rounding stays near 4e-6 at worst (measured). The trained, shipped
models are compared in ``test_shipped.py``, where larger values need a relative bound.
"""

from pathlib import Path

import numpy as np
import onnx
import pytest
import torch

from export.checks import check_graph, square_sequence_tensors, tensor_sizes
from export.graphs import build_parser, targets
from inference.runtime import load_graphs
from models import contract
from models.attention import LinearAttention
from models.checkpoint import SHIPPED_DIR
from models.config import ATTENTION_KINDS, SHIPPED_KINDS

LENGTHS = [1, 2, 7, 16]  # 16 = the tiny models' context length
ATOL = 1e-5


def max_abs_diff(a, b) -> float:
    """max |a - b| over all elements, after checking the shapes agree."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.abs(a - b).max())


def open_model(folder, kind):
    step = folder / contract.graph_file(kind, "step")
    return load_graphs(
        str(folder / contract.graph_file(kind, "inspect")),
        str(folder / contract.graph_file(kind, "fast")),
        str(step) if step.exists() else None,
    )


def random_ids(model, T):
    return torch.randint(
        0, model.cfg.vocab_size, (1, T), generator=torch.Generator().manual_seed(T)
    )


@pytest.mark.parametrize("kind", ATTENTION_KINDS)
@pytest.mark.parametrize("T", LENGTHS)
def test_onnx_matches_pytorch(tiny_exports, kind, T):
    model, folder = tiny_exports[kind]
    onnx_model = open_model(folder, kind)
    ids = random_ids(model, T)
    with torch.no_grad():
        logits, cache = model(ids, inspect=True)
    got = onnx_model.inspect(ids[0].tolist())
    assert set(got) == set(contract.inspect_outputs(kind))
    cache["logits"] = logits
    for name, value in got.items():
        assert max_abs_diff(value, cache[name]) <= ATOL, name
    assert max_abs_diff(onnx_model.logits(ids[0].tolist()), logits[0]) <= ATOL


@pytest.mark.parametrize("T", LENGTHS)
def test_delta_step_graph_rolled_equals_parallel_and_generates(tiny_exports, T):
    """DeltaNet's step graph (state S and the convolution window) rolled over the sentence
    gives the inspect graph's logits and states; generation runs on it (O(1) per token)."""
    model, folder = tiny_exports["delta"]
    onnx_model = open_model(folder, "delta")
    assert onnx_model.has_step
    ids = torch.randint(0, model.cfg.vocab_size, (T,), generator=torch.Generator().manual_seed(T))
    parallel = onnx_model.inspect(ids.tolist())
    rec = onnx_model.recurrent(ids.tolist())
    assert max_abs_diff(rec["logits"], parallel["logits"][0]) <= ATOL
    assert max_abs_diff(rec["state"], parallel["state"]) <= ATOL
    new, _ = onnx_model.generate(ids.tolist(), 3)
    greedy = ids.tolist()
    for _ in range(len(new)):  # the same tokens as greedy decoding on the fast graph
        greedy.append(int(np.argmax(onnx_model.logits(greedy)[-1])))
    assert new == greedy[T:]


@pytest.mark.parametrize("T", LENGTHS)
def test_step_graph_rolled_equals_parallel(tiny_exports, T):
    model, folder = tiny_exports["linear"]
    onnx_model = open_model(folder, "linear")
    ids = torch.randint(0, model.cfg.vocab_size, (T,), generator=torch.Generator().manual_seed(T))
    parallel = onnx_model.inspect(ids.tolist())
    rec = onnx_model.recurrent(ids.tolist())
    assert max_abs_diff(rec["logits"], parallel["logits"][0]) <= ATOL
    assert max_abs_diff(rec["state"], parallel["state"]) <= ATOL
    assert max_abs_diff(rec["normalizer"], parallel["normalizer"]) <= ATOL


@pytest.mark.parametrize("T", LENGTHS)
def test_step_graph_rolled_equals_pytorch_recurrent(tiny_exports, T):
    """The ONNX step graph, rolled from a zero state, against PyTorch's recurrent form:
    ``Transformer.step`` rolled the same way, and ``LinearAttention.recurrent_loop`` (the
    reference loop) on each layer's q, k, v."""
    model, folder = tiny_exports["linear"]
    ids = random_ids(model, T)
    rec = open_model(folder, "linear").recurrent(ids[0].tolist())
    cfg = model.cfg
    S = torch.zeros(cfg.n_layer, cfg.n_head, cfg.d_head, cfg.d_head)  # (L, H, D, D)
    z = torch.zeros(cfg.n_layer, cfg.n_head, cfg.d_head)  # (L, H, D)
    logits, states, normalizers = [], [], []
    with torch.no_grad():
        for i in range(T):
            lg, S, z = model.step(ids[:, i : i + 1], torch.tensor([i]), S, z)  # (1, V), S, z
            logits.append(lg[0])
            states.append(S)
            normalizers.append(z)
        _, cache = model(ids, inspect=True)
        ref_out, ref_S, ref_z = LinearAttention(cfg).recurrent_loop(
            cache["q"], cache["k"], cache["v"]
        )  # (L, H, T, D), (L, H, T, D, D), (L, H, T, D): layers as the batch axis
    assert max_abs_diff(rec["logits"], torch.stack(logits)) <= ATOL  # (T, V)
    assert max_abs_diff(rec["state"], torch.stack(states, 2)) <= ATOL  # (L, H, T, D, D)
    assert max_abs_diff(rec["normalizer"], torch.stack(normalizers, 2)) <= ATOL
    assert max_abs_diff(rec["state"], ref_S) <= ATOL
    assert max_abs_diff(rec["normalizer"], ref_z) <= ATOL
    assert max_abs_diff(cache["head_out"], ref_out) <= ATOL


def sequence_square(path):
    return square_sequence_tensors(onnx.load(str(path), load_external_data=False))


def test_linear_fast_graph_has_no_t_by_t_tensor(tiny_exports):
    """Every tensor of the fast linear graph, run at T = 97 and 194, grows at most
    linearly with T (``square_sequence_tensors``). The softmax graphs must have one
    (QK^T), which shows the check can fail."""
    _, linear = tiny_exports["linear"]
    assert sequence_square(linear / contract.graph_file("linear", "fast")) == []
    _, softmax = tiny_exports["softmax"]
    for graph in ("inspect", "fast"):
        assert sequence_square(softmax / contract.graph_file("softmax", graph))
    assert sequence_square(linear / contract.graph_file("linear", "inspect"))  # attn, scores


def test_linear_fast_graph_keeps_no_state_per_token(tiny_exports):
    """The chunked fast graph holds no tensor as large as one state per token,
    (1, H, T, d_head, d_head), at T = 194; the inspect graph, which outputs those states,
    does (so the check can fail)."""
    model, folder = tiny_exports["linear"]
    cfg, T = model.cfg, 194
    per_token = cfg.n_head * T * cfg.d_head**2
    for graph, has in (("fast", False), ("inspect", True)):
        path = folder / contract.graph_file("linear", graph)
        sizes = tensor_sizes(onnx.load(str(path)), (97, T))
        assert (max(b for _, b in sizes.values()) >= per_token) == has, graph


@pytest.mark.parametrize("T", [70, 150])  # two and three chunks of 64, neither a multiple
def test_linear_fast_graph_is_chunked_and_matches_pytorch_past_a_chunk(tiny_exports, T):
    """The chunked fast graph (``models/causal_product.py``) at lengths past one chunk,
    on the graph exported once at the tracing example's 8 tokens: T stays symbolic and
    the logits equal PyTorch's fast and parallel (inspect) forms within 1e-5."""
    model, folder = tiny_exports["linear"]
    path = folder / contract.graph_file("linear", "fast")
    dim = onnx.load(str(path)).graph.input[0].type.tensor_type.shape.dim[1]
    assert dim.dim_param and not dim.HasField("dim_value")
    ids = random_ids(model, T)
    with torch.no_grad():
        fast = model(ids)[0]  # (T, V), the chunked form
        parallel = model(ids, inspect=True)[0][0]  # (T, V), the parallel form
    session = open_model(folder, "linear").fast_session  # the app stops at the context
    got = session.run(["logits"], {contract.INPUT_NAME: ids.numpy()})[0][0]  # (T, V)
    assert max_abs_diff(got, fast) <= ATOL and max_abs_diff(got, parallel) <= ATOL


def test_the_softmax_fast_graph_is_its_inspect_graph_pruned_to_the_logits(tiny_exports):
    """export.graphs.prune_to_logits: one output, fewer nodes and no initializer that only
    the analysis outputs need; its logits equal the inspect graph's to float32 rounding
    (onnxruntime fuses more where the weights are no graph output)."""
    model, folder = tiny_exports["softmax"]
    inspect = onnx.load(str(folder / contract.graph_file("softmax", "inspect")))
    fast = onnx.load(str(folder / contract.graph_file("softmax", "fast")))
    assert [o.name for o in fast.graph.output] == ["logits"]
    assert len(inspect.graph.output) > 1 and len(fast.graph.node) < len(inspect.graph.node)
    assert {i.name for i in fast.graph.initializer} <= {i.name for i in inspect.graph.initializer}
    onnx_model = open_model(folder, "softmax")
    ids = random_ids(model, 16)[0].tolist()
    fast_logits, logits = onnx_model.logits(ids), onnx_model.inspect(ids)["logits"][0]
    assert max_abs_diff(fast_logits, logits) <= 1e-6


@pytest.mark.slow  # every kind's export, DeltaNet's included
def test_graphs_are_self_contained_and_dynamic(tiny_exports):
    for _, folder in tiny_exports.values():
        for path in folder.glob("*.onnx"):
            assert not list(folder.glob("*.data"))
            graph = onnx.load(str(path), load_external_data=False)
            if "step" not in path.name:
                check_graph(path, {contract.INPUT_NAME: 1})
                dim = graph.graph.input[0].type.tensor_type.shape.dim[1]
                assert dim.dim_param and not dim.HasField("dim_value")
            props = {p.key for p in graph.metadata_props}
            assert {"config", "tokenizer"} <= props


def test_check_graph_rejects_frozen_axis(tmp_path):
    x = onnx.helper.make_tensor_value_info("input_ids", onnx.TensorProto.INT64, [1, 5])
    y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.INT64, [1, 5])
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Identity", ["input_ids"], ["y"])], "g", [x], [y]
    )
    path = tmp_path / "frozen.onnx"
    onnx.save(onnx.helper.make_model(graph), str(path))
    with pytest.raises(ValueError, match="frozen"):
        check_graph(path, {"input_ids": 1})


def test_generate_uses_step_graph_and_matches_greedy(tiny_exports):
    _, folder = tiny_exports["linear"]
    onnx_model = open_model(folder, "linear")
    ids = [3, 4, 5]
    new, probs = onnx_model.generate(ids, 4)
    seq, expected = list(ids), []
    for _ in range(4):  # greedy by recomputing the whole prefix in the fast graph
        logits = onnx_model.logits(seq)[-1]  # (V,)
        seq.append(int(np.argmax(logits)))
        expected.append(float(np.exp(logits.max() - np.logaddexp.reduce(logits))))
    assert new == seq[3:]
    np.testing.assert_allclose(probs, expected, rtol=1e-4)  # the model's p of each pick


def test_export_cli_defaults_to_the_shipped_models():
    """With no checkpoints named, export the shipped ones into exported/ (resolved only:
    nothing is written)."""
    parse = build_parser()
    checkpoints, out = targets(parse.parse_args([]))
    assert checkpoints == [SHIPPED_DIR / f"{kind}.safetensors" for kind in SHIPPED_KINDS]
    assert out == SHIPPED_DIR
    assert all(p.exists() for p in checkpoints)
    checkpoints, out = targets(parse.parse_args(["runs/a.safetensors"]))
    assert checkpoints == [Path("runs/a.safetensors")] and out is None
