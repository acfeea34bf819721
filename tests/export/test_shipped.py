"""The shipped exported/ folder: graphs match the checkpoints, the card meets its targets.

Tolerances. ``attn`` (probabilities) and ``pos_enc`` (sin/cos) are bounded by 1 and
are compared absolutely: max |onnx - pytorch| <= 1e-5 (measured: <= 2.1e-6). Every other
output of the trained models is compared relatively, max |a - b| <= 1e-5 * max(1,
max |ref|), because an absolute 1e-5 is not reachable in float32 there: on the inputs
below the values reach |k| ~ 29, logits ~ 33, scores ~ 170 and the cumulative state
~ 520 (a float32 near 520 has a spacing of 6.1e-5), and onnxruntime and PyTorch sum the
same products in different orders, so they differ by about 1e-6 * max |value| (measured
worst: 9.5e-6 on k, 2.6e-5 on logits, 8.4e-5 on scores, 1.8e-4 on the state; 3.8e-6
relative). Turning
onnxruntime's graph optimizations off (ORT_DISABLE_ALL) moves these by a few ulps but
brings none of them under 1e-5 (measured).
"""

import json

import numpy as np
import onnx
import pytest
import torch

from export.checks import square_sequence_tensors
from inference.runtime import load_shipped
from models import contract
from models.attention import LinearAttention
from models.checkpoint import load_checkpoint
from models.config import SHIPPED_KINDS
from models.delta import recurrent_delta

ABSOLUTE = ("attn", "pos_enc")  # bounded by 1: absolute 1e-5


def within(got, ref, name) -> bool:
    """Absolute 1e-5 for ``ABSOLUTE`` outputs, else 1e-5 relative to max(1, max |ref|)."""
    got, ref = np.asarray(got), np.asarray(ref)
    assert got.shape == ref.shape, (name, got.shape, ref.shape)
    scale = 1.0 if name in ABSOLUTE else max(1.0, float(np.abs(ref).max()))
    return float(np.abs(got - ref).max()) <= 1e-5 * scale


@pytest.fixture(scope="module")
def card(exported_dir):
    return json.loads((exported_dir / "model_card.json").read_text())


def test_exported_folder_is_small_and_self_contained(exported_dir):
    files = list(exported_dir.iterdir())
    total = sum(f.stat().st_size for f in files)  # the decoder-only and translation models
    # issue #10 allowed 30 MB for two models and the translation ones; the third shipped
    # model (DeltaNet, #22: its checkpoint and three graphs) adds 11.4 MB, the three lab
    # graphs (#45: each holds its model's weights, as every graph does) 8.5 MB
    assert total <= 51_000_000, f"exported/ holds {total:,} bytes; 51 MB allowed"
    assert not [f for f in files if f.name.endswith(".data")]
    for kind in SHIPPED_KINDS:
        assert (exported_dir / contract.graph_file(kind, "inspect")).exists()
        assert (exported_dir / contract.graph_file(kind, "fast")).exists()
    assert (exported_dir / contract.graph_file("linear", "step")).exists()
    assert (exported_dir / "tokenizer.json").exists()
    # the training history (#46): 8 checkpoints a model, float16 attention graphs
    history = sum(f.stat().st_size for f in (exported_dir / "history").iterdir())
    assert history <= 32_000_000, f"exported/history holds {history:,} bytes; 32 MB allowed"


@pytest.mark.parametrize("kind", SHIPPED_KINDS)
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
    assert set(got) == set(contract.inspect_outputs(kind))
    for name, value in got.items():
        assert within(value, cache[name], name), name
    assert within(shipped.logits(ids[0].tolist()), logits[0], "logits")  # the fast graph


