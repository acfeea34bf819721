"""Associative recall of a whole model, from its next-token logits alone (numpy only).

The test (Zoology, Arora et al. 2023, arXiv 2312.04927): n key -> value word pairs, then
one of the keys again, k_1 v_1 ... k_n v_n k_q (2 n + 1 tokens); the model should answer
k_q's value. :func:`recall_scores` counts the same examples by two rules:

* **top token** (the model card's headline): right when the model's top token over the
  whole vocabulary is the value (:func:`top_token_right`; chance about 1 / V);
* **ranking** (lenient, the card's second column): right when the value's logit beats
  the other n - 1 values of the example (:func:`ranks_first`; chance 1 / n), whatever
  token the model would rather say.

:func:`recall_card` measures both on two formats. The **trained format** draws keys and
values from :func:`row_words`, the pool the synthetic recall rows of
``training/recall_rows.py`` draw from (a model trained with ``--recall-share`` saw this
format with n up to ``rows_max_pairs``; the card's n = 28 and 31 lie beyond it). The
**held-out format** draws them from :func:`held_out_words`, a seeded tenth of the
vocabulary's words that no recall or repeat row ever holds, with n up to 31 (the most
2 n + 1 = 64 tokens hold). Examples are drawn without replacement with a seeded generator.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from inference.behaviour import word_ids

# n measured for the card (2 n + 1 <= 64 tokens); the recall rows train n <= 24 at T = 64
RECALL_PAIRS = (1, 2, 4, 8, 12, 16, 24, 28, 31)
HELD_OUT_PAIRS = (2, 4, 8, 16, 24, 31)  # n on the held-out words (2 n of them, distinct)
RECALL_SEQUENCES = 64
HELD_OUT_SEED = 1000  # the held-out split's and examples' generator (seed + n): apart
HELD_OUT_SHARE = 0.1  # of the whole words, held out of every recall and repeat row
NUMBER_WORDS = {2: "two", 3: "three", 4: "four"}
RULES = ("top_token", "ranking")  # the two ways an answer is counted, headline first

RULE_NOTE = (
    "Recall is counted as the top token over the whole vocabulary: an answer is right when "
    "the model's most likely next token is the key's value. The ranking column is the "
    "lenient rule: right when the value's logit beats the other n − 1 values of the "
    "example (chance 1/n), whatever the model would rather say."
)


def held_out_words(vocab: dict[str, int]) -> list[int]:
    """Ids of the held-out words of ``vocab`` (token -> id): a seeded random tenth
    (:data:`HELD_OUT_SHARE`, generator seed :data:`HELD_OUT_SEED`) of the whole words of
    :func:`~inference.behaviour.word_ids`, sorted. No synthetic recall or repeat row ever
    holds them (:func:`row_words`), yet the corpus text uses them as any other word: the
    held-out format asks whether a model learnt to recall, or only learnt the rows' words.
    The shipped vocabulary has 202 of its 2,023 (up to 101 pairs)."""
    words = word_ids(vocab)
    size = min(len(words), max(2, round(HELD_OUT_SHARE * len(words))))
    drawn = np.random.default_rng(HELD_OUT_SEED).choice(words, size=size, replace=False)
    return sorted(int(i) for i in drawn)


def row_words(vocab: dict[str, int]) -> list[int]:
    """Ids the synthetic recall and repeat rows draw from (``training/recall_rows.py``) and
    the trained format of :func:`recall_card`: :func:`~inference.behaviour.word_ids` less
    :func:`held_out_words`, sorted."""
    held = set(held_out_words(vocab))
    return [i for i in word_ids(vocab) if i not in held]


def recall_example(words: list[int], n: int, rng: np.random.Generator):
    """One associative-recall example of ``n`` pairs: ``(ids, values, answer)``, where
    ``ids`` = k_1 v_1 ... k_n v_n k_q (2 n + 1 ids), ``values`` the n value ids and
    ``answer`` the index in ``values`` of k_q's value.

    Raises:
        ValueError: if ``n`` < 1 or there are fewer than 2 n words.
    """
    if n < 1 or len(words) < 2 * n:
        raise ValueError(f"need n >= 1 and {2 * n} distinct words, got n = {n}")
    drawn = rng.choice(words, size=2 * n, replace=False).tolist()
    keys, values = drawn[:n], drawn[n:]
    answer = int(rng.integers(n))
    ids = [t for pair in zip(keys, values, strict=True) for t in pair] + [keys[answer]]
    return ids, values, answer


def ranks_first(last_logits: np.ndarray, values: list[int], answer: int) -> bool:
    """The ranking rule (lenient): whether the logit (V,) of the right value beats every
    other value of the example, whatever token the model would rather say."""
    scores = np.asarray(last_logits)[values]  # (n,)
    return bool(scores[answer] > np.delete(scores, answer).max(initial=-np.inf))


def top_token_right(last_logits: np.ndarray, values: list[int], answer: int) -> bool:
    """The top-token rule (the card's headline): whether the model's top token over the
    whole vocabulary, argmax of the logits (V,), is the right value."""
    return int(np.argmax(last_logits)) == values[answer]


def recall_scores(
    logits_of, words: list[int], n: int, sequences: int, seed: int = 0
) -> dict[str, float]:
    """Share (0..1) of ``sequences`` recall examples of ``n`` pairs answered right, by each
    rule on the same examples: ``{"top_token": share, "ranking": share}`` (:data:`RULES`).

    Args:
        logits_of: ids (list of T ints) -> (T, V) logits (an ONNX session or torch model).
        words: the ids to draw keys and values from (2 n distinct).
        seed: the generator's seed is ``seed + n``.

    Raises:
        ValueError: as :func:`recall_example`.
    """
    rng = np.random.default_rng(seed + n)
    hits = dict.fromkeys(RULES, 0)
    for _ in range(sequences):
        ids, values, answer = recall_example(words, n, rng)
        last = logits_of(ids)[-1]  # (V,)
        hits["top_token"] += top_token_right(last, values, answer)
        hits["ranking"] += ranks_first(last, values, answer)
    return {rule: hits[rule] / sequences for rule in RULES}


def recall_card(logits_of, vocab: dict[str, int], context_length: int, rows_max_pairs: int) -> dict:
    """The model card's ``recall``: both rules on both formats.

    Args:
        logits_of: ids -> (T, V) logits.
        vocab: the model's vocabulary (token -> id).
        context_length: n is kept where 2 n + 1 tokens fit (and 2 n words exist).
        rows_max_pairs: the largest n a synthetic recall row holds at this context
            (``training.recall_rows.max_pairs``), stored beside the shares.

    Returns:
        ``{"sequences", "rows_max_pairs", "top_token", "ranking", "held_out_words",
        "held_out_top_token", "held_out_ranking"}``: each share a dict str(n) -> 0..1;
        ``held_out_words`` the number of held-out words drawn from.
    """
    out = {"sequences": RECALL_SEQUENCES, "rows_max_pairs": rows_max_pairs}
    formats = (("", row_words(vocab), RECALL_PAIRS, 0),
               ("held_out_", held_out_words(vocab), HELD_OUT_PAIRS, HELD_OUT_SEED))  # fmt: skip
    for prefix, words, pairs, seed in formats:
        fit = [n for n in pairs if 2 * n + 1 <= context_length and 2 * n <= len(words)]
        scores = {n: recall_scores(logits_of, words, n, RECALL_SEQUENCES, seed) for n in fit}
        if prefix:
            out["held_out_words"] = len(words)
        for rule in RULES:
            out[prefix + rule] = {str(n): s[rule] for n, s in scores.items()}
    return out


def _names(kinds: list[str]) -> str:
    return " and ".join([", ".join(kinds[:-1]), kinds[-1]] if len(kinds) > 1 else kinds)


def training_note(trained: Mapping[str, tuple[float | None, int | None]]) -> str:
    """One or two sentences on what the models were trained with, for every page that
    shows recall.

    Args:
        trained: model name -> (its share of synthetic recall rows, ``recall_share`` of
            its training record, or None / 0 for the corpus alone; the largest n those rows
            hold, the card's ``rows_max_pairs``, or None).
    """
    groups: dict[tuple, list[str]] = {}
    for kind, (share, most) in trained.items():
        groups.setdefault((share or 0.0, most if share else None), []).append(kind)
    parts = []
    for (share, most), kinds in groups.items():
        if not share:
            parts.append(f"{_names(kinds)} on the corpus text alone")
            continue
        who = (
            f"all {NUMBER_WORDS.get(len(kinds), len(kinds))} ({_names(kinds)})"
            if len(kinds) == len(trained) > 1
            else _names(kinds)
        )
        parts.append(
            f"{who} with {share:.0%} of each batch's rows synthetic rows: recall rows in "
            "this test's own format (key–value pairs then a key"
            + (f", n ≤ {most}" if most else "")
            + ", never the held-out words) and repeated random words"
        )
    note = "What was trained: " + "; ".join(parts) + "."
    if len(groups) > 1:
        note += " The curves compare training as well as architecture."
    elif len(trained) > 1 and next(iter(groups))[0]:
        note += " One recipe for all: the curves compare the architectures."
    return note
