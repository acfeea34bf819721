"""The attention visualizer in a notebook: the app's models, numbers and figures.

    import attnviz
    model = attnviz.load("softmax")              # or "linear", "delta", a checkpoint,
    s = model.analyse("the cat sat on the mat")  # a folder, an .onnx graph
    s.attention                                  # (L, H, T, T), as the app draws it
    attnviz.views.attention(s, layer=1, head=0).show()   # the app's figure, offline

:func:`load` opens a model by the app's own loaders (``attnviz.loading``);
:meth:`Model.analyse` is the app's analysis (``inference.analysis.analyze``) with its
arrays named (``attnviz.model.Sentence``: ``attention``, ``q``, ``k``, ``v``,
``head_out``, ``residual``, ``logits``, ``probs``); ``attnviz.views`` has one function per
view, each returning the app's figure; :func:`ablate`, :func:`importance`, :func:`lens`
and :func:`patch` are the lab views' interventions. Importing this package makes plotly
draw figures with plotly.js inlined (``attnviz.offline``: nothing is fetched).
"""

from __future__ import annotations

import os

import inference  # noqa: F401 - onnxruntime's telemetry off before it is imported
from attnviz import offline, views
from attnviz.interventions import ablate, default_pair, importance, lens, mean_outputs, patch
from attnviz.loading import load_model
from attnviz.model import Model, Sentence

__all__ = [
    "Model",
    "Sentence",
    "ablate",
    "default_pair",
    "importance",
    "lens",
    "load",
    "mean_outputs",
    "patch",
    "views",
]


def load(
    source: str | os.PathLike,
    *,
    meta: str | os.PathLike | None = None,
    tokenizer: str | os.PathLike | None = None,
    context: int | None = None,
    name: str | None = None,
) -> Model:
    """A model, loaded as the app loads it (``attnviz.loading.load_model``).

    Args:
        source: ``"softmax"``, ``"linear"`` or ``"delta"`` (the shipped models); a
            checkpoint (our ``.safetensors``, one ``attnviz convert`` wrote, nanoGPT's
            ``ckpt.pt``); a Hugging Face folder (config.json, tokenizer.json, weights) or a
            nanoGPT ``out/`` folder; a folder of our ONNX graphs or its ``.inspect.onnx``;
            any ONNX language model (with ``tokenizer=``).
        meta: nanoGPT's ``meta.pkl`` (a character vocabulary).
        tokenizer: a ``tokenizer.json`` (GPT-2's for nanoGPT with GPT-2's vocabulary; a
            foreign ONNX model's).
        context: keep only the first ``context`` positions of a checkpoint or folder.
        name: the model's name in figure titles (default: the kind or the file's stem).

    A checkpoint or folder is converted once (seconds to minutes: its ONNX graphs are
    exported) and kept in ``~/.cache/attention-visualizer/notebook/``
    (``$ATTNVIZ_CACHE_DIR``).

    Raises:
        upload.errors.UploadError: one line naming the file and what is wrong.
    """
    runnable = load_model(source, meta=meta, tokenizer=tokenizer, context=context)
    default = str(source) if str(source) in ("softmax", "linear", "delta") else runnable.name
    return Model(runnable, name or default)


offline.use()