@pytest.mark.parametrize("kind", SHIPPED_KINDS)
def test_shipped_block_outputs_are_a_pytorch_forward_of_the_block(exported_dir, kind):
    """#21: the inspect graph's block outputs (``blocks.{l}.resid_pre`` ... ``resid_post``)
    of every layer against the same block run step by step in PyTorch from the graph's
    own ``resid_pre`` (ln_1, attention, residual add, ln_2, MLP, residual add), relative
    1e-5 (module docstring); resid_post == resid_pre + attn.out + mlp.out, and each
    block's resid_post is the next block's resid_pre."""
    model, tokenizer, _ = load_checkpoint(exported_dir / f"{kind}.safetensors")
    ids = tokenizer.encode(SENTENCE, add_special_tokens=False).ids
    got = load_shipped(exported_dir, kind).inspect(ids, contract.block_outputs(model.cfg.n_layer))
    assert set(got) == set(contract.block_outputs(model.cfg.n_layer))
    for layer, block in enumerate(model.blocks):
        out = {h: got[f"blocks.{layer}.{h}"] for h in contract.BLOCK_HOOKS}  # (T, C)
        with torch.no_grad():
            x = torch.from_numpy(out["resid_pre"].copy())[None]  # (1, T, C)
            ln1 = block.ln_1(x)  # (1, T, C)
            attn = block.attn(ln1)  # (1, T, C)
            mid = x + attn  # (1, T, C)
            ln2 = block.ln_2(mid)  # (1, T, C)
            hidden = block.mlp.hidden(ln2)  # (1, T, d_mlp)
            mlp = block.mlp.c_proj(hidden)  # (1, T, C)
        hooks = (x, ln1, attn, mid, ln2, hidden, mlp, mid + mlp)  # contract.BLOCK_HOOKS
        ref = dict(zip(contract.BLOCK_HOOKS, hooks, strict=True))
        for hook, value in ref.items():
            assert within(out[hook], value[0].numpy(), hook), (layer, hook)
        total = out["resid_pre"] + out["attn.out"] + out["mlp.out"]  # (T, C)
        assert within(out["resid_post"], total, "resid_post"), layer
        assert float(np.abs(out["attn.out"]).max()) > 1e-2  # each part adds something
        assert float(np.abs(out["mlp.out"]).max()) > 1e-2
        if layer + 1 < model.cfg.n_layer:
            np.testing.assert_array_equal(got[f"blocks.{layer + 1}.resid_pre"], out["resid_post"])


SENTENCE = "when Mary and John went to the store , John gave a drink to Mary because she was kind ."


def test_shipped_step_graph_rolled_matches_shipped_checkpoint(exported_dir):
    """exported/linear.step.onnx rolled over a sentence from a zero state against the
    shipped checkpoint in PyTorch: logits at every position against the parallel
    forward pass, and the state S_i and normalizer z_i after every token (the last one
    included) against the model's inspect cache and against ``LinearAttention.recurrent_loop``
    run on the cache's q, k, v. Relative bound (module docstring): |state| reaches ~200 here."""
    model, tokenizer, _ = load_checkpoint(exported_dir / "linear.safetensors")
    ids = tokenizer.encode(SENTENCE, add_special_tokens=False).ids
    assert len(ids) == len(SENTENCE.split())  # every word known: one token each
    rec = load_shipped(exported_dir, "linear").recurrent(ids)
    with torch.no_grad():
        logits, cache = model(torch.tensor([ids]), inspect=True)  # (1, T, V)
        _, ref_S, ref_z = LinearAttention(model.cfg).recurrent_loop(
            cache["q"], cache["k"], cache["v"]
        )  # (L, H, T, D, D), (L, H, T, D): layers as the batch axis
    assert within(rec["logits"], logits[0], "logits")
    for name, ref in (("state", cache["state"]), ("normalizer", cache["normalizer"])):
        assert within(rec[name], ref, name), name
        assert within(rec[name][:, :, -1], ref[:, :, -1], name), name  # the final state
    assert within(rec["state"], ref_S, "state")
    assert within(rec["normalizer"], ref_z, "normalizer")
    assert np.abs(rec["state"]).max() > 100  # the reason the bound is relative


def test_shipped_delta_step_graph_rolled_matches_shipped_checkpoint(exported_dir):
    """exported/delta.step.onnx rolled over a sentence from a zero state (the state S_t
    and the short convolutions' window carried) against the shipped checkpoint in
    PyTorch: logits at every position against the parallel (chunked) forward pass, and
    the state after every token against the model's inspect cache and against
    ``models.delta.recurrent_delta`` (the delta rule one token at a time) run on the
    cache's q, k, v and beta (issue #46: the shipped delta graph was never rolled)."""
    model, tokenizer, _ = load_checkpoint(exported_dir / "delta.safetensors")
    ids = tokenizer.encode(SENTENCE, add_special_tokens=False).ids
    rec = load_shipped(exported_dir, "delta").recurrent(ids)
    with torch.no_grad():
        logits, cache = model(torch.tensor([ids]), inspect=True)  # (1, T, V)
        _, ref_S = recurrent_delta(cache["q"], cache["k"], cache["v"], cache["beta"])
    assert within(rec["logits"], logits[0], "logits")
    assert within(rec["state"], cache["state"], "state")  # (L, H, T, d_head, d_head)
    assert within(rec["state"][:, :, -1], ref_S[:, :, -1], "state")  # the final state
    assert within(rec["state"], ref_S, "state")
    assert np.abs(rec["state"]).max() > 0.1  # a state that moved


