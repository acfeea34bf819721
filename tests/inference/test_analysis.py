"""Analyses on a model whose vocabulary has no alphabetic token at all."""

from __future__ import annotations

import numpy as np
import pytest

from inference.analysis import analyze, head_table, induction_probe, probe_tokens
from inference.runtime import load_graphs
from models.tokenizer import UNK
from tests.helpers.checkpoints import DIGITS


@pytest.mark.slow
def test_induction_probe_falls_back_to_non_special_tokens(digits_export):
    folder = digits_export[1]
    model = load_graphs(folder / "digits.inspect.onnx", folder / "digits.fast.onnx")
    vocab = model.tokenizer.get_vocab()
    assert not any(t.isalpha() for t in vocab if t != UNK)  # digits and punctuation only
    ids = probe_tokens(model)
    assert sorted(ids) == sorted(vocab[ch] for ch in DIGITS) and UNK not in vocab
    scores = induction_probe(model)  # (L, H); crashed on rng.choice([]) before
    assert scores.shape == (2, 2) and np.isfinite(scores).all()
    table = head_table(analyze(model, "12+3=15"), scores)
    assert len(table) == 4 and table["induction"].notna().all()


def test_the_induction_probe_is_the_same_in_every_process(exported_dir):
    """The tokenizer's vocabulary is a hash map whose order changes between processes;
    the probe's words are sorted, so two servers show the same induction scores."""
    import subprocess
    import sys

    from tests.helpers import ROOT

    code = (
        "from inference.runtime import load_shipped; from inference.analysis import induction_probe; "
        f"from pathlib import Path; print(induction_probe(load_shipped(Path({str(exported_dir)!r}), "
        "'softmax')).tolist())"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
        for _ in range(3)
    }
    assert len(runs) == 1 and runs.pop().startswith("[[")


def test_the_recurrent_form_is_computed_on_request_and_equals_the_full_analysis(exported_dir):
    from pathlib import Path

    from inference.analysis import with_recurrent
    from inference.runtime import load_shipped

    model = load_shipped(Path(exported_dir), "linear")
    text = "the dog that the children like runs in the park ."
    base = analyze(model, text, recurrent=False)
    assert base.recurrent is None and base.recurrent_max_diff is None
    full = with_recurrent(model, base)
    assert base.recurrent is None  # the shared base is not modified
    assert full.outputs is base.outputs and full.recurrent_max_diff < 1e-3
    reference = analyze(model, text)  # the default: in one go
    for key, array in reference.recurrent.items():
        np.testing.assert_array_equal(full.recurrent[key], array)
        assert not full.recurrent[key].flags.writeable
    softmax = load_shipped(Path(exported_dir), "softmax")
    plain = analyze(softmax, text, recurrent=False)
    assert with_recurrent(softmax, plain) is plain  # no step graph: nothing to add


def test_whitespace_and_control_tokens_are_drawn_visibly():
    from inference.text_input import visible

    shown = [visible(t) for t in [" ", "\n", "\t", "\x00", "\x1b", "", "a b", "the", "é"]]
    assert shown == ["␣", "⏎", "⇥", "\\x00", "\\x1b", "∅", "a␣b", "the", "é"]


def test_text_keeps_its_newlines_and_tabs_and_every_change_is_stated():
    from inference.text_input import clean_text, left_out_notice

    assert clean_text("ROMEO:\n\tO, speak") == ("ROMEO:\n\tO, speak", [])
    text, notices = clean_text("a\x00b\r\nc")
    assert text == "ab\nc" and notices == ["Removed 2 invisible control character(s)."]
    assert left_out_notice([]) is None
    notice = left_out_notice(["é", "👍", "é", "\x0b"])
    assert notice == (
        "Left out 4 character(s) the model's vocabulary does not have: “é” ×2, “👍”, “\\x0b”."
    )


@pytest.mark.parametrize("kind", ["softmax", "linear"])
def test_an_analysis_that_keeps_fewer_outputs_draws_the_same_scores(exported_dir, kind):
    """A served model's analyses keep no ``scores`` or ``logits``; one head's scores are
    then computed from the graph's q and k (softmax) or phi_q and phi_k (linear), equal
    to the graph's own within float32 rounding."""
    from pathlib import Path

    from inference.analysis import LEAN_OUTPUTS, head_scores
    from inference.runtime import load_shipped

    model = load_shipped(Path(exported_dir), kind)
    text = "the keys to the old cabinet are on the table ."
    full = analyze(model, text, recurrent=False)
    lean = analyze(model, text, recurrent=False, keep=LEAN_OUTPUTS)
    assert "scores" not in lean.outputs and "logits" not in lean.outputs
    np.testing.assert_array_equal(lean.probs, full.probs)
    np.testing.assert_array_equal(lean.outputs["attn"], full.outputs["attn"])
    for layer, head in [(0, 0), (2, 3)]:
        graph = full.outputs["scores"][layer, head]  # (T, T)
        np.testing.assert_array_equal(head_scores(full, layer, head), graph)  # the graph's
        computed = head_scores(lean, layer, head)  # (T, T)
        assert np.abs(computed - graph).max() <= 1e-5 * max(1.0, np.abs(graph).max())


def test_top_next_tokens_are_a_stable_sort_of_each_row():
    """Partition first, then sort the few ids at or above each row's k-th value: the same
    columns as a stable argsort of every row, ties in id order."""
    from inference.predictions import top_next_columns

    rng = np.random.default_rng(0)
    probs = np.round(rng.random((40, 30)), 1).astype(np.float32)  # (T, V), many ties
    vocab = [f"t{i}" for i in range(30)]
    for k in (1, 3, 30, 45):
        columns = top_next_columns(probs, vocab, k)
        want = np.argsort(-probs, axis=1, kind="stable")[:, :k]  # (T, min(k, V))
        assert len(columns) == 2 * want.shape[1]
        for r in range(want.shape[1]):
            assert columns[f"#{r + 1} next"] == [vocab[i] for i in want[:, r]]
            assert columns[f"p #{r + 1}"] == [float(probs[t, i]) for t, i in enumerate(want[:, r])]
