"""inference.sampling: greedy is argmax, top-k draws only from the k most likely
tokens, a seed repeats its draws, and the reported p is the model's own probability."""

from __future__ import annotations

import numpy as np
import pytest

from inference.runtime import load_shipped
from inference.sampling import Sampling, distribution, pick

LOGITS = np.array([0.5, 3.0, -1.0, 2.5, 0.0, 2.9])  # (V,)
P = np.exp(LOGITS) / np.exp(LOGITS).sum()  # (V,)


def draws(sampling: Sampling, n: int = 400) -> list[int]:
    rng = np.random.default_rng(sampling.seed)
    return [pick(LOGITS, sampling, rng)[0] for _ in range(n)]


def test_greedy_takes_the_most_likely_token_with_its_probability():
    token, p = pick(LOGITS, Sampling(), np.random.default_rng(0))
    assert token == 1 and p == pytest.approx(P[1])
    assert Sampling(temperature=2.0, top_k=1).greedy  # top-1 is greedy at any temperature


def test_top_k_draws_only_the_k_most_likely_tokens():
    seen = set(draws(Sampling(temperature=2.0, top_k=3, seed=4)))
    assert seen == {1, 3, 5}  # every one of the top 3 is drawn, nothing else


def test_temperature_one_draws_as_often_as_the_model_says():
    counts = np.bincount(draws(Sampling(temperature=1.0, seed=1), n=4000), minlength=len(P))
    np.testing.assert_allclose(counts / counts.sum(), P, atol=0.03)


def test_a_seed_repeats_its_draws_and_p_is_the_models_probability():
    rule = Sampling(temperature=1.5, top_k=4, seed=7)
    assert draws(rule) == draws(rule)
    assert draws(rule) != draws(Sampling(temperature=1.5, top_k=4, seed=8))
    rng = np.random.default_rng(0)
    for _ in range(20):
        token, p = pick(LOGITS, rule, rng)
        assert p == pytest.approx(P[token])  # not the tempered, truncated probability


@pytest.mark.parametrize(
    "bad",
    [
        {"temperature": -0.1},
        {"temperature": float("nan")},
        {"temperature": 99.0},
        {"top_k": -1},
        {"top_k": 2.5},
        {"seed": -1},
        {"seed": 2**40},
        {"temperature": True},
    ],
)
def test_out_of_range_rules_are_refused(bad):
    with pytest.raises(ValueError):
        Sampling(**bad)
    with pytest.raises(ValueError):
        Sampling.from_dict(bad)


def test_round_trip_through_the_worker_protocol():
    rule = Sampling(temperature=0.7, top_k=5, seed=3)
    assert Sampling.from_dict(rule.to_dict()) == rule
    with pytest.raises(ValueError):
        Sampling.from_dict({"temperature": 1.0, "regex": "(a+)+"})


def test_generation_stops_at_the_context(tiny_exports):
    for kind in ("softmax", "linear"):
        model = load_shipped(tiny_exports[kind][1], kind)
        ctx = model.config.context_length
        ids = [3] * (ctx - 2)
        new, probs = model.generate(ids, 10, Sampling(temperature=1.0, seed=0))
        assert len(new) == len(probs) == 2, kind  # two places left in the context
        assert model.generate([3] * ctx, 5) == ([], [])


def test_the_distribution_is_what_pick_draws_from():
    rule = Sampling(temperature=0.7, top_k=4, seed=2, top_p=0.8)
    dist = distribution(LOGITS, rule)
    assert dist.sum() == pytest.approx(1.0) and np.count_nonzero(dist) <= 4
    assert set(draws(rule, n=400)) <= set(np.flatnonzero(dist))
    greedy = distribution(LOGITS, Sampling())
    assert greedy[int(np.argmax(LOGITS))] == 1.0 and greedy.sum() == 1.0


def test_top_p_keeps_the_smallest_nucleus_reaching_p():
    z = np.log(np.array([0.5, 0.3, 0.15, 0.05]))
    assert np.flatnonzero(distribution(z, Sampling(temperature=1.0, top_p=0.5))).tolist() == [0]
    nucleus = distribution(z, Sampling(temperature=1.0, top_p=0.8))
    np.testing.assert_allclose(nucleus, [0.5 / 0.8, 0.3 / 0.8, 0, 0])
    full = distribution(z, Sampling(temperature=1.0, top_p=1.0))
    np.testing.assert_allclose(full, [0.5, 0.3, 0.15, 0.05])
    hot = distribution(z, Sampling(temperature=2.0))  # temperature flattens
    assert hot[0] < 0.5 and hot[3] > 0.05
    with pytest.raises(ValueError, match="top_p"):
        Sampling(temperature=1.0, top_p=0.0)
    assert "top-p 0.8" in Sampling(temperature=1.0, top_p=0.8).describe()
    assert Sampling.from_dict(Sampling(temperature=1.0, top_p=0.8).to_dict()).top_p == 0.8