def test_shipped_tokenizer_file_is_the_models_tokenizer(exported_dir):
    _, tokenizer, _ = load_checkpoint(exported_dir / "softmax.safetensors")
    from models.tokenizer import load_tokenizer

    shipped = load_tokenizer((exported_dir / "tokenizer.json").read_text())
    assert shipped.get_vocab() == tokenizer.get_vocab()


def test_shipped_graph_axis_is_symbolic(exported_dir):
    for kind in SHIPPED_KINDS:
        graph = onnx.load(str(exported_dir / contract.graph_file(kind, "inspect")))
        dim = graph.graph.input[0].type.tensor_type.shape.dim[1]
        assert dim.dim_param and not dim.HasField("dim_value")


def test_shipped_linear_fast_graph_has_no_t_by_t_tensor(exported_dir):
    """Shape inference on the shipped graphs: no T x T tensor in linear.fast.onnx, and
    some in softmax.fast.onnx (QK^T), so the check can fail."""
    for kind, expect_square in (("linear", False), ("softmax", True)):
        graph = onnx.load(str(exported_dir / contract.graph_file(kind, "fast")))
        assert bool(square_sequence_tensors(graph)) == expect_square, kind


class Fresh(dict):
    """kind -> the evaluation of the shipped checkpoint, run now (``training.evaluate``)
    on first use of that kind only (a full evaluation takes tens of seconds)."""

    def __init__(self, exported_dir):
        super().__init__()
        self.exported_dir = exported_dir

    def __missing__(self, kind: str) -> dict:
        from training.evaluate import evaluate

        model, tokenizer, _ = load_checkpoint(self.exported_dir / f"{kind}.safetensors")
        self[kind] = evaluate(model, tokenizer)
        return self[kind]


@pytest.fixture(scope="module")
def fresh(exported_dir) -> Fresh:
    return Fresh(exported_dir)


def test_the_card_meets_the_softmax_and_linear_targets(card):
    """The targets on the card (the drift tests check the card against a fresh evaluation
    whenever a file it depends on changes)."""
    softmax, linear = (card["models"][kind]["probes"] for kind in ("softmax", "linear"))
    assert softmax["agreement_accuracy"] >= 0.95
    assert softmax["ioi_accuracy"] >= 0.90
    assert softmax["best_induction_head"]["score"] >= 0.5
    assert linear["min_row_sum"] >= 0.99
    assert softmax["min_row_sum"] >= 1 - 1e-5


@pytest.mark.drift
@pytest.mark.xdist_group("shipped_drift")  # one worker evaluates each model once
def test_model_card_meets_targets(card, fresh):
    """The targets on what the shipped checkpoints measure now (#20 item 16: on the
    stored card alone this test could not fail), and the card says the same. A drift
    test (a full evaluation of the three models, ~25 s each): it runs in every ``make test``
    and in ``make check-models``."""
    softmax = fresh["softmax"]
    assert softmax["agreement_accuracy"] >= 0.95
    assert softmax["ioi_accuracy"] >= 0.90
    assert softmax["best_induction_head"]["score"] >= 0.5
    linear = fresh["linear"]
    for key in ("agreement_accuracy", "ioi_accuracy", "val_perplexity"):
        assert card["models"]["linear"]["probes"][key] == pytest.approx(linear[key], abs=2e-3)
    # attention is what the captions say: every row sums to ~1 on held-out text
    assert linear["min_row_sum"] >= 0.99
    assert softmax["min_row_sum"] >= 1 - 1e-5
    # #22's delta targets too (issue #46: the drift tests covered softmax and linear only)
    _assert_delta_targets({kind: fresh[kind] for kind in SHIPPED_KINDS})


def test_the_delta_card_meets_issue_22s_targets(card):
    """#22's targets on the card (the drift test below checks the card against a fresh
    evaluation): perplexity within 1.15x softmax's, indirect object >= 95 %, behavioural
    induction >= 80 % of softmax's, associative recall at n = 16 >= 90 % where linear
    attention is far below (counted as the top token over the whole vocabulary, #46)."""
    _assert_delta_targets({kind: card["models"][kind]["probes"] for kind in SHIPPED_KINDS})


