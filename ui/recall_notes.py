"""What every page that shows the shipped models' recall says with it: how recall is
counted (``inference.recall.RULE_NOTE``), on what, and what each model was trained with
(its card's training record: ``recall_share``, the synthetic recall rows of
``training/recall_rows.py``). Used by the lesson "Why linear attention forgets", the
lecture's delta-rule step and the sidebar's card."""

from __future__ import annotations

from inference import recall
from ui import loaders


def card_recall(kind: str) -> dict | None:
    """The model card's ``recall`` of a shipped model (``inference.recall.recall_card``:
    both rules, both formats), if measured."""
    card = loaders.shipped_model(kind).card
    return ((card.probes if card else None) or {}).get("recall")


def recall_share(kind: str) -> float | None:
    """The share of synthetic recall rows a shipped model was trained with, or None (the
    corpus alone)."""
    card = loaders.shipped_model(kind).card
    return ((card.training if card else None) or {}).get("recall_share")


def trained_note() -> str:
    """What the shipped models were trained with, in one or two sentences
    (``inference.recall.training_note``)."""
    trained = {
        kind: (recall_share(kind), (card_recall(kind) or {}).get("rows_max_pairs"))
        for kind in loaders.SHIPPED_KINDS
    }
    return recall.training_note(trained)


def rows_max_pairs(measured: dict) -> int | None:
    """The recall rows' largest n (the card's ``rows_max_pairs``) if a model of
    ``measured`` (kind -> the card's ``recall``) was trained with them, else None."""
    trained = [kind for kind in measured if recall_share(kind)]
    return measured[trained[0]].get("rows_max_pairs") if trained else None


def recall_caption(measured: dict) -> str:
    """The caption under a figure of the cards' recall (kind -> the card's ``recall``):
    how it is counted, on what, and what each model was trained with."""
    held = next((r for r in measured.values() if r.get("held_out_top_token")), None)
    held_out = (
        " Dashed: the same test on held-out words, keys and values drawn from "
        f"{held['held_out_words']} words of the vocabulary (a seeded tenth) that no recall "
        "or repeat row ever holds."
        if held
        else ""
    )
    return (
        f"From the model card: {recall.RECALL_SEQUENCES} random examples per n "
        f"(training/evaluate.py, when the models were exported). {recall.RULE_NOTE}"
        f"{held_out} {trained_note()}"
    )


def recall_line(probes: dict, training: dict | None) -> str | None:
    """The model card's recall in one phrase (the sidebar's card): at the largest n <= 16
    measured, the top-token share, the ranking rule's beside it, and what the model was
    trained with; None if the card has no ``recall``."""
    measured = (probes.get("recall") or {}).get("top_token") or {}
    n = max((int(k) for k in measured if int(k) <= 16), default=None)
    if n is None:
        return None
    ranking = probes["recall"].get("ranking", {}).get(str(n))
    share = (training or {}).get("recall_share")
    return (
        f"associative recall at n = {n}: {measured[str(n)]:.0%} (top token over the whole "
        "vocabulary"
        + (f"; {ranking:.0%} by the ranking rule, the right value beating the other n − 1"
           if ranking is not None else "")
        + "), trained "
        + (f"with {share:.0%} synthetic recall rows in this format" if share
           else "without synthetic recall rows")
    )  # fmt: skip
