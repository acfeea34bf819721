"""The model card: one schema for the shipped models and for uploads.

The shipped card (``exported/model_card.json``, written by ``export/card.py`` from what
``training/evaluate.py`` measures) holds one :class:`ModelCard` per attention kind under
``"models"``; an upload gets one from ``upload/load.py``; the app's sidebar shows either.
Plain data only (no torch), so every package may read it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True, kw_only=True)
class ModelCard:
    """What a model is and, for the shipped ones, how it measured.

    Attributes (keyword-only; JSON keys in this order):
        checkpoint: the file it was read from (e.g. ``softmax.safetensors``).
        source: where the model came from: ``"safetensors checkpoint"`` (this project's,
            the shipped ones included), ``"nanoGPT checkpoint"`` or ``"ONNX"``.
        config: ``ModelConfig.to_dict()`` (``n_layer``, ``n_head``, ``d_model``, ``d_head``,
            ``attention``, ``position_scheme``, ...).
        parameters: number of distinct parameters (tied weights counted once).
        training: the training record (steps, batch size, wall time in s, losses in
            nats/token, ...); empty when unknown (uploads).
        probes: the held-out evaluation (``agreement_accuracy``, ``ioi_accuracy``,
            ``val_perplexity``, ``best_induction_head``, ``min_row_sum``, per-head
            scores, ...), or None when not measured (uploads).
        notes: sentences about how the model was read, shown with the card (a padded
            vocabulary, the training step a checkpoint was saved at, ...).
    """

    checkpoint: str = ""
    source: str = "safetensors checkpoint"
    config: dict
    parameters: int
    training: dict = field(default_factory=dict)
    probes: dict | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """The card as the JSON object ``model_card.json`` stores per model (``notes``
        only when there are any)."""
        data = asdict(self)
        if not data["notes"]:
            del data["notes"]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> ModelCard:
        """A card from :meth:`to_dict` output (unknown keys are ignored).

        Raises:
            ValueError: if ``config`` or ``parameters`` is missing.
        """
        missing = [k for k in ("config", "parameters") if k not in data]
        if missing:
            raise ValueError(f"model card is missing {', '.join(missing)}")
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in known})