def _assert_delta_targets(probes: dict) -> None:
    delta, softmax = probes["delta"], probes["softmax"]
    assert delta["val_perplexity"] <= 1.15 * softmax["val_perplexity"]
    assert delta["ioi_accuracy"] >= 0.95
    score = {k: p["behavioural_induction"]["score"] for k, p in probes.items()}
    assert score["delta"] >= 0.8 * score["softmax"]
    # recall at n = 16 by the card's headline rule, the top token over the whole vocabulary
    # (#46; #22 set the target on the ranking rule, which the top-token share never exceeds)
    top = {k: p["recall"]["top_token"]["16"] for k, p in probes.items()}
    assert top["delta"] >= 0.9 > 0.5 > top["linear"]
    # #46: one recipe; on words no recall row holds, delta still recalls at n = 16, and
    # softmax keeps its induction head
    assert delta["recall"]["held_out_top_token"]["16"] >= 0.8
    assert softmax["best_induction_head"]["score"] >= 0.8
    for kind, p in probes.items():
        for prefix in ("", "held_out_"):
            for n, share in p["recall"][prefix + "top_token"].items():
                assert share <= p["recall"][prefix + "ranking"][n], (kind, prefix, n)


@pytest.mark.slow
@pytest.mark.parametrize("kind", SHIPPED_KINDS)
def test_card_perplexity_is_over_the_whole_validation_set(exported_dir, card, kind):
    """#20 item 14: the card's validation loss is the mean over every window of the
    validation text (not its first 64), computed here window by window."""
    import torch.nn.functional as F

    from corpus.heldout import validation_lines
    from training.data import token_stream

    model, tokenizer, _ = load_checkpoint(exported_dir / f"{kind}.safetensors")
    stream = token_stream(tokenizer, validation_lines())
    T = model.cfg.context_length
    n = (len(stream) - 1) // T
    assert n > 64  # more than the old cut
    total = 0.0
    with torch.no_grad():
        for i in range(0, n, 32):
            k = min(32, n - i)
            x = stream[i * T : (i + k) * T].view(k, T)  # (k, T)
            y = stream[i * T + 1 : (i + k) * T + 1].view(k, T)  # (k, T)
            total += F.cross_entropy(model(x).flatten(0, 1), y.flatten(), reduction="sum").item()
    assert card["models"][kind]["probes"]["val_loss"] == pytest.approx(total / (n * T), abs=2e-4)
    tokens = {"windows": n, "window": T, "scored": n * T, "of": len(stream)}
    assert card["models"][kind]["probes"]["val_tokens"] == tokens  # #46: what it scores


def test_the_readme_table_says_what_the_card_measured(exported_dir, card):
    """#46: the perplexity row says how many tokens the card's perplexity scores (389
    windows of 64 score 24,896 of the held-out stream's 24,942; it said "all 24,942"),
    and the recall rows are the card's, top token first, the ranking rule labelled."""
    readme = (exported_dir.parent / "README.md").read_text()
    probes = {kind: card["models"][kind]["probes"] for kind in SHIPPED_KINDS}
    for p in probes.values():
        v = p["val_tokens"]
        assert (
            f"every token the {v['windows']} windows of {v['window']} score: {v['scored']:,} "
            f"of the {v['of']:,} tokens of the held-out lines" in readme
        )
    assert "all 24,942 tokens" not in readme

    def shares(rule: str, ns: tuple) -> str:
        return " | ".join(
            " / ".join(f"{round(100 * p['recall'][rule][str(n)])}" for n in ns) + "%"
            for p in probes.values()
        )

    trained = held = (4, 8, 16, 31)
    assert f"top token over the whole vocabulary | {shares('top_token', trained)} |" in readme
    assert (
        f"ranking rule, the right value beats the other n − 1 | {shares('ranking', trained)} |"
        in readme
    )
    assert f"held-out words, top token | {shares('held_out_top_token', held)} |" in readme
    assert f"held-out words, ranking rule | {shares('held_out_ranking', held)} |" in readme
    soft, delta = probes["softmax"]["recall"], probes["delta"]["recall"]
    pct = {k: round(100 * v) for k, v in (("held", delta["held_out_top_token"]["16"]),
           ("delta_top", delta["top_token"]["16"]), ("soft_held", soft["held_out_top_token"]["16"]))}  # fmt: skip
    text = " ".join(readme.split())
    assert (
        f"is {pct['held']}% ({pct['delta_top']}% on the trained pool); softmax's {pct['soft_held']}%"
        in text
    )


@pytest.mark.parametrize("kind", SHIPPED_KINDS)
def test_the_app_and_the_card_score_induction_alike(exported_dir, card, kind):
    """#20 item 15: one induction score: the app's, from the shipped ONNX graphs (what
    Head statistics shows), is the card's, from the checkpoint."""
    from inference.analysis import induction_probe

    app = induction_probe(load_shipped(exported_dir, kind))  # (L, H)
    stored = np.asarray(card["models"][kind]["probes"]["heads"]["induction"])
    np.testing.assert_allclose(app, stored, atol=1e-4)


def test_make_models_trains_within_60_minutes(exported_dir, card):
    """#20 item 16, #46 item 5: the training time is the number the training run itself
    stored in each checkpoint (``training.train`` writes its wall time into the safetensors
    metadata; training is not re-run here). The card and the README's table must say that
    number, and the three trainings (at once, one thread each: the elapsed time is the
    longest) leave room for the history, the export and the evaluation in `make models`'s
    60 minutes (the README states the whole run's measured time)."""
    readme = (exported_dir.parent / "README.md").read_text()
    stored = {}
    for kind in SHIPPED_KINDS:
        _, _, meta = load_checkpoint(exported_dir / f"{kind}.safetensors")
        stored[kind] = meta["training"]["wall_time_s"]
        assert card["models"][kind]["training"]["wall_time_s"] == stored[kind], kind
        assert f"64 tokens, {stored[kind] / 60:.1f} min" in readme, kind
    assert max(stored.values()) <= 50 * 60
    assert "min** in all" in readme


@pytest.mark.parametrize("kind", SHIPPED_KINDS)
def test_model_card_matches_checkpoint(exported_dir, card, kind):
    model, _, meta = load_checkpoint(exported_dir / f"{kind}.safetensors")
    entry = card["models"][kind]
    assert entry["config"] == model.cfg.to_dict()
    assert entry["parameters"] == model.num_parameters()
    assert entry["training"]["steps"] == meta["training"]["steps"]


@pytest.mark.drift
@pytest.mark.xdist_group("shipped_drift")  # one worker evaluates each model once
@pytest.mark.parametrize("kind", SHIPPED_KINDS)
def test_model_card_probes_are_what_evaluation_measures_now(card, fresh, kind):
    """Re-run the evaluation on the shipped checkpoint: a change to the probes, the
    validation text or the head scores must come with a regenerated card."""
    fresh = fresh[kind]
    stored = card["models"][kind]["probes"]
    for key in ("agreement_accuracy", "ioi_accuracy", "pronoun_accuracy"):
        assert fresh[key] == stored[key], key
    assert fresh["min_row_sum"] == pytest.approx(stored["min_row_sum"], abs=2e-6)
    np.testing.assert_allclose(
        fresh["min_row_sum_per_head"], stored["min_row_sum_per_head"], atol=2e-6
    )
    assert fresh["val_loss"] == pytest.approx(stored["val_loss"], abs=2e-4)
    assert fresh["best_induction_head"]["layer"] == stored["best_induction_head"]["layer"]
    assert fresh["best_induction_head"]["head"] == stored["best_induction_head"]["head"]
    assert fresh["recall"] == stored["recall"]  # both rules, both formats (#46)
    assert fresh["val_tokens"] == stored["val_tokens"]
    got, want = fresh["behavioural_induction"], stored["behavioural_induction"]
    assert got["score"] == pytest.approx(want["score"], abs=2e-3)
    for name, scores in stored["heads"].items():
        if np.asarray(scores).dtype.kind in "fi":  # the numeric scores; labels follow them
            np.testing.assert_allclose(fresh["heads"][name], scores, atol=2e-3, err_msg=name)
        else:
            assert fresh["heads"][name] == scores, name


@pytest.mark.drift
@pytest.mark.xdist_group("shipped_drift")  # one worker evaluates each model once
@pytest.mark.parametrize("kind", SHIPPED_KINDS)
def test_shipped_graphs_rows_sum_to_the_cards_figure_on_held_out_text(exported_dir, card, kind):
    """The exported inspect graph's ``attn`` on the held-out lines the card's figure is
    measured on: every row of every head sums to >= 0.99 (linear attention divides by
    phi(q_i)^T z_i + eps, so this holds only if the normalizer dominates eps; the first
    shipped linear model's rows went down to 0.007), and the smallest row sum per head
    is the model card's, which evaluation computed from the PyTorch checkpoint."""
    from training.head_measures import held_out_min_row_sum

    shipped = load_shipped(exported_dir, kind)
    mins = held_out_min_row_sum(
        lambda ids: shipped.inspect(ids)["attn"], shipped.tokenizer, shipped.config.context_length
    )  # (L, H)
    stored = card["models"][kind]["probes"]
    if kind != "delta":  # the delta rule's implied weights are signed: no sum to keep
        assert mins.min() >= 0.99
    np.testing.assert_allclose(mins, stored["min_row_sum_per_head"], atol=1e-5)
    assert mins.min() == pytest.approx(stored["min_row_sum"], abs=1e-5)
